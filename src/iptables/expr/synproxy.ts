/**
 * The `synproxy` expression (net/netfilter/nft_synproxy.c): answer a SYN
 * with a SYN cookie and open the connection to the server only once the
 * client has completed the handshake, nft's `synproxy mss 1460 wscale 7
 * timestamp sack-perm`.
 *
 * ```c
 * // nf_tables.h: enum nft_synproxy_attributes
 * NFTA_SYNPROXY_MSS      // NLA_U16 (big-endian): MSS sent to the backend
 * NFTA_SYNPROXY_WSCALE   // NLA_U8: window scale sent to the backend
 * NFTA_SYNPROXY_FLAGS    // NLA_U32 (big-endian): NF_SYNPROXY_OPT_MSS | _WSCALE | _SACK_PERM | _TIMESTAMP
 * ```
 * The same three attributes make a named `synproxy` object (see format.ts).
 *
 * @module
 */
import * as C from '../constants.js';
import type { Statement } from '../print.js';
import { attrCodec } from './registry.js';

/** `synproxy`: NFTA_SYNPROXY_* as numbers. */
export interface SynproxyExpr {
  name: 'synproxy';
  mss?: number;
  wscale?: number;
  flags?: number;
}

const KNOWN_FLAGS = C.NF_SYNPROXY_OPT_MSS | C.NF_SYNPROXY_OPT_WSCALE | C.NF_SYNPROXY_OPT_SACK_PERM | C.NF_SYNPROXY_OPT_TIMESTAMP;

/** The option words nft prints, in its order: `timestamp`, `sack-perm`. */
export function synproxyOptions(flags: number): string[] {
  return [...(flags & C.NF_SYNPROXY_OPT_TIMESTAMP ? ['timestamp'] : []), ...(flags & C.NF_SYNPROXY_OPT_SACK_PERM ? ['sack-perm'] : [])];
}

/**
 * A synproxy statement as nft 1.0.6 lists it: `mss M wscale W` when either
 * flag is set (both numbers, as nft prints them), then the options; JSON
 * holds only what the flags name (`{ synproxy: { mss: 1400 } }`, `{ synproxy:
 * null }`). Undefined for flags nft has no word for (NF_SYNPROXY_OPT_ECN).
 */
export function synproxyStatement(mss: number, wscale: number, flags: number): Statement | undefined {
  if (flags & ~KNOWN_FLAGS) return undefined;
  const sizes = flags & (C.NF_SYNPROXY_OPT_MSS | C.NF_SYNPROXY_OPT_WSCALE) ? ` mss ${mss} wscale ${wscale}` : '';
  const opts = synproxyOptions(flags);
  const json: Record<string, unknown> = {
    ...(flags & C.NF_SYNPROXY_OPT_MSS && { mss }),
    ...(flags & C.NF_SYNPROXY_OPT_WSCALE && { wscale }),
    ...(opts.length && { flags: opts }),
  };
  return { text: `synproxy${sizes}${opts.map((o) => ` ${o}`).join('')}`, json: { synproxy: Object.keys(json).length ? json : null } };
}

/** Codec of `synproxy`. */
export const synproxyExpr = attrCodec<SynproxyExpr>(
  'synproxy',
  { mss: [C.NFTA_SYNPROXY_MSS, 'u16'], wscale: [C.NFTA_SYNPROXY_WSCALE, 'u8'], flags: [C.NFTA_SYNPROXY_FLAGS, 'u32'] },
  {
    describe: (e) => `synproxy mss ${e.mss ?? 0} wscale ${e.wscale ?? 0} flags 0x${(e.flags ?? 0).toString(16)}`,
    statement(e) {
      const stmt = synproxyStatement(e.mss ?? 0, e.wscale ?? 0, e.flags ?? 0);
      return stmt && { stmt };
    },
  },
);
