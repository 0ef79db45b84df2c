/**
 * `setup` (build, complete or correct the holds, transactionally) and
 * `check` (inspect them, changing nothing).
 *
 * Setup runs in two phases. Phase one changes nothing: CAP_NET_ADMIN, the
 * devices, every module each hold needs (all missing ones named at once), and
 * foreign state in the way (a root qdisc that is not synplug's is refused
 * unless `force`). Phase two runs each hold's named steps in their order; if
 * one fails, the steps already taken are undone in reverse order.
 *
 * @module
 */
import { join } from 'node:path';
import { closeSync } from 'node:fs';
import { canonicalAddress, checkEntryOptions, PLUG_ONLY, resolveConfig, type GuardConfig } from './config.js';
import { InterruptedError, NotSetUpError, SetupError, signalLatch } from './errors.js';
import { StateStore, withNetnsCookie, type HoldRecord, type Lease } from './state.js';
import { liveLeases, whoHolds, withLeaseLock } from './leases.js';
import { checkMetricsFile, metricsPathOf } from './metrics.js';
import type { GuardSession } from './session.js';
import { MissingSupportError, requireNetAdmin } from './support.js';
import { REPORT_CHAIN, REPORT_TABLE } from './report.js';
import { addrNotHeld, contextFor, definedOnly, recoverStale, withSession } from './context.js';
import { chooseHoldMode, holdMode, holdModeFor, holdModes, selectInbound, type Hold, type HoldInspection, type HoldMode } from './modes/index.js';
import { inspectHold, piecesOfLifetime, planHold, runSteps, type PiecePlan } from './pieces.js';
import type { SetupStep } from './modes/types.js';
import { SynplugError, UsageError } from '../netlink/errors.js';
import type { SetupRecord } from './state.js';
import type { SetupWould } from './setup-would.js';
import {
  HOLD_VIAS,
  type CheckOptions,
  type CheckResult,
  type HoldSelector,
  type PieceState,
  type SetupOptions,
  type SetupResult,
  type SetupState,
  type UnrecordedIfb,
} from './types.js';
import { inCallNetns } from './call-netns.js';
import { migrateReqReport } from './sysctl.js';
import { defaultStateDir } from './state-dir.js';
import { stateDirMark } from './state-fs.js';
import { defaultNetns } from '../netlink/netns.js';

/** What every protect adds around its hold, beside the hold's own armed pieces (report.ts), for `setup --dry-run`. */
const REPORT_ARMED = `chain inet ${REPORT_TABLE} ${REPORT_CHAIN}-<the state directory's mark> (protect's reload report: counts the RSTs that leave what is held)`;
/** The state of several holds together: `ok` when all are, `absent` when none is set up at all, else `partial`. */
export function combineStates(states: readonly SetupState[]): SetupState {
  if (states.every((s) => s === 'ok')) return 'ok';
  if (states.every((s) => s === 'absent')) return 'absent';
  return 'partial';
}

/** Every hold of a session inspected, in the session's order. @throws {NetlinkError} a listing refused */
export async function inspectHolds(s: GuardSession): Promise<Array<{ hold: Hold; inspection: HoldInspection }>> {
  const out: Array<{ hold: Hold; inspection: HoldInspection }> = [];
  for (const hold of s.holds) out.push({ hold, inspection: await inspectHold(hold) });
  return out;
}

/** The pieces of every inspected hold, in order. */
export function piecesOf(inspected: ReadonlyArray<{ inspection: HoldInspection }>): PieceState[] {
  return inspected.flatMap((i) => Object.values(i.inspection.pieces) as PieceState[]);
}

/**
 * Build (or complete, or correct) the setup of one hold: the local hold, or
 * with `inbound` the inbound hold of that device (only that one). Other holds
 * in the record are left as they are. Idempotent; transactional.
 *
 * @throws {UsageError} bad options (category `usage`): e.g. a port outside 1-65535, `inbound.dev` 'lo'
 * @throws {NotPermittedError} no CAP_NET_ADMIN (`permission`)
 * @throws {StateFileError} the state directory is unsafe, or a state file is damaged (`bad-state`)
 * @throws {MissingSupportError} missing modules, all named (`missing-module`)
 * @throws {NoDeviceError} no such device (`usage`)
 * @throws {IfbNameClashError} a device of the IFB's name exists that synplug did not create (`usage`)
 * @throws {ForeignQdiscError} a foreign root qdisc and no `force` (`foreign-state`)
 * @throws {ForeignFilterError} synplug's pref at the device's ingress holds foreign filters (`foreign-state`)
 * @throws {SynplugError} (`foreign-state`) pieces carrying synplug's mark that this state directory, in which no setup ran, did not record: another state directory's (see refuseOthersPieces)
 * @throws {SetupError} a step failed; says which, why, and what was rolled back (the cause's category)
 */
export async function setup(opts: SetupOptions = {}): Promise<SetupResult> {
  checkEntryOptions('setup', opts);
  if (opts?.netns !== undefined) return inCallNetns('setup', opts, (o) => setup(o));
  const r = (await setupOrPlan(opts, undefined)) as SetupResult;
  // a hold of given ports (an inbound hold): the ones nothing listens on now (a wrong --port?), a notice only
  const held = r.inbound ?? (r.queue?.scope === 'inbound' ? r.queue : undefined);
  if (!held?.ports.length) return r;
  const ports = (await migrateReqReport({ holds: [{ addrs: held.addrs, ports: held.ports }] })).portsNotListened;
  return ports ? { ...r, portsNotListened: ports } : r;
}

/**
 * {@link setup}'s body. With `dryRun` (setup-plan.ts's {@link planSetup}) it
 * changes nothing: no stale plug is released, no step runs, no record is
 * written; it hands what setup would do to `dryRun` and returns its answer.
 * @throws as {@link setup}, but never {@link SetupError}
 */
