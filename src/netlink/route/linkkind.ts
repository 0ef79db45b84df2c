/**
 * The kind details `ip -d link show` prints (iproute2 6.1): IFLA_INFO_DATA
 * of a bridge, vxlan or tun device and IFLA_INFO_SLAVE_DATA of a bridge
 * port, as `ip -d -j` JSON (`info_data`, `info_slave_data`) and as its text.
 *
 * ```c
 * IFLA_LINKINFO {                      // linux/if_link.h
 *   IFLA_INFO_KIND "bridge"            // or "vxlan", "tun"...
 *   IFLA_INFO_DATA { IFLA_BR_* | IFLA_VXLAN_* | IFLA_TUN_* }
 *   IFLA_INFO_SLAVE_KIND "bridge"      // a port of a bridge
 *   IFLA_INFO_SLAVE_DATA { IFLA_BRPORT_* }
 * }
 * ```
 * One table per kind: each line is one attribute (its number, wire type),
 * the JSON key `ip -d -j` gives it and how `ip -d` words it, in ip's order.
 * The text is made from the JSON values, so both say the same.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { endianness } from 'node:os';
import type { AttributeView } from '../attributes.js';
import { formatIp } from '../ipaddr.js';

/** A kind's decoded data, as `ip -d -j` writes it. */
export type KindData = Record<string, unknown>;

type Wire = 'u8' | 'u16' | 'u32' | 'u64' | 'be16' | 'ipv4' | 'ipv6' | 'bridgeId' | 'mac' | 'flag' | 'bin';

/**
 * One line of a kind's table: the attribute and its wire type; the JSON key
 * and value (undefined: not in JSON); the text (undefined: not in the text).
 * `d` is the JSON built so far, for text that depends on other fields.
 */
interface Line {
  attr: number;
  wire: Wire;
  /** the JSON key and value of the raw value (undefined: the line is left out); null: text only */
  json: ((v: number | bigint | string | Buffer, l: AttributeView, nameOf: (index: number) => string) => [string, unknown] | undefined) | null;
  /** the words in the text (without the trailing space), from the JSON value */
  text: ((v: unknown, d: KindData) => string | undefined) | null;
}

const onOff = (v: unknown): string => (v ? 'on' : 'off');
/** `%4i.%.2i` of centiseconds, as ip prints a bridge timer */
const timerText = (v: unknown): string => {
  const cs = Math.round(Number(v) * 100);
  return `${String(Math.floor(cs / 100)).padStart(4)}.${String(cs % 100).padStart(2, '0')}`;
};
const plain = (key: string, wire: Wire, attr: number, word = key): Line => ({ attr, wire, json: (v) => [key, Number(v)], text: (v) => `${word} ${v}` });
const onOffLine = (key: string, attr: number, word = key): Line => ({ attr, wire: 'u8', json: (v) => [key, Boolean(v)], text: (v) => `${word} ${onOff(v)}` });
const timer = (key: string, attr: number): Line => ({ attr, wire: 'u64', json: (v) => [key, Number(v) / 100], text: (v) => `${key} ${timerText(v)}` });
const ident = (key: string, attr: number, word: string): Line => ({ attr, wire: 'bridgeId', json: (v) => [key, v], text: (v) => `${word} ${v}` });
/** `group_fwd_mask`: `%#x`, JSON the same string */
const fwdMask = (attr: number): Line => ({
  attr,
  wire: 'u16',
  json: (v) => ['group_fwd_mask', Number(v) ? `0x${Number(v).toString(16)}` : '0'],
  text: (v) => `group_fwd_mask ${v}`,
});

