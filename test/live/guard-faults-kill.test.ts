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
import { faultsSample } from '../helpers/faults-sample.js';

test('SIGKILL sample: 9 runs (protect, watchdog, holder or several; at start, holding, SYN queued): nothing left held, no SYN lost, a clean next command', async (t) => {
  t.timeout(10 * 60_000);
  await faultsSample(t, 'queue', 9, 3);
});
