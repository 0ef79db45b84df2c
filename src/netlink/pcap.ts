/**
 * Reading netlink captures: `nlmon` pcap and pcapng files, the fixtures'
 * `capture.json`, and hex dumps (see hexdump.ts for the accepted text forms).
 * `synplug decode` feeds what {@link readCaptureFile} returns to the
 * message decoders.
 *
 * Two ways to read: the `parse*` / {@link readCaptureFile} functions return
 * every datagram or throw; the generators ({@link captureDatagrams},
 * {@link pcapDatagrams}, ...) yield each datagram as it is read and throw
 * only when they reach the bad bytes, so that what came before them is not
 * lost (`synplug decode` prints it, then reports the error).
 *
 * A pcap capture from an `nlmon` device has link type 253
 * (LINKTYPE_NETLINK). Each packet starts with a 16-byte pseudo header, the
 * Linux "cooked" header (`struct sll_header`, SLL v1):
 *
 * ```c
 * struct sll_header {
 *   __be16 sll_pkttype;   // PACKET_HOST 0 ... PACKET_OUTGOING 4
 *   __be16 sll_hatype;    // ARPHRD_NETLINK 824
 *   __be16 sll_halen;
 *   __u8   sll_addr[8];
 *   __be16 sll_protocol;  // the netlink protocol: 0 NETLINK_ROUTE, 4 NETLINK_SOCK_DIAG, 12 NETLINK_NETFILTER
 * };
 * ```
 *
 * followed by the netlink datagram as it crossed the socket. The direction
 * of a datagram is `to-kernel` when its first message has NLM_F_REQUEST
 * (nlmon marks both directions PACKET_OUTGOING, so the header cannot tell).
 *
 * @module
 */
import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { NetlinkDecodeError, UsageError } from './errors.js';
import { NLM_F_REQUEST } from './message.js';
import { type HexDumpChunks, hexDumpDatagrams } from './hexdump.js';

/** LINKTYPE_NETLINK, the pcap link type of `nlmon` captures. */
export const LINKTYPE_NETLINK = 253;
/** Size of the pseudo header (`struct sll_header`) before each captured datagram. */
export const NLMON_HEADER_LEN = 16;

/** Which way a datagram went. */
export type Direction = 'to-kernel' | 'from-kernel';

/** One captured netlink datagram. */
export interface CapturedDatagram {
  /** netlink protocol number (0 NETLINK_ROUTE, 4 NETLINK_SOCK_DIAG, 12 NETLINK_NETFILTER) */
  protocol: number;
  /** `to-kernel` when the first message has NLM_F_REQUEST, else `from-kernel` */
  direction: Direction;
  /** the datagram, from its first `struct nlmsghdr` on (the pseudo header removed) */
  bytes: Buffer;
  /** capture time, seconds since the Unix epoch (fractional; pcap and pcapng only) */
  timestamp?: number;
}

/** Options of {@link readCaptureFile} and {@link parseCapture}. */
export interface ReadCaptureOptions {
  /**
   * Netlink protocol to give datagrams of a hex dump, which does not say
   * (default 0, NETLINK_ROUTE). pcap, pcapng and JSON carry their own.
   */
  protocol?: number;
}

/**
 * The direction of a datagram, from its first message's flags.
 * @param bytes one datagram
 * @returns `to-kernel` if `nlmsg_flags` of the first header has NLM_F_REQUEST;
 *   `from-kernel` otherwise, including when the datagram is too short to tell
 */
export function datagramDirection(bytes: Buffer): Direction {
  if (bytes.length < 8) return 'from-kernel';
  return bytes.readUInt16LE(6) & NLM_F_REQUEST ? 'to-kernel' : 'from-kernel';
}

