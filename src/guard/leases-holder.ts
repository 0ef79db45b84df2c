/**
 * Leases across processes for a hold that only a live socket keeps (the
 * queue hold): the queue's bound socket lives in ONE process, the holder,
 * for as long as any lease on it lives; every `protect`, `plug` and
 * `release` reaches it through a unix socket in the state directory.
 *
 * - The holder binds the queue itself (copy mode META, fail-open off), so the
 *   bound socket has one copy, in one process, whoever started it. The first
 *   `protect` or `plug` that finds no holder starts one in its phase one
 *   (detached, no stdio left open to its starter: {@link prepareHolder}) and
 *   waits for its `ready`. It binds at the first `hold`, so that its start (a
 *   cold Node start, seconds on a loaded host) holds nothing and takes
 *   nothing from `--max-hold`; unbound, it exits once no connection is left
 *   (its starter gave up) or after {@link IDLE_MS} without one.
 * - Its unix socket, `queue-N.sock` in the state directory (mode 0600), takes
 *   only peers whose SO_PEERCRED uid is root or the holder's own.
 * - Protocol, one JSON object per line each way:
 *   `{"op":"hold"}` → `{"ok":true,"pid":P}` (bound; a protect keeps the
 *   connection open for as long as it holds, a `plug` closes it at once), or
 *   `{"ok":false,"error":"…","foreign":true|false}` when it cannot bind (the
 *   holder then exits);
 *   `{"op":"release"}` → `{"ok":true,"released":N,"dropped":D}` (one batch
 *   ACCEPT, the unbind; the holder then exits);
 *   a holder on its way out answers `{"ok":false,"closing":true}`.
 * - The leases themselves stay in leases.json under the lease lock
 *   (leases.ts): the holder reads them, never decides alone. It re-judges
 *   them when a protect's connection closes (that protect's lease goes: the
 *   peer's pid is the lease's), at the earliest deadline among the live
 *   leases, and every second; when no live lease is left it releases, records
 *   the release and exits.
 * - Nothing is left held if any process is SIGKILLed: a protect's death
 *   closes its connection; a deadline passes on its own; the holder's death
 *   closes the only copy of the bound socket, and the kernel drops what was
 *   queued (clients retransmit) while bypass lets new SYNs through.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { chmodSync, lstatSync, readFileSync, unlinkSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { SynplugError, UsageError } from '../netlink/errors.js';
import { libc } from '../netlink/libc.js';
import { defaultNetns, netnsForChild } from '../netlink/netns.js';
import { listBoundQueues, NfqueueHolder, netlinkSocketOwners, nothingQueuedWithin } from '../netlink/nfqueue.js';
import { NetlinkConnection } from '../netlink/connection.js';
import { logHolderFailure } from './holder-log.js';
import { openCheckedDir, pinnedFilePath, pinnedStateDir, pinStateDir } from './state-fs.js';
import { UNIX_PATH_MAX } from './config.js';
import { deadProtectLeases, dropLease, recordedLeases, leaseLive, withLeaseLock, type LeaseKernel } from './leases.js';
import { ownerAlive, processState, StateStore, type Lease } from './state.js';
import { killedProtectEntry, maxHoldPlugEntry, recordHistory, recordKilledProtects } from './history.js';
import { watchdogEntryPath, type WatchdogStep } from './watchdog.js';

/** The argument the watchdog's entry point takes to run as a queue holder instead. */
export const QUEUE_HOLDER_ARG = '--queue-holder';
/** The environment variable carrying the holder's {@link QueueHolderConfig} (JSON). */
export const QUEUE_HOLDER_ENV = 'SYNPLUG_QUEUE_HOLDER';
/** How often the holder re-judges the leases at the latest, ms. */
const RECHECK_MS = 1000;
/** An unbound holder with no connection exits after this long, ms. */
const IDLE_MS = 30_000;
/** SOL_SOCKET and SO_PEERCRED (<asm-generic/socket.h>); struct ucred { pid_t pid; uid_t uid; gid_t gid; }, 12 bytes. */
const SOL_SOCKET = 1;
const SO_PEERCRED = 17;

/** What a holder is started with. */
export interface QueueHolderConfig {
  /** the state directory (leases.json, the lock, the holder's socket) */
  stateDir: string;
  /** the queue number, 0-65535 */
  queueNum: number;
  /** the queue's maxlen, packets */
  maxlen: number;
  /** the local hold's device, for plug.json */
  dev: string;
  /**
   * The removal of the holds' armed pieces (the queue chain: watchdog steps, as the hold's `removeSteps` give them),
   * which this holder runs as it exits after holding, when no live lease is left: with protect's watchdog killed too
   * (or a manual plug's), nothing of the hold then stays on the data path until the next synplug command.
   */
  disarm?: WatchdogStep[];
  /**
   * The state directory's identity its starter pinned (state-fs.ts's `pinnedStateDir`; set by the start): the holder
   * pins it at once, and refuses the path when it comes to name another directory.
   */
  stateDirId?: string;
}

