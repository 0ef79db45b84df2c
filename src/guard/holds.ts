/**
 * Operations over every hold that is set up: `plug`, `release`, `status`,
 * `teardown`.
 *
 * @module
 */
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { listenerAccepts, listTcpListeners, type TcpListener } from '../netlink/sockdiag.js';
import { socketHolders } from './listen-holders.js';
import { NetlinkError, SynplugError, UsageError } from '../netlink/errors.js';
import { checkEntryOptions, resolveConfig } from './config.js';
import { InterruptedError, signalLatch, StateFileError } from './errors.js';
import { removeMetricsFile } from './metrics.js';
import { StateStore, processStartTime, type Lease, type PlugRecord } from './state.js';
import { openCheckedDir } from './state-fs.js';
import { accounted } from './accounting.js';
import { unwatchedReport } from './report.js';
import {
  breakLeases,
  deadProtectLeases,
  dropLease,
  leaseLive,
  liveLeases,
  newLeaseId,
  whoHolds,
  releaseIfOrphaned,
  takeLease,
  unprepare,
  type TakeResult,
  withLeaseLock,
} from './leases.js';
import { recordKilledProtects } from './history.js';
import { addrNotHeld, contextFor, definedOnly, recoverStale, refuseAddrNotHeld, withSession } from './context.js';
import {
  checkSelector,
  combineStates,
  findUnrecordedIfbs,
  asInterrupted,
  interruptedSetup,
  markedPieces,
  noLocalHold,
  nothingSetUp,
  othersHold,
  requireSetUp,
  selectedHolds,
  stateOf,
  viaOf,
} from './setup.js';
import {
  deviceOfHold,
  devicesOfHolds,
  holdIdForms,
  holdModeFor,
  holdModes,
  isHoldId,
  removedAddressOf,
  selectInbound,
  type UnrecordedPiece,
} from './modes/index.js';
import { GuardSession } from './session.js';
import { othersHolds, othersHoldsError, teardownHold } from './pieces.js';
import { REPORT_TABLE, removeReportCounters, reportCountersPresent, retireReportChain } from './report.js';
import { listTables } from '../iptables/table.js';
import { tableIsMarked } from './teardown-marks.js';
import { startWatchdog, WATCHDOG_GRACE_MS, type WatchdogArm } from './watchdog.js';
import type { GuardConfig } from './config.js';
import type { SetupRecord } from './state.js';
import type {
  GuardOptions,
  HoldStatus,
  PieceState,
  PlugOptions,
  PlugResult,
  ReleaseOptions,
  ReleaseResult,
  StatusOptions,
  StatusResult,
  TeardownOptions,
  TeardownResult,
  BrokenLease,
  ListenerCut,
  PlugStats,
} from './types.js';
import { inCallNetns } from './call-netns.js';

function pidStartOf(pid: number): { pidStart?: number } {
  const t = processStartTime(pid);
  return t === undefined ? {} : { pidStart: t };
}

/**
 * Buffer every plug (and arm marking for `maxHoldMs`) until {@link release}:
 * a manual lease, alive until its deadline or a manual release while its
 * watchdog lives (other holders do not release the plug while it lives; once
 * the watchdog is gone, the next command releases). A watchdog (a process of its own,
 * as protect's) is started first and left armed when this returns: at the
 * deadline it drops the lease and releases, when no other live lease holds
 * the plug. So `maxHoldMs` holds for every hold, also those without a
 * kernel-side deadline (the inbound hold).
 * @param opts the configuration, and `maxHoldMs` (default 10000, at least 10)
 * @throws {UsageError} bad options (`usage`)
 * @throws {NotPermittedError} (`permission`) {@link NotSetUpError} (`not-set-up`) {@link NoDeviceError} (`usage`)
 * @throws {StateFileError} the state directory is unsafe, or a state file is damaged or cannot be written
 * @throws {NetlinkError} the kernel refused (`kernel`)
 * @throws {SynplugError} the watchdog did not start (`failure`): nothing was plugged
 */
export async function plug(opts: PlugOptions = {}): Promise<PlugResult> {
  checkEntryOptions('plug', opts);
  if (opts?.netns !== undefined) return inCallNetns('plug', opts, plug);
  const { maxHoldMs = 10_000, metricsFile, ...guardOpts } = opts ?? {};
  if (!(maxHoldMs >= 10)) throw new UsageError('max-hold (--max-hold) must be at least 10 ms');
  // The history line and the metrics (accounting.ts): a plug counts no reload (its release does), only its failure.
  return accounted(
    'plug',
    { stateDir: guardOpts.stateDir, metricsFile },
    () => plugOnce(guardOpts, maxHoldMs),
    (r) => ({
      holds: r.holds ?? [],
      history: { exitCode: 0, report: unwatchedReport({ heldSyns: 0, holdMs: 0, dropped: 0 }, "a manual plug: 'synplug release' reports what it held") },
      change: null,
    }),
  );
}

