/**
 * Test helper for nftables over a FakeTransport: kernel-style answers
 * (acks and errors) to the messages we send.
 */
import { encodeMessage, parseMessages, NLMSG_ERROR, NLM_F_ACK, type NetlinkMessage } from '../../src/netlink/message.js';

/**
 * An NLMSG_ERROR answering `req` (an ack when errno is 0). Errors echo the
 * whole request, as the kernel does without NETLINK_CAP_ACK; acks only its header.
 */
export function errorReply(req: NetlinkMessage, errno: number): Buffer {
  const echo = errno === 0 ? Buffer.alloc(0) : req.payload;
  const p = Buffer.alloc(4 + 16 + echo.length);
  p.writeInt32LE(-errno, 0);
  p.writeUInt32LE(16 + req.payload.length, 4);
  p.writeUInt16LE(req.type, 8);
  p.writeUInt16LE(req.flags, 10);
  p.writeUInt32LE(req.seq, 12);
  p.writeUInt32LE(req.pid, 16);
  echo.copy(p, 20);
  return encodeMessage({ type: NLMSG_ERROR, flags: errno === 0 ? 0x100 : 0, seq: req.seq, pid: 0, payload: p });
}

/**
 * Answer a batch datagram as nfnetlink_rcv_batch does: `errnos[i]` is the
 * error of the i-th message between BEGIN and END (0: accepted). Errors for
 * failed messages and acks for messages with NLM_F_ACK, in message order,
 * one datagram each.
 */
export function answerBatch(sent: Buffer, errnos: number[] = []): Buffer[] {
  const msgs = parseMessages(sent).slice(1, -1);
  const out: Buffer[] = [];
  msgs.forEach((m, i) => {
    const e = errnos[i] ?? 0;
    if (e !== 0 || (m.flags & NLM_F_ACK)) out.push(errorReply(m, e));
  });
  return out;
}
