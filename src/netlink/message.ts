/**
 * Netlink messages: `struct nlmsghdr` (linux/netlink.h), several per
 * datagram, each aligned to 4 bytes; NLMSG_ERROR / NLMSG_DONE payloads.
 *
 * ```c
 * struct nlmsghdr {
 *   __u32 nlmsg_len;    // length of message including header
 *   __u16 nlmsg_type;
 *   __u16 nlmsg_flags;
 *   __u32 nlmsg_seq;
 *   __u32 nlmsg_pid;    // sending process port ID
 * };
 * ```
 *
 * @module
 */
import { parseAttributes, align4 } from './attributes.js';
import { NetlinkDecodeError, NetlinkError } from './errors.js';

/** NLMSG_HDRLEN: 16 bytes. */
export const NLMSG_HDRLEN = 16;

export const NLMSG_NOOP = 0x1;
export const NLMSG_ERROR = 0x2;
export const NLMSG_DONE = 0x3;
export const NLMSG_OVERRUN = 0x4;
/** Types below this are control messages. */
export const NLMSG_MIN_TYPE = 0x10;

export const NLM_F_REQUEST = 0x01;
export const NLM_F_MULTI = 0x02;
export const NLM_F_ACK = 0x04;
export const NLM_F_ECHO = 0x08;
export const NLM_F_DUMP_INTR = 0x10;
export const NLM_F_DUMP_FILTERED = 0x20;
/* Modifiers to GET request */
export const NLM_F_ROOT = 0x100;
export const NLM_F_MATCH = 0x200;
export const NLM_F_ATOMIC = 0x400;
export const NLM_F_DUMP = NLM_F_ROOT | NLM_F_MATCH;
/* Modifiers to NEW request */
export const NLM_F_REPLACE = 0x100;
export const NLM_F_EXCL = 0x200;
export const NLM_F_CREATE = 0x400;
export const NLM_F_APPEND = 0x800;
/* Modifiers to DELETE request */
export const NLM_F_NONREC = 0x100;
export const NLM_F_BULK = 0x200;
/* Flags for ACK message */
export const NLM_F_CAPPED = 0x100;
export const NLM_F_ACK_TLVS = 0x200;

/* enum nlmsgerr_attrs */
export const NLMSGERR_ATTR_MSG = 1;
export const NLMSGERR_ATTR_OFFS = 2;
export const NLMSGERR_ATTR_COOKIE = 3;
export const NLMSGERR_ATTR_POLICY = 4;
export const NLMSGERR_ATTR_MISS_TYPE = 5;
export const NLMSGERR_ATTR_MISS_NEST = 6;

/** Netlink protocol numbers used here (linux/netlink.h). */
export const NETLINK_ROUTE = 0;
export const NETLINK_SOCK_DIAG = 4;
export const NETLINK_NETFILTER = 12;

/** One netlink message, header fields plus its payload. */
export interface NetlinkMessage {
  /** nlmsg_type */
  type: number;
  /** nlmsg_flags (NLM_F_*) */
  flags: number;
  /** nlmsg_seq */
  seq: number;
  /** nlmsg_pid: sender port id (0 for the kernel) */
  pid: number;
  /** bytes after the 16-byte header, up to nlmsg_len (a view, not a copy) */
  payload: Buffer;
  /** absolute offset of the header in the datagram */
  offset: number;
}

/** What {@link encodeMessage} takes. */
export interface MessageInit {
  type: number;
  flags: number;
  seq?: number;
  pid?: number;
  /** payload parts, concatenated (family header, then attributes) */
  payload?: Buffer | readonly Buffer[];
}

/**
 * Encode one message: header + payload, padded to 4 bytes.
 * @returns a Buffer of NLMSG_ALIGN(16 + payload) bytes
 */
export function encodeMessage(m: MessageInit): Buffer {
  const len = messageLength(m.payload);
  const out = Buffer.allocUnsafe(align4(len));
  writeMessage(out, 0, len, m.type, m.flags, m.seq ?? 0, m.pid ?? 0, m.payload);
  return out;
}

/**
 * nlmsg_len of a message with this payload: 16 + the parts' lengths (without
 * the final padding).
 */
