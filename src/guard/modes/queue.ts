/**
 * The queue hold: SYNs held in a netfilter queue instead of a plug qdisc, for
 * kernels without sch_plug. An nftables rule of synplug's own (one `inet`
 * table per hold, IPv4 and IPv6 together) sends the SYNs of held connections
 * to queue N with the bypass flag: while no socket is bound to the queue,
 * they pass inside the kernel. Holding is binding the queue (copy mode META,
 * maxlen packets, fail-open off: over maxlen a SYN is dropped and retried by
 * its client, never accepted to a closed port); releasing is one batch
 * ACCEPT verdict up to the highest packet id, then the unbind.
 *
 * ```
 * table inet synplug_queue {
 *   chain hold {
 *     type filter hook output priority raw; policy accept;
 *     ip daddr 169.254.255.254 tcp flags syn / syn,ack queue num 4200 bypass
 *   }
 * }
 * ```
 * Local clients (`setup --via queue [--addr A]`): hook output, SYNs to A.
 * Clients arriving on DEV (`setup --via queue --inbound DEV --port P...
 * [--addr A...]`): hook prerouting, `iifname DEV`, SYNs to each port (and
 * address). The verdict is nft's native `queue` expression where the kernel
 * has it, else the xt `NFQUEUE` revision 3 target through nft_compat
 * (probed as iptables-nft does: src/iptables/queue-support.ts).
 *
 * The table is permanent (setup makes it; a table hooks nothing). Its chain
 * and rules are armed: added in phase one of each hold, before anything is
 * held, and removed after the last release (by the watchdog too when protect
 * dies), because a base chain is on the path of every packet of its hook.
 *
 * Only the socket that bound the queue may give verdicts: the bound socket
 * lives in one holder process (../leases-holder.ts) for as long as any lease
 * on the hold lives; every protect, plug and release reaches it through a
 * unix socket in the state directory, so overlapping protects and a manual
 * plug share the hold as they share a plug qdisc. A queue hold never
 * outlives synplug: a protect's death ends its lease, a deadline passes on
 * its own, and with the holder gone the kernel drops what was queued
 * (clients retransmit) while new SYNs bypass.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { constants as osConstants } from 'node:os';
import { isIP } from 'node:net';
import { NetlinkError, SynplugError, UsageError } from '../../netlink/errors.js';
import { defaultNetns } from '../../netlink/netns.js';
import { listAddresses } from '../../netlink/route/addr.js';
import type { Socket } from 'node:net';
import { listBoundQueues, netlinkSocketOwners, nothingQueuedWithin, queuedPackets } from '../../netlink/nfqueue.js';
import { HOLDER_ANSWER_MS, holderSocketPath, holdThroughHolder, prepareHolder, releaseThroughHolder, removeStaleHolderSocket } from '../leases-holder.js';
import { liveLeases } from '../leases.js';
import { processState, StateStore, type Lease } from '../state.js';
import * as C from '../../iptables/constants.js';
import { NftBatch } from '../../iptables/batch.js';
import type { NftChain } from '../../iptables/chain.js';
import type { Expr } from '../../iptables/expr/index.js';
import { listRules, type NftRule } from '../../iptables/rule.js';
import { probeQueueExpression, queueRuleExpressions, type QueueExpressionKind } from '../../iptables/queue-support.js';
import { parseAddress } from '../../iptables/validate.js';
import { canonicalAddress, refuseLoopback, type GuardConfig } from '../config.js';
import { NoDeviceError } from '../errors.js';
import type { HoldRecord, SetupRecord } from '../state.js';
import { probeNfTables, type ModulePiece } from '../support.js';
import type { HoldStatus, PieceState, PlugStats, QueueOptions, SetupOptions, SetupResult } from '../types.js';
import { resolveInboundDevice } from './inbound.js';
import { readTableState, type TableState } from './local-nft.js';
import { addressPiece } from './local.js';
import { hexMessage, type WatchdogStep } from '../watchdog.js';
import { addressCarriesMark, queueTableComment, queueTableMark, removeIfThere, tableIsMarked } from '../teardown-marks.js';
import { stateDirMark } from '../state-fs.js';
import { defaultStateDir } from '../state-dir.js';
import { listTables, type NftTable } from '../../iptables/table.js';
import { NETLINK_NETFILTER } from '../../netlink/message.js';
import type {
  HeldTraffic,
  Hold,
  HoldAction,
  HoldHandoff,
  HoldInspection,
  HoldMode,
  HoldPieces,
  HoldScope,
  HoldSockets,
  Piece,
  PieceLifetime,
  SetupStep,
} from './types.js';

/** The queue number a queue hold uses unless `--queue-num` says otherwise (recorded by setup). */
export const DEFAULT_QUEUE_NUM = 4200;
/** The queue's maxlen, packets, unless `--queue-maxlen` says otherwise. */
export const DEFAULT_QUEUE_MAXLEN = 65536;
/** The table of the local queue hold; an inbound one's is `synplug_queue_<DEV>`. */
export const QUEUE_TABLE = 'synplug_queue';
/** The base chain in each table. */
export const QUEUE_CHAIN = 'hold';
/** What the kernel lists when nfnetlink_queue is there (built in or loaded). */
const NFQUEUE_PROC = '/proc/net/netfilter/nfnetlink_queue';

/** A queue hold's entry in `setup.json`. */
export interface QueueHoldRecord extends HoldRecord {
  mode: 'queue';
  /** `local`: this host's clients (hook output); `inbound`: clients arriving on `dev` (hook prerouting) */
  scope: HoldScope;
  /** destination addresses held (local: the one proxy address; inbound: none means any) */
  addrs: string[];
  /** destination ports held (inbound; none for local: every port of the address) */
  ports: number[];
  queueNum: number;
  maxlen: number;
  /** synplug's inet table */
  table: string;
  /** the verdict expression the rules use */
  verdict: 'native' | 'compat';
  /** setup added the (local) address to `lo` */
  addedAddress: boolean;
}

/** What a queue hold holds. */
interface QueueSpec {
  scope: HoldScope;
  dev: string;
  ifindex: number;
  addrs: string[];
  ports: number[];
  queueNum: number;
  maxlen: number;
  table: string;
}

/** The pieces `check` lists. */
const QUEUE_PIECES = ['device', 'table', 'chain', 'rules', 'address'] as const;
type QueuePiece = (typeof QUEUE_PIECES)[number];

/** What the queue hold reads of the kernel; addressMarked: the address carries synplug's mark (an earlier setup added it, maybe without recording it). */
interface QueueObservation {
  table: TableState;
  /** the mark of this hold's state directory (undefined: the directory does not exist yet), which its table's comment carries */
  stateMark: string | undefined;
  /** whether the device exists (an inbound hold's, looked up by name; lo always does) */
  hasDevice: boolean;
  hasAddress: boolean;
  addressMarked: boolean;
  verdict: 'native' | 'compat' | 'none';
}

/**
 * A session's hold on one queue number, shared by its queue holds (two
 * holds on one queue number are held by one socket). The bound socket lives
 * in the queue's holder process (leases-holder.ts): holding is asking it to
 * hold (starting it when none runs), releasing is asking it to release.
 */
class QueueBinding {
  /** the connection to the holder while this session holds (a protect's end closes it: its lease goes) */
  conn: Socket | undefined;
  /** the connection phase one made to a holder (started, not yet bound), for the hold */
  private prepared: Socket | undefined;
  /** SYNs released by the holder's verdicts this session asked for, over every hold */
  released = 0;
  /** SYNs the kernel dropped while the holder held: over the queue's maxlen, or the socket's buffer full */
  dropped = 0;
  /** the holder's release failures (its verdict refused twice: the unbind dropped what it held), one sentence each */
  failures: string[] = [];
  /** what a release did that lost nothing but is news (a stopped holder taken over), one sentence each */
  notes: string[] = [];
  /** the netlink port of the holder that let the queue go at this session's request: bound until its unbind, just after */
  closingPort: number | undefined;
  /** the last release found no holder to ask (none ran: nothing held, or it died) */
  unanswered = false;
  /** the removal of the armed pieces of the holds on this queue, for a holder this binding starts to run at its exit */
  disarm: WatchdogStep[] = [];
  /** the holder said it let the queue go (`{"released":true}`: a manual release, the last lease's end) while this session held */
  private told = false;
  /** the holder died while this session held: what it dropped is not counted (its counter died with it) */
  dropsLost = false;
  /** when the holder died during this session's hold, ms since the epoch: nothing was held after */
  endedAt: number | undefined;
  /** with {@link unanswered}: this directory had no holder socket either (a holder killed leaves its socket): none ever held here */
  noSocket = false;
  constructor(
    readonly queueNum: number,
    readonly stateDir: string,
  ) {}

