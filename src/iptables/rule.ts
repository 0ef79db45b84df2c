/**
 * nf_tables rules: NFT_MSG_NEWRULE / GETRULE / DELRULE.
 *
 * ```c
 * // nf_tables.h: enum nft_rule_attributes
 * NFTA_RULE_TABLE        // NLA_STRING
 * NFTA_RULE_CHAIN        // NLA_STRING
 * NFTA_RULE_HANDLE       // NLA_U64 (big-endian)
 * NFTA_RULE_EXPRESSIONS  // NLA_NESTED: NFTA_LIST_ELEM { NFTA_EXPR_NAME, NFTA_EXPR_DATA }...
 * NFTA_RULE_COMPAT       // NLA_NESTED (iptables-nft's xt compat)
 * NFTA_RULE_POSITION     // NLA_U64: handle of the rule to add after (NLM_F_APPEND) or before
 * NFTA_RULE_USERDATA     // NLA_BINARY, at most NFT_USERDATA_MAXLEN (256)
 * ```
 * User data holds libnftnl TLVs (`{u8 type; u8 len; value}`); type
 * NFTNL_UDATA_RULE_COMMENT (0) is the rule's comment, NUL-terminated.
 *
 * nft 1.0.6 appends a rule with NLM_F_CREATE | NLM_F_APPEND and TABLE,
 * CHAIN, EXPRESSIONS.
 *
 * @module
 */
import type { NetlinkConnection } from '../netlink/connection.js';
import { NLM_F_APPEND, NLM_F_CREATE, type NetlinkMessage } from '../netlink/message.js';
import { bin, cString, parseAttributes, u64be } from '../netlink/attributes.js';
import { NetlinkDecodeError, UsageError } from '../netlink/errors.js';
import * as C from './constants.js';
import { be32, checkU32, name as nameAttr, nest, u64num } from './data.js';
import { attrsOffset, decodeNfGenMsg, encodeNfGenMsg, nftType, requireNetfilter } from './nfnetlink.js';
import { familyName, familyNumber } from './names.js';
import { checkName } from './validate.js';
import { decodeExprs, encodeExprs, type Expr } from './expr/index.js';

/** A rule, with `nft -j`'s field names; `expr` holds the kernel expressions (not nft's statements). */
export interface NftRule {
  family: string;
  /** NFTA_RULE_TABLE */
  table: string;
  /** NFTA_RULE_CHAIN */
  chain: string;
  /** NFTA_RULE_HANDLE (dumps; for delete) */
  handle?: number;
  /** NFTA_RULE_POSITION: handle of the neighbour rule (add) */
  position?: number;
  /** the comment held in the user data (NFTNL_UDATA_RULE_COMMENT) */
  comment?: string;
  /** NFTA_RULE_USERDATA in hex, when present */
  userdata?: string;
  /** NFTA_RULE_EXPRESSIONS, decoded */
  expr: Expr[];
}

/** NFTNL_UDATA_COMMENT_MAXLEN in libnftnl: 128 bytes with the NUL. */
export const COMMENT_MAXLEN = 128;

/**
 * User data TLVs holding a comment (a rule's, or with `type`
 * NFTNL_UDATA_TABLE_COMMENT and `what` 'table', a table's).
 * @throws {UsageError} a comment over 127 bytes of UTF-8, or with a NUL
 */
export function encodeComment(comment: string, type: number = C.NFTNL_UDATA_RULE_COMMENT, what = 'rule'): Buffer {
  const s = Buffer.from(comment + '\0', 'utf8');
  if (comment.includes('\0')) throw new UsageError(`${what} comment must not contain a NUL byte`);
  if (s.length > COMMENT_MAXLEN) throw new UsageError(`${what} comment is ${s.length - 1} bytes, at most ${COMMENT_MAXLEN - 1}`);
  return Buffer.concat([Buffer.from([type, s.length]), s]);
}

/**
 * The comment in user data (a rule's, or with `type` NFTNL_UDATA_TABLE_COMMENT
 * a table's), or undefined (user data is opaque: malformed TLVs just mean no comment).
 */
export function decodeComment(ud: Buffer, type: number = C.NFTNL_UDATA_RULE_COMMENT): string | undefined {
  for (let off = 0; off + 2 <= ud.length; ) {
    const len = ud[off + 1];
    if (off + 2 + len > ud.length) return undefined;
    if (ud[off] === type) return cString(ud, off + 2, off + 2 + len);
    off += 2 + len;
  }
  return undefined;
}

/** What to add: table, chain, expressions, and optionally a comment and a position. */
export interface RuleSpec {
  family: string;
  table: string;
  chain: string;
  /** expressions in order */
  expr: readonly Expr[];
  /** stored as user data, shown by `nft list` as `comment "..."` */
  comment?: string;
  /** handle of an existing rule: add after it (or before it with `insert`) */
  position?: number;
  /** NFTA_RULE_ID: names the rule inside a batch */
  id?: number;
}

/**
 * Payload of NFT_MSG_NEWRULE: nfgenmsg, TABLE, CHAIN, [POSITION], EXPRESSIONS, [USERDATA], [ID].
 * @throws {UsageError} bad names, expressions or comment
 */
