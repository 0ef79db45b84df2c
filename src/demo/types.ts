/**
 * The shapes of `synplug demo`: its options, the record of one client
 * request, and what a run reports (per phase and per restart). Kept apart
 * from the engine so that the statistics, the clients, the server and the
 * orchestration share them without importing each other.
 *
 * Times are milliseconds (floating point, from `performance.now()`); a value
 * that could not be measured is `null` (JSON has no NaN).
 *
 * @module
 */

/**
 * How a request failed, from the client's side:
 *
 * - `refused`: ECONNREFUSED: nothing was listening (the kernel answered the SYN with a RST);
 * - `reset`: ECONNRESET or EPIPE, before or after the connection was made
 *   (e.g. it sat in the accept queue of a listener that closed);
 * - `timeout`: no complete response within the request timeout (connect included);
 * - `bad-response`: the server closed the connection without sending exactly the expected reply;
 * - `other`: any other socket error (its code is counted in {@link PhaseResult.otherErrors}).
 */
export const FAILURE_KINDS = ['refused', 'reset', 'timeout', 'bad-response', 'other'] as const;

/** One of {@link FAILURE_KINDS}. */
export type FailureKind = (typeof FAILURE_KINDS)[number];

/** One client request: a new connection, the server's reply read to its close. */
export interface RequestRecord {
  /** when the request started, ms (performance.now() clock) */
  startMs: number;
  /** ms from the start to the established connection; null if it never connected */
  connectMs: number | null;
  /** ms from the start to the end of the request (the server's close, or the failure); connect included */
  totalMs: number;
  /** null on success */
  failure: FailureKind | null;
  /** the socket error's code (e.g. 'ECONNREFUSED'), when a socket error ended it */
  errorCode?: string;
}

/** Latency of the successful requests of a phase, connect included, ms (nearest-rank percentiles). */
export interface LatencySummary {
  /** median; null when no request succeeded */
  p50: number | null;
  /** 99th percentile; null when no request succeeded */
  p99: number | null;
  /** slowest; null when no request succeeded */
  max: number | null;
}

/** One restart of the server: its listening socket closed, and a new one opened after the gap. */
export interface RestartResult {
  /** when the restart began, ms after the phase started */
  atMs: number;
  /** ms from closing the old listening socket to the new one listening (the gap, plus the time to listen) */
  closedMs: number;
  /**
   * connections waiting in the old socket's accept queue when it closed (the kernel resets them),
   * from sock_diag's idiag_rqueue after the drain; null when it could not be read
   */
  queuedAtClose: number | null;
  /** protected phase: how long the plug held (protect's plug ack to release ack), ms */
  heldMs?: number;
  /** protected phase: packets that passed the plug during the window (the SYNs held, retransmissions included), from the plug qdisc's counters */
  synsHeld?: number;
  /** protected phase: packets the plug dropped over its limit during the window */
  drops?: number;
  /** protected phase: the release came from the max-hold deadline, not from the new listener */
  maxHoldReached?: boolean;
}

/** What one phase (unprotected or protected) measured. */
export interface PhaseResult {
  /** `unprotected`: restarts with nothing held; `protected`: each restart under `protect` */
  name: 'unprotected' | 'protected';
  /** wall time of the phase, ms (clients started to clients stopped) */
  durationMs: number;
  /** requests made (each a new connection) */
  requests: number;
  /** requests answered with the expected reply */
  ok: number;
  /** requests that failed, of any kind */
  failed: number;
  /** failed requests by kind (every kind present, 0 when none) */
  failures: Record<FailureKind, number>;
  /** `other` failures by socket error code */
  otherErrors: Record<string, number>;
  /** latency of the successful requests, connect included */
  latencyMs: LatencySummary;
  /** restarts asked for */
  restartsWanted: number;
  /** restarts done, in order (fewer than wanted when the phase's time ran out or it was interrupted) */
  restarts: RestartResult[];
  /** protected phase: mean and max of {@link RestartResult.heldMs}, ms; null otherwise or without restarts */
  heldMs: { mean: number; max: number } | null;
  /** protected phase: mean per restart and total of {@link RestartResult.synsHeld}; null otherwise or without restarts */
  synsHeld: { mean: number; total: number } | null;
}

