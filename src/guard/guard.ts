/**
 * The technique's operations, as a library: setup, check, plug, release,
 * protect, status, teardown. The CLI (`src/cli`) is a thin layer over these.
 *
 * The desired state, built by {@link setup} and verified by {@link check}:
 *
 * ```
 * address 169.254.255.254/32 on lo                  (added only when missing; remembered)
 * qdisc prio 1: root bands 4 priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1
 * qdisc pfifo 10: parent 1:1 limit 1000p            (and 20: in 1:2, 30: in 1:3)
 * qdisc plug 40: parent 1:4                          (limit --limit bytes, released)
 * filter parent 1: protocol ip pref 1 fw handle 0x1 classid 1:4
 * table ip synplug { set synplug_active { type ipv4_addr; flags timeout }
 *   chain output { type route hook output priority mangle; policy accept;
 *     ip saddr @synplug_active tcp flags syn / syn,ack meta mark set 0x00000001 } }
 * ```
 *
 * SYNs are marked only while the address sits in `synplug_active`, which
 * `plug`/`protect` fill with a timeout of the max-hold: the kernel stops
 * holding new connections at the deadline even if no synplug process is
 * left to release.
 *
 * @module
 */
import { isIP } from 'node:net';
import { join } from 'node:path';
import { NetlinkError, SynplugError, UsageError } from '../netlink/errors.js';
import { addAddress, deleteAddress, listAddresses } from '../netlink/route/addr.js';
import {
  addFilter, addQdisc, deleteFilter, deleteQdisc, listFilters, listQdiscs, replaceQdisc, changeQdisc,
  plugSetLimit, plugReleaseIndefinite, type FilterSpec, type QdiscSpec,
} from '../tc/ops.js';
import { formatQdiscHandle, formatHandle } from '../tc/handle.js';
import { formatQdiscText, formatFilterText } from '../tc/format.js';
import type { FilterEntry, QdiscEntry } from '../tc/types.js';
import {
  ensureMarkRule, planMarkRule, readTableState, removeMarkTable, resolveMarkRule, listMarkSetElements,
  DEFAULT_SET, type MarkRuleOptions,
} from '../iptables/mark.js';
import { listRuleset } from '../iptables/ruleset.js';
import { formatRulesetText, durationText } from '../iptables/format.js';
import { resolveConfig, refuseLoopback, TREE, type GuardConfig } from './config.js';
import { StateStore, isStale, processStartTime, type PlugRecord, type SetupRecord } from './state.js';
import { GuardSession, NoDeviceError, type PlugStats } from './session.js';
import { requireNetAdmin, hasNetAdmin, probeQdiscKind, probeFilterKind, probeNfTables, MissingSupportError } from './support.js';
import { runProtected, type ProtectOptions, type ProtectResult } from './protect.js';
import { startWatchdog } from './watchdog.js';

/** setup would replace a root qdisc that is not ours. Category `foreign-state`. */
export class ForeignQdiscError extends SynplugError {
  constructor(dev: string, q: QdiscEntry) {
    super(`dev ${dev} has a root qdisc that is not synplug's: ${formatQdiscText(q).split('\n')[0].trim()}. setup would replace it (and everything under it); rerun with --force to do that. Nothing was changed`, 'foreign-state');
    this.name = 'ForeignQdiscError';
  }
}

/** The guard is not set up. Category `not-set-up`. */
export class NotSetUpError extends SynplugError {
  constructor(message: string) {
    super(message, 'not-set-up');
    this.name = 'NotSetUpError';
  }
}

/** A step of setup failed; everything the call added was removed again. */
export class SetupError extends SynplugError {
  /** the step that failed, e.g. `add qdisc plug 40: parent 1:4` */
  step: string;
  /** what was undone */
  rolledBack: string[];
  /** undo steps that failed themselves */
  rollbackFailures: string[];
  constructor(step: string, cause: unknown, rolledBack: string[], rollbackFailures: string[]) {
    const why = cause instanceof Error ? cause.message : String(cause);
    const rb = rolledBack.length ? ` Rolled back: ${rolledBack.join('; ')}.` : ' Nothing had been changed.';
    const rf = rollbackFailures.length ? ` ROLLBACK FAILED for: ${rollbackFailures.join('; ')} — check with 'synplug status'.` : '';
    super(`setup failed at step '${step}': ${why}.${rb}${rf}`, cause instanceof SynplugError ? cause.category : 'failure', { cause });
    this.name = 'SetupError';
    this.step = step;
    this.rolledBack = rolledBack;
    this.rollbackFailures = rollbackFailures;
  }
}

// ------------------------------------------------------------- inspection

/** The state of one piece of the setup. */
export interface PieceState {
  /** e.g. `qdisc prio 1: root` */
  piece: string;
  status: 'ok' | 'missing' | 'different';
  /** what differs */
  detail?: string;
}

/** What {@link check} found. */
export interface CheckResult {
  /** `ok`: complete and consistent; `absent`: nothing set up; `partial`: some pieces missing or different */
  state: 'ok' | 'absent' | 'partial';
  dev: string;
  addr: string;
  pieces: PieceState[];
}

interface Observed {
  qdiscs: QdiscEntry[];
  filters: FilterEntry[];
  hasAddress: boolean;
  nftPlan: string[];
  nftTable: boolean;
}

function prefixlenOf(addr: string): number {
  return isIP(addr) === 6 ? 128 : 32;
}

function markRule(c: GuardConfig): MarkRuleOptions {
  return { address: c.addr, mark: c.mark, table: c.table, conditional: true, set: DEFAULT_SET };
}

