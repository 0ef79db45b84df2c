/**
 * Listing the whole ruleset, as `nft list ruleset` does: tables, chains,
 * sets (with their elements) and rules, read between two generation ids so
 * that the parts agree with each other.
 *
 * @module
 */
import type { NetlinkConnection } from '../netlink/connection.js';
import { SynplugError } from '../netlink/errors.js';
import { getGenId } from './gen.js';
import { listTables } from './table.js';
import { listChains } from './chain.js';
import { listRules } from './rule.js';
import { listSetElements, listSets } from './set.js';
import type { NftRuleset } from './format.js';

/**
 * Read the ruleset (optionally one family). The generation id is read before
 * and after; if it moved (someone changed the ruleset meanwhile), the
 * listing is read again, up to 5 times.
 * @returns tables, chains, sets with `elements`, rules, in the kernel's order
 * @throws {UsageError} a bad family
 * @throws {NetlinkError} a dump refused (EPERM without CAP_NET_ADMIN...)
 * @throws {SynplugError} the ruleset kept changing
 */
export async function listRuleset(conn: NetlinkConnection, options: { family?: string } = {}): Promise<NftRuleset & { genId: number }> {
  for (let attempt = 1; attempt <= 5; attempt++) {
    const before = await getGenId(conn);
    // One dump at a time: the kernel runs one dump per socket (a second one while the
    // first is still being read is refused with EBUSY).
    const tables = await listTables(conn, options);
    const chains = await listChains(conn, options);
    const sets = await listSets(conn, options);
    const rules = await listRules(conn, options);
    for (const s of sets) {
      try {
        s.elements = await listSetElements(conn, { family: s.family, table: s.table, set: s.name });
      } catch (e) {
        // The set went away between the two dumps: the generation check below retries.
        if ((e as { code?: string }).code !== 'ENOENT') throw e;
      }
    }
    const after = await getGenId(conn);
    if (before === after) return { tables, chains, sets, rules, genId: after };
  }
  throw new SynplugError('the nftables ruleset kept changing while it was listed (5 tries); try again', 'kernel');
}
