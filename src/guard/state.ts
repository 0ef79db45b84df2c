/**
 * The guard's state files under the state directory (default `/run/synplug`,
 * `/run/synplug/netns/<cookie>` in another network namespace: state-dir.ts;
 * a tmpfs: gone after a reboot, like the qdiscs themselves).
 *
 * - `setup.json`: what `setup` built and what it added, per hold (so that
 *   `teardown` removes exactly that);
 * - `leases.json`: the live leases on the holds (issue #12), changed only
 *   under an flock on `lock` (see leases.ts);
 * - `plug.json`: whether the plug is buffering, who plugged it and until when.
 *   sch_plug has no dump operation, so this file is the only record of the
 *   plug's state. It is written with "buffering" *before* the kernel call that
 *   plugs, and with "released" only *after* the kernel acked the release, so
 *   that it never says released while the kernel may still hold packets.
 *
 * ## The directory is a security boundary
 *
 * What these files say decides what synplug removes and releases, and synplug
 * runs as root. So (state-fs.ts):
 *
 * - every component of the directory's path from `/` is checked as sshd's
 *   StrictModes checks it: owned by root or the user, writable by nobody
 *   else unless sticky (then the next component's owner is what counts);
 *   the state directory itself is a real directory (not a symbolic link),
 *   owned by the effective user, with no group or world write bit;
 * - a missing one is created by synplug, mode 0700 (its parent directories
 *   0755), one component at a time relative to the one before;
 * - every file is opened, replaced (a temporary file created with
 *   O_CREAT|O_EXCL|O_NOFOLLOW, then renamed over the old one), examined and
 *   removed relative to the directory's descriptor, never by path again
 *   after the check: a link or a renamed directory cannot redirect them;
 * - the directory is pinned at the process's first open of it
 *   (state-fs.ts): a path that later names another directory (renamed, a
 *   link, a bind mount or a fresh directory in its place) is refused,
 *   naming both;
 * - files are read with O_NOFOLLOW and at most {@link RECORD_SIZE_CAP}
 *   bytes (the size is checked before reading);
 * - a record of an older format (setup.json version 1) is refused, with
 *   how to clear it.
 *
 * A file that cannot be read, or is not what synplug writes, is an error
 * ({@link StateFileError}) for every command, naming the file and what to do:
 * guessing would risk removing what is not synplug's, or calling a buffering
 * plug released.
 *
 * @module
 */
import { closeSync, constants as fsConstants, fstatSync, readFileSync, type BigIntStats } from 'node:fs';
import { isAbsolute, join, normalize } from 'node:path';
import { StateFileError } from './errors.js';
import { type CheckedDir, errorCode, openCheckedDir, openPinnedDir, writeErrorCategory } from './state-fs.js';
import { isKeyOfRecord, isRecordOfItsMode, recordRefusal } from './record-checks.js';
import { MAX_DURATION_MS } from './config.js';
import { defaultNetns, netnsCookie } from '../netlink/netns.js';
import { otherNetnsMessage } from './call-netns.js';
import { runsWatchdog } from './watchdog.js';

export { StateFileError };

/** One hold's part of `setup.json`: which mode, on which device, and what setup added. */
export interface HoldRecord {
  /** the mode's name in the registry, e.g. `local` */
  mode: string;
  /** the device the hold sits on */
  dev: string;
  /** ms since the epoch */
  createdAt: number;
  /** the mode's own fields */
  [field: string]: unknown;
}

/** The local (lo) hold's part of `setup.json`. */
export interface LocalHoldRecord extends HoldRecord {
  mode: 'local';
  /** the proxy's address */
  addr: string;
  /** the firewall mark (u32) */
  mark: number;
  /** plug limit, bytes */
  limit: number;
  /** nftables table name */
  table: string;
  /** setup added `addr` to `dev` (teardown removes it) */
  addedAddress: boolean;
  /** prefix length of the address setup added (32 or 128) */
  prefixlen: number;
}

/**
 * Contents of `setup.json` (version 2): every hold, keyed by its id (`local`,
 * `inbound:DEV`). A version 1 file (the local hold's fields at the top
 * level) is refused with how to clear it.
 */
export interface SetupRecord {
  version: 2;
  /** the holds set up, by id */
  holds: Record<string, HoldRecord>;
  /** setup created the state directory (teardown removes it again, empty, only when it still has {@link createdStateDirMark}) */
  createdStateDir?: boolean;
  /**
   * with `createdStateDir`: the mark (state-fs.ts's `stateDirMark`: its device, inode and birth time) of the
   * directory setup created. A copy of the record in another directory (one made by hand) names another mark, so
   * teardown leaves that directory; a record of an earlier synplug without it never removes its directory.
   */
  createdStateDirMark?: string;
  /** `setup --metrics-file`: the metrics file protect, plug and release write when given none (an absolute path) */
  metricsFile?: string;
  /**
   * the cookie (SO_NETNS_COOKIE, decimal) of the network namespace the holds are in; a command acting in another
   * namespace refuses the record ({@link StateStore.readSetup}). Absent: a kernel before 5.14, or an earlier synplug.
   */
  netns?: string;
}

