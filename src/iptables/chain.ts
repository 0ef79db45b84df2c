/**
 * nf_tables chains: NFT_MSG_NEWCHAIN / GETCHAIN / DELCHAIN. A base chain
 * has a type, a hook and a priority, and sees packets; a regular chain is
 * only reached by jump/goto.
 *
 * ```c
 * // nf_tables.h: enum nft_chain_attributes
 * NFTA_CHAIN_TABLE    // NLA_STRING
 * NFTA_CHAIN_HANDLE   // NLA_U64 (big-endian)
 * NFTA_CHAIN_NAME     // NLA_STRING, at most NFT_CHAIN_MAXNAMELEN (256) with the NUL
 * NFTA_CHAIN_HOOK     // NLA_NESTED: enum nft_hook_attributes
 *                     //   NFTA_HOOK_HOOKNUM (NLA_U32), NFTA_HOOK_PRIORITY (NLA_U32, a signed value),
 *                     //   NFTA_HOOK_DEV (NLA_STRING, netdev family: one device)
 *                     //   NFTA_HOOK_DEVS (NLA_NESTED: NFTA_DEVICE_NAME (NLA_STRING) each; several devices)
 * NFTA_CHAIN_POLICY   // NLA_U32: NF_ACCEPT (1) or NF_DROP (0)
 * NFTA_CHAIN_USE      // NLA_U32, references (dumps)
 * NFTA_CHAIN_TYPE     // NLA_NUL_STRING: "filter", "route", "nat"
 * NFTA_CHAIN_FLAGS    // NLA_U32, enum nft_chain_flags (NFT_CHAIN_BASE...)
 * ```
 * nft 1.0.6 creates a base chain with NLM_F_CREATE and TABLE, NAME, TYPE,
 * POLICY, HOOK { HOOKNUM, PRIORITY }, in that order.
 *
 * @module
 */
import type { NetlinkConnection } from '../netlink/connection.js';
import type { NetlinkMessage } from '../netlink/message.js';
import { bin, parseAttributes, str } from '../netlink/attributes.js';
import { NetlinkDecodeError, UsageError } from '../netlink/errors.js';
import * as C from './constants.js';
import { be32, name as nameAttr, nest, u64num } from './data.js';
import { attrsOffset, decodeNfGenMsg, encodeNfGenMsg, nftType, requireNetfilter } from './nfnetlink.js';
import { familyName, familyNumber, hookName, hookNumber, policyName, priorityNumber } from './names.js';
import { checkName } from './validate.js';

/** A chain, with `nft -j`'s field names (`prio` is the hook priority). */
export interface NftChain {
  /** `ip`, `ip6`, `inet`... */
  family: string;
  /** NFTA_CHAIN_TABLE */
  table: string;
  /** NFTA_CHAIN_NAME */
  name: string;
  /** NFTA_CHAIN_HANDLE (dumps) */
  handle?: number;
  /** NFTA_CHAIN_TYPE: `filter`, `route`, `nat` (base chains) */
  type?: string;
  /** hook name: `prerouting`, `input`, `forward`, `output`, `postrouting`, `ingress` (base chains) */
  hook?: string;
  /** NFTA_HOOK_PRIORITY, signed (base chains); -150 is `mangle` */
  prio?: number;
  /** `accept` or `drop` (base chains) */
  policy?: string;
  /** NFTA_HOOK_DEV (netdev family) */
  dev?: string;
  /** NFTA_HOOK_DEVS: the devices of a netdev chain hooked on several (`devices = { v0, v1 }`) */
  devs?: string[];
  /** NFTA_CHAIN_FLAGS (NFT_CHAIN_BASE = 1...) */
  flags?: number;
  /** NFTA_CHAIN_USE: references (dumps) */
  use?: number;
  /** NFTA_CHAIN_USERDATA, hex (libnftnl TLVs: NFTNL_UDATA_CHAIN_COMMENT) */
  userdata?: string;
}

/** What to create: a regular chain (table, name) or a base chain (plus type, hook, prio, policy). */
export interface ChainSpec {
  family: string;
  table: string;
  name: string;
  /** base chains: `filter`, `route` or `nat` */
  type?: string;
  /** base chains: hook name */
  hook?: string;
  /** base chains: a number or nft's name (`mangle` = -150, `filter` = 0...) */
  prio?: number | string;
  /** base chains: `accept` (default) or `drop` */
  policy?: 'accept' | 'drop';
}

/**
 * Payload of NFT_MSG_NEWCHAIN, attributes in nft 1.0.6's order.
 * @throws {UsageError} a bad family, name, hook, priority or policy; a base chain missing type or hook
 */
