/**
 * The `quota` expression (net/netfilter/nft_quota.c): the rule goes on until
 * `bytes` have passed, or with NFT_QUOTA_F_INV (`over`) once they have.
 * nft's `quota over 10 mbytes used 1 mbytes`.
 *
 * ```c
 * // nf_tables.h: enum nft_quota_attributes
 * NFTA_QUOTA_BYTES      // NLA_U64 (big-endian)
 * NFTA_QUOTA_FLAGS      // NLA_U32: enum nft_quota_flags (NFT_QUOTA_F_INV, NFT_QUOTA_F_DEPLETED)
 * NFTA_QUOTA_CONSUMED   // NLA_U64: bytes used so far
 * ```
 * Named quotas carry the same attributes in NFTA_OBJ_DATA.
 *
 * @module
 */
import { u64be, type AttributeView } from '../../netlink/attributes.js';
import { UsageError } from '../../netlink/errors.js';
import * as C from '../constants.js';
import { be32, u64num } from '../data.js';
import { bytesUnit } from '../print.js';
import type { ExprCodec } from './registry.js';

/** A quota's settings (the expression's, or a named quota's). */
export interface QuotaSpec {
  /** NFTA_QUOTA_BYTES */
  bytes: number;
  /** NFTA_QUOTA_CONSUMED: bytes used */
  used: number;
  /** NFT_QUOTA_F_INV: `over` */
  inv?: boolean;
  /** NFT_QUOTA_F_DEPLETED (dumps): the quota is used up */
  depleted?: boolean;
}

/** `quota`. */
export interface QuotaExpr extends QuotaSpec {
  name: 'quota';
}

function checkU64(v: number, what: string): number {
  if (!Number.isSafeInteger(v) || v < 0) throw new UsageError(`quota ${what}: ${v} is not a whole number >= 0`);
  return v;
}

/** Encode a quota's attributes (BYTES, FLAGS, CONSUMED). @throws {UsageError} a bad count */
export function encodeQuota(e: QuotaSpec): Buffer[] {
  return [
    u64be(C.NFTA_QUOTA_BYTES, checkU64(e.bytes, 'bytes')),
    be32(C.NFTA_QUOTA_FLAGS, e.inv ? C.NFT_QUOTA_F_INV : 0),
    u64be(C.NFTA_QUOTA_CONSUMED, checkU64(e.used, 'used')),
  ];
}

/** Decode a quota's attributes; absent ones read 0. @throws {NetlinkDecodeError} an attribute too short */
export function decodeQuota(l: AttributeView): QuotaSpec {
  const flags = l.u32be(C.NFTA_QUOTA_FLAGS) ?? 0;
  const e: QuotaSpec = { bytes: u64num(l, C.NFTA_QUOTA_BYTES) ?? 0, used: u64num(l, C.NFTA_QUOTA_CONSUMED) ?? 0 };
  if (flags & C.NFT_QUOTA_F_INV) e.inv = true;
  if (flags & C.NFT_QUOTA_F_DEPLETED) e.depleted = true;
  return e;
}

/** A quota's text as nft prints it, without `quota `: `over 10 mbytes used 1 mbytes`. */
export function quotaText(e: QuotaSpec): string {
  const v = bytesUnit(e.bytes);
  const u = bytesUnit(e.used);
  return `${e.inv ? 'over ' : ''}${v.value} ${v.unit}${e.used ? ` used ${u.value} ${u.unit}` : ''}`;
}

/** Codec of `quota`. */
export const quotaExpr: ExprCodec<QuotaExpr> = {
  name: 'quota',
  encode: encodeQuota,
  decode(l) {
    return { name: 'quota', ...decodeQuota(l) };
  },
  describe(e) {
    const rounded = Number.isSafeInteger(e.bytes) && Number.isSafeInteger(e.used) ? '' : ' (past 2^53: rounded)';
    return `quota bytes ${e.bytes} consumed ${e.used} flags ${(e.inv ? 1 : 0) | (e.depleted ? 2 : 0)}${rounded}`;
  },
  statement(e) {
    // a u64 past 2^53 decodes rounded: not printed (raw)
    if (!Number.isSafeInteger(e.bytes) || !Number.isSafeInteger(e.used)) return undefined;
    const v = bytesUnit(e.bytes);
    const u = bytesUnit(e.used);
    const json = { val: v.value, val_unit: v.unit, ...(e.inv && { inv: true }), ...(e.used && { used: u.value, used_unit: u.unit }) };
    return { stmt: { text: `quota ${quotaText(e)}`, json: { quota: json } } };
  },
};
