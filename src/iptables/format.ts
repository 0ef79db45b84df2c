/**
 * Printing what we decode the way nft 1.0.6 prints it: rule expressions
 * turned back into nft statements (`ip saddr 169.254.255.254`,
 * `tcp flags syn / syn,ack`, `meta mark set 0x00000001`...), the ruleset as
 * `nft list ruleset` text ({@link formatRulesetText}) and as
 * `nft -j list ruleset` JSON ({@link formatRulesetJson}).
 *
 * Covered: matches on the header fields nft names (headers.ts: ether, vlan,
 * ip, ip6, arp, tcp, udp, sctp, icmp, icmpv6...), whole or as bit fields
 * (`ip dscp cs1`, `vlan id 10`, `ip version 4 ip hdrlength 5`), with
 * values by name (`icmp type echo-request`, `arp operation request`);
 * `th dport` and nft's raw `@nh,<bits>,<bits>` where nft has no protocol to
 * name them by; header fields set (`ip ttl set 64`); meta matches and
 * `meta ... set` (`iifname "lo"`, `iif "lo"` unqualified, device indexes
 * named through `ifnames`, marks changed bitwise); masked matches, ranges,
 * set and map lookups of single and concatenated keys (`ip saddr . tcp dport
 * @s`), verdict maps, counters and verdicts, with the dependencies nft hides
 * where it hides them (`meta l4proto tcp` before a tcp field; `ip protocol`
 * / `ip6 nexthdr` only in the ip and ip6 families; `meta nfproto` / `ether
 * type` before an ip field; `meta iiftype ether` before an ether field).
 * Statements of their own are printed by their expression modules
 * (expr/*.ts) through the registry's `field` and `statement` hooks. Named
 * counters, quotas, limits and ct helpers print in their table, named sets
 * and maps with their declaration (type or `typeof`, policy, size, flags,
 * timeout, gc-interval, counter, auto-merge) and elements, interval sets
 * merged back into prefixes and ranges, concatenated elements part by part,
 * in nft's order and with its line breaks; chains with nft's hook and
 * priority names per family. What cannot be said in nft's language prints
 * raw, marked: the libnftnl debug line of its expression as
 * `[ raw: ... ]` in text and `{ raw: <expression> }` in JSON, and is
 * recorded in {@link FormatOptions.problems}, so that nothing is hidden or
 * misnamed.
 *
 * @module
 */
import { endianness } from 'node:os';
import type { NftChain } from './chain.js';
import type { NftRule } from './rule.js';
import { setDataByteOrder, setItems, setKeyByteOrder, userdataString, userdataTlvs, type NftSet, type NftSetItem } from './set.js';
import type { NftData } from './data.js';
import * as C from './constants.js';
import type { NftTable } from './table.js';
import type { NftObject } from './object.js';
import { objectBody } from './object-print.js';
import type { Expr, GenericExpr } from './expr/index.js';
import { CT_KEY_NAMES, ctField, describeExpr, exprCodec, limitPrinted, quotaText } from './expr/index.js';
import { META_KEY_NAMES, NFT_KEYWORDS, NFT_OPERATOR_WORDS, nftReadsName, priorityText } from './names.js';
import { addressText } from './validate.js';
import { XT_CONNLABEL_CONF } from './xt.js';
import { HEADERS, headerField, L4_HEADERS, type HeaderField } from './headers.js';
import {
  cidrBits,
  HOST_ORDER_TYPES,
  datatypeLayout,
  durationText,
  FLAG_TYPES,
  rangeEndText,
  rangeL2,
  flagText,
  flagValueNames,
  tcpFlagNames,
  valueText,
  type Field,
  type PrintContext,
  type RegisterValue,
  type Statement,
  type ValueType,
  type MapWords,
  regWord,
  RAW_MARKER,
  rawStatement,
  quoteProblem,
} from './print.js';

export type { Statement } from './print.js';
export { durationText } from './print.js';

/** A ruleset as listed: flat lists, in kernel dump order. */
export interface NftRuleset {
  tables: NftTable[];
  chains: NftChain[];
  /** named and anonymous sets, with `elements` when listed */
  sets: NftSet[];
  rules: NftRule[];
  /** named stateful objects (counters, quotas, limits...), when listed */
  objects?: NftObject[];
  /** flowtables, by name: not printed, named as unprintable */
  flowtables?: NftFlowtable[];
  /** device names by index, for `iif`/`oif` and `fib ... oif` (nft prints names it can resolve) */
  ifnames?: Readonly<Record<number, string>>;
  /** cgroup paths under /sys/fs/cgroup by id (decimal), for `socket cgroupv2` (nft prints those it finds) */
  cgroups?: Readonly<Record<string, string>>;
}

/** The names a listing resolves: devices by index, cgroups by id. */
export type RulesetNames = Pick<NftRuleset, 'ifnames' | 'cgroups'>;

/**
 * Bytes a register holds after a load of a field of these value types (the
 * others' length varies): a concatenation's next part may follow in the
 * 32-bit register after it (`ct state . meta mark`).
 */
const FIXED_LEN: Partial<Record<ValueType, number>> = {
  ipv4: 4,
  ipv6: 16,
  port: 2,
  mark: 4,
  mark_be: 4,
  ct_state: 4,
  ct_status: 4,
  ct_dir: 1,
  time_ms: 4,
  l4proto: 1,
  nfproto: 1,
  ifindex: 4,
  addrtype: 4,
  ether: 6,
};

/** A flowtable, as far as synplug reads it (NFTA_FLOWTABLE_TABLE, _NAME, _HANDLE). */
export interface NftFlowtable {
  family: string;
  table: string;
  name: string;
  handle?: number;
}

type Src =
  | { k: 'payload'; base: string; offset: number; len: number }
  | { k: 'meta'; key: string }
  /** a load an expression module describes (`ct state`, `fib daddr type`) */
  | { k: 'field'; field: Field }
  | { k: 'masked'; src: Src; mask: string; xor: string }
  /**
   * a bit field shifted down to its value (`ip dscp` as a typeof set holds it): nft 1.0.6 names it
   * only as the key of a set lookup (`ip dscp @s`), see `bitValueKey`
   */
  | { k: 'bitvalue'; field: Field }
  /** a value shifted (`ct mark >> 8`): NFT_BITWISE_LSHIFT / _RSHIFT by `n` bits */
  | { k: 'shifted'; src: Src; op: '<<' | '>>'; n: number }
  | { k: 'imm'; data: string }
  /** a map lookup's result (`ip saddr map { 1.1.1.1 : 0x5 }`), already printed */
  | { k: 'map'; stmt: Statement; l2?: string; l3?: string; l4?: string; words?: MapWords };

/**
 * What the matches before a statement established: the network protocol
 * (`ip`, `ip6`), the transport protocol when nft has fields for it (`tcp`,
 * `udp`), and whether some other transport protocol was matched (`ip protocol
 * icmp`): then nft decodes transport loads under that protocol's name, which we
 * do not know, so they print raw rather than as `@th,...`.
 */
interface Ctx {
  /** the link-layer header nft knows (`ether`: the bridge family, or after `meta iiftype ether`) */
  l2?: string;
  l3?: string;
  l4?: string;
  l4Other?: boolean;
  /** the icmp / icmpv6 type an earlier match required */
  icmpType?: number;
  /**
   * where the vlan header nft names (`vlan id`) starts in the link layer: 14 after `ether type 8021q`,
   * 4 bytes further after each match of another vlan header (`vlan type 8021q`: QinQ), as nft 1.0.6
   * stacks link-layer headers (its stacked_ll); undefined: 14
   */
  vlanAt?: number;
}

const META_TYPES: Record<string, ValueType> = {
  mark: 'mark',
  l4proto: 'l4proto',
  nfproto: 'nfproto',
  iifname: 'ifname',
  oifname: 'ifname',
  ibrname: 'ifname',
  obrname: 'ifname',
  iif: 'ifindex',
  oif: 'ifindex',
  iiftype: 'iftype',
  oiftype: 'iftype',
  length: 'uint_he',
  cpu: 'uint_he',
  skuid: 'uint_he',
  skgid: 'uint_he',
  nftrace: 'uint_he',
  random: 'uint_be',
  protocol: 'ethertype',
  pkttype: 'pkttype',
  priority: 'tchandle',
  iifgroup: 'devgroup',
  oifgroup: 'devgroup',
  rtclassid: 'realm',
  sdif: 'ifindex',
  sdifname: 'ifname',
  day: 'day',
  hour: 'hour',
  time: 'date',
  ipsec: 'boolean',
  cgroup: 'uint_he',
  // nft 1.0.6: META_TEMPLATE("iifkind", &ifname_type, IFNAMSIZ * BITS_PER_BYTE, BYTEORDER_HOST_ENDIAN)
  iifkind: 'ifname',
  oifkind: 'ifname',
};
/** Bytes a meta load of a value type writes, where not 4 (a key of unknown type: unknown). */
const META_LEN: Record<string, number> = { ifname: 16, l4proto: 1, nfproto: 1, pkttype: 1, ethertype: 2, iftype: 2, day: 1, boolean: 1, date: 8 };
/** meta keys nft prints without `meta` (`iifname "lo"`): nftables' meta_key_is_unqualified(). */
const UNQUALIFIED_META: ReadonlySet<string> = new Set(['iif', 'oif', 'iifname', 'oifname', 'iifgroup', 'oifgroup']);
const RAW_BASE: Record<string, string> = { link: 'll', network: 'nh', transport: 'th', inner: 'ih' };
/** The network header after a bridge or netdev `meta protocol 8021q`: one nft 1.0.6 cannot list a load of (it aborts). */
const NH_VLAN = 'vlan (meta protocol)';

/**
 * The headers a load from `base` may be in, given what the rule matched before it (most specific first),
 * each with where it starts in `base`, bytes.
 */
function protocolsAt(base: string, ctx: Ctx): Array<{ proto: string; at: number }> {
  const at = (proto: string): { proto: string; at: number } => ({ proto, at: proto === 'vlan' ? (ctx.vlanAt ?? 14) : (HEADERS[proto].at ?? 0) });
  // nft names a link-layer load only where it knows the header: the bridge family, after `meta iiftype ether`
  if (base === 'link') return (ctx.l2 === 'vlan' ? ['vlan', 'ether'] : ctx.l2 ? [ctx.l2] : []).map(at);
  if (base === 'network') return ctx.l3 && HEADERS[ctx.l3] ? [at(ctx.l3)] : [];
  if (base === 'transport') return (ctx.l4 ? [ctx.l4] : ctx.l4Other ? [] : ['th']).map(at);
  return [];
}

/** A header field as a {@link Field}: `ip saddr`, `vlan id`, with the protocol matches it implies. */
function namedField(proto: string, hf: HeaderField, extra: Partial<Field> = {}): Field {
  const h = HEADERS[proto];
  // nft keeps `ether type 8021q` before `vlan type ip` (the field that names the next protocol)
  const level =
    proto === 'vlan' && hf.name === 'type'
      ? {}
      : h.base === 'link'
        ? { l2: proto }
        : h.base === 'network'
          ? { l3: proto }
          : proto === 'th'
            ? {}
            : { l4: proto, ...(h.l3 && { l3: h.l3 }) };
  const dep = hf.dep !== undefined ? { dep: `${proto}:${hf.dep}` } : {};
  return { text: `${proto} ${hf.name}`, json: { payload: { protocol: proto, field: hf.name } }, type: hf.type, ...level, ...dep, ...extra };
}

/**
 * A link-layer load nft 1.0.6 names after a vlan match so that nft -f reads other bytes back (printed raw):
 * Ethernet's first 6 bytes (its daddr), which it reads as a vlan header (`vlan pcp 0 vlan dei 0 vlan id 17
 * ...`; `@ll,0,48` in a concatenation), and after QinQ's inner vlan header the outer one's, which it names as
 * the inner's (`vlan id`).
 */
function misnamedLink(base: string, offset: number, ctx: Ctx): boolean {
  return base === 'link' && ctx.l2 === 'vlan' && (offset < 6 || (offset >= 14 && offset < (ctx.vlanAt ?? 14)));
}

function fieldOf(src: Src, ctx: Ctx): Field | undefined {
  if (src.k === 'field') return src.field.bits ? undefined : src.field;
  if (src.k === 'meta') {
    const type = META_TYPES[src.key];
    // keys whose values we cannot print faithfully stay raw
    if (type === undefined) return undefined;
    return { text: UNQUALIFIED_META.has(src.key) ? src.key : `meta ${src.key}`, json: { meta: { key: src.key } }, type };
  }
  if (src.k === 'payload') {
    if (misnamedLink(src.base, src.offset, ctx)) return undefined;
    for (const { proto, at } of protocolsAt(src.base, ctx)) {
      const hf = headerField(proto, src.offset, src.len, undefined, ctx.icmpType, at);
      if (hf) return namedField(proto, hf);
      // The first bytes of an address: nft loads only what a prefix needs (`ip daddr 192.168.0.0/16`,
      // `ether daddr 01:00:5e:00:00:00/24`).
      const addr = HEADERS[proto].fields.find(
        (x) => (x.type === 'ipv4' || x.type === 'ipv6' || x.type === 'ether') && x.offset + at === src.offset && src.len < x.len,
      );
      if (addr) return namedField(proto, addr, { fullLen: addr.len });
    }
    // Where nft knows the protocol it names what it loads (`ip dscp`, `icmp type`): a load we
    // cannot name there prints raw, never as `@nh,...` / `@th,...`, which nft prints only without one.
    if (src.base === 'link' && ctx.l2 && src.offset < 14) return undefined;
    if (src.base === 'network' && ctx.l3) return undefined;
    if (src.base === 'transport' && (ctx.l4 || ctx.l4Other)) return undefined;
    const b = RAW_BASE[src.base] ?? src.base;
    // longer raw loads: a number past 2^48 would not be exact in JSON; they print raw
    if (src.len > 6) return undefined;
    return { text: `@${b},${src.offset * 8},${src.len * 8}`, json: { payload: { base: b, offset: src.offset * 8, len: src.len * 8 } }, type: 'rawint' };
  }
  return undefined;
}

/** Fields concatenated (`ip saddr . tcp dport`): the protocols they imply, the first of each layer's. */
function concatField(fields: readonly Field[]): Field {
  const first = (l: 'l2' | 'l3' | 'l4'): string | undefined => fields.find((x) => x[l] !== undefined)?.[l];
  return {
    text: fields.map((x) => x.text).join(' . '),
    json: { concat: fields.map((x) => x.json) },
    type: 'hex',
    // a vlan field anywhere needs the vlan header (`ether saddr . vlan id`: nft drops `ether type 8021q`)
    l2: fields.some((x) => x.l2 === 'vlan') ? 'vlan' : first('l2'),
    l3: first('l3'),
    l4: first('l4'),
  };
}

/** Number of leading one bits when the mask is ones then zeros, else undefined. */
function prefixBits(maskHex: string): number | undefined {
  const m = Buffer.from(maskHex, 'hex');
  let bits = 0;
  let zero = false;
  for (const byte of m) {
    for (let i = 7; i >= 0; i--) {
      const one = (byte >> i) & 1;
      if (one && zero) return undefined;
      if (one) bits++;
      else zero = true;
    }
  }
  return bits;
}

/** Number of leading one bits of a 32-bit mask that is ones then zeros (0 for 0), else undefined. */
function leadingOnes(mask: number): number | undefined {
  for (let bits = 0; bits <= 32; bits++) if (mask === (bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0)) return bits;
  return undefined;
}

/** `ip daddr 192.168.0.0/16` and its JSON `{ prefix: { addr, len } }`. */
function prefixMatch(f: Field, data: string, bits: number, op: string): Slot {
  const full = f.fullLen ?? (f.type === 'ipv4' ? 4 : f.type === 'ether' ? 6 : 16);
  const bytes = Buffer.alloc(full);
  Buffer.from(data, 'hex').copy(bytes, 0, 0, full);
  const addr = f.type === 'ether' ? valueText(bytes.toString('hex'), 'ether').text : addressText(bytes);
  // a payload field's JSON without what a partial load adds; a ct address (`ct original ip saddr`) as it is
  const json = 'payload' in f.json ? { payload: (f.json as { payload: unknown }).payload } : f.json;
  return {
    stmt: {
      text: `${f.text} ${op === 'neq' ? '!= ' : ''}${addr}/${bits}`,
      json: { match: { op: op === 'neq' ? '!=' : '==', left: json, right: { prefix: { addr, len: bits } } } },
    },
    needsL2: f.l2,
    needsL3: f.l3,
    needsL4: f.l4,
  };
}

