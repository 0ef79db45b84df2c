/**
 * IP addresses and prefixes: the one parser and printer every layer uses
 * (route/ for links and addresses, sock_diag, the nftables layer, tc's
 * classifiers, the guard's configuration).
 *
 * - Bytes are in network order: 4 for IPv4 (`struct in_addr`), 16 for IPv6
 *   (`struct in6_addr`), as netlink attributes carry them (IFA_LOCAL,
 *   INET_DIAG sockid, NFTA_DATA_VALUE...).
 * - Text is printed as glibc's `inet_ntop` does, which is what iproute2
 *   (`ip`, `ss`, `tc`) and nft print: dotted quad; RFC 5952 IPv6 with the
 *   first longest run of two or more zero groups as `::`; IPv4-mapped
 *   (`::ffff:1.2.3.4`) and IPv4-compatible (`::1.2.3.4`) addresses with a
 *   dotted tail.
 * - Text is parsed as `inet_pton` does (plus `node:net`'s `isIP` check): no
 *   zone (`%eth0`), no prefix unless asked for ({@link parseIpPrefix}).
 *
 * @module
 */
import { isIP } from 'node:net';
import { UsageError } from './errors.js';

/** AF_INET (linux/socket.h): IPv4. */
export const AF_INET = 2;
/** AF_INET6 (linux/socket.h): IPv6. */
export const AF_INET6 = 10;

/** An IP address parsed from text. */
export interface ParsedIp {
  /** 4 or 6 */
  version: 4 | 6;
  /** AF_INET or AF_INET6 */
  family: number;
  /** 4 or 16 bytes, network order */
  bytes: Buffer;
}

/** An address with a prefix length, parsed from `a.b.c.d/len` or `x::y/len`. */
export interface ParsedPrefix extends ParsedIp {
  /** the prefix length: 0..32 (IPv4) or 0..128 (IPv6); the full length when none was given */
  prefixlen: number;
  /** whether the text (or the caller) gave a prefix length */
  prefixGiven: boolean;
}

/** The 12 bytes in front of an IPv4-mapped IPv6 address (`::ffff:0:0/96`, RFC 4291 2.5.5.2). */
const MAPPED_HEAD = Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]);

/**
 * Parse an IPv4 or IPv6 address, or return undefined when the text is not one.
 * @param text e.g. `"169.254.255.254"`, `"fd00::1"`, `"::ffff:1.2.3.4"` (no prefix, no zone)
 */
export function tryParseIp(text: unknown): ParsedIp | undefined {
  if (typeof text !== 'string') return undefined;
  const v = isIP(text);
  if (v === 4) return { version: 4, family: AF_INET, bytes: Buffer.from(text.split('.').map(Number)) };
  if (v !== 6 || text.includes('%')) return undefined;
  return { version: 6, family: AF_INET6, bytes: ipv6Bytes(text) };
}

/** IPv6 text (already checked by isIP) -> 16 bytes. */
function ipv6Bytes(text: string): Buffer {
  const out = Buffer.alloc(16);
  let s = text;
  // A dotted IPv4 tail ("::ffff:1.2.3.4", "1:2:3:4:5:6:1.2.3.4") fills the last 4 bytes.
  const lastColon = s.lastIndexOf(':');
  const tail = s.slice(lastColon + 1);
  let groupsMax = 8;
  if (tail.includes('.')) {
    Buffer.from(tail.split('.').map(Number)).copy(out, 12);
    s = s.slice(0, lastColon + 1);
    if (s.endsWith(':') && !s.endsWith('::')) s = s.slice(0, -1);
    groupsMax = 6;
  }
  const dbl = s.indexOf('::');
  const split = (part: string) => (part === '' ? [] : part.split(':'));
  const left = dbl < 0 ? split(s) : split(s.slice(0, dbl));
  const right = dbl < 0 ? [] : split(s.slice(dbl + 2));
  const groups = dbl < 0 ? left : [...left, ...new Array<string>(groupsMax - left.length - right.length).fill('0'), ...right];
  for (let i = 0; i < groups.length && i < groupsMax; i++) out.writeUInt16BE(parseInt(groups[i], 16), 2 * i);
  return out;
}

/**
 * Parse an IPv4 or IPv6 address (no prefix, no zone).
 * @param text the address
 * @returns version, family and network-order bytes
 * @throws {UsageError} "'X' is not an IPv4 or IPv6 address"
 */
export function parseIp(text: string): ParsedIp {
  const ip = tryParseIp(text);
  if (!ip) throw new UsageError(`'${String(text)}' is not an IPv4 or IPv6 address`);
  return ip;
}

/**
 * Parse an address with an optional prefix length: `10.0.0.1/24`,
 * `fd00::/8`, `1.2.3.4` (prefix length 32). The bits past the prefix are
 * kept as given (`ip addr add 10.0.0.1/24` keeps its host part).
 * @param text the address, optionally `/len` (decimal, 0..32 or 0..128)
 * @param prefixlen a prefix length given separately; it must agree with one in the text
 * @throws {UsageError} not an address, a prefix length that is not a number or out of range, or two that disagree
 */
