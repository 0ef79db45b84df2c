/**
 * The `dup` expression (net/netfilter/nft_dup_ipv4.c, nft_dup_ipv6.c,
 * nft_dup_netdev.c): send a copy of the packet to an address (ip, ip6: the
 * gateway, optionally through a device) or out of a device (netdev): nft's
 * `dup to 127.0.0.2 device "lo"`, `dup to "lo"`.
 *
 * ```c
 * // nf_tables.h: enum nft_dup_attributes
 * NFTA_DUP_SREG_ADDR   // NLA_U32, register holding the address (ip, ip6)
 * NFTA_DUP_SREG_DEV    // NLA_U32, register holding the device index (u32, host order)
 * ```
 * Printed as nft 1.0.6 does (src/statement.c, src/json.c) from constant
 * registers; other operands print raw.
 *
 * @module
 */
import * as C from '../constants.js';
import { type PrintContext, type Statement, valueText } from '../print.js';
import { attrCodec } from './registry.js';

/** `dup`: NFTA_DUP_* as numbers. */
export interface DupExpr {
  name: 'dup';
  sregAddr?: number;
  sregDev?: number;
}

/** The address type of a table's family, where nft names it (its netlink_parse_dup / netlink_parse_fwd). */
export const ADDRESS_TYPES: Readonly<Record<number, ['ip' | 'ip6', 'ipv4' | 'ipv6']>> = {
  [C.NFPROTO_IPV4]: ['ip', 'ipv4'],
  [C.NFPROTO_IPV6]: ['ip6', 'ipv6'],
};

/** A register's constant as nft prints a value of `type` (`"lo"` for a device index); undefined when it is not a constant of that type. */
export function regConstant(ctx: PrintContext, reg: number | undefined, type: 'ipv4' | 'ipv6' | 'ifindex'): Statement | undefined {
  const r = reg === undefined ? undefined : ctx.reg(reg);
  if (r?.k !== 'imm') return undefined;
  const v = valueText(r.data, type, (i) => ctx.ifname(i));
  return v.text.startsWith('0x') ? undefined : (v as Statement);
}

/** Codec of `dup`. */
export const dupExpr = attrCodec<DupExpr>(
  'dup',
  { sregAddr: [C.NFTA_DUP_SREG_ADDR, 'u32'], sregDev: [C.NFTA_DUP_SREG_DEV, 'u32'] },
  {
    describe: (e) => `dup${e.sregAddr !== undefined ? ` sreg_addr ${e.sregAddr}` : ''}${e.sregDev !== undefined ? ` sreg_dev ${e.sregDev}` : ''}`,
    statement(e, ctx) {
      // the address takes the table's family (ip, ip6); netdev's dup has a device only
      const fam = ctx.family === 'ip' ? C.NFPROTO_IPV4 : ctx.family === 'ip6' ? C.NFPROTO_IPV6 : undefined;
      const addrType = fam === undefined ? undefined : ADDRESS_TYPES[fam][1];
      if (addrType === undefined && ctx.family !== 'netdev') return undefined;
      if ((e.sregAddr !== undefined) !== (addrType !== undefined) || (ctx.family === 'netdev' && e.sregDev === undefined)) return undefined;
      const addr = addrType ? regConstant(ctx, e.sregAddr, addrType) : undefined;
      const dev = e.sregDev !== undefined ? regConstant(ctx, e.sregDev, 'ifindex') : undefined;
      if ((addrType && !addr) || (e.sregDev !== undefined && !dev)) return undefined;
      // nft: the device is `to` when there is no address (netdev), else `device`
      const to = addr ?? dev!;
      const json: Record<string, unknown> = { addr: to.json, ...(addr && dev && { dev: dev.json }) };
      return {
        stmt: { text: `dup to ${to.text}${addr && dev ? ` device ${dev.text}` : ''}`, json: { dup: json } },
        consumes: [e.sregAddr, e.sregDev].filter((r): r is number => r !== undefined),
      };
    },
  },
);
