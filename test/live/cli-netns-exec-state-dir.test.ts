/**
 * Live, this machine's kernel: synplug run inside a named network namespace
 * (`ip netns exec NS synplug ...`, the built CLI) keeps its records in NS's
 * own default state directory, `/run/synplug/netns/<NS's cookie>`, the one
 * `synplug --netns NS` uses from outside; it had used /run/synplug, so two
 * namespaces' holds shared one record directory (issue #22, F2).
 *
 * The scenario runs in a network namespace and a mount namespace of its own
 * with an empty /run (a tmpfs), so that the state directories it sees are
 * its own only: on this machine `/proc/1/ns/net` cannot be read (EACCES),
 * and the namespace is told by its name under /run/netns. It sets up the
 * queue hold (this kernel has no sch_plug) in NS, checks it, reports its
 * status (meanwhile a second namespace sets up and tears down its own hold,
 * in its own directory), plugs (the queue holder's socket lands in NS's directory) and
 * releases it, runs a protected reload, reads its history, and tears it down, every command under
 * `ip netns exec NS`; `synplug status --netns NS` from outside finds the same
 * record; this namespace's /run/synplug holds nothing but NS's directory.
 *
 * Oracles: NS's cookie read by python3 (getsockopt SO_NETNS_COOKIE in NS),
 * the files on disk, `nft -j list tables` in NS.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cookieOf } from '../helpers/netns-cookie.js';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';
import { BIN, IP, parseJson } from '../helpers/queue-live.js';

// biome-ignore lint/suspicious/noExplicitAny: the scenario's JSON results, asserted field by field
type Json = Record<string, any>;

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_NETNS_EXEC_STATE_DIR_SCENARIO';
const NFT = '/usr/sbin/nft';
const ADDR = '169.254.87.1';
const ROOT = '/run/synplug';

/** Every path under `dir`, relative, sorted (none when it does not exist). */
function tree(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const name of readdirSync(join(dir, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      out.push(r);
      if (statSync(join(dir, r)).isDirectory()) walk(r);
    }
  };
  walk('');
  return out;
}

/** The tables of namespace `ns`, as `family name`. */
function tablesIn(ns: string): string[] {
  const j = JSON.parse(execFileSync(IP, ['netns', 'exec', ns, NFT, '-j', 'list', 'tables'], { encoding: 'utf8' })) as {
    nftables: Array<{ table?: { family: string; name: string } }>;
  };
  return j.nftables.flatMap((o) => (o.table ? [`${o.table.family} ${o.table.name}`] : [])).sort();
}

