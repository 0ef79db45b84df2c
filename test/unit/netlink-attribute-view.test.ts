/**
 * The one attribute decoder (AttributeView) agrees with a plain walk of
 * the kernel's rules (nla_ok, nla_parse keeping the last of a type) on
 * every byte string: the same error offset for a malformed run, and for a
 * well-formed one the same last attribute of each type and the same
 * attributes in wire order, wherever the run sits in its buffer.
 */
import test from 'ava';
import fc from 'fast-check';
import { AttributeView, attr, le64, nested, str, u32, u64, u8 } from '../../src/netlink/attributes.js';
import { NetlinkDecodeError } from '../../src/netlink/errors.js';

type Outcome = { errorAt: number } | { payloads: (string | undefined)[] };

/** The reference: nla_ok's checks (a zero tail shorter than a header is padding) and the last payload of each type < 40. */
function reference(buf: Buffer, base: number): Outcome {
  const last = new Map<number, string>();
  for (let off = 0; off < buf.length; ) {
    if (buf.length - off < 4) {
      if (buf.subarray(off).some((b) => b !== 0)) return { errorAt: base + off };
      break;
    }
    const len = buf.readUInt16LE(off);
    if (len < 4 || len > buf.length - off) return { errorAt: base + off };
    last.set(buf.readUInt16LE(off + 2) & 0x3fff, buf.subarray(off + 4, off + len).toString('hex'));
    off += Math.ceil(len / 4) * 4;
  }
  return { payloads: Array.from({ length: 40 }, (_, t) => last.get(t)) };
}

/** What the view reports for the run `buf[start, end)`. */
function viewed(buf: Buffer, start: number, end: number, base: number): Outcome {
  try {
    const v = new AttributeView(buf, start, end, base);
    return { payloads: Array.from({ length: 40 }, (_, t) => v.bin(t)?.toString('hex')) };
  } catch (e) {
    if (!(e instanceof NetlinkDecodeError)) throw e;
    return { errorAt: e.offset! };
  }
}

test('on random bytes, the view gives the reference walk error offset or its last attribute of each type', (t) => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 64 }), fc.nat({ max: 1000 }), fc.nat({ max: 7 }), (bytes, base, pad) => {
      const buf = Buffer.from(bytes);
      const want = reference(buf, base);
      t.deepEqual(viewed(buf, 0, buf.length, base), want);
      // the same run inside a larger buffer, after `pad` bytes and before a byte that is not its own
      const outer = Buffer.concat([Buffer.alloc(pad, 0xee), buf, Buffer.from([0xff])]);
      t.deepEqual(viewed(outer, pad, pad + buf.length, base - pad), want);
    }),
    { numRuns: 2000 },
  );
});

test('on well-formed runs (flags set, repeated types), the view finds the last of each type and lists every attribute in order', (t) => {
  const item = fc.tuple(fc.nat({ max: 39 }), fc.constantFrom(0, 0x4000, 0x8000), fc.uint8Array({ maxLength: 12 }));
  fc.assert(
    fc.property(fc.array(item, { maxLength: 10 }), (items) => {
      const buf = Buffer.concat(items.map(([ty, flags, p]) => attr(ty | flags, p)));
      const v = new AttributeView(Buffer.concat([Buffer.alloc(3), buf]), 3, 3 + buf.length, 13);
      let off = 16;
      const expected = items.map(([type, flags, p]) => {
        const a = { type, isNested: flags === 0x8000, netByteOrder: flags === 0x4000, data: Buffer.from(p), offset: off };
        off += 4 + Math.ceil(p.length / 4) * 4;
        return a;
      });
      t.deepEqual(v.items, expected);
      t.deepEqual([...v], expected);
      for (let ty = 0; ty < 40; ty++) {
        const mine = expected.filter((a) => a.type === ty);
        t.deepEqual(v.all(ty), mine);
        t.deepEqual(v.get(ty), mine.at(-1));
        t.is(v.has(ty), mine.length > 0);
        t.is(v.bin(ty)?.toString('hex'), mine.at(-1)?.data.toString('hex'));
        if (mine.length) t.is(v.headerOffset(ty), mine.at(-1)!.offset);
      }
    }),
    { numRuns: 500 },
  );
});

test('typed getters: values, absence, and a payload too short for its type', (t) => {
  const buf = Buffer.concat([u8(1, 7), u32(2, 0xfffffffe), u64(3, 2n ** 40n + 5n), str(4, 'htb'), nested(5, [u32(1, 9)]), attr(6, Buffer.from([1, 2]))]);
  const v = new AttributeView(buf, 0, buf.length, 100);
  t.is(v.u8(1), 7);
  t.is(v.u32(2), 0xfffffffe);
  t.is(v.u64(3), 2n ** 40n + 5n);
  t.is(le64(buf, v.at(3)), 2 ** 40 + 5);
  t.is(v.str(4), 'htb');
  t.is(v.nested(5)?.u32(1), 9);
  t.is(v.nested(5)?.offset, 100 + buf.indexOf(nested(5, [u32(1, 9)])) + 4);
  t.is(v.u32(9), undefined);
  t.is(v.at(9), -1);
  t.is(v.size(9), 0);
  const e = t.throws(() => v.u32(6), { instanceOf: NetlinkDecodeError });
  t.is(e.message, `attribute type 6 has 2 bytes, needs 4 (at byte ${100 + buf.length - 8})`);
  t.is(e.offset, 100 + buf.length - 8);
});