/** Contents of `plug.json`. */
export interface PlugRecord {
  version: 1;
  state: 'buffering' | 'released';
  /** who plugged: `protect` (a running synplug protect) or `manual` (`synplug plug`) */
  owner: 'protect' | 'manual';
  /** pid of the process that plugged */
  pid: number;
  /** its start time (field 22 of /proc/PID/stat, clock ticks since boot), to detect pid reuse */
  pidStart?: number;
  /** pid of the watchdog that releases if the owner dies */
  watchdogPid?: number;
  /** the watchdog's start time (field 22 of /proc/PID/stat): a manual plug's record is live only while that same process lives */
  watchdogStart?: number;
  /** the devices of the holds it holds: `lo` for the local hold, DEV for an inbound one (`eth0`, `lo,eth0`) */
  dev: string;
  /** when the plug was (or was about to be) buffered, ms since the epoch */
  since: number;
  /** when the kernel-side set element expires and a stale plug must be released, ms since the epoch */
  deadline: number;
  /** when it was released, ms since the epoch */
  releasedAt?: number;
  /**
   * written by setup (no plug.json before it): nothing has held since that setup; `since` and `deadline` are the
   * setup's time, and there is no `releasedAt` (a plug or protect writes a record without it)
   */
  neverHeld?: true;
  /** when the watchdog's release failed, ms since the epoch (the record then still says buffering, for the next command to recover) */
  releaseFailedAt?: number;
  /** the cookie of the network namespace whose holds it records, as setup.json's (written by {@link StateStore.writePlug}); another namespace's is refused */
  netns?: string;
}

/**
 * One holder's claim on the holds (issue #12): a protect (or a manual plug)
 * holds them until it releases, dies or passes its deadline; the plug is
 * released when the last live lease is gone.
 */
export interface Lease {
  /** unique id (random hex) */
  id: string;
  /** `protect` (a running synplug protect) or `manual` (`synplug plug`: alive until its deadline while its watchdog lives) */
  owner: 'protect' | 'manual';
  /** pid of the holder */
  pid: number;
  /** its start time (field 22 of /proc/PID/stat), to detect pid reuse */
  pidStart?: number;
  /** pid of its watchdog, if any */
  watchdogPid?: number;
  /** the watchdog's start time (field 22 of /proc/PID/stat): a manual lease lives only while that same process lives ({@link manualHolderAlive}) */
  watchdogStart?: number;
  /** the protected command, when a protect holds it */
  command?: string[];
  /** the hold ids it buffers, e.g. `['local']` */
  holds: string[];
  /** when it was taken, ms since the epoch */
  since: number;
  /** when it ends by itself, ms since the epoch */
  deadline: number;
  /** a manual plug's: the plugs' counters read before it buffered (packets passed, dropped), which its release's report counts from */
  counters?: { packets: number; drops: number };
  /**
   * Set when read, never written: the lease record was written in another state directory (its `dir` is not this
   * directory's mark, or it has none: a copy), so the lease holds nothing here ({@link StateStore.readLeases}).
   */
  elsewhere?: true;
}

/** Contents of `leases.json`. */
export interface LeasesRecord {
  version: 1;
  leases: Lease[];
  /** the cookie of the network namespace whose holds they hold, as setup.json's (written by {@link StateStore.writeLeases}); another namespace's is refused */
  netns?: string;
  /**
   * the mark (state-fs.ts's `stateDirMark`) of the state directory it was written in (by {@link StateStore.writeLeases}):
   * read in another directory (a copy), or without it, its leases hold nothing there
   */
  dir?: string;
}

const SETUP = 'setup.json';
const PLUG = 'plug.json';
const LEASES = 'leases.json';
/** The lock file of the lease bookkeeping (flock). */
export const LOCK_FILE = 'lock';

/**
 * The largest record file read, bytes: synplug writes a few hundred bytes
 * per hold or lease; anything larger is refused before it is read.
 */
export const RECORD_SIZE_CAP = 1 << 20;

/** The state files of one directory, read and written under the rules of the module doc. */
export class StateStore {
  /** the directory was created by this store (by a write) */
  private created = false;

  /**
   * @param dir state directory, e.g. `/run/synplug`
   * @param pinned reach it through the descriptor this process pinned ({@link StateStore.pinnedOf}), never its path
   */
  constructor(
    readonly dir: string,
    private readonly pinned = false,
  ) {}