const scenarios = {
  async exec() {
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.SYNPLUG_STATE_DIR;
    delete env.SYNPLUG_NETNS;
    const run = (prefix: string[], args: string[]) => {
      const argv = [...prefix, process.execPath, BIN, ...args];
      const r = spawnSync(argv[0], argv.slice(1), { env, encoding: 'utf8', timeout: 60_000 });
      return { code: r.status ?? -1, json: parseJson<Json>(r.stdout), stderr: r.stderr };
    };
    const ns = `spxs-${process.pid}`;
    const inNs = [IP, 'netns', 'exec', ns];
    const before = tree(ROOT);
    execFileSync(IP, ['netns', 'add', ns]);
    execFileSync(IP, ['-n', ns, 'link', 'set', 'lo', 'up']);
    try {
      const cookie = cookieOf(ns);
      const dir = `${ROOT}/netns/${cookie}`;
      const setup = run(inNs, ['setup', '--via', 'queue', '--addr', ADDR, '--json']);
      const afterSetup = tree(ROOT);
      const record = JSON.parse(readFileSync(join(dir, 'setup.json'), 'utf8')) as Json;
      // A second named namespace set up meanwhile: its own directory; neither record is refused or replaced.
      const ns2 = `${ns}-b`;
      execFileSync(IP, ['netns', 'add', ns2]);
      let second: Json;
      try {
        execFileSync(IP, ['-n', ns2, 'link', 'set', 'lo', 'up']);
        const cookie2 = cookieOf(ns2);
        const setup2 = run([IP, 'netns', 'exec', ns2], ['setup', '--via', 'queue', '--addr', ADDR, '--json']);
        const record2 = JSON.parse(readFileSync(`${ROOT}/netns/${cookie2}/setup.json`, 'utf8')) as Json;
        const teardown2 = run([IP, 'netns', 'exec', ns2], ['teardown', '--json']);
        second = { cookie: cookie2, setup: setup2.code, recordNetns: record2.netns, teardown: teardown2.code };
      } finally {
        spawnSync(IP, ['netns', 'delete', ns2]);
      }
      const check = run(inNs, ['check', '--json']);
      const status = run(inNs, ['status', '--json']);
      const outside = run([], ['status', '--netns', ns, '--json']);
      const here = run([], ['status', '--json']);
      const plug = run(inNs, ['plug', '--max-hold', '30s', '--json']);
      const plugged = tree(ROOT);
      const release = run(inNs, ['release', '--json']);
      const protect = run(inNs, ['protect', '--max-hold', '5s', '--', 'true']);
      const history = run(inNs, ['history', '--json']);
      const historyOutside = run([], ['history', '--netns', ns, '--json']);
      const teardown = run(inNs, ['teardown', '--json']);
      return {
        ns,
        cookie,
        before,
        setup,
        afterSetup,
        recordNetns: record.netns,
        recordHolds: Object.keys(record.holds ?? {}),
        second,
        check,
        status,
        outside,
        here,
        plug: plug.code,
        plugged,
        release: release.code,
        protect: { code: protect.code, stderr: protect.stderr },
        history,
        historyOutside,
        teardown,
        afterTeardown: tree(ROOT),
        tables: tablesIn(ns),
      };
    } finally {
      spawnSync(IP, ['netns', 'delete', ns]);
    }
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');

  test.before(() => {
    if (!existsSync(BIN)) throw new Error(`${BIN} missing: run npm run build first`);
  });

  test("ip netns exec NS synplug setup/check/status/plug/release/protect/history/teardown use NS's /run/synplug/netns/<cookie>, as --netns NS does; /run/synplug itself is untouched", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'exec', 180_000, { privateRun: true });
    const mine = `netns/${r.cookie}`;
    t.deepEqual(r.before, [], 'an empty /run to start from');
    t.is(r.setup.code, 0, r.setup.stderr);
    // Only NS's directory: no setup.json, lock or history of /run/synplug's own.
    t.true(r.afterSetup.includes(`${mine}/setup.json`), r.afterSetup.join(' '));
    t.deepEqual(
      r.afterSetup.filter((p: string) => p !== 'netns' && p !== mine && !p.startsWith(`${mine}/`)),
      [],
      'nothing in /run/synplug outside NS’s directory',
    );
    t.is(r.recordNetns, r.cookie, "the record names NS's cookie");
    t.deepEqual(r.recordHolds, ['queue']);
    t.not(r.second.cookie, r.cookie);
    t.deepEqual(
      { setup: r.second.setup, recordNetns: r.second.recordNetns, teardown: r.second.teardown },
      { setup: 0, recordNetns: r.second.cookie, teardown: 0 },
      'a second namespace under ip netns exec sets up and tears down in its own directory (it had shared /run/synplug: exit 6)',
    );
    t.is(r.check.code, 0, r.check.stderr);
    t.is(r.check.json?.state, 'ok');
    t.is(r.status.code, 0, r.status.stderr);
    // From outside, --netns NS reads the same directory: the same hold, the same state.
    t.is(r.outside.code, 0, r.outside.stderr);
    // (its sysctl report names the namespace --netns named: the one difference)
    t.is(r.outside.json?.sysctl?.netns, r.ns);
    const { netns: _n, ...sysctlOutside } = r.outside.json?.sysctl ?? {};
    t.deepEqual({ ...r.outside.json, sysctl: sysctlOutside }, r.status.json, 'status --netns NS from outside is the status under ip netns exec NS');
    // This namespace's own default directory records nothing.
    t.is(r.here.json?.state, 'absent', JSON.stringify(r.here));
    // The queue holder's socket is in NS's directory, next to its record.
    t.is(r.plug, 0);
    t.true(r.plugged.includes(`${mine}/queue-4200.sock`), r.plugged.join(' '));
    t.deepEqual(
      r.plugged.filter((p: string) => p !== 'netns' && p !== mine && !p.startsWith(`${mine}/`)),
      [],
      "the holder's files are NS's too",
    );
    t.is(r.release, 0);
    t.is(r.protect.code, 0, r.protect.stderr);
    t.deepEqual(
      (r.history.json as Json[]).map((e) => e.command),
      ['plug', 'release', 'protect'],
      "the reloads are NS's history",
    );
    t.deepEqual(r.historyOutside.json, r.history.json, 'history --netns NS from outside is the same history');
    t.is(r.teardown.code, 0, r.teardown.stderr);
    t.false(r.afterTeardown.includes(`${mine}/setup.json`));
    t.false(r.afterTeardown.includes('setup.json'));
    t.deepEqual(r.tables, [], "teardown removed NS's tables");
  });
}
