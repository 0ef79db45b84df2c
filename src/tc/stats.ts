/**
 * tc statistics: TCA_STATS2 (nested, linux/gen_stats.h) and the legacy
 * TCA_STATS (`struct tc_stats`, linux/pkt_sched.h), decoded into the
 * flat fields `tc -j -s` prints, and printed as `tc -s` does.
 *
 * ```c
 * struct gnet_stats_basic     { __u64 bytes; __u32 packets; };           // TCA_STATS_BASIC (16 bytes with padding)
 * struct gnet_stats_rate_est  { __u32 bps; __u32 pps; };                 // TCA_STATS_RATE_EST
 * struct gnet_stats_rate_est64{ __u64 bps; __u64 pps; };                 // TCA_STATS_RATE_EST64
 * struct gnet_stats_queue     { __u32 qlen, backlog, drops, requeues, overlimits; }; // TCA_STATS_QUEUE
 * struct tc_stats { __u64 bytes; __u32 packets, drops, overlimits, bps, pps, qlen, backlog; };  // TCA_STATS
 * ```
 *
 * Like tc, short structs are read as far as they go (the rest is 0): the
 * kernel may send fewer or more bytes than this header knows.
 *
 * @module
 */
import { TCA_STATS_BASIC, TCA_STATS_RATE_EST, TCA_STATS_QUEUE, TCA_STATS_APP, TCA_STATS_RATE_EST64, TCA_STATS_PKT64, TCA_STATS_BASIC_HW } from './constants.js';
import { AttributeView, le32 } from '../netlink/attributes.js';
import type { TcStats } from './types.js';
import { formatRate, formatSize } from './units.js';

/** Read a little-endian u32 at `at + off` when it lies inside `len` bytes, else 0. */
function u32In(buf: Buffer, at: number, len: number, off: number): number {
  return off + 4 <= len ? le32(buf, at + off) : 0;
}
function u64In(buf: Buffer, at: number, len: number, off: number): number {
  if (off + 8 <= len) {
    // a high word of 0 (nearly every counter) keeps the value a small integer, which JSON.stringify prints fastest
    const hi = le32(buf, at + off + 4);
    return hi === 0 ? le32(buf, at + off) : le32(buf, at + off) + hi * 0x100000000;
  }
  return u32In(buf, at, len, off);
}

/** Where TCA_STATS_APP sits, for the kind's xstats decoder. */
export interface XstatsRef {
  /** payload start in the buffer */
  start: number;
  /** payload length */
  len: number;
}

/**
 * Decode a TCA_STATS2 payload into `out` (bytes, packets, drops,
 * overlimits, requeues, backlog, qlen, and rate/pps when an estimator runs;
 * hw_bytes/hw_packets when TCA_STATS_BASIC_HW is non-zero).
 * @param buf enclosing buffer
 * @param start payload start in `buf`
 * @param end payload end in `buf`
 * @param base absolute offset of `buf[0]`
 * @returns where TCA_STATS_APP is, or undefined
 * @throws {NetlinkDecodeError} malformed nested attributes
 */
export function decodeStats2(buf: Buffer, start: number, end: number, base: number, out: TcStats & Record<string, unknown>): XstatsRef | undefined {
  const v = new AttributeView(buf, start, end, base);
  const at = stats2Into(v, out);
  return at >= 0 ? { start: at, len: v.size(TCA_STATS_APP) } : undefined;
}

/**
 * {@link decodeStats2} over a view of the TCA_STATS2 payload: returns where
 * TCA_STATS_APP's payload starts in `T.buf` (-1 when absent; its length is
 * `T.size(TCA_STATS_APP)`).
 * @throws {NetlinkDecodeError}
 */
