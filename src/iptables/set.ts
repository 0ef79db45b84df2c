/**
 * nf_tables named sets and their elements: NFT_MSG_NEWSET / GETSET / DELSET
 * and NFT_MSG_NEWSETELEM / GETSETELEM / DELSETELEM.
 *
 * ```c
 * // nf_tables.h: enum nft_set_attributes
 * NFTA_SET_TABLE      // NLA_STRING
 * NFTA_SET_NAME       // NLA_STRING, at most NFT_SET_MAXNAMELEN (256) with the NUL
 * NFTA_SET_FLAGS      // NLA_U32 (big-endian), enum nft_set_flags (NFT_SET_TIMEOUT = 0x10...)
 * NFTA_SET_KEY_TYPE   // NLA_U32, nft's datatype id (informational: 7 = ipv4_addr, 8 = ipv6_addr)
 * NFTA_SET_KEY_LEN    // NLA_U32, bytes
 * NFTA_SET_DATA_TYPE, NFTA_SET_DATA_LEN   // maps
 * NFTA_SET_ID         // NLA_U32, names the set inside a batch
 * NFTA_SET_TIMEOUT    // NLA_U64, default element timeout, milliseconds
 * NFTA_SET_GC_INTERVAL// NLA_U32, milliseconds
 * NFTA_SET_USERDATA   // NLA_BINARY: libnftnl TLVs (NFTNL_UDATA_SET_KEYBYTEORDER...)
 * NFTA_SET_HANDLE     // NLA_U64
 *
 * // enum nft_set_elem_list_attributes
 * NFTA_SET_ELEM_LIST_TABLE, NFTA_SET_ELEM_LIST_SET   // NLA_STRING
 * NFTA_SET_ELEM_LIST_ELEMENTS                        // NLA_NESTED: NFTA_LIST_ELEM...
 * NFTA_SET_ELEM_LIST_SET_ID                          // NLA_U32
 * // enum nft_set_elem_attributes (inside each NFTA_LIST_ELEM)
 * NFTA_SET_ELEM_KEY         // NLA_NESTED: struct nft_data
 * NFTA_SET_ELEM_DATA        // NLA_NESTED: struct nft_data (maps)
 * NFTA_SET_ELEM_FLAGS       // NLA_U32
 * NFTA_SET_ELEM_TIMEOUT     // NLA_U64, milliseconds
 * NFTA_SET_ELEM_EXPIRATION  // NLA_U64, milliseconds left (dumps)
 * ```
 * A per-element timeout needs a set with the NFT_SET_TIMEOUT flag (EINVAL
 * otherwise); the kernel stops matching an element once it has expired.
 *
 * @module
 */
import { endianness } from 'node:os';
import type { NetlinkConnection } from '../netlink/connection.js';
import { NLM_F_CREATE, type NetlinkMessage } from '../netlink/message.js';
import { bin, cString, parseAttributes, parseNested, u64be } from '../netlink/attributes.js';
import { NetlinkDecodeError, UsageError } from '../netlink/errors.js';
import * as C from './constants.js';
import { be32, checkU32, decodeData, name as nameAttr, nest, u64num, type NftData } from './data.js';
import { attrsOffset, decodeNfGenMsg, encodeNfGenMsg, nftType, requireNetfilter } from './nfnetlink.js';
import { familyName, familyNumber, objectTypeName } from './names.js';
import { addressText, checkName, checkTimeoutMs } from './validate.js';
import { datatypeLayout, datatypeName, FLAG_TYPES, type ValueType } from './print.js';
import { decodeExpr } from './expr/registry.js';
import type { Expr } from './expr/index.js';

/** Set flag names by bit (enum nft_set_flags), as `nft -j` prints them. */
export const SET_FLAG_NAMES: ReadonlyArray<[number, string]> = [
  [C.NFT_SET_ANONYMOUS, 'anonymous'],
  [C.NFT_SET_CONSTANT, 'constant'],
  [C.NFT_SET_INTERVAL, 'interval'],
  [C.NFT_SET_MAP, 'map'],
  [C.NFT_SET_TIMEOUT, 'timeout'],
  [C.NFT_SET_EVAL, 'dynamic'],
  [C.NFT_SET_OBJECT, 'object'],
  [C.NFT_SET_CONCAT, 'concat'],
  [C.NFT_SET_EXPR, 'expr'],
];