/**
 * Read a capture from a file or from bytes already in memory, recognising
 * its format: pcap (magic a1b2c3d4 or a1b23c4d, either byte order),
 * pcapng, a capture.json (`{ "datagrams": [{ "protocol", "direction"?, "hex" }] }`
 * or the bare array), or a hex dump (text; see hexdump.ts).
 * All or nothing: use {@link captureDatagrams} to keep the datagrams before a bad spot.
 * @param source a file path, or the file's bytes
 * @param options protocol to assume for hex dumps
 * @returns the datagrams in capture order
 * @throws {UsageError} the file cannot be read (missing, a directory, no permission)
 * @throws {NetlinkDecodeError} the bytes are truncated or not one of the formats,
 *   or a capture.json field is invalid; `offset` is a byte offset in the file
 *   (a character offset for text)
 */
export function readCaptureFile(source: string | Buffer, options: ReadCaptureOptions = {}): CapturedDatagram[] {
  return [...captureDatagrams(source, options)];
}

/**
 * {@link readCaptureFile} for bytes in memory.
 * @throws {NetlinkDecodeError} see {@link readCaptureFile}
 */
export function parseCapture(buf: Buffer, options: ReadCaptureOptions = {}): CapturedDatagram[] {
  return [...captureBytesDatagrams(buf, options)];
}

/**
 * The datagrams of a capture (formats as for {@link readCaptureFile}), one at
 * a time: each is yielded as soon as it is read, and the generator throws
 * when it reaches bytes that do not read, after yielding every datagram
 * before them. A file is read when this is called (so an unreadable file
 * throws here, before anything is yielded); the bytes are parsed as the
 * generator is iterated.
 * @param source a file path, or the file's bytes
 * @param options protocol to assume for hex dumps
 * @throws {UsageError} (when called) the file cannot be read
 * @throws {NetlinkDecodeError} (while iterating) as {@link readCaptureFile}, once the
 *   datagrams before the bad bytes have been yielded
 */
export function captureDatagrams(source: string | Buffer, options: ReadCaptureOptions = {}): Generator<CapturedDatagram, void, undefined> {
  if (typeof source !== 'string') return captureBytesDatagrams(source, options);
  const fail = (e: unknown): never => {
    throw new UsageError(`cannot read capture file '${source}': ${(e as { code?: string }).code ?? String(e)}`);
  };
  let head: Buffer;
  let size: number;
  try {
    const fd = openSync(source, 'r');
    try {
      size = fstatSync(fd).size;
      head = Buffer.alloc(Math.min(size, SNIFF_BYTES));
      head = head.subarray(0, readSync(fd, head, 0, head.length, 0));
    } finally {
      closeSync(fd);
    }
  } catch (e) {
    return fail(e);
  }
  // A hex dump is parsed from the file in pieces (it can be tens of megabytes, and its datagrams are read
  // into a buffer of their own); the binary formats and capture.json are read whole.
  if (size > head.length && captureFormat(head) === 'hex') {
    const chunks = function* (): Generator<Buffer, void, undefined> {
      let fd: number;
      try {
        fd = openSync(source, 'r');
      } catch (e) {
        return fail(e);
      }
      try {
        const buf = Buffer.allocUnsafe(CHUNK_BYTES);
        for (let n = readSync(fd, buf); n > 0; n = readSync(fd, buf)) yield buf.subarray(0, n);
      } finally {
        closeSync(fd);
      }
    };
    return hexCaptureDatagrams({ size, chunks }, options.protocol ?? 0);
  }
  let buf: Buffer;
  try {
    buf = readFileSync(source);
  } catch (e) {
    return fail(e);
  }
  return captureBytesDatagrams(buf, options);
}

/** How much of a capture file tells its format; a hex dump is read in pieces of CHUNK_BYTES. */
const SNIFF_BYTES = 64 * 1024;
const CHUNK_BYTES = 1024 * 1024;

/**
 * The format of a capture, from its first bytes (the whole capture, or
 * its first {@link SNIFF_BYTES}): `undefined` when those bytes decide
 * nothing (only whitespace so far).
 */
