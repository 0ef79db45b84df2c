/**
 * Live, this machine's kernel (no sch_plug: queue holds only): the local
 * queue hold and an inbound queue hold set up together (they share queue
 * 4200, one socket holds both).
 *
 * - One SYN held is one SYN in the report, the history and the metrics,
 *   whichever hold queued it (it was counted once per hold sharing the
 *   queue: 2 for 1).
 * - `check --local` and `status --local` with only the inbound hold set up
 *   say no local hold is set up and name the local hold this kernel has
 *   (`queue`), as `teardown --local` does, instead of listing the plug
 *   hold's pieces as missing.
 *
 * Oracles: the clients' own outcome (python3), /proc/net/netfilter/nfnetlink_queue
 * (SYNs queued now, the kernel's count), `nft -j list tables` (/usr/sbin/nft).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';
import { IP, QUEUE, client, heldProtect, listening, parseJson, procQueue, server, stateEnv, synplug, tables, until } from '../helpers/queue-live.js';

// biome-ignore lint/suspicious/noExplicitAny: the scenarios' JSON results, asserted field by field
type Json = Record<string, any>;

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_GUARD_QUEUE_BOTH_SCENARIO';
const PORT = 39350;
const LOCAL = '169.254.83.1';
const SERVER = '169.254.84.1';

/** A client namespace `ns` joined to this one by a veth (`dev` here, SERVER on it). */
function clientNamespace(ns: string, dev: string): void {
  execFileSync(IP, ['netns', 'add', ns]);
  execFileSync(IP, ['link', 'add', dev, 'type', 'veth', 'peer', 'name', 'sbc0', 'netns', ns]);
  execFileSync(IP, ['addr', 'add', `${SERVER}/24`, 'dev', dev]);
  execFileSync(IP, ['link', 'set', dev, 'up']);
  execFileSync(IP, ['-n', ns, 'addr', 'add', '169.254.84.2/24', 'dev', 'sbc0']);
  execFileSync(IP, ['-n', ns, 'link', 'set', 'sbc0', 'up']);
  execFileSync(IP, ['-n', ns, 'link', 'set', 'lo', 'up']);
}

const parse = (s: string): Json | undefined => parseJson<Json>(s);

