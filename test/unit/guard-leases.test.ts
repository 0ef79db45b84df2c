/**
 * Overlapping protects share the hold (issue #12): leases with the fake
 * session over one shared fake kernel (plug buffering or not, the marking
 * element and its expiry). The kernel side is tested in the VM
 * (test/kernel/guard-leases.test.ts).
 */
import test from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runProtected } from '../../src/guard/protect.js';
import { StateStore, isStale, processStartTime, type Lease } from '../../src/guard/state.js';
import { breakLeases, dropLease, leaseLive, liveLeases, newLeaseId, releaseIfOrphaned, takeLease } from '../../src/guard/leases.js';
import { recoverStale } from '../../src/guard/context.js';
import { readHistory } from '../../src/guard/history.js';
import { FakeSession, type KernelCall } from '../helpers/fake-session.js';
import { idleWatchdog } from '../helpers/watchdog-process.js';
import { watchdogEntryPath } from '../../src/guard/watchdog.js';
import type { GuardSession } from '../../src/guard/session.js';
import { FakeKernel as KernelDouble } from '../helpers/fake-kernel.js';

// The unit tier touches no kernel (test/helpers/unit-no-kernel.ts): a connection opened meanwhile (a stale plug's
// recovery retiring the report's counter chain) reaches the double.
let undoKernel: () => void = () => {};
test.before(() => {
  undoKernel = new KernelDouble().install();
});
test.after.always(() => undoKernel());

/** The kernel as the fakes share it. */
class FakeKernel {
  buffering = false;
  /** when the marking element expires (ms since the epoch), or null when there is none */
  elementUntil: number | null = null;
  readonly log: string[] = [];
  /** the plug is holding: buffering and marking on */
  get holding(): boolean {
    return this.buffering && this.elementUntil !== null && this.elementUntil > Date.now();
  }
}

/** A fake session named `name` on the shared fake kernel: its calls change the kernel and go to its log, named. */
function sessionOn(kernel: FakeKernel, stateDir: string, name: string): FakeSession {
  const effect: Record<KernelCall, (ms?: number) => void> = {
    arm: (ms) => {
      kernel.elementUntil = Date.now() + (ms ?? 0);
    },
    disarm: () => {
      kernel.elementUntil = null;
    },
    buffer: () => {
      kernel.buffering = true;
    },
    release: () => {
      kernel.buffering = false;
    },
  };
  return new FakeSession({
    stateDir,
    onCall: (call, ms) => {
      effect[call](ms);
      kernel.log.push(`${name} ${call}${ms === undefined ? '' : ` ${ms}`}`);
    },
  });
}

