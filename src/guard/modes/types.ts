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
import type { HoldRecord, SetupRecord } from '../state.js';
import type { HoldStatus, PieceState, PlugStats, SetupOptions, SetupResult, SetupState, UnrecordedIfb } from '../types.js';
import type { WatchdogStep } from '../watchdog.js';
import type { ModulePiece } from '../support.js';
import type { HeldTraffic } from '../report.js';

export type { HeldTraffic };

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
  /** it adds the hold's address (setup's result says `addedAddress` from it: this run added it) */
  addsAddress?: true;
  /**
   * In a hold's phase one: how long to wait, ms, after the steps ran and
   * before anything is held. A step that changes a device's root qdisc drops
   * what the device sends while the kernel grafts; a handshake whose last
   * ACK was dropped completes by the server's SYN-ACK retransmission (1 s),
   * which must come while the old listener still listens.
   */
  settleMs?: number;
}

/** What a hold's inspection found: every piece by name, and the hold's overall state. */
export interface HoldInspection<Key extends string = string> {
  /** each piece's state by key, in the order `check` lists them */
  readonly pieces: Readonly<Record<Key, PieceState>>;
  /** `ok` complete; `absent` none of the pieces that make a setup; `partial` otherwise */
  readonly state: SetupState;
  /** what the hold read of the kernel (its {@link HoldPieces.observe}) */
  readonly observed: unknown;
}

/**
 * How long a piece lives: `permanent` pieces are made once by `setup` and
 * stay until `teardown`; `standing` ones too, but one found missing is added
 * again in a hold's phase one (and its absence alone does not make the hold
 * partly set up): the local plug hold's qdisc tree, which an earlier
 * synplug added around each hold, or someone removed; `armed` pieces cost
 * something on the data path, so they exist only around a hold: added in
 * phase one of protect and plug (before anything is held), removed after
 * the last release (by the watchdog too when protect dies), kept while any
 * live lease holds.
 */
export type PieceLifetime = 'permanent' | 'standing' | 'armed';

/**
 * One piece of a hold (a qdisc, a filter, a table, an address), as the
 * planner (src/guard/pieces.ts) runs it: judged in what the hold observed,
 * added or replaced by a step, removed at teardown.
 * @typeParam O what the hold observed ({@link HoldPieces.observe})
 * @typeParam C what one plan's pieces share (a device index a step learns, what the record says was added)
 */
export interface Piece<O = unknown, C = unknown> {
  /** its key in `check`'s pieces (`prio`, `filter_ip`) */
  readonly key: string;
  /** permanent or standing (setup), or armed (around each hold) */
  readonly lifetime: PieceLifetime;
  /** Whether it alone does not make a setup (an address that may be the user's own). */
  optional?(o: O): boolean;
  /** Its state in what was observed, named in setup's own words. */
  judge(o: O): PieceState;
  /**
   * The step(s) that make it as wanted (add it, or replace what differs), in
   * order; none when it is already. Sends nothing.
   * @param state its judged state
   * @param c shared by the pieces of one plan
   */
  add(o: O, state: PieceState, c: C): SetupStep | readonly SetupStep[] | undefined;
  /**
   * A standing or armed piece's step(s) in a hold's phase one, where they
   * differ from setup's {@link add} (what setup would replace with --force, a
   * hold refuses). Absent: {@link add}.
   * @throws {SynplugError} what is in the way of the hold (nothing changed)
   */
  arm?(o: O, state: PieceState, c: C): SetupStep | readonly SetupStep[] | undefined;
  /** Remove it at teardown when it is synplug's, saying in `out` what was removed, or kept and why. @throws {NetlinkError} */
  remove?(o: O, c: C, out: TeardownWords): Promise<void>;
  /**
   * An armed piece's removal, pre-encoded for the watchdog (which runs it
   * after its release, only when no other live lease holds; phase `disarm`).
   */
  removeSteps?(): WatchdogStep[];
}

/** What a teardown says: what it removed, and what it kept and why. */
export interface TeardownWords {
  removed: string[];
  kept: string[];
}

