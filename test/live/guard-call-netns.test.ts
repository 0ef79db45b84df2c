/**
 * Live, this machine's kernel: the guard's per-call `netns` option. Two
 * named namespaces (`ip netns add`), and calls of the library in this one
 * process, at the same time, each given its own: each acts in its own
 * namespace only (the queue hold, the one hold this kernel has), its
 * watchdog and queue holder are handed the namespace, its default state
 * directory is that namespace's own. A bad `netns` is a UsageError before
 * anything is read or changed. Oracles: `ip -n NS -j addr`, `nft list
 * ruleset` in the namespace, /proc/net/netfilter/nfnetlink_queue there,
 * SO_NETNS_COOKIE asked by python3 there, /proc/PID/environ.
 */
import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { check, plug, protect, release, setup, status, teardown, planSetup } from '../../src/guard/index.js';
import { UsageError } from '../../src/netlink/errors.js';
import { client, helpersOf, listening, server, stopHelpersOf, until, IP, QUEUE } from '../helpers/queue-live.js';

const NFT = '/usr/sbin/nft';
const A = `spcn-a-${process.pid}`;
const B = `spcn-b-${process.pid}`;
const ADDR_A = '169.254.96.1';
const ADDR_B = '169.254.96.2';
const PORT = 39410;
const TMP = mkdtempSync(join(tmpdir(), 'sp-callns-'));
const DIR_A = join(TMP, 'a');

/** Addresses on `lo`: of namespace `ns`, or of this test's own without it. */
function loAddrs(ns?: string): string[] {
  const j = JSON.parse(execFileSync(IP, [...(ns ? ['-n', ns] : []), '-j', 'addr', 'show', 'dev', 'lo'], { encoding: 'utf8' })) as Array<{
    addr_info: Array<{ local: string }>;
  }>;
  return j[0].addr_info.map((a) => a.local);
}

/** `nft list ruleset` of namespace `ns`, or of this one. */
function ruleset(ns?: string): string {
  // (nft's stderr warns that the compat table is iptables-nft's: not ours to print)
  const o = { encoding: 'utf8' as const, stdio: ['ignore', 'pipe', 'ignore'] as Array<'ignore' | 'pipe'> };
  return ns ? execFileSync(IP, ['netns', 'exec', ns, NFT, 'list', 'ruleset'], o) : execFileSync(NFT, ['list', 'ruleset'], o);
}

/** The kernel's line for queue `q` in namespace `ns`: port id and SYNs queued now. */
function queueIn(ns: string, q: number): { portId: number; queued: number } | undefined {
  const text = execFileSync(IP, ['netns', 'exec', ns, 'cat', '/proc/net/netfilter/nfnetlink_queue'], { encoding: 'utf8' });
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/).map(Number);
    if (f[0] === q && f.length >= 8) return { portId: f[1], queued: f[2] };
  }
  return undefined;
}

/** The addresses of each report's holds, report by report. */
function addrsOf(...reports: Array<{ holds: Array<{ addrs?: string[] }> }>): Array<Array<string[] | undefined>> {
  return reports.map((r) => r.holds.map((h) => h.addrs));
}

/** SO_NETNS_COOKIE (71) of a socket made in `ns`, asked by python3. */
function cookieOf(ns: string): string {
  const py = 'import socket,struct; s=socket.socket(); print(struct.unpack("Q", s.getsockopt(socket.SOL_SOCKET, 71, 8))[0])';
  return execFileSync(IP, ['netns', 'exec', ns, 'python3', '-c', py], { encoding: 'utf8' }).trim();
}

test.before(() => {
  for (const ns of [A, B]) {
    execFileSync(IP, ['netns', 'add', ns]);
    execFileSync(IP, ['-n', ns, 'link', 'set', 'lo', 'up']);
  }
});

test.after.always(async () => {
  // The queue holders and watchdogs the calls started outlive them and write their state directory as they end:
  // stopped first, else B's default one under /run/synplug/netns came back after its removal below, in every run.
  await stopHelpersOf(process.pid);
  for (const [ns, stateDir] of [
    [A, DIR_A],
    [B, undefined],
  ] as const) {
    // whatever a failed test left: the library's own teardown, then the namespace and its state directory
    await teardown({ netns: ns, ...(stateDir && { stateDir }) }).catch(() => {});
    let cookie: string | undefined;
    try {
      cookie = cookieOf(ns);
    } catch {
      cookie = undefined;
    }
    if (cookie) rmSync(`/run/synplug/netns/${cookie}`, { recursive: true, force: true });
    spawnSync(IP, ['netns', 'del', ns]);
  }
  rmSync(TMP, { recursive: true, force: true });
});