async function plugOnce(opts: GuardOptions, maxHoldMs: number): Promise<PlugResult> {
  const { config, store, record } = contextFor(opts, 'plug');
  refuseAddrNotHeld(opts, record, 'plug');
  return withSession(config, record, async (s) => {
    await recoverStale(s, store);
    await requireSetUp(s, config, 'plug', record !== undefined);
    // Phase one: a queue's holder started (holding nothing yet), so that --max-hold counts from the hold.
    // (undone when nothing comes of it: the armed pieces go unless another lease holds)
    const watchdog = await s
      .prepare()
      .then(() => startWatchdog(undefined, 'ignore'))
      .catch(async (e: unknown) => {
        await unprepare(store, s);
        throw e;
      });
    // The holds' counters before the hold, which the release's report counts from (read before: the hold waits for
    // nothing). A plug's are the kernel's; a queue's are what its holder answers this process's release (0 here), so the
    // release's own answer is what the queue held.
    const counters = await s.plugStats().then(
      (st) => ({ packets: st.packets, drops: st.drops }),
      () => undefined,
    );
    const since = Date.now();
    const watchdogStart = processStartTime(watchdog.pid);
    const lease: Lease = {
      id: newLeaseId(),
      owner: 'manual',
      pid: process.pid,
      ...pidStartOf(process.pid),
      watchdogPid: watchdog.pid,
      // the lease lives only while this same watchdog does (pid and start time: a stale record copied back holds nothing)
      ...(watchdogStart !== undefined && { watchdogStart }),
      holds: s.holdIds,
      since,
      deadline: since + maxHoldMs,
      ...(counters && { counters }),
    };
    let take: TakeResult | undefined;
    try {
      watchdog.arm(manualArm(s, config, lease));
      take = await takeLease(store, s, lease, devicesOfHolds(s.holdIds, config.dev));
      await s.buffer();
    } catch (e) {
      watchdog.done();
      await dropLease(store, s, lease.id, devicesOfHolds(s.holdIds, config.dev), async () => {
        await s.release().catch(() => {});
        return 1;
      }).catch(() => {});
      throw e;
    }
    watchdog.handOver();
    // protects killed with their watchdogs whose leases this take removed (under the lock): their history lines, once
    await recordKilledProtects(config.stateDir, deadProtectLeases(take.dead));
    return { dev: config.dev, addr: config.addr, deadline: take.latestDeadline, maxHoldMs, holds: s.holdIds };
  });
}

/** A manual plug's watchdog arm: at the lease's deadline (and only then), drop it and release. */
function manualArm(s: GuardSession, config: GuardConfig, lease: Lease): Omit<WatchdogArm, 'op'> {
  return {
    ownerPid: lease.pid,
    stateDir: config.stateDir,
    deadline: lease.deadline + WATCHDOG_GRACE_MS,
    release: s.releaseSteps(),
    leaseId: lease.id,
    dev: devicesOfHolds(s.holdIds, config.dev),
    untilDeadline: true,
  };
}

/**
 * Release every plug of the session and turn marking off (the armed pieces go too).
 * @returns `exists` false when there was no plug qdisc (or an inbound hold's IFB is gone): nothing can be held there (every
 *   other plug got its release in the same datagram); `stats`, the plugs' counters read after the release and before
 *   the armed pieces went
 * @throws {NetlinkError} another refusal of the release
 */
async function releaseEveryPlug(s: GuardSession): Promise<{ exists: boolean; stats?: PlugStats }> {
  let plugExists = true;
  try {
    await s.release();
  } catch (e) {
    if (!(e instanceof NetlinkError && (e.code === 'ENOENT' || e.code === 'EINVAL' || e.code === 'ENODEV'))) throw e;
    plugExists = false;
  }
  // a hold that is not set up (a queue hold no record lists: nothing of it to read) held nothing
  if (plugExists) plugExists = (await Promise.all(s.holds.map((h) => h.plugStats().catch(() => undefined)))).some((x) => x !== undefined);
  const stats = plugExists ? await s.releasedStats() : undefined;
  await s.disarm().catch(() => {});
  return { exists: plugExists, ...(stats && { stats }) };
}

/** The records after a release: no lease left, the plug released (plug.json keeps who plugged it). */
function writeReleased(store: StateStore, r: PlugRecord | undefined, dev: string): void {
  const now = Date.now();
  store.writeLeases({ version: 1, leases: [] });
  store.writePlug({ ...(r ?? { version: 1, owner: 'manual', pid: process.pid, dev, since: now, deadline: now }), state: 'released', releasedAt: now });
}

/**
 * Release every plug (always safe) and turn marking off, at once, whatever
 * the leases: every live lease is broken, and the result says how many.
 *
 * The state files do not decide whether to release: a damaged record, or an
 * unsafe state directory, still gets the plug released (from the options and
 * defaults), and is reported afterwards as an error naming the file, with
 * nothing written. With nothing set up (no record, no plug qdisc), nothing is
 * written either. A setup record of another network namespace (or one
 * without the namespace cookie, on a kernel that has cookies) is refused
 * first, with nothing sent to the kernel.
 *
 * With `orphaned`, live leases are left alone: a plug that a running
 * protect (or a manual plug before its deadline, its watchdog alive) holds is not released
 * (`released: false`, `liveLeases` says how many); only a plug no live lease
 * holds is released (a crash's leftover). That is the mode for a systemd
 * `ExecStopPost=`, which runs in the middle of a protected
 * `systemctl restart` (between the stop and the start). A damaged state is
 * then an error with nothing released (who holds is unknown).
 * @param opts the configuration, and `orphaned`
 * @throws {UsageError} bad options
 * @throws {NotPermittedError} (`permission`) {@link NoDeviceError} (`usage`)
 * @throws {StateFileError} before anything is sent: the setup record is another namespace's; after releasing: a state file is damaged or the directory unsafe; or plug.json cannot be written (with `orphaned`: a damaged or unsafe state, nothing released)
 * @throws {NetlinkError} the kernel refused (`kernel`)
 * @throws {SynplugError} nothing set up here and nothing released, while another's hold holds in this namespace (`foreign-state`, naming it)
 */
export async function release(opts: ReleaseOptions = {}): Promise<ReleaseResult> {
  checkEntryOptions('release', opts);
  if (opts?.netns !== undefined) return inCallNetns('release', opts, release);
  const { metricsFile, ...rest } = opts ?? {};
  // The history line and the metrics (accounting.ts): a release that ended a manual plug's hold counts it as a reload;
  // one that released nothing (--orphaned, live leases) is not a line.
  // Nothing set up: no line either (release writes nothing then).
  const { endedManualHold: _e, ...out } = await accounted(
    'release',
    { stateDir: rest.stateDir, metricsFile },
    () => releaseOnce(rest),
    (r) => ({
      holds: r.holds ?? [],
      // recorded when it ended a hold (a plug buffering, a lease broken): a release of nothing is no reload
      ...(r.released && r.setUp && r.report && (r.wasBuffering || (r.brokeLeases ?? 0) > 0) && { history: { exitCode: 0, report: r.report } }),
      change: r.released && r.report && r.endedManualHold ? { exitCode: 0, report: r.report } : null,
    }),
  );
  return out;
}

