/**
 * Live, differential: `synplug show link -d` against `ip -d link show` and
 * `synplug show link -d --json` against `ip -d -j link show` (iproute2 6.1,
 * `/usr/sbin/ip` by absolute path), in a network namespace of their own
 * holding bridges (default and configured), bridge ports (veth, one with
 * port options), vxlan devices (IPv4 and IPv6 remotes, a multicast group on
 * a device, external, ttl inherit, nolearning, tos, maxaddress, checksum
 * options) and tun/tap devices (one multi-queue): the kind details
 * (`info_data`, `info_slave_data`) in text and JSON, key order included.
 * Bridge timers count down while the two listings are taken: their values
 * are compared as numbers of the right form, not equal.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const IP = '/usr/sbin/ip';
const tmp = mkdtempSync(join(tmpdir(), 'synplug-link-details-'));
test.after.always(() => rmSync(tmp, { recursive: true, force: true }));

const SETUP = [
  `${IP} link set lo up`,
  `${IP} link add br0 type bridge`,
  `${IP} link add v0 type veth peer name v1`,
  `${IP} link set v0 master br0`,
  `${IP} link add br2 type bridge stp_state 1 group_fwd_mask 8 mcast_snooping 0 ageing_time 1000 priority 100`,
  `${IP} link add v2 type veth peer name v3`,
  `${IP} link set v2 master br2`,
  `${IP} link set v2 type bridge_slave cost 5 priority 7 learning off hairpin on guard on proxy_arp on isolated on`,
  `${IP} link add vx0 type vxlan id 42 dstport 4789 local 169.254.9.1`,
  `${IP} link add vx1 type vxlan id 7 remote 169.254.9.2 dstport 8472 nolearning ttl 5 tos 0x10 maxaddress 10 noudpcsum srcport 1000 2000`,
  `${IP} link add vx3 type vxlan id 9 local fd00::1 remote fd00::2 dstport 4789 udp6zerocsumtx udp6zerocsumrx`,
  `${IP} link add vx4 type vxlan external dstport 4790`,
  `${IP} link add vx5 type vxlan id 10 group 239.1.1.1 dev v1 dstport 4789 ttl inherit df set`,
  `${IP} tuntap add tp0 mode tap`,
  `${IP} tuntap add tn0 mode tun multi_queue`,
  // owners: ip names them (text and JSON) when the accounts file has the id, else prints the number
  `${IP} tuntap add tn1 mode tun user 65534 group 65534`,
  `${IP} tuntap add tn2 mode tun user 4242`,
  `${IP} tuntap add tp3 mode tap user 0 group 4243`,
];

/** Devices listed one at a time (`--dev`): those whose details name other devices or accounts. */
const ONE_BY_ONE = ['vx5', 'v0', 'tn1', 'tn2', 'tp3'];

/** `ip -d` and synplug's listings (text, JSON) of every device or of `dev`, into ip[-DEV].txt|json, ours[-DEV].txt|json. */
function listings(dev?: string): string[] {
  const cli = `${JSON.stringify(process.execPath)} --import=tsx ${JSON.stringify(join(ROOT, 'src/cli/bin.ts'))}`;
  const out = (name: string): string => JSON.stringify(join(tmp, name));
  const [tag, ipDev, ourDev] = dev === undefined ? ['', '', ''] : [`-${dev}`, ` dev ${dev}`, ` --dev ${dev}`];
  return [
    `${IP} -d link show${ipDev} > ${out(`ip${tag}.txt`)}`,
    `${IP} -d -j link show${ipDev} > ${out(`ip${tag}.json`)}`,
    `${cli} show link -d${ourDev} > ${out(`ours${tag}.txt`)}`,
    `${cli} show link -d${ourDev} --json > ${out(`ours${tag}.json`)}`,
  ];
}

/** Run SETUP then `lines` as root in a new network namespace. */
function listAfterSetup(lines: string[]): { status: number | null; stderr: string } {
  const script = ['set -e', ...SETUP, ...lines].join('\n');
  return spawnSync('unshare', ['--net', 'bash', '-c', script], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
}

/** `hello_timer    0.00` -> `hello_timer T`: timers run while the listings are taken. */
const timersOut = (s: string): string => s.replace(/(_timer) +\d+\.\d\d/g, '$1 T');

test('show link -d prints the kind details ip -d prints (bridge, bridge port, vxlan, tun), and --json ip -d -j', (t) => {
  const r = listAfterSetup(listings());
  t.is(r.status, 0, r.stderr);

  const theirs = readFileSync(join(tmp, 'ip.txt'), 'utf8');
  // what the test is about is there at all
  for (const word of [
    'bridge forward_delay',
    'bridge_slave state',
    'vxlan id 42',
    'vxlan external',
    'tun type tap',
    'multi_queue numqueues',
    'ttl inherit',
    'user nobody group nogroup',
    'user 4242 ',
    'user root group 4243 ',
  ])
    t.true(theirs.includes(word), word);
  t.deepEqual(timersOut(readFileSync(join(tmp, 'ours.txt'), 'utf8')).split('\n'), timersOut(theirs).split('\n'));

  type Link = { ifname: string; linkinfo?: { info_data?: Record<string, unknown>; info_slave_data?: Record<string, unknown> } };
  const ours = JSON.parse(readFileSync(join(tmp, 'ours.json'), 'utf8')) as Link[];
  const theirsJson = JSON.parse(readFileSync(join(tmp, 'ip.json'), 'utf8')) as Link[];
  const timers = (links: Link[]): Link[] => {
    for (const l of links) {
      for (const d of [l.linkinfo?.info_data, l.linkinfo?.info_slave_data]) {
        for (const k of Object.keys(d ?? {}).filter((x) => x.endsWith('_timer'))) {
          t.is(typeof d![k], 'number', `${l.ifname} ${k}`);
          d![k] = 'T';
        }
      }
    }
    return links;
  };
  t.deepEqual(timers(ours), timers(theirsJson));
  t.is(JSON.stringify(ours), JSON.stringify(theirsJson), 'same key order too');
});

test("show link -d --dev NAME: the details name other devices as ip does, asking the kernel (a vxlan's dev, a port's master), and tun owners", (t) => {
  const r = listAfterSetup(ONE_BY_ONE.flatMap((d) => listings(d)));
  t.is(r.status, 0, r.stderr);
  t.regex(readFileSync(join(tmp, 'ip-vx5.txt'), 'utf8'), / dev v1 /);
  for (const d of ONE_BY_ONE) {
    const read = (n: string): string => readFileSync(join(tmp, n), 'utf8');
    t.deepEqual(timersOut(read(`ours-${d}.txt`)).split('\n'), timersOut(read(`ip-${d}.txt`)).split('\n'), d);
    // timers as in the full listing: numbers that count down (ip writes 0.00, JSON.stringify 0)
    const untimed = (text: string): string => JSON.stringify(JSON.parse(text), (k, v: unknown) => (k.endsWith('_timer') && typeof v === 'number' ? 'T' : v));
    t.is(untimed(read(`ours-${d}.json`)), untimed(read(`ip-${d}.json`)), d);
  }
});
