/**
 * Every reload accounted: around `protect`, `plug` and `release`, the
 * history line (history.ts) and the Prometheus metrics (metrics.ts), from
 * one place.
 *
 * - The metrics file: the command's `metricsFile`, else the one
 *   `setup --metrics-file` recorded in setup.json. It is checked before the
 *   command runs: a bad path is a {@link UsageError} with nothing held or
 *   changed; except a recorded one for `release`, which never keeps a
 *   release from happening (a warning instead, no metrics written).
 * - After the command: its history entry (when it gives one) and the
 *   metrics. A failure there is one of the result's `warnings`, never its
 *   outcome.
 * - A command that threw: counted `failed` in the metrics (no history
 *   line), under the `hold` label of the holds set up; then the error goes
 *   on unchanged. Except a usage error (`usage`, exit 2: bad arguments, a
 *   device that does not exist), refused before anything was sent: no
 *   reload was tried, none is counted and the file is not written.
 *
 * @module
 */
import { resolveConfig } from './config.js';
import { recordHistory, type HistoryCommand, type HistoryEntry } from './history.js';
import { checkMetricsFile, holdLabel, recordMetrics, type MetricsChange, type MetricsTarget } from './metrics.js';
import { StateStore } from './state.js';
import { SynplugError, UsageError } from '../netlink/errors.js';

/** What a command that ran adds to the history and the metrics. */
export interface Accounting {
  /** the holds it held (or would have), by id: the metrics' `hold` label, the history's `holds` */
  holds: string[];
  /** its history entry's `exitCode` and `report`, and `start` when not the command's call (absent: no line) */
  history?: Pick<HistoryEntry, 'exitCode' | 'report'> & Partial<Pick<HistoryEntry, 'start'>>;
  /** what it adds to the metrics totals */
  change: MetricsChange;
  /** write nothing, neither the history line nor the metrics (a teardown cleared the state directory meanwhile) */
  nothing?: boolean;
}

/** The options the accounting reads. */
export interface AccountingOptions {
  stateDir?: string;
  metricsFile?: string;
}

/**
 * Run one command with its accounting.
 * @param command what runs (the history's `command`)
 * @param opts the state directory and the metrics file, as the command got them
 * @param run the command
 * @param account what its result adds ({@link Accounting})
 * @returns run's result, with a warning per write that failed
 * @throws {UsageError} a bad metrics file (given, or recorded for protect and plug), before `run`
 * @throws whatever `run` throws (after counting it `failed`, unless a usage error)
 */
export async function accounted<R extends { warnings?: string[] }>(
  command: HistoryCommand,
  opts: AccountingOptions | undefined,
  run: () => Promise<R>,
  account: (r: R) => Accounting,
): Promise<R> {
  const stateDir = resolveConfig({ stateDir: opts?.stateDir }).stateDir;
  let recorded: { metricsFile?: string; holds: string[] } | undefined;
  try {
    const r = new StateStore(stateDir).readSetup();
    if (r) recorded = { ...(r.metricsFile !== undefined && { metricsFile: r.metricsFile }), holds: Object.keys(r.holds) };
  } catch {
    // A damaged or unsafe state: the command reports it (or, for release, releases anyway); no recorded default here.
  }
  const warnings: string[] = [];
  let target: MetricsTarget | undefined;
  if (opts?.metricsFile !== undefined) target = checkMetricsFile(opts.metricsFile, stateDir);
  else if (recorded?.metricsFile !== undefined) {
    try {
      target = checkMetricsFile(recorded.metricsFile, stateDir);
    } catch (e) {
      const why = `the metrics file that setup recorded (${recorded.metricsFile}, in ${stateDir}/setup.json) cannot be written: ${(e as Error).message}`;
      if (command !== 'release') throw new UsageError(`${why}; give --metrics-file PATH, or run 'synplug setup --metrics-file PATH' again`);
      warnings.push(`${why}: the metrics were not written`);
    }
  }
  const started = new Date();
  let r: R;
  try {
    r = await run();
  } catch (e) {
    if (target && !refusedAsUsage(e)) await recordMetrics(stateDir, target, holdLabel(recorded?.holds ?? []), 'failed').catch(() => {});
    throw e;
  }
  const a = account(r);
  if (a.nothing) return r;
  if (a.history) {
    // in one order (sorted, as the metrics' label), whatever order the holds were set up in
    const w = await recordHistory(stateDir, { command, start: started.toISOString(), ...a.history, holds: [...a.holds].sort() });
    if (w) warnings.push(w);
  }
  if (target) {
    const w = await recordMetrics(stateDir, target, holdLabel(a.holds), a.change).then(
      () => undefined,
      (e: unknown) => `the metrics were not written: ${e instanceof Error ? e.message : String(e)}`,
    );
    if (w) warnings.push(w);
  }
  if (warnings.length) r.warnings = [...(r.warnings ?? []), ...warnings];
  return r;
}

/** A usage error (exit 2): refused before anything was sent, so no reload was tried (not one that failed). */
const refusedAsUsage = (e: unknown): boolean => e instanceof SynplugError && e.category === 'usage';
