/**
 * The plug window (hold, gate, command, release): `protect`'s hot swap, in
 * two phases, over a session's holds whatever their kind.
 *
 * Phase one (nothing held yet, everything can still be refused):
 *   validate the arguments, resolve the command and the user, release a plug
 *   that an earlier run left buffering, check the setup, open the sockets,
 *   start the watchdog, snapshot listeners (`waitListen`), fork the command
 *   behind its gate.
 *
 * Phase two (the plug window, kept as short as we can make it):
 *   record "buffering", add the kernel-side dead man's switch (an nftables set
 *   element with a timeout of `maxHoldMs`), buffer the plug, open the gate;
 *   wait for the command (and the new listener), or the deadline; release,
 *   retrying; record "released"; remove the set element.
 *
 * The plug is released on every path: the command not found at exec, failing,
 * killed by a signal; synplug receiving SIGINT/SIGTERM (forwarded to the
 * command); an exception; synplug itself killed (the watchdog); a whole
 * process tree killed (the set element expires at the deadline).
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { SynplugError, UsageError } from '../netlink/errors.js';
import { InterruptedError } from './errors.js';
import { checkEntryOptions } from './config.js';
import { resolveCommand, lookupUser, startGated, type GatedCommand, type RunAsUser } from './command.js';
import { startWatchdog, WATCHDOG_GRACE_MS, type Watchdog } from './watchdog.js';
import { StateStore, processStartTime, type Lease } from './state.js';
import {
  deadProtectLeases,
  dropLease,
  leaseLive,
  newLeaseId,
  openLockFile,
  recordedLeases,
  takeLease,
  unprepare,
  withLeaseLock,
  type TakeResult,
} from './leases.js';
import { recordKilledProtects } from './history.js';
import { closeSync, fstatSync } from 'node:fs';
import { runPrecheck } from './precheck.js';
import { closingInodes, handedOverInode, holderPids } from './listen-holders.js';
import { REPORT_WINDOW_MS, armReport, retireReportChain, type HeldTraffic } from './report.js';
import { StateDirSwappedError } from './state-fs.js';
import type { ListenTarget, Listener, PlugStats, ProtectOptions, ProtectResult, ProtectSession, ReportCounters } from './types.js';
import { devicesOfHolds } from './modes/index.js';

export type { ListenTarget, ProtectOptions, ProtectResult, ProtectSession };

const RELEASE_ATTEMPTS = 5;

/**
 * How late a protect must come to its own release, in ms after its max-hold deadline, when its watchdog or the
 * queue's holder dropped its lease at that deadline, before it says how late it was. Those timers and protect's own
 * fire at the same deadline, and which of them takes the lease lock first is scheduling: a few ms, tens on a loaded
 * two-core host or a software-emulated VM. The hold was let go at the deadline either way, so below this the max-hold
 * line alone says what happened; a quarter of a second is well past that jitter (protect itself was stalled: a
 * loaded host, a stopped process), worth saying.
 */
export const LATE_RELEASE_MS = 250;

function definedPidStart(): { pidStart?: number } {
  const t = processStartTime(process.pid);
  return t === undefined ? {} : { pidStart: t };
}

/**
 * Phase one's warnings for `--wait-listen` (on the notice channel; nothing
 * is refused: {@link refuseForeignWaitListen} refused an address that is not
 * the namespace's own before, {@link refuseUnheldWaitListen} a port no hold holds): nothing listening on the target before the reload (the
 * hold then lasts until a new listening socket appears there, at most
 * max-hold: a wrong port holds until max-hold on every reload), or sockets
 * listening there whose holders this process cannot see (another user's
 * /proc/PID/fd without CAP_SYS_PTRACE, another PID namespace: a hand-over
 * cannot be seen, so a server that keeps its socket holds until max-hold);
 * first, a held port at an address no hold set up holds (its clients are not
 * held; a port no hold holds was refused before, {@link refuseUnheldWaitListen}).
 */
