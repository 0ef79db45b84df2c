/**
 * synplug: zero-downtime proxy reloads over netlink, with no tc, ip, nft or
 * iptables binary.
 *
 * ```ts
 * import { setup, protect } from 'synplug';
 * await setup();                                   // once, at boot (root)
 * const r = await protect({ command: ['systemctl', 'reload', 'haproxy'] });
 * console.log(r.exitCode, r.report.holdMs, r.report.lossless); // the command's status, the reload's report
 * ```
 *
 * Errors are `SynplugError`s with a `category` ('usage', 'kernel',
 * 'permission', 'missing-module', 'not-set-up'...), never an exit code: the
 * CLI maps categories to exit codes.
 *
 * The layers are also exported: `synplug/netlink` (the core, links,
 * addresses), `synplug/tc` (qdiscs, classes, filters), `synplug/iptables`
 * (nftables).
 *
 * @module
 */
export * from './guard/index.js';
export { KindUnavailableError } from './tc/explain.js';
export { NetlinkConnection, SocketTransport, type Transport } from './netlink/connection.js';
export {
  SynplugError,
  UsageError,
  NetlinkError,
  NetlinkDecodeError,
  DumpInterruptedError,
  CORE_CATEGORIES,
  categoryOfErrno,
  type ErrorCategory,
  type ErrorCategories,
} from './netlink/errors.js';
import { CORE_CATEGORIES } from './netlink/errors.js';
import type { ErrorCategory } from './netlink/errors.js';
import { GUARD_CATEGORIES } from './guard/errors.js';
export { GUARD_CATEGORIES } from './guard/errors.js';

/** Every error category: the core's ({@link CORE_CATEGORIES}), then the guard's ({@link GUARD_CATEGORIES}). */
export const ERROR_CATEGORIES: readonly ErrorCategory[] = [...CORE_CATEGORIES, ...GUARD_CATEGORIES];
