/**
 * The guard's shared shapes: options, results and the ports between its
 * modules. Every other guard module imports its types from here (and from
 * `config.ts`), so that splitting the guard into files creates no import cycle.
 *
 * @module
 */
import type { GuardConfig } from './config.js';
import type { NetnsSpec } from '../netlink/netns.js';
import type { PlugRecord } from './state.js';
import type { WatchdogStep } from './watchdog.js';
import type { FilterEntry, QdiscEntry } from '../tc/types.js';
import type { PrecheckResult } from './precheck.js';
import type { MigrateReqReport } from './sysctl.js';
import type { HeldTraffic, ReloadReport, ReportCounting } from './report.js';
import type { StateStore } from './state.js';

/** Options every guard operation takes: the configuration (defaults from setup's record, then built-in), and where. */
export type GuardOptions = Partial<GuardConfig> & {
  /**
   * The network namespace this call acts in (the CLI's `--netns`, for this
   * call only): a name from /run/netns (as `ip netns add` makes them), a path
   * (`/proc/PID/ns/net`, a bind mount), or a file descriptor of this process
   * open on a namespace file. Every connection the call opens, and the
   * processes it starts (the watchdog, the queue's holder), are in it; the
   * process itself, a command `protect` runs, and other calls running
   * meanwhile stay where they are. Checked first, as the CLI checks
   * `--netns` (opened non-blocking, must be a network namespace this process
   * can enter): a bad one is a `UsageError` before anything is read or
   * changed. `stateDir` defaults to the namespace's own,
   * `/run/synplug/netns/<cookie>` (SO_NETNS_COOKIE; with a kernel before
   * 5.14, give `stateDir`). Default: the process-wide `setDefaultNetns()`,
   * else SYNPLUG_NETNS, else this process's namespace, whose `stateDir`
   * default is `/run/synplug` at home (process 1's namespace) and its cookie
   * directory in another (`ip netns exec NAME`: state-dir.ts's defaultStateDir). A descriptor or a
   * `/proc/self/...` path is handed to the watchdog as `/proc/PID/...` of
   * this process, which it opens at its start.
   */
  netns?: NetnsSpec;
};

/** The state of one piece of a hold's setup. */
export interface PieceState {
  /** e.g. `qdisc prio 1: root bands 4` */
  piece: string;
  /** `ok`, `missing`, or `different` (present, but not as setup makes it) */
  status: 'ok' | 'missing' | 'different';
  /** what differs (or what sits where the piece belongs) */
  detail?: string;
  /** `armed`: the piece exists only around a hold (absent outside one is as wanted); absent for pieces setup makes once */
  lifetime?: 'armed';
}

/** The overall state of a setup: complete, nothing at all, or something in between. */
export type SetupState = 'ok' | 'absent' | 'partial';

/**
 * Which hold a command acts on (`check`, `status`, `teardown`): every hold
 * when neither is given.
 */
export interface HoldSelector {
  /** only the inbound hold of this device (any of its names: an altname is the same hold) */
  inbound?: string;
  /** only the local hold; exclusive with `inbound` */
  local?: boolean;
}

/** Options of `check`. */
export interface CheckOptions extends GuardOptions, HoldSelector {}

/** Options of `status`. */
export interface StatusOptions extends GuardOptions, HoldSelector {}

