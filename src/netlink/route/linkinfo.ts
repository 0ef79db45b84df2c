/**
 * Virtual links: create and delete `ifb` and `veth` devices, set a link up
 * or down, move it to another network namespace (RTM_NEWLINK /
 * RTM_DELLINK, linux/rtnetlink.h), and decode the IFLA_LINKINFO and other
 * details `ip -d -j link show` prints.
 *
 * A create request is what `ip link add NAME type KIND` sends:
 * ```
 * struct ifinfomsg (zeros)            // linux/rtnetlink.h
 * IFLA_IFNAME "NAME"
 * IFLA_LINKINFO {                     // linux/if_link.h
 *   IFLA_INFO_KIND "veth"             // without a NUL, as ip sends it
 *   IFLA_INFO_DATA {                  // veth only
 *     VETH_INFO_PEER {                // linux/veth.h: a struct ifinfomsg, then IFLA_* of the peer
 *       struct ifinfomsg (zeros), IFLA_IFNAME "PEER" [, IFLA_NET_NS_FD fd | IFLA_NET_NS_PID pid]
 *     }
 *   }
 * }
 * ```
 * with NLM_F_CREATE | NLM_F_EXCL. A delete is RTM_DELLINK with the index in
 * the ifinfomsg (or IFLA_IFNAME). Up/down is RTM_NEWLINK with `ifi_flags`
 * IFF_UP or 0 and `ifi_change` IFF_UP.
 *
 * @module
 */
import { bin, nested, str, u32 } from '../attributes.js';
import { NetlinkError, UsageError } from '../errors.js';
import { NLM_F_CREATE, NLM_F_EXCL } from '../message.js';
import { RTM_DELLINK, RTM_NEWLINK } from './constants.js';
import {
  IFINFOMSG_LEN,
  IFLA_IFNAME,
  IFLA_LINKINFO,
  IFLA_INFO_KIND,
  IFF_UP,
  validateDeviceName,
  validateIndex,
  type RawLink,
  type RouteConnection,
} from './link.js';

export {
  IFLA_GSO_MAX_SEGS,
  IFLA_GSO_MAX_SIZE,
  IFLA_GRO_MAX_SIZE,
  IFLA_TSO_MAX_SIZE,
  IFLA_TSO_MAX_SEGS,
  IFLA_ALLMULTI,
  IFLA_INET6_ADDR_GEN_MODE,
  linkDetails,
  type LinkDetails,
} from './link.js';

/** IFLA_INFO_DATA: the kind's own attributes inside IFLA_LINKINFO (linux/if_link.h) */
export const IFLA_INFO_DATA = 2;
/** VETH_INFO_PEER: the peer's ifinfomsg and attributes inside IFLA_INFO_DATA (linux/veth.h) */
export const VETH_INFO_PEER = 1;
/** IFLA_NET_NS_PID: u32, the namespace of this process id (linux/if_link.h) */
export const IFLA_NET_NS_PID = 19;
/** IFLA_NET_NS_FD: u32, a file descriptor of a network namespace (/run/netns/NAME, /proc/PID/ns/net) */
export const IFLA_NET_NS_FD = 28;
/** The link kinds this module creates. */
export type LinkKind = 'ifb' | 'veth';

/** The peer end of a veth pair. */
export interface VethPeer {
  /** the peer's name (1-15 bytes) */
  name: string;
  /** create the peer in the network namespace of this file descriptor (IFLA_NET_NS_FD), e.g. an open /run/netns/NAME */
  netnsFd?: number;
  /** create the peer in the network namespace of this process (IFLA_NET_NS_PID) */
  netnsPid?: number;
}

/** A link to create. */
export interface LinkSpec {
  /** the new device's name (1-15 bytes) */
  name: string;
  /** 'ifb' (module ifb) or 'veth' (module veth) */
  kind: LinkKind;
  /** veth only: the other end (required for veth) */
  peer?: VethPeer;
}

/** A link request ready for `conn.request`. */
export interface LinkRequest {
  type: number;
  flags: number;
  payload: Buffer[];
}

const KERNEL_MODULES: Record<LinkKind, string> = { ifb: 'ifb', veth: 'veth' };

function ifinfomsg(index = 0, flags = 0, change = 0): Buffer {
  const b = Buffer.alloc(IFINFOMSG_LEN);
  b.writeInt32LE(index, 4);
  b.writeUInt32LE(flags >>> 0, 8);
  b.writeUInt32LE(change >>> 0, 12);
  return b;
}