/** Name of an NFTA_SET_DATA_TYPE: `verdict` for NFT_DATA_VERDICT, an nft datatype name (`ipv4_addr . inet_service`), else `type(<n>)`. */
export function setDataTypeName(dt: number): string {
  if (dt === C.NFT_DATA_VERDICT) return 'verdict';
  return datatypeName(dt);
}

/** A named set, with `nft -j`'s field names. */
export interface NftSet {
  family: string;
  /** NFTA_SET_TABLE */
  table: string;
  /** NFTA_SET_NAME */
  name: string;
  /** NFTA_SET_HANDLE (dumps) */
  handle?: number;
  /** NFTA_SET_FLAGS as names: `timeout`, `interval`, `constant`, `dynamic`... */
  flags: string[];
  /** NFTA_SET_KEY_TYPE as nft names it (`ipv4_addr`, `ipv6_addr`...), `type(<n>)` otherwise */
  type?: string;
  /** NFTA_SET_KEY_TYPE, raw (nft's datatype id) */
  keyType?: number;
  /**
   * Maps (NFT_SET_MAP): what keys map to, as `nft -j` names it in its `map` field:
   * `verdict` (NFTA_SET_DATA_TYPE = NFT_DATA_VERDICT), a datatype name (`ipv4_addr`, `mark`...);
   * object maps (NFT_SET_OBJECT): the object type (`counter`, `quota`...). Absent for plain sets.
   */
  map?: string;
  /** NFTA_SET_KEY_LEN: bytes */
  keyLen: number;
  /** NFTA_SET_DATA_TYPE (maps), raw */
  dataType?: number;
  /** NFTA_SET_DATA_LEN (maps), bytes */
  dataLen?: number;
  /** NFTA_SET_TIMEOUT: default element timeout, ms */
  timeoutMs?: number;
  /** NFTA_SET_OBJ_TYPE (object maps): NFT_OBJECT_*, raw */
  objType?: number;
  /** NFTA_SET_GC_INTERVAL: ms */
  gcIntervalMs?: number;
  /** NFTA_SET_USERDATA, hex */
  userdata?: string;
  /** NFTA_SET_POLICY: NFT_SET_POL_PERFORMANCE (0) or NFT_SET_POL_MEMORY (1) */
  policy?: number;
  /** NFTA_SET_DESC's NFTA_SET_DESC_SIZE: the most elements the set was sized for */
  size?: number;
  /** names of the set's element expressions (NFTA_SET_EXPR, NFTA_SET_EXPRESSIONS), e.g. `['counter']` */
  expressions?: string[];
  /** elements, when listed (see {@link listSetElements}) */
  elements?: NftSetElement[];
}

/** One set element. */
export interface NftSetElement {
  /** NFTA_SET_ELEM_KEY value, wire bytes in hex */
  key: string;
  /** the key as an address, when it is 4 or 16 bytes long (ipv4_addr / ipv6_addr sets) */
  address?: string;
  /** NFTA_SET_ELEM_TIMEOUT: ms */
  timeoutMs?: number;
  /** NFTA_SET_ELEM_EXPIRATION: ms left before it times out */
  expiresMs?: number;
  /** NFTA_SET_ELEM_FLAGS (NFT_SET_ELEM_INTERVAL_END = 1, NFT_SET_ELEM_CATCHALL = 2) */
  flags?: number;
  /** NFTA_SET_ELEM_DATA (maps) */
  data?: NftData;
  /** NFTA_SET_ELEM_OBJREF (object maps): the name of the object the key maps to */
  objref?: string;
  /** NFTA_SET_ELEM_KEY_END (intervals of concatenated keys, one element per interval): the last key, hex */
  keyEnd?: string;
  /** NFTA_SET_ELEM_USERDATA's NFTNL_UDATA_SET_ELEM_COMMENT: the element's `comment "..."` */
  comment?: string;
  /** NFTA_SET_ELEM_EXPR / NFTA_SET_ELEM_EXPRESSIONS: the element's own expressions (its `counter`...) */
  exprs?: Expr[];
}

