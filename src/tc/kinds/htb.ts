/**
 * `htb` (sch_htb): hierarchical token bucket. Qdisc options set the
 * default class; class options set rates.
 *
 * ```c
 * struct tc_htb_glob {       // TCA_HTB_INIT, qdisc
 *   __u32 version;           // TC_HTB_PROTOVER = 3
 *   __u32 rate2quantum;      // bps -> quantum divisor (r2q), default 10
 *   __u32 defcls;            // default class minor (tc reads it in hex)
 *   __u32 debug;
 *   __u32 direct_pkts;       // out: packets sent unshaped
 * };
 * struct tc_htb_opt {        // TCA_HTB_PARMS, class
 *   struct tc_ratespec rate; // guaranteed rate
 *   struct tc_ratespec ceil; // maximum rate
 *   __u32 buffer;            // burst, psched ticks at `rate`
 *   __u32 cbuffer;           // cburst, psched ticks at `ceil`
 *   __u32 quantum;
 *   __u32 level;             // out only
 *   __u32 prio;
 * };
 * struct tc_htb_xstats { __u32 lends, borrows, giants; __s32 tokens, ctokens; };
 * ```
 * Rates of 2^32 bytes/s and more go in TCA_HTB_RATE64 / TCA_HTB_CEIL64.
 * Class requests carry rate tables (TCA_HTB_RTAB, TCA_HTB_CTAB) built as tc does.
 *
 * @module
 */
import { attr, AttributeView, flag, le16, le32, les32, le64, nested, u32, u64 } from '../../netlink/attributes.js';
import { NetlinkDecodeError, UsageError } from '../../netlink/errors.js';
import {
  TCA_OPTIONS,
  TCA_HTB_PARMS,
  TCA_HTB_INIT,
  TCA_HTB_CTAB,
  TCA_HTB_RTAB,
  TCA_HTB_DIRECT_QLEN,
  TCA_HTB_RATE64,
  TCA_HTB_CEIL64,
  TCA_HTB_OFFLOAD,
  TC_HTB_PROTOVER,
  TC_LINKLAYER_ETHERNET,
} from '../constants.js';
import { parseIntArg } from '../args.js';
import { calcRtable, linklayerName, parseLinklayer, parseSizeAndCell, rate32, writeRatespec, type Ratespec } from '../ratespec.js';
import type { QdiscKind } from '../types.js';
import { checkedBufferTicks, calcXmitsize, formatRate, formatSize, parseRate, parseSize } from '../units.js';

/** Options of an htb qdisc. */
export interface HtbOptions {
  /** minor number of the default class (`default 20` means class 1:20); a number, or hex text as tc reads it ("20" = 0x20) */
  default?: number | string;
  /** rate-to-quantum divisor, default 10 */
  r2q?: number;
  /** queue length of the direct (unclassified) queue, packets */
  direct_qlen?: number;
  /** ask for hardware offload (TCA_HTB_OFFLOAD) */
  offload?: boolean;
}

/** Options of an htb class. */
export interface HtbClassOptions {
  /** guaranteed rate: bytes per second, or tc text ("10mbit"); required */
  rate: number | string;
  /** maximum rate; default = rate */
  ceil?: number | string;
  /** bytes that may be sent at ceil speed in a burst; default rate/HZ + mtu (tc's); tc text "15k" or "15k/8" (cell) accepted */
  burst?: number | string;
  /** same for ceil */
  cburst?: number | string;
  /** priority 0..7, lower first */
  prio?: number;
  /** DRR quantum in bytes; 0 lets the kernel derive it from rate / r2q */
  quantum?: number;
  /** largest packet for the rate tables, bytes (default 1600) */
  mtu?: number;
  /** minimum packet size, bytes */
  mpu?: number;
  /** per-packet overhead, bytes */
  overhead?: number;
  /** "ethernet" (default) or "atm" */
  linklayer?: string;
}

/** psched HZ that tc reads from /proc/net/psched (high-resolution timers: 10^9), for the default burst. */
const PSCHED_HZ = 1_000_000_000;
const GLOB_LEN = 20;
const OPT_LEN = 12 + 12 + 20;

