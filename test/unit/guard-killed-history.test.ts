/**
 * The history line of a protect SIGKILLed during a queue hold: its death
 * closes its connection to the queue's holder and ends its watchdog's input
 * at once, and both drop its lease (leases.ts). Whoever drops it under the
 * lease lock writes the `killed: true` line (docs/cli.md), exactly one.
 * Before, the holder wrote it only when the watchdog was dead too, and the
 * watchdog only when it read the lease before the holder dropped it: with
 * the holder first, no line (a fresh user's loop: 5 of 21 kills).
 *
 * The holder runs in this process (test/helpers/holder-in-process.ts) on the
 * kernel double (test/helpers/fake-kernel.ts); the watchdog is the real
 * WatchdogChild, fed as its entry point would feed it. Both orders are forced.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as guard from '../../src/guard/index.js';
import { readHistory } from '../../src/guard/history.js';
import { holdThroughHolder } from '../../src/guard/leases-holder.js';
import { DEFAULT_QUEUE_MAXLEN, DEFAULT_QUEUE_NUM } from '../../src/guard/modes/queue.js';
import { StateStore, type Lease } from '../../src/guard/state.js';
import { WatchdogChild, type WatchdogEnd } from '../../src/guard/watchdog-child.js';
import { FakeKernel } from '../helpers/fake-kernel.js';
import { InProcessHolders } from '../helpers/holder-in-process.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/**
 * A queue hold on the double held by a protect lease whose owner is dead (this process's pid, another start time: the
 * holder finds it by the closing connection's pid) and whose watchdog lives (this process); then the protect's death
 * in the order given: the holder's connection closed first, or the watchdog's input ended first.
 */
async function killedProtect(order: 'holder-first' | 'watchdog-first' | 'owner-alive') {
  const kernel = new FakeKernel();
  const holders = new InProcessHolders();
  const undo = [kernel.install(), holders.install()];
  const dir = join(mkdtempSync(join(tmpdir(), 'synplug-killedhist-')), 'state');
  try {
    mkdirSync(dir, { mode: 0o700 });
    await guard.setup({ stateDir: dir, via: 'queue', addr: '169.254.46.2' });
    const store = new StateStore(dir);
    const now = Date.now();
    const lease: Lease = {
      id: 'feedfacefeedface',
      owner: 'protect',
      pid: process.pid,
      // not this process's start time: the owner is gone (none: this process, alive)
      ...(order !== 'owner-alive' && { pidStart: 1 }),
      watchdogPid: process.pid, // alive
      command: ['sleep', '5'],
      holds: ['queue'],
      since: now,
      deadline: now + 600_000,
    };
    store.writeLeases({ version: 1, leases: [lease] });
    store.writePlug({ version: 1, state: 'buffering', owner: 'protect', pid: lease.pid, dev: 'lo', since: now, deadline: lease.deadline });
    const conn = await holdThroughHolder({ stateDir: dir, queueNum: DEFAULT_QUEUE_NUM, maxlen: DEFAULT_QUEUE_MAXLEN, dev: 'lo' });
    const ends: WatchdogEnd[] = [];
    const reports: string[] = [];
    const watchdog = new WatchdogChild({ report: (l) => reports.push(l), onEnd: (e) => ends.push(e) });
    watchdog.line(
      JSON.stringify({ op: 'arm', ownerPid: lease.pid, stateDir: dir, deadline: lease.deadline + 5000, release: [], leaseId: lease.id, dev: 'lo' }),
    );
    const holderDone = () => holders.running.size === 0;
    if (order === 'owner-alive') {
      // its connection closed while it lives (its release through the holder failed, say): the holder drops its lease
      conn.destroy();
      await until(holderDone, 'the holder to release and exit');
      watchdog.line(JSON.stringify({ op: 'done' }));
    } else if (order === 'holder-first') {
      conn.destroy();
      await until(holderDone, 'the holder to release and exit');
      watchdog.inputEnded();
      await until(() => ends.length > 0, 'the watchdog to end');
    } else {
      watchdog.inputEnded();
      await until(() => ends.length > 0, 'the watchdog to end');
      conn.destroy();
      await until(holderDone, 'the holder to release and exit');
    }
    await sleep(50);
    return { history: readHistory(dir, 10), plug: store.readPlug(), leases: store.readLeases()?.leases ?? [], ends, reports, said: holders.said };
  } finally {
    holders.terminate();
    await holders.settle();
    for (const u of undo) u();
    rmSync(join(dir, '..'), { recursive: true, force: true });
  }
}

for (const order of ['holder-first', 'watchdog-first'] as const) {
  test.serial(`regression: a protect killed during a queue hold gets exactly one killed history line (${order})`, async (t) => {
    const r = await killedProtect(order);
    t.deepEqual(r.leases, [], 'its lease is dropped');
    t.is(r.plug?.state, 'released');
    t.is(r.ends[0]?.kind, 'fired');
    const killed = r.history.filter((e) => e.killed === true);
    t.is(killed.length, 1, `one killed line: ${JSON.stringify(r.history)} (watchdog: ${r.reports.join(' | ')}; holder: ${r.said.join(' | ')})`);
    t.is(killed[0]?.command, 'protect');
    t.is(killed[0]?.exitCode, -1);
    t.deepEqual(killed[0]?.holds, ['queue']);
  });
}

