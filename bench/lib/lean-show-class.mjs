// What-if for the class-list bench: the same library call and output as
// `synplug show class --dev DEV --stats --json`, from a script that loads only
// the netlink and tc modules of dist/ (no commander, guard or iptables
// modules). Plain JS so that it runs on bare `node`, like the CLI.
//
// usage: node bench/lib/lean-show-class.mjs DEV [BUFFER]
//   BUFFER: read the socket with a fixed buffer of that many bytes instead of
//   the `netlink` package's default (peek each datagram's size with a 1-byte
//   buffer, then read it exactly). The kernel sizes dump chunks after the
//   largest buffer a socket has read with (netlink_recvmsg: max_recvmsg_len,
//   capped near 32 KiB), so the default gets ~3.7 KiB chunks.
import { createRequire } from 'node:module';
import { NetlinkConnection } from '../../dist/netlink/connection.js';
import { listClasses } from '../../dist/tc/ops.js';

class BufferTransport {
  constructor(size) {
    const { RawNetlinkSocket } = createRequire(import.meta.url)('netlink/dist/raw.js');
    this.sock = new RawNetlinkSocket(0, { messagePeeking: false, msgBufferSize: size });
    this.portId = this.sock.address().port;
    this.errorCb = () => {};
    this.sock.on('error', (e) => this.errorCb(e));
    this.sock.on('truncatedMessage', () => this.errorCb(new Error(`a datagram was larger than the ${size} byte buffer`)));
  }
  send(d) { this.sock.send(d, undefined, (e) => { if (e) this.errorCb(e); }); }
  onDatagram(cb) { this.sock.on('message', cb); }
  onError(cb) { this.errorCb = cb; }
  close() { this.sock.close(); }
}

const [dev, buffer] = process.argv.slice(2);
const conn = buffer ? new NetlinkConnection(new BufferTransport(Number(buffer)), 0) : NetlinkConnection.open(0);
try {
  const list = await listClasses(conn, { dev, stats: true });
  process.stdout.write(JSON.stringify(list) + '\n');
} finally {
  conn.close();
}