  /**
   * The store of the directory this process pinned for `dir` (state-fs.ts), reached through its descriptor wherever it
   * is now, never through the path (which may name another directory since): where a process whose path was swapped
   * keeps its own records true. Nothing is created through it.
   * @returns undefined when nothing is pinned for `dir`, or the pinned directory was removed
   * @throws {StateFileError} it is unsafe now
   */
  static pinnedOf(dir: string): StateStore | undefined {
    const d = openPinnedDir(dir);
    if (!d) return undefined;
    d.close();
    return new StateStore(dir, true);
  }

  /** Whether a write of this store created the directory. */
  get createdDir(): boolean {
    return this.created;
  }

  private path(name: string): string {
    return join(this.dir, name);
  }

  /**
   * Open the directory (every component checked; created when `create`),
   * run `f` on it, close it.
   * @returns undefined when it does not exist and `create` is false
   */
  private withDir<T>(create: boolean, f: (d: CheckedDir) => T): T | undefined {
    const d = this.pinned ? openPinnedDir(this.dir) : openCheckedDir(this.dir, create);
    if (!d) return undefined;
    try {
      if (d.created) this.created = true;
      return f(d);
    } finally {
      d.close();
    }
  }

  /**
   * Check the directory and every directory on its path (state-fs.ts): it
   * must be a real directory owned by the effective user and writable by
   * nobody else, its parents root's or the user's and not writable by others.
   * @returns false when it does not exist
   * @throws {StateFileError} it is something else, or unsafe
   */
  checkDir(): boolean {
    return this.withDir(false, () => true) ?? false;
  }

  /**
   * Read and parse one file (O_NOFOLLOW, relative to the checked directory, size capped).
   * @returns undefined when the file (or the directory) does not exist
   * @throws {StateFileError} unsafe directory, a link, not a regular file, too large, unreadable, not JSON
   */
  private read(name: string, what: string): unknown {
    const data = this.withDir(false, (d) => d.read(name, RECORD_SIZE_CAP, what));
    if (data === undefined) return undefined;
    return this.parse(name, data, what);
  }

  /** A record's JSON. @throws {StateFileError} not valid JSON */
  private parse(name: string, data: Buffer, what: string): unknown {
    try {
      return JSON.parse(data.toString('utf8'));
    } catch (e) {
      throw new StateFileError(this.path(name), `${this.path(name)} is not valid JSON (a torn or hand-edited file): remove it (${what})`, e);
    }
  }

  /**
   * Replace one file atomically (a temporary file, then a rename; state-fs.ts).
   * @throws {StateFileError} the directory is unsafe or cannot be created, or the file cannot be written
   *   (category `failure` when the disk refused: ENOSPC, EROFS...)
   */
  private write(name: string, value: unknown): void {
    this.withDir(true, (d) => d.writeAtomic(name, Buffer.from(JSON.stringify(value) + '\n')));
  }

  /**
   * The setup record, or undefined when nothing is set up.
   * @param context the hold the command is about (`inbound`: its device), for what the error tells to do
   * @throws {StateFileError} the directory is unsafe, or the file is unreadable or not a setup record
   */
  readSetup(context: { inbound?: string } = {}): SetupRecord | undefined {
    const what =
      context.inbound !== undefined
        ? `then run 'synplug setup --inbound ${context.inbound} --port PORT' again (and 'synplug setup' for the local hold, if it was set up), which records what it finds`
        : "then run 'synplug setup' again for the local hold, and 'synplug setup --inbound DEV --port PORT' for each inbound hold. Setup records what it finds: the local hold's address, if an earlier setup added it, is then taken for yours, and a later teardown leaves it ('ip addr del ADDR dev lo' removes it)";
    const raw = this.read(SETUP, what);
    if (raw === undefined) return undefined;
    if (isOlderSetupRecord(raw))
      throw new StateFileError(
        this.path(SETUP),
        `${this.path(SETUP)} is a setup record of an older synplug (version 1), which this version does not read: remove what it set up with that version ('synplug teardown'), or remove the file (${what})`,
      );
    const problem = setupRecordProblem(raw);
    if (problem)
      throw new StateFileError(
        this.path(SETUP),
        `${this.path(SETUP)} is not a setup record synplug wrote: remove it (${what}). What is wrong: ${problem}; nothing was changed`,
      );
    const r = parseSetupRecord(raw)!;
    // A kernel with netns cookies (5.14+) gets one in every record synplug writes: a record without it is not one of them.
    const here = netnsCookie(defaultNetns());
    if (here !== undefined && r.netns === undefined)
      throw otherNetnsError(
        this.path(SETUP),
        `${this.path(SETUP)} has no 'netns' field (the cookie of the network namespace its holds are in), which synplug writes in every setup record on a kernel that has namespace cookies: its holds may be another namespace's, so it is not read and nothing was changed. Remove it (${what}), in the namespace whose holds it records`,
      );
    if (here !== undefined && here !== r.netns) throw otherNetnsError(this.path(SETUP), otherNetnsMessage(this.path(SETUP), r.netns!, here));
    return r;
  }

