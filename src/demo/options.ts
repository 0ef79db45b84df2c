/**
 * The demo's options: defaults, bounds, and the schedule of restarts in a
 * phase. Validated before anything is set up or sent to the kernel.
 *
 * @module
 */
import { UsageError } from '../netlink/errors.js';
import type { DemoOptions } from './types.js';

/** Defaults of {@link DemoOptions}. */
export const DEMO_DEFAULTS = {
  /** seconds per phase */
  seconds: 5,
  /** restarts per phase */
  restarts: 10,
  /** ms without a listening socket at each restart */
  gapMs: 200,
  /** concurrent client loops */
  clients: 16,
} as const;

/**
 * The longest a restart waits for the listening socket's accept queue to
 * empty before it closes the socket, ms. Under the plug the queue only
 * shrinks, at the server's pace: in a software-emulated VM on a busy host the
 * demo's server took over a second to accept 14 queued connections.
 */
export const DRAIN_MAX_MS = 3000;

/** The max-hold of a protected restart beyond its gap and drain, ms: signal, listen and protect's sock_diag polling, on a slow machine. */
export const HOLD_MARGIN_MS = 10_000;

/** A request's timeout beyond the max-hold, ms: a held request is answered after the release, never counted as a timeout for being held. */
export const TIMEOUT_MARGIN_MS = 10_000;

/** The least time between two restarts beyond the gap, ms: the clients need a moment to reach the new listener. */
export const MIN_RUN_BETWEEN_MS = 100;

/** Limits of the options (inclusive). */
export const DEMO_LIMITS = {
  seconds: { min: 0.1, max: 600 },
  restarts: { min: 1, max: 1000 },
  gapMs: { min: 1, max: 60_000 },
  clients: { min: 1, max: 256 },
  requestTimeoutMs: { min: 100, max: 600_000 },
} as const;

/** {@link DemoOptions} with every number filled in and checked. */
export interface ResolvedDemoOptions {
  seconds: number;
  restarts: number;
  gapMs: number;
  clients: number;
  requestTimeoutMs: number;
  /** ms between the starts of two restarts: seconds * 1000 / restarts */
  intervalMs: number;
  /** max-hold of each protected restart, ms: the gap plus {@link DRAIN_MAX_MS} plus {@link HOLD_MARGIN_MS} */
  maxHoldMs: number;
  /** the drain's bound, ms ({@link DRAIN_MAX_MS}) */
  drainMaxMs: number;
}

function checkNumber(value: unknown, name: string, lim: { min: number; max: number }, whole: boolean, unit = ''): number {
  const ok = typeof value === 'number' && Number.isFinite(value) && (!whole || Number.isInteger(value)) && value >= lim.min && value <= lim.max;
  if (!ok) throw new UsageError(`${name}: ${whole ? 'a whole number' : 'a number'} from ${lim.min} to ${lim.max}${unit} (got ${String(value)})`);
  return value as number;
}

/**
 * Fill the defaults and check every bound.
 * @throws {UsageError} a value out of its bounds ({@link DEMO_LIMITS}), or restarts that do not fit in the
 *   phase: each needs its gap plus {@link MIN_RUN_BETWEEN_MS} of the phase's `seconds`
 */
export function resolveDemoOptions(o: DemoOptions = {}): ResolvedDemoOptions {
  const seconds = checkNumber(o.seconds ?? DEMO_DEFAULTS.seconds, 'seconds (--seconds)', DEMO_LIMITS.seconds, false, ' s');
  const restarts = checkNumber(o.restarts ?? DEMO_DEFAULTS.restarts, 'restarts (--restarts)', DEMO_LIMITS.restarts, true);
  const gapMs = checkNumber(o.gapMs ?? DEMO_DEFAULTS.gapMs, 'gap (--gap)', DEMO_LIMITS.gapMs, true, ' ms');
  const clients = checkNumber(o.clients ?? DEMO_DEFAULTS.clients, 'clients', DEMO_LIMITS.clients, true);
  const maxHoldMs = gapMs + DRAIN_MAX_MS + HOLD_MARGIN_MS;
  const requestTimeoutMs = checkNumber(o.requestTimeoutMs ?? maxHoldMs + TIMEOUT_MARGIN_MS, 'requestTimeoutMs', DEMO_LIMITS.requestTimeoutMs, true, ' ms');
  const intervalMs = (seconds * 1000) / restarts;
  if (intervalMs < gapMs + MIN_RUN_BETWEEN_MS) {
    throw new UsageError(
      `${restarts} restarts with a gap of ${gapMs} ms do not fit in ${seconds} s per phase: each restart needs its gap plus ${MIN_RUN_BETWEEN_MS} ms (give more --seconds, fewer --restarts or a shorter --gap)`,
    );
  }
  return { seconds, restarts, gapMs, clients, requestTimeoutMs, intervalMs, maxHoldMs, drainMaxMs: DRAIN_MAX_MS };
}

/**
 * When restart `k` of a phase is due: restarts are spread evenly, each in the
 * middle of its share of the phase, so that the clients run before the first
 * and after the last.
 * @param k 0-based restart number
 * @param intervalMs the phase's length divided by the number of restarts, ms
 * @returns ms after the phase's start
 */
export function restartDueMs(k: number, intervalMs: number): number {
  return (k + 0.5) * intervalMs;
}

/**
 * How far a phase may stretch past `seconds` to do all its restarts: a protected
 * restart first starts protect's watchdog (a `node` process: seconds in a
 * software-emulated VM), so it can take longer than its share of the phase. A
 * restart that would end past that is not started; the result says how many ran.
 */
export const PHASE_STRETCH = 10;
