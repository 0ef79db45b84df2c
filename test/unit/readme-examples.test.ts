/**
 * The TypeScript examples of the shipped documentation (the README and
 * docs/library.md) type-check against the package's own sources: each
 * ```ts block is a module of its own, `synplug` and its subpaths mapped to
 * src/ as package.json's `exports` map them to dist/. An example that names
 * an option, a field or an export the library does not have fails here.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOCS = ['README.md', 'docs/library.md'];

/** The ```ts blocks of a Markdown file. */
function tsBlocks(md: string): string[] {
  return [...md.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
}

/** package.json's export subpaths, each mapped to the source file its dist/ entry is built from. */
function sourcePaths(): Record<string, string[]> {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, { default: string } | string> };
  const paths: Record<string, string[]> = {};
  for (const [sub, target] of Object.entries(pkg.exports)) {
    if (typeof target === 'string') continue;
    paths[join('synplug', sub)] = [join(ROOT, target.default.replace(/^\.\/dist\/cjs\//, 'src/').replace(/\.js$/, '.ts'))];
  }
  return paths;
}

test('the examples of the README and docs/library.md type-check against the library', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'synplug-examples-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const files: string[] = [];
  for (const doc of DOCS)
    tsBlocks(readFileSync(join(ROOT, doc), 'utf8')).forEach((code, i) => {
      const file = join(dir, `${doc.replace(/\W/g, '_')}_${i}.ts`);
      // a module of its own (top-level await needs one)
      writeFileSync(file, `${code}\nexport {};\n`);
      files.push(file);
    });
  t.true(files.length >= 2, `${files.length} examples`);
  const paths = sourcePaths();
  t.deepEqual(Object.keys(paths).sort(), ['synplug', 'synplug/iptables', 'synplug/netlink', 'synplug/netlink/testing', 'synplug/tc']);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'es2022',
        module: 'esnext',
        moduleResolution: 'bundler',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: ['node'],
        typeRoots: [join(ROOT, 'node_modules/@types')],
        paths,
      },
      files,
    }),
  );
  const r = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(dir, 'tsconfig.json')], { encoding: 'utf8' });
  t.is(r.stdout + r.stderr, '');
  t.is(r.status, 0);
});
