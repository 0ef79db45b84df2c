/**
 * An allocation-light attribute index for the tc decoders: one pass over a
 * run of `struct nlattr` (linux/netlink.h) that records, for each type up to
 * a maximum, where the last attribute of that type sits — what the kernel's
 * `nla_parse` does. Lists of thousands of classes decode without creating an
 * object per attribute.
 *
 * Types are compared with NLA_F_NESTED and NLA_F_NET_BYTEORDER masked off;
 * types above the table's maximum are skipped (as the kernel ignores unknown
 * attributes). Offsets in errors are absolute: `base` is the offset of the
 * buffer's byte 0 in the datagram.
 *
 * @module
 */
import { NetlinkDecodeError } from '../netlink/errors.js';
import { NLA_TYPE_MASK } from '../netlink/attributes.js';

/**
 * An index of one attribute run. Reuse an instance for many runs (`parse`
 * resets it); never hold two live runs in the same instance.
 */
export class NlaTable {
  /** payload start (index into `buf`), valid when `stamp[t] === gen` */
  private readonly start: Int32Array;
  /** payload length */
  private readonly len: Int32Array;
  /** parse generation that last set each type (saves clearing the table on every parse) */
  private readonly stamp: Uint32Array;
  private gen = 0;
  /** the buffer of the last parse */
  buf: Buffer = Buffer.alloc(0);
  /** absolute offset of `buf[0]` */
  base = 0;
  /** highest type recorded */
  readonly max: number;

  /** @param max highest attribute type to record */
  constructor(max: number) {
    this.max = max;
    this.start = new Int32Array(max + 1);
    this.len = new Int32Array(max + 1);
    this.stamp = new Uint32Array(max + 1);
  }

  /** Payload start of type `t` in `buf`, or -1 when absent. */
  private pos(t: number): number {
    return t <= this.max && this.stamp[t] === this.gen ? this.start[t] : -1;
  }

  /**
   * Index the attributes in `buf[from, to)`.
   * @param buf the enclosing buffer (a datagram, or a message payload)
   * @param from offset of the first attribute in `buf`
   * @param to end of the run in `buf`
   * @param base absolute offset of `buf[0]`, for error offsets
   * @returns this
   * @throws {NetlinkDecodeError} a header that does not fit, nla_len < 4, or nla_len past `to`
   */
  parse(buf: Buffer, from: number, to: number, base = 0): this {
    if (++this.gen === 0x100000000) {
      this.stamp.fill(0);
      this.gen = 1;
    }
    const gen = this.gen;
    this.buf = buf;
    this.base = base;
    let off = from;
    while (off < to) {
      if (to - off < 4) {
        for (let i = off; i < to; i++) {
          if (buf[i] !== 0) throw new NetlinkDecodeError(`truncated attribute header: ${to - off} bytes left`, base + off);
        }
        break;
      }
      const l = buf[off] | (buf[off + 1] << 8);
      const t = (buf[off + 2] | (buf[off + 3] << 8)) & NLA_TYPE_MASK;
      if (l < 4) throw new NetlinkDecodeError(`attribute length ${l} is shorter than its header`, base + off);
      if (l > to - off) throw new NetlinkDecodeError(`attribute type ${t} length ${l} runs past the end (${to - off} bytes left)`, base + off);
      if (t <= this.max) {
        this.start[t] = off + 4;
        this.len[t] = l - 4;
        this.stamp[t] = gen;
      }
      off += (l + 3) & ~3;
    }
    return this;
  }

  /** Whether an attribute of this type was present. */
  has(t: number): boolean {
    return this.pos(t) >= 0;
  }
  /** Payload start in `buf` (-1 when absent). */
  at(t: number): number {
    return this.pos(t);
  }
  /** Payload length (0 when absent). */
  size(t: number): number {
    return this.has(t) ? this.len[t] : 0;
  }
  /** Absolute offset of the attribute's header, for error messages. */
  headerOffset(t: number): number {
    return this.base + this.start[t] - 4;
  }

