/**
 * The fault campaign of issue #19 (deliverable 12, the unit half) through
 * the guard's commands: a kernel double (test/helpers/fake-kernel.ts, an
 * in-memory model of links, addresses, qdiscs, filters and nf_tables, with
 * the plugs' own buffering state) refuses the k-th request, for every k of a
 * clean run of the command and one past it, through setup, plug, release,
 * protect and teardown of every hold: the local hold on lo, the inbound
 * hold of a device, and the queue hold. The watchdog and the queue's holder
 * run their own logic in this process (test/helpers/watchdog-in-process.ts,
 * test/helpers/holder-in-process.ts), on the same kernel, so their requests
 * are counted and refused too; the holder's unix socket is real. The double
 * has no traffic of its own: one SYN arrives at the queue as it is bound,
 * so that each queue hold has a SYN to release by a verdict. Release and
 * teardown start from a long manual plug (600 s): nothing signals its
 * watchdog (as nothing does outside the test), so a release or teardown that
 * failed leaves it held by its live lease, as it should. After each run,
 * once every watchdog and holder ended (but the long plug's, and a holder
 * holding for a live lease):
 *
 * - whatever was thrown is a categorised SynplugError (never a TypeError);
 * - nothing is half-applied: a setup that failed left the kernel as it found
 *   it (its steps were undone) and wrote no record; no plug buffers in the
 *   kernel unless plug.json says buffering (so the next command's stale-plug
 *   recovery finds it), nor a queue bound; no queue is left bound and no
 *   SYN left queued once no lease lives; every SYN held was let go by a
 *   verdict, none dropped by an unbind; with no live lease, marking is left
 *   armed only when the refused request was the disarm itself (its element
 *   then times out in the kernel);
 * - the records agree with the kernel: with no setup record, nothing of
 *   synplug's is in the kernel; with one, `check` finds every piece (a
 *   teardown that failed part-way excepted: the record then still names the
 *   hold, and the next teardown finishes);
 * - the next command recovers: a release or teardown that failed succeeds
 *   when run again; then `status` releases what is left buffering, after
 *   which no plug buffers, no queue is bound, plug.json says released and no
 *   lease is live; `check` is ok (or absent after a setup that failed, or a
 *   teardown), and a teardown after a failed one leaves nothing of synplug's.
 *
 * The kills at each request are test/live/guard-kill-steps.test.ts's.
 */
import test, { type ExecutionContext } from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as guard from '../../src/guard/index.js';
import { StateStore } from '../../src/guard/state.js';
import { liveLeases } from '../../src/guard/leases.js';
import { SynplugError } from '../../src/netlink/errors.js';
import { FakeKernel } from '../helpers/fake-kernel.js';
import type { WatchdogChild } from '../../src/guard/watchdog-child.js';
import { InProcessWatchdogs } from '../helpers/watchdog-in-process.js';
import { InProcessHolders } from '../helpers/holder-in-process.js';

/** nf_tables' NFT_MSG_DELSETELEM in subsystem NFNL_SUBSYS_NFTABLES (10 << 8 | 14): the disarm's batch carries it. */
const DELSETELEM = (10 << 8) | 14;

/** A step of a scenario: a guard command (`plug-long`: a manual plug whose deadline, 600 s, is after the run). */
type Step = 'setup' | 'plug' | 'plug-long' | 'release' | 'protect' | 'teardown';
type Command = Exclude<Step, 'plug-long'>;
/** For a plug hold: the commands the campaign refuses requests of, and the steps that bring the kernel to where each starts. */
const PLUG_COMMANDS: Partial<Record<Command, Step[]>> = {
  setup: [],
  plug: ['setup'],
  release: ['setup', 'plug-long'],
  protect: ['setup'],
  teardown: ['setup', 'plug-long'],
};

/** The holds: the options setup takes, and the commands. */
const HOLDS = {
  local: { setup: { via: 'plug' as const }, commands: PLUG_COMMANDS },
  inbound: { setup: { inbound: { dev: 'sp-flt0', ports: [8080] } }, commands: PLUG_COMMANDS },
  queue: { setup: { via: 'queue' as const, addr: '169.254.46.1' }, commands: PLUG_COMMANDS },
  'queue-inbound': { setup: { via: 'queue' as const, inbound: { dev: 'sp-flt0', ports: [8080] } }, commands: PLUG_COMMANDS },
};
type HoldName = keyof typeof HOLDS;

