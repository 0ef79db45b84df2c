/**
 * A netlink connection: sequence numbers, requests awaiting their ack,
 * dumps until NLMSG_DONE, several requests in flight at once, a timeout per
 * exchange. It runs over a {@link Transport}: the real socket
 * ({@link SocketTransport}, over the C library through koffi: transport.ts)
 * or a test double (`FakeTransport`, in testing.ts: `synplug/netlink/testing`).
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { NetlinkError, NetlinkDecodeError, DumpInterruptedError, SynplugError, UsageError, errnoName } from './errors.js';
import {
  writeMessage,
  messageLength,
  parseMessages,
  parseErrorReply,
  errorFromReply,
  doneErrno,
  NLMSG_ERROR,
  NLMSG_DONE,
  NLMSG_NOOP,
  NLMSG_OVERRUN,
  NLM_F_REQUEST,
  NLM_F_ACK,
  NLM_F_DUMP,
  NLM_F_DUMP_INTR,
  NLM_F_ACK_TLVS,
  NLMSG_HDRLEN,
  type NetlinkMessage,
} from './message.js';
import { align4 } from './attributes.js';
import { messageTypeName, requestKind } from './protocols.js';
import { SocketTransport, protocolLabel, type Transport } from './transport.js';
import { SocketError, socketErrorCategory } from './libc.js';
import { defaultNetns } from './netns.js';

export { SocketTransport, DUMP_READ_BUFFER, protocolLabel, type SocketOptions, type Transport } from './transport.js';
/**
 * @deprecated import it from `synplug/netlink/testing` (src/netlink/testing.ts);
 * re-exported here for older test files only, and not part of the package's
 * root or `synplug/netlink` exports.
 */
export { FakeTransport } from './testing.js';

/** An extended-ack warning: the kernel's NLMSGERR_ATTR_MSG on a successful ack (errno 0). */
export interface NetlinkWarning {
  /** the kernel's text, e.g. "HTB: quantum of class 10001 is big. Consider r2q change." */
  message: string;
  /** the request's message type name, e.g. 'RTM_NEWTCLASS' */
  requestType: string;
  /** NLMSGERR_ATTR_OFFS, when the kernel sent one */
  offset?: number;
}

let defaultWarningHandler: ((w: NetlinkWarning) => void) | undefined;

/**
 * Set the process-wide receiver of extended-ack warnings, for every
 * connection opened without its own `onWarning` (the CLI prints them on
 * stderr). Undefined: none (warnings are still kept in each connection's
 * `warnings` and in {@link ExchangeResult.warning}).
 */
export function setDefaultWarningHandler(handler: ((w: NetlinkWarning) => void) | undefined): void {
  defaultWarningHandler = handler;
}

/** Options of {@link NetlinkConnection}. */
export interface ConnectionOptions {
  /** Default timeout of one exchange, in milliseconds (default 5000). */
  timeoutMs?: number;
  /**
   * Receive buffer to ask for, in bytes: SO_RCVBUFFORCE when the process has
   * CAP_NET_ADMIN (not capped), else SO_RCVBUF (capped at net.core.rmem_max).
   */
  recvBufferSize?: number;
  /** How many times a dump is retried after NLM_F_DUMP_INTR (default 5). */
  dumpRetries?: number;
  /**
   * The socket's read buffer, bytes (default {@link DUMP_READ_BUFFER}, 64 KiB):
   * the kernel sizes dump chunks after the largest read a socket has made (up
   * to about 32 KiB); a smaller buffer gets smaller chunks (30,000 tc classes:
   * ~1,900 datagrams at 4 KiB instead of ~220, each making the kernel walk the
   * classes again). A longer datagram is reported as an error.
   */
  readBufferSize?: number;
  /**
   * Open the socket in this network namespace: a NAME under /run/netns (as
   * `ip netns add` makes) or a PATH such as /proc/PID/ns/net. Default: the
   * process-wide default (`setDefaultNetns`, or the SYNPLUG_NETNS
   * environment variable), else the current namespace.
   */
  netns?: string;
  /** Set NETLINK_EXT_ACK and NETLINK_CAP_ACK (default true). */
  extendedAck?: boolean;
  /** Set NETLINK_GET_STRICT_CHK where the kernel accepts it (default true). */
  strictCheck?: boolean;
  /**
   * Receives each extended-ack warning (errno 0 with NLMSGERR_ATTR_MSG).
   * Default: the handler of {@link setDefaultWarningHandler}, if any.
   */
  onWarning?: (w: NetlinkWarning) => void;
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
    super(`${what}: no answer from the kernel within ${ms} ms`, 'kernel');
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
  /** replies go here, in place, instead (dumpEach in place): type, buffer, payload start and end */
  raw?: InPlaceSink;
}

