/**
 * Kernel tests (in the VM: Debian kernels with cls_flower, cls_matchall,
 * act_gact, sch_plug): the inbound pieces this machine's kernel lacks.
 *
 * - flower SYN filters (IPv4, IPv6: eth_type, ip_proto tcp, dst_ip,
 *   dst_port, tcp_flags 0x2/0x12) + mirred egress redirect to an IFB, added
 *   by us: `tc -s filter show dev X ingress` prints them as we do (text), and
 *   `tc -s -j` as our JSON; matchall + gact pass at egress the same way;
 *   flower/matchall/gact filters added by tc (captures 44 and 45's commands)
 *   decoded as tc prints them.
 * - Real connections from another namespace over a veth pair: the IFB
 *   counts exactly one packet per connection (IPv4, IPv6, IPv4 with IP options).
 * - The inbound hold itself: a plug as the IFB's root qdisc (released right
 *   after it is created, since a new plug buffers); while buffering, a new
 *   connection's SYN waits on the IFB (qlen 1) and the connection is not
 *   established; released, it completes.
 *
 * Addresses 169.254.78.0/24 and fd00:78::/64 only. Devices: sp-tki*.
 */
import test, { type ExecutionContext } from 'ava';
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { NetlinkConnection } from '../../src/netlink/connection.js';
import { NETLINK_ROUTE } from '../../src/netlink/message.js';
import { createLink, deleteLink, setLinkUp } from '../../src/netlink/route/linkinfo.js';
import { addQdisc, deleteQdisc, addFilter, deleteFilter, listQdiscs, plugBuffer, plugReleaseIndefinite } from '../../src/tc/index.js';
import { resolveActionDevices } from '../../src/tc/actions/list.js';
import type { ActionSpec } from '../../src/tc/actions/types.js';
import { IP, TC, sh, quietly, otherNamespace, inNs, runClient, sameAsTc } from '../helpers/tc-inbound.js';

const SRV = 'sp-tki0';
const CLI = 'sp-tki1';
const IFB = 'sp-tkib';
const PLUGIFB = 'sp-tkip';
const TCDEV = 'sp-tkic';
const TCIFB = 'sp-tkid';
const PORT = 16002;
const V4 = { srv: '169.254.78.1', cli: '169.254.78.2' };
const V6 = { srv: 'fd00:78::1', cli: 'fd00:78::2' };

let conn: NetlinkConnection;
let other: ChildProcess;
let server: Server;

const redirect = (dev: string): ActionSpec[] => [{ kind: 'mirred', direction: 'egress', mirred_action: 'redirect', to_dev: dev }];

async function addFlowerSyn(dev: string, pref: number, family: 'ipv4' | 'ipv6', dst: string, ifb: string): Promise<void> {
  const options = await resolveActionDevices(conn, {
    eth_type: family,
    ip_proto: 'tcp',
    dst_ip: dst,
    dst_port: PORT,
    tcp_flags: { value: 0x02, mask: 0x12 },
    actions: redirect(ifb),
  });
  await addFilter(conn, {
    dev,
    parent: 'ingress',
    protocol: family === 'ipv4' ? 'ip' : 'ipv6',
    pref,
    kind: 'flower',
    options: options as Record<string, unknown>,
  });
}

/**
 * The IFB root qdisc's counters, ours equal to tc's. A packet can arrive
 * between the two readings (the client's SYN retransmits): tc is read before
 * and after ours, and the comparison counts only when tc's two agree (up to
 * five tries; the last one is asserted whatever it is).
 */
async function rootPackets(t: ExecutionContext, dev: string): Promise<{ packets: number; qlen: number }> {
  const tcRoot = () => (JSON.parse(sh(TC, '-s', '-j', 'qdisc', 'show', 'dev', dev, 'root')) as Array<Record<string, number>>)[0];
  for (let attempt = 1; ; attempt++) {
    const theirs = tcRoot();
    const ours = (await listQdiscs(conn, { dev })).find((q) => q.root)!;
    const again = tcRoot();
    if (attempt < 5 && (again.packets !== theirs.packets || again.qlen !== theirs.qlen)) continue;
    t.is(ours.packets, theirs.packets);
    t.is(ours.qlen, theirs.qlen);
    return { packets: theirs.packets, qlen: theirs.qlen };
  }
}

