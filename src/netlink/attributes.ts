/**
 * Netlink attributes (TLVs): `struct nlattr { __u16 nla_len; __u16 nla_type; }`
 * from linux/netlink.h, each padded to 4 bytes (NLA_ALIGNTO); `nla_len`
 * counts the 4-byte header and the payload but not the padding.
 *
 * Encoding: every builder returns the complete attribute (header, payload,
 * padding) as a Buffer; `nested()` concatenates children.
 * Decoding: {@link parseAttributes} returns an {@link AttributeList}, whose
 * typed getters throw {@link NetlinkDecodeError} with absolute byte offsets.
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

/** One decoded attribute. */
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
 * Parse a run of attributes.
 * @param buf the bytes holding the attributes (all of them, padding included)
 * @param base absolute offset of `buf[0]` in the enclosing datagram, used in errors
 * @throws {NetlinkDecodeError} a header that does not fit, nla_len < 4, or nla_len past the end
 */
export function parseAttributes(buf: Buffer, base = 0): AttributeList {
  const list: Attribute[] = [];
  let off = 0;
  while (off < buf.length) {
    if (buf.length - off < NLA_HDRLEN) {
      // Trailing bytes shorter than a header: the kernel tolerates them (nla_ok fails), so do we
      // only when they are zero padding.
      if (buf.subarray(off).every((x) => x === 0)) break;
      throw new NetlinkDecodeError(`truncated attribute header: ${buf.length - off} bytes left`, base + off);
    }
    const len = buf.readUInt16LE(off);
    const rawType = buf.readUInt16LE(off + 2);
    if (len < NLA_HDRLEN) throw new NetlinkDecodeError(`attribute length ${len} is shorter than its header`, base + off);
    if (off + len > buf.length) {
      throw new NetlinkDecodeError(`attribute type ${rawType & NLA_TYPE_MASK} length ${len} runs past the end (${buf.length - off} bytes left)`, base + off);
    }
    list.push({
      type: rawType & NLA_TYPE_MASK,
      isNested: (rawType & NLA_F_NESTED) !== 0,
      netByteOrder: (rawType & NLA_F_NET_BYTEORDER) !== 0,
      data: buf.subarray(off + NLA_HDRLEN, off + len),
      offset: base + off,
    });
    off += align4(len);
  }
  return new AttributeList(list, base);
}

/**
 * Decoded attributes with typed getters. Getters return `undefined` when the
 * attribute is absent and throw {@link NetlinkDecodeError} when it is present
 * but too short for the asked type.
 */
export class AttributeList implements Iterable<Attribute> {
  /** attributes in wire order */
  readonly items: readonly Attribute[];
  /** absolute offset of the list's first byte */
  readonly offset: number;
  constructor(items: Attribute[], offset: number) {
    this.items = items;
    this.offset = offset;
  }
  [Symbol.iterator](): Iterator<Attribute> {
    return this.items[Symbol.iterator]();
  }
  /** The last attribute of this type (the kernel's nla_parse keeps the last), or undefined. */
  get(type: number): Attribute | undefined {
    for (let i = this.items.length - 1; i >= 0; i--) if (this.items[i].type === type) return this.items[i];
    return undefined;
  }
  /** Every attribute of this type, in order. */
  all(type: number): Attribute[] {
    return this.items.filter((a) => a.type === type);
  }
  has(type: number): boolean {
    return this.get(type) !== undefined;
  }
  private need(type: number, size: number): Attribute | undefined {
    const a = this.get(type);
    if (a && a.data.length < size) {
      throw new NetlinkDecodeError(`attribute type ${type} has ${a.data.length} bytes, needs ${size}`, a.offset);
    }
    return a;
  }
  u8(type: number): number | undefined {
    return this.need(type, 1)?.data.readUInt8(0);
  }
  u16(type: number): number | undefined {
    return this.need(type, 2)?.data.readUInt16LE(0);
  }
  u16be(type: number): number | undefined {
    return this.need(type, 2)?.data.readUInt16BE(0);
  }
  u32(type: number): number | undefined {
    return this.need(type, 4)?.data.readUInt32LE(0);
  }
  u32be(type: number): number | undefined {
    return this.need(type, 4)?.data.readUInt32BE(0);
  }
  s32(type: number): number | undefined {
    return this.need(type, 4)?.data.readInt32LE(0);
  }
  s32be(type: number): number | undefined {
    return this.need(type, 4)?.data.readInt32BE(0);
  }
  u64(type: number): bigint | undefined {
    return this.need(type, 8)?.data.readBigUInt64LE(0);
  }
  u64be(type: number): bigint | undefined {
    return this.need(type, 8)?.data.readBigUInt64BE(0);
  }
  /** NLA_STRING / NLA_NUL_STRING: UTF-8 up to the first NUL. */
  str(type: number): string | undefined {
    const a = this.get(type);
    if (!a) return undefined;
    const nul = a.data.indexOf(0);
    return a.data.subarray(0, nul < 0 ? a.data.length : nul).toString('utf8');
  }
  /** Raw payload bytes. */
  bin(type: number): Buffer | undefined {
    return this.get(type)?.data;
  }
  /** Parse the payload as nested attributes. */
  nested(type: number): AttributeList | undefined {
    const a = this.get(type);
    return a ? parseAttributes(a.data, a.offset + NLA_HDRLEN) : undefined;
  }
}

/** Parse one attribute's payload as nested attributes. @throws {NetlinkDecodeError} */
export function parseNested(a: Attribute): AttributeList {
  return parseAttributes(a.data, a.offset + NLA_HDRLEN);
}
