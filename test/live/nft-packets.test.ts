/**
 * Live: real TCP connections over `lo` from 169.254.255.254 (and an IPv6
 * address), observed by counter rules in a separate oracle table made with
 * the `nft` binary, in a filter chain at output priority 0 (after our route
 * chain at mangle, -150).
 *
 * `lo` and 169.254.255.254 are shared with other live test files (the
 * guard's), whose rules may mark the same SYNs at any time. So each scenario
 * runs in a private network namespace of its own: this file starts itself
 * again under `unshare --net` with SYNPLUG_NFT_PACKET_SCENARIO set, the child
 * runs the scenario and prints the counters, and the test asserts on them.
 */
import { execFileSync } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import * as N from '../../src/iptables/index.js';
import * as M from '../../src/guard/modes/local-nft.js';

const NFT = '/usr/sbin/nft';
const ADDR = '169.254.255.254';
const ADDR6 = 'fd00:5::254';
const PORT = 39201;

const nft = (...args: string[]): string => execFileSync(NFT, args, { encoding: 'utf8' });

/** An oracle table counting, for one source and destination port: SYNs and other segments, marked with `mark` or not. */
function oracle(family: 'ip' | 'ip6', saddr: string, port: number, mark: number): void {
  const m = `0x${mark.toString(16)}`;
  const match = `${family} saddr ${saddr} tcp dport ${port}`;
  execFileSync(NFT, ['-f', '-'], {
    input: `table ${family} oracle {
  chain out {
    type filter hook output priority 0; policy accept;
    ${match} tcp flags & (syn|ack) == syn meta mark ${m} counter comment "syn_marked"
    ${match} tcp flags & (syn|ack) == syn meta mark != ${m} counter comment "syn_unmarked"
    ${match} tcp flags & (syn|ack) != syn meta mark ${m} counter comment "other_marked"
    ${match} tcp flags & (syn|ack) != syn meta mark != ${m} counter comment "other_unmarked"
  }
}
`,
  });
}

type Counts = Record<'syn_marked' | 'syn_unmarked' | 'other_marked' | 'other_unmarked', number>;

/** The oracle's packet counters, read with `nft -j`. */
function counts(family: string): Counts {
  const j = JSON.parse(nft('-j', 'list', 'table', family, 'oracle')).nftables as Array<{
    rule?: { comment?: string; expr: Array<{ counter?: { packets: number } }> };
  }>;
  const out: Record<string, number> = {};
  for (const o of j) if (o.rule?.comment) out[o.rule.comment] = o.rule.expr.find((e) => e.counter)!.counter!.packets;
  return out as Counts;
}

/** One TCP connection from `addr` to `addr:port`, some data both ways, until both ends closed. */
async function connectOnce(addr: string, port: number): Promise<void> {
  const server = net.createServer((s) => {
    s.on('data', () => s.end('pong'));
    s.on('error', () => {});
  });
  await new Promise<void>((res, rej) => {
    server.once('error', rej);
    server.listen(port, addr, () => res());
  });
  try {
    await new Promise<void>((res, rej) => {
      const c = net.connect({ host: addr, port, localAddress: addr }, () => c.write('ping'));
      c.on('data', () => c.end());
      c.on('close', () => res());
      c.on('error', rej);
      c.setTimeout(5000, () => {
        c.destroy();
        rej(new Error('connection timed out'));
      });
    });
  } finally {
    await new Promise<void>((res) => server.close(() => res()));
  }
}

/** The scenarios, run inside the private netns; each returns counter snapshots. */
const scenarios: Record<string, () => Promise<Record<string, unknown>>> = {
  async plain() {
    execFileSync('ip', ['addr', 'add', `${ADDR}/32`, 'dev', 'lo']);
    oracle('ip', ADDR, PORT, 1);
    const conn = N.openNftables();
    await connectOnce(ADDR, PORT);
    const before = counts('ip');
    // the technique's rule, with the defaults: no port, mark 1, table synplug
    await M.ensureMarkRule(conn, { address: ADDR });
    await connectOnce(ADDR, PORT);
    const marked = counts('ip');
    await M.removeMarkTable(conn);
    await connectOnce(ADDR, PORT);
    const removed = counts('ip');
    conn.close();
    return { before, marked, removed };
  },
  async conditional() {
    execFileSync('ip', ['addr', 'add', `${ADDR}/32`, 'dev', 'lo']);
    oracle('ip', ADDR, PORT, 7);
    const conn = N.openNftables();
    await M.ensureMarkRule(conn, { address: ADDR, mark: 7, conditional: true });
    await connectOnce(ADDR, PORT);
    const noElement = counts('ip');
    await M.addSetElement(conn, { address: ADDR, timeoutMs: 1000 });
    await connectOnce(ADDR, PORT);
    const withElement = counts('ip');
    await sleep(1600);
    const listedAfterTimeout = await M.listMarkSetElements(conn, { family: 'ip' });
    await connectOnce(ADDR, PORT);
    const timedOut = counts('ip');
    // plug / release as the guard does it: prepared, one datagram each
    const ops = M.prepareElementOps({ address: ADDR, timeoutMs: 30_000 });
    await M.runPrepared(conn, ops.add!);
    await connectOnce(ADDR, PORT);
    const plugged = counts('ip');
    await M.runPrepared(conn, ops.delete, { ignoreMissing: true });
    await connectOnce(ADDR, PORT);
    const released = counts('ip');
    conn.close();
    return { noElement, withElement, listedAfterTimeout, timedOut, plugged, released };
  },
  async ipv6() {
    execFileSync('ip', ['-6', 'addr', 'add', `${ADDR6}/128`, 'dev', 'lo', 'nodad']);
    oracle('ip6', ADDR6, PORT, 1);
    const conn = N.openNftables();
    await connectOnce(ADDR6, PORT);
    const before = counts('ip6');
    await M.ensureMarkRule(conn, { address: ADDR6 });
    await connectOnce(ADDR6, PORT);
    const marked = counts('ip6');
    conn.close();
    return { before, marked };
  },
};

