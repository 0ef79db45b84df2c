/**
 * `u32` filter (cls_u32): matches 32-bit words of the packet.
 *
 * ```c
 * struct tc_u32_key {      // linux/pkt_cls.h, 16 bytes
 *   __be32 mask;           // network byte order
 *   __be32 val;
 *   int    off;            // byte offset of the 32-bit word, a multiple of 4
 *   int    offmask;        // non-zero: relative to the next header
 * };
 * struct tc_u32_sel {      // TCA_U32_SEL, 16 bytes + nkeys keys
 *   unsigned char flags;   // TC_U32_TERMINAL 1, _OFFSET 2, _VAROFFSET 4, _EAT 8
 *   unsigned char offshift;
 *   unsigned char nkeys;
 *   __be16 offmask;        // (after one byte of padding)
 *   __u16  off;
 *   short  offoff;
 *   short  hoff;
 *   __be32 hmask;
 *   struct tc_u32_key keys[];
 * };
 * ```
 * A u32 handle is `htid:hash:node` (12, 8 and 12 bits; `TC_U32_HTID` etc.).
 *
 * Encoding builds keys the way tc's `pack_key` does: 16- and 8-bit matches
 * are shifted into their aligned 32-bit word, and matches on the same word
 * merge.
 *
 * @module
 */
import { AttributeView, bin, le64, nested, str, u32 } from '../../netlink/attributes.js';
import { NetlinkDecodeError, UsageError } from '../../netlink/errors.js';
import {
  TCA_OPTIONS,
  TCA_U32_CLASSID,
  TCA_U32_HASH,
  TCA_U32_LINK,
  TCA_U32_DIVISOR,
  TCA_U32_SEL,
  TCA_U32_POLICE,
  TCA_U32_ACT,
  TCA_U32_INDEV,
  TCA_U32_PCNT,
  TCA_U32_MARK,
  TCA_U32_FLAGS,
  TC_U32_TERMINAL,
  TC_U32_OFFSET,
  TC_U32_VAROFFSET,
  TC_U32_EAT,
  TC_U32_HTID,
  TC_U32_USERHTID,
  TC_U32_HASH,
  TC_U32_NODE,
  TCA_CLS_FLAGS_SKIP_HW,
  TCA_CLS_FLAGS_SKIP_SW,
} from '../constants.js';
import { parseIntArg } from '../args.js';
import type { FilterKind } from '../types.js';
import { classidOf, classidText, decodeClsFlags, formatClsFlags, synMatchPorts, type SynMatchOptions } from './common.js';
import { decodeActionList, encodeActionList, formatActionList } from '../actions/list.js';
import type { ActionEntry, ActionSpec } from '../actions/types.js';
import { parseIpAddress } from '../../netlink/route/addr.js';

/** A raw key: the 32-bit word at `off` (a multiple of 4), compared under `mask`; numbers as the word reads big-endian. */
export interface U32Key {
  /** e.g. 0x0a000001 for 10.0.0.1 */
  value: number;
  mask: number;
  /** byte offset, multiple of 4 (may be negative) */
  off: number;
  /** relative to the next header (tc's `at nexthdr+OFF`) */
  nexthdr?: boolean;
}

/** A match as tc's `match` selectors write it. */
export type U32Match =
  | { type: 'u32' | 'u16' | 'u8'; value: number; mask: number; at: number; nexthdr?: boolean }
  | { type: 'ip'; field: 'src' | 'dst'; prefix: string }
  | { type: 'ip'; field: 'protocol' | 'tos' | 'dsfield' | 'ihl' | 'sport' | 'dport' | 'icmp_type' | 'icmp_code'; value: number; mask?: number };

/** Options of a u32 filter. */
export interface U32Options {
  /** matches, packed into keys as tc does */
  match?: readonly U32Match[];
  /** raw keys, appended after `match` */
  keys?: readonly U32Key[];
  /** class to send matching packets to ("1:20"); sets TC_U32_TERMINAL as tc does */
  classid?: string | number;
  /** create a hash table with this many buckets (1..256) instead of a key node */
  divisor?: number;
  /** hash table (and bucket) to put the node in, u32 handle text ("800:", "1:2:") */
  ht?: string;
  /** hash table to continue in after a match, u32 handle text ("1:") */
  link?: string;
  /** input device */
  indev?: string;
  skip_hw?: boolean;
  skip_sw?: boolean;
  /**
   * Where the next header starts, for a node that links to another table
   * (tc's `offset [plus N] [at OFF mask M shift S] [eat]`): the kernel reads
   * the big-endian u16 at `at` (from the current header), masks it with
   * `mask`, shifts it right by `shift`, adds `plus`, rounds down to 4; `eat`
   * moves the current header there, so the linked table's keys are relative
   * to it. IPv4's `at 0 mask 0x0f00 shift 6` is the header length (IHL × 4).
   */
  offset?: U32Offset;
  /** actions (TCA_U32_ACT) run when the node matches; sets TC_U32_TERMINAL as tc does */
  actions?: readonly ActionSpec[];
}

