/**
 * protect's and plug's "not set up" refusal (exit 8) names both set-ups, as
 * check and status do, in the same words: the inbound hold for clients from
 * the network, and 'synplug setup' for the local one (a new user's check,
 * issue 22: it named only 'synplug setup' / --setup, which hold lo's
 * address, not the README's first quick start). protect --setup says what it
 * set up (the hold, its address) and that it holds local clients only. The
 * kernel is the double (test/helpers/fake-kernel.ts).
 */
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as guard from '../../src/guard/index.js';
import { INBOUND_SETUP } from '../../src/guard/setup.js';
import { FakeKernel } from '../helpers/fake-kernel.js';

const INBOUND = "for clients from the network (arriving on a device): 'synplug setup --inbound DEV --port PORT'";

test.serial('not set up: protect and plug name the inbound set-up and the local one, in check’s words', async (t) => {
  t.is(INBOUND_SETUP, INBOUND);
  const kernel = new FakeKernel();
  const undo = kernel.install();
  const base = mkdtempSync(join(tmpdir(), 'synplug-notsetup-'));
  const stateDir = join(base, 'state');
  try {
    const file = join(stateDir, 'setup.json');
    const p = await t.throwsAsync(guard.protect({ stateDir, command: ['true'] }));
    t.is((p as guard.NotSetUpError | undefined)?.category, 'not-set-up');
    t.is(
      p?.message,
      `synplug is not set up (no hold is recorded in ${file}). Run 'synplug setup' for local clients (the local hold: new connections to 169.254.255.254; it takes the hold this kernel supports: 'synplug doctor' lists them; --setup sets up the same first); ${INBOUND}. The command was NOT run`,
    );
    const g = await t.throwsAsync(guard.plug({ stateDir, maxHoldMs: 1000 }));
    t.is((g as guard.NotSetUpError | undefined)?.category, 'not-set-up');
    t.true(g?.message.endsWith(`); ${INBOUND}`), g?.message);
    t.notRegex(g?.message ?? '', /--setup/);
    const c = await guard.check({ stateDir });
    t.true(c.nothingSetUp?.endsWith(`; ${INBOUND}`), c.nothingSetUp);
  } finally {
    undo();
    rmSync(base, { recursive: true, force: true });
  }
});

test.serial('protect --setup says what it set up: the hold, its address, and that clients from the network are not held', async (t) => {
  const kernel = new FakeKernel();
  const undo = kernel.install();
  const base = mkdtempSync(join(tmpdir(), 'synplug-setupfirst-'));
  const stateDir = join(base, 'state');
  const notices: string[] = [];
  try {
    const r = await guard.protect({ stateDir, setup: true, command: ['true'], maxHoldMs: 1000, onNotice: (l) => notices.push(l) });
    t.is(r.exitCode, 0);
    const first = notices.find((n) => n.startsWith('set up first: '));
    t.truthy(first, notices.join('\n'));
    t.regex(first!, /^set up first: synplug set up on lo for 169\.254\.255\.254 \(mark \d+, plug limit \d+ bytes\): .*169\.254\.255\.254/);
    t.true(first!.endsWith(`. It holds local clients only; ${INBOUND}`), first);
  } finally {
    await guard.teardown({ stateDir }).catch(() => {});
    undo();
    rmSync(base, { recursive: true, force: true });
  }
});
