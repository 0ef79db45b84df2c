/**
 * Pieces every action kind shares: verdicts (TC_ACT_*) as tc names them,
 * `tc_gen` (the head of every action's parameter struct) and `struct tcf_t`
 * (the action's times), from linux/pkt_cls.h.
 *
 * @module
 */
import { NetlinkDecodeError, UsageError } from '../../netlink/errors.js';
import {
  TC_ACT_UNSPEC,
  TC_ACT_OK,
  TC_ACT_RECLASSIFY,
  TC_ACT_SHOT,
  TC_ACT_PIPE,
  TC_ACT_STOLEN,
  TC_ACT_TRAP,
  TC_ACT_GOTO_CHAIN,
  TC_ACT_JUMP,
  TC_ACT_EXT_VAL_MASK,
  __TC_ACT_EXT_SHIFT,
  TC_GEN_LEN,
  USER_HZ,
  TCA_ACT_MAX_PRIO,
} from './constants.js';
import type { ActionSpec, ControlAction } from './types.js';

const NAMES: Record<string, number> = {
  continue: TC_ACT_UNSPEC,
  drop: TC_ACT_SHOT,
  shot: TC_ACT_SHOT,
  pass: TC_ACT_OK,
  ok: TC_ACT_OK,
  reclassify: TC_ACT_RECLASSIFY,
  pipe: TC_ACT_PIPE,
  stolen: TC_ACT_STOLEN,
  trap: TC_ACT_TRAP,
};

/**
 * A verdict (tc's word, `"goto chain N"`, `"jump N"`, or a TC_ACT_* number) -> the `int` the kernel takes.
 * @throws {UsageError} an unknown word, or a number that is not a C int
 */
export function parseControlAction(v: ControlAction, what: string): number {
  if (typeof v === 'number') {
    if (!Number.isInteger(v) || v < -0x80000000 || v > 0x7fffffff) throw new UsageError(`${what}: ${v} is not a verdict (a C int)`);
    return v;
  }
  if (typeof v !== 'string') throw new UsageError(`${what}: a verdict must be a word such as "pass" or "drop", not ${typeof v}`);
  const t = v.trim();
  if (t in NAMES) return NAMES[t];
  let m = /^goto\s+chain\s+(\d+)$/.exec(t);
  if (m) return extended(TC_ACT_GOTO_CHAIN, Number(m[1]), what);
  m = /^jump\s+(\d+)$/.exec(t);
  if (m) return extended(TC_ACT_JUMP, Number(m[1]), what);
  throw new UsageError(
    `${what}: unknown verdict ${JSON.stringify(v)} (expected pass, ok, drop, shot, continue, reclassify, pipe, stolen, trap, "goto chain N" or "jump N")`,
  );
}

function extended(opcode: number, n: number, what: string): number {
  if (n > TC_ACT_EXT_VAL_MASK) throw new UsageError(`${what}: ${n} is too large (at most ${TC_ACT_EXT_VAL_MASK})`);
  return opcode | n;
}

/**
 * A verdict as tc -j prints it: `{ type: "pass" }`, `{ type: "goto", chain: N }`, `{ type: "jump", jump: N }`
 * (iproute2's action_n2a; unknown numbers print as their decimal text).
 */
export function controlActionJson(action: number): { type: string; chain?: number; jump?: number } {
  const op = (action >>> __TC_ACT_EXT_SHIFT) << __TC_ACT_EXT_SHIFT;
  if (op === TC_ACT_GOTO_CHAIN) return { type: 'goto', chain: action & TC_ACT_EXT_VAL_MASK };
  if (op === TC_ACT_JUMP) return { type: 'jump', jump: action & TC_ACT_EXT_VAL_MASK };
  switch (action) {
    case TC_ACT_UNSPEC:
      return { type: 'continue' };
    case TC_ACT_OK:
      return { type: 'pass' };
    case TC_ACT_SHOT:
      return { type: 'drop' };
    case TC_ACT_RECLASSIFY:
      return { type: 'reclassify' };
    case TC_ACT_PIPE:
      return { type: 'pipe' };
    case TC_ACT_STOLEN:
      return { type: 'stolen' };
    case TC_ACT_TRAP:
      return { type: 'trap' };
    default:
      return { type: String(action) };
  }
}

/** A decoded verdict as tc's text: `pass`, `goto chain 3`, `jump 2`. */
export function controlActionText(c: unknown): string {
  const o = c as { type?: string; chain?: number; jump?: number } | undefined;
  if (!o || typeof o.type !== 'string') return '';
  if (o.chain !== undefined) return `${o.type} chain ${o.chain}`;
  if (o.jump !== undefined) return `${o.type} ${o.jump}`;
  return o.type;
}

/**
 * Write a `tc_gen` head (20 bytes: index, capab, action, refcnt, bindcnt) at `b[0..20)`.
 * ```c
 * #define tc_gen __u32 index; __u32 capab; int action; int refcnt; int bindcnt
 * ```
 */
