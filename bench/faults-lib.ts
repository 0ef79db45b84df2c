/**
 * The SIGKILL campaign of issue #19 (deliverable 12), on one hold:
 *
 * - `queue`: the queue hold (the hold this kernel can build: nfnetlink_queue
 *   and NFQUEUE, no sch_plug). `npm run bench:faults` (bench/faults.ts, at
 *   least 100 runs) and its short sample in the live tier
 *   (test/live/guard-faults-kill.test.ts);
 * - `plug`: the local plug hold (sch_prio, sch_plug, cls_fw: the VM's
 *   kernels). `npm run bench:faults -- --vm` (at least 30 runs, in the VM of
 *   scripts/vm/run.sh) and its short sample in the kernel tier
 *   (test/kernel/guard-faults-kill.test.ts).
 *
 * A network namespace of its own (`sp-flt-PID`), the local hold set up for
 * 169.254.46.1, and a server there. Each run:
 *
 * 1. `synplug protect --max-hold 3s -- COMMAND`, where COMMAND makes a file
 *    RUN (the hold is on) and waits for a file GO;
 * 2. a client connects to the server once the hold is on (its SYN is held);
 * 3. SIGKILL to protect, its watchdog, protect and its watchdog, or (the
 *    queue hold) the queue's holder process (which keeps the bound queue
 *    socket for every holder, src/guard/leases-holder.ts) or all three, at a
 *    random moment: right away (before or while it plugs), while holding, or
 *    once the client's SYN is queued (in the queue, or in the plug qdisc);
 * 4. GO is made (a protect still alive then ends its command and releases).
 *
 * After every run, judged by the order of events and the kernel's state,
 * never by wall-clock time (every wait is bounded and only ends early):
 * - `leftBound`: the hold is left in place once protect, its watchdog (and
 *   the holder) are gone: the queue hold, a process still bound to the
 *   queue; the plug hold, marking still armed (the set element of
 *   synplug_active neither deleted nor timed out), or a new connection's SYN
 *   held;
 * - `synLost`: the client's SYN, sent during the hold, did not connect (the
 *   plug hold: after the next command, when nobody was left to release);
 * - `notClean`: the next command does not find a clean state: `synplug
 *   check` does not exit 0, or `status` shows a live lease, or (the plug
 *   hold) its armed pieces are still on lo (the fw filter on setup's tree, the
 *   marking chain: only around a hold).
 * - counted apart, not a failure: `staleRecord`, plug.json still saying
 *   buffering when protect and its watchdog were both killed (nobody was
 *   left to write it; the queue: the kernel let go when their sockets
 *   closed); the next command's stale-plug recovery takes it, as `status`
 *   then shows;
 * - counted apart, not a failure: `recoveredByNext` (the plug hold), the
 *   client's SYN still in the plug once protect and its watchdog were gone
 *   (both killed: the kernel's deadline stops marking new SYNs, and TCP does
 *   not retransmit a SYN still queued in the host), delivered when the next
 *   command (`status`) released the stale plug.
 *
 * @module
 */
