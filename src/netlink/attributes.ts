/**
 * Netlink attributes (TLVs): `struct nlattr { __u16 nla_len; __u16 nla_type; }`
 * from linux/netlink.h, each padded to 4 bytes (NLA_ALIGNTO); `nla_len`
 * counts the 4-byte header and the payload but not the padding.
 *
 * Encoding: every builder returns the complete attribute (header, payload,
 * padding) as a Buffer; `nested()` concatenates children.
 * Decoding: {@link AttributeView} (or {@link parseAttributes} for a whole
 * buffer), whose typed getters throw {@link NetlinkDecodeError} with
 * absolute byte offsets.
 *
 * Host byte order is little-endian (x86, arm64); big-endian ("be") variants
 * exist for nfnetlink, whose attributes are in network byte order.
 *
 * @module
 */
import { NetlinkDecodeError, SynplugError } from './errors.js';

/** NLA_F_NESTED: the payload is itself a list of attributes. */
export const NLA_F_NESTED = 1 << 15;
/** NLA_F_NET_BYTEORDER: the payload is big-endian. */
export const NLA_F_NET_BYTEORDER = 1 << 14;
/** NLA_TYPE_MASK: the type bits with both flags masked off. */
export const NLA_TYPE_MASK = ~(NLA_F_NESTED | NLA_F_NET_BYTEORDER) & 0xffff;
/** NLA_HDRLEN: size of `struct nlattr`. */
export const NLA_HDRLEN = 4;

/** Round a length up to the 4-byte netlink alignment (NLA_ALIGN / NLMSG_ALIGN). */
export function align4(n: number): number {
  // arithmetic, not `(n + 3) & ~3`: a u32 length from the wire (>= 2^31) must not turn negative
  return n + ((4 - (n % 4)) % 4);
}

const PAD = Buffer.alloc(4);

/*
 * The builders allocate with Buffer.allocUnsafe, which slices small buffers
 * out of Node's shared pool instead of creating (and later freeing) a backing
 * store per attribute, and write every byte themselves: header, payload and
 * zeroed padding. The bytes are the same as from Buffer.alloc.
 */

/** A header for an attribute of `len` bytes (nla_len) in a fresh padded buffer; the payload is left to the caller. */
function header(type: number, len: number): Buffer {
  if (len > 0xffff) throw new AttributeTooLargeError(type, len);
  const size = align4(len);
  const out = Buffer.allocUnsafe(size);
  out[0] = len & 0xff;
  out[1] = len >>> 8;
  out[2] = type & 0xff;
  out[3] = (type >>> 8) & 0xff;
  for (let i = len; i < size; i++) out[i] = 0;
  return out;
}

/**
 * One attribute from its type and raw payload.
 * @param type nla_type, may include NLA_F_NESTED / NLA_F_NET_BYTEORDER
 * @param payload bytes after the header
 * @returns header + payload + padding to 4 bytes
 * @throws {AttributeTooLargeError} the payload is over 65531 bytes (nla_len is a u16)
 */
export function attr(type: number, payload: Uint8Array): Buffer {
  const out = header(type, NLA_HDRLEN + payload.length);
  out.set(payload, NLA_HDRLEN);
  return out;
}

/** An attribute payload longer than nla_len (u16) can express. */
export class AttributeTooLargeError extends SynplugError {
  constructor(type: number, len: number) {
    super(`netlink attribute type ${type} would be ${len} bytes; nla_len is a u16`, 'usage');
    this.name = 'AttributeTooLargeError';
  }
}