export function messageLength(payload: Buffer | readonly Buffer[] | undefined): number {
  if (payload === undefined) return NLMSG_HDRLEN;
  if (Buffer.isBuffer(payload)) return NLMSG_HDRLEN + payload.length;
  let n = NLMSG_HDRLEN;
  for (let i = 0; i < payload.length; i++) n += payload[i].length;
  return n;
}

/**
 * Write one message (header, payload parts, zeroed padding) into `out` at
 * `off`, as {@link encodeMessage} lays it out; for callers that size one
 * buffer for several messages.
 * @param out a buffer with at least NLMSG_ALIGN({@link messageLength}) bytes from `off`
 * @returns the offset after the message and its padding
 */
export function encodeMessageInto(
  out: Buffer,
  off: number,
  type: number,
  flags: number,
  seq: number,
  pid: number,
  payload: Buffer | readonly Buffer[] | undefined,
): number {
  return writeMessage(out, off, messageLength(payload), type, flags, seq, pid, payload);
}

/**
 * {@link encodeMessageInto} with nlmsg_len already known.
 * @param len {@link messageLength} of `payload`
 * @returns the offset after the message and its padding
 */
export function writeMessage(
  out: Buffer,
  off: number,
  len: number,
  type: number,
  flags: number,
  seq: number,
  pid: number,
  payload: Buffer | readonly Buffer[] | undefined,
): number {
  out.writeUInt32LE(len, off);
  out.writeUInt16LE(type & 0xffff, off + 4);
  out.writeUInt16LE(flags & 0xffff, off + 6);
  out.writeUInt32LE(seq >>> 0, off + 8);
  out.writeUInt32LE(pid >>> 0, off + 12);
  let at = off + NLMSG_HDRLEN;
  if (payload !== undefined) {
    if (Buffer.isBuffer(payload)) {
      out.set(payload, at);
      at += payload.length;
    } else
      for (let i = 0; i < payload.length; i++) {
        const p = payload[i];
        out.set(p, at);
        at += p.length;
      }
  }
  const end = off + align4(len);
  while (at < end) out[at++] = 0;
  return end;
}

/**
 * Split a datagram into messages, strictly: every byte must belong to a
 * message (the padding after the last one may be missing). This is how the
 * connection reads the kernel's replies, which are always well formed; for
 * what was sent to the kernel, {@link readDatagramAsKernel} reads as the
 * kernel does and reports the bytes it leaves unread instead of throwing.
 * @param buf one datagram as received (or as captured)
 * @param base absolute offset of `buf[0]`, for error offsets
 * @param each when given, each message is handed to it as it is read instead of collected (the result is then empty):
 *   a datagram of millions of messages is never held as objects at once
 * @throws {NetlinkDecodeError} a header that does not fit, nlmsg_len < 16, or nlmsg_len past the end (after `each` had the messages before it)
 */
export function parseMessages(buf: Buffer, base = 0, each?: (m: NetlinkMessage) => void): NetlinkMessage[] {
  const out: NetlinkMessage[] = [];
  let off = 0;
  while (off < buf.length) {
    if (buf.length - off < NLMSG_HDRLEN) {
      throw new NetlinkDecodeError(`truncated netlink header: ${buf.length - off} bytes left, need ${NLMSG_HDRLEN}`, base + off);
    }
    // plain byte reads (the 16 header bytes are there): cheaper than Buffer's
    // read methods in a fresh process decoding a large dump
    const len = (buf[off] | (buf[off + 1] << 8) | (buf[off + 2] << 16)) + buf[off + 3] * 0x1000000;
    if (len < NLMSG_HDRLEN) throw new NetlinkDecodeError(`nlmsg_len ${len} is shorter than the header`, base + off);
    if (len > buf.length - off) {
      throw new NetlinkDecodeError(`nlmsg_len ${len} runs past the end of the datagram (${buf.length - off} bytes left)`, base + off);
    }
    const m: NetlinkMessage = {
      type: buf[off + 4] | (buf[off + 5] << 8),
      flags: buf[off + 6] | (buf[off + 7] << 8),
      seq: (buf[off + 8] | (buf[off + 9] << 8) | (buf[off + 10] << 16)) + buf[off + 11] * 0x1000000,
      pid: (buf[off + 12] | (buf[off + 13] << 8) | (buf[off + 14] << 16)) + buf[off + 15] * 0x1000000,
      payload: buf.subarray(off + NLMSG_HDRLEN, off + len),
      offset: base + off,
    };
    if (each) each(m);
    else out.push(m);
    off += align4(len);
  }
  return out;
}

