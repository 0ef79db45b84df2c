/**
 * The demo's phase one: everything it needs, checked before it creates or
 * changes anything (no namespace, no veth pair, no hold, no server).
 *
 * - CAP_NET_ADMIN ({@link hasNetAdmin}): without it, {@link NotPermittedError};
 *   `--inbound` also CAP_SYS_ADMIN (a new network namespace): category
 *   `permission` too.
 * - Every kernel module the run needs, all named in ONE
 *   {@link MissingSupportError} (the guard's own probes, which change
 *   nothing, are called here, not copied):
 *   - the plain demo: the local hold's modules (sch_prio, sch_plug, cls_fw,
 *     nf_tables: the local mode's `probeSupport`);
 *   - `--inbound`: the inbound hold's (sch_plug, sch_ingress for clsact,
 *     act_mirred, ifb, and cls_flower or else cls_u32: the inbound mode's
 *     `probeSupport`) and veth for the client namespace
 *     ({@link probeVeth});
 *   - both: the TCP socket diagnostics (inet_diag, tcp_diag) that each
 *     restart's drain and protect's release on the new listener read.
 *
 * A foreign root qdisc on `lo` is refused by the local hold's setup itself,
 * before its first step (the demo starts nothing before that setup), and
 * never replaced; the inbound demo does not touch `lo`.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { NetlinkConnection } from '../netlink/connection.js';
import { SynplugError } from '../netlink/errors.js';
import { NETLINK_ROUTE } from '../netlink/message.js';
import { netnsCookie } from '../netlink/netns.js';
import { DEFAULTS, resolveConfig } from '../guard/config.js';
import { cookieStateDir } from '../guard/state-dir.js';
import { GuardSession } from '../guard/session.js';
import { StateStore } from '../guard/state.js';
import { liveLeases } from '../guard/leases.js';
import { deviceOfHold, holdModeFor } from '../guard/modes/index.js';
import type { HoldMode } from '../guard/modes/types.js';
import {
  CAP_SYS_ADMIN,
  hasEffectiveCapability,
  hasNetAdmin,
  MissingSupportError,
  NotPermittedError,
  probeSockDiag,
  type ModulePiece,
} from '../guard/support.js';
import { probeVeth } from './topology.js';

/** What {@link demoPreflight} found. */
export interface DemoPreflight {
  /** modules whose presence could not be checked (`cls_fw (filter fw)`); setup finds out for sure, transactionally */
  unverified: string[];
  /** the hold this kernel supports: the plug hold where it has what it needs, else the queue hold */
  via: 'plug' | 'queue';
  /** why the queue hold, when it is the one (what the plug hold lacks here) */
  why?: string;
}

/**
 * Check, changing nothing, that the demo can run here.
 * @param o `inbound`: the `--inbound` demo; `what`: the command's name for the permission message
 * @returns what could not be checked
 * @throws {NotPermittedError} no CAP_NET_ADMIN (`permission`)
 * @throws {SynplugError} `inbound` without CAP_SYS_ADMIN (`permission`)
 * @throws {MissingSupportError} one or more modules are missing, every one named at once (`missing-module`); nothing was changed
 * @throws {NetlinkError} a probe was refused unexpectedly (EPERM...)
 */
