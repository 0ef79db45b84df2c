/**
 * The real netlink transport: a socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC,
 * protocol) driven through the C library with koffi ({@link ./libc.ts}).
 *
 * How replies are read:
 *
 * - The kernel processes rtnetlink, nfnetlink and sock_diag requests inside
 *   the sender's sendmsg: the answer is queued before `send` returns. So
 *   right after a send, the transport reads with MSG_DONTWAIT, on the same
 *   call stack, and keeps reading while the connection still waits for
 *   something ({@link SocketTransport.setInterest}). No event-loop turn.
 * - Anything else (EAGAIN: no answer yet; messages the kernel sends on its
 *   own; the rest of a dump) arrives through a libuv poll handle on the
 *   socket (`koffi.node.poll`), which the event loop runs when the socket is
 *   readable. The handle is unref'd: it never keeps the process alive by
 *   itself (the connection's timer does while an exchange waits).
 * - Each next dump chunk is produced by the kernel inside recvmsg. After a
 *   multipart datagram (NLM_F_MULTI) the transport stops reading and leaves
 *   the next chunk to the poll handle, so a long dump (30,000 tc classes,
 *   ~220 chunks) yields to the event loop between chunks and never blocks
 *   timers for more than one chunk.
 * - Every read uses one {@link DUMP_READ_BUFFER} (64 KiB) buffer: the kernel
 *   sizes dump chunks after the largest read the socket has made (about
 *   32 KiB for this buffer, netlink_recvmsg's max_recvmsg_len), so one socket
 *   serves requests and dumps alike. The datagram handed to the callback is
 *   a view of that buffer, valid during the callback only
 *   ({@link SocketTransport.lendsDatagrams}): the connection copies what it
 *   keeps, and reads a plain ack in place without a copy.
 *
 * Socket options set at creation (SOL_NETLINK, linux/netlink.h):
 * NETLINK_EXT_ACK (the kernel's error text, offset and missing attribute),
 * NETLINK_CAP_ACK (errors echo only the request's header), and
 * NETLINK_GET_STRICT_CHK (rtnetlink filters dumps by the request's header,
 * e.g. one device's qdiscs). A kernel that refuses one (ENOPROTOOPT, older
 * than 4.12 / 4.3 / 4.20) is used without it; {@link SocketTransport.extendedAck}
 * and {@link SocketTransport.strictCheck} say what was accepted.
 *
 * @module
 */
import { errnoName, SynplugError, UsageError } from './errors.js';
import {
  AF_NETLINK,
  SOCK_RAW,
  SOCK_CLOEXEC,
  SOL_SOCKET,
  SO_RCVBUF,
  SO_RCVBUFFORCE,
  SOL_NETLINK,
  SO_DOMAIN,
  SO_PROTOCOL,
  NETLINK_CAP_ACK,
  NETLINK_EXT_ACK,
  NETLINK_GET_STRICT_CHK,
  MSG_DONTWAIT,
  MSG_TRUNC,
  libc,
  lastErrno,
  pollReadable,
  SocketError,
  type PollHandle,
} from './libc.js';
import { NLM_F_MULTI, NLMSG_HDRLEN } from './message.js';
import { protocolInfo } from './protocols.js';
import { netnsLabel, withNetns } from './netns.js';

/** Moves datagrams between a NetlinkConnection (connection.ts) and the kernel (or a test double). */
export interface Transport {
  /** Send one datagram; errors arrive through the callback given to {@link Transport.onError}. */
  send(datagram: Buffer): void;
  /**
   * Send a datagram that starts a dump. Optional: a transport may send it on
   * a socket of its own (e.g. one that reads with a larger buffer); its
   * replies arrive through the same {@link Transport.onDatagram} callback.
   * Without it, {@link Transport.send} is used (SocketTransport has
   * none: its one socket reads everything with a 64 KiB buffer).
   */
  sendDump?(datagram: Buffer): void;
  /** Register the receiver of every datagram that arrives. */
  onDatagram(cb: (datagram: Buffer) => void): void;
  /** Register the receiver of socket errors (ENOBUFS, EPERM on send...). */
  onError(cb: (err: Error) => void): void;
  /**
   * Optional: learn whether the connection still waits for datagrams (a
   * transport that reads synchronously after a send stops when it does not).
   */
  setInterest?(waiting: () => boolean): void;
  /** Release the socket; pending sends are dropped. */
  close(): void;
  /** Our port id (nl_pid), 0 when unknown. */
  readonly portId: number;
  /**
   * Optional: true when the datagrams handed to the {@link Transport.onDatagram}
   * callback are only lent (a view of a buffer the next read overwrites); the
   * connection then copies a datagram before keeping any part of it.
   */
  readonly lendsDatagrams?: boolean;
  /** Optional: the kernel accepted NETLINK_EXT_ACK on this socket. */
  readonly extendedAck?: boolean;
  /** Optional: the kernel accepted NETLINK_GET_STRICT_CHK on this socket. */
  readonly strictCheck?: boolean;
}

