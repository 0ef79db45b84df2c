/**
 * The demo's options (src/demo/options.ts) and its command's flags and text
 * (src/cli/demo-command.ts): defaults, every bound refused as a usage error
 * before anything runs, the restart schedule, the table built from a result,
 * and the exit code of each verdict.
 */
import test from 'ava';
import {
  resolveDemoOptions,
  restartDueMs,
  DEMO_DEFAULTS,
  DEMO_LIMITS,
  MIN_RUN_BETWEEN_MS,
  DRAIN_MAX_MS,
  HOLD_MARGIN_MS,
  TIMEOUT_MARGIN_MS,
} from '../../src/demo/options.js';
import { phaseResult, verdictOf } from '../../src/demo/stats.js';
import { demoOptionsFromFlags, formatDemo, formatMs, demoExitCode } from '../../src/cli/demo-command.js';
import { DEMO_FAILED, exitCodeOf, EXIT } from '../../src/cli/exit-codes.js';
import { UsageError } from '../../src/netlink/errors.js';
import type { DemoResult, FailureKind, RequestRecord } from '../../src/demo/types.js';

test('defaults: 5 s per phase, 10 restarts, 200 ms gap, 16 clients; max-hold = gap + drain bound + margin; timeout past the max-hold', (t) => {
  const o = resolveDemoOptions();
  t.is(o.seconds, DEMO_DEFAULTS.seconds);
  t.is(o.restarts, DEMO_DEFAULTS.restarts);
  t.is(o.gapMs, DEMO_DEFAULTS.gapMs);
  t.is(o.clients, DEMO_DEFAULTS.clients);
  t.is(o.intervalMs, (o.seconds * 1000) / o.restarts);
  t.is(o.drainMaxMs, DRAIN_MAX_MS);
  t.is(o.maxHoldMs, o.gapMs + DRAIN_MAX_MS + HOLD_MARGIN_MS);
  t.is(o.requestTimeoutMs, o.maxHoldMs + TIMEOUT_MARGIN_MS, 'a held request is never a timeout');
  t.is(resolveDemoOptions({ requestTimeoutMs: 500 }).requestTimeoutMs, 500);
});

test('bounds: each out-of-range value is a UsageError naming its flag', (t) => {
  const bad: Array<[Parameters<typeof resolveDemoOptions>[0], RegExp]> = [
    [{ restarts: 0 }, /restarts \(--restarts\)/],
    [{ restarts: 1.5 }, /restarts \(--restarts\): a whole number/],
    [{ restarts: DEMO_LIMITS.restarts.max + 1 }, /--restarts/],
    [{ seconds: 0 }, /seconds \(--seconds\)/],
    [{ seconds: Number.NaN }, /--seconds/],
    [{ seconds: DEMO_LIMITS.seconds.max + 1 }, /--seconds/],
    [{ gapMs: 0 }, /gap \(--gap\)/],
    [{ gapMs: -1 }, /--gap/],
    [{ gapMs: DEMO_LIMITS.gapMs.max + 1 }, /--gap/],
    [{ clients: 0 }, /clients/],
    [{ requestTimeoutMs: 10 }, /requestTimeoutMs/],
  ];
  for (const [o, re] of bad) {
    const e = t.throws(() => resolveDemoOptions(o), { instanceOf: UsageError }, JSON.stringify(o));
    t.regex(e!.message, re);
    t.is(exitCodeOf(e), EXIT.USAGE);
  }
});

test('restarts that do not fit in the phase are refused: each needs its gap plus the least run between', (t) => {
  // 10 restarts in 2 s: 200 ms each, a 200 ms gap leaves nothing between
  const e = t.throws(() => resolveDemoOptions({ seconds: 2, restarts: 10, gapMs: 200 }), { instanceOf: UsageError });
  t.regex(e!.message, /10 restarts with a gap of 200 ms do not fit in 2 s per phase/);
  // exactly enough fits
  const gapMs = 200;
  const o = resolveDemoOptions({ seconds: (10 * (gapMs + MIN_RUN_BETWEEN_MS)) / 1000, restarts: 10, gapMs });
  t.is(o.intervalMs, gapMs + MIN_RUN_BETWEEN_MS);
});

