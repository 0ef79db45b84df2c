/**
 * The local hold: new connections from this machine to the proxy's address,
 * held on `lo` (or the configured device).
 *
 * ```
 * permanent (setup):
 * address 169.254.255.254/32 on lo                  (added only when missing; remembered)
 * table ip synplug { set synplug_active { type ipv4_addr; flags timeout } }
 * qdisc prio 1: root bands 4 priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1
 * qdisc pfifo 10: parent 1:1 limit 1000p            (and 20: in 1:2, 30: in 1:3)
 * qdisc plug 40: parent 1:4                          (limit --limit bytes, released)
 * armed (phase one of each hold; removed after the last release):
 * filter parent 1: protocol ip pref 1 fw handle 0x1 classid 1:4
 * table ip synplug { chain output { type route hook output priority mangle; policy accept;
 *     ip saddr @synplug_active tcp flags syn / syn,ack meta mark set 0x00000001 } }
 * ```
 *
 * The qdisc tree is set up once: a change of a device's root qdisc points
 * the device at the kernel's noop qdisc while it grafts (dev_deactivate),
 * and every packet sent on it meanwhile is dropped (measured on lo: 80 root
 * changes under a connect loop gave 19 SYN retransmissions, each a client
 * waiting 1 s; docs/design.md). Done per hold, that drop fell on the
 * reload's own clients. Filters and base chains are added and removed
 * without it, so the fw filter and the marking base chain (every packet
 * this host sends passes it: 5.7-7.2 % of the CPU per KiB of a received
 * bulk stream, bench/README.md) exist only around a hold
 * ({@link LOCAL_ARMED}): outside a hold no packet is classified to band 4,
 * and the plug there passes nothing. The table and its set hook nothing:
 * they stay, so the set's element (the kernel-side deadline) is one message
 * at the hold. The chain is removed once no netfilter queue of the
 * namespace holds a packet (removing a base chain drops them all).
 *
 * SYNs are marked only while the address sits in `synplug_active`, which
 * `arm` fills with a timeout of the max-hold: the kernel stops holding new
 * connections at the deadline even if no synplug process is left to release.
 *
 * The pieces are named ({@link LocalPiece}), never positions; setup adds
 * them in the order of {@link LocalHold.pieces} (the address first).
 *
 * @module
 */
import { isIP } from 'node:net';
import { constants as osConstants } from 'node:os';
import type { RequestInit } from '../../netlink/connection.js';
import { NETLINK_NETFILTER, NETLINK_ROUTE, NLM_F_ACK } from '../../netlink/message.js';
import { NetlinkError, UsageError } from '../../netlink/errors.js';
import { addAddress, deleteAddress, listAddresses } from '../../netlink/route/addr.js';
import { resolveIfindex } from '../../netlink/route/link.js';
import {
  addFilter,
  addQdisc,
  deleteFilter,
  deleteQdisc,
  listFilters,
  listQdiscs,
  replaceQdisc,
  changeQdisc,
  plugSetLimit,
  plugReleaseIndefinite,
  plugRequest,
  formatQdiscHandle,
  formatHandle,
  formatQdiscText,
  filterRequest,
  TCQ_PLUG_BUFFER,
  TCQ_PLUG_RELEASE_INDEFINITE,
  type FilterSpec,
  type QdiscSpec,
  type FilterEntry,
  type QdiscEntry,
  type PlugRef,
  type TcConnection,
} from '../../tc/index.js';
import { TREE, NFT_NAMES, refuseLoopback, resolveConfig, type GuardConfig } from '../config.js';
import {
  ADDRESS_PROTO,
  addressCarriesMark,
  addressIsMarked,
  EARLIER_MARK_DETAIL,
  holdTableMark,
  otherDirectoryDetail,
  ownerOfMark,
  removeIfThere,
  tableIsMarked,
} from '../teardown-marks.js';
import { stateDirMark } from '../state-fs.js';
import { sparingOthers } from '../pieces.js';
import { SynplugError } from '../../netlink/errors.js';
import { nothingQueuedWithin, queuedPackets } from '../../netlink/nfqueue.js';
import { defaultNetns } from '../../netlink/netns.js';
import { ForeignQdiscError, NoDeviceError } from '../errors.js';
import type { LocalHoldRecord, HoldRecord, SetupRecord } from '../state.js';
import type { PieceState, PlugStats, SetupOptions, SetupResult } from '../types.js';
import { hexMessage, qdiscsEmptyWithin, type WatchdogStep } from '../watchdog.js';
import { probeFilterKind, probeNfTables, probeQdiscKind, type ModulePiece } from '../support.js';
import { listRuleset } from '../../iptables/ruleset.js';
import { formatRulesetText } from '../../iptables/format.js';
import {
  ensureMarkRule,
  listMarkSetElements,
  markChainRemoval,
  planMarkRule,
  prepareElementOps,
  readTableState,
  removeMarkTable,
  resolveMarkRule,
  runPrepared,
  type MarkRuleOptions,
  type PreparedElementOps,
} from './local-nft.js';
import type { HeldTraffic, Hold, HoldAction, HoldHandoff, HoldInspection, HoldMode, HoldPieces, HoldSockets, Piece, SetupStep } from './types.js';

/** The pieces of the local hold, in the order `check` lists them (the address last). */
export const LOCAL_PIECES = ['prio', 'pfifo1', 'pfifo2', 'pfifo3', 'plug', 'filter', 'nftables', 'chain', 'address'] as const;
/** A piece of the local hold. */
export type LocalPiece = (typeof LOCAL_PIECES)[number];

/**
 * The pieces that live only around a hold (see {@link PieceLifetime}): the
 * fw filter that steers marked SYNs into the plug's band, and the marking
 * base chain. Both are added and removed without dropping a packet. The
 * qdisc tree is permanent: a root qdisc's change drops what the device
 * sends meanwhile (see the module's notes), so it never changes around a
 * hold; the address and the table with its set (no hook) are permanent too.
 */
export const LOCAL_ARMED: ReadonlySet<LocalPiece> = new Set(['filter', 'chain']);

/**
 * The qdisc tree: set up, and never removed around a hold; one found
 * missing (a setup by an earlier synplug, which added it around each hold,
 * or removed by hand) is added in the next hold's phase one, which then
 * waits a SYN-ACK retransmission's time before holding ({@link PieceLifetime}).
 */
export const LOCAL_STANDING: ReadonlySet<LocalPiece> = new Set(['prio', 'pfifo1', 'pfifo2', 'pfifo3', 'plug']);

/** After phase one changed lo's root qdisc: the server's SYN-ACK retransmission (1 s) and a margin, ms. */
const ROOT_SETTLE_MS = 1100;

/** How long a removal waits for queues to empty (the plug's release drains at once on lo), ms. */
const DRAIN_WAIT_MS = 1000;

const PFIFO_PIECES = ['pfifo1', 'pfifo2', 'pfifo3'] as const;

