/**
 * The live nftables format tests (test/live/nft-format*.test.ts): the `nft`
 * binary as set-up tool and oracle, and our listing of one table, the part
 * of `listRuleset` that `nft list table FAMILY NAME` prints.
 */
import { execFileSync } from 'node:child_process';
import type { NetlinkConnection } from '../../src/netlink/connection.js';
import * as N from '../../src/iptables/index.js';

/** The reference tool, by absolute path (node_modules/.bin holds an unrelated `nft`). */
export const NFT = '/usr/sbin/nft';

/** Run nft, stdout as text; throws as execFileSync does. */
export const nft = (...args: string[]): string => execFileSync(NFT, args, { encoding: 'utf8' });

/** Run nft, ignoring its output and its failure (clean-ups). */
export const quietly = (...args: string[]): void => {
  try {
    execFileSync(NFT, args, { stdio: 'ignore' });
  } catch {
    /* gone */
  }
};

/** Our ruleset of one table: its table, chains, sets, rules and objects (and the ifnames the listing resolved). */
export async function ourTable(conn: NetlinkConnection, family: string, name: string): Promise<N.NftRuleset> {
  const rs = await N.listRuleset(conn, { family });
  return {
    tables: rs.tables.filter((x) => x.name === name),
    chains: rs.chains.filter((x) => x.table === name),
    sets: rs.sets.filter((x) => x.table === name),
    rules: rs.rules.filter((x) => x.table === name),
    objects: (rs.objects ?? []).filter((x) => x.table === name),
    ...(rs.ifnames && { ifnames: rs.ifnames }),
  };
}

/** The rule lines of a table's text (those indented by two tabs). */
export const ruleLines = (text: string): string[] => text.split('\n').filter((l) => l.startsWith('\t\t'));
