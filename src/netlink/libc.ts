/**
 * The C library functions the netlink socket needs, called through koffi
 * (npm `koffi`, a foreign function interface with prebuilt binaries for
 * glibc and musl): `socket`, `bind`, `getsockname`, `setsockopt`,
 * `getsockopt`, `send`, `recv`, `close`, `fcntl` and `setns`; the guard's
 * state directory also uses the directory-relative `openat`, `mkdirat`,
 * `unlinkat`, `renameat`, `readlinkat`, and `ioctl` (a namespace's type).
 *
 * The functions are looked up once, on first use, in the process itself
 * (`dlopen(NULL)`: the C library node is linked with, glibc or musl), then
 * in `libc.so.6` and `libc.so`. Every call runs synchronously on the calling
 * thread, the main JavaScript thread: this matters for `setns`, which moves
 * only the calling thread.
 *
 * Failures are typed: {@link LibcError} when koffi or a function cannot be
 * loaded, {@link SocketError} (errno and code) when a call fails.
 *
 * @module
 */
import { createRequire } from 'node:module';
import { errnoName, SynplugError, type ErrorCategory } from './errors.js';

/** AF_NETLINK (linux/socket.h) */
export const AF_NETLINK = 16;
/** SOCK_RAW (linux/net.h) */
export const SOCK_RAW = 3;
/** SOCK_CLOEXEC (= O_CLOEXEC on x86/arm: 02000000 octal) */
export const SOCK_CLOEXEC = 0o2000000;
/** SOL_SOCKET (asm-generic/socket.h) */
export const SOL_SOCKET = 1;
/** SO_RCVBUF (asm-generic/socket.h): int, bytes (the kernel stores and reports twice the value) */
export const SO_RCVBUF = 8;
/** SO_RCVBUFFORCE (asm-generic/socket.h): SO_RCVBUF past net.core.rmem_max, CAP_NET_ADMIN only */
export const SO_RCVBUFFORCE = 33;
/** SO_PROTOCOL (asm-generic/socket.h): int, the socket's protocol (read only) */
export const SO_PROTOCOL = 38;
/** SO_DOMAIN (asm-generic/socket.h): int, the socket's address family (read only) */
export const SO_DOMAIN = 39;
/** F_GETFD (asm-generic/fcntl.h): fcntl command, the descriptor flags */
export const F_GETFD = 1;
/** F_SETFD (asm-generic/fcntl.h): fcntl command, set the descriptor flags */
export const F_SETFD = 2;
/** FD_CLOEXEC (asm-generic/fcntl.h): descriptor flag, closed across execve */
export const FD_CLOEXEC = 1;
/** SOL_NETLINK (linux/socket.h) */
export const SOL_NETLINK = 270;
/** NETLINK_CAP_ACK (linux/netlink.h): int; error acks echo only the request's header (NLM_F_CAPPED) */
export const NETLINK_CAP_ACK = 10;
/** NETLINK_EXT_ACK (linux/netlink.h): int; acks carry NLMSGERR_ATTR_* TLVs (NLM_F_ACK_TLVS) */
export const NETLINK_EXT_ACK = 11;
/** NETLINK_GET_STRICT_CHK (linux/netlink.h): int; rtnetlink checks dump request headers strictly and filters by them */
export const NETLINK_GET_STRICT_CHK = 12;
/** MSG_PEEK (linux/socket.h) */
export const MSG_PEEK = 0x2;
/** MSG_TRUNC (linux/socket.h): recv returns the datagram's real length even when it was cut */
export const MSG_TRUNC = 0x20;
/** MSG_DONTWAIT (linux/socket.h) */
export const MSG_DONTWAIT = 0x40;
/** O_PATH (asm-generic/fcntl.h, every architecture node runs on): an fd that only names a file */
export const O_PATH = 0o10000000;
/** O_CLOEXEC (asm-generic/fcntl.h) */
export const O_CLOEXEC = 0o2000000;
/** AT_FDCWD (linux/fcntl.h): a relative path of an *at call is taken from the working directory */
export const AT_FDCWD = -100;
/** AT_REMOVEDIR (linux/fcntl.h): unlinkat removes a directory (as rmdir) */
export const AT_REMOVEDIR = 0x200;
/** CLONE_NEWNET (linux/sched.h): the nstype of setns for a network namespace */
export const CLONE_NEWNET = 0x40000000;

