/**
 * The demo's clients: loops that each open a new TCP connection per request,
 * read the server's reply until it closes, and record the time from the start
 * of the connection to its end (connect included: a SYN held by the plug is
 * part of what a user waits for) and how it failed, if it did.
 *
 * The loops are bounded: at most `clients` requests are in flight, each ends
 * within its timeout, and {@link ClientLoad.stop} lets no new request start.
 * After a failed request a loop waits {@link FAILURE_PAUSE_MS} before the next,
 * so that a closed port (answered at once with a RST) does not turn the loops
 * into a busy spin that starves the server and the plug's release, which share
 * the process.
 *
 * @module
 */
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { FailureKind, RequestRecord } from './types.js';

/** The pause of a client loop after a failed request, ms. */
export const FAILURE_PAUSE_MS = 10;

/** Longest reply kept for the comparison, bytes (a longer one is a bad response anyway). */
const MAX_REPLY = 256;

/**
 * Classify a socket error.
 * @param code the error's `code` (e.g. 'ECONNREFUSED'), if any
 * @returns `refused` for ECONNREFUSED, `reset` for ECONNRESET/EPIPE, `timeout` for ETIMEDOUT, else `other`
 */
export function classifyError(code: string | undefined): FailureKind {
  switch (code) {
    case 'ECONNREFUSED':
      return 'refused';
    case 'ECONNRESET':
    case 'EPIPE':
      return 'reset';
    case 'ETIMEDOUT':
      return 'timeout';
    default:
      return 'other';
  }
}

/**
 * One request: connect to `host:port`, read until the server closes, compare
 * with `expect`. Resolves (never rejects) with its record.
 * @param host IPv4 or IPv6 address
 * @param port TCP port
 * @param opts `timeoutMs`: the whole request's bound (connect included); `expect`: the reply (default `pong\n`)
 */
export function requestOnce(host: string, port: number, opts: { timeoutMs: number; expect?: string }): Promise<RequestRecord> {
  const expect = opts.expect ?? 'pong\n';
  return new Promise((resolve) => {
    const t0 = performance.now();
    let connectedAt: number | undefined;
    let reply = '';
    let done = false;
    const sock = connect({ host, port, noDelay: true });
    const finish = (failure: FailureKind | null, errorCode?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      const t1 = performance.now();
      sock.destroy();
      resolve({
        startMs: t0,
        connectMs: connectedAt === undefined ? null : connectedAt - t0,
        totalMs: t1 - t0,
        failure,
        ...(errorCode !== undefined && { errorCode }),
      });
    };
    const timer = setTimeout(() => finish('timeout'), opts.timeoutMs);
    sock.once('connect', () => {
      connectedAt = performance.now();
    });
    sock.on('data', (d: Buffer) => {
      if (reply.length <= MAX_REPLY) reply += d.toString('latin1');
    });
    sock.once('end', () => finish(reply === expect ? null : 'bad-response'));
    sock.once('error', (e: NodeJS.ErrnoException) => finish(classifyError(e.code), e.code ?? 'unknown'));
    // A close without 'end' or 'error' (should not happen): a bad response.
    sock.once('close', () => finish('bad-response'));
  });
}

/** Options of {@link ClientLoad}. */
export interface ClientLoadOptions {
  host: string;
  port: number;
  /** concurrent loops (at most this many requests in flight) */
  clients: number;
  /** bound of each request, ms */
  timeoutMs: number;
  /** the expected reply (default `pong\n`) */
  expect?: string;
}

/** A running load: `clients` loops of requests until {@link ClientLoad.stop}. */
export class ClientLoad {
  /** every request made, in completion order */
  readonly records: RequestRecord[] = [];
  private stopping = false;
  private inFlight = 0;
  private peak = 0;
  private readonly loops: Promise<void>[] = [];
  private readonly wakers = new Set<() => void>();

  /** Start the loops at once. */
  constructor(private readonly opts: ClientLoadOptions) {
    for (let i = 0; i < opts.clients; i++) this.loops.push(this.loop());
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      this.inFlight++;
      this.peak = Math.max(this.peak, this.inFlight);
      const r = await requestOnce(this.opts.host, this.opts.port, { timeoutMs: this.opts.timeoutMs, expect: this.opts.expect });
      this.inFlight--;
      this.records.push(r);
      if (r.failure !== null && !this.stopping) await this.pause(FAILURE_PAUSE_MS);
    }
  }

  /** Sleep `ms`, cut short by stop(). */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.wakers.add(wake);
    });
  }

  /** The most requests that were in flight at once (at most `clients`). */
  get peakInFlight(): number {
    return this.peak;
  }

  /** Failed requests so far. */
  failedSoFar(): number {
    return this.records.reduce((n, r) => n + (r.failure === null ? 0 : 1), 0);
  }

  /**
   * Start no new request, and wait for those in flight (each ends within its timeout).
   * @returns every request made
   */
  async stop(): Promise<RequestRecord[]> {
    this.stopping = true;
    for (const w of [...this.wakers]) w();
    await Promise.all(this.loops);
    return this.records;
  }
}
