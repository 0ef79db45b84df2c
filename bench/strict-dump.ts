/**
 * Bench 3: what NETLINK_GET_STRICT_CHK saves on a machine with many devices.
 *
 * 200 ifb devices (sp-bs0 ... sp-bs199), each with an IPv4 address and a
 * pfifo root qdisc. One device's objects are listed, warm, in-process, on a
 * connection with strict checking (synplug's default) and on one without,
 * in interleaved blocks:
 *
 * | row | request |
 * |---|---|
 * | addresses of one device, ifa_index set | RTM_GETADDR dump, AF_INET, `ifa_index` = the device: with strict checking the kernel returns only its addresses (inet_dump_ifaddr, fillargs.ifindex); without, every device's, filtered here |
 * | listAddresses(conn, { dev }) | the library call as it is: today it sends ifa_index 0, so the kernel filters nothing either way (see the README) |
 * | qdiscs of one device | listQdiscs(conn, { ifindex }): tc_dump_qdisc walks every device whatever the flag (strict checking only validates the header), so both return all 200+ and filter here |
 *
 * Reported: median and p99 (µs), messages and bytes the kernel sent per call.
 *
 * Run alone: `bash scripts/in-netns.sh node --import=tsx bench/strict-dump.ts`.
 *
 * @module
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NetlinkConnection } from '../src/netlink/connection.js';
import { NETLINK_ROUTE, type NetlinkMessage } from '../src/netlink/message.js';
import { RTM_GETADDR, RTM_NEWADDR } from '../src/netlink/route/constants.js';
import { listAddresses } from '../src/netlink/route/addr.js';
import { listQdiscs } from '../src/tc/qdisc.js';
import { assertIsolated, IP, machine, sh, TC } from './lib/env.js';
import { summarize, type Summary } from './lib/stats.js';
import { fmtRatio, fmtUs, renderTable } from './lib/table.js';
import { CountingSocketTransport } from './lib/transport.js';

/** Options of {@link runStrictDump}. */
export interface StrictDumpOptions {
  /** devices to create (default 200) */
  devices?: number;
  /** calls per row (default 500) */
  calls?: number;
}

/** One row: a way of listing, strict or not. */
export interface StrictRow {
  name: string;
  strict: boolean;
  summary: Summary;
  /** netlink messages the kernel sent per call (including NLMSG_DONE) */
  messages: number;
  /** bytes received per call */
  bytes: number;
  /** objects of the device the call returned */
  returned: number;
}

/** What {@link runStrictDump} returns. */
export interface StrictDumpResult {
  devices: number;
  strictAccepted: boolean;
  rows: StrictRow[];
  text: string;
}

const PREFIX = 'sp-bs';

/**
 * Create the devices, measure each row with and without strict checking, delete the devices.
 * @throws when a listing does not return the device's objects, or a tool fails
 */