/** {@link release}'s body; with what its accounting needs. */
async function releaseOnce(opts: Omit<ReleaseOptions, 'metricsFile'>): Promise<ReleaseResult & { endedManualHold?: boolean }> {
  const { orphaned: orphanedOpt, ...guardOpts } = opts;
  const orphaned = orphanedOpt === true;
  let ctx: ReturnType<typeof contextFor>;
  let damaged: StateFileError | undefined;
  try {
    ctx = contextFor(guardOpts, orphaned ? 'release --orphaned' : 'release');
  } catch (e) {
    // another namespace's record: nothing is sent, not even a release (it would act in this namespace on that record's word)
    if (!(e instanceof StateFileError) || orphaned || e.otherNetns) throw e;
    damaged = e;
    const config = resolveConfig(definedOnly(opts ?? {}));
    ctx = { config, store: new StateStore(config.stateDir) };
  }
  const { config, store, record } = ctx;
  refuseAddrNotHeld(guardOpts, record, 'release');
  if (orphaned) {
    // Read before any session opens: a damaged file means who holds is unknown, and nothing is released.
    try {
      store.readPlug();
      store.readLeases();
    } catch (e) {
      if (!(e instanceof StateFileError)) throw e;
      throw new StateFileError(
        e.path,
        `release --orphaned released nothing: whether a running protect holds the plug cannot be told (${e.message}); 'synplug release' releases whatever the state`,
        e,
      );
    }
  }
  const res = await withSession(config, record, async (s): Promise<ReleaseResult & { endedManualHold?: boolean }> => {
    // Another state directory's plug hold (the mark on its kernel objects says so: no record here, or a copied one):
    // refused before anything is sent, as its release would end that directory's hold.
    const others = await othersHolds(s.holds);
    if (others.length) throw othersHoldsError(others, config.stateDir, 'release', 'Nothing was released');
    let r: PlugRecord | undefined;
    let hasLeases = false;
    /** the oldest live manual lease: the report counts its hold (from its counters and since) */
    let manual: Lease | undefined;
    if (!damaged) {
      try {
        r = store.readPlug();
        const leases = store.readLeases();
        hasLeases = leases !== undefined;
        manual = leases?.leases.filter((l) => l.owner === 'manual' && leaseLive(l)).sort((a, b) => a.since - b.since)[0];
      } catch (e) {
        if (!(e instanceof StateFileError)) throw e;
        damaged = e;
      }
    }
    let plugExists = true;
    let released: PlugStats | undefined;
    const releaseNow = async () => {
      const x = await releaseEveryPlug(s);
      plugExists = x.exists;
      released = x.stats;
    };
    const recordReleased = () => writeReleased(store, r, config.dev);
    let brokeLeases = 0;
    let manualBroken = 0;
    if (orphaned && !damaged && (r || record || hasLeases)) {
      // Live leases are left alone; only a plug nobody holds is released (and recorded as such).
      const outcome = await releaseIfOrphaned(store, releaseNow, recordReleased);
      if (!outcome.released) {
        // Not released: the plug stays with its live holders; say whether it exists (a dump, nothing changed).
        const held = await s.plugStats().catch(() => undefined);
        return {
          dev: config.dev,
          wasBuffering: r?.state === 'buffering',
          backlog: held?.qlen ?? 0,
          plugExists: held !== undefined,
          brokeLeases: 0,
          orphaned: true,
          released: false,
          liveLeases: outcome.live.length,
        };
      }
    } else if (damaged || !(r || record || hasLeases)) {
      // A damaged or unsafe state, or nothing set up: release, write nothing.
      await releaseNow();
      if (!damaged) {
        // Nothing recorded: no lock is taken, but a planted lock file is refused as the commands that take it do.
        try {
          store.checkLockFile();
        } catch (e) {
          if (!(e instanceof StateFileError)) throw e;
          damaged = e;
        }
      }
    } else {
      // Every lease is broken, under the lease lock, and the plug released at once.
      brokeLeases = await breakLeases(store, releaseNow, (broken) => {
        manualBroken = broken.filter((l) => l.owner === 'manual').length;
        recordReleased();
      });
    }
    // IFBs of synplug's that no record lists (a crash before setup recorded one; a damaged or removed setup.json): release them too.
    // Best effort: the recorded plugs are released already; a refused link listing must not hide that.
    const unrecorded = await releaseUnrecorded(s, record).catch((): string[] => []);
    const also = unrecorded.length ? `; released the plug(s) of synplug's IFB(s) found without a record: ${unrecorded.join(', ')}` : '';
    if (damaged) {
      throw new StateFileError(
        damaged.path,
        `${plugExists ? `released the hold on ${config.dev}` : `no hold on ${config.dev}: nothing was held`}${also}; but ${damaged.message}`,
        damaged,
      );
    }
    const releasedAt = Date.now();
    const stats = plugExists ? (released ?? (await s.plugStats().catch(() => undefined))) : undefined;
    const elsewhere = s.holds.flatMap((h) => h.heldElsewhere?.() ?? []);
    // Records copied from another directory (every hold recorded holding, none held through this one): nothing was held
    // here, whatever they say, and no lease of theirs held anything here.
    const notHere = r?.state === 'buffering' ? s.holds.flatMap((h) => h.heldNothingHere?.() ?? []) : [];
    const heldNothing = notHere.length > 0 && notHere.length === s.holds.length;
    if (heldNothing) brokeLeases = manualBroken = 0;
    const wasBuffering = r?.state === 'buffering' && !heldNothing;
    // How the hold failed: a release verdict refused; a holder that died during the hold (nobody held it at the release).
    // It ended the hold then, at a time no process recorded (none watched it after the plug): holdMs counts to this
    // release, the most the hold can have lasted, and the sentence says so.
    const lost = wasBuffering
      ? s.holds
          .flatMap((h) => h.holderLost?.() ?? [])
          .map((l) => `${l}; when it ended, nothing recorded: holdMs counts to this release, the most the hold lasted`)
      : [];
    const failed = [...(stats?.failures ?? []), ...lost];
    // What the manual hold held: the plugs' counters against those its plug read before buffering (read after the release).
    const base = wasBuffering && stats ? manual?.counters : undefined;
    const report = unwatchedReport(
      {
        heldSyns: base ? Math.max(0, stats!.packets - base.packets) : 0,
        holdMs: wasBuffering ? Math.max(0, releasedAt - (manual?.since ?? r!.since)) : 0,
        // a holder that died during the hold took its count of what it dropped with it (`failed` says so)
        dropped: lost.length || stats?.dropsLost ? null : base ? Math.max(0, stats!.drops - base.drops) : 0,
        ...(failed.length && { failed }),
      },
      base
        ? 'a manual hold: refused, reset and listener drops are counted by protect only'
        : 'no manual plug was holding (or its counters could not be read): nothing was counted',
    );
    return {
      ...(elsewhere.length && { heldElsewhere: elsewhere }),
      dev: config.dev,
      wasBuffering,
      backlog: stats?.qlen ?? 0,
      plugExists,
      brokeLeases,
      ...(brokeLeases > 0 && { brokeManualPlugs: manualBroken }),
      ...(orphaned && { orphaned: true, liveLeases: 0 }),
      released: true,
      ...(unrecorded.length && { unrecorded }),
      holds: s.holdIds,
      report,
      ...(base && { endedManualHold: true }),
      ...((failed.length || notHere.length || stats?.notes?.length) && { warnings: [...failed, ...(stats?.notes ?? []), ...notHere] }),
      setUp: r !== undefined || record !== undefined || hasLeases,
    };
  });
  // The reload report's counter chain of a protect that ended during this hold (or was killed): gone with the last holder.
  if (res.released && res.setUp) {
    const kept = (await retireReportChain(store))?.kept;
    if (kept) res.warnings = [...(res.warnings ?? []), `kept ${kept}`];
  }
  // Nothing set up and nothing held: say so, and which hold 'synplug setup' makes on this kernel.
  // (a plug qdisc there counts; a queue hold opened without a record has no counters: releaseEveryPlug says it held nothing)
  // Nothing of this directory's was released (nothing set up here), and what holds here is another's: refused, as the
  // release of another directory's plug hold is (its mark), naming it; its own --state-dir releases it.
  if (!res.setUp && !res.plugExists && !res.unrecorded?.length && !res.brokeLeases && res.heldElsewhere?.length)
    throw new SynplugError(
      `nothing was released: synplug is not set up in ${config.stateDir}, and what holds in this network namespace is not this state directory's: ${res.heldElsewhere.join('; ')}. Release it with the --state-dir of the directory that holds it`,
      'foreign-state',
    );
  if (res.setUp || res.plugExists || orphaned || res.unrecorded?.length) return res;
  const none = await nothingSetUp(config, guardOpts, { state: 'absent', holds: [] });
  return none ? { ...res, nothingSetUp: none.sentence } : res;
}

