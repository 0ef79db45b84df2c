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
 * Printed when the key is one field nft names and there is no map value and
 * no element expression; otherwise raw.
 *
 * @module
 */
import * as C from '../constants.js';
import { durationText } from '../print.js';
import { attrCodec } from './registry.js';

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
      if (op === undefined || e.sregData !== undefined || e.expr !== undefined || e.expressions !== undefined || (e.flags ?? 0) !== 0) return undefined;
      const r = ctx.reg(e.sregKey);
      if (r?.k !== 'field' || r.field.fullLen !== undefined) return undefined;
      const f = r.field;
      const timeout = e.timeoutMs ? ` timeout ${durationText(e.timeoutMs)}` : '';
      const elem = e.timeoutMs ? { elem: { val: f.json, timeout: Math.floor(e.timeoutMs / 1000) } } : f.json;
      return {
        stmt: { text: `${op} @${e.set} { ${f.text}${timeout} }`, json: { set: { op, elem, set: `@${e.set}` } } },
        consumes: [e.sregKey],
        needsL3: f.l3,
        needsL4: f.l4,
      };
    },
  },
);