function filterProtocol(c: GuardConfig): string {
  return isIP(c.addr) === 6 ? 'ipv6' : 'ip';
}

async function observe(s: GuardSession): Promise<Observed> {
  const c = s.config;
  const qdiscs = await listQdiscs(s.route, { ifindex: s.ifindex, dev: c.dev });
  const hasPrio = qdiscs.some((q) => q.root && q.handle === formatQdiscHandle(TREE.prioHandle) && q.kind === 'prio');
  const filters = hasPrio ? await listFilters(s.route, { ifindex: s.ifindex, dev: c.dev, parent: TREE.filterParent }) : [];
  const addrs = await listAddresses(s.route, { dev: s.ifindex, family: isIP(c.addr) === 6 ? 'inet6' : 'inet' });
  const hasAddress = addrs.some((a) => a.local === c.addr);
  const r = resolveMarkRule(markRule(c));
  const state = await readTableState(s.nft, r.family, r.table);
  const plan = planMarkRule(state, r);
  return { qdiscs, filters, hasAddress, nftPlan: plan.ops.map((o) => o.what), nftTable: state.table !== undefined };
}

const same = (a: readonly number[] | undefined, b: readonly number[]) => !!a && a.length === b.length && a.every((x, i) => x === b[i]);

function rootOf(o: Observed): QdiscEntry | undefined {
  return o.qdiscs.find((q) => q.root);
}

function qdiscAt(o: Observed, parent: number): QdiscEntry | undefined {
  return o.qdiscs.find((q) => q.parent === formatHandle(parent));
}

function ourFilter(o: Observed, c: GuardConfig): FilterEntry | undefined {
  return o.filters.find((f) => f.kind === 'fw' && f.pref === TREE.filterPrio && f.handle !== undefined && Number(f.handle) === c.mark);
}

function inspect(o: Observed, c: GuardConfig, record: SetupRecord | undefined): PieceState[] {
  const pieces: PieceState[] = [];
  const root = rootOf(o);
  const prioName = `qdisc prio ${formatQdiscHandle(TREE.prioHandle)} root bands ${TREE.bands}`;
  if (!root || root.handle === '0:' || root.kind !== 'prio' || root.handle !== formatQdiscHandle(TREE.prioHandle)) {
    pieces.push({ piece: prioName, status: 'missing', ...(root && root.handle !== '0:' && { detail: `root is ${root.kind} ${root.handle}` }) });
  } else {
    const opt = root.options as { bands?: number; priomap?: number[] };
    const diffs: string[] = [];
    if (opt.bands !== TREE.bands) diffs.push(`bands ${opt.bands}`);
    if (!same(opt.priomap, TREE.priomap)) diffs.push(`priomap ${opt.priomap?.join(' ')}`);
    pieces.push({ piece: prioName, status: diffs.length ? 'different' : 'ok', ...(diffs.length && { detail: diffs.join(', ') }) });
  }
  for (const f of TREE.pfifo) {
    const name = `qdisc pfifo ${formatQdiscHandle(f.handle)} parent ${formatHandle(f.parent)} limit ${TREE.pfifoLimit}p`;
    const q = qdiscAt(o, f.parent);
    if (!q) pieces.push({ piece: name, status: 'missing' });
    else if (q.kind !== 'pfifo' || q.handle !== formatQdiscHandle(f.handle) || (q.options as { limit?: number }).limit !== TREE.pfifoLimit) {
      pieces.push({ piece: name, status: 'different', detail: `found ${q.kind} ${q.handle} ${JSON.stringify(q.options)}` });
    } else pieces.push({ piece: name, status: 'ok' });
  }
  const plugName = `qdisc plug ${formatQdiscHandle(TREE.plugHandle)} parent ${formatHandle(TREE.plugParent)}`;
  const plugQ = qdiscAt(o, TREE.plugParent);
  if (!plugQ) pieces.push({ piece: plugName, status: 'missing' });
  else if (plugQ.kind !== 'plug' || plugQ.handle !== formatQdiscHandle(TREE.plugHandle)) pieces.push({ piece: plugName, status: 'different', detail: `found ${plugQ.kind} ${plugQ.handle}` });
  else if (record && record.limit !== c.limit) pieces.push({ piece: plugName, status: 'different', detail: `limit was set to ${record.limit} bytes, want ${c.limit}` });
  else pieces.push({ piece: plugName, status: 'ok' });

  const filterName = `filter parent ${formatQdiscHandle(TREE.filterParent)} protocol ${filterProtocol(c)} pref ${TREE.filterPrio} fw handle 0x${c.mark.toString(16)} classid ${formatHandle(TREE.filterClassid)}`;
  const f = ourFilter(o, c);
  if (!f) pieces.push({ piece: filterName, status: 'missing' });
  else {
    const classid = (f.options as { classid?: string } | undefined)?.classid;
    const diffs: string[] = [];
    if (classid !== formatHandle(TREE.filterClassid)) diffs.push(`classid ${classid}`);
    if (f.protocol !== filterProtocol(c)) diffs.push(`protocol ${f.protocol}`);
    pieces.push({ piece: filterName, status: diffs.length ? 'different' : 'ok', ...(diffs.length && { detail: diffs.join(', ') }) });
  }
  const nftName = `nftables table ${isIP(c.addr) === 6 ? 'ip6' : 'ip'} ${c.table}: marking rule for ${c.addr}, mark ${c.mark}`;
  if (!o.nftTable) pieces.push({ piece: nftName, status: 'missing' });
  else pieces.push({ piece: nftName, status: o.nftPlan.length ? 'different' : 'ok', ...(o.nftPlan.length && { detail: `would ${o.nftPlan.join('; ')}` }) });

  const addrName = `address ${c.addr}/${prefixlenOf(c.addr)} on ${c.dev}`;
  pieces.push({ piece: addrName, status: o.hasAddress ? 'ok' : 'missing' });
  return pieces;
}

