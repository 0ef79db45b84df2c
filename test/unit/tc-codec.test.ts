/**
 * The tc codec without a kernel: handles, units, and every kind's options
 * encoded then decoded. Expected values are tc's (iproute2 6.1) notation and
 * numbers, as tc prints them for the same input (e.g. "tc class add ... htb
 * rate 10mbit ceil 20mbit burst 15k" shows "rate 10Mbit ceil 20Mbit burst
 * 15Kb cburst 1600b"; "tc qdisc add ... tbf rate 1mbit burst 10k latency
 * 50ms" shows {"rate":125000,"burst":10240,"lat":50000} in tc -j), or the
 * kernel headers' constants.
 */
import test, { type ExecutionContext } from 'ava';
import fc from 'fast-check';
import { UsageError } from '../../src/netlink/errors.js';
import { attr, nested, str, u32 as u32attr, parseAttributes } from '../../src/netlink/attributes.js';
import type { NetlinkMessage } from '../../src/netlink/message.js';
import {
  parseHandle,
  parseQdiscHandle,
  parseFilterParent,
  formatHandle,
  formatQdiscHandle,
  toQdiscHandle,
  parseRate,
  parseSize,
  parseTime,
  formatRate,
  formatSize,
  formatTime,
  calcXmittime,
  calcXmitsize,
  qdiscKind,
  optionsFromWords,
  filterKind,
  qdiscKindNames,
  filterKindNames,
  decodeQdisc,
  decodeClass,
  decodeFilter,
  formatQdiscText,
  formatClassText,
  encodeTcmsg,
  parseU32Handle,
  formatU32Handle,
  qdiscRequest,
  filterRequest,
  protocolName,
  parseProtocol,
  TCA_KIND,
  TCA_OPTIONS,
  TCA_STATS,
  TCA_STATS2,
  TCA_XSTATS,
  TCA_STATS_BASIC,
  TCA_STATS_QUEUE,
  TCA_STATS_RATE_EST,
  TCA_STATS_APP,
} from '../../src/tc/index.js';

/** A message around a tcmsg and attributes, as the kernel would send it. */
function msg(type: number, t: { ifindex?: number; handle?: number; parent?: number; info?: number }, attrs: Buffer[]): NetlinkMessage {
  return { type, flags: 0, seq: 0, pid: 0, offset: 0, payload: Buffer.concat([encodeTcmsg(t), ...attrs]) };
}

/** Encode a qdisc kind's options then decode them back, through a whole RTM_NEWQDISC message. */
function qdiscRoundTrip(kind: string, options: Record<string, unknown> | string[]): Record<string, unknown> {
  const req = qdiscRequest('add', 1, { kind, parent: 'root', handle: '1:', options });
  return decodeQdisc({ type: req.type, flags: 0, seq: 0, pid: 0, offset: 0, payload: Buffer.concat(req.payload) }).options;
}

/**
 * A table of `t.is` checks: `fn(input)` must be `expected` for every row; each
 * assertion is named after its call (e.g. `parseRate("10mbit")`).
 */
function cases<I, O>(t: ExecutionContext, fn: (input: I) => O, rows: ReadonlyArray<readonly [I, O]>): void {
  for (const [input, expected] of rows) t.is(fn(input), expected, `${fn.name}(${JSON.stringify(input)})`);
}

/* ---------------- handles ---------------- */

test('parseHandle: tc syntax and keywords (pkt_sched.h values)', (t) => {
  cases(t, parseHandle, [
    ['1:4', 0x00010004],
    ['1:', 0x00010000],
    ['1:0', 0x00010000],
    ['ffff:', 0xffff0000],
    ['FFFF:FFF1', 0xfffffff1],
    [':4', 0x00000004],
    ['root', 0xffffffff], // TC_H_ROOT
    ['none', 0], // TC_H_UNSPEC
    ['ingress', 0xfffffff1], // TC_H_INGRESS
    ['clsact', 0xfffffff1], // TC_H_CLSACT == TC_H_INGRESS
    ['0x10004', 0x10004], // a bare number is the raw u32 (tc's get_tc_classid)
    ['1', 1],
    ['0001:000a', 0x0001000a],
  ]);
});

