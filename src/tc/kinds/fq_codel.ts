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
import { AttributeView, nested, u32 } from '../../netlink/attributes.js';
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
import { ArgReader, parseIntArg } from '../args.js';
import type { QdiscKind } from '../types.js';
import { formatSize, formatTime, parseSize, parseTime } from '../units.js';

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

function encodeOptions(o: FqCodelOptions): Buffer[] {
  const kids: Buffer[] = [];
  const int = (v: number | undefined, w: string) => (v === undefined ? 0 : parseIntArg(v, `fq_codel ${w}`));
  const limit = int(o.limit, 'limit');
  const flows = int(o.flows, 'flows');
  const quantum = int(o.quantum, 'quantum');
  const interval = o.interval === undefined ? 0 : parseTime(o.interval, 'fq_codel interval');
  const target = o.target === undefined ? 0 : parseTime(o.target, 'fq_codel target');
  const dropBatch = int(o.drop_batch, 'drop_batch');
  // tc sends only what was given (zero means "not given"), in this order.
  if (limit) kids.push(u32(TCA_FQ_CODEL_LIMIT, limit));
  if (flows) kids.push(u32(TCA_FQ_CODEL_FLOWS, flows));
  if (quantum) kids.push(u32(TCA_FQ_CODEL_QUANTUM, quantum));
  if (interval) kids.push(u32(TCA_FQ_CODEL_INTERVAL, interval));
  if (target) kids.push(u32(TCA_FQ_CODEL_TARGET, target));
  if (o.ecn !== undefined) kids.push(u32(TCA_FQ_CODEL_ECN, o.ecn ? 1 : 0));
  if (o.ce_threshold !== undefined) kids.push(u32(TCA_FQ_CODEL_CE_THRESHOLD, parseTime(o.ce_threshold, 'fq_codel ce_threshold')));
  if (o.memory_limit !== undefined) kids.push(u32(TCA_FQ_CODEL_MEMORY_LIMIT, parseSize(o.memory_limit, 'fq_codel memory_limit')));
  if (dropBatch) kids.push(u32(TCA_FQ_CODEL_DROP_BATCH_SIZE, dropBatch));
  return [nested(TCA_OPTIONS, kids)];
}

function decodeOptions(buf: Buffer, start: number, end: number, base: number): Record<string, unknown> {
  const T = new AttributeView(buf, start, end, base);
  const out: Record<string, unknown> = {};
  const get = (t: number) => (T.size(t) >= 4 ? T.u32(t) : undefined);
  const put = (key: string, t: number) => {
    const v = get(t);
    if (v !== undefined) out[key] = v;
  };
  put('limit', TCA_FQ_CODEL_LIMIT);
  put('flows', TCA_FQ_CODEL_FLOWS);
  put('quantum', TCA_FQ_CODEL_QUANTUM);
  put('target', TCA_FQ_CODEL_TARGET);
  put('ce_threshold', TCA_FQ_CODEL_CE_THRESHOLD);
  const sel = T.size(TCA_FQ_CODEL_CE_THRESHOLD_SELECTOR) >= 1 ? T.u8(TCA_FQ_CODEL_CE_THRESHOLD_SELECTOR)! : 0;
  const mask = T.size(TCA_FQ_CODEL_CE_THRESHOLD_MASK) >= 1 ? T.u8(TCA_FQ_CODEL_CE_THRESHOLD_MASK)! : 0;
  if (sel || mask) {
    out.ce_threshold_selector = sel;
    out.ce_threshold_mask = mask;
  }
  put('interval', TCA_FQ_CODEL_INTERVAL);
  put('memory_limit', TCA_FQ_CODEL_MEMORY_LIMIT);
  if (get(TCA_FQ_CODEL_ECN)) out.ecn = true;
  const batch = get(TCA_FQ_CODEL_DROP_BATCH_SIZE);
  if (batch) out.drop_batch = batch;
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
  let s = '';
  if (o.limit !== undefined) s += `limit ${o.limit}p `;
  if (o.flows !== undefined) s += `flows ${o.flows} `;
  if (o.quantum !== undefined) s += `quantum ${o.quantum} `;
  if (o.target !== undefined) s += `target ${formatTime(o.target as number)} `;
  if (o.ce_threshold !== undefined) s += `ce_threshold ${formatTime(o.ce_threshold as number)} `;
  if (o.ce_threshold_selector !== undefined)
    s += `ce_threshold_selector 0x${(o.ce_threshold_selector as number).toString(16)}/0x${(o.ce_threshold_mask as number).toString(16)} `;
  if (o.interval !== undefined) s += `interval ${formatTime(o.interval as number)} `;
  if (o.memory_limit !== undefined) s += `memory_limit ${formatSize(o.memory_limit as number)} `;
  if (o.ecn) s += 'ecn ';
  if (o.drop_batch) s += `drop_batch ${o.drop_batch} `;
  return s;
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

function parseArgs(args: readonly string[]): FqCodelOptions {
  const r = new ArgReader(args, 'qdisc fq_codel');
  const o: FqCodelOptions = {};
  while (r.more()) {
    const w = r.next();
    switch (w) {
      case 'limit':
        o.limit = r.int(w);
        break;
      case 'flows':
        o.flows = r.int(w);
        break;
      case 'quantum':
        o.quantum = r.int(w);
        break;
      case 'drop_batch':
        o.drop_batch = r.int(w);
        break;
      case 'target':
        o.target = r.value(w);
        break;
      case 'interval':
        o.interval = r.value(w);
        break;
      case 'ce_threshold':
        o.ce_threshold = r.value(w);
        break;
      case 'memory_limit':
        o.memory_limit = r.value(w);
        break;
      case 'ecn':
        o.ecn = true;
        break;
      case 'noecn':
        o.ecn = false;
        break;
      default:
        r.unknown(w, 'limit, flows, quantum, target, interval, ce_threshold, memory_limit, drop_batch, ecn, noecn');
    }
  }
  return o;
}

/** sch_fq_codel. */
export const fqCodel: QdiscKind<FqCodelOptions> = {
  kind: 'fq_codel',
  classful: true,
  optionTypes: {
    limit: 'number',
    flows: 'number',
    quantum: 'number',
    target: 'number|string',
    interval: 'number|string',
    ecn: 'boolean',
    ce_threshold: 'number|string',
    memory_limit: 'number|string',
    drop_batch: 'number',
  },
  encodeOptions,
  decodeOptions,
  decodeClassOptions: () => ({}),
  decodeXstats,
  parseArgs,
  formatOptions,
  formatXstats,
};

declare module '../types.js' {
  interface QdiscOptionsByKind {
    /** fq_codel: {@link FqCodelOptions} */
    fq_codel: FqCodelOptions;
  }
}
