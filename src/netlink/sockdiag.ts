/**
 * NETLINK_SOCK_DIAG (4): TCP sockets by state, the way `ss -tln` finds them.
 * The guard's `--wait-listen [ADDR:]PORT` uses {@link listTcpListeners} to see
 * a listening socket appear; a socket is identified by its inode (and cookie).
 *
 * ```c
 * // linux/inet_diag.h
 * struct inet_diag_sockid {
 *   __be16 idiag_sport;
 *   __be16 idiag_dport;
 *   __be32 idiag_src[4];
 *   __be32 idiag_dst[4];
 *   __u32  idiag_if;
 *   __u32  idiag_cookie[2];   // INET_DIAG_NOCOOKIE = ~0U
 * };                          // 48 bytes
 * struct inet_diag_req_v2 {   // request, after nlmsghdr type SOCK_DIAG_BY_FAMILY (linux/sock_diag.h)
 *   __u8  sdiag_family;
 *   __u8  sdiag_protocol;
 *   __u8  idiag_ext;
 *   __u8  pad;
 *   __u32 idiag_states;       // bit mask of TCP states (1 << TCP_LISTEN...)
 *   struct inet_diag_sockid id;
 * };                          // 56 bytes
 * struct inet_diag_msg {      // reply
 *   __u8  idiag_family;
 *   __u8  idiag_state;
 *   __u8  idiag_timer;
 *   __u8  idiag_retrans;
 *   struct inet_diag_sockid id;
 *   __u32 idiag_expires;
 *   __u32 idiag_rqueue;
 *   __u32 idiag_wqueue;
 *   __u32 idiag_uid;
 *   __u32 idiag_inode;
 * };                          // 72 bytes, then INET_DIAG_* attributes
 * ```
 *
 * @module
 */
import { parseAttributes } from './attributes.js';
import { NetlinkDecodeError, UsageError } from './errors.js';
import { NETLINK_SOCK_DIAG, NLM_F_REQUEST, type NetlinkMessage } from './message.js';
import { registerBodyDecoder, registerProtocol } from './protocols.js';
import { NetlinkConnection } from './connection.js';
import { formatIp as formatIpAddress, parseIp as parseIpAddress, AF_INET, AF_INET6 } from './ipaddr.js';

/** SOCK_DIAG_BY_FAMILY (linux/sock_diag.h): the one request/reply type used here. */
export const SOCK_DIAG_BY_FAMILY = 20;
/** IPPROTO_TCP */
export const IPPROTO_TCP = 6;
/** sizeof(struct inet_diag_req_v2) */
export const INET_DIAG_REQ_V2_LEN = 56;
/** sizeof(struct inet_diag_msg) */
export const INET_DIAG_MSG_LEN = 72;
/** INET_DIAG_NOCOOKIE: "any cookie" in a request */
export const INET_DIAG_NOCOOKIE = 0xffffffff;
/** INET_DIAG_SKV6ONLY (enum INET_DIAG_*, linux/inet_diag.h): u8, IPV6_V6ONLY of an AF_INET6 socket */
export const INET_DIAG_SKV6ONLY = 11;
/** INET_DIAG_SKMEMINFO: enum in inet_diag.h: the socket's memory counters, `__u32 [SK_MEMINFO_VARS]` (sock_diag.h) */
export const INET_DIAG_SKMEMINFO = 7;
/** SK_MEMINFO_DROPS: index in INET_DIAG_SKMEMINFO's array (sock_diag.h): packets the socket dropped (`sk_drops`; for a listener, tcp_listendrop: accept queue full, a SYN it could not answer) */
export const SK_MEMINFO_DROPS = 8;

/** TCP states (include/net/tcp_states.h), index = state number. */
export const TCP_STATES = [
  'UNKNOWN',
  'ESTABLISHED',
  'SYN_SENT',
  'SYN_RECV',
  'FIN_WAIT1',
  'FIN_WAIT2',
  'TIME_WAIT',
  'CLOSE',
  'CLOSE_WAIT',
  'LAST_ACK',
  'LISTEN',
  'CLOSING',
  'NEW_SYN_RECV',
  'BOUND_INACTIVE',
] as const;
/** TCP_LISTEN */
export const TCP_LISTEN = 10;

