/**
 * The demo's server: a TCP server in the synplug process that writes a fixed
 * reply (`pong\n`) to each connection and closes it, and that restarts the
 * way a server without socket hand-over does: its listening socket is closed,
 * and after a gap a new one is opened on the same address and port. During the
 * gap the kernel refuses new connections (RST to the SYN), and connections
 * still waiting in the old socket's accept queue when it closes are reset.
 *
 * Before it closes the listening socket, a restart lets the event loop turn
 * once, so that the connections already in the accept queue are accepted and
 * answered (a server draining its queue before it exits); what arrives after
 * that is lost unless it is held.
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

  private constructor(readonly host: string, private portNumber: number, readonly reply: string) {}

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
      sock.on('error', () => { /* the client went away: nothing to do */ });
      sock.once('close', () => this.sockets.delete(sock));
      sock.end(this.reply);
    });
    return new Promise((resolve, reject) => {
      server.once('error', (e: NodeJS.ErrnoException) => {
        reject(new SynplugError(`the demo server cannot listen on ${this.host}:${this.portNumber}: ${e.code ?? e.message}`, 'failure', { cause: e }));
      });
      server.listen({ host: this.host, port: this.portNumber, backlog: 511 }, () => {
        server.removeAllListeners('error');
        server.on('error', () => { /* after listening, errors concern single connections */ });
        this.portNumber = (server.address() as net.AddressInfo).port;
        this.server = server;
        resolve();
      });
    });
  }

  /**
   * Restart without socket hand-over: let the event loop accept what is in the
   * accept queue, close the listening socket, wait `gapMs`, listen again on the
   * same port.
   * @param gapMs how long no socket listens, ms
   * @returns `closedMs`: ms from the close to the new socket listening
   * @throws {SynplugError} the server was closed, or the port cannot be bound again
   */
  async restart(gapMs: number): Promise<{ closedMs: number }> {
    if (this.closed || !this.server) throw new SynplugError('the demo server is not listening: it cannot restart');
    await nextTurn();
    const old = this.server;
    this.server = undefined;
    old.close();
    const t0 = performance.now();
    await sleep(gapMs);
    if (this.closed) throw new SynplugError('the demo server was closed during a restart');
    await this.listen();
    return { closedMs: performance.now() - t0 };
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
