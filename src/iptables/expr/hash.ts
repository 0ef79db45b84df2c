/**
 * The `hash` expression (net/netfilter/nft_hash.c): a Jenkins hash of `len`
 * bytes of a register (nft's `jhash ip saddr mod 4 seed 0x1 offset 10`) or
 * the symmetric hash of the flow (`symhash mod 2`), modulo `modulus`, plus
 * `offset`, into a register.
 *
 * ```c
 * // nf_tables.h: enum nft_hash_attributes
 * NFTA_HASH_SREG      // NLA_U32, register hashed (jhash)
 * NFTA_HASH_DREG      // NLA_U32, destination register
 * NFTA_HASH_LEN       // NLA_U32, bytes hashed (jhash)
 * NFTA_HASH_MODULUS   // NLA_U32
 * NFTA_HASH_SEED      // NLA_U32 (jhash; nft prints `seed` when it is sent)
 * NFTA_HASH_OFFSET    // NLA_U32
 * NFTA_HASH_TYPE      // NLA_U32, enum nft_hash_types: NFT_HASH_JENKINS, NFT_HASH_SYM
 * ```
 *
 * @module
 */
import * as C from '../constants.js';
import { nftJsonInt } from '../print.js';
import { attrCodec } from './registry.js';

/** `hash`: NFTA_HASH_* as numbers. */
export interface HashExpr {
  name: 'hash';
  sreg?: number;
  dreg: number;
  len?: number;
  modulus: number;
  seed?: number;
  offset?: number;
  /** NFT_HASH_JENKINS (0, `jhash`) or NFT_HASH_SYM (1, `symhash`); absent means jhash */
  type?: number;
}

/** Codec of `hash`. */
export const hashExpr = attrCodec<HashExpr>(
  'hash',
  {
    sreg: [C.NFTA_HASH_SREG, 'u32'],
    dreg: [C.NFTA_HASH_DREG, 'u32', true],
    len: [C.NFTA_HASH_LEN, 'u32'],
    modulus: [C.NFTA_HASH_MODULUS, 'u32', true],
    seed: [C.NFTA_HASH_SEED, 'u32'],
    offset: [C.NFTA_HASH_OFFSET, 'u32'],
    type: [C.NFTA_HASH_TYPE, 'u32'],
  },
  {
    describe: (e) =>
      `hash reg ${e.dreg} = ${e.type === C.NFT_HASH_SYM ? 'symhash' : `jhash(reg ${e.sreg}, ${e.len}, 0x${(e.seed ?? 0).toString(16)})`} % mod ${e.modulus} offset ${e.offset ?? 0}`,
    field(e, ctx) {
      const offset = e.offset ?? 0;
      const tail = { text: ` mod ${e.modulus}${e.seed !== undefined ? ` seed 0x${e.seed.toString(16)}` : ''}${offset ? ` offset ${offset}` : ''}` };
      const common = { mod: nftJsonInt(e.modulus), ...(e.seed !== undefined && { seed: e.seed }), ...(offset && { offset }) };
      if (e.type === C.NFT_HASH_SYM) {
        return { dreg: e.dreg, field: { text: `symhash${tail.text}`, json: { symhash: common }, type: 'uint_he' } };
      }
      if ((e.type ?? C.NFT_HASH_JENKINS) !== C.NFT_HASH_JENKINS || e.sreg === undefined) return undefined;
      // the hashed bytes must be exactly fields nft names: one (`jhash ip saddr`), or a concatenation
      // from the register on (`jhash ip saddr . tcp dport`, each part in its own 4-byte word)
      const c = e.len !== undefined ? ctx.concat?.(e.sreg, e.len) : undefined;
      if (!c) return undefined;
      const f = c.field;
      return {
        dreg: e.dreg,
        from: c.regs,
        field: { text: `jhash ${f.text}${tail.text}`, json: { jhash: { ...common, expr: f.json } }, type: 'uint_he', l2: f.l2, l3: f.l3, l4: f.l4 },
      };
    },
  },
);
