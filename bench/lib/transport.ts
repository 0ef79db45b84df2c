/**
 * Netlink sockets for the bench:
 *
 * - the old `netlink` npm package's RawNetlinkSocket (a devDependency, kept
 *   only so that the bench measures the change to the koffi socket rather
 *   than assuming it), and a counting transport over it that can read by
 *   peeking at each datagram (its default) or with a fixed buffer;
 * - {@link CountingSocketTransport}: synplug's own koffi SocketTransport,
 *   counting what it receives.
 *
 * @module
 */
import { createRequire } from 'node:module';
import type { Transport } from '../../src/netlink/connection.js';
import { SocketTransport, type SocketOptions } from '../../src/netlink/transport.js';

/** synplug's SocketTransport counting the datagrams and bytes it delivers. */
export class CountingSocketTransport extends SocketTransport {
  /** datagrams received */
  datagrams = 0;
  /** bytes received */
  bytes = 0;
  /** largest datagram received */
  maxDatagram = 0;
  /** netlink messages received (headers walked by nlmsg_len) */
  messages = 0;
  /** @param protocol netlink protocol number */
  constructor(protocol: number, options?: SocketOptions) {
    super(protocol, options);
  }
  override onDatagram(cb: (datagram: Buffer) => void): void {
    super.onDatagram((d) => {
      for (let off = 0; off + 16 <= d.length; ) {
        const len = d.readUInt32LE(off);
        if (len < 16) break;
        this.messages++;
        off += (len + 3) & ~3;
      }
      this.datagrams++;
      this.bytes += d.length;
      if (d.length > this.maxDatagram) this.maxDatagram = d.length;
      cb(d);
    });
  }
  /** Reset the counters. */
  reset(): void {
    this.datagrams = 0;
    this.bytes = 0;
    this.maxDatagram = 0;
    this.messages = 0;
  }
}

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

/** Open a RawNetlinkSocket of the `netlink` npm package (a devDependency: the bench's comparison row only). */
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
    this.sock.send(datagram, undefined, (err) => {
      if (err) this.errorCb(err);
    });
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
