/**
 * Live differential: after a sequence of changes (and real traffic, so the
 * counters are not all zero), our list output as JSON equals tc's for the
 * same state, field for field where both know the field.
 *
 * - qdiscs: `tc -j -s qdisc show dev X`
 * - filters: `tc -j filter show dev X [parent P]` (tc repeats the "match" key
 *   of u32 options; it is read here with a parser that keeps repeats, and
 *   compared with our `match` array)
 * - classes: iproute2 6.1 ignores -j for `tc class show` (its print_class
 *   writes text only), so `tc -s class show dev X` is the oracle: parsed
 *   field by field (numbers; rates, sizes back from tc's units, within tc's
 *   rounding), and compared as whole text with our text output.
 *
 * Fields tc prints that we deliberately do not: none. (The test fails if
 * tc prints a field our entry lacks.) Fields we add that tc does not print:
 * `ifindex` and `dev` (tc omits dev when given one), filter `handle` (tc
 * prints it inside options in each kind's own way), u32 `terminal` (tc
 * prints it as a "*" before flowid in text only), htb qdisc `version` (tc
 * only with -d), tbf `limit` (tc only when the latency is negative or with -r).
 *
 * Devices: sp-tcd*.
 */
import test, { type ExecutionContext } from 'ava';
import { createSocket } from 'node:dgram';
import { NetlinkConnection } from '../../src/netlink/connection.js';
import { NETLINK_ROUTE } from '../../src/netlink/message.js';
import {
  addQdisc,
  replaceQdisc,
  deleteQdisc,
  listQdiscs,
  addClass,
  changeClass,
  deleteClass,
  listClasses,
  addFilter,
  deleteFilter,
  listFilters,
  formatClassText,
  type ClassEntry,
} from '../../src/tc/index.js';
import { run, deleteLinks } from '../helpers/tools.js';
// tc -j repeats "match": a parser that keeps a repeated key's values as an array
import { parseTcJson } from '../helpers/tc-inbound.js';

const VA = 'sp-tcd0';
const VB = 'sp-tcd1';
const QUIET = 'sp-tcd2';
let conn: NetlinkConnection;

function tcJson(...args: string[]): Array<Record<string, unknown>> {
  const out = run('tc', '-j', ...args).trim();
  return out === '' ? [] : (parseTcJson(out) as Array<Record<string, unknown>>);
}

/** Each field of tc's item equals ours; a field tc has and we lack fails. Returns the number of fields compared. */
function fieldForField(t: ExecutionContext, ours: Record<string, unknown>, theirs: Record<string, unknown>, what: string): number {
  let n = 0;
  for (const [k, v] of Object.entries(theirs)) {
    t.true(k in ours, `${what}: tc prints "${k}", we do not`);
    if (k === 'options') {
      n += fieldForField(t, ours.options as Record<string, unknown>, v as Record<string, unknown>, `${what}.options`);
      continue;
    }
    // tc repeats "match" once per key; a single key stays a plain object there.
    const expected = k === 'match' && !Array.isArray(v) ? [v] : v;
    t.deepEqual(ours[k], expected, `${what}.${k}`);
    n++;
  }
  return n;
}

async function compareQdiscs(t: ExecutionContext, dev: string): Promise<number> {
  const theirs = tcJson('-s', 'qdisc', 'show', 'dev', dev);
  const ours = await listQdiscs(conn, { dev });
  t.is(ours.length, theirs.length, `${dev}: qdisc count`);
  let n = 0;
  theirs.forEach((q, i) => {
    n += fieldForField(t, ours[i], q, `${dev} qdisc ${q.handle}`);
  });
  return n;
}

async function compareFilters(t: ExecutionContext, dev: string, parent?: string): Promise<number> {
  const theirs = tcJson('filter', 'show', 'dev', dev, ...(parent ? ['parent', parent] : []));
  const ours = await listFilters(conn, { dev, parent, stats: false });
  t.is(ours.length, theirs.length, `${dev} ${parent ?? ''}: filter count`);
  let n = 0;
  theirs.forEach((f, i) => {
    n += fieldForField(t, ours[i], f, `${dev} filter ${i}`);
  });
  return n;
}

/* ---- classes: tc's text, parsed ---- */

const RATE_UNITS: Record<string, number> = { '': 1, K: 1e3, M: 1e6, G: 1e9, T: 1e12 };
/** tc's rate text ("10Mbit", "1500Kbit") -> bytes per second, and the rounding tc's printing allows. */
function tcRate(s: string): { value: number; tolerance: number } {
  const [, n, u] = /^(\d+)([KMGT]?)bit$/.exec(s)!;
  const unit = RATE_UNITS[u];
  return { value: (Number(n) * unit) / 8, tolerance: unit / 8 };
}
/** tc's size text ("15Kb", "1600b", "1Mb") -> bytes, and tc's rounding window. */
function tcSize(s: string): { value: number; tolerance: number } {
  const [, n, u] = /^(\d+)(Kb|Mb|b)$/.exec(s)!;
  return u === 'Mb'
    ? { value: Number(n) * 1048576, tolerance: 1024 }
    : u === 'Kb'
      ? { value: Number(n) * 1024, tolerance: 16 }
      : { value: Number(n), tolerance: 0 };
}

