import test from 'ava';
import { loadCapture, requests, replies } from '../helpers/captures.js';
import {
  parseMessages,
  parseErrorReply,
  errorFromReply,
  encodeMessage,
  NLMSG_ERROR,
  NLM_F_CAPPED,
  NLM_F_ACK_TLVS,
  NLMSGERR_ATTR_MSG,
  NLMSGERR_ATTR_OFFS,
  NLMSGERR_ATTR_MISS_TYPE,
  type NetlinkMessage,
} from '../../src/netlink/message.js';
import { str, u32 } from '../../src/netlink/attributes.js';
import { NetlinkError, NetlinkDecodeError, errnoName, UsageError, SynplugError, DumpInterruptedError } from '../../src/netlink/errors.js';

function errorMessages(name: string): NetlinkMessage[] {
  return replies(loadCapture(name))
    .flatMap((d) => parseMessages(d.bytes))
    .filter((m) => m.type === NLMSG_ERROR);
}

/** iproute2 prints "Error: <extack>" and adds a final "." when the text has none (lib/libnetlink.c). */
function tcWouldPrint(extack: string): string {
  return `Error: ${extack}${extack.endsWith('.') ? '' : '.'}\n`;
}

for (const [name, errno, code] of [
  ['04_prio_add_again', 17, 'EEXIST'],
  ['16_bad_kind', 2, 'ENOENT'],
  ['17_del_missing', 22, 'EINVAL'],
] as const) {
  test(`${name}: the NLMSG_ERROR decodes to errno ${code} and the extended ack that tc printed`, (t) => {
    const c = loadCapture(name);
    const errs = errorMessages(name)
      .map(parseErrorReply)
      .filter((r) => r.errno !== 0);
    t.is(errs.length, 1);
    const [r] = errs;
    t.is(r.errno, errno);
    t.is(errnoName(r.errno), code);
    t.false(r.capped);
    t.is(tcWouldPrint(r.extAckMessage!), c.printed);
    t.not(c.exitStatus, 0);
    // the echoed header is the failed request's
    const failed = parseMessages(requests(c).at(-1)!.bytes)[0];
    t.deepEqual(r.request, { len: failed.payload.length + 16, type: failed.type, flags: failed.flags, seq: failed.seq, pid: r.request.pid });
    const e = errorFromReply(r, 'RTM_NEWQDISC');
    t.true(e instanceof NetlinkError);
    t.is(e.code, code);
    t.is(e.extAckMessage, r.extAckMessage);
    t.is(e.category, 'kernel');
    t.true(e.message.includes(r.extAckMessage!));
  });
}

test('16b_no_such_dev: ENODEV for RTM_GETLINK, no extended ack, whole request echoed', (t) => {
  const [r] = errorMessages('16b_no_such_dev').map(parseErrorReply);
  t.is(r.errno, 19);
  t.is(errnoName(19), 'ENODEV');
  t.is(r.extAckMessage, undefined);
  t.false(r.capped);
  t.is(r.request.type, 18);
  t.is(r.request.len, 56);
});

test('acks: errno 0 (never -0), capped echo of the header only', (t) => {
  let n = 0;
  for (const name of ['02_addr_add', '03_prio_add', '05_pfifo_add', '06_plug_add', '08_fw_add', '20_qdisc_del_root']) {
    for (const m of errorMessages(name)) {
      const r = parseErrorReply(m);
      t.true(Object.is(r.errno, 0), name);
      t.true(r.capped);
      t.is(m.flags & NLM_F_CAPPED, NLM_F_CAPPED);
      n++;
    }
  }
  t.is(n, 6);
});

/** An NLMSG_ERROR built the way net/netlink/af_netlink.c netlink_ack() lays it out. */
function nlmsgerr(o: { error: number; request: Buffer; capped: boolean; tlvs?: Buffer[] }): NetlinkMessage {
  const err = Buffer.alloc(4);
  err.writeInt32LE(o.error);
  const echo = o.capped ? o.request.subarray(0, 16) : o.request;
  const flags = (o.capped ? NLM_F_CAPPED : 0) | (o.tlvs?.length ? NLM_F_ACK_TLVS : 0);
  return parseMessages(encodeMessage({ type: NLMSG_ERROR, flags, seq: 7, payload: [err, echo, ...(o.tlvs ?? [])] }))[0];
}
const req = encodeMessage({ type: 36, flags: 0x605, seq: 7, payload: Buffer.alloc(22, 1) }); // 38 bytes + 2 padding

