/**
 * ifb and veth links against the reference captures (fixtures/captures):
 * our create and delete requests are iproute2's (40 `ip link add ifb9 type
 * ifb`, 41 `ip link add v0 type veth peer name v1`, 52 `ip link del ifb9`),
 * byte for byte but seq and port id; the link dump of 49 (`ip -d -j link
 * show`) decodes to what ip printed, link kinds included.
 */
import test from 'ava';
import fc from 'fast-check';
import { loadCapture, requests, replies } from '../helpers/captures.js';
import { parseMessages, NLM_F_REQUEST, NLM_F_ACK } from '../../src/netlink/message.js';
import { NetlinkDecodeError, UsageError } from '../../src/netlink/errors.js';
import { NetlinkConnection, FakeTransport } from '../../src/netlink/connection.js';
import { decodeLink, toLinkInfo } from '../../src/netlink/route/link.js';
import { untyped } from '../helpers/untyped.js';
import {
  newLinkRequest,
  deleteLinkRequest,
  setLinkUpRequest,
  setLinkNetnsRequest,
  linkDetails,
  linkKind,
  createLink,
  deleteLink,
  LinkKindUnavailableError,
} from '../../src/netlink/route/linkinfo.js';

const RTM_NEWLINK = 16;
const RTM_DELLINK = 17;

/** The captured request of this type that carries attributes or an index (not ip's empty probe), seq and pid zeroed. */
function captured(name: string, type: number): Buffer {
  const d = requests(loadCapture(name))
    .map((x) => x.bytes)
    .filter((b) => (parseMessages(b)[0].type === type && b.length > 32) || (parseMessages(b)[0].type === type && b.readInt32LE(20) !== 0));
  const b = Buffer.from(d[d.length - 1]);
  b.fill(0, 8, 16);
  return b;
}

/** Our request as one datagram: header (NLM_F_REQUEST|NLM_F_ACK added as the connection does) + payload. */
function datagram(r: { type: number; flags: number; payload: Buffer[] }): Buffer {
  const body = Buffer.concat(r.payload);
  const h = Buffer.alloc(16);
  h.writeUInt32LE(16 + body.length, 0);
  h.writeUInt16LE(r.type, 4);
  h.writeUInt16LE(r.flags | NLM_F_REQUEST | NLM_F_ACK, 6);
  return Buffer.concat([h, body]);
}

test('40: ip link add ifb9 type ifb', (t) => {
  t.is(loadCapture('40_ifb_add').command, 'ip link add ifb9 type ifb');
  t.deepEqual(datagram(newLinkRequest({ name: 'ifb9', kind: 'ifb' })), captured('40_ifb_add', RTM_NEWLINK));
});

test('41: ip link add v0 type veth peer name v1', (t) => {
  t.is(loadCapture('41_veth_add').command, 'ip link add v0 type veth peer name v1');
  t.deepEqual(datagram(newLinkRequest({ name: 'v0', kind: 'veth', peer: { name: 'v1' } })), captured('41_veth_add', RTM_NEWLINK));
});

test('52: ip link del ifb9 (by the index ip looked up: 3)', (t) => {
  t.is(loadCapture('52_ifb_del').command, 'ip link del ifb9');
  t.deepEqual(datagram(deleteLinkRequest(3)), captured('52_ifb_del', RTM_DELLINK));
});

test('the same requests go out through a connection (createLink, deleteLink), answered with the captured acks', async (t) => {
  for (const [name, type, op] of [
    ['40_ifb_add', RTM_NEWLINK, (c: NetlinkConnection) => createLink(c, { name: 'ifb9', kind: 'ifb' })],
    ['41_veth_add', RTM_NEWLINK, (c: NetlinkConnection) => createLink(c, { name: 'v0', kind: 'veth', peer: { name: 'v1' } })],
    ['52_ifb_del', RTM_DELLINK, (c: NetlinkConnection) => deleteLink(c, 3)],
  ] as const) {
    const rs = replies(loadCapture(name));
    const fake = new FakeTransport([[rs[rs.length - 1].bytes]]);
    const conn = new NetlinkConnection(fake, 0, { timeoutMs: 1000 });
    await op(conn).catch(() => undefined); // the captured ack carries ip's seq; the bytes sent are what we check
    conn.close();
    const sent = Buffer.from(fake.sent[0]);
    sent.fill(0, 8, 16);
    t.deepEqual(sent, captured(name, type), name);
  }
});

