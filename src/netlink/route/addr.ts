/**
 * IPv4 and IPv6 addresses (rtnetlink RTM_NEWADDR / RTM_DELADDR /
 * RTM_GETADDR), decoded to the fields of `ip -j addr show`, printed like
 * `ip addr show`.
 *
 * ```c
 * // linux/if_addr.h
 * struct ifaddrmsg {
 *   __u8  ifa_family;
 *   __u8  ifa_prefixlen;  // the prefix length
 *   __u8  ifa_flags;      // IFA_F_* (low 8 bits; IFA_FLAGS carries all 32)
 *   __u8  ifa_scope;      // RT_SCOPE_*
 *   __u32 ifa_index;      // link index
 * };
 * struct ifa_cacheinfo {
 *   __u32 ifa_prefered;   // seconds left, 0xffffffff = forever
 *   __u32 ifa_valid;
 *   __u32 cstamp;         // created, hundredths of seconds since boot
 *   __u32 tstamp;         // updated
 * };
 * ```
 *
 * @module
 */
import { constants as osConstants } from 'node:os';
import { bin, parseAttributes, str, u8, u32 } from '../attributes.js';
import { NetlinkDecodeError, NetlinkError, UsageError } from '../errors.js';
import { NETLINK_ROUTE, NLM_F_REQUEST, NLM_F_CREATE, NLM_F_EXCL, NLM_F_REPLACE, type NetlinkMessage } from '../message.js';
import { AF_INET, AF_INET6, formatIp, parseIp, parseIpPrefix, type ParsedIp } from '../ipaddr.js';
import { registerBodyDecoder } from '../protocols.js';
import { RTM_DELADDR, RTM_GETADDR, RTM_NEWADDR } from './constants.js';
import { listRawLinks, resolveIfindex, toLinkInfo, getLinkByName, getLinkByIndex, formatLink, type LinkInfo, type RouteConnection } from './link.js';

/** sizeof(struct ifaddrmsg) */
export const IFADDRMSG_LEN = 8;

/* enum IFA_* (linux/if_addr.h) */
export const IFA_UNSPEC = 0;
export const IFA_ADDRESS = 1;
export const IFA_LOCAL = 2;
export const IFA_LABEL = 3;
export const IFA_BROADCAST = 4;
export const IFA_ANYCAST = 5;
export const IFA_CACHEINFO = 6;
export const IFA_MULTICAST = 7;
export const IFA_FLAGS = 8;
export const IFA_RT_PRIORITY = 9;
export const IFA_TARGET_NETNSID = 10;
export const IFA_PROTO = 11;

/* IFA_F_* (linux/if_addr.h) */
export const IFA_F_SECONDARY = 0x01;
export const IFA_F_TEMPORARY = IFA_F_SECONDARY;
export const IFA_F_NODAD = 0x02;
export const IFA_F_OPTIMISTIC = 0x04;
export const IFA_F_DADFAILED = 0x08;
export const IFA_F_HOMEADDRESS = 0x10;
export const IFA_F_DEPRECATED = 0x20;
export const IFA_F_TENTATIVE = 0x40;
export const IFA_F_PERMANENT = 0x80;
export const IFA_F_MANAGETEMPADDR = 0x100;
export const IFA_F_NOPREFIXROUTE = 0x200;
export const IFA_F_MCAUTOJOIN = 0x400;
export const IFA_F_STABLE_PRIVACY = 0x800;

/** INFINITY_LIFE_TIME: an ifa_cacheinfo lifetime that never ends. */
export const INFINITY_LIFE_TIME = 0xffffffff;

/* address families (linux/socket.h) */
export const AF_UNSPEC = 0;
export { AF_INET, AF_INET6 };
export const AF_PACKET = 17;

/* enum rt_scope_t (linux/rtnetlink.h) */
export const RT_SCOPE_UNIVERSE = 0;
export const RT_SCOPE_SITE = 200;
export const RT_SCOPE_LINK = 253;
export const RT_SCOPE_HOST = 254;
export const RT_SCOPE_NOWHERE = 255;

