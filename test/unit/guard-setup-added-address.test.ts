/**
 * `setup`'s `addedAddress` says whether this run added the hold's address:
 * a re-run with nothing to do gave `"addedAddress": true` beside
 * `"changed": false`. The record's fact (the address is synplug's, teardown
 * removes it) is `ownsAddress`, true on both runs. The kernel is the double
 * (test/helpers/fake-kernel.ts); the local plug hold and the local queue
 * hold share the address step.
 */
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as guard from '../../src/guard/index.js';
import { FakeKernel } from '../helpers/fake-kernel.js';

for (const via of ['plug', 'queue'] as const) {
  test.serial(`regression (${via}): a re-run of setup with nothing to do says addedAddress false, ownsAddress true`, async (t) => {
    const kernel = new FakeKernel();
    const undo = kernel.install();
    const base = mkdtempSync(join(tmpdir(), 'synplug-added-'));
    const stateDir = join(base, 'state');
    try {
      const first = await guard.setup({ stateDir, via, addr: '169.254.48.9' });
      t.true(first.changed);
      t.true(
        first.actions.some((a) => a.startsWith('add address 169.254.48.9/32')),
        first.actions.join('; '),
      );
      t.true(first.addedAddress, 'this run added it');
      t.true(first.ownsAddress);
      const again = await guard.setup({ stateDir, via, addr: '169.254.48.9' });
      t.false(again.changed);
      t.deepEqual(again.actions, []);
      t.false(again.addedAddress, 'this run added nothing');
      t.true(again.ownsAddress, 'an earlier setup added it: teardown removes it');
    } finally {
      undo();
      rmSync(base, { recursive: true, force: true });
    }
  });
}
