/**
 * Live: qdiscs, classes and filters on this machine's kernel, with `tc` as
 * the oracle after every change. Uses only its own devices (sp-tcq*) in the
 * shared test netns.
 *
 * Covered here (what this kernel has): pfifo, bfifo, htb with classes, tbf,
 * ingress, clsact, u32 filters; add, replace, change, list, delete.
 */
import test, { type ExecutionContext } from 'ava';
import { NetlinkConnection } from '../../src/netlink/connection.js';
import { NETLINK_ROUTE } from '../../src/netlink/message.js';
import {
  addQdisc,
  replaceQdisc,
  changeQdisc,
  deleteQdisc,
  listQdiscs,
  addClass,
  changeClass,
  deleteClass,
  listClasses,
  addFilter,
  replaceFilter,
  deleteFilter,
  listFilters,
  formatClassText,
  formatQdiscText,
  type QdiscEntry,
} from '../../src/tc/index.js';
import { run, tcj, deleteLinks } from '../helpers/tools.js';

const IFB = 'sp-tcq0';
const VA = 'sp-tcq1';
const VB = 'sp-tcq2';

/** Every field tc printed is in ours with the same value (options field by field); returns how many were compared. */
function sameAsTc(t: ExecutionContext, ours: Record<string, unknown>, theirs: Record<string, unknown>, what: string): number {
  let n = 0;
  for (const [k, v] of Object.entries(theirs)) {
    if (k === 'options') {
      const o = ours.options as Record<string, unknown>;
      for (const [ok, ov] of Object.entries(v as Record<string, unknown>)) {
        t.deepEqual(o[ok], ov, `${what}.options.${ok}`);
        n++;
      }
    } else {
      t.deepEqual(ours[k], v, `${what}.${k}`);
      n++;
    }
  }
  return n;
}

async function qdiscsMatchTc(t: ExecutionContext, dev: string): Promise<QdiscEntry[]> {
  const theirs = tcj('-s', 'qdisc', 'show', 'dev', dev);
  const ours = await listQdiscs(conn, { dev });
  t.is(ours.length, theirs.length, `${dev}: number of qdiscs`);
  theirs.forEach((q, i) => {
    t.true(sameAsTc(t, ours[i], q, `${dev} qdisc ${i}`) >= 8);
  });
  return ours;
}

let conn: NetlinkConnection;

test.before(() => {
  deleteLinks(IFB, VA);
  run('ip', 'link', 'add', IFB, 'type', 'ifb');
  run('ip', 'link', 'add', VA, 'type', 'veth', 'peer', 'name', VB);
  for (const d of [IFB, VA, VB]) run('ip', 'link', 'set', d, 'up');
  conn = NetlinkConnection.open(NETLINK_ROUTE);
});

test.after.always(() => {
  conn?.close();
  deleteLinks(IFB, VA);
});

test.serial('pfifo: add, change, list, delete — tc -j -s agrees at every step', async (t) => {
  await addQdisc(conn, { dev: IFB, parent: 'root', handle: '1:', kind: 'pfifo', options: { limit: 50 } });
  let qs = await qdiscsMatchTc(t, IFB);
  t.like(qs[0], { kind: 'pfifo', handle: '1:', root: true, options: { limit: 50 } });
  await changeQdisc(conn, { dev: IFB, parent: 'root', handle: '1:', kind: 'pfifo', options: ['limit', '60'] });
  qs = await qdiscsMatchTc(t, IFB);
  t.is(qs[0].options.limit, 60);
  await deleteQdisc(conn, { dev: IFB, parent: 'root' });
  qs = await qdiscsMatchTc(t, IFB);
  t.false(qs.some((q) => q.kind === 'pfifo'));
});

test.serial('bfifo: add, replace with pfifo_head_drop, delete', async (t) => {
  await addQdisc(conn, { dev: IFB, parent: 'root', handle: '2:', kind: 'bfifo', options: { limit: '10kb' } });
  let qs = await qdiscsMatchTc(t, IFB);
  t.like(qs[0], { kind: 'bfifo', handle: '2:', options: { limit: 10240 } });
  t.is(formatQdiscText(qs[0]).split('\n')[0], run('tc', 'qdisc', 'show', 'dev', IFB).split('\n')[0]);
  await replaceQdisc(conn, { dev: IFB, parent: 'root', handle: '3:', kind: 'pfifo_head_drop', options: { limit: 9 } });
  qs = await qdiscsMatchTc(t, IFB);
  t.like(qs[0], { kind: 'pfifo_head_drop', handle: '3:', options: { limit: 9 } });
  await deleteQdisc(conn, { dev: IFB, parent: 'root', handle: '3:', kind: 'pfifo_head_drop' });
});

