/**
 * `tbf` (sch_tbf): token bucket filter, a rate limit with a burst.
 *
 * ```c
 * struct tc_tbf_qopt {          // TCA_TBF_PARMS (linux/pkt_sched.h)
 *   struct tc_ratespec rate;
 *   struct tc_ratespec peakrate;
 *   __u32 limit;                // bytes that may wait in the queue
 *   __u32 buffer;               // burst, psched ticks at `rate`
 *   __u32 mtu;                  // psched ticks at `peakrate`
 * };
 * ```
 * Plus TCA_TBF_BURST (u32 bytes), TCA_TBF_RATE64 / TCA_TBF_PRATE64 for rates
 * of 2^32 bytes/s or more, TCA_TBF_RTAB / TCA_TBF_PTAB rate tables, and
 * TCA_TBF_PBURST (u32 bytes) with a peak rate — the order tc sends them in.
 *
 * @module
 */
import { attr, AttributeView, le64, nested, u32, u64 } from '../../netlink/attributes.js';
import { UsageError } from '../../netlink/errors.js';
import {
  TCA_OPTIONS,
  TCA_TBF_PARMS,
  TCA_TBF_RTAB,
  TCA_TBF_PTAB,
  TCA_TBF_RATE64,
  TCA_TBF_PRATE64,
  TCA_TBF_BURST,
  TCA_TBF_PBURST,
  TC_LINKLAYER_ETHERNET,
} from '../constants.js';
import { parseIntArg } from '../args.js';
import { calcRtable, linklayerName, parseLinklayer, parseSizeAndCell, rate32, readRatespec, writeRatespec, type Ratespec } from '../ratespec.js';
import type { QdiscKind } from '../types.js';
import {
  checkedBufferTicks,
  calcXmitsize,
  calcXmittime,
  formatRate,
  formatSize,
  formatTime,
  parseRate,
  parseSize,
  parseTime,
  tick2time,
  TIME_UNITS_PER_SEC,
} from '../units.js';

/** Options of a tbf qdisc: `rate`, `burst`, and one of `limit` / `latency` are required. */
export interface TbfOptions {
  /** bytes per second or tc text ("1mbit") */
  rate: number | string;
  /** bucket size in bytes, or tc text ("10k", "10k/8") */
  burst: number | string;
  /** queue limit in bytes (or tc text); exclusive with latency */
  limit?: number | string;
  /** how long a packet may wait, microseconds or tc text ("50ms"); exclusive with limit */
  latency?: number | string;
  /** peak rate (needs mtu) */
  peakrate?: number | string;
  /** size of the peak-rate bucket (tc's `mtu` / `minburst`), bytes */
  mtu?: number | string;
  /** minimum packet size, bytes */
  mpu?: number | string;
  /** per-packet overhead, bytes */
  overhead?: number;
  /** "ethernet" (default) or "atm" */
  linklayer?: string;
}

const QOPT_LEN = 12 + 12 + 12;

/**
 * Options -> TCA_OPTIONS, as tc's tbf_parse_opt builds it.
 * @throws {UsageError} missing rate/burst/limit-or-latency, both limit and latency, peakrate without mtu, bad values
 */
function encodeOptions(o: TbfOptions): Buffer[] {
  const missing: string[] = [];
  if (o.rate === undefined) missing.push('"rate"');
  if (o.burst === undefined) missing.push('"burst"');
  if (o.limit === undefined && o.latency === undefined) missing.push('"limit" or "latency"');
  if (missing.length) throw new UsageError(`tbf: ${missing.join(', ')} required`);
  if (o.limit !== undefined && o.latency !== undefined) throw new UsageError('tbf: give "limit" or "latency", not both');
  const rate64 = parseRate(o.rate, 'tbf rate');
  if (rate64 === 0) throw new UsageError('tbf: rate must be greater than 0');
  if (!(rate64 <= 2 ** 64 - 1))
    throw new UsageError(`tbf: rate ${formatRate(rate64)} is beyond what the kernel's TCA_TBF_RATE64 holds (a u64 of bytes per second)`);
  const b = parseSizeAndCell(o.burst, 'tbf burst', parseSize);
  if (b.size === 0) throw new UsageError('tbf: burst must be greater than 0');
  // the kernel keeps the burst as time at the rate (psched ticks in tc_tbf_qopt.buffer): refuse one it would read back as 0
  checkedBufferTicks(rate64, b.size, { who: 'tbf', burst: 'burst', of: 'rate', field: 'buffer', struct: 'tc_tbf_qopt' });
  const prate64 = o.peakrate === undefined ? 0 : parseRate(o.peakrate, 'tbf peakrate');
  const m = o.mtu === undefined ? { size: 0, cellLog: -1 } : parseSizeAndCell(o.mtu, 'tbf mtu', parseSize);
  if (prate64 && !m.size) throw new UsageError('tbf: "mtu" (the peak-rate bucket size) is required with "peakrate"');
  const mpu = o.mpu === undefined ? 0 : parseSize(o.mpu, 'tbf mpu');
  const overhead = o.overhead === undefined ? 0 : parseIntArg(o.overhead, 'tbf overhead', 0, 0xffff);
  const linklayer = o.linklayer === undefined ? TC_LINKLAYER_ETHERNET : parseLinklayer(o.linklayer);
  let limit = o.limit === undefined ? 0 : parseSize(o.limit, 'tbf limit');
  if (o.limit === undefined) {
    const latency = parseTime(o.latency!, 'tbf latency');
    let lim = (rate64 * latency) / TIME_UNITS_PER_SEC + b.size;
    if (prate64) {
      const lim2 = (prate64 * latency) / TIME_UNITS_PER_SEC + m.size;
      if (lim2 < lim) lim = lim2;
    }
    limit = Math.trunc(lim) >>> 0;
  }
  const r: Ratespec = { cellLog: 0, linklayer: 0, overhead, cellAlign: 0, mpu, rate: rate32(rate64) };
  const pr: Ratespec = { cellLog: 0, linklayer: 0, overhead: 0, cellAlign: 0, mpu: 0, rate: rate32(prate64) };
  const rtab = calcRtable(r, b.cellLog, m.size, linklayer);
  let ptab: Buffer | undefined;
  let mtuTicks = 0;
  if (pr.rate) {
    pr.mpu = mpu;
    pr.overhead = overhead;
    ptab = calcRtable(pr, m.cellLog, m.size, linklayer);
    mtuTicks = calcXmittime(pr.rate, m.size);
  }
  const p = Buffer.alloc(QOPT_LEN);
  writeRatespec(p, 0, r);
  writeRatespec(p, 12, pr);
  p.writeUInt32LE(limit, 24);
  p.writeUInt32LE(calcXmittime(r.rate, b.size), 28);
  p.writeUInt32LE(mtuTicks, 32);
  const kids = [attr(TCA_TBF_PARMS, p), u32(TCA_TBF_BURST, b.size)];
  if (rate64 >= 0x100000000) kids.push(u64(TCA_TBF_RATE64, rate64));
  kids.push(attr(TCA_TBF_RTAB, rtab));
  if (ptab) {
    if (prate64 >= 0x100000000) kids.push(u64(TCA_TBF_PRATE64, prate64));
    kids.push(u32(TCA_TBF_PBURST, m.size), attr(TCA_TBF_PTAB, ptab));
  }
  return [nested(TCA_OPTIONS, kids)];
}

