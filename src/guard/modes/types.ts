/**
 * The interface every hold mode implements. A hold is one place where new
 * connections are held: the local hold (a plug under a prio qdisc on `lo`,
 * fed by an nftables mark), later the inbound hold (a plug on an IFB that a
 * clsact filter redirects SYNs to). The guard's operations (setup, check,
 * plug, release, protect, status, teardown) work on a list of holds through
 * this interface only; a new mode is one module plus one line in the
 * registry (`modes/index.ts`).
 *
 * @module
 */
import type { NetlinkConnection, RequestInit } from '../../netlink/connection.js';
import type { NetlinkError } from '../../netlink/errors.js';
import type { GuardConfig } from '../config.js';
import type { HoldRecord } from '../state.js';
import type { PieceState, PlugStats, SetupState } from '../types.js';
import type { WatchdogStep } from '../watchdog.js';
import type { ModulePiece } from '../support.js';

/** The sockets a hold works through, shared by every hold of a session. */
export interface HoldSockets {
  /** NETLINK_ROUTE */
  readonly route: NetlinkConnection;
  /** NETLINK_NETFILTER, opened on first use */
  readonly nft: NetlinkConnection;
}

/** One named step of setup, and how to undo it when a later step fails. */
export interface SetupStep {
  /** what it does, as setup reports it (`add qdisc pfifo 20: parent 1:2 limit 1000`) */
  what: string;
  /** do it */
  run(): Promise<void>;
  /** undo it (absent when a later undo covers it, or when it cannot be undone) */
  undo?: { what: string; run(): Promise<void> };
}

/** What a hold's inspection found: every piece by name, and the hold's overall state. */
export interface HoldInspection<Piece extends string = string> {
  /** each piece's state by name, in the order `check` lists them */
  readonly pieces: Readonly<Record<Piece, PieceState>>;
  /** `ok` complete; `absent` none of the pieces that make a setup; `partial` otherwise */
  readonly state: SetupState;
}

/** The plan of a setup: named steps (in the order they run) and the record entry to keep once they ran. */
export interface HoldSetupPlan<Step extends string = string> {
  /** the steps to run, by name; absent names need nothing */
  readonly steps: Partial<Readonly<Record<Step, SetupStep>>>;
  /** the order the named steps run in */
  readonly order: readonly Step[];
  /** the record entry, once every step ran */
  record(): HoldRecord;
}

/** One hold on one device, opened for a session. */
export interface Hold {
  /** the mode's registry name, e.g. `local` */
  readonly mode: string;
  /** the hold's key in the setup record: `local`, later `inbound:DEV` */
  readonly id: string;
  /** the device the plug sits on */
  readonly dev: string;
  /** its interface index */
  readonly ifindex: number;
  /** The kernel support the hold needs: modules missing, and modules that could not be checked. Changes nothing. */
  probeSupport(): Promise<{ missing: ModulePiece[]; unverified: ModulePiece[] }>;
  /** Read the kernel's state and judge each piece. @throws {NetlinkError} a listing refused */
  inspect(): Promise<HoldInspection>;
  /**
   * The steps that take the inspected state to the desired one.
   * @throws {ForeignQdiscError} something not synplug's is in the way and `force` is not set
   */
  planSetup(inspection: HoldInspection, options: { force?: boolean }): HoldSetupPlan;
  /** The messages (NETLINK_ROUTE, NLM_F_ACK set) that buffer its plug, encoded once. */
  readonly bufferMessages: readonly RequestInit[];
  /** The messages (NETLINK_ROUTE, NLM_F_ACK set) that release its plug, encoded once. */
  readonly releaseMessages: readonly RequestInit[];
  /** The kernel's refusal of a buffer/release message, as a sentence about this hold. */
  explainPlugError(e: NetlinkError, action: 'buffer' | 'release'): NetlinkError;
  /** Turn the hold's kernel-side deadline on for `timeoutMs` (the local hold: the marking set element). */
  arm?(timeoutMs: number): Promise<void>;
  /** Turn it off (a missing element is fine). */
  disarm?(): Promise<void>;
  /** The disarm, pre-encoded for the watchdog. */
  disarmSteps?(): WatchdogStep[];
  /** Its plug's counters; undefined when there is no plug qdisc. @throws {NetlinkError} */
  plugStats(): Promise<PlugStats | undefined>;
  /** Remove exactly what setup added (the plug released first). @returns what was removed and what was kept, and why */
  teardown(inspection: HoldInspection): Promise<{ removed: string[]; kept: string[] }>;
}

/** A hold mode: opens holds of its kind. */
export interface HoldMode {
  /** its registry name, e.g. `local` */
  readonly name: string;
  /**
   * Open a hold for a configuration and, when it is set up, its record entry.
   * @throws {NoDeviceError} its device does not exist
   */
  open(sockets: HoldSockets, config: GuardConfig, record?: HoldRecord): Promise<Hold>;
}