/**
 * What a `release` request answers: SYNs let go by the verdict, and dropped (while held: over maxlen, buffer
 * full; or at the unbind, when the verdict was refused twice: `failure` then says why).
 */
export interface HolderRelease {
  released: number;
  dropped: number;
  /** the verdict failed (its retry too): the SYNs held were dropped by the unbind (clients retransmit); in the holder log too */
  failure?: string;
  /** the netlink port of the holder's queue socket, bound until its unbind right after this answer (not someone else's) */
  portId?: number;
  /** the holder could not answer (stopped, hung) and was killed: why, and what that did; `dropped` then counts the SYNs queued at the kill */
  killed?: string;
  /** with `killed`: its queue socket was taken over first, and the SYNs it held released, not dropped */
  takenOver?: boolean;
}

/**
 * The holder's unix socket for a queue, in the state directory.
 * @throws {UsageError} the path would not fit in sun_path (the kernel would cut it short, to a path outside the directory)
 */
export function holderSocketPath(stateDir: string, queueNum: number): string {
  const path = join(stateDir, `queue-${queueNum}.sock`);
  if (Buffer.byteLength(path) > UNIX_PATH_MAX - 1) {
    throw new UsageError(
      `the queue holder's socket '${path}' is longer than a unix socket path can be (${UNIX_PATH_MAX - 1} bytes): give a shorter --state-dir (or SYNPLUG_STATE_DIR)`,
    );
  }
  return path;
}

/**
 * A connected unix socket's peer: struct ucred from SO_PEERCRED.
 * @returns undefined when the descriptor cannot be read
 */
function peerCred(sock: Socket): { pid: number; uid: number } | undefined {
  const fd = (sock as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) return undefined;
  const v = Buffer.alloc(12);
  if (libc('getsockopt')(fd, SOL_SOCKET, SO_PEERCRED, v, [12]) !== 0) return undefined;
  return { pid: v.readInt32LE(0), uid: v.readUInt32LE(4) };
}

/** Read one JSON line from a socket: undefined when it closes first (or the line is not JSON), null when `timeoutMs` passes first. */
function readLine(sock: Socket, timeoutMs: number): Promise<Record<string, unknown> | undefined | null> {
  return new Promise((resolve) => {
    let buf = '';
    const done = (v: Record<string, unknown> | undefined | null) => {
      clearTimeout(timer);
      sock.off('data', onData);
      sock.off('close', onClose);
      resolve(v);
    };
    const onData = (d: Buffer) => {
      buf += d.toString('utf8');
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      try {
        done(JSON.parse(buf.slice(0, nl)) as Record<string, unknown>);
      } catch {
        done(undefined);
      }
    };
    const onClose = () => done(undefined);
    const timer = setTimeout(() => done(null), timeoutMs);
    sock.on('data', onData);
    sock.once('close', onClose);
  });
}

/** Connect to the holder of a queue; undefined when none listens there. */
async function connectHolder(stateDir: string, queueNum: number): Promise<Socket | undefined> {
  const at = holderSocketAt(stateDir, queueNum);
  if (at === undefined) return undefined; // no directory: no holder
  const path = holderSocketPath(stateDir, queueNum);
  refuseLinkedSocket(at, path);
  return connectPath(at, path);
}

/**
 * The holder's socket of a queue as reached through the descriptor of the
 * state directory this process pinned (state-fs.ts's `pinnedFilePath`): a
 * directory renamed, with a link, a bind mount or another directory put in
 * its place, never leads a bind, a connect or an unlink to another
 * directory's socket.
 * @returns undefined when the directory does not exist
 * @throws {UsageError} the path is too long ({@link holderSocketPath})
 * @throws {StateFileError} the directory is unsafe, or swapped before this process pinned it
 */
function holderSocketAt(stateDir: string, queueNum: number): string | undefined {
  return pinnedFilePath(stateDir, basename(holderSocketPath(stateDir, queueNum)));
}

/**
 * Refuse a holder socket path that is not this directory's own socket: a
 * symbolic link, or a hard link (a socket file that another name also
 * reaches: its link count above 1), would reach the holder of another state
 * directory, and a release through it would end that directory's hold.
 * Nothing there is fine (no holder runs).
 * @param at the socket as reached ({@link holderSocketAt})
 * @param path the socket's path, for the message
 * @throws {SynplugError} (`bad-state`) a link, or not a socket
 */
function refuseLinkedSocket(at: string, path: string): void {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(at);
  } catch {
    return; // nothing there: no holder runs
  }
  const what = st?.isSymbolicLink()
    ? 'a symbolic link'
    : !st?.isSocket()
      ? 'not a socket'
      : st.nlink > 1
        ? `a socket with ${st.nlink} names (a hard link)`
        : undefined;
  if (what)
    throw new SynplugError(
      `${path} is ${what}, not the queue holder's own socket of this state directory: it could reach another directory's holder, so nothing was asked of it; remove it (and find out who made it)`,
      'bad-state',
    );
}

