/**
 * Leases on the holds (issue #12): overlapping protects share the hold, and
 * the last one out releases.
 *
 * - Every `protect` (and a manual `plug`) takes a lease: owner (pid and
 *   start time), deadline, holds. Taking one arms the kernel-side deadline
 *   (the marking set element) to the LATEST deadline among the live leases:
 *   renewed when a new lease extends it, never shortened under another holder.
 * - Dropping a lease releases the plugs (and turns marking off) only when no
 *   live lease remains. A lease is live while its deadline is ahead and, for
 *   a protect, its owner process lives (the same pid and start time); a
 *   manual lease lives until its deadline or a manual `release` while its
 *   watchdog lives (the same pid and start time, {@link manualHolderAlive}):
 *   once that watchdog is gone (killed, or a stale record copied back), the
 *   next command's stale recovery (or the queue's holder) releases.
 * - The bookkeeping is atomic between processes: an flock(2) on `lock` in
 *   the state directory, held only while the leases are read, the kernel is
 *   told (arm, or the last release) and the files are written; never across
 *   the reload.
 * - A manual `release` breaks every lease and releases at once;
 *   `release --orphaned` ({@link releaseIfOrphaned}) leaves live leases
 *   alone and releases only a plug no live lease holds.
 *
 * @module
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { closeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { constants as osConstants } from 'node:os';
import { SynplugError } from '../netlink/errors.js';
import { bindLibcFunction, lastErrno } from '../netlink/libc.js';
import { StateDirSwappedError } from './state-fs.js';
import { holdRemovedError } from './errors.js';
import { manualHolderAlive, ownerAlive, StateStore, type Lease, type PlugRecord } from './state.js';

/** flock(2) operations, from <sys/file.h>. */
const LOCK_EX = 2;
const LOCK_NB = 4;
const LOCK_UN = 8;

let flockFn: ((fd: number, op: number) => number) | undefined;

function flock(fd: number, op: number): number {
  if (!flockFn) flockFn = bindLibcFunction('flock', 'int flock(int fd, int operation)') as unknown as (fd: number, op: number) => number;
  return flockFn(fd, op);
}

/** The lock files whose lock the current async call chain holds ({@link withLeaseLock}): reentrant there only. */
const heldLocks = new AsyncLocalStorage<ReadonlySet<string>>();

/** How long {@link withLeaseLock} waits for the lock before it gives up, ms. */
export const LOCK_TIMEOUT_MS = 10_000;

/**
 * Run `f` holding the exclusive flock on the state directory's lock file.
 * Polls with LOCK_NB (1-5 ms sleeps) so that the event loop never blocks.
 * @throws {StateFileError} the directory is unsafe, or the lock file cannot be opened
 * @throws {SynplugError} the lock was not obtained within {@link LOCK_TIMEOUT_MS} (category `failure`), or flock failed
 */
export async function withLeaseLock<T>(store: StateStore, f: () => Promise<T> | T, timeoutMs = LOCK_TIMEOUT_MS, openFd?: number): Promise<T> {
  // Only for messages (no file system call).
  const path = () => store.lockPath();
  // Already held by this call chain (a setup or teardown that holds the lock across its steps, and a release inside):
  // taken again, flock on a second descriptor would wait for the first, for ever. Another call chain still waits.
  const held = heldLocks.getStore();
  if (held?.has(path())) return f();
  const fd = openFd ?? openLockFile(store);
  try {
    const t0 = Date.now();
    for (let i = 0; ; i++) {
      if (flock(fd, LOCK_EX | LOCK_NB) === 0) break;
      const errno = lastErrno();
      if (errno !== osConstants.errno.EWOULDBLOCK && errno !== osConstants.errno.EINTR) {
        throw new SynplugError(`cannot lock ${path()}: flock failed with errno ${errno}`);
      }
      if (Date.now() - t0 > timeoutMs)
        throw new SynplugError(`another synplug holds ${path()} for more than ${timeoutMs} ms; try again (or look for a stuck synplug process)`);
      await new Promise((r) => setTimeout(r, i < 20 ? 1 : 5));
    }
    try {
      return await heldLocks.run(new Set([...(held ?? []), path()]), f);
    } finally {
      flock(fd, LOCK_UN);
    }
  } finally {
    if (openFd === undefined) closeSync(fd);
  }
}

