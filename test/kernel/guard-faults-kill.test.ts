/**
 * Kernel (VM: sch_prio, sch_plug, cls_fw): a short sample of `npm run
 * bench:faults -- --vm` (bench/faults-lib.ts; issue #19, deliverable 12) on
 * the local plug hold, in a network namespace of its own. SIGKILL to
 * protect, its watchdog, or both, at moments drawn from a fixed seed; after
 * every run marking is off (disarmed, or the set element's kernel-side
 * timeout) and a new connection is not held, the SYN sent during the hold
 * connects (released by the watchdog, by protect, or, when both were
 * killed, by the next command's stale-plug recovery), and the next command
 * finds a clean state. Judged from the kernel's state (tc -s, nft), the
 * records (status, check) and the client, by the order of events.
 */
import test from 'ava';
import { killCampaign } from '../../bench/faults-lib.js';
import { requireVm } from '../helpers/guard-vm.js';

test('SIGKILL sample on the plug hold: 6 runs (protect, watchdog or both; at start, holding, SYN queued): nothing left held, no SYN lost, a clean next command', async (t) => {
  requireVm();
  t.timeout(20 * 60_000);
  const outcomes: Array<{ target: string; moment: string; watchdogFound: boolean; recoveredByNext: boolean }> = [];
  const r = await killCampaign(
    6,
    19,
    (o, i) => {
      outcomes.push(o);
      t.log(
        `run ${i + 1}: kill ${o.target} at ${o.moment} +${o.delayMs} ms${o.watchdogFound ? '' : ' (no watchdog yet)'}${o.recoveredByNext ? ' (released by the next command)' : ''}${o.detail ? `: ${o.detail}` : ''}`,
      );
    },
    'plug',
  );
  for (const o of outcomes.filter((x) => x.moment !== 'start')) t.true(o.watchdogFound, `${o.target} at ${o.moment}: the watchdog was found while holding`);
  t.is(r.runs, 6);
  t.deepEqual(r.failures, []);
  t.is(r.leftBound, 0);
  t.is(r.synLost, 0);
  t.is(r.notClean, 0);
  t.true(Object.values(r.byTarget).filter((n) => n > 0).length >= 2, `at least two kinds of kill: ${JSON.stringify(r.byTarget)}`);
});