export function parseIpPrefix(text: string, prefixlen?: number): ParsedPrefix {
  if (typeof text !== 'string') throw new UsageError(`'${String(text)}' is not an IPv4 or IPv6 address`);
  let addr = text;
  let len = prefixlen;
  const slash = text.indexOf('/');
  if (slash >= 0) {
    const p = text.slice(slash + 1);
    addr = text.slice(0, slash);
    if (!/^\d{1,3}$/.test(p)) throw new UsageError(`'${text}': the prefix length '${p}' is not a number`);
    if (len !== undefined && len !== Number(p)) throw new UsageError(`'${text}' disagrees with prefixlen ${len}`);
    len = Number(p);
  }
  const ip = parseIp(addr);
  const max = ip.version === 4 ? 32 : 128;
  const prefixGiven = len !== undefined;
  if (len === undefined) len = max;
  if (!Number.isInteger(len) || len < 0 || len > max) {
    throw new UsageError(`prefix length ${len} is out of range for ${ip.version === 4 ? 'IPv4' : 'IPv6'} (0-${max})`);
  }
  return { ...ip, prefixlen: len, prefixGiven };
}

/**
 * Format 4 or 16 network-order bytes as glibc's `inet_ntop` does (what
 * `ip`, `ss` and `nft` print). Other lengths print as colon-separated hex
 * bytes (as `ip` prints a link-layer address).
 * @param b the address bytes
 */
export function formatIp(b: Uint8Array): string {
  if (b.length === 4) return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
  if (b.length !== 16) return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join(':');
  const w: number[] = [];
  for (let i = 0; i < 8; i++) w.push((b[2 * i] << 8) | b[2 * i + 1]);
  // the first longest run of two or more zero groups
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (w[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && w[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (bestLen < 2) best = -1;
  let s = '';
  for (let i = 0; i < 8; i++) {
    if (best >= 0 && i >= best && i < best + bestLen) {
      if (i === best) s += ':';
      continue;
    }
    if (i !== 0) s += ':';
    // an encapsulated IPv4 address, as glibc prints it: ::a.b.c.d (not ::1), ::ffff:a.b.c.d
    if (i === 6 && best === 0 && (bestLen === 6 || (bestLen === 7 && w[7] !== 0x0001) || (bestLen === 5 && w[5] === 0xffff))) {
      s += `${b[12]}.${b[13]}.${b[14]}.${b[15]}`;
      return s;
    }
    s += w[i].toString(16);
  }
  if (best >= 0 && best + bestLen === 8) s += ':';
  return s;
}

/**
 * An address and prefix length as `ip` prints a route or address: `10.0.0.0/24`.
 * @param b 4 or 16 bytes
 * @param prefixlen the prefix length
 */
export function formatIpPrefix(b: Uint8Array, prefixlen: number): string {
  return `${formatIp(b)}/${prefixlen}`;
}

/**
 * The canonical text of an address: what {@link formatIp} prints for what
 * {@link parseIp} reads (IPv6 lower-case and compressed, `::ffff:1.2.3.4`).
 * @throws {UsageError} not an IPv4 or IPv6 address
 */
export function canonicalIp(text: string): string {
  return formatIp(parseIp(text).bytes);
}

/** Whether 16 bytes are an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`). */
export function isIpv4Mapped(b: Uint8Array): boolean {
  if (b.length !== 16) return false;
  for (let i = 0; i < 12; i++) if (b[i] !== MAPPED_HEAD[i]) return false;
  return true;
}

/**
 * The IPv4-mapped IPv6 form of an IPv4 address (`1.2.3.4` -> `::ffff:1.2.3.4`).
 * @param v4 4 bytes
 * @returns 16 bytes
 * @throws {UsageError} not 4 bytes
 */
export function ipv4Mapped(v4: Uint8Array): Buffer {
  if (v4.length !== 4) throw new UsageError(`an IPv4 address has 4 bytes, not ${v4.length}`);
  return Buffer.concat([MAPPED_HEAD, v4]);
}

/**
 * The IPv4 address inside an IPv4-mapped IPv6 address, or undefined when `b` is not one.
 * @param b 16 bytes
 * @returns 4 bytes (a copy)
 */
export function unmapIpv4(b: Uint8Array): Buffer | undefined {
  return isIpv4Mapped(b) ? Buffer.from(b.subarray(12, 16)) : undefined;
}

/**
 * The network mask of a prefix length, in network order.
 * @param version 4 or 6
 * @param prefixlen 0..32 or 0..128
 * @returns 4 or 16 bytes
 * @throws {UsageError} a prefix length out of range
 */
export function prefixMask(version: 4 | 6, prefixlen: number): Buffer {
  const n = version === 4 ? 4 : 16;
  if (!Number.isInteger(prefixlen) || prefixlen < 0 || prefixlen > n * 8) {
    throw new UsageError(`prefix length ${prefixlen} is out of range for IPv${version} (0-${n * 8})`);
  }
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i++) {
    const bits = Math.min(8, Math.max(0, prefixlen - 8 * i));
    out[i] = bits === 0 ? 0 : (0xff << (8 - bits)) & 0xff;
  }
  return out;
}
