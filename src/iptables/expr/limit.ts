/**
 * The `limit` expression (net/netfilter/nft_limit.c): a token bucket; the
 * rule goes on while packets (or bytes) stay under the rate, or with
 * NFT_LIMIT_F_INV (`over`) once they exceed it. nft's `limit rate 10/second`,
 * `limit rate over 10 kbytes/second burst 20 kbytes`.
 *
 * ```c
 * // nf_tables.h: enum nft_limit_attributes
 * NFTA_LIMIT_RATE    // NLA_U64 (big-endian): packets or bytes per unit
 * NFTA_LIMIT_UNIT    // NLA_U64: the unit, seconds (1, 60, 3600, 86400, 604800)
 * NFTA_LIMIT_BURST   // NLA_U32: packets or bytes
 * NFTA_LIMIT_TYPE    // NLA_U32: enum nft_limit_type (NFT_LIMIT_PKTS, NFT_LIMIT_PKT_BYTES)
 * NFTA_LIMIT_FLAGS   // NLA_U32: enum nft_limit_flags (NFT_LIMIT_F_INV)
 * ```
 * Named limits (`limit l1 { rate 10/second }`) carry the same attributes in NFTA_OBJ_DATA.
 *
 * @module
 */
import { u64be, type AttributeView } from '../../netlink/attributes.js';
import { UsageError } from '../../netlink/errors.js';
import * as C from '../constants.js';
import { be32, checkU32, u64num } from '../data.js';
import { bytesUnit } from '../print.js';
import type { ExprCodec } from './registry.js';

/** A limit's settings (the expression's, or a named limit's). */
export interface LimitSpec {
  /** NFTA_LIMIT_RATE: packets (type `packets`) or bytes (type `bytes`) per `unit` seconds */
  rate: number;
  /** NFTA_LIMIT_UNIT: seconds (1 second, 60 minute, 3600 hour, 86400 day, 604800 week) */
  unit: number;
  /** NFTA_LIMIT_BURST: packets or bytes */
  burst: number;
  /** NFTA_LIMIT_TYPE: NFT_LIMIT_PKTS (`packets`) or NFT_LIMIT_PKT_BYTES (`bytes`); `type(<n>)` when unknown */
  type: string;
  /** NFT_LIMIT_F_INV: `over` */
  inv?: boolean;
}

/** `limit`. */
export interface LimitExpr extends LimitSpec {
  name: 'limit';
}

const PER: Record<number, string> = { 1: 'second', 60: 'minute', 3600: 'hour', 86400: 'day', 604800: 'week' };

function checkU64(v: number, what: string): number {
  if (!Number.isSafeInteger(v) || v < 0) throw new UsageError(`limit ${what}: ${v} is not a whole number >= 0`);
  return v;
}

/** Encode a limit's attributes (NFTA_LIMIT_RATE, UNIT, BURST, TYPE, FLAGS). @throws {UsageError} a bad field */
export function encodeLimit(e: LimitSpec): Buffer[] {
  const type = e.type === 'packets' ? C.NFT_LIMIT_PKTS : e.type === 'bytes' ? C.NFT_LIMIT_PKT_BYTES : Number(/^type\((\d+)\)$/.exec(e.type)?.[1] ?? NaN);
  if (!Number.isInteger(type)) throw new UsageError(`limit type '${e.type}': use packets or bytes`);
  return [
    u64be(C.NFTA_LIMIT_RATE, checkU64(e.rate, 'rate')),
    u64be(C.NFTA_LIMIT_UNIT, checkU64(e.unit, 'unit')),
    be32(C.NFTA_LIMIT_BURST, checkU32(e.burst, 'limit burst')),
    be32(C.NFTA_LIMIT_TYPE, type),
    be32(C.NFTA_LIMIT_FLAGS, e.inv ? C.NFT_LIMIT_F_INV : 0),
  ];
}

/** Decode a limit's attributes; absent ones read 0. @throws {NetlinkDecodeError} an attribute too short */
export function decodeLimit(l: AttributeView): LimitSpec {
  const t = l.u32be(C.NFTA_LIMIT_TYPE) ?? C.NFT_LIMIT_PKTS;
  const e: LimitSpec = {
    rate: u64num(l, C.NFTA_LIMIT_RATE) ?? 0,
    unit: u64num(l, C.NFTA_LIMIT_UNIT) ?? 0,
    burst: l.u32be(C.NFTA_LIMIT_BURST) ?? 0,
    type: t === C.NFT_LIMIT_PKTS ? 'packets' : t === C.NFT_LIMIT_PKT_BYTES ? 'bytes' : `type(${t})`,
  };
  if ((l.u32be(C.NFTA_LIMIT_FLAGS) ?? 0) & C.NFT_LIMIT_F_INV) e.inv = true;
  return e;
}

/**
 * A limit as nft prints it: text `rate over 10 kbytes/second burst 20 kbytes`
 * (without the leading `limit `), the statement's JSON fields and a named
 * limit's JSON fields (nft orders and omits them differently); undefined when
 * the unit or type has no nft name.
 */
export function limitPrinted(e: LimitSpec): { text: string; json: Record<string, unknown>; objJson: Record<string, unknown> } | undefined {
  const per = PER[e.unit];
  if (!per || (e.type !== 'packets' && e.type !== 'bytes')) return undefined;
  const inv = e.inv ? { inv: true } : {};
  if (e.type === 'packets') {
    return {
      text: `rate ${e.inv ? 'over ' : ''}${e.rate}/${per}${e.burst !== 5 ? ` burst ${e.burst} packets` : ''}`,
      json: { rate: e.rate, burst: e.burst, per, ...inv },
      objJson: { rate: e.rate, per, ...inv, burst: e.burst },
    };
  }
  const r = bytesUnit(e.rate);
  const b = bytesUnit(e.burst);
  return {
    text: `rate ${e.inv ? 'over ' : ''}${r.value} ${r.unit}/${per}${e.burst !== 0 ? ` burst ${b.value} ${b.unit}` : ''}`,
    json: { rate: r.value, burst: b.value, per, ...inv, rate_unit: r.unit, burst_unit: b.unit },
    objJson: { rate: r.value, per, ...inv, rate_unit: r.unit, ...(e.burst !== 0 && { burst: b.value, burst_unit: b.unit }) },
  };
}

/** Codec of `limit`. */
export const limitExpr: ExprCodec<LimitExpr> = {
  name: 'limit',
  encode: encodeLimit,
  decode(l) {
    return { name: 'limit', ...decodeLimit(l) };
  },
  describe(e) {
    return `limit rate ${e.rate}/${PER[e.unit] ?? `${e.unit}s`} burst ${e.burst} type ${e.type} flags 0x${e.inv ? 1 : 0}`;
  },
  statement(e) {
    const p = limitPrinted(e);
    return p ? { stmt: { text: `limit ${p.text}`, json: { limit: p.json } } } : undefined;
  },
};
