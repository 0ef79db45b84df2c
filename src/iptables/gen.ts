/**
 * The ruleset generation id: NFT_MSG_GETGEN, answered with NFT_MSG_NEWGEN.
 * Every committed batch moves it; a batch carrying NFNL_BATCH_GENID is
 * refused with ERESTART when it moved since (optimistic concurrency).
 *
 * ```c
 * // nf_tables.h: enum nft_gen_attributes
 * NFTA_GEN_ID         // NLA_U32 (big-endian), ruleset generation id
 * NFTA_GEN_PROC_PID   // NLA_U32, pid of the process that made the last change (events)
 * NFTA_GEN_PROC_NAME  // NLA_STRING, its name
 * ```
 *
 * @module
 */
import type { NetlinkConnection } from '../netlink/connection.js';
import type { NetlinkMessage } from '../netlink/message.js';
import { parseAttributes } from '../netlink/attributes.js';
import { NetlinkDecodeError } from '../netlink/errors.js';
import * as C from './constants.js';
import { attrsOffset, decodeNfGenMsg, encodeNfGenMsg, nftType, requireNetfilter } from './nfnetlink.js';

/** A decoded NEWGEN message. */
export interface NftGen {
  /** NFTA_GEN_ID */
  id: number;
  /** NFTA_GEN_PROC_PID */
  procPid?: number;
  /** NFTA_GEN_PROC_NAME */
  procName?: string;
}

/**
 * Decode a NEWGEN (or GETGEN) message.
 * @throws {NetlinkDecodeError} a short header or malformed attributes
 */
export function decodeGen(msg: NetlinkMessage): NftGen {
  decodeNfGenMsg(msg);
  const l = parseAttributes(msg.payload.subarray(4), attrsOffset(msg));
  const g: NftGen = { id: l.u32be(C.NFTA_GEN_ID) ?? 0 };
  const pid = l.u32be(C.NFTA_GEN_PROC_PID);
  const name = l.str(C.NFTA_GEN_PROC_NAME);
  if (pid !== undefined) g.procPid = pid;
  if (name !== undefined) g.procName = name;
  return g;
}

/**
 * The current ruleset generation id (NFT_MSG_GETGEN).
 * @returns NFTA_GEN_ID (u32)
 * @throws {NetlinkError} the kernel refused (EPERM without CAP_NET_ADMIN; nf_tables missing)
 * @throws {NetlinkDecodeError} no NEWGEN in the answer, or a malformed one
 * @throws {UsageError} a connection that is not NETLINK_NETFILTER, before anything is sent
 */
export async function getGenId(conn: NetlinkConnection): Promise<number> {
  requireNetfilter(conn, 'getGenId');
  const replies = await conn.request({ type: nftType(C.NFT_MSG_GETGEN), payload: encodeNfGenMsg(C.NFPROTO_UNSPEC) });
  const m = replies.find((r) => r.type === nftType(C.NFT_MSG_NEWGEN));
  if (!m) throw new NetlinkDecodeError('NFT_MSG_GETGEN was answered without NFT_MSG_NEWGEN', 0);
  return decodeGen(m).id;
}