async function waitListenNotices(
  session: ProtectSession,
  t: ListenTarget,
  listeningNow: number,
  holdersSeen: number,
  maxHoldMs: number,
  notice: (line: string) => void,
): Promise<void> {
  const where = waitListenWhere(t);
  const held = session.heldTraffic?.() ?? [];
  const covers = (h: HeldTraffic) =>
    (h.ports.length === 0 || h.ports.includes(t.port)) && (h.addrs.length === 0 || t.address === undefined || h.addrs.includes(t.address));
  if (held.length && !held.some(covers)) {
    notice(
      `--wait-listen ${where}: no hold set up holds new connections there (what is held: ${heldWhat(held)}): the reload's clients there are not held, and protect waits for a listener on a port it does not hold; give --wait-listen the held port (and address) the server listens on`,
    );
  }
  if (listeningNow === 0)
    notice(
      `--wait-listen ${where}: nothing listens there before the reload; protect will hold new connections until a new listening socket appears there, at most --max-hold (${maxHoldMs} ms)`,
    );
  else if (holdersSeen === 0)
    notice(
      `--wait-listen ${where}: ${listeningNow} socket(s) listen there, but no process holding them can be seen in /proc (another user's processes need CAP_SYS_PTRACE; another PID namespace's are not shown): a reload that keeps its socket cannot be seen and holds until --max-hold (${maxHoldMs} ms); a new listening socket still ends the wait`,
    );
}

/** What the holds hold, as the wait-listen messages name it: `port 80, 8081; every port to 169.254.255.254`. */
function heldWhat(held: HeldTraffic[]): string {
  return held.map((h) => `${h.ports.length ? `port ${h.ports.join(', ')}` : 'every port'}${h.addrs.length ? ` to ${h.addrs.join(', ')}` : ''}`).join('; ');
}

/**
 * Refuse a `--wait-listen` port that no hold set up holds (a hold of every
 * port holds it): its clients are not held, and the wait would be for a
 * listener on a port nobody waits for, so a server that never listens there
 * would hold every held port until --max-hold on each reload. Asked before
 * the --check command runs and before anything is held.
 * @throws {UsageError} no hold holds the port (`usage`), naming the held ports; nothing was held
 */
function refuseUnheldWaitListen(session: ProtectSession, t: ListenTarget): void {
  const held = session.heldTraffic?.() ?? [];
  if (!held.length || held.some((h) => h.ports.length === 0 || h.ports.includes(t.port))) return;
  const ports = [...new Set(held.flatMap((h) => h.ports))].sort((a, b) => a - b);
  throw new UsageError(
    `--wait-listen ${waitListenWhere(t)}: no hold set up here holds port ${t.port} (what is held: ${heldWhat(held)}), so its clients are not held and protect would wait for a listener there while holding the held ports until --max-hold; give --wait-listen the held port the server listens on (e.g. --wait-listen ${ports[0]}), or set up a hold of port ${t.port}. Nothing was held and the command was NOT run`,
  );
}

/** How `--wait-listen` names its target: `ADDR:PORT`, `[ADDR6]:PORT`, `port PORT`. */
function waitListenWhere(t: ListenTarget): string {
  return t.address === undefined ? `port ${t.port}` : t.address.includes(':') ? `[${t.address}]:${t.port}` : `${t.address}:${t.port}`;
}

/**
 * Refuse a `--wait-listen` address that is not one of the namespace's own:
 * no server can listen there, so the hold would last until --max-hold on
 * every reload (a typo would stall every held client). Asked before the
 * --check command runs and before anything is held.
 * @throws {UsageError} the address is not the namespace's (`usage`); nothing was held
 */
async function refuseForeignWaitListen(session: ProtectSession, t: ListenTarget): Promise<void> {
  if (t.address === undefined || !session.isLocalAddress || (await session.isLocalAddress(t.address)) !== false) return;
  throw new UsageError(
    `--wait-listen ${waitListenWhere(t)}: ${t.address} is not an address of this network namespace, so no server can listen there and every held client would wait until --max-hold; give the address the server listens on (or only the port: --wait-listen PORT). Nothing was held and the command was NOT run`,
  );
}

