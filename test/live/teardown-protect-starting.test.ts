/**
 * `teardown --inbound DEV` 0-0.3 s after `protect --wait-listen 8080
 * --max-hold 2s -- touch ran` starts (a new user's check, issue 22): teardown
 * removed the hold before the protect took its lease, and the protect failed
 * with exit 3 "setup failed at step 'nftables: add chain …' … (ENOENT)",
 * not saying that the command did not run. Now teardown removes under the
 * directory's lock, and a protect that finds its hold gone under that lock
 * says "a teardown removed … the command was NOT run" (exit 8, not set up);
 * or its lease came first and teardown refuses (exit 7). Its own namespace,
 * a veth pair, a bounded number of rounds.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';
import { IP, stateEnv, synplug, synplugAsync } from '../helpers/queue-live.js';

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_TEARDOWN_PROTECT_STARTING_SCENARIO';
const DELAYS_MS = [0, 100, 200, 250, 300, 400];

const run = synplugAsync;

const scenarios = {
  async starting() {
    const { dir, env } = stateEnv();
    execFileSync(IP, ['link', 'add', 'sp-tp0', 'type', 'veth', 'peer', 'name', 'sp-tp1']);
    execFileSync(IP, ['link', 'set', 'sp-tp0', 'up']);
    const rounds = [];
    for (const delay of DELAYS_MS) {
      const set = synplug(['setup', '--inbound', 'sp-tp0', '--port', '8080'], env);
      rmSync(join(dir, 'ran'), { force: true });
      const protect = run(['protect', '--wait-listen', '8080', '--max-hold', '2s', '--', 'touch', 'ran'], env, dir);
      await new Promise((r) => setTimeout(r, delay));
      const teardown = await run(['teardown', '--inbound', 'sp-tp0'], env, dir);
      const p = await protect;
      rounds.push({ delay, set: set.code, protect: p, teardown, ran: existsSync(join(dir, 'ran')) });
      synplug(['teardown'], env);
    }
    return rounds;
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');

  test('teardown while a protect starts: the protect never fails as a kernel error; a removed hold is said with the command NOT run (exit 8), or teardown refuses the held hold (exit 7)', (t) => {
    // biome-ignore lint/suspicious/noExplicitAny: the scenario's JSON, asserted field by field
    const rounds = inOwnNetns<any[]>(SELF, ENV, 'starting', 240_000);
    t.is(rounds.length, DELAYS_MS.length);
    for (const r of rounds) {
      const what = JSON.stringify(r);
      t.is(r.set, 0, what);
      t.not(r.protect.code, 3, what);
      t.notRegex(r.protect.stderr, /^synplug: setup failed at step/m, what);
      if (r.protect.stderr.includes('a teardown removed')) {
        t.is(r.protect.code, 8, what);
        t.regex(r.protect.stderr, /a teardown removed the queue:sp-tp0 hold while this protect started: nothing is held; the command was NOT run/, what);
        // one message about the one event: no lease-gone notice before it (it had taken no lease)
        t.notRegex(r.protect.stderr, /lease was (already gone|no longer recorded)/, what);
        t.false(r.ran, what);
        t.is(r.teardown.code, 0, what);
      } else if (r.teardown.code !== 0) {
        // the lease first: teardown of the held hold refused, the command ran
        t.is(r.teardown.code, 7, what);
        t.regex(r.teardown.stderr, /it is holding now/, what);
        t.true(r.ran, what);
      } else {
        // teardown first, before the protect read the record: not set up, nothing run
        t.true(r.protect.code === 8 || r.ran, what);
      }
    }
  });
}
