/**
 * Issue #11 defects 1 and 6 in the tc layer, without a kernel:
 * - each kind's option type is accepted by the operations that take it,
 *   which send what the request builders build (the specs are discriminated
 *   by `kind`; the `@ts-expect-error` lines are checked by
 *   `npm run typecheck`, which covers test/);
 * - an unknown option key or a value of the wrong type is a UsageError
 *   (checked by the kind registry from each kind's `optionTypes`);
 * - htb rates and bursts the kernel's fields cannot hold are refused;
 * - a listing given a `dev` and a different `ifindex` is refused.
 */
import test from 'ava';
import { NetlinkConnection, FakeTransport } from '../../src/netlink/connection.js';
import { parseMessages, encodeMessage, NLMSG_ERROR, NLM_F_CREATE, NLM_F_EXCL } from '../../src/netlink/message.js';
import { RTM_NEWQDISC, RTM_NEWTCLASS } from '../../src/netlink/route/constants.js';
import { UsageError } from '../../src/netlink/errors.js';
import { loadCapture } from '../helpers/captures.js';
import {
  addQdisc,
  addClass,
  addFilter,
  listQdiscs,
  listClasses,
  listFilters,
  qdiscRequest,
  classRequest,
  filterRequest,
  decodeQdisc,
  decodeClass,
  decodeFilter,
  qdiscKindNames,
  qdiscKind,
  filterKind,
  type TcConnection,
  type HtbOptions,
  type HtbClassOptions,
  type U32Options,
  type FwOptions,
  type PrioOptions,
} from '../../src/tc/index.js';

type Sent = Parameters<TcConnection['request']>[0];
/** The payload of a request as one buffer. */
const bytesOf = (p: Sent['payload']): Buffer => (Buffer.isBuffer(p) ? p : Buffer.concat(p ?? []));

/** A connection that acks every request and keeps what was sent. */
function recorder(): { conn: TcConnection; sent: Sent[] } {
  const sent: Sent[] = [];
  const conn: TcConnection = {
    request: (msg) => {
      sent.push(msg);
      return Promise.resolve([]);
    },
    dumpAll: () => Promise.reject(new Error('no dump expected')),
    dumpEach: () => Promise.reject(new Error('no dump expected')),
  };
  return { conn, sent };
}

test('an HtbOptions value is accepted where kind htb is given (TS2322 before), and encodes its default class', async (t) => {
  const o: HtbOptions = { default: 0x10 };
  const req = qdiscRequest('add', 1, { parent: 'root', handle: '1:', kind: 'htb', options: o });
  const q = decodeQdisc({ type: req.type, flags: 0, seq: 0, pid: 0, offset: 0, payload: Buffer.concat(req.payload) });
  t.like(q.options, { default: '0x10' });
  const c: HtbClassOptions = { rate: '1mbit', ceil: '2mbit' };
  const creq = classRequest('add', 1, { parent: '1:', classid: '1:10', kind: 'htb', options: c });
  t.like(decodeClass({ type: creq.type, flags: 0, seq: 0, pid: 0, offset: 0, payload: Buffer.concat(creq.payload) }).options, { rate: 125_000, ceil: 250_000 });
  const p: PrioOptions = { bands: 4 };
  t.is(qdiscRequest('add', 1, { parent: 'root', handle: '1:', kind: 'prio', options: p }).kind, 'prio');
  // the operations take them as well, and send the same requests as the builders
  const { conn, sent } = recorder();
  await addQdisc(conn, { ifindex: 3, parent: 'root', handle: '1:', kind: 'htb', options: o });
  await addClass(conn, { ifindex: 3, parent: '1:', classid: '1:1', kind: 'htb', options: c });
  t.is(sent.length, 2);
  t.like(sent[0], { type: RTM_NEWQDISC, flags: NLM_F_CREATE | NLM_F_EXCL });
  t.like(sent[1], { type: RTM_NEWTCLASS, flags: NLM_F_CREATE | NLM_F_EXCL });
  t.deepEqual(bytesOf(sent[0].payload), Buffer.concat(qdiscRequest('add', 3, { parent: 'root', handle: '1:', kind: 'htb', options: o }).payload));
  t.deepEqual(bytesOf(sent[1].payload), Buffer.concat(classRequest('add', 3, { parent: '1:', classid: '1:1', kind: 'htb', options: c }).payload));
  t.like(decodeQdisc({ type: sent[0].type, flags: 0, seq: 0, pid: 0, offset: 0, payload: bytesOf(sent[0].payload) }), {
    kind: 'htb',
    handle: '1:',
    ifindex: 3,
    root: true,
    options: { default: '0x10' },
  });
});

