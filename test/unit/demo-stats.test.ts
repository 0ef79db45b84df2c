/**
 * The demo's statistics (src/demo/stats.ts): nearest-rank percentiles against
 * a brute-force oracle, counts by failure kind, latency of successful
 * requests only, per-restart hold figures, and the verdict.
 */
import test from 'ava';
import fc from 'fast-check';
import { percentile, summariseRequests, phaseResult, verdictOf } from '../../src/demo/stats.js';
import { FAILURE_KINDS, type FailureKind, type RequestRecord } from '../../src/demo/types.js';

/** The definition itself: the smallest value with at least p% of the values at or below it. */
function oracle(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  for (const v of sorted) {
    const atOrBelow = sorted.filter((x) => x <= v).length;
    if (atOrBelow >= (p / 100) * sorted.length) return v;
  }
  return sorted[sorted.length - 1];
}

test('percentile: 1..100 gives p50 = 50, p99 = 99, p100 = 100, p0 = the smallest', (t) => {
  const a = Float64Array.from({ length: 100 }, (_, i) => i + 1);
  t.is(percentile(a, 50), 50);
  t.is(percentile(a, 99), 99);
  t.is(percentile(a, 100), 100);
  t.is(percentile(a, 0), 1);
  t.is(percentile([], 50), null);
  t.is(percentile([7], 99), 7);
});

test('percentile equals the nearest-rank definition on random data', (t) => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 10_000 }), { minLength: 1, maxLength: 300 }), fc.integer({ min: 1, max: 100 }), (values, p) => {
      const sorted = Float64Array.from(values).sort();
      return percentile(sorted, p) === oracle(values, p);
    }),
    { numRuns: 300 },
  );
  t.pass();
});

function rec(totalMs: number, failure: FailureKind | null, errorCode?: string): RequestRecord {
  return { startMs: 0, connectMs: failure === 'refused' ? null : totalMs / 2, totalMs, failure, ...(errorCode && { errorCode }) };
}

test('summariseRequests: counts each kind, latency from the successful requests only', (t) => {
  const records = [
    rec(1, null),
    rec(3, null),
    rec(2, null),
    rec(1000, 'timeout'),
    rec(0.1, 'refused', 'ECONNREFUSED'),
    rec(0.2, 'refused', 'ECONNREFUSED'),
    rec(5, 'reset', 'ECONNRESET'),
    rec(4, 'bad-response'),
    rec(9, 'other', 'EADDRNOTAVAIL'),
    rec(9, 'other', 'EADDRNOTAVAIL'),
    rec(9, 'other', 'EHOSTUNREACH'),
  ];
  const s = summariseRequests(records);
  t.is(s.requests, records.length);
  t.is(s.ok, records.filter((r) => r.failure === null).length);
  t.is(s.failed, s.requests - s.ok);
  for (const k of FAILURE_KINDS) t.is(s.failures[k], records.filter((r) => r.failure === k).length, k);
  t.deepEqual(s.otherErrors, { EADDRNOTAVAIL: 2, EHOSTUNREACH: 1 });
  const okTimes = records.filter((r) => r.failure === null).map((r) => r.totalMs);
  t.deepEqual(s.latencyMs, { p50: oracle(okTimes, 50), p99: oracle(okTimes, 99), max: Math.max(...okTimes) });
});

test('summariseRequests: no successful request gives null latencies, every kind present', (t) => {
  const s = summariseRequests([rec(1, 'refused')]);
  t.deepEqual(s.latencyMs, { p50: null, p99: null, max: null });
  t.deepEqual(Object.keys(s.failures).sort(), [...FAILURE_KINDS].sort());
  const empty = summariseRequests([]);
  t.is(empty.requests, 0);
  t.is(empty.failed, 0);
});

