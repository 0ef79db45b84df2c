/**
 * Generic netlink (NETLINK_GENERIC = 16): families such as `tcp_metrics` get
 * a message type (their family id) at run time; the controller family
 * (GENL_ID_CTRL = 0x10) resolves a name to its id with CTRL_CMD_GETFAMILY.
 * Every message's payload starts with `struct genlmsghdr`, then attributes
 * (host byte order).
 *
 * ```c
 * // linux/genetlink.h
 * struct genlmsghdr { __u8 cmd; __u8 version; __u16 reserved; };
 * #define GENL_ID_CTRL NLMSG_MIN_TYPE   // 0x10
 * CTRL_CMD_GETFAMILY = 3, reply CTRL_CMD_NEWFAMILY = 1
 * CTRL_ATTR_FAMILY_ID 1 (u16), CTRL_ATTR_FAMILY_NAME 2 (string), CTRL_ATTR_VERSION 3 (u32),
 * CTRL_ATTR_HDRSIZE 4 (u32), CTRL_ATTR_MAXATTR 5 (u32), CTRL_ATTR_OPS 6 (nested), CTRL_ATTR_MCAST_GROUPS 7 (nested)
 * ```
 *
 * `synplug decode` names the controller's messages, and a family's own
 * messages once a CTRL_CMD_NEWFAMILY reply in the same stream gave its id
 * (a family module registers its decoder by name: {@link registerGenlFamily}).
 *
 * @module
 */
import { parseAttributes, str, type AttributeView } from './attributes.js';
import { NetlinkConnection } from './connection.js';
import { NetlinkDecodeError, NetlinkError, UsageError } from './errors.js';
import { NLMSG_HDRLEN, type NetlinkMessage, type RequestKind } from './message.js';
import { registerBodyDecoder, registerProtocol } from './protocols.js';

/** NETLINK_GENERIC (linux/netlink.h) */
export const NETLINK_GENERIC = 16;
/** GENL_ID_CTRL: the controller family's message type */
export const GENL_ID_CTRL = 0x10;
/** GENL_HDRLEN: sizeof(struct genlmsghdr) */
export const GENL_HDRLEN = 4;
/** GENL_MAX_ID: family ids are 0x10-1023 */
export const GENL_MAX_ID = 1023;
/** CTRL_CMD_NEWFAMILY: the controller's reply (and notification) */
export const CTRL_CMD_NEWFAMILY = 1;
/** CTRL_CMD_GETFAMILY: look a family up by name or id */
export const CTRL_CMD_GETFAMILY = 3;
export const CTRL_ATTR_FAMILY_ID = 1;
export const CTRL_ATTR_FAMILY_NAME = 2;
export const CTRL_ATTR_VERSION = 3;
export const CTRL_ATTR_HDRSIZE = 4;
export const CTRL_ATTR_MAXATTR = 5;
export const CTRL_ATTR_OPS = 6;
export const CTRL_ATTR_MCAST_GROUPS = 7;

/** Decoded `struct genlmsghdr` plus the attributes after it. */
export interface GenlMessage {
  cmd: number;
  version: number;
  /** the attributes after the header */
  attrs: AttributeView;
}

/**
 * The payload of a generic netlink message: genlmsghdr, then attributes.
 * @param cmd the family's command
 * @param version the family's version
 */
export function encodeGenl(cmd: number, version: number, attrs: readonly Buffer[] = []): Buffer[] {
  const h = Buffer.alloc(GENL_HDRLEN);
  h[0] = cmd;
  h[1] = version;
  return [h, ...attrs];
}

/**
 * Split a generic netlink message into its header and attributes.
 * @throws {NetlinkDecodeError} the payload is shorter than genlmsghdr, or a bad attribute
 */
export function decodeGenl(msg: NetlinkMessage): GenlMessage {
  const p = msg.payload;
  const at = msg.offset + NLMSG_HDRLEN;
  if (p.length < GENL_HDRLEN)
    throw new NetlinkDecodeError(`generic netlink message has ${p.length} payload bytes, needs ${GENL_HDRLEN} for struct genlmsghdr`, at);
  return { cmd: p[0], version: p[1], attrs: parseAttributes(p.subarray(GENL_HDRLEN), at + GENL_HDRLEN) };
}

/** CTRL_CMD_GETFAMILY's payload for a family name (genlmsghdr version 0, as iproute2 sends it). */
export function encodeGetFamily(name: string): Buffer[] {
  return encodeGenl(CTRL_CMD_GETFAMILY, 0, [str(CTRL_ATTR_FAMILY_NAME, name)]);
}

/** A resolved generic netlink family. */
export interface GenlFamily {
  /** its message type */
  id: number;
  name: string;
  /** CTRL_ATTR_VERSION */
  version: number;
  /** CTRL_ATTR_MAXATTR */
  maxAttr?: number;
}

const CTRL_CMD_NAMES = [
  'unspec',
  'newfamily',
  'delfamily',
  'getfamily',
  'newops',
  'delops',
  'getops',
  'newmcast_grp',
  'delmcast_grp',
  'getmcast_grp',
  'getpolicy',
];

