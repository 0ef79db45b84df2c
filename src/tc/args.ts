/**
 * Checks of what callers give: integers in tc's notation, and the keys of
 * spec and options objects.
 *
 * @module
 */
import { UsageError } from '../netlink/errors.js';

/**
 * An integer in decimal or 0x hex within [min, max].
 * @throws {UsageError} not an integer or out of range
 */
export function parseIntArg(v: string | number, what: string, min = 0, max = 0xffffffff): number {
  let n: number;
  if (typeof v !== 'number' && typeof v !== 'string')
    throw new UsageError(`${what}: expected an integer, not ${v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v}`);
  if (typeof v === 'number') n = v;
  else if (/^-?[0-9]+$/.test(v.trim())) n = Number(v.trim());
  else if (/^0x[0-9a-f]+$/i.test(v.trim())) n = parseInt(v.trim().slice(2), 16);
  else throw new UsageError(`${what}: ${JSON.stringify(v)} is not an integer`);
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`${what}: ${v} is out of range (${min}..${max})`);
  return n;
}

/**
 * The top-level keys of a spec or options object: refuses what is not an
 * object and any key not in `allowed` (a misspelt `hadle` would otherwise be
 * ignored and the kernel choose the handle). Keys whose value is undefined
 * count as given.
 * @param spec what the caller passed
 * @param allowed the keys it may have
 * @param what the function, for the message (e.g. `"addQdisc"`)
 * @throws {UsageError} not a plain object, or an unknown key (named, with the allowed ones)
 */
export function checkSpecKeys(spec: unknown, allowed: readonly string[], what: string): void {
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) {
    throw new UsageError(
      `${what}: expected an object with ${allowed.join(', ')}, not ${spec === null ? 'null' : Array.isArray(spec) ? 'an array' : typeof spec}`,
    );
  }
  // (runs on every operation: no allocation unless a key is unknown)
  let bad = false;
  for (const k in spec) {
    if (Object.hasOwn(spec, k) && !allowed.includes(k)) {
      bad = true;
      break;
    }
  }
  if (!bad) return;
  const unknown = Object.keys(spec).filter((k) => !allowed.includes(k));
  if (unknown.length) {
    throw new UsageError(`${what}: unknown key${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')} (allowed: ${allowed.join(', ')})`);
  }
}
