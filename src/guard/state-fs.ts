/**
 * The state directory's file operations, relative to the directory's file
 * descriptor: what synplug reads there decides what it removes as root, so
 * no name is resolved again after it was checked.
 *
 * {@link openCheckedDir} walks the path from `/` one component at a time,
 * each opened with `openat(parent, name, O_PATH|O_NOFOLLOW)` relative to the
 * one before, and checks each as sshd's StrictModes does:
 *
 * - every component is owned by root or by the effective user;
 * - none is writable by its group or by others, except a sticky directory
 *   (such as `/tmp`), whose next component is then checked for its owner
 *   (in a sticky directory nobody can rename or remove another's entry);
 * - a symbolic link on the way is followed only when it is owned by root or
 *   the user (its directory passed the checks, so nobody else made it); the
 *   target is walked again from `/` under the same rules; the state
 *   directory itself must not be a link;
 * - the state directory is owned by the effective user and writable by
 *   nobody else.
 *
 * The result, a {@link CheckedDir}, holds the directory's descriptor (and its
 * parent's, to remove it): files are opened (`openat` with `O_NOFOLLOW`),
 * replaced (`renameat`), removed (`unlinkat`) and examined (`fstat` of an
 * `O_PATH|O_NOFOLLOW` descriptor) relative to it. Node's `fs` has no
 * directory-relative calls, so these go through koffi (src/netlink/libc.ts);
 * reading, writing and fstat of a descriptor are Node's own.
 *
 * Each process pins the state directory at its first open of it (its
 * identity: device, inode, birth time; a watchdog or holder the identity its
 * starter passes, {@link pinStateDir}) and keeps a descriptor of it: a later
 * open whose path names another directory while the pinned one still exists
 * (renamed, with a link, a bind mount, a fresh directory or nothing in its
 * place) is a {@link StateDirSwappedError}; a pinned directory that was
 * removed leaves the path free. What has no descriptor-relative call (a unix
 * socket's bind and connect) goes through the pinned descriptor's
 * `/proc/self/fd/N` ({@link pinnedFilePath}).
 *
 * @module
 */
import {
  closeSync,
  fchmodSync,
  constants as fsConstants,
  fstatSync,
  lstatSync,
  readdirSync,
  readlinkSync,
  readSync,
  writeSync,
  type BigIntStats,
  type Stats,
} from 'node:fs';
import { posix } from 'node:path';
import { createHash } from 'node:crypto';
import { errnoName } from '../netlink/errors.js';
import { AT_FDCWD, AT_REMOVEDIR, lastErrno, libc, O_CLOEXEC, O_PATH, SocketError } from '../netlink/libc.js';
import { StateFileError } from './errors.js';
import { UsageError } from '../netlink/errors.js';

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = fsConstants;

/** S_ISVTX (linux/stat.h): the sticky bit */
const S_ISVTX = 0o1000;

/** At most this many symbolic links are followed on the way to the state directory (the kernel's MAXSYMLINKS). */
const MAX_LINKS = 40;

/**
 * The errnos of a write that mean the disk refused it (no space, read-only,
 * quota, I/O error...): category `failure` (exit 1, as the help documents),
 * not `bad-state`. Every other refusal is something at a name that synplug
 * did not put there (a link, a directory): `bad-state`.
 */
const SAFETY_ERRNOS = new Set(['ELOOP', 'EISDIR', 'ENOTDIR', 'EEXIST', 'ENOTEMPTY']);

/** The category of a failed write or create: `bad-state` for what a name holds, `failure` for the disk. */
export function writeErrorCategory(code: string | undefined): 'bad-state' | 'failure' {
  return code !== undefined && SAFETY_ERRNOS.has(code) ? 'bad-state' : 'failure';
}

/** Run a libc call; a negative result is a {@link SocketError} naming the call and the file. */
function call(name: 'openat' | 'mkdirat' | 'unlinkat' | 'renameat' | 'readlinkat', file: string, f: () => number | bigint): number {
  const r = Number(f());
  if (r >= 0) return r;
  const errno = lastErrno();
  return fail(name, errno, file);
}

function fail(name: string, errno: number, file: string): never {
  throw new SocketError(name, errno, `${name} ${file}: ${errnoName(errno)}`, undefined, 'failure');
}

/** The errno name of a failure from this module or from Node's fs. */
export function errorCode(e: unknown): string | undefined {
  if (e instanceof SocketError) return e.code;
  const c = (e as NodeJS.ErrnoException | undefined)?.code;
  return typeof c === 'string' ? c : undefined;
}

