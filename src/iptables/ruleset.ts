/**
 * Listing the whole ruleset, as `nft list ruleset` does: tables, named
 * objects, chains, sets (with their elements), rules and flowtables (by name), read between two
 * generation ids so that the parts agree with each other; plus the names of
 * the devices that rules match by index (`iif "lo"`), and the paths of the
 * cgroups rules match by id (`socket cgroupv2 level 1 "user.slice"`).
 *
 * @module
 */
import { type BigIntStats, type Dir, lstatSync, opendirSync, statSync } from 'node:fs';
import { NetlinkConnection } from '../netlink/connection.js';
import { requireNetfilter } from './nfnetlink.js';
import { NETLINK_ROUTE } from '../netlink/message.js';
import { NetlinkError, SynplugError } from '../netlink/errors.js';
import { getGenId } from './gen.js';
import { listTables } from './table.js';
import { listChains } from './chain.js';
import { listRules, type NftRule } from './rule.js';
import { listSetElements, listSets, type NftSet } from './set.js';
import { datatypeParts } from './print.js';
import { listObjects } from './object.js';
import type { NftFlowtable, NftRuleset } from './format.js';
import { parseAttributes } from '../netlink/attributes.js';
import { attrsOffset, decodeNfGenMsg, encodeNfGenMsg, nftType } from './nfnetlink.js';
import { familyName, familyNumber } from './names.js';
import { u64num } from './data.js';
import * as C from './constants.js';
import type { Expr } from './expr/index.js';

/** The datatype id of nft's `iface_index` (a set key or value part printed as a device name). */
const IFACE_INDEX_TYPE = 20;

/** meta keys whose values are device indexes. */
const IFINDEX_META: ReadonlySet<unknown> = new Set(['iif', 'oif', 'sdif']);

/** Keys whose values are device indexes: `meta iif` / `oif` / `sdif` loads, `fib ... oif`, sets of `iface_index` keys or values. */
function usesIfindex(rules: readonly NftRule[], sets: readonly NftSet[]): boolean {
  const ifindexType = (id: number | undefined): boolean => id !== undefined && datatypeParts(id).includes(IFACE_INDEX_TYPE);
  if (sets.some((s) => ifindexType(s.keyType) || ifindexType(s.dataType))) return true;
  return rules.some((r) =>
    r.expr.some(
      (e: Expr) =>
        (e.name === 'meta' && 'key' in e && IFINDEX_META.has(e.key)) ||
        (e.name === 'fib' && 'result' in e && e.result === 'oif') ||
        // a device as a constant: `dup to 127.0.0.2 device "lo"`, `fwd to "lo"`
        e.name === 'dup' ||
        e.name === 'fwd',
    ),
  );
}

/** Where nft 1.0.6 looks for cgroup paths (SYSFS_CGROUPSV2_PATH). */
const CGROUP_ROOT = '/sys/fs/cgroup';
/** At most this many entries are looked at under it (nft looks at every one). */
const CGROUP_WALK_MAX = 1_000_000;

/**
 * The cgroup ids (decimal) rules compare a `socket cgroupv2` load with: every 8-byte cmp operand of such a
 * rule, and every 8-byte key of an anonymous set it looks up (`socket cgroupv2 level 1 { "a", "b" }`).
 */
function cgroupIds(rules: readonly NftRule[], sets: readonly NftSet[]): Set<string> {
  const ids = new Set<string>();
  const add = (hex: string | undefined): void => {
    if (hex?.length === 16) ids.add(Buffer.from(hex, 'hex').readBigUInt64LE(0).toString());
  };
  for (const r of rules) {
    if (!r.expr.some((e: Expr) => e.name === 'socket' && 'key' in e && e.key === C.NFT_SOCKET_CGROUPV2)) continue;
    for (const e of r.expr) {
      if (e.name === 'cmp' && 'data' in e && typeof e.data === 'string') add(e.data);
      if (e.name !== 'lookup' || !('set' in e)) continue;
      const set = sets.find((s) => s.family === r.family && s.table === r.table && s.name === e.set && s.flags.includes('anonymous'));
      for (const el of set?.elements ?? []) add(el.key);
    }
  }
  return ids;
}

/**
 * The paths (relative to /sys/fs/cgroup) of cgroup ids, found as nft 1.0.6
 * finds them (its cgroupv2_get_path): depth first, entries in directory
 * order, the first entry whose inode (readdir's d_ino) is the id, file or
 * directory; directories and links to them are descended into. A mount
 * point's d_ino is the covered directory's, which stat cannot tell: it
 * never matches here. Ids not found are left out (nft prints the number).
 * Unreadable directories are skipped; the walk stops after
 * {@link CGROUP_WALK_MAX} entries.
 * @param ids cgroup ids, decimal
 * @param root the directory walked (tests)
 */
export function cgroupPaths(ids: ReadonlySet<string>, root = CGROUP_ROOT): Record<string, string> {
  const out: Record<string, string> = {};
  let left = ids.size;
  let seen = 0;
  const walk = (dir: string, dev: bigint): boolean => {
    let d: Dir;
    try {
      d = opendirSync(dir);
    } catch {
      return false;
    }
    try {
      for (let ent = d.readSync(); ent; ent = d.readSync()) {
        if (++seen > CGROUP_WALK_MAX) return true;
        const path = `${dir}/${ent.name}`;
        let st: BigIntStats;
        try {
          st = lstatSync(path, { bigint: true });
        } catch {
          continue;
        }
        const id = st.ino.toString();
        if (st.dev === dev && ids.has(id) && out[id] === undefined) {
          out[id] = path.slice(root.length + 1);
          if (--left === 0) return true;
        }
        try {
          if (st.isSymbolicLink() || st.dev !== dev) st = statSync(path, { bigint: true });
        } catch {
          continue;
        }
        if (st.isDirectory() && walk(path, st.dev)) return true;
      }
    } finally {
      d.closeSync();
    }
    return false;
  };
  try {
    if (left > 0) walk(root, statSync(root, { bigint: true }).dev);
  } catch {
    // no cgroup directory: every id prints as its number
  }
  return out;
}

