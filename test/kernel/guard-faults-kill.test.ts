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
import { requireVm } from '../helpers/guard-vm.js';
import { faultsSample } from '../helpers/faults-sample.js';

test('SIGKILL sample on the plug hold: 6 runs (protect, watchdog or both; at start, holding, SYN queued): nothing left held, no SYN lost, a clean next command', async (t) => {
  requireVm();
  t.timeout(20 * 60_000);
  await faultsSample(t, 'plug', 6, 2);
});
