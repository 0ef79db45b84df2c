/**
 * The reload history: one JSON line per protect, manual plug and manual
 * release in the state directory, bounded and rotated. Lines are appended
 * when a command ends, so the history is in the order the commands ended;
 * each line says when its command started (`start`) and ended (`end`).
 *
 * `history.jsonl` holds the newest entries; when an append would take it
 * over {@link HISTORY_FILE_CAP} bytes it becomes `history.1.jsonl` (the one
 * older generation, replacing the previous one) and a new `history.jsonl`
 * starts. Both follow the state directory's rules (state-fs.ts): opened
 * relative to the checked directory (owner-only, 0700), never through a
 * link, size-capped before a byte is read, replaced whole (a temporary file,
 * then a rename), appended under the lease lock (two protects ending together
 * lose no line).
 *
 * Writing the history never blocks a release: protect appends after the
 * release, and a failure there is a warning, never the command's exit code.
 *
 * @module
 */
import { lstatSync } from 'node:fs';
import { SynplugError } from '../netlink/errors.js';
import { openCheckedDir, type CheckedDir } from './state-fs.js';
import { StateFileError } from './errors.js';
import { StateStore } from './state.js';
import { withLeaseLock } from './leases.js';
import type { ReloadReport } from './report.js';
import { ownerAlive, type Lease } from './state.js';
import { defaultNetns, netnsCookie } from '../netlink/netns.js';

/** The newest entries. */
export const HISTORY_FILE = 'history.jsonl';
/** The generation before. */
export const HISTORY_OLD_FILE = 'history.1.jsonl';
/** A history file's largest size, bytes (two files: the history takes at most twice this). */
export const HISTORY_FILE_CAP = 256 * 1024;

/** The commands the history records. */
export const HISTORY_COMMANDS = ['protect', 'plug', 'release'] as const;
/** One of {@link HISTORY_COMMANDS}. */
export type HistoryCommand = (typeof HISTORY_COMMANDS)[number];

/** One entry of the history. */
export interface HistoryEntry {
  /** 1, 2, 3... in the order the entries were written */
  id: number;
  /** what ran */
  command: HistoryCommand;
  /** when the command started, ISO 8601 */
  start: string;
  /**
   * when the command ended (its line was written: the history's order), ISO 8601; absent in lines an earlier synplug
   * wrote
   */
  end?: string;
  /** the holds held, by id (`queue`, `local`, `inbound:eth0`...) */
  holds: string[];
  /** protect: the reload command's exit status (-1 with `killed`: unknown); plug and release: 0 (they are recorded when they did their job) */
  exitCode: number;
  /** protect: it was killed during the hold (SIGKILL, a crash): its watchdog released the hold and wrote this entry */
  killed?: true;
  /**
   * release: a manual plug's hold that no `synplug release` ended: its lease was dropped at its --max-hold deadline
   * (by its watchdog, or the queue's holder), which wrote this entry; nothing was counted
   */
  maxHold?: true;
  /**
   * protect: the hold reached its --max-hold before the command ended (or, with --wait-listen, before a new listener
   * appeared) and was released then: the server may not have been ready for the clients let go
   */
  maxHoldReached?: true;
  /** the reload's report (plug: nothing held yet; release: what the manual hold held, refused/reset/listener drops not counted) */
  report: ReloadReport;
}

const WHAT = 'synplug writes one JSON object per line there: move the file away (the history starts again), or remove it';

/** Parse one file's lines. @throws {StateFileError} a line that is not an entry synplug wrote */
function parse(d: CheckedDir, name: string): HistoryEntry[] {
  const data = d.read(name, HISTORY_FILE_CAP, WHAT);
  if (data === undefined) return [];
  const out: HistoryEntry[] = [];
  const lines = data.toString('utf8').split('\n');
  lines.forEach((line, i) => {
    if (line === '' && i === lines.length - 1) return;
    let e: unknown;
    try {
      e = JSON.parse(line);
    } catch {
      e = undefined;
    }
    if (!isEntry(e)) throw new StateFileError(d.file(name), `${d.file(name)} is damaged: line ${i + 1} is not a history entry synplug wrote (${WHAT})`);
    out.push(e);
  });
  return out;
}

