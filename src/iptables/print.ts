/**
 * What printing an nft statement needs, shared by format.ts and the
 * expression modules (`expr/*.ts`): the {@link Statement} shape (nft text +
 * `nft -j` JSON), the {@link Field} a register was loaded from, value types
 * and {@link valueText} (a value's bytes as nft prints them), and the
 * {@link PrintContext} an expression reads registers through.
 *
 * @module
 */
import { cString } from '../netlink/attributes.js';
import { addressText } from './validate.js';
import * as C from './constants.js';

/** One nft statement: its text and its `nft -j` JSON. */
export interface Statement {
  /** e.g. `ip saddr 169.254.255.254` */
  text: string;
  /**
   * e.g. `{ match: { op: '==', left: { payload: { protocol: 'ip', field: 'saddr' } }, right: '169.254.255.254' } }`;
   * the text itself where nft 1.0.6 has no JSON form of the statement (`update @m { ip saddr : 0x00000005 }`)
   */
  json: Record<string, unknown> | string;
  /**
   * Printed as nft 1.0.6 lists it, but `nft -f` cannot read that text back
   * as this statement (a log prefix holding `"`): why, for the listing's
   * problems (the listing then never exits 0).
   */
  problem?: string;
}

/** The marker of what is not understood: `[ raw: <libnftnl-style description> ]`. */
export const RAW_MARKER = 'raw:';

/**
 * A statement printed raw (`[ raw: match name time rev 0 ]`), with why when
 * nft's words for it exist but would mean another rule (` (why)` after it).
 */
export function rawStatement(description: string, json: Record<string, unknown>, why?: string): Statement {
  return { text: `[ ${RAW_MARKER} ${description}${why ? ` (${why})` : ''} ]`, json: { raw: json } };
}

/**
 * How a value's bytes print. Host-order types (`mark`, `uint_he`, `ifindex`,
 * `ct_state`...) read the machine's byte order, as the kernel stores them.
 */
export type ValueType =
  | 'ipv4'
  | 'ipv6'
  | 'port'
  | 'tcpflags'
  | 'l4proto'
  | 'nfproto'
  | 'mark'
  | 'mark_be'
  | 'ether'
  | 'uint_be'
  | 'uint_he'
  | 'string'
  | 'hex'
  /** a device name (IFNAMSIZ bytes, NUL-padded; shorter without a NUL: a wildcard, printed `eth*`) */
  | 'ifname'
  /** a device index (u32), printed as its name when known, else as the number */
  | 'ifindex'
  /** conntrack state bits (u32): invalid, established, related, new, untracked */
  | 'ct_state'
  /** conntrack status bits (u32, enum ip_conntrack_status) */
  | 'ct_status'
  /** conntrack direction (u8, enum ip_conntrack_dir): original, reply */
  | 'ct_dir'
  /** milliseconds (u32), printed as nft's duration (`1h30m`); JSON in seconds */
  | 'time_ms'
  /** milliseconds turned big-endian by a byteorder (`ct expiration < 1m`) */
  | 'time_ms_be'
  /** route type (u32, RTN_*): unicast, local... (`fib ... type`) */
  | 'addrtype'
  /** an Ethernet type (u16, big-endian): ip, ip6, arp, vlan... (`ether type ip`) */
  | 'ethertype'
  /** a device type (u16, host order, ARPHRD_*): ether, loopback... (`meta iiftype ether`) */
  | 'iftype'
  /** a tc handle (u32, host order): `1:2` (hex major:minor), `root`, `none` (`meta priority`) */
  | 'tchandle'
  /** a tc handle turned big-endian by a byteorder (a range of `meta priority`) */
  | 'tchandle_be'
  /** a packet type (u8, PACKET_*): host, broadcast, multicast, other (`meta pkttype`) */
  | 'pkttype'
  /** nft's boolean (1..4 bytes, host order, 0 or 1): text `missing` / `exists`, JSON false / true (`fib daddr oif exists`) */
  | 'boolean'
  /** a DSCP value (6 bits, the field already shifted): nft's names (`cs1`, `af41`, `ef`), else `0x05`; JSON the name or the number */
  | 'dscp'
  /** an ECN value (2 bits, shifted): `not-ect`, `ect1`, `ect0`, `ce` */
  | 'ecn'
  /** the bits of a raw payload load (`@nh,8,8`), 1 to 4 bytes, big-endian: hex without leading zeros (`0x3`), JSON the number */
  | 'rawint'
  /** enumerations nft names (`nft describe icmp type`...), big-endian; a value without a name prints as its number */
  | 'icmp_type'
  | 'icmp_code'
  | 'icmpv6_type'
  | 'icmpv6_code'
  | 'arp_op'
  | 'igmp_type'
  | 'icmpx_code'
  | 'mh_type'
  | 'dccp_pkttype'
  /** conntrack event bits (u32, host order, enum ip_conntrack_events): new, related, destroy... (`ct event set new,related`) */
  | 'ct_event'
  /** names nft reads from /etc/iproute2 (`rt_realms`, `group`) and its days of the week, printed quoted (`"cosmos"`); host order */
  | 'realm'
  | 'devgroup'
  | 'day'
  /** seconds since midnight UTC (u32, host order; `hour_be` after a byteorder): nft prints the local time, `"17:00"` */
  | 'hour'
  | 'hour_be'
  /** nanoseconds since the epoch (u64, host order; `date_be` after a byteorder): nft prints the local date and time */
  | 'date'
  | 'date_be'
  /** a cgroup v2 id (u64, host order, the directory's inode): its path under /sys/fs/cgroup when known (`socket cgroupv2`) */
  | 'cgroupv2'
  /** a conntrack label (128 bits, host order): one bit set, printed as its number (nft 1.0.6 where no connlabel.conf names it) */
  | 'ct_label';

