// Floor for the class-list bench: the least any Node program can take to list
// a device's classes. It does what `tc class show dev DEV` does on the wire
// (RTM_GETLINK for the name, then an RTM_GETTCLASS dump read with a 64 KiB
// buffer, so the kernel fills ~32 KiB chunks as it does for tc) and nothing
// else: no decoding, no output. It prints the number of RTM_NEWTCLASS
// messages, which the bench checks.
//
// Its time is node's start-up, loading the `netlink` package's native socket,
// and the kernel building the dump; a real lister (tc, synplug) adds decoding
// and printing on top.
//
// usage: node bench/lib/floor-dump.cjs DEV
'use strict';
const { RawNetlinkSocket } = require('netlink/dist/raw.js');

const dev = process.argv[2];
const sock = new RawNetlinkSocket(0, { messagePeeking: false, msgBufferSize: 65536 });
const NLM_F_REQUEST = 1, NLM_F_ACK = 4, NLM_F_DUMP = 0x300;
const RTM_NEWLINK = 16, RTM_GETLINK = 18, RTM_NEWTCLASS = 40, RTM_GETTCLASS = 42;
const NLMSG_ERROR = 2, NLMSG_DONE = 3, IFLA_IFNAME = 3;

function message(type, flags, seq, payload) {
  const m = Buffer.alloc(16 + payload.length);
  m.writeUInt32LE(m.length, 0);
  m.writeUInt16LE(type, 4);
  m.writeUInt16LE(flags | NLM_F_REQUEST, 6);
  m.writeUInt32LE(seq, 8);
  payload.copy(m, 16);
  return m;
}
function fail(text) {
  process.stderr.write(`floor-dump: ${text}\n`);
  process.exit(1);
}

// RTM_GETLINK by name: struct ifinfomsg (16 bytes), IFLA_IFNAME
const name = Buffer.from(`${dev}\0`);
const ifla = Buffer.alloc(4 + ((name.length + 3) & ~3));
ifla.writeUInt16LE(4 + name.length, 0);
ifla.writeUInt16LE(IFLA_IFNAME, 2);
name.copy(ifla, 4);
let count = 0;
sock.on('message', (d) => {
  for (let off = 0; off + 16 <= d.length;) {
    const len = d.readUInt32LE(off);
    const type = d.readUInt16LE(off + 4);
    const seq = d.readUInt32LE(off + 8);
    if (len < 16) fail('bad message length');
    if (type === NLMSG_ERROR && d.readInt32LE(off + 16) !== 0) fail(`kernel error ${-d.readInt32LE(off + 16)} for seq ${seq}`);
    if (seq === 1 && type === RTM_NEWLINK) {
      const tcmsg = Buffer.alloc(20);
      tcmsg.writeInt32LE(d.readInt32LE(off + 16 + 4), 4); // ifi_index -> tcm_ifindex
      sock.send(message(RTM_GETTCLASS, NLM_F_DUMP, 2, tcmsg));
    } else if (seq === 2 && type === RTM_NEWTCLASS) {
      count++;
    } else if (seq === 2 && type === NLMSG_DONE) {
      process.stdout.write(`${count}\n`);
      sock.close();
      return;
    }
    off += (len + 3) & ~3;
  }
});
sock.send(message(RTM_GETLINK, NLM_F_ACK, 1, Buffer.concat([Buffer.alloc(16), ifla])));