/** Whether a parsed line has an entry's fields, of the right types. */
function isEntry(e: unknown): e is HistoryEntry {
  if (typeof e !== 'object' || e === null) return false;
  const x = e as Record<string, unknown>;
  const r = x.report as Record<string, unknown> | undefined;
  return (
    Number.isInteger(x.id) &&
    (HISTORY_COMMANDS as readonly unknown[]).includes(x.command) &&
    typeof x.start === 'string' &&
    !Number.isNaN(Date.parse(x.start)) &&
    (x.end === undefined || (typeof x.end === 'string' && !Number.isNaN(Date.parse(x.end)))) &&
    Array.isArray(x.holds) &&
    x.holds.every((h) => typeof h === 'string') &&
    Number.isInteger(x.exitCode) &&
    (x.killed === undefined || x.killed === true) &&
    (x.maxHold === undefined || x.maxHold === true) &&
    (x.maxHoldReached === undefined || x.maxHoldReached === true) &&
    typeof r === 'object' &&
    r !== null &&
    typeof r.heldSyns === 'number' &&
    typeof r.holdMs === 'number' &&
    (x.netns === undefined || (typeof x.netns === 'string' && /^[1-9][0-9]{0,19}$/.test(x.netns)))
  );
}

/**
 * The network namespace an entry is of, as written with it (not part of
 * {@link HistoryEntry}): the cookie (SO_NETNS_COOKIE) of the namespace the
 * command acted in; none before Linux 5.14 (and in entries of an earlier synplug).
 */
const netnsField = (): { netns?: string } => {
  const cookie = netnsCookie(defaultNetns());
  return cookie !== undefined ? { netns: cookie } : {};
};

/**
 * The history of the network namespace this call acts in, oldest first; the
 * last `n` when given. Entries another namespace's commands wrote to the same
 * directory (a state directory given to both, an unnamed `unshare -n` that state-dir.ts cannot tell from home)
 * are not this namespace's reloads: left out (and left in the file).
 * @param stateDir the state directory
 * @returns [] when the directory or the files do not exist
 * @throws {SynplugError} the directory is root's and this user is not (`permission`: run it as root)
 * @throws {StateFileError} the directory is unsafe, or a history file is damaged, a link, too large (`bad-state`), named
 */
export function readHistory(stateDir: string, n?: number): HistoryEntry[] {
  refuseRootsDir(stateDir);
  const d = openCheckedDir(stateDir, false);
  if (!d) return [];
  try {
    const here = netnsField().netns;
    const all = [...parse(d, HISTORY_OLD_FILE), ...parse(d, HISTORY_FILE)].flatMap(({ netns, ...e }: HistoryEntry & { netns?: string }) =>
      netns === undefined || here === undefined || netns === here ? [e] : [],
    );
    return n === undefined ? all : all.slice(Math.max(0, all.length - n));
  } finally {
    d.close();
  }
}

/**
 * A state directory of root's read by another user: what every other command
 * says without root (run it as root, `permission`), not that the directory
 * is unsafe (`bad-state`): root's directory is the one protect, run as root,
 * records in, and only root reads it. Any other owner is left to the checks.
 * @throws {SynplugError} the directory is root's and this user is not root (`permission`)
 */
function refuseRootsDir(stateDir: string): void {
  const euid = process.geteuid?.();
  if (euid === undefined || euid === 0) return;
  let uid: number;
  try {
    uid = lstatSync(stateDir).uid;
  } catch {
    return; // not there: nothing recorded (the checks say the rest)
  }
  if (uid === 0)
    throw new SynplugError(
      `history reads the state directory ${stateDir}, which is root's (uid 0: the reloads protect recorded as root): run it as root, or give --state-dir a directory of your own`,
      'permission',
    );
}

/**
 * Append one entry (its id is the next one; its `end` now, unless given), under the lease lock, rotating
 * when the file would pass `cap` (at most, and by default, {@link HISTORY_FILE_CAP}). A damaged file is left
 * as it is (for a person to read) and nothing is appended until it is moved
 * away.
 * @returns the entry written
 * @throws {StateFileError} the directory is unsafe, a history file is damaged (named), or a file cannot be written (`failure` when the disk refused)
 */
export async function appendHistory(stateDir: string, entry: Omit<HistoryEntry, 'id'>, cap = HISTORY_FILE_CAP): Promise<HistoryEntry> {
  const end = entry.end ?? new Date().toISOString();
  return withLeaseLock(new StateStore(stateDir), () => {
    const d = openCheckedDir(stateDir, true)!;
    try {
      let current = d.read(HISTORY_FILE, HISTORY_FILE_CAP, WHAT);
      const lastId = parse(d, HISTORY_FILE).at(-1)?.id ?? parse(d, HISTORY_OLD_FILE).at(-1)?.id ?? 0;
      const full: HistoryEntry = { id: lastId + 1, ...entry, end };
      const line = Buffer.from(`${JSON.stringify({ ...full, ...netnsField() })}\n`);
      if (current && current.length + line.length > Math.min(cap, HISTORY_FILE_CAP)) {
        d.writeAtomic(HISTORY_OLD_FILE, current);
        current = undefined;
      }
      d.writeAtomic(HISTORY_FILE, current ? Buffer.concat([current, line]) : line);
      return full;
    } finally {
      d.close();
    }
  });
}

