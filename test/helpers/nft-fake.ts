/**
 * Kernel-style answers for a FakeTransport speaking nfnetlink, as
 * net/netlink/af_netlink.c (netlink_ack) and net/netfilter/nfnetlink.c
 * (nfnetlink_rcv_batch) send them. Used by the nftables unit tests.
 */
import { encodeMessage, parseMessages, NLMSG_ERROR, NLM_F_ACK, NLM_F_CAPPED, type NetlinkMessage } from '../../src/netlink/message.js';

/**
 * An NLMSG_ERROR answering `req` (an ack when errno is 0).
 *
 * struct nlmsgerr { int error; struct nlmsghdr msg; };  // + the request's payload unless NLM_F_CAPPED
 *
 * An ack echoes only the request's header (NLM_F_CAPPED). An error echoes the
 * whole request, as the kernel does without NETLINK_CAP_ACK, unless `capped`
 * (the kernel with NETLINK_CAP_ACK set, as nft sets it): then only the header.
 */
export function errorReply(req: NetlinkMessage, errno: number, opts: { capped?: boolean } = {}): Buffer {
  const capped = errno === 0 || opts.capped === true;
  const echo = capped ? Buffer.alloc(0) : req.payload;
  const p = Buffer.alloc(4 + 16 + echo.length);
  p.writeInt32LE(-errno, 0);
  p.writeUInt32LE(16 + req.payload.length, 4);
  p.writeUInt16LE(req.type, 8);
  p.writeUInt16LE(req.flags, 10);
  p.writeUInt32LE(req.seq, 12);
  p.writeUInt32LE(req.pid, 16);
  echo.copy(p, 20);
  return encodeMessage({ type: NLMSG_ERROR, flags: capped ? NLM_F_CAPPED : 0, seq: req.seq, pid: 0, payload: p });
}

/**
 * Answer a batch datagram as nfnetlink_rcv_batch does: `errnos[i]` is the
 * error of the i-th message between BEGIN and END (0: accepted). Errors for
 * failed messages and acks for messages with NLM_F_ACK, in message order,
 * one datagram each.
 */
export function answerBatch(sent: Buffer, errnos: readonly number[] = []): Buffer[] {
  const msgs = parseMessages(sent).slice(1, -1);
  const out: Buffer[] = [];
  msgs.forEach((m, i) => {
    const e = errnos[i] ?? 0;
    if (e !== 0 || m.flags & NLM_F_ACK) out.push(errorReply(m, e));
  });
  return out;
}
