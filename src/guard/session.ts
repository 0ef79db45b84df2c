/**
 * A guard session: the open sockets, and the holds of one configuration with
 * their plug messages encoded in advance. Buffering or releasing every hold
 * is ONE datagram (`NetlinkConnection.exchange`), so the plug window costs
 * one request each way whatever the number of holds.
 *
 * @module
 */
import { reportChainWatchdogStep } from './report.js';
import { armHold, disarmHold } from './pieces.js';
import { NetlinkConnection } from '../netlink/connection.js';
import { openNftables } from '../iptables/index.js';
import { NETLINK_ROUTE, NETLINK_SOCK_DIAG } from '../netlink/message.js';
import { NetlinkError, SynplugError } from '../netlink/errors.js';
import { listTcpListeners, listenerAccepts, type TcpListener } from '../netlink/sockdiag.js';
import type { GuardConfig } from './config.js';
import { NoDeviceError } from './errors.js';
import type { SetupRecord } from './state.js';
import type { Listener, ListenTarget, PlugStats, ProtectSession } from './types.js';
import { isReleaseStep, type WatchdogStep } from './watchdog.js';
import { holdMode, holdModeFor, openAutoLocalHold, type HeldTraffic, type Hold, type HoldAction, type HoldSockets } from './modes/index.js';
import { explainSockDiag } from './support.js';
import { listAddresses } from '../netlink/route/addr.js';
import { formatIp, parseIp } from '../netlink/ipaddr.js';
import { deleteTcpMetrics } from '../netlink/tcp-metrics.js';
import { defaultNetns } from '../netlink/netns.js';

export { NoDeviceError };
export type { PlugStats };

/** Which holds a session opens. */
export interface SessionHolds {
  /** the setup record: each of its holds is opened (the local one from the configuration) */
  record?: SetupRecord;
  /**
   * also open the default hold when the record has none (default true: it is what setup makes without options): the
   * local plug hold of the configuration; with no record, the local hold `setup --via auto` makes on this kernel
   */
  local?: boolean;
  /**
   * with no record, open the local plug hold, not the one `setup --via auto` picks on this kernel: the caller gave
   * an option only the plug holds take (--dev, --mark, --limit), with which `setup --via auto` sets up the plug hold
   */
  plug?: boolean;
}

/**
 * Open sockets and the holds of one configuration. Close it with
 * {@link GuardSession.close}. Every plug operation acts on every hold.
 */
export class GuardSession implements ProtectSession, HoldSockets {
  readonly config: GuardConfig;
  /** NETLINK_ROUTE */
  readonly route: NetlinkConnection;
  /** NETLINK_NETFILTER, opened on first use */
  private nftConn?: NetlinkConnection;
  private diagConn?: NetlinkConnection;
  /** the holds, the local one first */
  readonly holds: Hold[] = [];

  private constructor(config: GuardConfig, route: NetlinkConnection) {
    this.config = config;
    this.route = route;
  }

  /**
   * Open the route socket and the holds.
   * @param config the configuration (the local hold's device, address...)
   * @param which the setup record whose holds to open, and whether to open the local hold without one
   * @throws {NoDeviceError} a hold's device does not exist (category `usage`)
   * @throws {SynplugError} the socket cannot be opened, or the record names a mode this synplug does not know
   */
  static async open(config: GuardConfig, which: SessionHolds = {}): Promise<GuardSession> {
    const route = NetlinkConnection.open(NETLINK_ROUTE);
    const s = new GuardSession(config, route);
    try {
      const entries = Object.entries(which.record?.holds ?? {});
      // The local plug hold first (the configuration's; opened without a record unless `local` is false). With no
      // record at all, the local hold setup makes on this kernel (the queue hold where it has no sch_plug).
      const local = holdModeFor('plug', 'local');
      const localEntry = entries.find(([, h]) => h.mode === local?.name)?.[1];
      if (local && localEntry) s.holds.push(await local.open(s, config, localEntry));
      else if (which.local !== false) {
        const h = which.record || which.plug ? await local?.open(s, config, undefined) : await openAutoLocalHold(s, config);
        if (h) s.holds.push(h);
      }
      for (const [id, entry] of entries) {
        if (entry === localEntry) continue;
        const mode = holdMode(entry.mode);
        if (!mode)
          throw new SynplugError(
            `the setup record holds a hold of mode '${entry.mode}' (${id}), which this synplug does not know; use the synplug that set it up`,
          );
        s.holds.push(await mode.open(s, config, entry));
      }
      return s;
    } catch (e) {
      s.close();
      throw e;
    }
  }