function shortName(name: unknown, what: string): string {
  if (typeof name !== 'string') throw new UsageError(`${what}: a device name is required`);
  validateDeviceName(name);
  if (Buffer.byteLength(name) > 15) throw new UsageError(`${what}: '${name}' is too long (at most 15 bytes)`);
  return name;
}

function netnsAttrs(p: { netnsFd?: number; netnsPid?: number }, what: string): Buffer[] {
  if (p.netnsFd !== undefined && p.netnsPid !== undefined) throw new UsageError(`${what}: give netnsFd or netnsPid, not both`);
  if (p.netnsFd !== undefined) {
    if (!Number.isInteger(p.netnsFd) || p.netnsFd < 0 || p.netnsFd > 0x7fffffff)
      throw new UsageError(`${what}: netnsFd ${String(p.netnsFd)} is not a file descriptor`);
    return [u32(IFLA_NET_NS_FD, p.netnsFd)];
  }
  if (p.netnsPid !== undefined) {
    if (!Number.isInteger(p.netnsPid) || p.netnsPid <= 0 || p.netnsPid > 0x7fffffff)
      throw new UsageError(`${what}: netnsPid ${String(p.netnsPid)} is not a process id`);
    return [u32(IFLA_NET_NS_PID, p.netnsPid)];
  }
  return [];
}

/**
 * Whether the kernel knows a link kind, from a create request built so that
 * it must fail after the kind is looked up (the kernel loads the kind's
 * module first when it can): EOPNOTSUPP (or ENOTSUP) means the kind is
 * unknown, any other refusal that it is known. The probes of the guard
 * (ifb) and of the demo (veth) build their requests; this reads the answer.
 * @param conn a NETLINK_ROUTE connection
 * @param req an RTM_NEWLINK create request the kernel should refuse (e.g. an invalid name or address)
 * @returns `known`, `unknown`, or `created` when the kernel accepted it after all (the caller removes what it made)
 * @throws {NetlinkError} EPERM/EACCES: not permitted to ask
 */
export async function probeLinkKind(conn: RouteConnection, req: LinkRequest): Promise<'known' | 'unknown' | 'created'> {
  try {
    await conn.request(req);
  } catch (e) {
    if (!(e instanceof NetlinkError)) throw e;
    if (e.code === 'EPERM' || e.code === 'EACCES') throw e;
    return e.code === 'EOPNOTSUPP' || e.code === 'ENOTSUP' ? 'unknown' : 'known';
  }
  return 'created';
}

/**
 * The RTM_NEWLINK request of `ip link add NAME type ifb` / `ip link add NAME type veth peer name PEER`
 * (NLM_F_CREATE | NLM_F_EXCL), byte for byte as iproute2 6.1 sends it.
 * @throws {UsageError} a bad name or kind, a veth without a peer, an ifb with one
 */
export function newLinkRequest(spec: LinkSpec): LinkRequest {
  if (typeof spec !== 'object' || spec === null) throw new UsageError('link: give { name, kind[, peer] }');
  for (const k of Object.keys(spec))
    if (!['name', 'kind', 'peer'].includes(k)) throw new UsageError(`link: no option ${JSON.stringify(k)} (it takes name, kind, peer)`);
  const name = shortName(spec.name, 'link add');
  if (spec.kind !== 'ifb' && spec.kind !== 'veth') throw new UsageError(`link add: kind must be 'ifb' or 'veth', not ${JSON.stringify(spec.kind)}`);
  // ip sends the kind without its NUL (addattr_l with strlen); the kernel reads it with nla_strscpy either way
  const info: Buffer[] = [bin(IFLA_INFO_KIND, Buffer.from(spec.kind))];
  if (spec.kind === 'veth') {
    const p = spec.peer;
    if (!p || typeof p !== 'object') throw new UsageError(`link add ${name} type veth: a peer { name } is required`);
    for (const k of Object.keys(p))
      if (!['name', 'netnsFd', 'netnsPid'].includes(k))
        throw new UsageError(`link add: peer has no option ${JSON.stringify(k)} (it takes name, netnsFd, netnsPid)`);
    const peerName = shortName(p.name, 'link add veth peer');
    const peerAttrs = Buffer.concat([ifinfomsg(), str(IFLA_IFNAME, peerName), ...netnsAttrs(p, 'link add veth peer')]);
    info.push(nested(IFLA_INFO_DATA, [nested(VETH_INFO_PEER, [peerAttrs])]));
  } else if (spec.peer !== undefined) {
    throw new UsageError(`link add ${name} type ifb: an ifb has no peer`);
  }
  return { type: RTM_NEWLINK, flags: NLM_F_CREATE | NLM_F_EXCL, payload: [ifinfomsg(), str(IFLA_IFNAME, name), nested(IFLA_LINKINFO, info)] };
}