/** Value types the kernel holds in host byte order (`meta mark`, `iif`, `ct state`...). */
export const HOST_ORDER_TYPES: ReadonlySet<ValueType> = new Set<ValueType>([
  'mark',
  'ifindex',
  'ct_state',
  'ct_status',
  'iftype',
  'tchandle',
  'time_ms',
  'addrtype',
  'hour',
  'date',
  'uint_he',
  'boolean',
  'realm',
  'devgroup',
]);

/** A field a register was loaded from, as nft names it. */
export interface Field {
  /** text of the left side: `ip saddr`, `meta mark`, `ct state`, `fib daddr type`, `@nh,96,32` */
  text: string;
  /** `nft -j` JSON of the left side */
  json: Record<string, unknown>;
  /** how values compared with it print */
  type: ValueType;
  /** the field needs this l2 (`ether`), l3 (`ip`/`ip6`) or l4 (`tcp`/`udp`) dependency */
  l2?: string;
  l3?: string;
  l4?: string;
  /** an address field loaded only in part (nft's prefix match): the field's full length, bytes */
  fullLen?: number;
  /** the icmp type match this field depends on (`icmp:3` for `icmp mtu`): nft leaves that match out */
  dep?: string;
  /**
   * A load of only the bytes of bit fields nft names (`frag more-fragments`: bit 0x01 of byte 3), none
   * of its own: each field by the mask a `bitwise` applies and the shift of its value; the load alone does not print.
   */
  bits?: ReadonlyArray<{ mask: string; shift: number; field: Field }>;
}

/** What a register holds, as far as printing is concerned. */
export type RegisterValue =
  /** a constant (an `immediate`): wire bytes, hex */
  | { k: 'imm'; data: string }
  /** a field loaded from the packet or its metadata, unmasked */
  | { k: 'field'; field: Field }
  /** the value a map lookup gave (`ip saddr map { 1.1.1.1 : 2.2.2.2 }`), already printed */
  /** `words`: where the map's address (and port) data is, when it is such data */
  | { k: 'map'; stmt: Statement; l2?: string; l3?: string; l4?: string; words?: MapWords };

/**
 * Where a map lookup's address data sits, as 32-bit register words
 * (NFT_REG32_*, see {@link regWord}): `[first, last]` of the address (equal
 * unless the map's data is an interval), and of the port after it in a
 * concatenation (`ipv4_addr . inet_service`).
 */
export interface MapWords {
  addr: [number, number];
  port?: [number, number];
}

/** The first 32-bit word (NFT_REG32_00..15, 8..23) a register names: NFT_REG_1..4 are four words each. */
export function regWord(reg: number): number {
  return reg >= C.NFT_REG_1 && reg <= C.NFT_REG_4 ? C.NFT_REG32_00 + 4 * (reg - C.NFT_REG_1) : reg;
}

/** What an expression module gets to print its statement. */
export interface PrintContext {
  /** the rule's family: `ip`, `ip6`, `inet`, ... */
  family: string;
  /** the network protocol a previous match established (`ip`, `ip6`), if any */
  l3?: string;
  /** the transport protocol a previous match established (`tcp`, `udp`), if any */
  l4?: string;
  /** a previous match established a transport protocol nft names no header of (`meta l4proto gre`) */
  l4Other?: boolean;
  /** what a register holds, or undefined when it is unknown (an expression we do not understand wrote it) */
  reg(n: number): RegisterValue | undefined;
  /** device name of an index, when known (`iif "lo"`) */
  ifname(index: number): string | undefined;
  /** path of a cgroup id (decimal) under /sys/fs/cgroup, when known (`socket cgroupv2 level 1 "user.slice"`) */
  cgroup?(id: string): string | undefined;
  /**
   * A set of the rule's table as a rule refers to it: `@name`, or an
   * anonymous set's elements (`{ 1.1.1.1 : "c1" }`) printed with keys of
   * `keyType`; with its NFTA_SET_OBJ_TYPE for object maps. Undefined when the set is not known.
   */
  set(name: string, keyType: ValueType): { text: string; json: unknown; objType?: number } | undefined;
  /**
   * The key a set operation on set `name` reads from `sreg`: the field loaded there, or for a
   * concatenated key type the fields loaded from `sreg` on (`ip6 saddr . tcp dport`), with the
   * registers read. Undefined when unknown.
   */
  key?(sreg: number, name: string): { field: Field; regs: number[] } | undefined;
  /** A value of map `name`'s data type from its bytes (hex): `0x00000005` for a `mark`. Undefined when the map is not known. */
  mapValue?(name: string, hex: string): { text: string; json: unknown } | undefined;
  /** Set `name` of the rule's table: its NFTA_SET_FLAGS as names (`anonymous`, `dynamic`...) and NFTA_SET_DESC_SIZE. Undefined when not known. */
  setInfo?(name: string): { flags: readonly string[]; size?: number } | undefined;
  /**
   * The fields loaded into the registers from `sreg` on that make exactly
   * `len` bytes, each part from a 4-byte boundary (`ip saddr . tcp dport`:
   * 8): one field, or their concatenation; undefined when a part is not a
   * field nft names.
   */
  concat?(sreg: number, len: number): { field: Field; regs: number[] } | undefined;
}

/** What an expression module prints: the statement and the dependencies it implies. */
export interface PrintedStatement {
  stmt: Statement;
  /** registers whose loads this statement consumes (they are not printed on their own) */
  consumes?: number[];
  /** an l2 / l3 / l4 match before it that nft leaves out (`meta nfproto ipv4` before `reject with icmp ...`, `meta iiftype ether` before `ether type != ...`) */
  needsL2?: string;
  needsL3?: string;
  needsL4?: string;
}

/**
 * The link-layer match a field compared with a range, a set or a verdict map implies (nft
 * leaves it out): the field's own, and for `vlan type` the vlan header's
 * `ether type 8021q`, which nft keeps before `vlan type ip` only.
 */
