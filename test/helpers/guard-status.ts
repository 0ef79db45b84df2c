/**
 * `status` results for the unit tests of the text formatters
 * (src/cli/format-guard.ts): one inbound hold's entry, and a result of
 * given holds, built from defaults that each test overrides where its case
 * differs.
 */
import type { HoldStatus, StatusResult } from '../../src/guard/types.js';

/**
 * One inbound hold in `status`: `inbound:DEV` on DEV (default `eth0`),
 * complete, IFB spifb3, port 80, no address, u32, no qdiscs or filters;
 * every field of `o` overrides (the id follows `o.dev` unless `o.id` is given).
 */
export function inboundHoldStatus(o: Partial<HoldStatus> = {}): HoldStatus {
  const dev = o.dev ?? 'eth0';
  return {
    id: `inbound:${dev}`,
    mode: 'inbound',
    via: 'plug',
    dev,
    state: 'ok',
    pieces: [],
    ifb: 'spifb3',
    ports: [80],
    addrs: [],
    classifier: 'u32',
    qdiscs: [],
    filters: [],
    ...o,
  };
}

/**
 * A `status` result with these holds, state `ok`, no plug record and no
 * leases; every field of `o` overrides.
 */
export function statusResult(holds: HoldStatus[], o: Partial<StatusResult> = {}): StatusResult {
  return { state: 'ok', plug: null, leases: [], holds, ...o };
}