function captureFormat(buf: Buffer): 'pcap' | 'pcapng' | 'binary' | 'json' | 'hex' | undefined {
  if (buf.length >= 4) {
    const le = buf.readUInt32LE(0);
    const be = buf.readUInt32BE(0);
    if (le === PCAP_MAGIC_US || le === PCAP_MAGIC_NS || be === PCAP_MAGIC_US || be === PCAP_MAGIC_NS) return 'pcap';
    if (le === PCAPNG_SHB) return 'pcapng';
  }
  if (looksBinary(buf)) return 'binary';
  const first = buf.find((c) => c !== 0x20 && (c < 0x09 || c > 0x0d));
  if (first === undefined) return undefined;
  return first === 0x7b || first === 0x5b ? 'json' : 'hex'; // '{' or '['
}

/**
 * The generator for the capture's format. Not a generator itself, so the
 * format is chosen at once; a hex dump is parsed line by line from its
 * bytes (never held twice, as bytes and as a string). Bytes that are no
 * capture still throw only when iterated.
 */
function captureBytesDatagrams(buf: Buffer, options: ReadCaptureOptions): Generator<CapturedDatagram, void, undefined> {
  switch (captureFormat(buf)) {
    case 'pcap':
      return pcapDatagrams(buf);
    case 'pcapng':
      return pcapngDatagrams(buf);
    case 'binary':
      return notACapture();
    case 'json':
      return captureJsonDatagrams(buf.toString('utf8'));
    default:
      return hexCaptureDatagrams(buf, options.protocol ?? 0);
  }
}

// biome-ignore lint/correctness/useYield: throws when iterated, as the other formats' generators do at their bad bytes
function* notACapture(): Generator<CapturedDatagram, void, undefined> {
  throw new NetlinkDecodeError('not a capture: neither pcap, pcapng, capture.json nor a hex dump', 0);
}

/** A hex dump's datagrams, parsed from the bytes it was read as (a large dump is never also held as a string). */
function* hexCaptureDatagrams(dump: Buffer | HexDumpChunks, protocol: number): Generator<CapturedDatagram, void, undefined> {
  for (const bytes of hexDumpDatagrams(dump)) yield { protocol, direction: datagramDirection(bytes), bytes };
}

function looksBinary(buf: Buffer): boolean {
  const n = Math.min(buf.length, 4096);
  for (let i = 0; i < n; i++) {
    const c = buf[i];
    if (c === 0 || (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d)) return true;
  }
  return false;
}

const PCAP_MAGIC_US = 0xa1b2c3d4;
const PCAP_MAGIC_NS = 0xa1b23c4d;
const PCAPNG_SHB = 0x0a0d0d0a;
const PCAPNG_BOM = 0x1a2b3c4d;

/**
 * Little helper that reads u16/u32 in the file's byte order and turns every
 * out-of-range read into a NetlinkDecodeError at the right offset.
 */
class Reader {
  constructor(
    readonly buf: Buffer,
    public le: boolean,
  ) {}
  need(off: number, n: number, what: string): void {
    if (off < 0 || off + n > this.buf.length) {
      throw new NetlinkDecodeError(`truncated capture: ${what} needs ${n} bytes, ${Math.max(0, this.buf.length - off)} left`, off);
    }
  }
  u16(off: number, what: string): number {
    this.need(off, 2, what);
    return this.le ? this.buf.readUInt16LE(off) : this.buf.readUInt16BE(off);
  }
  u32(off: number, what: string): number {
    this.need(off, 4, what);
    return this.le ? this.buf.readUInt32LE(off) : this.buf.readUInt32BE(off);
  }
}

/** Split one captured packet (pseudo header + datagram) into a {@link CapturedDatagram}. */
function nlmonPacket(buf: Buffer, off: number, len: number, timestamp?: number): CapturedDatagram {
  if (len < NLMON_HEADER_LEN) {
    throw new NetlinkDecodeError(`captured packet of ${len} bytes is shorter than the ${NLMON_HEADER_LEN}-byte nlmon header`, off);
  }
  const protocol = buf.readUInt16BE(off + 14);
  const bytes = buf.subarray(off + NLMON_HEADER_LEN, off + len); // a view on the capture's bytes, not a copy: a 64 MB packet is held once
  const d: CapturedDatagram = { protocol, direction: datagramDirection(bytes), bytes };
  if (timestamp !== undefined) d.timestamp = timestamp;
  return d;
}