/** The header-offset fields of `struct tc_u32_sel` (see {@link U32Options.offset}). */
export interface U32Offset {
  /** constant added (sel.off, TC_U32_OFFSET), bytes */
  plus?: number;
  /** where to read the u16 (sel.offoff, TC_U32_VAROFFSET), bytes, may be negative */
  at?: number;
  /** mask of that u16 (sel.offmask, network order on the wire) */
  mask?: number;
  /** right shift (sel.offshift), 0..15 */
  shift?: number;
  /** move the current header to the computed offset (TC_U32_EAT) */
  eat?: boolean;
}

/** Every key a u32 options object may have. */
export const U32_OPTION_KEYS = ['match', 'keys', 'classid', 'divisor', 'ht', 'link', 'indev', 'skip_hw', 'skip_sw', 'offset', 'actions'] as const;

/* ---- handles ---- */

/**
 * Parse a u32 handle as tc's `get_u32_handle`: `htid:hash:node` in hex (each
 * part optional, `800:`, `800::800`, `:1`), or a raw `0x...` u32.
 * @throws {UsageError}
 */
export function parseU32Handle(text: string): number {
  const t = text.trim();
  const bad = (why: string) =>
    new UsageError(`invalid u32 handle ${JSON.stringify(text)}: ${why} (expected HTID:HASH:NODE in hex, e.g. "800:", "800::800", or 0x...)`);
  if (!t.includes(':')) {
    if (/^0x[0-9a-f]{1,8}$/i.test(t)) return parseInt(t.slice(2), 16) >>> 0;
    throw bad('no ":"');
  }
  const parts = t.split(':');
  if (parts.length > 3) throw bad('too many ":"');
  const num = (p: string, max: number, name: string) => {
    if (p === '') return 0;
    if (!/^[0-9a-f]+$/i.test(p)) throw bad(`${name} is not hex`);
    const v = parseInt(p, 16);
    if (v >= max) throw bad(`${name} must be below 0x${max.toString(16)}`);
    return v;
  };
  const htid = num(parts[0], 0x1000, 'table id');
  const hash = num(parts[1] ?? '', 0x100, 'bucket');
  const node = num(parts[2] ?? '', 0x1000, 'node');
  return ((htid << 20) | (hash << 12) | node) >>> 0;
}

/** Print a u32 handle as tc's `sprint_u32_handle` (`800:`, `800::800`, `none` for 0). */
export function formatU32Handle(h: number): string {
  if (h === 0) return 'none';
  let s = '';
  const htid = TC_U32_HTID(h);
  const hash = TC_U32_HASH(h);
  const node = TC_U32_NODE(h);
  if (htid) s += `${(htid >>> 20).toString(16)}:`;
  if (node | hash) {
    if (hash) s += hash.toString(16);
    if (node) s += `:${node.toString(16)}`;
  }
  return s;
}

/* ---- keys ---- */

interface Sel {
  flags: number;
  keys: Array<{ val: number; mask: number; off: number; offmask: number }>;
}

function packKey(sel: Sel, key: number, mask: number, off: number, offmask: number): void {
  key = (key & mask) >>> 0;
  for (const k of sel.keys) {
    if (k.off === off && k.offmask === offmask) {
      const intersect = (mask & k.mask) >>> 0;
      if (((key ^ k.val) & intersect) >>> 0) throw new UsageError(`u32: matches at offset ${off} contradict each other`);
      k.val = (k.val | key) >>> 0;
      k.mask = (k.mask | mask) >>> 0;
      return;
    }
  }
  if (sel.keys.length >= 128) throw new UsageError('u32: more than 128 keys');
  if (off % 4) throw new UsageError(`u32: offset ${off} is not a multiple of 4`);
  sel.keys.push({ val: key, mask: mask >>> 0, off, offmask });
}

function packKey16(sel: Sel, key: number, mask: number, off: number, offmask: number): void {
  if (key > 0xffff || mask > 0xffff) throw new UsageError(`u32: u16 match value 0x${key.toString(16)}/0x${mask.toString(16)} is wider than 16 bits`);
  if (off % 2) throw new UsageError(`u32: u16 match at odd offset ${off}`);
  if ((off & 3) === 0) {
    key *= 0x10000;
    mask *= 0x10000;
  }
  packKey(sel, key >>> 0, mask >>> 0, off - (off & 3), offmask);
}

