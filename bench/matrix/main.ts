/**
 * The reload matrix (issue 14 item 1): server x restart style x client side
 * (local or inbound), each row run unprotected, unprotected with net.ipv4.tcp_migrate_req=1,
 * and under synplug's protect (the library's, in this process, as `synplug
 * demo` does: the watchdog, the max-hold and the leases included; the CLI
 * would add two cold Node starts per reload in the VM), with --wait-listen as
 * the release condition of every row.
 *
 * Runs in the VM (scripts/vm/bench-matrix.sh), as root. The load is
 * bench/reload/client.ts (read-only reuse): N loops, each a new connection
 * per request, timed from before connect() to the server's close.
 *
 * Client side (`--client`):
 * - `local` (default): the servers on 169.254.255.254 on lo, the clients in
 *   the same namespace, the local hold set up (and torn down again when this
 *   run set it up);
 * - `inbound`: the clients in a network namespace of the bench's own joined
 *   by a veth pair (src/demo/topology.ts, the topology of `synplug demo
 *   --inbound` and `bench:reload --inbound`), the servers on the server-side
 *   end's 169.254.S.1, and for the protected modes the inbound hold on that
 *   end (the library's `setup({ inbound: { dev, ports, addrs } })`, every
 *   port the run uses), removed again with the pair and the namespace.
 *
 * Options: --help prints each with its default (usage() below).
 *   node --import=tsx bench/matrix/main.ts [--rows a,b] [--modes m,n]
 *     [--client local|inbound] [--reloads N] [--compare-reloads N]
 *     [--connections N] [--pause-ms MS] [--max-hold-ms MS]
 *     [--budget-seconds S] [--out DIR] [--tag NAME] [--i-am-isolated] [--check-args]
 *     [--windows ROW:MODE,ROW:MODE...]   (these windows in this order, instead
 *                                         of every --rows x every --modes)
 *
 * Rows: haproxy-sf, haproxy-w-usr2, nginx-reuseport, nginx-workers,
 * nginx-restart. Modes: unprotected, migrate, protected, protected-migrate.
 * Output: a table on stdout, bench/matrix/results/matrix-<kernel>-<date>[-tag].json
 * (rewritten after every window) and, next to it, one SVG per row group (a
 * row's modes as panels, bench/reload/svg.ts): matrix-<kernel>-<date>[-tag]-<row>.svg.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { release as osRelease } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { wallMs } from '../reload/common.js';
import { alive, findBin, killPids, run, sleep } from '../reload/procs.js';
import { fmtMs, meanMax, readRecords, summarise, table, type ClientSummary } from '../reload/stats.js';
import { renderSvg, type Panel } from '../reload/svg.js';
import { createInboundTopology, type InboundTopology } from '../../src/demo/topology.js';
import { pathToFileURL } from 'node:url';
import type * as Guard from '../../src/guard/index.js';

/** the local hold's address (--client local) */
const LOCAL_ADDR = '169.254.255.254';
/** the servers' address: LOCAL_ADDR, or the topology's server side with --client inbound */
let ADDR = LOCAL_ADDR;
/** --client inbound: the namespace and veth pair */
let topo: InboundTopology | undefined;
/** the hold the protected windows used (setup's answer) */
let hold: { id: string; via: string } | undefined;
const MIGRATE = '/proc/sys/net/ipv4/tcp_migrate_req';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/**
 * The guard as built (dist/, `npm run build`): its watchdog then starts as
 * plain node (dist/cli/bin/watchdog-main.js), not through tsx, which would add
 * seconds per protect in the emulated VM.
 */
let guard: typeof Guard;

const ROWS = ['haproxy-sf', 'haproxy-w-usr2', 'nginx-reuseport', 'nginx-workers', 'nginx-restart'] as const;
type RowName = (typeof ROWS)[number];
const MODES = ['unprotected', 'migrate', 'protected', 'protected-migrate'] as const;
type Mode = (typeof MODES)[number];
const CLIENTS = ['local', 'inbound'] as const;
type ClientSide = (typeof CLIENTS)[number];

