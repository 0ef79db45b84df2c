/**
 * Network links (rtnetlink RTM_GETLINK / RTM_NEWLINK), decoded to the fields
 * of `ip -j link show`, and printed like `ip link show`.
 *
 * ```c
 * // linux/rtnetlink.h
 * struct ifinfomsg {
 *   unsigned char  ifi_family;
 *   unsigned char  __ifi_pad;
 *   unsigned short ifi_type;    // ARPHRD_*
 *   int            ifi_index;   // link index
 *   unsigned       ifi_flags;   // IFF_* flags
 *   unsigned       ifi_change;  // IFF_* change mask
 * };
 * ```
 * followed by IFLA_* attributes (linux/if_link.h).
 *
 * @module
 */
import { cString, parseAttributes, str, u32, type AttributeView } from '../attributes.js';
import { NetlinkDecodeError, NetlinkError, UsageError } from '../errors.js';
import { NETLINK_ROUTE, NLM_F_REQUEST, type NetlinkMessage } from '../message.js';
import { registerBodyDecoder } from '../protocols.js';
import type { NetlinkConnection } from '../connection.js';
import { RTM_DELLINK, RTM_GETLINK, RTM_NEWLINK, RTM_SETLINK } from './constants.js';
import { formatIp } from '../ipaddr.js';
import { decodeLinkInfo, linkInfoText, type LinkInfoJson } from './linkkind.js';

/** sizeof(struct ifinfomsg) */
export const IFINFOMSG_LEN = 16;

/* enum IFLA_* (linux/if_link.h) */
export const IFLA_UNSPEC = 0;
export const IFLA_ADDRESS = 1;
export const IFLA_BROADCAST = 2;
export const IFLA_IFNAME = 3;
export const IFLA_MTU = 4;
export const IFLA_LINK = 5;
export const IFLA_QDISC = 6;
export const IFLA_STATS = 7;
export const IFLA_MASTER = 10;
export const IFLA_TXQLEN = 13;
export const IFLA_OPERSTATE = 16;
export const IFLA_LINKMODE = 17;
export const IFLA_LINKINFO = 18;
export const IFLA_IFALIAS = 20;
export const IFLA_STATS64 = 23;
export const IFLA_AF_SPEC = 26;
export const IFLA_GROUP = 27;
export const IFLA_EXT_MASK = 29;
export const IFLA_PROMISCUITY = 30;
export const IFLA_NUM_TX_QUEUES = 31;
export const IFLA_NUM_RX_QUEUES = 32;
export const IFLA_CARRIER = 33;
export const IFLA_LINK_NETNSID = 37;
export const IFLA_PROTO_DOWN = 39;
export const IFLA_MIN_MTU = 50;
export const IFLA_MAX_MTU = 51;
export const IFLA_PROP_LIST = 52;
export const IFLA_ALT_IFNAME = 53;
export const IFLA_PERM_ADDRESS = 54;
/** IFLA_GSO_MAX_SEGS: u32 */
export const IFLA_GSO_MAX_SEGS = 40;
/** IFLA_GSO_MAX_SIZE: u32 */
export const IFLA_GSO_MAX_SIZE = 41;
/** IFLA_GRO_MAX_SIZE: u32 */
export const IFLA_GRO_MAX_SIZE = 58;
/** IFLA_TSO_MAX_SIZE: u32 */
export const IFLA_TSO_MAX_SIZE = 59;
/** IFLA_TSO_MAX_SEGS: u32 */
export const IFLA_TSO_MAX_SEGS = 60;
/** IFLA_ALLMULTI: u32 */
export const IFLA_ALLMULTI = 61;
/** AF_INET6, the family nest inside IFLA_AF_SPEC */
const AF_INET6 = 10;
/** IFLA_INET6_ADDR_GEN_MODE: u8 IN6_ADDR_GEN_MODE_* (linux/if_link.h) */
export const IFLA_INET6_ADDR_GEN_MODE = 8;

/* IFLA_LINKINFO nest (linux/if_link.h) */
export const IFLA_INFO_KIND = 1;

/* RTEXT_FILTER_* for IFLA_EXT_MASK (linux/rtnetlink.h) */
export const RTEXT_FILTER_VF = 1 << 0;
export const RTEXT_FILTER_SKIP_STATS = 1 << 3;

/** IFNAMSIZ (linux/if.h): names are at most 15 bytes plus the NUL. */
export const IFNAMSIZ = 16;
/** ALTIFNAMSIZ (linux/if.h): alternative names are at most 127 bytes. */
export const ALTIFNAMSIZ = 128;

