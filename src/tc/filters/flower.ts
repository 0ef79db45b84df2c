/**
 * `flower` filter (cls_flower): matches parsed packet fields (the "flow
 * dissector" keys). This library encodes and decodes the keys the inbound
 * hold needs: ether type, IP protocol, IPv4/IPv6 source and destination
 * with masks, TCP/UDP/SCTP ports, TCP flags with a mask, plus the class,
 * input device, flags and the action list.
 *
 * TCA_OPTIONS nests (linux/pkt_cls.h, `enum { TCA_FLOWER_UNSPEC, ... }`):
 * ```
 * TCA_FLOWER_CLASSID           u32 class id
 * TCA_FLOWER_INDEV             string
 * TCA_FLOWER_ACT               the action list
 * TCA_FLOWER_KEY_ETH_TYPE      __be16 (tc sends the filter's protocol here, last)
 * TCA_FLOWER_KEY_IP_PROTO      u8 (the kernel reads it only when the ether type is IPv4/IPv6)
 * TCA_FLOWER_KEY_IPV4_SRC/DST(+_MASK)   __be32
 * TCA_FLOWER_KEY_IPV6_SRC/DST(+_MASK)   16 bytes
 * TCA_FLOWER_KEY_TCP_SRC/DST(+_MASK), _UDP_*, _SCTP_*   __be16
 * TCA_FLOWER_KEY_TCP_FLAGS(+_MASK)      __be16 (the 12 low bits of TCP's offset/flags word)
 * TCA_FLOWER_FLAGS             u32 TCA_CLS_FLAGS_* (tc always sends it)
 * TCA_FLOWER_IN_HW_COUNT       u32 (dumps)
 * ```
 * Keys this library does not decode (VLAN, MPLS, tunnels, ct...) are
 * ignored when decoding, as an older tc would.
 *
 * @module
 */
import { AttributeView, bin, nested, str, u16be, u32, u8 } from '../../netlink/attributes.js';
import { UsageError } from '../../netlink/errors.js';
import { TCA_OPTIONS, TCA_CLS_FLAGS_SKIP_HW, TCA_CLS_FLAGS_SKIP_SW } from '../constants.js';
import { parseIntArg } from '../args.js';
import { protocolName, parseProtocol } from '../proto.js';
import { formatIpAddress, parseIpAddress } from '../../netlink/route/addr.js';
import type { FilterKind } from '../types.js';
import { classidOf, classidText, decodeClsFlags, parseU32Text, synMatchPorts, type SynMatchOptions } from './common.js';
import { decodeActionList, encodeActionList, formatActionList } from '../actions/list.js';
import type { ActionEntry, ActionSpec } from '../actions/types.js';

