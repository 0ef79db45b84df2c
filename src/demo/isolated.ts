/**
 * `synplug demo` in network namespaces of its own: the caller's namespace is
 * never changed (no address, qdisc, filter, link, nftables table or sysctl),
 * on success, on failure and on SIGINT/SIGTERM.
 *
 * How: {@link runDemoIsolated} creates a new network namespace (no name under
 * /run/netns: it lives as long as a descriptor or a process holds it, see
 * topology.ts's `createNetnsFd`), sets its `lo` up, and starts the demo's
 * own process inside it: the entry point `demo-main`
 * (src/cli/bin/demo-main.ts), which runs {@link runDemo} with `here: true`
 * there, so that the hold, the server, the clients, protect's watchdog and
 * (with `inbound`) the client namespace and the veth pair are all inside.
 * Its records go to a state directory of its own (a new mode-0700 directory,
 * removed at the end), never to the caller's. The protocol over the IPC
 * channel ({@link DemoHostCommand}, {@link DemoHostReply}):
 *
 * - the process sends `{ type: 'ready' }` once loaded;
 * - `{ type: 'run', options }`: run the demo; it answers with
 *   `{ type: 'progress', line }` for each step and ends with
 *   `{ type: 'result', result }` or `{ type: 'error', ... }`;
 * - `{ type: 'stop', by }`: stop (the caller's AbortSignal); a SIGINT or
 *   SIGTERM that reaches the caller is passed on to the process as it is.
 *
 * When the process has exited, the descriptor is closed: the kernel destroys
 * the namespace, with whatever is left in it. A caller killed by SIGKILL
 * leaves the process without its IPC channel: it stops and cleans up as on
 * SIGTERM (its own namespace only).
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NetlinkConnection } from '../netlink/connection.js';
import { SynplugError, UsageError, type ErrorCategory } from '../netlink/errors.js';
import { NETLINK_ROUTE } from '../netlink/message.js';
import { NETNS_ENV, withNetns } from '../netlink/netns.js';
import { setLinkUp } from '../netlink/route/linkinfo.js';
import { CAP_SYS_ADMIN, hasEffectiveCapability, hasNetAdmin, NotPermittedError } from '../guard/support.js';
import { demoEntryPath } from './client-process.js';
import { createNetnsFd } from './topology.js';
import type { DemoOptions, DemoResult } from './types.js';

/** The options that cross to the demo's process (functions and signals stay here). */
export type DemoWireOptions = Omit<DemoOptions, 'onProgress' | 'signal' | 'handleSignals' | 'here'>;

/** A message from the caller to the demo's process. */
export type DemoHostCommand = { type: 'run'; options: DemoWireOptions & { stateDir: string } } | { type: 'stop' };

/** An error as it crosses the IPC channel. */
export interface DemoWireError {
  name: string;
  message: string;
  category: ErrorCategory;
}

/** A message from the demo's process to the caller. */
export type DemoHostReply =
  | { type: 'ready' }
  | { type: 'progress'; line: string }
  | { type: 'result'; result: DemoResult }
  | { type: 'error'; error: DemoWireError };

/** How long the demo's process may take to load (a cold node start in a software-emulated VM takes seconds). */
export const DEMO_PROCESS_START_MS = 60_000;

/**
 * An error that came back over the IPC channel: the same message and
 * category (so the same exit code), and the original class's name.
 */
export class DemoProcessError extends SynplugError {
  /** @param e the error as the demo's process sent it */
  constructor(e: DemoWireError) {
    super(e.message, e.category);
    this.name = e.name;
  }
}

/**
 * An error for the IPC channel.
 * @param e whatever the demo threw
 */
export function toWireError(e: unknown): DemoWireError {
  if (e instanceof SynplugError) return { name: e.name, message: e.message, category: e.category };
  return { name: 'Error', message: `internal error: ${(e as Error)?.stack ?? String(e)}`, category: 'failure' };
}

/**
 * The demo's private state directory, made inside `parent`.
 * @throws {UsageError} `parent` does not exist or is not a directory (`--state-dir`, `SYNPLUG_STATE_DIR`)
 */
function privateStateDir(parent: string): string {
  try {
    return mkdtempSync(join(parent, 'synplug-demo-'));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw e;
    throw new UsageError(
      `state directory ${parent}: no such directory (the demo makes a private state directory inside it, removed at the end): create it, or leave --state-dir and SYNPLUG_STATE_DIR out; nothing was changed`,
    );
  }
}

/**
 * Run the demo in network namespaces of its own (see the module's text).
 * @param options as {@link runDemo}'s (`here` is ignored); `stateDir`: where the demo's private state directory is made (default the system's temporary directory)
 * @param entry the demo process's entry point (default {@link demoEntryPath}`('demo-main')`)
 * @returns the demo's result, with `netns: 'own'`
 * @throws {NotPermittedError} no CAP_NET_ADMIN (`permission`)
 * @throws {SynplugError} no CAP_SYS_ADMIN: the namespace cannot be created (`permission`; `--here` runs in the caller's namespace)
 * @throws {DemoProcessError} whatever the demo threw in its process (same message and category: `missing-module`, `interrupted`...)
 * @throws {SynplugError} the demo's process could not start, or exited without an answer
 */