  /** The path of setup.json (for messages; read it with {@link StateStore.readSetup}). */
  setupPath(): string {
    return this.path(SETUP);
  }

  /** Whether the lock file exists (reads nothing). @throws {StateFileError} the directory is unsafe */
  hasLockFile(): boolean {
    return this.withDir(false, (d) => d.stat(LOCK_FILE) !== undefined) ?? false;
  }

  /**
   * Whether a setup ran in this directory: setup.json, plug.json or the lock
   * file is there (setup creates the lock file before its first step, and
   * writes the other two; teardown removes all three). Reads nothing.
   * @throws {StateFileError} the directory is unsafe
   */
  usedBySetup(): boolean {
    return this.withDir(false, (d) => [SETUP, PLUG, LOCK_FILE].some((n) => d.stat(n) !== undefined)) ?? false;
  }

  /** @throws {StateFileError} the directory is unsafe or cannot be created, or the file cannot be written */
  writeSetup(r: SetupRecord): void {
    this.write(SETUP, r);
  }

  /**
   * The plug record, or undefined when there is none.
   * @throws {StateFileError} the directory is unsafe, or the file is unreadable or not a plug record
   */
  readPlug(): PlugRecord | undefined {
    const what = "the plug may still be buffering: 'synplug release' releases it whatever the file says";
    const r = this.read(PLUG, what);
    if (r === undefined) return undefined;
    const problem = plugRecordProblem(r);
    if (problem)
      throw new StateFileError(this.path(PLUG), `${this.path(PLUG)} is not a plug record synplug wrote: remove it (${what}). What is wrong: ${problem}`);
    if (this.ofOtherNetns(PLUG, r as PlugRecord, (r as PlugRecord).state === 'buffering')) return undefined;
    return r as PlugRecord;
  }

  /**
   * Write plug.json, with the cookie of the namespace this call acts in.
   * @throws {StateFileError} the directory is unsafe or cannot be created, or the file cannot be written
   */
  writePlug(r: PlugRecord): void {
    this.write(PLUG, withOwnNetns(r));
  }

  /**
   * A record of another network namespace (plug.json, leases.json): what it
   * says of holds is not about this namespace's (issue #19, MA1). One that
   * says something is held there (a plug buffering, a lease) is refused;
   * one that says nothing is held is ignored, read as no record (so that a
   * directory whose namespace is gone is free once its setup.json is
   * removed). A record without the field is an earlier synplug's, read as
   * this namespace's.
   * @param holds the record says something is held
   * @returns true when it is another namespace's and is to be ignored
   * @throws {StateFileError} (`otherNetns`) another namespace's record that says something is held
   */
  private ofOtherNetns(name: string, r: { netns?: string }, holds: boolean): boolean {
    if (r.netns === undefined) return false;
    const here = netnsCookie(defaultNetns());
    if (here === undefined || here === r.netns) return false;
    if (holds) throw otherNetnsError(this.path(name), otherNetnsMessage(this.path(name), r.netns, here));
    return true;
  }

  /**
   * The leases, or undefined when there is no lease file.
   * @throws {StateFileError} the directory is unsafe, or the file is unreadable or not a lease record
   */
  readLeases(): LeasesRecord | undefined {
    const what = 'synplug reads a missing leases.json as no live lease; a protect still running then releases when it ends';
    const read = this.withDir(false, (d) => {
      const data = d.read(LEASES, RECORD_SIZE_CAP, what);
      return data === undefined ? undefined : { data, mark: d.mark() };
    });
    if (read === undefined) return undefined;
    const r = this.parse(LEASES, read.data, what);
    const problem = leasesRecordProblem(r);
    if (problem)
      throw new StateFileError(this.path(LEASES), `${this.path(LEASES)} is not a lease record synplug wrote: remove it (${what}). What is wrong: ${problem}`);
    const rec = r as LeasesRecord;
    if (this.ofOtherNetns(LEASES, rec, rec.leases.length > 0)) return undefined;
    // A copy from another state directory (or a record without the mark): its leases hold nothing here.
    if (rec.dir !== read.mark) return { ...rec, leases: rec.leases.map((l) => ({ ...l, elsewhere: true as const })) };
    return { ...rec, leases: rec.leases.map(({ elsewhere: _e, ...l }) => l) };
  }