/* enum TCA_FLOWER_* (linux/pkt_cls.h), the ones used here */
/** TCA_FLOWER_CLASSID */
export const TCA_FLOWER_CLASSID = 1;
/** TCA_FLOWER_INDEV */
export const TCA_FLOWER_INDEV = 2;
/** TCA_FLOWER_ACT */
export const TCA_FLOWER_ACT = 3;
/** TCA_FLOWER_KEY_ETH_TYPE */
export const TCA_FLOWER_KEY_ETH_TYPE = 8;
/** TCA_FLOWER_KEY_IP_PROTO */
export const TCA_FLOWER_KEY_IP_PROTO = 9;
/** TCA_FLOWER_KEY_IPV4_SRC */
export const TCA_FLOWER_KEY_IPV4_SRC = 10;
/** TCA_FLOWER_KEY_IPV4_SRC_MASK */
export const TCA_FLOWER_KEY_IPV4_SRC_MASK = 11;
/** TCA_FLOWER_KEY_IPV4_DST */
export const TCA_FLOWER_KEY_IPV4_DST = 12;
/** TCA_FLOWER_KEY_IPV4_DST_MASK */
export const TCA_FLOWER_KEY_IPV4_DST_MASK = 13;
/** TCA_FLOWER_KEY_IPV6_SRC */
export const TCA_FLOWER_KEY_IPV6_SRC = 14;
/** TCA_FLOWER_KEY_IPV6_SRC_MASK */
export const TCA_FLOWER_KEY_IPV6_SRC_MASK = 15;
/** TCA_FLOWER_KEY_IPV6_DST */
export const TCA_FLOWER_KEY_IPV6_DST = 16;
/** TCA_FLOWER_KEY_IPV6_DST_MASK */
export const TCA_FLOWER_KEY_IPV6_DST_MASK = 17;
/** TCA_FLOWER_KEY_TCP_SRC */
export const TCA_FLOWER_KEY_TCP_SRC = 18;
/** TCA_FLOWER_KEY_TCP_DST */
export const TCA_FLOWER_KEY_TCP_DST = 19;
/** TCA_FLOWER_KEY_UDP_SRC */
export const TCA_FLOWER_KEY_UDP_SRC = 20;
/** TCA_FLOWER_KEY_UDP_DST */
export const TCA_FLOWER_KEY_UDP_DST = 21;
/** TCA_FLOWER_FLAGS */
export const TCA_FLOWER_FLAGS = 22;
/** TCA_FLOWER_KEY_TCP_SRC_MASK */
export const TCA_FLOWER_KEY_TCP_SRC_MASK = 35;
/** TCA_FLOWER_KEY_TCP_DST_MASK */
export const TCA_FLOWER_KEY_TCP_DST_MASK = 36;
/** TCA_FLOWER_KEY_UDP_SRC_MASK */
export const TCA_FLOWER_KEY_UDP_SRC_MASK = 37;
/** TCA_FLOWER_KEY_UDP_DST_MASK */
export const TCA_FLOWER_KEY_UDP_DST_MASK = 38;
/** TCA_FLOWER_KEY_SCTP_SRC_MASK */
export const TCA_FLOWER_KEY_SCTP_SRC_MASK = 39;
/** TCA_FLOWER_KEY_SCTP_DST_MASK */
export const TCA_FLOWER_KEY_SCTP_DST_MASK = 40;
/** TCA_FLOWER_KEY_SCTP_SRC */
export const TCA_FLOWER_KEY_SCTP_SRC = 41;
/** TCA_FLOWER_KEY_SCTP_DST */
export const TCA_FLOWER_KEY_SCTP_DST = 42;
/** TCA_FLOWER_KEY_TCP_FLAGS */
export const TCA_FLOWER_KEY_TCP_FLAGS = 71;
/** TCA_FLOWER_KEY_TCP_FLAGS_MASK */
export const TCA_FLOWER_KEY_TCP_FLAGS_MASK = 72;
/** TCA_FLOWER_IN_HW_COUNT */
export const TCA_FLOWER_IN_HW_COUNT = 86;
/** TCA_FLOWER_KEY_PORT_SRC_MIN: __be16, a source port range's first port */
export const TCA_FLOWER_KEY_PORT_SRC_MIN = 87;
/** TCA_FLOWER_KEY_PORT_SRC_MAX */
export const TCA_FLOWER_KEY_PORT_SRC_MAX = 88;
/** TCA_FLOWER_KEY_PORT_DST_MIN */
export const TCA_FLOWER_KEY_PORT_DST_MIN = 89;
/** TCA_FLOWER_KEY_PORT_DST_MAX */
export const TCA_FLOWER_KEY_PORT_DST_MAX = 90;
/** TCP_FLAGS_MAX_MASK: the 12 flag bits flower matches (tc's default mask) */
export const TCP_FLAGS_MAX_MASK = 0xfff;

const IPPROTO_ICMP = 1;
const IPPROTO_TCP = 6;
const IPPROTO_UDP = 17;
const IPPROTO_ICMPV6 = 58;
const IPPROTO_SCTP = 132;
const ETH_P_IP = 0x0800;
const ETH_P_IPV6 = 0x86dd;
const ETH_P_ARP = 0x0806;
const ETH_P_RARP = 0x8035;

const PROTO_NAMES: Record<number, string> = {
  [IPPROTO_TCP]: 'tcp',
  [IPPROTO_UDP]: 'udp',
  [IPPROTO_SCTP]: 'sctp',
  [IPPROTO_ICMP]: 'icmp',
  [IPPROTO_ICMPV6]: 'icmpv6',
};
const PROTO_NUMBERS: Record<string, number> = { tcp: IPPROTO_TCP, udp: IPPROTO_UDP, sctp: IPPROTO_SCTP, icmp: IPPROTO_ICMP, icmpv6: IPPROTO_ICMPV6 };