export async function demoPreflight(o: { inbound: boolean; what: string; via?: 'auto' | 'plug' | 'queue' }): Promise<DemoPreflight> {
  if (!hasNetAdmin()) throw new NotPermittedError(o.what);
  if (o.inbound && hasEffectiveCapability(CAP_SYS_ADMIN) === false) {
    throw new SynplugError(
      `${o.what} needs CAP_SYS_ADMIN to create its network namespace (unshare): run it as root (or grant the capability); nothing was changed`,
      'permission',
    );
  }
  // The probes' configuration: nothing is read from or written to a state directory here.
  const config = resolveConfig({ stateDir: DEFAULTS.stateDir });
  const route = NetlinkConnection.open(NETLINK_ROUTE);
  // A session over this socket and no holds: the holds below probe through it (nothing is opened for the record).
  const s = GuardSession.fromParts(config, route, () => []);
  const missing: ModulePiece[] = [];
  const unverified: ModulePiece[] = [];
  let via: DemoPreflight['via'] = 'plug';
  let why: string | undefined;
  let alternative: string | undefined;
  try {
    // The hold's probes on the default configuration (on lo): they change nothing.
    if (o.inbound && (await probeVeth(route)) === 'no') missing.push({ module: 'veth', what: "link veth (the demo's client namespace)" });
    // The plug hold where the kernel has what it needs, else the queue hold; with neither, what the plug hold lacks.
    const scope = o.inbound ? 'inbound' : 'local';
    const wanted = o.via ?? 'auto';
    const plug = holdModeFor(wanted === 'queue' ? 'queue' : 'plug', scope);
    if (!plug) throw new SynplugError(`this synplug has no ${scope} hold mode, which the demo needs`);
    const sup = await plug.probeSupport(s, config);
    const queue = sup.missing.length && wanted !== 'queue' ? holdModeFor('queue', scope) : undefined;
    const qsup = queue ? await queue.probeSupport(s, config) : undefined;
    // --via plug where the plug hold cannot run but the queue hold can: the refusal names it
    if (wanted === 'plug' && qsup && !qsup.missing.length)
      alternative = `the queue hold works on this kernel: 'synplug ${o.what} --via queue' (or leave --via out)`;
    if (wanted === 'queue') via = 'queue';
    if (wanted === 'auto' && qsup && !qsup.missing.length) {
      via = 'queue';
      why = `this kernel lacks ${sup.missing.map((p) => p.module).join(', ')}, which the plug hold needs`;
      unverified.push(...qsup.unverified);
    } else {
      missing.push(...sup.missing);
      unverified.push(...sup.unverified);
    }
    const diag = await probeSockDiag('TCP socket diagnostics (the restarts see the new listener)');
    if (diag) missing.push(...diag);
  } finally {
    s.close();
  }
  if (missing.length) {
    const e = new MissingSupportError(missing, unverified);
    if (alternative !== undefined) e.message += `; ${alternative}`;
    throw e;
  }
  return { unverified: unverified.map((p) => `${p.module} (${p.what})`), via, ...(why !== undefined && { why }) };
}

/**
 * Refuse, changing nothing, a `--here` demo whose hold is in the kernel
 * already though the demo's state directory records none: a setup made with
 * another state directory (another `--state-dir`, or `setup --netns NS` from
 * another namespace, whose record is in `/run/synplug/netns/<cookie>`). The
 * demo's setup would take that hold's pieces for its own, and its teardown
 * would remove them (the address too) at the end; and its protects could not
 * use the hold without that setup's record. A piece counts when it is one
 * that makes a setup: an address without synplug's mark (the user's own,
 * which setup leaves alone) does not, nor do pieces that exist only around
 * a hold. Called only when the state directory records no such hold.
 * @param mode the local hold's mode (the one the demo would set up)
 * @param stateDir the demo's state directory (undefined: the default)
 * @throws {SynplugError} (`not-set-up`) the pieces found, named, with where the hold's record may be and how to run the demo instead
 * @throws {SynplugError} what the hold's setup itself refuses before any step (a foreign root qdisc: `foreign-state`)
 * @throws {NetlinkError} a listing was refused
 */
export async function refuseUnrecordedHold(mode: HoldMode, stateDir: string | undefined): Promise<void> {
  const config = resolveConfig(stateDir !== undefined ? { stateDir } : {});
  const route = NetlinkConnection.open(NETLINK_ROUTE);
  const s = GuardSession.fromParts(config, route, () => []);
  let found: string[];
  try {
    const { hold } = await mode.openForSetup(s, config, { via: mode.via }, undefined);
    try {
      const pieces = hold.pieces;
      const o = await pieces.observe();
      pieces.refuse?.(o, {}); // what setup would refuse anyway, in its own words
      found = pieces.list.flatMap((p) => {
        if (p.lifetime === 'armed' || p.optional?.(o)) return [];
        const st = p.judge(o);
        return st.status === 'missing' ? [] : [st.piece];
      });
    } finally {
      hold.close?.();
    }
  } finally {
    s.close();
  }
  if (!found.length) return;
  const label = mode.describe({ scope: 'local', dev: config.dev, addr: config.addr }).label;
  const elsewhere = netnsRecordDir(config.stateDir);
  throw new SynplugError(
    `synplug's ${label} is already in this network namespace (${[...new Set(found)].join('; ')}), but the state directory ${config.stateDir} does not record it: ` +
      `it was set up with another state directory${elsewhere ? ` (probably ${elsewhere}, that of 'synplug setup --netns' run from another namespace)` : ''}. ` +
      `The demo removes nothing it did not set up, and uses a hold only with its record: run 'synplug demo --here --state-dir ${elsewhere ?? 'DIR'}' with ${elsewhere ? 'that' : "that setup's"} state directory (the hold is then used and left as it is), or 'synplug demo' without --here (in a network namespace of its own); nothing was changed`,
    'not-set-up',
  );
}

