/**
 * Ctrl-C during `teardown` (SIGINT 0.15-0.45 s after it starts; a new user's
 * check, issue 22): it exited 130 with no output, having removed everything,
 * nothing, or (once) printed "removed …" and still exited 130. Now teardown
 * catches the signals while it runs: stopped before it changed anything, one
 * line "interrupted … nothing was removed" and exit 130, the hold intact;
 * else it finishes, says what it removed and exits 0. Its own namespace, a
 * veth pair, a bounded number of rounds.
 */
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';
import { BIN, IP, stateEnv, synplug } from '../helpers/queue-live.js';
import { StateStore } from '../../src/guard/state.js';
import { setup } from '../../src/guard/setup.js';
import { teardown } from '../../src/guard/holds.js';
import { withLeaseLock } from '../../src/guard/leases.js';

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_TEARDOWN_SIGNAL_SCENARIO';
// from 150 ms: before that node is still loading the bundle, and a signal ends it with its default action (nothing changed)
const DELAYS_MS = [150, 200, 250, 300, 350, 450];

const scenarios = {
  async sigint() {
    const { dir, env } = stateEnv();
    execFileSync(IP, ['link', 'add', 'sp-ts0', 'type', 'veth', 'peer', 'name', 'sp-ts1']);
    execFileSync(IP, ['link', 'set', 'sp-ts0', 'up']);
    const rounds = [];
    for (const delay of DELAYS_MS) {
      const set = synplug(['setup', '--inbound', 'sp-ts0', '--port', '8080'], env);
      const td = await new Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>((resolve) => {
        const p = spawn(process.execPath, [BIN, 'teardown'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        p.stdout.on('data', (d) => (stdout += d));
        p.stderr.on('data', (d) => (stderr += d));
        const timer = setTimeout(() => p.kill('SIGINT'), delay);
        p.on('close', (code, signal) => {
          clearTimeout(timer);
          resolve({ code, signal, stdout, stderr });
        });
      });
      const recorded = existsSync(join(dir, 'state', 'setup.json'));
      const check = synplug(['check'], env);
      rounds.push({ delay, set: set.code, td, recorded, check: check.code });
      synplug(['teardown'], env);
    }
    return rounds;
  },
  // The signal while teardown waits for the directory's lock (another synplug holds it here): before any change.
  async early() {
    const { dir } = stateEnv();
    const stateDir = join(dir, 'state');
    await setup({ via: 'queue', addr: '169.254.79.2', stateDir });
    let unlock = () => {};
    const held = new Promise<void>((r) => {
      unlock = r;
    });
    const holding = withLeaseLock(new StateStore(stateDir), () => held);
    await new Promise((r) => setTimeout(r, 20));
    const td = teardown({ stateDir }).then(
      () => undefined,
      (e: Error & { signal?: string }) => ({ name: e.name, message: e.message, signal: e.signal }),
    );
    process.kill(process.pid, 'SIGINT');
    await new Promise((r) => setTimeout(r, 200));
    unlock();
    await holding;
    const error = await td;
    const recorded = existsSync(join(stateDir, 'setup.json'));
    const after = await teardown({ stateDir });
    return { error, recorded, removedAfter: after.removed.length };
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');

  test('SIGINT during teardown: it finishes and says what it removed (exit 0), or, stopped before any change, says nothing was removed (exit 130) with the hold intact', (t) => {
    // biome-ignore lint/suspicious/noExplicitAny: the scenario's JSON, asserted field by field
    const rounds = inOwnNetns<any[]>(SELF, ENV, 'sigint', 240_000);
    t.is(rounds.length, DELAYS_MS.length);
    for (const r of rounds) {
      const what = JSON.stringify(r);
      t.is(r.set, 0, what);
      if (r.td.signal !== null) {
        // the signal's default action while node still loads the bundle (no synplug code ran yet): nothing changed
        t.is(r.td.signal, 'SIGINT', what);
        t.true(r.recorded, what);
        t.is(r.check, 0, what);
      } else if (r.td.code === 0) {
        t.regex(r.td.stdout, /^removed /m, what);
        t.false(r.recorded, what);
        t.is(r.check, 1, what); // nothing set up
      } else {
        t.is(r.td.code, 130, what);
        t.is(r.td.stdout, '', what);
        t.regex(r.td.stderr, /^synplug: interrupted by SIGINT before teardown removed anything: nothing was removed\n$/, what);
        t.true(r.recorded, what);
        t.is(r.check, 0, what); // the hold intact
      }
    }
  });

  test('a signal while teardown waits for the lock, before any change: InterruptedError "nothing was removed", the hold intact (a teardown after removes it)', (t) => {
    // biome-ignore lint/suspicious/noExplicitAny: the scenario's JSON, asserted field by field
    const r = inOwnNetns<any>(SELF, ENV, 'early', 120_000);
    t.deepEqual(r.error, {
      name: 'InterruptedError',
      message: 'interrupted by SIGINT before teardown removed anything: nothing was removed',
      signal: 'SIGINT',
    });
    t.true(r.recorded);
    t.true(r.removedAfter > 0);
  });
}
