/**
 * Unit: the socket layer's pieces that need no kernel: SocketError
 * categories, protocol labels, netns names, the warning hooks and isGet by
 * the protocol registry (over the FakeTransport of synplug/netlink/testing),
 * ENOBUFS from a transport failing what is in flight, and the nfnetlink
 * batch answers of testing.ts against the kernel's rules.
 */
import test from 'ava';
import { NetlinkConnection, setDefaultWarningHandler, type NetlinkWarning } from '../../src/netlink/connection.js';
import { FakeTransport, answerNfnetlinkBatch, nfnetlinkAck } from '../../src/netlink/testing.js';
import { SocketError, socketErrorCategory, LibcError } from '../../src/netlink/libc.js';
import { protocolLabel } from '../../src/netlink/transport.js';
import { netnsPath, setDefaultNetns, defaultNetns, NETNS_ENV } from '../../src/netlink/netns.js';
import { UsageError, SynplugError, NetlinkError } from '../../src/netlink/errors.js';
import { str } from '../../src/netlink/attributes.js';
import {
  encodeMessage,
  parseMessages,
  parseErrorReply,
  NLMSG_ERROR,
  NLMSG_DONE,
  NLM_F_ACK,
  NLM_F_CAPPED,
  NLM_F_ACK_TLVS,
  NLM_F_MULTI,
  NLM_F_REPLACE,
  NLM_F_EXCL,
  NLM_F_DUMP,
  NLMSGERR_ATTR_MSG,
  NLMSGERR_ATTR_OFFS,
  NETLINK_ROUTE,
  NETLINK_NETFILTER,
} from '../../src/netlink/message.js';
import * as root from '../../src/index.js';
import * as netlinkIndex from '../../src/netlink/index.js';
import '../../src/netlink/route/index.js';
import '../../src/iptables/index.js';

/** An ack (errno 0) for `seq` carrying an extended-ack warning, as netlink_ack sends it with NETLINK_EXT_ACK + CAP_ACK. */
function warningAck(seq: number, text: string, offset?: number): Buffer {
  const e = Buffer.alloc(4);
  const tlvs = [str(NLMSGERR_ATTR_MSG, text)];
  if (offset !== undefined) {
    const o = Buffer.alloc(8);
    o.writeUInt16LE(8, 0);
    o.writeUInt16LE(NLMSGERR_ATTR_OFFS, 2);
    o.writeUInt32LE(offset, 4);
    tlvs.push(o);
  }
  return encodeMessage({ type: NLMSG_ERROR, flags: NLM_F_CAPPED | NLM_F_ACK_TLVS, seq, payload: [e, Buffer.alloc(16), ...tlvs] });
}
const seqOf = (d: Buffer) => parseMessages(d)[0].seq;

test('socketErrorCategory: EPERM/EACCES permission, EPROTONOSUPPORT/EAFNOSUPPORT missing-module, others kernel', (t) => {
  t.is(socketErrorCategory('EPERM'), 'permission');
  t.is(socketErrorCategory('EACCES'), 'permission');
  t.is(socketErrorCategory('EPROTONOSUPPORT'), 'missing-module');
  t.is(socketErrorCategory('EAFNOSUPPORT'), 'missing-module');
  t.is(socketErrorCategory('ENOBUFS'), 'kernel');
  t.is(socketErrorCategory('EMFILE'), 'kernel');
  const e = new SocketError('socket', 1, 'cannot open', 4);
  t.true(e instanceof SynplugError);
  t.like(e, { name: 'SocketError', errno: 1, code: 'EPERM', syscall: 'socket', protocol: 4, category: 'permission' });
  t.like(new SocketError('socket', 97, 'x'), { code: 'EAFNOSUPPORT', category: 'missing-module' });
  t.like(new LibcError('setns', 'no setns'), { name: 'LibcError', symbol: 'setns', category: 'failure' });
});

test('protocolLabel: registered names, linux/netlink.h names, numbers', (t) => {
  t.is(protocolLabel(0), 'NETLINK_ROUTE (0)');
  t.is(protocolLabel(12), 'NETLINK_NETFILTER (12)');
  t.is(protocolLabel(16), 'NETLINK_GENERIC (16)');
  t.is(protocolLabel(31), 'netlink protocol 31');
});

