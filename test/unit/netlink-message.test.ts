import test from 'ava';
import fc from 'fast-check';
import { captureNames, loadCapture } from '../helpers/captures.js';
import {
  encodeMessage,
  parseMessages,
  readDatagramAsKernel,
  flagNames,
  controlTypeName,
  doneErrno,
  NLMSG_HDRLEN,
  NLMSG_DONE,
  NLMSG_ERROR,
  NLM_F_REQUEST,
  NLM_F_MULTI,
  NLM_F_ACK,
  NLM_F_ECHO,
  NLM_F_DUMP,
  NLM_F_CREATE,
  NLM_F_EXCL,
  NLM_F_REPLACE,
  NLM_F_CAPPED,
  NLM_F_ACK_TLVS,
  NLM_F_DUMP_INTR,
  NETLINK_ROUTE,
  NETLINK_NETFILTER,
} from '../../src/netlink/message.js';
import { NetlinkDecodeError } from '../../src/netlink/errors.js';
import { messageTypeName, requestKind } from '../../src/netlink/protocols.js';
import '../../src/netlink/route/index.js';

test('header: encode then decode gives the fields back; nlmsg_len excludes the padding', (t) => {
  const b = encodeMessage({
    type: 36,
    flags: NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL,
    seq: 0xdeadbeef,
    pid: 4242,
    payload: Buffer.from([1, 2, 3, 4, 5]),
  });
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
  t.deepEqual(
    parseMessages(dump, 100).map((m) => m.offset),
    msgs.map((m) => m.offset + 100),
  );
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
    const ends = starts.map((_s, i) => (i + 1 < starts.length ? starts[i + 1] : dump.length));
    if (ends.includes(cut)) {
      t.notThrows(() => parseMessages(part));
      continue;
    }
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
  fc.assert(
    fc.property(fc.array(arbMsg, { maxLength: 6 }), (msgs) => {
      const d = Buffer.concat(msgs.map((m) => encodeMessage(m)));
      const back = parseMessages(d);
      if (back.length !== msgs.length) return false;
      return back.every(
        (b, i) => b.type === msgs[i].type && b.flags === msgs[i].flags && b.seq === msgs[i].seq && b.pid === msgs[i].pid && b.payload.equals(msgs[i].payload),
      );
    }),
    { numRuns: 2000 },
  );
  t.pass();
});

// ---- reading a datagram as the kernel does (netlink_rcv_skb) ----

/** `ip link show lo`'s RTM_GETLINK request (type 18), as captured in step 01. */
const getlink = (): Buffer => loadCapture('01_link_show').datagrams.find((d) => d.direction === 'to-kernel' && parseMessages(d.bytes)[0].type === 18)!.bytes;

test('a captured request, padded past nlmsg_len as iproute2 pads its request structs, reads as the message then trailing bytes', (t) => {
  // No capture in fixtures/captures holds a padded request (every datagram ends with its last
  // message); this one is built from the captured RTM_GETLINK request plus zero padding.
  const req = getlink();
  const strict = parseMessages(req);
  t.is(strict.length, 1);
  for (const pad of [4, 12, 16, 1024]) {
    const d = Buffer.concat([req, Buffer.alloc(pad)]);
    const r = readDatagramAsKernel(d);
    t.deepEqual(r.messages, strict, `pad ${pad}`);
    // fewer than 16 bytes: the loop condition ends it; 16 or more zero bytes: a header with nlmsg_len 0
    t.deepEqual(
      r.trailing,
      pad < NLMSG_HDRLEN
        ? { offset: req.length, length: pad, reason: 'short-tail' }
        : { offset: req.length, length: pad, reason: 'nlmsg_len-below-header', nlmsgLen: 0 },
      `pad ${pad}`,
    );
    // the strict splitter, which the connection uses for replies, still refuses it
    t.throws(() => parseMessages(d), { instanceOf: NetlinkDecodeError });
  }
});