  /**
   * A session over connections and holds made elsewhere (tests, embedding):
   * nothing is opened; {@link GuardSession.close} closes the connections.
   * @param config the configuration
   * @param route a NETLINK_ROUTE connection
   * @param makeHolds makes the holds, given the session (their sockets)
   * @param nft a NETLINK_NETFILTER connection (opened on first use when absent)
   */
  static fromParts(config: GuardConfig, route: NetlinkConnection, makeHolds: (s: GuardSession) => Hold[], nft?: NetlinkConnection): GuardSession {
    const s = new GuardSession(config, route);
    s.nftConn = nft;
    s.holds.push(...makeHolds(s));
    return s;
  }

  /**
   * Leave these holds out of everything this session does from now on
   * (buffer, release, arming, disarming): another state directory's holds
   * (pieces.ts othersHolds), kept whole. They are still closed with the session.
   */
  setAside(holds: readonly Hold[]): void {
    for (const h of holds) {
      const i = this.holds.indexOf(h);
      if (i < 0) continue;
      this.holds.splice(i, 1);
      this.setAsideHolds.push(h);
    }
  }
  private readonly setAsideHolds: Hold[] = [];

  /** Each hold's id and kind. */
  get holdKinds(): Array<{ id: string; via: 'plug' | 'queue' }> {
    return this.holds.map((h) => ({ id: h.id, via: h.via }));
  }

  /** What each hold holds (those that say), for the reload's report. */
  heldTraffic(): HeldTraffic[] {
    return this.holds.flatMap((h) => (h.heldTraffic ? [h.heldTraffic()] : []));
  }

  /** The ids of the session's holds (`local`, `inbound:DEV`...). */
  get holdIds(): string[] {
    return this.holds.map((h) => h.id);
  }

  /** The NETLINK_NETFILTER connection (opened on first use). @throws {SynplugError} no nfnetlink */
  get nft(): NetlinkConnection {
    if (!this.nftConn) this.nftConn = openNftables();
    return this.nftConn;
  }

  /** Close every socket. */
  close(): void {
    for (const h of [...this.holds, ...this.setAsideHolds]) h.close?.();
    this.route.close();
    this.nftConn?.close();
    this.diagConn?.close();
  }

  /**
   * Start or end holding on every hold: the plug holds' messages in ONE
   * datagram, then every other hold's own step.
   * @throws {NetlinkError} the first refusal, explained by its hold
   */
  private async plugAll(action: 'buffer' | 'release', afterwards = true): Promise<void> {
    const owners: Hold[] = [];
    const runs: Array<Extract<HoldAction, { kind: 'run' }>> = [];
    const messages = this.holds.flatMap((h) => {
      const a = action === 'buffer' ? h.holdAction() : h.releaseAction();
      if (a.kind === 'run') {
        runs.push(a);
        return [];
      }
      owners.push(...a.messages.map(() => h));
      return a.messages;
    });
    if (messages.length > 0) {
      const results = await this.route.exchange(messages);
      results.forEach((r, i) => {
        const err = r.error instanceof NetlinkError ? owners[i].explainPlugError(r.error, action) : r.error;
        if (err) throw err;
        if (r.unanswered) throw new SynplugError(`no answer to the ${action} of the plug on ${owners[i].dev}`, 'kernel');
      });
    }
    if (action === 'buffer') {
      for (const r of runs) await r.run();
      return;
    }
    // Release: every hold gets its release, even when another's fails; the first failure is thrown after.
    let first: unknown;
    for (const r of runs) await r.run().catch((e: unknown) => (first ??= e));
    if (afterwards) await this.afterRelease();
    if (first !== undefined) throw first;
  }