function encodeQdisc(o: HtbOptions): Buffer[] {
  const g = Buffer.alloc(GLOB_LEN);
  g.writeUInt32LE(TC_HTB_PROTOVER, 0);
  g.writeUInt32LE(o.r2q === undefined ? 10 : parseIntArg(o.r2q, 'htb r2q', 0), 4);
  let def = 0;
  if (o.default !== undefined) {
    if (typeof o.default === 'number') def = parseIntArg(o.default, 'htb default');
    else if (typeof o.default === 'string' && /^(0x)?[0-9a-f]+$/i.test(o.default.trim()))
      def = parseIntArg(/^0x/i.test(o.default.trim()) ? o.default.trim() : `0x${o.default.trim()}`, 'htb default', 0, 0xffff);
    // the user's own text in the message, not the 0x-prefixed form tc reads it as
    else throw new UsageError(`htb default: ${JSON.stringify(o.default)} is not a hex class minor (tc reads "default 20" as 0x20)`);
  }
  g.writeUInt32LE(def, 8);
  const kids = [attr(TCA_HTB_INIT, g)];
  if (o.direct_qlen !== undefined) kids.push(u32(TCA_HTB_DIRECT_QLEN, parseIntArg(o.direct_qlen, 'htb direct_qlen')));
  if (o.offload) kids.push(flag(TCA_HTB_OFFLOAD));
  return [nested(TCA_OPTIONS, kids)];
}

function decodeQdisc(buf: Buffer, start: number, end: number, base: number): Record<string, unknown> {
  const T = new AttributeView(buf, start, end, base);
  const out: Record<string, unknown> = {};
  const g = T.struct(TCA_HTB_INIT, GLOB_LEN);
  if (g >= 0) {
    out.r2q = buf.readUInt32LE(g + 4);
    const def = buf.readUInt32LE(g + 8);
    out.default = def ? `0x${def.toString(16)}` : '0';
    out.direct_packets_stat = buf.readUInt32LE(g + 16);
    out.version = `${buf.readUInt32LE(g) >>> 16}.${buf.readUInt32LE(g) & 0xffff}`;
  }
  const dq = T.u32(TCA_HTB_DIRECT_QLEN);
  if (dq !== undefined) out.direct_qlen = dq;
  if (T.has(TCA_HTB_OFFLOAD)) out.offload = null;
  return out;
}

/** The largest rate TCA_HTB_RATE64 / TCA_HTB_CEIL64 hold: a u64 of bytes per second. */
const MAX_RATE64 = 2 ** 64 - 1;

/**
 * A rate that the kernel's fields hold: TCA_HTB_RATE64 / TCA_HTB_CEIL64
 * (u64 bytes/s; the u32 `tc_ratespec.rate` then says ~0).
 * @throws {UsageError} a rate over 2^64 - 1 bytes/s
 */
function checkRate64(rate: number, what: 'rate' | 'ceil'): number {
  if (!(rate <= MAX_RATE64)) {
    throw new UsageError(
      `htb class: ${what} ${formatRate(rate)} is beyond what the kernel's TCA_HTB_${what.toUpperCase()}64 holds (a u64 of bytes per second)`,
    );
  }
  return rate;
}

/** `tc_htb_opt.buffer` / `cbuffer` ticks, checked (see {@link checkedBufferTicks}). @throws {UsageError} */
function ticksFor(rate: number, size: number, burst: 'burst' | 'cburst', of: 'rate' | 'ceil', defaulted: boolean): number {
  return checkedBufferTicks(rate, size, { who: 'htb class', burst, of, field: burst === 'burst' ? 'buffer' : 'cbuffer', struct: 'tc_htb_opt', defaulted });
}

/**
 * Class options -> TCA_OPTIONS { [RATE64] [CEIL64] PARMS RTAB CTAB }, as tc builds it.
 * @throws {UsageError} missing or bad rate, a rate over u64, a burst the kernel's
 *   buffer fields cannot hold at that rate (0 or over 2^32 - 1 psched ticks), bad sizes or numbers
 */