test('an ack with a warning: errno 0 and the NLMSGERR_ATTR_MSG text', (t) => {
  const r = parseErrorReply(nlmsgerr({ error: 0, request: req, capped: true, tlvs: [str(NLMSGERR_ATTR_MSG, 'something is deprecated')] }));
  t.is(r.errno, 0);
  t.is(r.extAckMessage, 'something is deprecated');
});

test('an error with a full echo (not capped) and offset / missing-attribute TLVs', (t) => {
  const r = parseErrorReply(
    nlmsgerr({ error: -22, request: req, capped: false, tlvs: [str(NLMSGERR_ATTR_MSG, 'bad'), u32(NLMSGERR_ATTR_OFFS, 36), u32(NLMSGERR_ATTR_MISS_TYPE, 2)] }),
  );
  t.like(r, { errno: 22, capped: false, extAckMessage: 'bad', extAckOffset: 36, missingAttribute: 2 });
  t.is(r.request.len, 38);
  const e = errorFromReply(r, 'RTM_NEWQDISC');
  t.deepEqual(e.toJSON(), {
    error: 'RTM_NEWQDISC failed: EINVAL (kernel: bad)',
    errno: 22,
    code: 'EINVAL',
    request: 'RTM_NEWQDISC',
    extack: 'bad',
    extackOffset: 36,
    missingAttribute: 2,
  });
});

test('NLM_F_CAPPED on an error: only the header is echoed, TLVs follow it', (t) => {
  const r = parseErrorReply(nlmsgerr({ error: -1, request: req, capped: true, tlvs: [str(NLMSGERR_ATTR_MSG, 'nope')] }));
  t.like(r, { errno: 1, capped: true, extAckMessage: 'nope' });
  t.is(errorFromReply(r, 'X').capped, true);
});

test('malformed error replies -> NetlinkDecodeError', (t) => {
  const short = parseMessages(encodeMessage({ type: NLMSG_ERROR, flags: 0, payload: Buffer.alloc(12) }))[0];
  t.is(t.throws(() => parseErrorReply(short), { instanceOf: NetlinkDecodeError })!.offset, 16);
  // claims TLVs after an echo longer than what is there
  const p = Buffer.alloc(20);
  p.writeInt32LE(-22, 0);
  p.writeUInt32LE(200, 4);
  const lying = parseMessages(encodeMessage({ type: NLMSG_ERROR, flags: NLM_F_ACK_TLVS, payload: p }))[0];
  t.is(t.throws(() => parseErrorReply(lying), { instanceOf: NetlinkDecodeError })!.offset, 20);
});

test('withMessage keeps every kernel field and the category; the error classes and their categories', (t) => {
  const e = new NetlinkError({ errno: 2, requestType: 'RTM_NEWQDISC', extAckMessage: 'Specified qdisc kind is unknown', extAckOffset: 4, capped: true });
  const w = e.withMessage("qdisc kind 'plug' is not available in this kernel (module sch_plug)");
  t.is(w.message, "Specified qdisc kind is unknown. Qdisc kind 'plug' is not available in this kernel (module sch_plug)");
  t.is(w.explanation, "qdisc kind 'plug' is not available in this kernel (module sch_plug)");
  t.like(w, {
    errno: 2,
    code: 'ENOENT',
    requestType: 'RTM_NEWQDISC',
    extAckMessage: 'Specified qdisc kind is unknown',
    extAckOffset: 4,
    capped: true,
    category: 'kernel',
  });
  t.true(w instanceof SynplugError);
  t.is(new UsageError('x').category, 'usage');
  t.is(new NetlinkDecodeError('x', 5).category, 'decode');
  t.is(new NetlinkDecodeError('x', 5).message, 'x (at byte 5)');
  t.is(new DumpInterruptedError('RTM_GETQDISC', 6).category, 'kernel');
  t.is(new SynplugError('x').category, 'failure');
  t.false('exitCode' in new SynplugError('x'), 'errors carry no exit code');
  t.is(errnoName(99999), 'E99999');
  t.is(errnoName(11), 'EAGAIN');
});