  /**
   * Hold the queue through its holder (nothing when this session holds already).
   * @throws {SynplugError} the queue is bound by someone else, named (`foreign-state`); the holder did not start (`failure`)
   */
  async bind(maxlen: number, dev: string): Promise<void> {
    if (this.conn) return;
    const prepared = this.prepared;
    this.prepared = undefined;
    const conn = await holdThroughHolder({ stateDir: this.stateDir, queueNum: this.queueNum, maxlen, dev, disarm: this.disarm }, prepared);
    this.conn = conn;
    // The holder says `{"released":true}` when it lets the queue go (a manual release, the last lease's end); a close
    // without it, while this session holds, is the holder's death: the kernel dropped what it held.
    this.told = false;
    let buf = '';
    conn.on('data', (d: Buffer) => {
      buf += d.toString('utf8');
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        let m: { released?: unknown; counted?: unknown; dropped?: unknown };
        try {
          m = JSON.parse(line) as typeof m;
        } catch {
          continue;
        }
        // let go by the holder (a deadline, a manual release, a teardown): the hold ended then, and its count follows
        if (m.released === true) {
          this.told = true;
          this.endedAt ??= Date.now();
        } else if (m.counted === true) {
          this.released += Number(m.released) || 0;
          this.dropped += Number(m.dropped) || 0;
          this.letGo = true;
          this.countArrived?.();
        }
      }
    });
    const since = Date.now();
    conn.once('close', () => {
      this.countArrived?.();
      if (this.conn !== conn || this.told) return;
      this.conn = undefined;
      this.dropsLost = true;
      this.endedAt = Date.now();
      this.failures.push(
        `queue ${this.queueNum}: its holder process ended ${Date.now() - since} ms into the hold (killed?): the kernel dropped the SYNs it held (their clients connect when they retransmit, 1 s or more), and later SYNs passed unheld`,
      );
    });
  }

  /**
   * Phase one: a holder runs (started when none does), not yet bound, so
   * that the hold itself is one round trip.
   * @throws {SynplugError} the holder did not start (`failure`)
   */
  async prepare(maxlen: number, dev: string): Promise<void> {
    if (this.conn || this.prepared) return;
    this.prepared = await prepareHolder({ stateDir: this.stateDir, queueNum: this.queueNum, maxlen, dev, disarm: this.disarm });
  }

  /** Let go of phase one's connection when no hold used it (an unbound holder then exits). */
  unprepare(): void {
    this.prepared?.destroy();
    this.prepared = undefined;
  }

  /** a holder let the queue go at this session's request (the holds sharing the queue number see it too) */
  private letGo = false;

  /** called when the holder's count arrives (or its connection closes), for a release waiting for it */
  private countArrived: (() => void) | undefined;

  /** the hold whose counters are this binding's (the first to ask): holds sharing the queue share one count of its SYNs */
  private countedBy: string | undefined;

  /** Whether hold `id` reports this binding's counters: one hold of those sharing the queue, so that a SYN counts once. */
  countsFor(id: string): boolean {
    this.countedBy ??= id;
    return this.countedBy === id;
  }

  /**
   * Ask the holder to release (one batch ACCEPT, the unbind).
   * @returns whether a holder let the queue go, now or earlier in this session (for another hold on the same queue)
   */
  async release(): Promise<boolean> {
    const held = this.conn !== undefined;
    // Let go by the holder on its own (a deadline): its count follows its verdict. Waited for (bounded) before the
    // connection goes, else a command ending just after that verdict lost it (0 SYNs held reported). Nothing is
    // held by now: the wait delays no client.
    if (this.conn && this.told && !this.letGo)
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, HOLDER_ANSWER_MS);
        this.countArrived = () => {
          clearTimeout(t);
          resolve();
        };
      });
    this.countArrived = undefined;
    this.conn?.destroy();
    this.conn = undefined;
    this.unprepare();
    const r = await releaseThroughHolder(this.stateDir, this.queueNum);
    this.unanswered = r === undefined && !this.letGo;
    this.noSocket = this.unanswered && !existsSync(holderSocketPath(this.stateDir, this.queueNum));
    // Held through a holder that neither answered the release nor said it let the queue go, and left its socket (a
    // holder that lets go removes it): it died at the release (killed as the command ended); the kernel dropped what
    // it held.
    if (held && this.unanswered && !this.told && !this.noSocket) {
      this.dropsLost = true;
      this.endedAt ??= Date.now();
      this.failures.push(
        `queue ${this.queueNum}: its holder process ended at the release, before it answered (killed?): the kernel dropped the SYNs it held (their clients connect when they retransmit, 1 s or more)`,
      );
    }
    if (r) {
      this.released += r.released;
      this.dropped += r.dropped;
      if (r.portId !== undefined) this.closingPort = r.portId;
      // a holder killed: news when its socket was taken over (nothing lost), a failure when the kill dropped what it held
      if (r.killed !== undefined) (r.takenOver ? this.notes : this.failures).push(`queue ${this.queueNum}: ${r.killed}`);
      if (r.failure !== undefined)
        this.failures.push(
          `queue ${this.queueNum}: the kernel refused the release verdict twice (${r.failure}): the SYNs held were dropped; their clients connect when they retransmit (1 s or more)`,
        );
      this.letGo = true;
    }
    return this.letGo;
  }
}

const bindings = new WeakMap<HoldSockets, Map<number, QueueBinding>>();

function bindingOf(sockets: HoldSockets, queueNum: number, stateDir: string): QueueBinding {
  const m = bindings.get(sockets) ?? new Map<number, QueueBinding>();
  bindings.set(sockets, m);
  const b = m.get(queueNum) ?? new QueueBinding(queueNum, stateDir);
  m.set(queueNum, b);
  return b;
}

const REG = C.NFT_REG_1;

/** A payload load and an equality test. */
function loadCmp(base: 'network' | 'transport', offset: number, data: Buffer): Expr[] {
  return [
    { name: 'payload', dreg: REG, base, offset, len: data.length },
    { name: 'cmp', sreg: REG, op: 'eq', data: data.toString('hex') },
  ];
}

/** A meta load and an equality test. */
function metaCmp(key: string, data: Buffer): Expr[] {
  return [
    { name: 'meta', key, dreg: REG },
    { name: 'cmp', sreg: REG, op: 'eq', data: data.toString('hex') },
  ];
}

/** An interface name as `meta iifname` compares it: IFNAMSIZ (16) bytes, NUL-padded. */
function ifnameBytes(name: string): Buffer {
  const b = Buffer.alloc(16);
  b.write(name, 'utf8');
  return b;
}

/**
 * The rules of a hold, each as its expressions: per address (any with none)
 * and port (every port with none), `[meta iifname DEV] [meta nfproto X
 * payload daddr] meta l4proto tcp [tcp dport P] tcp flags & (syn|ack) == syn`
 * and the queue verdict with bypass.
 */