/** What the kernel holds now, as the local hold reads it. */
export interface LocalObservation {
  /** the device's qdiscs */
  qdiscs: QdiscEntry[];
  /** filters under the prio qdisc (empty without it) */
  filters: FilterEntry[];
  /** the address is on the device */
  hasAddress: boolean;
  /** it carries synplug's mark (teardown-marks.ts addressCarriesMark): an earlier setup added it */
  addressMarked?: boolean;
  /** what the nftables batch would do to reach the desired table, set, chain and rule (empty: nothing) */
  nftPlan: string[];
  /** what it would do to reach the table and its set alone (the permanent part; empty: nothing) */
  nftBasePlan: string[];
  /** synplug's table exists */
  nftTable: boolean;
  /** its marking chain exists */
  nftChain: boolean;
  /** it carries synplug's comment (teardown-marks.ts); undefined on a kernel that keeps no table comment (before 5.10) */
  nftTableMarked?: boolean;
  /** the table's comment as listed (holdTableComment: with the mark of the state directory whose setup made it) */
  tableComment?: string;
  /** the mark of this hold's state directory (undefined: the directory does not exist yet) */
  stateMark?: string;
}

/**
 * Whose the local hold's table is, by its comment (teardown-marks.ts
 * holdTableComment): `ours`, this state directory's; `other`, another's
 * (`theirs` its mark, `detail` the words); `earlier`, an earlier synplug's
 * (synplug's mark, no state directory's: `synplug setup` marks it anew);
 * `unmarked`, not synplug's; `unknown`, a kernel before 5.10, which keeps no
 * comment (the record alone decides: the documented fallback); `none`, absent.
 */
export function localTableOwner(o: Pick<LocalObservation, 'nftTable' | 'nftTableMarked' | 'tableComment' | 'stateMark'>): {
  is: 'ours' | 'other' | 'earlier' | 'unmarked' | 'unknown' | 'none';
  theirs?: string;
  detail?: string;
} {
  if (!o.nftTable) return { is: 'none' };
  if (o.nftTableMarked === undefined) return { is: 'unknown' };
  if (!o.nftTableMarked) return { is: 'unmarked' };
  const m = holdTableMark(o.tableComment);
  if (!m) return { is: 'earlier', detail: EARLIER_MARK_DETAIL };
  const is = ownerOfMark(m, o.stateMark);
  return is === 'other' ? { is, theirs: m.stateMark, detail: otherDirectoryDetail('local hold', "its table's comment", m.stateMark, o.stateMark) } : { is };
}

/** What `status` shows of the local hold in its entry (see HoldStatus for the fields). */
export interface LocalStatusDetails {
  qdiscs: QdiscEntry[];
  filters: FilterEntry[];
  ruleset?: string;
  marking: Array<{ address: string; expiresMs?: number; timeoutMs?: number }>;
  held?: number;
  passed?: number;
  dropped?: number;
}

function prefixlenOf(addr: string): number {
  return isIP(addr) === 6 ? 128 : 32;
}

/** The nftables family of the address: `ip` or `ip6`. */
export function familyOf(addr: string): 'ip' | 'ip6' {
  return isIP(addr) === 6 ? 'ip6' : 'ip';
}

/** The marking rule of a configuration (conditional on the set). */
export function markRuleOf(c: GuardConfig): MarkRuleOptions {
  return { address: c.addr, mark: c.mark, table: c.table, conditional: true, set: NFT_NAMES.set, chain: NFT_NAMES.chain };
}

function filterProtocol(c: GuardConfig): string {
  return isIP(c.addr) === 6 ? 'ipv6' : 'ip';
}

const same = (a: readonly number[] | undefined, b: readonly number[]) => !!a && a.length === b.length && a.every((x, i) => x === b[i]);

function rootOf(o: LocalObservation): QdiscEntry | undefined {
  return o.qdiscs.find((q) => q.root);
}

function qdiscAt(o: LocalObservation, parent: number): QdiscEntry | undefined {
  return o.qdiscs.find((q) => q.parent === formatHandle(parent));
}

function ourFilter(o: LocalObservation, c: GuardConfig): FilterEntry | undefined {
  return o.filters.find((f) => f.kind === 'fw' && f.pref === TREE.filterPrio && f.handle !== undefined && Number(f.handle) === c.mark);
}

/** Judge each piece of a local hold. Pure: exported for unit tests. */
export function judgeLocal(o: LocalObservation, c: GuardConfig, record: LocalHoldRecord | undefined): Record<LocalPiece, PieceState> {
  const root = rootOf(o);
  const prioName = `qdisc prio ${formatQdiscHandle(TREE.prioHandle)} root bands ${TREE.bands}`;
  let prio: PieceState;
  if (!root || root.handle === '0:')
    prio = {
      piece: prioName,
      status: 'missing',
      detail: `adding ${c.dev}'s root qdisc drops what ${c.dev} sends for a few ms: a hold that adds it waits 1.1 s before holding`,
    };
  else if (root.kind !== 'prio' || root.handle !== formatQdiscHandle(TREE.prioHandle))
    // setup and every hold refuse it (exit 7), and only setup --force replaces it
    prio = {
      piece: prioName,
      status: 'missing',
      detail: `root is ${root.kind} ${root.handle}, not synplug's: a hold is refused (exit 7) until it is removed ('synplug setup --force' replaces it)`,
    };
  else {
    const opt = root.options as { bands?: number; priomap?: number[] };
    const diffs: string[] = [];
    if (opt.bands !== TREE.bands) diffs.push(`bands ${opt.bands}`);
    if (!same(opt.priomap, TREE.priomap)) diffs.push(`priomap ${opt.priomap?.join(' ')}`);
    prio = { piece: prioName, status: diffs.length ? 'different' : 'ok', ...(diffs.length && { detail: diffs.join(', ') }) };
  }
  const pfifo = (i: number): PieceState => {
    const f = TREE.pfifo[i];
    const name = `qdisc pfifo ${formatQdiscHandle(f.handle)} parent ${formatHandle(f.parent)} limit ${TREE.pfifoLimit}p`;
    const q = qdiscAt(o, f.parent);
    if (!q) return { piece: name, status: 'missing' };
    if (q.kind !== 'pfifo' || q.handle !== formatQdiscHandle(f.handle) || (q.options as { limit?: number }).limit !== TREE.pfifoLimit) {
      return { piece: name, status: 'different', detail: `found ${q.kind} ${q.handle} ${JSON.stringify(q.options)}` };
    }
    return { piece: name, status: 'ok' };
  };
  const plugName = `qdisc plug ${formatQdiscHandle(TREE.plugHandle)} parent ${formatHandle(TREE.plugParent)}`;
  const plugQ = qdiscAt(o, TREE.plugParent);
  let plug: PieceState;
  if (!plugQ) plug = { piece: plugName, status: 'missing' };
  else if (plugQ.kind !== 'plug' || plugQ.handle !== formatQdiscHandle(TREE.plugHandle))
    plug = { piece: plugName, status: 'different', detail: `found ${plugQ.kind} ${plugQ.handle}` };
  else if (record && record.limit !== c.limit)
    plug = { piece: plugName, status: 'different', detail: `limit was set to ${record.limit} bytes, want ${c.limit}` };
  else plug = { piece: plugName, status: 'ok' };

  const filterName = `filter parent ${formatQdiscHandle(TREE.filterParent)} protocol ${filterProtocol(c)} pref ${TREE.filterPrio} fw handle 0x${c.mark.toString(16)} classid ${formatHandle(TREE.filterClassid)}`;
  const f = ourFilter(o, c);
  let filter: PieceState;
  if (!f) filter = { piece: filterName, status: 'missing' };
  else {
    const classid = (f.options as { classid?: string } | undefined)?.classid;
    const diffs: string[] = [];
    if (classid !== formatHandle(TREE.filterClassid)) diffs.push(`classid ${classid}`);
    if (f.protocol !== filterProtocol(c)) diffs.push(`protocol ${f.protocol}`);
    filter = { piece: filterName, status: diffs.length ? 'different' : 'ok', ...(diffs.length && { detail: diffs.join(', ') }) };
  }
  const nftName = `nftables table ${familyOf(c.addr)} ${c.table} with set ${NFT_NAMES.set}`;
  const owner = localTableOwner(o);
  const nftables: PieceState = !o.nftTable
    ? { piece: nftName, status: 'missing' }
    : owner.detail !== undefined
      ? // another state directory's (never used through this one), or an earlier synplug's (setup marks it anew)
        { piece: nftName, status: 'different', detail: owner.detail }
      : { piece: nftName, status: o.nftBasePlan.length ? 'different' : 'ok', ...(o.nftBasePlan.length && { detail: `would ${o.nftBasePlan.join('; ')}` }) };
  const chainName = `nftables chain ${familyOf(c.addr)} ${c.table} ${NFT_NAMES.chain} (hook output priority mangle): marking rule for ${c.addr}, mark ${c.mark}`;
  const chainPlan = o.nftPlan.filter((x) => !o.nftBasePlan.includes(x));
  const chain: PieceState =
    !o.nftTable || !o.nftChain
      ? { piece: chainName, status: 'missing' }
      : { piece: chainName, status: chainPlan.length ? 'different' : 'ok', ...(chainPlan.length && { detail: `would ${chainPlan.join('; ')}` }) };
  const address: PieceState = { piece: `address ${c.addr}/${prefixlenOf(c.addr)} on ${c.dev}`, status: o.hasAddress ? 'ok' : 'missing' };
  return { prio, pfifo1: pfifo(0), pfifo2: pfifo(1), pfifo3: pfifo(2), plug, filter, nftables, chain, address };
}

