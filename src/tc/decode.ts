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
import {
  TCMSG_LEN, TCA_MAX, TCA_KIND, TCA_OPTIONS, TCA_STATS, TCA_XSTATS, TCA_STATS2, TCA_CHAIN, TCA_HW_OFFLOAD,
  TCA_INGRESS_BLOCK, TCA_EGRESS_BLOCK, TC_H_ROOT, TC_H_MAKE, TC_H_CLSACT, TC_H_MIN_INGRESS, TC_H_MIN_EGRESS,
  TCM_IFINDEX_MAGIC_BLOCK,
} from './constants.js';
import { formatHandle, formatQdiscHandle } from './handle.js';
import { NlaTable } from './nla.js';
import { protocolName } from './proto.js';
import { filterKind, qdiscKind } from './registry.js';
import { decodeLegacyStats, decodeStats2, type XstatsRef } from './stats.js';
import type { ClassEntry, FilterEntry, QdiscEntry, TcHeaderInfo, TcStats } from './types.js';

const NLMSG_HDRLEN = 16;

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

interface Head { ifindex: number; handle: number; parent: number; info: number; base: number }

function head(msg: NetlinkMessage): Head {
  const p = msg.payload;
  const base = msg.offset + NLMSG_HDRLEN;
  if (p.length < TCMSG_LEN) throw new NetlinkDecodeError(`tcmsg needs ${TCMSG_LEN} bytes, message has ${p.length}`, base);
  T.parse(p, TCMSG_LEN, p.length, base);
  return { ifindex: p.readUInt32LE(4), handle: p.readUInt32LE(8), parent: p.readUInt32LE(12), info: p.readUInt32LE(16), base };
}

/** Raw option bytes of a kind this library does not know: `{ raw: "<hex>" }`. */
function rawOptions(data: Buffer): Record<string, unknown> {
  return { raw: data.toString('hex') };
}

/** Decode TCA_STATS2 (or legacy TCA_STATS) into `e`, then the kind's xstats. Uses T (already parsed). */
function decodeStatsInto(
  e: TcStats & Record<string, unknown>,
  payload: Buffer,
  base: number,
  decodeX: ((d: Buffer, b: number, i: TcHeaderInfo) => Record<string, unknown>) | undefined,
  info: TcHeaderInfo,
): void {
  let x: XstatsRef | undefined;
  const s2 = T.at(TCA_STATS2);
  const s1 = T.at(TCA_STATS);
  const s1len = T.size(TCA_STATS);
  const xs = T.at(TCA_XSTATS);
  const xslen = T.size(TCA_XSTATS);
  if (s2 >= 0) x = decodeStats2(payload, s2, s2 + T.size(TCA_STATS2), base, e);
  else if (s1 >= 0) decodeLegacyStats(payload, s1, s1len, e);
  if (!x && xs >= 0) x = { start: xs, len: xslen };
  if (x && decodeX) {
    const xd = decodeX(payload.subarray(x.start, x.start + x.len), base + x.start, info);
    for (const k in xd) e[k] = xd[k];
  }
}

/**
 * Decode one qdisc message (RTM_NEWQDISC, RTM_DELQDISC, RTM_GETQDISC).
 * @param opts `dev`: the device name to put in the entry; `stats: false`: skip the counters (tc without -s)
 * @returns the entry `tc -j -s qdisc show` prints (plus `ifindex`)
 * @throws {NetlinkDecodeError} a short tcmsg, malformed attributes, or options too short for their kind
 */
export function decodeQdisc(msg: NetlinkMessage, opts: DecodeOptions = {}): QdiscEntry {
  const h = head(msg);
  const p = msg.payload;
  const kind = T.str(TCA_KIND);
  // Built field by field in the order tc -j prints them.
  const e = {} as QdiscEntry;
  if (kind !== undefined) e.kind = kind;
  e.handle = formatQdiscHandle(h.handle);
  if (opts.dev !== undefined) e.dev = opts.dev;
  e.ifindex = h.ifindex;
  if (h.parent === TC_H_ROOT) e.root = true;
  else if (h.parent) e.parent = formatHandle(h.parent);
  if (h.info !== 1) e.refcnt = h.info;
  if (T.has(TCA_HW_OFFLOAD) && T.u8(TCA_HW_OFFLOAD)) e.offloaded = true;
  if (T.size(TCA_INGRESS_BLOCK) >= 4 && T.u32(TCA_INGRESS_BLOCK)) e.ingress_block = T.u32(TCA_INGRESS_BLOCK);
  if (T.size(TCA_EGRESS_BLOCK) >= 4 && T.u32(TCA_EGRESS_BLOCK)) e.egress_block = T.u32(TCA_EGRESS_BLOCK);
  const desc = kind === undefined ? undefined : qdiscKind(kind);
  const info: TcHeaderInfo = { handle: h.handle, parent: h.parent, info: h.info };
  e.options = {};
  const o = T.at(TCA_OPTIONS);
  if (o >= 0) {
    const data = p.subarray(o, o + T.size(TCA_OPTIONS));
    const oBase = h.base + o;
    // Kind decoders use their own tables, never T (module-private), so T stays valid.
    e.options = desc?.decodeOptions ? desc.decodeOptions(data, oBase, info) : rawOptions(data);
  }
  if (opts.stats !== false) decodeStatsInto(e, p, h.base, desc?.decodeXstats, info);
  return e;
}