/** What `check` found. */
export interface CheckResult {
  /** `ok`: complete and consistent; `absent`: nothing set up; `partial`: some pieces missing or different (over the holds reported) */
  state: SetupState;
  /** every piece of every hold reported, in the order of their setup steps (the address last); only here, not in `holds` */
  pieces: PieceState[];
  /**
   * each hold's own state (`local`, `inbound:DEV`...) and where it is: the local plug hold also its proxy
   * address (`addr`), an inbound hold its ports, a queue hold its queue
   */
  holds: Array<{
    id: string;
    mode: string;
    via: 'plug' | 'queue';
    dev: string;
    state: SetupState;
    addr?: string;
    ports?: number[];
    addrs?: string[];
    queueNum?: number;
    setup?: string;
    /**
     * Its pieces carry the mark of another state directory's setup (a copy of that directory's records here): `setup`
     * here is refused (exit 7), so this sentence says what to do instead (use that directory); absent otherwise
     */
    elsewhere?: string;
    /**
     * Its device is gone since setup (deleted or renamed): `setup` cannot complete it until the device exists again
     * (create it again, or `teardown --inbound DEV` removes the rest); absent otherwise
     */
    deviceGone?: true;
  }>;
  /** IFBs of synplug's that no record lists (present when there is one; `state` is then at best `partial`) */
  unrecorded?: UnrecordedIfb[];
  /**
   * A setup interrupted in this state directory (its lock file, no setup.json) left pieces carrying synplug's
   * mark: the sentence naming them; `state` is then `partial` (setup takes them, teardown removes them)
   */
  interrupted?: string;
  /**
   * With no hold recorded: the sentence saying so, and which hold `synplug setup` makes on this kernel (`--via auto`);
   * `holds` then lists that hold (absent), not the default one, when they differ
   */
  nothingSetUp?: string;
  /**
   * `net.ipv4.tcp_migrate_req` of the namespace and what it means for the listeners of the holds reported
   * (always there in what the library's `check()` returns; reports.ts)
   */
  sysctl?: MigrateReqReport;
}

/**
 * An IFB of synplug's that no record lists: it carries synplug's alias, its
 * name is `spifb<ifindex of DEV>` and its root qdisc a plug or none (a crash
 * between creating it and recording it, or a removed setup.json).
 */
export interface UnrecordedIfb {
  /** its name */
  ifb: string;
  /** the device its alias names */
  dev: string;
  /** the command that removes it, with synplug's filters on DEV: `synplug teardown --inbound DEV` */
  teardown: string;
}

/** The classifier of the SYN filters: flower where cls_flower exists, u32 otherwise (or as forced). */
export type InboundClassifier = 'flower' | 'u32';
/** A filter protocol. */
export type InboundFamily = 'ip' | 'ipv6';

/** What the inbound hold of one device holds: `setup({ inbound: { dev, ports, addrs? } })`. */
export interface InboundOptions {
  /** the device the connections arrive on (not `lo`) */
  dev: string;
  /** TCP destination ports, 1-65535 (at least one) */
  ports: readonly number[];
  /** destination addresses (IPv4 and/or IPv6); any when absent. They also decide the families: both without addresses */
  addrs?: readonly string[];
  /** force a classifier (default: flower when the kernel has cls_flower, else u32) */
  classifier?: InboundClassifier | 'auto';
}

/** Which hold `setup` builds: `plug` (a plug qdisc), `queue` (a netfilter queue), or `auto` (plug where the kernel has what it needs, else queue). */
export type HoldVia = 'auto' | 'plug' | 'queue';

/** The words `--via` takes. */
export const HOLD_VIAS: readonly HoldVia[] = ['auto', 'plug', 'queue'];

/** The queue hold's options in `setup` (`--queue-num`, `--queue-maxlen`). */
export interface QueueOptions {
  /** the queue number, 0-65535 (default: as recorded, else 4200) */
  num?: number;
  /** the queue's maxlen while held, packets (default 65536) */
  maxlen?: number;
}

/** Options of `setup`. */
export interface SetupOptions extends GuardOptions {
  /** which hold (default `auto`) */
  via?: HoldVia;
  /** the queue hold's queue number and maxlen (with `via: 'queue'`, or `auto` choosing it) */
  queue?: QueueOptions;
  /** delete a root qdisc that is not synplug's (in the way of every hold's prio root) */
  force?: boolean;
  /** record this metrics file in setup.json: protect, plug and release write it when given no `metricsFile` (metrics.ts); its directory must exist and be safe */
  metricsFile?: string;
  /**
   * Set up the inbound hold of this device instead of the local hold (only
   * that hold): SYNs arriving on `dev` to `ports` (and, with `addrs`, to those
   * destination addresses only) are held on an IFB synplug creates.
   */
  inbound?: InboundOptions;
}