/**
 * Connect to a unix socket path; undefined when nobody listens there. The
 * listener must be root or this user (its SO_PEERCRED uid): anyone else's is
 * not synplug's holder, and nothing it says is trusted.
 * @param at the socket as reached ({@link holderSocketAt})
 * @param path the socket's path, for the message
 * @throws {SynplugError} another user listens there (`bad-state`, named, with its uid)
 */
function connectPath(at: string, path = at): Promise<Socket | undefined> {
  return new Promise((resolve, reject) => {
    const s = connect(at);
    s.once('connect', () => {
      s.removeAllListeners('error');
      s.on('error', () => {});
      const peer = peerCred(s);
      const me = process.getuid?.() ?? 0;
      if (peer && (peer.uid === 0 || peer.uid === me)) return resolve(s);
      s.destroy();
      reject(
        new SynplugError(
          `${path} is listened on by ${peer ? `uid ${peer.uid} (pid ${peer.pid})` : 'a process whose credentials cannot be read'}, neither root nor this user: it is not synplug's queue holder, and nothing was asked of it; remove that socket (and find out who made it) before using this state directory`,
          'bad-state',
        ),
      );
    });
    s.once('error', () => resolve(undefined));
  });
}

/**
 * Remove the socket of a queue's holder that is gone: nobody answers on it
 * (a holder killed could not remove it). Teardown's, after the release: the
 * state directory then holds no leftover of the hold.
 * @returns whether a socket was removed
 * @throws {SynplugError} another user listens there (`bad-state`)
 * @throws {StateFileError} the directory is unsafe, or the socket cannot be removed
 */
export async function removeStaleHolderSocket(stateDir: string, queueNum: number): Promise<boolean> {
  const path = holderSocketPath(stateDir, queueNum);
  const at = holderSocketAt(stateDir, queueNum);
  if (at === undefined) return false;
  const s = await connectPath(at, path);
  if (s) {
    s.destroy();
    return false; // a holder answers there: its own
  }
  return new StateStore(stateDir).removeSocket(basename(path));
}

/**
 * How long a release waits for the holder's answer, ms. Its release is one
 * batch verdict (2,000 SYNs in 33 ms, DESIGN.md), so a holder silent this
 * long is stopped (SIGSTOP, a freezer, a debugger) or hung, and it is killed:
 * holding past the release, and past `--max-hold`, is the failure synplug
 * must never let happen.
 */
export const HOLDER_ANSWER_MS = 2000;

/**
 * Ask the running holder of a queue to release it now (one batch ACCEPT, the
 * unbind; it then exits). A holder that cannot answer (stopped, state `T`
 * or `t` in /proc/PID/stat, at once; hung, after `answerMs`) is killed
 * (SIGKILL), so that nothing stays held: the kernel drops the SYNs it held
 * (their clients connect when they retransmit, 1 s or more) and new SYNs
 * pass (the rule's bypass). Only a process that is this directory's holder
 * is killed: the listener of its socket (SO_PEERCRED, root or this user),
 * running the holder's entry point ({@link QUEUE_HOLDER_ARG}), never this
 * process.
 * @param answerMs how long to wait for the answer, ms ({@link HOLDER_ANSWER_MS})
 * @returns what it released (`killed` when it was killed instead); undefined when no holder runs (nothing is held through one)
 */
export async function releaseThroughHolder(stateDir: string, queueNum: number, answerMs = HOLDER_ANSWER_MS): Promise<HolderRelease | undefined> {
  const s = await connectHolder(stateDir, queueNum);
  if (!s) return undefined;
  try {
    const pid = peerCred(s)?.pid;
    // The request first (nothing delays the holder's verdict), then a look at whether it can answer at all.
    s.write(`${JSON.stringify({ op: 'release' })}\n`);
    const a = await answerOf(s, pid, answerMs);
    const r = a.line;
    if (r?.ok === true)
      return {
        released: Number(r.released) || 0,
        dropped: Number(r.dropped) || 0,
        ...(typeof r.failure === 'string' && { failure: r.failure }),
        ...(Number.isInteger(r.portId) && { portId: r.portId as number }),
      };
    if (!a.stopped && !a.timedOut) return undefined; // it closed without an answer: gone (killed, or on its way out)
    if (pid === undefined) return undefined;
    const why = a.stopped ?? `it did not answer the release within ${answerMs} ms (hung)`;
    return await killHolder(pid, queueNum, why);
  } finally {
    s.destroy();
  }
}

/**
 * The holder's answer to a request just written on `s`, while watching
 * (every 50 ms) whether its process `pid` can answer at all.
 * @returns `line` (its answer; undefined when it closed first, or with `stopped`/`timedOut`), `stopped` (why it
 *   cannot answer: stopped by a signal or a debugger), or `timedOut` (silent for `ms`)
 */
async function answerOf(s: Socket, pid: number | undefined, ms: number): Promise<{ line?: Record<string, unknown>; stopped?: string; timedOut?: true }> {
  let stopped = pid === undefined ? undefined : stoppedState(pid);
  if (stopped !== undefined) return { stopped };
  const watch = setInterval(() => {
    stopped ??= pid === undefined ? undefined : stoppedState(pid);
    if (stopped !== undefined) s.destroy();
  }, 50);
  const r = await readLine(s, ms).finally(() => clearInterval(watch));
  if (stopped !== undefined) return { stopped };
  return r === null ? { timedOut: true } : r === undefined ? {} : { line: r };
}

