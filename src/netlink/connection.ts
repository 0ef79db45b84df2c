/**
 * A netlink connection: sequence numbers, requests awaiting their ack,
 * dumps until NLMSG_DONE, several requests in flight at once, a timeout per
 * exchange. It runs over a {@link Transport}: the real socket
 * ({@link SocketTransport}, from the `netlink` npm package) or a
 * {@link FakeTransport} that replays datagrams in unit tests.
 *
 * @module
 */
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { NetlinkError, NetlinkDecodeError, DumpInterruptedError, SynplugError } from './errors.js';
import {
  writeMessage, messageLength, parseMessages, parseErrorReply, errorFromReply, doneErrno,
  NLMSG_ERROR, NLMSG_DONE, NLMSG_NOOP, NLMSG_OVERRUN, NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP, NLM_F_DUMP_INTR,
  NLM_F_ACK_TLVS, NLMSG_HDRLEN, type NetlinkMessage,
} from './message.js';
import { align4 } from './attributes.js';
import { messageTypeName } from './protocols.js';

/** Moves datagrams between a {@link NetlinkConnection} and the kernel (or a test double). */
export interface Transport {
  /** Send one datagram; errors arrive through the callback given to {@link Transport.onError}. */
  send(datagram: Buffer): void;
  /**
   * Send a datagram that starts a dump. Optional: a transport may send it on
   * a socket of its own that reads with a large buffer (see
   * {@link SocketTransport}); its replies arrive through the same
   * {@link Transport.onDatagram} callback. Without it, {@link Transport.send} is used.
   */
  sendDump?(datagram: Buffer): void;
  /** Register the receiver of every datagram that arrives. */
  onDatagram(cb: (datagram: Buffer) => void): void;
  /** Register the receiver of socket errors (ENOBUFS, EPERM on send...). */
  onError(cb: (err: Error) => void): void;
  /** Release the socket; pending sends are dropped. */
  close(): void;
  /** Our port id (nl_pid), 0 when unknown. */
  readonly portId: number;
}

/** Options of {@link NetlinkConnection}. */
export interface ConnectionOptions {
  /** Default timeout of one exchange, in milliseconds (default 5000). */
  timeoutMs?: number;
  /** SO_RCVBUF to ask for, in bytes (the kernel caps it at net.core.rmem_max). */
  recvBufferSize?: number;
  /** How many times a dump is retried after NLM_F_DUMP_INTR (default 5). */
  dumpRetries?: number;
  /**
   * Read datagrams with a fixed buffer of this many bytes instead of peeking
   * at each one's size, for requests and dumps alike. By default requests are
   * read by peeking (cheapest for small replies) and dumps on a second socket,
   * opened at the first dump, that reads with a fixed {@link DUMP_READ_BUFFER}:
   * the kernel sizes dump chunks after the largest read a socket has made (up
   * to about 32 KiB), and a peeking reader would get ~3.7 KiB chunks (30,000
   * tc classes: ~1,900 datagrams instead of ~220, each making the kernel walk
   * the classes again). A datagram longer than the buffer is an error.
   */
  readBufferSize?: number;
}

/** One message to send: header fields and payload parts (seq and NLM_F_REQUEST are added). */
export interface RequestInit {
  /** nlmsg_type */
  type: number;
  /** nlmsg_flags other than NLM_F_REQUEST */
  flags?: number;
  /** family header, then attributes */
  payload?: Buffer | readonly Buffer[];
}

/** The outcome of one message of an {@link NetlinkConnection.exchange}. */
export interface ExchangeResult {
  /** the sequence number it was sent with */
  seq: number;
  /** its nlmsg_type */
  type: number;
  /** replies for this seq other than the final ack/error/done */
  replies: NetlinkMessage[];
  /** set when the kernel refused it */
  error?: NetlinkError;
  /** an extended-ack warning on a successful ack */
  warning?: string;
  /** true when the exchange ended (another message's error) before this one was answered */
  unanswered?: boolean;
  /** NLM_F_DUMP_INTR was seen on one of its replies */
  interrupted?: boolean;
}

/** The kernel did not complete an exchange in time. Exit code 3. */
export class NetlinkTimeoutError extends SynplugError {
  constructor(what: string, ms: number) {
    super(`${what}: no answer from the kernel within ${ms} ms`, 3);
    this.name = 'NetlinkTimeoutError';
  }
}

