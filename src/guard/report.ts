/**
 * The reload's report: what a protect's hold held, and what the reload still
 * lost, counted for what is held only (never namespace-wide guesses).
 *
 * - `refused` and `reset`: counters in an nftables table of synplug's own
 *   (`inet synplug_report`), one base chain at the output hook counting the
 *   RSTs that leave what is held (the held addresses as source, the held
 *   ports as source port), one pair of rules per held address and port:
 *   ```
 *   ip saddr A tcp flags & (rst|ack) == rst|ack tcp sequence 0 counter comment "refused A *"
 *   ip saddr A tcp flags & rst == rst counter comment "rst A *"
 *   ```
 *   The chain exists only around protects ({@link REPORT_PRIORITY},
 *   {@link retireReportChain}): a base chain runs for every packet of its
 *   hook, and this one cost 5.7-7.2 % of the CPU per KiB of a bulk stream
 *   received (its ACKs leave through output) when it stayed set up
 *   (bench/README.md). Each protect adds what it lacks before the hold (at
 *   the hook's last priority: {@link REPORT_PRIORITY}), reads
 *   the counters before and after, and the last one removes the chain, once
 *   nothing is queued in the namespace: removing a base chain makes the
 *   kernel drop every packet waiting in a netfilter queue there
 *   (nf_queue_nf_hook_drop). The table stays; alone it hooks nothing.
 *   A RST answering a SYN carries ACK and sequence 0 (RFC 793: no ACK in the
 *   segment, so SEQ=0, ACK=SEG.SEQ+SEG.LEN); every other RST from what is
 *   held resets a connection (`reset` = all RSTs - refused). A local hold
 *   holds an address on any port, and its local clients' own RSTs leave
 *   that address too: its resets are counted from the ports of its
 *   listeners before the hold (none: not counted, said why).
 * - `listenerDrops`: the listeners' own drop counts (sock_diag
 *   SK_MEMINFO_DROPS), after minus before, by socket inode (a new listener
 *   counts from 0), of what is held only ({@link listenerCounted}): the
 *   held address's own listeners (any port) for a local hold, never a
 *   wildcard one; the held ports' (and addresses') for an inbound hold.
 * - `heldSyns`, `dropped`, `holdMs`: the holds' own counters (PlugStats), given by the window.
 *
 * Armed before the hold; read after the release, ending at most
 * {@link REPORT_WINDOW_MS} after it (once the command has exited, as soon as
 * the counters are quiet for {@link REPORT_QUIET_MS}). It never delays the
 * release: it only delays protect's own exit.
 *
 * @module
 */
import { NetlinkConnection } from '../netlink/connection.js';
import { SynplugError } from '../netlink/errors.js';
import { constants as osConstants } from 'node:os';
import { NETLINK_NETFILTER, NETLINK_SOCK_DIAG } from '../netlink/message.js';
import { defaultNetns } from '../netlink/netns.js';
import { nothingQueuedWithin } from '../netlink/nfqueue.js';
import { listTcpListeners, listenerAccepts, type TcpListener } from '../netlink/sockdiag.js';
import { openNftables } from '../iptables/index.js';
import { NftBatch } from '../iptables/batch.js';
import { listRules } from '../iptables/rule.js';
import { getTable } from '../iptables/table.js';
import { queuedPackets } from '../netlink/nfqueue.js';
import { listChains } from '../iptables/chain.js';
import { hexMessage, type WatchdogStep } from './watchdog.js';
import { leaseLive, recordedLeases, withLeaseLock } from './leases.js';
import type { StateStore } from './state.js';
import { removeIfThere, REPORT_TABLE_COMMENT, tableIsMarked } from './teardown-marks.js';
import { stateDirMark } from './state-fs.js';
import { parseAddress } from '../iptables/validate.js';
import * as C from '../iptables/constants.js';
import type { Expr } from '../iptables/expr/index.js';

/** synplug's table of RST counters. */
export const REPORT_TABLE = 'synplug_report';
/** How long teardown waits for the packets queued in the namespace to go before it removes the report's base chain, ms. */
export const REPORT_REMOVAL_WAIT_MS = 3000;
/** Its chains' name, before each state directory's mark ({@link reportChainName}). */
export const REPORT_CHAIN = 'rst';