/** Port attributes per IP protocol: [src, dst, src mask, dst mask]. */
const PORT_TYPES: Record<number, [number, number, number, number]> = {
  [IPPROTO_TCP]: [TCA_FLOWER_KEY_TCP_SRC, TCA_FLOWER_KEY_TCP_DST, TCA_FLOWER_KEY_TCP_SRC_MASK, TCA_FLOWER_KEY_TCP_DST_MASK],
  [IPPROTO_UDP]: [TCA_FLOWER_KEY_UDP_SRC, TCA_FLOWER_KEY_UDP_DST, TCA_FLOWER_KEY_UDP_SRC_MASK, TCA_FLOWER_KEY_UDP_DST_MASK],
  [IPPROTO_SCTP]: [TCA_FLOWER_KEY_SCTP_SRC, TCA_FLOWER_KEY_SCTP_DST, TCA_FLOWER_KEY_SCTP_SRC_MASK, TCA_FLOWER_KEY_SCTP_DST_MASK],
};

/** A value under a mask; a bare number means every bit. */
export type Masked = number | { value: number; mask: number };

/** A port: a number, a value under a mask, or a range `{ start, end }` (TCA_FLOWER_KEY_PORT_*_MIN/MAX; start < end). */
export type PortMatch = Masked | { start: number; end: number };

/** Options of a flower filter (field names of tc -j's `keys`). */
export interface FlowerOptions {
  /** ether type: "ipv4", "ipv6", "arp", or a protocol as the filter's (`ip`, `0x86dd`); give the filter's protocol. Needed for every IP-level key. */
  eth_type?: string | number;
  /** IP protocol: "tcp", "udp", "sctp", "icmp", "icmpv6" or a number; needed for ports and tcp_flags */
  ip_proto?: string | number;
  /** destination address or prefix ("169.254.0.1", "fd00::/64") of the eth_type's family */
  dst_ip?: string;
  /** source address or prefix */
  src_ip?: string;
  /** destination port (tcp/udp/sctp), { value, mask }, or a range { start, end } */
  dst_port?: PortMatch;
  /** source port, { value, mask }, or a range { start, end } */
  src_port?: PortMatch;
  /** TCP flags (12 bits) and mask: { value: 0x02, mask: 0x12 } is "SYN set, ACK clear"; tc text "0x2/0x12" (hex) accepted; a bare number means mask 0xfff */
  tcp_flags?: Masked | string;
  /** class id for the match ("1:4") */
  classid?: string | number;
  /** match only packets received on this device */
  indev?: string;
  skip_hw?: boolean;
  skip_sw?: boolean;
  /** actions (TCA_FLOWER_ACT) */
  actions?: readonly ActionSpec[];
}

/** Every key a flower options object may have. */
export const FLOWER_OPTION_KEYS = [
  'eth_type',
  'ip_proto',
  'dst_ip',
  'src_ip',
  'dst_port',
  'src_port',
  'tcp_flags',
  'classid',
  'indev',
  'skip_hw',
  'skip_sw',
  'actions',
] as const;

function ethTypeOf(v: string | number): number {
  if (v === 'ipv4') return ETH_P_IP;
  if (v === 'arp') return ETH_P_ARP;
  if (v === 'rarp') return ETH_P_RARP;
  return parseProtocol(v);
}

function ipProtoOf(v: string | number): number {
  if (typeof v === 'string' && v in PROTO_NUMBERS) return PROTO_NUMBERS[v];
  return parseIntArg(v, 'flower ip_proto', 0, 255);
}

function masked(v: Masked | undefined, what: string, max: number): { value: number; mask: number } | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'number') return { value: parseIntArg(v, what, 0, max), mask: max };
  if (typeof v !== 'object' || v === null) throw new UsageError(`${what}: expected a number or { value, mask }`);
  return { value: parseIntArg(v.value, what, 0, max), mask: parseIntArg(v.mask, `${what} mask`, 0, max) };
}

function tcpFlagsOf(v: Masked | string): { value: number; mask: number } {
  if (typeof v === 'string') {
    const m = /^(?:0x)?([0-9a-f]+)(?:\/(?:0x)?([0-9a-f]+))?$/i.exec(v.trim());
    if (!m) throw new UsageError(`flower tcp_flags ${JSON.stringify(v)}: expected hex FLAGS[/MASK], e.g. "0x2/0x12"`);
    const value = parseInt(m[1], 16);
    const mask = m[2] === undefined ? TCP_FLAGS_MAX_MASK : parseInt(m[2], 16);
    if (value > TCP_FLAGS_MAX_MASK || mask > TCP_FLAGS_MAX_MASK) throw new UsageError(`flower tcp_flags ${JSON.stringify(v)}: only the 12 bits 0xfff exist`);
    return { value, mask };
  }
  const r = masked(v, 'flower tcp_flags', TCP_FLAGS_MAX_MASK)!;
  return r;
}