interface Pending {
  result: ExchangeResult;
  waiting: boolean; // expects an ack/error/done
  isDump: boolean;
  ex: Exchange;
  /** replies go here instead of into result.replies (dumpEach) */
  sink?: (m: NetlinkMessage) => void;
}

/** How an exchange settles: with its results, or (a single request) with its replies or its error. */
const SETTLE_RESULTS = 0;
const SETTLE_REQUEST = 1;

interface Exchange {
  results: ExchangeResult[];
  seqs: number[];
  remaining: number;
  /** when it times out, in {@link now} milliseconds */
  deadline: number;
  /** its timeout, for the error text */
  ms: number;
  /** SETTLE_RESULTS or SETTLE_REQUEST */
  mode: number;
  /** finished: answered, timed out or failed */
  done: boolean;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  resolve: (r: any) => void;
  reject: (e: Error) => void;
}

/** A monotonic clock, milliseconds. */
const now = (): number => performance.now();

/** setTimeout's largest delay; a longer one would fire at once. */
const MAX_TIMER_MS = 0x7fffffff;

/**
 * A connection to one netlink protocol.
 *
 * All methods add NLM_F_REQUEST and assign sequence numbers. Replies are
 * matched by sequence number, so any number of exchanges may be in flight.
 */
export class NetlinkConnection {
  /** The netlink protocol (NETLINK_ROUTE = 0, NETLINK_SOCK_DIAG = 4, NETLINK_NETFILTER = 12). */
  readonly protocol: number;
  /** Warnings from successful acks (extended-ack text with errno 0), most recent last. */
  readonly warnings: string[] = [];
  private readonly transport: Transport;
  private readonly timeoutMs: number;
  private readonly dumpRetries: number;
  private readonly pending = new Map<number, Pending>();
  private seq: number;
  private closed = false;
  /**
   * Exchanges waiting for an answer, each with its deadline. One timer serves
   * them all (a timer per request costs more than the rest of a request): it
   * is armed for the earliest deadline and, when it fires, times out what is
   * due and re-arms for the next. Exchanges that end first leave it armed but
   * unref'd once none is waiting, so it never keeps the process alive alone.
   */
  private readonly live = new Set<Exchange>();
  private timer: NodeJS.Timeout | undefined;
  /** the deadline the timer is armed for (Infinity: not armed) */
  private timerAt = Infinity;
  private timerRefed = false;

  /**
   * Open a real socket for `protocol`.
   * @throws {SynplugError} the socket cannot be created (EPROTONOSUPPORT: the kernel lacks the protocol; EPERM...)
   */
  static open(protocol: number, options: ConnectionOptions = {}): NetlinkConnection {
    return new NetlinkConnection(new SocketTransport(protocol, options.recvBufferSize, options.readBufferSize), protocol, options);
  }

  constructor(transport: Transport, protocol: number, options: ConnectionOptions = {}) {
    this.transport = transport;
    this.protocol = protocol;
    this.timeoutMs = options.timeoutMs ?? 5000;
    this.dumpRetries = options.dumpRetries ?? 5;
    this.seq = (Date.now() & 0x3fffffff) >>> 0;
    transport.onDatagram((d) => this.receive(d));
    transport.onError((e) => this.failAll(e));
  }

  /**
   * Send one request (NLM_F_REQUEST | NLM_F_ACK added) and wait for its ack.
   * @returns the messages received for it before the ack (e.g. with NLM_F_ECHO)
   * @throws {NetlinkError} the kernel refused it (`requestType` names the message type)
   * @throws {NetlinkTimeoutError} no answer in time
   * @throws {NetlinkDecodeError} a malformed reply
   */
  request(msg: RequestInit, options?: { timeoutMs?: number }): Promise<NetlinkMessage[]> {
    return this.start([msg], NLM_F_ACK, options?.timeoutMs, undefined, SETTLE_REQUEST);
  }

  /**
   * Dump (NLM_F_REQUEST | NLM_F_DUMP added): every reply until NLMSG_DONE.
   * Retried when the kernel flags it NLM_F_DUMP_INTR; yields only a consistent dump.
   * @throws {NetlinkError} NLMSG_ERROR or an errno in NLMSG_DONE
   * @throws {DumpInterruptedError} still interrupted after the retries
   */
  async *dump(msg: RequestInit, options: { timeoutMs?: number } = {}): AsyncIterable<NetlinkMessage> {
    yield* await this.dumpAll(msg, options);
  }

