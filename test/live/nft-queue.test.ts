/**
 * Live: the queue rule on this kernel (which has no native `queue`
 * expression, and the xt NFQUEUE target through nft_compat). The probe says
 * `compat` and changes nothing (nft's listing and the generation id as
 * oracles); a synplug-style inet table with a SYN rule whose verdict is
 * queueRuleExpressions('compat', N), sent through our own encoder, lists in
 * nft exactly as we print it, lets SYNs through while nobody is bound, and
 * holds them (IPv4 and IPv6) for an NfqueueHolder. Each scenario runs in a
 * network namespace of its own.
 */
import { execFileSync } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import * as N from '../../src/iptables/index.js';
import type { Expr } from '../../src/iptables/expr/index.js';
import { NfqueueHolder } from '../../src/netlink/nfqueue.js';
import { NFT, nft, ourTable, ruleLines } from '../helpers/nft-live.js';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_NFT_QUEUE_SCENARIO';
const QUEUE = 27;
const PORT = 39271;
const ADDR6 = 'fd00:27::1';
const TABLE = 'synplug_q';

/** `tcp dport PORT tcp flags & (syn | ack) == syn`, as nft 1.0.6 encodes it in an inet table. */
function synToPort(port: number): Expr[] {
  const p = Buffer.alloc(2);
  p.writeUInt16BE(port);
  return [
    { name: 'meta', key: 'l4proto', dreg: 1 },
    { name: 'cmp', sreg: 1, op: 'eq', data: '06' },
    { name: 'payload', base: 'transport', offset: 2, len: 2, dreg: 1 },
    { name: 'cmp', sreg: 1, op: 'eq', data: p.toString('hex') },
    { name: 'payload', base: 'transport', offset: 13, len: 1, dreg: 1 },
    { name: 'bitwise', sreg: 1, dreg: 1, len: 1, op: 'mask_xor', mask: '12', xor: '00' },
    { name: 'cmp', sreg: 1, op: 'eq', data: '02' },
  ];
}

async function until(cond: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 15_000;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** A non-blocking connect and its outcome so far. */
function attempt(host: string): { state: string } {
  const a = { state: 'pending' };
  const s = net.connect({ host, port: PORT });
  s.on('connect', () => {
    a.state = 'connected';
    s.destroy();
  });
  s.on('error', (e: NodeJS.ErrnoException) => {
    a.state = e.code ?? 'error';
  });
  return a;
}

const scenarios: Record<string, () => Promise<unknown>> = {
  async probe() {
    execFileSync(NFT, ['add', 'table', 'inet', 'other']);
    const conn = N.openNftables();
    const before = nft('list', 'ruleset');
    const genBefore = await N.getGenId(conn);
    const kind = await N.probeQueueExpression(conn);
    const native = await N.hasNativeQueue(conn);
    const rev = await N.compatRevision(conn, 'NFQUEUE', 3);
    const genAfter = await N.getGenId(conn);
    const after = nft('list', 'ruleset');
    conn.close();
    return { kind, native, rev, sameRuleset: before === after, genBefore, genAfter };
  },
  async rule() {
    execFileSync('/usr/sbin/ip', ['-6', 'addr', 'add', `${ADDR6}/128`, 'dev', 'lo', 'nodad']);
    const conn = N.openNftables();
    const kind = await N.probeQueueExpression(conn);
    await new N.NftBatch()
      .addTable({ family: 'inet', name: TABLE })
      .addChain({ family: 'inet', table: TABLE, name: 'out', type: 'filter', hook: 'output', prio: 'raw' })
      .addRule({ family: 'inet', table: TABLE, chain: 'out', expr: [...synToPort(PORT), ...N.queueRuleExpressions(kind, QUEUE)] })
      .commit(conn);
    // the rule lines (two tabs), not the chain's `type ... hook ...` line
    const rules = (text: string): string[] => ruleLines(text).filter((l) => !l.startsWith('\t\ttype '));
    const theirs = rules(nft('list', 'table', 'inet', TABLE));
    const ours = rules(N.formatRulesetText(await ourTable(conn, 'inet', TABLE)));
    const json = JSON.parse(nft('-j', 'list', 'table', 'inet', TABLE))
      .nftables.find((o: { rule?: unknown }) => o.rule)
      .rule.expr.at(-1);
    const oursJson = N.formatRulesetJson(await ourTable(conn, 'inet', TABLE)).nftables.find((o: { rule?: unknown }) => o.rule) as {
      rule: { expr: unknown[] };
    };
    const servers = await Promise.all(
      ['127.0.0.1', ADDR6].map(
        (host) =>
          new Promise<net.Server>((res) => {
            const s = net.createServer((c) => c.destroy());
            s.listen(PORT, host, () => res(s));
          }),
      ),
    );
    const unbound = [attempt('127.0.0.1'), attempt(ADDR6)];
    await until(() => unbound.every((a) => a.state !== 'pending'), 'the unbound connects');
    const h = await NfqueueHolder.bind(QUEUE);
    const held = [attempt('127.0.0.1'), attempt(ADDR6)];
    await until(() => h.held === 2, 'two held SYNs');
    const whileHeld = held.map((a) => a.state);
    const released = await h.release();
    await until(() => held.every((a) => a.state !== 'pending'), 'the released connects');
    await h.close();
    for (const s of servers) s.close();
    await new N.NftBatch().deleteTable({ family: 'inet', name: TABLE }).commit(conn);
    const left = nft('list', 'ruleset');
    conn.close();
    return {
      kind,
      theirs,
      ours,
      json,
      oursJson: oursJson.rule.expr.at(-1),
      unbound: unbound.map((a) => a.state),
      whileHeld,
      released,
      after: held.map((a) => a.state),
      left,
    };
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');

  test('probe: this kernel runs the xt NFQUEUE target (rev 3) and not the native queue expression; the probe changes nothing', (t) => {
    const r = inOwnNetns(SELF, ENV, 'probe');
    t.like(r, { kind: 'compat', native: false, rev: 3, sameRuleset: true });
    t.is(r.genAfter, r.genBefore, 'the rolled-back batch did not move the ruleset generation');
  });

  test('our inet SYN rule with the compat NFQUEUE bypass verdict: nft lists it as we print it; unbound SYNs pass, bound ones are held and released (IPv4 and IPv6)', (t) => {
    // biome-ignore lint/suspicious/noExplicitAny: the scenario's JSON result
    const r = inOwnNetns<Record<string, any>>(SELF, ENV, 'rule');
    t.is(r.kind, 'compat');
    t.deepEqual(r.theirs, [`\t\ttcp dport ${PORT} tcp flags syn / syn,ack queue num ${QUEUE} bypass`], "nft's listing");
    t.deepEqual(r.ours, r.theirs, 'our listing is the same text');
    t.deepEqual(r.json, { xt: { type: 'target', name: 'NFQUEUE' } }, "nft -j's verdict");
    t.deepEqual(r.oursJson, r.json);
    t.deepEqual(r.unbound, ['connected', 'connected'], 'nobody bound: bypass');
    t.deepEqual(r.whileHeld, ['pending', 'pending']);
    t.is(r.released, 2);
    t.deepEqual(r.after, ['connected', 'connected']);
    t.is(r.left, '', 'the table deleted, nothing left');
  });
}