export async function setupOrPlan<T>(opts: SetupOptions, dryRun: ((would: SetupWould) => T) | undefined): Promise<SetupResult | T> {
  checkEntryOptions('setup', opts);
  if (opts?.netns !== undefined) return inCallNetns('setup', opts, (o) => setupOrPlan(o, dryRun));
  // Setups of one state directory are serialised: each runs its steps and writes its record under the directory's
  // lock, and one that finds the record changed since it read it (another setup, or a teardown, finished meanwhile)
  // plans again from the new record and kernel, as if run after it.
  for (let attempt = 1; ; attempt++) {
    try {
      return await setupOnce(opts ?? {}, dryRun);
    } catch (e) {
      if (!(e instanceof RecordChangedError)) throw e;
      if (attempt >= SETUP_ATTEMPTS)
        throw new SynplugError(
          `the setup record ${e.path} changed ${SETUP_ATTEMPTS} times while this setup planned (other synplug setups or teardowns of this state directory): nothing was changed; try again`,
        );
    }
  }
}

/** How many times {@link setupOrPlan} plans again after the record changed under it. */
const SETUP_ATTEMPTS = 5;

/** The setup record changed between setup's read and its lock: planned again. Never leaves setup.ts. */
class RecordChangedError extends Error {
  constructor(readonly path: string) {
    super(`${path} changed`);
  }
}

async function setupOnce<T>(opts: SetupOptions, dryRun: ((would: SetupWould) => T) | undefined): Promise<SetupResult | T> {
  // A signal before the steps (phase one's checks, the lock's wait) stops setup before its first step, said as such:
  // not the process's silent death (exit 130, nothing said). The steps catch their own (runStepsUninterrupted).
  const latch = dryRun ? undefined : signalLatch();
  try {
    return await setupLatched(opts, dryRun, latch);
  } finally {
    latch?.end();
  }
}

async function setupLatched<T>(
  opts: SetupOptions,
  dryRun: ((would: SetupWould) => T) | undefined,
  latch: { readonly signal: NodeJS.Signals | undefined } | undefined,
): Promise<SetupResult | T> {
  const { inbound, force, via: viaOpt, queue: _queue, metricsFile: metricsOpt, ...rest } = opts;
  const via = checkVia(opts);
  const config = resolveConfig(definedOnly(rest));
  // --metrics-file: checked now (exit 2, nothing changed), recorded as the default of protect, plug and release.
  const metricsFile = metricsOpt !== undefined ? metricsPathOf(checkMetricsFile(metricsOpt, config.stateDir)) : undefined;
  const scope = inbound !== undefined ? 'inbound' : 'local';
  const candidates = (via === 'auto' ? (['plug', 'queue'] as const) : [via]).flatMap((v) => holdModeFor(v, scope) ?? []);
  if (!candidates.length) throw new SynplugError(`this synplug has no ${scope} ${via === 'auto' ? '' : `${via} `}hold`);
  candidates[0].validate(opts, config);
  requireNetAdmin('setup');
  const store = new StateStore(config.stateDir);
  const dirExisted = store.checkDir();
  const oldRecord = store.readSetup(inbound ? { inbound: inbound.dev } : undefined);
  // The session opens every recorded hold: a plug of any of them left buffering is released first.
  return withSession(config, oldRecord, async (s) => {
    const recovery = dryRun ? { released: false } : await recoverStale(s, store);
    // --via auto: the plug hold where the kernel has what it needs, else the queue hold; said, with why.
    const { mode, chose } = await chooseHoldMode(s, config, candidates, viaOpt === undefined || viaOpt === 'auto');
    if (mode !== candidates[0]) mode.validate(opts, config);
    const { hold: target, replaces } = await mode.openForSetup(s, config, opts, oldRecord);
    // A live lease of this directory holds this hold now (a protect, a manual plug): setup may confirm it, never change it.
    const holding = oldRecord?.holds[target.id] ? liveLeases(store).filter((l) => l.holds.includes(target.id)) : [];
    await target.refuseClash?.({ holdingHere: holding.length > 0 });
    // Phase one: kernel support, all of it, before anything changes.
    const sup = await target.probeSupport();
    if (sup.missing.length) {
      const e = new MissingSupportError(sup.missing, sup.unverified);
      // --via naming a hold this kernel cannot have, where another works: the refusal names it (as the demo's does)
      for (const m of HOLD_VIAS.flatMap((v) => (v !== 'auto' && v !== mode.via ? (holdModeFor(v, scope) ?? []) : []))) {
        if ((await m.probeSupport(s, config)).missing.length) continue;
        // --dev, --mark, --limit, --force chose the plug hold (checkVia): the queue hold takes none of them
        const plugOnly = PLUG_ONLY.filter((k) => opts[k] !== undefined && opts[k] !== false).map((k) => `--${k}`);
        const how =
          m.via === 'queue' && plugOnly.length
            ? `without ${plugOnly.join(', ')} (the plug holds' options)`
            : `with the same options${opts.via ? ' (or leave --via out)' : ''}`;
        e.message += `; the ${m.via} hold works on this kernel: 'synplug setup --via ${m.via}' ${how}`;
        break;
      }
      throw e;
    }

    // The named steps, in order (foreign state refused here, before any step).
    let plan: PiecePlan;
    const inspection = await inspectHold(target);
    // pieces another state directory's setup made (its mark on them, or no record of a setup here) are never taken
    refuseOthersPieces(target, inspection, store, config, oldRecord?.holds[replaces ?? target.id] !== undefined);
    try {
      plan = planHold(target.pieces, inspection, { force });
    } catch (e) {
      // Never a silent switch after a refusal: the alternative is named.
      const alt = candidates.find((m) => m.via !== mode.via);
      if (chose !== undefined && alt && e instanceof SynplugError && e.category === 'foreign-state')
        e.message += `; or hold with a netfilter queue instead, which needs no qdisc: synplug setup --via ${alt.via}`;
      throw e;
    }
    refuseNewHeldSet(mode, target, oldRecord?.holds[replaces ?? target.id], plan.record());
    const steps = [...plan.steps];
    if (holding.length && steps.length) refuseDuringHold(target, holding, steps);

    if (dryRun)
      return dryRun({
        config,
        hold: target,
        steps,
        armed: [...piecesOfLifetime(target.pieces, inspection.observed, 'armed'), REPORT_ARMED],
        marked: target.pieces.marked?.(inspection.observed) ?? [],
        entry: plan.record(),
        ...(chose !== undefined && { chose }),
        ...(replaces !== undefined && { replaces }),
        unverified: sup.unverified,
        store,
        dirExisted,
      });
    // Phase two: run the steps; on failure, undo in reverse. The lock file first marks this directory as one a
    // setup ran in: a setup killed before it recorded anything leaves pieces the next setup here takes for its own.
    closeSync(store.openLock());
    // Under the directory's lock from the record's second read to its write: another setup's steps and record come
    // before or after this one's, never between (two at once both said "set up", and the record kept one's ports).
    return withLeaseLock(store, () => {
      if (JSON.stringify(store.readSetup(inbound ? { inbound: inbound.dev } : undefined)) !== JSON.stringify(oldRecord))
        throw new RecordChangedError(store.setupPath());
      if (latch?.signal)
        throw new InterruptedError(
          latch.signal,
          `interrupted by ${latch.signal} before setup's first step: nothing was set up${recovery.released ? ` (it had released a plug left buffering: ${recovery.reason})` : ''}`,
        );
      // Signals stay caught until the record is written: one after the last step finds the setup complete, recorded
      // and reported as such (it exited 130 with every step taken, before or after the record was written).
      return runStepsUninterrupted(steps, () => {
        const holds: Record<string, HoldRecord> = { ...oldRecord?.holds };
        if (replaces !== undefined && replaces !== target.id) delete holds[replaces];
        const entry = plan.record();
        holds[target.id] = entry;
        const createdStateDir = oldRecord ? oldRecord.createdStateDir === true : !dirExisted;
        // the mark of the very directory created (a copy of this record elsewhere names another): teardown's proof
        const createdStateDirMark = !createdStateDir ? undefined : oldRecord ? oldRecord.createdStateDirMark : stateDirMark(config.stateDir);
        const recordedMetrics = metricsFile ?? oldRecord?.metricsFile;
        // a new --metrics-file is a change of the record, said as one (a complete setup otherwise says "nothing to change")
        const metricsAction = recordedMetrics !== oldRecord?.metricsFile ? [`recorded the metrics file ${recordedMetrics}`] : [];
        store.writeSetup({
          version: 2,
          holds,
          ...(createdStateDir && { createdStateDir }),
          ...(createdStateDirMark !== undefined && { createdStateDirMark }),
          ...(recordedMetrics !== undefined && { metricsFile: recordedMetrics }),
          // the namespace the holds are in: a command acting in another one refuses this record (state.ts)
          ...withNetnsCookie(oldRecord),
        });
        if (!store.readPlug()) {
          const now = Date.now();
          // nothing has held yet: said as such (status said "released (last at <this setup's time>)")
          store.writePlug({ version: 1, state: 'released', owner: 'manual', pid: process.pid, dev: config.dev, since: now, deadline: now, neverHeld: true });
        }
        return {
          dev: target.dev,
          ownsAddress: false,
          ...target.setupResult(entry),
          // this run's own doing (a re-run with nothing to do added nothing); the record's fact is ownsAddress
          addedAddress: steps.some((x) => x.addsAddress === true),
          hold: target.id,
          via: target.via,
          ...(chose !== undefined && { chose }),
          changed: steps.length > 0 || metricsAction.length > 0,
          actions: [...steps.map((x) => x.what), ...metricsAction],
          ...(steps.some((x) => x.settleMs) && { settleMs: Math.max(...steps.map((x) => x.settleMs ?? 0)) }),
          ...(recovery.released && { recovered: `released a plug left buffering (${recovery.reason})` }),
          unverified: sup.unverified.map((p) => `${p.module} (${p.what})`),
        };
      });
    });
  });
}