/** Why {@link readDatagramAsKernel} stopped before the end of a datagram. */
export type TrailingReason =
  /** fewer than NLMSG_HDRLEN (16) bytes were left: `skb->len < nlmsg_total_size(0)` */
  | 'short-tail'
  /** the next header's nlmsg_len is below NLMSG_HDRLEN: `nlh->nlmsg_len < NLMSG_HDRLEN` */
  | 'nlmsg_len-below-header'
  /** the next header's nlmsg_len runs past the end of the datagram: `skb->len < nlh->nlmsg_len` */
  | 'nlmsg_len-past-end';

/** The bytes of a datagram the kernel does not read (see {@link readDatagramAsKernel}). */
export interface TrailingBytes {
  /** absolute offset of the first unread byte (`base` + offset in the datagram) */
  offset: number;
  /** number of unread bytes, up to the end of the datagram */
  length: number;
  /** which of the kernel's checks stopped the reading */
  reason: TrailingReason;
  /** the nlmsg_len of the header that stopped it (absent for `short-tail`) */
  nlmsgLen?: number;
}

/** What {@link readDatagramAsKernel} read: the messages, and the bytes left unread. */
export interface DatagramReading {
  /** the messages, in order, as {@link parseMessages} returns them */
  messages: NetlinkMessage[];
  /** present when the reading stopped before the end of the datagram */
  trailing?: TrailingBytes;
}

/**
 * Split a datagram the way the kernel reads one sent to it, never throwing:
 * `netlink_rcv_skb()` in net/netlink/af_netlink.c (used by rtnetlink,
 * sock_diag, and nfnetlink outside batches):
 *
 * ```c
 * while (skb->len >= nlmsg_total_size(0)) {           // at least NLMSG_HDRLEN (16) bytes left
 *   nlh = nlmsg_hdr(skb);
 *   if (nlh->nlmsg_len < NLMSG_HDRLEN || skb->len < nlh->nlmsg_len)
 *     return 0;                                       // stop, no error, no ack
 *   ... handle the message ...
 *   msglen = NLMSG_ALIGN(nlh->nlmsg_len);
 *   if (msglen > skb->len) msglen = skb->len;         // a last message without its padding is fine
 *   skb_pull(skb, msglen);
 * }
 * ```
 *
 * The rule, as applied here:
 * - fewer than 16 bytes left (1 to 15): reading stops; they are `trailing`, reason `short-tail`;
 * - a header whose nlmsg_len is below 16: reading stops there; the rest is `trailing`
 *   (`nlmsg_len-below-header`);
 * - a header whose nlmsg_len runs past the end of the datagram: reading stops there too
 *   (`nlmsg_len-past-end`); for a request the kernel drops it silently, like the others;
 * - the padding after a last message may be missing (the kernel clamps the pull).
 *
 * iproute2 sends some requests padded past nlmsg_len (a whole request struct
 * after a shorter message), which this reads as the kernel does: the message,
 * then `trailing` bytes. nfnetlink's `nfnetlink_rcv()` applies the same
 * nlmsg_len checks to the first header (and stops the same way); inside an
 * NFNL_MSG_BATCH_BEGIN batch (`nfnetlink_rcv_batch()`) a bad header makes the
 * kernel abort the whole batch instead, which this reading does not model: it
 * reports where the messages end, not what the batch did.
 *
 * Use it for what went **to** the kernel (`synplug decode`, replaying a
 * capture). Replies the kernel sends are well formed: read them with the
 * strict {@link parseMessages}, as the connection does, so that a truncated
 * or corrupted reply is an error rather than a silent stop.
 *
 * @param buf one datagram
 * @param base absolute offset of `buf[0]`, for the offsets reported
 * @param each when given, each message is handed to it as it is read instead of collected (`messages` is then empty)
 * @returns the messages read and, when the reading stopped early, the trailing bytes; never throws (but passes on what `each` throws)
 */