const SCOPE_NAMES: Record<number, string> = { 0: 'global', 200: 'site', 253: 'link', 254: 'host', 255: 'nowhere' };
const PROTO_NAMES: Record<number, string> = { 0: 'unspec', 1: 'kernel_lo', 2: 'kernel_ra', 3: 'kernel_ll' };

/** `ip`'s name of an address scope: global, site, link, host, nowhere, else the number as text. */
export function scopeName(scope: number): string {
  return SCOPE_NAMES[scope] ?? String(scope);
}

/** `ip`'s name of an address family: inet, inet6, link; undefined otherwise. */
export function familyName(family: number): string | undefined {
  return family === AF_INET ? 'inet' : family === AF_INET6 ? 'inet6' : family === AF_PACKET ? 'link' : undefined;
}

// ---- IP address text <-> bytes (src/netlink/ipaddr.ts, under the names this module always had) ----

/**
 * Format 4 or 16 bytes as glibc's inet_ntop does (what `ip` prints); see
 * {@link formatIp} in src/netlink/ipaddr.ts, which this is.
 */
export const formatIpAddress: (b: Uint8Array) => string = formatIp;

/**
 * Parse an IPv4 or IPv6 address (no prefix, no zone); see {@link parseIp}
 * in src/netlink/ipaddr.ts, which this is.
 * @throws {UsageError} not an IP address, or an IPv6 zone (`%eth0`)
 */
export const parseIpAddress: (text: string) => ParsedIp = parseIp;

export type { ParsedIp };

// ---- decoding ----

/**
 * One address with the fields of `ip -j addr show`'s `addr_info` entries,
 * plus `index` (and `dev` when known), which `ip -j -o addr` also prints.
 */
export interface AddressInfo {
  /** ifa_index */
  index: number;
  /** the device name, when known */
  dev?: string;
  /** "inet" or "inet6" ("link" for AF_PACKET) */
  family?: string;
  /** ifa_family when it has no name */
  family_index?: number;
  /** IFA_LOCAL (IFA_ADDRESS when absent) */
  local?: string;
  /** IFA_ADDRESS when it differs from IFA_LOCAL: the peer of a point-to-point address */
  address?: string;
  /** ifa_prefixlen */
  prefixlen: number;
  /** IFA_RT_PRIORITY */
  metric?: number;
  /** IFA_BROADCAST */
  broadcast?: string;
  /** IFA_ANYCAST */
  anycast?: string;
  /** IFA_MULTICAST */
  multicast?: string;
  /** ifa_scope by name: "global", "link", "host"... */
  scope: string;
  /** IFA_F_SECONDARY on IPv4 */
  secondary?: true;
  /** IFA_F_TEMPORARY (= SECONDARY) on IPv6 */
  temporary?: true;
  nodad?: true;
  optimistic?: true;
  dadfailed?: true;
  home?: true;
  deprecated?: true;
  tentative?: true;
  /** IFA_F_PERMANENT is NOT set */
  dynamic?: true;
  mngtmpaddr?: true;
  noprefixroute?: true;
  autojoin?: true;
  'stable-privacy'?: true;
  /** flag bits without a name, as hex */
  ifa_flags?: string;
  /** IFA_PROTO by name: "kernel_lo", "kernel_ll"... */
  protocol?: string;
  /** IFA_LABEL (IPv4) */
  label?: string;
  /** ifa_cacheinfo.ifa_valid, seconds; 4294967295 = forever */
  valid_life_time?: number;
  /** ifa_cacheinfo.ifa_prefered, seconds; 4294967295 = forever (signed when deprecated) */
  preferred_life_time?: number;
}