/**
 * Setup of a hold that this state directory's own lease holds now: run, its
 * steps would change the hold under the held SYNs (a table replaced drops
 * what its chain queued), so it is refused, saying whose hold it is and
 * when to run it. A setup that changes nothing (the hold complete) is
 * answered "already set up" during a hold too.
 * @throws {SynplugError} (`foreign-state`, exit 7) always; nothing changed
 */
function refuseDuringHold(target: Hold, holding: readonly Lease[], steps: readonly SetupStep[]): never {
  throw new SynplugError(
    `the ${target.id} hold of this state directory is holding now (${whoHolds(holding)}): setup would change it (${steps.map((x) => x.what).join('; ')}), which it never does during a hold. Run setup again after the release ('synplug release' ends a manual plug). Nothing was changed`,
    'foreign-state',
  );
}

/**
 * Setup's steps ({@link runSteps}), then `complete` (the record), with
 * SIGINT, SIGTERM, SIGHUP and SIGQUIT caught until it returns: a signal
 * stops the steps at the next step, which undoes those taken (nothing
 * half-applied, no record written), and is then the `interrupted` error
 * (exit 130 at the CLI). A signal after the last step stops nothing: the
 * setup is complete, `complete` records it, and its result is returned.
 * Without this a signal ended the process between two steps and left what
 * they had made, or after the last one, exit 130 for a complete setup
 * (issue #19).
 * @throws {SetupError} a step failed @throws {SynplugError} (`interrupted`) a signal arrived before the last step
 */
async function runStepsUninterrupted<T>(steps: readonly SetupStep[], complete: () => T): Promise<T> {
  const latch = signalLatch();
  try {
    await runSteps(steps, () => latch.signal);
    return complete();
  } finally {
    latch.end();
  }
}

/**
 * Whether a hold's device is gone since setup (deleted or renamed): its `device` piece missing (the queue holds), or
 * an inbound hold opened from its record with no device of that name or index (ifindex 0: the plug hold). Setup
 * cannot complete such a hold until the device exists again, so no message offers it (check, status, plug, protect).
 */
function deviceGone(i: { hold: Hold; inspection: HoldInspection }): boolean {
  return (
    (i.inspection.pieces as Readonly<Record<string, PieceState | undefined>>).device?.status === 'missing' ||
    (i.hold.scope === 'inbound' && i.hold.ifindex === 0)
  );
}

/**
 * Leave out of a session ({@link GuardSession.setAside}) the holds whose device is gone since setup, when it has other
 * holds: nothing arrives on a device that is gone, so such a hold holds nothing and protect holds the others. A
 * session whose every hold's device is gone keeps them ({@link requireSetUp} refuses it, naming each).
 * @returns one sentence per hold left out: which, its device gone, and what brings it back or removes it
 * @throws {NetlinkError} a listing refused
 */
