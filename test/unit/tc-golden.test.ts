/**
 * Golden bytes: for the operations of captures 03, 05, 06, 07, 08, 10 and
 * 20 (and the dump requests of 11, 12, 13), our request is the captured
 * request, byte for byte, except seq and port id (bytes 8..15 of the
 * header). Where libnl's nl-qdisc-add encodes a field differently, the test
 * names the field, checks that it is the only difference, and says why.
 *
 * The operations run through a FakeTransport that answers with the
 * captured replies, so the whole path (builder, connection, ack) is used.
 */
import test, { type ExecutionContext } from 'ava';
import { loadCapture, requests, replies, type Capture } from '../helpers/captures.js';
import { NetlinkConnection, FakeTransport } from '../../src/netlink/connection.js';
import { parseMessages, NLM_F_CREATE, NLM_F_REQUEST, NLM_F_ACK } from '../../src/netlink/message.js';
import { NLA_F_NESTED } from '../../src/netlink/attributes.js';
import type { NetlinkError } from '../../src/netlink/errors.js';
import {
  addQdisc,
  deleteQdisc,
  addFilter,
  plugReleaseIndefinite,
  plugBuffer,
  listQdiscs,
  listFilters,
  listClasses,
  KindUnavailableError,
} from '../../src/tc/index.js';

/** The captured request of a given message type, and the reply datagrams that answer it. */
function exchangeOf(c: Capture, type: number): { request: Buffer; answer: Buffer[] } {
  const ds = c.datagrams;
  const i = ds.findIndex((d) => d.direction === 'to-kernel' && parseMessages(d.bytes)[0].type === type);
  if (i < 0) throw new Error(`no request of type ${type} in ${c.name}`);
  const answer: Buffer[] = [];
  for (let j = i + 1; j < ds.length && ds[j].direction === 'from-kernel'; j++) answer.push(ds[j].bytes);
  return { request: ds[i].bytes, answer };
}

/** Bytes with nlmsg_seq and nlmsg_pid zeroed (they are the tool's own). */
function noSeqPid(b: Buffer): Buffer {
  const out = Buffer.from(b);
  out.fill(0, 8, 16);
  return out;
}

function differingBytes(a: Buffer, b: Buffer): number[] {
  const out: number[] = [];
  for (let i = 0; i < Math.max(a.length, b.length); i++) if (a[i] !== b[i]) out.push(i);
  return out;
}

/** An operation run over a connection answered with captured replies. */
type Op = (conn: NetlinkConnection) => Promise<unknown>;

async function run(c: Capture, type: number, op: Op, extra: Buffer[][] = []): Promise<Buffer[]> {
  const { answer } = exchangeOf(c, type);
  const fake = new FakeTransport([answer, ...extra]);
  const conn = new NetlinkConnection(fake, 0, { timeoutMs: 1000 });
  await op(conn);
  conn.close();
  return fake.sent;
}

/** Our request for `op` is capture `name`'s request of message `type`, byte for byte but seq and port id. */
const sameRequest = test.macro(async (t, name: string, type: number, op: Op) => {
  const c = loadCapture(name);
  const [sent] = await run(c, type, op);
  t.deepEqual(noSeqPid(sent), noSeqPid(exchangeOf(c, type).request));
});

test('03: addQdisc prio bands 4 at root, handle 1: == tc qdisc add dev lo root handle 1: prio bands 4', sameRequest, '03_prio_add', 36, (conn) =>
  addQdisc(conn, { ifindex: 1, parent: 'root', handle: '1:', kind: 'prio', options: { bands: 4 } }),
);

test('03: the same request from tc words ["bands", "4"]', sameRequest, '03_prio_add', 36, (conn) =>
  addQdisc(conn, { ifindex: 1, parent: 'root', handle: '1:', kind: 'prio', options: ['bands', '4'] }),
);

test('05: addQdisc pfifo limit 1000 under 1:1, handle 10: == tc qdisc add ... pfifo limit 1000', sameRequest, '05_pfifo_add', 36, (conn) =>
  addQdisc(conn, { ifindex: 1, parent: '1:1', handle: '10:', kind: 'pfifo', options: { limit: 1000 } }),
);