export function queueRules(spec: Pick<QueueSpec, 'scope' | 'dev' | 'addrs' | 'ports' | 'queueNum'>, verdict: QueueExpressionKind): Expr[][] {
  const addrs = spec.addrs.length ? spec.addrs : [undefined];
  const ports = spec.ports.length ? spec.ports : [undefined];
  const out: Expr[][] = [];
  for (const a of addrs) {
    for (const p of ports) {
      const e: Expr[] = [];
      if (spec.scope === 'inbound') e.push(...metaCmp('iifname', ifnameBytes(spec.dev)));
      if (a !== undefined) {
        const ip = parseAddress(a);
        const v4 = ip.version === 4;
        e.push(...metaCmp('nfproto', Buffer.from([v4 ? C.NFPROTO_IPV4 : C.NFPROTO_IPV6])), ...loadCmp('network', v4 ? 16 : 24, ip.bytes));
      }
      e.push(...metaCmp('l4proto', Buffer.from([6])));
      if (p !== undefined) {
        const b = Buffer.alloc(2);
        b.writeUInt16BE(p);
        e.push(...loadCmp('transport', 2, b));
      }
      e.push(
        { name: 'payload', dreg: REG, base: 'transport', offset: 13, len: 1 },
        // TCP flags: SYN 0x02, ACK 0x10 -> & (SYN|ACK) == SYN
        { name: 'bitwise', sreg: REG, dreg: REG, op: 'mask_xor', len: 1, mask: '12', xor: '00' },
        { name: 'cmp', sreg: REG, op: 'eq', data: '02' },
        ...queueRuleExpressions(verdict, spec.queueNum),
      );
      out.push(e);
    }
  }
  return out;
}

/** An expression as a comparable text (keys sorted, undefined fields left out). */
function canon(e: Expr): string {
  return JSON.stringify(
    Object.fromEntries(
      Object.entries(e)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => a.localeCompare(b)),
    ),
  );
}

const ruleText = (exprs: readonly Expr[]): string => exprs.map(canon).join(' ');

/** The queue numbers a rule sends packets to (native `queue` or the NFQUEUE target). */
function queuesOf(rule: NftRule): number[] {
  const out: number[] = [];
  for (const e of rule.expr as unknown as Array<Record<string, unknown>>) {
    if (e.name === 'queue' && typeof e.num === 'number') {
      const total = typeof e.total === 'number' ? e.total : 1;
      for (let q = e.num; q < e.num + total; q++) out.push(q);
    }
    const nfq = e.name === 'target' ? (e.nfqueue as { num: number; total: number } | undefined) : undefined;
    if (nfq) for (let q = nfq.num; q < nfq.num + Math.max(nfq.total, 1); q++) out.push(q);
  }
  return out;
}

/**
 * Whose a queue hold's table is, by its comment (teardown-marks.ts's
 * queueTableComment): `ours` when it carries this state directory's mark
 * (on a kernel before 5.10, which keeps no comment, the record alone
 * decides: the documented fallback); `other` when another state
 * directory's; `earlier` with synplug's mark but no state directory (an
 * earlier synplug's) or ours for another queue number (setup marks it
 * anew); `unmarked` not synplug's; `none` absent.
 */
function tableOwner(
  o: Pick<QueueObservation, 'table' | 'stateMark'>,
  queueNum: number,
): { is: 'ours' | 'other' | 'earlier' | 'unmarked' | 'none'; detail?: string; queueNum?: number } {
  const t = o.table.table;
  if (!t) return { is: 'none' };
  const marked = tableIsMarked(t);
  if (marked === undefined) return { is: 'ours' };
  if (!marked) return { is: 'unmarked', detail: "it does not carry synplug's mark (its comment): not made by synplug setup, which refuses it (exit 7)" };
  const m = queueTableMark(t.comment);
  if (m && m.stateMark !== o.stateMark)
    return {
      is: 'other',
      queueNum: m.queueNum,
      detail: `another state directory's queue hold (its comment names queue ${m.queueNum} and state directory mark ${m.stateMark}, not this directory's${o.stateMark ? ` ${o.stateMark}` : ''}): use that directory's --state-dir for it`,
    };
  if (!m) return { is: 'earlier', detail: "made by an earlier synplug, without its state directory's mark: 'synplug setup' marks it anew" };
  if (m.queueNum !== queueNum) return { is: 'earlier', detail: `marked for queue ${m.queueNum}, not ${queueNum}: 'synplug setup' marks it anew` };
  return { is: 'ours' };
}

/** The table setup puts a queue hold in: {@link QUEUE_TABLE} for a local hold, `synplug_queue_DEV` for an inbound hold of DEV. */
function queueTableOf(scope: HoldScope, dev: string): string {
  return scope === 'inbound' ? `${QUEUE_TABLE}_${dev}` : QUEUE_TABLE;
}

/** Whether a table name is a queue hold's of synplug's. */
const isOurTable = (t: string): boolean => t === QUEUE_TABLE || t.startsWith(`${QUEUE_TABLE}_`);

/**
 * A listing that failed: empty, as without nftables there is no rule or
 * table to clash with (the support probe names what is missing).
 * @throws {NetlinkError} the refusal itself when it is a permission's (EPERM, EACCES)
 */
function unlisted<T>(e: unknown): T[] {
  if (e instanceof NetlinkError && (e.code === 'EPERM' || e.code === 'EACCES')) throw e;
  return [];
}

/** One queue hold (local or inbound), opened for a session. */
export class QueueHold implements Hold {
  readonly mode = 'queue';
  readonly via = 'queue';
  readonly id: string;
  readonly dev: string;
  readonly ifindex: number;
  readonly scope: HoldScope;
  private verdictKind: QueueExpressionKind | undefined;

  constructor(
    private readonly sockets: HoldSockets,
    readonly spec: QueueSpec,
    readonly record: QueueHoldRecord | undefined,
    private readonly stateDir: string,
  ) {
    this.scope = spec.scope;
    this.dev = spec.dev;
    this.ifindex = spec.ifindex;
    this.id = queueHoldId(spec.scope, spec.dev);
    this.verdictKind = record?.verdict;
  }

  /** The state directory this hold is recorded in (its mark is on the hold's table). */
  get stateDirPath(): string {
    return this.stateDir;
  }

  private get binding(): QueueBinding {
    return bindingOf(this.sockets, this.spec.queueNum, this.stateDir);
  }

  /** The verdict expression this kernel has (native queue, else the NFQUEUE target), probed once. @throws {NetlinkError} */
  private async verdict(): Promise<QueueExpressionKind> {
    this.verdictKind ??= await probeQueueExpression(this.sockets.nft);
    return this.verdictKind;
  }

  /** @inheritdoc */
  async probeSupport(): Promise<{ missing: ModulePiece[]; unverified: ModulePiece[] }> {
    const missing: ModulePiece[] = [];
    if ((await probeNfTables()) === 'no') return { missing: [{ module: 'nf_tables', what: 'nftables' }, ...nfqueueMissing()], unverified: [] };
    missing.push(...nfqueueMissing());
    this.verdictKind = undefined;
    if ((await this.verdict()) === 'none')
      missing.push({ module: 'nft_queue', what: "nftables' queue expression (or the xt NFQUEUE target through nft_compat: xt_NFQUEUE, nft_compat)" });
    return { missing, unverified: [] };
  }

  /** Read synplug's queue table, the verdict expression this kernel has, and (local) the address. @throws {NetlinkError} */
  async observe(): Promise<QueueObservation> {
    const s = this.spec;
    const table = await readTableState(this.sockets.nft, 'inet', s.table);
    const verdict = table.table ? await this.verdict() : (this.verdictKind ?? 'native');
    const stateMark = stateDirMark(this.stateDir);
    if (s.scope !== 'local')
      return {
        table,
        stateMark,
        hasDevice: (await resolveInboundDevice(this.sockets.route, s.dev)) !== undefined,
        hasAddress: true,
        addressMarked: false,
        verdict,
      };
    const a = s.addrs[0];
    const addrs = await listAddresses(this.sockets.route, { dev: this.ifindex, family: isIP(a) === 6 ? 'inet6' : 'inet' });
    return {
      table,
      stateMark,
      hasDevice: true,
      hasAddress: addrs.some((x) => x.local === a),
      addressMarked: addressCarriesMark(addrs.find((x) => x.local === a)),
      verdict,
    };
  }

