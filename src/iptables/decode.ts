/**
 * Body decoders for `synplug decode`: one JSON object per NETLINK_NETFILTER
 * message, registered with the core's protocol registry. Requests and
 * replies alike: a GET or dump request that names no object decodes to its
 * family and the filters it carries.
 *
 * @module
 */
import { parseAttributes } from '../netlink/attributes.js';
import { NETLINK_NETFILTER, type NetlinkMessage } from '../netlink/message.js';
import { registerBodyDecoder, type BodyDecoder } from '../netlink/protocols.js';
import * as C from './constants.js';
import { attrsOffset, decodeNfGenMsg, nftType } from './nfnetlink.js';
import { familyName, NFT_MSG_NAMES } from './names.js';
import { decodeTable } from './table.js';
import { decodeChain } from './chain.js';
import { decodeRule } from './rule.js';
import { decodeElements, decodeSet } from './set.js';
import { decodeGen } from './gen.js';
import { decodeObject } from './object.js';
import { ruleStatements } from './format.js';
import { rawAttributes } from './expr/registry.js';

function head(msg: NetlinkMessage): { family: string; attrs: ReturnType<typeof parseAttributes> } {
  const g = decodeNfGenMsg(msg);
  return { family: familyName(g.family), attrs: parseAttributes(msg.payload.subarray(4), attrsOffset(msg)) };
}

/** Decode when the naming attributes are present, else the family and whatever strings name the filter. */
function named(required: number[], full: (m: NetlinkMessage) => Record<string, unknown>, filters: Record<string, number>): BodyDecoder {
  return (msg) => {
    const { family, attrs } = head(msg);
    if (required.every((t) => attrs.has(t))) return full(msg);
    const out: Record<string, unknown> = { family };
    for (const [k, t] of Object.entries(filters)) {
      const v = attrs.str(t);
      if (v !== undefined) out[k] = v;
    }
    return out;
  };
}

/** Decode a batch marker: `{ family, res_id, genid? }`. @throws {NetlinkDecodeError} */
export const decodeBatchMarker: BodyDecoder = (msg) => {
  const g = decodeNfGenMsg(msg);
  const attrs = parseAttributes(msg.payload.subarray(4), attrsOffset(msg));
  const genid = attrs.u32be(C.NFNL_BATCH_GENID);
  return { family: familyName(g.family), res_id: g.resId, ...(genid !== undefined && { genid }) };
};

/** Decode a rule message, with the nft statements it reads as. @throws {NetlinkDecodeError} */
export const decodeRuleBody: BodyDecoder = (msg) => {
  const r = decodeRule(msg);
  return {
    ...r,
    statements: ruleStatements(r.expr, { family: r.family })
      .map((s) => s.text)
      .join(' '),
  };
};

const table = named([C.NFTA_TABLE_NAME], (m) => ({ ...decodeTable(m) }), {});
const chain = named([C.NFTA_CHAIN_TABLE, C.NFTA_CHAIN_NAME], (m) => ({ ...decodeChain(m) }), { table: C.NFTA_CHAIN_TABLE });
const rule = named([C.NFTA_RULE_TABLE, C.NFTA_RULE_CHAIN], decodeRuleBody, { table: C.NFTA_RULE_TABLE });
const set = named([C.NFTA_SET_TABLE, C.NFTA_SET_NAME], (m) => ({ ...decodeSet(m) }), { table: C.NFTA_SET_TABLE });
// a message of elements does not say the set's key type: keys stay bytes (no `address` guess for a 4-byte mark)
const elems = named(
  [C.NFTA_SET_ELEM_LIST_TABLE, C.NFTA_SET_ELEM_LIST_SET],
  (m) => {
    const d = decodeElements(m);
    return { ...d, elements: d.elements.map(({ address: _guess, ...e }) => e) };
  },
  {
    table: C.NFTA_SET_ELEM_LIST_TABLE,
    set: C.NFTA_SET_ELEM_LIST_SET,
  },
);
const gen: BodyDecoder = (m) => ({ family: familyName(decodeNfGenMsg(m).family), ...decodeGen(m) });
const obj = named([C.NFTA_OBJ_TABLE, C.NFTA_OBJ_NAME, C.NFTA_OBJ_TYPE], (m) => ({ ...decodeObject(m) }), { table: C.NFTA_OBJ_TABLE, name: C.NFTA_OBJ_NAME });

