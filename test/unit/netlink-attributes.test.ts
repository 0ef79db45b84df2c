import test from 'ava';
import fc from 'fast-check';
import { loadCapture } from '../helpers/captures.js';
import {
  attr,
  flag,
  u8,
  u16,
  u16be,
  u32,
  u32be,
  s32,
  u64,
  u64be,
  str,
  bin,
  nested,
  parseAttributes,
  parseNested,
  align4,
  NLA_F_NESTED,
  NLA_F_NET_BYTEORDER,
  NLA_TYPE_MASK,
  NLA_HDRLEN,
  AttributeTooLargeError,
} from '../../src/netlink/attributes.js';
import { parseMessages } from '../../src/netlink/message.js';
import { NetlinkDecodeError } from '../../src/netlink/errors.js';

test('every scalar type encodes with the right length, byte order and 4-byte padding, and reads back', (t) => {
  const list = parseAttributes(
    Buffer.concat([
      u8(1, 0xab),
      u16(2, 0x1234),
      u16be(3, 0x1234),
      u32(4, 0xdeadbeef),
      u32be(5, 0xdeadbeef),
      s32(6, -2),
      u64(7, 0x0102030405060708n),
      u64be(8, 0x0102030405060708n),
      str(9, 'lo'),
      bin(10, Buffer.from([1, 2, 3])),
      flag(11),
    ]),
  );
  const lens = list.items.map((a) => a.data.length);
  t.deepEqual(lens, [1, 2, 2, 4, 4, 4, 8, 8, 3, 3, 0]);
  t.deepEqual(
    list.items.map((a) => a.offset),
    [0, 8, 16, 24, 32, 40, 48, 60, 72, 80, 88],
  );
  t.is(list.u8(1), 0xab);
  t.is(list.u16(2), 0x1234);
  t.deepEqual(list.get(2)!.data, Buffer.from([0x34, 0x12]));
  t.is(list.u16be(3), 0x1234);
  t.deepEqual(list.get(3)!.data, Buffer.from([0x12, 0x34]));
  t.is(list.u32(4), 0xdeadbeef);
  t.is(list.u32be(5), 0xdeadbeef);
  t.deepEqual(list.get(5)!.data, Buffer.from([0xde, 0xad, 0xbe, 0xef]));
  t.is(list.s32(6), -2);
  t.is(list.u64(7), 0x0102030405060708n);
  t.is(list.u64be(8), 0x0102030405060708n);
  t.deepEqual(list.get(8)!.data, Buffer.from([1, 2, 3, 4, 5, 6, 7, 8]));
  t.is(list.str(9), 'lo');
  t.deepEqual(list.get(9)!.data, Buffer.from('lo\0'));
  t.deepEqual(list.bin(10), Buffer.from([1, 2, 3]));
  t.true(list.has(11));
  t.is(list.u32(99), undefined);
  t.is(list.str(99), undefined);
});

test('the header: nla_len counts header and payload, not the padding; padding bytes are zero', (t) => {
  const a = str(3, 'lo');
  t.deepEqual(a, Buffer.from('070003006c6f0000', 'hex')); // IFLA_IFNAME "lo", as ip sent it in capture 01
  const captured = parseMessages(loadCapture('01_link_show').datagrams[2].bytes)[0].payload.subarray(16);
  t.deepEqual(Buffer.concat([u32(29, 9), str(3, 'lo')]), captured);
  t.is(align4(5), 8);
  t.is(align4(8), 8);
  t.is(NLA_HDRLEN, 4);
});

test('NLA_F_NESTED and NLA_F_NET_BYTEORDER are masked off the type and reported as flags', (t) => {
  const a = nested(7 | NLA_F_NESTED, [u32be(1 | NLA_F_NET_BYTEORDER, 5), u8(2, 1)]);
  const [outer] = parseAttributes(a).items;
  t.is(outer.type, 7);
  t.true(outer.isNested);
  t.false(outer.netByteOrder);
  const inner = parseNested(outer);
  t.is(inner.items[0].type, 1);
  t.true(inner.items[0].netByteOrder);
  t.is(inner.u32be(1), 5);
  t.is(inner.u8(2), 1);
  t.is(inner.items[0].offset, 4); // absolute offsets through nesting
  t.is(inner.items[1].offset, 12);
  // get() by the masked type finds the flagged attribute
  t.truthy(parseAttributes(a).nested(7));
  t.is(NLA_TYPE_MASK, 0x3fff);
});