  /**
   * Write leases.json, with the cookie of the namespace this call acts in and
   * the mark of this state directory (a copy of the file elsewhere holds nothing there).
   * @throws {StateFileError} the directory is unsafe or cannot be created, or the file cannot be written
   */
  writeLeases(r: LeasesRecord): void {
    const leases = r.leases.map(({ elsewhere: _e, ...l }) => l);
    this.withDir(true, (d) => d.writeAtomic(LEASES, Buffer.from(`${JSON.stringify(withOwnNetns({ ...r, leases, dir: d.mark() }))}\n`)));
  }

  /** The path of leases.json (for messages; read it with {@link StateStore.readLeases}). */
  leasesPath(): string {
    return this.path(LEASES);
  }

  /**
   * The identity of leases.json as written (inode, size, mtime in ns), from
   * an fstat relative to the checked directory: unchanged means nobody
   * rewrote it since.
   * @returns undefined when there is none (or it cannot be examined)
   */
  leasesStamp(): string | undefined {
    try {
      const st = this.withDir(false, (d) => d.stat(LEASES));
      return st ? `${st.ino}:${st.size}:${st.mtimeNs}` : undefined;
    } catch {
      return undefined;
    }
  }

  /** The lock file's path (for messages; open it with {@link StateStore.openLock}). */
  lockPath(): string {
    return this.path(LOCK_FILE);
  }

  /**
   * Open the lock file (created 0600, O_NOFOLLOW), the directory created and
   * checked first.
   * @returns the descriptor (close it with closeSync)
   * @throws {StateFileError} the directory is unsafe or cannot be created, or the lock file cannot be opened (a link)
   */
  openLock(): number {
    const p = this.path(LOCK_FILE);
    return this.withDir(true, (d) => {
      let fd: number;
      try {
        fd = d.open(LOCK_FILE, fsConstants.O_RDWR | fsConstants.O_CREAT, 0o600);
      } catch (e) {
        const code = errorCode(e);
        throw new StateFileError(
          p,
          `cannot open the lock file ${p}: ${code ?? (e as Error).message}${code === 'ELOOP' ? ' (a symbolic link: remove it)' : ''}`,
          e,
          writeErrorCategory(code),
        );
      }
      if (!fstatSync(fd).isFile()) {
        closeSync(fd);
        throw new StateFileError(p, `the lock file ${p} is not a regular file: remove it`);
      }
      return fd;
    })!;
  }

  /**
   * Refuse a lock file that is not a regular file (a symbolic link, planted
   * or left): the commands that take the lock refuse it when they open it
   * (O_NOFOLLOW); this is the same check for a command that does not take it.
   * Changes nothing; a missing file or directory is fine.
   * @throws {StateFileError} the lock file is a symbolic link or not a regular file, or the directory is unsafe
   */
  checkLockFile(): void {
    const p = this.path(LOCK_FILE);
    this.withDir(false, (d) => {
      let st: BigIntStats | undefined;
      try {
        st = d.stat(LOCK_FILE);
      } catch (e) {
        throw new StateFileError(p, `cannot use the lock file ${p}: ${errorCode(e) ?? (e as Error).message}`, e);
      }
      if (st?.isSymbolicLink())
        throw new StateFileError(p, `the lock file ${p} is a symbolic link; synplug never follows links in its state directory: remove it`);
      if (st && !st.isFile()) throw new StateFileError(p, `the lock file ${p} is not a regular file: remove it`);
    });
  }

  /**
   * Remove a unix socket left in the directory (a queue holder's, by a
   * holder killed before it could remove it), relative to the checked
   * directory; anything else of that name is left.
   * @returns whether a socket was removed
   * @throws {StateFileError} the directory is unsafe, or the socket cannot be removed
   */
  removeSocket(name: string): boolean {
    return (
      this.withDir(false, (d) => {
        if (!d.stat(name)?.isSocket()) return false;
        try {
          return d.unlink(name);
        } catch (e) {
          const code = errorCode(e);
          throw new StateFileError(this.path(name), `cannot remove ${this.path(name)}: ${code ?? (e as Error).message}`, e, writeErrorCategory(code));
        }
      }) ?? false
    );
  }

  /**
   * Remove the files (teardown), and the directory too when its mark is
   * `removeIfMark` (the one setup recorded creating: a copied record names
   * another directory's) and nothing else is left in it.
   * @returns whether the directory was removed
   * @throws {StateFileError} the directory is unsafe, or a file cannot be removed
   */
  clear(removeIfMark?: string): boolean {
    return (
      this.withDir(false, (d) => {
        for (const n of [SETUP, PLUG, LEASES, LOCK_FILE]) {
          try {
            d.unlink(n);
          } catch (e) {
            const code = errorCode(e);
            throw new StateFileError(this.path(n), `cannot remove ${this.path(n)}: ${code ?? (e as Error).message}`, e, writeErrorCategory(code));
          }
        }
        // only the directory setup created (the very one: its mark), and only empty (someone else's files: left alone)
        return removeIfMark !== undefined && d.mark() === removeIfMark && d.removeSelf();
      }) ?? false
    );
  }
}

