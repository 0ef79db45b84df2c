/**
 * Prometheus metrics of the reloads: `protect --metrics-file PATH` writes
 * the text exposition format (version 0.0.4) the way node_exporter's
 * textfile collector reads it: a temporary file in PATH's directory (named
 * `.NAME.PID.tmp`, which the collector ignores: it reads `*.prom`), then a
 * rename over PATH.
 *
 * Counters are cumulative across processes: their totals live in
 * `metrics.json` in the state directory (the state directory's rules:
 * owner-only, never through a link, size-capped), updated under the lease
 * lock; the metrics file is written from them.
 *
 * Series, each labelled `hold`: the holds the command held, by id, joined
 * with `+` (`queue`, `local`, `local+inbound:eth0`; `none` when nothing was
 * set up), so that one host's holds are told apart:
 * - `synplug_reloads_total{result,hold}`: `lossless`, `lost` (refused, reset
 *   or dropped connections), `failed` (the command failed, or protect, plug
 *   or release refused; not a usage error, exit 2, which tried no reload
 *   and is not counted), `uncounted` (the report could not count everything:
 *   a manual plug's release counts what it held, never what was refused);
 * - `synplug_held_syns_total`, `synplug_refused_total`, `synplug_reset_total`,
 *   `synplug_dropped_total`: a count the report could not make (null: not
 *   counted, e.g. the SYNs a queue holder that died during the hold dropped)
 *   adds nothing to its total; that reload is in `reloads_total` as `lost`
 *   (a failed hold) or `uncounted`;
 * - the histogram `synplug_hold_seconds`.
 *
 * protect counts one reload per run; a manual `release` that ended a hold
 * counts one; `plug` counts nothing but its failure (its release counts the
 * hold). Each writes the file.
 *
 * The format is written here (a few lines) rather than through prom-client,
 * whose registry lives in one process and would still need these totals
 * carried over from the state file.
 *
 * @module
 */
import { fstatSync, realpathSync, statfsSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { UsageError } from '../netlink/errors.js';
import { NETNS_RUN_DIR } from '../netlink/netns.js';
import { HOME_STATE_DIR } from './state-dir.js';
import { StateFileError } from './errors.js';
import { withLeaseLock } from './leases.js';
import { controlCharAt, escapeControl, foreignFile, openCheckedDir, refuseDotDot, type DirRole } from './state-fs.js';
import { StateStore } from './state.js';
import type { ReloadReport } from './report.js';

/** The totals' file in the state directory. */
export const METRICS_STATE_FILE = 'metrics.json';
/** Its largest size, bytes. */
const METRICS_STATE_CAP = 64 * 1024;
/** the largest file at the metrics file's name read to tell whether synplug wrote it, bytes */
const METRICS_FILE_CAP = 1024 * 1024;
/** The hold histogram's upper bounds, seconds. */
export const HOLD_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const;

/** A reload's result, as `synplug_reloads_total` labels it. */
export type ReloadResult = 'lossless' | 'lost' | 'failed' | 'uncounted';
const RESULTS: readonly ReloadResult[] = ['lossless', 'lost', 'failed', 'uncounted'];

/** The cumulative totals of one `hold` label. */
export interface MetricsTotals {
  reloads: Record<ReloadResult, number>;
  heldSyns: number;
  refused: number;
  reset: number;
  dropped: number;
  /** per bucket of {@link HOLD_BUCKETS} (not cumulative), then the count over the last bound */
  holdBuckets: number[];
  holdSum: number;
  holdCount: number;
}

/** The totals' file (`metrics.json`): per `hold` label. */
export interface MetricsState {
  version: 2;
  /** by the `hold` label's value */
  holds: Record<string, MetricsTotals>;
}

const empty = (): MetricsTotals => ({
  reloads: { lossless: 0, lost: 0, failed: 0, uncounted: 0 },
  heldSyns: 0,
  refused: 0,
  reset: 0,
  dropped: 0,
  holdBuckets: HOLD_BUCKETS.map(() => 0).concat(0),
  holdSum: 0,
  holdCount: 0,
});

const count = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) >= 0;

/** The most `hold` labels kept (one per combination of holds set up on a host: far fewer in practice). */
const MAX_HOLD_LABELS = 64;
/** A `hold` label's value: hold ids (letters, digits, `:._-`) joined with `+`, or `none`. */
const HOLD_LABEL = /^[A-Za-z0-9:._+-]{1,200}$/;