/**
 * The demo's conclusion:
 *
 * - `protected`: the unprotected phase lost requests and the protected phase none;
 * - `failed`: the protected phase lost at least one request;
 * - `insensitive`: neither phase lost a request: the restarts did not hurt
 *   unprotected clients on this machine, so the demo showed nothing.
 */
export type DemoVerdict = 'protected' | 'failed' | 'insensitive';

/** What {@link runDemo} reports. */
export interface DemoResult {
  /** where it ran: `own`, network namespaces of the demo's own (the caller's was not changed); `caller`, the caller's (`here`) */
  netns: 'own' | 'caller';
  /** `local`: clients on this machine, the local hold on `lo`; `inbound`: clients in the demo's own namespace, the inbound hold on the veth pair's end here */
  mode: 'local' | 'inbound';
  /** the hold used: the plug hold, or (a kernel without sch_plug...) the queue hold */
  via: 'plug' | 'queue';
  /** the hold's device (`lo`, or the server-side veth end) and the server's address; the server listened on `addr:port` */
  dev: string;
  addr: string;
  port: number;
  /** the options used */
  seconds: number;
  restarts: number;
  gapMs: number;
  clients: number;
  /** the max-hold of each protected restart, ms */
  maxHoldMs: number;
  /** inbound mode: the client side of the topology the demo created and removed (topology.ts); the server side is `dev` */
  inbound?: {
    /** the veth end in the client namespace */
    clientDev: string;
    /** the clients' address (169.254.S.2) */
    clientAddr: string;
  };
  /** the hold: set up by the demo (and removed again), or already set up (left as it was; local mode only) */
  setup: {
    by: 'demo' | 'already';
    /** what setup did (by: demo) */
    actions: string[];
    /** what teardown removed at the end (by: demo), and in inbound mode the topology removed after it */
    removed: string[];
  };
  /** phase 1, then phase 2 */
  phases: { unprotected: PhaseResult; protected: PhaseResult };
  verdict: DemoVerdict;
  /** one sentence saying what the verdict means */
  message: string;
  /** notices from protect (release retries, max-hold reached...) */
  notices: string[];
}

/** Options of {@link runDemo}. Every field is optional. */
export interface DemoOptions {
  /**
   * how long each phase runs, seconds (> 0, at most 600; default 5). A phase whose
   * restarts run late (a protected restart starts protect's watchdog first) stretches
   * to do them all, up to 10 times this; restarts that would end later are not done.
   */
  seconds?: number;
  /** restarts per phase (whole number 1-1000; default 10), spread evenly over the phase */
  restarts?: number;
  /** how long the server has no listening socket at each restart, ms (whole number 1-60000; default 200) */
  gapMs?: number;
  /** concurrent client loops (whole number 1-256; default 16) */
  clients?: number;
  /** a request that has not completed after this long fails as `timeout`, ms (at least 100; default: a protected restart's max-hold plus 10 s) */
  requestTimeoutMs?: number;
  /** the state directory of the guard (default: the guard's, defaultStateDir(): /run/synplug, or /run/synplug/netns/<cookie> in another network namespace); without `here`, where the demo makes a directory of its own for its records (default the system's temporary directory), removed at the end */
  stateDir?: string;
  /** called with a line for each step (setting up, each phase...); the engine prints nothing itself */
  onProgress?: (line: string) => void;
  /** aborting it stops the demo as SIGINT does (everything the demo set up is removed) */
  signal?: AbortSignal;
  /** install SIGINT/SIGTERM handlers for the run (default true): a signal stops the demo and cleans up */
  handleSignals?: boolean;
  /**
   * through the inbound hold (default false): the demo creates a network namespace of its own joined by a
   * veth pair (169.254.S.1/30 here, .2 there), runs the clients in a process inside it, sets up the inbound
   * hold on its end of the pair for the server's port, and removes all of that at the end
   */
  inbound?: boolean;
  /**
   * run in the caller's network namespace (default false): the demo then sets up its hold on the caller's `lo` (or, with
   * `inbound`, a veth pair's end there) for its length. By default it runs in a network namespace of its own, which needs
   * CAP_SYS_ADMIN as well, and changes nothing of the caller's
   */
  here?: boolean;
  /** which hold (default `auto`: the plug hold where the kernel has what it needs, else the queue hold) */
  via?: 'auto' | 'plug' | 'queue';
}