/** What to create: a named set of addresses (or any key). */
export interface SetSpec {
  family: string;
  table: string;
  name: string;
  /** key type: `ipv4_addr` (4 bytes), `ipv6_addr` (16), `mark` (4), `inet_service` (2) */
  type: 'ipv4_addr' | 'ipv6_addr' | 'mark' | 'inet_service';
  /** flag names; `timeout` lets elements carry a timeout */
  flags?: string[];
  /** default element timeout, ms */
  timeoutMs?: number;
  /** NFTA_SET_ID: lets rules in the same batch refer to it */
  id?: number;
}

const TYPE_SPECS: Record<SetSpec['type'], { id: number; len: number }> = {
  ipv4_addr: { id: C.NFT_TYPE_IPADDR, len: 4 },
  ipv6_addr: { id: C.NFT_TYPE_IP6ADDR, len: 16 },
  mark: { id: C.NFT_TYPE_MARK, len: 4 },
  inet_service: { id: C.NFT_TYPE_INET_SERVICE, len: 2 },
};

/** Set flags from names. @throws {UsageError} an unknown name */
export function setFlagsValue(names: readonly string[]): number {
  let v = 0;
  for (const n of names) {
    const f = SET_FLAG_NAMES.find(([, name]) => name === n);
    if (!f) throw new UsageError(`unknown set flag '${n}': use ${SET_FLAG_NAMES.map(([, x]) => x).join(', ')}`);
    v |= f[0];
  }
  return v;
}

/** Names of set flag bits; unknown bits read `0x<hex>`. */
export function setFlagNames(v: number): string[] {
  const out: string[] = [];
  let rest = v;
  for (const [bit, n] of SET_FLAG_NAMES)
    if (v & bit) {
      out.push(n);
      rest &= ~bit;
    }
  if (rest) out.push(`0x${rest.toString(16)}`);
  return out;
}

/**
 * Payload of NFT_MSG_NEWSET, attributes in nft 1.0.6's order (TABLE, NAME,
 * FLAGS, KEY_TYPE, KEY_LEN, ID, [TIMEOUT], USERDATA with the key byte order
 * nft reads back).
 * @throws {UsageError} bad names, type, flags or timeout
 */
export function encodeSet(s: SetSpec): Buffer[] {
  const t = TYPE_SPECS[s.type];
  if (!t) throw new UsageError(`unsupported set type '${String(s.type)}': use ${Object.keys(TYPE_SPECS).join(', ')}`);
  const out = [
    encodeNfGenMsg(familyNumber(s.family)),
    nameAttr(C.NFTA_SET_TABLE, checkName(s.table, 'table')),
    nameAttr(C.NFTA_SET_NAME, checkName(s.name, 'set')),
    be32(C.NFTA_SET_FLAGS, setFlagsValue(s.flags ?? [])),
    be32(C.NFTA_SET_KEY_TYPE, t.id),
    be32(C.NFTA_SET_KEY_LEN, t.len),
  ];
  if (s.id !== undefined) out.push(be32(C.NFTA_SET_ID, checkU32(s.id, 'set id')));
  if (s.timeoutMs !== undefined) out.push(u64be(C.NFTA_SET_TIMEOUT, checkTimeoutMs(s.timeoutMs)));
  // NFTNL_UDATA_SET_KEYBYTEORDER = BYTEORDER_BIG_ENDIAN (2), u32 host order, as nft writes it for address keys.
  if (s.type !== 'mark') out.push(bin(C.NFTA_SET_USERDATA, Buffer.from([C.NFTNL_UDATA_SET_KEYBYTEORDER, 4, 2, 0, 0, 0])));
  return out;
}

/**
 * Payload of NFT_MSG_DELSET / GETSET (one set): nfgenmsg, TABLE, NAME.
 * @throws {UsageError} bad names
 */
export function encodeSetRef(s: { family: string; table: string; name: string }): Buffer[] {
  return [encodeNfGenMsg(familyNumber(s.family)), nameAttr(C.NFTA_SET_TABLE, checkName(s.table, 'table')), nameAttr(C.NFTA_SET_NAME, checkName(s.name, 'set'))];
}

/**
 * Decode a NEWSET / GETSET / DELSET message.
 * @throws {NetlinkDecodeError} a short header, malformed attributes, or no table or name
 */
