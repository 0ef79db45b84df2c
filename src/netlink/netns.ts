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
import { closeSync, openSync } from 'node:fs';
import { SynplugError, UsageError } from './errors.js';
import { CLONE_NEWNET, lastErrno, libc, SocketError } from './libc.js';
import { errnoName } from './errors.js';

/** Where `ip netns` keeps named namespaces (iproute2's NETNS_RUN_DIR). */
export const NETNS_RUN_DIR = '/run/netns';

/**
 * The environment variable {@link defaultNetns} falls back to: a child
 * process (the guard's watchdog) started with it set opens its sockets in
 * the same namespace as its parent.
 */
export const NETNS_ENV = 'SYNPLUG_NETNS';

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

function openNs(spec: string, path: string): number {
  try {
    return openSync(path, 'r');
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
    const target = openNs(spec, path);
    try {
      enter(target, spec, path);
    } finally {
      closeSync(target);
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
 * Check that `spec` names a network namespace this process can enter, now
 * (enter it and come back): for a CLI that wants to refuse a bad `--netns`
 * before doing anything.
 * @throws {UsageError} it does not exist, or is not a network namespace
 * @throws {SynplugError} (`permission`) not allowed to open or enter it
 */
export function checkNetns(spec: string): void {
  withNetns(spec, () => undefined);
}

let processDefault: string | undefined;

/**
 * Set the namespace every {@link NetlinkConnection.open} without a `netns`
 * option uses, for the whole process (the CLI's `--netns`).
 * @param spec NAME or PATH; undefined: back to the environment's {@link NETNS_ENV}, else the current namespace
 * @throws {UsageError} an empty name, `.` or `..` (checked now; existence is checked at the next open)
 */
export function setDefaultNetns(spec: string | undefined): void {
  if (spec !== undefined) netnsPath(spec);
  processDefault = spec;
}

/**
 * The namespace connections open in by default: the one given to
 * {@link setDefaultNetns}, else the environment variable {@link NETNS_ENV}
 * when set and not empty, else undefined (the current namespace).
 */
export function defaultNetns(): string | undefined {
  if (processDefault !== undefined) return processDefault;
  const env = process.env[NETNS_ENV];
  return env ? env : undefined;
}