import { execFile, execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { QUEUE_HOLDER_ARG } from '../src/guard/leases-holder.js';
import { NETNS_ENV } from '../src/netlink/netns.js';

const IP = '/usr/sbin/ip';
const TC = '/usr/sbin/tc';
const NFT = '/usr/sbin/nft';
const CLI = fileURLToPath(new URL('../dist/bundle/synplug.cjs', import.meta.url));
const ADDR = '169.254.46.1';
const PORT = 39420;
const QUEUE = 4200;

/** Whom a run kills: protect, its watchdog, the queue's holder process, protect and its watchdog, or all three. */
export type KillTarget = 'protect' | 'watchdog' | 'holder' | 'both' | 'all';
/** When: right after protect starts, while holding, or once the client's SYN is queued. */
export type KillMoment = 'start' | 'holding' | 'syn-queued';
/** The hold a campaign runs on: the queue hold (this kernel) or the local plug hold (the VM's kernels). */
export type FaultHold = 'queue' | 'plug';

/** What differs between the holds: the setup, who can be killed, and what the kernel shows (in the campaign's namespace). */
interface HoldUnderTest {
  /** setup's options */
  setup: string[];
  /** protect's --max-hold: the plug hold's is longer, for a client to start and its SYN to be held inside it in a software-emulated VM */
  maxHold: string;
  targets: KillTarget[];
  /** SYNs held now (undefined: the queue hold with nobody bound) */
  held(inNs: (...argv: string[]) => string): number | undefined;
  /** whether the hold is in place for new SYNs: a process bound to the queue; marking armed (synplug_active has an element) */
  inPlace(inNs: (...argv: string[]) => string): boolean;
  /** what of the hold's armed pieces (on the data path only around a hold) is left, as the oracles name it (empty: nothing) */
  armedLeft?(inNs: (...argv: string[]) => string): string[];
}

/** The queue's entry in the kernel's own list: SYNs queued, or undefined when nobody is bound. */
function queued(inNs: (...argv: string[]) => string): number | undefined {
  for (const line of inNs('cat', '/proc/net/netfilter/nfnetlink_queue').split('\n')) {
    const f = line.trim().split(/\s+/).map(Number);
    if (f[0] === QUEUE && f.length >= 8) return f[2];
  }
  return undefined;
}

const HOLDS: Record<FaultHold, HoldUnderTest> = {
  queue: {
    setup: ['--via', 'queue', '--addr', ADDR],
    maxHold: '3s',
    targets: ['protect', 'watchdog', 'holder', 'both', 'all'],
    held: queued,
    inPlace: (inNs) => queued(inNs) !== undefined,
  },
  plug: {
    setup: ['--via', 'plug', '--addr', ADDR],
    maxHold: '20s',
    targets: ['protect', 'watchdog', 'both'],
    // the plug qdisc's queue length (tc -s), the one oracle of what it holds: sch_plug has no dump of its state
    held: (inNs) => {
      const q = (JSON.parse(inNs(TC, '-s', '-j', 'qdisc', 'show', 'dev', 'lo')) as Array<{ kind: string; qlen?: number }>).find((x) => x.kind === 'plug');
      return q?.qlen ?? 0;
    },
    inPlace: (inNs) => {
      const out = JSON.parse(inNs(NFT, '-j', 'list', 'set', 'ip', 'synplug', 'synplug_active')) as { nftables: Array<{ set?: { elem?: unknown[] } }> };
      return (out.nftables.find((i) => i.set)?.set?.elem ?? []).length > 0;
    },
    // what a hold arms: the fw filter on lo's tree and the marking chain (the tree itself, prio 1: with its bands and
    // plug, is set up and stays: a root qdisc's change drops what lo sends meanwhile)
    armedLeft: (inNs) => {
      let filters: string[] = [];
      try {
        filters = (JSON.parse(inNs(TC, '-j', 'filter', 'show', 'dev', 'lo', 'parent', '1:')) as Array<{ kind: string; pref: number; options?: unknown }>)
          .filter((f) => f.options !== undefined) // a filter group's header entry has none
          .map((f) => `filter ${f.kind} pref ${f.pref} on lo`);
      } catch {
        // no qdisc 1: on lo: no filter of it either
      }
      const table = JSON.parse(inNs(NFT, '-j', 'list', 'table', 'ip', 'synplug')) as { nftables: Array<{ chain?: { name: string } }> };
      return [...filters, ...table.nftables.flatMap((i) => (i.chain ? [`chain ip synplug ${i.chain.name}`] : []))];
    },
  },
};

/** One run's outcome. */
export interface RunOutcome {
  target: KillTarget;
  moment: KillMoment;
  /** the delay after the moment, ms */
  delayMs: number;
  /** protect's exit status (null when killed) */
  protectCode: number | null;
  /** the watchdog was running when the kill came (at `start` it may not be yet) */
  watchdogFound: boolean;
  /** the queue's holder process was running when the kill came */
  holderFound: boolean;
  leftBound: boolean;
  synLost: boolean;
  notClean: boolean;
  /** plug.json still said buffering for the next command (both killed: nobody left to write it); that command's stale-plug recovery took it */
  staleRecord: boolean;
  /** the plug hold: the client's SYN was still in the plug once protect and its watchdog were gone; the next command released it */
  recoveredByNext: boolean;
  /** why, when something was left */
  detail?: string;
}

/** The campaign's counts. */
export interface CampaignResult {
  hold: FaultHold;
  runs: number;
  byTarget: Record<KillTarget, number>;
  /** runs that killed a running watchdog (once it had started) */
  watchdogsKilled: number;
  /** runs that killed the queue's running holder process */
  holdersKilled: number;
  leftBound: number;
  synLost: number;
  notClean: number;
  /** runs after which plug.json still said buffering, for the next command to recover (not a failure) */
  staleRecords: number;
  /** runs whose held SYN the next command released (the plug hold, both killed; not a failure) */
  recoveredByNext: number;
  failures: RunOutcome[];
}

/** mulberry32: a small seeded generator, so that a campaign can be replayed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Wait until `cond` holds, at most `limitMs`; whether it held. */
async function until(cond: () => boolean, limitMs: number): Promise<boolean> {
  const end = Date.now() + limitMs;
  while (Date.now() < end) {
    if (cond()) return true;
    await sleep(20);
  }
  return cond();
}

/** Whether a process runs (not a zombie); one that ends while it is read is not. */
const alive = (pid: number | undefined): boolean => {
  if (pid === undefined) return false;
  try {
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  } catch {
    return false;
  }
};

/** Processes whose command line matches `pattern` (pgrep -f), with `-P parent` when given. */
function pgrep(pattern: string, parent?: number): number[] {
  const r = spawnSync('pgrep', [...(parent !== undefined ? ['-P', String(parent)] : []), '-f', '--', pattern], { encoding: 'utf8' });
  return r.stdout.split('\n').filter(Boolean).map(Number);
}

const cmdline = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
};

