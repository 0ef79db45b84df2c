/**
 * Errors as a user meets them: validation messages that name the real
 * problem (a mark too large, a negative one, a demo gap out of range, an
 * undefined command element, a duration given as text to the library), the
 * error classes the docs name exported from the package, one key style in
 * the CLI's JSON errors, `check`'s own exit code for "partly or differently
 * set up", apart from 2 (bad arguments), and a damaged setup.json's hint.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as pkg from '../../src/index.js';
import { parseUint } from '../../src/guard/config.js';
import { demoOptionsFromFlags } from '../../src/cli/demo-command.js';
import { CATEGORY_EXIT_CODES, COMMAND_EXIT_CODES, EXIT, EXIT_HELP, exitCodeOf } from '../../src/cli/exit-codes.js';
import { reportError } from '../../src/cli/run.js';
import { NetlinkError, SynplugError, UsageError } from '../../src/netlink/errors.js';
import { StateStore } from '../../src/guard/state.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const CLI_DOC = readFileSync(join(ROOT, 'docs/cli.md'), 'utf8');
const LIBRARY_DOC = readFileSync(join(ROOT, 'docs/library.md'), 'utf8');

test('--mark and other whole numbers: too large, negative and not a number are three different sentences', (t) => {
  t.throws(() => parseUint('4294967296', '--mark'), { instanceOf: UsageError, message: "--mark: '4294967296' is too large: at most 4294967295 (0xffffffff)" });
  t.throws(() => parseUint('0x100000000', '--mark'), { message: "--mark: '0x100000000' is too large: at most 4294967295 (0xffffffff)" });
  t.throws(() => parseUint('-1', '--mark'), { message: "--mark: '-1' is negative: give a whole number from 0 to 4294967295 (0xffffffff)" });
  t.throws(() => parseUint('1.5', '--limit'), { message: "--limit: '1.5' is not a whole number (decimal or 0x hex) from 0 to 4294967295 (0xffffffff)" });
  t.throws(() => parseUint('70000', '--queue-num', 65535), { message: "--queue-num: '70000' is too large: at most 65535 (0xffff)" });
  t.is(parseUint('4294967295', '--mark'), 4294967295);
  t.is(parseUint('0xff', '--mark'), 255);
});

test("demo --gap: out of range is said in the flag's own terms (not in ms of another option)", (t) => {
  t.throws(() => demoOptionsFromFlags({ gap: '5m' }), { instanceOf: UsageError, message: "--gap: at most 60s (got '5m')" });
  t.throws(() => demoOptionsFromFlags({ gap: '0.5ms' }), { message: "--gap: at least 1 ms (got '0.5ms'): the gap is whole milliseconds" });
  t.throws(() => demoOptionsFromFlags({ gap: '-1' }), { message: "--gap: must be more than 0 (got '-1')" });
  t.deepEqual(demoOptionsFromFlags({ gap: '60s' }), { gapMs: 60_000 });
  t.deepEqual(demoOptionsFromFlags({ gap: '1ms' }), { gapMs: 1 });
});

test("the library: protect's command with an undefined element, and maxHoldMs given as text, say so", async (t) => {
  await t.throwsAsync(pkg.protect({ command: ['haproxy', '-sf', undefined as unknown as string] }), {
    instanceOf: UsageError,
    message: "protect: option 'command' must be an array of strings (got an array): element 2 is undefined (a variable that was never set?)",
  });
  await t.throwsAsync(pkg.plug({ maxHoldMs: '10s' as unknown as number }), {
    instanceOf: UsageError,
    message:
      "plug: option 'maxHoldMs' must be a duration in ms, from 10 to 86400000 (24 h) (got '10s'): the library takes milliseconds as a number (a text such as '10s' is the CLI's way): give 10000 for '10s'",
  });
  await t.throwsAsync(pkg.protect({ command: ['true'], maxHoldMs: 'soon' as unknown as number }), {
    message:
      "protect: option 'maxHoldMs' must be a duration in ms, from 10 to 86400000 (24 h) (got 'soon'): the library takes milliseconds as a number (a text such as '10s' is the CLI's way)",
  });
});

test('every error class the README and docs/library.md name is exported from the package, KindUnavailableError included', (t) => {
  const named = [...new Set([...`${README}\n${LIBRARY_DOC}`.matchAll(/\b([A-Z][A-Za-z]+Error)\b/g)].map((m) => m[1]))];
  t.true(named.includes('KindUnavailableError'));
  const exported = pkg as unknown as Record<string, unknown>;
  for (const name of named) {
    t.is(typeof exported[name], 'function', `${name} is exported`);
    t.true((exported[name] as { prototype: unknown }).prototype instanceof Error || exported[name] === Error, name);
  }
  t.true(pkg.KindUnavailableError.prototype instanceof SynplugError);
});

test("the CLI's JSON errors use camelCase keys only (exitCode, extackOffset, missingAttribute)", (t) => {
  const lines: string[] = [];
  const write = process.stdout.write;
  const ewrite = process.stderr.write;
  process.stdout.write = ((s: string) => lines.push(s) > 0) as typeof process.stdout.write;
  process.stderr.write = (() => true) as typeof process.stderr.write;
  try {
    reportError(new NetlinkError({ errno: 22, requestType: 'RTM_NEWQDISC', extAckMessage: 'bad', extAckOffset: 36, missingAttribute: 2 }), true);
    reportError(new UsageError('--mark: bad'), true);
  } finally {
    process.stdout.write = write;
    process.stderr.write = ewrite;
  }
  const objs = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  t.like(objs[0], { exitCode: 3, extackOffset: 36, missingAttribute: 2, category: 'kernel' });
  t.deepEqual(Object.keys(objs[1]).sort(), ['category', 'error', 'exitCode']);
  for (const o of objs) for (const k of Object.keys(o)) t.regex(k, /^[a-z][a-zA-Z]*$/, k);
});

test('the built CLI: --mark 4294967296 --json is exit 2 with the sentence, in camelCase', (t) => {
  const r = spawnSync(process.execPath, [join(ROOT, 'dist/bundle/synplug.cjs'), 'setup', '--mark', '4294967296', '--json'], { encoding: 'utf8' });
  t.is(r.status, 2, r.stderr);
  t.deepEqual(JSON.parse(r.stdout), { error: "--mark: '4294967296' is too large: at most 4294967295 (0xffffffff)", category: 'usage', exitCode: 2 });
});

test("check: 'partly or differently set up' has its own exit code, documented; 2 is only bad arguments", (t) => {
  const partial = EXIT.CHECK_PARTIAL;
  const categoryCodes: readonly number[] = Object.values(CATEGORY_EXIT_CODES);
  t.false(categoryCodes.includes(partial), 'no error category has it');
  t.not(partial, EXIT.USAGE);
  const check = new Map<number | string, string>(COMMAND_EXIT_CODES.check.map(([c, m]) => [c, m]));
  t.regex(check.get(partial)!, /partly or differently/);
  t.notRegex(check.get(EXIT.USAGE)!, /partly/);
  t.regex(EXIT_HELP, new RegExp(`\\n  ${partial} +check: set up, but partly or differently`));
  t.notRegex(EXIT_HELP, /check: partly/);
  t.regex(README, new RegExp(`\\n\\| ${partial} \\| \`check\`: set up, but partly or differently`));
  t.regex(CLI_DOC, new RegExp(`exit 0 set up, 1 nothing set up, ${partial} partly/differently set up`));
  t.regex(CLI_DOC, new RegExp(`and ${partial}\\n  when one is set up partly or differently`));
});

test("setup.json's damage hint says plainly what re-running setup does to the local hold's address", (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'synplug-damage-hint-'));
  try {
    writeFileSync(join(dir, 'setup.json'), '{"version": 2, "holds": ', { mode: 0o600 });
    const e = t.throws(() => new StateStore(dir).readSetup()) as Error;
    t.is(exitCodeOf(e), 6);
    t.regex(e.message, /setup\.json/);
    t.regex(e.message, /a later teardown leaves it \('ip addr del ADDR dev lo' removes it\)/);
    t.notRegex(e.message, /teardown then leaves an address/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
