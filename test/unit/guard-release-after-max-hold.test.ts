/**
 * `release` with the local plug hold set up and nothing held. When its plug
 * qdisc existed only around a hold, the release found none and said "no
 * hold on lo: nothing is held (synplug is not set up there)" though setup
 * was complete (VM: setup; plug --max-hold 2s; wait 4 s; release). Now the
 * plug stays set up (released) between holds, and the release says nothing
 * was held; a plug gone meanwhile (removed by hand) is said the same way,
 * from the record, as the queue hold's release does. The kernel is the
 * double (test/helpers/fake-kernel.ts).
 */
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as guard from '../../src/guard/index.js';
import { formatRelease } from '../../src/cli/format-guard.js';
import { FakeKernel } from '../helpers/fake-kernel.js';

test.serial('regression: release with the plug hold set up and nothing held says nothing was held, not "not set up"', async (t) => {
  const kernel = new FakeKernel();
  const undo = kernel.install();
  const base = mkdtempSync(join(tmpdir(), 'synplug-relmax-'));
  const stateDir = join(base, 'state');
  try {
    const s = await guard.setup({ stateDir, via: 'plug' });
    t.is(s.hold, 'local');
    t.deepEqual(kernel.plugs(), [{ dev: 'lo', handle: 0x400000, buffering: false }], 'the plug stays set up, released, between holds');
    t.is((await guard.check({ stateDir })).state, 'ok', 'setup is complete');
    const r = await guard.release({ stateDir });
    t.true(r.plugExists, 'the plug qdisc is there');
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
