/**
 * The `masq` expression (net/netfilter/nft_masq.c): source NAT to the
 * address of the outgoing device, optionally to a port range. nft's
 * `masquerade`, `masquerade to :1024-2048`, `masquerade random,persistent`.
 *
 * ```c
 * // nf_tables.h: enum nft_masq_attributes
 * NFTA_MASQ_FLAGS           // NLA_U32 (big-endian): NF_NAT_RANGE_* of linux/netfilter/nf_nat.h
 * NFTA_MASQ_REG_PROTO_MIN   // NLA_U32: register holding the first port (big-endian u16)
 * NFTA_MASQ_REG_PROTO_MAX   // NLA_U32: register holding the last port
 * ```
 *
 * @module
 */
import * as C from '../constants.js';
import { be32, checkU32 } from '../data.js';
import type { PrintContext, PrintedStatement } from '../print.js';
import { natFlagsPrinted, natPorts } from './nat.js';
import type { ExprCodec } from './registry.js';

/** `masq`. */
export interface MasqExpr {
  name: 'masq';
  /** NFTA_MASQ_FLAGS (NF_NAT_RANGE_*) */
  flags?: number;
  /** NFTA_MASQ_REG_PROTO_MIN */
  regProtoMin?: number;
  /** NFTA_MASQ_REG_PROTO_MAX */
  regProtoMax?: number;
}

/**
 * `masquerade` / `redirect` printed: the word, then `to :ports`, then the flags.
 * Used by masq.ts and redir.ts.
 */
export function portsStatement(
  word: 'masquerade' | 'redirect',
  e: { flags?: number; regProtoMin?: number; regProtoMax?: number },
  ctx: PrintContext,
): PrintedStatement | undefined {
  const ports = natPorts(ctx, e.regProtoMin, e.regProtoMax);
  const flags = natFlagsPrinted(e.flags ?? 0);
  if (ports === undefined || !flags) return undefined;
  const json: Record<string, unknown> = {};
  if (ports) json.port = ports.json;
  if (flags.json !== undefined) json.flags = flags.json;
  const consumes = [e.regProtoMin, e.regProtoMax].filter((r): r is number => r !== undefined);
  return { stmt: { text: `${word}${ports ? ` to :${ports.text}` : ''}${flags.text}`, json: { [word]: Object.keys(json).length ? json : null } }, consumes };
}

/** Codec of `masq`. */
export const masqExpr: ExprCodec<MasqExpr> = {
  name: 'masq',
  encode(e) {
    const out: Buffer[] = [];
    if (e.flags !== undefined) out.push(be32(C.NFTA_MASQ_FLAGS, checkU32(e.flags, 'masq flags')));
    if (e.regProtoMin !== undefined) out.push(be32(C.NFTA_MASQ_REG_PROTO_MIN, checkU32(e.regProtoMin, 'masq regProtoMin')));
    if (e.regProtoMax !== undefined) out.push(be32(C.NFTA_MASQ_REG_PROTO_MAX, checkU32(e.regProtoMax, 'masq regProtoMax')));
    return out;
  },
  decode(l) {
    const e: MasqExpr = { name: 'masq' };
    const flags = l.u32be(C.NFTA_MASQ_FLAGS);
    const min = l.u32be(C.NFTA_MASQ_REG_PROTO_MIN);
    const max = l.u32be(C.NFTA_MASQ_REG_PROTO_MAX);
    if (flags !== undefined) e.flags = flags;
    if (min !== undefined) e.regProtoMin = min;
    if (max !== undefined) e.regProtoMax = max;
    return e;
  },
  describe(e) {
    return `masq${e.regProtoMin !== undefined ? ` proto_min reg ${e.regProtoMin}` : ''}${e.regProtoMax !== undefined ? ` proto_max reg ${e.regProtoMax}` : ''}${e.flags !== undefined ? ` flags 0x${e.flags.toString(16)}` : ''}`;
  },
  statement(e, ctx) {
    return portsStatement('masquerade', e, ctx);
  },
};