/** A {@link StateFileError} for a setup record that is (or may be) another namespace's ({@link StateFileError.otherNetns}). */
function otherNetnsError(path: string, message: string): StateFileError {
  const e = new StateFileError(path, message);
  e.otherNetns = true;
  return e;
}

/** A record with the cookie of the namespace this call acts in as its `netns` (none before Linux 5.14: the field left out). */
function withOwnNetns<T extends { netns?: string }>(r: T): T {
  const { netns: _old, ...rest } = r;
  const cookie = netnsCookie(defaultNetns());
  return (cookie !== undefined ? { ...rest, netns: cookie } : rest) as T;
}

/** A namespace cookie as records keep it: decimal digits, no leading zero. */
const isCookie = (v: unknown): boolean => typeof v === 'string' && /^[1-9][0-9]{0,19}$/.test(v);

/**
 * The `netns` field of a setup record being written: the old record's (read
 * through {@link StateStore.readSetup}, so this namespace's), else the cookie
 * of the namespace this call acts in (none before Linux 5.14, the one case
 * where a record has no such field).
 * @throws {SocketError} the cookie cannot be read
 */
export function withNetnsCookie(old: SetupRecord | undefined): { netns?: string } {
  if (old?.netns !== undefined) return { netns: old.netns };
  const cookie = netnsCookie(defaultNetns());
  return cookie !== undefined ? { netns: cookie } : {};
}

/**
 * A setup record from parsed JSON (version 2).
 * @returns undefined when it is not a setup record ({@link setupRecordProblem} says why)
 */
export function parseSetupRecord(raw: unknown): SetupRecord | undefined {
  if (setupRecordProblem(raw) !== undefined) return undefined;
  const o = raw as Record<string, unknown>;
  return {
    version: 2,
    holds: { ...(o.holds as Record<string, HoldRecord>) },
    ...(o.createdStateDir === true && { createdStateDir: true }),
    ...(typeof o.createdStateDirMark === 'string' && { createdStateDirMark: o.createdStateDirMark }),
    ...(typeof o.metricsFile === 'string' && { metricsFile: o.metricsFile }),
    ...(typeof o.netns === 'string' && { netns: o.netns }),
  };
}

/** The most holds a setup record lists (one local, one queue, and an inbound hold per device: far fewer in practice). */
export const MAX_HOLDS = 64;
/** The most leases a lease record lists. */
export const MAX_LEASES = 1024;
/** The largest process id Linux gives (PID_MAX_LIMIT, 2^22). */
const PID_MAX = 4_194_304;
/** Slack on "within 24 h of now", ms: a clock stepped back by NTP. */
const CLOCK_SLACK_MS = 60_000;

/**
 * The schema of the records, with ranges (issue #19, deliverable 4): what
 * is wrong in a parsed JSON value that synplug could not have written.
 * Never throws, whatever the value.
 */
type Problem = string | undefined;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isPid = (v: unknown): boolean => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= PID_MAX;
const isTicks = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) >= 0;
const isTime = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) >= 0;

/** The longest path Linux takes (PATH_MAX, with its NUL). */
const PATH_MAX = 4096;

/** A metrics file's path as setup records it: absolute, normalised (no `.`/`..`/`//`), naming a file, no NUL, shorter than PATH_MAX. */
export function isMetricsPath(v: unknown): v is string {
  return (
    typeof v === 'string' && v.length < PATH_MAX && !v.includes('\0') && isAbsolute(v) && normalize(v) === v && v.endsWith('.prom') && !v.endsWith('/.prom')
  );
}

/** since and deadline: times, since <= deadline, the deadline at most 24 h ahead (synplug holds for 24 h at most). */
function timesProblem(o: Record<string, unknown>, now: number): Problem {
  if (!isTime(o.since)) return `'since' is ${JSON.stringify(o.since)}, not a time in ms since the epoch`;
  if (!isTime(o.deadline)) return `'deadline' is ${JSON.stringify(o.deadline)}, not a time in ms since the epoch`;
  if ((o.deadline as number) < (o.since as number)) return "'deadline' is before 'since'";
  if ((o.deadline as number) > now + MAX_DURATION_MS + CLOCK_SLACK_MS) return "'deadline' is more than 24 h ahead (synplug holds for 24 h at most)";
  return undefined;
}