/** A TCP state's name, e.g. 10 -> 'LISTEN'; unknown numbers as text. */
export function tcpStateName(state: number): string {
  return TCP_STATES[state] ?? String(state);
}

/** One socket from an inet_diag_msg. */
export interface InetSocket {
  /** 'inet' (AF_INET) or 'inet6' (AF_INET6) */
  family: 'inet' | 'inet6';
  /** TCP state name: 'LISTEN', 'ESTABLISHED'... */
  state: string;
  /** local address (idiag_src), e.g. '0.0.0.0', '::', '127.0.0.1' */
  address: string;
  /** local port (idiag_sport) */
  port: number;
  /** remote address (idiag_dst); the unspecified address for a listener */
  peerAddress: string;
  /** remote port (idiag_dport); 0 for a listener */
  peerPort: number;
  /** idiag_if: the device the socket is bound to, 0 if none */
  interface: number;
  /** idiag_cookie as a decimal string (a u64: the kernel's unique socket id) */
  cookie: string;
  /** idiag_inode: the socket's inode, as in /proc/PID/fd -> socket:[inode]; 0 for timewait/request sockets */
  inode: number;
  /** idiag_uid: owner uid */
  uid: number;
  /** idiag_rqueue: for a listener, connections waiting in the accept queue; else unread bytes */
  recvQ: number;
  /** idiag_wqueue: for a listener, the accept backlog; else unsent bytes */
  sendQ: number;
  /** INET_DIAG_SKV6ONLY for AF_INET6 sockets: true when IPv4-mapped connections are refused */
  v6only?: boolean;
  /** INET_DIAG_SKMEMINFO's SK_MEMINFO_DROPS, packets: only when the dump asked for it (`meminfo`) */
  drops?: number;
}

/** A listening TCP socket. */
export type TcpListener = Omit<InetSocket, 'state' | 'peerAddress' | 'peerPort'>;

/**
 * The payload of a SOCK_DIAG_BY_FAMILY dump request (`struct inet_diag_req_v2`).
 * @param family AF_INET or AF_INET6
 * @param protocol IPPROTO_TCP (6)
 * @param states bit mask of TCP states (1 << TCP_LISTEN for listeners)
 * @param ext idiag_ext: extensions asked for (INET_DIAG_* - 1 bits), default none
 */
export function inetDiagRequest(family: number, protocol: number, states: number, ext = 0): Buffer {
  const b = Buffer.alloc(INET_DIAG_REQ_V2_LEN);
  b.writeUInt8(family, 0);
  b.writeUInt8(protocol, 1);
  b.writeUInt8(ext, 2);
  b.writeUInt32LE(states >>> 0, 4);
  // id: ports/addresses 0 (dumps ignore them); cookie INET_DIAG_NOCOOKIE
  b.writeUInt32LE(INET_DIAG_NOCOOKIE, 8 + 40);
  b.writeUInt32LE(INET_DIAG_NOCOOKIE, 8 + 44);
  return b;
}

function familyText(f: number, at: number): 'inet' | 'inet6' {
  if (f === AF_INET) return 'inet';
  if (f === AF_INET6) return 'inet6';
  throw new NetlinkDecodeError(`inet_diag family ${f} is neither AF_INET nor AF_INET6`, at);
}

function sockidAddr(b: Buffer, off: number, family: 'inet' | 'inet6'): string {
  return formatIpAddress(b.subarray(off, off + (family === 'inet' ? 4 : 16)));
}

/**
 * Decode one inet_diag_msg (a SOCK_DIAG_BY_FAMILY reply).
 * @throws {NetlinkDecodeError} shorter than 72 bytes, a family other than AF_INET/AF_INET6, malformed attributes
 */
