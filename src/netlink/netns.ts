/**
 * Network namespaces: open a netlink socket in another namespace without
 * moving the process there, the way `ip -n NAME` does.
 *
 * `setns(fd, CLONE_NEWNET)` (linux/sched.h) moves only the calling thread.
 * koffi runs C calls on the calling thread, which is node's main thread (the
 * thread-group leader), so {@link withNetns} enters the namespace, runs its
 * function (which creates the socket), and enters the thread's own namespace
 * again, all synchronously: no other JavaScript runs in between, and node's
 * worker threads (libuv's pool, V8's) never move. A socket keeps the
 * namespace it was created in (sock_net() is fixed at socket()), so every
 * later request on it goes to that namespace.
 *
 * A namespace is given as a NAME (a file under `/run/netns`, as `ip netns
 * add NAME` makes) or a PATH (anything with a `/`: `/proc/PID/ns/net`, a
 * bind mount).
 *
 * @module
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { closeSync, constants as fsConstants, fstatSync, openSync, type Stats } from 'node:fs';
import { resolve } from 'node:path';
import { SynplugError, UsageError } from './errors.js';
import { AF_NETLINK, CLONE_NEWNET, lastErrno, libc, O_CLOEXEC, SOCK_CLOEXEC, SOCK_RAW, SOL_SOCKET, SocketError } from './libc.js';
import { errnoName } from './errors.js';

/** Where `ip netns` keeps named namespaces (iproute2's NETNS_RUN_DIR). */
export const NETNS_RUN_DIR = '/run/netns';

/**
 * The environment variable {@link defaultNetns} falls back to: a child
 * process (the guard's watchdog) started with it set opens its sockets in
 * the same namespace as its parent.
 */
export const NETNS_ENV = 'SYNPLUG_NETNS';

/**
 * The variable {@link netnsForChild} sets beside {@link NETNS_ENV}: the
 * namespace as the user named it, for the child's messages
 * ({@link netnsLabel}); the child never opens it.
 */
export const NETNS_NAME_ENV = 'SYNPLUG_NETNS_NAME';

/**
 * A namespace as messages name it: as the user gave it, also in a child that
 * reaches it through an inherited descriptor (`/proc/self/fd/3`, whose name
 * its parent passed in {@link NETNS_NAME_ENV}).
 * @param spec NAME or PATH, as {@link defaultNetns} answers it
 */
export function netnsLabel(spec: string): string {
  const name = process.env[NETNS_NAME_ENV];
  return spec === process.env[NETNS_ENV] && name ? name : spec;
}

/** This thread's own network namespace, as a path readable at any time. */
const OWN_NETNS = '/proc/thread-self/ns/net';

/**
 * The file of a namespace given as NAME or PATH.
 * @param spec a name under /run/netns (no `/`), or a path
 * @returns `/run/netns/NAME`, or the path as given
 * @throws {UsageError} an empty name, `.` or `..`
 */
export function netnsPath(spec: string): string {
  if (spec.includes('/')) return spec;
  if (spec === '' || spec === '.' || spec === '..')
    throw new UsageError(
      `'${spec}' is not a network namespace name (a name from ${NETNS_RUN_DIR}, as 'ip netns add NAME' creates, or a path such as /proc/PID/ns/net)`,
    );
  return `${NETNS_RUN_DIR}/${spec}`;
}

/**
 * The message for EACCES/EPERM from open(2) of a namespace file. Opening
 * `/proc/PID/ns/net` (or `/proc/PID/task/TID/ns/net`) is a ptrace access
 * check (PTRACE_MODE_READ_FSCREDS, fs/proc/namespaces.c): a process of
 * another user needs CAP_SYS_PTRACE, whatever other capabilities the caller
 * has; CAP_SYS_ADMIN is what setns(2) needs afterwards, not the open. Any
 * other file (a bind mount under /run/netns) is refused by its permissions.
 * @param spec the namespace as given
 * @param path the file opened
 * @param code `EACCES` or `EPERM`
 * @returns the sentence, naming the path and both possible causes where open and setns differ
 */
