/**
 * The `osf` expression (net/netfilter/nft_osf.c): passive OS fingerprinting,
 * the genre (or `genre:version`) of the SYN's sender loaded into a register
 * as a string: nft's `osf name "Linux"`, `osf ttl loose version "Linux:3.0"`.
 *
 * ```c
 * // nf_tables.h: enum nft_osf_attributes
 * NFTA_OSF_DREG    // NLA_U32, destination register (NFT_OSF_MAXGENRELEN bytes)
 * NFTA_OSF_TTL     // NLA_U8: 0 the TTL must match, 1 loose, 2 skip
 * NFTA_OSF_FLAGS   // NLA_U32, NFT_OSF_F_VERSION: the register holds `genre:version`
 * ```
 * Printed as nft 1.0.6 does (src/osf.c): `osf [ttl loose |ttl skip ]name|version`.
 *
 * @module
 */
import * as C from '../constants.js';
import { attrCodec } from './registry.js';

/** `osf`: NFTA_OSF_* as numbers. */
export interface OsfExpr {
  name: 'osf';
  dreg: number;
  ttl?: number;
  flags?: number;
}

/** NFTA_OSF_TTL values nft names (0, the default, prints nothing). */
const TTL_NAMES = ['', 'loose', 'skip'];

/** Codec of `osf`. */
export const osfExpr = attrCodec<OsfExpr>(
  'osf',
  { dreg: [C.NFTA_OSF_DREG, 'u32', true], ttl: [C.NFTA_OSF_TTL, 'u8'], flags: [C.NFTA_OSF_FLAGS, 'u32'] },
  {
    describe: (e) => `osf dreg ${e.dreg}${e.ttl ? ` ttl ${e.ttl}` : ''}${e.flags ? ` flags ${e.flags}` : ''}`,
    field(e) {
      const ttl = TTL_NAMES[e.ttl ?? 0];
      if (ttl === undefined || (e.flags ?? 0) & ~C.NFT_OSF_F_VERSION) return undefined;
      const key = (e.flags ?? 0) & C.NFT_OSF_F_VERSION ? 'version' : 'name';
      return {
        dreg: e.dreg,
        field: { text: `osf ${ttl ? `ttl ${ttl} ` : ''}${key}`, json: { osf: { key, ...(ttl && { ttl }) } }, type: 'string' },
        len: C.NFT_OSF_MAXGENRELEN,
      };
    },
    writes: (e) => [e.dreg],
  },
);
