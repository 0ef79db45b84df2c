/**
 * Kernel (VM): `synplug demo --here --inbound`, the built CLI as a user runs
 * it, with the server's end of the pair in the caller's namespace, where these
 * tests can watch the hold (without --here all of it is in a namespace of the
 * demo's own: test/live/demo-isolated.test.ts): the clients in a network
 * namespace of the demo's own behind a veth pair,
 * the inbound hold (clsact on the demo's veth end, SYNs redirected to an IFB
 * whose root is a plug) set up by the demo and removed again.
 *
 * - `--json`: the unprotected phase loses requests, the protected phase none,
 *   every protected restart held SYNs, and nothing is left: no veth, no IFB,
 *   no clsact, no plug, no new network namespace (ip, tc and /proc as oracles);
 * - SIGINT while a restart is held: exit 130 and the same nothing left;
 * - SIGKILL while a restart is held: the watchdog releases the plug; the
 *   client process leaves with its channel, taking the namespace and the
 *   veth pair with it; `synplug teardown` removes the rest (the IFB).
 *
 * Sizes are small (the VM is software-emulated: a `node` start takes
 * seconds) and every wait is bounded; no assertion is about speed except
 * that a hold lasts at least the gap it covers.
 */
import test, { type ExecutionContext } from 'ava';
import { readdirSync, readlinkSync } from 'node:fs';
import { TEST_TIMEOUT, cli, kill, readPlugJson, startCli, tool, useGuardVm, waitFor, within } from '../helpers/guard-vm.js';

useGuardVm(test);

/** The network namespaces processes are in now (inode links of /proc/PID/ns/net). */
function netnsInUse(): Set<string> {
  const out = new Set<string>();
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      out.add(readlinkSync(`/proc/${pid}/ns/net`));
    } catch {
      /* gone, or a kernel thread */
    }
  }
  return out;
}

/** Links, every qdisc (without counters) and named namespaces, as ip and tc see them. */
async function snapshot() {
  const links = (JSON.parse(await tool('ip', ['-j', 'link', 'show'])) as Array<{ ifname: string }>).map((l) => l.ifname);
  const qdiscs = (JSON.parse(await tool('tc', ['-j', 'qdisc', 'show'])) as Array<{ kind: string; dev: string; handle: string }>).map(
    (q) => `${q.dev} ${q.kind} ${q.handle}`,
  );
  return { links, qdiscs, named: await tool('ip', ['netns', 'list']) };
}

/** Nothing of the demo's is left: the snapshot as before, and no namespace that was not there before. */
async function assertNothingLeft(t: ExecutionContext, before: Awaited<ReturnType<typeof snapshot>>, nsBefore: Set<string>, when: string) {
  const after = await snapshot();
  t.deepEqual(after, before, `${when}: links, qdiscs and named namespaces as before`);
  t.false(
    after.links.some((l) => /^spd/.test(l)),
    `${when}: no veth of the demo's`,
  );
  t.false(
    after.qdiscs.some((q) => / (clsact|plug) /.test(q)),
    `${when}: no clsact, no plug`,
  );
  // The client namespace lives as long as the demo's descriptor or its client process: both gone.
  await waitFor(() => [...netnsInUse()].every((n) => nsBefore.has(n)), `${when}: no process in a network namespace that was not there before`, { ms: 30_000 });
  t.pass();
}

interface Phase {
  name: string;
  requests: number;
  ok: number;
  failed: number;
  failures: Record<'refused' | 'reset' | 'timeout' | 'bad-response' | 'other', number>;
  restarts: Array<{ closedMs: number; queuedAtClose: number | null; heldMs?: number; synsHeld?: number; drops?: number; maxHoldReached?: boolean }>;
  synsHeld: { mean: number; total: number } | null;
}

