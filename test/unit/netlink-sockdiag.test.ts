import test from 'ava';
import fc from 'fast-check';
import { encodeMessage, parseMessages, NLMSG_DONE, NLM_F_MULTI, NLM_F_REQUEST, NLM_F_DUMP, NETLINK_SOCK_DIAG } from '../../src/netlink/message.js';
import { u8 } from '../../src/netlink/attributes.js';
import { NetlinkConnection, FakeTransport } from '../../src/netlink/connection.js';
import { NetlinkDecodeError, UsageError } from '../../src/netlink/errors.js';
import { bodyDecoder, messageTypeName } from '../../src/netlink/protocols.js';
import {
  decodeInetDiagMsg,
  inetDiagRequest,
  listTcpListeners,
  listenerAccepts,
  SOCK_DIAG_BY_FAMILY,
  INET_DIAG_SKV6ONLY,
  type TcpListener,
} from '../../src/netlink/sockdiag.js';

/**
 * An inet_diag_msg as the kernel lays it out (linux/inet_diag.h): family, state,
 * timer, retrans, sockid {sport be16, dport be16, src[16], dst[16], if u32, cookie[2] u32},
 * expires, rqueue, wqueue, uid, inode.
 */
function diagMsg(o: {
  family: number;
  state: number;
  sport: number;
  src: number[];
  inode: number;
  uid: number;
  cookie: bigint;
  rq?: number;
  wq?: number;
  attrs?: Buffer[];
}): Buffer {
  const b = Buffer.alloc(72);
  b[0] = o.family;
  b[1] = o.state;
  b.writeUInt16BE(o.sport, 4);
  Buffer.from(o.src).copy(b, 8);
  b.writeUInt32LE(Number(o.cookie & 0xffffffffn), 44);
  b.writeUInt32LE(Number(o.cookie >> 32n), 48);
  b.writeUInt32LE(o.rq ?? 0, 56);
  b.writeUInt32LE(o.wq ?? 0, 60);
  b.writeUInt32LE(o.uid, 64);
  b.writeUInt32LE(o.inode, 68);
  return encodeMessage({ type: SOCK_DIAG_BY_FAMILY, flags: NLM_F_MULTI, seq: 1, payload: [b, ...(o.attrs ?? [])] });
}
const done = encodeMessage({ type: NLMSG_DONE, flags: NLM_F_MULTI, seq: 1, payload: Buffer.alloc(4) });

test('inet_diag_req_v2: 56 bytes, family/protocol/states, cookie INET_DIAG_NOCOOKIE', (t) => {
  const r = inetDiagRequest(10, 6, 1 << 10);
  t.is(r.length, 56);
  t.is(r[0], 10);
  t.is(r[1], 6);
  t.is(r.readUInt32LE(4), 1024);
  t.is(r.readUInt32LE(48), 0xffffffff);
  t.is(r.readUInt32LE(52), 0xffffffff);
});

test('listTcpListeners: one LISTEN dump per family, decoded (ports big-endian, cookie u64)', async (t) => {
  const v4 = diagMsg({ family: 2, state: 10, sport: 8080, src: [127, 0, 0, 1], inode: 12345, uid: 1000, cookie: 0x100000002n, wq: 511 });
  const v6 = diagMsg({ family: 10, state: 10, sport: 443, src: Array(16).fill(0), inode: 777, uid: 0, cookie: 5n, attrs: [u8(INET_DIAG_SKV6ONLY, 1)] });
  const tr = new FakeTransport([
    [v4, done],
    [v6, done],
  ]);
  const conn = new NetlinkConnection(tr, NETLINK_SOCK_DIAG);
  const ls = await listTcpListeners(conn);
  t.deepEqual(ls, [
    { family: 'inet', address: '127.0.0.1', port: 8080, interface: 0, cookie: '4294967298', inode: 12345, uid: 1000, recvQ: 0, sendQ: 511 },
    { family: 'inet6', address: '::', port: 443, interface: 0, cookie: '5', inode: 777, uid: 0, recvQ: 0, sendQ: 0, v6only: true },
  ]);
  const sent = tr.sent.map((d) => parseMessages(d)[0]);
  t.deepEqual(
    sent.map((m) => m.payload[0]),
    [2, 10],
  );
  for (const m of sent) {
    t.is(m.type, SOCK_DIAG_BY_FAMILY);
    t.is(m.flags, NLM_F_REQUEST | NLM_F_DUMP);
    t.is(m.payload.readUInt32LE(4), 1 << 10);
  }
  const only = await listTcpListeners(
    new NetlinkConnection(
      new FakeTransport([
        [v4, done],
        [v6, done],
      ]),
      NETLINK_SOCK_DIAG,
    ),
    { port: 443 },
  );
  t.deepEqual(
    only.map((l) => l.inode),
    [777],
  );
  await t.throwsAsync(listTcpListeners(conn, { port: 70000 }), { instanceOf: UsageError });
});

