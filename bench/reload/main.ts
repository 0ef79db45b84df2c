/**
 * `npm run bench:reload` (inside the VM through scripts/vm/bench-reload.sh):
 * the original zero-downtime reload experiment, every method in one run.
 *
 *   nginx (127.0.0.1:<free port>, answers `pong`)
 *     <- HAProxy 2.6 on 169.254.255.254:16000, reloaded with `-D -sf` every
 *        100 ms after the previous reload returned
 *     <- load: wrk (`Connection: close`, a new connection per request) and
 *        bench/reload/client.ts (same, and it times each request from before
 *        its connect, which wrk cannot), plus one `ab -r` run
 *
 * Methods: baseline (no reloads), unprotected, drop (an nftables rule drops
 * the SYNs during each reload), synplug (`synplug protect -- <reload>`).
 * See bench/reload/README.md for the choices, flags and pass criteria.
 *
 * `--inbound`: the same experiment with the clients on "the network": a
 * network namespace of the bench's own joined by a veth pair
 * (src/demo/topology.ts, the topology of `synplug demo --inbound`), HAProxy
 * on the veth end here (169.254.S.1, or fd00:5359:4e50:S::1 with --ipv6),
 * client.ts, wrk and ab started inside the namespace, and the `synplug`
 * method through the inbound hold (`synplug setup --inbound DEV --port P`).
 *
 * Run it only in the VM or in a fresh network namespace: it adds an address
 * to `lo` and nftables rules.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { cpus, release, setPriority, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { wallMs } from './common.js';
import { alive, childrenOf, exited, findBin, killPids, pidsWithArg, run, runSync, sleep, type RunResult } from './procs.js';
import { fmtMs, meanMax, readRecords, summarise, table, type ClientSummary, type RequestRecord } from './stats.js';
import { renderSvg, type Panel } from './svg.js';
import { createInboundTopology, type InboundTopology } from '../../src/demo/topology.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const ALL_METHODS = ['baseline', 'unprotected', 'drop', 'synplug'] as const;
/** Default order: synplug before drop, so that a short budget cuts the informational run, not synplug's. */
const DEFAULT_METHODS = 'baseline,unprotected,synplug,drop';
type Method = (typeof ALL_METHODS)[number];
const NFT_TABLE = 'synplug_bench';

// ---------------------------------------------------------------- options

const USAGE = `usage: node --import=tsx bench/reload/main.ts [options]
  --methods LIST          comma-separated, run in this order (default ${DEFAULT_METHODS})
  --connections N         client.ts concurrent loops (default 40)
  --wrk-connections N     wrk connections alongside, 0 = no wrk (default 8)
  --reloads N             synplug reloads to reach (default 30)
  --compare-reloads N     unprotected and drop reloads to reach (default 10)
  --min-seconds S         reloading window, at least (default 20)
  --max-seconds S         unprotected/drop window, at most (default 120)
  --synplug-max-seconds S synplug window, at most (default 900)
  --budget-seconds S      the whole run, at most: synplug gets what the others
                          leave, drop and ab are cut or skipped (default 1050)
  --load-nice N           nice value of client.ts, wrk and ab (default 0)
  --baseline-seconds S    baseline window (default 20)
  --interval-ms MS        pause between a reload's return and the next (default 100)
  --settle-ms MS          load before the first and after the last reload (default 2000)
  --timeout-ms MS         per request timeout of the client and wrk (default 60000)
  --ab METHOD|none        method of the one ab -r run (default unprotected, if run)
  --ab-seconds S          ab run length (default 30)
  --ab-concurrency N      ab -c (default 20)
  --synplug CMD           synplug command (default: node <repo>/dist/bundle/synplug.cjs)
  --protect-args ARGS     arguments for synplug protect, space-separated (default
                          '--max-hold 30s'; --json is always given)
  --addr A --port P       proxy address and port (default 169.254.255.254 16000)
  --inbound               the clients in a network namespace of the bench's own behind a veth
                          pair (169.254.S.0/30), HAProxy on the veth end here, synplug through
                          the inbound hold (setup --inbound DEV --port P); --addr is ignored.
                          Default methods then unprotected,synplug, no ab, budget 560 s;
                          results reload-<kernel>-<date>-inbound.*, latest-inbound.*
  --ipv6                  with --inbound: HAProxy and the clients on fd00:5359:4e50:S::1/::2
  --out DIR               results folder (default <repo>/bench/results)
  --tag NAME              results as reload-<kernel>-<date>-NAME.*
  --no-latest             do not write latest.json / latest.svg
  --keep-tmp              keep the temp folder (configs, logs, per-request CSVs)
  --i-am-isolated         run although neither SYNPLUG_IN_VM nor SYNPLUG_IN_NETNS is set`;

