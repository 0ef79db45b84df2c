/**
 * The `notrack` expression (net/netfilter/nft_ct.c, `nft_notrack_ops`):
 * the packet is not tracked by conntrack. It has no attributes; nft prints
 * `notrack`.
 *
 * @module
 */
import { attrCodec } from './registry.js';

/** `notrack`. */
export interface NotrackExpr {
  name: 'notrack';
}

/** Codec of `notrack`. */
export const notrackExpr = attrCodec<NotrackExpr>(
  'notrack',
  {},
  {
    describe: () => 'notrack',
    statement: () => ({ stmt: { text: 'notrack', json: { notrack: null } } }),
  },
);
