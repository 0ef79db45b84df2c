/**
 * nfnetlink: the family header every NETLINK_NETFILTER message starts with,
 * message types (`subsys << 8 | msg`), and the registration of
 * NETLINK_NETFILTER's type names with the core's protocol registry.
 *
 * ```c
 * // linux/netfilter/nfnetlink.h
 * struct nfgenmsg {
 *   __u8   nfgen_family;  // AF_xxx (NFPROTO_*)
 *   __u8   version;       // nfnetlink version (NFNETLINK_V0)
 *   __be16 res_id;        // resource id: NFNL_SUBSYS_NFTABLES in batch messages,
 *                         // the low 16 bits of the generation id in kernel replies
 * };
 * #define NFNL_SUBSYS_ID(x) ((x & 0xff00) >> 8)
 * #define NFNL_MSG_TYPE(x)  (x & 0x00ff)
 * ```
 *
 * @module
 */
import type { NetlinkConnection } from '../netlink/connection.js';
import { NetlinkDecodeError, UsageError } from '../netlink/errors.js';
import { NETLINK_NETFILTER, NLMSG_HDRLEN, type NetlinkMessage } from '../netlink/message.js';
import { protocolInfo, registerProtocol } from '../netlink/protocols.js';
import type { RequestKind } from '../netlink/message.js';
import { NFNETLINK_V0, NFNL_MSG_BATCH_BEGIN, NFNL_MSG_BATCH_END, NFNL_SUBSYS_NFTABLES } from './constants.js';
import { NFNL_SUBSYS_NAMES, NFT_MSG_NAMES } from './names.js';

/** sizeof(struct nfgenmsg) */
export const NFGENMSG_LEN = 4;

/** Decoded `struct nfgenmsg`. */
export interface NfGenMsg {
  /** nfgen_family: NFPROTO_* number */
  family: number;
  /** version: NFNETLINK_V0 */
  version: number;
  /** res_id, host order (sent big-endian) */
  resId: number;
}

/**
 * Encode `struct nfgenmsg`.
 * @param family NFPROTO_* (u8)
 * @param resId res_id (u16, written big-endian), 0 unless a batch message
 */
export function encodeNfGenMsg(family: number, resId = 0): Buffer {
  const b = Buffer.alloc(NFGENMSG_LEN);
  b.writeUInt8(family & 0xff, 0);
  b.writeUInt8(NFNETLINK_V0, 1);
  b.writeUInt16BE(resId & 0xffff, 2);
  return b;
}

/**
 * Decode the `struct nfgenmsg` at the start of a message payload.
 * @throws {NetlinkDecodeError} the payload is shorter than 4 bytes (offset: the payload's start)
 */
export function decodeNfGenMsg(msg: NetlinkMessage): NfGenMsg {
  const p = msg.payload;
  if (p.length < NFGENMSG_LEN) {
    throw new NetlinkDecodeError(`nfnetlink message has ${p.length} payload bytes, needs ${NFGENMSG_LEN} for struct nfgenmsg`, msg.offset + NLMSG_HDRLEN);
  }
  return { family: p.readUInt8(0), version: p.readUInt8(1), resId: p.readUInt16BE(2) };
}

/** The absolute offset of the first attribute after `struct nfgenmsg`. */
export function attrsOffset(msg: NetlinkMessage): number {
  return msg.offset + NLMSG_HDRLEN + NFGENMSG_LEN;
}

/** nlmsg_type of an nf_tables message: `NFNL_SUBSYS_NFTABLES << 8 | msg` (msg: NFT_MSG_*). */
export function nftType(msg: number): number {
  return (NFNL_SUBSYS_NFTABLES << 8) | msg;
}

/** NFNL_SUBSYS_ID(type) */
export function subsysId(type: number): number {
  return (type & 0xff00) >> 8;
}

/** NFNL_MSG_TYPE(type) */
export function msgType(type: number): number {
  return type & 0xff;
}

/**
 * Name of a NETLINK_NETFILTER message type: `NFNL_MSG_BATCH_BEGIN`,
 * `NFT_MSG_NEWRULE`, or `NFNL_SUBSYS_CTNETLINK/3` for other subsystems.
 * @returns undefined for control types (< 0x10, named by the core) and unknown nf_tables numbers
 */
export function nfnlTypeName(type: number): string | undefined {
  if (type === NFNL_MSG_BATCH_BEGIN) return 'NFNL_MSG_BATCH_BEGIN';
  if (type === NFNL_MSG_BATCH_END) return 'NFNL_MSG_BATCH_END';
  const sub = subsysId(type);
  if (sub === NFNL_SUBSYS_NFTABLES) return NFT_MSG_NAMES[msgType(type)];
  if (sub === 0) return undefined;
  const s = NFNL_SUBSYS_NAMES[sub];
  return s ? `${s}/${msgType(type)}` : undefined;
}

/**
 * How the 0x100-0x800 flag bits of an nf_tables type read: NEW* (and
 * batch begin/end) as NEW, GET* as GET, DEL* and DESTROY* as DEL.
 */
export function nfnlRequestKind(type: number): RequestKind {
  if (subsysId(type) !== NFNL_SUBSYS_NFTABLES) return 'other';
  const name = NFT_MSG_NAMES[msgType(type)];
  if (!name) return 'other';
  if (name.startsWith('NFT_MSG_NEW')) return 'new';
  if (name.startsWith('NFT_MSG_GET')) return 'get';
  if (name.startsWith('NFT_MSG_DEL') || name.startsWith('NFT_MSG_DESTROY')) return 'del';
  return 'other';
}

registerProtocol({
  protocol: NETLINK_NETFILTER,
  name: 'NETLINK_NETFILTER',
  typeName: nfnlTypeName,
  requestKind: nfnlRequestKind,
});

/**
 * Refuse, before anything is sent, a connection of another protocol than
 * NETLINK_NETFILTER (the kernel would answer EOPNOTSUPP to an nf_tables
 * request on NETLINK_ROUTE): the message names the function, the protocol it
 * needs and the one it got. Every public function of src/iptables that takes
 * a connection calls it first.
 * @param fn the public function's name, for the message (`listRuleset`)
 * @throws {UsageError} not a NETLINK_NETFILTER connection (or no connection)
 */
export function requireNetfilter(conn: NetlinkConnection, fn: string): void {
  if (conn?.protocol === NETLINK_NETFILTER) return;
  const name = (p: number): string => protocolInfo(p)?.name ?? `protocol ${p}`;
  const got = conn && typeof conn.protocol === 'number' ? `a ${name(conn.protocol)} connection (protocol ${conn.protocol})` : 'no connection';
  throw new UsageError(`${fn} needs a NETLINK_NETFILTER connection (protocol ${NETLINK_NETFILTER}; openNftables() makes one), not ${got}`);
}
