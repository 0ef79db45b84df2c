import test from 'ava';
import { loadCapture, replies, requests } from '../helpers/captures.js';
import {
  parseMessages,
  encodeMessage,
  NLMSG_ERROR,
  NLMSG_DONE,
  NLM_F_REQUEST,
  NLM_F_ACK,
  NLM_F_DUMP,
  NLM_F_MULTI,
  NLM_F_CAPPED,
  NLM_F_ACK_TLVS,
  NLM_F_DUMP_INTR,
  NLM_F_CREATE,
  NLM_F_EXCL,
  NLMSGERR_ATTR_MSG,
  NETLINK_ROUTE,
  NETLINK_NETFILTER,
} from '../../src/netlink/message.js';
import { str } from '../../src/netlink/attributes.js';
import { NetlinkConnection, NetlinkTimeoutError, type Transport } from '../../src/netlink/connection.js';
import { FakeTransport } from '../../src/netlink/testing.js';
import { NetlinkError, NetlinkDecodeError, DumpInterruptedError, SynplugError } from '../../src/netlink/errors.js';
import '../../src/netlink/route/index.js';

/** An NLMSG_ERROR answering `seq` (errno 0 = ack), with an optional extended-ack text. */
function errFor(seq: number, errno = 0, text?: string): Buffer {
  const p = Buffer.alloc(4);
  p.writeInt32LE(-errno);
  const flags = NLM_F_CAPPED | (text ? NLM_F_ACK_TLVS : 0);
  return encodeMessage({ type: NLMSG_ERROR, flags, seq, payload: [p, Buffer.alloc(16), ...(text ? [str(NLMSGERR_ATTR_MSG, text)] : [])] });
}
function doneFor(seq: number, errno = 0, flags = NLM_F_MULTI): Buffer {
  const p = Buffer.alloc(4);
  p.writeInt32LE(-errno);
  return encodeMessage({ type: NLMSG_DONE, flags, seq, payload: p });
}
const seqOf = (d: Buffer, i = 0): number => parseMessages(d)[i].seq;
/** A copy of datagram `d` whose messages carry `seq` (and NLM_F_DUMP_INTR when `intr`). */
function answering(d: Buffer, seq: number, intr = false): Buffer {
  const out = Buffer.from(d);
  for (const m of parseMessages(out)) {
    if (intr) out.writeUInt16LE(m.flags | NLM_F_DUMP_INTR, m.offset + 6);
    out.writeUInt32LE(seq, m.offset + 8);
  }
  return out;
}

test('request/ack: the captured RTM_NEWADDR and its captured ack (seq rewritten)', async (t) => {
  const c = loadCapture('02_addr_add');
  const tr = new FakeTransport([[replies(c)[1].bytes]]);
  const conn = new NetlinkConnection(tr, NETLINK_ROUTE);
  const captured = parseMessages(requests(c)[1].bytes)[0];
  const out = await conn.request({ type: captured.type, flags: NLM_F_CREATE | NLM_F_EXCL, payload: captured.payload });
  t.deepEqual(out, []);
  const [sent] = parseMessages(tr.sent[0]);
  t.is(sent.flags, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL);
  t.is(sent.flags, captured.flags);
  t.deepEqual(sent.payload, captured.payload);
  t.not(sent.seq, 0);
});

test('request refused: the captured extended ack of step 04 becomes a NetlinkError naming RTM_NEWQDISC', async (t) => {
  const c = loadCapture('04_prio_add_again');
  const conn = new NetlinkConnection(new FakeTransport([[replies(c).at(-1)!.bytes]]), NETLINK_ROUTE);
  const m = parseMessages(requests(c).at(-1)!.bytes)[0];
  const err = await t.throwsAsync(conn.request({ type: m.type, flags: m.flags & ~NLM_F_REQUEST, payload: m.payload }), { instanceOf: NetlinkError });
  t.like(err, { code: 'EEXIST', errno: 17, requestType: 'RTM_NEWQDISC', extAckMessage: 'Exclusivity flag on, cannot modify' });
});

