/**
 * Live: connections opened in another network namespace, from a process
 * outside it (src/netlink/netns.ts: setns into it, socket(), setns back).
 *
 * A namespace made by `ip netns add` (unique name, deleted at the end) holds
 * an ifb device. From this process: a qdisc, an address and an nftables
 * table are created in it, checked with `tc -n`, `ip -n` and `nft` run in
 * the namespace (the oracles), and absent from this process's own namespace;
 * this process's threads all stay in their own namespace. Also: a
 * namespace by path (/proc/PID/ns/net), the process-wide default
 * (setDefaultNetns, SYNPLUG_NETNS for child processes) reaching sock_diag,
 * and bad input: a name that does not exist, files that are not network
 * namespaces, bad names, and a user not allowed to enter (setpriv nobody).
 */
import test from 'ava';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readlinkSync, readdirSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { NetlinkConnection } from '../../src/netlink/connection.js';
import { UsageError, NetlinkError } from '../../src/netlink/errors.js';
import { NETLINK_NETFILTER, NETLINK_ROUTE } from '../../src/netlink/message.js';
import { setDefaultNetns, defaultNetns, netnsPath, checkNetns, NETNS_ENV } from '../../src/netlink/netns.js';
import { getLinkByName, listLinks } from '../../src/netlink/route/link.js';
import { addAddress } from '../../src/netlink/route/addr.js';
import { listTcpListeners } from '../../src/netlink/sockdiag.js';
import { addQdisc, listQdiscs } from '../../src/tc/index.js';
import { commitBatch } from '../../src/iptables/batch.js';
import { encodeTable } from '../../src/iptables/table.js';
import { NFT_MSG_NEWTABLE } from '../../src/iptables/constants.js';
import { listTables } from '../../src/iptables/table.js';
import '../../src/iptables/index.js';

const IP = '/usr/sbin/ip';
const TC = '/usr/sbin/tc';
const NFT = '/usr/sbin/nft';
const NS = `sp-nn-${process.pid}`;
const DEV = 'sp-nn0';
const CHILD = new URL('./netlink-netns-child.ts', import.meta.url).pathname;
const ownNs = () => readlinkSync('/proc/thread-self/ns/net');
let sleeper: ChildProcess | undefined;
let server: Server | undefined;

test.before(() => {
  try {
    execFileSync(IP, ['netns', 'del', NS], { stdio: 'ignore' });
  } catch {
    /* none */
  }
  execFileSync(IP, ['netns', 'add', NS]);
  execFileSync(IP, ['-n', NS, 'link', 'set', 'lo', 'up']);
  execFileSync(IP, ['-n', NS, 'link', 'add', DEV, 'type', 'ifb']);
  execFileSync(IP, ['-n', NS, 'link', 'set', DEV, 'up']);
});

test.after.always(() => {
  setDefaultNetns(undefined);
  sleeper?.kill('SIGKILL');
  server?.close();
  try {
    execFileSync(IP, ['netns', 'del', NS], { stdio: 'ignore' });
  } catch {
    /* gone */
  }
});

