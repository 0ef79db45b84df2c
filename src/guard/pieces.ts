/**
 * The planner: one way to set up, check, dry-run, tear down and arm every
 * hold, from the hold's list of pieces (modes/types.ts's {@link HoldPieces}).
 *
 * - check: the hold observes the kernel once, each piece judges itself; an
 *   armed piece absent outside a hold is as wanted (it exists only around a hold);
 * - setup (and its dry run): each permanent piece's steps, in order; run, a
 *   failing step undoes the steps taken before it, in reverse (nothing is
 *   left half-applied);
 * - teardown: let go of what is held, then each piece removes itself, in
 *   reverse order, only what is synplug's;
 * - arm and disarm: the armed pieces added (phase one of protect and plug)
 *   and removed (after the last release); a standing piece found missing
 *   is added in phase one too, and stays.
 *
 * @module
 */
import { KindUnavailableError } from '../tc/index.js';
import { NftBatchError } from '../iptables/batch.js';
import { SetupError } from './errors.js';
import { SynplugError } from '../netlink/errors.js';
import { MissingSupportError } from './support.js';
import { StateFileError } from './errors.js';
import type { Hold, HoldInspection, HoldPieces, Piece, PieceLifetime, SetupStep, TeardownWords } from './modes/types.js';
import type { PieceState, SetupState } from './types.js';
import type { HoldRecord } from './state.js';

/** What an armed piece that is absent says in `check`: as wanted, outside a hold. */
const ARMED_ABSENT = 'absent outside a hold: added for each hold and removed after its release';
/** What a standing piece that is absent says in `check`: the next hold adds it, a setup now. */
const STANDING_ABSENT = "absent: the next hold adds it; 'synplug setup' adds it now, outside a reload";

/** A piece's judged state; an armed one also says so (`lifetime`), and absent is as wanted outside a hold; a standing one absent is added by the next hold. */
function judged<O>(p: Piece<O>, o: O): PieceState {
  const st = p.judge(o);
  if (p.lifetime === 'standing')
    return st.status === 'missing' ? { ...st, status: 'ok', detail: st.detail ? `${STANDING_ABSENT}; ${st.detail}` : STANDING_ABSENT } : st;
  if (p.lifetime !== 'armed') return st;
  // what else the piece says of its absence (what is in the way of the next hold) stays said
  return st.status === 'missing'
    ? { ...st, status: 'ok', detail: st.detail ? `${ARMED_ABSENT}; ${st.detail}` : ARMED_ABSENT, lifetime: 'armed' }
    : { ...st, lifetime: 'armed' };
}

/**
 * Read the kernel and judge every piece of a hold.
 * @returns the pieces in `check`'s order, the hold's state, what was observed
 * @throws {NetlinkError} a listing refused
 */
export async function inspectHold(hold: Hold): Promise<HoldInspection> {
  return judgeHold(hold.pieces, await hold.pieces.observe());
}

/** Judge every piece of a hold in what was observed (no request sent). */
export function judgeHold<O>(h: HoldPieces<O>, observed: O): HoldInspection {
  const order = h.listOrder ?? h.list.map((p) => p.key);
  const inOrder = (states: Map<string, PieceState>) => Object.fromEntries(order.flatMap((k) => (states.has(k) ? [[k, states.get(k)!]] : [])));
  // a standing piece that is there is a piece of a setup; missing, it alone does not make one partial
  const optional = h.list
    .filter((p) => p.lifetime === 'armed' || (p.lifetime === 'standing' && p.judge(observed).status === 'missing') || p.optional?.(observed))
    .map((p) => p.key);
  const pieces = inOrder(new Map(h.list.map((p) => [p.key, judged(p, observed)] as const)));
  const state = summarizePieces(pieces, optional);
  // A hold not set up at all: its armed pieces are missing too (not "as wanted outside a hold").
  if (state === 'absent')
    return {
      pieces: inOrder(
        new Map(h.list.map((p) => [p.key, p.lifetime === 'armed' ? { ...p.judge(observed), lifetime: 'armed' as const } : p.judge(observed)] as const)),
      ),
      state,
      observed,
    };
  return { pieces, state, observed };
}

/**
 * The state of a hold from its pieces: `ok` when every piece is, `absent`
 * when every piece that makes a setup is missing, else `partial`.
 * @param optional the keys of pieces that alone do not make a setup
 */
export function summarizePieces(pieces: Readonly<Record<string, PieceState>>, optional: readonly string[] = []): SetupState {
  const all = Object.entries(pieces);
  if (all.every(([, p]) => p.status === 'ok')) return 'ok';
  return all.filter(([k]) => !optional.includes(k)).every(([, p]) => p.status === 'missing') ? 'absent' : 'partial';
}

/** A piece's step(s) as a list. */
const stepsOf = (x: SetupStep | readonly SetupStep[] | undefined): SetupStep[] => (x === undefined ? [] : [x].flat());

/** A plan of setup: its steps in order (each once), each piece's own, and the record entry to keep once they ran. */
export interface PiecePlan {
  /** the steps, in the order they run */
  steps: SetupStep[];
  /** each piece's steps, by key (a step two pieces share is under both) */
  byKey: Record<string, SetupStep[]>;
  /** the record entry, once every step ran */
  record(): HoldRecord;
}