/** The watchdog protect started: its child running watchdog-main, not as the queue's holder. */
function watchdogOf(pid: number): number | undefined {
  return pgrep('watchdog-main', pid).find((p) => !cmdline(p).includes(QUEUE_HOLDER_ARG));
}

/** The queue's holder process of namespace `ns` (watchdog-main --queue-holder, started with SYNPLUG_NETNS=ns). */
function holderOf(ns: string): number | undefined {
  return pgrep(QUEUE_HOLDER_ARG).find((p) => {
    try {
      return readFileSync(`/proc/${p}/environ`, 'utf8').split('\0').includes(`${NETNS_ENV}=${ns}`);
    } catch {
      return false;
    }
  });
}

/** A campaign's namespace, hold and server; {@link KillCampaign.run} one run at a time. */
export class KillCampaign {
  readonly ns = `sp-flt-${process.pid}`;
  private readonly dir = mkdtempSync(join(tmpdir(), 'synplug-faults-'));
  private readonly stateDir = join(this.dir, 'state');
  private server: ChildProcess | undefined;
  /** GO files of runs under way: made at close, so that no protected command is left waiting */
  private readonly pendingGo = new Set<string>();
  private readonly hold: HoldUnderTest;

  constructor(readonly holdName: FaultHold = 'queue') {
    this.hold = HOLDS[holdName];
  }

  private readonly inNs = (...argv: string[]): string => execFileSync(IP, ['netns', 'exec', this.ns, ...argv], { encoding: 'utf8' });

