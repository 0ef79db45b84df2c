/**
 * The parent side of the watchdog: start it (the process entry point
 * src/cli/bin/watchdog-main.ts, around watchdog-child.ts), hand it the
 * pre-encoded release messages, tell it when we are done.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { netnsForChild } from '../netlink/netns.js';
import { fileURLToPath } from 'node:url';
import { basename, dirname, extname, join } from 'node:path';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Writable } from 'node:stream';
import { SynplugError } from '../netlink/errors.js';
import { pinnedStateDir } from './state-fs.js';
import { NETLINK_ROUTE } from '../netlink/message.js';
import type { RequestInit } from '../netlink/connection.js';
import { listQdiscs, type TcConnection } from '../tc/index.js';

/**
 * How long after `protect`'s own max-hold deadline its watchdog acts, in ms.
 * `protect` releases at the deadline itself; the watchdog is the backstop for
 * a `protect` that died or hangs. Its timer runs in another process, so with a
 * margin of a few ms a busy machine lets both fire and both release. New SYNs
 * stop being marked at the deadline anyway (the nftables element's timeout),
 * so the margin only delays the release of those already held by a stuck
 * `protect`.
 */
export const WATCHDOG_GRACE_MS = 250;

/** One step of the watchdog's release: a netlink exchange it sends on a socket of its own. */
export interface WatchdogStep {
  /** what it does, for messages */
  what: string;
  /** `release` lets held packets go; `disarm` turns a kernel-side deadline off (default: release on NETLINK_ROUTE, else disarm) */
  phase?: 'release' | 'disarm';
  /** netlink protocol */
  protocol: number;
  /** messages of one datagram; payload hex-encoded */
  messages: Array<{ type: number; flags: number; payload: string }>;
  /** errnos that count as success (e.g. ENOENT: already gone) */
  ignoreErrno?: number[];
  /**
   * Send it only once no netfilter queue of the namespace holds a packet,
   * waiting up to this many ms (polled every 20 ms; the queue's holder
   * releases when protect's death ends its lease), else skip it and say so.
   * For a base chain's removal: unregistering any netfilter hook drops every
   * packet queued in the namespace (measured on 6.18: a SYN held by synplug's
   * queue was dropped when an unrelated table's base chain was deleted).
   */
  whenNothingQueuedMs?: number;
  /** with {@link whenNothingQueuedMs}: and only once this queue number is bound by nobody (a hold of another state directory may hold through the same chain) */
  whenQueueUnbound?: number;
  /**
   * A queue hold's release (no messages): ask the holder of this queue
   * number, in the arm's state directory, to release; one that cannot
   * answer (stopped, hung) is killed (leases-holder.ts releaseThroughHolder).
   */
  queueHolder?: number;
}

/**
 * Wait until no qdisc of a device queues a packet (every qdisc's qlen 0, as
 * RTM_GETQDISC's stats say), polling every 20 ms (sleeping), for at most `ms`.
 * @param ifindex the device's index
 * @returns whether every qdisc was empty within `ms` (a device without qdiscs is)
 * @throws {NetlinkError} the listing was refused (ENODEV: the device is gone)
 */
