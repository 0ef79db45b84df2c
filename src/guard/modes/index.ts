/**
 * The registry of hold modes: a mode is one module implementing
 * {@link HoldMode}, plus one line here. The guard finds modes by the name a
 * setup record gives (`mode` of each hold), or by their kind (`via`: plug or
 * queue) and whose clients they hold (`scope`: local or inbound). This file
 * and `types.ts` are the only way into a mode from the rest of the guard.
 *
 * @module
 */
import { UsageError } from '../../netlink/errors.js';
import type { SetupRecord } from '../state.js';
import type { Hold, HoldFacts, HoldMode, HoldScope, HoldSockets, HoldVia, HoldWords } from './types.js';
import type { GuardConfig } from '../config.js';
import type { ModulePiece } from '../support.js';
import { registerRecordCheck } from '../record-checks.js';
import { localMode } from './local.js';

export { removedAddressOf } from './local.js';
import { inboundMode } from './inbound.js';
import { queueMode } from './queue.js';

const MODES = new Map<string, HoldMode>();

/**
 * Register a hold mode (replaces one of the same name).
 * @param mode the mode
 */
export function registerHoldMode(mode: HoldMode): void {
  MODES.set(mode.name, mode);
  // an entry's key names its device (and, for the local holds, the local hold's key): setup keys each so
  registerRecordCheck(mode.name, mode.isRecord, mode.recordRefusal, (id, r) => mode.deviceOfId(id, String(r.dev)) === r.dev);
}

/**
 * The mode of a name.
 * @returns undefined for a name no module registered
 */
export function holdMode(name: string): HoldMode | undefined {
  return MODES.get(name);
}

/** The names of every registered mode. */
export function holdModeNames(): string[] {
  return [...MODES.keys()];
}

/** Every registered mode, in registration order. */
export function holdModes(): HoldMode[] {
  return [...MODES.values()];
}

/**
 * The mode of a kind and scope (`plug` + `local`: the local plug hold).
 * @returns undefined when no registered mode is of that kind and scope
 */
export function holdModeFor(via: HoldVia, scope: HoldScope): HoldMode | undefined {
  return holdModes().find((m) => m.via === via && m.scopes.includes(scope));
}

/**
 * The mode setup builds: the only candidate, or (auto) the first whose
 * kernel support is all there; when none has it, the first (its setup then
 * names what is missing).
 * (`setup --via auto`; with no hold recorded, the local hold the commands
 * look at: {@link openAutoLocalHold}.)
 * @param candidates the modes in order of preference (the plug hold first)
 * @param auto choose (else the first candidate, unprobed)
 * @returns the mode and, when it chose, the sentence saying which and why
 * @throws {NetlinkError} a probe was refused unexpectedly (EPERM...)
 */
export async function chooseHoldMode(
  s: HoldSockets,
  config: GuardConfig,
  candidates: readonly HoldMode[],
  auto: boolean,
): Promise<{ mode: HoldMode; chose?: string }> {
  if (!auto || candidates.length < 2) return { mode: candidates[0] };
  const [first, ...rest] = candidates;
  const sup = await first.probeSupport(s, config);
  const why = (m: ModulePiece[]) => m.map((p) => p.module).join(', ');
  if (!sup.missing.length) return { mode: first, chose: `--via auto: the ${first.via} hold (this kernel has what it needs)` };
  for (const m of rest) {
    if ((await m.probeSupport(s, config)).missing.length) continue;
    return { mode: m, chose: `--via auto: the ${m.via} hold (the ${first.via} hold needs ${why(sup.missing)}, which this kernel lacks)` };
  }
  return { mode: first };
}

/**
 * The local hold a command looks at when none is recorded: the one `setup`
 * (`--via auto`, no options) makes on this kernel ({@link chooseHoldMode}),
 * opened for the configuration (its device and address), so that what is
 * named is a hold this kernel can have (the queue hold where it has no
 * sch_plug). Sends only the modes' probes.
 * @throws {NoDeviceError} its device does not exist
 * @throws {NetlinkError} a probe was refused unexpectedly
 */
export async function openAutoLocalHold(sockets: HoldSockets, config: GuardConfig): Promise<Hold | undefined> {
  const candidates = (['plug', 'queue'] as const).flatMap((v) => holdModeFor(v, 'local') ?? []);
  if (!candidates.length) return undefined;
  const { mode } = await chooseHoldMode(sockets, config, candidates, true);
  // the plug hold opens without a record (the configuration's); another mode as its setup would make it
  if (mode === candidates[0] && mode.via === 'plug') return mode.open(sockets, config, undefined);
  return (await mode.openForSetup(sockets, config, { via: mode.via }, undefined)).hold;
}

/** The kinds of hold registered (`plug`, `queue`), each once. */
export function holdVias(): HoldVia[] {
  return [...new Set(holdModes().map((m) => m.via))];
}

