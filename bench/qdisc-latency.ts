/**
 * Bench 1: round-trip latency of one qdisc change.
 *
 * The change: `pfifo` at the root of an ifb device of ours, handle 1:, its
 * limit alternating between two values (the host kernel has no sch_plug; a
 * pfifo limit is a change both tc and libnl's nl-qdisc-add can make, and it
 * is the same message shape as a plug verb: RTM_NEWQDISC, no create flags,
 * TCA_KIND + a 4-byte TCA_OPTIONS).
 *
 * | row | what |
 * |---|---|
 * | syscall floor (python) | Python's own AF_NETLINK socket: send + recv of the same pre-encoded request (bench/lib/floor.py), timed in Python; run in 4 parts interleaved with the rows below |
 * | bare koffi transport | synplug's SocketTransport alone: send a pre-encoded RTM_NEWQDISC with NLM_F_ACK, the ack read inside send; timed synchronously like the floor (no promise) |
 * | conn.request | NetlinkConnection.request of a pre-built request (seq, encode, ack matching): how the guard sends plug verbs |
 * | changeQdisc (ifindex) | `changeQdisc(conn, { ifindex, ... })`: builds and sends the same single message |
 * | changeQdisc (dev name) | `changeQdisc(conn, { dev, ... })`: RTM_GETLINK for the name, then the change; the two messages tc and nl-qdisc-add send |
 * | old `netlink` npm socket | the package synplug used before koffi (a devDependency now), pre-encoded, uv_poll and a callback per datagram |
 * | tc / nl-qdisc-add, from Node | one process per change, `spawnSync` from this warm process |
 * | tc / nl-qdisc-add, from bash | one process per change from a bash loop (cheaper forks than Node's) |
 * | /bin/true | a process that does nothing, for scale |
 *
 * Run alone: `bash scripts/in-netns.sh node --import=tsx bench/qdisc-latency.ts`.
 *
 * @module
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { NetlinkConnection, SocketTransport } from '../src/netlink/connection.js';
import { NETLINK_ROUTE, NLMSG_ERROR, NLM_F_ACK, NLM_F_REQUEST } from '../src/netlink/message.js';
import { RTM_NEWQDISC } from '../src/netlink/route/constants.js';
import { changeQdisc } from '../src/tc/qdisc.js';
import { qdiscRequest } from '../src/tc/request.js';
import { assertIsolated, createIfb, deleteLink, libnlModuleEnv, machine, NL_QDISC_ADD, ROOT, sh, TC } from './lib/env.js';
import { timeShellLoop, timeSpawns, type Cmd } from './lib/proc.js';
import { openRawSocket } from './lib/transport.js';
import { summarize, type Summary } from './lib/stats.js';
import { fmtRatio, fmtUs, renderTable, verdict } from './lib/table.js';

/** Options of {@link runQdiscLatency}. */
export interface QdiscLatencyOptions {
  /** iterations of each in-process variant (default 2000) */
  inProcess?: number;
  /** iterations of each process variant (default 200) */
  processes?: number;
  /** device name to create (default sp-bq0) */
  dev?: string;
}

/** One measured row, times in microseconds. */
export interface LatencyRow {
  name: string;
  /** netlink round trips per change */
  roundTrips: number;
  summary: Summary;
}

/** One target and its verdict. */
export interface Target {
  name: string;
  pass: boolean;
  text: string;
}

/** What {@link runQdiscLatency} returns. */
export interface QdiscLatencyResult {
  device: string;
  change: string;
  rows: LatencyRow[];
  targets: Target[];
  /** printed tables */
  text: string;
}

const HANDLE = 0x00010000; // 1:
const TC_H_ROOT = 0xffffffff;

/*
 * The bare request, built by hand (independently of src/tc):
 *   struct nlmsghdr { __u32 nlmsg_len; __u16 nlmsg_type; __u16 nlmsg_flags; __u32 nlmsg_seq; __u32 nlmsg_pid; };  16
 *   struct tcmsg { unsigned char tcm_family, tcm__pad1; unsigned short tcm__pad2;
 *                  int tcm_ifindex; __u32 tcm_handle; __u32 tcm_parent; __u32 tcm_info; };       20
 *   TCA_KIND (1) "pfifo\0": nla_len 10, padded to 12;  TCA_OPTIONS (2) struct tc_fifo_qopt { __u32 limit; }: 8
 * 56 bytes, as tc sends it (strace).
 */