  /** The CLI in the namespace with the campaign's state directory (options before a `--`). */
  synplug(args: string[]): { code: number | null; stdout: string; stderr: string } {
    try {
      const stdout = execFileSync(process.execPath, [CLI, args[0], '--state-dir', this.stateDir, '--netns', this.ns, ...args.slice(1)], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 60_000,
      });
      return { code: 0, stdout, stderr: '' };
    } catch (e) {
      const x = e as { status: number | null; stdout: string; stderr: string };
      return { code: x.status, stdout: x.stdout, stderr: x.stderr };
    }
  }

  /** SYNs held now (the queue hold: undefined when nobody is bound to the queue), from the kernel's own state. */
  queued(): number | undefined {
    return this.hold.held(this.inNs);
  }

  /**
   * Make the namespace, set the hold up, start the server.
   * @throws {Error} setup failed (its output)
   */
  async open(): Promise<void> {
    execFileSync(IP, ['netns', 'add', this.ns]);
    execFileSync(IP, ['-n', this.ns, 'link', 'set', 'lo', 'up']);
    const set = this.synplug(['setup', ...this.hold.setup]);
    if (set.code !== 0) throw new Error(`setup failed: ${set.stderr}`);
    const py = `
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('${ADDR}', ${PORT})); s.listen(64); print('listening', flush=True)
while True:
    c, _ = s.accept(); c.close()
`;
    this.server = spawn(IP, ['netns', 'exec', this.ns, 'python3', '-c', py], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      this.server!.stdout!.once('data', () => resolve());
      this.server!.once('exit', () => reject(new Error('the server ended')));
    });
  }

  /** Tear the hold down, stop the server, delete the namespace. */
  close(): void {
    for (const go of this.pendingGo) writeFileSync(go, '');
    this.synplug(['teardown']);
    this.server?.kill('SIGKILL');
    try {
      execFileSync(IP, ['netns', 'del', this.ns]);
    } catch {
      /* not made */
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  /**
   * A client in the namespace: resolves with whether it connected (python3; a 60 s bound: SYN retries at 1, 3, 7 s,
   * and a SYN held in a plug is not retried, it waits for the release).
   */
  private client(): Promise<boolean> {
    const py = `
import socket
c = socket.socket(); c.settimeout(60)
try:
    c.connect(('${ADDR}', ${PORT})); print('connected')
except Exception as e:
    print('failed', e)
`;
    return new Promise((resolve) => {
      execFile(IP, ['netns', 'exec', this.ns, 'python3', '-c', py], { encoding: 'utf8', timeout: 90_000 }, (_e, stdout) =>
        resolve((stdout ?? '').trim() === 'connected'),
      );
    });
  }

  /** One run: kill `target` at `moment` (+ `delayMs`), then judge. */
  async run(target: KillTarget, moment: KillMoment, delayMs: number, i: number): Promise<RunOutcome> {
    const run = join(this.dir, `run${i}`);
    const go = join(this.dir, `go${i}`);
    this.pendingGo.add(go);
    const p = spawn(
      process.execPath,
      [
        CLI,
        'protect',
        '--state-dir',
        this.stateDir,
        '--netns',
        this.ns,
        '--max-hold',
        this.hold.maxHold,
        '--',
        'sh',
        '-c',
        `: > ${run}; while [ ! -e ${go} ]; do sleep 0.02; done`,
      ],
      { stdio: ['ignore', 'ignore', 'ignore'] },
    );
    const exited = new Promise<number | null>((r) => p.once('exit', (code) => r(code)));
    let protectDone = false;
    void exited.then(() => (protectDone = true));
    let client: Promise<boolean> | undefined;
    const startClient = () => {
      client ??= this.client();
    };
    if (moment !== 'start') {
      await until(() => existsSync(run) || protectDone, 30_000);
      if (existsSync(run)) startClient();
      if (moment === 'syn-queued') await until(() => (this.queued() ?? 0) >= 1 || protectDone, 15_000);
    }
    await sleep(delayMs);
    const wd = watchdogOf(p.pid!);
    const holder = holderOf(this.ns);
    const kills = { protect: ['protect'], watchdog: ['watchdog'], holder: ['holder'], both: ['protect', 'watchdog'], all: ['protect', 'watchdog', 'holder'] }[
      target
    ];
    const signal = (pid: number | undefined) => {
      try {
        if (pid !== undefined) process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    };
    if (kills.includes('protect')) p.kill('SIGKILL');
    if (kills.includes('watchdog')) signal(wd);
    if (kills.includes('holder')) signal(holder);
    // A protect left alive ends its command and releases; a killed one's command is ended too.
    if (moment === 'start') {
      await until(() => existsSync(run) || protectDone, 5000);
      if (existsSync(run)) startClient();
    }
    writeFileSync(go, '');
    this.pendingGo.delete(go);
    const protectCode = await exited;
    const wdGone = await until(() => !alive(wd), 30_000);
    const holderGone = await until(() => holderOf(this.ns) === undefined, 30_000);
    // The hold ends for new SYNs once nobody is bound (the queue: the watchdog releases for a killed protect, the
    // kernel unbinds a dead socket), or marking is off (the plug: disarmed, or the element's kernel-side timeout).
    const unbound = await until(() => !this.hold.inPlace(this.inNs), 60_000);
    // Everyone is gone now: what the plug still holds, nobody but the next command releases.
    const stuck = (this.queued() ?? 0) > 0;
    // The next command: its stale-plug recovery releases what a dead protect and watchdog left.
    const next = this.synplug(['status', '--json']);
    let staleRecord = false;
    let nextDetail = '';
    try {
      const s = JSON.parse(next.stdout) as { recovered?: string };
      staleRecord = s.recovered !== undefined;
    } catch {
      nextDetail = `the next command (status) exit ${next.code}: ${next.stderr.trim()}`;
    }
    const connected = client ? await client : true;
    // A new connection: the hold is not left in place.
    const fresh = await this.client();
    const check = this.synplug(['check']);
    const status = this.synplug(['status', '--json']);
    let statusDetail = '';
    try {
      const s = JSON.parse(status.stdout) as { leases?: unknown[]; plug?: { state?: string } };
      if ((s.leases?.length ?? 0) > 0) statusDetail = `${s.leases!.length} live lease(s)`;
      if (s.plug?.state === 'buffering') statusDetail = [statusDetail, 'plug.json still says buffering'].filter(Boolean).join('; ');
    } catch {
      statusDetail = `status exit ${status.code}: ${status.stderr.trim()}`;
    }
    const left = (this.queued() ?? 0) > 0;
    // after the next command, nothing of the hold on the data path (the watchdog, protect or that command removed it)
    const armedLeft = this.hold.armedLeft?.(this.inNs) ?? [];
    const notClean = check.code !== 0 || status.code !== 0 || statusDetail !== '' || nextDetail !== '' || left || armedLeft.length > 0;
    const detail = [
      !wdGone && 'the watchdog still runs',
      !holderGone && "the queue's holder still runs",
      !unbound && (this.holdName === 'queue' ? 'the queue is still bound' : 'marking is still armed'),
      !fresh && 'a new connection after the run did not connect',
      !connected && "the client's SYN did not connect",
      stuck && !staleRecord && 'a SYN was left in the plug and the next command did not say it recovered it',
      left && 'SYNs still held after the next command',
      armedLeft.length > 0 && `left on the data path after the next command: ${armedLeft.join(', ')}`,
      check.code !== 0 && `check exit ${check.code}: ${check.stderr.trim()}`,
      nextDetail,
      statusDetail,
    ]
      .filter(Boolean)
      .join('; ');
    return {
      target,
      moment,
      delayMs,
      protectCode,
      watchdogFound: wd !== undefined,
      holderFound: holder !== undefined,
      leftBound: !unbound || !fresh,
      synLost: !connected,
      notClean: notClean || (stuck && !staleRecord),
      staleRecord,
      recoveredByNext: stuck && staleRecord && connected,
      ...(detail && { detail }),
    };
  }
}

/**
 * Run a campaign of `runs` kills (targets and moments drawn with `seed`).
 * @param onRun called after each run (progress)
 * @param hold the queue hold (default; this kernel) or the local plug hold (a kernel with sch_plug: the VM)
 */
export async function killCampaign(
  runs: number,
  seed = 19,
  onRun: (o: RunOutcome, i: number) => void = () => {},
  hold: FaultHold = 'queue',
): Promise<CampaignResult> {
  const random = rng(seed);
  const targets = HOLDS[hold].targets;
  const moments: KillMoment[] = ['start', 'holding', 'syn-queued'];
  const c = new KillCampaign(hold);
  const result: CampaignResult = {
    hold,
    runs: 0,
    byTarget: { protect: 0, watchdog: 0, holder: 0, both: 0, all: 0 },
    watchdogsKilled: 0,
    holdersKilled: 0,
    leftBound: 0,
    synLost: 0,
    notClean: 0,
    staleRecords: 0,
    recoveredByNext: 0,
    failures: [],
  };
  // Interrupted: the namespace, the server and the hold go, as at the end.
  const onSignal = () => {
    c.close();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    await c.open();
    for (let i = 0; i < runs; i++) {
      const target = targets[Math.floor(random() * targets.length)];
      const moment = moments[Math.floor(random() * moments.length)];
      const delayMs = Math.floor(random() * 300);
      const o = await c.run(target, moment, delayMs, i);
      result.runs++;
      result.byTarget[target]++;
      if ((target === 'watchdog' || target === 'both' || target === 'all') && o.watchdogFound) result.watchdogsKilled++;
      if ((target === 'holder' || target === 'all') && o.holderFound) result.holdersKilled++;
      if (o.leftBound) result.leftBound++;
      if (o.synLost) result.synLost++;
      if (o.notClean) result.notClean++;
      if (o.staleRecord) result.staleRecords++;
      if (o.recoveredByNext) result.recoveredByNext++;
      if (o.leftBound || o.synLost || o.notClean) result.failures.push(o);
      onRun(o, i);
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    c.close();
  }
  return result;
}
