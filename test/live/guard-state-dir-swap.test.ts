/**
 * A state directory swapped while a protect holds (issue #19, a fresh attack
 * as the directory's owner): the protect, its watchdog and the queue holder
 * kept using the directory by path, so that renaming it and putting
 * something else in its place redirected them:
 *
 * - a symbolic link to another directory: the holder's release unlinked
 *   THAT directory's `queue-N.sock`;
 * - a fresh directory, or a bind mount of another directory: their records
 *   (the lease lock, plug.json, leases...) were written into it.
 *
 * Now each process pins the directory at its first open (the watchdog and
 * the holder: the identity their starter pinned) and refuses a path that
 * names another directory: nothing is read, written, removed or unlinked
 * through it; the hold is released all the same (the queue is unbound, the
 * SYN held is delivered) and the holder's socket is unlinked in the pinned
 * directory, wherever it was moved.
 *
 * Queue hold (this machine's kernel: no sch_plug), each scenario in a
 * network namespace of its own (test/helpers/own-netns.ts); the bind mount
 * in a mount namespace of its own too. Oracles: the directories' listings
 * (readdirSync, lstat), /proc/net/netfilter/nfnetlink_queue, the client's
 * connect outcome. Every wait is on an event, bounded.
 */
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ExecutionContext } from 'ava';
import { ownerAlive } from '../../src/guard/state.js';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';
import { QUEUE, chainsOf, client, heldProtect, listening, procQueue, server, stateEnv, synplug, tables, until } from '../helpers/queue-live.js';

// biome-ignore lint/suspicious/noExplicitAny: the scenarios' JSON results, asserted field by field
type Json = Record<string, any>;

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_GUARD_STATE_DIR_SWAP_SCENARIO';
const PORT = 39500;
const ADDR = '169.254.79.1';

/** A socket file left in `dir` (bound, never listened on, the process gone: nobody answers), as a holder killed leaves its own. */
function leftSocket(dir: string, name: string): string {
  const path = join(dir, name);
  execFileSync('python3', ['-c', 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])', path]);
  return path;
}

/** What a moved directory records of the hold: its live leases' count and plug.json's state. */
function recorded(dir: string): { leases: number; plug: string | undefined } {
  const read = (name: string) => (exists(join(dir, name)) ? JSON.parse(readFileSync(join(dir, name), 'utf8')) : undefined);
  return { leases: (read('leases.json')?.leases ?? []).length, plug: read('plug.json')?.state };
}

const exists = (p: string): boolean => {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
};

/** The leases a state directory records (none without leases.json). */
function leasesIn(dir: string): Array<{ deadline: number; watchdogPid?: number; watchdogStart?: number }> {
  const p = join(dir, 'leases.json');
  return exists(p) ? JSON.parse(readFileSync(p, 'utf8')).leases : [];
}

/**
 * How a scenario holds through the swap: started once the server listens (`started`: what the scenario asserts of
 * the start), `end` once A's path is swapped (what it asserts of the end), `settled` once every process of the hold
 * wrote what it writes (its records are read after it).
 */
type Hold = (env: NodeJS.ProcessEnv, dir: string, sd: string) => Promise<{ started: Json; end(): Promise<Json>; settled(): Promise<Json> }>;

const holds: Record<'protect' | 'plug', Hold> = {
  /** A protect held until after the swap, then let go: it records its own end before it exits (exit 6, the refusal). */
  async protect(env, dir) {
    const h = await heldProtect(env, dir);
    return {
      started: {},
      end: async () => {
        h.release();
        return { end: await h.ended };
      },
      settled: async () => ({}),
    };
  },
  /**
   * A manual plug: plug exits at once, leaving its watchdog and the queue's holder alone. The holder lets the queue go
   * first (its look at the leases refused); the watchdog releases at the plug's deadline and records it in the
   * directory it started with, writing leases.json, then plug.json: its exit (the lease's watchdogPid, the process
   * this test's plug started) is the end of its writes, never the first of them.
   */
  async plug(env, _dir, sd) {
    // Its deadline leaves room for what comes before the swap (a client started, its SYN queued) on a loaded host.
    const plug = synplug(['plug', '--max-hold', '12s'], env);
    const { deadline, watchdogPid: pid, watchdogStart } = leasesIn(sd)[0] ?? {};
    return {
      started: { plug },
      // the swap is met by the holder and the watchdog only when it comes before the deadline (else it is a release as any)
      end: async () => ({ msBeforeDeadline: deadline === undefined ? undefined : deadline - Date.now() }),
      settled: async () => ({
        watchdogEnded:
          pid !== undefined &&
          (await until(() => !ownerAlive(pid, watchdogStart), 'the watchdog to record its release and exit', 30_000).then(
            () => true,
            () => false,
          )),
      }),
    };
  },
};

