/**
 * Names of nftables numbers, as `nft` prints them (families, hooks,
 * priorities, meta keys, verdicts) and as the kernel headers spell them
 * (message types).
 *
 * @module
 */
import { UsageError } from '../netlink/errors.js';
import * as C from './constants.js';

/** An nftables family as `nft` names it; `nfgen_family` on the wire (NFPROTO_* of netfilter.h). */
export type NftFamily = 'ip' | 'ip6' | 'inet' | 'arp' | 'bridge' | 'netdev';

const FAMILY_NUM: Record<NftFamily, number> = {
  ip: C.NFPROTO_IPV4,
  ip6: C.NFPROTO_IPV6,
  inet: C.NFPROTO_INET,
  arp: C.NFPROTO_ARP,
  bridge: C.NFPROTO_BRIDGE,
  netdev: C.NFPROTO_NETDEV,
};
const FAMILY_NAME = new Map<number, NftFamily>(Object.entries(FAMILY_NUM).map(([k, v]) => [v, k as NftFamily]));

/**
 * NFPROTO_* number of a family name.
 * @throws {UsageError} an unknown family name
 */
export function familyNumber(family: string): number {
  const n = (FAMILY_NUM as Record<string, number>)[family];
  if (n === undefined) throw new UsageError(`unknown nftables family '${family}': use ip, ip6, inet, arp, bridge or netdev`);
  return n;
}

/** Family name of an NFPROTO_* number; unknown numbers read `family(<n>)`, 0 reads `unspec`. */
export function familyName(n: number): string {
  if (n === C.NFPROTO_UNSPEC) return 'unspec';
  return FAMILY_NAME.get(n) ?? `family(${n})`;
}

/**
 * Stateful object types (NFT_OBJECT_* of nf_tables.h: NFTA_OBJ_TYPE of an
 * object, NFTA_SET_OBJ_TYPE of an object map) as nft names them: `counter`,
 * `quota`, `ct helper`, `limit`...
 */
export const OBJECT_TYPE_NAMES: ReadonlyMap<number, string> = new Map([
  [C.NFT_OBJECT_COUNTER, 'counter'],
  [C.NFT_OBJECT_QUOTA, 'quota'],
  [C.NFT_OBJECT_CT_HELPER, 'ct helper'],
  [C.NFT_OBJECT_LIMIT, 'limit'],
  [C.NFT_OBJECT_CONNLIMIT, 'connlimit'],
  [C.NFT_OBJECT_TUNNEL, 'tunnel'],
  [C.NFT_OBJECT_CT_TIMEOUT, 'ct timeout'],
  [C.NFT_OBJECT_SECMARK, 'secmark'],
  [C.NFT_OBJECT_CT_EXPECT, 'ct expectation'],
  [C.NFT_OBJECT_SYNPROXY, 'synproxy'],
]);

/** Name of an NFT_OBJECT_* number ({@link OBJECT_TYPE_NAMES}); unknown numbers read `type(<n>)`. */
export function objectTypeName(n: number): string {
  return OBJECT_TYPE_NAMES.get(n) ?? `type(${n})`;
}

const INET_HOOKS = ['prerouting', 'input', 'forward', 'output', 'postrouting', 'ingress'];
/** Hook names by family (`nf_inet_hooks`; arp's NF_ARP_IN/OUT/FORWARD; `nf_dev_hooks`). */
const HOOKS: Record<string, readonly string[]> = { arp: ['input', 'output', 'forward'], netdev: ['ingress', 'egress'] };
const hooksOf = (family: string): readonly string[] => HOOKS[family] ?? INET_HOOKS;

/** Hook name of a hook number in a family (`nf_inet_hooks`, arp's `NF_ARP_*`, `nf_dev_hooks`); unknown -> `hook(<n>)`. */
export function hookName(family: string, n: number): string {
  return hooksOf(family)[n] ?? `hook(${n})`;
}

/**
 * Hook number of a hook name.
 * @throws {UsageError} an unknown hook name for the family
 */
export function hookNumber(family: string, name: string): number {
  const list = hooksOf(family);
  const i = list.indexOf(name);
  if (i < 0) throw new UsageError(`unknown hook '${name}' for family ${family}: use ${list.join(', ')}`);
  return i;
}