/* IFLA_BR_* (enum in linux/if_link.h) */
const BR = {
  FORWARD_DELAY: 1,
  HELLO_TIME: 2,
  MAX_AGE: 3,
  AGEING_TIME: 4,
  STP_STATE: 5,
  PRIORITY: 6,
  VLAN_FILTERING: 7,
  VLAN_PROTOCOL: 8,
  GROUP_FWD_MASK: 9,
  ROOT_ID: 10,
  BRIDGE_ID: 11,
  ROOT_PORT: 12,
  ROOT_PATH_COST: 13,
  TOPOLOGY_CHANGE: 14,
  TOPOLOGY_CHANGE_DETECTED: 15,
  HELLO_TIMER: 16,
  TCN_TIMER: 17,
  TOPOLOGY_CHANGE_TIMER: 18,
  GC_TIMER: 19,
  GROUP_ADDR: 20,
  MCAST_ROUTER: 22,
  MCAST_SNOOPING: 23,
  MCAST_QUERY_USE_IFADDR: 24,
  MCAST_QUERIER: 25,
  MCAST_HASH_ELASTICITY: 26,
  MCAST_HASH_MAX: 27,
  MCAST_LAST_MEMBER_CNT: 28,
  MCAST_STARTUP_QUERY_CNT: 29,
  MCAST_LAST_MEMBER_INTVL: 30,
  MCAST_MEMBERSHIP_INTVL: 31,
  MCAST_QUERIER_INTVL: 32,
  MCAST_QUERY_INTVL: 33,
  MCAST_QUERY_RESPONSE_INTVL: 34,
  MCAST_STARTUP_QUERY_INTVL: 35,
  NF_CALL_IPTABLES: 36,
  NF_CALL_IP6TABLES: 37,
  NF_CALL_ARPTABLES: 38,
  VLAN_DEFAULT_PVID: 39,
  VLAN_STATS_ENABLED: 41,
  MCAST_STATS_ENABLED: 42,
  MCAST_IGMP_VERSION: 43,
  MCAST_MLD_VERSION: 44,
  VLAN_STATS_PER_PORT: 45,
  MULTI_BOOLOPT: 46,
} as const;

/** struct br_boolopt_multi { __u32 optval; __u32 optmask; }: BR_BOOLOPT_NO_LL_LEARN (0), BR_BOOLOPT_MCAST_VLAN_SNOOPING (1) as ip 6.1 prints them. */
const BOOLOPTS: Array<[bit: number, key: string]> = [
  [0, 'no_linklocal_learn'],
  [1, 'mcast_vlan_snooping'],
];