/**
 * Open the state directory's lock file (O_NOFOLLOW, created 0600, relative
 * to the checked directory: {@link StateStore.openLock}).
 * @returns the file descriptor (close it with closeSync)
 * @throws {StateFileError} the directory is unsafe, or the file cannot be opened (a link)
 */
export function openLockFile(store: StateStore): number {
  return store.openLock();
}

/** Identity of the lease file as written (inode, size, mtime in ns): unchanged means nobody took or dropped a lease since. */
function leaseFileStamp(store: StateStore): string | undefined {
  return store.leasesStamp();
}

/**
 * Whether a lease still holds: recorded in this state directory (not a copy: {@link Lease.elsewhere}), its deadline
 * ahead, and a protect's owner (a manual plug's watchdog) the same live process.
 */
export function leaseLive(l: Lease, now = Date.now()): boolean {
  if (l.elsewhere || now >= l.deadline) return false;
  if (l.owner === 'manual') return manualHolderAlive(l);
  return ownerAlive(l.pid, l.pidStart);
}

/**
 * The leases on record in leases.json (none without the file: a plug.json
 * buffering with no lease is held by nobody, and the next command's
 * recovery releases it).
 * @throws {StateFileError} a damaged file
 */
export function recordedLeases(store: StateStore): Lease[] {
  return store.readLeases()?.leases ?? [];
}

/** A new lease id. */
export function newLeaseId(): string {
  return randomBytes(8).toString('hex');
}

/** What the kernel side of the bookkeeping needs: a `GuardSession`, or a fake. */
export interface LeaseKernel {
  /** arm the kernel-side deadline for `timeoutMs` */
  arm(timeoutMs: number): Promise<void>;
  /** turn marking off */
  disarm(): Promise<void>;
  /** release every plug */
  release(): Promise<void>;
}

function plugRecordFor(l: Lease, latest: number, dev: string): PlugRecord {
  return {
    version: 1,
    state: 'buffering',
    owner: l.owner,
    pid: l.pid,
    ...(l.pidStart !== undefined && { pidStart: l.pidStart }),
    ...(l.watchdogPid !== undefined && { watchdogPid: l.watchdogPid }),
    ...(l.watchdogStart !== undefined && { watchdogStart: l.watchdogStart }),
    dev,
    since: l.since,
    deadline: latest,
  };
}

/** What {@link takeLease} found and did. */
export interface TakeResult {
  /** the other live leases when this one was taken (the plug was already buffering for them) */
  others: Lease[];
  /** the deadline the kernel-side element now covers (the latest of all live leases), ms since the epoch */
  latestDeadline: number;
  /** the other holders' dead leases this take removed from the record (as {@link DropResult.dead}); absent: none */
  dead?: Lease[];
  /**
   * The lease file's identity right after this lease was written, when no
   * other live lease existed: {@link dropLease} then needs only a stat to know
   * it is still alone (the fast path inside the plug window).
   */
  aloneStamp?: string;
}

/**
 * Take a lease, under the lock: drop dead leases, add this one, arm the
 * kernel-side deadline to the latest deadline of all live leases (never
 * shorter than another holder's), record it (leases.json, and plug.json
 * buffering). The plug itself is buffered by the caller afterwards.
 * @param dev the local hold's device (plug.json's `dev`)
 * @throws {StateFileError} a damaged or unwritable state file
 * @throws {NftBatchError} arming was refused (nothing recorded)
 */
export async function takeLease(store: StateStore, kernel: LeaseKernel, lease: Lease, dev: string): Promise<TakeResult> {
  return withLeaseLock(store, async () => {
    refuseRemovedHolds(store, lease);
    const now = Date.now();
    const recorded = recordedLeases(store).filter((l) => l.id !== lease.id);
    const others = recorded.filter((l) => leaseLive(l, now));
    const dead = recorded.filter((l) => !others.includes(l));
    const latestDeadline = Math.max(lease.deadline, ...others.map((l) => l.deadline));
    // Record first (a crash right after still says buffering), then arm.
    store.writeLeases({ version: 1, leases: [...others, lease] });
    const aloneStamp = others.length === 0 ? leaseFileStamp(store) : undefined;
    store.writePlug(plugRecordFor(lease, latestDeadline, dev));
    // Alone: the lease's own max-hold; else what is left until the latest deadline (never shorter than another's).
    await kernel.arm(
      latestDeadline === lease.deadline && others.every((l) => l.deadline < lease.deadline)
        ? lease.deadline - lease.since
        : Math.max(10, latestDeadline - Date.now()),
    );
    return { others, latestDeadline, ...(aloneStamp !== undefined && { aloneStamp }), ...(dead.length > 0 && { dead }) };
  });
}

