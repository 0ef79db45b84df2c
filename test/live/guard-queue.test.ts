/**
 * Live, this machine's kernel (nf_tables with nft_compat, nfnetlink_queue,
 * the xt NFQUEUE target; no sch_plug): the queue hold end to end through the
 * CLI (dist/bundle/synplug.cjs, the package's bin). Each scenario runs in a
 * network namespace of its own (test/helpers/own-netns.ts); clients are
 * python3 processes whose connect outcome and TCP_INFO (tcpi_total_retrans)
 * they print, and the kernel's own view is the oracle: `nft -j list ruleset`
 * (/usr/sbin/nft), /proc/net/netfilter/nfnetlink_queue (SYNs queued now),
 * `ip -j addr`. Every wait is on an event (a file appearing, a queued SYN),
 * bounded; nothing is judged by wall-clock time.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { QUEUE_TABLE } from '../../src/guard/modes/queue.js';
import { REPORT_CHAIN, REPORT_TABLE } from '../../src/guard/report.js';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';
import {
  BIN,
  IP,
  QUEUE,
  chainsOf,
  client,
  heldProtect,
  listening,
  onLo,
  procQueue,
  queueHolderPid,
  server,
  stateEnv,
  synplug,
  tables,
  until,
  watchdogOf,
} from '../helpers/queue-live.js';

// biome-ignore lint/suspicious/noExplicitAny: the scenarios' JSON results, asserted field by field
type Json = Record<string, any>;

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_GUARD_QUEUE_SCENARIO';
const PORT = 39300;

/** The report's counter chain as the kernel lists it (`nft -j`): hook, priority and rule count; null when absent. */
function reportChain(): { hook: string; prio: number; rules: number } | null {
  const r = spawnSync('/usr/sbin/nft', ['-j', 'list', 'table', 'inet', REPORT_TABLE], { encoding: 'utf8' });
  if (r.status !== 0) return null;
  const j = JSON.parse(r.stdout) as { nftables: Array<{ chain?: { name: string; hook: string; prio: number }; rule?: { chain: string } }> };
  // the state directory's own chain: rst-<its mark>
  const c = j.nftables.find((o) => o.chain?.name.startsWith(`${REPORT_CHAIN}-`))?.chain;
  return c ? { hook: c.hook, prio: c.prio, rules: j.nftables.filter((o) => o.rule?.chain === c.name).length } : null;
}

/** The local queue hold set up for 169.254.77.1, a server there, and a protect holding: its watchdog found. */
async function holding() {
  const { dir, env } = stateEnv();
  const addr = '169.254.77.1';
  synplug(['setup', '--via', 'queue', '--addr', addr], env);
  const srv = server(addr, PORT);
  await listening(srv);
  const h = await heldProtect(env, dir);
  return { env, addr, srv, h, watchdog: watchdogOf(h.p.pid!), holder: queueHolderPid(QUEUE) };
}

/** A held connect, delivered after the release, for an address of the local queue hold. */
async function heldLocal(addr: string): Promise<Json> {
  const { dir, env } = stateEnv();
  const set = synplug(['setup', '--via', 'queue', '--addr', addr, '--json'], env);
  const chainsAfterSetup = chainsOf(QUEUE_TABLE);
  const reportAfterSetup = chainsOf(REPORT_TABLE) ?? null;
  const checkAfterSetup = JSON.parse(synplug(['check', '--json'], env).stdout) as { state: string; pieces: Array<Record<string, string>> };
  const srv = server(addr, PORT);
  await listening(srv);
  const h = await heldProtect(env, dir);
  const chainsWhileHeld = chainsOf(QUEUE_TABLE);
  const reportWhileHeld = reportChain();
  const c = client(addr, PORT);
  await until(() => (procQueue(QUEUE)?.queued ?? 0) >= 1, 'the SYN to be queued');
  const queuedWhileHeld = procQueue(QUEUE)?.queued;
  const pendingWhileHeld = c.proc.exitCode === null;
  h.release();
  const outcome = await c.result;
  const end = await h.ended;
  const chainsAfterRelease = chainsOf(QUEUE_TABLE);
  const reportAfterRelease = chainsOf(REPORT_TABLE) ?? null;
  srv.kill();
  const down = synplug(['teardown'], env);
  return {
    setup: { code: set.code, json: JSON.parse(set.stdout) },
    chains: [chainsAfterSetup, chainsWhileHeld, chainsAfterRelease],
    report: [reportAfterSetup, reportWhileHeld, reportAfterRelease],
    checkAfterSetup,
    queuedWhileHeld,
    pendingWhileHeld,
    outcome,
    protect: { code: end.code, json: JSON.parse(end.stdout) },
    teardown: down.code,
    after: { tables: tables(), onLo: onLo(addr), bound: procQueue(QUEUE) ?? null },
  };
}