/** pid, pidStart, watchdogPid: process ids and a start time. */
function processProblem(o: Record<string, unknown>): Problem {
  if (!isPid(o.pid)) return `'pid' is ${JSON.stringify(o.pid)}, not a process id`;
  if (o.pidStart !== undefined && !isTicks(o.pidStart)) return "'pidStart' is not a start time in clock ticks";
  if (o.watchdogPid !== undefined && !isPid(o.watchdogPid)) return "'watchdogPid' is not a process id";
  if (o.watchdogStart !== undefined && !isTicks(o.watchdogStart)) return "'watchdogStart' is not a start time in clock ticks";
  return undefined;
}

/**
 * What is wrong with a parsed setup.json, or undefined when synplug could
 * have written it: version 2, at least one hold and at most {@link MAX_HOLDS},
 * each whole for its mode and naming nothing setup would refuse.
 */
export function setupRecordProblem(raw: unknown): Problem {
  if (!isObject(raw)) return 'not a JSON object';
  if (raw.version !== 2) return `version ${JSON.stringify(raw.version)}, not 2`;
  if (!isObject(raw.holds)) return "'holds' is not an object";
  if (raw.createdStateDir !== undefined && typeof raw.createdStateDir !== 'boolean') return "'createdStateDir' is not true or false";
  if (raw.createdStateDirMark !== undefined && !(typeof raw.createdStateDirMark === 'string' && /^[0-9a-f]{16}$/.test(raw.createdStateDirMark)))
    return "'createdStateDirMark' is not a state directory's mark (16 hex digits)";
  if (raw.metricsFile !== undefined && !isMetricsPath(raw.metricsFile))
    return `'metricsFile' is ${JSON.stringify(raw.metricsFile).slice(0, 80)}, not an absolute path of a *.prom file (setup records --metrics-file so)`;
  if (raw.netns !== undefined && !isCookie(raw.netns))
    return `'netns' is ${JSON.stringify(raw.netns).slice(0, 80)}, not a network namespace cookie (decimal digits)`;
  const entries = Object.entries(raw.holds);
  if (entries.length === 0) return "'holds' is empty: synplug removes the file with its last hold, so a record of no hold is not synplug's";
  if (entries.length > MAX_HOLDS) return `${entries.length} holds, more than synplug makes (${MAX_HOLDS})`;
  for (const [id, h] of entries) {
    if (!isHoldRecord(h)) return `hold '${id}' lacks a field of its mode, or has one of the wrong type`;
    if (!isTime(h.createdAt)) return `hold '${id}': 'createdAt' is not a time in ms since the epoch`;
    const refused = recordRefusal(h);
    if (refused) return `hold '${id}' names what setup refuses: ${refused}`;
    if (!isKeyOfRecord(id, h)) return `hold '${id}' is not the key setup records a ${h.mode} hold of ${h.dev} under`;
  }
  return undefined;
}

/** What is wrong with a parsed plug.json, or undefined. */
export function plugRecordProblem(r: unknown, now = Date.now()): Problem {
  if (!isObject(r)) return 'not a JSON object';
  if (r.version !== 1) return `version ${JSON.stringify(r.version)}, not 1`;
  if (r.state !== 'buffering' && r.state !== 'released') return `'state' is ${JSON.stringify(r.state)}, not buffering or released`;
  if (r.owner !== 'protect' && r.owner !== 'manual') return `'owner' is ${JSON.stringify(r.owner)}, not protect or manual`;
  if (typeof r.dev !== 'string') return "'dev' is not a device name";
  if (r.releasedAt !== undefined && !isTime(r.releasedAt)) return "'releasedAt' is not a time in ms since the epoch";
  if (r.releaseFailedAt !== undefined && !isTime(r.releaseFailedAt)) return "'releaseFailedAt' is not a time in ms since the epoch";
  if (r.neverHeld !== undefined && (r.neverHeld !== true || r.state !== 'released')) return "'neverHeld' is not true on a released record";
  if (r.netns !== undefined && !isCookie(r.netns)) return `'netns' is ${JSON.stringify(r.netns).slice(0, 80)}, not a network namespace cookie (decimal digits)`;
  return processProblem(r) ?? timesProblem(r, now);
}

