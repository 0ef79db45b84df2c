/**
 * Pieces shared by filter kinds: classid text, handle text, the list of
 * actions attached to a filter (TCA_*_ACT, kinds only), and classifier flags.
 *
 * @module
 */
import { UsageError } from '../../netlink/errors.js';
import { decodeActionList } from '../actions/list.js';
import type { ActionEntry, ActionSpec } from '../actions/types.js';
import { formatHandle, parseHandle } from '../handle.js';
import { TCA_CLS_FLAGS_IN_HW, TCA_CLS_FLAGS_NOT_IN_HW, TCA_CLS_FLAGS_SKIP_HW, TCA_CLS_FLAGS_SKIP_SW } from '../constants.js';

/**
 * Decode an action list (TCA_FW_ACT, TCA_U32_ACT, TCA_MATCHALL_ACT): one
 * nested attribute per action, its type the action's order. Each action is
 * decoded by its kind's module in src/tc/actions (see actions/list.ts).
 * @param base absolute offset of `data[0]`
 * @returns tc -j's `actions` array
 * @throws {NetlinkDecodeError} malformed nested attributes
 */
export function decodeActions(data: Buffer, base: number, stats = true): ActionEntry[] {
  return decodeActionList(data, 0, data.length, base, stats);
}

/** Classifier flags (TCA_CLS_FLAGS_*) -> tc -j booleans (skip_hw, skip_sw, in_hw | not_in_hw). */
export function decodeClsFlags(flags: number, out: Record<string, unknown>): void {
  if (flags & TCA_CLS_FLAGS_SKIP_HW) out.skip_hw = true;
  if (flags & TCA_CLS_FLAGS_SKIP_SW) out.skip_sw = true;
  if (flags & TCA_CLS_FLAGS_IN_HW) out.in_hw = true;
  else if (flags & TCA_CLS_FLAGS_NOT_IN_HW) out.not_in_hw = true;
}

/** Classifier flags as tc's text. */
export function formatClsFlags(o: Record<string, unknown>, sep = ' '): string {
  let s = '';
  for (const k of ['skip_hw', 'skip_sw', 'in_hw', 'not_in_hw']) if (o[k]) s += `${k}${sep}`;
  return s;
}

/**
 * A class id given as tc text (`"1:4"`) or a u32.
 * @throws {UsageError}
 */
export function classidOf(v: string | number, what: string): number {
  if (typeof v === 'number') {
    if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new UsageError(`${what}: ${v} is not a u32 class id`);
    return v >>> 0;
  }
  return parseHandle(v, what);
}

/** A class id as tc prints it (`sprint_tc_classid`). */
export const classidText = formatHandle;

/**
 * A u32 in tc's `get_u32(..., 0)` notation: decimal, `0x` hex or `0` octal.
 * @throws {UsageError}
 */
export function parseU32Text(text: string, what: string): number {
  const t = text.trim();
  let v: number;
  if (/^0x[0-9a-f]+$/i.test(t)) v = parseInt(t.slice(2), 16);
  else if (/^0[0-7]+$/.test(t)) v = parseInt(t.slice(1), 8);
  else if (/^[0-9]+$/.test(t)) v = Number(t);
  else throw new UsageError(`invalid ${what} ${JSON.stringify(text)}: expected a number (decimal, 0x hex or 0 octal)`);
  if (v > 0xffffffff) throw new UsageError(`invalid ${what} ${JSON.stringify(text)}: larger than 0xffffffff`);
  return v;
}

/**
 * The options every SYN match builder takes ({@link flowerSynMatch},
 * {@link u32SynMatch}): TCP segments with SYN set and ACK clear to these
 * destination ports, of one address family.
 */
export interface SynMatchOptions {
  /** 'inet' (IPv4, filter protocol "ip") or 'inet6' (IPv6, protocol "ipv6") */
  family: 'inet' | 'inet6';
  /** TCP destination port(s), 1..65535 */
  dport: number | readonly number[];
  /** destination address or prefix of that family ("169.254.0.1", "fd00::/64"); any when absent */
  dst?: string;
  /** actions run on a match (e.g. mirred egress redirect to an IFB) */
  actions?: readonly ActionSpec[];
}

/**
 * The checks a SYN match builder makes first, the same for every kind: an
 * object, no key outside `keys`, a family of 'inet' or 'inet6', at least one
 * port. The ports themselves are the caller's to check (1..65535), in its
 * own order.
 * @param what the builder, for messages (e.g. `"u32 SYN match"`)
 * @param o what the caller passed
 * @param keys the option keys the builder takes (the {@link SynMatchOptions} keys, and its own)
 * @returns the ports as a list (unchecked)
 * @throws {UsageError} not an object, an unknown key, a bad family, no port
 */
export function synMatchPorts(what: string, o: SynMatchOptions, keys: readonly string[]): readonly number[] {
  if (typeof o !== 'object' || o === null) throw new UsageError(`${what}: options must be an object { family, dport, dst?, actions? }`);
  for (const k of Object.keys(o)) {
    if (!keys.includes(k)) throw new UsageError(`${what} has no option ${JSON.stringify(k)} (it takes ${keys.join(', ')})`);
  }
  if (o.family !== 'inet' && o.family !== 'inet6') throw new UsageError(`${what}: family must be 'inet' or 'inet6', not ${JSON.stringify(o.family)}`);
  const list = Array.isArray(o.dport) ? o.dport : [o.dport];
  if (list.length === 0) throw new UsageError(`${what}: give at least one dport`);
  return list as readonly number[];
}