/** The local hold of one configuration on one device. */
export class LocalHold implements Hold {
  readonly mode = 'local';
  readonly via = 'plug';
  readonly scope = 'local';
  readonly id = 'local';
  readonly dev: string;
  readonly bufferMessages: readonly RequestInit[];
  readonly releaseMessages: readonly RequestInit[];
  private elements?: { timeoutMs: number; ops: PreparedElementOps };

  /**
   * @param sockets the session's sockets
   * @param config the configuration (device, address, mark, limit, table)
   * @param ifindex the device's index
   * @param record the hold's setup record entry, when setup recorded this device
   */
  constructor(
    /** @internal */ readonly sockets: HoldSockets,
    readonly config: GuardConfig,
    readonly ifindex: number,
    readonly record?: LocalHoldRecord,
  ) {
    this.dev = config.dev;
    const plugMsg = (action: number): RequestInit => {
      const r = plugRequest(ifindex, TREE.plugParent, TREE.plugHandle, action);
      return { type: r.type, flags: r.flags | NLM_F_ACK, payload: r.payload };
    };
    this.bufferMessages = [plugMsg(TCQ_PLUG_BUFFER)];
    this.releaseMessages = [plugMsg(TCQ_PLUG_RELEASE_INDEFINITE)];
  }

  /** @internal the device, by index and name */
  get devRef() {
    return { ifindex: this.ifindex, dev: this.config.dev };
  }

  /** @inheritdoc */
  async probeSupport(): Promise<{ missing: ModulePiece[]; unverified: ModulePiece[] }> {
    const missing: ModulePiece[] = [];
    const unverified: ModulePiece[] = [];
    for (const kind of ['prio', 'plug']) {
      if ((await probeQdiscKind(this.sockets.route, this.ifindex, kind)) === 'no') missing.push({ module: `sch_${kind}`, what: `qdisc ${kind}` });
    }
    const fw = await probeFilterKind(this.sockets.route, 'fw');
    if (fw === 'no') missing.push({ module: 'cls_fw', what: 'filter fw' });
    if (fw === 'unknown') unverified.push({ module: 'cls_fw', what: 'filter fw' });
    if ((await probeNfTables()) === 'no') missing.push({ module: 'nf_tables', what: 'nftables' });
    return { missing, unverified };
  }

  /** Read what the kernel holds now. @throws {NetlinkError} a listing refused */
  async observe(): Promise<LocalObservation> {
    const c = this.config;
    const qdiscs = await listQdiscs(this.sockets.route, this.devRef);
    const hasPrio = qdiscs.some((q) => q.root && q.handle === formatQdiscHandle(TREE.prioHandle) && q.kind === 'prio');
    const filters = hasPrio ? await listFilters(this.sockets.route, { ...this.devRef, parent: formatQdiscHandle(TREE.filterParent) }) : [];
    const addrs = await listAddresses(this.sockets.route, { dev: this.ifindex, family: isIP(c.addr) === 6 ? 'inet6' : 'inet' });
    const found = addrs.find((a) => a.local === c.addr);
    const hasAddress = found !== undefined;
    // the table's comment carries the state directory's mark (the plan makes a table without it anew)
    const stateMark = stateDirMark(c.stateDir);
    const r = resolveMarkRule({ ...markRuleOf(c), ...(stateMark !== undefined && { stateMark }) });
    const state = await readTableState(this.sockets.nft, r.family, r.table);
    const plan = planMarkRule(state, r);
    return {
      qdiscs,
      filters,
      hasAddress,
      ...(addressCarriesMark(found) && { addressMarked: true }),
      nftPlan: plan.ops.map((o) => o.what),
      nftBasePlan: planMarkRule(state, r, { chain: false }).ops.map((o) => o.what),
      nftTable: state.table !== undefined,
      nftChain: state.chains.some((x) => x.name === r.chain),
      ...(state.table && { nftTableMarked: tableIsMarked(state.table) }),
      ...(state.table?.comment !== undefined && { tableComment: state.table.comment }),
      ...(stateMark !== undefined && { stateMark }),
    };
  }

