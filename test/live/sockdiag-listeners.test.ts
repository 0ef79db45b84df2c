/**
 * Live: TCP listeners over NETLINK_SOCK_DIAG, against `ss -ltnHe` and
 * /proc/self/fd (the socket inode of each node server).
 */
import test from 'ava';
import net from 'node:net';
import { execFileSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { NetlinkConnection } from '../../src/netlink/connection.js';
import { NETLINK_SOCK_DIAG } from '../../src/netlink/message.js';
import { listTcpListeners, listTcpSockets, listenerAccepts, type TcpListener } from '../../src/netlink/sockdiag.js';

interface SsListener {
  address: string;
  port: number;
  inode: number;
  cookie: string;
  recvQ: number;
  sendQ: number;
  v6only?: boolean;
}

/** `ss -ltnHe`, parsed: the oracle. */
function ss(): SsListener[] {
  const out = execFileSync('ss', ['-ltnHe'], { encoding: 'utf8' });
  return out
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const f = line.trim().split(/\s+/);
      const local = f[3];
      const i = local.lastIndexOf(':');
      let host = local.slice(0, i);
      if (host === '*') host = '::'; // ss prints a dual-stack :: as *
      host = host.replace(/^\[(.*)\]$/, '$1');
      const ino = /ino:(\d+)/.exec(line);
      const sk = /sk:([0-9a-f]+)/.exec(line);
      const v6 = /v6only:(\d)/.exec(line);
      const r: SsListener = {
        address: host,
        port: Number(local.slice(i + 1)),
        inode: Number(ino![1]),
        cookie: BigInt(`0x${sk![1]}`).toString(),
        recvQ: Number(f[1]),
        sendQ: Number(f[2]),
      };
      if (v6) r.v6only = v6[1] === '1';
      return r;
    });
}

function listen(options: net.ListenOptions & { backlog?: number }): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(options, () => resolve(s));
  });
}
const portOf = (s: net.Server): number => (s.address() as net.AddressInfo).port;
/** The socket inode behind a server's fd (libuv exposes the fd on Linux). */
function inodeOf(s: net.Server): number {
  const fd = (s as unknown as { _handle: { fd: number } })._handle.fd;
  const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
  return Number(m![1]);
}
const close = (s: net.Server): Promise<void> => new Promise((r) => s.close(() => r()));

let conn: NetlinkConnection;
test.before(() => {
  conn = NetlinkConnection.open(NETLINK_SOCK_DIAG);
});
test.after.always(() => conn?.close());

test.serial('each node server is listed with its inode, port and address, exactly as ss shows it', async (t) => {
  const servers = await Promise.all([
    listen({ port: 0, host: '127.0.0.1' }),
    listen({ port: 0, host: '0.0.0.0', backlog: 17 }),
    listen({ port: 0, host: '::1' }),
    listen({ port: 0, host: '::' }),
    listen({ port: 0, host: '::', ipv6Only: true }),
  ]);
  try {
    const ours = await listTcpListeners(conn);
    const theirs = ss();
    for (const s of servers) {
      const port = portOf(s);
      const mine = ours.filter((l) => l.port === port);
      t.is(mine.length, 1, `port ${port}`);
      const l = mine[0];
      t.is(l.inode, inodeOf(s), `inode of port ${port}`);
      t.is(l.uid, process.getuid!());
      const o = theirs.find((x) => x.port === port)!;
      t.truthy(o, `ss lists port ${port}`);
      t.deepEqual(
        {
          address: l.address,
          port: l.port,
          inode: l.inode,
          cookie: l.cookie,
          recvQ: l.recvQ,
          sendQ: l.sendQ,
          ...(l.v6only === undefined ? {} : { v6only: l.v6only }),
        },
        o,
      );
    }
    const [, any4, , dual, v6only] = servers;
    t.is(ours.find((l) => l.port === portOf(any4))!.sendQ, 17); // the backlog
    const d = ours.find((l) => l.port === portOf(dual))!;
    t.is(d.family, 'inet6');
    t.false(d.v6only);
    t.true(listenerAccepts(d, '169.254.255.254'));
    const v = ours.find((l) => l.port === portOf(v6only))!;
    t.true(v.v6only);
    t.false(listenerAccepts(v, '169.254.255.254'));
  } finally {
    await Promise.all(servers.map(close));
  }
});

test.serial('a new listener shows up with an inode that did not exist before; closed, it is gone', async (t) => {
  const before = new Set((await listTcpListeners(conn)).map((l) => l.inode));
  const s = await listen({ port: 0, host: '127.0.0.1' });
  const port = portOf(s);
  const after = await listTcpListeners(conn, { port });
  t.is(after.length, 1);
  t.false(before.has(after[0].inode));
  t.is(after[0].inode, inodeOf(s));
  // a connection to it is not a listener, but is a TCP socket we can see
  const c = net.connect(port, '127.0.0.1');
  await new Promise((r) => c.once('connect', r));
  t.is((await listTcpListeners(conn, { port })).length, 1);
  const est = (await listTcpSockets(conn, { states: [1], family: 'inet' })).filter((x) => x.port === port || x.peerPort === port);
  t.is(est.length, 2); // both ends
  t.true(est.every((x) => x.state === 'ESTABLISHED'));
  c.destroy();
  await close(s);
  t.deepEqual(await listTcpListeners(conn, { port }), []);
  t.false(ss().some((x) => x.port === port));
});

test.serial('without a connection, listTcpListeners opens and closes its own', async (t) => {
  const s = await listen({ port: 0, host: '::1' });
  try {
    const ls: TcpListener[] = await listTcpListeners(undefined, { port: portOf(s) });
    t.is(ls.length, 1);
    t.is(ls[0].address, '::1');
  } finally {
    await close(s);
  }
});