/**
 * Release what every piece of synplug's that no record lists holds (an IFB's
 * plug; those recognised as synplug's only: see {@link UnrecordedPiece}).
 * @returns each released one, `IFB (inbound hold of DEV)`
 * @throws {NetlinkError} a listing was refused
 */
async function releaseUnrecorded(s: GuardSession, record: SetupRecord | undefined): Promise<string[]> {
  const out: string[] = [];
  for (const u of await unrecordedPieces(s, record)) {
    if (u.mismatch !== undefined || u.otherDirectory !== undefined || s.holds.some((h) => h.id === u.id)) continue;
    const label = await u.release().catch(() => undefined);
    if (label !== undefined) out.push(label);
  }
  return out;
}

/**
 * Holds of synplug's in this namespace that this teardown leaves: tables
 * carrying synplug's mark besides the report's, and pieces no record lists
 * (another state directory's IFB).
 * @returns each, named (empty: none)
 * @throws {NetlinkError} a listing was refused
 */
async function otherHoldsHere(s: GuardSession, record: SetupRecord | undefined): Promise<string[]> {
  // Every family: a local plug hold's table is `ip synplug` (or ip6), a queue hold's `inet synplug_queue...`.
  const tables = await listTables(s.nft).catch(async (e: unknown) => {
    if (e instanceof NetlinkError && e.code === 'EPROTONOSUPPORT') return [];
    throw e;
  });
  // A table of synplug's by its mark (an inbound queue hold's `synplug_queue_DEV` may have a `-` in DEV, which the
  // names of the local hold's tables never have); on a kernel that keeps no comment (before 5.10), by its name.
  const marked = tables
    .filter((t) => !(t.family === 'inet' && t.name === REPORT_TABLE) && /^synplug(_|$)/.test(t.name) && (tableIsMarked(t) ?? true))
    .map((t) => `table ${t.family} ${t.name}`);
  const ifbs = (await unrecordedPieces(s, record)).filter((u) => u.mismatch === undefined).map((u) => u.id);
  return [...marked, ...ifbs];
}