test('49: ip -d -j link show — every link decodes to what ip printed, link kinds (ifb, veth, nlmon) included', (t) => {
  const c = loadCapture('49_link_detail');
  const theirs = JSON.parse(c.printed) as Array<Record<string, unknown>>;
  const raws = replies(c)
    .flatMap((d) => parseMessages(d.bytes))
    .filter((m) => m.type === RTM_NEWLINK)
    .map(decodeLink);
  const byIndex = new Map(raws.map((r) => [r.index, r]));
  const ours = raws.map((r) => ({ ...toLinkInfo(r, { name: (i) => byIndex.get(i)?.ifname, flags: (i) => byIndex.get(i)?.flags }), ...linkDetails(r) }));
  t.deepEqual(ours, theirs);
  t.deepEqual(
    raws.map(linkKind),
    theirs.map((l) => (l.linkinfo as { info_kind?: string } | undefined)?.info_kind),
  );
});

test('up/down and netns requests: ifi_change IFF_UP only; IFLA_NET_NS_FD / _PID', (t) => {
  const up = Buffer.concat(setLinkUpRequest(7, true).payload);
  t.is(up.readInt32LE(4), 7);
  t.is(up.readUInt32LE(8), 1);
  t.is(up.readUInt32LE(12), 1);
  const down = Buffer.concat(setLinkUpRequest(7, false).payload);
  t.is(down.readUInt32LE(8), 0);
  t.is(down.readUInt32LE(12), 1);
  const ns = Buffer.concat(setLinkNetnsRequest('v1', { netnsFd: 9 }).payload);
  t.is(ns.readUInt16LE(ns.length - 6), 28);
  t.is(ns.readUInt32LE(ns.length - 4), 9);
  const peer = Buffer.concat(newLinkRequest({ name: 'a', kind: 'veth', peer: { name: 'b', netnsPid: 1 } }).payload);
  t.is(peer.readUInt16LE(peer.length - 6), 19);
});

test('bad input is a UsageError, nothing built', (t) => {
  const bad: unknown[] = [
    { name: 'x', kind: 'dummy' },
    { name: '', kind: 'ifb' },
    { name: 'a-name-that-is-too-long', kind: 'ifb' },
    { name: 'v', kind: 'veth' },
    { name: 'i', kind: 'ifb', peer: { name: 'p' } },
    { name: 'v', kind: 'veth', peer: { name: 'p', netnsFd: 3, netnsPid: 4 } },
    { name: 'v', kind: 'veth', peer: { name: 'p', nsfd: 3 } },
    { name: 'i', kind: 'ifb', up: true },
    'ifb0',
  ];
  for (const b of bad) t.throws(() => untyped(newLinkRequest)(b), { instanceOf: UsageError }, JSON.stringify(b));
  t.throws(() => deleteLinkRequest(0), { instanceOf: UsageError });
  t.throws(() => setLinkNetnsRequest('v1', {}), { instanceOf: UsageError });
});

test('a kernel without the kind (EOPNOTSUPP) is a LinkKindUnavailableError naming the module, category missing-module', async (t) => {
  const err = Buffer.alloc(36);
  err.writeUInt32LE(36, 0);
  err.writeUInt16LE(2, 4);
  err.writeUInt32LE(1, 8);
  err.writeInt32LE(-95, 16);
  const fake = new FakeTransport([[err]]);
  const conn = new NetlinkConnection(fake, 0, { timeoutMs: 1000 });
  const e = await t.throwsAsync(
    createLink(conn, { name: 'ifb7', kind: 'ifb' }).catch((x) => {
      throw x;
    }),
  );
  conn.close();
  // the fake replies with seq 1: the connection's first request has seq 1 only if it numbers from 1; accept a timeout otherwise
  if (e instanceof LinkKindUnavailableError) {
    t.is(e.module, 'ifb');
    t.is(e.category, 'missing-module');
    t.regex(e.message, /link kind 'ifb' is not available in this kernel \(module ifb\)/);
  } else t.fail(`expected LinkKindUnavailableError, got ${String(e)}`);
});

test('property: mutated captured link messages decode to details or throw only NetlinkDecodeError', (t) => {
  const corpus = ['40_ifb_add', '41_veth_add', '49_link_detail', '52_ifb_del']
    .flatMap((n) => loadCapture(n).datagrams.map((d) => d.bytes))
    .flatMap((b) => {
      try {
        return parseMessages(b)
          .filter((m) => m.type >= 16 && m.type <= 19)
          .map((m) => b.subarray(m.offset, m.offset + 16 + m.payload.length));
      } catch {
        return [];
      }
    });
  t.true(corpus.length > 5);
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: corpus.length - 1 }),
      fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 8 }),
      fc.nat(),
      (i, flips, cut) => {
        const b = Buffer.from(corpus[i]);
        for (const [at, v] of flips) b[16 + (at % Math.max(1, b.length - 16))] = v;
        const m = b.subarray(0, Math.max(16, b.length - (cut % 8)));
        try {
          for (const msg of parseMessages(m)) {
            const r = decodeLink(msg);
            linkDetails(r);
            linkKind(r);
          }
        } catch (e) {
          if (!(e instanceof NetlinkDecodeError)) throw e;
        }
      },
    ),
    { numRuns: 2000 },
  );
  t.pass();
});
