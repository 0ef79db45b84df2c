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
  quietly('delete', 'table', 'ip', 'synplug_t3set');
  quietly('delete', 'table', 'ip6', 'synplug_t3set6');
  quietly('delete', 'table', 'ip', 'synplug_t3obj');
  quietly('delete', 'table', 'ip', 'synplug_t3repro');
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

// Interval sets, maps, verdict maps, catch-all elements, element order and nft's line
// wrapping. Nothing hooks these chains.
const SETS = `table ip synplug_t3set {
  set iv { type ipv4_addr; flags interval; elements = { 172.16.0.0/12, 192.168.1.1, 10.1.0.1-10.1.0.9, 192.168.2.0/24 } }
  set edges { type ipv4_addr; flags interval; elements = { 0.0.0.0/8, 1.2.3.4, 1.2.3.5, 255.255.255.0/24 } }
  set top { type ipv4_addr; flags interval; elements = { 9.9.9.9, 255.255.255.255 } }
  set ports { type inet_service; flags interval; elements = { 80, 1000-2000, 0-79, 2048-4095, 65535 } }
  set marks { type mark; flags interval; elements = { 0x10-0x1f, 0x100, 0x200-0x2ff, 0x1000-0x1005 } }
  set m256 { type mark; elements = { 256, 3, 1, 2, 65536, 7, 5 } }
  set manyports { type inet_service; elements = { 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1 } }
  set fiveaddr { type ipv4_addr; elements = { 1.1.1.5, 1.1.1.4, 1.1.1.3, 1.1.1.2, 1.1.1.1 } }
  set macs { type ether_addr; elements = { 00:11:22:33:44:56, 00:11:22:33:44:55 } }
  set protos { type inet_proto; elements = { 17, 6 } }
  map pm { type inet_service : ipv4_addr; elements = { 443 : 10.0.0.2, 80 : 10.0.0.1, * : 10.0.0.9 } }
  map im { type ipv4_addr : ipv4_addr; flags interval; elements = { 10.0.0.0/8 : 1.1.1.1, 192.168.1.1 : 2.2.2.2, 11.1.0.1-11.1.0.9 : 3.3.3.3 } }
  map vm { type ipv4_addr : verdict; elements = { 1.1.1.1 : accept, 2.2.2.2 : drop, 3.3.3.3 : jump c, 4.4.4.4 : goto c, 5.5.5.5 : return, 6.6.6.6 : continue } }
  map ivm { type ipv4_addr : verdict; flags interval; elements = { 10.0.0.0/8 : accept, 11.0.0.1-11.0.0.3 : jump c, * : drop } }
  map mm { type mark : mark; elements = { 1 : 2, 256 : 3 } }
  map pmark { type inet_service : mark; flags interval; elements = { 1-1023 : 0x1, 8080 : 0x100 } }
  map em { type ipv4_addr : inet_service; }
  chain c { }
  chain d {
    ip saddr vmap @vm
    ip daddr 1.2.3.4 ip saddr vmap { 1.1.1.1 : accept, 10.0.0.0/8 : drop }
    meta mark set ip saddr map { 1.1.1.1 : 0x5, 2.2.2.2 : 0x6 }
    meta mark set tcp dport map @pmark
    ip saddr { 10.0.0.0/8, 1.2.3.4, 172.16.0.1-172.16.0.9 } accept
    tcp dport { 22, 80-88 } counter
    ip saddr @iv drop
  }
}
table ip6 synplug_t3set6 {
  set s { type ipv6_addr; flags interval; elements = { fd00::/64, ::5, 2001:db8::1-2001:db8::9, ::/127 } }
  map m { type ipv6_addr : ipv4_addr; flags interval; elements = { fd00::/64 : 10.0.0.1, 2001:db8::1-2001:db8::9 : 10.0.0.2 } }
  map v { type ipv6_addr : verdict; elements = { ::1 : accept, fe80::1 : drop } }
}
`;

test.serial('interval sets, maps and verdict maps: text line for line as `nft list table`', async (t) => {
  execFileSync(NFT, ['-f', '-'], { input: SETS });
  for (const [family, name] of [['ip', 'synplug_t3set'], ['ip6', 'synplug_t3set6']]) {
    const ours = N.formatRulesetText(await ourTable(family, name));
    const theirs = nft('list', 'table', family, name);
    t.deepEqual(ours.split('\n'), theirs.split('\n'));
  }
});

test.serial('interval sets, maps and verdict maps: JSON field for field as `nft -j list table`', async (t) => {
  for (const [family, name] of [['ip', 'synplug_t3set'], ['ip6', 'synplug_t3set6']]) {
    const ours = N.formatRulesetJson(await ourTable(family, name)).nftables.slice(1);
    const theirs = (JSON.parse(nft('-j', 'list', 'table', family, name)).nftables as Array<Record<string, unknown>>).filter((o) => !o.metainfo);
    t.is(ours.length, theirs.length);
    ours.forEach((o, i) => t.deepEqual(o, theirs[i], JSON.stringify(theirs[i])));
    t.is(JSON.stringify(ours), JSON.stringify(theirs), 'same key order too');
  }
});

test.serial('the tester\'s repro: an interval set and a map made with `nft add`, as nft shows them', async (t) => {
  nft('add', 'table', 'ip', 'synplug_t3repro');
  nft('add', 'set', 'ip', 'synplug_t3repro', 's', '{ type ipv4_addr; flags interval; elements = { 10.0.0.0/8, 192.168.1.1 } }');
  nft('add', 'map', 'ip', 'synplug_t3repro', 'pm', '{ type inet_service : ipv4_addr; elements = { 80 : 10.0.0.1, 443 : 10.0.0.2 } }');
  const rs = await ourTable('ip', 'synplug_t3repro');
  const text = N.formatRulesetText(rs);
  t.is(text, nft('list', 'table', 'ip', 'synplug_t3repro'));
  t.true(text.includes('elements = { 10.0.0.0/8, 192.168.1.1 }'), text);
  t.true(text.includes('map pm {\n\t\ttype inet_service : ipv4_addr\n\t\telements = { 80 : 10.0.0.1, 443 : 10.0.0.2 }'), text);
  const theirs = (JSON.parse(nft('-j', 'list', 'table', 'ip', 'synplug_t3repro')).nftables as Array<Record<string, unknown>>).filter((o) => !o.metainfo);
  t.deepEqual(N.formatRulesetJson(rs).nftables.slice(1), theirs);
});

test.serial('an object map (ipv4_addr : counter): its block and JSON object as nft prints them', async (t) => {
  // synplug does not list stateful objects (the `counter c1` block), so only the map is compared.
  execFileSync(NFT, ['-f', '-'], { input: 'table ip synplug_t3obj {\ncounter c1 { }\ncounter c2 { }\nmap om { type ipv4_addr : counter; elements = { 1.1.1.1 : "c1", 2.2.2.2 : "c2" } }\n}\n' });
  const rs = await ourTable('ip', 'synplug_t3obj');
  const block = (text: string): string => { const i = text.indexOf('\tmap om {'); return text.slice(i, text.indexOf('\t}\n', i) + 3); };
  const theirsText = nft('list', 'table', 'ip', 'synplug_t3obj');
  t.true(block(theirsText).length > 10, theirsText);
  t.is(block(N.formatRulesetText(rs)), block(theirsText));
  const theirs = (JSON.parse(nft('-j', 'list', 'table', 'ip', 'synplug_t3obj')).nftables as Array<Record<string, unknown>>).find((o) => o.map);
  t.deepEqual(N.formatRulesetJson(rs).nftables.find((o) => o.map), theirs);
});