export function decodeInetDiagMsg(msg: NetlinkMessage): InetSocket {
  const p = msg.payload;
  const at = msg.offset + 16;
  if (p.length < INET_DIAG_MSG_LEN) throw new NetlinkDecodeError(`inet_diag_msg needs ${INET_DIAG_MSG_LEN} bytes, the message has ${p.length}`, at);
  const family = familyText(p.readUInt8(0), at);
  const id = 4;
  const cookie = (BigInt(p.readUInt32LE(id + 44)) << 32n) | BigInt(p.readUInt32LE(id + 40));
  const s: InetSocket = {
    family,
    state: tcpStateName(p.readUInt8(1)),
    address: sockidAddr(p, id + 4, family),
    port: p.readUInt16BE(id),
    peerAddress: sockidAddr(p, id + 20, family),
    peerPort: p.readUInt16BE(id + 2),
    interface: p.readUInt32LE(id + 36),
    cookie: cookie.toString(),
    inode: p.readUInt32LE(68),
    uid: p.readUInt32LE(64),
    recvQ: p.readUInt32LE(56),
    sendQ: p.readUInt32LE(60),
  };
  const attrs = parseAttributes(p.subarray(INET_DIAG_MSG_LEN), at + INET_DIAG_MSG_LEN);
  const v6only = attrs.u8(INET_DIAG_SKV6ONLY);
  if (v6only !== undefined) s.v6only = v6only !== 0;
  const mem = attrs.get(INET_DIAG_SKMEMINFO);
  if (mem && mem.data.length >= (SK_MEMINFO_DROPS + 1) * 4) s.drops = mem.data.readUInt32LE(SK_MEMINFO_DROPS * 4);
  return s;
}

/**
 * Body decoder for `synplug decode`: a request (NLM_F_REQUEST) as its
 * `inet_diag_req_v2` fields, a reply as {@link InetSocket}.
 * @throws {NetlinkDecodeError}
 */
export function decodeSockDiagBody(msg: NetlinkMessage): Record<string, unknown> {
  if (!(msg.flags & NLM_F_REQUEST)) return { ...decodeInetDiagMsg(msg) };
  const p = msg.payload;
  const at = msg.offset + 16;
  if (p.length < INET_DIAG_REQ_V2_LEN) throw new NetlinkDecodeError(`inet_diag_req_v2 needs ${INET_DIAG_REQ_V2_LEN} bytes, the message has ${p.length}`, at);
  const states = p.readUInt32LE(4);
  const names: string[] = [];
  for (let i = 0; i < 32; i++) if (states & (1 << i)) names.push(tcpStateName(i));
  const fam = p.readUInt8(0);
  return {
    family: fam === AF_INET ? 'inet' : fam === AF_INET6 ? 'inet6' : fam,
    protocol: p.readUInt8(1) === IPPROTO_TCP ? 'tcp' : p.readUInt8(1),
    ext: p.readUInt8(2),
    states: names,
  };
}

registerProtocol({
  protocol: NETLINK_SOCK_DIAG,
  name: 'NETLINK_SOCK_DIAG',
  typeName: (t) => (t === SOCK_DIAG_BY_FAMILY ? 'SOCK_DIAG_BY_FAMILY' : undefined),
  requestKind: (t) => (t === SOCK_DIAG_BY_FAMILY ? 'get' : 'other'),
});
registerBodyDecoder(NETLINK_SOCK_DIAG, SOCK_DIAG_BY_FAMILY, decodeSockDiagBody);

/** What the sock_diag functions need from a connection (a {@link NetlinkConnection} on NETLINK_SOCK_DIAG). */
export type SockDiagConnection = Pick<NetlinkConnection, 'dumpAll'>;

async function withConn<T>(conn: SockDiagConnection | undefined, f: (c: SockDiagConnection) => Promise<T>): Promise<T> {
  if (conn) return f(conn);
  const own = NetlinkConnection.open(NETLINK_SOCK_DIAG);
  try {
    return await f(own);
  } finally {
    own.close();
  }
}