export async function setAsideGoneDevices(s: GuardSession): Promise<string[]> {
  if (s.holds.length < 2) return [];
  const inspected = await inspectHolds(s);
  const gone = inspected.filter(deviceGone);
  if (!gone.length || gone.length === inspected.length) return [];
  s.setAside(gone.map((i) => i.hold));
  const held = s.holds.map((h) => `the ${holdLabel(h)}`).join(' and ');
  return gone.map(({ hold, inspection }) => {
    // the piece whose detail says the device is gone, and what to do (the queue hold's device, the plug hold's clsact)
    const d = (Object.values(inspection.pieces) as PieceState[]).find((p) => p.status === 'missing' && p.detail);
    return `leaving out the ${holdLabel(hold)} (${hold.id}): ${d ? `its ${d.piece} is missing: ${d.detail}` : `its device ${hold.dev} is gone`}. Holding ${held} only`;
  });
}

/** A hold in words, for messages: `inbound hold on eth0` (its mode's {@link HoldMode.describe}). */
function holdLabel(h: Hold): string {
  return holdMode(h.mode)?.describe({ id: h.id, dev: h.dev, scope: h.scope }).label ?? `hold ${h.id}`;
}

/**
 * When a hold's pieces carry another state directory's mark ({@link HoldPieces.markOwner}): what to do instead of
 * `setup` here, which {@link refuseOthersPieces} refuses; undefined otherwise.
 */
function othersHoldAdvice(target: Hold, inspection: HoldInspection, config: GuardConfig): string | undefined {
  const owner = target.pieces.markOwner?.(inspection.observed);
  if (!owner || owner.here) return undefined;
  const other = otherRecordOf(target.id, config.stateDir);
  return `its pieces are another state directory's (${owner.detail}): setup here is refused; use ${other ? `--state-dir ${other.slice(0, -'/setup.json'.length)}` : "that directory's --state-dir"} for this hold, or, if no state directory records it any more, remove them by hand (${owner.removeBy}) and run setup again`;
}

/**
 * Refuse to take for this state directory's a hold whose pieces carry
 * synplug's mark when they are another state directory's:
 *
 * - their mark says so ({@link HoldPieces.markOwner}: the queue hold's table
 *   names the state directory whose setup made it): refused whether or not
 *   this directory records the hold (a copied setup.json), and whatever
 *   files it holds (a `lock` or a `plug.json` claims nothing; issue #19,
 *   MA1-MA2). Marked as this directory's: its own, taken;
 * - the mark does not say (an address alone, a plug hold's pieces, an
 *   earlier synplug's table): refused while this directory has no trace of
 *   a setup ({@link StateStore.usedBySetup}: no setup.json, plug.json or
 *   lock file; a setup creates the lock file before its first step, and
 *   teardown removes all three). A setup interrupted here left a lock file,
 *   and its pieces are taken as before; a lock file made by hand takes them
 *   too (pieces no state directory records any more).
 *
 * Recorded here too, a teardown through either directory would remove them
 * under the other's feet.
 * @param recorded this directory's record has the hold (only a mark naming another directory is refused then)
 * @throws {SynplugError} (`foreign-state`) naming the pieces, and the record of them when found in this namespace's default state directory
 */
function refuseOthersPieces(target: Hold, inspection: HoldInspection, store: StateStore, config: GuardConfig, recorded: boolean): void {
  const found = target.pieces.marked?.(inspection.observed) ?? [];
  if (!found.length) return;
  const owner = target.pieces.markOwner?.(inspection.observed);
  if (owner?.here) return;
  if (recorded && !owner) return;
  const other = otherRecordOf(target.id, config.stateDir);
  const use = `Use that state directory (--state-dir ${other ? other.slice(0, -'/setup.json'.length) : 'DIR'}) for this hold.`;
  const pieces = `${found.join(' and ')} ${found.length > 1 ? 'carry' : 'carries'} synplug's mark`;
  if (owner)
    throw new SynplugError(
      `${pieces}, and the mark names another state directory's setup (${owner.detail}): ${other ? `${other} records them` : 'a setup with another state directory made them'}, and a hold is set up through one state directory only (a teardown through either would remove it under the other's feet). ${use} If no state directory records them any more (it was removed), remove them by hand (${owner.removeBy}) and run setup again. Nothing was changed`,
      'foreign-state',
    );
  // a directory a setup ran in owns the marked pieces no other record names (a setup interrupted here made them)
  if (store.usedBySetup() && !other) return;
  throw new SynplugError(
    `${pieces}, but the state directory ${config.stateDir} has no record of a setup: ${
      other ? `${other} records them` : 'a setup with another state directory made them'
    }, and a teardown through either directory would remove them under the other's feet. ${use} If no state directory records them any more (it was removed), take them for this one by giving it a setup's lock file first ('install -d -m 0700 ${config.stateDir} && touch ${config.stateDir}/lock'), then run setup again. Nothing was changed`,
    'foreign-state',
  );
}

/** A setup interrupted in a state directory: what it left, taken for that directory's ({@link interruptedSetup}). */
export interface InterruptedSetup {
  /** the record setup would have written for the pieces found (never written by this) */
  record: SetupRecord;
  /** the pieces found carrying synplug's mark, as `check` names them */
  pieces: string[];
  /** what `check` says of them */
  sentence: string;
}

/**
 * A `check` or `status` result as an interrupted setup makes it: partial,
 * its holds that the interrupted setup would record partial, with its sentence.
 */
export function asInterrupted<R extends { state: string; holds: Array<{ id: string; state: string }> }>(
  r: R,
  interrupted: InterruptedSetup,
): R & { interrupted: string } {
  return {
    ...r,
    state: 'partial',
    holds: r.holds.map((h) => (h.id in interrupted.record.holds ? { ...h, state: 'partial' as const } : h)),
    interrupted: interrupted.sentence,
  };
}

