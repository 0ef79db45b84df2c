/**
 * The `range` expression (net/netfilter/nft_range.c): the rule goes on when
 * the register's value is (NFT_RANGE_EQ) or is not (NFT_RANGE_NEQ) between
 * two constants, inclusive. nft's `tcp dport != 1000-2000` (nft writes an
 * inclusive match as two `cmp`s, gte and lte, and uses `range` for `!=`).
 *
 * ```c
 * // nf_tables.h: enum nft_range_attributes
 * NFTA_RANGE_SREG        // NLA_U32 (big-endian): register
 * NFTA_RANGE_OP          // NLA_U32: enum nft_range_ops (NFT_RANGE_EQ, NFT_RANGE_NEQ)
 * NFTA_RANGE_FROM_DATA   // NLA_NESTED: struct nft_data, the low end
 * NFTA_RANGE_TO_DATA     // NLA_NESTED: struct nft_data, the high end
 * ```
 *
 * @module
 */
import { NetlinkDecodeError, UsageError } from '../../netlink/errors.js';
import * as C from '../constants.js';
import { be32, checkU32, encodeValue, needU32, valueAttr } from '../data.js';
import { REVERSED_RANGE, rangeEndText, rangeL2, rangeReversed } from '../print.js';
import type { ExprCodec } from './registry.js';

/** `range`. */
export interface RangeExpr {
  name: 'range';
  /** NFTA_RANGE_SREG */
  sreg: number;
  /** NFTA_RANGE_OP: `eq` or `neq` (`op(<n>)` when unknown) */
  op: string;
  /** NFTA_RANGE_FROM_DATA, wire bytes in hex */
  from: string;
  /** NFTA_RANGE_TO_DATA, wire bytes in hex */
  to: string;
}

/** Codec of `range`. */
export const rangeExpr: ExprCodec<RangeExpr> = {
  name: 'range',
  encode(e) {
    const op = e.op === 'eq' ? C.NFT_RANGE_EQ : e.op === 'neq' ? C.NFT_RANGE_NEQ : Number(/^op\((\d+)\)$/.exec(e.op)?.[1] ?? NaN);
    if (!Number.isInteger(op)) throw new UsageError(`range op '${e.op}': use eq or neq`);
    return [
      be32(C.NFTA_RANGE_SREG, checkU32(e.sreg, 'range sreg')),
      be32(C.NFTA_RANGE_OP, op),
      encodeValue(C.NFTA_RANGE_FROM_DATA, e.from, 'range from'),
      encodeValue(C.NFTA_RANGE_TO_DATA, e.to, 'range to'),
    ];
  },
  decode(l) {
    const op = needU32(l, C.NFTA_RANGE_OP, 'NFTA_RANGE_OP');
    const from = valueAttr(l, C.NFTA_RANGE_FROM_DATA);
    const to = valueAttr(l, C.NFTA_RANGE_TO_DATA);
    if (from === undefined || to === undefined) throw new NetlinkDecodeError('range without NFTA_RANGE_FROM_DATA or NFTA_RANGE_TO_DATA', l.offset);
    return {
      name: 'range',
      sreg: needU32(l, C.NFTA_RANGE_SREG, 'NFTA_RANGE_SREG'),
      op: op === C.NFT_RANGE_EQ ? 'eq' : op === C.NFT_RANGE_NEQ ? 'neq' : `op(${op})`,
      from,
      to,
    };
  },
  describe(e) {
    return `range ${e.op} reg ${e.sreg} 0x${e.from} 0x${e.to}`;
  },
  statement(e, ctx) {
    if (e.op !== 'eq' && e.op !== 'neq') return undefined;
    const r = ctx.reg(e.sreg);
    if (r?.k !== 'field' || r.field.fullLen !== undefined) return undefined;
    const lo = rangeEndText(e.from, r.field.type, ctx.ifname);
    const hi = rangeEndText(e.to, r.field.type, ctx.ifname);
    if (!lo || !hi || r.field.type === 'hex' || r.field.type === 'rawint') return undefined;
    const f = r.field;
    return {
      stmt: {
        text: `${f.text} ${e.op === 'neq' ? '!= ' : ''}${lo.text}-${hi.text}`,
        json: { match: { op: e.op === 'neq' ? '!=' : '==', left: f.json, right: { range: [lo.json, hi.json] } } },
        ...(rangeReversed(e.from, e.to, f.type) && { problem: REVERSED_RANGE }),
      },
      consumes: [e.sreg],
      needsL2: rangeL2(f),
      needsL3: f.l3,
      needsL4: f.l4,
    };
  },
};