/**
 * TCP sockets in the given states, IPv4 then IPv6 (two dumps).
 * @param conn a NETLINK_SOCK_DIAG connection; one is opened and closed when omitted
 * @param options `states`: state numbers (default all); `family`: only one family;
 *   `meminfo`: ask for INET_DIAG_SKMEMINFO too, so that each socket has `drops`
 * @throws {NetlinkError} a dump failed
 * @throws {SynplugError} the socket could not be opened
 */
export async function listTcpSockets(
  conn?: SockDiagConnection,
  options: { states?: readonly number[]; family?: 'inet' | 'inet6'; meminfo?: boolean } = {},
): Promise<InetSocket[]> {
  const ext = options.meminfo ? 1 << (INET_DIAG_SKMEMINFO - 1) : 0;
  let mask = 0;
  for (const s of options.states ?? TCP_STATES.map((_, i) => i)) mask |= 1 << s;
  const fams = options.family === 'inet' ? [AF_INET] : options.family === 'inet6' ? [AF_INET6] : [AF_INET, AF_INET6];
  return withConn(conn, async (c) => {
    // one dump after the other: the kernel runs one dump per socket at a time (EBUSY otherwise)
    const out: InetSocket[] = [];
    for (const f of fams) {
      const msgs = await c.dumpAll({ type: SOCK_DIAG_BY_FAMILY, payload: inetDiagRequest(f, IPPROTO_TCP, mask, ext) });
      for (const m of msgs) if (m.type === SOCK_DIAG_BY_FAMILY) out.push(decodeInetDiagMsg(m));
    }
    return out;
  });
}

/**
 * Listening TCP sockets (state LISTEN), IPv4 then IPv6, like `ss -ltn`.
 * @param conn a NETLINK_SOCK_DIAG connection; one is opened and closed when omitted
 * @param options `port`: only this local port; `meminfo`: each listener's `drops` too (SK_MEMINFO_DROPS)
 * @returns family, address, port, inode, uid, cookie, interface, recvQ (accept queue), sendQ (backlog), v6only, drops
 * @throws {UsageError} a port outside 0-65535
 * @throws {NetlinkError} a dump failed
 */
export async function listTcpListeners(conn?: SockDiagConnection, options: { port?: number; meminfo?: boolean } = {}): Promise<TcpListener[]> {
  if (options.port !== undefined && (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535)) {
    throw new UsageError(`port ${options.port} is not 0-65535`);
  }
  const socks = await listTcpSockets(conn, { states: [TCP_LISTEN], meminfo: options.meminfo });
  return socks
    .filter((s) => s.state === 'LISTEN' && (options.port === undefined || s.port === options.port))
    .map(({ state: _s, peerAddress: _a, peerPort: _p, ...l }) => l);
}

/**
 * Whether a listener would accept connections to `address`: the same
 * address, or its family's wildcard (0.0.0.0, ::), or `::` without v6only
 * for an IPv4 address (IPv4-mapped). IPv4-mapped IPv6 text (::ffff:a.b.c.d)
 * counts as IPv4.
 * @param address an IPv4 or IPv6 address
 * @throws {UsageError} `address` is not an IP address
 */
export function listenerAccepts(l: TcpListener, address: string): boolean {
  const ip = parseIpAddress(address);
  let v4: Buffer | undefined = ip.version === 4 ? ip.bytes : undefined;
  if (ip.version === 6 && ip.bytes.subarray(0, 12).equals(Buffer.from('00000000000000000000ffff', 'hex'))) v4 = ip.bytes.subarray(12);
  if (l.family === 'inet') {
    return v4 !== undefined && (l.address === '0.0.0.0' || l.address === formatIpAddress(v4));
  }
  if (l.address === '::') return v4 === undefined || !l.v6only;
  if (v4 !== undefined) return l.address === formatIpAddress(Buffer.concat([Buffer.from('00000000000000000000ffff', 'hex'), v4]));
  return l.address === formatIpAddress(ip.bytes);
}