/** An address or prefix of the family -> [addr, mask] attributes. */
function ipKeys(text: string, ethType: number, v4: [number, number], v6: [number, number], what: string): Buffer[] {
  if (typeof text !== 'string') throw new UsageError(`flower ${what}: expected an address string`);
  const [a, l, extra] = text.trim().split('/');
  if (extra !== undefined) throw new UsageError(`flower ${what} ${JSON.stringify(text)} is not an address or prefix`);
  const ip = parseIpAddress(a);
  const want = ethType === ETH_P_IP ? 4 : ethType === ETH_P_IPV6 ? 6 : 0;
  if (ip.version !== want)
    throw new UsageError(`flower ${what} ${JSON.stringify(text)} is not an IPv${want || '4/6'} address (eth_type ${protocolName(ethType)})`);
  const bits = ip.bytes.length * 8;
  const len = l === undefined ? bits : /^\d+$/.test(l) ? Number(l) : NaN;
  if (!(len >= 0 && len <= bits)) throw new UsageError(`flower ${what} ${JSON.stringify(text)}: prefix length must be 0..${bits}`);
  const mask = Buffer.alloc(ip.bytes.length);
  for (let i = 0; i < len; i++) mask[i >> 3] |= 0x80 >> (i & 7);
  const addr = Buffer.from(ip.bytes.map((b, i) => b & mask[i]));
  const [ta, tm] = want === 4 ? v4 : v6;
  return [bin(ta, addr), bin(tm, mask)];
}

/**
 * Options -> TCA_OPTIONS, in tc's order: classid, indev, ip_proto, dst_ip,
 * src_ip, ports, tcp_flags, actions, TCA_FLOWER_FLAGS (always), eth_type (last).
 * @throws {UsageError} unknown keys; IP keys without eth_type ipv4/ipv6; ports or tcp_flags without ip_proto; an address of the wrong family
 */