/**
 * The read buffer of a {@link SocketTransport}, bytes. The kernel fills dump
 * datagrams up to about 32 KiB for a reader this large (netlink_recvmsg caps
 * max_recvmsg_len at SKB_WITH_OVERHEAD(32768)); larger ones come only from
 * dumps whose every message is larger (min_dump_alloc: links with many VFs),
 * which the margin covers. A longer datagram grows the buffer for the next
 * read and is reported (it was cut).
 */
export const DUMP_READ_BUFFER = 65536;

/** Options of {@link SocketTransport}. */
export interface SocketOptions {
  /**
   * The receive buffer to ask for, bytes (the kernel doubles it): SO_RCVBUFFORCE
   * with CAP_NET_ADMIN (past net.core.rmem_max), else SO_RCVBUF (capped at it)
   */
  recvBufferSize?: number;
  /** the read buffer, bytes (default {@link DUMP_READ_BUFFER}) */
  readBufferSize?: number;
  /** set NETLINK_EXT_ACK and NETLINK_CAP_ACK (default true) */
  extendedAck?: boolean;
  /** set NETLINK_GET_STRICT_CHK (default true) */
  strictCheck?: boolean;
  /** create the socket in this network namespace: a NAME under /run/netns or a PATH (see netns.ts) */
  netns?: string;
  /**
   * Use this open, already bound netlink socket (e.g. inherited from a parent
   * process) instead of creating one: only `readBufferSize` applies (the
   * socket keeps its options); its protocol must be `protocol`.
   */
  adoptFd?: number;
}

const EAGAIN = 'EAGAIN';

/** linux/netlink.h protocol numbers, to name a protocol in an error. */
const PROTOCOL_NAMES: Record<number, string> = {
  0: 'NETLINK_ROUTE',
  2: 'NETLINK_USERSOCK',
  3: 'NETLINK_FIREWALL',
  4: 'NETLINK_SOCK_DIAG',
  5: 'NETLINK_NFLOG',
  6: 'NETLINK_XFRM',
  7: 'NETLINK_SELINUX',
  8: 'NETLINK_ISCSI',
  9: 'NETLINK_AUDIT',
  10: 'NETLINK_FIB_LOOKUP',
  11: 'NETLINK_CONNECTOR',
  12: 'NETLINK_NETFILTER',
  13: 'NETLINK_IP6_FW',
  14: 'NETLINK_DNRTMSG',
  15: 'NETLINK_KOBJECT_UEVENT',
  16: 'NETLINK_GENERIC',
  18: 'NETLINK_SCSITRANSPORT',
  19: 'NETLINK_ECRYPTFS',
  20: 'NETLINK_RDMA',
  21: 'NETLINK_CRYPTO',
  22: 'NETLINK_SMC',
};

/** The kernel module that provides a protocol, where it is a module. */
const PROTOCOL_MODULES: Record<number, string> = { 4: 'sock_diag', 12: 'nfnetlink', 5: 'nfnetlink_log', 21: 'crypto_user' };

/**
 * A protocol's name for messages: `NETLINK_NETFILTER (12)`, or `netlink protocol 31`.
 * @param protocol netlink protocol number
 */
export function protocolLabel(protocol: number): string {
  const name = protocolInfo(protocol)?.name ?? PROTOCOL_NAMES[protocol];
  return name ? `${name} (${protocol})` : `netlink protocol ${protocol}`;
}

/**
 * The error for a failed socket() or bind().
 * @param syscall 'socket' or 'bind'
 */