export function encodeRule(r: RuleSpec): Buffer[] {
  const out = [
    encodeNfGenMsg(familyNumber(r.family)),
    nameAttr(C.NFTA_RULE_TABLE, checkName(r.table, 'table')),
    nameAttr(C.NFTA_RULE_CHAIN, checkName(r.chain, 'chain')),
  ];
  if (r.position !== undefined) out.push(u64be(C.NFTA_RULE_POSITION, checkHandle(r.position)));
  out.push(nest(C.NFTA_RULE_EXPRESSIONS, encodeExprs(r.expr)));
  if (r.comment !== undefined) out.push(bin(C.NFTA_RULE_USERDATA, encodeComment(r.comment)));
  if (r.id !== undefined) out.push(be32(C.NFTA_RULE_ID, checkU32(r.id, 'rule id')));
  return out;
}

/** Flags nft uses to add a rule: NLM_F_CREATE | NLM_F_APPEND (NLM_F_CREATE alone inserts before `position`, or at the start). */
export function ruleFlags(insert = false): number {
  return insert ? NLM_F_CREATE : NLM_F_CREATE | NLM_F_APPEND;
}

/**
 * Check a rule handle.
 * @throws {UsageError} not a whole number >= 1
 */
export function checkHandle(h: number): number {
  if (!Number.isSafeInteger(h) || h < 1) throw new UsageError(`bad rule handle '${String(h)}': a whole number >= 1`);
  return h;
}

/**
 * Payload of NFT_MSG_DELRULE: nfgenmsg, TABLE, CHAIN, HANDLE; without a
 * handle, every rule of the chain (`nft flush chain`).
 * @throws {UsageError} bad names or handle
 */
export function encodeRuleRef(r: { family: string; table: string; chain: string; handle?: number }): Buffer[] {
  return [
    encodeNfGenMsg(familyNumber(r.family)),
    nameAttr(C.NFTA_RULE_TABLE, checkName(r.table, 'table')),
    nameAttr(C.NFTA_RULE_CHAIN, checkName(r.chain, 'chain')),
    ...(r.handle === undefined ? [] : [u64be(C.NFTA_RULE_HANDLE, checkHandle(r.handle))]),
  ];
}

/**
 * Decode a NEWRULE / GETRULE / DELRULE message.
 * @throws {NetlinkDecodeError} a short header, malformed attributes or expressions, or no table or chain
 */
export function decodeRule(msg: NetlinkMessage): NftRule {
  const g = decodeNfGenMsg(msg);
  const at = attrsOffset(msg);
  const l = parseAttributes(msg.payload.subarray(4), at);
  const table = l.str(C.NFTA_RULE_TABLE);
  const chain = l.str(C.NFTA_RULE_CHAIN);
  if (table === undefined || chain === undefined) throw new NetlinkDecodeError('rule message without NFTA_RULE_TABLE or NFTA_RULE_CHAIN', at);
  const exprs = l.nested(C.NFTA_RULE_EXPRESSIONS);
  const r: NftRule = { family: familyName(g.family), table, chain, expr: exprs ? (decodeExprs(exprs) as Expr[]) : [] };
  const handle = u64num(l, C.NFTA_RULE_HANDLE);
  const position = u64num(l, C.NFTA_RULE_POSITION);
  if (handle !== undefined) r.handle = handle;
  if (position !== undefined) r.position = position;
  const ud = l.bin(C.NFTA_RULE_USERDATA);
  if (ud !== undefined) {
    r.userdata = ud.toString('hex');
    const comment = decodeComment(ud);
    if (comment !== undefined) r.comment = comment;
  }
  return r;
}

/**
 * Dump rules (NFT_MSG_GETRULE with NLM_F_DUMP), filtered by the kernel on
 * table and chain when given.
 * @throws {UsageError} a bad family or name
 * @throws {NetlinkError} the kernel refused the dump
 * @throws {NetlinkDecodeError} a malformed reply
 * @throws {UsageError} a connection that is not NETLINK_NETFILTER, before anything is sent
 */
export async function listRules(conn: NetlinkConnection, options: { family?: string; table?: string; chain?: string } = {}): Promise<NftRule[]> {
  requireNetfilter(conn, 'listRules');
  const fam = options.family ? familyNumber(options.family) : C.NFPROTO_UNSPEC;
  const payload = [encodeNfGenMsg(fam)];
  if (options.table !== undefined) payload.push(nameAttr(C.NFTA_RULE_TABLE, checkName(options.table, 'table')));
  if (options.chain !== undefined) payload.push(nameAttr(C.NFTA_RULE_CHAIN, checkName(options.chain, 'chain')));
  const msgs = await conn.dumpAll({ type: nftType(C.NFT_MSG_GETRULE), payload });
  return msgs
    .filter((m) => m.type === nftType(C.NFT_MSG_NEWRULE))
    .map(decodeRule)
    .filter((r) => (options.table === undefined || r.table === options.table) && (options.chain === undefined || r.chain === options.chain));
}