/** Offset of the TCA_OPTIONS type field in a plug request: 16 (nlmsghdr) + 20 (tcmsg) + 12 (TCA_KIND "plug\0" padded) + 2. */
const PLUG_OPTIONS_TYPE_AT = 16 + 20 + 12 + 2;

function checkPlugDifferences(t: ExecutionContext, ours: Buffer, theirs: Buffer, flagsDiffer: boolean): void {
  t.is(ours.length, theirs.length);
  // Difference 1: libnl sets NLA_F_NESTED on TCA_OPTIONS (type 0x8002) although its payload
  // is a struct tc_plug_qopt, not attributes; tc and we send plain TCA_OPTIONS (0x0002).
  // The kernel masks the flag off (nla_type), so both mean the same.
  t.is(theirs.readUInt16LE(PLUG_OPTIONS_TYPE_AT), NLA_F_NESTED | 2);
  t.is(ours.readUInt16LE(PLUG_OPTIONS_TYPE_AT), 2);
  const expected = [PLUG_OPTIONS_TYPE_AT + 1];
  if (flagsDiffer) {
    // Difference 2: nl-qdisc-add --update sends NLM_F_CREATE (0x0405); a plug verb is a
    // change of an existing qdisc, which DESIGN §4 says to send without NLM_F_CREATE/EXCL (0x0005),
    // so that a missing plug is reported instead of created (and a new plug starts out buffering).
    t.is(theirs.readUInt16LE(6), NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE);
    t.is(ours.readUInt16LE(6), NLM_F_REQUEST | NLM_F_ACK);
    expected.unshift(7);
  }
  t.deepEqual(differingBytes(noSeqPid(ours), noSeqPid(theirs)), expected);
}

/** Our plug request for `op` is capture `name`'s RTM_NEWQDISC but for the differences {@link checkPlugDifferences} names. */
const plugRequest = test.macro(async (t, name: string, flagsDiffer: boolean, op: Op) => {
  const c = loadCapture(name);
  const [sent] = await run(c, 36, op);
  checkPlugDifferences(t, sent, exchangeOf(c, 36).request, flagsDiffer);
});

test(
  '06: addQdisc plug limit 1048576 under 1:4, handle 40: == nl-qdisc-add ... plug --limit 1048576, but for NLA_F_NESTED on TCA_OPTIONS',
  plugRequest,
  '06_plug_add',
  false,
  (conn) => addQdisc(conn, { ifindex: 1, parent: '1:4', handle: '40:', kind: 'plug', options: { limit: 1048576 } }),
);

test(
  '07: plugReleaseIndefinite == nl-qdisc-add --update plug --release-indefinite, but for NLM_F_CREATE and NLA_F_NESTED',
  plugRequest,
  '07_plug_release',
  true,
  (conn) => plugReleaseIndefinite(conn, { ifindex: 1, parent: '1:4', handle: '40:' }),
);

test('10: plugBuffer == nl-qdisc-add --update plug --buffer, but for NLM_F_CREATE and NLA_F_NESTED', plugRequest, '10_plug_buffer', true, (conn) =>
  plugBuffer(conn, { ifindex: 1, parent: '1:4', handle: '40:' }),
);

test('15: plugReleaseIndefinite again gives the same request as 07 does', plugRequest, '15_plug_release_again', true, (conn) =>
  plugReleaseIndefinite(conn, { ifindex: 1, parent: '1:4', handle: '40:' }),
);

test('08: addFilter fw handle 1 classid 1:4, protocol ip, pref 1, parent 1:0 == tc filter add ... fw classid 1:4', sameRequest, '08_fw_add', 44, (conn) =>
  addFilter(conn, { ifindex: 1, parent: '1:0', protocol: 'ip', pref: 1, handle: '1', kind: 'fw', options: { classid: '1:4' } }),
);

test('08: the same filter from tc words ["classid", "1:4"] and a numeric handle', sameRequest, '08_fw_add', 44, (conn) =>
  addFilter(conn, { ifindex: 1, parent: '1:', protocol: 'ip', pref: 1, handle: 1, kind: 'fw', options: ['classid', '1:4'] }),
);

test('20: deleteQdisc at the root == tc qdisc del dev lo root', sameRequest, '20_qdisc_del_root', 37, (conn) =>
  deleteQdisc(conn, { ifindex: 1, parent: 'root' }),
);

