/**
 * The `match` expression (net/netfilter/nft_compat.c): an xtables match
 * (iptables' `-m NAME`) run inside nf_tables through nft_compat, as
 * iptables-nft writes it where nf_tables has no native equivalent. Its
 * attributes and nft's text of it: ../xt.ts. A match synplug does not
 * translate prints raw and short (`[ raw: match name recent rev 1 ]`).
 *
 * @module
 */
import type { ExprCodec } from './registry.js';
import { decodeXt, encodeXt, xtStatement } from '../xt.js';

/** `match`. */
export interface MatchExpr {
  name: 'match';
  /** NFTA_MATCH_NAME, e.g. `conntrack` */
  match: string;
  /** NFTA_MATCH_REV */
  rev: number;
  /** NFTA_MATCH_INFO, lowercase hex (host byte order, as the kernel keeps it) */
  info: string;
}

/** Codec of `match`. */
export const matchExpr: ExprCodec<MatchExpr> = {
  name: 'match',
  encode(e) {
    return encodeXt('match', { ext: e.match, rev: e.rev, info: e.info });
  },
  decode(l) {
    const { ext, rev, info } = decodeXt('match', l);
    return { name: 'match', match: ext, rev, info };
  },
  describe(e) {
    // libnftnl: `match name conntrack rev 3`
    return `match name ${e.match} rev ${e.rev}`;
  },
  statement(e, ctx) {
    const stmt = xtStatement(
      'match',
      { ext: e.match, rev: e.rev, info: e.info },
      { family: ctx.family, l4: ctx.l4, l4Other: ctx.l4Other },
      { xt: { type: 'match', name: e.match } },
    );
    return stmt && { stmt };
  },
};
