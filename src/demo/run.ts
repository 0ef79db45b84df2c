/**
 * `synplug demo`: the technique shown on this machine with nothing else
 * installed. A pong server in this process, on the hold's address, is
 * restarted without socket hand-over (its listening socket closed, a new one
 * opened after a gap) while client loops open a new connection per request:
 *
 * 1. **unprotected**: the restarts alone. Connections made during the gap
 *    are refused; those waiting in the old socket's accept queue are reset.
 * 2. **protected**: each restart runs under the library's own {@link protect},
 *    as a real reload would: `protect` plugs, runs a restart command, and
 *    releases once a *new* listening socket exists (`waitListen`).
 *
 * Why `protect()` itself, and not the lower-level plug and release: it is
 * exactly the machinery a user's reload gets, with every safety it has. It
 * starts its watchdog (a process of its own) before it plugs, so that if the
 * demo is killed, even by SIGKILL, the watchdog releases at once; it arms the
 * kernel-side deadline (the nftables set element expires after the max-hold:
 * the gap, the drain's bound and 10 s), records the plug in plug.json for the next command's
 * stale-plug recovery, and releases on every path. The cost is a watchdog
 * start per restart (tens of ms on a host, seconds in a software-emulated VM),
 * spent before the plug, outside the hold.
 *
 * Each restart, in both phases, first drains the listening socket's accept
 * queue (see server.ts): it waits, at most options.ts's `DRAIN_MAX_MS`, until
 * sock_diag reports the queue empty, then closes the socket. Unprotected, new
 * connections keep arriving and what is queued at the close is reset; under
 * the plug the queue empties. `queuedAtClose` reports what was left.
 *
 * The restart command is `/bin/sh -c 'kill -s USR2 <this pid>'`: like
 * `systemctl reload` or `nginx -s reload`, it signals the server, whose
 * restart (close, gap, listen) runs in this process. protect releases when
 * the command has exited and sock_diag shows a listening socket whose inode
 * was not there before the plug, or at the max-hold.
 *
 * Where: by default {@link runDemo} runs all of this in a network namespace
 * of its own, in a process of its own (isolated.ts), so that the caller's
 * namespace is never changed; that process runs it with `here: true`. What
 * follows is what a run with `here: true` does in its namespace (with
 * `--here`, the caller's).
 *
 * Set-up: when the local hold is not set up, the demo sets it up (the
 * library's {@link setup}: on `lo`, 169.254.255.254 by default) and removes it
 * again at the end, on every failure, and on SIGINT/SIGTERM (library
 * {@link teardown}, which removes exactly what that setup recorded adding).
 * A hold that was already set up is used and left as it was. A partial setup,
 * one on another device, or one whose pieces are in the kernel though the
 * state directory does not record it (another setup's: preflight.ts's
 * {@link refuseUnrecordedHold}) is refused: the demo changes no setup it did
 * not make, and never removes what it did not add. Only SIGKILL can leave the demo's setup in place (never a plug: see
 * the watchdog above); `synplug teardown` removes it.
 *
 * `inbound: true` (`synplug demo --inbound`): the clients are on "the
 * network" instead. The demo creates a network namespace of its own joined by
 * a veth pair (topology.ts), listens on its end of the pair (169.254.S.1),
 * sets up the inbound hold of that end for the server's port (library
 * {@link setup} with `inbound`), and runs the client loops in a child process
 * started inside the namespace (client-child.ts), so that every SYN
 * arrives on the veth end and is redirected to the hold's IFB. The restarts
 * and protect are the same. At the end, on failure and on SIGINT/SIGTERM it
 * stops the client process, removes that hold ({@link teardown} with
 * `inbound`) and deletes the pair and the namespace. After a SIGKILL the
 * watchdog releases the plug, the client process exits when its IPC channel
 * closes (the namespace and the pair go with it), and `synplug teardown`
 * removes the IFB.
 *
 * Phase one (preflight.ts) comes before any of this: CAP_NET_ADMIN and
 * every module the run needs, all missing ones named in one error; nothing
 * is created until it passed.
 *
 * The engine prints nothing and knows no exit code: it returns a
 * {@link DemoResult} whose `verdict` the CLI turns into its exit code, and
 * throws {@link SynplugError}s with a category.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { SynplugError, UsageError } from '../netlink/errors.js';
import { NetlinkConnection } from '../netlink/connection.js';
import { NETLINK_ROUTE, NETLINK_SOCK_DIAG } from '../netlink/message.js';
import { listLinks } from '../netlink/route/link.js';
import { listTcpListeners } from '../netlink/sockdiag.js';
import { check, setup, teardown, protect, holdModeFor, removeReportCounters, DEFAULTS, type HoldMode, type ProtectResult } from '../guard/index.js';
import { REPORT_TABLE } from '../guard/report.js';
import { demoPreflight, LOCAL_DEV, refuseHeldAlready, refuseOtherHolds, refuseUnrecordedHold } from './preflight.js';
import { ClientLoad } from './clients.js';
import { ClientProcess } from './client-process.js';
import { createInboundTopology, type InboundTopology } from './topology.js';
import { PongServer } from './server.js';
import { PHASE_STRETCH, resolveDemoOptions, restartDueMs, type ResolvedDemoOptions } from './options.js';
import { phaseResult, verdictOf } from './stats.js';
import { runDemoIsolated } from './isolated.js';
import type { DemoOptions, DemoResult, PhaseResult, RequestRecord, RestartResult } from './types.js';

/** The demo was stopped by a signal (or its AbortSignal); what it set up was removed. Category `interrupted`. */
export class DemoInterruptedError extends SynplugError {
  /**
   * @param by the signal's name (`SIGINT`, `SIGTERM`) or `abort`
   * @param cleaned what was removed, for the message
   * @param started whether its server had started (default true): before, it says it stopped before starting them
   */
  constructor(
    readonly by: string,
    cleaned: string,
    started = true,
  ) {
    super(
      `demo interrupted by ${by}: ${started ? 'it stopped its clients and server' : 'it stopped before starting its server and clients'}${cleaned}`,
      'interrupted',
    );
    this.name = 'DemoInterruptedError';
  }
}

