/**
 * The watchdog records "released" only after a release that succeeded
 * (issue #19, deliverable 5; defect 5 as it was found: after a release that
 * failed, it wrote plug.json released, and the next command's stale-plug
 * recovery skipped the plug).
 *
 * The failure is injected through the kernel double (test/helpers/fake-kernel.ts;
 * the unit tier touches no kernel): the release step is a qdisc delete on an
 * interface index that does not exist, which it refuses as the kernel does
 * (ENODEV) and which changes nothing. A step that succeeds is a GETLINK of
 * lo with an ack.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MANUAL_LEASE_POLL_MS, WatchdogChild, type WatchdogEnd } from '../../src/guard/watchdog-child.js';
import type { WatchdogStep } from '../../src/guard/watchdog.js';
import { StateStore, isStale, processStartTime } from '../../src/guard/state.js';
import { liveLeases } from '../../src/guard/leases.js';
import { readHistory } from '../../src/guard/history.js';
import { unwatchedReport } from '../../src/guard/report.js';
import { formatHistoryEntry } from '../../src/cli/format-guard.js';
import { NETLINK_ROUTE, NLM_F_ACK } from '../../src/netlink/message.js';
import { FakeKernel } from '../helpers/fake-kernel.js';

// The unit tier touches no kernel (test/helpers/unit-no-kernel.ts): every connection opened meanwhile reaches the double.
let undoKernel: () => void = () => {};
test.before(() => {
  undoKernel = new FakeKernel().install();
});
test.after.always(() => undoKernel());

const RTM_GETLINK = 18;
const RTM_DELQDISC = 37;

/** struct tcmsg { u8 family; u8 pad1; u16 pad2; int ifindex; u32 handle; u32 parent; u32 info; }: root qdisc of an ifindex that does not exist. */
function refusedRelease(): WatchdogStep {
  const tcm = Buffer.alloc(20);
  tcm.writeInt32LE(2_000_000_000, 4);
  tcm.writeUInt32LE(0xffffffff, 12); // TC_H_ROOT
  return {
    what: 'plug release',
    phase: 'release',
    protocol: NETLINK_ROUTE,
    messages: [{ type: RTM_DELQDISC, flags: NLM_F_ACK, payload: tcm.toString('hex') }],
  };
}

/** struct ifinfomsg of lo (ifindex 1): a request the kernel answers. */
function acceptedRelease(): WatchdogStep {
  const ifi = Buffer.alloc(16);
  ifi.writeInt32LE(1, 4);
  return { what: 'plug release', phase: 'release', protocol: NETLINK_ROUTE, messages: [{ type: RTM_GETLINK, flags: NLM_F_ACK, payload: ifi.toString('hex') }] };
}

/** A state directory as a protect leaves it when it dies (SIGKILL) inside the plug window: buffering, its lease recorded. */
function orphanedPlug(now: number) {
  const dir = join(mkdtempSync(join(tmpdir(), 'synplug-wdrel-')), 'state');
  mkdirSync(dir, { mode: 0o700 });
  const owner = spawnSync('true').pid!; // a process that has exited
  const store = new StateStore(dir);
  store.writePlug({ version: 1, state: 'buffering', owner: 'protect', pid: owner, pidStart: 1, dev: 'lo', since: now, deadline: now + 60_000 });
  store.writeLeases({
    version: 1,
    leases: [{ id: 'abcdef0123456789', owner: 'protect', pid: owner, pidStart: 1, holds: ['local'], since: now, deadline: now + 60_000 }],
  });
  return { dir, store, owner };
}

async function fireWith(dir: string, owner: number, steps: WatchdogStep[]): Promise<{ end: WatchdogEnd; lines: string[] }> {
  const lines: string[] = [];
  let end: WatchdogEnd | undefined;
  const w = new WatchdogChild({ report: (l) => lines.push(l), onEnd: (e) => (end = e) });
  w.line(JSON.stringify({ op: 'arm', ownerPid: owner, stateDir: dir, deadline: Date.now() + 60_000, release: steps, leaseId: 'abcdef0123456789', dev: 'lo' }));
  await w.fire('the parent is gone');
  return { end: end!, lines };
}

