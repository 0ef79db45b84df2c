/**
 * xtables extensions run through nft_compat (net/netfilter/nft_compat.c),
 * the `target` and `match` expressions iptables-nft writes, and how nft
 * 1.0.6 lists them: through libxtables' translation of each extension
 * (iptables 1.8.9's), `xt target NAME` / `xt match NAME` for those it
 * cannot translate, and `{"xt": {"type": "target", "name": "MARK"}}` in
 * `nft -j` whatever the extension.
 *
 * ```c
 * // nf_tables_compat.h: enum nft_target_attributes, enum nft_match_attributes (the same numbers)
 * NFTA_TARGET_NAME / NFTA_MATCH_NAME   // NLA_NUL_STRING (at most NFT_COMPAT_NAME_MAX 32 with the NUL)
 * NFTA_TARGET_REV  / NFTA_MATCH_REV    // NLA_U32 (big-endian): the extension's revision
 * NFTA_TARGET_INFO / NFTA_MATCH_INFO   // NLA_BINARY: the extension's struct, host byte order, padded to 8 (XT_ALIGN)
 * ```
 *
 * The table below holds the translations synplug reproduces, each from the
 * extension's struct (quoted above its entry). An extension or a variant
 * not in it prints raw (`[ raw: target name TTL rev 0 ]`), never as
 * `xt target NAME`: that text loses the parameters and no nft reads it back.
 *
 * @module
 */
import { endianness } from 'node:os';
import { bin, str, u32be, type AttributeView } from '../netlink/attributes.js';
import { NetlinkDecodeError, UsageError } from '../netlink/errors.js';
import * as C from './constants.js';
import { L4_HEADERS } from './headers.js';
import { quoteProblem, REVERSED_RANGE, rawStatement, valueText, type Statement } from './print.js';
import { addressText } from './validate.js';

/** What both compat expressions carry. */
export interface XtExtension {
  /** NFTA_TARGET_NAME / NFTA_MATCH_NAME, e.g. `MARK`, `conntrack` */
  ext: string;
  /** NFTA_TARGET_REV / NFTA_MATCH_REV */
  rev: number;
  /** NFTA_TARGET_INFO / NFTA_MATCH_INFO, lowercase hex (host byte order, as the kernel keeps it) */
  info: string;
}

const LE = endianness() === 'LE';
/** Host-order reads of an xt struct (the kernel keeps them as the machine writes them). */
export const readU16 = (b: Buffer, off: number): number => (LE ? b.readUInt16LE(off) : b.readUInt16BE(off));
const readU32 = (b: Buffer, off: number): number => (LE ? b.readUInt32LE(off) : b.readUInt32BE(off));
const hex32 = (n: number): string => `0x${n.toString(16)}`;
const not32 = (n: number): number => ~n >>> 0;

/** The compat attributes, encoded (`what`: `target` or `match`, for messages). @throws {UsageError} a bad name, revision or info */
export function encodeXt(what: 'target' | 'match', e: XtExtension): Buffer[] {
  if (!e.ext || Buffer.byteLength(e.ext) >= C.NFT_COMPAT_NAME_MAX) {
    throw new UsageError(`xt ${what} name '${e.ext}': 1-${C.NFT_COMPAT_NAME_MAX - 1} bytes`);
  }
  if (!Number.isInteger(e.rev) || e.rev < 0 || e.rev > 0xffffffff) throw new UsageError(`xt ${what} revision ${e.rev} is not a u32`);
  if (!/^([0-9a-f]{2})*$/i.test(e.info)) throw new UsageError(`xt ${what} info '${e.info}' is not hex bytes`);
  return [str(C.NFTA_TARGET_NAME, e.ext), u32be(C.NFTA_TARGET_REV, e.rev), bin(C.NFTA_TARGET_INFO, Buffer.from(e.info, 'hex'))];
}

/** The compat attributes, decoded. @throws {NetlinkDecodeError} no name or no revision */
export function decodeXt(what: 'target' | 'match', l: AttributeView): XtExtension {
  const ext = l.str(C.NFTA_TARGET_NAME);
  if (ext === undefined) throw new NetlinkDecodeError(`${what} expression without its name (NFTA_${what.toUpperCase()}_NAME)`, l.offset);
  const rev = l.u32be(C.NFTA_TARGET_REV);
  if (rev === undefined) throw new NetlinkDecodeError(`${what} expression '${ext}' without its revision`, l.offset);
  return { ext, rev, info: (l.bin(C.NFTA_TARGET_INFO) ?? Buffer.alloc(0)).toString('hex') };
}

/** What a translation knows of the rule: its table's family, the transport protocol an earlier match established (`tcp`). */
export interface XtContext {
  family: string;
  /** the transport protocol a previous match established (`tcp`), if any */
  l4?: string;
  /** a previous match established one nft names no header of (`meta l4proto gre`) */
  l4Other?: boolean;
}

/**
 * What a translation gives: nft 1.0.6's text of it; `{ raw: why }` where nft's
 * words would mean another rule once `nft -f` reads them back (printed raw,
 * why named on stderr); `{ text, problem }`: nft's text, which `nft -f`
 * cannot read back (a `"` in a prefix); undefined for a variant not reproduced.
 */
export type XtText = string | { raw: string } | { text: string; problem: string } | undefined;

/** A translation: the struct's bytes (at least `size`) and the table's family to nft's text (see {@link XtText}). */
interface Translation {
  /** the revisions it reads */
  revs: readonly number[];
  /** the bytes of the struct it reads (before XT_ALIGN) */
  size: number;
  /** the families whose struct it is (REJECT's differs between ip and ip6) */
  families?: readonly string[];
  text(b: Buffer, rev: number, ctx: XtContext): XtText;
}

/**
 * A value `v` written into the bits of `mask`, as libxtables writes it: `SELF and KEEP` (`keep`: the bits
 * kept), `SELF or V`, `SELF xor V` or `SELF and KEEP xor V`.
 */
function maskedValue(self: string, v: number, mask: number, keep: number, fmt: (n: number) => string): string {
  if (v === 0) return `${self} and ${fmt(keep)}`;
  if (v === mask) return `${self} or ${fmt(v)}`;
  if (mask === 0) return `${self} xor ${fmt(v)}`;
  return `${self} and ${fmt(keep)} xor ${fmt(v)}`;
}

/** `meta mark set ...` / `ct mark set ...` of a mark and mask, as libxtables writes MARK's and CONNMARK's. */
function markSet(mark: number, mask: number, self: string): string {
  return mask === 0xffffffff ? hex32(mark) : maskedValue(self, mark, mask, not32(mask), hex32);
}

/**
 * struct xt_tos_target_info { __u8 tos_value, tos_mask; } (TOS revision 1), as libxt_TOS translates it in
 * every family: `ip6 dscp set ...` of the value and mask shifted to the DSCP's (`--or-tos 0x10`: `ip6 dscp set
 * ip6 dscp or 0x04`). The same rule only in ip6, where neither holds an ECN bit (TOS would set those, nft's
 * words leave them); nft -f reads none of those words back.
 */
function tosText(value: number, mask: number): XtText {
  if ((value | mask) & 0x03) return undefined;
  const hex8 = (n: number): string => `0x${n.toString(16).padStart(2, '0')}`;
  return { text: `ip6 dscp set ${maskedValue('ip6 dscp', value >> 2, mask >> 2, (~mask & 0xff) >> 2, hex8)}`, problem: 'nft -f cannot read this back' };
}

/** syslog levels (LOG's `level`), by value; 4 (warn) is LOG's default and is not printed. */
const LOG_LEVELS = ['emerg', 'alert', 'crit', 'err', 'warn', 'notice', 'info', 'debug'];
/** linux/netfilter/xt_LOG.h: XT_LOG_TCPSEQ, _TCPOPT, _IPOPT, _UID, _MACDECODE; XT_LOG_MASK all of them */
const XT_LOG_TCPSEQ = 0x01;
const XT_LOG_TCPOPT = 0x02;
const XT_LOG_IPOPT = 0x04;
const XT_LOG_UID = 0x08;
const XT_LOG_MACDECODE = 0x20;
const XT_LOG_MASK = 0x2f;

/** linux/netfilter_ipv4/ipt_REJECT.h `enum ipt_reject_with`, as nft names each in `reject with icmp type ...` */
const IPT_REJECT_WITH: Readonly<Record<number, string>> = {
  0: 'net-unreachable',
  1: 'host-unreachable',
  2: 'prot-unreachable',
  5: 'net-prohibited',
  6: 'host-prohibited',
  8: 'admin-prohibited',
};
/** IPT_ICMP_PORT_UNREACHABLE (REJECT's default: plain `reject`), IPT_TCP_RESET */
const IPT_ICMP_PORT_UNREACHABLE = 3;
const IPT_TCP_RESET = 7;
/** linux/netfilter_ipv6/ip6t_REJECT.h `enum ip6t_reject_with`, as nft names each in `reject with icmpv6 type ...` */
const IP6T_REJECT_WITH: Readonly<Record<number, string>> = {
  0: 'no-route',
  1: 'admin-prohibited',
  3: 'addr-unreachable',
  7: 'policy-fail',
  8: 'reject-route',
};
/** IP6T_ICMP6_PORT_UNREACH (plain `reject`), IP6T_TCP_RESET */
const IP6T_ICMP6_PORT_UNREACH = 4;
const IP6T_TCP_RESET = 6;
/** REJECT's `with` values per family: the default, tcp reset, and the icmp types (ipt_REJECT.h, ip6t_REJECT.h) */
const REJECT_WITH: Readonly<Record<string, { plain: number; reset: number; icmp: string; names: Readonly<Record<number, string>> }>> = {
  ip: { plain: IPT_ICMP_PORT_UNREACHABLE, reset: IPT_TCP_RESET, icmp: 'icmp', names: IPT_REJECT_WITH },
  ip6: { plain: IP6T_ICMP6_PORT_UNREACH, reset: IP6T_TCP_RESET, icmp: 'icmpv6', names: IP6T_REJECT_WITH },
};

/** linux/netfilter_ipv4/ipt_ttl.h, linux/netfilter_ipv6/ip6t_hl.h: modes EQ, NE, LT, GT, as libxtables writes them */
const TTL_MODES = ['', '!= ', 'lt ', 'gt '];
/** `ip ttl gt 5`, `ip6 hoplimit != 5`: struct ipt_ttl_info / ip6t_hl_info { __u8 mode; __u8 ttl; } */
const ttlText =
  (field: string) =>
  (b: Buffer): string | undefined =>
    TTL_MODES[b[0]] === undefined ? undefined : `${field} ${TTL_MODES[b[0]]}${b[1]}`;

/** linux/netfilter/nf_nat.h: NF_NAT_RANGE_MAP_IPS, _PROTO_SPECIFIED, _PROTO_RANDOM, _PERSISTENT, _PROTO_RANDOM_FULLY */
const NAT_MAP_IPS = 0x01;
const NAT_PROTO_SPECIFIED = 0x02;
const NAT_PROTO_RANDOM = 0x04;
const NAT_PERSISTENT = 0x08;
const NAT_PROTO_RANDOM_FULLY = 0x10;

/**
 * One NAT range: IPv4's rev 0 of SNAT, DNAT, MASQUERADE and REDIRECT is a
 * `struct nf_nat_ipv4_multi_range_compat`; rev 1 (and IPv6's MASQUERADE and
 * REDIRECT) a `struct nf_nat_range`, rev 2 a `struct nf_nat_range2` (the same
 * and a base port), whose addresses are IPv4's first 4 bytes, IPv6's 16:
 * ```c
 * struct nf_nat_ipv4_multi_range_compat { unsigned int rangesize; struct nf_nat_ipv4_range range[1]; };
 * struct nf_nat_ipv4_range { unsigned int flags; __be32 min_ip, max_ip; union nf_conntrack_man_proto min, max; }; // ports __be16
 * struct nf_nat_range2 { unsigned int flags; union nf_inet_addr min_addr, max_addr;
 *                        union nf_conntrack_man_proto min_proto, max_proto, base_proto; };
 * ```
 */
function natRange(b: Buffer, rev: number, family: string): { flags: number; minIp: Buffer; maxIp: Buffer; minPort: number; maxPort: number } | undefined {
  if (rev === 0 && family === 'ip') {
    if (readU32(b, 0) !== 1) return undefined;
    return { flags: readU32(b, 4), minIp: b.subarray(8, 12), maxIp: b.subarray(12, 16), minPort: b.readUInt16BE(16), maxPort: b.readUInt16BE(18) };
  }
  if (b.length < 40) return undefined;
  const n = family === 'ip6' ? 16 : 4;
  return { flags: readU32(b, 0), minIp: b.subarray(4, 4 + n), maxIp: b.subarray(20, 20 + n), minPort: b.readUInt16BE(36), maxPort: b.readUInt16BE(38) };
}

/**
 * `to 1.2.3.4-1.2.3.5:80-90 random,persistent` of SNAT/DNAT, `to :80-90 random` of MASQUERADE/REDIRECT (`addresses` false);
 * an IPv6 address in brackets before a port (`to [fd00::2]:8080`; a range of them and a port not reproduced).
 */
function natText(verb: string, b: Buffer, rev: number, ctx: XtContext, addresses: boolean): string | undefined {
  const r = natRange(b, rev, ctx.family);
  if (!r) return undefined;
  const known = NAT_MAP_IPS | NAT_PROTO_SPECIFIED | NAT_PROTO_RANDOM | NAT_PERSISTENT | NAT_PROTO_RANDOM_FULLY;
  if (r.flags & ~known || (!addresses && r.flags & NAT_MAP_IPS)) return undefined;
  const v6 = ctx.family === 'ip6';
  const bracket = v6 && r.flags & NAT_PROTO_SPECIFIED;
  if (bracket && !r.maxIp.equals(r.minIp)) return undefined;
  let to = '';
  if (r.flags & NAT_MAP_IPS) to += bracket ? `[${addressText(r.minIp)}]` : addressText(r.minIp) + (r.maxIp.equals(r.minIp) ? '' : `-${addressText(r.maxIp)}`);
  if (r.flags & NAT_PROTO_SPECIFIED) to += `:${r.minPort}${r.maxPort === r.minPort ? '' : `-${r.maxPort}`}`;
  if (addresses && !(r.flags & NAT_MAP_IPS)) return undefined;
  const words = [
    r.flags & NAT_PROTO_RANDOM ? 'random' : '',
    r.flags & NAT_PROTO_RANDOM_FULLY ? 'fully-random' : '',
    r.flags & NAT_PERSISTENT ? 'persistent' : '',
  ].filter(Boolean);
  return `${verb}${to ? ` to ${to}` : ''}${words.length ? ` ${words.join(',')}` : ''}`;
}

/** linux/netfilter/xt_CT.h: XT_CT_NOTRACK (`-j CT --notrack`), XT_CT_NOTRACK_ALIAS (`-j NOTRACK` written as CT) */
const XT_CT_NOTRACK = 1 << 0;
const XT_CT_NOTRACK_ALIAS = 1 << 1;
/** linux/netfilter/xt_TCPMSS.h: XT_TCPMSS_CLAMP_PMTU (`--clamp-mss-to-pmtu`) */
const XT_TCPMSS_CLAMP_PMTU = 0xffff;
/** linux/netfilter/xt_connmark.h: XT_CONNMARK_SET, XT_CONNMARK_SAVE, XT_CONNMARK_RESTORE */
const XT_CONNMARK_SET = 0;
const XT_CONNMARK_SAVE = 1;
const XT_CONNMARK_RESTORE = 2;