  /**
   * {@link NetlinkConnection.dump}, collected into an array. Same errors.
   * Dumps on one connection run one after the other: the kernel runs one dump
   * per socket at a time and refuses a second with EBUSY (netlink_dump_start).
   */
  dumpAll(msg: RequestInit, options: { timeoutMs?: number } = {}): Promise<NetlinkMessage[]> {
    return this.queueDump(msg, options, undefined);
  }

  /**
   * A dump whose replies are handed to `each` as their datagrams arrive,
   * instead of being collected: a large dump (tens of thousands of classes)
   * is then decoded while it is read, and its messages need not all be held
   * at once. Each message's `payload` is a view of the received datagram.
   *
   * `attempt` starts at 1 and grows when the kernel flagged the previous run
   * NLM_F_DUMP_INTR and the dump is run again: whatever `each` kept from an
   * earlier attempt must then be dropped. A throw from `each` ends the dump
   * and rejects with that error once the kernel has finished the dump (the
   * rest is read and ignored, so the socket stays usable).
   * Same queueing and errors as {@link NetlinkConnection.dumpAll}.
   * @throws {NetlinkError} NLMSG_ERROR or an errno in NLMSG_DONE
   * @throws {DumpInterruptedError} still interrupted after the retries
   * @throws {NetlinkTimeoutError} the dump did not end in time
   */
  async dumpEach(msg: RequestInit, each: (m: NetlinkMessage, attempt: number) => void, options: { timeoutMs?: number } = {}): Promise<void> {
    await this.queueDump(msg, options, each);
  }

  private queueDump(msg: RequestInit, options: { timeoutMs?: number }, each: ((m: NetlinkMessage, attempt: number) => void) | undefined): Promise<NetlinkMessage[]> {
    const run = this.dumpChain.then(() => this.dumpNow(msg, options, each));
    this.dumpChain = run.catch(() => undefined);
    return run;
  }

  private dumpChain: Promise<unknown> = Promise.resolve();

  private async dumpNow(msg: RequestInit, options: { timeoutMs?: number }, each: ((m: NetlinkMessage, attempt: number) => void) | undefined): Promise<NetlinkMessage[]> {
    // A whole dump must fit in one timeout; a large one (tens of thousands of
    // objects) on a busy machine takes seconds, so dumps get at least 30 s.
    const timeoutMs = options.timeoutMs ?? Math.max(this.timeoutMs, 30_000);
    for (let attempt = 1; ; attempt++) {
      // A throw from `each` is kept until NLMSG_DONE: the kernel's dump is read
      // to its end, so that the next dump on this socket is not refused (EBUSY).
      let failed = false;
      let failure: unknown;
      const sink = each && ((m: NetlinkMessage) => {
        if (failed) return;
        try { each(m, attempt); } catch (e) { failed = true; failure = e; }
      });
      const [r] = await this.start([msg], NLM_F_DUMP, timeoutMs, sink, SETTLE_RESULTS) as ExchangeResult[];
      if (failed) throw failure;
      if (r.error) throw r.error;
      if (!r.interrupted) return r.replies;
      if (attempt > this.dumpRetries) throw new DumpInterruptedError(messageTypeName(this.protocol, msg.type), attempt);
    }
  }

  /**
   * Send several messages in one datagram and wait for each that asks for an
   * answer (NLM_F_ACK: ack or error; NLM_F_DUMP: NLMSG_DONE). Kernel errors do
   * not reject: they are in the per-message results. An error for a message
   * that asked for no ack ends the exchange at once (the kernel stopped there);
   * the messages still waiting are marked `unanswered`.
   * @returns one result per message, in order
   * @throws {NetlinkTimeoutError} an awaited answer did not come in time
   * @throws {NetlinkDecodeError} a malformed reply
   * @throws {SynplugError} the connection is closed or the socket failed
   */
  exchange(msgs: readonly RequestInit[], options: { timeoutMs?: number } = {}): Promise<ExchangeResult[]> {
    return this.start(msgs, 0, options.timeoutMs, undefined, SETTLE_RESULTS);
  }

