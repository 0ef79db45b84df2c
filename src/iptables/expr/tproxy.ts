/**
 * The `tproxy` expression (net/netfilter/nft_tproxy.c): hand the packet to
 * a local socket at the address and port in two registers, nft's
 * `tproxy ip to 127.0.0.1:8080` (inet) or `tproxy to :8080` (ip, ip6).
 *
 * ```c
 * // nf_tables.h: enum nft_tproxy_attributes
 * NFTA_TPROXY_FAMILY     // NLA_U32, NFPROTO_IPV4 / NFPROTO_IPV6 (NFPROTO_UNSPEC: the table's)
 * NFTA_TPROXY_REG_ADDR   // NLA_U32, register holding the address
 * NFTA_TPROXY_REG_PORT   // NLA_U32, register holding the port
 * ```
 *
 * @module
 */
import * as C from '../constants.js';
import { valueText } from '../print.js';
import { attrCodec } from './registry.js';

/** `tproxy`: NFTA_TPROXY_* as numbers. */
export interface TproxyExpr {
  name: 'tproxy';
  family: number;
  regAddr?: number;
  regPort?: number;
}

/** Codec of `tproxy`. */
export const tproxyExpr = attrCodec<TproxyExpr>(
  'tproxy',
  { family: [C.NFTA_TPROXY_FAMILY, 'u32', true], regAddr: [C.NFTA_TPROXY_REG_ADDR, 'u32'], regPort: [C.NFTA_TPROXY_REG_PORT, 'u32'] },
  {
    describe: (e) => `tproxy family ${e.family} addr reg ${e.regAddr ?? '-'} port reg ${e.regPort ?? '-'}`,
    statement(e, ctx) {
      const fam = e.family === C.NFPROTO_IPV4 ? 'ip' : e.family === C.NFPROTO_IPV6 ? 'ip6' : e.family === C.NFPROTO_UNSPEC ? ctx.family : undefined;
      // inet's family-less tproxy takes a port only (`tproxy to :80`)
      const portOnly = fam === 'inet' && e.regAddr === undefined;
      if (fam !== 'ip' && fam !== 'ip6' && !portOnly) return undefined;
      const a = e.regAddr !== undefined ? ctx.reg(e.regAddr) : undefined;
      const p = e.regPort !== undefined ? ctx.reg(e.regPort) : undefined;
      if ((e.regAddr !== undefined && a?.k !== 'imm') || (e.regPort !== undefined && p?.k !== 'imm') || (!a && !p)) return undefined;
      const addr = a?.k === 'imm' ? valueText(a.data, fam === 'ip' ? 'ipv4' : 'ipv6') : undefined;
      const port = p?.k === 'imm' ? valueText(p.data, 'port') : undefined;
      if (addr?.text.startsWith('0x') || port?.text.startsWith('0x')) return undefined;
      // nft brackets an IPv6 address, with a port or without (`tproxy ip6 to [::1]`)
      const addrText = addr ? (fam === 'ip6' ? `[${addr.text}]` : addr.text) : '';
      const json: Record<string, unknown> = {};
      if (ctx.family === 'inet' && !portOnly) json.family = fam;
      if (addr) json.addr = addr.json;
      if (port) json.port = port.json;
      return {
        stmt: { text: `tproxy${ctx.family === 'inet' && !portOnly ? ` ${fam}` : ''} to ${addrText}${port ? `:${port.text}` : ''}`, json: { tproxy: json } },
        consumes: [e.regAddr, e.regPort].filter((r): r is number => r !== undefined),
      };
    },
  },
);