export { PHASE_STRETCH };

interface Ctx {
  o: ResolvedDemoOptions;
  addr: string;
  server: PongServer;
  /** the drain of each restart: the listening socket's accept queue length (sock_diag) */
  drain: { probe: () => Promise<number | null>; maxMs: number };
  stateDir?: string;
  progress: (line: string) => void;
  stopped: () => string | undefined;
  stopWait: AbortSignal;
  notices: string[];
  /** inbound mode: the client process in the demo's namespace (local mode: the clients run in this process) */
  clientProc?: ClientProcess;
  /** the restart the next SIGUSR2 starts (protected phase) */
  usr2: { armed: boolean; drain?: Ctx['drain']; restart?: Promise<{ closedMs: number; queuedAtClose: number | null }> };
}

/**
 * Run the demo: set up when needed, phase 1 unprotected, phase 2 protected,
 * clean up; without `here`, in a network namespace of its own ({@link runDemoIsolated}).
 * @param options see {@link DemoOptions}; all optional
 * @returns both phases' requests, failures by kind, latency, restarts with held time and SYNs held, and the verdict
 * @throws {UsageError} an option out of bounds (category `usage`); nothing was set up
 * @throws {NotPermittedError} no CAP_NET_ADMIN (`permission`); with `inbound`, no CAP_SYS_ADMIN is `permission` too (a SynplugError)
 * @throws {MissingSupportError} the kernel lacks modules the run needs, all named in one message (`missing-module`), checked
 *   before anything is created (preflight.ts): sch_prio, sch_plug, cls_fw, nf_tables (the local hold); with `inbound`
 *   veth, ifb, sch_plug, sch_ingress, act_mirred, cls_flower or cls_u32; both: inet_diag and tcp_diag. Nothing was changed
 * @throws {ForeignQdiscError} `lo` has a root qdisc that is not synplug's (`foreign-state`): it is never replaced
 * @throws {SynplugError} `not-set-up`: the hold is partly set up, set up on another device than lo, or in the kernel but not recorded in
 *   the state directory (the demo changes no setup it did not make); nothing was changed
 * @throws {DemoInterruptedError} SIGINT/SIGTERM or the AbortSignal (`interrupted`), after cleaning up
 * @throws {DemoProcessError} without `here`: any of these, as thrown in the demo's own namespace (same message and category);
 *   no CAP_SYS_ADMIN there is `permission` (see {@link runDemoIsolated})
 * @throws {SynplugError} the server cannot listen, the restart command failed, or the kernel refused a request; what the demo set up is removed first
 */
