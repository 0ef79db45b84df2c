/**
 * The guard's state files under the state directory (default `/run/synplug`,
 * a tmpfs: gone after a reboot, like the qdiscs themselves).
 *
 * - `setup.json`: what `setup` built and what it added (so `teardown` removes
 *   exactly that);
 * - `plug.json`: whether the plug is buffering, who plugged it and until when.
 *   sch_plug has no dump operation, so this file is the only record of the
 *   plug's state. It is written with "buffering" *before* the kernel call that
 *   plugs, and with "released" only *after* the kernel acked the release, so
 *   that it never says released while the kernel may still hold packets.
 *
 * Files are replaced atomically (write to a temporary file, then rename).
 *
 * @module
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { SynplugError } from '../netlink/errors.js';

/** Contents of `setup.json`. */
export interface SetupRecord {
  version: 1;
  dev: string;
  addr: string;
  mark: number;
  limit: number;
  table: string;
  /** setup added `addr` to `dev` (teardown removes it) */
  addedAddress: boolean;
  /** prefix length of the address setup added (32 or 128) */
  prefixlen: number;
  /** ms since the epoch */
  createdAt: number;
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
  dev: string;
  /** when the plug was (or was about to be) buffered, ms since the epoch */
  since: number;
  /** when the kernel-side set element expires and a stale plug must be released, ms since the epoch */
  deadline: number;
  /** when it was released, ms since the epoch */
  releasedAt?: number;
}

/** Paths of the state files in one directory. */
export class StateStore {
  /** @param dir state directory, e.g. `/run/synplug` */
  constructor(readonly dir: string) {}

  private path(name: string): string {
    return join(this.dir, name);
  }

  private read<T>(name: string): T | undefined {
    let text: string;
    try {
      text = readFileSync(this.path(name), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new SynplugError(`cannot read ${this.path(name)}: ${(e as Error).message}`);
    }
    try {
      return JSON.parse(text) as T;
    } catch {
      // A torn or hand-edited file: treat as absent, but never silently as "released".
      throw new SynplugError(`${this.path(name)} is not valid JSON; remove it (after 'synplug release', which does not need it)`);
    }
  }

  private write(name: string, value: unknown): void {
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o755 });
      const tmp = this.path(`.${name}.${process.pid}.tmp`);
      writeFileSync(tmp, JSON.stringify(value) + '\n', { mode: 0o644 });
      renameSync(tmp, this.path(name));
    } catch (e) {
      throw new SynplugError(`cannot write ${this.path(name)}: ${(e as Error).message}`);
    }
  }

  /** @throws {SynplugError} unreadable or invalid file */
  readSetup(): SetupRecord | undefined { return this.read<SetupRecord>('setup.json'); }
  /** @throws {SynplugError} the directory or file cannot be written */
  writeSetup(r: SetupRecord): void { this.write('setup.json', r); }
  /** @throws {SynplugError} unreadable or invalid file (not a plug record) */
  readPlug(): PlugRecord | undefined {
    const r = this.read<PlugRecord>('plug.json');
    if (r === undefined) return undefined;
    if (typeof r !== 'object' || r === null || (r.state !== 'buffering' && r.state !== 'released') || !Number.isInteger(r.pid)
      || !Number.isFinite(r.since) || !Number.isFinite(r.deadline) || Math.abs(r.deadline) > 8.64e15) {
      throw new SynplugError(`${this.path('plug.json')} is not a plug record; remove it (after 'synplug release', which does not need it)`);
    }
    return r;
  }
  /** @throws {SynplugError} the directory or file cannot be written */
  writePlug(r: PlugRecord): void { this.write('plug.json', r); }
  /** Remove both files (teardown). */
  /** @throws {Error} a file cannot be removed (e.g. it is a directory) */
  clear(): void {
    for (const n of ['setup.json', 'plug.json']) rmSync(this.path(n), { force: true });
  }
}

/**
 * Start time of a process (field 22 of /proc/PID/stat, in clock ticks since boot).
 * @returns undefined when the process does not exist
 */
export function processStartTime(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm (field 2) may hold spaces and parentheses: split after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(rest[19]);
  } catch {
    return undefined;
  }
}

/** Whether the process that wrote a record is still the same live process. */
export function ownerAlive(pid: number, pidStart?: number): boolean {
  const start = processStartTime(pid);
  if (start === undefined) return false;
  return pidStart === undefined || start === pidStart;
}

/**
 * Whether a recorded plug was left buffering by someone who can no longer
 * release it: the owner (a protect) died, or the deadline passed.
 * A manual plug (`synplug plug`) is left alone until its deadline.
 */
export function isStale(r: PlugRecord | undefined, now = Date.now()): boolean {
  if (!r || r.state !== 'buffering') return false;
  if (now >= r.deadline) return true;
  if (r.owner === 'manual') return false;
  return !ownerAlive(r.pid, r.pidStart);
}