/** What is wrong with a parsed leases.json, or undefined. */
export function leasesRecordProblem(r: unknown, now = Date.now()): Problem {
  if (!isObject(r)) return 'not a JSON object';
  if (r.version !== 1) return `version ${JSON.stringify(r.version)}, not 1`;
  if (!Array.isArray(r.leases)) return "'leases' is not a list";
  if (r.leases.length > MAX_LEASES) return `${r.leases.length} leases, more than synplug keeps (${MAX_LEASES})`;
  if (r.netns !== undefined && !isCookie(r.netns)) return `'netns' is ${JSON.stringify(r.netns).slice(0, 80)}, not a network namespace cookie (decimal digits)`;
  if (r.dir !== undefined && !(typeof r.dir === 'string' && /^[0-9a-f]{16}$/.test(r.dir))) return "'dir' is not a state directory's mark (16 hex digits)";
  for (const [i, l] of r.leases.entries()) {
    const p = leaseProblem(l, now);
    if (p) return `lease ${i + 1}: ${p}`;
  }
  return undefined;
}

function leaseProblem(l: unknown, now: number): Problem {
  if (!isObject(l)) return 'not a JSON object';
  if (typeof l.id !== 'string' || !/^[0-9a-f]{1,64}$/.test(l.id)) return "'id' is not a hex id";
  if (l.owner !== 'protect' && l.owner !== 'manual') return `'owner' is ${JSON.stringify(l.owner)}, not protect or manual`;
  if (l.command !== undefined && !(Array.isArray(l.command) && l.command.every((w) => typeof w === 'string'))) return "'command' is not a list of words";
  if (!Array.isArray(l.holds) || l.holds.length === 0 || !l.holds.every((h) => typeof h === 'string' && h !== '')) return "'holds' is not a list of hold ids";
  if (l.counters !== undefined && !(isObject(l.counters) && isTicks(l.counters.packets) && isTicks(l.counters.drops)))
    return "'counters' is not { packets, drops }, counts";
  return processProblem(l) ?? timesProblem(l, now);
}

/** A setup.json of version 1 (or none: the local hold's fields at the top level), which older synplugs wrote. */
function isOlderSetupRecord(raw: unknown): boolean {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return false;
  const v = (raw as Record<string, unknown>).version;
  return v === 1 || (v === undefined && 'addr' in raw && 'table' in raw);
}

function isHoldRecord(h: unknown): h is HoldRecord {
  if (typeof h !== 'object' || h === null) return false;
  const r = h as Record<string, unknown>;
  if (typeof r.mode !== 'string' || typeof r.dev !== 'string' || r.dev === '' || typeof r.createdAt !== 'number') return false;
  return isRecordOfItsMode(r);
}

/**
 * The fields of /proc/PID/stat after comm (field 2, which may hold spaces and
 * parentheses: split after the last ')'): [0] is field 3, the state.
 * @returns undefined when the process does not exist
 */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/**
 * Start time of a process (field 22 of /proc/PID/stat, in clock ticks since boot).
 * @returns undefined when the process does not exist
 */
export function processStartTime(pid: number): number | undefined {
  const f = statFields(pid);
  return f === undefined ? undefined : Number(f[19]);
}

/**
 * A process's state (field 3 of /proc/PID/stat, proc(5)): `R` running, `S`
 * sleeping, `D` disk sleep, `T` stopped by a signal, `t` stopped by a
 * debugger, `Z` zombie...
 * @returns undefined when the process does not exist
 */
export function processState(pid: number): string | undefined {
  return statFields(pid)?.[0];
}

/** Whether the process that wrote a record is still the same live process (a zombie, killed and not yet reaped, is not). */
export function ownerAlive(pid: number, pidStart?: number): boolean {
  const f = statFields(pid);
  if (f === undefined || f[0] === 'Z') return false;
  return pidStart === undefined || Number(f[19]) === pidStart;
}

/**
 * Whether a manual plug's holder still lives: the watchdog it recorded is the
 * same live process (pid and start time both recorded and matching), and that
 * process is one of synplug's watchdogs (watchdog.ts's runsWatchdog: its
 * command line runs the watchdog's entry point, as root or this user). The
 * record is untrusted: one without both, naming a process that ended (a
 * stale record copied back), or naming a live process that is no watchdog (a
 * lease made by hand), holds nothing, whatever its deadline.
 */
export function manualHolderAlive(r: { watchdogPid?: number; watchdogStart?: number }): boolean {
  return r.watchdogPid !== undefined && r.watchdogStart !== undefined && ownerAlive(r.watchdogPid, r.watchdogStart) && runsWatchdog(r.watchdogPid);
}

/**
 * Whether a recorded plug was left buffering by someone who can no longer
 * release it: the owner (a protect) died, a manual plug's watchdog
 * ({@link manualHolderAlive}) is gone, or the deadline passed.
 */
export function isStale(r: PlugRecord | undefined, now = Date.now()): boolean {
  if (r?.state !== 'buffering') return false;
  if (now >= r.deadline) return true;
  if (r.owner === 'manual') return !manualHolderAlive(r);
  return !ownerAlive(r.pid, r.pidStart);
}