const OP_TEXT: Record<string, string> = { eq: '', neq: '!= ', lt: '< ', lte: '<= ', gt: '> ', gte: '>= ' };
const OP_JSON: Record<string, string> = { eq: '==', neq: '!=', lt: '<', lte: '<=', gt: '>', gte: '>=' };

interface Slot {
  stmt?: Statement;
  /** a dependency match: `meta l4proto tcp` sets l4, `meta nfproto ipv4` or `ether type ip` sets l3, `meta iiftype ether` sets l2 */
  setsL2?: string;
  needsL2?: string;
  setsL3?: string;
  setsL4?: string;
  needsL3?: string;
  needsL4?: string;
  /** an icmp type match (`icmp:3`) and a field of that type after it: nft leaves the first out */
  setsDep?: string;
  needsDep?: string;
  /** raw load slot, dropped when its register is consumed */
  loadOf?: number;
  dropped?: boolean;
  /**
   * a match nft 1.0.6 may leave out of its listing in ways synplug does not
   * model (its dependency bookkeeping): `ct l3proto` before a field of the
   * packet (`ct l3proto ipv4 tcp dport 22` lists as `tcp dport 22`, in an ip6
   * table too), a link-layer match before a field of a higher layer (`ether
   * type ip tcp dport 22` in an ip table, `meta iiftype sit ip saddr ...` in a
   * bridge one). When such a field follows, it prints raw.
   */
  hiddenBy?: (later: Slot) => boolean;
  /** the later slot that left this dependency out (see {@link rebuiltOtherwise}) */
  droppedFor?: Slot;
  /** a dependency match nft leaves out before such a later one (beside `setsL3`...), see `rulePostprocess` */
  droppedBy?: (later: Slot) => boolean;
  /**
   * where nft 1.0.6 keeps a protocol match as a dependency (its `pdeps[]`
   * index: 1 `meta iiftype`, a stacked `ether type 8021q`; 2 the network
   * protocol's matches; 3 the transport protocol's): a later one there
   * replaces it, and it is then never left out
   */
  depBase?: number;
  /**
   * an equality match of one of nft's ct/meta protocol keys, which its
   * ct_meta_common_postprocess() treats as a dependency: `ll` for `meta
   * nfproto`, `meta protocol`, `ct l3proto`; `nh` for `meta l4proto`, `ct
   * protocol` (`by`: which expression; `value`: the protocol number)
   */
  metaDep?: { base: 'll' | 'nh'; by: 'meta' | 'ct'; value: number };
  /**
   * a link-layer dependency nft keeps as such (`meta iiftype`, a stacked
   * `ether type 8021q`): a later `meta nfproto`, `meta protocol` or `ct
   * l3proto` match leaves it out (ct_meta_common_postprocess); `raw`: one
   * nft -f would not add back there (`ether type 8021ad`), marked raw
   */
  linkDep?: boolean | 'raw';
  /** of a network-layer dependency: the family it names (2 ipv4, 10 ipv6, 0 another ether type); undefined for `ct l3proto` */
  l3Nfproto?: number;
}

/** Whether a slot's statement names a transport header field (`tcp dport`, `th dport`, `tcp option ...`), which nft 1.0.6 lets leave out a `ct protocol` before it. */
function namesTransport(x: Slot): boolean {
  return x.needsL4 !== undefined || (x.stmt !== undefined && JSON.stringify(x.stmt.json).includes('"protocol":"th"'));
}

/**
 * nft 1.0.6's meta_may_dependency_kill(): whether a later `meta l4proto` /
 * `ct protocol` match `x` leaves out a network-layer dependency before it
 * (`meta nfproto`, `meta protocol`, `ether type`, `vlan type`, `ct l3proto`).
 * `nfproto`: the family the dependency names (2 ipv4, 10 ipv6, 0 any other
 * ether type), undefined for one nft does not read (`ct l3proto`: always left
 * out). In ip and ip6 it is left out when it names the family; in inet,
 * bridge and netdev always before `ct protocol`, before `meta l4proto` only
 * for icmp / ipv6-icmp that does not contradict it; elsewhere (arp) always.
 */
function l4DepKills(x: Slot, nfproto: number | undefined, family: string): boolean {
  const m = x.metaDep;
  if (m?.base !== 'nh') return false;
  if (nfproto === undefined) return true;
  if (family === 'ip' || family === 'ip6') return nfproto === (family === 'ip' ? 2 : 10);
  if (family !== 'inet' && family !== 'netdev' && family !== 'bridge') return true;
  if (m.by === 'ct') return true;
  if (m.value !== 1 && m.value !== 58) return false;
  return !((nfproto === 2 && m.value === 58) || (nfproto === 10 && m.value === 1));
}

/** The left side of a slot's match (`{ payload: {...} }`, `{ meta: { key } }`), if it is one. */
function matchLeft(x: Slot): { payload?: { protocol?: string }; meta?: { key?: string } } | undefined {
  return (x.stmt?.json as { match?: { left?: { payload?: { protocol?: string }; meta?: { key?: string } } } } | undefined)?.match?.left;
}

/** A statement nft may list differently (see `Slot.hiddenBy`), or leaves out where nft -f puts back another (`why`), marked raw. */
function uncertain(s: Statement, why = 'nft may leave this match out'): Statement {
  return { text: `[ ${RAW_MARKER} ${s.text} (${why}) ]`, json: { raw: s.json } };
}

/** {@link REBUILT_OTHERWISE}'s why for a link-layer match. */
const LINK_REBUILT =
  'nft leaves this match out, and nft -f of its listing puts meta protocol, meta nfproto or nothing in its place, which reads no link-layer header: vlan-tagged frames and other devices differ';

/** {@link REBUILT_OTHERWISE}'s why for a network-layer match before `meta l4proto icmp` or `ipv6-icmp`. */
const L4_REBUILT =
  'nft leaves this match out, and nft -f of its listing puts another or none in its place: a packet of the other IP version with that protocol number, or a vlan-tagged frame, differs';

/**
 * Dependencies nft 1.0.6 leaves out of its listing where `nft -f` of that
 * listing puts another match in their place (the one its own dependency
 * logic adds for the field after them, or none), which matches other
 * packets: the dependency's field as nft names it, the families where,
 * why (stderr), and `keptBefore` the later slots that left it out for which
 * nft -f does put it back (in bridge: an arp field, and an icmp or icmpv6
 * type: `ether type ip meta l4proto icmp icmp type echo-request` lists as
 * `icmp type echo-request`, which reads back as it was, where `ether type
 * ip ip saddr 169.254.0.1` lists as `ip saddr 169.254.0.1`, which reads back
 * as `meta protocol ip ip saddr 169.254.0.1`).
 * Such a dependency prints raw with why, exit 11.
 * Left out as nft leaves them out, since nft -f rebuilds the same packets:
 * `ip protocol` in ip, rebuilt as `meta l4proto`, which the ip family takes
 * from that very field, fragments included (the kernel's
 * nft_set_pktinfo_ipv4(), without validation there); `meta protocol`, which
 * nft -f adds back as it is; `ether type 8021q` before a vlan field; `vlan
 * type` in bridge, netdev and inet, which nft -f adds back before a field of
 * the network header.
 */
const REBUILT_OTHERWISE: ReadonlyArray<{ field: string; families: readonly string[]; why: string; keptBefore?: (by: Slot) => boolean }> = [
  {
    field: 'ip6 nexthdr',
    families: ['ip6'],
    why: 'nft leaves this match out, and nft -f of its listing puts meta l4proto in its place, the protocol past any extension headers',
  },
  { field: 'ether type', families: ['bridge'], why: LINK_REBUILT, keptBefore: (by) => by.needsL3 === 'arp' || icmpTypeLeftOut(by) },
  { field: 'ether type', families: ['ip', 'ip6', 'inet', 'arp', 'netdev'], why: LINK_REBUILT },
  { field: 'vlan type', families: ['ip', 'ip6', 'arp'], why: LINK_REBUILT },
  // a link-layer match before `meta protocol`, `meta nfproto` or `ct l3proto` (`meta iiftype ether meta nfproto ipv4
  // ip saddr 169.254.0.1` lists as `ip saddr 169.254.0.1`), which nft -f never puts back there; a stacked `ether
  // type 8021q` there is an `ether type` row's
  { field: 'meta iiftype', families: ['ip', 'ip6', 'inet', 'arp', 'bridge', 'netdev'], why: LINK_REBUILT },
  // before a transport field, where nft -f of the listing writes `meta l4proto`
  {
    field: 'ct protocol',
    families: ['ip', 'ip6', 'inet', 'arp', 'bridge', 'netdev'],
    why: "nft leaves this match out, and nft -f of its listing puts meta l4proto in its place, the packet's protocol, not its connection's: untracked packets and icmp errors differ",
  },
  // before `meta l4proto` or `ct protocol` (`ct l3proto ipv4 tcp dport 80` lists as `tcp dport 80`), where nft -f of
  // the listing never adds it back
  {
    field: 'ct l3proto',
    families: ['ip', 'ip6', 'inet', 'arp', 'bridge', 'netdev'],
    why: "nft leaves this match out, and nft -f of its listing puts none in its place: the connection's family, not the packet's: untracked packets differ",
  },
  // before `meta l4proto icmp` (meta_may_dependency_kill()), which nft -f of the listing writes alone: it then also
  // matches a packet of the other IP version carrying that protocol number; before an icmp type nft -f puts back
  // `meta nfproto` in inet, `meta protocol` in netdev, but `ether type` in bridge
  { field: 'meta nfproto', families: ['inet'], why: L4_REBUILT, keptBefore: (by) => by.metaDep?.base !== 'nh' || icmpTypeLeftOut(by) },
  { field: 'meta protocol', families: ['inet'], why: L4_REBUILT },
  { field: 'meta protocol', families: ['bridge'], why: L4_REBUILT, keptBefore: (by) => by.metaDep?.base !== 'nh' },
  { field: 'meta protocol', families: ['netdev'], why: L4_REBUILT, keptBefore: (by) => by.metaDep?.base !== 'nh' || icmpTypeLeftOut(by) },
];

/** Whether `x` is a `meta l4proto icmp` or `ipv6-icmp` nft leaves out before an icmp or icmpv6 field. */
function icmpTypeLeftOut(x: Slot): boolean {
  return x.metaDep?.base === 'nh' && x.dropped === true && (x.setsL4 === 'icmp' || x.setsL4 === 'icmpv6');
}

/** {@link rebuiltOtherwise}'s why for `meta nfproto` or `meta protocol` nft -f of the listing rebuilds as `ether type` or `vlan type`. */
const ETHER_REBUILT =
  'nft leaves this match out, and nft -f of its listing puts ether type or vlan type in its place after a link-layer field, which reads that header: vlan-tagged frames differ';

/**
 * {@link REBUILT_OTHERWISE}'s why for a network or transport dependency slot
 * `s` in `family` that the later slot `by` left out, if nft -f rebuilds it
 * otherwise. `linkBefore`: the header of the last link-layer field the
 * listing keeps before `s` (`ether saddr ...`, `vlan id 5`), after which
 * nft -f names the network protocol a network field or an icmp type needs
 * by that header's type field in inet and netdev too: `ether type` after an
 * Ethernet field is then rebuilt as it was, `meta nfproto` and `meta
 * protocol` as `ether type` or `vlan type`.
 */
function rebuiltOtherwise(s: Slot, by: Slot, family: string, linkBefore: string | undefined): string | undefined {
  type Left = { payload?: { protocol?: string; field?: string }; meta?: { key?: string }; ct?: { key?: string; dir?: string } };
  const left = (s.stmt?.json as { match?: { left?: Left } } | undefined)?.match?.left;
  const field = left?.payload
    ? `${left.payload.protocol} ${left.payload.field}`
    : left?.meta
      ? `meta ${left.meta.key}`
      : left?.ct && !left.ct.dir
        ? `ct ${left.ct.key}`
        : undefined;
  // (a link-layer dependency only where a `meta protocol`, `meta nfproto` or `ct l3proto` left it out: see linkDep)
  if (!field || (s.depBase !== 2 && s.depBase !== 3 && !(s.linkDep && by.metaDep?.base === 'll'))) return undefined;
  if (linkBefore && s.depBase === 2 && (family === 'inet' || family === 'netdev') && (by.needsL3 !== undefined || icmpTypeLeftOut(by))) {
    if (field === 'ether type' && linkBefore === 'ether') return undefined;
    if (field === 'meta nfproto' || field === 'meta protocol') return ETHER_REBUILT;
  }
  const row = REBUILT_OTHERWISE.find((r) => r.field === field && r.families.includes(family));
  return row && !row.keptBefore?.(by) ? row.why : undefined;
}

/**
 * The link-layer protocol (`ether`, `vlan`) of a concatenation's field that
 * comes before its first network or transport field (`ether saddr . ip saddr
 * @s`), which nft -f evaluates first, as it would a match before the rule's.
 */
function concatLink(x: Slot): string | undefined {
  const parts = (matchLeft(x) as { concat?: Array<{ payload?: { protocol?: string } }> } | undefined)?.concat;
  const first = parts?.map((p) => p.payload?.protocol).find((p) => p !== undefined);
  return first === 'ether' || first === 'vlan' ? first : undefined;
}

/** Options of {@link ruleStatements}. */
export interface StatementOptions {
  /** the rule's family (`ip`, `ip6`, `inet`...): tells which network header `payload` reads */
  family: string;
  /** sets of the rule's table, to print anonymous sets inline */
  sets?: readonly NftSet[];
  /** device names by index (`iif "lo"`); an index without a name prints as its number, as nft does */
  ifnames?: Readonly<Record<number, string>>;
  /** cgroup paths by id (`socket cgroupv2 level 1 "user.slice"`); a match of an id without one prints raw (nft's number does not read back) */
  cgroups?: Readonly<Record<string, string>>;
}

export { RAW_MARKER };

function raw(e: Expr): Statement {
  return rawStatement(describeExpr(e), e as unknown as Record<string, unknown>);
}

/**
 * Turn a rule's expressions into nft statements.
 *
 * Registers are tracked as the kernel runs the rule: each load (`payload`,
 * `meta`, `ct`, `fib`, `immediate`, a map `lookup`, `bitwise`) binds its
 * destination register to what it loaded, and a `cmp`, `bitwise`, `lookup`
 * or statement reads the value its source register holds at that point.
 * An expression that writes a register without being understood unbinds it,
 * and one without a codec unbinds every register; a write unbinds every
 * register it overlaps (NFT_REG_1..4 alias NFT_REG32_00..15), so a
 * comparison is never attributed to an earlier load. Whatever is not understood prints raw,
 * `[ raw: ... ]` in text and `{ raw: <expression> }` in JSON; loads nothing
 * consumes print raw too.
 */
