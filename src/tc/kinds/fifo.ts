/**
 * The fifo qdiscs: `pfifo` (limit in packets), `bfifo` (limit in bytes) and
 * `pfifo_head_drop` (packets, drops from the head), all sch_fifo.
 *
 * ```c
 * struct tc_fifo_qopt {   // linux/pkt_sched.h
 *   __u32 limit;          // queue length: bytes for bfifo, packets for pfifo
 * };
 * ```
 * Sent as the whole TCA_OPTIONS payload, only when a limit is given (the
 * kernel then defaults to the device's tx_queue_len, times the MTU for bfifo).
 *
 * @module
 */
import { u32 } from '../../netlink/attributes.js';
import { NetlinkDecodeError, UsageError } from '../../netlink/errors.js';
import { TCA_OPTIONS } from '../constants.js';
import type { QdiscKind } from '../types.js';
import { formatSize, parseSize } from '../units.js';

/** Options of pfifo / bfifo / pfifo_head_drop. */
export interface FifoOptions {
  /** packets (pfifo, pfifo_head_drop) or bytes (bfifo; tc size text such as "64kb" accepted) */
  limit?: number | string;
}

function encodeFifo(kind: string, bytes: boolean) {
  return (o: FifoOptions): Buffer[] => {
    if (o.limit === undefined) return [];
    let limit: number;
    if (bytes) limit = parseSize(o.limit, `${kind} limit`);
    else {
      limit = typeof o.limit === 'string' ? Number(o.limit.trim()) : o.limit;
      if (!Number.isInteger(limit) || limit < 0 || limit > 0xffffffff)
        throw new UsageError(`${kind}: limit ${JSON.stringify(o.limit)} must be a packet count 0..4294967295`);
    }
    return [u32(TCA_OPTIONS, limit)];
  };
}

/**
 * Decode `struct tc_fifo_qopt`.
 * @throws {NetlinkDecodeError} fewer than 4 bytes
 */
function decodeFifo(buf: Buffer, start: number, end: number, base: number): Record<string, unknown> {
  if (end - start < 4) throw new NetlinkDecodeError(`tc_fifo_qopt needs 4 bytes, TCA_OPTIONS has ${end - start}`, base + start);
  return { limit: buf.readUInt32LE(start) };
}

/** pfifo: limit in packets; tc prints `limit 1000p`. */
export const pfifo: QdiscKind<FifoOptions> = {
  kind: 'pfifo',
  module: 'sch_fifo',
  optionTypes: { limit: 'number|string' },
  encodeOptions: encodeFifo('pfifo', false),
  decodeOptions: decodeFifo,
  formatOptions: (o) => (o.limit === undefined ? '' : `limit ${o.limit}p`),
};

/** bfifo: limit in bytes; tc prints `limit 10000b` / `limit 64Kb`. */
export const bfifo: QdiscKind<FifoOptions> = {
  kind: 'bfifo',
  module: 'sch_fifo',
  optionTypes: { limit: 'number|string' },
  encodeOptions: encodeFifo('bfifo', true),
  decodeOptions: decodeFifo,
  formatOptions: (o) => (o.limit === undefined ? '' : `limit ${formatSize(o.limit as number)}`),
};

/** pfifo_head_drop: limit in packets, drops the oldest packet when full. */
export const pfifoHeadDrop: QdiscKind<FifoOptions> = {
  kind: 'pfifo_head_drop',
  module: 'sch_fifo',
  optionTypes: { limit: 'number|string' },
  encodeOptions: encodeFifo('pfifo_head_drop', false),
  decodeOptions: decodeFifo,
  formatOptions: (o) => (o.limit === undefined ? '' : `limit ${o.limit}p`),
};

declare module '../types.js' {
  interface QdiscOptionsByKind {
    /** pfifo: {@link FifoOptions} (limit in packets) */
    pfifo: FifoOptions;
    /** bfifo: {@link FifoOptions} (limit in bytes) */
    bfifo: FifoOptions;
    /** pfifo_head_drop: {@link FifoOptions} (limit in packets) */
    pfifo_head_drop: FifoOptions;
  }
}
