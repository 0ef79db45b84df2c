/**
 * What every guard command starts with: its configuration (explicit options,
 * then what setup recorded, then the defaults), the state store, a session
 * over the holds, and the recovery of a plug left buffering by a protect that
 * died (crash safety, third layer).
 *
 * @module
 */
import { join } from 'node:path';
import { NetlinkError, UsageError } from '../netlink/errors.js';
import { PLUG_ONLY, canonicalAddress, resolveConfig, type GuardConfig } from './config.js';
import { NoDeviceError, NotSetUpError } from './errors.js';
import { StateStore, type SetupRecord } from './state.js';
import { holdMode } from './modes/index.js';
import { deadProtectLeases, dropLease, leaseLive, recordedLeases, unprepare } from './leases.js';
import { recordKilledProtects } from './history.js';
import { GuardSession } from './session.js';
import { othersHolds } from './pieces.js';
import { REPORT_QUIET_MS, REPORT_WINDOW_MS, retireReportChain } from './report.js';
import { requireNetAdmin, hasNetAdmin } from './support.js';
import type { GuardOptions, Recovery } from './types.js';

/** A command's starting point. */
export interface GuardContext {
  /** the configuration: options, then the record, then defaults */
  config: GuardConfig;
  /** the state files */
  store: StateStore;
  /** the setup record, when something is set up */
  record?: SetupRecord;
}

/** The options whose value is not undefined. */
export function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Configs whose device came from setup's record rather than --dev: that record's path, for the error when the device is gone. */
const devFromRecord = new WeakMap<GuardConfig, string>();

/**
 * Configs given an option only the plug holds take (--dev, --mark, --limit) with nothing set up: the local hold
 * looked at is the plug hold, as `setup --via auto` with that option sets up, not the one it picks on this kernel.
 */
const plugChosen = new WeakSet<GuardConfig>();

/** What each option only the plug holds take configures, for the refusal's message. */
const PLUG_OPTION_WHAT: Record<(typeof PLUG_ONLY)[number], string> = {
  dev: "the local plug hold's device",
  mark: "the local plug hold's firewall mark",
  limit: "a plug hold's limit",
  force: "setup's replacing of a root qdisc for the plug hold",
};

/**
 * Refuse an option only the plug holds take where setup recorded holds and
 * none of them takes it (the queue holds take none; an inbound plug hold only
 * `limit`): accepted, it would be ignored, and the user would believe it
 * acted on. A hold takes `dev` and `mark` when its record gives them
 * (the local plug hold's, its mode's configOf).
 * @throws {UsageError} naming the option and the holds set up
 */
function refuseOptionsNoHoldTakes(opts: GuardOptions, record: SetupRecord | undefined): void {
  const holds = Object.entries(record?.holds ?? {});
  if (!holds.length) return;
  for (const k of PLUG_ONLY) {
    if ((opts as Record<string, unknown>)[k] === undefined) continue;
    const takes = holds.some(([, h]) => {
      const m = holdMode(h.mode);
      return m?.via === 'plug' && (k === 'limit' || k in (m.configOf?.(h) ?? {}));
    });
    if (takes) continue;
    const set = holds.map(([id, h]) => `${id}: via ${holdMode(h.mode)?.via ?? h.mode}`).join(', ');
    throw new UsageError(
      `--${k} is ${PLUG_OPTION_WHAT[k]}; the holds set up here (${set}) take no --${k}: leave it out ('synplug status' shows them). Nothing was changed`,
    );
  }
}

/**
 * An --addr that no recorded hold holds, where no recorded hold takes its address from the options (the local plug
 * hold does, and judges its own pieces for it: missing there). The queue holds and the inbound holds hold the
 * addresses their record names ({@link HoldMode.addrsOf}; an inbound hold without any holds every address), so an
 * --addr beside them would be ignored and the user would believe it acted on.
 * @param opts the command's options (`addr` as given)
 * @param record the setup record
 * @returns the sentence naming the address and the holds set up (and their addresses); undefined when it is held, or no --addr was given, or nothing is recorded
 */