/** Options of `teardown`: `inbound` removes only the inbound hold of that device, `local` only the local hold (default: every hold). */
export interface TeardownOptions extends GuardOptions, HoldSelector {
  /** only the hold of this id (as `setup` returned it in `hold`); exclusive with `inbound` and `local` */
  hold?: string;
}

/**
 * What `setup` did. Each field once: the hold's own details are at the top
 * level for the local plug hold (`addr`, `mark`, `limit`), in `inbound` for
 * an inbound plug hold (its `limit` at the top, as a plug's), in `queue` for
 * a queue hold.
 */
export interface SetupResult {
  /** the device the hold sits on (the local hold: lo, or `--dev`; an inbound hold: the device SYNs arrive on) */
  dev: string;
  /** the local plug hold's proxy address */
  addr?: string;
  /** the local plug hold's firewall mark (u32) */
  mark?: number;
  /** a plug hold's plug limit, bytes */
  limit?: number;
  /** false when everything was already in place (and no new metrics file was recorded) */
  changed: boolean;
  /** the steps taken, in order (`add qdisc prio 1: root bands 4`...), then `recorded the metrics file PATH` for a new one */
  actions: string[];
  /**
   * ms a hold should wait before holding, after this setup: a step changed a
   * device's root qdisc, which drops what the device sends meanwhile (a
   * handshake whose last ACK it dropped completes by the SYN-ACK
   * retransmission, 1 s). Absent: none. `protect --setup` waits it.
   */
  settleMs?: number;
  /** this setup added the hold's address (a re-run with nothing to do: false, though an earlier one added it: {@link SetupResult.ownsAddress}) */
  addedAddress: boolean;
  /**
   * the hold's address is synplug's: a setup added it, this one or an earlier one whose record says so (then also
   * with `changed: false`); teardown will remove it. False: it was there before setup (the user's own), or no address
   */
  ownsAddress: boolean;
  /** a plug left buffering by a dead protect was released first */
  recovered?: string;
  /** kernel support that could not be verified before changing anything (found by trying) */
  unverified: string[];
  /** the hold set up: `local` or `inbound:DEV` */
  hold: string;
  /** its kind: `plug` (a plug qdisc) or `queue` (a netfilter queue) */
  via: 'plug' | 'queue';
  /** with `via: 'auto'`: which hold it chose, and why */
  chose?: string;
  /** the queue hold set up (via queue) */
  queue?: { scope: 'local' | 'inbound'; num: number; maxlen: number; verdict: 'native' | 'compat'; table: string; ports: number[]; addrs: string[] };
  /** the inbound hold set up (with `inbound`; its device is `dev`) */
  inbound?: { ifb: string; ports: number[]; addrs: string[]; classifier: 'flower' | 'u32'; families: Array<'ip' | 'ipv6'> };
  /**
   * the held ports (an inbound hold's) on which nothing listens now: a client held there is refused at the release
   * until a server listens (it may start later: not an error); absent when a server listens on each
   */
  portsNotListened?: number[];
}

/** What `plug` did. */
export interface PlugResult {
  /** the local hold's device (its configuration, also when only inbound holds are set up: see `holds`) */
  dev: string;
  /** the local hold's proxy address (likewise) */
  addr: string;
  /** ms since the epoch when marking stops by itself */
  deadline: number;
  /** how long the plug may hold, ms */
  maxHoldMs: number;
  /** the holds buffering (`local`, `inbound:DEV`) */
  holds?: string[];
  /** what went wrong after the plug without changing it (the history or the metrics not written), one sentence each */
  warnings?: string[];
}