export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
  const o = resolveDemoOptions(options ?? {});
  if (!options.here) return runDemoIsolated(options);
  const progress = options.onProgress ?? (() => {});
  const stateDir = options.stateDir;

  // Interruptions: a signal (or the caller's AbortSignal) stops the demo at the next step; cleanup follows.
  let stoppedBy: string | undefined;
  const stopCtl = new AbortController();
  const stop = (by: string) => {
    stoppedBy ??= by;
    stopCtl.abort();
  };
  const onSignal = (sig: NodeJS.Signals) => stop(sig);
  const onAbort = () => stop('abort');
  if (options.signal?.aborted) stop('abort');
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const handled: NodeJS.Signals[] = options.handleSignals === false ? [] : ['SIGINT', 'SIGTERM'];
  for (const s of handled) process.on(s, onSignal);
  // SIGUSR2 starts a restart in the protected phase; installed for the whole run so that a late one never kills us.
  const usr2: Ctx['usr2'] = { armed: false };
  let server: PongServer | undefined;
  let diag: NetlinkConnection | undefined;
  const onUsr2 = () => {
    if (!usr2.armed || usr2.restart || !server || !usr2.drain) return;
    progress(`a protected restart: new connections are held while the server restarts (gap ${o.gapMs} ms)`);
    usr2.restart = server.restart(o.gapMs, usr2.drain);
    usr2.restart.catch(() => {
      /* awaited (and thrown) once protect returns */
    });
  };
  process.on('SIGUSR2', onUsr2);

  let setUpByDemo = false;
  /** the report's counters were looked at (once, in the first cleanup) */
  let reportChecked = false;
  /** the hold the demo uses (preflight picks the one this kernel supports) */
  let via: 'plug' | 'queue' = 'plug';
  /** the id of the hold the demo set up, for its teardown (the local plug hold: `local: true`) */
  let demoHold: string | undefined;
  let inboundHold: string | undefined;
  const setupInfo: DemoResult['setup'] = { by: 'already', actions: [], removed: [] };
  /** a hold already set up was found and used (only then is it "left as it was": an interruption before says nothing of it) */
  let usedExisting = false;
  // inbound mode: the topology, the hold set up on its server end, the client process
  let topo: InboundTopology | undefined;
  let inboundDev: string | undefined;
  let clientProc: ClientProcess | undefined;
  try {
    if (options.inbound && !holdModeFor('plug', 'inbound')) throw new SynplugError('this synplug has no inbound hold mode, which demo --inbound needs');
    // Phase one, before anything is created: the capability and every module of the run, all named at once.
    const pre = await demoPreflight({
      inbound: options.inbound === true,
      what: options.inbound ? 'demo --inbound' : 'demo',
      ...(options.via !== undefined && { via: options.via }),
    });
    via = pre.via;
    // a hold of this state directory held already (a manual plug, a protect) would hold the demo's clients too
    refuseHeldAlready(stateDir);
    // nor may it hold (and record) holds it does not use: an inbound hold of the operator's, say
    refuseOtherHolds(stateDir, options.inbound === true);
    if (!options.inbound) await refuseLoDown();
    if (pre.why) progress(`holding with a netfilter queue (the queue hold): ${pre.why}`);
    if (stoppedBy) throw new DemoInterruptedError(stoppedBy, '');
    let addr: string;
    let dev = LOCAL_DEV;
    if (options.inbound) {
      progress("creating a network namespace of the demo's own for the clients, joined by a veth pair (removed again when the demo ends)");
      topo = await createInboundTopology({ prefix: 'spd' });
      dev = topo.serverDev;
      addr = topo.serverAddr;
      if (stoppedBy) throw new DemoInterruptedError(stoppedBy, '');
      server = await PongServer.start(addr);
      progress(`setting up the inbound hold on ${dev} for port ${server.port} (removed again when the demo ends)`);
      inboundDev = dev; // setup is transactional: if it throws, it removed what it added
      try {
        const s = await setup({ inbound: { dev, ports: [server.port], addrs: [addr] }, via, ...(stateDir !== undefined && { stateDir }) });
        inboundHold = s.hold;
        setupInfo.by = 'demo';
        setupInfo.actions = s.actions;
      } catch (e) {
        inboundDev = undefined;
        throw e;
      }
      if (stoppedBy) throw new DemoInterruptedError(stoppedBy, '');
      progress(`starting the clients in the namespace (${topo.clientDev}, ${topo.clientAddr})`);
      clientProc = await ClientProcess.start(topo, stopCtl.signal);
    } else {
      // The local hold of that kind: the one whose fields are check's top-level ones (the plug hold on lo), or another one, found in check's holds.
      const localMode = holdModeFor(via, 'local');
      if (!localMode) throw new SynplugError(`this synplug has no local ${via} hold mode, which the demo needs`);
      addr = localMode.describe({ dev: LOCAL_DEV }).top ? await prepareLocal() : await prepareLocalOther(localMode);
      server = await PongServer.start(addr);
    }
    if (stoppedBy) throw new DemoInterruptedError(stoppedBy, '');
    progress(`pong server on ${addr}:${server.port}; ${o.clients} clients${topo ? ` in the namespace behind ${dev}` : ''}, a new connection per request`);
    diag = NetlinkConnection.open(NETLINK_SOCK_DIAG);
    const diagConn = diag;
    const port = server.port;
    const probe = async (): Promise<number | null> => {
      const l = (await listTcpListeners(diagConn, { port })).find((x) => x.family === 'inet' && x.address === addr);
      return l ? l.recvQ : null;
    };
    const ctx: Ctx = {
      o,
      addr,
      server,
      drain: { probe, maxMs: o.drainMaxMs },
      stateDir,
      progress,
      stopped: () => stoppedBy,
      stopWait: stopCtl.signal,
      notices: [],
      ...(clientProc && { clientProc }),
      usr2,
    };
    const unprotected = await runPhase(ctx, 'unprotected');
    const prot = stoppedBy ? undefined : await runPhase(ctx, 'protected');
    if (stoppedBy || !prot) throw new DemoInterruptedError(stoppedBy ?? 'abort', '');
    const v = verdictOf(unprotected, prot);
    const result: DemoResult = {
      netns: 'caller',
      mode: topo ? 'inbound' : 'local',
      via,
      dev,
      addr,
      port: server.port,
      seconds: o.seconds,
      restarts: o.restarts,
      gapMs: o.gapMs,
      clients: o.clients,
      maxHoldMs: o.maxHoldMs,
      ...(topo && { inbound: { clientDev: topo.clientDev, clientAddr: topo.clientAddr } }),
      setup: setupInfo,
      phases: { unprotected, protected: prot },
      ...v,
      notices: ctx.notices,
    };
    await cleanup();
    return result;
  } catch (e) {
    const interrupted = e instanceof DemoInterruptedError || (stoppedBy !== undefined && e instanceof SynplugError && e.category === 'interrupted');
    const started = server !== undefined;
    await cleanup(e);
    if (!interrupted) throw e;
    throw new DemoInterruptedError(
      stoppedBy ?? 'abort',
      setupInfo.removed.length
        ? ` and removed what it had set up (${setupInfo.removed.join('; ')})`
        : usedExisting
          ? '; the hold that was already set up is left as it was'
          : '',
      started,
    );
  } finally {
    await cleanup();
    for (const s of handled) process.off(s, onSignal);
    process.off('SIGUSR2', onUsr2);
    options.signal?.removeEventListener('abort', onAbort);
  }

  /**
   * Local mode with a hold other than the plug hold on lo (on a kernel
   * without the plug hold's modules, the queue hold of local clients): use
   * that mode's local hold, or set it up (recorded in setUpByDemo); a
   * partial one is refused as for the plug hold. @returns the hold's address
   */
  async function prepareLocalOther(mode: HoldMode): Promise<string> {
    const c = await check({ ...(stateDir !== undefined && { stateDir }) });
    const q = c.holds.find((h) => h.mode === mode.name && h.dev === LOCAL_DEV && h.addrs?.length === 1);
    if (q?.state === 'partial') {
      throw new SynplugError(
        `synplug's ${mode.describe({ id: q.id, dev: q.dev }).label} is only partly set up. The demo changes no setup it did not make: run '${q.setup}' to complete it (or 'synplug teardown'), then the demo again`,
        'not-set-up',
      );
    }
    if (q?.state === 'ok') {
      usedExisting = true;
      progress(`using the ${mode.via} hold already set up for ${q.addrs![0]} (left as it is)`);
      return q.addrs![0];
    }
    await refuseUnrecordedHold(mode, stateDir);
    progress(`setting up the ${mode.via} hold for local clients (removed again when the demo ends)`);
    setUpByDemo = true; // setup is transactional: if it throws, it removed what it added
    try {
      const s = await setup({ via: mode.via, ...(stateDir !== undefined && { stateDir }) });
      setupInfo.by = 'demo';
      setupInfo.actions = s.actions;
      demoHold = s.hold;
      // the local queue hold's one address (a local plug hold's is its addr)
      return s.queue?.addrs[0] ?? s.addr ?? DEFAULTS.addr;
    } catch (e) {
      setUpByDemo = false;
      throw e;
    }
  }

  /** Local mode: use the local hold on lo, or set it up (recorded in setUpByDemo). @returns the hold's address */
  async function prepareLocal(): Promise<string> {
    const c = await check({ local: true, ...(stateDir !== undefined && { stateDir }) });
    const local = c.holds.find((h) => h.mode === holdModeFor('plug', 'local')?.name);
    if (local?.dev !== LOCAL_DEV) {
      throw new SynplugError(
        `synplug is set up on ${local?.dev ?? 'another hold'}, not on ${LOCAL_DEV}: the demo's clients are on this machine, and only the local hold on ${LOCAL_DEV} holds their SYNs. The demo changes no setup it did not make: run it where synplug is not set up, or set up on ${LOCAL_DEV}`,
        'not-set-up',
      );
    }
    // Judge the local hold alone: inbound holds (other devices) may be set up too.
    const localState = local.state;
    if (localState === 'partial') {
      const bad = c.pieces.filter((p) => p.status !== 'ok').map((p) => `${p.piece} (${p.status})`);
      throw new SynplugError(
        `synplug is only partly set up on ${local.dev}: ${bad.join('; ')}. The demo changes no setup it did not make: run 'synplug setup' to complete it (or 'synplug teardown'), then the demo again`,
        'not-set-up',
      );
    }
    let addr = local.addr; // an inspected local hold's entry has it
    if (localState === 'absent') {
      const mode = holdModeFor('plug', 'local');
      if (mode) await refuseUnrecordedHold(mode, stateDir);
      progress(`setting up the local hold on ${LOCAL_DEV} (removed again when the demo ends)`);
      setUpByDemo = true; // setup is transactional: if it throws, it removed what it added
      try {
        const s = await setup({ ...(stateDir !== undefined && { stateDir }) });
        setupInfo.by = 'demo';
        setupInfo.actions = s.actions;
        addr = s.addr;
      } catch (e) {
        setUpByDemo = false;
        throw e;
      }
    } else {
      usedExisting = true;
      progress(`using the local hold already set up on ${local.dev} for ${local.addr} (left as it is)`);
    }
    return addr!;
  }

  /**
   * Stop the client process, close the server and remove what the demo set
   * up (once): the local hold, or the inbound hold and then the topology. A
   * failure to remove something is thrown after every other removal was
   * tried, naming the error that was already on its way, if any.
   */
  async function cleanup(primary?: unknown): Promise<void> {
    if (clientProc) {
      const c = clientProc;
      clientProc = undefined;
      await c.close();
    }
    if (server) {
      const s = server;
      server = undefined;
      await s.close();
    }
    diag?.close();
    diag = undefined;
    const failures: Array<{ what: string; error: unknown }> = [];
    if (setUpByDemo) {
      setUpByDemo = false;
      progress(`removing what the demo set up on ${LOCAL_DEV}`);
      try {
        // the local hold only: inbound holds set up by others stay
        const r = await teardown({ ...(demoHold !== undefined ? { hold: demoHold } : { local: true }), ...(stateDir !== undefined && { stateDir }) });
        setupInfo.removed = r.removed;
      } catch (e) {
        failures.push({ what: `what the demo set up on ${LOCAL_DEV}`, error: e });
      }
    }
    if (inboundDev !== undefined) {
      const d = inboundDev;
      inboundDev = undefined;
      progress(`removing the inbound hold the demo set up on ${d}`);
      try {
        const r = await teardown({
          // the hold setup recorded, by its id (any kind); without one, the device's
          ...(inboundHold !== undefined ? { hold: inboundHold } : { inbound: d }),
          ...(stateDir !== undefined && { stateDir }),
        });
        setupInfo.removed.push(...r.removed);
      } catch (e) {
        failures.push({ what: `the inbound hold the demo set up on ${d}`, error: e });
      }
    }
    // protect's RST counters (one lasting table): gone with the demo's hold when the demo's setup added them and nothing else of synplug's is set up
    if (setupInfo.by === 'demo' && setupInfo.actions.some((a) => a.startsWith(`add table inet ${REPORT_TABLE}`)) && failures.length === 0 && !reportChecked) {
      reportChecked = true;
      try {
        if ((await check({ ...(stateDir !== undefined && { stateDir }) })).state === 'absent') setupInfo.removed.push(...(await removeReportCounters()));
      } catch (e) {
        failures.push({ what: "the reload report's RST counters", error: e });
      }
    }
    if (topo) {
      const t = topo;
      topo = undefined;
      progress(`removing the veth pair ${t.serverDev}/${t.clientDev} and the client namespace`);
      try {
        setupInfo.removed.push(...(await t.remove()));
      } catch (e) {
        failures.push({ what: `the veth pair ${t.serverDev}/${t.clientDev}`, error: e });
      }
    }
    if (failures.length === 0) return;
    const msg = (e: unknown): string => (e instanceof Error ? e.message : String(e));
    const first = primary === undefined ? '' : ` (after the demo itself failed: ${msg(primary)})`;
    const advice = failures.some((f) => f.what.includes('veth')) ? "; run 'synplug teardown' and delete the veth pair" : "; run 'synplug teardown'";
    const e0 = failures[0].error;
    throw new SynplugError(
      `removing ${failures.map((f) => `${f.what} failed: ${msg(f.error)}`).join('; removing ')}${first}${advice}`,
      e0 instanceof SynplugError ? e0.category : 'failure',
      { cause: e0 },
    );
  }
}