/** One class block of `tc -s class show` (htb), as fields. */
function parseTcClass(block: string): Record<string, string> {
  const m =
    /^class (\S+) (\S+) (?:root|parent (\S+)) (?:leaf (\S+) )?(?:prio (\d+) )?rate (\S+) ceil (\S+) burst (\S+) cburst (\S+) \n Sent (\d+) bytes (\d+) pkt \(dropped (\d+), overlimits (\d+) requeues (\d+)\) \n backlog (\S+) (\d+)p requeues (\d+)\n lended: (\d+) borrowed: (\d+) giants: (\d+)\n tokens: (-?\d+) ctokens: (-?\d+)\n\n$/.exec(
      block,
    );
  if (!m) throw new Error(`unexpected tc class text: ${JSON.stringify(block)}`);
  const names = [
    'kind',
    'handle',
    'parent',
    'leaf',
    'prio',
    'rate',
    'ceil',
    'burst',
    'cburst',
    'bytes',
    'packets',
    'drops',
    'overlimits',
    'requeues',
    'backlog',
    'qlen',
    'requeues2',
    'lended',
    'borrowed',
    'giants',
    'tokens',
    'ctokens',
  ];
  const out: Record<string, string> = {};
  names.forEach((n, i) => {
    if (m[i + 1] !== undefined) out[n] = m[i + 1];
  });
  return out;
}

async function compareClasses(t: ExecutionContext, dev: string): Promise<number> {
  const text = run('tc', '-s', 'class', 'show', 'dev', dev);
  const blocks = text.split(/(?<=\n\n)(?=class )/);
  const ours: ClassEntry[] = await listClasses(conn, { dev });
  t.is(ours.length, blocks.length, `${dev}: class count`);
  let n = 0;
  blocks.forEach((b, i) => {
    const tc = parseTcClass(b);
    const o = ours[i];
    const opt = o.options as Record<string, number>;
    const what = `${dev} class ${tc.handle}`;
    t.is(o.kind, tc.kind, `${what}.kind`);
    t.is(o.handle, tc.handle, `${what}.handle`);
    if (tc.parent) t.is(o.parent, tc.parent, `${what}.parent`);
    else t.true(o.root, `${what}.root`);
    t.is(o.leaf, tc.leaf, `${what}.leaf`);
    if (tc.prio) t.is(opt.prio, Number(tc.prio), `${what}.prio`);
    for (const k of ['rate', 'ceil'] as const) {
      const { value, tolerance } = tcRate(tc[k]);
      t.true(Math.abs(opt[k] - value) <= tolerance, `${what}.${k}: ${opt[k]} vs tc ${tc[k]}`);
    }
    for (const k of ['burst', 'cburst'] as const) {
      const { value, tolerance } = tcSize(tc[k]);
      t.true(Math.abs(opt[k] - value) <= tolerance, `${what}.${k}: ${opt[k]} vs tc ${tc[k]}`);
    }
    const { value: backlog, tolerance: bt } = tcSize(tc.backlog);
    t.true(Math.abs((o.backlog as number) - backlog) <= bt, `${what}.backlog`);
    for (const k of ['bytes', 'packets', 'drops', 'overlimits', 'requeues', 'qlen', 'lended', 'borrowed', 'giants', 'tokens', 'ctokens']) {
      t.is(o[k], Number(tc[k]), `${what}.${k}`);
    }
    t.is(o.requeues, Number(tc.requeues2));
    n += 21;
  });
  // And the whole text, as tc prints it.
  t.is(ours.map((c) => formatClassText(c, { stats: true })).join(''), text);
  return n;
}

test.before(() => {
  deleteLinks(VA, QUIET);
  run('ip', 'link', 'add', VA, 'type', 'veth', 'peer', 'name', VB);
  run('ip', 'link', 'add', QUIET, 'type', 'ifb');
  for (const d of [VA, VB]) {
    // no IPv6: nothing (router solicitations, DAD) sends packets on its own between the two dumps
    run('sysctl', '-q', '-w', `net.ipv6.conf.${d}.disable_ipv6=1`);
  }
  for (const d of [VA, VB, QUIET]) run('ip', 'link', 'set', d, 'up');
  // 169.254.99.3 is "behind" the veth: a permanent neighbour entry (no ARP, which would retry on a
  // timer between the two dumps), and no address on the peer (a local address would bypass VA).
  run('ip', 'addr', 'add', '169.254.99.1/24', 'dev', VA);
  const mac = (JSON.parse(run('ip', '-j', 'link', 'show', 'dev', VB)) as Array<{ address: string }>)[0].address;
  run('ip', 'neigh', 'replace', '169.254.99.3', 'lladdr', mac, 'dev', VA, 'nud', 'permanent');
  conn = NetlinkConnection.open(NETLINK_ROUTE);
});