  /**
   * Send `msgs` in one datagram (each with `extraFlags` and NLM_F_REQUEST
   * added) and register what waits for an answer. The datagram is encoded
   * into one buffer of its final size.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private start(msgs: readonly RequestInit[], extraFlags: number, timeoutMs: number | undefined, sink: ((m: NetlinkMessage) => void) | undefined, mode: number): Promise<any> {
    if (this.closed) return Promise.reject(new SynplugError('netlink connection is closed', 3));
    return new Promise((resolve, reject) => {
      const n = msgs.length;
      const ms = timeoutMs ?? this.timeoutMs;
      const ex: Exchange = { results: new Array<ExchangeResult>(n), seqs: new Array<number>(n), remaining: 0, deadline: 0, ms, mode, done: false, resolve, reject };
      let datagram: Buffer;
      try {
        let size = 0;
        for (let i = 0; i < n; i++) size += align4(messageLength(msgs[i].payload));
        datagram = Buffer.allocUnsafe(size);
        let off = 0;
        for (let i = 0; i < n; i++) {
          const len = messageLength(msgs[i].payload);
          this.add(ex, i, datagram, off, len, msgs[i], extraFlags, sink);
          off += align4(len);
        }
      } catch (e) {
        // a payload that cannot be encoded: nothing was sent, forget what was registered
        for (const seq of ex.seqs) if (seq !== undefined) this.pending.delete(seq);
        throw e;
      }
      if (ex.remaining === 0) {
        // Nothing to wait for: fire and forget.
        for (let i = 0; i < n; i++) this.pending.delete(ex.seqs[i]);
        ex.done = true;
        this.transport.send(datagram);
        resolve(ex.results);
        return;
      }
      ex.deadline = now() + ms;
      this.watch(ex);
      try {
        if (extraFlags === NLM_F_DUMP && this.transport.sendDump) this.transport.sendDump(datagram);
        else this.transport.send(datagram);
      } catch (e) {
        this.finish(ex);
        reject(socketError(e, this.protocol));
      }
    });
  }

  /** Encode message `i` of `ex` at `off` and register it under a new seq. */
  private add(ex: Exchange, i: number, datagram: Buffer, off: number, len: number, m: RequestInit, extraFlags: number, sink: ((m: NetlinkMessage) => void) | undefined): void {
    const seq = this.nextSeq();
    const flags = (m.flags ?? 0) | extraFlags | NLM_F_REQUEST;
    writeMessage(datagram, off, len, m.type, flags, seq, 0, m.payload);
    const result: ExchangeResult = { seq, type: m.type, replies: [] };
    const isDump = (flags & NLM_F_DUMP) === NLM_F_DUMP && this.isGet(m.type);
    const waiting = isDump || (flags & NLM_F_ACK) !== 0;
    if (waiting) ex.remaining++;
    ex.results[i] = result;
    ex.seqs[i] = seq;
    this.pending.set(seq, { result, waiting, isDump, ex, sink });
  }

  /** Track `ex` until it ends, arming (or ref'ing) the shared timer for its deadline. */
  private watch(ex: Exchange): void {
    this.live.add(ex);
    if (ex.deadline < this.timerAt) this.arm(ex.deadline);
    else if (!this.timerRefed) { this.timer!.ref(); this.timerRefed = true; }
  }

  private arm(deadline: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timerAt = deadline;
    this.timer = setTimeout(this.expire, Math.min(MAX_TIMER_MS, Math.max(1, Math.ceil(deadline - now()))));
    this.timerRefed = true;
  }

  /** The timer fired: time out every exchange that is due, re-arm for the next deadline. */
  private readonly expire = (): void => {
    this.timer = undefined;
    this.timerAt = Infinity;
    this.timerRefed = false;
    // Node's timers count from the loop's cached time, so the timer may fire a
    // little before the deadline by this clock: within 1 ms counts as due.
    const t = now() + 1;
    let next = Infinity;
    const due: Exchange[] = [];
    for (const ex of this.live) {
      if (ex.deadline <= t) due.push(ex);
      else if (ex.deadline < next) next = ex.deadline;
    }
    // several due at once (the loop was busy): the earliest deadline first, as separate timers would
    if (due.length > 1) due.sort((a, b) => a.deadline - b.deadline);
    for (const ex of due) this.timeOut(ex);
    if (next !== Infinity) this.arm(next);
  };

