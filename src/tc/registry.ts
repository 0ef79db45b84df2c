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
import type { FilterKind, QdiscKind } from './types.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyQdiscKind = QdiscKind<any, any>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyFilterKind = FilterKind<any>;

const QDISC_KINDS = new Map<string, AnyQdiscKind>();
const FILTER_KINDS = new Map<string, AnyFilterKind>();
for (const k of Object.values(qdiscModules) as AnyQdiscKind[]) QDISC_KINDS.set(k.kind, k);
for (const k of Object.values(filterModules) as AnyFilterKind[]) FILTER_KINDS.set(k.kind, k);

/** The descriptor of a qdisc kind (`"htb"`), or undefined when this library does not know it. */
export function qdiscKind(kind: string): AnyQdiscKind | undefined {
  return QDISC_KINDS.get(kind);
}

/** The descriptor of a filter kind (`"u32"`), or undefined. */
export function filterKind(kind: string): AnyFilterKind | undefined {
  return FILTER_KINDS.get(kind);
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
export function registerQdiscKind(k: AnyQdiscKind): void {
  QDISC_KINDS.set(k.kind, k);
}

/** Add (or replace) a filter kind at run time. */
export function registerFilterKind(k: AnyFilterKind): void {
  FILTER_KINDS.set(k.kind, k);
}

/** Kernel module that provides a qdisc kind (`sch_<kind>` unless the descriptor says otherwise). */
export function qdiscModule(kind: string): string {
  return QDISC_KINDS.get(kind)?.module ?? `sch_${kind}`;
}

/** Kernel module that provides a filter kind (`cls_<kind>` unless the descriptor says otherwise). */
export function filterModule(kind: string): string {
  return FILTER_KINDS.get(kind)?.module ?? `cls_${kind}`;
}

/**
 * Check an options object against the keys its kind declares
 * (`optionKeys` / `classOptionKeys` of a qdisc kind, `optionKeys` of a
 * filter kind), before the kind encodes it: a misspelt key (`defualt`,
 * `ciel`) is refused instead of silently ignored. A kind that declares no
 * keys is not checked here (its encoder must check).
 * @param desc the kind's descriptor
 * @param what `'qdisc'`, `'class'` or `'filter'`
 * @param options what the caller gave
 * @returns `options`, typed as a record
 * @throws {UsageError} not a plain object, or a key the kind does not take
 */
export function checkOptionKeys(desc: AnyQdiscKind | AnyFilterKind, what: 'qdisc' | 'class' | 'filter', options: unknown): Record<string, unknown> {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new UsageError(`${what} kind '${desc.kind}': options must be an object (or a list of tc words), not ${options === null ? 'null' : typeof options}`);
  }
  const keys = what === 'class' ? (desc as AnyQdiscKind).classOptionKeys : desc.optionKeys;
  if (keys) {
    for (const k of Object.keys(options)) {
      if ((options as Record<string, unknown>)[k] !== undefined && !keys.includes(k)) {
        throw new UsageError(`${what} kind '${desc.kind}' has no option ${JSON.stringify(k)} (it takes ${keys.length ? keys.join(', ') : 'none'})`);
      }
    }
  }
  return options as Record<string, unknown>;
}
