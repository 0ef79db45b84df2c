/**
 * The `cmp` expression (net/netfilter/nft_cmp.c): compare a register with a
 * constant; the rule stops (NFT_BREAK) when the comparison is false.
 *
 * ```c
 * // nf_tables.h: enum nft_cmp_attributes
 * NFTA_CMP_SREG   // NLA_U32 (big-endian), register
 * NFTA_CMP_OP     // NLA_U32, enum nft_cmp_ops: EQ, NEQ, LT, LTE, GT, GTE
 * NFTA_CMP_DATA   // NLA_NESTED, struct nft_data (NFTA_DATA_VALUE)
 * ```
 *
 * @module
 */
import { UsageError } from '../../netlink/errors.js';
import * as C from '../constants.js';
import { be32, checkU32, encodeValue, needU32, valueAttr } from '../data.js';
import { CMP_OP_NAMES } from '../names.js';
import type { ExprCodec } from './registry.js';
import { NetlinkDecodeError } from '../../netlink/errors.js';

/** `cmp`: `reg <op> data`. */
export interface CmpExpr {
  name: 'cmp';
  /** NFTA_CMP_SREG */
  sreg: number;
  /** `eq`, `neq`, `lt`, `lte`, `gt`, `gte` (`op(<n>)` when unknown) */
  op: string;
  /** the constant, wire bytes in hex (e.g. `a9fefffe`, `06`) */
  data: string;
}

function opNumber(op: string): number {
  const i = CMP_OP_NAMES.indexOf(op);
  if (i >= 0) return i;
  const m = /^op\((\d+)\)$/.exec(op);
  if (m) return Number(m[1]);
  throw new UsageError(`cmp op '${op}': use ${CMP_OP_NAMES.join(', ')}`);
}

/** Codec of `cmp`. */
export const cmpExpr: ExprCodec<CmpExpr> = {
  name: 'cmp',
  encode(e) {
    return [be32(C.NFTA_CMP_SREG, checkU32(e.sreg, 'cmp sreg')), be32(C.NFTA_CMP_OP, opNumber(e.op)), encodeValue(C.NFTA_CMP_DATA, e.data, 'cmp data')];
  },
  decode(l) {
    const op = needU32(l, C.NFTA_CMP_OP, 'NFTA_CMP_OP');
    const data = valueAttr(l, C.NFTA_CMP_DATA);
    if (data === undefined) throw new NetlinkDecodeError('cmp without NFTA_CMP_DATA', l.offset);
    return { name: 'cmp', sreg: needU32(l, C.NFTA_CMP_SREG, 'NFTA_CMP_SREG'), op: CMP_OP_NAMES[op] ?? `op(${op})`, data };
  },
  describe(e) {
    return `cmp ${e.op} reg ${e.sreg} 0x${e.data}`;
  },
};
