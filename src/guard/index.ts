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
  ForeignQdiscError, NotSetUpError, SetupError, EXIT_FOREIGN_QDISC,
  type SetupOptions, type SetupResult, type CheckResult, type PieceState, type PlugResult, type ReleaseResult,
  type GuardProtectOptions, type StatusResult, type TeardownResult, type GuardOptions, type Recovery,
} from './guard.js';
export { runProtected, EXIT_NOT_SET_UP, type ProtectOptions, type ProtectResult, type ListenTarget } from './protect.js';
export { GuardSession, NoDeviceError, EXIT_NO_DEVICE, type PlugStats } from './session.js';
export { DEFAULTS, TREE, resolveConfig, parseDuration, parseUint, type GuardConfig } from './config.js';
export { StateStore, isStale, type PlugRecord, type SetupRecord } from './state.js';
export { NotPermittedError, MissingSupportError, hasNetAdmin, EXIT_NOT_PERMITTED, EXIT_MISSING_SUPPORT } from './support.js';
export { CommandError, EXIT_COMMAND_NOT_FOUND, EXIT_COMMAND_NOT_EXECUTABLE } from './command.js';