/**
 * The default state directory of this network namespace for a synplug run
 * from another one with `--netns` (`/run/synplug/netns/<cookie>`), when it
 * holds a setup record and is not `stateDir` (in a namespace whose own default
 * it is, ip netns exec's, it is `stateDir` already).
 */
function netnsRecordDir(stateDir: string): string | undefined {
  let cookie: string | undefined;
  try {
    cookie = netnsCookie(undefined);
  } catch {
    return undefined;
  }
  if (cookie === undefined) return undefined;
  const dir = cookieStateDir(cookie);
  return dir !== stateDir.replace(/\/+$/, '') && existsSync(join(dir, 'setup.json')) ? dir : undefined;
}

/**
 * `demo --here`: refuse when a hold of the state directory is held already (a
 * live lease: a manual `synplug plug` before its deadline, or a running
 * `protect`). Every new connection to the hold's address would then wait for
 * that hold to end, in both phases: the demo would measure that hold, not a
 * restart, and blame synplug for it. Reads only the leases record.
 * @param stateDir the demo's `--state-dir` (undefined: the default)
 * @throws {SynplugError} (`not-set-up`) a live lease, named, with how to end it; nothing was changed
 * @throws {StateFileError} a damaged or unsafe leases.json or state directory (as for every command)
 */
export function refuseHeldAlready(stateDir: string | undefined): void {
  const config = resolveConfig(stateDir !== undefined ? { stateDir } : {});
  const live = liveLeases(new StateStore(config.stateDir));
  if (!live.length) return;
  const dirOption = stateDir !== undefined ? ` --state-dir ${stateDir}` : '';
  const until = (ms: number) => new Date(ms).toISOString();
  const who = live.map((l) =>
    l.owner === 'manual'
      ? `a manual 'synplug plug' (pid ${l.pid}) holds ${l.holds.join(', ')} until its --max-hold at ${until(l.deadline)}`
      : `a running 'synplug protect' (pid ${l.pid}${Array.isArray(l.command) ? `: ${l.command.join(' ')}` : ''}) holds ${l.holds.join(', ')}, at most until ${until(l.deadline)}`,
  );
  const manual = live.some((l) => l.owner === 'manual');
  throw new SynplugError(
    `demo --here: the hold is already held: ${who.join('; ')}. Every new connection to it waits for that hold to end, so the demo would measure that hold, not a restart. ` +
      `${manual ? `End it with 'synplug release${dirOption}'` : 'Wait for the protect to end'} (or until its deadline), then run the demo again; or run 'synplug demo' without --here (in a network namespace of its own). Nothing was changed`,
    'not-set-up',
  );
}

/** The device the local hold sits on, the only one the demo's local clients pass. */
export const LOCAL_DEV = 'lo';

/**
 * `demo --here`: refuse when the state directory records a hold the demo
 * does not use: the demo's protect holds every hold of its state directory,
 * so an operator's inbound hold (or, for `--inbound`, any hold: the demo
 * sets up an inbound hold of its own) would be held on each of the demo's
 * restarts, delaying its real clients, and those restarts recorded in its
 * history. The local demo uses only the local hold on lo (set up by it, or
 * already set up and left as it was). Reads only the setup record.
 * @param stateDir the demo's `--state-dir` (undefined: the default)
 * @param inbound `demo --here --inbound`
 * @throws {SynplugError} (`not-set-up`) the other holds, named, with what to do; nothing was changed
 * @throws {StateFileError} a damaged or unsafe setup.json or state directory (as for every command)
 */
export function refuseOtherHolds(stateDir: string | undefined, inbound: boolean): void {
  const config = resolveConfig(stateDir !== undefined ? { stateDir } : {});
  const ids = Object.keys(new StateStore(config.stateDir).readSetup()?.holds ?? {});
  const others = ids.filter((id) => inbound || deviceOfHold(id, LOCAL_DEV) !== LOCAL_DEV);
  if (!others.length) return;
  throw new SynplugError(
    `demo --here${inbound ? ' --inbound' : ''}: the state directory ${config.stateDir} records other holds (${others.join(', ')}): the demo's protected restarts would hold them too, delaying their clients, and record those restarts in their history. ` +
      `The demo holds only ${inbound ? 'an inbound hold of its own' : `the local hold on ${LOCAL_DEV}`}: run 'synplug demo' without --here (in a network namespace of its own), or --here where no other hold is set up. Nothing was changed`,
    'not-set-up',
  );
}