  /**
   * After a release: a held SYN's RTT sample is the hold itself, which the
   * kernel caches per destination (tcp_metrics) and starts later connections
   * there with (an RTO of seconds). Local clients' cache is this host's: the
   * entries of the local holds' addresses are deleted (TCP_METRICS_CMD_DEL).
   * Never throws: a kernel without the tcp_metrics family has nothing cached.
   */
  async afterRelease(): Promise<void> {
    const addrs = this.holds.flatMap((h) => (h.scope === 'local' ? (h.heldTraffic?.().addrs ?? []) : []));
    if (addrs.length) await deleteTcpMetrics(addrs, { netns: defaultNetns() }).catch(() => 0);
  }

  /**
   * Phase one: make every hold's start quick, holding nothing (a queue's
   * holder process started). @throws {SynplugError} a hold could not be prepared
   */
  async prepare(): Promise<void> {
    for (const h of this.holds) {
      await h.prepareHold?.();
      // the armed pieces (pieces.ts): added now, before anything is held
      await armHold(h.pieces);
    }
  }

  /** Add every hold's armed pieces that are missing, holding nothing (pieces.ts). @throws {SetupError} @throws {NetlinkError} */
  async armPieces(): Promise<void> {
    for (const h of this.holds) await armHold(h.pieces);
  }

  /** Start holding on every hold (the plugs buffer, one datagram; a queue binds). @throws {NetlinkError} no plug qdisc (ENOENT/EINVAL) */
  buffer(): Promise<void> {
    return this.plugAll('buffer');
  }

  /** Let every hold go (the plugs release, one datagram; a queue gives its verdict). Always safe. @throws {NetlinkError} */
  release(options: { afterwards?: boolean } = {}): Promise<void> {
    return this.plugAll('release', options.afterwards !== false);
  }

  /**
   * Turn each hold's kernel-side deadline on for `timeoutMs` (the local hold:
   * the address enters the marking set with that timeout).
   * @throws {NftBatchError} the set or table is missing, or the kernel refused
   */
  async arm(timeoutMs: number): Promise<void> {
    for (const h of this.holds) {
      // under the lease lock: the armed pieces again, when another holder's last release removed them since phase one
      await armHold(h.pieces);
      await h.arm?.(timeoutMs);
    }
  }

  /**
   * Turn marking off now (a missing element is fine), and remove the armed
   * pieces (after the last release): every hold's, the first failure thrown after.
   * @throws {NftBatchError} @throws {NetlinkError}
   */
  async disarm(): Promise<void> {
    let first: unknown;
    for (const h of this.holds) await h.disarm?.().catch((e: unknown) => (first ??= e));
    await this.disarmArmed().catch((e: unknown) => (first ??= e));
    if (first !== undefined) throw first;
  }

  /** Remove the armed pieces that are there (pieces.ts). @throws {NetlinkError} a listing or a removal refused */
  async disarmArmed(): Promise<void> {
    for (const h of this.holds) await disarmHold(h.pieces);
  }

  /**
   * The release for the watchdog: every plug's release in one datagram (the
   * first step), every other hold's own, then each hold's disarm and the
   * removal of its armed pieces, and last the reload report's counter chain
   * (a protect's, left when it died; report.ts).
   */
  releaseSteps(): WatchdogStep[] {
    const steps = this.holds.flatMap((h) => [...h.handoff().steps, ...h.pieces.list.flatMap((p) => (p.lifetime === 'armed' && p.removeSteps?.()) || [])]);
    const plugs = steps.filter((st) => st.protocol === NETLINK_ROUTE && isReleaseStep(st));
    const rest = steps.filter((st) => !plugs.includes(st));
    const joined: WatchdogStep = { what: 'plug release', phase: 'release', protocol: NETLINK_ROUTE, messages: plugs.flatMap((st) => st.messages) };
    return [joined, ...rest.filter(isReleaseStep), ...rest.filter((st) => !isReleaseStep(st)), reportChainWatchdogStep(this.config.stateDir)];
  }

