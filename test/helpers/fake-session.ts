/**
 * A guard session without a kernel, for the unit tests of what drives one
 * (protect's window, the leases, the check command, `--wait-listen`): every
 * kernel call is recorded, counters are zero unless set, nobody listens
 * unless told; and hold sockets on connections nothing answers, for a hold
 * that is judged or planned but never sends.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConfig, type GuardConfig } from '../../src/guard/config.js';
import type { Hold, HoldSockets } from '../../src/guard/modes/types.js';
import type { Listener, ListenTarget, PlugStats, ProtectSession, ReportCounters } from '../../src/guard/types.js';
import { armReport } from '../../src/guard/report.js';
import type { WatchdogStep } from '../../src/guard/watchdog.js';
import { NetlinkConnection } from '../../src/netlink/connection.js';
import { NETLINK_NETFILTER, NETLINK_ROUTE } from '../../src/netlink/message.js';
import { FakeTransport } from '../../src/netlink/testing.js';

/** A call that changes the (fake) kernel. */
export type KernelCall = 'arm' | 'disarm' | 'buffer' | 'release';

/** How a {@link FakeSession} behaves where a test needs more than the defaults. */
export interface FakeSessionOptions {
  /** its state directory (default: a new temporary one) */
  stateDir?: string;
  /** what `listeners()` finds (default: nothing) */
  listeners?: (target: ListenTarget) => Listener[] | Promise<Listener[]>;
  /**
   * Called on each kernel call once it is recorded (`ms`: arm's timeout);
   * what it throws, the call throws (a refused request).
   */
  onCall?: (call: KernelCall, ms?: number) => void | Promise<void>;
}

/** A {@link ProtectSession} whose kernel is a log: `calls` and `reads`. */
export class FakeSession implements ProtectSession {
  readonly config: GuardConfig;
  /** the kernel calls in order: `arm MS`, `disarm`, `buffer`, `release` */
  readonly calls: string[] = [];
  /** the reads in order: `stats`, `listeners ADDR:PORT` (`*` without an address) */
  readonly reads: string[] = [];
  /** both, in the order they came */
  readonly log: string[] = [];
  /** the plugs' packet counter (74 bytes a packet) */
  packets = 0;
  /** no hold of its own: recovery's check of whose the holds are (pieces.ts othersHolds) finds none */
  readonly holds: Hold[] = [];
  /**
   * The reload report without the kernel: the holds' own counters only (armReport with nothing held opens no
   * socket; what the session holds is not counted), and no counter chain to retire.
   */
  readonly reportCounters: ReportCounters = {
    arm: (_held, stateDir) => armReport([], stateDir),
    retire: async () => undefined,
  };
  private readonly options: FakeSessionOptions;

  constructor(options: FakeSessionOptions = {}) {
    this.options = options;
    this.config = resolveConfig({ stateDir: options.stateDir ?? mkdtempSync(join(tmpdir(), 'synplug-fake-session-')) });
  }

  /** Record a kernel call, then let the test's `onCall` act on it (or refuse it). */
  protected async call(name: KernelCall, ms?: number): Promise<void> {
    const text = ms === undefined ? name : `${name} ${ms}`;
    this.calls.push(text);
    this.log.push(text);
    await this.options.onCall?.(name, ms);
  }

  private read(text: string): void {
    this.reads.push(text);
    this.log.push(text);
  }

  async plugStats(): Promise<PlugStats> {
    this.read('stats');
    return { packets: this.packets, bytes: this.packets * 74, drops: 0, qlen: 0, backlog: 0 };
  }

  async listeners(target: ListenTarget): Promise<Listener[]> {
    this.read(`listeners ${target.address ?? '*'}:${target.port}`);
    return (await this.options.listeners?.(target)) ?? [];
  }

  async arm(ms: number): Promise<void> {
    await this.call('arm', ms);
  }

  async disarm(): Promise<void> {
    await this.call('disarm');
  }

  async buffer(): Promise<void> {
    await this.call('buffer');
  }

  async release(): Promise<void> {
    await this.call('release');
  }

  releaseSteps(): WatchdogStep[] {
    return [];
  }
}

/**
 * Hold sockets on connections nothing answers (a request would time out
 * after `timeoutMs`): for a hold whose pieces are judged or planned from an
 * observation the test gives, never from the kernel.
 */
export function silentSockets(timeoutMs = 100): HoldSockets {
  return {
    route: new NetlinkConnection(new FakeTransport(), NETLINK_ROUTE, { timeoutMs }),
    nft: new NetlinkConnection(new FakeTransport(), NETLINK_NETFILTER, { timeoutMs }),
  };
}