/** Options of `plug`. */
export interface PlugOptions extends GuardOptions {
  /** how long the plug may hold, ms (default 10000, at least 10) */
  maxHoldMs?: number;
  /** write the metrics to this file (as protect's `metricsFile`); default: the one setup recorded */
  metricsFile?: string;
}

/** What `release` did. */
/** Options of `release`. */
export interface ReleaseOptions extends GuardOptions {
  /**
   * Leave live leases alone (`release --orphaned`): release only a plug that
   * no running protect or unexpired manual plug holds. For systemd's
   * `ExecStopPost=`, which runs between the stop and the start of a
   * `systemctl restart` that a protect may be holding the plug for.
   */
  orphaned?: boolean;
  /** write the metrics to this file (as protect's `metricsFile`); default: the one setup recorded */
  metricsFile?: string;
}

/** What `release` did. */
export interface ReleaseResult {
  dev: string;
  /** false only with `orphaned`, when live leases hold the plug: nothing was released */
  released: boolean;
  /** the `orphaned` mode was asked for */
  orphaned?: boolean;
  /** with `orphaned`: the live leases left holding the plug (0 when it was released) */
  liveLeases?: number;
  /** the record said the plug was buffering */
  wasBuffering: boolean;
  /** packets still queued right after the release (being sent) */
  backlog: number;
  /** false when there is no plug qdisc (not set up, or removed meanwhile): nothing was held */
  plugExists: boolean;
  /**
   * something is set up here: setup recorded a hold, or plug.json or leases.json exists (absent with a damaged state
   * or `orphaned` with live leases). With `plugExists` false, what says whether that means "not set up" or "nothing
   * held now" (a plug the watchdog released at --max-hold, which removed the local plug hold's plug).
   */
  setUp?: boolean;
  /** how many live leases (running protects, manual plugs) this release broke */
  brokeLeases: number;
  /** of those, the manual plugs' (`synplug plug`): their hold ended by this release, as meant (present when it broke any) */
  brokeManualPlugs?: number;
  /** IFBs carrying synplug's alias that no record lists (a crash, a damaged or removed setup.json), whose plugs were released too: `spifb5 (inbound hold of eth0)` */
  unrecorded?: string[];
  /** holds that another process holds and only it can let go (a queue bound by a running protect), each as a sentence */
  heldElsewhere?: string[];
  /** the holds released, by id */
  holds?: string[];
  /** nothing is set up and nothing was held: the sentence saying so, with the hold `synplug setup` makes on this kernel */
  nothingSetUp?: string;
  /**
   * when it released: what the manual hold held (report.ts's shape). `heldSyns` and `dropped` from the plugs'
   * counters against those a manual `plug` read before buffering (0 without one), `holdMs` from the plug record's
   * `since` when it was buffering (else 0); `refused`, `reset` and `listenerDrops` are not counted (null): only
   * protect watches a reload.
   */
  report?: ReloadReport;
  /** what went wrong after the release without changing it (the history or the metrics not written), one sentence each */
  warnings?: string[];
}

/** A live lease, as `status` lists it. */
export interface LeaseInfo {
  /** `protect` or `manual` (`synplug plug`) */
  owner: 'protect' | 'manual';
  /** the holder's pid */
  pid: number;
  /** the protected command */
  command?: string[];
  /** when it was taken, ms since the epoch */
  since: number;
  /** when it ends by itself, ms since the epoch */
  deadline: number;
  /** the holds it buffers */
  holds: string[];
}

/**
 * What `status` reports: at the top, what concerns every hold reported (the
 * combined state, the plug record, the leases, the sysctl); each hold's own
 * pieces, qdiscs, filters and counters in its entry of `holds` (the local
 * plug hold's entry also has its address, marking and ruleset). No field is
 * repeated at both levels.
 */