/** Why a process cannot answer (stopped by a signal or a debugger), from its state; undefined when it can. */
function stoppedState(pid: number): string | undefined {
  const st = processState(pid);
  return st === 'T' ? 'it was stopped (state T: SIGSTOP, SIGTSTP or a freezer)' : st === 't' ? 'it was stopped by a debugger (state t)' : undefined;
}

/**
 * End a queue's hold whose holder cannot release, and the holder. First,
 * without loss: a copy of its bound socket (pidfd_getfd(2),
 * NfqueueHolder.takeOver) stops holding (fail-open at maxlen 0), releases
 * what is queued with one batch verdict, and unbinds after the holder is
 * killed (SIGKILL). Where the copy cannot be had (a kernel before 5.6, no
 * ptrace access), the kill alone fails open: the kernel drops what was
 * queued (clients retransmit, 1 s or more) and new SYNs pass. Either way the
 * queue is unbound when this returns (waited for up to 2 s, every 10 ms).
 * @returns the release as it happened (`killed` saying why and what it did); undefined when the process is not a holder (nothing was done)
 */
async function killHolder(pid: number, queueNum: number, why: string): Promise<HolderRelease | undefined> {
  if (!isHolderProcess(pid)) return undefined;
  const ns = defaultNetns();
  const bound = queueBoundBy(pid, queueNum, ns);
  let taken: NfqueueHolder | undefined;
  let notTaken: string | undefined;
  let released = 0;
  if (bound) {
    try {
      taken = NfqueueHolder.takeOver(pid, queueNum, bound.portId, { netns: ns });
      await taken.passThrough();
      released = await taken.release();
    } catch (e) {
      notTaken = (e as Error).message;
    }
  }
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* gone meanwhile: its socket is closed, or in our copy */
  }
  let dropped = 0;
  if (taken && notTaken === undefined) {
    // What was queued between the verdict and the kill, then the unbind: nothing is left to drop.
    released += await taken.release().catch(() => 0);
    const e = taken.kernelCounters();
    dropped = e ? e.queueDropped + e.userDropped : 0;
  } else if (bound) dropped = listBoundQueues(ns).find((e) => e.queue === queueNum && e.portId === bound.portId)?.queued ?? bound.queued;
  await taken?.close().catch(() => {});
  const until = Date.now() + 2000;
  while (bound && Date.now() < until && listBoundQueues(ns).some((e) => e.queue === queueNum && e.portId === bound.portId))
    await new Promise((r) => setTimeout(r, 10));
  const what =
    taken && notTaken === undefined
      ? `its queue socket was taken over (pidfd_getfd) and released the ${released} SYN(s) it held${dropped ? `; the kernel had dropped ${dropped} over the queue's limits` : ''}`
      : dropped
        ? `the kernel dropped the ${dropped} SYN(s) it held (their clients connect when they retransmit, 1 s or more)${notTaken ? `; its queue socket could not be taken over to release them (${notTaken})` : ''}`
        : 'it held no SYN at that moment';
  return {
    released,
    dropped,
    ...(taken && notTaken === undefined && { takenOver: true }),
    killed: `its holder process ${pid} could not answer the release: ${why}. It was killed so that nothing stays held: ${what}, and new SYNs pass`,
  };
}

/**
 * Refuse a state directory whose path names another directory than the one
 * this process pinned (state-fs.ts), as its own check does: what a holder
 * that could not start said of it is that refusal.
 * @throws {StateDirSwappedError} swapped (or {@link StateFileError}: unsafe now)
 */
function refuseSwapped(stateDir: string): void {
  openCheckedDir(stateDir, false)?.close();
}

/**
 * Connect to the holder of a queue, starting one when none runs (phase one:
 * nothing is bound yet). The connection returned is for
 * {@link holdThroughHolder}; while it is open, an unbound holder waits for
 * its `hold`. It does not keep the event loop alive.
 * @throws {SynplugError} the holder did not start (`failure`)
 * @throws {StateDirSwappedError} it did not, and the state directory's path names another directory now (state-fs.ts)
 */
export async function prepareHolder(cfg: QueueHolderConfig): Promise<Socket> {
  let lastError = 'the holder did not answer';
  for (let attempt = 0; attempt < 20; attempt++) {
    const s = await connectHolder(cfg.stateDir, cfg.queueNum);
    if (s) {
      s.unref();
      return s;
    }
    const started = await startHolder(cfg);
    // The holder refused a swapped state directory: the refusal itself (its category, bad-state), not a failure to hold.
    if (started.error !== undefined) refuseSwapped(cfg.stateDir);
    // Another starter's holder listens there already (this one could not): it answers on the next round.
    if (started.error !== undefined) lastError = started.error;
    if (started.error !== undefined) await new Promise((r) => setTimeout(r, 50));
  }
  throw new SynplugError(`cannot hold netfilter queue ${cfg.queueNum}: ${lastError}`, 'failure');
}