function encodeClass(o: HtbClassOptions): Buffer[] {
  if (o.rate === undefined) throw new UsageError('htb class: "rate" is required');
  const rate64 = checkRate64(parseRate(o.rate, 'htb rate'), 'rate');
  if (rate64 === 0) throw new UsageError('htb class: rate must be greater than 0');
  const ceil64 = o.ceil === undefined ? rate64 : checkRate64(parseRate(o.ceil, 'htb ceil'), 'ceil') || rate64;
  const mtu = o.mtu === undefined ? 1600 : parseIntArg(o.mtu, 'htb mtu');
  const mpu = o.mpu === undefined ? 0 : parseIntArg(o.mpu, 'htb mpu', 0, 0xffff);
  const overhead = o.overhead === undefined ? 0 : parseIntArg(o.overhead, 'htb overhead', 0, 0xffff);
  const linklayer = o.linklayer === undefined ? TC_LINKLAYER_ETHERNET : parseLinklayer(o.linklayer);
  const b = o.burst === undefined ? { size: 0, cellLog: -1 } : parseSizeAndCell(o.burst, 'htb burst', parseSize);
  const cb = o.cburst === undefined ? { size: 0, cellLog: -1 } : parseSizeAndCell(o.cburst, 'htb cburst', parseSize);
  const buffer = b.size || Math.floor(rate64 / PSCHED_HZ) + mtu;
  const cbuffer = cb.size || Math.floor(ceil64 / PSCHED_HZ) + mtu;
  const bufferTicks = ticksFor(rate64, buffer, 'burst', 'rate', b.size === 0);
  const cbufferTicks = ticksFor(ceil64, cbuffer, 'cburst', 'ceil', cb.size === 0);
  const r: Ratespec = { cellLog: 0, linklayer: 0, overhead, cellAlign: 0, mpu, rate: rate32(rate64) };
  const c: Ratespec = { cellLog: 0, linklayer: 0, overhead, cellAlign: 0, mpu, rate: rate32(ceil64) };
  const rtab = calcRtable(r, b.cellLog, mtu, linklayer);
  const ctab = calcRtable(c, cb.cellLog, mtu, linklayer);
  const p = Buffer.alloc(OPT_LEN);
  writeRatespec(p, 0, r);
  writeRatespec(p, 12, c);
  p.writeUInt32LE(bufferTicks, 24);
  p.writeUInt32LE(cbufferTicks, 28);
  p.writeUInt32LE(o.quantum === undefined ? 0 : parseIntArg(o.quantum, 'htb quantum'), 32);
  p.writeUInt32LE(o.prio === undefined ? 0 : parseIntArg(o.prio, 'htb prio', 0, 7), 40);
  const kids: Buffer[] = [];
  if (rate64 >= 0x100000000) kids.push(u64(TCA_HTB_RATE64, rate64));
  if (ceil64 >= 0x100000000) kids.push(u64(TCA_HTB_CEIL64, ceil64));
  kids.push(attr(TCA_HTB_PARMS, p), attr(TCA_HTB_RTAB, rtab), attr(TCA_HTB_CTAB, ctab));
  return [nested(TCA_OPTIONS, kids)];
}

/**
 * Class TCA_OPTIONS -> `{ prio, quantum, level, rate, ceil, burst, cburst }`
 * (+ `overhead`, `mpu`, `linklayer` when not the defaults). Rates in bytes/s,
 * bursts in bytes computed from the psched ticks as tc prints them.
 * @throws {NetlinkDecodeError} TCA_HTB_PARMS shorter than tc_htb_opt
 */
function decodeClass(buf: Buffer, start: number, end: number, base: number): Record<string, unknown> {
  const T = new AttributeView(buf, start, end, base);
  const p = T.struct(TCA_HTB_PARMS, OPT_LEN);
  const out: Record<string, unknown> = {};
  if (p < 0) return out;
  // struct tc_ratespec fields read in place (this runs once per class of a dump).
  const rate = T.size(TCA_HTB_RATE64) >= 8 ? le64(buf, T.at(TCA_HTB_RATE64)) : le32(buf, p + 8);
  const ceil = T.size(TCA_HTB_CEIL64) >= 8 ? le64(buf, T.at(TCA_HTB_CEIL64)) : le32(buf, p + 20);
  const overhead = le16(buf, p + 2);
  const mpu = le16(buf, p + 6);
  const linklayer = buf[p + 1] & 0x0f;
  out.prio = le32(buf, p + 40);
  out.quantum = le32(buf, p + 32);
  out.level = le32(buf, p + 36);
  out.rate = rate;
  out.ceil = ceil;
  out.burst = calcXmitsize(rate, le32(buf, p + 24));
  out.cburst = calcXmitsize(ceil, le32(buf, p + 28));
  if (overhead) out.overhead = overhead;
  if (mpu) out.mpu = mpu;
  if (linklayer > TC_LINKLAYER_ETHERNET) out.linklayer = linklayerName(linklayer);
  if (T.has(TCA_HTB_OFFLOAD)) out.offload = null;
  return out;
}