const BRIDGE: Line[] = [
  plain('forward_delay', 'u32', BR.FORWARD_DELAY),
  plain('hello_time', 'u32', BR.HELLO_TIME),
  plain('max_age', 'u32', BR.MAX_AGE),
  plain('ageing_time', 'u32', BR.AGEING_TIME),
  plain('stp_state', 'u32', BR.STP_STATE),
  plain('priority', 'u16', BR.PRIORITY),
  plain('vlan_filtering', 'u8', BR.VLAN_FILTERING),
  {
    attr: BR.VLAN_PROTOCOL,
    wire: 'be16',
    json: (v) => ['vlan_protocol', Number(v) === 0x8100 ? '802.1Q' : Number(v) === 0x88a8 ? '802.1ad' : `0x${Number(v).toString(16).padStart(4, '0')}`],
    text: (v) => `vlan_protocol ${v}`,
  },
  ident('bridge_id', BR.BRIDGE_ID, 'bridge_id'),
  ident('root_id', BR.ROOT_ID, 'designated_root'),
  plain('root_port', 'u16', BR.ROOT_PORT),
  plain('root_path_cost', 'u32', BR.ROOT_PATH_COST),
  plain('topology_change', 'u8', BR.TOPOLOGY_CHANGE),
  plain('topology_change_detected', 'u8', BR.TOPOLOGY_CHANGE_DETECTED),
  timer('hello_timer', BR.HELLO_TIMER),
  timer('tcn_timer', BR.TCN_TIMER),
  timer('topology_change_timer', BR.TOPOLOGY_CHANGE_TIMER),
  timer('gc_timer', BR.GC_TIMER),
  plain('vlan_default_pvid', 'u16', BR.VLAN_DEFAULT_PVID),
  plain('vlan_stats_enabled', 'u8', BR.VLAN_STATS_ENABLED),
  plain('vlan_stats_per_port', 'u8', BR.VLAN_STATS_PER_PORT),
  fwdMask(BR.GROUP_FWD_MASK),
  { attr: BR.GROUP_ADDR, wire: 'mac', json: (v) => ['group_addr', v], text: (v) => `group_address ${v}` },
  plain('mcast_snooping', 'u8', BR.MCAST_SNOOPING),
  ...BOOLOPTS.map(
    ([bit, key]): Line => ({
      attr: BR.MULTI_BOOLOPT,
      wire: 'bin',
      json: (v) => {
        const b = v as Buffer;
        if (b.length < 8) return undefined;
        const [val, mask] = endianness() === 'LE' ? [b.readUInt32LE(0), b.readUInt32LE(4)] : [b.readUInt32BE(0), b.readUInt32BE(4)];
        return (mask >>> bit) & 1 ? [key, (val >>> bit) & 1] : undefined;
      },
      text: (v) => `${key} ${v}`,
    }),
  ),
  plain('mcast_router', 'u8', BR.MCAST_ROUTER),
  plain('mcast_query_use_ifaddr', 'u8', BR.MCAST_QUERY_USE_IFADDR),
  plain('mcast_querier', 'u8', BR.MCAST_QUERIER),
  plain('mcast_hash_elasticity', 'u32', BR.MCAST_HASH_ELASTICITY),
  plain('mcast_hash_max', 'u32', BR.MCAST_HASH_MAX),
  plain('mcast_last_member_cnt', 'u32', BR.MCAST_LAST_MEMBER_CNT, 'mcast_last_member_count'),
  plain('mcast_startup_query_cnt', 'u32', BR.MCAST_STARTUP_QUERY_CNT, 'mcast_startup_query_count'),
  plain('mcast_last_member_intvl', 'u64', BR.MCAST_LAST_MEMBER_INTVL, 'mcast_last_member_interval'),
  plain('mcast_membership_intvl', 'u64', BR.MCAST_MEMBERSHIP_INTVL, 'mcast_membership_interval'),
  plain('mcast_querier_intvl', 'u64', BR.MCAST_QUERIER_INTVL, 'mcast_querier_interval'),
  plain('mcast_query_intvl', 'u64', BR.MCAST_QUERY_INTVL, 'mcast_query_interval'),
  plain('mcast_query_response_intvl', 'u64', BR.MCAST_QUERY_RESPONSE_INTVL, 'mcast_query_response_interval'),
  plain('mcast_startup_query_intvl', 'u64', BR.MCAST_STARTUP_QUERY_INTVL, 'mcast_startup_query_interval'),
  plain('mcast_stats_enabled', 'u8', BR.MCAST_STATS_ENABLED),
  plain('mcast_igmp_version', 'u8', BR.MCAST_IGMP_VERSION),
  plain('mcast_mld_version', 'u8', BR.MCAST_MLD_VERSION),
  plain('nf_call_iptables', 'u8', BR.NF_CALL_IPTABLES),
  plain('nf_call_ip6tables', 'u8', BR.NF_CALL_IP6TABLES),
  plain('nf_call_arptables', 'u8', BR.NF_CALL_ARPTABLES),
];

/* IFLA_BRPORT_* (enum in linux/if_link.h) */
const BRPORT = {
  STATE: 1,
  PRIORITY: 2,
  COST: 3,
  MODE: 4,
  GUARD: 5,
  PROTECT: 6,
  FAST_LEAVE: 7,
  LEARNING: 8,
  UNICAST_FLOOD: 9,
  PROXYARP: 10,
  PROXYARP_WIFI: 12,
  ROOT_ID: 13,
  BRIDGE_ID: 14,
  DESIGNATED_PORT: 15,
  DESIGNATED_COST: 16,
  ID: 17,
  NO: 18,
  TOPOLOGY_CHANGE_ACK: 19,
  CONFIG_PENDING: 20,
  MESSAGE_AGE_TIMER: 21,
  FORWARD_DELAY_TIMER: 22,
  HOLD_TIMER: 23,
  MULTICAST_ROUTER: 25,
  MCAST_FLOOD: 27,
  MCAST_TO_UCAST: 28,
  VLAN_TUNNEL: 29,
  BCAST_FLOOD: 30,
  GROUP_FWD_MASK: 31,
  NEIGH_SUPPRESS: 32,
  ISOLATED: 33,
  LOCKED: 39,
} as const;
/** BR_STATE_* (linux/if_bridge.h) as ip names them */
const PORT_STATES = ['disabled', 'listening', 'learning', 'forwarding', 'blocking'];
const hex16 = (key: string, attr: number, word: string): Line => ({
  attr,
  wire: 'u16',
  json: (v) => [key, `0x${Number(v).toString(16)}`],
  text: (v) => `${word} ${v}`,
});

