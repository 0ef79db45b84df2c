/**
 * Live: real TCP connections over `lo` from 169.254.255.254 (and an IPv6
 * address), observed by counter rules in a separate oracle table made with
 * the `nft` binary, in a filter chain at output priority 0 (after our route
 * chain at mangle, -150). Our rules here match only this file's ports, so
 * that other test files using 169.254.255.254 on `lo` are not affected.
 * Tables: synplug_t2*.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import * as N from '../../src/iptables/index.js';

const NFT = '/usr/sbin/nft';
const ADDR = '169.254.255.254';
const ADDR6 = 'fd00:5::254';
const PORT_PLAIN = 39201;
const PORT_COND = 39202;
const PORT_V6 = 39203;

function nft(...args: string[]): string {
  return execFileSync(NFT, args, { encoding: 'utf8' });
}
function nftFile(text: string): void {
  execFileSync(NFT, ['-f', '-'], { input: text, encoding: 'utf8' });
}
function quietly(file: string, ...args: string[]): void {
  try { execFileSync(file, args, { stdio: 'ignore' }); } catch { /* gone */ }
}

/** An oracle table counting, for one source and destination port: SYNs and other segments, marked with `mark` or not. */
function oracle(name: string, family: 'ip' | 'ip6', saddr: string, port: number, mark: number): void {
  const m = `0x${mark.toString(16)}`;
  const match = `${family} saddr ${saddr} tcp dport ${port}`;
  nftFile(`table ${family} ${name} {
  chain out {
    type filter hook output priority 0; policy accept;
    ${match} tcp flags & (syn|ack) == syn meta mark ${m} counter comment "syn_marked"
    ${match} tcp flags & (syn|ack) == syn meta mark != ${m} counter comment "syn_unmarked"
    ${match} tcp flags & (syn|ack) != syn meta mark ${m} counter comment "other_marked"
    ${match} tcp flags & (syn|ack) != syn meta mark != ${m} counter comment "other_unmarked"
  }
}
`);
}

type Counts = Record<'syn_marked' | 'syn_unmarked' | 'other_marked' | 'other_unmarked', number>;

/** The packet counters of an oracle table, read with `nft -j`. */
function counts(family: string, name: string): Counts {
  const j = JSON.parse(nft('-j', 'list', 'table', family, name)).nftables as Array<{ rule?: { comment?: string; expr: Array<{ counter?: { packets: number } }> } }>;
  const out: Record<string, number> = {};
  for (const o of j) {
    if (!o.rule?.comment) continue;
    out[o.rule.comment] = o.rule.expr.find((e) => e.counter)!.counter!.packets;
  }
  return out as Counts;
}

/** One TCP connection from `addr` to `addr:port` with some data both ways, until both ends closed. */
async function connectOnce(addr: string, port: number): Promise<void> {
  const server = net.createServer((s) => { s.on('data', () => s.end('pong')); s.on('error', () => {}); });
  await new Promise<void>((res, rej) => { server.once('error', rej); server.listen(port, addr, () => res()); });
  try {
    await new Promise<void>((res, rej) => {
      const c = net.connect({ host: addr, port, localAddress: addr }, () => c.write('ping'));
      c.on('data', () => c.end());
      c.on('close', () => res());
      c.on('error', rej);
      c.setTimeout(5000, () => { c.destroy(); rej(new Error('connection timed out')); });
    });
  } finally {
    await new Promise<void>((res) => server.close(() => res()));
  }
}

const conn = N.openNftables();

test.before(() => {
  // lo is shared with other live files (the guard's): add, never remove, and tolerate "exists".
  execFileSync('ip', ['addr', 'replace', `${ADDR}/32`, 'dev', 'lo']);
  execFileSync('ip', ['-6', 'addr', 'replace', `${ADDR6}/128`, 'dev', 'lo', 'nodad']);
});

test.after.always(() => {
  for (const [f, t] of [['ip', 'synplug_t2'], ['ip', 'synplug_t2_oracle'], ['ip', 'synplug_t2c'], ['ip', 'synplug_t2c_oracle'], ['ip6', 'synplug_t2v6'], ['ip6', 'synplug_t2v6_oracle']]) {
    quietly(NFT, 'delete', 'table', f, t);
  }
  conn.close();
});

