/**
 * Two state directories in one namespace (issue #19, the session-12 attack's
 * MA1-MA4), on the queue hold (this machine's kernel: no sch_plug). Each
 * scenario runs in a network namespace of its own (test/helpers/own-netns.ts)
 * and reproduces the defect as it was found:
 *
 * - MA1: a directory holding only a `lock` file (or a copy of another's
 *   plug.json), no setup.json, took another directory's hold for a setup
 *   interrupted in it: `check` said partial (exit 12) and `teardown` removed
 *   the other directory's table and address. Now the queue hold's table
 *   carries its state directory's mark (and its queue number), and a
 *   directory never takes a table marked with another's: check says not set
 *   up here (exit 1), teardown leaves the hold, setup is exit 7. A plug.json
 *   of another namespace is exit 6.
 * - MA2: two directories recording the same hold (a copied setup.json): the
 *   second's protect removed the first's armed chain mid-hold. Now it is
 *   refused before anything is armed (exit 8, the command not run); the
 *   chain stays and the held SYN is delivered at its own release; its
 *   teardown leaves the other's table and address.
 * - MA3: `setup --via queue` took a queue number another directory's hold
 *   uses (its rule exists only during holds). Now exit 7, nothing changed.
 * - MA4: a teardown deleting its table, whose base chain was there, dropped
 *   the SYNs another directory's hold had queued. Now it waits, then refuses
 *   (exit 7) and keeps its table while they are queued; they are delivered
 *   at their own release without a retransmission.
 *
 * Oracles: `nft -j list ruleset` and `nft -j list table` (/usr/sbin/nft),
 * `ip -j addr` (/usr/sbin/ip), /proc/net/netfilter/nfnetlink_queue; clients
 * print their connect outcome and tcpi_total_retrans. Every wait is on an
 * event, bounded.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { QUEUE_TABLE } from '../../src/guard/modes/queue.js';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';
import { IP, QUEUE, chainsOf, client, heldProtect, listening, onLo, procQueue, server, stateEnv, synplug, tables, until } from '../helpers/queue-live.js';

// biome-ignore lint/suspicious/noExplicitAny: the scenarios' JSON results, asserted field by field
type Json = Record<string, any>;

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_GUARD_QUEUE_TWO_DIRS_SCENARIO';
const PORT = 39400;

/** A state directory made as setup makes it (0700), with these files copied or made (0600), no setup run in it. */
function bareDir(env: NodeJS.ProcessEnv, files: Record<string, string>): string {
  const sd = env.SYNPLUG_STATE_DIR!;
  mkdirSync(sd, { mode: 0o700 });
  for (const [name, content] of Object.entries(files)) {
    writeFileSync(join(sd, name), content, { mode: 0o600 });
    chmodSync(join(sd, name), 0o600);
  }
  return sd;
}

const run = (args: string[], env: NodeJS.ProcessEnv) => {
  const r = synplug(args, env);
  return { code: r.code, stdout: r.stdout, stderr: r.stderr };
};