  /** Judge each piece in what was observed. */
  judge(o: QueueObservation): Record<QueuePiece, PieceState> {
    const s = this.spec;
    const chain = o.table.chains.find((c) => c.name === QUEUE_CHAIN);
    const want = o.verdict === 'none' ? [] : queueRules(s, o.verdict).map(ruleText);
    const have = o.table.rules.filter((r) => r.chain === QUEUE_CHAIN).map((r) => ruleText(r.expr));
    const rulesOk = want.length > 0 && have.length === want.length && want.every((w) => have.includes(w));
    const owner = tableOwner(o, s.queueNum);
    return {
      device: {
        piece: `device ${s.dev}`,
        status: o.hasDevice ? 'ok' : 'missing',
        ...(!o.hasDevice && {
          detail: `gone since setup (deleted or renamed): nothing arriving on it can be held; create it again, or remove the rest of the hold with 'synplug teardown --inbound ${s.dev}'`,
        }),
      },
      table: {
        piece: `nftables table inet ${s.table}`,
        // a table of that name without synplug's mark was not made by setup: setup refuses it (exit 7), teardown leaves it;
        // one another state directory's setup made is that directory's: setup refuses it, teardown leaves it
        status: owner.is === 'none' ? 'missing' : owner.is === 'ours' ? 'ok' : 'different',
        ...(owner.detail !== undefined && { detail: owner.detail }),
      },
      chain: chainPiece(chain, s.scope),
      rules: {
        piece: `SYN rule(s) to queue ${s.queueNum} (bypass)${s.scope === 'inbound' ? ` for ${s.dev} port ${s.ports.join(',')}` : ` to ${s.addrs[0]}`}`,
        status: rulesOk ? 'ok' : have.length ? 'different' : 'missing',
        ...(!rulesOk && have.length > 0 && { detail: `${have.length} rule(s) in the chain, ${want.length} wanted` }),
      },
      address: {
        piece: s.scope === 'local' ? `address ${s.addrs[0]} on ${s.dev}` : 'address (none: inbound)',
        status: o.hasAddress ? 'ok' : 'missing',
      },
    };
  }

  /**
   * The pieces, in order: (local) the address and the table, which setup
   * makes; then the chain and its rules, armed around each hold by one
   * nftables batch ({@link QUEUE_RULE_LIFETIME}). Teardown releases the queue,
   * then removes the table when it carries synplug's mark, and the address
   * when setup added it.
   */
  get pieces(): HoldPieces<QueueObservation, QueuePlan> {
    if (!this.piecesMemo) this.piecesMemo = queuePieces(this, this.sockets);
    return this.piecesMemo;
  }
  private piecesMemo?: HoldPieces<QueueObservation, QueuePlan>;

  /** @internal release the queue (teardown) */
  releaseQueue(): Promise<boolean> {
    return this.binding.release();
  }

  /**
   * Refuse a queue number someone else uses: bound by a socket now, or the
   * target of a rule outside synplug's queue tables.
   * @throws {SynplugError} `foreign-state`, naming the process or the rule; nothing changed
   */
  async refuseClash(options: { holdingHere?: boolean } = {}): Promise<void> {
    const q = this.spec.queueNum;
    const bound = listBoundQueues(defaultNetns()).find((e) => e.queue === q);
    // this state directory's own hold, holding now: its holder binds the queue (setup.ts judges the rest)
    if (bound && !options.holdingHere) {
      const owners = netlinkSocketOwners(bound.portId, defaultNetns());
      const who = owners.length ? `process ${owners.map((o) => `${o.pid} (${o.command})`).join(', ')}` : `netlink port ${bound.portId}`;
      throw new SynplugError(`netfilter queue ${q} is bound by ${who}: choose another --queue-num. Nothing was changed`, 'foreign-state');
    }
    // Another state directory's queue hold: its rule exists only during its holds, but its table says its queue
    // number and directory (queueTableComment). The same table, or another on the same queue number, is refused.
    const mine = stateDirMark(this.stateDir);
    const tables = await listTables(this.sockets.nft, { family: 'inet' }).catch((e: unknown) => unlisted<NftTable>(e));
    const others = tables.flatMap((t) => {
      const m = isOurTable(t.name) ? queueTableMark(t.comment) : undefined;
      // this hold's own table, another directory's: setup.ts's refuseOthersPieces says whose
      return m && m.stateMark !== mine && t.name !== this.spec.table && m.queueNum === q ? [{ name: t.name, ...m }] : [];
    });
    if (others.length) {
      // whose: the default state directory when its mark is the table's (another one is known by its mark only)
      const dir = markedDefaultDir(others[0].stateMark);
      const whose = dir !== undefined ? `the state directory ${dir}` : 'another state directory';
      const opt = `--state-dir ${dir ?? 'DIR'}`;
      throw new SynplugError(
        `netfilter queue ${q} is another state directory's: ${whose} holds SYNs in it (its queue hold's ${others.map((t) => `table inet ${t.name}`).join(' and ')}, whose comment names queue ${q} and state directory mark ${others[0].stateMark}; this one's is ${mine ?? 'none yet'}). Two state directories never share a queue: choose another --queue-num for this hold, or set it up through that directory (${opt}); to free queue ${q}, tear that hold down through it ('synplug teardown ${opt}'). If no state directory records it any more, remove its table ('nft delete table inet ${others[0].name}', outside a hold) and run setup again. Nothing was changed`,
        'foreign-state',
      );
    }
    await this.refuseForeignRules('choose another --queue-num. Nothing was changed');
  }

  /**
   * Refuse a queue number that a rule outside synplug's queue tables targets:
   * during a hold synplug would hold what that rule queues (any packet of
   * theirs, not only SYNs). At setup, and in phase one of every hold (a rule
   * added since setup).
   * @param advice the message's end: what to do, and what was not changed
   * @throws {SynplugError} `foreign-state`, naming the rules' tables and chains
   */
  private async refuseForeignRules(advice: string): Promise<void> {
    const q = this.spec.queueNum;
    const rules = await listRules(this.sockets.nft).catch((e: unknown) => unlisted<NftRule>(e));
    const foreign = rules.filter((r) => !isOurTable(r.table) && queuesOf(r).includes(q));
    if (foreign.length) {
      const where = [...new Set(foreign.map((r) => `table ${r.family} ${r.table} chain ${r.chain}`))].join('; ');
      throw new SynplugError(`netfilter queue ${q} is used by rule(s) that are not synplug's (${where}): ${advice}`, 'foreign-state');
    }
  }

  /** @inheritdoc */
  holdAction(): HoldAction {
    return {
      kind: 'run',
      run: async () => {
        try {
          await this.binding.bind(this.spec.maxlen, this.spec.dev);
        } catch (e) {
          // Another process holds the queue number: its socket would get every SYN the rule queues (and answer none).
          // Removing the rule changes no hook (removing the chain would drop what that process has queued): the
          // empty chain goes with the next disarm that finds nothing queued.
          if (e instanceof SynplugError && e.category === 'foreign-state') {
            const flushed = await new NftBatch()
              .flushChain({ family: 'inet', table: this.spec.table, chain: QUEUE_CHAIN })
              .commit(this.sockets.nft)
              .then(
                () => true,
                () => false,
              );
            if (flushed)
              e.message += `; nothing was held, and synplug's SYN rule for queue ${this.spec.queueNum} was removed so that process gets none of them`;
          }
          throw e;
        }
      },
    };
  }

  /** @inheritdoc */
  async prepareHold(): Promise<void> {
    // a rule of someone else's queueing to this number since setup: a hold would take their packets too
    await this.refuseForeignRules(
      `a hold would hold what they queue too; remove them, or set this hold up again with another --queue-num (teardown, then setup --via queue --queue-num N). Nothing was held`,
    );
    // the holder this starts removes the armed pieces at its exit when nobody else did (every other holder killed)
    for (const st of this.pieces.list.flatMap((p) => (p.lifetime === 'armed' && p.removeSteps?.()) || []))
      if (!this.binding.disarm.some((d) => d.what === st.what)) this.binding.disarm.push(st);
    return this.binding.prepare(this.spec.maxlen, this.spec.dev);
  }

  /** @inheritdoc */
  close(): void {
    this.binding.unprepare();
  }

  /** @inheritdoc */
  releaseAction(): HoldAction {
    return {
      kind: 'run',
      run: async () => {
        await this.binding.release();
      },
    };
  }

  /** @inheritdoc */
  heldElsewhere(): string | undefined {
    const bound = listBoundQueues(defaultNetns()).find((e) => e.queue === this.spec.queueNum);
    // The holder this session asked to release is still bound for its last verdict and unbind: not someone else.
    if (!bound || bound.portId === this.binding.closingPort) return undefined;
    const owners = netlinkSocketOwners(bound.portId, defaultNetns());
    const who = owners.length ? `process ${owners.map((o) => `${o.pid} (${o.command})`).join(', ')}` : `netlink port ${bound.portId}`;
    return `queue ${this.spec.queueNum} (${this.id}) is held by ${who}, ${bound.queued} SYN(s) queued: not this state directory's queue holder (another directory's, or not synplug's), which would have let them go`;
  }