function summarize(pieces: PieceState[]): CheckResult['state'] {
  if (pieces.every((p) => p.status === 'ok')) return 'ok';
  // The address alone (it may be the user's own) does not make a setup.
  const core = pieces.slice(0, -1);
  return core.every((p) => p.status === 'missing') ? 'absent' : 'partial';
}

/** The root is synplug's: prio 1: with our plug under 1:4, or recorded by our setup. */
function rootIsOurs(o: Observed, record: SetupRecord | undefined, c: GuardConfig): boolean {
  const root = rootOf(o);
  if (!root || root.kind !== 'prio' || root.handle !== formatQdiscHandle(TREE.prioHandle)) return false;
  if (record && record.dev === c.dev) return true;
  const p = qdiscAt(o, TREE.plugParent);
  return p?.kind === 'plug';
}

// ------------------------------------------------------------- common

/** Options every guard operation takes: the configuration (defaults from setup's record, then built-in). */
export type GuardOptions = Partial<GuardConfig>;

/** Configuration for a command other than setup: explicit options, then what setup recorded, then defaults. */
function configFor(opts: GuardOptions | null | undefined, needsAdmin?: string): { config: GuardConfig; store: StateStore; record?: SetupRecord } {
  opts = opts ?? {};
  resolveConfig(definedOnly(opts)); // bad input first (usage) before anything else
  if (needsAdmin) requireNetAdmin(needsAdmin);
  const stateDir = resolveConfig({ stateDir: opts.stateDir }).stateDir;
  const store = new StateStore(stateDir);
  let record: SetupRecord | undefined;
  try { record = store.readSetup(); } catch { record = undefined; } // a damaged record: defaults and options decide
  const fromRecord: Partial<GuardConfig> = record ? { dev: record.dev, addr: record.addr, mark: record.mark, limit: record.limit, table: record.table } : {};
  const config = resolveConfig({ ...fromRecord, ...definedOnly(opts), stateDir });
  if (record && opts.dev === undefined) devFromRecord.set(config, join(stateDir, 'setup.json'));
  return { config, store, record: record && record.dev === config.dev ? record : undefined };
}

/** Configs whose device came from setup's record rather than --dev: that record's path, for the error when the device is gone. */
const devFromRecord = new WeakMap<GuardConfig, string>();