test.after.always(() => {
  conn?.close();
  deleteLinks(VA, QUIET);
});

test.serial('after a sequence of changes and traffic, qdiscs, classes and filters match tc field for field', async (t) => {
  // The tree.
  await addQdisc(conn, { dev: VA, parent: 'root', handle: '1:', kind: 'htb', options: { default: '20', direct_qlen: 100 } });
  await addClass(conn, { dev: VA, parent: '1:', classid: '1:1', kind: 'htb', options: { rate: '10mbit', ceil: '20mbit', burst: '15k' } });
  await addClass(conn, { dev: VA, parent: '1:1', classid: '1:10', kind: 'htb', options: { rate: '5mbit', prio: 1 } });
  await addClass(conn, { dev: VA, parent: '1:1', classid: '1:20', kind: 'htb', options: ['rate', '1mbit', 'ceil', '2mbit', 'prio', '3', 'quantum', '1514'] });
  await addClass(conn, { dev: VA, parent: '1:1', classid: '1:30', kind: 'htb', options: { rate: '123456bit' } });
  await addQdisc(conn, { dev: VA, parent: '1:10', handle: '10:', kind: 'pfifo', options: { limit: 100 } });
  await addQdisc(conn, { dev: VA, parent: '1:20', handle: '20:', kind: 'bfifo', options: { limit: '30kb' } });
  await addFilter(conn, {
    dev: VA,
    parent: '1:',
    protocol: 'ip',
    pref: 1,
    kind: 'u32',
    options: ['match', 'ip', 'dst', '169.254.99.3/32', 'match', 'ip', 'protocol', '17', '0xff', 'match', 'ip', 'dport', '7777', '0xffff', 'classid', '1:10'],
  });
  await addFilter(conn, {
    dev: VA,
    parent: '1:',
    protocol: 'ip',
    pref: 2,
    kind: 'u32',
    options: { match: [{ type: 'ip', field: 'dport', value: 9 }], classid: '1:30' },
  });
  await addQdisc(conn, { dev: VA, kind: 'ingress' });
  await addFilter(conn, { dev: VA, parent: 'ffff:', protocol: 'all', pref: 7, kind: 'u32', options: ['match', 'u32', '0', '0', 'at', '0', 'classid', '1:1'] });
  await addQdisc(conn, { dev: QUIET, parent: 'root', handle: '5:', kind: 'tbf', options: { rate: '2mbit', burst: '20k', latency: '70ms' } });
  // Changes.
  await changeClass(conn, { dev: VA, parent: '1:1', classid: '1:10', kind: 'htb', options: { rate: '6mbit', ceil: '8mbit', prio: 2 } });
  await replaceQdisc(conn, { dev: VA, parent: '1:20', handle: '20:', kind: 'bfifo', options: { limit: '40kb' } });
  await deleteFilter(conn, { dev: VA, parent: '1:', protocol: 'ip', pref: 2 });
  await deleteClass(conn, { dev: VA, classid: '1:30' });
  await addClass(conn, { dev: VA, parent: '1:1', classid: '1:40', kind: 'htb', options: { rate: '40gbit', burst: '64k', cburst: '64k' } });
  // Traffic: UDP to 169.254.99.3:7777 goes to 1:10 through the u32 filter; to port 1234, to the default class 1:20.
  const sock = createSocket('udp4');
  const send = (port: number, size: number) =>
    new Promise<void>((resolve, reject) => sock.send(Buffer.alloc(size), port, '169.254.99.3', (e) => (e ? reject(e) : resolve())));
  for (let i = 0; i < 7; i++) await send(7777, 100 + i);
  for (let i = 0; i < 3; i++) await send(1234, 50);
  sock.close();
  await new Promise((r) => setTimeout(r, 300));

  let n = 0;
  n += await compareQdiscs(t, VA);
  n += await compareQdiscs(t, QUIET);
  n += await compareFilters(t, VA);
  n += await compareFilters(t, VA, 'ffff:');
  n += await compareClasses(t, VA);
  const classes = await listClasses(conn, { dev: VA });
  t.true((classes.find((c) => c.handle === '1:10')!.packets as number) >= 7, 'the UDP went through 1:10');
  t.true((classes.find((c) => c.handle === '1:20')!.packets as number) >= 3, 'the other UDP went through the default class 1:20');
  t.log(`${n} fields compared`);
  t.true(n > 150, `${n} fields compared`);
});

test.serial('after deleting the tree, tc and we agree again (the default qdisc is back)', async (t) => {
  await deleteQdisc(conn, { dev: VA, parent: 'root' });
  await deleteQdisc(conn, { dev: VA, kind: 'ingress' });
  await deleteQdisc(conn, { dev: QUIET, parent: 'root' });
  await compareQdiscs(t, VA);
  await compareQdiscs(t, QUIET);
  t.deepEqual(await listClasses(conn, { dev: VA }), []);
  t.is(run('tc', 'class', 'show', 'dev', VA), '');
});