/**
 * Run a command with new connections held in the plug.
 * @param session an open session on a set-up guard (a `GuardSession`), phase-one checks done
 * @param early a watchdog already starting (started alongside the phase-one checks); one is started otherwise
 * @param latch a signal caught since protect started ({@link signalLatch}): one caught before the command started ends protect
 * @throws {UsageError} empty command, bad maxHoldMs, bad waitListen, a waitListen port no hold holds or address not the namespace's (usage)
 * @throws {SockDiagUnavailableError} waitListen, and the kernel's TCP socket diagnostics cannot be used (`missing-module`); nothing plugged
 * @throws {CommandError} command not found (`command-not-found`) or not executable (`command-not-executable`), before anything is plugged
 * @throws {InterruptedError} a signal before the command started (`interrupted`): what was held released, the command not run
 * @throws {SynplugError} the plug could not be set (the command is not run) or released
 */
export async function runProtected(
  session: ProtectSession,
  opts: ProtectOptions,
  early?: Promise<Watchdog>,
  latch?: { readonly signal: NodeJS.Signals | undefined },
): Promise<ProtectResult> {
  try {
    return await protectInner(session, opts, early, latch);
  } finally {
    // A watchdog started early but never reached (refused input): let it go.
    early?.then(
      (w) => w.done(),
      () => {},
    );
  }
}

/**
 * The error that ended protect before its command started, saying that the command was not run where its own message
 * does not (a state directory swapped: {@link StateDirSwappedError.commandNotRun}).
 */
function commandNotRun(e: unknown): unknown {
  return e instanceof StateDirSwappedError ? e.commandNotRun() : e;
}

/** The error of a signal before the command started: what was done, in one line. */
function interrupted(sig: NodeJS.Signals, held: boolean): InterruptedError {
  return new InterruptedError(
    sig,
    `interrupted by ${sig} before the command started: ${held ? 'the hold was released at once' : 'nothing was held'}; the command was NOT run`,
  );
}