export function addrNotHeld(opts: GuardOptions, record: SetupRecord | undefined): string | undefined {
  if (opts.addr === undefined || !record) return undefined;
  const holds = Object.entries(record.holds).map(([id, h]) => ({ id, h, mode: holdMode(h.mode) }));
  if (!holds.length || holds.some((x) => x.mode?.configOf?.(x.h).addr !== undefined)) return undefined;
  const want = canonicalAddress(opts.addr);
  const held = holds.map((x) => ({ ...x, addrs: x.mode?.addrsOf?.(x.h) }));
  if (held.some((x) => x.addrs && (x.addrs.length === 0 || x.addrs.includes(want)))) return undefined;
  const set = held.map((x) => `${x.id}: via ${x.mode?.via ?? x.h.mode}${x.addrs?.length ? ` for ${x.addrs.join(', ')}` : ''}`).join('; ');
  return `--addr ${want}: no hold set up here holds it (set up: ${set}): leave --addr out, or give the address set up ('synplug status' shows them)`;
}

/** What a command refused for an --addr no hold holds says it did not do. */
const NOT_DONE = {
  plug: 'Nothing was held',
  protect: 'The command was NOT run',
  release: 'Nothing was released',
  teardown: 'Nothing was removed',
} as const;

/**
 * The commands that act on the holds (`plug`, `protect`, `release`, `teardown`): refuse an --addr no recorded hold
 * holds ({@link addrNotHeld}), before anything is held, run, released or removed (`check` and `status` report it).
 * @param what the command, for what the message says was not done
 * @throws {NotSetUpError} naming the address and what is set up
 */
export function refuseAddrNotHeld(opts: GuardOptions, record: SetupRecord | undefined, what: keyof typeof NOT_DONE): void {
  const no = addrNotHeld(opts, record);
  if (no) throw new NotSetUpError(`${no}. ${NOT_DONE[what]}`);
}

/**
 * The configuration of a command other than setup: explicit options, then
 * what setup recorded (its local hold), then the defaults.
 * @param opts the caller's options
 * @param needsAdmin the command's name when it needs CAP_NET_ADMIN (checked after the options)
 * @param about the hold the command is about (`inbound`: its device), for what a state-file error tells to do
 * @throws {UsageError} bad options (first, before anything else)
 * @throws {NotPermittedError} no CAP_NET_ADMIN
 * @throws {StateFileError} the state directory is unsafe, or setup.json is unreadable or damaged
 */
export function contextFor(opts: GuardOptions | null | undefined, needsAdmin?: string, about: { inbound?: string } = {}): GuardContext {
  opts = opts ?? {};
  resolveConfig(definedOnly(opts)); // bad input first (usage) before anything else
  if (needsAdmin) requireNetAdmin(needsAdmin);
  const stateDir = resolveConfig({ stateDir: opts.stateDir }).stateDir;
  const store = new StateStore(stateDir);
  const record = store.readSetup(about);
  refuseOptionsNoHoldTakes(opts, record);
  // The configuration a recorded hold gives (the local plug hold's device, address...).
  let fromRecord: Partial<GuardConfig> = {};
  for (const h of Object.values(record?.holds ?? {})) fromRecord = { ...fromRecord, ...holdMode(h.mode)?.configOf?.(h) };
  const config = resolveConfig({ ...fromRecord, ...definedOnly(opts), stateDir });
  if (fromRecord.dev !== undefined && opts.dev === undefined) devFromRecord.set(config, join(stateDir, 'setup.json'));
  if (!record && PLUG_ONLY.some((k) => (opts as Record<string, unknown>)[k] !== undefined)) plugChosen.add(config);
  return { config, store, ...(record && { record }) };
}

/**
 * Open a session over the configuration's holds; a missing device that came
 * from the record is reported as such.
 * @throws {NoDeviceError} a device does not exist
 * @throws {SynplugError} the socket cannot be opened
 */
