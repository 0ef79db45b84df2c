/**
 * A guard session: the open sockets, the device's index, and the messages of
 * the plug window encoded in advance, so that the window itself costs one
 * request each way.
 *
 * @module
 */
import { NetlinkConnection, type RequestInit } from '../netlink/connection.js';
import { openNftables } from '../iptables/index.js';
import { constants as osConstants } from 'node:os';
import { NETLINK_NETFILTER, NETLINK_ROUTE, NETLINK_SOCK_DIAG, NLM_F_ACK } from '../netlink/message.js';
import { NetlinkError, SynplugError } from '../netlink/errors.js';
import { resolveIfindex } from '../netlink/route/link.js';
import { listTcpListeners, listenerAccepts } from '../netlink/sockdiag.js';
import { plugRequest, listQdiscs, type TcRequest } from '../tc/ops.js';
import { TCQ_PLUG_BUFFER, TCQ_PLUG_RELEASE_INDEFINITE } from '../tc/constants.js';
import { formatQdiscHandle } from '../tc/handle.js';
import { prepareElementOps, runPrepared, type PreparedElementOps } from '../iptables/mark.js';
import { TREE, type GuardConfig } from './config.js';
import type { WatchdogStep } from './watchdog.js';
import type { ListenTarget, ProtectSession } from './protect.js';

/** Counters of the plug qdisc (from its TCA_STATS2). */
export interface PlugStats {
  /** packets that left the plug */
  packets: number;
  /** bytes that left the plug */
  bytes: number;
  /** packets dropped over the limit */
  drops: number;
  /** packets held now */
  qlen: number;
  /** bytes held now */
  backlog: number;
}

/** The device does not exist. Category `usage` (bad input: nothing is changed). */
export class NoDeviceError extends SynplugError {
  /**
   * @param dev the device name
   * @param recordedIn the setup record the name came from (no --dev was given), for the message
   */
  constructor(readonly dev: string, recordedIn?: string) {
    super(recordedIn
      ? `device '${dev}' not found: it is the device setup recorded in ${recordedIn}; give an existing device with --dev (teardown --dev DEVICE forgets that record)`
      : `device '${dev}' not found (give an existing device with --dev)`, 'usage');
    this.name = 'NoDeviceError';
  }
}

/**
 * Open sockets and the plug window's messages for one configuration.
 * Close it with {@link GuardSession.close}.
 */
export class GuardSession implements ProtectSession {
  readonly config: GuardConfig;
  /** NETLINK_ROUTE */
  readonly route: NetlinkConnection;
  /** NETLINK_NETFILTER, opened on first use */
  private nftConn?: NetlinkConnection;
  private diagConn?: NetlinkConnection;
  /** the device's index */
  readonly ifindex: number;
  private readonly bufferReq: TcRequest;
  private readonly releaseReq: TcRequest;
  private elements?: { timeoutMs: number; ops: PreparedElementOps };

  private constructor(config: GuardConfig, route: NetlinkConnection, ifindex: number) {
    this.config = config;
    this.route = route;
    this.ifindex = ifindex;
    this.bufferReq = plugRequest(ifindex, TREE.plugParent, TREE.plugHandle, TCQ_PLUG_BUFFER);
    this.releaseReq = plugRequest(ifindex, TREE.plugParent, TREE.plugHandle, TCQ_PLUG_RELEASE_INDEFINITE);
  }

  /**
   * Open the route socket and resolve the device.
   * @throws {NoDeviceError} no such device (usage)
   * @throws {SynplugError} the socket cannot be opened
   */
  static async open(config: GuardConfig): Promise<GuardSession> {
    const route = NetlinkConnection.open(NETLINK_ROUTE);
    try {
      const ifindex = await resolveIfindex(route, config.dev).catch((e) => {
        if (e instanceof NetlinkError && e.code === 'ENODEV') throw new NoDeviceError(config.dev);
        throw e;
      });
      return new GuardSession(config, route, ifindex);
    } catch (e) {
      route.close();
      throw e;
    }
  }