/**
 * The counter chain of one state directory (hook output, priority
 * {@link REPORT_PRIORITY}; it exists only around that directory's protects):
 * `rst-<the directory's mark>` (state-fs.ts's `stateDirMark`), so that the
 * protects of another state directory in the namespace never remove or
 * count with it; `rst` for a directory that does not exist.
 */
export function reportChainName(stateDir: string): string {
  const mark = stateDirMark(stateDir);
  return mark === undefined ? REPORT_CHAIN : `${REPORT_CHAIN}-${mark}`;
}
/**
 * The chain's priority: the output hook's last (NF_IP_PRI_LAST, INT_MAX), so
 * that adding it moves no other hook: the kernel inserts a new hook before
 * the first one of the same or a higher priority, and a packet waiting in a
 * netfilter queue resumes by its hook's index when it is let go
 * (nf_reinject). On 6.18 a chain added at the queue chain's own priority
 * during a hold cost the held SYN nothing either (test/live/guard-queue);
 * last is the order that needs no such fact.
 */
export const REPORT_PRIORITY = 2147483647;
/** How long the last protect waits for nothing to be queued before it removes the chain, ms. */
export const REPORT_RETIRE_WAIT_MS = 3000;
/** Counting ends at most this long after the release, ms. */
export const REPORT_WINDOW_MS = 1000;
/** Once the command has exited: counting ends when the counters did not change for this long, ms. */
export const REPORT_QUIET_MS = 100;

/** What a hold holds: destination addresses (none: any) and TCP ports (none: any). */
export interface HeldTraffic {
  /** IPv4/IPv6 addresses; empty: every address */
  addrs: readonly string[];
  /** TCP ports; empty: every port */
  ports: readonly number[];
}

/**
 * The report of one reload (`protect --json`'s `report`). Counts are
 * packets or connections; null when it could not be counted (then `lossless`
 * is null too, unless something was lost).
 */
export interface ReloadReport {
  /** SYN packets the holds held, then released: a client's retransmissions during the hold count each (not connections) */
  heldSyns: number;
  /** hold ack to release ack, ms */
  holdMs: number;
  /**
   * held SYNs lost in the hold itself (over a queue's maxlen, a plug's limit); null when the count was lost with its
   * counter (a queue's holder process died during the hold: `failed` says so, and `lossless` is false)
   */
  dropped: number | null;
  /**
   * SYN packets to what is held answered with a RST (released before a listener was there): a client's retransmitted
   * SYNs count each (an inbound hold queues them too), so a refused connection may count several times
   */
  refused: number | null;
  /** established or queued connections of what is held reset (a closing listener's queue) */
  reset: number | null;
  /**
   * packets dropped by the held ports' listeners (SK_MEMINFO_DROPS), after minus before: a release burst over the
   * backlog, or released retransmissions of a client that gave up during a long hold (not connections)
   */
  listenerDrops: number | null;
  /** true only when dropped, refused, reset and listenerDrops are all 0; null when one could not be counted and none is above 0 (false with `failed`) */
  lossless: boolean | null;
  /** why a count is null, one sentence each (absent when everything was counted) */
  uncounted?: string[];
  /**
   * How the hold itself failed, one sentence each (absent when it did not): SYNs it held were dropped uncounted
   * (a queue's holder process died during the hold; its release verdict was refused). `lossless` is then false.
   */
  failed?: string[];
}

/** The hold's own numbers, which the window gives. */
export interface HoldCounts {
  heldSyns: number;
  holdMs: number;
  /** null: lost with its counter (see {@link ReloadReport.dropped}) */
  dropped: number | null;
  /** how the hold failed, one sentence each (see {@link ReloadReport.failed}) */
  failed?: readonly string[];
}

/** One reading of the counters. */
interface Reading {
  rst: number;
  refused: number;
  rstRefused: number;
  listeners: Map<number, number>;
}