export function netnsOpenDeniedMessage(spec: string, path: string, code: string): string {
  const head = `cannot open network namespace '${spec}' (${path}): ${code}`;
  if (/^\/proc\/(?:[0-9]+|self|thread-self)(?:\/task\/[0-9]+)?\/ns\/net$/.test(path))
    return `${head}: opening another process's namespace file is a ptrace read-access check: it needs CAP_SYS_PTRACE unless that process runs as synplug's own user and group and is dumpable (a root without CAP_SYS_PTRACE, e.g. in a container that does not add SYS_PTRACE, is refused for processes of other users even with CAP_SYS_ADMIN); entering the namespace afterwards needs CAP_SYS_ADMIN`;
  return `${head}: the file's permissions refuse this user; entering a namespace also needs CAP_SYS_ADMIN (run as root)`;
}

/**
 * NS_GET_NSTYPE (linux/nsfs.h): `_IO(NSIO, 0x3)` with NSIO 0xb7; the ioctl
 * returns the namespace's CLONE_NEW* type (Linux 4.11+), and fails with
 * ENOTTY on a file that is not a namespace.
 */
export const NS_GET_NSTYPE = 0xb703;

/** SO_NETNS_COOKIE (asm-generic/socket.h, Linux 5.14+): u64, the socket's network namespace's cookie. */
export const SO_NETNS_COOKIE = 71;

/**
 * Open a namespace file non-blocking (a FIFO or a device never blocks the
 * open) and check it is a network namespace: fstat, then NS_GET_NSTYPE.
 * @returns the descriptor (close it with closeSync)
 * @throws {UsageError} it does not exist, or is not a network namespace
 * @throws {SynplugError} (`permission`) not allowed to open it
 */