/**
 * Parse a classic pcap file (libpcap format, microsecond or nanosecond
 * timestamps, either byte order) of link type LINKTYPE_NETLINK.
 *
 * ```c
 * struct pcap_file_header { u32 magic; u16 version_major, version_minor; s32 thiszone; u32 sigfigs, snaplen, linktype; };
 * struct pcap_pkthdr      { u32 ts_sec, ts_usec_or_nsec, caplen, len; };
 * ```
 * A packet cut by the snapshot length (caplen < len) is returned as captured.
 * All or nothing; {@link pcapDatagrams} yields the packets before a bad spot.
 * @throws {NetlinkDecodeError} a bad magic, another link type, a truncated
 *   header or packet (offset in the file)
 */
export function parsePcap(buf: Buffer): CapturedDatagram[] {
  return [...pcapDatagrams(buf)];
}

/**
 * {@link parsePcap}, one packet at a time: yields each datagram as it is
 * read, and throws at the first bad header or packet, after yielding the
 * ones before it.
 * @throws {NetlinkDecodeError} as {@link parsePcap}
 */
export function* pcapDatagrams(buf: Buffer): Generator<CapturedDatagram, void, undefined> {
  if (buf.length < 4) throw new NetlinkDecodeError('truncated pcap: no magic number', 0);
  let le: boolean;
  let nanos: boolean;
  const m = buf.readUInt32LE(0);
  if (m === PCAP_MAGIC_US || m === PCAP_MAGIC_NS) {
    le = true;
    nanos = m === PCAP_MAGIC_NS;
  } else {
    const mb = buf.readUInt32BE(0);
    if (mb !== PCAP_MAGIC_US && mb !== PCAP_MAGIC_NS) throw new NetlinkDecodeError(`not a pcap file: magic 0x${mb.toString(16)}`, 0);
    le = false;
    nanos = mb === PCAP_MAGIC_NS;
  }
  const r = new Reader(buf, le);
  r.need(0, 24, 'pcap file header');
  const linktype = r.u32(20, 'link type') & 0xffff; // upper bits: FCS length
  if (linktype !== LINKTYPE_NETLINK) {
    throw new NetlinkDecodeError(`pcap link type ${linktype} is not LINKTYPE_NETLINK (${LINKTYPE_NETLINK}); capture on an nlmon device`, 20);
  }
  let off = 24;
  while (off < buf.length) {
    r.need(off, 16, 'pcap packet header');
    const sec = r.u32(off, 'ts_sec');
    const frac = r.u32(off + 4, 'ts_usec');
    const caplen = r.u32(off + 8, 'caplen');
    const dataAt = off + 16;
    if (caplen > buf.length - dataAt) {
      throw new NetlinkDecodeError(`truncated pcap: packet of ${caplen} bytes, ${buf.length - dataAt} left`, off + 8);
    }
    const d = nlmonPacket(buf, dataAt, caplen, sec + frac / (nanos ? 1e9 : 1e6));
    off = dataAt + caplen;
    yield d;
  }
}

/**
 * Parse a pcapng file whose interfaces are nlmon devices (LINKTYPE_NETLINK).
 * Reads Section Header, Interface Description (with `if_tsresol`),
 * Enhanced Packet, Simple Packet and obsolete Packet blocks; skips the others.
 * All or nothing; {@link pcapngDatagrams} yields the packets before a bad spot.
 * @throws {NetlinkDecodeError} a truncated block, an unknown interface,
 *   an interface of another link type
 */
export function parsePcapng(buf: Buffer): CapturedDatagram[] {
  return [...pcapngDatagrams(buf)];
}

/**
 * {@link parsePcapng}, one packet at a time: yields each datagram as its
 * block is read, and throws at the first bad block, after yielding the
 * packets before it.
 * @throws {NetlinkDecodeError} as {@link parsePcapng}
 */
