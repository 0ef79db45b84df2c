/**
 * Decoding of qdisc, class and filter messages (RTM_NEWQDISC...,
 * RTM_NEWTCLASS..., RTM_NEWTFILTER..., requests and replies alike) into
 * the entries `tc -j -s` prints.
 *
 * Layout of every message: `struct tcmsg` (tcmsg.ts), then TCA_*
 * attributes (linux/rtnetlink.h): TCA_KIND (string), TCA_OPTIONS (the
 * kind's), TCA_STATS2 / TCA_STATS / TCA_XSTATS (stats.ts), TCA_CHAIN (u32),
 * TCA_HW_OFFLOAD (u8), TCA_INGRESS_BLOCK / TCA_EGRESS_BLOCK (u32).
 *
 * Every decoder throws only {@link NetlinkDecodeError} (with the absolute
 * offset of the bad bytes in the datagram), whatever the input.
 *
 * @module
 */
import { NetlinkDecodeError } from '../netlink/errors.js';
import type { NetlinkMessage } from '../netlink/message.js';
import { RTM_NEWQDISC, RTM_GETQDISC, RTM_NEWTCLASS, RTM_GETTCLASS, RTM_NEWTFILTER, RTM_GETTFILTER } from '../netlink/route/constants.js';
import {
  TCMSG_LEN,
  TCA_MAX,
  TCA_KIND,
  TCA_OPTIONS,
  TCA_STATS,
  TCA_XSTATS,
  TCA_STATS2,
  TCA_CHAIN,
  TCA_HW_OFFLOAD,
  TCA_INGRESS_BLOCK,
  TCA_EGRESS_BLOCK,
  TC_H_ROOT,
  TC_H_MAKE,
  TC_H_CLSACT,
  TC_H_MIN_INGRESS,
  TC_H_MIN_EGRESS,
  TCM_IFINDEX_MAGIC_BLOCK,
} from './constants.js';
import { formatHandle, formatQdiscHandle } from './handle.js';
import { le32, NlaTable } from './nla.js';
import { protocolName } from './proto.js';
import { filterKind, qdiscKind } from './registry.js';
import { appLen, decodeLegacyStats, stats2Into } from './stats.js';
import type { ClassEntry, FilterEntry, QdiscEntry, TcHeaderInfo, TcStats } from './types.js';

const NLMSG_HDRLEN = 16;

const NO_OPTIONS: DecodeOptions = {};

/** Options of the message decoders. */
export interface DecodeOptions {
  /** device name to put in the entry (`dev`), when the caller knows it */
  dev?: string;
  /** decode the counters and extended stats (default true) */
  stats?: boolean;
}
const T = new NlaTable(TCA_MAX);
const CLSACT_INGRESS = TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS);
const CLSACT_EGRESS = TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS);

/* Header fields of the message being decoded (set by readHead; decoding is synchronous). */
let hIfindex = 0;
let hHandle = 0;
let hParent = 0;
let hInfo = 0;
let hBase = 0;
/** One TcHeaderInfo reused for every message (kinds read it during the call only). */
const INFO: TcHeaderInfo = { handle: 0, parent: 0, info: 0, isClass: false };

function readHead(msg: NetlinkMessage, isClass: boolean): void {
  readHeadAt(msg.payload, 0, msg.payload.length, msg.offset + NLMSG_HDRLEN, isClass);
}

/** The header of the message whose payload is `p[start, end)`; `base`: absolute offset of `p[0]`. */
function readHeadAt(p: Buffer, start: number, end: number, base: number, isClass: boolean): void {
  hBase = base;
  if (end - start < TCMSG_LEN) throw new NetlinkDecodeError(`tcmsg needs ${TCMSG_LEN} bytes, message has ${end - start}`, base + start);
  hIfindex = le32(p, start + 4);
  hHandle = le32(p, start + 8);
  hParent = le32(p, start + 12);
  hInfo = le32(p, start + 16);
  INFO.handle = hHandle;
  INFO.parent = hParent;
  INFO.info = hInfo;
  INFO.isClass = isClass;
  INFO.stats = true;
  T.parse(p, start + TCMSG_LEN, end, base);
}

/* TCA_KIND strings repeat in every message of a dump: reuse the last one when the bytes match. */
let lastKindBytes: Buffer = Buffer.alloc(0);
let lastKind = '';
function kindOf(p: Buffer): string | undefined {
  const at = T.at(TCA_KIND);
  if (at < 0) return undefined;
  let end = at;
  const lim = at + T.size(TCA_KIND);
  while (end < lim && p[end] !== 0) end++;
  const n = end - at;
  if (n === lastKindBytes.length) {
    let same = true;
    for (let i = 0; i < n; i++)
      if (p[at + i] !== lastKindBytes[i]) {
        same = false;
        break;
      }
    if (same) return lastKind;
  }
  lastKindBytes = Buffer.from(p.subarray(at, end));
  lastKind = lastKindBytes.toString('utf8');
  return lastKind;
}