export function openSession(config: GuardConfig, record?: SetupRecord): Promise<GuardSession> {
  // Every hold the record lists; the local hold alone when nothing is recorded.
  return GuardSession.open(config, { record, local: !record, ...(plugChosen.has(config) && { plug: true }) }).catch((e: unknown) => {
    const file = devFromRecord.get(config);
    throw e instanceof NoDeviceError && file && e.dev === config.dev ? new NoDeviceError(config.dev, file) : e;
  });
}

/** Run `f` on an open session and close it afterwards. */
export async function withSession<T>(config: GuardConfig, record: SetupRecord | undefined, f: (s: GuardSession) => Promise<T>): Promise<T> {
  const s = await openSession(config, record);
  try {
    return await f(s);
  } finally {
    s.close();
  }
}

/**
 * Crash safety, third layer: when plug.json says buffering but no live lease
 * holds the plug any more (every holder died, or every deadline passed),
 * release it, under the lease lock (leases.ts). Every command calls it first
 * (when it may: it needs CAP_NET_ADMIN). Dead leases are dropped on the way.
 * With no plug buffering and no live lease, the holds' armed pieces a dead
 * holder left (after its release, before removing them) are removed too.
 * @throws {StateFileError} plug.json or leases.json is damaged, or cannot be written
 */
export async function recoverStale(s: GuardSession, store: StateStore): Promise<Recovery> {
  const r = store.readPlug();
  const leases = recordedLeases(store);
  if (!hasNetAdmin()) return { released: false };
  // Armed pieces (filters that exist only around a hold) left by a holder that died after its release: removed. Not
  // in a directory without plug.json or setup.json (setup writes both): no holder of its ever ran, and taking the lease lock there
  // would create the lock file that marks a directory a setup ran in (setup.ts refuseOthersPieces).
  if (r?.state !== 'buffering') {
    if ((r || store.readSetup()) && s.holds.some((h) => h.pieces.list.some((p) => p.lifetime === 'armed')))
      await unprepare(store, { disarm: () => s.disarmArmed() });
    // The report's counter chain of a protect killed with its watchdog, once no protect can still be reading it
    // (each reads up to REPORT_WINDOW_MS after the last release): retireReportChain keeps it while a lease lives.
    if (r?.state === 'released' && r.releasedAt !== undefined && Date.now() - r.releasedAt > REPORT_WINDOW_MS + REPORT_QUIET_MS) await retireReportChain(store);
    return { released: false };
  }
  if (leases.some((l) => leaseLive(l))) return { released: false };
  // A plug hold whose kernel objects carry another state directory's mark (a plug.json copied from that one): never
  // released through this one (that directory's own commands recover it). Nothing is done then.
  if ((await othersHolds(s.holds)).length) return { released: false };
  const last = leases[leases.length - 1];
  const reason = !last
    ? 'no lease holds it'
    : Date.now() >= last.deadline
      ? 'its max-hold deadline passed'
      : last.owner === 'manual'
        ? `its manual plug's watchdog, pid ${last.watchdogPid ?? 'not recorded'}, is gone`
        : `its owner (pid ${last.pid}) is gone`;
  let hadPlug = true;
  const d = await dropLease(store, s, undefined, s.config.dev, async () => {
    try {
      await s.release();
    } catch (e) {
      if (!(e instanceof NetlinkError)) throw e;
      hadPlug = false; // no plug qdisc: nothing is held; only the record was stale
    }
    return 1;
  });
  // A protect killed with its watchdog (and a queue hold's holder): nobody else saw its lease, which this drop removed
  // under the lock, so its history line is written here, once. (A line not written is not this command's failure.)
  await recordKilledProtects(store.dir, deadProtectLeases(d.dead));
  // what was held is let go, and its protect is dead: nobody reads the report's counters
  if (d.released) await retireReportChain(store);
  // Records copied from another directory: every hold's release reached no holder of this directory, so
  // nothing was released here, whatever the records said (that directory's hold goes on).
  const notHere = s.holds.length > 0 && s.holds.every((h) => h.heldNothingHere?.() !== undefined);
  return d.released && hadPlug && !notHere ? { released: true, reason } : { released: false };
}
