/**
 * The zero-downtime reload technique: setup, check, plug, release, protect,
 * status, teardown, over every hold that is set up (today the local `lo`
 * hold; see `modes/`). `setup.ts` builds and checks, `holds.ts` plugs,
 * releases, shows and removes, `protect.ts` runs a command in the plug
 * window. Text output is the CLI's (src/cli/format-guard.ts).
 *
 * @module
 */
export { setup } from './setup.js';
export { check, status, holdsMigrateReq } from './reports.js';
export { planSetup, planAction, planEffects, type SetupPlan, type PlanChange, type PlanAction } from './setup-plan.js';
export { plug, release, teardown } from './holds.js';
export { protect, runProtected } from './protect.js';
export { removeReportCounters, lossCauses, type ReloadReport, type HeldTraffic } from './report.js';
export { readHistory, lastReload, type HistoryEntry } from './history.js';
export { lastHolderFailure, HOLDER_LOG, type HolderFailure } from './holder-log.js';
export { PrecheckFailedError, PRECHECK_TIMEOUT_MS, type PrecheckResult } from './precheck.js';
export { recoverStale } from './context.js';
export type {
  SetupOptions,
  SetupResult,
  CheckResult,
  PieceState,
  SetupState,
  PlugResult,
  ReleaseResult,
  ReleaseOptions,
  GuardProtectOptions,
  StatusResult,
  TeardownResult,
  BrokenLease,
  ListenerCut,
  TeardownOptions,
  HoldSelector,
  CheckOptions,
  StatusOptions,
  HoldStatus,
  UnrecordedIfb,
  GuardOptions,
  Recovery,
  ProtectOptions,
  ProtectResult,
  ProtectSession,
  ListenTarget,
  Listener,
  PlugStats,
} from './types.js';
export {
  ForeignQdiscError,
  NotSetUpError,
  SetupError,
  NoDeviceError,
  NotPermittedError,
  CommandError,
  StateFileError,
  InterruptedError,
} from './errors.js';
export { GuardSession } from './session.js';
export type { MigrateReqReport } from './sysctl.js';
export { DEFAULTS, TREE, NFT_NAMES, resolveConfig, parseDuration, parseUint, type GuardConfig } from './config.js';
export { defaultStateDir } from './state-dir.js';
export { StateStore, isStale, type PlugRecord, type SetupRecord, type HoldRecord, type LocalHoldRecord } from './state.js';
export { MissingSupportError, SockDiagUnavailableError, hasNetAdmin } from './support.js';
export { registerHoldMode, holdMode, holdModeNames, holdModeFor, holdModes } from './modes/index.js';
export type { Hold, HoldMode, HoldInspection, HoldPieces, HoldSockets, Piece, PieceLifetime, SetupStep } from './modes/types.js';
export {
  INBOUND_PREF,
  INBOUND_U32_HTID,
  IFB_ALIAS_PREFIX,
  ifbNameFor,
  inboundId,
  validateInbound,
  familiesOf,
  IfbNameClashError,
  ForeignFilterError,
  type InboundOptions,
  type InboundSpec,
  type InboundHoldRecord,
  type InboundClassifier,
} from './modes/inbound.js';
export {
  type MarkRuleOptions,
  type ResolvedMarkRule,
  type TableState,
  type EnsureResult,
  type RemoveOptions,
  type ElementOptions,
  type PreparedElementOps,
  resolveMarkRule,
  markRuleExprs,
  markChainSpec,
  markSetSpec,
  readTableState,
  ruleMatches,
  planMarkRule,
  ensureMarkRule,
  removeMarkTable,
  prepareElementOps,
  addSetElement,
  deleteSetElement,
  listMarkSetElements,
} from './modes/local-nft.js';