/** An in-place dumpEach receiver, after the connection's wrapping (attempt bound). */
type InPlaceSink = (type: number, buf: Buffer, start: number, end: number) => void;

/** Options of a dump: `timeoutMs` for the whole dump (default the connection's, at least 30 s). */
export interface DumpOptions {
  timeoutMs?: number;
}

/**
 * The receiver of an in-place {@link NetlinkConnection.dumpEach}: one reply
 * message, as its type and its payload `buf[start, end)`; `base` is the
 * absolute offset of `buf[0]` for error offsets (0: `buf` is the datagram).
 * `buf` is lent for the call only: it is the socket's read buffer, which the
 * next read overwrites.
 */
export type InPlaceEach = (type: number, buf: Buffer, start: number, end: number, base: number, attempt: number) => void;

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
  // biome-ignore lint/suspicious/noExplicitAny: one slot serves request (messages), exchange (results) and dump (void) answers; start() types each caller's promise
  resolve: (r: any) => void;
  reject: (e: Error) => void;
}

/** A monotonic clock, milliseconds. */
const now = (): number => performance.now();

/** setTimeout's largest delay; a longer one would fire at once. */
const MAX_TIMER_MS = 0x7fffffff;

/**
 * A kernel this process talks to instead of the real one: the fault
 * campaign's in-memory model (test/helpers/fake-kernel.ts), which must reach
 * every connection a guard command opens and answer what the guard reads
 * of the kernel outside netlink. Internal: not exported from the package
 * (src/netlink/index.ts does not name it).
 */
export interface KernelDouble {
  /** the transport {@link NetlinkConnection.open} uses instead of a socket (the options are checked first, as for a socket) */
  transport(protocol: number, options: ConnectionOptions): Transport;
  /** whether a module is loaded (what /sys/module/NAME tells of the real kernel), e.g. `cls_fw` */
  moduleLoaded(name: string): boolean;
  /**
   * What /proc/thread-self/net/FILE reads in the double's namespace, in the kernel's format (`netfilter/nfnetlink_queue`:
   * the bound queues; `netlink`: the netlink sockets), or undefined when the double does not model that file.
   */
  procNet?(file: string): string | undefined;
}

let double: KernelDouble | undefined;

/** Talk to `k` instead of the kernel from now on (undefined: the kernel again). Internal, for tests. */
export function setKernelDouble(k: KernelDouble | undefined): void {
  double = k;
}

/** The {@link KernelDouble} in use, if any. Internal, for tests. */
export function kernelDouble(): KernelDouble | undefined {
  return double;
}

/**
 * A connection to one netlink protocol.
 *
 * All methods add NLM_F_REQUEST and assign sequence numbers. Replies are
 * matched by sequence number, so any number of exchanges may be in flight.
 */
