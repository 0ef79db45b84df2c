/**
 * The watchdog's own side (the child {@link startWatchdog} spawns), as a
 * library: the process entry point (src/cli/bin/watchdog-main.ts) only wires
 * it to stdin, stderr, signals and the exit status. Started by `protect`
 * before it plugs, in its own session so that terminal signals aimed at
 * `protect` do not reach it. It opens its netlink sockets, says `ready`, and
 * waits:
 *
 * - `{"op":"arm", ...}` on stdin: the release messages (pre-encoded by the
 *   parent), the owner pid, the deadline and the state directory;
 * - `{"op":"done"}`: the parent released; exit quietly; so too a manual
 *   plug's watchdog once a manual `release` broke its lease (its lease is
 *   then no longer recorded: {@link MANUAL_LEASE_POLL_MS});
 * - end of stdin without `done` (the parent died, even by SIGKILL; not
 *   for an arm with `untilDeadline`, a manual plug's, whose parent exits at
 *   once) or the deadline passing: drop the owner's lease (leases.ts) and, when no other
 *   live lease holds the plug, send the release messages at once and mark
 *   plug.json released, only once they succeeded; then exit. If the lease
 *   bookkeeping fails, it releases anyway. A release that fails is never
 *   recorded as released: plug.json keeps saying buffering (with
 *   `releaseFailedAt`), and the next command's stale-plug recovery releases it.
 *
 * @module
 */
import { NetlinkConnection } from '../netlink/connection.js';
import { NETLINK_NETFILTER, NETLINK_ROUTE } from '../netlink/message.js';
import { nothingQueuedWithin } from '../netlink/nfqueue.js';
import { defaultNetns } from '../netlink/netns.js';
import { pinStateDir, StateDirSwappedError } from './state-fs.js';
import { StateStore, type Lease } from './state.js';
import { isReleaseStep, type WatchdogArm, type WatchdogStep } from './watchdog.js';
import { deadProtectLeases, dropLease, leaseLive, recordedLeases, withLeaseLock } from './leases.js';
import { killedProtectEntry, maxHoldPlugEntry, recordHistory, recordKilledProtects } from './history.js';
import { releaseThroughHolder } from './leases-holder.js';

/**
 * How often a manual plug's watchdog looks whether its lease is still
 * recorded, ms: once a manual `release` broke it, the watchdog ends (the
 * release let the hold go), so a stale copy of the lease put back into the
 * directory names a process that is gone, and holds nothing (leases.ts).
 */
export const MANUAL_LEASE_POLL_MS = 250;

/** The reason the watchdog acts when its parent's input ends without `done`. */
const OWNER_DIED = 'synplug protect ended without releasing (killed?)';

/** A release step failed (each reported as it failed): nothing may say released. */
class ReleaseFailed extends Error {
  constructor() {
    super('release failed');
  }
}

/**
 * How a watchdog's work ended (what {@link WatchdogChild}'s `onEnd` receives).
 * - `done`: the parent said `done` (it released, or never plugged), or a manual plug's lease was broken (a manual
 *   `release` let the hold go); nothing was sent;
 * - `unarmed`: it was told to act (end of input, a signal) before any `arm`; nothing was sent;
 * - `fired`: it acted for `reason`; `failed` is true when a release step failed
 *   (the plug may still hold: the user must run `synplug release`).
 */
export type WatchdogEnd = { kind: 'done' } | { kind: 'unarmed' } | { kind: 'fired'; reason: string; failed: boolean };

/** Where a {@link WatchdogChild} reports (the entry point prints these on stderr and exits). */
export interface WatchdogChildOptions {
  /** one line for the user, without a prefix or newline (a step that failed, the outcome) */
  report: (line: string) => void;
  /**
   * Called once, synchronously, when the watchdog's work is over; its sockets
   * are closed by then and every later input is ignored. The process should
   * end at once (a `done` may arrive while a release is under way: the parent
   * released, so the watchdog stops there).
   */
  onEnd: (end: WatchdogEnd) => void;
}