/** The counting of one reload, armed before the hold. */
export interface ReportCounting {
  /** Say the release is done (call right after it; never awaits anything). */
  released(): void;
  /** The report: the last reading (at most {@link REPORT_WINDOW_MS} after `released`); closes everything. Never throws. */
  finish(hold: HoldCounts): Promise<ReloadReport>;
  /** Stop counting without a report (protect failed): closes everything. */
  abandon(): void;
  /**
   * Once this protect's lease is recorded (the last holder's end then keeps the chain): add the counters again if
   * another holder's end removed them since the arming, and read them anew. Never throws.
   */
  kept(): Promise<void>;
}

const REG = C.NFT_REG_1;
const cmp = (data: Buffer): Expr => ({ name: 'cmp', sreg: REG, op: 'eq', data: data.toString('hex') });
const u16 = (n: number): Buffer => Buffer.from([n >> 8, n & 0xff]);

/** The expressions matching TCP packets leaving one held address (any: undefined) and port (any: undefined). */
function fromHeld(addr: string | undefined, port: number | undefined): Expr[] {
  const e: Expr[] = [];
  if (addr !== undefined) {
    const ip = parseAddress(addr);
    const v4 = ip.version === 4;
    e.push(
      { name: 'meta', key: 'nfproto', dreg: REG },
      cmp(Buffer.from([v4 ? C.NFPROTO_IPV4 : C.NFPROTO_IPV6])),
      // saddr: IPv4 header offset 12, IPv6 offset 8
      { name: 'payload', dreg: REG, base: 'network', offset: v4 ? 12 : 8, len: ip.bytes.length },
      cmp(ip.bytes),
    );
  }
  e.push({ name: 'meta', key: 'l4proto', dreg: REG }, cmp(Buffer.from([6])));
  if (port !== undefined) e.push({ name: 'payload', dreg: REG, base: 'transport', offset: 0, len: 2 }, cmp(u16(port)));
  return e;
}

/** TCP flags & mask == value (TCP header offset 13; RST 0x04, ACK 0x10). */
function flags(mask: number, value: number): Expr[] {
  return [
    { name: 'payload', dreg: REG, base: 'transport', offset: 13, len: 1 },
    { name: 'bitwise', sreg: REG, dreg: REG, op: 'mask_xor', len: 1, mask: mask.toString(16).padStart(2, '0'), xor: '00' },
    cmp(Buffer.from([value])),
  ];
}

const RST = 0x04;
const ACK = 0x10;

/** What a counting rule's packets add to: `refused`, `rst` (every RST of the reset scope), `rstRefused` (the refused among those). */
export type CountKind = 'refused' | 'rst' | 'rstRefused';

/** The (address, port) pairs of held traffic (undefined: any). */
function pairsOf(held: readonly HeldTraffic[]): Array<[string | undefined, number | undefined]> {
  const pairs = new Map<string, [string | undefined, number | undefined]>();
  for (const h of held)
    for (const a of h.addrs.length ? h.addrs : [undefined]) for (const p of h.ports.length ? h.ports : [undefined]) pairs.set(`${a} ${p}`, [a, p]);
  return [...pairs.values()];
}

/**
 * The counting rules, each `{ comment, kinds, expr }`: per held (address,
 * port) pair a `refused` rule (RST|ACK, sequence 0); per pair of the reset
 * scope an `rst` rule (every RST) and its own refused rule. The reset scope
 * is `resetScope` when given, else `held`: a local hold holds an address on
 * any port, and its local clients' own RSTs leave that address too, so its
 * resets are counted only from its listeners' ports (armReport). Rules of
 * one comment are one rule (pairs held twice are counted once).
 */
export function reportRules(
  held: readonly HeldTraffic[],
  resetScope: readonly HeldTraffic[] = held,
): Array<{ comment: string; kinds: CountKind[]; expr: Expr[] }> {
  const rules = new Map<string, { comment: string; kinds: CountKind[]; expr: Expr[] }>();
  const add = (comment: string, kind: CountKind, expr: () => Expr[]) => {
    const r = rules.get(comment);
    if (r) r.kinds.push(kind);
    else rules.set(comment, { comment, kinds: [kind], expr: expr() });
  };
  const refusedExpr = (a: string | undefined, p: number | undefined): Expr[] => [
    ...fromHeld(a, p),
    ...flags(RST | ACK, RST | ACK),
    { name: 'payload', dreg: REG, base: 'transport', offset: 4, len: 4 },
    cmp(Buffer.alloc(4)),
    { name: 'counter', packets: 0, bytes: 0 },
  ];
  for (const [a, p] of pairsOf(held)) add(`refused ${a ?? '*'} ${p ?? '*'}`, 'refused', () => refusedExpr(a, p));
  for (const [a, p] of pairsOf(resetScope)) {
    add(`rst ${a ?? '*'} ${p ?? '*'}`, 'rst', () => [...fromHeld(a, p), ...flags(RST, RST), { name: 'counter', packets: 0, bytes: 0 }]);
    add(`refused ${a ?? '*'} ${p ?? '*'}`, 'rstRefused', () => refusedExpr(a, p));
  }
  return [...rules.values()];
}

