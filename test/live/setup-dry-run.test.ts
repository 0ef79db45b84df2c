/**
 * `synplug setup --dry-run` (the built CLI) in a network namespace of this
 * file's own: it changes nothing (the namespace, as ip -d -j link, ip -j
 * addr, tc -j qdisc/filter, nft -j list ruleset and every net.* sysctl print
 * it, is byte-identical, and no state directory or file appears), and its
 * plan is what a real setup run right after it does (the same hold, via and
 * actions, in order). Once set up, the plan is empty, as setup's next run.
 * This kernel has no sch_plug: `--via auto` plans the queue hold, `--via
 * plug` is refused (exit 5) as setup refuses it.
 */
import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { netnsSnapshot } from '../helpers/netns-snapshot.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'dist/bundle/synplug.cjs');
const NS = `spdry${process.pid}`;
const TMP = mkdtempSync(join(tmpdir(), 'synplug-dry-'));
const STATE = join(TMP, 'state'); // not there: setup would create it
const IP = '/usr/sbin/ip';
const VETH = `spdry${process.pid % 100000}`;

/** The namespace as the reference tools print it (test/helpers/netns-snapshot.ts), and the state directory's entries. */
function snapshot() {
  return { ...netnsSnapshot(NS), state: existsSync(STATE) ? readdirSync(STATE).sort() : null };
}

function synplug(args: string[]) {
  const r = spawnSync(IP, ['netns', 'exec', NS, process.execPath, BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, SYNPLUG_STATE_DIR: STATE },
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface Plan {
  dryRun: true;
  hold: string;
  via: string;
  dev: string;
  wouldChange: boolean;
  actions: string[];
  changes: Array<{ action: string; what: string }>;
  affects: string[];
  record: { stateDir: string; createsStateDir: boolean; files: string[]; lockFile?: string; hold: string };
}

test.before(() => {
  if (!existsSync(BIN)) throw new Error(`${BIN} missing: run npm run build first`);
  execFileSync(IP, ['netns', 'add', NS]);
  execFileSync(IP, ['-n', NS, 'link', 'set', 'lo', 'up']);
  execFileSync(IP, ['-n', NS, 'link', 'add', `${VETH}a`, 'type', 'veth', 'peer', 'name', `${VETH}b`]);
  execFileSync(IP, ['-n', NS, 'addr', 'add', '169.254.91.1/30', 'dev', `${VETH}a`]);
  execFileSync(IP, ['-n', NS, 'link', 'set', `${VETH}a`, 'up']);
});
test.after.always(() => {
  spawnSync(IP, ['netns', 'del', NS]);
  rmSync(TMP, { recursive: true, force: true });
});

/** Dry run, then the real setup: the namespace unchanged by the first, the plan equal to what the second did; then teardown. */
async function planThenSetup(t: import('ava').ExecutionContext, args: string[]) {
  const before = snapshot();
  t.is(before.state, null);
  const d = synplug(['setup', '--dry-run', '--json', ...args]);
  t.is(d.code, 0, d.stderr);
  const plan = JSON.parse(d.stdout) as Plan;
  t.deepEqual(snapshot(), before, 'the dry run changed nothing (and made no state directory)');
  t.true(plan.dryRun);
  t.true(plan.wouldChange);
  t.false('changed' in plan, 'a dry run changes nothing: it says what setup would change as wouldChange');
  t.true(plan.record.createsStateDir);
  t.is(plan.record.stateDir, STATE);
  t.deepEqual(
    plan.changes.map((c) => c.what),
    plan.actions,
  );

  const s = synplug(['setup', '--json', ...args]);
  t.is(s.code, 0, s.stderr);
  const done = JSON.parse(s.stdout) as { hold: string; via: string; actions: string[]; changed: boolean };
  t.deepEqual(plan.actions, done.actions, 'the plan is what setup did');
  t.is(plan.hold, done.hold);
  t.is(plan.via, done.via);
  t.true(done.changed);
  const after = snapshot();
  t.notDeepEqual(after.ruleset, before.ruleset, 'setup did change the namespace (the snapshot sees it)');
  t.deepEqual(
    after.state,
    [...plan.record.files, ...(plan.record.lockFile ? [plan.record.lockFile] : [])].map((f) => f.slice(STATE.length + 1)).sort(),
    'the files the plan named',
  );

  // set up already: an empty plan, and setup agrees
  const again = synplug(['setup', '--dry-run', '--json', ...args]);
  t.is(again.code, 0, again.stderr);
  const p2 = JSON.parse(again.stdout) as Plan;
  t.false(p2.wouldChange);
  t.deepEqual(p2.actions, []);
  t.false(p2.record.createsStateDir);
  t.deepEqual(snapshot(), after);
  const s2 = JSON.parse(synplug(['setup', '--json', ...args]).stdout) as { actions: string[]; changed: boolean };
  t.deepEqual(s2.actions, p2.actions);
  t.false(s2.changed);

  const td = synplug(['teardown']);
  t.is(td.code, 0, td.stderr);
  rmSync(STATE, { recursive: true, force: true });
  return plan;
}

test.serial('local clients (--via auto: the queue hold here): the plan equals what setup then does, and changed nothing', async (t) => {
  const plan = await planThenSetup(t, []);
  t.is(plan.hold, 'queue');
  t.is(plan.dev, 'lo');
  t.deepEqual(
    plan.changes.map((c) => c.action),
    plan.actions.map(() => 'add'),
  );
  t.true(plan.affects.some((a) => a.startsWith('lo gets the address 169.254.255.254/32')));
  t.true(plan.affects.some((a) => a.startsWith('a new nftables table inet synplug_queue:')));
});

test.serial('an inbound hold on a veth: the plan equals what setup then does, and changed nothing', async (t) => {
  const plan = await planThenSetup(t, ['--inbound', `${VETH}a`, '--port', '80']);
  t.is(plan.dev, `${VETH}a`);
  t.is(plan.hold, `queue:${VETH}a`);
});

test.serial('text: each step on its own line, its kind said once; refusals as setup refuses, changing nothing', (t) => {
  const before = snapshot();
  const r = synplug(['setup', '--dry-run']);
  t.is(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split('\n');
  t.regex(lines[0], /^--via auto: the queue hold/);
  t.is(lines[1], 'synplug setup --dry-run: the local queue hold (queue); nothing was changed');
  t.is(lines[2], 'setup would, in this order:');
  t.is(lines[3], '  add address 169.254.255.254/32 dev lo', 'the kind is said once (the step names it)');
  t.is(lines[4], '  nftables: add table inet synplug_queue', 'the table alone: its chain and rule are armed around each hold');
  t.regex(r.stdout, new RegExp(`it would record the hold 'queue' in ${STATE}/setup\\.json and ${STATE}/plug\\.json \\(creating ${STATE}, mode 0700\\)`));
  t.regex(r.stdout, new RegExp(`, and create its lock file ${STATE}/lock$`, 'm'), 'the lock file setup creates is named too');

  const plug = synplug(['setup', '--dry-run', '--via', 'plug']);
  t.is(plug.code, 5, plug.stderr);
  t.regex(plug.stderr, /sch_plug \(qdisc plug\)/);
  const bad = synplug(['setup', '--dry-run', '--inbound', 'lo', '--port', '80']);
  t.is(bad.code, 2, bad.stderr);
  t.deepEqual(snapshot(), before);
});