/**
 * The watchdog's state machine: its two netlink sockets, the arm it was
 * given, its deadline timer. Feed it the parent's lines ({@link line}), the
 * end of input and signals ({@link fire}); it reports through its options and
 * never prints or exits itself.
 */
export class WatchdogChild {
  private readonly conns = new Map<number, NetlinkConnection>();
  private armed: WatchdogArm | undefined;
  private finished = false;
  private ended = false;
  private timer: NodeJS.Timeout | undefined;
  private leasePoll: NodeJS.Timeout | undefined;

  /**
   * Open both sockets (NETLINK_ROUTE for the plug release, NETLINK_NETFILTER
   * for the disarm) in the default namespace (the `SYNPLUG_NETNS` the parent passed).
   * @throws {NetlinkError} a socket cannot be opened (whatever {@link NetlinkConnection.open} throws)
   */
  constructor(private readonly options: WatchdogChildOptions) {
    this.conn(NETLINK_ROUTE);
    this.conn(NETLINK_NETFILTER);
  }

  private conn(protocol: number): NetlinkConnection {
    let c = this.conns.get(protocol);
    if (!c) {
      c = NetlinkConnection.open(protocol, { timeoutMs: 2000 });
      this.conns.set(protocol, c);
    }
    return c;
  }

  /**
   * One line from the parent (JSON): `{"op":"arm", ...}` arms it (a later arm
   * replaces the earlier one and its deadline), `{"op":"done"}` ends it
   * quietly; anything else is ignored.
   */
  line(text: string): void {
    if (this.ended) return;
    let msg: { op: string } & Partial<WatchdogArm>;
    try {
      msg = JSON.parse(text);
    } catch {
      return;
    }
    if (msg.op === 'arm') {
      const armed = msg as WatchdogArm;
      this.armed = armed;
      // The directory its owner pinned: from now on its path must name that one (state-fs.ts).
      pinStateDir(armed.stateDir, armed.stateDirId);
      if (this.timer) clearTimeout(this.timer);
      this.timer = setTimeout(
        () => {
          // Timers run before the event loop reads stdin: a `done` the parent
          // already wrote is read first (poll phase), then this (check phase).
          setImmediate(() => {
            void this.fire('max-hold deadline passed');
          });
        },
        Math.max(0, armed.deadline - Date.now()),
      );
      if (this.leasePoll) clearInterval(this.leasePoll);
      if (armed.untilDeadline && armed.leaseId !== undefined) this.leasePoll = this.watchLease(armed.stateDir, armed.leaseId);
    } else if (msg.op === 'done') {
      this.finished = true;
      this.end({ kind: 'done' });
    }
  }

  /**
   * A manual plug's watchdog: every {@link MANUAL_LEASE_POLL_MS}, once its
   * lease has been seen in leases.json, or plug.json says released since the
   * arm (a release before the first poll), its absence means a manual
   * `release` broke it (and let the hold go): end quietly. An unreadable file changes
   * nothing (the deadline still acts).
   */
  private watchLease(stateDir: string, leaseId: string): NodeJS.Timeout {
    const store = new StateStore(stateDir);
    const armedAt = Date.now();
    let seen = false;
    return setInterval(() => {
      if (this.finished || this.ended) return;
      let recorded: boolean;
      let releasedSince: boolean;
      try {
        recorded = store.readLeases()?.leases.some((l) => l.id === leaseId) ?? false;
        // a release that came before the first poll saw the lease (plug, then release at once): plug.json says so
        const plug = recorded ? undefined : store.readPlug();
        releasedSince = plug?.state === 'released' && (plug.releasedAt ?? 0) >= armedAt;
      } catch {
        return;
      }
      if (recorded) seen = true;
      else if (seen || releasedSince) {
        this.finished = true;
        this.end({ kind: 'done' });
      }
    }, MANUAL_LEASE_POLL_MS);
  }

  /**
   * The parent's side of the input ended: its death (act now), unless the
   * arm said `untilDeadline` (a manual plug, which exits at once): then it
   * acts only at the deadline.
   */
  inputEnded(): void {
    if (this.armed?.untilDeadline) return;
    void this.fire(OWNER_DIED);
  }