/**
 * The RTM_DELLINK request of `ip link del DEV`: by index (what `ip` sends
 * after looking the name up), or by name (IFLA_IFNAME; one round trip).
 * @throws {UsageError} a bad name or index
 */
export function deleteLinkRequest(dev: string | number): LinkRequest {
  if (typeof dev === 'number') {
    validateIndex(dev);
    return { type: RTM_DELLINK, flags: 0, payload: [ifinfomsg(dev)] };
  }
  return { type: RTM_DELLINK, flags: 0, payload: [ifinfomsg(), str(IFLA_IFNAME, shortName(dev, 'link del'))] };
}

/**
 * The RTM_NEWLINK request of `ip link set DEV up|down`: ifi_flags IFF_UP or
 * 0, ifi_change IFF_UP (only that bit changes).
 * @throws {UsageError} a bad name or index
 */
export function setLinkUpRequest(dev: string | number, up: boolean): LinkRequest {
  const flags = up ? IFF_UP : 0;
  if (typeof dev === 'number') {
    validateIndex(dev);
    return { type: RTM_NEWLINK, flags: 0, payload: [ifinfomsg(dev, flags, IFF_UP)] };
  }
  return { type: RTM_NEWLINK, flags: 0, payload: [ifinfomsg(0, flags, IFF_UP), str(IFLA_IFNAME, shortName(dev, 'link set'))] };
}

/**
 * The RTM_NEWLINK request of `ip link set DEV netns NS`: IFLA_NET_NS_FD or IFLA_NET_NS_PID.
 * @throws {UsageError} a bad name, index, fd or pid
 */
export function setLinkNetnsRequest(dev: string | number, ns: { netnsFd?: number; netnsPid?: number }): LinkRequest {
  const attrs = netnsAttrs(ns ?? {}, 'link set netns');
  if (!attrs.length) throw new UsageError('link set netns: give netnsFd or netnsPid');
  if (typeof dev === 'number') {
    validateIndex(dev);
    return { type: RTM_NEWLINK, flags: 0, payload: [ifinfomsg(dev), ...attrs] };
  }
  return { type: RTM_NEWLINK, flags: 0, payload: [ifinfomsg(), str(IFLA_IFNAME, shortName(dev, 'link set netns')), ...attrs] };
}

/**
 * The kernel lacks the module of a link kind (`ifb`, `veth`): it answered
 * EOPNOTSUPP ("Unknown device type") to the create. Category `missing-module`.
 */
export class LinkKindUnavailableError extends NetlinkError {
  /** the kernel module, e.g. `'ifb'` */
  readonly module: string;
  /** IFLA_INFO_KIND, e.g. `'ifb'` */
  readonly kind: string;
  /** @param cause the kernel's error (errno and request type are kept) */
  constructor(cause: NetlinkError, kind: string, module: string) {
    const explained = cause.withMessage(`link kind '${kind}' is not available in this kernel (module ${module})`);
    super({
      errno: cause.errno,
      requestType: cause.requestType,
      extAckMessage: cause.extAckMessage,
      extAckOffset: cause.extAckOffset,
      message: explained.message,
      category: 'missing-module',
    });
    this.explanation = explained.explanation;
    this.name = 'LinkKindUnavailableError';
    this.kind = kind;
    this.module = module;
  }
}

function describe(dev: string | number): string {
  return typeof dev === 'number' ? `device with index ${dev}` : `device '${dev}'`;
}

function permission(e: NetlinkError, what: string): NetlinkError | undefined {
  if (e.code === 'EPERM' || e.code === 'EACCES') return e.withMessage(`${what}: not permitted; this needs CAP_NET_ADMIN (run as root)`);
  return undefined;
}

/**
 * `ip link add NAME type ifb` / `ip link add NAME type veth peer name PEER [netns ...]`.
 * The new link is down, as `ip` leaves it.
 * @throws {UsageError} bad spec (nothing sent)
 * @throws {LinkKindUnavailableError} "link kind 'ifb' is not available in this kernel (module ifb)"
 * @throws {NetlinkError} "device 'X' already exists" (EEXIST), "the peer name 'Y' is taken" (EEXIST on the peer), not permitted, ...
 */