test.serial('the holder writes no killed line for a protect that lives (its connection closed, its lease dropped by the holder)', async (t) => {
  const r = await killedProtect('owner-alive');
  t.deepEqual(r.leases, []);
  t.deepEqual(
    r.history.filter((e) => e.killed === true),
    [],
  );
});

// rv19's MEDIUM: protect, its watchdog and the queue's holder all SIGKILLed: nobody wrote the killed protect's history
// line. The next synplug command's stale-lease recovery drops its lease (under the lock) and now writes it, once.
test.serial('regression: protect, its watchdog and the holder all killed: the next command (status) writes the killed line, exactly one', async (t) => {
  const kernel = new FakeKernel();
  const holders = new InProcessHolders();
  const undo = [kernel.install(), holders.install()];
  const dir = join(mkdtempSync(join(tmpdir(), 'synplug-killedall-')), 'state');
  try {
    mkdirSync(dir, { mode: 0o700 });
    await guard.setup({ stateDir: dir, via: 'queue', addr: '169.254.46.3' });
    const store = new StateStore(dir);
    // a dead process: the watchdog, killed
    const gone = spawnSync('true').pid;
    const now = Date.now();
    const lease: Lease = {
      id: 'deadbeefdeadbeef',
      owner: 'protect',
      pid: process.pid,
      pidStart: 1, // not this process's start time: the owner is gone
      watchdogPid: gone,
      command: ['sleep', '5'],
      holds: ['queue'],
      since: now - 1500,
      deadline: now + 600_000,
    };
    store.writeLeases({ version: 1, leases: [lease] });
    store.writePlug({ version: 1, state: 'buffering', owner: 'protect', pid: lease.pid, dev: 'lo', since: lease.since, deadline: lease.deadline });
    t.deepEqual(readHistory(dir, 10), [], 'no line yet: everyone who could write it was killed');
    await guard.status({ stateDir: dir });
    const killed = readHistory(dir, 10).filter((e) => e.killed === true);
    t.is(killed.length, 1, JSON.stringify(readHistory(dir, 10)));
    t.is(killed[0]?.command, 'protect');
    t.is(killed[0]?.exitCode, -1);
    t.deepEqual(killed[0]?.holds, ['queue']);
    t.is(killed[0]?.start, new Date(lease.since).toISOString());
    t.regex(killed[0]?.report?.uncounted?.[0] ?? '', /protect was killed during the hold \(the next synplug command, its watchdog gone too, released it\)/);
    t.deepEqual(store.readLeases()?.leases, [], 'its lease is dropped');
    t.is(store.readPlug()?.state, 'released');
    // the commands after it find nothing more to write
    await guard.status({ stateDir: dir });
    await guard.check({ stateDir: dir });
    t.is(readHistory(dir, 10).filter((e) => e.killed === true).length, 1, 'still one line');
  } finally {
    holders.terminate();
    await holders.settle();
    for (const u of undo) u();
    rmSync(join(dir, '..'), { recursive: true, force: true });
  }
});

// A watchdog's drop that removes another protect's dead lease (that protect killed with its
// watchdog) wrote no line for it. Now the watchdog writes it, once; and its own protect's line, once.
test.serial("regression: a watchdog whose drop removes another killed protect's lease (its watchdog gone too) writes that protect's line, once", async (t) => {
  const kernel = new FakeKernel();
  const undo = kernel.install();
  const dir = join(mkdtempSync(join(tmpdir(), 'synplug-killedother-')), 'state');
  try {
    mkdirSync(dir, { mode: 0o700 });
    await guard.setup({ stateDir: dir, via: 'queue', addr: '169.254.46.4' });
    const store = new StateStore(dir);
    const gone = spawnSync('true').pid;
    const now = Date.now();
    const base = {
      owner: 'protect' as const,
      pid: process.pid,
      pidStart: 1,
      command: ['sleep', '5'],
      holds: ['queue'],
      since: now - 1000,
      deadline: now + 600_000,
    };
    const other: Lease = { ...base, id: 'aaaaaaaaaaaaaaaa', watchdogPid: gone };
    const mine: Lease = { ...base, id: 'bbbbbbbbbbbbbbbb', watchdogPid: process.pid };
    store.writeLeases({ version: 1, leases: [other, mine] });
    store.writePlug({ version: 1, state: 'buffering', owner: 'protect', pid: mine.pid, dev: 'lo', since: mine.since, deadline: mine.deadline });
    const ends: WatchdogEnd[] = [];
    const reports: string[] = [];
    const watchdog = new WatchdogChild({ report: (l) => reports.push(l), onEnd: (e) => ends.push(e) });
    watchdog.line(JSON.stringify({ op: 'arm', ownerPid: mine.pid, stateDir: dir, deadline: mine.deadline, release: [], leaseId: mine.id, dev: 'lo' }));
    watchdog.inputEnded();
    await until(() => ends.length > 0, 'the watchdog to end');
    const killed = readHistory(dir, 10).filter((e) => e.killed === true);
    t.is(killed.length, 2, `${JSON.stringify(readHistory(dir, 10))} (${reports.join(' | ')})`);
    t.regex(killed.map((e) => e.report?.uncounted?.[0] ?? '').join('\n'), /protect was killed during the hold \(another protect's watchdog released it\)/);
    t.deepEqual(store.readLeases()?.leases, []);
  } finally {
    undo();
    rmSync(join(dir, '..'), { recursive: true, force: true });
  }
});
