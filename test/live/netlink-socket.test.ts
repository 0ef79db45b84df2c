/**
 * Live: the koffi socket transport (src/netlink/transport.ts) on this
 * machine's kernel.
 *
 * - One socket reads everything with a 64 KiB buffer, so the kernel fills
 *   ~32 KiB dump chunks (netlink_recvmsg sizes them after the socket's
 *   largest read); a 4 KiB read buffer gets many more, smaller ones. Counted
 *   on a dump of 2,000 htb classes, with `tc` as the oracle.
 * - A request's answer is read inside send (the kernel answers inside
 *   sendmsg): the request settles before any timer or I/O callback runs.
 * - A long dump yields to the event loop between chunks: a setImmediate
 *   queued when the dump starts runs before the dump ends.
 * - ENOBUFS (the receive buffer overflowed) rejects what was in flight with
 *   a SocketError; the connection is usable afterwards.
 *
 * Devices: sp-nls0.
 */
import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NetlinkConnection, SocketTransport, DUMP_READ_BUFFER } from '../../src/netlink/connection.js';
import { SocketError, SOL_SOCKET, SO_RCVBUF } from '../../src/netlink/libc.js';
import { NETLINK_ROUTE, NLM_F_ECHO } from '../../src/netlink/message.js';
import { getLinkByName } from '../../src/netlink/route/link.js';
import { RTM_GETLINK } from '../../src/netlink/route/constants.js';
import { listClasses, changeClass } from '../../src/tc/index.js';

const DEV = 'sp-nls0';
const N = 2000;
const TC = '/usr/sbin/tc';
const IP = '/usr/sbin/ip';

/** A SocketTransport that counts the datagrams it delivers and their largest size. */
class Counting extends SocketTransport {
  datagrams = 0;
  largest = 0;
  override onDatagram(cb: (d: Buffer) => void): void {
    super.onDatagram((d) => {
      this.datagrams++;
      this.largest = Math.max(this.largest, d.length);
      cb(d);
    });
  }
}

let ifindex = 0;

test.before(() => {
  try {
    execFileSync(IP, ['link', 'del', DEV], { stdio: 'ignore' });
  } catch {
    /* none */
  }
  execFileSync(IP, ['link', 'add', DEV, 'type', 'ifb']);
  execFileSync(TC, ['qdisc', 'add', 'dev', DEV, 'root', 'handle', '1:', 'htb']);
  const dir = mkdtempSync(join(tmpdir(), 'synplug-nls-'));
  const lines: string[] = [];
  for (let i = 1; i <= N; i++) lines.push(`class add dev ${DEV} parent 1: classid 1:${i.toString(16)} htb rate 1mbit`);
  writeFileSync(join(dir, 'batch'), lines.join('\n') + '\n');
  execFileSync(TC, ['-batch', join(dir, 'batch')]);
  rmSync(dir, { recursive: true, force: true });
  ifindex = (JSON.parse(execFileSync(IP, ['-j', 'link', 'show', DEV], { encoding: 'utf8' })) as Array<{ ifindex: number }>)[0].ifindex;
});

test.after.always(() => {
  try {
    execFileSync(IP, ['link', 'del', DEV], { stdio: 'ignore' });
  } catch {
    /* gone */
  }
});

test('a dump comes in ~32 KiB datagrams with the 64 KiB read buffer; a 4 KiB buffer takes many more; requests after it are answered', async (t) => {
  const tcCount = (execFileSync(TC, ['class', 'show', 'dev', DEV], { encoding: 'utf8' }).match(/^class htb /gm) ?? []).length;
  t.is(tcCount, N);

  const big = new Counting(NETLINK_ROUTE);
  const conn = new NetlinkConnection(big, NETLINK_ROUTE);
  const link = await getLinkByName(conn, DEV);
  t.is(link.ifindex, ifindex);
  const before = big.datagrams;
  const list = await listClasses(conn, { ifindex, stats: true });
  const dumpDatagrams = big.datagrams - before;
  t.is(list.length, N);
  t.true(big.largest > 16384 && big.largest <= DUMP_READ_BUFFER, `largest datagram ${big.largest} bytes`);

  await changeClass(conn, { ifindex, classid: '1:1', parent: '1:', kind: 'htb', options: { rate: '2mbit' } });
  const again = await listClasses(conn, { ifindex });
  t.is(again.find((c) => c.handle === '1:1')?.options?.rate, 250000, 'the change is seen by the next dump');
  const tcRate = execFileSync(TC, ['class', 'show', 'dev', DEV, 'classid', '1:1'], { encoding: 'utf8' });
  t.regex(tcRate, /rate 2Mbit/);
  conn.close();

  const small = new Counting(NETLINK_ROUTE, { readBufferSize: 4096 });
  const sconn = new NetlinkConnection(small, NETLINK_ROUTE);
  const slist = await listClasses(sconn, { ifindex });
  sconn.close();
  t.is(slist.length, N);
  t.true(small.largest <= 4096);
  t.true(small.datagrams > 4 * dumpDatagrams, `4 KiB reads: ${small.datagrams} datagrams, 64 KiB reads: ${dumpDatagrams}`);
});

test('dumps and requests in flight at once on one connection are all answered', async (t) => {
  const conn = NetlinkConnection.open(NETLINK_ROUTE);
  const [a, b, c] = await Promise.all([listClasses(conn, { ifindex }), getLinkByName(conn, DEV), listClasses(conn, { dev: DEV })]);
  conn.close();
  t.is(a.length, N);
  t.is(b.ifindex, ifindex);
  t.is(c.length, N);
});

