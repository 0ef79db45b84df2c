/**
 * protect's arguments (issue #19, defect 10; deliverable 8): everything from
 * the command on is the command's, as for sudo, timeout and nice. Its own
 * options repeated before the command are still refused.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function synplug(args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, SYNPLUG_STATE_DIR: join(mkdtempSync(join(tmpdir(), 'synplug-trustcli-')), 'state') };
  delete env.SYNPLUG_NETNS;
  const r = spawnSync(process.execPath, ['--import=tsx', join(ROOT, 'src/cli/bin.ts'), ...args], { encoding: 'utf8', env, timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test("protect mycmd --max-hold 1 --max-hold 2: both are the command's (no repeated-option refusal), and so is a --json after it", (t) => {
  const r = synplug(['protect', 'true', '--max-hold', '1', '--max-hold', '2', '--json']);
  t.not(r.code, 2, r.stderr);
  t.notRegex(r.stderr, /given 2 times/);
  t.is(r.stdout, '', "the command's --json is not synplug's: no JSON error object");
  // the same with -- before the command
  const dashed = synplug(['protect', '--', 'true', '--max-hold', '1', '--max-hold', '2']);
  t.not(dashed.code, 2, dashed.stderr);
});

test("protect's own option repeated before the command is still refused (exit 2), with --json before the command a JSON error", (t) => {
  const r = synplug(['protect', '--max-hold', '1', '--max-hold', '2', '--json', 'true']);
  t.is(r.code, 2);
  t.regex(r.stderr, /--max-hold given 2 times \('1', '2'\): give it once/);
  t.like(JSON.parse(r.stdout), { category: 'usage', exitCode: 2 });
});

test("protect --help says options after the command are the command's", (t) => {
  const r = synplug(['protect', '--help']);
  t.is(r.code, 0);
  t.regex(r.stdout.replace(/\s+/g, ' '), /command +the reload command; options after it are its own/);
  // the whole rule (as for sudo, timeout and nice) in docs/cli.md, where --help points
  const docs = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
  t.regex(docs, /`protect`'s command owns everything from its first word on, as for `sudo`, `timeout` and `nice`/);
});