test('a release that failed is not recorded released: plug.json stays buffering (with releaseFailedAt), and the next command finds it stale', async (t) => {
  const now = Date.now();
  const { dir, store, owner } = orphanedPlug(now);
  const { end, lines } = await fireWith(dir, owner, [refusedRelease()]);
  t.deepEqual(end, { kind: 'fired', reason: 'the parent is gone', failed: true });
  t.regex(lines.join('\n'), /plug release failed: /);
  t.regex(lines.at(-1)!, /release FAILED \(run synplug release\)/);
  const p = store.readPlug()!;
  t.is(p.state, 'buffering', 'never "released" after a failed release');
  t.is(typeof p.releaseFailedAt, 'number');
  t.true(isStale(p), "the next command's stale-plug recovery takes it (its owner is dead)");
  t.deepEqual(liveLeases(store), [], 'no live lease keeps it');
});

test('the same when the lease bookkeeping fails too (a damaged leases.json): released only if the release succeeded', async (t) => {
  const now = Date.now();
  const failing = orphanedPlug(now);
  writeFileSync(join(failing.dir, 'leases.json'), '{"version":1,"leases":"damaged"}');
  const a = await fireWith(failing.dir, failing.owner, [refusedRelease()]);
  t.true(a.end.kind === 'fired' && a.end.failed);
  t.regex(a.lines.join('\n'), /releasing anyway/);
  t.is(failing.store.readPlug()!.state, 'buffering');
  t.true(isStale(failing.store.readPlug()));

  const working = orphanedPlug(now);
  writeFileSync(join(working.dir, 'leases.json'), '{"version":1,"leases":"damaged"}');
  const b = await fireWith(working.dir, working.owner, [acceptedRelease()]);
  t.deepEqual(b.end, { kind: 'fired', reason: 'the parent is gone', failed: false });
  t.is(working.store.readPlug()!.state, 'released');
});

test('a release that succeeded is recorded released, the lease dropped', async (t) => {
  const { dir, store, owner } = orphanedPlug(Date.now());
  const { end } = await fireWith(dir, owner, [acceptedRelease()]);
  t.deepEqual(end, { kind: 'fired', reason: 'the parent is gone', failed: false });
  t.is(store.readPlug()!.state, 'released');
  t.deepEqual(store.readLeases()?.leases, []);
  t.is(processStartTime(owner), undefined, 'the owner is gone');
});

/** A manual plug's arm line (untilDeadline, lease abcdef0123456789) for a watchdog of `owner` in `dir`. */
function manualArm(owner: number, dir: string, deadline: number): string {
  return JSON.stringify({
    op: 'arm',
    ownerPid: owner,
    stateDir: dir,
    deadline,
    release: [acceptedRelease()],
    leaseId: 'abcdef0123456789',
    dev: 'lo',
    untilDeadline: true,
  });
}

test("a manual plug's watchdog (untilDeadline): the end of its input does not make it act; the deadline does", async (t) => {
  const { dir, store, owner } = orphanedPlug(Date.now());
  const lines: string[] = [];
  let resolveEnd: (e: WatchdogEnd) => void = () => {};
  const ended = new Promise<WatchdogEnd>((r) => (resolveEnd = r));
  let endedEarly = false;
  const w = new WatchdogChild({ report: (l) => lines.push(l), onEnd: (e) => resolveEnd(e) });
  const deadline = Date.now() + 300;
  w.line(manualArm(owner, dir, deadline));
  w.inputEnded(); // plug exited
  void ended.then(() => (endedEarly = Date.now() < deadline));
  const end = await ended;
  t.false(endedEarly, 'it did not act before the deadline');
  t.deepEqual(end, { kind: 'fired', reason: 'max-hold deadline passed', failed: false });
  t.is(store.readPlug()!.state, 'released');
});

// Issue #19, the attack's MEDIUM 3: a manual plug's watchdog lived on to its deadline after a manual release, so a
// stale copy of its lease put back then named a live watchdog. It now ends once its lease, seen, is gone.
test("a manual plug's watchdog ends quietly once a manual release broke its lease (not before its lease was first seen)", async (t) => {
  const now = Date.now();
  const { dir, store, owner } = orphanedPlug(now);
  const leases = store.readLeases()!;
  store.writeLeases({ version: 1, leases: [] }); // the arm comes before the plug takes its lease
  let end: WatchdogEnd | undefined;
  const w = new WatchdogChild({ report: () => {}, onEnd: (e) => (end = e) });
  w.line(manualArm(owner, dir, now + 60_000));
  w.inputEnded(); // plug exited
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  await sleep(3 * MANUAL_LEASE_POLL_MS);
  t.is(end, undefined, 'its lease not yet taken: it waits');
  store.writeLeases(leases); // the plug took its lease
  await sleep(3 * MANUAL_LEASE_POLL_MS);
  t.is(end, undefined, 'its lease recorded: it holds on');
  store.writeLeases({ version: 1, leases: [] }); // a manual release broke it
  for (let i = 0; i < 40 && end === undefined; i++) await sleep(MANUAL_LEASE_POLL_MS);
  t.deepEqual(end, { kind: 'done' }, 'ended, sending nothing');
  t.is(store.readPlug()!.state, 'buffering', 'wrote nothing (the release records its own)');
});

