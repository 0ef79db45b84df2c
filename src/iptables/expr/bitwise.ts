/**
 * The `bitwise` expression (net/netfilter/nft_bitwise.c):
 * `dreg = (sreg & mask) ^ xor` (op NFT_BITWISE_MASK_XOR, formerly BOOL), or a
 * shift by `data` (NFT_BITWISE_LSHIFT / RSHIFT).
 *
 * ```c
 * // nf_tables.h: enum nft_bitwise_attributes
 * NFTA_BITWISE_SREG   // NLA_U32 (big-endian)
 * NFTA_BITWISE_DREG   // NLA_U32
 * NFTA_BITWISE_LEN    // NLA_U32, bytes
 * NFTA_BITWISE_MASK   // NLA_NESTED, struct nft_data
 * NFTA_BITWISE_XOR    // NLA_NESTED, struct nft_data
 * NFTA_BITWISE_OP     // NLA_U32, enum nft_bitwise_ops
 * NFTA_BITWISE_DATA   // NLA_NESTED, shift amount
 * ```
 * nft 1.0.6 sends SREG, DREG, OP, LEN, MASK, XOR.
 *
 * @module
 */
import { UsageError } from '../../netlink/errors.js';
import * as C from '../constants.js';
import { be32, checkU32, encodeValue, needU32, valueAttr } from '../data.js';
import type { ExprCodec } from './registry.js';

const OPS = ['mask_xor', 'lshift', 'rshift'];

/** `bitwise`. */
export interface BitwiseExpr {
  name: 'bitwise';
  /** NFTA_BITWISE_SREG */
  sreg: number;
  /** NFTA_BITWISE_DREG */
  dreg: number;
  /** NFTA_BITWISE_LEN: bytes */
  len: number;
  /** NFTA_BITWISE_OP: `mask_xor` (default when absent), `lshift`, `rshift` (`op(<n>)` when unknown) */
  op?: string;
  /** NFTA_BITWISE_MASK, hex */
  mask?: string;
  /** NFTA_BITWISE_XOR, hex */
  xor?: string;
  /** NFTA_BITWISE_DATA (shift amount), hex */
  data?: string;
}

function opNumber(op: string): number {
  const i = OPS.indexOf(op);
  if (i >= 0) return i;
  const m = /^op\((\d+)\)$/.exec(op);
  if (m) return Number(m[1]);
  throw new UsageError(`bitwise op '${op}': use ${OPS.join(', ')}`);
}

/** Codec of `bitwise`. */
export const bitwiseExpr: ExprCodec<BitwiseExpr> = {
  name: 'bitwise',
  encode(e) {
    const out = [be32(C.NFTA_BITWISE_SREG, checkU32(e.sreg, 'bitwise sreg')), be32(C.NFTA_BITWISE_DREG, checkU32(e.dreg, 'bitwise dreg'))];
    if (e.op !== undefined) out.push(be32(C.NFTA_BITWISE_OP, opNumber(e.op)));
    out.push(be32(C.NFTA_BITWISE_LEN, checkU32(e.len, 'bitwise len')));
    if (e.mask !== undefined) out.push(encodeValue(C.NFTA_BITWISE_MASK, e.mask, 'bitwise mask'));
    if (e.xor !== undefined) out.push(encodeValue(C.NFTA_BITWISE_XOR, e.xor, 'bitwise xor'));
    if (e.data !== undefined) out.push(encodeValue(C.NFTA_BITWISE_DATA, e.data, 'bitwise data'));
    return out;
  },
  decode(l) {
    const e: BitwiseExpr = {
      name: 'bitwise',
      sreg: needU32(l, C.NFTA_BITWISE_SREG, 'NFTA_BITWISE_SREG'),
      dreg: needU32(l, C.NFTA_BITWISE_DREG, 'NFTA_BITWISE_DREG'),
      len: needU32(l, C.NFTA_BITWISE_LEN, 'NFTA_BITWISE_LEN'),
    };
    const op = l.u32be(C.NFTA_BITWISE_OP);
    if (op !== undefined) e.op = OPS[op] ?? `op(${op})`;
    const mask = valueAttr(l, C.NFTA_BITWISE_MASK);
    const xor = valueAttr(l, C.NFTA_BITWISE_XOR);
    const data = valueAttr(l, C.NFTA_BITWISE_DATA);
    if (mask !== undefined) e.mask = mask;
    if (xor !== undefined) e.xor = xor;
    if (data !== undefined) e.data = data;
    return e;
  },
  describe(e) {
    if (e.op === 'lshift' || e.op === 'rshift') return `bitwise reg ${e.dreg} = ( reg ${e.sreg} ${e.op === 'lshift' ? '<<' : '>>'} 0x${e.data ?? ''} )`;
    return `bitwise reg ${e.dreg} = ( reg ${e.sreg} & 0x${e.mask ?? ''} ) ^ 0x${e.xor ?? ''}`;
  },
};
