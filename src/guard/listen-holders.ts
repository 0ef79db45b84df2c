/**
 * Which processes hold a listening socket: the second readiness signal of
 * `protect --wait-listen` (issue 14 item 4).
 *
 * A reload that hands its listening sockets over opens no new socket: HAProxy
 * in master-worker mode reloaded with USR2 (`systemctl reload haproxy`), nginx
 * `-s reload`, HAProxy `-sf -x`. The socket (its inode) stays; connections
 * queue on it meanwhile and nothing is lost; the reload has happened once a
 * process that did not hold it before holds it (the new worker, which
 * inherited or received the descriptor). Waiting for a *new* socket there
 * would hold until `--max-hold`. {@link socketHolders} finds the holders the
 * way `ss -p` and `lsof` do: each `/proc/PID/fd/N` that links to
 * `socket:[INODE]`. Socket inodes are unique on the host, whatever the
 * network namespace; processes of another PID namespace are seen only if
 * this one's /proc shows them.
 *
 * The third signal is the opposite one: a socket that was there before the
 * reload and that only processes of before the reload still hold is one the
 * reload is closing (nginx changing its worker count closes one socket of its
 * `reuseport` group; HAProxy `-sf` closes the old process's socket). A SYN
 * released into it is queued there and reset when it closes, so the wait
 * also lasts until no such socket is left ({@link closingInodes}).
 *
 * @module
 */
import { readdirSync, readlinkSync } from 'node:fs';

/**
 * The processes that hold any of these sockets, by inode.
 * @param inodes socket inodes (sock_diag's `inode`)
 * @param proc the proc file system (default `/proc`; tests give a fake tree)
 * @returns inode -> pids holding it (inodes nobody holds are absent); processes that vanish or cannot be read are skipped
 */
export function socketHolders(inodes: Iterable<number>, proc = '/proc'): Map<number, Set<number>> {
  const wanted = new Set<string>();
  for (const i of inodes) wanted.add(`socket:[${i}]`);
  const out = new Map<number, Set<number>>();
  if (wanted.size === 0) return out;
  let pids: string[];
  try {
    pids = readdirSync(proc);
  } catch {
    return out;
  }
  for (const pid of pids) {
    if (!/^[0-9]+$/.test(pid)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`${proc}/${pid}/fd`);
    } catch {
      continue; // gone, or not ours to read
    }
    for (const fd of fds) {
      let link: string;
      try {
        link = readlinkSync(`${proc}/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      if (!wanted.has(link)) continue;
      const inode = Number(link.slice(8, -1));
      const set = out.get(inode) ?? new Set<number>();
      set.add(Number(pid));
      out.set(inode, set);
    }
  }
  return out;
}

/**
 * Every pid that holds any of these sockets.
 * @param inodes socket inodes
 * @param proc the proc file system (default `/proc`)
 */
export function holderPids(inodes: Iterable<number>, proc = '/proc'): Set<number> {
  const all = new Set<number>();
  for (const pids of socketHolders(inodes, proc).values()) for (const p of pids) all.add(p);
  return all;
}

/**
 * The first of `inodes` that a process outside `before` now holds: the
 * socket was handed over to a new process (the reload took it up).
 * @param inodes the listening sockets that existed before the reload and still listen
 * @param before the pids that held any of them before the reload
 * @param proc the proc file system (default `/proc`)
 * @returns that inode, or undefined
 */
export function handedOverInode(inodes: Iterable<number>, before: ReadonlySet<number>, proc = '/proc'): number | undefined {
  for (const [inode, pids] of socketHolders(inodes, proc)) {
    for (const p of pids) if (!before.has(p)) return inode;
  }
  return undefined;
}

/**
 * The sockets among `inodes` that only processes of `before` hold: sockets
 * the reload leaves behind, which close when those processes let them go (a
 * SYN queued on one then is reset). Sockets no visible process holds (a
 * server in a PID namespace this /proc does not show) are not counted: their
 * holders cannot be told apart.
 * @param inodes the listening sockets that existed before the reload and still listen
 * @param before the pids that held any of them before the reload
 * @param proc the proc file system (default `/proc`)
 * @returns those inodes, in the order given (empty: none is closing)
 */
export function closingInodes(inodes: Iterable<number>, before: ReadonlySet<number>, proc = '/proc'): number[] {
  const list = [...inodes];
  const holders = socketHolders(list, proc);
  return list.filter((i) => {
    const pids = holders.get(i);
    return pids !== undefined && pids.size > 0 && [...pids].every((p) => before.has(p));
  });
}