/* net_device_flags (linux/if.h) */
export const IFF_UP = 1 << 0;
export const IFF_BROADCAST = 1 << 1;
export const IFF_DEBUG = 1 << 2;
export const IFF_LOOPBACK = 1 << 3;
export const IFF_POINTOPOINT = 1 << 4;
export const IFF_NOTRAILERS = 1 << 5;
export const IFF_RUNNING = 1 << 6;
export const IFF_NOARP = 1 << 7;
export const IFF_PROMISC = 1 << 8;
export const IFF_ALLMULTI = 1 << 9;
export const IFF_MASTER = 1 << 10;
export const IFF_SLAVE = 1 << 11;
export const IFF_MULTICAST = 1 << 12;
export const IFF_PORTSEL = 1 << 13;
export const IFF_AUTOMEDIA = 1 << 14;
export const IFF_DYNAMIC = 1 << 15;
export const IFF_LOWER_UP = 1 << 16;
export const IFF_DORMANT = 1 << 17;
export const IFF_ECHO = 1 << 18;

// iproute2 prints the flags in this order (ip/ipaddress.c print_link_flags).
const FLAG_ORDER: Array<[number, string]> = [
  [IFF_LOOPBACK, 'LOOPBACK'],
  [IFF_BROADCAST, 'BROADCAST'],
  [IFF_POINTOPOINT, 'POINTOPOINT'],
  [IFF_MULTICAST, 'MULTICAST'],
  [IFF_NOARP, 'NOARP'],
  [IFF_ALLMULTI, 'ALLMULTI'],
  [IFF_PROMISC, 'PROMISC'],
  [IFF_MASTER, 'MASTER'],
  [IFF_SLAVE, 'SLAVE'],
  [IFF_DEBUG, 'DEBUG'],
  [IFF_DYNAMIC, 'DYNAMIC'],
  [IFF_AUTOMEDIA, 'AUTOMEDIA'],
  [IFF_PORTSEL, 'PORTSEL'],
  [IFF_NOTRAILERS, 'NOTRAILERS'],
  [IFF_UP, 'UP'],
  [IFF_LOWER_UP, 'LOWER_UP'],
  [IFF_DORMANT, 'DORMANT'],
  [IFF_ECHO, 'ECHO'],
];

/**
 * The flag names `ip` prints for `ifi_flags`, in its order: NO-CARRIER when
 * UP without RUNNING, the IFF_* names, leftover bits as hex, then M-DOWN
 * when the lower device (IFLA_LINK) is down.
 * @param flags ifi_flags (IFF_* bits)
 * @param mDown the IFLA_LINK device is not UP
 */
export function linkFlagNames(flags: number, mDown = false): string[] {
  const out: string[] = [];
  let f = flags >>> 0;
  if (f & IFF_UP && !(f & IFF_RUNNING)) out.push('NO-CARRIER');
  f &= ~IFF_RUNNING;
  for (const [bit, name] of FLAG_ORDER)
    if (f & bit) {
      out.push(name);
      f &= ~bit;
    }
  if (f) out.push((f >>> 0).toString(16));
  if (mDown) out.push('M-DOWN');
  return out;
}

/** IF_OPER_* (linux/if.h), as `ip` names them. */
export const OPER_STATES = ['UNKNOWN', 'NOTPRESENT', 'DOWN', 'LOWERLAYERDOWN', 'TESTING', 'DORMANT', 'UP'] as const;
/** IF_LINK_MODE_* (linux/if.h), as `ip` names them. */
export const LINK_MODES = ['DEFAULT', 'DORMANT', 'TESTING'] as const;

// lib/ll_types.c of iproute2: ARPHRD_* -> link/<name>
const ARPHRD_NAMES: Record<number, string> = {
  0: 'netrom',
  1: 'ether',
  2: 'eether',
  3: 'ax25',
  4: 'pronet',
  5: 'chaos',
  6: 'ieee802',
  7: 'arcnet',
  8: 'atalk',
  15: 'dlci',
  19: 'atm',
  23: 'metricom',
  24: 'ieee1394',
  32: 'infiniband',
  256: 'slip',
  257: 'cslip',
  258: 'slip6',
  259: 'cslip6',
  260: 'rsrvd',
  264: 'adapt',
  270: 'rose',
  271: 'x25',
  272: 'hwx25',
  280: 'can',
  512: 'ppp',
  513: 'hdlc',
  516: 'lapb',
  517: 'ddcmp',
  518: 'rawhdlc',
  768: 'ipip',
  769: 'tunnel6',
  770: 'frad',
  771: 'skip',
  772: 'loopback',
  773: 'ltalk',
  774: 'fddi',
  775: 'bif',
  776: 'sit',
  777: 'ip/ddp',
  778: 'gre',
  779: 'pimreg',
  780: 'hippi',
  781: 'ash',
  782: 'econet',
  783: 'irda',
  784: 'fcpp',
  785: 'fcal',
  786: 'fcpl',
  787: 'fcfb0',
  788: 'fcfb1',
  789: 'fcfb2',
  790: 'fcfb3',
  791: 'fcfb4',
  792: 'fcfb5',
  793: 'fcfb6',
  794: 'fcfb7',
  795: 'fcfb8',
  796: 'fcfb9',
  797: 'fcfb10',
  798: 'fcfb11',
  799: 'fcfb12',
  800: 'tr',
  801: 'ieee802.11',
  802: 'ieee802.11/prism',
  803: 'ieee802.11/radiotap',
  804: 'ieee802.15.4',
  805: 'ieee802.15.4/monitor',
  820: 'phonet',
  821: 'phonet_pipe',
  822: 'caif',
  823: 'gre6',
  824: 'netlink',
  825: '6lowpan',
  65534: 'none',
  65535: 'void', // 0xfffe, 0xffff
};

