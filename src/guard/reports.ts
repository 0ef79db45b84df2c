/**
 * The library's `check` and `status`: the holds' report (setup.ts, holds.ts)
 * with `net.ipv4.tcp_migrate_req` of the namespace and what it means for the
 * listeners of the holds reported (`sysctl`, sysctl.ts), as the CLI prints
 * it. The listeners are those of the local hold's address; with only holds
 * of ports (inbound holds), those on their ports; else those of the first
 * address a hold lists.
 *
 * @module
 */
import { check as checkHolds } from './setup.js';
import { status as statusHolds } from './holds.js';
import { migrateReqReport, type MigrateReqReport } from './sysctl.js';
import type { CheckOptions, CheckResult, StatusOptions, StatusResult } from './types.js';
import { inCallNetns } from './call-netns.js';
import { checkEntryOptions } from './config.js';

/**
 * `tcp_migrate_req` for a report of holds.
 * @param r the report: each hold's `addr` (the local plug hold's), `ports` and `addrs`
 * @param netns where to read the sysctl (default: the library's default namespace)
 * @throws {UsageError} the namespace does not exist
 */
export async function holdsMigrateReq(
  r: { holds: ReadonlyArray<{ addr?: string; ports?: readonly number[]; addrs?: readonly string[] }> },
  netns?: string,
): Promise<MigrateReqReport> {
  const ns = netns !== undefined ? { netns } : {};
  const local = r.holds.find((h) => h.addr !== undefined)?.addr;
  if (local !== undefined) return migrateReqReport({ addr: local, ...ns });
  const ports = [...new Set(r.holds.flatMap((h) => h.ports ?? []))];
  if (ports.length) return migrateReqReport({ ports, ...ns });
  const addr = r.holds.find((h) => h.addrs?.length)?.addrs?.[0];
  return migrateReqReport({ ...(addr !== undefined && { addr }), ...ns });
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
