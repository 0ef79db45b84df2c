/**
 * protect stopped while it starts (a new user's check, issue 22): SIGTERM
 * 0.6-1.2 s after the start, SIGKILL, Ctrl-C. The watchdog, started first,
 * wrote `ready` to a parent already gone and died of the EPIPE with an
 * "Unhandled 'error' event" and a Node stack trace; protect exited 143 with
 * no word. Now: the watchdog takes a closed pipe as its parent gone (no
 * trace), and protect stopped by SIGTERM/SIGINT before its command says in
 * one line what it did, exiting 143/130; nothing stays held.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';
import { BIN, stateEnv, synplug } from '../helpers/queue-live.js';

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_PROTECT_EARLY_SIGNAL_SCENARIO';

/** Run protect, send `sig` after `ms`, read its stderr (the watchdog's too: it inherits it) until every writer closed it. */
function stopped(
  env: NodeJS.ProcessEnv,
  args: string[],
  sig: NodeJS.Signals,
  ms: number,
): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [BIN, 'protect', ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    let exit: { code: number | null; signal: string | null } | undefined;
    p.stderr.on('data', (d: Buffer) => {
      stderr += d.toString('utf8');
    });
    p.on('exit', (code, signal) => {
      exit = { code, signal };
    });
    // 'close': protect and its watchdog both closed stderr (the watchdog outlives a SIGKILLed protect)
    p.on('close', () => resolve({ ...exit!, stderr }));
    setTimeout(() => p.kill(sig), ms);
  });
}

const scenarios = {
  async stops() {
    const { env } = stateEnv();
    const setup = synplug(['setup', '--via', 'queue'], env);
    const runs: Array<{ sig: string; ms: number; code: number | null; signal: string | null; stderr: string }> = [];
    for (const ms of [100, 200, 300, 400, 500, 600, 800, 1000, 1200]) {
      for (const sig of ['SIGKILL', 'SIGTERM'] as const) runs.push({ sig, ms, ...(await stopped(env, ['--', 'sleep', '2'], sig, ms)) });
    }
    // during the --check command (deterministic: the check runs for seconds), SIGINT and SIGTERM
    const during = [];
    for (const sig of ['SIGINT', 'SIGTERM'] as const) during.push({ sig, ...(await stopped(env, ['--check', 'sleep 20', '--', 'true'], sig, 2500)) });
    const status = synplug(['status', '--json'], env);
    const down = synplug(['teardown'], env);
    return { setup: setup.code, runs, during, status: JSON.parse(status.stdout) as unknown, teardown: down.code };
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');

  test('protect stopped while it starts: no watchdog EPIPE trace; SIGTERM/SIGINT say what was done in one line, exit 143/130; nothing held', (t) => {
    // biome-ignore lint/suspicious/noExplicitAny: the scenario's JSON, asserted field by field
    const r = inOwnNetns<any>(SELF, ENV, 'stops', 240_000);
    t.is(r.setup, 0);
    for (const run of r.runs) {
      const what = `${run.sig} at ${run.ms} ms: ${run.stderr}`;
      t.notRegex(run.stderr, /EPIPE|Unhandled 'error' event|node:events|\n {4}at /, what);
      if (run.sig === 'SIGKILL') {
        t.is(run.signal, 'SIGKILL', what);
        continue;
      }
      // before node runs protect's code the default disposition ends it (143, silent); after the command started,
      // the command's own death by the forwarded SIGTERM (143, its report); between, the one line
      t.true(run.code === 143 || run.signal === 'SIGTERM', what);
      const lines = run.stderr.split('\n').filter((l: string) => l.includes('interrupted'));
      if (lines.length) t.deepEqual(lines, ['synplug: interrupted by SIGTERM before the command started: nothing was held; the command was NOT run'], what);
    }
    t.true(
      r.runs.some((x: { stderr: string }) => x.stderr.includes('interrupted by SIGTERM before the command started')),
      'at least one SIGTERM landed in phase one',
    );
    t.deepEqual(
      r.during.map((d: { sig: string; code: number; stderr: string }) => [d.sig, d.code, d.stderr.trim()]),
      [
        ['SIGINT', 130, 'synplug: interrupted by SIGINT during the --check command: nothing was held; the command was NOT run'],
        ['SIGTERM', 143, 'synplug: interrupted by SIGTERM during the --check command: nothing was held; the command was NOT run'],
      ],
    );
    t.is(r.status.plug?.state, 'released', JSON.stringify(r.status.plug));
    t.deepEqual(r.status.leases, [], 'no protect holds');
    t.is(r.teardown, 0);
  });
}