export function decodeSet(msg: NetlinkMessage): NftSet {
  const g = decodeNfGenMsg(msg);
  const at = attrsOffset(msg);
  const l = parseAttributes(msg.payload.subarray(4), at);
  const table = l.str(C.NFTA_SET_TABLE);
  const name = l.str(C.NFTA_SET_NAME);
  if (table === undefined || name === undefined) throw new NetlinkDecodeError('set message without NFTA_SET_TABLE or NFTA_SET_NAME', at);
  const s: NftSet = {
    family: familyName(g.family),
    table,
    name,
    flags: setFlagNames(l.u32be(C.NFTA_SET_FLAGS) ?? 0),
    keyLen: l.u32be(C.NFTA_SET_KEY_LEN) ?? 0,
  };
  const handle = u64num(l, C.NFTA_SET_HANDLE);
  if (handle !== undefined) s.handle = handle;
  const kt = l.u32be(C.NFTA_SET_KEY_TYPE);
  if (kt !== undefined) {
    s.type = datatypeName(kt);
    s.keyType = kt;
  }
  const dt = l.u32be(C.NFTA_SET_DATA_TYPE);
  const dl = l.u32be(C.NFTA_SET_DATA_LEN);
  const ot = l.u32be(C.NFTA_SET_OBJ_TYPE);
  if (dt !== undefined && s.flags.includes('map')) s.map = setDataTypeName(dt);
  if (ot !== undefined) {
    s.objType = ot;
    if (s.flags.includes('object')) s.map = objectTypeName(ot);
  }
  const to = u64num(l, C.NFTA_SET_TIMEOUT);
  const gc = l.u32be(C.NFTA_SET_GC_INTERVAL);
  const ud = l.bin(C.NFTA_SET_USERDATA);
  if (dt !== undefined) s.dataType = dt;
  if (dl !== undefined) s.dataLen = dl;
  if (to !== undefined) s.timeoutMs = to;
  if (gc !== undefined) s.gcIntervalMs = gc;
  if (ud !== undefined) s.userdata = ud.toString('hex');
  const policy = l.u32be(C.NFTA_SET_POLICY);
  if (policy !== undefined) s.policy = policy;
  const size = l.nested(C.NFTA_SET_DESC)?.u32be(C.NFTA_SET_DESC_SIZE);
  if (size !== undefined) s.size = size;
  const one = l.nested(C.NFTA_SET_EXPR);
  const list = l.nested(C.NFTA_SET_EXPRESSIONS)?.all(C.NFTA_LIST_ELEM).map(parseNested) ?? [];
  const exprs = [...(one ? [one] : []), ...list].map((x) => x.str(C.NFTA_EXPR_NAME) ?? '?');
  if (exprs.length) s.expressions = exprs;
  return s;
}

/**
 * Dump sets (NFT_MSG_GETSET with NLM_F_DUMP); with `table`, the kernel
 * filters (a missing table gives an empty list).
 * @throws {UsageError} a bad family or name
 * @throws {NetlinkError} the kernel refused the dump
 * @throws {NetlinkDecodeError} a malformed reply
 * @throws {UsageError} a connection that is not NETLINK_NETFILTER, before anything is sent
 */
export async function listSets(conn: NetlinkConnection, options: { family?: string; table?: string } = {}): Promise<NftSet[]> {
  requireNetfilter(conn, 'listSets');
  const fam = options.family ? familyNumber(options.family) : C.NFPROTO_UNSPEC;
  const payload = [encodeNfGenMsg(fam)];
  if (options.table !== undefined) payload.push(nameAttr(C.NFTA_SET_TABLE, checkName(options.table, 'table')));
  let msgs: NetlinkMessage[];
  try {
    msgs = await conn.dumpAll({ type: nftType(C.NFT_MSG_GETSET), payload });
  } catch (e) {
    if (options.table !== undefined && (e as { code?: string }).code === 'ENOENT') return [];
    throw e;
  }
  return msgs
    .filter((m) => m.type === nftType(C.NFT_MSG_NEWSET))
    .map(decodeSet)
    .filter((s) => options.table === undefined || s.table === options.table);
}

