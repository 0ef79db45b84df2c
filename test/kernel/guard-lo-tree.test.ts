/**
 * Kernel (VM): lo's qdisc tree (the local plug hold's prio root, pfifo
 * bands and plug) is set up once and never changed around a hold, since a
 * root qdisc's change drops what lo sends while the kernel grafts. What it
 * meets:
 *
 * - `setup --force` over someone else's root: a `tbf 1:` (the handle tc
 *   users pick; the kernel refuses to replace a qdisc by one of another kind
 *   under the same handle) and a user's `prio 1:` with a u32 filter at
 *   synplug's pref: each goes whole, and a hold then works;
 * - a setup without the tree (one by an earlier synplug, which added it
 *   around each hold, or the tree removed by hand): `check` says set up and
 *   why the tree is absent; the next protect adds it and the tree stays;
 * - two state directories on lo: one's teardown keeps the tree while the
 *   other's hold holds on it, and removes it after; the other's next hold
 *   adds it again.
 */
import test, { type ExecutionContext } from 'ava';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setup, check, teardown } from '../../src/guard/index.js';
import {
  ADDR,
  LO_TREE,
  TEST_TIMEOUT,
  armedOnLo,
  assertUnarmed,
  cli,
  filtersText,
  probe,
  scratch,
  setupWithProxy,
  sleep,
  tool,
  useGuardVm,
  within,
} from '../helpers/guard-vm.js';

useGuardVm(test);

/** A protect around `touch` (the command ran: the hold worked), its exit and output. */
async function protectTouch(t: ExecutionContext) {
  const marker = join(scratch(t), 'ran');
  const p = await cli(['protect', '--max-hold', '10s', '--', 'touch', marker]);
  return { ...p, ran: existsSync(marker) };
}

test.serial("setup --force over a foreign root of handle 1: (tbf 1:): replaced by synplug's tree; a hold then works", async (t) => {
  t.timeout(TEST_TIMEOUT);
  await tool('tc', ['qdisc', 'add', 'dev', 'lo', 'root', 'handle', '1:', 'tbf', 'rate', '1gbit', 'burst', '64k', 'latency', '50ms']);
  const refused = await cli(['setup']);
  t.is(refused.code, 7, refused.stderr);
  const r = await cli(['setup', '--force']);
  t.is(r.code, 0, r.stdout + r.stderr);
  t.regex(r.stdout + r.stderr, /replace root qdisc tbf 1: on lo with prio 1: \(--force\)/);
  await assertUnarmed(t, 'after setup --force');
  const p = await protectTouch(t);
  t.is(p.code, 0, p.stderr);
  t.true(p.ran);
  await assertUnarmed(t, 'after protect');
});

test.serial("setup --force over a user's prio 1: (bands 3) with a u32 filter at pref 1: it goes whole, filter too; a hold then works", async (t) => {
  t.timeout(TEST_TIMEOUT);
  await tool('tc', ['qdisc', 'add', 'dev', 'lo', 'root', 'handle', '1:', 'prio', 'bands', '3']);
  const u32 = ['filter', 'add', 'dev', 'lo', 'parent', '1:', 'protocol', 'ip', 'pref', '1', 'u32', 'match', 'ip', 'dport', '5555', '0xffff', 'flowid', '1:1'];
  await tool('tc', u32);
  const refused = await cli(['setup']);
  t.is(refused.code, 7, refused.stderr);
  const r = await cli(['setup', '--force']);
  t.is(r.code, 0, r.stdout + r.stderr);
  t.is((await filtersText()).trim(), '', "the user's filter went with their root");
  await assertUnarmed(t, 'after setup --force');
  const p = await protectTouch(t);
  t.is(p.code, 0, p.stderr);
  t.true(p.ran);
});

test.serial("a setup without lo's tree (an earlier synplug's): check says set up and why; the next protect adds the tree, which stays", async (t) => {
  t.timeout(TEST_TIMEOUT);
  const proxy = await setupWithProxy(t);
  await tool('tc', ['qdisc', 'del', 'dev', 'lo', 'root']);
  const c = await cli(['check']);
  t.is(c.code, 0, c.stdout + c.stderr);
  const j = await check();
  t.is(j.state, 'ok');
  t.regex(j.pieces.find((p) => /qdisc prio/.test(p.piece))?.detail ?? '', /absent: the next hold adds it/);
  // a connection made during the protect is held and then delivered
  const marker = join(scratch(t), 'ran');
  const pr = cli(['protect', '--max-hold', '10s', '--', 'sh', '-c', `sleep 2.5; touch ${marker}`]);
  await sleep(2000); // phase one adds the tree and waits 1.1 s before holding
  const held = probe(ADDR, proxy.port, ADDR);
  const p = await within(pr, 'protect');
  t.is(p.code, 0, p.stderr);
  t.true(existsSync(marker));
  t.is(await within(held.data, 'the connection made during the hold'), 'proxy');
  await assertUnarmed(t, 'after protect: the tree it added stays, nothing steers into it');
  t.is((await check()).state, 'ok');
});

test.serial(
  "two state directories on lo: one's teardown keeps the tree while the other holds on it, removes it after; the other's next hold adds it again",
  async (t) => {
    t.timeout(TEST_TIMEOUT);
    const B = '/run/synplug-vm-lo-tree-b';
    rmSync(B, { recursive: true, force: true });
    t.teardown(() =>
      teardown({ stateDir: B }).then(
        () => rmSync(B, { recursive: true, force: true }),
        () => rmSync(B, { recursive: true, force: true }),
      ),
    );
    const proxy = await setupWithProxy(t);
    const b = await setup({ stateDir: B, table: 'synplug_b', addr: '169.254.255.253', mark: 2 });
    t.true(b.changed);
    // A holds (its fw filter on the tree, a SYN in the plug): B's teardown neither releases the shared plug nor
    // removes the tree, and says why
    const pl = await cli(['plug', '--max-hold', '60s']);
    t.is(pl.code, 0, pl.stderr);
    const held = probe(ADDR, proxy.port, ADDR);
    await sleep(500);
    t.is(held.connectedAt, undefined, "held by A's plug");
    const down = await teardown({ stateDir: B });
    t.true(
      down.kept.some((k) => /qdisc prio 1: on lo: 1 filter\(s\) not of this hold are on it/.test(k)) &&
        down.kept.some((k) => /the plug on lo, held: 1 filter\(s\) not of this hold steer into it/.test(k)),
      JSON.stringify(down),
    );
    t.deepEqual((await armedOnLo()).qdiscs, LO_TREE, "A's hold keeps its tree");
    await sleep(300);
    t.is(held.connectedAt, undefined, "still held by A's plug after B's teardown");
    const rel = await cli(['release']);
    t.is(rel.code, 0, rel.stderr);
    t.is(await within(held.data, "the connection A's release let go"), 'proxy');
    // A not holding: B's teardown removes the tree; A's next hold adds it again
    await setup({ stateDir: B, table: 'synplug_b', addr: '169.254.255.253', mark: 2 });
    const down2 = await teardown({ stateDir: B });
    t.true(
      down2.removed.some((x) => /^qdisc prio 1:/.test(x)),
      JSON.stringify(down2),
    );
    t.is((await check()).state, 'ok', 'A is still set up: its next hold adds the tree');
    const p = await protectTouch(t);
    t.is(p.code, 0, p.stderr);
    t.true(p.ran);
    await assertUnarmed(t, "after A's protect");
  },
);
