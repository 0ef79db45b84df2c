/**
 * The README stays decision-first and short (at most 450 lines), and every
 * link in it works for a reader of the repository and for an npm user
 * alike: a relative link names a file the package ships (`npm pack`'s file
 * list, which package.json's `files` decides), and an anchor names a heading
 * of its target. The same holds for every Markdown file the package ships
 * (docs/*.md, docs/recipes, the bench READMEs), so that following a link
 * never leads out of what an npm user has.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MAX_README_LINES = 450;

/** The paths `npm pack` would put in the tarball, relative to the package root (--ignore-scripts: no build). */
function shippedFiles(): Set<string> {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const [{ files }] = JSON.parse(out) as Array<{ files: Array<{ path: string }> }>;
  return new Set(files.map((f) => f.path));
}

/** Markdown without its fenced code blocks and inline code spans (a link inside code is text, not a link). */
function withoutCode(md: string): string {
  return md.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** The targets of the inline links `[text](target)` of a Markdown text; the text may span lines. */
function linkTargets(md: string): string[] {
  return [...withoutCode(md).matchAll(/\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]);
}

/**
 * The anchors of a Markdown file's headings, as GitHub makes them: the
 * heading's text lower-cased, every character but letters, digits, spaces,
 * hyphens and underscores dropped, spaces made hyphens; a repeated anchor
 * gets -1, -2...
 */
function anchors(md: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of md.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const text = m[1].replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

test("the slugs are GitHub's: punctuation and code marks dropped, spaces hyphenated, repeats numbered", (t) => {
  const a = anchors(
    '# When do you need synplug?\n## Runtime dependencies: details\n### 4. The plug window (`protect-overhead.ts`, `npm run bench:protect`)\n## Tests\n## Tests\n```\n# not a heading\n```\n',
  );
  t.deepEqual(
    [...a],
    ['when-do-you-need-synplug', 'runtime-dependencies-details', '4-the-plug-window-protect-overheadts-npm-run-benchprotect', 'tests', 'tests-1'],
  );
  t.deepEqual(linkTargets('see [the\nqueue hold](#the-queue-hold) and `[not](a-link)`\n```\n[no](link)\n```\n[x](a.md "title")'), ['#the-queue-hold', 'a.md']);
});

test(`the README has at most ${MAX_README_LINES} lines, and "When do you need synplug?" is its first section`, (t) => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const lines = readme.split('\n').length - (readme.endsWith('\n') ? 1 : 0);
  t.true(lines <= MAX_README_LINES, `README.md has ${lines} lines`);
  const sections = [...readme.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
  t.is(sections[0], 'When do you need synplug?');
  t.true(sections.includes('Quick start') && sections.includes('Set-up on a fresh Debian machine') && sections.includes('CLI'), sections.join(' | '));
});

test('every relative link of every shipped Markdown file names a shipped file, and every anchor a heading of its target', (t) => {
  const shipped = shippedFiles();
  const markdown = [...shipped].filter((p) => p.endsWith('.md'));
  t.true(markdown.includes('README.md'));
  let checked = 0;
  for (const file of markdown) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const target of linkTargets(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
        t.regex(target, /^https:\/\//, `${file}: ${target} (only https links leave the package)`);
        continue;
      }
      checked++;
      const [path, anchor] = target.split('#', 2) as [string, string | undefined];
      const resolved = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path))).replace(/\/$/, '');
      t.true(shipped.has(resolved), `${file}: ${target} -> ${resolved} is not in the package (package.json "files")`);
      if (anchor !== undefined) {
        t.true(resolved.endsWith('.md'), `${file}: ${target}: an anchor into a file that is not Markdown`);
        if (shipped.has(resolved))
          t.true(anchors(readFileSync(join(ROOT, resolved), 'utf8')).has(anchor), `${file}: ${target}: no heading #${anchor} in ${resolved}`);
      }
    }
  }
  t.true(checked > 20, `${checked} links checked`);
});

test('the README opens with a five-line "Start here": what to run first on a fresh Debian machine, and the command that protects a reload', (t) => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const para = readme.split('\n\n')[1];
  t.true(para.startsWith('**Start here.**'), para);
  t.is(para.split('\n').length, 5);
  t.true(para.includes('`npm ci && npm link && synplug demo`'), 'the first command of the set-up');
  t.regex(para, /`synplug setup [^`]+`/);
  t.regex(para, /`synplug protect [^`]* -- [^`]+`/);
});

test("the README's set-up is two commands on a fresh Debian machine, and .ci/run runs exactly the second", (t) => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Set-up on a fresh Debian machine'));
  const block = /^```sh\n([\s\S]*?)^```$/m.exec(section)?.[1] ?? '';
  const commands = block.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'));
  t.deepEqual(commands, ['npm ci && npm link && synplug demo', 'bash scripts/install-test-deps.sh && npm ci && npm test']);
  const ci = readFileSync(join(ROOT, '.ci/run'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('#') && !/^(set|cd) /.test(l));
  t.deepEqual(ci, [commands[1]]);
});
