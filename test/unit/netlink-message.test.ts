import test from 'ava';
import fc from 'fast-check';
import { captureNames, loadCapture } from '../helpers/captures.js';
import {
  encodeMessage, parseMessages, flagNames, controlTypeName, doneErrno, NLMSG_HDRLEN, NLMSG_DONE, NLMSG_ERROR,
  NLM_F_REQUEST, NLM_F_MULTI, NLM_F_ACK, NLM_F_ECHO, NLM_F_DUMP, NLM_F_CREATE, NLM_F_EXCL, NLM_F_REPLACE, NLM_F_CAPPED,
  NLM_F_ACK_TLVS, NLM_F_DUMP_INTR, NETLINK_ROUTE, NETLINK_NETFILTER,
} from '../../src/netlink/message.js';
import { NetlinkDecodeError } from '../../src/netlink/errors.js';
import { messageTypeName, requestKind } from '../../src/netlink/protocols.js';
import '../../src/netlink/route/index.js';

test('header: encode then decode gives the fields back; nlmsg_len excludes the padding', (t) => {
  const b = encodeMessage({ type: 36, flags: NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, seq: 0xdeadbeef, pid: 4242, payload: Buffer.from([1, 2, 3, 4, 5]) });
  t.is(b.length, 24); // 16 + 5 -> aligned to 24
  t.is(b.readUInt32LE(0), 21);
  t.deepEqual(b.subarray(21), Buffer.alloc(3));
  const [m] = parseMessages(b);
  t.like(m, { type: 36, flags: 0x605, seq: 0xdeadbeef, pid: 4242, offset: 0 });
  t.deepEqual(m.payload, Buffer.from([1, 2, 3, 4, 5]));
});

test('header: payload parts are concatenated; no payload gives a bare 16-byte header', (t) => {
  const b = encodeMessage({ type: 18, flags: 1, payload: [Buffer.from([1, 2]), Buffer.from([3])] });
  t.deepEqual(parseMessages(b)[0].payload, Buffer.from([1, 2, 3]));
  const h = encodeMessage({ type: NLMSG_DONE, flags: 0 });
  t.is(h.length, NLMSG_HDRLEN);
  t.is(parseMessages(h)[0].payload.length, 0);
});

test('captured requests: re-encoding each message from its decoded fields gives the same bytes', (t) => {
  let n = 0;
  for (const name of captureNames()) {
    for (const d of loadCapture(name).datagrams) {
      const msgs = parseMessages(d.bytes);
      const again = Buffer.concat(msgs.map((m) => encodeMessage({ type: m.type, flags: m.flags, seq: m.seq, pid: m.pid, payload: m.payload })));
      t.deepEqual(again, d.bytes, `${name}#${d.index}`);
      n += msgs.length;
    }
  }
  t.true(n > 150);
});

test('several messages per datagram: the captured dumps split at nlmsg_len, offsets absolute', (t) => {
  const c = loadCapture('03_prio_add');
  const dump = c.datagrams[1].bytes; // tc's RTM_GETLINK dump reply: several RTM_NEWLINK
  const msgs = parseMessages(dump);
  t.true(msgs.length >= 2);
  let off = 0;
  for (const m of msgs) {
    t.is(m.offset, off);
    t.is(m.type, 16);
    t.true((m.flags & NLM_F_MULTI) !== 0);
    off += (NLMSG_HDRLEN + m.payload.length + 3) & ~3;
  }
  t.is(off, dump.length);
  // with a base offset, offsets shift
  t.deepEqual(parseMessages(dump, 100).map((m) => m.offset), msgs.map((m) => m.offset + 100));
  // NLMSG_DONE comes in its own datagram; its errno is 0
  const [done] = parseMessages(c.datagrams[2].bytes);
  t.is(done.type, NLMSG_DONE);
  t.is(doneErrno(done), 0);
  t.true(Object.is(doneErrno(done), 0));
});

test('truncated datagrams: NetlinkDecodeError at the offset of the bad header', (t) => {
  const c = loadCapture('11_qdisc_dump_stats');
  const dump = c.datagrams[4].bytes; // several RTM_NEWQDISC in one datagram
  const starts = parseMessages(dump).map((m) => m.offset);
  t.true(starts.length >= 3);
  for (let cut = 1; cut < dump.length; cut++) {
    const part = dump.subarray(0, cut);
    const ends = starts.map((s, i) => (i + 1 < starts.length ? starts[i + 1] : dump.length));
    if (ends.includes(cut)) { t.notThrows(() => parseMessages(part)); continue; }
    const err = t.throws(() => parseMessages(part), { instanceOf: NetlinkDecodeError });
    const at = Math.max(...starts.filter((s) => s < cut));
    t.is(err!.offset, at, `cut ${cut}`);
    t.regex(err!.message, cut - at < 16 ? /truncated netlink header/ : /runs past the end/);
  }
});