test('request: replies before the ack are returned (GETLINK answered with RTM_NEWLINK then an ack)', async (t) => {
  const c = loadCapture('01_link_show');
  const conn = new NetlinkConnection(new FakeTransport([(sent) => [replies(c)[1].bytes, errFor(seqOf(sent))]], { keepSeq: false }), NETLINK_ROUTE);
  const out = await conn.request({ type: 18, payload: parseMessages(requests(c)[1].bytes)[0].payload });
  t.is(out.length, 1);
  t.is(out[0].type, 16);
});

test('dump: the captured link dump of step 03 (multipart datagram, then NLMSG_DONE)', async (t) => {
  const c = loadCapture('03_prio_add');
  const tr = new FakeTransport([[replies(c)[0].bytes, replies(c)[1].bytes]]);
  const conn = new NetlinkConnection(tr, NETLINK_ROUTE);
  const req = parseMessages(requests(c)[0].bytes)[0];
  const msgs = await conn.dumpAll({ type: req.type, payload: req.payload });
  t.is(msgs.length, parseMessages(replies(c)[0].bytes).length);
  t.true(msgs.every((m) => m.type === 16));
  const [sent] = parseMessages(tr.sent[0]);
  t.is(sent.flags, NLM_F_REQUEST | NLM_F_DUMP);
  t.is(sent.flags & ~NLM_F_ACK, req.flags & ~NLM_F_ACK); // tc also asked for an ack
  // dumpEach hands over the same messages, and in place the same types and payloads
  const conn2 = new NetlinkConnection(new FakeTransport([[replies(c)[0].bytes, replies(c)[1].bytes]]), NETLINK_ROUTE);
  const seen: string[] = [];
  await conn2.dumpEach({ type: req.type, payload: req.payload }, (m) => seen.push(`${m.type}:${m.payload.toString('hex')}`));
  t.deepEqual(
    seen,
    msgs.map((m) => `${m.type}:${m.payload.toString('hex')}`),
  );
  const conn3 = new NetlinkConnection(new FakeTransport([[replies(c)[0].bytes, replies(c)[1].bytes]]), NETLINK_ROUTE);
  const inPlace: string[] = [];
  await conn3.dumpEach(
    { type: req.type, payload: req.payload },
    (type, buf, start, end, _base, attempt) => {
      t.is(attempt, 1);
      inPlace.push(`${type}:${buf.toString('hex', start, end)}`);
    },
    { inPlace: true },
  );
  t.deepEqual(inPlace, seen);
});

test('dump on nfnetlink: the captured NFT_MSG_GETTABLE dump of step 14', async (t) => {
  const c = loadCapture('14_nft_list');
  // request #1 (GETTABLE dump) is answered by datagrams 3 (NEWTABLE) and 4 (DONE)
  const conn = new NetlinkConnection(new FakeTransport([[c.datagrams[3].bytes, c.datagrams[4].bytes]]), NETLINK_NETFILTER);
  const req = parseMessages(c.datagrams[2].bytes)[0];
  const msgs = await conn.dumpAll({ type: req.type, payload: req.payload });
  t.is(msgs.length, 1);
  t.is(msgs[0].type, 0x0a00);
});

test('NLMSG_DONE carrying an errno rejects the dump with a NetlinkError', async (t) => {
  const conn = new NetlinkConnection(new FakeTransport([(s) => [doneFor(seqOf(s), 90)]], { keepSeq: true }), NETLINK_ROUTE);
  const err = await t.throwsAsync(conn.dumpAll({ type: 38, payload: Buffer.alloc(20) }), { instanceOf: NetlinkError });
  t.like(err, { errno: 90, code: 'EMSGSIZE', requestType: 'RTM_GETQDISC' });
});

