/**
 * Live: extended acks and strict dumps on this machine's kernel, through the
 * koffi socket (NETLINK_EXT_ACK, NETLINK_CAP_ACK, NETLINK_GET_STRICT_CHK).
 *
 * - A refused request carries the kernel's own sentence, first in the
 *   message, then synplug's; `tc` prints the same sentence (the oracle).
 * - A warning on a successful ack (htb's "quantum ... is big") reaches the
 *   caller: the connection's onWarning, the process-wide handler, the
 *   exchange result and `conn.warnings`; `tc` prints the same warning.
 * - With strict checking, an RTM_GETADDR dump for one ifindex returns only
 *   that device's addresses (`ip -j addr show dev` is the oracle); without
 *   it, every device's.
 *
 * Devices: sp-nlx0, sp-nlx1, sp-nlx2.
 */
import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { NetlinkConnection, setDefaultWarningHandler, type NetlinkWarning } from '../../src/netlink/connection.js';
import { NetlinkError } from '../../src/netlink/errors.js';
import { NETLINK_ROUTE, NLM_F_ACK, NLM_F_CREATE, NLM_F_EXCL } from '../../src/netlink/message.js';
import { RTM_GETADDR, RTM_NEWADDR, RTM_NEWTCLASS } from '../../src/netlink/route/constants.js';
import { addQdisc, addClass } from '../../src/tc/index.js';
import { classRequest } from '../../src/tc/request.js';

const TC = '/usr/sbin/tc';
const IP = '/usr/sbin/ip';
const DEVS = ['sp-nlx0', 'sp-nlx1', 'sp-nlx2'];
const ifindex: Record<string, number> = {};

test.before(() => {
  DEVS.forEach((d, i) => {
    try {
      execFileSync(IP, ['link', 'del', d], { stdio: 'ignore' });
    } catch {
      /* none */
    }
    execFileSync(IP, ['link', 'add', d, 'type', 'ifb']);
    execFileSync(IP, ['link', 'set', d, 'up']);
    execFileSync(IP, ['addr', 'add', `169.254.77.${i + 1}/32`, 'dev', d]);
    execFileSync(IP, ['addr', 'add', `169.254.78.${i + 1}/32`, 'dev', d]);
    ifindex[d] = (JSON.parse(execFileSync(IP, ['-j', 'link', 'show', d], { encoding: 'utf8' })) as Array<{ ifindex: number }>)[0].ifindex;
  });
});

test.after.always(() => {
  for (const d of DEVS)
    try {
      execFileSync(IP, ['link', 'del', d], { stdio: 'ignore' });
    } catch {
      /* gone */
    }
});

test.serial("a pfifo at parent ffff:fff1: the kernel's sentence, as tc prints it, then synplug's", async (t) => {
  const dev = DEVS[0];
  const tc = spawnSync(TC, ['qdisc', 'add', 'dev', dev, 'parent', 'ffff:fff1', 'handle', '5:', 'pfifo'], { encoding: 'utf8' });
  t.not(tc.status, 0);
  t.regex(tc.stderr, /Specified parent ID is reserved for ingress and clsact Qdiscs\./);

  const conn = NetlinkConnection.open(NETLINK_ROUTE);
  t.true(conn.extendedAck);
  const err = await t.throwsAsync(addQdisc(conn, { dev, kind: 'pfifo', parent: 'ffff:fff1', handle: '5:' }), { instanceOf: NetlinkError });
  conn.close();
  // the kernel's NLMSGERR_ATTR_MSG has no final period; tc adds one when it prints it
  t.is(err!.extAckMessage, 'Specified parent ID is reserved for ingress and clsact Qdiscs');
  t.is(err!.requestType, 'RTM_NEWQDISC');
  t.true(err!.message.startsWith('Specified parent ID is reserved for ingress and clsact Qdiscs. '), err!.message);
  // synplug's own sentence follows, and is kept alone too
  t.truthy(err!.explanation);
  // ours follows the kernel's sentence, starting with a capital letter
  const ours = err!.explanation!;
  t.true(err!.message.endsWith(ours.charAt(0).toUpperCase() + ours.slice(1)), err!.message);
  t.is((err!.toJSON() as { extack?: string }).extack, 'Specified parent ID is reserved for ingress and clsact Qdiscs');
});

test.serial(
  'a refused request: the echo is capped (NETLINK_CAP_ACK); a socket without NETLINK_EXT_ACK gets no text and the whole request echoed',
  async (t) => {
    const conn = NetlinkConnection.open(NETLINK_ROUTE);
    const err = await t.throwsAsync(addQdisc(conn, { dev: DEVS[0], kind: 'pfifo', parent: 'ffff:fff1', handle: '5:' }), { instanceOf: NetlinkError });
    conn.close();
    t.true(err!.capped);
    const off = NetlinkConnection.open(NETLINK_ROUTE, { extendedAck: false });
    const plain = await t.throwsAsync(addQdisc(off, { dev: DEVS[0], kind: 'pfifo', parent: 'ffff:fff1', handle: '5:' }), { instanceOf: NetlinkError });
    off.close();
    t.is(plain!.extAckMessage, undefined, 'without NETLINK_EXT_ACK the kernel sends no text');
    t.false(plain!.capped);
    t.is(plain!.code, err!.code);
  },
);

