/**
 * A filter's action list (TCA_U32_ACT, TCA_FLOWER_ACT, TCA_MATCHALL_ACT,
 * TCA_FW_ACT): one nested attribute per action, its type the action's
 * order (1..TCA_ACT_MAX_PRIO), holding
 * ```
 * TCA_ACT_KIND     string ("mirred")
 * TCA_ACT_OPTIONS  nested (NLA_F_NESTED set, as tc sends it): the kind's attributes
 * TCA_ACT_STATS    nested gnet_stats (dumps): the action's own counters
 * TCA_ACT_INDEX, TCA_ACT_COOKIE, TCA_ACT_FLAGS, TCA_ACT_IN_HW_COUNT ...
 * ```
 * (linux/pkt_cls.h). Encoding, decoding to tc -j's `actions` array, tc's
 * text, tc's command-line words, and device names for mirred.
 *
 * @module
 */
import { AttributeView, NLA_F_NESTED, nested, str } from '../../netlink/attributes.js';
import { UsageError } from '../../netlink/errors.js';
import { listRawLinks, resolveIfindex, type RouteConnection } from '../../netlink/route/link.js';
import { formatStats, stats2Into } from '../stats.js';
import { TCA_ACT_KIND, TCA_ACT_OPTIONS, TCA_ACT_STATS, TCA_ACT_COOKIE } from './constants.js';
import { MAX_ACTIONS } from './common.js';
import { actionKind, actionKindNames, actionModule } from './registry.js';
import type { ActionEntry, ActionSpec } from './types.js';

/**
 * Encode an action list as the filter attribute `type` (e.g. TCA_U32_ACT).
 * @param specs 1..32 actions, in order
 * @throws {UsageError} not an array, more than 32, an unknown kind, or a kind's bad fields
 */
export function encodeActionList(type: number, specs: readonly ActionSpec[]): Buffer {
  if (!Array.isArray(specs)) throw new UsageError('actions must be an array of { kind, ... } objects');
  if (specs.length === 0 || specs.length > MAX_ACTIONS) throw new UsageError(`a filter takes 1 to ${MAX_ACTIONS} actions, not ${specs.length}`);
  const items = specs.map((s, i) => {
    if (typeof s !== 'object' || s === null || typeof s.kind !== 'string')
      throw new UsageError(`action ${i + 1}: expected an object with a "kind" (${actionKindNames().join(', ')})`);
    const k = actionKind(s.kind);
    if (!k) throw new UsageError(`action ${i + 1}: kind '${s.kind}' is not known to synplug (known: ${actionKindNames().join(', ')})`);
    return nested(i + 1, [str(TCA_ACT_KIND, s.kind), nested(TCA_ACT_OPTIONS | NLA_F_NESTED, k.encode(s))]);
  });
  return nested(type, items);
}

/**
 * Decode an action list payload `buf[start, end)` into tc -j's `actions`
 * array, sorted by order (the last of a repeated order wins, as in tc).
 * @param base absolute offset of `buf[0]`
 * @param stats decode the times and the `stats` counters (tc -s)
 * @throws {NetlinkDecodeError} malformed attributes or an action's struct too short
 */
export function decodeActionList(buf: Buffer, start: number, end: number, base: number, stats = true): ActionEntry[] {
  const byOrder = new Map<number, ActionEntry>();
  for (const a of new AttributeView(buf, start, end, base)) {
    const at = a.offset - base + 4;
    byOrder.set(a.type, decodeOne(buf, at, at + a.data.length, base, a.type, stats));
  }
  return [...byOrder.keys()].sort((a, b) => a - b).map((k) => byOrder.get(k)!);
}

function decodeOne(buf: Buffer, start: number, end: number, base: number, order: number, stats: boolean): ActionEntry {
  const A = new AttributeView(buf, start, end, base);
  const e: ActionEntry = { order };
  const kind = A.str(TCA_ACT_KIND);
  const o = A.at(TCA_ACT_OPTIONS);
  const oEnd = o + A.size(TCA_ACT_OPTIONS);
  const cookie = A.bin(TCA_ACT_COOKIE);
  if (kind !== undefined) e.kind = kind;
  const k = kind === undefined ? undefined : actionKind(kind);
  if (o >= 0) {
    if (k) k.decode(buf, o, oEnd, base, e, stats);
    else e.raw = buf.toString('hex', o, oEnd);
  }
  const st = stats ? A.nested(TCA_ACT_STATS) : undefined;
  if (st) {
    const s: Record<string, unknown> = {};
    stats2Into(st, s);
    e.stats = s;
  }
  if (cookie) e.cookie = cookie.toString('hex');
  return e;
}