export interface StatusResult {
  /**
   * `net.ipv4.tcp_migrate_req` of the namespace and what it means for the listeners of the holds reported
   * (always there in what the library's `status()` returns; reports.ts)
   */
  sysctl?: MigrateReqReport;
  /** the setup check, combined over the holds reported (each hold's pieces are in its entry) */
  state: SetupState;
  /** the recorded plug state */
  plug: PlugRecord | null;
  /** the live leases on the plug (overlapping protects, manual plugs) */
  leases: LeaseInfo[];
  /** the plug was left buffering by a dead protect and released just now */
  recovered?: string;
  /** every hold reported, each with its own state, pieces, qdiscs, filters and plug counters */
  holds: HoldStatus[];
  /** IFBs of synplug's that no record lists (present when there is one); `state` is then at best `partial` */
  unrecorded?: UnrecordedIfb[];
  /** with no hold recorded: as {@link CheckResult}'s (`holds` then lists the hold `synplug setup` makes here, absent) */
  nothingSetUp?: string;
  /** as {@link CheckResult}'s: a setup interrupted in this state directory left the pieces of its holds (each `partial`) */
  interrupted?: string;
  /**
   * `addr` given and no hold set up here holds it (the queue and inbound holds hold their record's addresses): what is
   * set up instead; `state` is then at best `partial` (check lists it as a missing piece; plug, protect, release and
   * teardown refuse it)
   */
  addrNotHeld?: string;
}

/** One hold in `status`. */
export interface HoldStatus {
  /** `local` or `inbound:DEV` */
  id: string;
  /** `local` or `inbound` */
  mode: string;
  /** its kind: `plug` (a plug qdisc) or `queue` (a netfilter queue) */
  via: 'plug' | 'queue';
  /** the device the hold sits on (the inbound hold: the device SYNs arrive on) */
  dev: string;
  state: SetupState;
  /** its pieces, in the order of their setup steps (empty when it is not set up) */
  pieces: PieceState[];
  /** the local plug hold: its proxy address */
  addr?: string;
  /** the local plug hold: synplug's nftables table as `nft list table` prints it, when present */
  ruleset?: string;
  /** the local plug hold: the marking set's elements (marking is on while one is there); times in ms */
  marking?: Array<{ address: string; expiresMs?: number; timeoutMs?: number }>;
  /** the inbound hold: its IFB, ports, addresses and classifier */
  ifb?: string;
  ports?: number[];
  addrs?: string[];
  classifier?: 'flower' | 'u32';
  /** the queue hold: its queue, maxlen, table, verdict expression, and the socket bound to it now (null: nobody holds; SYNs bypass) */
  queueNum?: number;
  maxlen?: number;
  table?: string;
  verdict?: 'native' | 'compat' | 'none';
  bound?: { portId: number; queued: number; dropped: number } | null;
  /**
   * the queue hold: a live lease of this state directory holds it (status says HOLDING, from plug.json and the
   * leases) but nobody binds its queue: its holder process ended during the hold. The sentence saying so.
   */
  holderGone?: string;
  /**
   * the queue hold: the process bound to its queue is stopped (state T or t: SIGSTOP, a freezer, a debugger), so it
   * cannot release what it holds until the next release takes its socket over. The sentence saying so.
   */
  holderStopped?: string;
  /** the plug's qdisc(s) with counters (tc -s -j qdisc show fields; the local hold: every qdisc of its device) */
  qdiscs: QdiscEntry[];
  /** the hold's filters with counters */
  filters: FilterEntry[];
  /** packets held now, passed and dropped by the plug */
  held?: number;
  passed?: number;
  dropped?: number;
}

