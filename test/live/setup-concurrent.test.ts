/**
 * Two setups of one state directory at once (a new user's check, issue 22):
 * `setup --inbound DEV --port 8080` and `... --port 8080 --port 8443` run
 * together both exited 0, and once the record kept 8080 while the second
 * said "port 8080,8443". Setups are now serialised on the directory's lock:
 * the second plans from the first's record and is refused ("changed port
 * set", exit 2), as when run one after the other. Its own namespace, a veth
 * pair, a bounded number of rounds.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';
import { IP, stateEnv, synplug, synplugAsync } from '../helpers/queue-live.js';

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_SETUP_CONCURRENT_SCENARIO';
const ROUNDS = 5;

const run = synplugAsync;

const scenarios = {
  async together() {
    const { dir, env } = stateEnv();
    execFileSync(IP, ['link', 'add', 'sp-cc0', 'type', 'veth', 'peer', 'name', 'sp-cc1']);
    execFileSync(IP, ['link', 'set', 'sp-cc0', 'up']);
    const rounds = [];
    for (let i = 0; i < ROUNDS; i++) {
      const one = ['setup', '--inbound', 'sp-cc0', '--port', '8080'];
      const two = ['setup', '--inbound', 'sp-cc0', '--port', '8080', '--port', '8443'];
      // alternate which one starts first
      const [a, b] = await Promise.all(i % 2 ? [run(one, env), run(two, env)] : [run(two, env), run(one, env)]).then((r) => (i % 2 ? r : [r[1], r[0]]));
      const record = JSON.parse(readFileSync(join(dir, 'state', 'setup.json'), 'utf8'));
      const check = synplug(['check', '--json'], env);
      const td = synplug(['teardown'], env);
      rounds.push({ one: a, two: b, record, check: { code: check.code, json: JSON.parse(check.stdout) }, teardown: td.code });
    }
    return rounds;
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');

  test('two setups of one state directory at once: exactly one succeeds, the other is refused (a changed port set); the record and the kernel say the winner', (t) => {
    // biome-ignore lint/suspicious/noExplicitAny: the scenario's JSON, asserted field by field
    const rounds = inOwnNetns<any[]>(SELF, ENV, 'together', 240_000);
    t.is(rounds.length, ROUNDS);
    for (const r of rounds) {
      const won = [r.one, r.two].filter((x) => x.code === 0);
      t.is(won.length, 1, JSON.stringify(r));
      const lost = r.one.code === 0 ? r.two : r.one;
      t.is(lost.code, 2, lost.stderr);
      t.regex(lost.stderr, /setup does not change what a set-up hold holds/);
      const ports = r.one.code === 0 ? [8080] : [8080, 8443];
      const holds = Object.values(r.record.holds) as Array<{ ports?: number[] }>;
      t.deepEqual(
        holds.map((h) => h.ports),
        [ports],
        JSON.stringify(r.record),
      );
      t.is(r.check.code, 0, JSON.stringify(r.check.json));
      t.is(r.teardown, 0);
    }
  });
}