async function protectInner(
  session: ProtectSession,
  opts: ProtectOptions,
  early?: Promise<Watchdog>,
  latch?: { readonly signal: NodeJS.Signals | undefined },
): Promise<ProtectResult> {
  checkEntryOptions('protect', opts);
  const notice = opts.onNotice ?? (() => {});
  const maxHoldMs = opts.maxHoldMs ?? 10_000;
  if (!Number.isFinite(maxHoldMs) || maxHoldMs < 10) throw new UsageError('max-hold (--max-hold) must be at least 10 ms');
  if (!Array.isArray(opts.command) || !opts.command.every((a) => typeof a === 'string')) throw new UsageError('command must be an array of strings');
  if (opts.waitListen && !(Number.isInteger(opts.waitListen.port) && opts.waitListen.port >= 1 && opts.waitListen.port <= 65535)) {
    throw new UsageError(`--wait-listen: port must be 1-65535 (got ${opts.waitListen.port})`);
  }
  const resolved = resolveCommand(opts.command);
  const user: RunAsUser | undefined = opts.user !== undefined ? lookupUser(opts.user) : undefined;
  if (opts.waitListen) {
    refuseUnheldWaitListen(session, opts.waitListen);
    await refuseForeignWaitListen(session, opts.waitListen);
  }

  // ---- phase one -------------------------------------------------------
  // --check: run to completion before anything is held; a failure ends protect here (precheck.ts).
  const checked =
    opts.check !== undefined
      ? await runPrecheck(opts.check, {
          user,
          ...(opts.onCheckOutput && { output: opts.onCheckOutput }),
          ...(opts.checkTimeoutMs !== undefined && { timeoutMs: opts.checkTimeoutMs }),
        })
      : undefined;
  const watchdog: Watchdog = await (early ?? startWatchdog());
  let gated: GatedCommand | undefined;
  const store = new StateStore(session.config.stateDir);
  let before: PlugStats;
  let listenersBefore: Set<number> | undefined;
  let holdersBefore: Set<number> | undefined;
  try {
    // The armed pieces first (what steers SYNs into the plug, the queue's chain), then the counters and the warm-up.
    await session.armPieces?.();
    before = await session.plugStats();
    // Warm-up: run the release path once before the window, so that its code is
    // compiled and its socket hot when it counts; only when nobody holds the
    // plug (under the lease lock: another protect's hold must not be released).
    await withLeaseLock(store, async () => {
      if (!recordedLeases(store).some((l) => leaseLive(l))) await session.release();
    });
    if (opts.waitListen) listenersBefore = new Set((await session.listeners(opts.waitListen)).map((l) => l.inode));
    if (listenersBefore) holdersBefore = holderPids(listenersBefore);
    if (opts.waitListen) await waitListenNotices(session, opts.waitListen, listenersBefore!.size, holdersBefore!.size, maxHoldMs, notice);
    // After the warm-up release (which would let a prepared queue holder go): --max-hold then counts from the hold.
    await session.prepare?.();
    if (latch?.signal) throw interrupted(latch.signal, false);
    gated = await startGated([resolved, ...opts.command.slice(1)], { user });
  } catch (e) {
    watchdog.done();
    await unprepare(store, session);
    throw commandNotRun(e);
  }

  // Signals: before the gate opens they abort; after, they go to the command.
  let gateOpen = false;
  let aborted: NodeJS.Signals | undefined = latch?.signal;
  // During the hold a signal is the command's; the first is said (a command that ignores it would otherwise hold, in
  // silence, until --max-hold), a second one releases the hold at once: protect still waits for the command.
  let signalsInHold = 0;
  let askRelease: () => void = () => {};
  const releaseAsked = new Promise<'signal'>((r) => {
    askRelease = () => r('signal');
  });
  const onSignal = (sig: NodeJS.Signals) => {
    if (!gateOpen) {
      aborted ??= sig;
      return;
    }
    try {
      gated!.child.kill(sig);
    } catch {
      /* already gone */
    }
    if (released || deadlineReached) return;
    signalsInHold += 1;
    if (signalsInHold === 1)
      notice(
        `${sig} passed to the command; the hold ends when it exits${opts.waitListen ? ' (and a new listener is seen)' : ''}, or at --max-hold in ${Math.max(0, Math.ceil((deadline - Date.now()) / 1000))} s; a second ${sig} releases the hold now`,
      );
    else if (signalsInHold === 2) {
      notice(`${sig} again: releasing the hold now; protect still waits for the command to exit (it got the signal too)`);
      askRelease();
    }
  };
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];
  for (const s of signals) process.on(s, onSignal);

  // The reload's report: armed before the hold (and kept once the lease is taken), read after the release (report.ts).
  const counters = session.reportCounters ?? REPORT_COUNTERS;
  // From here to the window's try, a failure (the state directory swapped: the lease lock's open refuses it) must not
  // leave the gate waiting: the command is not run, the gate aborted, what was prepared let go (a gate left open kept
  // Node waiting for its child, past any signal).
  let counting: Awaited<ReturnType<ReportCounters['arm']>>;
  let armed: typeof counting | undefined;
  let lockFd: number;
  const now = Date.now();
  const deadline = now + maxHoldMs;
  const lease: Lease = {
    id: newLeaseId(),
    owner: 'protect',
    pid: process.pid,
    ...definedPidStart(),
    watchdogPid: watchdog.pid,
    command: opts.command,
    holds: [...(session.holdIds ?? ['local'])],
    since: now,
    deadline,
  };
  // plug.json's device: the held holds' (an inbound hold's DEV, not the local hold's lo)
  const dev = devicesOfHolds(lease.holds, session.config.dev);
  try {
    armed = await counters.arm(session.heldTraffic?.() ?? [], session.config.stateDir);
    counting = armed;
    watchdog.arm({
      ownerPid: process.pid,
      stateDir: session.config.stateDir,
      deadline: deadline + WATCHDOG_GRACE_MS,
      release: session.releaseSteps(),
      leaseId: lease.id,
      dev,
    });
    // The lease lock's file, opened before the window: the release inside it only flocks.
    lockFd = openLockFile(store);
  } catch (e) {
    for (const s of signals) process.off(s, onSignal);
    gated.abort();
    watchdog.done();
    armed?.abandon();
    if (armed) await retire(counters, store, notice).catch((e2: unknown) => notice((e2 as Error).message));
    await unprepare(store, session);
    throw commandNotRun(e);
  }
  let plugged = false;
  let released = false;
  let releasedHold = false;
  let leaseBroken = false as boolean;
  /** a teardown broke the lease and removed the records (DropResult.tornDown) */
  let tornDown = false as boolean;
  /** the lease was dropped at its own deadline (this protect late to its release): the hold was let go at the max-hold then */
  let releasedAtDeadline = false as boolean;
  let taken: TakeResult | undefined;
  let leftTo = 0;
  /** the hold was left to another protect, whose own end (its last reading done) removes the report's chain */
  let leftToProtect = false;
  let overlapped = false;
  let releaseAttempts = 0;
  let tPlugAck = 0;
  let tHoldAck = 0;
  let tGate = 0;
  let tRelease = 0;
  let maxHoldReached = false;
  /** the --max-hold deadline came before the command was done (the hold may have ended before, by someone else) */
  let deadlineReached = false;
  let exit: { code: number; signal: NodeJS.Signals | null; at: bigint } | undefined;
  let exitSeenAt = 0;
  /** when synplug knew it could release: the command's exit, or with --wait-listen the new listener seen */
  let readyAt = 0;
  let newListener: ProtectResult['newListener'];
  const waitState: { found?: Listener; closing: number[] } = { closing: [] };
  let releasedCounters: PlugStats | undefined;

  /** This protect's lease is no longer recorded (a manual release or a teardown broke it); checked at most every 20 ms. */
  let goneCheckedAt = 0;
  let gone = false;
  const leaseGone = (): boolean => {
    if (gone || Date.now() - goneCheckedAt < 20) return gone;
    goneCheckedAt = Date.now();
    try {
      gone = !recordedLeases(store).some((l) => l.id === lease.id);
    } catch {
      /* unreadable now: the drop at the end says */
    }
    return gone;
  };

  /** Release the plugs, retrying; resolves with the attempts it took. */
  const releasePlugs = async (): Promise<number> => {
    let lastErr: unknown;
    for (let i = 1; i <= RELEASE_ATTEMPTS; i++) {
      try {
        await session.release({ afterwards: false });
        tRelease = performance.now();
        // Released: the watchdog has nothing left to do; tell it before the
        // bookkeeping, which must not let it reach its own deadline (WATCHDOG_GRACE_MS later).
        watchdog.done();
        await session.afterRelease?.();
        // before the armed pieces go (the bookkeeping after this removes the local plug hold's plug when no lease is left)
        releasedCounters = await session.releasedStats?.();
        return i;
      } catch (e) {
        lastErr = e;
        notice(`release attempt ${i} failed: ${(e as Error).message}`);
        await new Promise((r) => setTimeout(r, 10 * i));
      }
    }
    throw new SynplugError(
      `could not release the hold after ${RELEASE_ATTEMPTS} attempts: ${(lastErr as Error).message}; the watchdog will retry, or run 'synplug release'`,
      'kernel',
    );
  };

  /** Drop this protect's lease; the plugs are released when no other live lease holds them. */
  const release = async (): Promise<void> => {
    if (released) return;
    // another holder wrote the lease record since this lease was taken: it may count with the report's chain still
    overlapped = taken?.aloneStamp === undefined || store.leasesStamp() !== taken.aloneStamp;
    const r = await dropLease(store, session, lease.id, dev, releasePlugs, notice, { aloneStamp: taken?.aloneStamp, lockFd }).catch((e: unknown) => {
      // The state directory swapped: the hold was released all the same; the refusal ends this protect.
      if (e instanceof StateDirSwappedError && e.released) {
        released = true;
        watchdog.done();
      }
      throw e;
    });
    if (!r.released) {
      tRelease = performance.now();
      leftTo = r.remaining.length;
      leftToProtect = r.remaining.some((l) => l.owner === 'protect');
      notice(`left the hold to ${r.remaining.length} other holder(s) (pid ${r.remaining.map((l) => l.pid).join(', ')}); the last one releases it`);
    }
    releaseAttempts = r.releaseAttempts;
    counting.released();
    // A lease a manual release broke: that release let the plug go, not this one.
    releasedHold = r.released && !r.broken;
    // A lease whose take was refused (a teardown removed the hold as this protect started: the error that ends it says
    // so, the one message about it) was never recorded, so never broken: nothing more is said of it here.
    const broken = r.broken === true && taken !== undefined;
    // Gone from the record while a holder of before it still holds: no manual release (it breaks every lease) nor
    // teardown ended this hold; it was left to them, as at any end that is not the last.
    const olderHolds = broken && !r.released ? r.remaining.filter((l) => l.since <= lease.since) : [];
    if (olderHolds.length > 0)
      notice(
        `this protect's lease was no longer recorded when it ended, while holder(s) of before it still hold (pid ${olderHolds.map((l) => l.pid).join(', ')}): no release ended the hold; it stays with them`,
      );
    else if (broken) {
      // The hold ended when that release let it go, not now; a teardown's records are gone with its time: it let the
      // hold go just before it removed the state files, the lease lock's among them (recordsRemovedAt).
      const at = r.brokenAt;
      const endedAt = at ?? (r.tornDown ? recordsRemovedAt(lockFd) : undefined);
      if (endedAt !== undefined && endedAt >= lease.since && endedAt <= Date.now()) tRelease = performance.now() - (Date.now() - endedAt);
      // Let go at or after this lease's own deadline: its watchdog or the queue's holder enforced the max-hold while this
      // protect was late to its own release (a loaded host); no manual release broke it.
      releasedAtDeadline = at !== undefined && at >= lease.deadline;
      leaseBroken = !releasedAtDeadline;
      tornDown = r.tornDown === true;
      const late = Date.now() - lease.deadline;
      // at its deadline by a hand only a little quicker than its own: the max-hold line alone says it (maxHoldNotice)
      if (!releasedAtDeadline || late >= LATE_RELEASE_MS)
        notice(
          releasedAtDeadline
            ? `this protect's lease was dropped at its max-hold deadline by its watchdog or the queue's holder, which released the hold then: this protect came to release it ${late} ms after that deadline (late: a loaded host?)`
            : tornDown
              ? `this protect's lease was already gone when it ended: a teardown broke it, released the hold and removed the records of ${store.dir}, where nothing is recorded again (no history line, no metrics)`
              : "this protect's lease was already gone when it ended: a manual 'synplug release' (or teardown) broke it, or its watchdog dropped it at the deadline, which released the hold then unless other holders remained",
        );
    }
    released = true;
    // Nothing is held for us any more: stop the watchdog now, not when the command
    // ends (after a max-hold release it may run long past the watchdog's own deadline).
    watchdog.done();
    // Protects killed with their watchdogs whose leases this one's take or drop removed (under the lock: nobody else
    // saw them): their history lines, once, written now that nothing waits on this protect.
    for (const w of await recordKilledProtects(store.dir, deadProtectLeases([...(taken?.dead ?? []), ...(r.dead ?? [])]))) notice(w);
  };

  /** Said when the max-hold ended the hold: what protect was still waiting for. */
  const maxHoldNotice = () =>
    notice(
      `max-hold of ${maxHoldMs} ms reached: ${releasedHold || releasedAtDeadline ? 'released the hold' : 'gave up this hold'} while ${
        !exit
          ? 'the command still runs'
          : waitState.found && waitState.closing.length > 0
            ? `waiting for ${waitState.closing.length} listening socket(s) of before the reload (inode ${waitState.closing.join(', ')}), held only by processes of before it, to close`
            : 'waiting for a new listener'
      }`,
    );

  try {
    // ---- phase two: the window ------------------------------------------
    taken = await takeLease(store, session, lease, dev);
    // With the lease recorded no other holder's end removes the counters' chain: re-made if one did meanwhile.
    await counting.kept();
    if (aborted) throw interrupted(aborted, false);
    plugged = true;
    await session.buffer();
    tHoldAck = performance.now();
    tPlugAck = performance.now();
    if (aborted) throw interrupted(aborted, true);
    gated.open();
    tGate = performance.now();
    gateOpen = true;
    gated.close();

    // Wait: the command's exit (+ the new listener), or the deadline.
    const holdLeft = Math.max(0, deadline - Date.now());
    let deadlineTimer: NodeJS.Timeout | undefined;
    const deadlineHit = new Promise<'deadline'>((r) => {
      deadlineTimer = setTimeout(() => r('deadline'), holdLeft);
    });
    const ready = (async () => {
      exit = await gated!.exited;
      exitSeenAt = performance.now();
      if (opts.waitListen && exit.code === 0) {
        // also stops when the lease is gone (a manual release or a teardown let the hold go): nothing left to release
        newListener = await waitForListener(
          session,
          opts.waitListen,
          listenersBefore!,
          () => released || deadlineReached || leaseGone(),
          holdersBefore,
          waitState,
        );
      }
      readyAt = performance.now();
      return 'ready' as const;
    })();
    const first = await Promise.race([ready, deadlineHit, releaseAsked]);
    clearTimeout(deadlineTimer);
    if (first === 'signal') {
      // a second signal during the hold: let the held clients go now, then wait for the command as ever
      await release();
      await ready;
    } else if (first === 'deadline') {
      deadlineReached = true;
      await release();
      // the deadline ended the hold only when no manual release or teardown had ended it before
      maxHoldReached = !leaseBroken && !tornDown;
      if (maxHoldReached) maxHoldNotice();
      await ready;
    } else {
      await release();
      // the lease dropped at its deadline by the watchdog or the queue's holder while this protect, late, still waited
      // (the listener wait stops once the lease is gone): the max-hold ended the hold, as at this protect's own deadline
      if (releasedAtDeadline) {
        deadlineReached = true;
        maxHoldReached = true;
        maxHoldNotice();
      }
    }
  } catch (e) {
    let err = e;
    if (plugged || !released) {
      try {
        await release();
      } catch (e2) {
        // the same refusal, now saying that the hold was released all the same: said once
        if (e instanceof StateDirSwappedError && e2 instanceof StateDirSwappedError) err = e2;
        else notice((e2 as Error).message);
      }
    }
    if (!gateOpen) gated.abort();
    counting.abandon();
    await retire(counters, store, notice);
    throw gateOpen ? err : commandNotRun(err);
  } finally {
    for (const s of signals) process.off(s, onSignal);
    if (released) watchdog.done();
    closeSync(lockFd);
  }

  const after = releasedCounters ?? (await session.plugStats().catch(() => before));
  for (const n of after.notes ?? []) notice(n);
  const before2 = before;
  const plugAckToCommandStartUs = Math.round((tGate - tPlugAck) * 1000);
  // The wait for the new listener is the server's time, not synplug's: counted apart (listenWaitUs).
  // null too when the hold was let go before the command's end (a manual release, a teardown): not synplug's time
  const commandExitToReleaseAckUs = readyAt && !maxHoldReached && tRelease >= readyAt ? Math.round((tRelease - readyAt) * 1000) : null;
  const listenWaitUs = opts.waitListen && exitSeenAt && readyAt && !maxHoldReached ? Math.round((readyAt - exitSeenAt) * 1000) : undefined;
  // From the hold's ack to the release, or to the hold's own end when it ended before (a queue's holder died).
  const heldUntil = after.holdEndedAt === undefined ? tRelease : Math.max(tHoldAck, Math.min(tRelease, after.holdEndedAt - performance.timeOrigin));
  const heldMs = Math.round((heldUntil - tHoldAck) * 1000) / 1000;
  // how the hold failed (a queue's holder died, its verdict refused): the report's `failed`, which its verdict names
  const report = await counting.finish({
    heldSyns: after.packets - before2.packets,
    holdMs: heldMs,
    // a queue's holder that died took its count of the SYNs it dropped with it: not counted (its `failed` says why)
    dropped: after.dropsLost ? null : after.drops - before2.drops,
    ...(after.failures?.length && { failed: after.failures }),
  });
  // The report's chain goes with the last protect out, once the others' readings are done: theirs end at most
  // REPORT_WINDOW_MS after their releases, which came before this one's.
  if (!leftToProtect) {
    if (overlapped) await new Promise((r) => setTimeout(r, Math.max(0, tRelease + REPORT_WINDOW_MS - performance.now())));
    await retire(counters, store, notice);
  }
  return {
    command: opts.command,
    exitCode: exit!.code,
    signal: exit!.signal,
    commandStartedAt: Math.round(performance.timeOrigin + tGate),
    report,
    maxHoldReached,
    bytesReleased: after.bytes - before2.bytes,
    backlogAfterRelease: after.qlen,
    overhead: {
      plugAckToCommandStartUs,
      commandExitToReleaseAckUs,
      ...(listenWaitUs !== undefined && { listenWaitUs }),
      totalUs: plugAckToCommandStartUs + (commandExitToReleaseAckUs ?? 0),
    },
    releaseAttempts,
    releasedHold,
    ...(!releasedHold && !leaseBroken && !releasedAtDeadline && { leftToHolders: leftTo }),
    ...(leaseBroken ? { leaseBroken: true } : {}),
    ...(tornDown ? { tornDown: true } : {}),
    ...(releasedAtDeadline && { releasedAtDeadline: true }),
    ...(opts.waitListen && { newListener: newListener ?? null }),
    ...(checked && { check: checked }),
    ...(session.holdKinds && { holds: session.holdKinds.map((h) => ({ ...h })) }),
  };
}

