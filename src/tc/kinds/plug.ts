/**
 * `plug` (sch_plug): a queue that holds packets while "plugged" and lets
 * them go on release. The zero-downtime reload technique buffers SYNs here.
 *
 * ```c
 * struct tc_plug_qopt {   // linux/pkt_sched.h
 *   int   action;         // TCQ_PLUG_BUFFER 0, TCQ_PLUG_RELEASE_ONE 1,
 *                         // TCQ_PLUG_RELEASE_INDEFINITE 2, TCQ_PLUG_LIMIT 3
 *   __u32 limit;          // bytes, for TCQ_PLUG_LIMIT
 * };
 * ```
 * Sent as the whole TCA_OPTIONS payload. Facts the callers must respect:
 * - a new plug starts buffering (the kernel's init plugs it);
 * - without options the kernel uses tx_queue_len × MTU bytes as the limit;
 *   a limit of 0 drops everything, so this module refuses it;
 * - sch_plug has NO dump op: the kernel never reports its options or
 *   whether it is plugged, so decoded dumps show `options: {}`; requests
 *   (ours, or captured ones) do decode;
 * - its verbs (buffer, release, limit) are changes of the qdisc: see
 *   `plug-control.ts`.
 *
 * @module
 */
import { attr } from '../../netlink/attributes.js';
import { NetlinkDecodeError, UsageError } from '../../netlink/errors.js';
import { TCA_OPTIONS, TCQ_PLUG_BUFFER, TCQ_PLUG_LIMIT, TCQ_PLUG_RELEASE_INDEFINITE, TCQ_PLUG_RELEASE_ONE } from '../constants.js';
import type { QdiscKind } from '../types.js';
import { parseSize } from '../units.js';

/** The module that provides the plug qdisc. */
export const PLUG_MODULE = 'sch_plug';

/** A plug action, by name (TCQ_PLUG_*). */
export type PlugAction = 'buffer' | 'release_one' | 'release_indefinite' | 'limit';

/** Options of a plug qdisc: at most one action per message. */
export interface PlugOptions {
  /** what to do; default `'limit'` when `limit` is given, else nothing is sent */
  action?: PlugAction;
  /** queue limit in bytes (u32, > 0), with action 'limit'; tc size text accepted ("1mb") */
  limit?: number | string;
}

const ACTIONS: Record<PlugAction, number> = {
  buffer: TCQ_PLUG_BUFFER,
  release_one: TCQ_PLUG_RELEASE_ONE,
  release_indefinite: TCQ_PLUG_RELEASE_INDEFINITE,
  limit: TCQ_PLUG_LIMIT,
};
const NAMES = ['buffer', 'release_one', 'release_indefinite', 'limit'] as const;

/**
 * Encode `struct tc_plug_qopt` in TCA_OPTIONS.
 * @param action TCQ_PLUG_* number
 * @param limit bytes (only meaningful for TCQ_PLUG_LIMIT)
 */
export function encodePlugQopt(action: number, limit = 0): Buffer {
  const b = Buffer.alloc(8);
  b.writeInt32LE(action, 0);
  b.writeUInt32LE(limit >>> 0, 4);
  return attr(TCA_OPTIONS, b);
}

/**
 * Options -> TCA_OPTIONS (nothing when neither action nor limit is given).
 * @throws {UsageError} unknown action, a limit of 0 or over u32, or a limit with another action
 */
function encodeOptions(o: PlugOptions): Buffer[] {
  const action = o.action ?? (o.limit !== undefined ? 'limit' : undefined);
  if (action === undefined) return [];
  const code = ACTIONS[action];
  if (code === undefined) throw new UsageError(`plug: unknown action ${JSON.stringify(action)} (expected buffer, release_one, release_indefinite or limit)`);
  if (code !== TCQ_PLUG_LIMIT) {
    if (o.limit !== undefined) throw new UsageError(`plug: a limit goes with action "limit", not "${action}"`);
    return [encodePlugQopt(code, 0)];
  }
  if (o.limit === undefined) throw new UsageError('plug: action "limit" needs a limit in bytes');
  const limit = parseSize(o.limit, 'plug limit');
  if (limit === 0) throw new UsageError('plug: a limit of 0 bytes would drop every packet; give a positive limit (bytes)');
  return [encodePlugQopt(TCQ_PLUG_LIMIT, limit)];
}

/**
 * Decode `struct tc_plug_qopt` (found only in requests: the kernel never dumps plug options).
 * @returns `{ action: 'buffer' | 'release_one' | 'release_indefinite' | 'limit' | <number>, limit }`
 * @throws {NetlinkDecodeError} fewer than 8 bytes
 */
function decodeOptions(buf: Buffer, start: number, end: number, base: number): Record<string, unknown> {
  if (end - start < 8) throw new NetlinkDecodeError(`tc_plug_qopt needs 8 bytes, TCA_OPTIONS has ${end - start}`, base + start);
  const a = buf.readInt32LE(start);
  return { action: a >= 0 && a < NAMES.length ? NAMES[a] : a, limit: buf.readUInt32LE(start + 4) };
}

/** sch_plug. */
export const plug: QdiscKind<PlugOptions> = {
  kind: 'plug',
  module: PLUG_MODULE,
  optionTypes: { action: 'string', limit: 'number|string' },
  encodeOptions,
  decodeOptions,
  formatOptions: (o) => (o.action === undefined ? '' : o.action === 'limit' ? `limit ${o.limit}` : String(o.action)),
};

declare module '../types.js' {
  interface QdiscOptionsByKind {
    /** plug: {@link PlugOptions} */
    plug: PlugOptions;
  }
}