test('the last attribute of a type wins (nla_parse); all() returns each in order', (t) => {
  const l = parseAttributes(Buffer.concat([u32(1, 1), u32(2, 2), u32(1, 3)]));
  t.is(l.u32(1), 3);
  t.deepEqual(
    l.all(1).map((a) => a.data.readUInt32LE(0)),
    [1, 3],
  );
  t.deepEqual(
    [...l].map((a) => a.type),
    [1, 2, 1],
  );
});

test('strings stop at the first NUL; a string without NUL is read whole', (t) => {
  t.is(parseAttributes(bin(1, Buffer.from('ab\0cd'))).str(1), 'ab');
  t.is(parseAttributes(bin(1, Buffer.from('abc'))).str(1), 'abc');
});

test('bad lengths: NetlinkDecodeError with the absolute offset of the attribute', (t) => {
  const good = Buffer.concat([u32(1, 1), u32(2, 2)]);
  const short = Buffer.from(good);
  short.writeUInt16LE(3, 8); // nla_len < 4
  t.is(t.throws(() => parseAttributes(short, 100), { instanceOf: NetlinkDecodeError })!.offset, 108);
  const past = Buffer.from(good);
  past.writeUInt16LE(12, 8);
  const e = t.throws(() => parseAttributes(past, 100), { instanceOf: NetlinkDecodeError });
  t.is(e!.offset, 108);
  t.regex(e!.message, /runs past the end/);
  // a truncated header: 2 bytes that are not padding
  t.is(t.throws(() => parseAttributes(Buffer.concat([good, Buffer.from([5, 0])]), 0), { instanceOf: NetlinkDecodeError })!.offset, 16);
  // trailing zero padding shorter than a header is tolerated
  t.is(parseAttributes(Buffer.concat([good, Buffer.alloc(3)])).items.length, 2);
  // typed getters check the size
  const tiny = parseAttributes(bin(4, Buffer.from([1, 2])), 40);
  const g = t.throws(() => tiny.u32(4), { instanceOf: NetlinkDecodeError });
  t.is(g!.offset, 40);
  t.throws(() => tiny.u64(4), { instanceOf: NetlinkDecodeError });
  t.throws(() => tiny.s32(4), { instanceOf: NetlinkDecodeError });
  t.is(tiny.u16(4), 0x0201);
  t.throws(() => parseAttributes(bin(1, Buffer.from([4, 0, 1]))).nested(1), { instanceOf: NetlinkDecodeError });
});

test('an attribute larger than nla_len can express is refused', (t) => {
  t.throws(() => attr(1, Buffer.alloc(0x10000)), { instanceOf: AttributeTooLargeError });
  t.notThrows(() => attr(1, Buffer.alloc(0xffff - 4)));
});

type Tree = ({ type: number; kind: 'u8' | 'u16' | 'u32' | 'u64' | 'str' | 'bin' | 'be32' } & { v: unknown }) | { type: number; kind: 'nest'; children: Tree[] };

