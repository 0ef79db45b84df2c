import test from 'ava';
import { loadCapture, requests, replies } from '../helpers/captures.js';
import { parseMessages, encodeMessage, NLMSG_ERROR, NLM_F_ACK, NLM_F_CAPPED, NETLINK_ROUTE, type NetlinkMessage } from '../../src/netlink/message.js';
import { NetlinkConnection, FakeTransport } from '../../src/netlink/connection.js';
import { NetlinkError, UsageError } from '../../src/netlink/errors.js';
import { bodyDecoder } from '../../src/netlink/protocols.js';
import {
  decodeLink,
  toLinkInfo,
  formatLink,
  getLinkByName,
  getLinkByIndex,
  listLinks,
  resolveIfindex,
  linkFlagNames,
  getLinkRequest,
  validateDeviceName,
  RTM_GETLINK,
  RTM_NEWLINK,
  RTM_DELLINK,
  RTM_SETLINK,
} from '../../src/netlink/route/index.js';

/** An ack (NLMSG_ERROR, error 0) for a request, as the kernel sends it (capped echo). */
function ackFor(): Buffer {
  const echo = Buffer.alloc(16);
  const p = Buffer.alloc(4);
  return encodeMessage({ type: NLMSG_ERROR, flags: NLM_F_CAPPED, seq: 1, pid: 0, payload: [p, echo] });
}

/** Parse `ip link show` text (the oracle) into the values it shows. */
function parseIpLinkText(text: string): Record<string, unknown> {
  const [l1, l2] = text.trim().split('\n');
  const m = /^(\d+): ([^:@]+)(?:@([^:]+))?: <([^>]*)> mtu (\d+) qdisc (\S+) state (\S+) mode (\S+) group (\S+) qlen (\d+)$/.exec(l1);
  const n = /^ {4}link\/(\S+) (\S+) brd (\S+)$/.exec(l2);
  if (!m || !n) throw new Error(`oracle text did not parse: ${text}`);
  return {
    ifindex: Number(m[1]),
    ifname: m[2],
    flags: m[4].split(','),
    mtu: Number(m[5]),
    qdisc: m[6],
    operstate: m[7],
    linkmode: m[8],
    group: m[9],
    txqlen: Number(m[10]),
    link_type: n[1],
    address: n[2],
    broadcast: n[3],
  };
}

const c01 = loadCapture('01_link_show');

test('01 link show: every RTM_NEWLINK reply decodes to what `ip link show lo` printed', (t) => {
  const expected = parseIpLinkText(c01.printed);
  let n = 0;
  for (const d of replies(c01)) {
    for (const m of parseMessages(d.bytes)) {
      if (m.type !== RTM_NEWLINK) continue;
      const info = toLinkInfo(decodeLink(m));
      t.deepEqual({ ...info }, expected);
      t.is(formatLink(info), c01.printed.trimEnd());
      n++;
    }
  }
  t.is(n, 2);
});

test('01 link show: our RTM_GETLINK request for "lo" has the captured payload (ip asked without NLM_F_ACK)', async (t) => {
  const captured = parseMessages(requests(c01)[1].bytes)[0];
  const reply = replies(c01)[1].bytes;
  const tr = new FakeTransport([[reply, ackFor()]]);
  const conn = new NetlinkConnection(tr, NETLINK_ROUTE);
  const link = await getLinkByName(conn, 'lo');
  t.is(link.ifname, 'lo');
  t.is(tr.sent.length, 1);
  const [ours] = parseMessages(tr.sent[0]);
  t.is(ours.type, RTM_GETLINK);
  t.is(ours.type, captured.type);
  t.is(ours.flags, captured.flags | NLM_F_ACK);
  t.deepEqual(ours.payload, captured.payload);
});

test('16b no such dev: our RTM_GETLINK for "nosuchdev0" equals the captured one; ENODEV becomes "device \'nosuchdev0\' not found"', async (t) => {
  const c = loadCapture('16b_no_such_dev');
  const req = requests(c).at(-1)!;
  const rep = replies(c).at(-1)!;
  const captured = parseMessages(req.bytes)[0];
  const tr = new FakeTransport([[rep.bytes]]);
  const conn = new NetlinkConnection(tr, NETLINK_ROUTE);
  const err = await t.throwsAsync(getLinkByName(conn, 'nosuchdev0'), { instanceOf: NetlinkError });
  t.is(err!.message, "device 'nosuchdev0' not found");
  t.is(err!.code, 'ENODEV');
  t.is(err!.errno, 19);
  t.is(err!.category, 'usage'); // ENODEV: a device that does not exist is bad input (categoryOfErrno)
  t.is(err!.requestType, 'RTM_GETLINK');
  const [ours] = parseMessages(tr.sent[0]);
  t.is(ours.flags, captured.flags | NLM_F_ACK);
  t.deepEqual(ours.payload, captured.payload);
  // the text tc printed names the device too
  t.regex(c.printed, /nosuchdev0/);
});