/** GuardSession.open, its NoDeviceError saying where the device name came from. */
function openSession(config: GuardConfig): Promise<GuardSession> {
  return GuardSession.open(config).catch((e: unknown) => {
    const file = devFromRecord.get(config);
    throw e instanceof NoDeviceError && file ? new NoDeviceError(config.dev, file) : e;
  });
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

async function withSession<T>(config: GuardConfig, f: (s: GuardSession) => Promise<T>): Promise<T> {
  const s = await openSession(config);
  try {
    return await f(s);
  } finally {
    s.close();
  }
}

/** What {@link recoverStale} did. */
export interface Recovery {
  /** a plug left buffering was released */
  released: boolean;
  /** why it counted as left behind */
  reason?: string;
}

/**
 * Crash safety, third layer: release a plug that the record says was left
 * buffering by a protect that died, or whose deadline passed. Every command
 * calls it first (when it may: it needs CAP_NET_ADMIN).
 */
export async function recoverStale(s: GuardSession, store: StateStore): Promise<Recovery> {
  let r: PlugRecord | undefined;
  try { r = store.readPlug(); } catch { return { released: false }; }
  if (!r || !isStale(r) || !hasNetAdmin()) return { released: false };
  const reason = Date.now() >= r.deadline ? 'its max-hold deadline passed' : `its owner (pid ${r.pid}) is gone`;
  let hadPlug = true;
  try {
    await s.release();
  } catch (e) {
    if (!(e instanceof NetlinkError)) throw e;
    hadPlug = false; // no plug qdisc: nothing is held; only the record was stale
  }
  await s.disarm().catch(() => {});
  store.writePlug({ ...r, state: 'released', releasedAt: Date.now() });
  return hadPlug ? { released: true, reason } : { released: false };
}

// ------------------------------------------------------------- setup

/** Options of {@link setup}. */
export interface SetupOptions extends GuardOptions {
  /** replace a root qdisc that is not synplug's */
  force?: boolean;
}

/** What {@link setup} did. */
export interface SetupResult {
  dev: string;
  addr: string;
  mark: number;
  limit: number;
  /** false when everything was already in place */
  changed: boolean;
  /** the steps taken, in order (`add qdisc prio 1: root`...) */
  actions: string[];
  /** setup added the address (teardown will remove it) */
  addedAddress: boolean;
  /** a plug left buffering by a dead protect was released first */
  recovered?: string;
  /** kernel support that could not be verified before changing anything (found by trying) */
  unverified: string[];
}

interface Step {
  what: string;
  run: () => Promise<void>;
  undo?: { what: string; run: () => Promise<void> };
}

/**
 * Build (or complete, or correct) the setup. Idempotent; transactional.
 *
 * Phase one changes nothing: CAP_NET_ADMIN, the device, the kernel's support
 * for prio, plug, fw and nf_tables, and the device's root qdisc (a root that
 * is not synplug's is refused unless `force`). Phase two runs the needed
 * steps; if one fails, the steps already taken are undone in reverse order.
 *
 * @throws {UsageError} bad options (usage)
 * @throws {NotPermittedError} no CAP_NET_ADMIN (permission)
 * @throws {MissingSupportError} missing modules, all named (missing-module)
 * @throws {NoDeviceError} no such device (usage)
 * @throws {ForeignQdiscError} a foreign root qdisc and no `force` (foreign-state)
 * @throws {SetupError} a step failed; says which, why, and what was rolled back
 */
export async function setup(opts: SetupOptions = {}): Promise<SetupResult> {
  opts = opts ?? {};
  const config = resolveConfig(definedOnly(opts));
  refuseLoopback(config.addr);
  resolveMarkRule(markRule(config)); // validate the nftables side before anything is sent
  requireNetAdmin('synplug setup');
  const store = new StateStore(config.stateDir);
  const oldRecord = store.readSetup();
  return withSession(config, async (s) => {
    const record = oldRecord && oldRecord.dev === config.dev ? oldRecord : undefined;
    const recovery = await recoverStale(s, store);

    // Phase one: kernel support, all of it, before anything changes.
    const missing: string[] = [];
    const unverified: string[] = [];
    for (const kind of ['prio', 'plug']) {
      if ((await probeQdiscKind(s.route, s.ifindex, kind)) === 'no') missing.push(`sch_${kind} (qdisc ${kind})`);
    }
    const fw = await probeFilterKind(s.route, 'fw');
    if (fw === 'no') missing.push('cls_fw (filter fw)');
    if (fw === 'unknown') unverified.push('cls_fw (filter fw)');
    if ((await probeNfTables()) === 'no') missing.push('nf_tables (nftables)');
    if (missing.length) {
      throw new MissingSupportError(missing, unverified);
    }

    const o = await observe(s);
    const root = rootOf(o);
    const ours = rootIsOurs(o, record, config);
    if (root && root.handle !== '0:' && !ours && !opts.force) throw new ForeignQdiscError(config.dev, root);

    const pieces = inspect(o, config, record);
    const st = (i: number) => pieces[i].status;
    const dev = { ifindex: s.ifindex, dev: config.dev };
    const steps: Step[] = [];
    const prefixlen = prefixlenOf(config.addr);
    let addedAddress = record?.addedAddress ?? false;

    if (!o.hasAddress) {
      steps.push({
        what: `add address ${config.addr}/${prefixlen} dev ${config.dev}`,
        run: async () => { await addAddress(s.route, { dev: s.ifindex, address: config.addr, prefixlen }); addedAddress = true; },
        undo: { what: `removed address ${config.addr}/${prefixlen}`, run: () => deleteAddress(s.route, { dev: s.ifindex, address: config.addr, prefixlen }) },
      });
    }
    const prioSpec: QdiscSpec = { ...dev, parent: 'root', handle: formatQdiscHandle(TREE.prioHandle), kind: 'prio', options: { bands: TREE.bands, priomap: TREE.priomap } };
    const delRoot = { what: `removed qdisc prio 1: (and everything under it)`, run: () => deleteQdisc(s.route, { ...dev, parent: 'root' }) };
    let rebuilt = false;
    if (st(0) === 'missing' || (root && !ours)) {
      // No prio of ours: add it (replacing a default or, with --force, a foreign root).
      const replacing = root && root.handle !== '0:';
      steps.push({
        what: replacing ? `replace root qdisc ${root.kind} ${root.handle} with prio 1: (--force)` : 'add qdisc prio 1: root bands 4',
        run: () => (replacing ? replaceQdisc(s.route, prioSpec) : addQdisc(s.route, prioSpec)),
        undo: delRoot,
      });
      rebuilt = true;
    } else if (st(0) === 'different') {
      const old = root!.options as { bands: number; priomap: number[] };
      steps.push({
        what: `change qdisc prio 1: to bands 4 and the default priomap (was ${pieces[0].detail})`,
        run: () => changeQdisc(s.route, prioSpec),
        undo: { what: 'restored prio 1: options', run: () => changeQdisc(s.route, { ...prioSpec, options: { bands: old.bands, priomap: old.priomap } }) },
      });
    }
    TREE.pfifo.forEach((f, i) => {
      const status = rebuilt ? 'missing' : st(1 + i);
      const spec: QdiscSpec = { ...dev, parent: formatHandle(f.parent), handle: formatQdiscHandle(f.handle), kind: 'pfifo', options: { limit: TREE.pfifoLimit } };
      if (status === 'missing') {
        steps.push({
          what: `add qdisc pfifo ${spec.handle} parent ${spec.parent} limit ${TREE.pfifoLimit}`,
          run: () => addQdisc(s.route, spec),
          undo: rebuilt ? undefined : { what: `removed pfifo ${spec.handle}`, run: () => deleteQdisc(s.route, { ...dev, parent: spec.parent, handle: spec.handle }) },
        });
      } else if (status === 'different') {
        // Whatever sits there is not ours to keep: replace it (the kernel grafts the new one).
        steps.push({
          what: `replace qdisc at ${spec.parent} with pfifo ${spec.handle} limit ${TREE.pfifoLimit} (${pieces[1 + i].detail})`,
          run: async () => {
            const cur = qdiscAt(o, f.parent)!;
            if (cur.handle !== spec.handle || cur.kind !== 'pfifo') await deleteQdisc(s.route, { ...dev, parent: spec.parent });
            await replaceQdisc(s.route, spec);
          },
        });
      }
    });
    const plugSpec: QdiscSpec = { ...dev, parent: formatHandle(TREE.plugParent), handle: formatQdiscHandle(TREE.plugHandle), kind: 'plug', options: { limit: config.limit } };
    const plugStatus = rebuilt ? 'missing' : st(4);
    const plugQ = qdiscAt(o, TREE.plugParent);
    const addPlug = async () => {
      await addQdisc(s.route, plugSpec);
      // A new plug starts buffering: release it at once.
      await plugReleaseIndefinite(s.route, { ...dev, parent: plugSpec.parent!, handle: plugSpec.handle! });
    };
    if (plugStatus === 'missing') {
      steps.push({
        what: `add qdisc plug 40: parent 1:4 limit ${config.limit} and release it`,
        run: addPlug,
        undo: rebuilt ? undefined : { what: 'removed plug 40:', run: () => deleteQdisc(s.route, { ...dev, parent: plugSpec.parent, handle: plugSpec.handle }) },
      });
    } else if (plugStatus === 'different' && plugQ && (plugQ.kind !== 'plug' || plugQ.handle !== plugSpec.handle)) {
      steps.push({
        what: `replace ${plugQ.kind} ${plugQ.handle} at 1:4 with plug 40: limit ${config.limit}`,
        run: async () => { await deleteQdisc(s.route, { ...dev, parent: plugSpec.parent }); await addPlug(); },
      });
    } else if (plugStatus === 'different') {
      steps.push({
        what: `set plug 40: limit to ${config.limit} bytes`,
        run: () => plugSetLimit(s.route, { ...dev, parent: plugSpec.parent!, handle: plugSpec.handle!, limit: config.limit }),
        ...(record && { undo: { what: `restored plug limit ${record.limit}`, run: () => plugSetLimit(s.route, { ...dev, parent: plugSpec.parent!, handle: plugSpec.handle!, limit: record.limit }) } }),
      });
    }
    const fwSpec: FilterSpec = {
      ...dev, parent: formatQdiscHandle(TREE.filterParent), protocol: filterProtocol(config), pref: TREE.filterPrio,
      handle: config.mark, kind: 'fw', options: { classid: formatHandle(TREE.filterClassid) },
    };
    const fwStatus = rebuilt ? 'missing' : st(5);
    const fwDel = () => deleteFilter(s.route, { ...dev, parent: fwSpec.parent, protocol: fwSpec.protocol, pref: fwSpec.pref, handle: fwSpec.handle, kind: 'fw' });
    if (fwStatus === 'missing') {
      steps.push({
        what: `add filter parent 1: protocol ${fwSpec.protocol} pref 1 fw handle ${config.mark} classid 1:4`,
        run: () => addFilter(s.route, fwSpec),
        undo: rebuilt ? undefined : { what: 'removed the fw filter', run: fwDel },
      });
    } else if (fwStatus === 'different') {
      const old = ourFilter(o, config)!;
      steps.push({
        what: `replace the fw filter (${pieces[5].detail})`,
        run: async () => {
          await deleteFilter(s.route, { ...dev, parent: fwSpec.parent, protocol: old.protocol, pref: old.pref, handle: fwSpec.handle, kind: 'fw' });
          await addFilter(s.route, fwSpec);
        },
      });
    }
    if (st(6) !== 'ok') {
      const hadTable = o.nftTable;
      steps.push({
        what: o.nftTable ? `update nftables table ${config.table} (${o.nftPlan.join('; ')})` : `add nftables table ${config.table} with the marking rule`,
        run: async () => { await ensureMarkRule(s.nft, markRule(config)); },
        undo: hadTable ? undefined : { what: `removed nftables table ${config.table}`, run: async () => { await removeMarkTable(s.nft, { table: config.table, family: isIP(config.addr) === 6 ? 'ip6' : 'ip' }); } },
      });
    }

    // Phase two: run the steps; on failure, undo in reverse.
    const done: Step[] = [];
    for (const step of steps) {
      try {
        await step.run();
        done.push(step);
      } catch (e) {
        const rolledBack: string[] = [];
        const failures: string[] = [];
        for (const d of done.reverse()) {
          if (!d.undo) continue;
          try { await d.undo.run(); rolledBack.push(d.undo.what); } catch (e2) { failures.push(`${d.undo.what}: ${(e2 as Error).message}`); }
        }
        throw new SetupError(step.what, translateSetupCause(e), rolledBack, failures);
      }
    }
    store.writeSetup({
      version: 1, dev: config.dev, addr: config.addr, mark: config.mark, limit: config.limit, table: config.table,
      addedAddress, prefixlen, createdAt: record?.createdAt ?? Date.now(),
    });
    if (!store.readPlug()) {
      store.writePlug({ version: 1, state: 'released', owner: 'manual', pid: process.pid, dev: config.dev, since: Date.now(), deadline: Date.now(), releasedAt: Date.now() });
    }
    return {
      dev: config.dev, addr: config.addr, mark: config.mark, limit: config.limit,
      changed: steps.length > 0, actions: steps.map((x) => x.what), addedAddress,
      ...(recovery.released && { recovered: `released a plug left buffering (${recovery.reason})` }),
      unverified,
    };
  });
}

function translateSetupCause(e: unknown): unknown {
  if (e instanceof NetlinkError && /is not available in this kernel \(module (\S+)\)/.test(e.message)) {
    const m = /module (\S+)\)/.exec(e.message)!;
    return new MissingSupportError([m[1]]);
  }
  return e;
}