/**
 * A setup killed between its kernel steps and its record: the state
 * directory holds setup's lock file (or plug.json) but no setup.json, and
 * the local hold `setup` makes here (`--via auto`: on this kernel, the queue
 * hold where it has no sch_plug) has pieces carrying synplug's mark that no
 * other record names ({@link refuseOthersPieces}'s rule). Those pieces are
 * this directory's: `check` reports them (partial), `teardown` removes them
 * through the record returned here (then the lock file), and `setup` takes
 * them. A directory no setup ran in gets undefined: another directory's
 * pieces are never taken or removed through it. Changes nothing.
 * @param record the directory's setup record, as read (nothing is done when there is one)
 * @returns undefined when there is a record, no setup ran here, or nothing of the hold carries synplug's mark
 * @throws {NetlinkError} a listing was refused
 */
export async function interruptedSetup(config: GuardConfig, store: StateStore, record: SetupRecord | undefined): Promise<InterruptedSetup | undefined> {
  if (record || !store.usedBySetup()) return undefined;
  let would: { id: string; marked: readonly string[]; entry: HoldRecord } | undefined;
  try {
    // setup's own plan (changing nothing): it refuses pieces another record names (refuseOthersPieces)
    would = (await setupOrPlan({ stateDir: config.stateDir }, (w) => ({ id: w.hold.id, marked: w.marked, entry: w.entry }))) as typeof would;
  } catch (e) {
    if (!(e instanceof SynplugError)) throw e;
    return undefined;
  }
  if (!would?.marked.length) return undefined;
  const pieces = [...would.marked];
  return {
    record: { version: 2, holds: { [would.id]: would.entry } },
    pieces,
    sentence:
      `the state directory ${config.stateDir} holds setup's lock file but no setup.json: a setup here was interrupted after it made ${pieces.join(' and ')} ` +
      `(synplug's mark), which are this directory's; 'synplug setup' takes them and completes the hold, 'synplug teardown' removes them`,
  };
}

/** The setup record of this namespace's default state directory, when it is not `stateDir` and records hold `id` (else undefined; never throws). */
function otherRecordOf(id: string, stateDir: string): string | undefined {
  try {
    const dir = defaultStateDir();
    if (dir === stateDir) return undefined;
    const store = new StateStore(dir);
    return store.readSetup()?.holds[id] ? store.setupPath() : undefined;
  } catch {
    return undefined;
  }
}

/** A record entry's `ports` and `addrs` (the holds that hold some ports or addresses only), sorted. */
function heldSet(r: HoldRecord): { ports: number[]; addrs: string[] } {
  const list = <T>(v: unknown): T[] => (Array.isArray(v) ? [...(v as T[])].sort() : []);
  // a local plug hold records its one address as `addr`
  const addrs = typeof r.addr === 'string' ? [r.addr] : list<string>(r.addrs);
  return { ports: list<number>(r.ports).sort((a, b) => a - b), addrs };
}

/**
 * Setup run again for a hold that is set up never changes the ports or
 * addresses it holds, nor its queue number: a port given alone would
 * silently stop holding the others, and a local hold's new address would
 * leave the old one (which setup added) on the device. Run for another set,
 * it is refused, naming what is held and the commands that change it
 * (for an inbound hold, both sets together).
 * @param before the hold's record entry, when it is set up
 * @param after the entry this setup would record
 * @throws {UsageError} the held ports, addresses or queue number would change (nothing is changed)
 */
function refuseNewHeldSet(mode: HoldMode, target: Hold, before: HoldRecord | undefined, after: HoldRecord): void {
  if (!before || before.mode !== after.mode) return;
  const was = heldSet(before);
  const now = heldSet(after);
  // the commands run where this one acts: with its --netns
  const ns = defaultNetns();
  const netns = ns !== undefined ? ` --netns ${ns}` : '';
  if (target.scope !== 'inbound') {
    const again = (what: string, is: unknown, would: unknown, flag: string) => {
      throw new UsageError(
        `the local hold (${target.id}) is set up for ${what} ${is}; setup does not change it (this one would hold ${what} ${would}). ` +
          `To change it: 'synplug teardown --local${netns}' then 'synplug setup${netns} ${flag} ${would}' (with your other options). Nothing was changed`,
      );
    };
    if (was.addrs.join(',') !== now.addrs.join(',')) again('address', was.addrs.join(', '), now.addrs.join(', '), '--addr');
    if (before.queueNum !== after.queueNum) again('queue number', before.queueNum, after.queueNum, '--via queue --queue-num');
    return;
  }
  if (before.queueNum !== after.queueNum)
    throw new UsageError(
      `the hold (${target.id}) is set up with queue number ${before.queueNum}; setup does not change it (this one would use ${after.queueNum}). To change it: 'synplug teardown --inbound ${target.dev}${netns}' then setup again with --queue-num ${after.queueNum}. Nothing was changed`,
    );
  if (was.ports.join(',') === now.ports.join(',') && was.addrs.join(',') === now.addrs.join(',')) return;
  const say = (x: { ports: number[]; addrs: string[] }) => `port ${x.ports.join(', ')}${x.addrs.length ? ` to ${x.addrs.join(', ')}` : ' to any address'}`;
  const both = {
    ports: [...new Set([...was.ports, ...now.ports])].sort((a, b) => a - b),
    // any address (none listed) on either side: any address holds both
    addrs: now.addrs.length && was.addrs.length ? [...new Set([...was.addrs, ...now.addrs])] : [],
  };
  const words = mode.describe({
    id: target.id,
    dev: target.dev,
    scope: target.scope,
    ...both,
    ...(before.queueNum !== undefined && { queueNum: before.queueNum as number }),
  });
  throw new UsageError(
    `setup refused, nothing was changed: the ${words.label} (${target.id}) holds ${say(was)}, and setup does not change what a set-up hold holds (this setup asked for ${say(now)}). ` +
      `To change it, remove the hold and give the whole set again, e.g. to hold both: 'synplug teardown --inbound ${target.dev}${netns}' then '${words.setup}${netns}'`,
  );
}

/**
 * The `via` of setup's options: `auto` unless given; `auto` with an option
 * only the plug holds take (`dev`, `mark`, `limit`, `force`) is `plug`, with
 * one only the queue hold takes (`queue.num`, `queue.maxlen`) `queue`.
 * @throws {UsageError} a word that is not one of {@link HOLD_VIAS}; a plug hold's option with `queue`, a queue hold's with `plug`, or both kinds
 */