/**
 * Decode one class message (RTM_NEWTCLASS, RTM_DELTCLASS, RTM_GETTCLASS).
 * @param opts `dev`: the device name to put in the entry; `stats: false`: skip the counters (tc without -s)
 * @returns the entry: kind, handle ("1:20"), root | parent, leaf ("20:"), options, stats, xstats flat
 * @throws {NetlinkDecodeError}
 */
export function decodeClass(msg: NetlinkMessage, opts: DecodeOptions = {}): ClassEntry {
  const h = head(msg);
  const p = msg.payload;
  const kind = T.str(TCA_KIND);
  const e = {} as ClassEntry;
  if (kind !== undefined) e.kind = kind;
  e.handle = h.handle ? formatHandle(h.handle) : '';
  if (opts.dev !== undefined) e.dev = opts.dev;
  e.ifindex = h.ifindex;
  if (h.parent === TC_H_ROOT) e.root = true;
  else e.parent = formatHandle(h.parent);
  if (h.info) e.leaf = `${(h.info >>> 16).toString(16)}:`;
  const desc = kind === undefined ? undefined : qdiscKind(kind);
  const info: TcHeaderInfo = { handle: h.handle, parent: h.parent, info: h.info, isClass: true };
  e.options = {};
  const o = T.at(TCA_OPTIONS);
  if (o >= 0) {
    const data = p.subarray(o, o + T.size(TCA_OPTIONS));
    e.options = desc?.decodeClassOptions ? desc.decodeClassOptions(data, h.base + o, info) : rawOptions(data);
  }
  if (opts.stats !== false) decodeStatsInto(e, p, h.base, desc?.decodeXstats, info);
  return e;
}

/**
 * Decode one filter message (RTM_NEWTFILTER, RTM_DELTFILTER, RTM_GETTFILTER).
 * @param opts `dev`: the device name to put in the entry; `stats: false`: skip the counters (tc without -s)
 * @returns the entry `tc -j filter show` prints (plus `ifindex` and `handle`)
 * @throws {NetlinkDecodeError}
 */
export function decodeFilter(msg: NetlinkMessage, opts: DecodeOptions = {}): FilterEntry {
  const h = head(msg);
  const p = msg.payload;
  const e = {} as FilterEntry;
  if (opts.dev !== undefined) e.dev = opts.dev;
  e.ifindex = h.ifindex;
  if (h.ifindex === TCM_IFINDEX_MAGIC_BLOCK) e.block = h.parent;
  else if (h.parent === TC_H_ROOT) e.root = true;
  else if (h.parent === CLSACT_INGRESS) e.ingress = true;
  else if (h.parent === CLSACT_EGRESS) e.egress = true;
  else e.parent = formatHandle(h.parent);
  if (h.info) {
    const proto = ((h.info & 0xff) << 8) | ((h.info >>> 8) & 0xff);
    if (proto) e.protocol = protocolName(proto);
    const pref = h.info >>> 16;
    if (pref) e.pref = pref;
  }
  const kind = T.str(TCA_KIND);
  if (kind !== undefined) e.kind = kind;
  if (T.has(TCA_CHAIN)) e.chain = T.u32(TCA_CHAIN);
  const desc = kind === undefined ? undefined : filterKind(kind);
  if (h.handle) e.handle = desc?.formatHandle ? desc.formatHandle(h.handle) : `0x${h.handle.toString(16)}`;
  const info: TcHeaderInfo = { handle: h.handle, parent: h.parent, info: h.info };
  const o = T.at(TCA_OPTIONS);
  if (o >= 0) {
    const data = p.subarray(o, o + T.size(TCA_OPTIONS));
    e.options = desc?.decodeOptions ? desc.decodeOptions(data, h.base + o, info) : rawOptions(data);
  }
  if (opts.stats !== false) decodeStatsInto(e, p, h.base, undefined, info);
  return e;
}
