/**
 * The `numgen` expression (net/netfilter/nft_numgen.c): a number from a
 * counter or at random, modulo `modulus`, plus `offset`, into a register:
 * nft's `numgen inc mod 2 offset 10`, read by `meta mark set ...` or a map
 * (`numgen random mod 2 vmap { 0 : accept, 1 : drop }`).
 *
 * ```c
 * // nf_tables.h: enum nft_ng_attributes
 * NFTA_NG_DREG      // NLA_U32, destination register
 * NFTA_NG_MODULUS   // NLA_U32
 * NFTA_NG_TYPE      // NLA_U32, enum nft_ng_types: NFT_NG_INCREMENTAL, NFT_NG_RANDOM
 * NFTA_NG_OFFSET    // NLA_U32
 * ```
 *
 * @module
 */
import * as C from '../constants.js';
import { nftJsonInt } from '../print.js';
import { attrCodec } from './registry.js';

/** `numgen`: NFTA_NG_* as numbers. */
export interface NumgenExpr {
  name: 'numgen';
  dreg: number;
  modulus: number;
  /** NFT_NG_INCREMENTAL (0, `inc`) or NFT_NG_RANDOM (1, `random`) */
  type: number;
  offset?: number;
}

const MODES = ['inc', 'random'];

/** Codec of `numgen`. */
export const numgenExpr = attrCodec<NumgenExpr>(
  'numgen',
  { dreg: [C.NFTA_NG_DREG, 'u32', true], modulus: [C.NFTA_NG_MODULUS, 'u32', true], type: [C.NFTA_NG_TYPE, 'u32', true], offset: [C.NFTA_NG_OFFSET, 'u32'] },
  {
    describe: (e) => `numgen reg ${e.dreg} = ${MODES[e.type] ?? e.type} mod ${e.modulus} offset ${e.offset ?? 0}`,
    field(e) {
      const mode = MODES[e.type];
      if (mode === undefined) return undefined;
      const offset = e.offset ?? 0;
      return {
        dreg: e.dreg,
        field: {
          text: `numgen ${mode} mod ${e.modulus}${offset ? ` offset ${offset}` : ''}`,
          json: { numgen: { mode, mod: nftJsonInt(e.modulus), offset } },
          type: 'uint_he',
        },
      };
    },
  },
);
