/**
 * The plug qdisc's verbs (sch_plug, see `kinds/plug.ts` for its options):
 * buffer, release one, release indefinitely, set the limit. Each is
 * RTM_NEWQDISC *without* NLM_F_CREATE/NLM_F_EXCL (a change of an existing
 * plug), with the same handle and parent, kind "plug" and a `struct
 * tc_plug_qopt` in TCA_OPTIONS (DESIGN §4). The guard's holds use them.
 *
 * @module
 */
import { str } from '../netlink/attributes.js';
import { UsageError } from '../netlink/errors.js';
import { RTM_NEWQDISC } from '../netlink/route/constants.js';
import { checkSpecKeys } from './args.js';
import { TCA_KIND, TCQ_PLUG_BUFFER, TCQ_PLUG_LIMIT, TCQ_PLUG_RELEASE_INDEFINITE, TCQ_PLUG_RELEASE_ONE } from './constants.js';
import { ifindexOf, requireRoute } from './device.js';
import { explainQdisc } from './explain.js';
import { handleOf, qdiscHandleOf } from './handle.js';
import { encodePlugQopt, PLUG_MODULE } from './kinds/plug.js';
import { encodeTcmsg } from './tcmsg.js';
import type { PlugRef, TcConnection, TcRequest } from './types.js';
import { parseSize } from './units.js';

/**
 * Build a plug verb: RTM_NEWQDISC with no create flags, kind "plug" and a
 * `struct tc_plug_qopt` in TCA_OPTIONS (see DESIGN §4; the qdisc must exist).
 * @param ifindex device index (tcm_ifindex)
 * @param parent the plug's parent, u32 (tcm_parent)
 * @param handle the plug's handle, u32 (tcm_handle)
 * @param action TCQ_PLUG_* number
 * @param limit bytes, for TCQ_PLUG_LIMIT
 */
export function plugRequest(ifindex: number, parent: number, handle: number, action: number, limit = 0): TcRequest {
  return {
    type: RTM_NEWQDISC,
    flags: 0,
    payload: [encodeTcmsg({ ifindex, handle, parent }), str(TCA_KIND, 'plug'), encodePlugQopt(action, limit)],
    ifindex,
    handle,
    parent,
    info: 0,
    kind: 'plug',
    module: PLUG_MODULE,
  };
}

async function plugVerb(
  conn: TcConnection,
  ref: PlugRef,
  action: number,
  limit = 0,
  fn = 'plug',
  keys: readonly string[] = ['dev', 'ifindex', 'parent', 'handle'],
): Promise<void> {
  requireRoute(conn, fn);
  checkSpecKeys(ref, keys, fn);
  const ifindex = await ifindexOf(conn, ref);
  const req = plugRequest(ifindex, handleOf(ref.parent, 'plug parent'), qdiscHandleOf(ref.handle, 'plug handle'), action, limit);
  try {
    await conn.request(req);
  } catch (e) {
    throw await explainQdisc(conn, e, 'plug', ref, req);
  }
}

/**
 * Start buffering: packets wait in the plug (TCQ_PLUG_BUFFER).
 * @param ref the plug: device, parent ("1:4"), handle ("40:")
 * @throws {UsageError} bad handles
 * @throws {NetlinkError} "no qdisc with handle 40: under parent 1:4 on dev lo to change (create the plug qdisc first)"
 */
export function plugBuffer(conn: TcConnection, ref: PlugRef): Promise<void> {
  return plugVerb(conn, ref, TCQ_PLUG_BUFFER, 0, 'plugBuffer');
}

/**
 * Release the packets buffered before the last buffer command (TCQ_PLUG_RELEASE_ONE).
 * @throws {UsageError} @throws {NetlinkError} as {@link plugBuffer}
 */
export function plugReleaseOne(conn: TcConnection, ref: PlugRef): Promise<void> {
  return plugVerb(conn, ref, TCQ_PLUG_RELEASE_ONE, 0, 'plugReleaseOne');
}

/**
 * Release everything and stop buffering until the next buffer command
 * (TCQ_PLUG_RELEASE_INDEFINITE); always safe to send.
 * @throws {UsageError} @throws {NetlinkError} as {@link plugBuffer}
 */
export function plugReleaseIndefinite(conn: TcConnection, ref: PlugRef): Promise<void> {
  return plugVerb(conn, ref, TCQ_PLUG_RELEASE_INDEFINITE, 0, 'plugReleaseIndefinite');
}

/**
 * Set the plug's queue limit (TCQ_PLUG_LIMIT).
 * @param ref the plug, and `limit`: bytes, u32 > 0 (tc size text accepted, "1mb")
 * @throws {UsageError} a limit of 0 (it would drop every packet) or not a size
 * @throws {NetlinkError} as {@link plugBuffer}
 */
export function plugSetLimit(conn: TcConnection, ref: PlugRef & { limit: number | string }): Promise<void> {
  let limit: number;
  try {
    limit = parseSize(ref.limit, 'plug limit');
  } catch (e) {
    return Promise.reject(e);
  }
  if (limit === 0) return Promise.reject(new UsageError('plug: a limit of 0 bytes would drop every packet; give a positive limit (bytes)'));
  return plugVerb(conn, ref, TCQ_PLUG_LIMIT, limit, 'plugSetLimit', ['dev', 'ifindex', 'parent', 'handle', 'limit']);
}