test('parseHandle: bad text is a UsageError naming the text', (t) => {
  for (const bad of ['', ' ', 'x', '1:2:3', '10000:', '1:10000', '-1', '1:g', 'roots', '1 :2', '0x100000000', 'ffff:fffff']) {
    const e = t.throws(() => parseHandle(bad), { instanceOf: UsageError }, bad);
    t.true(e!.message.includes(JSON.stringify(bad)), e!.message);
    t.is(e!.category, 'usage');
  }
});

test('parseQdiscHandle: major only', (t) => {
  cases(t, parseQdiscHandle, [
    ['1:', 0x10000],
    ['1', 0x10000],
    ['1:0', 0x10000],
    ['ffff:', 0xffff0000],
    ['none', 0],
  ]);
  t.throws(() => parseQdiscHandle('1:4'), { instanceOf: UsageError, message: /no minor number; write "1:"/ });
  t.throws(() => parseQdiscHandle(':4'), { instanceOf: UsageError });
  t.throws(() => parseQdiscHandle('root'), { instanceOf: UsageError });
  t.throws(() => toQdiscHandle(0x10004), { instanceOf: UsageError });
  t.is(toQdiscHandle(0x10000), 0x10000);
});

test('parseFilterParent: clsact hooks ingress (ffff:fff2) and egress (ffff:fff3)', (t) => {
  cases(t, parseFilterParent, [
    ['ingress', 0xfffffff2],
    ['egress', 0xfffffff3],
    ['1:', 0x10000],
    ['root', 0xffffffff],
  ]);
});

test('formatHandle / formatQdiscHandle print as tc does', (t) => {
  cases(t, formatHandle, [
    [0xffffffff, 'root'],
    [0, 'none'],
    [4, ':4'],
    [0x10000, '1:'],
    [0x10004, '1:4'],
    [0xfffffff1, 'ffff:fff1'], // tc prints an ingress qdisc's parent like this
    [0x00a000bc, 'a0:bc'],
  ]);
  t.is(formatQdiscHandle(0), '0:'); // noqueue / pfifo_fast
  t.is(formatQdiscHandle(0x00400000), '40:');
});

test('property: formatHandle then parseHandle gives the handle back', (t) => {
  fc.assert(fc.property(fc.integer({ min: 0, max: 0xffffffff }), (h) => parseHandle(formatHandle(h)) === h));
  fc.assert(fc.property(fc.integer({ min: 0, max: 0xffff }), (maj) => parseQdiscHandle(formatQdiscHandle((maj << 16) >>> 0)) === (maj << 16) >>> 0));
  t.pass();
});

test('u32 filter handles: htid:hash:node', (t) => {
  cases(t, parseU32Handle, [
    ['800::800', 0x80000800],
    ['800:', 0x80000000],
    ['1:2:3', 0x00102003],
    ['0x80000800', 0x80000800],
  ]);
  cases(t, formatU32Handle, [
    [0x80000800, '800::800'],
    [0x80000000, '800:'],
    [0, 'none'],
  ]);
  for (const bad of ['800', '1000:', '1:100:', '1:1:1000', '1:2:3:4', 'x:']) t.throws(() => parseU32Handle(bad), { instanceOf: UsageError }, bad);
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 0xfff }),
      fc.integer({ min: 0, max: 0xff }),
      fc.integer({ min: 0, max: 0xfff }),
      (h, b, n) => parseU32Handle(formatU32Handle(((h << 20) | (b << 12) | n) >>> 0)) === ((h << 20) | (b << 12) | n) >>> 0,
    ),
  );
});

/* ---------------- units ---------------- */