/** Elements to add or delete. */
export interface ElementsSpec {
  family: string;
  table: string;
  /** set name */
  set: string;
  /** NFTA_SET_ELEM_LIST_SET_ID, when the set is created in the same batch */
  setId?: number;
  /** keys: wire bytes (a 4-byte IPv4 address...) */
  elements: ReadonlyArray<{ key: Buffer; timeoutMs?: number }>;
}

/**
 * Payload of NFT_MSG_NEWSETELEM or NFT_MSG_DELSETELEM: nfgenmsg, LIST_TABLE,
 * LIST_SET, [LIST_SET_ID], LIST_ELEMENTS { ELEM { [TIMEOUT], KEY { VALUE } }... }
 * (nft 1.0.6's order). Timeouts are ignored by the kernel on delete; leave them out.
 * @throws {UsageError} bad names, an empty list, or a bad timeout
 */
export function encodeElements(s: ElementsSpec): Buffer[] {
  if (s.elements.length === 0) throw new UsageError('no set elements given');
  const out = [
    encodeNfGenMsg(familyNumber(s.family)),
    nameAttr(C.NFTA_SET_ELEM_LIST_TABLE, checkName(s.table, 'table')),
    nameAttr(C.NFTA_SET_ELEM_LIST_SET, checkName(s.set, 'set')),
  ];
  if (s.setId !== undefined) out.push(be32(C.NFTA_SET_ELEM_LIST_SET_ID, checkU32(s.setId, 'set id')));
  const elems = s.elements.map((e) => {
    const parts: Buffer[] = [];
    if (e.timeoutMs !== undefined) parts.push(u64be(C.NFTA_SET_ELEM_TIMEOUT, checkTimeoutMs(e.timeoutMs)));
    parts.push(nest(C.NFTA_SET_ELEM_KEY, [bin(C.NFTA_DATA_VALUE, e.key)]));
    return nest(C.NFTA_LIST_ELEM, parts);
  });
  out.push(nest(C.NFTA_SET_ELEM_LIST_ELEMENTS, elems));
  return out;
}

/** Flags for adding elements: NLM_F_CREATE (an existing element is left as it is; add NLM_F_EXCL to get EEXIST). */
export const ELEMENT_ADD_FLAGS = NLM_F_CREATE;

/** Decoded NEWSETELEM message: which set, and its elements. */
export interface NftSetElements {
  family: string;
  table: string;
  set: string;
  elements: NftSetElement[];
}

/**
 * Decode a NEWSETELEM / GETSETELEM / DELSETELEM message.
 * @throws {NetlinkDecodeError} a short header, malformed attributes, or no table or set name
 */
export function decodeElements(msg: NetlinkMessage): NftSetElements {
  const g = decodeNfGenMsg(msg);
  const at = attrsOffset(msg);
  const l = parseAttributes(msg.payload.subarray(4), at);
  const table = l.str(C.NFTA_SET_ELEM_LIST_TABLE);
  const set = l.str(C.NFTA_SET_ELEM_LIST_SET);
  if (table === undefined || set === undefined) throw new NetlinkDecodeError('set element message without NFTA_SET_ELEM_LIST_TABLE or _SET', at);
  const list = l.nested(C.NFTA_SET_ELEM_LIST_ELEMENTS);
  const elements: NftSetElement[] = [];
  for (const a of list?.all(C.NFTA_LIST_ELEM) ?? []) {
    const e = parseNested(a);
    const keyAttr = e.get(C.NFTA_SET_ELEM_KEY);
    const key = keyAttr ? (decodeData(keyAttr).value ?? '') : '';
    const el: NftSetElement = { key };
    if (key.length === 8 || key.length === 32) el.address = addressText(Buffer.from(key, 'hex'));
    const to = u64num(e, C.NFTA_SET_ELEM_TIMEOUT);
    const exp = u64num(e, C.NFTA_SET_ELEM_EXPIRATION);
    const flags = e.u32be(C.NFTA_SET_ELEM_FLAGS);
    const dataAttr = e.get(C.NFTA_SET_ELEM_DATA);
    const objref = e.str(C.NFTA_SET_ELEM_OBJREF);
    if (objref !== undefined) el.objref = objref;
    const keyEndAttr = e.get(C.NFTA_SET_ELEM_KEY_END);
    if (keyEndAttr) el.keyEnd = decodeData(keyEndAttr).value ?? '';
    if (to !== undefined) el.timeoutMs = to;
    if (exp !== undefined) el.expiresMs = exp;
    if (flags !== undefined) el.flags = flags;
    if (dataAttr) el.data = decodeData(dataAttr);
    const comment = userdataString(e.bin(C.NFTA_SET_ELEM_USERDATA)?.toString('hex'), C.NFTNL_UDATA_SET_ELEM_COMMENT);
    if (comment !== undefined) el.comment = comment;
    const one = e.get(C.NFTA_SET_ELEM_EXPR);
    const exprs = [...(one ? [one] : []), ...(e.nested(C.NFTA_SET_ELEM_EXPRESSIONS)?.all(C.NFTA_LIST_ELEM) ?? [])].map((x) => decodeExpr(x) as Expr);
    if (exprs.length) el.exprs = exprs;
    elements.push(el);
  }
  return { family: familyName(g.family), table, set, elements };
}

