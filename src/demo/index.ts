/**
 * `synplug demo`: the reload technique shown on this machine in seconds,
 * with nothing but synplug and the kernel. See `run.ts` for what it does and
 * why each restart runs under the library's `protect`.
 *
 * @module
 */
export { runDemo, DemoInterruptedError, PHASE_STRETCH } from './run.js';
export {
  resolveDemoOptions,
  restartDueMs,
  DEMO_DEFAULTS,
  DEMO_LIMITS,
  MIN_RUN_BETWEEN_MS,
  DRAIN_MAX_MS,
  HOLD_MARGIN_MS,
  TIMEOUT_MARGIN_MS,
  type ResolvedDemoOptions,
} from './options.js';
export { percentile, summariseRequests, phaseResult, verdictOf, type RequestSummary } from './stats.js';
export { requestOnce, classifyError, ClientLoad, FAILURE_PAUSE_MS, type ClientLoadOptions } from './clients.js';
export { PongServer } from './server.js';
export {
  FAILURE_KINDS,
  type FailureKind,
  type RequestRecord,
  type LatencySummary,
  type RestartResult,
  type PhaseResult,
  type DemoVerdict,
  type DemoResult,
  type DemoOptions,
} from './types.js';
export { runDemoIsolated, DemoProcessError, DEMO_PROCESS_START_MS, type DemoWireOptions } from './isolated.js';
