/**
 * The npm tarball carries the licence package.json names (npm always packs
 * LICENSE, whatever "files" says), and packed tarballs stay out of git; the
 * packed package works for CommonJS (require) and ES module (import) users
 * from one build of the library, and ships what a user runs and nothing
 * twice (issue #24 item 10).
 */
import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
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

/**
 * The packed package, installed as a user would get it: `npm pack` of the
 * built tree (run `npm run build` first; scripts/test-all.sh does), unpacked
 * into a temporary node_modules/synplug, with the package's dependencies
 * linked from this checkout's node_modules.
 */
function installPacked(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sp-pack-'));
  const out = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const [{ filename }] = JSON.parse(out) as Array<{ filename: string }>;
  const mods = join(dir, 'node_modules');
  mkdirSync(mods);
  execFileSync('tar', ['-xzf', join(dir, filename), '-C', mods]);
  renameSync(join(mods, 'package'), join(mods, 'synplug'));
  const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { dependencies: Record<string, string> };
  for (const dep of Object.keys(pkg.dependencies)) symlinkSync(join(ROOT, 'node_modules', dep), join(mods, dep));
  return dir;
}

let installed: string | undefined;
const packed = (): string => (installed ??= installPacked());
test.after.always(() => {
  if (installed) rmSync(installed, { recursive: true, force: true });
});

