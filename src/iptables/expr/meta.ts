/**
 * The `meta` expression (net/netfilter/nft_meta.c): load packet metadata
 * into a register (`meta load mark => reg 1`, NFTA_META_DREG), or set it from
 * a register (`meta set mark with reg 1`, NFTA_META_SREG) — `meta mark set 1`
 * is an `immediate` into a register followed by a meta **set**.
 *
 * ```c
 * // nf_tables.h: enum nft_meta_attributes
 * NFTA_META_DREG   // NLA_U32, destination register (load)
 * NFTA_META_KEY    // NLA_U32, enum nft_meta_keys
 * NFTA_META_SREG   // NLA_U32, source register (set)
 * ```
 * All u32 big-endian. nft 1.0.6 sends KEY first, then DREG or SREG.
 *
 * @module
 */
import { UsageError } from '../../netlink/errors.js';
import * as C from '../constants.js';
import { be32, checkU32, needU32 } from '../data.js';
import { metaKeyName, metaKeyNumber } from '../names.js';
import type { ExprCodec } from './registry.js';

/** `meta`: exactly one of `dreg` (load) and `sreg` (set). */
export interface MetaExpr {
  name: 'meta';
  /** key as nft names it: `mark`, `l4proto`, `nfproto`, `oif`... (`key(<n>)` when unnamed) */
  key: string;
  /** NFTA_META_DREG: register loaded (NFT_REG_1 = 1...) */
  dreg?: number;
  /** NFTA_META_SREG: register the value is taken from */
  sreg?: number;
}

/** Codec of `meta`. */
export const metaExpr: ExprCodec<MetaExpr> = {
  name: 'meta',
  encode(e) {
    if ((e.dreg === undefined) === (e.sreg === undefined)) throw new UsageError('meta expression: give exactly one of dreg (load) and sreg (set)');
    const key = be32(C.NFTA_META_KEY, metaKeyNumber(e.key));
    return e.dreg !== undefined ? [key, be32(C.NFTA_META_DREG, checkU32(e.dreg, 'meta dreg'))] : [key, be32(C.NFTA_META_SREG, checkU32(e.sreg!, 'meta sreg'))];
  },
  decode(l) {
    const e: MetaExpr = { name: 'meta', key: metaKeyName(needU32(l, C.NFTA_META_KEY, 'NFTA_META_KEY')) };
    const dreg = l.u32be(C.NFTA_META_DREG);
    const sreg = l.u32be(C.NFTA_META_SREG);
    if (dreg !== undefined) e.dreg = dreg;
    if (sreg !== undefined) e.sreg = sreg;
    return e;
  },
  describe(e) {
    return e.sreg !== undefined ? `meta set ${e.key} with reg ${e.sreg}` : `meta load ${e.key} => reg ${e.dreg}`;
  },
};
