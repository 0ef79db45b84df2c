/**
 * The registry of hold modes: a mode is one module implementing
 * {@link HoldMode}, plus one line here. The guard finds modes by the name a
 * setup record gives (`mode` of each hold), or by their kind (`via`: plug or
 * queue) and whose clients they hold (`scope`: local or inbound). This file
 * and `types.ts` are the only way into a mode from the rest of the guard.
 *
 * @module
 */
import type { HoldMode, HoldScope, HoldVia } from './types.js';
import { registerRecordCheck } from '../record-checks.js';
import { localMode } from './local.js';
import { inboundMode } from './inbound.js';
import { queueMode } from './queue.js';

const MODES = new Map<string, HoldMode>();

/**
 * Register a hold mode (replaces one of the same name).
 * @param mode the mode
 */
export function registerHoldMode(mode: HoldMode): void {
  MODES.set(mode.name, mode);
  registerRecordCheck(mode.name, mode.isRecord);
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

/** The kinds of hold registered (`plug`, `queue`), each once. */
export function holdVias(): HoldVia[] {
  return [...new Set(holdModes().map((m) => m.via))];
}

// One line per mode.
registerHoldMode(localMode);
registerHoldMode(inboundMode);
registerHoldMode(queueMode);

export type {
  HeldTraffic,
  Hold,
  HoldAction,
  HoldHandoff,
  HoldMode,
  HoldInspection,
  HoldScope,
  HoldSetupPlan,
  HoldSockets,
  HoldVia,
  SetupStep,
  UnrecordedPiece,
} from './types.js';