  private timeOut(ex: Exchange): void {
    this.finish(ex);
    const first = ex.results.find((r) => r.error === undefined && !r.unanswered);
    ex.reject(new NetlinkTimeoutError(messageTypeName(this.protocol, first?.type ?? ex.results[0].type), ex.ms));
  }

  /** Close the socket; exchanges in flight reject. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.failAll(new SynplugError('netlink connection closed', 3));
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
    this.transport.close();
  }

  private isGet(type: number): boolean {
    // On every protocol here, NLM_F_DUMP only makes sense on GET requests; a NEW
    // request reuses the same bits as NLM_F_REPLACE|NLM_F_EXCL. rtnetlink GETs are
    // (type - 16) % 4 === 2; others (sock_diag, nfnetlink) treat the flag as dump.
    if (this.protocol === 0 && type >= 16) return (type - 16) % 4 === 2;
    return true;
  }

  private nextSeq(): number {
    this.seq = (this.seq + 1) >>> 0;
    if (this.seq === 0) this.seq = 1;
    return this.seq;
  }

  /** End `ex`: forget its seqs, stop watching its deadline. Idempotent. */
  private finish(ex: Exchange): void {
    if (ex.done) return;
    ex.done = true;
    for (const s of ex.seqs) this.pending.delete(s);
    if (this.live.delete(ex) && this.live.size === 0 && this.timerRefed) {
      this.timer!.unref();
      this.timerRefed = false;
    }
  }

  /** Finish `ex` and hand over its outcome. */
  private settle(ex: Exchange): void {
    this.finish(ex);
    if (ex.mode === SETTLE_REQUEST) {
      const r = ex.results[0];
      if (r.error) ex.reject(r.error);
      else ex.resolve(r.replies);
    } else {
      ex.resolve(ex.results);
    }
  }

  private failAll(err: Error): void {
    const exs = new Set<Exchange>();
    for (const p of this.pending.values()) exs.add(p.ex);
    for (const ex of exs) { this.finish(ex); ex.reject(socketError(err, this.protocol)); }
  }

  private receive(datagram: Buffer): void {
    // Fast path: a datagram holding one plain ack (NLMSG_ERROR with error 0 and
    // no extended-ack TLVs), the answer to most requests. It is read in place;
    // everything else goes through parseMessages and handle().
    const n = datagram.length;
    if (n >= NLMSG_HDRLEN + 20) {
      const len = datagram.readUInt32LE(0);
      if (len >= NLMSG_HDRLEN + 20 && len <= n && align4(len) >= n && datagram.readUInt16LE(4) === NLMSG_ERROR
        && (datagram.readUInt16LE(6) & NLM_F_ACK_TLVS) === 0 && datagram.readInt32LE(NLMSG_HDRLEN) === 0) {
        const p = this.pending.get(datagram.readUInt32LE(8));
        if (p) {
          if (datagram.readUInt16LE(6) & NLM_F_DUMP_INTR) p.result.interrupted = true;
          this.complete(p);
        }
        return;
      }
    }
    let msgs: NetlinkMessage[];
    try {
      msgs = parseMessages(datagram);
    } catch (e) {
      this.failAll(e as Error);
      return;
    }
    for (const m of msgs) {
      const p = this.pending.get(m.seq);
      if (!p) continue; // not ours, or a late reply to a timed-out exchange
      try {
        this.handle(p, m);
      } catch (e) {
        this.finish(p.ex);
        p.ex.reject(e as Error);
      }
    }
  }

  private handle(p: Pending, m: NetlinkMessage): void {
    const r = p.result;
    if (m.flags & NLM_F_DUMP_INTR) r.interrupted = true;
    if (m.type === NLMSG_ERROR) {
      const er = parseErrorReply(m);
      if (er.errno === 0) {
        if (er.extAckMessage) { r.warning = er.extAckMessage; this.warnings.push(er.extAckMessage); }
        this.complete(p);
      } else {
        r.error = errorFromReply(er, messageTypeName(this.protocol, r.type));
        if (!p.waiting) {
          // The kernel stopped processing here: the others will never be answered.
          for (const other of p.ex.results) if (other !== r && other.error === undefined) other.unanswered = true;
          this.settle(p.ex);
          return;
        }
        this.complete(p);
      }
    } else if (m.type === NLMSG_DONE && p.isDump) {
      const errno = doneErrno(m);
      if (errno !== 0) r.error = new NetlinkError({ errno, requestType: messageTypeName(this.protocol, r.type) });
      this.complete(p);
    } else if (m.type === NLMSG_NOOP) {
      // ignore
    } else if (m.type === NLMSG_OVERRUN) {
      throw new NetlinkDecodeError('NLMSG_OVERRUN: the kernel lost data for this request', m.offset);
    } else if (p.sink) {
      p.sink(m);
    } else {
      r.replies.push(m);
    }
  }