const scenarios = {
  /** Issue #19: release in a directory with nothing set up, while another directory's manual plug holds here. */
  async 'release-other'() {
    const b = stateEnv();
    const a = stateEnv();
    const setupB = run(['setup', '--via', 'queue', '--addr', '169.254.78.9'], b.env);
    const plugB = run(['plug', '--max-hold', '60s'], b.env);
    const releaseA = run(['release'], a.env);
    const orphanedA = run(['release', '--orphaned'], a.env);
    const boundAfterA = procQueue(QUEUE) !== undefined;
    const releaseB = run(['release'], b.env);
    const downB = run(['teardown'], b.env);
    return { setupB: setupB.code, plugB: plugB.code, releaseA, orphanedA, boundAfterA, releaseB, downB: downB.code };
  },

  /** MA1: a lock file (or plug.json) alone in a directory claimed another directory's hold. */
  async lock() {
    const b = stateEnv();
    const a = stateEnv();
    const addr = '169.254.78.1';
    const setupB = run(['setup', '--via', 'queue', '--addr', addr], b.env);
    const sdA = bareDir(a.env, { lock: '' });
    const checkA = run(['check', '--json'], a.env);
    const downA = run(['teardown'], a.env);
    const afterDown = { tables: tables(), onLo: onLo(addr) };
    const setupA = run(['setup', '--via', 'queue', '--addr', addr], a.env);
    // plug.json instead of the lock file: a copy of the other directory's
    const plugA = stateEnv();
    bareDir(plugA.env, { 'plug.json': readFileSync(join(b.env.SYNPLUG_STATE_DIR!, 'plug.json'), 'utf8') });
    const checkPlugA = run(['check', '--json'], plugA.env);
    const downPlugA = run(['teardown'], plugA.env);
    const afterPlugDown = { tables: tables(), onLo: onLo(addr) };
    const checkB = run(['check'], b.env);
    // a plug.json of another network namespace (its cookie) that says a plug buffers there is refused
    const plugPath = join(b.env.SYNPLUG_STATE_DIR!, 'plug.json');
    const plug = readFileSync(plugPath, 'utf8');
    const plugNetns = (JSON.parse(plug) as { netns?: string }).netns;
    // (a buffering record has no neverHeld: that one would be refused for it first)
    const { neverHeld: _never, ...recorded } = JSON.parse(plug) as Record<string, unknown>;
    writeFileSync(plugPath, JSON.stringify({ ...recorded, state: 'buffering', netns: '999999999' }));
    const statusOther = run(['status'], b.env);
    writeFileSync(plugPath, plug);
    const downB = run(['teardown'], b.env);
    return {
      setupB: setupB.code,
      sdA,
      checkA: { code: checkA.code, json: JSON.parse(checkA.stdout) },
      downA,
      afterDown,
      setupA,
      checkPlugA: { code: checkPlugA.code, json: JSON.parse(checkPlugA.stdout) },
      downPlugA: downPlugA.code,
      afterPlugDown,
      checkB: checkB.code,
      plugNetns,
      statusOther,
      downB: downB.code,
      afterB: { tables: tables(), onLo: onLo(addr) },
    };
  },

  /** status and check in a directory with no setup, beside another directory's hold. */
  async 'status-other'() {
    const b = stateEnv();
    const a = stateEnv();
    const addr = '169.254.78.6';
    const setupB = run(['setup', '--via', 'queue', '--addr', addr], b.env);
    bareDir(a.env, {});
    const checkA = run(['check', '--json'], a.env);
    const statusA = run(['status', '--json'], a.env);
    const statusText = run(['status'], a.env);
    const downB = run(['teardown'], b.env);
    return {
      setupB: setupB.code,
      checkA: { code: checkA.code, json: JSON.parse(checkA.stdout) },
      statusA: { code: statusA.code, json: JSON.parse(statusA.stdout) },
      statusText,
      downB: downB.code,
    };
  },

  /** MA2: a copy of one directory's setup.json in another; the second's protect during the first's hold. */
  async 'same-hold'() {
    const b = stateEnv();
    const a = stateEnv();
    const addr = '169.254.78.2';
    const setupB = run(['setup', '--via', 'queue', '--addr', addr], b.env);
    const sdA = bareDir(a.env, {});
    copyFileSync(join(b.env.SYNPLUG_STATE_DIR!, 'setup.json'), join(sdA, 'setup.json'));
    const srv = server(addr, PORT);
    await listening(srv);
    const hB = await heldProtect(b.env, b.dir);
    const chainsWhileHeld = chainsOf(QUEUE_TABLE);
    const protectA = run(['protect', '--max-hold', '5s', '--', 'sh', '-c', `: > ${join(a.dir, 'ran')}`], a.env);
    let ranA = true;
    try {
      readFileSync(join(a.dir, 'ran'));
    } catch {
      ranA = false;
    }
    const checkA = run(['check'], a.env);
    const downA = run(['teardown'], a.env);
    const chainsAfterA = chainsOf(QUEUE_TABLE);
    const onLoAfterA = onLo(addr);
    const c = client(addr, PORT);
    // (bounded: on the code of before, the other directory's chain was gone and nothing was queued)
    const queued = await until(() => (procQueue(QUEUE)?.queued ?? 0) >= 1, 'the SYN to be queued', 10_000).then(
      () => true,
      () => false,
    );
    const pendingWhileHeld = c.proc.exitCode === null;
    hB.release();
    const outcome = await c.result;
    const end = await hB.ended;
    srv.kill();
    const downB = run(['teardown'], b.env);
    return {
      setupB: setupB.code,
      chainsWhileHeld,
      protectA,
      ranA,
      checkA,
      downA,
      chainsAfterA,
      onLoAfterA,
      queued,
      pendingWhileHeld,
      outcome,
      protectB: end.code,
      downB: downB.code,
      after: { tables: tables(), onLo: onLo(addr) },
    };
  },

  /**
   * Issue #19, the attack's MINOR: a directory holding copies of another's records (setup.json, plug.json buffering,
   * leases.json) but no holder socket: its release said "released after holding new connections for N ms; this ended
   * the manual plug's hold", and blamed a holder killed during the hold, while the other directory's hold went on.
   */
  async 'copied-release'() {
    const b = stateEnv();
    const a = stateEnv();
    const addr = '169.254.78.5';
    const setupB = run(['setup', '--via', 'queue', '--addr', addr], b.env);
    const plugB = run(['plug', '--max-hold', '60s'], b.env);
    const sdB = b.env.SYNPLUG_STATE_DIR!;
    bareDir(a.env, Object.fromEntries(['setup.json', 'plug.json', 'leases.json'].map((f) => [f, readFileSync(join(sdB, f), 'utf8')])));
    const releaseA = run(['release'], a.env);
    const boundAfterA = procQueue(QUEUE) !== undefined;
    const leasesB = (JSON.parse(readFileSync(join(sdB, 'leases.json'), 'utf8')) as { leases: unknown[] }).leases.length;
    const a2 = stateEnv();
    bareDir(a2.env, Object.fromEntries(['setup.json', 'plug.json', 'leases.json'].map((f) => [f, readFileSync(join(sdB, f), 'utf8')])));
    const releaseA2 = run(['release', '--json'], a2.env);
    const releaseB = run(['release'], b.env);
    const downB = run(['teardown'], b.env);
    return {
      setupB: setupB.code,
      plugB: plugB.code,
      releaseA,
      boundAfterA,
      leasesB,
      releaseA2: { code: releaseA2.code, json: JSON.parse(releaseA2.stdout) },
      releaseB,
      downB: downB.code,
    };
  },

  /**
   * Issue #19, the attack's MINOR: a copy of a setup.json that says `createdStateDir` in a directory root made by hand
   * made teardown remove that (empty) directory. Now only the directory whose mark setup recorded goes.
   */
  async 'copied-created'() {
    const a = stateEnv();
    const b = stateEnv();
    const addr = '169.254.78.6';
    const sdA = a.env.SYNPLUG_STATE_DIR!;
    const setupA = run(['setup', '--via', 'queue', '--addr', addr], a.env);
    const recordA = JSON.parse(readFileSync(join(sdA, 'setup.json'), 'utf8'));
    const sdB = bareDir(b.env, { 'setup.json': readFileSync(join(sdA, 'setup.json'), 'utf8') });
    const downB = run(['teardown', '--json'], b.env);
    const bLeft = existsSync(sdB) ? readdirSync(sdB) : null;
    const downA = run(['teardown', '--json'], a.env);
    return {
      setupA: setupA.code,
      recordA: { createdStateDir: recordA.createdStateDir, createdStateDirMark: recordA.createdStateDirMark },
      downB: { code: downB.code, json: JSON.parse(downB.stdout), stderr: downB.stderr },
      bLeft,
      downA: { code: downA.code, json: JSON.parse(downA.stdout), stderr: downA.stderr },
      aExists: existsSync(sdA),
      after: { tables: tables(), onLo: onLo(addr) },
    };
  },

  /** MA3: a queue number (or a table) another directory's hold uses, at setup. */
  async 'queue-clash'() {
    const b = stateEnv();
    const a = stateEnv();
    const dev = `sp2q${process.pid % 10000}`;
    execFileSync(IP, ['link', 'add', dev, 'type', 'veth', 'peer', 'name', `${dev}p`]);
    const setupB = run(['setup', '--via', 'queue', '--addr', '169.254.78.3'], b.env);
    const tablesB = tables();
    const sameNum = run(['setup', '--via', 'queue', '--inbound', dev, '--port', String(PORT)], a.env);
    const afterSameNum = tables();
    const sameTable = run(['setup', '--via', 'queue', '--addr', '169.254.78.4', '--queue-num', String(QUEUE + 1)], a.env);
    const afterSameTable = { tables: tables(), onLo: onLo('169.254.78.4') };
    const otherNum = run(['setup', '--via', 'queue', '--inbound', dev, '--port', String(PORT), '--queue-num', String(QUEUE + 1)], a.env);
    // the other directory's setup run again on its own hold: its own mark, no clash
    const againB = run(['setup', '--via', 'queue', '--addr', '169.254.78.3'], b.env);
    const downA = run(['teardown'], a.env);
    const downB = run(['teardown'], b.env);
    return {
      setupB: setupB.code,
      tablesB,
      sameNum,
      afterSameNum,
      sameTable,
      afterSameTable,
      otherNum: otherNum.code,
      againB,
      downA: downA.code,
      downB: downB.code,
      after: tables(),
    };
  },

  /** MA4: a teardown whose table has its base chain while another directory's hold has a SYN queued. */
  async 'teardown-queued'() {
    const b = stateEnv();
    const a = stateEnv();
    const addr = '169.254.78.5';
    const dev = `sp2t${process.pid % 10000}`;
    execFileSync(IP, ['link', 'add', dev, 'type', 'veth', 'peer', 'name', `${dev}p`]);
    const setupB = run(['setup', '--via', 'queue', '--addr', addr], b.env);
    const setupA = run(['setup', '--via', 'queue', '--inbound', dev, '--port', String(PORT + 1), '--queue-num', String(QUEUE + 1)], a.env);
    const srv = server(addr, PORT);
    await listening(srv);
    const hB = await heldProtect(b.env, b.dir);
    const hA = await heldProtect(a.env, a.dir, [], 'a');
    const chainsA = chainsOf(`${QUEUE_TABLE}_${dev}`);
    const c = client(addr, PORT);
    await until(() => (procQueue(QUEUE)?.queued ?? 0) >= 1, 'the SYN to be queued');
    const downA = run(['teardown'], a.env);
    const tableAAfter = chainsOf(`${QUEUE_TABLE}_${dev}`);
    const queuedAfter = procQueue(QUEUE)?.queued ?? 0;
    const pendingAfter = c.proc.exitCode === null;
    hB.release();
    const outcome = await c.result;
    await hB.ended;
    hA.release();
    await hA.ended;
    srv.kill();
    const downA2 = run(['teardown'], a.env);
    const downB = run(['teardown'], b.env);
    return {
      setup: [setupB.code, setupA.code],
      chainsA,
      downA,
      tableAAfter,
      queuedAfter,
      pendingAfter,
      outcome,
      downA2,
      downB: downB.code,
      after: tables(),
    };
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');

  test("MA1 regression: a lock file (or a copy of plug.json) alone took another directory's hold for an interrupted setup here (check 12, teardown removed it); now it is never this directory's", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'lock', 90_000);
    t.is(r.setupB, 0);
    t.is(r.checkA.code, 1, JSON.stringify(r.checkA.json));
    t.is(r.checkA.json.interrupted, undefined, 'not taken for a setup interrupted here');
    t.regex(r.checkA.json.nothingSetUp, /the hold of another state directory/);
    t.is(r.downA.code, 0, r.downA.stderr);
    t.regex(r.downA.stdout, /another state directory's hold/);
    t.true(r.afterDown.tables.includes(`inet ${QUEUE_TABLE}`), "the other directory's table stays");
    t.true(r.afterDown.onLo, 'and its address');
    t.is(r.setupA.code, 7, r.setupA.stderr);
    t.regex(
      r.setupA.stderr,
      /nftables table inet synplug_queue and address 169\.254\.78\.1 on lo carry synplug's mark, and the mark names another state directory's setup \(the table's comment names queue 4200 and state directory mark [0-9a-f]{16}; this directory's is [0-9a-f]{16}\).* a hold is set up through one state directory only/,
    );
    t.is(r.checkPlugA.code, 1);
    t.is(r.checkPlugA.json.interrupted, undefined);
    t.is(r.downPlugA, 0);
    t.true(r.afterPlugDown.tables.includes(`inet ${QUEUE_TABLE}`));
    t.true(r.afterPlugDown.onLo);
    t.is(r.checkB, 0, 'the hold is whole');
    t.regex(r.plugNetns, /^[1-9][0-9]*$/, "plug.json records its namespace's cookie");
    t.is(r.statusOther.code, 6, r.statusOther.stderr);
    t.regex(r.statusOther.stderr, /plug\.json records the holds of network namespace cookie 999999999/);
    t.is(r.downB, 0);
    t.false(r.afterB.tables.includes(`inet ${QUEUE_TABLE}`));
    t.false(r.afterB.onLo);
  });

  test("status beside another directory's hold says what check says: not set up here (it said PARTIAL while check said not set up); status exit 0, check exit 1", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'status-other', 60_000);
    t.is(r.setupB, 0);
    t.is(r.checkA.code, 1, JSON.stringify(r.checkA.json));
    t.is(r.checkA.json.state, 'absent');
    t.is(r.statusA.code, 0, JSON.stringify(r.statusA.json));
    t.is(r.statusA.json.state, 'absent');
    t.deepEqual(
      r.statusA.json.holds.map((h: Json) => h.state),
      ['absent'],
    );
    const said = (x: string) => x.slice(0, x.indexOf(': the hold of another state directory'));
    t.regex(
      said(r.checkA.json.nothingSetUp),
      /^synplug is not set up in the state directory \S+ \(no hold is recorded in \S+\/setup\.json\), though nftables table inet synplug_queue carries synplug's mark$/,
    );
    t.is(said(r.statusA.json.nothingSetUp), said(r.checkA.json.nothingSetUp));
    t.regex(r.statusA.json.nothingSetUp, /: the hold of another state directory \(give its --state-dir to see it\)$/);
    t.is(r.statusText.code, 0);
    t.true(r.statusText.stdout.startsWith(`setup: ${r.statusA.json.nothingSetUp}\n`), r.statusText.stdout);
    t.notRegex(r.statusText.stdout, /PARTIAL/);
    t.is(r.downB, 0);
  });

  test("MA2 regression: a directory recording another's hold (a copied setup.json) removed its armed chain mid-hold; now its protect is refused before arming, and its teardown leaves that hold", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'same-hold', 120_000);
    t.is(r.setupB, 0);
    t.deepEqual(r.chainsWhileHeld, ['hold:1']);
    t.is(r.protectA.code, 8, r.protectA.stderr);
    t.regex(r.protectA.stderr, /another state directory's queue hold/);
    t.regex(r.protectA.stderr, /The command was NOT run/);
    t.false(r.ranA, 'the command was not run');
    t.is(r.checkA.code, 12, r.checkA.stdout);
    t.is(r.downA.code, 0, r.downA.stderr);
    t.regex(r.downA.stdout, /another state directory's queue hold/);
    t.deepEqual(r.chainsAfterA, ['hold:1'], "the other directory's chain and rule stay");
    t.true(r.onLoAfterA, 'and its address');
    t.true(r.queued, 'a new SYN is queued');
    t.true(r.pendingWhileHeld, 'and still held');
    t.is(r.outcome, 'ok 0', 'delivered at its own release, without a retransmission');
    t.is(r.protectB, 0);
    t.is(r.downB, 0);
    t.false(r.after.tables.includes(`inet ${QUEUE_TABLE}`));
    t.false(r.after.onLo);
  });

  test("regression: release in a directory with nothing set up, while another directory's manual plug holds here, said 'nothing is held' and 'NOT released here' with exit 0; now exit 7, one sentence naming the holder (--orphaned too)", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'release-other', 90_000);
    t.is(r.setupB, 0);
    t.is(r.plugB, 0);
    for (const x of [r.releaseA, r.orphanedA]) {
      t.is(x.code, 7, x.stderr);
      t.regex(
        x.stderr,
        /nothing was released: synplug is not set up in \S+, and what holds in this network namespace is not this state directory's: queue 4200 \(queue\) is held by process \d+ \(node\).*Release it with the --state-dir of the directory that holds it/,
      );
      t.notRegex(x.stderr + x.stdout, /nothing is held/);
    }
    t.true(r.boundAfterA, "the other directory's hold goes on");
    t.is(r.releaseB.code, 0, r.releaseB.stderr);
    t.is(r.downB, 0);
  });

  test("a directory with copies of another's records and no holder socket: its release no longer says it released a hold or ended a manual plug's, nor blames a killed holder", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'copied-release', 90_000);
    t.is(r.setupB, 0);
    t.is(r.plugB, 0);
    t.is(r.releaseA.code, 0, r.releaseA.stderr);
    t.notRegex(r.releaseA.stdout, /released after holding|ended the manual plug's hold/);
    t.notRegex(r.releaseA.stderr, /killed\?/);
    t.regex(r.releaseA.stderr, /no holder of this state directory held it \(it has no queue-4200\.sock; records copied from another directory\?\)/);
    t.regex(
      r.releaseA.stdout,
      /^nothing was held\b.*NOT released here: queue 4200 \(queue\) is held by process \d+ \(node\).*not this state directory's queue holder/,
    );
    t.true(r.boundAfterA, "the other directory's hold goes on");
    t.is(r.leasesB, 1, 'its lease untouched');
    t.is(r.releaseA2.code, 0);
    t.like(r.releaseA2.json, { wasBuffering: false, brokeLeases: 0, released: true });
    t.is(r.releaseA2.json.brokeManualPlugs, undefined);
    t.is(r.releaseA2.json.report.holdMs, 0);
    t.regex(r.releaseA2.json.warnings[0], /no holder of this state directory held it/);
    t.is(r.releaseB.code, 0);
    t.regex(r.releaseB.stdout, /^released after holding .*this ended the manual plug's hold/);
    t.is(r.downB, 0);
  });

  test('a copied setup.json saying createdStateDir no longer makes teardown remove a directory made by hand; the directory setup created still goes', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'copied-created', 90_000);
    t.is(r.setupA, 0);
    t.true(r.recordA.createdStateDir);
    t.regex(r.recordA.createdStateDirMark, /^[0-9a-f]{16}$/);
    t.is(r.downB.code, 0, r.downB.stderr);
    t.falsy(r.downB.json.removedStateDir);
    t.deepEqual(r.bLeft, [], 'the directory made by hand stays (its files removed)');
    t.is(r.downA.code, 0, r.downA.stderr);
    t.true(r.downA.json.removedStateDir, JSON.stringify(r.downA.json));
    t.false(r.aExists);
    t.false(r.after.tables.includes(`inet ${QUEUE_TABLE}`));
    t.false(r.after.onLo);
  });

  test("MA3 regression: setup took the queue number (or the table) of another directory's hold; now exit 7, nothing changed", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'queue-clash', 90_000);
    t.is(r.setupB, 0);
    t.is(r.sameNum.code, 7, r.sameNum.stderr);
    t.regex(
      r.sameNum.stderr,
      /netfilter queue 4200 is another state directory's: another state directory holds SYNs in it \(its queue hold's table inet synplug_queue, whose comment names queue 4200 and state directory mark [0-9a-f]{16}; this one's is none yet\)\. Two state directories never share a queue: choose another --queue-num for this hold, or set it up through that directory \(--state-dir DIR\); to free queue 4200, tear that hold down through it \('synplug teardown --state-dir DIR'\)\. .*Nothing was changed/,
    );
    t.deepEqual(r.afterSameNum, r.tablesB, 'nothing was added');
    t.is(r.sameTable.code, 7, r.sameTable.stderr);
    t.regex(r.sameTable.stderr, /the mark names another state directory's setup .*a hold is set up through one state directory only/);
    t.deepEqual(r.afterSameTable.tables, r.tablesB);
    t.false(r.afterSameTable.onLo, 'no address added');
    t.is(r.otherNum, 0, 'another queue number is free');
    t.is(r.againB.code, 0, r.againB.stderr);
    t.regex(r.againB.stdout, /already set up/);
    t.is(r.downA, 0);
    t.is(r.downB, 0);
    t.deepEqual(r.after, []);
  });

  test("MA4 regression: a teardown deleting its table (its base chain there) flushed the SYNs another directory's hold had queued; now it refuses (exit 7) while they are queued, and they are delivered at their release", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'teardown-queued', 150_000);
    t.deepEqual(r.setup, [0, 0]);
    t.deepEqual(r.chainsA, ['hold:1'], "the teardown's table has its armed base chain");
    t.is(r.downA.code, 7, r.downA.stderr);
    t.regex(r.downA.stderr, /packet\(s\) are queued in this namespace .*run teardown again once they are released/);
    t.deepEqual(r.tableAAfter, ['hold:1'], 'its table and chain are kept');
    t.is(r.queuedAfter, 1, 'the SYN of the other hold is still queued');
    t.true(r.pendingAfter);
    t.is(r.outcome, 'ok 0', 'delivered at its release, without a retransmission');
    t.is(r.downA2.code, 0, r.downA2.stderr);
    t.is(r.downB, 0);
    t.deepEqual(r.after, []);
  });
}