/**
 * A libc call failed: `errno` and `code` say why, `syscall` which call.
 * Category: EPERM/EACCES `permission`; EPROTONOSUPPORT/EAFNOSUPPORT
 * `missing-module` (the kernel lacks the netlink protocol); anything else
 * `kernel`.
 */
export class SocketError extends SynplugError {
  /** positive errno, e.g. 93 */
  readonly errno: number;
  /** errno name, e.g. 'EPROTONOSUPPORT' */
  readonly code: string;
  /** the libc function that failed, e.g. 'socket' */
  readonly syscall: string;
  /** the netlink protocol number of the socket, when known */
  readonly protocol?: number;
  /**
   * @param syscall the failed function
   * @param errno positive errno
   * @param message the whole sentence (names the call, the code and what it means)
   * @param protocol the netlink protocol, when the call concerned a socket
   * @param category defaults to the one the errno implies ({@link socketErrorCategory})
   */
  constructor(syscall: string, errno: number, message: string, protocol?: number, category?: ErrorCategory) {
    const code = errnoName(errno);
    super(message, category ?? socketErrorCategory(code));
    this.name = 'SocketError';
    this.errno = errno;
    this.code = code;
    this.syscall = syscall;
    if (protocol !== undefined) this.protocol = protocol;
  }
}

/**
 * The category a failed socket call's errno implies: EPERM/EACCES
 * `permission`, EPROTONOSUPPORT/EAFNOSUPPORT `missing-module`, else `kernel`.
 * @param code errno name
 */
export function socketErrorCategory(code: string): ErrorCategory {
  if (code === 'EPERM' || code === 'EACCES') return 'permission';
  if (code === 'EPROTONOSUPPORT' || code === 'EAFNOSUPPORT') return 'missing-module';
  return 'kernel';
}

/**
 * koffi, or one of the C library's functions, could not be loaded (a libc
 * without `setns`, a platform koffi has no binary for). Category `failure`.
 */
export class LibcError extends SynplugError {
  /** the function that was looked up, or 'koffi' when koffi itself failed to load */
  readonly symbol: string;
  /**
   * @param symbol the function (or 'koffi')
   * @param message the sentence
   * @param cause koffi's own error
   */
  constructor(symbol: string, message: string, cause?: unknown) {
    super(message, 'failure', { cause });
    this.name = 'LibcError';
    this.symbol = symbol;
  }
}

/** A C function bound by koffi (arguments and result as koffi converts them). */
// biome-ignore lint/suspicious/noExplicitAny: koffi converts arguments and results by the C prototype given at binding time; each wrapper here checks what it passes
type CFunction = (...args: any[]) => any;

/** The part of koffi used here. */
interface Koffi {
  load(path: string | null): { func(definition: string): CFunction; unload(): void };
  errno(): number;
  version: string;
  node: {
    poll(fd: number, opts: { readable?: boolean }, cb: (...args: unknown[]) => void): PollHandle;
  };
}

/** koffi's libuv poll handle on a file descriptor (`koffi.node.poll`). */
export interface PollHandle {
  /** stop watching (the handle can be started again) */
  stop(): void;
  /** stop and release the handle */
  close(): void;
  /** do not keep the event loop alive */
  unref(): void;
  /** keep the event loop alive while started */
  ref(): void;
}

let koffiModule: Koffi | undefined;

/**
 * koffi, loaded on first use.
 * @throws {LibcError} koffi is not installed or has no binary for this platform
 */