const BRIDGE_PORT: Line[] = [
  { attr: BRPORT.STATE, wire: 'u8', json: (v) => ['state', PORT_STATES[Number(v)] ?? String(v)], text: (v) => `state ${v}` },
  plain('priority', 'u16', BRPORT.PRIORITY),
  plain('cost', 'u32', BRPORT.COST),
  onOffLine('hairpin', BRPORT.MODE),
  onOffLine('guard', BRPORT.GUARD),
  onOffLine('root_block', BRPORT.PROTECT),
  onOffLine('fastleave', BRPORT.FAST_LEAVE),
  onOffLine('learning', BRPORT.LEARNING),
  onOffLine('flood', BRPORT.UNICAST_FLOOD),
  hex16('id', BRPORT.ID, 'port_id'),
  hex16('no', BRPORT.NO, 'port_no'),
  plain('designated_port', 'u16', BRPORT.DESIGNATED_PORT),
  plain('designated_cost', 'u16', BRPORT.DESIGNATED_COST),
  ident('bridge_id', BRPORT.BRIDGE_ID, 'designated_bridge'),
  ident('root_id', BRPORT.ROOT_ID, 'designated_root'),
  timer('hold_timer', BRPORT.HOLD_TIMER),
  timer('message_age_timer', BRPORT.MESSAGE_AGE_TIMER),
  timer('forward_delay_timer', BRPORT.FORWARD_DELAY_TIMER),
  plain('topology_change_ack', 'u8', BRPORT.TOPOLOGY_CHANGE_ACK),
  plain('config_pending', 'u8', BRPORT.CONFIG_PENDING),
  onOffLine('proxy_arp', BRPORT.PROXYARP),
  onOffLine('proxy_arp_wifi', BRPORT.PROXYARP_WIFI),
  plain('multicast_router', 'u8', BRPORT.MULTICAST_ROUTER, 'mcast_router'),
  // the text says fast leave twice (its multicast name too), the JSON once
  { attr: BRPORT.FAST_LEAVE, wire: 'u8', json: null, text: (_v, d) => `mcast_fast_leave ${onOff(d.fastleave)}` },
  onOffLine('mcast_flood', BRPORT.MCAST_FLOOD),
  onOffLine('bcast_flood', BRPORT.BCAST_FLOOD),
  onOffLine('mcast_to_unicast', BRPORT.MCAST_TO_UCAST),
  onOffLine('neigh_suppress', BRPORT.NEIGH_SUPPRESS),
  fwdMask(BRPORT.GROUP_FWD_MASK),
  { attr: BRPORT.GROUP_FWD_MASK, wire: 'u16', json: (v) => ['group_fwd_mask_str', `0x${Number(v).toString(16)}`], text: (v) => `group_fwd_mask_str ${v}` },
  onOffLine('vlan_tunnel', BRPORT.VLAN_TUNNEL),
  onOffLine('isolated', BRPORT.ISOLATED),
  onOffLine('locked', BRPORT.LOCKED),
];

/* IFLA_VXLAN_* (enum in linux/if_link.h) */
const VX = {
  ID: 1,
  GROUP: 2,
  LINK: 3,
  LOCAL: 4,
  TTL: 5,
  TOS: 6,
  LEARNING: 7,
  AGEING: 8,
  LIMIT: 9,
  PORT_RANGE: 10,
  PROXY: 11,
  RSC: 12,
  L2MISS: 13,
  L3MISS: 14,
  PORT: 15,
  GROUP6: 16,
  LOCAL6: 17,
  UDP_CSUM: 18,
  UDP_ZERO_CSUM6_TX: 19,
  UDP_ZERO_CSUM6_RX: 20,
  REMCSUM_TX: 21,
  REMCSUM_RX: 22,
  GBP: 23,
  COLLECT_METADATA: 25,
  LABEL: 26,
  GPE: 27,
  TTL_INHERIT: 28,
  DF: 29,
} as const;
/** a u8 option ip prints only when set (`proxy`, `l2miss`) */
const whenSet = (key: string, attr: number, word = key): Line => ({ attr, wire: 'u8', json: (v) => (Number(v) ? [key, true] : undefined), text: () => word });
/** a flag attribute (no payload) ip prints when present (`gbp`) */
const flag = (key: string, attr: number): Line => ({ attr, wire: 'flag', json: () => [key, true], text: () => key });
/** `udpcsum` / `noudpcsum` */
const csum = (key: string, attr: number, word: string): Line => ({ attr, wire: 'u8', json: (v) => [key, Boolean(v)], text: (v) => `${v ? '' : 'no'}${word}` });
const isMulticast = (a: string): boolean =>
  a.includes(':') ? a.toLowerCase().startsWith('ff') : Number(a.split('.')[0]) >= 224 && Number(a.split('.')[0]) <= 239;