function checkVia(opts: SetupOptions): 'auto' | 'plug' | 'queue' {
  const via = opts.via ?? 'auto';
  if (!HOLD_VIAS.includes(via)) throw new UsageError(`--via: '${String(via)}' is not one of ${HOLD_VIAS.join(', ')}`);
  const plugOnly = PLUG_ONLY.filter((k) => opts[k] !== undefined && opts[k] !== false);
  const queueOnly = opts.queue !== undefined && Object.values(opts.queue).some((v) => v !== undefined);
  if ((via === 'queue' || (via === 'auto' && queueOnly)) && plugOnly.length)
    throw new UsageError(
      `--${plugOnly[0]} is the plug holds' option; the queue hold (--via queue) takes --addr, --inbound, --port, --queue-num and --queue-maxlen`,
    );
  if (via === 'plug' && queueOnly)
    throw new UsageError("--queue-num and --queue-maxlen are the queue hold's options: use them with --via queue (or leave --via out)");
  if (via === 'auto' && plugOnly.length) return 'plug';
  return via === 'auto' && queueOnly ? 'queue' : via;
}

/** A hold `check` or `status` reports, inspected; or the id of a selected hold that is not set up (no hold to inspect). */
export type SelectedHold = { hold: Hold; inspection: HoldInspection } | { absent: { id: string; mode: string; dev: string } };

/**
 * Check a hold selector (`--inbound DEV` / `--local`).
 * @throws {UsageError} both given, an empty device, a non-boolean `local`
 */
export function checkSelector(sel: HoldSelector, what: string): void {
  if (sel.inbound !== undefined && (typeof sel.inbound !== 'string' || sel.inbound === '')) throw new UsageError(`${what} --inbound: give a device name`);
  if (sel.local !== undefined && typeof sel.local !== 'boolean') throw new UsageError(`${what}: local must be true or false`);
  if (sel.local && sel.inbound !== undefined) throw new UsageError(`${what}: --local and --inbound each name one hold; give one of them (neither: every hold)`);
}

/**
 * The holds a command reports: every hold of the session, or the one the
 * selector names (`local`; `inbound` by any name of its device, renamed
 * devices by index). A selected hold that is not set up is reported absent:
 * the local hold inspected as it is, an inbound hold without pieces.
 * @throws {NetlinkError} a listing refused
 */
export async function selectedHolds(s: GuardSession, record: SetupRecord | undefined, sel: HoldSelector): Promise<SelectedHold[]> {
  if (sel.local) {
    // the local hold set up, of either kind (the queue hold of local clients where the kernel has no sch_plug); else the plug one
    const mode = holdModeFor('plug', 'local');
    const h = s.holds.find((x) => x.scope === 'local') ?? (mode && (await mode.open(s, s.config, undefined)));
    if (!h) return [];
    return [{ hold: h, inspection: await inspectHold(h) }];
  }
  if (sel.inbound !== undefined) {
    const t = await selectInbound(s, record, sel.inbound);
    const h = s.holds.find((x) => x.id === t.id);
    return [h ? { hold: h, inspection: await inspectHold(h) } : { absent: { id: t.id, mode: t.mode, dev: t.dev } }];
  }
  return inspectHolds(s);
}

/**
 * Pieces of synplug's that no record lists (a crash between creating one and
 * recording it; a removed setup.json), of every mode, that are synplug's
 * after all (their names and contents checked, not only their marks), for
 * the holds `sel` covers (none with `local`). `teardown` removes them.
 * @throws {NetlinkError} a listing was refused
 */
export async function findUnrecordedIfbs(s: GuardSession, record: SetupRecord | undefined, sel: HoldSelector): Promise<UnrecordedIfb[]> {
  if (sel.local) return [];
  const out: UnrecordedIfb[] = [];
  for (const mode of holdModes()) {
    if (!mode.findUnrecorded) continue;
    const target = sel.inbound !== undefined && mode.select ? await mode.select(s, record, sel.inbound, false) : undefined;
    for (const u of await mode.findUnrecorded(s, record, s.config)) {
      // not synplug's after all, or another state directory's hold (its mark says so): not a leftover here
      if (u.mismatch !== undefined || u.otherDirectory !== undefined) continue;
      if (target && !u.matches({ name: target.dev, ...('ifindex' in target && { ifindex: target.ifindex }) })) continue;
      out.push(u.report);
    }
  }
  return out;
}

/** The state of a selected hold. */
export const stateOf = (x: SelectedHold): SetupState => ('absent' in x ? 'absent' : x.inspection.state);

/**
 * Verify the setup without changing anything: every hold, or the one
 * `local` / `inbound` selects: each hold's state in `holds` (the local
 * hold's entry with its address), every piece in `pieces`. An IFB
 * of synplug's that no record lists is reported in `unrecorded` and makes
 * the state `partial`. `inbound` naming, without a record, no device, `lo`
 * or an IFB is refused as setup refuses it.
 * @returns `state` ok / absent / partial, and each piece's status
 * @throws {UsageError} bad options
 * @throws {NotPermittedError} no CAP_NET_ADMIN (`permission`): nftables refuses even to list without it
 * @throws {StateFileError} the state directory is unsafe, or a state file is damaged
 * @throws {NoDeviceError} no such device
 * @throws {NetlinkError} a listing was refused
 */
