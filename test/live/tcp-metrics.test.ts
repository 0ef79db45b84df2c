/**
 * Live: the tcp_metrics cache (generic netlink). After a connection whose SYN
 * was held (by an NfqueueHolder, behind an iptables-nft NFQUEUE bypass rule),
 * the kernel caches the hold as the destination's RTT; `ip -j tcp_metrics
 * show` is the oracle for what listTcpMetrics reads, and for what
 * deleteTcpMetrics removed. Each scenario runs in a network namespace of its
 * own (test/helpers/own-netns.ts).
 */
import { execFileSync } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { NfqueueHolder } from '../../src/netlink/nfqueue.js';
import { deleteTcpMetrics, listTcpMetrics } from '../../src/netlink/tcp-metrics.js';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';
import { iptablesQueueRule } from '../helpers/nfqueue-live.js';

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_TCP_METRICS_SCENARIO';
const IP = '/usr/sbin/ip';
const QUEUE = 26;
const PORT = 39261;
const ADDR4 = '169.254.26.1';
const ADDR6 = 'fd00:26::1';

/** `ip -j tcp_metrics show`, the oracle. */
const ipShow = (): Array<Record<string, unknown>> => JSON.parse(execFileSync(IP, ['-j', 'tcp_metrics', 'show'], { encoding: 'utf8' }) || '[]');

/** One connection to host:PORT whose SYN is held until `holdMs` after the kernel queued it, then released; resolves when closed. */
async function heldConnection(h: NfqueueHolder, host: string): Promise<void> {
  const server = net.createServer((s) => {
    s.on('data', () => s.end('pong'));
    s.on('error', () => {});
  });
  await new Promise<void>((res) => server.listen(PORT, host, () => res()));
  const before = h.released;
  const c = net.connect({ host, port: PORT });
  c.on('connect', () => c.write('ping'));
  c.on('data', () => c.end());
  const closed = new Promise((res) => c.on('close', res));
  const end = Date.now() + 15_000;
  while (h.held < 1) {
    if (Date.now() > end) throw new Error('the SYN was not held');
    await sleep(20);
  }
  await sleep(300); // the hold: what the kernel will cache as RTT
  await h.release();
  if (h.released !== before + 1) throw new Error('release did not release the held SYN');
  await closed;
  await new Promise<void>((res) => server.close(() => res()));
}

const scenarios: Record<string, () => Promise<unknown>> = {
  async heldThenDeleted() {
    execFileSync(IP, ['addr', 'add', `${ADDR4}/32`, 'dev', 'lo']);
    execFileSync(IP, ['-6', 'addr', 'add', `${ADDR6}/128`, 'dev', 'lo', 'nodad']);
    iptablesQueueRule(PORT, QUEUE);
    const h = await NfqueueHolder.bind(QUEUE);
    await heldConnection(h, ADDR4);
    await heldConnection(h, ADDR6);
    await h.close();
    // read both right after each other; `age` moves between them
    const ours = await listTcpMetrics();
    const oracle = ipShow();
    const deletedFirst = await deleteTcpMetrics([ADDR4, '169.254.26.99']);
    const afterFirst = ipShow();
    const deletedSecond = await deleteTcpMetrics([ADDR6, ADDR4]);
    const afterSecond = ipShow();
    return { ours, oracle, deletedFirst, afterFirst, deletedSecond, afterSecond, listedAtEnd: await listTcpMetrics() };
  },
  async badAddress() {
    try {
      await deleteTcpMetrics(['not-an-address']);
      return { threw: false };
    } catch (e) {
      return { threw: true, name: (e as Error).name, message: (e as Error).message };
    }
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');

  test('a held connection leaves its hold as the cached RTT; listTcpMetrics reads what ip shows; deleteTcpMetrics removes exactly the addresses given', (t) => {
    // biome-ignore lint/suspicious/noExplicitAny: the scenario's JSON result
    const r = inOwnNetns<Record<string, any>>(SELF, ENV, 'heldThenDeleted');
    const key = (e: { dst: string }) => e.dst;
    const ours = [...r.ours].sort((a, b) => key(a).localeCompare(key(b)));
    const oracle = [...r.oracle].sort((a, b) => key(a).localeCompare(key(b)));
    t.deepEqual(
      ours.map((e) => e.dst),
      [ADDR4, ADDR6],
    );
    t.deepEqual(
      oracle.map((e) => e.dst),
      [ADDR4, ADDR6],
    );
    for (let i = 0; i < 2; i++) {
      const { age: ourAge, ...ourRest } = ours[i];
      const { age: ipAge, ...ipRest } = oracle[i];
      t.deepEqual(ourRest, ipRest, `${ours[i].dst}: the same fields and values as ip -j tcp_metrics show`);
      t.true(ipAge >= ourAge, 'ip read the age after us');
      t.true(ours[i].rtt >= 0.2, `${ours[i].dst}: the cached RTT is the hold (${ours[i].rtt} s)`);
    }
    t.is(r.deletedFirst, 1, 'one of the two addresses had an entry; the missing one is fine');
    t.deepEqual(
      r.afterFirst.map((e: { dst: string }) => e.dst),
      [ADDR6],
    );
    t.is(r.deletedSecond, 1, 'the IPv6 entry; the IPv4 one was already gone');
    t.deepEqual(r.afterSecond, []);
    t.deepEqual(r.listedAtEnd, []);
  });

  test('deleteTcpMetrics refuses a bad address with a UsageError before sending anything', (t) => {
    const r = inOwnNetns(SELF, ENV, 'badAddress');
    t.like(r, { threw: true, name: 'UsageError' });
  });
}