// ------------------------------------------------------------- check

/**
 * Verify the setup without changing anything.
 * @returns `state` ok / absent / partial, and each piece's status
 * @throws {UsageError} bad options
 * @throws {NotPermittedError} no CAP_NET_ADMIN (permission)
 * @throws {NoDeviceError} no such device
 * @throws {NetlinkError} a listing was refused
 */
export async function check(opts: GuardOptions = {}): Promise<CheckResult> {
  // nftables refuses even to list rules without CAP_NET_ADMIN: say so before trying
  const { config, store, record } = configFor(opts, 'synplug check');
  return withSession(config, async (s) => {
    await recoverStale(s, store);
    const pieces = inspect(await observe(s), config, record);
    return { state: summarize(pieces), dev: config.dev, addr: config.addr, pieces };
  });
}

async function requireSetUp(s: GuardSession, config: GuardConfig, record: SetupRecord | undefined, what: string): Promise<void> {
  const pieces = inspect(await observe(s), config, record);
  const state = summarize(pieces);
  if (state === 'ok') return;
  const bad = pieces.filter((p) => p.status !== 'ok').map((p) => `${p.piece} (${p.status}${p.detail ? `: ${p.detail}` : ''})`);
  throw new NotSetUpError(`synplug is ${state === 'absent' ? 'not set up' : 'only partly set up'} on ${config.dev}: ${bad.join('; ')}. Run 'synplug setup'${what === 'protect' ? ", or pass --setup. The command was NOT run" : ''}`);
}

