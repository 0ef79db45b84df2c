/**
 * The lazy attribute view the tc decoders read with agrees with
 * parseAttributes on every byte string: the same error (message and
 * offset) for a malformed run, and for a well-formed one the same last
 * attribute of each type, the same payload and the same typed values.
 */
import test from 'ava';
import fc from 'fast-check';
import { AttributeView, attr, nested, parseAttributes, str, u32, u64, u8 } from '../../src/netlink/attributes.js';
import { NetlinkDecodeError } from '../../src/netlink/errors.js';

/** What a decoder of either kind reports for `buf`: an error, or every type's last payload. */
function outcome(decode: () => (t: number) => Buffer | undefined): { error: string } | { payloads: (string | undefined)[] } {
  try {
    const get = decode();
    const payloads: (string | undefined)[] = [];
    for (let t = 0; t < 40; t++) payloads.push(get(t)?.toString('hex'));
    return { payloads };
  } catch (e) {
    if (!(e instanceof NetlinkDecodeError)) throw e;
    return { error: `${e.message} @${e.offset}` };
  }
}

test('on random bytes, the view and parseAttributes give the same error or the same attributes', (t) => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 64 }), fc.nat({ max: 1000 }), (bytes, base) => {
      const buf = Buffer.from(bytes);
      const list = outcome(() => {
        const l = parseAttributes(buf, base);
        return (ty) => l.bin(ty);
      });
      const view = outcome(() => {
        const v = new AttributeView(buf, 0, buf.length, base);
        return (ty) => v.bytes(ty);
      });
      t.deepEqual(view, list);
    }),
    { numRuns: 2000 },
  );
});

test('on well-formed runs (flags set, repeated types), the view finds the last of each type, as nla_parse does', (t) => {
  const item = fc.tuple(fc.nat({ max: 39 }), fc.boolean(), fc.uint8Array({ maxLength: 12 }));
  fc.assert(
    fc.property(fc.array(item, { maxLength: 10 }), (items) => {
      const buf = Buffer.concat(items.map(([ty, flag, p]) => attr(ty | (flag ? 0x8000 : 0), p)));
      const l = parseAttributes(buf, 16);
      const v = new AttributeView(Buffer.concat([Buffer.alloc(3), buf]), 3, 3 + buf.length, 13);
      for (let ty = 0; ty < 40; ty++) {
        t.is(v.has(ty), l.has(ty));
        t.is(v.bytes(ty)?.toString('hex'), l.bin(ty)?.toString('hex'));
        if (l.has(ty)) t.is(v.headerOffset(ty), l.get(ty)!.offset);
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
  t.is(v.u64(3), 2 ** 40 + 5);
  t.is(v.str(4), 'htb');
  t.is(v.nested(5)?.u32(1), 9);
  t.is(v.u32(9), undefined);
  t.is(v.at(9), -1);
  t.is(v.size(9), 0);
  const e = t.throws(() => v.u32(6), { instanceOf: NetlinkDecodeError });
  t.is(e.message, `attribute type 6 has 2 bytes, needs 4 (at byte ${100 + buf.length - 8})`);
  t.is(e.offset, 100 + buf.length - 8);
});