export function* pcapngDatagrams(buf: Buffer): Generator<CapturedDatagram, void, undefined> {
  const r = new Reader(buf, true);
  let ifaces: Array<{ linktype: number; snaplen: number; tsDiv: number }> = [];
  let off = 0;
  while (off < buf.length) {
    r.need(off, 12, 'pcapng block header');
    const typeLE = buf.readUInt32LE(off);
    if (typeLE === PCAPNG_SHB) {
      r.need(off, 12, 'section header block');
      const bom = buf.readUInt32LE(off + 8);
      if (bom === PCAPNG_BOM) r.le = true;
      else if (buf.readUInt32BE(off + 8) === PCAPNG_BOM) r.le = false;
      else throw new NetlinkDecodeError(`pcapng section header has a bad byte-order magic 0x${bom.toString(16)}`, off + 8);
      ifaces = [];
    } else if (off === 0) {
      throw new NetlinkDecodeError('not a pcapng file: no section header block', 0);
    }
    const type = r.u32(off, 'block type');
    const total = r.u32(off + 4, 'block length');
    if (total < 12 || total % 4 !== 0) throw new NetlinkDecodeError(`pcapng block length ${total} is invalid`, off + 4);
    r.need(off, total, `pcapng block of type ${type}`);
    const body = off + 8;
    const bodyEnd = off + total - 4;
    if (type === 1) {
      // Interface Description Block: u16 linktype, u16 reserved, u32 snaplen, options
      const linktype = r.u16(body, 'linktype');
      const snaplen = r.u32(body + 4, 'snaplen');
      let tsDiv = 1e6;
      for (let o = body + 8; o + 4 <= bodyEnd; ) {
        const code = r.u16(o, 'option code');
        const len = r.u16(o + 2, 'option length');
        if (code === 0) break;
        if (o + 4 + len > bodyEnd) throw new NetlinkDecodeError(`pcapng option ${code} of ${len} bytes runs past its block`, o);
        if (code === 9 && len >= 1) {
          // if_tsresol: MSB clear = 10^-v, set = 2^-v
          const v = buf[o + 4];
          tsDiv = v & 0x80 ? 2 ** (v & 0x7f) : 10 ** v;
        }
        o += 4 + ((len + 3) & ~3);
      }
      ifaces.push({ linktype, snaplen, tsDiv });
    } else if (type === 6 || type === 2) {
      // Enhanced Packet Block: u32 if, u32 ts_hi, u32 ts_lo, u32 caplen, u32 len, data
      // (obsolete) Packet Block: u16 if, u16 drops, then the same
      const ifId = type === 6 ? r.u32(body, 'interface id') : r.u16(body, 'interface id');
      const iface = ifaces[ifId];
      if (!iface) throw new NetlinkDecodeError(`pcapng packet names interface ${ifId}, which has no description block`, body);
      if (iface.linktype !== LINKTYPE_NETLINK) {
        throw new NetlinkDecodeError(`pcapng interface ${ifId} has link type ${iface.linktype}, not LINKTYPE_NETLINK (${LINKTYPE_NETLINK})`, body);
      }
      const ts = r.u32(body + 4, 'ts_high') * 2 ** 32 + r.u32(body + 8, 'ts_low');
      const caplen = r.u32(body + 12, 'caplen');
      const dataAt = body + 20;
      if (caplen > bodyEnd - dataAt) throw new NetlinkDecodeError(`pcapng packet of ${caplen} bytes runs past its block`, body + 12);
      yield nlmonPacket(buf, dataAt, caplen, ts / iface.tsDiv);
    } else if (type === 3) {
      // Simple Packet Block: u32 len, data (caplen = min(len, snaplen)), interface 0
      const iface = ifaces[0];
      if (!iface) throw new NetlinkDecodeError('pcapng simple packet before any interface description', body);
      if (iface.linktype !== LINKTYPE_NETLINK) {
        throw new NetlinkDecodeError(`pcapng interface 0 has link type ${iface.linktype}, not LINKTYPE_NETLINK (${LINKTYPE_NETLINK})`, body);
      }
      const len = r.u32(body, 'packet length');
      const caplen = Math.min(len, iface.snaplen || len, bodyEnd - body - 4);
      yield nlmonPacket(buf, body + 4, caplen);
    }
    off += total;
  }
}

