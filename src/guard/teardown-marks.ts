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
 * ## Whose: the state directory's mark
 *
 * A hold is set up, used and removed through one state directory. Its table's
 * comment ({@link holdTableComment}: the local plug hold's and the queue
 * hold's) and its IFB's alias ({@link ifbAlias}: the inbound hold's) name
 * the state directory whose setup made them. Through another directory (one
 * without a record, or with a setup.json copied from that one) nothing of
 * the hold is used, released or removed: setup refuses it (exit 7), plug
 * and protect find it different (exit 8, nothing held), check says so (12,
 * or 1 without a record), release refuses (exit 7, nothing released),
 * teardown keeps it and says whose it is. An object of an earlier synplug
 * (the mark without a state directory) is `different` until setup marks it
 * anew.
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
 * every kernel. Without the table comment the state directory's mark is not
 * read back either: the local plug hold and the queue hold are then told
 * apart from another directory's by the record alone (the directory's own,
 * read through its checked descriptor), so a setup.json copied from another
 * directory is taken at its word there. The inbound hold's mark is its
 * IFB's alias, which every kernel keeps: it holds on every kernel.
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
 * What a mark naming a state directory says (a table's comment, an IFB's
 * alias): the mark of the state directory whose setup made the object
 * (state-fs.ts's `stateDirMark`: 16 hex digits), and, in a queue hold's
 * table comment, the queue number its rules send to.
 */
export interface StateMarked {
  stateMark: string;
  queueNum?: number;
}

/** The tail every mark naming a state directory ends with: `; state <16 hex digits>`. */
const stateTail = (stateMark: string): string => `; state ${stateMark}`;
/** `[; queue N]; state <mark>`, the tail of {@link holdTableComment} (and, without the queue, of {@link ifbAlias}). */
const STATE_TAIL = /^(?:; queue (\d{1,5}))?; state ([0-9a-f]{16})$/;

/**
 * The comment of a hold's nftables table: {@link TABLE_COMMENT}, then (a
 * queue hold's) the queue number its rules send to, then the mark of the
 * state directory whose setup made it, e.g. `...; state 0123456789abcdef`
 * (the local plug hold's `table ip synplug`), `...; queue 4200; state
 * 0123456789abcdef` (a queue hold's). Another state directory's commands
 * thus know the table for another's: setup refuses it (and a queue hold's
 * queue number), teardown keeps it, plug, protect and check find it
 * different, release refuses it, and a directory without a record never
 * takes it for an interrupted setup's (issue #19). At most 97 bytes (a
 * comment takes 127).
 *
 * A table with the plain {@link TABLE_COMMENT} was made by an earlier
 * synplug: synplug's, but no state directory's. It is `different` (check
 * 12, plug and protect 8) until `synplug setup` marks it anew; teardown
 * through a directory that records it removes it; release releases it.
 * @param stateMark the state directory's mark
 * @param queueNum a queue hold's queue number
 */
export function holdTableComment(stateMark: string, queueNum?: number): string {
  return `${TABLE_COMMENT}${queueNum === undefined ? '' : `; queue ${queueNum}`}${stateTail(stateMark)}`;
}

/** What a hold's table comment ({@link holdTableComment}) says; undefined for any other comment (the plain {@link TABLE_COMMENT} too). */
export function holdTableMark(comment: string | undefined): StateMarked | undefined {
  if (!comment?.startsWith(TABLE_COMMENT)) return undefined;
  const m = STATE_TAIL.exec(comment.slice(TABLE_COMMENT.length));
  if (!m) return undefined;
  return { stateMark: m[2], ...(m[1] !== undefined && { queueNum: Number(m[1]) }) };
}

/** A queue hold's table comment: {@link holdTableComment} with its queue number. */
export function queueTableComment(queueNum: number, stateMark: string): string {
  return holdTableComment(stateMark, queueNum);
}

/** What a queue hold's table comment ({@link queueTableComment}) says; undefined for any other comment (a plug hold's too). */
export function queueTableMark(comment: string | undefined): { queueNum: number; stateMark: string } | undefined {
  const m = holdTableMark(comment);
  return m?.queueNum === undefined ? undefined : { queueNum: m.queueNum, stateMark: m.stateMark };
}

/** The start of the alias (IFLA_IFALIAS) synplug gives the IFB of an inbound hold: how a later command recognises one. */
export const IFB_ALIAS_PREFIX = 'synplug inbound hold of ';

/**
 * The alias of an inbound hold's IFB: `synplug inbound hold of DEV; state
 * <mark>`, the mark of the state directory whose setup made it, read back
 * on every kernel (IFALIASZ is 256 bytes; a device name has no blank, so
 * the tail is never part of DEV). An alias without the tail
 * (`synplug inbound hold of DEV`) was set by an earlier synplug: the IFB is
 * `different` until `synplug setup` marks it anew (in place: the alias
 * changes, nothing else).
 * @param dev the device whose clients the IFB holds
 * @param stateMark the state directory's mark
 */
export function ifbAlias(dev: string, stateMark: string): string {
  return `${IFB_ALIAS_PREFIX}${dev}${stateTail(stateMark)}`;
}

/**
 * What an IFB's alias ({@link ifbAlias}) says: the device, and the state
 * directory's mark (absent: an earlier synplug's alias); undefined for any
 * other alias.
 */
export function ifbAliasMark(alias: string | undefined): { dev: string; stateMark?: string } | undefined {
  if (!alias?.startsWith(IFB_ALIAS_PREFIX)) return undefined;
  const m = /^(\S+?)((?:; .*)?)$/.exec(alias.slice(IFB_ALIAS_PREFIX.length));
  if (!m) return undefined;
  if (m[2] === '') return { dev: m[1] };
  const tail = STATE_TAIL.exec(m[2]);
  return tail && tail[1] === undefined ? { dev: m[1], stateMark: tail[2] } : undefined;
}

/**
 * Whose an object carrying synplug's mark is, by the state directory mark
 * on it: `ours`, this directory's; `other`, another state directory's
 * (never used, released or removed through this one); `earlier`, made by
 * an earlier synplug, with synplug's mark but no state directory's (see
 * {@link holdTableComment} for what each command does with it).
 * @param found the mark on the object (its stateMark undefined: none)
 * @param mine this state directory's mark (undefined: the directory does not exist, so the object is not its)
 */
export function ownerOfMark(found: { stateMark?: string }, mine: string | undefined): 'ours' | 'other' | 'earlier' {
  if (found.stateMark === undefined) return 'earlier';
  return found.stateMark === mine ? 'ours' : 'other';
}

/**
 * What `check`, `teardown` and the refusals say of an object another state
 * directory's mark is on, in the queue hold's words: whose, and what to do.
 * @param hold which hold (`local hold`, `inbound hold of eth0`)
 * @param where what names the mark (`its table's comment`, `its IFB's alias`)
 */
export function otherDirectoryDetail(hold: string, where: string, theirs: string, mine: string | undefined): string {
  return `another state directory's ${hold} (${where} names state directory mark ${theirs}, not this directory's${mine ? ` ${mine}` : ''}): use that directory's --state-dir for it`;
}

/** What `check` says of a table or IFB an earlier synplug made (synplug's mark, no state directory's). */
export const EARLIER_MARK_DETAIL = "made by an earlier synplug, without its state directory's mark: 'synplug setup' marks it anew";

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
 * Whether a table carries synplug's comment (a hold's with its state
 * directory, and a queue hold's queue number: {@link holdTableComment}; the report's,
 * {@link REPORT_TABLE_COMMENT}); on a kernel before 5.10 (no
 * table user data), undefined: the caller falls back to its older judgement.
 */
export function tableIsMarked(t: { comment?: string }, releaseText?: string): boolean | undefined {
  if (!kernelKeepsTableComment(releaseText)) return undefined;
  return t.comment === TABLE_COMMENT || t.comment === REPORT_TABLE_COMMENT || holdTableMark(t.comment) !== undefined;
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