/**
 * Run `op` against capture `name`'s answer to its request of message `type`
 * (then `followUp`, for the dump that explains a refusal), expect it to reject,
 * check that our request is the captured one, and return the error.
 */
async function refused(t: ExecutionContext, name: string, type: number, followUp: Buffer[], op: Op): Promise<Error | undefined> {
  const { request, answer } = exchangeOf(loadCapture(name), type);
  const fake = new FakeTransport([answer, followUp]);
  const conn = new NetlinkConnection(fake, 0, { timeoutMs: 1000 });
  const err = await t.throwsAsync(op(conn));
  conn.close();
  t.deepEqual(noSeqPid(fake.sent[0]), noSeqPid(request));
  return err;
}

/** Step 11's replies to tc's RTM_GETQDISC dump. */
const qdiscDump = (): Buffer[] => exchangeOf(loadCapture('11_qdisc_dump_stats'), 38).answer;

test('17: deleteQdisc parent 1:3 handle 99: == tc qdisc del dev lo parent 1:3 handle 99:, and the EINVAL names handle, parent and device', async (t) => {
  // After the refusal we list the qdiscs to explain it: answer that dump with step 11's replies.
  const err = await refused(t, '17_del_missing', 37, qdiscDump(), (conn) => deleteQdisc(conn, { ifindex: 1, parent: '1:3', handle: '99:' }));
  t.like(err, { name: 'NetlinkError', code: 'EINVAL', requestType: 'RTM_DELQDISC', extAckMessage: 'Invalid handle' });
  // The capture carries the kernel's extended ack: its sentence comes first, then ours.
  t.is(err!.message, 'Invalid handle. No qdisc with handle 99: under parent 1:3 on device index 1');
  t.is((err as NetlinkError).explanation, 'no qdisc with handle 99: under parent 1:3 on device index 1');
});

test('04: addQdisc of an existing prio: the EEXIST names the handle and the device', async (t) => {
  const err = await refused(t, '04_prio_add_again', 36, qdiscDump(), (conn) =>
    addQdisc(conn, { ifindex: 1, parent: 'root', handle: '1:', kind: 'prio', options: { bands: 4 } }),
  );
  t.like(err, { code: 'EEXIST', extAckMessage: 'Exclusivity flag on, cannot modify' });
  t.is(err!.message, "Exclusivity flag on, cannot modify. A qdisc with handle 1: already exists on device index 1 (kind 'prio'); use replace or change");
  t.is((err as NetlinkError).explanation, "a qdisc with handle 1: already exists on device index 1 (kind 'prio'); use replace or change");
});

/** An empty dump answer: NLMSG_DONE, NLM_F_MULTI, error 0. */
function emptyDump(): Buffer {
  const done = Buffer.alloc(20);
  done.writeUInt32LE(20, 0);
  done.writeUInt16LE(3, 4);
  done.writeUInt16LE(2, 6);
  return done;
}

test('16: addQdisc of a kind unknown to synplug and the kernel: reported as unknown to the kernel, no module invented', async (t) => {
  const ifindex = parseMessages(exchangeOf(loadCapture('16_bad_kind'), 36).request)[0].payload.readUInt32LE(4); // ifb0 in the capture
  // The follow-up dump (is the parent there?) gets an empty answer: the root always is.
  const err = await refused(t, '16_bad_kind', 36, [emptyDump()], (conn) => addQdisc(conn, { ifindex, parent: 'root', handle: '5:', kind: 'nosuchqdisc' }));
  t.like(err, { code: 'ENOENT', extAckMessage: 'Specified qdisc kind is unknown' });
  t.false(err instanceof KindUnavailableError);
  t.false('module' in err!);
  t.is(
    (err as NetlinkError).explanation,
    "qdisc kind 'nosuchqdisc' is unknown to this kernel (ENOENT): check the name; if it is right, the module that provides it is not loaded and cannot be loaded",
  );
  t.is(
    err!.message,
    "Specified qdisc kind is unknown. Qdisc kind 'nosuchqdisc' is unknown to this kernel (ENOENT): check the name; if it is right, the module that provides it is not loaded and cannot be loaded",
  );
  t.is((err as NetlinkError).category, 'kernel');
  t.notRegex(err!.message, /sch_nosuchqdisc/);
});