export function writeTcGen(b: Buffer, index: number, action: number): void {
  b.writeUInt32LE(index >>> 0, 0);
  b.writeUInt32LE(0, 4);
  b.writeInt32LE(action, 8);
  b.writeInt32LE(0, 12);
  b.writeInt32LE(0, 16);
}

/** The decoded `tc_gen` head of an action's parameters. */
export interface TcGen {
  /** action instance index */
  index: number;
  /** TC_ACT_* verdict */
  action: number;
  /** references to the instance */
  ref: number;
  /** filters bound to it */
  bind: number;
}

/**
 * Read a `tc_gen` head at `buf[at..]` (the struct must hold `need` bytes, at least 20).
 * @param len the attribute's payload length
 * @param hdr absolute offset of the attribute header, for errors
 * @throws {NetlinkDecodeError} shorter than `need`
 */
export function readTcGen(buf: Buffer, at: number, len: number, need: number, hdr: number, what: string): TcGen {
  if (len < need) throw new NetlinkDecodeError(`${what} needs ${need} bytes, has ${len}`, hdr);
  return { index: buf.readUInt32LE(at), action: buf.readInt32LE(at + 8), ref: buf.readInt32LE(at + 12), bind: buf.readInt32LE(at + 16) };
}

/**
 * Write what every action decodes the same way after its own fields: its
 * `tc_gen`'s `index`, `ref` and `bind`, then, with `stats`, the times of its
 * TCA_*_TM attribute (`struct tcf_t`, {@link readTcfT}) when there is one.
 * @param g the action's decoded `tc_gen` ({@link readTcGen})
 * @param tm the offset of TCA_*_TM's payload in `buf` (negative: absent) and its length
 */
export function writeGenAndTimes(out: Record<string, unknown>, g: TcGen, buf: Buffer, tm: { at: number; len: number }, stats: boolean): void {
  out.index = g.index;
  out.ref = g.ref;
  out.bind = g.bind;
  if (stats && tm.at >= 0) readTcfT(buf, tm.at, tm.len, out);
}

/** Size of `tc_gen`, re-exported for the kinds. */
export const TC_GEN = TC_GEN_LEN;

/**
 * `struct tcf_t` (linux/pkt_cls.h), times in clock_t ticks (USER_HZ) since
 * the event, written into `out` as tc -j does: whole seconds, only the
 * non-zero ones, in tc's order (installed, last_used, first_used, expires).
 * ```c
 * struct tcf_t { __u64 install; __u64 lastuse; __u64 expires; __u64 firstuse; };
 * ```
 * A struct shorter than 32 bytes is read as far as it goes.
 */
export function readTcfT(buf: Buffer, at: number, len: number, out: Record<string, unknown>): void {
  const u64 = (off: number) => (off + 8 <= len ? buf.readUInt32LE(at + off) + buf.readUInt32LE(at + off + 4) * 0x100000000 : 0);
  const install = u64(0);
  const lastuse = u64(8);
  const expires = u64(16);
  const firstuse = u64(24);
  if (install) out.installed = Math.floor(install / USER_HZ);
  if (lastuse) out.last_used = Math.floor(lastuse / USER_HZ);
  if (firstuse) out.first_used = Math.floor(firstuse / USER_HZ);
  if (expires) out.expires = Math.floor(expires / USER_HZ);
}

/** The times as tc prints them: ` installed 10 sec used 1 sec firstused 1 sec` (empty without them). */
export function formatTimes(a: Record<string, unknown>): string {
  let s = '';
  if (a.installed !== undefined) s += ` installed ${a.installed} sec`;
  if (a.last_used !== undefined) s += ` used ${a.last_used} sec`;
  if (a.first_used !== undefined) s += ` firstused ${a.first_used} sec`;
  if (a.expires !== undefined) s += ` expires ${a.expires} sec`;
  return s;
}

/**
 * Check a spec's keys against the kind's: a misspelt field is refused.
 * @throws {UsageError} not an object, or a key the kind does not take
 */
export function checkSpecKeys(spec: unknown, kind: string, keys: readonly string[]): asserts spec is ActionSpec {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) throw new UsageError(`action '${kind}': the spec must be an object`);
  for (const k of Object.keys(spec)) {
    if (k === 'kind' || (spec as Record<string, unknown>)[k] === undefined) continue;
    if (!keys.includes(k)) throw new UsageError(`action '${kind}' has no field ${JSON.stringify(k)} (it takes ${keys.join(', ')})`);
  }
}

/**
 * The optional `index` of a spec (tc_gen.index; 0 lets the kernel pick).
 * @throws {UsageError} not a u32
 */
export function specIndex(spec: ActionSpec, kind: string): number {
  const i = spec.index ?? 0;
  if (!Number.isInteger(i) || i < 0 || i > 0xffffffff) throw new UsageError(`action '${kind}': index ${String(i)} is not a u32`);
  return i;
}

/** Most actions a list may hold (TCA_ACT_MAX_PRIO). */
export const MAX_ACTIONS = TCA_ACT_MAX_PRIO;
