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
import { AttributeView, le32 } from '../netlink/attributes.js';
import { NetlinkDecodeError } from '../netlink/errors.js';
import type { NetlinkMessage } from '../netlink/message.js';
import { RTM_NEWQDISC, RTM_GETQDISC, RTM_NEWTCLASS, RTM_GETTCLASS, RTM_NEWTFILTER, RTM_GETTFILTER } from '../netlink/route/constants.js';
import {
  TCMSG_LEN,
  TCA_KIND,
  TCA_OPTIONS,
  TCA_STATS,
  TCA_XSTATS,
  TCA_STATS2,
  TCA_CHAIN,
  TCA_HW_OFFLOAD,
  TCA_INGRESS_BLOCK,
  TCA_EGRESS_BLOCK,
  TCA_STATS_APP,
  TC_H_ROOT,
  TC_H_MAKE,
  TC_H_CLSACT,
  TC_H_MIN_INGRESS,
  TC_H_MIN_EGRESS,
  TCM_IFINDEX_MAGIC_BLOCK,
} from './constants.js';
import { formatHandle, formatQdiscHandle } from './handle.js';
import { protocolName } from './proto.js';
import { filterKind, knownName, qdiscKind } from './registry.js';
import { decodeLegacyStats, stats2Into } from './stats.js';
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
const CLSACT_INGRESS = TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS);
const CLSACT_EGRESS = TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS);

/** One message being decoded: its tcmsg fields (the kinds' {@link TcHeaderInfo}), its ifindex and its attributes. */
interface Head extends TcHeaderInfo {
  ifindex: number;
  attrs: AttributeView;
}

/** The header of the message whose payload is `p[start, end)`; `base`: absolute offset of `p[0]`. */
function readHead(p: Buffer, start: number, end: number, base: number, isClass: boolean, stats: boolean): Head {
  if (end - start < TCMSG_LEN) throw new NetlinkDecodeError(`tcmsg needs ${TCMSG_LEN} bytes, message has ${end - start}`, base + start);
  return {
    ifindex: le32(p, start + 4),
    handle: le32(p, start + 8),
    parent: le32(p, start + 12),
    info: le32(p, start + 16),
    isClass,
    stats,
    attrs: new AttributeView(p, start + TCMSG_LEN, end, base),
  };
}

/** TCA_KIND: the registered kind name when the bytes are one (no new string per message of a dump), else the text. */
function kindOf(a: AttributeView): string | undefined {
  const at = a.at(TCA_KIND);
  if (at < 0) return undefined;
  const p = a.buf;
  const lim = at + a.size(TCA_KIND);
  let end = at;
  while (end < lim && p[end] !== 0) end++;
  return knownName(p, at, end) ?? p.toString('utf8', at, end);
}

/** Raw option bytes of a kind this library does not know: `{ raw: "<hex>" }`. */
function rawOptions(buf: Buffer, start: number, end: number): Record<string, unknown> {
  return { raw: buf.toString('hex', start, end) };
}

type XDecoder = (buf: Buffer, start: number, end: number, base: number, i: TcHeaderInfo, out: Record<string, unknown>) => void;
type OptionsDecoder = (buf: Buffer, start: number, end: number, base: number, i: TcHeaderInfo) => Record<string, unknown>;

/** TCA_OPTIONS by the kind's decoder (`{ raw }` for an unknown kind), or undefined when absent. */
function optionsOf(h: Head, decode: OptionsDecoder | undefined): Record<string, unknown> | undefined {
  const a = h.attrs;
  const o = a.at(TCA_OPTIONS);
  if (o < 0) return undefined;
  const end = o + a.size(TCA_OPTIONS);
  return decode ? decode(a.buf, o, end, a.base, h) : rawOptions(a.buf, o, end);
}

/** Decode TCA_STATS2 (or legacy TCA_STATS) into `e`, then the kind's xstats. */
function decodeStatsInto(e: TcStats & Record<string, unknown>, h: Head, decodeX: XDecoder | undefined): void {
  const a = h.attrs;
  const payload = a.buf;
  let x = a.at(TCA_XSTATS);
  let xlen = a.size(TCA_XSTATS);
  const s2 = a.nested(TCA_STATS2);
  if (s2) {
    const app = stats2Into(s2, e);
    if (app >= 0) {
      x = app;
      xlen = s2.size(TCA_STATS_APP);
    }
  } else if (a.at(TCA_STATS) >= 0) decodeLegacyStats(payload, a.at(TCA_STATS), a.size(TCA_STATS), e);
  if (x >= 0 && decodeX) decodeX(payload, x, x + xlen, a.base, h, e);
}