const remote = (attr: number, wire: 'ipv4' | 'ipv6', six: string): Line => ({
  attr,
  wire,
  json: (v) => (/^(0\.0\.0\.0|::)$/.test(String(v)) ? undefined : [`${isMulticast(String(v)) ? 'group' : 'remote'}${six}`, v]),
  text: (v) => `${isMulticast(String(v)) ? 'group' : 'remote'} ${v}`,
});

const VXLAN: Line[] = [
  whenSet('external', VX.COLLECT_METADATA),
  plain('id', 'u32', VX.ID),
  remote(VX.GROUP, 'ipv4', ''),
  remote(VX.GROUP6, 'ipv6', '6'),
  { attr: VX.LOCAL, wire: 'ipv4', json: (v) => (v === '0.0.0.0' ? undefined : ['local', v]), text: (v) => `local ${v}` },
  { attr: VX.LOCAL6, wire: 'ipv6', json: (v) => (v === '::' ? undefined : ['local6', v]), text: (v) => `local ${v}` },
  { attr: VX.LINK, wire: 'u32', json: (v, _l, nameOf) => (Number(v) ? ['link', nameOf(Number(v))] : undefined), text: (v) => `dev ${v}` },
  // struct ifla_vxlan_port_range { __be16 low; __be16 high; }
  {
    attr: VX.PORT_RANGE,
    wire: 'bin',
    json: (v) => ((v as Buffer).length >= 4 ? ['port_range', { low: (v as Buffer).readUInt16BE(0), high: (v as Buffer).readUInt16BE(2) }] : undefined),
    text: (v) => `srcport ${(v as { low: number }).low} ${(v as { high: number }).high}`,
  },
  { attr: VX.PORT, wire: 'be16', json: (v) => ['port', Number(v)], text: (v) => `dstport ${v}` },
  { attr: VX.LEARNING, wire: 'u8', json: (v) => ['learning', Boolean(v)], text: (v) => (v ? undefined : 'nolearning') },
  whenSet('proxy', VX.PROXY),
  whenSet('rsc', VX.RSC),
  whenSet('l2miss', VX.L2MISS),
  whenSet('l3miss', VX.L3MISS),
  {
    attr: VX.TOS,
    wire: 'u8',
    json: (v) => (Number(v) ? ['tos', `0x${Number(v).toString(16)}`] : undefined),
    text: (v) => (v === '0x1' ? 'tos inherit' : `tos ${v}`),
  },
  // `ttl inherit` (text only) replaces the ttl: ip's JSON then has no ttl
  { attr: VX.TTL_INHERIT, wire: 'u8', json: null, text: (v) => (v ? 'ttl inherit' : undefined) },
  { attr: VX.TTL, wire: 'u8', json: (v, l) => (l.u8(VX.TTL_INHERIT) ? undefined : ['ttl', Number(v)]), text: (v) => (v ? `ttl ${v}` : 'ttl auto') },
  {
    attr: VX.DF,
    wire: 'u8',
    json: (v) => ['df', Number(v) === 1 ? 'set' : Number(v) === 2 ? 'inherit' : 'unset'],
    text: (v) => (v === 'unset' ? undefined : `df ${v}`),
  },
  { attr: VX.LABEL, wire: 'u32', json: (v) => (Number(v) ? ['label', `0x${Number(v).toString(16)}`] : undefined), text: (v) => `flowlabel ${v}` },
  { attr: VX.AGEING, wire: 'u32', json: (v) => ['ageing', Number(v)], text: (v) => (v === 0 ? 'ageing none' : `ageing ${v}`) },
  { attr: VX.LIMIT, wire: 'u32', json: (v) => (Number(v) ? ['limit', Number(v)] : undefined), text: (v) => `maxaddr ${v}` },
  csum('udp_csum', VX.UDP_CSUM, 'udpcsum'),
  csum('udp_zero_csum6_tx', VX.UDP_ZERO_CSUM6_TX, 'udp6zerocsumtx'),
  csum('udp_zero_csum6_rx', VX.UDP_ZERO_CSUM6_RX, 'udp6zerocsumrx'),
  whenSet('remcsum_tx', VX.REMCSUM_TX, 'remcsumtx'),
  whenSet('remcsum_rx', VX.REMCSUM_RX, 'remcsumrx'),
  flag('gbp', VX.GBP),
  flag('gpe', VX.GPE),
];