/** Run a script with node in the install directory; its stdout, trimmed. */
function nodeIn(dir: string, args: string[]): string {
  return execFileSync(process.execPath, args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

test.serial('CommonJS users can require synplug and each subpath; the subpaths share one copy of each module', (t) => {
  t.true(existsSync(`${ROOT}dist/cjs/index.js`), 'dist/cjs is built (npm run build)');
  const out = nodeIn(packed(), [
    '-e',
    [
      "const s = require('synplug'), nl = require('synplug/netlink'), tc = require('synplug/tc'), nft = require('synplug/iptables'), testing = require('synplug/netlink/testing');",
      'console.log(JSON.stringify({',
      '  root: [typeof s.NetlinkConnection, typeof s.SynplugError, typeof s.UsageError],',
      '  tc: [typeof tc.addQdisc, typeof tc.plugBuffer, typeof tc.parseHandle],',
      '  nft: typeof nft.parseAddress, testing: typeof testing.FakeTransport,',
      '  same: s.NetlinkError === nl.NetlinkError && s.UsageError === nl.UsageError,',
      "  handle: tc.parseHandle('1:4'), ip: nl.formatIp(nl.parseIp('::ffff:169.254.3.4').bytes),",
      '}));',
    ].join('\n'),
  ]);
  t.deepEqual(JSON.parse(out), {
    root: ['function', 'function', 'function'],
    tc: ['function', 'function', 'function'],
    nft: 'function',
    testing: 'function',
    same: true,
    handle: 0x10004,
    ip: '::ffff:169.254.3.4',
  });
  // a UsageError thrown by a required module is an instance of the class the root exports
  const err = nodeIn(packed(), [
    '-e',
    "const s = require('synplug'), tc = require('synplug/tc'); try { tc.parseHandle('x:'); } catch (e) { console.log(e instanceof s.UsageError, e.category); }",
  ]);
  t.is(err, 'true usage');
});

test.serial('ES module users can import synplug and each subpath from the same package', (t) => {
  const out = nodeIn(packed(), [
    '--input-type=module',
    '-e',
    [
      "const s = await import('synplug'); const tc = await import('synplug/tc'); const nl = await import('synplug/netlink');",
      "const testing = await import('synplug/netlink/testing');",
      'console.log(JSON.stringify([typeof s.NetlinkConnection, typeof tc.addQdisc, s.NetlinkError === nl.NetlinkError, typeof testing.FakeTransport, tc.parseHandle("1:")]));',
    ].join('\n'),
  ]);
  t.deepEqual(JSON.parse(out), ['function', 'function', true, 'function', 0x10000]);
});

test('the package ships what a user runs, once: one library form, the CLI bundles, no source maps, no code cache, at most 4 MB unpacked', (t) => {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const [{ files, unpackedSize }] = JSON.parse(out) as Array<{ files: Array<{ path: string; size: number }>; unpackedSize: number }>;
  const paths = files.map((f) => f.path);
  t.true(existsSync(`${ROOT}dist/bundle/cli.cjs`) && existsSync(`${ROOT}dist/cjs/index.js`), 'built (npm run build)');
  t.true(unpackedSize <= 4 * 1024 * 1024, `unpacked ${unpackedSize} bytes`);
  t.deepEqual(
    paths.filter((p) => p.endsWith('.map') || p.endsWith('.v8cache')),
    [],
    'no source maps (a user runs no map) and no code cache (it serves only the Node version that made it: the first run writes one)',
  );
  // the library once, as CommonJS, which import and require both load (one copy of each module, one NetlinkError class)
  t.deepEqual(
    paths.filter((p) => p.startsWith('dist/') && !p.startsWith('dist/cjs/') && !p.startsWith('dist/bundle/')),
    [],
    'no second build of the library',
  );
  // the CLI ships once, as bundles; of dist/cjs/cli only the entry points of the demo's processes, which run on the library's modules
  t.deepEqual(paths.filter((p) => p.startsWith('dist/cjs/cli/') && p.endsWith('.js')).sort(), [
    'dist/cjs/cli/bin/demo-client-main.js',
    'dist/cjs/cli/bin/demo-main.js',
    'dist/cjs/cli/exit-codes.js',
  ]);
  t.deepEqual(paths.filter((p) => p.startsWith('dist/bundle/')).sort(), [
    'dist/bundle/cli.cjs',
    'dist/bundle/show.cjs',
    'dist/bundle/synplug.cjs',
    'dist/bundle/watchdog-main.cjs',
  ]);
  const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { exports: Record<string, string | { types: string; default: string }> };
  for (const [sub, target] of Object.entries(pkg.exports)) {
    const files = typeof target === 'string' ? [target] : [target.types, target.default];
    for (const f of files) t.true(paths.includes(f.replace(/^\.\//, '')), `${sub}: ${f} is in the package`);
  }
  // declarations only where a program can reach them: from the exports' types, through their imports
  const reachable = new Set<string>();
  const todo = Object.values(pkg.exports).flatMap((e) => (typeof e === 'string' ? [] : [e.types.replace(/^\.\//, '')]));
  for (let f = todo.pop(); f !== undefined; f = todo.pop()) {
    if (reachable.has(f)) continue;
    reachable.add(f);
    for (const m of readFileSync(join(ROOT, f), 'utf8').matchAll(/(?:\bfrom|\bimport\(?|^declare module)\s*['"](\.{1,2}\/[^'"]+)\.js['"]/gm))
      todo.push(join(dirname(f), `${m[1]}.d.ts`));
  }
  t.deepEqual(
    paths.filter((p) => p.endsWith('.d.ts')).sort(),
    [...reachable].sort(),
    'every declaration an exported type reaches, and no other (an internal module is not importable through "exports")',
  );
});

test.serial("the demo's own process starts from the installed package (its entry point and every module it loads are packed)", (t) => {
  const entry = join(packed(), 'node_modules', 'synplug', 'dist', 'cjs', 'cli', 'bin', 'demo-main.js');
  // without an IPC channel it loads everything, then refuses with exit 2 and a message
  const r = spawnSync(process.execPath, [entry], { encoding: 'utf8' });
  t.is(r.status, 2, r.stderr);
  t.regex(r.stderr, /start me with an IPC channel/);
});

test.serial('the installed CLI writes its code cache on its first run where the bundle directory is its own, and uses it after', (t) => {
  const bundle = join(packed(), 'node_modules', 'synplug', 'dist', 'bundle');
  const cache = join(bundle, 'cli.cjs.v8cache');
  t.false(existsSync(cache));
  const run = () =>
    spawnSync(process.execPath, [join(bundle, 'synplug.cjs'), '--version'], { encoding: 'utf8', env: { ...process.env, SYNPLUG_WRITE_CODE_CACHE: '' } });
  const first = run();
  t.is(first.status, 0, first.stderr);
  t.true(existsSync(cache), 'written by the first run');
  const size = readFileSync(cache).length;
  t.true(size > 0);
  const second = run();
  t.is(second.stdout, first.stdout);
  t.is(readFileSync(cache).length, size, 'accepted by the second run: not written again');
  // a directory another user could write to gets no cache from us
  rmSync(cache);
  execFileSync('chmod', ['g+w', bundle]);
  try {
    t.is(run().status, 0);
    t.false(existsSync(cache), 'a group-writable bundle directory: no cache written');
  } finally {
    execFileSync('chmod', ['g-w', bundle]);
  }
});

test.serial('TypeScript programs type-check against the package: CommonJS (require) and ES module (import), module nodenext', (t) => {
  const dir = packed();
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  writeFileSync(
    join(dir, 'use.cts'),
    [
      "import synplug = require('synplug');",
      "import tc = require('synplug/tc');",
      "const h: number = tc.parseHandle('1:4');",
      'const e: synplug.ErrorCategory = new synplug.UsageError(String(h)).category;',
      'export { e };',
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'use.mts'),
    [
      "import { UsageError, type ErrorCategory } from 'synplug';",
      "import { parseHandle, type HtbOptions } from 'synplug/tc';",
      "import type { NetlinkMessage } from 'synplug/netlink';",
      "import type { FakeTransport } from 'synplug/netlink/testing';",
      "import type { NftFamily } from 'synplug/iptables';",
      'export type Every = [NetlinkMessage, FakeTransport, NftFamily];',
      "const o: HtbOptions = { default: parseHandle('1:4') };",
      'const e: ErrorCategory = new UsageError(String(o.default)).category;',
      'export { e };',
    ].join('\n'),
  );
  const args = [
    tsc,
    '--noEmit',
    '--strict',
    '--module',
    'nodenext',
    '--moduleResolution',
    'nodenext',
    '--types',
    'node',
    '--typeRoots',
    join(ROOT, 'node_modules/@types'),
    'use.cts',
    'use.mts',
  ];
  const r = spawnSync(process.execPath, args, { cwd: dir, encoding: 'utf8' });
  t.is(r.stdout + r.stderr, '');
  t.is(r.status, 0);
});