export function rangeL2(f: Pick<Field, 'l2' | 'json'>): string | undefined {
  const p = (f.json as { payload?: { protocol?: string; field?: string } }).payload;
  return f.l2 ?? (p?.protocol === 'vlan' && p.field === 'type' ? 'vlan' : undefined);
}

const TCP_FLAGS = ['fin', 'syn', 'rst', 'psh', 'ack', 'urg', 'ecn', 'cwr'];
/** ct state bits, nft's names (NF_CT_STATE_INVALID_BIT = 1, NF_CT_STATE_BIT(IP_CT_ESTABLISHED) = 2, ...). */
const CT_STATE_BITS: Array<[number, string]> = [
  [1, 'invalid'],
  [2, 'established'],
  [4, 'related'],
  [8, 'new'],
  [64, 'untracked'],
];
/** enum ip_conntrack_status bits nft names (linux/netfilter/nf_conntrack_common.h). */
const CT_STATUS_BITS: Array<[number, string]> = [
  [1, 'expected'],
  [2, 'seen-reply'],
  [4, 'assured'],
  [8, 'confirmed'],
  [16, 'snat'],
  [32, 'dnat'],
  [512, 'dying'],
];
/** enum ip_conntrack_events bits as nft names them (nftables src/ct.c ct_event_tbl). */
const CT_EVENT_BITS: Array<[number, string]> = [
  'new',
  'related',
  'destroy',
  'reply',
  'assured',
  'protoinfo',
  'helper',
  'mark',
  'seqadj',
  'secmark',
  'label',
].map((n, i) => [2 ** i, n]);
/** RTN_* route types (linux/rtnetlink.h), as nft's `fib ... type` names them. */
const ADDR_TYPES = ['unspec', 'unicast', 'local', 'broadcast', 'anycast', 'multicast', 'blackhole', 'unreachable', 'prohibit', 'throw', 'nat', 'xresolve'];
/** Ethernet types nft names (linux/if_ether.h ETH_P_*). */
const ETHER_TYPES = new Map<number, string>([
  [0x0800, 'ip'],
  [0x86dd, 'ip6'],
  [0x0806, 'arp'],
  [0x8100, '8021q'],
  [0x88a8, '8021ad'],
]);
/** Device types nft names (linux/if_arp.h ARPHRD_*). */
const IF_TYPES = new Map<number, string>([
  [1, 'ether'],
  [512, 'ppp'],
  [768, 'ipip'],
  [769, 'ipip6'],
  [772, 'loopback'],
  [776, 'sit'],
  [778, 'ipgre'],
]);
/**
 * nft 1.0.6's DSCP names (`nft describe ip dscp`), the first name of a value
 * where several share it (cs0, df and be are all 0).
 */
const DSCP_NAMES = new Map<number, string>([
  [0x00, 'cs0'],
  [0x08, 'cs1'],
  [0x10, 'cs2'],
  [0x18, 'cs3'],
  [0x20, 'cs4'],
  [0x28, 'cs5'],
  [0x30, 'cs6'],
  [0x38, 'cs7'],
  [0x01, 'lephb'],
  [0x0a, 'af11'],
  [0x0c, 'af12'],
  [0x0e, 'af13'],
  [0x12, 'af21'],
  [0x14, 'af22'],
  [0x16, 'af23'],
  [0x1a, 'af31'],
  [0x1c, 'af32'],
  [0x1e, 'af33'],
  [0x22, 'af41'],
  [0x24, 'af42'],
  [0x26, 'af43'],
  [0x2c, 'va'],
  [0x2e, 'ef'],
]);
const names = (entries: Array<[number, string]>): ReadonlyMap<number, string> => new Map(entries);
/** nft 1.0.6's names of enumerated values (`nft describe icmp type`, `icmpv6 code`, `arp operation`...), the first of a value's names. */
const ENUM_NAMES: Partial<Record<ValueType, ReadonlyMap<number, string>>> = {
  icmp_type: names([
    [0, 'echo-reply'],
    [3, 'destination-unreachable'],
    [4, 'source-quench'],
    [5, 'redirect'],
    [8, 'echo-request'],
    [9, 'router-advertisement'],
    [10, 'router-solicitation'],
    [11, 'time-exceeded'],
    [12, 'parameter-problem'],
    [13, 'timestamp-request'],
    [14, 'timestamp-reply'],
    [15, 'info-request'],
    [16, 'info-reply'],
    [17, 'address-mask-request'],
    [18, 'address-mask-reply'],
  ]),
  icmpv6_type: names([
    [1, 'destination-unreachable'],
    [2, 'packet-too-big'],
    [3, 'time-exceeded'],
    [4, 'parameter-problem'],
    [128, 'echo-request'],
    [129, 'echo-reply'],
    [130, 'mld-listener-query'],
    [131, 'mld-listener-report'],
    [132, 'mld-listener-done'],
    [133, 'nd-router-solicit'],
    [134, 'nd-router-advert'],
    [135, 'nd-neighbor-solicit'],
    [136, 'nd-neighbor-advert'],
    [137, 'nd-redirect'],
    [138, 'router-renumbering'],
    [141, 'ind-neighbor-solicit'],
    [142, 'ind-neighbor-advert'],
    [143, 'mld2-listener-report'],
  ]),
  icmp_code: names([
    [0, 'net-unreachable'],
    [1, 'host-unreachable'],
    [2, 'prot-unreachable'],
    [3, 'port-unreachable'],
    [4, 'frag-needed'],
    [9, 'net-prohibited'],
    [10, 'host-prohibited'],
    [13, 'admin-prohibited'],
  ]),
  icmpv6_code: names([
    [0, 'no-route'],
    [1, 'admin-prohibited'],
    [3, 'addr-unreachable'],
    [4, 'port-unreachable'],
    [5, 'policy-fail'],
    [6, 'reject-route'],
  ]),
  igmp_type: names([
    [17, 'membership-query'],
    [18, 'membership-report-v1'],
    [22, 'membership-report-v2'],
    [34, 'membership-report-v3'],
    [23, 'leave-group'],
  ]),
  icmpx_code: names([
    [0, 'no-route'],
    [1, 'port-unreachable'],
    [2, 'host-unreachable'],
    [3, 'admin-prohibited'],
  ]),
  mh_type: names(
    [
      'binding-refresh-request',
      'home-test-init',
      'careof-test-init',
      'home-test',
      'careof-test',
      'binding-update',
      'binding-acknowledgement',
      'binding-error',
      'fast-binding-update',
      'fast-binding-acknowledgement',
      'fast-binding-advertisement',
      'experimental-mobility-header',
      'home-agent-switch-message',
    ].map((n, i) => [i, n]),
  ),
  dccp_pkttype: names(['request', 'response', 'data', 'ack', 'dataack', 'closereq', 'close', 'reset', 'sync', 'syncack'].map((n, i) => [i, n])),
  // Debian 12's /etc/iproute2/rt_realms and /etc/iproute2/group, which nft 1.0.6 reads
  realm: names([[0, 'cosmos']]),
  devgroup: names([[0, 'default']]),
  day: names(['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'].map((n, i) => [i, n])),
  arp_op: names([
    [1, 'request'],
    [2, 'reply'],
    [3, 'rrequest'],
    [4, 'rreply'],
    [8, 'inrequest'],
    [9, 'inreply'],
    [10, 'nak'],
  ]),
};

