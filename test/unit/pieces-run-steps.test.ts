/**
 * Setup's steps (src/guard/pieces.ts runSteps) and a signal: a setup that
 * got SIGINT between two steps left what the steps before had made (the
 * process ended there; issue #19, session-12 attack, MINOR). Now a signal
 * that arrived is seen before the next step: the steps taken are undone in
 * reverse order, no further step runs, and the error is `interrupted`
 * (exit 130 at the CLI). A failing step still rolls back as before.
 */
import test from 'ava';
import { runSteps } from '../../src/guard/pieces.js';
import { SetupError } from '../../src/guard/errors.js';
import { SynplugError } from '../../src/netlink/errors.js';
import type { SetupStep } from '../../src/guard/modes/types.js';

/** Three steps that log what they do and undo. */
function steps(log: string[], failAt?: string): SetupStep[] {
  return ['address', 'table', 'counters'].map((what) => ({
    what: `add ${what}`,
    run: async () => {
      if (what === failAt) throw new SynplugError(`${what} refused`, 'kernel');
      log.push(`+${what}`);
    },
    undo: { what: `removed ${what}`, run: async () => void log.push(`-${what}`) },
  }));
}

test('a signal that arrived after the first step: it is undone, the rest never run, and the error is interrupted', async (t) => {
  const log: string[] = [];
  let signal: string | undefined;
  const list = steps(log);
  const first = list[0].run;
  list[0].run = async () => {
    await first();
    signal = 'SIGINT'; // the signal arrives while the first step runs
  };
  const e = await t.throwsAsync(runSteps(list, () => signal));
  t.true(e instanceof SynplugError);
  t.is((e as SynplugError).category, 'interrupted');
  t.is(e?.message, "interrupted by SIGINT before 'add table': rolled back removed address; nothing was recorded");
  t.deepEqual(log, ['+address', '-address'], 'nothing is left half-applied');
});

test('a signal before the first step: nothing runs', async (t) => {
  const log: string[] = [];
  const e = await t.throwsAsync(runSteps(steps(log), () => 'SIGTERM'));
  t.is((e as SynplugError).category, 'interrupted');
  t.regex(e!.message, /nothing had been changed/);
  t.deepEqual(log, []);
});

test('no signal: every step runs; a failing step still undoes the steps before it (SetupError)', async (t) => {
  const log: string[] = [];
  await runSteps(steps(log), () => undefined);
  t.deepEqual(log, ['+address', '+table', '+counters']);
  const log2: string[] = [];
  const e = await t.throwsAsync(runSteps(steps(log2, 'counters')));
  t.true(e instanceof SetupError);
  t.deepEqual(log2, ['+address', '+table', '-table', '-address']);
});