/**
 * Hold a queue through its holder, on the connection {@link prepareHolder}
 * made (or a new one): the holder is bound when this resolves. The connection
 * returned stays open while the caller holds (a protect: its end tells the
 * holder that its lease is gone); it does not keep the event loop alive.
 * @throws {SynplugError} the holder could not bind the queue (someone else holds it, named) or did not start (`foreign-state` / `failure`)
 * @throws {StateDirSwappedError} it could not, and the state directory's path names another directory now (state-fs.ts)
 */
export async function holdThroughHolder(cfg: QueueHolderConfig, prepared?: Socket): Promise<Socket> {
  let lastError = '';
  let foreign = 0;
  for (let attempt = 0; attempt < 20 && foreign < 5; attempt++) {
    const s = attempt === 0 && prepared && !prepared.destroyed ? prepared : await prepareHolder(cfg);
    const pid = peerCred(s)?.pid;
    s.write(`${JSON.stringify({ op: 'hold' })}\n`);
    const a = await answerOf(s, pid, 10_000);
    const r = a.line;
    if (r?.ok === true) return s;
    s.destroy();
    if ((a.stopped || a.timedOut) && pid !== undefined) {
      // A holder that cannot answer (stopped, hung): one that holds nothing is ended and another started; one that
      // holds for another hold (bound) is left to that hold's release, and this hold is called off.
      const why = a.stopped ?? 'it did not answer within 10 s (hung)';
      if (await endUnboundHolder(pid, cfg.queueNum)) {
        lastError = `its holder process ${pid} could not answer (${why}): it held nothing and was killed`;
        continue;
      }
      throw new SynplugError(
        `cannot hold netfilter queue ${cfg.queueNum}: its holder process ${pid} cannot answer (${why}), and it holds the queue for another hold of this state directory, so it cannot hold for this one. Nothing was held. That hold's release (its protect's end or --max-hold, 'synplug release') takes its socket over and ends it; or let it run again (kill -CONT ${pid})`,
        'failure',
      );
    }
    if (typeof r?.error === 'string') {
      lastError = r.error;
      // Bound already: a holder on its way out (gone soon), or someone else's (still bound after the last round: named).
      if (r.foreign === true) foreign++;
    } else lastError = r?.closing ? 'the holder was letting the queue go' : 'the holder did not answer';
    // A holder on its way out: wait until it is gone (its socket path removed), then start one.
    await new Promise((res) => setTimeout(res, foreign ? 50 : 20));
  }
  refuseSwapped(cfg.stateDir);
  throw new SynplugError(`cannot hold netfilter queue ${cfg.queueNum}: ${lastError}`, /is bound by/.test(lastError) ? 'foreign-state' : 'failure');
}

/**
 * Kill a queue holder that cannot answer and holds nothing (no queue socket
 * of its bound), and wait (up to 2 s) until it is gone. The socket path it
 * leaves is replaced by the next holder's listen (listenOn: nobody answers
 * there).
 * @returns whether it was ended; false when it holds the queue (left alone) or is not a holder
 */
async function endUnboundHolder(pid: number, queueNum: number): Promise<boolean> {
  if (!isHolderProcess(pid) || queueBoundBy(pid, queueNum, defaultNetns())) return false;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return true; // gone meanwhile
  }
  const until = Date.now() + 2000;
  while (Date.now() < until && ['T', 't', 'S', 'R', 'D'].includes(processState(pid) ?? '')) await new Promise((r) => setTimeout(r, 10));
  return true;
}

/** The queue's /proc entry when process `pid` has its bound socket open; undefined when the queue is unbound or another's. */
function queueBoundBy(pid: number, queueNum: number, ns: string | undefined) {
  const bound = listBoundQueues(ns).find((e) => e.queue === queueNum);
  return bound && netlinkSocketOwners(bound.portId, ns).some((o) => o.pid === pid) ? bound : undefined;
}

/** Whether a process runs the queue holder's entry point (its argv holds {@link QUEUE_HOLDER_ARG}), and is not this one. */
function isHolderProcess(pid: number): boolean {
  try {
    return pid !== process.pid && readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(QUEUE_HOLDER_ARG);
  } catch {
    return false;
  }
}

/** What starts a holder instead of a process of its own ({@link setQueueHolderStarter}): `{}` once it is ready, `error` otherwise. */
export type QueueHolderStarter = (cfg: QueueHolderConfig) => Promise<{ error?: string }>;

let starter: QueueHolderStarter | undefined;

/**
 * Start every later holder of this process with `s` instead of a process of
 * its own (undefined: processes again). Internal, for tests: the fault
 * campaign (test/unit/guard-faults-kernel.test.ts) runs the holder's own
 * logic ({@link runQueueHolder}) in its process, on its kernel double.
 */
export function setQueueHolderStarter(s: QueueHolderStarter | undefined): void {
  starter = s;
}

/**
 * Start a holder process and wait for its first line: `ready`, or an error.
 * @returns `{}` when it is ready; `error` otherwise
 */
