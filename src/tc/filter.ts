/**
 * filter operations over a NETLINK_ROUTE connection: `tc filter add |
 * replace | change | del | show` (iproute2's tc_filter.c), at any parent:
 * a qdisc or class ("1:", "1:4"), "root", the clsact hooks "ingress"
 * (ffff:fff2, which the ingress qdisc takes too) and "egress" (ffff:fff3),
 * or the ingress qdisc's "ffff:" / "ffff:fff1". Classifiers are found in
 * the kind registry (filters/); requests are built by request.ts and
 * refusals explained by explain.ts.
 *
 * @module
 */
import { RTM_NEWTFILTER, RTM_GETTFILTER } from '../netlink/route/constants.js';
import { decodeFilter } from './decode.js';
import { checkSpecKeys } from './args.js';
import { PARENT_LIST_KEYS } from './class.js';
import { collect, confirmDevice, ifindexOf, listIfindexOf, namesFor, requireRoute } from './device.js';
import { explainFilter, explainList } from './explain.js';
import { filterParentOf } from './handle.js';
import { filterRequest } from './request.js';
import { encodeTcmsg } from './tcmsg.js';
import type { EachEntry, FilterEntry, FilterSpec, ListOptions, TcConnection, TcOp } from './types.js';
import './register.js';

/** The keys of a {@link FilterSpec}. */
const FILTER_KEYS = ['dev', 'ifindex', 'parent', 'protocol', 'pref', 'prio', 'handle', 'chain', 'kind', 'options'] as const;

async function runFilter(conn: TcConnection, op: TcOp, spec: FilterSpec): Promise<void> {
  const fn = `${op}Filter`;
  requireRoute(conn, fn);
  checkSpecKeys(spec, FILTER_KEYS, fn);
  const ifindex = await ifindexOf(conn, spec);
  const req = filterRequest(op, ifindex, spec);
  try {
    await conn.request(req);
  } catch (e) {
    throw await explainFilter(conn, e, op, spec, req, spec.handle);
  }
}

/**
 * `tc filter add`: e.g. fw `{ dev: 'lo', parent: '1:', protocol: 'ip', pref: 1, kind: 'fw', handle: 1, options: { classid: '1:4' } }`,
 * or u32 on a clsact hook `{ dev, parent: 'ingress', protocol: 'ip', prio: 1, kind: 'u32', options: {...} }`.
 * @throws {UsageError} bad parent, pref, protocol, handle or options (nothing sent)
 * @throws {KindUnavailableError} "filter kind 'fw' is not available in this kernel (module cls_fw)"
 * @throws {NetlinkError} "... already exists; use replace", "cannot add filter ...: no qdisc 5: on dev X"
 */
export function addFilter<K extends string = string>(conn: TcConnection, spec: FilterSpec<K>): Promise<void> {
  return runFilter(conn, 'add', spec);
}
/** `tc filter replace`. @throws {UsageError} @throws {KindUnavailableError} @throws {NetlinkError} */
export function replaceFilter<K extends string = string>(conn: TcConnection, spec: FilterSpec<K>): Promise<void> {
  return runFilter(conn, 'replace', spec);
}
/** `tc filter change`. @throws {UsageError} @throws {NetlinkError} */
export function changeFilter<K extends string = string>(conn: TcConnection, spec: FilterSpec<K>): Promise<void> {
  return runFilter(conn, 'change', spec);
}
/**
 * `tc filter del`: with pref (and protocol, handle, kind) deletes one filter;
 * with only the parent, every filter there.
 * @throws {UsageError} @throws {NetlinkError} "no filter 'fw' pref 1 under 1: on dev lo"
 */
export function deleteFilter<K extends string = string>(conn: TcConnection, spec: FilterSpec<K>): Promise<void> {
  return runFilter(conn, 'delete', spec);
}

/**
 * `tc filter show dev X [parent P]`: the filters of one device, of every
 * parent or of one (same parent texts as {@link addFilter}).
 * @throws {UsageError} no device given, bad parent, `dev` and `ifindex` that disagree
 * @throws {NetlinkError} "device 'X' not found" (ENODEV), or the dump failed
 */
export function listFilters(conn: TcConnection, options: ListOptions & { parent?: string | number }): Promise<FilterEntry[]> {
  return collect((each) => eachFilter(conn, options, each));
}

/**
 * {@link listFilters}, each entry handed to `each` as its datagram is read
 * (see `eachQdisc`).
 * @throws {UsageError} no device given, bad parent, `dev` and `ifindex` that disagree
 * @throws {NetlinkError} "device 'X' not found" (ENODEV), or the dump failed
 * @throws {NetlinkDecodeError} a malformed reply; and whatever `each` throws
 */
export async function eachFilter(conn: TcConnection, options: ListOptions & { parent?: string | number }, each: EachEntry<FilterEntry>): Promise<void> {
  requireRoute(conn, 'listFilters');
  checkSpecKeys(options, PARENT_LIST_KEYS, 'listFilters');
  const parent = options.parent === undefined ? 0 : filterParentOf(options.parent);
  const ifindex = await listIfindexOf(conn, options);
  const opts = { dev: options.dev ?? (await namesFor(conn, options))(ifindex), stats: options.stats };
  let n = 0;
  try {
    await conn.dumpEach({ type: RTM_GETTFILTER, payload: [encodeTcmsg({ ifindex, parent })] }, (m, attempt) => {
      if (m.type === RTM_NEWTFILTER) {
        n++;
        each(decodeFilter(m, opts), attempt);
      }
    });
  } catch (e) {
    throw explainList(e, 'filters', options, ifindex);
  }
  if (n === 0) await confirmDevice(conn, options, ifindex);
}
