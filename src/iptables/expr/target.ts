/**
 * The `target` expression (net/netfilter/nft_compat.c): an xtables target
 * (iptables' `-j NAME`) run inside nf_tables through nft_compat, as
 * iptables-nft emits it where nf_tables has no native equivalent or where
 * the kernel lacks the native one (the `queue` expression on this machine).
 *
 * ```c
 * // nf_tables_compat.h: enum nft_target_attributes
 * NFTA_TARGET_NAME   // NLA_NUL_STRING (at most NFT_COMPAT_NAME_MAX 32 with the NUL): "NFQUEUE"
 * NFTA_TARGET_REV    // NLA_U32 (big-endian): the target's revision
 * NFTA_TARGET_INFO   // NLA_BINARY: the target's own struct, host byte order, padded to 8 (XT_ALIGN)
 *
 * // linux/netfilter/xt_NFQUEUE.h: NFQUEUE's struct by revision
 * struct xt_NFQ_info    { __u16 queuenum; };                                 // rev 0
 * struct xt_NFQ_info_v1 { __u16 queuenum; __u16 queues_total; };             // rev 1
 * struct xt_NFQ_info_v2 { __u16 queuenum; __u16 queues_total; __u16 bypass; }; // rev 2
 * struct xt_NFQ_info_v3 { __u16 queuenum; __u16 queues_total; __u16 flags; };  // rev 3
 *                       // flags: NFQ_FLAG_BYPASS 0x01, NFQ_FLAG_CPU_FANOUT 0x02
 * ```
 *
 * nft 1.0.6 lists a target through libxtables' translation: NFQUEUE as
 * `queue num 8 bypass` (`queue num 8-9 bypass,fanout`, `queue num 0`), any
 * target it cannot translate as `xt target NAME`; `-j` always as
 * `{"xt": {"type": "target", "name": "NFQUEUE"}}`. We print NFQUEUE that
 * way, the other targets as ../xt.ts translates them, and a target it does not
 * translate raw (`xt target NAME` would lose its parameters).
 *
 * @module
 */
import { endianness } from 'node:os';
import { UsageError } from '../../netlink/errors.js';
import * as C from '../constants.js';
import { queueRangeText } from './queue.js';
import type { ExprCodec } from './registry.js';
import { decodeXt, EBT_WATCHERS, encodeXt, readU16, xtStatement } from '../xt.js';

/** `target`. */
export interface TargetExpr {
  name: 'target';
  /** NFTA_TARGET_NAME, e.g. `NFQUEUE` */
  target: string;
  /** NFTA_TARGET_REV */
  rev: number;
  /** NFTA_TARGET_INFO, lowercase hex (host byte order, as the kernel keeps it) */
  info: string;
  /** NFQUEUE's struct decoded (every revision), when the target is NFQUEUE and its info is long enough */
  nfqueue?: NfqueueTargetInfo;
}

/** NFQUEUE's xt_NFQ_info* fields, whatever the revision. */
export interface NfqueueTargetInfo {
  /** queuenum: the first queue */
  num: number;
  /** queues_total (rev 1+; 1 before) */
  total: number;
  /** rev 3 flags (NFQ_FLAG_BYPASS 1, NFQ_FLAG_CPU_FANOUT 2); rev 2's bypass as NFQ_FLAG_BYPASS; 0 before */
  flags: number;
}

/** XT_ALIGN: xt structs are padded to 8 bytes (linux/netfilter/x_tables.h). */
const xtAlign = (n: number): number => (n + 7) & ~7;
const LE = endianness() === 'LE';
const writeU16 = (b: Buffer, v: number, off: number): void => {
  if (LE) b.writeUInt16LE(v, off);
  else b.writeUInt16BE(v, off);
};

/** The bytes of NFQUEUE's struct each revision needs (its fields, before XT_ALIGN). */
const NFQ_INFO_SIZE = [2, 4, 6, 6];

/**
 * Decode NFQUEUE's info of revision `rev` (0-3).
 * @returns undefined when the info is shorter than the revision's struct, or the revision is unknown
 */