/**
 * The steps that take a hold from what was inspected to what setup wants:
 * each permanent and standing piece's, in order (a step two pieces share
 * runs once; with `--force` a piece's step replaces what is in its way).
 * Armed pieces are not set up: they come with each hold. Sends nothing.
 * @throws {SynplugError} what is in the way (the hold's {@link HoldPieces.refuse})
 */
export function planHold(h: HoldPieces, inspection: HoldInspection, options: { force?: boolean } = {}): PiecePlan {
  const o = inspection.observed;
  h.refuse?.(o, options);
  const c = h.begin(o);
  const steps: SetupStep[] = [];
  const byKey: Record<string, SetupStep[]> = {};
  for (const p of h.list) {
    if (p.lifetime === 'armed') continue;
    const own = stepsOf(p.add(o, p.judge(o), c));
    if (own.length) byKey[p.key] = own;
    for (const st of own) if (!steps.includes(st)) steps.push(st);
  }
  return { steps, byKey, record: () => h.record(c) };
}

/**
 * Run setup's steps in order; when one fails, undo the steps already taken,
 * in reverse order (a step that fails half-way cleans up after itself).
 * With `interrupted`, asked before each step: when it names a signal (a
 * SIGINT or SIGTERM that arrived meanwhile), the steps taken are undone the
 * same way and no further step runs: nothing is left half-applied.
 * @param interrupted the signal that arrived since the steps began, if any
 * @throws {SetupError} which step failed, why, and what was rolled back (the cause's category)
 * @throws {SynplugError} (`interrupted`) a signal arrived: what was rolled back said
 */
export async function runSteps(steps: readonly SetupStep[], interrupted?: () => string | undefined): Promise<void> {
  const done: SetupStep[] = [];
  for (const step of steps) {
    const signal = interrupted?.();
    if (signal !== undefined) {
      const u = await undoSteps(done);
      throw new SynplugError(
        `interrupted by ${signal} before '${step.what}': ${u.rolledBack.length ? `rolled back ${u.rolledBack.join('; ')}` : 'nothing had been changed'}${
          u.failures.length ? `; could NOT roll back ${u.failures.join('; ')}` : ''
        }; nothing was recorded`,
        'interrupted',
      );
    }
    try {
      await step.run();
      done.push(step);
    } catch (e) {
      const u = await undoSteps(done);
      throw new SetupError(step.what, translateSetupCause(e), u.rolledBack, u.failures);
    }
  }
}

/** Undo steps taken, in reverse order; what was undone, and what could not be (with why). Never throws. */
async function undoSteps(done: readonly SetupStep[]): Promise<{ rolledBack: string[]; failures: string[] }> {
  const rolledBack: string[] = [];
  const failures: string[] = [];
  for (const d of [...done].reverse()) {
    if (!d.undo) continue;
    try {
      await d.undo.run();
      rolledBack.push(d.undo.what);
    } catch (e2) {
      failures.push(`${d.undo.what}: ${(e2 as Error).message}`);
    }
  }
  return { rolledBack, failures };
}

/** A kernel refusal because a kind is missing becomes the missing-module error naming the module. */
function translateSetupCause(e: unknown): unknown {
  if (e instanceof KindUnavailableError) return new MissingSupportError([{ module: e.module, what: `${e.object} ${e.kind}` }]);
  if (e instanceof NftBatchError && e.module !== undefined) return new MissingSupportError([{ module: e.module, what: 'nftables' }]);
  return e;
}

/**
 * Remove exactly what setup added: let go of what is held first, then each
 * piece removes itself (armed ones too, when left), in reverse order.
 * @returns what was removed and what was kept, and why
 * @throws {NetlinkError} the kernel refused a removal
 */
export async function teardownHold(hold: Hold, inspection: HoldInspection): Promise<TeardownWords> {
  const h = hold.pieces;
  const o = inspection.observed;
  const out: TeardownWords = { removed: [], kept: [] };
  await h.letGo?.(o, out);
  const c = h.begin(o);
  for (const p of [...h.list].reverse()) await p.remove?.(o, c, out);
  return out;
}

/**
 * A hold's pieces with every removal guarded by whose the hold is: when
 * `other` says it is another state directory's (by the mark on its kernel
 * objects: teardown-marks.ts), no piece is removed (teardown, the removal
 * of armed pieces after a release or by a recovery) and `letGo` releases
 * nothing, saying whose it is once in `kept`. Its pieces are that
 * directory's, whatever a record here says (a setup.json copied from it).
 * @param other why the hold is another directory's (the words `kept` says), or undefined when it is not
 */
export function sparingOthers<O, C>(h: HoldPieces<O, C>, other: (o: O) => string | undefined): HoldPieces<O, C> {
  return {
    ...h,
    list: h.list.map((p) =>
      p.remove ? { ...p, remove: (o: O, c: C, out: TeardownWords) => (other(o) === undefined ? p.remove!(o, c, out) : Promise.resolve()) } : p,
    ),
    async letGo(o, out) {
      const why = other(o);
      if (why !== undefined) out.kept.push(why);
      else await h.letGo?.(o, out);
    },
  };
}

