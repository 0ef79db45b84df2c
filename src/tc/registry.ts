/**
 * The kind tables: every qdisc kind in `kinds/index.ts` and every filter
 * kind in `filters/index.ts`, keyed by their TCA_KIND string. Nothing else
 * in src/tc names a kind: adding one is a new file plus one export line.
 *
 * @module
 */
import { UsageError } from '../netlink/errors.js';
import * as qdiscModules from './kinds/index.js';
import * as filterModules from './filters/index.js';
import type { FilterKind, OptionType, QdiscKind } from './types.js';

/**
 * A qdisc kind of any options type, as the table holds it: the encoders
 * take what the caller gave, once `checkOptionKeys` (or, for tc words,
 * `optionsFromWords`) has read it.
 */
type AnyQdiscKind = QdiscKind<Record<string, unknown>, Record<string, unknown>>;
/** A filter kind of any options type (see {@link AnyQdiscKind}). */
type AnyFilterKind = FilterKind<Record<string, unknown>>;

const QDISC_KINDS = new Map<string, AnyQdiscKind>();
const FILTER_KINDS = new Map<string, AnyFilterKind>();
/** Every registered kind name (built on first use, reset by a registration). */
let KIND_NAMES: string[] | undefined;
for (const k of Object.values(qdiscModules) as unknown as AnyQdiscKind[]) QDISC_KINDS.set(k.kind, k);
for (const k of Object.values(filterModules) as unknown as AnyFilterKind[]) FILTER_KINDS.set(k.kind, k);

/** The descriptor of a qdisc kind (`"htb"`), or undefined when this library does not know it. */
export function qdiscKind(kind: string): AnyQdiscKind | undefined {
  return QDISC_KINDS.get(kind);
}

/** The descriptor of a filter kind (`"u32"`), or undefined. */
export function filterKind(kind: string): AnyFilterKind | undefined {
  return FILTER_KINDS.get(kind);
}

/**
 * The registered kind name (qdisc or filter) spelt by `buf[start, end)`, or
 * undefined: the decoders reuse the one string instead of making one per
 * message of a dump.
 */
export function knownName(buf: Buffer, start: number, end: number): string | undefined {
  const n = end - start;
  if (!KIND_NAMES) KIND_NAMES = [...QDISC_KINDS.keys(), ...FILTER_KINDS.keys()];
  const names = KIND_NAMES;
  next: for (let j = 0; j < names.length; j++) {
    const k = names[j];
    if (k.length !== n) continue;
    for (let i = 0; i < n; i++) if (k.charCodeAt(i) !== buf[start + i] || buf[start + i] > 0x7f) continue next;
    return k;
  }
  return undefined;
}

/** Names of the known qdisc kinds, sorted. */
export function qdiscKindNames(): string[] {
  return [...QDISC_KINDS.keys()].sort();
}

/** Names of the known filter kinds, sorted. */
export function filterKindNames(): string[] {
  return [...FILTER_KINDS.keys()].sort();
}

/**
 * Add (or replace) a qdisc kind at run time, for programs that need one this
 * library lacks. Built-in kinds are registered in `kinds/index.ts`.
 */
export function registerQdiscKind<O extends object, C extends object>(k: QdiscKind<O, C>): void {
  QDISC_KINDS.set(k.kind, k as unknown as AnyQdiscKind);
  KIND_NAMES = undefined;
}

/** Add (or replace) a filter kind at run time. */
export function registerFilterKind<O extends object>(k: FilterKind<O>): void {
  FILTER_KINDS.set(k.kind, k as unknown as AnyFilterKind);
  KIND_NAMES = undefined;
}

/** Kernel module that provides a qdisc kind (`sch_<kind>` unless the descriptor says otherwise). */
export function qdiscModule(kind: string): string {
  return QDISC_KINDS.get(kind)?.module ?? `sch_${kind}`;
}

/** Kernel module that provides a filter kind (`cls_<kind>` unless the descriptor says otherwise). */
export function filterModule(kind: string): string {
  return FILTER_KINDS.get(kind)?.module ?? `cls_${kind}`;
}

/** Whether `v` has the JavaScript type `t`. */
function hasType(v: unknown, t: OptionType): boolean {
  switch (t) {
    case 'number':
      return typeof v === 'number';
    case 'string':
      return typeof v === 'string';
    case 'boolean':
      return typeof v === 'boolean';
    case 'number|string':
      return typeof v === 'number' || typeof v === 'string';
    case 'array':
      return Array.isArray(v);
    case 'object':
      return typeof v === 'object' && v !== null && !Array.isArray(v);
    default:
      return false;
  }
}

/** What a value is, for the error message. */
function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v} (${JSON.stringify(v)})`;
}

/** `qdisc kind 'htb'`, for messages. */
function kindLabel(what: string, desc: AnyQdiscKind | AnyFilterKind): string {
  return `${what} kind '${desc.kind}'`;
}

/**
 * Check an options object against the keys and types its kind declares
 * (`optionKeys` / `optionTypes`, and for classes `classOptionKeys` /
 * `classOptionTypes`), before the kind encodes it: a misspelt key
 * (`defualt`, `ciel`) or a value of the wrong type is refused instead of
 * silently ignored or thrown as a TypeError. A kind that declares neither
 * is not checked here (its encoder must check). Keys whose value is
 * `undefined` count as absent.
 * @param desc the kind's descriptor
 * @param what `'qdisc'`, `'class'` or `'filter'`
 * @param options what the caller gave
 * @returns `options`, typed as a record
 * @throws {UsageError} not a plain object, a key the kind does not take, or a value of the wrong type
 */
export function checkOptionKeys(desc: AnyQdiscKind | AnyFilterKind, what: 'qdisc' | 'class' | 'filter', options: unknown): Record<string, unknown> {
  // (runs on every request built from an options object, e.g. each changeQdisc: no allocation unless it throws)
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new UsageError(`${kindLabel(what, desc)}: options must be an object (or a list of tc words), not ${typeName(options)}`);
  }
  const q = desc as AnyQdiscKind;
  const types = (what === 'class' ? q.classOptionTypes : desc.optionTypes) as Readonly<Record<string, OptionType>> | undefined;
  const declared = what === 'class' ? q.classOptionKeys : desc.optionKeys;
  const o = options as Record<string, unknown>;
  if (declared || types) {
    for (const k in o) {
      if (!Object.hasOwn(o, k) || o[k] === undefined) continue;
      if (declared ? !declared.includes(k) : !Object.hasOwn(types!, k)) {
        const keys = declared ?? Object.keys(types!);
        throw new UsageError(
          `${kindLabel(what, desc)} has no ${what === 'class' ? 'class ' : ''}option ${JSON.stringify(k)} (it takes ${keys.length ? keys.join(', ') : 'none'})`,
        );
      }
    }
  }
  if (types) {
    for (const k in types) {
      if (!Object.hasOwn(types, k)) continue;
      const t = types[k];
      if (o[k] !== undefined && !hasType(o[k], t)) {
        throw new UsageError(
          `${kindLabel(what, desc)}: option "${k}" must be ${t === 'array' ? 'an array' : t === 'object' ? 'an object' : `a ${t.replace('|', ' or ')}`}, not ${typeName(o[k])}`,
        );
      }
    }
  }
  return o;
}