test('a U32Options / FwOptions value is accepted where kind u32 / fw is given, and sent as given', async (t) => {
  const u: U32Options = { classid: '1:1' };
  const f: FwOptions = { classid: '1:4' };
  const decoded = (req: Pick<Sent, 'type' | 'payload'>) => decodeFilter({ type: req.type, flags: 0, seq: 0, pid: 0, offset: 0, payload: bytesOf(req.payload) });
  t.like(decoded(filterRequest('add', 1, { parent: '1:', protocol: 'ip', pref: 1, kind: 'u32', options: u })), {
    kind: 'u32',
    protocol: 'ip',
    pref: 1,
    options: { flowid: '1:1' },
  });
  t.like(decoded(filterRequest('add', 1, { parent: '1:', protocol: 'ip', pref: 1, handle: 1, kind: 'fw', options: f })), {
    kind: 'fw',
    handle: '0x1',
    options: { classid: '1:4' },
  });
  const { conn, sent } = recorder();
  await addFilter(conn, { ifindex: 2, parent: '1:', protocol: 'ip', pref: 1, kind: 'u32', options: u });
  t.is(sent.length, 1);
  t.like(decoded(sent[0]), { kind: 'u32', ifindex: 2, parent: '1:', protocol: 'ip', pref: 1, options: { flowid: '1:1' } });
});

test("the specs are discriminated by kind: another kind's options, or a misspelt key, do not type-check", (t) => {
  const c: HtbClassOptions = { rate: '1mbit' };
  const p: PrioOptions = { bands: 3 };
  // @ts-expect-error prio's options given for an htb qdisc
  t.throws(() => qdiscRequest('add', 1, { parent: 'root', handle: '1:', kind: 'htb', options: p }), { instanceOf: UsageError });
  // @ts-expect-error a misspelt htb option
  t.throws(() => qdiscRequest('add', 1, { parent: 'root', handle: '1:', kind: 'htb', options: { defualt: 5 } }), { instanceOf: UsageError });
  // @ts-expect-error htb class options given for a qdisc
  t.throws(() => qdiscRequest('add', 1, { parent: 'root', handle: '1:', kind: 'htb', options: c }), { instanceOf: UsageError });
  // a kind synplug does not type takes any object (the kernel or the kind checks it)
  const kind: string = 'sfq';
  t.throws(() => qdiscRequest('add', 1, { parent: 'root', handle: '1:', kind, options: { perturb: 10 } }), {
    instanceOf: UsageError,
    message: /not known to synplug/,
  });
});

test('an unknown option key is a UsageError naming the key and what the kind takes: htb default, htb class ciel, plug, fw', (t) => {
  const bad = (f: () => unknown, message: string) => t.throws(f, { instanceOf: UsageError, message });
  bad(
    () => qdiscRequest('add', 1, { parent: 'root', handle: '1:', kind: 'htb', options: { defualt: 5 } as HtbOptions }),
    'qdisc kind \'htb\' has no option "defualt" (it takes default, r2q, direct_qlen, offload)',
  );
  bad(
    () => classRequest('add', 1, { parent: '1:', classid: '1:1', kind: 'htb', options: { rate: '1mbit', ciel: '2mbit' } as HtbClassOptions }),
    'class kind \'htb\' has no class option "ciel" (it takes rate, ceil, burst, cburst, prio, quantum, mtu, mpu, overhead, linklayer)',
  );
  bad(
    () => qdiscRequest('add', 1, { parent: '1:4', handle: '40:', kind: 'plug', options: { limt: 5 } as object }),
    'qdisc kind \'plug\' has no option "limt" (it takes action, limit)',
  );
  bad(
    () => qdiscRequest('add', 1, { kind: 'clsact', options: { x: 1 } as unknown as Record<string, never> }),
    'qdisc kind \'clsact\' has no option "x" (it takes none)',
  );
  bad(
    () => filterRequest('add', 1, { parent: '1:', kind: 'fw', options: { classid: '1:4', mark: 1 } as FwOptions }),
    'filter kind \'fw\' has no option "mark" (it takes classid, mask, indev)',
  );
  // a key given as undefined counts as absent
  t.notThrows(() => qdiscRequest('add', 1, { parent: 'root', handle: '1:', kind: 'htb', options: { default: 1, r2q: undefined } }));
});