test.serial('two calls at once, each with its own netns, set up, check and tear down the queue hold each in its own namespace only', async (t) => {
  const before = { lo: loAddrs(), ruleset: ruleset() };
  // A by name with a state directory given; B by path, its state directory the namespace's own.
  const [sa, sb] = await Promise.all([
    setup({ via: 'queue', addr: ADDR_A, netns: A, stateDir: DIR_A }),
    setup({ via: 'queue', addr: ADDR_B, netns: `/run/netns/${B}` }),
  ]);
  t.is(sa.via, 'queue');
  t.is(sb.via, 'queue');
  t.true(loAddrs(A).includes(ADDR_A));
  t.false(loAddrs(A).includes(ADDR_B));
  t.true(loAddrs(B).includes(ADDR_B));
  t.false(loAddrs(B).includes(ADDR_A));
  // each namespace its queue hold's table (its chain and rules, naming the address, exist only around a hold)
  t.regex(ruleset(A), /table inet synplug_queue \{/, ruleset(A));
  t.false(ruleset(A).includes(ADDR_B));
  t.regex(ruleset(B), /table inet synplug_queue \{/, ruleset(B));
  t.false(ruleset(B).includes(ADDR_A));
  // this namespace: not one address, not one rule of theirs
  t.false(loAddrs().some((a) => a === ADDR_A || a === ADDR_B));
  t.false(/169\.254\.96\./.test(ruleset()));
  t.deepEqual(
    loAddrs().filter((a) => a.startsWith('169.254.96.')),
    before.lo.filter((a) => a.startsWith('169.254.96.')),
  );

  // B's records are in /run/synplug/netns/<B's cookie>, as the CLI's --netns keeps them.
  const dirB = `/run/synplug/netns/${cookieOf(B)}`;
  t.true(existsSync(join(dirB, 'setup.json')));
  t.true(existsSync(join(DIR_A, 'setup.json')));
  t.false(readFileSync(join(dirB, 'setup.json'), 'utf8').includes(ADDR_A));

  const [ca, cb] = await Promise.all([check({ netns: A, stateDir: DIR_A }), check({ netns: B })]);
  t.is(ca.state, 'ok');
  t.is(cb.state, 'ok');
  t.deepEqual(addrsOf(ca, cb), [[[ADDR_A]], [[ADDR_B]]]);
  // the sysctl is read in the call's namespace
  t.is(ca.sysctl.netns, A);
  t.is(cb.sysctl.netns, B);
  // status by a descriptor of this process open on A's namespace file
  const fd = openSync(`/run/netns/${A}`, 'r');
  try {
    const st = await status({ netns: fd, stateDir: DIR_A });
    t.deepEqual(
      st.holds.map((h) => h.id),
      ca.holds.map((h) => h.id),
    );
  } finally {
    closeSync(fd);
  }

  // a plan for A is A's: everything in place
  const plan = await planSetup({ via: 'queue', addr: ADDR_A, netns: A, stateDir: DIR_A });
  t.false(plan.wouldChange);

  await Promise.all([teardown({ netns: A, stateDir: DIR_A }), teardown({ netns: B })]);
  t.false(loAddrs(A).includes(ADDR_A));
  t.false(loAddrs(B).includes(ADDR_B));
  t.false(ruleset(A).includes(ADDR_A));
  t.false(ruleset(B).includes(ADDR_B));
});

test.serial("protect and plug with netns hold that namespace's SYNs; the watchdog and the queue holder are handed the namespace", async (t) => {
  await setup({ via: 'queue', addr: ADDR_A, netns: A, stateDir: DIR_A });
  await setup({ via: 'queue', addr: ADDR_B, netns: B });
  const srv = server(ADDR_A, PORT, A);
  try {
    await listening(srv);
    const run = join(TMP, 'run');
    const go = join(TMP, 'go');
    const p = protect({
      netns: A,
      stateDir: DIR_A,
      maxHoldMs: 60_000,
      command: ['sh', '-c', `: > ${run}; while [ ! -e ${go} ] && [ -d ${TMP} ]; do sleep 0.02; done`],
    });
    p.catch(() => {});
    await until(() => existsSync(run), 'the protected command to start');
    const c = client(ADDR_A, PORT, A);
    await until(() => (queueIn(A, QUEUE)?.queued ?? 0) >= 1, "the SYN to be queued in A's queue");
    t.true(c.proc.exitCode === null, 'the client waits while held');
    // B's queue holds nothing; this namespace's SYNs to A's address are not A's to hold
    t.is(queueIn(B, QUEUE)?.queued ?? 0, 0);
    // every helper protect started was handed A: its descriptor, inherited as fd 3 (SYNPLUG_NETNS names it), never the path
    const helpers = helpersOf(process.pid);
    t.true(helpers.length >= 1);
    const nsA = statSync(`/run/netns/${A}`);
    for (const h of helpers) {
      const env = readFileSync(`/proc/${h.pid}/environ`, 'utf8').split('\0');
      const who = `${h.holder ? 'holder' : 'watchdog'} ${h.pid}: ${env.filter((e) => e.startsWith('SYNPLUG')).join(' ')}`;
      t.true(env.includes('SYNPLUG_NETNS=/proc/self/fd/3'), who);
      const fd3 = statSync(`/proc/${h.pid}/fd/3`); // the file it has open there: A's namespace file
      t.deepEqual([fd3.dev, fd3.ino], [nsA.dev, nsA.ino], who);
    }
    execFileSync('touch', [go]);
    const r = await p;
    t.is(r.exitCode, 0);
    t.regex(await c.result, /^ok /);

    // plug and release by B's namespace: B held, A not
    const pl = await plug({ netns: B, maxHoldMs: 30_000 });
    t.deepEqual(
      pl.holds,
      (await check({ netns: B })).holds.map((h) => h.id),
    );
    const [sb, sa] = await Promise.all([status({ netns: B }), status({ netns: A, stateDir: DIR_A })]);
    t.is(sb.plug?.state, 'buffering');
    t.not(sa.plug?.state, 'buffering');
    t.deepEqual(addrsOf(sa, sb), [[[ADDR_A]], [[ADDR_B]]]);
    // each status reads the queue's binding in its own namespace: B's holder is bound in B
    const boundB = queueIn(B, QUEUE);
    t.truthy(boundB, "B's queue is bound while plugged");
    t.is(sb.holds[0].bound?.portId, boundB?.portId);
    t.is(sa.holds[0].bound?.portId ?? null, queueIn(A, QUEUE)?.portId ?? null);
    await release({ netns: B });
  } finally {
    srv.kill();
    await teardown({ netns: A, stateDir: DIR_A });
    await teardown({ netns: B });
  }
});

test.serial('a bad netns is a UsageError of every entry point, before anything is read or changed', async (t) => {
  const fifo = join(TMP, 'fifo');
  execFileSync('mkfifo', [fifo]);
  const dir = join(TMP, 'never');
  const bad: Array<[unknown, RegExp]> = [
    [`spcn-none-${process.pid}`, /option 'netns': network namespace 'spcn-none-\d+' does not exist/],
    ['/proc/self/ns/uts', /option 'netns': .*is not a network namespace.*a UTS namespace/],
    [fifo, /option 'netns': .*is not a network namespace .*a FIFO/],
    [TMP, /option 'netns': .*is not a network namespace .*a directory/],
    ['', /option 'netns' is empty/],
    [-1, /option 'netns': -1 is not a file descriptor/],
    [true, /option 'netns' must be a network namespace/],
  ];
  const before = { a: loAddrs(A), lo: loAddrs() };
  const entries: Array<[string, (ns: unknown) => Promise<unknown>]> = [
    ['setup', (ns) => setup({ via: 'queue', addr: ADDR_A, netns: ns as string, stateDir: dir })],
    ['planSetup', (ns) => planSetup({ via: 'queue', addr: ADDR_A, netns: ns as string, stateDir: dir })],
    ['check', (ns) => check({ netns: ns as string, stateDir: dir })],
    ['status', (ns) => status({ netns: ns as string, stateDir: dir })],
    ['plug', (ns) => plug({ netns: ns as string, stateDir: dir })],
    ['release', (ns) => release({ netns: ns as string, stateDir: dir })],
    ['teardown', (ns) => teardown({ netns: ns as string, stateDir: dir })],
    ['protect', (ns) => protect({ netns: ns as string, stateDir: dir, setup: true, command: ['touch', join(TMP, 'ran')] })],
  ];
  for (const [name, f] of entries) {
    for (const [ns, message] of bad) {
      const e = await t.throwsAsync(f(ns), { instanceOf: UsageError }, `${name} ${String(ns)}`);
      // planSetup is setup's plan: its messages name setup
      t.regex(e!.message, new RegExp(`^${name === 'planSetup' ? 'setup' : name}: `), `${name} ${String(ns)}`);
      t.regex(e!.message, message, `${name} ${String(ns)}`);
    }
  }
  t.false(existsSync(dir), 'no state directory was made');
  t.false(existsSync(join(TMP, 'ran')), "protect's command never ran");
  t.deepEqual(loAddrs(A), before.a);
  t.deepEqual(loAddrs(), before.lo);
});
