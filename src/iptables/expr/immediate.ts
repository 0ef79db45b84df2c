/**
 * The `immediate` expression (net/netfilter/nft_immediate.c): load a
 * constant into a data register, or a verdict into NFT_REG_VERDICT (0).
 *
 * ```c
 * // nf_tables.h: enum nft_immediate_attributes
 * NFTA_IMMEDIATE_DREG   // NLA_U32 (big-endian)
 * NFTA_IMMEDIATE_DATA   // NLA_NESTED, struct nft_data (value or verdict)
 * ```
 * `meta mark set 0x1` loads the mark in host byte order (`01000000` on
 * little-endian machines), as nft does.
 *
 * @module
 */
import { NetlinkDecodeError, UsageError } from '../../netlink/errors.js';
import * as C from '../constants.js';
import { be32, checkU32, dataAttr, encodeData, needU32, type NftVerdict } from '../data.js';
import type { ExprCodec } from './registry.js';

/** `immediate`: exactly one of `data` and `verdict`. */
export interface ImmediateExpr {
  name: 'immediate';
  /** NFTA_IMMEDIATE_DREG: 0 (NFT_REG_VERDICT) for verdicts */
  dreg: number;
  /** a value, wire bytes in hex */
  data?: string;
  /** a verdict (`accept`, `drop`, `jump` + chain...) */
  verdict?: NftVerdict;
}

/** Codec of `immediate`. */
export const immediateExpr: ExprCodec<ImmediateExpr> = {
  name: 'immediate',
  encode(e) {
    if ((e.data === undefined) === (e.verdict === undefined)) throw new UsageError('immediate expression: give exactly one of data and verdict');
    return [
      be32(C.NFTA_IMMEDIATE_DREG, checkU32(e.dreg, 'immediate dreg')),
      encodeData(C.NFTA_IMMEDIATE_DATA, { value: e.data, verdict: e.verdict }, 'immediate data'),
    ];
  },
  decode(l) {
    const d = dataAttr(l, C.NFTA_IMMEDIATE_DATA);
    if (!d) throw new NetlinkDecodeError('immediate without NFTA_IMMEDIATE_DATA', l.offset);
    const e: ImmediateExpr = { name: 'immediate', dreg: needU32(l, C.NFTA_IMMEDIATE_DREG, 'NFTA_IMMEDIATE_DREG') };
    if (d.value !== undefined) e.data = d.value;
    if (d.verdict !== undefined) e.verdict = d.verdict;
    return e;
  },
  describe(e) {
    if (e.verdict) return `immediate reg ${e.dreg} ${e.verdict.code}${e.verdict.chain !== undefined ? ` -> ${e.verdict.chain}` : ''}`;
    return `immediate reg ${e.dreg} 0x${e.data}`;
  },
};
