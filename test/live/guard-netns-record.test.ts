/**
 * Live, this machine's kernel: a setup record belongs to the network
 * namespace its holds are in (its cookie, SO_NETNS_COOKIE, in setup.json).
 *
 * - One state directory used from two namespaces (`ip netns exec X synplug
 *   setup`, then `unshare -n synplug teardown`): the second refuses with
 *   exit 6 naming X and what to run; X's table, address and record stay,
 *   and X's own teardown removes them (it had "forgotten the record" and
 *   left X's table and address). X's reload history is not shown in
 *   the other namespace (`status` there had shown another's last reload).
 *
 * Oracles: `nft -j list tables` and `ip -j addr` in X (/usr/sbin/nft,
 * /usr/sbin/ip), and X's cookie read by python3 (getsockopt SO_NETNS_COOKIE).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';
import { BIN, IP, parseJson } from '../helpers/queue-live.js';

// biome-ignore lint/suspicious/noExplicitAny: the scenarios' JSON results, asserted field by field
type Json = Record<string, any>;

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_GUARD_NETNS_RECORD_SCENARIO';
const NFT = '/usr/sbin/nft';
const ADDR = '169.254.86.1';

/** Run the CLI through `prefix` (ip netns exec X, unshare -n, or nothing). */
function run(prefix: string[], args: string[], env: NodeJS.ProcessEnv): { code: number; stdout: string; stderr: string } {
  const argv = [...prefix, process.execPath, BIN, ...args];
  const r = spawnSync(argv[0], argv.slice(1), { env, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** The tables of namespace `ns`, as `family name`. */
function tablesIn(ns: string): string[] {
  const j = JSON.parse(execFileSync(IP, ['netns', 'exec', ns, NFT, '-j', 'list', 'tables'], { encoding: 'utf8' })) as {
    nftables: Array<{ table?: { family: string; name: string } }>;
  };
  return j.nftables.flatMap((o) => (o.table ? [`${o.table.family} ${o.table.name}`] : [])).sort();
}

/** Whether ADDR is on lo in `ns`. */
function addrIn(ns: string): boolean {
  const j = JSON.parse(execFileSync(IP, ['-n', ns, '-j', 'addr', 'show', 'dev', 'lo'], { encoding: 'utf8' })) as Array<{ addr_info: Array<{ local: string }> }>;
  return j[0].addr_info.some((a) => a.local === ADDR);
}

/** The queue numbers bound in `ns` (nfnetlink_queue's /proc file, first column). */
function queuesBoundIn(ns: string): string[] {
  const text = execFileSync(IP, ['netns', 'exec', ns, 'cat', '/proc/net/netfilter/nfnetlink_queue'], { encoding: 'utf8' });
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => l.trim().split(/\s+/)[0]);
}

/** The cookie of `ns`, as the kernel gives it to python3's socket. */
function cookieOf(ns: string): string {
  const py = "import socket; s = socket.socket(); print(int.from_bytes(s.getsockopt(socket.SOL_SOCKET, 71, 8), 'little'))";
  return execFileSync(IP, ['netns', 'exec', ns, 'python3', '-c', py], { encoding: 'utf8' }).trim();
}

const parse = (s: string): Json | undefined => parseJson<Json>(s);

const scenarios = {
  /** A record of a namespace that is gone: refused, with how to reuse the state directory; removed as told, it is free. */
  async gone() {
    const dir = mkdtempSync(join(tmpdir(), 'sp-nsgone-'));
    const env = { ...process.env, SYNPLUG_STATE_DIR: join(dir, 'state') };
    const ns = `spnr-g-${process.pid}`;
    execFileSync(IP, ['netns', 'add', ns]);
    execFileSync(IP, ['-n', ns, 'link', 'set', 'lo', 'up']);
    try {
      const setup = run(['ip', 'netns', 'exec', ns], ['setup', '--via', 'queue', '--addr', ADDR], env);
      execFileSync(IP, ['netns', 'delete', ns]);
      const check = run([], ['check'], env);
      const rm = /remove the record \('rm ([^']+)'\)/.exec(check.stderr)?.[1];
      if (rm) rmSync(rm);
      const after = run([], ['check'], env);
      return { setup: setup.code, check, rm, record: join(dir, 'state', 'setup.json'), after: after.code };
    } finally {
      spawnSync(IP, ['netns', 'delete', ns]);
      rmSync(dir, { recursive: true, force: true });
    }
  },

  /** One state directory (SYNPLUG_STATE_DIR) used from namespace X, then from another. */
  async shared() {
    const dir = mkdtempSync(join(tmpdir(), 'sp-nsrec-'));
    const env = { ...process.env, SYNPLUG_STATE_DIR: join(dir, 'state') };
    const ns = `spnr-a-${process.pid}`;
    execFileSync(IP, ['netns', 'add', ns]);
    execFileSync(IP, ['-n', ns, 'link', 'set', 'lo', 'up']);
    const inX = ['ip', 'netns', 'exec', ns];
    try {
      const setup = run(inX, ['setup', '--via', 'queue', '--addr', ADDR], env);
      const record = JSON.parse(readFileSync(join(dir, 'state', 'setup.json'), 'utf8')) as Json;
      const fromOther = run(['unshare', '-n'], ['teardown'], env);
      const statusOther = run(['unshare', '-n'], ['status'], env);
      const setupOther = run(['unshare', '-n'], ['setup', '--via', 'queue', '--addr', ADDR], env);
      const after = { tables: tablesIn(ns), addr: addrIn(ns), record: existsSync(join(dir, 'state', 'setup.json')) };
      const checkX = run(inX, ['check', '--json'], env);
      // a manual plug and release in X: its history; the other namespace's is not X's
      const plugX = run(inX, ['plug', '--max-hold', '30s'], env);
      // a release from the other namespace while X holds: refused before anything is sent; X's queue stays bound
      const releaseOther = run(['unshare', '-n'], ['release'], env);
      const boundX = queuesBoundIn(ns);
      const releaseX = run(inX, ['release'], env);
      const historyX = parse(run(inX, ['history', '--json'], env).stdout);
      const historyOther = run(['unshare', '-n'], ['history', '--json'], env);
      const downX = run(inX, ['teardown'], env);
      return {
        setup: setup.code,
        cookie: cookieOf(ns),
        ns,
        dir,
        recordNetns: record.netns,
        fromOther,
        statusOther,
        setupOther,
        after,
        checkX: { code: checkX.code, state: parse(checkX.stdout)?.state },
        plugX: [plugX.code, releaseX.code],
        releaseOther,
        boundX,
        boundAfterX: queuesBoundIn(ns),
        historyX: (historyX as Json[] | undefined)?.map((e) => e.command),
        historyOther: { code: historyOther.code, json: parse(historyOther.stdout) },
        downX: downX.code,
        end: { tables: tablesIn(ns), addr: addrIn(ns) },
      };
    } finally {
      spawnSync(IP, ['netns', 'delete', ns]);
      rmSync(dir, { recursive: true, force: true });
    }
  },
  /** X's record with its `netns` field removed (as an edit would), then used from another namespace. */
  async stripped() {
    const dir = mkdtempSync(join(tmpdir(), 'sp-nsrec-'));
    const env = { ...process.env, SYNPLUG_STATE_DIR: join(dir, 'state') };
    const file = join(dir, 'state', 'setup.json');
    const ns = `spnr-b-${process.pid}`;
    execFileSync(IP, ['netns', 'add', ns]);
    execFileSync(IP, ['-n', ns, 'link', 'set', 'lo', 'up']);
    const inX = ['ip', 'netns', 'exec', ns];
    try {
      const setup = run(inX, ['setup', '--via', 'queue', '--addr', ADDR], env);
      const record = JSON.parse(readFileSync(file, 'utf8')) as Json;
      delete record.netns;
      writeFileSync(file, JSON.stringify(record));
      const statusOther = run(['unshare', '-n'], ['status'], env);
      const fromOther = run(['unshare', '-n'], ['teardown'], env);
      const inXToo = run(inX, ['teardown'], env);
      const after = { tables: tablesIn(ns), addr: addrIn(ns), record: readFileSync(file, 'utf8') === JSON.stringify(record) };
      return { setup: setup.code, statusOther, fromOther, inXToo, after };
    } finally {
      spawnSync(IP, ['netns', 'delete', ns]);
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');

  test('a record of a namespace that is gone: exit 6 saying so and which file to remove; removed, the state directory is free (check: nothing set up)', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'gone', 120_000);
    t.is(r.setup, 0);
    t.is(r.check.code, 6, r.check.stderr);
    t.regex(r.check.stderr, /one without a name in \/run\/netns, or one that is gone/);
    t.is(r.rm, r.record, 'the file named is the record');
    t.is(r.after, 1, 'nothing set up once the record is gone');
  });

  test("a command in another namespace than the record's refuses it (exit 6, naming that namespace); the record and the namespace's hold stay", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'shared', 120_000);
    t.is(r.setup, 0);
    t.is(r.recordNetns, r.cookie, "the record names the namespace's cookie");
    for (const x of [r.fromOther, r.statusOther, r.setupOther, r.releaseOther]) {
      t.is(x.code, 6, x.stderr);
      t.regex(
        x.stderr,
        new RegExp(`records the holds of network namespace ${r.ns} \\(cookie ${r.cookie}\\), not of the network namespace this command acts in`),
      );
      t.regex(x.stderr, new RegExp(`run 'synplug <command> --netns ${r.ns}' \\(or 'ip netns exec ${r.ns} synplug <command>'\\)`));
      t.notRegex(x.stderr, /If that namespace is gone/, 'a namespace that exists is not called gone');
    }
    t.deepEqual(r.after, { tables: ['inet synplug_queue'], addr: true, record: true }, "nothing of X's was touched or forgotten");
    t.deepEqual(r.checkX, { code: 0, state: 'ok' });
    // release refuses the record before anything is sent (it had looked for a plug qdisc in its own namespace first)
    t.true(r.releaseOther.stderr.startsWith(`synplug: ${r.dir}/state/setup.json records the holds of network namespace ${r.ns}`), r.releaseOther.stderr);
    t.notRegex(r.releaseOther.stderr, /plug qdisc|nothing was held|released/);
    t.deepEqual(r.boundX, ['4200'], "X's manual plug still holds its queue after the other namespace's release");
    t.deepEqual(r.boundAfterX, [], "X's own release lets it go");
    t.deepEqual(r.plugX, [0, 0]);
    t.deepEqual(r.historyX, ['plug', 'release']);
    t.deepEqual(r.historyOther, { code: 0, json: [] }, "X's reloads are not the other namespace's history");
    t.is(r.downX, 0);
    t.deepEqual(r.end, { tables: [], addr: false });
  });

  test("regression: a setup.json without 'netns' was read from any namespace (teardown there removed its own address); now refused with exit 6 everywhere, nothing changed", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'stripped', 120_000);
    t.is(r.setup, 0);
    for (const x of [r.statusOther, r.fromOther, r.inXToo]) {
      t.is(x.code, 6, x.stdout + x.stderr);
      t.regex(x.stderr, /\/state\/setup\.json has no 'netns' field .* nothing was changed\. Remove it/);
    }
    t.deepEqual(r.after, { tables: ['inet synplug_queue'], addr: true, record: true }, "X's hold and the record stay");
  });
}