test.serial('an htb warning on a successful ack reaches onWarning, the default handler, the exchange result and conn.warnings', async (t) => {
  const dev = DEVS[1];
  execFileSync(TC, ['qdisc', 'add', 'dev', dev, 'root', 'handle', '1:', 'htb', 'r2q', '1']);
  // the oracle: tc prints the kernel's warning for the same class
  const tc = spawnSync(TC, ['class', 'add', 'dev', dev, 'parent', '1:', 'classid', '1:9', 'htb', 'rate', '1gbit'], { encoding: 'utf8' });
  t.is(tc.status, 0, tc.stderr);
  const tcWarning = /Warning: (.*quantum of class 10009 is big.*)/.exec(tc.stderr);
  t.truthy(tcWarning, tc.stderr);

  const mine: NetlinkWarning[] = [];
  const conn = NetlinkConnection.open(NETLINK_ROUTE, { onWarning: (w) => mine.push(w) });
  await addClass(conn, { dev, parent: '1:', classid: '1:1', kind: 'htb', options: { rate: '1gbit' } });
  t.is(mine.length, 1);
  t.is(mine[0].requestType, 'RTM_NEWTCLASS');
  t.regex(mine[0].message, /quantum of class 10001 is big/);
  t.is(mine[0].message.replace('10001', '10009'), tcWarning![1].trim());
  t.deepEqual(conn.warnings, [mine[0].message]);
  t.regex(execFileSync(TC, ['class', 'show', 'dev', dev, 'classid', '1:1'], { encoding: 'utf8' }), /class htb 1:1/);
  conn.close();

  // the process-wide handler, for a connection without its own
  const seen: NetlinkWarning[] = [];
  setDefaultWarningHandler((w) => seen.push(w));
  try {
    const c2 = NetlinkConnection.open(NETLINK_ROUTE);
    await addClass(c2, { dev, parent: '1:', classid: '1:3', kind: 'htb', options: { rate: '1gbit' } });
    c2.close();
  } finally {
    setDefaultWarningHandler(undefined);
  }
  t.is(seen.length, 1);
  t.regex(seen[0].message, /quantum of class 10003 is big/);
});

test.serial("exchange(): a warning is on its message's result", async (t) => {
  const dev = DEVS[2];
  execFileSync(TC, ['qdisc', 'add', 'dev', dev, 'root', 'handle', '1:', 'htb', 'r2q', '1']);
  const conn = NetlinkConnection.open(NETLINK_ROUTE, { onWarning: () => {} });
  // an htb class 1:5, rate 1gbit, built by the tc layer, sent through exchange
  const req = classRequest('add', ifindex[dev], { classid: '1:5', parent: '1:', kind: 'htb', options: { rate: '1gbit' } });
  t.is(req.type, RTM_NEWTCLASS);
  t.is((req.flags ?? 0) & (NLM_F_CREATE | NLM_F_EXCL), NLM_F_CREATE | NLM_F_EXCL);
  const [r] = await conn.exchange([{ type: req.type, flags: (req.flags ?? 0) | NLM_F_ACK, payload: req.payload }]);
  conn.close();
  t.is(r.error, undefined);
  t.regex(r.warning ?? '', /quantum of class 10005 is big/);
});

test.serial("strict dumps: RTM_GETADDR for one ifindex returns only its addresses with NETLINK_GET_STRICT_CHK, every device's without", async (t) => {
  const dev = DEVS[2];
  const oracle = (
    JSON.parse(execFileSync(IP, ['-j', '-4', 'addr', 'show', 'dev', dev], { encoding: 'utf8' })) as Array<{ addr_info: Array<{ local: string }> }>
  )[0].addr_info
    .map((a) => a.local)
    .sort();
  t.deepEqual(oracle, ['169.254.77.3', '169.254.78.3']);
  const all = (JSON.parse(execFileSync(IP, ['-j', '-4', 'addr', 'show'], { encoding: 'utf8' })) as Array<{ addr_info: unknown[] }>).reduce(
    (n, l) => n + l.addr_info.length,
    0,
  );
  // struct ifaddrmsg { __u8 ifa_family; __u8 ifa_prefixlen; __u8 ifa_flags; __u8 ifa_scope; __u32 ifa_index; }
  const hdr = Buffer.alloc(8);
  hdr.writeUInt8(2, 0); // AF_INET
  hdr.writeUInt32LE(ifindex[dev], 4);
  const addrsOf = (msgs: Array<{ type: number; payload: Buffer }>) => msgs.filter((m) => m.type === RTM_NEWADDR).map((m) => m.payload.readUInt32LE(4));

  const strict = NetlinkConnection.open(NETLINK_ROUTE);
  t.true(strict.strictCheck);
  const s = addrsOf(await strict.dumpAll({ type: RTM_GETADDR, payload: hdr }));
  strict.close();
  t.is(s.length, oracle.length);
  t.true(s.every((i) => i === ifindex[dev]));

  const loose = NetlinkConnection.open(NETLINK_ROUTE, { strictCheck: false });
  t.false(loose.strictCheck);
  const l = addrsOf(await loose.dumpAll({ type: RTM_GETADDR, payload: hdr }));
  loose.close();
  t.is(l.length, all);
  t.true(l.length > s.length);
});