export class NetlinkConnection {
  /** The netlink protocol (NETLINK_ROUTE = 0, NETLINK_SOCK_DIAG = 4, NETLINK_NETFILTER = 12). */
  readonly protocol: number;
  /** Warnings from successful acks (extended-ack text with errno 0), most recent last; the last 100 are kept. */
  readonly warnings: string[] = [];
  private readonly transport: Transport;
  private readonly onWarning: ((w: NetlinkWarning) => void) | undefined;
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
   * Open a real socket for `protocol` ({@link SocketTransport}: CLOEXEC,
   * NETLINK_EXT_ACK, NETLINK_CAP_ACK and NETLINK_GET_STRICT_CHK where the
   * kernel accepts them), in `options.netns` or the process-wide default
   * namespace when one is set.
   * @param protocol netlink protocol number (NETLINK_ROUTE 0, NETLINK_SOCK_DIAG 4, NETLINK_NETFILTER 12, any other)
   * @throws {SocketError} the socket cannot be created: EPROTONOSUPPORT/EAFNOSUPPORT (category `missing-module`, naming the protocol), EPERM/EACCES (`permission`), others (`kernel`)
   * @throws {UsageError} `protocol` is not an integer 0-31 (MAX_LINKS); `options` is not an object, has an option it does not know or a value of another type ({@link CONNECTION_OPTION_KINDS}); the namespace does not exist or is not a network namespace
   * @throws {LibcError} koffi, or a function of the C library, cannot be loaded
   */
  static open(protocol: number, options: ConnectionOptions = {}): NetlinkConnection {
    checkConnectionOptions(options);
    // MAX_LINKS (netlink.h's protocol numbers are 0..31): anything else is a caller's mistake, not a kernel's lack
    if (!Number.isInteger(protocol) || protocol < 0 || protocol > 31) {
      throw new UsageError(
        `netlink protocol ${String(protocol)} is not a protocol number (an integer 0-31, e.g. NETLINK_ROUTE 0, NETLINK_SOCK_DIAG 4, NETLINK_NETFILTER 12)`,
      );
    }
    if (double) return new NetlinkConnection(double.transport(protocol, options), protocol, options);
    const transport = new SocketTransport(protocol, {
      recvBufferSize: options.recvBufferSize,
      readBufferSize: options.readBufferSize,
      extendedAck: options.extendedAck,
      strictCheck: options.strictCheck,
      netns: options.netns ?? defaultNetns(),
    });
    return new NetlinkConnection(transport, protocol, options);
  }

  /**
   * A connection over any transport (a {@link SocketTransport}, or a test double).
   * @param protocol the netlink protocol the transport speaks
   */
  constructor(transport: Transport, protocol: number, options: ConnectionOptions = {}) {
    this.transport = transport;
    this.protocol = protocol;
    this.timeoutMs = options.timeoutMs ?? 5000;
    this.dumpRetries = options.dumpRetries ?? 5;
    this.onWarning = options.onWarning;
    this.seq = (Date.now() & 0x3fffffff) >>> 0;
    transport.onDatagram((d) => this.receive(d));
    transport.onError((e) => this.failAll(e));
    transport.setInterest?.(() => this.live.size > 0);
  }

  /** Whether the kernel sends its error text on this connection (NETLINK_EXT_ACK accepted). */
  get extendedAck(): boolean {
    return this.transport.extendedAck ?? false;
  }

  /**
   * Whether the kernel checks dump requests strictly and filters them by their
   * header (NETLINK_GET_STRICT_CHK accepted, Linux 4.20+): e.g. RTM_GETADDR
   * for one ifindex returns only that device's addresses. When false, dumps
   * return everything and callers filter (they always do too).
   */
  get strictCheck(): boolean {
    return this.transport.strictCheck ?? false;
  }

  /** The transport under this connection. */
  get socket(): Transport {
    return this.transport;
  }

  /**
   * Send one request (NLM_F_REQUEST | NLM_F_ACK added) and wait for its ack.
   * @returns the messages received for it before the ack (e.g. with NLM_F_ECHO)
   * @throws {NetlinkError} the kernel refused it (`requestType` names the message type)
   * @throws {NetlinkTimeoutError} no answer in time
   * @throws {NetlinkDecodeError} a malformed reply
   * @throws {UsageError} `msg` is not a {@link RequestInit} (an object with an integer `type` 0-65535, `flags` a u16, `payload` a Buffer or an array of them)
   */
  request(msg: RequestInit, options?: { timeoutMs?: number }): Promise<NetlinkMessage[]> {
    return this.start([msg], NLM_F_ACK, options?.timeoutMs, undefined, SETTLE_REQUEST);
  }

