/**
 * The `redir` expression (net/netfilter/nft_redir.c): destination NAT to the
 * local machine (the primary address of the incoming device), optionally to
 * a port range. nft's `redirect`, `redirect to :8081`.
 *
 * ```c
 * // nf_tables.h: enum nft_redir_attributes
 * NFTA_REDIR_REG_PROTO_MIN   // NLA_U32 (big-endian): register holding the first port (big-endian u16)
 * NFTA_REDIR_REG_PROTO_MAX   // NLA_U32: register holding the last port
 * NFTA_REDIR_FLAGS           // NLA_U32: NF_NAT_RANGE_* of linux/netfilter/nf_nat.h
 * ```
 *
 * @module
 */
import * as C from '../constants.js';
import { be32, checkU32 } from '../data.js';
import { portsStatement } from './masq.js';
import type { ExprCodec } from './registry.js';

/** `redir`. */
export interface RedirExpr {
  name: 'redir';
  /** NFTA_REDIR_REG_PROTO_MIN */
  regProtoMin?: number;
  /** NFTA_REDIR_REG_PROTO_MAX */
  regProtoMax?: number;
  /** NFTA_REDIR_FLAGS (NF_NAT_RANGE_*) */
  flags?: number;
}

/** Codec of `redir`. */
export const redirExpr: ExprCodec<RedirExpr> = {
  name: 'redir',
  encode(e) {
    const out: Buffer[] = [];
    if (e.regProtoMin !== undefined) out.push(be32(C.NFTA_REDIR_REG_PROTO_MIN, checkU32(e.regProtoMin, 'redir regProtoMin')));
    if (e.regProtoMax !== undefined) out.push(be32(C.NFTA_REDIR_REG_PROTO_MAX, checkU32(e.regProtoMax, 'redir regProtoMax')));
    if (e.flags !== undefined) out.push(be32(C.NFTA_REDIR_FLAGS, checkU32(e.flags, 'redir flags')));
    return out;
  },
  decode(l) {
    const e: RedirExpr = { name: 'redir' };
    const min = l.u32be(C.NFTA_REDIR_REG_PROTO_MIN);
    const max = l.u32be(C.NFTA_REDIR_REG_PROTO_MAX);
    const flags = l.u32be(C.NFTA_REDIR_FLAGS);
    if (min !== undefined) e.regProtoMin = min;
    if (max !== undefined) e.regProtoMax = max;
    if (flags !== undefined) e.flags = flags;
    return e;
  },
  describe(e) {
    return `redir${e.regProtoMin !== undefined ? ` proto_min reg ${e.regProtoMin}` : ''}${e.regProtoMax !== undefined ? ` proto_max reg ${e.regProtoMax}` : ''}${e.flags !== undefined ? ` flags 0x${e.flags.toString(16)}` : ''}`;
  },
  statement(e, ctx) {
    return portsStatement('redirect', e, ctx);
  },
};
