/**
 * Live (host kernel: clsact, u32, mirred, ifb, veth; no flower, matchall,
 * gact, plug): the inbound pieces against tc and real traffic.
 *
 * - clsact + u32 SYN filters (u32SynMatch, IPv4 and IPv6) + mirred egress
 *   redirect to an IFB, added by us, read back by `tc -s filter show dev X
 *   ingress` (text) and `tc -s -j` (JSON); filters added by tc decoded by us
 *   equal tc's output. tc prints action times in whole seconds and counters
 *   that move: our listing is taken just before and just after tc's, and
 *   tc's must equal one of the two.
 * - Real connections from another network namespace across a veth pair:
 *   the IFB (root pfifo) counts exactly one packet per connection (the
 *   SYN), although each connection also sends data and ACKs; IPv4, IPv6,
 *   and IPv4 SYNs whose header carries IP options (IP_OPTIONS on the client
 *   socket; an nftables counter on `ip hdrlength 6` in prerouting proves
 *   they had options and were delivered after the IFB).
 * - Kinds this kernel lacks: flower, matchall, gact: errors naming
 *   cls_flower, cls_matchall, act_gact.
 *
 * Addresses 169.254.77.0/24 and fd00:77::/64 only. Devices: sp-in*.
 */
import test, { type ExecutionContext } from 'ava';
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { NetlinkConnection } from '../../src/netlink/connection.js';
import { NETLINK_ROUTE } from '../../src/netlink/message.js';
import { createLink, deleteLink, setLinkUp } from '../../src/netlink/route/linkinfo.js';
import { addQdisc, deleteQdisc, addFilter, deleteFilter, listQdiscs, KindUnavailableError } from '../../src/tc/index.js';
import { u32SynMatch } from '../../src/tc/filters/u32.js';
import { resolveActionDevices } from '../../src/tc/actions/list.js';
import { IP, NFT, TC, sh, quietly, otherNamespace, inNs, runClient, ourListing, sameAsTc, tcFilterAdd, tcSynRedirect } from '../helpers/tc-inbound.js';
import type { ActionSpec } from '../../src/tc/actions/types.js';

const SRV = 'sp-ina0';
const CLI = 'sp-ina1';
const IFB = 'sp-inb0';
const TCDEV = 'sp-inc0';
const TCIFB = 'sp-inc9';
const ERRDEV = 'sp-ine0';
const PORT = 16001;
const V4 = { srv: '169.254.77.1', cli: '169.254.77.2' };
const V6 = { srv: 'fd00:77::1', cli: 'fd00:77::2' };

let conn: NetlinkConnection;
let other: ChildProcess;
let server: Server;

function inClient(...args: string[]): string {
  return inNs(other, ...args);
}
async function connect(family: '4' | '6', n: number, opts = false): Promise<void> {
  const out = await runClient(other, family, family === '4' ? V4.srv : V6.srv, PORT, n, opts);
  if (out !== 'ok') throw new Error(out);
}

/** Packets through the IFB's root pfifo, as tc -s -j reports them, and as we list them (must agree). */
async function ifbPackets(t: ExecutionContext): Promise<number> {
  const [theirs] = JSON.parse(sh(TC, '-s', '-j', 'qdisc', 'show', 'dev', IFB, 'root')) as Array<Record<string, unknown>>;
  const ours = (await listQdiscs(conn, { dev: IFB })).find((q) => q.root);
  t.is(ours?.packets, theirs.packets as number);
  return theirs.packets as number;
}

function nftSynsWithOptions(): number {
  const j = JSON.parse(sh(NFT, '-j', 'list', 'chain', 'ip', 'sp_in', 'pre')) as {
    nftables: Array<Record<string, { expr?: Array<Record<string, { packets: number }>> }>>;
  };
  const rule = j.nftables.find((x) => x.rule)!.rule;
  return rule.expr!.find((e) => e.counter)!.counter.packets;
}

const redirect = (dev: string): ActionSpec[] => [{ kind: 'mirred', direction: 'egress', mirred_action: 'redirect', to_dev: dev }];

/** Add the SYN filters of one family at `pref` with a mirred redirect to `ifb`. */
async function addSynFilters(dev: string, family: 'inet' | 'inet6', pref: number, ifb: string, dst?: string): Promise<void> {
  const m = u32SynMatch({ family, dport: PORT, ...(dst ? { dst } : {}), actions: redirect(ifb) });
  for (const f of m.filters) {
    const options = await resolveActionDevices(conn, f.options);
    await addFilter(conn, {
      dev,
      parent: 'ingress',
      protocol: m.protocol,
      pref,
      kind: 'u32',
      ...(f.handle ? { handle: f.handle } : {}),
      options: options as Record<string, unknown>,
    });
  }
}