  /** The root is synplug's: prio 1: with our plug under 1:4, or recorded by our setup. */
  rootIsOurs(o: LocalObservation): boolean {
    const root = rootOf(o);
    if (root?.kind !== 'prio' || root.handle !== formatQdiscHandle(TREE.prioHandle)) return false;
    if (qdiscAt(o, TREE.plugParent)?.kind === 'plug') return true;
    // Without its plug (a setup killed after adding the root, or the plug removed by hand): ours only as setup adds
    // it, bands and priomap alike, and only where setup recorded this hold; a user's prio 1: (bands 3, or another map) is not.
    const opt = root.options as { bands?: number; priomap?: number[] };
    return this.record?.dev === this.config.dev && opt.bands === TREE.bands && same(opt.priomap, TREE.priomap);
  }

  /**
   * The pieces, in the order setup and arming add them: the address, the
   * marking table with its set, the prio root and its children (permanent);
   * the fw filter and the marking chain (armed: {@link LOCAL_ARMED}).
   * Teardown releases the plug, then removes (in reverse) the chain, the prio
   * root with everything under it, the table and the address, each only when
   * it is synplug's (teardown-marks.ts).
   */
  get pieces(): HoldPieces<LocalObservation, LocalPlan> {
    if (!this.piecesMemo) this.piecesMemo = localPieces(this);
    return this.piecesMemo;
  }
  private piecesMemo?: HoldPieces<LocalObservation, LocalPlan>;

  /** @inheritdoc */
  holdAction(): HoldAction {
    return { kind: 'route', messages: this.bufferMessages };
  }

  /** @inheritdoc */
  releaseAction(): HoldAction {
    return { kind: 'route', messages: this.releaseMessages };
  }

  /** @inheritdoc */
  handoff(): HoldHandoff {
    return { steps: [plugReleaseStep(this.releaseMessages), ...this.disarmSteps()] };
  }

  /** @inheritdoc */
  checkDetails(): Record<string, unknown> {
    return { addr: this.config.addr };
  }

  /** @inheritdoc */
  heldTraffic(): HeldTraffic {
    return { addrs: [this.config.addr], ports: [] };
  }

  /** @inheritdoc */
  setupCommand(): string {
    return 'synplug setup';
  }

  /** @inheritdoc */
  setupOptions(): SetupOptions {
    const c = this.config;
    return { dev: c.dev, addr: c.addr, mark: c.mark, limit: c.limit, table: c.table, stateDir: c.stateDir };
  }

  /** @inheritdoc */
  setupResult(entry: HoldRecord): Partial<SetupResult> {
    const c = this.config;
    return { dev: c.dev, addr: c.addr, mark: c.mark, limit: c.limit, ownsAddress: (entry as LocalHoldRecord).addedAddress };
  }

  /** @inheritdoc */
  explainPlugError(e: NetlinkError, action: 'buffer' | 'release'): NetlinkError | undefined {
    if (e.code === 'ENOENT' || e.code === 'EINVAL') {
      // A plug gone at a release (removed meanwhile, by hand or by a teardown) holds nothing.
      if (action === 'release') return undefined;
      return e.withMessage(
        `cannot ${action} the plug: no plug qdisc ${formatQdiscHandle(TREE.plugHandle)} under ${formatHandle(TREE.plugParent)} on ${this.config.dev} (run 'synplug setup')`,
      );
    }
    return e;
  }

  private elementOps(timeoutMs: number): PreparedElementOps {
    if (!this.elements || this.elements.timeoutMs !== timeoutMs) {
      this.elements = { timeoutMs, ops: prepareElementOps({ address: this.config.addr, table: this.config.table, set: NFT_NAMES.set, timeoutMs }) };
    }
    return this.elements.ops;
  }

  /**
   * Turn marking on for `timeoutMs` (the kernel-side dead man's switch): the
   * address enters the nftables set with that timeout, fresh even if an old
   * element was left behind.
   * @throws {NftBatchError} the set or table is missing, or the kernel refused
   */
  async arm(timeoutMs: number): Promise<void> {
    await runPrepared(this.sockets.nft, this.elementOps(timeoutMs).refresh!);
  }

  /** Turn marking off now (delete the element; a missing one is fine). @throws {NftBatchError} */
  async disarm(): Promise<void> {
    await runPrepared(this.sockets.nft, this.elementOps(this.elements?.timeoutMs ?? 1000).delete, { ignoreMissing: true });
  }

  /** The disarm, pre-encoded for the watchdog. */
  disarmSteps(): WatchdogStep[] {
    const del = this.elementOps(this.elements?.timeoutMs ?? 1000).delete;
    return [
      {
        what: 'nftables element delete',
        phase: 'disarm',
        protocol: NETLINK_NETFILTER,
        messages: del.messages.map(hexMessage),
        ignoreErrno: [osConstants.errno.ENOENT],
      },
    ];
  }

  /** @inheritdoc */
  async plugStats(): Promise<PlugStats | undefined> {
    const q = (await listQdiscs(this.sockets.route, { ifindex: this.ifindex })).find(
      (x) => x.handle === formatQdiscHandle(TREE.plugHandle) && x.kind === 'plug',
    );
    if (!q) return undefined;
    return { packets: q.packets ?? 0, bytes: q.bytes ?? 0, drops: q.drops ?? 0, qlen: q.qlen ?? 0, backlog: q.backlog ?? 0 };
  }

  /**
   * What `status` shows of this hold: the device's qdiscs and filters (with
   * counters), synplug's table as `nft list table` prints it, the marking
   * set's elements, and the plug's counters.
   * @throws {NetlinkError} a listing refused
   */
  async statusDetails(inspection: HoldInspection): Promise<{ hold: Record<string, unknown> }> {
    return { hold: { addr: this.config.addr, ...(await this.localStatusDetails(inspection)) } };
  }

  /** The local hold's status fields (see HoldStatus). @throws {NetlinkError} a listing refused */
  async localStatusDetails(inspection: HoldInspection): Promise<LocalStatusDetails> {
    const o = inspection.observed as LocalObservation;
    const c = this.config;
    let ruleset: string | undefined;
    let marking: LocalStatusDetails['marking'] = [];
    if (o.nftTable) {
      const family = familyOf(c.addr);
      const rs = await listRuleset(this.sockets.nft, { family });
      const mine = {
        ...rs,
        tables: rs.tables.filter((t) => t.name === c.table),
        chains: rs.chains.filter((x) => x.table === c.table),
        rules: rs.rules.filter((r) => r.table === c.table),
        sets: rs.sets.filter((x) => x.table === c.table),
      };
      ruleset = formatRulesetText(mine);
      try {
        marking = (await listMarkSetElements(this.sockets.nft, { family, table: c.table, set: NFT_NAMES.set })).map((e) => ({
          address: e.address ?? e.key,
          expiresMs: e.expiresMs,
          timeoutMs: e.timeoutMs,
        }));
      } catch {
        marking = [];
      }
    }
    const plugQ = o.qdiscs.find((q) => q.kind === 'plug' && q.handle === formatQdiscHandle(TREE.plugHandle));
    return {
      qdiscs: o.qdiscs,
      filters: o.filters,
      ...(ruleset !== undefined && { ruleset }),
      marking,
      ...(plugQ && { held: plugQ.qlen ?? 0, passed: plugQ.packets ?? 0, dropped: plugQ.drops ?? 0 }),
    };
  }
}

