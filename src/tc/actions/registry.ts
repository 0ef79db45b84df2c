/**
 * The action kind table, keyed by TCA_ACT_KIND. Nothing else names an
 * action kind: adding one is a new file plus one export line in `index.ts`.
 *
 * @module
 */
import * as actionModules from './index.js';
import type { ActionKind, ActionSpec } from './types.js';

/** An action kind of any spec type, as the table holds it: each kind's encoder checks its own fields. */
type AnyActionKind = ActionKind<ActionSpec>;

const ACTION_KINDS = new Map<string, AnyActionKind>();
for (const k of Object.values(actionModules) as unknown as AnyActionKind[]) ACTION_KINDS.set(k.kind, k);

/** The descriptor of an action kind (`"mirred"`), or undefined when this library does not know it. */
export function actionKind(kind: string): ActionKind<ActionSpec> | undefined {
  return ACTION_KINDS.get(kind);
}

/** Names of the known action kinds, sorted. */
export function actionKindNames(): string[] {
  return [...ACTION_KINDS.keys()].sort();
}

/** Add (or replace) an action kind at run time. */
export function registerActionKind<S extends ActionSpec>(k: ActionKind<S>): void {
  ACTION_KINDS.set(k.kind, k as unknown as AnyActionKind);
}

/** Kernel module that provides an action kind (`act_<kind>` unless the descriptor says otherwise). */
export function actionModule(kind: string): string {
  return ACTION_KINDS.get(kind)?.module ?? `act_${kind}`;
}
