/**
 * The packet header fields nft names, as one table: for each protocol nft
 * knows (`ether`, `vlan`, `ip`, `ip6`, `arp`, `tcp`, `udp`, `icmp`...), the
 * payload base its header sits on and its fields by byte offset and length
 * (a field narrower than its bytes also has the mask nft loads it with and
 * the shift of its value), with how their values print. format.ts reads a
 * `payload load` through it: which protocol is meant follows from the
 * rule's family and the protocol matches before the load.
 *
 * Offsets are those of nftables' src/proto.c (nft 1.0.6), in bytes, and
 * each protocol's fields are in the order of its template there (a `typeof`
 * set names a field by its place in it).
 *
 * @module
 */
import type { ValueType } from './print.js';

/** One header field: where nft loads it from and how its values print. */
export interface HeaderField {
  /** nft's name: `saddr`, `dport`, `frag-off`, `id` */
  name: string;
  /** offset in the header, bytes */
  offset: number;
  /** bytes loaded */
  len: number;
  type: ValueType;
  /** a bit field: the mask of the loaded bytes (hex, as the bitwise carries it) */
  mask?: string;
  /** a bit field: how far its value is shifted in the loaded bytes */
  shift?: number;
  /**
   * the icmp/icmpv6 type this field belongs to (nft's icmp dependency): it
   * names the bytes after a match of that type (`icmp mtu` where `icmp
   * sequence` has the same bytes), and nft leaves that type match out
   */
  dep?: number;
}

/** A protocol header nft names. */
export interface Header {
  base: 'link' | 'network' | 'transport';
  /** the header starts this far into its base (vlan: after the Ethernet header) */
  at?: number;
  /** the network protocol this transport header belongs to (icmp: ip, icmpv6: ip6); nft leaves out a match of it */
  l3?: string;
  fields: HeaderField[];
}

const f = (name: string, offset: number, len: number, type: ValueType, mask?: string, shift?: number): HeaderField => ({
  name,
  offset,
  len,
  type,
  ...(mask !== undefined && { mask, shift: shift ?? 0 }),
});
/** A field of one icmp/icmpv6 type (`dep`). */
const typed = (dep: number, name: string, offset: number, len: number): HeaderField => ({ ...f(name, offset, len, 'uint_be'), dep });
const PORTS = [f('sport', 0, 2, 'port'), f('dport', 2, 2, 'port')];