const leaf = fc.oneof(
  fc.record({ type: fc.integer({ min: 0, max: 0x3fff }), kind: fc.constant('u8' as const), v: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ type: fc.integer({ min: 0, max: 0x3fff }), kind: fc.constant('u16' as const), v: fc.integer({ min: 0, max: 0xffff }) }),
  fc.record({ type: fc.integer({ min: 0, max: 0x3fff }), kind: fc.constant('u32' as const), v: fc.integer({ min: 0, max: 0xffffffff }) }),
  fc.record({ type: fc.integer({ min: 0, max: 0x3fff }), kind: fc.constant('be32' as const), v: fc.integer({ min: 0, max: 0xffffffff }) }),
  fc.record({ type: fc.integer({ min: 0, max: 0x3fff }), kind: fc.constant('u64' as const), v: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }) }),
  fc.record({
    type: fc.integer({ min: 0, max: 0x3fff }),
    kind: fc.constant('str' as const),
    v: fc.string({ unit: 'grapheme-ascii', maxLength: 20 }).map((s) => s.replace(/\0/g, '')),
  }),
  fc.record({ type: fc.integer({ min: 0, max: 0x3fff }), kind: fc.constant('bin' as const), v: fc.uint8Array({ maxLength: 13 }) }),
);
const { tree } = fc.letrec<{ tree: Tree }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf as fc.Arbitrary<Tree>,
    fc.record({
      type: fc.integer({ min: 0, max: 0x3fff }),
      kind: fc.constant('nest' as const),
      children: fc.array(tie('tree'), { maxLength: 4 }),
    }) as fc.Arbitrary<Tree>,
  ),
}));

function enc(n: Tree): Buffer {
  switch (n.kind) {
    case 'u8':
      return u8(n.type, n.v as number);
    case 'u16':
      return u16(n.type, n.v as number);
    case 'u32':
      return u32(n.type, n.v as number);
    case 'be32':
      return u32be(n.type | NLA_F_NET_BYTEORDER, n.v as number);
    case 'u64':
      return u64(n.type, n.v as bigint);
    case 'str':
      return str(n.type, n.v as string);
    case 'bin':
      return bin(n.type, n.v as Uint8Array);
    case 'nest':
      return nested(n.type | NLA_F_NESTED, n.children.map(enc));
  }
}
function dec(buf: Buffer, shape: Tree[], base: number): unknown[] {
  const l = parseAttributes(buf, base);
  return l.items.map((a, i) => {
    const s = shape[i];
    if (a.type !== s.type) return { badType: a.type };
    const one = parseAttributes(buf.subarray(a.offset - base, a.offset - base + align4(a.data.length + 4)), a.offset);
    switch (s.kind) {
      case 'u8':
        return one.u8(s.type);
      case 'u16':
        return one.u16(s.type);
      case 'u32':
        return one.u32(s.type);
      case 'be32':
        return a.netByteOrder ? one.u32be(s.type) : 'no flag';
      case 'u64':
        return one.u64(s.type);
      case 'str':
        return one.str(s.type);
      case 'bin':
        return new Uint8Array(one.bin(s.type)!);
      case 'nest':
        return a.isNested ? dec(a.data, s.children, a.offset + 4) : 'no flag';
      default:
        throw new Error('unreachable: every Tree kind is handled above');
    }
  });
}
const plain = (n: Tree): unknown => (n.kind === 'nest' ? n.children.map(plain) : n.kind === 'bin' ? new Uint8Array(n.v as Uint8Array) : n.v);

test('round trip (fast-check): nested trees of every type encode -> decode -> equal', (t) => {
  fc.assert(
    fc.property(fc.array(tree, { maxLength: 5 }), (trees) => {
      const buf = Buffer.concat(trees.map(enc));
      t.deepEqual(dec(buf, trees, 0), trees.map(plain));
      // every attribute starts 4-aligned and the whole run is a multiple of 4
      return buf.length % 4 === 0 && parseAttributes(buf).items.every((a) => a.offset % 4 === 0);
    }),
    { numRuns: 500 },
  );
});

test('builders never let a RangeError escape: out-of-range integers wrap like the C types', (t) => {
  fc.assert(
    fc.property(fc.oneof(fc.integer(), fc.double(), fc.constant(-1), fc.constant(2 ** 40)), fc.bigInt(), (n, big) => {
      for (const f of [u8, u16, u16be, u32, u32be, s32]) f(1, n);
      u64(1, n);
      u64be(1, n);
      u64(1, big);
      u64be(1, big);
    }),
    { numRuns: 2000 },
  );
  t.is(parseAttributes(u16(1, 0x12345)).u16(1), 0x2345);
  t.is(parseAttributes(u64(1, -1)).u64(1), 2n ** 64n - 1n);
  t.is(parseAttributes(u32(1, -1)).u32(1), 0xffffffff);
});