interface Params {
  rows: RowName[];
  modes: Mode[];
  /** the windows in order: --windows, or every row x every mode */
  windows: Array<[RowName, Mode]>;
  client: ClientSide;
  reloads: number;
  compareReloads: number;
  connections: number;
  pauseMs: number;
  maxHoldMs: number;
  timeoutMs: number;
  /** the whole run's time, seconds: no reload starts within 30 s of its end, and no window within 60 s (both reported) */
  budgetSeconds: number;
  out: string;
  tag: string;
  isolated: boolean;
  /** the hold the protected modes use: setup's --via */
  via: 'auto' | 'plug' | 'queue';
}

/** Defaults of the options (--help prints them). */
const DEFAULTS = {
  modes: ['unprotected', 'migrate', 'protected'] as Mode[],
  client: 'local' as ClientSide,
  reloads: 30,
  compareReloads: 10,
  connections: 24,
  pauseMs: 500,
  maxHoldMs: 20_000,
  budgetSeconds: 500,
  out: join(ROOT, 'bench/matrix/results'),
  via: 'auto' as const,
};

/** What --help prints: every option, its default and what it does. */
function usage(): string {
  return `Usage: node --import=tsx bench/matrix/main.ts [OPTIONS]   (in the VM: bash scripts/vm/bench-matrix.sh [OPTIONS])

The reload matrix: each row (a server x a restart style) under load, in each mode.

Options (default in brackets):
  --rows ROW,ROW...          rows to run [all: ${ROWS.join(', ')}]
  --modes MODE,MODE...       modes of each row [${DEFAULTS.modes.join(',')}]; one of ${MODES.join(', ')}
                             (migrate: unprotected with net.ipv4.tcp_migrate_req=1; protected-migrate:
                             protect with the sysctl on, not a default mode)
  --windows ROW:MODE,...     run these windows in this order instead of every --rows x every --modes
  --via auto|plug|queue      the hold of the protected modes (setup's --via) [${DEFAULTS.via}]: auto takes the plug hold where
                             the kernel has it, else the queue hold (this machine's kernel: the queue hold)
  --client local|inbound     where the clients are [${DEFAULTS.client}]: local (lo, the local hold) or
                             inbound (a namespace behind a veth pair, the inbound hold); inbound tags the files 'inbound'
  --reloads N                reloads per protected window, at least 1 [${DEFAULTS.reloads}]
  --compare-reloads N        reloads per unprotected and migrate window, at least 1 [${DEFAULTS.compareReloads}]
  --connections N            client loops, each a new connection per request, at least 1 [${DEFAULTS.connections}]
  --pause-ms MS              pause between two reloads, ms, 0 or more [${DEFAULTS.pauseMs}]
  --max-hold-ms MS           protect's max-hold (--max-hold) in the protected modes, ms, at least 10 [${DEFAULTS.maxHoldMs}]
  --budget-seconds S         the whole run's time, s, at least 60 (a window needs 30 s clear of its end) [${DEFAULTS.budgetSeconds}]: no reload starts within 30 s of
                             its end and no window within 60 s (a window cut short or skipped is reported)
  --out DIR                  where the JSON and the SVGs go [bench/matrix/results]
  --tag NAME                 a tag in the file names (matrix-<kernel>-<date>-NAME.json) [none; inbound with --client inbound]
  --i-am-isolated            run outside the VM: the bench changes lo, nftables and net.ipv4.tcp_migrate_req of
                             its network namespace, so only in a throwaway one (scripts/in-netns.sh) [off: refused outside the VM]
  --check-args               check the options and exit (0: valid; 2: not), touching nothing (scripts/vm/bench-matrix.sh
                             runs it before it builds and boots the VM)
  --help                     this text
`;
}

/** A bad option: the message, exit 2, before anything starts. */
class ArgError extends Error {}

/**
 * The options, checked: numbers, names and values; unknown options refused.
 * @throws {ArgError} a bad option (its message says which and why)
 */