test.serial('tbf: add, change, list, delete — options as tc -j prints them', async (t) => {
  await addQdisc(conn, { dev: IFB, parent: 'root', handle: '5:', kind: 'tbf', options: { rate: '1mbit', burst: '10k', latency: '50ms' } });
  let qs = await qdiscsMatchTc(t, IFB);
  t.like(qs[0], { kind: 'tbf', options: { rate: 125000, burst: 10240, lat: 50000 } });
  await changeQdisc(conn, { dev: IFB, parent: 'root', handle: '5:', kind: 'tbf', options: ['rate', '8mbit', 'burst', '32k', 'limit', '100k'] });
  qs = await qdiscsMatchTc(t, IFB);
  t.like(qs[0], { options: { rate: 1_000_000, burst: 32768 } });
  t.is(formatQdiscText(qs[0]).split('\n')[0], run('tc', 'qdisc', 'show', 'dev', IFB).split('\n')[0]);
  await deleteQdisc(conn, { dev: IFB, parent: 'root' });
});

/** tc 6.1 prints classes only as text (it ignores -j for `class show`): compare whole lines. */
async function classesMatchTc(t: ExecutionContext, dev: string): Promise<void> {
  const theirs = run('tc', '-s', 'class', 'show', 'dev', dev);
  const ours = await listClasses(conn, { dev });
  t.is(ours.map((c) => formatClassText(c, { stats: true })).join(''), theirs);
}

test.serial('htb with classes: add qdisc and classes, a leaf qdisc, change and delete a class — tc agrees', async (t) => {
  await addQdisc(conn, { dev: IFB, parent: 'root', handle: '1:', kind: 'htb', options: { default: '20' } });
  await addClass(conn, { dev: IFB, parent: '1:', classid: '1:1', kind: 'htb', options: { rate: '10mbit', ceil: '20mbit', burst: '15k' } });
  await addClass(conn, { dev: IFB, parent: '1:1', classid: '1:20', kind: 'htb', options: ['rate', '1mbit', 'ceil', '2mbit', 'prio', '3'] });
  await addClass(conn, { dev: IFB, parent: '1:1', classid: '1:30', kind: 'htb', options: { rate: '40gbit', burst: '64k', cburst: '64k' } });
  await addQdisc(conn, { dev: IFB, parent: '1:20', handle: '20:', kind: 'pfifo', options: { limit: 40 } });
  const qs = await qdiscsMatchTc(t, IFB);
  t.like(qs[0], { kind: 'htb', options: { default: '0x20', r2q: 10 } });
  await classesMatchTc(t, IFB);
  let cs = await listClasses(conn, { dev: IFB });
  t.like(
    cs.find((c) => c.handle === '1:20'),
    { parent: '1:1', leaf: '20:', options: { prio: 3, rate: 125000, ceil: 250000 } },
  );
  t.like(
    cs.find((c) => c.handle === '1:30'),
    { options: { rate: 5_000_000_000 } },
  );
  await changeClass(conn, { dev: IFB, parent: '1:1', classid: '1:20', kind: 'htb', options: { rate: '3mbit', ceil: '4mbit', prio: 1 } });
  await deleteClass(conn, { dev: IFB, classid: '1:30' });
  await classesMatchTc(t, IFB);
  cs = await listClasses(conn, { dev: IFB });
  t.deepEqual(
    cs.map((c) => c.handle),
    ['1:1', '1:20'],
  );
  t.like(cs[1], { options: { rate: 375000, ceil: 500000, prio: 1 } });
});

test.serial('u32 filters on htb: add, replace, list, delete — tc filter show agrees', async (t) => {
  await addFilter(conn, {
    dev: IFB,
    parent: '1:',
    protocol: 'ip',
    pref: 1,
    kind: 'u32',
    options: ['match', 'ip', 'dst', '10.0.0.1/32', 'match', 'ip', 'dport', '80', '0xffff', 'classid', '1:20'],
  });
  await addFilter(conn, {
    dev: IFB,
    parent: '1:',
    protocol: 'ip',
    pref: 2,
    kind: 'u32',
    options: { match: [{ type: 'u8', value: 6, mask: 0xff, at: 9 }], classid: '1:1' },
  });
  let fs = await listFilters(conn, { dev: IFB });
  const text = run('tc', 'filter', 'show', 'dev', IFB);
  t.regex(text, /match 0a000001\/ffffffff at 16/);
  t.is(fs.filter((f) => f.options?.match).length, 2);
  const node = fs.find((f) => f.pref === 1 && f.options?.match)!;
  t.like(node.options, { flowid: '1:20', key_ht: '800', bkt: '0', fh: '800::800', order: 2048 });
  t.deepEqual(node.options!.match, [
    { value: 'a000001', mask: 'ffffffff', offmask: '', off: 16 },
    { value: '50', mask: 'ffff', offmask: '', off: 20 },
  ]);
  // Replacing an existing u32 node changes its class; the kernel keeps the node's selector (tc shows the same).
  await replaceFilter(conn, {
    dev: IFB,
    parent: '1:',
    protocol: 'ip',
    pref: 1,
    kind: 'u32',
    handle: '800::800',
    options: ['match', 'ip', 'dst', '10.0.0.1/32', 'classid', '1:1'],
  });
  fs = await listFilters(conn, { dev: IFB });
  t.like(fs.find((f) => f.pref === 1 && f.options?.match)!.options, { flowid: '1:1' });
  t.regex(run('tc', 'filter', 'show', 'dev', IFB), /fh 800::800 order 2048 key ht 800 bkt 0 \*flowid 1:1 /);
  await deleteFilter(conn, { dev: IFB, parent: '1:', protocol: 'ip', pref: 2 });
  fs = await listFilters(conn, { dev: IFB });
  t.false(fs.some((f) => f.pref === 2));
  t.false(run('tc', 'filter', 'show', 'dev', IFB).includes('pref 2'));
  await deleteQdisc(conn, { dev: IFB, parent: 'root' });
  t.deepEqual(await listClasses(conn, { dev: IFB }), []);
});