function creationError(syscall: string, errno: number, protocol: number, netns: string | undefined): SocketError {
  const code = errnoName(errno);
  const what = protocolLabel(protocol);
  const where = netns === undefined ? '' : ` in network namespace '${netnsLabel(netns)}'`;
  let why = '';
  if (code === 'EPROTONOSUPPORT') {
    const mod = PROTOCOL_MODULES[protocol];
    why = `: this kernel does not provide ${what}${mod ? ` (module ${mod}: modprobe ${mod})` : ''}`;
  } else if (code === 'EAFNOSUPPORT') {
    why = ': this kernel has no netlink sockets (AF_NETLINK)';
  } else if (code === 'EPERM' || code === 'EACCES') {
    why = ': not permitted (a security policy, seccomp or LSM, forbids netlink sockets here)';
  } else if (code === 'EMFILE' || code === 'ENFILE') {
    why = ': too many open files';
  }
  return new SocketError(syscall, errno, `cannot open a ${what} socket${where}: ${syscall} failed: ${code}${why}`, protocol);
}

/**
 * A netlink socket as a {@link Transport} (see the module doc for how it reads).
 */
export class SocketTransport implements Transport {
  /** the socket's file descriptor */
  readonly fd: number;
  /** our port id (nl_pid), from getsockname after bind */
  readonly portId: number;
  /** the netlink protocol number */
  readonly protocol: number;
  /** the kernel accepted NETLINK_EXT_ACK (and NETLINK_CAP_ACK): errors carry its text */
  readonly extendedAck: boolean;
  /** the kernel accepted NETLINK_GET_STRICT_CHK: rtnetlink dumps are filtered by the request header */
  readonly strictCheck: boolean;
  /** datagrams handed to the callback are views of the read buffer, valid during the callback only: copy what you keep */
  readonly lendsDatagrams = true;
  /** the namespace the socket was created in (the option as given), undefined: the process's own */
  readonly netns: string | undefined;
  private buf: Buffer;
  private readonly poll: PollHandle;
  private readonly sendFn: (fd: number, buf: Buffer, len: number, flags: number) => number;
  private readonly recvFn: (fd: number, buf: Buffer, len: number, flags: number) => number;
  private datagramCb: (datagram: Buffer) => void = () => {};
  private errorCb: (err: Error) => void = () => {};
  private interest: () => boolean = () => false;
  private reading = false;
  private closed = false;