/** The wildcard addresses a listener binds to accept every address of its family. */
const WILDCARDS: ReadonlySet<string> = new Set(['0.0.0.0', '::']);

/**
 * Whether a listener's drops are counted for what is held: for a hold of
 * addresses only (the local hold: any port), a listener bound to one of
 * them, never a wildcard one (it serves every other address too); for a
 * hold of ports, a listener on one of them that accepts a held address (any,
 * when it holds none), wildcard ones included (they serve the held ports).
 * @param l a listener, as sock_diag lists it
 * @param held what the holds hold
 */
export function listenerCounted(l: TcpListener, held: readonly HeldTraffic[]): boolean {
  return held.some((h) =>
    h.ports.length === 0
      ? h.addrs.length === 0 || (!WILDCARDS.has(l.address) && h.addrs.some((a) => listenerAccepts(l, a)))
      : h.ports.includes(l.port) && (h.addrs.length === 0 || h.addrs.some((a) => listenerAccepts(l, a))),
  );
}

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/**
 * Arm the counting of one reload: make the counting table and read the
 * listeners' drops, before the hold. Never throws: what cannot be counted is
 * reported as null with the reason.
 * @param held what the holds hold (empty: refused/reset/listenerDrops are not counted)
 */
export async function armReport(held: readonly HeldTraffic[], stateDir: string): Promise<ReportCounting> {
  const chain = reportChainName(stateDir);
  const uncounted: string[] = [];
  const table = { family: 'inet', name: REPORT_TABLE };
  let nft: NetlinkConnection | undefined;
  let diag: NetlinkConnection | undefined;
  let tableMade = false;
  /** the counters' table as armed: one removed or made anew since (a teardown meanwhile) counts nothing */
  let tableHandle: number | undefined;
  /** a reading failed (the table gone): refused and reset are not counted */
  let readFailed = false;
  // A hold of addresses on any port (the local hold): its resets are counted from its listeners' ports only.
  let resetScope: HeldTraffic[] = held.filter((h) => h.ports.length > 0);
  let resetCounted = true;
  if (held.length === 0) uncounted.push('no hold says what it holds: refused, reset and listener drops were not counted');
  else {
    try {
      diag = NetlinkConnection.open(NETLINK_SOCK_DIAG);
    } catch (e) {
      uncounted.push(`sock_diag could not be opened (${message(e)}): listener drops were not counted`);
    }
    for (const h of held.filter((x) => x.ports.length === 0)) {
      const ports = diag
        ? [...new Set((await listTcpListeners(diag).catch(() => [])).filter((l) => h.addrs.some((a) => listenerAccepts(l, a))).map((l) => l.port))]
        : [];
      if (ports.length === 0 || h.addrs.length === 0) {
        resetCounted = false;
        uncounted.push(
          `no listener for ${h.addrs.join(', ') || 'every address'} before the hold: resets were not counted (a local client's own RSTs leave that address too)`,
        );
      } else resetScope = [...resetScope, { addrs: h.addrs, ports }];
    }
    try {
      nft = openNftables();
      await (await missingCountersBatch(nft, held, resetScope, chain))?.batch.commit(nft);
      tableHandle = (await getTable(nft, table))?.handle;
      tableMade = true;
    } catch (e) {
      uncounted.push(
        e instanceof ForeignReportTable
          ? `${e.message}: refused and reset were not counted`
          : `the RST counters could not be set (${message(e)}): refused and reset were not counted`,
      );
    }
  }
  const kindsOf = new Map(reportRules(held, resetScope).map((r) => [r.comment, r.kinds]));

  const read = async (): Promise<Reading> => {
    const r: Reading = { rst: 0, refused: 0, rstRefused: 0, listeners: new Map() };
    if (nft && tableMade) {
      const now = await getTable(nft, table);
      if (!now || now.handle !== tableHandle) {
        readFailed = true;
        throw new Error(`the table inet ${REPORT_TABLE} of the RST counters was ${now ? 'made anew' : 'removed'} during the reload (a teardown meanwhile?)`);
      }
      // The first rule of each comment (two protects arming together may both have added one).
      const seen = new Set<string>();
      for (const rule of await listRules(nft, { family: 'inet', table: table.name, chain })) {
        const kinds = rule.comment !== undefined ? kindsOf.get(rule.comment) : undefined;
        const c = rule.expr.find((x) => x.name === 'counter') as { packets: number } | undefined;
        if (!kinds || !c || seen.has(rule.comment!)) continue;
        seen.add(rule.comment!);
        for (const k of kinds) r[k] += c.packets;
      }
      // Its rules gone (a manual release or a teardown retired the chain while this protect still counted): not 0.
      if (seen.size === 0 && kindsOf.size > 0) {
        readFailed = true;
        throw new Error(`the chain ${chain} of the RST counters was removed during the reload (a manual 'synplug release' or a teardown meanwhile?)`);
      }
    }
    if (diag) for (const l of await listTcpListeners(diag, { meminfo: true })) if (listenerCounted(l, held)) r.listeners.set(l.inode, l.drops ?? 0);
    return r;
  };
  const same = (a: Reading, b: Reading): boolean =>
    a.rst === b.rst &&
    a.refused === b.refused &&
    a.rstRefused === b.rstRefused &&
    a.listeners.size === b.listeners.size &&
    [...a.listeners].every(([k, v]) => b.listeners.get(k) === v);

  let before: Reading | undefined;
  try {
    before = await read();
  } catch (e) {
    uncounted.push(`the counters could not be read before the hold (${message(e)})`);
  }
  let releasedAt: number | undefined;
  let last: Reading | undefined;
  let final: Promise<Reading | undefined> | undefined;
  let timer: NodeJS.Timeout | undefined;
  const takeLast = (): Promise<Reading | undefined> =>
    read().then(
      (r) => (last = r),
      (e: unknown) => {
        uncounted.push(`the counters could not be read after the release (${message(e)})`);
        return last;
      },
    );

  return {
    released() {
      if (releasedAt !== undefined) return;
      releasedAt = Date.now();
      timer = setTimeout(() => {
        final ??= takeLast();
      }, REPORT_WINDOW_MS);
      timer.unref();
    },
    async kept() {
      if (!nft || !tableMade) return;
      try {
        if ((await listChains(nft, { family: 'inet', table: table.name })).some((x) => x.name === chain)) return;
        await (await missingCountersBatch(nft, held, resetScope, chain))?.batch.commit(nft);
        tableHandle = (await getTable(nft, table))?.handle;
        before = await read();
      } catch (e) {
        readFailed = true;
        uncounted.push(`the RST counters could not be set again after another holder's end removed them (${message(e)})`);
      }
    },
    abandon() {
      clearTimeout(timer);
      nft?.close();
      diag?.close();
    },
    async finish(hold: HoldCounts): Promise<ReloadReport> {
      releasedAt ??= Date.now();
      let after: Reading | undefined;
      if (before) {
        // Until quiet, or the end of the window (the timer's reading).
        while (!final) {
          const prev = last;
          const r = await takeLast();
          if (!r || (prev && same(prev, r))) break;
          const left = releasedAt + REPORT_WINDOW_MS - Date.now();
          if (left <= 0) break;
          await new Promise((done) => setTimeout(done, Math.min(REPORT_QUIET_MS, left)));
        }
        after = final ? await final : last;
      }
      clearTimeout(timer);
      nft?.close();
      diag?.close();
      const rst = nft !== undefined && tableMade && !readFailed;
      return buildReport(hold, before, after, { rst, reset: rst && resetCounted, listeners: diag !== undefined }, uncounted);
    },
  };
}