test('resolveIfindex: a name costs exactly one RTM_GETLINK; a number costs none', async (t) => {
  const tr = new FakeTransport([[replies(c01)[1].bytes, ackFor()]]);
  const conn = new NetlinkConnection(tr, NETLINK_ROUTE);
  t.is(await resolveIfindex(conn, 'lo'), 1);
  t.is(tr.sent.length, 1);
  t.is(await resolveIfindex(conn, 7), 7);
  t.is(tr.sent.length, 1);
});

test('resolveIfindex: ENODEV -> NetlinkError "device \'X\' not found"', async (t) => {
  const c = loadCapture('16b_no_such_dev');
  const conn = new NetlinkConnection(new FakeTransport([[replies(c).at(-1)!.bytes]]), NETLINK_ROUTE);
  await t.throwsAsync(resolveIfindex(conn, 'nosuchdev0'), { instanceOf: NetlinkError, message: "device 'nosuchdev0' not found" });
});

test('getLinkByIndex sends ifi_index and no name', async (t) => {
  const tr = new FakeTransport([[replies(c01)[1].bytes, ackFor()]]);
  const conn = new NetlinkConnection(tr, NETLINK_ROUTE);
  const l = await getLinkByIndex(conn, 1);
  t.is(l.ifindex, 1);
  const [m] = parseMessages(tr.sent[0]);
  t.is(m.payload.readInt32LE(4), 1);
  t.is(decodeLink(m).ifname, undefined);
});

test('listLinks: the dump tc made in step 16 holds lo (as ip printed it in step 01), the nlmon capture device and ifb0', async (t) => {
  const c = loadCapture('16_bad_kind');
  // tc's link dump: the first request, answered by three datagrams ending with NLMSG_DONE
  const dumpReplies = replies(c)
    .slice(0, 3)
    .map((d) => d.bytes);
  const tr = new FakeTransport([dumpReplies]);
  const conn = new NetlinkConnection(tr, NETLINK_ROUTE);
  const links = await listLinks(conn);
  t.deepEqual(
    links.map((l) => l.ifname),
    ['lo', 'nlmon0', 'ifb0'],
  );
  // by step 16, lo's root qdisc is the prio that step 11's `tc qdisc show` printed
  const rootKind = /^qdisc (\S+) \S+ root/m.exec(loadCapture('11_qdisc_dump_stats').printed)![1];
  t.is(rootKind, 'prio');
  t.deepEqual({ ...links[0] }, { ...parseIpLinkText(c01.printed), qdisc: rootKind });
  t.is(links[1].link_type, 'netlink'); // ARPHRD_NETLINK
  t.is(links[2].link_type, 'ether');
  t.is(links[2].ifindex, parseMessages(dumpReplies[1])[0].payload.readInt32LE(4));
  // addr form: no linkmode
  const conn2 = new NetlinkConnection(new FakeTransport([dumpReplies]), NETLINK_ROUTE);
  t.false('linkmode' in (await listLinks(conn2, { addr: true }))[0]);
});

test('flag names follow iproute2: NO-CARRIER when UP without RUNNING, leftover bits in hex, M-DOWN last', (t) => {
  t.deepEqual(linkFlagNames(0x1 | 0x2 | 0x1000), ['NO-CARRIER', 'BROADCAST', 'MULTICAST', 'UP']);
  t.deepEqual(linkFlagNames(0x8 | 0x1 | 0x40 | 0x10000), ['LOOPBACK', 'UP', 'LOWER_UP']);
  t.deepEqual(linkFlagNames(0x2 | 0x1000, true), ['BROADCAST', 'MULTICAST', 'M-DOWN']);
  t.deepEqual(linkFlagNames(0x2 | 0x100000), ['BROADCAST', '100000']);
});