function parseArgs(argv: string[]): Params & { checkOnly: boolean } {
  const p: Params & { checkOnly: boolean } = {
    rows: [...ROWS],
    modes: [...DEFAULTS.modes],
    windows: [],
    client: DEFAULTS.client,
    reloads: DEFAULTS.reloads,
    compareReloads: DEFAULTS.compareReloads,
    connections: DEFAULTS.connections,
    pauseMs: DEFAULTS.pauseMs,
    maxHoldMs: DEFAULTS.maxHoldMs,
    timeoutMs: 60_000,
    budgetSeconds: DEFAULTS.budgetSeconds,
    out: DEFAULTS.out,
    tag: '',
    isolated: false,
    via: DEFAULTS.via,
    checkOnly: false,
  };
  const seen = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith('--') && a !== '--help' && seen.has(a)) throw new ArgError(`${a} given twice`);
    seen.add(a);
    const v = () => {
      const x = argv[++i];
      if (x === undefined || x.startsWith('--')) throw new ArgError(`${a} needs a value`);
      if (x === '') throw new ArgError(`${a} is empty`);
      return x;
    };
    /** a whole number of at least `min` (digits only: no sign, unit, fraction or exponent) */
    const int = (min: number) => {
      const x = v();
      const n = /^[0-9]+$/.test(x) ? Number(x) : Number.NaN;
      if (!(Number.isSafeInteger(n) && n >= min)) throw new ArgError(`${a}: '${x}' is not a whole number of at least ${min}`);
      return n;
    };
    if (a === '--rows') p.rows = v().split(',') as RowName[];
    else if (a === '--modes') p.modes = v().split(',') as Mode[];
    else if (a === '--client') p.client = v() as ClientSide;
    else if (a === '--windows')
      p.windows = v()
        .split(',')
        .map((x) => {
          const parts = x.split(':');
          if (parts.length !== 2) throw new ArgError(`--windows: '${x}' is not ROW:MODE (rows ${ROWS.join(', ')}; modes ${MODES.join(', ')})`);
          return parts as [RowName, Mode];
        });
    else if (a === '--reloads') p.reloads = int(1);
    else if (a === '--compare-reloads') p.compareReloads = int(1);
    else if (a === '--connections') p.connections = int(1);
    else if (a === '--pause-ms') p.pauseMs = int(0);
    else if (a === '--max-hold-ms') p.maxHoldMs = int(10);
    else if (a === '--out') p.out = v();
    else if (a === '--budget-seconds') p.budgetSeconds = int(60);
    else if (a === '--tag') p.tag = v();
    else if (a === '--i-am-isolated') p.isolated = true;
    else if (a === '--via') {
      const x = v();
      if (x !== 'auto' && x !== 'plug' && x !== 'queue') throw new ArgError(`--via: '${x}' is not auto, plug or queue`);
      p.via = x;
    } else if (a === '--check-args') p.checkOnly = true;
    else if (a === '--help' || a === '-h') {
      process.stdout.write(usage());
      process.exit(0);
    } else throw new ArgError(`unknown option '${a}' (--help lists them)`);
  }
  if (p.tag.includes('/')) throw new ArgError(`--tag: '${p.tag}' holds a '/' (it goes into file names)`);
  for (const r of p.rows) if (!ROWS.includes(r)) throw new ArgError(`unknown row '${r}' (${ROWS.join(', ')})`);
  for (const m of p.modes) if (!MODES.includes(m)) throw new ArgError(`unknown mode '${m}' (${MODES.join(', ')})`);
  for (const [r, m] of p.windows) {
    if (!ROWS.includes(r) || !MODES.includes(m))
      throw new ArgError(`--windows: ${r}:${m} is not ROW:MODE (rows ${ROWS.join(', ')}; modes ${MODES.join(', ')})`);
  }
  if (p.windows.length === 0) p.windows = p.rows.flatMap((r) => p.modes.map((m): [RowName, Mode] => [r, m]));
  else {
    p.rows = [...new Set(p.windows.map(([r]) => r))];
    p.modes = [...new Set(p.windows.map(([, m]) => m))];
  }
  if (!CLIENTS.includes(p.client)) throw new ArgError(`unknown client side '${p.client}' (${CLIENTS.join(', ')})`);
  if (p.client === 'inbound' && !p.tag) p.tag = 'inbound';
  return p;
}

const log = (s: string) => process.stderr.write(`[matrix] ${s}\n`);

// ------------------------------------------------------------------ servers

/** A server under test: how to start it, reload it once, and stop it. */
interface Server {
  /** what the row does on each reload, for the report */
  style: string;
  start(): Promise<void>;
  /** the reload command for the next reload (built now: it may read a pid file) */
  reloadCommand(i: number): string[];
  /** run before each reload, outside the protected window (e.g. rewrite the config) */
  prepare?(i: number): void;
  /** whether the reload took effect (a new pid, or the master still alive) */
  reloaded(): boolean;
  stop(): void;
  port: number;
}