test('restartDueMs: spread evenly, each in the middle of its share, all inside the phase', (t) => {
  const o = resolveDemoOptions({ seconds: 4, restarts: 4, gapMs: 100 });
  const due = [0, 1, 2, 3].map((k) => restartDueMs(k, o.intervalMs));
  t.deepEqual(due, [500, 1500, 2500, 3500]);
  for (const d of due) t.true(d + o.gapMs < o.seconds * 1000);
});

test('flags: --seconds abc, --restarts 0/x, --gap -1/abc/0 are usage errors (exit 2); good flags become options', (t) => {
  for (const f of [
    { seconds: 'abc' },
    { seconds: '-1' },
    { seconds: '' },
    { restarts: 'x' },
    { restarts: '-3' },
    { restarts: '1.5' },
    { gap: '-1' },
    { gap: 'abc' },
    { gap: '0' },
  ]) {
    const e = t.throws(() => resolveDemoOptions(demoOptionsFromFlags(f)), { instanceOf: UsageError }, JSON.stringify(f));
    t.is(exitCodeOf(e), EXIT.USAGE);
  }
  t.throws(() => resolveDemoOptions(demoOptionsFromFlags({ restarts: '0' })), { instanceOf: UsageError, message: /--restarts/ });
  t.deepEqual(demoOptionsFromFlags({ seconds: '2.5', restarts: '3', gap: '300ms' }), { seconds: 2.5, restarts: 3, gapMs: 300 });
  t.deepEqual(demoOptionsFromFlags({ gap: '1.5s' }), { gapMs: 1500 });
  t.deepEqual(demoOptionsFromFlags({ gap: '0.5' }), { gapMs: 500 }, 'a bare number is seconds, as for every duration');
  t.deepEqual(demoOptionsFromFlags({}), {});
});

test('formatMs', (t) => {
  t.is(formatMs(0.4234), '0.42 ms');
  t.is(formatMs(12.34), '12.3 ms');
  t.is(formatMs(215.4), '215 ms');
  t.is(formatMs(1234), '1.23 s');
  t.is(formatMs(null), '-');
});

function rec(totalMs: number, failure: FailureKind | null): RequestRecord {
  return { startMs: 0, connectMs: failure ? null : 0.1, totalMs, failure };
}

function result(): DemoResult {
  const u = phaseResult(
    'unprotected',
    [...Array.from({ length: 40 }, (_, i) => rec(0.5 + i / 100, null)), rec(0.1, 'refused'), rec(0.1, 'refused'), rec(3, 'reset')],
    [
      { atMs: 250, closedMs: 201, queuedAtClose: 3 },
      { atMs: 750, closedMs: 202, queuedAtClose: 2 },
    ],
    2,
    1000,
  );
  const p = phaseResult(
    'protected',
    Array.from({ length: 30 }, (_, i) => rec(1 + i * 10, null)),
    [
      { atMs: 250, closedMs: 203, queuedAtClose: 0, heldMs: 240, synsHeld: 15, drops: 0, maxHoldReached: false },
      { atMs: 750, closedMs: 204, queuedAtClose: null, heldMs: 260, synsHeld: 17, drops: 0, maxHoldReached: false },
    ],
    2,
    1000,
  );
  return {
    netns: 'own',
    mode: 'local',
    via: 'plug',
    dev: 'lo',
    addr: '169.254.255.254',
    port: 40000,
    seconds: 1,
    restarts: 2,
    gapMs: 200,
    clients: 16,
    maxHoldMs: 5200,
    setup: { by: 'demo', actions: ['add qdisc prio 1: root bands 4'], removed: ['nftables table ip synplug'] },
    phases: { unprotected: u, protected: p },
    ...verdictOf(u, p),
    notices: [],
  };
}

