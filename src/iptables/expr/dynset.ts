/**
 * The `dynset` expression (net/netfilter/nft_dynset.c): add, update or
 * delete the key in a register as an element of a set from the packet
 * path: nft's `add @s { ip saddr }`, `update @s { ip saddr timeout 30s }`,
 * `delete @s { ip saddr }`.
 *
 * ```c
 * // nf_tables.h: enum nft_dynset_attributes
 * NFTA_DYNSET_SET_NAME     // NLA_STRING
 * NFTA_DYNSET_SET_ID       // NLA_U32 (in a transaction)
 * NFTA_DYNSET_OP           // NLA_U32, enum nft_dynset_ops: add, update, delete
 * NFTA_DYNSET_SREG_KEY     // NLA_U32, register holding the key
 * NFTA_DYNSET_SREG_DATA    // NLA_U32, register holding a map's value
 * NFTA_DYNSET_TIMEOUT      // NLA_U64, ms
 * NFTA_DYNSET_EXPR         // NLA_NESTED, an expression of the element
 * NFTA_DYNSET_FLAGS        // NLA_U32, NFT_DYNSET_F_INV, NFT_DYNSET_F_EXPR
 * NFTA_DYNSET_EXPRESSIONS  // NLA_NESTED, expressions of the element
 * ```
 * Printed when nft names the key (a field, or a concatenation of fields)
 * and the map value (a constant) and the one element statement it has
 * (`counter`, `limit`, `quota`, `ct count`); otherwise raw. With a
 * statement, on an anonymous set (one nft lists nowhere else), as nft's
 * meter: `meter flood size 128000 { ip saddr timeout 10s limit rate over
 * 10/second }`, JSON `{ meter: { key, stmt, size, name } }`.
 *
 * @module
 */
import * as C from '../constants.js';
import { durationText, type PrintContext, type Statement } from '../print.js';
import { attrCodec, decodeExpr, exprCodec, type ExprBase } from './registry.js';

/** `dynset`: NFTA_DYNSET_* as numbers, the set's name, nests as hex. */
export interface DynsetExpr {
  name: 'dynset';
  set: string;
  setId?: number;
  op: number;
  sregKey: number;
  sregData?: number;
  timeoutMs?: number;
  /** NFTA_DYNSET_EXPR's payload, hex */
  expr?: string;
  flags?: number;
  /** NFTA_DYNSET_EXPRESSIONS's payload, hex */
  expressions?: string;
}

const OPS = ['add', 'update', 'delete'];

/** Codec of `dynset`. */
export const dynsetExpr = attrCodec<DynsetExpr>(
  'dynset',
  {
    set: [C.NFTA_DYNSET_SET_NAME, 'str', true],
    setId: [C.NFTA_DYNSET_SET_ID, 'u32'],
    op: [C.NFTA_DYNSET_OP, 'u32', true],
    sregKey: [C.NFTA_DYNSET_SREG_KEY, 'u32', true],
    sregData: [C.NFTA_DYNSET_SREG_DATA, 'u32'],
    timeoutMs: [C.NFTA_DYNSET_TIMEOUT, 'u64'],
    expr: [C.NFTA_DYNSET_EXPR, 'nested'],
    flags: [C.NFTA_DYNSET_FLAGS, 'u32'],
    expressions: [C.NFTA_DYNSET_EXPRESSIONS, 'nested'],
  },
  {
    describe: (e) =>
      `dynset ${OPS[e.op] ?? e.op} reg_key ${e.sregKey} set ${e.set}${e.sregData !== undefined ? ` sreg_data ${e.sregData}` : ''} timeout ${e.timeoutMs ?? 0}ms`,
    statement(e, ctx) {
      const op = OPS[e.op];
      if (op === undefined || e.expressions !== undefined || (e.flags ?? 0) !== 0) return undefined;
      const k = ctx.key?.(e.sregKey, e.set);
      if (!k || k.field.fullLen !== undefined) return undefined;
      const f = k.field;
      const stmt = e.expr !== undefined ? elementStatement(e.expr, ctx) : undefined;
      if (e.expr !== undefined && !stmt) return undefined;
      // a map's value: a constant of the map's type, or a field (nft's JSON has no form for it: its text, as nft -j writes it)
      const data = e.sregData === undefined ? undefined : ctx.reg(e.sregData);
      const value = data?.k === 'imm' ? ctx.mapValue?.(e.set, data.data) : data?.k === 'field' && data.field.fullLen === undefined ? data.field : undefined;
      const dep = data?.k === 'field' ? data.field : undefined;
      if (e.sregData !== undefined && !value) return undefined;
      const timeout = e.timeoutMs ? ` timeout ${durationText(e.timeoutMs)}` : '';
      const elem = e.timeoutMs ? { elem: { val: f.json, timeout: Math.floor(e.timeoutMs / 1000) } } : f.json;
      // nft's meter: a statement on an anonymous set, which nft lists nowhere else (netlink_parse_dynset(),
      // meter_stmt_print(), meter_stmt_json()); its name nft prints only for a dynamic one
      const info = ctx.setInfo?.(e.set);
      if (stmt && !value && info?.flags.includes('anonymous')) {
        if (!info.flags.includes('dynamic')) return undefined;
        const size = info.size ?? 0;
        return {
          stmt: {
            text: `meter ${e.set} size ${size} { ${f.text}${timeout} ${stmt.text} }`,
            json: { meter: { key: elem, stmt: stmt.json, size, name: e.set } },
          },
          consumes: k.regs,
          needsL2: f.l2,
          needsL3: f.l3,
          needsL4: f.l4,
        };
      }
      const text = `${op} @${e.set} { ${f.text}${timeout}${stmt ? ` ${stmt.text}` : ''}${value ? ` : ${value.text}` : ''} }`;
      return {
        stmt: { text, json: value ? text : { set: { op, elem, set: `@${e.set}`, ...(stmt && { stmt: [stmt.json] }) } } },
        consumes: [...k.regs, ...(e.sregData !== undefined ? [e.sregData] : [])],
        needsL2: f.l2 ?? dep?.l2,
        needsL3: f.l3 ?? dep?.l3,
        needsL4: f.l4 ?? dep?.l4,
      };
    },
  },
);

/** Statements an element may carry that nft prints in a set statement; a counter's counts are the template's, left out. */
const ELEMENT_STATEMENTS: ReadonlySet<string> = new Set(['counter', 'limit', 'quota', 'connlimit']);

/** The statement of NFTA_DYNSET_EXPR (hex: an expression's NFTA_EXPR_NAME and _DATA) as nft prints it in a set statement. */
function elementStatement(hex: string, ctx: PrintContext): Statement | undefined {
  const inner: ExprBase = decodeExpr({ type: C.NFTA_DYNSET_EXPR, isNested: true, netByteOrder: false, data: Buffer.from(hex, 'hex'), offset: 0 });
  if (!ELEMENT_STATEMENTS.has(inner.name)) return undefined;
  if (inner.name === 'counter') return { text: 'counter', json: { counter: null } };
  return exprCodec(inner.name)?.statement?.(inner, ctx)?.stmt;
}