test('rates: tc units in, bytes per second out; printed as tc does', (t) => {
  cases(t, parseRate, [
    ['10mbit', 1_250_000],
    ['10Mbit', 1_250_000],
    ['1gbit', 125_000_000],
    ['1kibit', 128],
    ['100kbps', 100_000], // tc: "bps" units are bytes per second
    ['1000', 125], // no unit: bits per second
    [5000, 5000], // a number: bytes per second
  ]);
  cases(t, formatRate, [
    [1_250_000, '10Mbit'],
    [2_500_000, '20Mbit'],
    [125_000, '1Mbit'],
    [200, '1600bit'],
    [187_500, '1500Kbit'],
    [0, '0bit'],
  ]);
  for (const bad of ['10mbitz', '10%', 'fast', '', '-1mbit']) t.throws(() => parseRate(bad), { instanceOf: UsageError }, bad);
  t.throws(() => parseRate(-1), { instanceOf: UsageError });
});

test('sizes and times as tc parses and prints them', (t) => {
  cases(t, parseSize, [
    ['15k', 15360],
    ['15kb', 15360],
    ['1mb', 1048576],
    ['1600', 1600],
    ['8kbit', 1024],
  ]);
  cases(t, formatSize, [
    [15360, '15Kb'],
    [1600, '1600b'],
    [1048576, '1Mb'],
    [10240, '10Kb'],
    [74, '74b'],
  ]);
  cases(t, parseTime, [
    ['50ms', 50_000],
    ['1s', 1_000_000],
    ['250us', 250],
    ['5', 5],
  ]);
  cases(t, formatTime, [
    [50_000, '50ms'],
    [1_000_000, '1s'],
    [1_500_000, '1.5s'],
    [5_000, '5ms'],
    [999, '999us'],
  ]);
  for (const bad of ['1xb', '5GB!', '-3']) t.throws(() => parseSize(bad), { instanceOf: UsageError }, bad);
  t.throws(() => parseSize(2 ** 32), { instanceOf: UsageError });
  t.throws(() => parseTime('5min'), { instanceOf: UsageError });
});

test('psched ticks: tbf rate 1mbit burst 10k round-trips to burst 10240 (tc prints 10Kb)', (t) => {
  const ticks = calcXmittime(125_000, 10_240);
  t.is(ticks, 1_280_000); // 81920 us at 15.625 ticks/us
  t.is(calcXmitsize(125_000, ticks), 10_240);
});

/* ---------------- registry ---------------- */

test('registry: every kind of the issue is registered, each module names its kind', (t) => {
  for (const k of ['prio', 'pfifo', 'bfifo', 'plug', 'htb', 'tbf', 'ingress', 'clsact', 'fq_codel', 'noqueue', 'pfifo_fast']) {
    t.is(qdiscKind(k)?.kind, k, k);
  }
  for (const k of ['fw', 'u32', 'matchall']) t.is(filterKind(k)?.kind, k, k);
  t.true(qdiscKindNames().includes('pfifo_head_drop'));
  t.deepEqual(filterKindNames(), ['flower', 'fw', 'matchall', 'u32']);
});

/* ---------------- qdisc kinds ---------------- */

test('prio: bands, priomap, multiqueue round-trip; bad values are UsageErrors', (t) => {
  t.deepEqual(qdiscRoundTrip('prio', { bands: 4 }), { bands: 4, priomap: [1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1], multiqueue: false });
  t.deepEqual(qdiscRoundTrip('prio', ['bands', '5', 'priomap', '4', '4', '0', 'multiqueue']), {
    bands: 5,
    priomap: [4, 4, 0, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1],
    multiqueue: true,
  });
  t.throws(() => qdiscRoundTrip('prio', { bands: 1 }), { instanceOf: UsageError, message: /bands 1 is out of range/ });
  t.throws(() => qdiscRoundTrip('prio', { bands: 17 }), { instanceOf: UsageError });
  t.throws(() => qdiscRoundTrip('prio', { bands: 2 }), { instanceOf: UsageError, message: /default priomap/ });
  t.throws(() => qdiscRoundTrip('prio', { bands: 3, priomap: [3] }), { instanceOf: UsageError, message: /entry 0 is 3/ });
  t.throws(() => qdiscRoundTrip('prio', ['bands']), { instanceOf: UsageError, message: /needs a value/ });
  t.throws(() => qdiscRoundTrip('prio', ['lanes', '3']), { instanceOf: UsageError, message: /unknown argument "lanes"/ });
});