/* IFLA_TUN_* (enum in linux/if_link.h) */
const TUN = { OWNER: 1, GROUP: 2, TYPE: 3, PI: 4, VNET_HDR: 5, PERSIST: 6, MULTI_QUEUE: 7, NUM_QUEUES: 8, NUM_DISABLED_QUEUES: 9 } as const;

/**
 * The name of a user or group id, from the accounts file (`/etc/passwd`,
 * `/etc/group`: `name:x:id:...`), as ip's getpwuid / getgrgid find it on a
 * system without other account databases; undefined when the id has none
 * or the file cannot be read.
 */
export function accountName(file: string, id: number): string | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  for (const line of text.split('\n')) {
    const f = line.split(':');
    if (f.length >= 3 && f[2] === String(id) && f[0]) return f[0];
  }
  return undefined;
}

/** IFLA_TUN_OWNER / _GROUP (u32; the kernel sends them when set): `user nobody`, by name when it has one, as ip prints (JSON too) */
const owner = (key: 'user' | 'group', attr: number, file: string): Line => ({
  attr,
  wire: 'u32',
  json: (v) => (Number(v) === 0xffffffff ? undefined : [key, accountName(file, Number(v)) ?? Number(v)]),
  text: (v) => `${key} ${v}`,
});
const TUN_LINES: Line[] = [
  { attr: TUN.TYPE, wire: 'u8', json: (v) => ['type', Number(v) === 1 ? 'tun' : Number(v) === 2 ? 'tap' : 'unknown'], text: (v) => `type ${v}` },
  onOffLine('pi', TUN.PI),
  onOffLine('vnet_hdr', TUN.VNET_HDR),
  { attr: TUN.MULTI_QUEUE, wire: 'u8', json: (v) => ['multi_queue', Boolean(v)], text: (v) => (v ? 'multi_queue' : undefined) },
  // the kernel sends the queue counts of multi-queue devices only
  plain('numqueues', 'u32', TUN.NUM_QUEUES),
  plain('numdisabled', 'u32', TUN.NUM_DISABLED_QUEUES),
  onOffLine('persist', TUN.PERSIST),
  owner('user', TUN.OWNER, '/etc/passwd'),
  owner('group', TUN.GROUP, '/etc/group'),
];

/** The tables by kind (IFLA_INFO_KIND), and of the ports of a kind (IFLA_INFO_SLAVE_KIND). */
const KINDS: Record<string, Line[]> = { bridge: BRIDGE, vxlan: VXLAN, tun: TUN_LINES };
const SLAVE_KINDS: Record<string, Line[]> = { bridge: BRIDGE_PORT };

function read(l: AttributeView, line: Line): number | bigint | string | Buffer | undefined {
  const mac = (b: Buffer): string => [...b].map((x) => x.toString(16).padStart(2, '0')).join(':');
  switch (line.wire) {
    case 'u8':
      return l.u8(line.attr);
    case 'u16':
      return l.u16(line.attr);
    case 'be16':
      return l.u16be(line.attr);
    case 'u32':
      return l.u32(line.attr);
    case 'u64':
      return l.u64(line.attr);
    case 'flag':
      return l.has(line.attr) ? 1 : undefined;
    case 'bin':
      return l.bin(line.attr);
    case 'mac': {
      const b = l.bin(line.attr);
      return b && mac(b);
    }
    case 'ipv4':
    case 'ipv6': {
      const b = l.bin(line.attr);
      return b && b.length === (line.wire === 'ipv4' ? 4 : 16) ? formatIp(b) : undefined;
    }
    case 'bridgeId': {
      // struct ifla_bridge_id { __u8 prio[2]; __u8 addr[6]; }
      const b = l.bin(line.attr);
      // ip writes the address of a bridge id without leading zeros (`8000.a:6d:74:60:40:53`)
      return b && b.length >= 8 ? `${b.subarray(0, 2).toString('hex')}.${[...b.subarray(2, 8)].map((x) => x.toString(16)).join(':')}` : undefined;
    }
  }
}