  /**
   * A dump (NLM_F_REQUEST | NLM_F_DUMP added): every reply until NLMSG_DONE,
   * collected ({@link NetlinkConnection.dumpEach} into an array). Retried
   * when the kernel flags it NLM_F_DUMP_INTR: only a consistent dump is
   * returned. Dumps on one connection run one after the other: the kernel
   * runs one dump per socket at a time and refuses a second with EBUSY
   * (netlink_dump_start).
   * @throws {NetlinkError} NLMSG_ERROR or an errno in NLMSG_DONE
   * @throws {DumpInterruptedError} still interrupted after the retries
   * @throws {NetlinkTimeoutError} the dump did not end in time
   */
  dumpAll(msg: RequestInit, options: DumpOptions = {}): Promise<NetlinkMessage[]> {
    return this.queueDump(msg, options, undefined);
  }

  /**
   * A dump whose replies are handed to `each` as their datagrams arrive,
   * instead of being collected: a large dump (tens of thousands of classes)
   * is then decoded while it is read, and its messages need not all be held
   * at once. Each message's `payload` is a view of the received datagram.
   *
   * **In place** (`{ inPlace: true }`, `each` an {@link InPlaceEach}): `each`
   * gets each reply's type and payload where it lies in the received
   * datagram, lent for the call only. For decoders that take a buffer and
   * offsets and keep nothing of the bytes (tc's class listing): a
   * 30,000-class dump then makes no `NetlinkMessage` and no Buffer view per
   * class, and no copy of each datagram. Control messages (the ack,
   * NLMSG_DONE, errors) are handled the same way in both modes.
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
  dumpEach(msg: RequestInit, each: (m: NetlinkMessage, attempt: number) => void, options?: DumpOptions & { inPlace?: false }): Promise<void>;
  dumpEach(msg: RequestInit, each: InPlaceEach, options: DumpOptions & { inPlace: true }): Promise<void>;
  async dumpEach(
    msg: RequestInit,
    each: ((m: NetlinkMessage, attempt: number) => void) | InPlaceEach,
    options: DumpOptions & { inPlace?: boolean } = {},
  ): Promise<void> {
    if (options.inPlace === true) await this.queueDump(msg, options, undefined, each as InPlaceEach);
    else await this.queueDump(msg, options, each as (m: NetlinkMessage, attempt: number) => void);
  }

  private queueDump(
    msg: RequestInit,
    options: DumpOptions,
    each: ((m: NetlinkMessage, attempt: number) => void) | undefined,
    inPlace?: InPlaceEach,
  ): Promise<NetlinkMessage[]> {
    const run = this.dumpChain.then(() => this.dumpNow(msg, options, each, inPlace));
    this.dumpChain = run.catch(() => undefined);
    return run;
  }

  private dumpChain: Promise<unknown> = Promise.resolve();

  private async dumpNow(
    msg: RequestInit,
    options: DumpOptions,
    each: ((m: NetlinkMessage, attempt: number) => void) | undefined,
    inPlace?: InPlaceEach,
  ): Promise<NetlinkMessage[]> {
    // A whole dump must fit in one timeout; a large one (tens of thousands of
    // objects) on a busy machine takes seconds, so dumps get at least 30 s.
    const timeoutMs = options.timeoutMs ?? Math.max(this.timeoutMs, 30_000);
    for (let attempt = 1; ; attempt++) {
      // A throw from `each` is kept until NLMSG_DONE: the kernel's dump is read
      // to its end, so that the next dump on this socket is not refused (EBUSY).
      let failed = false;
      let failure: unknown;
      const sink =
        each &&
        ((m: NetlinkMessage) => {
          if (failed) return;
          try {
            each(m, attempt);
          } catch (e) {
            failed = true;
            failure = e;
          }
        });
      const raw: InPlaceSink | undefined =
        inPlace &&
        ((type: number, buf: Buffer, start: number, end: number) => {
          if (failed) return;
          try {
            inPlace(type, buf, start, end, 0, attempt);
          } catch (e) {
            failed = true;
            failure = e;
          }
        });
      const [r] = (await this.start([msg], NLM_F_DUMP, timeoutMs, sink, SETTLE_RESULTS, raw)) as ExchangeResult[];
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
  private start(
    msgs: readonly RequestInit[],
    extraFlags: number,
    timeoutMs: number | undefined,
    sink: ((m: NetlinkMessage) => void) | undefined,
    mode: number,
    raw?: InPlaceSink,
    // biome-ignore lint/suspicious/noExplicitAny: resolved with what the mode collects; request/exchange/dump each narrow it to their own result type
  ): Promise<any> {
    if (this.closed) return Promise.reject(new SynplugError('netlink connection is closed', 'kernel'));
    return new Promise((resolve, reject) => {
      const n = msgs.length;
      const ms = timeoutMs ?? this.timeoutMs;
      const ex: Exchange = {
        results: new Array<ExchangeResult>(n),
        seqs: new Array<number>(n),
        remaining: 0,
        deadline: 0,
        ms,
        mode,
        done: false,
        resolve,
        reject,
      };
      let datagram: Buffer;
      try {
        for (const m of msgs) checkRequestInit(m);
        let size = 0;
        for (let i = 0; i < n; i++) size += align4(messageLength(msgs[i].payload));
        datagram = Buffer.allocUnsafe(size);
        let off = 0;
        for (let i = 0; i < n; i++) {
          const len = messageLength(msgs[i].payload);
          this.add(ex, i, datagram, off, len, msgs[i], extraFlags, sink, raw);
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
  private add(
    ex: Exchange,
    i: number,
    datagram: Buffer,
    off: number,
    len: number,
    m: RequestInit,
    extraFlags: number,
    sink: ((m: NetlinkMessage) => void) | undefined,
    raw?: InPlaceSink,
  ): void {
    const seq = this.nextSeq();
    const flags = (m.flags ?? 0) | extraFlags | NLM_F_REQUEST;
    writeMessage(datagram, off, len, m.type, flags, seq, 0, m.payload);
    const result: ExchangeResult = { seq, type: m.type, replies: [] };
    const isDump = (flags & NLM_F_DUMP) === NLM_F_DUMP && this.isGet(m.type);
    const waiting = isDump || (flags & NLM_F_ACK) !== 0;
    if (waiting) ex.remaining++;
    ex.results[i] = result;
    ex.seqs[i] = seq;
    this.pending.set(seq, raw ? { result, waiting, isDump, ex, sink, raw } : { result, waiting, isDump, ex, sink });
  }

  /** Track `ex` until it ends, arming (or ref'ing) the shared timer for its deadline. */
  private watch(ex: Exchange): void {
    this.live.add(ex);
    if (ex.deadline < this.timerAt) this.arm(ex.deadline);
    else if (!this.timerRefed) {
      this.timer!.ref();
      this.timerRefed = true;
    }
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
    this.failAll(new SynplugError('netlink connection closed', 'kernel'));
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
    this.transport.close();
  }