  private need(t: number, n: number): number {
    const s = this.pos(t);
    if (s < 0) return -1;
    if (this.len[t] < n) throw new NetlinkDecodeError(`attribute type ${t} has ${this.len[t]} bytes, needs ${n}`, this.base + s - 4);
    return s;
  }
  /** NLA_U8, or undefined when absent. @throws {NetlinkDecodeError} too short */
  u8(t: number): number | undefined {
    const s = this.need(t, 1);
    return s < 0 ? undefined : this.buf[s];
  }
  /** NLA_U16 (host order), or undefined. @throws {NetlinkDecodeError} too short */
  u16(t: number): number | undefined {
    const s = this.need(t, 2);
    return s < 0 ? undefined : le16(this.buf, s);
  }
  /** NLA_U32 (host order), or undefined. @throws {NetlinkDecodeError} too short */
  u32(t: number): number | undefined {
    const s = this.need(t, 4);
    return s < 0 ? undefined : le32(this.buf, s);
  }
  /** NLA_S32 (host order), or undefined. @throws {NetlinkDecodeError} too short */
  s32(t: number): number | undefined {
    const s = this.need(t, 4);
    return s < 0 ? undefined : les32(this.buf, s);
  }
  /**
   * NLA_U64 (host order) as a number (exact up to 2^53), or undefined.
   * @throws {NetlinkDecodeError} too short
   */
  u64(t: number): number | undefined {
    const s = this.need(t, 8);
    return s < 0 ? undefined : readU64(this.buf, s);
  }
  /** NLA_STRING: UTF-8 up to the first NUL, or undefined. */
  str(t: number): string | undefined {
    const s = this.pos(t);
    if (s < 0) return undefined;
    const end = s + this.len[t];
    let nul = s;
    while (nul < end && this.buf[nul] !== 0) nul++;
    return this.buf.toString('utf8', s, nul);
  }
  /** Payload as a view (no copy), or undefined. */
  bytes(t: number): Buffer | undefined {
    const s = this.pos(t);
    return s < 0 ? undefined : this.buf.subarray(s, s + this.len[t]);
  }
  /**
   * A struct payload: throws unless it holds at least `n` bytes.
   * @returns payload start in `buf`, or -1 when absent
   * @throws {NetlinkDecodeError} shorter than `n`
   */
  struct(t: number, n: number): number {
    return this.need(t, n);
  }
}

/**
 * Read a u64 little-endian at `off` as a number (exact below 2^53, which
 * byte and packet counters stay under for centuries). The caller has checked
 * that the 8 bytes are there.
 */
export function readU64(buf: Buffer, off: number): number {
  const hi = le32(buf, off + 4);
  return hi === 0 ? le32(buf, off) : le32(buf, off) + hi * 0x100000000;
}

/*
 * Plain byte reads for the decoders' hot paths: a listing decodes tens of
 * thousands of messages in a fresh process, where Buffer's readUInt32LE (a
 * call into Node's JavaScript, with its own bounds check) is not yet
 * optimized; indexed loads are cheap in every tier. The callers have checked
 * the bounds (an attribute's length, a struct's size), as they did before.
 */

/** u32 little-endian at `off` (bounds checked by the caller). */
export function le32(b: Buffer, off: number): number {
  return (b[off] | (b[off + 1] << 8) | (b[off + 2] << 16)) + b[off + 3] * 0x1000000;
}

/** s32 little-endian at `off` (bounds checked by the caller). */
export function les32(b: Buffer, off: number): number {
  return b[off] | (b[off + 1] << 8) | (b[off + 2] << 16) | (b[off + 3] << 24);
}

/** u16 little-endian at `off` (bounds checked by the caller). */
export function le16(b: Buffer, off: number): number {
  return b[off] | (b[off + 1] << 8);
}
