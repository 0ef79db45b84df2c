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
import { refuseLoopback, resolveConfig, type GuardConfig } from './config.js';
import { NotSetUpError, SetupError } from './errors.js';
import { StateStore, type HoldRecord, type LocalHoldRecord } from './state.js';
import type { GuardSession } from './session.js';
import { MissingSupportError, requireNetAdmin, type ModulePiece } from './support.js';
import { NftBatchError } from '../iptables/batch.js';
import { contextFor, definedOnly, recoverStale, withSession } from './context.js';
import { markRuleOf } from './modes/local.js';
import { resolveMarkRule } from './modes/local-nft.js';
import type { Hold, HoldInspection, SetupStep } from './modes/types.js';
import type { CheckResult, GuardOptions, PieceState, SetupOptions, SetupResult, SetupState } from './types.js';

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
 * Build (or complete, or correct) the setup of the local hold. Idempotent;
 * transactional.
 *
 * @throws {UsageError} bad options (category `usage`)
 * @throws {NotPermittedError} no CAP_NET_ADMIN (`permission`)
 * @throws {StateFileError} the state directory is unsafe, or a state file is damaged (`failure`)
 * @throws {MissingSupportError} missing modules, all named (`missing-module`)
 * @throws {NoDeviceError} no such device (`usage`)
 * @throws {ForeignQdiscError} a foreign root qdisc and no `force` (`foreign-state`)
 * @throws {SetupError} a step failed; says which, why, and what was rolled back (the cause's category)
 */
export async function setup(opts: SetupOptions = {}): Promise<SetupResult> {
  opts = opts ?? {};
  const config = resolveConfig(definedOnly(opts));
  refuseLoopback(config.addr);
  resolveMarkRule(markRuleOf(config)); // validate the nftables side before anything is sent
  requireNetAdmin('synplug setup');
  const store = new StateStore(config.stateDir);
  const dirExisted = store.checkDir();
  const oldRecord = store.readSetup();
  const localEntry = oldRecord?.holds.local;
  return withSession(config, localEntry ? { version: 2, holds: { local: localEntry } } : undefined, async (s) => {
    const recovery = await recoverStale(s, store);

    // Phase one: kernel support of every hold, all of it, before anything changes.
    const missing: ModulePiece[] = [];
    const unverified: ModulePiece[] = [];
    for (const h of s.holds) {
      const sup = await h.probeSupport();
      missing.push(...sup.missing);
      unverified.push(...sup.unverified);
    }
    if (missing.length) throw new MissingSupportError(missing, unverified);

    // Each hold's named steps, in its order (foreign state refused here, before any step).
    const plans = [];
    for (const { hold, inspection } of await inspectHolds(s)) plans.push({ hold, plan: hold.planSetup(inspection, { force: opts.force }) });
    const steps: SetupStep[] = plans.flatMap(({ plan }) => plan.order.map((name) => plan.steps[name]).filter((x): x is SetupStep => x !== undefined));

    // Phase two: run the steps; on failure, undo in reverse.
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
    const holds: Record<string, HoldRecord> = { ...oldRecord?.holds };
    for (const { hold, plan } of plans) holds[hold.id] = plan.record();
    const createdStateDir = oldRecord ? oldRecord.createdStateDir === true : !dirExisted;
    store.writeSetup({ version: 2, holds, ...(createdStateDir && { createdStateDir }) });
    if (!store.readPlug()) {
      const now = Date.now();
      store.writePlug({ version: 1, state: 'released', owner: 'manual', pid: process.pid, dev: config.dev, since: now, deadline: now, releasedAt: now });
    }
    const local = holds.local as LocalHoldRecord;
    return {
      dev: config.dev,
      addr: config.addr,
      mark: config.mark,
      limit: config.limit,
      changed: steps.length > 0,
      actions: steps.map((x) => x.what),
      addedAddress: local.addedAddress,
      ...(recovery.released && { recovered: `released a plug left buffering (${recovery.reason})` }),
      unverified: unverified.map((p) => `${p.module} (${p.what})`),
    };
  });
}

/** A kernel refusal because a kind is missing becomes the missing-module error naming the module. */
function translateSetupCause(e: unknown): unknown {
  if (e instanceof KindUnavailableError) return new MissingSupportError([{ module: e.module, what: `${e.object} ${e.kind}` }]);
  if (e instanceof NftBatchError && e.module !== undefined) return new MissingSupportError([{ module: e.module, what: 'nftables' }]);
  return e;
}

/**
 * Verify the setup without changing anything.
 * @returns `state` ok / absent / partial, and each piece's status
 * @throws {UsageError} bad options
 * @throws {NotPermittedError} no CAP_NET_ADMIN (`permission`): nftables refuses even to list without it
 * @throws {StateFileError} the state directory is unsafe, or a state file is damaged
 * @throws {NoDeviceError} no such device
 * @throws {NetlinkError} a listing was refused
 */
export async function check(opts: GuardOptions = {}): Promise<CheckResult> {
  const { config, store, record } = contextFor(opts, 'synplug check');
  return withSession(config, record, async (s) => {
    await recoverStale(s, store);
    const inspected = await inspectHolds(s);
    return { state: combineStates(inspected.map((i) => i.inspection.state)), dev: config.dev, addr: config.addr, pieces: piecesOf(inspected) };
  });
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
  throw new NotSetUpError(
    `synplug is ${state === 'absent' ? 'not set up' : 'only partly set up'} on ${config.dev}: ${bad.join('; ')}. Run 'synplug setup'${what === 'protect' ? ', or pass --setup. The command was NOT run' : ''}`,
  );
}

/** Whether every hold of the session is completely set up. @throws {NetlinkError} a listing refused */
export async function isSetUp(s: GuardSession): Promise<boolean> {
  return combineStates((await inspectHolds(s)).map((i) => i.inspection.state)) === 'ok';
}