/** `ip`'s name of an ARPHRD_* type (`ether`, `loopback`, ...), `[n]` when unknown. */
export function linkTypeName(type: number): string {
  return ARPHRD_NAMES[type] ?? `[${type}]`;
}

const ARPHRD_TUNNEL = 768;
const ARPHRD_TUNNEL6 = 769;
const ARPHRD_SIT = 776;
const ARPHRD_IPGRE = 778;
const ARPHRD_IP6GRE = 823;

/**
 * A link-layer address as `ip` prints it: colon-separated hex, or an IP
 * address for IPv4/IPv6 tunnels (lib/ll_addr.c ll_addr_n2a).
 */
export function linkAddressText(addr: Buffer, type: number): string {
  if (addr.length === 4 && (type === ARPHRD_TUNNEL || type === ARPHRD_SIT || type === ARPHRD_IPGRE)) return formatIp(addr);
  if (addr.length === 16 && (type === ARPHRD_TUNNEL6 || type === ARPHRD_IP6GRE)) return formatIp(addr);
  return [...addr].map((b) => b.toString(16).padStart(2, '0')).join(':');
}

/**
 * One link, with the field names and values of `ip -j link show` (iproute2
 * 6.x, no `-d`/`-s`). Fields `ip` leaves out are absent here too.
 */
export interface LinkInfo extends LinkDetails {
  /** ifi_index */
  ifindex: number;
  /** IFLA_LINK: name of the lower/peer device (veth peer, vlan parent...); null when IFLA_LINK is 0 */
  link?: string | null;
  /** IFLA_LINK when the peer is in another namespace (IFLA_LINK_NETNSID present) */
  link_index?: number;
  /** IFLA_IFNAME */
  ifname: string;
  /** ifi_flags as names: ["LOOPBACK","UP","LOWER_UP"]; see {@link linkFlagNames} */
  flags: string[];
  /** IFLA_MTU, bytes */
  mtu?: number;
  /** IFLA_QDISC: root qdisc kind, e.g. "noqueue" */
  qdisc?: string;
  /** IFLA_MASTER, as a device name */
  master?: string;
  /** IFLA_OPERSTATE: "UNKNOWN", "DOWN", "UP"... */
  operstate?: string;
  /** IFLA_OPERSTATE beyond the known names */
  operstate_index?: number;
  /** IFLA_LINKMODE: "DEFAULT" or "DORMANT" (`ip link` only, not `ip addr`) */
  linkmode?: string;
  /** IFLA_LINKMODE beyond the known names */
  linkmode_index?: number;
  /** IFLA_GROUP: "default" for 0, else the number as text */
  group?: string;
  /** IFLA_TXQLEN, packets; absent when 0 (as in `ip`) */
  txqlen?: number;
  /** IFLA_PROTO_DOWN set */
  proto_down?: true;
  /** ifi_type by name: "loopback", "ether"... */
  link_type: string;
  /** IFLA_ADDRESS */
  address?: string;
  /** IFLA_BROADCAST (the peer address when POINTOPOINT) */
  broadcast?: string;
  /** IFF_POINTOPOINT and IFLA_BROADCAST present: `broadcast` is the peer */
  link_pointtopoint?: true;
  /** IFLA_PERM_ADDRESS, when it differs from IFLA_ADDRESS */
  permaddr?: string;
  /** IFLA_LINK_NETNSID */
  link_netnsid?: number;
  /** IFLA_IFALIAS: the device's alias (`ip link set DEV alias TEXT`); `ip link` only, not `ip addr` */
  ifalias?: string;
  /** IFLA_PROP_LIST / IFLA_ALT_IFNAME */
  altnames?: string[];
}

/**
 * A decoded RTM_NEWLINK (or any ifinfomsg message), before device indexes
 * are turned into names. Every field is optional except the header's.
 */
export interface RawLink {
  /** ifi_family (AF_UNSPEC 0, AF_PACKET 17...) */
  family: number;
  /** ifi_type, ARPHRD_* */
  type: number;
  /** ifi_index */
  index: number;
  /** ifi_flags, IFF_* */
  flags: number;
  /** ifi_change */
  change: number;
  /** the attributes, for fields not decoded here */
  attrs: AttributeView;
  ifname?: string;
  mtu?: number;
  /** IFLA_LINK */
  link?: number;
  /** IFLA_MASTER */
  master?: number;
  qdisc?: string;
  operstate?: number;
  linkmode?: number;
  group?: number;
  txqlen?: number;
  protoDown?: number;
  address?: Buffer;
  broadcast?: Buffer;
  permAddress?: Buffer;
  linkNetnsid?: number;
  altnames?: string[];
  /** IFLA_IFALIAS */
  ifalias?: string;
  /** IFLA_LINKINFO / IFLA_INFO_KIND: "veth", "ifb"... */
  kind?: string;
  /** IFLA_EXT_MASK (requests) */
  extMask?: number;
}

