/**
 * Rates, sizes and times in tc's units and notation, and the packet
 * scheduler clock ("psched ticks") the kernel uses in `tc_htb_opt.buffer`
 * and `tc_tbf_qopt.buffer`.
 *
 * Parsing accepts tc's text (`"10mbit"`, `"15k"`, `"50ms"`) or a number in
 * the base unit (bytes per second, bytes, microseconds). Printing matches
 * tc's text output (`10Mbit`, `15Kb`, `1600b`, `50ms`).
 *
 * @module
 */
import { UsageError } from '../netlink/errors.js';

/**
 * Microseconds per second: tc's TIME_UNITS_PER_SEC.
 */
export const TIME_UNITS_PER_SEC = 1_000_000;

/**
 * psched ticks per microsecond. The kernel's `/proc/net/psched` has read
 * `000003e8 00000040 000f4240 ...` since PSCHED_SHIFT became 6 (a tick is
 * 64 ns): t2us = 1000, us2t = 64, clock_res = 1000000, so tc's
 * `tick_in_usec = t2us / us2t = 15.625`.
 */
export const TICKS_PER_USEC = 1000 / 64;

/** C's conversion of a non-negative double to `unsigned int`: truncate, keep 32 bits. */
function toU32(x: number): number {
  if (!(x > 0)) return 0;
  return Math.trunc(x) % 0x100000000;
}

/** tc_core_time2tick: microseconds -> psched ticks (truncated to u32). */
export function time2tick(us: number): number {
  return toU32(toU32(us) * TICKS_PER_USEC);
}

/** tc_core_tick2time: psched ticks -> microseconds (truncated to u32). */
export function tick2time(ticks: number): number {
  return toU32(ticks / TICKS_PER_USEC);
}

/**
 * tc_calc_xmittime: the psched ticks it takes to send `size` bytes at
 * `rate` bytes per second (what goes in `tc_htb_opt.buffer`).
 */
export function calcXmittime(rate: number, size: number): number {
  if (!(rate > 0)) return 0;
  return time2tick(TIME_UNITS_PER_SEC * (size / rate));
}

/**
 * tc_calc_xmitsize: the bytes sent in `ticks` psched ticks at `rate` bytes
 * per second (how tc prints `burst` from `tc_htb_opt.buffer`).
 */
export function calcXmitsize(rate: number, ticks: number): number {
  return toU32((rate * tick2time(ticks)) / TIME_UNITS_PER_SEC);
}

const NUM = /^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z%]*)\s*$/;

/* Rate suffixes of iproute2 (lib/utils_math.c): value is the multiplier to bits/s; matched case-insensitively. */
const RATE_SUFFIXES: ReadonlyArray<[string, number]> = [
  ['bit', 1],
  ['kibit', 1024],
  ['kbit', 1000],
  ['mibit', 1024 ** 2],
  ['mbit', 1e6],
  ['gibit', 1024 ** 3],
  ['gbit', 1e9],
  ['tibit', 1024 ** 4],
  ['tbit', 1e12],
  ['bps', 8],
  ['kibps', 8 * 1024],
  ['kbps', 8000],
  ['mibps', 8 * 1024 ** 2],
  ['mbps', 8e6],
  ['gibps', 8 * 1024 ** 3],
  ['gbps', 8e9],
  ['tibps', 8 * 1024 ** 4],
  ['tbps', 8e12],
];

/**
 * Parse a rate as tc's `get_rate64` does.
 *
 * - a number: bytes per second, as given;
 * - text: a decimal number and a unit, case-insensitive: `bit`, `kbit`,
 *   `mbit`, `gbit`, `tbit` (powers of 1000), `kibit`... (powers of 1024),
 *   `bps`, `kbps`, `mbps`... (BYTES per second, as in tc), no unit = bits per second.
 *
 * @returns bytes per second (truncated to an integer)
 * @throws {UsageError} unknown unit, a percentage (needs the link speed), not a number, or negative
 */
export function parseRate(v: string | number, what = 'rate'): number {
  if (typeof v === 'number') {
    if (!Number.isFinite(v) || v < 0) throw new UsageError(`invalid ${what} ${v}: expected bytes per second >= 0`);
    return Math.trunc(v);
  }
  const m = NUM.exec(String(v));
  if (!m) throw new UsageError(`invalid ${what} ${JSON.stringify(v)}: expected a number and a unit such as "10mbit", "1gbit", "100kbps"`);
  let bits = Number(m[1]);
  const unit = m[2].toLowerCase();
  if (unit === '%')
    throw new UsageError(`invalid ${what} ${JSON.stringify(v)}: percentages of the link speed are not supported; give an absolute rate such as "10mbit"`);
  if (unit !== '') {
    const s = RATE_SUFFIXES.find(([name]) => name === unit);
    if (!s)
      throw new UsageError(
        `invalid ${what} ${JSON.stringify(v)}: unknown unit "${m[2]}" (use bit, kbit, mbit, gbit, tbit, kibit, mibit..., bps, kbps, mbps...)`,
      );
    bits *= s[1];
  }
  return Math.trunc(bits / 8);
}

