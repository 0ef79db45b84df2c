/**
 * The shape checks of the hold entries in `setup.json`, by mode name: each
 * mode registers its own when the registry (modes/index.ts) registers the
 * mode. Kept apart from the registry so that the state module imports no
 * mode (and no mode's kernel code).
 *
 * Two checks per mode: whether an entry has every field of the right type
 * (else it is not a record synplug wrote), and what in it `setup` would
 * refuse (a loopback address, a table that is not synplug's...): synplug
 * never writes that either, and a record is never trusted to name it.
 *
 * @module
 */

const CHECKS = new Map<string, (r: Record<string, unknown>) => boolean>();
const KEYS = new Map<string, (id: string, r: Record<string, unknown>) => boolean>();
const REFUSALS = new Map<string, (r: Record<string, unknown>) => string | undefined>();

/**
 * Register the record checks of a mode (replaces those of the same name).
 * @param mode the mode's registry name
 * @param check whether an entry of that mode has every field of the right type
 * @param refusal what in a well-formed entry setup would refuse, as a sentence; undefined when nothing
 * @param keyOf whether `id` is the key setup gives a well-formed entry of that mode (`queue` for a local queue hold, `inbound:DEV` for DEV's)
 */
export function registerRecordCheck(
  mode: string,
  check: (r: Record<string, unknown>) => boolean,
  refusal?: (r: Record<string, unknown>) => string | undefined,
  keyOf?: (id: string, r: Record<string, unknown>) => boolean,
): void {
  CHECKS.set(mode, check);
  if (keyOf) KEYS.set(mode, keyOf);
  else KEYS.delete(mode);
  if (refusal) REFUSALS.set(mode, refusal);
  else REFUSALS.delete(mode);
}

/**
 * Whether a record entry is whole for its mode; an entry of a mode not
 * registered is judged by the common fields only (the session refuses to
 * open it, naming the mode).
 */
export function isRecordOfItsMode(r: Record<string, unknown>): boolean {
  const check = typeof r.mode === 'string' ? CHECKS.get(r.mode) : undefined;
  return check === undefined || check(r);
}

/**
 * What setup would refuse in a whole record entry of its mode (never throws).
 * @returns the mode's sentence, or undefined when nothing is refused
 */
export function recordRefusal(r: Record<string, unknown>): string | undefined {
  const refusal = typeof r.mode === 'string' ? REFUSALS.get(r.mode) : undefined;
  try {
    return refusal?.(r);
  } catch (e) {
    return `its fields cannot be judged (${(e as Error).message})`;
  }
}

/**
 * Whether `id` is the key under which setup records a whole entry of its
 * mode (an entry of a mode not registered: any key). Never throws.
 */
export function isKeyOfRecord(id: string, r: Record<string, unknown>): boolean {
  const keyOf = typeof r.mode === 'string' ? KEYS.get(r.mode) : undefined;
  try {
    return keyOf === undefined || keyOf(id, r);
  } catch {
    return false;
  }
}
