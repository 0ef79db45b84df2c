/**
 * class operations over a NETLINK_ROUTE connection: `tc class add |
 * replace | change | del | show` (iproute2's tc_class.c). Requests are
 * built by request.ts; refusals are explained by explain.ts.
 *
 * @module
 */
import { RTM_NEWTCLASS, RTM_GETTCLASS } from '../netlink/route/constants.js';
import { decodeClassAt } from './decode.js';
import { checkSpecKeys } from './args.js';
import { collect, confirmDevice, ifindexOf, listIfindexOf, namesFor, requireRoute } from './device.js';
import { explainClass, explainList } from './explain.js';
import { handleOf } from './handle.js';
import { classRequest } from './request.js';
import { encodeTcmsg } from './tcmsg.js';
import type { ClassEntry, ClassSpec, EachEntry, ListOptions, TcConnection, TcOp } from './types.js';
import './register.js';

/** The keys of a {@link ClassSpec}. */
const CLASS_KEYS = ['dev', 'ifindex', 'parent', 'classid', 'kind', 'options'] as const;
/** The keys of the class and filter listings' options. */
export const PARENT_LIST_KEYS = ['dev', 'ifindex', 'stats', 'parent'] as const;

async function runClass(conn: TcConnection, op: TcOp, spec: ClassSpec): Promise<void> {
  const fn = `${op}Class`;
  requireRoute(conn, fn);
  checkSpecKeys(spec, CLASS_KEYS, fn);
  const ifindex = await ifindexOf(conn, spec);
  const req = classRequest(op, ifindex, spec);
  try {
    await conn.request(req);
  } catch (e) {
    throw explainClass(e, op, spec, req);
  }
}

/**
 * `tc class add`: create a class (e.g. htb: `{ kind: 'htb', parent: '1:', classid: '1:1', options: { rate: '10mbit' } }`).
 * @throws {UsageError} bad ids, unknown or bad options (nothing sent)
 * @throws {NetlinkError} "class 1:1 already exists on dev X; use change or replace"
 */
export function addClass<K extends string = string>(conn: TcConnection, spec: ClassSpec<K>): Promise<void> {
  return runClass(conn, 'add', spec);
}
/** `tc class replace`. @throws {UsageError} @throws {NetlinkError} */
export function replaceClass<K extends string = string>(conn: TcConnection, spec: ClassSpec<K>): Promise<void> {
  return runClass(conn, 'replace', spec);
}
/** `tc class change`. @throws {UsageError} @throws {NetlinkError} "no class 1:9 on dev X to change; use add" */
export function changeClass<K extends string = string>(conn: TcConnection, spec: ClassSpec<K>): Promise<void> {
  return runClass(conn, 'change', spec);
}
/** `tc class del`. @throws {UsageError} @throws {NetlinkError} "no class 1:9 on dev X" */
export function deleteClass<K extends string = string>(conn: TcConnection, spec: ClassSpec<K>): Promise<void> {
  return runClass(conn, 'delete', spec);
}

/**
 * `tc -s class show dev X [parent P]`: the classes of one device (the kernel needs a device).
 * @throws {UsageError} no device given, bad parent, `dev` and `ifindex` that disagree
 * @throws {NetlinkError} "device 'X' not found" (ENODEV), or the dump failed
 */
export function listClasses(conn: TcConnection, options: ListOptions & { parent?: string | number }): Promise<ClassEntry[]> {
  return collect((each) => eachClass(conn, options, each));
}

/**
 * {@link listClasses}, each entry handed to `each` as its datagram is read
 * (see `eachQdisc`).
 * @throws {UsageError} no device given, bad parent, `dev` and `ifindex` that disagree
 * @throws {NetlinkError} "device 'X' not found" (ENODEV), or the dump failed
 * @throws {NetlinkDecodeError} a malformed reply; and whatever `each` throws
 */
export async function eachClass(conn: TcConnection, options: ListOptions & { parent?: string | number }, each: EachEntry<ClassEntry>): Promise<void> {
  requireRoute(conn, 'listClasses');
  checkSpecKeys(options, PARENT_LIST_KEYS, 'listClasses');
  const parent = options.parent === undefined ? 0 : handleOf(options.parent, 'class parent');
  const ifindex = await listIfindexOf(conn, options);
  const opts = { dev: options.dev ?? (await namesFor(conn, options))(ifindex), stats: options.stats };
  let n = 0;
  const req = { type: RTM_GETTCLASS, payload: [encodeTcmsg({ ifindex, parent })] };
  try {
    // each class decoded where it lies in the datagram (no message object, no copy)
    await conn.dumpEach(
      req,
      (type, buf, start, end, base, attempt) => {
        if (type === RTM_NEWTCLASS) {
          n++;
          each(decodeClassAt(buf, start, end, base, opts), attempt);
        }
      },
      { inPlace: true },
    );
  } catch (e) {
    throw explainList(e, 'classes', options, ifindex);
  }
  if (n === 0) await confirmDevice(conn, options, ifindex);
}