test.serial('a SYN from 169.254.255.254 over lo is marked 1; the other segments of the connection are not', async (t) => {
  oracle('synplug_t2_oracle', 'ip', ADDR, PORT_PLAIN, 1);
  await connectOnce(ADDR, PORT_PLAIN);
  const c0 = counts('ip', 'synplug_t2_oracle');
  t.like(c0, { syn_marked: 0, syn_unmarked: 1, other_marked: 0 }, 'without our rule nothing is marked');
  t.true(c0.other_unmarked >= 3, 'handshake ACK, data, FIN seen unmarked');
  await N.ensureMarkRule(conn, { address: ADDR, port: PORT_PLAIN, mark: 1, table: 'synplug_t2' });
  const before = counts('ip', 'synplug_t2_oracle');
  await connectOnce(ADDR, PORT_PLAIN);
  const after = counts('ip', 'synplug_t2_oracle');
  t.is(after.syn_marked - before.syn_marked, 1, 'the SYN is marked');
  t.is(after.syn_unmarked - before.syn_unmarked, 0);
  t.is(after.other_marked - before.other_marked, 0, 'no other segment is marked');
  t.true(after.other_unmarked - before.other_unmarked >= 3);
  // removed: marking stops
  await N.removeMarkTable(conn, { table: 'synplug_t2' });
  await connectOnce(ADDR, PORT_PLAIN);
  const last = counts('ip', 'synplug_t2_oracle');
  t.is(last.syn_marked, after.syn_marked);
  t.is(last.syn_unmarked, after.syn_unmarked + 1);
});

test.serial('conditional rule: a SYN is marked while the set element exists, not after it timed out (1 s), nor after it was deleted', async (t) => {
  oracle('synplug_t2c_oracle', 'ip', ADDR, PORT_COND, 7);
  await N.ensureMarkRule(conn, { address: ADDR, port: PORT_COND, mark: 7, table: 'synplug_t2c', conditional: true });
  const c0 = counts('ip', 'synplug_t2c_oracle');
  await connectOnce(ADDR, PORT_COND); // no element yet: not marked
  const c1 = counts('ip', 'synplug_t2c_oracle');
  t.is(c1.syn_marked - c0.syn_marked, 0);
  t.is(c1.syn_unmarked - c0.syn_unmarked, 1);

  await N.addSetElement(conn, { address: ADDR, table: 'synplug_t2c', timeoutMs: 1000 });
  await connectOnce(ADDR, PORT_COND);
  const c2 = counts('ip', 'synplug_t2c_oracle');
  t.is(c2.syn_marked - c1.syn_marked, 1, 'marked while the element exists');
  t.is(c2.other_marked - c1.other_marked, 0);

  await sleep(1600);
  t.deepEqual(await N.listMarkSetElements(conn, { family: 'ip', table: 'synplug_t2c' }), [], 'the element is gone from the listing');
  await connectOnce(ADDR, PORT_COND);
  const c3 = counts('ip', 'synplug_t2c_oracle');
  t.is(c3.syn_marked - c2.syn_marked, 0, 'not marked after the element timed out');
  t.is(c3.syn_unmarked - c2.syn_unmarked, 1);

  // plug / release as the guard does it
  const ops = N.prepareElementOps({ address: ADDR, table: 'synplug_t2c', timeoutMs: 30_000 });
  await N.runPrepared(conn, ops.add!);
  await connectOnce(ADDR, PORT_COND);
  await N.runPrepared(conn, ops.delete, { ignoreMissing: true });
  await connectOnce(ADDR, PORT_COND);
  const c4 = counts('ip', 'synplug_t2c_oracle');
  t.is(c4.syn_marked - c3.syn_marked, 1);
  t.is(c4.syn_unmarked - c3.syn_unmarked, 1);
});

test.serial('IPv6: a SYN from the proxy address is marked, others not', async (t) => {
  oracle('synplug_t2v6_oracle', 'ip6', ADDR6, PORT_V6, 1);
  await N.ensureMarkRule(conn, { address: ADDR6, port: PORT_V6, table: 'synplug_t2v6' });
  const before = counts('ip6', 'synplug_t2v6_oracle');
  await connectOnce(ADDR6, PORT_V6);
  const after = counts('ip6', 'synplug_t2v6_oracle');
  t.is(after.syn_marked - before.syn_marked, 1);
  t.is(after.syn_unmarked - before.syn_unmarked, 0);
  t.is(after.other_marked - before.other_marked, 0);
  t.true(after.other_unmarked - before.other_unmarked >= 3);
});
