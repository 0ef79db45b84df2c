/**
 * Live: our text and JSON of rulesets that `nft` made, against
 * `nft list table` and `nft -j list table` (nft 1.0.6, Debian package
 * nftables). Tables synplug_t3*.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import * as N from '../../src/iptables/index.js';

const NFT = '/usr/sbin/nft';
const nft = (...args: string[]): string => execFileSync(NFT, args, { encoding: 'utf8' });
const quietly = (...args: string[]): void => { try { execFileSync(NFT, args, { stdio: 'ignore' }); } catch { /* gone */ } };

const conn = N.openNftables();
test.after.always(() => {
  quietly('delete', 'table', 'inet', 'synplug_t3fmt');
  quietly('delete', 'table', 'ip', 'synplug_t3ip');
  quietly('delete', 'table', 'ip', 'synplug_t3ct');
  conn.close();
});

// Rules sit in regular chains nothing jumps to, so that traffic of other test files
// sharing this netns never moves their counters between our read and nft's; the
// base chains are empty, accept everything, or hook where lo traffic never goes.
const RULESET = `table inet synplug_t3fmt {
  set s4 { type ipv4_addr; flags timeout; timeout 1h; }
  set s6 { type ipv6_addr; }
  set m { type mark; elements = { 3, 1, 2 } }
  set a { type ipv4_addr; elements = { 10.9.9.9, 10.0.0.1 } }
  chain c0 {
    type filter hook output priority 10; policy accept;
  }
  chain c1 {
    ip saddr 10.0.0.1 counter
    ip daddr != 10.0.0.2 tcp dport 22 drop
    ip6 saddr @s6 udp dport 53 accept
    meta mark 0x00000007 counter return
    tcp flags syn counter
    ip saddr { 10.1.1.1, 10.1.1.2 } accept
    meta l4proto udp counter
    tcp sport 1024 jump c2
    meta mark set 0x5
    ip daddr 192.168.0.0/16 counter
    ip6 daddr fd00::/64 counter
    ip saddr 10.0.0.0/20 counter
    meta mark != 0x1 counter
    ip saddr != @s4 drop
    tcp dport { 80, 443 } counter
    udp sport 53 counter
    tcp flags & (fin|syn|rst|ack) == syn counter
    ip saddr 169.254.255.254 tcp flags & (syn|ack) == syn meta mark set 0x1 comment "like synplug's"
  }
  chain c2 { counter; goto c4; }
  chain c3 { type filter hook forward priority -5; policy drop; }
  chain c4 { }
}
table ip synplug_t3ip {
  chain c { type filter hook postrouting priority srcnat; policy accept; }
  chain c_rules { ip protocol tcp counter; ip ttl 64 counter; }
  chain r { type route hook output priority mangle + 5; policy accept; }
  chain r_rules { ip saddr 169.254.255.254 tcp flags & (syn|ack) == syn meta mark set 0x1; }
}
`;

async function ourTable(family: string, name: string): Promise<N.NftRuleset> {
  const rs = await N.listRuleset(conn, { family });
  return {
    tables: rs.tables.filter((x) => x.name === name), chains: rs.chains.filter((x) => x.table === name),
    sets: rs.sets.filter((x) => x.table === name), rules: rs.rules.filter((x) => x.table === name),
  };
}

test.serial('the text of nft-made tables is what `nft list table` prints', async (t) => {
  execFileSync(NFT, ['-f', '-'], { input: RULESET });
  for (const [family, name] of [['inet', 'synplug_t3fmt'], ['ip', 'synplug_t3ip']]) {
    const ours = N.formatRulesetText(await ourTable(family, name));
    const theirs = nft('list', 'table', family, name);
    t.is(ours, theirs);
  }
});

test.serial('the JSON of nft-made tables is what `nft -j list table` prints (metainfo aside)', async (t) => {
  for (const [family, name] of [['inet', 'synplug_t3fmt'], ['ip', 'synplug_t3ip']]) {
    const ours = N.formatRulesetJson(await ourTable(family, name)).nftables;
    const theirs = JSON.parse(nft('-j', 'list', 'table', family, name)).nftables as Array<Record<string, unknown>>;
    t.deepEqual(ours.slice(1), theirs.filter((o) => !o.metainfo));
    t.is(ours[0].metainfo !== undefined, true);
  }
});

test.serial('handles as `nft -a` prints them', async (t) => {
  const ours = N.formatRulesetText(await ourTable('ip', 'synplug_t3ip'), { handles: true });
  t.is(ours, nft('-a', 'list', 'table', 'ip', 'synplug_t3ip'));
});

test.serial('an expression we do not decode (ct) prints as a visible raw entry, never an error', async (t) => {
  execFileSync(NFT, ['-f', '-'], { input: 'table ip synplug_t3ct {\nchain c {\nct state established accept\n}\n}\n' });
  const rs = await ourTable('ip', 'synplug_t3ct');
  t.is(rs.rules.length, 1);
  const ct = rs.rules[0].expr[0] as N.GenericExpr;
  t.is(ct.name, 'ct');
  t.true(ct.generic);
  const line = N.formatRulesetText(rs).split('\n')[2].trim();
  t.true(line.includes('ct') && line.endsWith('accept'), line);
  const json = N.formatRulesetJson(rs).nftables.at(-1)!.rule as { expr: unknown[] };
  t.deepEqual(json.expr.at(-1), { accept: null });
});
