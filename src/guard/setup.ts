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
import { KindUnavailableError } from '../tc/index.js';
import { checkEntryOptions, refuseLoopback, resolveConfig, type GuardConfig } from './config.js';
import { NotSetUpError, SetupError } from './errors.js';
import { StateStore, type HoldRecord, type LocalHoldRecord } from './state.js';
import type { GuardSession } from './session.js';
import { MissingSupportError, requireNetAdmin } from './support.js';
import { NftBatchError } from '../iptables/batch.js';
import { contextFor, definedOnly, recoverStale, withSession } from './context.js';
import { markRuleOf } from './modes/local.js';
import { resolveMarkRule } from './modes/local-nft.js';
import type { Hold, HoldInspection, HoldSetupPlan, SetupStep } from './modes/types.js';
import { localMode } from './modes/local.js';
import {
  findSynplugIfbs,
  ifbNameFor,
  InboundHold,
  inboundRecordId,
  openInboundHold,
  requireInboundDevice,
  resolveInboundDevice,
  unrecordedIfbMismatch,
  validateInbound,
  type InboundHoldRecord,
} from './modes/inbound.js';
import { NoDeviceError } from './errors.js';
import { UsageError } from '../netlink/errors.js';
import type { SetupRecord } from './state.js';
import type { CheckOptions, CheckResult, HoldSelector, PieceState, SetupOptions, SetupResult, SetupState, UnrecordedIfb } from './types.js';

/** The state of several holds together: `ok` when all are, `absent` when none is set up at all, else `partial`. */
export function combineStates(states: readonly SetupState[]): SetupState {
  if (states.every((s) => s === 'ok')) return 'ok';
  if (states.every((s) => s === 'absent')) return 'absent';
  return 'partial';
}