/**
 * Dump the elements of one set (NFT_MSG_GETSETELEM with NLM_F_DUMP), with
 * their timeout and time left.
 * @throws {UsageError} a bad family or name
 * @throws {NetlinkError} ENOENT when the table or set does not exist (with a message naming it)
 * @throws {NetlinkDecodeError} a malformed reply
 * @throws {UsageError} a connection that is not NETLINK_NETFILTER, before anything is sent
 */
export async function listSetElements(conn: NetlinkConnection, ref: { family: string; table: string; set: string }): Promise<NftSetElement[]> {
  requireNetfilter(conn, 'listSetElements');
  const payload = [
    encodeNfGenMsg(familyNumber(ref.family)),
    nameAttr(C.NFTA_SET_ELEM_LIST_TABLE, checkName(ref.table, 'table')),
    nameAttr(C.NFTA_SET_ELEM_LIST_SET, checkName(ref.set, 'set')),
  ];
  let msgs: NetlinkMessage[];
  try {
    msgs = await conn.dumpAll({ type: nftType(C.NFT_MSG_GETSETELEM), payload });
  } catch (e) {
    const err = e as { code?: string; withMessage?: (m: string) => Error };
    if (err.code === 'ENOENT' && err.withMessage) throw err.withMessage(`set '${ref.set}' not found in table ${ref.family} ${ref.table}`);
    throw e;
  }
  return msgs.filter((m) => m.type === nftType(C.NFT_MSG_NEWSETELEM)).flatMap((m) => decodeElements(m).elements);
}

/**
 * One element as nft lists it: a key, a range or prefix of keys (interval
 * sets), or the catch-all `*`; with its value in maps.
 */
export interface NftSetItem {
  /** the (first) key, wire bytes in hex; absent for the catch-all element */
  key?: string;
  /** interval sets: the last key of the interval (inclusive), hex, when it holds more than one key */
  keyEnd?: string;
  /** the interval `key`..`keyEnd` is a CIDR block: its prefix length in bits (`10.0.0.0/8` -> 8) */
  prefixLen?: number;
  /** NFT_SET_ELEM_CATCHALL: the catch-all element (`*`) */
  catchall?: boolean;
  /** NFTA_SET_ELEM_TIMEOUT of the (start) element: ms */
  timeoutMs?: number;
  /** NFTA_SET_ELEM_EXPIRATION of the (start) element: ms left */
  expiresMs?: number;
  /** NFTA_SET_ELEM_DATA (maps) of the (start) element */
  data?: NftData;
  /** NFTA_SET_ELEM_OBJREF (object maps) of the (start) element */
  objref?: string;
  /** the (start) element's comment */
  comment?: string;
  /** the (start) element's expressions */
  exprs?: Expr[];
}

/** The NUL-terminated string of user data TLV `type` (a comment), or undefined when absent. */
export function userdataString(hex: string | undefined, type: number): string | undefined {
  const v = userdataTlvs(hex).get(type);
  return v && cString(v);
}