test('fifos: pfifo packets, bfifo bytes (tc size text), no limit sends no options', (t) => {
  t.deepEqual(qdiscRoundTrip('pfifo', { limit: 50 }), { limit: 50 });
  t.deepEqual(qdiscRoundTrip('bfifo', { limit: '64kb' }), { limit: 65536 });
  t.deepEqual(qdiscRoundTrip('pfifo_head_drop', ['limit', '7']), { limit: 7 });
  t.deepEqual(qdiscRoundTrip('pfifo', {}), {});
  t.throws(() => qdiscRoundTrip('pfifo', { limit: 1.5 }), { instanceOf: UsageError });
  t.throws(() => qdiscRoundTrip('pfifo', { limit: '10k' }), { instanceOf: UsageError });
});

test('plug: limit, actions; a limit of 0 is refused', (t) => {
  t.deepEqual(qdiscRoundTrip('plug', { limit: '1mb' }), { action: 'limit', limit: 1048576 });
  t.deepEqual(qdiscRoundTrip('plug', { action: 'release_one' }), { action: 'release_one', limit: 0 });
  t.deepEqual(qdiscRoundTrip('plug', ['block']), { action: 'buffer', limit: 0 });
  t.deepEqual(qdiscRoundTrip('plug', ['release_indefinite']), { action: 'release_indefinite', limit: 0 });
  t.deepEqual(qdiscRoundTrip('plug', {}), {});
  t.throws(() => qdiscRoundTrip('plug', { limit: 0 }), { instanceOf: UsageError, message: /drop every packet/ });
  t.throws(() => qdiscRoundTrip('plug', ['block', 'release']), { instanceOf: UsageError, message: /one action/ });
  t.throws(() => qdiscRoundTrip('plug', { action: 'pause' }), { instanceOf: UsageError });
});

test('htb qdisc: default (hex, as tc reads it), r2q, direct_qlen', (t) => {
  t.like(qdiscRoundTrip('htb', { default: '20', direct_qlen: 32 }), { r2q: 10, default: '0x20', direct_packets_stat: 0, direct_qlen: 32, version: '0.3' }); // tc prints TC_HTB_PROTOVER (3) as "0.3"
  t.like(qdiscRoundTrip('htb', ['default', '1f', 'r2q', '5']), { r2q: 5, default: '0x1f' });
  t.like(qdiscRoundTrip('htb', {}), { default: '0' });
});

function classRoundTrip(kind: string, options: Record<string, unknown> | string[]): Record<string, unknown> {
  const desc = qdiscKind(kind)!;
  const o = Array.isArray(options) ? optionsFromWords('class', kind, options)! : options;
  const attrs = desc.encodeClassOptions!(o);
  return decodeClass(msg(40, { handle: 0x10001, parent: 0xffffffff }, [str(TCA_KIND, kind), ...attrs])).options;
}