const { values: opt } = parseArgs({
  options: {
    methods: { type: 'string' },
    connections: { type: 'string', default: '40' },
    'wrk-connections': { type: 'string', default: '8' },
    reloads: { type: 'string', default: '30' },
    'compare-reloads': { type: 'string', default: '10' },
    'min-seconds': { type: 'string', default: '20' },
    'max-seconds': { type: 'string', default: '120' },
    'synplug-max-seconds': { type: 'string', default: '900' },
    'budget-seconds': { type: 'string' },
    tag: { type: 'string', default: '' },
    'load-nice': { type: 'string', default: '0' },
    'baseline-seconds': { type: 'string', default: '20' },
    'interval-ms': { type: 'string', default: '100' },
    'settle-ms': { type: 'string', default: '2000' },
    'timeout-ms': { type: 'string', default: '60000' },
    ab: { type: 'string' },
    'ab-seconds': { type: 'string', default: '30' },
    'ab-concurrency': { type: 'string', default: '20' },
    synplug: { type: 'string' },
    'protect-args': { type: 'string', default: '--max-hold 30s' },
    addr: { type: 'string', default: '169.254.255.254' },
    port: { type: 'string', default: '16000' },
    out: { type: 'string', default: join(REPO, 'bench/results') },
    'no-latest': { type: 'boolean', default: false },
    'keep-tmp': { type: 'boolean', default: false },
    'i-am-isolated': { type: 'boolean', default: false },
    inbound: { type: 'boolean', default: false },
    ipv6: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
  strict: true,
});

function usage(msg: string): never {
  process.stderr.write(`bench-reload: ${msg}\n${USAGE}\n`);
  process.exit(2);
}
if (opt.help) {
  process.stdout.write(USAGE + '\n');
  process.exit(0);
}
function num(name: keyof typeof opt, min = 0): number {
  const v = Number(opt[name]);
  if (!Number.isFinite(v) || v < min) usage(`--${name} must be a number >= ${min}`);
  return v;
}
const INBOUND = opt.inbound as boolean;
if (opt.ipv6 && !INBOUND) usage('--ipv6 needs --inbound');
opt.methods ??= INBOUND ? 'unprotected,synplug' : DEFAULT_METHODS;
opt['budget-seconds'] ??= INBOUND ? '560' : '1050';
const methods = (opt.methods as string).split(',').filter(Boolean) as Method[];
for (const m of methods) if (!ALL_METHODS.includes(m)) usage(`unknown method '${m}'`);
const P = {
  connections: num('connections', 1),
  wrkConnections: num('wrk-connections'),
  reloads: num('reloads', 1),
  compareReloads: num('compare-reloads', 1),
  budgetSeconds: num('budget-seconds', 1),
  loadNice: num('load-nice'),
  minSeconds: num('min-seconds'),
  maxSeconds: num('max-seconds', 1),
  synplugMaxSeconds: num('synplug-max-seconds', 1),
  baselineSeconds: num('baseline-seconds', 1),
  intervalMs: num('interval-ms'),
  settleMs: num('settle-ms'),
  timeoutMs: num('timeout-ms', 100),
  abSeconds: num('ab-seconds', 1),
  abConcurrency: num('ab-concurrency', 1),
  addr: opt.addr as string,
  port: num('port', 1),
};
const abMethod = (opt.ab ?? (methods.includes('unprotected') && !INBOUND ? 'unprotected' : 'none')) as Method | 'none';
if (abMethod !== 'none' && !ALL_METHODS.includes(abMethod)) usage(`--ab: unknown method '${abMethod}'`);
// The package's bin: the CLI bundle (`npm run build`); tsc's dist/cli/bin.js when there is no bundle.
const synplugCmd = opt.synplug
  ? (opt.synplug as string).split(' ').filter(Boolean)
  : [process.execPath, join(REPO, existsSync(join(REPO, 'dist/bundle/synplug.cjs')) ? 'dist/bundle/synplug.cjs' : 'dist/cli/bin.js')];
const protectArgs = (opt['protect-args'] as string).split(' ').filter(Boolean);

if (process.env.SYNPLUG_IN_VM !== '1' && process.env.SYNPLUG_IN_NETNS !== '1' && !opt['i-am-isolated']) {
  usage('run me inside the VM (scripts/vm/bench-reload.sh) or a fresh netns (scripts/in-netns.sh): I change lo and nftables');
}
if (process.getuid?.() !== 0) usage('needs root (ip addr, nft, tc)');

// ---------------------------------------------------------------- binaries

const BIN: Record<string, string> = {};
for (const b of [
  'haproxy',
  'nginx',
  'ip',
  ...(P.wrkConnections > 0 ? ['wrk'] : []),
  ...(abMethod !== 'none' ? ['ab'] : []),
  ...(methods.includes('drop') || abMethod === 'drop' ? ['nft'] : []),
  ...(methods.includes('synplug') || abMethod === 'synplug' ? ['tc'] : []),
]) {
  const p = findBin(b);
  if (!p) usage(`'${b}' not found: install it (scripts/install-test-deps.sh)`);
  BIN[b] = p;
}
if ((methods.includes('synplug') || abMethod === 'synplug') && !opt.synplug && !existsSync(synplugCmd[1])) {
  usage(`${synplugCmd[1]} not found: run npm run build first`);
}

// ---------------------------------------------------------------- state and cleanup

const log = (s: string): void => void process.stderr.write(`[bench-reload] ${s}\n`);
// In the VM, /tmp is the host's over 9p; /run is the guest's own tmpfs.
const TMP = mkdtempSync(join(process.env.SYNPLUG_BENCH_TMP ?? (process.env.SYNPLUG_IN_VM === '1' ? '/run' : tmpdir()), 'synplug-bench-reload-'));
const HAPROXY_CFG = join(TMP, 'haproxy.cfg');
const HAPROXY_PID = join(TMP, 'haproxy.pid');

const state = {
  addrAdded: false,
  /** --inbound: the namespace and veth pair (removed at the end) */
  topo: null as InboundTopology | null,
  nftTable: false,
  synplugSetup: false,
  children: new Set<ChildProcess>(),
  haproxyPids: new Set<number>(),
  nginx: null as ChildProcess | null,
  nginxWorkers: [] as number[],
  client: null as ChildProcess | null,
  cleaned: false,
};

/** Undo everything; synchronous so that it also runs from signal handlers and 'exit'. */
function cleanup(): void {
  if (state.cleaned) return;
  state.cleaned = true;
  if (state.client?.pid && alive(state.client.pid)) {
    try {
      state.client.kill('SIGKILL');
    } catch {
      /* gone */
    }
  }
  for (const c of state.children) if (c.pid && c.exitCode === null && c.signalCode === null) killPids([c.pid], 1000);
  stopHaproxySync();
  if (state.nginx?.pid) killPids([state.nginx.pid, ...state.nginxWorkers, ...childrenOf(state.nginx.pid)], 3000);
  if (state.synplugSetup) {
    const r = runSync([...synplugCmd, 'teardown', ...(state.topo ? ['--inbound', state.topo.serverDev] : [])]);
    if (r.code !== 0) log(`synplug teardown failed (${r.code}): ${r.out.trim()}`);
    state.synplugSetup = false;
  }
  if (state.nftTable) {
    runSync([BIN.nft, 'delete', 'table', 'inet', NFT_TABLE]);
    state.nftTable = false;
  }
  if (state.addrAdded) {
    runSync([BIN.ip, 'addr', 'del', `${P.addr}/32`, 'dev', 'lo']);
    state.addrAdded = false;
  }
  if (state.topo) {
    // synchronous here (exit and signal handlers): ip deletes the pair; the namespace goes with its descriptor at exit
    runSync([BIN.ip, 'link', 'del', state.topo.serverDev]);
    state.topo = null;
  }
  if (opt['keep-tmp']) log(`temp folder kept: ${TMP}`);
  else rmSync(TMP, { recursive: true, force: true });
}
process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(sig, () => {
    log(`${sig}: cleaning up`);
    cleanup();
    process.exit(130);
  });
}

function fail(msg: string): never {
  log(`error: ${msg}`);
  cleanup();
  process.exit(1);
}

// ---------------------------------------------------------------- address, nginx, haproxy

function ensureAddress(): void {
  if (INBOUND) return; // the topology's address, on its veth end
  const r = runSync([BIN.ip, '-j', 'addr', 'show', 'dev', 'lo']);
  const has = (JSON.parse(r.out || '[]') as { addr_info?: { local?: string }[] }[]).some((l) => l.addr_info?.some((a) => a.local === P.addr));
  if (has) return;
  const add = runSync([BIN.ip, 'addr', 'add', `${P.addr}/32`, 'dev', 'lo']);
  if (add.code !== 0) fail(`ip addr add ${P.addr}/32 dev lo: ${add.out}`);
  state.addrAdded = true;
}