/** Sleep until `performance.now()` reaches `t`, or the stop signal fires. */
function sleepUntil(t: number, stopWait: AbortSignal): Promise<void> {
  const ms = t - performance.now();
  if (ms <= 0 || stopWait.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      stopWait.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    stopWait.addEventListener('abort', done, { once: true });
  });
}

async function runPhase(ctx: Ctx, name: PhaseResult['name']): Promise<PhaseResult> {
  const { o, server } = ctx;
  ctx.progress(
    `phase ${name === 'unprotected' ? '1' : '2'}: ${o.restarts} restart${o.restarts === 1 ? '' : 's'} ${name === 'unprotected' ? 'with nothing held' : "each under 'protect'"} over ${o.seconds} s (gap ${o.gapMs} ms)`,
  );
  const loadOpts = { host: ctx.addr, port: server.port, clients: o.clients, timeoutMs: o.requestTimeoutMs };
  const load: { stop(): Promise<readonly RequestRecord[]> } = ctx.clientProc ? await ctx.clientProc.startLoad(loadOpts) : new ClientLoad(loadOpts);
  let records: readonly RequestRecord[] = [];
  const t0 = performance.now();
  const end = t0 + o.seconds * 1000;
  const restarts: RestartResult[] = [];
  let lastDone = t0;
  try {
    for (let k = 0; k < o.restarts && !ctx.stopped(); k++) {
      await sleepUntil(t0 + restartDueMs(k, o.intervalMs), ctx.stopWait);
      if (ctx.stopped()) break;
      // A slow protected restart delays the next ones and stretches the phase, up to
      // PHASE_STRETCH times its length: a restart that would end past that is not started.
      if (performance.now() + o.gapMs > t0 + PHASE_STRETCH * o.seconds * 1000) break;
      const atMs = performance.now() - t0;
      restarts.push({ atMs, ...(name === 'unprotected' ? await server.restart(o.gapMs, ctx.drain) : await protectedRestart(ctx)) });
      lastDone = performance.now();
    }
    // Let the clients run to the phase's end, and a little past the last restart if it ran late.
    await sleepUntil(Math.max(end, lastDone + Math.min(o.intervalMs / 2, 1000)), ctx.stopWait);
  } finally {
    records = await load.stop();
  }
  return phaseResult(name, records, restarts, o.restarts, performance.now() - t0);
}

