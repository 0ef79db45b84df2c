/**
 * nfnetlink_queue's messages against libnetfilter_queue's on Linux 6.1
 * (fixtures/captures 58-60: bind queue 7 or 8, copy mode META, maxlen 65536,
 * one held packet, a verdict or a batch verdict, unbind).
 */
import test from 'ava';
import fc from 'fast-check';
import { loadCapture, requests, replies } from '../helpers/captures.js';
import { parseMessages, NETLINK_NETFILTER, type NetlinkMessage } from '../../src/netlink/message.js';
import { readlinkSync } from 'node:fs';
import { NetlinkDecodeError, UsageError } from '../../src/netlink/errors.js';
import { libc, SocketError, takeFileDescriptor } from '../../src/netlink/libc.js';
import { bodyDecoder, messageTypeName } from '../../src/netlink/protocols.js';
import * as Q from '../../src/netlink/nfqueue.js';

/** Every message of a capture in one direction. */
const messages = (name: string, dir: 'to' | 'from'): NetlinkMessage[] =>
  (dir === 'to' ? requests : replies)(loadCapture(name)).flatMap((d) => parseMessages(d.bytes));

for (const [name, queue, verdictType] of [
  ['58_nfq_hold_each', 7, Q.NFQNL_MSG_VERDICT],
  ['59_nfq_hold_batch', 7, Q.NFQNL_MSG_VERDICT_BATCH],
  ['60_nfq_hold_compat', 8, Q.NFQNL_MSG_VERDICT_BATCH],
] as const) {
  test(`${name.slice(0, 2)}: bind, copy mode META, maxlen 65536, the verdict for id 1 and unbind are libnetfilter_queue's payloads`, (t) => {
    const sent = messages(name, 'to');
    t.deepEqual(
      sent.map((m) => messageTypeName(NETLINK_NETFILTER, m.type)),
      ['NFQNL_MSG_CONFIG', 'NFQNL_MSG_CONFIG', 'NFQNL_MSG_CONFIG', messageTypeName(NETLINK_NETFILTER, verdictType), 'NFQNL_MSG_CONFIG'],
    );
    const ours = [
      Q.encodeNfqConfigCommand(queue, Q.NFQNL_CFG_CMD_BIND),
      Q.encodeNfqConfigParams(queue, Q.NFQNL_COPY_META),
      Q.encodeNfqConfigMaxlen(queue, Q.NFQUEUE_DEFAULT_MAXLEN),
      Q.encodeNfqVerdict(queue, Q.NF_ACCEPT, 1),
      Q.encodeNfqConfigCommand(queue, Q.NFQNL_CFG_CMD_UNBIND),
    ];
    t.deepEqual(
      ours.map((b) => b.toString('hex')),
      sent.map((m) => m.payload.toString('hex')),
    );
    t.is(sent[3].type, verdictType);
  });

  test(`${name.slice(0, 2)}: the held packet decodes (id 1, IPv4, hook output, out via lo) and its id is read in place`, (t) => {
    const packets = messages(name, 'from').filter((m) => m.type === Q.NFQNL_MSG_PACKET);
    t.is(packets.length, 1);
    t.deepEqual(Q.decodeNfqueueBody(packets[0]), { family: 'ip', version: 0, queue, id: 1, hw_protocol: '0x0800', hook: 'output', outdev: 1, skb_info: 1 });
    const rs = replies(loadCapture(name));
    const i = rs.findIndex((d) => parseMessages(d.bytes)[0].type === Q.NFQNL_MSG_PACKET);
    t.is(Q.packetIdOf(rs[i].bytes), 1);
    rs.forEach((d, j) => {
      if (j !== i) t.is(Q.packetIdOf(d.bytes), undefined, 'acks carry no packet id');
    });
  });
}

test('58: the config and verdict requests decode to what they say', (t) => {
  const dec = messages('58_nfq_hold_each', 'to').map((m) => bodyDecoder(NETLINK_NETFILTER, m.type)!(m));
  t.deepEqual(dec, [
    { family: 'unspec', version: 0, queue: 7, command: 'bind', pf: 0 },
    { family: 'unspec', version: 0, queue: 7, copy_range: 65535, copy_mode: 'meta' },
    { family: 'unspec', version: 0, queue: 7, maxlen: 65536 },
    { family: 'unspec', version: 0, queue: 7, verdict: 'accept', id: 1 },
    { family: 'unspec', version: 0, queue: 7, command: 'unbind', pf: 0 },
  ]);
});

test('the fail-open message sends NFQA_CFG_FLAGS with NFQA_CFG_MASK (the kernel refuses flags alone)', (t) => {
  const msg = (p: Buffer): NetlinkMessage => ({ type: Q.NFQNL_MSG_CONFIG, flags: 0, seq: 0, pid: 0, payload: p, offset: 0 });
  t.deepEqual(Q.decodeNfqueueBody(msg(Q.encodeNfqConfigFlags(9, Q.NFQA_CFG_F_FAIL_OPEN, 0))), {
    family: 'unspec',
    version: 0,
    queue: 9,
    flags: [],
    mask: ['fail-open'],
  });
  t.deepEqual(Q.decodeNfqueueBody(msg(Q.encodeNfqConfigFlags(9, Q.NFQA_CFG_F_FAIL_OPEN, Q.NFQA_CFG_F_FAIL_OPEN))).flags, ['fail-open']);
  // the wire: nfgenmsg {AF_UNSPEC, v0, be16 9}, NFQA_CFG_FLAGS be32 1, NFQA_CFG_MASK be32 1
  t.is(Q.encodeNfqConfigFlags(9, 1, 1).toString('hex'), '0000000908000500000000010800040000000001');
});