/** NLA_FLAG: an attribute with no payload. */
export const flag = (type: number): Buffer => attr(type, PAD.subarray(0, 0));
/** NLA_U8 */
export const u8 = (type: number, v: number): Buffer => {
  const b = header(type, 5);
  b[4] = v & 0xff;
  return b;
};
/** NLA_U16, host order (little-endian) */
export const u16 = (type: number, v: number): Buffer => {
  const b = header(type, 6);
  b.writeUInt16LE(v & 0xffff, 4);
  return b;
};
/** NLA_U16 in network byte order (nfnetlink, NLA_F_NET_BYTEORDER) */
export const u16be = (type: number, v: number): Buffer => {
  const b = header(type, 6);
  b.writeUInt16BE(v & 0xffff, 4);
  return b;
};
/** NLA_U32, host order (little-endian) */
export const u32 = (type: number, v: number): Buffer => {
  const b = header(type, 8);
  b.writeUInt32LE(v >>> 0, 4);
  return b;
};
/** NLA_U32 in network byte order */
export const u32be = (type: number, v: number): Buffer => {
  const b = header(type, 8);
  b.writeUInt32BE(v >>> 0, 4);
  return b;
};
/** NLA_S32, host order */
export const s32 = (type: number, v: number): Buffer => {
  const b = header(type, 8);
  b.writeInt32LE(v | 0, 4);
  return b;
};
/** Wrap to 64 bits, as u8/u32 wrap (no RangeError from Buffer for a negative or huge value). */
function toU64(v: bigint | number): bigint {
  return BigInt.asUintN(64, typeof v === 'bigint' ? v : BigInt(Number.isFinite(v) ? Math.trunc(v) : 0));
}
/** NLA_U64, host order; `v` a bigint (or a safe integer number) */
export const u64 = (type: number, v: bigint | number): Buffer => {
  const b = header(type, 12);
  b.writeBigUInt64LE(toU64(v), 4);
  return b;
};
/** NLA_U64 in network byte order */
export const u64be = (type: number, v: bigint | number): Buffer => {
  const b = header(type, 12);
  b.writeBigUInt64BE(toU64(v), 4);
  return b;
};
/** NLA_NUL_STRING: UTF-8 text plus a terminating NUL */
export const str = (type: number, s: string): Buffer => {
  // Short ASCII text (kind names, device names) is copied by hand: cheaper than
  // the UTF-8 encoder's binding call, and the same bytes.
  const len = s.length;
  if (len <= 64) {
    let ascii = true;
    for (let i = 0; i < len; i++)
      if (s.charCodeAt(i) > 0x7f) {
        ascii = false;
        break;
      }
    if (ascii) {
      const b = header(type, NLA_HDRLEN + len + 1);
      for (let i = 0; i < len; i++) b[NLA_HDRLEN + i] = s.charCodeAt(i);
      b[NLA_HDRLEN + len] = 0;
      return b;
    }
  }
  const n = Buffer.byteLength(s, 'utf8');
  const b = header(type, NLA_HDRLEN + n + 1);
  b.write(s, NLA_HDRLEN, 'utf8');
  b[NLA_HDRLEN + n] = 0;
  return b;
};
/** NLA_BINARY: raw bytes */
export const bin = (type: number, b: Uint8Array): Buffer => attr(type, b);
/**
 * NLA_NESTED: children concatenated.
 * @param type nla_type; pass `type | NLA_F_NESTED` where the peer expects the flag (nftables does)
 */
export const nested = (type: number, children: readonly Buffer[]): Buffer => {
  let n = 0;
  for (const c of children) n += c.length;
  const out = header(type, NLA_HDRLEN + n);
  let off = NLA_HDRLEN;
  for (const c of children) {
    out.set(c, off);
    off += c.length;
  }
  return out;
};

/** One decoded attribute, made on demand by {@link AttributeView.get}, `all` and iteration. */
export interface Attribute {
  /** nla_type with NLA_F_NESTED and NLA_F_NET_BYTEORDER masked off */
  type: number;
  /** NLA_F_NESTED was set */
  isNested: boolean;
  /** NLA_F_NET_BYTEORDER was set */
  netByteOrder: boolean;
  /** payload (a view, not a copy), nla_len - 4 bytes */
  data: Buffer;
  /** absolute offset of the attribute header, for error messages */
  offset: number;
}

/**
 * A view of a whole buffer of attributes.
 * @param buf the bytes holding the attributes (all of them, padding included)
 * @param base absolute offset of `buf[0]` in the enclosing datagram, used in errors
 * @throws {NetlinkDecodeError} a header that does not fit, nla_len < 4, or nla_len past the end
 */