const scenarios = {
  'local-v4': () => heldLocal('169.254.77.1'),
  'local-v6': () => heldLocal('fd00:77::1'),

  /** Clients in another namespace over veth: the inbound queue hold on the server's end. */
  async inbound() {
    const { dir, env } = stateEnv();
    const ns = `sq-c-${process.pid}`;
    const dev = `sqs${process.pid % 100000}`;
    execFileSync(IP, ['netns', 'add', ns]);
    try {
      execFileSync(IP, ['link', 'add', dev, 'type', 'veth', 'peer', 'name', 'sqc0', 'netns', ns]);
      execFileSync(IP, ['addr', 'add', '169.254.78.1/24', 'dev', dev]);
      execFileSync(IP, ['link', 'set', dev, 'up']);
      execFileSync(IP, ['-n', ns, 'addr', 'add', '169.254.78.2/24', 'dev', 'sqc0']);
      execFileSync(IP, ['-n', ns, 'link', 'set', 'sqc0', 'up']);
      execFileSync(IP, ['-n', ns, 'link', 'set', 'lo', 'up']);
      const set = synplug(['setup', '--via', 'queue', '--inbound', dev, '--port', String(PORT), '--json'], env);
      const check = synplug(['check', '--json'], env);
      const table = `${QUEUE_TABLE}_${dev}`;
      const chainsAfterSetup = chainsOf(table);
      const srv = server('169.254.78.1', PORT);
      await listening(srv);
      const h = await heldProtect(env, dir);
      const chainsWhileHeld = chainsOf(table);
      const c = client('169.254.78.1', PORT, ns);
      await until(() => (procQueue(QUEUE)?.queued ?? 0) >= 1, 'the SYN from the other namespace to be queued');
      const pendingWhileHeld = c.proc.exitCode === null;
      h.release();
      const outcome = await c.result;
      const end = await h.ended;
      const chainsAfterRelease = chainsOf(table);
      // Bypass: nobody bound, a new connection passes at once.
      const after = await client('169.254.78.1', PORT, ns).result;
      srv.kill();
      const down = synplug(['teardown'], env);
      return {
        setup: { code: set.code, json: JSON.parse(set.stdout) },
        check: JSON.parse(check.stdout),
        chains: [chainsAfterSetup, chainsWhileHeld, chainsAfterRelease],
        pendingWhileHeld,
        outcome,
        protect: { code: end.code, json: JSON.parse(end.stdout) },
        after,
        teardown: down.code,
        tables: tables(),
      };
    } finally {
      spawnSync(IP, ['netns', 'delete', ns]);
    }
  },

  /** SIGKILL of protect while a SYN is held: the queue's holder process sees its connection end, drops its lease and releases. */
  async 'kill-protect'() {
    const { env, addr, srv, h, holder } = await holding();
    const c = client(addr, PORT);
    await until(() => (procQueue(QUEUE)?.queued ?? 0) >= 1, 'the SYN to be queued');
    const pendingBeforeKill = c.proc.exitCode === null;
    h.p.kill('SIGKILL');
    const outcome = await c.result;
    await h.ended;
    await until(() => procQueue(QUEUE) === undefined, 'the queue to be unbound');
    // the watchdog removes the armed chain after the holder's release
    await until(() => chainsOf(QUEUE_TABLE)?.length === 0, 'the watchdog to remove the armed chain').catch((e: Error) => {
      throw new Error(`${e.message}; chains ${JSON.stringify(chainsOf(QUEUE_TABLE))}; what protect and its watchdog said: ${h.stderrNow()}`);
    });
    // and the report's counter chain (protect died: nobody reads it)
    await until(() => chainsOf(REPORT_TABLE)?.length === 0, "the watchdog to remove the report's counter chain").catch((e: Error) => {
      throw new Error(`${e.message}; chains ${JSON.stringify(chainsOf(REPORT_TABLE))}; what protect and its watchdog said: ${h.stderrNow()}`);
    });
    srv.kill();
    synplug(['teardown'], env);
    return { holderFound: holder !== undefined && holder !== h.p.pid, pendingBeforeKill, outcome };
  },

  /**
   * SIGKILL of the queue's holder while protect holds a SYN: the kernel drops it (its client connects on its
   * retransmit), and protect's report says the hold failed; a manual plug whose holder is killed: the release says so.
   */
  async 'kill-holder'() {
    const { env, addr, srv, h, holder } = await holding();
    const c = client(addr, PORT);
    await until(() => (procQueue(QUEUE)?.queued ?? 0) >= 1, 'the SYN to be queued');
    if (holder) process.kill(holder, 'SIGKILL');
    await until(() => procQueue(QUEUE) === undefined, 'the queue to be unbound');
    h.release();
    const end = await h.ended;
    const outcome = await c.result;
    const plug = synplug(['plug', '--max-hold', '60s'], env);
    const holder2 = queueHolderPid(QUEUE);
    if (holder2) process.kill(holder2, 'SIGKILL');
    await until(() => procQueue(QUEUE) === undefined, 'the queue to be unbound');
    const rel = synplug(['release', '--json'], env);
    const history = synplug(['history', '--json'], env);
    srv.kill();
    synplug(['teardown'], env);
    return {
      holderFound: holder !== undefined && holder !== h.p.pid,
      outcome,
      protect: { code: end.code, json: JSON.parse(end.stdout), stderr: end.stderr },
      plug: plug.code,
      holder2Found: holder2 !== undefined,
      release: { code: rel.code, json: JSON.parse(rel.stdout) },
      history: JSON.parse(history.stdout),
    };
  },

  /**
   * A release (and a release --orphaned, a status) through a state directory with no record, during another
   * directory's hold: that hold's chain stays and a new SYN is still held until its own release.
   */
  async 'release-elsewhere'() {
    const { env, addr, srv, h } = await holding();
    const other = { ...env, SYNPLUG_STATE_DIR: `${env.SYNPLUG_STATE_DIR}-none` };
    const rel = synplug(['release'], other);
    const orphaned = synplug(['release', '--orphaned'], other);
    const status = synplug(['status'], other);
    // a directory whose holder socket is a link to this hold's (symbolic, then hard): its release reaches nothing
    const linked: number[] = [];
    for (const kind of ['sym', 'hard'] as const) {
      const dir = `${env.SYNPLUG_STATE_DIR}-${kind}`;
      mkdirSync(dir, { mode: 0o700 });
      (kind === 'sym' ? symlinkSync : linkSync)(join(env.SYNPLUG_STATE_DIR!, `queue-${QUEUE}.sock`), join(dir, `queue-${QUEUE}.sock`));
      linked.push(synplug(['release'], { ...env, SYNPLUG_STATE_DIR: dir }).code);
      rmSync(dir, { recursive: true, force: true });
    }
    const chainsAfter = chainsOf(QUEUE_TABLE);
    const c = client(addr, PORT);
    await until(() => (procQueue(QUEUE)?.queued ?? 0) >= 1, 'the SYN to be queued');
    const pendingWhileHeld = c.proc.exitCode === null;
    h.release();
    const outcome = await c.result;
    const end = await h.ended;
    srv.kill();
    synplug(['teardown'], env);
    return { codes: [rel.code, orphaned.code, status.code], linked, chainsAfter, pendingWhileHeld, outcome, lossless: JSON.parse(end.stdout).report.lossless };
  },

  /** Two state directories in one namespace: B's protect during A's hold leaves A's counter chain alone. */
  async 'report-two-dirs'() {
    const { env, srv, h } = await holding();
    const dirB = `${env.SYNPLUG_STATE_DIR}-b`;
    const envB = { ...env, SYNPLUG_STATE_DIR: dirB };
    execFileSync(IP, ['link', 'add', 'sqr0', 'type', 'veth', 'peer', 'name', 'sqr1']);
    const setupB = synplug(['setup', '--via', 'queue', '--inbound', 'sqr0', '--port', '8080', '--queue-num', '4201'], envB);
    const names = () => (chainsOf(REPORT_TABLE) ?? []).map((c) => c.split(':')[0]);
    const duringA = names();
    const protectB = synplug(['protect', '--', 'true'], envB);
    const afterB = names();
    h.release();
    await h.ended;
    const afterA = names();
    srv.kill();
    synplug(['teardown'], envB);
    synplug(['teardown'], env);
    rmSync(dirB, { recursive: true, force: true });
    return { setupB: setupB.code, protectB: protectB.code, duringA, afterB, afterA };
  },

  /** SIGKILL of protect, its watchdog and the queue's holder: the kernel drops what was held; a new connection bypasses. */
  /**
   * A base chain added while a SYN waits in the queue: protect's report chain (added last at output) during a
   * manual plug's hold; then a chain of someone else's at the queue chain's own priority (raw) during another.
   */
  async 'chain-added'() {
    const { env } = stateEnv();
    const addr = '169.254.77.1';
    synplug(['setup', '--via', 'queue', '--addr', addr], env);
    const srv = server(addr, PORT);
    await listening(srv);
    const heldThrough = async (during: () => void): Promise<string> => {
      synplug(['plug', '--max-hold', '20s'], env);
      const c = client(addr, PORT);
      await until(() => (procQueue(QUEUE)?.queued ?? 0) >= 1, 'the SYN to be queued');
      during();
      synplug(['release'], env);
      return c.result;
    };
    let protect: { code: number; stderr: string } | undefined;
    let reportDuring: unknown;
    const byProtect = await heldThrough(() => {
      protect = synplug(['protect', '--', 'true'], env);
      reportDuring = reportChain();
    });
    const reportAfterRelease = chainsOf(REPORT_TABLE);
    const byRawChain = await heldThrough(() => {
      execFileSync('/usr/sbin/nft', ['add table inet sp_other; add chain inet sp_other out { type filter hook output priority raw; }']);
    });
    execFileSync('/usr/sbin/nft', ['delete', 'table', 'inet', 'sp_other']);
    srv.kill();
    synplug(['teardown'], env);
    return { byProtect, protect, reportDuring, reportAfterRelease, byRawChain };
  },
  async 'kill-both'() {
    const { env, addr, srv, h, watchdog, holder } = await holding();
    const boundWhileHeld = procQueue(QUEUE) !== undefined;
    for (const pid of [holder, watchdog]) if (pid) process.kill(pid, 'SIGKILL');
    h.p.kill('SIGKILL');
    await h.ended;
    await until(() => procQueue(QUEUE) === undefined, 'the queue to be unbound');
    const next = await client(addr, PORT).result;
    // nobody was left to remove the armed chain: the next command does
    const chainsLeft = chainsOf(QUEUE_TABLE);
    const reportLeft = reportChain();
    const status = synplug(['status'], env);
    const chainsAfterStatus = chainsOf(QUEUE_TABLE);
    const reportAfterStatus = chainsOf(REPORT_TABLE);
    srv.kill();
    synplug(['teardown'], env);
    return {
      watchdogFound: watchdog !== undefined,
      holderFound: holder !== undefined,
      boundWhileHeld,
      next,
      chainsLeft,
      reportLeft,
      status: status.code,
      chainsAfterStatus,
      reportAfterStatus,
    };
  },

  /** Overflow: a queue of maxlen 2 holds two SYNs and drops the others (fail-open off); they are retried and all connect after the release. */
  async overflow() {
    const { dir, env } = stateEnv();
    const addr = '169.254.77.1';
    const set = synplug(['setup', '--via', 'queue', '--addr', addr, '--queue-maxlen', '2', '--json'], env);
    const srv = server(addr, PORT);
    await listening(srv);
    const h = await heldProtect(env, dir);
    const clients = [0, 1, 2, 3].map(() => client(addr, PORT));
    // The kernel's own count: two queued, the others dropped over maxlen (the proc file's queue_dropped column).
    const dropped = () => {
      for (const line of readFileSync('/proc/net/netfilter/nfnetlink_queue', 'utf8').split('\n')) {
        const f = line.trim().split(/\s+/).map(Number);
        if (f[0] === QUEUE) return f[5];
      }
      return 0;
    };
    await until(() => (procQueue(QUEUE)?.queued ?? 0) === 2 && dropped() >= 2, 'two SYNs queued and two dropped');
    const queued = procQueue(QUEUE)?.queued;
    h.release();
    const outcomes = await Promise.all(clients.map((c) => c.result));
    const end = await h.ended;
    srv.kill();
    synplug(['teardown'], env);
    return { maxlen: JSON.parse(set.stdout).queue.maxlen, queued, outcomes, protect: JSON.parse(end.stdout) };
  },

  /** The reload command and the --check command never inherit the queue socket. */
  async 'no-fd'() {
    const { dir, env } = stateEnv();
    synplug(['setup', '--via', 'queue', '--addr', '169.254.77.1'], env);
    // Each command lists the targets of its descriptors (socket:[INODE] for a socket), the namespace's netlink
    // sockets (/proc/net/netlink: the inode is the last column) and the bound queues, as it runs.
    const list = (name: string) =>
      `for f in /proc/self/fd/*; do readlink $f; done > ${join(dir, `${name}-fds`)}; cat /proc/net/netlink > ${join(dir, `${name}-netlink`)}; cat /proc/net/netfilter/nfnetlink_queue > ${join(dir, `${name}-queues`)}; true`;
    const r = spawnSync(process.execPath, [BIN, 'protect', '--json', '--check', `sh -c '${list('check')}'`, '--', 'sh', '-c', list('command')], {
      env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    /** The command's descriptors that are netlink sockets, and whether the queue was bound while it ran. */
    const seen = (name: string) => {
      const netlink = new Set(
        readFileSync(join(dir, `${name}-netlink`), 'utf8')
          .split('\n')
          .slice(1)
          .map((l) => l.trim().split(/\s+/).at(-1))
          .filter((x): x is string => x !== undefined && x !== ''),
      );
      const sockets = readFileSync(join(dir, `${name}-fds`), 'utf8')
        .split('\n')
        .flatMap((l) => (/^socket:\[([0-9]+)\]$/.exec(l) ? [/^socket:\[([0-9]+)\]$/.exec(l)![1]] : []));
      const bound = readFileSync(join(dir, `${name}-queues`), 'utf8')
        .split('\n')
        .some((l) => l.trim().split(/\s+/)[0] === String(QUEUE));
      return { netlinkFds: sockets.filter((i) => netlink.has(i)), sockets: sockets.length, netlinkSockets: netlink.size, bound };
    };
    synplug(['teardown'], env);
    return { code: r.status, stderr: r.stderr, check: seen('check'), command: seen('command') };
  },

  /** A rule of someone else's on the queue number, and a queue bound by someone else: exit 7, nothing changed, theirs left alone. */
  async foreign() {
    const { env } = stateEnv();
    execFileSync('/usr/sbin/iptables-nft', [
      '-t',
      'raw',
      '-A',
      'OUTPUT',
      '-p',
      'tcp',
      '--syn',
      '-j',
      'NFQUEUE',
      '--queue-num',
      String(QUEUE),
      '--queue-bypass',
    ]);
    const byRule = synplug(['setup', '--via', 'queue'], env);
    const tablesAfterRule = tables();
    const other = synplug(['setup', '--via', 'queue', '--queue-num', '4201', '--json'], env);
    const down = synplug(['teardown'], env);
    const tablesAfterTeardown = tables();
    execFileSync('/usr/sbin/iptables-nft', ['-t', 'raw', '-F', 'OUTPUT']);
    // A queue bound by another process (a python3 nfnetlink_queue binder would need a library: this test's own node
    // process binds it through the library's holder, as another program would).
    const { NfqueueHolder } = await import('../../src/netlink/nfqueue.js');
    const holder = await NfqueueHolder.bind(QUEUE);
    const byBind = synplug(['setup', '--via', 'queue'], env);
    const tablesAfterBind = tables();
    await holder.close();
    const bad = synplug(['setup', '--via', 'quue'], env);
    const plugFlag = synplug(['setup', '--via', 'queue', '--limit', '4096'], env);
    // Set up, then someone else binds the queue before protect: nothing held, the command not run, the binder named.
    synplug(['setup', '--via', 'queue'], env);
    const binder = await NfqueueHolder.bind(QUEUE);
    const marker = join(tmpdir(), `sp-queue-ran-${process.pid}`);
    const atProtect = synplug(['protect', '--', 'sh', '-c', `: > ${marker}`], env);
    const ran = existsSync(marker);
    const stillTheirs = procQueue(QUEUE)?.portId === binder.portId;
    // synplug's rule is gone, so the binder gets no SYN: a client connects at once, after protect's refusal and plug's
    const chainsAfterRefusal = chainsOf(QUEUE_TABLE);
    const srv = server('169.254.255.254', PORT);
    await listening(srv);
    const afterProtect = await client('169.254.255.254', PORT).result;
    const atPlug = synplug(['plug', '--max-hold', '10s'], env);
    const afterPlug = await client('169.254.255.254', PORT).result;
    const queuedToBinder = procQueue(QUEUE)?.queued;
    await binder.close();
    // A rule of someone else's on the number, added after setup: protect and plug refuse before holding anything.
    execFileSync('/usr/sbin/iptables-nft', ['-A', 'INPUT', '-p', 'tcp', '--dport', '9998', '-j', 'NFQUEUE', '--queue-num', String(QUEUE), '--queue-bypass']);
    const ruleAfterSetup = {
      protect: synplug(['protect', '--', 'sh', '-c', `: > ${marker}2`], env),
      plug: synplug(['plug', '--max-hold', '10s'], env),
    };
    const ranAfterRule = existsSync(`${marker}2`);
    const chainsAfterRule = chainsOf(QUEUE_TABLE);
    execFileSync('/usr/sbin/iptables-nft', ['-F', 'INPUT']);
    srv.kill();
    synplug(['teardown'], env);
    return {
      ruleAfterSetup: {
        codes: [ruleAfterSetup.protect.code, ruleAfterSetup.plug.code],
        stderr: ruleAfterSetup.protect.stderr,
        ran: ranAfterRule,
        chains: chainsAfterRule,
        bound: procQueue(QUEUE) ?? null,
      },
      byRule,
      tablesAfterRule,
      other: { code: other.code },
      down: down.code,
      tablesAfterTeardown,
      byBind,
      tablesAfterBind,
      bad,
      plugFlag,
      atProtect: { code: atProtect.code, stderr: atProtect.stderr, ran, stillTheirs },
      refused: { chainsAfterRefusal, afterProtect, atPlug: atPlug.code, afterPlug, queuedToBinder },
    };
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');

  test('the local queue hold, IPv4: a SYN held while protect runs is delivered after the release; teardown leaves nothing', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'local-v4', 90_000);
    t.is(r.setup.code, 0);
    t.is(r.setup.json.via, 'queue');
    t.is(r.setup.json.hold, 'queue');
    t.is(r.setup.json.queue.num, QUEUE);
    t.deepEqual(r.chains, [[], ['hold:1'], []], 'the chain and its rule exist only around the hold (armed)');
    t.deepEqual(
      r.report,
      [null, { hook: 'output', prio: 2147483647, rules: 3 }, []],
      "the report's counter chain exists only around protect: not made by setup, added last at output, removed after the report",
    );
    t.is(r.checkAfterSetup.state, 'ok', 'check: set up, the chain and rule absent outside a hold as wanted');
    t.deepEqual(
      r.checkAfterSetup.pieces.filter((p: Record<string, string>) => p.lifetime === 'armed').map((p: Record<string, string>) => [p.status, p.detail]),
      [
        ['ok', 'absent outside a hold: added for each hold and removed after its release'],
        ['ok', 'absent outside a hold: added for each hold and removed after its release'],
      ],
    );
    t.is(r.queuedWhileHeld, 1, 'the kernel held the SYN in the queue');
    t.true(r.pendingWhileHeld, 'the connect waited');
    t.is(r.outcome, 'ok 0', 'connected after the release, without a SYN retransmission');
    t.is(r.protect.code, 0);
    t.is(r.protect.json.report.heldSyns, 1);
    t.is(r.protect.json.report.dropped, 0);
    t.is(r.teardown, 0);
    t.deepEqual(r.after, { tables: [], onLo: false, bound: null });
  });

  test('the local queue hold, IPv6: the same', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'local-v6', 90_000);
    t.is(r.setup.code, 0);
    t.deepEqual(r.chains, [[], ['hold:1'], []]);
    t.is(r.queuedWhileHeld, 1);
    t.true(r.pendingWhileHeld);
    t.is(r.outcome, 'ok 0');
    t.is(r.protect.json.report.heldSyns, 1);
    t.deepEqual(r.after, { tables: [], onLo: false, bound: null });
  });

  test('the inbound queue hold: a client in another namespace over veth is held, then connects; with nobody bound, SYNs bypass', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'inbound', 90_000);
    t.is(r.setup.code, 0);
    t.is(r.setup.json.via, 'queue');
    t.regex(r.setup.json.hold, /^queue:sqs/);
    t.is(r.check.state, 'ok');
    t.is(r.check.holds[0].via, 'queue');
    t.deepEqual(r.chains, [[], ['hold:1'], []], 'the chain and its rule exist only around the hold (armed)');
    t.true(r.pendingWhileHeld);
    t.regex(r.outcome, /^ok [0-9]+$/, 'connected after the release (a client from the network may have retransmitted meanwhile)');
    t.is(r.protect.code, 0);
    t.true(r.protect.json.report.heldSyns >= 1);
    t.regex(r.after, /^ok 0$/, 'bypass: not held');
    t.is(r.teardown, 0);
    t.deepEqual(r.tables, []);
  });

  test('overflow: over --queue-maxlen the kernel drops SYNs (fail-open off); their clients retry, and every one connects after the release', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'overflow', 90_000);
    t.is(r.maxlen, 2);
    t.is(r.queued, 2);
    t.is(r.outcomes.length, 4);
    t.true(
      r.outcomes.every((o: string) => /^ok [0-9]+$/.test(o)),
      JSON.stringify(r.outcomes),
    );
    t.true(r.protect.report.dropped >= 2, 'protect reports the SYNs dropped');
    t.true(r.protect.report.heldSyns >= 2);
  });

  test("SIGKILL of protect: the queue's holder process releases the held SYN when protect's connection to it ends; the connect completes without a retransmission", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'kill-protect', 90_000);
    t.true(r.holderFound, 'a process other than protect holds the queue');
    t.true(r.pendingBeforeKill);
    t.is(r.outcome, 'ok 0', "the watchdog's removal of the chain came after the holder's release (removing a base chain drops what is queued)");
  });

  test("SIGKILL of the queue's holder during a hold: protect's report and a manual release's say the hold failed (not lossless), naming the holder's end", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'kill-holder', 90_000);
    t.true(r.holderFound);
    t.regex(r.outcome, /^ok [1-9][0-9]*$/, 'the held SYN was dropped: its client connected on a retransmit');
    t.is(r.protect.code, 0, 'the command ran to its end');
    t.is(r.protect.json.report.lossless, false);
    t.is(r.protect.json.report.dropped, null, 'the count of what the holder dropped died with it: null, not 0');
    t.regex(r.protect.json.report.failed[0], /^queue 4200: its holder process ended [0-9]+ ms into the hold \(killed\?\): the kernel dropped the SYNs it held/);
    t.is(r.plug, 0);
    t.true(r.holder2Found);
    t.is(r.release.code, 0);
    t.is(r.release.json.report.lossless, false);
    t.is(r.release.json.report.dropped, null);
    t.regex(r.release.json.warnings[0], /no holder process held it at the release: it ended during the hold/);
    // rvq15's MINOR: its holdMs runs to the release, not to the holder's death, which nothing recorded: said, not hidden
    t.regex(r.release.json.report.failed[0], /; when it ended, nothing recorded: holdMs counts to this release, the most the hold lasted$/);
    t.deepEqual(
      (r.history as Json[]).slice(-3).map((e) => [e.command, e.report?.lossless, e.report?.dropped]),
      [
        ['protect', false, null],
        ['plug', null, 0],
        ['release', false, null],
      ],
      "history records protect's and the release's as not lossless (the plug's line counts nothing: its release does)",
    );
  });

  test("a release, a release --orphaned and a status through a state directory with no record leave another directory's running hold: its chain stays, a new SYN is held until its own release", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'release-elsewhere', 90_000);
    // release and release --orphaned: exit 7 (issue 19: they said exit 0 'nothing is held' and 'NOT released here'); status 0
    t.deepEqual(r.codes, [7, 7, 0]);
    t.deepEqual(r.linked, [6, 6], "regression (an attack's): a holder socket linked from another directory is refused, and its release ended the hold");
    t.deepEqual(r.chainsAfter, ['hold:1'], "the running hold's chain and rule are still there");
    t.true(r.pendingWhileHeld, 'a new SYN is held');
    t.is(r.outcome, 'ok 0', 'delivered at the release, without a retransmission');
    t.is(r.lossless, true);
  });

  test("a base chain added during a hold costs the held SYN nothing: protect's report chain (last at output), or one at the queue chain's own priority", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'chain-added', 90_000);
    t.is(r.protect.code, 0, r.protect.stderr);
    t.like(r.reportDuring, { hook: 'output', prio: 2147483647 }, "protect added its counter chain while the manual plug's SYN was queued");
    t.is(r.byProtect, 'ok 0', 'the held SYN connected at the release, without a retransmission');
    t.deepEqual(r.reportAfterRelease, [], "the release, the last holder's end, removed the counter chain");
    t.is(r.byRawChain, 'ok 0', "a chain added at priority raw (the queue chain's) during a hold: connected at the release, no retransmission");
  });

  test("two state directories in one namespace: each protect counts in its own chain; B's protect during A's hold leaves A's (it removed it: A's report then said lossless for a refused connection)", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'report-two-dirs', 90_000);
    t.is(r.setupB, 0);
    t.is(r.protectB, 0);
    t.is(r.duringA.length, 1, JSON.stringify(r.duringA));
    t.regex(r.duringA[0], /^rst-[0-9a-f]{16}$/);
    t.deepEqual(r.afterB, r.duringA, "B's end removed its own chain only");
    t.deepEqual(r.afterA, [], "A's end removed its own");
  });

  test('SIGKILL of protect, its watchdog and the queue holder: the queue is unbound, and the next connection passes through bypass', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'kill-both', 90_000);
    t.true(r.watchdogFound);
    t.true(r.holderFound);
    t.true(r.boundWhileHeld);
    t.is(r.next, 'ok 0');
    t.deepEqual(r.chainsLeft, ['hold:1'], 'the armed chain stays (bypass) when every process of synplug was killed');
    t.like(r.reportLeft, { hook: 'output' }, "so does the report's counter chain");
    t.is(r.status, 0);
    t.deepEqual(r.chainsAfterStatus, [], "the next command's stale recovery removes it");
    t.deepEqual(r.reportAfterStatus, [], 'and the counter chain');
  });

  test('neither the reload command (run while the queue is bound) nor the --check command has a netlink socket descriptor', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'no-fd', 90_000);
    t.is(r.code, 0, r.stderr);
    t.true(r.command.bound, 'the queue was bound while the reload command ran');
    t.true(r.command.netlinkSockets > 0, 'the namespace has netlink sockets (the queue socket among them)');
    t.deepEqual(r.command.netlinkFds, [], 'no netlink socket in the reload command');
    t.false(r.check.bound, 'the check ran before anything was held');
    t.deepEqual(r.check.netlinkFds, [], 'no netlink socket in the check command');
  });

  test("foreign queue users: a rule that is not synplug's or a bound queue on the number is exit 7 with nothing changed; theirs is left alone", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'foreign', 90_000);
    t.is(r.byRule.code, 7, r.byRule.stderr);
    t.regex(r.byRule.stderr, new RegExp(`queue ${QUEUE} is used by rule\\(s\\) that are not synplug's \\(table ip raw chain OUTPUT\\)`));
    t.deepEqual(r.tablesAfterRule, ['ip raw'], 'nothing of synplug added');
    t.is(r.other.code, 0, 'another queue number is free');
    t.is(r.down, 0);
    t.deepEqual(r.tablesAfterTeardown, ['ip raw'], "teardown left the foreign rule's table");
    t.is(r.byBind.code, 7, r.byBind.stderr);
    t.regex(r.byBind.stderr, new RegExp(`netfilter queue ${QUEUE} is bound by process ${process.pid === 0 ? '' : '[0-9]+ \\(node\\)'}`));
    t.deepEqual(r.tablesAfterBind, ['ip raw']);
    t.is(r.bad.code, 2);
    t.regex(r.bad.stderr, /--via: 'quue' is not one of auto, plug, queue/);
    t.is(r.plugFlag.code, 2);
    t.regex(r.plugFlag.stderr, /--limit is the plug holds' option/);
    t.is(r.atProtect.code, 7, r.atProtect.stderr);
    t.regex(r.atProtect.stderr, new RegExp(`netfilter queue ${QUEUE} .*is bound by process [0-9]+ \\(node\\)`));
    t.false(r.atProtect.ran, 'the command was not run');
    t.true(r.atProtect.stillTheirs, 'the queue stays with its binder');
    t.regex(r.atProtect.stderr, /nothing was held, and synplug's SYN rule for queue 4200 was removed so that process gets none of them/);
    t.deepEqual(
      r.refused,
      { chainsAfterRefusal: ['hold:0'], afterProtect: 'ok 0', atPlug: 7, afterPlug: 'ok 0', queuedToBinder: 0 },
      "regression (a fresh user's): the refused protect and plug left the armed rule, and every new SYN went to the binder's queue",
    );
    t.deepEqual(
      r.ruleAfterSetup.codes,
      [7, 7],
      "regression (a fresh user's): a rule of someone else's on the number added after setup made protect hold their packets too",
    );
    t.regex(
      r.ruleAfterSetup.stderr,
      /netfilter queue 4200 is used by rule\(s\) that are not synplug's \(table ip filter chain INPUT\): a hold would hold what they queue too;.*Nothing was held/,
    );
    t.false(r.ruleAfterSetup.ran, 'the command was not run');
    t.is(r.ruleAfterSetup.bound, null, 'nothing bound the queue');
  });
}