/** One world: a kernel, watchdogs and queue holders in this process, a state directory. */
class World {
  readonly kernel = new FakeKernel();
  readonly watchdogs = new InProcessWatchdogs();
  readonly holders = new InProcessHolders();
  readonly dir = mkdtempSync(join(tmpdir(), 'synplug-kfaults-'));
  readonly stateDir = join(this.dir, 'state');
  private readonly undo: Array<() => void>;

  constructor(readonly hold: HoldName) {
    this.undo = [this.kernel.install(), this.watchdogs.install(), this.holders.install()];
    this.kernel.synsPerBind = 1;
  }

  async close(): Promise<void> {
    this.watchdogs.terminate();
    this.holders.terminate();
    this.longLived.clear();
    await this.settle();
    for (const u of this.undo) u();
    rmSync(this.dir, { recursive: true, force: true });
  }

  get store(): StateStore {
    return new StateStore(this.stateDir);
  }

  /** the watchdogs of the long plugs: they act at their deadline (600 s), after the run (harmless then: a release), or at close */
  private readonly longLived = new Set<WatchdogChild>();

  /**
   * Run a step; its watchdogs are left to end (a manual plug's at its deadline: the long plug's is not waited for). The
   * manual plug's max-hold (0.5 s) leaves room for plug to buffer before its watchdog acts on a loaded machine.
   */
  async step(s: Step): Promise<unknown> {
    const o = { stateDir: this.stateDir };
    try {
      switch (s) {
        case 'setup':
          return await guard.setup({ ...o, ...HOLDS[this.hold].setup });
        case 'plug':
          return await guard.plug({ ...o, maxHoldMs: 500 });
        case 'plug-long':
          return await guard.plug({ ...o, maxHoldMs: 600_000 });
        case 'release':
          return await guard.release(o);
        case 'protect':
          return await guard.protect({ ...o, command: ['sh', '-c', 'exit 0'], maxHoldMs: 600_000 });
        case 'teardown':
          return await guard.teardown(o);
      }
    } finally {
      if (s === 'plug-long') for (const c of this.watchdogs.running) this.longLived.add(c);
      else await this.settle();
    }
  }

  /**
   * Wait until every watchdog (but the long plugs') ended, and every queue holder unless a lease lives (a long plug
   * that a failed release or teardown left holding: its holder holds until the lease's deadline, or a release).
   * @returns whether they all did
   */
  async settle(): Promise<boolean> {
    if (!(await this.watchdogs.settle(20_000, this.longLived))) return false;
    return liveLeases(this.store).length > 0 || this.holders.settle();
  }

  /** Synplug's objects in the kernel: an `ip synplug` table, lo's prio root, an IFB, a filter on the inbound device, the local address. */
  synplugObjects(): string[] {
    const st = this.kernel.state;
    return [
      ...st.tables.filter((t) => t.name.startsWith('synplug')).map((t) => `table ${t.name}`),
      ...st.qdiscs.filter((q) => q.ifindex === 1 || q.kind === 'plug' || q.kind === 'clsact').map((q) => `qdisc ${q.kind} on ${q.ifindex}`),
      ...st.links.filter((l) => l.name.startsWith('spifb')).map((l) => `link ${l.name}`),
      ...st.filters.map((f) => `filter ${f.kind} on ${f.ifindex}`),
      ...st.addrs.filter((a) => a.index === 1 && a.prefixlen === 32).map(() => 'address on lo'),
      ...st.queues.map((q) => `queue ${q.num} bound`),
    ];
  }
}

/** The outcome of a step: its result, or what it threw. */
async function attempt(w: World, s: Step): Promise<{ error?: unknown }> {
  try {
    await w.step(s);
    return {};
  } catch (error) {
    return { error };
  }
}

/** The requests a clean run of `command` makes after its BEFORE steps (the watchdog's included). */
async function cleanCount(t: ExecutionContext, hold: HoldName, command: Command): Promise<number> {
  const w = new World(hold);
  try {
    for (const s of HOLDS[hold].commands[command] ?? []) await w.step(s);
    const before = w.kernel.requests;
    const r = await attempt(w, command);
    t.is(r.error, undefined, `${hold} ${command}: a clean run succeeds`);
    return w.kernel.requests - before;
  } finally {
    await w.close();
  }
}