/**
 * Decode an ifinfomsg message (RTM_NEWLINK/DELLINK/GETLINK/SETLINK).
 * @param msg the message; offsets in errors are relative to its datagram
 * @throws {NetlinkDecodeError} payload shorter than `struct ifinfomsg`, malformed attributes
 */
export function decodeLink(msg: NetlinkMessage): RawLink {
  const p = msg.payload;
  const at = msg.offset + 16;
  if (p.length < IFINFOMSG_LEN) {
    throw new NetlinkDecodeError(`ifinfomsg needs ${IFINFOMSG_LEN} bytes, the message has ${p.length}`, at);
  }
  const attrs = parseAttributes(p.subarray(IFINFOMSG_LEN), at + IFINFOMSG_LEN);
  const raw: RawLink = {
    family: p.readUInt8(0),
    type: p.readUInt16LE(2),
    index: p.readInt32LE(4),
    flags: p.readUInt32LE(8),
    change: p.readUInt32LE(12),
    attrs,
  };
  const set = <K extends keyof RawLink>(k: K, v: RawLink[K] | undefined): void => {
    if (v !== undefined) raw[k] = v;
  };
  set('ifname', attrs.str(IFLA_IFNAME));
  set('mtu', attrs.u32(IFLA_MTU));
  set('link', attrs.u32(IFLA_LINK));
  set('master', attrs.u32(IFLA_MASTER));
  set('qdisc', attrs.str(IFLA_QDISC));
  set('operstate', attrs.u8(IFLA_OPERSTATE));
  set('linkmode', attrs.u8(IFLA_LINKMODE));
  set('group', attrs.u32(IFLA_GROUP));
  set('txqlen', attrs.u32(IFLA_TXQLEN));
  set('protoDown', attrs.u8(IFLA_PROTO_DOWN));
  set('address', attrs.bin(IFLA_ADDRESS));
  set('broadcast', attrs.bin(IFLA_BROADCAST));
  set('permAddress', attrs.bin(IFLA_PERM_ADDRESS));
  set('linkNetnsid', attrs.s32(IFLA_LINK_NETNSID));
  set('extMask', attrs.u32(IFLA_EXT_MASK));
  set('ifalias', attrs.str(IFLA_IFALIAS));
  const props = attrs.nested(IFLA_PROP_LIST);
  if (props) {
    raw.altnames = props.all(IFLA_ALT_IFNAME).map((a) => cString(a.data));
  }
  const info = attrs.nested(IFLA_LINKINFO);
  if (info) set('kind', info.str(IFLA_INFO_KIND));
  return raw;
}

/**
 * The fields `ip -d -j link show` adds to `ip -j link show` (iproute2 6.1,
 * in its order), each present only when the kernel sent its attribute.
 * Kind-specific data (IFLA_INFO_DATA, IFLA_INFO_SLAVE_DATA) is decoded for
 * bridges, vxlan and tun devices and bridge ports (linkkind.ts); of other
 * kinds `linkinfo` holds the kind only.
 */
export interface LinkDetails {
  /** IFLA_PROMISCUITY: how many users asked for promiscuous mode */
  promiscuity?: number;
  /** IFLA_ALLMULTI: how many users asked for all-multicast mode */
  allmulti?: number;
  /** IFLA_MIN_MTU, bytes */
  min_mtu?: number;
  /** IFLA_MAX_MTU, bytes (0: no limit) */
  max_mtu?: number;
  /**
   * IFLA_LINKINFO: the kind ("veth", "bridge"...) and, for the kinds synplug decodes,
   * their data (`info_data`: bridge, vxlan, tun) and a port's (`info_slave_data`: bridge ports);
   * absent for a physical device that is no port, and lo
   */
  linkinfo?: LinkInfoJson;
  /** IFLA_AF_SPEC / AF_INET6 / IFLA_INET6_ADDR_GEN_MODE: "eui64", "none", "stable_secret", "random" (else the number) */
  inet6_addr_gen_mode?: string;
  /** IFLA_NUM_TX_QUEUES */
  num_tx_queues?: number;
  /** IFLA_NUM_RX_QUEUES */
  num_rx_queues?: number;
  /** IFLA_GSO_MAX_SIZE, bytes */
  gso_max_size?: number;
  /** IFLA_GSO_MAX_SEGS, segments */
  gso_max_segs?: number;
  /** IFLA_TSO_MAX_SIZE, bytes */
  tso_max_size?: number;
  /** IFLA_TSO_MAX_SEGS, segments */
  tso_max_segs?: number;
  /** IFLA_GRO_MAX_SIZE, bytes */
  gro_max_size?: number;
}

