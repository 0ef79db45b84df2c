/**
 * `release` with the local plug hold set up and nothing held: its plug qdisc
 * exists only around a hold (a watchdog's release at --max-hold removed it),
 * so the release finds none. It said "no hold on lo: nothing is held
 * (synplug is not set up there)" though setup was complete (VM: setup; plug
 * --max-hold 2s; wait 4 s; release). Now it says from the record that
 * nothing was held, as the queue hold's release does. The kernel is the
 * double (test/helpers/fake-kernel.ts).
 */
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as guard from '../../src/guard/index.js';
import { formatRelease } from '../../src/cli/format-guard.js';
import { FakeKernel } from '../helpers/fake-kernel.js';

test.serial('regression: release with the plug hold set up and no plug qdisc (outside a hold) says nothing was held, not "not set up"', async (t) => {
  const kernel = new FakeKernel();
  const undo = kernel.install();
  const base = mkdtempSync(join(tmpdir(), 'synplug-relmax-'));
  const stateDir = join(base, 'state');
  try {
    const s = await guard.setup({ stateDir, via: 'plug' });
    t.is(s.hold, 'local');
    t.deepEqual(kernel.plugs(), [], 'the plug exists only around a hold: none after setup');
    t.is((await guard.check({ stateDir })).state, 'ok', 'setup is complete');
    const r = await guard.release({ stateDir });
    t.false(r.plugExists, 'no plug qdisc was there');
    t.true(r.setUp, 'the record lists the hold');
    const text = formatRelease(r);
    t.is(text, "nothing was held: neither 'synplug plug' nor a protect was holding, so there was nothing to release");
    t.notRegex(text, /not set up/);
  } finally {
    undo();
    rmSync(base, { recursive: true, force: true });
  }
});

test.serial('release with nothing set up still says so', async (t) => {
  const kernel = new FakeKernel();
  const undo = kernel.install();
  const base = mkdtempSync(join(tmpdir(), 'synplug-relmax-'));
  try {
    const r = await guard.release({ stateDir: join(base, 'state') });
    t.false(r.plugExists);
    t.false(r.setUp);
    t.regex(formatRelease(r), /^nothing was held: synplug is not set up/);
  } finally {
    undo();
    rmSync(base, { recursive: true, force: true });
  }
});