test('netnsPath: names under /run/netns, paths as given, bad names refused', (t) => {
  t.is(netnsPath('blue'), '/run/netns/blue');
  t.is(netnsPath('/proc/1/ns/net'), '/proc/1/ns/net');
  t.is(netnsPath('./x'), './x');
  for (const bad of ['', '.', '..']) t.throws(() => netnsPath(bad), { instanceOf: UsageError });
});

test('setDefaultNetns / defaultNetns: explicit, else SYNPLUG_NETNS, else none', (t) => {
  const saved = process.env[NETNS_ENV];
  try {
    delete process.env[NETNS_ENV];
    t.is(defaultNetns(), undefined);
    process.env[NETNS_ENV] = '';
    t.is(defaultNetns(), undefined, 'an empty variable is no namespace');
    process.env[NETNS_ENV] = 'from-env';
    t.is(defaultNetns(), 'from-env');
    t.throws(
      () => setDefaultNetns('/nonexistent/explicit'),
      { instanceOf: UsageError, message: /does not exist/ },
      'opened at once, to be used through that one descriptor',
    );
    t.is(defaultNetns(), 'from-env');
    setDefaultNetns('/proc/self/ns/net');
    t.is(defaultNetns(), '/proc/self/ns/net');
    setDefaultNetns(undefined);
    t.is(defaultNetns(), 'from-env');
  } finally {
    setDefaultNetns(undefined);
    if (saved === undefined) delete process.env[NETNS_ENV];
    else process.env[NETNS_ENV] = saved;
  }
});

test('a warning on a successful ack: the request resolves; onWarning, conn.warnings, the exchange result', async (t) => {
  const seen: NetlinkWarning[] = [];
  const tr = new FakeTransport(
    [(s) => [warningAck(seqOf(s), 'quantum of class 10001 is big. Consider r2q change.', 36)], (s) => [warningAck(seqOf(s), 'second')]],
    { keepSeq: true },
  );
  const conn = new NetlinkConnection(tr, NETLINK_ROUTE, { onWarning: (w) => seen.push(w) });
  t.deepEqual(await conn.request({ type: 40, payload: Buffer.alloc(20) }), []);
  t.deepEqual(seen, [{ message: 'quantum of class 10001 is big. Consider r2q change.', requestType: 'RTM_NEWTCLASS', offset: 36 }]);
  const [r] = await conn.exchange([{ type: 40, flags: NLM_F_ACK, payload: Buffer.alloc(20) }]);
  t.is(r.warning, 'second');
  t.deepEqual(conn.warnings, ['quantum of class 10001 is big. Consider r2q change.', 'second']);
});

test('the process-wide warning handler serves connections without their own; its own wins', async (t) => {
  const global: NetlinkWarning[] = [];
  const own: NetlinkWarning[] = [];
  setDefaultWarningHandler((w) => global.push(w));
  try {
    const a = new NetlinkConnection(new FakeTransport([(s) => [warningAck(seqOf(s), 'A')]], { keepSeq: true }), NETLINK_ROUTE);
    const b = new NetlinkConnection(new FakeTransport([(s) => [warningAck(seqOf(s), 'B')]], { keepSeq: true }), NETLINK_ROUTE, {
      onWarning: (w) => own.push(w),
    });
    await a.request({ type: 36, payload: Buffer.alloc(20) });
    await b.request({ type: 36, payload: Buffer.alloc(20) });
  } finally {
    setDefaultWarningHandler(undefined);
  }
  t.deepEqual(
    global.map((w) => [w.message, w.requestType]),
    [['A', 'RTM_NEWQDISC']],
  );
  t.deepEqual(
    own.map((w) => w.message),
    ['B'],
  );
});

