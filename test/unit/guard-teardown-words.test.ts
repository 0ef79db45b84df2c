/**
 * What teardown says (the kernel is the double, test/helpers/fake-kernel.ts):
 *
 * - during a running protect (a live protect lease; its holder is this
 *   process): it releases and removes the hold under the protect, and now
 *   says so first (which protect, its pid and command, what becomes of its
 *   hold and its report), in text and in `--json` (`brokenLeases`). Before,
 *   it said only what it removed;
 * - through an empty state directory with another directory's hold here: not
 *   "nothing of synplug's is set up" followed by synplug's pieces left alone;
 * - `--hold` naming no hold's id: exit 2 with the ids (before: exit 0).
 */
import test from 'ava';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as guard from '../../src/guard/index.js';
import { StateStore, type Lease } from '../../src/guard/state.js';
import { formatTeardown } from '../../src/cli/format-guard.js';
import { FakeKernel } from '../helpers/fake-kernel.js';

for (const owner of ['protect'] as const) {
  test.serial(`teardown while a ${owner} lease is live: brokenLeases names it, and the text says it first`, async (t) => {
    const kernel = new FakeKernel();
    const undo = kernel.install();
    const base = mkdtempSync(join(tmpdir(), 'synplug-tdlease-'));
    try {
      const dir = join(base, 'state');
      mkdirSync(dir, { mode: 0o700 });
      const s = await guard.setup({ stateDir: dir, via: 'plug', addr: '169.254.46.31' });
      const store = new StateStore(dir);
      const now = Date.now();
      const lease: Lease = {
        id: 'feedfacefeedface',
        owner,
        pid: process.pid, // alive (no start time: this process)
        ...(owner === 'protect' && { command: ['haproxy', '-sf', '4242'] }),
        holds: [s.hold],
        since: now - 1500,
        deadline: now + 600_000,
      };
      store.writeLeases({ version: 1, leases: [lease] });
      store.writePlug({ version: 1, state: 'buffering', owner, pid: lease.pid, dev: 'lo', since: lease.since, deadline: lease.deadline });
      const r = await guard.teardown({ stateDir: dir });
      t.deepEqual(r.brokenLeases, [
        { owner, pid: process.pid, ...(owner === 'protect' && { command: ['haproxy', '-sf', '4242'] }), holds: [s.hold], since: lease.since },
      ]);
      const text = formatTeardown(r).split('\n');
      t.is(
        text[0],
        `ENDED the hold of a running protect: pid ${process.pid} (haproxy -sf 4242), held ${s.hold} since ${new Date(lease.since).toISOString()}. Its hold was released and removed: its command goes on, no longer held (new connections are no longer held for it); its report says a teardown ended the hold, and it records no history line or metrics here`,
      );
      t.regex(text[1], /^removed/);
      // nothing live: nothing said
      await guard.setup({ stateDir: dir, via: 'plug', addr: '169.254.46.31' });
      const again = await guard.teardown({ stateDir: dir });
      t.is(again.brokenLeases, undefined);
      t.notRegex(formatTeardown(again), /ENDED|ended/);
    } finally {
      undo();
      rmSync(base, { recursive: true, force: true });
    }
  });
}

test("teardown's text on a manual plug it ended (a live manual lease needs its watchdog: the result as teardown returns it)", (t) => {
  const since = Date.parse('2026-12-06T07:00:00.000Z');
  const text = formatTeardown({
    dev: 'lo',
    removed: ['x'],
    kept: [],
    holds: ['queue'],
    brokenLeases: [{ owner: 'manual', pid: 4242, holds: ['queue'], since }],
  });
  t.is(
    text.split('\n')[0],
    "ended a manual plug's hold ('synplug plug', pid 4242), held queue since 2026-12-06T07:00:00.000Z: released and removed before its --max-hold",
  );
});

test.serial(
  "teardown through an empty state directory with another directory's hold here: not \"nothing of synplug's is set up\" followed by synplug's pieces left alone",
  async (t) => {
    const kernel = new FakeKernel();
    const undo = kernel.install();
    const base = mkdtempSync(join(tmpdir(), 'synplug-tdlease-'));
    try {
      const [a, b] = [join(base, 'a'), join(base, 'b')];
      await guard.setup({ stateDir: a, via: 'plug', addr: '169.254.46.32' });
      const r = await guard.teardown({ stateDir: b });
      t.deepEqual(r.removed, []);
      t.true(r.kept.length > 0, JSON.stringify(r));
      t.is(r.nothingSetUp, `nothing to remove here: the state directory ${b} records no setup, and what is left alone below is not this directory's`);
      t.notRegex(formatTeardown(r), /nothing of synplug's/);
      t.regex(formatTeardown(r), /\nleft alone:\n {2}local hold local on lo: kept whole, another state directory's/);
    } finally {
      undo();
      rmSync(base, { recursive: true, force: true });
    }
  },
);

test.serial("teardown --hold of no hold's id: exit 2 (usage) with the ids' forms and the holds set up here; nothing removed", async (t) => {
  const kernel = new FakeKernel();
  const undo = kernel.install();
  const base = mkdtempSync(join(tmpdir(), 'synplug-tdlease-'));
  try {
    const dir = join(base, 'state');
    mkdirSync(dir, { mode: 0o700 });
    const s = await guard.setup({ stateDir: dir, via: 'queue', addr: '169.254.46.33' });
    for (const id of ['nosuch', 'inbound:', 'queue:']) {
      const e = await t.throwsAsync(guard.teardown({ stateDir: dir, hold: id }));
      t.is((e as { category?: string }).category, 'usage', id);
      t.is(
        e?.message,
        `teardown --hold '${id}': no hold has that id: give one of local, inbound:DEV, queue, queue:DEV (set up here: ${s.hold}); nothing was changed`,
      );
    }
    t.deepEqual((await guard.check({ stateDir: dir })).state, 'ok', 'nothing removed');
    // a well-formed id of a hold that is not set up: exit 0, saying so (as --inbound and --local)
    const r = await guard.teardown({ stateDir: dir, hold: 'inbound:sp-nope0' });
    t.regex(r.nothingSetUp ?? '', /no such hold is set up \(set up: queue\); nothing to remove/);
    await guard.teardown({ stateDir: dir });
  } finally {
    undo();
    rmSync(base, { recursive: true, force: true });
  }
});

test.serial(
  "teardown through an empty state directory with another directory's queue hold here: not \"nothing of synplug's is set up\" (there is: that directory's)",
  async (t) => {
    const kernel = new FakeKernel();
    const undo = kernel.install();
    const base = mkdtempSync(join(tmpdir(), 'synplug-tdlease-'));
    try {
      const [a, b] = [join(base, 'a'), join(base, 'b')];
      await guard.setup({ stateDir: a, via: 'queue', addr: '169.254.46.34', queue: { num: 4712 } });
      const r = await guard.teardown({ stateDir: b });
      t.deepEqual(r.removed, []);
      t.is(
        r.nothingSetUp,
        `nothing to remove: the state directory ${b} records no setup (a hold set up through another --state-dir is torn down through that one)`,
      );
      t.true(
        kernel.state.tables.some((x) => x.name === 'synplug_queue'),
        "a's hold stays",
      );
      await guard.teardown({ stateDir: a });
    } finally {
      undo();
      rmSync(base, { recursive: true, force: true });
    }
  },
);
