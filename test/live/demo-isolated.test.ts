/**
 * `synplug demo` (the built CLI) runs in network namespaces of its own: the
 * caller's namespace (here one of this file's own, `ip netns add`) is
 * byte-identical, as the reference tools print it (ip -d -j link, ip -j addr,
 * tc -j qdisc and filter, nft -j list ruleset, every net.* sysctl), before,
 * during and after a normal run, a failure, a SIGINT while a protected
 * restart holds, and a SIGTERM in the unprotected phase. `--here` keeps the
 * old behaviour: the same snapshot taken during such a run differs (so the
 * comparison does see a hold set up in the caller's namespace), and is
 * identical again after it. This kernel has no sch_plug: the demo holds with
 * the queue hold, and its summary line says so.
 */
import test from 'ava';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { netnsSnapshot } from '../helpers/netns-snapshot.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'dist/bundle/synplug.cjs'); // package.json bin
const NS = `spdiso${process.pid}`;
const STATE = mkdtempSync(join(tmpdir(), 'synplug-demo-iso-'));
const IP = '/usr/sbin/ip';

/** The namespace as the reference tools print it (test/helpers/netns-snapshot.ts), and the state directory's entries. */
function snapshot() {
  return { ...netnsSnapshot(NS), stateFiles: readdirSync(STATE) };
}

/** A run of `synplug ARGS` in the namespace; `onLine` sees each stderr line as it comes (and may signal the process). */
function demo(args: string[], onLine: (line: string, signal: (s: NodeJS.Signals) => void) => void = () => {}, pre: string[] = []) {
  const child = spawn(IP, ['netns', 'exec', NS, ...pre, process.execPath, BIN, 'demo', ...args], {
    env: { ...process.env, SYNPLUG_STATE_DIR: STATE },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let partial = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    partial += d.toString();
    const lines = partial.split('\n');
    partial = lines.pop() ?? '';
    // `ip netns exec` execs node: the pid is the demo's
    for (const l of lines) onLine(l, (s) => child.kill(s));
  });
  const guard = setTimeout(() => child.kill('SIGKILL'), 120_000);
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => {
      clearTimeout(guard);
      resolve({ code, stdout, stderr });
    }),
  );
}

test.before(() => {
  if (!existsSync(BIN)) throw new Error(`${BIN} missing: run npm run build first`);
  execFileSync(IP, ['netns', 'add', NS]);
  execFileSync(IP, ['-n', NS, 'link', 'set', 'lo', 'up']);
  // something of the caller's on lo, for the run to leave alone
  execFileSync(IP, ['-n', NS, 'addr', 'add', '169.254.77.1/32', 'dev', 'lo']);
});
test.after.always(() => {
  spawnSync(IP, ['netns', 'del', NS]);
  rmSync(STATE, { recursive: true, force: true });
});

