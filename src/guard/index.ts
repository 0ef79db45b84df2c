/**
 * The zero-downtime reload technique: setup, check, plug, release, protect,
 * status, teardown. See `guard.ts` for the desired state and `protect.ts`
 * for the two phases of a protected reload.
 *
 * @module
 */
export {
  setup, check, plug, release, protect, status, teardown, recoverStale,
  formatSetup, formatCheck, formatProtect, formatStatus, formatTeardown,
  ForeignQdiscError, NotSetUpError, SetupError,
  type SetupOptions, type SetupResult, type CheckResult, type PieceState, type PlugResult, type ReleaseResult,
  type GuardProtectOptions, type StatusResult, type TeardownResult, type GuardOptions, type Recovery,
} from './guard.js';
export { runProtected, type ProtectOptions, type ProtectResult, type ListenTarget } from './protect.js';
export { GuardSession, NoDeviceError, type PlugStats } from './session.js';
export { DEFAULTS, TREE, resolveConfig, parseDuration, parseUint, type GuardConfig } from './config.js';
export { StateStore, isStale, type PlugRecord, type SetupRecord } from './state.js';
export { NotPermittedError, MissingSupportError, hasNetAdmin } from './support.js';
export { CommandError } from './command.js';