/** Every mode's pieces that no record lists. @throws {NetlinkError} a listing was refused */
async function unrecordedPieces(s: GuardSession, record: SetupRecord | undefined): Promise<UnrecordedPiece[]> {
  const out: UnrecordedPiece[] = [];
  for (const m of holdModes()) if (m.findUnrecorded) out.push(...(await m.findUnrecorded(s, record, s.config)));
  return out;
}

/**
 * The setup, the rule, the recorded plug state and the plug's counters;
 * IFBs of synplug's that no record lists in `unrecorded` (the state is then
 * at best `partial`). `inbound` naming, without a record, no device, `lo`
 * or an IFB is refused as setup refuses it (`usage`).
 * @throws {NotPermittedError} (`permission`) {@link NoDeviceError} (`usage`) {@link NetlinkError} (`kernel`)
 * @throws {StateFileError} the state directory is unsafe, or a state file is damaged
 */
export async function status(opts: StatusOptions = {}): Promise<StatusResult> {
  checkEntryOptions('status', opts);
  const { inbound, local, ...rest } = opts ?? {};
  checkSelector({ inbound, local }, 'status');
  const { config, store, record: recorded } = contextFor(rest, 'status', { inbound });
  // a setup interrupted here before it recorded anything: its pieces are this directory's, partly set up (as check says)
  const interrupted = inbound === undefined ? await interruptedSetup(config, store, recorded) : undefined;
  const record = recorded ?? interrupted?.record;
  let others: string[] = [];
  const r: StatusResult = await withSession(config, record, async (s) => {
    const rec = await recoverStale(s, store);
    const selected = await selectedHolds(s, record, { inbound, local });
    if (!record) others = markedPieces(selected.flatMap((x) => ('absent' in x ? [] : [x])));
    const holds: HoldStatus[] = [];
    for (const x of selected) {
      if ('absent' in x) {
        holds.push({ ...x.absent, via: viaOf(x.absent.mode), state: 'absent', pieces: [], qdiscs: [], filters: [] });
        continue;
      }
      const { hold, inspection } = x;
      const details = await hold.statusDetails(inspection);
      holds.push({
        id: hold.id,
        mode: hold.mode,
        via: hold.via,
        dev: hold.dev,
        state: inspection.state,
        pieces: Object.values(inspection.pieces) as PieceState[],
        qdiscs: [],
        filters: [],
        ...details.hold,
      });
    }
    const unrecorded = await findUnrecordedIfbs(s, record, { inbound, local });
    return {
      state: combineStates([...selected.map(stateOf), ...(unrecorded.length ? (['partial'] as const) : [])]),
      ...(unrecorded.length && { unrecorded }),
      plug: store.readPlug() ?? null,
      leases: liveLeases(store).map((l) => ({
        owner: l.owner,
        pid: l.pid,
        ...(l.command && { command: l.command }),
        since: l.since,
        deadline: l.deadline,
        holds: l.holds,
      })),
      ...(rec.released && { recovered: `released a plug left buffering (${rec.reason})` }),
      holds,
    };
  });
  if (interrupted) return asInterrupted(r, interrupted);
  // an --addr no recorded hold holds: set up differently, that address missing (as check says)
  const notHeld = inbound === undefined ? addrNotHeld(rest, record) : undefined;
  if (notHeld) return { ...r, state: r.state === 'absent' ? 'absent' : 'partial', addrNotHeld: notHeld };
  // no record: a hold carrying synplug's mark is another state directory's, not set up in this one (as check says)
  if (others.length)
    return {
      ...r,
      state: 'absent',
      holds: r.holds.map((h) => ({ ...h, state: 'absent' as const })),
      nothingSetUp: `${othersHold(config, others)}: the hold of another state directory (give its --state-dir to see it)`,
    };
  const noLocal = noLocalHold(local, record, r.holds);
  if (!noLocal && (record || inbound !== undefined || r.unrecorded?.length || r.plug || r.leases.length)) return r;
  const none = await nothingSetUp(config, rest, r, noLocal);
  if (!none) return r;
  return none.hold
    ? { ...r, state: 'absent', holds: [{ ...none.hold, state: 'absent', pieces: [], qdiscs: [], filters: [] }], nothingSetUp: none.sentence }
    : { ...r, nothingSetUp: none.sentence };
}

/**
 * Release, then remove exactly what setup added, hold by hold (the local
 * hold: the qdisc tree when its root is synplug's, with the filter under it;
 * synplug's nftables table; the address if setup added it); then the state
 * files, and the state directory when setup created it. `inbound` (any name
 * of the device) or `local` removes that hold only.
 *
 * Removing every hold, the release comes first and is recorded at once as
 * `release` records it (plug.json released, every lease broken): a teardown
 * that fails part-way leaves records that agree with the kernel, and the
 * next `teardown` removes the rest.
 *
 * Without a record (none, or a damaged setup.json), synplug's IFBs are
 * found by their alias ({@link findSynplugIfbs}) and recognised by their
 * name and root qdisc too ({@link unrecordedIfbMismatch}; any other is left
 * alone, in `kept`): every one (or, with `inbound`, the device's, also when
 * the record does not list it) is removed with synplug's filters on its
 * device; the device's clsact is kept. With a damaged setup.json that done,
 * the error is thrown. An IFB that a filter other than synplug's redirects
 * to is never deleted (in `kept`, naming the filters). `holds` lists the
 * holds that existed; with none, `nothingSetUp` says so.
 * @throws {UsageError} `inbound` and `local` both, an empty device name; `inbound` naming, without a record, `lo` or an IFB
 * @throws {NotPermittedError} (`permission`) {@link NoDeviceError} (`usage`; also `inbound` naming, without a record, no device) {@link NetlinkError} (`kernel`)
 * @throws {SynplugError} (`foreign-state`) one hold named (`hold`, `inbound`, `local`) that a live lease of this
 * directory holds now (a protect, a manual plug): nothing is removed
 * @throws {StateFileError} the state directory is unsafe, plug.json or leases.json is damaged or a symbolic link
 * (nothing is removed), setup.json is damaged (nothing of the local hold is removed), or a file cannot be removed
 */