/** Every hold of a session inspected, in the session's order. @throws {NetlinkError} a listing refused */
export async function inspectHolds(s: GuardSession): Promise<Array<{ hold: Hold; inspection: HoldInspection }>> {
  const out: Array<{ hold: Hold; inspection: HoldInspection }> = [];
  for (const hold of s.holds) out.push({ hold, inspection: await hold.inspect() });
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
 * @throws {SetupError} a step failed; says which, why, and what was rolled back (the cause's category)
 */
export async function setup(opts: SetupOptions = {}): Promise<SetupResult> {
  checkEntryOptions('setup', opts);
  opts = opts ?? {};
  const { inbound: inboundOpts, force, ...rest } = opts;
  const inbound = inboundOpts !== undefined ? validateInbound(inboundOpts) : undefined;
  const config = resolveConfig(definedOnly(rest));
  if (!inbound) {
    refuseLoopback(config.addr);
    resolveMarkRule(markRuleOf(config)); // validate the nftables side before anything is sent
  }
  requireNetAdmin('synplug setup');
  const store = new StateStore(config.stateDir);
  const dirExisted = store.checkDir();
  const oldRecord = store.readSetup(inbound ? { inbound: inbound.dev } : undefined);
  // The session opens every recorded hold: a plug of any of them left buffering is released first.
  return withSession(config, oldRecord, async (s) => {
    const recovery = await recoverStale(s, store);
    let recordId: string | undefined;
    let target: Hold;
    if (inbound) {
      // The device's own name keys the hold (an altname given is the same hold); a device renamed since its
      // setup is found by index, and its hold is keyed by the new name from now on.
      const found = await resolveInboundDevice(s.route, inbound.dev);
      if (!found) throw new NoDeviceError(inbound.dev, undefined, '--inbound');
      recordId = inboundRecordId(oldRecord, found);
      const rec = oldRecord?.holds[recordId] as InboundHoldRecord | undefined;
      target = await openInboundHold(s, { ...inbound, dev: found.name }, config.limit, rec);
    } else target = s.holds.find((h) => h.id === 'local') ?? (await localMode.open(s, config, oldRecord?.holds.local));

    if (target instanceof InboundHold) await target.refuseNameClash();
    // Phase one: kernel support, all of it, before anything changes.
    const sup = await target.probeSupport();
    if (sup.missing.length) throw new MissingSupportError(sup.missing, sup.unverified);

    // The named steps, in order (foreign state refused here, before any step).
    const plan: HoldSetupPlan = target.planSetup(await target.inspect(), { force });
    const steps: SetupStep[] = plan.order.map((name) => plan.steps[name]).filter((x): x is SetupStep => x !== undefined);

    // Phase two: run the steps; on failure, undo in reverse.
    await runSetupSteps(steps);
    const holds: Record<string, HoldRecord> = { ...oldRecord?.holds };
    if (recordId !== undefined && recordId !== target.id) delete holds[recordId];
    const entry = plan.record();
    holds[target.id] = entry;
    const createdStateDir = oldRecord ? oldRecord.createdStateDir === true : !dirExisted;
    store.writeSetup({ version: 2, holds, ...(createdStateDir && { createdStateDir }) });
    if (!store.readPlug()) {
      const now = Date.now();
      store.writePlug({ version: 1, state: 'released', owner: 'manual', pid: process.pid, dev: config.dev, since: now, deadline: now, releasedAt: now });
    }
    const common = {
      hold: target.id,
      changed: steps.length > 0,
      actions: steps.map((x) => x.what),
      ...(recovery.released && { recovered: `released a plug left buffering (${recovery.reason})` }),
      unverified: sup.unverified.map((p) => `${p.module} (${p.what})`),
    };
    if (inbound) {
      const r = entry as InboundHoldRecord;
      return {
        dev: inbound.dev,
        addr: inbound.addrs.join(' '),
        mark: config.mark,
        limit: config.limit,
        addedAddress: false,
        inbound: { dev: r.dev, ifb: r.ifb, ports: r.ports, addrs: r.addrs, classifier: r.classifier, families: r.families },
        ...common,
      };
    }
    const local = entry as LocalHoldRecord;
    return { dev: config.dev, addr: config.addr, mark: config.mark, limit: config.limit, addedAddress: local.addedAddress, ...common };
  });
}

/**
 * Run setup's steps in order; when one fails, undo the steps already taken,
 * in reverse order (a step that fails half-way cleans up after itself).
 * @throws {SetupError} which step failed, why, and what was rolled back (the cause's category)
 */
export async function runSetupSteps(steps: readonly SetupStep[]): Promise<void> {
  const done: SetupStep[] = [];
  for (const step of steps) {
    try {
      await step.run();
      done.push(step);
    } catch (e) {
      const rolledBack: string[] = [];
      const failures: string[] = [];
      for (const d of done.reverse()) {
        if (!d.undo) continue;
        try {
          await d.undo.run();
          rolledBack.push(d.undo.what);
        } catch (e2) {
          failures.push(`${d.undo.what}: ${(e2 as Error).message}`);
        }
      }
      throw new SetupError(step.what, translateSetupCause(e), rolledBack, failures);
    }
  }
}

/** A kernel refusal because a kind is missing becomes the missing-module error naming the module. */
function translateSetupCause(e: unknown): unknown {
  if (e instanceof KindUnavailableError) return new MissingSupportError([{ module: e.module, what: `${e.object} ${e.kind}` }]);
  if (e instanceof NftBatchError && e.module !== undefined) return new MissingSupportError([{ module: e.module, what: 'nftables' }]);
  return e;
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
    const h = s.holds.find((x) => x.id === 'local') ?? (await localMode.open(s, s.config, undefined));
    return [{ hold: h, inspection: await h.inspect() }];
  }
  if (sel.inbound !== undefined) {
    const found = await resolveInboundDevice(s.route, sel.inbound);
    const id = inboundRecordId(record, found ?? { name: sel.inbound });
    const h = s.holds.find((x) => x.id === id);
    if (h) return [{ hold: h, inspection: await h.inspect() }];
    await requireInboundDevice(s, sel.inbound); // no record names it: a device setup --inbound would refuse is an error
    return [{ absent: { id, mode: 'inbound', dev: found?.name ?? sel.inbound } }];
  }
  return inspectHolds(s);
}

/**
 * IFBs of synplug's that no record lists (a crash between creating one and
 * recording it; a removed setup.json): those carrying synplug's alias whose
 * name and root qdisc are synplug's too (see {@link unrecordedIfbMismatch}),
 * for the holds `sel` covers (none with `local`). `teardown` removes them.
 * @throws {NetlinkError} a listing was refused
 */
export async function findUnrecordedIfbs(s: GuardSession, record: SetupRecord | undefined, sel: HoldSelector): Promise<UnrecordedIfb[]> {
  if (sel.local) return [];
  const recorded = new Set(Object.values(record?.holds ?? {}).flatMap((h) => (h.mode === 'inbound' ? [(h as InboundHoldRecord).ifb] : [])));
  const target = sel.inbound !== undefined ? ((await resolveInboundDevice(s.route, sel.inbound)) ?? { name: sel.inbound }) : undefined;
  const out: UnrecordedIfb[] = [];
  for (const f of await findSynplugIfbs(s.route)) {
    if (recorded.has(f.ifb)) continue;
    if (target && f.dev !== target.name && !('ifindex' in target && f.ifb === ifbNameFor(target.ifindex))) continue;
    if (await unrecordedIfbMismatch(s.route, f)) continue;
    out.push({ ifb: f.ifb, dev: f.dev, teardown: `synplug teardown --inbound ${f.dev}` });
  }
  return out;
}

/** The state of a selected hold. */
export const stateOf = (x: SelectedHold): SetupState => ('absent' in x ? 'absent' : x.inspection.state);

/**
 * Verify the setup without changing anything: every hold, or the one
 * `local` / `inbound` selects. The top-level `dev` and `addr` are the local
 * hold's, present only when the local hold is among those reported. An IFB
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
export async function check(opts: CheckOptions & { local: true }): Promise<CheckResult & { dev: string; addr: string }>;
export async function check(opts?: CheckOptions): Promise<CheckResult>;
export async function check(opts: CheckOptions = {}): Promise<CheckResult> {
  checkEntryOptions('check', opts);
  const { inbound, local, ...rest } = opts ?? {};
  checkSelector({ inbound, local }, 'check');
  const { config, store, record } = contextFor(rest, 'synplug check', { inbound });
  return withSession(config, record, async (s) => {
    await recoverStale(s, store);
    const selected = await selectedHolds(s, record, { inbound, local });
    const inspected = selected.flatMap((x) => ('absent' in x ? [] : [x]));
    const hasLocal = inspected.some((i) => i.hold.id === 'local');
    const unrecorded = await findUnrecordedIfbs(s, record, { inbound, local });
    return {
      // an IFB of synplug's that no record lists is a leftover: partly set up (exit 2), until teardown removes it
      state: combineStates([...selected.map(stateOf), ...(unrecorded.length ? (['partial'] as const) : [])]),
      ...(unrecorded.length && { unrecorded }),
      ...(hasLocal && { dev: config.dev, addr: config.addr }),
      pieces: piecesOf(inspected),
      holds: selected.map((x) => {
        const h = 'absent' in x ? x.absent : x.hold;
        const ports = h instanceof InboundHold ? { ports: h.spec.ports } : {};
        return { id: h.id, mode: h.mode, dev: h.dev, state: stateOf(x), ...ports };
      }),
    };
  });
}

/** What to run to set a hold up, for the messages: `synplug setup` (local) or `synplug setup --inbound DEV --port P...` */
export function setupCommandFor(h: { mode: string; dev: string; spec?: { ports: readonly number[] } }): string {
  if (h.mode !== 'inbound') return 'synplug setup';
  return `synplug setup --inbound ${h.dev} ${h.spec ? h.spec.ports.map((p) => `--port ${p}`).join(' ') : '--port PORT'}`;
}

/**
 * Refuse to go on unless every hold is completely set up.
 * @param what the command (`plug`, `protect`), for the message
 * @throws {NotSetUpError} naming every piece that is missing or different
 */
export async function requireSetUp(s: GuardSession, config: GuardConfig, what: string): Promise<void> {
  const inspected = await inspectHolds(s);
  const state = combineStates(inspected.map((i) => i.inspection.state));
  if (state === 'ok') return;
  const bad = piecesOf(inspected)
    .filter((p) => p.status !== 'ok')
    .map((p) => `${p.piece} (${p.status}${p.detail ? `: ${p.detail}` : ''})`);
  const where = s.holds.map((h) => (h.id === 'local' ? config.dev : h.id)).join(', ');
  const run = [...new Set(inspected.filter((i) => i.inspection.state !== 'ok').map((i) => `'${setupCommandFor(i.hold as InboundHold)}'`))];
  throw new NotSetUpError(
    `synplug is ${state === 'absent' ? 'not set up' : 'only partly set up'} on ${where}: ${bad.join('; ')}. Run ${run.join(' and ')}${what === 'protect' ? ', or pass --setup. The command was NOT run' : ''}`,
  );
}

/** Whether every hold of the session is completely set up. @throws {NetlinkError} a listing refused */
export async function isSetUp(s: GuardSession): Promise<boolean> {
  return combineStates((await inspectHolds(s)).map((i) => i.inspection.state)) === 'ok';
}