export function parseAttributes(buf: Buffer, base = 0): AttributeView {
  return new AttributeView(buf, 0, buf.length, base);
}

/** A view of one attribute's payload as nested attributes. @throws {NetlinkDecodeError} */
export function parseNested(a: Attribute): AttributeView {
  return new AttributeView(a.data, 0, a.data.length, a.offset + NLA_HDRLEN);
}

/**
 * The length (nla_len) of the attribute at `buf[off]` in the run that ends
 * at `to`, checked as the kernel's nla_ok does: the one check of
 * {@link AttributeView}.
 * @returns nla_len, or -1 for trailing zero bytes shorter than a header (tolerated)
 * @throws {NetlinkDecodeError} a short non-zero tail, nla_len < 4, or nla_len past `to`
 */
function checkedLength(buf: Buffer, off: number, to: number, base: number): number {
  if (to - off < NLA_HDRLEN) {
    // Trailing bytes shorter than a header: the kernel tolerates them (nla_ok fails), so do we
    // only when they are zero padding.
    for (let i = off; i < to; i++) if (buf[i] !== 0) throw new NetlinkDecodeError(`truncated attribute header: ${to - off} bytes left`, base + off);
    return -1;
  }
  const len = buf[off] | (buf[off + 1] << 8);
  if (len < NLA_HDRLEN) throw new NetlinkDecodeError(`attribute length ${len} is shorter than its header`, base + off);
  if (len > to - off) {
    const type = (buf[off + 2] | (buf[off + 3] << 8)) & NLA_TYPE_MASK;
    throw new NetlinkDecodeError(`attribute type ${type} length ${len} runs past the end (${to - off} bytes left)`, base + off);
  }
  return len;
}

/**
 * The one attribute decoder: a lazy view of one run of attributes,
 * `buf[start, end)`. The constructor checks the run once, as the kernel's
 * nla_ok does, and keeps nothing but the bounds; each getter finds the last
 * attribute of its type (the kernel's nla_parse keeps the last) by walking
 * the run again. Nothing is allocated per attribute unless asked for
 * ({@link get}, {@link all}, {@link items}, iteration), and nothing is
 * shared between views, so a listing of thousands of messages reads a few
 * attributes of each cheaply.
 *
 * Types are compared with NLA_F_NESTED and NLA_F_NET_BYTEORDER masked off.
 * Getters return `undefined` (or -1 for positions) when the attribute is
 * absent and throw {@link NetlinkDecodeError} (with the absolute offset of
 * the attribute's header) when it is present but too short for the asked
 * type. Numbers are in host order (little-endian) unless named `be`.
 */
export class AttributeView implements Iterable<Attribute> {
  /** the enclosing buffer (a datagram, or a message payload) */
  readonly buf: Buffer;
  /** offset of the first attribute in `buf` */
  readonly start: number;
  /** end of the run in `buf` */
  readonly end: number;
  /** absolute offset of `buf[0]` in the datagram, for error offsets */
  readonly base: number;
  /* the last lookup: type, payload start (-1: absent), payload length */
  private lastType = -1;
  private lastAt = -1;
  private lastLen = 0;
  /** bit t set: a type t < 32 is present (absent types are answered without a walk) */
  private readonly present: number = 0;

  /**
   * @param buf the bytes holding the run
   * @param start offset of its first attribute in `buf` (default 0)
   * @param end its end in `buf` (default `buf.length`)
   * @param base absolute offset of `buf[0]`, for error offsets
   * @throws {NetlinkDecodeError} a header that does not fit, nla_len < 4, or nla_len past `end`
   */
  constructor(buf: Buffer, start = 0, end = buf.length, base = 0) {
    this.buf = buf;
    this.start = start;
    this.end = end;
    this.base = base;
    let present = 0;
    for (let off = start; off < end; ) {
      let len = end - off >= NLA_HDRLEN ? buf[off] | (buf[off + 1] << 8) : 0;
      // the checks and their errors are checkedLength's; it is called only when one fails
      if (len < NLA_HDRLEN || len > end - off) len = checkedLength(buf, off, end, base);
      if (len < 0) break;
      const t = (buf[off + 2] | (buf[off + 3] << 8)) & NLA_TYPE_MASK;
      if (t < 32) present |= 1 << t;
      off += (len + 3) & ~3;
    }
    this.present = present;
  }