// ip/ipaddress.c ifa_flag_data, in print order
const IFA_FLAG_NAMES: Array<[number, keyof AddressInfo]> = [
  [IFA_F_NODAD, 'nodad'],
  [IFA_F_OPTIMISTIC, 'optimistic'],
  [IFA_F_DADFAILED, 'dadfailed'],
  [IFA_F_HOMEADDRESS, 'home'],
  [IFA_F_DEPRECATED, 'deprecated'],
  [IFA_F_TENTATIVE, 'tentative'],
];
const IFA_FLAG_NAMES_2: Array<[number, keyof AddressInfo]> = [
  [IFA_F_MANAGETEMPADDR, 'mngtmpaddr'],
  [IFA_F_NOPREFIXROUTE, 'noprefixroute'],
  [IFA_F_MCAUTOJOIN, 'autojoin'],
  [IFA_F_STABLE_PRIVACY, 'stable-privacy'],
];

/**
 * Decode an ifaddrmsg message (RTM_NEWADDR/DELADDR/GETADDR) to `ip -j addr` fields.
 * @param msg the message; offsets in errors are relative to its datagram
 * @throws {NetlinkDecodeError} payload shorter than `struct ifaddrmsg`, malformed
 *   attributes, an IFA_CACHEINFO shorter than 8 bytes
 */
export function decodeAddress(msg: NetlinkMessage): AddressInfo {
  const p = msg.payload;
  const at = msg.offset + 16;
  if (p.length < IFADDRMSG_LEN) throw new NetlinkDecodeError(`ifaddrmsg needs ${IFADDRMSG_LEN} bytes, the message has ${p.length}`, at);
  const family = p.readUInt8(0);
  const prefixlen = p.readUInt8(1);
  const scope = p.readUInt8(3);
  const attrs = parseAttributes(p.subarray(IFADDRMSG_LEN), at + IFADDRMSG_LEN);
  const flags = attrs.u32(IFA_FLAGS) ?? p.readUInt8(2);
  const out: Partial<AddressInfo> = { index: p.readUInt32LE(4) };
  const fname = familyName(family);
  if (fname) out.family = fname;
  else out.family_index = family;
  const localB = attrs.bin(IFA_LOCAL) ?? attrs.bin(IFA_ADDRESS);
  const addrB = attrs.bin(IFA_ADDRESS) ?? attrs.bin(IFA_LOCAL);
  if (localB) {
    out.local = formatIp(localB);
    if (addrB && !addrB.equals(localB)) out.address = formatIp(addrB);
  }
  out.prefixlen = prefixlen;
  const metric = attrs.u32(IFA_RT_PRIORITY);
  if (localB && metric !== undefined) out.metric = metric;
  for (const [t, k] of [
    [IFA_BROADCAST, 'broadcast'],
    [IFA_ANYCAST, 'anycast'],
    [IFA_MULTICAST, 'multicast'],
  ] as const) {
    const b = attrs.bin(t);
    if (b) out[k] = formatIp(b);
  }
  out.scope = scopeName(scope);
  let f = flags;
  if (f & IFA_F_SECONDARY) {
    if (family === AF_INET6) out.temporary = true;
    else out.secondary = true;
  }
  f &= ~IFA_F_SECONDARY;
  for (const [bit, k] of IFA_FLAG_NAMES) {
    if (f & bit) (out as Record<string, unknown>)[k] = true;
    f &= ~bit;
  }
  if (!(f & IFA_F_PERMANENT)) out.dynamic = true;
  f &= ~IFA_F_PERMANENT;
  for (const [bit, k] of IFA_FLAG_NAMES_2) {
    if (f & bit) (out as Record<string, unknown>)[k] = true;
    f &= ~bit;
  }
  if (f) out.ifa_flags = (f >>> 0).toString(16).padStart(2, '0');
  const proto = attrs.u8(IFA_PROTO);
  if (proto !== undefined) out.protocol = PROTO_NAMES[proto] ?? String(proto);
  const label = attrs.str(IFA_LABEL);
  if (label !== undefined) out.label = label;
  const ci = attrs.get(IFA_CACHEINFO);
  if (ci) {
    if (ci.data.length < 8) throw new NetlinkDecodeError(`IFA_CACHEINFO has ${ci.data.length} bytes, needs 8`, ci.offset);
    out.valid_life_time = ci.data.readUInt32LE(4);
    const pref = ci.data.readUInt32LE(0);
    out.preferred_life_time = pref !== INFINITY_LIFE_TIME && flags & IFA_F_DEPRECATED ? ci.data.readInt32LE(0) : pref;
  }
  return out as AddressInfo;
}

