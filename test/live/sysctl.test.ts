/**
 * net.ipv4.tcp_migrate_req as check and status report it (src/guard/sysctl.ts):
 * read in the namespace --netns names (set to 1 there and left 0 here, with
 * the `sysctl` tool inside that namespace as the oracle), and the listeners
 * of a port grouped (two SO_REUSEPORT sockets on one address and port are a
 * group of 2, as `ss` counts them).
 */
import test from 'ava';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { explainMigrateReq, groupListeners, migrateReqReport, readTcpMigrateReq, TCP_MIGRATE_REQ_PATH } from '../../src/guard/sysctl.js';
import { holdsMigrateReq } from '../../src/guard/reports.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'dist/bundle/synplug.cjs');
const NS_ON = `sp-sysctl1-${process.pid}`;
const NS_OFF = `sp-sysctl0-${process.pid}`;
const IP = '/usr/sbin/ip';
const ADDR = '127.0.0.77';

const sh = (cmd: string, args: string[]): string => execFileSync(cmd, args, { encoding: 'utf8' });
const inNs = (ns: string, args: string[]): string => sh(IP, ['netns', 'exec', ns, ...args]);

test.before(() => {
  for (const ns of [NS_ON, NS_OFF]) sh(IP, ['netns', 'add', ns]);
  inNs(NS_ON, ['sysctl', '-q', '-w', 'net.ipv4.tcp_migrate_req=1']);
  inNs(NS_OFF, ['sysctl', '-q', '-w', 'net.ipv4.tcp_migrate_req=0']);
});
test.after.always(() => {
  for (const ns of [NS_ON, NS_OFF]) spawnSync(IP, ['netns', 'del', ns]);
});

test('readTcpMigrateReq reads the value of the namespace it is given (name or path), not this one', (t) => {
  t.is(inNs(NS_ON, ['sysctl', '-n', 'net.ipv4.tcp_migrate_req']).trim(), '1', 'oracle');
  t.is(readTcpMigrateReq(NS_ON), 1);
  t.is(readTcpMigrateReq(`/run/netns/${NS_ON}`), 1);
  t.is(readTcpMigrateReq(NS_OFF), 0);
  // Twice in a row, alternating: nothing is cached across namespaces.
  t.is(readTcpMigrateReq(NS_ON), 1);
  t.is(readTcpMigrateReq(NS_OFF), 0);
  t.is(readTcpMigrateReq(undefined), Number(readFileSync(TCP_MIGRATE_REQ_PATH, 'utf8').trim()), "this namespace's own value");
  t.is(readFileSync(TCP_MIGRATE_REQ_PATH, 'utf8').trim(), sh('/usr/sbin/sysctl', ['-n', 'net.ipv4.tcp_migrate_req']).trim());
});

test('a namespace that does not exist is a usage error', (t) => {
  const e = t.throws(() => readTcpMigrateReq('sp-sysctl-no-such-ns'));
  t.is((e as { category?: string }).category, 'usage');
});

/** Two listening sockets with SO_REUSEPORT on one address and port (Python: Node 20 has no reusePort). */
async function reuseportPair(t: import('ava').ExecutionContext): Promise<{ port: number; child: ChildProcess }> {
  const code = [
    'import socket, sys, time',
    'a = socket.socket(); a.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)',
    `a.bind(("${ADDR}", 0)); a.listen(16)`,
    'b = socket.socket(); b.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)',
    `b.bind(("${ADDR}", a.getsockname()[1])); b.listen(16)`,
    'print(a.getsockname()[1], flush=True)',
    'sys.stdin.read()',
  ].join('\n');
  const child = spawn('python3', ['-c', code], { stdio: ['pipe', 'pipe', 'inherit'] });
  t.teardown(() => {
    child.kill();
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (c) => reject(new Error(`python3 exited ${c}`)));
  });
  return { port: Number(line), child };
}