function bareChange(ifindex: number, limit: number): Buffer {
  const b = Buffer.alloc(56);
  b.writeUInt32LE(56, 0);
  b.writeUInt16LE(RTM_NEWQDISC, 4);
  b.writeUInt16LE(NLM_F_REQUEST | NLM_F_ACK, 6);
  b.writeInt32LE(ifindex, 16 + 4);
  b.writeUInt32LE(HANDLE, 16 + 8);
  b.writeUInt32LE(TC_H_ROOT, 16 + 12);
  b.writeUInt16LE(10, 36);
  b.writeUInt16LE(1, 38); // TCA_KIND
  b.write('pfifo\0', 40, 'latin1');
  b.writeUInt16LE(8, 48);
  b.writeUInt16LE(2, 50); // TCA_OPTIONS
  b.writeUInt32LE(limit, 52);
  return b;
}

/** The old `netlink` npm socket: send, wait for the ack of that seq (errno must be 0). */
function npmRunner(ifindex: number): { run(limit: number): Promise<void>; close(): void } {
  const sock = openRawSocket(NETLINK_ROUTE);
  const msgs = new Map<number, Buffer>();
  let seq = 1;
  let waiting: { seq: number; resolve: () => void; reject: (e: Error) => void } | undefined;
  sock.on('error', (e) => waiting?.reject(e));
  sock.on('message', (d) => {
    // the ack is one NLMSG_ERROR: nlmsghdr, then int error, then the echoed header
    const type = d.readUInt16LE(4);
    const s = d.readUInt32LE(8);
    if (!waiting || s !== waiting.seq) return;
    const w = waiting;
    waiting = undefined;
    const errno = type === NLMSG_ERROR ? -d.readInt32LE(16) : -1;
    if (errno === 0) w.resolve();
    else w.reject(new Error(`bare change refused: type ${type}, errno ${errno}`));
  });
  return {
    run(limit: number): Promise<void> {
      let b = msgs.get(limit);
      if (!b) {
        b = bareChange(ifindex, limit);
        msgs.set(limit, b);
      }
      const s = seq++;
      b.writeUInt32LE(s, 8);
      return new Promise<void>((resolve, reject) => {
        waiting = { seq: s, resolve, reject };
        sock.send(b!);
      });
    },
    close: () => sock.close(),
  };
}

/**
 * The bare koffi transport: send the pre-encoded request; the kernel has
 * queued the ack before send returns and the transport reads it inside send
 * (one recv), handing it to the callback, which checks it.
 */
function koffiRunner(ifindex: number): { run(limit: number): void; close(): void } {
  const tr = new SocketTransport(NETLINK_ROUTE);
  const msgs = new Map<number, Buffer>();
  let seq = 1;
  let want = 0;
  let got: string | undefined;
  tr.onError((e) => {
    got = e.message;
  });
  tr.onDatagram((d) => {
    const errno = d.readUInt16LE(4) === NLMSG_ERROR ? -d.readInt32LE(16) : -1;
    got = d.readUInt32LE(8) === want && errno === 0 ? 'ok' : `bare change refused: type ${d.readUInt16LE(4)}, errno ${errno}`;
  });
  return {
    run(limit: number): void {
      let b = msgs.get(limit);
      if (!b) {
        b = bareChange(ifindex, limit);
        msgs.set(limit, b);
      }
      want = seq++;
      b.writeUInt32LE(want, 8);
      got = undefined;
      tr.send(b);
      if (got !== 'ok') throw new Error(got ?? 'bare koffi transport: the ack was not there after send');
    },
    close: () => tr.close(),
  };
}

