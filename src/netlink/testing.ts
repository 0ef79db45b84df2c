/**
 * Test doubles for the netlink layer, published as `synplug/netlink/testing`
 * (not part of the package root): a {@link FakeTransport} that replays
 * scripted datagrams, and kernel-style answers for nfnetlink batches
 * ({@link nfnetlinkAck}, {@link answerNfnetlinkBatch}), as
 * net/netlink/af_netlink.c (netlink_ack) and net/netfilter/nfnetlink.c
 * (nfnetlink_rcv_batch) send them.
 *
 * ```ts
 * import { NetlinkConnection } from 'synplug/netlink';
 * import { FakeTransport, answerNfnetlinkBatch } from 'synplug/netlink/testing';
 * const conn = new NetlinkConnection(new FakeTransport([(sent) => answerNfnetlinkBatch(sent)]), 12);
 * ```
 *
 * @module
 */
import type { Transport } from './transport.js';
import { encodeMessage, parseMessages, NLMSG_ERROR, NLM_F_ACK, NLM_F_CAPPED, type NetlinkMessage } from './message.js';

/**
 * A transport for unit tests: records what is sent and answers with scripted
 * datagrams. A reply script gets the sent datagram and returns the datagrams
 * to deliver; their sequence numbers are rewritten to the request's
 * (the first message's seq, plus its position for multi-message requests)
 * unless `keepSeq` is set.
 */
export class FakeTransport implements Transport {
  /** a fixed port id */
  readonly portId = 4242;
  /** every datagram sent, in order */
  readonly sent: Buffer[] = [];
  private cb: (d: Buffer) => void = () => {};
  private errCb: (e: Error) => void = () => {};
  private readonly script: Array<(sent: Buffer) => Buffer[]>;
  private readonly keepSeq: boolean;
  /** set by {@link FakeTransport.close} */
  closed = false;

  /**
   * @param script one function per expected send, answering it; or an array of
   *   reply datagram lists, one per send, replayed in order
   */
  constructor(script: Array<((sent: Buffer) => Buffer[]) | Buffer[]> = [], options: { keepSeq?: boolean } = {}) {
    this.script = script.map((s) => (typeof s === 'function' ? s : () => s));
    this.keepSeq = options.keepSeq ?? false;
  }
  /**
   * Record `datagram` and answer it with the next script step, on a
   * microtask (no step left: no answer, the caller's timeout fires).
   * @throws {NetlinkDecodeError} `datagram` is not a sequence of netlink messages
   */
  send(datagram: Buffer): void {
    this.sent.push(Buffer.from(datagram));
    const step = this.script.shift();
    if (!step) return; // unanswered: the caller's timeout fires
    const seqs = parseMessages(datagram).map((m) => m.seq);
    const replies = step(datagram).map((d) => (this.keepSeq ? d : rewriteSeq(d, seqs)));
    queueMicrotask(() => {
      for (const d of replies) this.cb(d);
    });
  }
  /** Register the receiver of the scripted replies. */
  onDatagram(cb: (datagram: Buffer) => void): void {
    this.cb = cb;
  }
  /** Register the receiver of errors injected with {@link FakeTransport.fail}. */
  onError(cb: (err: Error) => void): void {
    this.errCb = cb;
  }
  /** Inject a socket error, as the kernel would (e.g. ENOBUFS). */
  fail(err: Error): void {
    this.errCb(err);
  }
  /** Mark it closed (nothing else happens). */
  close(): void {
    this.closed = true;
  }
}

/**
 * Rewrite the seq of each message of a captured reply so that it answers the
 * request we sent: the captured seqs are mapped in order of first appearance
 * to the seqs we sent.
 */
function rewriteSeq(d: Buffer, sentSeqs: number[]): Buffer {
  const out = Buffer.from(d);
  const map = new Map<number, number>();
  for (const m of parseMessages(out)) {
    if (!map.has(m.seq)) map.set(m.seq, sentSeqs[Math.min(map.size, sentSeqs.length - 1)]);
    out.writeUInt32LE(map.get(m.seq)!, m.offset + 8);
  }
  return out;
}

/**
 * An NLMSG_ERROR answering `req`: an ack when `errno` is 0.
 *
 * ```c
 * struct nlmsgerr { int error; struct nlmsghdr msg; };  // + the request's payload unless NLM_F_CAPPED
 * ```
 *
 * An ack echoes only the request's header (NLM_F_CAPPED). An error echoes the
 * whole request, as the kernel does without NETLINK_CAP_ACK, unless `capped`
 * (NETLINK_CAP_ACK set, as synplug and nft set it): then only the header.
 * @param req the request being answered (from parseMessages of the sent datagram)
 * @param errno positive errno, 0 for an ack
 * @returns one datagram
 */
export function nfnetlinkAck(req: NetlinkMessage, errno: number, opts: { capped?: boolean } = {}): Buffer {
  // opts.capped: echo only the header for an error too (the kernel with NETLINK_CAP_ACK)
  const capped = errno === 0 || opts.capped === true;
  const echoed = capped ? 0 : req.payload.length;
  const p = Buffer.alloc(20 + echoed);
  p.writeInt32LE(-errno, 0);
  p.writeUInt32LE(16 + req.payload.length, 4);
  p.writeUInt16LE(req.type, 8);
  p.writeUInt16LE(req.flags, 10);
  p.writeUInt32LE(req.seq, 12);
  p.writeUInt32LE(req.pid, 16);
  if (!capped) req.payload.copy(p, 20);
  return encodeMessage({ type: NLMSG_ERROR, flags: capped ? NLM_F_CAPPED : 0, seq: req.seq, pid: 0, payload: p });
}

/**
 * Answer an nfnetlink batch datagram (NFNL_MSG_BATCH_BEGIN, messages,
 * NFNL_MSG_BATCH_END) as nfnetlink_rcv_batch does: `errnos[i]` is the error
 * of the i-th message between BEGIN and END (0 or missing: accepted). An
 * error for each refused message and an ack for each accepted one that asked
 * for it (NLM_F_ACK), in message order, one datagram each.
 * @param sent the batch datagram (FakeTransport hands it to the script)
 * @returns the reply datagrams, for a {@link FakeTransport} script step
 * @throws {NetlinkDecodeError} `sent` is not a sequence of netlink messages
 */
export function answerNfnetlinkBatch(sent: Buffer, errnos: readonly number[] = []): Buffer[] {
  const inner = parseMessages(sent).slice(1, -1);
  const out: Buffer[] = [];
  for (let i = 0; i < inner.length; i++) {
    const e = errnos[i] ?? 0;
    if (e !== 0 || (inner[i].flags & NLM_F_ACK) !== 0) out.push(nfnetlinkAck(inner[i], e));
  }
  return out;
}