/**
 * The batch that adds what `held` needs of the RST counters' table, chain and
 * rules; undefined when every rule is there. The chain is added at
 * {@link REPORT_PRIORITY}, after every other hook, so that no packet waiting
 * in a netfilter queue resumes at the wrong hook.
 * @throws {NetlinkError} the listing was refused (other than the table missing)
 */
async function missingCountersBatch(
  nft: NetlinkConnection,
  held: readonly HeldTraffic[],
  resetScope: readonly HeldTraffic[],
  chain: string,
): Promise<{ batch: NftBatch; tableExisted: boolean } | undefined> {
  const table = { family: 'inet', name: REPORT_TABLE };
  const found = await getTable(nft, table);
  // A table of that name without synplug's mark is someone else's: protect never puts its chain there (teardown,
  // which removes only marked tables, would never remove it).
  if (found && tableIsMarked(found) === false) throw new ForeignReportTable();
  const tableExisted = found !== undefined;
  const have = new Set(
    tableExisted ? (await listRules(nft, { family: 'inet', table: table.name }).catch(() => [])).filter((r) => r.chain === chain).map((r) => r.comment) : [],
  );
  const missing = reportRules(held, resetScope).filter((r) => !have.has(r.comment));
  if (missing.length === 0) return undefined;
  const batch = new NftBatch().addTable({ ...table, comment: REPORT_TABLE_COMMENT });
  batch.addChain({ ...table, table: table.name, name: chain, type: 'filter', hook: 'output', prio: REPORT_PRIORITY, policy: 'accept' });
  for (const r of missing) batch.addRule({ family: 'inet', table: table.name, chain, expr: r.expr, comment: r.comment });
  return { batch, tableExisted };
}