function packKey8(sel: Sel, key: number, mask: number, off: number, offmask: number): void {
  if (key > 0xff || mask > 0xff) throw new UsageError(`u32: u8 match value 0x${key.toString(16)}/0x${mask.toString(16)} is wider than 8 bits`);
  const shift = [24, 16, 8, 0][off & 3];
  packKey(sel, (key * 2 ** shift) >>> 0, (mask * 2 ** shift) >>> 0, off - (off & 3), offmask);
}

function ipv4Prefix(prefix: string): { addr: number; mask: number } {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:\/(\d{1,2}))?$/.exec(prefix.trim());
  if (!m) throw new UsageError(`u32: ${JSON.stringify(prefix)} is not an IPv4 address or prefix (a.b.c.d[/len])`);
  const bytes = m.slice(1, 5).map(Number);
  if (bytes.some((b) => b > 255)) throw new UsageError(`u32: ${JSON.stringify(prefix)} is not an IPv4 address`);
  const len = m[5] === undefined ? 32 : Number(m[5]);
  if (len > 32) throw new UsageError(`u32: prefix length ${len} is over 32`);
  const mask = len === 0 ? 0 : (0xffffffff * 2 ** (32 - len)) % 0x100000000;
  return { addr: ((bytes[0] << 24) | (bytes[1] << 16) | (bytes[2] << 8) | bytes[3]) >>> 0, mask: mask >>> 0 };
}

/** The fields of `match ip FIELD VALUE MASK`: size in bits, offset in the IPv4 header, default mask. */
export const IP_FIELDS: Record<string, { size: 8 | 16; off: number; defMask: number }> = {
  tos: { size: 8, off: 1, defMask: 0xff },
  dsfield: { size: 8, off: 1, defMask: 0xff },
  ihl: { size: 8, off: 0, defMask: 0x0f },
  protocol: { size: 8, off: 9, defMask: 0xff },
  sport: { size: 16, off: 20, defMask: 0xffff },
  dport: { size: 16, off: 22, defMask: 0xffff },
  icmp_type: { size: 8, off: 20, defMask: 0xff },
  icmp_code: { size: 8, off: 21, defMask: 0xff },
};

const MATCH_TYPES = ['u32', 'u16', 'u8', 'ip'];

/**
 * Check that `m` is one of the {@link U32Match} shapes.
 * @throws {UsageError} a string, an object without a known `type`, or an `ip` match without a field
 */
function checkMatch(m: unknown, i: number): asserts m is U32Match {
  const where = `u32: match ${i + 1}`;
  if (typeof m !== 'object' || m === null || Array.isArray(m)) {
    throw new UsageError(
      `${where} is ${JSON.stringify(m)}: each match must be an object such as { type: 'ip', field: 'dport', value: 80 } or { type: 'u8', value: 2, mask: 0x12, at: 33 }`,
    );
  }
  const t = (m as { type?: unknown }).type;
  if (typeof t !== 'string' || !MATCH_TYPES.includes(t)) {
    throw new UsageError(
      `${where} ${JSON.stringify(m)} has no valid "type" (expected one of ${MATCH_TYPES.join(', ')}; e.g. { type: 'ip', field: 'dst', prefix: '169.254.0.1/32' })`,
    );
  }
  const allowed = t === 'ip' ? ['type', 'field', 'prefix', 'value', 'mask'] : ['type', 'value', 'mask', 'at', 'nexthdr'];
  for (const k of Object.keys(m)) {
    if (!allowed.includes(k)) throw new UsageError(`${where} (type '${t}') has no field ${JSON.stringify(k)} (it takes ${allowed.join(', ')})`);
  }
  if (t === 'ip') {
    const f = (m as { field?: unknown }).field;
    if (f !== 'src' && f !== 'dst' && !(typeof f === 'string' && f in IP_FIELDS)) {
      throw new UsageError(`${where}: ip field ${JSON.stringify(f)} is not one of src, dst, ${Object.keys(IP_FIELDS).join(', ')}`);
    }
    if ((f === 'src' || f === 'dst') && typeof (m as { prefix?: unknown }).prefix !== 'string')
      throw new UsageError(`${where}: ip ${f} needs a prefix string ("a.b.c.d[/len]")`);
    if (f !== 'src' && f !== 'dst' && (m as { value?: unknown }).value === undefined) throw new UsageError(`${where}: ip ${f} needs a value`);
  } else {
    for (const k of ['value', 'mask', 'at']) {
      if ((m as Record<string, unknown>)[k] === undefined) throw new UsageError(`${where}: a ${t} match needs ${k}`);
    }
  }
}

