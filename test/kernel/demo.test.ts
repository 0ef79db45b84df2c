/**
 * Kernel (VM): `synplug demo --here`, the built CLI as a user runs it, on the
 * VM's own `lo` (under the guard tests' `lo` lock, from a torn-down `lo`):
 * the demo in the caller's namespace, whose hold these tests can watch (the
 * default, in a namespace of the demo's own, is test/live/demo-isolated.test.ts).
 *
 * - on a clean `lo`: the unprotected phase loses requests, the protected
 *   phase none, every protected restart held SYNs for at least the gap; the
 *   demo set the hold up and removed exactly that (lo, the ruleset and the
 *   addresses as before, per tc/nft/ip);
 * - a hold already set up is used and left as it was (text output);
 * - a foreign root qdisc on lo is refused (exit 7) and left in place;
 * - SIGINT while a restart is held: exit 130, and everything removed;
 * - SIGKILL while a restart is held: the watchdog releases the plug and
 *   turns marking off (nothing stays plugged).
 *
 * Sizes are small (the VM is software-emulated: a `node` start takes
 * seconds), and every wait is bounded; no assertion is about speed except
 * that a hold lasts at least the gap it covers.
 */
import test from 'ava';
import { setup, check } from '../../src/guard/index.js';
import {
  ADDR,
  TEST_TIMEOUT,
  cli,
  startCli,
  tool,
  waitFor,
  within,
  kill,
  useGuardVm,
  readPlugJson,
  activeElements,
  assertLoClean,
  assertPlugReleased,
  qdiscsWithoutCounters,
  filtersText,
  nftTable,
  loAddresses,
  serve,
  qdiscs,
} from '../helpers/guard-vm.js';

useGuardVm(test);

/** What the reference tools see of everything the demo could touch. */
async function snapshot() {
  const ruleset = (JSON.parse(await tool('nft', ['-j', 'list', 'ruleset'])) as { nftables: Array<Record<string, unknown>> }).nftables.filter(
    (i) => !('metainfo' in i),
  );
  return {
    qdiscs: await qdiscsWithoutCounters(),
    filters: await filtersText(),
    ruleset,
    addrs: await loAddresses(),
    addrs6: await tool('ip', ['-6', 'addr', 'show', 'dev', 'lo']),
  };
}

interface Phase {
  name: string;
  requests: number;
  ok: number;
  failed: number;
  failures: Record<'refused' | 'reset' | 'timeout' | 'bad-response' | 'other', number>;
  latencyMs: { p50: number | null; p99: number | null; max: number | null };
  restartsWanted: number;
  restarts: Array<{
    atMs: number;
    closedMs: number;
    queuedAtClose: number | null;
    heldMs?: number;
    synsHeld?: number;
    drops?: number;
    maxHoldReached?: boolean;
  }>;
  heldMs: { mean: number; max: number } | null;
  synsHeld: { mean: number; total: number } | null;
}

function checkPhaseArithmetic(t: import('ava').ExecutionContext, p: Phase): void {
  t.is(p.ok + p.failed, p.requests, `${p.name}: ok + failed = requests`);
  t.is(
    Object.values(p.failures).reduce((a, b) => a + b, 0),
    p.failed,
    `${p.name}: the kinds add up to the failures`,
  );
  t.true(p.requests > 0, `${p.name}: requests were made`);
}