test('htb class: rate/ceil/burst as tc computes them (rate 10mbit ceil 20mbit burst 15k -> 10Mbit 20Mbit 15Kb 1600b)', (t) => {
  const o = classRoundTrip('htb', { rate: '10mbit', ceil: '20mbit', burst: '15k' });
  t.like(o, { rate: 1_250_000, ceil: 2_500_000, burst: 15_360, cburst: 1600, prio: 0, quantum: 0 });
  const text = qdiscKind('htb')!.formatClassOptions!({ ...o, level: 7 });
  t.is(text, 'rate 10Mbit ceil 20Mbit burst 15Kb cburst 1600b ');
  const leaf = classRoundTrip('htb', ['rate', '1mbit', 'ceil', '2mbit', 'prio', '3', 'quantum', '1500']);
  t.like(leaf, { rate: 125_000, ceil: 250_000, burst: 1600, cburst: 1600, prio: 3, quantum: 1500 });
  t.is(qdiscKind('htb')!.formatClassOptions!(leaf), 'prio 3 rate 1Mbit ceil 2Mbit burst 1600b cburst 1600b ');
});

test('htb class: rates of 2^32 bytes/s and more go in TCA_HTB_RATE64/CEIL64 and come back exact', (t) => {
  // (at these rates tc's default bursts last under 1 us, which the buffer fields hold as 0: give bursts; see tc-options)
  const o = classRoundTrip('htb', { rate: '40gbit', ceil: '100gbit', burst: '64k', cburst: '64k' });
  t.is(o.rate, 5_000_000_000);
  t.is(o.ceil, 12_500_000_000);
  t.true((o.burst as number) > 0 && (o.cburst as number) > 0); // (the exact text is compared with tc's in live tc-qdisc)
  t.throws(() => classRoundTrip('htb', {}), { instanceOf: UsageError, message: /"rate" is required/ });
  t.throws(() => classRoundTrip('htb', ['rate', '1mbit', 'prio', '9']), { instanceOf: UsageError });
});

test("tbf: rate 1mbit burst 10k latency 50ms decodes to tc -j's {rate 125000, burst 10240, lat 50000}", (t) => {
  t.like(qdiscRoundTrip('tbf', { rate: '1mbit', burst: '10k', latency: '50ms' }), { rate: 125_000, burst: 10_240, lat: 50_000 });
  t.like(qdiscRoundTrip('tbf', ['rate', '8mbit', 'burst', '32k', 'limit', '100k']), { rate: 1_000_000, burst: 32_768, limit: 102_400 });
  const pk = qdiscRoundTrip('tbf', { rate: '1mbit', burst: '10k', latency: '50ms', peakrate: '2mbit', mtu: 1514 });
  t.like(pk, { peakrate: 250_000, minburst: 1514 });
  t.throws(() => qdiscRoundTrip('tbf', { rate: '1mbit' }), { instanceOf: UsageError, message: /"burst", "limit" or "latency" required/ });
  t.throws(() => qdiscRoundTrip('tbf', { rate: '1mbit', burst: '10k', limit: 1, latency: 1 }), { instanceOf: UsageError, message: /not both/ });
  t.throws(() => qdiscRoundTrip('tbf', { rate: '1mbit', burst: '10k', latency: '5ms', peakrate: '2mbit' }), { instanceOf: UsageError, message: /"mtu"/ });
});

test('fq_codel: options round-trip in microseconds and bytes', (t) => {
  t.deepEqual(
    qdiscRoundTrip('fq_codel', { limit: 1000, flows: 512, target: '5ms', interval: '100ms', ecn: true, memory_limit: '32mb', quantum: 1514, drop_batch: 64 }),
    { limit: 1000, flows: 512, quantum: 1514, target: 5000, interval: 100000, memory_limit: 33554432, ecn: true, drop_batch: 64 },
  );
  t.deepEqual(qdiscRoundTrip('fq_codel', ['noecn', 'ce_threshold', '2ms']), { ce_threshold: 2000 });
  t.is(
    qdiscKind('fq_codel')!.formatOptions!({
      limit: 10240,
      flows: 1024,
      quantum: 1514,
      target: 5000,
      interval: 100000,
      memory_limit: 33554432,
      ecn: true,
      drop_batch: 64,
    }),
    'limit 10240p flows 1024 quantum 1514 target 5ms interval 100ms memory_limit 32Mb ecn drop_batch 64 ',
  );
});