/** What one plan of the local hold's pieces shares. */
interface LocalPlan {
  /** the address is synplug's (setup added it: recorded, or found with synplug's mark) */
  addedAddress: boolean;
  /** the prio root is made anew: everything under it is missing */
  rebuilt: boolean;
  /** why a removal kept the chain (packets queued): the table, whose removal would unregister it, stays too */
  chainKept?: string;
}

/** A local piece (permanent or armed: {@link LOCAL_ARMED}), judged by {@link judgeLocal}. */
function localPiece(
  h: LocalHold,
  key: LocalPiece,
  rest: Omit<Piece<LocalObservation, LocalPlan>, 'key' | 'lifetime' | 'judge'>,
): Piece<LocalObservation, LocalPlan> {
  const lifetime = LOCAL_ARMED.has(key) ? 'armed' : LOCAL_STANDING.has(key) ? 'standing' : 'permanent';
  return { key, lifetime, judge: (o) => judgeLocal(o, h.config, h.record)[key], ...rest };
}

/** The local hold's pieces (see {@link LocalHold.pieces}). */
function localPieces(h: LocalHold): HoldPieces<LocalObservation, LocalPlan> {
  const c = h.config;
  const { sockets, devRef: dev } = h;
  const route = sockets.route;
  const record = h.record;
  const statusOf = (st: PieceState, p: LocalPlan) => (p.rebuilt ? 'missing' : st.status);
  const address = addressPiece<LocalObservation, LocalPlan>(route, dev, c.addr, record, (o) => judgeLocal(o, c, record).address);
  const prioSpec: QdiscSpec = {
    ...dev,
    parent: 'root',
    handle: formatQdiscHandle(TREE.prioHandle),
    kind: 'prio',
    options: { bands: TREE.bands, priomap: [...TREE.priomap] },
  };
  // The filters on the tree that are not this hold's fw filter (another state directory's local hold armed on this
  // device shares the tree and its plug, or someone else's): counted by handle, as a dump lists each filter group's
  // header (no handle) beside its filters.
  const othersFilters = async () =>
    (await listFilters(route, { ...dev, parent: formatQdiscHandle(TREE.filterParent) })).filter(
      (f) => f.handle !== undefined && !(f.kind === 'fw' && Number(f.handle) === c.mark),
    ).length;
  // setup's step for the root (and a hold's, where nothing is in the way: prio.arm)
  const prioAdd = (o: LocalObservation, st: PieceState, p: LocalPlan): SetupStep | undefined => {
    const root = rootOf(o);
    // Another's root (a prio 1: of someone else's too) reaches here only with --force: setup refuses it before any
    // step otherwise. It goes whole, with its filters, and synplug's comes in its place: deleted, then added (the kernel
    // refuses to replace a qdisc by one of another kind under the same handle, the usual 1:).
    if (root && root.handle !== '0:' && !h.rootIsOurs(o)) {
      p.rebuilt = true;
      return {
        what: `replace root qdisc ${root.kind} ${root.handle} on ${c.dev} with prio 1: (--force)`,
        run: async () => {
          await deleteQdisc(route, { ...dev, parent: 'root' });
          await addQdisc(route, prioSpec);
        },
        undo: { what: `removed qdisc prio 1: (the root it replaced is gone: --force)`, run: () => deleteQdisc(route, { ...dev, parent: 'root' }) },
        settleMs: ROOT_SETTLE_MS,
      };
    }
    if (st.status === 'missing') {
      // A new prio root comes with default children: everything under it is then missing.
      p.rebuilt = true;
      return {
        what: 'add qdisc prio 1: root bands 4',
        run: () => addQdisc(route, prioSpec),
        undo: { what: `removed qdisc prio 1: (and everything under it)`, run: () => deleteQdisc(route, { ...dev, parent: 'root' }) },
        settleMs: ROOT_SETTLE_MS,
      };
    }
    if (st.status !== 'different') return undefined;
    const old = root!.options as { bands: number; priomap: number[] };
    return {
      what: `change qdisc prio 1: to bands 4 and the default priomap (was ${st.detail})`,
      run: () => changeQdisc(route, prioSpec),
      undo: { what: 'restored prio 1: options', run: () => changeQdisc(route, { ...prioSpec, options: { bands: old.bands, priomap: old.priomap } }) },
    };
  };
  const prio = localPiece(h, 'prio', {
    // a hold never replaces another's root: refused before any step (nothing changed)
    arm(o, st, p) {
      const root = rootOf(o);
      if (root && root.handle !== '0:' && !h.rootIsOurs(o)) throw new ForeignQdiscError(c.dev, formatQdiscText(root).split('\n')[0].trim(), 'hold');
      return prioAdd(o, st, p);
    },
    add: (o, st, p) => prioAdd(o, st, p),
    async remove(o, _p, out) {
      const root = rootOf(o);
      if (root && h.rootIsOurs(o)) {
        // another state directory's local hold on this device shares the tree: while its fw filter is on it (armed, a
        // hold of its own) the tree stays (its hold would end unsaid); outside its holds, its next hold adds the tree again
        const others = await othersFilters();
        if (others) {
          out.kept.push(
            `qdisc prio 1: on ${c.dev}: ${others} filter(s) not of this hold are on it (another state directory's local hold holding on ${c.dev}, or someone else's): it stays for them`,
          );
          return;
        }
        // deleting a qdisc drops what it queues: only once the plug (released) and the bands are empty
        if (!(await qdiscsEmptyWithin(route, h.ifindex, DRAIN_WAIT_MS))) {
          out.kept.push(`qdisc prio 1: on ${c.dev}: packets are still queued in it (deleting it would drop them); 'synplug teardown' run again removes it`);
          return;
        }
        // named by handle and kind: the kernel refuses another root (EINVAL), one put there meanwhile, which stays
        const gone = await deleteQdisc(route, { ...dev, parent: 'root', handle: prioSpec.handle, kind: 'prio' }).then(
          () => false,
          (e: unknown) => {
            if (e instanceof NetlinkError && (e.code === 'ENOENT' || e.code === 'EINVAL')) return true;
            throw e;
          },
        );
        if (!gone) out.removed.push(`qdisc prio 1: and everything under it (pfifo 10: 20: 30:, plug 40:, the fw filter) on ${c.dev}`);
      } else if (root && root.handle !== '0:') out.kept.push(`root qdisc ${root.kind} ${root.handle} on ${c.dev}: not synplug's`);
    },
  });
  const pfifos = PFIFO_PIECES.map((key, i) => {
    const f = TREE.pfifo[i];
    const spec: QdiscSpec = { ...dev, parent: formatHandle(f.parent), handle: formatQdiscHandle(f.handle), kind: 'pfifo', options: { limit: TREE.pfifoLimit } };
    return localPiece(h, key, {
      add(o, st, p): SetupStep | undefined {
        const status = statusOf(st, p);
        if (status === 'missing')
          return {
            what: `add qdisc pfifo ${spec.handle} parent ${spec.parent} limit ${TREE.pfifoLimit}`,
            run: () => addQdisc(route, spec),
            undo: p.rebuilt
              ? undefined
              : { what: `removed pfifo ${spec.handle}`, run: () => deleteQdisc(route, { ...dev, parent: spec.parent, handle: spec.handle }) },
          };
        if (status !== 'different') return undefined;
        // Whatever sits there is not ours to keep: replace it (the kernel grafts the new one).
        return {
          what: `replace qdisc at ${spec.parent} with pfifo ${spec.handle} limit ${TREE.pfifoLimit} (${st.detail})`,
          run: async () => {
            const cur = qdiscAt(o, f.parent)!;
            if (cur.handle !== spec.handle || cur.kind !== 'pfifo') await deleteQdisc(route, { ...dev, parent: spec.parent });
            await replaceQdisc(route, spec);
          },
        };
      },
    });
  });
  const plugSpec: QdiscSpec = {
    ...dev,
    parent: formatHandle(TREE.plugParent),
    handle: formatQdiscHandle(TREE.plugHandle),
    kind: 'plug',
    options: { limit: c.limit },
  };
  const plugRef = { ...dev, parent: plugSpec.parent!, handle: plugSpec.handle! };
  const addPlug = () => addReleasedPlug(route, { ...plugSpec, ...plugRef });
  const plug = localPiece(h, 'plug', {
    add(o, st, p): SetupStep | undefined {
      const status = statusOf(st, p);
      const plugQ = qdiscAt(o, TREE.plugParent);
      if (status === 'missing')
        return {
          what: `add qdisc plug 40: parent 1:4 limit ${c.limit} and release it`,
          run: addPlug,
          undo: p.rebuilt
            ? undefined
            : { what: 'removed plug 40:', run: () => deleteQdisc(route, { ...dev, parent: plugSpec.parent, handle: plugSpec.handle }) },
        };
      if (status !== 'different') return undefined;
      if (plugQ && (plugQ.kind !== 'plug' || plugQ.handle !== plugSpec.handle))
        return {
          what: `replace ${plugQ.kind} ${plugQ.handle} at 1:4 with plug 40: limit ${c.limit}`,
          run: async () => {
            await deleteQdisc(route, { ...dev, parent: plugSpec.parent });
            await addPlug();
          },
        };
      return {
        what: `set plug 40: limit to ${c.limit} bytes`,
        run: () => plugSetLimit(route, { ...plugRef, limit: c.limit }),
        ...(record && { undo: { what: `restored plug limit ${record.limit}`, run: () => plugSetLimit(route, { ...plugRef, limit: record.limit }) } }),
      };
    },
  });
  const fwSpec: FilterSpec = {
    ...dev,
    parent: formatQdiscHandle(TREE.filterParent),
    protocol: filterProtocol(c),
    pref: TREE.filterPrio,
    handle: c.mark,
    kind: 'fw',
    options: { classid: formatHandle(TREE.filterClassid) },
  };
  const fwDel = (protocol = fwSpec.protocol, pref = fwSpec.pref) =>
    deleteFilter(route, { ...dev, parent: fwSpec.parent, protocol, pref, handle: fwSpec.handle, kind: 'fw' });
  const filter = localPiece(h, 'filter', {
    add(o, st, p): SetupStep | undefined {
      const status = statusOf(st, p);
      if (status === 'missing')
        return {
          what: `add filter parent 1: protocol ${fwSpec.protocol} pref 1 fw handle ${c.mark} classid 1:4`,
          run: () => addFilter(route, fwSpec),
          undo: p.rebuilt ? undefined : { what: 'removed the fw filter', run: () => fwDel() },
        };
      if (status !== 'different') return undefined;
      const old = ourFilter(o, c)!;
      return {
        what: `replace the fw filter (${st.detail})`,
        run: async () => {
          await fwDel(old.protocol, old.pref);
          await addFilter(route, fwSpec);
        },
      };
    },
    // after the last release: only synplug's fw filter (its handle is the mark) under synplug's root; one gone is fine
    async remove(o, _p, out) {
      const f = ourFilter(o, c);
      if (!f || !h.rootIsOurs(o)) return;
      await removeIfThere(() => fwDel(f.protocol, f.pref));
      out.removed.push(`filter parent 1: protocol ${f.protocol} pref ${f.pref} fw handle 0x${c.mark.toString(16)} on ${c.dev}`);
    },
    // the watchdog's removal: the same filter by handle (one already gone, or its root, is fine)
    removeSteps: () => {
      const r = filterRequest('delete', h.ifindex, { parent: fwSpec.parent, protocol: fwSpec.protocol, pref: fwSpec.pref, handle: fwSpec.handle, kind: 'fw' });
      const { ENOENT, EINVAL, ENODEV } = osConstants.errno;
      return [
        {
          what: `delete filter parent 1: protocol ${fwSpec.protocol} pref ${fwSpec.pref} fw handle 0x${c.mark.toString(16)} on ${c.dev}`,
          phase: 'disarm',
          protocol: NETLINK_ROUTE,
          messages: [hexMessage({ type: r.type, flags: r.flags | NLM_F_ACK, payload: r.payload })],
          ignoreErrno: [ENOENT, EINVAL, ENODEV],
        },
      ];
    },
  });
  const family = familyOf(c.addr);
  const rule = resolveMarkRule(markRuleOf(c));
  // this state directory's table (or an earlier synplug's); on a kernel before 5.10 (no comment) the record decides
  const tableIsOurs = (o: LocalObservation) => {
    const owner = localTableOwner(o).is;
    return owner === 'unknown' ? record !== undefined || o.nftPlan.length === 0 : owner === 'ours' || owner === 'earlier';
  };
  const nftables = localPiece(h, 'nftables', {
    add(o, st) {
      if (st.status === 'ok') return undefined;
      // another state directory's table: refused before any step (setup.ts refuseOthersPieces), and never replaced here
      const owner = localTableOwner(o);
      if (owner.is === 'other') throw new SynplugError(`nftables table ${family} ${c.table}: ${owner.detail}. Nothing was changed`, 'foreign-state');
      return {
        what: o.nftTable
          ? `update nftables table ${c.table} (${o.nftBasePlan.join('; ') || "its comment: this state directory's mark"})`
          : `add nftables table ${c.table} with set ${NFT_NAMES.set} (the marking chain comes with each hold)`,
        // the comment carries the state directory's mark: the directory exists when the step runs (setup makes it first)
        run: async () => {
          const stateMark = stateDirMark(c.stateDir);
          if (stateMark === undefined) throw new SynplugError(`the state directory ${c.stateDir} is gone: its mark cannot be put on the table`, 'failure');
          await ensureMarkRule(sockets.nft, { ...markRuleOf(c), stateMark }, { chain: false });
        },
        undo: o.nftTable
          ? undefined
          : { what: `removed nftables table ${c.table}`, run: async () => void (await removeMarkTable(sockets.nft, { table: c.table, family })) },
      };
    },
    async remove(o, p, out) {
      if (!o.nftTable) return;
      // deleting the table would unregister its base chain, which drops every packet queued in the namespace
      if (p.chainKept) out.kept.push(`nftables table ${family} ${c.table}: its chain is kept (${p.chainKept})`);
      else if (tableIsOurs(o)) {
        for (const t of (await removeMarkTable(sockets.nft, { table: c.table, family })).removed) out.removed.push(`nftables table ${t}`);
      } else
        out.kept.push(
          o.nftTableMarked === false
            ? `nftables table ${family} ${c.table}: it does not carry synplug's comment, so synplug did not make it ('synplug setup' recreates it with the comment)`
            : `nftables table ${family} ${c.table}: setup did not record it and it is not exactly synplug's rule`,
        );
    },
  });
  // one gone meanwhile (its table too) is fine
  const removeChain = async () => void (await removeIfThere(() => markChainRemoval(rule).commit(sockets.nft)));
  const chain = localPiece(h, 'chain', {
    add: (o, st) =>
      st.status === 'ok'
        ? undefined
        : {
            what: `nftables: ${o.nftPlan.filter((x) => !o.nftBasePlan.includes(x)).join('; ')}`,
            run: async () => void (await ensureMarkRule(sockets.nft, markRuleOf(c))),
            undo: { what: `removed chain ${family} ${c.table} ${rule.chain}`, run: removeChain },
          },
    async remove(o, p, out) {
      if (!o.nftChain || !tableIsOurs(o)) return;
      // Unregistering a base chain drops every packet queued in any netfilter queue of the namespace (docs/design.md).
      if (!(await nothingQueuedWithin(DRAIN_WAIT_MS, defaultNetns()))) {
        p.chainKept = `${queuedPackets(defaultNetns())} packet(s) are queued in a netfilter queue of this namespace, which removing a base chain would drop`;
        out.kept.push(`chain ${family} ${c.table} ${rule.chain}: ${p.chainKept}; the next synplug command removes it`);
        return;
      }
      await removeChain();
      out.removed.push(`chain ${family} ${c.table} ${rule.chain} (with its marking rule)`);
    },
    // the watchdog's removal: the chain with its rule (one already gone is fine), once nothing is queued
    removeSteps: () => [
      {
        what: `delete chain ${family} ${c.table} ${rule.chain}`,
        phase: 'disarm',
        protocol: NETLINK_NETFILTER,
        messages: markChainRemoval(rule).messages().map(hexMessage),
        ignoreErrno: [osConstants.errno.ENOENT],
        whenNothingQueuedMs: 3000,
      },
    ],
  });
  // another state directory's hold (its table's comment says so): nothing of it is removed or released through this one
  return sparingOthers<LocalObservation, LocalPlan>(
    {
      list: [address, nftables, prio, ...pfifos, plug, filter, chain],
      listOrder: LOCAL_PIECES,
      observe: () => h.observe(),
      begin: (o) => ({ addedAddress: (record?.addedAddress ?? false) || o.addressMarked === true, rebuilt: false }),
      marked: (o) => [
        ...(o.nftTableMarked === true ? [`nftables table ${family} ${c.table}`] : []),
        ...(o.addressMarked ? [`address ${c.addr} on ${c.dev}`] : []),
      ],
      // whose, by the state directory's mark in the table's comment (undefined: an earlier synplug's, or a kernel before 5.10)
      markOwner(o) {
        const owner = localTableOwner(o);
        if (owner.is === 'ours') return { here: true };
        if (owner.is !== 'other') return undefined;
        const removeBy = [
          `'nft delete table ${family} ${c.table}'`,
          ...(h.rootIsOurs(o) ? [`'tc qdisc del dev ${c.dev} root' (once nothing is held: it drops what its plug holds)`] : []),
          ...(o.addressMarked ? [`'ip addr del ${c.addr}/${prefixlenOf(c.addr)} dev ${c.dev}'`] : []),
        ].join(' and ');
        return {
          here: false,
          detail: `the table's comment names state directory mark ${owner.theirs}; this directory's is ${o.stateMark ?? 'none: it does not exist yet'}`,
          removeBy,
        };
      },
      // a root that is not synplug's: refused, or with --force replaced by synplug's (the prio piece's step)
      refuse(o, options) {
        const root = rootOf(o);
        if (root && root.handle !== '0:' && !h.rootIsOurs(o) && !options.force) throw new ForeignQdiscError(c.dev, formatQdiscText(root).split('\n')[0].trim());
      },
      record: (p): LocalHoldRecord => ({
        mode: 'local',
        dev: c.dev,
        addr: c.addr,
        mark: c.mark,
        limit: c.limit,
        table: c.table,
        addedAddress: p.addedAddress,
        prefixlen: prefixlenOf(c.addr),
        createdAt: record?.createdAt ?? Date.now(),
      }),
      async letGo(o, out) {
        if (qdiscAt(o, TREE.plugParent)?.kind !== 'plug') return;
        // the plug is shared with another state directory's local hold on this device while its filter is on the tree:
        // releasing it would end that hold in the middle of its reload
        const others = await othersFilters();
        if (others) {
          out.kept.push(
            `the plug on ${c.dev}, held: ${others} filter(s) not of this hold steer into it (another state directory's local hold holding); not released`,
          );
          return;
        }
        await route.exchange(h.releaseMessages).catch(() => {});
        out.removed.push('released the plug');
      },
    },
    (o) => {
      const owner = localTableOwner(o);
      return owner.is === 'other' ? `local hold on ${c.dev} (its qdiscs, filter, table and address): kept, ${owner.detail}` : undefined;
    },
  );
}