test('registered: type name and body decoder for requests and replies', (t) => {
  t.is(messageTypeName(NETLINK_SOCK_DIAG, SOCK_DIAG_BY_FAMILY), 'SOCK_DIAG_BY_FAMILY');
  const dec = bodyDecoder(NETLINK_SOCK_DIAG, SOCK_DIAG_BY_FAMILY)!;
  const req = parseMessages(encodeMessage({ type: SOCK_DIAG_BY_FAMILY, flags: NLM_F_REQUEST | NLM_F_DUMP, payload: inetDiagRequest(2, 6, 1 << 10) }))[0];
  t.deepEqual(dec(req), { family: 'inet', protocol: 'tcp', ext: 0, states: ['LISTEN'] });
  const rep = parseMessages(diagMsg({ family: 2, state: 1, sport: 1, src: [169, 254, 0, 1], inode: 1, uid: 2, cookie: 3n }))[0];
  t.like(dec(rep), { state: 'ESTABLISHED', address: '169.254.0.1' });
});

test('short or foreign-family messages -> NetlinkDecodeError with the offset of the payload', (t) => {
  const short = parseMessages(encodeMessage({ type: SOCK_DIAG_BY_FAMILY, flags: 2, payload: Buffer.alloc(40) }))[0];
  t.is(t.throws(() => decodeInetDiagMsg(short), { instanceOf: NetlinkDecodeError })!.offset, 16);
  const unix = Buffer.from(diagMsg({ family: 1, state: 10, sport: 0, src: [], inode: 1, uid: 0, cookie: 0n }));
  t.throws(() => decodeInetDiagMsg(parseMessages(unix)[0]), { instanceOf: NetlinkDecodeError });
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 120 }), fc.boolean(), (bytes, req) => {
      const m = parseMessages(encodeMessage({ type: SOCK_DIAG_BY_FAMILY, flags: req ? NLM_F_REQUEST : 0, payload: Buffer.from(bytes) }))[0];
      try {
        bodyDecoder(NETLINK_SOCK_DIAG, SOCK_DIAG_BY_FAMILY)!(m);
      } catch (e) {
        if (!(e instanceof NetlinkDecodeError)) throw e;
      }
    }),
    { numRuns: 3000 },
  );
});

test('listenerAccepts: same address, family wildcard, dual-stack :: unless v6only, IPv4-mapped text', (t) => {
  const l = (family: 'inet' | 'inet6', address: string, v6only?: boolean): TcpListener => ({
    family,
    address,
    port: 80,
    interface: 0,
    cookie: '1',
    inode: 1,
    uid: 0,
    recvQ: 0,
    sendQ: 0,
    ...(v6only === undefined ? {} : { v6only }),
  });
  t.true(listenerAccepts(l('inet', '0.0.0.0'), '169.254.255.254'));
  t.true(listenerAccepts(l('inet', '169.254.255.254'), '169.254.255.254'));
  t.false(listenerAccepts(l('inet', '127.0.0.1'), '169.254.255.254'));
  t.false(listenerAccepts(l('inet', '0.0.0.0'), '::1'));
  t.true(listenerAccepts(l('inet6', '::', false), '169.254.255.254'));
  t.false(listenerAccepts(l('inet6', '::', true), '169.254.255.254'));
  t.true(listenerAccepts(l('inet6', '::', true), '::1'));
  t.true(listenerAccepts(l('inet6', '::ffff:169.254.255.254', false), '169.254.255.254'));
  t.true(listenerAccepts(l('inet', '169.254.255.254'), '::ffff:169.254.255.254'));
  t.false(listenerAccepts(l('inet6', '::1', false), '127.0.0.1'));
  t.throws(() => listenerAccepts(l('inet', '0.0.0.0'), 'nope'), { instanceOf: UsageError });
});
