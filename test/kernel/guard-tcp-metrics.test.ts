/**
 * Kernel (VM): after the local plug hold is released, by a manual `release`
 * or by `protect`, the tcp_metrics entries of the held address are gone (a
 * held SYN's RTT sample is the hold: the kernel would start later
 * connections there with an RTO of seconds). The oracle is `ip -j
 * tcp_metrics show`. (The queue hold: test/live/guard-tcp-metrics.test.ts.)
 */
import test from 'ava';
import { ADDR, TEST_TIMEOUT, cli, useGuardVm } from '../helpers/guard-vm.js';
import { listening, server } from '../helpers/queue-live.js';
import { cacheEntryFor, cachedDestinations } from '../helpers/tcp-metrics-oracle.js';

useGuardVm(test);

const PORT = 39421;

test.serial("the local plug hold: a release (manual, and protect's) deletes the held address's tcp_metrics entries", async (t) => {
  t.timeout(TEST_TIMEOUT);
  const set = await cli(['setup', '--via', 'plug']);
  t.is(set.code, 0, set.stderr);
  const srv = server(ADDR, PORT);
  t.teardown(() => {
    srv.kill();
  });
  await listening(srv);
  await cacheEntryFor(ADDR, PORT);
  t.true(cachedDestinations().includes(ADDR), 'ip lists an entry for the address before the hold');
  const plug = await cli(['plug', '--max-hold', '20s']);
  t.is(plug.code, 0, plug.stderr);
  const release = await cli(['release']);
  t.is(release.code, 0, release.stderr);
  t.false(cachedDestinations().includes(ADDR), 'gone after plug + release');
  await cacheEntryFor(ADDR, PORT);
  const protect = await cli(['protect', '--', '/bin/true']);
  t.is(protect.code, 0, protect.stderr);
  t.false(cachedDestinations().includes(ADDR), 'gone after protect');
  t.is((await cli(['teardown'])).code, 0);
});
