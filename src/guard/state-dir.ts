/**
 * The guard's default state directory, one function for every caller (the
 * CLI's commands, the library's entry points, history, the demo's `--here`):
 * `/run/synplug` in synplug's home network namespace, and
 * `/run/synplug/netns/<cookie>` in any other, whether the namespace is named
 * (`--netns NS`, the library's `netns`) or is the one synplug runs in (`ip
 * netns exec NS synplug ...`), so that two namespaces' holds never share one
 * record directory.
 *
 * Which namespace is home: that of process 1 where `/proc/1/ns/net` can be
 * read (a process of another user, or a root without CAP_SYS_PTRACE, cannot);
 * where it cannot, a namespace synplug runs in is another one when it is a
 * named namespace under /run/netns (what `ip netns exec` enters), found by
 * the device and inode of `/proc/thread-self/ns/net`. An unnamed namespace
 * (`unshare -n`) is then not told apart from home: give it a state directory.
 *
 * @module
 */
import { lstatSync, readdirSync, statSync, type Stats } from 'node:fs';
import { UsageError } from '../netlink/errors.js';
import { NETNS_RUN_DIR, defaultNetns, netnsCookie } from '../netlink/netns.js';
import { untrustedPathComponent } from './state-fs.js';

/** The state directory of synplug's home network namespace (that of process 1). */
export const HOME_STATE_DIR = '/run/synplug';

/** The default state directory of a namespace of this cookie (SO_NETNS_COOKIE, decimal). */
export function cookieStateDir(cookie: string): string {
  return `${HOME_STATE_DIR}/netns/${cookie}`;
}

/** A namespace file's identity: the device and inode of its nsfs inode (what `/proc/PID/ns/net` links to). */
export interface NsId {
  dev: number;
  ino: number;
}

/** stat(2) of a namespace file (following a link), or undefined when it cannot be read. */
function nsIdOf(path: string): NsId | undefined {
  try {
    const st = statSync(path);
    return { dev: st.dev, ino: st.ino };
  } catch {
    return undefined;
  }
}

/**
 * The name under /run/netns of a namespace, by the device and inode of its
 * file: a name whose file (lstat: a bind mount of the namespace, as `ip netns
 * add` and `ip netns attach` make; never a symbolic link) is that namespace,
 * and whose path only root or this user controls (the state directory's
 * rules, {@link untrustedPathComponent}, as `--netns NAME` is checked); the
 * first in name order when several name it.
 * @param id the namespace's device and inode
 * @param dir the folder of named namespaces (tests)
 * @returns the name, or undefined (none, or only untrusted ones)
 */
export function namedNetnsOf(id: NsId, dir: string = NETNS_RUN_DIR): string | undefined {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return undefined; // no named namespaces
  }
  for (const name of names) {
    const path = `${dir}/${name}`;
    let st: Stats;
    try {
      st = lstatSync(path);
    } catch {
      continue;
    }
    if (!st.isFile() || st.dev !== id.dev || st.ino !== id.ino) continue;
    if (untrustedPathComponent(path) === undefined) return name;
  }
  return undefined;
}

/** Where a namespace's identity is read (tests give others). */
export interface NetnsPlaces {
  /** this thread's namespace; default `/proc/thread-self/ns/net` */
  own?: string;
  /** the home namespace's; default `/proc/1/ns/net` */
  home?: string;
  /** the folder of named namespaces; default /run/netns */
  named?: string;
}

/**
 * Whether synplug runs in a network namespace other than its home one, and
 * how messages name it.
 * @param places where to look (tests)
 * @returns undefined at home (or when it cannot be told); else `{ name }`
 *   for a namespace named under /run/netns, `{}` for another one (seen
 *   against process 1's)
 */
export function awayFromHome(places: NetnsPlaces = {}): { name?: string } | undefined {
  const own = nsIdOf(places.own ?? '/proc/thread-self/ns/net');
  if (own === undefined) return undefined; // no /proc: nothing to tell it by
  const home = nsIdOf(places.home ?? '/proc/1/ns/net');
  if (home !== undefined && home.dev === own.dev && home.ino === own.ino) return undefined;
  const name = namedNetnsOf(own, places.named);
  // Process 1's namespace known: any other is away (named or not); unknown: only a named one is.
  if (home !== undefined) return name !== undefined ? { name } : {};
  return name !== undefined ? { name } : undefined;
}

/**
 * The default state directory of a network namespace other than synplug's
 * home one: one per namespace, keyed by the namespace's cookie
 * (SO_NETNS_COOKIE), which the kernel never gives to another namespace, so
 * that acting on a container's namespace never touches the host's records,
 * and a namespace made after one was deleted (which may get its inode
 * number) never finds the deleted one's records. A kernel without
 * SO_NETNS_COOKIE (before 5.14) has no such key: a state directory must then
 * be given.
 * @param ns NAME or PATH of the namespace acted in; default: the library's default namespace (the CLI's `--netns`,
 *   the call's `netns`); without one, the namespace synplug runs in, when it is not home ({@link awayFromHome})
 * @param give how to give a state directory, for the message (`--state-dir DIR`, `the option stateDir`)
 * @returns `/run/synplug/netns/<cookie>`, or undefined in synplug's home namespace
 * @throws {UsageError} the namespace is not one (see netnsCookie), or the kernel has no cookie
 */
export function netnsStateDir(ns: string | undefined = defaultNetns(), give = '--state-dir DIR'): string | undefined {
  const away = ns === undefined ? awayFromHome() : { name: ns };
  if (away === undefined) return undefined;
  const cookie = netnsCookie(ns);
  if (cookie === undefined) {
    const which =
      ns !== undefined
        ? `with network namespace ${ns}`
        : `in ${away.name !== undefined ? `network namespace ${away.name} (ip netns exec)` : 'a network namespace other than that of process 1'}`;
    throw new UsageError(
      `this kernel has no network namespace cookie (SO_NETNS_COOKIE, Linux 5.14+), the key of a namespace's default state directory: ${which}, give ${give} (a directory of that namespace's own), as a namespace's inode number is reused after it is deleted`,
    );
  }
  return cookieStateDir(cookie);
}

/**
 * The state directory used when none is given: {@link netnsStateDir}, else
 * {@link HOME_STATE_DIR}.
 * @param give how to give a state directory, for the message
 * @throws {UsageError} as {@link netnsStateDir}
 */
export function defaultStateDir(give = 'the option stateDir'): string {
  return netnsStateDir(undefined, give) ?? HOME_STATE_DIR;
}