async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.on('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

/** One GET through a fresh connection; resolves to the status line's code, or 0. */
async function probe(host: string, port: number, timeoutMs = 2000): Promise<number> {
  const { connect } = await import('node:net');
  return new Promise((res) => {
    let buf = '';
    const s = connect({ host, port });
    const t = setTimeout(() => (s.destroy(), res(0)), timeoutMs);
    s.on('connect', () => s.write('GET / HTTP/1.0\r\n\r\n'));
    s.on('data', (d: Buffer) => (buf += d.toString()));
    s.on('end', () => (clearTimeout(t), res(Number(/^HTTP\/\d\.\d (\d{3})/.exec(buf)?.[1] ?? 0))));
    s.on('error', () => (clearTimeout(t), res(0)));
  });
}

async function waitUp(host: string, port: number, what: string, ms = 30_000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if ((await probe(host, port)) === 200) return;
    await sleep(100);
  }
  fail(`${what} did not answer 200 on ${host}:${port} within ${ms / 1000} s`);
}

async function startNginx(port: number): Promise<void> {
  const conf = `# generated by bench/reload/main.ts
daemon off;
master_process on;
worker_processes 1;
pid ${TMP}/nginx.pid;
error_log ${TMP}/nginx-error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${TMP}/nginx-body;
  proxy_temp_path ${TMP}/nginx-proxy;
  fastcgi_temp_path ${TMP}/nginx-fastcgi;
  uwsgi_temp_path ${TMP}/nginx-uwsgi;
  scgi_temp_path ${TMP}/nginx-scgi;
  keepalive_requests 100000;
  server {
    listen 127.0.0.1:${port} backlog=4096;
    location / { default_type text/plain; return 200 "pong\\n"; }
  }
}
`;
  writeFileSync(join(TMP, 'nginx.conf'), conf);
  const child = spawn(BIN.nginx, ['-p', TMP, '-c', join(TMP, 'nginx.conf'), '-e', join(TMP, 'nginx-error.log')], { stdio: ['ignore', 'inherit', 'inherit'] });
  state.nginx = child;
  child.on('exit', (code, sig) => {
    if (!state.cleaned) log(`nginx exited (${code ?? sig})`);
  });
  await waitUp('127.0.0.1', port, 'nginx');
  if (child.pid) state.nginxWorkers = childrenOf(child.pid);
}

function writeHaproxyCfg(nginxPort: number): void {
  writeFileSync(
    HAPROXY_CFG,
    `# generated by bench/reload/main.ts
global
  maxconn 4000
  nbthread 1
  hard-stop-after 10s
defaults
  mode http
  timeout connect 5s
  timeout client 30s
  timeout server 30s
frontend fe
  bind ${P.addr}:${P.port} backlog 4096
  default_backend be
backend be
  server nginx 127.0.0.1:${nginxPort}
`,
  );
}