/** IN6_ADDR_GEN_MODE_* as `ip` names them. */
const ADDR_GEN_MODES = ['eui64', 'none', 'stable_secret', 'random'];

/**
 * The {@link LinkDetails} of one link, as `ip -d -j link show` adds them.
 * @param raw a decoded RTM_NEWLINK ({@link decodeLink})
 * @param nameOf the name of a device index (a vxlan's `dev`), `if<N>` when not given
 * @throws {NetlinkDecodeError} an attribute too short for its type, a malformed nest
 */
export function linkDetails(raw: RawLink, nameOf?: (index: number) => string): LinkDetails {
  const a = raw.attrs;
  const out: LinkDetails = {};
  const put = (name: Exclude<keyof LinkDetails, 'linkinfo' | 'inet6_addr_gen_mode'>, t: number): void => {
    const v = a.u32(t);
    if (v !== undefined) out[name] = v;
  };
  put('promiscuity', IFLA_PROMISCUITY);
  put('allmulti', IFLA_ALLMULTI);
  put('min_mtu', IFLA_MIN_MTU);
  put('max_mtu', IFLA_MAX_MTU);
  const info = a.nested(IFLA_LINKINFO);
  const li = info && decodeLinkInfo(info, nameOf);
  if (li) out.linkinfo = li;
  const mode = a.nested(IFLA_AF_SPEC)?.nested(AF_INET6)?.u8(IFLA_INET6_ADDR_GEN_MODE);
  if (mode !== undefined) out.inet6_addr_gen_mode = ADDR_GEN_MODES[mode] ?? String(mode);
  put('num_tx_queues', IFLA_NUM_TX_QUEUES);
  put('num_rx_queues', IFLA_NUM_RX_QUEUES);
  put('gso_max_size', IFLA_GSO_MAX_SIZE);
  put('gso_max_segs', IFLA_GSO_MAX_SEGS);
  put('tso_max_size', IFLA_TSO_MAX_SIZE);
  put('tso_max_segs', IFLA_TSO_MAX_SEGS);
  put('gro_max_size', IFLA_GRO_MAX_SIZE);
  return out;
}

/** Names and flags of other links, to print IFLA_LINK / IFLA_MASTER as `ip` does. */
export interface LinkLookup {
  /** name of a link index, undefined when unknown */
  name(index: number): string | undefined;
  /** ifi_flags of a link index, undefined when unknown */
  flags(index: number): number | undefined;
}

/**
 * Turn a {@link RawLink} into `ip -j link show` fields.
 * @param raw a decoded RTM_NEWLINK
 * @param lookup other links' names and flags (for `link`, `master`, M-DOWN);
 *   without it, an unknown index prints as `if<N>` like `ip` does
 * @param options `addr: true` leaves out `linkmode`, as `ip addr show` does;
 *   `details: true` adds the {@link LinkDetails} (`ip -d`), before `altnames` as `ip` orders them
 * @throws {NetlinkDecodeError} with `details`, a detail attribute too short for its type
 */
export function toLinkInfo(raw: RawLink, lookup?: LinkLookup, options: { addr?: boolean; details?: boolean } = {}): LinkInfo {
  const nameOf = (i: number): string => lookup?.name(i) ?? `if${i}`;
  const out: Partial<LinkInfo> = { ifindex: raw.index };
  let mDown = false;
  if (raw.link !== undefined) {
    if (raw.link === 0) out.link = null;
    else if (raw.linkNetnsid !== undefined) out.link_index = raw.link;
    else {
      out.link = nameOf(raw.link);
      const pf = lookup?.flags(raw.link);
      mDown = !((pf ?? 0) & IFF_UP);
    }
  }
  out.ifname = raw.ifname ?? `if${raw.index}`;
  out.flags = linkFlagNames(raw.flags, mDown);
  if (raw.mtu !== undefined) out.mtu = raw.mtu;
  if (raw.qdisc !== undefined) out.qdisc = raw.qdisc;
  if (raw.master !== undefined) out.master = nameOf(raw.master);
  if (raw.operstate !== undefined) {
    if (raw.operstate < OPER_STATES.length) out.operstate = OPER_STATES[raw.operstate];
    else out.operstate_index = raw.operstate;
  }
  if (!options.addr && raw.linkmode !== undefined) {
    // iproute2 knows DEFAULT and DORMANT; TESTING (2, Linux 5.x) prints as an index
    if (raw.linkmode < 2) out.linkmode = LINK_MODES[raw.linkmode];
    else out.linkmode_index = raw.linkmode;
  }
  if (raw.group !== undefined) out.group = raw.group === 0 ? 'default' : String(raw.group);
  if (raw.txqlen) out.txqlen = raw.txqlen;
  if (raw.protoDown) out.proto_down = true;
  out.link_type = linkTypeName(raw.type);
  if (raw.address) out.address = linkAddressText(raw.address, raw.type);
  if (raw.broadcast) {
    if (raw.flags & IFF_POINTOPOINT) out.link_pointtopoint = true;
    out.broadcast = linkAddressText(raw.broadcast, raw.type);
  }
  if (raw.permAddress && !raw.address?.equals(raw.permAddress)) {
    out.permaddr = linkAddressText(raw.permAddress, raw.type);
  }
  if (raw.linkNetnsid !== undefined) out.link_netnsid = raw.linkNetnsid;
  if (options.details) Object.assign(out, linkDetails(raw, nameOf));
  if (!options.addr && raw.ifalias !== undefined) out.ifalias = raw.ifalias;
  if (raw.altnames) out.altnames = raw.altnames;
  return out as LinkInfo;
}