export function koffi(): Koffi {
  if (!koffiModule) {
    try {
      const require = createRequire(import.meta.url);
      koffiModule = require('koffi') as Koffi;
    } catch (e) {
      throw new LibcError(
        'koffi',
        `cannot load koffi, the C function interface synplug's netlink socket is built on (${(e as Error).message}); install the package's dependencies (npm install) on a platform koffi ships a binary for (Linux x64, arm64, arm, ia32, riscv64; glibc or musl)`,
        e,
      );
    }
  }
  return koffiModule;
}

/** The C declarations of every function used, by name. */
const DECLARATIONS = {
  socket: 'int socket(int domain, int type, int protocol)',
  bind: 'int bind(int fd, const void *addr, uint32_t len)',
  getsockname: 'int getsockname(int fd, void *addr, _Inout_ uint32_t *len)',
  setsockopt: 'int setsockopt(int fd, int level, int name, const void *value, uint32_t len)',
  getsockopt: 'int getsockopt(int fd, int level, int name, void *value, _Inout_ uint32_t *len)',
  send: 'intptr_t send(int fd, const void *buf, size_t len, int flags)',
  recv: 'intptr_t recv(int fd, void *buf, size_t len, int flags)',
  close: 'int close(int fd)',
  pipe2: 'int pipe2(void *fds, int flags)',
  write: 'intptr_t write(int fd, const void *buf, size_t len)',
  setns: 'int setns(int fd, int nstype)',
  // variadic in C: call it as fcntl(fd, cmd, 'int', arg)
  fcntl: 'int fcntl(int fd, int cmd, ...)',
  // Directory-relative file calls (the guard's state directory: src/guard/state-fs.ts). openat is variadic:
  // the mode is passed as a typed extra argument ('int', mode).
  openat: 'int openat(int dirfd, const char *path, int flags, ...)',
  mkdirat: 'int mkdirat(int dirfd, const char *path, uint32_t mode)',
  unlinkat: 'int unlinkat(int dirfd, const char *path, int flags)',
  renameat: 'int renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath)',
  readlinkat: 'intptr_t readlinkat(int dirfd, const char *path, _Out_ uint8_t *buf, size_t len)',
  ioctl: 'int ioctl(int fd, unsigned long request, ...)',
  // variadic: the raw system call, for pidfd_open and pidfd_getfd (glibc 2.36 has wrappers; musl has none)
  syscall: 'long syscall(long number, ...)',
} as const;

/** A name of {@link DECLARATIONS}. */
export type LibcFunctionName = keyof typeof DECLARATIONS;

/** The libraries searched, in order: the process itself (the libc node runs on), then by name. */
const LIBRARIES: ReadonlyArray<string | null> = [null, 'libc.so.6', 'libc.so'];

let libs: Array<{ func(definition: string): CFunction }> | undefined;
const bound = new Map<string, CFunction>();

/**
 * Bind one libc function by its C declaration, searching {@link LIBRARIES}.
 * Exported for tests (a function that does not exist must fail with a
 * {@link LibcError} naming it).
 * @param name the function's name, for the error
 * @param declaration its C prototype, e.g. `'int setns(int fd, int nstype)'`
 * @throws {LibcError} koffi cannot load, or no library has the function
 */
export function bindLibcFunction(name: string, declaration: string): CFunction {
  const k = koffi();
  if (!libs) {
    libs = [];
    for (const path of LIBRARIES) {
      try {
        libs.push(k.load(path));
      } catch {
        /* not on this system */
      }
    }
  }
  let last: unknown;
  for (const lib of libs) {
    try {
      return lib.func(declaration);
    } catch (e) {
      last = e;
    }
  }
  throw new LibcError(
    name,
    `the C library has no function '${name}' (${last instanceof Error ? last.message : 'no C library could be loaded'}); synplug's netlink socket needs ${name}() from glibc or musl`,
    last,
  );
}

/**
 * A libc function, bound on first use.
 * @throws {LibcError} the function cannot be found
 */
export function libc(name: LibcFunctionName): CFunction {
  let f = bound.get(name);
  if (!f) {
    f = bindLibcFunction(name, DECLARATIONS[name]);
    bound.set(name, f);
  }
  return f;
}

