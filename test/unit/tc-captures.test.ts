/**
 * The tc layer against the reference captures (fixtures/captures): every tc
 * message decodes, and decodes to what the tool printed.
 *
 * Expected values come from the captures themselves: the `printed` text of
 * tc (steps 11, 12, 13 and the error texts of 04, 16, 17), or the command
 * line that produced a request (e.g. "tc qdisc add dev lo root handle 1: prio bands 4").
 */
import test from 'ava';
import { captureNames, loadCapture, requests, replies } from '../helpers/captures.js';
import { parseMessages, parseErrorReply, NLMSG_ERROR, NLM_F_CAPPED, type NetlinkMessage } from '../../src/netlink/message.js';
import { bodyDecoder } from '../../src/netlink/protocols.js';
import {
  decodeQdisc,
  decodeClass,
  decodeFilter,
  decodeTcMessage,
  formatQdiscText,
  formatClassText,
  formatFilterText,
  type QdiscEntry,
} from '../../src/tc/index.js';

const TC_TYPES = new Set([36, 37, 38, 40, 41, 42, 44, 45, 46]);

function tcMessages(name: string, direction?: 'to-kernel' | 'from-kernel'): NetlinkMessage[] {
  const c = loadCapture(name);
  const ds = direction === 'to-kernel' ? requests(c) : direction === 'from-kernel' ? replies(c) : c.datagrams;
  return ds
    .filter((d) => d.protocol === 0)
    .flatMap((d) => parseMessages(d.bytes))
    .filter((m) => TC_TYPES.has(m.type));
}

function decodeAny(m: NetlinkMessage): Record<string, unknown> {
  if (m.type <= 38) return decodeQdisc(m);
  if (m.type <= 42) return decodeClass(m);
  return decodeFilter(m);
}

test('every tc message in every capture decodes, and the registered body decoder gives the same', (t) => {
  let n = 0;
  for (const name of captureNames()) {
    for (const m of tcMessages(name)) {
      const direct = decodeAny(m);
      const registered = bodyDecoder(0, m.type);
      t.truthy(registered, `body decoder for type ${m.type}`);
      t.deepEqual(registered!(m), direct);
      t.deepEqual(decodeTcMessage(m), direct);
      n++;
    }
  }
  // 03,04,05,06,07,08,10,15,16,17,20 requests; 11,12,13 dump requests and replies
  t.true(n >= 25, `decoded ${n} tc messages`);
});

test('the requests echoed inside error replies (04, 16, 17) decode too', (t) => {
  for (const name of ['04_prio_add_again', '16_bad_kind', '17_del_missing']) {
    const errs = replies(loadCapture(name))
      .flatMap((d) => parseMessages(d.bytes))
      .filter((m) => m.type === NLMSG_ERROR);
    const last = errs[errs.length - 1];
    t.is(last.flags & NLM_F_CAPPED, 0);
    const r = parseErrorReply(last);
    const echoed = parseMessages(last.payload.subarray(4, 4 + r.request.len), last.offset + 20);
    t.is(echoed.length, 1);
    const sent = tcMessages(name, 'to-kernel')[0];
    t.deepEqual(decodeAny(echoed[0]), decodeAny(sent));
  }
});

test('04, 16, 17: the extended-ack texts are the ones tc printed ("Error: <msg>." )', (t) => {
  const cases: Array<[string, string]> = [
    ['04_prio_add_again', 'EEXIST'],
    ['16_bad_kind', 'ENOENT'],
    ['17_del_missing', 'EINVAL'],
  ];
  for (const [name, code] of cases) {
    const c = loadCapture(name);
    const errs = replies(c)
      .flatMap((d) => parseMessages(d.bytes))
      .filter((m) => m.type === NLMSG_ERROR)
      .map(parseErrorReply);
    const last = errs[errs.length - 1];
    const msg = last.extAckMessage!;
    t.truthy(msg);
    // iproute2 prints "Error: " + text, adding a final "." when the text lacks one.
    t.is(`Error: ${msg}${msg.endsWith('.') ? '' : '.'}\n`, c.printed);
    t.is({ 17: 'EEXIST', 2: 'ENOENT', 22: 'EINVAL' }[last.errno], code);
  }
});