test('kernel reading: a header with nlmsg_len below 16, or past the end, stops the reading there; a base shifts the offsets', (t) => {
  const a = encodeMessage({ type: 18, flags: NLM_F_REQUEST, seq: 1, payload: Buffer.alloc(5) });
  const b = encodeMessage({ type: 18, flags: NLM_F_REQUEST, seq: 2, payload: Buffer.alloc(4) });
  for (const bad of [0, 1, 15]) {
    const d = Buffer.concat([a, b]);
    d.writeUInt32LE(bad, a.length);
    const r = readDatagramAsKernel(d, 100);
    t.is(r.messages.length, 1);
    t.is(r.messages[0].seq, 1);
    t.is(r.messages[0].offset, 100);
    t.deepEqual(r.trailing, { offset: 100 + a.length, length: b.length, reason: 'nlmsg_len-below-header', nlmsgLen: bad });
  }
  for (const bad of [b.length + 1, 0xffffffff]) {
    const d = Buffer.concat([a, b]);
    d.writeUInt32LE(bad, a.length);
    t.deepEqual(readDatagramAsKernel(d).trailing, { offset: a.length, length: b.length, reason: 'nlmsg_len-past-end', nlmsgLen: bad });
  }
  // the first header already bad: nothing is read
  const first = Buffer.from(a);
  first.writeUInt32LE(8, 0);
  t.deepEqual(readDatagramAsKernel(first), { messages: [], trailing: { offset: 0, length: a.length, reason: 'nlmsg_len-below-header', nlmsgLen: 8 } });
  // a last message without its padding is read whole (the kernel clamps the pull)
  t.deepEqual(
    readDatagramAsKernel(a.subarray(0, 21)).messages.map((m) => m.payload.length),
    [5],
  );
  t.deepEqual(readDatagramAsKernel(Buffer.alloc(0)), { messages: [] });
  t.deepEqual(readDatagramAsKernel(Buffer.alloc(7)), { messages: [], trailing: { offset: 0, length: 7, reason: 'short-tail' } });
});

test('kernel reading of every captured datagram is the strict reading, with nothing left over', (t) => {
  for (const name of captureNames()) {
    for (const d of loadCapture(name).datagrams) {
      t.deepEqual(readDatagramAsKernel(d.bytes), { messages: parseMessages(d.bytes) }, name);
    }
  }
});

/** netlink_rcv_skb, transcribed step by step over a copy (the model the reader must agree with). */
function kernelModel(buf: Buffer): { starts: number[]; stop: number } {
  let skb = buf;
  let pulled = 0;
  const starts: number[] = [];
  while (skb.length >= 16) {
    const len = skb.readUInt32LE(0);
    if (len < 16 || skb.length < len) break;
    starts.push(pulled);
    let msglen = (len + 3) & ~3;
    if (msglen > skb.length) msglen = skb.length;
    skb = skb.subarray(msglen);
    pulled += msglen;
  }
  return { starts, stop: pulled };
}

test('kernel reading (fast-check): never throws, agrees with netlink_rcv_skb, covers the datagram exactly, and equals the strict reading whenever that succeeds', (t) => {
  const datagram = fc.oneof(
    fc.uint8Array({ maxLength: 96 }).map((u) => Buffer.from(u)),
    // well-formed messages, then arbitrary bytes (padding, a broken header, a short tail)
    fc
      .tuple(fc.array(arbMsg, { maxLength: 4 }), fc.uint8Array({ maxLength: 40 }))
      .map(([ms, tail]) => Buffer.concat([...ms.map((m) => encodeMessage(m)), Buffer.from(tail)])),
  );
  fc.assert(
    fc.property(datagram, fc.integer({ min: 0, max: 1 << 20 }), (d, base) => {
      const r = readDatagramAsKernel(d, base);
      const model = kernelModel(d);
      if (r.messages.map((m) => m.offset - base).join() !== model.starts.join()) return false;
      const end = r.trailing ? r.trailing.offset - base : d.length;
      if (end !== model.stop || (r.trailing && r.trailing.offset + r.trailing.length !== base + d.length)) return false;
      if (r.trailing && r.trailing.length === 0) return false;
      let strict: ReturnType<typeof parseMessages>;
      try {
        strict = parseMessages(d, base);
      } catch (e) {
        if (!(e instanceof NetlinkDecodeError)) throw e;
        return r.trailing !== undefined; // strict refuses only what the kernel leaves unread
      }
      return r.trailing === undefined && JSON.stringify(strict) === JSON.stringify(r.messages);
    }),
    { numRuns: 3000 },
  );
  t.pass();
});