/**
 * Body decoder for `synplug decode` (RTM_NEWADDR/DELADDR/GETADDR): the
 * {@link AddressInfo} fields. In a request (NLM_F_REQUEST), `dynamic` is
 * left out: IFA_F_PERMANENT is only ever set by the kernel.
 * @throws {NetlinkDecodeError}
 */
export function decodeAddressBody(msg: NetlinkMessage): Record<string, unknown> {
  const a: Record<string, unknown> = { ...decodeAddress(msg) };
  if (msg.flags & NLM_F_REQUEST) delete a.dynamic;
  return a;
}

for (const t of [RTM_NEWADDR, RTM_DELADDR, RTM_GETADDR]) registerBodyDecoder(NETLINK_ROUTE, t, decodeAddressBody);

// ---- text ----

/**
 * One address as `ip addr show` prints it, two lines without the final newline:
 * ```
 *     inet 127.0.0.1/8 scope host lo
 *        valid_lft forever preferred_lft forever
 * ```
 * Spacing follows iproute2 exactly (a trailing space after the scope or flags when there is no label).
 */
export function formatAddress(a: AddressInfo): string {
  let s = `    ${a.family ?? `family ${a.family_index}`} `;
  if (a.local !== undefined) {
    s += a.local;
    if (a.address !== undefined) s += ` peer ${a.address}`;
    s += `/${a.prefixlen} `;
    if (a.metric !== undefined) s += `metric ${a.metric} `;
  }
  if (a.broadcast !== undefined) s += `brd ${a.broadcast} `;
  if (a.anycast !== undefined) s += `any ${a.anycast} `;
  if (a.multicast !== undefined) s += `mcast ${a.multicast} `;
  s += `scope ${a.scope} `;
  for (const k of [
    'secondary',
    'temporary',
    'nodad',
    'optimistic',
    'dadfailed',
    'home',
    'deprecated',
    'tentative',
    'dynamic',
    'mngtmpaddr',
    'noprefixroute',
    'autojoin',
    'stable-privacy',
  ] as const) {
    if (a[k]) s += `${k} `;
  }
  if (a.ifa_flags !== undefined) s += `flags ${a.ifa_flags} `;
  if (a.protocol !== undefined && a.protocol !== 'unspec') s += `proto ${a.protocol} `;
  if (a.label !== undefined) s += a.label;
  if (a.valid_life_time !== undefined) {
    const lft = (v: number | undefined): string => (v === INFINITY_LIFE_TIME ? 'forever' : `${v}sec`);
    s += `\n       valid_lft ${lft(a.valid_life_time)} preferred_lft ${lft(a.preferred_life_time)}`;
  }
  return s;
}

/** One link of `ip -j addr show`: the link's fields plus its addresses. */
export type LinkAddresses = LinkInfo & { addr_info: Array<Omit<AddressInfo, 'index' | 'dev'>> };

/**
 * `ip addr show` text for links with their addresses, one block per link, ending with a newline.
 * @param options `family`: as `ip -4`/`ip -6`, which leave out the "link/..." line
 */
export function formatAddrShow(links: readonly LinkAddresses[], options: { family?: AddressFilter['family'] } = {}): string {
  let s = '';
  for (const l of links) {
    s += formatLink(l, { linkLayer: options.family === undefined }) + '\n';
    for (const a of l.addr_info) s += formatAddress({ index: l.ifindex, ...a }) + '\n';
  }
  return s;
}

// ---- requests ----

/** Which addresses {@link listAddresses} returns. */
export interface AddressFilter {
  /** only this device (name or index) */
  dev?: string | number;
  /** only this family */
  family?: 'inet' | 'inet6' | 4 | 6;
}