/** Netlink protocol numbers are 0-31 (MAX_LINKS, linux/netlink.h). */
const MAX_NETLINK_PROTOCOL = 31;

/**
 * Parse the fixtures' capture.json: `{ "datagrams": [{ "protocol": 0,
 * "direction": "to-kernel", "hex": "..." }] }`, or the bare array.
 * `direction` is computed from the bytes when absent; `protocol` defaults to 0.
 * All or nothing; {@link captureJsonDatagrams} yields the datagrams before a bad one.
 * @throws {NetlinkDecodeError} invalid JSON (offset = the parser's position when known);
 *   no datagram array; a datagram without a valid `hex` string, with a `protocol` that
 *   is not an integer 0-31, or a `direction` other than "to-kernel" / "from-kernel"
 *   (offset = the character offset of that datagram in the text)
 */
export function parseCaptureJson(text: string): CapturedDatagram[] {
  return [...captureJsonDatagrams(text)];
}

/**
 * {@link parseCaptureJson}, one datagram at a time: the JSON is parsed whole
 * first (a syntax error throws before anything is yielded), then each entry
 * is checked and yielded in order; an invalid entry throws after the ones
 * before it were yielded.
 * @throws {NetlinkDecodeError} as {@link parseCaptureJson}
 */
export function* captureJsonDatagrams(text: string): Generator<CapturedDatagram, void, undefined> {
  let j: unknown;
  try {
    j = JSON.parse(text);
  } catch (e) {
    const pos = /position (\d+)/.exec(String((e as Error).message));
    throw new NetlinkDecodeError(`capture JSON does not parse: ${(e as Error).message}`, pos ? Number(pos[1]) : 0);
  }
  const list = Array.isArray(j) ? j : (j as { datagrams?: unknown } | null)?.datagrams;
  if (!Array.isArray(list)) throw new NetlinkDecodeError('capture JSON has no "datagrams" array', 0);
  let offsets: number[] | undefined;
  const bad = (i: number, what: string): NetlinkDecodeError => {
    offsets ??= jsonDatagramOffsets(text);
    return new NetlinkDecodeError(`capture JSON datagram ${i} ${what}`, offsets[i] ?? 0);
  };
  for (let i = 0; i < list.length; i++) {
    const o = list[i] as { protocol?: unknown; direction?: unknown; hex?: unknown } | null;
    if (!o || typeof o !== 'object' || typeof o.hex !== 'string' || !/^(?:[0-9a-fA-F]{2})*$/.test(o.hex.replace(/\s+/g, ''))) {
      throw bad(i, 'has no valid "hex" string');
    }
    let protocol = 0;
    if (o.protocol !== undefined) {
      if (typeof o.protocol !== 'number' || !Number.isInteger(o.protocol) || o.protocol < 0 || o.protocol > MAX_NETLINK_PROTOCOL) {
        throw bad(i, `has "protocol": ${JSON.stringify(o.protocol)}, not a netlink protocol number (an integer 0-${MAX_NETLINK_PROTOCOL})`);
      }
      protocol = o.protocol;
    }
    const bytes = Buffer.from(o.hex.replace(/\s+/g, ''), 'hex');
    let direction: Direction;
    if (o.direction === undefined) direction = datagramDirection(bytes);
    else if (o.direction === 'to-kernel' || o.direction === 'from-kernel') direction = o.direction;
    else throw bad(i, `has "direction": ${JSON.stringify(o.direction)}, neither "to-kernel" nor "from-kernel"`);
    yield { protocol, direction, bytes };
  }
}

/**
 * Character offsets of the datagram entries in a capture JSON text that
 * JSON.parse accepted: the elements of the top-level array, or of the last
 * top-level "datagrams" member (the one JSON.parse keeps). Iterative, so
 * deep nesting cannot overflow the stack.
 */
