/**
 * `struct nft_data` on the wire (nf_tables.h `enum nft_data_attributes`):
 * a nest holding either NFTA_DATA_VALUE (raw bytes, at most
 * NFT_DATA_VALUE_MAXLEN) or NFTA_DATA_VERDICT (a nest of NFTA_VERDICT_CODE,
 * a big-endian s32, and NFTA_VERDICT_CHAIN for jump/goto).
 *
 * Values are carried as lowercase hex strings of the wire bytes
 * (`"a9fefffe"` for 169.254.255.254), so that decoded expressions are plain
 * JSON. Also the small attribute helpers the nf_tables encoders share.
 *
 * @module
 */
import { NLA_F_NESTED, bin, nested, str, u32be, parseNested, type Attribute, type AttributeView } from '../netlink/attributes.js';
import { NetlinkDecodeError, UsageError } from '../netlink/errors.js';
import * as C from './constants.js';
import { VERDICT_NAMES } from './names.js';

/** A verdict: `accept`, `drop`, `continue`, `return`, `jump` / `goto` (with `chain`)... */
export interface NftVerdict {
  /** verdict name as nft prints it; `verdict(<n>)` for an unknown code */
  code: string;
  /** NFTA_VERDICT_CHAIN: target of `jump` / `goto` */
  chain?: string;
}

/** Decoded `struct nft_data`: exactly one of `value` (hex) and `verdict`. */
export interface NftData {
  /** NFTA_DATA_VALUE bytes as lowercase hex (wire order) */
  value?: string;
  /** NFTA_DATA_VERDICT */
  verdict?: NftVerdict;
}

/** A nest flagged NLA_F_NESTED, as nft sends every nest. */
export function nest(type: number, children: readonly Buffer[]): Buffer {
  return nested(type | NLA_F_NESTED, children);
}

/** NLA_U32 in network byte order, as every nf_tables u32 attribute. */
export const be32 = u32be;
/** NLA_STRING with its NUL (nf_tables names). */
export const name = str;

/**
 * Hex text to bytes.
 * @param what what the value is, for the error message
 * @throws {UsageError} odd length, a non-hex character, or more than NFT_DATA_VALUE_MAXLEN (64) bytes
 */
export function hexBytes(hex: string, what: string): Buffer {
  const h = hex.startsWith('0x') ? hex.slice(2) : hex;
  if (h.length === 0 || h.length % 2 !== 0 || !/^[0-9a-fA-F]+$/.test(h)) throw new UsageError(`${what}: '${hex}' is not an even number of hex digits`);
  if (h.length / 2 > C.NFT_DATA_VALUE_MAXLEN)
    throw new UsageError(`${what}: ${h.length / 2} bytes, at most ${C.NFT_DATA_VALUE_MAXLEN} (NFT_DATA_VALUE_MAXLEN)`);
  return Buffer.from(h, 'hex');
}

/** Encode a data nest holding NFTA_DATA_VALUE. @throws {UsageError} bad hex (see {@link hexBytes}) */
export function encodeValue(type: number, hex: string, what: string): Buffer {
  return nest(type, [bin(C.NFTA_DATA_VALUE, hexBytes(hex, what))]);
}

const VERDICT_CODES = new Map<string, number>([...VERDICT_NAMES].map(([k, v]) => [v, k]));

/**
 * Encode a data nest holding NFTA_DATA_VERDICT.
 * @throws {UsageError} an unknown verdict name, or jump/goto without a chain
 */
export function encodeVerdict(type: number, v: NftVerdict): Buffer {
  let code = VERDICT_CODES.get(v.code);
  const m = /^verdict\((-?\d+)\)$/.exec(v.code);
  if (code === undefined && m) code = Number(m[1]);
  if (code === undefined) throw new UsageError(`unknown verdict '${v.code}': use accept, drop, continue, return, jump or goto`);
  if ((code === C.NFT_JUMP || code === C.NFT_GOTO) && !v.chain) throw new UsageError(`verdict '${v.code}' needs a target chain`);
  const c = Buffer.alloc(4);
  c.writeInt32BE(code);
  const children = [bin(C.NFTA_VERDICT_CODE, c)];
  if (v.chain !== undefined) children.push(str(C.NFTA_VERDICT_CHAIN, v.chain));
  return nest(type, [nest(C.NFTA_DATA_VERDICT, children)]);
}

/** Encode {@link NftData}. @throws {UsageError} neither or both of value/verdict, or bad content */
export function encodeData(type: number, d: NftData, what: string): Buffer {
  if ((d.value === undefined) === (d.verdict === undefined)) throw new UsageError(`${what}: give exactly one of value and verdict`);
  return d.value !== undefined ? encodeValue(type, d.value, what) : encodeVerdict(type, d.verdict!);
}

/**
 * Decode a `struct nft_data` nest.
 * @throws {NetlinkDecodeError} malformed nests, a verdict without a 4-byte code, or neither value nor verdict
 */
export function decodeData(a: Attribute): NftData {
  const l = parseNested(a);
  const v = l.get(C.NFTA_DATA_VALUE);
  if (v) return { value: v.data.toString('hex') };
  const vd = l.nested(C.NFTA_DATA_VERDICT);
  if (vd) {
    const code = vd.s32be(C.NFTA_VERDICT_CODE);
    if (code === undefined) throw new NetlinkDecodeError('NFTA_DATA_VERDICT without NFTA_VERDICT_CODE', a.offset);
    const out: NftVerdict = { code: VERDICT_NAMES.get(code) ?? `verdict(${code})` };
    const chain = vd.str(C.NFTA_VERDICT_CHAIN);
    if (chain !== undefined) out.chain = chain;
    return { verdict: out };
  }
  throw new NetlinkDecodeError('nft_data nest holds neither NFTA_DATA_VALUE nor NFTA_DATA_VERDICT', a.offset);
}

/** Decode the data nest of attribute `type` in `l`, or undefined when absent. @throws {NetlinkDecodeError} */
export function dataAttr(l: AttributeView, type: number): NftData | undefined {
  const a = l.get(type);
  return a ? decodeData(a) : undefined;
}

/** Decode the value nest of attribute `type` as hex, or undefined when absent. @throws {NetlinkDecodeError} it holds a verdict */
export function valueAttr(l: AttributeView, type: number): string | undefined {
  const a = l.get(type);
  if (!a) return undefined;
  const d = decodeData(a);
  if (d.value === undefined) throw new NetlinkDecodeError(`attribute ${type} holds a verdict where a value is expected`, a.offset);
  return d.value;
}

/**
 * A required big-endian u32 attribute.
 * @param what attribute name for the message, e.g. 'NFTA_PAYLOAD_LEN'
 * @throws {NetlinkDecodeError} absent or shorter than 4 bytes
 */
export function needU32(l: AttributeView, type: number, what: string): number {
  const v = l.u32be(type);
  if (v === undefined) throw new NetlinkDecodeError(`missing ${what}`, l.offset);
  return v;
}

/** u64 big-endian attribute as a number (exact up to 2^53), or undefined. @throws {NetlinkDecodeError} too short */
export function u64num(l: AttributeView, type: number): number | undefined {
  const v = l.u64be(type);
  return v === undefined ? undefined : Number(v);
}

/**
 * Check a u32 field before encoding it.
 * @throws {UsageError} not an integer in 0..2^32-1
 */
export function checkU32(v: number, what: string): number {
  if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new UsageError(`${what}: ${v} is not a u32 (0 to 4294967295)`);
  return v;
}
