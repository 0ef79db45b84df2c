/**
 * Live: ifb and veth links created, set up/down, moved and deleted by
 * src/netlink/route/linkinfo.ts, with `ip -j` / `ip -d -j` as the oracle;
 * links made by ip decoded by us (kinds, details). A second network
 * namespace (an `unshare --net sleep` process) receives a veth peer by pid
 * and by namespace fd. Devices: sp-lk*; runs in the shared test netns.
 */
import test from 'ava';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readlinkSync } from 'node:fs';
import { NetlinkConnection } from '../../src/netlink/connection.js';
import { NETLINK_ROUTE } from '../../src/netlink/message.js';
import { NetlinkError, UsageError } from '../../src/netlink/errors.js';
import { listRawLinks, toLinkInfo } from '../../src/netlink/route/link.js';
import { createLink, deleteLink, setLinkUp, setLinkNetns, linkDetails, linkKind } from '../../src/netlink/route/linkinfo.js';
import { untyped } from '../helpers/untyped.js';

const IFB = 'sp-lki0';
const VA = 'sp-lkv0';
const VB = 'sp-lkv1';
const PA = 'sp-lkp0';
const PB = 'sp-lkp1';
const FA = 'sp-lkf0';
const FB = 'sp-lkf1';
const MV = 'sp-lkm0';
const MVP = 'sp-lkm1';
const IPV = 'sp-lkx0';
const IPVP = 'sp-lkx1';
const ALL = [IFB, VA, PA, FA, MV, IPV];