/**
 * Parse a size as tc's `get_size` does: bytes by default; `b`, `k`/`kb`
 * (1024), `m`/`mb`, `g`/`gb`, and `kbit`, `mbit`, `gbit` (1024-based bits), case-insensitive.
 * A number is bytes.
 * @returns bytes, an integer that fits a u32
 * @throws {UsageError} unknown unit, not a number, negative, or over 4 GiB - 1
 */
export function parseSize(v: string | number, what = 'size'): number {
  let sz: number;
  if (typeof v === 'number') {
    sz = v;
  } else {
    const m = NUM.exec(String(v));
    if (!m)
      throw new UsageError(
        `invalid ${what} ${JSON.stringify(v)}: expected a number of bytes, optionally with a unit (b, k, kb, m, mb, g, gb, kbit, mbit, gbit)`,
      );
    sz = Number(m[1]);
    const unit = m[2].toLowerCase();
    const mult: Record<string, number> = {
      '': 1,
      b: 1,
      k: 1024,
      kb: 1024,
      m: 1024 ** 2,
      mb: 1024 ** 2,
      g: 1024 ** 3,
      gb: 1024 ** 3,
      kbit: 1024 / 8,
      mbit: (1024 * 1024) / 8,
      gbit: 1024 ** 3 / 8,
    };
    if (!(unit in mult)) throw new UsageError(`invalid ${what} ${JSON.stringify(v)}: unknown unit "${m[2]}" (use b, k, kb, m, mb, g, gb, kbit, mbit, gbit)`);
    sz *= mult[unit];
  }
  if (!Number.isFinite(sz) || sz < 0 || sz > 0xffffffff) throw new UsageError(`invalid ${what} ${JSON.stringify(v)}: must be between 0 and 4294967295 bytes`);
  return Math.trunc(sz);
}

/**
 * Parse a time as tc's `get_time` does: microseconds by default; `s`,
 * `sec`, `secs`, `ms`, `msec`, `msecs`, `us`, `usec`, `usecs`. A number is microseconds.
 * @returns microseconds, an integer that fits a u32
 * @throws {UsageError} unknown unit, not a number, negative, or too large
 */
export function parseTime(v: string | number, what = 'time'): number {
  let t: number;
  if (typeof v === 'number') {
    t = v;
  } else {
    const m = NUM.exec(String(v));
    if (!m) throw new UsageError(`invalid ${what} ${JSON.stringify(v)}: expected a time such as "50ms", "1s", "500us"`);
    t = Number(m[1]);
    const unit = m[2].toLowerCase();
    if (['s', 'sec', 'secs'].includes(unit)) t *= TIME_UNITS_PER_SEC;
    else if (['ms', 'msec', 'msecs'].includes(unit)) t *= TIME_UNITS_PER_SEC / 1000;
    else if (!['', 'us', 'usec', 'usecs'].includes(unit)) {
      throw new UsageError(`invalid ${what} ${JSON.stringify(v)}: unknown unit "${m[2]}" (use s, ms, us)`);
    }
  }
  if (!Number.isFinite(t) || t < 0 || t > 0xffffffff)
    throw new UsageError(`invalid ${what} ${JSON.stringify(v)}: must be between 0 and 4294967295 microseconds`);
  return Math.trunc(t);
}

/**
 * C's `%.<precision>g` for a finite number (no `#` flag): the shortest of
 * fixed and exponential notation, trailing zeros removed.
 */