  private complete(p: Pending): void {
    if (!p.waiting) return;
    p.waiting = false;
    this.pending.delete(p.result.seq);
    if (--p.ex.remaining === 0) this.settle(p.ex);
  }
}

function socketError(e: unknown, protocol: number): Error {
  if (e instanceof SynplugError) return e;
  const err = e as { code?: string; errno?: number; message?: string; syscall?: string };
  if (typeof err.errno === 'number' && err.code) {
    const hint = err.code === 'ENOBUFS' ? ' (the socket receive buffer overflowed; replies were lost)'
      : err.code === 'EPERM' || err.code === 'EACCES' ? ' (needs CAP_NET_ADMIN: run as root)'
        : err.code === 'EPROTONOSUPPORT' ? ` (this kernel has no netlink protocol ${protocol})` : '';
    return new SynplugError(`netlink ${err.syscall ?? 'socket'} failed: ${err.code}${hint}`, 3, { cause: e });
  }
  return new SynplugError(`netlink socket failed: ${err.message ?? String(e)}`, 3, { cause: e });
}

interface RawSocket {
  on(ev: 'message', cb: (msg: Buffer) => void): void;
  on(ev: 'error', cb: (err: Error) => void): void;
  on(ev: 'truncatedMessage', cb: (msg: Buffer) => void): void;
  send(msg: Uint8Array, options?: object, cb?: (err?: Error) => void): void;
  close(): void;
  address(): { port: number };
  setRecvBufferSize(n: number): void;
}

let RawNetlinkSocketCtor: (new (protocol: number, options?: object) => RawSocket) | undefined;

function rawSocketClass(): new (protocol: number, options?: object) => RawSocket {
  if (!RawNetlinkSocketCtor) {
    // Load only the raw socket module of the `netlink` package (not its rtnetlink/genl
    // helpers, which we do not use): it is the only native piece we depend on.
    const require = createRequire(import.meta.url);
    RawNetlinkSocketCtor = (require('netlink/dist/raw.js') as { RawNetlinkSocket: new (p: number, o?: object) => RawSocket }).RawNetlinkSocket;
  }
  return RawNetlinkSocketCtor;
}

/**
 * The fixed read buffer of a {@link SocketTransport}'s dump socket, bytes.
 * The kernel fills dump datagrams up to about 32 KiB for a reader this large
 * (netlink_recvmsg caps max_recvmsg_len at SKB_WITH_OVERHEAD(32768)); larger
 * ones come only from dumps whose every message is larger (min_dump_alloc:
 * links with many VFs), which the margin covers.
 */
export const DUMP_READ_BUFFER = 65536;

/**
 * The real transport: a `RawNetlinkSocket` of the `netlink` npm package
 * (socket(AF_NETLINK, SOCK_RAW, protocol), bound to a free port id).
 *
 * Requests go out on a socket that reads each reply by peeking at its size
 * first (the package's default: no buffer larger than the reply is
 * allocated or cleared, which keeps a round trip cheap). Dumps go out on a
 * second socket, opened at the first dump, that reads with a fixed
 * {@link DUMP_READ_BUFFER}: the kernel sizes a dump's chunks after the
 * largest read the socket has made, so a peeking socket would get them in
 * ~3.7 KiB pieces, and for tc classes every piece costs the kernel a walk
 * over the classes already sent. Both sockets deliver to the same callback;
 * replies are matched by sequence number. With `readBufferSize`, one socket
 * reads everything with that buffer.
 */
export class SocketTransport implements Transport {
  /** the port id of the request socket */
  readonly portId: number;
  private readonly sock: RawSocket;
  private dumpSock: RawSocket | undefined;
  private errorCb: (err: Error) => void = () => {};
  private datagramCb: ((datagram: Buffer) => void) | undefined;
  private closed = false;