test('ingress and clsact: default parent and handle, no options; noqueue has none either', (t) => {
  for (const kind of ['ingress', 'clsact']) {
    const req = qdiscRequest('add', 3, { kind });
    const tcm = req.payload[0];
    t.is(tcm.readUInt32LE(12), 0xfffffff1, kind); // TC_H_INGRESS / TC_H_CLSACT
    t.is(tcm.readUInt32LE(8), 0xffff0000, kind);
    t.is(req.payload.length, 2); // tcmsg + TCA_KIND
  }
  t.throws(() => qdiscRequest('add', 3, { kind: 'ingress', options: ['x'] }), { instanceOf: UsageError });
  t.throws(() => qdiscRequest('add', 3, { kind: 'pfifo' }), { instanceOf: UsageError, message: /give a parent/ });
  t.throws(() => qdiscRequest('add', 3, { parent: 'root' }), { instanceOf: UsageError, message: /kind is required/ });
  t.throws(() => qdiscRequest('add', 3, { kind: 'nosuch', parent: 'root', options: { a: 1 } }), { instanceOf: UsageError, message: /not known to synplug/ });
});

/* ---------------- filters ---------------- */

function filterRoundTrip(kind: string, handle: string | number | undefined, options: Record<string, unknown> | string[]) {
  const req = filterRequest('add', 1, { kind, parent: '1:', protocol: 'ip', pref: 3, handle, options });
  return decodeFilter({ type: req.type, flags: 0, seq: 0, pid: 0, offset: 0, payload: Buffer.concat(req.payload) });
}

test('fw: classid, mask, indev round-trip in tc -j fields', (t) => {
  const f = filterRoundTrip('fw', 1, { classid: '1:4', mask: 0xff, indev: 'eth0' });
  t.like(f, { parent: '1:', protocol: 'ip', pref: 3, kind: 'fw', handle: '0x1' });
  t.deepEqual(f.options, { fw: { mark: '0x1', mask: '0xff' }, classid: '1:4', indev: 'eth0' });
  t.throws(() => filterRoundTrip('fw', '1/0xff', { classid: '1:4' }), { instanceOf: UsageError, message: /mask/ });
});

test('u32: matches pack into keys as tc does (match ip dst 169.254.0.1/32 match ip dport 80 0xffff -> a9fe0001/ffffffff at 16, 00000050/0000ffff at 20)', (t) => {
  const f = filterRoundTrip('u32', '800::800', ['match', 'ip', 'dst', '169.254.0.1/32', 'match', 'ip', 'dport', '80', '0xffff', 'classid', '1:20']);
  t.like(f, { kind: 'u32', handle: '800::800' });
  t.like(f.options, { fh: '800::800', order: 2048, flowid: '1:20', terminal: true });
  t.deepEqual(f.options!.match, [
    { value: 'a9fe0001', mask: 'ffffffff', offmask: '', off: 16 },
    { value: '50', mask: 'ffff', offmask: '', off: 20 },
  ]);
  const text = filterKind('u32')!.formatOptions!(f.options!);
  t.is(text, 'fh 800::800 order 2048 *flowid 1:20 \n  match a9fe0001/ffffffff at 16\n  match 00000050/0000ffff at 20');
});

