/**
 * The inbound tc pieces against the reference captures 42-51
 * (fixtures/captures, fixtures/README.md): our encoders build iproute2's
 * requests byte for byte (but seq and port id), and our decoders print the
 * captured dumps as tc printed them (text of `tc -s filter show`, JSON of
 * `tc -s -j filter show`), action statistics included.
 *
 * Expected values come from the captures: the printed output, and the
 * command lines. Device names of mirred targets come from the link dump tc
 * made in the same capture.
 */
import test from 'ava';
import { loadCapture, requests, replies, type Capture } from '../helpers/captures.js';
import { parseMessages, type NetlinkMessage } from '../../src/netlink/message.js';
import { NetlinkConnection, FakeTransport } from '../../src/netlink/connection.js';
import { decodeLink } from '../../src/netlink/route/link.js';
import { decodeFilter, formatFilterText, filterRequest, type FilterEntry } from '../../src/tc/index.js';
import { nameActionDevices, resolveActionDevices } from '../../src/tc/actions/list.js';

const RTM_NEWLINK = 16;
const RTM_NEWTFILTER = 44;

function msgs(c: Capture, dir: 'to-kernel' | 'from-kernel'): NetlinkMessage[] {
  return (dir === 'to-kernel' ? requests(c) : replies(c)).flatMap((d) => parseMessages(d.bytes));
}

/** Names of the devices in the capture's own link dump (tc resolves mirred's ifindex with it). */
function linkNames(c: Capture): (i: number) => string | undefined {
  const m = new Map<number, string>();
  for (const l of msgs(c, 'from-kernel')
    .filter((x) => x.type === RTM_NEWLINK)
    .map(decodeLink))
    if (l.ifname) m.set(l.index, l.ifname);
  return (i) => m.get(i);
}

/** The filters of a captured dump, with mirred targets named. */
function dumpedFilters(name: string): { c: Capture; fs: FilterEntry[] } {
  const c = loadCapture(name);
  const fs = msgs(c, 'from-kernel')
    .filter((m) => m.type === RTM_NEWTFILTER)
    .map((m) => decodeFilter(m));
  nameActionDevices(fs, linkNames(c));
  return { c, fs };
}

/** The dump was of one parent (`... dev v0 ingress`): tc leaves it out of each line (omitParent). */
const ONE_PARENT = { stats: true, omitParent: true };

/** The captured filter request, with seq and port id zeroed. */
function capturedRequest(c: Capture): Buffer {
  const d = requests(c).find((x) => parseMessages(x.bytes)[0].type === RTM_NEWTFILTER || parseMessages(x.bytes)[0].type === 45)!;
  const b = Buffer.from(d.bytes);
  b.fill(0, 8, 16);
  return b;
}

/** Our request for a filter spec as one datagram (through a FakeTransport, so the connection's flags are added as for real). */
async function ourRequest(op: 'add' | 'delete', ifindex: number, spec: Parameters<typeof filterRequest>[2]): Promise<Buffer> {
  const req = filterRequest(op, ifindex, spec);
  const ack = Buffer.alloc(36);
  ack.writeUInt32LE(36, 0);
  ack.writeUInt16LE(2, 4);
  ack.writeUInt32LE(1, 8);
  const fake = new FakeTransport([[ack]]);
  const conn = new NetlinkConnection(fake, 0, { timeoutMs: 1000 });
  // Answer with an ack whose seq matches whatever the connection picks.
  const p = conn.request(req).catch(() => undefined);
  await new Promise((r) => setTimeout(r, 5));
  conn.close();
  await p;
  const b = Buffer.from(fake.sent[0]);
  b.fill(0, 8, 16);
  return b;
}