function familyNumber(f: AddressFilter['family']): number {
  if (f === undefined) return AF_UNSPEC;
  if (f === 'inet' || f === 4) return AF_INET;
  if (f === 'inet6' || f === 6) return AF_INET6;
  throw new UsageError(`address family '${String(f)}' is not inet or inet6`);
}

/** One RTM_GETADDR dump of a family (AF_UNSPEC: all), decoded, unfiltered. */
async function dumpAddresses(conn: RouteConnection, family: number): Promise<AddressInfo[]> {
  const hdr = Buffer.alloc(IFADDRMSG_LEN);
  hdr.writeUInt8(family, 0);
  const msgs = await conn.dumpAll({ type: RTM_GETADDR, payload: hdr });
  return msgs.filter((m) => m.type === RTM_NEWADDR).map(decodeAddress);
}

/**
 * The addresses of every link, or of one (an RTM_GETADDR dump, filtered here:
 * without NETLINK_GET_STRICT_CHK the kernel ignores ifa_index in dumps).
 * @returns addresses in the kernel's order; `dev` is set (the given name, or
 *   names from one RTM_GETLINK dump when no device was given)
 * @throws {UsageError} a bad device name or family
 * @throws {NetlinkError} "device 'X' not found" (ENODEV), or a failed dump
 */
export async function listAddresses(conn: RouteConnection, filter: AddressFilter = {}): Promise<AddressInfo[]> {
  const family = familyNumber(filter.family);
  let index: number | undefined;
  let names: Map<number, string> | undefined;
  if (filter.dev !== undefined) {
    index = await resolveIfindex(conn, filter.dev);
    if (typeof filter.dev === 'number') {
      const l = await getLinkByIndex(conn, filter.dev);
      names = new Map([[l.ifindex, l.ifname]]);
    } else {
      names = new Map([[index, filter.dev]]);
    }
  }
  let out = await dumpAddresses(conn, family);
  if (index !== undefined) out = out.filter((a) => a.index === index);
  if (family !== AF_UNSPEC) out = out.filter((a) => a.family === familyName(family));
  if (!names) names = new Map((await listRawLinks(conn)).map((r) => [r.index, r.ifname ?? `if${r.index}`]));
  return out.map((a) => {
    const dev = names!.get(a.index);
    const { index: i, ...rest } = a;
    return dev === undefined ? a : { index: i, dev, ...rest };
  });
}

/**
 * `ip -j addr show [dev X]` as data: links with their `addr_info`. With a
 * family, links without an address of that family are left out (as `ip -4`/`ip -6` do).
 * @throws {UsageError} a bad device name or family
 * @throws {NetlinkError} "device 'X' not found" (ENODEV), or a failed dump
 */
export async function showAddresses(conn: RouteConnection, filter: AddressFilter = {}): Promise<LinkAddresses[]> {
  const family = familyNumber(filter.family);
  let links: LinkInfo[];
  if (filter.dev !== undefined) {
    links = [typeof filter.dev === 'number' ? await getLinkByIndex(conn, filter.dev, { addr: true }) : await getLinkByName(conn, filter.dev, { addr: true })];
  } else {
    const raws = await listRawLinks(conn);
    const byIndex = new Map(raws.map((r) => [r.index, r]));
    links = raws.map((r) => toLinkInfo(r, { name: (i) => byIndex.get(i)?.ifname, flags: (i) => byIndex.get(i)?.flags }, { addr: true }));
  }
  const addrs = await dumpAddresses(conn, family);
  const out: LinkAddresses[] = [];
  for (const l of links) {
    const mine = addrs.filter((a) => a.index === l.ifindex && (family === AF_UNSPEC || a.family === familyName(family)));
    if (family !== AF_UNSPEC && mine.length === 0) continue;
    out.push({ ...l, addr_info: mine.map(({ index: _i, dev: _d, ...rest }) => rest) });
  }
  return out;
}

