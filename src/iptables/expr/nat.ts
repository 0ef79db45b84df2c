/**
 * The `nat` expression (net/netfilter/nft_nat.c): source or destination NAT
 * to addresses and ports held in registers (loaded by `immediate`s before
 * it). nft's `snat to 1.2.3.4`, `dnat to 10.0.0.1:8080`,
 * `snat to 1.2.3.4-1.2.3.10:1000-2000 fully-random`, `snat ip to ...` in inet tables.
 *
 * ```c
 * // nf_tables.h: enum nft_nat_attributes
 * NFTA_NAT_TYPE            // NLA_U32 (big-endian): enum nft_nat_types (NFT_NAT_SNAT, NFT_NAT_DNAT)
 * NFTA_NAT_FAMILY          // NLA_U32: NFPROTO_IPV4 / NFPROTO_IPV6
 * NFTA_NAT_REG_ADDR_MIN    // NLA_U32: register holding the first address
 * NFTA_NAT_REG_ADDR_MAX    // NLA_U32: register holding the last address
 * NFTA_NAT_REG_PROTO_MIN   // NLA_U32: register holding the first port (big-endian u16)
 * NFTA_NAT_REG_PROTO_MAX   // NLA_U32: register holding the last port
 * NFTA_NAT_FLAGS           // NLA_U32: NF_NAT_RANGE_* of linux/netfilter/nf_nat.h
 * ```
 *
 * @module
 */
import { UsageError } from '../../netlink/errors.js';
import * as C from '../constants.js';
import { be32, checkU32, needU32 } from '../data.js';
import { cidrBits, regWord, valueText, type PrintContext, type PrintedStatement } from '../print.js';
import type { ExprCodec } from './registry.js';

/** `nat`. */
export interface NatExpr {
  name: 'nat';
  /** NFTA_NAT_TYPE: `snat` or `dnat` (`type(<n>)` when unknown) */
  type: string;
  /** NFTA_NAT_FAMILY: `ip` (NFPROTO_IPV4) or `ip6` (NFPROTO_IPV6); `family(<n>)` when unknown */
  family: string;
  /** NFTA_NAT_REG_ADDR_MIN */
  regAddrMin?: number;
  /** NFTA_NAT_REG_ADDR_MAX */
  regAddrMax?: number;
  /** NFTA_NAT_REG_PROTO_MIN */
  regProtoMin?: number;
  /** NFTA_NAT_REG_PROTO_MAX */
  regProtoMax?: number;
  /** NFTA_NAT_FLAGS (NF_NAT_RANGE_*) */
  flags?: number;
}

/** NF_NAT_RANGE_* flags nft prints after the target, in nft's order. */
const SHOWN_FLAGS: Array<[number, string]> = [
  [C.NF_NAT_RANGE_PROTO_RANDOM, 'random'],
  [C.NF_NAT_RANGE_PROTO_RANDOM_FULLY, 'fully-random'],
  [C.NF_NAT_RANGE_PERSISTENT, 'persistent'],
];
/** Flags nft implies by the addresses and ports given. */
const IMPLIED = C.NF_NAT_RANGE_MAP_IPS | C.NF_NAT_RANGE_PROTO_SPECIFIED;

/**
 * The flags part of a nat, masquerade or redirect statement: text (` random,persistent`)
 * and JSON (`'persistent'` or a list); undefined when a flag has no nft word here
 * (NF_NAT_RANGE_NETMAP, NF_NAT_RANGE_PROTO_OFFSET).
 */
export function natFlagsPrinted(flags: number): { text: string; json?: string | string[] } | undefined {
  let rest = flags & ~IMPLIED;
  const names: string[] = [];
  for (const [bit, name] of SHOWN_FLAGS)
    if (rest & bit) {
      names.push(name);
      rest &= ~bit;
    }
  if (rest) return undefined;
  if (!names.length) return { text: '' };
  return { text: ` ${names.join(',')}`, json: names.length === 1 ? names[0] : names };
}

/**
 * A value from a pair of registers holding constants: `a`, `a-b` when they
 * differ, or `a/len` when the addresses are exactly one CIDR block; undefined
 * when a register is not a constant.
 */