/** libnftnl user data TLVs of NFTA_SET_USERDATA (type byte, length byte, value), by type. */
export function userdataTlvs(hex: string | undefined): Map<number, Buffer> {
  const out = new Map<number, Buffer>();
  if (!hex) return out;
  const b = Buffer.from(hex, 'hex');
  for (let i = 0; i + 2 <= b.length; ) {
    const len = b[i + 1];
    if (i + 2 + len > b.length) break;
    out.set(b[i], b.subarray(i + 2, i + 2 + len));
    i += 2 + len;
  }
  return out;
}

/**
 * Byte order of a set's keys on the wire: `big` (network order: addresses,
 * ports...) or `host` (marks...). From NFTNL_UDATA_SET_KEYBYTEORDER when nft
 * wrote it, else from the key type (`mark` is host order). The keys of
 * interval sets are always big-endian: nft byte-swaps host-order keys of
 * interval sets (a `mark` interval set stores 0x10 as 00000010) so that the
 * kernel's bytewise ordering is the numeric one.
 */
export function setKeyByteOrder(set: Pick<NftSet, 'flags' | 'type' | 'userdata'>): 'big' | 'host' {
  if (set.flags.includes('interval')) return 'big';
  return userdataByteOrder(set.userdata, C.NFTNL_UDATA_SET_KEYBYTEORDER) ?? (set.type === 'mark' ? 'host' : 'big');
}

/**
 * Byte order of a map's values on the wire, from NFTNL_UDATA_SET_DATABYTEORDER
 * when nft wrote it, else from the value type (`mark` is host order).
 */
export function setDataByteOrder(set: Pick<NftSet, 'map' | 'userdata'>): 'big' | 'host' {
  return userdataByteOrder(set.userdata, C.NFTNL_UDATA_SET_DATABYTEORDER) ?? (set.map === 'mark' ? 'host' : 'big');
}

function userdataByteOrder(userdata: string | undefined, tlv: number): 'big' | 'host' | undefined {
  const bo = userdataTlvs(userdata).get(tlv);
  if (bo?.length !== 4) return undefined;
  const v = endianness() === 'LE' ? bo.readUInt32LE(0) : bo.readUInt32BE(0);
  return v === C.NFT_BYTEORDER_HOST_ENDIAN ? 'host' : v === C.NFT_BYTEORDER_BIG_ENDIAN ? 'big' : undefined;
}

/** A key's numeric value (nft compares keys as numbers in their byte order). */
function keyNumber(hex: string, order: 'big' | 'host'): bigint {
  if (hex.length === 0) return 0n;
  const b = Buffer.from(hex, 'hex');
  if (order === 'host' && endianness() === 'LE') b.reverse();
  return BigInt(`0x${b.toString('hex')}`);
}

/**
 * A concatenated key's sort value as nft computes it (concat_expr_msort_value):
 * each part's bytes as on the wire, without the padding to 4 bytes, one after
 * the other, read as one number in host byte order.
 */
function concatKeyNumber(hex: string, layout: ReadonlyArray<{ type: ValueType; len: number }>): bigint {
  let at = 0;
  const parts: Buffer[] = [];
  for (const p of layout) {
    parts.push(Buffer.from(hex.slice(at * 2, (at + p.len) * 2), 'hex'));
    at += Math.ceil(p.len / 4) * 4;
  }
  const b = Buffer.concat(parts);
  if (endianness() === 'LE') b.reverse();
  return b.length ? BigInt(`0x${b.toString('hex')}`) : 0n;
}

function hexOf(v: bigint, bytes: number): string {
  return v.toString(16).padStart(bytes * 2, '0');
}

function itemOf(el: NftSetElement): NftSetItem {
  const it: NftSetItem = { key: el.key };
  if (el.timeoutMs !== undefined) it.timeoutMs = el.timeoutMs;
  if (el.expiresMs !== undefined) it.expiresMs = el.expiresMs;
  if (el.data !== undefined) it.data = el.data;
  if (el.objref !== undefined) it.objref = el.objref;
  if (el.comment !== undefined) it.comment = el.comment;
  if (el.exprs !== undefined) it.exprs = el.exprs;
  return it;
}