// ------------------------------------------------------------- plug / release

/** What {@link plug} did. */
export interface PlugResult {
  dev: string;
  addr: string;
  /** ms since the epoch when marking stops by itself */
  deadline: number;
  maxHoldMs: number;
}

/**
 * Buffer the plug (and arm marking for `maxHoldMs`) until {@link release}.
 * @throws {UsageError} bad options (usage)
 * @throws {NotPermittedError} (permission) {@link NotSetUpError} (not-set-up) {@link NoDeviceError} (usage)
 * @throws {NetlinkError} the kernel refused (kernel)
 */
export async function plug(opts: GuardOptions & { maxHoldMs?: number } = {}): Promise<PlugResult> {
  const maxHoldMs = opts?.maxHoldMs ?? 10_000;
  if (!(maxHoldMs >= 10)) throw new UsageError('max-hold (--max-hold) must be at least 10 ms');
  const { config, store, record } = configFor(opts, 'synplug plug');
  return withSession(config, async (s) => {
    await recoverStale(s, store);
    await requireSetUp(s, config, record, 'plug');
    const since = Date.now();
    const deadline = since + maxHoldMs;
    store.writePlug({ version: 1, state: 'buffering', owner: 'manual', pid: process.pid, pidStart: processStartTime(process.pid), dev: config.dev, since, deadline });
    try {
      await s.arm(maxHoldMs);
      await s.buffer();
    } catch (e) {
      await s.release().catch(() => {});
      await s.disarm().catch(() => {});
      store.writePlug({ version: 1, state: 'released', owner: 'manual', pid: process.pid, dev: config.dev, since, deadline, releasedAt: Date.now() });
      throw e;
    }
    return { dev: config.dev, addr: config.addr, deadline, maxHoldMs };
  });
}

/** What {@link release} did. */
export interface ReleaseResult {
  dev: string;
  /** the record said the plug was buffering */
  wasBuffering: boolean;
  /** packets still queued right after the release (being sent) */
  backlog: number;
  /** false when there is no plug qdisc (not set up): nothing was held */
  plugExists: boolean;
}

/**
 * Release the plug (always safe) and turn marking off.
 * @throws {NotPermittedError} (permission) {@link NoDeviceError} (usage)
 * @throws {NetlinkError} no plug qdisc, or the kernel refused (kernel)
 */
export async function release(opts: GuardOptions = {}): Promise<ReleaseResult> {
  const { config, store } = configFor(opts, 'synplug release');
  return withSession(config, async (s) => {
    let r: PlugRecord | undefined;
    try { r = store.readPlug(); } catch { r = undefined; } // release never depends on the record
    let plugExists = true;
    try {
      await s.release();
    } catch (e) {
      if (!(e instanceof NetlinkError && (e.code === 'ENOENT' || e.code === 'EINVAL'))) throw e;
      plugExists = false; // no plug qdisc: nothing can be held
    }
    await s.disarm().catch(() => {});
    const now = Date.now();
    store.writePlug({ ...(r ?? { version: 1, owner: 'manual', pid: process.pid, dev: config.dev, since: now, deadline: now }), state: 'released', releasedAt: now });
    const stats = plugExists ? await s.plugStats().catch(() => undefined) : undefined;
    return { dev: config.dev, wasBuffering: r?.state === 'buffering', backlog: stats?.qlen ?? 0, plugExists };
  });
}

// ------------------------------------------------------------- protect

/** Options of {@link protect}. */
export interface GuardProtectOptions extends GuardOptions, ProtectOptions {
  /** set up first when not set up */
  setup?: boolean;
}

/**
 * Phase one (checks, recovery, optional setup), then {@link runProtected}.
 * @throws {UsageError} bad options or an empty command (usage), nothing run
 * @throws {NotSetUpError} not set up and no `setup` (not-set-up), the command NOT run
 * @throws {CommandError} command not found / not executable (`command-not-found` / `command-not-executable`), nothing plugged
 * @throws {SynplugError} the plug could not be set: the command is not run
 */
