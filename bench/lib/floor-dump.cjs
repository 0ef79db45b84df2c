// Floor for the class-list bench: the least any Node program can take to list
// a device's classes. It does what `tc class show dev DEV` does on the wire
// (RTM_GETLINK for the name, then an RTM_GETTCLASS dump read with a 64 KiB
// buffer, so the kernel fills ~32 KiB chunks as it does for tc) and nothing
// else: no decoding, no output. It prints the number of RTM_NEWTCLASS
// messages, which the bench checks.
//
// Its time is node's start-up, loading koffi (the C function interface
// synplug's socket uses) and the kernel building the dump; a real lister (tc,
// synplug) adds decoding and printing on top. It reads with blocking recv
// calls: a program that has nothing else to do need not poll.
//
// usage: node bench/lib/floor-dump.cjs DEV
'use strict';
const koffi = require('koffi');

const lib = koffi.load(null);
const socket = lib.func('int socket(int, int, int)');
const sendFn = lib.func('intptr_t send(int, const void *, size_t, int)');
const recvFn = lib.func('intptr_t recv(int, void *, size_t, int)');
const fd = socket(16 /* AF_NETLINK */, 3 /* SOCK_RAW */ | 0o2000000 /* SOCK_CLOEXEC */, 0 /* NETLINK_ROUTE */);
const rbuf = Buffer.alloc(65536);
const sock = {
  send(m) {
    if (sendFn(fd, m, m.length, 0) < 0) fail(`send: errno ${koffi.errno()}`);
  },
};
const dev = process.argv[2];
const NLM_F_REQUEST = 1,
  NLM_F_ACK = 4,
  NLM_F_DUMP = 0x300;
const RTM_NEWLINK = 16,
  RTM_GETLINK = 18,
  RTM_NEWTCLASS = 40,
  RTM_GETTCLASS = 42;
const NLMSG_ERROR = 2,
  NLMSG_DONE = 3,
  IFLA_IFNAME = 3;

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
function onMessage(d) {
  for (let off = 0; off + 16 <= d.length; ) {
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
      done = true;
      return;
    }
    off += (len + 3) & ~3;
  }
}

sock.send(message(RTM_GETLINK, NLM_F_ACK, 1, Buffer.concat([Buffer.alloc(16), ifla])));
let done = false;
while (!done) {
  const n = Number(recvFn(fd, rbuf, rbuf.length, 0));
  if (n < 0) fail(`recv: errno ${koffi.errno()}`);
  onMessage(rbuf.subarray(0, n));
}