export function readDatagramAsKernel(buf: Buffer, base = 0, each?: (m: NetlinkMessage) => void): DatagramReading {
  const messages: NetlinkMessage[] = [];
  let off = 0;
  while (buf.length - off >= NLMSG_HDRLEN) {
    const len = buf.readUInt32LE(off);
    if (len < NLMSG_HDRLEN || len > buf.length - off) {
      return {
        messages,
        trailing: { offset: base + off, length: buf.length - off, reason: len < NLMSG_HDRLEN ? 'nlmsg_len-below-header' : 'nlmsg_len-past-end', nlmsgLen: len },
      };
    }
    const m: NetlinkMessage = {
      type: buf.readUInt16LE(off + 4),
      flags: buf.readUInt16LE(off + 6),
      seq: buf.readUInt32LE(off + 8),
      pid: buf.readUInt32LE(off + 12),
      payload: buf.subarray(off + NLMSG_HDRLEN, off + len),
      offset: base + off,
    };
    if (each) each(m);
    else messages.push(m);
    off = Math.min(buf.length, off + align4(len));
  }
  if (off < buf.length) return { messages, trailing: { offset: base + off, length: buf.length - off, reason: 'short-tail' } };
  return { messages };
}

/** A decoded NLMSG_ERROR payload (`struct nlmsgerr` + extended-ack TLVs). */
export interface ErrorReply {
  /** positive errno; 0 for an ack */
  errno: number;
  /** the echoed request header (always present) */
  request: { type: number; flags: number; seq: number; pid: number; len: number };
  /** NLM_F_CAPPED: only the request's header was echoed */
  capped: boolean;
  /** NLMSGERR_ATTR_MSG (an error text, or a warning on an ack) */
  extAckMessage?: string;
  /** NLMSGERR_ATTR_OFFS */
  extAckOffset?: number;
  /** NLMSGERR_ATTR_MISS_TYPE */
  missingAttribute?: number;
}

/**
 * Decode an NLMSG_ERROR message.
 * ```c
 * struct nlmsgerr { int error; struct nlmsghdr msg; };  // + payload unless NLM_F_CAPPED, + TLVs if NLM_F_ACK_TLVS
 * ```
 * @throws {NetlinkDecodeError} payload shorter than 20 bytes, or malformed TLVs
 */
export function parseErrorReply(m: NetlinkMessage): ErrorReply {
  const p = m.payload;
  const at = m.offset + NLMSG_HDRLEN;
  if (p.length < 4 + NLMSG_HDRLEN) throw new NetlinkDecodeError(`NLMSG_ERROR payload has ${p.length} bytes, needs 20`, at);
  const error = p.readInt32LE(0);
  const reqLen = p.readUInt32LE(4);
  const capped = (m.flags & NLM_F_CAPPED) !== 0;
  const reply: ErrorReply = {
    errno: error === 0 ? 0 : -error, // not -0: an ack's errno is 0
    request: { len: reqLen, type: p.readUInt16LE(8), flags: p.readUInt16LE(10), seq: p.readUInt32LE(12), pid: p.readUInt32LE(16) },
    capped,
  };
  if (m.flags & NLM_F_ACK_TLVS) {
    // An ack (error 0) echoes only the header; an error echoes the whole request unless capped.
    const echoed = capped || error === 0 ? NLMSG_HDRLEN : align4(reqLen);
    const tlvStart = 4 + echoed;
    if (tlvStart > p.length) throw new NetlinkDecodeError(`NLMSG_ERROR echoes ${echoed} request bytes but only ${p.length - 4} are present`, at + 4);
    const tlvs = parseAttributes(p.subarray(tlvStart), at + tlvStart);
    reply.extAckMessage = tlvs.str(NLMSGERR_ATTR_MSG);
    reply.extAckOffset = tlvs.u32(NLMSGERR_ATTR_OFFS);
    reply.missingAttribute = tlvs.u32(NLMSGERR_ATTR_MISS_TYPE);
  }
  return reply;
}

