/**
 * Live (this kernel, the queue hold): a short sample of `npm run
 * bench:faults` (bench/faults-lib.ts; issue #19, deliverable 12). SIGKILL
 * to protect, its watchdog, the queue's holder, or several, at moments drawn from a fixed seed;
 * after every run the queue is not left bound, the SYN sent during the hold
 * connects, and the next command finds a clean state. Judged from the
 * kernel's state (/proc/net/netfilter/nfnetlink_queue), the records (status)
 * and the client, by the order of events.
 */
import test from 'ava';
import { killCampaign } from '../../bench/faults-lib.js';

test('SIGKILL sample: 9 runs (protect, watchdog, holder or several; at start, holding, SYN queued): nothing left held, no SYN lost, a clean next command', async (t) => {
  t.timeout(10 * 60_000);
  const outcomes: Array<{ target: string; moment: string; watchdogFound: boolean }> = [];
  const r = await killCampaign(9, 19, (o, i) => {
    outcomes.push(o);
    t.log(`run ${i + 1}: kill ${o.target} at ${o.moment} +${o.delayMs} ms${o.watchdogFound ? '' : ' (no watchdog yet)'}${o.detail ? `: ${o.detail}` : ''}`);
  });
  for (const o of outcomes.filter((x) => x.moment !== 'start')) t.true(o.watchdogFound, `${o.target} at ${o.moment}: the watchdog was found while holding`);
  t.is(r.runs, 9);
  t.deepEqual(r.failures, []);
  t.is(r.leftBound, 0);
  t.is(r.synLost, 0);
  t.is(r.notClean, 0);
  t.true(Object.values(r.byTarget).filter((n) => n > 0).length >= 3, `at least three kinds of kill: ${JSON.stringify(r.byTarget)}`);
});
