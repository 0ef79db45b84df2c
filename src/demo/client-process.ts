/**
 * The demo's clients in another process: {@link ClientProcess} starts the
 * entry point `demo-client-main` ({@link demoClientEntryPath}) inside the
 * inbound topology's namespace, and runs each phase's client loops there over
 * the IPC channel (see client-child.ts for the messages).
 *
 * @module
 */
import type { ChildProcess } from 'node:child_process';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SynplugError } from '../netlink/errors.js';
import type { InboundTopology } from './topology.js';
import type { RequestRecord } from './types.js';

/** How long the client process may take to load (a cold node start in a software-emulated VM takes seconds). */
export const CLIENT_START_MS = 60_000;

/**
 * The file of one of the demo's process entry points, which it runs with
 * `node`: src/cli/bin/NAME.ts (tsx), dist/cli/bin/NAME.js (tsc),
 * dist/cjs/cli/bin/NAME.js (the CommonJS library), and, when this code runs
 * inside the CLI bundle (a `.cjs` file in dist/bundle/, scripts/bundle.mjs),
 * dist/cjs/cli/bin/NAME.js too: the demo's processes run on the package's
 * one build of the library, never a second bundle. A path, not an import: the
 * demo spawns the CLI layer's entry points, it does not depend on them.
 * @param name `demo-client-main` (the clients, {@link ClientProcess}) or `demo-main` (the demo in its own namespace, isolated.ts)
 * @param self this module's own file (the default), or another place it is built to
 * @returns an absolute path; it is not checked for existence
 */
export function demoEntryPath(name: 'demo-client-main' | 'demo-main', self: string = fileURLToPath(import.meta.url)): string {
  const ext = extname(self);
  if (ext === '.cjs') return join(dirname(self), '..', 'cjs', 'cli', 'bin', `${name}.js`);
  return join(dirname(self), '..', 'cli', 'bin', `${name}${ext}`);
}

/**
 * The file {@link ClientProcess.start} runs with `node`: {@link demoEntryPath} of `demo-client-main`.
 * @param self this module's own file (the default), or another place it is built to
 */
export function demoClientEntryPath(self: string = fileURLToPath(import.meta.url)): string {
  return demoEntryPath('demo-client-main', self);
}

/** The client loops of a phase, running in another process (what {@link ClientProcess.startLoad} returns). */
export interface RemoteLoad {
  /** Stop the loops; resolves with every request of the phase (each ends within its timeout). */
  stop(): Promise<RequestRecord[]>;
}

/** The client process. Start it with {@link ClientProcess.start}; end it with {@link ClientProcess.close}. */
export class ClientProcess {
  private exited = false;
  private exitText = '';

  private constructor(private readonly child: ChildProcess) {
    child.once('exit', (code, signal) => {
      this.exited = true;
      this.exitText = signal ? `killed by ${signal}` : `exited ${code}`;
    });
  }

  /**
   * Start the client process inside the topology's namespace and wait until it is ready.
   * @param topo the inbound topology
   * @param stopWait aborting it stops the wait (the process is killed)
   * @throws {SynplugError} it failed to start, exited, or was not ready within {@link CLIENT_START_MS}
   */
  static async start(topo: InboundTopology, stopWait?: AbortSignal): Promise<ClientProcess> {
    const entry = demoClientEntryPath();
    const child = topo.spawn(process.execPath, [...process.execArgv, entry], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const cp = new ClientProcess(child);
    try {
      await cp.waitFor('ready', CLIENT_START_MS, stopWait);
    } catch (e) {
      child.kill('SIGKILL');
      throw e;
    }
    return cp;
  }

  private waitFor<T extends { type: string }>(type: string, timeoutMs: number, stopWait?: AbortSignal): Promise<T> {
    return new Promise((resolve, reject) => {
      if (this.exited) {
        reject(new SynplugError(`the demo's client process ${this.exitText}`));
        return;
      }
      const done = (): void => {
        clearTimeout(timer);
        this.child.off('message', onMsg);
        this.child.off('exit', onExit);
        this.child.off('error', onError);
        stopWait?.removeEventListener('abort', onAbort);
      };
      const onMsg = (m: T): void => {
        if (m?.type !== type) return;
        done();
        resolve(m);
      };
      const onExit = (): void => {
        done();
        reject(new SynplugError(`the demo's client process ${this.exitText || 'exited'} before it answered '${type}'`));
      };
      const onError = (e: Error): void => {
        done();
        reject(new SynplugError(`the demo's client process: ${e.message}`, 'failure', { cause: e }));
      };
      const onAbort = (): void => {
        done();
        reject(new SynplugError(`stopped while waiting for the demo's client process ('${type}')`, 'interrupted'));
      };
      const timer = setTimeout(() => {
        done();
        reject(new SynplugError(`the demo's client process did not answer '${type}' within ${timeoutMs} ms`));
      }, timeoutMs);
      this.child.on('message', onMsg);
      this.child.once('exit', onExit);
      this.child.once('error', onError);
      stopWait?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Start a phase's client loops in the client process.
   * @param o host and port (the server side of the topology), concurrent loops, each request's bound in ms
   * @throws {SynplugError} the process is gone or did not answer
   */
  async startLoad(o: { host: string; port: number; clients: number; timeoutMs: number }): Promise<RemoteLoad> {
    const started = this.waitFor('started', CLIENT_START_MS);
    this.child.send({ type: 'start', ...o });
    await started;
    return {
      stop: async () => {
        const answer = this.waitFor<{ type: 'records'; records: RequestRecord[] }>('records', o.timeoutMs + CLIENT_START_MS);
        this.child.send({ type: 'stop' });
        return (await answer).records;
      },
    };
  }

  /** Tell the process to exit and wait for it (bounded: SIGKILL after 5 s). Idempotent. */
  async close(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    try {
      if (this.child.connected) this.child.send({ type: 'exit' });
    } catch {
      /* the channel closed already */
    }
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await gone;
    clearTimeout(timer);
  }
}