/**
 * Any other nf_tables message (flowtables, traces...): the family,
 * `table` and `name` when attributes 1 and 2 are strings (as in
 * nft_object_attributes and nft_flowtable_attributes), and every attribute raw.
 */
export const decodeGenericBody: BodyDecoder = (msg) => {
  const { family, attrs } = head(msg);
  const out: Record<string, unknown> = { family };
  const printable = (b: Buffer | undefined): string | undefined => {
    if (!b || b.length === 0) return undefined;
    const nul = b.indexOf(0);
    const s = b.subarray(0, nul < 0 ? b.length : nul);
    return /^[\x20-\x7e]+$/.test(s.toString('latin1')) && (nul < 0 || nul === b.length - 1) ? s.toString('utf8') : undefined;
  };
  const table = printable(attrs.bin(1));
  const name = printable(attrs.bin(2));
  if (table !== undefined) out.table = table;
  if (name !== undefined) out.name = name;
  out.attributes = rawAttributes(attrs);
  return out;
};

/** Decoder of each nf_tables message type (NFT_MSG_*), for tests and the CLI. */
export const NFT_BODY_DECODERS: ReadonlyMap<number, BodyDecoder> = new Map<number, BodyDecoder>([
  [C.NFNL_MSG_BATCH_BEGIN, decodeBatchMarker],
  [C.NFNL_MSG_BATCH_END, decodeBatchMarker],
  ...[C.NFT_MSG_NEWTABLE, C.NFT_MSG_GETTABLE, C.NFT_MSG_DELTABLE, C.NFT_MSG_DESTROYTABLE].map((t) => [nftType(t), table] as [number, BodyDecoder]),
  ...[C.NFT_MSG_NEWCHAIN, C.NFT_MSG_GETCHAIN, C.NFT_MSG_DELCHAIN, C.NFT_MSG_DESTROYCHAIN].map((t) => [nftType(t), chain] as [number, BodyDecoder]),
  ...[C.NFT_MSG_NEWRULE, C.NFT_MSG_GETRULE, C.NFT_MSG_DELRULE, C.NFT_MSG_DESTROYRULE, C.NFT_MSG_GETRULE_RESET].map(
    (t) => [nftType(t), rule] as [number, BodyDecoder],
  ),
  ...[C.NFT_MSG_NEWSET, C.NFT_MSG_GETSET, C.NFT_MSG_DELSET, C.NFT_MSG_DESTROYSET].map((t) => [nftType(t), set] as [number, BodyDecoder]),
  ...[C.NFT_MSG_NEWSETELEM, C.NFT_MSG_GETSETELEM, C.NFT_MSG_DELSETELEM, C.NFT_MSG_DESTROYSETELEM, C.NFT_MSG_GETSETELEM_RESET].map(
    (t) => [nftType(t), elems] as [number, BodyDecoder],
  ),
  ...[C.NFT_MSG_NEWGEN, C.NFT_MSG_GETGEN].map((t) => [nftType(t), gen] as [number, BodyDecoder]),
  ...[C.NFT_MSG_NEWOBJ, C.NFT_MSG_GETOBJ, C.NFT_MSG_DELOBJ, C.NFT_MSG_GETOBJ_RESET, C.NFT_MSG_DESTROYOBJ].map(
    (t) => [nftType(t), obj] as [number, BodyDecoder],
  ),
]);

for (let msg = 0; msg < NFT_MSG_NAMES.length; msg++) {
  const type = nftType(msg);
  registerBodyDecoder(NETLINK_NETFILTER, type, NFT_BODY_DECODERS.get(type) ?? decodeGenericBody);
}
registerBodyDecoder(NETLINK_NETFILTER, C.NFNL_MSG_BATCH_BEGIN, decodeBatchMarker);
registerBodyDecoder(NETLINK_NETFILTER, C.NFNL_MSG_BATCH_END, decodeBatchMarker);