  /** @inheritdoc */
  holderLost(): string | undefined {
    const b = this.binding;
    if (!b.unanswered || b.noSocket || !b.countsFor(this.id)) return undefined;
    return `queue ${this.spec.queueNum} (${this.id}): no holder process held it at the release: it ended during the hold (killed?), and the kernel dropped the SYNs it held (their clients connect when they retransmit, 1 s or more)`;
  }

  /** @inheritdoc */
  heldNothingHere(): string | undefined {
    const b = this.binding;
    if (!b.noSocket || !b.countsFor(this.id)) return undefined;
    return `queue ${this.spec.queueNum} (${this.id}): the records here say a hold, but no holder of this state directory held it (it has no ${basename(holderSocketPath(this.stateDir, this.spec.queueNum))}; records copied from another directory?): nothing was held or released through this directory`;
  }

  /** @inheritdoc */
  explainPlugError(e: NetlinkError): NetlinkError {
    return e;
  }

  /** @inheritdoc */
  handoff(): HoldHandoff {
    // The queue's holder process keeps the bound socket and judges the leases itself: a protect's death closes
    // its connection to the holder, which drops its lease and releases when no live lease is left. The watchdog asks
    // it too when it releases (the owner's death, the deadline): a holder that cannot answer (stopped, hung) is then
    // killed, so that nothing stays held past them.
    const n = this.spec.queueNum;
    return { steps: [{ what: `queue ${n}'s release through its holder`, phase: 'release', protocol: NETLINK_NETFILTER, messages: [], queueHolder: n }] };
  }

  /** @inheritdoc */
  heldTraffic(): HeldTraffic {
    return { addrs: this.spec.addrs, ports: this.spec.ports };
  }

  /** @inheritdoc */
  async plugStats(): Promise<PlugStats | undefined> {
    if (!this.record) return undefined; // not set up (opened without a record): nothing of it holds
    const b = this.binding;
    // The queue's counters are the binding's, whichever of its holds (local, inbound) queued a SYN: summed over the
    // session's holds, they count once, through one of them.
    const ended = b.endedAt !== undefined && { holdEndedAt: b.endedAt };
    if (!b.countsFor(this.id)) return { packets: 0, bytes: 0, drops: 0, qlen: 0, backlog: 0, ...ended };
    return {
      packets: b.released,
      bytes: 0,
      drops: b.dropped,
      qlen: 0,
      backlog: 0,
      ...(b.failures.length && { failures: [...b.failures] }),
      ...(b.notes.length && { notes: [...b.notes] }),
      ...(b.dropsLost && { dropsLost: true as const }),
      ...ended,
    };
  }

  /** @inheritdoc */
  async statusDetails(inspection: HoldInspection): Promise<{ hold: Record<string, unknown> }> {
    const o = inspection.observed as QueueObservation;
    const s = this.spec;
    const bound = listBoundQueues(defaultNetns()).find((e) => e.queue === s.queueNum);
    return {
      hold: {
        queueNum: s.queueNum,
        maxlen: s.maxlen,
        ports: s.ports,
        addrs: s.addrs,
        table: s.table,
        verdict: o.verdict,
        bound: bound ? { portId: bound.portId, queued: bound.queued, dropped: bound.queueDropped + bound.userDropped } : null,
        ...(bound && { held: bound.queued }),
        ...(!bound && this.record && { ...holderGone(this.id, s.queueNum, this.stateDir) }),
        ...(bound && { ...holderStopped(bound.portId, bound.queued) }),
      },
    };
  }

  /** @inheritdoc */
  checkDetails(): Record<string, unknown> {
    return { queueNum: this.spec.queueNum, addrs: this.spec.addrs, ...(this.scope === 'inbound' && { ports: this.spec.ports }) };
  }

  /** @inheritdoc */
  setupCommand(): string {
    const s = this.spec;
    const q = s.queueNum === DEFAULT_QUEUE_NUM ? '' : ` --queue-num ${s.queueNum}`;
    if (s.scope === 'local') return `synplug setup --via queue --addr ${s.addrs[0]}${q}`;
    return `synplug setup --via queue --inbound ${s.dev} ${s.ports.map((p) => `--port ${p}`).join(' ')}${s.addrs.map((a) => ` --addr ${a}`).join('')}${q}`;
  }

  /** @inheritdoc */
  setupOptions(): SetupOptions {
    const s = this.spec;
    const queue = { num: s.queueNum, maxlen: s.maxlen };
    if (s.scope === 'local') return { via: 'queue', addr: s.addrs[0], queue };
    return { via: 'queue', inbound: { dev: s.dev, ports: [...s.ports], addrs: [...s.addrs] }, queue };
  }

  /** @inheritdoc */
  setupResult(entry: HoldRecord): Partial<SetupResult> {
    const r = entry as QueueHoldRecord;
    return {
      dev: r.dev,
      ownsAddress: r.addedAddress,
      queue: { scope: r.scope, num: r.queueNum, maxlen: r.maxlen, verdict: r.verdict, table: r.table, ports: r.ports, addrs: r.addrs },
    };
  }
}

/** What one plan of the queue hold's pieces shares. */
interface QueuePlan {
  /** the address is synplug's (setup added it: recorded, or found with synplug's mark) */
  addedAddress: boolean;
  /** the verdict expression the rules use */
  verdict: 'native' | 'compat';
  /** the arming step, once made (the chain and its rules share it) */
  arm?: SetupStep;
  /** why the teardown kept the chain (packets queued): the table, whose removal would unregister it, stays too */
  chainKept?: string;
}

/**
 * How long the chain and its SYN rules live (see {@link PieceLifetime}):
 * armed. A base chain's hook is on the path of every packet of its hook (all
 * output, or all prerouting), and the inbound rule cost 2.4 % of the CPU per
 * incoming connection outside a hold (bench/README.md). The table alone
 * (permanent) hooks nothing.
 */
export const QUEUE_RULE_LIFETIME: PieceLifetime = 'armed';