/** linux/netfilter_bridge/ebt_mark_t.h: the mark operation in the high bits of `target`, the verdict in its EBT_VERDICT_BITS */
const EBT_MARK_OPS: ReadonlyMap<number, string> = new Map([
  [0xfffffff0, ''],
  [0xffffffe0, 'meta mark or '],
  [0xffffffd0, 'meta mark and '],
  [0xffffffc0, 'meta mark xor '],
]);
const EBT_VERDICT_BITS = 0xf;
/** linux/netfilter_bridge/ebtables.h: EBT_ACCEPT -1, EBT_DROP -2, EBT_CONTINUE -3, EBT_RETURN -4 (index -v - 1) */
const EBT_VERDICTS = ['accept', 'drop', 'continue', 'return'];
/** nft's names of the packet types (linux/if_packet.h PACKET_HOST, _BROADCAST, _MULTICAST, _OTHERHOST) */
const PKTTYPES = ['host', 'broadcast', 'multicast', 'other'];
/** linux/netfilter_bridge/ebt_vlan.h: bitmask and invflags bits EBT_VLAN_ID, EBT_VLAN_PRIO, EBT_VLAN_ENCAP */
const EBT_VLAN_ID = 0x01;
const EBT_VLAN_PRIO = 0x02;
const EBT_VLAN_ENCAP = 0x04;
/** linux/netfilter_bridge/ebt_nflog.h: EBT_NFLOG_COPY_LEN (`--nflog-range`), EBT_NFLOG_DEFAULT_THRESHOLD */
const EBT_NFLOG_COPY_LEN = 0x1;
const EBT_NFLOG_DEFAULT_THRESHOLD = 1;

/** linux/netfilter_bridge/ebt_nat.h: NAT_ARP_BIT (cleared: snat rewrites ARP's sender address too) */
const EBT_NAT_ARP_BIT = 0x10;

/** An ebtables dnat or snat target's text; undefined for --snat-arp or a target that is not a verdict. */
function ebtNatText(word: string, b: Buffer, snat: boolean): string | undefined {
  let target = readU32(b, 8);
  if (snat) {
    if (!(target & EBT_NAT_ARP_BIT)) return undefined;
    target = (target | ~EBT_VERDICT_BITS) >>> 0;
  }
  const verdict = target >= 0xfffffffc ? EBT_VERDICTS[-(target | 0) - 1] : undefined;
  const mac = [...b.subarray(0, 6)].map((x) => x.toString(16)).join(':');
  return verdict && `ether ${word} set ${mac} ${verdict}`;
}

/** libebt_log.c's eight_priority names by syslog level; LOG_DEFAULT_LEVEL (info) it does not write */
const EBT_LOG_LEVELS = ['emerg', 'alert', 'crit', 'error', 'warning', 'notice', 'info', 'debug'];
const EBT_LOG_DEFAULT_LEVEL = 6;
/** linux/netfilter_bridge/ebt_log.h: EBT_LOG_IP, EBT_LOG_ARP, EBT_LOG_IP6 */
const EBT_LOG_BITS = 0x01 | 0x02 | 0x08;
/** linux/netfilter_bridge/ebt_ip.h: bitmask and invflags bits */
const EBT_IP_SOURCE = 0x01;
const EBT_IP_DEST = 0x02;
const EBT_IP_TOS = 0x04;
const EBT_IP_PROTO = 0x08;
const EBT_IP_SPORT = 0x10;
const EBT_IP_DPORT = 0x20;
const EBT_IP_ICMP = 0x40;
/** libebt_ip.c's brip_xlate_proto_to_name: the protocols whose ports it names (`tcp dport 22`) */
const EBT_IP_PORT_PROTOS: Readonly<Record<number, string>> = { 6: 'tcp', 17: 'udp', 33: 'dccp', 132: 'sctp', 136: 'udplite' };
/** /etc/protocols' names (getprotobynumber, which libebt_ip writes `ip protocol` with) of the common protocols */
const PROTOCOL_NAMES: Readonly<Record<number, string>> = {
  1: 'icmp',
  2: 'igmp',
  6: 'tcp',
  17: 'udp',
  33: 'dccp',
  47: 'gre',
  50: 'esp',
  51: 'ah',
  58: 'ipv6-icmp',
  132: 'sctp',
  136: 'udplite',
};

/**
 * ebtables' ip match, struct ebt_ip_info { __be32 saddr, daddr, smsk, dmsk; __u8 tos, protocol, bitmask, invflags;
 * __u16 sport[2], dport[2]; } (ports host order), as libebt_ip.c's brip_xlate (iptables 1.8.9) writes it:
 * `ip saddr 169.254.0.0/16`, `ip protocol udp`, `tcp dport 22` (a port's protocol named once), `icmp type 8 icmp
 * code 0`, `ip saddr 169.254.0.0/255.255.0.255` (a mask that is no prefix). --ip-tos, --ip-igmp-type, a protocol not in the tables above, ports or icmp
 * types of an inverted protocol, and an inverted icmp type with codes (the kernel inverts the pair, libxtables
 * each): raw.
 */
/**
 * The ports, or the icmp type and code, of ebtables' ip and ip6 matches as nft 1.0.6 lists them: both keep
 * sport[2] (icmp type[2]) at `at` and dport[2] (icmp code[2]) 4 bytes on, host order.
 */
function ebtL4Parts(
  b: Buffer,
  at: number,
  bitmask: number,
  inv: number,
  pname: string | undefined,
  icmp: 'icmp' | 'icmpv6' | undefined,
  problems: string[],
): string[] {
  const range = (lo: number, hi: number) => {
    if (lo > hi && !problems.includes(REVERSED_RANGE)) problems.push(REVERSED_RANGE);
    return `${lo}${hi === lo ? '' : `-${hi}`}`;
  };
  const parts = (
    [
      [EBT_IP_SPORT, 'sport', at],
      [EBT_IP_DPORT, 'dport', at + 4],
    ] as const
  )
    .filter(([bit]) => bitmask & bit)
    .map(([bit, word, o]) => `${pname} ${word} ${inv & bit ? '!= ' : ''}${range(readU16(b, o), readU16(b, o + 2))}`);
  if (icmp) {
    parts.push(`${icmp} type ${inv & EBT_IP_ICMP ? '!= ' : ''}${range(b[at], b[at + 1])}`);
    if (!(b[at + 4] === 0 && b[at + 5] === 0xff)) parts.push(`${icmp} code ${range(b[at + 4], b[at + 5])}`);
  }
  return parts;
}

/**
 * The problem of an address under a mask that is no prefix, as nft 1.0.6 lists libxtables' translation (`ip
 * saddr 10.0.0.0/255.0.255.0`): `nft -f` refuses that syntax (it reads `ip saddr & 255.0.255.0 == 10.0.0.0`).
 */
const MASK_NO_PREFIX = (field: string, addr: string, mask: string): string =>
  `a mask that is no prefix (${mask}): nft -f cannot read this back (a syntax error; it reads ${field} & ${mask} == ${addr})`;

/** `parts` joined, with the first of `problems` (a text nft lists that nft -f cannot read) as its problem. */
function partsWithProblems(parts: readonly string[], problems: readonly string[]): XtText {
  const text = parts.join(' ');
  return problems.length ? { text, problem: problems.join('; ') } : text;
}

function ebtIpText(b: Buffer): XtText {
  const problems: string[] = [];
  const [proto, bitmask, inv] = [b[17], b[18], b[19]];
  if (bitmask & EBT_IP_TOS) return { raw: RAW_WHY.ebtIpTos };
  const known = EBT_IP_SOURCE | EBT_IP_DEST | EBT_IP_PROTO | EBT_IP_SPORT | EBT_IP_DPORT | EBT_IP_ICMP;
  if (!bitmask || bitmask & ~known || inv & ~bitmask) return undefined;
  const icmp = bitmask & EBT_IP_ICMP;
  const [codeLo, codeHi] = [b[24], b[25]];
  const allCodes = codeLo === 0 && codeHi === 0xff;
  if (icmp && (inv & EBT_IP_PROTO || (inv & EBT_IP_ICMP && !allCodes))) return undefined;
  const ports = bitmask & (EBT_IP_SPORT | EBT_IP_DPORT);
  const pname = bitmask & EBT_IP_PROTO && !(inv & EBT_IP_PROTO) ? EBT_IP_PORT_PROTOS[proto] : undefined;
  if (ports && !pname) return undefined;
  const parts: string[] = [];
  for (const [bit, word, at] of [
    [EBT_IP_SOURCE, 'saddr', 0],
    [EBT_IP_DEST, 'daddr', 4],
  ] as const) {
    if (!(bitmask & bit)) continue;
    // xtables_ipmask_to_numeric: `/16`, nothing for /32, a mask that is no prefix dotted (`/255.255.0.255`);
    // an address with bits outside its mask (the kernel compares it masked: it never matches) raw
    const [addr, mask] = [b.readUInt32BE(at), b.readUInt32BE(at + 8)];
    if ((addr & ~mask) >>> 0) return undefined;
    const bits = prefixOf(b.subarray(at + 8, at + 12));
    const suffix = bits === undefined ? `/${addressText(b.subarray(at + 8, at + 12))}` : bits === 32 ? '' : `/${bits}`;
    if (bits === undefined) problems.push(MASK_NO_PREFIX(`ip ${word}`, addressText(b.subarray(at, at + 4)), addressText(b.subarray(at + 8, at + 12))));
    parts.push(`ip ${word} ${inv & bit ? '!= ' : ''}${addressText(b.subarray(at, at + 4))}${suffix}`);
  }
  if (bitmask & EBT_IP_PROTO && !ports && !icmp) {
    const name = PROTOCOL_NAMES[proto];
    if (name === undefined) return undefined;
    parts.push(`ip protocol ${inv & EBT_IP_PROTO ? '!= ' : ''}${name}`);
  }
  return partsWithProblems([...parts, ...ebtL4Parts(b, 20, bitmask, inv, pname, icmp ? 'icmp' : undefined, problems)], problems);
}

/**
 * ebtables' ip6 match, struct ebt_ip6_info { struct in6_addr saddr, daddr, smsk, dmsk; __u8 tclass, protocol, bitmask,
 * invflags; __u16 sport[2] (icmpv6_type[2]), dport[2] (icmpv6_code[2]); } (the bits ebt_ip's, EBT_IP6_TCLASS in TOS's place),
 * as libebt_ip6.c's brip6_xlate (iptables 1.8.9) writes it: `ip6 saddr fd00::/ffff:0:ffff::`, `meta l4proto udp`,
 * `tcp dport 22`, `icmpv6 type 128`, and `ether type ip6` first when no address, tclass or icmpv6 type says it.
 * Raw as ebtIpText's: --ip6-tclass (written as `ip6 dscp` of its low bits), a protocol not in the tables, ports or
 * icmpv6 types of an inverted protocol, an inverted icmpv6 type with codes, an address outside its mask.
 */
function ebtIp6Text(b: Buffer): XtText {
  const problems: string[] = [];
  const [proto, bitmask, inv] = [b[65], b[66], b[67]];
  const known = EBT_IP_SOURCE | EBT_IP_DEST | EBT_IP_PROTO | EBT_IP_SPORT | EBT_IP_DPORT | EBT_IP_ICMP;
  if (!bitmask || bitmask & ~known || inv & ~bitmask) return undefined;
  const icmp = bitmask & EBT_IP_ICMP;
  const [codeLo, codeHi] = [b[72], b[73]];
  const allCodes = codeLo === 0 && codeHi === 0xff;
  const proto6 = bitmask & EBT_IP_PROTO && !(inv & EBT_IP_PROTO);
  if (icmp && (!proto6 || proto !== 58 || (inv & EBT_IP_ICMP && !allCodes))) return undefined;
  const ports = bitmask & (EBT_IP_SPORT | EBT_IP_DPORT);
  const pname = proto6 ? EBT_IP_PORT_PROTOS[proto] : undefined;
  if (ports && !pname) return undefined;
  const parts: string[] = [];
  if (!(bitmask & (EBT_IP_SOURCE | EBT_IP_DEST | EBT_IP_ICMP))) parts.push('ether type ip6');
  for (const [bit, word, at] of [
    [EBT_IP_SOURCE, 'saddr', 0],
    [EBT_IP_DEST, 'daddr', 16],
  ] as const) {
    if (!(bitmask & bit)) continue;
    const [addr, mask] = [b.subarray(at, at + 16), b.subarray(at + 32, at + 48)];
    if (addr.some((x, i) => x & ~mask[i])) return undefined;
    // xtables_ip6mask_to_numeric: `/64`, nothing for /128, a mask that is no prefix as an address
    const bits = prefixOf(mask);
    const suffix = bits === undefined ? `/${addressText(mask)}` : bits === 128 ? '' : `/${bits}`;
    if (bits === undefined) problems.push(MASK_NO_PREFIX(`ip6 ${word}`, addressText(addr), addressText(mask)));
    parts.push(`ip6 ${word} ${inv & bit ? '!= ' : ''}${addressText(addr)}${suffix}`);
  }
  if (bitmask & EBT_IP_PROTO && !((ports || icmp) && proto6)) {
    const name = PROTOCOL_NAMES[proto];
    if (name === undefined) return undefined;
    parts.push(`meta l4proto ${inv & EBT_IP_PROTO ? '!= ' : ''}${name}`);
  }
  return partsWithProblems([...parts, ...ebtL4Parts(b, 68, bitmask, inv, pname, icmp ? 'icmpv6' : undefined, problems)], problems);
}

/** linux/netfilter_bridge/ebt_mark_m.h: EBT_MARK_AND, EBT_MARK_OR */
const EBT_MARK_AND = 0x01;
const EBT_MARK_OR = 0x02;

/**
 * ebtables' mark match, struct ebt_mark_m_info { unsigned long mark, mask; __u8 invert, bitmask; } (64-bit
 * longs here), as libebt_mark_m.c's brmark_m_xlate writes it: `meta mark 0x5`, `meta mark and 0xff 0x5`,
 * `--mark /0x4` (any of the bits) `meta mark and 0x4 != 0`.
 */
function ebtMarkText(b: Buffer): string | undefined {
  const read64 = (at: number): bigint => (LE ? b.readBigUInt64LE(at) : b.readBigUInt64BE(at));
  const [mark, mask, invert, bitmask] = [read64(0), read64(8), b[16], b[17]];
  if (mark > 0xffffffffn || mask > 0xffffffffn || invert > 1 || (bitmask !== EBT_MARK_AND && bitmask !== EBT_MARK_OR)) return undefined;
  const hex = (n: bigint): string => `0x${n.toString(16)}`;
  if (bitmask === EBT_MARK_OR) return `meta mark and ${hex(mask)} ${invert ? '' : '!= '}0`;
  return `meta mark ${mask === 0xffffffffn ? '' : `and ${hex(mask)} `}${invert ? '!= ' : ''}${hex(mark)}`;
}