test('43: u32 SYN match + mirred egress redirect == tc filter add dev v0 ingress protocol ip pref 1 u32 ... action mirred egress redirect dev ifb9', async (t) => {
  const c = loadCapture('43_u32_mirred_add');
  t.regex(c.command, /u32 match ip protocol 6 0xff match u8 0x02 0x12 at 33 match ip dport 16000 0xffff action mirred egress redirect dev ifb9$/);
  const ifb9 = linkNames(loadCapture('46_filter_dump_ingress'));
  t.is(ifb9(3), 'ifb9');
  const ours = await ourRequest('add', 5, {
    parent: 'ingress',
    protocol: 'ip',
    pref: 1,
    kind: 'u32',
    options: {
      match: [
        { type: 'ip', field: 'protocol', value: 6, mask: 0xff },
        { type: 'u8', value: 0x02, mask: 0x12, at: 33 },
        { type: 'ip', field: 'dport', value: 16000, mask: 0xffff },
      ],
      actions: [{ kind: 'mirred', direction: 'egress', mirred_action: 'redirect', ifindex: 3 }],
    },
  });
  t.deepEqual(ours, capturedRequest(c));
});

test('43: the same from tc words (the command line after "u32")', async (t) => {
  const c = loadCapture('43_u32_mirred_add');
  const words = c.command
    .split(' u32 ')[1]
    .split(' ')
    .map((w) => (w === 'ifb9' ? '3' : w));
  t.deepEqual(await ourRequest('add', 5, { parent: 'ingress', protocol: 'ip', pref: 1, kind: 'u32', options: words }), capturedRequest(c));
});

test('43: a mirred target given by name is resolved with one RTM_GETLINK, then encodes as captured', async (t) => {
  const c = loadCapture('43_u32_mirred_add');
  // answer the RTM_GETLINK with the capture's own RTM_NEWLINK for ifb9 (from step 46's link dump)
  const link = replies(loadCapture('46_filter_dump_ingress'))
    .flatMap((d) => parseMessages(d.bytes))
    .find((m) => m.type === RTM_NEWLINK && decodeLink(m).ifname === 'ifb9')!;
  const reply = Buffer.alloc(16 + link.payload.length);
  reply.writeUInt32LE(reply.length, 0);
  reply.writeUInt16LE(RTM_NEWLINK, 4);
  reply.writeUInt32LE(1, 8);
  link.payload.copy(reply, 16);
  const ack = Buffer.alloc(36);
  ack.writeUInt32LE(36, 0);
  ack.writeUInt16LE(2, 4);
  ack.writeUInt32LE(1, 8);
  const fake = new FakeTransport([[reply, ack]]);
  const conn = new NetlinkConnection(fake, 0, { timeoutMs: 1000 });
  const opts = await resolveActionDevices(conn, {
    match: [
      { type: 'ip' as const, field: 'protocol' as const, value: 6, mask: 0xff },
      { type: 'u8' as const, value: 2, mask: 0x12, at: 33 },
      { type: 'ip' as const, field: 'dport' as const, value: 16000, mask: 0xffff },
    ],
    actions: [{ kind: 'mirred', direction: 'egress', mirred_action: 'redirect', to_dev: 'ifb9' }],
  }).catch((e) => {
    conn.close();
    throw e;
  });
  conn.close();
  t.is((opts.actions![0] as { ifindex?: number }).ifindex, 3);
  t.deepEqual(await ourRequest('add', 5, { parent: 'ingress', protocol: 'ip', pref: 1, kind: 'u32', options: opts }), capturedRequest(c));
});

test('44: flower ip_proto tcp dst_port 16000 tcp_flags 0x2/0x12 + mirred == tc filter add dev v0 ingress protocol ipv6 pref 2 flower ...', async (t) => {
  const c = loadCapture('44_flower_mirred_add');
  t.regex(c.command, /flower ip_proto tcp dst_port 16000 tcp_flags 0x2\/0x12 action mirred egress redirect dev ifb9$/);
  const ours = await ourRequest('add', 5, {
    parent: 'ingress',
    protocol: 'ipv6',
    pref: 2,
    kind: 'flower',
    options: {
      eth_type: 'ipv6',
      ip_proto: 'tcp',
      dst_port: 16000,
      tcp_flags: { value: 0x2, mask: 0x12 },
      actions: [{ kind: 'mirred', direction: 'egress', mirred_action: 'redirect', ifindex: 3 }],
    },
  });
  t.deepEqual(ours, capturedRequest(c));
  const words = [
    'eth_type',
    'ipv6',
    ...c.command
      .split(' flower ')[1]
      .split(' ')
      .map((w) => (w === 'ifb9' ? '3' : w)),
  ];
  t.deepEqual(await ourRequest('add', 5, { parent: 'ingress', protocol: 'ipv6', pref: 2, kind: 'flower', options: words }), capturedRequest(c));
});

