/**
 * Input checks shared by the nf_tables encoders: everything a user gives is
 * checked before a byte is sent, and refused with a {@link UsageError}.
 *
 * @module
 */
import { UsageError } from '../netlink/errors.js';
import { formatIp, tryParseIp } from '../netlink/ipaddr.js';
import { NFT_NAME_MAXLEN } from './constants.js';

/**
 * Check a table, chain or set name: 1 to NFT_NAME_MAXLEN - 1 (255) bytes of
 * UTF-8 (NFT_NAME_MAXLEN = 256 in nf_tables.h counts the terminating NUL),
 * no NUL inside.
 * @param kind `table`, `chain` or `set`, for the message
 * @returns the name
 * @throws {UsageError} empty, too long, or with a NUL
 */
export function checkName(name: string, kind: string): string {
  if (typeof name !== 'string' || name.length === 0) throw new UsageError(`bad ${kind} name: it must not be empty`);
  if (name.includes('\0')) throw new UsageError(`bad ${kind} name '${name.replace(/\0/g, '\\0')}': it must not contain a NUL byte`);
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes > NFT_NAME_MAXLEN - 1) {
    throw new UsageError(
      `bad ${kind} name '${name.slice(0, 20)}...': ${bytes} bytes, at most ${NFT_NAME_MAXLEN - 1} (NFT_NAME_MAXLEN is ${NFT_NAME_MAXLEN} with the NUL)`,
    );
  }
  return name;
}

/** An IP address checked and in wire form. */
export interface ParsedAddress {
  /** 4 or 6 */
  version: 4 | 6;
  /** the address as given, canonical for IPv4 */
  text: string;
  /** 4 or 16 bytes, network order */
  bytes: Buffer;
}

/**
 * Parse one IPv4 or IPv6 address (no prefix length, no zone), with
 * src/netlink/ipaddr.ts.
 * @returns version, the text as given, and the network-order bytes
 * @throws {UsageError} anything else
 */
export function parseAddress(address: string): ParsedAddress {
  const ip = tryParseIp(address);
  if (!ip) throw new UsageError(`bad address '${String(address)}': give one IPv4 or IPv6 address, without a prefix length or zone`);
  return { version: ip.version, text: address, bytes: ip.bytes };
}

/**
 * Text of 4 (IPv4) or 16 (IPv6) address bytes as nft prints them (glibc's
 * inet_ntop, through {@link formatIp}: RFC 5952, IPv4-mapped as
 * `::ffff:1.2.3.4`); other lengths as `0x` hex.
 */
export function addressText(b: Buffer): string {
  if (b.length !== 4 && b.length !== 16) return `0x${b.toString('hex')}`;
  return formatIp(b);
}

/**
 * Check a firewall mark: a u32, not 0 (0 is "no mark": marking with it would mark nothing).
 * @throws {UsageError}
 */
export function checkMark(mark: number): number {
  if (typeof mark !== 'number' || !Number.isInteger(mark) || mark < 1 || mark > 0xffffffff) {
    throw new UsageError(`bad mark '${String(mark)}': a whole number from 1 to 4294967295 (0 would mark nothing)`);
  }
  return mark;
}

/**
 * Check a TCP port: 1 to 65535.
 * @throws {UsageError}
 */
export function checkPort(port: number): number {
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new UsageError(`bad port '${String(port)}': a whole number from 1 to 65535`);
  }
  return port;
}

/**
 * The kernel's largest element timeout: `nf_msecs_to_jiffies64()` refuses
 * (ERANGE) ms >= U64_MAX / NSEC_PER_MSEC.
 */
export const MAX_TIMEOUT_MS = 18446744073709;
/**
 * The smallest element timeout we accept: the kernel rounds ms down to
 * jiffies, and 0 jiffies means "no timeout" (the element would never
 * expire). 10 ms is one jiffy at HZ=100, the lowest HZ.
 */
export const MIN_TIMEOUT_MS = 10;

/**
 * Check an element timeout in milliseconds.
 * @throws {UsageError} not an integer from MIN_TIMEOUT_MS (10) to MAX_TIMEOUT_MS
 */
export function checkTimeoutMs(ms: number): number {
  if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < MIN_TIMEOUT_MS || ms > MAX_TIMEOUT_MS) {
    throw new UsageError(
      `bad timeout '${String(ms)}' ms: a whole number of milliseconds from ${MIN_TIMEOUT_MS} (shorter rounds to 0 jiffies, which the kernel reads as "never expires") to ${MAX_TIMEOUT_MS}`,
    );
  }
  return ms;
}
