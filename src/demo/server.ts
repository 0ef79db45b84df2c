/**
 * The demo's server: a TCP server in the synplug process that writes a fixed
 * reply (`pong\n`) to each connection and closes it, and that restarts the
 * way a server without socket hand-over does: its listening socket is closed,
 * and after a gap a new one is opened on the same address and port. During the
 * gap the kernel refuses new connections (RST to the SYN), and connections
 * still waiting in the old socket's accept queue when it closes are reset.
 *
 * Before it closes the listening socket, a restart drains the accept queue
 * the way a careful server does before it exits: it lets the event loop turn
 * (libuv accepts everything queued), and, given a probe of the queue's length
 * (the demo uses sock_diag's idiag_rqueue), repeats until the kernel reports
 * it empty or the drain's time is up. Unprotected, new connections keep
 * arriving meanwhile, and whatever is queued at the close is reset; under the
 * plug nothing new arrives, so the queue empties and nothing is reset.
 *
 * @module
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { SynplugError } from '../netlink/errors.js';

/** A restartable pong server. Create it with {@link PongServer.start}. */
export class PongServer {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  private closed = false;
  /** connections accepted, over every generation of the listening socket */
  accepted = 0;

  private constructor(
    readonly host: string,
    private portNumber: number,
    readonly reply: string,
  ) {}

  /**
   * Listen on `host:port`.
   * @param host the address to bind (the hold's address, 169.254.255.254 by default)
   * @param port TCP port; 0 (default) picks a free one, kept for every restart
   * @param reply what each connection receives before the server closes it (default `pong\n`)
   * @throws {SynplugError} the address cannot be bound (e.g. it is not on this machine)
   */
  static async start(host: string, port = 0, reply = 'pong\n'): Promise<PongServer> {
    const s = new PongServer(host, port, reply);
    await s.listen();
    return s;
  }

  /** The TCP port (fixed once the first listen picked it). */
  get port(): number {
    return this.portNumber;
  }

  /** Whether a listening socket is open now. */
  get listening(): boolean {
    return this.server !== undefined;
  }

  private listen(): Promise<void> {
    const server = net.createServer((sock) => {
      this.accepted++;
      this.sockets.add(sock);
      sock.on('error', () => {
        /* the client went away: nothing to do */
      });
      sock.once('close', () => this.sockets.delete(sock));
      sock.end(this.reply);
    });
    return new Promise((resolve, reject) => {
      server.once('error', (e: NodeJS.ErrnoException) => {
        reject(new SynplugError(`the demo server cannot listen on ${this.host}:${this.portNumber}: ${e.code ?? e.message}`, 'failure', { cause: e }));
      });
      server.listen({ host: this.host, port: this.portNumber, backlog: 511 }, () => {
        server.removeAllListeners('error');
        server.on('error', () => {
          /* after listening, errors concern single connections */
        });
        this.portNumber = (server.address() as net.AddressInfo).port;
        this.server = server;
        resolve();
      });
    });
  }

  /**
   * Restart without socket hand-over: drain the accept queue (see the module
   * doc), close the listening socket, wait `gapMs`, listen again on the same port.
   * @param gapMs how long no socket listens, ms
   * @param drain `probe`: the accept queue's length now (null: unknown), `maxMs`: the longest
   *   the drain waits for an empty queue; without it, the event loop turns once
   * @returns `closedMs`: ms from the close to the new socket listening; `queuedAtClose`: the
   *   queue's length last probed before the close (null without a probe)
   * @throws {SynplugError} the server was closed, or the port cannot be bound again
   * @throws whatever the probe throws (the listening socket is then left open)
   */
  async restart(gapMs: number, drain?: { probe: () => Promise<number | null>; maxMs: number }): Promise<{ closedMs: number; queuedAtClose: number | null }> {
    if (this.closed || !this.server) throw new SynplugError('the demo server is not listening: it cannot restart');
    await nextTurn();
    let queuedAtClose: number | null = null;
    if (drain) {
      const until = performance.now() + drain.maxMs;
      for (;;) {
        queuedAtClose = await drain.probe();
        if (queuedAtClose === null || queuedAtClose === 0 || performance.now() >= until) break;
        await nextTurn();
      }
    }
    if (this.closed || !this.server) throw new SynplugError('the demo server was closed during a restart');
    const old = this.server;
    this.server = undefined;
    old.close();
    const t0 = performance.now();
    await sleep(gapMs);
    if (this.closed) throw new SynplugError('the demo server was closed during a restart');
    await this.listen();
    return { closedMs: performance.now() - t0, queuedAtClose };
  }

  /** Close the listening socket and every open connection. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    const s = this.server;
    this.server = undefined;
    for (const sock of this.sockets) sock.destroy();
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}