/** An address to add or delete. */
export interface AddressSpec {
  /** device name or index */
  dev: string | number;
  /** IPv4 or IPv6 address; may carry "/prefixlen" when `prefixlen` is not given */
  address: string;
  /** prefix length (default: from `address`, else 32 / 128) */
  prefixlen?: number;
  /** point-to-point peer (IFA_ADDRESS), same family */
  peer?: string;
}

/** Options of {@link addAddress}. */
export interface AddAddressOptions extends AddressSpec {
  /** IFA_LABEL (IPv4 only), e.g. "lo:synplug"; at most 15 bytes */
  label?: string;
  /** ifa_scope: a name or a number (default: host for 127.0.0.0/8, else global, as `ip` does) */
  scope?: 'global' | 'site' | 'link' | 'host' | 'nowhere' | number;
  /** IFA_BROADCAST (IPv4 only) */
  broadcast?: string;
  /** IFA_CACHEINFO valid lifetime in seconds (default forever) */
  validLifetime?: number;
  /** IFA_CACHEINFO preferred lifetime in seconds (default = validLifetime, or forever) */
  preferredLifetime?: number;
  /** IFA_F_NOPREFIXROUTE: do not add the prefix route */
  noprefixroute?: boolean;
  /** IFA_F_NODAD (IPv6): skip duplicate address detection */
  nodad?: boolean;
  /** NLM_F_REPLACE|NLM_F_CREATE (`ip addr replace`) instead of NLM_F_CREATE|NLM_F_EXCL (`ip addr add`) */
  replace?: boolean;
  /** IFA_PROTO (u8, Linux 5.18+; `ip addr add ... proto N`): who added the address; older kernels ignore it */
  protocol?: number;
}

interface Resolved {
  ip: ParsedIp;
  prefixlen: number;
  peer?: ParsedIp;
  text: string;
}

function resolveSpec(spec: AddressSpec): Resolved & { prefixGiven: boolean } {
  if (!spec || typeof spec.address !== 'string') throw new UsageError('an address is required');
  const slash = spec.address.indexOf('/');
  const addrText = slash >= 0 ? spec.address.slice(0, slash) : spec.address;
  const { prefixlen, prefixGiven, ...ip } = parseIpPrefix(spec.address, spec.prefixlen);
  let peer: ParsedIp | undefined;
  if (spec.peer !== undefined) {
    peer = parseIp(spec.peer);
    if (peer.version !== ip.version) throw new UsageError(`peer ${spec.peer} and address ${addrText} are of different families`);
  }
  return { ip, prefixlen, peer, text: `${addrText}${peer ? ` peer ${spec.peer}` : ''}/${prefixlen}`, prefixGiven };
}

function scopeNumber(s: AddAddressOptions['scope'], ip: ParsedIp): number {
  if (s === undefined) return ip.version === 4 && ip.bytes[0] === 127 ? RT_SCOPE_HOST : RT_SCOPE_UNIVERSE;
  if (typeof s === 'number') {
    if (!Number.isInteger(s) || s < 0 || s > 255) throw new UsageError(`scope ${s} is not 0-255`);
    return s;
  }
  const n = Object.entries(SCOPE_NAMES).find(([, name]) => name === s);
  if (!n) throw new UsageError(`scope '${String(s)}' is not global, site, link, host or nowhere`);
  return Number(n[0]);
}

function ifaddrmsg(family: number, prefixlen: number, flags: number, scope: number, index: number): Buffer {
  const b = Buffer.alloc(IFADDRMSG_LEN);
  b.writeUInt8(family, 0);
  b.writeUInt8(prefixlen, 1);
  b.writeUInt8(flags, 2);
  b.writeUInt8(scope, 3);
  b.writeUInt32LE(index, 4);
  return b;
}

/**
 * The RTM_NEWADDR request for an address on link `index`, built as
 * `ip addr add` builds it: ifaddrmsg, IFA_LOCAL, IFA_LABEL, IFA_ADDRESS
 * (the peer, else the address again), IFA_BROADCAST, IFA_CACHEINFO, and
 * flags in ifa_flags (or IFA_FLAGS when above 0xff).
 * @returns type, flags (NLM_F_CREATE|NLM_F_EXCL, or NLM_F_CREATE|NLM_F_REPLACE) and payload
 * @throws {UsageError} a bad address, prefix, label, scope or lifetime
 */