test('45: matchall + gact pass at egress == tc filter add dev v0 egress protocol all pref 3 matchall action gact pass', async (t) => {
  const c = loadCapture('45_matchall_gact_add');
  t.is(c.command, 'tc filter add dev v0 egress protocol all pref 3 matchall action gact pass');
  t.deepEqual(
    await ourRequest('add', 5, {
      parent: 'egress',
      protocol: 'all',
      pref: 3,
      kind: 'matchall',
      options: { actions: [{ kind: 'gact', control_action: 'pass' }] },
    }),
    capturedRequest(c),
  );
  t.deepEqual(
    await ourRequest('add', 5, { parent: 'egress', protocol: 'all', pref: 3, kind: 'matchall', options: ['action', 'gact', 'pass'] }),
    capturedRequest(c),
  );
});

test('50: tc filter del dev v0 ingress protocol ip pref 1 u32', async (t) => {
  const c = loadCapture('50_filter_del');
  t.is(c.command, 'tc filter del dev v0 ingress protocol ip pref 1 u32');
  t.deepEqual(await ourRequest('delete', 5, { parent: 'ingress', protocol: 'ip', pref: 1, kind: 'u32' }), capturedRequest(c));
});

test('46: "tc -s filter show dev v0 ingress" — our text is what tc printed (u32 and flower, mirred actions with their stats)', (t) => {
  const { c, fs } = dumpedFilters('46_filter_dump_ingress');
  t.is(fs.map((f) => formatFilterText(f, ONE_PARENT)).join(''), c.printed);
});

test('48: "tc -s filter show dev v0 egress" — matchall with a gact action and its stats, as tc printed', (t) => {
  const { c, fs } = dumpedFilters('48_filter_dump_egress');
  t.is(fs.map((f) => formatFilterText(f, ONE_PARENT)).join(''), c.printed);
});

/** tc -j repeats "match" and "success" inside a u32 entry: collect them in order before JSON.parse keeps only the last. */
function u32Matches(printed: string): Array<{ match: Record<string, unknown>; success: number }> {
  const out: Array<{ match: Record<string, unknown>; success: number }> = [];
  const re = /"match":(\{[^}]*\}),"success":(\d+)/g;
  for (let m = re.exec(printed); m; m = re.exec(printed)) out.push({ match: JSON.parse(m[1]), success: Number(m[2]) });
  return out;
}

function strip(e: FilterEntry): Record<string, unknown> {
  const { ifindex: _i, ingress: _in, egress: _eg, handle: _h, dev: _d, ...rest } = e;
  const o = rest as Record<string, unknown>;
  if (o.options) {
    const opts = { ...(o.options as Record<string, unknown>) };
    delete opts.terminal; // tc prints "terminal flowid" only as text
    if (Array.isArray(opts.actions)) opts.actions = (opts.actions as Array<Record<string, unknown>>).map(({ ifindex: _x, ...a }) => a);
    o.options = opts;
  }
  return o;
}

test('47: "tc -s -j filter show dev v0 ingress" — our entries are tc\'s JSON (actions: mirred_action, direction, to_dev, control_action, index/ref/bind, times, stats)', (t) => {
  const { c, fs } = dumpedFilters('47_filter_json_ingress');
  const theirs = JSON.parse(c.printed) as Array<Record<string, unknown>>;
  t.is(fs.length, theirs.length);
  const pairs = u32Matches(c.printed);
  t.is(pairs.length, 3);
  fs.forEach((f, i) => {
    const ours = strip(f);
    const o = ours.options as Record<string, unknown> | undefined;
    if (o?.match) {
      // compare the repeated match/success pairs in order, then the rest as JSON.parse reads it (last pair)
      const ms = o.match as Array<Record<string, unknown>>;
      t.deepEqual(
        ms.map(({ success, ...m }) => ({ match: m, success })),
        pairs,
      );
      o.match = { ...ms[ms.length - 1] };
      delete (o.match as Record<string, unknown>).success;
      o.success = ms[ms.length - 1].success;
    }
    t.deepEqual(ours, theirs[i], `entry ${i}`);
  });
});