test('formatDemo: one column per phase, each row from the result', (t) => {
  const r = result();
  const text = formatDemo(r);
  const row = (label: string) => {
    const line = text.split('\n').find((l) => l.startsWith(label));
    t.truthy(line, label);
    return line!.slice(label.length).trim().split(/ {2,}/);
  };
  const u = r.phases.unprotected;
  const p = r.phases.protected;
  t.deepEqual(row('requests (a new connection each)'), [String(u.requests), String(p.requests)]);
  t.deepEqual(row('failed'), [String(u.failed), String(p.failed)]);
  t.deepEqual(row('  refused'), [String(u.failures.refused), String(p.failures.refused)]);
  t.deepEqual(row('  reset'), [String(u.failures.reset), String(p.failures.reset)]);
  t.deepEqual(row('latency p99'), [formatMs(u.latencyMs.p99), formatMs(p.latencyMs.p99)]);
  t.deepEqual(row('latency max'), [formatMs(u.latencyMs.max), formatMs(p.latencyMs.max)]);
  t.deepEqual(row('restarts'), ['2/2', '2/2']);
  t.deepEqual(row('left in the accept queue at close'), [String(3 + 2), '0'], 'summed over the restarts that could be read');
  t.deepEqual(row('held per restart (mean / max)'), ['-', `${formatMs(p.heldMs!.mean)} / ${formatMs(p.heldMs!.max)}`]);
  t.deepEqual(row('SYNs held per restart (mean)'), ['-', p.synsHeld!.mean.toFixed(1)]);
  t.regex(text, /set up for the demo and removed again/);
  t.true(text.trimEnd().endsWith(`PROTECTED: ${r.message}`));
});

test('formatDemo: a protected phase cut short says how many restarts ran, in the summary line, the table and the verdict', (t) => {
  const full = result();
  const p0 = full.phases.protected;
  const p = phaseResult(
    'protected',
    Array.from({ length: 30 }, () => rec(1, null)),
    p0.restarts.slice(0, 1),
    2,
    1000,
  );
  const r: DemoResult = { ...full, phases: { ...full.phases, protected: p }, ...verdictOf(full.phases.unprotected, p) };
  const text = formatDemo(r);
  t.regex(text.split('\n')[0], /restarted without socket hand-over \(gap 200 ms\), 2 times unprotected and 1 of 2 times protected over 1 s/);
  t.regex(text, /\nrestarts +2\/2 +1\/2\n/);
  t.regex(text, /PROTECTED: .*under synplug, 1 restart lost none of 30; only 1 of the 2 protected restarts ran/);
  t.regex(formatDemo(full).split('\n')[0], /, 2 times per phase over 1 s/);
});

test('formatDemo, inbound mode: the first line names the client namespace, its address and veth end, and the removed hold', (t) => {
  const r = {
    ...result(),
    mode: 'inbound' as const,
    dev: 'spdab12s',
    addr: '169.254.212.1',
    inbound: { clientDev: 'spdab12c', clientAddr: '169.254.212.2' },
  };
  const first = formatDemo(r).split('\n')[0];
  t.regex(first, /^synplug demo: a pong server on 169\.254\.212\.1:40000 /);
  t.regex(
    first,
    /clients in a network namespace of the demo's own \(169\.254\.212\.2 on spdab12c\), joined by a veth pair; the inbound hold on spdab12s was set up for the demo and removed again/,
  );
  t.notRegex(first, /local hold/);
});

test('exit code: 0 when the protected phase lost nothing (also when insensitive), non-zero when it lost a request', (t) => {
  t.is(demoExitCode('protected'), EXIT.OK);
  t.is(demoExitCode('insensitive'), EXIT.OK);
  t.not(demoExitCode('failed'), EXIT.OK);
  t.is(demoExitCode('failed'), DEMO_FAILED, "the demo verdict's code, from the one table");
  t.not(demoExitCode('failed'), EXIT.FAILURE, 'distinct from a failure to run the demo');
});

test('runDemo: bad options are refused before anything is looked at, and no signal handler is left behind', async (t) => {
  const { runDemo } = await import('../../src/demo/run.js');
  const signals = ['SIGINT', 'SIGTERM', 'SIGUSR2'] as const;
  const before = signals.map((s) => process.listenerCount(s));
  await t.throwsAsync(runDemo({ gapMs: 0 }), { instanceOf: UsageError, message: /--gap/ });
  await t.throwsAsync(runDemo({ seconds: 1, restarts: 10 }), { instanceOf: UsageError, message: /do not fit/ });
  t.deepEqual(
    signals.map((s) => process.listenerCount(s)),
    before,
  );
});
