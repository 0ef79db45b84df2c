/**
 * The kind tables: every qdisc kind in `kinds/index.ts` and every filter
 * kind in `filters/index.ts`, keyed by their TCA_KIND string. Nothing else
 * in src/tc names a kind: adding one is a new file plus one export line.
 *
 * @module
 */
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