/**
 * A hold's address on its device (a host route: /32 or /128), as a piece:
 * added when missing (with synplug's mark), removed by teardown when setup
 * added it (see {@link removeAddress}). It alone does not make a setup (it
 * may be the user's own), unless it is synplug's: then it is a piece left of
 * a setup, and a hold whose other pieces someone removed is partly set up.
 * @param record what setup recorded of the hold: whether it added the address
 */
export function addressPiece<O extends { hasAddress: boolean; addressMarked?: boolean }, C extends { addedAddress: boolean }>(
  route: HoldSockets['route'],
  dev: { ifindex: number; dev: string },
  addr: string,
  record: { addedAddress?: boolean; prefixlen?: number } | undefined,
  judge: (o: O) => PieceState,
): Piece<O, C> {
  const prefixlen = prefixlenOf(addr);
  return {
    key: 'address',
    lifetime: 'permanent',
    optional: (o) => !(record?.addedAddress === true || o.addressMarked === true),
    judge,
    add: (o, _st, p) =>
      o.hasAddress
        ? undefined
        : {
            what: `add address ${addr}/${prefixlen} dev ${dev.dev}`,
            addsAddress: true,
            run: async () => {
              await addAddress(route, { dev: dev.ifindex, address: addr, prefixlen, protocol: ADDRESS_PROTO });
              p.addedAddress = true;
            },
            undo: { what: `removed address ${addr}/${prefixlen}`, run: () => deleteAddress(route, { dev: dev.ifindex, address: addr, prefixlen }) },
          },
    async remove(o, _p, out) {
      if (record?.addedAddress) out.removed.push(...(await removeAddress(route, dev, addr, record.prefixlen, out.kept)));
      else if (o.hasAddress) out.kept.push(`address ${addr} on ${dev.dev}: setup did not add it`);
    },
  };
}

