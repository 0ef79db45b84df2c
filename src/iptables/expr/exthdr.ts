/**
 * The `exthdr` expression (net/netfilter/nft_exthdr.c): load a field of an
 * IPv6 extension header or of a TCP option into a register, or whether it
 * is there (NFT_EXTHDR_F_PRESENT): nft's `exthdr frag exists`,
 * `tcp option maxseg size 1400`, `tcp option sack-perm exists`.
 *
 * ```c
 * // nf_tables.h: enum nft_exthdr_attributes
 * NFTA_EXTHDR_DREG     // NLA_U32, destination register
 * NFTA_EXTHDR_TYPE     // NLA_U8, extension header type / TCP option kind
 * NFTA_EXTHDR_OFFSET   // NLA_U32, bytes into the header / option
 * NFTA_EXTHDR_LEN      // NLA_U32, bytes loaded
 * NFTA_EXTHDR_FLAGS    // NLA_U32, NFT_EXTHDR_F_PRESENT
 * NFTA_EXTHDR_OP       // NLA_U32, enum nft_exthdr_op: ipv6, tcpopt, ipv4, sctp
 * NFTA_EXTHDR_SREG     // NLA_U32, source register (writing a TCP option)
 * ```
 * Printed: the presence of an IPv6 extension header or a TCP option, and
 * the TCP option fields nft names (nftables src/tcpopt.c). Others print raw.
 *
 * @module
 */
import * as C from '../constants.js';
import type { ValueType } from '../print.js';
import { attrCodec } from './registry.js';

/** `exthdr`: NFTA_EXTHDR_* as numbers. */
export interface ExthdrExpr {
  name: 'exthdr';
  dreg?: number;
  type: number;
  offset?: number;
  len?: number;
  flags?: number;
  /** enum nft_exthdr_op; absent means NFT_EXTHDR_OP_IPV6 */
  op?: number;
  sreg?: number;
}

/** IPv6 extension headers nft names, by next-header number. */
const IPV6_EXTHDRS = new Map([
  [0, 'hbh'],
  [43, 'rt'],
  [44, 'frag'],
  [60, 'dst'],
  [135, 'mh'],
]);
/** TCP options nft names, by kind, with their fields (`offset/len` bytes into the option). */
const TCP_OPTIONS = new Map<number, { name: string; fields: Record<string, [string, ValueType]> }>([
  [2, { name: 'maxseg', fields: { '2/2': ['size', 'uint_be'] } }],
  [3, { name: 'window', fields: { '2/1': ['count', 'uint_be'] } }],
  [4, { name: 'sack-perm', fields: {} }],
  [5, { name: 'sack', fields: { '2/4': ['left', 'uint_be'], '6/4': ['right', 'uint_be'] } }],
  [8, { name: 'timestamp', fields: { '2/4': ['tsval', 'uint_be'], '6/4': ['tsecr', 'uint_be'] } }],
]);
const COMMON_FIELDS: Record<string, [string, ValueType]> = { '0/1': ['kind', 'uint_be'], '1/1': ['length', 'uint_be'] };

/** Codec of `exthdr`. */
export const exthdrExpr = attrCodec<ExthdrExpr>(
  'exthdr',
  {
    dreg: [C.NFTA_EXTHDR_DREG, 'u32'],
    type: [C.NFTA_EXTHDR_TYPE, 'u8', true],
    offset: [C.NFTA_EXTHDR_OFFSET, 'u32'],
    len: [C.NFTA_EXTHDR_LEN, 'u32'],
    flags: [C.NFTA_EXTHDR_FLAGS, 'u32'],
    op: [C.NFTA_EXTHDR_OP, 'u32'],
    sreg: [C.NFTA_EXTHDR_SREG, 'u32'],
  },
  {
    describe: (e) =>
      e.dreg !== undefined
        ? `exthdr load ${e.op === C.NFT_EXTHDR_OP_TCPOPT ? 'tcpopt' : e.op === C.NFT_EXTHDR_OP_IPV4 ? 'ipv4' : 'ipv6'} ${e.len ?? 0}b @ ${e.type} + ${e.offset ?? 0}${e.flags ? ` flags ${e.flags}` : ''} => reg ${e.dreg}`
        : `exthdr write tcpopt reg ${e.sreg} => ${e.len ?? 0}b @ ${e.type} + ${e.offset ?? 0}`,
    field(e) {
      if (e.dreg === undefined) return undefined;
      const op = e.op ?? C.NFT_EXTHDR_OP_IPV6;
      const present = e.flags === C.NFT_EXTHDR_F_PRESENT;
      if (e.flags !== undefined && e.flags !== 0 && !present) return undefined;
      if (op === C.NFT_EXTHDR_OP_IPV6) {
        const name = IPV6_EXTHDRS.get(e.type);
        if (!name || !present) return undefined;
        return { dreg: e.dreg, field: { text: `exthdr ${name}`, json: { exthdr: { name } }, type: 'boolean', l3: 'ip6' } };
      }
      if (op !== C.NFT_EXTHDR_OP_TCPOPT) return undefined;
      const opt = TCP_OPTIONS.get(e.type);
      if (!opt) return undefined;
      if (present) return { dreg: e.dreg, field: { text: `tcp option ${opt.name}`, json: { 'tcp option': { name: opt.name } }, type: 'boolean', l4: 'tcp' } };
      const f = { ...COMMON_FIELDS, ...opt.fields }[`${e.offset ?? 0}/${e.len ?? 0}`];
      if (!f) return undefined;
      return {
        dreg: e.dreg,
        field: { text: `tcp option ${opt.name} ${f[0]}`, json: { 'tcp option': { name: opt.name, field: f[0] } }, type: f[1], l4: 'tcp' },
      };
    },
    writes: (e) => (e.dreg !== undefined ? [e.dreg] : []),
  },
);