test.before(async () => {
  for (const d of [SRV, IFB, TCDEV, TCIFB, ERRDEV]) quietly(IP, 'link', 'del', d);
  quietly(NFT, 'delete', 'table', 'ip', 'sp_in');
  conn = NetlinkConnection.open(NETLINK_ROUTE);
  other = await otherNamespace();
  await createLink(conn, { name: SRV, kind: 'veth', peer: { name: CLI, netnsPid: other.pid } });
  await createLink(conn, { name: IFB, kind: 'ifb' });
  // nothing of the IFB's own (IPv6 MLD/RS) may pass its qdisc: only what is redirected to it
  writeFileSync(`/proc/sys/net/ipv6/conf/${IFB}/disable_ipv6`, '1');
  sh(IP, 'addr', 'add', `${V4.srv}/24`, 'dev', SRV);
  sh(IP, '-6', 'addr', 'add', `${V6.srv}/64`, 'dev', SRV, 'nodad');
  await setLinkUp(conn, SRV);
  await setLinkUp(conn, IFB);
  inClient(IP, 'link', 'set', 'lo', 'up');
  inClient(IP, 'addr', 'add', `${V4.cli}/24`, 'dev', CLI);
  inClient(IP, '-6', 'addr', 'add', `${V6.cli}/64`, 'dev', CLI, 'nodad');
  inClient(IP, 'link', 'set', CLI, 'up');
  server = createServer((s) => s.pipe(s));
  await new Promise<void>((r) => server.listen({ port: PORT, host: '::', ipv6Only: false }, () => r()));
  await addQdisc(conn, { dev: IFB, parent: 'root', handle: '1:', kind: 'pfifo', options: { limit: 1000 } });
  await addQdisc(conn, { dev: SRV, kind: 'clsact' });
  await addSynFilters(SRV, 'inet', 10, IFB, V4.srv);
  await addSynFilters(SRV, 'inet6', 11, IFB, V6.srv);
  sh(NFT, 'add', 'table', 'ip', 'sp_in');
  sh(NFT, 'add', 'chain', 'ip', 'sp_in', 'pre', '{ type filter hook prerouting priority 0 ; }');
  sh(NFT, 'add', 'rule', 'ip', 'sp_in', 'pre', 'iifname', SRV, 'ip', 'hdrlength', '6', 'tcp', 'flags', '&', '(syn|ack)', '==', 'syn', 'counter');
});

test.after.always(async () => {
  server?.close();
  conn?.close();
  for (const d of [SRV, IFB, TCDEV, TCIFB, ERRDEV]) quietly(IP, 'link', 'del', d);
  quietly(NFT, 'delete', 'table', 'ip', 'sp_in');
  other?.kill('SIGKILL');
});

/* ---- our filters as tc reads them ---- */

test.serial(
  'our clsact + u32 SYN filters (IPv4 with the header-length link, IPv6) + mirred to the IFB: tc -s prints them as we do, text and JSON',
  async (t) => {
    const fs = await sameAsTc(t, conn, SRV, 'ingress');
    await sameAsTc(t, conn, SRV, 'ingress', false);
    // IPv4: the divisor table 1:, the link node in 800: (offset/eat), the TCP node in 1: with the action; IPv6: one node
    t.true(fs.some((f) => (f.options as Record<string, unknown> | undefined)?.fh === '1:'));
    t.true(fs.some((f) => (f.options as Record<string, unknown> | undefined)?.link === '1:'));
    const acts = fs.flatMap((f) => ((f.options as Record<string, unknown> | undefined)?.actions as Array<Record<string, unknown>> | undefined) ?? []);
    t.is(acts.length, 2);
    for (const a of acts) t.like(a, { kind: 'mirred', mirred_action: 'redirect', direction: 'egress', to_dev: IFB, control_action: { type: 'stolen' } });
  },
);

test.serial('real IPv4 connections from the other namespace: the IFB carries exactly one packet (the SYN) per connection', async (t) => {
  const before = await ifbPackets(t);
  await connect('4', 20);
  t.is((await ifbPackets(t)) - before, 20);
});

test.serial('real IPv6 connections: exactly one packet per connection on the IFB', async (t) => {
  const before = await ifbPackets(t);
  await connect('6', 20);
  t.is((await ifbPackets(t)) - before, 20);
});