/** The report's table exists without synplug's mark: not synplug's, so nothing of synplug's goes into it. */
class ForeignReportTable extends SynplugError {
  constructor() {
    super(
      `the nftables table inet ${REPORT_TABLE} exists and does not carry synplug's comment (someone else made it), so protect adds no counters to it; the hold itself goes on. To count them, remove or rename that table ('nft delete table inet ${REPORT_TABLE}' if it is not in use)`,
    );
  }
}

/** The chain's removal with its rules: its rules first (a kernel before recursive chain deletion refuses a chain with rules). */
function chainRemoval(chain: string): NftBatch {
  const ref = { family: 'inet', table: REPORT_TABLE };
  return new NftBatch().flushChain({ ...ref, chain }).deleteChain({ ...ref, name: chain });
}

/**
 * The watchdog's removal of the RST counters' chain, for a protect that dies
 * during its hold: run once no lease is left and nothing is queued in the
 * namespace (up to {@link REPORT_RETIRE_WAIT_MS}); one already gone is fine.
 */
export function reportChainWatchdogStep(stateDir: string): WatchdogStep {
  const chain = reportChainName(stateDir);
  return {
    what: `delete chain inet ${REPORT_TABLE} ${chain} (the reload report's RST counters)`,
    phase: 'disarm',
    protocol: NETLINK_NETFILTER,
    messages: chainRemoval(chain).messages().map(hexMessage),
    ignoreErrno: [osConstants.errno.ENOENT],
    whenNothingQueuedMs: REPORT_RETIRE_WAIT_MS,
  };
}

/**
 * Remove the RST counters' base chain after a reload, when no other holder
 * counts with it: only while the state directory records no live lease
 * (checked under the lease lock), and only once nothing is queued in the
 * namespace (a base chain's removal drops every queued packet), waiting up
 * to {@link REPORT_RETIRE_WAIT_MS}. The table stays (alone it hooks
 * nothing). Never throws.
 * @param store the state directory whose leases count
 * @returns what was removed (`chain inet synplug_report rst-<mark>`) or why it stays; undefined when there is no chain, or a live lease keeps it
 */
