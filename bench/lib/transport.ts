/**
 * Netlink sockets for the bench: the bare `netlink` npm RawNetlinkSocket
 * (the floor of a round trip), and a counting transport that can read with a
 * fixed receive buffer instead of the package's default message peeking, to
 * show what the buffer size does to the kernel's dump chunk size.
 *
 * @module
 */
import { createRequire } from 'node:module';
import type { Transport } from '../../src/netlink/connection.js';

/** The part of `netlink`'s RawNetlinkSocket the bench uses. */
export interface RawSocket {
  on(ev: 'message' | 'truncatedMessage', cb: (msg: Buffer) => void): void;
  on(ev: 'error', cb: (err: Error) => void): void;
  send(msg: Uint8Array, options?: object, cb?: (err?: Error) => void): void;
  close(): void;
  address(): { port: number };
}

/** Options of the package's RawNetlinkSocket (see node_modules/netlink/dist/raw.d.ts). */
export interface RawSocketOptions {
  /** default true: peek (MSG_PEEK|MSG_TRUNC, 1-byte buffer) for each datagram's size, then read it exactly */
  messagePeeking?: boolean;
  /** the fixed receive buffer when not peeking, bytes */
  msgBufferSize?: number;
}

/** Open a RawNetlinkSocket of the `netlink` npm package. */
export function openRawSocket(protocol: number, options?: RawSocketOptions): RawSocket {
  const require = createRequire(import.meta.url);
  const { RawNetlinkSocket } = require('netlink/dist/raw.js') as { RawNetlinkSocket: new (p: number, o?: object) => RawSocket };
  return new RawNetlinkSocket(protocol, options);
}

/**
 * A {@link Transport} over a RawNetlinkSocket that counts the datagrams and
 * bytes it receives.
 */
export class CountingTransport implements Transport {
  readonly portId: number;
  /** datagrams received */
  datagrams = 0;
  /** bytes received */
  bytes = 0;
  /** largest datagram received */
  maxDatagram = 0;
  private readonly sock: RawSocket;
  private errorCb: (err: Error) => void = () => {};

  constructor(protocol: number, options?: RawSocketOptions) {
    this.sock = openRawSocket(protocol, options);
    this.portId = this.sock.address().port;
    this.sock.on('error', (e) => this.errorCb(e));
    this.sock.on('truncatedMessage', () => this.errorCb(new Error(`a netlink datagram was larger than the ${options?.msgBufferSize} byte receive buffer`)));
  }
  send(datagram: Buffer): void {
    this.sock.send(datagram, undefined, (err) => { if (err) this.errorCb(err); });
  }
  onDatagram(cb: (datagram: Buffer) => void): void {
    this.sock.on('message', (d) => {
      this.datagrams++;
      this.bytes += d.length;
      if (d.length > this.maxDatagram) this.maxDatagram = d.length;
      cb(d);
    });
  }
  onError(cb: (err: Error) => void): void {
    this.errorCb = cb;
  }
  /** Reset the counters. */
  reset(): void {
    this.datagrams = 0;
    this.bytes = 0;
    this.maxDatagram = 0;
  }
  close(): void {
    this.sock.close();
  }
}
