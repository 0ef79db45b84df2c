/**
 * The inbound topology: a network namespace of the caller's own, joined to
 * the caller's namespace by a veth pair, with link-local addresses on both
 * ends. Clients started in the namespace reach a server in the caller's
 * namespace over the veth pair, so their SYNs *arrive* on the server-side
 * end: the device the inbound hold (`setup --inbound DEV`) sits on.
 *
 * Everything goes through netlink and two libc calls; no `ip` binary:
 *
 * - the namespace: `unshare(CLONE_NEWNET)` on the main thread (it moves only
 *   the calling thread, linux/sched.h), `open("/proc/thread-self/ns/net")`,
 *   then `setns()` back to the thread's own namespace, all synchronously (no
 *   other JavaScript runs in between). The namespace has no name under
 *   /run/netns: it lives as long as the file descriptor kept here, or a
 *   process inside it, so nothing named is ever left behind;
 * - the veth pair: RTM_NEWLINK with the peer created straight in the
 *   namespace (VETH_INFO_PEER with IFLA_NET_NS_FD);
 * - addresses: 169.254.S.1/30 (server side) and 169.254.S.2/30 (client
 *   side), and optionally fd00:5359:4e50:S::1/64 and ::2 (no DAD), on a
 *   /30 (/64) that no address of the caller's namespace uses;
 * - processes in the namespace: {@link InboundTopology.spawn} enters it on
 *   the main thread, spawns (libuv forks from the calling thread, so the
 *   child and all its threads start there), and returns, synchronously.
 *
 * {@link InboundTopology.remove} deletes the veth pair (deleting one end
 * deletes both) and closes the namespace's descriptor. A process killed with
 * SIGKILL leaves only a namespace held by its children: when they exit, the
 * kernel destroys it and the veth pair with it.
 *
 * Used by `synplug demo --inbound`, bench/reload's inbound method and the
 * kernel tests of both.
 *
 * @module
 */
import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { NetlinkConnection } from '../netlink/connection.js';
import { errnoName, NetlinkError, SynplugError } from '../netlink/errors.js';
import { bindLibcFunction, CLONE_NEWNET, lastErrno, libc, SocketError } from '../netlink/libc.js';
import { NETLINK_ROUTE } from '../netlink/message.js';
import { withNetns } from '../netlink/netns.js';
import { addAddress, listAddresses } from '../netlink/route/addr.js';
import { IFLA_ADDRESS, listLinks } from '../netlink/route/link.js';
import { createLink, deleteLink, LinkKindUnavailableError, newLinkRequest, probeLinkKind, setLinkUp } from '../netlink/route/linkinfo.js';
import { bin } from '../netlink/attributes.js';
import { MissingSupportError, type Support } from '../guard/support.js';

/** Options of {@link createInboundTopology}. */
export interface TopologyOptions {
  /** the devices' name prefix, 1-6 letters (default `spd`): names are PREFIX + a short id + `s` (server side) / `c` (client side) */
  prefix?: string;
  /** also add IPv6 addresses from fd00::/8 (default false) */
  ipv6?: boolean;
  /** called with a line per step */
  onStep?: (line: string) => void;
}

/** A created topology. Remove it with {@link InboundTopology.remove}. */
export interface InboundTopology {
  /** the veth end in the caller's namespace: where the clients' SYNs arrive (the inbound hold's device) */
  readonly serverDev: string;
  /** the veth end inside the namespace */
  readonly clientDev: string;
  /** IPv4 address of the server side (169.254.S.1, prefix 30) */
  readonly serverAddr: string;
  /** IPv4 address of the client side (169.254.S.2, prefix 30) */
  readonly clientAddr: string;
  /** IPv6 addresses (fd00:5359:4e50:S::1 and ::2, prefix 64), when asked for */
  readonly serverAddr6?: string;
  readonly clientAddr6?: string;
  /** the namespace as a path this process can open (`/proc/PID/fd/FD`), for {@link withNetns} or `NetlinkConnection.open({ netns })` */
  readonly netnsPath: string;
  /** what was created, in order, as sentences (`add veth spd1s (peer spd1c in the client namespace)`) */
  readonly created: readonly string[];
  /**
   * Start a process inside the namespace (`child_process.spawn` from inside it).
   * @throws {SynplugError} the topology was removed
   * @throws whatever `spawn` or `setns` throws
   */
  spawn(command: string, args: readonly string[], options?: SpawnOptions): ChildProcess;
  /**
   * Delete the veth pair and close the namespace's descriptor (once; later calls return []).
   * A pair already gone (its namespace died) is not an error.
   * @returns what was removed, as sentences
   * @throws {NetlinkError} the kernel refused the delete
   */
  remove(): Promise<string[]>;
}