function addMatch(sel: Sel, m: U32Match): void {
  if (m.type === 'ip') {
    if (m.field === 'src' || m.field === 'dst') {
      const { addr, mask } = ipv4Prefix((m as { prefix: string }).prefix);
      packKey(sel, addr, mask, m.field === 'src' ? 12 : 16, 0);
      return;
    }
    const f = IP_FIELDS[m.field];
    if (!f) throw new UsageError(`u32: unknown ip field ${JSON.stringify(m.field)}`);
    const mm = m as { value: number; mask?: number };
    const v = parseIntArg(mm.value, `u32 ip ${m.field}`, 0, f.size === 8 ? 0xff : 0xffff);
    const mask = mm.mask === undefined ? f.defMask : parseIntArg(mm.mask, `u32 ip ${m.field} mask`, 0, f.size === 8 ? 0xff : 0xffff);
    if (f.size === 8) packKey8(sel, v, mask, f.off, 0);
    else packKey16(sel, v, mask, f.off, 0);
    return;
  }
  const max = m.type === 'u32' ? 0xffffffff : m.type === 'u16' ? 0xffff : 0xff;
  const v = parseIntArg(m.value, `u32 ${m.type} value`, 0, max);
  const mask = parseIntArg(m.mask, `u32 ${m.type} mask`, 0, max);
  const at = parseIntArg(m.at, `u32 ${m.type} at`, -0x80000000, 0x7fffffff);
  const offmask = m.nexthdr ? -1 : 0;
  if (m.type === 'u32') packKey(sel, v, mask, at, offmask);
  else if (m.type === 'u16') packKey16(sel, v, mask, at, offmask);
  else if (m.type === 'u8') packKey8(sel, v, mask, at, offmask);
  else throw new UsageError(`u32: unknown match type ${JSON.stringify((m as { type: unknown }).type)}`);
}

/**
 * Options -> TCA_OPTIONS { [CLASSID] [DIVISOR] [LINK] [INDEV] [HASH] [SEL] [FLAGS] }.
 * @throws {UsageError} bad matches, handles, or skip_hw with skip_sw
 */
