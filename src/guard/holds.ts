/**
 * Operations over every hold that is set up: `plug`, `release`, `status`,
 * `teardown`.
 *
 * @module
 */
import { NetlinkError, UsageError } from '../netlink/errors.js';
import { resolveConfig } from './config.js';
import { StateFileError } from './errors.js';
import { StateStore, processStartTime, type Lease, type PlugRecord } from './state.js';
import { breakLeases, dropLease, liveLeases, newLeaseId, takeLease } from './leases.js';
import { contextFor, definedOnly, recoverStale, withSession } from './context.js';
import { combineStates, inspectHolds, piecesOf, requireSetUp } from './setup.js';
import { LocalHold, type LocalStatusDetails } from './modes/local.js';
import { InboundHold, inboundId } from './modes/inbound.js';
import type { GuardOptions, HoldStatus, PieceState, PlugResult, ReleaseResult, StatusResult, TeardownOptions, TeardownResult } from './types.js';

function pidStartOf(pid: number): { pidStart?: number } {
  const t = processStartTime(pid);
  return t === undefined ? {} : { pidStart: t };
}

/**
 * Buffer every plug (and arm marking for `maxHoldMs`) until {@link release}:
 * a manual lease, alive until its deadline or a manual release (other holders
 * do not release the plug while it lives).
 * @param opts the configuration, and `maxHoldMs` (default 10000, at least 10)
 * @throws {UsageError} bad options (`usage`)
 * @throws {NotPermittedError} (`permission`) {@link NotSetUpError} (`not-set-up`) {@link NoDeviceError} (`usage`)
 * @throws {StateFileError} the state directory is unsafe, or a state file is damaged or cannot be written
 * @throws {NetlinkError} the kernel refused (`kernel`)
 */
export async function plug(opts: GuardOptions & { maxHoldMs?: number } = {}): Promise<PlugResult> {
  const maxHoldMs = opts?.maxHoldMs ?? 10_000;
  if (!(maxHoldMs >= 10)) throw new UsageError('max-hold (--max-hold) must be at least 10 ms');
  const { config, store, record } = contextFor(opts, 'synplug plug');
  return withSession(config, record, async (s) => {
    await recoverStale(s, store);
    await requireSetUp(s, config, 'plug');
    const since = Date.now();
    const lease: Lease = {
      id: newLeaseId(),
      owner: 'manual',
      pid: process.pid,
      ...pidStartOf(process.pid),
      holds: s.holdIds,
      since,
      deadline: since + maxHoldMs,
    };
    let take: { latestDeadline: number } | undefined;
    try {
      take = await takeLease(store, s, lease, config.dev);
      await s.buffer();
    } catch (e) {
      await dropLease(store, s, lease.id, config.dev, async () => {
        await s.release().catch(() => {});
        return 1;
      }).catch(() => {});
      throw e;
    }
    return { dev: config.dev, addr: config.addr, deadline: take.latestDeadline, maxHoldMs };
  });
}

/**
 * Release every plug (always safe) and turn marking off, at once, whatever
 * the leases: every live lease is broken, and the result says how many.
 *
 * The state files do not decide whether to release: a damaged record, or an
 * unsafe state directory, still gets the plug released (from the options and
 * defaults), and is reported afterwards as an error naming the file, with
 * nothing written. With nothing set up (no record, no plug qdisc), nothing is
 * written either.
 * @throws {UsageError} bad options
 * @throws {NotPermittedError} (`permission`) {@link NoDeviceError} (`usage`)
 * @throws {StateFileError} after releasing: a state file is damaged or the directory unsafe; or plug.json cannot be written
 * @throws {NetlinkError} the kernel refused (`kernel`)
 */
export async function release(opts: GuardOptions = {}): Promise<ReleaseResult> {
  let ctx: ReturnType<typeof contextFor>;
  let damaged: StateFileError | undefined;
  try {
    ctx = contextFor(opts, 'synplug release');
  } catch (e) {
    if (!(e instanceof StateFileError)) throw e;
    damaged = e;
    const config = resolveConfig(definedOnly(opts ?? {}));
    ctx = { config, store: new StateStore(config.stateDir) };
  }
  const { config, store, record } = ctx;
  return withSession(config, record, async (s) => {
    let r: PlugRecord | undefined;
    let hasLeases = false;
    if (!damaged) {
      try {
        r = store.readPlug();
        hasLeases = store.readLeases() !== undefined;
      } catch (e) {
        if (!(e instanceof StateFileError)) throw e;
        damaged = e;
      }
    }
    let plugExists = true;
    const releaseNow = async () => {
      try {
        await s.release();
      } catch (e) {
        if (!(e instanceof NetlinkError && (e.code === 'ENOENT' || e.code === 'EINVAL' || e.code === 'ENODEV'))) throw e;
        plugExists = false; // no plug qdisc (or an inbound hold's IFB is gone): nothing can be held there; every other plug got its release in the same datagram
      }
      await s.disarm().catch(() => {});
    };
    let brokeLeases = 0;
    if (damaged || !(r || record || hasLeases)) {
      // A damaged or unsafe state, or nothing set up: release, write nothing.
      await releaseNow();
    } else {
      // Every lease is broken, under the lease lock, and the plug released at once.
      brokeLeases = await breakLeases(store, releaseNow, () => {
        const now = Date.now();
        store.writeLeases({ version: 1, leases: [] });
        store.writePlug({
          ...(r ?? { version: 1, owner: 'manual', pid: process.pid, dev: config.dev, since: now, deadline: now }),
          state: 'released',
          releasedAt: now,
        });
      });
    }
    if (damaged) {
      throw new StateFileError(
        damaged.path,
        `${plugExists ? `released the plug on ${config.dev}` : `no plug qdisc on ${config.dev}: nothing was held`}; but ${damaged.message}`,
        damaged,
      );
    }
    const stats = plugExists ? await s.plugStats().catch(() => undefined) : undefined;
    return { dev: config.dev, wasBuffering: r?.state === 'buffering', backlog: stats?.qlen ?? 0, plugExists, brokeLeases };
  });
}