export function ruleStatements(exprs: readonly Expr[], options: StatementOptions): Statement[] {
  const regs = new Map<number, { src: Src; slots: number[]; len?: number }>();
  const slots: Slot[] = [];
  /**
   * The 32-bit words a register covers: NFT_REG_1..4 are 16 bytes each and
   * alias NFT_REG32_00..15 (8..23) four words at a time; a NFT_REG32_* value
   * runs on for `len` bytes (to the end of the file when unknown).
   */
  const span = (r: number, len?: number): [number, number] => {
    if (r >= C.NFT_REG_1 && r <= C.NFT_REG_4) {
      const w = C.NFT_REG32_00 + 4 * (r - C.NFT_REG_1);
      return [w, len !== undefined && len > 0 && len <= 16 ? w + Math.ceil(len / 4) - 1 : w + 3];
    }
    if (r >= C.NFT_REG32_00) return [r, len !== undefined && len > 0 ? Math.min(C.NFT_REG32_00 + 15, r + Math.ceil(len / 4) - 1) : C.NFT_REG32_00 + 15];
    return [r, r];
  };
  /** Forget every bound register a write to `w` overlaps. */
  const unbind = (w: number, len?: number): void => {
    const [a, b] = span(w, len);
    for (const [k, v] of [...regs]) {
      const [c, d] = span(k, v.len);
      if (a <= d && c <= b) regs.delete(k);
    }
  };
  const bind = (w: number, entry: { src: Src; slots: number[] }, len?: number): void => {
    unbind(w, len);
    regs.set(w, { ...entry, len });
  };
  const ctx: Ctx = {
    l2: options.family === 'bridge' ? 'ether' : undefined,
    l3: options.family === 'ip' || options.family === 'ip6' || options.family === 'arp' ? options.family : undefined,
  };
  const consume = (reg: number): Src | undefined => {
    const r = regs.get(reg);
    if (!r) return undefined;
    for (const i of r.slots) slots[i].dropped = true;
    return r.src;
  };
  /** A raw slot for an expression we cannot print; the registers it writes no longer hold what they held. */
  const rawSlot = (e: Expr, writes: number[] | 'all'): void => {
    slots.push({ stmt: raw(e) });
    if (writes === 'all') regs.clear();
    else for (const w of writes) unbind(w);
  };
  /**
   * A concatenation's part that is a bit field nft keeps unshifted (`ether saddr . vlan id`: the id masked,
   * 0x0fff). One it shifts (`vlan pcp`) nft 1.0.6 lists as `vlan id . vlan pcp >> 5 { 0 . 0 }`, which it
   * cannot read back: undefined, so the rule prints raw.
   */
  const unshiftedBits = (k: number): Field | undefined => {
    const r = regs.get(k);
    const b = r?.src.k === 'masked' && !/[^0]/.test(r.src.xor) ? bitfieldOf(r.src, ctx) : undefined;
    return b?.shift === 0 ? b.field : undefined;
  };
  /** `layout`: how a concatenated key's parts print, from the fields the rule loads (see `lookupKey`). */
  const setRight = (name: string, t: ValueType, layout?: Layout): { text: string; json: unknown; objType?: number } | undefined => {
    const set = options.sets?.find((x) => x.name === name);
    if (set?.flags.includes('anonymous') && set.elements) {
      // cgroup ids print as their paths (`socket cgroupv2 level 1 { "a", "b" }`); one without a path raw, as nft's number does not read back
      const els = setElementsPrinted(set, set.elements, layout ?? keyLayout(set, t), {
        ifname: (i) => options.ifnames?.[i],
        cgroup: (id) => options.cgroups?.[id],
      });
      if (els.some((v) => v.text.includes(`[ ${RAW_MARKER}`) || (t === 'cgroupv2' && !v.text.startsWith('"')))) return undefined;
      return { text: `{ ${els.map((v) => v.text).join(', ')} }`, json: { set: els.map((v) => v.json) }, objType: set.objType };
    }
    return { text: `@${name}`, json: `@${name}`, ...(set?.objType !== undefined && { objType: set.objType }) };
  };
  const pctx: PrintContext = {
    family: options.family,
    get l3() {
      return ctx.l3;
    },
    get l4() {
      return ctx.l4;
    },
    get l4Other() {
      return ctx.l4Other;
    },
    reg(n: number): RegisterValue | undefined {
      const r = regs.get(n);
      if (!r) return undefined;
      if (r.src.k === 'imm') return { k: 'imm', data: r.src.data };
      if (r.src.k === 'map') return { k: 'map', stmt: r.src.stmt, l2: r.src.l2, l3: r.src.l3, l4: r.src.l4, words: r.src.words };
      const f = valueExpression(r.src);
      return f ? { k: 'field', field: f } : undefined;
    },
    ifname: (i) => options.ifnames?.[i],
    cgroup: (id) => options.cgroups?.[id],
    set: (name, t) => (options.sets?.some((x) => x.name === name) ? setRight(name, t) : undefined),
    key: (sreg, name) =>
      lookupKey(
        sreg,
        options.sets?.find((x) => x.name === name),
      ),
    concat(sreg, len) {
      const fields: Field[] = [];
      const used: number[] = [];
      let w = span(sreg)[0];
      let left = len;
      while (left > 0) {
        const k = [...regs.keys()].find((x) => span(x)[0] === w);
        const r = k !== undefined ? regs.get(k) : undefined;
        const f =
          r && (r.src.k === 'field' || r.src.k === 'meta' || r.src.k === 'payload') ? fieldOf(r.src, ctx) : k !== undefined ? unshiftedBits(k) : undefined;
        if (!r || !f || f.fullLen !== undefined || f.type === 'rawint') return undefined;
        // a load of a length not known here: the hashed bytes are that field alone, as before any concatenation
        if (r.len === undefined) return fields.length === 0 ? { field: f, regs: [k!] } : undefined;
        // a part takes its bytes rounded up to a 4-byte word, but a single field is exactly its own
        const size = fields.length === 0 && left === r.len ? r.len : Math.ceil(r.len / 4) * 4;
        fields.push(f);
        used.push(k!);
        left -= size;
        w += Math.ceil(r.len / 4);
      }
      if (left !== 0 || !fields.length) return undefined;
      return { field: fields.length === 1 ? fields[0] : concatField(fields), regs: used };
    },
    setInfo: (name) => options.sets?.find((x) => x.name === name),
    mapValue(name, hex) {
      const set = options.sets?.find((x) => x.name === name);
      return set?.map !== undefined && set.dataType !== C.NFT_DATA_VERDICT
        ? layoutValue(hex, dataLayout(set), undefined, { ifname: this.ifname, cgroup: this.cgroup })
        : undefined;
    },
  };
  /**
   * The key a lookup reads from `sreg`: the field loaded there, or, for a set
   * of concatenated keys, the fields loaded into the registers that follow
   * (each part from a 4-byte boundary): `ip saddr . tcp dport`. A part of
   * nft's plain `integer` type (`ip ttl`, `meta length`) has no size of its
   * own: `layout` then gives each part's size and byte order from the field
   * loaded (nft prints `ip ttl . ip protocol { 64 . tcp }`).
   */
  const lookupKey = (
    sreg: number,
    set: NftSet | undefined,
  ): { field: Field; regs: number[]; layout?: Layout; hostInteger?: boolean; bits?: Layout } | undefined => {
    const parts = set?.keyType !== undefined ? datatypeLayout(set.keyType) : undefined;
    const fieldAt = (k: number): Field | undefined => {
      const r = regs.get(k);
      return r && r.src.k !== 'imm' && r.src.k !== 'masked' && r.src.k !== 'map' ? fieldOf(r.src, ctx) : undefined;
    };
    if (!parts || parts.length < 2) {
      const f = fieldAt(sreg);
      if (f) return { field: f, regs: [sreg] };
      // a bit field (`ip dscp { cs1, af41 }`): the set holds its values as the bitwise leaves them, not shifted
      const r = regs.get(sreg);
      const b = r?.src.k === 'masked' && !/[^0]/.test(r.src.xor) ? bitfieldOf(r.src, ctx) : undefined;
      return b && { field: b.field, regs: [sreg], bits: [{ type: b.field.type, len: r!.src.k === 'masked' ? r!.src.mask.length / 2 : 0, shift: b.shift }] };
    }
    const fields: Field[] = [];
    const used: number[] = [];
    const layout: Layout = [];
    let hostInteger = false;
    let w = span(sreg)[0];
    const partAt = (k: number): Field | undefined => fieldAt(k) ?? unshiftedBits(k);
    for (const p of parts) {
      const k = [...regs.keys()].find((x) => span(x)[0] === w);
      const f = k !== undefined ? partAt(k) : undefined;
      if (k === undefined || !f || f.fullLen !== undefined) return undefined;
      const len = regs.get(k)!.len;
      if (p.type === 'hex' && !(INTEGER_PARTS.has(f.type) && len !== undefined && len >= 1 && len <= 4)) return undefined;
      layout.push(p.type === 'hex' ? { type: f.type, len: len! } : p);
      // an integer that is not a header field (`meta length`) is host-order, turned big-endian for the lookup
      if (p.type === 'hex' && !('payload' in f.json)) hostInteger = true;
      fields.push(f);
      used.push(k);
      w += Math.ceil(layout[layout.length - 1].len / 4);
    }
    return {
      field: concatField(fields),
      regs: used,
      ...(parts.some((p) => p.type === 'hex') && { layout, hostInteger }),
    };
  };
  for (let at = 0; at < exprs.length; at++) {
    const e0 = exprs[at];
    if ((e0 as GenericExpr).generic === true) {
      rawSlot(e0, 'all');
      continue;
    }
    const e = e0 as Exclude<Expr, GenericExpr>;
    switch (e.name) {
      case 'payload':
      case 'meta': {
        const dreg = (e as { dreg?: number }).dreg;
        if (dreg !== undefined) {
          const src: Src = e.name === 'payload' ? { k: 'payload', base: e.base, offset: e.offset, len: e.len } : { k: 'meta', key: e.key };
          slots.push({ stmt: raw(e), loadOf: dreg });
          bind(
            dreg,
            { src, slots: [slots.length - 1] },
            e.name === 'payload' ? e.len : (META_LEN[META_TYPES[e.key] ?? ''] ?? (META_TYPES[e.key] ? 4 : undefined)),
          );
          continue;
        }
        if (e.name === 'meta' && e.sreg !== undefined) {
          const r = regs.get(e.sreg);
          const key = { meta: { key: e.key } };
          const text = UNQUALIFIED_META.has(e.key) ? e.key : `meta ${e.key}`;
          if (r?.src.k === 'imm' && META_TYPES[e.key] !== undefined) {
            consume(e.sreg);
            const v = valueText(r.src.data, META_TYPES[e.key], pctx.ifname);
            slots.push({ stmt: { text: `${text} set ${v.text}`, json: { mangle: { key, value: v.json } } } });
            continue;
          }
          if (r?.src.k === 'map') {
            consume(e.sreg);
            slots.push({
              stmt: { text: `${text} set ${r.src.stmt.text}`, json: { mangle: { key, value: r.src.stmt.json } } },
              needsL2: r.src.l2,
              needsL3: r.src.l3,
              needsL4: r.src.l4,
            });
            continue;
          }
          const f = r && r.src.k !== 'imm' ? valueExpression(r.src) : undefined;
          if (f && f.type !== 'hex' && f.type !== 'rawint') {
            consume(e.sreg);
            slots.push({ stmt: { text: `${text} set ${f.text}`, json: { mangle: { key, value: f.json } } }, needsL2: f.l2, needsL3: f.l3, needsL4: f.l4 });
            continue;
          }
        }
        // a header field set to a constant: `ip ttl set 64`, `tcp dport set 8080`
        if (e.name === 'payload' && e.sreg !== undefined) {
          const r = regs.get(e.sreg);
          // a field narrower than the bytes nft rewrites (checksums are updated 2 bytes at a time):
          // load, keep the other bits, set the field's (`ip ttl set 64`, `ip dscp set cs1`)
          const m = r?.src.k === 'masked' ? r.src : undefined;
          const w =
            m?.src.k === 'payload' && m.src.base === e.base && m.src.offset === e.offset && m.src.len === e.len
              ? maskedWrite(e.base, e.offset, e.len, m.mask, m.xor)
              : undefined;
          if (w) {
            consume(e.sreg);
            slots.push(w);
            continue;
          }
          // a header field set to a map's value: `ip daddr set ip saddr map @m`
          const target = fieldOf({ k: 'payload', base: e.base, offset: e.offset, len: e.len }, ctx);
          if (r?.src.k === 'map' && target && target.fullLen === undefined && target.type !== 'rawint') {
            consume(e.sreg);
            slots.push({
              stmt: { text: `${target.text} set ${r.src.stmt.text}`, json: { mangle: { key: target.json, value: r.src.stmt.json } } },
              needsL2: target.l2 ?? r.src.l2,
              needsL3: target.l3 ?? r.src.l3,
              needsL4: target.l4 ?? r.src.l4,
            });
            continue;
          }
          const f = r?.src.k === 'imm' ? target : undefined;
          const v = f && r?.src.k === 'imm' && f.fullLen === undefined && f.type !== 'rawint' ? valueText(r.src.data, f.type, pctx.ifname) : undefined;
          if (f && v && !v.text.startsWith('0x')) {
            consume(e.sreg);
            slots.push({
              stmt: { text: `${f.text} set ${v.text}`, json: { mangle: { key: f.json, value: v.json } } },
              needsL2: f.l2,
              needsL3: f.l3,
              needsL4: f.l4,
            });
            continue;
          }
        }
        // a meta set we cannot print, or a payload write: the packet changes, registers do not
        rawSlot(e, []);
        continue;
      }
      case 'immediate': {
        if (e.verdict) {
          const v = e.verdict;
          const chainTarget = v.chain !== undefined ? ` ${v.chain}` : '';
          slots.push({ stmt: { text: `${v.code}${chainTarget}`, json: v.chain !== undefined ? { [v.code]: { target: v.chain } } : { [v.code]: null } } });
        } else if (e.data !== undefined) {
          slots.push({ stmt: raw(e), loadOf: e.dreg });
          bind(e.dreg, { src: { k: 'imm', data: e.data }, slots: [slots.length - 1] }, e.data.length / 2);
        } else rawSlot(e, [e.dreg]);
        continue;
      }
      case 'bitwise': {
        const r = regs.get(e.sreg);
        if (
          r &&
          (e.op === undefined || e.op === 'mask_xor') &&
          e.mask !== undefined &&
          e.xor !== undefined &&
          r.src.k !== 'masked' &&
          r.src.k !== 'imm' &&
          r.src.k !== 'map'
        ) {
          slots.push({ stmt: raw(e), loadOf: e.dreg });
          bind(e.dreg, { src: { k: 'masked', src: r.src, mask: e.mask, xor: e.xor }, slots: [...r.slots, slots.length - 1] }, e.len);
        } else if (r && (e.op === 'lshift' || e.op === 'rshift') && e.data?.length === 8) {
          // the shift: a u32 in host order
          const n = endianness() === 'LE' ? Buffer.from(e.data, 'hex').readUInt32LE(0) : Buffer.from(e.data, 'hex').readUInt32BE(0);
          // a bit field shifted down to its value, as nft looks it up in a typeof set (`ip dscp @s`): the field itself
          const b = r.src.k === 'masked' && e.op === 'rshift' && !/[^0]/.test(r.src.xor) ? bitfieldOf(r.src, ctx) : undefined;
          const src: Src | undefined =
            b && b.shift === n && n > 0
              ? { k: 'bitvalue', field: b.field }
              : r.src.k === 'field' || r.src.k === 'meta'
                ? { k: 'shifted', src: r.src, op: e.op === 'lshift' ? '<<' : '>>', n }
                : undefined;
          if (src) {
            slots.push({ stmt: raw(e), loadOf: e.dreg });
            bind(e.dreg, { src, slots: [...r.slots, slots.length - 1] }, e.len);
          } else rawSlot(e, [e.dreg]);
        } else rawSlot(e, [e.dreg]);
        continue;
      }
      case 'cmp': {
        const r = regs.get(e.sreg);
        // nft writes an inclusive range as `cmp gte` then `cmp lte` on the same register: `tcp dport 1000-2000`
        const next = exprs[at + 1] as Expr | undefined;
        if (r && e.op === 'gte' && next?.name === 'cmp' && (next as { op?: string }).op === 'lte' && (next as { sreg?: number }).sreg === e.sreg) {
          const st = rangeStatement(r.src, e.data, (next as { data: string }).data);
          if (st) {
            consume(e.sreg);
            slots.push(st);
            at++;
            continue;
          }
        }
        const st = r ? matchStatement(r.src, e.op, e.data, ctx) : undefined;
        // nft merges matches of bit fields that share their bytes into one load and compare: `ip version 4 ip hdrlength 5`
        // and matches of neighbouring whole fields: `tcp sport 1 tcp dport 2`, `icmp id 5 icmp sequence 1`
        const split = !st && r?.src.k === 'payload' && e.op === 'eq' ? (bitfieldsMatch(r.src, e.data) ?? fieldsMatch(r.src, e.data)) : undefined;
        if (!r || (!st && !split)) {
          rawSlot(e, []);
          continue;
        }
        consume(e.sreg);
        slots.push(...(st ? [st] : split!));
        continue;
      }
      case 'lookup': {
        const set = options.sets?.find((s) => s.name === e.set);
        const masked = lookupKey(e.sreg, set) ? undefined : maskedKey(e.sreg);
        // a bit field shifted to its value: nft names it in a set lookup only (`ip dscp @s`); as a map's
        // or a concatenation's key it prints `(@nh,8,8 & 0xfc) >> 2`, `ip6 dscp >> 6 . meta mark`: raw
        const bitValue = regs.get(e.sreg)?.src;
        const key =
          bitValue?.k === 'bitvalue'
            ? e.dreg === undefined && set?.keyType !== undefined && datatypeLayout(set.keyType)?.length === 1
              ? { field: bitValue.field, regs: [e.sreg] }
              : undefined
            : (masked ?? lookupKey(e.sreg, set));
        const f = key?.field;
        // a map lookup needs the map (to print its values); a verdict map writes the verdict register
        const isMap = e.dreg !== undefined;
        // an anonymous set with an element nft cannot read back: raw; so are integer parts nft 1.0.6 itself
        // lists wrongly: in a map giving a value (`{ 0 . 16384 : ... }` for `64 . 22`), or host-order ones
        // in an interval set (`meta length . ip saddr { 0 . 0.0.0.100-0.0.0.200 }`); a named map's `@m` it lists right
        const anonymous = set?.flags.includes('anonymous') === true;
        const garbled =
          key?.layout !== undefined && ((isMap && e.dreg !== C.NFT_REG_VERDICT && anonymous) || (set?.flags.includes('interval') && key.hostInteger));
        const right = f && !garbled ? setRight(e.set, f.type, key?.layout ?? key?.bits) : undefined;
        // a set of labels: nft 1.0.6 lists such a rule without its match (and not the set): raw
        if (!key || !f || !right || f.type === 'ct_label' || (isMap && (!set || set.map === undefined || e.invert))) {
          rawSlot(e, e.dreg !== undefined ? [e.dreg] : []);
          continue;
        }
        const loadSlots = key.regs.flatMap((k) => regs.get(k)?.slots ?? []);
        for (const k of key.regs) consume(k);
        if (!isMap) {
          slots.push({
            // a masked key nft writes with its operator: `ip daddr & 255.255.255.0 == { ... }`
            stmt: {
              text: `${f.text} ${e.invert ? '!= ' : masked ? '== ' : ''}${right.text}`,
              json: { match: { op: e.invert ? '!=' : '==', left: f.json, right: right.json } },
            },
            needsL2: rangeL2(f),
            needsL3: f.l3,
            needsL4: f.l4,
          });
        } else if (e.dreg === C.NFT_REG_VERDICT) {
          slots.push({
            stmt: { text: `${f.text} vmap ${right.text}`, json: { vmap: { key: f.json, data: right.json } } },
            needsL2: rangeL2(f),
            needsL3: f.l3,
            needsL4: f.l4,
          });
        } else {
          const stmt = { text: `${f.text} map ${right.text}`, json: { map: { key: f.json, data: right.json } } };
          slots.push({ stmt: raw(e), loadOf: e.dreg });
          for (const i of loadSlots) slots[i].dropped = false;
          bind(e.dreg!, {
            src: { k: 'map', stmt, l2: f.l2, l3: f.l3, l4: f.l4, words: set && mapDataWords(set, e.dreg!) },
            slots: [...loadSlots, slots.length - 1],
          });
        }
        continue;
      }
      case 'counter':
        // a count past 2^53 would print rounded: raw
        if (!exact(e.packets, e.bytes)) slots.push({ stmt: raw(e) });
        else slots.push({ stmt: { text: `counter packets ${e.packets} bytes ${e.bytes}`, json: { counter: { packets: e.packets, bytes: e.bytes } } } });
        continue;
      default: {
        // a range of a bit field (`ip dscp != 0x08-0x10`); other ranges, the range module prints
        if (e.name === 'range') {
          const r = regs.get(e.sreg);
          const st = r?.src.k === 'masked' ? bitfieldRange(r.src, e.op, e.from, e.to) : undefined;
          if (st) {
            consume(e.sreg);
            slots.push(st);
            continue;
          }
        }
        // the expression modules' own printing: loads nft names (`ct state`), statements (`limit ...`)
        const codec = exprCodec(e.name);
        const ld = codec?.field?.(e, pctx);
        if (ld) {
          const before = (ld.from === undefined ? [] : Array.isArray(ld.from) ? ld.from : [ld.from]).flatMap((k) => regs.get(k)?.slots ?? []);
          slots.push({ stmt: raw(e), loadOf: ld.dreg });
          bind(ld.dreg, { src: { k: 'field', field: ld.field }, slots: [...before, slots.length - 1] }, ld.len ?? FIXED_LEN[ld.field.type]);
          continue;
        }
        const p = codec?.statement?.(e, pctx);
        if (p) {
          for (const reg of p.consumes ?? []) consume(reg);
          slots.push({ stmt: p.stmt, needsL2: p.needsL2, needsL3: p.needsL3, needsL4: p.needsL4 });
          continue;
        }
        rawSlot(e, codec ? (codec.writes?.(e) ?? []) : 'all');
      }
    }
  }
  // Hide dependencies nft hides: a protocol match followed by a match that implies it.
  const kills = (s: Slot, x: Slot): boolean =>
    (s.setsL4 !== undefined && x.needsL4 === s.setsL4) ||
    (s.setsL3 !== undefined && x.needsL3 === s.setsL3) ||
    (s.setsL2 !== undefined && x.needsL2 === s.setsL2) ||
    (s.setsDep !== undefined && x.needsDep === s.setsDep) ||
    s.droppedBy?.(x) === true;
  slots.forEach((s, i) => {
    if (s.dropped) return;
    let l3: Slot | undefined;
    for (const x of slots.slice(i + 1)) {
      if (x.dropped) continue;
      if (kills(s, x)) {
        s.dropped = true;
        s.droppedFor = x;
        break;
      }
      if (s.linkDep && s.stmt && x.metaDep?.base === 'll') {
        // nft's meta_may_dependency_kill against the network-layer dependency before `x`: in ip and ip6 one
        // naming another family keeps it (whether that one is still there synplug does not follow: raw)
        const fam = options.family === 'ip' ? 2 : options.family === 'ip6' ? 10 : undefined;
        if (s.linkDep === 'raw' || (fam !== undefined && l3?.l3Nfproto !== undefined && l3.l3Nfproto !== fam)) s.stmt = uncertain(s.stmt);
        else {
          s.dropped = true;
          s.droppedFor = x;
        }
        break;
      }
      if (x.depBase === 2) l3 = x;
      // nft keeps one dependency per layer (a later one replaces it), and none past a statement
      // that is not a match: it keeps `meta l4proto tcp counter tcp dport 22` as it is
      if ((s.depBase !== undefined && x.depBase === s.depBase) || (x.stmt && (typeof x.stmt.json === 'string' || !('match' in x.stmt.json)))) break;
    }
  });
  // a dependency nft leaves out where nft -f would put back another (REBUILT_OTHERWISE): raw, saying why
  for (const [i, s] of slots.entries()) {
    const linkBefore = slots
      .slice(0, i)
      .map((x) => (!x.dropped && x.stmt !== undefined ? matchLeft(x)?.payload?.protocol : undefined))
      .filter((p) => p === 'ether' || p === 'vlan')
      .at(-1);
    const why = s.droppedFor && s.stmt ? rebuiltOtherwise(s, s.droppedFor, options.family, linkBefore ?? concatLink(s.droppedFor)) : undefined;
    if (why) {
      s.stmt = uncertain(s.stmt!, why);
      s.dropped = false;
      s.hiddenBy = undefined;
    }
  }
  slots.forEach((s, i) => {
    if (!s.dropped && s.stmt && s.hiddenBy && slots.slice(i + 1).some((x) => !x.dropped && s.hiddenBy!(x))) s.stmt = uncertain(s.stmt);
  });
  return slots.filter((s) => !s.dropped && s.stmt).map((s) => s.stmt!);

  /**
   * `ip ttl set 64`: a write of `len` bytes at `offset` that keeps the bits
   * of `mask` and sets the others to `xor`'s, when those others are exactly
   * one header field nft names.
   */
  function maskedWrite(base: string, offset: number, len: number, mask: string, xor: string): Slot | undefined {
    if (mask.length !== len * 2 || xor.length !== len * 2) return undefined;
    const keep = BigInt(`0x${mask}`);
    const set = ~keep & ((1n << BigInt(len * 8)) - 1n);
    const x = BigInt(`0x${xor}`);
    if ((x & keep) !== 0n) return undefined;
    for (const { proto, at } of protocolsAt(base, ctx)) {
      for (const hf of HEADERS[proto].fields) {
        const start = hf.offset + at;
        if (start < offset || start + hf.len > offset + len) continue;
        const below = BigInt((offset + len - start - hf.len) * 8);
        const fmask = (hf.mask !== undefined ? BigInt(`0x${hf.mask}`) : (1n << BigInt(hf.len * 8)) - 1n) << below;
        if (fmask !== set) continue;
        const n = (x & fmask) >> (below + BigInt(hf.shift ?? 0));
        const bytes = hf.mask !== undefined ? (hf.type === 'uint_be' ? 4 : 1) : hf.len;
        const v = valueText(n.toString(16).padStart(bytes * 2, '0'), hf.type, pctx.ifname);
        if (v.text.startsWith('0x') && hf.type !== 'mark') return undefined;
        const f = namedField(proto, hf);
        return { stmt: { text: `${f.text} set ${v.text}`, json: { mangle: { key: f.json, value: v.json } } }, needsL2: f.l2, needsL3: f.l3, needsL4: f.l4 };
      }
    }
    return undefined;
  }

  /**
   * An unmasked load compared whole, whose bytes are exactly the bit fields
   * of one header (`ip version`, `ip hdrlength` in byte 0): one match per
   * field, in the header's order; undefined otherwise.
   */
  function bitfieldsMatch(src: Extract<Src, { k: 'payload' }>, data: string): Slot[] | undefined {
    if (src.len > 4 || data.length !== src.len * 2) return undefined;
    const v = Number.parseInt(data, 16);
    for (const { proto, at } of protocolsAt(src.base, ctx)) {
      const fields = HEADERS[proto].fields.filter((x) => x.mask !== undefined && x.offset + at === src.offset && x.len === src.len);
      const masks = fields.map((x) => Number.parseInt(x.mask!, 16));
      // the fields must not overlap and must cover every bit
      if (!fields.length || masks.reduce((a, m) => a + m, 0) !== 2 ** (src.len * 8) - 1 || masks.reduce((a, m) => a | m, 0) !== 2 ** (src.len * 8) - 1)
        continue;
      const out = fields.map((x, i) =>
        bitfieldMatch(
          { k: 'masked', src, mask: x.mask!, xor: '0'.repeat(x.mask!.length) },
          'eq',
          ((v & masks[i]) >>> 0).toString(16).padStart(data.length, '0'),
          ctx,
        ),
      );
      return out.every((x) => x) ? (out as Slot[]) : undefined;
    }
    return undefined;
  }

  /**
   * One load compared equal that nft made of matches of neighbouring whole
   * header fields (its payload merging): one match per field, in header
   * order, when the fields nft names there (the icmp type's own, see
   * `headerField`) cover the loaded bytes exactly; undefined otherwise.
   */
  function fieldsMatch(src: Extract<Src, { k: 'payload' }>, data: string): Slot[] | undefined {
    if (data.length !== src.len * 2) return undefined;
    for (const { proto, at: start } of protocolsAt(src.base, ctx)) {
      const out: Slot[] = [];
      for (let at = src.offset; at < src.offset + src.len; ) {
        const fits = HEADERS[proto].fields.filter(
          (x) => x.mask === undefined && x.offset + start === at && at + x.len <= src.offset + src.len && (x.dep === undefined || x.dep === ctx.icmpType),
        );
        const hf = fits.find((x) => x.dep !== undefined) ?? fits[0];
        const part =
          hf &&
          matchStatement(
            { k: 'payload', base: src.base, offset: at, len: hf.len },
            'eq',
            data.slice((at - src.offset) * 2, (at - src.offset + hf.len) * 2),
            ctx,
          );
        if (!part) break;
        out.push(part);
        at += hf.len;
        if (at === src.offset + src.len && out.length > 1) return out;
      }
    }
    return undefined;
  }

  /**
   * A mark changed bitwise, as a value `meta mark set` / `ct mark set`
   * takes: `meta mark | 0x00000010` (mask ~x, xor x), `ct mark & 0x0000ff00`
   * (xor 0), `meta mark ^ 0x1` (mask all ones); undefined for other forms.
   */
  function markExpression(m: Extract<Src, { k: 'masked' }>): Field | undefined {
    const f = m.src.k === 'shifted' ? shiftExpression(m.src) : m.src.k === 'imm' || m.src.k === 'masked' || m.src.k === 'map' ? undefined : fieldOf(m.src, ctx);
    if (!f || (f.type !== 'mark' && f.type !== 'mark_be') || m.mask.length !== 8 || m.xor.length !== 8) return undefined;
    const mask = Buffer.from(m.mask, 'hex');
    const xor = Buffer.from(m.xor, 'hex');
    const notMask = Buffer.from(mask.map((b) => ~b & 0xff));
    const [op, operand] = xor.equals(notMask) ? ['|', m.xor] : /^0+$/.test(m.xor) ? ['&', m.mask] : /^f+$/i.test(m.mask) ? ['^', m.xor] : [];
    // bits kept and others set, none of them kept: nft 1.0.6 writes `ct mark & 0xffff0001 | 0x00000001`
    // (the mask with the set bits in it: the same value)
    if (!op && mask.every((b, i) => (b & xor[i]) === 0)) {
      const kept = valueText(Buffer.from(mask.map((b, i) => b | xor[i])).toString('hex'), f.type);
      const set = valueText(m.xor, f.type);
      return { ...f, text: `${f.text} & ${kept.text} | ${set.text}`, json: { '|': [{ '&': [f.json, kept.json] }, set.json] } };
    }
    if (!op || operand === undefined) return undefined;
    const v = valueText(operand, f.type);
    return { ...f, text: `${f.text} ${op} ${v.text}`, json: { [op]: [f.json, v.json] } };
  }

  /**
   * The key of a lookup that is an address or a mark under a mask (`ip daddr &
   * 255.255.255.0`, `ct mark & 0x0000ff00`), as nft prints it before a set,
   * map or verdict map; undefined for other loads.
   */
  function maskedKey(sreg: number): { field: Field; regs: number[]; layout?: Layout; hostInteger?: boolean; bits?: Layout } | undefined {
    const r = regs.get(sreg);
    if (r?.src.k !== 'masked' || /[^0]/.test(r.src.xor) || bitfieldOf(r.src, ctx)) return undefined;
    const f = r.src.src.k === 'field' || r.src.src.k === 'meta' || r.src.src.k === 'payload' ? fieldOf(r.src.src, ctx) : undefined;
    if (!f || f.fullLen !== undefined || !['ipv4', 'ipv6', 'mark', 'mark_be'].includes(f.type)) return undefined;
    const mask = valueText(r.src.mask, f.type);
    if (mask.text.startsWith('0x') && f.type !== 'mark' && f.type !== 'mark_be') return undefined;
    return { field: { ...f, text: `${f.text} & ${mask.text}`, json: { '&': [f.json, mask.json] } }, regs: [sreg] };
  }

  /** A mark shifted, as a value `meta mark set` / `ct mark set` takes: `ct mark >> 8`; undefined for other fields. */
  function shiftExpression(m: Extract<Src, { k: 'shifted' }>): Field | undefined {
    const f = fieldOf(m.src, ctx);
    if (!f || (f.type !== 'mark' && f.type !== 'mark_be')) return undefined;
    return { ...f, text: `${f.text} ${m.op} ${m.n}`, json: { [m.op]: [f.json, m.n] } };
  }

  /** What a register holds, as a value a statement takes: a field, a mark changed bitwise or shifted. */
  function valueExpression(src: Src): Field | undefined {
    return src.k === 'masked' ? markExpression(src) : src.k === 'shifted' ? shiftExpression(src) : fieldOf(src, ctx);
  }

  /**
   * `ip dscp 0x08-0x10`, `ip hdrlength != 5-7`: a range of one of nft's bit fields,
   * its ends as the field's values (a symbolic type's as numbers, as nft prints them).
   */
  function bitfieldRange(src: Extract<Src, { k: 'masked' }>, op: string, from: string, to: string): Slot | undefined {
    const b = /[^0]/.test(src.xor) || (op !== 'eq' && op !== 'neq') ? undefined : bitfieldOf(src, ctx);
    if (!b) return undefined;
    const f = b.field;
    const mask = Number.parseInt(src.mask, 16);
    const end = (hex: string): { text: string; json: unknown } | undefined => {
      const d = Buffer.from(hex, 'hex');
      if (d.length !== src.mask.length / 2 || d.length > 4) return undefined;
      const v = d.readUIntBE(0, d.length);
      return (v & ~mask) === 0 ? rangeEndText(bitValue((v & mask) >>> b.shift, f.type), f.type) : undefined;
    };
    const lo = end(from);
    const hi = end(to);
    if (!lo || !hi) return undefined;
    return {
      stmt: {
        text: `${f.text} ${op === 'neq' ? '!= ' : ''}${lo.text}-${hi.text}`,
        json: { match: { op: op === 'neq' ? '!=' : '==', left: f.json, right: { range: [lo.json, hi.json] } } },
      },
      needsL2: rangeL2(f),
      needsL3: f.l3,
      needsL4: f.l4,
    };
  }

  /** `f lo-hi` from a `cmp gte` and a `cmp lte` on an unmasked field, or on a bit field. */
  function rangeStatement(src: Src, from: string, to: string): Slot | undefined {
    if (src.k === 'masked') return bitfieldRange(src, 'eq', from, to);
    if (src.k === 'imm' || src.k === 'map' || src.k === 'shifted') return undefined;
    const f = fieldOf(src, ctx);
    if (!f || f.fullLen !== undefined || f.type === 'hex') return undefined;
    const lo = rangeEndText(from, f.type, pctx.ifname);
    const hi = rangeEndText(to, f.type, pctx.ifname);
    if (!lo || !hi) return undefined;
    return {
      stmt: { text: `${f.text} ${lo.text}-${hi.text}`, json: { match: { op: '==', left: f.json, right: { range: [lo.json, hi.json] } } } },
      needsL2: rangeL2(f),
      needsL3: f.l3,
      needsL4: f.l4,
    };
  }

  /**
   * The bit field nft names that a masked load is (`ip dscp`, `frag more-fragments`): a header's,
   * or one of a load an expression module names bit fields of; its field, and the shift of its value.
   */
  function bitfieldOf(src: Extract<Src, { k: 'masked' }>, c: Ctx): { field: Field; shift: number } | undefined {
    const p = src.src;
    if (p.k === 'payload') {
      if (misnamedLink(p.base, p.offset, c)) return undefined;
      for (const { proto, at } of protocolsAt(p.base, c)) {
        const hf = headerField(proto, p.offset, p.len, src.mask, undefined, at);
        if (hf) return { field: namedField(proto, hf), shift: hf.shift ?? 0 };
      }
      return undefined;
    }
    return p.k === 'field' ? p.field.bits?.find((x) => x.mask === src.mask) : undefined;
  }

  /**
   * `ip dscp cs1`, `vlan id 10`, `tcp doff 5`: a masked header load that is
   * one of nft's bit fields, compared whole (== or !=). Undefined when the load
   * is not such a field (the caller goes on); null when it is one but the
   * comparison cannot be printed faithfully (it then prints raw).
   */
  function bitfieldMatch(src: Extract<Src, { k: 'masked' }>, op: string, data: string, c: Ctx): Slot | null | undefined {
    const b = bitfieldOf(src, c);
    if (!b) return undefined;
    const f = b.field;
    const d = Buffer.from(data, 'hex');
    // == and != and, as nft 1.0.6 prints them, the order comparisons (`ip dscp > cs1`, `ip hdrlength > 5`)
    if (/[^0]/.test(src.xor) || OP_TEXT[op] === undefined || d.length !== src.mask.length / 2 || d.length > 4) return null;
    const v = d.readUIntBE(0, d.length);
    const mask = Number.parseInt(src.mask, 16);
    if ((v & ~mask) !== 0) return null;
    const val = valueText(bitValue((v & mask) >>> b.shift, f.type), f.type);
    return {
      stmt: { text: `${f.text} ${OP_TEXT[op]}${val.text}`, json: { match: { op: OP_JSON[op], left: f.json, right: val.json } } },
      needsL2: f.l2,
      needsL3: f.l3,
      needsL4: f.l4,
    };
  }

  function matchStatement(src: Src, op: string, data: string, c: Ctx): Slot | undefined {
    const opText = OP_TEXT[op];
    const opJson = OP_JSON[op];
    if (opText === undefined) return undefined;
    if (src.k === 'masked') {
      const bf = bitfieldMatch(src, op, data, c);
      if (bf !== undefined) return bf ?? undefined;
      const f = src.src.k === 'imm' || src.src.k === 'masked' || src.src.k === 'map' ? undefined : fieldOf(src.src, c);
      if (!f || /[^0]/.test(src.xor)) return undefined;
      // `ct label 5`: whether the label's bit is set (the mask has that one bit); JSON op `in`
      if (f.type === 'ct_label') {
        const bit = valueText(src.mask, 'ct_label');
        if (op !== 'neq' || /[^0]/.test(data) || typeof bit.json !== 'number') return undefined;
        return { stmt: { text: `${f.text} ${bit.text}`, json: { match: { op: 'in', left: f.json, right: bit.json } } } };
      }
      // flags under a mask of every bit: nft drops the mask (`tcp flags == 0xff`, `tcp flags == syn`)
      if (FLAG_TYPES.has(f.type) && /^f+$/i.test(src.mask)) return matchStatement(src.src, op, data, c);
      const bits = prefixBits(src.mask);
      if ((f.type === 'ipv4' || f.type === 'ipv6') && bits !== undefined && (op === 'eq' || op === 'neq')) {
        return prefixMatch(f, data, bits, op);
      }
      const mask = valueText(src.mask, f.type, pctx.ifname);
      const val = valueText(data, f.type, pctx.ifname);
      const isZero = !/[^0]/.test(data);
      // a mark (nft's DTYPE_F_PREFIX type) under a mask of leading ones: nft's prefix, `meta mark 0x00010000/16`
      // (the value as the kernel has it, bits past the prefix included), and the value alone for a full mask
      const markBits = (f.type === 'mark' || f.type === 'mark_be') && typeof mask.json === 'number' ? leadingOnes(mask.json) : undefined;
      if (markBits !== undefined && (op === 'eq' || op === 'neq')) {
        const neg = op === 'neq' ? '!= ' : '';
        const full = markBits === 32;
        return {
          stmt: {
            text: `${f.text} ${neg}${val.text}${full ? '' : `/${markBits}`}`,
            json: { match: { op: opJson, left: f.json, right: full ? val.json : { prefix: { addr: val.json, len: markBits } } } },
          },
          needsL2: f.l2,
          needsL3: f.l3,
          needsL4: f.l4,
        };
      }
      // `ct state established,related`, `tcp flags syn`: any of the mask's flags set (`tcp flags 0x0`:
      // none, never true); `tcp flags ! syn,ack`: none of them set
      if (FLAG_TYPES.has(f.type) && (op === 'neq' || op === 'eq') && isZero && flagValueNames(src.mask, f.type) !== undefined) {
        if (op === 'eq' && !flagValueNames(src.mask, f.type)?.length) return undefined;
        return {
          stmt: {
            text: `${f.text} ${op === 'eq' ? '! ' : ''}${mask.text}`,
            json: { match: { op: op === 'eq' ? '!' : 'in', left: f.json, right: mask.json } },
          },
          needsL2: f.l2,
          needsL3: f.l3,
          needsL4: f.l4,
        };
      }
      // nft writes `value / mask` for a mask of several flags, `& mask == value` for one
      const multi = (flagValueNames(src.mask, f.type)?.length ?? 0) > 1;
      if (f.type === 'tcpflags' && op === 'eq' && !isZero && multi) {
        return {
          stmt: {
            text: `${f.text} ${val.text} / ${mask.text}`,
            json: {
              match: {
                op: '==',
                left: { '&': [f.json, Buffer.from(src.mask, 'hex').length === 1 ? tcpFlagNames(Buffer.from(src.mask, 'hex')[0]) : mask.json] },
                right: val.json,
              },
            },
          },
          needsL2: f.l2,
          needsL3: f.l3,
          needsL4: f.l4,
        };
      }
      if (f.type === 'hex' || f.type === 'rawint' || mask.text.startsWith('0x') !== val.text.startsWith('0x')) {
        // a masked raw payload prints with both sides in hex, as nft does; anything mixed stays raw
        if (f.type !== 'hex' && f.type !== 'rawint') return undefined;
      }
      // flags under a mask: `tcp flags != syn / fin,syn,rst,ack` (iptables' `! --syn`), `ct state new / established,new`;
      // other comparisons nft writes with `(syn | ack)`, which synplug does not: raw
      const flagged = FLAG_TYPES.has(f.type) && !isZero && multi;
      if (flagged && op !== 'eq' && op !== 'neq') return undefined;
      // an unnamed bit after `/` would read back as a prefix length: raw
      const unnamed = (h: string): boolean => flagValueNames(h, f.type)?.some((x) => typeof x === 'number') !== false;
      if (flagged && (unnamed(src.mask) || unnamed(data))) return undefined;
      const text = flagged
        ? `${f.text} ${op === 'neq' ? '!= ' : ''}${val.text} / ${mask.text}`
        : `${f.text} & ${mask.text} ${op === 'eq' ? '==' : opText.trim()} ${val.text}`;
      return {
        stmt: {
          text,
          json: { match: { op: opJson, left: { '&': [f.json, mask.json] }, right: val.json } },
        },
        needsL2: f.l2,
        needsL3: f.l3,
        needsL4: f.l4,
      };
    }
    if (src.k === 'imm' || src.k === 'map' || src.k === 'shifted') return undefined;
    const f = fieldOf(src, c);
    // a label compared whole: `ct label != 5` reads back as it is; `ct label 5` would read back as a test of one bit
    if (!f || (f.type === 'ct_label' && op !== 'neq')) return undefined;
    if (f.fullLen !== undefined) {
      if (op !== 'eq' && op !== 'neq') return undefined;
      return prefixMatch(f, data, Buffer.from(data, 'hex').length * 8, op);
    }
    // a conntrack address compared in its first bytes (`ct original ip saddr 127.0.0.0/8`): the load is whole, the cmp short
    const fullAddr = f.type === 'ipv4' ? 4 : f.type === 'ipv6' ? 16 : undefined;
    if (fullAddr !== undefined && 'ct' in f.json && data.length / 2 < fullAddr && data.length > 0) {
      if (op !== 'eq' && op !== 'neq') return undefined;
      return prefixMatch({ ...f, fullLen: fullAddr }, data, (data.length / 2) * 8, op);
    }
    const v = valueText(data, f.type, pctx.ifname, pctx.cgroup);
    // a value that does not fit the field's type is not printed under the field's name
    // (no flag at all is nft's `0x0`)
    // (no flag at all is nft's `0x0`; unnamed flag bits print in hex: `ct status == 0x10000`)
    const noFlag = FLAG_TYPES.has(f.type) && flagValueNames(data, f.type) !== undefined;
    if (f.type !== 'hex' && f.type !== 'rawint' && v.text.startsWith('0x') && f.type !== 'mark' && f.type !== 'mark_be' && f.type !== 'ethertype' && !noFlag)
      return undefined;
    // several flags compared whole: nft 1.0.6 prints tcp flags as one number (`tcp flags == 0x12`, JSON 18),
    // ct state and status as flags or'ed (`ct state established | related`, JSON `{ "|": [...] }`)
    const flags = FLAG_TYPES.has(f.type) ? flagValueNames(data, f.type) : undefined;
    if (flags && flags.length > 1) {
      const n = Buffer.from(data, 'hex');
      const several: { text: string; json: unknown } | undefined =
        f.type === 'tcpflags'
          ? { text: `${op === 'eq' ? '== ' : opText}0x${n[0].toString(16)}`, json: n[0] }
          : (op === 'eq' || op === 'neq') && flags.every((x) => typeof x === 'string')
            ? { text: `${opText}${flags.join(' | ')}`, json: flags.slice(1).reduce<unknown>((acc, x) => ({ '|': [acc, x] }), flags[0]) }
            : undefined;
      if (!several) return undefined;
      return {
        stmt: { text: `${f.text} ${several.text}`, json: { match: { op: opJson, left: f.json, right: several.json } } },
        needsL2: f.l2,
        needsL3: f.l3,
        needsL4: f.l4,
      };
    }
    // flag fields compared whole print an explicit `==` (`ct state == established`)
    const opShown = FLAG_TYPES.has(f.type) && op === 'eq' ? '== ' : opText;
    const slot: Slot = {
      stmt: { text: `${f.text} ${opShown}${v.text}`, json: { match: { op: opJson, left: f.json, right: v.json } } },
      needsL2: f.l2,
      needsL3: f.l3,
      needsL4: f.l4,
      needsDep: f.dep,
    };
    if (op === 'eq' && (f.type === 'icmp_type' || f.type === 'icmpv6_type') && src.k === 'payload') {
      c.icmpType = Buffer.from(data, 'hex')[0];
      slot.setsDep = `${(f.json as { payload: { protocol: string } }).payload.protocol}:${c.icmpType}`;
    }
    const family = options.family;
    // nft names the link layer by `meta iiftype` outside the bridge family (ether, or nothing)
    if (op === 'eq' && f.type === 'iftype' && family !== 'bridge') {
      slot.depBase = 1;
      c.l2 = v.text === 'ether' ? 'ether' : undefined;
      if (c.l2) slot.setsL2 = 'ether';
    }
    // `ether type ip` / `meta protocol ip` before an ip field: nft leaves out `meta protocol`
    // only in bridge and netdev (in inet it is no dependency of anything)
    const isMetaProto = src.k === 'meta' && src.key === 'protocol';
    // the ip, ip6 and arp families fix the network header; there nft leaves out the vlan header's
    // `ether type 8021q` before `vlan type`, which it keeps elsewhere
    const ownL3 = family === 'ip' || family === 'ip6' || family === 'arp';
    const left = f.json as { payload?: { protocol?: string; field?: string } };
    if (ownL3 && left.payload?.protocol === 'vlan' && left.payload.field === 'type') slot.needsL2 = 'vlan';
    const packetField = (x: Slot): boolean => Boolean(x.needsL3 || x.needsL4 || x.setsL4);
    if (op === 'eq' && f.type === 'ethertype' && src.k === 'payload' && src.base === 'link' && (family === 'ip' || family === 'ip6')) {
      // in a family of its own network protocol: nft keeps `ether type ip` before some fields, hides it before others;
      // another ether type it keeps where no match follows but the vlan header's own (`vlan id 5 vlan type arp accept`,
      // `ether type 8021q vlan type ip accept`: nft's text rebuilds the same bytes). In inet nft leaves it out only
      // as the dependency logic below has it: before a field of the network header, before `meta l4proto icmp`
      // (meta_may_dependency_kill), `ct protocol`, and a stacked one before `meta nfproto` (linkDep)
      const other = (x: Slot): boolean =>
        x.stmt !== undefined && typeof x.stmt.json !== 'string' && 'match' in x.stmt.json && matchLeft(x)?.payload?.protocol !== 'vlan';
      slot.hiddenBy = (x) => packetField(x) || (v.text !== (family === 'ip6' ? 'ip6' : 'ip') && other(x));
    }
    if (op === 'eq' && f.type === 'iftype' && (family === 'bridge' || family === 'netdev')) slot.hiddenBy = (x) => Boolean(x.needsL2 || x.needsL3);
    if (op === 'eq' && (f.json as { ct?: { key?: string } }).ct?.key === 'l3proto') {
      slot.hiddenBy = packetField;
      // it names the network header as `meta nfproto` does (`ip saddr`, not `@nh,96,32`)
      if (!c.l3 && (v.text === 'ipv4' || v.text === 'ipv6')) c.l3 = v.text === 'ipv4' ? 'ip' : 'ip6';
    }
    if (op === 'eq' && f.type === 'ethertype' && ((src.k === 'payload' && src.base === 'link') || isMetaProto)) {
      // a vlan header follows (nft's stacked link-layer headers): `ether type 8021q`, and QinQ's `ether type
      // 8021ad` and `vlan type 8021q`, each of which moves the vlan header nft names 4 bytes on
      const stacked = !isMetaProto && (v.text === '8021q' || v.text === '8021ad');
      slot.depBase = stacked ? 1 : 2;
      // nft: `meta protocol` names the network header only in bridge and netdev, `ether type` everywhere
      const names = !isMetaProto || family === 'bridge' || family === 'netdev';
      if (stacked) {
        c.vlanAt = c.l2 === 'vlan' ? (c.vlanAt ?? 14) + 4 : 14;
        c.l2 = 'vlan';
        // `ether type 8021q` is the match nft itself adds before a vlan field, and leaves out there; the others it
        // keeps before one (payload_may_dependency_kill_ll), but where it leaves them out, nft -f would not add
        // them back: marked raw there
        const implied = v.text === '8021q' && left.payload?.protocol === 'ether';
        if (implied) slot.setsL2 = 'vlan';
        const linkField = (x: Slot): boolean => HEADERS[matchLeft(x)?.payload?.protocol ?? '']?.base === 'link';
        // there any later link-layer field leaves it out (`ether type 8021q ether type ip` lists as `ether type ip`)
        if (ownL3 && implied) slot.droppedBy = linkField;
        else if (ownL3) {
          const before = slot.hiddenBy;
          slot.hiddenBy = (x) => before?.(x) === true || linkField(x);
        }
        // in bridge, netdev and inet a later `meta protocol`, `meta nfproto` or `ct l3proto` match leaves it out
        // (`@ll,96,16 0x8100 ip saddr ...` lists as `ip saddr ...` in bridge; `ether type 8021q meta nfproto ipv4`
        // as `meta nfproto ipv4` in inet)
        else if (family === 'bridge' || family === 'netdev' || family === 'inet') slot.linkDep = implied ? true : 'raw';
      } else if (isMetaProto && names && (data === '8100' || data === '88a8')) {
        // nft 1.0.6 takes the vlan header for the network one here, and aborts on a network load after it: raw
        c.l3 = NH_VLAN;
      } else if (names && (v.text === 'ip' || v.text === 'ip6' || v.text === 'arp')) {
        c.l3 = v.text;
        const otherFamily = (family === 'ip' && v.text !== 'ip') || (family === 'ip6' && v.text !== 'ip6');
        if (!otherFamily) slot.setsL3 = v.text;
      }
      if (slot.depBase === 2 && ownL3) {
        // there nft leaves it out before a field of the network header (`meta protocol` of any value)
        const l3 = c.l3;
        slot.droppedBy = (x) => isMetaProto && x.needsL3 === l3 && HEADERS[matchLeft(x)?.payload?.protocol ?? '']?.base === 'network';
      }
    }
    // Protocol matches set the context and are dependencies of later field matches: `meta l4proto`
    // always, `ip protocol` / `ip6 nexthdr` only in the ip and ip6 families (elsewhere nft keeps them).
    if (op === 'eq' && f.type === 'l4proto') slot.depBase = 3;
    if (op === 'eq' && f.type === 'nfproto') slot.depBase = 2;
    if (op === 'eq' && f.type === 'l4proto' && (src.k === 'meta' || (src.k === 'payload' && src.base === 'network'))) {
      const name = L4_HEADERS.get(Buffer.from(data, 'hex')[0]);
      if (name) {
        c.l4 = name;
        // (in arp, where only an earlier `ether type ip` names the ip header, as in ip and ip6)
        if (src.k === 'meta' || family === 'ip' || family === 'ip6' || family === 'arp') slot.setsL4 = name;
      } else c.l4Other = true;
      // nft 1.0.6 drops any `meta l4proto` before a tcp option match, another protocol's too (a rule that
      // cannot match would list as one that can): marked raw
      if (src.k === 'meta' && name !== 'tcp') slot.hiddenBy = (x) => x.stmt !== undefined && JSON.stringify(x.stmt.json).includes('"tcp option"');
    }
    if (op === 'eq' && f.type === 'nfproto' && src.k !== 'field') {
      const n = Buffer.from(data, 'hex')[0];
      const l3 = n === 2 ? 'ip' : n === 10 ? 'ip6' : undefined;
      if (l3) {
        c.l3 = l3;
        slot.setsL3 = l3;
      }
    }
    const ctKey = (f.json as { ct?: { key?: string } }).ct?.key;
    const n = Number.parseInt(data, 16);
    if (op === 'eq' && ((src.k === 'meta' && (src.key === 'nfproto' || src.key === 'protocol')) || ctKey === 'l3proto'))
      slot.metaDep = { base: 'll', by: ctKey ? 'ct' : 'meta', value: n };
    if (op === 'eq' && f.type === 'iftype') slot.linkDep = true;
    if (op === 'eq' && ((src.k === 'meta' && src.key === 'l4proto') || ctKey === 'protocol'))
      slot.metaDep = { base: 'nh', by: ctKey ? 'ct' : 'meta', value: n };
    // a network-layer dependency: a later `meta l4proto` / `ct protocol` may leave it out (see l4DepKills)
    if (slot.depBase === 2) {
      const nfproto = ctKey === 'l3proto' ? undefined : f.type === 'nfproto' ? n : n === 0x0800 ? 2 : n === 0x86dd ? 10 : 0;
      slot.l3Nfproto = nfproto;
      const before = slot.droppedBy;
      slot.droppedBy = (x) => before?.(x) === true || l4DepKills(x, nfproto, family);
    }
    // `ct protocol tcp` is a transport dependency as `meta l4proto` is: it names the transport header where the
    // network one is known (ct_expr_pctx_update), and any later field of a named transport header leaves it out
    if (op === 'eq' && ctKey === 'protocol') {
      const name = L4_HEADERS.get(n);
      if (name && (c.l3 === 'ip' || c.l3 === 'ip6')) c.l4 = name;
      slot.droppedBy = namesTransport;
    }
    return slot;
  }
}

