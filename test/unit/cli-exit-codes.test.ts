/**
 * The error contract: errors carry a category, never an exit code; the CLI's
 * one table (src/cli/exit-codes.ts) maps each category to the code the
 * README documents, and no file below src/cli holds an exit code.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CATEGORY_EXIT_CODES, DEMO_FAILED, EXIT_TABLE, exitCodeOf, EXIT, protectExitCode, RELOAD_LOST } from '../../src/cli/exit-codes.js';
import { ERROR_CATEGORIES } from '../../src/index.js';
import { SynplugError, UsageError, NetlinkError, NetlinkDecodeError, DumpInterruptedError } from '../../src/netlink/errors.js';
import { NotPermittedError, MissingSupportError } from '../../src/guard/support.js';
import { CommandError } from '../../src/guard/command.js';
import { NoDeviceError, NotSetUpError } from '../../src/guard/errors.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const README = readFileSync(join(root, 'README.md'), 'utf8');
const BIN = join(root, 'dist/bundle/synplug.cjs');

/** README "Exit codes" rows: code -> meaning. */
function readmeTable(): Map<string, string> {
  const from = README.indexOf('### Exit codes');
  const table = README.slice(from, README.indexOf('\n\n', README.indexOf('| code |', from)));
  const rows = new Map<string, string>();
  for (const m of table.matchAll(/^\| ([0-9a-z /]+?) \| (.*) \|$/gm)) {
    if (m[1] === 'code') continue;
    for (const c of m[1].split(' / ')) rows.set(c, m[2]);
  }
  return rows;
}

test('every category has exactly one exit code, and it is one the README documents with that meaning', (t) => {
  t.deepEqual(Object.keys(CATEGORY_EXIT_CODES).sort(), [...ERROR_CATEGORIES].sort());
  const rows = readmeTable();
  const meaning: Record<string, RegExp> = {
    failure: /failure/,
    usage: /bad arguments or input/,
    decode: /undecodable|does not decode/,
    kernel: /kernel refused/,
    permission: /not permitted/,
    'missing-module': /lacks a needed module/,
    'bad-state': /state directory or a state file/,
    'foreign-state': /not synplug's/,
    'not-set-up': /not set up/,
    'command-not-started': /could not be started/,
    'command-not-executable': /cannot be executed/,
    'command-not-found': /was not found/,
    interrupted: /interrupted/,
    'check-failed': /--check. command failed/,
    unprintable: /cannot be printed in nft's language/,
  };
  for (const [category, code] of Object.entries(CATEGORY_EXIT_CODES)) {
    const row = rows.get(String(code));
    t.truthy(row, `${category} -> ${code} is in the README`);
    t.regex(row!, meaning[category], category);
  }
  // the demo's verdict: not a category, but a documented code of its own
  t.regex(rows.get(String(DEMO_FAILED))!, /protected phase lost/);
});