test('several requests in flight: answers out of order reach the right callers', async (t) => {
  let first = 0;
  const tr = new FakeTransport(
    [
      (s) => {
        first = seqOf(s);
        return [];
      },
      (s) => [errFor(seqOf(s), 17), errFor(first, 0)],
    ],
    { keepSeq: true },
  );
  const conn = new NetlinkConnection(tr, NETLINK_ROUTE);
  const a = conn.request({ type: 36, payload: Buffer.alloc(20) });
  const b = conn.request({ type: 44, payload: Buffer.alloc(20) });
  const [ra, rb] = await Promise.allSettled([a, b]);
  t.is(ra.status, 'fulfilled');
  t.is(rb.status, 'rejected');
  t.like((rb as PromiseRejectedResult).reason, { code: 'EEXIST', requestType: 'RTM_NEWTFILTER' });
  t.not(seqOf(tr.sent[0]), seqOf(tr.sent[1]));
});

test('replies for unknown sequence numbers are ignored', async (t) => {
  const conn = new NetlinkConnection(new FakeTransport([(s) => [errFor(seqOf(s) + 1000, 1), errFor(seqOf(s))]], { keepSeq: true }), NETLINK_ROUTE);
  t.deepEqual(await conn.request({ type: 36 }), []);
});

test('timeout: no answer -> NetlinkTimeoutError naming the request; late answers are dropped', async (t) => {
  let seq = 0;
  const tr = new FakeTransport(
    [
      (s) => {
        seq = seqOf(s);
        return [];
      },
      (s) => [errFor(seq, 1), errFor(seqOf(s))],
    ],
    { keepSeq: true },
  );
  const conn = new NetlinkConnection(tr, NETLINK_ROUTE, { timeoutMs: 30 });
  const err = await t.throwsAsync(conn.request({ type: 36 }), { instanceOf: NetlinkTimeoutError });
  t.regex(err!.message, /^RTM_NEWQDISC: no answer from the kernel within 30 ms$/);
  t.is(err!.category, 'kernel');
  // the next request works even though a late error for the old seq arrives first
  t.deepEqual(await conn.request({ type: 36 }), []);
  const err2 = await t.throwsAsync(conn.request({ type: 36 }, { timeoutMs: 10 }), { instanceOf: NetlinkTimeoutError });
  t.regex(err2!.message, /10 ms/);
});

test('NLM_F_DUMP_INTR: the dump is retried, and only the consistent one is returned', async (t) => {
  const c = loadCapture('03_prio_add');
  const links = parseMessages(replies(c)[0].bytes);
  const tr = new FakeTransport(
    [(s) => [answering(replies(c)[0].bytes, seqOf(s), true), doneFor(seqOf(s), 0, NLM_F_MULTI | NLM_F_DUMP_INTR)], [replies(c)[0].bytes, replies(c)[1].bytes]],
    { keepSeq: false },
  );
  const conn = new NetlinkConnection(tr, NETLINK_ROUTE);
  const msgs = await conn.dumpAll({ type: 18, payload: Buffer.alloc(16) });
  t.is(tr.sent.length, 2);
  t.is(msgs.length, links.length);
  t.true(msgs.every((m) => (m.flags & NLM_F_DUMP_INTR) === 0));
});

test('NLM_F_DUMP_INTR every time: DumpInterruptedError after the bounded retries', async (t) => {
  const always = (s: Buffer): Buffer[] => [doneFor(seqOf(s), 0, NLM_F_MULTI | NLM_F_DUMP_INTR)];
  const tr = new FakeTransport(Array(10).fill(always), { keepSeq: true });
  const conn = new NetlinkConnection(tr, NETLINK_ROUTE, { dumpRetries: 3 });
  const err = await t.throwsAsync(conn.dumpAll({ type: 18, payload: Buffer.alloc(16) }), { instanceOf: DumpInterruptedError });
  t.is(tr.sent.length, 4);
  t.like(err, { requestType: 'RTM_GETLINK', attempts: 4, category: 'kernel' });
});