/* ---- requests decode to the command line's values ---- */

test('03: "tc qdisc add dev lo root handle 1: prio bands 4" decodes to kind prio, handle 1:, root, bands 4, tc default priomap', (t) => {
  const c = loadCapture('03_prio_add');
  t.is(c.command, 'tc qdisc add dev lo root handle 1: prio bands 4');
  const [q] = tcMessages('03_prio_add', 'to-kernel').map((m) => decodeQdisc(m));
  t.is(q.kind, 'prio');
  t.is(q.handle, '1:');
  t.true(q.root);
  t.is(q.ifindex, 1);
  t.is(q.options.bands, 4);
  // tc's default priomap, as printed by step 11 for this qdisc
  t.deepEqual(q.options.priomap, '1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1'.split(' ').map(Number));
});

test('05: "... parent 1:1 handle 10: pfifo limit 1000" decodes to pfifo 10: parent 1:1 limit 1000', (t) => {
  t.is(loadCapture('05_pfifo_add').command, 'tc qdisc add dev lo parent 1:1 handle 10: pfifo limit 1000');
  const [q] = tcMessages('05_pfifo_add', 'to-kernel').map((m) => decodeQdisc(m));
  t.like(q, { kind: 'pfifo', handle: '10:', parent: '1:1', options: { limit: 1000 } });
});

test('06, 07, 10, 15: plug requests decode to the action and limit of the nl-qdisc-add command', (t) => {
  const expect: Record<string, Record<string, unknown>> = {
    '06_plug_add': { action: 'limit', limit: 1048576 }, // --limit 1048576
    '07_plug_release': { action: 'release_indefinite', limit: 0 }, // --release-indefinite
    '10_plug_buffer': { action: 'buffer', limit: 0 }, // --buffer
    '15_plug_release_again': { action: 'release_indefinite', limit: 0 },
  };
  for (const [name, options] of Object.entries(expect)) {
    const c = loadCapture(name);
    t.regex(c.command, /--parent=1:4 --id=40:/);
    const [q] = tcMessages(name, 'to-kernel').map((m) => decodeQdisc(m));
    t.like(q, { kind: 'plug', handle: '40:', parent: '1:4', ifindex: 1 });
    t.deepEqual(q.options, options, name);
  }
});

test('08: "tc filter add dev lo protocol ip parent 1:0 prio 1 handle 1 fw classid 1:4" decodes to those values', (t) => {
  const [f] = tcMessages('08_fw_add', 'to-kernel').map((m) => decodeFilter(m));
  t.like(f, { parent: '1:', protocol: 'ip', pref: 1, kind: 'fw', handle: '0x1', options: { classid: '1:4' } });
});

test('17 and 20: delete requests decode (parent 1:3 handle 99:; root)', (t) => {
  const [d17] = tcMessages('17_del_missing', 'to-kernel').map((m) => decodeQdisc(m));
  t.like(d17, { handle: '99:', parent: '1:3', ifindex: 1 });
  t.is(d17.kind, undefined);
  const [d20] = tcMessages('20_qdisc_del_root', 'to-kernel').map((m) => decodeQdisc(m));
  t.like(d20, { handle: '0:', root: true });
});

test('16: an unknown kind in a request decodes with its name', (t) => {
  const [q] = tcMessages('16_bad_kind', 'to-kernel').map((m) => decodeQdisc(m));
  t.like(q, { kind: 'nosuchqdisc', handle: '5:', root: true, options: {} });
});

/* ---- dumps decode to what tc printed ---- */

function lo<T extends { ifindex: number }>(xs: T[]): T[] {
  // tc was run with "dev lo"; its dump request carries lo's ifindex, and tc drops the other devices.
  return xs.filter((x) => x.ifindex === 1);
}