/** How teardown's `removed` names an address it removed: `address A/P on DEV` ({@link removedAddressOf} reads it back). */
export function removedAddressText(addr: string, prefixlen: number, dev: string): string {
  return `address ${addr}/${prefixlen} on ${dev}`;
}

/** The address of a `removed` entry written by {@link removedAddressText}; undefined for any other entry. */
export function removedAddressOf(entry: string): string | undefined {
  return /^address (\S+)\/\d+ on \S+$/.exec(entry)?.[1];
}

/**
 * Remove an address setup added, if it carries synplug's mark (IFA_PROTO
 * {@link ADDRESS_PROTO}; on a kernel before 5.18, which keeps none, the
 * record alone decides). One already gone is fine.
 * @param kept where to say why an address without the mark is left (optional)
 * @returns what was removed (`address A/32 on lo`), or nothing
 * @throws {NetlinkError} a listing refused, or a refusal other than EADDRNOTAVAIL/ENOENT
 */
export async function removeAddress(
  route: HoldSockets['route'],
  dev: { ifindex: number; dev: string },
  addr: string,
  prefixlen = prefixlenOf(addr),
  kept: string[] = [],
): Promise<string[]> {
  const found = (await listAddresses(route, { dev: dev.ifindex, family: isIP(addr) === 6 ? 'inet6' : 'inet' })).find((a) => a.local === addr);
  if (!found) return [];
  if (!addressIsMarked(found)) {
    kept.push(
      `address ${addr}/${found.prefixlen} on ${dev.dev}: the record says setup added it, but it does not carry synplug's mark (address protocol ${ADDRESS_PROTO}), so synplug did not add it`,
    );
    return [];
  }
  try {
    await deleteAddress(route, { dev: dev.ifindex, address: addr, prefixlen });
    return [removedAddressText(addr, prefixlen, dev.dev)];
  } catch (e) {
    if (!(e instanceof NetlinkError && (e.code === 'EADDRNOTAVAIL' || e.code === 'ENOENT'))) throw e;
    return [];
  }
}