function encodeOptions(o: U32Options): Buffer[] {
  if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new UsageError('u32: options must be an object (or a list of tc words)');
  for (const k of Object.keys(o)) {
    if ((o as Record<string, unknown>)[k] !== undefined && !(U32_OPTION_KEYS as readonly string[]).includes(k)) {
      throw new UsageError(`filter kind 'u32' has no option ${JSON.stringify(k)} (it takes ${U32_OPTION_KEYS.join(', ')})`);
    }
  }
  if (o.match !== undefined && !Array.isArray(o.match)) {
    throw new UsageError(`u32: match must be an array of matches (e.g. [{ type: 'ip', field: 'dst', prefix: '169.254.0.1' }]), not ${JSON.stringify(o.match)}`);
  }
  if (o.keys !== undefined && !Array.isArray(o.keys)) throw new UsageError('u32: keys must be an array of { value, mask, off }');
  for (const k of ['skip_hw', 'skip_sw'] as const) {
    if (o[k] !== undefined && typeof o[k] !== 'boolean') throw new UsageError(`u32: ${k} must be true or false, not ${JSON.stringify(o[k])}`);
  }
  for (const k of ['ht', 'link', 'indev'] as const) {
    if (o[k] !== undefined && typeof o[k] !== 'string')
      throw new UsageError(`u32: ${k} must be text (${k === 'indev' ? 'a device name' : 'a u32 handle such as "1:"'}), not ${typeof o[k]}`);
  }
  const sel: Sel = { flags: 0, keys: [] };
  (o.match ?? []).forEach((m, i) => {
    checkMatch(m, i);
    addMatch(sel, m);
  });
  for (const k of o.keys ?? []) {
    if (typeof k !== 'object' || k === null) throw new UsageError('u32: each key must be an object { value, mask, off }');
    packKey(
      sel,
      parseIntArg(k.value, 'u32 key value'),
      parseIntArg(k.mask, 'u32 key mask'),
      parseIntArg(k.off, 'u32 key off', -0x80000000, 0x7fffffff),
      k.nexthdr ? -1 : 0,
    );
  }
  const kids: Buffer[] = [];
  if (o.classid !== undefined) {
    kids.push(u32(TCA_U32_CLASSID, classidOf(o.classid, 'u32 classid')));
    sel.flags |= TC_U32_TERMINAL;
  }
  if (o.divisor !== undefined) kids.push(u32(TCA_U32_DIVISOR, parseIntArg(o.divisor, 'u32 divisor', 1, 256)));
  if (o.link !== undefined) {
    const l = parseU32Handle(o.link);
    if (TC_U32_NODE(l)) throw new UsageError(`u32: link ${JSON.stringify(o.link)} must name a hash table, not a node`);
    kids.push(u32(TCA_U32_LINK, l));
  }
  if (o.indev !== undefined) kids.push(str(TCA_U32_INDEV, o.indev));
  if (o.ht !== undefined) kids.push(u32(TCA_U32_HASH, (parseU32Handle(o.ht) & 0xfffff000) >>> 0));
  if (o.actions !== undefined) {
    kids.push(encodeActionList(TCA_U32_ACT, o.actions));
    sel.flags |= TC_U32_TERMINAL;
  }
  const off = encodeOffset(o.offset);
  sel.flags |= off.flags;
  if (sel.keys.length || o.classid !== undefined || o.actions !== undefined || off.flags) {
    const b = Buffer.alloc(16 + 16 * sel.keys.length);
    b[0] = sel.flags;
    b[1] = off.shift;
    b[2] = sel.keys.length;
    b.writeUInt16BE(off.mask, 4);
    b.writeUInt16LE(off.plus, 6);
    b.writeInt16LE(off.at, 8);
    sel.keys.forEach((k, i) => {
      const at = 16 + 16 * i;
      b.writeUInt32BE(k.mask, at);
      b.writeUInt32BE(k.val, at + 4);
      b.writeInt32LE(k.off, at + 8);
      b.writeInt32LE(k.offmask, at + 12);
    });
    kids.push(bin(TCA_U32_SEL, b));
  }
  let flags = 0;
  if (o.skip_hw) flags |= TCA_CLS_FLAGS_SKIP_HW;
  if (o.skip_sw) flags |= TCA_CLS_FLAGS_SKIP_SW;
  if (flags === (TCA_CLS_FLAGS_SKIP_HW | TCA_CLS_FLAGS_SKIP_SW)) throw new UsageError('u32: skip_hw and skip_sw are mutually exclusive');
  if (flags) kids.push(u32(TCA_U32_FLAGS, flags));
  return [nested(TCA_OPTIONS, kids)];
}

/**
 * The header-offset fields of the selector.
 * @throws {UsageError} out-of-range values
 */
function encodeOffset(o: U32Offset | undefined): { flags: number; shift: number; mask: number; plus: number; at: number } {
  const r = { flags: 0, shift: 0, mask: 0, plus: 0, at: 0 };
  if (o === undefined) return r;
  if (typeof o !== 'object' || o === null) throw new UsageError('u32: offset must be an object { plus?, at?, mask?, shift?, eat? }');
  for (const k of Object.keys(o)) {
    if (!['plus', 'at', 'mask', 'shift', 'eat'].includes(k))
      throw new UsageError(`u32: offset has no field ${JSON.stringify(k)} (it takes plus, at, mask, shift, eat)`);
  }
  if (o.plus !== undefined) {
    r.plus = parseIntArg(o.plus, 'u32 offset plus', 0, 0xffff);
    r.flags |= TC_U32_OFFSET;
  }
  if (o.at !== undefined || o.mask !== undefined || o.shift !== undefined) {
    r.at = parseIntArg(o.at ?? 0, 'u32 offset at', -0x8000, 0x7fff);
    r.mask = parseIntArg(o.mask ?? 0, 'u32 offset mask', 0, 0xffff);
    r.shift = parseIntArg(o.shift ?? 0, 'u32 offset shift', 0, 15);
    r.flags |= TC_U32_VAROFFSET;
  }
  if (o.eat) r.flags |= TC_U32_EAT;
  return r;
}

/* ---- decoding ---- */

const SEL_LEN = 16;
const KEY_LEN = 16;

/**
 * TCA_OPTIONS -> tc -j's u32 options: `fh`, `order`, `ht_divisor` or
 * `key_ht`/`bkt`, `flowid`, `terminal` (TC_U32_TERMINAL without a class),
 * `link`, flags, counters (`rule_hit`, `success`), `fwmark_*`, and
 * `match: [{ value, mask, offmask, off }]` (tc repeats a "match" key; here it is an array).
 * @throws {NetlinkDecodeError} a selector shorter than its nkeys claim, or short attributes
 */