/**
 * Whether the kernel has link kind veth, creating nothing: an RTM_NEWLINK
 * for a veth pair with a 1-byte IFLA_ADDRESS. The kernel looks the kind up
 * first (loading the module if it can; EOPNOTSUPP "Unknown device type" when
 * there is none), then veth's validate op refuses the address length
 * (EINVAL, veth_validate in drivers/net/veth.c), before any device is made.
 * Checked on 6.18 with `ip monitor link`: no link appears.
 * @param route a NETLINK_ROUTE connection
 * @returns `yes` or `no`
 * @throws {NetlinkError} EPERM/EACCES
 * @throws {SynplugError} the kernel accepted the request (it cannot, with that address): the pair is deleted again and this says so
 */
export async function probeVeth(route: NetlinkConnection): Promise<Support> {
  const name = 'spvethprobe';
  const req = newLinkRequest({ name, kind: 'veth', peer: { name: 'spvethprobp' } });
  req.payload.push(bin(IFLA_ADDRESS, Uint8Array.of(0)));
  const answer = await probeLinkKind(route, req);
  if (answer !== 'created') return answer === 'known' ? 'yes' : 'no';
  await deleteLink(route, name).catch(() => {});
  throw new SynplugError(`probing link kind 'veth' unexpectedly created ${name}; it was deleted again`);
}

/** The third octet (and IPv6 subnet) range the topology picks from: 169.254.200.0 - 169.254.249.255. */
const OCTET_FIRST = 200;
const OCTET_COUNT = 50;

let unshareFn: ((flags: number) => number) | undefined;

/**
 * Create a new network namespace and return a descriptor of it; the calling
 * thread is back in its own namespace when this returns.
 * @throws {SocketError} unshare or setns failed (EPERM: `permission`)
 */
export function createNetnsFd(): number {
  unshareFn ??= bindLibcFunction('unshare', 'int unshare(int flags)') as (flags: number) => number;
  const own = openSync('/proc/thread-self/ns/net', 'r');
  try {
    if (unshareFn(CLONE_NEWNET) !== 0) {
      const errno = lastErrno();
      const code = errnoName(errno);
      throw new SocketError(
        'unshare',
        errno,
        `cannot create a network namespace: unshare(CLONE_NEWNET) failed: ${code}${code === 'EPERM' ? ' (needs CAP_SYS_ADMIN: run as root)' : ''}`,
      );
    }
    let fd: number | undefined;
    let openError: unknown;
    try {
      fd = openSync('/proc/thread-self/ns/net', 'r');
    } catch (e) {
      openError = e;
    }
    if (libc('setns')(own, CLONE_NEWNET) !== 0) {
      const errno = lastErrno();
      throw new SocketError(
        'setns',
        errno,
        `could not return to the process's own network namespace after creating one: setns failed: ${errnoName(errno)}`,
        undefined,
        'kernel',
      );
    }
    if (fd === undefined) throw new SynplugError(`cannot open the new network namespace: ${(openError as Error)?.message ?? 'unknown error'}`, 'kernel');
    return fd;
  } finally {
    closeSync(own);
  }
}

function isIn(addr: string, third: number): boolean {
  const m = /^169\.254\.(\d+)\./.exec(addr);
  return m !== null && Number(m[1]) === third;
}

/**
 * Create the namespace, the veth pair (one end in it) and the addresses, and
 * set every link up (the namespace's `lo` too).
 * @param options see {@link TopologyOptions}
 * @throws {MissingSupportError} the kernel has no veth (`missing-module`)
 * @throws {SocketError} the namespace could not be created (`permission` without root)
 * @throws {NetlinkError} the kernel refused a step; what was created is removed first
 * @throws {SynplugError} no free 169.254.S.0/30 subnet among the 50 tried
 */