/** What `teardown` did. */
export interface TeardownResult {
  /** the device of the holds removed when they share one (`lo` for the local hold, DEV for `inbound:DEV`), else the local hold's */
  dev: string;
  /** what was removed, in order */
  removed: string[];
  /** what was left alone, and why */
  kept: string[];
  /** teardown removed the state directory (setup had created it) */
  removedStateDir?: boolean;
  /**
   * the state directory teardown kept, and the files in it after the state files went: what synplug keeps after a
   * teardown (the reload history `history.jsonl`, `history.1.jsonl`, the metrics totals `metrics.json`, the queue
   * holder's `holder.log`), for `synplug history` and the metrics. Absent when the directory is gone or empty.
   */
  keptStateDir?: { path: string; files: string[] };
  /**
   * the holds torn down (`local`, `inbound:DEV`), each once: only holds that existed (recorded, or something of
   * them was found). Ids, as in `plug`'s and the leases' `holds`; `status` and `check` list objects instead.
   */
  holds: string[];
  /**
   * present when nothing was set up (the whole teardown, or the hold `--inbound DEV` / `--local` names): the
   * sentence saying so; nothing was removed, `holds` is empty, and the exit status is 0
   */
  nothingSetUp?: string;
  /**
   * The live leases this teardown broke (present when there was one): a running `protect`, whose hold was released
   * and removed under it (its command goes on without the hold; it reports that a teardown ended the hold, and
   * records nothing in the state directory teardown cleared), or a manual `plug` before its deadline.
   */
  brokenLeases?: BrokenLease[];
  /**
   * The listening sockets that accepted connections to an address this teardown removed (bound to it, or to the
   * wildcard; present when there is one): their clients connecting to that address are refused until setup adds it
   * again
   */
  listenersCut?: ListenerCut[];
}

/** A listening socket that accepted connections to an address teardown removed ({@link TeardownResult.listenersCut}). */
export interface ListenerCut {
  /** the address removed */
  address: string;
  /** the address the socket is bound to (the removed one, or a wildcard: `0.0.0.0`, `::`) */
  listener: string;
  /** its port */
  port: number;
  /** the processes holding it (empty when they cannot be seen: another user's without CAP_SYS_PTRACE) */
  pids: number[];
  /** their names (`/proc/PID/comm`), each once */
  commands: string[];
}

/** A live lease a teardown broke (leases.json's entry, in part). */
export interface BrokenLease {
  /** `protect` (a running synplug protect) or `manual` (`synplug plug`) */
  owner: 'protect' | 'manual';
  /** pid of the holder (the protect; a manual plug's `synplug plug`) */
  pid: number;
  /** the protected command, when a protect held it */
  command?: string[];
  /** the hold ids it held (`local`, `queue`, `inbound:DEV`...) */
  holds: string[];
  /** when it was taken, ms since the epoch */
  since: number;
}

/** What `recoverStale` did. */
export interface Recovery {
  /** a plug left buffering was released */
  released: boolean;
  /** why it counted as left behind */
  reason?: string;
}

/** Counters of a plug qdisc (from its TCA_STATS2), summed over every hold. */
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
  /** why held SYNs were dropped other than over the limit (a release verdict the kernel refused twice), one sentence each */
  failures?: string[];
  /** what a release did that lost nothing but is news (a stopped queue holder taken over and killed), one sentence each */
  notes?: string[];
  /** `drops` misses what was dropped uncounted: a queue's holder process died during the hold, its counter with it */
  dropsLost?: true;
  /** when the hold ended before its release (a queue's holder process died: nothing was held after), ms since the epoch; summed over holds, only when every hold ended so */
  holdEndedAt?: number;
}

/** Where `--wait-listen` looks: a TCP port, optionally on one address. */
export interface ListenTarget {
  /** IPv4 or IPv6 address; any address when absent */
  address?: string;
  /** TCP port, 1-65535 */
  port: number;
}

/** A listening TCP socket, as sock_diag reports it. */
export interface Listener {
  address: string;
  port: number;
  /** the socket's inode: a new listener has a new one */
  inode: number;
  /** --wait-listen: a socket that was there before the reload, now held by a process that did not hold it (the server handed it over; listen-holders.ts) */
  handedOver?: boolean;
  /** --wait-listen: how many sockets of before the reload, held only by processes of before it (sockets the reload closes), the wait saw close before it ended (listen-holders.ts `closingInodes`) */
  oldClosed?: number;
}