function decodeOptions(buf: Buffer, start: number, end: number, base: number, info: { handle: number; stats?: boolean }): Record<string, unknown> {
  const T = new AttributeView(buf, start, end, base);
  const out: Record<string, unknown> = {};
  const handle = info.handle;
  if (handle) out.fh = formatU32Handle(handle);
  if (TC_U32_NODE(handle)) out.order = TC_U32_NODE(handle);
  let s = T.at(TCA_U32_SEL);
  let nkeys = 0;
  let flags = 0;
  if (s >= 0) {
    const len = T.size(TCA_U32_SEL);
    if (len < SEL_LEN) throw new NetlinkDecodeError(`tc_u32_sel needs ${SEL_LEN} bytes, has ${len}`, T.headerOffset(TCA_U32_SEL));
    nkeys = buf[s + 2];
    flags = buf[s];
    if (len < SEL_LEN + nkeys * KEY_LEN)
      throw new NetlinkDecodeError(`tc_u32_sel claims ${nkeys} keys but has room for ${Math.floor((len - SEL_LEN) / KEY_LEN)}`, T.headerOffset(TCA_U32_SEL));
  } else s = -1;
  const div = T.u32(TCA_U32_DIVISOR);
  if (div !== undefined) out.ht_divisor = div;
  else {
    const htid = T.u32(TCA_U32_HASH);
    if (htid !== undefined) {
      out.key_ht = TC_U32_USERHTID(htid).toString(16);
      out.bkt = TC_U32_HASH(htid).toString(16);
    }
  }
  const classid = T.u32(TCA_U32_CLASSID);
  if (classid !== undefined) out.flowid = classidText(classid);
  if (flags & TC_U32_TERMINAL) out.terminal = true;
  const link = T.u32(TCA_U32_LINK);
  if (link !== undefined) out.link = formatU32Handle(link);
  const cf = T.u32(TCA_U32_FLAGS);
  if (cf !== undefined) decodeClsFlags(cf, out);
  const pc = T.at(TCA_U32_PCNT);
  let pcLen = 0;
  if (pc >= 0) {
    pcLen = T.size(TCA_U32_PCNT);
    if (pcLen < 16) throw new NetlinkDecodeError(`tc_u32_pcnt needs 16 bytes, has ${pcLen}`, T.headerOffset(TCA_U32_PCNT));
    if (s >= 0) {
      out.rule_hit = le64(buf, pc);
      out.success = le64(buf, pc + 8);
    }
  }
  const mk = T.at(TCA_U32_MARK);
  if (mk >= 0 && T.size(TCA_U32_MARK) >= 12) {
    out.fwmark_value = `0x${buf.readUInt32LE(mk).toString(16)}`;
    out.fwmark_mask = `0x${buf.readUInt32LE(mk + 4).toString(16)}`;
    out.fwmark_success = buf.readInt32LE(mk + 8);
  }
  if (s >= 0) {
    const match: Array<Record<string, unknown>> = [];
    for (let i = 0; i < nkeys; i++) {
      const k = s + SEL_LEN + i * KEY_LEN;
      const m: Record<string, unknown> = {
        value: buf.readUInt32BE(k + 4).toString(16),
        mask: buf.readUInt32BE(k).toString(16),
        offmask: buf.readInt32LE(k + 12) ? 'nexthdr+' : '',
        off: buf.readInt32LE(k + 8),
      };
      if (pc >= 0 && pcLen >= 16 + 8 * (i + 1)) m.success = le64(buf, pc + 16 + 8 * i);
      match.push(m);
    }
    if (match.length) out.match = match;
    if (flags & (TC_U32_VAROFFSET | TC_U32_OFFSET)) {
      if (flags & TC_U32_VAROFFSET) {
        out.offset_mask = buf.readUInt16BE(s + 4).toString(16);
        out.offset_shift = buf[s + 1];
        out.offset_off = buf.readInt16LE(s + 8);
      }
      const plus = buf.readUInt16LE(s + 6);
      if (plus) out.plus = plus;
    }
    if (flags & TC_U32_EAT) out.eat = true;
    const hmask = buf.readUInt32BE(s + 12);
    if (hmask) {
      out.hash_mask = hmask.toString(16);
      out.hash_off = buf.readInt16LE(s + 10);
    }
  }
  if (T.has(TCA_U32_POLICE)) out.police = true;
  const indev = T.str(TCA_U32_INDEV);
  if (indev !== undefined) out.input_dev = indev;
  const act = T.at(TCA_U32_ACT);
  if (act >= 0) out.actions = decodeActionList(buf, act, act + T.size(TCA_U32_ACT), base, info.stats !== false);
  return out;
}