/** nft's name of an enumerated value (`icmp_code` 3: `port-unreachable`), or undefined. */
export function enumName(type: ValueType, n: number): string | undefined {
  return ENUM_NAMES[type]?.get(n);
}

/**
 * nft 1.0.6's datatypes (include/datatype.h `enum datatypes`) that set keys
 * and map values have: NFTA_SET_KEY_TYPE / NFTA_SET_DATA_TYPE id -> nft's
 * name, how a value prints, its bytes.
 */
const DATATYPES: ReadonlyMap<number, { name: string; type: ValueType; len: number }> = new Map([
  [2, { name: 'nf_proto', type: 'nfproto', len: 1 }],
  [4, { name: 'integer', type: 'hex', len: 4 }],
  [7, { name: 'ipv4_addr', type: 'ipv4', len: 4 }],
  [8, { name: 'ipv6_addr', type: 'ipv6', len: 16 }],
  [9, { name: 'ether_addr', type: 'ether', len: 6 }],
  [10, { name: 'ether_type', type: 'ethertype', len: 2 }],
  [11, { name: 'arp_op', type: 'arp_op', len: 2 }],
  [12, { name: 'inet_proto', type: 'l4proto', len: 1 }],
  [13, { name: 'inet_service', type: 'port', len: 2 }],
  [14, { name: 'icmp_type', type: 'icmp_type', len: 1 }],
  [15, { name: 'tcp_flag', type: 'tcpflags', len: 1 }],
  [17, { name: 'mh_type', type: 'mh_type', len: 1 }],
  [18, { name: 'time', type: 'time_ms', len: 8 }],
  [19, { name: 'mark', type: 'mark', len: 4 }],
  [20, { name: 'iface_index', type: 'ifindex', len: 4 }],
  [23, { name: 'classid', type: 'tchandle', len: 4 }],
  [21, { name: 'iface_type', type: 'iftype', len: 2 }],
  [22, { name: 'realm', type: 'realm', len: 4 }],
  [24, { name: 'uid', type: 'uint_he', len: 4 }],
  [25, { name: 'gid', type: 'uint_he', len: 4 }],
  [26, { name: 'ct_state', type: 'ct_state', len: 4 }],
  [27, { name: 'ct_dir', type: 'ct_dir', len: 1 }],
  [28, { name: 'ct_status', type: 'ct_status', len: 4 }],
  [29, { name: 'icmpv6_type', type: 'icmpv6_type', len: 1 }],
  [31, { name: 'pkt_type', type: 'pkttype', len: 1 }],
  [32, { name: 'icmp_code', type: 'icmp_code', len: 1 }],
  [33, { name: 'icmpv6_code', type: 'icmpv6_code', len: 1 }],
  [34, { name: 'icmpx_code', type: 'icmpx_code', len: 1 }],
  [35, { name: 'devgroup', type: 'devgroup', len: 4 }],
  [36, { name: 'dscp', type: 'dscp', len: 1 }],
  [37, { name: 'ecn', type: 'ecn', len: 1 }],
  [38, { name: 'fib_addrtype', type: 'addrtype', len: 4 }],
  [39, { name: 'boolean', type: 'boolean', len: 1 }],
  [41, { name: 'ifname', type: 'ifname', len: 16 }],
  [42, { name: 'igmp_type', type: 'igmp_type', len: 1 }],
  [44, { name: 'hour', type: 'hour', len: 4 }],
  [45, { name: 'day', type: 'day', len: 1 }],
]);
/** nft's TYPE_BITS: a concatenated type packs its parts' ids 6 bits each, the first part highest. */
const TYPE_BITS = 6;

/** The datatype ids a set key type is made of: one, or the parts of a concatenation (`ipv4_addr . inet_service`: [7, 13]). */
export function datatypeParts(id: number): number[] {
  const parts: number[] = [];
  for (let v = id; v > 0; v = Math.floor(v / (1 << TYPE_BITS))) parts.unshift(v % (1 << TYPE_BITS));
  return parts.length ? parts : [id];
}

/** nft's name of a key or value type id: `ipv4_addr`, `ipv4_addr . inet_service`; `type(<n>)` when a part is unknown. */
export function datatypeName(id: number): string {
  const parts = datatypeParts(id).map((p) => DATATYPES.get(p)?.name);
  return parts.every((p) => p !== undefined) ? parts.join(' . ') : `type(${id})`;
}