test('migrateReqReport: two SO_REUSEPORT sockets on one address and port are one group of 2 (as ss counts them); off means their queues are reset on close', async (t) => {
  const { port } = await reuseportPair(t);
  const ss = sh('/usr/bin/ss', ['-Hltn', `sport = :${port}`])
    .trim()
    .split('\n')
    .filter((l) => l.includes(`${ADDR}:${port}`));
  t.is(ss.length, 2, 'oracle: ss lists two listeners');
  const r = await migrateReqReport({ addr: ADDR, ports: [port], netns: undefined });
  t.is(r.name, 'net.ipv4.tcp_migrate_req');
  t.deepEqual(
    r.listeners?.map((g) => ({ address: g.address, port: g.port, sockets: g.sockets })),
    [{ address: ADDR, port, sockets: ss.length }],
  );
  t.is(r.listeners![0].inodes.length, 2);
  t.is(new Set(r.listeners![0].inodes).size, 2);
  // The meaning follows the value: both sentences, whatever this namespace's own value is.
  t.regex(explainMigrateReq(0, r.listeners), new RegExp(`^off: .*resets the connections queued.*${ADDR.replace(/\./g, '\\.')}:${port} \\(2 sockets\\)`));
  t.regex(explainMigrateReq(1, r.listeners), /^on: .*hands its queued connections to a sibling/);
  // Another address: the group does not accept it.
  const other = await migrateReqReport({ addr: '127.0.0.78', ports: [port] });
  t.deepEqual(other.listeners, []);
  t.regex(other.meaning, /no listener accepts connections to the hold address/);
});

test("holdsMigrateReq with the local queue hold and an inbound hold: the local hold's reuseport group is weighed too (it was left out)", async (t) => {
  const { port } = await reuseportPair(t);
  // the local queue hold holds ADDR (its addrs, every port); the inbound hold another port, with no listener
  const otherPort = port === 65535 ? port - 1 : port + 1;
  const r = await holdsMigrateReq({ holds: [{ addrs: [ADDR] }, { ports: [otherPort], addrs: [] }] });
  t.deepEqual(
    r.listeners?.filter((g) => g.port === port).map((g) => ({ address: g.address, sockets: g.sockets })),
    [{ address: ADDR, sockets: 2 }],
  );
  t.regex(r.meaning, new RegExp(`${ADDR.replace(/\./g, '\\.')}:${port} \\(2 sockets\\)`));
});

test('groupListeners and explainMigrateReq: one socket per port, no sysctl, unknown listeners', (t) => {
  const l = (address: string, port: number, inode: number, recvQ = 0) =>
    ({ family: 'inet', address, port, inode, recvQ, sendQ: 128, uid: 0, cookie: '1', interface: 0 }) as const;
  const g = groupListeners([l('0.0.0.0', 80, 1, 2), l('169.254.255.254', 443, 2), l('169.254.255.254', 443, 3, 5), l('0.0.0.0', 80, 4)]);
  t.deepEqual(
    g.map((x) => [x.address, x.port, x.sockets, x.queued]),
    [
      ['0.0.0.0', 80, 2, 2],
      ['169.254.255.254', 443, 2, 5],
    ],
  );
  t.regex(
    explainMigrateReq(
      0,
      [g[0]].map((x) => ({ ...x, sockets: 1 })),
    ),
    /^off \(every port has one listening socket/,
  );
  t.regex(explainMigrateReq(null, g), /no tcp_migrate_req \(Linux 5\.14\+\)/);
  t.regex(explainMigrateReq(0, null), /could not be listed/);
});

test('CLI: check and status report the sysctl of --netns (text and --json), whatever the setup', (t) => {
  for (const cmd of ['check', 'status']) {
    for (const [ns, value] of [
      [NS_ON, 1],
      [NS_OFF, 0],
    ] as const) {
      const j = spawnSync(process.execPath, [BIN, cmd, '--netns', ns, '--json'], { encoding: 'utf8', timeout: 60_000 });
      const line = j.stdout.trim().split('\n').pop() ?? '';
      const body = JSON.parse(line);
      t.is(body.sysctl?.name, 'net.ipv4.tcp_migrate_req', `${cmd} --netns ${ns}: ${j.stderr}`);
      t.is(body.sysctl.value, value, `${cmd} --netns ${ns}`);
      t.is(body.sysctl.netns, ns);
      const text = spawnSync(process.execPath, [BIN, cmd, '--netns', ns], { encoding: 'utf8', timeout: 60_000 });
      t.regex(text.stdout, new RegExp(`net\\.ipv4\\.tcp_migrate_req = ${value} `), `${cmd} text`);
    }
  }
});