/**
 * Append one command's entry to the history (after it ran). Never throws:
 * a failure is returned as a warning, and the command's outcome stays its own.
 * @returns the warning (a sentence), or undefined when the entry was written
 */
export async function recordHistory(stateDir: string, entry: Omit<HistoryEntry, 'id'>): Promise<string | undefined> {
  try {
    await appendHistory(stateDir, entry);
    return undefined;
  } catch (e) {
    return `the reload history was not written: ${e instanceof Error ? e.message : String(e)}`;
  }
}

/**
 * The entry of a protect killed during its hold (its watchdog released the
 * hold; or, its watchdog killed too, the queue's holder, which judges the
 * leases itself): when it started, what it held, how long; nothing else was
 * counted.
 * @param lease the protect's lease, as it was recorded
 * @param now when the watchdog released, ms since the epoch
 * @param by who released it, for the entry's words (default: its watchdog)
 */
export function killedProtectEntry(lease: Lease, now: number, by = 'its watchdog'): Omit<HistoryEntry, 'id'> {
  return {
    command: 'protect',
    ...heldUntil(lease, now, `protect was killed during the hold (${by} released it): the SYNs held and what was lost were not counted`),
    exitCode: -1,
    killed: true,
  };
}

/**
 * The entry of a manual plug whose lease was dropped at its --max-hold
 * deadline (no `synplug release` ended it): a release line, `maxHold: true`,
 * when it started, what it held, how long; nothing was counted (`release`
 * counts a manual hold from its counters; whoever drops the lease at the
 * deadline does not read them).
 * @param lease the manual plug's lease, as it was recorded
 * @param now when its lease was dropped, ms since the epoch
 * @param by who dropped it and released, for the entry's words
 */
export function maxHoldPlugEntry(lease: Lease, now: number, by: string): Omit<HistoryEntry, 'id'> {
  return {
    command: 'release',
    ...heldUntil(lease, now, `a manual plug held until its --max-hold (${by} released it): the SYNs held were not counted`),
    exitCode: 0,
    maxHold: true,
  };
}

/** The start, end, holds and report (nothing counted, `why`) of an entry whose hold a lease kept from its `since` to `now`. */
function heldUntil(lease: Lease, now: number, why: string): Pick<HistoryEntry, 'start' | 'end' | 'holds' | 'report'> {
  return {
    start: new Date(lease.since).toISOString(),
    end: new Date(now).toISOString(),
    holds: [...lease.holds],
    // (report.ts's unwatchedReport, with nothing counted, written out: the watchdog does not load report.ts and what it imports)
    report: {
      heldSyns: 0,
      holdMs: Math.max(0, now - lease.since),
      dropped: null,
      refused: null,
      reset: null,
      listenerDrops: null,
      lossless: null,
      uncounted: [why],
    },
  };
}

/** Who let a killed protect's hold go when another synplug command dropped its lease: that command, its watchdog gone or not. */
function droppedBy(l: Lease): string {
  return l.watchdogPid !== undefined && ownerAlive(l.watchdogPid) ? 'the next synplug command' : 'the next synplug command, its watchdog gone too,';
}

/**
 * Write the history line of each protect killed during its hold whose lease a
 * drop removed as dead (leases.ts's deadProtectLeases: its watchdog, and a
 * queue hold's holder, killed too, so that neither wrote it). The drop
 * removed them under the lease lock, so nobody else writes them: one line
 * each. Never throws.
 * @param dead the dropped leases of killed protects
 * @param by who released the hold, for the entry's words, by lease
 * @returns the warnings of lines not written (one sentence each)
 */
export async function recordKilledProtects(stateDir: string, dead: readonly Lease[], by: (l: Lease) => string = droppedBy): Promise<string[]> {
  const warnings: string[] = [];
  for (const l of dead) {
    const w = await recordHistory(stateDir, killedProtectEntry(l, Date.now(), by(l)));
    if (w) warnings.push(w);
  }
  return warnings;
}

/**
 * The last reload recorded, for `status`: never throws (a damaged history is
 * named in `historyError` instead, and status still shows the rest).
 * @param stateDir the state directory
 */
export function lastReload(stateDir: string): { lastReload: HistoryEntry | null; historyError?: string } {
  try {
    return { lastReload: readHistory(stateDir, 1)[0] ?? null };
  } catch (e) {
    return { lastReload: null, historyError: e instanceof Error ? e.message : String(e) };
  }
}
