/**
 * Live: the real socket transport on this machine's kernel. Requests are read
 * by peeking at each reply's size; dumps go out on a second socket that reads
 * with a 64 KiB buffer, so the kernel fills ~32 KiB chunks instead of ~3.7 KiB
 * ones (netlink_recvmsg sizes dump chunks after the socket's largest read).
 * Checked by counting datagrams on a dump of 2,000 htb classes, against a
 * transport that only peeks, with `tc` as the oracle for the classes.
 *
 * Devices: sp-nls0.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NetlinkConnection, SocketTransport, DUMP_READ_BUFFER } from '../../src/netlink/connection.js';
import { NETLINK_ROUTE } from '../../src/netlink/message.js';
import { getLinkByName } from '../../src/netlink/route/link.js';
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
    super.onDatagram((d) => { this.datagrams++; this.largest = Math.max(this.largest, d.length); cb(d); });
  }
}

test.before(() => {
  try { execFileSync(IP, ['link', 'del', DEV], { stdio: 'ignore' }); } catch { /* none */ }
  execFileSync(IP, ['link', 'add', DEV, 'type', 'ifb']);
  execFileSync(TC, ['qdisc', 'add', 'dev', DEV, 'root', 'handle', '1:', 'htb']);
  const dir = mkdtempSync(join(tmpdir(), 'synplug-nls-'));
  const lines: string[] = [];
  for (let i = 1; i <= N; i++) lines.push(`class add dev ${DEV} parent 1: classid 1:${i.toString(16)} htb rate 1mbit`);
  writeFileSync(join(dir, 'batch'), lines.join('\n') + '\n');
  execFileSync(TC, ['-batch', join(dir, 'batch')]);
  rmSync(dir, { recursive: true, force: true });
});

test.after.always(() => {
  try { execFileSync(IP, ['link', 'del', DEV], { stdio: 'ignore' }); } catch { /* gone */ }
});

test('a dump comes in ~32 KiB datagrams on the dump socket; the same dump read by peeking takes many more', async (t) => {
  const tcCount = (execFileSync(TC, ['class', 'show', 'dev', DEV], { encoding: 'utf8' }).match(/^class htb /gm) ?? []).length;
  t.is(tcCount, N);

  const big = new Counting(NETLINK_ROUTE);
  const conn = new NetlinkConnection(big, NETLINK_ROUTE);
  const link = await getLinkByName(conn, DEV); // a request: read by peeking
  const afterRequest = big.datagrams;
  const list = await listClasses(conn, { ifindex: link.ifindex, stats: true });
  const dumpDatagrams = big.datagrams - afterRequest;
  t.is(list.length, N);
  t.true(big.largest > 16384 && big.largest <= DUMP_READ_BUFFER, `largest datagram ${big.largest} bytes`);

  // A request after the dump is still answered (the request socket is another socket).
  await changeClass(conn, { ifindex: link.ifindex, classid: '1:1', parent: '1:', kind: 'htb', options: { rate: '2mbit' } });
  const again = await listClasses(conn, { ifindex: link.ifindex });
  t.is(again.find((c) => c.handle === '1:1')?.options?.rate, 250000, 'the change is seen by the next dump');
  conn.close();

  // Only peeking (a fixed small buffer is not possible: the package either peeks or uses one fixed buffer).
  const peek = new Counting(NETLINK_ROUTE);
  (peek as unknown as { sendDump?: unknown }).sendDump = undefined; // dumps on the request socket, as before
  const pconn = new NetlinkConnection(peek, NETLINK_ROUTE);
  const plist = await listClasses(pconn, { ifindex: link.ifindex });
  pconn.close();
  t.is(plist.length, N);
  t.true(peek.datagrams > 4 * dumpDatagrams, `peeking: ${peek.datagrams} datagrams, dump socket: ${dumpDatagrams}`);
});

test('dumps and requests in flight at once on one connection are all answered', async (t) => {
  const conn = NetlinkConnection.open(NETLINK_ROUTE);
  const link = await getLinkByName(conn, DEV);
  const [a, b, c] = await Promise.all([
    listClasses(conn, { ifindex: link.ifindex }),
    getLinkByName(conn, DEV),
    listClasses(conn, { dev: DEV }),
  ]);
  conn.close();
  t.is(a.length, N);
  t.is(b.ifindex, link.ifindex);
  t.is(c.length, N);
});
