/**
 * The shape check of an inbound hold's entry in `setup.json` (state.ts reads
 * it; kept apart from inbound.ts so that the state module imports nothing
 * that talks to the kernel).
 *
 * @module
 */
import { MIN_LIMIT } from '../config.js';

/** Whether a record entry (mode `inbound`) has every field an inbound hold's record has, of the right type. */
export function isInboundRecord(r: Record<string, unknown>): boolean {
  return (
    typeof r.ifb === 'string' &&
    r.ifb !== '' &&
    Array.isArray(r.ports) &&
    r.ports.length > 0 &&
    r.ports.every((p) => Number.isInteger(p) && p >= 1 && p <= 65535) &&
    Array.isArray(r.addrs) &&
    r.addrs.every((a) => typeof a === 'string') &&
    (r.classifier === 'flower' || r.classifier === 'u32') &&
    Number.isInteger(r.limit) &&
    (r.limit as number) >= MIN_LIMIT &&
    Array.isArray(r.families) &&
    r.families.every((f) => f === 'ip' || f === 'ipv6') &&
    typeof r.addedClsact === 'boolean'
  );
}

/**
 * What setup would refuse in a whole inbound record entry ({@link isInboundRecord}): a plug limit beyond what the
 * kernel's plug takes (a u32 of bytes).
 * @returns the sentence, or undefined when setup could have written it
 */
export function inboundRecordRefusal(r: Record<string, unknown>): string | undefined {
  if ((r.limit as number) > 0xffffffff) return `'limit' is ${String(r.limit)}: not a plug limit (${MIN_LIMIT}-4294967295 bytes, as setup takes --limit)`;
  return undefined;
}
