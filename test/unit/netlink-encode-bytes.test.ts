/*
 * The encoders allocate with Buffer.allocUnsafe (pooled, not zeroed) and must
 * write every byte themselves. Here allocUnsafe hands out 0xff-filled memory,
 * and the results must still be the exact bytes of the kernel layouts.
 */
import test from 'ava';
import { str, u8, u16, u32, flag, nested, bin } from '../../src/netlink/attributes.js';
import { encodeMessage, NLM_F_REQUEST, NLM_F_ACK } from '../../src/netlink/message.js';
import { encodeTcmsg } from '../../src/tc/tcmsg.js';
import { qdiscRequest } from '../../src/tc/request.js';

function withDirtyPool<T>(f: () => T): T {
  const orig = Buffer.allocUnsafe;
  Buffer.allocUnsafe = (n: number) => Buffer.alloc(n, 0xff);
  try {
    return f();
  } finally {
    Buffer.allocUnsafe = orig;
  }
}

const hex = (b: Buffer) => b.toString('hex');

test.serial('attributes: header, payload and zero padding (struct nlattr, NLA_ALIGN)', (t) => {
  withDirtyPool(() => {
    t.is(hex(str(1, 'pfifo')), '0a000100' + '706669666f00' + '0000'); // nla_len 10, "pfifo\0", 2 pad
    t.is(hex(str(3, 'lo')), '07000300' + '6c6f00' + '00');
    t.is(hex(str(3, 'é')), '07000300' + 'c3a900' + '00'); // UTF-8, 2 bytes + NUL
    t.is(hex(str(3, '')), '05000300' + '00' + '000000');
    t.is(hex(u8(2, 0xab)), '05000200' + 'ab' + '000000');
    t.is(hex(u16(2, 0x1234)), '06000200' + '3412' + '0000');
    t.is(hex(u32(2, 1000)), '08000200' + 'e8030000');
    t.is(hex(flag(9)), '04000900');
    t.is(hex(bin(4, Buffer.from([1, 2, 3]))), '07000400' + '010203' + '00');
    t.is(hex(nested(2, [u8(1, 1), str(2, 'a')])), '14000200' + '05000100' + '01000000' + '06000200' + '61000000');
  });
});

test.serial('tcmsg and a whole message: the pfifo change tc sends (56 bytes), padding zeroed', (t) => {
  withDirtyPool(() => {
    // struct tcmsg { family 0, pad 0, pad 0; ifindex 5; handle 1:; parent root; info 0 }
    t.is(hex(encodeTcmsg({ ifindex: 5, handle: 0x10000, parent: 0xffffffff })), '00000000' + '05000000' + '00000100' + 'ffffffff' + '00000000');
    const req = qdiscRequest('change', 5, { kind: 'pfifo', parent: 'root', handle: '1:', options: { limit: 1000 } });
    const m = encodeMessage({ type: req.type, flags: req.flags | NLM_F_REQUEST | NLM_F_ACK, seq: 7, payload: req.payload });
    t.is(
      hex(m),
      '38000000' +
        '2400' +
        '0500' +
        '07000000' +
        '00000000' + // nlmsghdr: len 56, RTM_NEWQDISC, REQUEST|ACK, seq 7, pid 0
        '00000000' +
        '05000000' +
        '00000100' +
        'ffffffff' +
        '00000000' + // tcmsg
        '0a000100' +
        '706669666f000000' + // TCA_KIND "pfifo"
        '08000200' +
        'e8030000',
    ); // TCA_OPTIONS tc_fifo_qopt { limit 1000 }
    // a payload whose length is not a multiple of 4 gets zero padding after nlmsg_len
    t.is(hex(encodeMessage({ type: 0x10, flags: 1, payload: Buffer.from([9]) })), '11000000' + '1000' + '0100' + '00000000' + '00000000' + '09000000');
  });
});