/**
 * The first line(s) of `ip link show` for one link, without the final newline:
 * ```
 * 1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT group default qlen 1000
 *     link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00
 * ```
 * Spacing follows iproute2 exactly (including its trailing spaces when a
 * field such as qlen is absent). `ip addr show` prints the same lines
 * without "mode": pass a {@link LinkInfo} made with `{ addr: true }`.
 * @param options `linkLayer: false` leaves out the "link/..." line, as
 *   `ip -4 addr` / `ip -6 addr` do (default true)
 */
export function formatLink(l: LinkInfo, options: { linkLayer?: boolean } = {}): string {
  let name = l.ifname;
  if (l.link === null) name += '@NONE';
  else if (l.link !== undefined) name += `@${l.link}`;
  else if (l.link_index !== undefined) name += `@if${l.link_index}`;
  const flags = l.flags.filter((f) => f !== 'M-DOWN').join(',') + (l.flags.includes('M-DOWN') ? ',M-DOWN' : '');
  let s = `${l.ifindex}: ${name}: <${flags}> `;
  if (l.mtu !== undefined) s += `mtu ${l.mtu} `;
  if (l.qdisc !== undefined) s += `qdisc ${l.qdisc} `;
  if (l.master !== undefined) s += `master ${l.master} `;
  if (l.operstate !== undefined) s += `state ${l.operstate} `;
  else if (l.operstate_index !== undefined) s += `state 0x${l.operstate_index.toString(16)} `;
  if (l.linkmode !== undefined) s += `mode ${l.linkmode} `;
  else if (l.linkmode_index !== undefined) s += `mode ${l.linkmode_index} `;
  if (l.group !== undefined) s += `group ${l.group} `;
  if (l.txqlen !== undefined) s += `qlen ${l.txqlen}`;
  if (options.linkLayer !== false) {
    s += `\n    link/${l.link_type} `;
    if (l.address !== undefined) s += l.address;
    if (l.broadcast !== undefined) s += `${l.link_pointtopoint ? ' peer ' : ' brd '}${l.broadcast}`;
    if (l.permaddr !== undefined) s += ` permaddr ${l.permaddr}`;
  }
  if (l.link_netnsid !== undefined) s += ` link-netnsid ${l.link_netnsid}`;
  if (l.proto_down) s += ' protodown on ';
  s += formatLinkDetails(l);
  if (l.ifalias !== undefined) s += `\n    alias ${l.ifalias}`;
  for (const a of l.altnames ?? []) s += `\n    altname ${a}`;
  return s;
}

/**
 * The text `ip -d link show` adds for the {@link LinkDetails} present in `l`
 * (iproute2 6.1's spacing, its trailing space included): the counters and
 * MTU range on the link-layer line, then the kind on a line of its own, then
 * the rest; "" when `l` has none.
 */
export function formatLinkDetails(l: LinkDetails): string {
  let s = '';
  if (l.promiscuity !== undefined) s += ` promiscuity ${l.promiscuity} `;
  if (l.allmulti !== undefined) s += ` allmulti ${l.allmulti} `;
  if (l.min_mtu !== undefined) s += `minmtu ${l.min_mtu} `;
  if (l.max_mtu !== undefined) s += `maxmtu ${l.max_mtu} `;
  if (l.linkinfo) s += linkInfoText(l.linkinfo);
  if (l.inet6_addr_gen_mode !== undefined) s += `addrgenmode ${l.inet6_addr_gen_mode} `;
  const words: Array<[string, number | undefined]> = [
    ['numtxqueues', l.num_tx_queues],
    ['numrxqueues', l.num_rx_queues],
    ['gso_max_size', l.gso_max_size],
    ['gso_max_segs', l.gso_max_segs],
    ['tso_max_size', l.tso_max_size],
    ['tso_max_segs', l.tso_max_segs],
    ['gro_max_size', l.gro_max_size],
  ];
  for (const [w, v] of words) if (v !== undefined) s += `${w} ${v} `;
  return s;
}

/** What the route functions need from a connection (a {@link NetlinkConnection} on NETLINK_ROUTE). */
export type RouteConnection = Pick<NetlinkConnection, 'request' | 'dumpAll'>;

