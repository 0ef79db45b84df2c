/**
 * Timing other processes: one process per change (from Node and from a
 * shell loop), and whole runs under GNU time for wall time and peak memory.
 *
 * @module
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, openSync, closeSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GNU_TIME } from './env.js';

/** One command line, with its environment. */
export interface Cmd {
  file: string;
  args: readonly string[];
  env?: NodeJS.ProcessEnv;
}

/**
 * Run `make(i)` n times, each with `spawnSync` from this (warm) Node process,
 * stdout/stderr ignored; returns wall times in milliseconds, each from just
 * before the spawn until the child's exit was seen (what a Node program that
 * shells out pays per change).
 * @throws when a run exits non-zero (the change did not happen)
 */
export function timeSpawns(n: number, make: (i: number) => Cmd): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const c = make(i);
    const t0 = process.hrtime.bigint();
    const r = spawnSync(c.file, c.args, { stdio: ['ignore', 'ignore', 'pipe'], env: c.env });
    const t1 = process.hrtime.bigint();
    if (r.status !== 0)
      throw new Error(
        `${c.file} ${c.args.join(' ')} failed (exit ${r.status}${r.error ? `, ${r.error.message}` : ''}): ${String(r.stderr).trim().slice(0, 300)}`,
      );
    out.push(Number(t1 - t0) / 1e6);
  }
  return out;
}

function shQuote(s: string): string {
  return /^[A-Za-z0-9_./:=,+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * Run the commands from one bash loop (fork+exec from a small process, as a
 * shell script would), timing each with $EPOCHREALTIME (microseconds).
 * Returns wall times in milliseconds.
 * @throws when a run exits non-zero
 */
export function timeShellLoop(cmds: readonly Cmd[], env?: NodeJS.ProcessEnv): number[] {
  const dir = mkdtempSync(join(tmpdir(), 'synplug-bench-'));
  try {
    const lines = ['set -u', 'export LC_ALL=C'];
    for (const c of cmds) {
      lines.push(
        `s=$EPOCHREALTIME; ${[c.file, ...c.args].map(shQuote).join(' ')} >/dev/null 2>"${dir}/err" || { cat "${dir}/err" >&2; exit 1; }; e=$EPOCHREALTIME; echo "$s $e"`,
      );
    }
    const script = join(dir, 'loop.sh');
    writeFileSync(script, lines.join('\n') + '\n');
    const r = spawnSync('/bin/bash', [script], { encoding: 'utf8', env: env ?? process.env, maxBuffer: 64 * 1024 * 1024 });
    if (r.status !== 0) throw new Error(`shell loop failed (exit ${r.status}): ${String(r.stderr).trim().slice(0, 300)}`);
    return r.stdout
      .trim()
      .split('\n')
      .map((l) => {
        const [s, e] = l.split(' ').map(Number);
        return (e - s) * 1000;
      });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One run under GNU time. */
export interface TimedRun {
  /** wall time seen from here, from before the spawn to the exit, in ms (includes GNU time's own exec, well under 1 ms) */
  wallMs: number;
  /** peak resident set of the measured process (GNU time %M, from wait4's rusage), KiB */
  maxRssKiB: number;
  /** user and system CPU of the measured process (%U, %S), seconds (10 ms resolution) */
  userS: number;
  sysS: number;
}

/**
 * Run a command under `/usr/bin/time -f '%e %M %U %S'` with stdout going to
 * `stdoutPath` (default /dev/null).
 * @throws when it exits non-zero
 */
export function timeRun(c: Cmd, stdoutPath = '/dev/null'): TimedRun {
  const dir = mkdtempSync(join(tmpdir(), 'synplug-bench-'));
  const timeOut = join(dir, 'time');
  const fd = openSync(stdoutPath, 'w');
  try {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(GNU_TIME, ['-o', timeOut, '-f', '%e %M %U %S', c.file, ...c.args], { stdio: ['ignore', fd, 'pipe'], env: c.env });
    const t1 = process.hrtime.bigint();
    if (r.status !== 0) throw new Error(`${c.file} ${c.args.join(' ')} failed (exit ${r.status}): ${String(r.stderr).trim().slice(0, 500)}`);
    const f = readFileSync(timeOut, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
    return { wallMs: Number(t1 - t0) / 1e6, maxRssKiB: f[1], userS: f[2], sysS: f[3] };
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
}