/**
 * What the plug window (`runProtected`) needs from the kernel side: a
 * `GuardSession` (session.ts) in production, a recording fake in unit tests.
 * Every method acts on every hold of the session at once.
 */
export interface ProtectSession {
  readonly config: GuardConfig;
  /** the plug qdiscs' counters, summed */
  plugStats(): Promise<PlugStats>;
  /** listening TCP sockets matching the target */
  listeners(t: ListenTarget): Promise<Listener[]>;
  /** whether the address is one of the namespace's own (undefined: unknown); optional: without it, not asked */
  isLocalAddress?(address: string): Promise<boolean | undefined>;
  /** turn marking on for `timeoutMs` (kernel-enforced) */
  arm(timeoutMs: number): Promise<void>;
  /** turn marking off */
  disarm(): Promise<void>;
  /** buffer every plug (one datagram) */
  buffer(): Promise<void>;
  /**
   * release every plug (one datagram; always safe); `afterwards: false`
   * leaves {@link ProtectSession.afterRelease} to the caller (the window
   * times the release alone)
   */
  release(options?: { afterwards?: boolean }): Promise<void>;
  /** after a release: forget what the hold left in the kernel's caches (local holds' tcp_metrics). Never throws. */
  afterRelease?(): Promise<void>;
  /** phase one: make the holds' start quick, holding nothing (a queue's holder process started), and add the armed pieces */
  prepare?(): Promise<void>;
  /** the plugs' counters once a release's packets left them, read before the armed pieces go (undefined: no plug) */
  releasedStats?(): Promise<PlugStats | undefined>;
  /** phase one's first part: the holds' armed pieces (the local plug hold's plug among them), holding nothing; prepare adds them too */
  armPieces?(): Promise<void>;
  /** the release, pre-encoded for the watchdog */
  releaseSteps(): WatchdogStep[];
  /** the ids of the holds it buffers (recorded in the lease); `['local']` when absent */
  readonly holdIds?: readonly string[];
  /** each hold's id and kind, for the result */
  readonly holdKinds?: ReadonlyArray<{ id: string; via: 'plug' | 'queue' }>;
  /** what each hold holds, for the reload's report; without it the report counts only the holds' own counters */
  heldTraffic?(): HeldTraffic[];
  /**
   * the reload report's kernel side; absent (a GuardSession): report.ts's own `armReport` and
   * `retireReportChain`, on this namespace's nftables. A session without a kernel (the unit tests') gives its own.
   */
  readonly reportCounters?: ReportCounters;
}

/** The reload report's kernel side, as {@link ProtectSession.reportCounters} gives it (the signatures of report.ts's). */
export interface ReportCounters {
  /** armed before the hold, for what the holds hold, in the state directory's chain (report.ts `armReport`); never throws */
  arm(held: readonly HeldTraffic[], stateDir: string): Promise<ReportCounting>;
  /** after a protect: the state directory's counter chain goes when no holder is left (report.ts `retireReportChain`); never throws */
  retire(store: StateStore): Promise<{ removed?: string; kept?: string } | undefined>;
}

/** Options of `runProtected`. */
export interface ProtectOptions {
  /** the command and its arguments, run without a shell */
  command: string[];
  /** the longest the plug may hold, ms (default 10000) */
  maxHoldMs?: number;
  /** release only once a new listener on this port exists (bounded by maxHoldMs) */
  waitListen?: ListenTarget;
  /** run the command as this user */
  user?: string;
  /** phase one: run this check command (no shell) to completion before anything is held; if it fails, nothing is held and `command` is not run (precheck.ts) */
  check?: string[];
  /** where the check command's output (stdout and stderr, as chunks) goes as it arrives (default: nowhere; the library prints nothing) */
  onCheckOutput?: (chunk: Buffer) => void;
  /** with `check`: kill the check's process group and fail (`check-failed`, nothing held) after this long, ms (default 60000: precheck.ts PRECHECK_TIMEOUT_MS) */
  checkTimeoutMs?: number;
  /** called with one line for each notable event (max-hold reached, retries...) */
  onNotice?: (line: string) => void;
}