export function formatG(x: number, precision = 6): string {
  if (x === 0) return '0';
  const p = precision === 0 ? 1 : precision;
  const [mant, expText] = Math.abs(x)
    .toExponential(p - 1)
    .split('e');
  const exp = Number(expText);
  const sign = x < 0 ? '-' : '';
  if (exp < -4 || exp >= p) {
    const m = mant.includes('.') ? mant.replace(/0+$/, '').replace(/\.$/, '') : mant;
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  const fixed = Math.abs(x).toFixed(Math.max(0, p - 1 - exp));
  const f = fixed.includes('.') ? fixed.replace(/0+$/, '').replace(/\.$/, '') : fixed;
  return sign + f;
}

/**
 * Print a rate as tc does (`print_rate`, SI units): bytes per second in,
 * `"10Mbit"`, `"1600bit"`, `"1500Kbit"` out. A unit is used only when the
 * value divides evenly or is at least 1000 of it.
 * @param bytesPerSec bytes per second
 */
export function formatRate(bytesPerSec: number): string {
  let rate = Math.trunc(bytesPerSec) * 8;
  const units = ['', 'K', 'M', 'G', 'T'];
  let i = 0;
  for (; i < units.length - 1; i++) {
    if (rate < 1000) break;
    if (rate % 1000 !== 0 && rate < 1000 * 1000) break;
    rate = Math.floor(rate / 1000);
  }
  return `${rate}${units[i]}bit`;
}

/**
 * Print a size as tc does (`sprint_size`): `"1600b"`, `"15Kb"`, `"1Mb"`
 * (a unit when within 16 bytes of a KiB multiple, or 1 KiB of a MiB multiple).
 * @param bytes a u32 byte count
 */
export function formatSize(bytes: number): string {
  const kilo = 1024;
  const mega = kilo * kilo;
  const sz = bytes >>> 0;
  if (sz >= mega && Math.abs(mega * Math.round(sz / mega) - sz) < 1024) return `${formatG(Math.round(sz / mega))}Mb`;
  if (sz >= kilo && Math.abs(kilo * Math.round(sz / kilo) - sz) < 16) return `${formatG(Math.round(sz / kilo))}Kb`;
  return `${sz}b`;
}

/**
 * Print a time as tc does (`sprint_time`): microseconds in, `"50ms"`,
 * `"1s"`, `"5us"`, `"1.5s"` out (three significant digits).
 * @param us microseconds (u32)
 */
export function formatTime(us: number): string {
  const t = us >>> 0;
  if (t >= TIME_UNITS_PER_SEC) return `${formatG(t / TIME_UNITS_PER_SEC, 3)}s`;
  if (t >= TIME_UNITS_PER_SEC / 1000) return `${formatG(t / (TIME_UNITS_PER_SEC / 1000), 3)}ms`;
  return `${t}us`;
}

/** What {@link checkedBufferTicks} names in its refusals. */
export interface BufferField {
  /** the object, e.g. `'htb class'`, `'tbf'` */
  who: string;
  /** the user's option, e.g. `'burst'`, `'cburst'` */
  burst: string;
  /** the rate option it is sent at, e.g. `'rate'`, `'ceil'` */
  of: string;
  /** the kernel's field and struct, e.g. `'buffer'` and `'tc_htb_opt'` */
  field: string;
  struct: string;
  /** the burst is the default (rate / HZ + mtu, as tc computes it), not the caller's */
  defaulted?: boolean;
}

/**
 * A burst as the psched ticks (u32) of a buffer field such as
 * `tc_htb_opt.buffer` or `tc_tbf_qopt.buffer`, as tc_calc_xmittime computes
 * them at `rate` (bytes/s, u64 range). Refused when the field cannot hold it:
 * so short at that rate that it reads back as 0 bytes (0 ticks, or under one
 * whole microsecond when turned back into bytes: `burst 0b`), or longer
 * than a u32 of ticks, which would wrap around.
 * @returns the ticks at `rate`
 * @throws {UsageError} naming the smallest (or largest) burst that fits
 */
export function checkedBufferTicks(rate: number, size: number, f: BufferField): number {
  const us = (TIME_UNITS_PER_SEC * size) / rate;
  const given = f.defaulted ? `the default ${f.burst} (${size} bytes: ${f.of} / HZ + mtu, as tc computes it)` : `a ${f.burst} of ${size} bytes`;
  if (Math.trunc(us) * TICKS_PER_USEC >= 2 ** 32) {
    const maxBytes = Math.floor((Math.floor((2 ** 32 - 1) / TICKS_PER_USEC) * rate) / TIME_UNITS_PER_SEC);
    throw new UsageError(
      `${f.who}: at ${f.of} ${formatRate(rate)}, ${given} lasts longer than the kernel's ${f.field} field (a u32 of psched ticks, struct ${f.struct}) holds; give a ${f.burst} of at most ${maxBytes} bytes or a higher ${f.of}`,
    );
  }
  const ticks = calcXmittime(rate, size);
  if (ticks === 0 || calcXmitsize(rate, ticks) === 0) {
    let min = Math.max(1, Math.ceil((2 * rate) / TIME_UNITS_PER_SEC));
    while (calcXmitsize(rate, calcXmittime(rate, min)) === 0 && min < 2 ** 32) min *= 2;
    const fits = calcXmitsize(rate, calcXmittime(rate, min)) !== 0 && min < 2 ** 32;
    throw new UsageError(
      `${f.who}: at ${f.of} ${formatRate(rate)}, ${given} is too short for the kernel's ${f.field} field (psched ticks, struct ${f.struct}): it would read back as "${f.burst} 0b"; ${fits ? `give a ${f.burst} of at least ${min} bytes` : `no ${f.burst} fits at this ${f.of} (the ${f.field} field is a u32 of ticks): give a lower ${f.of}`}`,
    );
  }
  return ticks;
}
