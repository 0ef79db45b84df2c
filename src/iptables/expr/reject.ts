/**
 * The `reject` expression (net/netfilter/nft_reject*.c): drop the packet and
 * answer with an ICMP / ICMPv6 error, an abstracted ICMPX error (inet,
 * bridge, netdev) or a TCP reset. nft's `reject`, `reject with icmp
 * host-prohibited`, `reject with tcp reset`, `reject with icmpx admin-prohibited`.
 *
 * ```c
 * // nf_tables.h: enum nft_reject_attributes
 * NFTA_REJECT_TYPE        // NLA_U32 (big-endian): enum nft_reject_types
 *                         //   NFT_REJECT_ICMP_UNREACH, NFT_REJECT_TCP_RST, NFT_REJECT_ICMPX_UNREACH
 * NFTA_REJECT_ICMP_CODE   // NLA_U8: the ICMP / ICMPv6 code, or enum nft_reject_inet_code
 * ```
 *
 * nft prints a family's default without `with` (`reject`: ICMP
 * port-unreachable in ip, ICMPv6 port-unreachable in ip6, ICMPX
 * port-unreachable in inet, bridge and netdev), and leaves out the match it
 * adds before an ICMP reject in inet (`meta nfproto ipv4`), bridge and netdev
 * (`ether type ip`), and before a TCP reset in ip and ip6 (`meta l4proto tcp`).
 *
 * @module
 */
import { bin } from '../../netlink/attributes.js';
import { UsageError } from '../../netlink/errors.js';
import * as C from '../constants.js';
import { be32, checkU32, needU32 } from '../data.js';
import { enumName } from '../print.js';
import type { ExprCodec } from './registry.js';

/** `reject`. */
export interface RejectExpr {
  name: 'reject';
  /** NFTA_REJECT_TYPE: `icmp` (NFT_REJECT_ICMP_UNREACH), `tcp reset`, `icmpx`; `type(<n>)` when unknown */
  type: string;
  /** NFTA_REJECT_ICMP_CODE */
  code?: number;
}

const TYPES = ['icmp', 'tcp reset', 'icmpx'];
/** enum nft_reject_inet_code names. */
const ICMPX_CODES: Record<number, string> = { 0: 'no-route', 1: 'port-unreachable', 2: 'host-unreachable', 3: 'admin-prohibited' };

/** Codec of `reject`. */
export const rejectExpr: ExprCodec<RejectExpr> = {
  name: 'reject',
  encode(e) {
    let t = TYPES.indexOf(e.type);
    const m = /^type\((\d+)\)$/.exec(e.type);
    if (t < 0 && m) t = Number(m[1]);
    if (t < 0) throw new UsageError(`reject type '${e.type}': use ${TYPES.join(', ')}`);
    const out = [be32(C.NFTA_REJECT_TYPE, checkU32(t, 'reject type'))];
    if (e.code !== undefined) {
      if (!Number.isInteger(e.code) || e.code < 0 || e.code > 255) throw new UsageError(`reject code: ${e.code} is not a u8`);
      out.push(bin(C.NFTA_REJECT_ICMP_CODE, Buffer.from([e.code])));
    }
    return out;
  },
  decode(l) {
    const t = needU32(l, C.NFTA_REJECT_TYPE, 'NFTA_REJECT_TYPE');
    const e: RejectExpr = { name: 'reject', type: TYPES[t] ?? `type(${t})` };
    const code = l.u8(C.NFTA_REJECT_ICMP_CODE);
    if (code !== undefined) e.code = code;
    return e;
  },
  describe(e) {
    const i = TYPES.indexOf(e.type);
    return `reject type ${i >= 0 ? i : e.type} code ${e.code ?? 0}`;
  },
  statement(e, ctx) {
    if (e.type === 'tcp reset') {
      const stmt = { text: 'reject with tcp reset', json: { reject: { type: 'tcp reset' } } };
      return ctx.family === 'ip' || ctx.family === 'ip6' ? { stmt, needsL4: 'tcp' } : { stmt };
    }
    const code = e.code ?? 0;
    if (e.type === 'icmpx') {
      const name = ICMPX_CODES[code];
      if (!name) return undefined;
      // ICMPX port-unreachable is the default where the family mixes IPv4 and IPv6
      const mixed = ctx.family === 'inet' || ctx.family === 'bridge' || ctx.family === 'netdev';
      const text = mixed && code === C.NFT_REJECT_ICMPX_PORT_UNREACH ? 'reject' : `reject with icmpx ${name}`;
      return { stmt: { text, json: { reject: { type: 'icmpx', expr: name } } } };
    }
    if (e.type !== 'icmp') return undefined;
    // NFT_REJECT_ICMP_UNREACH: ICMP in ip, ICMPv6 in ip6; in inet, what the `meta nfproto` before it says
    // in inet, what `meta nfproto` says before it; in bridge and netdev, what `ether type` says
    const mixed = ctx.family === 'inet' || ctx.family === 'bridge' || ctx.family === 'netdev';
    const l3 = ctx.family === 'ip' || ctx.family === 'ip6' ? ctx.family : mixed ? ctx.l3 : undefined;
    if (l3 !== 'ip' && l3 !== 'ip6') return undefined;
    const v6 = l3 === 'ip6';
    const name = enumName(v6 ? 'icmpv6_code' : 'icmp_code', code);
    if (!name) return undefined;
    const type = v6 ? 'icmpv6' : 'icmp';
    const isDefault = !mixed && code === (v6 ? 4 : 3);
    const stmt = { text: isDefault ? 'reject' : `reject with ${type} ${name}`, json: { reject: { type, expr: name } } };
    return mixed ? { stmt, needsL3: l3 } : { stmt };
  },
};