/**
 * A kind's data (`info_data` / `info_slave_data`) and its text (the words
 * `ip -d` prints after the kind's name, each followed by a space).
 * Undefined when synplug has no table for the kind. `nameOf` names a
 * device index (a vxlan's `dev`), `if<N>` by default.
 * @throws {NetlinkDecodeError} an attribute too short for its type
 */
export function kindData(
  kind: string,
  l: AttributeView,
  slave = false,
  nameOf: (index: number) => string = (i) => `if${i}`,
): { json: KindData; text: string } | undefined {
  const table = (slave ? SLAVE_KINDS : KINDS)[kind];
  if (!table) return undefined;
  const json: KindData = {};
  const words: string[] = [];
  for (const line of table) {
    const v = read(l, line);
    if (v === undefined) continue;
    let shown: unknown = v;
    if (line.json) {
      const kv = line.json(v, l, nameOf);
      if (!kv) continue;
      json[kv[0]] = kv[1];
      shown = kv[1];
    }
    const w = line.text?.(shown, json);
    if (w !== undefined) words.push(w);
  }
  return { json, text: words.map((w) => `${w} `).join('') };
}

/** IFLA_LINKINFO as `ip -d -j` writes it. */
export interface LinkInfoJson {
  /** IFLA_INFO_KIND: "bridge", "veth"...; absent for a physical device that is a port */
  info_kind?: string;
  /** IFLA_INFO_DATA of the kinds synplug decodes (bridge, vxlan, tun) */
  info_data?: KindData;
  /** IFLA_INFO_SLAVE_KIND: the kind of the device this one is a port of ("bridge") */
  info_slave_kind?: string;
  /** IFLA_INFO_SLAVE_DATA of the port kinds synplug decodes (bridge) */
  info_slave_data?: KindData;
}

/* IFLA_INFO_* (linux/if_link.h) */
const IFLA_INFO_KIND = 1;
const IFLA_INFO_DATA = 2;
const IFLA_INFO_SLAVE_KIND = 4;
const IFLA_INFO_SLAVE_DATA = 5;

/** The text `ip -d` prints for a decoded IFLA_LINKINFO, kept with it for {@link linkInfoText}. */
const TEXTS = new WeakMap<LinkInfoJson, string>();

/**
 * IFLA_LINKINFO as `ip -d -j` writes it; undefined when it names no kind.
 * @param nameOf the name of a device index (a vxlan's `dev`); `if<N>` when not given
 * @throws {NetlinkDecodeError} an attribute too short for its type
 */
export function decodeLinkInfo(info: AttributeView, nameOf?: (index: number) => string): LinkInfoJson | undefined {
  const kind = info.str(IFLA_INFO_KIND);
  const slave = info.str(IFLA_INFO_SLAVE_KIND);
  if (kind === undefined && slave === undefined) return undefined;
  const out: LinkInfoJson = {};
  let text = '';
  if (kind !== undefined) {
    out.info_kind = kind;
    text += `\n    ${kind} `;
    const data = info.nested(IFLA_INFO_DATA);
    const d = data && kindData(kind, data, false, nameOf);
    if (d) {
      out.info_data = d.json;
      text += d.text;
    }
  }
  if (slave !== undefined) {
    out.info_slave_kind = slave;
    text += `\n    ${slave}_slave `;
    const data = info.nested(IFLA_INFO_SLAVE_DATA);
    const d = data && kindData(slave, data, true);
    if (d) {
      out.info_slave_data = d.json;
      text += d.text;
    }
  }
  TEXTS.set(out, text);
  return out;
}

/** The lines `ip -d link show` prints for a linkinfo made by {@link decodeLinkInfo} (its kind only for one made otherwise). */
export function linkInfoText(l: LinkInfoJson): string {
  return TEXTS.get(l) ?? (l.info_kind !== undefined ? `\n    ${l.info_kind} ` : '');
}
