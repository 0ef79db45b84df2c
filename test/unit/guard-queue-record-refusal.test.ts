/**
 * A queue hold's record naming what setup refuses (src/guard/modes/queue.ts,
 * queueRecordRefusal) is refused with exit 6 (a StateFileError naming the file
 * and the field) before anything is changed: a loopback address, a local hold
 * not on lo, a table that is not synplug's queue table. The kernel is the
 * double (test/helpers/fake-kernel.ts): setup writes the record, which is then
 * edited as the review found it.
 */
import test from 'ava';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as guard from '../../src/guard/index.js';
import { StateFileError } from '../../src/guard/state.js';
import { FakeKernel } from '../helpers/fake-kernel.js';

/** A queue hold set up on the double, its record edited by `edit`, then `teardown`: what it threw, and the kernel's tables and addresses before and after. */
async function teardownEdited(edit: (q: Record<string, unknown>) => void) {
  const kernel = new FakeKernel();
  const undo = kernel.install();
  const base = mkdtempSync(join(tmpdir(), 'synplug-qrefuse-'));
  const stateDir = join(base, 'state');
  try {
    await guard.setup({ stateDir, via: 'queue', addr: '169.254.46.7' });
    const file = join(stateDir, 'setup.json');
    const rec = JSON.parse(readFileSync(file, 'utf8')) as { holds: { queue: Record<string, unknown> }; netns?: string };
    cookieWritten(rec.netns);
    edit(rec.holds.queue);
    writeFileSync(file, JSON.stringify(rec));
    const before = snapshot(kernel);
    const error = await guard.teardown({ stateDir }).then(
      () => undefined,
      (e: unknown) => e,
    );
    return { error, before, after: snapshot(kernel), recordLeft: readFileSync(file, 'utf8') === JSON.stringify(rec) };
  } finally {
    undo();
    rmSync(base, { recursive: true, force: true });
  }
}