export async function retireReportChain(store: StateStore): Promise<{ removed?: string; kept?: string } | undefined> {
  const name = reportChainName(store.dir);
  const chain = `chain inet ${REPORT_TABLE} ${name}`;
  let nft: NetlinkConnection | undefined;
  try {
    nft = openNftables();
    const c = nft;
    const t = await getTable(c, { family: 'inet', name: REPORT_TABLE });
    if (!t || tableIsMarked(t) === false) return undefined;
    if (!(await listChains(c, { family: 'inet', table: REPORT_TABLE })).some((x) => x.name === name)) return undefined;
    if (!(await nothingQueuedWithin(REPORT_RETIRE_WAIT_MS, defaultNetns())))
      return { kept: `${chain}: packets are queued in this namespace, which removing a base chain would drop; the next reload removes it` };
    // No lock file: no setup here any more (a teardown removed it), so no holder of this directory counts with it;
    // removed without taking the lock, which would create the file again in the directory teardown cleared.
    const gone = !store.hasLockFile()
      ? await removeIfThere(() => chainRemoval(name).commit(c))
      : await withLeaseLock(store, async () => {
          if (recordedLeases(store).some((l) => leaseLive(l))) return false; // a holder counts with it: its end removes it
          return removeIfThere(() => chainRemoval(name).commit(c));
        });
    return gone ? { removed: chain } : undefined;
  } catch (e) {
    return { kept: `${chain}: ${message(e)}` };
  } finally {
    nft?.close();
  }
}

/** The report from the hold's counts and the readings before and after. */
function buildReport(
  hold: HoldCounts,
  before: Reading | undefined,
  after: Reading | undefined,
  counted: { rst: boolean; reset: boolean; listeners: boolean },
  uncounted: string[],
): ReloadReport {
  const both = before !== undefined && after !== undefined;
  const refused = both && counted.rst ? after.refused - before.refused : null;
  const reset = both && counted.reset ? after.rst - before.rst - (after.rstRefused - before.rstRefused) : null;
  let listenerDrops: number | null = null;
  if (both && counted.listeners) {
    listenerDrops = 0;
    for (const [inode, drops] of after.listeners) listenerDrops += Math.max(0, drops - (before.listeners.get(inode) ?? 0));
  }
  const counts = [hold.dropped, refused, reset, listenerDrops];
  const lossless = hold.failed?.length || counts.some((n) => n !== null && n > 0) ? false : counts.every((n) => n === 0) ? true : null;
  return {
    heldSyns: hold.heldSyns,
    holdMs: hold.holdMs,
    dropped: hold.dropped,
    refused,
    reset,
    listenerDrops,
    lossless,
    ...(uncounted.length > 0 && { uncounted: [...new Set(uncounted)] }),
    ...(hold.failed?.length && { failed: [...hold.failed] }),
  };
}

/**
 * The report of a hold nobody watched (a manual plug and release): the hold's
 * own counts, and refused, reset and listener drops null (not counted);
 * `lossless` false when it dropped SYNs, else null.
 * @param hold the hold's counts
 * @param why why the rest was not counted (one sentence)
 */
export function unwatchedReport(hold: HoldCounts, why: string): ReloadReport {
  const { failed, ...counts } = hold;
  return {
    ...counts,
    refused: null,
    reset: null,
    listenerDrops: null,
    lossless: (hold.dropped ?? 0) > 0 || failed?.length ? false : null,
    uncounted: [why],
    ...(failed?.length && { failed: [...failed] }),
  };
}

/**
 * A hold longer than this (ms) may outlast a client's connect timeout (a few
 * seconds is common): {@link lossCauses} then names that cause for listener drops.
 */
export const LONG_HOLD_MS = 3000;

/**
 * The likely causes of what a reload lost, one sentence each (none when
 * nothing was lost).
 * @param r the report
 * @param how how the hold ended: at the max-hold, and whether protect waited for a listener
 */