test.serial('ingress and clsact: added at their fixed parents; u32 filters on the ingress and egress hooks', async (t) => {
  await addQdisc(conn, { dev: IFB, kind: 'ingress' });
  await addQdisc(conn, { dev: VA, kind: 'clsact' });
  await qdiscsMatchTc(t, IFB);
  const va = await qdiscsMatchTc(t, VA);
  t.like(
    va.find((q) => q.kind === 'clsact'),
    { handle: 'ffff:', parent: 'ffff:fff1' },
  );
  await addFilter(conn, {
    dev: IFB,
    parent: 'ffff:',
    protocol: 'all',
    pref: 10,
    kind: 'u32',
    options: ['match', 'u32', '0', '0', 'at', '0', 'classid', '1:1'],
  });
  await addFilter(conn, { dev: VA, parent: 'egress', protocol: 'ip', pref: 5, kind: 'u32', options: ['match', 'ip', 'protocol', '17', '0xff'] });
  await addFilter(conn, { dev: VA, parent: 'ingress', protocol: 'ipv6', pref: 6, kind: 'u32', options: ['match', 'u32', '0', '0', 'at', '0'] });
  const ing = await listFilters(conn, { dev: IFB, parent: 'ffff:' });
  t.is(ing.length, tcj('filter', 'show', 'dev', IFB, 'parent', 'ffff:').length, 'as many entries as tc shows');
  t.true(ing.every((f) => f.parent === 'ffff:' && f.protocol === 'all' && f.pref === 10 && f.kind === 'u32'));
  const eg = await listFilters(conn, { dev: VA, parent: 'egress' });
  t.true(eg.every((f) => f.egress === true && f.protocol === 'ip'));
  t.is(eg.length, tcj('filter', 'show', 'dev', VA, 'egress').length, 'as many entries as tc shows');
  t.deepEqual(eg.find((f) => f.options?.match)?.options?.match, [{ value: '110000', mask: 'ff0000', offmask: '', off: 8 }]);
  const ig = await listFilters(conn, { dev: VA, parent: 'ingress' });
  t.true(ig.every((f) => f.ingress === true && f.protocol === 'ipv6'));
  t.regex(run('tc', 'filter', 'show', 'dev', VA, 'egress'), /match 00110000\/00ff0000 at 8/);
  await deleteQdisc(conn, { dev: IFB, kind: 'ingress' });
  await deleteQdisc(conn, { dev: VA, kind: 'clsact' });
  t.false(run('tc', 'qdisc', 'show', 'dev', VA).includes('clsact'));
  t.false(run('tc', 'qdisc', 'show', 'dev', IFB).includes('ingress'));
});

test.serial("listQdiscs without a device lists every device's qdiscs with their names, as tc qdisc show does", async (t) => {
  await addQdisc(conn, { dev: IFB, parent: 'root', handle: '7:', kind: 'pfifo' });
  // other test files change their own devices meanwhile: compare this file's devices only
  const mineOnly = <Q extends { dev?: unknown }>(qs: Q[]) => qs.filter((q) => q.dev === IFB || q.dev === VA || q.dev === VB);
  const theirs = mineOnly(tcj('-s', 'qdisc', 'show'));
  const ours = mineOnly(await listQdiscs(conn, {}));
  t.true(theirs.length >= 3, 'tc shows a qdisc on each of the three devices');
  t.is(ours.length, theirs.length, 'as many qdiscs on these devices as tc shows');
  theirs.forEach((q, i) => {
    t.true(sameAsTc(t, ours[i], q, `qdisc ${i} (${String(q.dev)})`) >= 8);
  });
  t.like(
    ours.find((q) => q.dev === IFB),
    { kind: 'pfifo', handle: '7:', root: true },
  );
  await deleteQdisc(conn, { dev: IFB, parent: 'root' });
});
