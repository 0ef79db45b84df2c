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
 * NFTA_EXTHDR_OP       // NLA_U32, enum nft_exthdr_op: ipv6, tcpopt, ipv4, sctp (`sctp chunk init num-inbound-streams 5`)
 * NFTA_EXTHDR_SREG     // NLA_U32, source register (writing a TCP option)
 * ```
 * Printed: the presence of an IPv6 extension header, IPv4 or TCP option, the
 * fields nft names (nftables src/exthdr.c, src/ipopt.c, src/tcpopt.c), bit
 * fields among them when matched whole, and a TCP option field written
 * (`tcp option maxseg size set 1360`). Others print raw.
 *
 * @module
 */
import * as C from '../constants.js';
import { type Field, type ValueType, valueText } from '../print.js';
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

/**
 * Fields of a header or option nft names, by `offset/len` bytes into it: name, how values print;
 * a bit field of those bytes with the mask of its bits and their shift.
 */
type Fields = Readonly<Record<string, [name: string, type: ValueType, mask?: string, shift?: number]>>;
const NEXTHDR: Fields = { '0/1': ['nexthdr', 'l4proto'], '1/1': ['hdrlength', 'uint_be'] };
const KIND_LENGTH: Fields = { '0/1': ['kind', 'uint_be'], '1/1': ['length', 'uint_be'] };
/** The fields every SCTP chunk has (nftables src/sctp_chunk.c), then those of each chunk type. */
const CHUNK: Fields = { '0/1': ['type', 'uint_be'], '1/1': ['flags', 'uint_be'], '2/2': ['length', 'uint_be'] };
const CHUNK_INIT: Fields = {
  ...CHUNK,
  '4/4': ['init-tag', 'uint_be'],
  '8/4': ['a-rwnd', 'uint_be'],
  '12/2': ['num-outbound-streams', 'uint_be'],
  '14/2': ['num-inbound-streams', 'uint_be'],
  '16/4': ['initial-tsn', 'uint_be'],
};
const chunk = (field: string): Fields => ({ ...CHUNK, '4/4': [field, 'uint_be'] });
const ROUTE_OPTION: Fields = { '0/1': ['type', 'uint_be'], '1/1': ['length', 'uint_be'], '2/1': ['ptr', 'uint_be'], '3/4': ['addr', 'uint_be'] };

/**
 * What nft names, by NFTA_EXTHDR_OP: the headers or options by type (nftables
 * src/exthdr.c, src/ipopt.c, src/tcpopt.c, first match wins: a routing header
 * load is `rt`'s field, else `srh`'s where rt0 and rt2 have none of that size),
 * how a field and a presence print, and the protocol they imply.
 */
const OPS: Readonly<
  Record<
    number,
    { kinds: Array<[type: number, name: string, fields: Fields]>; text: string; key: string; dep: { l3: string } | { l4: string } | Record<string, never> }
  >
> = {
  [C.NFT_EXTHDR_OP_IPV6]: {
    kinds: [
      [0, 'hbh', NEXTHDR],
      [43, 'rt', { ...NEXTHDR, '2/1': ['type', 'uint_be'], '3/1': ['seg-left', 'uint_be'] }],
      [43, 'srh', { '4/1': ['last-entry', 'uint_be'], '5/1': ['flags', 'uint_be'], '6/2': ['tag', 'uint_be'] }],
      [
        44,
        'frag',
        {
          '0/1': ['nexthdr', 'l4proto'],
          '1/1': ['reserved', 'uint_be'],
          '2/2': ['frag-off', 'uint_be', 'fff8', 3],
          '3/1': ['more-fragments', 'uint_be', '01', 0],
          '4/4': ['id', 'uint_be'],
        },
      ],
      [60, 'dst', NEXTHDR],
      [135, 'mh', { ...NEXTHDR, '2/1': ['type', 'mh_type'], '3/1': ['reserved', 'uint_be'], '4/2': ['checksum', 'uint_be'] }],
    ],
    text: 'exthdr',
    key: 'exthdr',
    dep: { l3: 'ip6' },
  },
  [C.NFT_EXTHDR_OP_IPV4]: {
    kinds: [
      [131, 'lsrr', ROUTE_OPTION],
      [7, 'rr', ROUTE_OPTION],
      [137, 'ssrr', ROUTE_OPTION],
      [148, 'ra', { '0/1': ['type', 'uint_be'], '1/1': ['length', 'uint_be'], '2/2': ['value', 'uint_be'] }],
    ],
    text: 'ip option',
    key: 'ip option',
    dep: { l3: 'ip' },
  },
  [C.NFT_EXTHDR_OP_TCPOPT]: {
    kinds: [
      [0, 'eol', {}],
      [1, 'nop', {}],
      [2, 'maxseg', { ...KIND_LENGTH, '2/2': ['size', 'uint_be'] }],
      [3, 'window', { ...KIND_LENGTH, '2/1': ['count', 'uint_be'] }],
      [4, 'sack-perm', KIND_LENGTH],
      [5, 'sack', { ...KIND_LENGTH, '2/4': ['left', 'uint_be'], '6/4': ['right', 'uint_be'] }],
      [8, 'timestamp', { ...KIND_LENGTH, '2/4': ['tsval', 'uint_be'], '6/4': ['tsecr', 'uint_be'] }],
      [19, 'md5sig', KIND_LENGTH],
      [30, 'mptcp', { ...KIND_LENGTH, '2/1': ['subtype', 'uint_be', 'f0', 4] }],
      [34, 'fastopen', KIND_LENGTH],
    ],
    text: 'tcp option',
    key: 'tcp option',
    dep: { l4: 'tcp' },
  },
  // nft 1.0.6 adds no `meta l4proto sctp` before a chunk (and removes none)
  [C.NFT_EXTHDR_OP_SCTP]: {
    kinds: [
      [0, 'data', { ...CHUNK, '4/4': ['tsn', 'uint_be'], '8/2': ['stream', 'uint_be'], '10/2': ['ssn', 'uint_be'], '12/4': ['ppid', 'uint_be'] }],
      [1, 'init', CHUNK_INIT],
      [2, 'init-ack', CHUNK_INIT],
      [
        3,
        'sack',
        {
          ...CHUNK,
          '4/4': ['cum-tsn-ack', 'uint_be'],
          '8/4': ['a-rwnd', 'uint_be'],
          '12/2': ['num-gap-ack-blocks', 'uint_be'],
          '14/2': ['num-dup-tsns', 'uint_be'],
        },
      ],
      [4, 'heartbeat', CHUNK],
      [5, 'heartbeat-ack', CHUNK],
      [6, 'abort', CHUNK],
      [7, 'shutdown', chunk('cum-tsn-ack')],
      [8, 'shutdown-ack', CHUNK],
      [9, 'error', CHUNK],
      [10, 'cookie-echo', CHUNK],
      [11, 'cookie-ack', CHUNK],
      [12, 'ecne', chunk('lowest-tsn')],
      [13, 'cwr', chunk('lowest-tsn')],
      [14, 'shutdown-complete', CHUNK],
      [128, 'asconf-ack', chunk('seqno')],
      [192, 'forward-tsn', chunk('new-cum-tsn')],
      [193, 'asconf', chunk('seqno')],
    ],
    text: 'sctp chunk',
    key: 'sctp chunk',
    dep: {},
  },
};

/** The field an exthdr load or write names: `frag id`, `ip option rr ptr`, `tcp option maxseg size`, a presence (`exthdr frag`). */
function exthdrField(e: ExthdrExpr): Field | undefined {
  const o = OPS[e.op ?? C.NFT_EXTHDR_OP_IPV6];
  if (!o) return undefined;
  const present = e.flags === C.NFT_EXTHDR_F_PRESENT;
  if (e.flags !== undefined && e.flags !== 0 && !present) return undefined;
  const kinds = o.kinds.filter(([t]) => t === e.type);
  if (present) {
    const name = kinds[0]?.[1];
    // nft: a TCP option it does not name by its kind (`tcp option 254 exists`), its JSON as a raw option load
    if (name === undefined && e.op === C.NFT_EXTHDR_OP_TCPOPT && !e.offset)
      return { text: `tcp option ${e.type}`, json: { 'tcp option': { base: e.type, offset: 0, len: (e.len ?? 0) * 8 } }, type: 'boolean', ...o.dep };
    return name === undefined ? undefined : { text: `${o.text} ${name}`, json: { [o.key]: { name } }, type: 'boolean', ...o.dep };
  }
  for (const [, name, fields] of kinds) {
    const f = fields[`${e.offset ?? 0}/${e.len ?? 0}`];
    if (!f) continue;
    // nft names an IPv6 extension header's field without `exthdr` (`frag id`)
    const field: Field = {
      text: `${e.op === C.NFT_EXTHDR_OP_IPV6 || e.op === undefined ? '' : `${o.text} `}${name} ${f[0]}`,
      json: { [o.key]: { name, field: f[0] } },
      type: f[1],
      ...o.dep,
    };
    return f[2] === undefined ? field : { ...field, type: 'hex', bits: [{ mask: f[2], shift: f[3] ?? 0, field }] };
  }
  return undefined;
}

/** libnftnl's names of NFTA_EXTHDR_OP, for raw markers. */
const OP_NAMES = ['ipv6', 'tcpopt', 'ipv4', 'sctp'];

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
        ? `exthdr load ${OP_NAMES[e.op ?? 0] ?? `op ${e.op}`} ${e.len ?? 0}b @ ${e.type} + ${e.offset ?? 0}${e.flags ? ` flags ${e.flags}` : ''} => reg ${e.dreg}`
        : `exthdr write tcpopt reg ${e.sreg} => ${e.len ?? 0}b @ ${e.type} + ${e.offset ?? 0}`,
    field(e) {
      const field = e.dreg === undefined ? undefined : exthdrField(e);
      return field && { dreg: e.dreg!, field };
    },
    // a write of a TCP option field: `tcp option maxseg size set 1360`
    statement(e, ctx) {
      // nft writes TCP options only
      const field = e.sreg === undefined || e.op !== C.NFT_EXTHDR_OP_TCPOPT ? undefined : exthdrField(e);
      const r = field && ctx.reg(e.sreg!);
      const v = r?.k === 'imm' ? valueText(r.data, field!.type) : r?.k === 'field' ? r.field : undefined;
      if (!field || !v) return undefined;
      return { stmt: { text: `${field.text} set ${v.text}`, json: { mangle: { key: field.json, value: v.json } } }, consumes: [e.sreg!], needsL4: field.l4 };
    },
    writes: (e) => (e.dreg !== undefined ? [e.dreg] : []),
  },
);