test('phaseResult: held time and SYNs held per restart from the restarts; none for the unprotected phase', (t) => {
  const restarts = [
    { atMs: 100, closedMs: 201, queuedAtClose: 0, heldMs: 210, synsHeld: 16, drops: 0, maxHoldReached: false },
    { atMs: 600, closedMs: 203, queuedAtClose: 0, heldMs: 230, synsHeld: 14, drops: 0, maxHoldReached: false },
  ];
  const p = phaseResult('protected', [rec(2, null)], restarts, 3, 1000);
  t.is(p.name, 'protected');
  t.is(p.restartsWanted, 3);
  t.is(p.restarts.length, 2);
  t.deepEqual(p.heldMs, { mean: (210 + 230) / 2, max: 230 });
  t.deepEqual(p.synsHeld, { mean: (16 + 14) / 2, total: 30 });
  const u = phaseResult('unprotected', [rec(2, null)], [{ atMs: 100, closedMs: 200, queuedAtClose: 1 }], 1, 1000);
  t.is(u.heldMs, null);
  t.is(u.synsHeld, null);
});

test('verdictOf: protected, failed, insensitive', (t) => {
  const r = (n: number, kind: FailureKind | null) => Array.from({ length: n }, () => rec(1, kind));
  const restarts = [{ atMs: 1, closedMs: 200, queuedAtClose: null }];
  const lossy = phaseResult('unprotected', [...r(90, null), ...r(7, 'refused'), ...r(3, 'reset')], restarts, 1, 1000);
  const clean = phaseResult('protected', r(80, null), restarts, 1, 1000);
  const leaky = phaseResult('protected', [...r(80, null), ...r(2, 'reset')], restarts, 1, 1000);
  const cleanU = phaseResult('unprotected', r(50, null), restarts, 1, 1000);

  const ok = verdictOf(lossy, clean);
  t.is(ok.verdict, 'protected');
  t.regex(ok.message, /lost 10 requests of 100 \(7 refused, 3 reset\)/);
  t.regex(ok.message, /lost none of 80/);
  const bad = verdictOf(lossy, leaky);
  t.is(bad.verdict, 'failed');
  t.regex(bad.message, /protected phase lost 2 requests of 82/);
  const insensitive = verdictOf(cleanU, clean);
  t.is(insensitive.verdict, 'insensitive');
  t.is(insensitive.message, 'the unprotected phase lost no request: the demo was not sensitive on this machine (try --gap 500ms or more --restarts)');
  t.is(verdictOf(cleanU, leaky).verdict, 'failed', 'a protected failure wins over insensitivity');
});

test('verdictOf: a phase cut short (fewer restarts than asked) is no failure; the sentence says how many ran; none protected proves nothing', (t) => {
  const r = (n: number, kind: FailureKind | null) => Array.from({ length: n }, () => rec(1, kind));
  const restart = (atMs: number) => ({ atMs, closedMs: 200, queuedAtClose: 0, heldMs: 230, synsHeld: 16, drops: 0, maxHoldReached: false });
  const lossy = phaseResult(
    'unprotected',
    [...r(90, null), ...r(10, 'refused')],
    [1, 2, 3].map((k) => ({ atMs: k, closedMs: 200, queuedAtClose: 0 })),
    3,
    1000,
  );
  const cut = phaseResult('protected', r(80, null), [restart(1), restart(2)], 3, 1000);
  const v = verdictOf(lossy, cut);
  t.is(v.verdict, 'protected');
  t.regex(
    v.message,
    /under synplug, 2 restarts lost none of 80; only 2 of the 3 protected restarts ran: the phase reached its length limit \(10 times --seconds\)/,
  );
  const none = verdictOf(lossy, phaseResult('protected', r(80, null), [], 3, 1000));
  t.is(none.verdict, 'insensitive');
  t.regex(none.message, /^no protected restart ran/);
  const leaky = verdictOf(lossy, phaseResult('protected', [...r(80, null), ...r(1, 'reset')], [restart(1)], 3, 1000));
  t.is(leaky.verdict, 'failed');
  t.regex(leaky.message, /over 1 restart \(1 reset\).*; only 1 of the 3 protected restarts ran/);
  t.notRegex(verdictOf(lossy, phaseResult('protected', r(80, null), [1, 2, 3].map(restart), 3, 1000)).message, /only/);
});