/** nft's headers by protocol name. */
export const HEADERS: Readonly<Record<string, Header>> = {
  ether: { base: 'link', fields: [f('daddr', 0, 6, 'ether'), f('saddr', 6, 6, 'ether'), f('type', 12, 2, 'ethertype')] },
  vlan: {
    base: 'link',
    at: 14,
    // nft 1.0.6's template order (a typeof names a field by its place): `cfi` is the old name of `dei`
    fields: [
      f('pcp', 0, 1, 'uint_be', 'e0', 5),
      ...['dei', 'cfi'].map((n) => f(n, 0, 1, 'uint_be', '10', 4)),
      f('id', 0, 2, 'uint_be', '0fff'),
      f('type', 2, 2, 'ethertype'),
    ],
  },
  ip: {
    base: 'network',
    fields: [
      f('version', 0, 1, 'uint_be', 'f0', 4),
      f('hdrlength', 0, 1, 'uint_be', '0f'),
      f('dscp', 1, 1, 'dscp', 'fc', 2),
      f('ecn', 1, 1, 'ecn', '03'),
      f('length', 2, 2, 'uint_be'),
      f('id', 4, 2, 'uint_be'),
      f('frag-off', 6, 2, 'uint_be'),
      f('ttl', 8, 1, 'uint_be'),
      f('protocol', 9, 1, 'l4proto'),
      f('checksum', 10, 2, 'uint_be'),
      f('saddr', 12, 4, 'ipv4'),
      f('daddr', 16, 4, 'ipv4'),
    ],
  },
  ip6: {
    base: 'network',
    fields: [
      f('version', 0, 1, 'uint_be', 'f0', 4),
      f('dscp', 0, 2, 'dscp', '0fc0', 6),
      f('ecn', 1, 1, 'ecn', '30', 4),
      f('flowlabel', 1, 3, 'uint_be', '0fffff'),
      f('length', 4, 2, 'uint_be'),
      f('nexthdr', 6, 1, 'l4proto'),
      f('hoplimit', 7, 1, 'uint_be'),
      f('saddr', 8, 16, 'ipv6'),
      f('daddr', 24, 16, 'ipv6'),
    ],
  },
  arp: {
    base: 'network',
    fields: [
      f('htype', 0, 2, 'uint_be'),
      f('ptype', 2, 2, 'ethertype'),
      f('hlen', 4, 1, 'uint_be'),
      f('plen', 5, 1, 'uint_be'),
      f('operation', 6, 2, 'arp_op'),
      f('saddr ether', 8, 6, 'ether'),
      f('saddr ip', 14, 4, 'ipv4'),
      f('daddr ether', 18, 6, 'ether'),
      f('daddr ip', 24, 4, 'ipv4'),
    ],
  },
  tcp: {
    base: 'transport',
    fields: [
      ...PORTS,
      f('sequence', 4, 4, 'uint_be'),
      f('ackseq', 8, 4, 'uint_be'),
      f('doff', 12, 1, 'uint_be', 'f0', 4),
      f('reserved', 12, 1, 'uint_be', '0f'),
      f('flags', 13, 1, 'tcpflags'),
      f('window', 14, 2, 'uint_be'),
      f('checksum', 16, 2, 'uint_be'),
      f('urgptr', 18, 2, 'uint_be'),
    ],
  },
  udp: { base: 'transport', fields: [...PORTS, f('length', 4, 2, 'uint_be'), f('checksum', 6, 2, 'uint_be')] },
  udplite: { base: 'transport', fields: [...PORTS, f('checksum', 6, 2, 'uint_be')] },
  sctp: { base: 'transport', fields: [...PORTS, f('vtag', 4, 4, 'uint_be'), f('checksum', 8, 4, 'uint_be')] },
  // nft 1.0.6: HDR_BITFIELD("type", &dccp_pkttype_type, (8 * BITS_PER_BYTE) + 3, 4)
  dccp: { base: 'transport', fields: [...PORTS, f('type', 8, 1, 'dccp_pkttype', '1e', 1)] },
  esp: { base: 'transport', fields: [f('spi', 0, 4, 'uint_be'), f('sequence', 4, 4, 'uint_be')] },
  ah: {
    base: 'transport',
    fields: [
      f('nexthdr', 0, 1, 'l4proto'),
      f('hdrlength', 1, 1, 'uint_be'),
      f('reserved', 2, 2, 'uint_be'),
      f('spi', 4, 4, 'uint_be'),
      f('sequence', 8, 4, 'uint_be'),
    ],
  },
  // nft 1.0.6 proto_comp: struct ip_comp_hdr { uint8_t nexthdr; uint8_t flags; uint16_t cpi; }
  // (its flags a bitmask: `comp flags 0x1`, JSON 1)
  comp: { base: 'transport', fields: [f('nexthdr', 0, 1, 'l4proto'), f('flags', 1, 1, 'rawint'), f('cpi', 2, 2, 'uint_be')] },
  icmp: {
    base: 'transport',
    l3: 'ip',
    fields: [
      f('type', 0, 1, 'icmp_type'),
      f('code', 1, 1, 'icmp_code'),
      f('checksum', 2, 2, 'uint_be'),
      f('id', 4, 2, 'uint_be'),
      f('sequence', 6, 2, 'uint_be'),
      // ICMP_REDIRECT, ICMP_DEST_UNREACH
      typed(5, 'gateway', 4, 4),
      typed(3, 'mtu', 6, 2),
    ],
  },
  icmpv6: {
    base: 'transport',
    l3: 'ip6',
    fields: [
      f('type', 0, 1, 'icmpv6_type'),
      f('code', 1, 1, 'icmpv6_code'),
      f('checksum', 2, 2, 'uint_be'),
      // ICMPV6_PKT_TOOBIG, ICMPV6_MGM_QUERY
      typed(2, 'mtu', 4, 4),
      f('id', 4, 2, 'uint_be'),
      f('sequence', 6, 2, 'uint_be'),
      typed(130, 'max-delay', 4, 2),
    ],
  },
  // nft 1.0.6 keeps the ip match before igmp (`meta nfproto ipv4 igmp type ...` in inet), and its group is a number
  igmp: {
    base: 'transport',
    fields: [f('type', 0, 1, 'igmp_type'), f('mrt', 1, 1, 'uint_be'), f('checksum', 2, 2, 'uint_be'), f('group', 4, 4, 'uint_be')],
  },
  /** a transport header nft does not know the protocol of: only the ports */
  th: { base: 'transport', fields: [...PORTS] },
};

/** The transport header nft names for an IP protocol number (`tcp` for 6, `icmpv6` for 58). */
export const L4_HEADERS: ReadonlyMap<number, string> = new Map([
  [1, 'icmp'],
  [2, 'igmp'],
  [6, 'tcp'],
  [17, 'udp'],
  [33, 'dccp'],
  [50, 'esp'],
  [51, 'ah'],
  [58, 'icmpv6'],
  [108, 'comp'],
  [132, 'sctp'],
  [136, 'udplite'],
]);

/**
 * The field of header `proto` loaded at `offset`/`len` bytes of its base,
 * whole (`mask` undefined) or as a bit field with that mask; `start`: where
 * the header starts in its base, bytes (a vlan header after another: 18).
 */
export function headerField(proto: string, offset: number, len: number, mask?: string, icmpType?: number, start?: number): HeaderField | undefined {
  const h = HEADERS[proto];
  if (!h) return undefined;
  const at = offset - (start ?? h.at ?? 0);
  const all = h.fields.filter((x) => x.offset === at && x.len === len && x.mask === mask);
  // after a match of an icmp type, the field of that type (nft's icmp dependency); a field of another
  // type, or of a type no match established, is not what nft names there (`icmp id 5 icmp sequence 1`
  // after `icmp type echo-request` is one 4-byte load, not `icmp gateway`)
  return all.find((x) => x.dep !== undefined && x.dep === icmpType) ?? all.find((x) => x.dep === undefined);
}