test('u32: matches on the same word merge; contradictions and misalignment are UsageErrors', (t) => {
  const f = filterRoundTrip('u32', undefined, {
    match: [
      { type: 'ip', field: 'sport', value: 1 },
      { type: 'ip', field: 'dport', value: 2 },
      { type: 'u8', value: 6, mask: 0xff, at: 9 },
    ],
  });
  t.deepEqual(f.options!.match, [
    { value: '10002', mask: 'ffffffff', offmask: '', off: 20 },
    { value: '60000', mask: 'ff0000', offmask: '', off: 8 }, // byte 9 is bits 16..23 of the word at 8 (tc's pack_key8)
  ]);
  t.throws(() => filterRoundTrip('u32', undefined, ['match', 'ip', 'dport', '1', '0xffff', 'match', 'ip', 'dport', '2', '0xffff']), {
    instanceOf: UsageError,
    message: /contradict/,
  });
  t.throws(() => filterRoundTrip('u32', undefined, ['match', 'u32', '1', '1', 'at', '2']), { instanceOf: UsageError, message: /multiple of 4/ });
  t.throws(() => filterRoundTrip('u32', undefined, ['match', 'u16', '1', '1', 'at', '3']), { instanceOf: UsageError });
  t.throws(() => filterRoundTrip('u32', undefined, ['match', 'ip', 'dst', '169.254.0.300']), { instanceOf: UsageError });
  t.deepEqual(filterRoundTrip('u32', undefined, ['divisor', '256']).options, { ht_divisor: 256 });
  const nh = filterRoundTrip('u32', undefined, ['match', 'u32', '0x1', '0xff', 'at', 'nexthdr+4', 'link', '1:', 'ht', '800:']);
  t.like(nh.options, { link: '1:', key_ht: '800', bkt: '0' });
  t.deepEqual(nh.options!.match, [{ value: '1', mask: 'ff', offmask: 'nexthdr+', off: 4 }]);
});

test('matchall: classid and flags decode in tc -j fields (handle printed as a number)', (t) => {
  const f = filterRoundTrip('matchall', 1, { classid: '1:1', skip_sw: true });
  t.deepEqual(f.options, { handle: 1, flowid: '1:1', skip_sw: true });
  t.throws(() => filterRoundTrip('matchall', 1, { skip_hw: true, skip_sw: true }), { instanceOf: UsageError });
});

test('filter protocols print as tc does', (t) => {
  t.is(protocolName(0x0800), 'ip');
  t.is(protocolName(0x86dd), 'ipv6');
  t.is(protocolName(0x0003), 'all');
  t.is(protocolName(0x8100), '802.1Q');
  t.is(protocolName(0x1234), '[4660]');
  t.is(parseProtocol('ip'), 0x0800);
  t.is(parseProtocol('0x86dd'), 0x86dd);
  t.throws(() => parseProtocol('ipx6'), { instanceOf: UsageError });
  const f = filterRoundTrip('fw', 2, { classid: '1:1' });
  t.is(f.protocol, 'ip');
});

/* ---------------- generic decoding ---------------- */

test('an unknown kind decodes as a generic entry with its raw option bytes in hex', (t) => {
  const q = decodeQdisc(
    msg(36, { ifindex: 2, handle: 0x50000, parent: 0xffffffff, info: 1 }, [str(TCA_KIND, 'cake'), attr(TCA_OPTIONS, Buffer.from('deadbeef01', 'hex'))]),
  );
  t.deepEqual(q, { kind: 'cake', handle: '5:', ifindex: 2, root: true, options: { raw: 'deadbeef01' } });
  t.is(formatQdiscText(q), 'qdisc cake 5: root options deadbeef01 \n');
  const c = decodeClass(msg(40, { handle: 0x50001, parent: 0x50000 }, [str(TCA_KIND, 'cake'), attr(TCA_OPTIONS, Buffer.from([1, 2]))]));
  t.deepEqual(c.options, { raw: '0102' });
  // (cls_basic: a classifier this library does not know)
  const f = decodeFilter(msg(44, { handle: 7, parent: 0x10000, info: (1 << 16) | 0x0008 }, [str(TCA_KIND, 'basic'), attr(TCA_OPTIONS, Buffer.from([9]))]));
  t.like(f, { kind: 'basic', handle: '0x7', protocol: 'ip', pref: 1, options: { raw: '09' } });
});