/** Run the Python floor for `n` round trips alternating limits `a`/`b`; microseconds each, and the last limit it set. */
function pythonFloor(ifindex: number, n: number, a: number, b: number): { us: number[]; last: number } {
  const r = spawnSync('python3', [join(ROOT, 'bench', 'lib', 'floor.py'), String(ifindex), String(n), String(a), String(b)], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (r.status !== 0) throw new Error(`python floor failed: ${r.stderr || r.error?.message}`);
  const o = JSON.parse(r.stdout) as { ns: number[]; last: number };
  return { us: o.ns.map((x) => x / 1000), last: o.last };
}

function currentLimit(dev: string): number {
  const j = JSON.parse(sh(TC, ['-j', 'qdisc', 'show', 'dev', dev]).stdout) as Array<{ kind: string; handle: string; options?: { limit?: number } }>;
  const q = j.find((x) => x.handle === '1:');
  if (!q || q.kind !== 'pfifo') throw new Error(`qdisc 1: on ${dev} is not the pfifo the bench set up: ${JSON.stringify(j)}`);
  return q.options?.limit ?? -1;
}

/**
 * Time `n` calls of `f(i)`, microseconds each: awaited when `f` returns a
 * promise, else timed as the synchronous call it is (the bare transport
 * delivers the ack inside send, as Python's socket does inside recv).
 */
async function timeCalls(n: number, f: (i: number) => Promise<unknown> | void): Promise<number[]> {
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    const r = f(i);
    if (r instanceof Promise) await r;
    out[i] = Number(process.hrtime.bigint() - t0) / 1000;
  }
  return out;
}

/**
 * Measure one qdisc change every way (see the module doc), in a network
 * namespace, on a device of its own.
 * @throws when a change fails or does not show in `tc qdisc show`
 */