function startHolder(cfg: QueueHolderConfig): Promise<{ error?: string }> {
  if (starter) return starter(cfg);
  // The holder binds in this call's namespace: it inherits its descriptor (never its path).
  const ns = netnsForChild(3);
  const child = spawn(process.execPath, [...process.execArgv, watchdogEntryPath(), QUEUE_HOLDER_ARG], {
    env: { ...process.env, [QUEUE_HOLDER_ENV]: JSON.stringify({ ...cfg, stateDirId: pinnedStateDir(cfg.stateDir) }), ...ns?.env },
    stdio: ['ignore', 'pipe', 'ignore', ...(ns ? [ns.fd] : [])],
    detached: true,
  });
  child.unref();
  return new Promise((resolve) => {
    const rl = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => finish({ error: 'the queue holder did not start within 30 s' }), 30_000);
    const finish = (r: { error?: string }) => {
      clearTimeout(timer);
      clearInterval(watch);
      rl.close();
      child.stdout!.destroy();
      resolve(r);
    };
    // Stopped before it is ready (SIGSTOP, a freezer): it would never answer; killed, and the next attempt starts another.
    const watch = setInterval(() => {
      const why = child.pid === undefined ? undefined : stoppedState(child.pid);
      if (why === undefined) return;
      child.kill('SIGKILL');
      finish({ error: `the queue holder was stopped before it was ready (${why}): it was killed` });
    }, 50);
    rl.once('line', (line) => finish(line === 'ready' ? {} : { error: line }));
    child.once('exit', (code) => finish({ error: `the queue holder exited at start (status ${code})` }));
    child.once('error', (e) => finish({ error: `cannot start the queue holder: ${e.message}` }));
  });
}

/** Where a holder process reports (its entry point wires these to stdout, stderr, signals and the exit status). */
export interface QueueHolderIo {
  /** its first line for its starter: `ready`, or why it cannot hold */
  first(line: string): void;
  /** one line for the user */
  say(line: string): void;
  /** end the process with a status */
  exit(code: number): void;
  /** call `stop` on SIGTERM (release, then exit) */
  onTerm(stop: () => void): void;
}

/**
 * The holder process's work (the watchdog's entry point runs it with
 * {@link QUEUE_HOLDER_ARG}): bind, listen, say `ready`, serve, release when
 * no live lease is left (or when asked), then exit once every answer is out.
 * @param cfg what it holds (default: from {@link QUEUE_HOLDER_ENV}, as its starter passes it)
 */