/**
 * The action list as tc prints it after a filter's options: for each
 * action `\n\taction order N: ` + the kind's text, then (with stats)
 * `\tAction statistics:` and the counters with a tab before each line.
 */
export function formatActionList(actions: readonly ActionEntry[]): string {
  let s = '';
  for (const a of actions) {
    s += `\n\taction order ${a.order}: `;
    const k = a.kind === undefined ? undefined : actionKind(a.kind);
    if (k) s += k.format(a);
    else s += `${a.kind ?? '?'} ${a.raw !== undefined ? `options ${a.raw} ` : ''}\n`;
    if (a.stats) s += `\tAction statistics:\n${formatStats(a.stats as Record<string, number>, '\t')}\n`;
    if (a.cookie !== undefined) s += `\tcookie ${a.cookie}\n`;
  }
  return s;
}

/**
 * Turn the `to_dev` names of mirred specs into `ifindex` (one RTM_GETLINK
 * each), so that the options can be encoded. Specs that already have an
 * ifindex are left alone. Returns new objects; the input is not changed.
 * @throws {UsageError} an invalid name
 * @throws {NetlinkError} "device 'X' not found"
 */
export async function resolveActionDevices<O extends { actions?: readonly ActionSpec[] }>(conn: RouteConnection, options: O): Promise<O> {
  if (!options || !Array.isArray(options.actions)) return options;
  const actions: ActionSpec[] = [];
  for (const a of options.actions) {
    if (a && typeof a === 'object' && a.ifindex === undefined && typeof a.to_dev === 'string') {
      actions.push({ ...a, ifindex: await resolveIfindex(conn, a.to_dev) });
    } else actions.push(a);
  }
  return { ...options, actions };
}

/** Anything that may carry decoded actions: a filter entry (`options.actions`) or an options object (`actions`). */
type WithActions = { options?: Record<string, unknown>; actions?: unknown };

/**
 * Put device names into decoded mirred actions (`to_dev` is `if<N>` as
 * decoded): `name(ifindex)` gives the name, undefined leaves `if<N>`.
 * Changes the entries in place and returns them.
 */
export function nameActionDevices<E extends WithActions>(entries: E[], name: (ifindex: number) => string | undefined): E[] {
  for (const e of entries) {
    const acts = (e.options?.actions ?? e.actions) as ActionEntry[] | undefined;
    if (!Array.isArray(acts)) continue;
    for (const a of acts) {
      if (typeof a.ifindex === 'number') {
        const n = name(a.ifindex);
        if (n !== undefined) a.to_dev = n;
      }
    }
  }
  return entries;
}

/**
 * {@link nameActionDevices} with the names from one RTM_GETLINK dump (only
 * when some entry has a mirred action).
 * @throws {NetlinkError} the link dump failed
 */
export async function resolveActionDeviceNames<E extends WithActions>(conn: RouteConnection, entries: E[]): Promise<E[]> {
  const needed = entries.some((e) => ((e.options?.actions ?? e.actions) as ActionEntry[] | undefined)?.some?.((a) => typeof a.ifindex === 'number'));
  if (!needed) return entries;
  const links = await listRawLinks(conn);
  const m = new Map(links.map((l) => [l.index, l.ifname]));
  return nameActionDevices(entries, (i) => m.get(i));
}

/** Action kinds and their kernel modules (`[{ kind: 'gact', module: 'act_gact' }]`). */
export type ActionModules = Array<{ kind: string; module: string }>;

/**
 * The action kinds an options object carries (its `actions`), each with its
 * kernel module, for error messages; undefined when there are none.
 */
export function actionKindsOf(options: unknown): ActionModules | undefined {
  const acts = (options as { actions?: unknown } | undefined)?.actions;
  if (!Array.isArray(acts) || acts.length === 0) return undefined;
  const out: Array<{ kind: string; module: string }> = [];
  for (const a of acts) {
    const kind = (a as { kind?: unknown } | null)?.kind;
    if (typeof kind === 'string' && !out.some((x) => x.kind === kind)) out.push({ kind, module: actionModule(kind) });
  }
  return out.length ? out : undefined;
}