function newIfb(name: string): Promise<void> {
  return createLink(conn, { name, kind: 'ifb' }).then(() => {
    writeFileSync(`/proc/sys/net/ipv6/conf/${name}/disable_ipv6`, '1');
    return setLinkUp(conn, name);
  });
}

test.before(async () => {
  for (const d of [SRV, IFB, PLUGIFB, TCDEV, TCIFB]) quietly(IP, 'link', 'del', d);
  conn = NetlinkConnection.open(NETLINK_ROUTE);
  other = await otherNamespace();
  await createLink(conn, { name: SRV, kind: 'veth', peer: { name: CLI, netnsPid: other.pid } });
  await newIfb(IFB);
  await newIfb(PLUGIFB);
  sh(IP, 'addr', 'add', `${V4.srv}/24`, 'dev', SRV);
  sh(IP, '-6', 'addr', 'add', `${V6.srv}/64`, 'dev', SRV, 'nodad');
  await setLinkUp(conn, SRV);
  inNs(other, IP, 'link', 'set', 'lo', 'up');
  inNs(other, IP, 'addr', 'add', `${V4.cli}/24`, 'dev', CLI);
  inNs(other, IP, '-6', 'addr', 'add', `${V6.cli}/64`, 'dev', CLI, 'nodad');
  inNs(other, IP, 'link', 'set', CLI, 'up');
  server = createServer((s) => s.pipe(s));
  await new Promise<void>((r) => server.listen({ port: PORT, host: '::', ipv6Only: false }, () => r()));
  await addQdisc(conn, { dev: IFB, parent: 'root', handle: '1:', kind: 'pfifo', options: { limit: 1000 } });
  await addQdisc(conn, { dev: SRV, kind: 'clsact' });
  await addFlowerSyn(SRV, 10, 'ipv4', V4.srv, IFB);
  await addFlowerSyn(SRV, 11, 'ipv6', V6.srv, IFB);
  await addFilter(conn, {
    dev: SRV,
    parent: 'egress',
    protocol: 'all',
    pref: 3,
    kind: 'matchall',
    options: { actions: [{ kind: 'gact', control_action: 'pass' }] },
  });
});

test.after.always(() => {
  server?.close();
  conn?.close();
  for (const d of [SRV, IFB, PLUGIFB, TCDEV, TCIFB]) quietly(IP, 'link', 'del', d);
  other?.kill('SIGKILL');
});

test.serial('our flower SYN filters + mirred (ingress) and matchall + gact (egress): tc -s prints them as we do, text and JSON', async (t) => {
  const ing = await sameAsTc(t, conn, SRV, 'ingress');
  const flowers = ing.filter((f) => (f.options as Record<string, unknown> | undefined)?.keys);
  t.is(flowers.length, 2);
  t.like(flowers[0].options, { keys: { eth_type: 'ipv4', ip_proto: 'tcp', dst_ip: V4.srv, dst_port: PORT, tcp_flags: '0x2/12' } });
  t.like(flowers[1].options, { keys: { eth_type: 'ipv6', ip_proto: 'tcp', dst_ip: V6.srv, dst_port: PORT, tcp_flags: '0x2/12' } });
  const eg = await sameAsTc(t, conn, SRV, 'egress');
  const acts = eg.flatMap((f) => ((f.options as Record<string, unknown> | undefined)?.actions as Array<Record<string, unknown>> | undefined) ?? []);
  t.like(acts[0], { kind: 'gact', control_action: { type: 'pass' } });
});