async function campaign(t: ExecutionContext, hold: HoldName, command: Command): Promise<void> {
  const n = await cleanCount(t, hold, command);
  t.true(n > 0, `${hold} ${command} makes requests`);
  let threw = 0;
  for (let k = 1; k <= n + 1; k++) {
    const w = new World(hold);
    try {
      for (const s of HOLDS[hold].commands[command] ?? []) await w.step(s);
      const pre = w.kernel.structure();
      const setupBefore = JSON.stringify(w.store.readSetup() ?? null);
      w.kernel.failAt = w.kernel.requests + k;
      const { error } = await attempt(w, command);
      const what = `${hold} ${command}, request ${k} of ${n} refused (${w.kernel.failed ?? 'none: past the end'})`;
      t.true(await w.settle(), `${what}: every watchdog and queue holder ended`);
      w.kernel.failAt = 0; // one fault only: what judges and recovers is not refused
      if (error !== undefined) {
        threw++;
        t.true(error instanceof SynplugError, `${what}: a categorised error, not ${String(error)}`);
      }
      if (k > n) t.is(error, undefined, `${what}: no fault, no error`);

      // Nothing half-applied; the records agree with the kernel.
      const plugRecord = w.store.readPlug();
      for (const p of w.kernel.plugs().filter((x) => x.buffering))
        t.is(plugRecord?.state, 'buffering', `${what}: the plug on ${p.dev} buffers, and plug.json says so (for the next command's recovery)`);
      for (const q of w.kernel.state.queues)
        t.is(plugRecord?.state, 'buffering', `${what}: queue ${q.num} is bound, and plug.json says buffering (for the next command's recovery)`);
      if (liveLeases(w.store).length === 0) {
        t.deepEqual(w.kernel.state.queues, [], `${what}: no lease lives, no queue is left bound`);
        t.is(w.kernel.queuedPackets(), 0, `${what}: and no SYN is left queued`);
      }
      t.is(w.kernel.verdicts.droppedUnanswered, 0, `${what}: every SYN held was let go by a verdict, none dropped by an unbind`);
      if (w.kernel.setElements().length > 0 && liveLeases(w.store).length === 0)
        t.true(w.kernel.failed?.split(/[:,]/).includes(String(DELSETELEM)), `${what}: marking is left armed only when the disarm itself was refused`);
      const setupRecord = w.store.readSetup();
      if (command === 'setup' && error !== undefined) {
        t.is(w.kernel.structure(), pre, `${what}: the failed setup left the kernel as it found it`);
        t.is(JSON.stringify(setupRecord ?? null), setupBefore, `${what}: and wrote no record`);
      }
      if (!setupRecord) t.deepEqual(w.synplugObjects(), [], `${what}: no record, nothing of synplug's in the kernel`);
      else if (!(command === 'teardown' && error !== undefined))
        t.is((await guard.check({ stateDir: w.stateDir })).state, 'ok', `${what}: check finds what the record names`);

      // The next command recovers: a release or teardown that failed leaves the long plug held by its live lease (as it
      // should: until its deadline, or a release), and the user runs it again; then `status`.
      if (error !== undefined && (command === 'release' || command === 'teardown'))
        t.is((await attempt(w, command)).error, undefined, `${what}: ${command} again succeeds`);
      await guard.status({ stateDir: w.stateDir });
      t.deepEqual(
        w.kernel.plugs().filter((x) => x.buffering),
        [],
        `${what}: after the next command, no plug buffers`,
      );
      t.not(w.store.readPlug()?.state, 'buffering', `${what}: plug.json says released`);
      t.deepEqual(liveLeases(w.store), [], `${what}: no live lease`);
      if (command === 'teardown' || (command === 'setup' && error !== undefined)) {
        if (w.store.readSetup()) await guard.teardown({ stateDir: w.stateDir });
        t.deepEqual(w.synplugObjects(), [], `${what}: a teardown leaves nothing of synplug's`);
        t.is((await guard.check({ stateDir: w.stateDir })).state, 'absent', what);
      } else t.is((await guard.check({ stateDir: w.stateDir })).state, 'ok', `${what}: check ok`);
      t.deepEqual(w.kernel.state.queues, [], `${what}: after the next command, no queue is bound`);
    } finally {
      await w.close();
    }
  }
  t.log(
    `${hold} ${command}: ${n} requests in a clean run; ${n} runs with one refused (${threw} ended in an error, the others went on past it), and one past the end`,
  );
}

for (const hold of Object.keys(HOLDS) as HoldName[]) {
  for (const command of Object.keys(HOLDS[hold].commands) as Command[]) {
    test.serial(
      `${hold} hold, ${command}: the k-th kernel request refused, for every k; nothing half-applied, records agree, the next command recovers`,
      async (t) => {
        t.timeout(5 * 60_000);
        await campaign(t, hold, command);
      },
    );
  }
}
