/**
 * One door for every hold: outside src/guard/modes/, the guard, the demo and
 * the CLI reach a hold only through the mode interface (modes/index.ts, the
 * registry, and modes/types.ts). Read from the sources: no file imports a
 * mode's own file, tests a hold's class, or compares a mode's name, a hold's
 * id, kind (`via`) or scope with a literal; the CLI's words about a hold
 * come from its mode (`describe`, `setupHead`). (src/guard/index.ts, the
 * library's public face, may re-export a mode's functions; a command's own
 * flags, `f.via`, are the user's words, checked before any hold exists.)
 */
import test from 'ava';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { holdModes } from '../../src/guard/modes/index.js';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..');

/** Every .ts file under a directory of the repository. */
function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(root, dir))) {
    const p = join(dir, name);
    if (statSync(join(root, p)).isDirectory()) out.push(...sources(p));
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

const modeFiles = sources('src/guard/modes').map((p) => p.replace(/^src\/guard\/modes\//, '').replace(/\.ts$/, ''));
const outside = [...sources('src/guard'), ...sources('src/demo'), ...sources('src/cli')].filter(
  (p) => !p.startsWith('src/guard/modes/') && p !== 'src/guard/index.ts',
);
const modeNames = holdModes().map((m) => m.name);
const vias = [...new Set(holdModes().map((m) => m.via))];
const scopes = [...new Set(holdModes().flatMap((m) => m.scopes))];

test('the door is there: more than one mode, files outside modes/ to check', (t) => {
  t.true(modeNames.includes('local') && modeNames.includes('inbound'));
  t.true(modeFiles.includes('local') && modeFiles.includes('inbound'));
  t.true(outside.includes('src/guard/setup.ts') && outside.includes('src/demo/preflight.ts') && outside.includes('src/cli/format-guard.ts'));
  t.deepEqual([...vias].sort(), ['plug', 'queue']);
  t.deepEqual([...scopes].sort(), ['inbound', 'local']);
});

test("no file outside src/guard/modes/ imports a mode's own file (only modes/index.js and modes/types.js)", (t) => {
  const bad: string[] = [];
  for (const p of outside) {
    const text = readFileSync(join(root, p), 'utf8');
    for (const m of text.matchAll(/from\s+'([^']*\/modes\/([^'/]+))\.js'/g)) {
      if (m[2] !== 'index' && m[2] !== 'types') bad.push(`${p}: ${m[1]}`);
    }
  }
  t.deepEqual(bad, []);
});

/** Alternatives of a regular expression, each word escaped. */
const alt = (words: readonly string[]): string => words.map((n) => n.replace(/[^a-z0-9]/gi, '\\$&')).join('|');

test("no file outside src/guard/modes/ tests a hold's class or compares a mode's name, a hold's id, kind or scope with a literal (src/cli and src/demo: not even a kind or scope in a variable)", (t) => {
  const names = alt(modeNames);
  const patterns: RegExp[] = [
    /instanceof\s+[A-Z]\w*Hold\b/,
    new RegExp(`\\.mode\\s*[!=]==?\\s*'(${names})'`),
    new RegExp(`'(${names})'\\s*[!=]==?\\s*\\w+\\.mode\\b`),
    new RegExp(`\\bid\\s*[!=]==?\\s*'(${names})(:[^']*)?'`),
    new RegExp(`\\[\\d+\\]\\s*[!=]==?\\s*'(${names})(:[^']*)?'`),
    new RegExp(`\\.includes\\(\\s*'(${names})(:[^']*)?'\\s*\\)`),
    new RegExp(`/\\^(${names}):/`),
  ];
  // The CLI's and the demo's words and ways with a hold come from its mode: they do not test a hold's kind or scope
  // either, as a property or as a variable holding one (the demo's `via`: what preflight chose).
  const cliPatterns: RegExp[] = [
    new RegExp(`(?<!\\bf)\\.via\\s*[!=]==?\\s*'(${alt(vias)})'`),
    new RegExp(`\\.scope\\s*[!=]==?\\s*'(${alt(scopes)})'`),
    new RegExp(`(?<![\\w.])(via|scope)\\s*[!=]==?\\s*'(${alt([...vias, ...scopes])})'`),
    new RegExp(`'(${alt([...vias, ...scopes])})'\\s*[!=]==?\\s*(\\w+\\.)?(via|scope)\\b`),
  ];
  const bad: string[] = [];
  for (const p of outside) {
    readFileSync(join(root, p), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if ([...patterns, ...(p.startsWith('src/cli/') || p.startsWith('src/demo/') ? cliPatterns : [])].some((re) => re.test(line)))
          bad.push(`${relative(root, join(root, p))}:${i + 1}: ${line.trim()}`);
      });
  }
  t.deepEqual(bad, []);
});
