/**
 * `fq_codel` (sch_fq_codel): fair queuing with CoDel per flow. Options are
 * u32 attributes in TCA_OPTIONS (linux/pkt_sched.h `TCA_FQ_CODEL_*`); times
 * are microseconds. Extended stats:
 *
 * ```c
 * struct tc_fq_codel_xstats {
 *   __u32 type;   // TCA_FQ_CODEL_XSTATS_QDISC 0 / _CLASS 1
 *   union {
 *     struct tc_fq_codel_qd_stats { __u32 maxpacket, drop_overlimit, ecn_mark, new_flow_count,
 *                                   new_flows_len, old_flows_len, ce_mark, memory_usage, drop_overmemory; };
 *     struct tc_fq_codel_cl_stats { __s32 deficit; __u32 ldelay, count, lastcount, dropping; __s32 drop_next; };
 *   };
 * };
 * ```
 *
 * @module
 */
import { AttributeView, nested } from '../../netlink/attributes.js';
import {
  TCA_OPTIONS,
  TCA_FQ_CODEL_TARGET,
  TCA_FQ_CODEL_LIMIT,
  TCA_FQ_CODEL_INTERVAL,
  TCA_FQ_CODEL_ECN,
  TCA_FQ_CODEL_FLOWS,
  TCA_FQ_CODEL_QUANTUM,
  TCA_FQ_CODEL_CE_THRESHOLD,
  TCA_FQ_CODEL_DROP_BATCH_SIZE,
  TCA_FQ_CODEL_MEMORY_LIMIT,
  TCA_FQ_CODEL_CE_THRESHOLD_SELECTOR,
  TCA_FQ_CODEL_CE_THRESHOLD_MASK,
  TCA_FQ_CODEL_XSTATS_QDISC,
  TCA_FQ_CODEL_XSTATS_CLASS,
} from '../constants.js';
import { fieldCodec } from '../fields.js';
import type { OptionTypes, QdiscKind } from '../types.js';
import { formatTime } from '../units.js';

/** Options of an fq_codel qdisc; every field optional (kernel defaults). */
export interface FqCodelOptions {
  /** packets */
  limit?: number;
  /** number of flow buckets (only at creation) */
  flows?: number;
  /** bytes dequeued per round */
  quantum?: number;
  /** microseconds, or tc text ("5ms") */
  target?: number | string;
  /** microseconds, or tc text ("100ms") */
  interval?: number | string;
  /** mark ECN instead of dropping */
  ecn?: boolean;
  /** microseconds, or tc text */
  ce_threshold?: number | string;
  /** bytes, or tc text ("32Mb") */
  memory_limit?: number | string;
  /** packets dropped at once when over the limit */
  drop_batch?: number;
}

/** The options in the order tc prints them; 0 in the first five means "kernel default" and is not sent. */
const F = fieldCodec(
  'fq_codel',
  [
    { key: 'limit', type: TCA_FQ_CODEL_LIMIT, unit: 'packets', omitZero: 'send' },
    { key: 'flows', type: TCA_FQ_CODEL_FLOWS, unit: 'count', omitZero: 'send' },
    { key: 'quantum', type: TCA_FQ_CODEL_QUANTUM, unit: 'count', omitZero: 'send' },
    { key: 'target', type: TCA_FQ_CODEL_TARGET, unit: 'time', omitZero: 'send' },
    { key: 'ce_threshold', type: TCA_FQ_CODEL_CE_THRESHOLD, unit: 'time' },
    { key: 'interval', type: TCA_FQ_CODEL_INTERVAL, unit: 'time', omitZero: 'send' },
    { key: 'memory_limit', type: TCA_FQ_CODEL_MEMORY_LIMIT, unit: 'size' },
    { key: 'ecn', type: TCA_FQ_CODEL_ECN, unit: 'onoff' },
    { key: 'drop_batch', type: TCA_FQ_CODEL_DROP_BATCH_SIZE, unit: 'count', omitZero: true },
  ],
  true,
);
/** The order tc sends them in. */
const WIRE = ['limit', 'flows', 'quantum', 'interval', 'target', 'ecn', 'ce_threshold', 'memory_limit', 'drop_batch'];
/** Printed before and after the CE threshold selector. */
const HEAD = ['limit', 'flows', 'quantum', 'target', 'ce_threshold'];
const TAIL = ['interval', 'memory_limit', 'ecn', 'drop_batch'];