/**
 * When the lease lock's file, open as `fd`, was removed (a teardown's last
 * step, just after it let the holds go and removed their pieces): the
 * inode's change time once no name links it (unlink(2) sets it), ms since
 * the epoch; undefined while it is still linked, or when fstat fails.
 */
function recordsRemovedAt(fd: number): number | undefined {
  try {
    const st = fstatSync(fd);
    return st.nlink === 0 ? st.ctimeMs : undefined;
  } catch {
    return undefined;
  }
}

/** The reload report's kernel side of a session that gives none (a GuardSession): report.ts's, on this namespace's nftables. */
const REPORT_COUNTERS: ReportCounters = { arm: armReport, retire: retireReportChain };

/** After a protect's report: its counter chain goes when this was the last holder (report.ts); what stays is said. */
async function retire(counters: ReportCounters, store: StateStore, notice: (m: string) => void): Promise<void> {
  // the state directory swapped (state-fs.ts): said once, by the error that ends this protect; the chain goes as ever,
  // judged by the leases of the directory this protect started with (reached through its descriptor)
  const r = await counters.retire(pinnedIfSwapped(store)).catch((e: unknown) => {
    if (e instanceof StateDirSwappedError) return undefined;
    throw e;
  });
  if (r?.kept) notice(`kept ${r.kept}`);
}