function pidFrom(file: string): number | undefined {
  try {
    const n = Number(readFileSync(file, 'utf8').trim().split(/\s+/)[0]);
    return n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

function haproxyCfg(dir: string, port: number, masterWorker: boolean): string {
  const cfg = join(dir, 'haproxy.cfg');
  writeFileSync(
    cfg,
    [
      'global',
      '  nbthread 1',
      '  hard-stop-after 10s',
      ...(masterWorker ? ['  master-worker'] : []),
      'defaults',
      '  mode http',
      '  timeout connect 5s',
      '  timeout client 30s',
      '  timeout server 30s',
      'frontend web',
      `  bind ${ADDR}:${port}`,
      '  http-request return status 200 content-type text/plain string "pong"',
      '',
    ].join('\n'),
  );
  return cfg;
}

function nginxConf(dir: string, port: number, workers: number, reuseport: boolean): string {
  const conf = join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    [
      `worker_processes ${workers};`,
      `pid ${dir}/nginx.pid;`,
      `error_log ${dir}/error.log;`,
      'events { worker_connections 1024; }',
      'http {',
      '  access_log off;',
      `  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;`,
      `  server { listen ${ADDR}:${port}${reuseport ? ' reuseport' : ''}; location / { return 200 "pong\\n"; } }`,
      '}',
      '',
    ].join('\n'),
  );
  return conf;
}

function makeServer(row: RowName, dir: string, port: number): Server {
  const haproxy = findBin('haproxy')!;
  const nginx = findBin('nginx')!;
  const pidfile = join(dir, row.startsWith('haproxy') ? 'haproxy.pid' : 'nginx.pid');
  let lastPid: number | undefined;
  const startCmd = async (argv: string[]) => {
    const r = await run(argv, 60_000);
    if (r.code !== 0) throw new Error(`${argv.join(' ')} exited ${r.code}: ${r.stderr}`);
    for (let i = 0; i < 200 && pidFrom(pidfile) === undefined; i++) await sleep(50);
    lastPid = pidFrom(pidfile);
  };
  const stopPids = () => {
    const pids = [pidFrom(pidfile), lastPid].filter((p): p is number => p !== undefined);
    killPids(pids, 3000);
  };
  switch (row) {
    case 'haproxy-sf': {
      const cfg = haproxyCfg(dir, port, false);
      return {
        style: 'haproxy -D -sf OLDPIDS (a new process binds a new socket; the old one closes its own)',
        port,
        start: () => startCmd([haproxy, '-D', '-f', cfg, '-p', pidfile]),
        reloadCommand: () => {
          lastPid = pidFrom(pidfile);
          return [haproxy, '-D', '-f', cfg, '-p', pidfile, '-sf', ...readFileSync(pidfile, 'utf8').trim().split(/\s+/)];
        },
        reloaded: () => pidFrom(pidfile) !== lastPid,
        stop: stopPids,
      };
    }
    case 'haproxy-w-usr2': {
      const cfg = haproxyCfg(dir, port, true);
      return {
        style: 'haproxy -W (master-worker), kill -USR2 MASTER as systemctl reload does (the socket is handed over)',
        port,
        start: () => startCmd([haproxy, '-W', '-D', '-f', cfg, '-p', pidfile]),
        reloadCommand: () => ['/bin/kill', '-USR2', String(pidFrom(pidfile))],
        reloaded: () => lastPid !== undefined && alive(lastPid) && pidFrom(pidfile) === lastPid,
        stop: stopPids,
      };
    }
    case 'nginx-reuseport':
    case 'nginx-workers': {
      let conf = nginxConf(dir, port, 2, true);
      return {
        style:
          row === 'nginx-reuseport'
            ? 'nginx -s reload, listen reuseport, 2 workers (sockets kept)'
            : 'nginx -s reload, listen reuseport, workers 2 -> 3 -> 2 ... (sockets opened and closed)',
        port,
        start: () => startCmd([nginx, '-p', dir, '-c', conf]),
        prepare: (i) => {
          if (row === 'nginx-workers') conf = nginxConf(dir, port, i % 2 === 0 ? 3 : 2, true);
        },
        reloadCommand: () => [nginx, '-p', dir, '-c', conf, '-s', 'reload'],
        reloaded: () => lastPid !== undefined && alive(lastPid),
        stop: stopPids,
      };
    }
    case 'nginx-restart': {
      const conf = nginxConf(dir, port, 2, false);
      const script = `${nginx} -p ${dir} -c ${conf} -s stop; while [ -e ${pidfile} ]; do sleep 0.02; done; sleep 0.3; exec ${nginx} -p ${dir} -c ${conf}`;
      return {
        style: 'nginx -s stop, wait for its exit, 0.3 s, start (nothing handed over)',
        port,
        start: () => startCmd([nginx, '-p', dir, '-c', conf]),
        reloadCommand: () => {
          lastPid = pidFrom(pidfile);
          return ['/bin/sh', '-c', script];
        },
        reloaded: () => pidFrom(pidfile) !== undefined && pidFrom(pidfile) !== lastPid,
        stop: stopPids,
      };
    }
  }
}

// ------------------------------------------------------------------ client

let client: ChildProcess | undefined;
/** wall clock ms when the run's budget ends */
let deadline = Number.POSITIVE_INFINITY;
let runId = 0;

async function startClient(): Promise<void> {
  const path = fileURLToPath(new URL('../reload/client.ts', import.meta.url));
  // inbound: started inside the client namespace (as bench/reload does), so its SYNs arrive on the veth's server end
  client = topo
    ? topo.spawn(process.execPath, [...process.execArgv, path], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    : fork(path, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await new Promise<void>((res, rej) => {
    client!.once('message', (m: { type: string }) => (m.type === 'ready' ? res() : rej(new Error(JSON.stringify(m)))));
    client!.once('exit', (c) => rej(new Error(`client exited ${c}`)));
  });
}

function ask<T>(msg: object, answer: string): Promise<T> {
  const c = client!;
  return new Promise((res) => {
    const on = (m: { type: string }) => {
      if (m.type !== answer) return;
      c.off('message', on);
      res(m as T);
    };
    c.on('message', on);
    c.send(msg);
  });
}

// ------------------------------------------------------------------ one window

interface ReloadRecord {
  start: number;
  durationMs: number;
  exitCode: number;
  reloaded: boolean;
  heldMs?: number;
  maxHoldReached?: boolean;
  packetsReleased?: number;
  drops?: number;
  /** protect's report: SYNs it counted refused, connections it counted reset (null: not counted) */
  reportRefused?: number | null;
  reportReset?: number | null;
  handedOver?: boolean;
  newListener?: boolean;
  /** sockets of before the reload, held only by old processes, that the wait saw close before releasing */
  oldClosed?: number;
  error?: string;
}

interface Window {
  row: RowName;
  mode: Mode;
  /** where the clients are: `local` (same namespace, lo) or `inbound` (another namespace over veth) */
  clientSide: ClientSide;
  /** what each reload does */
  style: string;
  migrateReq: number;
  seconds: number;
  client: ClientSummary;
  reloads: ReloadRecord[];
}

function setMigrate(v: number): void {
  writeFileSync(MIGRATE, `${v}\n`);
}

async function window(P: Params, row: RowName, mode: Mode, server: Server, csvDir: string): Promise<Window> {
  const migrateReq = mode === 'migrate' || mode === 'protected-migrate' ? 1 : 0;
  setMigrate(migrateReq);
  const protectedMode = mode.startsWith('protected');
  const n = protectedMode ? P.reloads : P.compareReloads;
  const id = ++runId;
  const out = join(csvDir, `${row}-${mode}.csv`);
  const t0 = wallMs();
  await ask({ type: 'run', id, host: ADDR, port: server.port, connections: P.connections, timeoutMs: P.timeoutMs, out }, 'started');
  await sleep(1000);
  const reloads: ReloadRecord[] = [];
  for (let i = 0; i < n; i++) {
    if (wallMs() > deadline - 30_000) {
      log(`${row} / ${mode}: the budget ends: ${i} of ${n} reloads done`);
      break;
    }
    server.prepare?.(i);
    const argv = server.reloadCommand(i);
    const start = wallMs();
    const rec: ReloadRecord = { start, durationMs: 0, exitCode: -1, reloaded: false };
    if (protectedMode) {
      try {
        const r = await guard.protect({ command: argv, maxHoldMs: P.maxHoldMs, waitListen: { address: ADDR, port: server.port } });
        Object.assign(rec, {
          exitCode: r.exitCode,
          heldMs: r.report.holdMs,
          maxHoldReached: r.maxHoldReached,
          packetsReleased: r.report.heldSyns,
          drops: r.report.dropped,
          reportRefused: r.report.refused,
          reportReset: r.report.reset,
          handedOver: r.newListener?.handedOver === true,
          newListener: r.newListener != null,
          oldClosed: r.newListener?.oldClosed ?? 0,
        });
      } catch (e) {
        rec.error = String((e as Error).message ?? e);
      }
    } else {
      const r = await run(argv, 60_000);
      rec.exitCode = r.code ?? -1;
      if (r.code !== 0) rec.error = r.stderr.trim().slice(0, 500);
    }
    rec.durationMs = wallMs() - start;
    // async styles (USR2, -s reload) finish after the command: give them the pause, then look
    await sleep(P.pauseMs);
    rec.reloaded = server.reloaded();
    reloads.push(rec);
  }
  await sleep(1000);
  const seconds = (wallMs() - t0) / 1000;
  await ask({ type: 'stop', id }, 'done');
  const records = readRecords(out);
  const w: Window = { row, mode, clientSide: P.client, style: server.style, migrateReq, seconds, client: summarise(records, seconds), reloads };
  panels.push({ row, panel: panelOf(w, t0, wallMs(), records) });
  return w;
}

/** The SVG panels of the run so far (the request records stay out of the JSON). */
const panels: Array<{ row: RowName; panel: Panel }> = [];

function panelOf(w: Window, start: number, end: number, records: Panel['records']): Panel {
  const held = meanMax(w.reloads.filter((r) => r.heldMs !== undefined).map((r) => r.heldMs!));
  const prot = w.mode.startsWith('protected');
  return {
    title: `${w.mode}${w.migrateReq ? ' (tcp_migrate_req=1)' : ''}`,
    subtitle:
      `${w.client.requests} requests, ${w.client.failed} failed, p99 ${fmtMs(w.client.p99)}, max ${fmtMs(w.client.max)}; ` +
      `${w.reloads.length} reloads, mean ${fmtMs(meanMax(w.reloads.map((r) => r.durationMs)).mean)}` +
      (prot ? `; held mean ${fmtMs(held.mean)}, max ${fmtMs(held.max)}` : ''),
    windowStart: start,
    windowEnd: end,
    records,
    reloads: w.reloads.map((r) => ({ start: r.start, end: r.start + r.durationMs, heldMs: r.heldMs })),
  };
}

// ------------------------------------------------------------------ report

/** A report count summed over the reloads; `?` when a reload's report could not count it. */
function counted(reloads: readonly ReloadRecord[], k: 'reportRefused' | 'reportReset'): string {
  const v = reloads.filter((r) => r.heldMs !== undefined).map((r) => r[k]);
  return v.some((x) => x === null || x === undefined) ? '?' : String(v.reduce<number>((a, x) => a + (x ?? 0), 0));
}

function report(ws: readonly Window[]): string {
  const header = [
    'row',
    'mode',
    'client',
    'requests',
    'failed',
    'refused',
    'reset',
    'timeout',
    'other',
    'p50',
    'p99',
    'max',
    'reloads',
    'reload mean',
    'held mean/max',
    'max-hold',
    'SYNs held',
    'report refused/reset',
  ];
  const rows = ws.map((w) => {
    const e = w.client.errors;
    const refused = e['connect-refused'] ?? 0;
    const reset = (e['connect-reset'] ?? 0) + (e['read-reset'] ?? 0);
    const timeout = (e['connect-timeout'] ?? 0) + (e['read-timeout'] ?? 0);
    const other = w.client.failed - refused - reset - timeout;
    const ok = w.reloads.filter((r) => r.exitCode === 0 && r.reloaded && !r.error).length;
    const held = meanMax(w.reloads.filter((r) => r.heldMs !== undefined).map((r) => r.heldMs!));
    const syns = w.reloads.reduce((s, r) => s + (r.packetsReleased ?? 0), 0);
    const mh = w.reloads.filter((r) => r.maxHoldReached).length;
    const prot = w.mode.startsWith('protected');
    return [
      w.row,
      w.mode,
      w.clientSide,
      String(w.client.requests),
      String(w.client.failed),
      String(refused),
      String(reset),
      String(timeout),
      String(other),
      fmtMs(w.client.p50),
      fmtMs(w.client.p99),
      fmtMs(w.client.max),
      `${ok}/${w.reloads.length}`,
      fmtMs(meanMax(w.reloads.map((r) => r.durationMs)).mean),
      prot ? `${fmtMs(held.mean)} / ${fmtMs(held.max)}` : '-',
      prot ? String(mh) : '-',
      prot ? String(syns) : '-',
      prot ? `${counted(w.reloads, 'reportRefused')}/${counted(w.reloads, 'reportReset')}` : '-',
    ];
  });
  return table(header, rows);
}

// ------------------------------------------------------------------ main

async function main(): Promise<void> {
  const P = parseArgs(process.argv.slice(2));
  if (P.checkOnly) {
    log(`options valid: ${P.windows.length} window(s), client ${P.client}`);
    return;
  }
  if (process.env.SYNPLUG_IN_VM !== '1' && !P.isolated) {
    throw new Error(
      'bench/matrix runs in the VM (scripts/vm/bench-matrix.sh): it changes lo, nftables and net.ipv4.tcp_migrate_req; --i-am-isolated to run elsewhere',
    );
  }
  for (const b of ['haproxy', 'nginx']) if (!findBin(b)) throw new Error(`${b} is missing (scripts/install-test-deps.sh)`);
  const migrateBefore = readFileSync(MIGRATE, 'utf8').trim();
  const dirRoot = mkdtempSync(join(existsSync('/run') ? '/run' : '/tmp', 'synplug-matrix-'));
  guard = (await import(pathToFileURL(join(ROOT, 'dist/guard/index.js')).href)) as typeof Guard;
  const needHold = P.modes.some((m) => m.startsWith('protected'));
  /** every port the run may use: one per window, 18001 up */
  const ports = Array.from({ length: P.windows.length }, (_, i) => 18001 + i);
  let madeSetup = false;
  let inboundDev: string | undefined;
  if (P.client === 'inbound') {
    topo = await createInboundTopology({ prefix: 'spm', onStep: (l) => log(`topology: ${l}`) });
    ADDR = topo.serverAddr;
    log(`inbound: the servers on ${ADDR} (${topo.serverDev}), the clients in the namespace behind it (${topo.clientDev}, ${topo.clientAddr})`);
    if (needHold) {
      const r = await guard.setup({ inbound: { dev: topo.serverDev, ports, addrs: [ADDR] }, via: P.via });
      inboundDev = topo.serverDev;
      hold = { id: r.hold, via: r.via };
      log(
        `setup --inbound ${inboundDev} --port ${ports[0]}..${ports[ports.length - 1]} --addr ${ADDR}: ${r.hold} (via ${r.via})${r.inbound ? `, IFB ${r.inbound.ifb}` : ''}`,
      );
    }
  } else {
    madeSetup = needHold && (await guard.check()).state !== 'ok';
    if (madeSetup) {
      const r = await guard.setup({ via: P.via });
      hold = { id: r.hold, via: r.via };
      log(`setup: ${r.hold} (via ${r.via})${r.chose ? `: ${r.chose}` : ''}`);
    }
  }
  const windows: Window[] = [];
  skipped.length = 0;
  const started = new Date();
  deadline = started.getTime() + P.budgetSeconds * 1000;
  const servers: Server[] = [];
  const cleanup = () => {
    for (const s of servers) s.stop();
    try {
      setMigrate(Number(migrateBefore));
    } catch {
      /* read-only */
    }
  };
  process.on('SIGINT', () => {
    cleanup();
    // a veth pair left behind dies with the namespace once the client exits
    process.exit(130);
  });
  try {
    await startClient();
    // The watchdog each protect starts is `process.execPath` + `process.execArgv` +
    // dist/cli/bin/watchdog-main.js: without this, it would start under tsx (this
    // process's --import=tsx), 3-4 times slower than the plain node the CLI's bundle
    // uses (about 1.1-1.4 s against 0.35 s on the host; in the loaded VM, starts
    // past protect's 30 s limit were seen). The client above needed tsx; nothing after it does.
    const tsx = process.execArgv.findIndex((a) => a === '--import=tsx' || a === '--import');
    if (tsx >= 0) process.execArgv.splice(tsx, process.execArgv[tsx] === '--import' ? 2 : 1);
    let port = ports[0] - 1;
    for (const [row, mode] of P.windows) {
      {
        if (wallMs() > deadline - 60_000) {
          log(`${row} / ${mode}: skipped, the budget (--budget-seconds ${P.budgetSeconds}) ends`);
          skipped.push(`${row}:${mode}`);
          continue;
        }
        const dir = join(dirRoot, `${row}-${mode}`);
        mkdirSync(dir);
        const server = makeServer(row, dir, ++port);
        servers.push(server);
        log(`${row} / ${mode}: starting (${server.style})`);
        await server.start();
        const w = await window(P, row, mode, server, dirRoot);
        server.stop();
        windows.push(w);
        await writeResults(P, windows, started);
        log(
          `${row} / ${mode}: ${w.client.requests} requests, ${w.client.failed} failed ${JSON.stringify(w.client.errors)}, ${w.reloads.length} reloads (${w.reloads.filter((r) => r.maxHoldReached).length} at max-hold, ${w.reloads.filter((r) => r.error).length} errors)`,
        );
      }
    }
  } finally {
    cleanup();
    client?.send({ type: 'exit' });
    if (madeSetup) await guard.teardown().catch((e: unknown) => log(`teardown: ${String(e)}`));
    if (inboundDev) await guard.teardown({ inbound: inboundDev }).catch((e: unknown) => log(`teardown --inbound ${inboundDev}: ${String(e)}`));
    if (topo) await topo.remove().catch((e: unknown) => log(`removing the topology: ${String(e)}`));
    rmSync(dirRoot, { recursive: true, force: true });
  }
  const file = await writeResults(P, windows, started);
  process.stdout.write(`\n${headline(P, started)}\n\n${report(windows)}\n`);
  log(`wrote ${file}`);
}

function headline(P: Params, started: Date): string {
  const via = hold ? ` via ${hold.via}` : '';
  const side =
    P.client === 'inbound'
      ? `clients in another network namespace over veth ${topo?.serverDev ?? ''} (inbound hold${via})`
      : `clients on lo (local hold${via})`;
  return `reload matrix, ${started.toISOString().slice(0, 10)}, kernel ${osRelease()}, ${P.connections} client loops (new connection per request), ${side}, protected = library protect --wait-listen ${ADDR}:PORT --max-hold ${P.maxHoldMs} ms`;
}

/** Write the JSON (after every window, so that a run cut short keeps what it measured). */
async function writeResults(P: Params, windows: readonly Window[], started: Date): Promise<string> {
  const kernel = osRelease();
  const date = started.toISOString().slice(0, 10);
  mkdirSync(P.out, { recursive: true });
  const file = join(P.out, `matrix-${kernel}-${date}${P.tag ? `-${P.tag}` : ''}.json`);
  versions ??= {
    haproxy: (await run([findBin('haproxy')!, '-v'])).stdout.split('\n')[0],
    nginx: (await run([findBin('nginx')!, '-v'])).stderr.trim(),
  };
  writeFileSync(
    file,
    `${JSON.stringify({ date: started.toISOString(), kernel, params: P, ...versions, ...(hold && { hold }), headline: headline(P, started), topology: topo?.created, skipped, windows, table: report(windows) }, null, 1)}\n`,
  );
  // one SVG per row group: the row's modes as panels
  for (const row of new Set(panels.map((x) => x.row))) {
    const base = file.replace(/\.json$/, '');
    const svgFile = base.endsWith(`-${row}`) ? `${base}.svg` : `${base}-${row}.svg`;
    const first = windows.find((w) => w.row === row)!;
    writeFileSync(
      svgFile,
      renderSvg(
        `${row}: ${first.style}, kernel ${kernel} (${date})`,
        `${P.connections} client loops (a new connection per request, ${P.client === 'inbound' ? `from another namespace over veth to ${ADDR}` : `on lo to ${ADDR}`}); reloads ${P.pauseMs} ms apart; protected = library protect --wait-listen, max-hold ${P.maxHoldMs} ms`,
        panels.filter((x) => x.row === row).map((x) => x.panel),
      ),
    );
  }
  return file;
}
let versions: { haproxy: string; nginx: string } | undefined;
/** windows (`row:mode`) the budget left out */
const skipped: string[] = [];

main().then(
  () => process.exit(0),
  (e: unknown) => {
    if (e instanceof ArgError) {
      log(`error: ${e.message}`);
      process.exit(2);
    }
    log(`error: ${(e as Error)?.stack ?? String(e)}`);
    process.exit(1);
  },
);