test('a request is answered inside send: it settles before a timer or setImmediate queued before it', async (t) => {
  const conn = NetlinkConnection.open(NETLINK_ROUTE);
  await getLinkByName(conn, DEV); // warm
  const order: string[] = [];
  setImmediate(() => order.push('immediate'));
  setTimeout(() => order.push('timer'), 0);
  await getLinkByName(conn, DEV).then(() => order.push('reply'));
  t.is(order[0], 'reply', order.join(','));
  conn.close();
});

test('a long dump yields to the event loop between chunks: a setImmediate queued at its start runs before it ends', async (t) => {
  const counting = new Counting(NETLINK_ROUTE);
  const conn = new NetlinkConnection(counting, NETLINK_ROUTE);
  let ranAt = -1;
  const p = listClasses(conn, { ifindex });
  setImmediate(() => {
    ranAt = counting.datagrams;
  });
  const list = await p;
  const total = counting.datagrams;
  conn.close();
  t.is(list.length, N);
  t.true(total > 3, `${total} datagrams`);
  t.true(ranAt >= 1 && ranAt < total, `setImmediate ran after datagram ${ranAt} of ${total}`);
});

test('transport basics: CLOEXEC fd, port id, extended acks and strict checking accepted, the receive buffer sized (past rmem_max as root)', (t) => {
  const tr = new SocketTransport(NETLINK_ROUTE, { recvBufferSize: 65536 });
  t.true(tr.fd > 2);
  t.true(tr.portId > 0);
  t.true(tr.extendedAck);
  t.true(tr.strictCheck);
  // the kernel doubles SO_RCVBUF (sock_setsockopt: val * 2)
  t.is(tr.getIntOption(SOL_SOCKET, SO_RCVBUF), 2 * 65536);
  t.is(tr.recvBufferSize, 2 * 65536);
  // close-on-exec: the descriptor is not inherited (FD_CLOEXEC shows in /proc/self/fdinfo flags, 02000000)
  const flags = /flags:\s*([0-7]+)/.exec(execFileSync('/bin/cat', [`/proc/${process.pid}/fdinfo/${tr.fd}`], { encoding: 'utf8' }))![1];
  t.true((parseInt(flags, 8) & 0o2000000) !== 0, `fdinfo flags ${flags}`);
  const conn = new NetlinkConnection(tr, NETLINK_ROUTE);
  t.true(conn.extendedAck);
  t.true(conn.strictCheck);
  conn.close();
  // past net.core.rmem_max: SO_RCVBUFFORCE, as root
  const rmemMax = Number(execFileSync('/bin/cat', ['/proc/sys/net/core/rmem_max'], { encoding: 'utf8' }));
  const big = new SocketTransport(NETLINK_ROUTE, { recvBufferSize: rmemMax * 2 });
  t.is(big.recvBufferSize, 4 * rmemMax);
  big.close();
  const off = NetlinkConnection.open(NETLINK_ROUTE, { extendedAck: false, strictCheck: false });
  t.false(off.extendedAck);
  t.false(off.strictCheck);
  off.close();
});

test('ENOBUFS: a receive buffer too small for the answers rejects the exchange with a SocketError; the connection still works', async (t) => {
  // A 16 KiB receive buffer (8 KiB asked, doubled), then 200 RTM_GETLINK requests in one
  // datagram, each echoed (NLM_F_ECHO) and answered with a ~1.5 KiB RTM_NEWLINK: the
  // kernel queues them all inside sendmsg and drops what does not fit (netlink_overrun).
  const conn = NetlinkConnection.open(NETLINK_ROUTE, { recvBufferSize: 8192, timeoutMs: 2000 });
  const ifi = Buffer.alloc(16);
  ifi.writeInt32LE(ifindex, 4);
  const msgs = Array.from({ length: 200 }, () => ({ type: RTM_GETLINK, flags: 4 /* NLM_F_ACK */ | NLM_F_ECHO, payload: ifi }));
  const err = await t.throwsAsync(conn.exchange(msgs), { instanceOf: SocketError });
  t.is(err!.code, 'ENOBUFS');
  t.is(err!.category, 'kernel');
  t.regex(err!.message, /receive buffer overflowed \(ENOBUFS\)/);
  const link = await getLinkByName(conn, DEV);
  t.is(link.ifindex, ifindex);
  conn.close();
});

test("an open real connection does not keep the process alive (the poll handle is unref'd; the timer only while an exchange waits)", async (t) => {
  const conn = new URL('../../src/netlink/connection.ts', import.meta.url).pathname;
  const link = new URL('../../src/netlink/route/link.ts', import.meta.url).pathname;
  const script = `
    import { NetlinkConnection } from ${JSON.stringify(conn)};
    import { getLinkByName, listLinks } from ${JSON.stringify(link)};
    const c = NetlinkConnection.open(0, { timeoutMs: 60000 });
    const l = await getLinkByName(c, ${JSON.stringify(DEV)});
    const all = await listLinks(c);
    console.log(l.ifindex, all.length > 0);
  `;
  const t0 = Date.now();
  const r = spawnSync(process.execPath, ['--import=tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  t.is(r.status, 0, r.stderr);
  t.is(r.stdout.trim(), `${ifindex} true`);
  t.true(Date.now() - t0 < 25_000, 'it ended on its own, long before the 60 s timeout');
});
