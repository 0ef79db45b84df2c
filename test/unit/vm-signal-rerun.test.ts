/**
 * scripts/vm/ava-signal-rerun.sh, the kernel tier's answer to a test process
 * killed by a signal: such a file runs once more and both outcomes are
 * printed; a file that dies again fails; a failed assertion is never re-run,
 * and nor is a run with any other failure beside the death (a file without
 * tests, an early process.exit(), tests --fail-fast skipped).
 * Driven here with real ava runs of small test files that kill themselves
 * with SIGSEGV (files under .cache/, which git ignores).
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT = join(ROOT, 'scripts/vm/ava-signal-rerun.sh');
const AVA = join(ROOT, 'node_modules/.bin/ava');

function files(t: import('ava').ExecutionContext, contents: Record<string, string>): { dir: string; paths: string[] } {
  mkdirSync(join(ROOT, '.cache'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, '.cache/rerun-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const paths = Object.entries(contents).map(([name, body]) => {
    const p = join(dir, name);
    writeFileSync(p, `import test from 'ava';\nimport { existsSync, writeFileSync } from 'node:fs';\n${body}\n`);
    return p;
  });
  return { dir, paths };
}
const segv = "process.kill(process.pid, 'SIGSEGV');";
function rerun(paths: string[]) {
  const r = spawnSync('bash', [SCRIPT, AVA, '--timeout=2m', '--', ...paths], { cwd: ROOT, encoding: 'utf8', timeout: 170_000 });
  return { code: r.status, out: r.stdout };
}

test('a file killed by a signal once: re-run, both outcomes printed, its tests counted once, exit 0', (t) => {
  const { dir, paths } = files(t, {
    'dies-once.test.ts': `test('before', (t) => { t.pass(); });\ntest('dies the first time', async (t) => { await new Promise((r) => setTimeout(r, 100)); const m = new URL('./marker', import.meta.url).pathname; if (!existsSync(m)) { writeFileSync(m, ''); ${segv} } t.pass(); });`,
    'fine.test.ts': "test('fine', (t) => { t.pass(); });",
  });
  t.truthy(dir);
  const r = rerun(paths);
  t.is(r.code, 0, r.out);
  t.regex(r.out, /exited due to SIGSEGV/);
  t.regex(r.out, /^ava-signal-rerun: first run: 2 passed, 0 failed; killed by a signal: .*dies-once\.test\.ts$/m);
  t.regex(r.out, /^ava-signal-rerun: re-run of .*dies-once\.test\.ts: 2 passed, 0 failed \(exit 0\)$/m);
  t.regex(r.out, /^ava-signal-rerun: 3 passed, 0 failed$/m);
});

test('a file that dies again fails', (t) => {
  const { paths } = files(t, { 'dies.test.ts': `test('dies', async (t) => { await new Promise((r) => setTimeout(r, 100)); ${segv} t.pass(); });` });
  const r = rerun(paths);
  t.not(r.code, 0);
  t.regex(r.out, /^ava-signal-rerun: re-run of .*dies\.test\.ts: 0 passed, 1 failed \(exit 1\)$/m);
  t.regex(r.out, /^ava-signal-rerun: 0 passed, 1 failed$/m);
});

test('a failed assertion beside a death: nothing is re-run, both count as failures', (t) => {
  const { paths } = files(t, {
    'fails.test.ts': "test('fails', (t) => { t.is(1, 2); });",
    'dies.test.ts': `test('dies', async (t) => { await new Promise((r) => setTimeout(r, 100)); ${segv} t.pass(); });`,
  });
  const r = rerun(paths);
  t.not(r.code, 0);
  t.regex(r.out, /died by a signal, and other tests failed: no re-run/);
  t.notRegex(r.out, /re-run of/);
  t.regex(r.out, /^ava-signal-rerun: 0 passed, 2 failed$/m);
});

test('a failure ava does not count beside a death blocks the re-run: a file with no tests, an early process.exit(), tests --fail-fast skipped', (t) => {
  const dies = `test('dies', async (t) => { await new Promise((r) => setTimeout(r, 100)); const m = new URL('./marker', import.meta.url).pathname; if (!existsSync(m)) { writeFileSync(m, ''); ${segv} } t.pass(); });`;
  const cases: Array<[string, Record<string, string>, string[]]> = [
    ['no tests', { 'dies.test.ts': dies, 'empty.test.ts': 'const x = 1;\nvoid x;' }, []],
    [
      'process.exit',
      { 'dies.test.ts': dies, 'early.test.ts': "test('pending', async (t) => { await new Promise((r) => setTimeout(r, 50)); process.exit(0); t.pass(); });" },
      [],
    ],
    [
      'fail-fast',
      { 'a.test.ts': dies, 'b.test.ts': "test('fails', async (t) => { await new Promise((r) => setTimeout(r, 2000)); t.is(1, 2); });" },
      ['--fail-fast', '--concurrency=1'],
    ],
  ];
  for (const [name, contents, opts] of cases) {
    const { paths } = files(t, contents);
    const r = spawnSync('bash', [SCRIPT, AVA, '--timeout=2m', ...opts, '--', ...paths], { cwd: ROOT, encoding: 'utf8', timeout: 170_000 });
    t.not(r.status, 0, `${name}: ${r.stdout}`);
    t.regex(r.stdout, /died by a signal, and other tests failed: no re-run/, name);
    t.notRegex(r.stdout, /running .* once more/, name);
  }
});

test('nothing killed: ava runs once and the closing line is its count', (t) => {
  const { paths } = files(t, { 'ok.test.ts': "test('a', (t) => { t.pass(); });\ntest('b', (t) => { t.pass(); });" });
  const r = rerun(paths);
  t.is(r.code, 0, r.out);
  t.notRegex(r.out, /re-run/);
  t.regex(r.out, /^ava-signal-rerun: 2 passed, 0 failed$/m);
});
