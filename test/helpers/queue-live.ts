/**
 * Helpers of the live queue-hold tests (test/live/guard-queue*.test.ts):
 * the CLI (dist/bundle/synplug.cjs), python3 servers and clients whose
 * connect outcome and TCP_INFO (tcpi_total_retrans) they print, the
 * kernel's own view (/proc/net/netfilter/nfnetlink_queue, `nft -j`,
 * `ip -j addr`), and bounded waits on events.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { DIE_WITH_PARENT } from './py.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The CLI's bundle, the package's bin. */
export const BIN = join(ROOT, 'dist/bundle/synplug.cjs');
const NFT = '/usr/sbin/nft';
/** iproute2's ip, by absolute path. */
export const IP = '/usr/sbin/ip';
/** The queue number the queue hold uses by default. */
export const QUEUE = 4200;

/** Run the CLI; its status and output. */
export function synplug(args: string[], env: NodeJS.ProcessEnv): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { env, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** The built CLI with `args`, not waited for: resolves with its status and output once it closes (`cwd` optional). */
export function synplugAsync(args: string[], env: NodeJS.ProcessEnv, cwd?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [BIN, ...args], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    p.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A command's output parsed as JSON; undefined when it printed none (or something else). */
export function parseJson<T = Record<string, unknown>>(s: string): T | undefined {
  try {
    return JSON.parse(s) as T;
  } catch {
    return undefined;
  }
}

/** The kernel's line for a queue: port id and SYNs queued now; undefined when nobody is bound to it. */
export function procQueue(queue: number): { portId: number; queued: number } | undefined {
  for (const line of readFileSync('/proc/net/netfilter/nfnetlink_queue', 'utf8').split('\n')) {
    const f = line.trim().split(/\s+/).map(Number);
    if (f[0] === queue && f.length >= 8) return { portId: f[1], queued: f[2] };
  }
  return undefined;
}

/** Wait (bounded) until `cond` holds. */
export async function until(cond: () => boolean, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/**
 * The queue's /proc line once its holder has let it go, or null: the holder
 * answers a release first and unbinds after it (bounded wait, 15 s; the line
 * still there after that is returned, for the test to assert on).
 */
export async function boundAfterRelease(queue: number): Promise<ReturnType<typeof procQueue> | null> {
  await until(() => procQueue(queue) === undefined, 'the holder to unbind after the release', 15_000).catch(() => {});
  return procQueue(queue) ?? null;
}

/** A TCP server (python3) on addr:port that accepts and closes; it prints a line per accepted connection. */
export function server(addr: string, port: number, netns?: string): ChildProcess {
  const py = `import socket,sys
s=socket.socket(socket.AF_INET6 if ':' in sys.argv[1] else socket.AF_INET)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(64); print('listening', flush=True)
while True:
    c,_=s.accept(); print('accepted', flush=True); c.close()`;
  const argv = ['python3', '-c', DIE_WITH_PARENT + py, addr, String(port)];
  return spawn(netns ? IP : argv[0], netns ? ['netns', 'exec', netns, ...argv] : argv.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
}

/** A client (python3): one blocking connect; resolves with `ok RETRANS` (tcpi_total_retrans, struct tcp_info offset 100) or the errno's name. */
export function client(addr: string, port: number, netns?: string): { proc: ChildProcess; result: Promise<string> } {
  const py = `import socket,struct,sys,errno
s=socket.socket(socket.AF_INET6 if ':' in sys.argv[1] else socket.AF_INET)
s.settimeout(30)
try:
    s.connect((sys.argv[1], int(sys.argv[2])))
    i=s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
    print('ok', struct.unpack_from('I', i, 100)[0], flush=True)
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e)), flush=True)`;
  const argv = ['python3', '-c', DIE_WITH_PARENT + py, addr, String(port)];
  const proc = spawn(netns ? IP : argv[0], netns ? ['netns', 'exec', netns, ...argv] : argv.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  return { proc, result: new Promise((done) => proc.once('exit', () => done(out.trim()))) };
}

/** Wait for a server's `listening`. */
export function listening(p: ChildProcess): Promise<void> {
  return new Promise((done, fail) => {
    p.stdout!.setEncoding('utf8').on('data', (d: string) => {
      if (d.includes('listening')) done();
    });
    p.once('exit', () => fail(new Error('the server exited')));
  });
}

/** The directories {@link stateEnv} made in this process: removed when it exits (never another test file's). */
const madeDirs: string[] = [];

/** A state directory and the environment the CLI runs with (the directory goes when this process exits). */
export function stateEnv(): { dir: string; env: NodeJS.ProcessEnv } {
  const dir = mkdtempSync(join(tmpdir(), 'sp-queue-'));
  if (!madeDirs.length)
    process.once('exit', () => {
      for (const d of madeDirs) rmSync(d, { recursive: true, force: true });
    });
  madeDirs.push(dir);
  return { dir, env: { ...process.env, SYNPLUG_STATE_DIR: join(dir, 'state') } };
}

/** The tables `nft -j list ruleset` lists, as `family name`. */
export function tables(): string[] {
  const j = JSON.parse(execFileSync(NFT, ['-j', 'list', 'ruleset'], { encoding: 'utf8' })) as { nftables: Array<{ table?: { family: string; name: string } }> };
  return j.nftables.flatMap((o) => (o.table ? [`${o.table.family} ${o.table.name}`] : []));
}

/** The chains of table inet `name` as `chain:rules` (`hold:1`), as `nft -j list table` lists them; undefined: no such table. */
export function chainsOf(name: string): string[] | undefined {
  const r = spawnSync(NFT, ['-j', 'list', 'table', 'inet', name], { encoding: 'utf8' });
  if (r.status !== 0) return undefined;
  const j = JSON.parse(r.stdout) as { nftables: Array<{ chain?: { name: string }; rule?: { chain: string } }> };
  const chains = j.nftables.flatMap((o) => (o.chain ? [o.chain.name] : []));
  return chains.map((c) => `${c}:${j.nftables.filter((o) => o.rule?.chain === c).length}`);
}

/** Whether `addr` is on `lo`. */
export function onLo(addr: string): boolean {
  const j = JSON.parse(execFileSync(IP, ['-j', 'addr', 'show', 'dev', 'lo'], { encoding: 'utf8' })) as Array<{ addr_info: Array<{ local: string }> }>;
  return j[0].addr_info.some((a) => a.local === addr);
}

/**
 * Start `protect` whose command waits for a file (GO) to appear after
 * touching another (RUN): the hold is on from RUN's appearance until GO is
 * made (or the directory removed: a command left behind by a protect a
 * test killed ends when the test's files go). Resolves once RUN exists,
 * with the protect process and its end; `name` tells the files of several
 * protects apart.
 */
export async function heldProtect(env: NodeJS.ProcessEnv, dir: string, extra: string[] = [], name = '') {
  const run = join(dir, `run${name}`);
  const go = join(dir, `go${name}`);
  const p = spawn(
    process.execPath,
    [
      BIN,
      'protect',
      '--json',
      ...(extra.includes('--max-hold') ? [] : ['--max-hold', '60s']),
      ...extra,
      '--',
      'sh',
      '-c',
      `: > ${run}; while [ ! -e ${go} ] && [ -d ${dir} ]; do sleep 0.02; done`,
    ],
    {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  p.stdout!.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  p.stderr!.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const ended = new Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>((done) =>
    p.once('exit', (code, signal) => done({ code, signal, stdout, stderr })),
  );
  await Promise.race([
    until(() => existsSync(run), 'the protected command to start'),
    ended.then((e) => Promise.reject(new Error(`protect ended: ${e.stderr}`))),
  ]);
  // stderrNow: what protect and the helpers that inherited its stderr (its watchdog) wrote so far, also after protect's exit
  return { p, ended, release: () => writeFileSync(go, ''), stderrNow: () => stderr };
}

/** The children of `pid` running watchdog-main (its watchdog; a queue holder it started), each with whether it is the holder. */
export function helpersOf(pid: number): Array<{ pid: number; holder: boolean }> {
  const out: Array<{ pid: number; holder: boolean }> = [];
  for (const d of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8');
      if (ppid === pid && cmd.includes('watchdog-main')) out.push({ pid: Number(d), holder: cmd.includes('--queue-holder') });
    } catch {
      /* gone */
    }
  }
  return out;
}

/**
 * Stop the helpers `pid` started ({@link helpersOf}: watchdogs, queue
 * holders, which outlive the calls that started them: an idle holder for up
 * to 30 s) with SIGTERM (a holder releases, then exits), and wait until they
 * are gone (bounded, 15 s). They write their state directory as they end: a
 * test removing that directory stops them first, or it is made again after.
 */
export async function stopHelpersOf(pid: number): Promise<void> {
  const helpers = helpersOf(pid).map((h) => h.pid);
  for (const h of helpers) {
    try {
      process.kill(h, 'SIGTERM');
    } catch {
      /* gone */
    }
  }
  await until(
    () => helpers.every((h) => !existsSync(`/proc/${h}/cmdline`) || readFileSync(`/proc/${h}/stat`, 'utf8').includes(') Z ')),
    "the helpers' exit",
    15_000,
  ).catch(() => {});
}

/** The process bound to a queue now (its netlink port id is its pid for a first socket), or undefined. */
export function queueHolderPid(queue: number): number | undefined {
  const q = procQueue(queue);
  if (!q) return undefined;
  for (const line of readFileSync('/proc/net/netlink', 'utf8').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f[1] === '12' && Number(f[2]) === q.portId) return q.portId > 0 ? pidOfInode(f.at(-1)!) : undefined;
  }
  return undefined;
}

/** The process holding a socket inode (a scan of /proc/PID/fd). */
function pidOfInode(inode: string): number | undefined {
  for (const d of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(d)) continue;
    try {
      for (const fd of readdirSync(`/proc/${d}/fd`)) {
        try {
          if (readlinkSync(`/proc/${d}/fd/${fd}`) === `socket:[${inode}]`) return Number(d);
        } catch {
          /* gone */
        }
      }
    } catch {
      /* gone */
    }
  }
  return undefined;
}

/** The watchdog protect started (a child running watchdog-main, not the queue holder). */
export function watchdogOf(pid: number): number | undefined {
  return helpersOf(pid).find((h) => !h.holder)?.pid;
}
