/**
 * `prio` (sch_prio): a fixed number of bands, each a class 1:1..1:N;
 * priomap maps the 16 skb priorities to bands.
 *
 * ```c
 * struct tc_prio_qopt {           // linux/pkt_sched.h
 *   int   bands;                  // number of bands, 2..16 (TCQ_PRIO_BANDS)
 *   __u8  priomap[TC_PRIO_MAX+1]; // logical priority -> band
 * };
 * ```
 * It is sent as the payload of TCA_OPTIONS followed, as tc does
 * (`addattr_nest_compat`), by an empty nested TCA_OPTIONS, which holds
 * TCA_PRIO_MQ when multiqueue is asked for.
 *
 * @module
 */
import { attr, AttributeView, flag } from '../../netlink/attributes.js';
import { NetlinkDecodeError, UsageError } from '../../netlink/errors.js';
import { TCA_OPTIONS, TCA_PRIO_MQ, TC_PRIO_MAX } from '../constants.js';
import type { QdiscKind } from '../types.js';

/** Options of a prio qdisc. */
export interface PrioOptions {
  /** number of bands, 2..16; default 3 */
  bands?: number;
  /** 16 band numbers, each < bands; default tc's `1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1`; a shorter list keeps the default's tail, as tc does */
  priomap?: readonly number[];
  /** TCA_PRIO_MQ: one band per device TX queue */
  multiqueue?: boolean;
}

/** tc's default priomap (q_prio.c), which never sends anything to band 3 (class 1:4). */
export const DEFAULT_PRIOMAP: readonly number[] = [1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1];
/** TCQ_PRIO_BANDS */
export const TCQ_PRIO_BANDS = 16;
/** sizeof(struct tc_prio_qopt) */
const QOPT_LEN = 4 + TC_PRIO_MAX + 1;

/**
 * Encode `struct tc_prio_qopt` (+ nested attributes) as tc does.
 * @throws {UsageError} bands out of 2..16, a priomap longer than 16 or with an entry >= bands
 */
export function encodePrioQopt(o: PrioOptions): Buffer[] {
  const bands = o.bands ?? 3;
  if (!Number.isInteger(bands) || bands < 2 || bands > TCQ_PRIO_BANDS) throw new UsageError(`prio: bands ${bands} is out of range (2..${TCQ_PRIO_BANDS})`);
  const map = o.priomap ?? DEFAULT_PRIOMAP;
  if (map.length > TC_PRIO_MAX + 1) throw new UsageError(`prio: priomap has ${map.length} entries; at most ${TC_PRIO_MAX + 1}`);
  const s = Buffer.alloc(QOPT_LEN);
  s.writeInt32LE(bands, 0);
  const full = [...DEFAULT_PRIOMAP];
  map.forEach((b, i) => {
    full[i] = b;
  });
  full.forEach((b, i) => {
    if (!Number.isInteger(b) || b < 0 || b >= bands) {
      throw new UsageError(
        `prio: priomap entry ${i} is ${b}, must be a band 0..${bands - 1}${o.priomap === undefined || i >= o.priomap.length ? ' (from the default priomap; give a full priomap for fewer than 3 bands)' : ''}`,
      );
    }
    s[4 + i] = b;
  });
  const inner = attr(TCA_OPTIONS, o.multiqueue ? flag(TCA_PRIO_MQ) : Buffer.alloc(0));
  return [attr(TCA_OPTIONS, Buffer.concat([s, inner]))];
}

/**
 * Decode `struct tc_prio_qopt` (and a nested TCA_PRIO_MQ) from a TCA_OPTIONS payload.
 * @returns `{ bands, priomap: number[16], multiqueue }` (tc -j names)
 * @throws {NetlinkDecodeError} fewer than 20 bytes, or malformed nested attributes
 */
export function decodePrioQopt(buf: Buffer, start: number, end: number, base: number): Record<string, unknown> {
  const len = end - start;
  if (len < QOPT_LEN) throw new NetlinkDecodeError(`tc_prio_qopt needs ${QOPT_LEN} bytes, TCA_OPTIONS has ${len}`, base + start);
  const priomap: number[] = new Array(TC_PRIO_MAX + 1);
  for (let i = 0; i <= TC_PRIO_MAX; i++) priomap[i] = buf[start + 4 + i];
  let multiqueue = false;
  if (len >= QOPT_LEN + 4) {
    // As iproute2's parse_rtattr_nested_compat: after the struct (NLA_ALIGN(20) = 20) sits one
    // nested attribute (a second TCA_OPTIONS) whose payload holds TCA_PRIO_MQ.
    const at = start + QOPT_LEN;
    const innerLen = buf.readUInt16LE(at);
    if (innerLen < 4 || QOPT_LEN + innerLen > len) throw new NetlinkDecodeError(`prio nested options length ${innerLen} is invalid`, base + at);
    const NT = new AttributeView(buf, at + 4, at + innerLen, base);
    if (NT.has(TCA_PRIO_MQ)) multiqueue = NT.size(TCA_PRIO_MQ) > 0 ? NT.u8(TCA_PRIO_MQ) !== 0 : true;
  }
  return { bands: buf.readInt32LE(start), priomap, multiqueue };
}

/** tc's text for prio options: `bands 4 priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1`. */
export function formatPrioQopt(o: Record<string, unknown>): string {
  if (o.bands === undefined) return '';
  let s = `bands ${o.bands} priomap ${(o.priomap as number[]).join(' ')}`;
  if (o.multiqueue) s += ' multiqueue: on ';
  return s;
}

/** sch_prio. */
export const prio: QdiscKind<PrioOptions> = {
  kind: 'prio',
  classful: true,
  optionTypes: { bands: 'number', priomap: 'array', multiqueue: 'boolean' },
  encodeOptions: encodePrioQopt,
  decodeOptions: decodePrioQopt,
  decodeClassOptions: () => ({}),
  formatOptions: formatPrioQopt,
};

declare module '../types.js' {
  interface QdiscOptionsByKind {
    /** prio: {@link PrioOptions} */
    prio: PrioOptions;
  }
}
