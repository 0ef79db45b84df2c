/**
 * nf_tables tables: NFT_MSG_NEWTABLE / GETTABLE / DELTABLE.
 *
 * ```c
 * // nf_tables.h: enum nft_table_attributes
 * NFTA_TABLE_NAME      // NLA_STRING, at most NFT_TABLE_MAXNAMELEN (256) bytes with the NUL
 * NFTA_TABLE_FLAGS     // NLA_U32 (big-endian), enum nft_table_flags
 * NFTA_TABLE_USE       // NLA_U32, number of chains (dumps)
 * NFTA_TABLE_HANDLE    // NLA_U64 (big-endian)
 * NFTA_TABLE_USERDATA  // NLA_BINARY
 * NFTA_TABLE_OWNER     // NLA_U32, owner's netlink port id (NFT_TABLE_F_OWNER)
 * ```
 * nft 1.0.6 creates a table with NAME and FLAGS (0), without NLM_F_CREATE:
 * the kernel creates a missing table and leaves an existing one as it is
 * (NLM_F_EXCL would make that EEXIST).
 *
 * @module
 */
import type { NetlinkConnection } from '../netlink/connection.js';
import type { NetlinkMessage } from '../netlink/message.js';
import { bin, parseAttributes } from '../netlink/attributes.js';
import { NetlinkDecodeError } from '../netlink/errors.js';
import * as C from './constants.js';
import { be32, name as nameAttr, u64num } from './data.js';
import { attrsOffset, decodeNfGenMsg, encodeNfGenMsg, nftType, requireNetfilter } from './nfnetlink.js';
import { familyName, familyNumber } from './names.js';
import { checkName } from './validate.js';
import { decodeComment, encodeComment } from './rule.js';

/** A table, as `nft -j` names its fields. */
export interface NftTable {
  /** `ip`, `ip6`, `inet`... */
  family: string;
  /** NFTA_TABLE_NAME */
  name: string;
  /** NFTA_TABLE_HANDLE (dumps) */
  handle?: number;
  /** NFTA_TABLE_FLAGS: NFT_TABLE_F_DORMANT (1), NFT_TABLE_F_OWNER (2) */
  flags?: number;
  /** NFTA_TABLE_USE: chains in it (dumps) */
  use?: number;
  /** NFTA_TABLE_OWNER (dumps) */
  owner?: number;
  /** NFTA_TABLE_USERDATA, hex */
  userdata?: string;
  /** the comment in NFTA_TABLE_USERDATA (NFTNL_UDATA_TABLE_COMMENT), as `nft list table` prints it */
  comment?: string;
}

/** Identifies a table. */
export interface TableRef {
  /** `ip`, `ip6` or `inet` (any nft family name) */
  family: string;
  /** table name */
  name: string;
}

/**
 * Payload of NFT_MSG_NEWTABLE: nfgenmsg, NAME, FLAGS, [USERDATA with the
 * comment as NFTNL_UDATA_TABLE_COMMENT, as nft sends `table ip t { comment "..." }`].
 * @throws {UsageError} a bad family or name, a comment over 127 bytes or with a NUL
 */
export function encodeTable(t: TableRef & { flags?: number; comment?: string }): Buffer[] {
  const out = [encodeNfGenMsg(familyNumber(t.family)), nameAttr(C.NFTA_TABLE_NAME, checkName(t.name, 'table')), be32(C.NFTA_TABLE_FLAGS, t.flags ?? 0)];
  if (t.comment !== undefined) out.push(bin(C.NFTA_TABLE_USERDATA, encodeComment(t.comment, C.NFTNL_UDATA_TABLE_COMMENT, 'table')));
  return out;
}

/**
 * Payload of NFT_MSG_DELTABLE / GETTABLE (one table): nfgenmsg, NAME.
 * @throws {UsageError} a bad family or name
 */
export function encodeTableRef(t: TableRef): Buffer[] {
  return [encodeNfGenMsg(familyNumber(t.family)), nameAttr(C.NFTA_TABLE_NAME, checkName(t.name, 'table'))];
}

/**
 * Decode a NEWTABLE / GETTABLE / DELTABLE message.
 * @throws {NetlinkDecodeError} a short header, malformed attributes, or no NFTA_TABLE_NAME
 */
export function decodeTable(msg: NetlinkMessage): NftTable {
  const g = decodeNfGenMsg(msg);
  const l = parseAttributes(msg.payload.subarray(4), attrsOffset(msg));
  const name = l.str(C.NFTA_TABLE_NAME);
  if (name === undefined) throw new NetlinkDecodeError('table message without NFTA_TABLE_NAME', attrsOffset(msg));
  const t: NftTable = { family: familyName(g.family), name };
  const handle = u64num(l, C.NFTA_TABLE_HANDLE);
  const flags = l.u32be(C.NFTA_TABLE_FLAGS);
  const use = l.u32be(C.NFTA_TABLE_USE);
  const owner = l.u32be(C.NFTA_TABLE_OWNER);
  const ud = l.bin(C.NFTA_TABLE_USERDATA);
  if (handle !== undefined) t.handle = handle;
  if (flags !== undefined) t.flags = flags;
  if (use !== undefined) t.use = use;
  if (owner !== undefined) t.owner = owner;
  if (ud !== undefined) {
    t.userdata = ud.toString('hex');
    const comment = decodeComment(ud, C.NFTNL_UDATA_TABLE_COMMENT);
    if (comment !== undefined) t.comment = comment;
  }
  return t;
}

/**
 * Dump tables (NFT_MSG_GETTABLE with NLM_F_DUMP).
 * @param options.family only this family (default: all)
 * @throws {NetlinkError} the kernel refused the dump (e.g. EPERM without CAP_NET_ADMIN)
 * @throws {NetlinkDecodeError} a malformed reply
 * @throws {UsageError} a connection that is not NETLINK_NETFILTER, before anything is sent
 */
export async function listTables(conn: NetlinkConnection, options: { family?: string } = {}): Promise<NftTable[]> {
  requireNetfilter(conn, 'listTables');
  const fam = options.family ? familyNumber(options.family) : C.NFPROTO_UNSPEC;
  const msgs = await conn.dumpAll({ type: nftType(C.NFT_MSG_GETTABLE), payload: encodeNfGenMsg(fam) });
  return msgs.filter((m) => m.type === nftType(C.NFT_MSG_NEWTABLE)).map(decodeTable);
}

/**
 * One table, or undefined when it does not exist (ENOENT).
 * @throws {UsageError} a bad family or name
 * @throws {NetlinkError} any other refusal
 * @throws {UsageError} a connection that is not NETLINK_NETFILTER, before anything is sent
 */
export async function getTable(conn: NetlinkConnection, ref: TableRef): Promise<NftTable | undefined> {
  requireNetfilter(conn, 'getTable');
  const payload = encodeTableRef(ref);
  try {
    const replies = await conn.request({ type: nftType(C.NFT_MSG_GETTABLE), payload });
    const m = replies.find((r) => r.type === nftType(C.NFT_MSG_NEWTABLE));
    return m ? decodeTable(m) : undefined;
  } catch (e) {
    if ((e as { code?: string }).code === 'ENOENT') return undefined;
    throw e;
  }
}
