/**
 * The reload report's verdict (src/guard/report.ts `lossCauses`, the CLI's
 * `formatVerdict`) and its lossless rule: true only when every loss count is
 * 0, false when one is above 0, null when one could not be counted.
 */
import test from 'ava';
import { lossCauses, type ReloadReport } from '../../src/guard/report.js';
import { formatVerdict } from '../../src/cli/format-guard.js';

const base: ReloadReport = { heldSyns: 5, holdMs: 800, dropped: 0, refused: 0, reset: 0, listenerDrops: 0, lossless: true };
const how = { maxHoldReached: false, newListener: undefined };

test('lossless: one verdict line with the three counts', (t) => {
  t.is(formatVerdict({ report: base, ...how }), 'lossless: 0 refused, 0 reset, 0 dropped');
  t.deepEqual(lossCauses(base, { maxHoldReached: false, waitedForListener: false }), []);
});

test('refused at the max-hold: lost, and the cause names the max-hold; without --wait-listen it suggests it', (t) => {
  const r = { ...base, refused: 7, lossless: false };
  const v = formatVerdict({ report: r, maxHoldReached: true, newListener: undefined });
  t.true(v.startsWith('LOST: 7 refused, 0 reset, 0 dropped; likely cause: '), v);
  t.regex(v, /max-hold/);
  t.regex(lossCauses(r, { maxHoldReached: false, waitedForListener: false })[0], /--wait-listen/);
});

test("reset: a closing listener's queue; dropped: the hold's limit; listener drops: the backlog", (t) => {
  const r = { ...base, reset: 2, dropped: 1, listenerDrops: 3, lossless: false };
  const causes = lossCauses(r, { maxHoldReached: false, waitedForListener: true });
  t.is(causes.length, 3);
  t.regex(causes[0], /closing listener/);
  t.regex(causes[1], /limit/);
  t.regex(causes[2], /backlog/);
  t.regex(formatVerdict({ report: r, ...how }), /^LOST: 0 refused, 2 reset, 1 dropped, 3 dropped by the listener; /);
});

test('not counted: the verdict says so and why, never "lossless"', (t) => {
  const r: ReloadReport = { ...base, refused: null, reset: null, listenerDrops: null, lossless: null, uncounted: ['no hold says what it holds'] };
  t.is(formatVerdict({ report: r, ...how }), 'not fully counted: ? refused, ? reset, 0 dropped (no hold says what it holds)');
});
