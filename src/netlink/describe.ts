/**
 * One JSON object per netlink message: header fields by name, and the body
 * decoded by the decoder its protocol registered (`protocols.ts`). Used by
 * `synplug decode`.
 *
 * @module
 */
import { NetlinkDecodeError, errnoName } from './errors.js';
import {
  parseMessages,
  parseErrorReply,
  doneErrno,
  flagNames,
  readDatagramAsKernel,
  NLMSG_ERROR,
  NLMSG_DONE,
  type NetlinkMessage,
  type TrailingBytes,
} from './message.js';
import { bodyDecoder, messageTypeName, protocolInfo, requestKind } from './protocols.js';

/** A described message (all fields JSON-able). */
export interface DescribedMessage {
  /** e.g. 'NETLINK_ROUTE' */
  protocol: string;
  /** e.g. 'RTM_NEWQDISC', 'NLMSG_ERROR' */
  type: string;
  /** names of the set NLM_F_* flags */
  flags: string[];
  seq: number;
  pid: number;
  /** byte length (nlmsg_len) */
  len: number;
  /** decoded body, when a decoder is registered */
  body?: Record<string, unknown>;
  /** NLMSG_ERROR / NLMSG_DONE: errno (0 for an ack), code, extended ack */
  error?: { errno: number; code?: string; request?: string; extack?: string; extackOffset?: number; missingAttribute?: number; capped?: boolean };
  /** payload bytes in hex, when no decoder is registered */
  raw?: string;
  /** set when the body did not decode: the decoder's error (the rest of the message is still shown) */
  decode_error?: string;
}

/**
 * Describe every message of a datagram.
 * @param protocol netlink protocol number
 * @param bytes one datagram
 * @throws {NetlinkDecodeError} the datagram's message framing is broken (a body that does not
 *   decode is reported in `decode_error` instead, so one bad message does not hide the others)
 */
export function describeDatagram(protocol: number, bytes: Buffer): DescribedMessage[] {
  return parseMessages(bytes).map((m) => describeMessage(protocol, m));
}

/** A described datagram: its messages, and the bytes the kernel would not read. */
export interface DescribedDatagram {
  /** one entry per message read */
  messages: DescribedMessage[];
  /** set when a datagram sent to the kernel goes on past what the kernel reads (see readDatagramAsKernel) */
  trailing?: TrailingBytes;
}

/**
 * Describe a captured datagram the way its reader reads it. A datagram sent
 * **to** the kernel is split as the kernel splits it (`readDatagramAsKernel`
 * in message.ts, after netlink_rcv_skb): bytes past the last message it reads
 * (iproute2's padded requests, a short tail, a header with nlmsg_len below 16
 * or past the end) are reported in `trailing`, not as an error. A datagram
 * **from** the kernel is read strictly (`parseMessages`), as the connection
 * reads replies: the kernel never sends such bytes, so they mean a broken capture.
 * @param protocol netlink protocol number
 * @param bytes one datagram
 * @param direction `to-kernel` or `from-kernel` (as pcap.ts's datagramDirection tells)
 * @throws {NetlinkDecodeError} a reply's framing is broken (never for a request)
 */
export function describeCapturedDatagram(protocol: number, bytes: Buffer, direction: 'to-kernel' | 'from-kernel'): DescribedDatagram {
  const messages: DescribedMessage[] = [];
  const trailing = eachCapturedMessage(protocol, bytes, direction, (m) => messages.push(m));
  return { messages, ...(trailing && { trailing }) };
}

/**
 * {@link describeCapturedDatagram}, each message described and handed to
 * `each` as it is read: a datagram of millions of messages is never held
 * as objects at once (`synplug decode` prints them as they come).
 * @returns the trailing bytes of a request, as {@link describeCapturedDatagram}'s `trailing`
 * @throws {NetlinkDecodeError} a reply's framing is broken, after `each` had the messages before the bad header
 */
export function eachCapturedMessage(
  protocol: number,
  bytes: Buffer,
  direction: 'to-kernel' | 'from-kernel',
  each: (m: DescribedMessage) => void,
): DescribedDatagram['trailing'] {
  const describe = (m: NetlinkMessage) => each(describeMessage(protocol, m));
  if (direction === 'from-kernel') {
    parseMessages(bytes, 0, describe);
    return undefined;
  }
  return readDatagramAsKernel(bytes, 0, describe).trailing;
}

/** Describe one message (see {@link describeDatagram}). Never throws for a bad body. */
export function describeMessage(protocol: number, m: NetlinkMessage): DescribedMessage {
  const kind = m.type === NLMSG_ERROR ? 'ack' : requestKind(protocol, m.type);
  const d: DescribedMessage = {
    protocol: protocolInfo(protocol)?.name ?? `netlink protocol ${protocol}`,
    type: messageTypeName(protocol, m.type),
    flags: flagNames(m.flags, kind),
    seq: m.seq,
    pid: m.pid,
    len: m.payload.length + 16,
  };
  try {
    if (m.type === NLMSG_ERROR) {
      const r = parseErrorReply(m);
      d.error = {
        errno: r.errno,
        ...(r.errno !== 0 && { code: errnoName(r.errno) }),
        request: messageTypeName(protocol, r.request.type),
        ...(r.extAckMessage !== undefined && { extack: r.extAckMessage }),
        ...(r.extAckOffset !== undefined && { extackOffset: r.extAckOffset }),
        ...(r.missingAttribute !== undefined && { missingAttribute: r.missingAttribute }),
        ...(r.capped && { capped: true }),
      };
    } else if (m.type === NLMSG_DONE) {
      const errno = doneErrno(m);
      d.error = { errno, ...(errno !== 0 && { code: errnoName(errno) }) };
    } else {
      const dec = bodyDecoder(protocol, m.type);
      if (dec) d.body = dec(m);
      else if (m.payload.length) d.raw = m.payload.toString('hex');
    }
  } catch (e) {
    if (!(e instanceof NetlinkDecodeError)) throw e;
    d.decode_error = e.message;
    d.raw = m.payload.toString('hex');
  }
  return d;
}