test.serial('IPv4 SYNs whose header carries IP options (IHL 6) are matched through the header-length link and delivered', async (t) => {
  const before = await ifbPackets(t);
  const nftBefore = nftSynsWithOptions();
  await connect('4', 10, true);
  t.is(nftSynsWithOptions() - nftBefore, 10, 'nft saw 10 SYNs with a 24-byte IP header after the IFB');
  t.is((await ifbPackets(t)) - before, 10);
  // the TCP-level node's action counted them too: 20 + 10 IPv4 SYNs so far (its own stats)
  const fs = await ourListing(conn, SRV, 'ingress');
  const v4 = fs.find((f) => f.protocol === 'ip' && (f.options as Record<string, unknown> | undefined)?.actions);
  t.is(((v4!.options as Record<string, unknown>).actions as Array<{ stats: { packets: number } }>)[0].stats.packets, 30);
});

test.serial('connections to another port pass the IFB untouched', async (t) => {
  const other2 = createServer((s) => s.pipe(s));
  await new Promise<void>((r) => other2.listen({ port: PORT + 1, host: V4.srv }, () => r()));
  try {
    const before = await ifbPackets(t);
    t.is(await runClient(other, '4', V4.srv, PORT + 1, 5), 'ok');
    t.is((await ifbPackets(t)) - before, 0);
  } finally {
    other2.close();
  }
});

test.serial("filters added by tc (capture 43's command) decode as tc prints them; we delete them by pref", async (t) => {
  await createLink(conn, { name: TCDEV, kind: 'veth', peer: { name: `${TCDEV}p` } });
  await createLink(conn, { name: TCIFB, kind: 'ifb' });
  sh(TC, 'qdisc', 'add', 'dev', TCDEV, 'clsact');
  tcSynRedirect(TCDEV, 1, 16000, TCIFB);
  tcFilterAdd(
    TCDEV,
    'ingress',
    `protocol ipv6 pref 2 u32 match u8 6 0xff at 6 match u16 443 0xffff at 42 action mirred ingress mirror dev ${TCIFB} pipe action mirred egress redirect dev ${TCIFB}`,
  );
  await sameAsTc(t, conn, TCDEV, 'ingress');
  await sameAsTc(t, conn, TCDEV, 'ingress', false);
  await deleteFilter(conn, { dev: TCDEV, parent: 'ingress', protocol: 'ip', pref: 1, kind: 'u32' });
  t.false(sh(TC, 'filter', 'show', 'dev', TCDEV, 'ingress').includes('pref 1 '));
  await deleteQdisc(conn, { dev: TCDEV, kind: 'clsact' });
  t.is(sh(TC, 'filter', 'show', 'dev', TCDEV, 'ingress'), '');
  await deleteLink(conn, TCDEV);
  await deleteLink(conn, TCIFB);
});

test.serial('kinds this kernel lacks: flower -> cls_flower, matchall -> cls_matchall, gact on u32 -> act_gact named (missing-module)', async (t) => {
  await createLink(conn, { name: ERRDEV, kind: 'ifb' });
  await addQdisc(conn, { dev: ERRDEV, kind: 'clsact' });
  const flower = await t.throwsAsync(
    addFilter(conn, {
      dev: ERRDEV,
      parent: 'ingress',
      protocol: 'ipv6',
      pref: 2,
      kind: 'flower',
      options: {
        eth_type: 'ipv6',
        ip_proto: 'tcp',
        dst_port: PORT,
        tcp_flags: { value: 2, mask: 0x12 },
        actions: [{ kind: 'mirred', direction: 'egress', mirred_action: 'redirect', ifindex: 1 }],
      },
    }),
    { instanceOf: KindUnavailableError },
  );
  t.is(flower!.category, 'missing-module');
  t.regex(flower!.message, /cls_flower/);
  const matchall = await t.throwsAsync(
    addFilter(conn, {
      dev: ERRDEV,
      parent: 'egress',
      protocol: 'all',
      pref: 3,
      kind: 'matchall',
      options: { actions: [{ kind: 'gact', control_action: 'pass' }] },
    }),
    { instanceOf: KindUnavailableError },
  );
  t.is(matchall!.category, 'missing-module');
  t.regex(matchall!.message, /cls_matchall/);
  const gact = await t.throwsAsync(
    addFilter(conn, {
      dev: ERRDEV,
      parent: 'ingress',
      protocol: 'ip',
      pref: 4,
      kind: 'u32',
      options: { match: [{ type: 'ip', field: 'protocol', value: 6, mask: 0xff }], actions: [{ kind: 'gact', control_action: 'drop' }] },
    }),
    { instanceOf: KindUnavailableError },
  );
  t.is(gact!.module, 'act_gact');
  t.is(gact!.object, 'action');
  t.is(gact!.category, 'missing-module');
  t.regex(gact!.message, /act_gact/);
  t.is(flower!.module, 'cls_flower');
  t.is(matchall!.module, 'cls_matchall');
  // nothing was added
  t.is(sh(TC, 'filter', 'show', 'dev', ERRDEV, 'ingress'), '');
  await deleteLink(conn, ERRDEV);
});
