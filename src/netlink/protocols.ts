/**
 * A registry of netlink protocols: message type names, request kinds, and
 * body decoders. Each protocol module registers itself (one line); the core
 * never switches on a protocol or a kind.
 *
 * - rtnetlink links/addresses: `route/`
 * - tc qdiscs/classes/filters: `src/tc`
 * - nftables: `src/iptables`
 *
 * @module
 */
import { controlTypeName, type NetlinkMessage, type RequestKind } from './message.js';

/** What a protocol module tells the core about its message types. */
export interface ProtocolInfo {
  /** netlink protocol number (NETLINK_ROUTE = 0, NETLINK_NETFILTER = 12...) */
  protocol: number;
  /** e.g. 'NETLINK_ROUTE' */
  name: string;
  /** name of a message type, e.g. 36 -> 'RTM_NEWQDISC'; undefined when unknown */
  typeName(type: number): string | undefined;
  /** how the type's 0x100-0x800 flag bits read */
  requestKind(type: number): RequestKind;
}

/**
 * Decodes one message's body to a plain JSON-able object (field names of
 * `tc -j`, `ip -j`, `nft -j`). Throws NetlinkDecodeError on bad bytes.
 */
export type BodyDecoder = (msg: NetlinkMessage) => Record<string, unknown>;

const protocols = new Map<number, ProtocolInfo>();
const decoders = new Map<string, BodyDecoder>();
const typeNames = new Map<string, string>();

/** Register a protocol's type names (replaces an earlier registration). */
export function registerProtocol(info: ProtocolInfo): void {
  protocols.set(info.protocol, info);
}

/** Register the body decoder for one message type of one protocol. */
export function registerBodyDecoder(protocol: number, type: number, decoder: BodyDecoder): void {
  decoders.set(`${protocol}:${type}`, decoder);
}

/**
 * Register the name of one message type of a protocol whose other types
 * another module names (e.g. nfnetlink_queue's `NFQNL_MSG_*` in
 * NETLINK_NETFILTER, whose nf_tables names src/iptables registers). It is
 * consulted before the protocol's own {@link ProtocolInfo.typeName}.
 */
export function registerTypeName(protocol: number, type: number, name: string): void {
  typeNames.set(`${protocol}:${type}`, name);
}

/** The registered decoder for a protocol's message type, if any. */
export function bodyDecoder(protocol: number, type: number): BodyDecoder | undefined {
  return decoders.get(`${protocol}:${type}`);
}

/** The registered protocol info, if any. */
export function protocolInfo(protocol: number): ProtocolInfo | undefined {
  return protocols.get(protocol);
}

/**
 * The name of a message type: control types (NLMSG_ERROR...) first, then the
 * protocol's own names, else `'0x<hex>'`.
 */
export function messageTypeName(protocol: number, type: number): string {
  return controlTypeName(type) ?? typeNames.get(`${protocol}:${type}`) ?? protocols.get(protocol)?.typeName(type) ?? `0x${type.toString(16)}`;
}

/** How a message type's high flag bits read, for {@link flagNames}. */
export function requestKind(protocol: number, type: number): RequestKind {
  if (type === 2) return 'ack';
  if (type < 0x10) return 'other';
  return protocols.get(protocol)?.requestKind(type) ?? 'other';
}
