/**
 * A manual `plug` that no `release` ends: its lease is dropped at its
 * --max-hold deadline (the local plug hold: by its watchdog; the queue hold:
 * by the queue's holder, or its watchdog, whichever drops it first), and that
 * one writes its history line (history.ts maxHoldPlugEntry): a release line,
 * `maxHold: true`, exactly one. Before, nothing recorded what the plug held
 * (only the plug's own line, holding nothing yet). A manual release before
 * the deadline writes its own line, and no max-hold line. The watchdogs and
 * the holder run in this process on the kernel double
 * (test/helpers/watchdog-in-process.ts, holder-in-process.ts, fake-kernel.ts).
 */
import test from 'ava';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as guard from '../../src/guard/index.js';
import { readHistory, type HistoryEntry } from '../../src/guard/history.js';
import { StateStore } from '../../src/guard/state.js';
import { formatHistoryEntry } from '../../src/cli/format-guard.js';
import { FakeKernel } from '../helpers/fake-kernel.js';
import { InProcessHolders } from '../helpers/holder-in-process.js';
import { InProcessWatchdogs } from '../helpers/watchdog-in-process.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A hold set up on the double (`via`), a manual plug of `maxHoldMs`; `then` after it; the history once every watchdog and holder ended. */
async function manualPlug(via: 'plug' | 'queue', maxHoldMs: number, then: (stateDir: string) => Promise<void> = async () => {}) {
  const kernel = new FakeKernel();
  const holders = new InProcessHolders();
  const watchdogs = new InProcessWatchdogs();
  const undo = [kernel.install(), holders.install(), watchdogs.install()];
  const dir = join(mkdtempSync(join(tmpdir(), 'synplug-maxhold-hist-')), 'state');
  try {
    mkdirSync(dir, { mode: 0o700 });
    await guard.setup({ stateDir: dir, via, addr: '169.254.46.3' });
    const plugged = await guard.plug({ stateDir: dir, maxHoldMs });
    await then(dir);
    const settled = (await watchdogs.settle(20_000)) && (await holders.settle());
    await sleep(50);
    const store = new StateStore(dir);
    return { plugged, settled, history: readHistory(dir), plug: store.readPlug(), leases: store.readLeases()?.leases ?? [], reports: watchdogs.reports };
  } finally {
    watchdogs.terminate();
    holders.terminate();
    await watchdogs.settle();
    await holders.settle();
    for (const u of undo) u();
    rmSync(join(dir, '..'), { recursive: true, force: true });
  }
}

const maxHoldLines = (h: HistoryEntry[]) => h.filter((e) => e.maxHold === true);

for (const via of ['plug', 'queue'] as const) {
  test.serial(`regression: a manual plug ended by its --max-hold gets one release line (maxHold) with what it held (${via} hold)`, async (t) => {
    const r = await manualPlug(via, 300);
    t.true(r.settled, 'its watchdog (and holder) ended');
    t.deepEqual(r.leases, [], 'its lease was dropped');
    t.is(r.plug?.state, 'released');
    t.deepEqual(
      r.history.map((e) => e.command),
      ['plug', 'release'],
      JSON.stringify(r.history),
    );
    const lines = maxHoldLines(r.history);
    t.is(lines.length, 1, `one max-hold line: ${JSON.stringify(r.history)} (watchdog: ${r.reports.join(' | ')})`);
    const [e] = lines;
    t.is(e.command, 'release');
    t.is(e.exitCode, 0);
    t.deepEqual(e.holds, r.plugged.holds);
    t.true(e.report.holdMs >= 300, String(e.report.holdMs));
    t.is(e.report.lossless, null);
    t.regex(
      e.report.uncounted?.[0] ?? '',
      /^a manual plug held until its --max-hold \((its watchdog|the queue's holder) released it\): the SYNs held were not counted$/,
    );
    t.is(e.killed, undefined);
    t.true(formatHistoryEntry(e).includes("SYNs not counted; a manual plug's hold ended at its --max-hold"), formatHistoryEntry(e));
  });
}

test.serial('a manual plug released by hand before its deadline: the release line, no max-hold line', async (t) => {
  const r = await manualPlug('plug', 60_000, async (stateDir) => {
    await guard.release({ stateDir });
  });
  t.true(r.settled);
  t.deepEqual(
    r.history.map((e) => e.command),
    ['plug', 'release'],
  );
  t.deepEqual(maxHoldLines(r.history), []);
});