/**
 * nft 1.0.6's standard priority names by family (src/rule.c `std_prios`,
 * `bridge_std_prios`), each with the hooks it is printed for (all when
 * absent), as `nft list ruleset` prints them: ip, ip6 and inet name dstnat
 * only at prerouting and srcnat only at postrouting; arp and netdev name
 * only filter.
 */
const STD_PRIOS: Array<{ name: string; value: number; hooks?: string[] }> = [
  { name: 'raw', value: C.NF_IP_PRI_RAW },
  { name: 'mangle', value: C.NF_IP_PRI_MANGLE },
  { name: 'dstnat', value: C.NF_IP_PRI_NAT_DST, hooks: ['prerouting'] },
  { name: 'filter', value: C.NF_IP_PRI_FILTER },
  { name: 'security', value: C.NF_IP_PRI_SECURITY },
  { name: 'srcnat', value: C.NF_IP_PRI_NAT_SRC, hooks: ['postrouting'] },
];
const PRIOS_BY_FAMILY: Record<string, typeof STD_PRIOS> = {
  ip: STD_PRIOS,
  ip6: STD_PRIOS,
  inet: STD_PRIOS,
  arp: [{ name: 'filter', value: C.NF_IP_PRI_FILTER }],
  netdev: [{ name: 'filter', value: C.NF_IP_PRI_FILTER }],
  bridge: [
    { name: 'dstnat', value: C.NF_BR_PRI_NAT_DST_BRIDGED, hooks: ['prerouting'] },
    { name: 'filter', value: C.NF_BR_PRI_FILTER_BRIDGED },
    { name: 'out', value: C.NF_BR_PRI_NAT_DST_OTHER, hooks: ['output'] },
    { name: 'srcnat', value: C.NF_BR_PRI_NAT_SRC, hooks: ['postrouting'] },
  ],
};

/**
 * A chain priority as nft 1.0.6 prints it for its family and hook: `mangle`,
 * `filter + 10`, `filter - 1`, or the number when no standard name of that
 * family and hook is within 10.
 */
export function priorityText(family: string, hook: string | undefined, prio: number): string {
  for (const p of PRIOS_BY_FAMILY[family] ?? []) {
    if (p.hooks && (!hook || !p.hooks.includes(hook))) continue;
    const off = prio - p.value;
    if (off === 0) return p.name;
    if (off > 0 && off <= 10) return `${p.name} + ${off}`;
    if (off < 0 && off >= -10) return `${p.name} - ${-off}`;
  }
  return String(prio);
}

/**
 * A priority from a number or an nft name (`mangle`, `filter`...), the
 * name's value in `family` (bridge's filter is -200; ip's when no family).
 * @throws {UsageError} an unknown name or a number outside s32
 */
export function priorityNumber(p: number | string, family?: string): number {
  if (typeof p === 'number') {
    if (!Number.isInteger(p) || p < -0x80000000 || p > 0x7fffffff) throw new UsageError(`bad chain priority ${p}: an integer from -2147483648 to 2147483647`);
    return p;
  }
  const prios = PRIOS_BY_FAMILY[family ?? 'ip'] ?? STD_PRIOS;
  const std = prios.find((s) => s.name === p);
  if (std) return std.value;
  if (/^-?[0-9]+$/.test(p)) return priorityNumber(Number(p));
  throw new UsageError(`bad chain priority '${p}': a number or one of ${prios.map((s) => s.name).join(', ')}`);
}

/** nf_tables message type names, index = NFT_MSG_* (enum nf_tables_msg_types). */
export const NFT_MSG_NAMES: readonly string[] = [
  'NFT_MSG_NEWTABLE',
  'NFT_MSG_GETTABLE',
  'NFT_MSG_DELTABLE',
  'NFT_MSG_NEWCHAIN',
  'NFT_MSG_GETCHAIN',
  'NFT_MSG_DELCHAIN',
  'NFT_MSG_NEWRULE',
  'NFT_MSG_GETRULE',
  'NFT_MSG_DELRULE',
  'NFT_MSG_NEWSET',
  'NFT_MSG_GETSET',
  'NFT_MSG_DELSET',
  'NFT_MSG_NEWSETELEM',
  'NFT_MSG_GETSETELEM',
  'NFT_MSG_DELSETELEM',
  'NFT_MSG_NEWGEN',
  'NFT_MSG_GETGEN',
  'NFT_MSG_TRACE',
  'NFT_MSG_NEWOBJ',
  'NFT_MSG_GETOBJ',
  'NFT_MSG_DELOBJ',
  'NFT_MSG_GETOBJ_RESET',
  'NFT_MSG_NEWFLOWTABLE',
  'NFT_MSG_GETFLOWTABLE',
  'NFT_MSG_DELFLOWTABLE',
  'NFT_MSG_GETRULE_RESET',
  'NFT_MSG_DESTROYTABLE',
  'NFT_MSG_DESTROYCHAIN',
  'NFT_MSG_DESTROYRULE',
  'NFT_MSG_DESTROYSET',
  'NFT_MSG_DESTROYSETELEM',
  'NFT_MSG_DESTROYOBJ',
  'NFT_MSG_DESTROYFLOWTABLE',
  'NFT_MSG_GETSETELEM_RESET',
];