export async function createInboundTopology(options: TopologyOptions = {}): Promise<InboundTopology> {
  const prefix = options.prefix ?? 'spd';
  if (!/^[a-z]{1,6}$/.test(prefix)) throw new SynplugError(`topology: prefix '${prefix}' must be 1-6 lower-case letters`, 'usage');
  const step = options.onStep ?? (() => {});
  const root = NetlinkConnection.open(NETLINK_ROUTE);
  const created: string[] = [];
  let fd: number | undefined;
  let serverDev: string | undefined;
  let ns: NetlinkConnection | undefined;
  try {
    // A subnet and names nobody uses (several topologies may exist at once: tests in parallel).
    const used4 = (await listAddresses(root, { family: 'inet' })).map((a) => a.local ?? '');
    const names = new Set((await listLinks(root)).map((l) => l.ifname));
    const start = process.pid % OCTET_COUNT;
    let third: number | undefined;
    for (let i = 0; i < OCTET_COUNT; i++) {
      const t = OCTET_FIRST + ((start + i) % OCTET_COUNT);
      if (!used4.some((a) => isIn(a, t))) {
        third = t;
        break;
      }
    }
    if (third === undefined)
      throw new SynplugError(`topology: every subnet 169.254.${OCTET_FIRST}-${OCTET_FIRST + OCTET_COUNT - 1}.0/30 is in use on this machine`);
    let id = `${(process.pid % 46656).toString(36)}${third.toString(36)}`;
    for (let k = 0; names.has(`${prefix}${id}s`) || names.has(`${prefix}${id}c`); k++) id = `${(process.pid % 46656).toString(36)}${third.toString(36)}${k}`;
    const s = `${prefix}${id}s`;
    const c = `${prefix}${id}c`;

    fd = createNetnsFd();
    const netnsPath = `/proc/${process.pid}/fd/${fd}`;
    created.push('add a network namespace (unnamed, held by this process)');
    step(`creating veth ${s} (here) and ${c} (in the client namespace)`);
    try {
      await createLink(root, { name: s, kind: 'veth', peer: { name: c, netnsFd: fd } });
    } catch (e) {
      if (e instanceof LinkKindUnavailableError) throw new MissingSupportError([{ module: 'veth', what: 'link veth (the client namespace)' }]);
      throw e;
    }
    serverDev = s;
    created.push(`add veth ${s} (peer ${c} in the client namespace)`);
    const serverAddr = `169.254.${third}.1`;
    const clientAddr = `169.254.${third}.2`;
    const hex = third.toString(16);
    const serverAddr6 = options.ipv6 ? `fd00:5359:4e50:${hex}::1` : undefined;
    const clientAddr6 = options.ipv6 ? `fd00:5359:4e50:${hex}::2` : undefined;
    await addAddress(root, { dev: s, address: serverAddr, prefixlen: 30 });
    if (serverAddr6) await addAddress(root, { dev: s, address: serverAddr6, prefixlen: 64, nodad: true });
    await setLinkUp(root, s);
    ns = NetlinkConnection.open(NETLINK_ROUTE, { netns: netnsPath });
    await setLinkUp(ns, 'lo');
    await addAddress(ns, { dev: c, address: clientAddr, prefixlen: 30 });
    if (clientAddr6) await addAddress(ns, { dev: c, address: clientAddr6, prefixlen: 64, nodad: true });
    await setLinkUp(ns, c);
    created.push(
      `address ${serverAddr}/30${serverAddr6 ? ` and ${serverAddr6}/64` : ''} on ${s}, ${clientAddr}/30${clientAddr6 ? ` and ${clientAddr6}/64` : ''} on ${c}; links up`,
    );
    ns.close();
    ns = undefined;
    root.close();

    const nsFd = fd;
    let removed = false;
    return {
      serverDev: s,
      clientDev: c,
      serverAddr,
      clientAddr,
      ...(serverAddr6 && { serverAddr6, clientAddr6 }),
      netnsPath,
      created,
      spawn(command, args, opts = {}) {
        if (removed) throw new SynplugError('topology: removed; no process can start in its namespace');
        return withNetns(netnsPath, () => spawn(command, args, opts));
      },
      async remove() {
        if (removed) return [];
        removed = true;
        const out: string[] = [];
        const conn = NetlinkConnection.open(NETLINK_ROUTE);
        try {
          await deleteLink(conn, s);
          out.push(`delete veth ${s} (and its peer ${c})`);
        } catch (e) {
          // Gone already: its namespace died (every process in it exited), taking the pair with it.
          if (!(e instanceof NetlinkError && e.code === 'ENODEV')) throw e;
        } finally {
          conn.close();
          closeSync(nsFd);
        }
        out.push('close the client namespace');
        return out;
      },
    };
  } catch (e) {
    ns?.close();
    try {
      if (serverDev) await deleteLink(root, serverDev).catch(() => {});
    } finally {
      root.close();
      if (fd !== undefined) closeSync(fd);
    }
    throw e;
  }
}