/** ebtables' targets nft 1.0.6 calls watchers (`{"xt": {"type": "watcher", ...}}` in `nft -j`) */
export const EBT_WATCHERS: ReadonlySet<string> = new Set(['log', 'nflog']);

/** The targets whose translation synplug reproduces, by name. */
const TARGETS: Readonly<Record<string, Translation>> = {
  // struct xt_mark_tginfo2 { __u32 mark, mask; };
  MARK: { revs: [2], size: 8, text: (b) => `meta mark set ${markSet(readU32(b, 0), readU32(b, 4), 'mark')}` },
  // struct xt_connmark_tginfo1 { __u32 ctmark, ctmask, nfmask; __u8 mode; };
  // struct xt_connmark_tginfo2 { __u32 ctmark, ctmask, nfmask; __u8 shift_dir, shift_bits, mode; };
  // The kernel sets ct mark = (ct mark & ~ctmask) ^ ctmark (--set-xmark), saves ct mark =
  // (ct mark & ~ctmask) ^ (mark & nfmask), restores mark = (mark & ~nfmask) ^ (ct mark & ctmask).
  // libxtables' text of a masked save or restore (`ct mark set mark and 0xff`) and of a general
  // --set-xmark (`ct mark set ct mark xor 0x3 and 0xfffffff0`) means something else: those stay
  // raw, as does a shift.
  CONNMARK: {
    revs: [1, 2],
    size: 13,
    text(b, rev) {
      const [ctmark, ctmask, nfmask] = [readU32(b, 0), readU32(b, 4), readU32(b, 8)];
      if (rev === 2 && (b.length < 15 || b[13] !== 0)) return undefined;
      const mode = rev === 1 ? b[12] : b[14];
      if (mode === XT_CONNMARK_SET) {
        const general = ctmark !== 0 && ctmask !== 0 && ctmark !== ctmask && ctmask !== 0xffffffff;
        return general ? { raw: RAW_WHY.connmarkXmark } : `ct mark set ${markSet(ctmark, ctmask, 'ct mark')}`;
      }
      if (nfmask !== 0xffffffff || ctmask !== 0xffffffff) return undefined;
      if (mode === XT_CONNMARK_SAVE) return 'ct mark set mark';
      if (mode === XT_CONNMARK_RESTORE) return 'meta mark set ct mark';
      return undefined;
    },
  },
  // struct xt_log_info { unsigned char level; unsigned char logflags; char prefix[30]; };
  LOG: {
    revs: [0],
    size: 32,
    text(b) {
      const [level, flags] = [b[0], b[1]];
      if (level >= LOG_LEVELS.length || flags & ~XT_LOG_MASK) return undefined;
      const nul = b.indexOf(0, 2);
      const prefix = b.subarray(2, nul < 0 || nul > 32 ? 32 : nul).toString('utf8');
      let t = 'log';
      if (prefix) t += ` prefix "${prefix}"`;
      if (level !== 4) t += ` level ${LOG_LEVELS[level]}`;
      if ((flags & XT_LOG_MASK) === XT_LOG_MASK) return logPrefixed(`${t} flags all`, prefix);
      const tcp = [flags & XT_LOG_TCPSEQ ? 'sequence' : '', flags & XT_LOG_TCPOPT ? 'options' : ''].filter(Boolean);
      if (tcp.length) t += ` flags tcp ${tcp.join(',')}`;
      if (flags & XT_LOG_IPOPT) t += ' flags ip options';
      if (flags & XT_LOG_UID) t += ' flags skuid';
      if (flags & XT_LOG_MACDECODE) t += ' flags ether';
      return logPrefixed(t, prefix);
    },
  },
  // struct ipt_reject_info / ip6t_reject_info { __u32 with; };
  REJECT: {
    revs: [0],
    size: 4,
    families: ['ip', 'ip6'],
    text(b, _rev, ctx) {
      const w = readU32(b, 0);
      const r = REJECT_WITH[ctx.family];
      if (w === r.plain) return 'reject';
      if (w === r.reset) return 'reject with tcp reset';
      return r.names[w] !== undefined ? `reject with ${r.icmp} type ${r.names[w]}` : undefined;
    },
  },
  // ebtables': struct ebt_mark_t_info { unsigned long mark; int target; } (a 64-bit long here):
  // `meta mark set 0x5 accept`, `meta mark set meta mark or 0x5 continue`
  mark: {
    revs: [0],
    size: 12,
    families: ['bridge'],
    text(b) {
      const target = readU32(b, 8);
      const op = EBT_MARK_OPS.get((target & ~EBT_VERDICT_BITS) >>> 0);
      const verdict = EBT_VERDICTS[-(target | ~EBT_VERDICT_BITS) - 1];
      const mark = LE ? b.readBigUInt64LE(0) : b.readBigUInt64BE(0);
      return op === undefined || verdict === undefined ? undefined : `meta mark set ${op}0x${mark.toString(16)} ${verdict}`;
    },
  },
  // ebtables': struct ebt_nat_info { unsigned char mac[ETH_ALEN]; int target; }, as libebt_dnat.c / libebt_snat.c
  // write it: `ether daddr set 0:11:22:33:44:55 accept` (ether_ntoa's unpadded bytes). snat's --snat-arp (NAT_ARP_BIT
  // cleared) nft lists as `xt target snat`; ebtables' redirect, which libebt_redirect writes `meta set pkttype host`
  // (without its accept, and without the new destination address), raw
  dnat: { revs: [0], size: 12, families: ['bridge'], text: (b) => ebtNatText('daddr', b, false) },
  snat: { revs: [0], size: 12, families: ['bridge'], text: (b) => ebtNatText('saddr', b, true) },
  // ebtables': struct ebt_log_info { __u8 loglevel; __u8 prefix[30]; __u32 bitmask; }, as libebt_log.c's brlog_xlate
  // writes it: its level names (`error`, `warning`: nft's text, which nft -f refuses, so named as a problem), none
  // for info (its default; nft -f reads no level as warn, so raw), always `flags ether` (the EBT_LOG_IP, _ARP, _IP6
  // bits it leaves out: nft's log decodes the upper header anyway)
  log: {
    revs: [0],
    size: 36,
    families: ['bridge'],
    text(b) {
      const [level, bitmask] = [b[0], readU32(b, 32)];
      if (level >= EBT_LOG_LEVELS.length || bitmask & ~EBT_LOG_BITS) return undefined;
      const nul = b.indexOf(0, 1);
      const prefix = b.subarray(1, nul < 0 || nul > 31 ? 31 : nul).toString('utf8');
      // info (its default) nft lists without a level, which nft -f reads as warn: raw
      if (level === EBT_LOG_DEFAULT_LEVEL) return { raw: 'log level info: nft lists no level, which nft -f reads as level warn' };
      const t = `log${prefix ? ` prefix "${prefix}"` : ''} level ${EBT_LOG_LEVELS[level]} flags ether`;
      // `error` and `warning`, libebt_log's names, are no level nft -f reads (its are `err`, `warn`)
      if (!LOG_LEVELS.includes(EBT_LOG_LEVELS[level]))
        return { text: t, problem: `log level ${EBT_LOG_LEVELS[level]}: nft -f cannot read this back (its level is ${LOG_LEVELS[level]})` };
      return logPrefixed(t, prefix);
    },
  },
  // ebtables': struct ebt_nflog_info { __u32 len; __u16 group, threshold, flags, pad; char prefix[64]; }
  nflog: {
    revs: [0],
    size: 76,
    families: ['bridge'],
    text(b) {
      const [len, group, threshold, flags] = [readU32(b, 0), readU16(b, 4), readU16(b, 6), readU16(b, 8)];
      // a length without EBT_NFLOG_COPY_LEN: nft 1.0.6 lists a snaplen the kernel does not apply; raw
      if (flags & ~EBT_NFLOG_COPY_LEN || (len !== 0 && !(flags & EBT_NFLOG_COPY_LEN))) return undefined;
      const nul = b.indexOf(0, 12);
      const prefix = b.subarray(12, nul < 0 || nul > 76 ? 76 : nul).toString('utf8');
      const t = [
        'log',
        prefix ? `prefix "${prefix}"` : '',
        `group ${group}`,
        flags & EBT_NFLOG_COPY_LEN ? `snaplen ${len}` : '',
        threshold !== EBT_NFLOG_DEFAULT_THRESHOLD ? `queue-threshold ${threshold}` : '',
      ]
        .filter(Boolean)
        .join(' ');
      return logPrefixed(t, prefix);
    },
  },
  // struct xt_classify_target_info { __u32 priority; }: `meta priority set 1:10` (hex), `root`, `none`
  CLASSIFY: {
    revs: [0],
    size: 4,
    text(b) {
      const p = readU32(b, 0);
      return `meta priority set ${p === 0xffffffff ? 'root' : p === 0 ? 'none' : `${(p >>> 16).toString(16)}:${(p & 0xffff).toString(16)}`}`;
    },
  },
  SNAT: { revs: [0, 1, 2], size: 20, families: ['ip', 'ip6'], text: (b, rev, ctx) => natText('snat', b, rev, ctx, true) },
  DNAT: { revs: [0, 1, 2], size: 20, families: ['ip', 'ip6'], text: (b, rev, ctx) => natText('dnat', b, rev, ctx, true) },
  MASQUERADE: { revs: [0], size: 20, families: ['ip', 'ip6'], text: (b, rev, ctx) => natText('masquerade', b, rev, ctx, false) },
  REDIRECT: { revs: [0], size: 20, families: ['ip', 'ip6'], text: (b, rev, ctx) => natText('redirect', b, rev, ctx, false) },
  // struct xt_ct_target_info(_v1) { __u16 flags; __u16 zone; __u32 ct_events; __u32 exp_events; char helper[16]; ... };
  // only `--notrack` (XT_CT_NOTRACK, maybe XT_CT_NOTRACK_ALIAS, nothing else set; nft: `notrack`);
  // other CT targets nft lists as `xt target CT`
  CT: {
    revs: [1, 2],
    size: 28,
    text(b) {
      const flags = readU16(b, 0);
      const only = (flags & XT_CT_NOTRACK) !== 0 && (flags & ~(XT_CT_NOTRACK | XT_CT_NOTRACK_ALIAS)) === 0;
      return only && b.subarray(2, 28).every((x) => x === 0) ? 'notrack' : undefined;
    },
  },
  // ip6 only, where TOS leaves the ECN bits alone (tosText); elsewhere raw (RAW_WHY)
  TOS: { revs: [1], size: 2, families: ['ip6'], text: (b) => tosText(b[0], b[1]) },
  // struct xt_synproxy_info { __u8 options, wscale; __u16 mss; }, as libxt_SYNPROXY.c writes it: `synproxy sack-perm
  // timestamp wscale 7 mss 1460 ecn` (XT_SYNPROXY_OPT_MSS 0x01, _WSCALE 0x02, _SACK_PERM 0x04, _TIMESTAMP 0x08, _ECN 0x10)
  SYNPROXY: {
    revs: [0],
    size: 4,
    text(b) {
      const [opts, wscale, mss] = [b[0], b[1], readU16(b, 2)];
      if (opts & ~0x1f) return undefined;
      const words = [
        opts & 0x04 ? 'sack-perm' : '',
        opts & 0x08 ? 'timestamp' : '',
        opts & 0x02 ? `wscale ${wscale}` : '',
        opts & 0x01 ? `mss ${mss}` : '',
        opts & 0x10 ? 'ecn' : '',
      ];
      return ['synproxy', ...words.filter(Boolean)].join(' ');
    },
  },
  // struct xt_audit_info { __u8 type; }: `log level audit` (the kernel ignores the type since 4.11)
  AUDIT: { revs: [0], size: 1, text: (b) => (b[0] <= 2 ? 'log level audit' : undefined) },
  // struct xt_tcpmss_info { __u16 mss; };
  TCPMSS: {
    revs: [0],
    size: 2,
    text: (b) => `tcp option maxseg size set ${readU16(b, 0) === XT_TCPMSS_CLAMP_PMTU ? 'rt mtu' : readU16(b, 0)}`,
  },
  // struct xt_tee_tginfo { union nf_inet_addr gw; char oif[16]; ... }: libxt_TEE.c's tee_tg_xlate / tee_tg6_xlate, nft 1.0.6
  // asking for numbers (`dup to 127.0.0.5 device lo`: no resolver, whatever /etc/hosts names the address)
  TEE: {
    revs: [1],
    size: 32,
    families: ['ip', 'ip6'],
    text(b, _rev, ctx) {
      const oif = b
        .subarray(16, 32)
        .toString('latin1')
        .replace(/\0[\s\S]*$/, '');
      if (!/^[\x21-\x7e]*$/.test(oif)) return undefined;
      return `dup to ${addressText(b.subarray(0, ctx.family === 'ip6' ? 16 : 4))}${oif ? ` device ${oif}` : ''}`;
    },
  },
  // struct xt_DSCP_info { __u8 dscp; }: libxt_DSCP.c's DSCP_xlate / DSCP_xlate6 (`ip6 dscp set 0x0a`)
  DSCP: {
    revs: [0],
    size: 1,
    families: ['ip', 'ip6'],
    text: (b, _rev, ctx) => (b[0] < 64 ? `${ctx.family} dscp set 0x${b[0].toString(16).padStart(2, '0')}` : undefined),
  },
};

/**
 * linux/netfilter/xt_conntrack.h: the match_flags (and invert_flags) bits. XT_CONNTRACK_STATE_ALIAS marks
 * `-m state`, which iptables writes as conntrack; `--ctdir REPLY` is XT_CONNTRACK_DIRECTION inverted.
 */
const XT_CONNTRACK_STATE = 1 << 0;
const XT_CONNTRACK_PROTO = 1 << 1;
const XT_CONNTRACK_ORIGSRC = 1 << 2;
const XT_CONNTRACK_ORIGDST = 1 << 3;
const XT_CONNTRACK_REPLSRC = 1 << 4;
const XT_CONNTRACK_REPLDST = 1 << 5;
const XT_CONNTRACK_STATUS = 1 << 6;
const XT_CONNTRACK_EXPIRES = 1 << 7;
const XT_CONNTRACK_ORIGSRC_PORT = 1 << 8;
const XT_CONNTRACK_ORIGDST_PORT = 1 << 9;
const XT_CONNTRACK_REPLSRC_PORT = 1 << 10;
const XT_CONNTRACK_REPLDST_PORT = 1 << 11;
const XT_CONNTRACK_DIRECTION = 1 << 12;
const XT_CONNTRACK_STATE_ALIAS = 1 << 13;
/**
 * state_mask bits in libxtables' order: XT_CONNTRACK_STATE_INVALID (1), XT_CONNTRACK_STATE_BIT(ctinfo)
 * (1 << (ctinfo + 1): established 2, related 4, new 8), XT_CONNTRACK_STATE_UNTRACKED (256)
 */