/**
 * How the values of a key or value type id print, part by part, each part
 * padded to 4 bytes in a concatenation (NFT_REG32_SIZE); undefined when a
 * part is unknown.
 */
export function datatypeLayout(id: number): Array<{ type: ValueType; len: number }> | undefined {
  const parts = datatypeParts(id).map((p) => DATATYPES.get(p));
  return parts.every((p) => p !== undefined) ? parts.map((p) => ({ type: p!.type, len: p!.len })) : undefined;
}

/** nft's ECN names (`nft describe ip ecn`), by value. */
const ECN_NAMES = ['not-ect', 'ect1', 'ect0', 'ce'];
/**
 * IP protocol names by number as nft prints them: the official name (first
 * column) of each entry of netbase's /etc/protocols (Debian 12, netbase 6.4),
 * which nft 1.0.6 reads with getprotobynumber(3).
 */
const L4_NAMES = new Map<number, string>([
  [0, 'ip'],
  [1, 'icmp'],
  [2, 'igmp'],
  [3, 'ggp'],
  [4, 'ipencap'],
  [5, 'st'],
  [6, 'tcp'],
  [8, 'egp'],
  [9, 'igp'],
  [12, 'pup'],
  [17, 'udp'],
  [20, 'hmp'],
  [22, 'xns-idp'],
  [27, 'rdp'],
  [29, 'iso-tp4'],
  [33, 'dccp'],
  [36, 'xtp'],
  [37, 'ddp'],
  [38, 'idpr-cmtp'],
  [41, 'ipv6'],
  [43, 'ipv6-route'],
  [44, 'ipv6-frag'],
  [45, 'idrp'],
  [46, 'rsvp'],
  [47, 'gre'],
  [50, 'esp'],
  [51, 'ah'],
  [57, 'skip'],
  [58, 'ipv6-icmp'],
  [59, 'ipv6-nonxt'],
  [60, 'ipv6-opts'],
  [73, 'rspf'],
  [81, 'vmtp'],
  [88, 'eigrp'],
  [89, 'ospf'],
  [93, 'ax.25'],
  [94, 'ipip'],
  [97, 'etherip'],
  [98, 'encap'],
  [103, 'pim'],
  [108, 'ipcomp'],
  [112, 'vrrp'],
  [115, 'l2tp'],
  [124, 'isis'],
  [132, 'sctp'],
  [133, 'fc'],
  [135, 'mobility-header'],
  [136, 'udplite'],
  [137, 'mpls-in-ip'],
  [138, 'manet'],
  [139, 'hip'],
  [140, 'shim6'],
  [141, 'wesp'],
  [142, 'rohc'],
  [143, 'ethernet'],
]);

/** nft's name of an IP protocol number (`tcp`, `udp`...), or undefined. */
export function l4Name(n: number): string | undefined {
  return L4_NAMES.get(n);
}

/** TCP flag names of a bit mask, in bit order. */
export function tcpFlagNames(v: number): string[] {
  return TCP_FLAGS.filter((_, i) => v & (1 << i));
}

/** Each set bit of v, lowest first: its name from the table, or the bit's value when it has none (nft's `new,0x80`). */
function bitNames(v: number, table: Array<[number, string]>): Array<string | number> {
  const out: Array<string | number> = [];
  for (let bit = 1; bit <= v; bit *= 2) {
    if (Math.floor(v / bit) % 2) out.push(table.find(([b]) => b === bit)?.[1] ?? bit);
  }
  return out;
}

/** One flag as nft prints it: its name, or an unnamed bit in hex (`0x80`). */
export function flagText(f: string | number): string {
  return typeof f === 'number' ? `0x${f.toString(16)}` : f;
}

/** The types whose values are sets of flag bits (a masked `!= 0` test prints as `ct state new`). */
export const FLAG_TYPES: ReadonlySet<ValueType> = new Set<ValueType>(['tcpflags', 'ct_state', 'ct_status']);

/**
 * A u32 as `nft -j` 1.0.6 writes it where it passes the value through a C
 * `int` (numgen's and hash's `mod`, `ct count`'s `val`): past 2^31 - 1 it
 * comes out negative (4294967295 as -1). The text listing prints it unsigned.
 */
export function nftJsonInt(n: number): number {
  return n | 0;
}

/** A duration as nft prints it: `10s`, `9s996ms`, `1h30m`, `2d`. */
export function durationText(ms: number): string {
  if (ms <= 0) return '0s';
  const units: Array<[number, string]> = [
    [86_400_000, 'd'],
    [3_600_000, 'h'],
    [60_000, 'm'],
    [1000, 's'],
    [1, 'ms'],
  ];
  let rest = Math.floor(ms);
  let out = '';
  for (const [n, u] of units) {
    const q = Math.floor(rest / n);
    if (q) {
      out += `${q}${u}`;
      rest -= q * n;
    }
  }
  return out;
}

/** Bytes as nft prints a byte count: the largest of bytes, kbytes, mbytes that divides it (`10 kbytes`). */
export function bytesUnit(n: number): { value: number; unit: 'bytes' | 'kbytes' | 'mbytes' } {
  if (n > 0 && n % (1024 * 1024) === 0) return { value: n / (1024 * 1024), unit: 'mbytes' };
  if (n > 0 && n % 1024 === 0) return { value: n / 1024, unit: 'kbytes' };
  return { value: n, unit: 'bytes' };
}

/** A string as nft quotes it in text (`"x "`). */
export function quoted(s: string): string {
  return `"${s}"`;
}

/**
 * Where nft 1.0.6's parser reads a `$` in a quoted string as a variable
 * (`log prefix "a$b"`: unknown identifier 'b'); elsewhere (`comment "cost
 * $5"`) nft -f reads it back as written.
 */