/** openat(2) with O_CLOEXEC always added. @throws {SocketError} */
function openAt(dirfd: number, name: string, flags: number, file: string, mode = 0): number {
  return call('openat', file, () => libc('openat')(dirfd, name, flags | O_CLOEXEC, 'int', mode));
}

/** The target of the symbolic link an O_PATH|O_NOFOLLOW descriptor names. @throws {SocketError} */
function readLink(fd: number, file: string): string {
  const buf = Buffer.alloc(4096);
  const n = call('readlinkat', file, () => libc('readlinkat')(fd, '', buf, buf.length));
  return buf.subarray(0, n).toString();
}

const modeText = (st: Stats): string => (st.mode & 0o7777).toString(8).padStart(4, '0');
const writableBy = (st: Stats): string => (st.mode & 0o002 ? 'everyone' : 'its group');

/** A directory's identity from an fstat of its descriptor: st_dev, st_ino and the birth time ({@link CheckedDir.identity}). */
function identityOf(fd: number): string {
  const st = fstatSync(fd, { bigint: true });
  return `${st.dev}:${st.ino}:${st.birthtimeNs}`;
}

/**
 * The state directories this process pinned, by absolute path: the identity
 * of the directory the path named at the process's first open of it (or the
 * one its starter passed: {@link pinStateDir}), and a descriptor of that
 * directory (O_PATH), kept open for as long as the process runs: what the
 * holder's sockets are reached through, and how a removal is told from a
 * rename.
 */
const pins = new Map<string, { identity: string; fd?: number }>();

/** The key of a state directory in {@link pins}: its absolute path. */
const pinKey = (path: string): string => posix.resolve(path);

/**
 * Whether the pinned directory still exists (a descriptor of a removed
 * directory sees a link count of 0): one that does is elsewhere now (renamed,
 * hidden under a mount), so a path naming another directory is a swap; one
 * that was removed (a teardown, by any process) makes the path free for a
 * directory of its own. Without a descriptor (a watchdog or holder not yet
 * past its first open), it is taken to exist.
 */
function pinnedStillExists(pin: { fd?: number }): boolean {
  if (pin.fd === undefined) return true;
  return fstatSync(pin.fd).nlink > 0;
}

/**
 * A state directory path that names another directory than the one this
 * process pinned at its first open of it (renamed, with a symbolic link, a
 * bind mount or a fresh directory put in its place, or nothing): nothing is
 * read, written, removed, bound or unlinked through that path any more
 * (category `bad-state`).
 */
export class StateDirSwappedError extends StateFileError {
  /**
   * @param path the state directory as given
   * @param pinned the identity pinned (st_dev:st_ino:birth time)
   * @param now what the path names now: another identity, `a symbolic link to T`, or `nothing`
   * @param movedTo where the pinned directory is now (the kernel's path of its descriptor), when known
   * @param released the hold was released without its records (leases.ts's dropLease)
   * @param notRun the refusal ended a protect before its command started (window.ts)
   */
  constructor(
    path: string,
    readonly pinned: string,
    readonly now: string,
    readonly movedTo?: string,
    readonly released = false,
    readonly notRun = false,
  ) {
    super(
      path,
      `state directory ${path} is no longer the directory this process started with (device:inode:birth ${pinned}${
        movedTo !== undefined && movedTo !== path ? `, now at ${escapeControl(movedTo)}` : ''
      }); the path now names ${now}: it was renamed or replaced while synplug ran, so nothing was read, written or removed through it since${
        released ? '; the hold was released all the same, and nothing was recorded' : ''
      }. Find out who moved it; the records synplug kept are in the directory it started with${notRun ? '. The command was NOT run' : ''}`,
    );
    this.name = 'StateDirSwappedError';
  }

  /** The same refusal, saying that the hold was released all the same. */
  afterRelease(): StateDirSwappedError {
    return new StateDirSwappedError(this.path, this.pinned, this.now, this.movedTo, true, this.notRun);
  }

  /** The same refusal, saying that the command protect was to run was not run. */
  commandNotRun(): StateDirSwappedError {
    return new StateDirSwappedError(this.path, this.pinned, this.now, this.movedTo, this.released, true);
  }
}

/**
 * Pin a state directory to the identity its starter pinned (the watchdog and
 * the queue holder, separate processes, are given the identity their parent
 * had, never re-reading the path to learn it): from now on a path that names
 * another directory is refused ({@link StateDirSwappedError}), from the
 * first open on.
 * @param path the state directory
 * @param identity {@link CheckedDir.identity} of the directory the parent pinned (undefined: nothing is pinned here)
 */
