/**
 * A real, idle watchdog process: synplug's watchdog entry point
 * (watchdogEntryPath) started as startWatchdog starts it, never armed. A
 * manual lease lives only while the process it names is one of synplug's
 * watchdogs (watchdog.ts's runsWatchdog), so a test that needs a live manual
 * lease names this one.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { watchdogEntryPath } from '../../src/guard/watchdog.js';
import { processStartTime } from '../../src/guard/state.js';

/** A running watchdog: its pid and start time (as a lease records them), and how to end it. */
export interface IdleWatchdog {
  watchdogPid: number;
  watchdogStart: number;
  /** SIGKILL it and wait for its exit */
  kill(): Promise<void>;
}

/**
 * Start one and wait for its `ready` line (its sockets are open).
 */
export async function idleWatchdog(): Promise<IdleWatchdog> {
  const w = spawn(process.execPath, [...process.execArgv, watchdogEntryPath()], { stdio: ['pipe', 'pipe', 'ignore'] });
  const exited = new Promise((r) => w.once('exit', r));
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: w.stdout! }).once('line', resolve);
    w.once('exit', (code) => reject(new Error(`the watchdog exited at start (status ${code})`)));
  });
  if (line !== 'ready') throw new Error(`the watchdog said '${line}'`);
  return {
    watchdogPid: w.pid!,
    watchdogStart: processStartTime(w.pid!)!,
    kill: async () => {
      w.kill('SIGKILL');
      await exited;
    },
  };
}
