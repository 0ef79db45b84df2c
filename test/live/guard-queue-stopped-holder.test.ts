/**
 * A queue holder that cannot answer (issue #25 and #19, rv19's SEVERE): a
 * holder stopped (SIGSTOP) kept the SYNs it held past the release and past
 * `--max-hold`; protect waited 10 s for its answer, then reported a lossless
 * hold. Now whoever releases (protect, `release`, the watchdog of a killed
 * protect, a manual plug's watchdog at its deadline) ends a holder that is
 * stopped, or silent for HOLDER_ANSWER_MS: it takes the holder's bound
 * socket over (pidfd_getfd), releases what it held with one verdict, kills
 * the holder and unbinds, and says so. The holder is never continued
 * (SIGCONT) here: the queue is unbound while it stays stopped.
 *
 * Also: after the holder's death during a hold, the report's hold time ends
 * at that death, not at the release (it said "held for 4004.8 ms").
 *
 * Each scenario runs in a network namespace of its own on this machine's
 * kernel. Oracles: /proc/net/netfilter/nfnetlink_queue, /proc/PID/stat,
 * python3 clients (their connect outcome and tcpi_total_retrans), the CLI's
 * JSON. Waits are on events, bounded.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { QUEUE_TABLE } from '../../src/guard/modes/queue.js';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';
import {
  BIN,
  QUEUE,
  chainsOf,
  client,
  heldProtect,
  helpersOf,
  listening,
  parseJson,
  procQueue,
  queueHolderPid,
  server,
  stateEnv,
  synplug,
  until,
  watchdogOf,
} from '../helpers/queue-live.js';

// biome-ignore lint/suspicious/noExplicitAny: the scenarios' JSON results, asserted field by field
type Json = Record<string, any>;

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_GUARD_QUEUE_STOPPED_SCENARIO';
const PORT = 39480;

/** A process's state letter (field 3 of /proc/PID/stat); undefined once it is gone. */
function stateOf(pid: number): string | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return s.slice(s.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

/** Set up a queue hold on `addr`, a server there, a protect holding; the holder's pid. */
async function holding(addr: string, port: number, extra: string[] = []) {
  const { dir, env } = stateEnv();
  const setup = synplug(['setup', '--via', 'queue', '--addr', addr], env);
  const srv = server(addr, port);
  await listening(srv);
  const spawnedAt = Date.now();
  const h = await heldProtect(env, dir, extra);
  const holder = queueHolderPid(QUEUE);
  return {
    dir,
    env,
    setup: setup.code,
    srv,
    h,
    holder,
    spawnedAt,
    /** Let the protected command end; protect's exit status, its JSON and its stderr. */
    async end() {
      h.release();
      const e = await h.ended;
      return { code: e.code, json: parseJson(e.stdout), stderr: e.stderr };
    },
    /** Stop the server and tear the hold down; teardown's result. */
    down() {
      srv.kill();
      return synplug(['teardown'], env);
    },
  };
}

const scenarios = {
  /** The holder stopped while protect holds a SYN; the command ends: protect's release kills the holder. */
  async 'stopped-at-release'() {
    const addr = '169.254.79.1';
    const s = await holding(addr, PORT);
    const c = client(addr, PORT);
    await until(() => (procQueue(QUEUE)?.queued ?? 0) >= 1, 'the SYN to be queued');
    if (s.holder) process.kill(s.holder, 'SIGSTOP');
    await until(() => s.holder !== undefined && stateOf(s.holder) === 'T', 'the holder to stop');
    const end = await s.end();
    const unbound = procQueue(QUEUE) === undefined;
    const outcome = await c.result;
    const after = client(addr, PORT);
    const afterOutcome = await after.result;
    const down = s.down();
    await until(() => s.holder === undefined || [undefined, 'Z'].includes(stateOf(s.holder)), 'the killed holder to exit', 5000).catch(() => {});
    return {
      setup: s.setup,
      holder: s.holder,
      end,
      unbound,
      holderState: s.holder && stateOf(s.holder),
      outcome,
      afterOutcome,
      down: down.code,
    };
  },

  /** The holder stopped; the command runs on past --max-hold: protect's max-hold release kills it, the queue is unbound. */
  async 'stopped-at-max-hold'() {
    const addr = '169.254.79.2';
    const s = await holding(addr, PORT + 1, ['--max-hold', '1s']);
    if (s.holder) process.kill(s.holder, 'SIGSTOP');
    // the command still runs; the max-hold ends the hold (never SIGCONT: the old way, the queue stayed bound)
    await until(() => procQueue(QUEUE) === undefined, 'the queue to be unbound past --max-hold', 15_000);
    const c = client(addr, PORT + 1);
    const outcome = await c.result;
    const end = await s.end();
    const down = s.down();
    return { setup: s.setup, holder: s.holder, outcome, end, down: down.code };
  },

  /** The holder stopped, then protect SIGKILLed (its watchdog alive): the watchdog's release kills the holder. */
  async 'stopped-protect-killed'() {
    const addr = '169.254.79.3';
    const s = await holding(addr, PORT + 2);
    const watchdog = watchdogOf(s.h.p.pid!);
    if (s.holder) process.kill(s.holder, 'SIGSTOP');
    await until(() => s.holder !== undefined && stateOf(s.holder) === 'T', 'the holder to stop');
    s.h.p.kill('SIGKILL');
    await s.h.ended;
    await until(() => procQueue(QUEUE) === undefined, "the watchdog to end the stopped holder's hold", 15_000);
    const c = client(addr, PORT + 2);
    const outcome = await c.result;
    const stderr = s.h.stderrNow();
    const down = s.down();
    return { setup: s.setup, holder: s.holder, watchdog, outcome, stderr, down: down.code };
  },

  /** A manual plug, its holder stopped: `release` kills it and says so. */
  async 'stopped-manual-release'() {
    const addr = '169.254.79.4';
    const { env } = stateEnv();
    const setup = synplug(['setup', '--via', 'queue', '--addr', addr], env);
    const plug = synplug(['plug', '--max-hold', '60s'], env);
    const holder = queueHolderPid(QUEUE);
    if (holder) process.kill(holder, 'SIGSTOP');
    await until(() => holder !== undefined && stateOf(holder) === 'T', 'the holder to stop');
    const status = synplug(['status', '--json'], env);
    const statusText = synplug(['status'], env);
    const rel = synplug(['release', '--json'], env);
    const unbound = procQueue(QUEUE) === undefined;
    const down = synplug(['teardown'], env);
    return {
      setup: setup.code,
      plug: plug.code,
      holder,
      status: parseJson(status.stdout),
      statusText: statusText.stdout,
      rel: { code: rel.code, json: parseJson(rel.stdout), stderr: rel.stderr },
      unbound,
      down: down.code,
    };
  },

  /** A manual plug with --max-hold 1s, its holder stopped: the plug's watchdog ends it at the deadline. */
  async 'stopped-manual-max-hold'() {
    const { env } = stateEnv();
    const setup = synplug(['setup', '--via', 'queue', '--addr', '169.254.79.6'], env);
    const plug = synplug(['plug', '--max-hold', '1s'], env);
    const holder = queueHolderPid(QUEUE);
    if (holder) process.kill(holder, 'SIGSTOP');
    await until(() => procQueue(QUEUE) === undefined, "the plug's watchdog to end the stopped holder's hold at the deadline", 15_000);
    // killed (SIGKILL): gone, or a zombie, once its exit is through (bounded)
    await until(() => holder === undefined || [undefined, 'Z'].includes(stateOf(holder)), 'the killed holder to exit', 5000).catch(() => {});
    const holderState = holder && stateOf(holder);
    const down = synplug(['teardown'], env);
    return { setup: setup.code, plug: plug.code, holder, holderState, down: down.code };
  },

  /** A protect holds; its holder is stopped; a second protect joins: it is called off at once (exit 1, its command NOT run). */
  async 'stopped-joiner'() {
    const addr = '169.254.79.7';
    const s = await holding(addr, PORT + 6);
    if (s.holder) process.kill(s.holder, 'SIGSTOP');
    await until(() => s.holder !== undefined && stateOf(s.holder) === 'T', 'the holder to stop');
    const marker = join(s.dir, 'joiner-ran');
    const joiner = synplug(['protect', '--json', '--max-hold', '10s', '--', 'touch', marker], s.env);
    const joinerRan = existsSync(marker);
    const stillStopped = s.holder !== undefined && stateOf(s.holder) === 'T';
    const end = await s.end();
    const down = s.down();
    return {
      setup: s.setup,
      holder: s.holder,
      joiner,
      joinerRan,
      stillStopped,
      end,
      down: down.code,
    };
  },

  /** The holder a protect starts is stopped at once (before it is ready, or before it binds): it is killed and another holds. */
  async 'stopped-at-start'() {
    const addr = '169.254.79.8';
    const { dir, env } = stateEnv();
    const setup = synplug(['setup', '--via', 'queue', '--addr', addr], env);
    const run = join(dir, 'run-start');
    const go = join(dir, 'go-start');
    const p = spawn(
      process.execPath,
      [BIN, 'protect', '--json', '--max-hold', '60s', '--', 'sh', '-c', `: > ${run}; while [ ! -e ${go} ]; do sleep 0.02; done`],
      {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    p.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    p.stderr!.setEncoding('utf8').on('data', (d: string) => {
      err += d;
    });
    const ended = new Promise<number | null>((r) => p.once('exit', (code) => r(code)));
    // the first holder this protect starts (its child: never another test's): stopped as soon as it is seen
    let first: number | undefined;
    await until(
      () => {
        first = helpersOf(p.pid!).find((x) => x.holder)?.pid;
        if (first !== undefined) process.kill(first, 'SIGSTOP');
        return first !== undefined;
      },
      'a queue holder to start',
      20_000,
    );
    await until(() => existsSync(run), 'the protected command to run', 60_000);
    const holderNow = queueHolderPid(QUEUE);
    const firstState = first === undefined ? undefined : stateOf(first);
    writeFileSync(go, '');
    const code = await ended;
    const down = synplug(['teardown'], env);
    return { setup: setup.code, first, firstState, holderNow, end: { code, json: parseJson(out), stderr: err }, down: down.code };
  },

  /** The protected command kills the holder as it ends (three times): the report says the hold failed, never lossless. */
  async 'killed-at-release'() {
    const addr = '169.254.79.9';
    const { dir, env } = stateEnv();
    const setup = synplug(['setup', '--via', 'queue', '--addr', addr], env);
    const srv = server(addr, PORT + 8);
    await listening(srv);
    const runs: Json[] = [];
    for (let i = 0; i < 3; i++) {
      const go = join(dir, `go-kill${i}`);
      const cmd = `while [ ! -s ${go} ]; do sleep 0.02; done; kill -9 $(cat ${go})`;
      const p = spawn(process.execPath, [BIN, 'protect', '--json', '--max-hold', '30s', '--', 'sh', '-c', cmd], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      p.stdout!.setEncoding('utf8').on('data', (d: string) => {
        out += d;
      });
      const exited = new Promise((r) => p.once('exit', r));
      await until(() => procQueue(QUEUE) !== undefined, 'the queue to be bound');
      const c = client(addr, PORT + 8);
      await until(() => (procQueue(QUEUE)?.queued ?? 0) >= 1, 'the SYN to be queued');
      writeFileSync(go, String(queueHolderPid(QUEUE)));
      await exited;
      await c.result;
      runs.push(parseJson(out) ?? { out });
      await until(() => procQueue(QUEUE) === undefined, 'the queue to be unbound');
    }
    srv.kill();
    const down = synplug(['teardown'], env);
    return { setup: setup.code, runs, down: down.code };
  },

  /** --max-hold 1s, the command running on, one SYN held (three times): the report counts it, whoever let go at the deadline. */
  async 'max-hold-count'() {
    const addr = '169.254.79.10';
    const { dir, env } = stateEnv();
    const setup = synplug(['setup', '--via', 'queue', '--addr', addr], env);
    const srv = server(addr, PORT + 9);
    await listening(srv);
    const runs: Json[] = [];
    for (let i = 0; i < 3; i++) {
      const h = await heldProtect(env, dir, ['--max-hold', '1s'], `-mh${i}`);
      const c = client(addr, PORT + 9);
      await c.result;
      h.release();
      const end = await h.ended;
      runs.push(parseJson(end.stdout) ?? { out: end.stdout, err: end.stderr });
    }
    srv.kill();
    const down = synplug(['teardown'], env);
    return { setup: setup.code, runs, down: down.code };
  },

  /** A manual release 1.5 s before the command ends: protect's hold time ends at the release; no negative overhead. */
  async 'released-midway'() {
    const addr = '169.254.79.11';
    const s = await holding(addr, PORT + 10);
    const releasedFrom = Date.now();
    const rel = synplug(['release'], s.env);
    const releasedAt = Date.now();
    await new Promise((r) => setTimeout(r, 1500));
    const end = await s.end();
    const down = s.down();
    return {
      setup: s.setup,
      rel: rel.code,
      upTo: releasedAt - s.spawnedAt,
      from: releasedFrom - s.spawnedAt,
      end,
      down: down.code,
    };
  },

  /** protect and its watchdog SIGKILLed (the holder lives), and a manual plug whose watchdog is killed: the holder removes the hold chain as it exits. */
  async 'chain-after-kills'() {
    const addr = '169.254.79.12';
    const s = await holding(addr, PORT + 11);
    const watchdog = watchdogOf(s.h.p.pid!);
    const during = chainsOf(QUEUE_TABLE);
    if (watchdog) process.kill(watchdog, 'SIGKILL');
    s.h.p.kill('SIGKILL');
    await s.h.ended;
    await until(() => procQueue(QUEUE) === undefined, 'the holder to let the queue go');
    await until(() => chainsOf(QUEUE_TABLE)?.length === 0, 'the holder to remove the chain', 15_000).catch(() => {});
    const protectChains = chainsOf(QUEUE_TABLE);
    // a manual plug with --max-hold 1s, its watchdog killed: the holder lets go at the deadline and removes the chain
    const plug = synplug(['plug', '--max-hold', '1s'], s.env);
    // its watchdog, as its lease records it
    const leases = JSON.parse(readFileSync(join(s.env.SYNPLUG_STATE_DIR!, 'leases.json'), 'utf8')) as {
      leases: Array<{ owner: string; watchdogPid?: number }>;
    };
    const plugWatchdog = leases.leases.find((l) => l.owner === 'manual')?.watchdogPid;
    if (plugWatchdog) process.kill(plugWatchdog, 'SIGKILL');
    await until(() => procQueue(QUEUE) === undefined, 'the holder to let go at the deadline', 15_000).catch(() => {});
    await until(() => chainsOf(QUEUE_TABLE)?.length === 0, 'the holder to remove the chain', 15_000).catch(() => {});
    const plugChains = chainsOf(QUEUE_TABLE);
    const down = s.down();
    return { setup: s.setup, watchdog, during, protectChains, plug: plug.code, plugWatchdog, plugChains, down: down.code };
  },

  /** A's manual plug; A's records copied into B; status through B. */
  async 'copied-status'() {
    const { dir, env } = stateEnv();
    const setup = synplug(['setup', '--via', 'queue', '--addr', '169.254.79.13'], env);
    const plug = synplug(['plug', '--max-hold', '60s'], env);
    const a = env.SYNPLUG_STATE_DIR!;
    const b = join(dir, 'b');
    mkdirSync(b, { mode: 0o700 });
    for (const f of ['setup.json', 'leases.json', 'plug.json']) copyFileSync(join(a, f), join(b, f));
    const status = synplug(['status'], { ...env, SYNPLUG_STATE_DIR: b });
    const boundAfter = procQueue(QUEUE) !== undefined;
    const rel = synplug(['release'], env);
    const down = synplug(['teardown'], env);
    return { setup: setup.code, plug: plug.code, status, boundAfter, rel: rel.code, down: down.code };
  },

  /** The holder SIGKILLed during a hold, the release long after: the report's hold time ends at the death. */
  async 'killed-hold-time'() {
    const addr = '169.254.79.5';
    const s = await holding(addr, PORT + 4);
    if (s.holder) process.kill(s.holder, 'SIGKILL');
    await until(() => procQueue(QUEUE) === undefined, 'the queue to be unbound');
    const unboundAt = Date.now();
    // the release comes later still: the old report counted up to it
    await new Promise((r) => setTimeout(r, 1500));
    const end = await s.end();
    const down = s.down();
    return {
      setup: s.setup,
      holder: s.holder,
      bound: unboundAt - s.spawnedAt,
      end,
      down: down.code,
    };
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');
  const failedLine = (j: Json | undefined): string => (j?.report?.failed ?? []).join('\n');

  test('regression: a stopped queue holder kept its SYNs past the release (protect waited 10 s, then reported a lossless hold); now protect takes its socket over, releases the SYN without loss, kills it and says so', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'stopped-at-release', 90_000);
    t.is(r.setup, 0);
    t.truthy(r.holder);
    t.true(r.unbound, 'the queue is unbound when protect ends');
    t.true(r.holderState === undefined || r.holderState === 'Z', `the stopped holder was killed (state ${r.holderState})`);
    t.regex(r.end.stderr, new RegExp(`queue 4200: its holder process ${r.holder} could not answer the release: it was stopped \\(state T`));
    t.regex(r.end.stderr, /its queue socket was taken over \(pidfd_getfd\) and released the 1 SYN\(s\) it held, and new SYNs pass/);
    t.is(r.end.json?.report?.heldSyns, 1, r.end.stdout);
    t.is(r.end.json?.report?.dropped, 0);
    t.is(r.end.json?.report?.failed, undefined);
    t.is(r.outcome, 'ok 0', 'the held client connected on its first SYN (no retransmission): released, not dropped');
    t.is(r.afterOutcome, 'ok 0', 'a later client passes unheld');
    t.is(r.down, 0);
  });

  test('regression: a stopped queue holder held SYNs past --max-hold; now the max-hold release kills it, the queue is unbound while it would still be stopped', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'stopped-at-max-hold', 90_000);
    t.is(r.setup, 0);
    t.truthy(r.holder);
    t.is(r.outcome, 'ok 0', 'a client after the max-hold passes unheld');
    t.true(r.end.json?.maxHoldReached, r.end.stdout);
    t.regex(r.end.stderr, /could not answer the release: it was stopped .*taken over/);
    t.is(r.down, 0);
  });

  test("a stopped queue holder, then protect SIGKILLed: its watchdog's release kills the holder and says so", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'stopped-protect-killed', 90_000);
    t.is(r.setup, 0);
    t.truthy(r.holder);
    t.truthy(r.watchdog);
    t.is(r.outcome, 'ok 0');
    t.regex(r.stderr, /queue 4200: its holder process [0-9]+ could not answer the release: it was stopped/);
    t.is(r.down, 0);
  });

  test('a manual plug whose holder is stopped: status says it is STOPPED; release takes its socket over, ends it and says so', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'stopped-manual-release', 90_000);
    t.is(r.setup, 0);
    t.is(r.plug, 0);
    t.truthy(r.holder);
    t.regex(r.status?.holds?.[0]?.holderStopped ?? '', new RegExp(`^its holder, process ${r.holder} \\(node\\), is STOPPED \\(state T: `));
    t.regex(r.statusText, /\n {2}its holder, process [0-9]+ \(node\), is STOPPED/);
    t.true(r.unbound, r.rel.stderr);
    t.is(r.rel.code, 0, r.rel.stderr);
    t.regex(`${r.rel.stdout ?? ''}${JSON.stringify(r.rel.json)}${r.rel.stderr}`, /could not answer the release: it was stopped/);
    t.is(r.down, 0);
  });

  test("a manual plug's holder stopped: the plug's watchdog kills it at --max-hold", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'stopped-manual-max-hold', 90_000);
    t.is(r.setup, 0);
    t.is(r.plug, 0);
    t.truthy(r.holder);
    t.true(r.holderState === undefined || r.holderState === 'Z', `the stopped holder was killed (state ${r.holderState})`);
    t.is(r.down, 0);
  });

  test('regression (rvq15 SEVERE): a protect joining a hold whose holder is stopped hung, then ran its command unheld and reported lossless; now it is called off at once, its command NOT run', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'stopped-joiner', 90_000);
    t.is(r.setup, 0);
    t.truthy(r.holder);
    t.is(r.joiner.code, 1, r.joiner.stderr);
    t.regex(
      `${r.joiner.stdout}${r.joiner.stderr}`,
      new RegExp(
        `its holder process ${r.holder} cannot answer \\(it was stopped \\(state T.*it holds the queue for another hold of this state directory.*Nothing was held`,
      ),
    );
    t.false(r.joinerRan, 'the command was not run');
    t.true(r.stillStopped, 'the other hold was left to its own release');
    t.regex(r.end.stderr, /taken over \(pidfd_getfd\)/);
    t.is(r.down, 0);
  });

  test('regression (rvq15 MEDIUM): a holder stopped as protect starts it left protect silent for 30 s and an orphan in state T; now it is killed and another holds', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'stopped-at-start', 90_000);
    t.is(r.setup, 0);
    t.truthy(r.first);
    t.true(r.firstState === undefined || r.firstState === 'Z', `the stopped holder was killed (state ${r.firstState})`);
    t.truthy(r.holderNow);
    t.not(r.holderNow, r.first, 'another holder holds');
    t.is(r.end.code, 0, r.end.stderr);
    t.is(r.down, 0);
  });

  test('regression (rvq15 MEDIUM): the holder killed as the command ends was reported lossless; now the report says the hold failed, each of three times', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'killed-at-release', 120_000);
    t.is(r.setup, 0);
    t.is(r.runs.length, 3);
    for (const run of r.runs) {
      t.not(run.report?.lossless, true, JSON.stringify(run));
      t.regex((run.report?.failed ?? []).join('\n'), /its holder process ended/, JSON.stringify(run));
    }
    t.is(r.down, 0);
  });

  test('regression (rvu15 MEDIUM): a queue hold let go at --max-hold by the holder counted 0 SYNs held; now the holder tells the hold its count, each of three times', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'max-hold-count', 120_000);
    t.is(r.setup, 0);
    t.is(r.runs.length, 3);
    for (const run of r.runs) {
      t.true(run.maxHoldReached, JSON.stringify(run));
      t.is(run.report?.heldSyns, 1, JSON.stringify(run));
    }
    t.is(r.down, 0);
  });

  test("regression (rvq15, rvu15): a manual release during protect's hold gave protect's report a negative overhead and a hold time up to the command's end; now null, and the hold time ends at the release", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'released-midway', 90_000);
    t.is(r.setup, 0);
    t.is(r.rel, 0);
    const o = r.end.json?.overhead;
    t.is(o?.commandExitToReleaseAckUs, null, JSON.stringify(o));
    t.true(o?.totalUs >= 0, JSON.stringify(o));
    const holdMs = r.end.json?.report?.holdMs;
    t.true(typeof holdMs === 'number' && holdMs <= r.upTo, `holdMs ${holdMs} <= ${r.upTo}`);
    // the release retired the RST counters' chain: protect's refused and reset are not counted (it said 0, lossless)
    t.not(r.end.json?.report?.lossless, true, JSON.stringify(r.end.json?.report));
    t.regex((r.end.json?.report?.uncounted ?? []).join('\n'), /chain .* of the RST counters was removed during the reload/);
    t.is(r.down, 0);
  });

  test("regression (rvq15 MEDIUM): with protect and its watchdog killed, or a manual plug's watchdog killed, the hold chain stayed on the data path until the next command; now the holder removes it as it exits", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'chain-after-kills', 120_000);
    t.is(r.setup, 0);
    t.truthy(r.watchdog);
    t.deepEqual(r.during, ['hold:1']);
    t.deepEqual(r.protectChains, []);
    t.is(r.plug, 0);
    t.truthy(r.plugWatchdog);
    t.deepEqual(r.plugChains, []);
    t.is(r.down, 0);
  });

  test("regression (rvt15 MEDIUM): status through a directory with another directory's queue records copied in said it released a plug left buffering; nothing was released there, and it says nothing of the kind now", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'copied-status', 90_000);
    t.is(r.setup, 0);
    t.is(r.plug, 0);
    t.is(r.status.code, 0, r.status.stderr);
    t.notRegex(r.status.stdout, /released a plug left buffering/, r.status.stdout);
    t.true(r.boundAfter, "A's hold goes on");
    t.is(r.rel, 0);
    t.is(r.down, 0);
  });

  test("regression: after the holder's death during a hold, the report's hold time ran to the release; now it ends at the death", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'killed-hold-time', 90_000);
    t.is(r.setup, 0);
    t.truthy(r.holder);
    const holdMs = r.end.json?.report?.holdMs;
    t.is(typeof holdMs, 'number', r.end.stdout);
    // the hold began after protect was spawned and ended at the death, seen before `bound` ms had passed since the spawn
    t.true(holdMs <= r.bound, `holdMs ${holdMs} <= ${r.bound}`);
    t.regex(failedLine(r.end.json), /its holder process ended/);
    t.is(r.down, 0);
  });
}