export async function protect(opts: GuardProtectOptions): Promise<ProtectResult> {
  if (!opts || !Array.isArray(opts.command) || opts.command.length === 0 || opts.command[0] === '' || !opts.command.every((a) => typeof a === 'string')) {
    throw new UsageError('no command given: protect needs `command`, an array of strings (CLI: synplug protect [options] -- COMMAND [ARGS...])');
  }
  if (opts.maxHoldMs !== undefined && !(opts.maxHoldMs >= 10)) throw new UsageError('max-hold (--max-hold) must be at least 10 ms');
  const { config, store, record } = configFor(opts, 'synplug protect');
  // The watchdog (a process of its own) starts while phase one checks.
  const watchdog = startWatchdog();
  watchdog.catch(() => {}); // its failure is reported where it is awaited
  let handedOver = false;
  const s = await openSession(config).catch((e) => { void watchdog.then((w) => w.done(), () => {}); throw e; });
  try {
    const rec = await recoverStale(s, store);
    if (rec.released) opts.onNotice?.(`released a plug left buffering (${rec.reason})`);
    const pieces = inspect(await observe(s), config, record);
    if (summarize(pieces) !== 'ok') {
      if (!opts.setup) await requireSetUp(s, config, record, 'protect');
      const r = await setup({ ...definedOnly({ dev: opts.dev, addr: opts.addr, mark: opts.mark, limit: opts.limit, table: opts.table }), stateDir: config.stateDir });
      opts.onNotice?.(`set up first: ${r.actions.join('; ') || 'nothing to do'}`);
    }
    handedOver = true;
    return await runProtected(s, opts, watchdog);
  } finally {
    if (!handedOver) void watchdog.then((w) => w.done(), () => {});
    s.close();
  }
}

// ------------------------------------------------------------- status

/** What {@link status} reports. */
export interface StatusResult {
  dev: string;
  addr: string;
  /** the setup check */
  state: CheckResult['state'];
  pieces: PieceState[];
  /** the device's qdiscs with stats (tc -s -j qdisc show fields) */
  qdiscs: QdiscEntry[];
  /** filters under 1: */
  filters: FilterEntry[];
  /** synplug's nftables table as `nft list table` prints it, when present */
  ruleset?: string;
  /** the marking set's elements (marking is on while one is there), with ms left */
  marking: Array<{ address: string; expiresMs?: number; timeoutMs?: number }>;
  /** the recorded plug state */
  plug: PlugRecord | null;
  /** counters of the plug qdisc: held now, passed, dropped */
  held?: number;
  passed?: number;
  dropped?: number;
  /** the plug was left buffering by a dead protect and released just now */
  recovered?: string;
}

/**
 * The setup, the rule, the recorded plug state and the plug's counters.
 * @throws {NotPermittedError} (permission) {@link NoDeviceError} (usage) {@link NetlinkError} (kernel)
 */
export async function status(opts: GuardOptions = {}): Promise<StatusResult> {
  const { config, store, record } = configFor(opts, 'synplug status');
  return withSession(config, async (s) => {
    const rec = await recoverStale(s, store);
    const o = await observe(s);
    const pieces = inspect(o, config, record);
    let ruleset: string | undefined;
    let marking: StatusResult['marking'] = [];
    if (o.nftTable) {
      const family = isIP(config.addr) === 6 ? 'ip6' : 'ip';
      const rs = await listRuleset(s.nft, { family });
      const mine = { ...rs, tables: rs.tables.filter((t) => t.name === config.table), chains: rs.chains.filter((c) => c.table === config.table), rules: rs.rules.filter((r) => r.table === config.table), sets: rs.sets.filter((x) => x.table === config.table) };
      ruleset = formatRulesetText(mine as typeof rs);
      try {
        marking = (await listMarkSetElements(s.nft, { family, table: config.table })).map((e) => ({ address: e.address ?? e.key, expiresMs: e.expiresMs, timeoutMs: e.timeoutMs }));
      } catch { marking = []; }
    }
    const plugQ = o.qdiscs.find((q) => q.kind === 'plug' && q.handle === formatQdiscHandle(TREE.plugHandle));
    return {
      dev: config.dev, addr: config.addr, state: summarize(pieces), pieces,
      qdiscs: o.qdiscs, filters: o.filters, ...(ruleset !== undefined && { ruleset }), marking,
      plug: (() => { try { return store.readPlug() ?? null; } catch { return null; } })(),
      ...(plugQ && { held: plugQ.qlen ?? 0, passed: plugQ.packets ?? 0, dropped: plugQ.drops ?? 0 }),
      ...(rec.released && { recovered: `released a plug left buffering (${rec.reason})` }),
    };
  });
}

// ------------------------------------------------------------- teardown

/** What {@link teardown} did. */
export interface TeardownResult {
  dev: string;
  /** what was removed, in order */
  removed: string[];
  /** what was left alone, and why */
  kept: string[];
}

/**
 * Release, then remove exactly what setup added: the qdisc tree (when its
 * root is synplug's), with the filter under it; synplug's nftables table; the
 * address if setup added it; the state files.
 * @throws {NotPermittedError} (permission) {@link NoDeviceError} (usage) {@link NetlinkError} (kernel)
 */