/** The queue hold's pieces (see {@link QueueHold.pieces}). */
function queuePieces(h: QueueHold, sockets: HoldSockets): HoldPieces<QueueObservation, QueuePlan> {
  const s = h.spec;
  const t = { family: 'inet', name: s.table };
  const ref = { family: 'inet', table: s.table };
  const chainRef = { ...ref, name: QUEUE_CHAIN };
  const verdictOf = (o: QueueObservation): QueuePlan['verdict'] => (o.verdict === 'none' ? 'native' : o.verdict);
  // its rules first: a kernel before recursive chain deletion refuses a chain with rules (EBUSY)
  const chainRemoval = () => new NftBatch().flushChain({ ...ref, chain: QUEUE_CHAIN }).deleteChain(chainRef);
  const deleteChain = async () => void (await chainRemoval().commit(sockets.nft));
  /** The arming: one batch takes the chain and its rules to what is wanted (the table is there: setup made it). */
  const armStep = (o: QueueObservation, p: QueuePlan): SetupStep => {
    if (p.arm) return p.arm;
    const pieces = h.judge(o);
    const b = new NftBatch();
    const chain = o.table.chains.find((c) => c.name === QUEUE_CHAIN);
    if (chain && pieces.chain.status !== 'ok') b.deleteChain(chainRef);
    if (!chain || pieces.chain.status !== 'ok') {
      b.addChain({ ...chainRef, type: 'filter', hook: s.scope === 'local' ? 'output' : 'prerouting', prio: C.NF_IP_PRI_RAW, policy: 'accept' });
    } else for (const r of o.table.rules) if (r.chain === QUEUE_CHAIN && r.handle !== undefined) b.deleteRule({ ...ref, chain: QUEUE_CHAIN, handle: r.handle });
    for (const expr of queueRules(s, p.verdict)) b.addRule({ ...ref, chain: QUEUE_CHAIN, expr });
    p.arm = {
      what: `nftables: ${b.ops.map((x) => x.what).join('; ')}`,
      run: async () => void (await b.commit(sockets.nft)),
      undo: { what: `removed chain ${QUEUE_CHAIN} of nftables table inet ${s.table}`, run: deleteChain },
    };
    return p.arm;
  };
  const table: Piece<QueueObservation, QueuePlan> = {
    key: 'table',
    lifetime: 'permanent',
    judge: (o) => h.judge(o).table,
    add(o, st) {
      if (st.status === 'ok') return [];
      // another state directory's table: refused before any step (refuseClash), and never replaced here
      const owner = tableOwner(o, s.queueNum);
      if (owner.is === 'other') throw new SynplugError(`nftables table inet ${s.table}: ${h.judge(o).table.detail}`, 'foreign-state');
      // one without synplug's mark is someone else's, whatever its name: never deleted (it was replaced whole, with
      // what was in it: a fresh attack's SEVERE 5)
      if (owner.is === 'unmarked')
        throw new SynplugError(
          `nftables table inet ${s.table} exists and does not carry synplug's mark (its comment): it was not made by synplug setup, which never replaces it. If nothing in it is yours, remove it ('nft delete table inet ${s.table}') and run setup again. Nothing was changed`,
          'foreign-state',
        );
      // one of an earlier synplug's (its mark without this directory's) is replaced by one with it; the mark is the
      // state directory's, which exists when the step runs (setup makes it, with its lock file, before the first step)
      const batch = (mark: string) => {
        const b = new NftBatch();
        if (o.table.table) b.deleteTable(t);
        return b.addTable({ ...t, comment: queueTableComment(s.queueNum, mark) });
      };
      return {
        what: `nftables: ${batch('0'.repeat(16))
          .ops.map((x) => x.what)
          .join('; ')}`,
        run: async () => {
          const mark = stateDirMark(h.stateDirPath);
          if (mark === undefined) throw new SynplugError(`the state directory ${h.stateDirPath} is gone: its mark cannot be put on the table`, 'failure');
          await batch(mark).commit(sockets.nft);
        },
        ...(!o.table.table && {
          undo: { what: `removed nftables table inet ${s.table}`, run: async () => void (await new NftBatch().deleteTable(t).commit(sockets.nft)) },
        }),
      };
    },
    async remove(o, p, out) {
      const owner = tableOwner(o, s.queueNum);
      if (owner.is === 'unmarked') out.kept.push(`nftables table inet ${s.table}: it does not carry synplug's mark (not made by synplug setup)`);
      else if (owner.is === 'other') out.kept.push(`nftables table inet ${s.table}: ${owner.detail}`);
      else if (p.chainKept)
        // deleting the table would unregister its base chain, which drops every packet queued in the namespace
        throw new SynplugError(
          `nftables table inet ${s.table} was not removed: ${p.chainKept}. Nothing else of the hold was removed; run teardown again once they are released`,
          'foreign-state',
        );
      // one a teardown running at the same moment removed is done (ENOENT), and not said as removed here
      else if (o.table.table && (await removeIfThere(() => new NftBatch().deleteTable(t).commit(sockets.nft))))
        out.removed.push(`nftables table inet ${s.table}`);
    },
  };
  const armed = (key: 'chain' | 'rules'): Piece<QueueObservation, QueuePlan> => ({
    key,
    lifetime: QUEUE_RULE_LIFETIME,
    judge: (o) => h.judge(o)[key],
    add: (o, st, p) => {
      if (st.status === 'ok') return [];
      // never in another state directory's table (its hold, its chain); a hold in one is not set up (check says so)
      if (tableOwner(o, s.queueNum).is === 'other') throw new SynplugError(`nftables table inet ${s.table}: ${h.judge(o).table.detail}`, 'foreign-state');
      return [armStep(o, p)];
    },
  });
  const chain: Piece<QueueObservation, QueuePlan> = {
    ...armed('chain'),
    // its rules go with it; a chain in a table without synplug's mark is left (the table's removal says why)
    async remove(o, p, out) {
      if (!o.table.table || !['ours', 'earlier'].includes(tableOwner(o, s.queueNum).is) || !o.table.chains.some((c) => c.name === QUEUE_CHAIN)) return;
      // Unregistering a base chain drops every packet queued in the namespace (another hold's, another software's).
      // And a queue still bound after its holder's unbind (just after its answer) holds through this chain: another
      // state directory's hold, which a release or a status through a directory without a record must never end.
      if (!(await nothingQueuedWithin(1000, defaultNetns(), s.queueNum))) {
        const queued = queuedPackets(defaultNetns());
        p.chainKept = queued
          ? `${queued} packet(s) are queued in this namespace (another hold's SYNs?), which removing its base chain would drop`
          : `queue ${s.queueNum} is held by another process (a hold of another state directory?)`;
        out.kept.push(`chain ${QUEUE_CHAIN} of nftables table inet ${s.table}: ${p.chainKept}`);
        return;
      }
      if (await removeIfThere(deleteChain)) out.removed.push(`chain ${QUEUE_CHAIN} of nftables table inet ${s.table} (with its SYN rules)`);
    },
    // the watchdog's removal: the chain deleted with its rules (one already gone is fine)
    removeSteps: () => [
      {
        what: `delete chain inet ${s.table} ${QUEUE_CHAIN}`,
        phase: 'disarm',
        protocol: NETLINK_NETFILTER,
        messages: chainRemoval().messages().map(hexMessage),
        ignoreErrno: [osConstants.errno.ENOENT],
        // after the holder's release (protect's death ends its lease there too)
        whenNothingQueuedMs: 3000,
        whenQueueUnbound: s.queueNum,
      },
    ],
  };
  // An inbound hold's device: setup refuses one that does not exist; one deleted since leaves the hold holding nothing.
  const device: Piece<QueueObservation, QueuePlan> = { key: 'device', lifetime: 'permanent', judge: (o) => h.judge(o).device, add: () => undefined };
  const dev = { ifindex: h.ifindex, dev: s.dev };
  const recordedAddress = addressPiece<QueueObservation, QueuePlan>(sockets.route, dev, s.addrs[0], h.record, (o) => h.judge(o).address);
  const address: Piece<QueueObservation, QueuePlan> = {
    ...recordedAddress,
    // the address of a hold whose table another state directory's mark is on is that directory's, whatever a record here says
    async remove(o, p, out) {
      if (tableOwner(o, s.queueNum).is !== 'other') return recordedAddress.remove?.(o, p, out);
      if (o.hasAddress)
        out.kept.push(`address ${s.addrs[0]} on ${s.dev}: the address of another state directory's queue hold (its table carries that directory's mark)`);
    },
  };

  return {
    list: [...(s.scope === 'local' ? [address] : [device]), table, chain, armed('rules')],
    listOrder: QUEUE_PIECES,
    observe: () => h.observe(),
    // An address with synplug's mark that no record lists: an earlier setup added it and was killed before recording it.
    begin: (o) => ({ addedAddress: (h.record?.addedAddress ?? false) || o.addressMarked, verdict: verdictOf(o) }),
    markOwner(o) {
      const owner = tableOwner(o, s.queueNum);
      if (owner.is === 'ours') return tableIsMarked(o.table.table!) === undefined ? undefined : { here: true };
      if (owner.is !== 'other') return undefined;
      const removeBy = [`'nft delete table inet ${s.table}'`, ...(o.addressMarked ? [`'ip addr del ${s.addrs[0]} dev ${s.dev}'`] : [])].join(' and ');
      const m = queueTableMark(o.table.table?.comment)!;
      const detail = `the table's comment names queue ${m.queueNum} and state directory mark ${m.stateMark}; this directory's is ${o.stateMark ?? 'none: it does not exist yet'}`;
      return { here: false, detail, removeBy };
    },
    // any state directory's (markOwner says whose)
    marked: (o) => [
      ...(o.table.table && tableIsMarked(o.table.table) === true ? [`nftables table inet ${s.table}`] : []),
      ...(o.addressMarked ? [`address ${s.addrs[0]} on ${s.dev}`] : []),
    ],
    record: (p): QueueHoldRecord => ({
      mode: 'queue',
      dev: s.dev,
      createdAt: h.record?.createdAt ?? Date.now(),
      scope: s.scope,
      addrs: [...s.addrs],
      ports: [...s.ports],
      queueNum: s.queueNum,
      maxlen: s.maxlen,
      table: s.table,
      verdict: p.verdict,
      addedAddress: p.addedAddress,
    }),
    async letGo(_o, out) {
      if (await h.releaseQueue().catch(() => false)) out.removed.push(`released queue ${s.queueNum}`);
      // the socket of a holder that was killed (it could not remove it), else left in the state directory for good
      await removeStaleHolderSocket(h.stateDirPath, s.queueNum).catch(() => false);
    },
  };
}