export async function runStrictDump(options: StrictDumpOptions = {}): Promise<StrictDumpResult> {
  const n = options.devices ?? 200;
  const calls = options.calls ?? 500;
  const tmp = mkdtempSync(join(tmpdir(), 'synplug-bench-strict-'));
  const ipBatch: string[] = [];
  const tcBatch: string[] = [];
  for (let i = 0; i < n; i++) {
    ipBatch.push(`link add ${PREFIX}${i} type ifb`, `addr add 169.254.${100 + (i >> 8)}.${(i & 255) + 1}/32 dev ${PREFIX}${i}`);
    tcBatch.push(`qdisc add dev ${PREFIX}${i} root handle 1: pfifo limit 100`);
  }
  writeFileSync(join(tmp, 'ip'), ipBatch.join('\n') + '\n');
  writeFileSync(join(tmp, 'tc'), tcBatch.join('\n') + '\n');
  const trs = { strict: new CountingSocketTransport(NETLINK_ROUTE), loose: new CountingSocketTransport(NETLINK_ROUTE, { strictCheck: false }) };
  const conns = { strict: new NetlinkConnection(trs.strict, NETLINK_ROUTE), loose: new NetlinkConnection(trs.loose, NETLINK_ROUTE) };
  try {
    sh(IP, ['-batch', join(tmp, 'ip')]);
    sh(TC, ['-batch', join(tmp, 'tc')]);
    const dev = `${PREFIX}${n >> 1}`;
    const ifindex = (JSON.parse(sh(IP, ['-j', 'link', 'show', dev]).stdout) as Array<{ ifindex: number }>)[0].ifindex;
    const wantAddr = `169.254.${100 + ((n >> 1) >> 8)}.${((n >> 1) & 255) + 1}`;
    // struct ifaddrmsg { __u8 ifa_family; __u8 ifa_prefixlen; __u8 ifa_flags; __u8 ifa_scope; __u32 ifa_index; }
    const ifa = Buffer.alloc(8);
    ifa.writeUInt8(2, 0);
    ifa.writeUInt32LE(ifindex, 4);
    const addrsOf = (msgs: NetlinkMessage[]) => msgs.filter((m) => m.type === RTM_NEWADDR && m.payload.readUInt32LE(4) === ifindex).length;
    const ways: Array<{ name: string; f: (c: NetlinkConnection) => Promise<number> }> = [
      { name: 'addresses of one device (RTM_GETADDR, ifa_index set)', f: async (c) => addrsOf(await c.dumpAll({ type: RTM_GETADDR, payload: ifa })) },
      {
        name: 'listAddresses(conn, { dev }) as the library sends it',
        f: async (c) => (await listAddresses(c, { dev })).filter((a) => a.local === wantAddr).length,
      },
      {
        name: 'qdiscs of one device: listQdiscs(conn, { ifindex })',
        f: async (c) => (await listQdiscs(c, { ifindex })).filter((q) => q.kind === 'pfifo').length,
      },
    ];
    const keys = ['strict', 'loose'] as const;
    const samples = ways.map(() => ({ strict: [] as number[], loose: [] as number[] }));
    const per = ways.map(() => ({ strict: { messages: 0, bytes: 0, returned: 0 }, loose: { messages: 0, bytes: 0, returned: 0 } }));
    // warm-up, and one counted call each for messages/bytes
    for (const [w, way] of ways.entries()) {
      for (const k of keys) {
        for (let i = 0; i < 50; i++) await way.f(conns[k]);
        trs[k].reset();
        const returned = await way.f(conns[k]);
        if (returned !== 1) throw new Error(`${way.name} (${k}): returned ${returned} objects of ${dev}, expected 1`);
        per[w][k] = { messages: countMessages(trs[k]), bytes: trs[k].bytes, returned };
      }
    }
    const block = 25;
    for (let r = 0; r < Math.ceil(calls / block); r++) {
      for (const [w, way] of ways.entries()) {
        for (const k of keys) {
          for (let i = 0; i < block; i++) {
            const t0 = process.hrtime.bigint();
            await way.f(conns[k]);
            samples[w][k].push(Number(process.hrtime.bigint() - t0) / 1000);
          }
        }
      }
    }
    const rows: StrictRow[] = [];
    for (const [w, way] of ways.entries()) {
      for (const k of keys) rows.push({ name: way.name, strict: k === 'strict', summary: summarize(samples[w][k]), ...per[w][k] });
    }
    const table = renderTable(
      `One device's objects among ${n} devices (each with an address and a pfifo): warm, in-process, microseconds; strict = NETLINK_GET_STRICT_CHK (accepted: ${trs.strict.strictCheck})`,
      ['listing', 'strict', 'median', 'p99', 'kernel msgs/call', 'bytes/call', 'x strict median'],
      rows.map((r, i) => {
        const strictRow = rows[i - (i % 2)];
        return [
          r.name,
          r.strict ? 'yes' : 'no',
          fmtUs(r.summary.median),
          fmtUs(r.summary.p99),
          r.messages,
          r.bytes,
          fmtRatio(r.summary.median / strictRow.summary.median),
        ];
      }),
    );
    return { devices: n, strictAccepted: trs.strict.strictCheck, rows, text: table };
  } finally {
    conns.strict.close();
    conns.loose.close();
    const del: string[] = [];
    for (let i = 0; i < n; i++) del.push(`link del ${PREFIX}${i}`);
    writeFileSync(join(tmp, 'del'), del.join('\n') + '\n');
    sh(IP, ['-force', '-batch', join(tmp, 'del')], { check: false });
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Messages in what a counting transport received since its reset (walks the datagrams' headers). */
function countMessages(tr: CountingSocketTransport): number {
  return tr.messages;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  assertIsolated();
  const m = machine();
  process.stdout.write(`${m.kernel}, ${m.cpus} cpus, load ${m.loadavg1}, node ${m.node}\n\n`);
  const r = await runStrictDump();
  process.stdout.write(r.text);
}