export async function teardown(opts: TeardownOptions = {}): Promise<TeardownResult> {
  checkEntryOptions('teardown', opts);
  if (opts?.netns !== undefined) return inCallNetns('teardown', opts, teardown);
  // A signal while teardown runs does not end it half-way: caught until it returns; one that arrived before it changed
  // anything stops it there (InterruptedError, nothing removed), one after lets it finish what it started.
  const latch = signalLatch();
  let r: TeardownResult;
  try {
    r = await teardownHolds(opts, () => {
      if (latch.signal) throw new InterruptedError(latch.signal, `interrupted by ${latch.signal} before teardown removed anything: nothing was removed`);
    });
  } finally {
    latch.end();
  }
  // The servers that listened on an address it removed: their clients there are refused from now on; said, not silent.
  const cut = await listenersCut(r.removed.flatMap((x) => removedAddressOf(x) ?? []));
  return cut.length ? { ...r, listenersCut: cut } : r;
}

/**
 * The listening sockets that accepted connections to the addresses teardown
 * removed (bound to one, or to the wildcard), with the processes holding
 * them (listen-holders.ts, as `ss -p` finds them). A listing that fails
 * says nothing (the teardown itself is done).
 * @param addrs the addresses removed
 */
async function listenersCut(addrs: readonly string[]): Promise<ListenerCut[]> {
  if (!addrs.length) return [];
  let all: TcpListener[];
  try {
    all = await listTcpListeners();
  } catch {
    return [];
  }
  const holders = socketHolders(all.map((l) => l.inode));
  return addrs.flatMap((address) =>
    all
      .filter((l) => listenerAccepts(l, address))
      .sort((a, b) => a.port - b.port || a.address.localeCompare(b.address))
      .map((l) => {
        const pids = [...(holders.get(l.inode) ?? [])].sort((a, b) => a - b);
        return { address, listener: l.address, port: l.port, pids, commands: [...new Set(pids.flatMap((p) => commOf(p) ?? []))] };
      }),
  );
}