function fresh() {
  const dir = mkdtempSync(join(tmpdir(), 'synplug-leases-'));
  const kernel = new FakeKernel();
  return { dir, kernel, store: new StateStore(dir), a: sessionOn(kernel, dir, 'A'), b: sessionOn(kernel, dir, 'B') };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves once `f()` holds (polling), or rejects after `ms`. */
async function until(f: () => boolean, what: string, ms = 20_000): Promise<void> {
  const t0 = Date.now();
  while (!f()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

test("A-B-A'-B': the first protect to end leaves the plug to the second, which releases it", async (t) => {
  const { kernel, store, a, b, dir } = fresh();
  const bGo = join(dir, 'b-go');
  const pa = runProtected(a, { command: ['sh', '-c', `while [ ! -e ${bGo} ]; do sleep 0.02; done`] });
  await until(() => kernel.buffering, 'A to buffer');
  const pb = runProtected(b, { command: ['sh', '-c', 'sleep 1'] });
  await until(() => liveLeases(store).length === 2, "B's lease");
  spawnSync('touch', [bGo]);
  const ra = await pa;
  t.false(ra.releasedHold, 'A did not release: B holds a lease');
  t.is(ra.leftToHolders, 1);
  t.is(ra.releaseAttempts, 0);
  t.true(kernel.holding, "B's window is still held after A ended (plug buffering, marking on)");
  t.deepEqual(
    liveLeases(store).map((l) => l.pid),
    [process.pid],
  );
  t.is(store.readPlug()?.state, 'buffering');
  const rb = await pb;
  t.true(rb.releasedHold, 'B, the last one out, released');
  t.false(kernel.buffering);
  t.is(kernel.elementUntil, null, 'marking turned off by the last one');
  t.is(store.readPlug()?.state, 'released');
  t.deepEqual(liveLeases(store), []);
  t.false(kernel.log.slice(kernel.log.indexOf('A buffer')).includes('A release'), `A never released inside the window: ${kernel.log.join(', ')}`);
});

test("A-B-B'-A': the second protect ends first and leaves the plug to the first", async (t) => {
  const { kernel, store, a, b, dir } = fresh();
  const aGo = join(dir, 'a-go');
  const pa = runProtected(a, { command: ['sh', '-c', `while [ ! -e ${aGo} ]; do sleep 0.02; done`] });
  await until(() => kernel.buffering, 'A to buffer');
  const rb = await runProtected(b, { command: ['true'] });
  t.false(rb.releasedHold);
  t.true(kernel.holding, "A's window is still held after B ended");
  t.is(store.readPlug()?.state, 'buffering');
  spawnSync('touch', [aGo]);
  const ra = await pa;
  t.true(ra.releasedHold);
  t.false(kernel.buffering);
  t.is(store.readPlug()?.state, 'released');
});

test('deadlines in either order: the marking element always covers the latest live deadline, never shortened', async (t) => {
  const { kernel, store, a } = fresh();
  const lease = (ms: number): Lease => ({
    id: newLeaseId(),
    owner: 'protect',
    pid: process.pid,
    pidStart: processStartTime(process.pid),
    holds: ['local'],
    since: Date.now(),
    deadline: Date.now() + ms,
  });
  // short, then long: the long one extends the element
  const short = lease(300);
  await takeLease(store, a, short, 'lo');
  const armedAt = kernel.elementUntil! - 300;
  t.true(armedAt >= short.since && armedAt - short.since < 1000, 'alone: armed for its own max-hold (300 ms from when it armed)');
  const long = lease(5000);
  await takeLease(store, a, long, 'lo');
  t.true(kernel.elementUntil! >= long.deadline - 20, 'renewed to the longer deadline');
  // long first, then short: the short one must not shorten it
  const { kernel: k2, store: s2, a: a2 } = fresh();
  const long2 = lease(5000);
  await takeLease(s2, a2, long2, 'lo');
  const short2 = lease(300);
  await takeLease(s2, a2, short2, 'lo');
  t.true(k2.elementUntil! >= long2.deadline - 20, `still covers the longer deadline (${k2.elementUntil! - long2.deadline} ms)`);
  t.is(s2.readPlug()?.deadline, long2.deadline, 'plug.json records the latest deadline');
  // the short one passes its deadline: it no longer holds; dropping it keeps the plug for the long one
  await sleep(350);
  t.false(leaseLive(short2));
  const d = await dropLease(s2, a2, short2.id, 'lo');
  t.false(d.released);
  t.deepEqual(
    d.remaining.map((l) => l.id),
    [long2.id],
  );
  t.true(k2.elementUntil! >= long2.deadline - 20);
  // max-hold of one protect while another lives: the first gives up its hold, the plug stays
  const { kernel: k3, store: s3, a: a3, b: b3 } = fresh();
  await takeLease(s3, b3, lease(120_000), 'lo');
  await b3.buffer();
  const r = await runProtected(a3, { command: ['sleep', '1'], maxHoldMs: 100 });
  t.true(r.maxHoldReached);
  t.false(r.releasedHold);
  t.true(k3.holding, 'still held for the other lease');
  t.is(liveLeases(s3).length, 1);
  void store;
});

test('a holder killed while another lives: its lease is dropped, the plug stays; once the other goes too, it is released', async (t) => {
  const { kernel, store, a, b } = fresh();
  // holder X: a live process with a lease
  const x = spawn('sleep', ['30'], { stdio: 'ignore' });
  await new Promise((r) => x.once('spawn', r));
  const xLease: Lease = {
    id: newLeaseId(),
    owner: 'protect',
    pid: x.pid!,
    pidStart: processStartTime(x.pid!),
    holds: ['local'],
    since: Date.now(),
    deadline: Date.now() + 60_000,
  };
  await takeLease(store, a, xLease, 'lo');
  await a.buffer();
  const rb = await runProtected(b, { command: ['true'] });
  t.false(rb.releasedHold, 'X lives: B leaves the plug to it');
  t.true(kernel.holding);
  // recovery while X lives: nothing to do
  t.deepEqual(await recoverStale(a as unknown as GuardSession, store), { released: false });
  t.true(kernel.buffering);
  x.kill('SIGKILL');
  await new Promise((r) => x.once('exit', r));
  t.false(leaseLive(xLease), 'a dead holder loses its lease');
  const rec = await recoverStale(a as unknown as GuardSession, store);
  t.true(rec.released);
  t.regex(rec.reason!, new RegExp(`its owner \\(pid ${x.pid}\\) is gone`));
  t.false(kernel.buffering);
  t.is(kernel.elementUntil, null);
  t.deepEqual(liveLeases(store), []);
  t.is(store.readPlug()?.state, 'released');
});

test('a manual release breaks every live lease, releases at once, and says how many', async (t) => {
  const { kernel, store, a, b, dir } = fresh();
  const go = join(dir, 'go');
  const cmd = ['sh', '-c', `while [ ! -e ${go} ]; do sleep 0.02; done`];
  const pa = runProtected(a, { command: cmd });
  const pb = runProtected(b, { command: cmd });
  await until(() => liveLeases(store).length === 2, 'two leases');
  const broken = await breakLeases(
    store,
    () => a.release(),
    () => {
      store.writeLeases({ version: 1, leases: [] });
    },
  );
  t.is(broken, 2);
  t.false(kernel.buffering, 'released at once');
  t.deepEqual(liveLeases(store), []);
  spawnSync('touch', [go]);
  const [ra, rb] = await Promise.all([pa, pb]);
  // their own releases find their leases broken: they release again (always safe),
  // but report that the manual release, not theirs, let the plug go
  for (const r of [ra, rb]) {
    t.false(r.releasedHold);
    t.true(r.leaseBroken);
    t.is(r.leftToHolders, undefined);
  }
  t.false(kernel.buffering);
});

test("release --orphaned (an ExecStopPost= inside a protected restart) leaves a live protect's lease alone; the protect then releases as usual", async (t) => {
  const { kernel, store, a, dir } = fresh();
  const go = join(dir, 'go');
  const pa = runProtected(a, { command: ['sh', '-c', `while [ ! -e ${go} ]; do sleep 0.02; done`], maxHoldMs: 60_000 });
  await until(() => liveLeases(store).length === 1 && kernel.holding, 'the lease and the plug buffering');
  let wrote = false;
  const r = await releaseIfOrphaned(
    store,
    () => a.release(),
    () => {
      wrote = true;
    },
  );
  t.false(r.released);
  t.is(r.live.length, 1);
  t.is(r.live[0].owner, 'protect');
  t.true(kernel.holding, 'still buffering, marking still armed');
  t.false(wrote, 'nothing recorded');
  t.is(liveLeases(store).length, 1, 'the lease is still on record');
  spawnSync('touch', [go]);
  const ra = await pa;
  t.true(ra.releasedHold, "the protect's own release let the plug go");
  t.falsy(ra.leaseBroken);
  t.false(kernel.buffering);
});

test('release --orphaned releases a plug that only dead leases hold (a killed protect, an expired manual plug), and one without any lease', async (t) => {
  const { kernel, store, a } = fresh();
  const dead = spawnSync('true').pid!; // exited: its lease is dead
  const now = Date.now();
  store.writeLeases({
    version: 1,
    leases: [
      { id: newLeaseId(), owner: 'protect', pid: dead, holds: ['local'], since: now - 1000, deadline: now + 60_000 },
      { id: newLeaseId(), owner: 'manual', pid: process.pid, holds: ['local'], since: now - 2000, deadline: now - 1000 },
    ],
  });
  kernel.buffering = true;
  let wrote = 0;
  const r = await releaseIfOrphaned(
    store,
    () => a.release(),
    () => {
      wrote++;
      store.writeLeases({ version: 1, leases: [] });
    },
  );
  t.true(r.released);
  t.deepEqual(r.live, []);
  t.false(kernel.buffering);
  t.is(wrote, 1);
  // no lease at all (a plug a crash left buffering with its leases file gone): released too
  kernel.buffering = true;
  const r2 = await releaseIfOrphaned(
    store,
    () => a.release(),
    () => {},
  );
  t.true(r2.released);
  t.false(kernel.buffering);
});

/** A manual lease of `w`'s watchdog on the local hold, taken at `now` for a minute. */
function manualLease(w: { watchdogPid: number; watchdogStart: number }, now: number): Lease {
  return {
    id: newLeaseId(),
    owner: 'manual',
    pid: 1,
    watchdogPid: w.watchdogPid,
    watchdogStart: w.watchdogStart,
    holds: ['local'],
    since: now,
    deadline: now + 60_000,
  };
}

/** A live watchdog (a real, idle one: a manual lease lives only while its watchdog is one of synplug's). */
const watchdogStandIn = idleWatchdog;

test('release --orphaned leaves an unexpired manual plug (synplug plug) alone while its watchdog lives', async (t) => {
  const { kernel, store, a } = fresh();
  const now = Date.now();
  const w = await watchdogStandIn();
  t.teardown(w.kill);
  store.writeLeases({
    version: 1,
    leases: [manualLease(w, now)],
  });
  kernel.buffering = true;
  const r = await releaseIfOrphaned(
    store,
    () => a.release(),
    () => {},
  );
  t.false(r.released);
  t.is(r.live[0].owner, 'manual');
  t.true(kernel.buffering);
});

// Issue #19, the attack's MEDIUM 3: a stale manual lease copied back into the directory kept the hold running until
// its recorded deadline (a manual lease was live until its deadline whatever its watchdog). Now it is live only while
// the very watchdog it records lives (pid and start time); the next command releases.
test('a manual lease copied back after its watchdog ended holds nothing: the next command releases the plug, naming the watchdog', async (t) => {
  const { kernel, store, a } = fresh();
  const w = await watchdogStandIn();
  const now = Date.now();
  const lease: Lease = manualLease(w, now);
  await takeLease(store, a, lease, 'lo');
  await a.buffer();
  t.true(leaseLive(lease), 'live while its watchdog lives');
  t.deepEqual(await recoverStale(a as unknown as GuardSession, store), { released: false }, 'a live manual plug is left alone');
  const leasesCopy = store.readLeases()!;
  const plugCopy = store.readPlug()!;
  t.is(plugCopy.watchdogStart, w.watchdogStart, 'plug.json records the watchdog too');
  // its release (the watchdog ends with it), then the stale copies put back
  await breakLeases(
    store,
    () => a.release(),
    () => store.writeLeases({ version: 1, leases: [] }),
  );
  await w.kill();
  store.writeLeases(leasesCopy);
  store.writePlug(plugCopy);
  await a.buffer(); // the hold running again, as the copied records say
  t.true(Date.now() < lease.deadline, 'the recorded deadline is still ahead');
  t.false(leaseLive(lease), 'its watchdog is gone: the lease is dead');
  t.true(isStale(store.readPlug()), 'plug.json is stale');
  t.deepEqual(liveLeases(store), []);
  const rec = await recoverStale(a as unknown as GuardSession, store);
  t.true(rec.released);
  t.regex(rec.reason!, new RegExp(`its manual plug's watchdog, pid ${w.watchdogPid}, is gone`));
  t.false(kernel.buffering, 'released by the next command');
  t.is(store.readPlug()?.state, 'released');
});

test('leases copied into another state directory hold nothing there, though their watchdog and owner live: that directory releases', async (t) => {
  const { kernel, store, a } = fresh();
  const w = await watchdogStandIn();
  t.teardown(w.kill);
  const now = Date.now();
  const manual: Lease = manualLease(w, now);
  const protect: Lease = {
    id: newLeaseId(),
    owner: 'protect',
    pid: process.pid,
    pidStart: processStartTime(process.pid),
    holds: ['local'],
    since: now,
    deadline: now + 60_000,
  };
  await takeLease(store, a, manual, 'lo');
  await takeLease(store, a, protect, 'lo');
  await a.buffer();
  t.is(liveLeases(store).length, 2, 'live in their own directory');
  const other = fresh();
  writeFileSync(join(other.dir, 'leases.json'), readFileSync(join(store.dir, 'leases.json')), { mode: 0o600 });
  writeFileSync(join(other.dir, 'plug.json'), readFileSync(join(store.dir, 'plug.json')), { mode: 0o600 });
  t.deepEqual(liveLeases(other.store), [], 'copies: live nowhere else');
  other.kernel.buffering = true;
  const rec = await recoverStale(other.a as unknown as GuardSession, other.store);
  t.true(rec.released, "the other directory's next command releases what its records say");
  t.false(other.kernel.buffering);
  t.is(liveLeases(store).length, 2, 'the leases of their own directory are untouched');
  t.true(kernel.buffering, 'their hold goes on');
});

test('a manual lease naming a live process it cannot prove is its watchdog is dead: no start time, or another start time', async (t) => {
  const now = Date.now();
  const w = await watchdogStandIn();
  t.teardown(w.kill);
  const base = { id: newLeaseId(), owner: 'manual' as const, pid: process.pid, holds: ['local'], since: now, deadline: now + 60_000 };
  const [pid, start] = [w.watchdogPid, w.watchdogStart];
  t.false(leaseLive({ ...base }), 'no watchdog recorded (an older record, or a forged one)');
  t.false(leaseLive({ ...base, watchdogPid: pid }), 'a live pid without its start time');
  t.false(leaseLive({ ...base, watchdogPid: pid, watchdogStart: start + 1 }), 'a live pid with another start time (pid reused)');
  t.true(leaseLive({ ...base, watchdogPid: pid, watchdogStart: start }), 'the same live process');
  t.false(leaseLive({ ...base, watchdogPid: pid, watchdogStart: start, deadline: now - 1 }), 'past its deadline');
  const plug = { version: 1 as const, state: 'buffering' as const, owner: 'manual' as const, pid: 1, dev: 'lo', since: now, deadline: now + 60_000 };
  t.true(isStale(plug), 'plug.json of a manual plug with no watchdog recorded');
  t.false(isStale({ ...plug, watchdogPid: pid, watchdogStart: start }));
});

// Issue #19, rv19's MEDIUM: a lease made by hand naming any live process with its right start time as its watchdog
// counted as live, so the hold stayed after its protect (or plug) was gone. Now the process must be one of synplug's
// watchdogs: its command line runs the watchdog's entry point (nothing after it: the queue's holder is none), as root
// or this user (watchdog.ts's runsWatchdog).
test('a hand-made manual lease naming a live process that is no watchdog holds nothing: the next command releases', async (t) => {
  const { kernel, store, a } = fresh();
  const others = [
    spawn('sleep', ['30'], { stdio: 'ignore' }),
    // node running something else, though it names the watchdog's file: the queue holder's argument after it
    spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)', watchdogEntryPath(), '--queue-holder'], { stdio: 'ignore' }),
    // another script of node's
    spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' }),
  ];
  t.teardown(() => {
    for (const p of others) p.kill('SIGKILL');
  });
  await Promise.all(others.map((p) => new Promise((r) => p.once('spawn', r))));
  const now = Date.now();
  for (const p of [...others.map((o) => o.pid!), process.pid, 1]) {
    const start = processStartTime(p);
    t.true(start !== undefined, `pid ${p} lives`);
    const lease = manualLease({ watchdogPid: p, watchdogStart: start! }, now);
    t.false(leaseLive(lease), `pid ${p} (${readFileSync(`/proc/${p}/cmdline`, 'utf8').replaceAll('\0', ' ').trim()}) is no watchdog: the lease is dead`);
    store.writeLeases({ version: 1, leases: [lease] });
    store.writePlug({
      version: 1,
      state: 'buffering',
      owner: 'manual',
      pid: 1,
      watchdogPid: p,
      watchdogStart: start!,
      dev: 'lo',
      since: now,
      deadline: now + 60_000,
    });
    t.true(isStale(store.readPlug()), 'plug.json is stale');
    kernel.buffering = true;
    const rec = await recoverStale(a as unknown as GuardSession, store);
    t.true(rec.released, 'the next command releases the hold');
    t.false(kernel.buffering);
  }
  // a real watchdog, as plug starts it: live
  const w = await watchdogStandIn();
  t.teardown(w.kill);
  t.true(leaseLive(manualLease(w, now)), "synplug's watchdog: the lease lives");
});

test('taking and dropping leases is atomic: 16 overlapping holders, the plug released exactly once, by the last', async (t) => {
  const { kernel, store, a } = fresh();
  let releases = 0;
  const k = {
    arm: (ms: number) => a.arm(ms),
    disarm: () => a.disarm(),
    release: async () => {
      releases++;
      await a.release();
    },
  };
  const leases = Array.from(
    { length: 16 },
    (): Lease => ({
      id: newLeaseId(),
      owner: 'protect',
      pid: process.pid,
      pidStart: processStartTime(process.pid),
      holds: ['local'],
      since: Date.now(),
      deadline: Date.now() + 30_000,
    }),
  );
  await Promise.all(leases.map((l) => takeLease(store, k, l, 'lo')));
  t.is(liveLeases(store).length, 16, 'no lease lost to a concurrent writer');
  await a.buffer();
  const results = await Promise.all(
    leases.map(async (l, i) => {
      await sleep(i % 4);
      return dropLease(store, k, l.id, 'lo');
    }),
  );
  t.is(results.filter((r) => r.released).length, 1);
  t.is(releases, 1);
  t.false(kernel.buffering);
  t.deepEqual(liveLeases(store), []);
});

// rv19's MINOR: a teardown while a protect held (it breaks every lease, releases, and removes the records) was
// followed by the protect's own end writing leases.json and plug.json again: files in a state directory that teardown
// had cleared, saying something of a hold that is not set up any more. Now the protect, finding its lease broken and
// the records gone, writes none.
test("a teardown during a protect: the protect's end re-creates no record in the cleared state directory", async (t) => {
  const { kernel, store, a, dir } = fresh();
  writeFileSync(join(dir, 'history.jsonl'), ''); // what teardown keeps (its history), so that the directory stays
  const go = join(dir, 'go');
  const p = runProtected(a, { command: ['sh', '-c', `while [ ! -e ${go} ]; do sleep 0.02; done`] });
  await until(() => kernel.buffering, 'the protect to buffer');
  // teardown: every lease broken and the plug released (as release does), then the records removed
  await breakLeases(
    store,
    () => a.release(),
    () => store.writeLeases({ version: 1, leases: [] }),
  );
  store.clear();
  const left = () =>
    readdirSync(dir)
      .filter((n) => n !== 'go' && n !== 'history.jsonl')
      .sort();
  t.deepEqual(left(), [], 'teardown cleared the records');
  spawnSync('touch', [go]);
  const r = await p;
  t.is(r.exitCode, 0);
  t.deepEqual(left(), [], `nothing re-created: ${left().join(' ')}`);
  t.false(kernel.buffering);
});

// rv19's MEDIUM, the other droppers: a protect killed with its watchdog while another holder lives. Its lease is
// dropped by the next take or drop (another protect's), never by a recovery, so the history line is written by
// whoever drops it under the lock: here the next protect, once.
test('a protect killed with its watchdog, its lease dropped by the next protect: that protect writes its killed line, once', async (t) => {
  const { kernel, store, a, dir } = fresh();
  const now = Date.now();
  const killed: Lease = {
    id: newLeaseId(),
    owner: 'protect',
    pid: process.pid,
    pidStart: 1, // not this process's start time: gone
    watchdogPid: spawnSync('true').pid, // gone
    command: ['sleep', '5'],
    holds: ['local'],
    since: now - 800,
    deadline: now + 60_000,
  };
  store.writeLeases({ version: 1, leases: [killed] });
  kernel.buffering = true;
  const r = await runProtected(a, { command: ['true'] });
  t.is(r.exitCode, 0);
  t.false(kernel.buffering);
  const lines = readHistory(dir, 10).filter((e) => e.killed === true);
  t.is(lines.length, 1, JSON.stringify(readHistory(dir, 10)));
  t.is(lines[0]?.start, new Date(killed.since).toISOString());
  t.regex(lines[0]?.report?.uncounted?.[0] ?? '', /the next synplug command, its watchdog gone too, released it/);
  // nothing more for it later
  await runProtected(a, { command: ['true'] });
  t.is(readHistory(dir, 10).filter((e) => e.killed === true).length, 1);
});
