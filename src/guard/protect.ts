/**
 * `protect`: phase one's checks, the recovery of a plug left buffering, the
 * optional setup, then the plug window ({@link runProtected}, window.ts).
 *
 * @module
 */
import { SynplugError, UsageError } from '../netlink/errors.js';
import { checkEntryOptions, type GuardConfig } from './config.js';
import { holdRemovedError, InterruptedError, NotSetUpError, signalLatch } from './errors.js';
import { StateDirSwappedError } from './state-fs.js';
import type { SetupRecord, StateStore } from './state.js';
import { accounted, type Accounting } from './accounting.js';
import { startWatchdog } from './watchdog.js';
import { contextFor, definedOnly, openSession, recoverStale, refuseAddrNotHeld } from './context.js';
import { INBOUND_SETUP, isSetUp, requireSetUp, setAsideGoneDevices, setup } from './setup.js';
import { modeOfHold } from './modes/index.js';
import { runProtected } from './window.js';
import type { GuardProtectOptions, ListenTarget, ProtectOptions, ProtectResult, ProtectSession } from './types.js';
import { inCallNetns } from './call-netns.js';

export { runProtected };
export type { ListenTarget, ProtectOptions, ProtectResult, ProtectSession };

/**
 * Phase one (checks, recovery, optional setup), then {@link runProtected}.
 * @throws {UsageError} bad options or an empty command (`usage`), nothing run
 * @throws {NotSetUpError} not set up and no `setup` (`not-set-up`), the command NOT run
 * @throws {CommandError} command not found / not executable (`command-not-found` / `command-not-executable`), nothing plugged
 * @throws {StateFileError} the state directory is unsafe, or a state file is damaged; the command NOT run
 * @throws {SynplugError} the plug could not be set: the command is not run
 */
export async function protect(opts: GuardProtectOptions): Promise<ProtectResult> {
  checkEntryOptions('protect', opts);
  if (opts?.netns !== undefined) return inCallNetns('protect', opts, protect);
  // The history line and the metrics (accounting.ts): the metrics file checked before anything is held; the reload
  // counted whatever its outcome (but a usage error, which tried no reload).
  return accounted('protect', opts, () => protectOnce(opts), protectAccounting);
}

/**
 * What a protect adds to the history and the metrics: its outcome, under the
 * holds it held; the history line starts when the command started (phase
 * one, a stopped holder's end among it, may take a while before).
 */
export function protectAccounting(r: ProtectResult): Accounting {
  const holds = (r.holds ?? [{ id: 'local' }]).map((h) => h.id);
  const outcome = { exitCode: r.exitCode, report: r.report };
  // a teardown during the reload cleared the state directory: nothing is written there again
  const history = { ...outcome, start: new Date(r.commandStartedAt).toISOString(), ...(r.maxHoldReached && { maxHoldReached: true as const }) };
  return { holds, history, change: outcome, ...(r.tornDown && { nothing: true }) };
}

/** The state directory swapped before the window (state-fs.ts, the metrics' check may have pinned it): the refusal says that the command was not run. */
function notRun(e: unknown): unknown {
  return e instanceof StateDirSwappedError ? e.commandNotRun() : e;
}

async function protectOnce(opts: GuardProtectOptions): Promise<ProtectResult> {
  if (!opts || !Array.isArray(opts.command) || opts.command.length === 0 || opts.command[0] === '' || !opts.command.every((a) => typeof a === 'string')) {
    throw new UsageError('no command given: protect needs `command`, an array of strings (CLI: synplug protect [options] -- COMMAND [ARGS...])');
  }
  if (opts.maxHoldMs !== undefined && !(opts.maxHoldMs >= 10)) throw new UsageError('max-hold (--max-hold) must be at least 10 ms');
  let ctx: ReturnType<typeof contextFor>;
  try {
    ctx = contextFor(opts, 'protect');
  } catch (e) {
    throw notRun(e);
  }
  const { config, store, record } = ctx;
  refuseAddrNotHeld(opts, record, 'protect');
  // A signal from now until the command starts ends protect at its next step, saying so (the window's own handler
  // takes over around the hold): not the process's silent death with its watchdog still starting.
  const latch = signalLatch();
  try {
    return await protectLatched(opts, config, store, record, latch);
  } finally {
    latch.end();
  }
}

