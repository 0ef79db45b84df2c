/**
 * Kernel (VM): crash safety of `protect`, in its three layers.
 *
 * 1. The watchdog: SIGKILL of the protect process releases the plug at once
 *    (its stdin closes), long before the max-hold deadline.
 * 2. The kernel: with protect's whole process group and the watchdog killed,
 *    nothing releases, but the nftables set element times out at the
 *    max-hold deadline, so new connections are no longer marked (held) from
 *    then on. A connection started inside the window stays stuck: its SYN
 *    sits in the plug, and TCP does not retransmit a segment whose clone is
 *    still queued in the host (skb_still_in_host_queue).
 * 3. The next synplug command: `status` finds plug.json buffering past its
 *    deadline, releases the plug (the held packets leave it) and says so,
 *    then removes the hold's armed pieces (the fw filter, the marking chain).
 */
import test from 'ava';
import { status } from '../../src/guard/index.js';
import {
  ADDR,
  TEST_TIMEOUT,
  probe,
  within,
  waitFor,
  sleep,
  startedPid,
  readPlugJson,
  plugCounters,
  activeElements,
  assertPlugReleased,
  alive,
  kill,
  useGuardVm,
  setupWithProxy,
  startProtect,
} from '../helpers/guard-vm.js';

useGuardVm(test);

test.serial('SIGKILL of synplug protect during the command: the watchdog releases the plug at once', async (t) => {
  t.timeout(TEST_TIMEOUT);
  const proxy = await setupWithProxy(t);
  const {
    p,
    rec,
    gate: { started },
  } = await startProtect(t, ['--max-hold', '120s']);
  t.true(rec.watchdogPid !== undefined && alive(rec.watchdogPid), 'a watchdog runs');

  const held = probe(ADDR, proxy.port, ADDR);
  await sleep(500);
  t.is(held.connectedAt, undefined, 'held while protect lives');

  const tKill = Date.now();
  p.child.kill('SIGKILL');
  const ended = await within(p.done, 'protect to die');
  t.is(ended.signal, 'SIGKILL');
  t.is(await within(held.data, 'the held connection to complete once the watchdog released'), 'proxy');
  t.true(held.connectedAt! >= tKill);
  t.true(held.connectedAt! < rec.deadline, "released long before the max-hold deadline: by the watchdog, on the owner's death");

  await waitFor(() => readPlugJson()?.state === 'released', 'plug.json to say released');
  const after = readPlugJson()!;
  t.true(after.releasedAt! >= tKill && after.releasedAt! < rec.deadline);
  await waitFor(() => !alive(rec.watchdogPid!), 'the watchdog to exit');
  t.deepEqual(await activeElements(), [], 'the watchdog turned marking off');
  // and removed the armed pieces: the fw filter, the marking chain (assertPlugReleased below)
  t.true(alive(startedPid(started)!), 'the command itself was not killed (only synplug was)');
  await assertPlugReleased(t, proxy.port, 'after the watchdog');
});

test.serial(
  'SIGKILL of the whole process group and the watchdog: new connections are unheld from the max-hold deadline on; status then releases the stale plug',
  async (t) => {
    t.timeout(TEST_TIMEOUT);
    const proxy = await setupWithProxy(t);

    // detached: protect leads its own process group (with the command); the
    // watchdog runs in a session of its own, out of reach of a group kill (a
    // cgroup kill would reach it: killed by hand below).
    const {
      p,
      rec,
      gate: { started },
    } = await startProtect(t, ['--max-hold', '6s'], { detached: true });
    const countersBefore = (await plugCounters())!;

    // The watchdog first: killed after the group, it would see protect's end and release.
    kill(rec.watchdogPid, 'SIGKILL');
    kill(-p.child.pid!, 'SIGKILL');
    const early = probe(ADDR, proxy.port, ADDR);
    t.true(early.sentAt < rec.deadline, 'the first SYN was sent inside the window (marking on)');
    const ended = await within(p.done, 'protect to die');
    t.is(ended.signal, 'SIGKILL');
    await waitFor(() => !alive(rec.watchdogPid!) && !alive(startedPid(started)!), 'the watchdog and the command to be gone');

    // Until the deadline, the connection stays held: nothing releases.
    while (Date.now() < rec.deadline + 1500) await sleep(100);
    const stale = readPlugJson()!;
    t.is(stale.state, 'buffering', 'nobody updated plug.json');
    t.deepEqual(await activeElements(), [], 'the set element timed out by itself');

    // From the deadline on, new connections are not held...
    const countersMid = (await plugCounters())!;
    t.true(countersMid.qlen >= 1, `the early SYN(s) sit in the plug (qlen ${countersMid.qlen})`);
    t.is(countersMid.packets, countersBefore.packets, 'nothing left the plug: it still buffers');
    const late = probe(ADDR, proxy.port, ADDR);
    t.is(await within(late.data, 'a connection after the deadline'), 'proxy');
    t.like(await plugCounters(), { qlen: countersMid.qlen, packets: countersMid.packets }, 'the late connection did not go through the plug');
    t.is(early.connectedAt, undefined, 'the early connection is still held: its SYN sits in the plug, and TCP does not retransmit a queued SYN');
    t.is(early.error, undefined);

    // Third layer: the next synplug command releases the stale plug and says so.
    const tStatus = Date.now();
    const s = await status();
    t.regex(s.recovered ?? '', /released a plug left buffering \(its max-hold deadline passed\)/);
    t.like(readPlugJson(), { state: 'released' });
    t.is(await within(early.data, 'the early connection to complete once status released the plug'), 'proxy');
    t.true(early.connectedAt! >= tStatus, 'it completed only after status released the plug');
    // and removed the tree and the chain the dead holder left on lo's data path (once the plug had let its SYNs go)
    await assertPlugReleased(t, proxy.port, 'after status');
  },
);