const CT_STATES: Array<[number, string]> = [
  [1, 'invalid'],
  [8, 'new'],
  [4, 'related'],
  [2, 'established'],
  [256, 'untracked'],
];
/** state_mask's XT_CONNTRACK_STATE_SNAT (64), _DNAT (128), which libxtables writes as `ct status` */
const CT_STATUS_BITS: Array<[number, string]> = [
  [64, 'snat'],
  [128, 'dnat'],
];
/** enum ip_conntrack_status bits --ctstatus takes, as libxt_conntrack translates them */
const CTSTATUS_NAMES: ReadonlyArray<[number, string]> = [
  [1, 'expected'],
  [2, 'seen-reply'],
  [4, 'assured'],
  [8, 'confirmed'],
];
/**
 * struct xt_conntrack_mtinfo3 { union nf_inet_addr origsrc_addr, origsrc_mask, origdst_addr, origdst_mask,
 *   replsrc_addr, replsrc_mask, repldst_addr, repldst_mask; __u32 expires_min, expires_max; __u16 l4proto;
 *   __be16 origsrc_port, origdst_port, replsrc_port, repldst_port; // rev 3: host order, despite the type __u16 match_flags, invert_flags;
 *   __u16 state_mask, status_mask; __u16 origsrc_port_high, origdst_port_high, replsrc_port_high, repldst_port_high; }:
 * where its fields sit
 */
const CONNTRACK3 = { EXPIRES: 128, L4PROTO: 136, MATCH_FLAGS: 146, INVERT_FLAGS: 148, STATE_MASK: 150, STATUS_MASK: 152, SIZE: 164 };

/** One option of a conntrack match: its flag, the bytes it reads ([offset, length]), its text (undefined: not reproduced). */
interface ConntrackPart {
  flag: number;
  bytes: ReadonlyArray<readonly [number, number]>;
  text(b: Buffer, invert: number, family: string): string | { raw: string } | undefined;
}

/**
 * `ct original saddr 127.0.0.1`: a full-length address, IPv4's in the first 4 bytes. Under a shorter prefix
 * mask nft 1.0.6 lists `ct original daddr 169.254.0.0/16`, which nft -f reads back as `ct original ip daddr
 * 0.0.169.254` (it takes the key as an integer in host order, matching nothing): raw; another mask raw.
 */
function ctAddress(word: string, flag: number, at: number): ConntrackPart {
  return {
    flag,
    bytes: [[at, 32]],
    text(b, invert, family) {
      const n = family === 'ip' ? 4 : family === 'ip6' ? 16 : 0;
      if (!n || b.subarray(at + n, at + 16).some((x) => x !== 0)) return undefined;
      const bits = prefixOf(b.subarray(at + 16, at + 16 + n));
      if (bits === undefined) return undefined;
      const text = `ct ${word} ${invert & flag ? '!= ' : ''}${addressText(b.subarray(at, at + n))}`;
      if (bits !== n * 8) return { raw: `${text}/${bits}: nft -f reads this prefix back as another address` };
      return text;
    },
  };
}

/** `ct reply proto-dst 6-7`: a port range (rev 3 keeps both ends in host order, as the kernel's port_match reads them) */
function ctPort(word: string, flag: number, at: number, high: number): ConntrackPart {
  return {
    flag,
    bytes: [
      [at, 2],
      [high, 2],
    ],
    text(b, invert) {
      const [lo, hi] = [readU16(b, at), readU16(b, high)];
      return lo > hi ? undefined : `ct ${word} ${invert & flag ? '!= ' : ''}${lo}${hi === lo ? '' : `-${hi}`}`;
    },
  };
}

/**
 * The options of a conntrack match in libxt_conntrack's order, as nft 1.0.6 lists iptables 1.8.9's
 * translation (`ct direction reply ct reply protocol 6 ct state new`). Variants whose translation means
 * something else are raw: a state mask of both states and SNAT/DNAT (`--ctstate SNAT,NEW`, written `ct
 * status snat`), SNAT and DNAT together, either inverted (RAW_WHY says why); `! --ctexpire`, a mask that is no prefix.
 */
const CONNTRACK_PARTS: readonly ConntrackPart[] = [
  { flag: XT_CONNTRACK_DIRECTION, bytes: [], text: (_b, invert) => `ct direction ${invert & XT_CONNTRACK_DIRECTION ? 'reply' : 'original'}` },
  {
    flag: XT_CONNTRACK_PROTO,
    bytes: [[CONNTRACK3.L4PROTO, 2]],
    text: (b, invert) =>
      `ct ${invert & XT_CONNTRACK_DIRECTION ? 'reply' : 'original'} protocol ${invert & XT_CONNTRACK_PROTO ? '!= ' : ''}${readU16(b, CONNTRACK3.L4PROTO)}`,
  },
  {
    flag: XT_CONNTRACK_STATE,
    bytes: [[CONNTRACK3.STATE_MASK, 2]],
    text(b, invert) {
      const mask = readU16(b, CONNTRACK3.STATE_MASK);
      const states = CT_STATES.filter(([bit]) => mask & bit).map(([, n]) => n);
      const status = CT_STATUS_BITS.filter(([bit]) => mask & bit).map(([, n]) => n);
      const known = CT_STATES.concat(CT_STATUS_BITS).reduce((m, [bit]) => m | bit, 0);
      if (mask & ~known || !mask) return undefined;
      // libxt_conntrack writes SNAT or DNAT as `ct status snat` alone (snat first), with --ctstatus's inversion (`!=snat`)
      if (status.length) {
        if (states.length || status.length > 1) return { raw: RAW_WHY.ctstateNatMixed };
        return invert & (XT_CONNTRACK_STATE | XT_CONNTRACK_STATUS) ? { raw: RAW_WHY.ctstateNatInvert } : `ct status ${status[0]}`;
      }
      return `ct state ${invert & XT_CONNTRACK_STATE ? '! ' : ''}${states.join(',')}`;
    },
  },
  {
    flag: XT_CONNTRACK_STATUS,
    bytes: [[CONNTRACK3.STATUS_MASK, 2]],
    text(b, invert) {
      const mask = readU16(b, CONNTRACK3.STATUS_MASK);
      const names = CTSTATUS_NAMES.filter(([v]) => mask & v).map(([, n]) => n);
      const known = CTSTATUS_NAMES.reduce((m, [v]) => m | v, 0);
      return names.length && !(mask & ~known) ? `ct status ${invert & XT_CONNTRACK_STATUS ? '! ' : ''}${names.join(',')}` : undefined;
    },
  },
  {
    flag: XT_CONNTRACK_EXPIRES,
    bytes: [[CONNTRACK3.EXPIRES, 8]],
    // nft 1.0.6 lists --ctexpire 5 as `ct expiration 5`, which nft -f reads as 5000 ms exactly (and past 2^32 ms
    // refuses): xt_conntrack compares whole seconds left, 5 to 5.999, which no nft text lists
    text(b, invert) {
      const [min, max] = [readU32(b, CONNTRACK3.EXPIRES), readU32(b, CONNTRACK3.EXPIRES + 4)];
      if (invert & XT_CONNTRACK_EXPIRES || min > max) return undefined;
      const text = `ct expiration ${min}${max === min ? '' : `-${max}`}`;
      if (max * 1000 > 0xffffffff) return { raw: `nft lists "${text}", which nft -f refuses: value too large` };
      return { raw: `nft lists "${text}", read back as ${min * 1000}${max === min ? '' : `-${max * 1000}`} ms: --ctexpire matches ${min} to ${max}.999 s` };
    },
  },
  ctAddress('original saddr', XT_CONNTRACK_ORIGSRC, 0),
  ctAddress('original daddr', XT_CONNTRACK_ORIGDST, 32),
  ctAddress('reply saddr', XT_CONNTRACK_REPLSRC, 64),
  ctAddress('reply daddr', XT_CONNTRACK_REPLDST, 96),
  ctPort('original proto-src', XT_CONNTRACK_ORIGSRC_PORT, 138, 154),
  ctPort('original proto-dst', XT_CONNTRACK_ORIGDST_PORT, 140, 156),
  ctPort('reply proto-src', XT_CONNTRACK_REPLSRC_PORT, 142, 158),
  ctPort('reply proto-dst', XT_CONNTRACK_REPLDST_PORT, 144, 160),
];

/**
 * A conntrack match (rev 3) as nft 1.0.6 lists it; undefined for a variant not reproduced or bytes no option of it reads.
 * `l4`: whether the rule matched a transport protocol before it (`-p tcp`, `-p gre`: `meta l4proto gre`), which lets
 * nft -f read a port without --ctproto (as the 16 bits of the tuple xt_conntrack compares, gre's key too).
 */
function conntrackText(b: Buffer, family: string, l4: boolean): XtText {
  const flags = readU16(b, CONNTRACK3.MATCH_FLAGS);
  const invert = readU16(b, CONNTRACK3.INVERT_FLAGS);
  const parts = CONNTRACK_PARTS.filter((p) => flags & p.flag);
  const all = CONNTRACK_PARTS.reduce((m, p) => m | p.flag, 0);
  if (!parts.length || flags & ~(all | XT_CONNTRACK_STATE_ALIAS) || invert & ~flags) return undefined;
  // every byte no option of the match reads is zero
  const rest = Buffer.from(b.subarray(0, CONNTRACK3.SIZE));
  rest.fill(0, CONNTRACK3.MATCH_FLAGS, CONNTRACK3.MATCH_FLAGS + 4);
  for (const [at, len] of parts.flatMap((p) => p.bytes)) rest.fill(0, at, at + len);
  if (rest.some((x) => x !== 0)) return undefined;
  const texts = parts.map((p) => p.text(b, invert, family));
  if (texts.some((x) => x === undefined)) return undefined;
  const raw = texts.find((x) => typeof x === 'object');
  if (raw) return raw;
  // a port without the match's --ctproto (or after `! --ctproto`): nft -f refuses `ct original proto-dst 80` with no
  // protocol before it, in the match or in the rule (`-p tcp`, which nft lists as `meta l4proto tcp`; any protocol
  // there, `meta l4proto gre` or `meta l4proto 200`, lets it read the port); after `ct original protocol 47` too,
  // a protocol nft 1.0.6 names no header of
  if (flags & CT_PORT_FLAGS && !l4) {
    if (!(flags & XT_CONNTRACK_PROTO) || invert & XT_CONNTRACK_PROTO)
      return { raw: 'a port without --ctproto (or after ! --ctproto) or -p: nft -f cannot read it back' };
    const proto = readU16(b, CONNTRACK3.L4PROTO);
    if (!L4_HEADERS.has(proto)) return { raw: `--ctproto ${proto}, which nft names no header of, and no -p: nft -f cannot read the port back` };
  }
  return texts.join(' ');
}

/** The conntrack match's port options (--ctorigsrcport and the other three). */
const CT_PORT_FLAGS = XT_CONNTRACK_ORIGSRC_PORT | XT_CONNTRACK_ORIGDST_PORT | XT_CONNTRACK_REPLSRC_PORT | XT_CONNTRACK_REPLDST_PORT;

/** The prefix length of a network mask (`ff000000`: 8), undefined when its ones are not contiguous. */
function prefixOf(mask: Buffer): number | undefined {
  let bits = 0;
  while (bits < mask.length * 8 && mask[bits >> 3] & (0x80 >> (bits & 7))) bits++;
  for (let i = bits; i < mask.length * 8; i++) if (mask[i >> 3] & (0x80 >> (i & 7))) return undefined;
  return bits;
}

/** linux/netfilter/xt_multiport.h: XT_MULTIPORT_SOURCE, _DESTINATION */
const MULTIPORT_WORDS = ['sport', 'dport'];
/** linux/netfilter/xt_multiport.h: XT_MULTIPORT_EITHER (`--ports`) */
const XT_MULTIPORT_EITHER = 2;
/** the protocols whose ports a multiport match names (libxtables' check) */
const PORT_PROTOCOLS: ReadonlySet<string> = new Set(['tcp', 'udp', 'udplite', 'sctp', 'dccp']);

/**
 * struct ipt_icmp / ip6t_icmp { __u8 type; __u8 code[2]; __u8 invflags; }: a type nft names, of
 * any code (0..255), as libxtables translates it (`icmp type echo-request`, `icmpv6 type != echo-reply`);
 * a code range or a type without a name nft 1.0.6 lists as `xt match icmp`.
 */
function icmpMatch(proto: 'icmp' | 'icmpv6'): Translation['text'] {
  return (b) => {
    if (proto === 'icmp' && b[0] === 0xff && b[1] === 0 && b[2] === 0xff && b[3] === 0) return { raw: RAW_WHY.icmpAny };
    if (b[1] !== 0 || b[2] !== 0xff || b[3] > 1) return undefined;
    const name = valueText(b.subarray(0, 1).toString('hex'), proto === 'icmp' ? 'icmp_type' : 'icmpv6_type').text;
    return /^[a-z]/.test(name) ? `${proto} type ${b[3] ? '!= ' : ''}${name}` : undefined;
  };
}

/** {@link RAW_WHY}'s word for an extension nft 1.0.6 lists by its name alone (`xt match recent`). */
const NAME_ONLY = '';

/**
 * Every reason an xt extension prints raw, in one table: what nft 1.0.6 lists (libxtables' translation, iptables
 * 1.8.9's) and why that is another rule or nothing nft reads. Keyed `KIND NAME` (`match recent`): the whole
 * extension, where no translation gives nft's text (NAME_ONLY: nft lists its name alone, `xt match recent`);
 * other keys: a variant of an extension whose other variants print, which its translation returns (`{ raw:
 * RAW_WHY.fragRes }`).
 */
