/**
 * The expression registry: one {@link ExprCodec} per nf_tables expression
 * (`src/iptables/expr/<name>.ts`), found by its kernel name
 * (NFTA_EXPR_NAME). Adding an expression means one file plus one line in
 * `expr/index.ts`; nothing here switches on names.
 *
 * Wire form of one expression, an element of NFTA_RULE_EXPRESSIONS:
 * ```c
 * // nf_tables.h: enum nft_list_attributes / enum nft_expr_attributes
 * NFTA_LIST_ELEM (nested) {
 *   NFTA_EXPR_NAME (NLA_STRING)   // "payload", "cmp", ...
 *   NFTA_EXPR_DATA (NLA_NESTED)   // the expression's own attributes
 * }
 * ```
 * An expression whose name has no codec decodes as a {@link GenericExpr}
 * with its raw attributes in hex, never as an error.
 *
 * @module
 */
import { bin, NLA_F_NESTED, parseNested, str, u16be, u64be, type Attribute, type AttributeView, parseAttributes } from '../../netlink/attributes.js';
import { NetlinkDecodeError, UsageError } from '../../netlink/errors.js';
import * as C from '../constants.js';
import { be32, checkU32, nest, u64num } from '../data.js';
import type { Field, PrintContext, PrintedStatement } from '../print.js';

/** What every decoded expression has: its kernel name. */
export interface ExprBase {
  /** NFTA_EXPR_NAME, e.g. `'payload'` */
  name: string;
}

/** One raw attribute of an expression we have no codec for. */
export interface RawAttribute {
  /** nla_type with the flags masked off */
  type: number;
  /** payload bytes, lowercase hex */
  data: string;
  /** NLA_F_NESTED was set */
  nested?: boolean;
}

/** Every attribute of `l` as a {@link RawAttribute}, in wire order (what an unknown expression, object or message prints). */
export function rawAttributes(l: AttributeView): RawAttribute[] {
  return l.items.map((x) => ({ type: x.type, data: x.data.toString('hex'), ...(x.isNested && { nested: true }) }));
}

/** An expression without a codec: its name and raw NFTA_EXPR_DATA attributes. */
export interface GenericExpr extends ExprBase {
  /** always true: marks the generic form */
  generic: true;
  /** NFTA_EXPR_DATA's attributes in wire order, payloads in hex */
  attributes: RawAttribute[];
}

/** Encoder/decoder of one expression kind. */
export interface ExprCodec<E extends ExprBase = ExprBase> {
  /** NFTA_EXPR_NAME */
  readonly name: string;
  /**
   * The attributes inside NFTA_EXPR_DATA, in the order nft 1.0.6 sends them.
   * @throws {UsageError} a field out of range
   */
  encode(e: E): Buffer[];
  /**
   * Decode NFTA_EXPR_DATA's attributes.
   * @throws {NetlinkDecodeError} a required attribute missing or too short
   */
  decode(l: AttributeView): E;
  /** One line in libnftnl's debug style, e.g. `payload load 4b @ network header + 12 => reg 1`. */
  describe(e: E): string;
  /**
   * For a load nft prints as a field (`ct state`, `fib daddr type`): the
   * register it writes and the field, so that a later `cmp`, `bitwise` or
   * `lookup` on that register prints as a match. Undefined when this load
   * does not print as a field (it then prints raw, and so does what reads it).
   * `from`: a register whose value this one transforms (`byteorder`): its load
   * is hidden along with this one when a match consumes the result. `len`:
   * the bytes written, when the field's value type does not tell them.
   */
  field?(e: E, ctx: PrintContext): { dreg: number; field: Field; from?: number | number[]; len?: number } | undefined;
  /**
   * For an expression nft prints as a statement of its own (`limit rate
   * 10/second`, `snat to 10.0.0.1`, `ct mark set 0x1`): the statement, reading
   * the registers it uses through `ctx`. Undefined when it cannot be printed
   * faithfully (it then prints raw).
   */
  statement?(e: E, ctx: PrintContext): PrintedStatement | undefined;
  /**
   * The registers this expression writes, when it writes any and is not a
   * `field` load (`ct`, `fib` with a key we do not print...): those registers
   * stop holding what was loaded before. Expressions without a codec are
   * assumed to write every register.
   */
  writes?(e: E): number[];
}

const codecs = new Map<string, ExprCodec>();

/** Register the codec of one expression name (replaces an earlier one). */
export function registerExpr<E extends ExprBase>(codec: ExprCodec<E>): void {
  codecs.set(codec.name, codec as unknown as ExprCodec);
}

/** The codec registered for an expression name, if any. */
export function exprCodec(name: string): ExprCodec | undefined {
  return codecs.get(name);
}

/** Names of every registered expression. */
export function registeredExprs(): string[] {
  return [...codecs.keys()];
}

function isGeneric(e: ExprBase): e is GenericExpr {
  return (e as GenericExpr).generic === true;
}