const scenario = process.env.SYNPLUG_NFT_PACKET_SCENARIO;
if (scenario) {
  // Child: run one scenario in the private netns and print its result.
  const result = await scenarios[scenario]();
  process.stdout.write(JSON.stringify(result));
  process.exit(0);
}

const { default: test } = await import('ava');
const SELF = fileURLToPath(import.meta.url);

/** Run a scenario in a fresh network namespace (lo up), as a child process of this file. */
function inOwnNetns(name: string): Record<string, Counts> & Record<string, unknown> {
  const out = execFileSync('unshare', ['--net', '--', 'bash', '-c', 'ip link set lo up && exec "$@"', 'nft-packets', process.execPath, '--import=tsx', SELF], {
    env: { ...process.env, SYNPLUG_NFT_PACKET_SCENARIO: name },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return JSON.parse(out);
}

const diff = (a: Counts, b: Counts): Counts => ({
  syn_marked: b.syn_marked - a.syn_marked,
  syn_unmarked: b.syn_unmarked - a.syn_unmarked,
  other_marked: b.other_marked - a.other_marked,
  other_unmarked: b.other_unmarked - a.other_unmarked,
});

test('a SYN from 169.254.255.254 over lo is marked 1; the other segments of the connection are not', (t) => {
  const r = inOwnNetns('plain') as Record<string, Counts>;
  t.like(r.before, { syn_marked: 0, syn_unmarked: 1, other_marked: 0 }, 'without our rule nothing is marked');
  t.true(r.before.other_unmarked >= 3, 'handshake ACK, data, FIN are seen');
  const d = diff(r.before, r.marked);
  t.is(d.syn_marked, 1, 'the SYN is marked 1');
  t.is(d.syn_unmarked, 0);
  t.is(d.other_marked, 0, 'no other segment of the connection is marked');
  t.true(d.other_unmarked >= 3);
  const after = diff(r.marked, r.removed);
  t.like(after, { syn_marked: 0, syn_unmarked: 1 }, 'after remove, marking stops');
});

test('conditional rule: a SYN is marked while the set element exists, not after it timed out (1 s), nor after it was deleted', (t) => {
  const r = inOwnNetns('conditional') as Record<string, Counts> & { listedAfterTimeout: unknown[] };
  t.like(r.noElement, { syn_marked: 0, syn_unmarked: 1 }, 'no element: not marked');
  t.like(diff(r.noElement, r.withElement), { syn_marked: 1, syn_unmarked: 0, other_marked: 0 }, 'marked while the element exists');
  t.deepEqual(r.listedAfterTimeout, [], 'the timed-out element is no longer listed');
  t.like(diff(r.withElement, r.timedOut), { syn_marked: 0, syn_unmarked: 1 }, 'not marked after the element timed out');
  t.like(diff(r.timedOut, r.plugged), { syn_marked: 1, syn_unmarked: 0, other_marked: 0 }, 'plugged: marked');
  t.like(diff(r.plugged, r.released), { syn_marked: 0, syn_unmarked: 1 }, 'released: not marked');
});

test('IPv6: a SYN from the proxy address is marked, the other segments are not', (t) => {
  const r = inOwnNetns('ipv6') as Record<string, Counts>;
  t.like(r.before, { syn_marked: 0, syn_unmarked: 1, other_marked: 0 });
  const d = diff(r.before, r.marked);
  t.is(d.syn_marked, 1);
  t.is(d.syn_unmarked, 0);
  t.is(d.other_marked, 0);
  t.true(d.other_unmarked >= 3);
});
