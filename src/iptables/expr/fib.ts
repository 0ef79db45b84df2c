/**
 * The `fib` expression (net/netfilter/nft_fib*.c): a route lookup on the
 * packet's addresses, its result loaded into a register. nft's
 * `fib daddr type local`, `fib saddr . iif oif 0`, `fib daddr . mark type unicast`,
 * `fib saddr oifname "lo"`.
 *
 * ```c
 * // nf_tables.h: enum nft_fib_attributes
 * NFTA_FIB_DREG     // NLA_U32 (big-endian): destination register
 * NFTA_FIB_RESULT   // NLA_U32: enum nft_fib_result (OIF, OIFNAME, ADDRTYPE)
 * NFTA_FIB_FLAGS    // NLA_U32: enum nft_fib_flags (NFTA_FIB_F_SADDR, _DADDR, _MARK, _IIF, _OIF, _PRESENT)
 * ```
 * The result is an ifindex (u32, host order), a device name (IFNAMSIZ bytes)
 * or a route type (u32, RTN_*). With NFTA_FIB_F_PRESENT (nft's `fib saddr . iif
 * oif missing` / `exists`) the kernel stores only whether there is a result,
 * 0 or 1, compared as nft's boolean: the field prints without `present`
 * (`fib saddr . iif oif`, JSON `{ fib: { result: 'oif', flags: ['saddr', 'iif'] } }`)
 * and the value as `missing` / `exists` (JSON false / true).
 *
 * @module
 */
import * as C from '../constants.js';
import { be32, checkU32, needU32 } from '../data.js';
import type { Field, ValueType } from '../print.js';
import { UsageError } from '../../netlink/errors.js';
import type { ExprCodec } from './registry.js';

/** `fib`. */
export interface FibExpr {
  name: 'fib';
  /** NFTA_FIB_DREG */
  dreg: number;
  /** NFTA_FIB_RESULT: `oif`, `oifname`, `type` (`result(<n>)` when unknown) */
  result: string;
  /** NFTA_FIB_FLAGS (NFTA_FIB_F_*) */
  flags: number;
}

const RESULTS: Record<number, [string, ValueType]> = {
  [C.NFT_FIB_RESULT_OIF]: ['oif', 'ifindex'],
  [C.NFT_FIB_RESULT_OIFNAME]: ['oifname', 'ifname'],
  [C.NFT_FIB_RESULT_ADDRTYPE]: ['type', 'addrtype'],
};
/** Flag names in nft's order (`saddr . iif`). */
const FLAG_NAMES: Array<[number, string]> = [
  [C.NFTA_FIB_F_SADDR, 'saddr'],
  [C.NFTA_FIB_F_DADDR, 'daddr'],
  [C.NFTA_FIB_F_MARK, 'mark'],
  [C.NFTA_FIB_F_IIF, 'iif'],
  [C.NFTA_FIB_F_OIF, 'oif'],
];

function resultNumber(r: string): number {
  for (const [k, [name]] of Object.entries(RESULTS)) if (name === r) return Number(k);
  const m = /^result\((\d+)\)$/.exec(r);
  if (m) return Number(m[1]);
  throw new UsageError(`fib result '${r}': use oif, oifname or type`);
}

/** Codec of `fib`. */
export const fibExpr: ExprCodec<FibExpr> = {
  name: 'fib',
  encode(e) {
    return [
      be32(C.NFTA_FIB_DREG, checkU32(e.dreg, 'fib dreg')),
      be32(C.NFTA_FIB_RESULT, resultNumber(e.result)),
      be32(C.NFTA_FIB_FLAGS, checkU32(e.flags, 'fib flags')),
    ];
  },
  decode(l) {
    const r = needU32(l, C.NFTA_FIB_RESULT, 'NFTA_FIB_RESULT');
    return {
      name: 'fib',
      dreg: needU32(l, C.NFTA_FIB_DREG, 'NFTA_FIB_DREG'),
      result: RESULTS[r]?.[0] ?? `result(${r})`,
      flags: needU32(l, C.NFTA_FIB_FLAGS, 'NFTA_FIB_FLAGS'),
    };
  },
  describe(e) {
    const f = FLAG_NAMES.filter(([b]) => e.flags & b)
      .map(([, n]) => n)
      .join(' . ');
    return `fib ${f} ${e.result}${e.flags & C.NFTA_FIB_F_PRESENT ? ' present' : ''} => reg ${e.dreg}`;
  },
  field(e) {
    const r = Object.values(RESULTS).find(([name]) => name === e.result);
    const present = (e.flags & C.NFTA_FIB_F_PRESENT) !== 0;
    let known = 0;
    for (const [b] of FLAG_NAMES) known |= b;
    // `exists` / `missing` is nft's for an oif or oifname lookup only
    if (present) known |= C.NFTA_FIB_F_PRESENT;
    if (!r || e.flags & ~known || (present && r[0] === 'type')) return undefined;
    const names = FLAG_NAMES.filter(([b]) => e.flags & b).map(([, n]) => n);
    if (!names.length) return undefined;
    const field: Field = { text: `fib ${names.join(' . ')} ${r[0]}`, json: { fib: { result: r[0], flags: names } }, type: present ? 'boolean' : r[1] };
    return { dreg: e.dreg, field };
  },
  writes(e) {
    return [e.dreg];
  },
};