  /**
   * Act now, for `reason` (the end of input, the deadline, SIGTERM): unarmed,
   * end at once; armed, drop the owner's lease and release when no other live
   * lease holds the plug, then end. Only the first call acts.
   * @returns when the work is over (the outcome goes to `onEnd`); never rejects
   */
  async fire(reason: string): Promise<void> {
    if (this.finished || this.ended) return;
    this.finished = true;
    if (this.timer) clearTimeout(this.timer);
    if (!this.armed) {
      this.end({ kind: 'unarmed' });
      return;
    }
    const a = this.armed;
    const report = this.options.report;
    // The release lets what is held go (every plug, the queue); the rest (the marking element) is the disarm.
    const releaseSteps = a.release.filter(isReleaseStep);
    const disarmSteps = a.release.filter((st) => !isReleaseStep(st));
    let failed = false;
    const runSteps = async (steps: WatchdogStep[]) => {
      for (const step of steps) {
        try {
          await this.send(step);
        } catch (e) {
          failed = true;
          report(`${step.what} failed: ${(e as Error).message}`);
        }
      }
    };
    // A step that waits until nothing is queued (a base chain's removal) runs after the lease lock is let go: the
    // queue's holder takes that lock to drop the dead owner's lease before it releases what is queued.
    const waiting = disarmSteps.filter((st) => st.whenNothingQueuedMs !== undefined);
    let disarmed = false;
    const disarm = async () => {
      disarmed = true;
      await runSteps(disarmSteps.filter((st) => !waiting.includes(st)));
    };
    const store = new StateStore(a.stateDir);
    // A protect that died holding: its lease, for the history entry written once the hold is released.
    let killed: Lease | undefined;
    try {
      killed = reason === OWNER_DIED ? store.readLeases()?.leases.find((l) => l.id === a.leaseId && l.owner === 'protect') : undefined;
    } catch {
      killed = undefined; // a damaged file: the release goes on (below), without an entry
    }
    // A manual plug's lease at its deadline: its history line (no 'synplug release' ended it), once released.
    let expired: Lease | undefined;
    try {
      expired = a.untilDeadline ? store.readLeases()?.leases.find((l) => l.id === a.leaseId && l.owner === 'manual' && Date.now() >= l.deadline) : undefined;
    } catch {
      expired = undefined;
    }
    // A session of queue holds only has no plug message to send (its holder lets the queue go): say the hold.
    const what = releaseSteps.some((st) => st.messages.length > 0) ? 'plug' : 'hold';
    let outcome = `released the ${what}`;
    try {
      // The owner's lease goes; the plug is released only when no other live lease holds it.
      const r = await dropLease(
        store,
        {
          arm: async () => {},
          disarm,
          release: () => runSteps(releaseSteps),
        },
        a.leaseId,
        a.dev ?? 'lo',
        async () => {
          await runSteps(releaseSteps);
          if (failed) throw new ReleaseFailed();
          return 1;
        },
      );
      if (!r.released) outcome = `left the ${what} to ${r.remaining.length} other live holder(s)`;
      // Other protects' dead leases this drop removed (killed with their watchdogs): their lines are this watchdog's.
      for (const w of await recordKilledProtects(a.stateDir, deadProtectLeases(r.dead), () => "another protect's watchdog")) report(w);
      // The lease was gone under the lock: the queue's holder dropped it first (its protect's connection closed at the
      // same death), and the history line is the holder's, written by whoever drops the lease (leases-holder.ts).
      if (r.broken) killed = expired = undefined;
    } catch (e) {
      if (e instanceof ReleaseFailed) {
        // Nothing was recorded under the lock: plug.json still says buffering, for the next command's stale-plug recovery.
        this.recordFailure(store, a, report);
      } else if (e instanceof StateDirSwappedError && e.released) {
        // The state directory swapped: released all the same, nothing can be recorded (state-fs.ts).
        report(e.message);
      } else {
        // The bookkeeping failed (a damaged file, the lock): release anyway, holding nothing is the safe side.
        report(`${(e as Error).message}; releasing anyway`);
        failed = false;
        await runSteps(releaseSteps);
        await disarm();
        if (failed) this.recordFailure(store, a, report);
        else this.recordReleased(store, a, report);
      }
    }
    if (disarmed) {
      for (const step of waiting) {
        // Waited for outside the lock (above); removed under it, once more nothing queued and no live lease: a protect
        // that came meanwhile found the chain there and holds with it (its end removes it), or takes its lease after
        // this removal and adds the chain again under the same lock (session.arm).
        if (!(await nothingQueuedWithin(step.whenNothingQueuedMs ?? 0, defaultNetns(), step.whenQueueUnbound))) {
          report(`${step.what}: skipped, packets are still queued (removing a base chain would drop them); the next synplug command removes it`);
          continue;
        }
        await withLeaseLock(store, async () => {
          if (recordedLeases(store).some((l) => leaseLive(l))) return report(`${step.what}: kept, a new holder holds with it`);
          await runSteps([{ ...step, whenNothingQueuedMs: 0 }]);
        }).catch((e: unknown) => report(`${step.what}: ${(e as Error).message}; the next synplug command removes it`));
      }
    }
    if (killed && !failed) {
      const warning = await recordHistory(a.stateDir, killedProtectEntry(killed, Date.now()));
      if (warning) report(warning);
    }
    if (expired && !failed) {
      const warning = await recordHistory(a.stateDir, maxHoldPlugEntry(expired, Date.now(), 'its watchdog'));
      if (warning) report(warning);
    }
    if (this.ended) return;
    report(`${reason}; ${failed ? 'release FAILED (run synplug release)' : outcome}`);
    this.end({ kind: 'fired', reason, failed });
  }

