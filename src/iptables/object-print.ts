/**
 * The bodies of named objects nft lists by their attributes (NFTA_OBJ_DATA):
 * `ct helper`, `ct timeout`, `ct expectation` and `synproxy`, one table row per
 * NFT_OBJECT_* type, in nft 1.0.6's words and line order (src/rule.c
 * obj_print_data) and its JSON fields (src/json.c obj_print_json).
 *
 * ```c
 * // nf_tables.h
 * NFTA_CT_HELPER_NAME, _L3PROTO (u16 BE NFPROTO_*), _L4PROTO (u8)
 * NFTA_CT_TIMEOUT_L3PROTO (u16 BE), _L4PROTO (u8), _DATA (nest of CTA_TIMEOUT_<proto>_*, u32 BE seconds)
 * NFTA_CT_EXPECT_L3PROTO (u16 BE), _L4PROTO (u8), _DPORT (u16 BE), _TIMEOUT (u32, host order, ms), _SIZE (u8)
 * NFTA_SYNPROXY_MSS (u16 BE), _WSCALE (u8), _FLAGS (u32 BE NF_SYNPROXY_OPT_*)
 * ```
 *
 * @module
 */
import { endianness } from 'node:os';
import { cString, parseAttributes } from '../netlink/attributes.js';
import * as C from './constants.js';
import type { NftObject } from './object.js';
import { synproxyOptions } from './expr/index.js';
import { durationText, l4Name } from './print.js';

/** An object's body: its lines in `nft list` (without indentation) and its fields in `nft -j`. */
export interface ObjectBody {
  lines: string[];
  json: Record<string, unknown>;
  /** why `nft -f` cannot read `lines` back, printed as nft lists them (the JSON reads back) */
  problem?: string;
}

/** NFPROTO_* as nft names an object's `l3proto`. */
const L3PROTO: Readonly<Record<number, string>> = { 1: 'inet', 2: 'ip', 10: 'ip6' };

/**
 * Conntrack timeout policies nft knows, by IPPROTO_*: the CTA_TIMEOUT_* state
 * names (attribute 1 first) and nft's own defaults in seconds. nft lists only
 * the states whose timeout differs from its default.
 */
const TIMEOUT_POLICIES: ReadonlyMap<number, ReadonlyArray<readonly [name: string, dflt: number]>> = new Map([
  [
    6,
    [
      ['syn_sent', 120],
      ['syn_recv', 60],
      ['established', 432000],
      ['fin_wait', 120],
      ['close_wait', 60],
      ['last_ack', 30],
      ['time_wait', 120],
      ['close', 10],
      ['syn_sent2', 120],
      ['retrans', 300],
      ['unack', 300],
    ],
  ],
  [
    17,
    [
      ['unreplied', 30],
      ['replied', 120],
    ],
  ],
]);

/** An object's attribute by number, as bytes. */
function attr(o: NftObject, type: number): Buffer | undefined {
  const x = o.attributes?.find((y) => y.type === type);
  return x && Buffer.from(x.data, 'hex');
}

/** An attribute of exactly `len` bytes, else undefined. */
function sized(o: NftObject, type: number, len: number): Buffer | undefined {
  const b = attr(o, type);
  return b?.length === len ? b : undefined;
}

/** `l3proto` and `protocol` (tcp or udp) of a conntrack object; undefined for others. */
function protos(o: NftObject, l3Attr: number, l4Attr: number): { l3proto: string; protocol: string } | undefined {
  const l3 = sized(o, l3Attr, 2);
  const l4 = sized(o, l4Attr, 1);
  const l3proto = l3 && L3PROTO[l3.readUInt16BE(0)];
  const protocol = l4 && l4Name(l4[0]);
  return l3proto && protocol ? { l3proto, protocol } : undefined;
}

function ctHelper(o: NftObject): ObjectBody | undefined {
  const name = attr(o, C.NFTA_CT_HELPER_NAME);
  const p = protos(o, C.NFTA_CT_HELPER_L3PROTO, C.NFTA_CT_HELPER_L4PROTO);
  if (!name || !p) return undefined;
  const type = cString(name);
  return { lines: [`type "${type}" protocol ${p.protocol}`, `l3proto ${p.l3proto}`], json: { type, protocol: p.protocol, l3proto: p.l3proto } };
}