export async function runQueueHolder(io: QueueHolderIo, cfg: QueueHolderConfig = JSON.parse(process.env[QUEUE_HOLDER_ENV] ?? '{}')): Promise<void> {
  // What goes wrong is said (stderr: nobody reads it, the process is detached) and kept in the holder log, for `status`.
  const say = (line: string): void => {
    io.say(line);
    const unlogged = logHolderFailure(cfg.stateDir, { queueNum: cfg.queueNum, pid: process.pid, message: line });
    if (unlogged !== undefined) io.say(`the holder log was not written: ${unlogged}`);
  };
  const path = holderSocketPath(cfg.stateDir, cfg.queueNum);
  const store = new StateStore(cfg.stateDir);
  const server: Server = createServer();
  // Bound, unlinked and removed through the directory its starter pinned, wherever that is moved: never through the path.
  pinStateDir(cfg.stateDir, cfg.stateDirId);
  let at: string;
  try {
    const a = holderSocketAt(cfg.stateDir, cfg.queueNum);
    if (a === undefined) throw new Error(`state directory ${cfg.stateDir} does not exist`);
    at = a;
    await listenOn(server, at, path);
  } catch (e) {
    io.first(`cannot listen on ${path}: ${(e as Error).message}`);
    io.exit(1);
    return;
  }
  /** bound at the first `hold` (once: later ones share it); undefined until then */
  let holder: NfqueueHolder | undefined;
  let binding: Promise<string | undefined> | undefined;
  /** Bind the queue: undefined when bound, else why not. */
  const bind = (): Promise<string | undefined> =>
    (binding ??= NfqueueHolder.bind(cfg.queueNum, { maxlen: cfg.maxlen, failOpen: false, netns: defaultNetns() }).then(
      (h) => {
        holder = h;
        h.ref();
        return undefined;
      },
      (e: unknown) => (e as Error).message,
    ));
  /** connections open now, and when the last one closed (an unbound holder idles out) */
  let connections = 0;
  let idleSince = Date.now();
  let releasing: Promise<HolderRelease> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let replies = 0;
  /** the connections open now: closed at the exit (as a process's exit closes them, also where the exit does not end a process) */
  const open = new Set<Socket>();
  /** the connections that hold (a protect's, a plug's): told `{"released":true}` at the release, so that their close is not taken for this process's death */
  const holding = new Set<Socket>();
  /** Exit once released and every answer is written. */
  const exitWhenDone = () => {
    if (releasing && replies === 0)
      void releasing.then(async () => {
        await closing;
        if (replies !== 0) return;
        for (const sock of open) sock.destroy();
        disarming ??= disarm();
        await disarming;
        io.exit(0);
      });
  };
  let disarming: Promise<void> | undefined;
  /**
   * After holding: the holds' armed pieces removed (cfg.disarm), each once nothing is queued and the queue is
   * unbound (waited for outside the lock), then under the lease lock with no live lease (a protect arriving meanwhile
   * keeps the chain, or adds it again under the same lock). Whoever ends the hold normally removes them first (ENOENT).
   */
  const disarm = async (): Promise<void> => {
    if (!holder || !cfg.disarm?.length) return;
    const ns = defaultNetns();
    let conn: NetlinkConnection | undefined;
    try {
      for (const step of cfg.disarm) {
        if (!(await nothingQueuedWithin(step.whenNothingQueuedMs ?? 0, ns, step.whenQueueUnbound))) continue; // the next command removes it
        await withLeaseLock(store, async () => {
          // a lease live, or the leases unreadable (damaged: the failure that ended this hold is already said): kept
          let live = true;
          try {
            live = recordedLeases(store).some((l) => leaseLive(l));
          } catch {
            /* kept: the next command removes it */
          }
          if (live) return;
          conn ??= NetlinkConnection.open(step.protocol, { timeoutMs: 2000, netns: ns });
          const res = await conn.exchange(step.messages.map((m) => ({ type: m.type, flags: m.flags, payload: Buffer.from(m.payload, 'hex') })));
          const err = res.find((r) => r.error && !(step.ignoreErrno ?? []).includes(r.error.errno))?.error;
          if (err) say(`${step.what}: ${err.message}; the next synplug command removes it`);
        });
      }
    } catch (e) {
      say(`removing the hold's pieces: ${(e as Error).message}; the next synplug command removes them`);
    } finally {
      conn?.close();
    }
  };

  /** Release (once: later callers get the same outcome), stop listening. */
  /** the unbind after the release's answer (the holder exits once it is done) */
  let closing: Promise<void> | undefined;
  const releaseAll = (): Promise<HolderRelease> =>
    (releasing ??= (async () => {
      if (timer) clearTimeout(timer);
      server.close();
      try {
        unlinkSync(at);
      } catch {
        /* gone */
      }
      await binding; // a bind under way ends first (bound: released below)
      for (const sock of holding) sock.write(`${JSON.stringify({ released: true })}\n`);
      if (!holder) return { released: 0, dropped: 0 };
      const portId = holder.portId;
      let released = 0;
      let failure: string | undefined;
      // The verdict once more when the kernel refused it (a transient refusal, ENOMEM): what it holds is dropped otherwise.
      for (let attempt = 0; attempt < 2; attempt++) {
        try {
          released = await holder.release();
          failure = undefined;
          break;
        } catch (e) {
          failure = e instanceof Error ? e.message : String(e);
        }
      }
      const e = listBoundQueues(defaultNetns()).find((x) => x.queue === cfg.queueNum && x.portId === portId);
      // Refused twice: the unbind drops what the socket saw held.
      const dropped = (e ? e.queueDropped + e.userDropped : 0) + (failure === undefined ? 0 : holder.held);
      // The holds it let go on its own (a deadline, a manual release) count what it released, as a release's answer does.
      for (const sock of holding) if (!sock.destroyed) sock.write(`${JSON.stringify({ counted: true, released, dropped })}\n`);
      if (failure !== undefined)
        say(
          `queue ${cfg.queueNum}: the release verdict failed twice (${failure}): the unbind dropped the ${holder.held} SYN(s) held; their clients connect when they retransmit (1 s or more)`,
        );
      // The answer goes first: the unbind and a last look are after the hold, not in it. Then the queue passes what
      // comes (fail-open at maxlen 0), and a second verdict lets go what was queued meanwhile: the unbind drops nothing.
      const h = holder;
      closing = (async () => {
        if (failure === undefined) {
          await h.passThrough().catch(() => {});
          await h.release().catch(() => 0);
        }
        await h.close().catch(() => {});
      })();
      return { released, dropped, portId, ...(failure !== undefined && { failure }) };
    })());
  const kernel: LeaseKernel = { arm: async () => {}, disarm: async () => {}, release: async () => void (await releaseAll()) };

  /** The history line of a killed protect whose lease this holder dropped (killedProtectEntry): this holder released its hold. */
  const recordKilled = async (l: Lease, watchdogAlive: boolean): Promise<void> => {
    const w = await recordHistory(
      cfg.stateDir,
      killedProtectEntry(l, Date.now(), watchdogAlive ? "the queue's holder" : "the queue's holder, its watchdog killed too,"),
    );
    if (w) say(w);
  };
  /** Judge the leases (a dead protect's goes, found by its pid); release when none is live. */
  const judge = async (deadPid?: number): Promise<void> => {
    if (releasing) return;
    if (!holder) {
      // Unbound: nothing held, no lease to judge; gone once its starter is (no connection left) or idle too long.
      if (connections === 0 && (deadPid !== undefined || Date.now() - idleSince >= IDLE_MS)) {
        await releaseAll();
        return exitWhenDone();
      }
      return schedule();
    }
    try {
      const now = Date.now();
      const all = recordedLeases(store);
      const goneLease = deadPid === undefined ? undefined : all.find((l) => l.owner === 'protect' && l.pid === deadPid);
      const gone = goneLease?.id;
      // Only when something may have changed: a protect gone, a lease dead or past its deadline, none at all.
      if (gone !== undefined || all.length === 0 || all.some((l) => !leaseLive(l, now))) {
        // a manual plug's lease at its deadline (none dead first): dropped by id, so that its history line is written
        // only when this drop found it recorded (its watchdog, at the deadline + WATCHDOG_GRACE_MS, then finds it gone)
        const expired = gone === undefined ? all.find((l) => l.owner === 'manual' && now >= l.deadline) : undefined;
        const d = await dropLease(store, kernel, gone ?? expired?.id, cfg.dev, async () => {
          await releaseAll();
          return 1;
        });
        if (expired && !d.broken) {
          const w = await recordHistory(cfg.stateDir, maxHoldPlugEntry(expired, Date.now(), "the queue's holder"));
          if (w) say(w);
        }
        // A killed protect's history line is written by whoever drops its lease under the lock: this holder when its
        // drop found the lease still recorded (its watchdog, alive or not, then finds it gone and writes none), else
        // the watchdog, which dropped it first.
        if (goneLease && !d.broken && !ownerAlive(goneLease.pid, goneLease.pidStart))
          await recordKilled(goneLease, goneLease.watchdogPid !== undefined && ownerAlive(goneLease.watchdogPid));
        // Other protects' dead leases this drop removed (killed with their watchdogs): their lines are this holder's too.
        for (const w of await recordKilledProtects(cfg.stateDir, deadProtectLeases(d.dead), () => "the queue's holder, its watchdog killed too,")) say(w);
      }
    } catch (e) {
      // The bookkeeping failed (a damaged file, the lock): holding nothing is the safe side.
      say(`${(e as Error).message}; releasing queue ${cfg.queueNum}`);
      await releaseAll();
    }
    if (releasing) return exitWhenDone();
    schedule();
  };
  const schedule = () => {
    if (timer) clearTimeout(timer);
    let next = RECHECK_MS;
    try {
      const now = Date.now();
      const live = recordedLeases(store).filter((l) => leaseLive(l, now));
      if (live.length) next = Math.min(next, Math.max(10, Math.min(...live.map((l) => l.deadline)) - now + 10));
    } catch {
      /* judged at the next round */
    }
    timer = setTimeout(() => void judge(), next);
  };

  server.on('connection', (sock) => {
    const peer = peerCred(sock);
    const me = process.getuid?.() ?? 0;
    if (!peer || (peer.uid !== 0 && peer.uid !== me)) {
      sock.destroy();
      return;
    }
    sock.on('error', () => {});
    connections++;
    open.add(sock);
    const answer = (o: Record<string, unknown>, last = false) => {
      replies++;
      const done = () => {
        replies--;
        exitWhenDone();
      };
      if (last) sock.end(`${JSON.stringify(o)}\n`, done);
      else sock.write(`${JSON.stringify(o)}\n`, done);
    };
    const lines = createInterface({ input: sock });
    lines.on('line', (text) => {
      let msg: { op?: string };
      try {
        msg = JSON.parse(text) as { op?: string };
      } catch {
        return;
      }
      if (releasing && msg.op === 'hold') answer({ ok: false, closing: true }, true);
      else if (msg.op === 'hold') {
        replies++;
        void bind().then((error) => {
          replies--;
          if (error === undefined && !releasing) {
            holding.add(sock);
            answer({ ok: true, pid: process.pid });
            return;
          }
          // It cannot hold: it says why and goes (a holder that never bound has nothing to release).
          answer(error === undefined ? { ok: false, closing: true } : { ok: false, error, foreign: /is bound by/.test(error) }, true);
          void releaseAll().then(exitWhenDone);
        });
      } else if (msg.op === 'release') {
        replies++;
        void releaseAll().then((r) => {
          replies--;
          answer({ ok: true, ...r }, true);
        });
      }
    });
    sock.once('close', () => {
      open.delete(sock);
      const held = holding.delete(sock);
      connections--;
      if (connections === 0) idleSince = Date.now();
      void judge(held ? peer.pid : holder ? undefined : -1);
    });
  });
  io.onTerm(() => {
    void releaseAll().then(exitWhenDone);
  });
  io.first('ready');
  schedule();
}

/**
 * Listen on a unix socket path (mode 0600); a path left by a holder that is
 * gone (nobody answers on it) is replaced.
 * @throws {Error} another holder listens there (EADDRINUSE), or the path cannot be used
 */
async function listenOn(server: Server, path: string, shown = path): Promise<void> {
  const tryListen = () =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    });
  try {
    await tryListen();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw e;
    const other = await connectPath(path, shown);
    other?.destroy();
    if (other) throw e;
    unlinkSync(path);
    await tryListen();
  }
  chmodSync(path, 0o600);
}