test.serial('tc, an address and an nftables table in a namespace made by ip netns add, from outside it', async (t) => {
  const before = ownNs();
  const route = NetlinkConnection.open(NETLINK_ROUTE, { netns: NS });
  const nft = NetlinkConnection.open(NETLINK_NETFILTER, { netns: NS });
  t.is(ownNs(), before, 'this thread is back in its own namespace');
  // every thread of the process (libuv's pool, V8's) is in its own namespace
  for (const tid of readdirSync('/proc/self/task')) t.is(readlinkSync(`/proc/self/task/${tid}/ns/net`), before, `thread ${tid}`);

  const link = await getLinkByName(route, DEV);
  await addQdisc(route, { dev: DEV, kind: 'htb', parent: 'root', handle: '1:', options: { default: 0x10 } });
  await addAddress(route, { dev: DEV, address: '169.254.66.1/32' });
  const r = await commitBatch(nft, [
    { msg: NFT_MSG_NEWTABLE, flags: 0x400 /* NLM_F_CREATE */, payload: encodeTable({ family: 'ip', name: 'sp_nn_t' }), what: 'add table ip sp_nn_t' },
  ]);
  t.truthy(r);

  // the oracles, inside the namespace
  const q = JSON.parse(execFileSync(TC, ['-n', NS, '-j', 'qdisc', 'show', 'dev', DEV], { encoding: 'utf8' })) as Array<{ kind: string; handle: string }>;
  t.like(
    q.find((x) => x.handle === '1:'),
    { kind: 'htb' },
  );
  const a = JSON.parse(execFileSync(IP, ['-n', NS, '-4', '-j', 'addr', 'show', 'dev', DEV], { encoding: 'utf8' })) as Array<{
    ifindex: number;
    addr_info: Array<{ local: string }>;
  }>;
  t.is(a[0].ifindex, link.ifindex);
  t.deepEqual(
    a[0].addr_info.map((x) => x.local),
    ['169.254.66.1'],
  );
  const tables = JSON.parse(execFileSync(IP, ['netns', 'exec', NS, NFT, '-j', 'list', 'tables'], { encoding: 'utf8' })) as {
    nftables: Array<{ table?: { family: string; name: string } }>;
  };
  t.truthy(tables.nftables.find((x) => x.table?.name === 'sp_nn_t' && x.table.family === 'ip'));

  // what the library reads back in the namespace
  t.true((await listQdiscs(route, { dev: DEV })).some((x) => x.kind === 'htb' && x.handle === '1:'));
  t.true((await listTables(nft)).some((x) => x.name === 'sp_nn_t'));

  // and nothing of it in this process's own namespace
  const own = NetlinkConnection.open(NETLINK_ROUTE);
  const e = await t.throwsAsync(getLinkByName(own, DEV), { instanceOf: NetlinkError });
  t.is(e!.code, 'ENODEV');
  t.false(spawnSync(IP, ['link', 'show', DEV]).status === 0);
  const ownNft = NetlinkConnection.open(NETLINK_NETFILTER);
  t.false((await listTables(ownNft)).some((x) => x.name === 'sp_nn_t'));
  own.close();
  ownNft.close();
  route.close();
  nft.close();
  t.is(ownNs(), before);
});

test.serial('a namespace by path (/proc/PID/ns/net of a process inside it)', async (t) => {
  sleeper = spawn(IP, ['netns', 'exec', NS, '/bin/sleep', '60'], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 300));
  const path = `/proc/${sleeper.pid}/ns/net`;
  // the same namespace (nsfs inode) as /run/netns/NS
  t.is(statSync(path).ino, statSync(`/run/netns/${NS}`).ino);
  t.is(netnsPath(path), path);
  const conn = NetlinkConnection.open(NETLINK_ROUTE, { netns: path });
  const names = (await listLinks(conn)).map((l) => l.ifname).sort();
  conn.close();
  const oracle = (JSON.parse(execFileSync(IP, ['-n', NS, '-j', 'link', 'show'], { encoding: 'utf8' })) as Array<{ ifname: string }>)
    .map((l) => l.ifname)
    .sort();
  t.deepEqual(names, oracle);
  t.true(names.includes(DEV));
  sleeper.kill('SIGKILL');
  sleeper = undefined;
});

