/**
 * qdisc operations over a NETLINK_ROUTE connection: `tc qdisc add |
 * replace | change | del | show` (iproute2's tc_qdisc.c). Requests are
 * built by request.ts; refusals are explained by explain.ts.
 *
 * @module
 */
import { RTM_NEWQDISC, RTM_GETQDISC } from '../netlink/route/constants.js';
import type { NetlinkMessage } from '../netlink/message.js';
import { decodeQdisc } from './decode.js';
import { checkSpecKeys } from './args.js';
import { collect, confirmDevice, ifindexOf, listIfindexOf, namesFor, requireRoute } from './device.js';
import { explainList, explainQdisc } from './explain.js';
import { qdiscRequest } from './request.js';
import { encodeTcmsg } from './tcmsg.js';
import type { EachEntry, ListOptions, QdiscEntry, QdiscSpec, TcConnection, TcOp } from './types.js';
import './register.js';

/** The keys of a {@link QdiscSpec}. */
const QDISC_KEYS = ['dev', 'ifindex', 'parent', 'handle', 'kind', 'options'] as const;
/** The keys of {@link ListOptions}. */
export const LIST_KEYS = ['dev', 'ifindex', 'stats'] as const;

/** The public function of each operation, for error messages. */
const QDISC_FN: Readonly<Record<TcOp, string>> = { add: 'addQdisc', replace: 'replaceQdisc', change: 'changeQdisc', delete: 'deleteQdisc' };
const toVoid = (): void => {};

/*
 * Not an async function: with the device given by index, the request is
 * built and sent synchronously and the ack (read inside send) settles the
 * returned promise through one reaction; every error, thrown or not, still
 * arrives as a rejection.
 */
function runQdisc(conn: TcConnection, op: TcOp, spec: QdiscSpec): Promise<void> {
  let ifindex: number | Promise<number>;
  try {
    const fn = QDISC_FN[op];
    requireRoute(conn, fn);
    checkSpecKeys(spec, QDISC_KEYS, fn);
    ifindex = ifindexOf(conn, spec);
    if (typeof ifindex === 'number') return sendQdisc(conn, op, ifindex, spec);
  } catch (e) {
    return Promise.reject(e);
  }
  return ifindex.then((i) => sendQdisc(conn, op, i, spec));
}

/** Build and send; a refusal is explained (explain.ts). @throws {UsageError} the spec cannot be encoded (nothing sent) */
function sendQdisc(conn: TcConnection, op: TcOp, ifindex: number, spec: QdiscSpec): Promise<void> {
  const req = qdiscRequest(op, ifindex, spec);
  return conn.request(req).then(toVoid, async (e: unknown) => {
    throw await explainQdisc(conn, e, op, spec, req);
  });
}

/**
 * `tc qdisc add`: create a qdisc; fails if one with that handle exists or the
 * parent already has one (NLM_F_CREATE | NLM_F_EXCL).
 * @param spec device (`dev` or `ifindex`), kind, parent, handle, options
 * @throws {UsageError} bad handles/options (nothing sent)
 * @throws {KindUnavailableError} the kernel lacks the kind, e.g. "qdisc kind 'prio' is not available in this kernel (module sch_prio)"
 * @throws {NetlinkError} e.g. "device 'eth9' not found",
 *   "a qdisc with handle 1: already exists on dev lo (kind 'prio'); use replace or change"
 */
export function addQdisc<K extends string = string>(conn: TcConnection, spec: QdiscSpec<K>): Promise<void> {
  return runQdisc(conn, 'add', spec);
}

/**
 * `tc qdisc replace`: create, or replace what sits at the parent (NLM_F_CREATE | NLM_F_REPLACE).
 * @throws {UsageError} @throws {KindUnavailableError} @throws {NetlinkError}
 */
export function replaceQdisc<K extends string = string>(conn: TcConnection, spec: QdiscSpec<K>): Promise<void> {
  return runQdisc(conn, 'replace', spec);
}

/**
 * `tc qdisc change`: change the options of an existing qdisc (no create flags).
 * @throws {UsageError} @throws {NetlinkError} "no qdisc with handle 1: at the root on dev X to change; use add or replace"
 */
export function changeQdisc<K extends string = string>(conn: TcConnection, spec: QdiscSpec<K>): Promise<void> {
  return runQdisc(conn, 'change', spec);
}

/**
 * `tc qdisc del`: delete the qdisc at `parent` (and `handle`, when given).
 * @throws {UsageError} @throws {NetlinkError} "no qdisc with handle 99: under parent 1:3 on dev lo"
 */
export function deleteQdisc<K extends string = string>(conn: TcConnection, spec: QdiscSpec<K>): Promise<void> {
  return runQdisc(conn, 'delete', spec);
}

/**
 * `tc -s qdisc show [dev X]`: every qdisc (of one device when given), with stats.
 * @param options `dev` and/or `ifindex` (both only for the same device), `stats`
 * @returns entries in the kernel's order; `dev` filled in
 * @throws {UsageError} `dev` and `ifindex` name different devices
 * @throws {NetlinkError} "device 'X' not found" / "device with index N not found" (ENODEV), or the dump failed
 * @throws {NetlinkDecodeError} a malformed reply
 */
export function listQdiscs(conn: TcConnection, options: ListOptions = {}): Promise<QdiscEntry[]> {
  return collect((each) => eachQdisc(conn, options, each));
}

/**
 * {@link listQdiscs}, each entry handed to `each` as its datagram is read
 * instead of collected: a large listing is decoded while the kernel is still
 * sending it, and neither its messages nor (when `each` prints and drops
 * them) its entries need be held at once. Entries of an inconsistent dump
 * come with `attempt` 1 and are followed by the whole dump again
 * ({@link EachEntry}). Without `dev`, the device names come from a link
 * dump after the qdisc dump (as tc sends them), so the entries are handed
 * over once both are read.
 * @throws {UsageError} `dev` and `ifindex` name different devices
 * @throws {NetlinkError} "device 'X' not found" (ENODEV), or the dump failed
 * @throws {NetlinkDecodeError} a malformed reply (after the dump was read to its end)
 * @throws whatever `each` throws (after the dump was read to its end)
 */
export async function eachQdisc(conn: TcConnection, options: ListOptions, each: EachEntry<QdiscEntry>): Promise<void> {
  requireRoute(conn, 'listQdiscs');
  checkSpecKeys(options, LIST_KEYS, 'listQdiscs');
  const ifindex = await listIfindexOf(conn, options, true);
  const req = { type: RTM_GETQDISC, payload: [encodeTcmsg({ ifindex })] };
  const opts = { dev: options.dev, stats: options.stats };
  const mine = (m: NetlinkMessage) => m.type === RTM_NEWQDISC && (!ifindex || (m.payload.length >= 8 && m.payload.readUInt32LE(4) === ifindex));
  let n = 0;
  try {
    if (options.dev !== undefined) {
      await conn.dumpEach(req, (m, attempt) => {
        if (mine(m)) {
          n++;
          each(decodeQdisc(m, opts), attempt);
        }
      });
    } else {
      // Device names come from a link dump, sent after the qdisc dump as tc does.
      const msgs = await conn.dumpAll(req);
      const names = await namesFor(conn, options);
      for (const m of msgs) {
        if (!mine(m)) continue;
        n++;
        opts.dev = names(m.payload.length >= 8 ? m.payload.readUInt32LE(4) : 0);
        each(decodeQdisc(m, opts), 1);
      }
    }
  } catch (e) {
    throw explainList(e, 'qdiscs', options, ifindex);
  }
  if (n === 0) await confirmDevice(conn, options, ifindex);
}