/**
 * A whole device name ending in `*` printed escaped (`"ab\*"`, print.ts) as
 * a set element: nft 1.0.6 lists an element unescaped, `"ab*"`, which reads
 * back as a wildcard (a name compared alone it lists escaped, as synplug).
 * synplug keeps the escape (its listing reads back to the same ruleset) and
 * says so: the listing then differs from nft's, so it is never exit 0.
 */
const ESCAPED_STAR = /\\\*"/;
/** The same inside an anonymous set of a rule (`{ "ab\*", "c*" }`). */
const ESCAPED_STAR_IN_SET = /\{[^}]*\\\*"[^}]*\}/;
const ESCAPED_STAR_WHY = 'a set element: a device name ending in * printed escaped ("ab\\*"), which nft 1.0.6 lists unescaped and so reads back as a wildcard';

/** `s`, after telling `onRaw` about it when it is printed raw, or differs from nft's listing (an escaped `*` in a set). */
function noted(s: Statement, onRaw: ((s: Statement) => void) | undefined, json = false): Statement {
  if (typeof s.json !== 'string' && 'raw' in s.json) onRaw?.(s);
  // a text problem (a `"` in a quoted string): the JSON string escapes it
  else if (s.problem && !json) onRaw?.({ ...s, text: `${s.text}: ${s.problem}` });
  else if (ESCAPED_STAR_IN_SET.test(s.text)) onRaw?.({ ...s, text: `${s.text}: ${ESCAPED_STAR_WHY}` });
  return s;
}