/**
 * Refuse a lease on holds a teardown removed after the holder read the record
 * and before it took the lock (teardown holds it while it removes): the
 * record no longer lists them, or the state directory's records are gone
 * (its lock file too: this lock's file was unlinked). Nothing recorded,
 * nothing armed.
 * @throws {NotSetUpError} (`not-set-up`, {@link holdRemovedError}) the holds are gone
 */
function refuseRemovedHolds(store: StateStore, lease: Lease): void {
  const record = store.readSetup();
  const gone = record ? lease.holds.filter((id) => record.holds[id] === undefined) : store.hasLockFile() ? [] : lease.holds;
  if (!gone.length) return;
  throw holdRemovedError(gone, lease.owner === 'manual' ? 'plug' : 'protect');
}

/** What {@link dropLease} did. */
export interface DropResult {
  /** the plugs were released (no live lease remained) */
  released: boolean;
  /** the live leases left holding the plug (empty when released) */
  remaining: Lease[];
  /** how many release requests it took (0 when not released) */
  releaseAttempts: number;
  /** the lease was no longer recorded when dropped: a manual `release` had broken it, or a watchdog had dropped it at its deadline */
  broken?: boolean;
  /** with `broken`: when that release let the hold go (plug.json's `releasedAt` then, ms since the epoch), when recorded */
  brokenAt?: number;
  /** with `broken`: the lease record was gone too (a teardown broke it and removed the records); nothing was recorded */
  tornDown?: true;
  /**
   * The other holders' dead leases this drop removed from the record, under the lock (a protect killed with its
   * watchdog: nobody else will see them again), to write their history lines ({@link deadProtectLeases}); absent: none
   */
  dead?: Lease[];
}

/**
 * Of the leases a drop removed, those of a protect that is gone (its owner no longer the same live process): a
 * protect killed during its hold, whose history line ("killed") the remover writes, being the only one that saw it.
 * A lease of another state directory (a copy) holds nothing here and is nobody's here.
 */
export function deadProtectLeases(dropped: readonly Lease[] | undefined): Lease[] {
  return (dropped ?? []).filter((l) => l.owner === 'protect' && !l.elsewhere && !ownerAlive(l.pid, l.pidStart));
}

/**
 * Drop a lease, under the lock, with the dead ones; when no live lease
 * remains, release the plugs (`release`, which may retry), turn marking off
 * and record "released". Otherwise the plug stays buffering for the others,
 * and the element keeps covering their latest deadline.
 * @param release releases the plugs (the caller's retrying release); its failure propagates, nothing recorded
 * @throws {StateFileError} a damaged or unwritable state file
 * @throws {StateDirSwappedError} the state directory's path came to name another directory than the one this process
 *   pinned (state-fs.ts): the plugs were released all the same (`released`), without the records
 */
export async function dropLease(
  store: StateStore,
  kernel: LeaseKernel,
  leaseId: string | undefined,
  dev: string,
  release: () => Promise<number> = async () => {
    await kernel.release();
    return 1;
  },
  onNotice: (line: string) => void = () => {},
  fast: { aloneStamp?: string; lockFd?: number } = {},
): Promise<DropResult> {
  let releaseRan = false;
  const releaseOnce = (): Promise<number> => {
    releaseRan = true;
    return release();
  };
  try {
    return await dropUnderLock(store, kernel, leaseId, dev, releaseOnce, onNotice, fast);
  } catch (e) {
    if (!(e instanceof StateDirSwappedError) || releaseRan) throw e;
    // The path names another directory now: the hold is released all the same (releasing is always safe), the drop
    // recorded in the directory this process started with (through its descriptor, never the path), and the refusal
    // goes on to the caller.
    await release();
    await recordPinnedDrop(store, kernel, leaseId, dev, onNotice, fast.lockFd);
    throw e.afterRelease();
  }
}

