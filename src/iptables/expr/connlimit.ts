/**
 * The `connlimit` expression (net/netfilter/nft_connlimit.c): the rule goes
 * on while the connections counted for this rule stay at or under `count`,
 * or with NFT_CONNLIMIT_F_INV (`over`) once they exceed it. nft's
 * `ct count 5`, `ct count over 2`.
 *
 * ```c
 * // nf_tables.h: enum nft_connlimit_attributes
 * NFTA_CONNLIMIT_COUNT   // NLA_U32 (big-endian): connections
 * NFTA_CONNLIMIT_FLAGS   // NLA_U32: enum nft_connlimit_flags (NFT_CONNLIMIT_F_INV)
 * ```
 *
 * @module
 */
import * as C from '../constants.js';
import { be32, checkU32, needU32 } from '../data.js';
import { nftJsonInt } from '../print.js';
import type { ExprCodec } from './registry.js';

/** `connlimit`. */
export interface ConnlimitExpr {
  name: 'connlimit';
  /** NFTA_CONNLIMIT_COUNT */
  count: number;
  /** NFT_CONNLIMIT_F_INV: `over` */
  inv?: boolean;
}

/** Codec of `connlimit`. */
export const connlimitExpr: ExprCodec<ConnlimitExpr> = {
  name: 'connlimit',
  encode(e) {
    return [be32(C.NFTA_CONNLIMIT_COUNT, checkU32(e.count, 'connlimit count')), be32(C.NFTA_CONNLIMIT_FLAGS, e.inv ? C.NFT_CONNLIMIT_F_INV : 0)];
  },
  decode(l) {
    const e: ConnlimitExpr = { name: 'connlimit', count: needU32(l, C.NFTA_CONNLIMIT_COUNT, 'NFTA_CONNLIMIT_COUNT') };
    if ((l.u32be(C.NFTA_CONNLIMIT_FLAGS) ?? 0) & C.NFT_CONNLIMIT_F_INV) e.inv = true;
    return e;
  },
  describe(e) {
    return `connlimit count ${e.count} flags ${e.inv ? 1 : 0}`;
  },
  statement(e) {
    return { stmt: { text: `ct count ${e.inv ? 'over ' : ''}${e.count}`, json: { 'ct count': { val: nftJsonInt(e.count), ...(e.inv && { inv: true }) } } } };
  },
};