/** A callback that records a rule's statement printed raw in `options.problems`. */
function ruleProblems(r: NftRule, options: FormatOptions): (s: Statement) => void {
  return (s) =>
    options.problems?.push(
      `table ${r.family} ${r.table} chain ${r.chain}${r.handle !== undefined ? ` handle ${r.handle}` : ''}: ${s.text.replace(`[ ${RAW_MARKER} `, '').replace(/ \]$/, '')}`,
    );
}

/** A rule as one line of nft text (statements joined, then `comment "..."`). */
export function ruleText(rule: NftRule, sets?: readonly NftSet[], names?: RulesetNames, onRaw?: (s: Statement) => void): string {
  const parts = ruleStatements(rule.expr, { family: rule.family, sets, ifnames: names?.ifnames, cgroups: names?.cgroups }).map((s) => noted(s, onRaw).text);
  if (rule.comment !== undefined) {
    const c = `comment "${rule.comment}"`;
    parts.push(c);
    const problem = quoteProblem('comment', rule.comment);
    if (problem) onRaw?.({ text: `${c}: ${problem}`, json: c });
  }
  return parts.join(' ');
}

/** Field types a part of nft's plain `integer` type in a concatenation prints as (see `lookupKey`). */
const INTEGER_PARTS: ReadonlySet<ValueType> = new Set(['uint_be', 'uint_he']);

/** Key types nft prints a CIDR block of as a prefix (`10.0.0.0/8`); others as a range (`0-1023`). */
const PREFIX_TYPES: ReadonlySet<ValueType> = new Set(['ipv4', 'ipv6', 'mark', 'mark_be']);

/**
 * How a key or value prints, part by part (one part unless concatenated);
 * `swapped`: a host-order part stored big-endian (nft byte-swaps those in
 * interval sets so that the kernel's bytewise order is the numeric one).
 */
type Layout = Array<{ type: ValueType; len: number; swapped?: boolean; shift?: number }>;

/**
 * The layout of type id `id` (`len` bytes): its datatype's, raw hex when
 * unknown. A single mark in big-endian order prints as such; any other
 * host-order part is big-endian in interval sets only (a concatenation's
 * parts keep their own order whatever the set's byte order user data says).
 */
function layoutOf(id: number | undefined, len: number, order: 'big' | 'host', interval: boolean): Layout {
  const l = (id !== undefined && datatypeLayout(id)) || [{ type: 'hex' as ValueType, len }];
  if (l.length === 1 && l[0].type === 'mark') return order === 'big' ? [{ ...l[0], type: 'mark_be' }] : l;
  // a plain integer (`ct zone set ... map { 1 : 5 }`): a number in the byte order nft recorded, `len` bytes
  if (l.length === 1 && id === C_TYPE_INTEGER) return [{ type: order === 'host' && !interval ? 'uint_he' : 'uint_be', len }];
  return l.map((p) => (interval && HOST_ORDER_TYPES.has(p.type) ? { ...p, swapped: true } : p));
}

/** How a set's keys print: by the set's key type, or (`t`) by the field a rule matches against an anonymous set. */
function keyLayout(set: NftSet, t?: ValueType): Layout {
  const order = setKeyByteOrder(set);
  const interval = set.flags.includes('interval');
  const typed = typeofLayout(typeofOf(set, C.NFTNL_UDATA_SET_KEY_TYPEOF), set.keyLen, interval);
  // a single mark of an interval set is big-endian: read as such, not swapped a second time
  if (typed && t === undefined) return typed.length === 1 && typed[0].type === 'mark' && order === 'big' ? [{ type: 'mark_be', len: typed[0].len }] : typed;
  const l = layoutOf(set.keyType, set.keyLen, order, interval);
  if (l.length > 1 || t === undefined) return l;
  if (t === 'mark') return [{ type: order === 'big' ? 'mark_be' : t, len: set.keyLen }];
  return [{ type: t, len: set.keyLen, ...(interval && HOST_ORDER_TYPES.has(t) && { swapped: true }) }];
}

/** The names values print as (see {@link valueText}): interfaces by index, cgroup paths by id (decimal). */
interface ValueNames {
  ifname?: (index: number) => string | undefined;
  cgroup?: (id: string) => string | undefined;
}

/** A bit field's value (shifted down) as the bytes its type prints from: 4 for an integer, else 1. */
function bitValue(n: number, type: ValueType): string {
  const bytes = Buffer.alloc(type === 'uint_be' ? 4 : 1);
  if (type === 'uint_be') bytes.writeUInt32BE(n);
  else bytes[0] = n;
  return bytes.toString('hex');
}

/** One part's value (`range`: one end of a range, see {@link rangeEndText}); a swapped host-order part is read back in host order. */
function partValue(hex: string, p: Layout[number], names: ValueNames | undefined, range = false): { text: string; json: unknown } {
  const swapped = p.swapped && endianness() === 'LE' ? Buffer.from(hex, 'hex').reverse().toString('hex') : hex;
  // a bit field's value as the bitwise left it (`ip dscp`: cs1 is 0x20): shifted down first
  const h = p.shift !== undefined ? bitValue(Buffer.from(swapped, 'hex').readUIntBE(0, hex.length / 2) >>> p.shift, p.type) : swapped;
  return (range && rangeEndText(h, p.type, names?.ifname)) || valueText(h, p.type, names?.ifname, names?.cgroup);
}

/**
 * A key or value of a (possibly concatenated) layout, each part padded to 4
 * bytes; `hi` the interval's last key. An interval of device names that
 * share a prefix (`eth` then NULs to `eth` then 0xff) is nft's wildcard
 * name `"eth*"`.
 */
function layoutValue(lo: string, layout: Layout, hi: string | undefined, names: ValueNames | undefined): { text: string; json: unknown } {
  if (layout.length === 1) {
    const p = layout[0];
    if (hi === undefined || hi === lo) return partValue(lo, p, names);
    if (p.type === 'ifname') {
      const bits = cidrBits(Buffer.from(lo, 'hex'), Buffer.from(hi, 'hex'));
      if (bits !== undefined && bits % 8 === 0 && bits > 0) return valueText(lo.slice(0, bits / 4), 'ifname');
      // any other range of names nft cannot read (`"eth0"-"eth3"`): raw
      return { text: `[ ${RAW_MARKER} range ${lo} ${hi} ]`, json: { raw: { range: [lo, hi] } } };
    }
    const a = partValue(lo, p, names, true);
    const b = partValue(hi, p, names, true);
    return { text: `${a.text}-${b.text}`, json: { range: [a.json, b.json] } };
  }
  const parts: Array<{ text: string; json: unknown }> = [];
  let at = 0;
  for (const p of layout) {
    const l = lo.slice(at * 2, (at + p.len) * 2);
    const h = hi?.slice(at * 2, (at + p.len) * 2);
    at += Math.ceil(p.len / 4) * 4;
    const bits = h !== undefined && h !== l && PREFIX_TYPES.has(p.type) ? cidrBits(Buffer.from(l, 'hex'), Buffer.from(h, 'hex')) : undefined;
    const v = partValue(l, p, names);
    parts.push(bits !== undefined ? { text: `${v.text}/${bits}`, json: { prefix: { addr: v.json, len: bits } } } : layoutValue(l, [p], h, names));
  }
  return { text: parts.map((x) => x.text).join(' . '), json: { concat: parts.map((x) => x.json) } };
}

function keyOf(it: NftSetItem, layout: Layout, names: ValueNames | undefined): { text: string; json: unknown } {
  if (it.catchall || it.key === undefined) return { text: '*', json: '*' };
  if (layout.length === 1 && it.keyEnd !== undefined && it.prefixLen !== undefined && PREFIX_TYPES.has(layout[0].type)) {
    const lo = valueText(it.key, layout[0].type);
    return { text: `${lo.text}/${it.prefixLen}`, json: { prefix: { addr: lo.json, len: it.prefixLen } } };
  }
  // several flags in one element: nft's `syn | ack`, JSON `{ "|": [{ "|": ["fin", "psh"] }, "ack"] }`
  const flags = layout.length === 1 && it.keyEnd === undefined ? flagValueNames(it.key, layout[0].type) : undefined;
  if (flags && flags.length > 1) {
    return { text: flags.map(flagText).join(' | '), json: flags.slice(1).reduce<unknown>((acc, n) => ({ '|': [acc, n] }), flags[0]) };
  }
  return layoutValue(it.key, layout, it.keyEnd, names);
}

function dataOf(set: NftSet, it: NftSetItem, names: ValueNames | undefined): { text: string; json: unknown } | undefined {
  if (it.objref !== undefined) return { text: `"${it.objref}"`, json: it.objref };
  const d: NftData | undefined = it.data;
  if (!d) return undefined;
  if (d.verdict) {
    const v = d.verdict;
    return v.chain !== undefined ? { text: `${v.code} ${v.chain}`, json: { [v.code]: { target: v.chain } } } : { text: v.code, json: { [v.code]: null } };
  }
  return dataInterval(set) ? intervalData(d.value ?? '', dataLayout(set), names) : layoutValue(d.value ?? '', dataLayout(set), undefined, names);
}

/** How a map's values print (of a map of intervals: each end's). */
function dataLayout(set: NftSet): Layout {
  const len = (set.dataLen ?? 0) / (dataInterval(set) ? 2 : 1);
  return typeofLayout(typeofOf(set, C.NFTNL_UDATA_SET_DATA_TYPEOF), len, false) ?? layoutOf(set.dataType, len, setDataByteOrder(set), false);
}

/**
 * A map whose values are intervals (`: interval ipv4_addr`: nft writes
 * NFTNL_UDATA_SET_DATA_INTERVAL 1; 0 in any other map): each value is its
 * first then its last value.
 */
function dataInterval(set: NftSet): boolean {
  const v = userdataTlvs(set.userdata).get(C.NFTNL_UDATA_SET_DATA_INTERVAL);
  return v?.some((b) => b !== 0) ?? false;
}

/**
 * A set's `typeof` user data (NFTNL_UDATA_SET_KEY_TYPEOF or _DATA_TYPEOF);
 * none for a map of intervals, which nft 1.0.6 lists by type (the value's
 * `typeof` does not fit its doubled size).
 */
function typeofOf(set: NftSet, tlv: number): Buffer | undefined {
  return dataInterval(set) ? undefined : userdataTlvs(set.userdata).get(tlv);
}

/**
 * Where a map's address data lands after a lookup into `dreg`, as 32-bit
 * register words (NFT_REG32_*): the address and, for a map of intervals, the
 * end of its range; a port part after it (`ipv4_addr . inet_service`), the
 * same. Undefined when the data is not an address, or an address and a port.
 */
function mapDataWords(set: NftSet, dreg: number): MapWords | undefined {
  const l = dataLayout(set);
  if (l.length < 1 || l.length > 2 || (l[0].type !== 'ipv4' && l[0].type !== 'ipv6') || (l.length === 2 && l[1].type !== 'port')) return undefined;
  const start = regWord(dreg);
  const addrWords = l[0].len / 4;
  const span = addrWords + (l.length === 2 ? 1 : 0);
  const end = dataInterval(set) ? span : 0;
  return { addr: [start, start + end], ...(l.length === 2 && { port: [start + addrWords, start + addrWords + end] }) };
}

/** Part types of the interval values nft prints (NAT maps: addresses, ports); another is raw. */
const INTERVAL_DATA_TYPES: ReadonlySet<ValueType> = new Set(['ipv4', 'ipv6', 'port']);

/**
 * An interval value as nft prints it: a CIDR block of addresses as a prefix
 * (`10.0.0.1/32` too), else a range; in a concatenation part by part, a
 * part of one value as that value (`10.0.0.0/24 . 80`).
 */
function intervalData(hex: string, layout: Layout, names: ValueNames | undefined): { text: string; json: unknown } {
  const [lo, hi] = [hex.slice(0, hex.length / 2), hex.slice(hex.length / 2)];
  if (!layout.every((p) => INTERVAL_DATA_TYPES.has(p.type)) || (layout.length === 1 && layout[0].type === 'port'))
    return { text: `[ ${RAW_MARKER} interval ${lo} ${hi} ]`, json: { raw: { range: [lo, hi] } } };
  if (layout.length > 1) return layoutValue(lo, layout, hi, names);
  const bits = cidrBits(Buffer.from(lo, 'hex'), Buffer.from(hi, 'hex'));
  const a = valueText(lo, layout[0].type);
  if (bits !== undefined) return { text: `${a.text}/${bits}`, json: { prefix: { addr: a.json, len: bits } } };
  const b = valueText(hi, layout[0].type);
  return { text: `${a.text}-${b.text}`, json: { range: [a.json, b.json] } };
}

/**
 * A set's elements as nft prints them: `10.0.0.0/8`, `11.1.0.1-11.1.0.9`,
 * `1.1.1.1 timeout 1h expires 59m`, `80 : 10.0.0.1`, `* : accept`; JSON
 * `{ prefix: {...} }`, `{ range: [a, b] }`, `{ elem: { val, timeout, expires } }`,
 * and `[key, value]` pairs in maps.
 */
function setElementsPrinted(
  set: NftSet,
  elements: NonNullable<NftSet['elements']>,
  layout: Layout,
  names: ValueNames | undefined,
): Array<{ text: string; json: unknown }> {
  return setItems(set, elements, layout).map((it) => {
    const k = keyOf(it, layout, names);
    let text = k.text;
    let json: unknown = k.json;
    // the element's counter (nft prints no other element statement synplug reads; a set that
    // declares one is named as unprintable, see setProblem)
    const counters = (it.exprs ?? []).flatMap((e) => (e.name === 'counter' ? [e as { packets: number; bytes: number }] : []));
    // a count past 2^53 would print rounded: raw (the set is then named as unprintable)
    for (const c of counters) text += exact(c.packets, c.bytes) ? ` counter packets ${c.packets} bytes ${c.bytes}` : ` [ ${RAW_MARKER} counter past 2^53 ]`;
    if (it.timeoutMs !== undefined) text += ` timeout ${durationText(it.timeoutMs)}`;
    if (it.expiresMs !== undefined) text += ` expires ${durationText(it.expiresMs)}`;
    if (it.comment !== undefined) text += ` comment "${it.comment}"`;
    if (it.timeoutMs !== undefined || it.expiresMs !== undefined || it.comment !== undefined || counters.length) {
      json = {
        elem: {
          val: k.json,
          ...(it.timeoutMs !== undefined && { timeout: Math.floor(it.timeoutMs / 1000) }),
          ...(it.expiresMs !== undefined && { expires: Math.floor(it.expiresMs / 1000) }),
          ...(it.comment !== undefined && { comment: it.comment }),
          ...(counters.length && {
            counter: exact(counters[0].packets, counters[0].bytes) ? { packets: counters[0].packets, bytes: counters[0].bytes } : { raw: 'counter past 2^53' },
          }),
        },
      };
    }
    if (set.map === undefined) return { text, json };
    const d = dataOf(set, it, names);
    if (!d) return { text, json };
    return { text: `${text} : ${d.text}`, json: [json, d.json] };
  });
}

/* nft breaks a named set's element list after every 5 elements of small integer types, 2 of IPv4 addresses (and ct state/status, pkttype), each one of any other type. */
const FIVE_PER_LINE: ReadonlySet<number> = new Set([2, 4, 11, 12, 13, 15, 16, 19, 20, 23, 24, 25, 27]);
const TWO_PER_LINE: ReadonlySet<number> = new Set([7, 26, 28, 31]);
const TYPE_IDS: Record<string, number> = { integer: 4, ipv4_addr: 7, ipv6_addr: 8, ether_addr: 9, inet_proto: 12, inet_service: 13, mark: 19 };

/** `elements = { a, b,\n\t\t\t     c }` as nft wraps it. */
function elementsBlock(set: NftSet, texts: readonly string[]): string {
  const id = set.keyType ?? TYPE_IDS[set.type ?? ''] ?? -1;
  const per = FIVE_PER_LINE.has(id) ? 5 : TWO_PER_LINE.has(id) ? 2 : 1;
  let out = '';
  texts.forEach((t, i) => {
    if (i > 0) out += i % per === 0 ? ',\n\t\t\t     ' : ', ';
    out += t;
  });
  return `{ ${out} }`;
}

/** Set flags as nft 1.0.6 lists them, in its order; `nft -j` leaves out `dynamic`. */
const TEXT_SET_FLAGS = ['constant', 'interval', 'dynamic', 'timeout'];
const JSON_SET_FLAGS = ['constant', 'interval', 'timeout'];
/** Element expressions nft prints in a set's declaration (`counter`). */
const SET_EXPRS: ReadonlySet<string> = new Set(['counter']);

/** nft's `integer` datatype id (TYPE_INTEGER) */
const C_TYPE_INTEGER = 4;
/** nft 1.0.6's ids (proto.h `enum proto_desc_id`) of the protocols whose fields a `typeof` set can name, those synplug reads. */
const TYPEOF_PROTOS: Readonly<Record<number, string>> = { 6: 'udp', 8: 'tcp', 11: 'th', 12: 'ip', 13: 'ip6', 16: 'vlan', 17: 'ether' };
/** nft's expression type ids (`enum expr_types`) in a `typeof` set's user data. */
const EXPR_PAYLOAD = 7;
const EXPR_META = 9;
const EXPR_CT = 12;
const EXPR_CONCAT = 13;

/** Bytes of a ct key's value, where not 4 (`ct zone` is a u16, `ct bytes` a u64). */
const CT_LEN: Readonly<Record<string, number>> = { zone: 2, packets: 8, bytes: 8, avgpkt: 8, direction: 1, l3protocol: 1, protocol: 1, helper: 16 };

/** One part of a `typeof` expression: its text, and how its values print (type, bytes). */
interface TypeofPart {
  text: string;
  type: ValueType;
  len: number;
}

/**
 * The expression of a set declared with `typeof`, part by part, from its
 * NFTNL_UDATA_SET_KEY_TYPEOF / _DATA_TYPEOF user data (TLVs: 0 the
 * expression type, u32 host order; 1 its data): `ip saddr`, `meta mark`,
 * `ct state`, `ip saddr . tcp dport`. Undefined when the set was declared
 * by type (no such data, or an empty one: nft writes that for concatenated
 * types); null when synplug cannot read it.
 */
function typeofParts(v: Buffer | undefined): TypeofPart[] | null | undefined {
  if (!v) return undefined;
  const t = userdataTlvs(v.toString('hex'));
  const data = t.get(1);
  if (!data?.length) return undefined;
  const u32 = (b: Buffer | undefined): number | undefined => (b?.length === 4 ? (endianness() === 'LE' ? b.readUInt32LE(0) : b.readUInt32BE(0)) : undefined);
  const d = userdataTlvs(data.toString('hex'));
  switch (u32(t.get(0))) {
    case EXPR_PAYLOAD: {
      const proto = TYPEOF_PROTOS[u32(d.get(0)) ?? -1];
      // the field's place in nft's template of the protocol, from 1
      const field = proto ? HEADERS[proto].fields[(u32(d.get(1)) ?? 0) - 1] : undefined;
      return field ? [{ text: `${proto} ${field.name}`, type: field.type, len: valueBytes(field) }] : null;
    }
    case EXPR_META: {
      const key = META_KEY_NAMES[u32(d.get(0)) ?? -1];
      const type = key === undefined ? undefined : META_TYPES[key];
      if (key === undefined || type === undefined) return null;
      return [{ text: UNQUALIFIED_META.has(key) ? key : `meta ${key}`, type, len: META_LEN[type] ?? 4 }];
    }
    case EXPR_CT: {
      const key = CT_KEY_NAMES[u32(d.get(0)) ?? -1];
      const f = key !== undefined && u32(d.get(1)) === 0xffffffff ? ctField(key) : undefined;
      return f ? [{ text: f.text, type: f.type, len: CT_LEN[key!] ?? 4 }] : null;
    }
    case EXPR_CONCAT: {
      const parts = [...d.values()].map((x) => typeofParts(x));
      return parts.length && parts.every((x) => Array.isArray(x)) ? (parts as TypeofPart[][]).flat() : null;
    }
    default:
      return null;
  }
}

/**
 * Bytes of a header field's value in a set: a bit field's bits, rounded up
 * (nft's element of `ip6 dscp` is 1 byte where its load takes 2); else the
 * bytes loaded.
 */
function valueBytes(field: HeaderField): number {
  if (field.mask === undefined) return field.len;
  const bits = [...Buffer.from(field.mask, 'hex')].reduce((n, b) => n + b.toString(2).replace(/0/g, '').length, 0);
  return Math.ceil(bits / 8);
}

/** A `typeof` expression's text (`ip saddr . tcp dport`); undefined / null as {@link typeofParts}. */
function typeofText(v: Buffer | undefined): string | null | undefined {
  const p = typeofParts(v);
  return p ? p.map((x) => x.text).join(' . ') : p;
}

/**
 * The layout of a `typeof` key or value: its parts' types and sizes, when
 * they fill exactly `len` bytes (each part padded to 4 in a concatenation);
 * host-order parts are big-endian in interval sets.
 */
function typeofLayout(v: Buffer | undefined, len: number | undefined, interval: boolean): Layout | undefined {
  const p = typeofParts(v);
  if (!p) return undefined;
  const size = p.length === 1 ? p[0].len : p.reduce((n, x) => n + Math.ceil(x.len / 4) * 4, 0);
  if (size !== len) return undefined;
  return p.map((x) => ({ type: x.type, len: x.len, ...(interval && HOST_ORDER_TYPES.has(x.type) && { swapped: true }) }));
}

/** Record in `options.problems` what a set's declaration has that cannot be printed in nft's language, if anything. */
function noteSetProblem(s: NftSet, options: FormatOptions): void {
  const p = setProblem(s);
  if (p) options.problems?.push(`table ${s.family} ${s.table} ${s.map !== undefined ? 'map' : 'set'} ${s.name}: ${p}`);
}

/** A set's key and value types when one has no name synplug knows (`type(24) : verdict`), else undefined. */
function unnamedType(s: NftSet): string | undefined {
  const t = `type ${s.type ?? 'integer'}${s.map !== undefined ? ` : ${s.map}` : ''}`;
  return /type\(/.test(t) ? t : undefined;
}

function setProblem(s: NftSet): string | undefined {
  const [key, data] = [typeofOf(s, C.NFTNL_UDATA_SET_KEY_TYPEOF), typeofOf(s, C.NFTNL_UDATA_SET_DATA_TYPEOF)];
  if (typeofText(key) === null || typeofText(data) === null) return 'declared with a typeof synplug cannot read (printed with its type instead)';
  const interval = s.flags.includes('interval');
  if ((typeofParts(key) && !typeofLayout(key, s.keyLen, interval)) || (typeofParts(data) && !typeofLayout(data, s.dataLen, false)))
    return "a typeof whose sizes do not match the set's keys or values";
  const printed = s.elements ? setElementsPrinted(s, s.elements, keyLayout(s), undefined) : [];
  if (printed.some((v) => v.text.includes(`[ ${RAW_MARKER}`)))
    return 'an element nft cannot read back (a range of device names that is not a wildcard, a count past 2^53, an interval value not of addresses)';
  if (printed.some((v) => ESCAPED_STAR.test(v.text))) return ESCAPED_STAR_WHY;
  if (unnamedType(s)) return `a key or value type nft names and synplug does not (${s.type}${s.map !== undefined ? ` : ${s.map}` : ''})`;
  const other = (s.expressions ?? []).filter((e) => !SET_EXPRS.has(e));
  if (other.length) return `element expressions ${other.join(', ')} (left out)`;
  return undefined;
}

/**
 * Record in `options.problems` a comment of `where` (`table ip t`, `table ip t chain c`) printed as nft 1.0.6
 * lists it (`comment "x"y"`) that `nft -f` cannot read back (a `"` in it, {@link quoteProblem}); text only (a
 * JSON string escapes it).
 */
function noteComment(where: string, comment: string | undefined, options: FormatOptions): void {
  const problem = comment === undefined ? undefined : quoteProblem('comment', comment);
  if (problem) options.problems?.push(`${where}: ${problem}`);
}

/** A table's flags as nft names them (`dormant`); another flag bit is recorded in `options.problems`. */
function tableFlags(t: NftTable, options: FormatOptions): string[] {
  const f = t.flags ?? 0;
  if (f & ~C.NFT_TABLE_F_DORMANT) options.problems?.push(`table ${t.family} ${t.name}: flags 0x${f.toString(16)} synplug does not name`);
  return f & C.NFT_TABLE_F_DORMANT ? ['dormant'] : [];
}

/** A named set or map's block as `nft list` prints it. */
function setText(s: NftSet, options: FormatOptions, ifnames: NftRuleset['ifnames']): string {
  let b = `\t${s.map !== undefined ? 'map' : 'set'} ${s.name} {${options.handles && s.handle !== undefined ? ` # handle ${s.handle}` : ''}\n`;
  const kt = typeofText(typeofOf(s, C.NFTNL_UDATA_SET_KEY_TYPEOF));
  const value = s.map !== undefined ? ` : ${typeofText(typeofOf(s, C.NFTNL_UDATA_SET_DATA_TYPEOF)) ?? s.map}` : '';
  const interval = dataInterval(s) ? 'interval ' : '';
  b += kt ? `\t\ttypeof ${kt}${value}\n` : `\t\ttype ${s.type ?? 'integer'}${s.map !== undefined ? ` : ${interval}${s.map}` : ''}\n`;
  if (s.policy === C.NFT_SET_POL_MEMORY) b += '\t\tpolicy memory\n';
  // a constant set's size is the one nft computed from its elements: not listed
  if (s.size !== undefined && !s.flags.includes('constant')) b += `\t\tsize ${s.size}\n`;
  // nft lists `timeout` among the flags of a set with a default timeout only beside another flag
  const hideTimeout = s.timeoutMs !== undefined && !TEXT_SET_FLAGS.some((f) => f !== 'timeout' && s.flags.includes(f));
  const flags = TEXT_SET_FLAGS.filter((f) => s.flags.includes(f) && !(f === 'timeout' && hideTimeout));
  if (flags.length) b += `\t\tflags ${flags.join(',')}\n`;
  for (const e of (s.expressions ?? []).filter((x) => SET_EXPRS.has(x))) b += `\t\t${e}\n`;
  // nft: `auto-merge` after the flags and element statements, before the timeout
  if (userdataTlvs(s.userdata).has(C.NFTNL_UDATA_SET_MERGE_ELEMENTS)) b += '\t\tauto-merge\n';
  if (s.timeoutMs !== undefined) b += `\t\ttimeout ${durationText(s.timeoutMs)}\n`;
  if (s.gcIntervalMs !== undefined) b += `\t\tgc-interval ${durationText(s.gcIntervalMs)}\n`;
  const comment = userdataString(s.userdata, C.NFTNL_UDATA_SET_COMMENT);
  if (comment !== undefined) b += `\t\tcomment "${comment}"\n`;
  const where = `table ${s.family} ${s.table} ${s.map !== undefined ? 'map' : 'set'} ${s.name}`;
  noteComment(where, comment, options);
  for (const e of s.elements ?? []) noteComment(`${where} element`, e.comment, options);
  if (s.elements?.length)
    b += `\t\telements = ${elementsBlock(
      s,
      setElementsPrinted(s, s.elements, keyLayout(s), { ifname: (i) => ifnames?.[i] }).map((x) => x.text),
    )}\n`;
  return `${b}\t}\n`;
}

/** The flowtables of table `t`, each recorded in `options.problems` (synplug does not print them). */
function flowtablesOf(rs: NftRuleset, t: NftTable, options: FormatOptions): NftFlowtable[] {
  const list = (rs.flowtables ?? []).filter((x) => x.family === t.family && x.table === t.name);
  for (const f of list) options.problems?.push(`table ${t.family} ${t.name} flowtable ${f.name}: synplug does not print flowtables`);
  return list;
}

/** Options of {@link formatRulesetText} and {@link formatRulesetJson}. */
export interface FormatOptions {
  /** append `# handle N` like `nft -a` (text) */
  handles?: boolean;
  /**
   * Filled with one line per thing nft's language cannot express as
   * decoded (a statement printed `[ raw: ... ]`, a set declared with
   * `typeof`, an object of a type not printed): where it is and what.
   */
  problems?: string[];
  /**
   * Filled by the text listing with nft 1.0.6's warning before each table one
   * of whose rules holds an xt match or target (`# Warning: table ip filter is
   * managed by iptables-nft, do not touch!`, which nft writes on stderr; `nft
   * -j` writes none): `at`, the offset in the listing where that table starts.
   */
  warnings?: Array<{ at: number; text: string }>;
  /**
   * Why {@link XT_CONNLABEL_CONF} cannot be opened (`No such file or directory`, strerror's words), when the
   * caller found so: the text listing then adds to `warnings` what nft 1.0.6 writes there, `Warning: cannot
   * open /etc/xtables/connlabel.conf: No such file or directory`, once for each xt connlabel match, after its
   * rule's indent (where nft's shows on a terminal). Unset: no such warning (the file opens, or the caller did
   * not look).
   */
  connlabelConfError?: string;
}

/**
 * Record in `options.problems` a name printed as nft 1.0.6 lists it (unquoted) that `nft -f` cannot read
 * back: a keyword of its (`fwd`, `log`) or a character outside its unquoted strings (`a;b`, `x"y`).
 */
function noteName(where: string, name: string, options: FormatOptions): void {
  if (nftReadsName(name)) return;
  const why =
    NFT_KEYWORDS.has(name) || NFT_OPERATOR_WORDS.has(name)
      ? `"${name}" is a keyword of nft's`
      : 'nft reads a name that starts with a letter, _ or . and holds letters, digits and / - _ . only';
  options.problems?.push(`${where}: nft -f cannot read this name back (${why}; nor quoted)`);
}

/**
 * Text close to `nft list ruleset` (nft 1.0.6): tables with their named
 * objects (counters, quotas, limits, in the kernel's order), named sets and
 * chains, base chain headers (`type route hook output priority mangle; policy accept;`),
 * and each rule on one line. Objects of other types print raw (`[ raw: object ... ]`).
 * @param options.handles append `# handle N` like `nft -a`
 */
export function formatRulesetText(rs: NftRuleset, options: FormatOptions = {}): string {
  let out = '';
  for (const t of rs.tables) {
    // nft's has_xt_stmts: set by any rule of the table with an xt expression
    if (rs.rules.some((r) => r.family === t.family && r.table === t.name && r.expr.some((e) => e.name === 'match' || e.name === 'target')))
      options.warnings?.push({ at: out.length, text: `# Warning: table ${t.family} ${t.name} is managed by iptables-nft, do not touch!` });
    out += `table ${t.family} ${t.name} {${options.handles && t.handle !== undefined ? ` # handle ${t.handle}` : ''}\n`;
    noteName(`table ${t.family} ${t.name}`, t.name, options);
    const flags = tableFlags(t, options);
    // nft: `flags` (then a blank line before the first block), then the comment
    if (flags.length) out += `\tflags ${flags.join(',')}\n`;
    if (t.comment !== undefined) out += `\tcomment "${t.comment}"\n`;
    noteComment(`table ${t.family} ${t.name}`, t.comment, options);
    const blocks: string[] = [];
    // nft's warnings at a rule's line (libxt_connlabel's): the block they are in and where in it
    const ruleWarnings: Array<{ block: number; at: number; text: string }> = [];
    for (const o of (rs.objects ?? []).filter((x) => x.family === t.family && x.table === t.name)) blocks.push(objectText(o, options));
    const sets = rs.sets.filter((s) => s.family === t.family && s.table === t.name);
    for (const s of sets.filter((x) => !x.flags.includes('anonymous'))) {
      noteSetProblem(s, options);
      noteName(`table ${t.family} ${t.name} ${s.map !== undefined ? 'map' : 'set'} ${s.name}`, s.name, options);
      // a key or value type synplug cannot name: nothing of it would read back (`type(24)`)
      if (unnamedType(s)) blocks.push(`\t[ ${RAW_MARKER} ${s.map !== undefined ? 'map' : 'set'} ${s.name} ${unnamedType(s)} ]\n`);
      else blocks.push(setText(s, options, rs.ifnames));
    }
    for (const f of flowtablesOf(rs, t, options)) blocks.push(`\t[ ${RAW_MARKER} flowtable ${f.name} ]\n`);
    for (const c of rs.chains.filter((x) => x.family === t.family && x.table === t.name)) {
      let b = `\tchain ${c.name} {${options.handles && c.handle !== undefined ? ` # handle ${c.handle}` : ''}\n`;
      noteName(`table ${t.family} ${t.name} chain ${c.name}`, c.name, options);
      const chainComment = userdataString(c.userdata, C.NFTNL_UDATA_CHAIN_COMMENT);
      if (chainComment !== undefined) b += `\t\tcomment "${chainComment}"\n`;
      noteComment(`table ${t.family} ${t.name} chain ${c.name}`, chainComment, options);
      if (c.type !== undefined && c.hook !== undefined) {
        // nft: one device quoted, several as an unquoted set, sorted by name (strcmp)
        const devs = c.devs ?? (c.dev !== undefined ? [c.dev] : []);
        const dev = devs.length > 1 ? ` devices = { ${[...devs].sort().join(', ')} }` : devs.length ? ` device "${devs[0]}"` : '';
        b += `\t\ttype ${c.type} hook ${c.hook}${dev} priority ${priorityText(c.family, c.hook, c.prio ?? 0)}; policy ${c.policy ?? 'accept'};\n`;
      }
      for (const r of rs.rules.filter((x) => x.family === t.family && x.table === t.name && x.chain === c.name)) {
        // libxt_connlabel's, once per match where it cannot open its file; where nft's appears on a terminal:
        // after the rule's indent, before its words (written as it translates them)
        const labels =
          options.connlabelConfError === undefined ? [] : r.expr.filter((x) => x.name === 'match' && (x as { match?: string }).match === 'connlabel');
        for (const _ of labels)
          ruleWarnings.push({ block: blocks.length, at: b.length + 2, text: `Warning: cannot open ${XT_CONNLABEL_CONF}: ${options.connlabelConfError}` });
        b += `\t\t${ruleText(r, sets, rs, ruleProblems(r, options))}${options.handles && r.handle !== undefined ? ` # handle ${r.handle}` : ''}\n`;
      }
      b += '\t}\n';
      blocks.push(b);
    }
    out += flags.length && blocks.length ? '\n' : '';
    const starts = blocks.map((_, i) => out.length + blocks.slice(0, i).reduce((n, x) => n + x.length + 1, 0));
    for (const w of ruleWarnings) options.warnings?.push({ at: starts[w.block] + w.at, text: w.text });
    out += blocks.join('\n');
    out += '}\n';
  }
  return out;
}

function setJson(s: NftSet, ifnames: NftRuleset['ifnames']): Record<string, unknown> {
  // `nft -j` writes a concatenated key type as a list of its parts' names
  const j: Record<string, unknown> = {
    family: s.family,
    name: s.name,
    table: s.table,
    type: s.type?.includes(' . ') ? s.type.split(' . ') : (s.type ?? 'integer'),
  };
  if (s.handle !== undefined) j.handle = s.handle;
  const comment = userdataString(s.userdata, C.NFTNL_UDATA_SET_COMMENT);
  if (comment !== undefined) j.comment = comment;
  if (s.map !== undefined) j.map = s.map;
  if (s.policy === C.NFT_SET_POL_MEMORY) j.policy = 'memory';
  if (s.size !== undefined && !s.flags.includes('constant')) j.size = s.size;
  const flags = JSON_SET_FLAGS.filter((f) => s.flags.includes(f));
  if (flags.length) j.flags = flags;
  if (s.timeoutMs !== undefined) j.timeout = Math.floor(s.timeoutMs / 1000);
  if (s.gcIntervalMs !== undefined) j['gc-interval'] = Math.floor(s.gcIntervalMs / 1000);
  if (s.elements?.length) j.elem = setElementsPrinted(s, s.elements, keyLayout(s), { ifname: (i) => ifnames?.[i] }).map((x) => x.json);
  // nft -j: the elements, then the set's element statements
  const stmts = (s.expressions ?? []).filter((x) => SET_EXPRS.has(x));
  if (stmts.length) j.stmt = stmts.map((x) => ({ [x]: null }));
  return j;
}

/** Whether every number is exact: a u64 past 2^53 decodes rounded, and would print a value that is not the kernel's. */
function exact(...ns: number[]): boolean {
  return ns.every((n) => Number.isSafeInteger(n));
}

/** Why a named object prints raw: its type, or a 64-bit value synplug cannot print exactly. */
function objectProblem(o: NftObject): string {
  const inexact = (o.counter && !exact(o.counter.packets, o.counter.bytes)) || (o.quota && !exact(o.quota.bytes, o.quota.used));
  const what = inexact ? 'a 64-bit value past 2^53 synplug does not print exactly' : 'an object of a type synplug does not print';
  return `table ${o.family} ${o.table} ${o.type} ${o.name}: ${what}`;
}

/** A named object's block, as `nft list` prints it: `\tcounter c1 {\n\t\tpackets 5 bytes 300\n\t}\n`. */
function objectText(o: NftObject, options: FormatOptions): string {
  const head = `\t${o.type} ${o.name} {${options.handles && o.handle !== undefined ? ` # handle ${o.handle}` : ''}\n`;
  let body: string | undefined;
  const printed = objectBody(o);
  if (o.counter) {
    if (exact(o.counter.packets, o.counter.bytes)) body = `packets ${o.counter.packets} bytes ${o.counter.bytes}`;
  } else if (printed) {
    body = printed.lines.join('\n\t\t');
    if (printed.problem) options.problems?.push(`table ${o.family} ${o.table} ${o.type} ${o.name}: ${printed.problem}`);
  } else if (o.quota) {
    if (exact(o.quota.bytes, o.quota.used)) body = quotaText(o.quota);
  } else if (o.limit) {
    const p = limitPrinted(o.limit);
    if (p) body = p.text;
  }
  if (body === undefined) {
    const attrs = (o.attributes ?? []).map((a) => `${a.type}=${a.data}`).join(' ');
    options.problems?.push(objectProblem(o));
    return `\t[ ${RAW_MARKER} object ${o.type} ${o.name}${attrs ? ` ${attrs}` : ''} ]\n`;
  }
  // nft: the comment first in the block
  const comment = userdataString(o.userdata, C.NFTNL_UDATA_OBJ_COMMENT);
  noteComment(`table ${o.family} ${o.table} ${o.type} ${o.name}`, comment, options);
  return `${head}${comment !== undefined ? `\t\tcomment "${comment}"\n` : ''}\t\t${body}\n\t}\n`;
}

/** A named object as `nft -j` writes it: `{ counter: { family, name, table, handle, packets, bytes } }`. */
function objectJson(o: NftObject, options: FormatOptions): Record<string, unknown> {
  const comment = userdataString(o.userdata, C.NFTNL_UDATA_OBJ_COMMENT);
  const base = {
    family: o.family,
    name: o.name,
    table: o.table,
    ...(o.handle !== undefined && { handle: o.handle }),
    ...(comment !== undefined && { comment }),
  };
  if (o.counter && exact(o.counter.packets, o.counter.bytes)) return { counter: { ...base, packets: o.counter.packets, bytes: o.counter.bytes } };
  const printed = objectBody(o);
  if (printed) return { [o.type]: { ...base, ...printed.json } };
  if (o.quota && exact(o.quota.bytes, o.quota.used)) return { quota: { ...base, bytes: o.quota.bytes, used: o.quota.used, inv: o.quota.inv === true } };
  const p = o.limit && limitPrinted(o.limit);
  if (p) return { limit: { ...base, ...p.objJson } };
  options.problems?.push(objectProblem(o));
  return { raw: { object: { ...base, type: o.type, attributes: o.attributes ?? [] } } };
}

/**
 * JSON close to `nft -j list ruleset`: `{ nftables: [ {metainfo}, {table}, {counter|quota|limit}..., {set}..., {chain}..., {rule}... ] }`,
 * per table: the table, its named objects, its named sets, its chains, then its rules chain by chain.
 */
export function formatRulesetJson(rs: NftRuleset, options: FormatOptions = {}): { nftables: Array<Record<string, unknown>> } {
  // metainfo: the schema version only, which is what a reader of nft -j checks. nft's `version` and
  // `release_name` name the nft program that wrote the listing: synplug is not nft 1.0.6, and its own
  // version in those fields would mislead a reader that checks nft's version.
  const out: Array<Record<string, unknown>> = [{ metainfo: { json_schema_version: 1 } }];
  for (const t of rs.tables) {
    // nft 1.0.6 writes the table's name as its `flags` (a bug later versions fixed); synplug writes the flags' names
    const flags = tableFlags(t, options);
    out.push({
      table: {
        family: t.family,
        name: t.name,
        ...(t.handle !== undefined && { handle: t.handle }),
        ...(flags.length && { flags: flags.length === 1 ? flags[0] : flags }),
      },
    });
    for (const o of (rs.objects ?? []).filter((x) => x.family === t.family && x.table === t.name)) out.push(objectJson(o, options));
    const sets = rs.sets.filter((s) => s.family === t.family && s.table === t.name);
    for (const s of sets.filter((x) => !x.flags.includes('anonymous'))) {
      noteSetProblem(s, options);
      noteName(`table ${t.family} ${t.name} ${s.map !== undefined ? 'map' : 'set'} ${s.name}`, s.name, options);
      const kind = s.map !== undefined ? 'map' : 'set';
      out.push(
        unnamedType(s)
          ? {
              raw: {
                [kind]: {
                  family: s.family,
                  name: s.name,
                  table: s.table,
                  ...(s.handle !== undefined && { handle: s.handle }),
                  keyType: s.keyType,
                  keyLen: s.keyLen,
                  ...(s.map !== undefined && { dataType: s.dataType, dataLen: s.dataLen }),
                },
              },
            }
          : { [kind]: setJson(s, rs.ifnames) },
      );
    }
    for (const f of flowtablesOf(rs, t, options)) out.push({ raw: { flowtable: f } });
    const chains = rs.chains.filter((x) => x.family === t.family && x.table === t.name);
    for (const c of chains) {
      const j: Record<string, unknown> = { family: c.family, table: c.table, name: c.name };
      if (c.handle !== undefined) j.handle = c.handle;
      if (c.type !== undefined) j.type = c.type;
      if (c.hook !== undefined) j.hook = c.hook;
      // nft 1.0.6 leaves a netdev chain's device out of its JSON listing
      if (c.prio !== undefined) j.prio = c.prio;
      if (c.policy !== undefined) j.policy = c.policy;
      out.push({ chain: j });
    }
    for (const c of chains) {
      for (const r of rs.rules.filter((x) => x.family === t.family && x.table === t.name && x.chain === c.name)) {
        out.push({ rule: ruleJson(r, sets, rs, ruleProblems(r, options)) });
      }
    }
  }
  return { nftables: out };
}

/** One rule as `nft -j` writes it: family, table, chain, handle, comment, expr (statements). */
export function ruleJson(r: NftRule, sets?: readonly NftSet[], names?: RulesetNames, onRaw?: (s: Statement) => void): Record<string, unknown> {
  const j: Record<string, unknown> = { family: r.family, table: r.table, chain: r.chain };
  if (r.handle !== undefined) j.handle = r.handle;
  if (r.comment !== undefined) j.comment = r.comment;
  j.expr = ruleStatements(r.expr, { family: r.family, sets, ifnames: names?.ifnames, cgroups: names?.cgroups }).map((s) => noted(s, onRaw, true).json);
  return j;
}