/** A transport whose replies the test delivers by hand. */
class ManualTransport implements Transport {
  readonly portId = 1;
  readonly sent: Buffer[] = [];
  private cb: (d: Buffer) => void = () => {};
  send(d: Buffer): void {
    this.sent.push(d);
  }
  onDatagram(cb: (d: Buffer) => void): void {
    this.cb = cb;
  }
  onError(): void {}
  close(): void {}
  deliver(d: Buffer): void {
    this.cb(d);
  }
}

test('dumps on one connection run one after the other (the kernel refuses a concurrent dump with EBUSY)', async (t) => {
  const tr = new ManualTransport();
  const conn = new NetlinkConnection(tr, NETLINK_ROUTE);
  const all = Promise.all([0, 1, 2].map(() => conn.dumpAll({ type: 18, payload: Buffer.alloc(16) })));
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setTimeout(r, 5));
    t.is(tr.sent.length, i + 1, 'the next dump is sent only when the previous one is done');
    tr.deliver(doneFor(seqOf(tr.sent[i])));
  }
  t.deepEqual(await all, [[], [], []]);
  // requests (not dumps) still go out at once
  const a = conn.request({ type: 36 });
  const b = conn.request({ type: 36 });
  await new Promise((r) => setTimeout(r, 5));
  t.is(tr.sent.length, 5);
  tr.deliver(Buffer.concat([errFor(seqOf(tr.sent[4])), errFor(seqOf(tr.sent[3]))]));
  t.deepEqual(await Promise.all([a, b]), [[], []]);
});

test('acks with a warning: request succeeds, the warning is kept', async (t) => {
  const conn = new NetlinkConnection(new FakeTransport([(s) => [errFor(seqOf(s), 0, 'this is deprecated')]], { keepSeq: true }), NETLINK_ROUTE);
  t.deepEqual(await conn.request({ type: 36 }), []);
  t.deepEqual(conn.warnings, ['this is deprecated']);
});

test('exchange: several messages in one datagram, acks per message, an error without NLM_F_ACK ends it', async (t) => {
  const tr = new FakeTransport([(s) => [errFor(seqOf(s, 1)), errFor(seqOf(s, 2), 2, 'No such table')], (s) => [errFor(seqOf(s, 0), 1)]], { keepSeq: true });
  const conn = new NetlinkConnection(tr, NETLINK_NETFILTER);
  const r = await conn.exchange([
    { type: 0x10, payload: Buffer.alloc(4) },
    { type: 0x0a00, flags: NLM_F_ACK },
    { type: 0x0a02, flags: NLM_F_ACK },
    { type: 0x11, payload: Buffer.alloc(4) },
  ]);
  t.is(tr.sent.length, 1);
  const sent = parseMessages(tr.sent[0]);
  t.is(sent.length, 4);
  t.deepEqual(
    sent.map((m) => m.seq - sent[0].seq),
    [0, 1, 2, 3],
  );
  t.true(sent.every((m) => m.flags & NLM_F_REQUEST));
  t.deepEqual(
    r.map((x) => [x.error?.code, x.unanswered]),
    [
      [undefined, undefined],
      [undefined, undefined],
      ['ENOENT', undefined],
      [undefined, undefined],
    ],
  );
  t.is(r[2].error!.extAckMessage, 'No such table');
  // BEGIN refused (no NLM_F_ACK asked): the others are unanswered
  const r2 = await conn.exchange([{ type: 0x10 }, { type: 0x0a00, flags: NLM_F_ACK }, { type: 0x11 }]);
  t.is(r2[0].error!.code, 'EPERM');
  t.true(r2[1].unanswered);
  t.true(r2[2].unanswered);
});