/** The hold `--inbound DEV` names: its id, its mode's name, and the device's name and index. */
export interface InboundSelection {
  id: string;
  mode: string;
  dev: string;
  ifindex?: number;
}

/**
 * The hold a `--inbound DEV` selector names: every mode that can hold
 * clients arriving on DEV answers (by any name of the device; a renamed
 * device by index), and the one whose hold the record lists is it. With none
 * recorded, the first mode's answer (a hold that is not set up).
 * @param refuse refuse a device no record names that setup would refuse (default true)
 * @throws {UsageError} DEV names two holds or more set up (each named, with how to pick one); `refuse`: a device setup would refuse (`lo`, an IFB)
 * @throws {NoDeviceError} `refuse`: no such device, and no record names it
 */
export async function selectInbound(sockets: HoldSockets, record: SetupRecord | undefined, dev: string, refuse = true): Promise<InboundSelection> {
  const answers: InboundSelection[] = [];
  for (const m of holdModes()) {
    if (!m.select || !m.scopes.includes('inbound')) continue;
    answers.push({ ...(await m.select(sockets, record, dev, false)), mode: m.name });
  }
  const recorded = answers.filter((a) => record?.holds[a.id]);
  if (recorded.length > 1)
    throw new UsageError(
      `--inbound ${dev} names ${recorded.length} holds set up on ${recorded[0].dev}: ${recorded.map((a) => `${a.id} (via ${holdMode(a.mode)?.via})`).join(', ')}; name one by its id ('synplug teardown --hold ID'), or give no selector (every hold)`,
    );
  if (recorded.length) return recorded[0];
  const first = holdModes().find((m) => m.select && m.scopes.includes('inbound'));
  if (!first?.select) throw new UsageError('this synplug has no inbound hold');
  return { ...(refuse ? await first.select(sockets, record, dev, true) : answers[0]), mode: first.name };
}

/**
 * The mode of a hold a result names: by its `mode` when given, else by its id.
 * @returns undefined for a hold no registered mode owns
 */
export function modeOfHold(h: { id?: string; mode?: string }, dev = ''): HoldMode | undefined {
  const id = h.id;
  return (h.mode !== undefined ? holdMode(h.mode) : undefined) ?? (id === undefined ? undefined : holdModes().find((m) => m.deviceOfId(id, dev) !== undefined));
}

/**
 * The device a hold is on, from its id (`local` is on `localDev`, the local
 * hold's device; `inbound:DEV` on DEV...): undefined for an id no mode owns.
 */
export function deviceOfHold(id: string, localDev: string): string | undefined {
  return modeOfHold({ id }, localDev)?.deviceOfId(id, localDev);
}

/** The forms of every registered mode's hold ids, for messages (`local`, `queue`, `queue:DEV`, `inbound:DEV`). */
export function holdIdForms(): string[] {
  return holdModes().flatMap((m) => m.idForms);
}

/** Whether `id` is a hold id some registered mode owns, naming a device where its form has one. */
export function isHoldId(id: string): boolean {
  const dev = deviceOfHold(id, 'lo');
  return dev !== undefined && dev !== '';
}

/**
 * The devices of the holds a lease holds, as plug.json's `dev` names them:
 * `lo` for a local hold, DEV for an inbound one (`eth0`, `lo,eth0`).
 * @param ids the holds' ids (`local`, `queue`, `inbound:DEV`, `queue:DEV`)
 * @param localDev the local hold's device (the configuration's)
 */
export function devicesOfHolds(ids: readonly string[], localDev: string): string {
  const devs = [...new Set(ids.map((id) => deviceOfHold(id, localDev) ?? localDev))];
  return devs.length ? devs.join(',') : localDev;
}

/**
 * Words about a hold a result names (see {@link HoldWords}): its mode's, or
 * plain ones for a hold no registered mode owns.
 * @param h the hold's entry in a result, or its id with the result's `dev` (and `addr`)
 */
export function holdWords(h: HoldFacts & { mode?: string }): HoldWords {
  const m = modeOfHold(h, h.dev);
  if (m) return m.describe({ ...h, dev: (h.id !== undefined && m.deviceOfId(h.id, h.dev)) || h.dev });
  return { label: `hold ${h.id}`, clients: `of hold ${h.id}`, setup: 'synplug setup', top: false, fromRecord: true, status: () => [] };
}

// One line per mode.
registerHoldMode(localMode);
registerHoldMode(inboundMode);
registerHoldMode(queueMode);

export type {
  HeldTraffic,
  Hold,
  HoldAction,
  HoldFacts,
  HoldHandoff,
  HoldMode,
  HoldInspection,
  HoldScope,
  HoldPieces,
  Piece,
  PieceLifetime,
  TeardownWords,
  HoldSockets,
  HoldVia,
  HoldWords,
  SetupStep,
  UnrecordedPiece,
} from './types.js';
