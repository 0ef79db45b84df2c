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
import { NetlinkConnection } from '../netlink/connection.js';
import { SynplugError } from '../netlink/errors.js';
import { NETLINK_ROUTE } from '../netlink/message.js';
import { resolveConfig } from '../guard/config.js';
import { GuardSession } from '../guard/session.js';
import { holdModeFor } from '../guard/modes/index.js';
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
  const config = resolveConfig({});
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