/** The double's whole state as text (its counters are bigints). */
function snapshot(kernel: FakeKernel): string {
  return JSON.stringify(kernel.state, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

/** setup wrote the namespace cookie (the record is this namespace's: only the edited field is wrong). */
function cookieWritten(netns: string | undefined): void {
  if (netns === undefined) throw new Error('setup wrote no netns cookie');
}

for (const addr of ['127.0.0.1', '127.0.0.2', '::1']) {
  test.serial(`regression: a queue record naming the loopback address ${addr} (which setup refuses) was torn down; now refused, naming 'addrs'`, async (t) => {
    const r = await teardownEdited((q) => {
      q.addrs = [addr];
    });
    t.true(r.error instanceof StateFileError, String(r.error));
    const e = r.error as StateFileError;
    t.is(e.category, 'bad-state');
    t.regex(
      e.message,
      new RegExp(
        `/setup\\.json is not a setup record synplug wrote: .*hold 'queue' names what setup refuses: 'addrs': bad address '${addr.replace(/\./g, '\\.')}': a loopback address`,
      ),
    );
    t.is(r.after, r.before, 'nothing was changed in the kernel');
    t.true(r.recordLeft, 'the record was left as it was');
  });
}

test.serial("a queue record naming a table not synplug's is refused, naming the table", async (t) => {
  const r = await teardownEdited((q) => {
    q.table = 'victim';
  });
  t.true(r.error instanceof StateFileError, String(r.error));
  t.regex(
    (r.error as Error).message,
    /hold 'queue' names what setup refuses: 'table' is 'victim': synplug's queue holds are in the nftables table synplug_queue or synplug_queue_DEV/,
  );
  t.is(r.after, r.before);
  t.true(r.recordLeft);
});

test.serial('a local queue record on another device than lo is refused, naming the device', async (t) => {
  const r = await teardownEdited((q) => {
    q.dev = 'eth0';
  });
  t.true(r.error instanceof StateFileError, String(r.error));
  t.regex((r.error as Error).message, /hold 'queue' names what setup refuses: 'dev' is 'eth0': a local queue hold is on lo/);
  t.is(r.after, r.before);
});

test.serial(
  "regression: a hold key that is not its entry's ('queue:x' for a local queue hold) was read as complete; now refused (exit 6) naming the key",
  async (t) => {
    const kernel = new FakeKernel();
    const undo = kernel.install();
    const base = mkdtempSync(join(tmpdir(), 'synplug-qkey-'));
    const stateDir = join(base, 'state');
    try {
      await guard.setup({ stateDir, via: 'queue', addr: '169.254.46.8' });
      const file = join(stateDir, 'setup.json');
      const rec = JSON.parse(readFileSync(file, 'utf8')) as { holds: Record<string, unknown> };
      t.deepEqual(Object.keys(rec.holds), ['queue']);
      writeFileSync(file, JSON.stringify({ ...rec, holds: { 'queue:x': rec.holds.queue } }));
      const before = snapshot(kernel);
      for (const run of [() => guard.status({ stateDir }), () => guard.check({ stateDir }), () => guard.teardown({ stateDir })]) {
        const e = await run().then(
          () => undefined,
          (x: unknown) => x,
        );
        t.true(e instanceof StateFileError, String(e));
        t.is((e as StateFileError).category, 'bad-state');
        t.regex((e as StateFileError).message, /hold 'queue:x' is not the key setup records a queue hold of lo under/);
      }
      t.is(snapshot(kernel), before, 'nothing was changed');
      // the key setup gives it is accepted again
      writeFileSync(file, JSON.stringify(rec));
      t.is((await guard.check({ stateDir })).state, 'ok');
    } finally {
      undo();
      rmSync(base, { recursive: true, force: true });
    }
  },
);

// rv19's MEDIUM: a record naming a table setup never writes for its hold (a local queue hold's table is synplug_queue,
// an inbound one's synplug_queue_DEV) made teardown remove another state directory's queue hold's address: with that
// hold's own table named, teardown keeps the address (the table carries the other directory's mark); with a table
// that does not exist, nothing told the address apart. Now refused (exit 6) naming the table setup writes.
for (const table of ['synplug_queue_x', 'synplug_queue_lo']) {
  test.serial(
    `regression: a copied queue record naming the table ${table} (never a local queue hold's) removed another directory's address; now refused`,
    async (t) => {
      const kernel = new FakeKernel();
      const undo = kernel.install();
      const base = mkdtempSync(join(tmpdir(), 'synplug-qtable-'));
      const [a, b] = [join(base, 'a'), join(base, 'b')];
      try {
        await guard.setup({ stateDir: a, via: 'queue', addr: '169.254.46.9' });
        const rec = JSON.parse(readFileSync(join(a, 'setup.json'), 'utf8')) as { holds: { queue: Record<string, unknown> } };
        mkdirSync(b, { mode: 0o700 });
        // the other hold's own table: kept (its comment names a's mark), the address with it
        writeFileSync(join(b, 'setup.json'), JSON.stringify(rec), { mode: 0o600 });
        const kept = await guard.teardown({ stateDir: b });
        t.true(
          kept.kept.some((k) => /address 169\.254\.46\.9 on lo: the address of another state directory's queue hold/.test(k)),
          kept.kept.join('\n'),
        );
        t.true(hasAddress(kernel), "a's address stays");
        // a table setup never writes for it
        rec.holds.queue.table = table;
        writeFileSync(join(b, 'setup.json'), JSON.stringify(rec), { mode: 0o600 });
        const before = snapshot(kernel);
        const e = await guard.teardown({ stateDir: b }).then(
          () => undefined,
          (x: unknown) => x,
        );
        t.true(e instanceof StateFileError, String(e));
        t.is((e as StateFileError).category, 'bad-state');
        t.regex(
          (e as Error).message,
          new RegExp(`hold 'queue' names what setup refuses: 'table' is '${table}': setup puts a local queue hold in the nftables table synplug_queue`),
        );
        t.is(snapshot(kernel), before, 'nothing was changed');
        t.true(hasAddress(kernel), "a's address stays");
      } finally {
        undo();
        rmSync(base, { recursive: true, force: true });
      }
    },
  );
}

const IFA_LOCAL = 2; // <linux/if_addr.h>

/** Whether the double's lo has 169.254.46.9. */
function hasAddress(kernel: FakeKernel): boolean {
  return kernel.state.addrs.some((x) => x.attrs.some(([type, v]) => type === IFA_LOCAL && v.equals(Buffer.from([169, 254, 46, 9]))));
}

for (const maxlen of [1e308, 4294967296, 1e10]) {
  test.serial(
    `regression: a queue record whose maxlen is ${maxlen} (beyond a u32, which setup refuses) passed the check and failed at the hold without naming setup.json; now refused (exit 6) naming the file and 'maxlen'`,
    async (t) => {
      const r = await teardownEdited((q) => {
        q.maxlen = maxlen;
      });
      t.true(r.error instanceof StateFileError, String(r.error));
      t.is((r.error as StateFileError).category, 'bad-state');
      t.regex(
        (r.error as Error).message,
        /\/setup\.json is not a setup record synplug wrote: .*hold 'queue' names what setup refuses: 'maxlen' is [0-9e+]+: not a packet count \(1-4294967295/,
      );
      t.is(r.after, r.before);
      t.true(r.recordLeft);
    },
  );
}