test('nlmsg_len shorter than the header, or longer than the datagram: NetlinkDecodeError', (t) => {
  const two = Buffer.concat([encodeMessage({ type: 16, flags: 0, payload: Buffer.alloc(4) }), encodeMessage({ type: 16, flags: 0 })]);
  const short = Buffer.from(two);
  short.writeUInt32LE(15, 20);
  const e1 = t.throws(() => parseMessages(short), { instanceOf: NetlinkDecodeError });
  t.is(e1!.offset, 20);
  t.regex(e1!.message, /nlmsg_len 15 is shorter than the header/);
  const long = Buffer.from(two);
  long.writeUInt32LE(17, 20);
  t.is(t.throws(() => parseMessages(long), { instanceOf: NetlinkDecodeError })!.offset, 20);
  const huge = Buffer.from(two);
  huge.writeUInt32LE(0xffffffff, 0);
  t.is(t.throws(() => parseMessages(huge), { instanceOf: NetlinkDecodeError })!.offset, 0);
  // an oversized nlmsg_len in an error message names the datagram's offset, with a base
  t.is(t.throws(() => parseMessages(huge, 64), { instanceOf: NetlinkDecodeError })!.offset, 64);
  t.deepEqual(parseMessages(Buffer.alloc(0)), []);
});

test('NLMSG_DONE may carry an errno (positive, from the negative int)', (t) => {
  const p = Buffer.alloc(4);
  p.writeInt32LE(-16);
  const [m] = parseMessages(encodeMessage({ type: NLMSG_DONE, flags: NLM_F_MULTI, payload: p }));
  t.is(doneErrno(m), 16);
  const [bare] = parseMessages(encodeMessage({ type: NLMSG_DONE, flags: NLM_F_MULTI }));
  t.is(doneErrno(bare), 0);
});

test('flag names depend on the kind of request', (t) => {
  t.deepEqual(flagNames(0x605, 'new'), ['NLM_F_REQUEST', 'NLM_F_ACK', 'NLM_F_EXCL', 'NLM_F_CREATE']);
  t.deepEqual(flagNames(NLM_F_REQUEST | NLM_F_DUMP, 'get'), ['NLM_F_REQUEST', 'NLM_F_DUMP']);
  t.deepEqual(flagNames(NLM_F_REQUEST | 0x100, 'get'), ['NLM_F_REQUEST', 'NLM_F_ROOT']);
  t.deepEqual(flagNames(NLM_F_CAPPED | NLM_F_ACK_TLVS, 'ack'), ['NLM_F_CAPPED', 'NLM_F_ACK_TLVS']);
  t.deepEqual(flagNames(NLM_F_REPLACE | NLM_F_ECHO | NLM_F_DUMP_INTR, 'new'), ['NLM_F_ECHO', 'NLM_F_DUMP_INTR', 'NLM_F_REPLACE']);
  t.deepEqual(flagNames(0x4000, 'other'), ['0x4000']);
  t.is(controlTypeName(NLMSG_ERROR), 'NLMSG_ERROR');
  t.is(messageTypeName(NETLINK_ROUTE, 20), 'RTM_NEWADDR');
  t.is(messageTypeName(NETLINK_ROUTE, 3), 'NLMSG_DONE');
  t.is(requestKind(NETLINK_ROUTE, 18), 'get');
  t.is(requestKind(NETLINK_ROUTE, 21), 'del');
  t.is(requestKind(NETLINK_ROUTE, 2), 'ack');
  t.is(messageTypeName(99, 0x1234), '0x1234');
  t.is(typeof messageTypeName(NETLINK_NETFILTER, 0x0a10), 'string');
});

const arbMsg = fc.record({
  type: fc.integer({ min: 0, max: 0xffff }),
  flags: fc.integer({ min: 0, max: 0xffff }),
  seq: fc.integer({ min: 0, max: 0xffffffff }),
  pid: fc.integer({ min: 0, max: 0xffffffff }),
  payload: fc.uint8Array({ maxLength: 64 }).map((u) => Buffer.from(u)),
});

test('round trip (fast-check): encode several messages, concatenate, parse -> the same messages', (t) => {
  fc.assert(fc.property(fc.array(arbMsg, { maxLength: 6 }), (msgs) => {
    const d = Buffer.concat(msgs.map((m) => encodeMessage(m)));
    const back = parseMessages(d);
    if (back.length !== msgs.length) return false;
    return back.every((b, i) => b.type === msgs[i].type && b.flags === msgs[i].flags && b.seq === msgs[i].seq && b.pid === msgs[i].pid && b.payload.equals(msgs[i].payload));
  }), { numRuns: 2000 });
  t.pass();
});