test.serial('real connections (IPv4, IPv6, IPv4 with IP options): the IFB carries exactly one packet per connection; gact counts egress packets', async (t) => {
  const before = await rootPackets(t, IFB);
  t.is(await runClient(other, '4', V4.srv, PORT, 10), 'ok');
  t.is(await runClient(other, '6', V6.srv, PORT, 10), 'ok');
  t.is(await runClient(other, '4', V4.srv, PORT, 5, true), 'ok');
  t.is((await rootPackets(t, IFB)).packets - before.packets, 25);
  const ing = await sameAsTc(t, conn, SRV, 'ingress');
  const stats = ing
    .flatMap((f) => ((f.options as Record<string, unknown> | undefined)?.actions as Array<{ stats: { packets: number } }> | undefined) ?? [])
    .map((a) => a.stats.packets);
  t.deepEqual(stats, [15, 10]);
  const eg = await sameAsTc(t, conn, SRV, 'egress');
  const gact = (eg.find((f) => f.options)!.options as { actions: Array<{ stats: { packets: number } }> }).actions[0];
  t.true(gact.stats.packets >= 25 * 3, `gact pass saw ${gact.stats.packets} egress packets`);
});

test.serial("the inbound hold: a SYN waits in the IFB's plug while it buffers, and the connection completes once released", async (t) => {
  await addQdisc(conn, { dev: PLUGIFB, parent: 'root', handle: '2:', kind: 'plug', options: { limit: 100000 } });
  const plug = { dev: PLUGIFB, parent: 'root', handle: '2:' };
  await plugReleaseIndefinite(conn, plug); // a new plug buffers: release it at once
  await deleteFilter(conn, { dev: SRV, parent: 'ingress', protocol: 'ip', pref: 10, kind: 'flower' });
  await addFlowerSyn(SRV, 10, 'ipv4', V4.srv, PLUGIFB);
  t.is(await runClient(other, '4', V4.srv, PORT, 3), 'ok');
  t.is((await rootPackets(t, PLUGIFB)).packets, 3);
  await plugBuffer(conn, plug);
  const started = Date.now();
  const client = runClient(other, '4', V4.srv, PORT, 1);
  let held = { packets: 0, qlen: 0 };
  for (let i = 0; i < 100 && held.qlen === 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
    held = await rootPackets(t, PLUGIFB);
  }
  t.is(held.qlen, 1, 'the SYN waits in the plug');
  t.is(held.packets, 3, 'nothing new was sent on');
  await new Promise((r) => setTimeout(r, 500));
  await plugReleaseIndefinite(conn, plug);
  t.is(await client, 'ok');
  t.true(Date.now() - started >= 500);
  const after = await rootPackets(t, PLUGIFB);
  t.is(after.qlen, 0);
  t.true(after.packets >= 4, `${after.packets}`);
  await deleteQdisc(conn, { dev: PLUGIFB, parent: 'root' });
});

test.serial("flower + mirred and matchall + gact added by tc (captures 44 and 45's commands) decode as tc prints them", async (t) => {
  await createLink(conn, { name: TCDEV, kind: 'veth', peer: { name: `${TCDEV}p` } });
  await createLink(conn, { name: TCIFB, kind: 'ifb' });
  sh(TC, 'qdisc', 'add', 'dev', TCDEV, 'clsact');
  sh(
    TC,
    'filter',
    'add',
    'dev',
    TCDEV,
    'ingress',
    'protocol',
    'ipv6',
    'pref',
    '2',
    'flower',
    'ip_proto',
    'tcp',
    'dst_port',
    '16000',
    'tcp_flags',
    '0x2/0x12',
    'action',
    'mirred',
    'egress',
    'redirect',
    'dev',
    TCIFB,
  );
  sh(
    TC,
    'filter',
    'add',
    'dev',
    TCDEV,
    'ingress',
    'protocol',
    'ip',
    'pref',
    '4',
    'flower',
    'ip_proto',
    'tcp',
    'dst_ip',
    '169.254.78.0/24',
    'src_port',
    '1000-2000',
    'action',
    'gact',
    'drop',
    'random',
    'determ',
    'pass',
    '10',
  );
  sh(TC, 'filter', 'add', 'dev', TCDEV, 'egress', 'protocol', 'all', 'pref', '3', 'matchall', 'action', 'gact', 'pass');
  await sameAsTc(t, conn, TCDEV, 'ingress');
  await sameAsTc(t, conn, TCDEV, 'egress');
  await deleteQdisc(conn, { dev: TCDEV, kind: 'clsact' });
  await deleteLink(conn, TCDEV);
  await deleteLink(conn, TCIFB);
  t.pass();
});