/**
 * The setup, the rule, the recorded plug state and the plug's counters.
 * @throws {NotPermittedError} (`permission`) {@link NoDeviceError} (`usage`) {@link NetlinkError} (`kernel`)
 * @throws {StateFileError} the state directory is unsafe, or a state file is damaged
 */
export async function status(opts: GuardOptions = {}): Promise<StatusResult> {
  const { config, store, record } = contextFor(opts, 'synplug status');
  return withSession(config, record, async (s) => {
    const rec = await recoverStale(s, store);
    const inspected = await inspectHolds(s);
    const local = inspected.find((i) => i.hold instanceof LocalHold);
    const details = local ? await (local.hold as LocalHold).statusDetails(local.inspection) : { qdiscs: [], filters: [], marking: [] };
    const holds: HoldStatus[] = inspected.map(({ hold, inspection }) => {
      const base = { id: hold.id, mode: hold.mode, dev: hold.dev, state: inspection.state, pieces: Object.values(inspection.pieces) as PieceState[] };
      if (hold instanceof InboundHold) return { ...base, ...hold.statusDetails(inspection) };
      const { qdiscs, filters, held, passed, dropped } = details as LocalStatusDetails;
      return { ...base, qdiscs, filters, ...(held !== undefined && { held, passed, dropped }) };
    });
    return {
      dev: config.dev,
      addr: config.addr,
      state: combineStates(inspected.map((i) => i.inspection.state)),
      pieces: piecesOf(inspected),
      ...details,
      plug: store.readPlug() ?? null,
      leases: liveLeases(store).map((l) => ({
        owner: l.owner,
        pid: l.pid,
        ...(l.command && { command: l.command }),
        since: l.since,
        deadline: l.deadline,
        holds: l.holds,
      })),
      ...(rec.released && { recovered: `released a plug left buffering (${rec.reason})` }),
      holds,
    };
  });
}

/**
 * Release, then remove exactly what setup added, hold by hold (the local
 * hold: the qdisc tree when its root is synplug's, with the filter under it;
 * synplug's nftables table; the address if setup added it); then the state
 * files, and the state directory when setup created it.
 * @throws {NotPermittedError} (`permission`) {@link NoDeviceError} (`usage`) {@link NetlinkError} (`kernel`)
 * @throws {StateFileError} the state directory is unsafe, a state file is damaged (nothing is removed), or a file cannot be removed
 */
export async function teardown(opts: TeardownOptions = {}): Promise<TeardownResult> {
  const only = opts?.inbound;
  if (only !== undefined && (typeof only !== 'string' || only === '')) throw new UsageError('teardown --inbound: give a device name');
  const localOnly = opts?.local;
  if (localOnly !== undefined && typeof localOnly !== 'boolean') throw new UsageError('teardown: local must be true or false');
  if (localOnly && only !== undefined)
    throw new UsageError('teardown: --local and --inbound each name one hold; give one of them (neither removes every hold)');
  const { inbound: _only, local: _local, ...rest } = opts ?? {};
  const { config, store, record } = contextFor(rest, 'synplug teardown');
  store.readPlug(); // a damaged plug.json is an error before anything is removed
  const id = only !== undefined ? inboundId(only) : localOnly ? 'local' : undefined;
  const which = only !== undefined ? `--inbound ${only}: no inbound hold of ${only}` : '--local: no local hold';
  if (id !== undefined && !record?.holds[id]) {
    // Nothing of that hold to remove: success (exit 0), as a plain teardown with nothing set up.
    return {
      dev: only ?? config.dev,
      removed: [],
      kept: [],
      holds: [],
      nothingSetUp: `teardown ${which} is set up${record ? ` (set up: ${Object.keys(record.holds).join(', ')})` : ''}; nothing to remove`,
    };
  }
  return withSession(config, record, async (s) => {
    const removed: string[] = [];
    const kept: string[] = [];
    const torn: string[] = [];
    for (const { hold, inspection } of await inspectHolds(s)) {
      if (id !== undefined && hold.id !== id) continue;
      const r = await hold.teardown(inspection);
      removed.push(...r.removed);
      kept.push(...r.kept);
      torn.push(hold.id);
    }
    const left = Object.fromEntries(Object.entries(record?.holds ?? {}).filter(([h]) => !torn.includes(h)));
    if (id !== undefined && Object.keys(left).length > 0) {
      store.writeSetup({ ...record!, holds: left });
      return { dev: only ?? config.dev, removed, kept, holds: torn };
    }
    let removedStateDir: boolean;
    try {
      removedStateDir = store.clear(record?.createdStateDir === true);
    } catch (e) {
      throw new StateFileError(config.stateDir, `removed the setup, but cannot remove the state files in ${config.stateDir}: ${(e as Error).message}`, e);
    }
    return { dev: only ?? config.dev, removed, kept, holds: torn, ...(removedStateDir && { removedStateDir }) };
  });
}
