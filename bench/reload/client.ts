/**
 * Load and latency client of the reload bench (`npm run bench:reload`).
 *
 * wrk starts its latency clock after the TCP connection is made, so a SYN
 * held by the plug (or dropped and retransmitted) is invisible to it. This
 * client measures what a user sees: N concurrent loops, each doing
 *
 *   connect -> `GET / HTTP/1.0` -> read until the server closes
 *
 * and recording, per request, its start time, connect time, total time
 * (connect included) and an error kind.
 *
 * It runs as a child process of bench/reload/main.ts (started with `fork`, so
 * its 2-4 s Node start in the VM happens before any measured window) and is
 * driven over the IPC channel:
 *
 *   parent -> child  { type: 'run', id, host, port, connections, timeoutMs, out }
 *   child  -> parent { type: 'started', id, at }
 *   parent -> child  { type: 'peek' }          -> { type: 'peeked', failed }: failures so far
 *   parent -> child  { type: 'stop', id }      no new requests; wait for the ones in flight
 *   child  -> parent { type: 'done', id, requests, out }
 *   parent -> child  { type: 'exit' }
 *
 * The child sends { type: 'ready' } once it is listening for messages.
 *
 * Output file (CSV, one line per request, times in ms):
 *
 *   start,connect,total,status,error
 *
 *   start    wall clock (performance.timeOrigin + performance.now()), ms since the epoch
 *   connect  ms from start to the TCP connection being established; empty if never connected
 *   total    ms from start to the end of the request (the server's FIN, or the error)
 *   status   HTTP status code, empty if no status line arrived
 *   error    '' for success, else one of ERROR_KINDS
 *
 * Standalone use (for debugging), writes the CSV and prints a summary:
 *
 *   node --import=tsx bench/reload/client.ts HOST PORT CONNECTIONS SECONDS OUT.csv
 */
import { connect, type Socket } from 'node:net';
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { ERROR_KINDS, wallMs, type ErrorKind } from './common.js';

/** The `run` message. */
export interface RunMessage {
  type: 'run';
  id: number;
  host: string;
  port: number;
  connections: number;
  timeoutMs: number;
  out: string;
}

class Recorder {
  private start = new Float64Array(1 << 14);
  private conn = new Float64Array(1 << 14);
  private total = new Float64Array(1 << 14);
  private status = new Int16Array(1 << 14);
  private error = new Int8Array(1 << 14);
  n = 0;
  failed = 0;

  add(start: number, conn: number, total: number, status: number, error: number): void {
    if (this.n === this.start.length) {
      const grow = <T extends Float64Array | Int16Array | Int8Array>(a: T): T => {
        const b = new (a.constructor as new (n: number) => T)(a.length * 2);
        b.set(a);
        return b;
      };
      this.start = grow(this.start);
      this.conn = grow(this.conn);
      this.total = grow(this.total);
      this.status = grow(this.status);
      this.error = grow(this.error);
    }
    const i = this.n++;
    if (error >= 0) this.failed++;
    this.start[i] = start;
    this.conn[i] = conn;
    this.total[i] = total;
    this.status[i] = status;
    this.error[i] = error;
  }

  csv(): string {
    const lines: string[] = ['start,connect,total,status,error'];
    for (let i = 0; i < this.n; i++) {
      const c = this.conn[i];
      const s = this.status[i];
      const e = this.error[i];
      lines.push(`${this.start[i].toFixed(3)},${c < 0 ? '' : c.toFixed(3)},${this.total[i].toFixed(3)},${s === 0 ? '' : s},${e < 0 ? '' : ERROR_KINDS[e]}`);
    }
    return lines.join('\n') + '\n';
  }
}

const KIND_INDEX = new Map<ErrorKind, number>(ERROR_KINDS.map((k, i) => [k, i]));

/**
 * One request: connect, send `GET / HTTP/1.0`, read to the server's close.
 * Resolves (never rejects) once the request is over and recorded.
 */