export async function teardown(opts: GuardOptions = {}): Promise<TeardownResult> {
  const { config, store, record } = configFor(opts, 'synplug teardown');
  return withSession(config, async (s) => {
    const removed: string[] = [];
    const kept: string[] = [];
    const o = await observe(s);
    const plugQ = qdiscAt(o, TREE.plugParent);
    if (plugQ?.kind === 'plug') {
      await s.release().catch(() => {});
      removed.push('released the plug');
    }
    // The table is ours when setup recorded it, or when it holds exactly our rule and nothing else.
    const family = isIP(config.addr) === 6 ? 'ip6' : 'ip';
    if (o.nftTable && (record || o.nftPlan.length === 0)) {
      const r = await removeMarkTable(s.nft, { table: config.table, family });
      for (const t of r.removed) removed.push(`nftables table ${t}`);
    } else if (o.nftTable) {
      kept.push(`nftables table ${family} ${config.table}: setup did not record it and it is not exactly synplug's rule`);
    }
    const root = rootOf(o);
    if (root && rootIsOurs(o, record, config)) {
      await deleteQdisc(s.route, { ifindex: s.ifindex, dev: config.dev, parent: 'root' });
      removed.push(`qdisc prio 1: and everything under it (pfifo 10: 20: 30:, plug 40:, the fw filter) on ${config.dev}`);
    } else if (root && root.handle !== '0:') {
      kept.push(`root qdisc ${root.kind} ${root.handle} on ${config.dev}: not synplug's`);
    }
    if (record?.addedAddress) {
      try {
        await deleteAddress(s.route, { dev: s.ifindex, address: config.addr, prefixlen: record.prefixlen });
        removed.push(`address ${config.addr}/${record.prefixlen} on ${config.dev}`);
      } catch (e) {
        if (!(e instanceof NetlinkError && (e.code === 'EADDRNOTAVAIL' || e.code === 'ENOENT'))) throw e;
      }
    } else if (o.hasAddress) {
      kept.push(`address ${config.addr} on ${config.dev}: setup did not add it`);
    }
    try { store.clear(); } catch (e) { throw new SynplugError(`removed the setup, but cannot remove the state files in ${config.stateDir}: ${(e as Error).message}`); }
    return { dev: config.dev, removed, kept };
  });
}

// ------------------------------------------------------------- text

/** Text for `synplug setup`. */
export function formatSetup(r: SetupResult): string {
  const lines = r.changed ? [`synplug set up on ${r.dev} for ${r.addr} (mark ${r.mark}, plug limit ${r.limit} bytes):`, ...r.actions.map((a) => `  ${a}`)]
    : [`synplug already set up on ${r.dev} for ${r.addr}: nothing to change`];
  if (r.recovered) lines.unshift(r.recovered);
  return lines.join('\n');
}

/** Text for `synplug check`. */
export function formatCheck(r: CheckResult): string {
  const head = r.state === 'ok' ? `synplug is set up on ${r.dev} for ${r.addr}` : r.state === 'absent' ? `synplug is not set up on ${r.dev}` : `synplug is partly or differently set up on ${r.dev}:`;
  const lines = [head];
  for (const p of r.pieces) lines.push(`  ${p.status === 'ok' ? 'ok       ' : p.status === 'missing' ? 'MISSING  ' : 'DIFFERENT'} ${p.piece}${p.detail ? ` (${p.detail})` : ''}`);
  if (r.state !== 'ok') lines.push("run 'synplug setup' to complete it");
  return lines.join('\n');
}

/** Text for `synplug protect` (on stderr). */
export function formatProtect(r: ProtectResult): string {
  const cmd = r.signal ? `killed by ${r.signal}` : `exit ${r.exitCode}`;
  return `synplug: held new connections for ${r.heldMs.toFixed(1)} ms${r.maxHoldReached ? ' (max-hold reached)' : ''}; ${r.packetsReleased} packet(s) held and released, ${r.drops} dropped; command ${cmd}; synplug's own time in the window ${r.overhead.totalUs} µs`;
}

/** Text for `synplug status`. */
export function formatStatus(r: StatusResult): string {
  const lines: string[] = [];
  if (r.recovered) lines.push(r.recovered);
  lines.push(`setup: ${r.state === 'ok' ? 'complete' : r.state === 'absent' ? 'not set up' : 'PARTIAL'} on ${r.dev} for ${r.addr}`);
  for (const p of r.pieces) if (p.status !== 'ok') lines.push(`  ${p.status.toUpperCase()} ${p.piece}${p.detail ? ` (${p.detail})` : ''}`);
  const p = r.plug;
  if (p && Number.isFinite(p.since) && Number.isFinite(p.deadline)) {
    const when = new Date(p.state === 'buffering' ? p.since : p.releasedAt ?? p.since).toISOString();
    lines.push(`plug: ${p.state === 'buffering' ? `BUFFERING since ${when} (by ${p.owner} pid ${p.pid}, until ${new Date(p.deadline).toISOString()})` : `released (last at ${when})`}`);
  } else lines.push(p ? 'plug: the record is damaged (it is rewritten at the next plug or release)' : 'plug: no record');
  if (r.held !== undefined) lines.push(`packets: ${r.held} held now, ${r.passed} passed, ${r.dropped} dropped over the limit`);
  lines.push(`marking: ${r.marking.length ? r.marking.map((m) => `${m.address}${m.expiresMs !== undefined ? ` (${durationText(m.expiresMs)} left)` : ''}`).join(', ') : 'off (no element in the set)'}`);
  if (r.qdiscs.length) {
    lines.push('qdiscs:');
    for (const q of r.qdiscs) lines.push(...formatQdiscText(q, { stats: true }).split('\n').map((l) => `  ${l}`));
  }
  if (r.filters.length) {
    lines.push('filters:');
    for (const f of r.filters) lines.push(...formatFilterText(f).split('\n').map((l) => `  ${l}`));
  }
  if (r.ruleset) lines.push('nftables:', ...r.ruleset.trimEnd().split('\n').map((l) => `  ${l}`));
  return lines.join('\n');
}

/** Text for `synplug teardown`. */
export function formatTeardown(r: TeardownResult): string {
  const lines = r.removed.length ? [`removed from ${r.dev}:`, ...r.removed.map((x) => `  ${x}`)] : [`nothing of synplug's on ${r.dev} to remove`];
  if (r.kept.length) lines.push('left alone:', ...r.kept.map((x) => `  ${x}`));
  return lines.join('\n');
}

export type { PlugStats };