/**
 * A queue hold that a live lease of its state directory holds while nobody
 * binds its queue: its holder process ended during the hold (killed?), so
 * the HOLDING that plug.json and the lease say is not so.
 * @returns `{ holderGone }` with the sentence, or nothing (no live lease holds it; the records unreadable: status says why elsewhere)
 */
function holderGone(id: string, queueNum: number, stateDir: string): { holderGone?: string } {
  let leases: Lease[];
  try {
    leases = liveLeases(new StateStore(stateDir)).filter((l) => l.holds.includes(id));
  } catch {
    return {};
  }
  if (!leases.length) return {};
  return {
    holderGone: `NOT holding, though ${leases.map((l) => `the lease of ${l.owner} pid ${l.pid}`).join(' and ')} ${leases.length > 1 ? 'hold' : 'holds'} it: nobody binds queue ${queueNum}, so its holder process ended during the hold (killed?); the kernel dropped the SYNs it held (their clients connect when they retransmit) and later SYNs pass unheld. The lease ends with its owner${leases.some((l) => l.owner === 'manual') ? " ('synplug release' ends a manual plug's now)" : ''}`,
  };
}

/**
 * A queue whose bound socket's process is stopped (state T or t): it cannot
 * release what it holds; the next release takes its socket over
 * (leases-holder.ts releaseThroughHolder).
 * @returns `{ holderStopped }` with the sentence, or nothing
 */
function holderStopped(portId: number, queued: number): { holderStopped?: string } {
  const stopped = netlinkSocketOwners(portId, defaultNetns()).filter((o) => ['T', 't'].includes(processState(o.pid) ?? ''));
  if (!stopped.length) return {};
  return {
    holderStopped: `its holder, process ${stopped.map((o) => `${o.pid} (${o.command})`).join(', ')}, is STOPPED (state ${processState(stopped[0].pid)}: SIGSTOP, a freezer or a debugger): it cannot release the ${queued} SYN(s) queued. The next release (protect's end or --max-hold, 'synplug release', a watchdog) takes its socket over, releases them and ends it`,
  };
}

/** `status`' line for a queue hold: its state, what it holds, and who holds the queue now. */
function queueStatusLines(h: HoldStatus, stateWord: (state: string) => string): string[] {
  const who = h.bound
    ? `HELD now by netlink port ${h.bound.portId} (${h.bound.queued} SYN(s) queued, ${h.bound.dropped} dropped)`
    : 'nobody holds it (SYNs bypass)';
  return [
    `queue hold ${h.id} on ${h.dev}: ${stateWord(h.state)}; SYNs${h.ports?.length ? ` to port ${h.ports.join(',')}` : ''}${h.addrs?.length ? ` to ${h.addrs.join(', ')}` : ''} go to queue ${h.queueNum} (${h.verdict === 'compat' ? 'NFQUEUE target' : 'queue expression'}, table inet ${h.table}); ${who}`,
    ...(h.holderGone ? [`  ${h.holderGone}`] : []),
    ...(h.holderStopped ? [`  ${h.holderStopped}`] : []),
  ];
}

/** The chain's state: a filter chain at the hook of the scope, priority raw, policy accept. */
function chainPiece(c: NftChain | undefined, scope: HoldScope): PieceState {
  const hook = scope === 'local' ? 'output' : 'prerouting';
  const piece = `chain ${QUEUE_CHAIN} (type filter hook ${hook} priority raw)`;
  if (!c) return { piece, status: 'missing' };
  const ok = c.type === 'filter' && c.hook === hook && c.prio === C.NF_IP_PRI_RAW && c.policy === 'accept';
  return ok ? { piece, status: 'ok' } : { piece, status: 'different', detail: `type ${c.type} hook ${c.hook} priority ${c.prio}` };
}

/** What is missing for the queue itself: nfnetlink_queue (its /proc file shows it). */
function nfqueueMissing(): ModulePiece[] {
  return existsSync(NFQUEUE_PROC) ? [] : [{ module: 'nfnetlink_queue', what: 'netfilter queues (NFQUEUE)' }];
}

/** A queue hold's id: `queue` (local clients) or `queue:DEV` (clients arriving on DEV): never a plug hold's. */
export function queueHoldId(scope: HoldScope, dev: string): string {
  return scope === 'local' ? 'queue' : `queue:${dev}`;
}

/** The largest queue maxlen (NFQA_CFG_QUEUE_MAXLEN is a u32), packets. */
const MAX_QUEUE_MAXLEN = 0xffffffff;

/** Whether a record entry has every field a queue hold's record has, of the right type. */
export function isQueueRecord(r: Record<string, unknown>): boolean {
  const u16 = (v: unknown) => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 0xffff;
  return (
    (r.scope === 'local' || r.scope === 'inbound') &&
    Array.isArray(r.addrs) &&
    r.addrs.every((a) => typeof a === 'string' && isIP(a) !== 0) &&
    (r.scope === 'inbound' || r.addrs.length === 1) &&
    Array.isArray(r.ports) &&
    r.ports.every((p) => Number.isInteger(p) && p >= 1 && p <= 65535) &&
    (r.scope === 'local' || r.ports.length > 0) &&
    u16(r.queueNum) &&
    Number.isInteger(r.maxlen) &&
    (r.maxlen as number) >= 1 &&
    typeof r.table === 'string' &&
    (r.verdict === 'native' || r.verdict === 'compat') &&
    typeof r.addedAddress === 'boolean'
  );
}

/**
 * What setup would refuse in a whole queue record entry ({@link isQueueRecord}),
 * naming the field: a table not synplug's queue table, a local hold not on lo
 * or on a loopback address, an inbound hold on lo.
 * @returns the sentence, or undefined when setup could have written it
 */
export function queueRecordRefusal(r: Record<string, unknown>): string | undefined {
  if ((r.maxlen as number) > MAX_QUEUE_MAXLEN)
    return `'maxlen' is ${String(r.maxlen)}: not a packet count (1-${MAX_QUEUE_MAXLEN}, as setup takes --queue-maxlen)`;
  const table = String(r.table);
  if (!isOurTable(table))
    return `'table' is '${table.slice(0, 80)}': synplug's queue holds are in the nftables table ${QUEUE_TABLE} or ${QUEUE_TABLE}_DEV, never another software's table`;
  // exactly the table setup writes for the entry (specOf): another hold's table, or one that does not exist, would
  // hide whose the hold's address is from teardown (tableOwner), which could then remove another directory's address
  const own = queueTableOf(r.scope === 'inbound' ? 'inbound' : 'local', String(r.dev));
  if (table !== own)
    return `'table' is '${table.slice(0, 80)}': setup puts a${r.scope === 'inbound' ? 'n inbound queue hold of that device' : ' local queue hold'} in the nftables table ${own.slice(0, 80)}, no other`;
  if (r.scope === 'inbound')
    return r.dev === 'lo'
      ? "'dev' is 'lo': an inbound queue hold is never on the loopback device (setup --via queue without --inbound holds local connections)"
      : undefined;
  if (r.dev !== 'lo') return `'dev' is '${String(r.dev).slice(0, 80)}': a local queue hold is on lo`;
  try {
    refuseLoopback(canonicalAddress(String((r.addrs as unknown[])[0])));
  } catch (e) {
    if (e instanceof UsageError) return `'addrs': ${e.message}`;
    throw e;
  }
  return undefined;
}

/**
 * Check the queue options.
 * @throws {UsageError} a queue number outside 0-65535, a maxlen below 1
 */