/** The store itself; when its path was swapped (state-fs.ts), the store of the directory this process pinned, if any. */
function pinnedIfSwapped(store: StateStore): StateStore {
  try {
    store.checkDir();
    return store;
  } catch (e) {
    if (!(e instanceof StateDirSwappedError)) return store;
    try {
      return StateStore.pinnedOf(store.dir) ?? store;
    } catch {
      return store;
    }
  }
}

/**
 * Sleep-poll (never spin) for a listener that was not there before, or (a
 * server that keeps its sockets across the reload) for a socket that was
 * there taken over by a process outside `holdersBefore`; then, with
 * `holdersBefore`, until no socket of before that only processes of before
 * still hold is left (a socket the reload closes: a SYN released into it
 * would be reset; listen-holders.ts). The fd scans run every 20 ms at most
 * (and once at once when the listener is found); the polls sleep 1 ms for the
 * first 50 ms, then 5 ms, until `stop()` says the wait is over. `state` tells
 * the caller what the wait was on when it stopped.
 */
async function waitForListener(
  session: ProtectSession,
  target: ListenTarget,
  before: Set<number>,
  stop: () => boolean,
  holdersBefore?: Set<number>,
  state: { found?: Listener; closing: number[] } = { closing: [] },
): Promise<Listener | null> {
  const t0 = Date.now();
  let scanned = 0;
  const seenClosing = new Set<number>();
  while (!stop()) {
    const now = await session.listeners(target);
    let scan = holdersBefore !== undefined && Date.now() - scanned >= 20;
    if (!state.found) {
      state.found = now.find((l) => !before.has(l.inode));
      if (state.found) scan = holdersBefore !== undefined;
      else if (scan) {
        const kept = now.filter((l) => before.has(l.inode));
        const inode = handedOverInode(
          kept.map((l) => l.inode),
          holdersBefore!,
        );
        if (inode !== undefined) state.found = { ...kept.find((l) => l.inode === inode)!, handedOver: true };
      }
      if (state.found && !holdersBefore) return state.found;
    }
    if (state.found && scan) {
      scanned = Date.now();
      state.closing = closingInodes(
        now.filter((l) => before.has(l.inode)).map((l) => l.inode),
        holdersBefore!,
      );
      if (state.closing.length === 0) return seenClosing.size > 0 ? { ...state.found, oldClosed: seenClosing.size } : state.found;
      for (const i of state.closing) seenClosing.add(i);
    } else if (scan) scanned = Date.now();
    await new Promise((r) => setTimeout(r, Date.now() - t0 < 50 ? 1 : 5));
  }
  return state.found ?? null;
}