test("the README table and the CLI's one table (EXIT_TABLE, which help exit-codes prints) agree row for row, word for word", (t) => {
  const from = README.indexOf('### Exit codes');
  const table = README.slice(from, README.indexOf('\n\n', README.indexOf('| code |', from)));
  // a `code` mark is bare in the CLI's text, or quoted around more than one word
  const plain = (x: string) => x.replace(/`([^`]*)`/g, (_m, c: string) => (c.includes(' ') ? `'${c}'` : c));
  const rows = [...table.matchAll(/^\| ([0-9a-z /]+?) \| (.*) \|$/gm)].filter((m) => m[1] !== 'code').map((m) => [m[1], plain(m[2])]);
  t.deepEqual(
    rows,
    EXIT_TABLE.map(([c, m]) => [String(c), m]),
  );
});

test("exit 7 says another state directory's hold (setup, release) and a setup during a hold, in the table and in setup's and release's lists", (t) => {
  const seven = EXIT_TABLE.find(([c]) => c === 7)![1];
  t.regex(seven, /setup, release: the hold is another state directory's hold \(the mark on its table or IFB names it; use that directory's --state-dir\)/);
  t.regex(seven, /setup: this directory's hold is holding now/);
});

test("categories are read-only and the core names none of the guard's", (t) => {
  const e = new SynplugError('x', 'kernel');
  t.throws(() => {
    (e as { category: string }).category = 'usage';
  });
  const core = readFileSync(join(fileURLToPath(new URL('../../src/netlink/errors.ts', import.meta.url))), 'utf8');
  for (const c of ['not-set-up', 'bad-state', 'check-failed', 'command-not-found', 'interrupted', 'demo-failed']) t.false(core.includes(`'${c}'`), c);
});

test('exitCodeOf: the category decides; errnos are categorised by name; anything else is a failure', (t) => {
  t.is(exitCodeOf(new UsageError('x')), 2);
  t.is(exitCodeOf(new NetlinkDecodeError('x', 0)), 3);
  t.is(exitCodeOf(new DumpInterruptedError('RTM_GETQDISC', 5)), 3);
  t.is(exitCodeOf(new NetlinkError({ errno: 2, requestType: 'RTM_NEWQDISC' })), 3);
  const eperm = new NetlinkError({ errno: 1, requestType: 'RTM_NEWQDISC' });
  t.is(eperm.category, 'permission');
  t.is(exitCodeOf(eperm), 4);
  t.is(new NetlinkError({ errno: 13 }).category, 'permission'); // EACCES
  const enodev = new NetlinkError({ errno: 19, requestType: 'RTM_GETLINK' });
  t.is(enodev.code, 'ENODEV');
  t.is(exitCodeOf(enodev), 2, 'a device that does not exist is bad input');
  t.is(exitCodeOf(enodev.withMessage("device 'x' not found")), 2);
  t.is(exitCodeOf(new NotPermittedError('synplug setup')), 4);
  t.is(exitCodeOf(new MissingSupportError([{ module: 'sch_plug', what: 'qdisc plug' }])), 5);
  t.is(exitCodeOf(new NotSetUpError('not set up')), 8);
  t.is(exitCodeOf(new NoDeviceError('nosuch0')), 2);
  t.is(exitCodeOf(new CommandError('x', 'command-not-found')), 127);
  t.is(exitCodeOf(new CommandError('x', 'command-not-executable')), 126);
  t.is(exitCodeOf(new SynplugError('x', 'interrupted')), 130);
  t.is(exitCodeOf(new SynplugError('x', 'command-not-started')), 125);
  t.is(exitCodeOf(new SynplugError('x')), EXIT.FAILURE);
  t.is(exitCodeOf(new Error('bare')), EXIT.FAILURE);
  t.is(exitCodeOf('a string'), EXIT.FAILURE);
});

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

test("no error below src/cli is given a number, and no EXIT_ constant exists there (ProtectResult.exitCode is the command's own status)", (t) => {
  for (const f of tsFiles(join(root, 'src')).filter((p) => !p.includes(`${join('src', 'cli')}/`))) {
    const text = readFileSync(f, 'utf8');
    // super(message, 3) / new XError(message, 130, { cause })
    t.notRegex(text, /(?<!Decode)(?:super|Error)\((?:[^()]|\([^()]*\))*?,\s*\d+\s*(?:,\s*\{[^}]*\})?\)/, f);
    t.notRegex(text, /\bEXIT_[A-Z_]+\s*=/, f);
  }
});

// rvu15's suggestion: protect --fail-on-loss. Its code is the CLI's (13), apart from every other, documented in the
// README and in protect's --help; the mapping: only a command that exited 0 under a reload whose report counts a loss.
test('protect --fail-on-loss: exit 13 only when the command exited 0 and the report says lossless false; documented', (t) => {
  t.is(RELOAD_LOST, 13);
  t.is(EXIT.RELOAD_LOST, 13);
  const codes = Object.values(EXIT).filter((c) => c === RELOAD_LOST);
  t.is(codes.length, 1, 'no other code is 13');
  t.false((Object.values(CATEGORY_EXIT_CODES) as number[]).includes(RELOAD_LOST));
  const r = (exitCode: number, lossless: boolean | null) => ({ exitCode, report: { lossless } });
  t.is(protectExitCode(r(0, false), true), 13, 'a loss under a command that succeeded');
  t.is(protectExitCode(r(0, false), false), 0, 'without the flag: the command’s status');
  t.is(protectExitCode(r(0, true), true), 0, 'lossless');
  t.is(protectExitCode(r(0, null), true), 0, 'uncounted is no counted loss');
  t.is(protectExitCode(r(3, false), true), 3, 'a command that failed keeps its own status');
  t.is(protectExitCode(r(143, false), true), 143);
  t.regex(readmeTable().get('13')!, /^protect `--fail-on-loss`: the command exited 0, but/);
  const help = spawnSync(process.execPath, [BIN, 'protect', '--help'], { encoding: 'utf8', timeout: 30_000 });
  t.is(help.status, 0, help.stderr);
  t.regex(help.stdout, /--fail-on-loss +exit 13 on a loss when the command exited 0\n/);
  t.regex(help.stdout, /\n {2}13 {3}--fail-on-loss: the command exited 0, the reload lost\n/);
});
