/**
 * Live, this machine's kernel: after a local queue hold is released, by a
 * manual `release` or by `protect`, the tcp_metrics entries of the held
 * address are gone (a held SYN's RTT sample is the hold: the kernel would
 * start later connections there with an RTO of seconds). The oracle is `ip
 * -j tcp_metrics show`. (The local plug hold: test/kernel/guard-tcp-metrics.test.ts.)
 */
import { fileURLToPath } from 'node:url';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';
import { listening, server, stateEnv, synplug } from '../helpers/queue-live.js';
import { cacheEntryFor, cachedDestinations } from '../helpers/tcp-metrics-oracle.js';

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_TCP_METRICS_SCENARIO';
const ADDR = '169.254.93.1';
const PORT = 39420;

const scenarios = {
  async queue() {
    const { env } = stateEnv();
    const set = synplug(['setup', '--via', 'queue', '--addr', ADDR], env);
    const srv = server(ADDR, PORT);
    await listening(srv);
    try {
      await cacheEntryFor(ADDR, PORT);
      const beforeRelease = cachedDestinations().includes(ADDR);
      const plug = synplug(['plug', '--max-hold', '20s'], env);
      const release = synplug(['release'], env);
      const afterRelease = cachedDestinations().includes(ADDR);
      await cacheEntryFor(ADDR, PORT);
      const protect = synplug(['protect', '--', '/bin/true'], env);
      const afterProtect = cachedDestinations().includes(ADDR);
      return { codes: [set.code, plug.code, release.code, protect.code], beforeRelease, afterRelease, afterProtect };
    } finally {
      srv.kill();
      synplug(['teardown'], env);
    }
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');
  test("the local queue hold: a release (manual, and protect's) deletes the held address's tcp_metrics entries", (t) => {
    const r = inOwnNetns<Record<string, unknown>>(SELF, ENV, 'queue', 90_000);
    t.deepEqual(r.codes, [0, 0, 0, 0]);
    t.true(r.beforeRelease, 'ip lists an entry for the address before the hold');
    t.false(r.afterRelease, 'gone after plug + release');
    t.false(r.afterProtect, 'gone after protect');
  });
}