const IP = '/usr/sbin/ip';
function ip(...args: string[]): string {
  return execFileSync(IP, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}
function ipj(...args: string[]): Array<Record<string, unknown>> {
  return JSON.parse(ip('-j', ...args));
}
function quietly(...args: string[]): void {
  try {
    execFileSync(IP, args, { stdio: 'ignore' });
  } catch {
    /* gone */
  }
}

let conn: NetlinkConnection;
let other: ChildProcess;

/** A process in a network namespace of its own: `unshare --net sleep`; resolves once it is in the new namespace. */
async function otherNamespace(): Promise<ChildProcess> {
  const mine = readlinkSync('/proc/self/ns/net');
  const p = spawn('unshare', ['--net', 'sleep', '600'], { stdio: 'ignore' });
  for (let i = 0; i < 200; i++) {
    try {
      if (readlinkSync(`/proc/${p.pid}/ns/net`) !== mine) return p;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('unshare did not enter a new network namespace');
}
function inOther(...args: string[]): Array<Record<string, unknown>> {
  return JSON.parse(execFileSync('nsenter', ['-t', String(other.pid), '-n', IP, '-j', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
}

/** Our decode of one link (ip -j link fields plus ip -d's details), by name. */
async function ours(name: string): Promise<Record<string, unknown>> {
  const raws = await listRawLinks(conn);
  const byIndex = new Map(raws.map((r) => [r.index, r]));
  const r = raws.find((x) => x.ifname === name);
  if (!r) throw new Error(`no link ${name}`);
  return { ...toLinkInfo(r, { name: (i) => byIndex.get(i)?.ifname, flags: (i) => byIndex.get(i)?.flags }), ...linkDetails(r) };
}

test.before(async () => {
  for (const d of ALL) quietly('link', 'del', d);
  conn = NetlinkConnection.open(NETLINK_ROUTE);
  other = await otherNamespace();
});

test.after.always(() => {
  conn?.close();
  for (const d of ALL) quietly('link', 'del', d);
  other?.kill('SIGKILL');
});

test.serial('createLink ifb: ip -d -j shows kind ifb; our decode equals ip -d -j for the link; up and down as ip sees them; delete', async (t) => {
  await createLink(conn, { name: IFB, kind: 'ifb' });
  const [theirs] = ipj('-d', 'link', 'show', 'dev', IFB);
  t.deepEqual((theirs.linkinfo as Record<string, unknown>).info_kind, 'ifb');
  t.deepEqual(await ours(IFB), theirs);
  t.false((theirs.flags as string[]).includes('UP'));
  await setLinkUp(conn, IFB, true);
  t.true((ipj('link', 'show', 'dev', IFB)[0].flags as string[]).includes('UP'));
  t.deepEqual(await ours(IFB), ipj('-d', 'link', 'show', 'dev', IFB)[0]);
  await setLinkUp(conn, IFB, false);
  t.false((ipj('link', 'show', 'dev', IFB)[0].flags as string[]).includes('UP'));
  const e = await t.throwsAsync(createLink(conn, { name: IFB, kind: 'ifb' }), { instanceOf: NetlinkError });
  t.is(e!.code, 'EEXIST');
  t.regex(e!.message, /cannot create ifb device 'sp-lki0': a device with that name already exists/);
  await deleteLink(conn, IFB);
  t.throws(() => ip('link', 'show', 'dev', IFB));
  const gone = await t.throwsAsync(deleteLink(conn, IFB), { instanceOf: NetlinkError });
  t.is(gone!.message, "device 'sp-lki0' not found");
  t.is(gone!.category, 'usage');
});

test.serial("createLink veth pair: both ends as ip shows them (kind veth, each the other's link); deleting one deletes both", async (t) => {
  await createLink(conn, { name: VA, kind: 'veth', peer: { name: VB } });
  for (const d of [VA, VB]) {
    const [theirs] = ipj('-d', 'link', 'show', 'dev', d);
    t.is((theirs.linkinfo as Record<string, unknown>).info_kind, 'veth');
    t.deepEqual(await ours(d), theirs, d);
  }
  t.is(ipj('link', 'show', 'dev', VA)[0].link, VB);
  await deleteLink(conn, VB);
  t.throws(() => ip('link', 'show', 'dev', VA));
});

test.serial('veth peer created in another namespace, by pid and by namespace fd; a link moved there (setLinkNetns)', async (t) => {
  await createLink(conn, { name: PA, kind: 'veth', peer: { name: PB, netnsPid: other.pid } });
  t.throws(() => ip('link', 'show', 'dev', PB));
  const [peer] = inOther('-d', 'link', 'show', 'dev', PB);
  t.is((peer.linkinfo as Record<string, unknown>).info_kind, 'veth');
  const [here] = ipj('-d', 'link', 'show', 'dev', PA);
  t.deepEqual(await ours(PA), here);
  t.is(typeof here.link_netnsid, 'number');
  const fd = openSync(`/proc/${other.pid}/ns/net`, 'r');
  try {
    await createLink(conn, { name: FA, kind: 'veth', peer: { name: FB, netnsFd: fd } });
    t.is(inOther('link', 'show', 'dev', FB).length, 1);
    await createLink(conn, { name: MV, kind: 'veth', peer: { name: MVP } });
    await setLinkNetns(conn, MVP, { netnsFd: fd });
    t.throws(() => ip('link', 'show', 'dev', MVP));
    t.is(inOther('link', 'show', 'dev', MVP).length, 1);
  } finally {
    closeSync(fd);
  }
  for (const d of [PA, FA, MV]) await deleteLink(conn, d);
  t.throws(() => inOther('link', 'show', 'dev', PB));
});

test.serial('a veth made by ip decodes as ip -d -j prints it (linkKind veth)', async (t) => {
  ip('link', 'add', IPV, 'type', 'veth', 'peer', 'name', IPVP);
  const raws = await listRawLinks(conn);
  t.is(linkKind(raws.find((r) => r.ifname === IPV)!), 'veth');
  t.deepEqual(await ours(IPVP), ipj('-d', 'link', 'show', 'dev', IPVP)[0]);
  await deleteLink(conn, IPV);
  t.pass();
});

test.serial('bad input is refused before anything is sent', async (t) => {
  await t.throwsAsync(createLink(conn, { name: 'sp-lk-bad/', kind: 'ifb' }), { instanceOf: UsageError });
  await t.throwsAsync(untyped(createLink)(conn, { name: 'sp-lkz', kind: 'veth' }), { instanceOf: UsageError });
  t.throws(() => ip('link', 'show', 'dev', 'sp-lkz'));
});

test.serial(
  'CLI `show link [--details]` prints what `ip [-d] link show` prints (text and JSON, key order included) for an ifb with an alias, a veth pair and lo; --details on another object is a usage error',
  async (t) => {
    const CLI = 'dist/bundle/synplug.cjs';
    const synplug = (...args: string[]): string => execFileSync(process.execPath, [CLI, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    await createLink(conn, { name: IFB, kind: 'ifb' });
    await createLink(conn, { name: VA, kind: 'veth', peer: { name: VB } });
    try {
      await setLinkUp(conn, IFB, true);
      ip('link', 'set', 'dev', IFB, 'alias', 'synplug test alias: two words');
      for (const d of [IFB, VA, VB, 'lo']) {
        t.is(synplug('show', 'link', '--dev', d), ip('link', 'show', 'dev', d), `text of ${d} without details`);
        t.is(synplug('show', 'link', '--dev', d, '--json').trim(), ip('-j', 'link', 'show', 'dev', d).trim(), `JSON of ${d} without details`);
        t.is(synplug('show', 'link', '--dev', d, '-d'), ip('-d', 'link', 'show', 'dev', d), `text of ${d}`);
        t.is(synplug('show', 'link', '--dev', d, '--details', '--json').trim(), ip('-d', '-j', 'link', 'show', 'dev', d).trim(), `JSON of ${d}`);
      }
      t.is((JSON.parse(synplug('show', 'link', '--dev', IFB, '-d', '--json'))[0].linkinfo as { info_kind: string }).info_kind, 'ifb');
      // without --details, neither the kind nor the other details (as ip without -d)
      t.is(synplug('show', 'link', '--dev', VA, '--json').trim(), ip('-j', 'link', 'show', 'dev', VA).trim());
      const e = t.throws(() => synplug('show', 'qdisc', '--details')) as Error & { status: number; stderr: string };
      t.is(e.status, 2);
      t.regex(e.stderr, /--details applies to links only/);
    } finally {
      await deleteLink(conn, VA);
      await deleteLink(conn, IFB);
    }
  },
);