function jsonDatagramOffsets(text: string): number[] {
  let i = 0;
  const n = text.length;
  const ws = (): void => {
    while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const skipString = (): void => {
    i++;
    while (i < n && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
  };
  const skipValue = (): void => {
    ws();
    if (text[i] === '"') {
      skipString();
      return;
    }
    if (text[i] === '[' || text[i] === '{') {
      let depth = 0;
      do {
        const c = text[i];
        if (c === '"') {
          skipString();
          continue;
        }
        if (c === '[' || c === '{') depth++;
        else if (c === ']' || c === '}') depth--;
        i++;
      } while (depth > 0 && i < n);
      return;
    }
    while (i < n && !' \t\n\r,]}'.includes(text[i])) i++; // number, true, false, null
  };
  /** At '[': the offsets of its elements; leaves i after the ']'. */
  const elements = (): number[] => {
    const out: number[] = [];
    i++;
    ws();
    while (i < n && text[i] !== ']') {
      out.push(i);
      skipValue();
      ws();
      if (text[i] === ',') {
        i++;
        ws();
      }
    }
    i++;
    return out;
  };
  ws();
  if (text[i] === '[') return elements();
  let found: number[] = [];
  i++; // '{'
  ws();
  while (i < n && text[i] === '"') {
    const keyAt = i;
    skipString();
    const key = JSON.parse(text.slice(keyAt, i)) as string;
    ws();
    i++; // ':'
    ws();
    if (key === 'datagrams' && text[i] === '[') found = elements();
    else skipValue();
    ws();
    if (text[i] === ',') {
      i++;
      ws();
    }
  }
  return found;
}

/** Options of {@link encodePcap}. */
export interface EncodePcapOptions {
  /** write the file big-endian (default little-endian) */
  bigEndian?: boolean;
  /** nanosecond timestamps (magic a1b23c4d) instead of microseconds */
  nanoseconds?: boolean;
}

/**
 * Write datagrams as a pcap file of link type LINKTYPE_NETLINK, each behind
 * an nlmon pseudo header (the inverse of {@link parsePcap}).
 * @param datagrams protocol, bytes and optional timestamp (seconds; default 0)
 * @returns the file's bytes
 */
export function encodePcap(datagrams: ReadonlyArray<Pick<CapturedDatagram, 'protocol' | 'bytes' | 'timestamp'>>, options: EncodePcapOptions = {}): Buffer {
  const le = !options.bigEndian;
  const w32 = (b: Buffer, v: number, o: number): void => {
    if (le) b.writeUInt32LE(v >>> 0, o);
    else b.writeUInt32BE(v >>> 0, o);
  };
  const w16 = (b: Buffer, v: number, o: number): void => {
    if (le) b.writeUInt16LE(v, o);
    else b.writeUInt16BE(v, o);
  };
  const head = Buffer.alloc(24);
  w32(head, options.nanoseconds ? PCAP_MAGIC_NS : PCAP_MAGIC_US, 0);
  w16(head, 2, 4);
  w16(head, 4, 6);
  w32(head, 0x40000, 16);
  w32(head, LINKTYPE_NETLINK, 20);
  const parts: Buffer[] = [head];
  const scale = options.nanoseconds ? 1e9 : 1e6;
  for (const d of datagrams) {
    const rec = Buffer.alloc(16 + NLMON_HEADER_LEN);
    const t = d.timestamp ?? 0;
    const sec = Math.floor(t);
    const frac = Math.min(scale - 1, Math.round((t - sec) * scale));
    w32(rec, sec, 0);
    w32(rec, frac, 4);
    w32(rec, d.bytes.length + NLMON_HEADER_LEN, 8);
    w32(rec, d.bytes.length + NLMON_HEADER_LEN, 12);
    rec.writeUInt16BE(4, 16); // PACKET_OUTGOING, as nlmon writes
    rec.writeUInt16BE(824, 18); // ARPHRD_NETLINK
    rec.writeUInt16BE(d.protocol, 16 + 14);
    parts.push(rec, d.bytes);
  }
  return Buffer.concat(parts);
}
