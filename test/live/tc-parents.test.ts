/**
 * Live: filters at every kind of parent, as tc names them: the ingress
 * qdisc's "ingress" / "ffff:" / "ffff:fff1", clsact's "ingress"
 * (ffff:fff2) and "egress" (ffff:fff3), an htb qdisc and an htb class; each
 * added, listed (all, and by parent), deleted, with `tc filter show` as the
 * oracle. Also issue #11 defect 6 on this kernel: htb bursts that the
 * kernel's fields cannot hold, and a listing given two different devices.
 * Devices: sp-tcp*.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { NetlinkConnection } from '../../src/netlink/connection.js';
import { NETLINK_ROUTE } from '../../src/netlink/message.js';
import { NetlinkError, UsageError } from '../../src/netlink/errors.js';
import { addClass, addFilter, deleteFilter, listFilters, listQdiscs, listClasses, formatFilterText } from '../../src/tc/index.js';
import { run, tcj, deleteLinks } from '../helpers/tools.js';

const ING = 'sp-tcp0'; // ingress qdisc
const CLS = 'sp-tcp1'; // clsact
const HTB = 'sp-tcp2'; // htb root with a class
let conn: NetlinkConnection;

/** A u32 filter that matches TCP (ip protocol 6), as tc words: goes to class 1:1 where there is one. */
const U32_TCP = ['match', 'ip', 'protocol', '6', '0xff', 'classid', '1:1'];

test.before(() => {
  deleteLinks(ING, CLS, HTB);
  for (const d of [ING, CLS, HTB]) {
    run('ip', 'link', 'add', d, 'type', 'ifb');
    run('ip', 'link', 'set', d, 'up');
  }
  run('tc', 'qdisc', 'add', 'dev', ING, 'ingress');
  run('tc', 'qdisc', 'add', 'dev', CLS, 'clsact');
  run('tc', 'qdisc', 'add', 'dev', HTB, 'root', 'handle', '1:', 'htb');
  run('tc', 'class', 'add', 'dev', HTB, 'parent', '1:', 'classid', '1:1', 'htb', 'rate', '1mbit');
  conn = NetlinkConnection.open(NETLINK_ROUTE);
});

test.after.always(() => {
  conn?.close();
  deleteLinks(ING, CLS, HTB);
});

/** Our text of the filters at `parent` (all when undefined) is tc's `filter show dev D [parent P]`. */
async function sameAsTc(dev: string, tcParent: string[] = [], parent?: string): Promise<[string, string]> {
  const ours = await listFilters(conn, parent === undefined ? { dev } : { dev, parent });
  return [ours.map((f) => formatFilterText(f, { omitParent: parent })).join(''), run('tc', 'filter', 'show', 'dev', dev, ...tcParent)];
}

test.serial('the ingress qdisc: filters at "ingress", "ffff:" and "ffff:fff1" are added, listed and deleted as tc does', async (t) => {
  await addFilter(conn, { dev: ING, parent: 'ingress', protocol: 'ip', prio: 1, kind: 'u32', options: U32_TCP });
  await addFilter(conn, { dev: ING, parent: 'ffff:', protocol: 'ip', pref: 2, kind: 'u32', options: U32_TCP });
  await addFilter(conn, { dev: ING, parent: 'ffff:fff1', protocol: 'ip', pref: 3, kind: 'u32', options: U32_TCP });
  // without a parent, tc and the kernel list the root's filters only: none here
  t.deepEqual(await sameAsTc(ING), ['', '']);
  for (const [p, words] of [
    ['ffff:', ['parent', 'ffff:']],
    ['ingress', ['ingress']],
    ['ffff:fff1', ['parent', 'ffff:fff1']],
  ] as const) {
    const [ours, theirs] = await sameAsTc(ING, [...words], p);
    t.is(ours, theirs, p);
    t.regex(ours, /pref 1 u32[\s\S]*pref 2 u32[\s\S]*pref 3 u32/, p);
  }
  t.deepEqual([...new Set((await listFilters(conn, { dev: ING, parent: 'ffff:' })).map((f) => f.pref))], [1, 2, 3]);
  for (const [parent, pref] of [
    ['ingress', 1],
    ['ffff:', 2],
    ['ffff:fff1', 3],
  ] as const) {
    await deleteFilter(conn, { dev: ING, parent, protocol: 'ip', pref, kind: 'u32' });
  }
  t.deepEqual(await listFilters(conn, { dev: ING, parent: 'ffff:' }), []);
  t.deepEqual(tcj('filter', 'show', 'dev', ING, 'parent', 'ffff:'), []);
});