test('a value of the wrong type or shape is a UsageError, never a TypeError', (t) => {
  const bad = (f: () => unknown, message: string | RegExp) => t.throws(f, { instanceOf: UsageError, message });
  bad(
    () => classRequest('add', 1, { parent: '1:', classid: '1:1', kind: 'htb', options: { rate: { mbit: 1 } } as unknown as HtbClassOptions }),
    'class kind \'htb\': option "rate" must be a number or string, not an object',
  );
  bad(
    () => qdiscRequest('add', 1, { parent: 'root', handle: '1:', kind: 'prio', options: { priomap: '1 2 2' } as unknown as PrioOptions }),
    'qdisc kind \'prio\': option "priomap" must be an array, not a string ("1 2 2")',
  );
  bad(
    () => qdiscRequest('add', 1, { parent: 'root', handle: '1:', kind: 'htb', options: { offload: 'yes' } as unknown as HtbOptions }),
    'qdisc kind \'htb\': option "offload" must be a boolean, not a string ("yes")',
  );
  bad(
    () => qdiscRequest('add', 1, { parent: 'root', handle: '1:', kind: 'htb', options: 'default 10' as unknown as HtbOptions }),
    /options must be an object \(or a list of tc words\), not a string/,
  );
  bad(
    () => filterRequest('add', 1, { parent: '1:', kind: 'fw', options: null as unknown as FwOptions }),
    /options must be an object \(or a list of tc words\), not null/,
  );
});

test('every qdisc kind and the filter kinds of this layer declare the type of each option', (t) => {
  for (const k of qdiscKindNames()) {
    const d = qdiscKind(k)!;
    t.truthy(d.optionTypes, k);
    if (d.encodeClassOptions) t.truthy(d.classOptionTypes, k);
  }
  for (const k of ['fw', 'matchall']) t.truthy(filterKind(k)!.optionTypes, k);
});

test('htb: a burst too short at its rate for the kernel\'s buffer field (it would read back as "burst 0b") is refused', (t) => {
  // 40gbit = 5e9 bytes/s: tc's default burst (rate/HZ + mtu = 1605 bytes) lasts 0.32 us: 0 psched ticks
  t.throws(() => classRequest('add', 1, { parent: '1:', classid: '1:1', kind: 'htb', options: { rate: '40gbit' } }), {
    instanceOf: UsageError,
    message:
      /^htb class: at rate 40Gbit, the default burst \(1605 bytes: rate \/ HZ \+ mtu, as tc computes it\) is too short for the kernel's buffer field \(psched ticks, struct tc_htb_opt\): it would read back as "burst 0b"; give a burst of at least \d+ bytes$/,
  });
  t.throws(() => classRequest('add', 1, { parent: '1:', classid: '1:1', kind: 'htb', options: { rate: '1gbit', burst: 100 } }), {
    instanceOf: UsageError,
    message: /at rate 1Gbit, a burst of 100 bytes is too short .*"burst 0b"/,
  });
  t.throws(() => classRequest('add', 1, { parent: '1:', classid: '1:1', kind: 'htb', options: { rate: '1mbit', ceil: '100gbit' } }), {
    instanceOf: UsageError,
    message: /at ceil 100Gbit, the default cburst .* cbuffer field .*"cburst 0b"/,
  });
  // the smallest burst the message names is accepted, and reads back as a burst above 0 bytes
  const e = t.throws(() => classRequest('add', 1, { parent: '1:', classid: '1:1', kind: 'htb', options: { rate: '40gbit' } }));
  const min = Number(/at least (\d+) bytes/.exec(e!.message)![1]);
  const req = classRequest('add', 1, { parent: '1:', classid: '1:1', kind: 'htb', options: { rate: '40gbit', burst: min, cburst: min } });
  const back = decodeClass({ type: req.type, flags: 0, seq: 0, pid: 0, offset: 0, payload: Buffer.concat(req.payload) }).options;
  t.true((back.burst as number) > 0 && (back.cburst as number) > 0);
  t.throws(() => classRequest('add', 1, { parent: '1:', classid: '1:1', kind: 'htb', options: { rate: '40gbit', burst: min - 1, cburst: min } }), {
    instanceOf: UsageError,
  });
  t.notThrows(() =>
    classRequest('add', 1, { parent: '1:', classid: '1:1', kind: 'htb', options: { rate: '40gbit', burst: '64k', ceil: '100gbit', cburst: '64k' } }),
  );
});