function constRange(
  ctx: PrintContext,
  min: number | undefined,
  max: number | undefined,
  type: 'ipv4' | 'ipv6' | 'port',
): { text: string; json: unknown; lo: string; hi: string; prefix?: boolean } | undefined {
  if (min === undefined) return undefined;
  const a = ctx.reg(min);
  const b = max === undefined ? a : ctx.reg(max);
  if (a?.k !== 'imm' || b?.k !== 'imm') return undefined;
  const lo = valueText(a.data, type);
  const hi = valueText(b.data, type);
  if (lo.text.startsWith('0x') || hi.text.startsWith('0x')) return undefined;
  if (a.data === b.data) return { text: lo.text, json: lo.json, lo: lo.text, hi: hi.text };
  const bits = type === 'port' ? undefined : cidrBits(Buffer.from(a.data, 'hex'), Buffer.from(b.data, 'hex'));
  if (bits !== undefined) return { text: `${lo.text}/${bits}`, json: { prefix: { addr: lo.json, len: bits } }, lo: lo.text, hi: hi.text, prefix: true };
  return { text: `${lo.text}-${hi.text}`, json: { range: [lo.json, hi.json] }, lo: lo.text, hi: hi.text };
}

/** The ports part (`:8080`, `:1000-2000`) of a nat, masquerade or redirect; null when absent, undefined when unprintable. */
export function natPorts(ctx: PrintContext, min: number | undefined, max: number | undefined): { text: string; json: unknown } | null | undefined {
  if (min === undefined) return null;
  return constRange(ctx, min, max, 'port');
}

