/**
 * The kernel's own alternative to a hold: `net.ipv4.tcp_migrate_req`
 * (Linux 5.14+, one value per network namespace, default 0; it covers IPv6
 * listeners too). With it set to 1, a listening socket of a reuseport group
 * (several sockets on one address and port, SO_REUSEPORT) that closes hands
 * its queued and half-open connections to a sibling of its group instead of
 * resetting them. It does nothing when the last socket on a port closes (a
 * stop-then-start), and nothing for a server that keeps its sockets.
 *
 * {@link migrateReqReport} reads the value in synplug's network namespace
 * (the CLI's `--netns`: /proc/sys/net is looked up in the namespace of the
 * thread that opens the file, so the file is opened and read with the thread
 * inside that namespace, {@link withNetns}), groups the listeners that accept
 * connections to the hold's address by address and port (sock_diag: two or
 * more LISTEN sockets on one address and port can only be a reuseport group),
 * and says what the value means for them. It only reads: synplug never
 * changes the sysctl.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { defaultNetns, withNetns } from '../netlink/netns.js';
import { listenerAccepts, listTcpListeners, type SockDiagConnection, type TcpListener } from '../netlink/sockdiag.js';

/** The sysctl's name. */
export const TCP_MIGRATE_REQ = 'net.ipv4.tcp_migrate_req';
/** Its file (in the namespace of the thread that opens it). */
export const TCP_MIGRATE_REQ_PATH = '/proc/sys/net/ipv4/tcp_migrate_req';

/**
 * Read `net.ipv4.tcp_migrate_req` in a network namespace.
 * @param netns NAME (under /run/netns) or PATH; default: the library's default namespace (the CLI's `--netns`), else this process's
 * @returns 0 or 1 (any integer the file holds); null when the kernel has no such sysctl (before 5.14) or it cannot be read
 * @throws {UsageError} the namespace does not exist
 * @throws {SynplugError} (`permission`) the namespace cannot be entered
 */
export function readTcpMigrateReq(netns: string | undefined = defaultNetns()): number | null {
  return withNetns(netns, () => {
    try {
      const v = Number.parseInt(readFileSync(TCP_MIGRATE_REQ_PATH, 'utf8').trim(), 10);
      return Number.isNaN(v) ? null : v;
    } catch {
      return null;
    }
  });
}

/** The listening sockets on one address and port. */
export interface ListenerGroup {
  /** 'inet' or 'inet6' */
  family: 'inet' | 'inet6';
  /** local address, e.g. '169.254.255.254', '0.0.0.0', '::' */
  address: string;
  port: number;
  /** how many LISTEN sockets: 2 or more is a reuseport group */
  sockets: number;
  /** their inodes */
  inodes: number[];
  /** connections waiting in their accept queues now, summed */
  queued: number;
}

/**
 * Group listeners by family, address and port (sorted by port, then address).
 * @param listeners from {@link listTcpListeners}
 */
export function groupListeners(listeners: readonly TcpListener[]): ListenerGroup[] {
  const groups = new Map<string, ListenerGroup>();
  for (const l of listeners) {
    const key = `${l.family} ${l.address} ${l.port}`;
    let g = groups.get(key);
    if (!g) {
      g = { family: l.family, address: l.address, port: l.port, sockets: 0, inodes: [], queued: 0 };
      groups.set(key, g);
    }
    g.sockets++;
    g.inodes.push(l.inode);
    g.queued += l.recvQ;
  }
  return [...groups.values()].sort((a, b) => a.port - b.port || a.address.localeCompare(b.address));
}

/** What `check` and `status` report about the sysctl. */
export interface MigrateReqReport {
  /** `net.ipv4.tcp_migrate_req` */
  name: string;
  /** its value in the namespace; null: this kernel has none (before 5.14) */
  value: number | null;
  /** the namespace read (`--netns`), absent for synplug's own */
  netns?: string;
  /** the listeners that accept connections to the hold's address, grouped by address and port; null when sock_diag could not be used */
  listeners: ListenerGroup[] | null;
  /** held ports (an inbound hold's) on which nothing listens now ({@link portsNotListened}); absent when there is none, or the listeners are unknown */
  portsNotListened?: number[];
  /** one sentence: what the value means for those listeners */
  meaning: string;
}

function endpoint(g: ListenerGroup): string {
  return g.family === 'inet6' ? `[${g.address}]:${g.port}` : `${g.address}:${g.port}`;
}

/**
 * What the value means for these listeners, in one sentence.
 * @param value the sysctl (null: absent)
 * @param groups the listeners grouped (null: unknown)
 */