test('isGet from the protocol registry: NLM_F_DUMP bits on a NEW request are NLM_F_REPLACE|NLM_F_EXCL (no dump), on a GET a dump; nfnetlink too', async (t) => {
  // rtnetlink RTM_NEWQDISC with REPLACE|EXCL (= the NLM_F_DUMP bits) and ACK: settled by its ack, not waiting for NLMSG_DONE
  const rt = new NetlinkConnection(new FakeTransport([(s) => [nfnetlinkAck(parseMessages(s)[0], 0)]], { keepSeq: true }), NETLINK_ROUTE, { timeoutMs: 200 });
  const [r] = await rt.exchange([{ type: 36, flags: NLM_F_ACK | NLM_F_REPLACE | NLM_F_EXCL, payload: Buffer.alloc(20) }]);
  t.is(r.error, undefined);
  // nfnetlink NFT_MSG_NEWTABLE (0x0a00) with the same bits: an ack settles it too (the old rule treated every nfnetlink type as a GET)
  const nf = new NetlinkConnection(new FakeTransport([(s) => [nfnetlinkAck(parseMessages(s)[0], 0)]], { keepSeq: true }), NETLINK_NETFILTER, {
    timeoutMs: 200,
  });
  const [n] = await nf.exchange([{ type: 0x0a00, flags: NLM_F_ACK | NLM_F_REPLACE | NLM_F_EXCL, payload: Buffer.alloc(4) }]);
  t.is(n.error, undefined);
  // NFT_MSG_GETTABLE (0x0a01) with NLM_F_DUMP waits for NLMSG_DONE: its ack alone does not settle it
  const done = (seq: number) => {
    const p = Buffer.alloc(4);
    return encodeMessage({ type: NLMSG_DONE, flags: NLM_F_MULTI, seq, payload: p });
  };
  const dn = new NetlinkConnection(new FakeTransport([(s) => [done(seqOf(s))]], { keepSeq: true }), NETLINK_NETFILTER, { timeoutMs: 200 });
  t.deepEqual(await dn.dumpAll({ type: 0x0a01, payload: Buffer.alloc(4) }), []);
  const [g] = await new NetlinkConnection(new FakeTransport([(s) => [done(seqOf(s))]], { keepSeq: true }), NETLINK_NETFILTER).exchange([
    { type: 0x0a01, flags: NLM_F_DUMP, payload: Buffer.alloc(4) },
  ]);
  t.deepEqual(g.replies, []);
});

test('a transport error (ENOBUFS) rejects what is in flight with the SocketError itself', async (t) => {
  const tr = new FakeTransport([[]]);
  const conn = new NetlinkConnection(tr, NETLINK_ROUTE, { timeoutMs: 1000 });
  const p = conn.request({ type: 18, payload: Buffer.alloc(16) });
  const err = new SocketError('recv', 105, "the NETLINK_ROUTE (0) socket's receive buffer overflowed (ENOBUFS)", 0);
  tr.fail(err);
  const e = await t.throwsAsync(p);
  t.is(e, err);
  t.is((e as SocketError).code, 'ENOBUFS');
});

test('a Node-style errno error from a transport becomes a SocketError with its category', async (t) => {
  const tr = new FakeTransport([[]]);
  const conn = new NetlinkConnection(tr, NETLINK_SOCK_DIAG_FOR_TEST, { timeoutMs: 1000 });
  const p = conn.request({ type: 20, payload: Buffer.alloc(56) });
  tr.fail(Object.assign(new Error('EACCES'), { errno: -13, code: 'EACCES', syscall: 'send' }));
  const e = await t.throwsAsync(p, { instanceOf: SocketError });
  t.like(e, { code: 'EACCES', errno: 13, category: 'permission', syscall: 'send' });
});
const NETLINK_SOCK_DIAG_FOR_TEST = 4;

test('closed connection: category kernel, no exit code', async (t) => {
  const conn = new NetlinkConnection(new FakeTransport(), NETLINK_ROUTE);
  conn.close();
  const e = await t.throwsAsync(conn.request({ type: 18 }), { instanceOf: SynplugError });
  t.is(e!.category, 'kernel');
  t.false('exitCode' in e!);
});

test('answerNfnetlinkBatch: errors for refused messages, acks for NLM_F_ACK ones, in order; acks capped, errors echo the request', (t) => {
  const begin = encodeMessage({ type: 0x10, flags: 1, seq: 10, payload: Buffer.alloc(4) });
  const m1 = encodeMessage({ type: 0x0a00, flags: 1 | NLM_F_ACK, seq: 11, payload: Buffer.from('0200000074310000', 'hex') });
  const m2 = encodeMessage({ type: 0x0a03, flags: 1, seq: 12, payload: Buffer.alloc(8) });
  const m3 = encodeMessage({ type: 0x0a06, flags: 1 | NLM_F_ACK, seq: 13, payload: Buffer.alloc(12) });
  const end = encodeMessage({ type: 0x11, flags: 1, seq: 14, payload: Buffer.alloc(4) });
  const out = answerNfnetlinkBatch(Buffer.concat([begin, m1, m2, m3, end]), [0, 2, 0]);
  const replies = out.map((d) => parseMessages(d)[0]);
  t.deepEqual(
    replies.map((m) => m.seq),
    [11, 12, 13],
  );
  const errs = replies.map((m) => parseErrorReply(m));
  t.deepEqual(
    errs.map((e) => e.errno),
    [0, 2, 0],
  );
  t.deepEqual(
    errs.map((e) => e.capped),
    [true, false, true],
  );
  t.is(replies[1].payload.length, 4 + 16 + 8, 'the refused message is echoed whole');
  t.is(parseErrorReply(parseMessages(nfnetlinkAck(parseMessages(m2)[0], 2, { capped: true }))[0]).capped, true);
});

