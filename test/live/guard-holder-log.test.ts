/**
 * Live, this machine's kernel (the queue hold): the queue holder process has
 * no terminal (detached, its stderr closed), so what goes wrong in it is kept
 * in holder.log in the state directory, and `status` names the last failure.
 * Here the holder of a manual plug finds leases.json damaged at its next
 * look at the leases: it releases (holding nothing is its safe side), and
 * says why in the log; `status` (text and --json) shows it. In a network
 * namespace of its own; the kernel's queue list is the oracle of the release.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';
import { QUEUE, procQueue, stateEnv, synplug, until } from '../helpers/queue-live.js';

// biome-ignore lint/suspicious/noExplicitAny: the scenario's JSON result, asserted field by field
type Json = Record<string, any>;

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_GUARD_HOLDER_LOG_SCENARIO';
const ADDR = '169.254.89.1';

const scenarios = {
  async 'damaged-leases'() {
    const { dir, env } = stateEnv();
    try {
      const state = join(dir, 'state');
      const set = synplug(['setup', '--via', 'queue', '--addr', ADDR], env);
      if (set.code !== 0) throw new Error(`setup: ${set.stderr}`);
      const before = synplug(['status', '--json'], env);
      const plug = synplug(['plug', '--max-hold', '120s'], env);
      const boundAfterPlug = procQueue(QUEUE) !== undefined;
      writeFileSync(join(state, 'leases.json'), 'not json\n');
      await until(() => procQueue(QUEUE) === undefined, 'the holder to let the queue go', 30_000);
      rmSync(join(state, 'leases.json'));
      const text = synplug(['status'], env);
      const json = synplug(['status', '--json'], env);
      synplug(['teardown'], env);
      return {
        before: JSON.parse(before.stdout).lastHolderFailure,
        plug: { code: plug.code, stderr: plug.stderr },
        boundAfterPlug,
        text: { code: text.code, stdout: text.stdout, stderr: text.stderr },
        json: { code: json.code, parsed: JSON.parse(json.stdout) },
        state,
      };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');

  test("the holder's failure (leases.json damaged while it holds) is in holder.log, and status names it", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'damaged-leases', 120_000);
    t.is(r.before, null, 'no failure recorded before');
    t.is(r.plug.code, 0, r.plug.stderr);
    t.true(r.boundAfterPlug);
    t.is(r.json.code, 0);
    const f = r.json.parsed.lastHolderFailure;
    t.is(f.queueNum, QUEUE);
    t.true(Number.isInteger(f.pid) && f.pid > 0);
    t.regex(f.message, /leases\.json is not valid JSON.*; releasing queue 4200$/);
    t.is(r.json.parsed.holderLog, join(r.state, 'holder.log'));
    t.is(r.text.code, 0, r.text.stderr);
    const line = r.text.stdout.split('\n').find((l: string) => l.startsWith('queue holder: last failure '));
    t.is(line, `queue holder: last failure ${f.at} (queue ${QUEUE}, pid ${f.pid}): ${f.message} (all of them: ${join(r.state, 'holder.log')})`);
  });
}
