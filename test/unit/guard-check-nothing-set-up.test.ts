/**
 * `check` before any setup names the hold `synplug setup` makes on this
 * kernel and the address it holds: it said "for new connections to
 * undefined" for the local plug hold (whose words read `addr`, not
 * `addrs`). The kernel is the double (test/helpers/fake-kernel.ts), which
 * has sch_plug: setup's plan is the local plug hold.
 */
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as guard from '../../src/guard/index.js';
import { FakeKernel } from '../helpers/fake-kernel.js';

for (const addr of [undefined, '169.254.47.3']) {
  test.serial(`regression: check with nothing set up names the address setup would hold (${addr ?? 'the default'}), never 'undefined'`, async (t) => {
    const kernel = new FakeKernel();
    const undo = kernel.install();
    const base = mkdtempSync(join(tmpdir(), 'synplug-chknone-'));
    try {
      const r = await guard.check({ stateDir: join(base, 'state'), ...(addr && { addr }) });
      t.is(r.state, 'absent');
      t.regex(r.nothingSetUp ?? '', /sets up the local hold on lo \(local\) for new connections to /);
      t.true(r.nothingSetUp?.includes(`for new connections to ${addr ?? '169.254.255.254'}`), r.nothingSetUp);
      t.notRegex(r.nothingSetUp ?? '', /undefined/);
    } finally {
      undo();
      rmSync(base, { recursive: true, force: true });
    }
  });
}