test.serial('demo --json on a clean lo: the unprotected phase loses requests, the protected phase none; the demo removes what it set up', async (t) => {
  t.timeout(2 * TEST_TIMEOUT); // each protected restart starts protect's watchdog, a node process: 5-15 s under TCG on a busy host
  await assertLoClean(t, 'before');
  const before = await snapshot();
  const gapMs = 300;
  const r = await within(
    cli(['demo', '--here', '--json', '--restarts', '3', '--gap', `${gapMs}ms`, '--seconds', '4']),
    'the demo to end',
    2 * TEST_TIMEOUT - 60_000,
  );
  t.log(`stdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
  t.is(r.code, 0, r.stderr);
  const j = JSON.parse(r.stdout) as {
    dev: string;
    addr: string;
    port: number;
    gapMs: number;
    restarts: number;
    verdict: string;
    message: string;
    setup: { by: string; actions: string[]; removed: string[] };
    phases: { unprotected: Phase; protected: Phase };
  };
  t.like(j, { dev: 'lo', addr: ADDR, gapMs, restarts: 3, verdict: 'protected' });
  t.true(j.port > 0 && j.port < 65536);
  t.is(j.setup.by, 'demo');
  // setup adds the table with its set and lo's prio tree with the plug; the fw filter and the marking chain come with
  // each hold (and go after it)
  t.true(
    j.setup.actions.some((a) => /nftables table synplug with set/.test(a)),
    j.setup.actions.join('; '),
  );
  t.true(
    j.setup.actions.some((a) => /^add qdisc prio 1: root/.test(a)) && j.setup.actions.some((a) => /^add qdisc plug 40:/.test(a)),
    j.setup.actions.join('; '),
  );
  t.false(
    j.setup.actions.some((a) => /filter|add chain/.test(a)),
    j.setup.actions.join('; '),
  );
  t.true(j.setup.removed.some((x) => /nftables table/.test(x)) && j.setup.removed.some((x) => /^qdisc prio 1:/.test(x)), j.setup.removed.join('; '));
  t.true(
    j.setup.removed.some((x) => x.startsWith(`address ${ADDR}/32`)),
    j.setup.removed.join('; '),
  );

  const u = j.phases.unprotected;
  const p = j.phases.protected;
  checkPhaseArithmetic(t, u);
  checkPhaseArithmetic(t, p);
  t.is(u.restarts.length, 3);
  t.is(p.restarts.length, 3);
  t.true(u.failed > 0, 'restarts without protection lost requests');
  t.true(u.failures.refused > 0, 'connections made during the gap were refused');
  t.is(p.failed, 0, `the protected phase lost no request: ${JSON.stringify(p.failures)}`);
  t.true(p.ok > 0);
  for (const x of [...u.restarts, ...p.restarts]) t.true(x.closedMs >= gapMs - 1, `closed ${x.closedMs} ms for a gap of ${gapMs}`);
  for (const x of p.restarts) {
    t.true(x.heldMs! >= x.closedMs, `held ${x.heldMs} ms, at least the ${x.closedMs} ms without a listener`);
    t.true(x.synsHeld! >= 1, `SYNs held ${x.synsHeld}`);
    t.is(x.drops, 0);
    t.false(x.maxHoldReached, 'released at the new listener, not at the max-hold');
    t.is(x.queuedAtClose, 0, 'under the plug, the accept queue was empty when the listening socket closed');
  }
  for (const x of u.restarts) t.true(x.queuedAtClose !== null && x.queuedAtClose >= 0, 'the accept queue was read (sock_diag)');
  t.is(p.heldMs!.max, Math.max(...p.restarts.map((x) => x.heldMs!)));
  t.is(
    p.synsHeld!.total,
    p.restarts.reduce((a, x) => a + x.synsHeld!, 0),
  );
  t.is(u.heldMs, null);
  t.true(p.latencyMs.max! >= p.latencyMs.p99! && p.latencyMs.p99! >= p.latencyMs.p50!);

  await assertLoClean(t, 'after the demo');
  t.deepEqual(await snapshot(), before, 'qdiscs, filters, ruleset and addresses as before');
  t.is(readPlugJson(), undefined, 'the state files the demo made are gone');
});

test.serial('demo with the hold already set up: used and left as it was (text output)', async (t) => {
  t.timeout(TEST_TIMEOUT);
  await setup();
  const before = { qdiscs: await qdiscsWithoutCounters(), filters: await filtersText(), table: await nftTable(), addrs: await loAddresses() };
  const r = await within(cli(['demo', '--here', '--restarts', '1', '--gap', '300ms', '--seconds', '3']), 'the demo to end', TEST_TIMEOUT - 30_000);
  t.log(`stdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /the local hold on lo \(already set up\) was used and left as it was/);
  t.regex(r.stderr, /using the local hold already set up on lo for 169\.254\.255\.254/);
  const row = (label: string) =>
    r.stdout
      .split('\n')
      .find((l) => l.startsWith(label))!
      .slice(label.length)
      .trim()
      .split(/ {2,}/);
  t.deepEqual(row('restarts'), ['1/1', '1/1']);
  const [failedU, failedP] = row('failed').map(Number);
  t.true(failedU > 0, 'unprotected restarts lost requests');
  t.is(failedP, 0, 'protected restarts lost none');
  t.regex(r.stdout, /\nPROTECTED: without synplug, 1 restart lost \d+ requests? of \d+ .*; under synplug, 1 restart lost none of \d+\n$/);

  t.deepEqual({ qdiscs: await qdiscsWithoutCounters(), filters: await filtersText(), table: await nftTable(), addrs: await loAddresses() }, before);
  t.is((await check()).state, 'ok');
  t.like(readPlugJson(), { state: 'released', owner: 'protect' });
  t.deepEqual(await activeElements(), [], 'marking is off');
  const proxy = await serve(ADDR, 'proxy');
  t.teardown(() => proxy.close());
  await assertPlugReleased(t, proxy.port, 'after the demo');
});