  /** Find the last attribute of type `t` (memoized for the next getter). */
  private find(t: number): number {
    if (t === this.lastType) return this.lastAt;
    if (t < 32 && (this.present & (1 << t)) === 0) return -1;
    const b = this.buf;
    const end = this.end;
    let at = -1;
    let len = 0;
    for (let off = this.start; end - off >= NLA_HDRLEN; ) {
      const l = b[off] | (b[off + 1] << 8);
      if (((b[off + 2] | (b[off + 3] << 8)) & NLA_TYPE_MASK) === t) {
        at = off + NLA_HDRLEN;
        len = l - NLA_HDRLEN;
      }
      off += (l + 3) & ~3;
    }
    this.lastType = t;
    this.lastAt = at;
    this.lastLen = len;
    return at;
  }

  /** The attribute whose header is at `buf[off]` (checked by the constructor). */
  private attributeAt(off: number): Attribute {
    const b = this.buf;
    const raw = b[off + 2] | (b[off + 3] << 8);
    return {
      type: raw & NLA_TYPE_MASK,
      isNested: (raw & NLA_F_NESTED) !== 0,
      netByteOrder: (raw & NLA_F_NET_BYTEORDER) !== 0,
      data: b.subarray(off + NLA_HDRLEN, off + (b[off] | (b[off + 1] << 8))),
      offset: this.base + off,
    };
  }

  /** Absolute offset of the run's first byte, for error messages. */
  get offset(): number {
    return this.base + this.start;
  }
  /** Every attribute in wire order, made on each call. */
  get items(): Attribute[] {
    const out: Attribute[] = [];
    for (let off = this.start; this.end - off >= NLA_HDRLEN; off += align4(this.buf[off] | (this.buf[off + 1] << 8))) out.push(this.attributeAt(off));
    return out;
  }
  [Symbol.iterator](): Iterator<Attribute> {
    return this.items[Symbol.iterator]();
  }
  /** Every attribute of type `t`, in wire order. */
  all(t: number): Attribute[] {
    return this.items.filter((a) => a.type === t);
  }
  /** The last attribute of type `t`, or undefined. */
  get(t: number): Attribute | undefined {
    const s = this.find(t);
    return s < 0 ? undefined : this.attributeAt(s - NLA_HDRLEN);
  }
  /** Whether an attribute of type `t` is present. */
  has(t: number): boolean {
    return this.find(t) >= 0;
  }
  /** Payload start of type `t` in `buf`, or -1 when absent. */
  at(t: number): number {
    return this.find(t);
  }
  /** Payload length of type `t` (nla_len - 4), 0 when absent. */
  size(t: number): number {
    return this.find(t) >= 0 ? this.lastLen : 0;
  }
  /** Absolute offset of the header of type `t` (present), for error messages. */
  headerOffset(t: number): number {
    return this.base + this.find(t) - NLA_HDRLEN;
  }
  /**
   * Payload start of type `t`, checked to hold at least `n` bytes (a struct).
   * @returns -1 when absent
   * @throws {NetlinkDecodeError} shorter than `n`
   */
  struct(t: number, n: number): number {
    const s = this.find(t);
    if (s >= 0 && this.lastLen < n) throw new NetlinkDecodeError(`attribute type ${t} has ${this.lastLen} bytes, needs ${n}`, this.base + s - NLA_HDRLEN);
    return s;
  }
  /** NLA_U8, or undefined. @throws {NetlinkDecodeError} too short */
  u8(t: number): number | undefined {
    const s = this.struct(t, 1);
    return s < 0 ? undefined : this.buf[s];
  }
  /** NLA_U16, or undefined. @throws {NetlinkDecodeError} too short */
  u16(t: number): number | undefined {
    const s = this.struct(t, 2);
    return s < 0 ? undefined : le16(this.buf, s);
  }
  /** u16 in network byte order, or undefined. @throws {NetlinkDecodeError} too short */
  u16be(t: number): number | undefined {
    const s = this.struct(t, 2);
    return s < 0 ? undefined : this.buf.readUInt16BE(s);
  }
  /** NLA_U32, or undefined. @throws {NetlinkDecodeError} too short */
  u32(t: number): number | undefined {
    const s = this.struct(t, 4);
    return s < 0 ? undefined : le32(this.buf, s);
  }
  /** u32 in network byte order, or undefined. @throws {NetlinkDecodeError} too short */
  u32be(t: number): number | undefined {
    const s = this.struct(t, 4);
    return s < 0 ? undefined : this.buf.readUInt32BE(s);
  }
  /** NLA_S32, or undefined. @throws {NetlinkDecodeError} too short */
  s32(t: number): number | undefined {
    const s = this.struct(t, 4);
    return s < 0 ? undefined : les32(this.buf, s);
  }
  /** s32 in network byte order, or undefined. @throws {NetlinkDecodeError} too short */
  s32be(t: number): number | undefined {
    const s = this.struct(t, 4);
    return s < 0 ? undefined : this.buf.readInt32BE(s);
  }
  /** NLA_U64 as a bigint, or undefined (hot decoders read `le64(buf, at(t))`). @throws {NetlinkDecodeError} too short */
  u64(t: number): bigint | undefined {
    const s = this.struct(t, 8);
    return s < 0 ? undefined : this.buf.readBigUInt64LE(s);
  }
  /** u64 in network byte order as a bigint, or undefined. @throws {NetlinkDecodeError} too short */
  u64be(t: number): bigint | undefined {
    const s = this.struct(t, 8);
    return s < 0 ? undefined : this.buf.readBigUInt64BE(s);
  }
  /** NLA_STRING / NLA_NUL_STRING: UTF-8 up to the first NUL, or undefined. */
  str(t: number): string | undefined {
    const s = this.find(t);
    return s < 0 ? undefined : cString(this.buf, s, s + this.lastLen);
  }
  /** The payload of type `t` as a view (no copy), or undefined. */
  bin(t: number): Buffer | undefined {
    const s = this.find(t);
    return s < 0 ? undefined : this.buf.subarray(s, s + this.lastLen);
  }
  /**
   * The payload of type `t` as a view of nested attributes, or undefined.
   * @throws {NetlinkDecodeError} malformed nested attributes
   */
  nested(t: number): AttributeView | undefined {
    const s = this.find(t);
    return s < 0 ? undefined : new AttributeView(this.buf, s, s + this.lastLen, this.base);
  }
}