test.serial('a normal run: the caller namespace is identical during and after it; the summary names the hold used', async (t) => {
  const before = snapshot();
  let during: ReturnType<typeof snapshot> | undefined;
  const r = await demo(['--seconds', '2', '--restarts', '2'], (line) => {
    if (!during && /phase 2:/.test(line)) during = snapshot();
  });
  t.is(r.code, 0, r.stderr);
  t.regex(r.stderr, /running in a network namespace of the demo's own/);
  const first = r.stdout.split('\n')[0];
  t.regex(first, /the local queue hold was set up for the demo and removed again; it ran in a network namespace of its own: this one was not changed$/);
  t.regex(r.stdout, /^PROTECTED: /m);
  t.truthy(during, 'a snapshot was taken while the demo ran');
  // (the demo's own state directory, inside the state directory, exists while it runs)
  t.deepEqual({ ...during!, stateFiles: [] }, { ...before, stateFiles: [] });
  t.deepEqual(
    during!.stateFiles.map((f) => f.replace(/-\w+$/, '-X')),
    ['synplug-demo-X'],
  );
  t.deepEqual(snapshot(), before);
});

test.serial('--json: netns "own", the hold it used, and the namespace identical after', async (t) => {
  const before = snapshot();
  const r = await demo(['--seconds', '1', '--restarts', '1', '--json']);
  t.is(r.code, 0, r.stderr);
  const j = JSON.parse(r.stdout) as { netns: string; mode: string; via: string; dev: string; setup: { by: string; removed: string[] } };
  t.like(j, { netns: 'own', mode: 'local', via: 'queue', dev: 'lo', setup: { by: 'demo' } });
  t.true(j.setup.removed.length > 0);
  t.deepEqual(snapshot(), before);
});

test.serial('a failure inside its namespace (--via plug on a kernel without sch_plug): exit 5 relayed, the namespace identical', async (t) => {
  const before = snapshot();
  const r = await demo(['--via', 'plug', '--json']);
  t.is(r.code, 5, r.stderr);
  t.like(JSON.parse(r.stdout), { category: 'missing-module' });
  t.regex(r.stderr, /sch_plug \(qdisc plug\)/);
  t.deepEqual(snapshot(), before);
});

test.serial('SIGINT while a protected restart holds: exit 130, interrupted by SIGINT, the namespace identical', async (t) => {
  const before = snapshot();
  let sent = false;
  const r = await demo(['--seconds', '4', '--restarts', '1', '--gap', '3s'], (line, signal) => {
    if (!sent && /a protected restart: new connections are held/.test(line)) {
      sent = true;
      signal('SIGINT');
    }
  });
  t.true(sent, r.stderr);
  t.is(r.code, 130, r.stderr);
  // what it removed, and where (issue 22: it did not say that those removals were in its own namespace)
  t.regex(
    r.stderr,
    /demo interrupted by SIGINT: it stopped its clients and server and removed what it had set up \(.+\); all of it was in the demo's own network namespace \(this namespace was not changed\)\n/,
  );
  t.is(r.stdout, '');
  t.deepEqual(snapshot(), before);
});

test.serial('--here, SIGINT while a protected restart holds: exit 130; it says what it removed, not that it was in a namespace of its own', async (t) => {
  const before = snapshot();
  let sent = false;
  const r = await demo(['--here', '--seconds', '4', '--restarts', '1', '--gap', '3s'], (line, signal) => {
    if (!sent && /a protected restart: new connections are held/.test(line)) {
      sent = true;
      signal('SIGINT');
    }
  });
  t.true(sent, r.stderr);
  t.is(r.code, 130, r.stderr);
  t.regex(r.stderr, /demo interrupted by SIGINT: it stopped its clients and server and removed what it had set up \(.+\)\n/);
  t.notRegex(r.stderr, /own network namespace|this namespace was not changed/);
  t.deepEqual({ ...snapshot(), stateFiles: [] }, { ...before, stateFiles: [] });
  rmSync(join(STATE, 'history.jsonl'), { force: true });
});

test.serial('SIGTERM in the unprotected phase, --inbound: exit 130, the namespace identical (no veth, no IFB left here)', async (t) => {
  const before = snapshot();
  let sent = false;
  const r = await demo(['--inbound', '--seconds', '3', '--restarts', '1'], (line, signal) => {
    if (!sent && /phase 1:/.test(line)) {
      sent = true;
      signal('SIGTERM');
    }
  });
  t.true(sent, r.stderr);
  t.is(r.code, 130, r.stderr);
  t.regex(r.stderr, /demo interrupted by SIGTERM: .*; all of it was in the demo's own network namespaces \(this namespace was not changed\)\n/);
  t.deepEqual(snapshot(), before);
});

test.serial('--here: the hold is set up in this namespace during the run (the snapshot sees it), and removed after', async (t) => {
  const before = snapshot();
  let during: ReturnType<typeof snapshot> | undefined;
  const r = await demo(['--here', '--seconds', '1', '--restarts', '1'], (line) => {
    if (!during && /phase 1:/.test(line)) during = snapshot();
  });
  t.is(r.code, 0, r.stderr);
  t.truthy(during);
  t.notDeepEqual(during!.ruleset, before.ruleset, "the queue hold's table is in this namespace's ruleset during the run");
  t.regex(r.stdout.split('\n')[0], /the local queue hold was set up for the demo and removed again; it ran in this network namespace \(--here\)$/);
  afterHere(t, before, 1);
});

/**
 * After a --here run: the namespace as before (protect's RST counters' table went with the demo's hold);
 * in the state directory only the reload history,
 * one line per protected restart (removed here, for the next test).
 */
function afterHere(t: import('ava').ExecutionContext, before: ReturnType<typeof snapshot>, restarts: number) {
  const after = snapshot();
  t.deepEqual({ ...after, stateFiles: [] }, { ...before, stateFiles: [] });
  t.deepEqual(after.stateFiles, [...before.stateFiles, 'history.jsonl']);
  const history = readFileSync(join(STATE, 'history.jsonl'), 'utf8').trim().split('\n');
  t.is(history.length, restarts, 'one history line per protected restart');
  rmSync(join(STATE, 'history.jsonl'));
}

test.serial('root without CAP_SYS_ADMIN (a container with NET_ADMIN only): exit 4 naming --here; with --here it runs in this namespace', async (t) => {
  // setpriv: CAP_SYS_ADMIN dropped from the bounding set, so from the effective set at exec
  const noSysAdmin = ['/usr/bin/setpriv', '--bounding-set', '-sys_admin'];
  const before = snapshot();
  const r = await demo(['--seconds', '1', '--restarts', '1'], () => {}, noSysAdmin);
  t.is(r.code, 4, r.stderr);
  t.regex(
    r.stderr,
    /^synplug: demo needs CAP_SYS_ADMIN to create its network namespace \(unshare\): run it as root \(or grant the capability\), or give --here to run it in this namespace/m,
  );
  t.regex(r.stderr, /nothing was changed/);
  t.deepEqual(snapshot(), before);
  const here = await demo(['--here', '--seconds', '1', '--restarts', '1', '--json'], () => {}, noSysAdmin);
  t.is(here.code, 0, here.stderr);
  t.like(JSON.parse(here.stdout), { netns: 'caller', via: 'queue' });
  afterHere(t, before, 1);
});

test.serial(
  'regression: SIGINT before the demo set anything up, --inbound: exit 130, and it does not claim a hold "already set up" was left (nothing was)',
  async (t) => {
    const before = snapshot();
    let sent = false;
    // the first line after the preflight (before the topology): on this kernel, the queue hold's
    const r = await demo(['--inbound', '--seconds', '3', '--restarts', '1'], (line, signal) => {
      if (!sent && /holding with a netfilter queue|creating a network namespace of the demo's own for the clients/.test(line)) {
        sent = true;
        signal('SIGINT');
      }
    });
    t.true(sent, r.stderr);
    t.is(r.code, 130, r.stderr);
    t.regex(r.stderr, /demo interrupted by SIGINT/);
    t.notRegex(r.stderr, /already set up/);
    t.regex(
      r.stderr,
      /demo interrupted by SIGINT: it stopped (its clients and server|before starting its server and clients)( and removed what it had set up \(.*\))?; all of it was in the demo's own network namespaces \(this namespace was not changed\)\n/,
    );
    t.deepEqual(snapshot(), before);
  },
);
