/**
 * The CLI's argument-parsing errors (commander's own: unknown option, missing
 * option value, unknown command, missing or extra argument; and `help` of a
 * command that does not exist): exit 2, the text on stderr, and with --json
 * the same `{"error", "category", "exitCode"}` object on stdout that every other error
 * gives. All of them are refused before any socket is opened, so this runs
 * without root (the live suite runs the bundle: test/live/guard-cli.test.ts).
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildProgram, commandOptionsFirst } from '../../src/cli/main.js';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Run the CLI from source. */
function synplug(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['--import=tsx', join(ROOT, 'src/cli/bin.ts'), ...args], {
      cwd: ROOT,
      env: { ...process.env, SYNPLUG_STATE_DIR: '/nonexistent/synplug-state' },
    });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => {
      stdout += d;
    });
    p.stderr.on('data', (d) => {
      stderr += d;
    });
    p.on('close', (code) => resolve({ code, stdout, stderr }));
    p.stdin.end();
  });
}

const cases: Array<[string, string[], RegExp]> = [
  ['an unknown option', ['setup', '--bogus'], /unknown option '--bogus'/],
  ['a missing option value', ['status', '--json', '--dev'], /option '--dev <name>' argument missing/],
  ['an unknown command', ['frobnicate'], /unknown command 'frobnicate'/],
  ['a missing argument', ['show'], /missing required argument 'object'/],
  ['an extra argument', ['release', 'now'], /too many arguments for 'release'/],
  ['help of an unknown command', ['help', 'nosuch'], /unknown command 'nosuch'/],
];

for (const [what, args, msg] of cases) {
  test(`${what}: exit 2, the message on stderr; with --json also the error object on stdout`, async (t) => {
    const withJson = args.includes('--json') ? args : [...args, '--json'];
    const [plain, json] = await Promise.all([synplug(args.filter((a) => a !== '--json')), synplug(withJson)]);
    t.is(plain.code, 2, plain.stderr);
    t.regex(plain.stderr, /^synplug: /);
    t.regex(plain.stderr, msg);
    t.is(plain.stdout, '');

    t.is(json.code, 2, json.stderr);
    t.regex(json.stderr, /^synplug: /);
    const lines = json.stdout.trim().split('\n');
    t.is(lines.length, 1, json.stdout);
    const obj = JSON.parse(lines[0]);
    t.deepEqual(Object.keys(obj).sort(), ['category', 'error', 'exitCode']);
    t.is(obj.exitCode, 2);
    t.is(obj.category, 'usage');
    t.regex(obj.error, msg);
    t.notRegex(obj.error, /^error: /);
  });
}

test('the error object has the shape of the errors reported after parsing (a bad --mark)', async (t) => {
  // a UsageError thrown by the command itself, for comparison: same keys, same exit code
  const r = await synplug(['setup', '--mark', '0', '--json']);
  t.is(r.code, 2, r.stderr);
  const obj = JSON.parse(r.stdout);
  t.deepEqual(Object.keys(obj).sort(), ['category', 'error', 'exitCode']);
  t.is(obj.exitCode, 2);
  t.is(obj.category, 'usage');
});

test("--json after -- belongs to protect's command: an argument error before it is text only", async (t) => {
  const r = await synplug(['protect', '--bogus', '--', 'true', '--json']);
  t.is(r.code, 2, r.stderr);
  t.regex(r.stderr, /unknown option '--bogus'/);
  t.is(r.stdout, '');
});

test('help with no command, and help of a command: their help on stdout, exit 0', async (t) => {
  const [all, one] = await Promise.all([synplug(['help']), synplug(['help', 'setup'])]);
  t.is(all.code, 0, all.stderr);
  t.regex(all.stdout, /^Usage: synplug \[options\] \[command\]/);
  t.is(one.code, 0, one.stderr);
  t.regex(one.stdout, /^Usage: synplug setup \[options\]/);
});

test('protect -- "": a CLI-level message, exit 2, nothing run', async (t) => {
  for (const args of [
    ['protect', '--', ''],
    ['protect', '--', '', 'x'],
    ['protect', '--json', '--', ''],
  ]) {
    const r = await synplug(args);
    t.is(r.code, 2, r.stderr);
    t.regex(r.stderr, /^synplug: protect: the command after -- is empty/);
    t.notRegex(r.stderr, /needs `command`|array of strings/);
    if (args.includes('--json')) t.regex(JSON.parse(r.stdout).error, /^protect: the command after -- is empty/);
  }
});