/** Decode a controller message body (request or reply). @throws {NetlinkDecodeError} */
export function decodeCtrlBody(msg: NetlinkMessage): Record<string, unknown> {
  const g = decodeGenl(msg);
  const out: Record<string, unknown> = { cmd: CTRL_CMD_NAMES[g.cmd] ?? g.cmd, version: g.version };
  const id = g.attrs.u16(CTRL_ATTR_FAMILY_ID);
  const name = g.attrs.str(CTRL_ATTR_FAMILY_NAME);
  if (id !== undefined) out.id = id;
  if (name !== undefined) out.name = name;
  const version = g.attrs.u32(CTRL_ATTR_VERSION);
  if (version !== undefined) out.family_version = version;
  const hdr = g.attrs.u32(CTRL_ATTR_HDRSIZE);
  if (hdr !== undefined) out.hdrsize = hdr;
  const max = g.attrs.u32(CTRL_ATTR_MAXATTR);
  if (max !== undefined) out.maxattr = max;
  const ops = g.attrs.nested(CTRL_ATTR_OPS);
  if (ops) out.ops = ops.items.length;
  const groups = g.attrs.nested(CTRL_ATTR_MCAST_GROUPS);
  if (groups) out.mcast_groups = groups.items.length;
  if (id !== undefined && name !== undefined && g.cmd === CTRL_CMD_NEWFAMILY) seen.set(id, name);
  return out;
}

/** A family's body decoder: its messages' header and attributes to a plain object. */
export type GenlBodyDecoder = (g: GenlMessage, msg: NetlinkMessage) => Record<string, unknown>;

const familyDecoders = new Map<string, GenlBodyDecoder>();
/** Family ids learned from CTRL_CMD_NEWFAMILY replies decoded so far (family ids are per boot). */
const seen = new Map<number, string>();

/** Register a family's body decoder by its name (the id is learned from the controller's reply). */
export function registerGenlFamily(name: string, decoder: GenlBodyDecoder): void {
  familyDecoders.set(name, decoder);
}

/** The name of a family id, when a controller reply decoded in this process gave it. */
export function genlFamilyName(id: number): string | undefined {
  return seen.get(id);
}

/** Decode any NETLINK_GENERIC message body: the controller's, a known family's, or the header and attribute types. */
export function decodeGenlBody(msg: NetlinkMessage): Record<string, unknown> {
  if (msg.type === GENL_ID_CTRL) return decodeCtrlBody(msg);
  const g = decodeGenl(msg);
  const family = seen.get(msg.type);
  const dec = family === undefined ? undefined : familyDecoders.get(family);
  if (dec) return { family, ...dec(g, msg) };
  return { ...(family !== undefined && { family }), cmd: g.cmd, version: g.version, attributes: g.attrs.items.map((a) => a.type) };
}

registerProtocol({
  protocol: NETLINK_GENERIC,
  name: 'NETLINK_GENERIC',
  typeName: (type) => (type === GENL_ID_CTRL ? 'GENL_ID_CTRL' : seen.has(type) ? `GENL/${seen.get(type)}` : undefined),
  requestKind: (): RequestKind => 'get',
});
for (let t = GENL_ID_CTRL; t <= GENL_MAX_ID; t++) registerBodyDecoder(NETLINK_GENERIC, t, decodeGenlBody);

/**
 * Resolve a generic netlink family by name (CTRL_CMD_GETFAMILY).
 * @param conn a NETLINK_GENERIC connection
 * @returns the family, or undefined when the kernel has no such family (ENOENT: its module is not loaded and could not be)
 * @throws {UsageError} not a NETLINK_GENERIC connection
 * @throws {NetlinkError} another refusal
 */
export async function resolveGenlFamily(conn: NetlinkConnection, name: string): Promise<GenlFamily | undefined> {
  if (conn?.protocol !== NETLINK_GENERIC) throw new UsageError(`resolveGenlFamily needs a NETLINK_GENERIC connection (protocol ${NETLINK_GENERIC})`);
  let replies: NetlinkMessage[];
  try {
    replies = await conn.request({ type: GENL_ID_CTRL, payload: encodeGetFamily(name) });
  } catch (e) {
    if (e instanceof NetlinkError && e.code === 'ENOENT') return undefined;
    throw e;
  }
  for (const m of replies) {
    if (m.type !== GENL_ID_CTRL) continue;
    const g = decodeGenl(m);
    const id = g.attrs.u16(CTRL_ATTR_FAMILY_ID);
    if (id === undefined) continue;
    seen.set(id, name);
    const f: GenlFamily = { id, name: g.attrs.str(CTRL_ATTR_FAMILY_NAME) ?? name, version: g.attrs.u32(CTRL_ATTR_VERSION) ?? 0 };
    const max = g.attrs.u32(CTRL_ATTR_MAXATTR);
    if (max !== undefined) f.maxAttr = max;
    return f;
  }
  return undefined;
}

/** Open a NETLINK_GENERIC connection (options as NetlinkConnection.open's). */
export function openGenl(options: { netns?: string } = {}): NetlinkConnection {
  return NetlinkConnection.open(NETLINK_GENERIC, options);
}
