/**
 * `struct tc_ratespec` and rate tables, shared by htb and tbf.
 *
 * ```c
 * struct tc_ratespec {      // linux/pkt_sched.h, 12 bytes
 *   unsigned char  cell_log;
 *   __u8           linklayer;  // lower 4 bits: TC_LINKLAYER_*
 *   unsigned short overhead;
 *   short          cell_align;
 *   unsigned short mpu;
 *   __u32          rate;       // bytes per second, ~0U when the real rate is in a *_RATE64 attribute
 * };
 * ```
 * A rate table (TCA_HTB_RTAB, TCA_TBF_RTAB) is 256 u32: the psched ticks it
 * takes to send `(i + 1) << cell_log` bytes. Kernels since 3.8 compute rates
 * themselves when `linklayer` is set, but tc still sends the tables; so do we,
 * computed the same way, so the kernel sees the same request.
 *
 * @module
 */
import { UsageError } from '../netlink/errors.js';
import { TC_LINKLAYER_ATM, TC_LINKLAYER_ETHERNET, TC_LINKLAYER_MASK, TC_RTAB_SIZE } from './constants.js';
import { calcXmittime } from './units.js';

/** Decoded `struct tc_ratespec`. */
export interface Ratespec {
  cellLog: number;
  /** TC_LINKLAYER_* (lower 4 bits) */
  linklayer: number;
  /** bytes added to each packet's size */
  overhead: number;
  cellAlign: number;
  /** minimum packet size, bytes */
  mpu: number;
  /** bytes per second, u32 (~0 when clamped) */
  rate: number;
}

/** Write a tc_ratespec at `off`. */
export function writeRatespec(b: Buffer, off: number, r: Ratespec): void {
  b[off] = r.cellLog & 0xff;
  b[off + 1] = r.linklayer & 0xff;
  b.writeUInt16LE(r.overhead & 0xffff, off + 2);
  b.writeInt16LE(r.cellAlign, off + 4);
  b.writeUInt16LE(r.mpu & 0xffff, off + 6);
  b.writeUInt32LE(r.rate >>> 0, off + 8);
}

/** Read a tc_ratespec at `off` (the caller checked the length). */
export function readRatespec(b: Buffer, off: number): Ratespec {
  return {
    cellLog: b[off],
    linklayer: b[off + 1] & TC_LINKLAYER_MASK,
    overhead: b.readUInt16LE(off + 2),
    cellAlign: b.readInt16LE(off + 4),
    mpu: b.readUInt16LE(off + 6),
    rate: b.readUInt32LE(off + 8),
  };
}

/** A u32 rate field: the rate, or ~0U when it needs the 64-bit attribute. */
export function rate32(rate64: number): number {
  return rate64 >= 0x100000000 ? 0xffffffff : rate64;
}

/** tc's `tc_adjust_size`: at least `mpu`; ATM links count whole 53-byte cells per 48 bytes. */
function adjustSize(sz: number, mpu: number, linklayer: number): number {
  if (sz < mpu) sz = mpu;
  if (linklayer === TC_LINKLAYER_ATM) return Math.ceil(sz / 48) * 53;
  return sz;
}

/**
 * tc's `tc_calc_rtable`: fill in cell_log/cell_align/linklayer and build the
 * 256-entry table for `r.rate` (the u32 field, as tc does).
 * @param r rate spec (rate, mpu, overhead set); cellLog/cellAlign/linklayer are set here
 * @param cellLog -1 to derive it from `mtu`
 * @param mtu largest packet, bytes (0 means 2047)
 * @returns the 1024-byte table
 */
export function calcRtable(r: Ratespec, cellLog: number, mtu: number, linklayer: number): Buffer {
  if (mtu === 0) mtu = 2047;
  if (cellLog < 0) {
    cellLog = 0;
    while (mtu >>> cellLog > 255) cellLog++;
  }
  const tab = Buffer.alloc(TC_RTAB_SIZE);
  for (let i = 0; i < 256; i++) {
    const sz = adjustSize(((i + 1) * 2 ** cellLog) % 0x100000000, r.mpu, linklayer);
    tab.writeUInt32LE(calcXmittime(r.rate, sz) >>> 0, i * 4);
  }
  r.cellAlign = -1;
  r.cellLog = cellLog;
  r.linklayer = linklayer & TC_LINKLAYER_MASK;
  return tab;
}

/** Names tc prints for TC_LINKLAYER_* (`sprint_linklayer`). */
export function linklayerName(l: number): string {
  return l === TC_LINKLAYER_ETHERNET ? 'ethernet' : l === TC_LINKLAYER_ATM ? 'atm' : l === 0 ? 'unaware' : `unknown`;
}

/**
 * Parse a link layer as tc does: `ethernet`, `atm` (or `adsl`).
 * @throws {UsageError} anything else
 */
export function parseLinklayer(v: string): number {
  const t = v.toLowerCase();
  if (t === 'ethernet') return TC_LINKLAYER_ETHERNET;
  if (t === 'atm' || t === 'adsl') return TC_LINKLAYER_ATM;
  throw new UsageError(`invalid linklayer ${JSON.stringify(v)}: expected "ethernet" or "atm"`);
}

/**
 * Parse tc's `SIZE[/CELL]` (e.g. `"15k"`, `"15k/8"`).
 * @returns size in bytes and cell_log (-1 when no cell is given)
 * @throws {UsageError} bad size, or a cell that is not a power of two below 2^32
 */
export function parseSizeAndCell(v: string | number, what: string, parseSize: (v: string | number, w: string) => number): { size: number; cellLog: number } {
  if (typeof v === 'number') return { size: parseSize(v, what), cellLog: -1 };
  const [sz, cell] = v.split('/', 2);
  const size = parseSize(sz, what);
  if (cell === undefined) return { size, cellLog: -1 };
  const c = Number(cell);
  for (let i = 0; i < 32; i++) if (2 ** i === c) return { size, cellLog: i };
  throw new UsageError(`invalid ${what} ${JSON.stringify(v)}: the cell size after "/" must be a power of two`);
}
