/**
 * What client.ts, stats.ts and main.ts share (kept apart from client.ts,
 * which starts its IPC loop when imported by a forked process).
 */
import { performance } from 'node:perf_hooks';

/** Error kinds a request can end with (client.ts). */
export const ERROR_KINDS = [
  /** ECONNREFUSED: nothing listening (or a RST in answer to the SYN) */
  'connect-refused',
  /** ECONNRESET (or EPIPE) before the connection was established */
  'connect-reset',
  /** no connection within the request timeout */
  'connect-timeout',
  /** any other error before the connection was established */
  'connect-error',
  /** ECONNRESET / EPIPE after the connection was established */
  'read-reset',
  /** connected, but no complete response within the request timeout */
  'read-timeout',
  /** connected, then the server closed without sending a status line */
  'read-empty',
  /** any other error after the connection was established */
  'read-error',
  /** a status line arrived, but its status is not 2xx */
  'non-2xx',
] as const;
/** One of {@link ERROR_KINDS}. */
export type ErrorKind = (typeof ERROR_KINDS)[number];

/** Wall clock in ms since the epoch, with sub-ms resolution (same clock in every process). */
export function wallMs(): number {
  return performance.timeOrigin + performance.now();
}
