/**
 * Issue 13 item 4: the cost of the inbound hold on the data path, on this
 * machine's kernel (clsact, u32, mirred and ifb exist here; a `pfifo` sits
 * at the IFB's root instead of the plug, which this kernel lacks).
 *
 * Topology: this network namespace (the server) and a second one (the
 * client, an `unshare --net sleep` process) joined by a veth pair;
 * 169.254.79.1 (server) and 169.254.79.2 (client).
 *
 * Measured in the same run, alternating rounds without and with the inbound
 * set-up (clsact on the server's veth, u32SynMatch's IPv4 SYN filters for
 * the two server ports, mirred egress redirect to an IFB with a pfifo root):
 *
 * - bulk: one TCP stream from client to server for `--seconds`, bytes per second;
 * - requests: new connections per second (connect, 1 byte each way, close), one client process;
 *
 * each as the median over `--rounds` rounds; the ratio with/without is the
 * median of each round's own ratio (its two measurements run back to back)
 * (target: at most 2 % loss). Then the IFB's counters: its pfifo must have
 * passed exactly one packet per connection opened during the "with"
 * rounds (the SYNs), nothing of the established traffic.
 *
 * Run: `bash scripts/in-netns.sh node --import=tsx bench/inbound-cost.ts [--seconds 3] [--rounds 5] [--json FILE]`.
 * Exits 0 whatever the verdict (a measurement, not a test); `--strict`: 1 when a target fails.
 *
 * @module
 */