  /** The NETLINK_NETFILTER connection (opened on first use). @throws {SynplugError} no nfnetlink */
  get nft(): NetlinkConnection {
    if (!this.nftConn) this.nftConn = openNftables();
    return this.nftConn;
  }

  /** Close every socket. */
  close(): void {
    this.route.close();
    this.nftConn?.close();
    this.diagConn?.close();
  }

  /** Buffer the plug (TCQ_PLUG_BUFFER). @throws {NetlinkError} no plug qdisc (ENOENT/EINVAL) */
  async buffer(): Promise<void> {
    try {
      await this.route.request(this.bufferReq);
    } catch (e) {
      throw this.explain(e, 'buffer');
    }
  }

  /** Release the plug (TCQ_PLUG_RELEASE_INDEFINITE). Always safe. @throws {NetlinkError} */
  async release(): Promise<void> {
    try {
      await this.route.request(this.releaseReq);
    } catch (e) {
      throw this.explain(e, 'release');
    }
  }

  private explain(e: unknown, what: string): unknown {
    if (e instanceof NetlinkError && (e.code === 'ENOENT' || e.code === 'EINVAL')) {
      return e.withMessage(`cannot ${what} the plug: no plug qdisc ${formatQdiscHandle(TREE.plugHandle)} under ${'1:4'} on ${this.config.dev} (run 'synplug setup')`);
    }
    return e;
  }

  private elementOps(timeoutMs: number): PreparedElementOps {
    if (!this.elements || this.elements.timeoutMs !== timeoutMs) {
      this.elements = { timeoutMs, ops: prepareElementOps({ address: this.config.addr, table: this.config.table, timeoutMs }) };
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
    await runPrepared(this.nft, this.elementOps(timeoutMs).refresh!);
  }

  /** Turn marking off now (delete the element; a missing one is fine). @throws {NftBatchError} */
  async disarm(): Promise<void> {
    await runPrepared(this.nft, this.elementOps(this.elements?.timeoutMs ?? 1000).delete, { ignoreMissing: true });
  }

  /** The release, encoded for the watchdog: plug release, then element delete. */
  releaseSteps(): WatchdogStep[] {
    const hex = (m: RequestInit) => ({
      type: m.type,
      flags: m.flags ?? 0,
      payload: (Buffer.isBuffer(m.payload) ? m.payload : Buffer.concat((m.payload ?? []) as Buffer[])).toString('hex'),
    });
    const del = this.elementOps(this.elements?.timeoutMs ?? 1000).delete;
    return [
      { what: 'plug release', protocol: NETLINK_ROUTE, messages: [hex({ ...this.releaseReq, flags: this.releaseReq.flags | NLM_F_ACK })] },
      { what: 'nftables element delete', protocol: NETLINK_NETFILTER, messages: del.messages.map(hex), ignoreErrno: [osConstants.errno.ENOENT] },
    ];
  }

  /**
   * The plug's counters.
   * @throws {SynplugError} no plug qdisc on the device
   */
  async plugStats(): Promise<PlugStats> {
    const q = (await listQdiscs(this.route, { ifindex: this.ifindex })).find((x) => x.handle === formatQdiscHandle(TREE.plugHandle) && x.kind === 'plug');
    if (!q) throw new SynplugError(`no plug qdisc ${formatQdiscHandle(TREE.plugHandle)} on ${this.config.dev}`, 'not-set-up');
    return { packets: q.packets ?? 0, bytes: q.bytes ?? 0, drops: q.drops ?? 0, qlen: q.qlen ?? 0, backlog: q.backlog ?? 0 };
  }

  /** Listening TCP sockets on the target's port that accept its address. */
  async listeners(t: ListenTarget): Promise<Array<{ address: string; port: number; inode: number }>> {
    if (!this.diagConn) this.diagConn = NetlinkConnection.open(NETLINK_SOCK_DIAG);
    const all = await listTcpListeners(this.diagConn, { port: t.port });
    return all.filter((l) => t.address === undefined || listenerAccepts(l, t.address)).map((l) => ({ address: l.address, port: l.port, inode: l.inode }));
  }
}
