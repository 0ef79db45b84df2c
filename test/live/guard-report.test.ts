/**
 * Live, this machine's kernel (the queue hold): the reload's report against
 * what real clients saw. A python3 server on 169.254.79.1 restarts on
 * SIGUSR1 and python3 client threads count what they saw
 * (test/helpers/reload-clients.ts). `protect` runs the
 * restart (`kill -USR1`, then wait for the file) under the queue hold:
 *
 * - too early (`--max-hold 100ms`, no --wait-listen): the clients lose
 *   connections; the report says lossless false, and its refused + reset
 *   equal the clients' failures within the tolerance stated below;
 * - proper (`--wait-listen`): the clients lose nothing; the report says
 *   lossless true, every count 0, heldSyns > 0.
 *
 * And a manual plug and release on the queue hold: their history lines, the
 * metrics file `setup --metrics-file` recorded, and bad metrics paths (exit 2
 * before anything; a recorded one gone: protect refused, release warned; a
 * recorded value synplug could not have written: exit 6 naming setup.json).
 *
 * Each scenario runs in a network namespace of its own; bounded: 4 client
 * threads, a connection every 10 ms each, stopping once the server is back.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';
import { countingClients, restartCommand, restartingServer, serverListening } from '../helpers/reload-clients.js';

// biome-ignore lint/suspicious/noExplicitAny: the scenarios' JSON results, asserted field by field
type Json = Record<string, any>;

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_GUARD_REPORT_SCENARIO';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'dist/bundle/synplug.cjs');
const ADDR = '169.254.79.1';
const PORT = 39400;

/** Run the CLI; its status and output. */
function synplug(args: string[], env: NodeJS.ProcessEnv): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { env, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** Wait (bounded) until `cond` holds. */
async function until(cond: () => boolean, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** The queue hold for ADDR, the server, the clients running; protect restarts the server with `flags`; the clients stop once it is back. */
/**
 * Scrape the textfile collector of a real node_exporter (Debian's prometheus-node-exporter) reading `dir`, on
 * 127.0.0.1 of this namespace: the synplug series and the collector's own error gauge.
 */
async function scrape(dir: string): Promise<Record<string, number>> {
  const port = 39499;
  const ne = spawn(
    '/usr/bin/prometheus-node-exporter',
    ['--collector.disable-defaults', '--collector.textfile', `--collector.textfile.directory=${dir}`, `--web.listen-address=127.0.0.1:${port}`],
    { stdio: 'ignore' },
  );
  try {
    let text = '';
    for (let i = 0; i < 200 && !text; i++) {
      text = await fetch(`http://127.0.0.1:${port}/metrics`).then(
        (r) => r.text(),
        () => '',
      );
      if (!text) await sleep(50);
    }
    const out: Record<string, number> = {};
    for (const l of text.split('\n'))
      if (/^(synplug_|node_textfile_scrape_error)/.test(l)) out[l.slice(0, l.lastIndexOf(' '))] = Number(l.slice(l.lastIndexOf(' ') + 1));
    return out;
  } finally {
    ne.kill();
  }
}

async function restartUnder(flags: string[], closeQueued = false, metrics = false): Promise<Json> {
  const dir = mkdtempSync(join(tmpdir(), 'sp-report-'));
  const textfile = join(dir, 'textfile');
  mkdirSync(textfile, { mode: 0o755 });
  if (metrics) flags = [...flags, '--metrics-file', join(textfile, 'synplug.prom')];
  const env = { ...process.env, SYNPLUG_STATE_DIR: join(dir, 'state') };
  const back = join(dir, 'back');
  const stop = join(dir, 'stop');
  const set = synplug(['setup', '--via', 'queue', '--addr', ADDR, '--json'], env);
  const srv = restartingServer(ADDR, PORT, back, { closeQueued });
  await serverListening(srv);
  const c = countingClients(ADDR, PORT, stop);
  // The clients connect before the restart (the server is up: these succeed).
  await sleep(200);
  const p = spawnSync(process.execPath, [BIN, 'protect', '--json', ...flags, '--', ...restartCommand(srv.pid!, back)], {
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  await until(() => existsSync(back), 'the server to be back');
  // A few connections to the server that is back, then stop.
  await sleep(100);
  spawnSync('touch', [stop]);
  const seen = await c.result;
  const text = spawnSync(process.execPath, [BIN, 'protect', '--', 'true'], { env, encoding: 'utf8', timeout: 60_000 });
  const history = synplug(['history', '--json'], env);
  const status = synplug(['status', '--json'], env);
  srv.kill();
  synplug(['teardown'], env);
  return {
    setup: set.code,
    protect: { code: p.status, json: JSON.parse(p.stdout), stderr: p.stderr },
    seen,
    text: text.stderr,
    history: JSON.parse(history.stdout),
    lastReload: JSON.parse(status.stdout).lastReload,
    ...(metrics && {
      scraped: await scrape(textfile),
      promtool: spawnSync('/usr/bin/promtool', ['check', 'metrics'], { input: readFileSync(join(textfile, 'synplug.prom')), encoding: 'utf8' }).status,
    }),
  };
}

const scenarios = {
  early: () => restartUnder(['--max-hold', '100ms']),
  proper: () => restartUnder(['--max-hold', '10s', '--wait-listen', `${ADDR}:${PORT}`], false, true),
  /** Another holder's end removed the counter chain between this protect's arming and its lease: kept() makes it again. */
  async kept() {
    const { armReport, REPORT_TABLE, reportChainName } = await import('../../src/guard/report.js');
    spawnSync('/usr/sbin/ip', ['addr', 'add', `${ADDR}/32`, 'dev', 'lo']);
    const dir = mkdtempSync(join(tmpdir(), 'sp-report-kept-'));
    const name = reportChainName(dir);
    const c = await armReport([{ addrs: [], ports: [9443] }], dir);
    const removed = spawnSync('/usr/sbin/nft', ['delete', 'chain', 'inet', REPORT_TABLE, name]).status;
    await c.kept();
    const chain = spawnSync('/usr/sbin/nft', ['list', 'chain', 'inet', REPORT_TABLE, name]).status;
    spawnSync('python3', [
      '-c',
      `import socket
for i in range(3):
  s=socket.socket()
  try: s.connect(('${ADDR}', 9443))
  except ConnectionRefusedError: pass`,
    ]);
    c.released();
    const report = await c.finish({ heldSyns: 0, holdMs: 0, dropped: 0 });
    rmSync(dir, { recursive: true, force: true });
    return { removed, chain, name, report };
  },
  /** The counting rules as nft prints them, three refusals counted, a second arming adding nothing. */
  async rules() {
    const { armReport } = await import('../../src/guard/report.js');
    spawnSync('/usr/sbin/ip', ['addr', 'add', `${ADDR}/32`, 'dev', 'lo']);
    // a listener on the local hold's address: its resets are counted from that port (a local client's own RSTs
    // leave the address too)
    const srv = restartingServer(ADDR, PORT, join(tmpdir(), `sp-report-rules-${process.pid}`));
    await serverListening(srv);
    const held = [
      { addrs: [ADDR], ports: [] },
      { addrs: ['fd00:79::1'], ports: [8443] },
      { addrs: [], ports: [9443] },
    ];
    const dir = mkdtempSync(join(tmpdir(), 'sp-report-rules-dir-'));
    const c = await armReport(held, dir);
    const listed = spawnSync('/usr/sbin/nft', ['list', 'table', 'inet', 'synplug_report'], { encoding: 'utf8' }).stdout;
    c.released();
    const refused = spawnSync(
      'python3',
      ['-c', `import socket\nfor i in range(3):\n  s=socket.socket()\n  try: s.connect(('${ADDR}', 9))\n  except ConnectionRefusedError: print('refused')`],
      { encoding: 'utf8' },
    ).stdout;
    const report = await c.finish({ heldSyns: 0, holdMs: 0, dropped: 0 });
    const again = await armReport(held, dir);
    await again.finish({ heldSyns: 0, holdMs: 0, dropped: 0 });
    const rules = (t: string) => t.split('\n').filter((l) => l.includes('counter packets')).length;
    const relisted = spawnSync('/usr/sbin/nft', ['list', 'table', 'inet', 'synplug_report'], { encoding: 'utf8' }).stdout;
    srv.kill();
    // the library's teardown of every hold removes the counters' table (it carries synplug's mark), and leaves one of
    // that name that someone else made (no mark)
    const { teardown } = await import('../../src/guard/index.js');
    const stateDir = mkdtempSync(join(tmpdir(), 'sp-report-td-'));
    const hasTable = () => spawnSync('/usr/sbin/nft', ['list', 'table', 'inet', 'synplug_report']).status === 0;
    const torn = await teardown({ stateDir: join(stateDir, 'state') });
    const goneAfterTeardown = !hasTable();
    spawnSync('/usr/sbin/nft', ['add', 'table', 'inet', 'synplug_report']);
    await teardown({ stateDir: join(stateDir, 'state') });
    const foreignKept = hasTable();
    spawnSync('/usr/sbin/nft', ['delete', 'table', 'inet', 'synplug_report']);
    rmSync(stateDir, { recursive: true, force: true });
    return {
      listed,
      refused: refused.trim().split('\n').length,
      report,
      rulesBefore: rules(listed),
      rulesAfter: rules(relisted),
      tornRemoved: torn.removed,
      goneAfterTeardown,
      foreignKept,
    };
  },
  closing: () => restartUnder(['--max-hold', '10s', '--wait-listen', `${ADDR}:${PORT}`], true),
  /** Manual plug and release on the queue hold, with the metrics file setup recorded; bad metrics paths. */
  async manual() {
    const dir = mkdtempSync(join(tmpdir(), 'sp-report-manual-'));
    const textfile = join(dir, 'textfile');
    mkdirSync(textfile, { mode: 0o755 });
    const prom = join(textfile, 'synplug.prom');
    const state = join(dir, 'state');
    const env = { ...process.env, SYNPLUG_STATE_DIR: state };
    const setupJson = join(state, 'setup.json');
    // Not set up: plug fails (exit 8), counted as failed under the hold label none.
    const notSetUp = synplug(['plug', '--metrics-file', prom], env);
    const afterNotSetUp = existsSync(prom) ? readFileSync(prom, 'utf8') : '';
    const set = synplug(['setup', '--via', 'queue', '--addr', ADDR, '--metrics-file', prom, '--json'], env);
    const recorded = JSON.parse(readFileSync(setupJson, 'utf8')).metricsFile;
    const plug = synplug(['plug', '--json', '--max-hold', '30s'], env);
    // A client's SYN held by the manual plug: queued (nfnetlink_queue's queue_total), then let go by the release.
    const srv = restartingServer(ADDR, PORT, join(dir, 'back'));
    await serverListening(srv);
    const client = spawn(
      'python3',
      [
        '-c',
        `import socket\ns=socket.socket(); s.settimeout(30)\ntry:\n  s.connect(('${ADDR}', ${PORT})); print('ok')\nexcept OSError as e: print(type(e).__name__)`,
      ],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let clientOut = '';
    client.stdout!.setEncoding('utf8').on('data', (d: string) => (clientOut += d));
    const clientDone = new Promise((done) => client.once('exit', done));
    const queued = () =>
      readFileSync('/proc/net/netfilter/nfnetlink_queue', 'utf8')
        .split('\n')
        .some((l) => Number(l.trim().split(/\s+/)[2]) > 0);
    await until(queued, 'the SYN queued');
    const release = synplug(['release', '--json'], env);
    await clientDone;
    srv.kill();
    const badRelease = synplug(['release', '--metrics-file', join(dir, 'absent', 'x.prom')], env);
    const history = JSON.parse(synplug(['history', '--json'], env).stdout);
    const text = readFileSync(prom, 'utf8');
    const promtool = spawnSync('/usr/bin/promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    // A recorded default whose directory went away: protect refuses (exit 2, nothing run), release still releases.
    const rec = JSON.parse(readFileSync(setupJson, 'utf8'));
    writeFileSync(setupJson, JSON.stringify({ ...rec, metricsFile: join(dir, 'gone', 'synplug.prom') }));
    const ran = join(dir, 'ran');
    const protectGone = synplug(['protect', '--', 'touch', ran], env);
    const releaseGone = synplug(['release'], env);
    // A recorded value synplug could not have written: exit 6 naming the file.
    writeFileSync(setupJson, JSON.stringify({ ...rec, metricsFile: 'relative.prom' }));
    const statusBad = synplug(['status'], env);
    writeFileSync(setupJson, JSON.stringify(rec));
    synplug(['teardown'], env);
    return {
      setup: set.code,
      recorded,
      prom,
      setupJson,
      notSetUp: { code: notSetUp.code, stderr: notSetUp.stderr },
      afterNotSetUp,
      plug: { code: plug.code, json: JSON.parse(plug.stdout || '{}'), stderr: plug.stderr },
      release: { code: release.code, json: JSON.parse(release.stdout), stderr: release.stderr },
      client: clientOut.trim(),
      badRelease: { code: badRelease.code, stderr: badRelease.stderr },
      history,
      text,
      promtool: { code: promtool.status, out: `${promtool.stdout}${promtool.stderr}` },
      protectGone: { code: protectGone.code, stderr: protectGone.stderr, ran: existsSync(ran) },
      releaseGone: { code: releaseGone.code, stderr: releaseGone.stderr },
      statusBad: { code: statusBad.code, stderr: statusBad.stderr },
    };
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');

  test('a hold that ends too early (--max-hold 100ms around a restart with a 1 s gap): the clients lose connections, and the report says so and counts them', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'early', 90_000);
    t.is(r.setup, 0);
    t.is(r.protect.code, 0, r.protect.stderr);
    const rep = r.protect.json.report;
    const failed = r.seen.refused + r.seen.reset;
    t.log(`clients: ${JSON.stringify(r.seen)}; report: ${JSON.stringify(rep)}`);
    t.true(r.protect.json.maxHoldReached);
    t.true(failed > 0, 'the clients lost connections');
    t.is(r.seen.other, 0, 'every failure is a refusal or a reset');
    t.false(rep.lossless);
    // Tolerance: the report counts only RSTs from what is held (nothing else talks to it here), so it never counts more
    // than the clients saw; counting ends 1 s after the release, when the server is back (its 1 s gap began before the
    // release): a refusal later than that (a server start delayed on a loaded machine) is the only one it may miss,
    // at most one per client thread per 10 ms beyond the window. We allow 10 % of the failures, and at least 4.
    t.true(rep.refused + rep.reset <= failed, `report ${rep.refused}+${rep.reset} <= clients' ${failed}`);
    t.true(rep.refused + rep.reset >= failed - Math.max(4, Math.ceil(failed * 0.1)), `report ${rep.refused}+${rep.reset} ~ clients' ${failed}`);
    t.true(rep.refused <= r.seen.refused && rep.reset <= r.seen.reset, 'each count at most what the clients saw of its kind');
    t.true(rep.heldSyns > 0, 'SYNs were held for the first 100 ms');
    t.regex(r.protect.stderr, /max-hold of 100 ms reached/);
  });

  test('a proper protect (--wait-listen) around the same restart: the clients lose nothing; the report says lossless, every count 0, SYNs held', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'proper', 90_000);
    t.is(r.setup, 0);
    t.is(r.protect.code, 0, r.protect.stderr);
    const rep = r.protect.json.report;
    t.log(`clients: ${JSON.stringify(r.seen)}; report: ${JSON.stringify(rep)}`);
    t.deepEqual({ refused: r.seen.refused, reset: r.seen.reset, other: r.seen.other }, { refused: 0, reset: 0, other: 0 });
    t.true(r.seen.ok > 0);
    t.false(r.protect.json.maxHoldReached);
    t.true(rep.heldSyns > 0, 'SYNs were held while the server was down');
    t.like(rep, { dropped: 0, refused: 0, reset: 0, listenerDrops: 0, lossless: true });
    t.is(r.protect.json.heldMs, undefined, 'the hold counts are in report only');
    // The text output ends with the verdict line.
    t.regex(r.text.trim().split('\n').at(-1), /^lossless: 0 refused, 0 reset, 0 dropped$/);
    // The history: both protects, in order, each with its report; status shows the last.
    t.is(r.history.length, 2);
    t.deepEqual(r.history[0].report, rep);
    t.like(r.history[0], { id: 1, command: 'protect', holds: ['queue'], exitCode: 0 });
    t.is(r.history[1].id, 2);
    t.deepEqual(r.lastReload, r.history[1]);
    // --metrics-file, scraped by a real node_exporter's textfile collector: this reload, lossless.
    t.is(r.promtool, 0, 'promtool check metrics');
    t.is(r.scraped.node_textfile_scrape_error, 0);
    // node_exporter prints the labels sorted by name: hold (the holds held), then result.
    t.like(r.scraped, {
      'synplug_reloads_total{hold="queue",result="lossless"}': 1,
      'synplug_reloads_total{hold="queue",result="lost"}': 0,
      'synplug_reloads_total{hold="queue",result="failed"}': 0,
      'synplug_held_syns_total{hold="queue"}': rep.heldSyns,
      'synplug_refused_total{hold="queue"}': 0,
      'synplug_reset_total{hold="queue"}': 0,
      'synplug_dropped_total{hold="queue"}': 0,
      'synplug_hold_seconds_count{hold="queue"}': 1,
    });
  });

  test("the counter chain removed by another holder's end between protect's arming and its lease: made again, and the refusals after it counted", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'kept', 60_000);
    t.is(r.removed, 0, 'the chain was removed');
    t.is(r.chain, 0, 'kept() made it again');
    t.regex(r.name, /^rst-[0-9a-f]{16}$/, "the state directory's own chain");
    t.like(r.report, { refused: 3, reset: 0 });
  });

  test("the counting rules, as nft lists them: per held address and port a refused rule (RST|ACK, sequence 0) and a RST rule, at the output hook; a local hold's RSTs from its listeners' ports only", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'rules', 60_000);
    const lines = (r.listed as string)
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    t.true(lines.includes('type filter hook output priority 2147483647; policy accept;'), r.listed);
    for (const want of [
      `ip saddr ${ADDR} tcp flags rst,ack / rst,ack tcp sequence 0 counter packets 0 bytes 0 comment "refused ${ADDR} *"`,
      `ip saddr ${ADDR} tcp sport ${PORT} tcp flags & rst == rst counter packets 0 bytes 0 comment "rst ${ADDR} ${PORT}"`,
      `ip saddr ${ADDR} tcp sport ${PORT} tcp flags rst,ack / rst,ack tcp sequence 0 counter packets 0 bytes 0 comment "refused ${ADDR} ${PORT}"`,
      'ip6 saddr fd00:79::1 tcp sport 8443 tcp flags rst,ack / rst,ack tcp sequence 0 counter packets 0 bytes 0 comment "refused fd00:79::1 8443"',
      'ip6 saddr fd00:79::1 tcp sport 8443 tcp flags & rst == rst counter packets 0 bytes 0 comment "rst fd00:79::1 8443"',
      'tcp sport 9443 tcp flags rst,ack / rst,ack tcp sequence 0 counter packets 0 bytes 0 comment "refused * 9443"',
      'tcp sport 9443 tcp flags & rst == rst counter packets 0 bytes 0 comment "rst * 9443"',
    ])
      t.true(lines.includes(want), `${want}\nin\n${r.listed}`);
    t.is(r.refused, 3);
    t.like(r.report, { refused: 3, reset: 0, lossless: false });
    t.is(r.rulesBefore, 7);
    t.is(r.rulesAfter, 7, 'a second arming adds no rule');
    t.false(r.listed.includes(`comment "rst ${ADDR} *"`), "the local hold's resets are not counted on every port");
    // it said "made by synplug setup", though protect makes it
    t.regex(
      r.listed,
      /comment "synplug: made by synplug protect \(the reload report's RST counters\), removed by synplug teardown"/,
      "the table carries synplug's mark",
    );
    t.true(r.goneAfterTeardown, "the library's teardown of every hold removed it");
    t.true(
      r.tornRemoved.some((x: string) => x.includes('synplug_report')),
      'and said so',
    );
    t.true(r.foreignKept, 'a table of that name without the mark is left alone');
  });

  test("a listener closed with connections in its queue (the server accepts nothing, then restarts): the clients' resets are the report's reset", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'closing', 90_000);
    t.is(r.protect.code, 0, r.protect.stderr);
    const rep = r.protect.json.report;
    t.log(`clients: ${JSON.stringify(r.seen)}; report: ${JSON.stringify(rep)}`);
    t.true(r.seen.reset > 0, 'the queued connections were reset');
    t.is(r.seen.refused, 0, 'no SYN was refused: the hold covered the gap');
    t.is(
      rep.reset,
      r.seen.reset,
      "every reset the clients saw, and nothing else, with no tolerance needed: they all happen at the listener's close, inside the hold",
    );
    t.is(rep.refused, 0);
    t.false(rep.lossless);
    t.true(rep.heldSyns > 0);
  });

  test('manual plug and release on the queue hold, with the metrics file setup --metrics-file recorded: history lines plug and release; metrics; bad metrics paths', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'manual', 90_000);
    // A plug with nothing set up: exit 8, counted as failed under the hold label none.
    t.is(r.notSetUp.code, 8, r.notSetUp.stderr);
    t.regex(r.afterNotSetUp, /^synplug_reloads_total\{result="failed",hold="none"\} 1$/m);
    t.is(r.setup, 0);
    t.is(r.recorded, r.prom, 'setup recorded the metrics file, as an absolute path');
    t.is(r.plug.code, 0, r.plug.stderr);
    t.deepEqual(r.plug.json.holds, ['queue']);
    // A manual release: its report counts the SYN the plug held (the holder's answer to the release), no more.
    t.is(r.release.code, 0, r.release.stderr);
    t.true(r.release.json.released);
    t.deepEqual(r.release.json.holds, ['queue']);
    t.is(r.client, 'ok', 'the held connection was let through');
    t.like(r.release.json.report, { dropped: 0, refused: null, reset: null, listenerDrops: null, lossless: null });
    t.true(r.release.json.report.heldSyns >= 1, JSON.stringify(r.release.json.report));
    t.true(r.release.json.report.holdMs > 0, 'from the plug to the release');
    t.regex(r.release.json.report.uncounted[0], /a manual hold: refused, reset and listener drops are counted by protect only/);
    t.is(r.release.json.endedManualHold, undefined, 'the accounting fields stay inside');
    // The history: the plug, then the release (the failed plug and the refused release wrote no line).
    t.is(r.history.length, 2);
    t.like(r.history[0], { id: 1, command: 'plug', holds: ['queue'], exitCode: 0 });
    t.like(r.history[1], { id: 2, command: 'release', holds: ['queue'], exitCode: 0 });
    t.deepEqual(r.history[1].report, r.release.json.report);
    // A bad --metrics-file on release: exit 2 before anything is released or written.
    t.is(r.badRelease.code, 2, r.badRelease.stderr);
    t.regex(r.badRelease.stderr, /--metrics-file .*absent\/x\.prom: the directory .* does not exist/);
    // The file, written by the recorded default: the release counted the manual hold as a reload (uncounted: refused
    // and reset are protect's), with its held SYN and its time; promtool accepts it.
    t.is(r.promtool.code, 0, r.promtool.out);
    t.regex(r.text, /^synplug_reloads_total\{result="failed",hold="none"\} 1$/m);
    for (const res of ['lossless', 'lost', 'failed']) t.regex(r.text, new RegExp(`^synplug_reloads_total\\{result="${res}",hold="queue"\\} 0$`, 'm'));
    t.regex(r.text, /^synplug_reloads_total\{result="uncounted",hold="queue"\} 1$/m);
    t.regex(r.text, /^synplug_hold_seconds_count\{hold="queue"\} 1$/m);
    t.regex(r.text, /^synplug_held_syns_total\{hold="queue"\} [1-9]\d*$/m);
    // A recorded default whose directory went away: protect is refused (exit 2, the command not run), naming it.
    t.is(r.protectGone.code, 2, r.protectGone.stderr);
    t.regex(r.protectGone.stderr, /the metrics file that setup recorded \(.*gone\/synplug\.prom, in .*setup\.json\) cannot be written/);
    t.false(r.protectGone.ran);
    // ... and release still releases, with a warning.
    t.is(r.releaseGone.code, 0, r.releaseGone.stderr);
    t.regex(r.releaseGone.stderr, /warning: the metrics file that setup recorded .* the metrics were not written/);
    // A recorded value synplug could not have written: exit 6, naming the file.
    t.is(r.statusBad.code, 6, r.statusBad.stderr);
    t.true(r.statusBad.stderr.includes(r.setupJson), r.statusBad.stderr);
    t.regex(r.statusBad.stderr, /'metricsFile' is "relative\.prom", not an absolute path/);
  });
}