export function newAddressRequest(index: number, o: Omit<AddAddressOptions, 'dev'>): { type: number; flags: number; payload: Buffer[] } {
  const r = resolveSpec({ ...o, dev: index });
  let flags = 0;
  if (o.noprefixroute) flags |= IFA_F_NOPREFIXROUTE;
  if (o.nodad) {
    if (r.ip.version !== 6) throw new UsageError('nodad applies to IPv6 addresses only');
    flags |= IFA_F_NODAD;
  }
  const parts: Buffer[] = [ifaddrmsg(r.ip.family, r.prefixlen, flags <= 0xff ? flags : 0, scopeNumber(o.scope, r.ip), index)];
  parts.push(bin(IFA_LOCAL, r.ip.bytes));
  if (o.label !== undefined) {
    if (r.ip.version !== 4) throw new UsageError('address labels apply to IPv4 addresses only');
    if (o.label.length === 0 || Buffer.byteLength(o.label) > 15) throw new UsageError(`label '${o.label}' must be 1-15 bytes`);
    parts.push(str(IFA_LABEL, o.label));
  }
  parts.push(bin(IFA_ADDRESS, (r.peer ?? r.ip).bytes));
  if (o.broadcast !== undefined) {
    const b = parseIp(o.broadcast);
    if (r.ip.version !== 4 || b.version !== 4) throw new UsageError('a broadcast address applies to IPv4 addresses only');
    parts.push(bin(IFA_BROADCAST, b.bytes));
  }
  if (o.validLifetime !== undefined || o.preferredLifetime !== undefined) {
    const valid = o.validLifetime ?? INFINITY_LIFE_TIME;
    const pref = o.preferredLifetime ?? valid;
    for (const [n, v] of [
      ['validLifetime', valid],
      ['preferredLifetime', pref],
    ] as const) {
      if (!Number.isInteger(v) || v < 0 || v > INFINITY_LIFE_TIME) throw new UsageError(`${n} ${v} is not 0-4294967295 seconds`);
    }
    if (valid === 0) throw new UsageError('validLifetime must not be 0');
    if (pref > valid) throw new UsageError('preferredLifetime is greater than validLifetime');
    const ci = Buffer.alloc(16);
    ci.writeUInt32LE(pref, 0);
    ci.writeUInt32LE(valid, 4);
    parts.push(bin(IFA_CACHEINFO, ci));
  }
  if (flags > 0xff) parts.push(u32(IFA_FLAGS, flags));
  if (o.protocol !== undefined) {
    if (!Number.isInteger(o.protocol) || o.protocol < 0 || o.protocol > 0xff) throw new UsageError(`address protocol ${String(o.protocol)} is not 0-255`);
    parts.push(u8(IFA_PROTO, o.protocol));
  }
  return { type: RTM_NEWADDR, flags: o.replace ? NLM_F_CREATE | NLM_F_REPLACE : NLM_F_CREATE | NLM_F_EXCL, payload: parts };
}

/**
 * The RTM_DELADDR request, as `ip addr del` builds it: ifaddrmsg (scope 0),
 * IFA_LOCAL, and IFA_ADDRESS unless the prefix length was left out of an
 * IPv4 address (the kernel then deletes the address whatever its prefix).
 * @throws {UsageError} a bad address or prefix
 */
export function deleteAddressRequest(index: number, o: Omit<AddressSpec, 'dev'>): { type: number; flags: number; payload: Buffer[] } {
  const r = resolveSpec({ ...o, dev: index });
  const wildcard = !r.prefixGiven && !r.peer && r.ip.version === 4;
  const parts = [ifaddrmsg(r.ip.family, r.prefixlen, 0, 0, index), bin(IFA_LOCAL, r.ip.bytes)];
  if (!wildcard) parts.push(bin(IFA_ADDRESS, (r.peer ?? r.ip).bytes));
  return { type: RTM_DELADDR, flags: 0, payload: parts };
}