/** Options of the guard's `protect`. */
export interface GuardProtectOptions extends GuardOptions, ProtectOptions {
  /** set up first when not set up */
  setup?: boolean;
  /** add this reload to the cumulative totals and write them to this file in Prometheus' text format (metrics.ts); its directory must exist and be safe */
  metricsFile?: string;
}

/** What `runProtected` (and `protect`) report. Times in the units their names give. */
export interface ProtectResult {
  command: string[];
  /** the command's exit status, 128 + signal number when a signal killed it (not synplug's own exit code) */
  exitCode: number;
  /** the signal that killed the command, if one did */
  signal: string | null;
  /** when the command started (its gate opened, after phase one and the hold), ms since the epoch: the history line's `start` */
  commandStartedAt: number;
  /** what the reload held and lost (report.ts): held SYNs, hold time, dropped, refused, reset, listener drops, lossless */
  report: ReloadReport;
  /** the release came from the max-hold deadline, not from the command */
  maxHoldReached: boolean;
  /** bytes that passed the hold during the window (the held SYNs' bytes) */
  bytesReleased: number;
  /** packets still queued in the plug right after the release ack (dequeued next) */
  backlogAfterRelease: number;
  /** the time synplug itself spent inside the plug window, microseconds */
  overhead: {
    /** plug ack to the gate's opening (the command's exec follows) */
    plugAckToCommandStartUs: number;
    /** the command's exit (as seen by synplug) to the release ack; with --wait-listen from the moment the new listener was seen (null: released at the max-hold, or before the command ended: a manual release, a teardown) */
    commandExitToReleaseAckUs: number | null;
    /** with --wait-listen: the command's exit to the new listener seen, microseconds (the server's time, not counted in `totalUs`) */
    listenWaitUs?: number;
    /** plugAckToCommandStartUs + commandExitToReleaseAckUs: synplug's own time */
    totalUs: number;
  };
  /** how many release requests it took (0 when another holder kept the plug) */
  releaseAttempts: number;
  /** this protect's release let the hold go, plug or queue (false: other live leases still hold it; the last one releases) */
  releasedHold: boolean;
  /** when not released: how many other holders kept it */
  leftToHolders?: number;
  /** this protect's lease was gone when it ended: a manual `synplug release` broke it, or its watchdog dropped it at the deadline (that released the plug then; `releasedHold` is false) */
  leaseBroken?: boolean;
  /**
   * with `leaseBroken`: a teardown broke it, released the hold and removed the state directory's records; nothing of
   * this reload is recorded there again (no history line, no metrics: the directory stays as teardown left it)
   */
  tornDown?: boolean;
  /**
   * this protect's lease was dropped at its own max-hold deadline, by its watchdog or the queue's holder, while this
   * protect was late to its own release (a loaded host): that let the hold go then (`releasedHold` is false, no
   * `leaseBroken`: no manual release was involved)
   */
  releasedAtDeadline?: boolean;
  /** the listener found, with --wait-listen */
  newListener?: Listener | null;
  /** with `check`: what the check command did (timed before the plug window; not part of `heldMs`) */
  check?: PrecheckResult;
  /** the holds held, each with its kind (`plug`: a plug qdisc; `queue`: a netfilter queue) */
  holds?: Array<{ id: string; via: 'plug' | 'queue' }>;
  /** what went wrong after the command ran without changing its outcome (the history not written...), one sentence each */
  warnings?: string[];
}