/**
 * A set's elements as nft lists them, sorted by key value, the catch-all
 * element last.
 *
 * Interval sets (NFT_SET_INTERVAL) hold boundaries, not ranges: an element
 * starts an interval and the next one, flagged NFT_SET_ELEM_INTERVAL_END,
 * is the first key past it (nft also adds an end element at 0 before the
 * first interval, and leaves out the end of an interval that runs to the
 * largest key). They are merged back: an interval of one key is that key,
 * an interval that is a CIDR block gets `prefixLen`, any other has
 * `keyEnd`. The start element carries the interval's timeout and map value.
 * `keyLayout`: how keys are made (a `typeof` set's parts), else from the key type.
 * Two starts in a row close the first interval just before the second; end
 * elements without a start are dropped. Intervals of concatenated keys come
 * as one element each with NFTA_SET_ELEM_KEY_END: `key`..`keyEnd`, raw.
 */
export function setItems(
  set: Pick<NftSet, 'flags' | 'type' | 'userdata' | 'keyType'>,
  elements: readonly NftSetElement[],
  keyLayout?: ReadonlyArray<{ type: ValueType; len: number }>,
): NftSetItem[] {
  const catchall = elements.filter((e) => ((e.flags ?? 0) & C.NFT_SET_ELEM_CATCHALL) !== 0);
  const rest = elements.filter((e) => ((e.flags ?? 0) & C.NFT_SET_ELEM_CATCHALL) === 0);
  const order = setKeyByteOrder(set);
  const isEnd = (e: NftSetElement): boolean => ((e.flags ?? 0) & C.NFT_SET_ELEM_INTERVAL_END) !== 0;
  const layout = keyLayout ?? (set.keyType !== undefined ? datatypeLayout(set.keyType) : undefined);
  const concat = layout !== undefined && layout.length > 1 && !set.flags.includes('interval') ? layout : undefined;
  // flag keys (`syn | ack`): nft sorts by the first flag named, the lowest bit, and lists ties in the
  // reverse of the kernel's order (its merge sort inserts each before its equals)
  const flags = layout?.length === 1 && FLAG_TYPES.has(layout[0].type) && !set.flags.includes('interval');
  const value = (e: NftSetElement): bigint => {
    if (concat) return concatKeyNumber(e.key, concat);
    const v = keyNumber(e.key, order);
    return flags ? v & -v : v;
  };
  const sorted = (flags ? [...rest].reverse() : rest)
    .map((e) => ({ e, v: value(e) }))
    .sort((a, b) => (a.v < b.v ? -1 : a.v > b.v ? 1 : Number(isEnd(b.e)) - Number(isEnd(a.e))));
  const out: NftSetItem[] = [];
  if (!set.flags.includes('interval')) {
    out.push(...sorted.map(({ e }) => itemOf(e)));
  } else if (rest.some((e) => e.keyEnd !== undefined)) {
    // Concatenated keys: one element per interval, its last key in NFTA_SET_ELEM_KEY_END, listed
    // in the kernel's order (nft does not sort them).
    for (const e of rest) {
      const it = itemOf(e);
      if (e.keyEnd !== undefined && e.keyEnd !== e.key) it.keyEnd = e.keyEnd;
      out.push(it);
    }
  } else {
    let open: { e: NftSetElement; v: bigint } | undefined;
    const close = (lo: { e: NftSetElement; v: bigint }, hi: bigint): void => {
      if (hi < lo.v) return;
      const bytes = lo.e.key.length / 2;
      const it = itemOf(lo.e);
      if (hi > lo.v) {
        it.keyEnd = hexOf(hi, bytes);
        const size = hi - lo.v + 1n;
        // A CIDR block: a power-of-two number of keys, starting on a multiple of it.
        if ((size & (size - 1n)) === 0n && lo.v % size === 0n) it.prefixLen = bytes * 8 - (size.toString(2).length - 1);
      }
      out.push(it);
    };
    for (const x of sorted) {
      if (isEnd(x.e)) {
        if (open) close(open, x.v - 1n);
        open = undefined;
      } else {
        if (open) close(open, x.v - 1n);
        open = x;
      }
    }
    if (open) close(open, (1n << BigInt(open.e.key.length * 4)) - 1n);
  }
  for (const e of catchall) {
    const it = itemOf(e);
    delete it.key;
    it.catchall = true;
    out.push(it);
  }
  return out;
}