function checkQueueOptions(q: QueueOptions | undefined): void {
  if (q?.num !== undefined && !(Number.isInteger(q.num) && q.num >= 0 && q.num <= 0xffff))
    throw new UsageError(`--queue-num: ${q.num} is not a queue number (0-65535)`);
  if (q?.maxlen !== undefined && !(Number.isInteger(q.maxlen) && q.maxlen >= 1 && q.maxlen <= MAX_QUEUE_MAXLEN))
    throw new UsageError(`--queue-maxlen: ${q.maxlen} is not a packet count (1-${MAX_QUEUE_MAXLEN})`);
}

/**
 * The spec of the hold `setup --via queue` builds.
 * @throws {UsageError} bad options
 */
function specOf(opts: SetupOptions, config: GuardConfig): Omit<QueueSpec, 'ifindex' | 'queueNum'> & { queueNum?: number } {
  checkQueueOptions(opts.queue);
  const maxlen = opts.queue?.maxlen ?? DEFAULT_QUEUE_MAXLEN;
  if (!opts.inbound) {
    refuseLoopback(config.addr);
    return {
      scope: 'local',
      dev: 'lo',
      addrs: [canonicalAddress(config.addr)],
      ports: [],
      maxlen,
      table: queueTableOf('local', 'lo'),
      queueNum: opts.queue?.num,
    };
  }
  const i = opts.inbound;
  if (typeof i.dev !== 'string' || i.dev === '') throw new UsageError('--inbound: give the device connections arrive on');
  if (!Array.isArray(i.ports) || !i.ports.length) throw new UsageError('--inbound needs at least one --port PORT');
  for (const p of i.ports) if (!(Number.isInteger(p) && p >= 1 && p <= 65535)) throw new UsageError(`--port: '${p}' is not a TCP port (1-65535)`);
  const addrs = (i.addrs ?? []).map((a) => canonicalAddress(a));
  return { scope: 'inbound', dev: i.dev, addrs, ports: [...new Set(i.ports)], maxlen, table: queueTableOf('inbound', i.dev), queueNum: opts.queue?.num };
}

/** The ifindex of a device, refusing what the hold cannot use. */
async function deviceOf(sockets: HoldSockets, dev: string, scope: HoldScope): Promise<{ name: string; ifindex: number }> {
  const found = await resolveInboundDevice(sockets.route, dev);
  if (!found) throw new NoDeviceError(dev, undefined, scope === 'inbound' ? '--inbound' : undefined);
  if (scope === 'inbound' && found.name === 'lo')
    throw new UsageError(`--inbound ${dev}: a loopback device; hold local connections with 'synplug setup --via queue' without --inbound`);
  return found;
}

/** The default state directory when it carries this mark (a queue table's comment names its directory by mark only). */
function markedDefaultDir(mark: string): string | undefined {
  try {
    const dir = defaultStateDir();
    return stateDirMark(dir) === mark ? dir : undefined;
  } catch {
    return undefined;
  }
}

/** The queue mode: local clients' SYNs (hook output) or those arriving on a device (hook prerouting), held in a netfilter queue. */
export const queueMode: HoldMode = {
  name: 'queue',
  via: 'queue',
  scopes: ['local', 'inbound'],
  isRecord: isQueueRecord,
  recordRefusal: queueRecordRefusal,
  addrsOf: (r: HoldRecord) => (r as QueueHoldRecord).addrs,
  idForms: [queueHoldId('local', ''), queueHoldId('inbound', 'DEV')],
  deviceOfId(id: string): string | undefined {
    if (id === queueHoldId('local', '')) return 'lo';
    const prefix = queueHoldId('inbound', '');
    return id.startsWith(prefix) ? id.slice(prefix.length) : undefined;
  },
  describe(h) {
    const local = (h.scope ?? (h.id === queueHoldId('local', h.dev) ? 'local' : 'inbound')) === 'local';
    const q = h.queueNum === undefined || h.queueNum === DEFAULT_QUEUE_NUM ? '' : ` --queue-num ${h.queueNum}`;
    const setup = local
      ? `synplug setup --via queue${h.addrs?.length ? ` --addr ${h.addrs[0]}` : ''}${q}`
      : `synplug setup --via queue --inbound ${h.dev} ${h.ports?.length ? h.ports.map((p) => `--port ${p}`).join(' ') : '--port PORT...'}${(h.addrs ?? []).map((a) => ` --addr ${a}`).join('')}${q}`;
    return {
      label: local ? 'local queue hold' : `inbound queue hold on ${h.dev}`,
      clients: local ? (h.addrs?.length ? `to ${h.addrs.join(', ')}` : "to the queue hold's address") : `arriving on ${h.dev}`,
      setup,
      top: false,
      fromRecord: true,
      status: queueStatusLines,
    };
  },
  setupHead(r: SetupResult): string {
    const q = r.queue;
    if (!q) return `synplug queue hold ${r.hold}${r.changed ? ' set up:' : ' already set up; nothing to change'}`;
    const whose =
      q.scope === 'local'
        ? `SYNs to ${q.addrs.join(', ')} from this host`
        : `SYNs arriving on ${r.dev} to port ${q.ports.join(',')}${q.addrs.length ? ` (dst ${q.addrs.join(', ')})` : ''}`;
    const what = `${whose}, held in netfilter queue ${q.num} (maxlen ${q.maxlen}; rule in table inet ${q.table}, ${q.verdict === 'native' ? "nft's queue expression" : 'the NFQUEUE target through nft_compat'}; bypass while nobody holds)`;
    return r.changed ? `synplug queue hold set up: ${what}:` : `synplug queue hold already set up: ${what}; nothing to change`;
  },
  async open(sockets: HoldSockets, config: GuardConfig, record?: HoldRecord): Promise<Hold> {
    if (record?.mode !== 'queue') throw new SynplugError('the queue mode opens a hold from its setup record only (setup --via queue makes one)');
    const r = record as QueueHoldRecord;
    const found = await resolveInboundDevice(sockets.route, r.dev);
    const spec: QueueSpec = {
      scope: r.scope,
      dev: r.dev,
      ifindex: found?.ifindex ?? 0,
      addrs: r.addrs,
      ports: r.ports,
      queueNum: r.queueNum,
      maxlen: r.maxlen,
      table: r.table,
    };
    return new QueueHold(sockets, spec, r, config.stateDir);
  },
  async probeSupport(sockets: HoldSockets, config: GuardConfig) {
    const h = new QueueHold(
      sockets,
      {
        scope: 'local',
        dev: 'lo',
        ifindex: 1,
        addrs: [],
        ports: [],
        queueNum: DEFAULT_QUEUE_NUM,
        maxlen: 1,
        table: QUEUE_TABLE,
      },
      undefined,
      config.stateDir,
    );
    return h.probeSupport();
  },
  validate(opts: SetupOptions, config: GuardConfig): void {
    specOf(opts, config);
  },
  async openForSetup(sockets: HoldSockets, config: GuardConfig, opts: SetupOptions, record: SetupRecord | undefined) {
    const s = specOf(opts, config);
    const dev = await deviceOf(sockets, s.dev, s.scope);
    const id = queueHoldId(s.scope, dev.name);
    const rec = record?.holds[id]?.mode === 'queue' ? (record.holds[id] as QueueHoldRecord) : undefined;
    const queueNum = s.queueNum ?? rec?.queueNum ?? DEFAULT_QUEUE_NUM;
    const table = queueTableOf(s.scope, dev.name);
    return { hold: new QueueHold(sockets, { ...s, dev: dev.name, ifindex: dev.ifindex, queueNum, table }, rec, config.stateDir) };
  },
  async select(sockets: HoldSockets, record: SetupRecord | undefined, dev: string, refuse = true) {
    const found = await resolveInboundDevice(sockets.route, dev);
    const name = found?.name ?? dev;
    // The record keys the hold by the device's name at setup: found by that name, else by the name given (a device gone since).
    const id = [queueHoldId('inbound', name), queueHoldId('inbound', dev)].find((x) => record?.holds[x]?.mode === 'queue') ?? queueHoldId('inbound', name);
    if (refuse && !record?.holds[id]) await deviceOf(sockets, dev, 'inbound'); // no record names it: a device setup would refuse is an error
    return { id, dev: name, ...(found && { ifindex: found.ifindex }) };
  },
};