/** A hold whose kernel objects carry another state directory's mark ({@link othersHolds}). */
export interface OthersHold {
  hold: Hold;
  /** whose, in words (the mark on it, and this directory's) */
  detail: string;
  /** how to remove it by hand when no state directory records it any more */
  removeBy: string;
}

/**
 * The holds whose kernel objects carry another state directory's mark
 * ({@link HoldPieces.markOwner} `here: false`: the local plug hold's table
 * comment, the inbound hold's IFB alias), among those a release reaches by
 * what sits in the kernel: a plug's release acts on whatever plug is there,
 * whereas a queue hold's goes to this state directory's own holder, which
 * never ends another directory's hold (queue.ts says whose its table is).
 * Through a state directory that cannot be read (unsafe: the state files
 * do not decide a release, holds.ts), none is told apart.
 * @throws {NetlinkError} a listing was refused
 */
export async function othersHolds(holds: readonly Hold[]): Promise<OthersHold[]> {
  const out: OthersHold[] = [];
  for (const hold of holds) {
    if (hold.releaseAction().kind !== 'route' || !hold.pieces.markOwner) continue;
    let o: unknown;
    try {
      o = await hold.pieces.observe();
    } catch (e) {
      if (e instanceof StateFileError) continue;
      throw e;
    }
    const owner = hold.pieces.markOwner(o);
    if (owner && !owner.here) out.push({ hold, detail: owner.detail, removeBy: owner.removeBy });
  }
  return out;
}

/**
 * The refusal of a command through a state directory that is not the one
 * whose setup made the hold: `foreign-state` (exit 7), naming the hold,
 * whose it is, which --state-dir to use, and how to remove it by hand.
 * @param what the command (`release`)
 * @param nothing what was not done (`Nothing was released`)
 */
export function othersHoldsError(others: readonly OthersHold[], stateDir: string, what: string, nothing: string): SynplugError {
  const list = others.map((o) => `the ${o.hold.mode} hold on ${o.hold.dev} (${o.detail})`).join('; ');
  const removeBy = others.map((o) => o.removeBy).join('; ');
  return new SynplugError(
    `${list}: another state directory's hold, set up through that directory and not ${stateDir}; a ${what} through this one would act on it under that directory's feet. Use that directory's --state-dir for it. If no state directory records it any more (it was removed), remove it by hand (${removeBy}). ${nothing}`,
    'foreign-state',
  );
}

/** The keys of a hold's pieces of one lifetime, with their names (for `setup --dry-run`). */
export function piecesOfLifetime(h: HoldPieces, observed: unknown, lifetime: PieceLifetime): string[] {
  return h.list.filter((p) => p.lifetime === lifetime).map((p) => p.judge(observed).piece);
}

/**
 * The steps that arm a hold from what was observed: each armed piece, and
 * each standing piece, that is missing or differs, added or replaced, in
 * order (a piece's {@link Piece.arm} where it has one). Sends nothing.
 * @throws {SynplugError} what is in the way of the hold (a piece's `arm`)
 */
export function armSteps(h: HoldPieces, o: unknown): SetupStep[] {
  const c = h.begin(o);
  const steps: SetupStep[] = [];
  for (const p of h.list) {
    if (p.lifetime === 'permanent') continue;
    const st = p.judge(o);
    // a step several pieces share (one nftables batch for a chain and its rules) runs once
    if (st.status !== 'ok') for (const s of stepsOf((p.arm ?? p.add).call(p, o, st, c))) if (!steps.includes(s)) steps.push(s);
  }
  return steps;
}

/**
 * Add the armed pieces that are missing (phase one of a hold, and again under
 * the lease lock: another holder's release may have removed them meanwhile).
 * A failure undoes what this call added: nothing half-armed.
 * @returns whether anything was added
 * @throws {SetupError} a step failed (what was rolled back said)
 * @throws {NetlinkError} the listing was refused
 */
export async function armHold(h: HoldPieces): Promise<boolean> {
  if (h.list.every((p) => p.lifetime === 'permanent')) return false; // nothing to read
  const steps = armSteps(h, await h.observe());
  await runSteps(steps);
  // a step that changed a device's root qdisc: the handshakes it cut short complete before anything is held
  const settle = Math.max(0, ...steps.map((s) => s.settleMs ?? 0));
  if (settle > 0) await new Promise((r) => setTimeout(r, settle));
  return steps.length > 0;
}

/**
 * Remove the armed pieces that are there (after the last release).
 * @throws {NetlinkError} a listing or a removal was refused
 */
export async function disarmHold(h: HoldPieces): Promise<void> {
  const armed = h.list.filter((p) => p.lifetime === 'armed');
  if (!armed.length) return; // nothing to read
  const o = await h.observe();
  const c = h.begin(o);
  const out: TeardownWords = { removed: [], kept: [] };
  for (const p of [...armed].reverse()) await p.remove?.(o, c, out);
}