  /** plug.json says released: only after a release that succeeded, and only for the owner's own plug. */
  private recordReleased(store: StateStore, a: WatchdogArm, report: (line: string) => void): void {
    try {
      const r = store.readPlug();
      if (r && r.state === 'buffering' && r.pid === a.ownerPid) store.writePlug({ ...r, state: 'released', releasedAt: Date.now() });
    } catch (e) {
      report((e as Error).message);
    }
  }

  /**
   * A release that failed: plug.json keeps saying buffering (so the next
   * command's stale-plug recovery releases it) and records when the
   * watchdog's release failed.
   */
  private recordFailure(store: StateStore, a: WatchdogArm, report: (line: string) => void): void {
    try {
      const r = store.readPlug();
      if (r && r.state === 'buffering' && r.pid === a.ownerPid) store.writePlug({ ...r, releaseFailedAt: Date.now() });
    } catch (e) {
      report((e as Error).message);
    }
  }

  private async send(step: WatchdogStep): Promise<void> {
    if (step.queueHolder !== undefined && this.armed) {
      const r = await releaseThroughHolder(this.armed.stateDir, step.queueHolder);
      if (r?.killed) this.options.report(`queue ${step.queueHolder}: ${r.killed}`);
      return;
    }
    if (step.messages.length === 0) return; // nothing of this kind to release (a session of queue holds only)
    if (step.whenNothingQueuedMs !== undefined && !(await nothingQueuedWithin(step.whenNothingQueuedMs, defaultNetns(), step.whenQueueUnbound))) {
      this.options.report(`${step.what}: skipped, packets are still queued (removing a base chain would drop them); the next synplug command removes it`);
      return;
    }
    let last: unknown;
    for (let attempt = 1; attempt <= 3; attempt++) {
      try {
        const res = await this.conn(step.protocol).exchange(
          step.messages.map((m) => ({ type: m.type, flags: m.flags, payload: Buffer.from(m.payload, 'hex') })),
        );
        const err = res.find((r) => r.error && !(step.ignoreErrno ?? []).includes(r.error.errno))?.error;
        if (err) throw err;
        return;
      } catch (e) {
        last = e;
      }
    }
    throw last;
  }

  private end(e: WatchdogEnd): void {
    if (this.ended) return;
    this.ended = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.leasePoll) clearInterval(this.leasePoll);
    for (const c of this.conns.values()) c.close();
    this.options.onEnd(e);
  }
}
