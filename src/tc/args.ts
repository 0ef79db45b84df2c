/**
 * A small reader over tc-style argument lists (`["limit", "1000"]`), used by
 * the kinds' `parseArgs`.
 *
 * @module
 */
import { UsageError } from '../netlink/errors.js';

/** Reads words one at a time; every error names the kind and the word. */
export class ArgReader {
  private i = 0;
  /**
   * @param args the words after the kind
   * @param what the kind, for error messages (e.g. `"qdisc htb"`)
   */
  constructor(
    private readonly args: readonly string[],
    private readonly what: string,
  ) {}
  /** More words left. */
  more(): boolean {
    return this.i < this.args.length;
  }
  /** The next word (a keyword). */
  next(): string {
    return this.args[this.i++];
  }
  /** Every word left (taken): what follows `action` belongs to the action list. */
  rest(): string[] {
    const out = this.args.slice(this.i);
    this.i = this.args.length;
    return out;
  }
  /** Look at the next word without taking it. */
  peek(): string | undefined {
    return this.args[this.i];
  }
  /**
   * The value after `keyword`.
   * @throws {UsageError} when there is none
   */
  value(keyword: string): string {
    if (this.i >= this.args.length) throw new UsageError(`${this.what}: "${keyword}" needs a value`);
    return this.args[this.i++];
  }
  /** An integer value after `keyword`, decimal or 0x hex, in [min, max]. @throws {UsageError} */
  int(keyword: string, min = 0, max = 0xffffffff): number {
    const v = this.value(keyword);
    return parseIntArg(v, `${this.what} ${keyword}`, min, max);
  }
  /** @throws {UsageError} naming the unknown word */
  unknown(word: string, expected: string): never {
    throw new UsageError(`${this.what}: unknown argument "${word}" (expected ${expected})`);
  }
}

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