test('stats: TCA_STATS2 with a rate estimator; legacy TCA_STATS alone (no requeues); text as tc prints each', (t) => {
  const basic = Buffer.alloc(16);
  basic.writeUInt32LE(1500, 0);
  basic.writeUInt32LE(10, 8);
  const queue = Buffer.alloc(20);
  queue.writeUInt32LE(2, 0);
  queue.writeUInt32LE(3000, 4);
  queue.writeUInt32LE(1, 8);
  queue.writeUInt32LE(4, 12);
  queue.writeUInt32LE(5, 16);
  const est = Buffer.alloc(8);
  est.writeUInt32LE(1000, 0);
  est.writeUInt32LE(7, 4);
  const q = decodeQdisc(
    msg(36, { handle: 0x10000, parent: 0xffffffff, info: 1 }, [
      str(TCA_KIND, 'pfifo'),
      u32attr(TCA_OPTIONS, 100),
      nested(TCA_STATS2, [attr(TCA_STATS_BASIC, basic), attr(TCA_STATS_RATE_EST, est), attr(TCA_STATS_QUEUE, queue)]),
    ]),
  );
  t.like(q, { bytes: 1500, packets: 10, qlen: 2, backlog: 3000, drops: 1, requeues: 4, overlimits: 5, rate: 1000, pps: 7 });
  t.is(
    formatQdiscText(q, { stats: true }),
    'qdisc pfifo 1: root limit 100p\n Sent 1500 bytes 10 pkt (dropped 1, overlimits 5 requeues 4) \n rate 8Kbit 7pps backlog 3000b 2p requeues 4\n',
  );
  const legacy = Buffer.alloc(36);
  legacy.writeUInt32LE(999, 0);
  legacy.writeUInt32LE(9, 8);
  legacy.writeUInt32LE(2, 12);
  legacy.writeUInt32LE(3, 16);
  legacy.writeUInt32LE(1, 28);
  legacy.writeUInt32LE(100, 32);
  const l = decodeQdisc(msg(36, { handle: 0x10000, parent: 0xffffffff, info: 1 }, [str(TCA_KIND, 'pfifo'), attr(TCA_STATS, legacy)]));
  t.like(l, { bytes: 999, packets: 9, drops: 2, overlimits: 3, qlen: 1, backlog: 100 });
  t.is(l.requeues, undefined);
  t.is(formatQdiscText(l, { stats: true }), 'qdisc pfifo 1: root \n Sent 999 bytes 9 pkts (dropped 2, overlimits 3) \n backlog 100b 1p \n');
});

test('htb class xstats (TCA_STATS_APP) decode flat, as tc -j prints xstats, and print as tc does', (t) => {
  const x = Buffer.alloc(20);
  x.writeUInt32LE(1, 0);
  x.writeUInt32LE(2, 4);
  x.writeInt32LE(192000, 12);
  x.writeInt32LE(-5, 16);
  const attrs = [
    str(TCA_KIND, 'htb'),
    ...qdiscKind('htb')!.encodeClassOptions!({ rate: '10mbit', ceil: '20mbit', burst: '15k' }),
    nested(TCA_STATS2, [attr(TCA_STATS_BASIC, Buffer.alloc(16)), attr(TCA_STATS_QUEUE, Buffer.alloc(20)), attr(TCA_STATS_APP, x)]),
    attr(TCA_XSTATS, x),
  ];
  const c = decodeClass(msg(40, { handle: 0x10001, parent: 0xffffffff }, attrs));
  t.like(c, { handle: '1:1', root: true, lended: 1, borrowed: 2, giants: 0, tokens: 192000, ctokens: -5 });
  t.is(
    formatClassText(c, { stats: true }),
    'class htb 1:1 root prio 0 rate 10Mbit ceil 20Mbit burst 15Kb cburst 1600b \n Sent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0) \n backlog 0b 0p requeues 0\n lended: 1 borrowed: 2 giants: 0\n tokens: 192000 ctokens: -5\n\n',
  );
  t.true(parseAttributes(attrs[1]).items.length === 1);
});