export async function createLink(conn: RouteConnection, spec: LinkSpec): Promise<void> {
  const req = newLinkRequest(spec);
  try {
    await conn.request(req);
  } catch (e) {
    if (!(e instanceof NetlinkError)) throw e;
    const what = `create ${spec.kind} device '${spec.name}'${spec.peer ? ` with peer '${spec.peer.name}'` : ''}`;
    const perm = permission(e, what);
    if (perm) throw perm;
    const code = e.code === 'ENOTSUP' ? 'EOPNOTSUPP' : e.code;
    if (code === 'EOPNOTSUPP') throw new LinkKindUnavailableError(e, spec.kind, KERNEL_MODULES[spec.kind]);
    if (code === 'EEXIST') throw e.withMessage(`cannot ${what}: a device with ${spec.peer ? 'one of these names' : 'that name'} already exists`);
    if (code === 'EBADF' || code === 'ESRCH')
      throw e.withMessage(
        `cannot ${what}: the peer's network namespace (${spec.peer?.netnsFd !== undefined ? `fd ${spec.peer.netnsFd}` : `pid ${spec.peer?.netnsPid}`}) does not exist (${code})`,
      );
    throw e.withMessage(`cannot ${what}: ${code}`);
  }
}

/**
 * `ip link del DEV`. Deleting one end of a veth pair deletes both.
 * @throws {UsageError} a bad name or index
 * @throws {NetlinkError} "device 'X' not found" (ENODEV), not permitted, ...
 */
export async function deleteLink(conn: RouteConnection, dev: string | number): Promise<void> {
  const req = deleteLinkRequest(dev);
  try {
    await conn.request(req);
  } catch (e) {
    if (!(e instanceof NetlinkError)) throw e;
    const perm = permission(e, `delete ${describe(dev)}`);
    if (perm) throw perm;
    if (e.code === 'ENODEV') throw e.withMessage(`${describe(dev)} not found`);
    if (e.code === 'EOPNOTSUPP' || e.code === 'ENOTSUP') throw e.withMessage(`${describe(dev)} cannot be deleted (it is not a virtual link)`);
    throw e.withMessage(`cannot delete ${describe(dev)}: ${e.code}`);
  }
}

/**
 * `ip link set DEV up` / `down`.
 * @throws {UsageError} a bad name or index
 * @throws {NetlinkError} "device 'X' not found" (ENODEV), not permitted, ...
 */
export async function setLinkUp(conn: RouteConnection, dev: string | number, up = true): Promise<void> {
  try {
    await conn.request(setLinkUpRequest(dev, up));
  } catch (e) {
    if (!(e instanceof NetlinkError)) throw e;
    const perm = permission(e, `set ${describe(dev)} ${up ? 'up' : 'down'}`);
    if (perm) throw perm;
    if (e.code === 'ENODEV') throw e.withMessage(`${describe(dev)} not found`);
    throw e.withMessage(`cannot set ${describe(dev)} ${up ? 'up' : 'down'}: ${e.code}`);
  }
}

/**
 * `ip link set DEV netns NS`: move a link to another network namespace.
 * @throws {UsageError} a bad name, index, fd or pid
 * @throws {NetlinkError} "device 'X' not found", the namespace does not exist, ...
 */
export async function setLinkNetns(conn: RouteConnection, dev: string | number, ns: { netnsFd?: number; netnsPid?: number }): Promise<void> {
  try {
    await conn.request(setLinkNetnsRequest(dev, ns));
  } catch (e) {
    if (!(e instanceof NetlinkError)) throw e;
    const perm = permission(e, `move ${describe(dev)} to another namespace`);
    if (perm) throw perm;
    if (e.code === 'ENODEV') throw e.withMessage(`${describe(dev)} not found`);
    throw e.withMessage(`cannot move ${describe(dev)} to namespace ${ns.netnsFd !== undefined ? `fd ${ns.netnsFd}` : `of pid ${ns.netnsPid}`}: ${e.code}`);
  }
}

/**
 * IFLA_LINKINFO / IFLA_INFO_KIND of a decoded link ("veth", "ifb"), or undefined for a physical one.
 * @throws {NetlinkDecodeError} a malformed nest
 */
export function linkKind(raw: RawLink): string | undefined {
  return raw.attrs.nested(IFLA_LINKINFO)?.str(IFLA_INFO_KIND);
}
