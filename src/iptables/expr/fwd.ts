/**
 * The `fwd` expression (net/netfilter/nft_fwd_netdev.c), netdev only: send
 * the packet out of a device, or to a neighbour's address through one:
 * nft's `fwd to "lo"`, `fwd ip to 127.0.0.2 device "lo"`.
 *
 * ```c
 * // nf_tables.h: enum nft_fwd_attributes
 * NFTA_FWD_SREG_DEV    // NLA_U32, register holding the device index (u32, host order)
 * NFTA_FWD_SREG_ADDR   // NLA_U32, register holding the neighbour's address
 * NFTA_FWD_NFPROTO     // NLA_U32, the address's family: NFPROTO_IPV4, NFPROTO_IPV6
 * ```
 * Printed as nft 1.0.6 does (src/statement.c, src/json.c) from constant
 * registers; other operands print raw.
 *
 * @module
 */
import * as C from '../constants.js';
import { ADDRESS_TYPES, regConstant } from './dup.js';
import { attrCodec } from './registry.js';

/** `fwd`: NFTA_FWD_* as numbers. */
export interface FwdExpr {
  name: 'fwd';
  sregDev: number;
  sregAddr?: number;
  nfproto?: number;
}

/** Codec of `fwd`. */
export const fwdExpr = attrCodec<FwdExpr>(
  'fwd',
  { sregDev: [C.NFTA_FWD_SREG_DEV, 'u32', true], sregAddr: [C.NFTA_FWD_SREG_ADDR, 'u32'], nfproto: [C.NFTA_FWD_NFPROTO, 'u32'] },
  {
    describe: (e) =>
      `fwd sreg_dev ${e.sregDev}${e.sregAddr !== undefined ? ` sreg_addr ${e.sregAddr}` : ''}${e.nfproto !== undefined ? ` nfproto ${e.nfproto}` : ''}`,
    statement(e, ctx) {
      const fam = e.nfproto === undefined ? undefined : ADDRESS_TYPES[e.nfproto];
      if (ctx.family !== 'netdev' || (e.nfproto !== undefined && !fam) || (e.sregAddr !== undefined) !== (fam !== undefined)) return undefined;
      const dev = regConstant(ctx, e.sregDev, 'ifindex');
      const addr = fam ? regConstant(ctx, e.sregAddr, fam[1]) : undefined;
      if (!dev || (fam && !addr)) return undefined;
      const json: Record<string, unknown> = { dev: dev.json, ...(fam && addr && { family: fam[0], addr: addr.json }) };
      return {
        stmt: { text: `fwd ${fam ? `${fam[0]} ` : ''}to ${addr ? `${addr.text} device ` : ''}${dev.text}`, json: { fwd: json } },
        consumes: [e.sregDev, e.sregAddr].filter((r): r is number => r !== undefined),
      };
    },
  },
);
