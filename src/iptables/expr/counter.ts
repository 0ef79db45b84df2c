/**
 * The `counter` expression (net/netfilter/nft_counter.c): packets and bytes
 * that reached it.
 *
 * ```c
 * // nf_tables.h: enum nft_counter_attributes
 * NFTA_COUNTER_BYTES     // NLA_U64 (big-endian)
 * NFTA_COUNTER_PACKETS   // NLA_U64
 * ```
 * nft sends an empty NFTA_EXPR_DATA for a new counter; we do the same unless
 * starting values are given.
 *
 * @module
 */
import { u64be } from '../../netlink/attributes.js';
import { UsageError } from '../../netlink/errors.js';
import * as C from '../constants.js';
import { u64num } from '../data.js';
import type { ExprCodec } from './registry.js';

/** `counter`. Values above 2^53 lose precision (JavaScript numbers). */
export interface CounterExpr {
  name: 'counter';
  /** NFTA_COUNTER_PACKETS */
  packets: number;
  /** NFTA_COUNTER_BYTES */
  bytes: number;
}

function check(v: number, what: string): number {
  if (!Number.isSafeInteger(v) || v < 0) throw new UsageError(`counter ${what}: ${v} is not a whole number >= 0`);
  return v;
}

/** Codec of `counter`. */
export const counterExpr: ExprCodec<CounterExpr> = {
  name: 'counter',
  encode(e) {
    if (!e.packets && !e.bytes) return [];
    return [u64be(C.NFTA_COUNTER_BYTES, check(e.bytes, 'bytes')), u64be(C.NFTA_COUNTER_PACKETS, check(e.packets, 'packets'))];
  },
  decode(l) {
    return { name: 'counter', packets: u64num(l, C.NFTA_COUNTER_PACKETS) ?? 0, bytes: u64num(l, C.NFTA_COUNTER_BYTES) ?? 0 };
  },
  describe(e) {
    const rounded = Number.isSafeInteger(e.packets) && Number.isSafeInteger(e.bytes) ? '' : ' (past 2^53: rounded)';
    return `counter pkts ${e.packets} bytes ${e.bytes}${rounded}`;
  },
};
