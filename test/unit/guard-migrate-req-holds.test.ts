/**
 * The listeners `check` and `status` weigh net.ipv4.tcp_migrate_req against
 * (src/guard/reports.ts, sysctl.ts): those of every hold reported. With the
 * local hold and an inbound hold both set up, the line used to look at one
 * hold's listeners only: a local plug hold's address (the inbound hold's
 * ports ignored), or, with the local queue hold (no `addr`, its `addrs`),
 * the inbound hold's ports alone (the local hold's listeners ignored).
 */
import test from 'ava';
import { heldEndpointsOf } from '../../src/guard/reports.js';
import { heldListeners } from '../../src/guard/sysctl.js';
import type { TcpListener } from '../../src/netlink/sockdiag.js';

const l = (address: string, port: number, inode: number, family: 'inet' | 'inet6' = 'inet'): TcpListener =>
  ({ family, address, port, inode, recvQ: 0, sendQ: 128, uid: 0, cookie: String(inode), interface: 0, v6only: false }) as TcpListener;

const LISTENERS = [
  l('169.254.255.254', 16000, 1), // the local hold's proxy, on a port of its own
  l('0.0.0.0', 80, 2), // the inbound hold's port, any address
  l('0.0.0.0', 80, 3),
  l('127.0.0.1', 5432, 4), // neither hold's
  l('169.254.46.9', 443, 5), // another address, another port
];

const inodes = (ls: readonly TcpListener[]) => ls.map((x) => x.inode).sort((a, b) => a - b);

test('check/status with the local plug hold and an inbound hold: the listeners of both (the inbound port was ignored)', (t) => {
  const holds = heldEndpointsOf({ holds: [{ addr: '169.254.255.254' }, { ports: [80] }] });
  t.deepEqual(inodes(heldListeners(LISTENERS, holds)), [1, 2, 3]);
});

test("check/status with the local queue hold and an inbound hold: the listeners of both (the local hold's were ignored)", (t) => {
  const holds = heldEndpointsOf({ holds: [{ addrs: ['169.254.255.254'] }, { ports: [80], addrs: [] }] });
  t.deepEqual(inodes(heldListeners(LISTENERS, holds)), [1, 2, 3]);
});

test('a hold of some ports to some addresses: only listeners accepting one of them on one of those ports; a local queue hold of two addresses: both', (t) => {
  t.deepEqual(inodes(heldListeners(LISTENERS, heldEndpointsOf({ holds: [{ ports: [443], addrs: ['169.254.46.9'] }] }))), [5]);
  t.deepEqual(
    inodes(heldListeners(LISTENERS, heldEndpointsOf({ holds: [{ ports: [80], addrs: ['169.254.46.9'] }] }))),
    [2, 3],
    'a wildcard listener accepts it',
  );
  t.deepEqual(
    inodes(heldListeners(LISTENERS, heldEndpointsOf({ holds: [{ addrs: ['169.254.255.254', '169.254.46.9'] }] }))),
    [1, 2, 3, 5],
    'the wildcard listeners accept them too',
  );
});

test('no hold reported: every listener, as before', (t) => {
  t.deepEqual(inodes(heldListeners(LISTENERS, heldEndpointsOf({ holds: [] }))), [1, 2, 3, 4, 5]);
});