test.serial('the process-wide default reaches connections opened inside the library (sock_diag), and SYNPLUG_NETNS a child process', async (t) => {
  // a listener in the namespace (python, run inside it) and one in our own namespace (node)
  const port = 40000 + (process.pid % 10000);
  const py = spawn(
    IP,
    [
      'netns',
      'exec',
      NS,
      'python3',
      '-c',
      `import socket,time\ns=socket.socket()\ns.bind(('127.0.0.1',${port}))\ns.listen()\nprint('up',flush=True)\ntime.sleep(60)`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((res) => py.stdout!.once('data', () => res()));
  server = createServer();
  await new Promise<void>((res) => server!.listen(port + 1, '127.0.0.1', () => res()));
  try {
    t.is(defaultNetns(), undefined);
    setDefaultNetns(NS);
    t.is(defaultNetns(), NS);
    const inNs = await listTcpListeners(undefined, {});
    setDefaultNetns(undefined);
    const inOwn = await listTcpListeners(undefined, {});
    t.true(
      inNs.some((l) => l.port === port),
      "the namespace's listener",
    );
    t.false(inNs.some((l) => l.port === port + 1));
    t.true(
      inOwn.some((l) => l.port === port + 1),
      'our own listener',
    );
    t.false(inOwn.some((l) => l.port === port));
  } finally {
    setDefaultNetns(undefined);
    py.kill('SIGKILL');
  }
  // a child process with SYNPLUG_NETNS opens its sockets there
  const r = spawnSync(process.execPath, ['--import=tsx', CHILD, 'open-default'], { encoding: 'utf8', env: { ...process.env, [NETNS_ENV]: NS } });
  const out = JSON.parse(r.stdout) as { ok: boolean; links: string[] };
  t.true(out.ok, r.stdout + r.stderr);
  t.true(out.links.includes(DEV));
});

test.serial('bad namespaces: one that does not exist, files that are not network namespaces, bad names', (t) => {
  const before = ownNs();
  const missing = t.throws(() => NetlinkConnection.open(NETLINK_ROUTE, { netns: 'sp-nn-no-such-ns' }), { instanceOf: UsageError });
  t.is(missing!.message, "network namespace 'sp-nn-no-such-ns' does not exist (no /run/netns/sp-nn-no-such-ns; 'ip netns list' shows the names)");
  t.is(missing!.category, 'usage');
  const missingPath = t.throws(() => NetlinkConnection.open(NETLINK_ROUTE, { netns: '/proc/999999999/ns/net' }), { instanceOf: UsageError });
  t.is(missingPath!.message, "network namespace '/proc/999999999/ns/net' does not exist (no such file)");
  const uts = t.throws(() => NetlinkConnection.open(NETLINK_ROUTE, { netns: '/proc/self/ns/uts' }), { instanceOf: UsageError });
  t.is(uts!.message, "'/proc/self/ns/uts' is not a network namespace (/proc/self/ns/uts is a UTS namespace)");
  const passwd = t.throws(() => NetlinkConnection.open(NETLINK_ROUTE, { netns: '/etc/passwd' }), { instanceOf: UsageError });
  t.regex(passwd!.message, /^'\/etc\/passwd' is not a network namespace/);
  for (const bad of ['', '.', '..']) {
    const e = t.throws(() => NetlinkConnection.open(NETLINK_ROUTE, { netns: bad }), { instanceOf: UsageError });
    t.regex(e!.message, /is not a network namespace name/);
    t.throws(() => setDefaultNetns(bad), { instanceOf: UsageError });
  }
  t.throws(() => checkNetns('sp-nn-no-such-ns'), { instanceOf: UsageError });
  t.throws(() => checkNetns('/proc/self/ns/uts'), { instanceOf: UsageError });
  t.notThrows(() => checkNetns(NS));
  t.is(ownNs(), before, 'still in our own namespace after every refusal');
});

test.serial('a user without CAP_SYS_ADMIN cannot enter a namespace: a permission error from setns', (t) => {
  const r = spawnSync('/usr/bin/setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '--import=tsx', CHILD, 'open-netns', NS], {
    encoding: 'utf8',
    env: { ...process.env, HOME: '/tmp' },
  });
  const out = JSON.parse(r.stdout) as { ok: boolean; name: string; category: string; code: string; syscall: string; message: string };
  t.false(out.ok, r.stdout + r.stderr);
  t.is(out.name, 'SocketError');
  t.is(out.category, 'permission');
  t.is(out.code, 'EPERM');
  t.is(out.syscall, 'setns');
  t.is(out.message, `cannot enter network namespace '${NS}' (/run/netns/${NS}): setns failed: EPERM (needs CAP_SYS_ADMIN: run as root)`);
});