export async function qdiscsEmptyWithin(conn: TcConnection, ifindex: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    if ((await listQdiscs(conn, { ifindex })).every((q) => (q.qlen ?? 0) === 0)) return true;
    if (Date.now() >= until) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A message as the watchdog takes it: type, flags, payload in hex. */
export function hexMessage(m: RequestInit): { type: number; flags: number; payload: string } {
  return {
    type: m.type,
    flags: m.flags ?? 0,
    payload: (Buffer.isBuffer(m.payload) ? m.payload : Buffer.concat((m.payload ?? []) as Buffer[])).toString('hex'),
  };
}

/** Whether a step releases (rather than disarms). */
export function isReleaseStep(st: WatchdogStep): boolean {
  return st.phase !== undefined ? st.phase === 'release' : st.protocol === NETLINK_ROUTE;
}

/** What `arm` tells the watchdog. */
export interface WatchdogArm {
  op: 'arm';
  ownerPid: number;
  stateDir: string;
  /** ms since the epoch: release then, even if the owner lives */
  deadline: number;
  release: WatchdogStep[];
  /** the owner's lease: the watchdog drops it, and releases only when no other live lease remains */
  leaseId?: string;
  /**
   * The state directory's identity the owner pinned (state-fs.ts's `pinnedStateDir`; `arm` adds it): the watchdog
   * pins it, and refuses the path when it comes to name another directory.
   */
  stateDirId?: string;
  /** the local hold's device (for plug.json) */
  dev?: string;
  /**
   * The owner exits at once and is not watched (a manual `synplug plug`):
   * the end of its input is not its death, and the watchdog acts only at the
   * deadline (or on SIGTERM). Default false: the end of input acts at once.
   */
  untilDeadline?: boolean;
}

/** A running watchdog. */
export interface Watchdog {
  pid: number;
  /** Arm it: from now on, the owner's death or the deadline makes it release. */
  arm(a: Omit<WatchdogArm, 'op'>): void;
  /** We released (or never plugged): it exits without acting. Idempotent. */
  done(): void;
  /**
   * Leave it to act alone (armed with `untilDeadline`): our side of its
   * input is closed without `done`, and this process may exit.
   */
  handOver(): void;
}

/** The watchdog entry point's file name without its extension. */
const WATCHDOG_MAIN = 'watchdog-main';

/**
 * The file {@link startWatchdog} runs with `node`: the entry point
 * src/cli/bin/watchdog-main.ts (tsx), dist/cli/bin/watchdog-main.js (tsc),
 * dist/cjs/cli/bin/watchdog-main.js (the CommonJS library), or, when this
 * code runs inside the CLI bundle (a `.cjs` file in dist/bundle/,
 * scripts/bundle.mjs), the bundled dist/bundle/watchdog-main.cjs next to it.
 * A path, not an import: the guard spawns the CLI layer's entry point, it
 * does not depend on it.
 * @param self this module's own file (the default), or another place it is built to
 * @returns an absolute path; it is not checked for existence
 */
export function watchdogEntryPath(self: string = fileURLToPath(import.meta.url)): string {
  const ext = extname(self);
  if (ext === '.cjs') return join(dirname(self), `${WATCHDOG_MAIN}${ext}`);
  return join(dirname(self), '..', 'cli', 'bin', `${WATCHDOG_MAIN}${ext}`);
}

/**
 * Whether process `pid` is one of synplug's watchdogs (a manual plug's lease
 * lives only while its watchdog does, state.ts's manualHolderAlive). A record
 * names the pid and its start time; anyone who writes one could name any live
 * process, so the process itself must prove it is a watchdog:
 * - its command line (/proc/PID/cmdline) ends with a watchdog entry point, the
 *   script {@link startWatchdog} runs: its last argument's file name is
 *   `watchdog-main` with the extension of one of its builds (`.ts`, `.js`,
 *   `.cjs`; any synplug installation's, so that a command of the CLI bundle
 *   judges a library's plug alike), with nothing after it (the queue's holder
 *   runs the same file with its own argument after it, and is no watchdog);
 * - its argv[0] is a node executable (file name `node` or `nodejs`, maybe
 *   followed by a version: `node20`);
 * - it runs as root or as this process's effective user (/proc/PID/status
 *   `Uid:`, the effective one): another user's process is never taken for
 *   ours.
 * A process that cannot be read (gone, or /proc hides it) is none. The watchdogs of
 * the tests' seam ({@link setWatchdogStarter}) run in this process: while one is installed, this process is one.
 */
export function runsWatchdog(pid: number): boolean {
  if (starter !== undefined && pid === process.pid) return true;
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (argv[argv.length - 1] === '') argv.pop();
    if (argv.length < 2 || !/^node(js)?[0-9.]*$/.test(basename(argv[0]))) return false;
    if (!WATCHDOG_SCRIPT.test(basename(argv[argv.length - 1]))) return false;
    const uid = /^Uid:\s+\d+\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    const euid = uid ? Number(uid[1]) : undefined;
    return euid !== undefined && (euid === 0 || euid === process.geteuid?.());
  } catch {
    return false;
  }
}

