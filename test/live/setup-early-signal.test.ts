/**
 * Ctrl-C to `setup` before its steps (a new user's check, issue 22: before
 * 0.7 s it exited 130 silently). Now a signal during phase one, or while
 * setup waits for the directory's lock, stops it before its first step with
 * one line "interrupted … nothing was set up" (an InterruptedError: exit 130
 * at the CLI). Here the signal comes while another holder keeps the lock.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';
import { StateStore } from '../../src/guard/state.js';
import { check, setup } from '../../src/guard/setup.js';
import { withLeaseLock } from '../../src/guard/leases.js';

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_SETUP_EARLY_SIGNAL_SCENARIO';

const scenarios = {
  async waiting() {
    const stateDir = join(mkdtempSync(join(tmpdir(), 'sp-setup-early-')), 'state');
    const store = new StateStore(stateDir);
    let unlock = () => {};
    const held = new Promise<void>((r) => {
      unlock = r;
    });
    const holding = withLeaseLock(store, () => held);
    await new Promise((r) => setTimeout(r, 20));
    const run = setup({ via: 'queue', addr: '169.254.79.3', stateDir }).then(
      () => undefined,
      (e: Error & { signal?: string }) => ({ name: e.name, message: e.message, signal: e.signal }),
    );
    process.kill(process.pid, 'SIGINT');
    await new Promise((r) => setTimeout(r, 300));
    unlock();
    await holding;
    const error = await run;
    const recorded = existsSync(join(stateDir, 'setup.json'));
    const c = await check({ stateDir });
    return { error, recorded, state: c.state };
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');

  test('a signal before setup’s first step (waiting for the lock): InterruptedError "nothing was set up"; nothing recorded or made', (t) => {
    // biome-ignore lint/suspicious/noExplicitAny: the scenario's JSON, asserted field by field
    const r = inOwnNetns<any>(SELF, ENV, 'waiting', 120_000);
    t.deepEqual(r.error, { name: 'InterruptedError', message: "interrupted by SIGINT before setup's first step: nothing was set up", signal: 'SIGINT' });
    t.false(r.recorded);
    t.is(r.state, 'absent');
  });
}
