/**
 * setup of a queue hold on a queue number another state directory's queue
 * hold uses (its table's comment names the queue and that directory's mark):
 * exit 7, and the message now says whose it is and the ways out (another
 * --queue-num, that directory's --state-dir, a teardown through it), not
 * only "choose another --queue-num". The kernel is the double
 * (test/helpers/fake-kernel.ts); a queue number no other test uses.
 */
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as guard from '../../src/guard/index.js';
import { FakeKernel } from '../helpers/fake-kernel.js';

test.serial("setup on another directory's queue: whose it is and the ways out, exit 7 (foreign-state); nothing changed", async (t) => {
  const kernel = new FakeKernel();
  const undo = kernel.install();
  const base = mkdtempSync(join(tmpdir(), 'synplug-qclash-'));
  try {
    const [a, b] = [join(base, 'a'), join(base, 'b')];
    await guard.setup({ stateDir: a, via: 'queue', addr: '169.254.46.41', queue: { num: 4711 } });
    const tables = kernel.state.tables.map((x) => x.name).sort();
    const e = await t.throwsAsync(guard.setup({ stateDir: b, via: 'queue', inbound: { dev: 'sp-flt0', ports: [8080] }, queue: { num: 4711 } }));
    t.is((e as { category?: string }).category, 'foreign-state');
    t.regex(
      e!.message,
      /^netfilter queue 4711 is another state directory's: another state directory holds SYNs in it \(its queue hold's table inet synplug_queue, whose comment names queue 4711 and state directory mark [0-9a-f]{16}; this one's is [^)]+\)\. Two state directories never share a queue: choose another --queue-num for this hold, or set it up through that directory \(--state-dir DIR\); to free queue 4711, tear that hold down through it \('synplug teardown --state-dir DIR'\)\. If no state directory records it any more, remove its table \('nft delete table inet synplug_queue', outside a hold\) and run setup again\. Nothing was changed$/,
    );
    t.deepEqual(kernel.state.tables.map((x) => x.name).sort(), tables, 'nothing added');
    await guard.teardown({ stateDir: a });
  } finally {
    undo();
    rmSync(base, { recursive: true, force: true });
  }
});
