/**
 * The queue hold holds the address its record names: an --addr it does not
 * hold is refused as the local plug hold refuses one (`plug`, `protect`,
 * `release`, `teardown`: not set up, exit 8; `check`: that address missing,
 * exit 12; `status`: `addrNotHeld`, partial), naming what is set up, and
 * nothing is changed. Before, the queue hold ignored it: `protect --addr
 * 169.254.9.9` held 169.254.255.254 and `check --addr 169.254.9.9` said ok
 * (and later status, release and teardown still ignored it). The kernel is the double (test/helpers/fake-kernel.ts).
 */
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as guard from '../../src/guard/index.js';
import { NotSetUpError } from '../../src/guard/errors.js';
import { CATEGORY_EXIT_CODES, CHECK_PARTIAL } from '../../src/cli/exit-codes.js';
import { FakeKernel } from '../helpers/fake-kernel.js';

/** A local queue hold set up on the double for 169.254.46.8, then `f`; the kernel's state before and after `f`. */
async function withQueueHold(f: (stateDir: string) => Promise<void>): Promise<{ before: string; after: string }> {
  const kernel = new FakeKernel();
  const undo = kernel.install();
  const base = mkdtempSync(join(tmpdir(), 'synplug-qaddr-'));
  const stateDir = join(base, 'state');
  const snap = () => JSON.stringify(kernel.state, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  try {
    await guard.setup({ stateDir, via: 'queue', addr: '169.254.46.8' });
    const before = snap();
    await f(stateDir);
    return { before, after: snap() };
  } finally {
    undo();
    rmSync(base, { recursive: true, force: true });
  }
}

const NAMES_SETUP = /--addr 169\.254\.9\.9: no hold set up here holds it \(set up: queue: via queue for 169\.254\.46\.8\)/;

test.serial('regression: protect --addr with an address the queue hold does not hold is refused (exit 8), the command NOT run', async (t) => {
  const r = await withQueueHold(async (stateDir) => {
    const e = await t.throwsAsync(guard.protect({ stateDir, addr: '169.254.9.9', command: ['true'] }));
    t.true(e instanceof NotSetUpError, String(e));
    t.is(CATEGORY_EXIT_CODES[(e as NotSetUpError).category], 8);
    t.regex(e!.message, NAMES_SETUP);
    t.regex(e!.message, /The command was NOT run$/);
  });
  t.is(r.after, r.before, 'nothing was changed');
});

test.serial('regression: plug --addr with an address the queue hold does not hold is refused (exit 8), nothing held', async (t) => {
  const r = await withQueueHold(async (stateDir) => {
    const e = await t.throwsAsync(guard.plug({ stateDir, addr: '169.254.9.9', maxHoldMs: 1000 }));
    t.true(e instanceof NotSetUpError, String(e));
    t.regex(e!.message, NAMES_SETUP);
    t.regex(e!.message, /Nothing was held$/);
  });
  t.is(r.after, r.before, 'nothing was changed');
});

test.serial('regression: check --addr with an address the queue hold does not hold is partial (exit 12), the address missing', async (t) => {
  await withQueueHold(async (stateDir) => {
    const held = await guard.check({ stateDir, addr: '169.254.46.8' });
    t.is(held.state, 'ok', 'the address it holds, given as --addr: ok');
    t.false(held.pieces.some((p) => p.status !== 'ok'));
    const r = await guard.check({ stateDir, addr: '169.254.9.9' });
    t.is(r.state, 'partial');
    t.is(CHECK_PARTIAL, 12);
    const missing = r.pieces.filter((p) => p.status !== 'ok');
    t.is(missing.length, 1);
    t.is(missing[0].piece, 'address 169.254.9.9');
    t.is(missing[0].status, 'missing');
    t.regex(missing[0].detail ?? '', NAMES_SETUP);
  });
});

for (const [what, act, notDone] of [
  ['release', (stateDir: string) => guard.release({ stateDir, addr: '169.254.9.9' }), /Nothing was released$/],
  ['teardown', (stateDir: string) => guard.teardown({ stateDir, addr: '169.254.9.9' }), /Nothing was removed$/],
] as const) {
  test.serial(
    `regression: ${what} --addr with an address the queue hold does not hold is refused as plug refuses it (exit 8), nothing changed (it was ignored)`,
    async (t) => {
      const r = await withQueueHold(async (stateDir) => {
        const e = await t.throwsAsync(act(stateDir));
        t.true(e instanceof NotSetUpError, String(e));
        t.is(CATEGORY_EXIT_CODES[(e as NotSetUpError).category], 8);
        t.regex(e!.message, NAMES_SETUP);
        t.regex(e!.message, notDone);
      });
      t.is(r.after, r.before, 'nothing was changed');
    },
  );
}

test.serial(
  'regression: status --addr with an address the queue hold does not hold says so, partial, as check does (it was ignored); the held address is ok',
  async (t) => {
    const r = await withQueueHold(async (stateDir) => {
      const held = await guard.status({ stateDir, addr: '169.254.46.8' });
      t.is(held.state, 'ok');
      t.is(held.addrNotHeld, undefined);
      const s = await guard.status({ stateDir, addr: '169.254.9.9' });
      t.is(s.state, 'partial');
      t.regex(s.addrNotHeld ?? '', NAMES_SETUP);
      const c = await guard.check({ stateDir, addr: '169.254.9.9' });
      t.is(s.addrNotHeld, c.pieces.find((p) => p.status === 'missing')?.detail, "check's words");
      t.deepEqual(
        s.holds.map((h) => h.state),
        ['ok'],
        'the hold itself is whole',
      );
    });
    t.is(r.after, r.before, 'nothing was changed');
  },
);
