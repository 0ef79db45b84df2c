/**
 * Encode and decode of an expression whose attributes are plain numbers and
 * strings, from a table: one line per field (its attribute number, wire
 * kind, and whether the kernel requires it). The expression modules that
 * need nothing else (`numgen`, `hash`, `exthdr`, `tproxy`, `dynset`,
 * `notrack`) describe their attributes this way instead of writing both
 * directions by hand.
 *
 * @module
 */
import { bin, NLA_F_NESTED, str, u64be } from '../../netlink/attributes.js';
import type { AttributeList } from '../../netlink/attributes.js';
import { NetlinkDecodeError, UsageError } from '../../netlink/errors.js';
import { be32, checkU32, u64num } from '../data.js';
import type { ExprBase, ExprCodec } from './registry.js';

/** How a field is on the wire: NLA_U32 (big-endian), NLA_U8, NLA_U64 (big-endian), NLA_STRING, or a nest kept as its payload's hex. */
export type AttrKind = 'u32' | 'u8' | 'u64' | 'str' | 'nested';

/** One field of an expression: `[attribute number, kind, required]`. */
export type AttrSpec = readonly [type: number, kind: AttrKind, required?: boolean];

/** The fields of E (without `name`), each with its {@link AttrSpec}, in the order libnftnl sends them. */
export type AttrTable<E extends ExprBase> = { readonly [K in Exclude<keyof E, 'name'>]-?: AttrSpec };

/**
 * A codec for expression `name` from its attribute table, plus the printing
 * hooks (`describe`, `field`, `statement`, `writes`) of {@link ExprCodec}.
 * Encoding checks u32/u8 ranges ({@link UsageError}); decoding throws
 * {@link NetlinkDecodeError} when a required attribute is missing or short.
 */
export function attrCodec<E extends ExprBase>(name: string, table: AttrTable<E>, hooks: Omit<ExprCodec<E>, 'name' | 'encode' | 'decode'>): ExprCodec<E> {
  const entries = Object.entries(table) as Array<[string, AttrSpec]>;
  return {
    name,
    encode(e) {
      const out: Buffer[] = [];
      for (const [k, [type, kind]] of entries) {
        const v = (e as unknown as Record<string, unknown>)[k];
        if (v === undefined) continue;
        if (kind === 'str') out.push(str(type, String(v)));
        else if (kind === 'nested') out.push(bin(type | NLA_F_NESTED, Buffer.from(String(v), 'hex')));
        else if (kind === 'u64') {
          if (!Number.isSafeInteger(v) || (v as number) < 0) throw new UsageError(`${name} ${k}: ${String(v)} is not a whole number >= 0`);
          out.push(u64be(type, BigInt(v as number)));
        } else if (kind === 'u8') {
          if (!Number.isInteger(v) || (v as number) < 0 || (v as number) > 255) throw new UsageError(`${name} ${k}: ${String(v)} is not a u8`);
          out.push(bin(type, Buffer.from([v as number])));
        } else out.push(be32(type, checkU32(v as number, `${name} ${k}`)));
      }
      return out;
    },
    decode(l: AttributeList) {
      const e: Record<string, unknown> = { name };
      for (const [k, [type, kind, required]] of entries) {
        const v = kind === 'str' ? l.str(type) : kind === 'nested' ? l.bin(type)?.toString('hex') : kind === 'u64' ? u64num(l, type) : kind === 'u8' ? l.u8(type) : l.u32be(type);
        if (v === undefined && required) throw new NetlinkDecodeError(`${name} expression without attribute ${type} (${k})`, l.offset);
        if (v !== undefined) e[k] = v;
      }
      return e as unknown as E;
    },
    ...hooks,
  };
}
