/**
 * The shape in which `setup` hands what it would do to a dry run
 * (setup.ts's `setupOrPlan` to setup-plan.ts), apart from both so that
 * neither imports the other's types.
 *
 * @module
 */
import type { GuardConfig } from './config.js';
import type { Hold, SetupStep } from './modes/index.js';
import type { HoldRecord, StateStore } from './state.js';
import type { ModulePiece } from './support.js';

/** What setup would do, as setup.ts hands it over at the point where it would start changing things. */
export interface SetupWould {
  /** the configuration setup resolved */
  config: GuardConfig;
  /** the hold it would build, complete or correct */
  hold: Hold;
  /** its steps, in order (not run) */
  steps: readonly SetupStep[];
  /** what of the hold carries synplug's mark now (a table's comment, an address's protocol), as `check` names it */
  marked: readonly string[];
  /** the record entry setup would write for it, were its steps run */
  entry: HoldRecord;
  /** its armed pieces by name: not set up, they come with each hold */
  armed: readonly string[];
  /** with `via: 'auto'`: which hold it chose, and why */
  chose?: string;
  /** the record id of the same hold under another key (a device renamed since), which setup would drop */
  replaces?: string;
  /** kernel support that could not be verified */
  unverified: readonly ModulePiece[];
  /** the state store (read only here) */
  store: StateStore;
  /** whether the state directory exists */
  dirExisted: boolean;
}