/**
 * Flowtables (NFT_MSG_GETFLOWTABLE dump), by name only: synplug does not
 * print them, and names them as unprintable rather than leave them out.
 * ```c
 * // nf_tables.h: enum nft_flowtable_attributes
 * NFTA_FLOWTABLE_TABLE (NLA_STRING), NFTA_FLOWTABLE_NAME (NLA_STRING), NFTA_FLOWTABLE_HOOK (nested),
 * NFTA_FLOWTABLE_USE (NLA_U32), NFTA_FLOWTABLE_HANDLE (NLA_U64), NFTA_FLOWTABLE_FLAGS (NLA_U32)
 * ```
 * @throws {NetlinkError} the dump refused
 * @throws {NetlinkDecodeError} a malformed reply
 */
async function listFlowtables(conn: NetlinkConnection, options: { family?: string }): Promise<NftFlowtable[]> {
  const fam = options.family ? familyNumber(options.family) : C.NFPROTO_UNSPEC;
  const msgs = await conn.dumpAll({ type: nftType(C.NFT_MSG_GETFLOWTABLE), payload: encodeNfGenMsg(fam) });
  return msgs
    .filter((m) => m.type === nftType(C.NFT_MSG_NEWFLOWTABLE))
    .map((m) => {
      const l = parseAttributes(m.payload.subarray(4), attrsOffset(m));
      const handle = u64num(l, C.NFTA_FLOWTABLE_HANDLE);
      return {
        family: familyName(decodeNfGenMsg(m).family),
        table: l.str(C.NFTA_FLOWTABLE_TABLE) ?? '',
        name: l.str(C.NFTA_FLOWTABLE_NAME) ?? '',
        ...(handle !== undefined && { handle }),
      };
    });
}

/**
 * The names of the devices of the caller's network namespace, by index
 * (an RTM_GETLINK dump over a NETLINK_ROUTE socket), as nft resolves them
 * when it prints `iif`/`oif`. An empty record when they cannot be read.
 */
export async function deviceNames(): Promise<Record<number, string>> {
  const out: Record<number, string> = {};
  let route: NetlinkConnection | undefined;
  try {
    route = NetlinkConnection.open(NETLINK_ROUTE);
    const { RTM_GETLINK, RTM_NEWLINK } = await import('../netlink/route/constants.js');
    const { decodeLink } = await import('../netlink/route/link.js');
    const msgs = await route.dumpAll({ type: RTM_GETLINK, payload: Buffer.alloc(16) });
    for (const m of msgs) {
      if (m.type !== RTM_NEWLINK) continue;
      const l = decodeLink(m);
      if (l.ifname !== undefined) out[l.index] = l.ifname;
    }
  } catch (e) {
    // names are a nicety of printing: without them indexes print as numbers
    if (!(e instanceof SynplugError) && !(e instanceof NetlinkError)) throw e;
  } finally {
    route?.close();
  }
  return out;
}

/**
 * Read the ruleset (optionally one family). The generation id is read before
 * and after; if it moved (someone changed the ruleset meanwhile), the
 * listing is read again, up to 5 times. When a rule matches a device by
 * index, the devices' names are read too (`ifnames`); when one matches a
 * cgroup, its path (`cgroups`, {@link cgroupPaths}).
 * @returns tables, objects, chains, sets with `elements`, rules, in the kernel's order
 * @throws {UsageError} a bad family
 * @throws {NetlinkError} a dump refused (EPERM without CAP_NET_ADMIN...)
 * @throws {SynplugError} the ruleset kept changing
 * @throws {UsageError} a connection that is not NETLINK_NETFILTER, before anything is sent
 */
export async function listRuleset(conn: NetlinkConnection, options: { family?: string } = {}): Promise<NftRuleset & { genId: number }> {
  requireNetfilter(conn, 'listRuleset');
  for (let attempt = 1; attempt <= 5; attempt++) {
    const before = await getGenId(conn);
    // One dump at a time: the kernel runs one dump per socket (a second one while the
    // first is still being read is refused with EBUSY).
    const tables = await listTables(conn, options);
    const objects = await listObjects(conn, options);
    const chains = await listChains(conn, options);
    const sets = await listSets(conn, options);
    const rules = await listRules(conn, options);
    const flowtables = await listFlowtables(conn, options);
    for (const s of sets) {
      try {
        s.elements = await listSetElements(conn, { family: s.family, table: s.table, set: s.name });
      } catch (e) {
        // The set went away between the two dumps: the generation check below retries.
        if ((e as { code?: string }).code !== 'ENOENT') throw e;
      }
    }
    const after = await getGenId(conn);
    if (before === after) {
      const rs: NftRuleset & { genId: number } = { tables, objects, chains, sets, rules, genId: after };
      if (flowtables.length) rs.flowtables = flowtables;
      if (usesIfindex(rules, sets)) rs.ifnames = await deviceNames();
      const ids = cgroupIds(rules, sets);
      if (ids.size) rs.cgroups = cgroupPaths(ids);
      return rs;
    }
  }
  throw new SynplugError('the nftables ruleset kept changing while it was listed (5 tries); try again', 'kernel');
}
