/**
 * nf_tables stateful objects: NFT_MSG_NEWOBJ / GETOBJ / DELOBJ. Named
 * counters, quotas and limits (`counter c1 { packets 5 bytes 300 }`) are
 * decoded; other object types keep their raw attributes.
 *
 * ```c
 * // nf_tables.h: enum nft_object_attributes
 * NFTA_OBJ_TABLE      // NLA_STRING
 * NFTA_OBJ_NAME       // NLA_STRING
 * NFTA_OBJ_TYPE       // NLA_U32 (big-endian): NFT_OBJECT_*
 * NFTA_OBJ_DATA       // NLA_NESTED: the type's attributes (enum nft_counter_attributes,
 *                     //   nft_quota_attributes, nft_limit_attributes...)
 * NFTA_OBJ_USE        // NLA_U32: rules referring to it
 * NFTA_OBJ_HANDLE     // NLA_U64
 * NFTA_OBJ_USERDATA   // NLA_BINARY
 * ```
 *
 * @module
 */
import type { NetlinkConnection } from '../netlink/connection.js';
import type { NetlinkMessage } from '../netlink/message.js';
import { parseAttributes } from '../netlink/attributes.js';
import { NetlinkDecodeError } from '../netlink/errors.js';
import * as C from './constants.js';
import { name as nameAttr, u64num } from './data.js';
import { attrsOffset, decodeNfGenMsg, encodeNfGenMsg, nftType, requireNetfilter } from './nfnetlink.js';
import { familyName, familyNumber, objectTypeName, OBJECT_TYPE_NAMES } from './names.js';
import { checkName } from './validate.js';
import { decodeLimit, type LimitSpec } from './expr/limit.js';
import { decodeQuota, type QuotaSpec } from './expr/quota.js';
import { rawAttributes, type RawAttribute } from './expr/registry.js';

/** A stateful object, with `nft -j`'s field names. */
export interface NftObject {
  family: string;
  /** NFTA_OBJ_TABLE */
  table: string;
  /** NFTA_OBJ_NAME */
  name: string;
  /** NFTA_OBJ_HANDLE (dumps) */
  handle?: number;
  /** NFTA_OBJ_TYPE as nft names it: `counter`, `quota`, `limit`, `ct helper`...; `type(<n>)` when unknown */
  type: string;
  /** NFTA_OBJ_TYPE, raw (NFT_OBJECT_*) */
  typeId: number;
  /** NFTA_OBJ_USE: rules referring to it (dumps) */
  use?: number;
  /** counters: NFTA_COUNTER_PACKETS / NFTA_COUNTER_BYTES */
  counter?: { packets: number; bytes: number };
  /** quotas: bytes, used, `over` */
  quota?: QuotaSpec;
  /** limits: rate, unit, burst, type, `over` */
  limit?: LimitSpec;
  /** NFTA_OBJ_USERDATA, hex (libnftnl TLVs: NFTNL_UDATA_OBJ_COMMENT) */
  userdata?: string;
  /** other types: NFTA_OBJ_DATA's attributes, payloads in hex */
  attributes?: RawAttribute[];
}

/** NFT_OBJECT_* names as nft prints them (the one table, in names.ts, that set.ts's object maps use too). */
export { OBJECT_TYPE_NAMES };

/**
 * Decode a NEWOBJ / GETOBJ / DELOBJ message.
 * @throws {NetlinkDecodeError} a short header, malformed attributes, or no table, name or type
 */
export function decodeObject(msg: NetlinkMessage): NftObject {
  const g = decodeNfGenMsg(msg);
  const at = attrsOffset(msg);
  const l = parseAttributes(msg.payload.subarray(4), at);
  const table = l.str(C.NFTA_OBJ_TABLE);
  const name = l.str(C.NFTA_OBJ_NAME);
  const typeId = l.u32be(C.NFTA_OBJ_TYPE);
  if (table === undefined || name === undefined || typeId === undefined)
    throw new NetlinkDecodeError('object message without NFTA_OBJ_TABLE, NFTA_OBJ_NAME or NFTA_OBJ_TYPE', at);
  const o: NftObject = { family: familyName(g.family), table, name, type: objectTypeName(typeId), typeId };
  const handle = u64num(l, C.NFTA_OBJ_HANDLE);
  const use = l.u32be(C.NFTA_OBJ_USE);
  if (handle !== undefined) o.handle = handle;
  if (use !== undefined) o.use = use;
  const ud = l.bin(C.NFTA_OBJ_USERDATA);
  if (ud !== undefined) o.userdata = ud.toString('hex');
  const data = l.nested(C.NFTA_OBJ_DATA) ?? parseAttributes(Buffer.alloc(0), at);
  if (typeId === C.NFT_OBJECT_COUNTER) o.counter = { packets: u64num(data, C.NFTA_COUNTER_PACKETS) ?? 0, bytes: u64num(data, C.NFTA_COUNTER_BYTES) ?? 0 };
  else if (typeId === C.NFT_OBJECT_QUOTA) o.quota = decodeQuota(data);
  else if (typeId === C.NFT_OBJECT_LIMIT) o.limit = decodeLimit(data);
  else o.attributes = rawAttributes(data);
  return o;
}

/**
 * Dump stateful objects (NFT_MSG_GETOBJ with NLM_F_DUMP), filtered by the
 * kernel on the table when given.
 * @throws {UsageError} a bad family or name
 * @throws {NetlinkError} the kernel refused the dump
 * @throws {NetlinkDecodeError} a malformed reply
 * @throws {UsageError} a connection that is not NETLINK_NETFILTER, before anything is sent
 */
export async function listObjects(conn: NetlinkConnection, options: { family?: string; table?: string } = {}): Promise<NftObject[]> {
  requireNetfilter(conn, 'listObjects');
  const fam = options.family ? familyNumber(options.family) : C.NFPROTO_UNSPEC;
  const payload = [encodeNfGenMsg(fam)];
  if (options.table !== undefined) payload.push(nameAttr(C.NFTA_OBJ_TABLE, checkName(options.table, 'table')));
  const msgs = await conn.dumpAll({ type: nftType(C.NFT_MSG_GETOBJ), payload });
  return msgs
    .filter((m) => m.type === nftType(C.NFT_MSG_NEWOBJ))
    .map(decodeObject)
    .filter((o) => options.table === undefined || o.table === options.table);
}