/** A hold as a list of pieces: what the planner needs to set it up, check it, and tear it down. */
export interface HoldPieces<O = unknown, C = unknown> {
  /** The pieces in the order setup adds them (teardown removes them in reverse). */
  readonly list: ReadonlyArray<Piece<O, C>>;
  /** The keys in the order `check` lists them (default: setup's). */
  readonly listOrder?: readonly string[];
  /** Read the kernel's state once, for every piece. @throws {NetlinkError} a listing refused */
  observe(): Promise<O>;
  /** What one plan's pieces share, from what was observed. */
  begin(o: O): C;
  /**
   * Refuse, before any step, what is in the way and no step may change.
   * @throws {SynplugError} foreign state (`foreign-state`), a clash (`usage`)
   */
  refuse?(o: O, options: { force?: boolean }): void;
  /** The record entry, once every step ran. */
  record(c: C): HoldRecord;
  /**
   * What of the hold was found carrying synplug's own mark (a table's
   * comment, an address's protocol, an IFB's alias): pieces some setup made,
   * which a teardown through any record of them removes. Setup takes them for
   * its own only in a state directory that a setup ran in (setup.ts).
   * @returns each, as `check` names it (empty: none)
   */
  marked?(o: O): string[];
  /**
   * Whose the pieces carrying synplug's mark are, when the mark says so (the
   * queue hold's table comment names the state directory whose setup made
   * it): `here`, this state directory's (taken for its own, with or without
   * a record or a lock file); else another's (never taken, used or removed
   * through this one), with why (`detail`) and how to remove them by hand
   * when no state directory records them any more (`removeBy`). Undefined:
   * the mark does not say (setup.ts's lock-file rule decides).
   */
  markOwner?(o: O): { here: true } | { here: false; detail: string; removeBy: string } | undefined;
  /** Teardown's first act: let go what is held (the plug released). Never throws. */
  letGo?(o: O, out: TeardownWords): Promise<void>;
}

/**
 * How a hold starts or ends holding. Plug holds change a qdisc: their
 * messages (NETLINK_ROUTE, NLM_F_ACK set) go out with every other plug hold's
 * in ONE datagram (`route`), refusals explained by the hold. Other holds run
 * their own step (`run`): the queue hold binds or gives its verdict on the
 * socket that bound the queue.
 */
export type HoldAction = { kind: 'route'; messages: readonly RequestInit[] } | { kind: 'run'; run(): Promise<void> };

/** Which kind of hold: `plug` (a plug qdisc, sch_plug) or `queue` (an nfnetlink queue, NFQUEUE with bypass). */
export type HoldVia = 'plug' | 'queue';

/** Which clients a hold is for: those of this host (`local`) or those arriving on a device (`inbound`). */
export type HoldScope = 'local' | 'inbound';

/**
 * What the watchdog needs to release a hold when protect dies: netlink steps
 * sent on fresh sockets, and the file descriptors it must inherit (the queue
 * hold's bound socket: only it may give verdicts).
 */
export interface HoldHandoff {
  /** the steps, each tagged `release` (the hold itself) or `disarm` (the kernel-side deadline) */
  steps: WatchdogStep[];
}