function encodeOptions(o: FlowerOptions): Buffer[] {
  if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new UsageError('flower: options must be an object (or a list of tc words)');
  for (const k of Object.keys(o)) {
    if ((o as Record<string, unknown>)[k] !== undefined && !(FLOWER_OPTION_KEYS as readonly string[]).includes(k)) {
      throw new UsageError(`filter kind 'flower' has no option ${JSON.stringify(k)} (it takes ${FLOWER_OPTION_KEYS.join(', ')})`);
    }
  }
  const TYPES: Record<string, string[]> = {
    eth_type: ['string', 'number'],
    ip_proto: ['string', 'number'],
    dst_ip: ['string'],
    src_ip: ['string'],
    dst_port: ['number', 'object'],
    src_port: ['number', 'object'],
    tcp_flags: ['number', 'object', 'string'],
    classid: ['string', 'number'],
    indev: ['string'],
    skip_hw: ['boolean'],
    skip_sw: ['boolean'],
    actions: ['object'],
  };
  for (const [k, v] of Object.entries(o)) {
    if (v !== undefined && (!TYPES[k].includes(typeof v) || v === null))
      throw new UsageError(`flower: option "${k}" must be ${TYPES[k].join(' or ')}, not ${v === null ? 'null' : typeof v}`);
  }
  const kids: Buffer[] = [];
  const ethType = o.eth_type === undefined ? undefined : ethTypeOf(o.eth_type);
  const isIp = ethType === ETH_P_IP || ethType === ETH_P_IPV6;
  if (o.classid !== undefined) kids.push(u32(TCA_FLOWER_CLASSID, classidOf(o.classid, 'flower classid')));
  if (o.indev !== undefined) {
    if (typeof o.indev !== 'string' || o.indev.length === 0 || Buffer.byteLength(o.indev) > 15)
      throw new UsageError(`flower: indev ${JSON.stringify(o.indev)} is not a device name`);
    kids.push(str(TCA_FLOWER_INDEV, o.indev));
  }
  const needIp = (what: string) => {
    if (!isIp) throw new UsageError(`flower: ${what} needs eth_type 'ipv4' or 'ipv6' (the filter's protocol); the kernel ignores IP keys otherwise`);
  };
  let proto: number | undefined;
  if (o.ip_proto !== undefined) {
    needIp('ip_proto');
    proto = ipProtoOf(o.ip_proto);
    kids.push(u8(TCA_FLOWER_KEY_IP_PROTO, proto));
  }
  if (o.dst_ip !== undefined) {
    needIp('dst_ip');
    kids.push(
      ...ipKeys(o.dst_ip, ethType!, [TCA_FLOWER_KEY_IPV4_DST, TCA_FLOWER_KEY_IPV4_DST_MASK], [TCA_FLOWER_KEY_IPV6_DST, TCA_FLOWER_KEY_IPV6_DST_MASK], 'dst_ip'),
    );
  }
  if (o.src_ip !== undefined) {
    needIp('src_ip');
    kids.push(
      ...ipKeys(o.src_ip, ethType!, [TCA_FLOWER_KEY_IPV4_SRC, TCA_FLOWER_KEY_IPV4_SRC_MASK], [TCA_FLOWER_KEY_IPV6_SRC, TCA_FLOWER_KEY_IPV6_SRC_MASK], 'src_ip'),
    );
  }
  for (const [field, idx] of [
    ['dst_port', 1],
    ['src_port', 0],
  ] as const) {
    const v = o[field];
    if (v === undefined) continue;
    const types = proto === undefined ? undefined : PORT_TYPES[proto];
    if (!types) throw new UsageError(`flower: ${field} needs ip_proto tcp, udp or sctp`);
    if (typeof v === 'object' && v !== null && 'start' in v) {
      const start = parseIntArg(v.start, `flower ${field} start`, 1, 0xffff);
      const end = parseIntArg(v.end, `flower ${field} end`, 1, 0xffff);
      if (end <= start) throw new UsageError(`flower ${field}: the range end ${end} must be above its start ${start}`);
      const [tmin, tmax] = idx === 1 ? [TCA_FLOWER_KEY_PORT_DST_MIN, TCA_FLOWER_KEY_PORT_DST_MAX] : [TCA_FLOWER_KEY_PORT_SRC_MIN, TCA_FLOWER_KEY_PORT_SRC_MAX];
      kids.push(u16be(tmin, start), u16be(tmax, end));
      continue;
    }
    const p = masked(v as Masked, `flower ${field}`, 0xffff)!;
    kids.push(u16be(types[idx], p.value));
    if (p.mask !== 0xffff) kids.push(u16be(types[idx + 2], p.mask));
  }
  if (o.tcp_flags !== undefined) {
    if (proto !== IPPROTO_TCP) throw new UsageError('flower: tcp_flags needs ip_proto tcp');
    const f = tcpFlagsOf(o.tcp_flags);
    kids.push(u16be(TCA_FLOWER_KEY_TCP_FLAGS, f.value), u16be(TCA_FLOWER_KEY_TCP_FLAGS_MASK, f.mask));
  }
  if (o.actions !== undefined) kids.push(encodeActionList(TCA_FLOWER_ACT, o.actions));
  let flags = 0;
  if (o.skip_hw) flags |= TCA_CLS_FLAGS_SKIP_HW;
  if (o.skip_sw) flags |= TCA_CLS_FLAGS_SKIP_SW;
  if (flags === (TCA_CLS_FLAGS_SKIP_HW | TCA_CLS_FLAGS_SKIP_SW)) throw new UsageError('flower: skip_hw and skip_sw are mutually exclusive');
  kids.push(u32(TCA_FLOWER_FLAGS, flags));
  if (ethType !== undefined && ethType !== 0x0003) kids.push(u16be(TCA_FLOWER_KEY_ETH_TYPE, ethType));
  return [nested(TCA_OPTIONS, kids)];
}

function ethTypeText(t: number): string {
  if (t === ETH_P_IP) return 'ipv4';
  if (t === ETH_P_IPV6) return 'ipv6';
  if (t === ETH_P_ARP) return 'arp';
  if (t === ETH_P_RARP) return 'rarp';
  return t.toString(16).padStart(4, '0');
}

/** Leading one bits of a mask, or -1 when it is not a prefix. */
function maskBits(b: Buffer, at: number, len: number): number {
  let bits = 0;
  let done = false;
  for (let i = 0; i < len; i++) {
    for (let j = 7; j >= 0; j--) {
      const one = (b[at + i] >> j) & 1;
      if (one && done) return -1;
      if (one) bits++;
      else done = true;
    }
  }
  return bits;
}