/**
 * Decode one qdisc message (RTM_NEWQDISC, RTM_DELQDISC, RTM_GETQDISC).
 * @param opts `dev`: the device name to put in the entry; `stats: false`: skip the counters (tc without -s)
 * @returns the entry `tc -j -s qdisc show` prints (plus `ifindex`)
 * @throws {NetlinkDecodeError} a short tcmsg, malformed attributes, or options too short for their kind
 */
export function decodeQdisc(msg: NetlinkMessage, opts: DecodeOptions = NO_OPTIONS): QdiscEntry {
  const h = readHead(msg.payload, 0, msg.payload.length, msg.offset + NLMSG_HDRLEN, false, true);
  const a = h.attrs;
  const kind = kindOf(a);
  // Built field by field in the order tc -j prints them.
  const e = {} as QdiscEntry;
  if (kind !== undefined) e.kind = kind;
  e.handle = formatQdiscHandle(h.handle);
  if (opts.dev !== undefined) e.dev = opts.dev;
  e.ifindex = h.ifindex;
  if (h.parent === TC_H_ROOT) e.root = true;
  else if (h.parent) e.parent = formatHandle(h.parent);
  if (h.info !== 1) e.refcnt = h.info;
  if (a.has(TCA_HW_OFFLOAD) && a.u8(TCA_HW_OFFLOAD)) e.offloaded = true;
  if (a.size(TCA_INGRESS_BLOCK) >= 4 && a.u32(TCA_INGRESS_BLOCK)) e.ingress_block = a.u32(TCA_INGRESS_BLOCK);
  if (a.size(TCA_EGRESS_BLOCK) >= 4 && a.u32(TCA_EGRESS_BLOCK)) e.egress_block = a.u32(TCA_EGRESS_BLOCK);
  const desc = kind === undefined ? undefined : qdiscKind(kind);
  e.options = optionsOf(h, desc?.decodeOptions) ?? {};
  if (opts.stats !== false) decodeStatsInto(e, h, desc?.decodeXstats);
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
 * `NetlinkConnection.dumpEach` in place hands it over). The entry keeps
 * nothing of `p`.
 * @param base absolute offset of `p[0]`, for error offsets
 * @throws {NetlinkDecodeError}
 */
export function decodeClassAt(p: Buffer, start: number, end: number, base: number, opts: DecodeOptions = NO_OPTIONS): ClassEntry {
  const h = readHead(p, start, end, base, true, true);
  const kind = kindOf(h.attrs);
  const e = {} as ClassEntry;
  if (kind !== undefined) e.kind = kind;
  e.handle = h.handle ? formatHandle(h.handle) : '';
  if (opts.dev !== undefined) e.dev = opts.dev;
  e.ifindex = h.ifindex;
  if (h.parent === TC_H_ROOT) e.root = true;
  else e.parent = formatHandle(h.parent);
  if (h.info) e.leaf = `${(h.info >>> 16).toString(16)}:`;
  const desc = kind === undefined ? undefined : qdiscKind(kind);
  e.options = optionsOf(h, desc?.decodeClassOptions) ?? {};
  if (opts.stats !== false) decodeStatsInto(e, h, desc?.decodeXstats);
  return e;
}

/**
 * Decode one filter message (RTM_NEWTFILTER, RTM_DELTFILTER, RTM_GETTFILTER).
 * @param opts `dev`: the device name to put in the entry; `stats: false`: skip the counters (tc without -s)
 * @returns the entry `tc -j filter show` prints (plus `ifindex` and `handle`)
 * @throws {NetlinkDecodeError}
 */
export function decodeFilter(msg: NetlinkMessage, opts: DecodeOptions = NO_OPTIONS): FilterEntry {
  const h = readHead(msg.payload, 0, msg.payload.length, msg.offset + NLMSG_HDRLEN, false, opts.stats !== false);
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
  const kind = kindOf(h.attrs);
  if (kind !== undefined) e.kind = kind;
  if (h.attrs.has(TCA_CHAIN)) e.chain = h.attrs.u32(TCA_CHAIN);
  const desc = kind === undefined ? undefined : filterKind(kind);
  if (h.handle) e.handle = desc?.formatHandle ? desc.formatHandle(h.handle) : `0x${h.handle.toString(16)}`;
  const options = optionsOf(h, desc?.decodeOptions);
  if (options) e.options = options;
  if (opts.stats !== false) decodeStatsInto(e, h, undefined);
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
