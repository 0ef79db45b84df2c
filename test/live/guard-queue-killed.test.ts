/**
 * The queue hold's leftovers and words after a kill, and setup during a
 * hold (issue #19, the session-12 attack's MINORs), on this machine's
 * kernel (no sch_plug), each scenario in a network namespace of its own
 * (test/helpers/own-netns.ts), reproduced as found:
 *
 * - the queue's holder SIGKILLed while protect holds: status said HOLDING
 *   (plug.json's word) and nothing else; teardown left its `queue-N.sock`.
 *   Now status says, under the hold, that nothing holds it (`holderGone`),
 *   and teardown removes the socket.
 * - protect and its watchdog SIGKILLed during the hold: no history line.
 *   Now the queue's holder, which releases the hold, writes it (`killed`).
 * - setup run again during its own directory's hold: exit 7, "queue bound
 *   by process N (node)". Now "already set up" when it changes nothing, and
 *   a clear exit 7 naming the lease when it would change the hold.
 *
 * Oracles: `nft -j list table` (/usr/sbin/nft), `ip -j addr` (/usr/sbin/ip),
 * /proc/net/netfilter/nfnetlink_queue, the state directory's files; clients
 * print their connect outcome and tcpi_total_retrans. Waits are on events,
 * bounded.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { QUEUE_TABLE } from '../../src/guard/modes/queue.js';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';
import {
  QUEUE,
  chainsOf,
  client,
  heldProtect,
  listening,
  onLo,
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
const ENV = 'SYNPLUG_GUARD_QUEUE_KILLED_SCENARIO';
const PORT = 39420;

const run = (args: string[], env: NodeJS.ProcessEnv) => {
  const r = synplug(args, env);
  return { code: r.code, stdout: r.stdout, stderr: r.stderr };
};

const scenarios = {
  /** The queue's holder SIGKILLed while protect holds: status said HOLDING; its socket stayed in the state directory. */
  async 'holder-killed'() {
    const { dir, env } = stateEnv();
    const sd = env.SYNPLUG_STATE_DIR!;
    const setup = run(['setup', '--via', 'queue', '--addr', '169.254.78.6'], env);
    const h = await heldProtect(env, dir);
    const holder = queueHolderPid(QUEUE);
    if (holder) process.kill(holder, 'SIGKILL');
    await until(() => procQueue(QUEUE) === undefined, 'the queue to be unbound');
    const statusJson = run(['status', '--json'], env);
    const statusText = run(['status'], env);
    const sockLeft = existsSync(join(sd, `queue-${QUEUE}.sock`));
    h.release();
    const end = await h.ended;
    const down = run(['teardown'], env);
    return {
      setup: setup.code,
      holderFound: holder !== undefined && holder !== h.p.pid,
      status: { code: statusJson.code, json: JSON.parse(statusJson.stdout) },
      statusText,
      sockLeft,
      protect: end.code,
      down,
      sockAfter: existsSync(join(sd, `queue-${QUEUE}.sock`)),
      filesAfter: existsSync(sd) ? readdirSync(sd).sort() : [],
    };
  },

  /** protect and its watchdog SIGKILLed during the hold, the holder alive: it releases; no history line was written. */
  async 'both-killed'() {
    const { dir, env } = stateEnv();
    const addr = '169.254.78.7';
    const setup = run(['setup', '--via', 'queue', '--addr', addr], env);
    const srv = server(addr, PORT + 2);
    await listening(srv);
    const h = await heldProtect(env, dir);
    const watchdog = watchdogOf(h.p.pid!);
    const c = client(addr, PORT + 2);
    await until(() => (procQueue(QUEUE)?.queued ?? 0) >= 1, 'the SYN to be queued');
    if (watchdog) process.kill(watchdog, 'SIGKILL');
    h.p.kill('SIGKILL');
    await h.ended;
    const outcome = await c.result;
    await until(() => procQueue(QUEUE) === undefined, 'the holder to let the queue go');
    const history = run(['history', '--json'], env);
    srv.kill();
    const down = run(['teardown'], env);
    return {
      setup: setup.code,
      watchdogFound: watchdog !== undefined,
      outcome,
      history: { code: history.code, json: JSON.parse(history.stdout) },
      down: down.code,
    };
  },

  /** protect, its watchdog and the queue's holder all SIGKILLed during the hold (rv19): nobody wrote the history line. */
  async 'all-killed'() {
    const { dir, env } = stateEnv();
    const setup = run(['setup', '--via', 'queue', '--addr', '169.254.78.10'], env);
    const h = await heldProtect(env, dir);
    const watchdog = watchdogOf(h.p.pid!);
    const holder = queueHolderPid(QUEUE);
    for (const pid of [holder, watchdog]) if (pid) process.kill(pid, 'SIGKILL');
    h.p.kill('SIGKILL');
    await h.ended;
    await until(() => procQueue(QUEUE) === undefined, 'the queue to be unbound');
    const before = run(['history', '--json'], env);
    // the next synplug command: its stale-lease recovery
    const status = run(['status', '--json'], env);
    const after = run(['history', '--json'], env);
    run(['check'], env);
    run(['status'], env);
    const later = run(['history', '--json'], env);
    const down = run(['teardown'], env);
    return {
      setup: setup.code,
      found: { watchdog: watchdog !== undefined, holder: holder !== undefined && holder !== h.p.pid },
      before: JSON.parse(before.stdout),
      status: status.code,
      after: JSON.parse(after.stdout),
      later: JSON.parse(later.stdout),
      down: down.code,
    };
  },

  /** setup run again during the directory's own hold: it was exit 7, "queue bound by process N (node)". */
  async 'setup-during-hold'() {
    const { dir, env } = stateEnv();
    const addr = '169.254.78.8';
    const setup = run(['setup', '--via', 'queue', '--addr', addr], env);
    const h = await heldProtect(env, dir);
    const same = run(['setup', '--via', 'queue', '--addr', addr], env);
    // another address: refused whether or not a hold runs (setup never moves a local hold)
    const moved = run(['setup', '--via', 'queue', '--addr', '169.254.78.9'], env);
    // the hold's address gone (by hand): setup would add it again, a change, refused during the hold
    execFileSync('/usr/sbin/ip', ['addr', 'del', `${addr}/32`, 'dev', 'lo']);
    const changed = run(['setup', '--via', 'queue', '--addr', addr], env);
    const onLoOther = onLo(addr) || onLo('169.254.78.9');
    const chainsWhileHeld = chainsOf(QUEUE_TABLE);
    h.release();
    const end = await h.ended;
    const down = run(['teardown'], env);
    return { setup: setup.code, same, moved: moved.code, changed, onLoOther, chainsWhileHeld, protect: end.code, down: down.code };
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');

  test("regression: after the queue holder's death during a hold, status said nothing of it beside HOLDING, and teardown left its socket; now status says NOT holding, teardown removes the socket", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'holder-killed', 90_000);
    t.is(r.setup, 0);
    t.true(r.holderFound);
    t.is(r.status.code, 0);
    t.is(r.status.json.plug.state, 'buffering', 'plug.json still says what protect wrote');
    t.is(r.status.json.holds[0].bound, null);
    t.regex(
      r.status.json.holds[0].holderGone,
      new RegExp(`^NOT holding, though the lease of protect pid [0-9]+ holds it: nobody binds queue ${QUEUE}, so its holder process ended during the hold`),
    );
    t.regex(r.statusText.stdout, /\n {2}NOT holding, though the lease of protect pid/);
    t.true(r.sockLeft, "the killed holder's socket is left");
    t.is(r.down.code, 0, r.down.stderr);
    t.false(r.sockAfter, "teardown removed the killed holder's socket");
    t.deepEqual(
      (r.filesAfter as string[]).filter((f) => f.endsWith('.sock')),
      [],
      'no socket is left in the state directory',
    );
  });

  test('regression: protect and its watchdog SIGKILLed during a queue hold wrote no history line; now the queue holder, which releases the hold, writes it (killed)', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'both-killed', 90_000);
    t.is(r.setup, 0);
    t.true(r.watchdogFound);
    t.is(r.outcome, 'ok 0', 'the holder released the held SYN');
    t.is(r.history.code, 0);
    const last = (r.history.json as Json[]).at(-1);
    t.is(last?.command, 'protect');
    t.is(last?.killed, true);
    t.is(last?.exitCode, -1);
    t.regex(last?.report.uncounted[0], /protect was killed during the hold \(the queue's holder, its watchdog killed too, released it\)/);
    t.is(r.down, 0);
  });

  test('regression: protect, its watchdog and the queue holder all SIGKILLed during a hold wrote no history line; now the next command (status) writes it, once', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'all-killed', 90_000);
    t.is(r.setup, 0);
    t.true(r.found.watchdog && r.found.holder, JSON.stringify(r.found));
    const killed = (h: Json[]) => h.filter((e) => e.killed === true);
    t.deepEqual(killed(r.before), [], 'no line before the next command: everyone who could write it was killed');
    t.is(r.status, 0);
    t.is(killed(r.after).length, 1, JSON.stringify(r.after));
    t.is(killed(r.after)[0].command, 'protect');
    t.is(killed(r.after)[0].exitCode, -1);
    t.regex(killed(r.after)[0].report.uncounted[0], /protect was killed during the hold \(the next synplug command, its watchdog gone too, released it\)/);
    t.is(killed(r.later).length, 1, 'the commands after it write none');
    t.is(r.down, 0);
  });

  test('setup during its own directory\'s hold was exit 7 ("queue bound by process N"); now "already set up" when it changes nothing, and a clear exit 7 naming the hold when it would change it', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'setup-during-hold', 90_000);
    t.is(r.setup, 0);
    t.is(r.same.code, 0, r.same.stderr);
    t.regex(r.same.stdout, /already set up/);
    t.is(r.changed.code, 7, r.changed.stderr);
    t.regex(
      r.changed.stderr,
      /the queue hold of this state directory is holding now \('synplug protect' \(sh -c .*\) pid [0-9]+, until .*\): setup would change it \(add address 169\.254\.78\.8\/32 dev lo.*\), which it never does during a hold\. .*Nothing was changed/,
    );
    t.is(r.moved, 2, 'another --addr: exit 2, during a hold too');
    t.false(r.onLoOther, 'nothing was added');
    t.deepEqual(r.chainsWhileHeld, ['hold:1']);
    t.is(r.protect, 0);
    t.is(r.down, 0);
  });
}