/** htb class xstats (`struct tc_htb_xstats`), names as tc prints them. @throws {NetlinkDecodeError} shorter than 20 bytes */
function decodeXstats(buf: Buffer, start: number, end: number, base: number, _info: unknown, out: Record<string, unknown>): void {
  if (end - start < 20) throw new NetlinkDecodeError(`tc_htb_xstats needs 20 bytes, has ${end - start}`, base + start);
  out.lended = le32(buf, start);
  out.borrowed = le32(buf, start + 4);
  out.giants = le32(buf, start + 8);
  out.tokens = les32(buf, start + 12);
  out.ctokens = les32(buf, start + 16);
}

function formatQdisc(o: Record<string, unknown>, details?: boolean): string {
  let s = '';
  if (o.r2q !== undefined) {
    s += `r2q ${o.r2q} default ${o.default} direct_packets_stat ${o.direct_packets_stat}`;
    if (details) s += ` ver ${o.version}`;
  }
  if (o.direct_qlen !== undefined) s += ` direct_qlen ${o.direct_qlen}`;
  if ('offload' in o) s += ' offload';
  return s;
}

function formatClass(o: Record<string, unknown>, details?: boolean): string {
  if (o.rate === undefined) return '';
  let s = '';
  if (o.level === 0) {
    s += `prio ${o.prio} `;
    if (details) s += `quantum ${o.quantum} `;
  }
  s += `rate ${formatRate(o.rate as number)} `;
  if (o.overhead) s += `overhead ${o.overhead} `;
  s += `ceil ${formatRate(o.ceil as number)} `;
  if (o.linklayer) s += `linklayer ${o.linklayer} `;
  else if (details) s += 'linklayer ethernet ';
  if (details) {
    s += `burst ${formatSize(o.burst as number)}/8 mpu ${formatSize((o.mpu as number) ?? 0)} cburst ${formatSize(o.cburst as number)}/8 mpu ${formatSize((o.mpu as number) ?? 0)} level ${o.level} `;
  } else {
    s += `burst ${formatSize(o.burst as number)} cburst ${formatSize(o.cburst as number)} `;
  }
  return s;
}

function formatXstats(e: Record<string, unknown>): string {
  if (e.lended === undefined) return '';
  return ` lended: ${e.lended} borrowed: ${e.borrowed} giants: ${e.giants}\n tokens: ${e.tokens} ctokens: ${e.ctokens}\n`;
}

/** sch_htb. */
export const htb: QdiscKind<HtbOptions, HtbClassOptions> = {
  kind: 'htb',
  classful: true,
  optionTypes: { default: 'number|string', r2q: 'number', direct_qlen: 'number', offload: 'boolean' },
  classOptionTypes: {
    rate: 'number|string',
    ceil: 'number|string',
    burst: 'number|string',
    cburst: 'number|string',
    prio: 'number',
    quantum: 'number',
    mtu: 'number',
    mpu: 'number',
    overhead: 'number',
    linklayer: 'string',
  },
  encodeOptions: encodeQdisc,
  decodeOptions: decodeQdisc,
  encodeClassOptions: encodeClass,
  decodeClassOptions: decodeClass,
  decodeXstats,
  formatOptions: formatQdisc,
  formatClassOptions: formatClass,
  formatXstats,
};

declare module '../types.js' {
  interface QdiscOptionsByKind {
    /** htb: {@link HtbOptions} */
    htb: HtbOptions;
  }
  interface ClassOptionsByKind {
    /** htb classes: {@link HtbClassOptions} */
    htb: HtbClassOptions;
  }
}