/**
 * Check a device name the way the kernel does (dev_valid_name): 1-15 bytes
 * (up to 127 for an alternative name), not "." or "..", no "/", ":" or
 * whitespace.
 * @throws {UsageError} an invalid name
 */
export function validateDeviceName(name: string): void {
  if (typeof name !== 'string' || name.length === 0) throw new UsageError('device name is empty');
  const len = Buffer.byteLength(name);
  if (len >= ALTIFNAMSIZ) throw new UsageError(`device name '${name}' is too long (at most ${IFNAMSIZ - 1} bytes, ${ALTIFNAMSIZ - 1} for an alternative name)`);
  if (name === '.' || name === '..' || /[/:\s]/.test(name) || name.includes('\0')) {
    throw new UsageError(`'${name}' is not a valid device name`);
  }
}

/**
 * The RTM_GETLINK request payload for one link, as `ip` sends it: an
 * ifinfomsg with the index (0 when looking up by name), IFLA_EXT_MASK
 * (RTEXT_FILTER_VF | RTEXT_FILTER_SKIP_STATS), then IFLA_IFNAME (names of
 * up to 15 bytes) or IFLA_ALT_IFNAME (longer names).
 * @param dev a name or an index
 * @throws {UsageError} an invalid name or index
 */
export function getLinkRequest(dev: string | number): { type: number; payload: Buffer[] } {
  const hdr = Buffer.alloc(IFINFOMSG_LEN);
  const parts = [hdr, u32(IFLA_EXT_MASK, RTEXT_FILTER_VF | RTEXT_FILTER_SKIP_STATS)];
  if (typeof dev === 'number') {
    validateIndex(dev);
    hdr.writeInt32LE(dev, 4);
  } else {
    validateDeviceName(dev);
    parts.push(str(Buffer.byteLength(dev) < IFNAMSIZ ? IFLA_IFNAME : IFLA_ALT_IFNAME, dev));
  }
  return { type: RTM_GETLINK, payload: parts };
}

/**
 * Check a device index (`ifi_index`, a positive C int).
 * @throws {UsageError} not an integer from 1 to 2^31-1
 */
export function validateIndex(i: number): void {
  if (!Number.isInteger(i) || i <= 0 || i > 0x7fffffff) throw new UsageError(`device index ${i} is not a positive integer`);
}

function describeDev(dev: string | number): string {
  return typeof dev === 'number' ? `device with index ${dev}` : `device '${dev}'`;
}

/**
 * The error for a link that does not exist (ENODEV from the kernel):
 * the kernel's NetlinkError with the sentence "device 'X' not found" (or
 * "device with index N not found"). Exit code 3 (a NetlinkError); `code` is 'ENODEV'.
 */
function notFound(e: unknown, dev: string | number): unknown {
  if (e instanceof NetlinkError) {
    if (e.code === 'ENODEV') return e.withMessage(`${describeDev(dev)} not found`);
    return e.withMessage(`looking up ${describeDev(dev)} failed: ${e.code}`);
  }
  return e;
}

async function getRawLink(conn: RouteConnection, dev: string | number): Promise<RawLink> {
  let replies: NetlinkMessage[];
  try {
    replies = await conn.request(getLinkRequest(dev));
  } catch (e) {
    throw notFound(e, dev);
  }
  const m = replies.find((r) => r.type === RTM_NEWLINK);
  if (!m) throw new NetlinkDecodeError(`RTM_GETLINK for ${describeDev(dev)} was acked without an RTM_NEWLINK`, 0);
  return decodeLink(m);
}

/**
 * One link by name or index, with IFLA_LINK and IFLA_MASTER resolved to
 * names (one more RTM_GETLINK each, only when they are set).
 * @throws {UsageError} an invalid name or index
 * @throws {NetlinkError} "device 'X' not found" (code ENODEV), or another kernel error
 */
async function getLink(conn: RouteConnection, dev: string | number, options: { addr?: boolean; details?: boolean } = {}): Promise<LinkInfo> {
  const raw = await getRawLink(conn, dev);
  const others = new Map<number, RawLink>();
  // the devices the kind's details name (a vxlan's `dev`): asked for by index, as ip does
  const named: number[] = [];
  if (options.details) {
    linkDetails(raw, (i) => {
      named.push(i);
      return '';
    });
  }
  for (const idx of [raw.linkNetnsid === undefined ? raw.link : undefined, raw.master, ...named]) {
    if (idx === undefined || idx === 0 || others.has(idx)) continue;
    try {
      others.set(idx, await getRawLink(conn, idx));
    } catch (e) {
      if (!(e instanceof NetlinkError)) throw e; // gone meanwhile: print if<N>, as ip does
    }
  }
  return toLinkInfo(raw, { name: (i) => others.get(i)?.ifname, flags: (i) => others.get(i)?.flags }, options);
}