async function protectLatched(
  opts: GuardProtectOptions,
  config: GuardConfig,
  store: StateStore,
  record: SetupRecord | undefined,
  latch: { readonly signal: NodeJS.Signals | undefined },
): Promise<ProtectResult> {
  const stopped = () => {
    if (latch.signal)
      throw new InterruptedError(latch.signal, `interrupted by ${latch.signal} before the command started: nothing was held; the command was NOT run`);
  };
  // The watchdog (a process of its own) starts while phase one checks.
  const watchdog = startWatchdog();
  watchdog.catch(() => {}); // its failure is reported where it is awaited
  let handedOver = false;
  let s = await openSession(config, record).catch((e) => {
    void watchdog.then(
      (w) => w.done(),
      () => {},
    );
    throw e;
  });
  try {
    stopped();
    const rec = await recoverStale(s, store);
    if (rec.released) opts.onNotice?.(`released a plug left buffering (${rec.reason})`);
    // A hold whose device is gone holds nothing: the others are held (set up or not, they are judged without it).
    for (const line of await setAsideGoneDevices(s)) opts.onNotice?.(line);
    if (!(await isSetUp(s, record !== undefined))) {
      if (!opts.setup) await requireSetUp(s, config, 'protect', record !== undefined);
      // Every hold the record lists, as recorded; with no record, what 'synplug setup' with the caller's own
      // options sets up (--via auto: the hold this kernel supports). Then a session over what setup made.
      const { dev, addr, mark, limit, table } = opts;
      const each = record ? s.holds.map((h) => h.setupOptions()) : [definedOnly({ dev, addr, mark, limit, table })];
      // What was set up, as setup's own head line says it (which hold, whose SYNs), then its steps; with no record,
      // the hold 'synplug setup' makes (the local one): clients from the network are not held by it.
      const said: string[] = [];
      let settleMs = 0;
      for (const o of each) {
        const r = await setup({ ...o, stateDir: config.stateDir });
        settleMs = Math.max(settleMs, r.settleMs ?? 0);
        const head = modeOfHold({ id: r.hold }, r.dev)?.setupHead(r) ?? `synplug set up ${r.hold}${r.changed ? ':' : ''}`;
        said.push(r.actions.length ? `${head.replace(/:$/, '')}: ${r.actions.join('; ')}` : head.replace(/:$/, ''));
      }
      opts.onNotice?.(`set up first: ${said.join('. ') || 'nothing to do'}${record ? '' : `. It holds local clients only; ${INBOUND_SETUP}`}`);
      // a root qdisc changed: the handshakes its graft cut short complete (SYN-ACK retransmitted) before the hold
      if (settleMs > 0) await new Promise((r) => setTimeout(r, settleMs));
      s.close();
      s = await openSession(config, store.readSetup());
      await setAsideGoneDevices(s); // as before the setup (said then)
    }
    stopped();
    // the holds recorded as this protect starts (none without a record: nothing to find removed)
    const recorded = store.readSetup();
    const ids = s.holds.map((h) => h.id).filter((id) => recorded?.holds[id] !== undefined);
    handedOver = true;
    return await runProtected(s, opts, watchdog, latch).catch((e: unknown) => {
      throw removedUnder(e, store, ids);
    });
  } catch (e) {
    throw handedOver ? e : notRun(e);
  } finally {
    if (!handedOver)
      void watchdog.then(
        (w) => w.done(),
        () => {},
      );
    s.close();
  }
}

/**
 * What a protect's failure before its command ran (a thrown error: {@link protect})
 * was, when the holds it started with are no longer recorded: a teardown
 * removed them under it (phase one's pieces, the queue's holder, the arming
 * then fail on what is gone): said as such, not as the kernel's refusal.
 * Any other error, or holds still recorded: `e` itself.
 */
function removedUnder(e: unknown, store: StateStore, ids: readonly string[]): unknown {
  if (!(e instanceof SynplugError) || e instanceof NotSetUpError || e instanceof InterruptedError || !ids.length) return e;
  let record: SetupRecord | undefined;
  try {
    record = store.readSetup();
  } catch {
    return e;
  }
  const gone = ids.filter((id) => record?.holds[id] === undefined);
  return gone.length ? holdRemovedError(gone, 'protect', e.message) : e;
}