test.serial('clsact: filters at "ingress" (ffff:fff2) and "egress" (ffff:fff3), each listed by its hook', async (t) => {
  await addFilter(conn, { dev: CLS, parent: 'ingress', protocol: 'ip', pref: 10, kind: 'u32', options: U32_TCP });
  await addFilter(conn, { dev: CLS, parent: 'egress', protocol: 'ipv6', pref: 20, kind: 'u32', options: ['match', 'u32', '0', '0', 'at', '0'] });
  await addFilter(conn, { dev: CLS, parent: 0xfffffff2, protocol: 'all', pref: 30, kind: 'u32', options: ['match', 'u32', '0', '0', 'at', '0'] });
  const ing = await listFilters(conn, { dev: CLS, parent: 'ingress' });
  const egr = await listFilters(conn, { dev: CLS, parent: 'egress' });
  t.true(ing.length > 0 && ing.every((f) => f.ingress === true && f.egress === undefined));
  t.true(egr.length > 0 && egr.every((f) => f.egress === true && f.ingress === undefined));
  t.deepEqual([...new Set(ing.map((f) => f.pref))], [10, 30]);
  t.deepEqual([...new Set(egr.map((f) => f.pref))], [20]);
  t.is(ing.map((f) => formatFilterText(f, { omitParent: 'ingress' })).join(''), run('tc', 'filter', 'show', 'dev', CLS, 'ingress'));
  t.is(egr.map((f) => formatFilterText(f, { omitParent: 'egress' })).join(''), run('tc', 'filter', 'show', 'dev', CLS, 'egress'));
  await deleteFilter(conn, { dev: CLS, parent: 'egress', protocol: 'ipv6', pref: 20 });
  await deleteFilter(conn, { dev: CLS, parent: 'ingress' }); // every filter at the hook
  t.deepEqual(await listFilters(conn, { dev: CLS }), []);
  t.is(run('tc', 'filter', 'show', 'dev', CLS, 'ingress') + run('tc', 'filter', 'show', 'dev', CLS, 'egress'), '');
});

test.serial('an htb qdisc and an htb class as parents (a class takes filters too)', async (t) => {
  await addFilter(conn, { dev: HTB, parent: '1:', protocol: 'ip', pref: 1, kind: 'u32', options: U32_TCP });
  await addFilter(conn, { dev: HTB, parent: '1:1', protocol: 'ip', pref: 2, kind: 'u32', options: ['match', 'u32', '0', '0', 'at', '0'] });
  t.is((await sameAsTc(HTB, ['parent', '1:'], '1:'))[0], run('tc', 'filter', 'show', 'dev', HTB, 'parent', '1:'));
  t.is((await sameAsTc(HTB, ['parent', '1:1'], '1:1'))[0], run('tc', 'filter', 'show', 'dev', HTB, 'parent', '1:1'));
  t.deepEqual([...new Set((await listFilters(conn, { dev: HTB, parent: '1:1' })).map((f) => f.pref))], [2]);
  await deleteFilter(conn, { dev: HTB, parent: '1:1', protocol: 'ip', pref: 2 });
  await deleteFilter(conn, { dev: HTB, parent: '1:', protocol: 'ip', pref: 1 });
  t.is(run('tc', 'filter', 'show', 'dev', HTB, 'parent', '1:') + run('tc', 'filter', 'show', 'dev', HTB, 'parent', '1:1'), '');
});