/**
 * Set up the queue hold in A, hold (`hold`), hold a SYN, swap A's path (`swap`, given A's path and where A was moved),
 * end the hold, and wait for the holder to let the queue go and the hold's processes to settle; then put A back
 * (`unswap`) and tear it down.
 */
async function swapDuringHold(hold: Hold, swap: (path: string, moved: string) => void, unswap: (path: string, moved: string) => void) {
  const a = stateEnv();
  const sd = a.env.SYNPLUG_STATE_DIR!;
  const moved = `${sd}.moved`;
  const setup = synplug(['setup', '--via', 'queue', '--addr', ADDR], a.env);
  const srv = server(ADDR, PORT);
  await listening(srv);
  // every chain of every table, `family table chain:rules` (the report's table stays, empty, after any release)
  const ruleset = () => tables().flatMap((t) => (chainsOf(t.split(' ')[1]!) ?? []).map((c) => `${t} ${c}`));
  const setUpPieces = ruleset();
  const h = await hold(a.env, a.dir, sd);
  const boundWhileHeld = procQueue(QUEUE) !== undefined;
  // The SYN held before the swap (after it, the holder's next look at the leases, refused, lets the queue go at once).
  const c = client(ADDR, PORT);
  const queued = await until(() => (procQueue(QUEUE)?.queued ?? 0) >= 1, 'the SYN to be queued', 10_000).then(
    () => true,
    () => false,
  );
  renameSync(sd, moved);
  swap(sd, moved);
  const ended = await h.end();
  const outcome = await c.result;
  const unbound = await until(() => procQueue(QUEUE) === undefined, 'the holder to let the queue go', 20_000).then(
    () => true,
    () => false,
  );
  srv.kill();
  const settled = await h.settled();
  const piecesAfter = ruleset();
  const movedSocket = exists(join(moved, `queue-${QUEUE}.sock`));
  const movedFiles = readdirSync(moved).sort();
  const movedRecords = recorded(moved);
  unswap(sd, moved);
  renameSync(moved, sd);
  const down = synplug(['teardown'], a.env);
  return {
    setup: setup.code,
    ...h.started,
    boundWhileHeld,
    queued,
    ...ended,
    outcome,
    unbound,
    ...settled,
    movedSocket,
    movedFiles,
    movedRecords,
    setUpPieces,
    piecesAfter,
    down,
  };
}

/** A fresh directory put in A's place; `files`: what was written into it, read as it is removed. */
function freshInPlace() {
  const seen = { files: [] as string[] };
  return {
    seen,
    swap: (sd: string) => mkdirSync(sd, { mode: 0o700 }),
    unswap: (sd: string) => {
      seen.files = readdirSync(sd).sort();
      rmSync(sd, { recursive: true });
    },
  };
}

const scenarios = {
  /** A renamed, a symbolic link to B in its place: B's queue-N.sock was unlinked by A's holder. */
  async symlink() {
    const b = stateEnv();
    const sdB = b.env.SYNPLUG_STATE_DIR!;
    mkdirSync(sdB, { mode: 0o700 });
    const sockB = leftSocket(sdB, `queue-${QUEUE}.sock`);
    const r = await swapDuringHold(
      holds.protect,
      (sd) => symlinkSync(sdB, sd),
      (sd) => unlinkSync(sd),
    );
    return { ...r, otherSocket: exists(sockB), otherFiles: readdirSync(sdB).sort() };
  },
  /** A renamed, a fresh directory in its place: the lease lock and records were written into it. */
  async fresh() {
    const f = freshInPlace();
    const r = await swapDuringHold(holds.protect, f.swap, f.unswap);
    return { ...r, freshFiles: f.seen.files };
  },
  /** A manual plug's watchdog and the holder, alone after plug exited: A renamed, a fresh directory in its place, until the deadline. */
  async plug() {
    const f = freshInPlace();
    const r = await swapDuringHold(holds.plug, f.swap, f.unswap);
    return { ...r, freshFiles: f.seen.files };
  },
  /** A renamed, another directory bind-mounted at its path (a mount namespace of this scenario's own). */
  async bind() {
    const c = stateEnv();
    const other = join(c.dir, 'other');
    mkdirSync(other, { mode: 0o700 });
    const r = await swapDuringHold(
      holds.protect,
      (sd) => {
        mkdirSync(sd, { mode: 0o700 });
        execFileSync('mount', ['--bind', other, sd]);
      },
      (sd) => {
        execFileSync('umount', [sd]);
        rmSync(sd, { recursive: true });
      },
    );
    return { ...r, otherFiles: readdirSync(other).sort() };
  },
};

