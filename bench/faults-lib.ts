/**
 * The SIGKILL campaign of issue #19 (deliverable 12), on the queue hold
 * (the hold this kernel can build: nfnetlink_queue and NFQUEUE, no
 * sch_plug). Used by `npm run bench:faults` (bench/faults.ts, at least 100
 * runs) and by its short sample in the live tier
 * (test/live/guard-faults-kill.test.ts).
 *
 * A network namespace of its own (`sp-flt-PID`), the local queue hold set
 * up for 169.254.46.1, and a server there. Each run:
 *
 * 1. `synplug protect --max-hold 3s -- COMMAND`, where COMMAND makes a file
 *    RUN (the hold is on) and waits for a file GO;
 * 2. a client connects to the server once the hold is on (its SYN is held);
 * 3. SIGKILL to protect, its watchdog, the queue's holder process (which
 *    keeps the bound queue socket for every holder, src/guard/leases-holder.ts),
 *    protect and its watchdog, or all three, at a random moment: right away
 *    (before or while it plugs), while holding, or once the client's SYN is
 *    queued;
 * 4. GO is made (a protect still alive then ends its command and releases).
 *
 * After every run, judged by the order of events and the kernel's state,
 * never by wall-clock time (every wait is bounded and only ends early):
 * - `leftBound`: a process is still bound to the queue once protect, its
 *   watchdog and the holder are gone (the hold left in place);
 * - `synLost`: the client's SYN, sent during the hold, did not connect;
 * - `notClean`: the next command does not find a clean state: `synplug
 *   check` does not exit 0, or `status` shows a live lease.
 * - counted apart, not a failure: `staleRecord`, plug.json still saying
 *   buffering when protect and its watchdog were both killed (nobody was
 *   left to write it; the kernel let go when their sockets closed); the next
 *   protect or plug's stale-plug recovery takes it, as the next run shows.
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
const CLI = fileURLToPath(new URL('../dist/bundle/synplug.cjs', import.meta.url));
const ADDR = '169.254.46.1';
const PORT = 39420;
const QUEUE = 4200;

/** Whom a run kills: protect, its watchdog, the queue's holder process, protect and its watchdog, or all three. */
export type KillTarget = 'protect' | 'watchdog' | 'holder' | 'both' | 'all';
/** When: right after protect starts, while holding, or once the client's SYN is queued. */
export type KillMoment = 'start' | 'holding' | 'syn-queued';

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
  /** plug.json still says buffering (both killed: nobody left to write it); the next command's stale-plug recovery takes it */
  staleRecord: boolean;
  /** why, when something was left */
  detail?: string;
}

/** The campaign's counts. */
export interface CampaignResult {
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

const alive = (pid: number | undefined) => pid !== undefined && existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');

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

  private inNs(...argv: string[]): string {
    return execFileSync(IP, ['netns', 'exec', this.ns, ...argv], { encoding: 'utf8' });
  }

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

  /** SYNs queued now, or undefined when nobody is bound to the queue (the kernel's own list). */
  queued(): number | undefined {
    for (const line of this.inNs('cat', '/proc/net/netfilter/nfnetlink_queue').split('\n')) {
      const f = line.trim().split(/\s+/).map(Number);
      if (f[0] === QUEUE && f.length >= 8) return f[2];
    }
    return undefined;
  }

  /**
   * Make the namespace, set the hold up, start the server.
   * @throws {Error} setup failed (its output)
   */
  async open(): Promise<void> {
    execFileSync(IP, ['netns', 'add', this.ns]);
    execFileSync(IP, ['-n', this.ns, 'link', 'set', 'lo', 'up']);
    const set = this.synplug(['setup', '--via', 'queue', '--addr', ADDR]);
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

  /** A client in the namespace: resolves with whether it connected (python3, 20 s bound: SYN retries at 1, 3, 7 s). */
  private client(): Promise<boolean> {
    const py = `
import socket
c = socket.socket(); c.settimeout(20)
try:
    c.connect(('${ADDR}', ${PORT})); print('connected')
except Exception as e:
    print('failed', e)
`;
    return new Promise((resolve) => {
      execFile(IP, ['netns', 'exec', this.ns, 'python3', '-c', py], { encoding: 'utf8', timeout: 40_000 }, (_e, stdout) =>
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
        '3s',
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
    // The hold is gone once nobody is bound: the watchdog releases for a killed protect, the kernel unbinds a dead socket.
    const unbound = await until(() => this.queued() === undefined, 30_000);
    const connected = client ? await client : true;
    const check = this.synplug(['check']);
    const status = this.synplug(['status', '--json']);
    let statusDetail = '';
    let staleRecord = false;
    try {
      const s = JSON.parse(status.stdout) as { leases?: unknown[]; plug?: { state?: string } };
      if ((s.leases?.length ?? 0) > 0) statusDetail = `${s.leases!.length} live lease(s)`;
      staleRecord = s.plug?.state === 'buffering';
    } catch {
      statusDetail = `status exit ${status.code}: ${status.stderr.trim()}`;
    }
    const notClean = check.code !== 0 || status.code !== 0 || statusDetail !== '';
    const detail = [
      !wdGone && 'the watchdog still runs',
      !holderGone && "the queue's holder still runs",
      !unbound && 'the queue is still bound',
      !connected && "the client's SYN did not connect",
      check.code !== 0 && `check exit ${check.code}: ${check.stderr.trim()}`,
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
      leftBound: !unbound,
      synLost: !connected,
      notClean,
      staleRecord,
      ...(detail && { detail }),
    };
  }
}

/**
 * Run a campaign of `runs` kills (targets and moments drawn with `seed`).
 * @param onRun called after each run (progress)
 */
export async function killCampaign(runs: number, seed = 19, onRun: (o: RunOutcome, i: number) => void = () => {}): Promise<CampaignResult> {
  const random = rng(seed);
  const targets: KillTarget[] = ['protect', 'watchdog', 'holder', 'both', 'all'];
  const moments: KillMoment[] = ['start', 'holding', 'syn-queued'];
  const c = new KillCampaign();
  const result: CampaignResult = {
    runs: 0,
    byTarget: { protect: 0, watchdog: 0, holder: 0, both: 0, all: 0 },
    watchdogsKilled: 0,
    holdersKilled: 0,
    leftBound: 0,
    synLost: 0,
    notClean: 0,
    staleRecords: 0,
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
