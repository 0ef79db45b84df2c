/**
 * The `rt` expression (net/netfilter/nft_rt.c): a property of the packet's
 * route, loaded into a register: nft's `rt classid "cosmos"`, `rt ip nexthop
 * 127.0.0.1`, `rt ip6 nexthop fd00::1`, `rt mtu 1400`, `rt ipsec exists`.
 *
 * ```c
 * // nf_tables.h: enum nft_rt_attributes
 * NFTA_RT_DREG   // NLA_U32, destination register
 * NFTA_RT_KEY    // NLA_U32, enum nft_rt_keys: classid, nexthop4, nexthop6, tcpmss, xfrm
 * ```
 *
 * @module
 */
import * as C from '../constants.js';
import type { Field } from '../print.js';
import { attrCodec } from './registry.js';

/** `rt`: NFTA_RT_* as numbers. */
export interface RtExpr {
  name: 'rt';
  key: number;
  dreg: number;
}

/** NFT_RT_* keys, index = key, as nft 1.0.6 prints them (src/rt.c), with the bytes they load. */
const KEYS: ReadonlyArray<{ field: Omit<Field, 'json'> & { family?: string; key: string }; len: number }> = [
  { field: { text: 'rt classid', key: 'classid', type: 'realm' }, len: 4 },
  { field: { text: 'rt ip nexthop', key: 'nexthop', family: 'ip', type: 'ipv4', l3: 'ip' }, len: 4 },
  { field: { text: 'rt ip6 nexthop', key: 'nexthop', family: 'ip6', type: 'ipv6', l3: 'ip6' }, len: 16 },
  { field: { text: 'rt mtu', key: 'mtu', type: 'uint_he' }, len: 2 },
  { field: { text: 'rt ipsec', key: 'ipsec', type: 'boolean' }, len: 1 },
];

/** libnftnl's names of the keys, for raw markers. */
const WIRE_NAMES = ['classid', 'nexthop4', 'nexthop6', 'tcpmss', 'ipsec'];

/** Codec of `rt`. */
export const rtExpr = attrCodec<RtExpr>(
  'rt',
  { dreg: [C.NFTA_RT_DREG, 'u32', true], key: [C.NFTA_RT_KEY, 'u32', true] },
  {
    describe: (e) => `rt load ${WIRE_NAMES[e.key] ?? `key ${e.key}`} => reg ${e.dreg}`,
    field(e) {
      const k = KEYS[e.key];
      if (!k) return undefined;
      const { key, family, ...f } = k.field;
      return { dreg: e.dreg, field: { ...f, json: { rt: { key, ...(family && { family }) } } }, len: k.len };
    },
    writes: (e) => [e.dreg],
  },
);