test('exports: FakeTransport is not in the package root nor synplug/netlink; the socket layer is', (t) => {
  t.false('FakeTransport' in root);
  t.false('FakeTransport' in netlinkIndex);
  t.true('SocketTransport' in netlinkIndex && 'setDefaultNetns' in netlinkIndex && 'SocketError' in netlinkIndex && 'setDefaultWarningHandler' in netlinkIndex);
});

test('a transport that lends its datagrams (one buffer, overwritten after each callback): the replies kept are copies, intact', async (t) => {
  // like SocketTransport: every datagram is a view of one read buffer, scribbled over after the callback returns
  class Lending {
    readonly portId = 1;
    readonly lendsDatagrams = true;
    private readonly buf = Buffer.alloc(4096);
    private cb: (d: Buffer) => void = () => {};
    constructor(private readonly answer: (sent: Buffer) => Buffer[]) {}
    send(d: Buffer): void {
      for (const reply of this.answer(d)) {
        reply.copy(this.buf);
        this.cb(this.buf.subarray(0, reply.length));
        this.buf.fill(0xee);
      }
    }
    onDatagram(cb: (d: Buffer) => void): void {
      this.cb = cb;
    }
    onError(): void {}
    close(): void {}
  }
  const ifi = Buffer.alloc(16);
  ifi.writeInt32LE(7, 4);
  const link = (seq: number) => encodeMessage({ type: 16 /* RTM_NEWLINK */, flags: 0, seq, payload: [ifi, str(3 /* IFLA_IFNAME */, 'sp-lend0')] });
  const ack = (seq: number) => nfnetlinkAck({ type: 18, flags: 5, seq, pid: 0, payload: Buffer.alloc(16), offset: 0 }, 0);
  const conn = new NetlinkConnection(new Lending((s) => [link(seqOf(s)), ack(seqOf(s))]), NETLINK_ROUTE);
  const [reply] = await conn.request({ type: 18, payload: Buffer.alloc(16) });
  t.is(reply.type, 16);
  t.is(reply.payload.readInt32LE(4), 7);
  t.is(reply.payload.subarray(20, 28).toString(), 'sp-lend0');
  // a plain ack is read in place (no copy needed): the next request still settles
  const conn2 = new NetlinkConnection(new Lending((s) => [ack(seqOf(s))]), NETLINK_ROUTE);
  t.deepEqual(await conn2.request({ type: 36, payload: Buffer.alloc(20) }), []);
});

test('open: a protocol that is not an integer 0-31 is a usage error (MAX_LINKS), refused before any socket call', (t) => {
  for (const p of [-1, 1.5, 32, Number.NaN, 1e9]) {
    const e = t.throws(() => NetlinkConnection.open(p), { instanceOf: UsageError }, String(p));
    t.is(e!.category, 'usage');
    t.regex(e!.message, /is not a protocol number \(an integer 0-31/);
  }
});

test('withMessage: the kernel sentence, then synplug sentence starting with a capital', (t) => {
  const e = new NetlinkError({ errno: 22, requestType: 'RTM_NEWQDISC', extAckMessage: 'Specified parent ID is reserved for ingress and clsact Qdiscs.' });
  const w = e.withMessage("the kernel refused qdisc 'pfifo' under parent ingress");
  t.is(w.message, "Specified parent ID is reserved for ingress and clsact Qdiscs. The kernel refused qdisc 'pfifo' under parent ingress");
  t.is(w.explanation, "the kernel refused qdisc 'pfifo' under parent ingress");
  t.is(new NetlinkError({ errno: 22 }).withMessage('no kernel text').message, 'no kernel text');
});
