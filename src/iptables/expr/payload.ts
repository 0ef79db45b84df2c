/**
 * The `payload` expression (net/netfilter/nft_payload.c): load `len` bytes
 * at `offset` from a header base into a register, or (with SREG) write a
 * register into the packet.
 *
 * ```c
 * // nf_tables.h: enum nft_payload_attributes (all NLA_U32, big-endian)
 * NFTA_PAYLOAD_DREG         // destination register (load)
 * NFTA_PAYLOAD_BASE         // enum nft_payload_bases: LL, NETWORK, TRANSPORT, INNER
 * NFTA_PAYLOAD_OFFSET       // bytes from the base
 * NFTA_PAYLOAD_LEN          // bytes
 * NFTA_PAYLOAD_SREG         // source register (set)
 * NFTA_PAYLOAD_CSUM_TYPE    // enum nft_payload_csum_types (set)
 * NFTA_PAYLOAD_CSUM_OFFSET
 * NFTA_PAYLOAD_CSUM_FLAGS
 * ```
 * nft 1.0.6 sends DREG, BASE, OFFSET, LEN for a load.
 *
 * @module
 */
import { UsageError } from '../../netlink/errors.js';
import * as C from '../constants.js';
import { be32, checkU32, needU32 } from '../data.js';
import { PAYLOAD_BASE_NAMES } from '../names.js';
import type { ExprCodec } from './registry.js';

/** `payload`: a load (dreg) or a set (sreg). */
export interface PayloadExpr {
  name: 'payload';
  /** `link`, `network` or `transport` header (`inner`; `base(<n>)` when unknown) */
  base: string;
  /** bytes from the start of the base header */
  offset: number;
  /** bytes */
  len: number;
  /** NFTA_PAYLOAD_DREG (load) */
  dreg?: number;
  /** NFTA_PAYLOAD_SREG (set) */
  sreg?: number;
  /** NFTA_PAYLOAD_CSUM_TYPE (set) */
  csumType?: number;
  /** NFTA_PAYLOAD_CSUM_OFFSET (set) */
  csumOffset?: number;
  /** NFTA_PAYLOAD_CSUM_FLAGS (set) */
  csumFlags?: number;
}

function baseNumber(base: string): number {
  const i = PAYLOAD_BASE_NAMES.indexOf(base);
  if (i >= 0) return i;
  const m = /^base\((\d+)\)$/.exec(base);
  if (m) return Number(m[1]);
  throw new UsageError(`payload base '${base}': use ${PAYLOAD_BASE_NAMES.join(', ')}`);
}

/** Codec of `payload`. */
export const payloadExpr: ExprCodec<PayloadExpr> = {
  name: 'payload',
  encode(e) {
    if ((e.dreg === undefined) === (e.sreg === undefined)) throw new UsageError('payload expression: give exactly one of dreg (load) and sreg (set)');
    const where = [
      be32(C.NFTA_PAYLOAD_BASE, baseNumber(e.base)),
      be32(C.NFTA_PAYLOAD_OFFSET, checkU32(e.offset, 'payload offset')),
      be32(C.NFTA_PAYLOAD_LEN, checkU32(e.len, 'payload len')),
    ];
    if (e.dreg !== undefined) return [be32(C.NFTA_PAYLOAD_DREG, checkU32(e.dreg, 'payload dreg')), ...where];
    const out = [be32(C.NFTA_PAYLOAD_SREG, checkU32(e.sreg!, 'payload sreg')), ...where];
    if (e.csumType !== undefined) out.push(be32(C.NFTA_PAYLOAD_CSUM_TYPE, checkU32(e.csumType, 'payload csumType')));
    if (e.csumOffset !== undefined) out.push(be32(C.NFTA_PAYLOAD_CSUM_OFFSET, checkU32(e.csumOffset, 'payload csumOffset')));
    if (e.csumFlags !== undefined) out.push(be32(C.NFTA_PAYLOAD_CSUM_FLAGS, checkU32(e.csumFlags, 'payload csumFlags')));
    return out;
  },
  decode(l) {
    const b = needU32(l, C.NFTA_PAYLOAD_BASE, 'NFTA_PAYLOAD_BASE');
    const e: PayloadExpr = {
      name: 'payload',
      base: PAYLOAD_BASE_NAMES[b] ?? `base(${b})`,
      offset: needU32(l, C.NFTA_PAYLOAD_OFFSET, 'NFTA_PAYLOAD_OFFSET'),
      len: needU32(l, C.NFTA_PAYLOAD_LEN, 'NFTA_PAYLOAD_LEN'),
    };
    const opt: Array<[keyof PayloadExpr, number]> = [
      ['dreg', C.NFTA_PAYLOAD_DREG],
      ['sreg', C.NFTA_PAYLOAD_SREG],
      ['csumType', C.NFTA_PAYLOAD_CSUM_TYPE],
      ['csumOffset', C.NFTA_PAYLOAD_CSUM_OFFSET],
      ['csumFlags', C.NFTA_PAYLOAD_CSUM_FLAGS],
    ];
    for (const [k, t] of opt) {
      const v = l.u32be(t);
      if (v !== undefined) (e as unknown as Record<string, number>)[k] = v;
    }
    return e;
  },
  describe(e) {
    return e.sreg !== undefined
      ? `payload write reg ${e.sreg} => ${e.len}b @ ${e.base} header + ${e.offset}`
      : `payload load ${e.len}b @ ${e.base} header + ${e.offset} => reg ${e.dreg}`;
  },
};