test.serial('htb: tc accepts 40gbit with its default burst and shows "burst 0b"; synplug refuses it, and takes it with a burst', async (t) => {
  run('tc', 'class', 'add', 'dev', HTB, 'parent', '1:', 'classid', '1:7', 'htb', 'rate', '40gbit');
  t.regex(run('tc', 'class', 'show', 'dev', HTB, 'classid', '1:7'), /rate 40Gbit ceil 40Gbit burst 0b cburst 0b/);
  run('tc', 'class', 'del', 'dev', HTB, 'classid', '1:7');
  await t.throwsAsync(addClass(conn, { dev: HTB, parent: '1:', classid: '1:7', kind: 'htb', options: { rate: '40gbit' } }), {
    instanceOf: UsageError,
    message: /it would read back as "burst 0b"; give a burst of at least \d+ bytes/,
  });
  t.deepEqual(
    (await listClasses(conn, { dev: HTB })).map((c) => c.handle),
    ['1:1'],
  );
  const e = await t.throwsAsync(addClass(conn, { dev: HTB, parent: '1:', classid: '1:7', kind: 'htb', options: { rate: '40gbit' } }));
  const min = Number(/at least (\d+) bytes/.exec(e!.message)![1]);
  await addClass(conn, { dev: HTB, parent: '1:', classid: '1:7', kind: 'htb', options: { rate: '40gbit', burst: min, cburst: min } });
  const text = run('tc', 'class', 'show', 'dev', HTB, 'classid', '1:7');
  t.regex(text, /rate 40Gbit ceil 40Gbit burst \d+b cburst \d+b/);
  t.notRegex(text, /burst 0b/);
  run('tc', 'class', 'del', 'dev', HTB, 'classid', '1:7');
});

test('a listing given a dev and the index of another device is refused; an index alone that exists lists', async (t) => {
  const idx = (d: string) => Number(/^(\d+):/.exec(run('ip', '-o', 'link', 'show', 'dev', d))![1]);
  for (const list of [listQdiscs, listFilters, listClasses]) {
    await t.throwsAsync(list(conn, { dev: ING, ifindex: idx(CLS) }), {
      instanceOf: UsageError,
      message: `dev '${ING}' has index ${idx(ING)}, not ${idx(CLS)}: give the device by name or by index, or both for the same device`,
    });
  }
  t.deepEqual(
    (await listQdiscs(conn, { dev: ING, ifindex: idx(ING) })).map((q) => q.kind),
    tcj('qdisc', 'show', 'dev', ING).map((q) => q.kind),
  );
  t.deepEqual(
    (await listQdiscs(conn, { ifindex: idx(ING) })).map((q) => q.kind),
    tcj('qdisc', 'show', 'dev', ING).map((q) => q.kind),
  );
});

test('a filter at a hook or handle whose qdisc is not there: tc fails too, and the sentence names the missing qdisc', async (t) => {
  const NONE = 'sp-tcp3';
  deleteLinks(NONE);
  run('ip', 'link', 'add', NONE, 'type', 'ifb');
  try {
    const r = spawnSync('/usr/sbin/tc', ['filter', 'add', 'dev', NONE, 'ingress', 'protocol', 'ip', 'pref', '1', 'u32', ...U32_TCP], { encoding: 'utf8' });
    t.not(r.status, 0, 'tc refuses it as well');
    for (const [parent, qd] of [
      ['ingress', 'ffff:'],
      ['egress', 'ffff:'],
      ['5:', '5:'],
      ['5:1', '5:'],
    ] as const) {
      const e = await t.throwsAsync(addFilter(conn, { dev: NONE, parent, protocol: 'ip', pref: 1, kind: 'u32', options: U32_TCP }), {
        instanceOf: NetlinkError,
      });
      t.is(e!.explanation ?? e!.message, `cannot add filter 'u32' pref 1 under ${parent} on dev ${NONE}: no qdisc ${qd} on dev ${NONE}`, parent);
    }
  } finally {
    deleteLinks(NONE);
  }
});
