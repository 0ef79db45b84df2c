/**
 * protect --check (src/guard/precheck.ts): the words of the check command
 * line, the check run before anything is held, and protect's orchestration
 * with a recording fake session: a failed check means no arm, no buffer, and
 * the reload command never runs. The kernel side is test/kernel/precheck.test.ts.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PrecheckFailedError, runPrecheck, shellQuote, shellQuoteWords, splitCommandWords } from '../../src/guard/precheck.js';
import { runProtected } from '../../src/guard/protect.js';
import { SynplugError, UsageError } from '../../src/netlink/errors.js';
import { CommandError } from '../../src/guard/errors.js';
import { exitCodeOf } from '../../src/cli/exit-codes.js';
import { reportError } from '../../src/cli/run.js';
import { FakeSession } from '../helpers/fake-session.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

test('splitCommandWords: blanks separate words; quotes as a POSIX shell reads them; no expansion', (t) => {
  t.deepEqual(splitCommandWords('haproxy -c -f /etc/haproxy/haproxy.cfg'), ['haproxy', '-c', '-f', '/etc/haproxy/haproxy.cfg']);
  t.deepEqual(splitCommandWords("  nginx\t-t  -c '/etc/my nginx/nginx.conf' "), ['nginx', '-t', '-c', '/etc/my nginx/nginx.conf']);
  t.deepEqual(splitCommandWords(`a "b \\"c\\" \\\\ \\n" d\\ e ''`), ['a', 'b "c" \\ \\n', 'd e', '']);
  t.deepEqual(splitCommandWords('x\'y\'"z"'), ['xyz']);
  t.deepEqual(
    splitCommandWords("ls '*.cfg' \\? \"[a]\" '~' a~ \\# a#b a=b"),
    ['ls', '*.cfg', '?', '[a]', '~', 'a~', '#', 'a#b', 'a=b'],
    'quoted or escaped, or not where a shell would expand them: literal',
  );
  t.deepEqual(splitCommandWords(`'FOO=1' x "A=1" B\\=1 -FOO=1`), ['FOO=1', 'x', 'A=1', 'B=1', '-FOO=1'], 'a quoted or escaped first word is no assignment');
  t.deepEqual(splitCommandWords('x "\\$HOME \\`id\\`" \\$y \'$z\''), ['x', '$HOME `id`', '$y', '$z'], 'an escaped or single-quoted $ or backtick is literal');
  t.deepEqual(splitCommandWords("sh -c 'haproxy -c -f a.cfg && nginx -t'"), ['sh', '-c', 'haproxy -c -f a.cfg && nginx -t'], 'quoted shell syntax is literal');
  t.deepEqual(splitCommandWords(''), []);
  t.deepEqual(splitCommandWords('   '), []);
  // Cross-check with a real shell (no expansion involved in these lines).
  for (const line of ['a \'b c\' "d e" f\\ g', `"x\\"y" 'z\\' w`, `a#b c~ '*' \\? "[x]" '~' \\# "\\$H" '$H' d=e`]) {
    const sh = spawnSync('/bin/sh', ['-c', `for w in ${line}; do printf '%s\\n' "$w"; done`], { encoding: 'utf8' });
    t.deepEqual(splitCommandWords(line), sh.stdout.split('\n').slice(0, -1), `as /bin/sh splits: ${line}`);
  }
});

test('splitCommandWords: a line break quoted, leading or trailing is not a command separator', (t) => {
  t.deepEqual(splitCommandWords("printf 'a\nb'"), ['printf', 'a\nb']);
  t.deepEqual(splitCommandWords('nginx -t\n'), ['nginx', '-t']);
  t.deepEqual(splitCommandWords('\n nginx -t'), ['nginx', '-t']);
});

test('splitCommandWords: open quotes, a trailing backslash and unquoted shell syntax are usage errors', (t) => {
  for (const bad of ["a 'b", 'a "b', 'a \\', 'nginx -t && reload', 'a | b', 'a; b', 'a > f', 'echo $HOME', 'echo `id`', 'a (b)']) {
    const e = t.throws(() => splitCommandWords(bad), { instanceOf: UsageError }, bad);
    t.regex(e!.message, /^--check: /);
    t.is(exitCodeOf(e), 2);
  }
});

test('splitCommandWords: what a shell would expand or treat specially is refused, not passed literally (exit 2)', (t) => {
  const cases: [string, RegExp][] = [
    ['haproxy -c -f "$CFG"', /'\$' .*inside double quotes is expanded by a shell/],
    ['echo "`id`"', /'`' .*inside double quotes/],
    ['echo "a$(id)b"', /'\$'/],
    ['ls *.cfg', /'\*' .*pattern/],
    ['ls a?', /'\?' .*pattern/],
    ['ls [ab]', /'\[' .*pattern/],
    ['ls x"y"*', /'\*'/],
    ['cat ~/x.cfg', /'~' .*home directory/],
    ['cat ~', /'~'/],
    ['nginx -t #comment', /'#' .*comment/],
    ['#nginx', /'#'/],
    ['FOO=1 nginx -t', /'FOO=' .*variable assignment.*env NAME=value/],
    ['_a9=x', /'_a9='/],
    ['A= nginx', /'A='/],
    ['nginx -t\nreboot', /unquoted line break .*separates two commands/],
    ['echo a\n b', /unquoted line break/],
  ];
  for (const [bad, re] of cases) {
    const e = t.throws(() => splitCommandWords(bad), { instanceOf: UsageError }, bad);
    t.regex(e!.message, /^--check: /, bad);
    t.regex(e!.message, re, bad);
    t.regex(e!.message, /sh -c/, bad);
    t.is(exitCodeOf(e), 2);
  }
});

test('shellQuote: a word is quoted only when it needs it, and /bin/sh and splitCommandWords read it back', (t) => {
  t.is(shellQuote('/etc/haproxy/haproxy.cfg'), '/etc/haproxy/haproxy.cfg');
  t.is(shellQuote('-c'), '-c');
  t.is(shellQuote('my cfg'), "'my cfg'");
  t.is(shellQuote("it's"), "'it'\\''s'");
  t.is(shellQuote(''), "''");
  const argv = ['haproxy', '-c', '-f', '/etc/my cfg', "it's", '', '$HOME', '*', '~', '#x', 'a"b', 'x\\y', 'FOO=1'];
  const line = shellQuoteWords(argv);
  t.is(line.split(' ').slice(0, 3).join(' '), 'haproxy -c -f');
  t.deepEqual(splitCommandWords(line), argv);
  const sh = spawnSync('/bin/sh', ['-c', `for w in ${line}; do printf '%s\\n' "$w"; done`], { encoding: 'utf8' });
  t.deepEqual(sh.stdout.split('\n').slice(0, -1), argv, line);
});

test('runPrecheck: a failing check names its command shell-quoted', async (t) => {
  const e = await t.throwsAsync(runPrecheck(['sh', '-c', 'exit 4', 'my arg'], { output: () => {} }), { instanceOf: PrecheckFailedError });
  t.regex(e!.message, /exited 4 \(sh -c 'exit 4' 'my arg'\): nothing was held/);
});

test('runPrecheck: a passing check returns its status and time; its stdout and stderr are shown (copied as they arrive)', async (t) => {
  const chunks: Buffer[] = [];
  const r = await runPrecheck(['sh', '-c', 'echo valid; echo warn >&2; exit 0'], { output: (b) => chunks.push(b) });
  t.deepEqual(r.command, ['sh', '-c', 'echo valid; echo warn >&2; exit 0']);
  t.is(r.exitCode, 0);
  t.is(r.signal, null);
  t.true(r.durationMs >= 0);
  const out = Buffer.concat(chunks).toString();
  t.regex(out, /valid/);
  t.regex(out, /warn/);
});

test('runPrecheck: a failing check is check-failed (exit 10) and keeps the output', async (t) => {
  const chunks: Buffer[] = [];
  const e = await t.throwsAsync(runPrecheck(['sh', '-c', 'echo "[ALERT] bad line 3" >&2; exit 3'], { output: (b) => chunks.push(b) }), {
    instanceOf: PrecheckFailedError,
  });
  t.is(e!.category, 'check-failed');
  t.is(exitCodeOf(e), 10);
  t.is(e!.check.exitCode, 3);
  t.regex(e!.output, /\[ALERT\] bad line 3/);
  t.regex(e!.message, /exited 3.*nothing was held and the reload command was not run/);
  t.regex(Buffer.concat(chunks).toString(), /bad line 3/);
});

test('runPrecheck: a check killed by a signal fails with that signal', async (t) => {
  const e = await t.throwsAsync(runPrecheck(['sh', '-c', 'kill -KILL $$'], { output: () => {} }), { instanceOf: PrecheckFailedError });
  t.is(e!.check.signal, 'SIGKILL');
  t.is(e!.check.exitCode, 128 + 9);
});

test('runPrecheck: not found is 127, not executable 126, empty is usage (2)', async (t) => {
  const nf = await t.throwsAsync(runPrecheck(['synplug-no-such-check-cmd', '-t']), { instanceOf: CommandError });
  t.is(nf!.category, 'command-not-found');
  t.is(exitCodeOf(nf), 127);
  t.regex(nf!.message, /--check: command not found: 'synplug-no-such-check-cmd'.*nothing was held/);
  const ne = await t.throwsAsync(runPrecheck([join(REPO, 'README.md')]), { instanceOf: CommandError });
  t.is(exitCodeOf(ne), 126);
  for (const empty of [[], ['']]) {
    const e = await t.throwsAsync(runPrecheck(empty), { instanceOf: UsageError });
    t.is(exitCodeOf(e), 2);
  }
});

test('runPrecheck: a check that cannot be started is command-not-started (125), nothing run', async (t) => {
  const e = await t.throwsAsync(runPrecheck(['sh', '-c', 'exit 0', 'a\0b'], { output: () => {} }), { instanceOf: SynplugError });
  t.is(e!.category, 'command-not-started');
  t.is(exitCodeOf(e), 125);
  t.regex(e!.message, /^--check: cannot start 'sh': .*nothing was held and the reload command was not run/);
});

test('protect with a failing check: nothing armed or buffered, the reload command not run, check-failed', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'synplug-precheck-'));
  const s = new FakeSession({ stateDir: dir });
  const marker = join(dir, 'reloaded');
  const e = await t.throwsAsync(runProtected(s, { command: ['touch', marker], check: ['sh', '-c', 'exit 1'] }), { instanceOf: SynplugError });
  t.is(e!.category, 'check-failed');
  t.deepEqual(s.calls, [], 'not even the warm-up release: the check runs first');
  t.false(existsSync(marker), 'the reload command was not run');
});

test('protect with a check that is not found: 127, nothing held, the reload command not run', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'synplug-precheck-'));
  const s = new FakeSession({ stateDir: dir });
  const marker = join(dir, 'reloaded');
  const e = await t.throwsAsync(runProtected(s, { command: ['touch', marker], check: ['synplug-no-such-check-cmd'] }), { instanceOf: CommandError });
  t.is(exitCodeOf(e), 127);
  t.deepEqual(s.calls, []);
  t.false(existsSync(marker));
});

test('protect with a passing check: the check ran before the window, then the usual window; result.check is reported', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'synplug-precheck-'));
  const s = new FakeSession({ stateDir: dir });
  const checked = join(dir, 'checked');
  const marker = join(dir, 'reloaded');
  // The reload command fails unless the check ran first: order, not time.
  const r = await runProtected(s, { command: ['sh', '-c', `test -e ${checked} && touch ${marker}`], check: ['touch', checked] });
  t.is(r.exitCode, 0);
  t.true(existsSync(marker));
  t.deepEqual(r.check?.command, ['touch', checked]);
  t.is(r.check?.exitCode, 0);
  t.true(typeof r.check?.durationMs === 'number');
  t.deepEqual(s.calls, ['release', 'arm 10000', 'buffer', 'release', 'disarm']);
});

test('CLI: an empty --check and unquoted shell syntax are exit 2 before anything else; --help documents --check', (t) => {
  const cli = join(REPO, 'src/cli/bin.ts');
  const run = (args: string[]) =>
    spawnSync(process.execPath, ['--import=tsx', cli, ...args], {
      encoding: 'utf8',
      env: { ...process.env, SYNPLUG_STATE_DIR: mkdtempSync(join(tmpdir(), 'sp-')) },
    });
  for (const [value, re] of [
    ['', /--check is empty/],
    ['   ', /--check is empty/],
    ['nginx -t && true', /'&' .* is shell syntax/],
  ] as const) {
    const r = run(['protect', '--check', value, '--', 'true']);
    t.is(r.status, 2, `${JSON.stringify(value)}: ${r.stderr}`);
    t.regex(r.stderr, re);
  }
  t.regex(run(['protect', '--help']).stdout, /--check <command line>/);
});

/** Whether a process runs (exists and is not a zombie waiting for its reaper). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

test('runPrecheck: a check that runs past its timeout has its process group killed and fails (check-failed, timedOut)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'synplug-precheck-'));
  const pidFile = join(dir, 'bg.pid');
  const chunks: Buffer[] = [];
  const e = await t.throwsAsync(
    runPrecheck(['sh', '-c', `sleep 30 & echo $! > ${pidFile}; echo started; sleep 30`], { timeoutMs: 3000, output: (b) => chunks.push(b) }),
    { instanceOf: PrecheckFailedError },
  );
  t.is(e!.category, 'check-failed');
  t.is(exitCodeOf(e), 10);
  t.true(e!.check.timedOut);
  t.is(e!.check.timeoutMs, 3000);
  t.is(e!.check.signal, 'SIGKILL');
  t.regex(e!.message, /did not finish within 3000 ms \(--check-timeout\): its process group was killed .*nothing was held and the reload command was not run/);
  t.regex(e!.output, /started/);
  // the background child, in the check's process group, was killed with it (3 s: time enough for sh to write its pid on a loaded machine)
  const bg = Number(readFileSync(pidFile, 'utf8'));
  for (let i = 0; i < 200 && alive(bg); i++) await new Promise((r) => setTimeout(r, 10));
  t.false(alive(bg), 'the background child of the check is gone');
});

test('runPrecheck: a check that exits leaving a background child holding its output is over at its exit, not when the child closes the pipes', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'synplug-precheck-'));
  const pidFile = join(dir, 'bg.pid');
  const chunks: Buffer[] = [];
  const r = await runPrecheck(['sh', '-c', `sleep 30 & echo $! > ${pidFile}; echo checked; exit 0`], { output: (b) => chunks.push(b) });
  const bg = Number(readFileSync(pidFile, 'utf8'));
  t.teardown(() => {
    if (alive(bg)) process.kill(bg, 'SIGKILL');
  });
  t.is(r.exitCode, 0);
  t.is(r.timedOut, undefined);
  t.true(alive(bg), 'returned while the background child still holds the pipes');
  t.regex(Buffer.concat(chunks).toString(), /checked/, 'the output written before the exit is shown');
});

test('protect with a check that times out: nothing armed or buffered, the reload command not run', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'synplug-precheck-'));
  const s = new FakeSession({ stateDir: dir });
  const marker = join(dir, 'reloaded');
  const e = await t.throwsAsync(runProtected(s, { command: ['touch', marker], check: ['sh', '-c', 'sleep 30'], checkTimeoutMs: 300 }), {
    instanceOf: PrecheckFailedError,
  });
  t.true(e!.check.timedOut);
  t.deepEqual(s.calls, []);
  t.false(existsSync(marker));
});

test('--json error of a failed check carries the check: status, signal, time, output size and tail', async (t) => {
  const e = await t.throwsAsync(runPrecheck(['sh', '-c', 'printf "%s\\n" "[ALERT] unknown keyword" >&2; exit 3']), { instanceOf: PrecheckFailedError });
  let stdout = '';
  const write = process.stdout.write;
  const ewrite = process.stderr.write;
  process.stdout.write = ((chunk: string) => {
    stdout += chunk;
    return true;
  }) as typeof process.stdout.write;
  process.stderr.write = (() => true) as typeof process.stderr.write;
  let code: number;
  try {
    code = reportError(e, true);
  } finally {
    process.stdout.write = write;
    process.stderr.write = ewrite;
  }
  t.is(code, 10);
  const j = JSON.parse(stdout);
  t.is(j.category, 'check-failed');
  t.is(j.exitCode, 10);
  t.deepEqual(j.check.command, ['sh', '-c', 'printf "%s\\n" "[ALERT] unknown keyword" >&2; exit 3']);
  t.is(j.check.exitCode, 3);
  t.is(j.check.signal, null);
  t.is(typeof j.check.durationMs, 'number');
  t.is(j.check.outputBytes, Buffer.byteLength('[ALERT] unknown keyword\n'));
  t.is(j.check.outputTail, '[ALERT] unknown keyword\n');
});

test('CLI: --check-timeout is a duration, needs --check, and --help documents it', (t) => {
  const cli = join(REPO, 'src/cli/bin.ts');
  const run = (args: string[]) =>
    spawnSync(process.execPath, ['--import=tsx', cli, ...args], {
      encoding: 'utf8',
      env: { ...process.env, SYNPLUG_STATE_DIR: mkdtempSync(join(tmpdir(), 'sp-')) },
    });
  const bad = run(['protect', '--check', 'true', '--check-timeout', 'soon', '--', 'true']);
  t.is(bad.status, 2, bad.stderr);
  t.regex(bad.stderr, /--check-timeout/);
  const short = run(['protect', '--check', 'true', '--check-timeout', '5ms', '--', 'true']);
  t.is(short.status, 2, short.stderr);
  t.regex(short.stderr, /--check-timeout: at least 100 ms \(got '5ms'\): a check command needs time to start and end/);
  const alone = run(['protect', '--check-timeout', '5s', '--', 'true']);
  t.is(alone.status, 2, alone.stderr);
  t.regex(alone.stderr, /--check-timeout bounds the --check command: give --check too/);
  const help = run(['protect', '--help']).stdout.replace(/\s+/g, ' ');
  t.regex(help, /--check-timeout <duration> +with --check: its time limit \(default: 60s\)/);
  // what it kills (the check's process group) in docs/cli.md, where --help points
  const docs = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
  t.regex(docs, /--check-timeout.{0,200}process group/);
});