const RAW_WHY = {
  'match recent': NAME_ONLY,
  'match tos': NAME_ONLY,
  'target TTL': NAME_ONLY,
  // libxt_CT translates --notrack alone (its row above)
  'target CT': NAME_ONLY,
  // libip6t_hbh translates --hbh-len alone (hbhLen)
  'match hbh': NAME_ONLY,
  // libxt_rpfilter translates all but --accept-local without --invert (rpfilter4, rpfilter6)
  'match rpfilter': NAME_ONLY,
  // libxt_connlimit translates by the family of libxtables' xt_xlate, which nft leaves unset (malloc'd):
  // the same rule lists either way from one run of nft to the next
  'match connlimit': 'nft 1.0.6 lists "xt match connlimit" or, at random, "add @connlimit0 ..." (no such set)',
  // libxt_TOS's revision 1 writes `ip6 dscp set 0x04` for --set-tos 0x10 in every family (its row above)
  'target TOS': 'nft 1.0.6 lists it as "ip6 dscp set ..." in every family, which sets other bits than TOS',
  addrtypeBoth: 'nft 1.0.6 lists "fib saddr type ...", the --src-type alone, leaving --dst-type out',
  connlabelInvert: 'nft 1.0.6 lists "ct label and N != N": no match without conntrack, where ! --label matches',
  icmpAny: 'nft 1.0.6 lists it as "ip protocol icmp", which reads back without the match: -m icmp drops non-first fragments',
  fragRes: 'nft 1.0.6 lists "frag reserved 1", where --fragres matches reserved bits zero',
  connmarkXmark:
    'nft 1.0.6 lists "ct mark set ct mark xor V and KEEP", which applies the xor first: (ct mark ^ V) & KEEP, where the target computes (ct mark & KEEP) ^ V',
  ebtIpTos: 'nft 1.0.6 lists "ip dscp N", the TOS byte\'s upper 6 bits, where --ip-tos compares the whole byte',
  ctstateNatMixed: 'nft 1.0.6 lists "ct status snat" (or dnat) alone, leaving the other states out',
  ctstateNatInvert: 'nft 1.0.6 lists "ct status snat" (or dnat) with the ! of --ctstatus, not of --ctstate',
  rpfilter4: 'nft 1.0.6 lists "fib saddr ...": it passes a source routed as broadcast, -m rpfilter unicast only',
  rpfilter6: 'nft 1.0.6 lists "fib saddr ...": it fails a source :: (but ICMPv6 to link-local), -m rpfilter passes it',
  clusterNode: 'nft 1.0.6 lists "jhash ... eq N": node N as hash N, where -m cluster hashes it to N-1',
  cluster: 'nft 1.0.6 lists "jhash ... meta pkttype set host": every matched packet, -m cluster multicast ones',
  hbhLen: 'nft 1.0.6 lists "hbh hdrlength N", the field (bytes / 8 - 1), where --hbh-len counts bytes',
  ahLen: 'nft 1.0.6 lists "ah hdrlength N", the field (bytes / 4 - 2), where --ahlen counts bytes',
  ahRes: 'nft 1.0.6 lists "ah reserved 1", where --ahres matches reserved bits zero',
  ahNoSpi: 'nft 1.0.6 lists "meta l4proto ah", every AH packet, where ! --ahspi 0:4294967295 matches none',
  ecnIp6: 'nft 1.0.6 lists "ip ecn ...", an IPv4 field, which nft -f refuses in an ip6 table',
  ecnTcpInvert: 'nft 1.0.6 lists "tcp flags != ...", every part inverted, comparing the whole byte: -m ecn tests a bit',
} as const;

/** linux/netfilter/xt_addrtype.h: XT_ADDRTYPE_INVERT_SOURCE, _INVERT_DEST, _LIMIT_IFACE_IN, _LIMIT_IFACE_OUT */
const XT_ADDRTYPE_INVERT_SOURCE = 0x1;
const XT_ADDRTYPE_INVERT_DEST = 0x2;
const XT_ADDRTYPE_LIMIT_IFACE_IN = 0x4;
const XT_ADDRTYPE_LIMIT_IFACE_OUT = 0x8;
/**
 * libxt_addrtype.c's rtn_lnames as iptables 1.8.9 translates them: the XT_ADDRTYPE_* bit i is route type i
 * (RTN_*); THROW, NAT and XRESOLVE it leaves out of the translation (`{ unspec }` for UNSPEC,NAT): raw here
 */
const RTN_NAMES = ['unspec', 'unicast', 'local', 'broadcast', 'anycast', 'multicast', 'blackhole', 'unreachable', 'prohibit'];
/** linux/netfilter/xt_iprange.h: IPRANGE_SRC, IPRANGE_DST, IPRANGE_SRC_INV, IPRANGE_DST_INV */
const IPRANGE_SRC = 0x01;
const IPRANGE_DST = 0x02;
const IPRANGE_SRC_INV = 0x10;
const IPRANGE_DST_INV = 0x20;
/** libxt_pkttype.c's supported_types_xlate, by PACKET_* (others it writes as the number) */
const PKTTYPE_XLATE = ['unicast', 'broadcast', 'multicast'];

/** A value under a mask as libxtables translates it: `ct mark 0x5`, `ct mark != 0x5`, `ct mark and 0xff == 0x5`, `... != 0x5`. */
function maskedText(key: string, value: number, mask: number, invert: number): string | undefined {
  if (invert > 1) return undefined;
  return mask === 0xffffffff ? `${key} ${invert ? '!= ' : ''}${hex32(value)}` : `${key} and ${hex32(mask)} ${invert ? '!=' : '=='} ${hex32(value)}`;
}

/**
 * Source and destination ports (`__u16 dpts[2], spts[2]` at offset 0; flags 1 source, 2 destination, nothing
 * else) as libxt_sctp / libxt_dccp translate them: `dccp sport 5 dccp dport 6`, `sctp dport != 5-6`.
 */
function portsText(proto: string, b: Buffer, flags: number, invflags: number): string | undefined {
  if (!flags || flags & ~3 || invflags & ~flags) return undefined;
  const part = (bit: number, word: string, at: number): string[] => {
    const [lo, hi] = [readU16(b, at), readU16(b, at + 2)];
    return flags & bit ? [`${proto} ${word} ${invflags & bit ? '!= ' : ''}${lo}${hi === lo ? '' : `-${hi}`}`] : [];
  };
  return [...part(1, 'sport', 4), ...part(2, 'dport', 0)].join(' ');
}

/** linux/netfilter/xt_ecn.h: XT_ECN_OP_MATCH_IP, _ECE, _CWR (operation and invert bits) */
const XT_ECN_OP_MATCH_IP = 0x01;
const XT_ECN_OP_MATCH_ECE = 0x10;
const XT_ECN_OP_MATCH_CWR = 0x20;
/** nft's names of the IP ECN field's values (ip_ect) */
const IP_ECN_NAMES = ['not-ect', 'ect1', 'ect0', 'ce'];

/**
 * An ecn match as libxt_ecn.c's ecn_xlate writes it. Raw, saying why: ip6tables' --ecn-ip-ect (libxt_ecn
 * writes `ip ecn`, an IPv4 field), and any invert of a match with a TCP flag: libxt_ecn then inverts every
 * part, `tcp flags != cwr`, which in nft compares the whole flags byte (xt_ecn tests the one bit). An
 * invert of --ecn-ip-ect alone is `ip ecn != ect1`.
 */
function ecnText(b: Buffer, family: string): XtText {
  const [op, invert, ect] = [b[0], b[1], b[2]];
  const known = XT_ECN_OP_MATCH_IP | XT_ECN_OP_MATCH_ECE | XT_ECN_OP_MATCH_CWR;
  if (!op || op & ~known || invert & ~op || ect > 3 || b[3] !== 0) return undefined;
  if (op & XT_ECN_OP_MATCH_IP && family !== 'ip') return { raw: RAW_WHY.ecnIp6 };
  if (invert && op & (XT_ECN_OP_MATCH_ECE | XT_ECN_OP_MATCH_CWR)) return { raw: RAW_WHY.ecnTcpInvert };
  return [
    op & XT_ECN_OP_MATCH_ECE ? 'tcp flags ecn' : '',
    op & XT_ECN_OP_MATCH_CWR ? 'tcp flags cwr' : '',
    op & XT_ECN_OP_MATCH_IP ? `ip ecn ${invert ? '!= ' : ''}${IP_ECN_NAMES[ect]}` : '',
  ]
    .filter(Boolean)
    .join(' ');
}

/** linux/netfilter/xt_dccp.h: XT_DCCP_SRC_PORTS, _DEST_PORTS, _TYPE, _OPTION */
const XT_DCCP_PORTS = 0x03;
const XT_DCCP_TYPE = 0x04;
/** libxt_dccp.c's dccp_pkt_types_xlate, by DCCP_PKT_* bit; DCCP_PKT_INVALID (10) stands for 10-15 */
const DCCP_TYPES = ['request', 'response', 'data', 'ack', 'dataack', 'closereq', 'close', 'reset', 'sync', 'syncack', '10-15'];
/** the typemask bits of 10-15: libxt_dccp sets 11-15 with INVALID (10) and writes them as one `10-15` */
const DCCP_INVALID_BITS = 0xfc00;

/** A dccp match as libxt_dccp.c's dccp_xlate writes it: ports, then types (`dccp type != { request, 10-15 }`). */
function dccpText(b: Buffer): XtText {
  const [flags, invflags, types] = [readU16(b, 8), readU16(b, 10), readU16(b, 12)];
  if (flags & ~(XT_DCCP_PORTS | XT_DCCP_TYPE) || invflags & ~flags || b[14] !== 0) return undefined;
  if (!flags) return BARE_L4('dccp');
  const ports = flags & XT_DCCP_PORTS ? portsText('dccp', b, flags & XT_DCCP_PORTS, invflags & XT_DCCP_PORTS) : '';
  if (ports === undefined || !(flags & XT_DCCP_TYPE)) return ports || undefined;
  // some of 11-15 without the rest: `10-15` would say more
  if (!types || ((types & DCCP_INVALID_BITS) !== 0 && (types & DCCP_INVALID_BITS) !== DCCP_INVALID_BITS)) return undefined;
  const names = DCCP_TYPES.filter((_, i) => types & (1 << i));
  const value = names.length > 1 ? `{ ${names.join(', ')} }` : names[0];
  return `${ports && `${ports} `}dccp type ${invflags & XT_DCCP_TYPE ? '!= ' : ''}${value}`;
}

/**
 * struct xt_esp and struct ipt_ah ({ __u32 spis[2]; __u8 invflags; }, invflags 0x01 the spis') as libxt_esp.c
 * and libipt_ah.c write them: `esp spi 5`, `ah spi != 5-7`; every spi, not inverted, nothing ({@link BARE_L4}).
 */
function spiText(proto: 'esp' | 'ah'): (b: Buffer) => XtText {
  return (b) => {
    if (b[8] > 1) return undefined;
    const spis = u32Range(readU32(b, 0), readU32(b, 4), b[8] === 1);
    return spis === undefined ? BARE_L4(proto) : reversedIf(`${proto} spi ${spis}`, readU32(b, 0) > readU32(b, 4));
  };
}

/** linux/netfilter/xt_statistic.h: XT_STATISTIC_MODE_RANDOM, _NTH; flags XT_STATISTIC_INVERT */
const XT_STATISTIC_MODE_RANDOM = 0;
const XT_STATISTIC_MODE_NTH = 1;
const XT_STATISTIC_INVERT = 0x1;

/** A statistic match as libxt_statistic.c's statistic_xlate writes it (a probability is a fraction of 2^31). */
function statisticText(b: Buffer): string | undefined {
  const [mode, flags] = [readU16(b, 0), readU16(b, 2)];
  if (flags & ~XT_STATISTIC_INVERT) return undefined;
  const inv = flags & XT_STATISTIC_INVERT;
  if (mode === XT_STATISTIC_MODE_RANDOM) return `meta random & 2147483647 ${inv ? '>=' : '<'} ${readU32(b, 4)}`;
  const [every, packet] = [readU32(b, 4), readU32(b, 8)];
  if (mode !== XT_STATISTIC_MODE_NTH || every === 0xffffffff || packet > every) return undefined;
  return `numgen inc mod ${every + 1} ${inv ? '!= ' : ''}${packet}`;
}

/**
 * Where libxt_connlabel (libnetfilter_conntrack's nfct_labelmap_new) reads the names of conntrack labels. Where it
 * cannot open it, nft 1.0.6 writes `Warning: cannot open /etc/xtables/connlabel.conf: No such file or directory` on
 * stderr once for each xt connlabel match it lists (text, not `nft -j`), and lists the label by number, as synplug
 * always does (it reads no such file: where the file names a label, nft lists its name, synplug its number, which
 * `nft -f` reads back as the same label).
 */
export const XT_CONNLABEL_CONF = '/etc/xtables/connlabel.conf';

/** linux/netfilter/xt_connlabel.h: XT_CONNLABEL_MAXBIT, XT_CONNLABEL_OP_SET (`--set`; XT_CONNLABEL_OP_INVERT is 1) */
const XT_CONNLABEL_MAXBIT = 127;
const XT_CONNLABEL_OP_SET = 1 << 1;
const XT_CONNLABEL_OP_INVERT = 1 << 0;

/** linux/netfilter/xt_time.h: XT_TIME_CONTIGUOUS, XT_TIME_ALL_MONTHDAYS, XT_TIME_ALL_WEEKDAYS, XT_TIME_MAX_DAYTIME; INT_MAX, --datestop's default */
const XT_TIME_CONTIGUOUS = 1 << 1;
const XT_TIME_ALL_MONTHDAYS = 0xfffffffe;
const XT_TIME_ALL_WEEKDAYS = 0xfe;
const XT_TIME_MAX_DAYTIME = 24 * 60 * 60 - 1;
const INT_MAX = 0x7fffffff;

/**
 * A time match as libxt_time.c's time_xlate (iptables 1.8.9) writes it, nft 1.0.6 listing it with the
 * spaces it leaves (` meta hour "10:00:00"-"12:00:00" meta day { 1, 2 }`, dates in UTC). --monthdays
 * (nft lists `xt match time`) and the flags it leaves out where they change what the times mean: --kerneltz
 * (XT_TIME_LOCAL_TZ: the times are the kernel's local time, not UTC), and --contiguous with --weekdays over
 * midnight (xt_time.c then checks the day the period began, `meta day` the packet's). --contiguous otherwise
 * changes nothing (xt_time.c uses it only for the day of a period over midnight): printed as nft lists it.
 */
function timeText(b: Buffer): XtText {
  const [dateStart, dateStop, dayStart, dayStop, monthdays] = [0, 4, 8, 12, 16].map((at) => readU32(b, at));
  const [weekdays, flags] = [b[20], b[21]];
  const contiguousMeansNothing = weekdays === XT_TIME_ALL_WEEKDAYS || dayStart < dayStop;
  if (
    (flags !== 0 && !(flags === XT_TIME_CONTIGUOUS && contiguousMeansNothing)) ||
    monthdays !== XT_TIME_ALL_MONTHDAYS ||
    weekdays & 1 ||
    dayStart > XT_TIME_MAX_DAYTIME ||
    dayStop > XT_TIME_MAX_DAYTIME
  )
    return undefined;
  const date = (s: number): string =>
    new Date(s * 1000)
      .toISOString()
      .replace('T', ' ')
      .replace(/\.\d+Z$/, '');
  const hms = (s: number): string => [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60].map((x) => String(x).padStart(2, '0')).join(':');
  let t = '';
  const dates = dateStart !== 0 || dateStop !== INT_MAX;
  const hours = dayStart !== 0 || dayStop !== XT_TIME_MAX_DAYTIME;
  // xt_time (without --kerneltz) counts in UTC; nft -f reads these words in its own process's local time
  // (`meta time` at the date given, `meta hour` and `meta day` at the time it runs): printed only where
  // this process's time zone is UTC then (nft's listing reads back as the same rule in the same zone)
  const zoned = [...(dates ? [dateStart * 1000, dateStop * 1000] : []), ...(hours || weekdays !== XT_TIME_ALL_WEEKDAYS ? [Date.now()] : [])];
  const off = zoned.map((ms) => new Date(ms).getTimezoneOffset()).find((m) => m !== 0);
  if (off !== undefined) return { raw: `match time counts UTC; nft -f would read its times in this process's time zone, UTC${utcOffset(off)}` };
  if (dates) t += `meta time "${date(dateStart)}"-"${date(dateStop)}"`;
  if (hours) t += ` meta hour "${hms(dayStart)}"-"${hms(dayStop)}"`;
  if (weekdays !== XT_TIME_ALL_WEEKDAYS) {
    // bit i is day i (Monday 1 .. Sunday 7), which nft numbers i % 7
    const days = [1, 2, 3, 4, 5, 6, 7].filter((i) => weekdays & (1 << i)).map((i) => i % 7);
    t += ` meta day ${days.length > 1 ? `{ ${days.join(', ')} }` : days[0]}`;
  }
  return t;
}