function ipText(buf: Buffer, a: number, m: number, len: number): string {
  let s = formatIpAddress(buf.subarray(a, a + len));
  const bits = maskBits(buf, m, len);
  if (bits < 0) s += `/${formatIpAddress(buf.subarray(m, m + len))}`;
  else if (bits < len * 8) s += `/${bits}`;
  return s;
}

/**
 * TCA_OPTIONS -> tc -j's flower options: `handle` (number), `classid`,
 * `indev`, `keys: { eth_type, ip_proto, dst_ip, src_ip, dst_port[, dst_port_mask] | dst_port: { start, end }, src_port..., tcp_flags: "0x2/12" }`,
 * `skip_hw`/`skip_sw`/`in_hw`(+`in_hw_count`)/`not_in_hw`, `actions`.
 * @throws {NetlinkDecodeError} short attributes
 */
function decodeOptions(buf: Buffer, start: number, end: number, base: number, info: { handle: number; stats?: boolean }): Record<string, unknown> {
  const T = new AttributeView(buf, start, end, base);
  const out: Record<string, unknown> = {};
  if (info.handle) out.handle = info.handle;
  const c = T.u32(TCA_FLOWER_CLASSID);
  if (c !== undefined) out.classid = classidText(c);
  const indev = T.str(TCA_FLOWER_INDEV);
  if (indev !== undefined) out.indev = indev;
  const keys: Record<string, unknown> = {};
  const be16 = (t: number): number | undefined => {
    const at = T.struct(t, 2);
    return at < 0 ? undefined : buf.readUInt16BE(at);
  };
  const eth = be16(TCA_FLOWER_KEY_ETH_TYPE) ?? 0;
  if (T.has(TCA_FLOWER_KEY_ETH_TYPE)) keys.eth_type = ethTypeText(eth);
  const proto = T.u8(TCA_FLOWER_KEY_IP_PROTO);
  if (proto !== undefined) keys.ip_proto = PROTO_NAMES[proto] ?? proto.toString(16).padStart(2, '0');
  for (const [name, a4, m4, a6, m6] of [
    ['dst_ip', TCA_FLOWER_KEY_IPV4_DST, TCA_FLOWER_KEY_IPV4_DST_MASK, TCA_FLOWER_KEY_IPV6_DST, TCA_FLOWER_KEY_IPV6_DST_MASK],
    ['src_ip', TCA_FLOWER_KEY_IPV4_SRC, TCA_FLOWER_KEY_IPV4_SRC_MASK, TCA_FLOWER_KEY_IPV6_SRC, TCA_FLOWER_KEY_IPV6_SRC_MASK],
  ] as const) {
    const len = eth === ETH_P_IP ? 4 : eth === ETH_P_IPV6 ? 16 : 0;
    if (!len) continue;
    const [ta, tm] = len === 4 ? [a4, m4] : [a6, m6];
    if (T.size(ta) === len && T.size(tm) === len) keys[name] = ipText(buf, T.at(ta), T.at(tm), len);
  }
  const ports = proto === undefined ? undefined : PORT_TYPES[proto];
  if (ports) {
    for (const [name, idx] of [
      ['dst_port', 1],
      ['src_port', 0],
    ] as const) {
      const v = be16(ports[idx]);
      if (v === undefined) continue;
      keys[name] = v;
      const m = be16(ports[idx + 2]);
      if (m !== undefined && m !== 0xffff) keys[`${name}_mask`] = m.toString(16);
    }
  }
  if (ports) {
    for (const [name, tmin, tmax] of [
      ['dst_port', TCA_FLOWER_KEY_PORT_DST_MIN, TCA_FLOWER_KEY_PORT_DST_MAX],
      ['src_port', TCA_FLOWER_KEY_PORT_SRC_MIN, TCA_FLOWER_KEY_PORT_SRC_MAX],
    ] as const) {
      const lo = be16(tmin);
      const hi = be16(tmax);
      if (lo !== undefined && hi !== undefined) keys[name] = { start: lo, end: hi };
    }
  }
  const tf = be16(TCA_FLOWER_KEY_TCP_FLAGS);
  if (tf !== undefined) {
    const tm = be16(TCA_FLOWER_KEY_TCP_FLAGS_MASK);
    keys.tcp_flags = `0x${tf.toString(16)}${tm === undefined ? '' : `/${tm.toString(16)}`}`;
  }
  out.keys = keys;
  const f = T.u32(TCA_FLOWER_FLAGS);
  if (f !== undefined) {
    decodeClsFlags(f, out);
    if (out.in_hw) {
      const n = T.u32(TCA_FLOWER_IN_HW_COUNT);
      if (n !== undefined) out.in_hw_count = n;
    }
  }
  const act = T.at(TCA_FLOWER_ACT);
  if (act >= 0) out.actions = decodeActionList(buf, act, act + T.size(TCA_FLOWER_ACT), base, info.stats !== false);
  return out;
}

