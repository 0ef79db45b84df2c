/**
 * The queue holder's log: what went wrong in a holder process
 * (leases-holder.ts), which has no terminal (it is detached, its stdio
 * closed), kept where a user finds it: `holder.log` in the state directory,
 * one JSON object per line, `{"at","queueNum","pid","message"}`. `status`
 * names the last one ({@link lastHolderFailure}).
 *
 * The file follows the state directory's rules (state-fs.ts): opened
 * relative to the checked directory, never through a link (O_NOFOLLOW), a
 * regular file only, mode 0600, size-capped. A line is appended with one
 * write(2) in O_APPEND mode (holders of different queues may write at once);
 * when an append would take the file over {@link HOLDER_LOG_CAP} bytes, the
 * newest half is kept (replaced whole: a temporary file, then a rename).
 *
 * @module
 */
import { closeSync, constants as fsConstants, fstatSync, writeSync } from 'node:fs';
import { openCheckedDir, type CheckedDir } from './state-fs.js';

/** The log's name in the state directory. */
export const HOLDER_LOG = 'holder.log';
/** Its largest size, bytes. */
export const HOLDER_LOG_CAP = 64 * 1024;
/** The longest message kept, characters (a longer one is cut). */
const MESSAGE_CAP = 2000;

/** One failure of a queue holder. */
export interface HolderFailure {
  /** when, ISO 8601 */
  at: string;
  /** the queue it held */
  queueNum: number;
  /** the holder's process id */
  pid: number;
  /** what went wrong, a sentence */
  message: string;
}

const WHAT = "synplug's queue holders write one JSON object per line there: remove it (a new one starts)";

/** Whether a parsed line is a {@link HolderFailure}. */
function isFailure(v: unknown): v is HolderFailure {
  if (typeof v !== 'object' || v === null) return false;
  const x = v as Record<string, unknown>;
  return (
    typeof x.at === 'string' && !Number.isNaN(Date.parse(x.at)) && Number.isInteger(x.queueNum) && Number.isInteger(x.pid) && typeof x.message === 'string'
  );
}

/** The newest lines of `data` that fit in half the cap. */
function newestHalf(data: Buffer): Buffer {
  const lines = data.toString('utf8').split('\n').filter(Boolean);
  const kept: string[] = [];
  let size = 0;
  for (let i = lines.length - 1; i >= 0; i--) {
    size += Buffer.byteLength(lines[i]) + 1;
    if (size > HOLDER_LOG_CAP / 2) break;
    kept.unshift(lines[i]);
  }
  return Buffer.from(kept.map((l) => `${l}\n`).join(''));
}

/** Append one line (O_APPEND, 0600, O_NOFOLLOW), keeping the newest half first when it would pass the cap. */
function append(d: CheckedDir, line: Buffer): void {
  const fd = d.open(HOLDER_LOG, fsConstants.O_WRONLY | fsConstants.O_APPEND | fsConstants.O_CREAT | fsConstants.O_NONBLOCK, 0o600);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return; // something synplug did not put there: left alone, nothing written through it
    if (st.size + line.length > HOLDER_LOG_CAP) {
      const old = st.size <= 2 * HOLDER_LOG_CAP ? d.read(HOLDER_LOG, 2 * HOLDER_LOG_CAP, WHAT) : undefined;
      d.writeAtomic(HOLDER_LOG, Buffer.concat([old ? newestHalf(old) : Buffer.alloc(0), line]));
      return;
    }
    writeSync(fd, line);
  } finally {
    closeSync(fd);
  }
}

/**
 * Record a holder's failure in the state directory's holder log. Never
 * throws: the holder goes on (holding nothing is its safe side); a log that
 * cannot be written is returned as a sentence.
 * @param stateDir the state directory (it exists: setup made it)
 * @returns undefined when the line was written; else why not
 */
export function logHolderFailure(stateDir: string, f: Omit<HolderFailure, 'at'> & { at?: string }): string | undefined {
  try {
    const d = openCheckedDir(stateDir, false);
    if (!d) return `${stateDir} does not exist`;
    try {
      const entry: HolderFailure = { at: f.at ?? new Date().toISOString(), queueNum: f.queueNum, pid: f.pid, message: f.message.slice(0, MESSAGE_CAP) };
      append(d, Buffer.from(`${JSON.stringify(entry)}\n`));
      return undefined;
    } finally {
      d.close();
    }
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

/**
 * The last failure a queue holder recorded, for `status`: never throws (a
 * log that cannot be read is named in `holderLogError`, and status shows the
 * rest). Lines that are not failures synplug wrote are skipped.
 * @param stateDir the state directory
 * @returns `lastHolderFailure` (null: none recorded), and `holderLog`, the file's path, when there is one
 */
export function lastHolderFailure(stateDir: string): { lastHolderFailure: HolderFailure | null; holderLog?: string; holderLogError?: string } {
  try {
    const d = openCheckedDir(stateDir, false);
    if (!d) return { lastHolderFailure: null };
    try {
      const data = d.read(HOLDER_LOG, 2 * HOLDER_LOG_CAP, WHAT);
      if (data === undefined) return { lastHolderFailure: null };
      const lines = data.toString('utf8').split('\n');
      for (let i = lines.length - 1; i >= 0; i--) {
        let v: unknown;
        try {
          v = JSON.parse(lines[i]);
        } catch {
          continue;
        }
        if (isFailure(v)) return { lastHolderFailure: v, holderLog: d.file(HOLDER_LOG) };
      }
      return { lastHolderFailure: null, holderLog: d.file(HOLDER_LOG) };
    } finally {
      d.close();
    }
  } catch (e) {
    return { lastHolderFailure: null, holderLogError: e instanceof Error ? e.message : String(e) };
  }
}