/** A C string: the UTF-8 text of `b[start, end)` up to its first NUL (all of it without one). */
export function cString(b: Buffer, start = 0, end = b.length): string {
  let nul = start;
  while (nul < end && b[nul] !== 0) nul++;
  return b.toString('utf8', start, nul);
}

/*
 * Plain byte reads for hot decoders: a listing decodes tens of thousands of
 * messages in a fresh process, where Buffer's readUInt32LE (a call with its
 * own bounds check) is not yet optimized; indexed loads are cheap in every
 * tier. The caller has checked the bounds (an attribute's length, a struct's size).
 */

/** u16 little-endian at `off` (bounds checked by the caller). */
export function le16(b: Uint8Array, off: number): number {
  return b[off] | (b[off + 1] << 8);
}
/** u32 little-endian at `off` (bounds checked by the caller). */
export function le32(b: Uint8Array, off: number): number {
  return (b[off] | (b[off + 1] << 8) | (b[off + 2] << 16)) + b[off + 3] * 0x1000000;
}
/** s32 little-endian at `off` (bounds checked by the caller). */
export function les32(b: Uint8Array, off: number): number {
  return b[off] | (b[off + 1] << 8) | (b[off + 2] << 16) | (b[off + 3] << 24);
}
/** u64 little-endian at `off` as a number, exact below 2^53 (byte and packet counters stay under it for centuries; bounds checked by the caller). */
export function le64(b: Uint8Array, off: number): number {
  const hi = le32(b, off + 4);
  return hi === 0 ? le32(b, off) : le32(b, off) + hi * 0x100000000;
}