function oneRequest(host: string, port: number, timeoutMs: number, rec: Recorder): Promise<void> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const start = performance.timeOrigin + t0;
    let connectedAt = -1;
    let done = false;
    let head = '';
    let sock: Socket;
    const finish = (status: number, kind: ErrorKind | null): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      const t1 = performance.now();
      rec.add(start, connectedAt < 0 ? -1 : connectedAt - t0, t1 - t0, status, kind === null ? -1 : (KIND_INDEX.get(kind) as number));
      sock.destroy();
      resolve();
    };
    const statusOf = (): number => {
      const m = /^HTTP\/\d\.\d (\d{3})/.exec(head);
      return m ? Number(m[1]) : 0;
    };
    const timer = setTimeout(() => finish(statusOf(), connectedAt < 0 ? 'connect-timeout' : 'read-timeout'), timeoutMs);
    sock = connect({ host, port, noDelay: true });
    sock.on('connect', () => {
      connectedAt = performance.now();
      sock.write('GET / HTTP/1.0\r\nHost: bench\r\nUser-Agent: synplug-bench\r\n\r\n');
    });
    sock.on('data', (d: Buffer) => {
      if (head.length < 64) head += d.toString('latin1');
    });
    sock.on('end', () => {
      const status = statusOf();
      if (status === 0) finish(0, 'read-empty');
      else finish(status, status >= 200 && status < 300 ? null : 'non-2xx');
    });
    sock.on('error', (err: NodeJS.ErrnoException) => {
      const code = err.code ?? '';
      if (connectedAt < 0) {
        finish(0, code === 'ECONNREFUSED' ? 'connect-refused' : code === 'ECONNRESET' || code === 'EPIPE' ? 'connect-reset' : 'connect-error');
      } else {
        finish(statusOf(), code === 'ECONNRESET' || code === 'EPIPE' ? 'read-reset' : 'read-error');
      }
    });
  });
}

/** A running load: `connections` loops until stop() is called. */
export class Load {
  private stopping = false;
  private readonly rec = new Recorder();
  private readonly loops: Promise<void>[] = [];

  constructor(private readonly opts: Omit<RunMessage, 'type' | 'id' | 'out'>) {
    for (let i = 0; i < opts.connections; i++) this.loops.push(this.loop());
  }

  private async loop(): Promise<void> {
    while (!this.stopping) await oneRequest(this.opts.host, this.opts.port, this.opts.timeoutMs, this.rec);
  }

  /** Requests failed so far. */
  failed(): number {
    return this.rec.failed;
  }

  /** Stop starting requests, wait for those in flight, write the CSV; returns the number of requests. */
  async stop(out: string): Promise<number> {
    this.stopping = true;
    await Promise.all(this.loops);
    writeFileSync(out, this.rec.csv());
    return this.rec.n;
  }
}

function runAsChild(): void {
  const send = process.send!.bind(process);
  let current: { id: number; load: Load; out: string } | null = null;
  process.on('message', (m: { type: string; id?: number } & Partial<RunMessage>) => {
    if (m.type === 'run') {
      const r = m as RunMessage;
      current = { id: r.id, out: r.out, load: new Load(r) };
      send({ type: 'started', id: r.id, at: wallMs() });
    } else if (m.type === 'stop') {
      const c = current;
      current = null;
      if (!c) return;
      void c.load.stop(c.out).then((requests) => send({ type: 'done', id: c.id, requests, out: c.out }));
    } else if (m.type === 'peek') {
      send({ type: 'peeked', failed: current ? current.load.failed() : 0 });
    } else if (m.type === 'exit') {
      process.exit(0);
    }
  });
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready' });
}

async function runStandalone(argv: string[]): Promise<void> {
  const [host, port, conns, secs, out] = argv;
  if (!out) {
    process.stderr.write('usage: client.ts HOST PORT CONNECTIONS SECONDS OUT.csv\n');
    process.exit(2);
  }
  const load = new Load({ host, port: Number(port), connections: Number(conns), timeoutMs: 15000 });
  await new Promise((r) => setTimeout(r, Number(secs) * 1000));
  const n = await load.stop(out);
  process.stdout.write(`${n} requests written to ${out}\n`);
}

if (process.send) runAsChild();
else if (process.argv[1] && /client\.[jt]s$/.test(process.argv[1])) void runStandalone(process.argv.slice(2));
