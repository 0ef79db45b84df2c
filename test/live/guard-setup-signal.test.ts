/**
 * Live, this machine's kernel (the queue hold): a signal that arrives after
 * setup's last step (issue #19, the attack's MINOR). Setup caught SIGINT,
 * SIGTERM, SIGHUP and SIGQUIT only while its steps ran; one arriving just
 * after the last step, before the record was written, ended the process
 * (exit 130) with every step taken. Now the signals stay caught until the
 * record is written: the setup is complete, recorded and reported so.
 *
 * The signal is sent from inside the record's write (StateStore.writeSetup,
 * wrapped in the scenario's process): the moment after the last step.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';
import { StateStore } from '../../src/guard/state.js';
import { setup, check } from '../../src/guard/setup.js';
import { teardown } from '../../src/guard/holds.js';

// biome-ignore lint/suspicious/noExplicitAny: the scenario's JSON result, asserted field by field
type Json = Record<string, any>;

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_GUARD_SETUP_SIGNAL_SCENARIO';

const scenarios = {
  async 'after-last-step'() {
    const stateDir = join(mkdtempSync(join(tmpdir(), 'sp-setup-signal-')), 'state');
    const write = StateStore.prototype.writeSetup;
    let sent = 0;
    StateStore.prototype.writeSetup = function (this: StateStore, ...args: Parameters<typeof write>) {
      if (sent++ === 0) process.kill(process.pid, 'SIGINT'); // every step taken, nothing recorded yet
      return write.apply(this, args);
    };
    const r = await setup({ via: 'queue', addr: '169.254.79.1', stateDir });
    StateStore.prototype.writeSetup = write;
    // the caught signal's listener has run by now (a turn of the event loop)
    await new Promise((done) => setTimeout(done, 50));
    const c = await check({ stateDir });
    const down = await teardown({ stateDir });
    return { sent, changed: r.changed, hold: r.hold, check: c.state, down: down.removed.length > 0 };
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');

  test("a SIGINT just after setup's last step: the setup is complete, recorded and returned (it ended the process, exit 130)", (t) => {
    // (on the code of before, the scenario's process died by the signal and this threw)
    const r = inOwnNetns<Json>(SELF, ENV, 'after-last-step', 60_000);
    t.is(r.sent, 1, 'the signal was sent, after the last step');
    t.true(r.changed);
    t.is(r.hold, 'queue');
    t.is(r.check, 'ok', 'recorded, whole');
    t.true(r.down);
  });
}