test("regression: a manual plug's watchdog ends too when the release came before its first poll saw the lease (it lived to the deadline, and a stale copy of its lease held SYNs)", async (t) => {
  const now = Date.now();
  const { dir, store, owner } = orphanedPlug(now);
  let end: WatchdogEnd | undefined;
  const w = new WatchdogChild({ report: () => {}, onEnd: (e) => (end = e) });
  w.line(manualArm(owner, dir, now + 60_000));
  w.inputEnded(); // plug exited
  // a manual release at once: the lease gone and plug.json released, before any poll
  store.writeLeases({ version: 1, leases: [] });
  store.writePlug({ ...store.readPlug()!, state: 'released', releasedAt: Date.now() });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  for (let i = 0; i < 40 && end === undefined; i++) await sleep(MANUAL_LEASE_POLL_MS);
  t.deepEqual(end, { kind: 'done' }, 'ended, sending nothing');
});

test('without untilDeadline (protect), the end of input is the owner gone: it acts at once', async (t) => {
  const { dir, owner } = orphanedPlug(Date.now());
  let resolveEnd: (e: WatchdogEnd) => void = () => {};
  const ended = new Promise<WatchdogEnd>((r) => (resolveEnd = r));
  const w = new WatchdogChild({ report: () => {}, onEnd: (e) => resolveEnd(e) });
  w.line(
    JSON.stringify({
      op: 'arm',
      ownerPid: owner,
      stateDir: dir,
      deadline: Date.now() + 600_000,
      release: [acceptedRelease()],
      leaseId: 'abcdef0123456789',
      dev: 'lo',
    }),
  );
  w.inputEnded();
  t.like(await ended, { kind: 'fired', reason: 'synplug protect ended without releasing (killed?)' });
});

/** A protect's watchdog whose input ends (the protect killed): resolves when it ended. */
async function ownerKilled(dir: string, owner: number, steps: WatchdogStep[]): Promise<{ end: WatchdogEnd; lines: string[] }> {
  const lines: string[] = [];
  const ended = new Promise<WatchdogEnd>((resolve) => {
    const w = new WatchdogChild({ report: (l) => lines.push(l), onEnd: resolve });
    w.line(
      JSON.stringify({ op: 'arm', ownerPid: owner, stateDir: dir, deadline: Date.now() + 60_000, release: steps, leaseId: 'abcdef0123456789', dev: 'lo' }),
    );
    w.inputEnded();
  });
  return { end: await ended, lines };
}

test('a protect killed during its hold: its watchdog writes its history entry (killed, what it held, since when); none after a release that failed', async (t) => {
  const since = Date.now() - 1500;
  const { dir, owner } = orphanedPlug(since);
  const { end, lines } = await ownerKilled(dir, owner, [acceptedRelease()]);
  t.deepEqual(end, { kind: 'fired', reason: 'synplug protect ended without releasing (killed?)', failed: false });
  t.deepEqual(lines, ['synplug protect ended without releasing (killed?); released the plug']);
  const h = readHistory(dir);
  t.is(h.length, 1);
  t.like(h[0], { id: 1, command: 'protect', start: new Date(since).toISOString(), holds: ['local'], exitCode: -1, killed: true });
  t.true(h[0].report.holdMs >= 1500, String(h[0].report.holdMs));
  t.is(h[0].report.lossless, null, 'nothing was counted');
  t.deepEqual(
    h[0].report,
    unwatchedReport({ heldSyns: 0, holdMs: h[0].report.holdMs, dropped: null }, h[0].report.uncounted![0]),
    "an unwatched hold's report",
  );
  t.regex(
    formatHistoryEntry(h[0]),
    /^#1 ended \S+ protect \(local\)(?: \(started \S+\))?: held \d+\.\d ms, SYNs not counted; KILLED during the hold; not fully counted: .*its watchdog released it/,
  );

  const failing = orphanedPlug(since);
  const f = await ownerKilled(failing.dir, failing.owner, [refusedRelease()]);
  t.true(f.end.kind === 'fired' && f.end.failed);
  t.deepEqual(readHistory(failing.dir), [], 'no entry while the hold may still hold (the next release writes its own)');
});