export async function runDemoIsolated(options: DemoOptions = {}, entry: string = demoEntryPath('demo-main')): Promise<DemoResult> {
  const what = options.inbound ? 'demo --inbound' : 'demo';
  if (!hasNetAdmin()) throw new NotPermittedError(what);
  if (hasEffectiveCapability(CAP_SYS_ADMIN) === false) {
    throw new SynplugError(
      `${what} needs CAP_SYS_ADMIN to create its network namespace (unshare): run it as root (or grant the capability)${options.inbound ? '' : ", or give --here to run it in this namespace (it then sets up a hold on this namespace's lo for the demo's length)"}; nothing was changed`,
      'permission',
    );
  }
  const progress = options.onProgress ?? (() => {});
  const stateDir = privateStateDir(options.stateDir ?? tmpdir());
  let fd: number | undefined;
  let child: ChildProcess | undefined;
  const handled: NodeJS.Signals[] = options.handleSignals === false ? [] : ['SIGINT', 'SIGTERM'];
  /** the first SIGINT or SIGTERM that reached this process: passed on to the demo's process, or (none yet) it is not started */
  let interrupted: NodeJS.Signals | undefined;
  const onSignal = (sig: NodeJS.Signals): void => {
    interrupted ??= sig;
    child?.kill(sig);
  };
  // Before the demo's process runs its own handling (a cold start: it dies of the signal), or before it exists.
  const stoppedEarly = (sig: NodeJS.Signals) =>
    new SynplugError(
      `demo interrupted by ${sig}: it stopped before starting its server and clients (what it had begun went with its network namespace; this one was not changed)`,
      'interrupted',
    );
  // The demo's interruption (DemoInterruptedError, run.ts) names what it stopped and removed; all of that was in its own
  // namespaces, which the caller is told (run with --here, in the caller's namespace, runDemo says no such thing).
  const where = `; all of it was in the demo's own network namespace${options.inbound ? 's' : ''} (this namespace was not changed)`;
  const onAbort = (): void => {
    if (child?.connected) child.send({ type: 'stop' } satisfies DemoHostCommand);
  };
  for (const s of handled) process.on(s, onSignal);
  try {
    fd = createNetnsFd();
    const path = `/proc/${process.pid}/fd/${fd}`;
    const route = NetlinkConnection.open(NETLINK_ROUTE, { netns: path });
    try {
      await setLinkUp(route, 'lo');
    } finally {
      route.close();
    }
    if (interrupted) throw stoppedEarly(interrupted);
    // The caller's SYNPLUG_NETNS would send the guard back out of the demo's namespace.
    const env = { ...process.env };
    delete env[NETNS_ENV];
    const c = withNetns(path, () => spawn(process.execPath, [...process.execArgv, entry], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env }));
    child = c;
    if (options.signal?.aborted) onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const { signal: _s, onProgress: _p, handleSignals: _h, here: _here, stateDir: _d, ...wire } = options;
    return await new Promise<DemoResult>((resolve, reject) => {
      let told = false;
      let answer: { ok: true; result: DemoResult } | { ok: false; error: Error } | undefined;
      const timer = setTimeout(() => {
        answer ??= { ok: false, error: new SynplugError(`the demo's process did not start within ${DEMO_PROCESS_START_MS} ms`) };
        c.kill('SIGKILL');
      }, DEMO_PROCESS_START_MS);
      c.on('message', (m: DemoHostReply) => {
        if (m?.type === 'ready') {
          clearTimeout(timer);
          c.send({ type: 'run', options: { ...wire, stateDir } } satisfies DemoHostCommand);
        } else if (m?.type === 'progress') {
          // said with the first step (its checks passed), so that a refusal stays one line
          if (!told) progress("running in a network namespace of the demo's own (this namespace is not changed)");
          told = true;
          progress(m.line);
        } else if (m?.type === 'result') answer ??= { ok: true, result: { ...m.result, netns: 'own' } };
        else if (m?.type === 'error')
          answer ??= {
            ok: false,
            error: new DemoProcessError(m.error.name === 'DemoInterruptedError' ? { ...m.error, message: `${m.error.message}${where}` } : m.error),
          };
      });
      c.once('error', (e) => {
        answer ??= { ok: false, error: new SynplugError(`the demo's process could not start: ${e.message}`, 'failure', { cause: e }) };
      });
      c.once('exit', (code, sig) => {
        clearTimeout(timer);
        if (!answer && interrupted) reject(stoppedEarly(interrupted));
        else if (!answer) reject(new SynplugError(`the demo's process ${sig ? `was killed by ${sig}` : `exited ${code}`} without an answer`));
        else if (answer.ok) resolve(answer.result);
        else reject(answer.error);
      });
    });
  } finally {
    for (const s of handled) process.off(s, onSignal);
    options.signal?.removeEventListener('abort', onAbort);
    if (fd !== undefined) closeSync(fd);
    rmSync(stateDir, { recursive: true, force: true });
  }
}
