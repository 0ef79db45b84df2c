/**
 * Live: sockets that cannot be created or used, each with a typed error
 * naming what failed.
 *
 * - An unknown netlink protocol (31): socket() fails with EPROTONOSUPPORT, a
 *   SocketError of category `missing-module` naming the protocol.
 * - A libc without the function: binding a function that no C library has
 *   is a LibcError naming it.
 * - A user without CAP_NET_ADMIN (setpriv as nobody): Linux lets anyone
 *   create a netlink socket (netlink_create checks no capability), so the
 *   refusal comes from the kernel for the request (EPERM): a NetlinkError of
 *   category `permission`. (A socket() EPERM needs a seccomp or LSM policy,
 *   which this machine cannot set up; its category is checked in the unit
 *   test netlink-socket.)
 *
 * Devices: sp-nle0.
 */
import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { NetlinkConnection, protocolLabel } from '../../src/netlink/connection.js';
import { SocketError, LibcError, bindLibcFunction, libc } from '../../src/netlink/libc.js';
import { NETLINK_ROUTE, NETLINK_SOCK_DIAG, NETLINK_NETFILTER } from '../../src/netlink/message.js';
import '../../src/netlink/sockdiag.js';
import '../../src/iptables/index.js';

const IP = '/usr/sbin/ip';
const DEV = 'sp-nle0';
const CHILD = new URL('./netlink-netns-child.ts', import.meta.url).pathname;

test.before(() => {
  try {
    execFileSync(IP, ['link', 'del', DEV], { stdio: 'ignore' });
  } catch {
    /* none */
  }
  execFileSync(IP, ['link', 'add', DEV, 'type', 'ifb']);
});
test.after.always(() => {
  try {
    execFileSync(IP, ['link', 'del', DEV], { stdio: 'ignore' });
  } catch {
    /* gone */
  }
});

test('an unknown netlink protocol (31): EPROTONOSUPPORT, category missing-module, the protocol named', (t) => {
  const e = t.throws(() => NetlinkConnection.open(31), { instanceOf: SocketError });
  t.is(e!.code, 'EPROTONOSUPPORT');
  t.is(e!.errno, 93);
  t.is(e!.syscall, 'socket');
  t.is(e!.protocol, 31);
  t.is(e!.category, 'missing-module');
  t.is(e!.message, 'cannot open a netlink protocol 31 socket: socket failed: EPROTONOSUPPORT: this kernel does not provide netlink protocol 31');
});

test('every protocol synplug speaks opens, with its name known', (t) => {
  const names = [
    [NETLINK_ROUTE, 'NETLINK_ROUTE (0)'],
    [NETLINK_SOCK_DIAG, 'NETLINK_SOCK_DIAG (4)'],
    [NETLINK_NETFILTER, 'NETLINK_NETFILTER (12)'],
  ] as const;
  for (const [p, name] of names) {
    const c = NetlinkConnection.open(p);
    t.true(c.extendedAck, `protocol ${p}`);
    c.close();
    t.is(protocolLabel(p), name);
  }
});

test('a libc without the function: LibcError naming it', (t) => {
  const e = t.throws(() => bindLibcFunction('synplug_no_such_function', 'int synplug_no_such_function(int fd)'), { instanceOf: LibcError });
  t.is(e!.symbol, 'synplug_no_such_function');
  t.is(e!.category, 'failure');
  t.regex(
    e!.message,
    /^the C library has no function 'synplug_no_such_function' \(.+\); synplug's netlink socket needs synplug_no_such_function\(\) from glibc or musl$/,
  );
  // the functions it does need are all there
  for (const f of ['socket', 'bind', 'getsockname', 'setsockopt', 'getsockopt', 'send', 'recv', 'close', 'setns'] as const) t.is(typeof libc(f), 'function');
});

test('as nobody (setpriv): the socket opens, the kernel refuses the change with EPERM: a NetlinkError of category permission', (t) => {
  const r = spawnSync('/usr/bin/setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '--import=tsx', CHILD, 'open-route', DEV], {
    encoding: 'utf8',
    env: { ...process.env, HOME: '/tmp' },
  });
  const out = JSON.parse(r.stdout) as { ok: boolean; name: string; category: string; code: string; message: string };
  t.false(out.ok, r.stdout + r.stderr);
  t.is(out.name, 'NetlinkError');
  t.is(out.code, 'EPERM');
  t.is(out.category, 'permission');
  t.regex(out.message, /not permitted; this needs CAP_NET_ADMIN/);
  // nothing was added
  t.notRegex(execFileSync('/usr/sbin/tc', ['qdisc', 'show', 'dev', DEV], { encoding: 'utf8' }), /pfifo/);
});
