/**
 * The `byteorder` expression (net/netfilter/nft_byteorder.c): convert a
 * register between host and network byte order. nft adds one before
 * comparing a host-order value (a mark) with a range or an ordering:
 * `meta mark 0x1-0x5` is `meta load mark`, `byteorder hton`, `cmp gte`, `cmp lte`.
 *
 * ```c
 * // nf_tables.h: enum nft_byteorder_attributes
 * NFTA_BYTEORDER_SREG   // NLA_U32 (big-endian): source register
 * NFTA_BYTEORDER_DREG   // NLA_U32: destination register
 * NFTA_BYTEORDER_OP     // NLA_U32: enum nft_byteorder_ops (NFT_BYTEORDER_NTOH, NFT_BYTEORDER_HTON)
 * NFTA_BYTEORDER_LEN    // NLA_U32: bytes to convert
 * NFTA_BYTEORDER_SIZE   // NLA_U32: size of each value, bytes (2, 4 or 8)
 * ```
 * A host-order mark or integer converted whole to network order keeps its
 * field name (`meta mark`, `ct mark`); anything else unbinds the register.
 *
 * @module
 */
import { UsageError } from '../../netlink/errors.js';
import * as C from '../constants.js';
import { be32, checkU32, needU32 } from '../data.js';
import type { ValueType } from '../print.js';
import type { ExprCodec } from './registry.js';

/** `byteorder`. */
export interface ByteorderExpr {
  name: 'byteorder';
  /** NFTA_BYTEORDER_SREG */
  sreg: number;
  /** NFTA_BYTEORDER_DREG */
  dreg: number;
  /** NFTA_BYTEORDER_OP: `ntoh` or `hton` (`op(<n>)` when unknown) */
  op: string;
  /** NFTA_BYTEORDER_LEN: bytes */
  len: number;
  /** NFTA_BYTEORDER_SIZE: bytes per value */
  size: number;
}

/** Host-order types and the same values in network order. */
const TO_BIG: Partial<Record<ValueType, ValueType>> = {
  mark: 'mark_be',
  uint_he: 'uint_be',
  hour: 'hour_be',
  date: 'date_be',
  tchandle: 'tchandle_be',
  time_ms: 'time_ms_be',
};

/** Codec of `byteorder`. */
export const byteorderExpr: ExprCodec<ByteorderExpr> = {
  name: 'byteorder',
  encode(e) {
    const op = e.op === 'ntoh' ? C.NFT_BYTEORDER_NTOH : e.op === 'hton' ? C.NFT_BYTEORDER_HTON : Number(/^op\((\d+)\)$/.exec(e.op)?.[1] ?? NaN);
    if (!Number.isInteger(op)) throw new UsageError(`byteorder op '${e.op}': use ntoh or hton`);
    return [
      be32(C.NFTA_BYTEORDER_SREG, checkU32(e.sreg, 'byteorder sreg')),
      be32(C.NFTA_BYTEORDER_DREG, checkU32(e.dreg, 'byteorder dreg')),
      be32(C.NFTA_BYTEORDER_OP, op),
      be32(C.NFTA_BYTEORDER_LEN, checkU32(e.len, 'byteorder len')),
      be32(C.NFTA_BYTEORDER_SIZE, checkU32(e.size, 'byteorder size')),
    ];
  },
  decode(l) {
    const op = needU32(l, C.NFTA_BYTEORDER_OP, 'NFTA_BYTEORDER_OP');
    return {
      name: 'byteorder',
      sreg: needU32(l, C.NFTA_BYTEORDER_SREG, 'NFTA_BYTEORDER_SREG'),
      dreg: needU32(l, C.NFTA_BYTEORDER_DREG, 'NFTA_BYTEORDER_DREG'),
      op: op === C.NFT_BYTEORDER_NTOH ? 'ntoh' : op === C.NFT_BYTEORDER_HTON ? 'hton' : `op(${op})`,
      len: needU32(l, C.NFTA_BYTEORDER_LEN, 'NFTA_BYTEORDER_LEN'),
      size: needU32(l, C.NFTA_BYTEORDER_SIZE, 'NFTA_BYTEORDER_SIZE'),
    };
  },
  describe(e) {
    return `byteorder reg ${e.dreg} = ${e.op}(reg ${e.sreg}, ${e.size}, ${e.len})`;
  },
  field(e, ctx) {
    const r = ctx.reg(e.sreg);
    // fewer bytes than one value (nft's `hton(reg, 2, 1)` of a 1-byte `meta l4proto` in an interval concatenation):
    // the kernel converts no value, the register keeps the field
    if (r?.k === 'field' && e.len === 1 && e.size > 1 && (e.op === 'hton' || e.op === 'ntoh')) return { dreg: e.dreg, field: r.field, from: e.sreg, len: 1 };
    if (e.op !== 'hton' || r?.k !== 'field' || e.len !== e.size || (e.size !== 2 && e.size !== 4 && e.size !== 8)) return undefined;
    const big = TO_BIG[r.field.type];
    return big ? { dreg: e.dreg, field: { ...r.field, type: big }, from: e.sreg, len: e.len } : undefined;
  },
  writes(e) {
    return [e.dreg];
  },
};