test.serial('a foreign root qdisc on lo: exit 7, refused and left in place, nothing added', async (t) => {
  t.timeout(TEST_TIMEOUT);
  await tool('tc', ['qdisc', 'add', 'dev', 'lo', 'root', 'handle', '5:', 'pfifo', 'limit', '77']);
  const before = await snapshot();
  const r = await within(cli(['demo', '--here', '--json']), 'the demo to end');
  t.is(r.code, 7, r.stderr);
  t.regex(r.stderr, /dev lo has a root qdisc that is not synplug's: qdisc pfifo 5:/);
  t.like(JSON.parse(r.stdout), { category: 'foreign-state', exitCode: 7 });
  t.deepEqual(await snapshot(), before, 'the pfifo stays; nothing was added');
  t.deepEqual(
    (await qdiscs()).map((q) => `${q.kind} ${q.handle}`),
    ['pfifo 5:'],
  );
});

/** Start `synplug demo` with a 3 s gap and wait until protect's plug is buffering in its phase 2. */
async function demoHeld(t: import('ava').ExecutionContext) {
  const p = startCli(['demo', '--here', '--restarts', '1', '--gap', '3s', '--seconds', '4']);
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

test.serial('SIGINT while a restart is held: exit 130, the plug released and everything the demo set up removed', async (t) => {
  t.timeout(TEST_TIMEOUT);
  const before = await snapshot();
  const p = await demoHeld(t);
  p.child.kill('SIGINT');
  const r = await within(p.done, 'the demo to stop');
  t.is(r.code, 130, r.stderr);
  t.regex(r.stderr, /demo interrupted by SIGINT: it stopped its clients and server and removed what it had set up/);
  await assertLoClean(t, 'after SIGINT');
  t.deepEqual(await snapshot(), before);
});

test.serial('SIGKILL while a restart is held: the watchdog releases the plug and turns marking off', async (t) => {
  t.timeout(TEST_TIMEOUT);
  const p = await demoHeld(t);
  const held = readPlugJson()!;
  t.truthy(held.watchdogPid);
  kill(p.child.pid, 'SIGKILL');
  await within(p.done, 'the demo to die');
  await waitFor(() => readPlugJson()?.state === 'released', 'the watchdog to record the release', { ms: 60_000 });
  t.like(readPlugJson(), { state: 'released', pid: p.child.pid });
  t.deepEqual(await activeElements(), [], 'marking is off');
  // The demo's setup stays (SIGKILL leaves no chance to remove it); the watchdog released the plug and removed the
  // hold's armed pieces (the fw filter, the marking chain).
  const proxy = await serve(ADDR, 'proxy');
  t.teardown(() => proxy.close());
  await assertPlugReleased(t, proxy.port, 'after SIGKILL');
});