function devText(dev: string | number): string {
  return typeof dev === 'number' ? `device with index ${dev}` : `device '${dev}'`;
}

/**
 * Add an address (`ip addr add ADDRESS/PREFIX dev DEV`): one RTM_GETLINK to
 * resolve a device name, then RTM_NEWADDR.
 * @throws {UsageError} a bad device name, address, prefix, label, scope or lifetime
 * @throws {NetlinkError} with a specific sentence: "device 'X' not found" (ENODEV),
 *   "address A/N already exists on device 'X'" (EEXIST), "IPv6 is disabled on device 'X'"
 *   (EACCES on an IPv6 address), otherwise "adding address A/N to device 'X' failed: CODE"
 */
export async function addAddress(conn: RouteConnection, o: AddAddressOptions): Promise<void> {
  const req0 = resolveSpec(o);
  newAddressRequest(1, o); // validate every option before any request
  const index = await resolveIfindex(conn, o.dev);
  const req = newAddressRequest(index, o);
  try {
    await conn.request(req);
  } catch (e) {
    if (!(e instanceof NetlinkError)) throw e;
    const d = devText(o.dev);
    if (e.code === 'EEXIST') throw e.withMessage(`address ${req0.text} already exists on ${d}`);
    if (e.code === 'ENODEV') throw e.withMessage(`${d} not found`);
    if (e.code === 'EACCES' && req0.ip.version === 6) throw e.withMessage(`IPv6 is disabled on ${d} (net.ipv6.conf.*.disable_ipv6)`);
    if (e.code === 'EPERM') throw e.withMessage(`adding address ${req0.text} to ${d} needs CAP_NET_ADMIN (EPERM)`);
    throw e.withMessage(`adding address ${req0.text} to ${d} failed: ${e.code}`);
  }
}

/**
 * Delete an address (`ip addr del ADDRESS[/PREFIX] dev DEV`). Without a
 * prefix length, an IPv4 address is deleted whatever its prefix; an IPv6
 * address's prefix is looked up first (one RTM_GETADDR dump).
 * @throws {UsageError} a bad device name, address or prefix
 * @throws {NetlinkError} "device 'X' not found" (ENODEV), "address A/N is not on
 *   device 'X'" (EADDRNOTAVAIL), otherwise "deleting address A/N from device 'X' failed: CODE"
 */
export async function deleteAddress(conn: RouteConnection, o: AddressSpec): Promise<void> {
  const r = resolveSpec(o);
  const index = await resolveIfindex(conn, o.dev);
  const d = devText(o.dev);
  let spec: Omit<AddressSpec, 'dev'> = o;
  if (!r.prefixGiven && r.ip.version === 6) {
    const local = formatIp(r.ip.bytes);
    const found = (await dumpAddresses(conn, AF_INET6)).find((a) => a.index === index && a.local === local);
    if (!found) {
      throw new NetlinkError({ errno: osConstants.errno.EADDRNOTAVAIL, requestType: 'RTM_DELADDR', message: `address ${local} is not on ${d}` });
    }
    spec = { ...o, address: local, prefixlen: found.prefixlen };
  }
  const req = deleteAddressRequest(index, spec);
  const text = r.prefixGiven || r.ip.version === 6 ? resolveSpec(spec as AddressSpec).text : formatIp(r.ip.bytes);
  try {
    await conn.request(req);
  } catch (e) {
    if (!(e instanceof NetlinkError)) throw e;
    if (e.code === 'EADDRNOTAVAIL') throw e.withMessage(`address ${text} is not on ${d}`);
    if (e.code === 'ENODEV') throw e.withMessage(`${d} not found`);
    if (e.code === 'EPERM') throw e.withMessage(`deleting address ${text} from ${d} needs CAP_NET_ADMIN (EPERM)`);
    throw e.withMessage(`deleting address ${text} from ${d} failed: ${e.code}`);
  }
}