/**
 * A link by name (RTM_GETLINK with IFLA_IFNAME), as `ip -j link show dev NAME` prints it.
 * @param conn a NETLINK_ROUTE connection
 * @param name device name (1-15 bytes, or an alternative name up to 127)
 * @param options `addr: true`: the fields of `ip -j addr show` (no `linkmode`)
 * @throws {UsageError} an invalid name
 * @throws {NetlinkError} "device 'NAME' not found" (code ENODEV, exit code 3), or another kernel error
 */
export function getLinkByName(conn: RouteConnection, name: string, options: { addr?: boolean; details?: boolean } = {}): Promise<LinkInfo> {
  return getLink(conn, name, options);
}

/**
 * A link by index (RTM_GETLINK with ifi_index), as `ip -j link show` prints it.
 * @throws {UsageError} not a positive integer
 * @throws {NetlinkError} "device with index N not found" (code ENODEV), or another kernel error
 */
export function getLinkByIndex(conn: RouteConnection, index: number, options: { addr?: boolean; details?: boolean } = {}): Promise<LinkInfo> {
  return getLink(conn, index, options);
}

/**
 * Every link (an RTM_GETLINK dump), as `ip -j link show` prints them, in the kernel's order.
 * @param options `addr: true`: the fields of `ip -j addr show` (no `linkmode`)
 * @throws {NetlinkError} the dump failed
 * @throws {DumpInterruptedError} links kept changing during the dump
 */
export async function listLinks(conn: RouteConnection, options: { addr?: boolean; details?: boolean } = {}): Promise<LinkInfo[]> {
  const raws = await listRawLinks(conn);
  const byIndex = new Map(raws.map((r) => [r.index, r]));
  const lookup: LinkLookup = { name: (i) => byIndex.get(i)?.ifname, flags: (i) => byIndex.get(i)?.flags };
  return raws.map((r) => toLinkInfo(r, lookup, options));
}

/**
 * Every link, decoded but not resolved (see {@link decodeLink}).
 * @throws {NetlinkError} the dump failed
 */
export async function listRawLinks(conn: RouteConnection): Promise<RawLink[]> {
  const hdr = Buffer.alloc(IFINFOMSG_LEN);
  const msgs = await conn.dumpAll({ type: RTM_GETLINK, payload: [hdr, u32(IFLA_EXT_MASK, RTEXT_FILTER_VF | RTEXT_FILTER_SKIP_STATS)] });
  return msgs.filter((m) => m.type === RTM_NEWLINK).map(decodeLink);
}

/**
 * The index of a device. A number is checked and returned as is (no
 * request); a name costs exactly one RTM_GETLINK request, whose reply is
 * not decoded beyond `ifi_index` (hot paths use this).
 * @param nameOrIndex device name, or index
 * @returns ifi_index
 * @throws {UsageError} an invalid name or index
 * @throws {NetlinkError} "device 'NAME' not found" (code ENODEV), or another kernel error
 */
export async function resolveIfindex(conn: RouteConnection, nameOrIndex: string | number): Promise<number> {
  if (typeof nameOrIndex === 'number') {
    validateIndex(nameOrIndex);
    return nameOrIndex;
  }
  let replies: NetlinkMessage[];
  try {
    replies = await conn.request(getLinkRequest(nameOrIndex));
  } catch (e) {
    throw notFound(e, nameOrIndex);
  }
  const m = replies.find((r) => r.type === RTM_NEWLINK);
  if (!m || m.payload.length < IFINFOMSG_LEN) {
    throw new NetlinkDecodeError(`RTM_GETLINK for device '${nameOrIndex}' got no usable RTM_NEWLINK`, m ? m.offset : 0);
  }
  return m.payload.readInt32LE(4);
}

/**
 * Body decoder for `synplug decode`: an ifinfomsg message as `ip -j link`
 * fields (indexes not resolved: `link` prints as `if<N>`). A request
 * (NLM_F_REQUEST) shows only what it carries: `family` when not AF_UNSPEC
 * ("link" for AF_PACKET), `flags`/`link_type` only when set, `ifi_change`,
 * `ext_mask` (IFLA_EXT_MASK), `kind` (IFLA_INFO_KIND).
 * @throws {NetlinkDecodeError}
 */
export function decodeLinkBody(msg: NetlinkMessage): Record<string, unknown> {
  const raw = decodeLink(msg);
  const info: Record<string, unknown> = { ...toLinkInfo(raw) };
  if (raw.ifname === undefined) delete info.ifname;
  if (msg.flags & NLM_F_REQUEST) {
    if (raw.flags === 0) delete info.flags;
    if (raw.type === 0) delete info.link_type;
  }
  if (raw.family !== 0) info.family = raw.family === 17 ? 'link' : raw.family;
  if (raw.change !== 0) info.ifi_change = raw.change;
  if (raw.extMask !== undefined) info.ext_mask = raw.extMask;
  if (raw.kind !== undefined) info.kind = raw.kind;
  return info;
}

for (const t of [RTM_NEWLINK, RTM_DELLINK, RTM_GETLINK, RTM_SETLINK]) registerBodyDecoder(NETLINK_ROUTE, t, decodeLinkBody);