function pad8(hex: unknown): string {
  return String(hex).padStart(8, '0');
}

function formatOptions(o: Record<string, unknown>): string {
  let s = '';
  if (o.fh !== undefined) s += `fh ${o.fh} `;
  if (o.order !== undefined) s += `order ${o.order} `;
  if (o.ht_divisor !== undefined) s += `ht divisor ${o.ht_divisor} `;
  else if (o.key_ht !== undefined) s += `key ht ${o.key_ht} bkt ${o.bkt} `;
  if (o.flowid !== undefined) s += `${o.terminal ? '*' : ''}flowid ${o.flowid} `;
  else if (o.terminal) s += 'terminal flowid ';
  if (o.link !== undefined) s += `link ${o.link} `;
  s += formatClsFlags(o);
  if (o.rule_hit !== undefined) s += `(rule hit ${o.rule_hit} success ${o.success})`;
  if (o.fwmark_value !== undefined) s += `\n  mark ${o.fwmark_value} ${o.fwmark_mask} (success ${o.fwmark_success})`;
  for (const m of (o.match as Array<Record<string, unknown>> | undefined) ?? []) {
    s += `\n  match ${pad8(m.value)}/${pad8(m.mask)} at ${m.offmask}${m.off}`;
    if (m.success !== undefined) s += ` (success ${m.success} ) `;
  }
  if (o.offset_mask !== undefined || o.plus !== undefined) {
    s += '\n    offset ';
    if (o.offset_mask !== undefined) s += `${String(o.offset_mask).padStart(4, '0')}>>${o.offset_shift} at ${o.offset_off} `;
    if (o.plus !== undefined) s += `plus ${o.plus} `;
  }
  if (o.eat) s += ' eat ';
  if (o.hash_mask !== undefined) s += `\n    hash mask ${pad8(o.hash_mask)} at ${o.hash_off} `;
  if (o.input_dev !== undefined) s += `\n  input dev ${o.input_dev}\n`;
  if (Array.isArray(o.actions)) s += formatActionList(o.actions as ActionEntry[]);
  return s;
}

/** cls_u32. */
export const u32Filter: FilterKind<U32Options> = {
  kind: 'u32',
  optionTypes: {
    match: 'array',
    keys: 'array',
    classid: 'number|string',
    divisor: 'number',
    ht: 'string',
    link: 'string',
    indev: 'string',
    skip_hw: 'boolean',
    skip_sw: 'boolean',
    offset: 'object',
    actions: 'array',
  },
  encodeOptions,
  decodeOptions,
  formatHandle: formatU32Handle,
  parseHandle: parseU32Handle,
  formatOptions,
};

/* ---- TCP SYN matching for the inbound hold ---- */

/**
 * What {@link u32SynMatch} builds filters for: the {@link SynMatchOptions}
 * (several ports share the IPv4 hash table, one TCP node each), and `htid`.
 */
export interface U32SynMatchOptions extends SynMatchOptions {
  /**
   * IPv4 only: id of the hash table that holds the TCP-level node, 1..0x7ff
   * (default 1). The kernel keeps u32 table ids per block (every u32 filter
   * under the same qdisc hook), so it must not be used by another u32 filter there.
   */
  htid?: number;
}

/** One filter of a {@link u32SynMatch} result: its handle (when it needs one) and its options. */
export interface U32FilterPart {
  /** u32 handle text ("1:" for the IPv4 hash table), absent when the kernel may pick */
  handle?: string;
  /** the options to give addFilter with kind 'u32' */
  options: U32Options;
}

/** The filters that match "TCP, SYN set, ACK clear, destination port P", in the order to add them. */
export interface U32SynFilters {
  /** filter protocol: "ip" or "ipv6" */
  protocol: 'ip' | 'ipv6';
  /** add in this order, all at the same parent, pref and protocol; deleting that pref removes them all */
  filters: U32FilterPart[];
}

/** TCP header flags SYN (0x02) and ACK (0x10), byte 13 of the TCP header. */
const TCP_SYN = 0x02;
const TCP_SYN_ACK = 0x12;