/** One hold on one device, opened for a session. */
export interface Hold {
  /** the mode's registry name, e.g. `local` */
  readonly mode: string;
  /** its kind: a plug qdisc or a netfilter queue */
  readonly via: HoldVia;
  /** whose connections it holds */
  readonly scope: HoldScope;
  /** the hold's key in the setup record: `local`, `inbound:DEV`, `queue`... */
  readonly id: string;
  /** the device the hold sits on */
  readonly dev: string;
  /** its interface index */
  readonly ifindex: number;
  /** The kernel support the hold needs: modules missing, and modules that could not be checked. Changes nothing. */
  probeSupport(): Promise<{ missing: ModulePiece[]; unverified: ModulePiece[] }>;
  /** Its pieces, for the planner (src/guard/pieces.ts): setup, check, dry-run, teardown, arming. */
  readonly pieces: HoldPieces;
  /**
   * Refuse, changing nothing, what is in the way of a setup that no step can
   * fix (a device of the IFB's name, a queue number someone else uses).
   * @param options `holdingHere`: a live lease of this state directory holds this hold now (what its own holder
   *   binds is not in the way)
   * @throws {SynplugError} what is in the way (`usage` or `foreign-state`)
   */
  refuseClash?(options?: { holdingHere?: boolean }): Promise<void>;
  /** Start holding (a plug's buffer; a queue's bind). */
  holdAction(): HoldAction;
  /**
   * Phase one, before the lease: make the hold itself quick, holding
   * nothing (a queue's holder process started, not yet bound). Undone by
   * the release or {@link Hold.close}.
   * @throws {SynplugError} it could not be prepared; nothing is held
   */
  prepareHold?(): Promise<void>;
  /** The session ends: let go of what {@link Hold.prepareHold} made and no hold used. Never throws. */
  close?(): void;
  /** Stop holding and let everything held go (a plug's release; a queue's batch verdict). Always safe. */
  releaseAction(): HoldAction;
  /**
   * When what this hold holds is held by another process that only it can
   * let go (a queue bound by a running protect): a sentence saying so.
   */
  heldElsewhere?(): string | undefined;
  /**
   * After a release of a hold that was recorded as holding: when nothing held
   * it any more (a queue's holder process died during the hold, and the kernel
   * dropped what it held), a sentence saying so.
   */
  holderLost?(): string | undefined;
  /**
   * After a release of a hold that was recorded as holding: when nothing of
   * this state directory ever held it (a queue hold whose directory has no
   * holder socket: records copied from elsewhere), a sentence saying so.
   */
  heldNothingHere?(): string | undefined;
  /**
   * The kernel's refusal of a `route` hold/release message, as a sentence
   * about this hold; undefined when the refusal is no failure (a release of a
   * plug armed per hold that is gone: nothing is held there).
   */
  explainPlugError(e: NetlinkError, action: 'buffer' | 'release'): NetlinkError | undefined;
  /** Turn the hold's kernel-side deadline on for `timeoutMs` (the local hold: the marking set element). */
  arm?(timeoutMs: number): Promise<void>;
  /** Turn it off (a missing element is fine). */
  disarm?(): Promise<void>;
  /** What the watchdog needs to release this hold (and disarm it) when protect dies; called once holding started. */
  handoff(): HoldHandoff;
  /** What it holds (destination addresses and TCP ports), for the reload's report (report.ts). */
  heldTraffic?(): HeldTraffic;
  /** Its counters (packets held now, passed, dropped); undefined when the hold's holding piece is not there. @throws {NetlinkError} */
  plugStats(): Promise<PlugStats | undefined>;
  /**
   * What `status` shows of this hold: fields of its entry in `holds`.
   * @throws {NetlinkError} a listing refused
   */
  statusDetails(inspection: HoldInspection): Promise<{ hold: Record<string, unknown> }>;
  /** What `check` lists of this hold besides its id, mode, dev and state (the local hold: its address; an inbound hold: its ports). */
  checkDetails(): Record<string, unknown>;
  /** What to run to set this hold up, for the messages (`synplug setup --inbound eth0 --port 443`). */
  setupCommand(): string;
  /** The setup options that set this hold up again as recorded (protect --setup). */
  setupOptions(): SetupOptions;
  /** What `setup` returns for this hold's record entry. */
  setupResult(entry: HoldRecord): Partial<SetupResult>;
}

/** A piece of a hold that no record lists (a crash between making it and recording it): found by its marks of synplug's. */
export interface UnrecordedPiece {
  /** the hold it belongs to, e.g. `inbound:eth0` */
  id: string;
  /** what `check` and `status` list (`{ ifb, dev, teardown }`) */
  report: UnrecordedIfb;
  /** set when it carries synplug's mark but is not synplug's after all: why (it is then left alone) */
  mismatch?: string;
  /**
   * set when its mark names another state directory (an IFB's alias): whose, in words. It is that directory's hold,
   * not a leftover of this one: never released or removed through this one, nor reported as this one's
   */
  otherDirectory?: string;
  /** a device name or index it belongs to (to select it with `--inbound DEV`) */
  matches(target: { name: string; ifindex?: number }): boolean;
  /** release what it holds now; returns a label (`spifb3 (inbound hold of eth0)`), or undefined when it held nothing */
  release(): Promise<string | undefined>;
  /** remove it */
  teardown(): Promise<{ removed: string[]; kept: string[] }>;
  /** what teardown says of it when it is left alone */
  keptReason: string;
}

/**
 * What a command's result says of one hold (an entry of `check`'s or
 * `status`' `holds`; only an id with the result's `dev` and `addr`; or, with
 * no id, whose clients and the device): the words about it are made from
 * these fields, nothing is sent.
 */
export type HoldFacts = { id?: string; scope?: HoldScope; dev: string; addr?: string } & Partial<Omit<HoldStatus, 'id' | 'dev'>>;