function isState(x: unknown): x is MetricsState {
  if (typeof x !== 'object' || x === null) return false;
  const s = x as Record<string, unknown>;
  if (s.version !== 2 || typeof s.holds !== 'object' || s.holds === null || Array.isArray(s.holds)) return false;
  const entries = Object.entries(s.holds);
  return entries.length <= MAX_HOLD_LABELS && entries.every(([k, t]) => HOLD_LABEL.test(k) && isTotals(t));
}

function isTotals(x: unknown): x is MetricsTotals {
  if (typeof x !== 'object' || x === null) return false;
  const t = x as Record<string, unknown>;
  const reloads = t.reloads as Record<string, unknown> | undefined;
  return (
    typeof reloads === 'object' &&
    reloads !== null &&
    RESULTS.every((r) => count(reloads[r])) &&
    ['heldSyns', 'refused', 'reset', 'dropped', 'holdCount'].every((k) => count(t[k])) &&
    typeof t.holdSum === 'number' &&
    t.holdSum >= 0 &&
    Array.isArray(t.holdBuckets) &&
    t.holdBuckets.length === HOLD_BUCKETS.length + 1 &&
    t.holdBuckets.every(count)
  );
}

/** A metrics file to write: its directory checked, before anything is held. */
export interface MetricsTarget {
  /** the directory, absolute */
  dir: string;
  /** the file's name in it */
  name: string;
}

/** The kernel's file systems where no file can be made, by statfs(2) f_type (linux/magic.h): PROC_SUPER_MAGIC, SYSFS_MAGIC. */
const KERNEL_FILE_SYSTEMS = new Map([
  [0x9fa0, '/proc (procfs)'],
  [0x62656572, '/sys (sysfs)'],
]);

/** The kernel file system `dir` is in (statfs(2), which follows links: it only names the problem), or undefined. */
function kernelFileSystemOf(dir: string): string | undefined {
  try {
    return KERNEL_FILE_SYSTEMS.get(Number(statfsSync(dir).type));
  } catch {
    return undefined; // missing or unreadable: the walk below says why
  }
}

/** How the state directory's checks name the metrics file's directory (after `--metrics-file PATH: its directory ...`). */
const METRICS_DIR_ROLE: DirRole = {
  noun: '',
  name: 'the directory',
  contents: 'the metrics file',
  option: '--metrics-file',
  // node_exporter reads the file as its own user: a directory only its owner can enter would hide it
  ownMode: 'mode 0755: node_exporter, another user, reads the file there',
};

/** Where a metrics file goes, for the advice: node_exporter's textfile directory. */
const TEXTFILE_DIR = "node_exporter's textfile directory (its --collector.textfile.directory; Debian's: /var/lib/prometheus/node-exporter)";