  /**
   * @param protocol netlink protocol number
   * @param recvBufferSize SO_RCVBUF in bytes, optional (both sockets)
   * @param readBufferSize read with a fixed buffer of this size instead of peeking, and dump on the same socket (see ConnectionOptions)
   * @throws {SynplugError} the socket cannot be created or bound
   */
  constructor(private readonly protocol: number, private readonly recvBufferSize?: number, private readonly readBufferSize?: number) {
    this.sock = this.open(readBufferSize);
    this.portId = this.sock.address().port;
  }

  private open(fixedRead: number | undefined): RawSocket {
    const options: Record<string, unknown> = {};
    if (this.recvBufferSize) options.recvBufferSize = this.recvBufferSize;
    if (fixedRead) { options.messagePeeking = false; options.msgBufferSize = fixedRead; }
    let sock: RawSocket;
    try {
      sock = new (rawSocketClass())(this.protocol, options);
    } catch (e) {
      throw socketError(e, this.protocol);
    }
    sock.on('error', (e) => this.errorCb(e));
    sock.on('truncatedMessage', (_m: Buffer) => this.errorCb(new SynplugError(`a netlink reply was longer than the ${fixedRead}-byte read buffer and was cut`, 3)));
    if (this.datagramCb) sock.on('message', this.datagramCb);
    return sock;
  }

  send(datagram: Buffer): void {
    this.sock.send(datagram, undefined, this.sent);
  }
  /**
   * Send a dump request on the dump socket (opened now if need be).
   * @throws {SynplugError} the dump socket cannot be created
   */
  sendDump(datagram: Buffer): void {
    if (this.readBufferSize || this.closed) { this.send(datagram); return; }
    this.dumpSock ??= this.open(DUMP_READ_BUFFER);
    this.dumpSock.send(datagram, undefined, this.sent);
  }
  /** the send completion callback, one for every send */
  private readonly sent = (err?: Error): void => { if (err) this.errorCb(err); };
  onDatagram(cb: (datagram: Buffer) => void): void {
    this.datagramCb = cb;
    this.sock.on('message', cb);
    this.dumpSock?.on('message', cb);
  }
  onError(cb: (err: Error) => void): void {
    this.errorCb = cb;
  }
  close(): void {
    this.closed = true;
    this.sock.close();
    this.dumpSock?.close();
  }
}

/**
 * A transport for unit tests: records what is sent and answers with scripted
 * datagrams. A reply script gets the sent datagram and returns the datagrams
 * to deliver; their sequence numbers are rewritten to the request's
 * (the first message's seq, plus its position for multi-message requests)
 * unless `keepSeq` is set.
 */
export class FakeTransport implements Transport {
  readonly portId = 4242;
  /** every datagram sent, in order */
  readonly sent: Buffer[] = [];
  private cb: (d: Buffer) => void = () => {};
  private errCb: (e: Error) => void = () => {};
  private readonly script: Array<(sent: Buffer) => Buffer[]>;
  private readonly keepSeq: boolean;
  closed = false;

  /**
   * @param script one function per expected send, answering it; or an array of
   *   reply datagram lists, one per send, replayed in order
   */
  constructor(script: Array<((sent: Buffer) => Buffer[]) | Buffer[]> = [], options: { keepSeq?: boolean } = {}) {
    this.script = script.map((s) => (typeof s === 'function' ? s : () => s));
    this.keepSeq = options.keepSeq ?? false;
  }
  send(datagram: Buffer): void {
    this.sent.push(Buffer.from(datagram));
    const step = this.script.shift();
    if (!step) return; // unanswered: the caller's timeout fires
    const seqs = parseMessages(datagram).map((m) => m.seq);
    const replies = step(datagram).map((d) => (this.keepSeq ? d : rewriteSeq(d, seqs)));
    queueMicrotask(() => { for (const d of replies) this.cb(d); });
  }
  onDatagram(cb: (datagram: Buffer) => void): void { this.cb = cb; }
  onError(cb: (err: Error) => void): void { this.errCb = cb; }
  /** Inject a socket error, as the kernel would (e.g. ENOBUFS). */
  fail(err: Error): void { this.errCb(err); }
  close(): void { this.closed = true; }
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