/**
 * Turn an error reply into a {@link NetlinkError}.
 * @param requestType name of the failed request's type, e.g. 'RTM_NEWQDISC'
 */
export function errorFromReply(r: ErrorReply, requestType: string): NetlinkError {
  return new NetlinkError({
    errno: r.errno,
    requestType,
    extAckMessage: r.extAckMessage,
    extAckOffset: r.extAckOffset,
    missingAttribute: r.missingAttribute,
    capped: r.capped,
  });
}

/**
 * The errno an NLMSG_DONE carries (its payload is an `int`, 0 on success).
 * @returns positive errno, 0 when none
 */
export function doneErrno(m: NetlinkMessage): number {
  if (m.payload.length < 4) return 0;
  const e = m.payload.readInt32LE(0);
  return e === 0 ? 0 : -e;
}

const FLAG_NAMES_COMMON: [number, string][] = [
  [NLM_F_REQUEST, 'NLM_F_REQUEST'],
  [NLM_F_MULTI, 'NLM_F_MULTI'],
  [NLM_F_ACK, 'NLM_F_ACK'],
  [NLM_F_ECHO, 'NLM_F_ECHO'],
  [NLM_F_DUMP_INTR, 'NLM_F_DUMP_INTR'],
  [NLM_F_DUMP_FILTERED, 'NLM_F_DUMP_FILTERED'],
];

/** The kind of request a message type is, which decides how bits 0x100-0x800 read. */
export type RequestKind = 'new' | 'get' | 'del' | 'ack' | 'other';

/**
 * Names of the set flags, e.g. `['NLM_F_REQUEST', 'NLM_F_ACK', 'NLM_F_CREATE', 'NLM_F_EXCL']`.
 * Bits 0x100-0x800 mean different things for NEW, GET, DEL and ack messages.
 */
export function flagNames(flags: number, kind: RequestKind): string[] {
  const out: string[] = [];
  for (const [bit, name] of FLAG_NAMES_COMMON) if (flags & bit) out.push(name);
  const hi: [number, string][] =
    kind === 'new'
      ? [
          [NLM_F_REPLACE, 'NLM_F_REPLACE'],
          [NLM_F_EXCL, 'NLM_F_EXCL'],
          [NLM_F_CREATE, 'NLM_F_CREATE'],
          [NLM_F_APPEND, 'NLM_F_APPEND'],
        ]
      : kind === 'get'
        ? (flags & NLM_F_DUMP) === NLM_F_DUMP
          ? [
              [NLM_F_DUMP, 'NLM_F_DUMP'],
              [NLM_F_ATOMIC, 'NLM_F_ATOMIC'],
            ]
          : [
              [NLM_F_ROOT, 'NLM_F_ROOT'],
              [NLM_F_MATCH, 'NLM_F_MATCH'],
              [NLM_F_ATOMIC, 'NLM_F_ATOMIC'],
            ]
        : kind === 'del'
          ? [
              [NLM_F_NONREC, 'NLM_F_NONREC'],
              [NLM_F_BULK, 'NLM_F_BULK'],
            ]
          : kind === 'ack'
            ? [
                [NLM_F_CAPPED, 'NLM_F_CAPPED'],
                [NLM_F_ACK_TLVS, 'NLM_F_ACK_TLVS'],
              ]
            : [];
  let known = 0xff;
  for (const [bit, name] of hi) {
    if ((flags & bit) === bit) out.push(name);
    known |= bit;
  }
  const rest = flags & ~known & ~0xff;
  if (rest) out.push(`0x${rest.toString(16)}`);
  return out;
}

/** Name of a control message type (< NLMSG_MIN_TYPE), or undefined. */
export function controlTypeName(type: number): string | undefined {
  return ({ [NLMSG_NOOP]: 'NLMSG_NOOP', [NLMSG_ERROR]: 'NLMSG_ERROR', [NLMSG_DONE]: 'NLMSG_DONE', [NLMSG_OVERRUN]: 'NLMSG_OVERRUN' } as Record<number, string>)[
    type
  ];
}