test('malformed reply datagrams and socket errors reject what is in flight; closed connections refuse', async (t) => {
  const tr = new FakeTransport([() => [Buffer.from([1, 2, 3])], () => []], { keepSeq: true });
  const conn = new NetlinkConnection(tr, NETLINK_ROUTE);
  await t.throwsAsync(conn.request({ type: 36 }), { instanceOf: NetlinkDecodeError });
  const p = conn.request({ type: 36 });
  const e = Object.assign(new Error('recv'), { code: 'ENOBUFS', errno: 105, syscall: 'recvmsg' });
  tr.fail(e);
  const err = await t.throwsAsync(p, { instanceOf: SynplugError });
  t.regex(err!.message, /ENOBUFS/);
  conn.close();
  t.true(tr.closed);
  await t.throwsAsync(conn.request({ type: 36 }), { instanceOf: SynplugError, message: /closed/ });
});

test('dumpEach: messages are handed over as each datagram arrives, before NLMSG_DONE', async (t) => {
  const c = loadCapture('03_prio_add');
  const links = parseMessages(replies(c)[0].bytes);
  const tr = new ManualTransport();
  const conn = new NetlinkConnection(tr, NETLINK_ROUTE);
  const seen: Array<[number, number]> = [];
  const done = conn.dumpEach({ type: 18, payload: Buffer.alloc(16) }, (m, attempt) => seen.push([m.type, attempt]));
  await new Promise((r) => setTimeout(r, 5));
  const seq = seqOf(tr.sent[0]);
  tr.deliver(answering(replies(c)[0].bytes, seq));
  t.deepEqual(
    seen,
    links.map((m) => [m.type, 1]),
    'every message of the first datagram, before the dump is done',
  );
  tr.deliver(doneFor(seq));
  await done;
  t.is(seen.length, links.length);
});

test('dumpEach: after NLM_F_DUMP_INTR the dump runs again with attempt 2; only attempt 2 is consistent', async (t) => {
  const c = loadCapture('03_prio_add');
  const links = parseMessages(replies(c)[0].bytes);
  const tr = new FakeTransport(
    [(s) => [answering(replies(c)[0].bytes, seqOf(s), true), doneFor(seqOf(s), 0, NLM_F_MULTI | NLM_F_DUMP_INTR)], [replies(c)[0].bytes, replies(c)[1].bytes]],
    { keepSeq: false },
  );
  const conn = new NetlinkConnection(tr, NETLINK_ROUTE);
  const attempts: number[] = [];
  await conn.dumpEach({ type: 18, payload: Buffer.alloc(16) }, (_m, a) => attempts.push(a));
  t.deepEqual(attempts, [...links.map(() => 1), ...links.map(() => 2)]);
});

test('dumpEach: a throw from the callback rejects only once the dump is done, and the next dump then runs', async (t) => {
  const tr = new ManualTransport();
  const conn = new NetlinkConnection(tr, NETLINK_ROUTE);
  const c = loadCapture('03_prio_add');
  let calls = 0;
  const first = conn.dumpEach({ type: 18, payload: Buffer.alloc(16) }, () => {
    calls++;
    throw new SynplugError('consumer failed', 'failure');
  });
  const second = conn.dumpAll({ type: 18, payload: Buffer.alloc(16) });
  await new Promise((r) => setTimeout(r, 5));
  const seq = seqOf(tr.sent[0]);
  tr.deliver(answering(replies(c)[0].bytes, seq));
  t.is(calls, 1, 'no further calls after the throw');
  let settled = false;
  first
    .catch(() => undefined)
    .finally(() => {
      settled = true;
    });
  await new Promise((r) => setTimeout(r, 5));
  t.false(settled, 'still reading the dump to its end');
  t.is(tr.sent.length, 1, 'the next dump waits');
  tr.deliver(doneFor(seq));
  await t.throwsAsync(first, { message: 'consumer failed' });
  await new Promise((r) => setTimeout(r, 5));
  t.is(tr.sent.length, 2);
  tr.deliver(doneFor(seqOf(tr.sent[1])));
  t.deepEqual(await second, []);
});
