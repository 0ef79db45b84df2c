/**
 * `synplug demo` (the built CLI) on this machine's kernel (6.18: nf_tables,
 * but no sch_prio, sch_plug or cls_fw): it refuses naming every missing
 * module (exit 5) and leaves nothing behind; bad input is exit 2 before
 * anything; without CAP_NET_ADMIN exit 4; a foreign root qdisc on lo stays.
 * The demo itself runs in the VM (test/kernel/demo.test.ts).
 *
 * The demo always uses `lo`: each run here happens in a network namespace of
 * this file's own (`ip netns add`), so that the live suite's other files,
 * which share the suite's namespace, can neither disturb nor be disturbed by
 * the before/after comparisons (tc, nft and ip, run in that namespace).
 */
import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'dist/bundle/synplug.cjs'); // package.json bin
const NS = `spdemo${process.pid}`;
const STATE = mkdtempSync(join(tmpdir(), 'synplug-demo-live-'));
const IP = '/usr/sbin/ip';

function inNs(cmd: string, args: string[]): string {
  return execFileSync(IP, ['netns', 'exec', NS, cmd, ...args], { encoding: 'utf8' });
}

/** `synplug ARGS` in the namespace, as root (or as `uid` outside it, for the permission test). */
function synplug(args: string[], opts: { uid?: number } = {}) {
  const env = { ...process.env, SYNPLUG_STATE_DIR: STATE };
  const r =
    opts.uid === undefined
      ? spawnSync(IP, ['netns', 'exec', NS, process.execPath, BIN, ...args], { encoding: 'utf8', env, timeout: 60_000 })
      : spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env, uid: opts.uid, gid: opts.uid, timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Everything the demo could touch in the namespace, as the reference tools see it; and the state files. */
function snapshot() {
  return {
    qdiscs: inNs('/usr/sbin/tc', ['-j', 'qdisc', 'show', 'dev', 'lo']),
    filters: inNs('/usr/sbin/tc', ['filter', 'show', 'dev', 'lo']),
    ruleset: inNs('/usr/sbin/nft', ['list', 'ruleset']),
    addrs: inNs(IP, ['-j', 'addr', 'show', 'dev', 'lo']),
    stateFiles: readdirSync(STATE),
  };
}

test.before(() => {
  if (!existsSync(BIN)) throw new Error(`${BIN} missing: run npm run build first`);
  execFileSync(IP, ['netns', 'add', NS]);
  execFileSync(IP, ['-n', NS, 'link', 'set', 'lo', 'up']);
});
test.after.always(() => {
  spawnSync(IP, ['netns', 'del', NS]);
  rmSync(STATE, { recursive: true, force: true });
});

test.serial('a kernel without sch_prio, sch_plug, cls_fw: exit 5 naming every missing module, nothing left behind', (t) => {
  const before = snapshot();
  t.deepEqual(
    JSON.parse(before.qdiscs).map((q: { kind: string }) => q.kind),
    ['noqueue'],
  );
  t.is(before.ruleset.trim(), '');
  const r = synplug(['demo', '--restarts', '2', '--seconds', '2']);
  t.is(r.code, 5, r.stderr);
  t.regex(r.stderr, /sch_prio \(qdisc prio\)/);
  t.regex(r.stderr, /sch_plug \(qdisc plug\)/);
  // cls_fw is missing too, or (no /lib/modules here) could not be checked: either way the one modprobe names it
  t.regex(r.stderr, /\(modprobe sch_prio sch_plug cls_fw\)/);
  t.regex(r.stderr, /nothing was changed/);
  t.is(r.stdout, '', 'no table: the demo did not run');
  t.deepEqual(snapshot(), before);
});

test.serial('--json: the error as one object with its category and exit code, nothing left behind', (t) => {
  const before = snapshot();
  const r = synplug(['demo', '--json']);
  t.is(r.code, 5, r.stderr);
  const j = JSON.parse(r.stdout) as { error: string; category: string; exit_code: number };
  t.is(j.category, 'missing-module');
  t.is(j.exit_code, 5);
  t.regex(j.error, /sch_prio .*sch_plug/);
  t.deepEqual(snapshot(), before);
});

test.serial('a foreign root qdisc on lo is never replaced (the missing modules are reported first here: exit 5)', (t) => {
  inNs(IP, ['link', 'set', 'lo', 'up']);
  inNs('/usr/sbin/tc', ['qdisc', 'add', 'dev', 'lo', 'root', 'handle', '5:', 'pfifo', 'limit', '77']);
  t.teardown(() => {
    spawnSync(IP, ['netns', 'exec', NS, '/usr/sbin/tc', 'qdisc', 'del', 'dev', 'lo', 'root']);
  });
  const before = snapshot();
  const r = synplug(['demo']);
  t.is(r.code, 5, r.stderr);
  t.deepEqual(snapshot(), before);
  const q = JSON.parse(snapshot().qdiscs) as Array<{ kind: string; handle: string; options?: { limit?: number } }>;
  t.deepEqual(
    q.map((x) => `${x.kind} ${x.handle} ${x.options?.limit}`),
    ['pfifo 5: 77'],
  );
});

test.serial('bad input: exit 2 naming the flag, before anything is looked at or changed', (t) => {
  const before = snapshot();
  const cases: Array<[string[], RegExp]> = [
    [['--gap', '-1'], /--gap: must be more than 0/],
    [['--gap=abc'], /--gap: 'abc' is not a duration/],
    [['--restarts', '0'], /restarts \(--restarts\): a whole number from 1/],
    [['--restarts', 'x'], /--restarts: 'x' is not a whole number/],
    [['--seconds', 'abc'], /--seconds: 'abc' is not a number from 0.1 to 600 s/],
    [['--seconds', '-5'], /--seconds: '-5' is not a number from 0.1 to 600 s/],
    [['--state-dir', ''], /--state-dir is empty/],
    [['--seconds', '1', '--restarts', '10'], /do not fit in 1 s per phase/],
    [['--inbound', '--gap', '0'], /--gap: must be more than 0/],
  ];
  for (const [args, re] of cases) {
    const r = synplug(['demo', ...args]);
    t.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    t.regex(r.stderr, re, args.join(' '));
    t.notRegex(r.stderr, /setting up/, 'refused before the set-up');
  }
  const j = synplug(['demo', '--json', '--seconds', 'abc']);
  t.is(j.code, 2);
  t.like(JSON.parse(j.stdout), { category: 'usage', exit_code: 2 });
  t.deepEqual(snapshot(), before);
});

test.serial('without CAP_NET_ADMIN (user nobody): exit 4', (t) => {
  const r = synplug(['demo'], { uid: 65534 });
  t.is(r.code, 4, r.stderr);
  t.regex(r.stderr, /synplug demo needs CAP_NET_ADMIN: run it as root/);
  const i = synplug(['demo', '--inbound'], { uid: 65534 });
  t.is(i.code, 4, i.stderr);
  t.regex(i.stderr, /synplug demo --inbound needs CAP_NET_ADMIN: run it as root/);
});

/** The namespace's links and every qdisc in it (tc and ip as oracles), and the state files. */
function inboundSnapshot() {
  return {
    links: (JSON.parse(inNs(IP, ['-j', 'link', 'show'])) as Array<{ ifname: string }>).map((l) => l.ifname),
    qdiscs: (JSON.parse(inNs('/usr/sbin/tc', ['-j', 'qdisc', 'show'])) as Array<{ kind: string; dev: string; handle: string }>).map(
      (q) => `${q.dev} ${q.kind} ${q.handle}`,
    ),
    netns: execFileSync(IP, ['netns', 'list'], { encoding: 'utf8' }),
    stateFiles: readdirSync(STATE),
  };
}

test.serial('demo --inbound on a kernel without sch_plug: exit 5 naming sch_plug; no veth, IFB, clsact or namespace left behind', (t) => {
  inNs(IP, ['link', 'set', 'lo', 'up']);
  const before = inboundSnapshot();
  t.false(
    before.qdiscs.some((q) => / (clsact|plug) /.test(q)),
    before.qdiscs.join('; '),
  );
  const r = synplug(['demo', '--inbound', '--restarts', '2', '--seconds', '2']);
  t.is(r.code, 5, r.stderr);
  t.regex(r.stderr, /sch_plug/);
  t.regex(r.stderr, /creating a network namespace of the demo's own/, 'it got as far as the topology');
  t.regex(r.stderr, /removing the veth pair spd\w+s\/spd\w+c and the client namespace/);
  t.is(r.stdout, '', 'no table: the demo did not run');
  t.deepEqual(inboundSnapshot(), before, 'links, qdiscs, named namespaces and state files as before');
  const j = synplug(['demo', '--inbound', '--json']);
  t.is(j.code, 5, j.stderr);
  t.like(JSON.parse(j.stdout), { category: 'missing-module', exit_code: 5 });
  t.regex((JSON.parse(j.stdout) as { error: string }).error, /sch_plug/);
  t.deepEqual(inboundSnapshot(), before);
});

test('--help lists the exit codes the demo can return, from the one table', (t) => {
  const r = synplug(['demo', '--help']);
  t.is(r.code, 0, r.stderr);
  const section = r.stdout.slice(r.stdout.indexOf('\nExit codes:\n') + 1).split('\n\n')[0];
  const codes = [...section.matchAll(/^ {2}(\d+) /gm)].map((m) => m[1]);
  for (const c of ['0', '2', '4', '5', '7', '9', '130']) t.true(codes.includes(c), `code ${c} listed`);
  t.regex(r.stdout, /--seconds <n>/);
  t.regex(r.stdout, /--restarts <n>/);
  t.regex(r.stdout, /--gap <duration>/);
  t.regex(r.stdout, /--state-dir <dir>/);
  t.regex(r.stdout, /--inbound /);
});