test('11: "tc -s qdisc show dev lo" — our text is exactly what tc printed', (t) => {
  const c = loadCapture('11_qdisc_dump_stats');
  const req = tcMessages('11_qdisc_dump_stats', 'to-kernel')[0];
  t.is(req.payload.readUInt32LE(4), 1);
  const qs = lo(tcMessages('11_qdisc_dump_stats', 'from-kernel').map((m) => decodeQdisc(m)));
  t.is(qs.map((q) => formatQdiscText(q, { stats: true })).join(''), c.printed);
});

test('11: values match the printed ones field by field (kinds, handles, options, priomap, stats incl. backlog 74b 1p)', (t) => {
  const c = loadCapture('11_qdisc_dump_stats');
  const qs = lo(tcMessages('11_qdisc_dump_stats', 'from-kernel').map((m) => decodeQdisc(m)));
  const blocks = c.printed.trim().split(/\n(?=qdisc )/);
  t.is(qs.length, blocks.length);
  blocks.forEach((b, i) => {
    const q: QdiscEntry = qs[i];
    const m =
      /^qdisc (\S+) (\S+) (?:root|parent (\S+)) (?:refcnt (\d+) )?(.*)\n Sent (\d+) bytes (\d+) pkt \(dropped (\d+), overlimits (\d+) requeues (\d+)\) \n backlog (\d+)b (\d+)p requeues (\d+)$/.exec(
        b,
      );
    t.truthy(m, b);
    const [, kind, handle, parent, refcnt, opts, bytes, pkts, drops, over, req, backlog, qlen, req2] = m!;
    t.is(q.kind, kind);
    t.is(q.handle, handle);
    if (parent) t.is(q.parent, parent);
    else t.true(q.root);
    if (refcnt) t.is(q.refcnt, Number(refcnt));
    t.is(q.bytes, Number(bytes));
    t.is(q.packets, Number(pkts));
    t.is(q.drops, Number(drops));
    t.is(q.overlimits, Number(over));
    t.is(q.requeues, Number(req));
    t.is(q.requeues, Number(req2));
    t.is(q.backlog, Number(backlog));
    t.is(q.qlen, Number(qlen));
    const lim = /^limit (\d+)p$/.exec(opts);
    if (lim) t.is(q.options.limit, Number(lim[1]));
    const pm = /^bands (\d+) priomap ([\d ]+)$/.exec(opts);
    if (pm) {
      t.is(q.options.bands, Number(pm[1]));
      t.deepEqual(q.options.priomap, pm[2].trim().split(' ').map(Number));
    }
    if (kind === 'plug') t.deepEqual(q.options, {}); // sch_plug has no dump op
  });
  const plug = qs.find((q) => q.kind === 'plug')!;
  t.is(plug.backlog, 74);
  t.is(plug.qlen, 1);
});

test('12: "tc filter show dev lo" — our text is exactly what tc printed; classid 1:4 on handle 0x1', (t) => {
  const c = loadCapture('12_filter_dump');
  const fs = lo(tcMessages('12_filter_dump', 'from-kernel').map((m) => decodeFilter(m)));
  t.is(fs.map((f) => formatFilterText(f)).join(''), c.printed);
  const m = /handle (0x[0-9a-f]+) classid (\S+)/.exec(c.printed)!;
  t.is(fs[1].handle, m[1]);
  t.is((fs[1].options as Record<string, unknown>).classid, m[2]);
});

test('13: "tc class show dev lo" — our text is exactly what tc printed (prio classes and their leaves)', (t) => {
  const c = loadCapture('13_class_dump');
  const cs = lo(tcMessages('13_class_dump', 'from-kernel').map((m) => decodeClass(m)));
  t.is(cs.map((x) => formatClassText(x)).join(''), c.printed);
  for (const [i, line] of c.printed.split('\n').filter(Boolean).entries()) {
    const [, kind, handle, parent, leaf] = /^class (\S+) (\S+) parent (\S+) leaf (\S+) $/.exec(line)!;
    t.like(cs[i], { kind, handle, parent, leaf });
  }
});