async function protectedRestart(ctx: Ctx): Promise<Omit<RestartResult, 'atMs'>> {
  const { o, server, usr2 } = ctx;
  usr2.armed = true;
  usr2.drain = ctx.drain;
  usr2.restart = undefined;
  let r: ProtectResult;
  try {
    r = await protect({
      command: ['/bin/sh', '-c', 'kill -s USR2 "$1"', 'synplug-demo-restart', String(process.pid)],
      waitListen: { address: ctx.addr, port: server.port },
      maxHoldMs: o.maxHoldMs,
      ...(ctx.stateDir !== undefined && { stateDir: ctx.stateDir }),
      onNotice: (line) => ctx.notices.push(line),
    });
  } finally {
    usr2.armed = false;
  }
  // (set by the SIGUSR2 handler while protect ran: read it through the type, not the narrowed `undefined`)
  const restarted = (usr2 as Ctx['usr2']).restart;
  usr2.restart = undefined;
  if (r.exitCode !== 0) {
    await restarted?.catch(() => {});
    // SIGINT/SIGTERM reach the command too (protect forwards them once it runs): that is the interruption, not a failure.
    const by = ctx.stopped();
    if (by) throw new DemoInterruptedError(by, '');
    throw new SynplugError(`the demo's restart command (kill -s USR2 ${process.pid}) exited ${r.exitCode}${r.signal ? ` (${r.signal})` : ''}`);
  }
  if (!restarted)
    throw new SynplugError(`the demo's restart command ran, but its SIGUSR2 never reached the demo (pid ${process.pid}); protect released at the max-hold`);
  const { closedMs, queuedAtClose } = await restarted;
  return {
    closedMs,
    queuedAtClose,
    heldMs: r.report.holdMs,
    synsHeld: r.report.heldSyns,
    ...(r.report.dropped !== null && { drops: r.report.dropped }),
    maxHoldReached: r.maxHoldReached,
  };
}

/**
 * The local demo's clients reach its server over `lo`: in a namespace where
 * `lo` is down (a new `unshare --net` starts so) every connection would time
 * out, in both phases, and the verdict would blame synplug.
 * @throws {UsageError} `lo` is down (exit 2); nothing was changed
 */
async function refuseLoDown(): Promise<void> {
  const route = NetlinkConnection.open(NETLINK_ROUTE);
  try {
    const lo = (await listLinks(route)).find((l) => l.ifname === LOCAL_DEV);
    if (lo && !lo.flags.includes('UP'))
      throw new UsageError(
        `${LOCAL_DEV} is down in this network namespace (a new 'unshare --net' starts with it down): the demo's clients could not reach its server; run 'ip link set ${LOCAL_DEV} up' first. Nothing was changed`,
      );
  } finally {
    route.close();
  }
}