/** A process's name (`/proc/PID/comm`), or undefined when it is gone or cannot be read. */
function commOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** @param stopped throws when a signal arrived: called before the first change */
async function teardownHolds(opts: TeardownOptions, stopped: () => void = () => {}): Promise<TeardownResult> {
  const only = opts?.inbound;
  const localOnly = opts?.local;
  const holdOnly = opts?.hold;
  checkSelector({ inbound: only, local: localOnly }, 'teardown');
  if (holdOnly !== undefined && (typeof holdOnly !== 'string' || holdOnly === '' || only !== undefined || localOnly))
    throw new UsageError('teardown: hold names one hold by its id, without inbound or local');
  if (holdOnly !== undefined && !isHoldId(holdOnly)) throw new UsageError(notAHoldId(holdOnly, opts));
  const { inbound: _only, local: _local, hold: _hold, ...rest } = opts ?? {};
  let ctx: ReturnType<typeof contextFor>;
  try {
    ctx = contextFor(rest, 'teardown', { inbound: only });
    // A damaged or symlinked plug.json or leases.json is an error before anything is removed (as for every command):
    // teardown would otherwise delete it, and with it what it says about a protect still running.
    ctx.store.readPlug();
    ctx.store.readLeases();
  } catch (e) {
    if (!(e instanceof StateFileError) || localOnly || holdOnly !== undefined) throw e;
    const config = resolveConfig(definedOnly(rest));
    // Only a damaged setup.json (not plug.json, not an unsafe directory): synplug's IFBs are still known by their
    // alias, and only synplug's filters redirect to them.
    if (e.path !== join(config.stateDir, 'setup.json') || e.message.includes('symbolic link')) throw e;
    const swept = await withBareSession(config, async (s) => {
      const target = only !== undefined ? await selectTarget(s, undefined, only) : undefined;
      return tearDownUnrecorded(s, undefined, target);
    });
    if (!swept.holds.length) throw e;
    throw new StateFileError(e.path, `removed synplug's IFB(s) found by their alias, and their SYN filters (${swept.removed.join('; ')}); but ${e.message}`, e);
  }
  const { config, store } = ctx;
  refuseAddrNotHeld(rest, ctx.record, 'teardown');
  // A setup interrupted here before it recorded anything: its pieces are this directory's, removed through the record
  // that setup would have written (and only then the lock file). Another directory's pieces never are (below).
  const record = ctx.record ?? (only === undefined && holdOnly === undefined ? (await interruptedSetup(config, store, undefined))?.record : undefined);
  // --local: the local hold set up, of either kind (the queue hold of local clients where the kernel has no sch_plug)
  const localId = localOnly && record ? await withSession(config, record, async (s) => s.holds.find((h) => h.scope === 'local')?.id) : undefined;
  let id: string | undefined = holdOnly ?? (localOnly ? (localId ?? holdModeFor('plug', 'local')?.name) : undefined);
  let target: { name: string; ifindex?: number } | undefined;
  if (only !== undefined) {
    stopped();
    const early = await withBareSession(config, async (s) => {
      const sel = await selectInbound(s, record, only, false);
      target = { name: sel.dev, ...(sel.ifindex !== undefined && { ifindex: sel.ifindex }) };
      id = sel.id;
      if (record?.holds[id]) return undefined;
      // Not recorded: an IFB of synplug's for that device (a crash before setup recorded it) is still removed.
      const swept = await tearDownUnrecorded(s, record, target);
      if (swept.holds.length) return { dev: target.name, ...swept };
      if (swept.kept.length)
        return { dev: target.name, ...swept, nothingSetUp: `teardown --inbound ${only}: no inbound hold of ${target.name} is set up; nothing to remove` };
      await selectInbound(s, record, only); // nothing recorded or found for it: a device setup --inbound would refuse is an error
      return undefined;
    });
    if (early) return early;
  }
  const which =
    only !== undefined
      ? `--inbound ${only}: no inbound hold of ${target?.name ?? only}`
      : holdOnly !== undefined
        ? `of ${holdOnly}: no such hold`
        : '--local: no local hold';
  if (id !== undefined && !record?.holds[id]) {
    // Nothing of that hold to remove: success (exit 0), as a plain teardown with nothing set up.
    return {
      dev: target?.name ?? only ?? config.dev,
      removed: [],
      kept: [],
      holds: [],
      nothingSetUp: `teardown ${which} is set up${record ? ` (set up: ${Object.keys(record.holds).join(', ')})` : ''}; nothing to remove`,
    };
  }
  // One hold, while a live lease of this directory holds it: removed, what it holds would be lost (a plug qdisc deleted
  // with what it buffered, a queue hold's chain gone) under a protect that goes on as if held. Refused, as setup's
  // change during a hold is; a teardown of every hold releases first and says whose hold it ended (brokenLeases).
  // Under the directory's lock from here (where the lock file exists: a setup made it) until the records are removed:
  // a protect or plug that read the record before takes its lease before this looks for live leases, or after the
  // removal, and then finds its hold gone (leases.ts refuseRemovedHolds), never armed on removed pieces.
  return withLockIfThere(store, async () => {
    const holding = id === undefined ? [] : liveLeases(store).filter((l) => l.holds.includes(id as string));
    if (holding.length)
      throw new SynplugError(
        `teardown of the ${id} hold: it is holding now (${whoHolds(holding)}): removing it now would lose the SYNs it holds. Run it after the release (a protect releases when its command ends; 'synplug release' ends a manual plug), or tear down every hold with 'synplug teardown', which releases first and says whose hold it ended. Nothing was removed`,
        'foreign-state',
      );
    const dev = target?.name ?? only ?? config.dev;
    return withSession(config, record, async (s) => {
      stopped();
      const removed: string[] = [];
      const kept: string[] = [];
      const torn: string[] = [];
      // Another state directory's plug holds (the mark on their kernel objects: a setup.json copied from that one): kept
      // whole, saying whose; nothing of them is released or removed (its record here goes with the rest).
      const othersDirs = await othersHolds(s.holds);
      for (const o of othersDirs)
        kept.push(
          `${o.hold.mode} hold ${o.hold.id} on ${o.hold.dev}: kept whole, another state directory's (${o.detail}): tear it down through that directory's --state-dir`,
        );
      s.setAside(othersDirs.map((o) => o.hold));
      let brokenLeases: BrokenLease[] = [];
      if (id === undefined) {
        // Every hold goes: its plugs are released first and recorded so, every lease broken (as release does), so that
        // a teardown failing part-way leaves records that agree with the kernel, and a watchdog acting later holds nothing.
        const plug = store.readPlug();
        if (plug?.state === 'buffering' || (store.readLeases()?.leases.length ?? 0) > 0)
          await breakLeases(
            store,
            () => releaseEveryPlug(s).then(() => {}),
            (live) => {
              brokenLeases = live.map((l) => ({
                owner: l.owner,
                pid: l.pid,
                ...(Array.isArray(l.command) && { command: l.command }),
                holds: l.holds,
                since: l.since,
              }));
              writeReleased(store, plug, config.dev);
            },
          );
      }
      const broke = brokenLeases.length ? { brokenLeases } : {};
      for (const { hold, inspection } of (await selectedHolds(s, record, {})).flatMap((x) => ('absent' in x ? [] : [x]))) {
        if (id !== undefined && hold.id !== id) continue;
        // No record and none adopted: pieces of this hold carrying synplug's mark are another state directory's hold
        const others = record ? [] : (hold.pieces.marked?.(inspection.observed) ?? []);
        if (others.length) {
          kept.push(
            `${others.join(' and ')}: synplug's mark, but the state directory ${config.stateDir} has no record of a setup (another state directory's hold: tear it down through that one)`,
          );
          continue;
        }
        const r = await teardownHold(hold, inspection);
        removed.push(...r.removed);
        kept.push(...r.kept);
        // A hold counts when it existed: recorded (its entry is forgotten), or something of it was there.
        if (record?.holds[hold.id] || r.removed.length || inspection.state !== 'absent') torn.push(hold.id);
      }
      if (id === undefined && !record) {
        // Every hold, and no record: IFBs of synplug's found by their alias go too.
        const swept = await tearDownUnrecorded(s, record);
        removed.push(...swept.removed);
        kept.push(...swept.kept);
        torn.push(...swept.holds.filter((h) => !torn.includes(h)));
      }
      // the device of the holds removed (an inbound hold's DEV, not the local hold's lo), when they share one
      const devs = unique(torn.flatMap((h) => deviceOfHold(h, config.dev) ?? []));
      const tornDev = devs.length === 1 ? devs[0] : dev;
      const left = Object.fromEntries(Object.entries(record?.holds ?? {}).filter(([h]) => !torn.includes(h)));
      if (id !== undefined && Object.keys(left).length > 0) {
        try {
          store.writeSetup({ ...record!, holds: left });
        } catch (e) {
          if (!(e instanceof StateFileError)) throw e;
          throw new StateFileError(e.path, `${whatWasRemoved(removed)}; but ${e.message}`, e, e.category === 'failure' ? 'failure' : 'bad-state');
        }
        return { dev: tornDev, removed: unique(removed), kept: unique(kept), holds: unique(torn), ...broke };
      }
      // Every hold of this record gone: the reload report's RST counters go too (report.ts), unless a hold of another
      // state directory is still in this namespace (its protect counts with them).
      const others = await otherHoldsHere(s, record);
      if (others.length) {
        // said only when it is there (no protect may have made it yet)
        if (await reportCountersPresent())
          kept.push(`nftables table inet ${REPORT_TABLE}: the reload report's counters of synplug's other hold(s) here (${others.join(', ')})`);
      } else removed.push(...(await removeReportCounters(kept)));
      // The metrics file setup recorded: nothing writes it after this, so it goes rather than go stale (metrics.ts).
      if (record?.metricsFile !== undefined) {
        const m = await removeMetricsFile(config.stateDir, record.metricsFile);
        if (m.removed) removed.push(m.removed);
        if (m.kept) kept.push(m.kept);
      }
      // with pieces left alone (another state directory's): not "nothing of synplug's", which they are
      const nothing =
        !torn.length && !removed.length
          ? {
              nothingSetUp: kept.length
                ? `nothing to remove here: the state directory ${config.stateDir} records no setup, and what is left alone below is not this directory's`
                : `nothing to remove: the state directory ${config.stateDir} records no setup (a hold set up through another --state-dir is torn down through that one)`,
            }
          : {};
      let removedStateDir: boolean;
      try {
        removedStateDir = store.clear(record?.createdStateDir === true ? record.createdStateDirMark : undefined);
      } catch (e) {
        // Say only what was done: the kernel objects removed (maybe none), then why the records stay.
        throw new StateFileError(
          config.stateDir,
          `${whatWasRemoved(removed)}; but cannot remove the state files in ${config.stateDir}: ${(e as Error).message}`,
          e,
          e instanceof StateFileError && e.category === 'failure' ? 'failure' : 'bad-state',
        );
      }
      // What stays in the directory (the reload history, metrics totals, the holder's log) is said, never left silently.
      const keptStateDir = removedStateDir ? undefined : filesLeftIn(config.stateDir);
      return {
        dev: tornDev,
        removed: unique(removed),
        kept: unique(kept),
        holds: unique(torn),
        ...(removedStateDir && { removedStateDir }),
        ...(keptStateDir && { keptStateDir }),
        ...broke,
        ...nothing,
      };
    });
  });
}