/** Raw option bytes of a kind this library does not know: `{ raw: "<hex>" }`. */
function rawOptions(buf: Buffer, start: number, end: number): Record<string, unknown> {
  return { raw: buf.toString('hex', start, end) };
}

type XDecoder = (buf: Buffer, start: number, end: number, base: number, i: TcHeaderInfo, out: Record<string, unknown>) => void;

/** Decode TCA_STATS2 (or legacy TCA_STATS) into `e`, then the kind's xstats. Uses T (already parsed). */
function decodeStatsInto(e: TcStats & Record<string, unknown>, payload: Buffer, decodeX: XDecoder | undefined): void {
  const s2 = T.at(TCA_STATS2);
  const s1 = T.at(TCA_STATS);
  const s1len = T.size(TCA_STATS);
  let x = T.at(TCA_XSTATS);
  let xlen = T.size(TCA_XSTATS);
  if (s2 >= 0) {
    const app = stats2Into(payload, s2, s2 + T.size(TCA_STATS2), hBase, e);
    if (app >= 0) {
      x = app;
      xlen = appLen;
    }
  } else if (s1 >= 0) decodeLegacyStats(payload, s1, s1len, e);
  if (x >= 0 && decodeX) decodeX(payload, x, x + xlen, hBase, INFO, e);
}

/**
 * Decode one qdisc message (RTM_NEWQDISC, RTM_DELQDISC, RTM_GETQDISC).
 * @param opts `dev`: the device name to put in the entry; `stats: false`: skip the counters (tc without -s)
 * @returns the entry `tc -j -s qdisc show` prints (plus `ifindex`)
 * @throws {NetlinkDecodeError} a short tcmsg, malformed attributes, or options too short for their kind
 */
export function decodeQdisc(msg: NetlinkMessage, opts: DecodeOptions = NO_OPTIONS): QdiscEntry {
  readHead(msg, false);
  const p = msg.payload;
  const kind = kindOf(p);
  // Built field by field in the order tc -j prints them.
  const e = {} as QdiscEntry;
  if (kind !== undefined) e.kind = kind;
  e.handle = formatQdiscHandle(hHandle);
  if (opts.dev !== undefined) e.dev = opts.dev;
  e.ifindex = hIfindex;
  if (hParent === TC_H_ROOT) e.root = true;
  else if (hParent) e.parent = formatHandle(hParent);
  if (hInfo !== 1) e.refcnt = hInfo;
  if (T.has(TCA_HW_OFFLOAD) && T.u8(TCA_HW_OFFLOAD)) e.offloaded = true;
  if (T.size(TCA_INGRESS_BLOCK) >= 4 && T.u32(TCA_INGRESS_BLOCK)) e.ingress_block = T.u32(TCA_INGRESS_BLOCK);
  if (T.size(TCA_EGRESS_BLOCK) >= 4 && T.u32(TCA_EGRESS_BLOCK)) e.egress_block = T.u32(TCA_EGRESS_BLOCK);
  const desc = kind === undefined ? undefined : qdiscKind(kind);
  const o = T.at(TCA_OPTIONS);
  if (o >= 0) {
    const end = o + T.size(TCA_OPTIONS);
    // Kind decoders use their own tables, never T (module-private), so T stays valid.
    e.options = desc?.decodeOptions ? desc.decodeOptions(p, o, end, hBase, INFO) : rawOptions(p, o, end);
  } else e.options = {};
  if (opts.stats !== false) decodeStatsInto(e, p, desc?.decodeXstats);
  return e;
}

/**
 * Decode one class message (RTM_NEWTCLASS, RTM_DELTCLASS, RTM_GETTCLASS).
 * @param opts `dev`: the device name to put in the entry; `stats: false`: skip the counters (tc without -s)
 * @returns the entry: kind, handle ("1:20"), root | parent, leaf ("20:"), options, stats, xstats flat
 * @throws {NetlinkDecodeError}
 */
export function decodeClass(msg: NetlinkMessage, opts: DecodeOptions = NO_OPTIONS): ClassEntry {
  return decodeClassAt(msg.payload, 0, msg.payload.length, msg.offset + NLMSG_HDRLEN, opts);
}