/** Codec of `nat`. */
export const natExpr: ExprCodec<NatExpr> = {
  name: 'nat',
  encode(e) {
    const type = e.type === 'snat' ? C.NFT_NAT_SNAT : e.type === 'dnat' ? C.NFT_NAT_DNAT : Number(/^type\((\d+)\)$/.exec(e.type)?.[1] ?? NaN);
    const family = e.family === 'ip' ? C.NFPROTO_IPV4 : e.family === 'ip6' ? C.NFPROTO_IPV6 : Number(/^family\((\d+)\)$/.exec(e.family)?.[1] ?? NaN);
    if (!Number.isInteger(type)) throw new UsageError(`nat type '${e.type}': use snat or dnat`);
    if (!Number.isInteger(family)) throw new UsageError(`nat family '${e.family}': use ip or ip6`);
    const out = [be32(C.NFTA_NAT_TYPE, type), be32(C.NFTA_NAT_FAMILY, family)];
    if (e.regAddrMin !== undefined) out.push(be32(C.NFTA_NAT_REG_ADDR_MIN, checkU32(e.regAddrMin, 'nat regAddrMin')));
    if (e.regAddrMax !== undefined) out.push(be32(C.NFTA_NAT_REG_ADDR_MAX, checkU32(e.regAddrMax, 'nat regAddrMax')));
    if (e.regProtoMin !== undefined) out.push(be32(C.NFTA_NAT_REG_PROTO_MIN, checkU32(e.regProtoMin, 'nat regProtoMin')));
    if (e.regProtoMax !== undefined) out.push(be32(C.NFTA_NAT_REG_PROTO_MAX, checkU32(e.regProtoMax, 'nat regProtoMax')));
    if (e.flags !== undefined) out.push(be32(C.NFTA_NAT_FLAGS, checkU32(e.flags, 'nat flags')));
    return out;
  },
  decode(l) {
    const t = needU32(l, C.NFTA_NAT_TYPE, 'NFTA_NAT_TYPE');
    const f = needU32(l, C.NFTA_NAT_FAMILY, 'NFTA_NAT_FAMILY');
    const e: NatExpr = {
      name: 'nat',
      type: t === C.NFT_NAT_SNAT ? 'snat' : t === C.NFT_NAT_DNAT ? 'dnat' : `type(${t})`,
      family: f === C.NFPROTO_IPV4 ? 'ip' : f === C.NFPROTO_IPV6 ? 'ip6' : `family(${f})`,
    };
    const opt: Array<[keyof NatExpr, number]> = [
      ['regAddrMin', C.NFTA_NAT_REG_ADDR_MIN],
      ['regAddrMax', C.NFTA_NAT_REG_ADDR_MAX],
      ['regProtoMin', C.NFTA_NAT_REG_PROTO_MIN],
      ['regProtoMax', C.NFTA_NAT_REG_PROTO_MAX],
      ['flags', C.NFTA_NAT_FLAGS],
    ];
    for (const [k, a] of opt) {
      const v = l.u32be(a);
      if (v !== undefined) (e as unknown as Record<string, number>)[k] = v;
    }
    return e;
  },
  describe(e) {
    const r = (what: string, v?: number): string => (v !== undefined ? ` ${what} reg ${v}` : '');
    return `nat ${e.type} ${e.family}${r('addr_min', e.regAddrMin)}${r('addr_max', e.regAddrMax)}${r('proto_min', e.regProtoMin)}${r('proto_max', e.regProtoMax)}${e.flags !== undefined ? ` flags 0x${e.flags.toString(16)}` : ''}`;
  },
  statement(e, ctx): PrintedStatement | undefined {
    if ((e.type !== 'snat' && e.type !== 'dnat') || (e.family !== 'ip' && e.family !== 'ip6')) return undefined;
    const v6 = e.family === 'ip6';
    // NF_NAT_RANGE_NETMAP: nft's `snat prefix to 10.0.0.0/24` (JSON flag `netmap`, type_flags `prefix`)
    const netmap = ((e.flags ?? 0) & C.NF_NAT_RANGE_NETMAP) !== 0;
    const flags = natFlagsPrinted((e.flags ?? 0) & ~C.NF_NAT_RANGE_NETMAP);
    let ports = natPorts(ctx, e.regProtoMin, e.regProtoMax);
    if (!flags) return undefined;
    let addr: { text: string; json: unknown; bracketed: string } | null | undefined = null;
    let l3: string | undefined;
    let l4: string | undefined;
    // the map gave a range of addresses, or an address and a port: nft names the family then, in any table
    let family = false;
    if (e.regAddrMin !== undefined) {
      const r = ctx.reg(e.regAddrMin);
      const w = r?.k === 'map' ? r.words : undefined;
      const addrOk = w
        ? regWord(e.regAddrMin) === w.addr[0] && (e.regAddrMax === undefined || regWord(e.regAddrMax) === w.addr[1])
        : e.regAddrMax === undefined || e.regAddrMax === e.regAddrMin;
      // the ports a map of address . port gave (`dnat ip to ip daddr . tcp dport map { ... : 127.0.0.1 . 8080 }`)
      const portOk = w?.port
        ? e.regProtoMin !== undefined && regWord(e.regProtoMin) === w.port[0] && (e.regProtoMax === undefined || regWord(e.regProtoMax) === w.port[1])
        : ports !== undefined && !(v6 && ports);
      if (r?.k === 'map' && addrOk && portOk) {
        // the address a map gave: `dnat to ip saddr map { 1.1.1.1 : 2.2.2.2 }`
        addr = { text: r.stmt.text, json: r.stmt.json, bracketed: r.stmt.text };
        l3 = r.l3;
        l4 = r.l4;
        family = w !== undefined && (w.port !== undefined || w.addr[1] !== w.addr[0]);
        if (w?.port) ports = null;
      } else {
        const c = constRange(ctx, e.regAddrMin, e.regAddrMax, v6 ? 'ipv6' : 'ipv4');
        // an IPv6 address before a port goes in brackets, each end of a range in its own: `[fd00::1]-[fd00::9]:80-90`
        addr = c && { text: c.text, json: c.json, bracketed: c.lo === c.hi ? `[${c.lo}]` : c.prefix ? `[${c.text}]` : `[${c.lo}]-[${c.hi}]` };
      }
    }
    if (ports === undefined) return undefined;
    if (addr === undefined || (addr === null && ports === null) || (netmap && !addr)) return undefined;
    let target = addr ? (v6 && ports ? addr.bracketed : addr.text) : '';
    if (ports) target += `:${ports.text}`;
    const fam = ctx.family === 'inet' || family ? ` ${e.family}` : '';
    const json: Record<string, unknown> = {};
    if (fam) json.family = e.family;
    if (addr) json.addr = addr.json;
    if (ports) json.port = ports.json;
    const flagList = [...(flags.json === undefined ? [] : Array.isArray(flags.json) ? flags.json : [flags.json]), ...(netmap ? ['netmap'] : [])];
    if (flagList.length) json.flags = flagList.length === 1 ? flagList[0] : flagList;
    if (netmap) json.type_flags = 'prefix';
    const consumes = [e.regAddrMin, e.regAddrMax, e.regProtoMin, e.regProtoMax].filter((r): r is number => r !== undefined);
    return {
      stmt: { text: `${e.type}${fam}${netmap ? ' prefix' : ''} to ${target}${flags.text}`, json: { [e.type]: json } },
      consumes,
      needsL3: l3,
      needsL4: l4,
    };
  },
};