export function decodeNfqueueInfo(rev: number, info: Buffer): NfqueueTargetInfo | undefined {
  const size = NFQ_INFO_SIZE[rev];
  if (size === undefined || info.length < size) return undefined;
  const num = readU16(info, 0);
  const total = rev >= 1 ? readU16(info, 2) : 1;
  const third = rev >= 2 ? readU16(info, 4) : 0;
  const flags = rev === 2 ? (third ? C.NFQ_FLAG_BYPASS : 0) : third;
  return { num, total, flags };
}

/**
 * The `target` expression of iptables-nft's `-j NFQUEUE --queue-num N
 * [--queue-bypass]` (revision 3: `struct xt_NFQ_info_v3` in host order,
 * padded to 8 bytes).
 * @param num the queue (0-65535)
 * @param options `total` queues from `num` (default 1), `flags` NFQ_FLAG_* (default NFQ_FLAG_BYPASS)
 * @throws {UsageError} a number out of range
 */
export function nfqueueTarget(num: number, options: { total?: number; flags?: number } = {}): TargetExpr {
  const total = options.total ?? 1;
  const flags = options.flags ?? C.NFQ_FLAG_BYPASS;
  for (const [v, what] of [
    [num, 'queue number'],
    [total, 'queue total'],
    [flags, 'queue flags'],
  ] as const) {
    if (!Number.isInteger(v) || v < 0 || v > 0xffff) throw new UsageError(`NFQUEUE ${what}: ${v} is not a u16 (0-65535)`);
  }
  if (total < 1 || num + total - 1 > 0xffff) throw new UsageError(`NFQUEUE queues ${num}-${num + total - 1}: at least one, none past 65535`);
  const info = Buffer.alloc(xtAlign(NFQ_INFO_SIZE[3]));
  writeU16(info, num, 0);
  writeU16(info, total, 2);
  writeU16(info, flags, 4);
  return { name: 'target', target: 'NFQUEUE', rev: 3, info: info.toString('hex'), nfqueue: { num, total, flags } };
}

/** NFQUEUE's statement as libxtables translates it for nft: `queue num N[-M][ bypass][,fanout]`. */
function nfqueueText(q: NfqueueTargetInfo): string | undefined {
  if (q.flags & ~(C.NFQ_FLAG_BYPASS | C.NFQ_FLAG_CPU_FANOUT)) return undefined;
  const words = [q.flags & C.NFQ_FLAG_BYPASS ? 'bypass' : '', q.flags & C.NFQ_FLAG_CPU_FANOUT ? 'fanout' : ''].filter(Boolean);
  return `queue num ${queueRangeText(q.num, Math.max(q.total, 1))}${words.length ? ` ${words.join(',')}` : ''}`;
}

/** Codec of `target`. */
export const targetExpr: ExprCodec<TargetExpr> = {
  name: 'target',
  encode(e) {
    return encodeXt('target', { ext: e.target, rev: e.rev, info: e.info });
  },
  decode(l) {
    const { ext, rev, info } = decodeXt('target', l);
    const e: TargetExpr = { name: 'target', target: ext, rev, info };
    if (ext === 'NFQUEUE') {
      const q = decodeNfqueueInfo(rev, Buffer.from(info, 'hex'));
      if (q) e.nfqueue = q;
    }
    return e;
  },
  describe(e) {
    // libnftnl: `target name NFQUEUE rev 3`
    return `target name ${e.target} rev ${e.rev}`;
  },
  statement(e, ctx) {
    const type = ctx.family === 'bridge' && EBT_WATCHERS.has(e.target) ? 'watcher' : 'target';
    const json = { xt: { type, name: e.target } };
    const queued = e.nfqueue && nfqueueText(e.nfqueue);
    const stmt = e.nfqueue
      ? queued === undefined
        ? undefined
        : { text: queued, json }
      : xtStatement('target', { ext: e.target, rev: e.rev, info: e.info }, { family: ctx.family, l4: ctx.l4, l4Other: ctx.l4Other }, json);
    return stmt && { stmt };
  },
};
