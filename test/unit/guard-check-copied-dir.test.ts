/**
 * rv19's MINOR: with a copy of a state directory's records (`cp -a A B`),
 * `check --state-dir B` advised `synplug setup ...` "to complete it", and
 * that setup is then refused (exit 7: the pieces carry A's mark). Now check
 * says the hold's pieces are another state directory's, with what to do
 * instead, and gives no setup advice for that hold. The kernel is the double
 * (test/helpers/fake-kernel.ts).
 */
import test from 'ava';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as guard from '../../src/guard/index.js';
import { formatCheck } from '../../src/cli/format-guard.js';
import { FakeKernel } from '../helpers/fake-kernel.js';

test("check through a copied state directory: no setup advice that setup then refuses; it names the other directory's mark", async (t) => {
  const kernel = new FakeKernel();
  const undo = kernel.install();
  const base = mkdtempSync(join(tmpdir(), 'synplug-copied-'));
  try {
    const [a, b] = [join(base, 'a'), join(base, 'b')];
    await guard.setup({ stateDir: a, via: 'queue', addr: '169.254.46.13' });
    mkdirSync(b, { mode: 0o700 });
    copyFileSync(join(a, 'setup.json'), join(b, 'setup.json'));
    const r = await guard.check({ stateDir: b });
    t.is(r.state, 'partial');
    t.regex(
      r.holds[0]?.elsewhere ?? '',
      /^its pieces are another state directory's \(the table's comment names queue 4200 and state directory mark [0-9a-f]{16}; this directory's is [0-9a-f]{16}\): setup here is refused; use that directory's --state-dir for this hold/,
    );
    const text = formatCheck(r);
    t.notRegex(text, /run 'synplug setup/, text);
    t.regex(text, /local queue hold: its pieces are another state directory's/);
    // the advice it no longer gives: setup through the copy is refused
    const e = await guard.setup({ stateDir: b, via: 'queue', addr: '169.254.46.13' }).then(
      () => undefined,
      (x: unknown) => x as Error & { category?: string },
    );
    t.is(e?.category, 'foreign-state', String(e));
    // the directory of the setup: complete, no such sentence
    const own = await guard.check({ stateDir: a });
    t.is(own.state, 'ok');
    t.is(own.holds[0]?.elsewhere, undefined);
  } finally {
    undo();
    rmSync(base, { recursive: true, force: true });
  }
});