/** tc's text: `handle 0x1 [classid X] \n  eth_type ipv6\n  ip_proto tcp ...\n  not_in_hw` then the actions. */
function formatOptions(o: Record<string, unknown>): string {
  let s = '';
  if (o.handle !== undefined) s += `handle 0x${(o.handle as number).toString(16)} `;
  if (o.classid !== undefined) s += `classid ${o.classid} `;
  if (o.indev !== undefined) s += `\n  indev ${o.indev}`;
  const k = (o.keys ?? {}) as Record<string, unknown>;
  for (const name of ['eth_type', 'ip_proto', 'dst_ip', 'src_ip']) if (k[name] !== undefined) s += `\n  ${name} ${k[name]}`;
  for (const name of ['dst_port', 'src_port']) {
    if (k[name] === undefined || typeof k[name] === 'object') continue;
    s += `\n  ${name} ${k[name]}`;
    if (k[`${name}_mask`] !== undefined) s += `/0x${k[`${name}_mask`]}`;
  }
  for (const name of ['dst_port', 'src_port']) {
    const r = k[name] as { start?: number; end?: number } | undefined;
    if (r && typeof r === 'object') s += `\n  ${name} ${r.start}-${r.end}`;
  }
  if (k.tcp_flags !== undefined) s += `\n  tcp_flags ${k.tcp_flags}`;
  for (const f of ['skip_hw', 'skip_sw']) if (o[f]) s += `\n  ${f}`;
  if (o.in_hw) s += `\n  in_hw${o.in_hw_count !== undefined ? ` in_hw_count ${o.in_hw_count}` : ''}`;
  else if (o.not_in_hw) s += '\n  not_in_hw';
  if (Array.isArray(o.actions)) s += formatActionList(o.actions as ActionEntry[]);
  return s;
}

/** cls_flower. */
export const flower: FilterKind<FlowerOptions> = {
  kind: 'flower',
  optionKeys: FLOWER_OPTION_KEYS,
  encodeOptions,
  decodeOptions,
  parseHandle: (t) => parseU32Text(t, 'flower handle'),
  formatOptions,
};

/**
 * What {@link flowerSynMatch} builds filters for: the {@link SynMatchOptions}
 * (family 'inet': protocol "ip", eth_type ipv4; 'inet6': protocol "ipv6",
 * eth_type ipv6; one filter per port).
 */
export type FlowerSynMatchOptions = SynMatchOptions;

/**
 * flower filters that match TCP segments with SYN set and ACK clear
 * (`tcp_flags 0x2/0x12`) to the destination port(s), optionally one
 * destination address or prefix, with `actions`. flower parses the headers
 * itself: IPv4 options and IPv6 extension headers are followed by the
 * kernel's flow dissector (no limit of u32's kind).
 * @returns the filter protocol ("ip" / "ipv6") and one options object per port, all for the same parent and pref
 * @throws {UsageError} a port outside 1..65535, an address of the other family
 */
export function flowerSynMatch(o: FlowerSynMatchOptions): { protocol: 'ip' | 'ipv6'; filters: Array<{ options: FlowerOptions }> } {
  const list = synMatchPorts('flower SYN match', o, ['family', 'dport', 'dst', 'actions']);
  const ethType = o.family === 'inet' ? 'ipv4' : 'ipv6';
  const filters = list.map((p) => {
    const options: FlowerOptions = {
      eth_type: ethType,
      ip_proto: 'tcp',
      ...(o.dst === undefined ? {} : { dst_ip: o.dst }),
      dst_port: parseIntArg(p as number, 'flower SYN match dport', 1, 65535),
      tcp_flags: { value: 0x02, mask: 0x12 },
      ...(o.actions === undefined ? {} : { actions: o.actions }),
    };
    encodeOptions({ ...options, actions: undefined }); // check the address family now (actions may still name their device: resolveActionDevices)
    return { options };
  });
  return { protocol: o.family === 'inet' ? 'ip' : 'ipv6', filters };
}
