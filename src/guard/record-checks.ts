/**
 * The shape checks of the hold entries in `setup.json`, by mode name: each
 * mode registers its own when the registry (modes/index.ts) registers the
 * mode. Kept apart from the registry so that the state module imports no
 * mode (and no mode's kernel code).
 *
 * @module
 */

const CHECKS = new Map<string, (r: Record<string, unknown>) => boolean>();

/**
 * Register the record check of a mode (replaces one of the same name).
 * @param mode the mode's registry name
 * @param check whether an entry of that mode has every field of the right type
 */
export function registerRecordCheck(mode: string, check: (r: Record<string, unknown>) => boolean): void {
  CHECKS.set(mode, check);
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