/**
 * {@link decodeClass} of a message read in place: its payload is
 * `p[start, end)` (e.g. inside a received datagram, as
 * `NetlinkConnection.dumpEachInPlace` hands it over). The entry keeps
 * nothing of `p`.
 * @param base absolute offset of `p[0]`, for error offsets
 * @throws {NetlinkDecodeError}
 */
export function decodeClassAt(p: Buffer, start: number, end: number, base: number, opts: DecodeOptions = NO_OPTIONS): ClassEntry {
  readHeadAt(p, start, end, base, true);
  const kind = kindOf(p);
  const e = {} as ClassEntry;
  if (kind !== undefined) e.kind = kind;
  e.handle = hHandle ? formatHandle(hHandle) : '';
  if (opts.dev !== undefined) e.dev = opts.dev;
  e.ifindex = hIfindex;
  if (hParent === TC_H_ROOT) e.root = true;
  else e.parent = formatHandle(hParent);
  if (hInfo) e.leaf = `${(hInfo >>> 16).toString(16)}:`;
  const desc = kind === undefined ? undefined : qdiscKind(kind);
  const o = T.at(TCA_OPTIONS);
  if (o >= 0) {
    const end = o + T.size(TCA_OPTIONS);
    e.options = desc?.decodeClassOptions ? desc.decodeClassOptions(p, o, end, hBase, INFO) : rawOptions(p, o, end);
  } else e.options = {};
  if (opts.stats !== false) decodeStatsInto(e, p, desc?.decodeXstats);
  return e;
}

/**
 * Decode one filter message (RTM_NEWTFILTER, RTM_DELTFILTER, RTM_GETTFILTER).
 * @param opts `dev`: the device name to put in the entry; `stats: false`: skip the counters (tc without -s)
 * @returns the entry `tc -j filter show` prints (plus `ifindex` and `handle`)
 * @throws {NetlinkDecodeError}
 */
export function decodeFilter(msg: NetlinkMessage, opts: DecodeOptions = NO_OPTIONS): FilterEntry {
  readHead(msg, false);
  INFO.stats = opts.stats !== false;
  const p = msg.payload;
  const e = {} as FilterEntry;
  if (opts.dev !== undefined) e.dev = opts.dev;
  e.ifindex = hIfindex;
  if (hIfindex === TCM_IFINDEX_MAGIC_BLOCK) e.block = hParent;
  else if (hParent === TC_H_ROOT) e.root = true;
  else if (hParent === CLSACT_INGRESS) e.ingress = true;
  else if (hParent === CLSACT_EGRESS) e.egress = true;
  else e.parent = formatHandle(hParent);
  if (hInfo) {
    const proto = ((hInfo & 0xff) << 8) | ((hInfo >>> 8) & 0xff);
    if (proto) e.protocol = protocolName(proto);
    const pref = hInfo >>> 16;
    if (pref) e.pref = pref;
  }
  const kind = kindOf(p);
  if (kind !== undefined) e.kind = kind;
  if (T.has(TCA_CHAIN)) e.chain = T.u32(TCA_CHAIN);
  const desc = kind === undefined ? undefined : filterKind(kind);
  if (hHandle) e.handle = desc?.formatHandle ? desc.formatHandle(hHandle) : `0x${hHandle.toString(16)}`;
  const o = T.at(TCA_OPTIONS);
  if (o >= 0) {
    const end = o + T.size(TCA_OPTIONS);
    e.options = desc?.decodeOptions ? desc.decodeOptions(p, o, end, hBase, INFO) : rawOptions(p, o, end);
  }
  if (opts.stats !== false) decodeStatsInto(e, p, undefined);
  return e;
}

/**
 * Decode any tc message by its type: RTM_*QDISC -> {@link decodeQdisc},
 * RTM_*TCLASS -> {@link decodeClass}, RTM_*TFILTER -> {@link decodeFilter}.
 * @returns the entry, or undefined for a message type that is not tc's
 * @throws {NetlinkDecodeError}
 */
export function decodeTcMessage(msg: NetlinkMessage, opts: DecodeOptions = NO_OPTIONS): QdiscEntry | ClassEntry | FilterEntry | undefined {
  const t = msg.type;
  if (t >= RTM_NEWQDISC && t <= RTM_GETQDISC) return decodeQdisc(msg, opts);
  if (t >= RTM_NEWTCLASS && t <= RTM_GETTCLASS) return decodeClass(msg, opts);
  if (t >= RTM_NEWTFILTER && t <= RTM_GETTFILTER) return decodeFilter(msg, opts);
  return undefined;
}
