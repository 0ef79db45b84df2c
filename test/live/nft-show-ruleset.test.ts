/**
 * Live, end to end: `synplug show ruleset` and `synplug show ruleset --json`
 * against `nft list ruleset` and `nft -j list ruleset`, in a network
 * namespace of their own (so that the tables of the test files running at
 * the same time are not in either listing). The ruleset holds every
 * statement of issue 11's defect 2 and named objects; it is loaded with
 * `/usr/sbin/nft -f`. Only nft's metainfo object (its version strings) is
 * left out of the JSON comparison.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'synplug-show-ruleset-'));
test.after.always(() => rmSync(tmp, { recursive: true, force: true }));

const RULESET = `table inet synplug_sr {
  counter cnt1 { packets 5 bytes 300 }
  quota q1 { over 10 mbytes used 1 mbytes }
  limit l1 { rate over 1 mbytes/minute burst 500 kbytes }
  map cm { type ipv4_addr : counter; elements = { 1.1.1.1 : "cnt1" } }
  chain input {
    type filter hook input priority filter; policy accept;
    iifname "lo" accept
    tcp dport 22 ct state new accept
    ct state established,related accept
    ct state invalid drop
    fib daddr type local counter name "cnt1"
  }
  chain c {
    ct mark set 0x5
    ct status dnat accept
    limit rate 10/second
    log prefix "x " level debug flags all
    quota over 10 mbytes used 1 mbytes
    reject with icmpx admin-prohibited
    meta l4proto tcp reject with tcp reset
    counter name ip saddr map @cm
    quota name "q1"
    limit name "l1"
    oif "lo" drop
    oifname "eth*" accept
  }
}
table ip synplug_sr4 {
  chain pre {
    type nat hook prerouting priority dstnat; policy accept;
    ip daddr 169.254.200.1 tcp dport 80 dnat to 169.254.200.2:8080
  }
  chain post {
    type nat hook postrouting priority srcnat; policy accept;
    ip daddr 169.254.200.1 oifname "sp-nonexistent" masquerade random,persistent
  }
  chain c {
    ip protocol tcp ip saddr 10.0.0.0/8 snat to 1.2.3.4-1.2.3.10:1000-2000 fully-random
    udp dport 83 redirect to :8083
    reject with icmp host-prohibited
  }
}
`;

test('synplug show ruleset prints what nft list ruleset prints, and --json what nft -j list ruleset prints', (t) => {
  const file = join(tmp, 'ruleset.nft');
  writeFileSync(file, RULESET);
  const cli = `${JSON.stringify(process.execPath)} --import=tsx ${JSON.stringify(join(ROOT, 'src/cli/bin.ts'))}`;
  const out = (name: string): string => JSON.stringify(join(tmp, name));
  const script = [
    'set -e',
    'ip link set lo up',
    `/usr/sbin/nft -f ${JSON.stringify(file)}`,
    `/usr/sbin/nft list ruleset > ${out('nft.txt')}`,
    `/usr/sbin/nft -j list ruleset > ${out('nft.json')}`,
    `${cli} show ruleset > ${out('ours.txt')}`,
    `${cli} show ruleset --json > ${out('ours.json')}`,
  ].join('\n');
  // a namespace of its own: nothing else creates tables in it
  const r = spawnSync('unshare', ['--net', 'bash', '-c', script], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
  t.is(r.status, 0, r.stderr);
  const theirs = readFileSync(join(tmp, 'nft.txt'), 'utf8');
  t.true(theirs.includes('ct state new') && theirs.includes('dnat to 169.254.200.2:8080') && theirs.includes('counter cnt1 {'), theirs);
  t.deepEqual(readFileSync(join(tmp, 'ours.txt'), 'utf8').split('\n'), theirs.split('\n'));
  const ours = JSON.parse(readFileSync(join(tmp, 'ours.json'), 'utf8')).nftables as Array<Record<string, unknown>>;
  const theirsJson = JSON.parse(readFileSync(join(tmp, 'nft.json'), 'utf8')).nftables as Array<Record<string, unknown>>;
  t.truthy(ours[0].metainfo);
  t.truthy(theirsJson[0].metainfo);
  t.deepEqual(ours.slice(1), theirsJson.slice(1));
  t.is(JSON.stringify(ours.slice(1)), JSON.stringify(theirsJson.slice(1)), 'same key order too');
});