export function lossCauses(r: ReloadReport, how: { maxHoldReached: boolean; waitedForListener: boolean }): string[] {
  const out: string[] = [];
  if ((r.refused ?? 0) > 0)
    out.push(
      how.maxHoldReached
        ? 'released at the max-hold before the listener was back: raise --max-hold'
        : how.waitedForListener
          ? 'released before a listener for what is held was back: check --wait-listen names the port the server listens on'
          : 'released before the listener was back: add --wait-listen PORT',
    );
  // never --wait-listen to a protect that used it
  if ((r.reset ?? 0) > 0)
    out.push(
      !how.waitedForListener
        ? "connections queued in a closing listener were reset: --wait-listen waits for the old listener's close"
        : how.maxHoldReached
          ? "connections queued in a closing listener were reset: protect's wait for the old listener's close (--wait-listen) ended at the max-hold: raise --max-hold"
          : "connections queued in a closing listener were reset although protect waited for the old listener's close (--wait-listen): the server closed its listener with connections still queued in it (it did not drain them: a hold cannot save those; a reload that hands its socket over, or drains before it closes, can), a listener it did not wait for closed (a held port or address other than --wait-listen's), or one whose holders it cannot see in /proc (another user's processes need CAP_SYS_PTRACE)",
    );
  if ((r.dropped ?? 0) > 0) out.push('the hold dropped SYNs over its limit: raise the queue maxlen (--queue-maxlen) or the plug limit');
  const listenerDrops = r.listenerDrops ?? 0;
  // A long hold with no more drops than SYNs held: likely the retransmissions of clients that had given up (their
  // connect timeout ran out during the hold), released into a listener that drops them; a burst is the other cause.
  if (listenerDrops > 0 && r.holdMs > LONG_HOLD_MS && listenerDrops <= r.heldSyns)
    out.push(
      `the hold (${(r.holdMs / 1000).toFixed(1)} s) outlasted the clients' connect timeout: a client that gives up during the hold is lost, and its retransmitted SYNs, released, are dropped by the listener; keep --max-hold below the clients' connect timeout (or, with many clients, the release burst overflowed the listener's backlog: raise the server's listen backlog and net.core.somaxconn)`,
    );
  else if (listenerDrops > 0) out.push("the release burst overflowed the listener's backlog: raise the server's listen backlog (and net.core.somaxconn)");
  out.push(...(r.failed ?? []));
  return out;
}

/**
 * Whether synplug's table of RST counters is there (carrying synplug's mark,
 * or on a kernel that keeps no table comment): what teardown may say it kept.
 * Never throws (no nftables, or a listing refused: false).
 */
export async function reportCountersPresent(): Promise<boolean> {
  let nft: NetlinkConnection | undefined;
  try {
    nft = openNftables();
    const t = await getTable(nft, { family: 'inet', name: REPORT_TABLE });
    return t !== undefined && tableIsMarked(t) !== false;
  } catch {
    return false;
  } finally {
    nft?.close();
  }
}

/**
 * Remove synplug's table of RST counters (teardown of every hold), when it
 * carries synplug's table comment. A missing or unmarked table, or no
 * nftables in this kernel, is nothing to remove. Its base chain's removal
 * would drop every packet queued in the namespace (docs/design.md): while
 * a queue holds one (another hold's SYNs), it waits for them to go, at most
 * {@link REPORT_REMOVAL_WAIT_MS}, and else keeps the table (said in `kept`).
 * @param kept where a table kept is said (teardown's list)
 * @returns what was removed, for teardown's list
 * @throws {NetlinkError} the kernel refused the listing or the removal: the table stays, and teardown says so
 */
export async function removeReportCounters(kept: string[] = []): Promise<string[]> {
  let nft: NetlinkConnection;
  try {
    nft = openNftables();
  } catch {
    return []; // no nfnetlink: no table either
  }
  try {
    // only a table that carries synplug's mark (teardown-marks.ts): one of that name made by someone else stays
    const t = await getTable(nft, { family: 'inet', name: REPORT_TABLE });
    if (!t || tableIsMarked(t) === false) return [];
    if (!(await nothingQueuedWithin(REPORT_REMOVAL_WAIT_MS, defaultNetns()))) {
      kept.push(
        `nftables table inet ${REPORT_TABLE}: ${queuedPackets(defaultNetns())} packet(s) are queued in this namespace (another hold's SYNs?), which removing its base chain would drop; run teardown again once they are released`,
      );
      return [];
    }
    // gone meanwhile (a teardown running at the same moment removed it): done, not said as removed here
    if (!(await removeIfThere(() => new NftBatch().deleteTable({ family: 'inet', name: REPORT_TABLE }).commit(nft)))) return [];
    return [`nftables table inet ${REPORT_TABLE} (the reload report's RST counters)`];
  } finally {
    nft.close();
  }
}