/** errno of the last koffi call on this thread (positive). */
export function lastErrno(): number {
  return koffi().errno();
}

/**
 * Watch a file descriptor for readability with a libuv poll handle
 * (`koffi.node.poll`): `cb` runs from the event loop whenever it is readable.
 * @throws {LibcError} koffi cannot load
 */
export function pollReadable(fd: number, cb: () => void): PollHandle {
  // koffi 3 hands the callback a libuv status, not the event set its typings
  // describe: read on every wake-up (a spurious one costs one EAGAIN recv).
  return koffi().node.poll(fd, { readable: true }, () => cb());
}

/**
 * Set or clear a file descriptor's FD_CLOEXEC flag (fcntl F_GETFD/F_SETFD):
 * cleared, the descriptor is inherited across execve.
 * @param fd the descriptor
 * @param on true: closed across execve (FD_CLOEXEC set); false: inherited
 * @throws {SocketError} fcntl failed (EBADF: not an open descriptor)
 * @throws {LibcError} koffi or fcntl cannot be loaded
 */
export function setCloseOnExec(fd: number, on: boolean): void {
  const fcntl = libc('fcntl');
  const flags = fcntl(fd, F_GETFD, 'int', 0) as number;
  if (flags < 0) throw fcntlError(fd, 'F_GETFD');
  const next = on ? flags | FD_CLOEXEC : flags & ~FD_CLOEXEC;
  if (next !== flags && (fcntl(fd, F_SETFD, 'int', next) as number) < 0) throw fcntlError(fd, 'F_SETFD');
}

/**
 * Whether a file descriptor has FD_CLOEXEC set (fcntl F_GETFD).
 * @throws {SocketError} fcntl failed (EBADF: not an open descriptor)
 */
export function isCloseOnExec(fd: number): boolean {
  const flags = libc('fcntl')(fd, F_GETFD, 'int', 0) as number;
  if (flags < 0) throw fcntlError(fd, 'F_GETFD');
  return (flags & FD_CLOEXEC) !== 0;
}

function fcntlError(fd: number, cmd: string): SocketError {
  const errno = lastErrno();
  return new SocketError('fcntl', errno, `fcntl(${fd}, ${cmd}) failed: ${errnoName(errno)}`);
}

/** pidfd_open(2) and pidfd_getfd(2): Linux 5.3 and 5.6; one number on every architecture (new system calls share theirs since 5.1). */
const SYS_pidfd_open = 434;
const SYS_pidfd_getfd = 438;

/**
 * A copy of another process's file descriptor (pidfd_open(2), then
 * pidfd_getfd(2)): the same open file, as `dup` would give within that
 * process, with FD_CLOEXEC set. Needs ptrace access to the process
 * (PTRACE_MODE_ATTACH_REALCREDS: root, or the same user where Yama allows).
 * @param pid the process
 * @param targetFd its descriptor number (as /proc/PID/fd lists it)
 * @returns the new descriptor in this process (close it with {@link libc}('close'))
 * @throws {SocketError} either call failed (ESRCH: gone; EPERM: no ptrace access; ENOSYS: a kernel before 5.6; EBADF: no such descriptor)
 */
export function takeFileDescriptor(pid: number, targetFd: number): number {
  const sys = libc('syscall');
  const pidfd = Number(sys(SYS_pidfd_open, 'int', pid, 'unsigned int', 0));
  if (pidfd < 0) {
    const errno = lastErrno();
    throw new SocketError('pidfd_open', errno, `pidfd_open(${pid}) failed: ${errnoName(errno)}`);
  }
  try {
    const fd = Number(sys(SYS_pidfd_getfd, 'int', pidfd, 'int', targetFd, 'unsigned int', 0));
    if (fd < 0) {
      const errno = lastErrno();
      throw new SocketError('pidfd_getfd', errno, `pidfd_getfd(process ${pid}, descriptor ${targetFd}) failed: ${errnoName(errno)}`);
    }
    return fd;
  } finally {
    libc('close')(pidfd);
  }
}