function prefixKeys(text: string, family: 'inet' | 'inet6', base: number): U32Match[] {
  if (typeof text !== 'string') throw new UsageError(`u32 SYN match: dst must be an address string, not ${typeof text}`);
  const [addr, lenText, extra] = text.trim().split('/');
  if (extra !== undefined) throw new UsageError(`u32 SYN match: ${JSON.stringify(text)} is not an address or prefix`);
  const ip = parseIpAddress(addr);
  const want = family === 'inet' ? 4 : 6;
  if (ip.version !== want) throw new UsageError(`u32 SYN match: ${JSON.stringify(text)} is not an IPv${want} address (family ${family})`);
  const bits = ip.bytes.length * 8;
  const len = lenText === undefined ? bits : Number(lenText);
  if (!/^\d+$/.test(lenText ?? '0') || len > bits) throw new UsageError(`u32 SYN match: prefix length in ${JSON.stringify(text)} must be 0..${bits}`);
  const out: U32Match[] = [];
  for (let w = 0; w * 32 < len; w++) {
    const keep = Math.min(32, len - w * 32);
    const mask = keep === 32 ? 0xffffffff : (0xffffffff * 2 ** (32 - keep)) % 0x100000000;
    const value = (ip.bytes.readUInt32BE(w * 4) & mask) >>> 0;
    out.push({ type: 'u32', value, mask: mask >>> 0, at: base + w * 4 });
  }
  return out;
}

/**
 * u32 filters that match TCP segments with SYN set and ACK clear (a
 * connection's first packet) to one destination port, optionally one
 * destination address or prefix, and run `actions` on them. u32 reads
 * offsets from the network header (at a clsact/ingress hook too).
 *
 * - IPv4 (protocol "ip"): three filters, so that a SYN whose IP header
 *   carries options is matched too: (1) a hash table `htid:` (divisor 1);
 *   (2) in the filter's root table (800: for the first u32 pref of a hook), a node matching protocol 6, fragment
 *   offset 0 (and the destination) that links to `htid:` with
 *   `offset at 0 mask 0x0f00 shift 6 eat` (the header length IHL × 4, read
 *   from the packet); (3) in `htid:`, one TCP node per port: destination
 *   port at 2, flags `& 0x12 == 0x02` at 13, and the actions. Like tc:
 *   `u32 handle 1: divisor 1` / `u32 match ip protocol 6 0xff match u16 0 0x1fff at 6 link 1: offset at 0 mask 0x0f00 shift 6 eat`
 *   / `u32 ht 1: match u16 P 0xffff at 2 match u8 0x02 0x12 at 13 action ...`.
 * - IPv6 (protocol "ipv6"): one filter per port on the fixed 40-byte header: next
 *   header 6 at 6, destination at 24, port at 42, flags at 53. Not covered:
 *   a SYN whose TCP header follows IPv6 extension headers (hop-by-hop,
 *   routing, destination options, fragment) is not matched (it passes
 *   unheld); u32 cannot walk the extension header chain.
 * @throws {UsageError} a port outside 1..65535, an address of the other family, a bad htid
 */
export function u32SynMatch(o: U32SynMatchOptions): U32SynFilters {
  const list = synMatchPorts('u32 SYN match', o, ['family', 'dport', 'dst', 'actions', 'htid']);
  const dports = list.map((p) => parseIntArg(p as number, 'u32 SYN match dport', 1, 65535));
  const actions = o.actions === undefined ? {} : { actions: o.actions };
  if (o.family === 'inet6') {
    const dst = o.dst === undefined ? [] : prefixKeys(o.dst, 'inet6', 24);
    return {
      protocol: 'ipv6',
      filters: dports.map((dport) => ({
        options: {
          match: [
            { type: 'u8', value: 6, mask: 0xff, at: 6 } as U32Match,
            ...dst,
            { type: 'u16', value: dport, mask: 0xffff, at: 42 },
            { type: 'u8', value: TCP_SYN, mask: TCP_SYN_ACK, at: 53 },
          ],
          ...actions,
        },
      })),
    };
  }
  const htid = parseIntArg(o.htid ?? 1, 'u32 SYN match htid', 1, 0x7ff);
  const ht = `${htid.toString(16)}:`;
  const l3: U32Match[] = [
    { type: 'ip', field: 'protocol', value: 6, mask: 0xff },
    { type: 'u16', value: 0, mask: 0x1fff, at: 6 },
    ...(o.dst === undefined ? [] : prefixKeys(o.dst, 'inet', 16)),
  ];
  return {
    protocol: 'ip',
    filters: [
      { handle: ht, options: { divisor: 1 } },
      { options: { match: l3, link: ht, offset: { at: 0, mask: 0x0f00, shift: 6, eat: true } } },
      ...dports.map((dport) => ({
        options: {
          ht,
          match: [
            { type: 'u16', value: dport, mask: 0xffff, at: 2 },
            { type: 'u8', value: TCP_SYN, mask: TCP_SYN_ACK, at: 13 },
          ] as U32Match[],
          ...actions,
        },
      })),
    ],
  };
}