  /**
   * Create, configure and bind the socket.
   * @param protocol netlink protocol number (NETLINK_ROUTE 0, NETLINK_SOCK_DIAG 4, NETLINK_NETFILTER 12, any other)
   * @throws {SocketError} socket(), bind() or getsockname() failed: EPROTONOSUPPORT/EAFNOSUPPORT (category `missing-module`, naming the protocol), EPERM/EACCES (`permission`), others (`kernel`)
   * @throws {UsageError} `netns` does not exist or is not a network namespace; `adoptFd` is not a netlink socket of `protocol`
   * @throws {LibcError} koffi or a libc function cannot be loaded
   */
  constructor(protocol: number, options: SocketOptions = {}) {
    this.protocol = protocol;
    this.netns = options.netns;
    this.sendFn = libc('send');
    this.recvFn = libc('recv');
    if (options.adoptFd !== undefined) {
      this.fd = options.adoptFd;
      this.checkAdopted(options.adoptFd, protocol);
      this.extendedAck = this.flagOption(NETLINK_EXT_ACK);
      this.strictCheck = this.flagOption(NETLINK_GET_STRICT_CHK);
      // struct sockaddr_nl { __kernel_sa_family_t nl_family; unsigned short nl_pad; __u32 nl_pid; __u32 nl_groups; }
      const sa = Buffer.alloc(12);
      if (libc('getsockname')(this.fd, sa, [12]) !== 0) throw creationError('getsockname', lastErrno(), protocol, options.netns);
      this.portId = sa.readUInt32LE(4);
      this.buf = Buffer.alloc(options.readBufferSize ?? DUMP_READ_BUFFER);
      this.poll = pollReadable(this.fd, () => this.drain(false));
      this.poll.unref();
      return;
    }
    const socket = libc('socket');
    // errno is read before setns runs again (it would overwrite it)
    const fd = withNetns(options.netns, () => {
      const r = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol) as number;
      return r < 0 ? -lastErrno() : r;
    });
    if (fd < 0) throw creationError('socket', -fd, protocol, options.netns);
    this.fd = fd;
    try {
      if (options.recvBufferSize) {
        // SO_RCVBUFFORCE goes past net.core.rmem_max, for CAP_NET_ADMIN; others get SO_RCVBUF (capped)
        const v = Buffer.alloc(4);
        v.writeInt32LE(options.recvBufferSize, 0);
        if (libc('setsockopt')(fd, SOL_SOCKET, SO_RCVBUFFORCE, v, 4) !== 0) this.setIntOption(SOL_SOCKET, SO_RCVBUF, options.recvBufferSize, 'SO_RCVBUF');
      }
      const ext = options.extendedAck ?? true;
      this.extendedAck = ext && this.trySetFlag(NETLINK_EXT_ACK);
      if (ext) this.trySetFlag(NETLINK_CAP_ACK);
      this.strictCheck = (options.strictCheck ?? true) && this.trySetFlag(NETLINK_GET_STRICT_CHK);
      // struct sockaddr_nl { __kernel_sa_family_t nl_family; unsigned short nl_pad; __u32 nl_pid; __u32 nl_groups; }
      const sa = Buffer.alloc(12);
      sa.writeUInt16LE(AF_NETLINK, 0);
      if (libc('bind')(fd, sa, 12) !== 0) throw creationError('bind', lastErrno(), protocol, options.netns);
      const len = [12];
      if (libc('getsockname')(fd, sa, len) !== 0) throw creationError('getsockname', lastErrno(), protocol, options.netns);
      this.portId = sa.readUInt32LE(4);
      this.buf = Buffer.alloc(options.readBufferSize ?? DUMP_READ_BUFFER);
      this.poll = pollReadable(fd, () => this.drain(false));
      this.poll.unref();
    } catch (e) {
      libc('close')(fd);
      throw e;
    }
  }

  /** An adopted descriptor must be a netlink socket of `protocol`. */
  private checkAdopted(fd: number, protocol: number): void {
    let domain: number;
    let proto: number;
    try {
      domain = this.getIntOption(SOL_SOCKET, SO_DOMAIN);
      proto = this.getIntOption(SOL_SOCKET, SO_PROTOCOL);
    } catch (e) {
      throw new UsageError(`file descriptor ${fd} is not an open socket (${(e as Error).message})`);
    }
    if (domain !== AF_NETLINK || proto !== protocol) {
      throw new UsageError(`file descriptor ${fd} is not a ${protocolLabel(protocol)} socket (address family ${domain}, protocol ${proto})`);
    }
  }

  /** getsockopt(SOL_NETLINK, name) is set; false when the kernel does not know the option. */
  private flagOption(name: number): boolean {
    try {
      return this.getIntOption(SOL_NETLINK, name) !== 0;
    } catch {
      return false;
    }
  }

  /** setsockopt(SOL_NETLINK, name, 1); false when the kernel does not know the option. */
  private trySetFlag(name: number): boolean {
    const v = Buffer.alloc(4);
    v.writeInt32LE(1, 0);
    return libc('setsockopt')(this.fd, SOL_NETLINK, name, v, 4) === 0;
  }

  private setIntOption(level: number, name: number, value: number, label: string): void {
    const v = Buffer.alloc(4);
    v.writeInt32LE(value, 0);
    if (libc('setsockopt')(this.fd, level, name, v, 4) !== 0) {
      const errno = lastErrno();
      throw new SocketError(
        'setsockopt',
        errno,
        `setsockopt(${label}, ${value}) failed on a ${protocolLabel(this.protocol)} socket: ${errnoName(errno)}`,
        this.protocol,
      );
    }
  }

  /**
   * An int socket option (getsockopt).
   * @param level e.g. SOL_SOCKET, SOL_NETLINK
   * @param name e.g. SO_RCVBUF (the kernel reports twice what was asked), NETLINK_EXT_ACK
   * @throws {SocketError} getsockopt failed
   */
  getIntOption(level: number, name: number): number {
    const v = Buffer.alloc(4);
    const len = [4];
    if (libc('getsockopt')(this.fd, level, name, v, len) !== 0) {
      const errno = lastErrno();
      throw new SocketError(
        'getsockopt',
        errno,
        `getsockopt(${level}, ${name}) failed on a ${protocolLabel(this.protocol)} socket: ${errnoName(errno)}`,
        this.protocol,
      );
    }
    return v.readInt32LE(0);
  }

  /**
   * An int socket option (setsockopt).
   * @param level e.g. SOL_SOCKET, SOL_NETLINK
   * @param name e.g. SO_RCVBUF, NETLINK_GET_STRICT_CHK
   * @param value the int
   * @throws {SocketError} setsockopt failed (ENOPROTOOPT: the kernel does not know the option)
   */
  setIntOptionRaw(level: number, name: number, value: number): void {
    this.setIntOption(level, name, value, `${level}/${name}`);
  }

  /** SO_RCVBUF as the kernel holds it, bytes (twice what was asked, capped by net.core.rmem_max). */
  get recvBufferSize(): number {
    return this.getIntOption(SOL_SOCKET, SO_RCVBUF);
  }

  /**
   * Send one datagram to the kernel, then read what it has already answered.
   * @throws {SocketError} send failed, or the socket is closed (EBADF)
   */
  send(datagram: Buffer): void {
    if (this.closed) throw new SocketError('send', 9, `cannot send on a closed ${protocolLabel(this.protocol)} socket`, this.protocol);
    for (;;) {
      const n = this.sendFn(this.fd, datagram, datagram.length, 0);
      if (n >= 0) break;
      const errno = lastErrno();
      const code = errnoName(errno);
      if (code === 'EINTR') continue;
      throw new SocketError(
        'send',
        errno,
        `netlink send failed on a ${protocolLabel(this.protocol)} socket: ${code}${code === 'ENOBUFS' || code === 'ENOMEM' ? ' (the kernel is out of memory for socket buffers)' : ''}`,
        this.protocol,
      );
    }
    // A send from inside a datagram callback: the read loop already running picks the answer up.
    if (!this.reading) this.drain(true);
  }

  /**
   * Read datagrams with MSG_DONTWAIT until EAGAIN, handing each to the
   * datagram callback. After a send (`afterSend`), stop once the connection
   * waits for nothing more. After a multipart datagram, stop: the poll handle
   * reads the next dump chunk on the next event-loop turn.
   */
  private drain(afterSend: boolean): void {
    if (this.closed || this.reading) return;
    this.reading = true;
    // after an error, read to EAGAIN: what is still queued answers exchanges that were just failed
    let flush = false;
    try {
      for (;;) {
        const n = this.recvFn(this.fd, this.buf, this.buf.length, MSG_DONTWAIT | MSG_TRUNC);
        if (n < 0) {
          const errno = lastErrno();
          const code = errnoName(errno);
          if (code === EAGAIN) return;
          if (code === 'EINTR') continue;
          this.errorCb(
            code === 'ENOBUFS'
              ? new SocketError(
                  'recv',
                  errno,
                  `the ${protocolLabel(this.protocol)} socket's receive buffer overflowed (ENOBUFS): the kernel dropped replies; retry, or open the connection with a larger recvBufferSize`,
                  this.protocol,
                )
              : new SocketError('recv', errno, `netlink recv failed on a ${protocolLabel(this.protocol)} socket: ${code}`, this.protocol),
          );
          if (this.closed) return;
          flush = true;
          continue;
        }
        if (n > this.buf.length) {
          const had = this.buf.length;
          this.buf = Buffer.alloc(2 ** Math.ceil(Math.log2(n)));
          this.errorCb(
            new SynplugError(
              `a ${n}-byte netlink datagram was longer than the ${had}-byte read buffer and was cut (later reads use ${this.buf.length} bytes)`,
              'kernel',
            ),
          );
          if (this.closed) return;
          flush = true;
          continue;
        }
        const multi = n >= NLMSG_HDRLEN && (this.buf.readUInt16LE(6) & NLM_F_MULTI) !== 0;
        this.datagramCb(this.buf.subarray(0, n));
        if (this.closed || multi) return;
        if (afterSend && !flush && !this.interest()) return;
      }
    } finally {
      this.reading = false;
    }
  }

  /**
   * Read, now, every datagram already queued on the socket (with MSG_DONTWAIT,
   * until EAGAIN), handing each to the datagram callback, as the poll handle
   * would on its next turn. A no-op inside a datagram callback.
   */
  readNow(): void {
    this.drain(false);
  }

  /**
   * Register the receiver of every datagram. The datagram is a view of the
   * transport's read buffer, overwritten by the next read: copy what must
   * outlive the callback.
   */
  onDatagram(cb: (datagram: Buffer) => void): void {
    this.datagramCb = cb;
  }

  /** Register the receiver of socket errors (ENOBUFS, a cut datagram...). */
  onError(cb: (err: Error) => void): void {
    this.errorCb = cb;
  }

  /**
   * Tell the transport whether the connection still waits for datagrams:
   * after a send it keeps reading synchronously while `waiting()` is true.
   */
  setInterest(waiting: () => boolean): void {
    this.interest = waiting;
  }

  /** Keep the event loop alive while the socket is open (default: not), e.g. to wait for multicast messages. */
  ref(): void {
    this.poll.ref();
  }

  /** Do not keep the event loop alive (the default). */
  unref(): void {
    this.poll.unref();
  }

  /** Stop polling and close the socket. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.poll.close();
    libc('close')(this.fd);
  }
}