export async function check(opts: CheckOptions = {}): Promise<CheckResult> {
  checkEntryOptions('check', opts);
  const { inbound, local, ...rest } = opts ?? {};
  checkSelector({ inbound, local }, 'check');
  const { config, store, record: recorded } = contextFor(rest, 'check', { inbound });
  // a setup interrupted here before it recorded anything: its pieces are this directory's, partly set up (exit 12)
  const interrupted = inbound === undefined ? await interruptedSetup(config, store, recorded) : undefined;
  const record = recorded ?? interrupted?.record;
  let others: string[] = [];
  const r: CheckResult = await withSession(config, record, async (s) => {
    await recoverStale(s, store);
    const selected = await selectedHolds(s, record, { inbound, local });
    const inspected = selected.flatMap((x) => ('absent' in x ? [] : [x]));
    const unrecorded = await findUnrecordedIfbs(s, record, { inbound, local });
    if (!record) others = markedPieces(inspected);
    return {
      // an IFB of synplug's that no record lists is a leftover: partly set up (check: exit 12), until teardown removes it
      state: combineStates([...selected.map(stateOf), ...(unrecorded.length ? (['partial'] as const) : [])]),
      ...(unrecorded.length && { unrecorded }),
      pieces: piecesOf(inspected),
      holds: selected.map((x) => {
        if ('absent' in x) return { ...x.absent, via: viaOf(x.absent.mode), state: 'absent' as const };
        const h = x.hold;
        const elsewhere = othersHoldAdvice(h, x.inspection, config);
        return {
          id: h.id,
          mode: h.mode,
          via: h.via,
          dev: h.dev,
          state: stateOf(x),
          ...h.checkDetails(),
          setup: h.setupCommand(),
          ...(elsewhere && { elsewhere }),
          ...(deviceGone(x) && { deviceGone: true as const }),
        };
      }),
    };
  });
  if (interrupted) return asInterrupted(r, interrupted);
  // an --addr no recorded hold holds (a queue or inbound hold's are its record's): set up differently, that address missing
  const notHeld = inbound === undefined ? addrNotHeld(rest, record) : undefined;
  if (notHeld)
    return {
      ...r,
      state: r.state === 'absent' ? 'absent' : 'partial',
      pieces: [...r.pieces, { piece: `address ${canonicalAddress(rest.addr)}`, status: 'missing', detail: notHeld }],
    };
  // no record: a hold carrying synplug's mark is another state directory's, not set up in this one (protect refuses it)
  if (others.length)
    return {
      ...r,
      state: 'absent',
      holds: r.holds.map((h) => ({ ...h, state: 'absent' as const })),
      nothingSetUp: `${othersHold(config, others)}: the hold of another state directory (give its --state-dir to check it)`,
    };
  const noLocal = noLocalHold(local, record, r.holds);
  if (!noLocal && (record || inbound !== undefined || r.unrecorded?.length)) return r;
  const none = await nothingSetUp(config, rest, r, noLocal);
  if (!none) return r;
  return none.hold
    ? { ...r, state: 'absent', pieces: [], holds: [{ ...none.hold, state: 'absent' }], nothingSetUp: none.sentence }
    : { ...r, nothingSetUp: none.sentence };
}

/**
 * With `--local` and a record of holds none of which is local: the sentence
 * that starts what `check` and `status` say (as `teardown --local` says it),
 * instead of the default local hold's pieces, which on a kernel without
 * sch_plug would list a hold setup never makes there.
 * @param reported the holds the command reported (the local hold's id, recorded or not)
 * @returns undefined when `--local` was not given, nothing is recorded, or the local hold is recorded
 */
export function noLocalHold(local: boolean | undefined, record: SetupRecord | undefined, reported: ReadonlyArray<{ id: string }>): string | undefined {
  if (!local || !record || reported.some((h) => h.id in record.holds)) return undefined;
  return `no local hold is set up (set up: ${Object.keys(record.holds).join(', ')})`;
}

/**
 * With no hold recorded (or, `where` given, no local hold recorded): what `check`, `status` and `release` say instead
 * of the default hold's pieces, which on a kernel that cannot have them
 * (no sch_plug) would describe a hold setup never makes there. It asks
 * setup's own plan (`--via auto`, changing nothing) which hold
 * `synplug setup` makes on this kernel.
 * @param opts the command's options: `addr`; a plug hold's own (`dev`, `mark`, `limit`) ask about that hold, which is then reported as found
 * @param r what was found of the default hold: only when none of it is there, or setup would make another hold, is anything said
 * @param localOnly how the sentence starts when only the local hold was asked about and other holds are recorded ({@link noLocalHold}); without it, nothing is recorded
 * @returns the sentence, and (when setup would make another hold than the default one) that hold's entry; undefined: report as found
 */
export async function nothingSetUp(
  config: GuardConfig,
  opts: { addr?: string; dev?: string; mark?: number; limit?: number },
  r: { state: SetupState; holds: ReadonlyArray<{ mode: string }> },
  localOnly?: string,
): Promise<{ sentence: string; hold?: { id: string; mode: string; via: 'plug' | 'queue'; dev: string; setup: string } } | undefined> {
  if (opts.dev !== undefined || opts.mark !== undefined || opts.limit !== undefined) return undefined;
  const addr = opts.addr;
  const where = localOnly ?? `synplug is not set up (no hold is recorded in ${join(config.stateDir, 'setup.json')})`;
  let would: { hold: Hold; chose?: string } | undefined;
  try {
    would = (await setupOrPlan({ stateDir: config.stateDir, ...(addr !== undefined && { addr }) }, (w) => ({ hold: w.hold, chose: w.chose }))) as {
      hold: Hold;
      chose?: string;
    };
  } catch (e) {
    if (!(e instanceof SynplugError)) throw e;
  }
  // reported as that hold (absent): another hold than the one found, or (nothing of it there) the one setup makes
  const other = would !== undefined && (r.state === 'absent' || !r.holds.some((h) => h.mode === would.hold.mode));
  if (r.state !== 'absent' && !other) return undefined;
  if (!would) return { sentence: `${where}. Run 'synplug setup' (it takes the hold this kernel supports: 'synplug doctor' lists them)` };
  const h = would.hold;
  const words = holdModes()
    .find((m) => m.name === h.mode)
    // the address both ways: the local plug hold's words read `addr`, the queue hold's `addrs`
    ?.describe({ id: h.id, dev: h.dev, scope: h.scope, addr: addr ?? config.addr, addrs: [addr ?? config.addr] });
  const why = /\((.*)\)$/.exec(would.chose ?? '')?.[1];
  const sentence =
    `${where}. On this kernel 'synplug setup' sets up the ${words?.label ?? `${h.via} hold`} (${h.id}) for new connections ${words?.clients ?? ''}${why ? ` (${why})` : ''}` +
    (localOnly ? '' : `; ${INBOUND_SETUP}`);
  return {
    sentence,
    ...(other && { hold: { id: would.hold.id, mode: would.hold.mode, via: would.hold.via, dev: would.hold.dev, setup: 'synplug setup' } }),
  };
}

/**
 * How every "not set up" message (check, status, plug, protect) names the
 * inbound hold's set-up, beside 'synplug setup' (the local hold on lo):
 * clients from the network are held only by it.
 */