test('htb: a burst longer than a u32 of psched ticks, and a rate over u64 bytes/s, are refused', (t) => {
  t.throws(() => classRequest('add', 1, { parent: '1:', classid: '1:1', kind: 'htb', options: { rate: 8, burst: '4gb' } }), {
    instanceOf: UsageError,
    message: /at rate 64bit, a burst of 4294967296 bytes|invalid htb burst/,
  });
  t.throws(() => classRequest('add', 1, { parent: '1:', classid: '1:1', kind: 'htb', options: { rate: 8, burst: '3gb' } }), {
    instanceOf: UsageError,
    message: /lasts longer than the kernel's buffer field \(a u32 of psched ticks/,
  });
  t.throws(() => classRequest('add', 1, { parent: '1:', classid: '1:1', kind: 'htb', options: { rate: 2 ** 65, burst: '1gb' } }), {
    instanceOf: UsageError,
    message: /beyond what the kernel's TCA_HTB_RATE64 holds/,
  });
  t.throws(() => classRequest('add', 1, { parent: '1:', classid: '1:1', kind: 'htb', options: { rate: '1mbit', ceil: '1e30bit' } }), {
    instanceOf: UsageError,
    message: /ceil .* beyond what the kernel's TCA_HTB_CEIL64 holds/,
  });
});

/** The answer to an RTM_GETLINK for 'lo' (index 1): one RTM_NEWLINK from capture 13's link dump, then an ack. */
function loLookup(): Buffer[] {
  const c = loadCapture('13_class_dump');
  const ds = c.datagrams;
  const i = ds.findIndex((d) => d.direction === 'to-kernel' && parseMessages(d.bytes)[0].type === 18);
  const d = ds[i + 1].bytes;
  const m = parseMessages(d)[0];
  const one = Buffer.from(d.subarray(m.offset, m.offset + 16 + m.payload.length));
  one.writeUInt16LE(0, 6);
  t0 = m.payload.readInt32LE(4);
  return [one, encodeMessage({ type: NLMSG_ERROR, flags: 0, payload: Buffer.alloc(20) })];
}
let t0 = 0;

test('listQdiscs / listClasses / listFilters given dev and a different ifindex are refused (they named two devices)', async (t) => {
  for (const list of [listQdiscs, listClasses, listFilters]) {
    const fake = new FakeTransport([loLookup()]);
    const conn = new NetlinkConnection(fake, 0, { timeoutMs: 1000 });
    await t.throwsAsync(list(conn, { dev: 'lo', ifindex: t0 + 1 }), {
      instanceOf: UsageError,
      message: `dev 'lo' has index ${t0}, not ${t0 + 1}: give the device by name or by index, or both for the same device`,
    });
    conn.close();
    t.is(fake.sent.length, 1); // the lookup only, no dump
  }
});

test("a filter's priority may be given as pref or prio (tc takes both words); both must agree", (t) => {
  const info = (spec: { pref?: number; prio?: number }) => filterRequest('add', 1, { parent: '1:', protocol: 'ip', kind: 'u32', ...spec }).info >>> 16;
  t.is(info({ pref: 5 }), 5);
  t.is(info({ prio: 5 }), 5);
  t.is(info({ pref: 5, prio: 5 }), 5);
  t.throws(() => info({ pref: 5, prio: 6 }), { instanceOf: UsageError, message: 'filter: pref 5 and prio 6 differ; they are the same field, give one' });
  t.throws(() => info({ prio: 70000 }), { instanceOf: UsageError, message: 'filter pref 70000 is out of range (0..65535)' });
});

test('filter parents as tc names them: root, a handle, ingress/egress hooks, the ingress qdisc, a u32', (t) => {
  const parent = (p: string | number) => filterRequest('add', 1, { parent: p, protocol: 'ip', pref: 1, kind: 'u32' }).parent;
  t.is(parent('root'), 0xffffffff);
  t.is(parent('1:'), 0x00010000);
  t.is(parent('1:4'), 0x00010004);
  t.is(parent('ingress'), 0xfffffff2);
  t.is(parent('egress'), 0xfffffff3);
  t.is(parent('ffff:'), 0xffff0000);
  t.is(parent('ffff:fff1'), 0xfffffff1);
  t.is(parent(0xfffffff3), 0xfffffff3);
  t.throws(() => parent('1:x'), { instanceOf: UsageError, message: /invalid filter parent "1:x"/ });
  t.throws(() => parent(-1), { instanceOf: UsageError, message: /invalid filter parent -1: not a u32/ });
});