/** A time zone's offset from UTC as `+01:00` from Date's getTimezoneOffset() (minutes west of UTC). */
function utcOffset(minutesWest: number): string {
  const m = Math.abs(minutesWest);
  return `${minutesWest > 0 ? '-' : '+'}${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
}

/**
 * linux/netfilter/xt_hashlimit.h: the mode bits (XT_HASHLIMIT_HASH_DIP, _DPT, _SIP, _SPT: the key's parts, in the
 * order libxt_hashlimit.c's hashlimit_mode_xlate writes them; _INVERT `--hashlimit-above`; _BYTES a byte rate;
 * _RATE_MATCH, which its translation leaves out), XT_HASHLIMIT_SCALE_v2 (packet rates: 1e6 / packets per second),
 * XT_HASHLIMIT_BYTE_SHIFT, XT_HASHLIMIT_BURST (the default burst, not printed).
 */
const HASHLIMIT_KEYS: ReadonlyArray<[bit: number, key: (family: string) => string]> = [
  [1 << 0, (f) => `${f} daddr`],
  [1 << 1, () => 'tcp dport'],
  [1 << 2, (f) => `${f} saddr`],
  [1 << 3, () => 'tcp sport'],
];
const XT_HASHLIMIT_HASH_DIP = 1 << 0;
const XT_HASHLIMIT_HASH_SIP = 1 << 2;
const XT_HASHLIMIT_PORTS = (1 << 1) | (1 << 3);
const XT_HASHLIMIT_INVERT = 1 << 4;
const XT_HASHLIMIT_BYTES = 1 << 5;
const XT_HASHLIMIT_SCALE_V2 = 1000000n;
const XT_HASHLIMIT_BYTE_SHIFT = 4n;
const XT_HASHLIMIT_BURST = 5n;
const U32_MAX = 0xffffffffn;
/** libxt_hashlimit.c's rates (rev 2 and 3), `--hashlimit-upto 5/min`'s units, longest first */
const HASHLIMIT_RATES: ReadonlyArray<[name: string, mult: bigint]> = [
  ['day', XT_HASHLIMIT_SCALE_V2 * 86400n],
  ['hour', XT_HASHLIMIT_SCALE_V2 * 3600n],
  ['minute', XT_HASHLIMIT_SCALE_V2 * 60n],
  ['second', XT_HASHLIMIT_SCALE_V2],
];
/** libxt_hashlimit.c's units of a byte rate */
const HASHLIMIT_UNITS: ReadonlyArray<[name: string, thresh: bigint]> = [
  ['m', 1024n * 1024n],
  ['k', 1024n],
  ['', 1n],
];

/** A prefix length as hashlimit_print_subnet_xlate writes it: ` and 255.255.255.0`, IPv6's ` and ffff:ffff:0000:...` (every group, 4 digits). */
function hashlimitMask(bits: number, family: string): string {
  const [groups, width] = family === 'ip' ? [4, 8] : [8, 16];
  const parts: string[] = [];
  for (let i = 0; i < groups; i++) {
    const n = Math.max(0, Math.min(width, bits - i * width));
    const v = n === 0 ? 0 : ((2 ** n - 1) * 2 ** (width - n)) >>> 0;
    parts.push(family === 'ip' ? String(v) : v.toString(16).padStart(4, '0'));
  }
  return ` and ${parts.join(family === 'ip' ? '.' : ':')}`;
}

/**
 * A hashlimit match (rev 3) as libxt_hashlimit.c's hashlimit_mt_xlate (iptables 1.8.9) writes it:
 * `meter bar { tcp dport . ip saddr timeout 60s limit rate over 5/minute burst 7 packets }`.
 * ```c
 * struct xt_hashlimit_mtinfo3 { char name[NAME_MAX]; struct hashlimit_cfg3 cfg; ... }; // cfg at 256
 * struct hashlimit_cfg3 { __u64 avg, burst; __u32 mode, size, max, gc_interval, expire, interval; __u8 srcmask, dstmask; };
 * ```
 * Raw where the translation means something else or nft lists no meter: no key (`xt match hashlimit`),
 * ports (`tcp dport`) after no tcp match (the kernel takes udp's, sctp's... ports too), --hashlimit-rate-match.
 * What the translation leaves out: the table's size, maximum and gc interval bound its memory only; the
 * rate interval counts with --hashlimit-rate-match only.
 */
function hashlimitText(b: Buffer, _rev: number, ctx: XtContext): string | undefined {
  const name = b
    .subarray(0, 255)
    .toString('latin1')
    .replace(/\0[\s\S]*$/, '');
  const u64 = (at: number): bigint => (LE ? b.readBigUInt64LE(at) : b.readBigUInt64BE(at));
  const [avg, burst, mode, expire, srcmask, dstmask] = [u64(256), u64(264), readU32(b, 272), readU32(b, 288), b[296], b[297]];
  const known = XT_HASHLIMIT_INVERT | XT_HASHLIMIT_BYTES | HASHLIMIT_KEYS.reduce((m, [bit]) => m | bit, 0);
  if (!/^[\x21-\x7e]+$/.test(name) || mode & ~known || !(mode & ~(XT_HASHLIMIT_INVERT | XT_HASHLIMIT_BYTES)) || avg === 0n) return undefined;
  if (mode & XT_HASHLIMIT_PORTS && ctx.l4 !== 'tcp') return undefined;
  const full = ctx.family === 'ip' ? 32 : 128;
  const keys = HASHLIMIT_KEYS.filter(([bit]) => mode & bit).map(([bit, key]) => {
    const bits = bit === XT_HASHLIMIT_HASH_DIP ? dstmask : bit === XT_HASHLIMIT_HASH_SIP ? srcmask : full;
    return key(ctx.family) + (bits === full ? '' : hashlimitMask(bits, ctx.family));
  });
  let t = `meter ${name} { ${keys.join(' . ')}`;
  if (expire !== 1000) t += ` timeout ${Math.floor(expire / 1000)}s`;
  t += ` limit rate${mode & XT_HASHLIMIT_INVERT ? ' over' : ''}`;
  if (mode & XT_HASHLIMIT_BYTES) {
    // print_bytes_rate_xlate: cost_to_bytes, the largest unit that bytes_to_cost maps back to the same cost (a u32 argument)
    let r = ((avg ? U32_MAX / avg : U32_MAX) - 1n) << XT_HASHLIMIT_BYTE_SHIFT;
    const toCost = (x: bigint): bigint => U32_MAX / (((x & U32_MAX) >> XT_HASHLIMIT_BYTE_SHIFT) + 1n);
    let i = HASHLIMIT_UNITS.findIndex(([, th], k) => k < HASHLIMIT_UNITS.length - 1 && r >= th && toCost(r & ~(th - 1n)) === avg);
    if (i < 0) i = HASHLIMIT_UNITS.length - 1;
    t += ` ${r / HASHLIMIT_UNITS[i][1]} ${HASHLIMIT_UNITS[i][0]}bytes/second`;
    r *= burst;
    let j = HASHLIMIT_UNITS.findIndex(([, th], k) => k < HASHLIMIT_UNITS.length - 1 && r >= th);
    if (j < 0) j = HASHLIMIT_UNITS.length - 1;
    if (burst > 0n) t += ` burst ${r / HASHLIMIT_UNITS[j][1]} ${HASHLIMIT_UNITS[j][0]}bytes`;
  } else {
    // print_packets_rate_xlate: the first unit whose next is finer than the rate, or whose next divides it badly
    let i = 1;
    for (; i < HASHLIMIT_RATES.length; i++) {
      const m = HASHLIMIT_RATES[i][1];
      if (avg > m || m / avg < m % avg) break;
    }
    t += ` ${HASHLIMIT_RATES[i - 1][1] / avg}/${HASHLIMIT_RATES[i - 1][0]}`;
    if (burst !== XT_HASHLIMIT_BURST) t += ` burst ${burst} packets`;
  }
  return `${t} }`;
}

/** linux/netfilter/xt_policy.h: XT_POLICY_MATCH_IN, _NONE; sizeof(struct xt_policy_elem) 76, XT_POLICY_MAX_ELEM 4 */
const XT_POLICY_MATCH_IN = 0x1;
const XT_POLICY_MATCH_NONE = 0x4;
const POLICY_ELEMS = 4 * 76;
const POLICY_SIZE = POLICY_ELEMS + 4;

/**
 * A policy match as libxt_policy.c's policy_xlate writes it: `--dir in --pol ipsec` with no element
 * (iptables writes one empty element) `meta secpath exists`, `--dir in --pol none` `meta secpath missing`.
 * Elements, --strict and --dir out nft lists as `xt match policy`.
 */
function policyText(b: Buffer): string | undefined {
  const [flags, len] = [readU16(b, POLICY_ELEMS), readU16(b, POLICY_ELEMS + 2)];
  if (b.subarray(0, POLICY_ELEMS).some((x) => x !== 0)) return undefined;
  if (flags === XT_POLICY_MATCH_IN && len === 1) return 'meta secpath exists';
  if (flags === (XT_POLICY_MATCH_IN | XT_POLICY_MATCH_NONE) && len === 0) return 'meta secpath missing';
  return undefined;
}

/** nft's text `t` of a translation, with {@link REVERSED_RANGE} as its problem when a range in it is `reversed` (nft lists `10.0.0.5-10.0.0.1` as it is). */
function reversedIf(t: string | undefined, reversed: boolean): XtText {
  return t !== undefined && reversed ? { text: t, problem: REVERSED_RANGE } : t;
}

/** A u32 range as libxtables writes it (`5`, `5-9`), with `!= ` when inverted; undefined when it is every value and not inverted. */
function u32Range(lo: number, hi: number, inv: boolean, all = 0xffffffff): string | undefined {
  if (lo === 0 && hi === all && !inv) return undefined;
  return `${inv ? '!= ' : ''}${lo}${hi === lo ? '' : `-${hi}`}`;
}

/** linux/netfilter_ipv6/ip6t_frag.h: IP6T_FRAG_IDS, _LEN, _RES, _FST, _MF, _NMF; IP6T_FRAG_INV_IDS */
const IP6T_FRAG_LEN = 0x02;
const IP6T_FRAG_RES = 0x04;
const IP6T_FRAG_FST = 0x08;
const IP6T_FRAG_MF = 0x10;
const IP6T_FRAG_NMF = 0x20;
const IP6T_FRAG_INV_IDS = 0x01;

/**
 * ip6tables' frag match, struct ip6t_frag { __u32 ids[2], hdrlen; __u8 flags, invflags; }, as libip6t_frag.c writes
 * it: `frag id 5`, `frag more-fragments 1`. --fragres (reserved bits zero, which libxtables writes `frag reserved 1`),
 * --fraglen and a bare `-m frag` (both of which nft lists as nothing, matching every packet) raw.
 */
function fragText(b: Buffer): XtText {
  const [flags, inv] = [b[12], b[13]];
  if (flags & IP6T_FRAG_RES && !(flags & IP6T_FRAG_LEN)) return { raw: RAW_WHY.fragRes };
  if (flags & (IP6T_FRAG_LEN | IP6T_FRAG_RES) || inv & ~IP6T_FRAG_INV_IDS) return undefined;
  const ids = u32Range(readU32(b, 0), readU32(b, 4), (inv & IP6T_FRAG_INV_IDS) !== 0);
  const rest = [
    flags & IP6T_FRAG_FST ? 'frag frag-off 0' : '',
    flags & IP6T_FRAG_MF ? 'frag more-fragments 1' : '',
    flags & IP6T_FRAG_NMF ? 'frag more-fragments 0' : '',
  ].filter(Boolean);
  // a bare -m frag nft 1.0.6 lists as nothing (iptables 1.8.9 writes no translation), a rule matching every packet
  if (ids === undefined && !rest.length) return undefined;
  return reversedIf([ids === undefined ? '' : `frag id ${ids}`, ...rest].filter(Boolean).join(' '), readU32(b, 0) > readU32(b, 4));
}

/** linux/netfilter_ipv6/ip6t_ah.h: IP6T_AH_INV_SPI, IP6T_AH_INV_LEN */
const IP6T_AH_INV_SPI = 0x01;
const IP6T_AH_INV_LEN = 0x02;

/**
 * ip6tables' ah match, struct ip6t_ah { __u32 spis[2]; __u32 hdrlen; __u8 hdrres; __u8 invflags; }, as libip6t_ah.c
 * writes it: `ah spi 5`, `ah spi != 5-9`, a bare `-m ah` `meta l4proto ah` (nft stops at AH as the transport header
 * ip6t_ah looks for among the extension headers). Raw, saying why: --ahlen (the header's bytes, which libxtables
 * writes as nft's `ah hdrlength`, the field) and --ahres (reserved bits zero, written `ah reserved 1`).
 */
function ah6Text(b: Buffer): XtText {
  const [hdrlen, hdrres, inv] = [readU32(b, 8), b[12], b[13]];
  if (inv & ~(IP6T_AH_INV_SPI | IP6T_AH_INV_LEN)) return undefined;
  if (hdrlen !== 0 || inv & IP6T_AH_INV_LEN) return { raw: RAW_WHY.ahLen };
  if (hdrres) return { raw: RAW_WHY.ahRes };
  const [lo, hi] = [readU32(b, 0), readU32(b, 4)];
  // every spi inverted (no packet) libxtables writes as `meta l4proto ah` too
  if (lo === 0 && hi === 0xffffffff) return inv & IP6T_AH_INV_SPI ? { raw: RAW_WHY.ahNoSpi } : 'meta l4proto ah';
  return reversedIf(`ah spi ${u32Range(lo, hi, (inv & IP6T_AH_INV_SPI) !== 0)}`, lo > hi);
}

/** linux/netfilter_ipv6/ip6t_opts.h: IP6T_OPTS_LEN, IP6T_OPTS_OPTS (flags) */
const IP6T_OPTS_LEN = 0x01;
const IP6T_OPTS_OPTS = 0x02;

/**
 * ip6tables' hbh match, struct ip6t_opts { __u32 hdrlen; __u8 flags, invflags; __u16 opts[16]; __u8 optsnr; }:
 * libip6t_hbh.c translates --hbh-len alone, as `hbh hdrlength 8`, nft's field in 8-byte units where --hbh-len
 * counts the header's bytes (raw, saying why); other variants nft lists as `xt match hbh` (RAW_WHY).
 */
function hbhText(b: Buffer): XtText {
  return (b[4] & (IP6T_OPTS_LEN | IP6T_OPTS_OPTS)) === IP6T_OPTS_LEN ? { raw: RAW_WHY.hbhLen } : undefined;
}

/** linux/netfilter/xt_rpfilter.h: XT_RPFILTER_ACCEPT_LOCAL, XT_RPFILTER_INVERT (flags) */
const XT_RPFILTER_ACCEPT_LOCAL = 1 << 2;
const XT_RPFILTER_INVERT = 1 << 3;

/**
 * An rpfilter match: libxt_rpfilter.c writes `fib saddr . iif oif != 0` (`. mark` for --validmark, no `. iif`
 * for --loose, `fib saddr type != local` before `oif 0` for --accept-local --invert), whose fib judges other
 * sources than the match (nft_fib4 passes a source routed as broadcast, ipt_rpfilter wants unicast; ip6t_rpfilter
 * passes a source ::, nft_fib6 fails it but for ICMPv6 to a link-local address): raw, saying why. --accept-local
 * not inverted nft lists as `xt match rpfilter` (undefined: RAW_WHY's name-only reason).
 */
function rpfilterText(b: Buffer, _rev: number, ctx: XtContext): XtText {
  if ((b[0] & (XT_RPFILTER_ACCEPT_LOCAL | XT_RPFILTER_INVERT)) === XT_RPFILTER_ACCEPT_LOCAL) return undefined;
  return { raw: ctx.family === 'ip' ? RAW_WHY.rpfilter4 : RAW_WHY.rpfilter6 };
}

/**
 * A cluster match: libxt_cluster.c writes `jhash ct original saddr mod 2 seed 0x00000001 eq 1 meta pkttype set
 * host`, a lone node N as hash N (xt_cluster's node N is hash N-1), several as the set of their hashes (`{ 0, 2
 * }`), and every matched packet set to host (xt_cluster sets only multicast ones): raw, saying why.
 */
function clusterText(b: Buffer): XtText {
  const mask = readU32(b, 4);
  return { raw: mask && !(mask & (mask - 1)) ? RAW_WHY.clusterNode : RAW_WHY.cluster };
}

/** linux/netfilter_ipv6/ip6t_rt.h: IP6T_RT_TYP, IP6T_RT_SGS (flags); IP6T_RT_INV_TYP, IP6T_RT_INV_SGS (invflags) */
const IP6T_RT_TYP = 0x01;
const IP6T_RT_SGS = 0x02;

/**
 * ip6tables' rt match, struct ip6t_rt { __u32 rt_type, segsleft[2], hdrlen; __u8 flags, invflags; ... }, as
 * libip6t_rt.c writes it: `rt type 2`, `rt seg-left 3`; a bare `-m rt` (nft lists nothing) raw. --rt-len (the header's length in bytes,
 * which libxtables writes as nft's `rt hdrlength`, the field in 8-byte units), --rt-0-res and addresses raw.
 */
function rtText(b: Buffer): XtText {
  const [flags, inv] = [b[16], b[17]];
  if (flags & ~(IP6T_RT_TYP | IP6T_RT_SGS) || inv & ~flags) return undefined;
  const sgs = u32Range(readU32(b, 4), readU32(b, 8), (inv & IP6T_RT_SGS) !== 0);
  const parts = [flags & IP6T_RT_TYP ? `rt type ${inv & IP6T_RT_TYP ? '!= ' : ''}${readU32(b, 0)}` : '', sgs === undefined ? '' : `rt seg-left ${sgs}`];
  // a bare -m rt nft 1.0.6 lists as nothing, a rule matching every packet: raw
  return parts.some(Boolean) ? reversedIf(parts.filter(Boolean).join(' '), readU32(b, 4) > readU32(b, 8)) : undefined;
}

/** ip6tables' mh match, struct ip6t_mh { __u8 types[2]; __u8 invflags; }: `mh type 1` (libip6t_mh.c); a bare `-m mh` (nft lists nothing) raw */
function mhText(b: Buffer): XtText {
  const types = b[2] > 1 ? undefined : u32Range(b[0], b[1], b[2] === 1, 0xff);
  return reversedIf(types && `mh type ${types}`, b[0] > b[1]);
}

/** linux/netfilter/xt_tcpudp.h: XT_TCP_INV_SRCPT, _DSTPT, _FLAGS, _OPTION */
const XT_TCP_INV_SRCPT = 0x01;
const XT_TCP_INV_DSTPT = 0x02;
const XT_TCP_INV_OPTION = 0x08;
const XT_TCP_INV_FLAGS = 0x04;
/** libxt_tcp.c's tcp_flag_names_xlate, by bit */
const TCP_FLAG_NAMES = ['fin', 'syn', 'rst', 'psh', 'ack', 'urg'];

/** linux/netfilter/xt_tcpudp.h: XT_UDP_INV_SRCPT, _DSTPT */
const XT_UDP_INV_SRCPT = 0x01;
const XT_UDP_INV_DSTPT = 0x02;

/**
 * Why a bare `-m tcp`, `-m udp`, `-m dccp`, `-m esp` or `-m ah` (ip) prints raw: libxtables translates it as
 * nothing, which nft 1.0.6 lists as an empty statement (`meta l4proto tcp  counter`) and nft -f reads back as
 * no match at all, where the xt match drops fragments but the first (and truncated headers).
 */
const BARE_L4 = (proto: string): { raw: string } => ({
  raw: `nft 1.0.6 lists it as nothing, which reads back as no match: -m ${proto} drops non-first fragments`,
});

/**
 * The port ranges of struct xt_tcp and struct xt_udp (`__u16 spts[2], dpts[2]`, host order) as libxt_tcp's and
 * libxt_udp's xlate write them: `tcp sport 1-2 tcp dport != 22`, nothing for a whole range; undefined for a
 * range whose ends are reversed.
 */
function portRanges(b: Buffer, proto: string, invflags: number, inv: readonly [number, number]): string[] | undefined {
  const parts: string[] = [];
  for (const [word, at, flag] of [
    ['sport', 0, inv[0]],
    ['dport', 4, inv[1]],
  ] as const) {
    const [lo, hi] = [readU16(b, at), readU16(b, at + 2)];
    if (lo === 0 && hi === 0xffff && !(invflags & flag)) continue;
    if (lo > hi) return undefined;
    parts.push(`${proto} ${word} ${invflags & flag ? '!= ' : ''}${lo}${hi === lo ? '' : `-${hi}`}`);
  }
  return parts;
}

/**
 * iptables-nft's tcp match, which it writes as xt only with --tcp-option or bare: struct xt_tcp { __u16 spts[2], dpts[2];
 * __u8 option, flg_mask, flg_cmp, invflags; }, as libxt_tcp.c's tcp_xlate writes it (`tcp dport 22 tcp option 2
 * exists tcp flags syn / syn,ack`). ECN and CWR in --tcp-flags (libxt_tcp names only the first six) raw; a bare one
 * raw ({@link BARE_L4}).
 */
function tcpText(b: Buffer): XtText {
  const [option, flgMask, flgCmp, invflags] = [b[8], b[9], b[10], b[11]];
  if ((flgMask | flgCmp) & ~0x3f || flgCmp & ~flgMask || invflags & ~(XT_TCP_INV_SRCPT | XT_TCP_INV_DSTPT | XT_TCP_INV_FLAGS | XT_TCP_INV_OPTION))
    return undefined;
  const parts = portRanges(b, 'tcp', invflags, [XT_TCP_INV_SRCPT, XT_TCP_INV_DSTPT]);
  if (!parts) return undefined;
  if (option) parts.push(`tcp option ${option} ${invflags & XT_TCP_INV_OPTION ? 'missing' : 'exists'}`);
  else if (invflags & XT_TCP_INV_OPTION) return undefined;
  if (flgMask || invflags & XT_TCP_INV_FLAGS) {
    const names = (n: number): string => TCP_FLAG_NAMES.filter((_, i) => n & (1 << i)).join(',') || '0x0';
    parts.push(`tcp flags ${invflags & XT_TCP_INV_FLAGS ? '!= ' : ''}${names(flgCmp)} / ${names(flgMask)}`);
  }
  return parts.length ? parts.join(' ') : BARE_L4('tcp');
}

/**
 * iptables-nft's udp match, which it writes as xt only bare (ports it writes as `udp dport`): struct xt_udp { __u16
 * spts[2], dpts[2]; __u8 invflags; }, as libxt_udp.c's udp_xlate writes it; a bare one raw ({@link BARE_L4}).
 */
function udpText(b: Buffer): XtText {
  const invflags = b[8];
  if (invflags & ~(XT_UDP_INV_SRCPT | XT_UDP_INV_DSTPT)) return undefined;
  const parts = portRanges(b, 'udp', invflags, [XT_UDP_INV_SRCPT, XT_UDP_INV_DSTPT]);
  if (!parts) return undefined;
  return parts.length ? parts.join(' ') : BARE_L4('udp');
}

/** linux/netfilter/xt_connbytes.h: enum xt_connbytes_what, enum xt_connbytes_direction, as nft names them */
const CONNBYTES_WHAT = ['packets', 'bytes', 'avgpkt'];
const CONNBYTES_DIR = ['original ', 'reply ', ''];
const U64_MAX = 0xffffffffffffffffn;

/**
 * struct xt_connbytes_info { struct { aligned_u64 from, to; } count; __u8 what, direction; }, as libxt_connbytes.c's
 * connbytes_xlate writes it: `ct bytes ge 10`, `ct original packets 5-9`, `ct avgpkt != 5-9` (from past to: outside
 * the range). Every shape of the struct has its text: the counts are u64, printed exact.
 */
function connbytesText(b: Buffer): string | undefined {
  const read64 = (at: number): bigint => (LE ? b.readBigUInt64LE(at) : b.readBigUInt64BE(at));
  const [what, dir] = [CONNBYTES_WHAT[b[16]], CONNBYTES_DIR[b[17]]];
  if (what === undefined || dir === undefined) return undefined;
  const [from, to] = [read64(0), read64(8)];
  const invert = from > to;
  const [lo, hi] = invert ? [to, from] : [from, to];
  let value: string;
  if (lo === hi) value = String(lo);
  else if (hi === U64_MAX) value = `${invert ? 'lt' : 'ge'} ${lo}`;
  else value = `${invert ? '!= ' : ''}${lo}-${hi}`;
  return `ct ${dir}${what} ${value}`;
}

/** The matches whose translation synplug reproduces, by name (several where the struct differs by family). */
const MATCHES: Readonly<Record<string, Translation | readonly Translation[]>> = {
  // struct xt_addrtype_info_v1 { __u16 source; __u16 dest; __u32 flags; }: libxt_addrtype.c's addrtype_xlate,
  // which writes the source's types only when both are given, and `!=` for either inversion: those variants raw
  addrtype: {
    revs: [1],
    size: 8,
    text(b) {
      const [source, dest, flags] = [readU16(b, 0), readU16(b, 2), readU32(b, 4)];
      const known = XT_ADDRTYPE_INVERT_SOURCE | XT_ADDRTYPE_INVERT_DEST | XT_ADDRTYPE_LIMIT_IFACE_IN | XT_ADDRTYPE_LIMIT_IFACE_OUT;
      if (source && dest) return { raw: RAW_WHY.addrtypeBoth };
      if (!source === !dest || flags & ~known || flags & (source ? XT_ADDRTYPE_INVERT_DEST : XT_ADDRTYPE_INVERT_SOURCE)) return undefined;
      const types = source || dest;
      if (types >>> RTN_NAMES.length) return undefined;
      const names = RTN_NAMES.filter((_, i) => types & (1 << i));
      // libxtables braces a set of several types
      const iface = flags & XT_ADDRTYPE_LIMIT_IFACE_IN ? '. iif ' : flags & XT_ADDRTYPE_LIMIT_IFACE_OUT ? '. oif ' : '';
      const inv = flags & (XT_ADDRTYPE_INVERT_SOURCE | XT_ADDRTYPE_INVERT_DEST) ? '!= ' : '';
      return `fib ${source ? 'saddr' : 'daddr'} ${iface}type ${inv}${names.length > 1 ? `{ ${names.join(', ')} }` : names[0]}`;
    },
  },
  // struct xt_comment_info { char comment[256]; }: nft 1.0.6 prints libxtables' translation, which puts the
  // comment aside and writes nothing in the rule (`meta l4proto tcp  tcp dport 5`); it does not match anything
  comment: { revs: [0], size: 256, text: () => '' },
  // struct xt_iprange_mtinfo { union nf_inet_addr src_min, src_max, dst_min, dst_max; __u8 flags; }:
  // libxt_iprange.c's iprange_mt4_xlate / iprange_mt6_xlate (`ip saddr 127.0.0.1-127.0.0.5`)
  iprange: {
    revs: [1],
    size: 65,
    families: ['ip', 'ip6'],
    text(b, _rev, ctx) {
      const flags = b[64];
      if (!(flags & (IPRANGE_SRC | IPRANGE_DST)) || flags & ~(IPRANGE_SRC | IPRANGE_DST | IPRANGE_SRC_INV | IPRANGE_DST_INV)) return undefined;
      const len = ctx.family === 'ip' ? 4 : 16;
      const addr = (i: number): string => addressText(b.subarray(16 * i, 16 * i + len));
      const part = (bit: number, inv: number, dir: string, i: number): string[] =>
        flags & bit ? [`${ctx.family} ${dir}${flags & inv ? ' !=' : ''} ${addr(i)}-${addr(i + 1)}`] : [];
      const reversed = (bit: number, i: number): boolean =>
        (flags & bit) !== 0 && Buffer.compare(b.subarray(16 * i, 16 * i + len), b.subarray(16 * i + 16, 16 * i + 16 + len)) > 0;
      return reversedIf(
        [...part(IPRANGE_SRC, IPRANGE_SRC_INV, 'saddr', 0), ...part(IPRANGE_DST, IPRANGE_DST_INV, 'daddr', 2)].join(' '),
        reversed(IPRANGE_SRC, 0) || reversed(IPRANGE_DST, 2),
      );
    },
  },
  icmp: { revs: [0], size: 4, families: ['ip'], text: icmpMatch('icmp') },
  icmp6: { revs: [0], size: 4, families: ['ip6'], text: icmpMatch('icmpv6') },
  ttl: { revs: [0], size: 2, families: ['ip'], text: ttlText('ip ttl') },
  pkttype: [
    // ebtables': struct ebt_pkttype_info { __u8 pkt_type; __u8 invert; }
    {
      revs: [0],
      size: 2,
      families: ['bridge'],
      text: (b) => (PKTTYPES[b[0]] === undefined || b[1] > 1 ? undefined : `meta pkttype ${b[1] ? '!= ' : ''}${PKTTYPES[b[0]]}`),
    },
    // iptables': struct xt_pkttype_info { int pkttype; int invert; }, as libxt_pkttype.c's pkttype_xlate writes it
    // (`pkttype broadcast`, PACKET_HOST as `unicast`, a type it does not name as its number)
    {
      revs: [0],
      size: 8,
      families: ['ip', 'ip6'],
      text(b) {
        const [type, invert] = [readU32(b, 0), readU32(b, 4)];
        return invert > 1 ? undefined : `pkttype${invert ? ' !=' : ''} ${PKTTYPE_XLATE[type] ?? type | 0}`;
      },
    },
  ],
  // ebtables': struct ebt_vlan_info { __u16 id; __u8 prio; __be16 encap; __u8 bitmask, invflags; }
  vlan: {
    revs: [0],
    size: 8,
    families: ['bridge'],
    text(b) {
      const [bits, inv] = [b[6], b[7]];
      if (!bits || bits & ~(EBT_VLAN_ID | EBT_VLAN_PRIO | EBT_VLAN_ENCAP) || inv & ~bits) return undefined;
      const part = (bit: number, what: string, v: string): string => (bits & bit ? `vlan ${what} ${inv & bit ? '!= ' : ''}${v}` : '');
      return [
        part(EBT_VLAN_ID, 'id', String(readU16(b, 0))),
        part(EBT_VLAN_PRIO, 'pcp', String(b[2])),
        part(EBT_VLAN_ENCAP, 'type', `0x${b.readUInt16BE(4).toString(16).padStart(4, '0')}`),
      ]
        .filter(Boolean)
        .join(' ');
    },
  },
  ip: { revs: [0], size: 28, families: ['bridge'], text: ebtIpText },
  ip6: { revs: [0], size: 76, families: ['bridge'], text: ebtIp6Text },
  tcp: { revs: [0], size: 12, families: ['ip', 'ip6'], text: tcpText },
  udp: { revs: [0], size: 9, families: ['ip', 'ip6'], text: udpText },
  frag: { revs: [0], size: 14, families: ['ip6'], text: fragText },
  rt: { revs: [0], size: 18, families: ['ip6'], text: rtText },
  mh: { revs: [0], size: 3, families: ['ip6'], text: mhText },
  connbytes: { revs: [0], size: 18, text: connbytesText },
  mark_m: { revs: [0], size: 18, families: ['bridge'], text: ebtMarkText },
  // struct xt_owner_match_info { __u32 uid_min, uid_max; __u32 gid_min, gid_max; __u8 match, invert; }:
  // a uid or a gid alone (XT_OWNER_UID 1, XT_OWNER_GID 2), as nft 1.0.6 lists it (`skuid 0`, unqualified)
  owner: {
    revs: [1],
    size: 18,
    text(b) {
      const [match, invert] = [b[16], b[17]];
      if ((match !== 1 && match !== 2) || (invert !== 0 && invert !== match)) return undefined;
      const [min, max] = [readU32(b, match === 1 ? 0 : 8), readU32(b, match === 1 ? 4 : 12)];
      return `${match === 1 ? 'skuid' : 'skgid'} ${invert ? '!= ' : ''}${min}${max === min ? '' : `-${max}`}`;
    },
  },
  hl: { revs: [0], size: 2, families: ['ip6'], text: ttlText('ip6 hoplimit') },
  // Below: only the shapes checked against nft 1.0.6's listing; others raw.
  // struct xt_connmark_mtinfo1 { __u32 mark, mask; __u8 invert; }: `ct mark 0x5`
  // (`ct mark != 0x5`; under a mask `ct mark and 0xff == 0x5`)
  connmark: { revs: [1], size: 9, text: (b) => maskedText('ct mark', readU32(b, 0), readU32(b, 4), b[8]) },
  // struct xt_helper_info { int invert; char name[30]; }: `ct helper "ftp"`
  helper: {
    revs: [0],
    size: 34,
    text(b) {
      const name = b
        .subarray(4, 34)
        .toString('latin1')
        .replace(/\0[\s\S]*$/, '');
      return readU32(b, 0) <= 1 && /^[a-zA-Z0-9_.-]+$/.test(name) ? `ct helper ${readU32(b, 0) ? '!= ' : ''}"${name}"` : undefined;
    },
  },
  // struct xt_cpu_info { __u32 cpu; __u32 invert; }: `cpu 1`
  cpu: { revs: [0], size: 8, text: (b) => (readU32(b, 4) <= 1 ? `cpu ${readU32(b, 4) ? '!= ' : ''}${readU32(b, 0)}` : undefined) },
  // struct xt_realm_info { __u32 id; __u32 mask; __u8 invert; }: `rtclassid 0x5`
  realm: { revs: [0], size: 9, text: (b) => maskedText('rtclassid', readU32(b, 0), readU32(b, 4), b[8]) },
  // struct xt_devgroup_info { __u32 flags, src_group, src_mask, dst_group, dst_mask; }: XT_DEVGROUP_MATCH_SRC alone, `iifgroup 0x5`
  devgroup: { revs: [0], size: 20, text: (b) => (readU32(b, 0) === 1 ? maskedText('iifgroup', readU32(b, 4), readU32(b, 8), 0) : undefined) },
  // struct xt_cgroup_info_v2 { __u8 has_path, has_classid, invert_path, invert_classid; union { char path[512]; __u32 classid; }; ... }:
  // a classid, `meta cgroup 5`
  cgroup: { revs: [2], size: 8, text: (b) => (b[0] === 0 && b[1] === 1 && b[3] <= 1 ? `meta cgroup ${b[3] ? '!= ' : ''}${readU32(b, 4)}` : undefined) },
  // struct xt_ecn_info { __u8 operation, invert, ip_ect; union { struct { __u8 ect; } tcp; } proto; }:
  // `tcp flags ecn tcp flags cwr ip ecn ect1`, each part in its XT_ECN_OP_MATCH_* bit's order
  ecn: { revs: [0], size: 4, families: ['ip', 'ip6'], text: (b, _rev, ctx) => ecnText(b, ctx.family) },
  // struct xt_esp { __u32 spis[2]; __u8 invflags; }: `esp spi 5`, `esp spi 5-7` (libxt_esp.c's esp_xlate)
  esp: { revs: [0], size: 9, text: spiText('esp') },
  ah: [
    // struct ipt_ah { __u32 spis[2]; __u8 invflags; }: `ah spi 5` (libipt_ah.c's ah_xlate), esp's
    { revs: [0], size: 9, families: ['ip'], text: spiText('ah') },
    // ip6tables': struct ip6t_ah (above ah6Text)
    { revs: [0], size: 14, families: ['ip6'], text: ah6Text },
  ],
  // ip6tables': struct ip6t_opts (above hbhText)
  hbh: { revs: [0], size: 6, families: ['ip6'], text: hbhText },
  // struct xt_rpfilter_info { __u8 flags; } (above rpfilterText)
  rpfilter: { revs: [0], size: 1, families: ['ip', 'ip6'], text: rpfilterText },
  // struct xt_cluster_match_info { __u32 total_nodes, node_mask, hash_seed, flags; ... } (above clusterText)
  cluster: { revs: [0], size: 8, text: clusterText },
  // struct xt_quota_info { __u32 flags, pad; __aligned_u64 quota; ... }: `quota 1000 bytes`, XT_QUOTA_INVERT `quota over 1000 bytes`
  quota: {
    revs: [0],
    size: 16,
    text(b) {
      const q = LE ? b.readBigUInt64LE(8) : b.readBigUInt64BE(8);
      return readU32(b, 0) <= 1 && q <= BigInt(Number.MAX_SAFE_INTEGER) ? `quota ${readU32(b, 0) ? 'over ' : ''}${q} bytes` : undefined;
    },
  },
  // struct xt_tcpmss_match_info { __u16 mss_min, mss_max; __u8 invert; }: `tcp option maxseg size 100-200`
  tcpmss: {
    revs: [0],
    size: 5,
    text: (b) =>
      b[4] <= 1 ? `tcp option maxseg size ${b[4] ? '!= ' : ''}${readU16(b, 0)}${readU16(b, 2) === readU16(b, 0) ? '' : `-${readU16(b, 2)}`}` : undefined,
  },
  // struct xt_sctp_info { __u16 dpts[2], spts[2]; __u32 chunkmap[64], chunk_match_type; flag_info[4]; int flag_count; __u32 flags, invflags; }:
  // ports only (no chunk types), `sctp dport 5`
  sctp: { revs: [0], size: 292, text: (b) => portsText('sctp', b, readU32(b, 284), readU32(b, 288)) },
  // struct xt_dccp_info { __u16 dpts[2], spts[2], flags, invflags, typemask; __u8 option; }:
  // `dccp sport 5 dccp dport 6 dccp type { request, response }` (no --dccp-option: nft lists `xt match dccp`)
  dccp: { revs: [0], size: 15, text: dccpText },
  // struct xt_statistic_info { __u16 mode, flags; union { struct { __u32 probability; } random;
  //   struct { __u32 every, packet, count; } nth; } u; ... }: `meta random & 2147483647 < 1073741824`, `numgen inc mod 3 1`
  statistic: { revs: [0], size: 16, text: statisticText },
  // struct xt_time_info { __u32 date_start, date_stop, daytime_start, daytime_stop, monthdays_match; __u8 weekdays_match, flags; }
  time: { revs: [0], size: 22, text: timeText },
  // struct xt_connlabel_mtinfo { __u16 bit; __u16 options; }: libxt_connlabel.c's connlabel_mt_xlate, `ct label 5`, `ct label set 5
  // ct label 5` (XT_CONNLABEL_OP_SET), the label by number (it names it from /etc/xtables/connlabel.conf, as nft names a native
  // one from its connlabel.conf: synplug reads neither). XT_CONNLABEL_OP_INVERT raw: xt_connlabel.c matches a packet without
  // conntrack when inverted, where `ct label` breaks the rule.
  connlabel: {
    revs: [0],
    size: 4,
    text(b) {
      const [bit, options] = [readU16(b, 0), readU16(b, 2)];
      if (bit <= XT_CONNLABEL_MAXBIT && options === XT_CONNLABEL_OP_INVERT) return { raw: RAW_WHY.connlabelInvert };
      if (bit > XT_CONNLABEL_MAXBIT || options & ~XT_CONNLABEL_OP_SET) return undefined;
      return `${options & XT_CONNLABEL_OP_SET ? `ct label set ${bit} ` : ''}ct label ${bit}`;
    },
  },
  // struct xt_hashlimit_mtinfo3 (above hashlimitText): `meter bar { ip saddr limit rate 5/minute }`
  hashlimit: { revs: [3], size: 298, families: ['ip', 'ip6'], text: hashlimitText },
  // struct xt_policy_info { struct xt_policy_elem pol[XT_POLICY_MAX_ELEM]; __u16 flags, len; }: `meta secpath exists`
  policy: { revs: [0], size: POLICY_SIZE, text: policyText },
  // struct xt_length_info { __u16 min, max; __u8 invert; }
  length: {
    revs: [0],
    size: 5,
    text: (b) =>
      reversedIf(
        `meta length ${b[4] ? '!= ' : ''}${readU16(b, 0)}${readU16(b, 2) === readU16(b, 0) ? '' : `-${readU16(b, 2)}`}`,
        readU16(b, 0) > readU16(b, 2),
      ),
  },
  // struct xt_dscp_info { __u8 dscp; __u8 invert; }
  dscp: {
    revs: [0],
    size: 2,
    families: ['ip', 'ip6'],
    text: (b, _rev, ctx) => (b[0] < 64 && b[1] <= 1 ? `${ctx.family} dscp ${b[1] ? '!= ' : ''}0x${b[0].toString(16).padStart(2, '0')}` : undefined),
  },
  // struct xt_mac_info { unsigned char srcaddr[ETH_ALEN]; int invert; }
  mac: {
    revs: [0],
    size: 12,
    text: (b) => `ether saddr ${readU32(b, 8) ? '!= ' : ''}${[...b.subarray(0, 6)].map((x) => x.toString(16).padStart(2, '0')).join(':')}`,
  },
  // struct xt_conntrack_mtinfo3 (above CONNTRACK3): `ct state related,established`, `ct direction reply ct reply protocol 6`
  conntrack: { revs: [3], size: CONNTRACK3.SIZE, text: (b, _rev, ctx) => conntrackText(b, ctx.family, ctx.l4 !== undefined || ctx.l4Other === true) },
  // struct xt_multiport_v1 { __u8 flags; __u8 count; __u16 ports[15]; __u8 pflags[15]; __u8 invert; };
  // (pflags[i]: ports[i] and ports[i + 1] are a range)
  multiport: {
    revs: [1],
    size: 48,
    text(b, _rev, ctx) {
      const [dir, count, invert] = [b[0], b[1], b[47]];
      const either = dir === XT_MULTIPORT_EITHER && invert === 0;
      if (!ctx.l4 || !PORT_PROTOCOLS.has(ctx.l4) || (MULTIPORT_WORDS[dir] === undefined && !either) || count < 1 || count > 15 || invert > 1) return undefined;
      const items: string[] = [];
      for (let i = 0; i < count; i++) {
        const port = readU16(b, 2 + 2 * i);
        if (b[32 + i] && i + 1 < count) {
          items.push(`${port}-${readU16(b, 2 + 2 * (i + 1))}`);
          i++;
        } else items.push(String(port));
      }
      // --ports (either): libxtables' concatenation, each port as the source with any destination and the other way
      // round; it writes a range's ends as two ports, and `! --ports` as `--ports`: those raw
      if (either && items.some((p) => p.includes('-'))) return undefined;
      if (either) return `${ctx.l4} sport . ${ctx.l4} dport { ${items.map((p) => `0-65535 . ${p}, ${p} . 0-65535`).join(', ')} }`;
      const value = items.length === 1 ? items[0] : `{ ${items.join(', ')} }`;
      return `${ctx.l4} ${MULTIPORT_WORDS[dir]} ${invert ? '!= ' : ''}${value}`;
    },
  },
};

