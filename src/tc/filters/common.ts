/**
 * Pieces shared by filter kinds: classid text, handle text, the list of
 * actions attached to a filter (TCA_*_ACT, kinds only), and classifier flags.
 *
 * @module
 */
import { UsageError } from '../../netlink/errors.js';
import { parseAttributes, type AttributeList } from '../../netlink/attributes.js';
import { formatHandle, parseHandle } from '../handle.js';
import {
  TCA_CLS_FLAGS_IN_HW, TCA_CLS_FLAGS_NOT_IN_HW, TCA_CLS_FLAGS_SKIP_HW, TCA_CLS_FLAGS_SKIP_SW,
} from '../constants.js';

/** TCA_ACT_KIND inside each action of a TCA_*_ACT list (linux/pkt_cls.h `enum { TCA_ACT_UNSPEC, TCA_ACT_KIND, ...}`). */
export const TCA_ACT_KIND = 1;

/**
 * Decode an action list (TCA_FW_ACT, TCA_U32_ACT, TCA_MATCHALL_ACT): one
 * nested attribute per action, its type the action's order.
 * @returns `[{ order, kind }]` (this library does not decode action options)
 * @throws {NetlinkDecodeError} malformed nested attributes
 */
export function decodeActions(data: Buffer, base: number): Array<{ order: number; kind?: string }> {
  const out: Array<{ order: number; kind?: string }> = [];
  for (const a of parseAttributes(data, base)) {
    const inner: AttributeList = parseAttributes(a.data, a.offset + 4);
    const kind = inner.str(TCA_ACT_KIND);
    out.push(kind === undefined ? { order: a.type } : { order: a.type, kind });
  }
  return out;
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