import { execFileSync, execFile, spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { NetlinkConnection } from '../src/netlink/connection.js';
import { NETLINK_ROUTE } from '../src/netlink/message.js';
import { createLink, deleteLink, setLinkUp } from '../src/netlink/route/linkinfo.js';
import { addQdisc, listQdiscs } from '../src/tc/index.js';
import { addInboundFilter, removeInboundFilter } from './lib/inbound-filter.js';
import { benchArg, otherNamespace } from './lib/peer-netns.js';
import { midMedian } from './lib/stats.js';

const IP = '/usr/sbin/ip';
const SRV = 'sp-icb0';
const CLI = 'sp-icb1';
const IFB = 'sp-icbi';
const SRV_ADDR = '169.254.79.1';
const CLI_ADDR = '169.254.79.2';
const BULK_PORT = 17001;
const RR_PORT = 17002;

const arg = benchArg;
const SECONDS = Number(arg('seconds', '3'));
const ROUNDS = Number(arg('rounds', '5'));
const JSON_OUT = arg('json', '');
const STRICT = process.argv.includes('--strict');

/** The server: a bulk sink on BULK_PORT, a 1-byte echo on RR_PORT (threads; one process). */
const SERVER = `
import socket, threading
def sink(c):
    while c.recv(1 << 20): pass
    c.close()
def echo(c):
    d = c.recv(1)
    if d: c.sendall(d)
    c.recv(1)  # the client closes first: TIME_WAIT stays on its side, where tcp_tw_reuse recycles it
    c.close()
def serve(port, fn):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(('${SRV_ADDR}', port)); s.listen(4096)
    while True:
        c, _ = s.accept()
        threading.Thread(target=fn, args=(c,), daemon=True).start()
threading.Thread(target=serve, args=(${BULK_PORT}, sink), daemon=True).start()
print('ready', flush=True)
serve(${RR_PORT}, echo)
`;

/** The client: bulk (bytes sent in SECONDS over one connection) or rr (connections completed in SECONDS). Prints JSON. */
const CLIENT = `
import socket, sys, time, json
mode, secs = sys.argv[1], float(sys.argv[2])
if mode == 'bulk':
    s = socket.create_connection(('${SRV_ADDR}', ${BULK_PORT}))
    buf = b'x' * (1 << 16); n = 0; t0 = time.perf_counter(); end = t0 + secs
    while time.perf_counter() < end:
        s.sendall(buf); n += len(buf)
    el = time.perf_counter() - t0
    s.close()
    print(json.dumps({'bytes': n, 'seconds': el, 'connections': 1}))
else:
    n = 0; t0 = time.perf_counter(); end = t0 + secs
    while time.perf_counter() < end:
        s = socket.create_connection(('${SRV_ADDR}', ${RR_PORT}))
        s.sendall(b'x'); s.recv(1); s.close(); n += 1
    el = time.perf_counter() - t0
    print(json.dumps({'connections': n, 'seconds': el}))
`;

function sh(cmd: string, ...args: string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function client(ns: ChildProcess, mode: 'bulk' | 'rr'): Promise<{ bytes?: number; connections: number; seconds: number }> {
  return new Promise((resolve, reject) => {
    execFile(
      'nsenter',
      ['-t', String(ns.pid), '-n', 'python3', '-c', CLIENT, mode, String(SECONDS)],
      { encoding: 'utf8', timeout: SECONDS * 1000 + 60_000 },
      (e, out, err) => (e ? reject(new Error(`${e.message}\n${err}`)) : resolve(JSON.parse(out))),
    );
  });
}

async function main(): Promise<void> {
  if (process.env.SYNPLUG_IN_NETNS !== '1') {
    console.error('inbound-cost: run it in a namespace of its own: bash scripts/in-netns.sh node --import=tsx bench/inbound-cost.ts');
    process.exit(2);
  }
  console.log(
    `load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}; ${SECONDS} s per measurement, ${ROUNDS} rounds each way`,
  );
  const conn = NetlinkConnection.open(NETLINK_ROUTE);
  const ns = await otherNamespace();
  let server: ChildProcess | undefined;
  try {
    for (const d of [SRV, IFB]) {
      try {
        await deleteLink(conn, d);
      } catch {
        /* absent */
      }
    }
    await createLink(conn, { name: SRV, kind: 'veth', peer: { name: CLI, netnsPid: ns.pid } });
    await createLink(conn, { name: IFB, kind: 'ifb' });
    writeFileSync(`/proc/sys/net/ipv6/conf/${IFB}/disable_ipv6`, '1');
    await setLinkUp(conn, IFB);
    sh(IP, 'addr', 'add', `${SRV_ADDR}/24`, 'dev', SRV);
    await setLinkUp(conn, SRV);
    for (const a of [
      ['link', 'set', 'lo', 'up'],
      ['addr', 'add', `${CLI_ADDR}/24`, 'dev', CLI],
      ['link', 'set', CLI, 'up'],
    ])
      sh('nsenter', '-t', String(ns.pid), '-n', IP, ...a);
    // The request loop opens thousands of connections per second from one address: without these
    // the client runs out of ports in TIME_WAIT within a round (seen: 3,400/s falling to 160/s).
    for (const [k, v] of [
      ['net/ipv4/tcp_tw_reuse', '1'],
      ['net/ipv4/ip_local_port_range', '1024 65535'],
    ])
      sh('nsenter', '-t', String(ns.pid), '-n', 'sh', '-c', `echo '${v}' > /proc/sys/${k}`);
    await addQdisc(conn, { dev: IFB, parent: 'root', handle: '1:', kind: 'pfifo', options: { limit: 1000 } });
    server = spawn('python3', ['-c', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((r) => server!.stdout!.once('data', () => r()));

    const setUp = (): Promise<void> => addInboundFilter(conn, SRV, IFB, SRV_ADDR, [BULK_PORT, RR_PORT]);
    const tearDown = (): Promise<void> => removeInboundFilter(conn, SRV);
    const ifbPackets = async (): Promise<number> => (await listQdiscs(conn, { dev: IFB })).find((q) => q.root)?.packets ?? 0;

    const res = { bulk: { without: [] as number[], with: [] as number[] }, rr: { without: [] as number[], with: [] as number[] } };
    let synsWith = 0;
    let ifbDelta = 0;
    // warm-up, not counted
    await client(ns, 'rr');
    for (let r = 0; r < ROUNDS; r++) {
      // alternate which goes first, so drift in the machine's load hits both alike
      for (const withHold of r % 2 ? [true, false] : [false, true]) {
        if (withHold) await setUp();
        const p0 = await ifbPackets();
        const b = await client(ns, 'bulk');
        const q = await client(ns, 'rr');
        const p1 = await ifbPackets();
        if (withHold) {
          await tearDown();
          synsWith += b.connections + q.connections;
          ifbDelta += p1 - p0;
        } else if (p1 !== p0) throw new Error('the IFB moved without the set-up');
        res.bulk[withHold ? 'with' : 'without'].push(b.bytes! / b.seconds);
        res.rr[withHold ? 'with' : 'without'].push(q.connections / q.seconds);
        console.log(
          `round ${r + 1} ${withHold ? 'with   ' : 'without'}: bulk ${(((b.bytes! / b.seconds) * 8) / 1e9).toFixed(2)} Gbit/s, requests ${(q.connections / q.seconds).toFixed(0)}/s`,
        );
      }
    }
    // The ratio is the median of each round's own ratio (its two measurements are adjacent in time, so a
    // change in the machine's load between rounds cancels out), next to the ratio of the medians.
    const rows = (['bulk', 'rr'] as const).map((k) => {
      const w = midMedian(res[k].without);
      const h = midMedian(res[k].with);
      const paired = midMedian(res[k].with.map((x, i) => x / res[k].without[i]));
      return {
        what: k === 'bulk' ? 'bulk TCP stream (bytes/s)' : 'new connections (conn/s)',
        without: w,
        with: h,
        ratioOfMedians: h / w,
        ratio: paired,
        loss: 1 - paired,
      };
    });
    console.log('\nmedians                      without          with   h/w of medians   paired ratio   loss   target <= 2 %');
    for (const r of rows) {
      console.log(
        `${r.what.padEnd(27)} ${r.without.toFixed(0).padStart(12)} ${r.with.toFixed(0).padStart(12)}   ${r.ratioOfMedians.toFixed(3).padStart(14)}   ${r.ratio.toFixed(3).padStart(12)}  ${(r.loss * 100).toFixed(1).padStart(5)} %   ${r.loss <= 0.02 ? 'PASS' : 'FAIL'}`,
      );
    }
    const onlySyns = ifbDelta === synsWith;
    console.log(`\nIFB pfifo during the "with" rounds: ${ifbDelta} packets for ${synsWith} connections opened -> ${onlySyns ? 'PASS: only the SYNs' : 'FAIL'}`);
    if (JSON_OUT)
      writeFileSync(
        JSON_OUT,
        JSON.stringify({ loadavg: loadavg(), seconds: SECONDS, rounds: ROUNDS, samples: res, rows, ifbPackets: ifbDelta, connections: synsWith }, null, 2),
      );
    if (STRICT && (!onlySyns || rows.some((r) => r.loss > 0.02))) process.exitCode = 1;
  } finally {
    server?.kill('SIGKILL');
    for (const d of [SRV, IFB]) {
      try {
        await deleteLink(conn, d);
      } catch {
        /* gone */
      }
    }
    conn.close();
    ns.kill('SIGKILL');
  }
}

await main();