const DOLLAR_IS_VARIABLE: ReadonlySet<string> = new Set(['log prefix']);

/**
 * Why `nft -f` cannot read back `what` (`log prefix`, `comment`) quoted as
 * nft 1.0.6 lists it, or undefined: its scanner's quoted string is
 * `"[^"]*"`, with no escape for a `"` inside, and a `$` in a log prefix
 * starts a variable ({@link DOLLAR_IS_VARIABLE}).
 */
export function quoteProblem(what: string, s: string): string | undefined {
  const c = s.includes('"') ? '"' : DOLLAR_IS_VARIABLE.has(what) && s.includes('$') ? '$' : undefined;
  return c ? `${what} ${JSON.stringify(s)} holds a '${c}': nft -f cannot read this back` : undefined;
}

/**
 * The problem of a range nft lists as it is (`ip saddr 10.0.0.5-10.0.0.1`,
 * `udp dport 50-20`) whose first end is past its last: `nft -f` refuses it.
 */
export const REVERSED_RANGE = 'a range whose first end is past its last: nft -f cannot read this back ("Range has zero or negative size")';

/** Whether a range's ends (wire hex of `type`, compared in the type's byte order as nft compares them) are reversed. */
export function rangeReversed(from: string, to: string, type: ValueType): boolean {
  const n = (hex: string): bigint => BigInt(`0x${HOST_ORDER_TYPES.has(type) ? (hex.match(/../g) ?? []).reverse().join('') : hex}`);
  return from.length === to.length && from.length > 0 && n(from) > n(to);
}

/**
 * A value as nft prints it (text) and as `nft -j` writes it (json). Bytes
 * that do not fit the type print as `0x<hex>`, never as a wrong value.
 * @param hex the value's wire bytes, hex
 * @param ifname device name of an index (type `ifindex`), when known
 * @param cgroup path of a cgroup id (decimal; type `cgroupv2`) under /sys/fs/cgroup, when known
 */
