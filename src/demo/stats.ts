/**
 * The demo's statistics: a phase's requests summarised into counts by
 * failure kind and latency percentiles, and the verdict of a run. Pure
 * functions (no sockets, no clock), unit-tested on their own.
 *
 * @module
 */
import { PHASE_STRETCH } from './options.js';
import { FAILURE_KINDS, type DemoVerdict, type FailureKind, type LatencySummary, type PhaseResult, type RequestRecord, type RestartResult } from './types.js';

/**
 * Nearest-rank percentile of an ascending array: the smallest value such that
 * at least `p` percent of the values are at or below it.
 * @param sorted values in ascending order
 * @param p percent, 0-100 (0 gives the smallest value)
 * @returns the value, or null for an empty array
 */
export function percentile(sorted: ArrayLike<number>, p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** The counts and latency of a list of requests (the part of a {@link PhaseResult} the requests give). */
export interface RequestSummary {
  requests: number;
  ok: number;
  failed: number;
  failures: Record<FailureKind, number>;
  otherErrors: Record<string, number>;
  latencyMs: LatencySummary;
}

/**
 * Count requests by outcome and take the latency (connect included) of the
 * successful ones: p50, p99 (nearest rank) and max, in ms.
 * @param records the phase's requests, in any order
 */
export function summariseRequests(records: readonly RequestRecord[]): RequestSummary {
  const failures = Object.fromEntries(FAILURE_KINDS.map((k) => [k, 0])) as Record<FailureKind, number>;
  const otherErrors: Record<string, number> = {};
  const ok: number[] = [];
  for (const r of records) {
    if (r.failure === null) {
      ok.push(r.totalMs);
      continue;
    }
    failures[r.failure]++;
    if (r.failure === 'other') {
      const code = r.errorCode ?? 'unknown';
      otherErrors[code] = (otherErrors[code] ?? 0) + 1;
    }
  }
  const sorted = Float64Array.from(ok).sort();
  return {
    requests: records.length,
    ok: ok.length,
    failed: records.length - ok.length,
    failures,
    otherErrors,
    latencyMs: {
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      max: sorted.length ? sorted[sorted.length - 1] : null,
    },
  };
}

/**
 * A whole phase's result: its requests summarised, its restarts, and (for the
 * protected phase) the hold time and SYNs held per restart.
 * @param name which phase
 * @param records its requests
 * @param restarts the restarts done, in order
 * @param restartsWanted the restarts asked for
 * @param durationMs the phase's wall time, ms
 */
export function phaseResult(
  name: PhaseResult['name'],
  records: readonly RequestRecord[],
  restarts: readonly RestartResult[],
  restartsWanted: number,
  durationMs: number,
): PhaseResult {
  const held = restarts.flatMap((r) => (r.heldMs === undefined ? [] : [r.heldMs]));
  const syns = restarts.flatMap((r) => (r.synsHeld === undefined ? [] : [r.synsHeld]));
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  return {
    name,
    durationMs,
    ...summariseRequests(records),
    restartsWanted,
    restarts: [...restarts],
    heldMs: held.length ? { mean: sum(held) / held.length, max: Math.max(...held) } : null,
    synsHeld: syns.length ? { mean: sum(syns) / syns.length, total: sum(syns) } : null,
  };
}

/**
 * The verdict of a run and the sentence that says it. A phase that ran fewer
 * restarts than asked (it reached its length limit, {@link PHASE_STRETCH}
 * times `seconds`: a slow machine) is no failure: the verdict rests on the
 * restarts that ran, and the sentence says how many of how many; no
 * protected restart at all is `insensitive` (the demo proved nothing).
 * @param unprotected phase 1
 * @param prot phase 2
 */
export function verdictOf(unprotected: PhaseResult, prot: PhaseResult): { verdict: DemoVerdict; message: string } {
  const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  const cut = [unprotected, prot].flatMap((p) =>
    p.restarts.length < p.restartsWanted ? [`${p.restarts.length} of the ${p.restartsWanted} ${p.name} restarts`] : [],
  );
  const cutText = cut.length
    ? `; only ${cut.join(' and ')} ran: the phase reached its length limit (${PHASE_STRETCH} times --seconds) on this machine, which the verdict rests on`
    : '';
  if (prot.failed > 0) {
    return {
      verdict: 'failed',
      message: `the protected phase lost ${plural(prot.failed, 'request')} of ${prot.requests} over ${plural(prot.restarts.length, 'restart')} (${kindsText(prot)}): synplug did not protect these restarts on this machine${cutText}`,
    };
  }
  if (prot.restarts.length === 0) {
    return {
      verdict: 'insensitive',
      message: `no protected restart ran (the phase reached its length limit, ${PHASE_STRETCH} times --seconds, before the first): the demo proved nothing on this machine (try more --seconds)`,
    };
  }
  if (unprotected.failed === 0) {
    return {
      verdict: 'insensitive',
      message: `the unprotected phase lost no request: the demo was not sensitive on this machine (try --gap 500ms or more --restarts)${cutText}`,
    };
  }
  return {
    verdict: 'protected',
    message: `without synplug, ${plural(unprotected.restarts.length, 'restart')} lost ${plural(unprotected.failed, 'request')} of ${unprotected.requests} (${kindsText(unprotected)}); under synplug, ${plural(prot.restarts.length, 'restart')} lost none of ${prot.requests}${cutText}`,
  };
}

function kindsText(p: PhaseResult): string {
  return FAILURE_KINDS.filter((k) => p.failures[k] > 0)
    .map((k) => `${p.failures[k]} ${k}`)
    .join(', ');
}