/** `f` under the state directory's lock ({@link withLeaseLock}) when its lock file exists; else `f` alone (none is created). */
function withLockIfThere<T>(store: StateStore, f: () => Promise<T>): Promise<T> {
  return store.hasLockFile() ? withLeaseLock(store, f) : f();
}

/**
 * teardown's refusal of a `hold` that is no hold's id: the forms of the ids, and the holds set up in the state
 * directory when its record can be read (nothing is changed either way).
 */
function notAHoldId(id: string, opts: TeardownOptions): string {
  let here = '';
  try {
    const { inbound: _i, local: _l, hold: _h, ...rest } = opts;
    const ids = Object.keys(contextFor(rest, 'teardown').record?.holds ?? {});
    here = ids.length ? ` (set up here: ${ids.join(', ')})` : ' (none is set up here)';
  } catch {
    // an unreadable state directory: its own error comes with the next command that needs it
  }
  return `teardown --hold '${id}': no hold has that id: give one of ${holdIdForms().join(', ')}${here}; nothing was changed`;
}

/**
 * The state directory and the files left in it after teardown removed the state files; undefined when it is gone
 * or empty, or cannot be read (it was just checked: nothing to say then).
 */
function filesLeftIn(path: string): { path: string; files: string[] } | undefined {
  let d: ReturnType<typeof openCheckedDir>;
  try {
    d = openCheckedDir(path, false);
  } catch {
    return undefined;
  }
  if (!d) return undefined;
  try {
    const files = d.names();
    return files.length ? { path, files } : undefined;
  } catch {
    return undefined;
  } finally {
    d.close();
  }
}

/** What a teardown removed from the kernel, for a message about what it then failed to record: only what it did. */
const whatWasRemoved = (removed: readonly string[]): string =>
  removed.length ? `removed ${unique(removed).join('; ')}` : 'removed nothing from the kernel (nothing of the setup was there)';

/** The entries in order, each once. */
const unique = (xs: readonly string[]): string[] => [...new Set(xs)];

/** Run `f` on a session that opens no hold (the route socket only). */
async function withBareSession<T>(config: GuardConfig, f: (s: GuardSession) => Promise<T>): Promise<T> {
  const s = await GuardSession.open(config, { local: false });
  try {
    return await f(s);
  } finally {
    s.close();
  }
}

/** The device `--inbound DEV` names (its name and index), also one that does not exist. */
async function selectTarget(s: GuardSession, record: SetupRecord | undefined, dev: string): Promise<{ name: string; ifindex?: number }> {
  const t = await selectInbound(s, record, dev, false);
  return { name: t.dev, ...(t.ifindex !== undefined && { ifindex: t.ifindex }) };
}

/**
 * Remove the pieces of synplug's that the record does not list (all of them
 * without a record): an IFB carrying synplug's alias, with synplug's filters
 * on its device; with `target`, only the one of that device (by name, or by
 * index). One whose name or contents are not synplug's is left alone (`kept`).
 * @throws {NetlinkError} a kernel refusal
 */
async function tearDownUnrecorded(
  s: GuardSession,
  record: SetupRecord | undefined,
  target?: { name: string; ifindex?: number },
): Promise<{ removed: string[]; kept: string[]; holds: string[] }> {
  const removed: string[] = [];
  const kept: string[] = [];
  const holds: string[] = [];
  for (const u of await unrecordedPieces(s, record)) {
    if (target && !u.matches(target)) continue;
    if (u.mismatch !== undefined || u.otherDirectory !== undefined) {
      kept.push(u.keptReason);
      continue;
    }
    const r = await u.teardown();
    removed.push(...r.removed);
    kept.push(...r.kept);
    if (!holds.includes(u.id)) holds.push(u.id);
  }
  return { removed: unique(removed), kept: unique(kept), holds };
}
