/**
 * The native `queue` expression (net/netfilter/nft_queue.c): hand the packet
 * to a netfilter queue (nfnetlink_queue), where a user-space program gives it
 * a verdict. nft's `queue num 7 bypass`, listed as `queue flags bypass to 7`.
 *
 * ```c
 * // nf_tables.h: enum nft_queue_attributes
 * NFTA_QUEUE_NUM        // NLA_U16 (big-endian): the first queue
 * NFTA_QUEUE_TOTAL      // NLA_U16: how many queues, from NUM on (load balancing)
 * NFTA_QUEUE_FLAGS      // NLA_U16: NFT_QUEUE_FLAG_BYPASS 0x01 (nobody bound: the packet passes),
 *                       //          NFT_QUEUE_FLAG_CPU_FANOUT 0x02 (the queue by CPU, not by hash)
 * NFTA_QUEUE_SREG_QNUM  // NLA_U32: the register holding the queue number (instead of NUM/TOTAL)
 * ```
 * nft 1.0.6 sends NUM, TOTAL and FLAGS (TOTAL 1 for one queue), and lists
 * `queue [flags bypass,fanout] to N[-M]`; `-j` as `{"queue": {"num": N, "flags": "bypass"}}`.
 *
 * @module
 */
import { u16be, u32be } from '../../netlink/attributes.js';
import { NetlinkDecodeError, UsageError } from '../../netlink/errors.js';
import * as C from '../constants.js';
import type { ExprCodec } from './registry.js';

/** `queue`. */
export interface QueueExpr {
  name: 'queue';
  /** NFTA_QUEUE_NUM: the first queue (0-65535); absent with `sreg` */
  num?: number;
  /** NFTA_QUEUE_TOTAL: how many queues from `num` on (default 1) */
  total?: number;
  /** NFTA_QUEUE_FLAGS: NFT_QUEUE_FLAG_BYPASS | NFT_QUEUE_FLAG_CPU_FANOUT (default 0) */
  flags?: number;
  /** NFTA_QUEUE_SREG_QNUM: the register that holds the queue number */
  sreg?: number;
}

/** The queue flags' words, as nft prints them (`bypass,fanout`), in bit order. */
export const QUEUE_FLAG_NAMES: ReadonlyArray<[number, string]> = [
  [C.NFT_QUEUE_FLAG_BYPASS, 'bypass'],
  [C.NFT_QUEUE_FLAG_CPU_FANOUT, 'fanout'],
];

/** The words of a queue flags value; undefined when it has a bit nft has no word for. */
export function queueFlagWords(flags: number): string[] | undefined {
  const words = QUEUE_FLAG_NAMES.filter(([bit]) => flags & bit).map(([, w]) => w);
  const known = QUEUE_FLAG_NAMES.reduce((m, [bit]) => m | bit, 0);
  return flags & ~known ? undefined : words;
}

/** `N` or `N-M`, as nft prints a queue number and its range. */
export function queueRangeText(num: number, total: number): string {
  return total > 1 ? `${num}-${num + total - 1}` : `${num}`;
}

function u16(v: number | undefined, what: string): number | undefined {
  if (v === undefined) return undefined;
  if (!Number.isInteger(v) || v < 0 || v > 0xffff) throw new UsageError(`queue ${what}: ${v} is not a u16 (0-65535)`);
  return v;
}

/** Codec of `queue`. */
export const queueExpr: ExprCodec<QueueExpr> = {
  name: 'queue',
  encode(e) {
    const out: Buffer[] = [];
    const num = u16(e.num, 'number');
    const total = u16(e.total ?? (num === undefined ? undefined : 1), 'total');
    if (total === 0) throw new UsageError('queue total: 0 queues; at least 1');
    if (num !== undefined && total !== undefined && num + total - 1 > 0xffff) throw new UsageError(`queue range ${num}-${num + total - 1} runs past 65535`);
    if (num !== undefined) out.push(u16be(C.NFTA_QUEUE_NUM, num));
    if (total !== undefined) out.push(u16be(C.NFTA_QUEUE_TOTAL, total));
    out.push(u16be(C.NFTA_QUEUE_FLAGS, u16(e.flags ?? 0, 'flags') ?? 0));
    if (e.sreg !== undefined) out.push(u32be(C.NFTA_QUEUE_SREG_QNUM, e.sreg));
    return out;
  },
  decode(l) {
    const e: QueueExpr = { name: 'queue' };
    const num = l.u16be(C.NFTA_QUEUE_NUM);
    const total = l.u16be(C.NFTA_QUEUE_TOTAL);
    const flags = l.u16be(C.NFTA_QUEUE_FLAGS);
    const sreg = l.u32be(C.NFTA_QUEUE_SREG_QNUM);
    if (num === undefined && sreg === undefined) {
      throw new NetlinkDecodeError('queue expression without NFTA_QUEUE_NUM or NFTA_QUEUE_SREG_QNUM', l.offset);
    }
    if (num !== undefined) e.num = num;
    if (total !== undefined) e.total = total;
    if (flags !== undefined) e.flags = flags;
    if (sreg !== undefined) e.sreg = sreg;
    return e;
  },
  describe(e) {
    // libnftnl: `queue num %u total %u flags %u`, or `sreg_qnum %u flags %u`
    const head = e.sreg !== undefined ? `queue sreg_qnum ${e.sreg}` : `queue num ${e.num ?? 0} total ${e.total ?? 1}`;
    return `${head} flags ${e.flags ?? 0}`;
  },
  statement(e) {
    if (e.sreg !== undefined || e.num === undefined) return undefined; // a register's queue number: printed raw
    const words = queueFlagWords(e.flags ?? 0);
    if (!words) return undefined;
    const total = e.total ?? 1;
    const flagsText = words.length ? ` flags ${words.join(',')}` : '';
    const num = total > 1 ? { range: [e.num, e.num + total - 1] } : e.num;
    const json: Record<string, unknown> = { num };
    if (words.length) json.flags = words.length === 1 ? words[0] : words;
    return { stmt: { text: `queue${flagsText} to ${queueRangeText(e.num, total)}`, json: { queue: json } } };
  },
};