function ctTimeout(o: NftObject): ObjectBody | undefined {
  const l4 = sized(o, C.NFTA_CT_TIMEOUT_L4PROTO, 1);
  const p = protos(o, C.NFTA_CT_TIMEOUT_L3PROTO, C.NFTA_CT_TIMEOUT_L4PROTO);
  const states = l4 && TIMEOUT_POLICIES.get(l4[0]);
  const data = attr(o, C.NFTA_CT_TIMEOUT_DATA);
  if (!p || !states || !data) return undefined;
  const nest = parseAttributes(data, 0);
  const policy: Array<[string, number]> = [];
  for (const [i, [state, dflt]] of states.entries()) {
    const v = nest.u32be(i + 1);
    // a policy without every state's timeout: nft would print what it does not hold
    if (v === undefined) return undefined;
    if (v !== dflt) policy.push([state, v]);
  }
  return {
    lines: [`protocol ${p.protocol}`, `l3proto ${p.l3proto}`, `policy = { ${policy.map(([k, v]) => `${k} : ${v}`).join(', ')} }`],
    json: { protocol: p.protocol, l3proto: p.l3proto, policy: policy.length ? Object.fromEntries(policy) : null },
    // nft 1.0.6 lists a policy of its defaults only as `policy = {  }`, which its parser refuses (a syntax error)
    ...(!policy.length && { problem: 'policy = {  } (every timeout the default): nft -f cannot read this back (a syntax error)' }),
  };
}

function ctExpectation(o: NftObject): ObjectBody | undefined {
  const p = protos(o, C.NFTA_CT_EXPECT_L3PROTO, C.NFTA_CT_EXPECT_L4PROTO);
  const dport = sized(o, C.NFTA_CT_EXPECT_DPORT, 2)?.readUInt16BE(0);
  const timeout = sized(o, C.NFTA_CT_EXPECT_TIMEOUT, 4);
  const size = sized(o, C.NFTA_CT_EXPECT_SIZE, 1)?.[0];
  if (!p || dport === undefined || !timeout || size === undefined) return undefined;
  const ms = endianness() === 'LE' ? timeout.readUInt32LE(0) : timeout.readUInt32BE(0);
  return {
    lines: [`protocol ${p.protocol}`, `dport ${dport}`, `timeout ${durationText(ms)}`, `size ${size}`, `l3proto ${p.l3proto}`],
    json: { protocol: p.protocol, dport, timeout: ms, size, l3proto: p.l3proto },
  };
}

function synproxy(o: NftObject): ObjectBody | undefined {
  const mss = sized(o, C.NFTA_SYNPROXY_MSS, 2)?.readUInt16BE(0);
  const wscale = sized(o, C.NFTA_SYNPROXY_WSCALE, 1)?.[0];
  const flags = sized(o, C.NFTA_SYNPROXY_FLAGS, 4)?.readUInt32BE(0);
  const both = C.NF_SYNPROXY_OPT_MSS | C.NF_SYNPROXY_OPT_WSCALE;
  // nft makes an object with both sizes; one without them, or with a flag nft has no word for, prints raw
  if (mss === undefined || wscale === undefined || flags === undefined || (flags & both) !== both) return undefined;
  const opts = synproxyOptions(flags);
  if ((flags & ~(both | C.NF_SYNPROXY_OPT_SACK_PERM | C.NF_SYNPROXY_OPT_TIMESTAMP)) !== 0) return undefined;
  // nft prints the options as "%s %s" (`timestamp `, ` sack-perm`, `timestamp sack-perm`)
  const optLine = opts.length
    ? `${flags & C.NF_SYNPROXY_OPT_TIMESTAMP ? 'timestamp' : ''} ${flags & C.NF_SYNPROXY_OPT_SACK_PERM ? 'sack-perm' : ''}`
    : undefined;
  return {
    lines: [`mss ${mss}`, `wscale ${wscale}`, ...(optLine !== undefined ? [optLine] : [])],
    json: { mss, wscale, ...(opts.length && { flags: opts }) },
  };
}

/** Object types whose body is printed from their attributes, by NFT_OBJECT_*. */
const BODIES: ReadonlyMap<number, (o: NftObject) => ObjectBody | undefined> = new Map([
  [C.NFT_OBJECT_CT_HELPER, ctHelper],
  [C.NFT_OBJECT_CT_TIMEOUT, ctTimeout],
  [C.NFT_OBJECT_CT_EXPECT, ctExpectation],
  [C.NFT_OBJECT_SYNPROXY, synproxy],
]);

/**
 * The body of a `ct helper`, `ct timeout`, `ct expectation` or `synproxy`
 * object as nft 1.0.6 prints it; undefined for other types and for
 * attributes nft would not print as they are (a missing attribute, a
 * protocol or flag it has no word for).
 */
export function objectBody(o: NftObject): ObjectBody | undefined {
  return BODIES.get(o.typeId)?.(o);
}