/** The file name of a watchdog entry point ({@link watchdogEntryPath}), of any build. */
const WATCHDOG_SCRIPT = new RegExp(`^${WATCHDOG_MAIN}\\.(ts|js|cjs)$`);

/** What starts a watchdog instead of a process of its own ({@link setWatchdogStarter}); {@link startWatchdog}'s parameters. */
export type WatchdogStarter = (timeoutMs: number, reports: 'inherit' | 'ignore') => Promise<Watchdog>;

let starter: WatchdogStarter | undefined;

/**
 * Start every later watchdog of this process with `s` instead of a process
 * of its own (undefined: processes again). Internal, for tests: the fault
 * campaign (test/unit/guard-faults-kernel.test.ts) runs the watchdog's own logic
 * (watchdog-child.ts) in its process, on its kernel double.
 */
export function setWatchdogStarter(s: WatchdogStarter | undefined): void {
  starter = s;
}

/**
 * Start the watchdog and wait until its sockets are open.
 * @param timeoutMs how long to wait for `ready` (a cold node start in a slow VM takes seconds)
 * @param reports where its reports go: `inherit` (this process's stderr; protect) or `ignore` (a manual plug's
 *   watchdog, which outlives plug: holding plug's stderr open would keep a caller reading it, `$(synplug plug 2>&1)`,
 *   waiting until the deadline; its outcome is in plug.json)
 * @throws {SynplugError} it failed to start or to open its sockets (category `failure`)
 */
export function startWatchdog(timeoutMs = 30_000, reports: 'inherit' | 'ignore' = 'inherit'): Promise<Watchdog> {
  if (starter) return starter(timeoutMs, reports);
  const entry = watchdogEntryPath();
  // The watchdog's sockets must be made in the namespace the caller's are
  // (the CLI's --netns): it inherits that namespace's descriptor (never its path) and reads it from the environment.
  const ns = netnsForChild(3);
  const child: ChildProcess = spawn(process.execPath, [...process.execArgv, entry], {
    env: ns === undefined ? process.env : { ...process.env, ...ns.env },
    stdio: ['pipe', 'pipe', reports, ...(ns ? [ns.fd] : [])],
    detached: true,
  });
  child.unref();
  const stdin = child.stdin as Writable;
  stdin.on('error', () => {});
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new SynplugError(`the watchdog did not start within ${timeoutMs} ms; nothing was plugged`));
    }, timeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(new SynplugError(`cannot start the watchdog: ${e.message}; nothing was plugged`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new SynplugError(`the watchdog exited at start (status ${code}); nothing was plugged`));
    });
    const rl = createInterface({ input: child.stdout! });
    rl.once('line', (line) => {
      clearTimeout(timer);
      child.removeAllListeners('exit');
      if (line !== 'ready') {
        reject(new SynplugError(`the watchdog said '${line}' instead of ready`));
        return;
      }
      rl.close();
      (child.stdout as unknown as { unref?: () => void; destroy: () => void }).destroy();
      resolve({
        pid: child.pid!,
        arm: (a) => {
          stdin.write(JSON.stringify({ op: 'arm', stateDirId: pinnedStateDir(a.stateDir), ...a }) + '\n');
        },
        done: () => {
          if (!stdin.writableEnded) stdin.end(JSON.stringify({ op: 'done' }) + '\n');
        },
        handOver: () => {
          if (!stdin.writableEnded) stdin.end();
        },
      });
    });
  });
}
