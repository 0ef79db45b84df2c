/**
 * Reading the client's per-request CSV and summarising it (bench/reload).
 */
import { readFileSync } from 'node:fs';
import { ERROR_KINDS, type ErrorKind } from './common.js';

/** One request, times in ms; `start` is wall clock ms since the epoch. */
export interface RequestRecord {
  start: number;
  /** ms to the established connection, NaN if it never connected */
  connect: number;
  /** ms from start to the end of the request (connect included) */
  total: number;
  /** HTTP status, 0 if none */
  status: number;
  /** null on success */
  error: ErrorKind | null;
}

/** Parse the CSV written by client.ts. */
export function readRecords(file: string): RequestRecord[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const out: RequestRecord[] = [];
  for (let i = 1; i < lines.length; i++) {
    const l = lines[i];
    if (!l) continue;
    const [s, c, t, st, e] = l.split(',');
    out.push({
      start: Number(s),
      connect: c === '' ? NaN : Number(c),
      total: Number(t),
      status: st === '' ? 0 : Number(st),
      error: e === '' || e === undefined ? null : (e as ErrorKind),
    });
  }
  return out;
}

/** Nearest-rank percentile of an ascending array (p in 0..100); NaN when empty. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** What the tables print for one run of the client. */
export interface ClientSummary {
  requests: number;
  ok: number;
  failed: number;
  /** failed / requests, percent */
  failedPercent: number;
  /** failures by group: connect errors, read errors, non-2xx (timeouts are in connect/read) */
  failedConnect: number;
  failedRead: number;
  failedHttp: number;
  /** failures by kind (only kinds that occurred) */
  errors: Partial<Record<ErrorKind, number>>;
  /** latency of successful requests, connect included, ms */
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** connect time of successful requests, ms */
  connectP99: number;
  connectMax: number;
  /** successful requests per second over the window */
  rps: number;
}

/** Summarise the records of one window of `seconds`. */
export function summarise(recs: readonly RequestRecord[], seconds: number): ClientSummary {
  const lat: number[] = [];
  const con: number[] = [];
  const errors: Partial<Record<ErrorKind, number>> = {};
  let fc = 0;
  let fr = 0;
  let fh = 0;
  for (const r of recs) {
    if (r.error === null) {
      lat.push(r.total);
      con.push(r.connect);
      continue;
    }
    errors[r.error] = (errors[r.error] ?? 0) + 1;
    if (r.error.startsWith('connect-')) fc++;
    else if (r.error === 'non-2xx') fh++;
    else fr++;
  }
  const sortedLat = Float64Array.from(lat).sort();
  const sortedCon = Float64Array.from(con).sort();
  const failed = fc + fr + fh;
  const ordered: Partial<Record<ErrorKind, number>> = {};
  for (const k of ERROR_KINDS) if (errors[k]) ordered[k] = errors[k];
  return {
    requests: recs.length,
    ok: lat.length,
    failed,
    failedPercent: recs.length ? (100 * failed) / recs.length : 0,
    failedConnect: fc,
    failedRead: fr,
    failedHttp: fh,
    errors: ordered,
    p50: percentile(sortedLat, 50),
    p90: percentile(sortedLat, 90),
    p99: percentile(sortedLat, 99),
    max: sortedLat.length ? sortedLat[sortedLat.length - 1] : NaN,
    connectP99: percentile(sortedCon, 99),
    connectMax: sortedCon.length ? sortedCon[sortedCon.length - 1] : NaN,
    rps: seconds > 0 ? lat.length / seconds : 0,
  };
}

/** Mean and max of a list (NaN when empty). */
export function meanMax(xs: readonly number[]): { mean: number; max: number } {
  if (xs.length === 0) return { mean: NaN, max: NaN };
  let s = 0;
  let m = -Infinity;
  for (const x of xs) {
    s += x;
    if (x > m) m = x;
  }
  return { mean: s / xs.length, max: m };
}

/** Format ms for tables: 0.42 ms, 12.3 ms, 1.23 s. */
export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return '-';
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 100) return `${ms.toFixed(0)} ms`;
  if (ms >= 10) return `${ms.toFixed(1)} ms`;
  return `${ms.toFixed(2)} ms`;
}

/** Render rows as a plain text table with a header rule. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: readonly string[]): string =>
    r
      .map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i])))
      .join('  ')
      .trimEnd();
  return [line(header), w.map((n) => '-'.repeat(n)).join('  '), ...rows.map(line)].join('\n');
}