  /**
   * The plugs' counters once what a release let go has left them (every
   * plug's qlen 0, polled every 20 ms for at most `ms`): a plug counts a
   * packet as it leaves, so its counters are read once it has let go.
   * @returns undefined when a hold has no plug qdisc
   */
  async releasedStats(ms = 1000): Promise<PlugStats | undefined> {
    const until = Date.now() + ms;
    for (;;) {
      const st = await this.plugStats().catch(() => undefined);
      if (!st || st.qlen === 0 || Date.now() >= until) return st;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /**
   * The plugs' counters, summed over every hold.
   * @throws {SynplugError} a hold has no plug qdisc (category `not-set-up`)
   */
  async plugStats(): Promise<PlugStats> {
    const sum: PlugStats = { packets: 0, bytes: 0, drops: 0, qlen: 0, backlog: 0 };
    const ended: Array<number | undefined> = [];
    for (const h of this.holds) {
      const st = await h.plugStats();
      ended.push(st?.holdEndedAt);
      if (!st) throw new SynplugError(`no plug qdisc on ${h.dev} (the ${h.mode} hold): run '${h.setupCommand()}'`, 'not-set-up');
      for (const k of ['packets', 'bytes', 'drops', 'qlen', 'backlog'] as const) sum[k] += st[k];
      if (st.failures?.length) sum.failures = [...(sum.failures ?? []), ...st.failures];
      if (st.notes?.length) sum.notes = [...(sum.notes ?? []), ...st.notes];
      if (st.dropsLost) sum.dropsLost = true;
    }
    if (ended.length && ended.every((t) => t !== undefined)) sum.holdEndedAt = Math.max(...(ended as number[]));
    return sum;
  }

  /**
   * Listening TCP sockets on the target's port that accept its address;
   * without an address, those that can accept a held client: one of a local
   * hold's addresses (or a wildcard), or (an inbound hold's clients come from
   * the network) any address but a loopback one. Another user's socket on
   * 127.0.0.1:PORT is never taken for the reload's.
   * @throws {MissingSupportError} the kernel's TCP socket diagnostics (inet_diag, tcp_diag) cannot be used
   * @throws {NetlinkError} another refusal
   */
  async listeners(t: ListenTarget): Promise<Listener[]> {
    const held = this.holds.flatMap((h) => h.heldTraffic?.() ?? []);
    const accepts = (l: TcpListener): boolean =>
      t.address !== undefined
        ? listenerAccepts(l, t.address)
        : held.length === 0 || held.some((h) => (h.addrs.length ? h.addrs.some((a) => listenerAccepts(l, a)) : !isLoopbackListener(l)));
    try {
      if (!this.diagConn) this.diagConn = NetlinkConnection.open(NETLINK_SOCK_DIAG);
      const all = await listTcpListeners(this.diagConn, { port: t.port });
      return all.filter(accepts).map((l) => ({ address: l.address, port: l.port, inode: l.inode }));
    } catch (e) {
      throw explainSockDiag(e);
    }
  }

  /**
   * Whether `address` is one of this network namespace's own (an address of
   * a link, or 127/8, which lo answers for whole): a server can listen there.
   * @param address IPv4 or IPv6 text
   * @returns undefined when the addresses could not be listed
   */
  async isLocalAddress(address: string): Promise<boolean | undefined> {
    let want: string;
    try {
      const b = parseIp(address).bytes;
      if (b.every((x) => x === 0)) return true; // 0.0.0.0, ::: any address
      want = formatIp(b);
    } catch {
      return undefined;
    }
    if (/^127\./.test(want)) return true;
    try {
      const addrs = await listAddresses(this.route);
      return addrs.some((a) => {
        try {
          return a.local !== undefined && formatIp(parseIp(a.local).bytes) === want;
        } catch {
          return false;
        }
      });
    } catch {
      return undefined;
    }
  }
}

/** Whether a listener is bound to a loopback address (127/8, ::1, ::ffff:127/104): no client from the network reaches it. */
function isLoopbackListener(l: TcpListener): boolean {
  return /^127\./.test(l.address) || l.address === '::1' || /^::ffff:127\./i.test(l.address);
}