export function pinStateDir(path: string, identity: string | undefined): void {
  if (identity === undefined || pins.has(pinKey(path))) return;
  pins.set(pinKey(path), { identity });
  // Its descriptor now, while the path names it (what the sockets are reached through); a failure is said by the next open.
  try {
    openCheckedDir(path, false)?.close();
  } catch {
    /* refused at the next use */
  }
}

/**
 * The identity this process pinned for a state directory, to pass to a
 * watchdog or holder it starts ({@link pinStateDir}).
 * @returns undefined when the process has not opened it yet
 */
export function pinnedStateDir(path: string): string | undefined {
  return pins.get(pinKey(path))?.identity;
}

/**
 * A path to a file of the state directory this process pinned that goes
 * through the pinned directory's descriptor (`/proc/self/fd/N/NAME`), for
 * what has no call relative to a descriptor (a unix socket's bind and
 * connect): it reaches the pinned directory wherever it was moved, never a
 * directory put in its place. Without a descriptor of it (not opened yet in
 * this process, or removed since) the directory is opened first (checked,
 * pinned: a swapped one is refused).
 * @returns that path, or undefined when the directory does not exist
 * @throws {StateFileError} the directory is unsafe, or swapped ({@link StateDirSwappedError})
 */
export function pinnedFilePath(path: string, name: string): string | undefined {
  const pin = pins.get(pinKey(path));
  let fd = pin && pinnedStillExists(pin) ? pin.fd : undefined;
  if (fd === undefined) {
    const d = openCheckedDir(path, false);
    if (!d) return undefined;
    d.close();
    fd = pins.get(pinKey(path))?.fd;
  }
  return fd === undefined ? undefined : `/proc/self/fd/${fd}/${name}`;
}

/**
 * The state directory this process pinned, opened through its descriptor
 * wherever it is now (renamed, hidden under a mount), never through its
 * path: where a process whose path was swapped keeps its own records true
 * (leases.ts's dropLease). Checked as at its first open (owned by this user,
 * writable by nobody else); its messages name the path as given.
 * @returns undefined when nothing is pinned for the path, or the pinned directory was removed
 * @throws {StateFileError} it is unsafe now
 */