export const INBOUND_SETUP = "for clients from the network (arriving on a device): 'synplug setup --inbound DEV --port PORT'";

/** The kind of a mode's holds, by its name (`plug` for a name no mode registered). */
export function viaOf(mode: string): 'plug' | 'queue' {
  return holdModes().find((m) => m.name === mode)?.via ?? 'plug';
}

/**
 * Without a record here, the pieces that carry synplug's mark (another
 * state directory's hold, or one a setup interrupted here left), as
 * `check`, `status`, `plug` and `protect` name them.
 * @param inspected the holds inspected (the absent ones left out)
 */
export function markedPieces(inspected: ReadonlyArray<{ hold: Hold; inspection: HoldInspection }>): string[] {
  return inspected.flatMap((i) => i.hold.pieces.marked?.(i.inspection.observed) ?? []);
}

/** What `check`, `status`, `plug` and `protect` say first of pieces carrying synplug's mark that no record here lists ({@link markedPieces}). */
export function othersHold(config: GuardConfig, others: readonly string[]): string {
  return `synplug is not set up in the state directory ${config.stateDir} (no hold is recorded in ${join(config.stateDir, 'setup.json')}), though ${others.join(' and ')} ${others.length > 1 ? 'carry' : 'carries'} synplug's mark`;
}

/**
 * Refuse to go on unless every hold is completely set up.
 * @param what the command (`plug`, `protect`), for the message
 * @param recorded whether setup recorded any hold (without a record, and nothing of the default hold there, the
 *   message names no piece: `synplug setup` picks the hold this kernel supports, which may not be the default one;
 *   without a record, pieces carrying synplug's mark are another state directory's hold, refused whole or not)
 * @throws {NotSetUpError} naming every piece that is missing or different; without a record, the pieces carrying synplug's mark
 */
export async function requireSetUp(s: GuardSession, config: GuardConfig, what: string, recorded = true): Promise<void> {
  const inspected = await inspectHolds(s);
  const others = recorded ? [] : markedPieces(inspected);
  // No record, and pieces carrying synplug's mark: another state directory's hold (or one a setup interrupted here
  // left): never used through a directory that does not record it.
  if (others.length) {
    // the mark names whose they are: another directory's are never taken here ('synplug setup' and --setup refuse
    // them, exit 7), so only pieces the mark does not place may be a setup interrupted here, which setup takes
    const theirs = inspected.flatMap((i) => {
      const owner = i.hold.pieces.markOwner?.(i.inspection.observed);
      return owner && !owner.here ? [owner.detail] : [];
    });
    const whose = theirs.length
      ? `the hold of another state directory (${theirs.join('; ')}): give that directory's --state-dir ('synplug setup'${what === 'protect' ? ' and --setup' : ''} here refuse it)`
      : `the hold of another state directory (give its --state-dir), or of a setup interrupted in this one ('synplug setup' takes it${what === 'protect' ? ', as --setup does' : ''})`;
    throw new NotSetUpError(`${othersHold(config, others)}: ${whose}. ${what === 'protect' ? 'The command was NOT run' : 'Nothing was held'}`);
  }
  const state = combineStates(inspected.map((i) => i.inspection.state));
  if (state === 'ok') return;
  if (!recorded && state === 'absent')
    throw new NotSetUpError(
      `synplug is not set up (no hold is recorded in ${join(config.stateDir, 'setup.json')}). Run 'synplug setup' for local clients (the local hold: new connections to ${config.addr}; it takes the hold this kernel supports: 'synplug doctor' lists them${what === 'protect' ? '; --setup sets up the same first' : ''}); ${INBOUND_SETUP}${what === 'protect' ? '. The command was NOT run' : ''}`,
    );
  // Each hold that is not set up named with what it lacks; the holds that are set up never called partial (one inbound
  // hold's device gone is that hold's fault, not the local hold's).
  const broken = inspected.filter((i) => i.inspection.state !== 'ok');
  const fine = inspected.filter((i) => i.inspection.state === 'ok');
  const said = broken.map(({ hold, inspection }) => {
    const bad = (Object.values(inspection.pieces) as PieceState[])
      .filter((p) => p.status !== 'ok')
      .map((p) => `${p.piece} (${p.status}${p.detail ? `: ${p.detail}` : ''})`);
    return `${holdLabel(hold)} (${hold.id}) is ${inspection.state === 'absent' ? 'not set up' : 'only partly set up'}: ${bad.join('; ')}`;
  });
  const setUp = fine.length ? `; the ${fine.map((i) => holdLabel(i.hold)).join(' and the ')} ${fine.length > 1 ? 'are' : 'is'} set up` : '';
  // a hold whose device is gone: no setup completes it (its piece's detail says what does); the others' setups, and
  // with holds that are set up beside it, its teardown (which leaves those to protect and plug)
  const fixable = broken.filter((i) => !deviceGone(i));
  const run = [...new Set(fixable.map((i) => `'${i.hold.setupCommand()}'`))];
  const remove = fine.length ? fixable.map((i) => `'synplug teardown ${i.hold.scope === 'inbound' ? `--inbound ${i.hold.dev}` : '--local'}'`) : [];
  const fix = run.length
    ? ` Run ${run.join(' and ')}${what === 'protect' ? ', or pass --setup' : ''}${remove.length ? ` (or remove ${fixable.length > 1 ? 'them' : 'it'}: ${remove.join(' and ')})` : ''}.`
    : '';
  throw new NotSetUpError(`synplug's ${said.join('; ')}${setUp}.${fix}${what === 'protect' ? ' The command was NOT run' : ''}`.replace(/\.$/, ''));
}

/**
 * Whether every hold of the session is completely set up; with `recorded`
 * false (no setup record), also that none carries synplug's mark (another
 * state directory's hold: {@link requireSetUp} refuses it).
 * @throws {NetlinkError} a listing refused
 */
export async function isSetUp(s: GuardSession, recorded = true): Promise<boolean> {
  const inspected = await inspectHolds(s);
  if (!recorded && inspected.some((i) => (i.hold.pieces.marked?.(i.inspection.observed) ?? []).length)) return false;
  return combineStates(inspected.map((i) => i.inspection.state)) === 'ok';
}
