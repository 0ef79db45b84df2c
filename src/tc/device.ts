/**
 * The device of a tc operation: given by name (`dev`, one RTM_GETLINK to
 * resolve), by index (`ifindex`, used as is), or both (they must agree).
 * Shared by the qdisc, class, filter and plug operations.
 *
 * @module
 */
import { NetlinkError, UsageError } from '../netlink/errors.js';
import { NETLINK_ROUTE } from '../netlink/message.js';
import { protocolInfo } from '../netlink/protocols.js';
import { getLinkRequest, listRawLinks, resolveIfindex, validateIndex } from '../netlink/route/link.js';
import type { DeviceRef, TcConnection } from './types.js';

/** Names of the other netlink protocols a connection is commonly opened with (linux/netlink.h). */
const NETLINK_NAMES: Record<number, string> = { 4: 'NETLINK_SOCK_DIAG', 9: 'NETLINK_AUDIT', 12: 'NETLINK_NETFILTER', 16: 'NETLINK_GENERIC' };

/**
 * Refuse a connection of another netlink protocol before anything is sent
 * (a sock_diag or nftables connection would answer tc requests with a bare
 * EINVAL or EOPNOTSUPP). A connection without a `protocol` field (a
 * hand-made {@link TcConnection}) is taken as it is.
 * @param fn the public function, for the message (e.g. `"listQdiscs"`)
 * @throws {UsageError} naming the function, NETLINK_ROUTE and the protocol given
 */
export function requireRoute(conn: TcConnection, fn: string): void {
  if (conn === null || typeof conn !== 'object')
    throw new UsageError(`${fn} needs a NETLINK_ROUTE connection (protocol ${NETLINK_ROUTE}), not ${conn === null ? 'null' : typeof conn}`);
  const p = (conn as { protocol?: unknown }).protocol;
  if (p === undefined || p === NETLINK_ROUTE) return;
  const name = typeof p === 'number' ? (protocolInfo(p)?.name ?? NETLINK_NAMES[p]) : undefined;
  throw new UsageError(
    `${fn} needs a NETLINK_ROUTE connection (protocol ${NETLINK_ROUTE}), not ${name ? `a ${name} connection (protocol ${p})` : `a connection of protocol ${String(p)}`}`,
  );
}

/**
 * The device's index for a change: `ifindex` as it is (checked, no lookup;
 * the kernel answers ENODEV when it does not exist), else the lookup of the
 * name (RTM_GETLINK). With both, the name is looked up and must have that index.
 * @returns the index, synchronously when no lookup is needed
 * @throws {UsageError} an invalid name or index (a `dev` that is not a string too), no device given, or a name and an index that disagree
 * @throws {NetlinkError} "device 'X' not found" (ENODEV), or the lookup failed
 */
export function ifindexOf(conn: TcConnection, d: DeviceRef): number | Promise<number> {
  if (d.dev !== undefined && typeof d.dev !== 'string')
    throw new UsageError(`dev must be a device name (a string; give an index as ifindex), not ${d.dev === null ? 'null' : typeof d.dev} ${String(d.dev)}`);
  if (d.dev === undefined) {
    if (d.ifindex === undefined) throw new UsageError('give a device (dev or ifindex)');
    validateIndex(d.ifindex);
    return d.ifindex;
  }
  if (d.ifindex === undefined) return resolveIfindex(conn, d.dev);
  validateIndex(d.ifindex);
  return bothAgree(conn, d.dev, d.ifindex);
}

async function bothAgree(conn: TcConnection, dev: string, ifindex: number): Promise<number> {
  const actual = await resolveIfindex(conn, dev);
  if (actual !== ifindex) {
    throw new UsageError(`dev '${dev}' has index ${actual}, not ${ifindex}: give the device by name or by index, or both for the same device`);
  }
  return actual;
}

/**
 * The device's index for a listing: as {@link ifindexOf}, or 0 ("every
 * device") when neither is given and `optional`.
 * @throws {UsageError} as {@link ifindexOf}
 * @throws {NetlinkError} "device 'X' not found" (ENODEV)
 */
export async function listIfindexOf(conn: TcConnection, d: DeviceRef, optional = false): Promise<number> {
  if (optional && d.dev === undefined && d.ifindex === undefined) return 0;
  return ifindexOf(conn, d);
}

/**
 * After a listing by index alone came back empty: the kernel answers a
 * dump for a device index that does not exist with nothing, so check that
 * the device exists (one RTM_GETLINK). A missing index is then ENODEV, as a
 * missing name is. Nothing is sent when the device was named (its lookup
 * already proved it) or no device was asked for.
 * @throws {NetlinkError} "device with index N not found" (ENODEV), or the lookup failed
 */
export async function confirmDevice(conn: TcConnection, d: DeviceRef, ifindex: number): Promise<void> {
  if (d.dev !== undefined || ifindex === 0) return;
  try {
    await conn.request(getLinkRequest(ifindex));
  } catch (e) {
    throw e instanceof NetlinkError ? deviceError(e, d, ifindex) : e;
  }
}

/** The device as sentences name it: `dev eth0`, or `device index 7`. */
export function devText(d: DeviceRef, ifindex: number): string {
  return d.dev !== undefined ? `dev ${d.dev}` : `device index ${ifindex}`;
}

/**
 * The kernel's ENODEV (or a failed lookup) as "device 'X' not found" /
 * "device with index N not found".
 * @returns a copy of `e` with that sentence
 */
export function deviceError(e: NetlinkError, d: DeviceRef, ifindex: number): NetlinkError {
  const which = d.dev !== undefined ? `'${d.dev}'` : `with index ${ifindex}`;
  if (e.code === 'ENODEV') return e.withMessage(`device ${which} not found`);
  return e.withMessage(`looking up device ${which} failed: ${e.code}`);
}

/**
 * A function from device index to name: the given name when the caller
 * named the device, else one link dump (names unknown when it fails).
 */
export async function namesFor(conn: TcConnection, d: DeviceRef): Promise<(i: number) => string | undefined> {
  if (d.dev !== undefined) return () => d.dev;
  try {
    const links = await listRawLinks(conn);
    const m = new Map(links.map((l) => [l.index, l.ifname]));
    return (i) => m.get(i);
  } catch {
    return () => undefined;
  }
}

/** Collect an each* listing into an array, keeping only the last (consistent) attempt. */
export async function collect<E>(run: (each: (e: E, attempt: number) => void) => Promise<void>): Promise<E[]> {
  let out: E[] = [];
  let at = 1;
  await run((e, attempt) => {
    if (attempt !== at) {
      out = [];
      at = attempt;
    }
    out.push(e);
  });
  return out;
}