/**
 * Encode one expression as an NFTA_LIST_ELEM nest (NLA_F_NESTED set, as nft does).
 * A {@link GenericExpr} is re-encoded from its raw attributes.
 * @throws {UsageError} no codec for the name (and not generic), or a bad field
 */
export function encodeExpr(e: ExprBase): Buffer {
  let inner: Buffer[];
  if (isGeneric(e)) {
    inner = e.attributes.map((a) => bin(a.type | (a.nested ? NLA_F_NESTED : 0), Buffer.from(a.data, 'hex')));
  } else {
    const codec = codecs.get(e.name);
    if (!codec) throw new UsageError(`unknown nftables expression '${e.name}' (known: ${registeredExprs().join(', ')})`);
    inner = codec.encode(e);
  }
  return nest(C.NFTA_LIST_ELEM, [str(C.NFTA_EXPR_NAME, e.name), nest(C.NFTA_EXPR_DATA, inner)]);
}

/** Encode a list of expressions (the payload of NFTA_RULE_EXPRESSIONS). @throws {UsageError} */
export function encodeExprs(list: readonly ExprBase[]): Buffer[] {
  return list.map(encodeExpr);
}

/**
 * Decode one NFTA_LIST_ELEM expression nest.
 * @throws {NetlinkDecodeError} malformed attributes, no NFTA_EXPR_NAME, or a known expression missing a required attribute
 */
export function decodeExpr(a: Attribute): ExprBase {
  const l = parseNested(a);
  const name = l.str(C.NFTA_EXPR_NAME);
  if (name === undefined) throw new NetlinkDecodeError('expression without NFTA_EXPR_NAME', a.offset);
  const data = l.nested(C.NFTA_EXPR_DATA) ?? parseAttributes(Buffer.alloc(0), a.offset);
  const codec = codecs.get(name);
  if (codec) return codec.decode(data);
  const g: GenericExpr = {
    name,
    generic: true,
    attributes: rawAttributes(data),
  };
  return g;
}

/**
 * Decode NFTA_RULE_EXPRESSIONS (a list of NFTA_LIST_ELEM).
 * @throws {NetlinkDecodeError} as {@link decodeExpr}; an element of another type is skipped
 */
export function decodeExprs(l: AttributeView): ExprBase[] {
  return l.all(C.NFTA_LIST_ELEM).map(decodeExpr);
}

/** libnftnl-style one-line description, `[ name raw ]` for generic entries. */
export function describeExpr(e: ExprBase): string {
  if (isGeneric(e)) return `${e.name} ${e.attributes.map((a) => `${a.type}=${a.data}`).join(' ')}`.trim();
  const codec = codecs.get(e.name);
  return codec ? codec.describe(e) : e.name;
}

/*
 * Expressions whose attributes are plain numbers and strings (`numgen`, `hash`,
 * `exthdr`, `tproxy`, `dynset`, `notrack`) describe them as a table, one line
 * per field (attribute number, wire kind, required), instead of writing both
 * directions by hand: {@link attrCodec}.
 */

/** How a field is on the wire: NLA_U32 (big-endian), NLA_U16 (big-endian), NLA_U8, NLA_U64 (big-endian), NLA_STRING, or a nest kept as its payload's hex. */
export type AttrKind = 'u32' | 'u16' | 'u8' | 'u64' | 'str' | 'nested';

/** One field of an expression: `[attribute number, kind, required]`. */
export type AttrSpec = readonly [type: number, kind: AttrKind, required?: boolean];

/** The fields of E (without `name`), each with its {@link AttrSpec}, in the order libnftnl sends them. */
export type AttrTable<E extends ExprBase> = { readonly [K in Exclude<keyof E, 'name'>]-?: AttrSpec };

/**
 * A codec for expression `name` from its attribute table, plus the printing
 * hooks (`describe`, `field`, `statement`, `writes`) of {@link ExprCodec}.
 * Encoding checks u32/u16/u8 ranges ({@link UsageError}); decoding throws
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
        } else if (kind === 'u16') {
          if (!Number.isInteger(v) || (v as number) < 0 || (v as number) > 0xffff) throw new UsageError(`${name} ${k}: ${String(v)} is not a u16`);
          out.push(u16be(type, v as number));
        } else out.push(be32(type, checkU32(v as number, `${name} ${k}`)));
      }
      return out;
    },
    decode(l: AttributeView) {
      const e: Record<string, unknown> = { name };
      for (const [k, [type, kind, required]] of entries) {
        const v =
          kind === 'str'
            ? l.str(type)
            : kind === 'nested'
              ? l.bin(type)?.toString('hex')
              : kind === 'u64'
                ? u64num(l, type)
                : kind === 'u8'
                  ? l.u8(type)
                  : kind === 'u16'
                    ? l.u16be(type)
                    : l.u32be(type);
        if (v === undefined && required) throw new NetlinkDecodeError(`${name} expression without attribute ${type} (${k})`, l.offset);
        if (v !== undefined) e[k] = v;
      }
      return e as unknown as E;
    },
    ...hooks,
  };
}