test('the bind is one config message: BIND, copy META, maxlen, flags and mask (bound but unconfigured, a queue drops what arrives)', (t) => {
  const msg = (p: Buffer): NetlinkMessage => ({ type: Q.NFQNL_MSG_CONFIG, flags: 0, seq: 0, pid: 0, payload: p, offset: 0 });
  t.deepEqual(Q.decodeNfqueueBody(msg(Q.encodeNfqConfigBind(7, 65536, false))), {
    family: 'unspec',
    version: 0,
    queue: 7,
    command: 'bind',
    pf: 0,
    copy_range: 65535,
    copy_mode: 'meta',
    maxlen: 65536,
    flags: [],
    mask: ['fail-open'],
  });
  t.deepEqual(Q.decodeNfqueueBody(msg(Q.encodeNfqConfigBind(7, 2, true))).flags, ['fail-open']);
});

test('packet ids: read in place at the ends of the u32 range, never past the message; after 0xffffffff comes 0 (the kernel wrapping order)', (t) => {
  const pkt = (id: number, len = 0x0b): Buffer => {
    const b = Buffer.alloc(16 + 4 + 12);
    b.writeUInt32LE(b.length, 0);
    b.writeUInt16LE(Q.NFQNL_MSG_PACKET, 4);
    b[16] = 2;
    b.writeUInt16LE(len, 20);
    b.writeUInt16LE(Q.NFQA_PACKET_HDR, 22);
    b.writeUInt32BE(id, 24);
    return b;
  };
  t.is(Q.packetIdOf(pkt(0xffffffff)), 0xffffffff);
  t.is(Q.packetIdOf(pkt(0)), 0);
  t.is(Q.packetIdOf(pkt(5, 200)), undefined, 'an attribute past the message');
  t.true(Q.nfqIdAfter(0, 0xffffffff));
  t.true(Q.nfqIdAfter(2, 1));
  t.false(Q.nfqIdAfter(0xffffffff, 0));
  t.false(Q.nfqIdAfter(1, 1));
});

test('NFQNL_MSG_* are named and decoded; decodeNfqueueBody throws only NetlinkDecodeError and packetIdOf never throws (fast-check)', (t) => {
  for (const [type, name] of [
    [Q.NFQNL_MSG_PACKET, 'NFQNL_MSG_PACKET'],
    [Q.NFQNL_MSG_VERDICT, 'NFQNL_MSG_VERDICT'],
    [Q.NFQNL_MSG_CONFIG, 'NFQNL_MSG_CONFIG'],
    [Q.NFQNL_MSG_VERDICT_BATCH, 'NFQNL_MSG_VERDICT_BATCH'],
  ] as const) {
    t.is(messageTypeName(NETLINK_NETFILTER, type), name);
    t.is(bodyDecoder(NETLINK_NETFILTER, type), Q.decodeNfqueueBody);
  }
  fc.assert(
    fc.property(fc.constantFrom(0x300, 0x301, 0x302, 0x303), fc.uint8Array({ maxLength: 80 }), (type, bytes) => {
      const payload = Buffer.from(bytes);
      try {
        Q.decodeNfqueueBody({ type, flags: 0, seq: 0, pid: 0, payload, offset: 0 });
      } catch (e) {
        if (!(e instanceof NetlinkDecodeError)) throw e;
      }
      const d = Buffer.alloc(16 + payload.length);
      d.writeUInt32LE(d.length, 0);
      d.writeUInt16LE(type, 4);
      payload.copy(d, 16);
      Q.packetIdOf(d);
      Q.packetIdOf(payload);
    }),
  );
  t.pass();
});

test('bind refuses a bad queue number or maxlen before opening anything', async (t) => {
  for (const q of [-1, 65536, 1.5]) await t.throwsAsync(Q.NfqueueHolder.bind(q), { name: 'UsageError' });
  for (const maxlen of [0, -5, 2 ** 32, 0.5]) await t.throwsAsync(Q.NfqueueHolder.bind(1, { maxlen }), { name: 'UsageError' });
  t.throws(() => Q.NfqueueHolder.adopt(0, 70000), { name: 'UsageError' });
});

test('takeFileDescriptor: a process that does not exist is a SocketError naming pidfd_open and ESRCH', (t) => {
  // pid_max is at most 2^22: this pid cannot exist
  const e = t.throws(() => takeFileDescriptor(4_194_305, 0), { instanceOf: SocketError });
  t.is(e!.code, 'ESRCH');
  t.regex(e!.message, /^pidfd_open\(4194305\) failed: ESRCH/);
});

test('takeFileDescriptor: a descriptor the process does not have is a SocketError naming pidfd_getfd and EBADF', (t) => {
  const e = t.throws(() => takeFileDescriptor(process.pid, 1_000_000), { instanceOf: SocketError });
  t.is(e!.code, 'EBADF');
  t.regex(e!.message, new RegExp(`^pidfd_getfd\\(process ${process.pid}, descriptor 1000000\\) failed: EBADF`));
});

test("takeFileDescriptor: a copy of one of this process's own descriptors is the same open file", (t) => {
  const fd = takeFileDescriptor(process.pid, 1);
  try {
    t.is(readlinkSync(`/proc/self/fd/${fd}`), readlinkSync('/proc/self/fd/1'));
  } finally {
    libc('close')(fd);
  }
});

test('NfqueueHolder.takeOver: a process without that queue socket is refused, naming it (nothing is copied)', (t) => {
  t.throws(() => Q.NfqueueHolder.takeOver(process.pid, 4200, 2_000_000_000), {
    instanceOf: UsageError,
    message: `process ${process.pid} has no NETLINK_NETFILTER socket of port id 2000000000 open: it does not hold netfilter queue 4200`,
  });
});