/** Subsystem names, index = NFNL_SUBSYS_* (nfnetlink.h). */
export const NFNL_SUBSYS_NAMES: readonly string[] = [
  'NFNL_SUBSYS_NONE',
  'NFNL_SUBSYS_CTNETLINK',
  'NFNL_SUBSYS_CTNETLINK_EXP',
  'NFNL_SUBSYS_QUEUE',
  'NFNL_SUBSYS_ULOG',
  'NFNL_SUBSYS_OSF',
  'NFNL_SUBSYS_IPSET',
  'NFNL_SUBSYS_ACCT',
  'NFNL_SUBSYS_CTNETLINK_TIMEOUT',
  'NFNL_SUBSYS_CTHELPER',
  'NFNL_SUBSYS_NFTABLES',
  'NFNL_SUBSYS_NFT_COMPAT',
  'NFNL_SUBSYS_HOOK',
];

/** meta keys by number (enum nft_meta_keys), as nft names them. */
export const META_KEY_NAMES: readonly string[] = [
  'length',
  'protocol',
  'priority',
  'mark',
  'iif',
  'oif',
  'iifname',
  'oifname',
  'iiftype',
  'oiftype',
  'skuid',
  'skgid',
  'nftrace',
  'rtclassid',
  'secmark',
  'nfproto',
  'l4proto',
  'ibrname',
  'obrname',
  'pkttype',
  'cpu',
  'iifgroup',
  'oifgroup',
  'cgroup',
  'random',
  'ipsec',
  'iifkind',
  'oifkind',
  'ibrpvid',
  'ibrvproto',
  'time',
  'day',
  'hour',
  'sdif',
  'sdifname',
  'broute',
];

/** Name of a meta key number; unknown -> `key(<n>)`. */
export function metaKeyName(n: number): string {
  return META_KEY_NAMES[n] ?? `key(${n})`;
}

/**
 * Number of a meta key name (`mark`, `l4proto`, `nfproto`...).
 * @throws {UsageError} an unknown key
 */
export function metaKeyNumber(name: string): number {
  const m = /^key\((\d+)\)$/.exec(name);
  if (m) return Number(m[1]);
  const i = META_KEY_NAMES.indexOf(name);
  if (i < 0) throw new UsageError(`unknown meta key '${name}'`);
  return i;
}

/** Payload base names (enum nft_payload_bases), as libnftnl prints them. */
export const PAYLOAD_BASE_NAMES: readonly string[] = ['link', 'network', 'transport', 'inner'];

/** cmp operator names (enum nft_cmp_ops). */
export const CMP_OP_NAMES: readonly string[] = ['eq', 'neq', 'lt', 'lte', 'gt', 'gte'];

/** Verdict names by code (NF_* of netfilter.h and enum nft_verdicts), as nft prints them. */
export const VERDICT_NAMES: ReadonlyMap<number, string> = new Map([
  [C.NF_DROP, 'drop'],
  [C.NF_ACCEPT, 'accept'],
  [C.NF_STOLEN, 'stolen'],
  [C.NF_QUEUE, 'queue'],
  [C.NF_REPEAT, 'repeat'],
  [C.NF_STOP, 'stop'],
  [C.NFT_CONTINUE, 'continue'],
  [C.NFT_BREAK, 'break'],
  [C.NFT_JUMP, 'jump'],
  [C.NFT_GOTO, 'goto'],
  [C.NFT_RETURN, 'return'],
]);

