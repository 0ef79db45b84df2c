/**
 * The guard's per-call network namespace: every entry point (setup, check,
 * status, plug, release, protect, teardown, planSetup) takes `netns`, the
 * CLI's `--netns` for one call. The call runs with it as the namespace of
 * every connection it opens and of every process it starts (the watchdog,
 * the queue's holder), other calls of the same process keeping theirs
 * (netns.ts's `runInNetns`); its state directory is, unless given, that
 * namespace's own, as the CLI's.
 *
 * @module
 */
import { readdirSync } from 'node:fs';
import { NETNS_RUN_DIR, checkNetns, netnsCookie, netnsPath, netnsSpecOf, pinNetns, runInNetns, unpinNetns, type NetnsSpec } from '../netlink/netns.js';
import { refuseDotDot, untrustedPathComponent } from './state-fs.js';
import { UsageError } from '../netlink/errors.js';
import { cookieStateDir, netnsStateDir } from './state-dir.js';

/**
 * Refuse a namespace path that another user could point elsewhere, by the
 * state directory's rules ({@link untrustedPathComponent}: every directory
 * and link on the way, and the file, root's or this user's; no directory on
 * the way writable by others unless sticky), and a path with a `..`
 * component ({@link refuseDotDot}). A NAME is its file under /run/netns.
 * @param given the namespace as given (a descriptor number passes: it is this process's own)
 * @param spec the same through {@link netnsSpecOf}
 * @param what how the message names it: `--netns`, `setup: option 'netns'`
 * @throws {UsageError} a component is another user's or writable by others, or a `..` component
 */
export function checkNetnsPath(given: NetnsSpec, spec: string, what: string): void {
  if (typeof given === 'string' && given.includes('/')) refuseDotDot(given, what);
  const problem = untrustedPathComponent(netnsPath(spec));
  if (problem !== undefined)
    throw new UsageError(
      `${what} ${spec}: ${problem}: its owner could point it at another namespace, so synplug refuses it (as it refuses such a state directory); give a path that only root or this user controls (for another user's process: 'ip netns attach NAME PID' as root, then --netns NAME)`,
    );
}

/**
 * Run an entry point's body in the namespace its options name: `netns`
 * checked as the CLI checks `--netns` (opened non-blocking, a network
 * namespace this process can enter) before anything else is read or
 * changed, then `f` with the options without `netns`, `stateDir` defaulting
 * to the namespace's own ({@link netnsStateDir}).
 * @param entry the entry point, for the messages (`setup`...)
 * @param opts its options, with `netns`
 * @param f its body
 * @throws {UsageError} a bad namespace, or a path another user could redirect ({@link checkNetnsPath}; nothing done), or no cookie and no `stateDir`
 * @throws {SynplugError} (`permission`) not allowed to open or enter it
 */
export function inCallNetns<O extends { netns?: NetnsSpec; stateDir?: string }, T>(entry: string, opts: O, f: (opts: O) => Promise<T>): Promise<T> {
  const { netns, ...rest } = opts;
  const what = `${entry}: option 'netns'`;
  const spec = netnsSpecOf(netns!, what);
  checkNetnsPath(netns!, spec, what);
  // Opened once for the whole call: its check, its cookie, every socket and every child go through that descriptor.
  try {
    pinNetns(spec);
  } catch (e) {
    throw e instanceof UsageError ? new UsageError(`${what}: ${e.message}`) : e;
  }
  try {
    checkNetns(spec);
    const stateDir = rest.stateDir ?? netnsStateDir(spec, 'the option stateDir');
    const done = runInNetns(spec, () => f({ ...rest, stateDir } as O));
    return done.finally(() => unpinNetns(spec));
  } catch (e) {
    unpinNetns(spec);
    throw e;
  }
}

/**
 * The namespace of a cookie, as a person names it: the host's (that of
 * process 1), or a name under /run/netns; undefined when none of those has it
 * (a namespace of `unshare -n`, or one gone).
 */
function netnsNameOf(cookie: string): { host: true } | { name: string } | undefined {
  const cookieOf = (spec: string): string | undefined => {
    try {
      return netnsCookie(spec);
    } catch {
      return undefined;
    }
  };
  if (cookieOf('/proc/1/ns/net') === cookie) return { host: true };
  let names: string[] = [];
  try {
    names = readdirSync(NETNS_RUN_DIR);
  } catch {
    /* no named namespaces */
  }
  const name = names.find((n) => cookieOf(n) === cookie);
  return name !== undefined ? { name } : undefined;
}

/**
 * Why a setup record of another network namespace is refused (a state
 * directory shared by namespaces: a `--state-dir` or SYNPLUG_STATE_DIR
 * given to commands run in different namespaces, an unnamed `unshare -n`
 * that state-dir.ts cannot tell from home), naming that namespace and what to run; nothing is read or
 * changed.
 * @param path the record
 * @param recorded the record's namespace cookie
 * @param here the cookie of the namespace the command acts in
 */
export function otherNetnsMessage(path: string, recorded: string, here: string): string {
  const owner = netnsNameOf(recorded);
  const which =
    owner === undefined
      ? `network namespace cookie ${recorded} (one without a name in ${NETNS_RUN_DIR}, or one that is gone)`
      : 'host' in owner
        ? `the host's network namespace (that of process 1; cookie ${recorded})`
        : `network namespace ${owner.name} (cookie ${recorded})`;
  const run =
    owner === undefined
      ? 'run synplug in that namespace'
      : 'host' in owner
        ? "run synplug in the host's namespace (not under ip netns exec or unshare -n)"
        : `run 'synplug <command> --netns ${owner.name}' (or 'ip netns exec ${owner.name} synplug <command>')`;
  // A namespace that is gone took what synplug set up in it along: its record is all that is left.
  const gone =
    owner === undefined
      ? ` If that namespace is gone (deleted, or its last process ended), so is everything synplug set up in it: remove the record ('rm ${path}') to use this state directory here.`
      : '';
  return (
    `${path} records the holds of ${which}, not of the network namespace this command acts in (cookie ${here}): nothing was changed. ` +
    `For those holds, ${run} with the same state directory.${gone} For this namespace, give a state directory of its own (--state-dir DIR), ` +
    `or name it (ip netns attach NAME PID) and run synplug with --netns NAME or under 'ip netns exec NAME': its default state directory is then its own (${cookieStateDir('<cookie>')})`
  );
}