test('16: the same ENOENT for a kind synplug knows (plug): KindUnavailableError with the module as a field', async (t) => {
  const ifindex = parseMessages(exchangeOf(loadCapture('16_bad_kind'), 36).request)[0].payload.readUInt32LE(4);
  const { answer } = exchangeOf(loadCapture('16_bad_kind'), 36); // the kernel's ENOENT for an unknown kind
  const fake = new FakeTransport([answer, [emptyDump()]]);
  const conn = new NetlinkConnection(fake, 0, { timeoutMs: 1000 });
  const err = await t.throwsAsync(addQdisc(conn, { ifindex, parent: 'root', handle: '5:', kind: 'plug', options: { limit: 1000 } }), {
    instanceOf: KindUnavailableError,
  });
  conn.close();
  t.like(err, { code: 'ENOENT', module: 'sch_plug', kind: 'plug', object: 'qdisc', requestType: 'RTM_NEWQDISC' });
  t.is(err!.explanation, "qdisc kind 'plug' is not available in this kernel (module sch_plug)");
  t.is(err!.message, "Specified qdisc kind is unknown. Qdisc kind 'plug' is not available in this kernel (module sch_plug)");
  t.is(err!.category, 'missing-module');
});

test("11: listQdiscs({ ifindex: 1 }) sends tc's RTM_GETQDISC dump and decodes the reply, names from a link dump", async (t) => {
  const c = loadCapture('11_qdisc_dump_stats');
  const links = exchangeOf(c, 18).answer; // tc's own RTM_GETLINK dump replies
  const fake = new FakeTransport([exchangeOf(c, 38).answer, links]);
  const conn = new NetlinkConnection(fake, 0, { timeoutMs: 1000 });
  const qs = await listQdiscs(conn, { ifindex: 1 });
  conn.close();
  t.deepEqual(noSeqPid(fake.sent[0]), noSeqPid(exchangeOf(c, 38).request));
  t.deepEqual(
    qs.map((q) => `${q.kind} ${q.handle} ${q.dev}`),
    ['prio 1: lo', 'pfifo 30: lo', 'pfifo 10: lo', 'plug 40: lo', 'pfifo 20: lo'],
  );
});

test("12 and 13: listFilters / listClasses({ dev }) send tc's dump requests (after resolving the name)", async (t) => {
  for (const [name, type, fn] of [
    ['12_filter_dump', 46, listFilters],
    ['13_class_dump', 42, listClasses],
  ] as const) {
    const c = loadCapture(name);
    // Answer our RTM_GETLINK lookup with an RTM_NEWLINK for lo (from the capture's link dump) and an ack.
    const linkMsg = parseMessages(exchangeOf(c, 18).answer[0])[0];
    const one = Buffer.from(exchangeOf(c, 18).answer[0].subarray(linkMsg.offset, linkMsg.offset + linkMsg.payload.length + 16));
    one.writeUInt16LE(0, 6); // not multipart
    const ack = Buffer.alloc(36);
    ack.writeUInt32LE(36, 0);
    ack.writeUInt16LE(2, 4);
    const fake = new FakeTransport([[one, ack], exchangeOf(c, type).answer]);
    const conn = new NetlinkConnection(fake, 0, { timeoutMs: 1000 });
    const list = await fn(conn, { dev: 'lo' });
    conn.close();
    t.deepEqual(noSeqPid(fake.sent[1]), noSeqPid(exchangeOf(c, type).request), name);
    t.true(list.length >= 2);
    t.true(list.every((e) => e.dev === 'lo'));
  }
});

test('captured replies were used: every exchange above has an answer', (t) => {
  for (const [name, type] of [
    ['03_prio_add', 36],
    ['05_pfifo_add', 36],
    ['06_plug_add', 36],
    ['07_plug_release', 36],
    ['08_fw_add', 44],
    ['10_plug_buffer', 36],
    ['20_qdisc_del_root', 37],
  ] as const) {
    t.true(exchangeOf(loadCapture(name), type).answer.length > 0, name);
  }
  t.true(replies(loadCapture('11_qdisc_dump_stats')).length > 0);
  t.true(requests(loadCapture('11_qdisc_dump_stats')).length > 0);
});
