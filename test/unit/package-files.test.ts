/**
 * The npm tarball carries the licence package.json names (npm always packs
 * LICENSE, whatever "files" says), and packed tarballs stay out of git.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

test('LICENSE is the MIT licence package.json declares, and npm pack includes it', (t) => {
  const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { license: string };
  t.is(pkg.license, 'MIT');
  const text = readFileSync(`${ROOT}LICENSE`, 'utf8');
  t.regex(text, /^MIT License\n\nCopyright \(c\) 2026 synplug contributors\n/);
  t.regex(text, /Permission is hereby granted, free of charge/);
  // --ignore-scripts: list what would be packed without running "prepare" (the build)
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const [{ files }] = JSON.parse(out) as Array<{ files: Array<{ path: string }> }>;
  const paths = files.map((f) => f.path);
  t.true(paths.includes('LICENSE'), paths.slice(0, 10).join(' '));
  t.true(paths.includes('README.md'));
});

test('.gitignore keeps npm pack tarballs out', (t) => {
  t.true(readFileSync(`${ROOT}.gitignore`, 'utf8').split('\n').includes('*.tgz'));
});