/**
 * TCA_OPTIONS -> `{ rate, burst, lat?, limit, peakrate?, minburst?, mpu?, overhead?, linklayer? }`
 * (tc -j names; `lat` in microseconds when non-negative, as tc computes it).
 * @throws {NetlinkDecodeError} TCA_TBF_PARMS shorter than tc_tbf_qopt
 */
function decodeOptions(buf: Buffer, start: number, end: number, base: number): Record<string, unknown> {
  const T = new AttributeView(buf, start, end, base);
  const p = T.struct(TCA_TBF_PARMS, QOPT_LEN);
  const out: Record<string, unknown> = {};
  if (p < 0) return out;
  const r = readRatespec(buf, p);
  const pr = readRatespec(buf, p + 12);
  const limit = buf.readUInt32LE(p + 24);
  const buffer = buf.readUInt32LE(p + 28);
  const mtu = buf.readUInt32LE(p + 32);
  const rate = T.size(TCA_TBF_RATE64) >= 8 ? le64(buf, T.at(TCA_TBF_RATE64)) : r.rate;
  const prate = T.size(TCA_TBF_PRATE64) >= 8 ? le64(buf, T.at(TCA_TBF_PRATE64)) : pr.rate;
  out.rate = rate;
  out.burst = calcXmitsize(rate, buffer);
  if (prate) {
    out.peakrate = prate;
    if (mtu || pr.mpu) out.minburst = calcXmitsize(prate, mtu);
  }
  let latency = TIME_UNITS_PER_SEC * (limit / rate) - tick2time(buffer);
  if (prate) {
    const lat2 = TIME_UNITS_PER_SEC * (limit / prate) - tick2time(mtu);
    if (lat2 > latency) latency = lat2;
  }
  if (latency >= 0) out.lat = Math.trunc(latency);
  out.limit = limit;
  if (r.mpu) out.mpu = r.mpu;
  if (r.overhead) out.overhead = r.overhead;
  if (r.linklayer > TC_LINKLAYER_ETHERNET) out.linklayer = linklayerName(r.linklayer);
  return out;
}

function formatOptions(o: Record<string, unknown>): string {
  if (o.rate === undefined) return '';
  let s = `rate ${formatRate(o.rate as number)} burst ${formatSize(o.burst as number)} `;
  if (o.peakrate !== undefined) {
    s += `peakrate ${formatRate(o.peakrate as number)} `;
    if (o.minburst !== undefined) s += `minburst ${formatSize(o.minburst as number)} `;
  }
  if (o.lat !== undefined) s += `lat ${formatTime(o.lat as number)} `;
  else s += `limit ${formatSize(o.limit as number)} `;
  if (o.overhead) s += `overhead ${o.overhead} `;
  if (o.linklayer) s += `linklayer ${o.linklayer} `;
  return s;
}

/** sch_tbf. */
export const tbf: QdiscKind<TbfOptions> = {
  kind: 'tbf',
  classful: true,
  optionTypes: {
    rate: 'number|string',
    burst: 'number|string',
    limit: 'number|string',
    latency: 'number|string',
    peakrate: 'number|string',
    mtu: 'number|string',
    mpu: 'number|string',
    overhead: 'number',
    linklayer: 'string',
  },
  encodeOptions,
  decodeOptions,
  decodeClassOptions: () => ({}),
  formatOptions,
};

declare module '../types.js' {
  interface QdiscOptionsByKind {
    /** tbf: {@link TbfOptions} */
    tbf: TbfOptions;
  }
}