export function valueText(
  hex: string,
  type: ValueType,
  ifname?: (index: number) => string | undefined,
  cgroup?: (id: string) => string | undefined,
): { text: string; json: unknown } {
  const b = Buffer.from(hex, 'hex');
  switch (type) {
    case 'ipv4':
      if (b.length === 4) {
        const t = addressText(b);
        return { text: t, json: t };
      }
      break;
    case 'ipv6':
      if (b.length === 16) {
        const t = addressText(b);
        return { text: t, json: t };
      }
      break;
    case 'port':
      if (b.length === 2) {
        const n = b.readUInt16BE(0);
        return { text: String(n), json: n };
      }
      break;
    case 'l4proto':
      if (b.length === 1) {
        const n = L4_NAMES.get(b[0]);
        return n ? { text: n, json: n } : { text: String(b[0]), json: b[0] };
      }
      break;
    case 'nfproto':
      if (b.length === 1) {
        const n = b[0] === 2 ? 'ipv4' : b[0] === 10 ? 'ipv6' : undefined;
        return n ? { text: n, json: n } : { text: String(b[0]), json: b[0] };
      }
      break;
    case 'tcpflags':
      // no flag: nft prints `0x0` (JSON 0)
      if (b.length === 1 && b[0] === 0) return { text: '0x0', json: 0 };
      if (b.length === 1) {
        const f = tcpFlagNames(b[0]);
        return { text: f.join(','), json: f.length === 1 ? f[0] : f };
      }
      break;
    case 'mark':
      if (b.length === 4) {
        const n = b.readUInt32LE(0);
        return { text: `0x${n.toString(16).padStart(8, '0')}`, json: n };
      }
      break;
    // a mark key of an interval set: nft stores those big-endian
    case 'mark_be':
      if (b.length === 4) {
        const n = b.readUInt32BE(0);
        return { text: `0x${n.toString(16).padStart(8, '0')}`, json: n };
      }
      break;
    case 'ether':
      if (b.length === 6) {
        const t = [...b].map((x) => x.toString(16).padStart(2, '0')).join(':');
        return { text: t, json: t };
      }
      break;
    case 'uint_be':
      if (b.length <= 4 && b.length > 0) {
        const n = b.readUIntBE(0, b.length);
        return { text: String(n), json: n };
      }
      if (b.length === 8) {
        const n = b.readBigUInt64BE(0);
        return { text: n.toString(), json: Number(n) };
      }
      break;
    case 'uint_he':
      if (b.length <= 4 && b.length > 0) {
        const n = b.readUIntLE(0, b.length);
        return { text: String(n), json: n };
      }
      // a 64-bit counter (`ct packets`): exact as text, a number in JSON
      if (b.length === 8) {
        const n = b.readBigUInt64LE(0);
        return { text: n.toString(), json: Number(n) };
      }
      break;
    case 'string': {
      const s = cString(b);
      return { text: `"${s}"`, json: s };
    }
    case 'ifname': {
      if (b.length === 0 || b.length > 16) break;
      const nul = b.indexOf(0);
      // nft compares only the given bytes of a wildcard name (`eth*`): no NUL in them;
      // a whole name that ends in `*` is written `ab\*` (nft's escape), else it would read back as a wildcard
      const s = nul < 0 ? `${b.toString('utf8')}*` : b.subarray(0, nul).toString('utf8').replace(/\*$/, '\\*');
      return { text: `"${s}"`, json: s };
    }
    case 'ifindex':
      if (b.length === 4) {
        const n = b.readUInt32LE(0);
        const name = ifname?.(n);
        return name !== undefined ? { text: `"${name}"`, json: name } : { text: String(n), json: String(n) };
      }
      break;
    case 'ct_state':
    case 'ct_status':
      if (b.length === 4 && b.readUInt32LE(0) === 0) return { text: '0x0', json: 0 };
      if (b.length === 4) {
        const f = bitNames(b.readUInt32LE(0), type === 'ct_state' ? CT_STATE_BITS : CT_STATUS_BITS);
        return { text: f.map(flagText).join(','), json: f.length === 1 ? f[0] : f };
      }
      break;
    case 'ct_event':
      if (b.length === 4 && b.readUInt32LE(0) !== 0) {
        // a bit nft does not name in hex (`ct event set 0x800`, JSON 2048); beside others nft lists it
        // the same way (`new,0x800`), which it cannot read back: raw
        const f = bitNames(b.readUInt32LE(0), CT_EVENT_BITS);
        if (f.length === 1 || f.every((x) => typeof x === 'string')) return { text: f.map(flagText).join(','), json: f.length === 1 ? f[0] : f };
      }
      break;
    case 'ct_dir':
      if (b.length === 1 && b[0] <= 1) {
        const t = b[0] === 0 ? 'original' : 'reply';
        return { text: t, json: t };
      }
      break;
    // nft 1.0.6 (cgroupv2_type_print): the path quoted (JSON the path); an id without a path it prints as the
    // number, which it cannot read back (it reads a path only): hex here, so that the match prints raw
    case 'cgroupv2': {
      const path = b.length === 8 ? cgroup?.(b.readBigUInt64LE(0).toString()) : undefined;
      if (path !== undefined) return { text: `"${path}"`, json: path };
      break;
    }
    case 'ct_label': {
      const bits = b.length === 16 ? [...b].flatMap((x, i) => [0, 1, 2, 3, 4, 5, 6, 7].filter((j) => x & (1 << j)).map((j) => i * 8 + j)) : [];
      if (bits.length === 1) return { text: String(bits[0]), json: bits[0] };
      break;
    }
    case 'hour':
    case 'hour_be':
      if (b.length === 4) return quotedText(hourText(type === 'hour' ? b.readUInt32LE(0) : b.readUInt32BE(0)));
      break;
    case 'date':
    case 'date_be': {
      const t = b.length === 8 ? dateText(type === 'date' ? b.readBigUInt64LE(0) : b.readBigUInt64BE(0)) : undefined;
      if (t !== undefined) return quotedText(t);
      break;
    }
    case 'time_ms':
    case 'time_ms_be':
      if (b.length === 4 || b.length === 8) {
        const le = type === 'time_ms';
        const ms = b.length === 4 ? (le ? b.readUInt32LE(0) : b.readUInt32BE(0)) : Number(le ? b.readBigUInt64LE(0) : b.readBigUInt64BE(0));
        // nft 1.0.6 prints no time at all for 0 (`ct expiration  drop`, which it cannot read back): raw
        if (ms > 0) return { text: durationText(ms), json: Math.floor(ms / 1000) };
      }
      break;
    case 'addrtype':
      if (b.length === 4) {
        const t = ADDR_TYPES[b.readUInt32LE(0)];
        if (t) return { text: t, json: t };
      }
      break;
    case 'ethertype':
      if (b.length === 2) {
        const t = ETHER_TYPES.get(b.readUInt16BE(0));
        // one nft does not name: hex in text, a number in JSON (`0x88cc`, 35020)
        return t ? { text: t, json: t } : { text: `0x${hex}`, json: b.readUInt16BE(0) };
      }
      break;
    case 'tchandle':
    case 'tchandle_be':
      if (b.length === 4) {
        const h = type === 'tchandle' ? b.readUInt32LE(0) : b.readUInt32BE(0);
        const t = h === 0xffffffff ? 'root' : h === 0 ? 'none' : `${(h >>> 16).toString(16)}:${(h & 0xffff).toString(16)}`;
        return { text: t, json: t };
      }
      break;
    case 'pkttype':
      if (b.length === 1 && b[0] <= 3) {
        const t = ['host', 'broadcast', 'multicast', 'other'][b[0]];
        return { text: t, json: t };
      }
      break;
    case 'rawint':
      // up to 6 bytes: an exact number in JSON too (`@ll,48,48 0x1122334455`)
      if (b.length >= 1 && b.length <= 6) {
        const n = b.readUIntBE(0, b.length);
        return { text: `0x${n.toString(16)}`, json: n };
      }
      break;
    case 'boolean':
      if (b.length >= 1 && b.length <= 4) {
        const n = b.readUIntLE(0, b.length);
        if (n <= 1) return { text: n ? 'exists' : 'missing', json: n === 1 };
      }
      break;
    case 'dscp':
      if (b.length === 1 && b[0] < 64) {
        const t = DSCP_NAMES.get(b[0]);
        return t ? { text: t, json: t } : { text: `0x${hex}`, json: b[0] };
      }
      break;
    case 'ecn':
      if (b.length === 1) {
        const t = ECN_NAMES[b[0]];
        // past the 2 bits (an interval's end nft computes): hex, a number in JSON
        return t ? { text: t, json: t } : { text: `0x${hex}`, json: b[0] };
      }
      break;
    case 'icmp_type':
    case 'icmp_code':
    case 'icmpv6_type':
    case 'icmpv6_code':
    case 'arp_op':
    case 'igmp_type':
    case 'icmpx_code':
    case 'mh_type':
    case 'dccp_pkttype':
      if (b.length >= 1 && b.length <= 2) {
        const n = b.readUIntBE(0, b.length);
        const t = enumName(type, n);
        return t ? { text: t, json: t } : { text: String(n), json: n };
      }
      break;
    // a name quoted; a number without one, in JSON a string for a realm (nft prints it), else a number
    case 'realm':
    case 'devgroup':
    case 'day':
      if (b.length === 4 || b.length === 1) {
        const n = b.readUIntLE(0, b.length);
        const t = enumName(type, n);
        return t ? { text: `"${t}"`, json: t } : { text: String(n), json: type === 'realm' ? String(n) : n };
      }
      break;
    case 'iftype':
      if (b.length === 2) {
        const t = IF_TYPES.get(b.readUInt16LE(0));
        if (t) return { text: t, json: t };
      }
      break;
    default:
      break;
  }
  return { text: `0x${hex}`, json: `0x${hex}` };
}

