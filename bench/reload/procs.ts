/**
 * Process helpers of the reload bench: finding system binaries, running
 * commands with their wall time, and ending every process the bench started
 * (by pid, never by name).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants as fsConstants, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

/**
 * Absolute path of a system binary. The system folders come first: under
 * `npm run`, node_modules/.bin is on PATH and holds an unrelated `nft`.
 * @returns the path, or null when not found
 */
export function findBin(name: string): string | null {
  const dirs = ['/usr/sbin', '/usr/bin', '/sbin', '/bin', '/usr/local/sbin', '/usr/local/bin', ...(process.env.PATH ?? '').split(':')];
  for (const d of dirs) {
    if (!d || d.includes('node_modules')) continue;
    const p = join(d, name);
    try {
      accessSync(p, fsConstants.X_OK);
      return p;
    } catch {
      /* next */
    }
  }
  return null;
}

/** Result of {@link run}. */
export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** wall clock at spawn and at exit, ms since the epoch */
  start: number;
  end: number;
}

/** Run a command to its end, collecting its output (killed after timeoutMs). */
export function run(argv: readonly string[], timeoutMs = 60_000, env?: NodeJS.ProcessEnv): Promise<RunResult> {
  return new Promise((resolve) => {
    const start = performance.timeOrigin + performance.now();
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], env: env ?? process.env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    // The end is the exit; the output is complete at 'close', which a daemon
    // that keeps our pipes open could delay: wait for it at most 2 s more.
    let end = 0;
    let finished = false;
    const finish = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, start, end: end || performance.timeOrigin + performance.now() });
    };
    child.on('error', (e) => {
      stderr += String(e);
      finish(null, null);
    });
    child.on('exit', (code, signal) => {
      end = performance.timeOrigin + performance.now();
      setTimeout(() => finish(code, signal), 2000).unref();
    });
    child.on('close', (code, signal) => finish(code, signal));
  });
}

/** Run a command synchronously (for cleanup paths); returns its exit status. */
export function runSync(argv: readonly string[]): { code: number | null; out: string } {
  const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

/** Whether a pid is alive (and not a zombie). */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Block for ms (cleanup paths only). */
export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Sleep for ms. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** SIGTERM these pids, wait up to graceMs, then SIGKILL the survivors. Synchronous. */
export function killPids(pids: Iterable<number>, graceMs = 3000): void {
  const list = [...new Set(pids)].filter((p) => p > 1 && p !== process.pid && alive(p));
  for (const p of list) {
    try {
      process.kill(p, 'SIGTERM');
    } catch {
      /* gone */
    }
  }
  const until = Date.now() + graceMs;
  while (list.some(alive) && Date.now() < until) sleepSync(50);
  for (const p of list) {
    if (!alive(p)) continue;
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
}

/** Pids whose command line contains `needle` (the bench's unique temp folder). */
export function pidsWithArg(needle: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const pid = Number(d);
    if (pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(needle)) out.push(pid);
    } catch {
      /* gone */
    }
  }
  return out;
}

/** Direct children of a pid (from /proc/<pid>/stat's ppid field). */
export function childrenOf(ppid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === ppid) out.push(Number(d));
    } catch {
      /* gone */
    }
  }
  return out;
}

/** Wait for a child's exit (resolves at once when it has already exited). */
export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((r) => child.once('exit', () => r()));
}