test.serial('demo --inbound --json: unprotected restarts lose requests, protected ones none; no veth, IFB, clsact or namespace left', async (t) => {
  t.timeout(2 * TEST_TIMEOUT);
  const before = await snapshot();
  const nsBefore = netnsInUse();
  const gapMs = 300;
  const r = await within(
    cli(['demo', '--here', '--inbound', '--json', '--restarts', '3', '--gap', `${gapMs}ms`, '--seconds', '4']),
    'the demo to end',
    2 * TEST_TIMEOUT - 60_000,
  );
  t.log(`stdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
  t.is(r.code, 0, r.stderr);
  const j = JSON.parse(r.stdout) as {
    mode: string;
    dev: string;
    addr: string;
    inbound: { clientDev: string; clientAddr: string };
    verdict: string;
    setup: { by: string; actions: string[]; removed: string[] };
    phases: { unprotected: Phase; protected: Phase };
  };
  t.like(j, { mode: 'inbound', verdict: 'protected', setup: { by: 'demo' } });
  t.false('serverDev' in j.inbound, "the server's end is dev, once");
  t.regex(j.dev, /^spd\w+s$/);
  t.regex(j.addr, /^169\.254\.\d+\.1$/);
  t.is(j.inbound.clientAddr, j.addr.replace(/\.1$/, '.2'));
  t.true(
    j.setup.removed.some((x) => x.startsWith(`delete veth ${j.dev}`)),
    j.setup.removed.join('; '),
  );
  const u = j.phases.unprotected;
  const p = j.phases.protected;
  for (const ph of [u, p]) {
    t.is(ph.ok + ph.failed, ph.requests, `${ph.name}: ok + failed = requests`);
    t.true(ph.requests > 0);
  }
  t.is(u.restarts.length, 3);
  t.is(p.restarts.length, 3);
  t.true(u.failed > 0, 'restarts without protection lost requests');
  t.true(u.failures.refused > 0, 'connections from the other namespace during the gap were refused');
  t.is(p.failed, 0, `the protected phase lost no request: ${JSON.stringify(p.failures)}`);
  for (const x of p.restarts) {
    t.true(x.heldMs! >= x.closedMs, `held ${x.heldMs} ms, at least the ${x.closedMs} ms without a listener`);
    t.true(x.synsHeld! >= 1, `SYNs held ${x.synsHeld}`);
    t.is(x.drops, 0);
    t.false(x.maxHoldReached, 'released at the new listener, not at the max-hold');
  }
  t.is(
    p.synsHeld!.total,
    p.restarts.reduce((a, x) => a + x.synsHeld!, 0),
  );
  await assertNothingLeft(t, before, nsBefore, 'after the demo');
});

test.serial('demo --inbound (text): the table of both phases, the inbound line, and nothing left', async (t) => {
  t.timeout(2 * TEST_TIMEOUT);
  const before = await snapshot();
  const nsBefore = netnsInUse();
  const r = await within(
    cli(['demo', '--here', '--inbound', '--restarts', '3', '--gap', '300ms', '--seconds', '4']),
    'the demo to end',
    2 * TEST_TIMEOUT - 60_000,
  );
  t.log(`stdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
  t.is(r.code, 0, r.stderr);
  t.regex(
    r.stdout.split('\n')[0],
    /^synplug demo: a pong server on 169\.254\.\d+\.1:\d+ .*clients in a network namespace of the demo's own \(169\.254\.\d+\.2 on spd\w+c\), joined by a veth pair; the inbound hold on spd\w+s was set up for the demo and removed again/,
  );
  const row = (label: string) =>
    r.stdout
      .split('\n')
      .find((l) => l.startsWith(label))!
      .slice(label.length)
      .trim()
      .split(/ {2,}/);
  t.deepEqual(row('restarts'), ['3/3', '3/3']);
  const [failedU, failedP] = row('failed').map(Number);
  t.true(failedU > 0, 'unprotected restarts lost requests');
  t.is(failedP, 0, 'protected restarts lost none');
  t.regex(r.stdout, /\nPROTECTED: without synplug, 3 restarts lost \d+ requests? of \d+ .*; under synplug, 3 restarts lost none of \d+\n$/);
  t.regex(r.stderr, /setting up the inbound hold on spd\w+s for port \d+/);
  await assertNothingLeft(t, before, nsBefore, 'after the demo');
});

/** Start `demo --inbound` with a 3 s gap and wait until a protected restart holds. */
async function demoHeld(t: ExecutionContext) {
  const p = startCli(['demo', '--here', '--inbound', '--restarts', '1', '--gap', '3s', '--seconds', '4']);
  t.teardown(() => kill(p.child.pid));
  let stderr = '';
  p.child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const abort = () => p.ended && `the demo exited ${p.ended.code}: ${p.ended.stderr}`;
  await waitFor(() => /phase 2/.test(stderr), 'the demo to reach its protected phase', { abort });
  await waitFor(
    () => {
      const rec = readPlugJson();
      return rec?.state === 'buffering' && rec.pid === p.child.pid;
    },
    'a protected restart to hold',
    { abort },
  );
  return p;
}

test.serial('demo --inbound, SIGINT while a restart is held: exit 130, and no veth, IFB, clsact or namespace left', async (t) => {
  t.timeout(TEST_TIMEOUT);
  const before = await snapshot();
  const nsBefore = netnsInUse();
  const p = await demoHeld(t);
  p.child.kill('SIGINT');
  const r = await within(p.done, 'the demo to stop');
  t.is(r.code, 130, r.stderr);
  t.regex(r.stderr, /demo interrupted by SIGINT: it stopped its clients and server and removed what it had set up/);
  t.regex(r.stderr, /delete veth spd\w+s/);
  t.not(readPlugJson()?.state, 'buffering', 'not left plugged (plug.json released, or gone with the last hold)');
  await assertNothingLeft(t, before, nsBefore, 'after SIGINT');
});

test.serial(
  'demo --inbound, SIGKILL while a restart is held: the watchdog releases; the namespace and pair go with the client process; teardown removes the rest',
  async (t) => {
    t.timeout(TEST_TIMEOUT);
    const before = await snapshot();
    const nsBefore = netnsInUse();
    const p = await demoHeld(t);
    t.truthy(readPlugJson()?.watchdogPid);
    kill(p.child.pid, 'SIGKILL');
    await within(p.done, 'the demo to die');
    await waitFor(() => readPlugJson()?.state === 'released', 'the watchdog to record the release', { ms: 60_000 });
    t.like(readPlugJson(), { state: 'released', pid: p.child.pid });
    // The client process exits when its channel to the demo closes; the namespace, and the veth pair in it, go with it.
    await waitFor(() => [...netnsInUse()].every((n) => nsBefore.has(n)), 'the client namespace to go', { ms: 60_000 });
    const links = async () => (JSON.parse(await tool('ip', ['-j', 'link', 'show'])) as Array<{ ifname: string }>).map((l) => l.ifname);
    let left: string[] = [];
    for (let i = 0; i < 60; i++) {
      left = (await links()).filter((l) => /^spd/.test(l));
      if (left.length === 0) break;
      await new Promise((res) => setTimeout(res, 500));
    }
    t.deepEqual(left, [], 'the veth pair went with its namespace');
    const td = await cli(['teardown']);
    t.is(td.code, 0, td.stderr);
    await assertNothingLeft(t, before, nsBefore, 'after SIGKILL and teardown');
  },
);