/** A path as the kernel resolves it (links followed: only to name a problem), or as text when it does not exist. */
function realOrResolved(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** Whether `dir` is `top` or inside it (both as {@link realOrResolved}). */
function isWithin(dir: string, top: string): boolean {
  const d = realOrResolved(dir);
  const t = realOrResolved(top);
  return d === t || d.startsWith(t === '/' ? '/' : `${t}/`);
}

/**
 * The directories no metrics file goes in, each with why: where `ip netns`
 * keeps named namespaces (a file there would be taken for one), and the
 * state directories (synplug's own records: owner-only, where node_exporter
 * cannot read, and where a file of its name would be taken for a record).
 */
function forbiddenMetricsDirs(stateDir: string | undefined): Array<{ dir: string; why: string }> {
  return [
    {
      dir: NETNS_RUN_DIR,
      why: `${NETNS_RUN_DIR} is where 'ip netns' keeps the named network namespaces (each file there is taken for one)`,
    },
    ...(stateDir !== undefined
      ? [{ dir: stateDir, why: `${stateDir} is the state directory, synplug's own records (owner-only: node_exporter cannot read it)` }]
      : []),
    {
      dir: HOME_STATE_DIR,
      why: `${HOME_STATE_DIR} holds synplug's state directories, its own records (owner-only: node_exporter cannot read them)`,
    },
  ];
}

/**
 * Check a `--metrics-file` path: no control character in it, its directory
 * must exist and be safe (the state directory's rules: every component
 * root's or the user's, none writable by others) and be neither under
 * /run/netns nor in a state directory, its name a plain file name.
 * @param stateDir the command's state directory (no metrics file goes in it)
 * @throws {UsageError} a control character (shown escaped), a relative path, a missing or unsafe directory, one in
 *   /proc or /sys, under /run/netns, in the state directory (or /run/synplug), a `..` component, an empty name (exit 2,
 *   before anything is held)
 */
export function checkMetricsFile(path: string, stateDir?: string): MetricsTarget {
  const at = controlCharAt(path);
  if (at >= 0)
    throw new UsageError(
      `--metrics-file "${escapeControl(path)}" has a control character (${escapeControl(path[at]!)}, at character ${at + 1}), which no file name synplug writes needs: give the path without it`,
    );
  refuseDotDot(path, '--metrics-file');
  const full = resolve(path);
  const name = basename(full);
  if (path === '' || name === '' || path.endsWith('/')) throw new UsageError(`--metrics-file '${path}': give a file name`);
  // as --state-dir: a relative path would name another file for every command run from elsewhere
  if (!isAbsolute(path)) throw new UsageError(`--metrics-file ${path} is a relative path: give it absolute (from here: ${full})`);
  // node_exporter's textfile collector reads *.prom only; and a name of that form is never a system file synplug would replace
  if (!name.endsWith('.prom') || name === '.prom')
    throw new UsageError(`--metrics-file ${full}: the name must end in .prom (node_exporter's textfile collector reads only *.prom files), e.g. synplug.prom`);
  const dir = dirname(full);
  for (const f of forbiddenMetricsDirs(stateDir))
    if (isWithin(dir, f.dir))
      throw new UsageError(
        `--metrics-file ${full}: ${f.why}; no metrics file goes there: give a directory of its own (node_exporter's textfile directory, e.g. /var/lib/prometheus/node-exporter)`,
      );
  const kernelFs = kernelFileSystemOf(dir);
  if (kernelFs !== undefined)
    throw new UsageError(
      `--metrics-file ${full}: ${dir} is in ${kernelFs}, a file system of the kernel's where no file can be made: give a file in ${TEXTFILE_DIR}`,
    );
  let d: ReturnType<typeof openCheckedDir>;
  try {
    d = openCheckedDir(dir, false, METRICS_DIR_ROLE);
  } catch (e) {
    // the state directory's rules, said of the metrics file's directory
    throw new UsageError(`--metrics-file ${full}: its directory is not safe to write in: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!d)
    throw new UsageError(
      `--metrics-file ${full}: the directory ${dir} does not exist (synplug creates no directory for it): give a file in ${TEXTFILE_DIR}, or create ${dir} (mode 0755) and point node_exporter at it`,
    );
  try {
    refuseForbiddenIdentity(d.fd, full, stateDir);
    refuseForeignFile(d, name, full);
  } finally {
    d.close();
  }
  return { dir, name };
}

/**
 * Refuse a metrics directory that IS one of {@link forbiddenMetricsDirs} under another path (a bind mount, a
 * symbolic link on the way): the same device and inode, whatever the path says.
 * @param fd the metrics directory's descriptor
 * @throws {UsageError} it is one of them
 */
function refuseForbiddenIdentity(fd: number, full: string, stateDir: string | undefined): void {
  const here = fstatSync(fd);
  for (const f of forbiddenMetricsDirs(stateDir)) {
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(f.dir);
    } catch {
      continue; // not there: nothing to be
    }
    if (st && st.dev === here.dev && st.ino === here.ino)
      throw new UsageError(
        `--metrics-file ${full}: its directory is ${f.dir} under another path (the same device and inode: a bind mount or a symbolic link): ${f.why}; no metrics file goes there: give a directory of its own (node_exporter's textfile directory, e.g. /var/lib/prometheus/node-exporter)`,
      );
  }
}

/** The first line of every metrics file synplug writes ({@link metricsText}). */
const OURS = '# HELP synplug_reloads_total ';

/**
 * A file already at the metrics file's name is replaced only when synplug
 * wrote it (its first line is {@link OURS}): any other file, or anything
 * that is not a regular file, is someone else's and is left alone.
 * @throws {UsageError} it exists and is not synplug's metrics file
 */
function refuseForeignFile(d: NonNullable<ReturnType<typeof openCheckedDir>>, name: string, full: string): void {
  const refuse = (what: string) =>
    new UsageError(`--metrics-file ${full}: ${what}, which synplug does not replace: give the name of a new file, or of a metrics file synplug wrote`);
  let head: Buffer | undefined;
  try {
    head = d.read(name, METRICS_FILE_CAP, 'the metrics file');
  } catch (e) {
    throw refuse(`it exists and ${unreadableWhy(d, name, e)}`);
  }
  if (head !== undefined && !head.toString('utf8').startsWith(OURS)) throw refuse('it exists and is not a metrics file synplug wrote');
}

/**
 * Why a file at the metrics file's name could not be read as one: what it is (not a regular file, another user's or
 * with more than one name as state-fs.ts's foreignFile says, larger than a metrics file), else the read's error.
 */
function unreadableWhy(d: NonNullable<ReturnType<typeof openCheckedDir>>, name: string, e: unknown): string {
  let st: ReturnType<typeof d.stat>;
  try {
    st = d.stat(name);
  } catch {
    st = undefined;
  }
  if (st && !st.isFile()) return 'is not a regular file';
  const foreign = st && foreignFile({ uid: Number(st.uid), nlink: Number(st.nlink) });
  if (foreign) return foreign;
  if (st && st.size > BigInt(METRICS_FILE_CAP)) return `is ${st.size} bytes, larger than a metrics file synplug writes (at most ${METRICS_FILE_CAP})`;
  return `cannot be read (${(e as Error).message})`;
}

/** A checked target's full path, as setup records it. */
export function metricsPathOf(t: MetricsTarget): string {
  return join(t.dir, t.name);
}

/** What one command adds to the totals: a reload's outcome, `failed` (the command threw), or nothing (`null`: the file is written, nothing counted). */
export type MetricsChange = { exitCode: number; report: ReloadReport } | 'failed' | null;

/** A reload's result: failed when the command threw or failed; else by the report. */
export function reloadResult(outcome: { exitCode: number; report: ReloadReport } | 'failed'): ReloadResult {
  if (outcome === 'failed' || outcome.exitCode !== 0) return 'failed';
  if (outcome.report.lossless === null) return 'uncounted';
  return outcome.report.lossless ? 'lossless' : 'lost';
}

/** The totals with one command's change added (a copy). */
export function addReload(t: MetricsTotals, change: MetricsChange): MetricsTotals {
  const n: MetricsTotals = { ...t, reloads: { ...t.reloads }, holdBuckets: [...t.holdBuckets] };
  if (change === null) return n;
  n.reloads[reloadResult(change)] += 1;
  if (change === 'failed') return n;
  const r = change.report;
  n.heldSyns += r.heldSyns;
  n.refused += r.refused ?? 0;
  n.reset += r.reset ?? 0;
  n.dropped += r.dropped ?? 0;
  const s = r.holdMs / 1000;
  const i = HOLD_BUCKETS.findIndex((b) => s <= b);
  n.holdBuckets[i === -1 ? HOLD_BUCKETS.length : i] += 1;
  n.holdSum += s;
  n.holdCount += 1;
  return n;
}

/** The `hold` label of a command over these holds (ids): joined with `+`, sorted; `none` when there is none. */
export function holdLabel(holds: readonly string[]): string {
  return holds.length ? [...holds].sort().join('+') : 'none';
}

/** The totals, per `hold` label, in the text exposition format (version 0.0.4). */
export function metricsText(state: MetricsState): string {
  const labels = Object.keys(state.holds).sort();
  const lines: string[] = [];
  const counter = (name: string, help: string, value: (t: MetricsTotals) => Array<[string, number]>) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} counter`);
    for (const h of labels) for (const [extra, v] of value(state.holds[h])) lines.push(`${name}{${extra}hold="${h}"} ${v}`);
  };
  counter(
    'synplug_reloads_total',
    'Reloads accounted by synplug (protect; a manual release that ended a hold), by result: lossless; lost (connections refused, reset or dropped); failed (the command failed, or synplug refused before holding; bad arguments are not counted); uncounted (the report could not count everything).',
    (t) => RESULTS.map((r) => [`result="${r}",`, t.reloads[r]]),
  );
  counter('synplug_held_syns_total', 'SYNs of new connections held during reloads, then released.', (t) => [['', t.heldSyns]]);
  counter('synplug_refused_total', 'SYN packets to what was held answered with a RST, retransmissions included (released before a listener was back).', (t) => [
    ['', t.refused],
  ]);
  counter('synplug_reset_total', "Connections of what was held reset during reloads (a closing listener's queue).", (t) => [['', t.reset]]);
  counter('synplug_dropped_total', 'Held SYNs lost in the hold itself (over its limit); a count lost with a queue holder that died adds nothing.', (t) => [
    ['', t.dropped],
  ]);
  lines.push('# HELP synplug_hold_seconds How long each reload held new connections, seconds.', '# TYPE synplug_hold_seconds histogram');
  for (const h of labels) {
    const t = state.holds[h];
    let cum = 0;
    HOLD_BUCKETS.forEach((b, i) => {
      cum += t.holdBuckets[i];
      lines.push(`synplug_hold_seconds_bucket{hold="${h}",le="${b}"} ${cum}`);
    });
    lines.push(
      `synplug_hold_seconds_bucket{hold="${h}",le="+Inf"} ${t.holdCount}`,
      `synplug_hold_seconds_sum{hold="${h}"} ${t.holdSum}`,
      `synplug_hold_seconds_count{hold="${h}"} ${t.holdCount}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

const REMOVE_IT = 'remove it (the counters start again from 0)';

/**
 * Add one command's change to the totals of its `hold` label (under the
 * lease lock) and write the metrics file from every label's totals.
 * @param hold the `hold` label ({@link holdLabel})
 * @param change what the command adds ({@link MetricsChange})
 * @throws {StateFileError} the state directory or the totals file is unsafe or damaged, or a write failed
 * @throws {UsageError} the metrics file's directory went missing or became unsafe
 */
export async function recordMetrics(stateDir: string, target: MetricsTarget, hold: string, change: MetricsChange): Promise<void> {
  await withLeaseLock(new StateStore(stateDir), () => {
    const m = openCheckedDir(target.dir, false);
    if (!m) throw new UsageError(`the metrics file's directory ${target.dir} no longer exists`);
    try {
      // the target first: a file that is not synplug's is refused before any total changes
      refuseForeignFile(m, target.name, join(target.dir, target.name));
      const d = openCheckedDir(stateDir, true)!;
      let state: MetricsState;
      try {
        const raw = d.read(METRICS_STATE_FILE, METRICS_STATE_CAP, `synplug keeps the metrics totals there: ${REMOVE_IT}`);
        let parsed: unknown;
        try {
          parsed = raw === undefined ? { version: 2, holds: {} } : JSON.parse(raw.toString('utf8'));
        } catch {
          parsed = undefined;
        }
        if (!isState(parsed))
          throw new StateFileError(d.file(METRICS_STATE_FILE), `${d.file(METRICS_STATE_FILE)} is not a metrics record synplug wrote: ${REMOVE_IT}`);
        if (!HOLD_LABEL.test(hold)) throw new UsageError(`'${hold}' is not a hold label (hold ids joined with '+')`);
        if (!(hold in parsed.holds) && Object.keys(parsed.holds).length >= MAX_HOLD_LABELS)
          throw new StateFileError(d.file(METRICS_STATE_FILE), `${d.file(METRICS_STATE_FILE)} already counts ${MAX_HOLD_LABELS} hold labels: ${REMOVE_IT}`);
        state = { version: 2, holds: { ...parsed.holds, [hold]: addReload(parsed.holds[hold] ?? empty(), change) } };
        d.writeAtomic(METRICS_STATE_FILE, Buffer.from(`${JSON.stringify(state)}\n`));
      } finally {
        d.close();
      }
      // 0644: node_exporter reads it as its own user (prometheus); the totals in the state directory stay owner-only
      m.writeAtomic(target.name, Buffer.from(metricsText(state)), 0o644);
    } finally {
      m.close();
    }
  });
}

/**
 * At a teardown of every hold: remove the metrics file setup recorded, when
 * it is synplug's (its first line, as {@link checkMetricsFile} checks), under
 * the lease lock (no protect writes it meanwhile). Nothing writes it any
 * more (a later setup records no metrics file unless given one), and
 * node_exporter's textfile collector would export its last totals for ever:
 * gone, its series end. The totals stay in `metrics.json`, so a later
 * `setup --metrics-file PATH` goes on counting from them.
 * @param stateDir the state directory (its lease lock)
 * @param path the recorded metrics file (absolute)
 * @returns teardown's words: `removed` (it was there and synplug's), `kept` (there, but not removed: why), neither (not there)
 */
export async function removeMetricsFile(stateDir: string, path: string): Promise<{ removed?: string; kept?: string }> {
  const again = `run 'synplug setup --metrics-file ${path}' to have it written again`;
  const keep = (why: string) => ({ kept: `the metrics file ${path}: ${why}; nothing writes it any more: remove it yourself` });
  try {
    return await withLeaseLock(new StateStore(stateDir), () => {
      const d = openCheckedDir(dirname(path), false, METRICS_DIR_ROLE);
      if (!d) return {};
      try {
        try {
          refuseForeignFile(d, basename(path), path);
        } catch {
          return keep('not a metrics file synplug wrote, left alone');
        }
        return d.unlink(basename(path))
          ? {
              removed: `the metrics file ${path} (no longer written: node_exporter stops exporting synplug's series; the totals stay in metrics.json; ${again})`,
            }
          : {};
      } finally {
        d.close();
      }
    });
  } catch (e) {
    return keep(`not removed: ${e instanceof Error ? e.message : String(e)}`);
  }
}