/**
 * After a release through a swapped state directory ({@link dropLease}): drop the lease in the directory this process
 * pinned (state.ts's StateStore.pinnedOf), recording "released" when it was the last, and take the armed pieces away
 * as the release path does; the pinned directory out of reach (removed, unsafe): the armed pieces go all the same.
 * Never throws.
 */
async function recordPinnedDrop(
  store: StateStore,
  kernel: LeaseKernel,
  leaseId: string | undefined,
  dev: string,
  onNotice: (line: string) => void,
  lockFd: number | undefined,
): Promise<void> {
  try {
    const pinned = StateStore.pinnedOf(store.dir);
    if (pinned) {
      // released just before: what the drop would release is let go already
      await dropUnderLock(pinned, kernel, leaseId, dev, async () => 1, onNotice, { lockFd });
      return;
    }
  } catch {
    /* the pieces go below */
  }
  await kernel.disarm().catch(() => {});
}

/** {@link dropLease}'s work under the lease lock. */
function dropUnderLock(
  store: StateStore,
  kernel: LeaseKernel,
  leaseId: string | undefined,
  dev: string,
  release: () => Promise<number>,
  onNotice: (line: string) => void,
  fast: { aloneStamp?: string; lockFd?: number },
): Promise<DropResult> {
  return withLeaseLock(
    store,
    async () => {
      // Fast path (inside the plug window): alone when taken, and the lease file
      // untouched since: nobody else holds; release first, then the bookkeeping.
      let all: Lease[] | undefined;
      let releaseAttempts: number;
      if (fast.aloneStamp !== undefined && leaseFileStamp(store) === fast.aloneStamp) {
        releaseAttempts = await release();
      } else {
        const now = Date.now();
        const recorded = store.readLeases();
        all = recorded?.leases ?? [];
        const broken = leaseId !== undefined && !all.some((l) => l.id === leaseId);
        // Broken, and no lease record at all: a teardown broke it and removed the records (nothing is set up any more),
        // so nothing is recorded again in the directory it cleared.
        const tornDown = broken && recorded === undefined;
        // when the release that broke it let the hold go (read before this drop records its own)
        const brokenAt = broken ? releasedAtOf(store) : undefined;
        const remaining = all.filter((l) => l.id !== leaseId && leaseLive(l, now));
        const deadOthers = all.filter((l) => l.id !== leaseId && !remaining.includes(l));
        const dead = deadOthers.length > 0 ? { dead: deadOthers } : {};
        if (remaining.length > 0) {
          const latest = Math.max(...remaining.map((l) => l.deadline));
          store.writeLeases({ version: 1, leases: remaining });
          store.writePlug(plugRecordFor(remaining[remaining.length - 1], latest, dev));
          return { released: false, remaining, releaseAttempts: 0, ...(broken && { broken, ...(brokenAt !== undefined && { brokenAt }) }), ...dead };
        }
        // A broken lease's plug was released by the manual release; releasing again is always safe.
        releaseAttempts = await release();
        if (broken)
          return {
            ...(await finishRelease(store, kernel, leaseId, dev, all, releaseAttempts, onNotice, brokenAt, !tornDown)),
            broken,
            ...(tornDown && { tornDown }),
            ...(brokenAt !== undefined && { brokenAt }),
            ...dead,
          };
        return { ...(await finishRelease(store, kernel, leaseId, dev, all, releaseAttempts, onNotice)), ...dead };
      }
      return finishRelease(store, kernel, leaseId, dev, all, releaseAttempts, onNotice);
    },
    LOCK_TIMEOUT_MS,
    fast.lockFd,
  );
}

/** plug.json's `releasedAt` when it says released; undefined otherwise, or when it cannot be read. */
function releasedAtOf(store: StateStore): number | undefined {
  try {
    const r = store.readPlug();
    return r?.state === 'released' ? r.releasedAt : undefined;
  } catch {
    return undefined;
  }
}

