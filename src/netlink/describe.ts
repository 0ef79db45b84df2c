/**
 * One JSON object per netlink message: header fields by name, and the body
 * decoded by the decoder its protocol registered (`protocols.ts`). Used by
 * `synplug decode`.
 *
 * @module
 */
import { NetlinkDecodeError, errnoName } from './errors.js';
import { parseMessages, parseErrorReply, doneErrno, flagNames, NLMSG_ERROR, NLMSG_DONE, type NetlinkMessage } from './message.js';
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
  error?: { errno: number; code?: string; request?: string; extack?: string; extack_offset?: number; missing_attribute?: number; capped?: boolean };
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
        ...(r.extAckOffset !== undefined && { extack_offset: r.extAckOffset }),
        ...(r.missingAttribute !== undefined && { missing_attribute: r.missingAttribute }),
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