/** Name of a chain policy (NF_ACCEPT / NF_DROP). */
export function policyName(n: number): string {
  return n === C.NF_ACCEPT ? 'accept' : n === C.NF_DROP ? 'drop' : `policy(${n})`;
}

/**
 * nft 1.0.6's keywords that it cannot read as a name (`chain fwd`, `jump log`): each token of
 * its parser (the quoted names in libnftables' yytname) that `nft -f` refused as a chain's name
 * and a jump's target, in every family (test/live/nft-ruleset-roundtrip.test.ts checks the list
 * against /usr/sbin/nft). It reads no quoted form of a name either (`chain "fwd"`: a syntax error).
 */
export const NFT_KEYWORDS: ReadonlySet<string> = new Set([
  '.',
  'accept',
  'add',
  'ah',
  'all',
  'arp',
  'auto-merge',
  'bridge',
  'cgroup',
  'chain',
  'comment',
  'comp',
  'constant',
  'continue',
  'counter',
  'cpu',
  'create',
  'ct',
  'day',
  'dccp',
  'define',
  'delete',
  'describe',
  'device',
  'devices',
  'dnat',
  'drop',
  'dst',
  'dup',
  'dynamic',
  'ecn',
  'element',
  'elements',
  'esp',
  'ether',
  'exists',
  'expires',
  'export',
  'exthdr',
  'fib',
  'flags',
  'flow',
  'flowtable',
  'flush',
  'frag',
  'fwd',
  'gc-interval',
  'get',
  'goto',
  'handle',
  'hbh',
  'hook',
  'hour',
  'ibriport',
  'ibrname',
  'icmp',
  'icmpv6',
  'igmp',
  'iif',
  'iifgroup',
  'iifname',
  'iiftype',
  'import',
  'include',
  'index',
  'inet',
  'insert',
  'interval',
  'ip',
  'ip6',
  'ipsec',
  'jhash',
  'jump',
  'limit',
  'list',
  'log',
  'map',
  'mark',
  'masquerade',
  'meta',
  'meter',
  'mh',
  'missing',
  'monitor',
  'netdev',
  'nftrace',
  'notrack',
  'numgen',
  'obriport',
  'obrname',
  'offload',
  'oif',
  'oifgroup',
  'oifname',
  'oiftype',
  'osf',
  'pkttype',
  'policy',
  'position',
  'priority',
  'queue',
  'quota',
  'random',
  'redefine',
  'redirect',
  'reject',
  'rename',
  'replace',
  'reset',
  'return',
  'rt',
  'rt0',
  'rt2',
  'rtclassid',
  'rule',
  'ruleset',
  'sctp',
  'secmark',
  'set',
  'size',
  'skgid',
  'skuid',
  'snat',
  'socket',
  'srh',
  'symhash',
  'synproxy',
  'table',
  'tcp',
  'th',
  'time',
  'timeout',
  'tproxy',
  'type',
  'typeof',
  'udp',
  'udplite',
  'undefine',
  'update',
  'vlan',
  'vmap',
  'xt',
]);

/**
 * Words nft 1.0.6's scanner reads as operators (`and` as `&`, `eq` as `==`, ...), so not as a
 * name either: they are no token names of its parser, so not in {@link NFT_KEYWORDS} (found by
 * trying each as a chain's name and a jump's target; the live test checks them against /usr/sbin/nft).
 */
export const NFT_OPERATOR_WORDS: ReadonlySet<string> = new Set(['and', 'or', 'xor', 'not', 'eq', 'ne', 'lt', 'gt', 'le', 'ge', 'lshift', 'rshift']);

/** nft 1.0.6's scanner's unquoted string, `({letter}|[_.])({letter}|{digit}|[/\-_\.])*`, and the two words it reads as one (`8021q`, `8021ad`). */
const NFT_STRING = /^(?:[A-Za-z_.][A-Za-z0-9/\-_.]*|8021q|8021ad)$/;

/**
 * Whether `nft -f` (1.0.6) reads `name` back as a table's, chain's or set's name, written as nft
 * lists it (unquoted): one of its unquoted strings and no keyword (`fwd`, `log`, `a;b` it cannot).
 */
export function nftReadsName(name: string): boolean {
  return NFT_STRING.test(name) && !NFT_KEYWORDS.has(name) && !NFT_OPERATOR_WORDS.has(name);
}