export function stats2Into(T: AttributeView, out: TcStats & Record<string, unknown>): number {
  const buf = T.buf;
  let at = T.at(TCA_STATS_BASIC);
  if (at >= 0) {
    const len = T.size(TCA_STATS_BASIC);
    out.bytes = u64In(buf, at, len, 0);
    const p64 = T.at(TCA_STATS_PKT64);
    const pk64 = p64 >= 0 ? u64In(buf, p64, T.size(TCA_STATS_PKT64), 0) : 0;
    out.packets = pk64 || u32In(buf, at, len, 8);
  }
  at = T.at(TCA_STATS_QUEUE);
  if (at >= 0) {
    const len = T.size(TCA_STATS_QUEUE);
    out.drops = u32In(buf, at, len, 8);
    out.overlimits = u32In(buf, at, len, 16);
    out.requeues = u32In(buf, at, len, 12);
    out.backlog = u32In(buf, at, len, 4);
    out.qlen = u32In(buf, at, len, 0);
  }
  at = T.at(TCA_STATS_BASIC_HW);
  if (at >= 0) {
    const len = T.size(TCA_STATS_BASIC_HW);
    const hwBytes = u64In(buf, at, len, 0);
    const hwPackets = u32In(buf, at, len, 8);
    if (hwBytes || hwPackets) {
      out.hw_bytes = hwBytes;
      out.hw_packets = hwPackets;
    }
  }
  at = T.at(TCA_STATS_RATE_EST64);
  if (at >= 0) {
    const len = T.size(TCA_STATS_RATE_EST64);
    out.rate = u64In(buf, at, len, 0);
    out.pps = u64In(buf, at, len, 8);
  } else if (T.at(TCA_STATS_RATE_EST) >= 0) {
    const est = T.at(TCA_STATS_RATE_EST);
    const len = T.size(TCA_STATS_RATE_EST);
    out.rate = u32In(buf, est, len, 0);
    out.pps = u32In(buf, est, len, 4);
  }
  return T.at(TCA_STATS_APP);
}

/**
 * Decode a legacy TCA_STATS payload (`struct tc_stats`) into `out`. Sets no
 * `requeues` (the struct has none); sets rate/pps only when non-zero.
 */
export function decodeLegacyStats(buf: Buffer, start: number, len: number, out: TcStats): void {
  out.bytes = u64In(buf, start, len, 0);
  out.packets = u32In(buf, start, len, 8);
  out.drops = u32In(buf, start, len, 12);
  out.overlimits = u32In(buf, start, len, 16);
  const bps = u32In(buf, start, len, 20);
  const pps = u32In(buf, start, len, 24);
  out.qlen = u32In(buf, start, len, 28);
  out.backlog = u32In(buf, start, len, 32);
  if (bps || pps) {
    out.rate = bps;
    out.pps = pps;
  }
}

/**
 * Print stats as `tc -s` does, with `prefix` (tc uses one space) before each
 * line, no trailing newline:
 * ```
 *  Sent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0)
 *  backlog 74b 1p requeues 0
 * ```
 * (the first line keeps tc's trailing space). Legacy TCA_STATS-only entries
 * (no `requeues`) print tc's older format.
 * @returns '' when the entry has no counters
 */
export function formatStats(s: TcStats & Record<string, unknown>, prefix = ' '): string {
  if (s.bytes === undefined && s.drops === undefined) return '';
  if (s.requeues === undefined) {
    // struct tc_stats only
    let out = `${prefix}Sent ${s.bytes ?? 0} bytes ${s.packets ?? 0} pkts (dropped ${s.drops ?? 0}, overlimits ${s.overlimits ?? 0}) `;
    const bps = s.rate ?? 0;
    const pps = s.pps ?? 0;
    const qlen = s.qlen ?? 0;
    const backlog = s.backlog ?? 0;
    if (bps || pps || qlen || backlog) {
      out += `\n${prefix}`;
      if (bps || pps) {
        out += 'rate ';
        if (bps) out += `${formatRate(bps)} `;
        if (pps) out += `${pps}pps `;
      }
      if (qlen || backlog) {
        out += 'backlog ';
        if (backlog) out += `${formatSize(backlog)} `;
        if (qlen) out += `${qlen}p `;
      }
    }
    return out;
  }
  let out = '';
  if (s.bytes !== undefined) out += `${prefix}Sent ${s.bytes} bytes ${s.packets ?? 0} pkt`;
  out += ` (dropped ${s.drops ?? 0}, overlimits ${s.overlimits ?? 0} requeues ${s.requeues}) `;
  if (s.hw_bytes !== undefined) {
    if (s.bytes !== undefined && (s.bytes as number) >= (s.hw_bytes as number) && (s.packets ?? 0) >= (s.hw_packets as number)) {
      out += `\n${prefix}Sent software ${(s.bytes as number) - (s.hw_bytes as number)} bytes ${(s.packets ?? 0) - (s.hw_packets as number)} pkt`;
    }
    out += `\n${prefix}Sent hardware ${s.hw_bytes} bytes ${s.hw_packets} pkt`;
  }
  if (s.rate !== undefined) out += `\n${prefix}rate ${formatRate(s.rate)} ${s.pps ?? 0}pps`;
  else out += '\n';
  out += `${prefix}backlog ${formatSize(s.backlog ?? 0)} ${s.qlen ?? 0}p requeues ${s.requeues}`;
  return out;
}