const scenarios = {
  /** Both holds; a protect holding one local SYN, then a plug holding one SYN from the other namespace. */
  async 'count-once'() {
    const { dir, env } = stateEnv();
    const ns = `sqb-c-${process.pid}`;
    const dev = `sqb${process.pid % 100000}`;
    clientNamespace(ns, dev);
    try {
      const setups = [
        synplug(['setup', '--via', 'queue', '--addr', LOCAL, '--json'], env),
        synplug(['setup', '--via', 'queue', '--inbound', dev, '--port', String(PORT), '--json'], env),
      ].map((r) => ({ code: r.code, hold: parse(r.stdout)?.hold }));
      const metricsFile = join(dir, 'synplug.prom');
      const local = server(LOCAL, PORT);
      const remote = server(SERVER, PORT);
      await listening(local);
      await listening(remote);
      // protect: one local client's SYN held
      const h = await heldProtect(env, dir, ['--metrics-file', metricsFile]);
      const c1 = client(LOCAL, PORT);
      await until(() => (procQueue(QUEUE)?.queued ?? 0) >= 1, 'the local SYN to be queued');
      const queuedProtect = procQueue(QUEUE)?.queued;
      h.release();
      const o1 = await c1.result;
      const end = await h.ended;
      // plug and release: one SYN from the other namespace held
      const plug = synplug(['plug', '--max-hold', '60s'], env);
      const c2 = client(SERVER, PORT, ns);
      await until(() => (procQueue(QUEUE)?.queued ?? 0) >= 1, 'the inbound SYN to be queued');
      const queuedPlug = procQueue(QUEUE)?.queued;
      const rel = synplug(['release', '--json'], env);
      const o2 = await c2.result;
      const history = synplug(['history', '--json'], env);
      if (!Array.isArray(parse(history.stdout))) throw new Error(`history --json: ${history.stdout} ${history.stderr}`);
      const metrics = readFileSync(metricsFile, 'utf8');
      local.kill();
      remote.kill();
      synplug(['teardown'], env);
      return {
        setups,
        queuedProtect,
        outcomes: [o1, o2],
        protect: { code: end.code, report: parse(end.stdout)?.report, stderr: end.stderr },
        plug: { code: plug.code, stderr: plug.stderr },
        queuedPlug,
        release: { code: rel.code, json: parse(rel.stdout), stderr: rel.stderr },
        history: parse(history.stdout),
        heldMetric: /^synplug_held_syns_total\S* (\d+)$/m.exec(metrics)?.[1],
        tablesEnd: tables(),
      };
    } finally {
      spawnSync(IP, ['netns', 'delete', ns]);
      rmSync(dir, { recursive: true, force: true });
    }
  },

  /** Only an inbound queue hold: check/status --local (text and JSON), then teardown --local. */
  async 'no-local'() {
    const { dir, env } = stateEnv();
    execFileSync(IP, ['link', 'add', 'sqn0', 'type', 'veth', 'peer', 'name', 'sqn1']);
    execFileSync(IP, ['link', 'set', 'sqn0', 'up']);
    const set = synplug(['setup', '--via', 'queue', '--inbound', 'sqn0', '--port', String(PORT)], env);
    const run = (args: string[]) => {
      const r = synplug(args, env);
      return { code: r.code, stdout: r.stdout, json: parse(r.stdout), stderr: r.stderr };
    };
    const r = {
      setup: set.code,
      check: run(['check', '--local']),
      checkJson: run(['check', '--local', '--json']),
      status: run(['status', '--local']),
      statusJson: run(['status', '--local', '--json']),
      teardownLocal: run(['teardown', '--local']),
      tablesAfter: tables(),
    };
    synplug(['teardown'], env);
    rmSync(dir, { recursive: true, force: true });
    return r;
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');

  test('the local and an inbound queue hold share a queue: one SYN held is counted once (report, release, history, metrics)', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'count-once', 180_000);
    t.deepEqual(
      r.setups.map((s: Json) => [s.code, s.hold]),
      [
        [0, 'queue'],
        [0, r.setups[1].hold],
      ],
    );
    t.regex(r.setups[1].hold, /^queue:sqb\d+$/);
    // the kernel held one SYN each time
    t.is(r.queuedProtect, 1);
    t.is(r.queuedPlug, 1);
    t.deepEqual(r.outcomes, ['ok 0', 'ok 0'], 'both clients connected, without a retransmission');
    t.is(r.protect.code, 0, r.protect.stderr);
    t.is(r.protect.report.heldSyns, 1, JSON.stringify(r.protect.report));
    t.is(r.plug.code, 0, r.plug.stderr);
    t.is(r.release.code, 0, r.release.stderr);
    t.is(r.release.json.report.heldSyns, 1, JSON.stringify(r.release.json));
    t.deepEqual(
      (r.history as Json[]).map((e) => [e.command, e.report.heldSyns]),
      [
        ['protect', 1],
        ['plug', 0],
        ['release', 1],
      ],
      JSON.stringify(r.history),
    );
    t.is(r.heldMetric, '1', "protect's metrics count the one SYN once");
    t.deepEqual(r.tablesEnd, []);
  });

  test('check/status --local with only an inbound queue hold: no local hold is set up, the local queue hold named (as teardown --local says)', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'no-local', 120_000);
    t.is(r.setup, 0);
    t.regex(r.teardownLocal.stdout, /no local hold is set up \(set up: queue:sqn0\)/);
    for (const x of [r.check, r.status]) {
      t.regex(x.stdout, /no local hold is set up \(set up: queue:sqn0\)\. On this kernel 'synplug setup' sets up the local queue hold \(queue\)/, x.stdout);
      t.notRegex(x.stdout, /MISSING|qdisc|plug 40:|fw handle|table ip synplug/, x.stdout);
    }
    t.is(r.check.code, 1, 'check: nothing of the local hold is set up');
    t.is(r.status.code, 0);
    t.deepEqual(r.checkJson.json.pieces, []);
    t.deepEqual(r.statusJson.json.holds[0].pieces, [], "status: the hold's pieces are in its entry");
    t.false('pieces' in r.statusJson.json, 'status: no top-level pieces (one result shape)');
    for (const x of [r.checkJson, r.statusJson]) {
      t.is(x.json.state, 'absent');
      t.deepEqual(
        x.json.holds.map((h: Json) => [h.id, h.via, h.state]),
        [['queue', 'queue', 'absent']],
      );
      t.regex(x.json.nothingSetUp, /^no local hold is set up \(set up: queue:sqn0\)/);
    }
    t.deepEqual(r.tablesAfter, ['inet synplug_queue_sqn0'], 'nothing changed');
  });
}