/** Words about one hold, for the CLI's text (the CLI prints them). */
export interface HoldWords {
  /** what it is and where: `local hold on lo`, `inbound hold on eth0`, `queue hold of eth0` */
  label: string;
  /** whose new connections it holds: `to 169.254.255.254`, `arriving on eth0` */
  clients: string;
  /** what sets it up (for a hold reported not set up; an inspected one's entry says it in `setup`) */
  setup: string;
  /** the local plug hold: `status` prints its entry's device, address, marking, qdiscs and filters first, without a head line */
  top: boolean;
  /** `protect --setup` sets it up again from its record entry when it is partly set up */
  fromRecord: boolean;
  /**
   * `status`' lines for it, after the first ones (none for the hold that
   * `top` prints first): a head line, then details (the CLI lists
   * the pieces not ok between them).
   * @param stateWord a state in words (`complete`, `not set up`, `PARTIAL`)
   */
  status(h: HoldStatus, stateWord: (state: string) => string): string[];
}

/** A hold mode: opens holds of its kind. */
export interface HoldMode {
  /** its registry name, e.g. `local` */
  readonly name: string;
  /** its kind */
  readonly via: HoldVia;
  /** whose connections its holds can hold */
  readonly scopes: readonly HoldScope[];
  /**
   * Whether a record entry of this mode (`setup.json`'s `holds`) has every
   * field the mode's record has, of the right type.
   */
  isRecord(r: Record<string, unknown>): boolean;
  /**
   * What in a whole record entry of this mode `setup` would refuse (a
   * loopback address, a table that is not synplug's), as a sentence; a
   * record naming it is refused and nothing is changed. Never throws.
   */
  recordRefusal?(r: Record<string, unknown>): string | undefined;
  /** The configuration a record entry gives the commands (the local plug hold's device, address...), if any. */
  configOf?(r: HoldRecord): Partial<GuardConfig>;
  /**
   * The destination addresses a record entry's hold holds (canonical text), for a hold that does not take its
   * address from the configuration (no `addr` in {@link HoldMode.configOf}): empty when it holds any (an inbound
   * hold set up without --addr). A command given an --addr none of the recorded holds holds refuses it.
   */
  addrsOf?(r: HoldRecord): readonly string[];
  /**
   * Open a hold for a configuration and, when it is set up, its record entry.
   * @throws {NoDeviceError} its device does not exist
   */
  open(sockets: HoldSockets, config: GuardConfig, record?: HoldRecord): Promise<Hold>;
  /**
   * Open the hold that `setup` (with these options) builds; `replaces` is the
   * record id of the same hold under another key (a device renamed since).
   * @throws {UsageError} bad options, checked before anything is sent
   * @throws {NoDeviceError} no such device
   */
  openForSetup(sockets: HoldSockets, config: GuardConfig, opts: SetupOptions, record: SetupRecord | undefined): Promise<{ hold: Hold; replaces?: string }>;
  /**
   * The kernel support this mode's holds need, on this kernel (modules
   * missing, and modules that could not be checked). Changes nothing.
   * @throws {NetlinkError} a probe was refused unexpectedly (EPERM...)
   */
  probeSupport(sockets: HoldSockets, config: GuardConfig): Promise<{ missing: ModulePiece[]; unverified: ModulePiece[] }>;
  /** Check the options `setup` takes for this mode, sending nothing. @throws {UsageError} */
  validate(opts: SetupOptions, config: GuardConfig): void;
  /**
   * The id of the hold of this mode a `--inbound DEV` selector names (by any
   * name of the device; a renamed device by index), and the device's name.
   * @param refuse refuse a device no record names that setup would refuse (default true)
   * @throws {UsageError} `refuse`: a device setup would refuse (`lo`, an IFB), without a record naming it
   * @throws {NoDeviceError} `refuse`: no such device, without a record naming it
   */
  select?(sockets: HoldSockets, record: SetupRecord | undefined, dev: string, refuse?: boolean): Promise<{ id: string; dev: string; ifindex?: number }>;
  /** The device a hold id of this mode names (`inbound:eth0`: eth0; `local`: the result's `dev`, given); undefined: not one of this mode's ids. */
  deviceOfId(id: string, dev: string): string | undefined;
  /** The forms of its hold ids, for messages: `local`; `queue`, `queue:DEV`; `inbound:DEV`. */
  readonly idForms: readonly string[];
  /** Words about one of its holds, from a result's fields (see {@link HoldFacts}). */
  describe(h: HoldFacts): HoldWords;
  /** `setup`'s text for a result that set up one of its holds: the head line (ending in `:` when actions follow). */
  setupHead(r: SetupResult): string;
  /** Pieces of this mode in the kernel that no record lists. @throws {NetlinkError} a listing refused */
  findUnrecorded?(sockets: HoldSockets, record: SetupRecord | undefined, config: GuardConfig): Promise<UnrecordedPiece[]>;
}