export function openPinnedDir(path: string): CheckedDir | undefined {
  const pin = pins.get(pinKey(path));
  if (pin?.fd === undefined || !pinnedStillExists(pin)) return undefined;
  const fd = openAt(pin.fd, '.', O_PATH | O_DIRECTORY, path);
  try {
    checkStateDir(fstatSync(fd), path, whoIsTrusted().euid, STATE_DIR_ROLE);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  // no parent descriptor: a directory reached so is never removed through it
  return new CheckedDir(path, fd, fd, '', false);
}

/**
 * Judge what a pinned state directory's path names now, before it is used.
 * @param now the identity it names now, or what it is when no directory (`nothing`, `a symbolic link to T`)
 * @returns whether the caller pins the directory it opened (no pin yet, or the pinned one was removed)
 * @throws {StateDirSwappedError} the path names another directory while the pinned one still exists
 */
function judgePin(path: string, now: { identity?: string; what: string }): boolean {
  const pin = pins.get(pinKey(path));
  if (!pin) return now.identity !== undefined;
  if (now.identity === pin.identity) return pin.fd === undefined;
  if (pinnedStillExists(pin)) throw new StateDirSwappedError(path, pin.identity, now.what, pinnedPathNow(pin));
  // Removed (by a teardown): the path is free again, and a directory made there is its own.
  dropPin(path);
  return now.identity !== undefined;
}

/** Where a pinned directory is now: the kernel's path of its descriptor (/proc/self/fd/N), or undefined without one. */
function pinnedPathNow(pin: { fd?: number }): string | undefined {
  if (pin.fd === undefined) return undefined;
  try {
    return readlinkSync(`/proc/self/fd/${pin.fd}`);
  } catch {
    return undefined;
  }
}

/** Forget a pin (the directory was removed), closing its descriptor. */
function dropPin(path: string): void {
  const pin = pins.get(pinKey(path));
  if (pin?.fd !== undefined) closeSync(pin.fd);
  pins.delete(pinKey(path));
}

/**
 * The state directory, open and checked: every file operation is relative to
 * {@link CheckedDir.fd}. Close it with {@link CheckedDir.close}.
 */
export class CheckedDir {
  /**
   * @param path the state directory as given (for messages)
   * @param fd the directory's descriptor (O_PATH)
   * @param parentFd its parent's descriptor (O_PATH), to remove it
   * @param name its name in the parent
   * @param created this walk created it
   */
  constructor(
    readonly path: string,
    readonly fd: number,
    private readonly parentFd: number,
    private readonly name: string,
    readonly created: boolean,
  ) {}

  /**
   * The directory's identity (st_dev, st_ino and, where the file system
   * keeps it, the birth time, from an fstat of its descriptor): two
   * directories that exist at once never share it, and a path that comes to
   * name another directory (renamed, replaced) names another identity.
   */
  identity(): string {
    return identityOf(this.fd);
  }

  /** The directory's mark: 16 hex digits of a SHA-256 of its {@link identity} ({@link stateDirMark}). */
  mark(): string {
    return markOf(this.identity());
  }

  /** The path of a file in the directory, for messages. */
  file(name: string): string {
    return posix.join(this.path, name);
  }

  /**
   * Read a regular file whole, opened with O_NOFOLLOW|O_NONBLOCK (a FIFO
   * never blocks), its owner, link count and size checked before a byte is
   * read ({@link foreignFile}).
   * @param cap the largest size accepted, bytes
   * @param what what to do, appended to the messages
   * @returns undefined when the file does not exist
   * @throws {StateFileError} a link, not a regular file, another user's, with more than one name, larger than `cap`, or unreadable
   */
  read(name: string, cap: number, what: string): Buffer | undefined {
    const p = this.file(name);
    let fd: number;
    try {
      fd = openAt(this.fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, p);
    } catch (e) {
      const code = errorCode(e);
      if (code === 'ENOENT') return undefined;
      if (code === 'ELOOP') throw new StateFileError(p, `${p} is a symbolic link; synplug never follows links in its state directory: remove it (${what})`, e);
      throw new StateFileError(p, `cannot read ${p}: ${code} (${what})`, e);
    }
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) throw new StateFileError(p, `${p} is not a regular file: remove it (${what})`);
      const foreign = foreignFile(st);
      if (foreign !== undefined) throw new StateFileError(p, `${p} ${foreign}, so it is not read: remove it (${what}), and find out who made it`);
      if (st.size > cap)
        throw new StateFileError(
          p,
          `${p} is ${st.size} bytes, more than synplug ever writes there (at most ${cap}): it is not a record synplug wrote: remove it (${what})`,
        );
      // One byte more than fstat said: synplug replaces records by a rename, never in place, so a file that grew
      // while it was read is not one of its records.
      const buf = Buffer.allocUnsafe(st.size + 1);
      let n = 0;
      for (let r = 1; r > 0 && n < buf.length; n += r) r = readSync(fd, buf, n, buf.length - n, null);
      if (n > st.size)
        throw new StateFileError(p, `${p} grew while it was read: synplug replaces its records whole, so it is not one synplug wrote: remove it (${what})`);
      return buf.subarray(0, n);
    } catch (e) {
      if (e instanceof StateFileError) throw e;
      throw new StateFileError(p, `cannot read ${p}: ${errorCode(e) ?? (e as Error).message} (${what})`, e);
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Replace a file atomically: a temporary file created with
   * O_CREAT|O_EXCL|O_NOFOLLOW (a file or link already at its name is
   * removed, never written through), given `mode` whatever the umask
   * (fchmod), then renameat over the old name (which replaces a link itself,
   * never its target).
   * @param mode the file's permissions: 0600 (owner-only, as every record is; the default), or 0644 for a file
   *   others read (the metrics file, which node_exporter reads as its own user)
   * @throws {StateFileError} category `failure` when the disk refuses (ENOSPC, EROFS...), `bad-state` when a name holds something synplug did not put there
   */
  writeAtomic(name: string, data: Buffer, mode: 0o600 | 0o644 = 0o600): void {
    const target = this.file(name);
    const tmp = `.${name}.${process.pid}.tmp`;
    const flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW;
    try {
      let fd: number;
      try {
        fd = openAt(this.fd, tmp, flags, this.file(tmp), 0o600);
      } catch (e) {
        if (errorCode(e) !== 'EEXIST') throw e;
        // Left by a crash, or planted: remove the name (unlinkat never follows a link) and create it afresh.
        call('unlinkat', this.file(tmp), () => libc('unlinkat')(this.fd, tmp, 0));
        fd = openAt(this.fd, tmp, flags, this.file(tmp), 0o600);
      }
      try {
        fchmodSync(fd, mode);
        for (let off = 0; off < data.length; ) off += writeSync(fd, data, off);
      } finally {
        closeSync(fd);
      }
      call('renameat', target, () => libc('renameat')(this.fd, tmp, this.fd, name));
    } catch (e) {
      libc('unlinkat')(this.fd, tmp, 0); // not created, or already renamed: ENOENT, ignored
      const code = errorCode(e);
      const category = writeErrorCategory(code);
      throw new StateFileError(
        target,
        category === 'failure'
          ? `cannot write ${target}: ${code ?? (e as Error).message}${code ? ` (${diskErrorText(code)})` : ''}: free space on that file system or make it writable, then run the command again`
          : `cannot write ${target}: ${code}: something that synplug did not put there is in the way in ${this.path}: remove it`,
        e,
        category,
      );
    }
  }

  /**
   * Remove a file (unlinkat never follows a link: a link is removed itself).
   * @returns whether it existed
   * @throws {SocketError} the unlink failed otherwise
   */
  unlink(name: string): boolean {
    if (libc('unlinkat')(this.fd, name, 0) === 0) return true;
    const errno = lastErrno();
    if (errnoName(errno) === 'ENOENT') return false;
    return fail('unlinkat', errno, this.file(name));
  }

  /**
   * Open a file with O_NOFOLLOW (and O_CLOEXEC), relative to the directory.
   * @returns the descriptor (close it with closeSync)
   * @throws {SocketError} open failed (ELOOP: a link)
   */
  open(name: string, flags: number, mode = 0): number {
    return openAt(this.fd, name, flags | O_NOFOLLOW, this.file(name), mode);
  }

  /**
   * The file's own status (a link's, not its target's).
   * @returns undefined when it does not exist
   * @throws {SocketError} it cannot be examined otherwise
   */
  stat(name: string): BigIntStats | undefined {
    let fd: number;
    try {
      fd = openAt(this.fd, name, O_PATH | O_NOFOLLOW, this.file(name));
    } catch (e) {
      if (errorCode(e) === 'ENOENT') return undefined;
      throw e;
    }
    try {
      return fstatSync(fd, { bigint: true });
    } finally {
      closeSync(fd);
    }
  }

  /** The names in the directory, sorted (read through its descriptor: the directory checked, never a path swapped since). */
  names(): string[] {
    return readdirSync(`/proc/self/fd/${this.fd}`).sort();
  }

  /**
   * Remove the directory itself when it is empty (unlinkat(parent, name, AT_REMOVEDIR)).
   * @returns whether it was removed (false: not empty, or already gone)
   */
  removeSelf(): boolean {
    if (libc('unlinkat')(this.parentFd, this.name, AT_REMOVEDIR) !== 0) return false;
    // Its own removal: a directory made at the path later is this process's own again.
    if (pins.get(pinKey(this.path))?.identity === this.identity()) dropPin(this.path);
    return true;
  }

  /** Close the descriptors. */
  close(): void {
    closeSync(this.fd);
    if (this.parentFd !== this.fd) closeSync(this.parentFd);
  }
}

/**
 * What makes a file in the state directory one synplug did not write: it
 * writes its records as the effective user, each under one name (a
 * temporary file renamed over the old one). A file of another user (neither
 * root nor the caller) was written by that user; a file with more than one
 * name (a hard link, st_nlink > 1) may be another directory's file, whose
 * other name reaches it.
 * @returns the rest of a sentence after the file's path, or undefined when it is the user's (or root's) and has one name
 */
export function foreignFile(st: { uid: number; nlink: number }): string | undefined {
  const { euid, trusted } = whoIsTrusted();
  if (!trusted(st.uid))
    return `belongs to uid ${st.uid}, neither root nor this user (uid ${euid}): synplug writes its files as the user it runs as, so another user wrote it`;
  if (st.nlink > 1)
    return `has ${st.nlink} names (a hard link): synplug gives each of its files one name, so another name reaches it (another directory's file, perhaps)`;
  return undefined;
}

/** A few words on a disk errno, for the messages. */
function diskErrorText(code: string): string {
  const t: Record<string, string> = {
    ENOSPC: 'no space left on the device',
    EROFS: 'the file system is read-only',
    EDQUOT: 'the disk quota is exceeded',
    EIO: 'an I/O error',
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
  };
  return t[code] ?? 'the system refused it';
}

/** The effective user, and who is trusted with a path: root and that user. */
function whoIsTrusted(): { euid: number; trusted: (uid: number) => boolean } {
  const euid = process.geteuid?.() ?? 0;
  return { euid, trusted: (uid) => uid === 0 || uid === euid };
}

/** The components of a path resolved from `parts` (as path.resolve, from the working directory), without empty ones. */
function componentsOf(...parts: string[]): string[] {
  return posix
    .resolve(...parts)
    .split('/')
    .filter((c) => c !== '');
}

/**
 * How {@link openCheckedDir}'s messages name the directory it checks: the
 * state directory, or another directory held to the same rules (the metrics
 * file's, whose caller names it).
 */
export interface DirRole {
  /** before its path in a sentence of its own: `state directory ` (or '' where the caller's message names it) */
  noun: string;
  /** what it is, in the middle of a sentence: `the state directory` */
  name: string;
  /** what a link to it would lead synplug's writes to: `its state` */
  contents: string;
  /** how to give another one: `--state-dir (or SYNPLUG_STATE_DIR)` */
  option: string;
  /** the mode a directory of the user's own for it has, and why, in the advice: `mode 0700` */
  ownMode: string;
}

/** {@link openCheckedDir}'s default: the state directory. */
export const STATE_DIR_ROLE: DirRole = {
  noun: 'state directory ',
  name: 'the state directory',
  contents: 'its state',
  option: '--state-dir (or SYNPLUG_STATE_DIR)',
  ownMode: 'mode 0700',
};

/** Whether a UTF-16 code unit is a C0 or C1 control character or DEL, which a path given to synplug never needs and a terminal would act on. */
const isControl = (code: number): boolean => code < 0x20 || (code >= 0x7f && code <= 0x9f);

/** The index of the first control character in `s` ({@link isControl}), or -1. */
export function controlCharAt(s: string): number {
  for (let i = 0; i < s.length; i++) if (isControl(s.charCodeAt(i))) return i;
  return -1;
}

/** The escapes of the control characters that have a short one. */
const NAMED_ESCAPES: Record<number, string> = { 9: '\\t', 10: '\\n', 13: '\\r' };

/** A string with its control characters escaped (`\n`, `\t`, `\r`, else `\xHH`, or `\u00HH` for C1), to show it. */
export function escapeControl(s: string): string {
  let out = '';
  for (const c of s) {
    const code = c.charCodeAt(0);
    if (!isControl(code)) out += c;
    else out += NAMED_ESCAPES[code] ?? (code < 0x80 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`);
  }
  return out;
}

/**
 * Refuse a path with a `..` component: synplug would read it as text (the
 * component before it dropped), while the kernel follows a link before it
 * first, so it would name another directory than `ls` shows.
 * @param path the path as given
 * @param what how the message names it: `state directory`, `--metrics-file`, `--netns`
 * @throws {UsageError} it has a `..` component
 */
export function refuseDotDot(path: string, what: string): void {
  if (path.split('/').includes('..'))
    throw new UsageError(
      `${what} ${path} has a '..' component, which synplug would read as text while the kernel follows a symbolic link before it first (naming another directory than 'ls' shows): give the path without '..'`,
    );
}

/**
 * The mark of a state directory that synplug puts on the kernel pieces a
 * setup through it makes (teardown-marks.ts): 16 hex digits of a SHA-256 of
 * its {@link CheckedDir.identity}, so that a state directory recognises its
 * own pieces and never takes another's for its own.
 * @returns undefined when the directory does not exist; the pinned directory's mark when the path was swapped
 * @throws {StateFileError} it is unsafe (as {@link openCheckedDir})
 */
export function stateDirMark(path: string): string | undefined {
  let d: CheckedDir | undefined;
  try {
    d = openCheckedDir(path, false);
  } catch (e) {
    // swapped: this process's state directory is still the one it pinned (its pieces carry that one's mark), so that
    // what it armed can still be told for its own and removed ({@link StateDirSwappedError})
    if (e instanceof StateDirSwappedError) return markOf(e.pinned);
    throw e;
  }
  if (!d) return undefined;
  try {
    return d.mark();
  } finally {
    d.close();
  }
}

/** A state directory's mark from its identity ({@link CheckedDir.mark}). */
function markOf(identity: string): string {
  return createHash('sha256').update(identity).digest('hex').slice(0, 16);
}

/**
 * Open the state directory by the rules of the module doc, creating what is
 * missing when `create` (parents 0755, the directory 0700).
 * @param path the state directory (a relative path is taken from the working directory)
 * @param role how the messages name it (default: the state directory)
 * @returns the directory, or undefined when it (or a parent) does not exist and `create` is false
 * @throws {UsageError} the path has a `..` component ({@link refuseDotDot})
 * @throws {StateFileError} a component is unsafe, a link where the directory belongs, not a directory,
 *   or cannot be opened or created (category `failure` when the disk refused the creation)
 */
export function openCheckedDir(path: string, create: boolean, role: DirRole = STATE_DIR_ROLE): CheckedDir | undefined {
  const { euid, trusted } = whoIsTrusted();
  refuseDotDot(path, role.name);
  // The state directory is pinned at this process's first open of it: later opens must find that one (judgePin).
  const pinned = role === STATE_DIR_ROLE;
  let pinIt = false;
  let rest = componentsOf(path);
  let links = 0;
  restart: for (;;) {
    let fd = openAt(AT_FDCWD, '/', O_PATH | O_DIRECTORY, '/');
    let parentFd = fd;
    let here = '/';
    let created = false;
    try {
      checkParent(fstatSync(fd), '/', path, trusted, euid, role);
      for (let i = 0; i < rest.length; i++) {
        const name = rest[i]!;
        const last = i === rest.length - 1;
        const at = posix.join(here, name);
        let next: number;
        try {
          next = openAt(fd, name, O_PATH | O_NOFOLLOW, at);
          created = false;
        } catch (e) {
          const code = errorCode(e);
          if (code === 'ENOENT' && pinned) pinIt = judgePin(path, { what: 'nothing' });
          if (code === 'ENOENT' && !create) return undefined; // the finally closes
          if (code !== 'ENOENT') throw dirError(path, e, role);
          try {
            call('mkdirat', at, () => libc('mkdirat')(fd, name, last ? 0o700 : 0o755));
            created = last;
          } catch (e2) {
            if (errorCode(e2) !== 'EEXIST') throw createError(path, e2, role);
          }
          next = openAt(fd, name, O_PATH | O_NOFOLLOW, at);
        }
        const st = fstatSync(next);
        if (st.isSymbolicLink()) {
          try {
            if (last && pinned) judgePin(path, { what: `a symbolic link to ${escapeControl(readLink(next, at))}` });
            if (last)
              throw new StateFileError(
                path,
                `${role.noun}${path} is a symbolic link; synplug does not follow links to ${role.contents}: give the real directory with ${role.option}`,
              );
            if (!trusted(st.uid))
              throw new StateFileError(
                path,
                `${at}, a symbolic link on the path to ${role.name} ${path}, is owned by uid ${st.uid} (neither root nor this user, uid ${euid}): it could lead anywhere, so synplug refuses it; give the real path of ${role.name}`,
              );
            if (++links > MAX_LINKS) throw new StateFileError(path, `${role.noun}${path}: too many symbolic links on its path`);
            rest = componentsOf(here, readLink(next, at), ...rest.slice(i + 1));
          } finally {
            closeSync(next);
          }
          continue restart; // the finally closes
        }
        if (last && pinned) {
          try {
            const identity = identityOf(next);
            pinIt = judgePin(
              path,
              st.isDirectory() ? { identity, what: `another directory (device:inode:birth ${identity})` } : { what: 'a file that is not a directory' },
            );
          } catch (e) {
            closeSync(next);
            throw e;
          }
        }
        if (!st.isDirectory()) {
          closeSync(next);
          throw new StateFileError(
            path,
            last
              ? `${role.noun}${path} is not a directory; give a directory with ${role.option}`
              : `${role.noun}${path} cannot exist: a part of its path is not a directory (${at}); give a directory with ${role.option}`,
          );
        }
        try {
          if (last) checkStateDir(st, path, euid, role);
          else checkParent(st, at, path, trusted, euid, role);
        } catch (e) {
          closeSync(next);
          throw e;
        }
        if (parentFd !== fd) closeSync(parentFd);
        parentFd = fd;
        fd = next;
        here = at;
      }
      if (rest.length === 0) throw new StateFileError(path, `${role.noun}${path} is the root directory: give a directory of synplug's own`);
      const dir = new CheckedDir(path, fd, parentFd, rest[rest.length - 1]!, created);
      fd = parentFd = -1;
      if (pinIt) pins.set(pinKey(path), { identity: dir.identity(), fd: openAt(dir.fd, '.', O_PATH | O_DIRECTORY, path) });
      return dir;
    } finally {
      if (fd >= 0) {
        closeSync(fd);
        if (parentFd !== fd) closeSync(parentFd);
      }
    }
  }
}

/** A directory on the way: owned by root or the user; writable by nobody else unless sticky. */
function checkParent(st: Stats, at: string, path: string, trusted: (uid: number) => boolean, euid: number, role: DirRole): void {
  if (!st.isDirectory()) return;
  if (!trusted(st.uid))
    throw new StateFileError(
      path,
      `${at}, a directory on the path to ${role.name} ${path}, is owned by uid ${st.uid} (neither root nor this user, uid ${euid}): its owner could replace ${role.name}, so synplug refuses it; use a directory whose parents are root's or yours`,
    );
  if ((st.mode & 0o022) !== 0 && (st.mode & S_ISVTX) === 0)
    throw new StateFileError(
      path,
      `${at}, a directory on the path to ${role.name} ${path}, is writable by ${writableBy(st)} (mode ${modeText(st)}) and not sticky: anyone who can write it could replace ${role.name}, so synplug refuses it; use another directory (or, if ${at} is yours alone, 'chmod go-w ${at}')`,
    );
}

/** The state directory itself: owned by the effective user, writable by nobody else. */
function checkStateDir(st: Stats, path: string, euid: number, role: DirRole): void {
  if (st.uid !== euid)
    throw new StateFileError(
      path,
      `${role.noun}${path} is owned by uid ${st.uid}, not by this user (uid ${euid}): its files could have been written by someone else, so synplug refuses it; use a directory of your own (${role.ownMode})${role === STATE_DIR_ROLE ? ', or let synplug create one' : ''}`,
    );
  if ((st.mode & 0o022) !== 0)
    throw new StateFileError(
      path,
      `${role.noun}${path} is writable by ${writableBy(st)} (mode ${modeText(st)}): its files could have been written by someone else, so synplug refuses it; ${
        // A sticky one is shared on purpose (/tmp): taking others' right to write it would break them.
        (st.mode & S_ISVTX) !== 0
          ? `it is a shared directory (sticky): use a directory of your own inside it (${role.ownMode}), e.g. ${posix.join(path, 'synplug')}`
          : `if it is yours alone, 'chmod go-w ${path}'; else use a directory of your own`
      }`,
    );
}

function dirError(path: string, e: unknown, role: DirRole): StateFileError {
  return new StateFileError(path, `cannot use ${role.name} ${path}: ${errorCode(e) ?? (e as Error).message}`, e);
}

function createError(path: string, e: unknown, role: DirRole): StateFileError {
  const code = errorCode(e);
  return new StateFileError(
    path,
    `cannot create ${role.name} ${path}: ${code ?? (e as Error).message}${code ? ` (${diskErrorText(code)})` : ''}`,
    e,
    writeErrorCategory(code),
  );
}

/**
 * Check every component of a path that synplug opens by name but keeps in
 * no checked directory (a namespace file given with `--netns`), by the state
 * directory's rules: each directory on the way owned by root or the
 * effective user and writable by nobody else unless sticky; a symbolic link
 * followed only when it is root's or the user's (its target walked again
 * from `/`); the file itself root's or the user's. A last component that is
 * one of the kernel's magic links (`/proc/PID/ns/net`, `/proc/PID/fd/N`,
 * whose target is no path, or cannot be read) is judged by its owner alone.
 * Nothing is opened; a missing component is left to the open to report.
 * Race-free as far as the rules reach: no component that passed can be
 * changed by another user.
 * @param path an absolute path
 * @returns the sentence naming the component and its owner or mode, or undefined when every one passes
 */
export function untrustedPathComponent(path: string): string | undefined {
  const { euid, trusted } = whoIsTrusted();
  const owner = (st: Stats) => `owned by uid ${st.uid} (neither root nor this user, uid ${euid})`;
  let rest = componentsOf(path);
  let links = 0;
  restart: for (;;) {
    let here = '/';
    for (let i = 0; i < rest.length; i++) {
      const at = posix.join(here, rest[i]!);
      const last = i === rest.length - 1;
      let st: Stats;
      try {
        st = lstatSync(at);
      } catch {
        return undefined; // missing (or unreachable): the open says so
      }
      if (!trusted(st.uid)) return `${at}${st.isSymbolicLink() ? ', a symbolic link on its path,' : ''} is ${owner(st)}`;
      if (st.isSymbolicLink()) {
        let target: string;
        try {
          target = readlinkSync(at);
        } catch {
          if (last) return undefined; // a magic link the kernel does not show (another process's /proc/PID/ns/net)
          return `${at}, a symbolic link on its path, cannot be read`;
        }
        if (last && /^[a-z_]+:\[[0-9]+\]$/.test(target)) return undefined; // a magic link to a namespace
        if (++links > MAX_LINKS) return 'too many symbolic links on its path';
        rest = componentsOf(here, target, ...rest.slice(i + 1));
        continue restart;
      }
      if (!last && st.isDirectory() && (st.mode & 0o022) !== 0 && (st.mode & S_ISVTX) === 0)
        return `${at}, a directory on its path, is writable by ${writableBy(st)} (mode ${modeText(st)}) and not sticky`;
      here = at;
    }
    return undefined;
  }
}
