/**
 * Helpers for the guard's kernel tests (test/kernel/guard-*.test.ts), which
 * run inside the qemu VM (scripts/vm/run.sh) as root, on the VM's own `lo`.
 *
 * - `lockLo`: the three guard files share `lo`, 169.254.255.254 and
 *   /run/synplug, and ava runs test files in parallel processes; a lock
 *   directory on the VM's /run (a fresh tmpfs each boot) makes them take turns.
 * - `resetLo`: a torn-down start (the library's teardown, then whatever a
 *   failed test may have left, removed with tc/nft/ip).
 * - oracles: `tc`, `nft` and `ip` binaries, run asynchronously so that the
 *   test process's event loop keeps recording connection events meanwhile.
 * - `probe`: a TCP connection whose 'connect' time, data and error are kept.
 * - `setupWithProxy`, `startProtect`: the start most protect tests share (the
 *   guard set up with a proxy on 169.254.255.254; `synplug protect` running a
 *   gated command, its plug buffering).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ExecutionContext, TestFn } from 'ava';
import { setup, teardown } from '../../src/guard/index.js';

export { sleep };

/** The guard's default address. */
export const ADDR = '169.254.255.254';
/** The guard's default state directory. */
export const STATE_DIR = '/run/synplug';
/** The repository root. */
export const REPO = fileURLToPath(new URL('../..', import.meta.url));
/** The built CLI bundle (`npm run build` on the host; scripts/vm/test-kernel.sh does it). */
export const CLI = join(REPO, 'dist/bundle/synplug.cjs');
/** Generous per-test timeout: the VM is software-emulated and shared. */
export const TEST_TIMEOUT = 300_000;
/** Bound of every wait for something that must happen (never a speed assertion). */
export const WAIT_MS = 90_000;

