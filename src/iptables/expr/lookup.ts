/**
 * The `lookup` expression (net/netfilter/nft_lookup.c): the rule goes on
 * only if the register's value is in the named set (or not in it, with
 * NFT_LOOKUP_F_INV). Expired elements of a `timeout` set no longer match.
 *
 * ```c
 * // nf_tables.h: enum nft_lookup_attributes
 * NFTA_LOOKUP_SET      // NLA_STRING, set name
 * NFTA_LOOKUP_SREG     // NLA_U32 (big-endian), register holding the key
 * NFTA_LOOKUP_DREG     // NLA_U32, for maps: register the value goes to
 * NFTA_LOOKUP_SET_ID   // NLA_U32, the set's NFTA_SET_ID when created in the same batch
 * NFTA_LOOKUP_FLAGS    // NLA_U32, enum nft_lookup_flags
 * ```
 * nft 1.0.6 sends SREG, SET, SET_ID.
 *
 * @module
 */
import { NetlinkDecodeError } from '../../netlink/errors.js';
import * as C from '../constants.js';
import { be32, checkU32, name as nameAttr, needU32 } from '../data.js';
import type { ExprCodec } from './registry.js';

/** `lookup`. */
export interface LookupExpr {
  name: 'lookup';
  /** NFTA_LOOKUP_SET: set name */
  set: string;
  /** NFTA_LOOKUP_SREG */
  sreg: number;
  /** NFTA_LOOKUP_DREG (maps) */
  dreg?: number;
  /** NFTA_LOOKUP_SET_ID */
  setId?: number;
  /** NFT_LOOKUP_F_INV: match when the key is **not** in the set */
  invert?: boolean;
}

/** Codec of `lookup`. */
export const lookupExpr: ExprCodec<LookupExpr> = {
  name: 'lookup',
  encode(e) {
    const out = [be32(C.NFTA_LOOKUP_SREG, checkU32(e.sreg, 'lookup sreg')), nameAttr(C.NFTA_LOOKUP_SET, e.set)];
    if (e.setId !== undefined) out.push(be32(C.NFTA_LOOKUP_SET_ID, checkU32(e.setId, 'lookup setId')));
    if (e.dreg !== undefined) out.push(be32(C.NFTA_LOOKUP_DREG, checkU32(e.dreg, 'lookup dreg')));
    if (e.invert) out.push(be32(C.NFTA_LOOKUP_FLAGS, C.NFT_LOOKUP_F_INV));
    return out;
  },
  decode(l) {
    const set = l.str(C.NFTA_LOOKUP_SET);
    if (set === undefined) throw new NetlinkDecodeError('lookup without NFTA_LOOKUP_SET', l.offset);
    const e: LookupExpr = { name: 'lookup', set, sreg: needU32(l, C.NFTA_LOOKUP_SREG, 'NFTA_LOOKUP_SREG') };
    const dreg = l.u32be(C.NFTA_LOOKUP_DREG);
    const setId = l.u32be(C.NFTA_LOOKUP_SET_ID);
    const flags = l.u32be(C.NFTA_LOOKUP_FLAGS);
    if (dreg !== undefined) e.dreg = dreg;
    if (setId !== undefined) e.setId = setId;
    if (flags !== undefined && flags & C.NFT_LOOKUP_F_INV) e.invert = true;
    return e;
  },
  describe(e) {
    return `lookup reg ${e.sreg} set ${e.set}${e.dreg !== undefined ? ` dreg ${e.dreg}` : ''}${e.invert ? ' 0x1' : ''}`;
  },
};
