/**
 * The marks synplug puts on what setup makes, so that teardown removes only
 * what carries one (issue #19, deliverable 3): a record alone never decides a
 * removal, since anyone who can write a record could then name what root
 * deletes.
 *
 * - an nftables table of synplug's carries the comment {@link TABLE_COMMENT}
 *   (NFTA_TABLE_USERDATA, NFTNL_UDATA_TABLE_COMMENT; Linux 5.10+). A table of
 *   the same name without it (made by hand, or by an older synplug) is not
 *   removed by teardown; setup recreates it with the comment.
 * - an address setup added carries the address protocol
 *   {@link ADDRESS_PROTO} (IFA_PROTO; Linux 5.18+), as `ip addr add ... proto 83`
 *   sets it. Teardown removes an address only if setup recorded adding it AND
 *   it carries that protocol.
 * - an IFB of the inbound hold carries its alias (`synplug inbound hold of DEV`).
 *
 * ## Older kernels (the documented fallback)
 *
 * A kernel before 5.10 keeps no table comment, one before 5.18 no address
 * protocol (it ignores both attributes). There, the mark cannot be read back,
 * and teardown falls back to the record alone, as read from the checked
 * state directory of the namespace it names (state-fs.ts, netns cookie): a
 * table only when it holds exactly synplug's rule or setup recorded it; an
 * address only when setup recorded adding it. Records naming what setup
 * refuses (a loopback address, a table other than synplug's) are refused on
 * every kernel.
 *
 * @module
 */
import { release } from 'node:os';
import { NetlinkError } from '../netlink/errors.js';

/** The comment of synplug's nftables tables (`nft list table ip synplug` prints it). */
export const TABLE_COMMENT = 'synplug: made by synplug setup, removed by synplug teardown';

/**
 * The comment of the reload report's table (`inet synplug_report`, report.ts),
 * which the first protect makes, not setup. A report table an earlier
 * synplug made carries {@link TABLE_COMMENT}: marked too.
 */
export const REPORT_TABLE_COMMENT = "synplug: made by synplug protect (the reload report's RST counters), removed by synplug teardown";

/**
 * The comment of a queue hold's table (queue.ts): {@link TABLE_COMMENT},
 * then the queue number its rules send to and the mark of the state
 * directory whose setup made it (state-fs.ts's `stateDirMark`), e.g.
 * `...; queue 4200; state 0123456789abcdef`. Another state directory's
 * commands thus know the table, and its queue number, for another's: setup
 * refuses it (the same table or the same queue number), teardown keeps it,
 * and a directory without a record never takes it for an interrupted
 * setup's (issue #19, MA1-MA3). At most 97 bytes (a comment takes 127).
 */
export function queueTableComment(queueNum: number, stateMark: string): string {
  return `${TABLE_COMMENT}; queue ${queueNum}; state ${stateMark}`;
}

/** What a queue hold's table comment ({@link queueTableComment}) says; undefined for any other comment. */
export function queueTableMark(comment: string | undefined): { queueNum: number; stateMark: string } | undefined {
  const m = comment === undefined ? null : /^; queue (\d{1,5}); state ([0-9a-f]{16})$/.exec(comment.slice(TABLE_COMMENT.length));
  if (!comment?.startsWith(TABLE_COMMENT) || !m) return undefined;
  return { queueNum: Number(m[1]), stateMark: m[2] };
}

/**
 * The address protocol (IFA_PROTO, u8) of an address synplug's setup added;
 * 83 is ASCII 'S'. iproute2 names 0-3 (unspec, kernel_lo, kernel_ra,
 * kernel_ll); `ip -j addr` prints this one as its number, "83".
 */
export const ADDRESS_PROTO = 83;

/**
 * Whether the running kernel is at least `major.minor` (from uname's release, e.g. `6.18.0-1-amd64`).
 * @param releaseText the release to judge (default: this kernel's)
 */
export function kernelAtLeast(major: number, minor: number, releaseText: string = release()): boolean {
  const m = /^(\d+)\.(\d+)/.exec(releaseText);
  if (!m) return true; // an unparsable release: trust the marks (the strict side)
  const [maj, min] = [Number(m[1]), Number(m[2])];
  return maj > major || (maj === major && min >= minor);
}

/** The kernel keeps a table's comment (NFTA_TABLE_USERDATA: Linux 5.10+). */
export function kernelKeepsTableComment(releaseText?: string): boolean {
  return kernelAtLeast(5, 10, releaseText);
}

/** The kernel keeps an address's protocol (IFA_PROTO: Linux 5.18+). */
export function kernelKeepsAddressProto(releaseText?: string): boolean {
  return kernelAtLeast(5, 18, releaseText);
}

/**
 * Whether a listed address carries synplug's mark (`protocol` as decodeAddress
 * names it: the number as text for one iproute2 does not name); on a kernel
 * before 5.18 (no IFA_PROTO), true: the record alone decides.
 */
export function addressIsMarked(a: { protocol?: string }, releaseText?: string): boolean {
  return !kernelKeepsAddressProto(releaseText) || a.protocol === String(ADDRESS_PROTO);
}

/**
 * Whether a listed address provably carries synplug's mark: the kernel keeps
 * the protocol (5.18+) and it is {@link ADDRESS_PROTO}. Setup takes such an
 * address, found present, for one an earlier setup added and did not record
 * (a setup killed between adding it and writing the record); on an older
 * kernel never (a user's own address would be taken for synplug's).
 */
export function addressCarriesMark(a: { protocol?: string } | undefined, releaseText?: string): boolean {
  return a !== undefined && kernelKeepsAddressProto(releaseText) && a.protocol === String(ADDRESS_PROTO);
}

/**
 * Whether a table carries synplug's comment (a queue hold's with its queue
 * number and state directory too: {@link queueTableComment}; the report's,
 * {@link REPORT_TABLE_COMMENT}); on a kernel before 5.10 (no
 * table user data), undefined: the caller falls back to its older judgement.
 */
export function tableIsMarked(t: { comment?: string }, releaseText?: string): boolean | undefined {
  if (!kernelKeepsTableComment(releaseText)) return undefined;
  return t.comment === TABLE_COMMENT || t.comment === REPORT_TABLE_COMMENT || queueTableMark(t.comment) !== undefined;
}

/**
 * Remove one of synplug's own pieces (a table, a chain) that a teardown saw:
 * when it is gone by the time the removal reaches the kernel (ENOENT: another
 * teardown running at the same moment removed it), that is done, not an error.
 * @param remove the removal (one batch)
 * @returns true when this call removed it, false when it was already gone
 * @throws {NetlinkError} any other refusal
 */
export async function removeIfThere(remove: () => Promise<unknown>): Promise<boolean> {
  try {
    await remove();
    return true;
  } catch (e) {
    if (e instanceof NetlinkError && e.code === 'ENOENT') return false;
    throw e;
  }
}