function openNs(spec: string, path: string): number {
  let fd: number;
  try {
    fd = openSync(path, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK | O_CLOEXEC);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new UsageError(
        spec.includes('/')
          ? `network namespace '${spec}' does not exist (no such file)`
          : `network namespace '${spec}' does not exist (no ${path}; 'ip netns list' shows the names)`,
      );
    }
    if (code === 'EACCES' || code === 'EPERM') throw new SynplugError(netnsOpenDeniedMessage(spec, path, code), 'permission', { cause: e });
    throw new UsageError(`cannot open network namespace '${spec}' (${path}): ${code ?? (e as Error).message}`);
  }
  try {
    // nsfs files are regular files to fstat; a directory, FIFO, socket or device is not a namespace.
    const st = fstatSync(fd);
    if (!st.isFile()) throw new UsageError(`'${spec}' is not a network namespace (${path} is ${fileKind(st)}, not a namespace file)`);
    const type = Number(libc('ioctl')(fd, NS_GET_NSTYPE));
    if (type < 0)
      throw new UsageError(
        `'${spec}' is not a network namespace (${path} is not a namespace file: NS_GET_NSTYPE failed with ${errnoName(lastErrno())}); give a name from ${NETNS_RUN_DIR} or a path such as /proc/PID/ns/net`,
      );
    if (type !== CLONE_NEWNET)
      throw new UsageError(`'${spec}' is not a network namespace (${path} is ${NAMESPACE_TYPES.get(type) ?? `a namespace of type 0x${type.toString(16)}`})`);
    return fd;
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/** The other namespace types NS_GET_NSTYPE reports (CLONE_NEW* in linux/sched.h), for the message. */
const NAMESPACE_TYPES = new Map<number, string>([
  [0x00000080, 'a time namespace'],
  [0x00020000, 'a mount namespace'],
  [0x02000000, 'a cgroup namespace'],
  [0x04000000, 'a UTS namespace'],
  [0x08000000, 'an IPC namespace'],
  [0x10000000, 'a user namespace'],
  [0x20000000, 'a PID namespace'],
]);

function fileKind(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

function enter(fd: number, spec: string, path: string): void {
  if (libc('setns')(fd, CLONE_NEWNET) === 0) return;
  const errno = lastErrno();
  const code = errnoName(errno);
  if (code === 'EINVAL') throw new UsageError(`'${spec}' is not a network namespace (${path}: setns(CLONE_NEWNET) refused it: EINVAL)`);
  throw new SocketError(
    'setns',
    errno,
    `cannot enter network namespace '${spec}' (${path}): setns failed: ${code}${code === 'EPERM' ? ' (needs CAP_SYS_ADMIN: run as root)' : ''}`,
  );
}

/**
 * Run `f` with this thread in the network namespace `spec`, then return to
 * the thread's own namespace. `f` must be synchronous (it runs between the
 * two setns calls; nothing else runs meanwhile). Without `spec`, just `f()`.
 * @param spec NAME (under /run/netns) or PATH; undefined: the current namespace
 * @throws {UsageError} the namespace does not exist, or the file is not a network namespace
 * @throws {SynplugError} (`permission`) not allowed to open or enter it
 * @throws {SocketError} setns failed otherwise; or returning to the own namespace failed (category `kernel`)
 * @throws {LibcError} this C library has no setns
 */
export function withNetns<T>(spec: string | undefined, f: () => T): T {
  if (spec === undefined) return f();
  const path = netnsPath(spec);
  const own = openSync(OWN_NETNS, 'r');
  try {
    // A pinned namespace is entered through its one descriptor, never opened again.
    const pin = pins.get(spec);
    const target = pin?.fd ?? openNs(spec, path);
    try {
      enter(target, spec, path);
    } finally {
      if (!pin) closeSync(target);
    }
    // Run f, then return home whatever f did; failing to return outweighs f's own error.
    let outcome: { value: T } | { error: unknown };
    try {
      outcome = { value: f() };
    } catch (error) {
      outcome = { error };
    }
    if (libc('setns')(own, CLONE_NEWNET) !== 0) {
      const errno = lastErrno();
      throw new SocketError(
        'setns',
        errno,
        `could not return to the process's own network namespace after opening a socket in '${spec}': setns failed: ${errnoName(errno)}`,
        undefined,
        'kernel',
      );
    }
    if ('error' in outcome) throw outcome.error;
    return outcome.value;
  } finally {
    closeSync(own);
  }
}

/**
 * The cookie of a network namespace: SO_NETNS_COOKIE of a socket made in it
 * (Linux 5.14+). The kernel gives each namespace its own from a 64-bit
 * counter and never gives it to another, unlike the inode number of the
 * namespace file, which a namespace made after one was deleted gets again.
 * @param spec NAME (under /run/netns) or PATH; undefined: the current namespace
 * @returns the cookie in decimal, or undefined when the kernel has no SO_NETNS_COOKIE (ENOPROTOOPT: before 5.14)
 * @throws {UsageError} the namespace does not exist, or the file is not a network namespace
 * @throws {SynplugError} (`permission`) not allowed to open or enter it
 * @throws {SocketError} the socket cannot be made or asked
 */
export function netnsCookie(spec: string | undefined): string | undefined {
  const fd = withNetns(spec, () => {
    const r = libc('socket')(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0);
    if (r < 0) {
      const errno = lastErrno();
      throw new SocketError('socket', errno, `cannot make a socket to learn the network namespace's cookie: ${errnoName(errno)}`);
    }
    return r as number;
  });
  try {
    const v = Buffer.alloc(8);
    if (libc('getsockopt')(fd, SOL_SOCKET, SO_NETNS_COOKIE, v, [8]) !== 0) {
      const errno = lastErrno();
      if (errnoName(errno) === 'ENOPROTOOPT') return undefined;
      throw new SocketError('getsockopt', errno, `cannot read the network namespace's cookie (SO_NETNS_COOKIE): ${errnoName(errno)}`);
    }
    return v.readBigUInt64LE(0).toString();
  } finally {
    libc('close')(fd);
  }
}

/**
 * Check that `spec` names a network namespace this process can enter, now
 * (enter it and come back): for a CLI that wants to refuse a bad `--netns`
 * before doing anything.
 * @throws {UsageError} it does not exist, or is not a network namespace
 * @throws {SynplugError} (`permission`) not allowed to open or enter it
 */
export function checkNetns(spec: string): void {
  withNetns(spec, () => undefined);
}

/**
 * A network namespace as a caller gives it (the CLI's `--netns`, the guard's
 * per-call `netns` option): a NAME under /run/netns, a PATH, or a descriptor
 * of this process open on a namespace file.
 */
export type NetnsSpec = string | number;

/**
 * A namespace given by a caller, in the form every process of synplug's can
 * open: a relative path made absolute, `/proc/self/...` and a descriptor made
 * `/proc/PID/...` of this process (a child such as the guard's watchdog opens
 * it while this process lives). Nothing is opened ({@link checkedNetns} does).
 * @param spec NAME, PATH, or a descriptor (a whole number)
 * @param what how the message names the value, e.g. `--netns` or `setup: option 'netns'`
 * @returns the namespace as a NAME or an absolute PATH
 * @throws {UsageError} empty, or a number that is not a descriptor
 */
export function netnsSpecOf(spec: NetnsSpec, what: string): string {
  if (typeof spec === 'number') {
    if (!Number.isInteger(spec) || spec < 0) throw new UsageError(`${what}: ${spec} is not a file descriptor (a whole number, 0 or more)`);
    return `/proc/${process.pid}/fd/${spec}`;
  }
  if (typeof spec !== 'string' || spec === '') throw new UsageError(`${what} is empty: give a name from ${NETNS_RUN_DIR} or a path such as /proc/PID/ns/net`);
  return spec.includes('/') ? resolve(spec).replace(/^\/proc\/self\//, `/proc/${process.pid}/`) : spec;
}

/**
 * Check a namespace given by a caller, as the CLI checks `--netns`
 * ({@link netnsSpecOf}, then {@link checkNetns}: the file is opened
 * non-blocking and must be a network namespace this process can enter).
 * @param spec NAME, PATH, or a descriptor (a whole number)
 * @param what how the message names the value, e.g. `--netns`
 * @returns the namespace as a NAME or an absolute PATH
 * @throws {UsageError} empty, not a descriptor, does not exist, or not a network namespace
 * @throws {SynplugError} (`permission`) not allowed to open or enter it
 */
export function checkedNetns(spec: NetnsSpec, what: string): string {
  const s = netnsSpecOf(spec, what);
  checkNetns(s);
  return s;
}

/** The namespaces this process holds open ({@link pinNetns}), by the spec as given: the descriptor, and how many pins share it. */
const pins = new Map<string, { fd: number; refs: number }>();

/**
 * Open a namespace ONCE and make every later use of `spec` go through that
 * descriptor: the file is opened non-blocking and checked (a network
 * namespace), and every socket, cookie and check of `spec` from then on
 * ({@link withNetns}) enters it with setns on the same descriptor, so a path
 * that another user can change (a symbolic link swapped between two
 * namespaces, a `/proc/PID` whose process exits and whose number is reused)
 * is resolved once, not once per socket. A child gets the descriptor itself
 * ({@link netnsForChild}), never the path. Pins of the same spec share one
 * descriptor until the last {@link unpinNetns}.
 * @param spec NAME (under /run/netns) or PATH
 * @throws {UsageError} it does not exist, or is not a network namespace
 * @throws {SynplugError} (`permission`) not allowed to open it
 */
export function pinNetns(spec: string): void {
  const pin = pins.get(spec);
  if (pin) pin.refs++;
  else pins.set(spec, { fd: openNs(spec, netnsPath(spec)), refs: 1 });
}

/** Undo one {@link pinNetns} of `spec`: the last one closes its descriptor (nothing for a spec not pinned). */
export function unpinNetns(spec: string): void {
  const pin = pins.get(spec);
  if (!pin || --pin.refs > 0) return;
  pins.delete(spec);
  closeSync(pin.fd);
}

/**
 * How a child process (the guard's watchdog, the queue's holder) gets the
 * namespace of this call ({@link defaultNetns}): the descriptor itself,
 * inherited at `index` of its stdio, and {@link NETNS_ENV} naming it
 * `/proc/self/fd/INDEX`, so the child never opens the path again
 * ({@link NETNS_NAME_ENV} keeps the name for its messages).
 * @param index the child's descriptor number for it (3 or more: after stdin, stdout, stderr)
 * @returns undefined in the current namespace; else the descriptor to pass at `index` and the environment entry
 * @throws {UsageError} a namespace not pinned yet that no longer exists or is not one (it is pinned now)
 * @throws {SynplugError} (`permission`) not allowed to open it
 */
export function netnsForChild(index: number): { fd: number; env: Record<string, string> } | undefined {
  const ns = defaultNetns();
  if (ns === undefined) return undefined;
  if (!pins.has(ns)) pinNetns(ns); // held for the process's life, as the environment's is
  return { fd: pins.get(ns)!.fd, env: { [NETNS_ENV]: `/proc/self/fd/${index}`, [NETNS_NAME_ENV]: netnsLabel(ns) } };
}

/** The namespace of the current call ({@link runInNetns}), through every await and timer it starts. */
const callNetns = new AsyncLocalStorage<string>();

/**
 * Run `f` with {@link defaultNetns} answering `spec` for `f` and everything
 * it starts (awaits, timers, callbacks: node's AsyncLocalStorage), and only
 * for them: calls running meanwhile keep their own namespace. The guard's
 * per-call `netns` option; every connection `f` opens without a `netns` of
 * its own, and every child the guard starts, use `spec`.
 * @param spec NAME or PATH (check it first: {@link checkedNetns})
 * @param f the call
 * @returns what `f` returns
 * @throws {UsageError} an empty name, `.` or `..`
 */
export function runInNetns<T>(spec: string, f: () => T): T {
  netnsPath(spec);
  return callNetns.run(spec, f);
}

let processDefault: string | undefined;

/**
 * Set the namespace every {@link NetlinkConnection.open} without a `netns`
 * option uses, for the whole process (the CLI's `--netns`).
 * @param spec NAME or PATH; undefined: back to the environment's {@link NETNS_ENV}, else the current namespace
 * @throws {UsageError} an empty name, `.` or `..`; it does not exist, or is not a network namespace (opened now, once: {@link pinNetns})
 * @throws {SynplugError} (`permission`) not allowed to open it
 */
export function setDefaultNetns(spec: string | undefined): void {
  if (spec !== undefined) netnsPath(spec);
  // Opened once, now, for the whole process (the namespace every socket is then made in).
  if (spec !== undefined) pinNetns(spec);
  if (processDefault !== undefined) unpinNetns(processDefault);
  processDefault = spec;
}

/**
 * The namespace connections open in by default: the current call's
 * ({@link runInNetns}), else the one given to {@link setDefaultNetns}, else
 * the environment variable {@link NETNS_ENV} when set and not empty, else
 * undefined (the current namespace).
 */
export function defaultNetns(): string | undefined {
  const call = callNetns.getStore();
  if (call !== undefined) return call;
  if (processDefault !== undefined) return processDefault;
  const env = process.env[NETNS_ENV];
  if (!env) return undefined;
  // Opened once, at its first use (a child's: the descriptor it inherited), then through that descriptor; one that
  // cannot be opened is left to the next open, which says why.
  if (!pins.has(env)) {
    try {
      pinNetns(env);
    } catch {
      /* said at the open */
    }
  }
  return env;
}