/**
 * nft 1.0.6's text of an xt extension in a table of `family`; `{ raw: why }`
 * where its listing is known to mean something else or nothing nft reads
 * ({@link RAW_WHY}); undefined when synplug does not reproduce it otherwise.
 */
export function xtText(kind: 'target' | 'match', e: XtExtension, ctx: XtContext): XtText {
  const found = (kind === 'target' ? TARGETS : MATCHES)[e.ext];
  const t = (Array.isArray(found) ? found : found ? [found as Translation] : []).find(
    (x) => x.revs.includes(e.rev) && (!x.families || x.families.includes(ctx.family)),
  );
  const b = Buffer.from(e.info, 'hex');
  const text = t && b.length >= t.size ? t.text(b, e.rev, ctx) : undefined;
  const why = (RAW_WHY as Readonly<Record<string, string>>)[`${kind} ${e.ext}`];
  if (text !== undefined || why === undefined) return text;
  return { raw: why === NAME_ONLY ? `nft 1.0.6 lists it as "xt ${kind} ${e.ext}", which nft -f cannot read` : why };
}

/**
 * The statement of an xt extension: nft's text and `json` (its `nft -j`
 * form), raw with why where nft's words would mean another rule, undefined
 * when synplug does not reproduce it (it then prints raw, short).
 */
export function xtStatement(kind: 'target' | 'match', e: XtExtension, ctx: XtContext, json: Record<string, unknown>): Statement | undefined {
  const t = xtText(kind, e, ctx);
  if (t === undefined || typeof t === 'string') return t === undefined ? undefined : { text: t, json };
  if ('raw' in t) return rawStatement(`${kind} name ${e.ext} rev ${e.rev}`, { [kind]: e.ext, rev: e.rev, info: e.info }, t.raw);
  return { text: t.text, json, problem: t.problem };
}

/** `log prefix "x"` as nft lists it, with a problem when `nft -f` cannot read it back (a `"` in it). */
function logPrefixed(text: string, prefix: string): XtText {
  const problem = quoteProblem('log prefix', prefix);
  return problem ? { text, problem } : text;
}