/** After the last release: record it (no lease left, plug.json released), then turn marking off. */
async function finishRelease(
  store: StateStore,
  kernel: LeaseKernel,
  leaseId: string | undefined,
  dev: string,
  known: Lease[] | undefined,
  releaseAttempts: number,
  onNotice: (line: string) => void,
  /** a broken lease's: when the release that broke it let the hold go (kept as plug.json's releasedAt) */
  releasedAt?: number,
  /** false: record nothing (a teardown removed the records: {@link dropLease}) */
  record = true,
): Promise<DropResult> {
  const now = Date.now();
  const all = known ?? recordedLeases(store);
  const mine = all.find((l) => l.id === leaseId) ?? all[all.length - 1];
  if (record) {
    store.writeLeases({ version: 1, leases: [] });
    const prev = store.readPlug();
    store.writePlug({
      ...(prev ?? {
        version: 1,
        owner: mine?.owner ?? 'manual',
        pid: mine?.pid ?? process.pid,
        dev,
        since: mine?.since ?? now,
        deadline: mine?.deadline ?? now,
      }),
      state: 'released',
      releasedAt: releasedAt ?? Date.now(),
    });
  }
  await kernel.disarm().catch((e) => onNotice(`could not remove the nftables set element (it expires by itself at the deadline): ${(e as Error).message}`));
  return { released: true, remaining: [], releaseAttempts };
}

/**
 * Break every lease (a manual `release`), under the lock: release the plugs
 * at once and record it.
 * @param release releases the plugs; its failure propagates
 * @returns how many live leases were broken
 * @throws {StateFileError} a damaged or unwritable state file
 */
export async function breakLeases(store: StateStore, release: () => Promise<void>, write: (broken: Lease[]) => void): Promise<number> {
  return withLeaseLock(store, async () => {
    let leases: Lease[] = [];
    let damaged: unknown;
    try {
      leases = recordedLeases(store);
    } catch (e) {
      damaged = e;
    }
    const live = leases.filter((l) => leaseLive(l));
    await release();
    if (damaged) throw damaged;
    write(live);
    return live.length;
  });
}

/**
 * Release only a plug that no live lease holds (`release --orphaned`, for a
 * systemd `ExecStopPost=`): under the lock, when a live lease remains (a
 * protect still running, a manual plug before its deadline whose watchdog lives), nothing is
 * released or written and those leases are returned; otherwise the plugs are
 * released and `write` records it (dead leases dropped).
 * @param release releases the plugs; its failure propagates
 * @returns `released`, and the live leases left alone (empty when released)
 * @throws {StateFileError} a damaged state file (nothing released: whether a protect holds the plug is unknown), or an unwritable one
 */
export async function releaseIfOrphaned(store: StateStore, release: () => Promise<void>, write: () => void): Promise<{ released: boolean; live: Lease[] }> {
  return withLeaseLock(store, async () => {
    const live = recordedLeases(store).filter((l) => leaseLive(l));
    if (live.length > 0) return { released: false, live };
    await release();
    write();
    return { released: true, live: [] };
  });
}

/**
 * Undo phase one when no hold came of it (a protect or plug that failed
 * before taking its lease): with no live lease, the holds' armed pieces go,
 * under the lock (another holder's lease keeps them); the state directory
 * swapped ({@link StateDirSwappedError}): they go all the same. Never throws.
 */
export async function unprepare(store: StateStore, kernel: Pick<LeaseKernel, 'disarm'>): Promise<void> {
  await withLeaseLock(store, async () => {
    if (!recordedLeases(store).some((l) => leaseLive(l))) await kernel.disarm();
  }).catch(async (e: unknown) => {
    // The state directory swapped (its leases out of reach): let the prepared pieces go all the same, as dropLease
    // releases (letting go is always safe); left, a queue hold's chain would pass the port's SYNs to no holder (bypass).
    if (e instanceof StateDirSwappedError) await kernel.disarm().catch(() => {});
  });
}

/** The live leases now (no lock: for display). @throws {StateFileError} a damaged file */
export function liveLeases(store: StateStore): Lease[] {
  return recordedLeases(store).filter((l) => leaseLive(l));
}

/**
 * Who holds, one phrase per lease, for a refusal: "'synplug protect' (COMMAND) pid N, until ISO-TIME" or
 * "a manual 'synplug plug' pid N, until ISO-TIME" (the command cut at 60 characters).
 */
export function whoHolds(leases: readonly Lease[]): string {
  return leases
    .map(
      (l) =>
        `${l.owner === 'manual' ? "a manual 'synplug plug'" : `'synplug protect'${Array.isArray(l.command) ? ` (${l.command.join(' ').slice(0, 60)})` : ''}`} pid ${l.pid}, until ${new Date(l.deadline).toISOString()}`,
    )
    .join('; ');
}