/** TCA_OPTIONS -> the options tc -j prints (an attribute too short for a u32 is skipped, as tc does). */
function decodeOptions(buf: Buffer, start: number, end: number, base: number): Record<string, unknown> {
  const T = new AttributeView(buf, start, end, base);
  const out: Record<string, unknown> = {};
  F.decode(T, out, HEAD);
  const sel = T.size(TCA_FQ_CODEL_CE_THRESHOLD_SELECTOR) >= 1 ? T.u8(TCA_FQ_CODEL_CE_THRESHOLD_SELECTOR)! : 0;
  const mask = T.size(TCA_FQ_CODEL_CE_THRESHOLD_MASK) >= 1 ? T.u8(TCA_FQ_CODEL_CE_THRESHOLD_MASK)! : 0;
  if (sel || mask) {
    out.ce_threshold_selector = sel;
    out.ce_threshold_mask = mask;
  }
  F.decode(T, out, TAIL);
  return out;
}

function decodeXstats(buf: Buffer, start: number, end: number, _base: number, _info: unknown, out: Record<string, unknown>): void {
  // tc zero-fills a short struct; so do we.
  const b = Buffer.alloc(40);
  buf.copy(b, 0, start, Math.min(start + 40, end));
  const type = b.readUInt32LE(0);
  if (type === TCA_FQ_CODEL_XSTATS_QDISC) {
    out.maxpacket = b.readUInt32LE(4);
    out.drop_overlimit = b.readUInt32LE(8);
    out.new_flow_count = b.readUInt32LE(16);
    out.ecn_mark = b.readUInt32LE(12);
    const ce = b.readUInt32LE(28);
    const mem = b.readUInt32LE(32);
    const dom = b.readUInt32LE(36);
    if (ce) out.ce_mark = ce;
    if (mem) out.memory_used = mem;
    if (dom) out.drop_overmemory = dom;
    out.new_flows_len = b.readUInt32LE(20);
    out.old_flows_len = b.readUInt32LE(24);
    return;
  }
  if (type === TCA_FQ_CODEL_XSTATS_CLASS) {
    out.deficit = b.readInt32LE(4);
    out.count = b.readUInt32LE(12);
    out.lastcount = b.readUInt32LE(16);
    out.ldelay = b.readUInt32LE(8);
    if (b.readUInt32LE(20)) {
      out.dropping = true;
      out.drop_next = b.readInt32LE(24);
    }
  }
}

function formatOptions(o: Record<string, unknown>): string {
  let s = F.format(o, HEAD);
  if (o.ce_threshold_selector !== undefined)
    s += `ce_threshold_selector 0x${(o.ce_threshold_selector as number).toString(16)}/0x${(o.ce_threshold_mask as number).toString(16)} `;
  return s + F.format(o, TAIL);
}

function formatXstats(e: Record<string, unknown>): string {
  if (e.maxpacket !== undefined) {
    let s = `  maxpacket ${e.maxpacket} drop_overlimit ${e.drop_overlimit} new_flow_count ${e.new_flow_count} ecn_mark ${e.ecn_mark}`;
    if (e.ce_mark) s += ` ce_mark ${e.ce_mark}`;
    if (e.memory_used) s += ` memory_used ${e.memory_used}`;
    if (e.drop_overmemory) s += ` drop_overmemory ${e.drop_overmemory}`;
    return `${s}\n  new_flows_len ${e.new_flows_len} old_flows_len ${e.old_flows_len}`;
  }
  if (e.deficit !== undefined) {
    let s = `  deficit ${e.deficit} count ${e.count} lastcount ${e.lastcount} ldelay ${formatTime(e.ldelay as number)}`;
    if (e.dropping) s += ` dropping drop_next ${(e.drop_next as number) < 0 ? '-' : ''}${formatTime(Math.abs(e.drop_next as number))}`;
    return s;
  }
  return '';
}

/** sch_fq_codel. */
export const fqCodel: QdiscKind<FqCodelOptions> = {
  kind: 'fq_codel',
  classful: true,
  optionTypes: F.optionTypes as OptionTypes<FqCodelOptions>,
  encodeOptions: (o) => [nested(TCA_OPTIONS, F.encode(o as Record<string, unknown>, WIRE))],
  decodeOptions,
  decodeClassOptions: () => ({}),
  decodeXstats,
  formatOptions,
  formatXstats,
};

declare module '../types.js' {
  interface QdiscOptionsByKind {
    /** fq_codel: {@link FqCodelOptions} */
    fq_codel: FqCodelOptions;
  }
}