export function encodeChain(c: ChainSpec): Buffer[] {
  const out = [
    encodeNfGenMsg(familyNumber(c.family)),
    nameAttr(C.NFTA_CHAIN_TABLE, checkName(c.table, 'table')),
    nameAttr(C.NFTA_CHAIN_NAME, checkName(c.name, 'chain')),
  ];
  const base = c.type !== undefined || c.hook !== undefined || c.prio !== undefined || c.policy !== undefined;
  if (!base) return out;
  if (c.type === undefined || c.hook === undefined) throw new UsageError(`base chain '${c.name}' needs both a type and a hook`);
  if (!/^[a-z]+$/.test(c.type)) throw new UsageError(`bad chain type '${c.type}': use filter, route or nat`);
  const policy = c.policy ?? 'accept';
  if (policy !== 'accept' && policy !== 'drop') throw new UsageError(`bad chain policy '${String(policy)}': use accept or drop`);
  const prio = priorityNumber(c.prio ?? 0, c.family);
  const p = Buffer.alloc(4);
  p.writeInt32BE(prio);
  out.push(
    str(C.NFTA_CHAIN_TYPE, c.type),
    be32(C.NFTA_CHAIN_POLICY, policy === 'accept' ? C.NF_ACCEPT : C.NF_DROP),
    nest(C.NFTA_CHAIN_HOOK, [be32(C.NFTA_HOOK_HOOKNUM, hookNumber(c.family, c.hook)), bin(C.NFTA_HOOK_PRIORITY, p)]),
  );
  return out;
}

/**
 * Payload of NFT_MSG_DELCHAIN: nfgenmsg, TABLE, NAME. The kernel deletes the
 * chain's rules with it, and refuses (EBUSY) while other rules jump to it.
 * @throws {UsageError} a bad family or name
 */
export function encodeChainRef(c: { family: string; table: string; name: string }): Buffer[] {
  return [
    encodeNfGenMsg(familyNumber(c.family)),
    nameAttr(C.NFTA_CHAIN_TABLE, checkName(c.table, 'table')),
    nameAttr(C.NFTA_CHAIN_NAME, checkName(c.name, 'chain')),
  ];
}

/**
 * Decode a NEWCHAIN / GETCHAIN / DELCHAIN message.
 * @throws {NetlinkDecodeError} a short header, malformed attributes, or no table or name
 */
export function decodeChain(msg: NetlinkMessage): NftChain {
  const g = decodeNfGenMsg(msg);
  const at = attrsOffset(msg);
  const l = parseAttributes(msg.payload.subarray(4), at);
  const table = l.str(C.NFTA_CHAIN_TABLE);
  const name = l.str(C.NFTA_CHAIN_NAME);
  if (table === undefined || name === undefined) throw new NetlinkDecodeError('chain message without NFTA_CHAIN_TABLE or NFTA_CHAIN_NAME', at);
  const family = familyName(g.family);
  const c: NftChain = { family, table, name };
  const handle = u64num(l, C.NFTA_CHAIN_HANDLE);
  if (handle !== undefined) c.handle = handle;
  const type = l.str(C.NFTA_CHAIN_TYPE);
  if (type !== undefined) c.type = type;
  const hook = l.nested(C.NFTA_CHAIN_HOOK);
  if (hook) {
    const num = hook.u32be(C.NFTA_HOOK_HOOKNUM);
    const prio = hook.s32be(C.NFTA_HOOK_PRIORITY);
    const dev = hook.str(C.NFTA_HOOK_DEV);
    if (num !== undefined) c.hook = hookName(family, num);
    if (prio !== undefined) c.prio = prio;
    if (dev !== undefined) c.dev = dev;
    const devs = hook.nested(C.NFTA_HOOK_DEVS);
    if (devs) c.devs = devs.all(C.NFTA_DEVICE_NAME).map((a) => a.data.toString('utf8').split('\0')[0]);
  }
  const policy = l.u32be(C.NFTA_CHAIN_POLICY);
  if (policy !== undefined) c.policy = policyName(policy);
  const flags = l.u32be(C.NFTA_CHAIN_FLAGS);
  if (flags !== undefined) c.flags = flags;
  const use = l.u32be(C.NFTA_CHAIN_USE);
  if (use !== undefined) c.use = use;
  const ud = l.bin(C.NFTA_CHAIN_USERDATA);
  if (ud !== undefined) c.userdata = ud.toString('hex');
  return c;
}

/**
 * Dump chains (NFT_MSG_GETCHAIN with NLM_F_DUMP); the kernel's chain dump
 * has no table filter, so `table` is applied here.
 * @throws {UsageError} a bad family
 * @throws {NetlinkError} the kernel refused the dump
 * @throws {NetlinkDecodeError} a malformed reply
 * @throws {UsageError} a connection that is not NETLINK_NETFILTER, before anything is sent
 */
export async function listChains(conn: NetlinkConnection, options: { family?: string; table?: string } = {}): Promise<NftChain[]> {
  requireNetfilter(conn, 'listChains');
  const fam = options.family ? familyNumber(options.family) : C.NFPROTO_UNSPEC;
  const msgs = await conn.dumpAll({ type: nftType(C.NFT_MSG_GETCHAIN), payload: encodeNfGenMsg(fam) });
  return msgs
    .filter((m) => m.type === nftType(C.NFT_MSG_NEWCHAIN))
    .map(decodeChain)
    .filter((c) => options.table === undefined || c.table === options.table);
}