/** What every scenario shows of the hold: set up, the SYN held, then delivered and the queue let go, torn down after. */
function heldThenLetGo(t: ExecutionContext, r: Json): void {
  t.is(r.setup, 0);
  t.true(r.boundWhileHeld, 'the holder holds the queue');
  t.true(r.queued, 'the SYN is held');
  t.true(r.unbound, 'the queue is let go: nothing stays held');
  t.regex(r.outcome, /^ok /, 'the SYN held is delivered');
  t.is(r.down.code, 0, r.down.stderr);
}

/** What every protect scenario shows of the hold: released all the same, the SYN delivered, the swap said. */
function heldAndReleased(t: ExecutionContext, r: Json): void {
  heldThenLetGo(t, r);
  t.is(r.end.code, 6, 'the refusal ends protect (exit 6: unsafe state)');
  t.regex(r.end.stderr, /is no longer the directory this process started with .*; the hold was released all the same, and nothing was recorded/, r.end.stderr);
  // regression (issue 19): its lease and plug.json "buffering" stayed there, and the next command called it KILLED
  t.deepEqual(r.movedRecords, { leases: 0, plug: 'released' }, 'its end is recorded in the directory it started with');
  // regression (issue 19): the hold chain (queue bypass) and the report's rst chain stayed until the next command
  t.deepEqual(r.piecesAfter, r.setUpPieces, 'the armed pieces are gone after the release, as after any release');
}

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');

  test("a state directory renamed and a symbolic link to another put in its place during protect: that directory's queue-N.sock survives; the holder's own socket goes from the renamed one", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'symlink', 120_000);
    t.true(r.otherSocket, "the other directory's queue-N.sock is still there");
    t.deepEqual(r.otherFiles, [`queue-${QUEUE}.sock`], 'and nothing else was written there');
    t.false(r.movedSocket, "the holder's own socket was unlinked in the directory it was started with");
    heldAndReleased(t, r);
  });

  test('a state directory renamed and a fresh directory put in its place during protect: nothing is written into the fresh one', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'fresh', 120_000);
    t.deepEqual(r.freshFiles, [], 'no lock, record, history or socket in the fresh directory');
    t.false(r.movedSocket);
    heldAndReleased(t, r);
  });

  test("a state directory renamed and a fresh directory put in its place during a manual plug: its watchdog and the queue's holder write nothing into it, and let the hold go", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'plug', 120_000);
    t.deepEqual(r.freshFiles, [], 'no lock, record, history or socket in the fresh directory');
    t.false(r.movedSocket, "the holder's own socket was unlinked in the directory it was started with");
    t.is(r.plug.code, 0, r.plug.stderr);
    t.true(r.msBeforeDeadline > 0, `the swap came before the plug's deadline (${r.msBeforeDeadline} ms before it)`);
    heldThenLetGo(t, r);
    t.true(r.watchdogEnded, 'the watchdog ends at the deadline');
    t.deepEqual(r.movedRecords, { leases: 0, plug: 'released' }, "the watchdog's release is recorded in the directory it started with");
  });

  test('a state directory renamed and another directory bind-mounted at its path during protect: nothing is written into that directory', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'bind', 120_000, { privateRun: true });
    t.deepEqual(r.otherFiles, [], 'nothing in the directory mounted there');
    t.false(r.movedSocket);
    heldAndReleased(t, r);
  });
}