test('IFLA_LINK resolves to the peer name (one more RTM_GETLINK) and M-DOWN when the peer is down', async (t) => {
  // A veth-like link 3 with IFLA_LINK 2; link 2 is down. Built from the captured lo reply, changing fields.
  const base = parseMessages(replies(c01)[1].bytes)[0];
  const mk = (index: number, name: string, flags: number, link?: number): Buffer => {
    const hdr = Buffer.from(base.payload.subarray(0, 16));
    hdr.writeUInt16LE(1, 2); // ARPHRD_ETHER
    hdr.writeInt32LE(index, 4);
    hdr.writeUInt32LE(flags, 8);
    const nameAttr = Buffer.alloc(4 + 16);
    const nm = Buffer.from(name + '\0');
    nameAttr.writeUInt16LE(4 + nm.length, 0);
    nameAttr.writeUInt16LE(3, 2);
    nm.copy(nameAttr, 4);
    const parts = [hdr, nameAttr.subarray(0, (4 + nm.length + 3) & ~3)];
    if (link !== undefined) {
      const a = Buffer.alloc(8);
      a.writeUInt16LE(8, 0);
      a.writeUInt16LE(5, 2);
      a.writeUInt32LE(link, 4);
      parts.push(a);
    }
    return encodeMessage({ type: RTM_NEWLINK, flags: 0, seq: 1, payload: parts });
  };
  const tr = new FakeTransport([
    [mk(3, 'sp-v', 0x1003, 2), ackFor()],
    [mk(2, 'sp-v2', 0x1002, 3), ackFor()],
  ]);
  const conn = new NetlinkConnection(tr, NETLINK_ROUTE);
  const l = await getLinkByName(conn, 'sp-v');
  t.is(l.link, 'sp-v2');
  t.deepEqual(l.flags, ['NO-CARRIER', 'BROADCAST', 'MULTICAST', 'UP', 'M-DOWN']);
  t.is(tr.sent.length, 2);
  t.true(formatLink(l).startsWith('3: sp-v@sp-v2: <NO-CARRIER,BROADCAST,MULTICAST,UP,M-DOWN> '));
});

test('device names are checked before anything is sent', async (t) => {
  const tr = new FakeTransport([]);
  const conn = new NetlinkConnection(tr, NETLINK_ROUTE);
  for (const bad of ['', 'a/b', 'eth0:1', 'a b', '.', '..', 'x'.repeat(128)]) {
    await t.throwsAsync(getLinkByName(conn, bad), { instanceOf: UsageError });
    await t.throwsAsync(resolveIfindex(conn, bad), { instanceOf: UsageError });
  }
  for (const bad of [0, -1, 1.5, NaN, 2 ** 31]) await t.throwsAsync(getLinkByIndex(conn, bad), { instanceOf: UsageError });
  t.is(tr.sent.length, 0);
  t.notThrows(() => validateDeviceName('x'.repeat(15)));
});

test('a long name (16-127 bytes) is looked up as IFLA_ALT_IFNAME', (t) => {
  const r = getLinkRequest('x'.repeat(20));
  const m = parseMessages(encodeMessage({ type: r.type, flags: 1, payload: r.payload }))[0];
  const d = decodeLink(m);
  t.is(d.attrs.str(53), 'x'.repeat(20));
  t.is(d.ifname, undefined);
  t.is(getLinkRequest('x'.repeat(15)).payload.length, 3);
});

test('body decoders are registered for RTM_NEWLINK/DELLINK/GETLINK/SETLINK; a request shows what it carries', (t) => {
  for (const ty of [RTM_NEWLINK, RTM_DELLINK, RTM_GETLINK, RTM_SETLINK]) t.truthy(bodyDecoder(NETLINK_ROUTE, ty));
  const dec = bodyDecoder(NETLINK_ROUTE, RTM_GETLINK)!;
  const reqs: NetlinkMessage[] = requests(c01)
    .slice(1)
    .map((d) => parseMessages(d.bytes)[0]);
  t.deepEqual(dec(reqs[0]), { ifindex: 0, ifname: 'lo', ext_mask: 9 });
  t.deepEqual(dec(reqs[1]), { ifindex: 0, ifname: 'lo', family: 'link', ext_mask: 1 });
  const reply = parseMessages(replies(c01)[1].bytes)[0];
  t.deepEqual(bodyDecoder(NETLINK_ROUTE, RTM_NEWLINK)!(reply), { ...parseIpLinkText(c01.printed) });
});
