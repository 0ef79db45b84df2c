/**
 * The library's `check` and `status`: the holds' report (setup.ts, holds.ts)
 * with `net.ipv4.tcp_migrate_req` of the namespace and what it means for the
 * listeners of the holds reported (`sysctl`, sysctl.ts), as the CLI prints
 * it. The listeners are those of every hold reported: a listener counts when
 * it accepts connections one of the holds holds.
 *
 * @module
 */
import { check as checkHolds } from './setup.js';
import { status as statusHolds } from './holds.js';
import { migrateReqReport, type HeldEndpoints, type MigrateReqReport } from './sysctl.js';
import type { CheckOptions, CheckResult, StatusOptions, StatusResult } from './types.js';
import { inCallNetns } from './call-netns.js';
import { checkEntryOptions } from './config.js';

/**
 * `tcp_migrate_req` for a report of holds: the listeners of every hold
 * reported (the local hold's address, an inbound hold's ports, a queue
 * hold's addresses and ports), together.
 * @param r the report: each hold's `addr` (the local plug hold's), `ports` and `addrs`
 * @param netns where to read the sysctl (default: the library's default namespace)
 * @throws {UsageError} the namespace does not exist
 */
export async function holdsMigrateReq(
  r: { holds: ReadonlyArray<{ addr?: string; ports?: readonly number[]; addrs?: readonly string[] }> },
  netns?: string,
): Promise<MigrateReqReport> {
  return migrateReqReport({ holds: heldEndpointsOf(r), ...(netns !== undefined && { netns }) });
}

/**
 * What each hold of a report holds, as sysctl.ts's `heldListeners` takes it: the local plug hold its `addr` on
 * every port, another hold its `addrs` (none: any address) on its `ports` (none: every port).
 * @param r the report: each hold's `addr`, `ports` and `addrs`
 */
export function heldEndpointsOf(r: { holds: ReadonlyArray<{ addr?: string; ports?: readonly number[]; addrs?: readonly string[] }> }): HeldEndpoints[] {
  return r.holds.map((h) => ({ addrs: h.addr !== undefined ? [h.addr] : (h.addrs ?? []), ports: h.ports ?? [] }));
}

/**
 * Verify every hold set up (or the one selected), changing nothing; with `sysctl`.
 * @param opts as setup.ts's `check`
 * @returns its result, and `sysctl` ({@link holdsMigrateReq})
 * @throws as setup.ts's `check`
 */
export async function check(opts: CheckOptions = {}): Promise<CheckResult & { sysctl: MigrateReqReport }> {
  checkEntryOptions('check', opts);
  if (opts?.netns !== undefined) return inCallNetns('check', opts, (o) => check(o));
  const r = await checkHolds(opts);
  return { ...r, sysctl: await holdsMigrateReq(r) };
}

/**
 * Every hold set up (or the one selected), its pieces and counters; with `sysctl`.
 * @param opts as holds.ts's `status`
 * @returns its result, and `sysctl` ({@link holdsMigrateReq})
 * @throws as holds.ts's `status`
 */
export async function status(opts: StatusOptions = {}): Promise<StatusResult & { sysctl: MigrateReqReport }> {
  checkEntryOptions('status', opts);
  if (opts?.netns !== undefined) return inCallNetns('status', opts, status);
  const r = await statusHolds(opts);
  return { ...r, sysctl: await holdsMigrateReq(r) };
}
