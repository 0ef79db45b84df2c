/**
 * The registry of hold modes: a mode is one module implementing
 * {@link HoldMode}, plus one line here. The guard finds modes by the name a
 * setup record gives (`mode` of each hold).
 *
 * @module
 */
import type { HoldMode } from './types.js';
import { localMode } from './local.js';
import { inboundMode } from './inbound.js';

const MODES = new Map<string, HoldMode>();

/**
 * Register a hold mode (replaces one of the same name).
 * @param mode the mode
 */
export function registerHoldMode(mode: HoldMode): void {
  MODES.set(mode.name, mode);
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

// One line per mode.
registerHoldMode(localMode);
registerHoldMode(inboundMode);

export type { Hold, HoldMode, HoldInspection, HoldSetupPlan, HoldSockets, SetupStep } from './types.js';