/**
 * Add a plug qdisc and release it at once (a new plug starts buffering). A
 * release that fails removes the plug again before the error goes up, so a
 * setup step that fails half-way never leaves a plug buffering that no
 * record names (setup undoes only the steps that completed).
 * @param spec the plug: its device, parent, handle and options
 * @throws {NetlinkError} the kernel refused the add or the release
 */
export async function addReleasedPlug(route: TcConnection, spec: QdiscSpec & PlugRef): Promise<void> {
  await addQdisc(route, spec);
  const { kind: _kind, options: _options, ...ref } = spec;
  try {
    await plugReleaseIndefinite(route, ref);
  } catch (e) {
    await deleteQdisc(route, ref).catch(() => {});
    throw e;
  }
}

/**
 * The watchdog's release of plugs: their release messages (NETLINK_ROUTE) in
 * one datagram; a session joins every plug hold's into one step.
 */
export function plugReleaseStep(messages: readonly RequestInit[]): WatchdogStep {
  return { what: 'plug release', phase: 'release', protocol: NETLINK_ROUTE, messages: messages.map(hexMessage) };
}

/** Whether a record entry has every field the local hold's record has, of the right type. */
export function isLocalRecord(r: Record<string, unknown>): boolean {
  return (
    typeof r.dev === 'string' &&
    r.dev !== '' &&
    typeof r.addr === 'string' &&
    Number.isInteger(r.mark) &&
    Number.isInteger(r.limit) &&
    typeof r.table === 'string' &&
    (r.addedAddress === undefined || typeof r.addedAddress === 'boolean') &&
    (r.prefixlen === undefined || Number.isInteger(r.prefixlen))
  );
}

/**
 * What setup would refuse in a local record entry: a bad device name, a bad
 * or loopback address, a mark or limit out of range, a table that is not
 * synplug's, a prefix length other than the address's host route.
 */
export function localRecordRefusal(r: Record<string, unknown>): string | undefined {
  try {
    const c = resolveConfig({ ...localMode.configOf!(r as LocalHoldRecord), stateDir: '/' });
    refuseLoopback(c.addr);
    if (r.prefixlen !== undefined && r.prefixlen !== prefixlenOf(c.addr))
      return `prefix length ${String(r.prefixlen)}: setup adds ${c.addr}/${prefixlenOf(c.addr)} only`;
    return undefined;
  } catch (e) {
    if (e instanceof UsageError) return e.message;
    throw e;
  }
}

/** The local mode: the lo hold of the configuration. */
export const localMode: HoldMode = {
  name: 'local',
  via: 'plug',
  scopes: ['local'],
  isRecord: isLocalRecord,
  deviceOfId: (id, dev) => (id === 'local' ? dev : undefined),
  idForms: ['local'],
  describe: (h) => ({
    label: `local hold on ${h.dev}`,
    clients: `to ${h.addr}`,
    setup: 'synplug setup',
    top: true,
    fromRecord: false,
    status: () => [],
  }),
  setupHead: (r) =>
    r.changed
      ? `synplug set up on ${r.dev} for ${r.addr} (mark ${r.mark}, plug limit ${r.limit} bytes):`
      : `synplug already set up on ${r.dev} for ${r.addr}: nothing to change`,
  recordRefusal: localRecordRefusal,
  configOf(r: HoldRecord): Partial<GuardConfig> {
    const l = r as LocalHoldRecord;
    return { dev: l.dev, addr: l.addr, mark: l.mark, limit: l.limit, table: l.table };
  },
  async probeSupport(sockets: HoldSockets, config: GuardConfig) {
    return (await localMode.open(sockets, config)).probeSupport();
  },
  validate(_opts: SetupOptions, config: GuardConfig): void {
    refuseLoopback(config.addr);
    resolveMarkRule(markRuleOf(config)); // the nftables side, before anything is sent
  },
  async openForSetup(sockets: HoldSockets, config: GuardConfig, _opts: SetupOptions, record: SetupRecord | undefined) {
    return { hold: await localMode.open(sockets, config, record?.holds.local) };
  },
  async open(sockets: HoldSockets, config: GuardConfig, record?: HoldRecord): Promise<Hold> {
    const ifindex = await resolveIfindex(sockets.route, config.dev).catch((e: unknown) => {
      if (e instanceof NetlinkError && e.code === 'ENODEV') throw new NoDeviceError(config.dev);
      throw e;
    });
    const local = record && record.mode === 'local' && record.dev === config.dev ? (record as LocalHoldRecord) : undefined;
    return new LocalHold(sockets, config, ifindex, local);
  },
};
