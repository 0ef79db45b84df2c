/**
 * `fw` filter (cls_fw): matches the packet's firewall mark (skb->mark,
 * e.g. set by an nftables `meta mark set` rule) against the filter handle.
 *
 * - tcm_handle is the mark; tcm_info is `(prio << 16) | htons(protocol)`.
 * - TCA_OPTIONS nests TCA_FW_CLASSID (u32 class id), TCA_FW_MASK (u32, when
 *   a mask is given; the kernel's default is 0xFFFFFFFF), TCA_FW_INDEV
 *   (string), TCA_FW_ACT (actions), TCA_FW_POLICE. (linux/pkt_cls.h)
 *
 * tc sends TCA_FW_MASK first, then TCA_FW_CLASSID, then TCA_FW_INDEV; so do we.
 *
 * @module
 */
import { AttributeView, nested } from '../../netlink/attributes.js';
import { UsageError } from '../../netlink/errors.js';
import { TCA_OPTIONS, TCA_FW_CLASSID, TCA_FW_MASK, TCA_FW_INDEV, TCA_FW_ACT, TCA_FW_POLICE } from '../constants.js';
import { fieldCodec } from '../fields.js';
import type { FilterKind, OptionTypes } from '../types.js';
import { decodeActions, parseU32Text } from './common.js';
import { formatActionList } from '../actions/list.js';
import type { ActionEntry } from '../actions/types.js';

/** Options of an fw filter (the mark itself is the filter's handle). */
export interface FwOptions {
  /** class to send matching packets to: tc text ("1:4") or u32 */
  classid?: string | number;
  /** mask applied to the mark before comparing (default all bits) */
  mask?: number;
  /** match only packets received on this device */
  indev?: string;
}

/** The options; tc sends the mask first, and prints classid, police, indev (the mark and mask as `fw`). */
const F = fieldCodec('fw', [
  { key: 'classid', type: TCA_FW_CLASSID, unit: 'classid' },
  { key: 'mask', type: TCA_FW_MASK, unit: 'mask' },
  { key: 'police', type: TCA_FW_POLICE, unit: 'flag', decodeOnly: true },
  { key: 'indev', type: TCA_FW_INDEV, unit: 'name', label: 'input dev' },
]);
const PRINTED = ['classid', 'police', 'indev'];

function encodeOptions(o: FwOptions): Buffer[] {
  const kids = F.encode(o as Record<string, unknown>, ['mask', 'classid', 'indev']);
  return kids.length ? [nested(TCA_OPTIONS, kids)] : [];
}

/**
 * TCA_OPTIONS -> `{ fw: { mark: "0x1", mask: "0xffffffff" }, classid: "1:4", indev?, actions? }`
 * as tc -j prints it (the `fw` object only when the handle or a mask is set).
 * @throws {NetlinkDecodeError} short attributes
 */
function decodeOptions(buf: Buffer, start: number, end: number, base: number, info: { handle: number }): Record<string, unknown> {
  const T = new AttributeView(buf, start, end, base);
  const out: Record<string, unknown> = {};
  const handle = info.handle;
  if (handle || T.has(TCA_FW_MASK)) {
    const mask = T.u32(TCA_FW_MASK) ?? 0xffffffff;
    out.fw = { mark: hex0x(handle), mask: hex0x(mask) };
  }
  F.decode(T, out, PRINTED);
  const act = T.bin(TCA_FW_ACT);
  if (act) out.actions = decodeActions(act, T.headerOffset(TCA_FW_ACT) + 4);
  return out;
}

/** C's `%#x`: "0" for zero, else "0x..." */
function hex0x(v: number): string {
  return v === 0 ? '0' : `0x${(v >>> 0).toString(16)}`;
}

function formatOptions(o: Record<string, unknown>): string {
  let s = '';
  const fw = o.fw as { mark: string; mask: string } | undefined;
  if (fw) {
    const mark = fw.mark === '0' ? '0x0' : fw.mark;
    s += fw.mask !== '0xffffffff' ? `handle ${mark}/${fw.mask === '0' ? '0x0' : fw.mask} ` : `handle ${mark} `;
  }
  s += F.format(o, ['classid', 'indev']);
  if (Array.isArray(o.actions)) s += formatActionList(o.actions as ActionEntry[]);
  return s;
}

/** cls_fw. */
export const fw: FilterKind<FwOptions> = {
  kind: 'fw',
  optionTypes: F.optionTypes as OptionTypes<FwOptions>,
  encodeOptions,
  decodeOptions,
  formatHandle: (h) => `0x${h.toString(16)}`,
  parseHandle: (t) => {
    if (t.includes('/')) throw new UsageError(`fw handle ${JSON.stringify(t)}: give the mark as the handle and the mask as the "mask" option`);
    return parseU32Text(t, 'fw handle (mark)');
  },
  formatOptions,
};

declare module '../types.js' {
  interface FilterOptionsByKind {
    /** fw: {@link FwOptions} */
    fw: FwOptions;
  }
}