/** Fail (never skip) outside the VM: these tests rebuild `lo`'s qdiscs and nftables state. */
export function requireVm(): void {
  if (process.env.SYNPLUG_IN_VM !== '1') {
    throw new Error('test/kernel/guard-*.test.ts rebuild lo; run them in the VM: bash scripts/vm/run.sh -- npx ava test/kernel/<file>');
  }
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run 'npm run build' on the host first`);
}

// ------------------------------------------------------------------ processes

/** How a process ended. */
export interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Date.now() when its exit was seen */
  exitedAt: number;
}

/** A process started in the background. */
export interface Started {
  child: ChildProcess;
  done: Promise<Ran>;
  /** set once it exited */
  ended?: Ran;
}

/** Start a process (stdin closed, output collected). */
export function start(file: string, args: readonly string[], opts: { detached?: boolean; env?: NodeJS.ProcessEnv } = {}): Started {
  const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: opts.detached ?? false, env: opts.env ?? process.env, cwd: REPO });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const s: Started = {
    child,
    done: new Promise<Ran>((resolve) => {
      child.once('error', (e) => {
        s.ended = { code: null, signal: null, stdout, stderr: stderr + String(e), exitedAt: Date.now() };
        resolve(s.ended);
      });
      // Resolve at 'close' (the pipes drained), or soon after 'exit' when a
      // process that outlives it holds the pipes (the protected command or
      // the watchdog, after synplug was killed).
      child.once('exit', (code, signal) => {
        const exitedAt = Date.now();
        const finish = () => {
          s.ended ??= { code, signal, stdout, stderr, exitedAt };
          resolve(s.ended);
        };
        child.once('close', finish);
        setTimeout(finish, 3000).unref();
      });
    }),
  };
  return s;
}

/**
 * The reference tools by absolute path: under `npm test`, node_modules/.bin
 * comes first on PATH and holds an unrelated `nft` (@vercel/nft).
 */
const TOOLS: Record<string, string> = { nft: '/usr/sbin/nft', tc: '/usr/sbin/tc', ip: '/usr/sbin/ip' };

/** Run a process to its end; never throws on a non-zero status. */
export function run(file: string, args: readonly string[]): Promise<Ran> {
  return start(TOOLS[file] ?? file, args).done;
}

/** Run an oracle tool; throws with its stderr on a non-zero status. */
export async function tool(file: string, args: readonly string[]): Promise<string> {
  const r = await run(file, args);
  if (r.code !== 0) throw new Error(`${file} ${args.join(' ')} exited ${r.code ?? r.signal}: ${r.stderr.trim()}`);
  return r.stdout;
}

/** Start the built CLI, as installed (package.json bin): `node dist/bundle/synplug.cjs ARGS`. */
export function startCli(args: readonly string[], opts: { detached?: boolean } = {}): Started {
  return start(process.execPath, [CLI, ...args], opts);
}

/** Run the built CLI to its end. */
export function cli(args: readonly string[]): Promise<Ran> {
  return startCli(args).done;
}

/**
 * Whether a process runs: it exists and is not a zombie (in the VM, orphans
 * are re-parented to an init that may not reap them).
 */
export function alive(pid: number | undefined): boolean {
  if (!pid) return false;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return false;
  }
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && state !== 'X';
}

/** Send a signal, ignoring a process that is already gone. */
export function kill(pid: number | undefined, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (!pid) return;
  try {
    process.kill(pid, signal);
  } catch {
    /* gone */
  }
}

/**
 * Poll `cond` every 50 ms until it holds; throw naming `what` after `ms`.
 * `abort` (e.g. "the protect process already exited") fails the wait at once.
 */
export async function waitFor(cond: () => boolean, what: string, opts: { ms?: number; abort?: () => string | undefined } = {}): Promise<void> {
  const until = Date.now() + (opts.ms ?? WAIT_MS);
  for (;;) {
    if (cond()) return;
    const why = opts.abort?.();
    if (why) throw new Error(`gave up waiting for ${what}: ${why}`);
    if (Date.now() > until) throw new Error(`gave up waiting for ${what} after ${opts.ms ?? WAIT_MS} ms`);
    await sleep(50);
  }
}

/** Resolve with `p`, or reject naming `what` after `ms`. */
export async function within<T>(p: Promise<T>, what: string, ms = WAIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`gave up waiting for ${what} after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/** A scratch directory for gate files, removed by the test's teardown. */
export function scratch(t: ExecutionContext): string {
  const dir = mkdtempSync('/run/synplug-test-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * A command for protect that writes its pid (the gate shell execs `sh`,
 * so that is the command's own pid) to `started` once it runs, then waits
 * until the file `go` exists, then runs `after` (shell text) and exits.
 */
export function gatedCommand(started: string, go: string, after = ''): string[] {
  return ['sh', '-c', `echo $$ > ${started}; while [ ! -e ${go} ]; do sleep 0.05; done; ${after}`];
}

/** Let a {@link gatedCommand} finish (create its `go` file; a removed scratch directory is fine). */
export function openGate(go: string): void {
  try {
    writeFileSync(go, '');
  } catch {
    /* already gone */
  }
}

/** The pid written by {@link gatedCommand}, once the file is complete. */
export function startedPid(file: string): number | undefined {
  if (!existsSync(file)) return undefined;
  const text = readFileSync(file, 'utf8');
  return text.endsWith('\n') ? Number(text.trim()) : undefined;
}

/** The files of a {@link gatedCommand}, in a {@link scratch} directory. */
export interface Gate {
  dir: string;
  /** where the command writes its pid once it runs */
  started: string;
  /** the file whose creation lets the command finish ({@link openGate}) */
  go: string;
}

/** A {@link Gate} in a fresh scratch directory (removed by the test's teardown). */
export function gate(t: ExecutionContext): Gate {
  const dir = scratch(t);
  return { dir, started: join(dir, 'started'), go: join(dir, 'go') };
}

/**
 * Start the CLI's `synplug protect FLAGS -- <a gated command>` and wait until
 * the command runs (protect exiting first fails the wait at once). Asserts that
 * plug.json then records a buffering plug owned by this protect process, and
 * returns the process, that record and the gate. The test's teardown kills
 * protect (its whole process group when `detached`), opens the gate, and kills
 * the command should it still run (when only synplug was killed).
 */
export async function startProtect(
  t: ExecutionContext,
  flags: readonly string[],
  opts: { detached?: boolean } = {},
): Promise<{ p: Started; rec: PlugJson; gate: Gate }> {
  const g = gate(t);
  const p = startCli(['protect', ...flags, '--', ...gatedCommand(g.started, g.go)], opts);
  t.teardown(() => {
    kill(opts.detached ? -p.child.pid! : p.child.pid);
    openGate(g.go);
    kill(startedPid(g.started));
  });
  await waitFor(() => startedPid(g.started) !== undefined, 'the protected command to start', {
    abort: () => p.ended && `protect exited ${p.ended.code}: ${p.ended.stderr}`,
  });
  const rec = readPlugJson()!;
  t.like(rec, { state: 'buffering', owner: 'protect', pid: p.child.pid });
  return { p, rec, gate: g };
}

// ------------------------------------------------------------------ lock and reset

const LOCK = '/run/synplug-guard-tests.lock';

/**
 * Take the cross-file lock on `lo` (a directory holding the owner's pid); a
 * lock whose owner died is taken over. Resolves with the function that frees it.
 */
export async function lockLo(): Promise<() => void> {
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), `${process.pid}\n`);
      return () => rmSync(LOCK, { recursive: true, force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    let owner: number | undefined;
    try {
      const text = readFileSync(join(LOCK, 'pid'), 'utf8');
      if (text.endsWith('\n')) owner = Number(text.trim());
    } catch {
      /* being written or removed */
    }
    if (owner !== undefined && !alive(owner)) rmSync(LOCK, { recursive: true, force: true });
    else await sleep(250);
  }
}

/**
 * Start from a torn-down `lo`: the library's teardown, then (for what a failed
 * test, a foreign qdisc or a hand-made table left) `tc qdisc del root`,
 * `nft delete table ip synplug`, `ip addr del`, and the state files.
 */
export async function resetLo(): Promise<void> {
  try {
    await teardown();
  } catch {
    /* the shell below removes what is left */
  }
  await run('sh', ['-c', `tc qdisc del dev lo root 2>/dev/null; nft delete table ip synplug 2>/dev/null; ip addr del ${ADDR}/32 dev lo 2>/dev/null; true`]);
  rmSync(STATE_DIR, { recursive: true, force: true });
}

// ------------------------------------------------------------------ oracles

/** One entry of `tc -j -s qdisc show`. */
export interface TcQdisc {
  kind: string;
  handle: string;
  parent?: string;
  root?: boolean;
  options?: Record<string, unknown>;
  bytes?: number;
  packets?: number;
  drops?: number;
  qlen?: number;
  backlog?: number;
  [k: string]: unknown;
}

/** `tc -j -s qdisc show dev lo`. */
export async function qdiscs(): Promise<TcQdisc[]> {
  return JSON.parse(await tool('tc', ['-j', '-s', 'qdisc', 'show', 'dev', 'lo'])) as TcQdisc[];
}

const COUNTERS = ['bytes', 'packets', 'drops', 'overlimits', 'requeues', 'backlog', 'qlen'];

const major = (handle: unknown): number => parseInt(String(handle).split(':')[0] || '0', 16);

/** `tc -j -s qdisc show dev lo` without the counters, sorted by handle (major, as a number). */
export async function qdiscsWithoutCounters(): Promise<Array<Record<string, unknown>>> {
  return (await qdiscs())
    .map((q) => Object.fromEntries(Object.entries(q).filter(([k]) => !COUNTERS.includes(k))))
    .sort((a, b) => major(a.handle) - major(b.handle));
}

/** The plug qdisc 40:'s counters (tc -s), or undefined when there is none. */
export async function plugCounters(): Promise<{ packets: number; qlen: number; drops: number } | undefined> {
  const q = (await qdiscs()).find((x) => x.kind === 'plug' && x.handle === '40:');
  return q && { packets: q.packets ?? 0, qlen: q.qlen ?? 0, drops: q.drops ?? 0 };
}

/**
 * `tc -j filter show dev lo`, as text: iproute2 6.1 prints fw's options as
 * `"options":{handle 0x1 classid 1:4 }`, which is not JSON.
 */
export function filtersJsonText(): Promise<string> {
  return tool('tc', ['-j', 'filter', 'show', 'dev', 'lo']);
}

/** `tc filter show dev lo` (text). */
export function filtersText(): Promise<string> {
  return tool('tc', ['filter', 'show', 'dev', 'lo']);
}

/** `nft -j list table ip synplug`, without the metainfo; undefined when the table does not exist. */
export async function nftTable(): Promise<unknown[] | undefined> {
  const r = await run('nft', ['-j', 'list', 'table', 'ip', 'synplug']);
  if (r.code !== 0) return undefined;
  const items = (JSON.parse(r.stdout) as { nftables: Array<Record<string, unknown>> }).nftables;
  return items.filter((i) => !('metainfo' in i));
}

/** Names of the nftables tables, as `FAMILY NAME`. */
export async function nftTables(): Promise<string[]> {
  const items = (JSON.parse(await tool('nft', ['-j', 'list', 'tables'])) as { nftables: Array<{ table?: { family: string; name: string } }> }).nftables;
  return items.flatMap((i) => (i.table ? [`${i.table.family} ${i.table.name}`] : []));
}

/** The elements of set synplug_active (`nft -j list set`), as addresses. */
export async function activeElements(): Promise<string[]> {
  const out = JSON.parse(await tool('nft', ['-j', 'list', 'set', 'ip', 'synplug', 'synplug_active'])) as { nftables: Array<{ set?: { elem?: unknown[] } }> };
  const elems = out.nftables.find((i) => i.set)?.set?.elem ?? [];
  return elems.map((e) => (typeof e === 'string' ? e : String((e as { elem?: { val?: unknown } }).elem?.val ?? JSON.stringify(e))));
}

/** The IPv4 addresses on lo (`ip -j addr show dev lo`). */
export async function loAddresses(): Promise<string[]> {
  const links = JSON.parse(await tool('ip', ['-j', '-4', 'addr', 'show', 'dev', 'lo'])) as Array<{ addr_info: Array<{ local: string; prefixlen: number }> }>;
  return links.flatMap((l) => l.addr_info.map((a) => `${a.local}/${a.prefixlen}`));
}

/**
 * Assert what teardown must leave: lo's default root qdisc only (noqueue),
 * no filter, no `ip synplug` table, no 169.254.255.254.
 */
export async function assertLoClean(t: ExecutionContext, when: string): Promise<void> {
  const q = await qdiscs();
  t.deepEqual(
    q.map((x) => ({ kind: x.kind, handle: x.handle, root: x.root })),
    [{ kind: 'noqueue', handle: '0:', root: true }],
    `${when}: lo has only its default qdisc`,
  );
  t.is((await filtersText()).trim(), '', `${when}: no filter on lo`);
  t.false((await nftTables()).includes('ip synplug'), `${when}: no table ip synplug`);
  t.false(
    (await loAddresses()).some((a) => a.startsWith(`${ADDR}/`)),
    `${when}: ${ADDR} is not on lo`,
  );
}

// ------------------------------------------------------------------ plug.json

/** The recorded plug state (what /run/synplug/plug.json holds). */
export interface PlugJson {
  state: 'buffering' | 'released';
  owner: string;
  pid: number;
  watchdogPid?: number;
  since: number;
  deadline: number;
  releasedAt?: number;
}

/** /run/synplug/plug.json, or undefined. */
export function readPlugJson(): PlugJson | undefined {
  try {
    return JSON.parse(readFileSync(join(STATE_DIR, 'plug.json'), 'utf8')) as PlugJson;
  } catch {
    return undefined;
  }
}

// ------------------------------------------------------------------ TCP

/** A server that writes `reply` to each connection and closes it. */
export interface Server {
  server: net.Server;
  port: number;
  close(): Promise<void>;
}

/** Listen on host:port (port 0: any free port). */
export async function serve(host: string, reply: string, port = 0): Promise<Server> {
  const server = net.createServer((sock) => {
    sock.on('error', () => {});
    sock.end(reply);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => resolve());
  });
  let closed: Promise<void> | undefined;
  return {
    server,
    port: (server.address() as net.AddressInfo).port,
    close: () => (closed ??= new Promise<void>((resolve) => server.close(() => resolve()))),
  };
}

/**
 * The guard set up (the library's `setup()`), and a proxy on 169.254.255.254
 * that answers "proxy" (closed by the test's teardown).
 */
export async function setupWithProxy(t: ExecutionContext): Promise<Server> {
  await setup();
  const proxy = await serve(ADDR, 'proxy');
  t.teardown(() => proxy.close());
  return proxy;
}

/** A client connection under observation. */
export interface Probe {
  socket: net.Socket;
  /** Date.now() when the connection was made */
  sentAt: number;
  /** Date.now() at 'connect' */
  connectedAt?: number;
  error?: Error;
  /** resolves with connectedAt; rejects on an error */
  connected: Promise<number>;
  /** resolves with everything read once the server closed */
  data: Promise<string>;
}

/** Connect to host:port (from `localAddress` when given) and record what happens. */
export function probe(host: string, port: number, localAddress?: string): Probe {
  const socket = net.connect({ host, port, ...(localAddress && { localAddress }) });
  let text = '';
  const p = { socket, sentAt: Date.now() } as Probe;
  p.connected = new Promise<number>((resolve, reject) => {
    socket.once('connect', () => {
      p.connectedAt = Date.now();
      resolve(p.connectedAt);
    });
    socket.once('error', (e) => {
      p.error = e;
      reject(e);
    });
  });
  p.data = new Promise<string>((resolve, reject) => {
    socket.on('data', (d) => {
      text += d.toString();
    });
    socket.once('end', () => resolve(text));
    socket.once('error', reject);
  });
  p.connected.catch(() => {});
  p.data.catch(() => {});
  return p;
}

/** lo's qdisc tree as setup makes it (it stays between holds: a root qdisc's change drops what lo sends meanwhile). */
export const LO_TREE = ['prio 1:', 'pfifo 10:', 'pfifo 20:', 'pfifo 30:', 'plug 40:'];

/**
 * The local hold's pieces on lo now, as the oracles print them: the qdiscs
 * of lo other than its default, its filters, and the chains of table ip
 * synplug (the marking chain).
 */
export async function armedOnLo(): Promise<{ qdiscs: string[]; filters: string; chains: string[] }> {
  const q = (await qdiscs())
    .filter((x) => !(x.kind === 'noqueue' && x.root))
    .sort((a, b) => major(a.handle) - major(b.handle))
    .map((x) => `${x.kind} ${x.handle}`);
  const chains = ((await nftTable()) ?? []).flatMap((i) => {
    const c = (i as { chain?: { name: string } }).chain;
    return c ? [c.name] : [];
  });
  return { qdiscs: q, filters: (await filtersText()).trim(), chains };
}

/**
 * Assert the local hold is set up and not armed: setup's qdisc tree on lo
 * (the prio root, its pfifo bands, the plug), and nothing that steers a
 * packet into the plug's band: no fw filter, no chain in table ip synplug
 * (which, with its set, stays between holds).
 */
export async function assertUnarmed(t: ExecutionContext, when: string): Promise<void> {
  t.deepEqual(await armedOnLo(), { qdiscs: LO_TREE, filters: '', chains: [] }, `${when}: setup's tree, and nothing steering into its plug`);
}

/**
 * Assert the local hold's armed pieces are all there (during a hold), on
 * setup's tree: the fw filter and the marking chain.
 */
export async function assertArmed(t: ExecutionContext, when: string): Promise<void> {
  const a = await armedOnLo();
  t.deepEqual(a.qdiscs, LO_TREE, `${when}: setup's prio tree with the plug (found ${JSON.stringify(a)})`);
  t.regex(a.filters, /fw.*handle 0x1 classid 1:4/s, `${when}: the fw filter`);
  t.deepEqual(a.chains, ['output'], `${when}: the marking chain`);
}

/**
 * Prove the hold is over (the kernel cannot be asked whether a plug is
 * released): nothing steers into the plug any more (the fw filter and the
 * marking chain exist only around a hold, and are removed after the last
 * release), the plug queues nothing, and a connection from 169.254.255.254
 * completes.
 */
export async function assertPlugReleased(t: ExecutionContext, port: number, when: string): Promise<void> {
  await assertUnarmed(t, when);
  t.is((await qdiscs()).find((q) => q.kind === 'plug')?.qlen ?? 0, 0, `${when}: the plug queues nothing`);
  const p = probe(ADDR, port, ADDR);
  await within(p.connected, `${when}: a connection from ${ADDR}`);
  p.socket.destroy();
}

/**
 * The hooks every guard kernel test file needs: fail (never skip) outside the
 * VM, take the `lo` lock for the whole file, and start each test, and end the
 * file, from a torn-down `lo`.
 */
export function useGuardVm(test: TestFn): void {
  let unlock: (() => void) | undefined;
  test.before(async () => {
    requireVm();
    unlock = await lockLo();
  });
  test.after.always(async () => {
    try {
      await resetLo();
    } finally {
      unlock?.();
    }
  });
  test.beforeEach(async () => {
    await resetLo();
  });
}