test('a single-value option given twice is exit 2 before anything runs (no "last one wins"); options meant to repeat, repeated flags, and what follows -- are left alone', async (t) => {
  const refused: Array<[string[], string]> = [
    [['check', '--netns', 'a', '--netns', 'b'], "--netns given 2 times ('a', 'b'): give it once"],
    [['setup', '--dev', 'lo', '--dev=va'], "--dev given 2 times ('lo', 'va'): give it once"],
    [['protect', '--max-hold', '1s', '--max-hold=2s', '--', 'true'], "--max-hold given 2 times ('1s', '2s'): give it once"],
    [['protect', '--check', 'a', '--user', 'x', '--check', 'b', '--', 'true'], "--check given 2 times ('a', 'b'): give it once"],
    [['demo', '--seconds', '1', '--seconds', '2'], "--seconds given 2 times ('1', '2'): give it once"],
    [['show', 'link', '--dev', 'a', '--dev', 'b'], "--dev given 2 times ('a', 'b'): give it once"],
  ];
  for (const [args, message] of refused) {
    const r = await synplug(args);
    t.is(r.code, 2, args.join(' '));
    t.true(r.stderr.includes(message), `${args.join(' ')}: ${r.stderr}`);
  }
  // after -- the words are the command's: not counted
  const after = await synplug(['protect', '--max-hold', '1s', '--', 'true', '--max-hold', '2s']);
  t.false(after.stderr.includes('given 2 times'), after.stderr);
  // --port repeats on purpose: the refusal is about the device, not the repeat
  const ports = await synplug(['setup', '--inbound', 'sp-nosuch0', '--port', '1', '--port', '2']);
  t.false(ports.stderr.includes('given 2 times'), ports.stderr);
  const flags = await synplug(['show', 'qdisc', '--dev', 'sp-nosuch0', '-s', '-s']);
  t.false(flags.stderr.includes('given 2 times'), flags.stderr);
});

test('a relative --state-dir (status, history) is refused with the absolute path it would name from here; nothing is read', async (t) => {
  // it was accepted and read relative to the current directory (another directory for every command run elsewhere)
  for (const args of [
    ['status', '--state-dir', 'rel/dir'],
    ['history', '--state-dir', 'rel/dir'],
  ]) {
    const r = await synplug(args);
    t.is(r.code, 2, r.stderr);
    t.is(r.stdout, '');
    t.regex(r.stderr, new RegExp(`--state-dir: 'rel/dir' is a relative path: give an absolute one \\(from here: ${join(ROOT, 'rel/dir')}\\)`));
  }
});

test("options before the command name (synplug --state-dir DIR history) are the command's own, as after it", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'synplug-cli-usage-'));
  const [before, after] = await Promise.all([synplug(['--json', '--state-dir', dir, 'history']), synplug(['history', '--json', '--state-dir', dir])]);
  t.is(before.code, 0, before.stderr);
  t.is(before.stderr, '');
  t.deepEqual(JSON.parse(before.stdout), []);
  t.deepEqual(before, after);
  const eq = await synplug([`--state-dir=${dir}`, 'history']);
  t.is(eq.code, 0, eq.stderr);
  t.is(eq.stdout, 'no reload recorded\n');
});

test('an option before the command name that the command does not take: exit 2, the message says where options go', async (t) => {
  const r = await synplug(['--gap', '5s', 'history']);
  t.is(r.code, 2, r.stderr);
  t.is(
    r.stderr,
    "synplug: --gap was given before the command name, and 'history' has no --gap option: options go after the command ('synplug history [options]'; see 'synplug history --help')\n",
  );
  t.is(r.stdout, '');
});

test("commandOptionsFirst: moves what precedes the command after its name; leaves the program's own options, unknown ones and no command alone", (t) => {
  const program = buildProgram();
  t.deepEqual(commandOptionsFirst(['--state-dir', '/s', '--json', 'status', '--addr', 'x'], program), ['status', '--state-dir', '/s', '--json', '--addr', 'x']);
  t.deepEqual(commandOptionsFirst(['--netns', 'ns1', 'protect', '--', 'true'], program), ['protect', '--netns', 'ns1', '--', 'true']);
  t.deepEqual(commandOptionsFirst(['status', '--state-dir', '/s'], program), ['status', '--state-dir', '/s']);
  t.deepEqual(commandOptionsFirst(['--version'], program), ['--version']);
  t.deepEqual(commandOptionsFirst(['--help', 'status'], program), ['--help', 'status']);
  t.deepEqual(commandOptionsFirst(['--bogus', 'status'], program), ['--bogus', 'status']);
  t.deepEqual(commandOptionsFirst(['--json'], program), ['--json']);
});

test("regression (rvu15): protect --check -- CMD ran '--' as the check (exit 127); now exit 2 saying the check command goes right after --check, nothing run", async (t) => {
  const r = await synplug(['protect', '--json', '--check', '--', 'true']);
  t.is(r.code, 2, r.stderr);
  t.regex(r.stderr, /--check took '--' as its command: give the check command right after --check/);
  t.is(JSON.parse(r.stdout.trim()).category, 'usage');
});
