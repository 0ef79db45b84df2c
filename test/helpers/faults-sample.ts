/**
 * What a short sample of the SIGKILL campaign (bench/faults-lib.ts) must
 * show, in the live tier (the queue hold) and the kernel tier (the plug
 * hold): every run logged; the watchdog found whenever the kill came after
 * protect started holding; nothing left held, no SYN lost, a clean next
 * command; and several kinds of kill.
 */
import type { ExecutionContext } from 'ava';
import { killCampaign, type FaultHold } from '../../bench/faults-lib.js';

/** Run `runs` kills on `hold` (seed 19) and assert what the campaign promises. */
export async function faultsSample(t: ExecutionContext, hold: FaultHold, runs: number, kinds: number): Promise<void> {
  const outcomes: Array<{ target: string; moment: string; watchdogFound: boolean }> = [];
  const r = await killCampaign(
    runs,
    19,
    (o, i) => {
      outcomes.push(o);
      t.log(
        `run ${i + 1}: kill ${o.target} at ${o.moment} +${o.delayMs} ms${o.watchdogFound ? '' : ' (no watchdog yet)'}${o.recoveredByNext ? ' (released by the next command)' : ''}${o.detail ? `: ${o.detail}` : ''}`,
      );
    },
    hold,
  );
  for (const o of outcomes.filter((x) => x.moment !== 'start')) t.true(o.watchdogFound, `${o.target} at ${o.moment}: the watchdog was found while holding`);
  t.is(r.runs, runs);
  t.deepEqual(r.failures, []);
  t.is(r.leftBound, 0);
  t.is(r.synLost, 0);
  t.is(r.notClean, 0);
  t.true(Object.values(r.byTarget).filter((n) => n > 0).length >= kinds, `at least ${kinds} kinds of kill: ${JSON.stringify(r.byTarget)}`);
}