export async function runQdiscLatency(options: QdiscLatencyOptions = {}): Promise<QdiscLatencyResult> {
  const nIn = options.inProcess ?? 2000;
  const nProc = options.processes ?? 200;
  const dev = options.dev ?? 'sp-bq0';
  const ifindex = createIfb(dev);
  sh(TC, ['qdisc', 'add', 'dev', dev, 'root', 'handle', '1:', 'pfifo', 'limit', '1000']);
  const conn = NetlinkConnection.open(NETLINK_ROUTE);
  const bare = koffiRunner(ifindex);
  const npm = npmRunner(ifindex);
  const nlEnv = libnlModuleEnv('pfifo');
  if (!nlEnv) throw new Error('libnl-utils pfifo module not found (install libnl-utils)');
  try {
    // Each variant alternates between its own two limits; after each block the
    // last one must be what the kernel reports.
    const limits = (k: number) => [2000 + 2 * k, 2001 + 2 * k] as const;
    const spec = (limit: number) => ({ kind: 'pfifo', parent: 'root', handle: '1:', options: { limit } });
    // the conn.request row sends requests built once, outside the timed loop
    const prebuilt = new Map<number, ReturnType<typeof qdiscRequest>>();
    const prebuiltFor = (l: number) => {
      let r = prebuilt.get(l);
      if (!r) {
        r = qdiscRequest('change', ifindex, spec(l));
        prebuilt.set(l, r);
      }
      return r;
    };
    const inProc: Array<{ name: string; roundTrips: number; f: (limit: number) => Promise<unknown> | void }> = [
      { name: 'bare koffi transport, pre-encoded', roundTrips: 1, f: (l) => bare.run(l) },
      { name: 'NetlinkConnection.request, pre-built', roundTrips: 1, f: (l) => conn.request(prebuiltFor(l)) },
      { name: 'changeQdisc by ifindex', roundTrips: 1, f: (l) => changeQdisc(conn, { ifindex, ...spec(l) }) },
      { name: 'changeQdisc by dev name', roundTrips: 2, f: (l) => changeQdisc(conn, { dev, ...spec(l) }) },
      { name: 'old `netlink` npm socket, pre-encoded', roundTrips: 1, f: (l) => npm.run(l) },
    ];
    const samples = inProc.map(() => [] as number[]);
    const floorSamples: number[] = [];
    const floorLimits = [1000, 1001] as const;

    // warm-up: JIT, socket buffers, the kernel's paths
    for (const [k, v] of inProc.entries()) await timeCalls(300, (i) => v.f(limits(k)[i % 2]));
    // Interleaved blocks of 50 calls, variant after variant: on a busy machine the
    // bursts of scheduling delay then hit every row alike. Every 10th round checks
    // that the kernel holds the last limit each variant set. The Python floor runs
    // in four parts (its own 300 warm-up round trips each) between the rounds.
    const block = 50;
    const rounds = Math.ceil(nIn / block);
    const floorParts = 4;
    for (let r = 0; r < rounds; r++) {
      if (r % Math.ceil(rounds / floorParts) === 0) {
        const f = pythonFloor(ifindex, Math.ceil(nIn / floorParts), floorLimits[0], floorLimits[1]);
        floorSamples.push(...f.us);
        const got = currentLimit(dev);
        if (got !== f.last) throw new Error(`python floor: kernel shows limit ${got}, expected ${f.last}`);
      }
      for (const [k, v] of inProc.entries()) {
        samples[k].push(...(await timeCalls(block, (i) => v.f(limits(k)[i % 2]))));
        if (r % 10 === 9 || r === rounds - 1) {
          const want = limits(k)[(block - 1) % 2];
          const got = currentLimit(dev);
          if (got !== want) throw new Error(`${v.name}: kernel shows limit ${got}, expected ${want}`);
        }
      }
    }

    // processes: one per change
    const tcCmd = (limit: number): Cmd => ({ file: TC, args: ['qdisc', 'change', 'dev', dev, 'root', 'handle', '1:', 'pfifo', 'limit', String(limit)] });
    const nlCmd = (limit: number): Cmd => ({
      file: NL_QDISC_ADD,
      args: ['-q', `--dev=${dev}`, '--parent=root', '--id=1:', '--update-only', 'pfifo', `--limit=${limit}`],
      env: nlEnv,
    });
    const trueCmd: Cmd = { file: '/bin/true', args: [] };
    const base = inProc.length;
    const procNames = [
      'tc, spawnSync from Node',
      'nl-qdisc-add, spawnSync from Node',
      '/bin/true, spawnSync from Node',
      'tc, from a bash loop',
      'nl-qdisc-add, from a bash loop (+1 exec: env)',
      '/bin/true, from a bash loop',
    ];
    const procSamples = procNames.map(() => [] as number[]);
    timeSpawns(10, (i) => tcCmd(limits(base)[i % 2]));
    timeSpawns(10, (i) => nlCmd(limits(base + 1)[i % 2]));
    for (let i = 0; i < nProc; i++) {
      procSamples[0].push(...timeSpawns(1, () => tcCmd(limits(base)[i % 2])));
      procSamples[1].push(...timeSpawns(1, () => nlCmd(limits(base + 1)[i % 2])));
      procSamples[2].push(...timeSpawns(1, () => trueCmd));
    }
    if (currentLimit(dev) !== limits(base + 1)[(nProc - 1) % 2]) throw new Error('nl-qdisc-add: the last change does not show in tc qdisc show');
    // The bash loop: LD_PRELOAD only on nl-qdisc-add's own line (through env(1), one
    // more exec, which the row pays), since tc cannot resolve the module's symbols.
    const nlSo = nlEnv.LD_PRELOAD!;
    const loop: Cmd[] = [];
    for (let i = 0; i < nProc; i++) {
      const nl = nlCmd(limits(base + 3)[i % 2]);
      loop.push(tcCmd(limits(base + 2)[i % 2]), { file: '/usr/bin/env', args: [`LD_PRELOAD=${nlSo}`, nl.file, ...nl.args] }, trueCmd);
    }
    // the first 30 commands are a warm-up
    const loopTimes = timeShellLoop([...loop.slice(0, 30), ...loop]).slice(30);
    for (let i = 0; i < loopTimes.length; i++) procSamples[3 + (i % 3)].push(loopTimes[i]);
    if (currentLimit(dev) !== limits(base + 3)[(nProc - 1) % 2]) throw new Error('nl-qdisc-add (bash loop): the last change does not show in tc qdisc show');

    const rows: LatencyRow[] = [
      { name: 'syscall floor: python3 socket send+recv', roundTrips: 1, summary: summarize(floorSamples) },
      ...inProc.map((v, k) => ({ name: v.name, roundTrips: v.roundTrips, summary: summarize(samples[k]) })),
      ...procNames.map((name, k) => ({ name, roundTrips: name.includes('true') ? 0 : 2, summary: summarize(procSamples[k].map((ms) => ms * 1000)) })),
    ];
    const floor = rows[0].summary;
    const table = renderTable(
      `One qdisc change (pfifo limit, alternating) on ${dev}: round trip, microseconds`,
      ['how', 'n', 'netlink msgs', 'median', 'p99', 'min', 'x floor median', 'x floor p99'],
      rows.map((r) => [
        r.name,
        r.summary.n,
        r.roundTrips || '-',
        fmtUs(r.summary.median),
        fmtUs(r.summary.p99),
        fmtUs(r.summary.min),
        fmtRatio(r.summary.median / floor.median),
        fmtRatio(r.summary.p99 / floor.p99),
      ]),
    );

    const bareS = rows[1].summary;
    const pre = rows[2].summary;
    const byIdx = rows[3].summary;
    const byName = rows[4].summary;
    const procRows = rows.slice(1 + inProc.length).filter((r) => r.roundTrips === 2);
    const fastestProc = procRows.reduce((a, b) => (b.summary.median < a.summary.median ? b : a));
    const fp = `the fastest process row (${fastestProc.name}, ${fmtUs(fastestProc.summary.median)} us)`;
    const targets: Target[] = [];
    const vsProc = (what: string, s: Summary) => {
      const r = fastestProc.summary.median / s.median;
      targets.push({
        name: `change, ${what}: >= 50x faster than a process per change`,
        pass: r >= 50,
        text: `${what} median ${fmtUs(s.median)} us vs ${fp}: ${fmtRatio(r)} faster (target >= 50x)`,
      });
    };
    const vsFloor = (what: string, s: Summary, max: number) => {
      const r = s.median / floor.median;
      targets.push({
        name: `change, ${what}: median <= ${max}x the syscall floor`,
        pass: r <= max,
        text: `${what} median ${fmtUs(s.median)} us vs the python floor ${fmtUs(floor.median)} us: ${fmtRatio(r)} (target <= ${max}x)`,
      });
      const q = s.p99 / floor.p99;
      targets.push({
        name: `change, ${what}: p99 <= 3x the floor's p99`,
        pass: q <= 3,
        text: `${what} p99 ${fmtUs(s.p99)} us vs the floor's p99 ${fmtUs(floor.p99)} us: ${fmtRatio(q)} (target <= 3x)`,
      });
    };
    // A warm process resolves the device once: by ifindex is the primary figure. By dev name
    // repeats the name lookup every call (the two messages each tool process sends).
    vsProc('changeQdisc by ifindex', byIdx);
    vsProc('changeQdisc by dev name', byName);
    vsFloor('bare koffi transport', bareS, 1.2);
    vsFloor('NetlinkConnection.request, pre-built (how the guard sends plug verbs)', pre, 1.5);
    vsFloor('changeQdisc by ifindex', byIdx, 2);
    const ratios = renderTable(
      'Ratios, medians (process time / synplug time)',
      ['process per change', 'vs changeQdisc by dev name', 'vs by ifindex'],
      procRows.map((r) => [r.name, fmtRatio(r.summary.median / byName.median), fmtRatio(r.summary.median / byIdx.median)]),
    );
    return {
      device: dev,
      change: `tc qdisc change dev ${dev} root handle 1: pfifo limit N`,
      rows,
      targets,
      text: `${table}\n${ratios}\n${targets.map((t) => verdict(t.pass, t.text)).join('\n')}\n`,
    };
  } finally {
    bare.close();
    npm.close();
    conn.close();
    deleteLink(dev);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  assertIsolated();
  const m = machine();
  process.stdout.write(`${m.kernel}, ${m.cpus} cpus, load ${m.loadavg1}, node ${m.node}\n\n`);
  const r = await runQdiscLatency();
  process.stdout.write(r.text);
}