/**
 * Symbolic types nft 1.0.6 prints numerically inside a range (its range
 * printer turns on NFT_CTX_OUTPUT_NUMERIC_ALL: `meta l4proto 6-17`, `icmp
 * type 0-8`, `ether type 0x0800-0x86dd`), in their base format: decimal
 * (0), or hex of this many digits (the field's bits / 4, rounded up).
 */
const RANGE_NUMERIC: Partial<Record<ValueType, number>> = {
  l4proto: 0,
  nfproto: 0,
  ct_dir: 0,
  pkttype: 0,
  addrtype: 0,
  iftype: 0,
  icmp_type: 0,
  icmp_code: 0,
  icmpv6_type: 0,
  icmpv6_code: 0,
  arp_op: 0,
  igmp_type: 0,
  icmpx_code: 0,
  mh_type: 0,
  dccp_pkttype: 0,
  ethertype: 4,
  dscp: 2,
  ecn: 1,
};

/**
 * One end of a range as nft prints it: a symbolic value as its number
 * ({@link RANGE_NUMERIC}); in JSON nft names it (NFT_CTX_OUTPUT_NUMERIC_PROTO
 * only: protocols as numbers), and a value of several tcp flags is a number.
 * Undefined when the bytes are not a value of `type`, or are ct flags.
 */
export function rangeEndText(hex: string, type: ValueType, ifname?: (index: number) => string | undefined): { text: string; json: unknown } | undefined {
  // nft 1.0.6 prints a range of times in whole seconds (`3600s-86400s`), dropping milliseconds: those would read
  // back as another range, so they stay raw
  if (type === 'time_ms' || type === 'time_ms_be') {
    const b = Buffer.from(hex, 'hex');
    if (b.length !== 4) return undefined;
    const ms = type === 'time_ms' ? b.readUInt32LE(0) : b.readUInt32BE(0);
    return ms % 1000 === 0 ? { text: `${ms / 1000}s`, json: ms / 1000 } : undefined;
  }
  const v = valueText(hex, type, ifname);
  // bytes valueText could not read (it fell back to their hex)
  // or ct flags, whose ranges synplug leaves raw
  if (v.json === `0x${hex}` || type === 'ct_state' || type === 'ct_status') return undefined;
  const b = Buffer.from(hex, 'hex');
  if (type === 'tcpflags' && b.length === 1) return { text: `0x${b[0].toString(16)}`, json: Array.isArray(v.json) ? b[0] : v.json };
  const digits = RANGE_NUMERIC[type];
  if (digits === undefined || b.length < 1 || b.length > 4) return v;
  const n = HOST_ORDER_TYPES.has(type) ? b.readUIntLE(0, b.length) : b.readUIntBE(0, b.length);
  return { text: digits ? `0x${n.toString(16).padStart(digits, '0')}` : String(n), json: type === 'l4proto' ? n : v.json };
}

/** A string value as nft prints it: quoted in text, bare in JSON. */
function quotedText(t: string): { text: string; json: string } {
  return { text: `"${t}"`, json: t };
}

const two = (n: number): string => String(n).padStart(2, '0');

/**
 * A time of day in seconds since midnight UTC as nft 1.0.6 prints it (its
 * hour_type_print): moved by the local time zone's offset now, `HH:MM`, and
 * `:SS` when not 0.
 */
export function hourText(seconds: number): string {
  const day = 86_400;
  const s = (((seconds - new Date().getTimezoneOffset() * 60) % day) + day) % day;
  return `${two(Math.floor(s / 3600))}:${two(Math.floor(s / 60) % 60)}${s % 60 ? `:${two(s % 60)}` : ''}`;
}

/**
 * A date in nanoseconds since the epoch as nft 1.0.6 prints it (its
 * date_type_print): whole seconds, in local time, `YYYY-MM-DD HH:MM:SS`;
 * undefined past what a date prints (a year after 9999).
 */
export function dateText(ns: bigint): string | undefined {
  const s = Number(ns / 1_000_000_000n);
  const local = s - new Date(s * 1000).getTimezoneOffset() * 60;
  const d = new Date(local * 1000);
  if (Number.isNaN(d.getTime()) || d.getUTCFullYear() > 9999) return undefined;
  return `${d.getUTCFullYear()}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
}

/** Prefix length when `lo`..`hi` (same length, network order) is exactly one CIDR block, else undefined. */
export function cidrBits(lo: Buffer, hi: Buffer): number | undefined {
  let bits = 0;
  let i = 0;
  for (; i < lo.length && lo[i] === hi[i]; i++) bits += 8;
  if (i === lo.length) return bits;
  const x = lo[i] ^ hi[i];
  // the differing bits must be a run of low ones, all zero in lo and all one in hi
  if ((x & (x + 1)) !== 0 || (lo[i] & x) !== 0) return undefined;
  bits += 8 - Math.log2(x + 1);
  for (let j = i + 1; j < lo.length; j++) if (lo[j] !== 0 || hi[j] !== 0xff) return undefined;
  return bits;
}

/**
 * Flag bits of a value (`ct_state`, `ct_status`, `tcpflags`), lowest first: names, and the
 * value of each bit nft does not name (a number); undefined for other types or lengths.
 */
export function flagValueNames(hex: string, type: ValueType): Array<string | number> | undefined {
  const b = Buffer.from(hex, 'hex');
  if (type === 'tcpflags' && b.length === 1) return tcpFlagNames(b[0]);
  if ((type === 'ct_state' || type === 'ct_status') && b.length === 4) return bitNames(b.readUInt32LE(0), type === 'ct_state' ? CT_STATE_BITS : CT_STATUS_BITS);
  return undefined;
}