export function explainMigrateReq(value: number | null, groups: readonly ListenerGroup[] | null): string {
  const shared = (groups ?? []).filter((g) => g.sockets >= 2);
  const sharedText = shared.map((g) => `${endpoint(g)} (${g.sockets} sockets)`).join(', ');
  if (value === null) {
    return 'this kernel has no tcp_migrate_req (Linux 5.14+): connections queued on a listening socket that closes are reset; a hold is the only protection';
  }
  const who =
    groups === null
      ? 'the listeners could not be listed (sock_diag)'
      : groups.length === 0
        ? 'no listener accepts connections to the hold address now'
        : shared.length > 0
          ? `reuseport groups: ${sharedText}`
          : `every port has one listening socket (${groups.map(endpoint).join(', ')})`;
  if (value !== 0) {
    return `on: a socket of a reuseport group that closes hands its queued connections to a sibling (${who}); it does nothing when the last socket on a port closes (stop-then-start), where the hold still decides`;
  }
  if (shared.length > 0) {
    return `off: a socket of these reuseport groups that closes on reload resets the connections queued on it (${who}); the hold covers new SYNs during a protected reload; tcp_migrate_req=1 would also hand queued ones to a sibling`;
  }
  return `off (${who}): it would only matter for a port served by several sockets (SO_REUSEPORT), e.g. HAProxy -sf or nginx reuseport while the old and new sockets overlap`;
}

/**
 * What one hold holds, as far as listeners go: connections to any of `addrs`
 * (empty or absent: any address) on any of `ports` (empty or absent: any port).
 */
export interface HeldEndpoints {
  addrs?: readonly string[];
  ports?: readonly number[];
}

/**
 * The listeners that accept connections some hold holds: a listener counts
 * when, for at least one hold, it accepts one of the hold's addresses (the
 * same address or a wildcard) and listens on one of its ports.
 * @param listeners from {@link listTcpListeners}
 * @param holds each hold's addresses and ports; none: every listener
 * @throws {UsageError} an address that is not an IP address
 */
export function heldListeners(listeners: readonly TcpListener[], holds: readonly HeldEndpoints[]): TcpListener[] {
  if (holds.length === 0) return [...listeners];
  const holdsIt = (l: TcpListener, h: HeldEndpoints) =>
    (!h.addrs?.length || h.addrs.some((a) => listenerAccepts(l, a))) && (!h.ports?.length || h.ports.includes(l.port));
  return listeners.filter((l) => holds.some((h) => holdsIt(l, h)));
}

/**
 * The held ports no listener accepts now: for each hold that holds given
 * ports (an inbound hold), those on which no listening socket accepts its
 * addresses. A client held there is refused at the release, until a server
 * listens (it may start later: a notice, never an error).
 * @param listeners from {@link listTcpListeners}
 * @param holds each hold's addresses and ports (a hold of every port is left out)
 * @returns the ports, ascending, each once
 * @throws {UsageError} an address that is not an IP address
 */
export function portsNotListened(listeners: readonly TcpListener[], holds: readonly HeldEndpoints[]): number[] {
  const ports = new Set<number>();
  for (const h of holds) for (const p of h.ports ?? []) if (!heldListeners(listeners, [{ addrs: h.addrs ?? [], ports: [p] }]).length) ports.add(p);
  return [...ports].sort((a, b) => a - b);
}

/** The notice for held ports nothing listens on ({@link portsNotListened}), as setup, check and status say it. */
export function notListenedNotice(ports: readonly number[]): string {
  return `nothing listens on held port ${ports.join(', ')} now: a client held there is refused at the release until a server listens there (it may start later; check the server's port, or 'protect --wait-listen ${ports[0]}' waits for it)`;
}

/**
 * The sysctl and what it means for the listeners of the holds' addresses and ports.
 * @param options `holds`: each hold's addresses and ports ({@link heldListeners}; none: every listener); `addr`, `ports`: one hold's (added to `holds`); `conn`: a NETLINK_SOCK_DIAG connection (one is opened in the default namespace otherwise); `netns`: where to read the sysctl (default: the library's default namespace)
 * @returns never throws for sock_diag trouble (`listeners: null`)
 * @throws {UsageError} the namespace does not exist, or an address is not an IP address
 * @throws {SynplugError} (`permission`) the namespace cannot be entered
 */
export async function migrateReqReport(
  options: { holds?: readonly HeldEndpoints[]; addr?: string; ports?: readonly number[]; conn?: SockDiagConnection; netns?: string } = {},
): Promise<MigrateReqReport> {
  const netns = options.netns ?? defaultNetns();
  const value = readTcpMigrateReq(netns);
  const one =
    options.addr !== undefined || options.ports !== undefined ? [{ addrs: options.addr !== undefined ? [options.addr] : [], ports: options.ports ?? [] }] : [];
  const holds = [...(options.holds ?? []), ...one];
  let groups: ListenerGroup[] | null;
  let unheard: number[] = [];
  try {
    const all = await listTcpListeners(options.conn);
    groups = groupListeners(heldListeners(all, holds));
    unheard = portsNotListened(all, holds);
  } catch (e) {
    if ((e as { category?: string }).category === 'usage') throw e;
    groups = null;
  }
  return {
    name: TCP_MIGRATE_REQ,
    value,
    ...(netns !== undefined && { netns }),
    listeners: groups,
    ...(unheard.length && { portsNotListened: unheard }),
    meaning: explainMigrateReq(value, groups),
  };
}