  /**
   * Whether NLM_F_DUMP on a message of this type means a dump: NEW and DEL
   * requests reuse the bits (NLM_F_REPLACE|NLM_F_EXCL, NLM_F_NONREC|NLM_F_BULK).
   * The protocol registry says which types are GET requests; a type it does
   * not classify ('other') keeps the flag's dump meaning.
   */
  private isGet(type: number): boolean {
    const kind = requestKind(this.protocol, type);
    return kind === 'get' || kind === 'other';
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
    for (const ex of exs) {
      this.finish(ex);
      ex.reject(socketError(err, this.protocol));
    }
  }

  private receive(datagram: Buffer): void {
    // Fast path: a datagram holding one plain ack (NLMSG_ERROR with error 0 and
    // no extended-ack TLVs), the answer to most requests. It is read in place;
    // everything else goes through parseMessages and handle().
    const n = datagram.length;
    if (n >= NLMSG_HDRLEN + 20) {
      const len = datagram.readUInt32LE(0);
      if (
        len >= NLMSG_HDRLEN + 20 &&
        len <= n &&
        align4(len) >= n &&
        datagram.readUInt16LE(4) === NLMSG_ERROR &&
        (datagram.readUInt16LE(6) & NLM_F_ACK_TLVS) === 0 &&
        datagram.readInt32LE(NLMSG_HDRLEN) === 0
      ) {
        const p = this.pending.get(datagram.readUInt32LE(8));
        if (p) {
          if (datagram.readUInt16LE(6) & NLM_F_DUMP_INTR) p.result.interrupted = true;
          this.complete(p);
        }
        return;
      }
    }
    if (this.inPlaceDatagram(datagram)) return;
    // replies and dumpEach payloads are views of the datagram: own it first
    if (this.transport.lendsDatagrams) datagram = Buffer.from(datagram);
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

  /**
   * A datagram whose first message answers an in-place dumpEach: its replies go
   * to the in-place sink without a message object or a copy; anything else in
   * it (NLMSG_DONE, an error, another exchange's message) is handled as
   * receive() does, from a copy made only then. Headers are checked as
   * parseMessages checks them, all before anything is handled.
   * @returns false when the datagram is not one (receive() handles it)
   */
  private inPlaceDatagram(datagram: Buffer): boolean {
    const n = datagram.length;
    if (n < NLMSG_HDRLEN) return false;
    const first = this.pending.get((datagram[8] | (datagram[9] << 8) | (datagram[10] << 16)) + datagram[11] * 0x1000000);
    if (!first?.raw) return false;
    // the checks of parseMessages, first: a bad header fails every exchange, with nothing handled
    for (let off = 0; off < n; ) {
      if (n - off < NLMSG_HDRLEN) return false;
      const len = (datagram[off] | (datagram[off + 1] << 8) | (datagram[off + 2] << 16)) + datagram[off + 3] * 0x1000000;
      if (len < NLMSG_HDRLEN || len > n - off) return false;
      off += align4(len);
    }
    let owned: Buffer | undefined;
    for (let off = 0; off < n; ) {
      const len = (datagram[off] | (datagram[off + 1] << 8) | (datagram[off + 2] << 16)) + datagram[off + 3] * 0x1000000;
      const type = datagram[off + 4] | (datagram[off + 5] << 8);
      const flags = datagram[off + 6] | (datagram[off + 7] << 8);
      const seq = (datagram[off + 8] | (datagram[off + 9] << 8) | (datagram[off + 10] << 16)) + datagram[off + 11] * 0x1000000;
      const p = this.pending.get(seq);
      if (p) {
        try {
          if (p.raw && type !== NLMSG_ERROR && type !== NLMSG_DONE && type !== NLMSG_NOOP && type !== NLMSG_OVERRUN) {
            if (flags & NLM_F_DUMP_INTR) p.result.interrupted = true;
            p.raw(type, datagram, off + NLMSG_HDRLEN, off + len);
          } else {
            // as receive(): a message of a copy of the datagram, at the same offset
            owned ??= this.transport.lendsDatagrams ? Buffer.from(datagram) : datagram;
            const pid = (owned[off + 12] | (owned[off + 13] << 8) | (owned[off + 14] << 16)) + owned[off + 15] * 0x1000000;
            this.handle(p, { type, flags, seq, pid, payload: owned.subarray(off + NLMSG_HDRLEN, off + len), offset: off });
          }
        } catch (e) {
          this.finish(p.ex);
          p.ex.reject(e as Error);
        }
      }
      off += align4(len);
    }
    return true;
  }

  private handle(p: Pending, m: NetlinkMessage): void {
    const r = p.result;
    if (m.flags & NLM_F_DUMP_INTR) r.interrupted = true;
    if (m.type === NLMSG_ERROR) {
      const er = parseErrorReply(m);
      if (er.errno === 0) {
        if (er.extAckMessage) this.warn(r, er.extAckMessage, er.extAckOffset);
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

  /** Keep a warning on its result and the connection, and hand it to the warning handler. */
  private warn(r: ExchangeResult, message: string, offset: number | undefined): void {
    r.warning = message;
    this.warnings.push(message);
    if (this.warnings.length > 100) this.warnings.shift();
    const handler = this.onWarning ?? defaultWarningHandler;
    if (handler) {
      const w: NetlinkWarning = { message, requestType: messageTypeName(this.protocol, r.type) };
      if (offset !== undefined) w.offset = offset;
      handler(w);
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
    const errno = Math.abs(err.errno);
    return new SocketError(
      err.syscall ?? 'socket',
      errno,
      `netlink ${err.syscall ?? 'socket'} failed on a ${protocolLabel(protocol)} socket: ${errnoName(errno)}`,
      protocol,
      socketErrorCategory(errnoName(errno)),
    );
  }
  return new SynplugError(`netlink socket failed: ${err.message ?? String(e)}`, 'kernel', { cause: e });
}

/** What each of {@link ConnectionOptions} must be: `typeof` of its value. */
export const CONNECTION_OPTION_KINDS: Readonly<Record<keyof ConnectionOptions, 'number' | 'string' | 'boolean' | 'function'>> = {
  timeoutMs: 'number',
  recvBufferSize: 'number',
  dumpRetries: 'number',
  readBufferSize: 'number',
  netns: 'string',
  extendedAck: 'boolean',
  strictCheck: 'boolean',
  onWarning: 'function',
};

/**
 * Check {@link NetlinkConnection.open}'s options: an object, only known
 * options, each of its type (undefined: absent); numbers finite and not negative.
 * @throws {UsageError} naming the option and what it must be
 */
function checkConnectionOptions(options: unknown): void {
  if (options === undefined) return;
  if (options === null || typeof options !== 'object' || Array.isArray(options))
    throw new UsageError(
      `NetlinkConnection.open: the options must be an object (got ${options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options})`,
    );
  const kinds = CONNECTION_OPTION_KINDS as Record<string, string>;
  for (const [k, v] of Object.entries(options)) {
    const kind = kinds[k];
    if (kind === undefined) throw new UsageError(`NetlinkConnection.open: unknown option '${k}' (its options: ${Object.keys(kinds).join(', ')})`);
    if (v === undefined) continue;
    if (typeof v !== kind || (kind === 'number' && !(Number.isFinite(v) && (v as number) >= 0)))
      throw new UsageError(
        `NetlinkConnection.open: option '${k}' must be ${kind === 'number' ? 'a finite number, not negative' : `a ${kind}`} (got ${v === null ? 'null' : typeof v === 'string' ? `'${v}'` : String(v)})`,
      );
  }
}

/**
 * Check one message to send before anything is encoded.
 * @throws {UsageError} not an object; `type` not an integer 0-65535; `flags` not a u16; `payload` not a Buffer or an array of Buffers
 */
function checkRequestInit(m: unknown): void {
  if (m === null || typeof m !== 'object' || Array.isArray(m))
    throw new UsageError(
      `a netlink request must be an object { type, flags?, payload? } (got ${m === null ? 'null' : Array.isArray(m) ? 'an array' : typeof m})`,
    );
  const r = m as { type?: unknown; flags?: unknown; payload?: unknown };
  if (!Number.isInteger(r.type) || (r.type as number) < 0 || (r.type as number) > 0xffff)
    throw new UsageError(`a netlink request's type must be an integer 0-65535 (nlmsg_type; got ${String(r.type)})`);
  if (r.flags !== undefined && (!Number.isInteger(r.flags) || (r.flags as number) < 0 || (r.flags as number) > 0xffff))
    throw new UsageError(`a netlink request's flags must be an integer 0-65535 (nlmsg_flags; got ${String(r.flags)})`);
  const p = r.payload;
  if (p !== undefined && !Buffer.isBuffer(p) && !(Array.isArray(p) && p.every((b) => Buffer.isBuffer(b))))
    throw new UsageError("a netlink request's payload must be a Buffer or an array of Buffers");
}