function haproxyPids(): number[] {
  try {
    return readFileSync(HAPROXY_PID, 'utf8').split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** `haproxy -D -f cfg -p pidfile -sf <old pids>`: the reload command (argv). */
function haproxyArgv(): string[] {
  const old = haproxyPids();
  return [BIN.haproxy, '-D', '-f', HAPROXY_CFG, '-p', HAPROXY_PID, ...(old.length ? ['-sf', ...old.map(String)] : [])];
}

async function startHaproxy(): Promise<void> {
  const r = await run(haproxyArgv(), 60_000);
  for (const p of haproxyPids()) state.haproxyPids.add(p);
  if (r.code !== 0) fail(`haproxy did not start (${r.code}): ${r.stderr.trim()}`);
  await waitUp(P.addr, P.port, 'haproxy');
}

function stopHaproxySync(): void {
  for (const p of haproxyPids()) state.haproxyPids.add(p);
  killPids([...state.haproxyPids, ...pidsWithArg(HAPROXY_CFG)], 3000);
  state.haproxyPids.clear();
  rmSync(HAPROXY_PID, { force: true });
}

// ---------------------------------------------------------------- client, wrk, ab

/** --load-nice: the load generators yield the CPU to the proxy and the reloads. */
function renice(child: ChildProcess): void {
  if (P.loadNice === 0 || !child.pid) return;
  try {
    setPriority(child.pid, P.loadNice);
  } catch (e) {
    log(`setpriority(${child.pid}, ${P.loadNice}): ${String(e)}`);
  }
}

let runId = 0;
async function startClientProcess(): Promise<void> {
  const clientPath = fileURLToPath(new URL('./client.ts', import.meta.url));
  const child = state.topo
    ? state.topo.spawn(process.execPath, [...process.execArgv, clientPath], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    : fork(clientPath, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  state.client = child;
  renice(child);
  await new Promise<void>((res, rej) => {
    const t = setTimeout(() => rej(new Error('client did not start within 60 s')), 60_000);
    child.once('message', (m: { type: string }) => {
      clearTimeout(t);
      if (m.type === 'ready') res();
      else rej(new Error(`client: unexpected message ${JSON.stringify(m)}`));
    });
    child.once('exit', (c) => rej(new Error(`client exited (${c}) before it was ready`)));
  }).catch((e: unknown) => fail(String(e)));
}

function clientRequest<T>(msg: object, answer: string): Promise<T> {
  const c = state.client!;
  return new Promise((res, rej) => {
    const onMsg = (m: { type: string }): void => {
      if (m.type !== answer) return;
      c.off('message', onMsg);
      c.off('exit', onExit);
      res(m as T);
    };
    const onExit = (code: number | null): void => rej(new Error(`client exited (${code})`));
    c.on('message', onMsg);
    c.once('exit', onExit);
    c.send(msg);
  });
}

interface LoadHandle {
  id: number;
  csv: string;
}

async function startLoad(name: string): Promise<LoadHandle> {
  const id = ++runId;
  const csv = join(TMP, `${name}.csv`);
  await clientRequest({ type: 'run', id, host: P.addr, port: P.port, connections: P.connections, timeoutMs: P.timeoutMs, out: csv }, 'started');
  return { id, csv };
}

async function stopLoad(h: LoadHandle): Promise<RequestRecord[]> {
  await clientRequest({ type: 'stop', id: h.id }, 'done');
  return readRecords(h.csv);
}

/** wrk's summary. */
export interface WrkSummary {
  requests: number;
  connectErrors: number;
  readErrors: number;
  writeErrors: number;
  timeouts: number;
  non2xx3xx: number;
  /** wrk's own latency (after the connect), ms */
  p50: number;
  p99: number;
  max: number;
  raw: string;
}

function wrkMs(s: string | undefined): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(s ?? '');
  if (!m) return NaN;
  const f = { us: 0.001, ms: 1, s: 1000, m: 60000 }[m[2] as 'us' | 'ms' | 's' | 'm'];
  return Number(m[1]) * f;
}

function parseWrk(out: string): WrkSummary {
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const lat = (p: string): number => wrkMs(new RegExp(`^\\s+${p}%\\s+(\\S+)`, 'm').exec(out)?.[1]);
  return {
    requests: Number(/(\d+) requests in/.exec(out)?.[1] ?? NaN),
    connectErrors: Number(sock?.[1] ?? 0),
    readErrors: Number(sock?.[2] ?? 0),
    writeErrors: Number(sock?.[3] ?? 0),
    timeouts: Number(sock?.[4] ?? 0),
    non2xx3xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
    p50: lat('50'),
    p99: lat('99'),
    max: wrkMs(/^\s+Latency\s+\S+\s+\S+\s+(\S+)/m.exec(out)?.[1]),
    raw: out,
  };
}

interface Collected {
  child: ChildProcess;
  done: Promise<string>;
}

/** The proxy's URL (an IPv6 address in brackets). */
function url(): string {
  return `http://${P.addr.includes(':') ? `[${P.addr}]` : P.addr}:${P.port}/`;
}

/** A load generator: inside the client namespace with --inbound. */
function spawnLoad(argv: string[], options: Parameters<typeof spawn>[2]): ChildProcess {
  return state.topo ? state.topo.spawn(argv[0], argv.slice(1), options) : spawn(argv[0], argv.slice(1), options);
}

function startCollected(argv: string[]): Collected {
  const child = spawnLoad(argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  state.children.add(child);
  renice(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const done = new Promise<string>((res) =>
    child.on('close', () => {
      state.children.delete(child);
      res(out);
    }),
  );
  return { child, done };
}

function startWrk(seconds: number): Collected | null {
  if (P.wrkConnections <= 0) return null;
  return startCollected([
    BIN.wrk,
    '-t',
    '1',
    '-c',
    String(P.wrkConnections),
    '-d',
    `${Math.ceil(seconds)}s`,
    '--timeout',
    `${Math.ceil(P.timeoutMs / 1000)}s`,
    '--latency',
    '-H',
    'Connection: close',
    url(),
  ]);
}

async function stopWrk(w: Collected | null): Promise<WrkSummary | null> {
  if (!w) return null;
  if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGINT');
  const timer = setTimeout(() => w.child.kill('SIGKILL'), 10_000);
  const out = await w.done;
  clearTimeout(timer);
  return parseWrk(out);
}

/** ab's summary. */
export interface AbSummary {
  method: Method;
  concurrency: number;
  seconds: number;
  complete: number;
  failed: number;
  failedConnect: number;
  failedReceive: number;
  failedLength: number;
  failedExceptions: number;
  non2xx: number;
  /** ab's "Total" connection time row (connect included), ms */
  totalMedian: number;
  totalMax: number;
  /** ab's "Connect" row max, ms */
  connectMax: number;
  p99: number;
  reloads: number;
  reloadMeanMs: number;
  reloadMaxMs: number;
  exitCode: number | null;
  raw: string;
}

function parseAb(out: string): Omit<AbSummary, 'method' | 'concurrency' | 'seconds' | 'reloads' | 'reloadMeanMs' | 'reloadMaxMs' | 'exitCode'> {
  const n = (re: RegExp): number => Number(re.exec(out)?.[1] ?? NaN);
  const row = (name: string): number[] => (new RegExp(`^${name}:\\s+(.*)$`, 'm').exec(out)?.[1] ?? '').trim().split(/\s+/).map(Number);
  const total = row('Total');
  const conn = row('Connect');
  const fails = /\(Connect: (\d+), Receive: (\d+), Length: (\d+), Exceptions: (\d+)\)/.exec(out);
  return {
    complete: n(/Complete requests:\s+(\d+)/),
    failed: n(/Failed requests:\s+(\d+)/),
    failedConnect: Number(fails?.[1] ?? 0),
    failedReceive: Number(fails?.[2] ?? 0),
    failedLength: Number(fails?.[3] ?? 0),
    failedExceptions: Number(fails?.[4] ?? 0),
    non2xx: n(/Non-2xx responses:\s+(\d+)/) || 0,
    // row: min mean [+/-sd] median max
    totalMedian: total[3] ?? NaN,
    totalMax: total[4] ?? NaN,
    connectMax: conn[4] ?? NaN,
    p99: n(/^\s+99%\s+(\d+)/m),
    raw: out,
  };
}

// ---------------------------------------------------------------- methods

/** One reload as run by a method; times are wall clock ms since the epoch. */
interface Reload {
  start: number;
  end: number;
  ok: boolean;
  /** synplug protect --json: what it reports about its plug window */
  protect?: ProtectInfo;
}

/** The fields of `synplug protect --json` the bench keeps (ProtectResult in src/guard/types.ts; the counts from its `report`). */
interface ProtectInfo {
  heldMs: number;
  maxHoldReached: boolean;
  packetsReleased: number;
  drops: number;
  overheadUs: number;
  /** the report's refused and reset (0 when not counted) and whether it said lossless */
  refused: number;
  reset: number;
  lossless: boolean | null;
}

function parseProtect(stdout: string): ProtectInfo | undefined {
  const line = stdout.trim().split('\n').pop();
  if (!line) return undefined;
  try {
    const j = JSON.parse(line) as Record<string, unknown>;
    const rep = j.report as Record<string, unknown> | undefined;
    if (typeof rep?.holdMs !== 'number') return undefined; // an error report, not a ProtectResult
    const o = (j.overhead ?? {}) as Record<string, unknown>;
    return {
      heldMs: Number(rep.holdMs),
      maxHoldReached: Boolean(j.maxHoldReached),
      packetsReleased: Number(rep.heldSyns),
      drops: Number(rep.dropped),
      overheadUs: Number(o.totalUs),
      refused: Number(rep.refused ?? 0),
      reset: Number(rep.reset ?? 0),
      lossless: (rep.lossless as boolean | null) ?? null,
    };
  } catch {
    return undefined;
  }
}

/** Kinds of the qdiscs on lo, from `tc -j qdisc show dev lo`. */
function loQdiscKinds(): string[] {
  return qdiscKinds('lo');
}

/** Kinds of the qdiscs on DEV (every device without one), from `tc -j qdisc show [dev DEV]`, each as `KIND@DEV`... or KIND with a device. */
function qdiscKinds(dev?: string): string[] {
  const r = runSync([BIN.tc, '-j', 'qdisc', 'show', ...(dev ? ['dev', dev] : [])]);
  try {
    return (JSON.parse(r.out) as { kind: string; dev?: string }[]).map((q) => (dev ? q.kind : `${q.kind}@${q.dev ?? '?'}`));
  } catch {
    return [];
  }
}

/** --inbound: the plug qdiscs of the machine (`plug@ifbX`), from tc. */
function plugQdiscs(): string[] {
  return qdiscKinds().filter((k) => k.startsWith('plug@'));
}

async function prepare(m: Method): Promise<void> {
  if (m === 'drop' && !state.nftTable) {
    const r = runSync([BIN.nft, 'add', 'table', 'inet', NFT_TABLE]);
    state.nftTable = r.code === 0;
    const c = runSync([BIN.nft, 'add', 'chain', 'inet', NFT_TABLE, 'in', '{ type filter hook input priority 0; policy accept; }']);
    if (r.code !== 0 || c.code !== 0) fail(`nft: ${r.out} ${c.out}`);
  }
  if (m === 'synplug' && !state.synplugSetup && state.topo) {
    const dev = state.topo.serverDev;
    const r = await run([...synplugCmd, 'setup', '--inbound', dev, '--port', String(P.port), '--addr', P.addr], 120_000);
    if (r.code !== 0) fail(`synplug setup --inbound ${dev} failed (${r.code}): ${r.stdout}${r.stderr}`);
    state.synplugSetup = true;
    log(`synplug setup --inbound ${dev} --port ${P.port} --addr ${P.addr}: ${((r.end - r.start) / 1000).toFixed(2)} s`);
    // tc as an oracle: a clsact on the veth end and a plug on an IFB, or the window measures nothing.
    const kinds = qdiscKinds(dev);
    const plugs = plugQdiscs();
    if (!kinds.includes('clsact') || plugs.length === 0)
      fail(`after synplug setup --inbound, ${dev} has qdiscs [${kinds.join(', ')}] and the plugs are [${plugs.join(', ')}]`);
  } else if (m === 'synplug' && !state.synplugSetup) {
    const r = await run([...synplugCmd, 'setup'], 120_000);
    if (r.code !== 0) fail(`synplug setup failed (${r.code}): ${r.stdout}${r.stderr}`);
    state.synplugSetup = true;
    log(`synplug setup: ${((r.end - r.start) / 1000).toFixed(2)} s`);
    // tc as an oracle: the tree must be there, or the window measures nothing.
    const kinds = loQdiscKinds();
    if (!kinds.includes('prio') || !kinds.includes('plug')) fail(`after synplug setup, lo has qdiscs [${kinds.join(', ')}], not prio + plug`);
  }
}

async function unprepare(m: Method): Promise<void> {
  if (m === 'drop' && state.nftTable) {
    runSync([BIN.nft, 'delete', 'table', 'inet', NFT_TABLE]);
    state.nftTable = false;
  }
  if (m === 'synplug' && state.synplugSetup && state.topo) {
    const dev = state.topo.serverDev;
    const r = await run([...synplugCmd, 'teardown', '--inbound', dev], 120_000);
    if (r.code !== 0) log(`synplug teardown --inbound ${dev} failed (${r.code}): ${r.stdout}${r.stderr}`);
    state.synplugSetup = false;
    const kinds = qdiscKinds(dev);
    if (kinds.includes('clsact') || plugQdiscs().length)
      log(`warning: after synplug teardown, ${dev} has qdiscs [${kinds.join(', ')}], plugs [${plugQdiscs().join(', ')}]`);
    return;
  }
  if (m === 'synplug' && state.synplugSetup) {
    const r = await run([...synplugCmd, 'teardown'], 120_000);
    if (r.code !== 0) log(`synplug teardown failed (${r.code}): ${r.stdout}${r.stderr}`);
    state.synplugSetup = false;
    const kinds = loQdiscKinds();
    if (kinds.includes('plug')) log(`warning: after synplug teardown, lo still has qdiscs [${kinds.join(', ')}]`);
  }
}

const reloadErrors: string[] = [];

async function reloadOnce(m: Method): Promise<Reload> {
  const start = wallMs();
  let ok = true;
  let end = start;
  let protect: ProtectInfo | undefined;
  const check = (what: string, r: RunResult): void => {
    end = r.end;
    if (r.code !== 0) {
      ok = false;
      if (reloadErrors.length < 20) reloadErrors.push(`${m}: ${what} exited ${r.code ?? r.signal}: ${(r.stderr || r.stdout).trim().slice(0, 400)}`);
    }
  };
  const before = haproxyPids().join(' ');
  const argv = haproxyArgv();
  if (m === 'unprotected') {
    check('haproxy', await run(argv));
  } else if (m === 'drop') {
    check(
      'nft add rule',
      await run([
        BIN.nft,
        'add',
        'rule',
        'inet',
        NFT_TABLE,
        'in',
        P.addr.includes(':') ? 'ip6' : 'ip',
        'daddr',
        P.addr,
        'tcp',
        'dport',
        String(P.port),
        'tcp',
        'flags',
        '&',
        '(syn|ack)',
        '==',
        'syn',
        'drop',
      ]),
    );
    check('haproxy', await run(argv));
    check('nft flush chain', await run([BIN.nft, 'flush', 'chain', 'inet', NFT_TABLE, 'in']));
  } else if (m === 'synplug') {
    const r = await run([...synplugCmd, 'protect', '--json', ...protectArgs, '--', ...argv], 120_000);
    check('synplug protect', r);
    protect = parseProtect(r.stdout);
  }
  const after = haproxyPids();
  for (const p of after) state.haproxyPids.add(p);
  // A reload that exits 0 but did not start a new haproxy (a wrapper that
  // did nothing) must not count.
  if (ok && (after.length === 0 || after.join(' ') === before || !after.every(alive))) {
    ok = false;
    if (reloadErrors.length < 20) reloadErrors.push(`${m}: the reload exited 0 but no new haproxy runs (pid file: '${after.join(' ')}', before: '${before}')`);
  }
  return { start, end, ok, ...(protect ? { protect } : {}) };
}

/** Reload in a loop, 100 ms after the previous reload returned, until done() says so. */
async function reloadLoop(m: Method, done: (reloads: number, elapsedMs: number, meanMs: number) => boolean | Promise<boolean>, t0: number): Promise<Reload[]> {
  const reloads: Reload[] = [];
  while (!(await done(reloads.length, wallMs() - t0, meanMax(reloads.map((r) => r.end - r.start)).mean || 0))) {
    reloads.push(await reloadOnce(m));
    const r = reloads[reloads.length - 1];
    if (reloads.length % 5 === 0 || !r.ok) log(`  ${m}: reload ${reloads.length} took ${((r.end - r.start) / 1000).toFixed(2)} s${r.ok ? '' : ' (FAILED)'}`);
    await sleep(P.intervalMs);
  }
  return reloads;
}

interface MethodResult {
  method: Method;
  windowStart: number;
  windowEnd: number;
  seconds: number;
  client: ClientSummary;
  wrk: WrkSummary | null;
  reloads: Reload[];
  reloadCount: number;
  reloadFailures: number;
  reloadMeanMs: number;
  reloadMaxMs: number;
  /** synplug only: totals of what protect --json reported */
  protect: ProtectSummary | null;
  records: RequestRecord[];
}

interface ProtectSummary {
  reports: number;
  heldMeanMs: number;
  heldMaxMs: number;
  packetsReleased: number;
  drops: number;
  maxHoldReached: number;
  overheadMaxUs: number;
  /** the reports' refused and reset, summed, and how many reports were not lossless */
  refused: number;
  reset: number;
  notLossless: number;
}

function summariseProtect(reloads: readonly Reload[]): ProtectSummary | null {
  const ps = reloads.map((r) => r.protect).filter((p): p is ProtectInfo => p !== undefined);
  if (ps.length === 0) return null;
  const held = meanMax(ps.map((p) => p.heldMs));
  return {
    reports: ps.length,
    heldMeanMs: held.mean,
    heldMaxMs: held.max,
    packetsReleased: ps.reduce((a, p) => a + p.packetsReleased, 0),
    drops: ps.reduce((a, p) => a + p.drops, 0),
    maxHoldReached: ps.filter((p) => p.maxHoldReached).length,
    overheadMaxUs: meanMax(ps.map((p) => p.overheadUs)).max,
    refused: ps.reduce((a, p) => a + p.refused, 0),
    reset: ps.reduce((a, p) => a + p.reset, 0),
    notLossless: ps.filter((p) => p.lossless !== true).length,
  };
}

async function runMethod(m: Method, capSeconds: number): Promise<MethodResult> {
  log(`--- ${m}${m === 'baseline' ? '' : ` (window at most ${capSeconds.toFixed(0)} s)`}`);
  ensureAddress();
  await startHaproxy();
  await prepare(m);
  const t0 = wallMs();
  const h = await startLoad(m);
  const target = m === 'synplug' ? P.reloads : P.compareReloads;
  const wrk = startWrk((m === 'baseline' ? P.baselineSeconds : capSeconds) + 60);
  let reloads: Reload[] = [];
  await sleep(P.settleMs);
  if (m === 'baseline') {
    await sleep(Math.max(0, P.baselineSeconds * 1000 - 2 * P.settleMs));
  } else {
    const minMs = Math.max(0, P.minSeconds * 1000 - 2 * P.settleMs);
    const maxMs = capSeconds * 1000 - 2 * P.settleMs;
    const l0 = wallMs();
    // Stop at the cap, or before a reload that would probably end past it.
    // unprotected also runs until it has shown a failure (the sensitivity check), within the cap.
    const enough = async (n: number): Promise<boolean> =>
      n >= target && (m !== 'unprotected' || (await clientRequest<{ failed: number }>({ type: 'peek' }, 'peeked')).failed > 0);
    reloads = await reloadLoop(m, async (n, el, mean) => el + mean > maxMs || (el >= minMs && (await enough(n))), l0);
  }
  await sleep(P.settleMs);
  const [records, wrkSummary] = await Promise.all([stopLoad(h), stopWrk(wrk)]);
  const t1 = wallMs();
  stopHaproxySync();
  await unprepare(m);
  const seconds = (t1 - t0) / 1000;
  const durs = reloads.map((r) => r.end - r.start);
  const mm = meanMax(durs);
  const res: MethodResult = {
    method: m,
    windowStart: t0,
    windowEnd: t1,
    seconds,
    client: summarise(records, seconds),
    wrk: wrkSummary,
    reloads,
    reloadCount: reloads.length,
    reloadFailures: reloads.filter((r) => !r.ok).length,
    reloadMeanMs: mm.mean,
    reloadMaxMs: mm.max,
    protect: summariseProtect(reloads),
    records,
  };
  const c = res.client;
  log(
    `  ${m}: ${c.requests} requests, ${c.failed} failed, p99 ${fmtMs(c.p99)}, max ${fmtMs(c.max)}, ${reloads.length} reloads` +
      (wrkSummary
        ? `; wrk ${wrkSummary.requests} requests, socket errors ${wrkSummary.connectErrors}/${wrkSummary.readErrors}/${wrkSummary.writeErrors}/${wrkSummary.timeouts}`
        : ''),
  );
  return res;
}

async function runAb(m: Method): Promise<AbSummary> {
  log(`--- ab -r under ${m} reloads (${P.abSeconds} s, -c ${P.abConcurrency})`);
  ensureAddress();
  await startHaproxy();
  await prepare(m);
  const ab = startCollected([
    BIN.ab,
    '-r',
    '-s',
    String(Math.ceil(P.timeoutMs / 1000)),
    '-c',
    String(P.abConcurrency),
    '-t',
    String(P.abSeconds),
    '-n',
    '10000000',
    url(),
  ]);
  let abDone = false;
  void ab.done.then(() => (abDone = true));
  await sleep(P.settleMs);
  const reloads = m === 'baseline' ? [] : await reloadLoop(m, () => abDone || false, wallMs());
  const timer = setTimeout(() => ab.child.kill('SIGINT'), (P.abSeconds + 30) * 1000);
  const out = await ab.done;
  clearTimeout(timer);
  stopHaproxySync();
  await unprepare(m);
  const mm = meanMax(reloads.map((r) => r.end - r.start));
  const s: AbSummary = {
    method: m,
    concurrency: P.abConcurrency,
    seconds: P.abSeconds,
    ...parseAb(out),
    reloads: reloads.length,
    reloadMeanMs: mm.mean,
    reloadMaxMs: mm.max,
    exitCode: ab.child.exitCode,
  };
  log(`  ab: ${s.complete} complete, ${s.failed} failed (receive ${s.failedReceive}), non-2xx ${s.non2xx}, total max ${s.totalMax} ms, ${s.reloads} reloads`);
  return s;
}

// ---------------------------------------------------------------- main

interface Criterion {
  name: string;
  result: 'PASS' | 'FAIL' | 'SKIP' | 'INFO';
  detail: string;
}

function evaluate(results: Map<Method, MethodResult>): Criterion[] {
  const out: Criterion[] = [];
  const base = results.get('baseline');
  const un = results.get('unprotected');
  const sp = results.get('synplug');
  // Not asked for: SKIP. Asked for but cut by the budget: FAIL (nothing was shown).
  const skip = (name: string, why: string, m?: Method): void =>
    void out.push(
      m && methods.includes(m) ? { name, result: 'FAIL', detail: `${m} was asked for but not run (time budget)` } : { name, result: 'SKIP', detail: why },
    );
  const check = (name: string, ok: boolean, detail: string): void => void out.push({ name, result: ok ? 'PASS' : 'FAIL', detail });
  const wrkErr = (w: WrkSummary | null): number => (w ? w.connectErrors + w.readErrors + w.writeErrors + w.timeouts + w.non2xx3xx : 0);

  if (un) {
    check(
      'unprotected: reloads make requests fail (the experiment is sensitive)',
      un.client.failed > 0,
      `${un.client.failed} failed client requests over ${un.reloadCount} reloads (wrk: ${wrkErr(un.wrk)} errors)`,
    );
  } else skip('unprotected: reloads make requests fail (the experiment is sensitive)', 'unprotected not run', 'unprotected');

  if (base) {
    check('baseline: no failed requests', base.client.failed === 0 && wrkErr(base.wrk) === 0, `client ${base.client.failed}, wrk ${wrkErr(base.wrk)}`);
  }

  const names = {
    failed: 'synplug: 0 failed requests (client and wrk)',
    reloads: `synplug: at least ${P.reloads} reloads, all exited 0`,
    latency: 'synplug: max latency <= longest reload + baseline p99',
    held: 'synplug: the plug held SYNs (protect --json reports packets released)',
  };
  if (!sp) {
    for (const n of Object.values(names)) skip(n, 'synplug not run', 'synplug');
    return out;
  }
  check(
    names.failed,
    sp.client.failed === 0 && wrkErr(sp.wrk) === 0,
    `client ${sp.client.failed} failed of ${sp.client.requests}${sp.client.failed ? ` ${JSON.stringify(sp.client.errors)}` : ''}; wrk ${wrkErr(sp.wrk)} errors of ${sp.wrk?.requests ?? 0}`,
  );
  check(names.reloads, sp.reloadCount >= P.reloads && sp.reloadFailures === 0, `${sp.reloadCount} reloads, ${sp.reloadFailures} failed`);
  const p = sp.protect;
  check(
    names.held,
    p !== null && p.packetsReleased > 0,
    p
      ? `${p.packetsReleased} packets over ${p.reports} reports, ${p.drops} dropped, max-hold reached ${p.maxHoldReached} times`
      : 'no protect --json report could be read',
  );
  if (!base) skip(names.latency, 'baseline not run', 'baseline');
  else {
    const bound = sp.reloadMaxMs + base.client.p99;
    check(names.latency, sp.client.max <= bound, `max ${fmtMs(sp.client.max)} vs ${fmtMs(sp.reloadMaxMs)} + ${fmtMs(base.client.p99)} = ${fmtMs(bound)}`);
    // Informational, stricter: the reload command includes synplug's own start (Node, watchdog) before the plug.
    if (sp.protect) {
      const held = sp.protect.heldMaxMs + base.client.p99;
      out.push({
        name: 'synplug (info): max latency vs longest plug hold + baseline p99',
        result: 'INFO',
        detail: `max ${fmtMs(sp.client.max)} vs ${fmtMs(sp.protect.heldMaxMs)} + ${fmtMs(base.client.p99)} = ${fmtMs(held)}${sp.client.max <= held ? ' (within)' : ' (over)'}`,
      });
    }
  }
  return out;
}

function versionOf(argv: string[]): string {
  const r = runSync(argv);
  return (
    r.out
      .split('\n')
      .find((l) => l.trim())
      ?.trim() ?? '?'
  );
}

async function main(): Promise<void> {
  const benchStart = wallMs();
  const kernel = release();
  const date = new Date().toISOString().slice(0, 10);
  log(`kernel ${kernel}, ${cpus().length} CPUs, methods ${methods.join(',')}, ab ${abMethod}, temp ${TMP}`);
  if (INBOUND) {
    state.topo = await createInboundTopology({ prefix: 'spb', ipv6: opt.ipv6 as boolean, onStep: log });
    P.addr = (opt.ipv6 ? state.topo.serverAddr6 : state.topo.serverAddr) as string;
    log(
      `inbound: HAProxy on ${P.addr} (${state.topo.serverDev}); the clients in the namespace behind it (${state.topo.clientDev}, ${opt.ipv6 ? state.topo.clientAddr6 : state.topo.clientAddr})`,
    );
  }
  ensureAddress();
  const nginxPort = await freePort();
  await startNginx(nginxPort);
  writeHaproxyCfg(nginxPort);
  await startClientProcess();

  // Warm up the client's JIT, nginx and haproxy; not recorded.
  await startHaproxy();
  const w = await startLoad('warmup');
  await sleep(2000);
  await stopLoad(w);
  stopHaproxySync();

  // The budget: phases run in the order given; synplug gets what the
  // others leave (minus a reserve for the informational drop and ab runs,
  // which are cut or skipped when the time is gone).
  const results = new Map<Method, MethodResult>();
  const skipped: string[] = [];
  let ab: AbSummary | null = null;
  const left = (): number => P.budgetSeconds - (wallMs() - benchStart) / 1000;
  const abReserve = abMethod !== 'none' ? P.abSeconds + 40 : 0;
  for (let i = 0; i < methods.length; i++) {
    const m = methods[i];
    const later = methods.slice(i + 1);
    let cap = m === 'baseline' ? P.baselineSeconds : m === 'synplug' ? P.synplugMaxSeconds : P.maxSeconds;
    const reserve = abReserve + later.reduce((a, x) => a + (x === 'baseline' ? P.baselineSeconds + 20 : x === 'synplug' ? 300 : 60), 0);
    if (m !== 'baseline') cap = Math.min(cap, left() - reserve - 30);
    if (m !== 'baseline' && cap < 30) {
      const why = `${m}: skipped, ${left().toFixed(0)} s of the ${P.budgetSeconds} s budget left`;
      log(why);
      skipped.push(why);
      continue;
    }
    results.set(m, await runMethod(m, cap));
  }
  if (abMethod !== 'none') {
    if (left() >= P.abSeconds + 20) ab = await runAb(abMethod);
    else {
      const why = `ab: skipped, ${left().toFixed(0)} s of the ${P.budgetSeconds} s budget left`;
      log(why);
      skipped.push(why);
    }
  }

  // ---- report
  const rows = [...results.values()].map((r) => [
    r.method,
    String(r.client.requests),
    `${r.client.failed} (${r.client.failedPercent.toFixed(2)}%)`,
    `${r.client.failedConnect}/${r.client.failedRead}/${r.client.failedHttp}`,
    fmtMs(r.client.p50),
    fmtMs(r.client.p99),
    fmtMs(r.client.max),
    String(r.reloadCount),
    fmtMs(r.reloadMeanMs),
    fmtMs(r.reloadMaxMs),
    r.client.rps.toFixed(0),
    r.wrk ? `${r.wrk.requests}` : '-',
    r.wrk ? `${r.wrk.connectErrors}/${r.wrk.readErrors}/${r.wrk.writeErrors}/${r.wrk.timeouts}/${r.wrk.non2xx3xx}` : '-',
    r.wrk ? fmtMs(r.wrk.max) : '-',
  ]);
  const lines: string[] = [];
  lines.push('');
  lines.push(
    `Reload bench${state.topo ? ` (inbound: clients in another namespace over ${state.topo.serverDev}, ${P.addr})` : ''}, kernel ${kernel}, ${date}: client ${P.connections} connections${P.wrkConnections ? ` + wrk ${P.wrkConnections}` : ''}, reload every ${P.intervalMs} ms after the previous returned`,
  );
  lines.push('');
  lines.push(
    table(
      [
        'method',
        'requests',
        'failed',
        'conn/read/http',
        'p50',
        'p99',
        'max',
        'reloads',
        'reload mean',
        'reload max',
        'req/s',
        'wrk req',
        'wrk errs c/r/w/t/http',
        'wrk max*',
      ],
      rows,
    ),
  );
  lines.push("latency = client.ts, from before connect() to the server's close, successful requests; failed = client.ts requests");
  lines.push('* wrk latency starts after the TCP connect: a held or dropped SYN does not show in it');
  for (const r of results.values()) {
    const p = r.protect;
    if (p) {
      lines.push(
        `  ${r.method} protect --json (${p.reports} reports): plug held mean ${fmtMs(p.heldMeanMs)}, max ${fmtMs(p.heldMaxMs)}; ` +
          `${p.packetsReleased} packets held and released, ${p.drops} dropped, max-hold reached ${p.maxHoldReached} times; ` +
          `synplug's own time in the window max ${(p.overheadMaxUs / 1000).toFixed(2)} ms`,
      );
      lines.push(
        `  ${r.method} reports vs clients: ${p.refused} refused + ${p.reset} reset counted by protect (${p.notLossless} of ${p.reports} reloads not lossless); the clients failed ${r.client.failed}`,
      );
    }
    if (r.client.failed)
      lines.push(
        `  ${r.method} failures by kind: ${Object.entries(r.client.errors)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
      );
  }
  if (ab) {
    lines.push('');
    lines.push(
      table(
        ['ab -r', 'complete', 'failed', 'conn/recv/len/exc', 'non-2xx', 'total median', 'total max', 'connect max', 'p99', 'reloads', 'reload max'],
        [
          [
            `${ab.method} -c ${ab.concurrency} ${ab.seconds}s`,
            String(ab.complete),
            String(ab.failed),
            `${ab.failedConnect}/${ab.failedReceive}/${ab.failedLength}/${ab.failedExceptions}`,
            String(ab.non2xx),
            `${ab.totalMedian} ms`,
            `${ab.totalMax} ms`,
            `${ab.connectMax} ms`,
            `${ab.p99} ms`,
            String(ab.reloads),
            fmtMs(ab.reloadMaxMs),
          ],
        ],
      ),
    );
  }
  for (const sk of skipped) lines.push(`  ${sk}`);
  if (reloadErrors.length) {
    lines.push('');
    lines.push('reload command errors:');
    for (const e of reloadErrors) lines.push(`  ${e}`);
  }
  const criteria = evaluate(results);
  const benchSeconds = (wallMs() - benchStart) / 1000;
  lines.push('');
  lines.push(`bench time ${benchSeconds.toFixed(0)} s`);
  lines.push('');
  for (const c of criteria) lines.push(`${c.result} ${c.name}: ${c.detail}`);
  process.stdout.write(lines.join('\n') + '\n');

  // ---- files
  const outDir = resolve(opt.out as string);
  mkdirSync(outDir, { recursive: true });
  const json = {
    bench: 'reload',
    kernel,
    date: new Date().toISOString(),
    inVm: process.env.SYNPLUG_IN_VM === '1',
    benchSeconds: +benchSeconds.toFixed(1),
    cpus: cpus().length,
    versions: {
      node: process.version,
      haproxy: versionOf([BIN.haproxy, '-v']),
      nginx: versionOf([BIN.nginx, '-v']),
      wrk: BIN.wrk ? versionOf([BIN.wrk, '--version']) : null,
    },
    setup: {
      proxy: `haproxy -D -f cfg -p pidfile -sf <old pids> (not master-worker, no -x socket transfer), nbthread 1, on ${P.addr}:${P.port}`,
      inbound: state.topo
        ? {
            serverDev: state.topo.serverDev,
            clientDev: state.topo.clientDev,
            clientAddr: opt.ipv6 ? state.topo.clientAddr6 : state.topo.clientAddr,
            topology: state.topo.created,
            synplugSetup: `synplug setup --inbound ${state.topo.serverDev} --port ${P.port} --addr ${P.addr}`,
          }
        : null,
      backend: `nginx 127.0.0.1:${nginxPort}, return 200 "pong"`,
      params: { ...P, methods, abMethod, synplug: methods.includes('synplug') || abMethod === 'synplug' ? [...synplugCmd, 'protect', ...protectArgs] : null },
    },
    methods: Object.fromEntries(
      [...results.values()].map((r) => [
        r.method,
        {
          seconds: r.seconds,
          client: r.client,
          wrk: r.wrk,
          reloads: r.reloadCount,
          reloadFailures: r.reloadFailures,
          reloadMeanMs: r.reloadMeanMs,
          reloadMaxMs: r.reloadMaxMs,
          // [start in the window s, duration s, ok, plug held ms, packets released (synplug)]
          reloadTimes: r.reloads.map((x) => [
            +((x.start - r.windowStart) / 1000).toFixed(3),
            +((x.end - x.start) / 1000).toFixed(3),
            x.ok,
            ...(x.protect ? [+x.protect.heldMs.toFixed(1), x.protect.packetsReleased] : []),
          ]),
          protect: r.protect,
          failedRequests: r.records
            .filter((x) => x.error !== null)
            .slice(0, 500)
            .map((x) => [+((x.start - r.windowStart) / 1000).toFixed(3), +x.total.toFixed(1), x.error]),
        },
      ]),
    ),
    ab,
    skipped,
    reloadErrors,
    criteria,
    verdict: criteria.some((c) => c.result === 'FAIL') ? 'FAIL' : 'PASS',
  };
  const tag = (opt.tag as string).replace(/[^A-Za-z0-9_.-]/g, '') || (INBOUND ? `inbound${opt.ipv6 ? '6' : ''}` : '');
  const latest = INBOUND ? `latest-inbound${opt.ipv6 ? '6' : ''}` : 'latest';
  const base = `reload-${kernel}-${date}${tag ? `-${tag}` : ''}`;
  writeFileSync(join(outDir, `${base}.json`), JSON.stringify(json, null, 2) + '\n');
  const panels: Panel[] = [...results.values()].map((r) => ({
    title: r.method,
    subtitle:
      `${r.client.requests} requests, ${r.client.failed} failed, p99 ${fmtMs(r.client.p99)}, max ${fmtMs(r.client.max)}` +
      (r.reloadCount ? `; ${r.reloadCount} reloads, mean ${fmtMs(r.reloadMeanMs)}, max ${fmtMs(r.reloadMaxMs)}` : '; no reloads'),
    windowStart: r.windowStart,
    windowEnd: r.windowEnd,
    records: r.records,
    reloads: r.reloads.map((x) => ({ start: x.start, end: x.end, heldMs: x.protect?.heldMs })),
  }));
  const svg = renderSvg(
    `HAProxy reloads under load${state.topo ? ', clients in another network namespace (inbound hold)' : ''}, kernel ${kernel} (${date})`,
    `haproxy -D -sf every ${P.intervalMs} ms after the previous reload returned; ${P.connections} client connections${P.wrkConnections ? ` + wrk ${P.wrkConnections}` : ''}, a new TCP connection per request`,
    panels,
  );
  writeFileSync(join(outDir, `${base}.svg`), svg);
  if (!opt['no-latest']) {
    copyFileSync(join(outDir, `${base}.json`), join(outDir, `${latest}.json`));
    copyFileSync(join(outDir, `${base}.svg`), join(outDir, `${latest}.svg`));
  }
  log(`results: ${join(outDir, base)}.json, .svg${opt['no-latest'] ? '' : ` (and ${latest}.*)`}`);

  try {
    state.client?.send({ type: 'exit' });
  } catch {
    /* gone */
  }
  if (state.client) await Promise.race([exited(state.client), sleep(2000)]);
  cleanup();
  process.exit(json.verdict === 'FAIL' ? 1 : 0);
}

main().catch((e: unknown) => fail(e instanceof Error ? (e.stack ?? e.message) : String(e)));
