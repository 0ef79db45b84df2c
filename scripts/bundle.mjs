// Bundle the two programs synplug starts, the CLI and the protect watchdog,
// into one CommonJS file each (dist/bundle/), with esbuild.
//
// Why: a cold `node` resolving and compiling some sixty ES modules spends
// tens of milliseconds before the first line of synplug runs; every command
// pays it, and `protect` pays it twice (synplug and its watchdog) while a
// reload waits. One CommonJS file loads with one read and one compile, and
// keeps lazy loading: a dynamic import() becomes a module initialised on first
// use, and a require() of a Node built-in stays where it was written (an ESM
// bundle would hoist every built-in import to the top and load them all).
//
// The library (the package's `exports`) stays tsc's output in dist/ for ES
// module users; CommonJS users get dist/cjs/ (below), compiled file by file. The `netlink` package stays external: it loads a
// native addon from its own directory.
//
// usage: node scripts/bundle.mjs   (after tsc; `npm run build` runs both)
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist/bundle');

const entries = [
  { in: 'src/cli/launch.ts', out: 'synplug' }, // package.json bin: loads cli.cjs with its code cache
  { in: 'src/cli/bin.ts', out: 'cli' },
  { in: 'src/cli/bin/watchdog-main.ts', out: 'watchdog-main' },
];
// (the demo's processes, its own and its clients', run on the library's CommonJS modules, dist/cjs/cli/bin/: no second build of them)

// only what this build makes (a bundle whose entry has gone must not stay to be packed)
rmSync(out, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: entries.map((e) => ({ in: e.in, out: e.out })),
  outdir: out,
  outExtension: { '.js': '.cjs' },
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['koffi'], // its native binary (glibc or musl, picked at run time) loads from node_modules
  // The sources are ES modules that locate files next to themselves with
  // import.meta.url (package.json, the watchdog's entry point); in a CommonJS
  // bundle that is the bundle's own file.
  define: { 'import.meta.url': '__synplug_bundle_url' },
  // (esbuild keeps bin.ts's #! line first, above the banner)
  banner: { js: "const __synplug_bundle_url = require('node:url').pathToFileURL(__filename).href;" },
  sourcemap: 'external', // for developers; the package ships no maps
  // whitespace only: names stay, so a stack trace still says which function (package size, #24 item 10)
  minifyWhitespace: true,
  legalComments: 'eof',
  logLevel: 'warning',
});
for (const e of entries) chmodSync(join(out, `${e.out}.cjs`), 0o755);

// The listing bundle (src/cli/launch.ts's short road for `show qdisc|class`):
// the socket, the tc decoders and the listing output, without the argument
// parser and the other commands; about a quarter of cli.cjs, so a listing
// reads, checks and runs less code before its dump.
await build({
  absWorkingDir: root,
  stdin: {
    contents: [
      "export { NetlinkConnection, setDefaultWarningHandler } from './src/netlink/connection.ts';",
      "export { eachClass } from './src/tc/class.ts';",
      "export { eachQdisc } from './src/tc/qdisc.ts';",
      "export { ListingOutput, formatClassText, formatQdiscText } from './src/tc/format.ts';",
    ].join('\n'),
    resolveDir: root,
    sourcefile: 'show-bundle.ts',
    loader: 'ts',
  },
  outfile: join(out, 'show.cjs'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['koffi'],
  define: { 'import.meta.url': '__synplug_bundle_url' },
  banner: { js: "const __synplug_bundle_url = require('node:url').pathToFileURL(__filename).href;" },
  sourcemap: 'external', // for developers; the package ships no maps
  // whitespace only: names stay, so a stack trace still says which function (package size, #24 item 10)
  minifyWhitespace: true,
  legalComments: 'eof',
  logLevel: 'warning',
});

// tsc never deletes what it emitted for a source that has since moved or
// gone (src/iptables/mark.ts -> src/guard/modes/): drop those outputs, so
// the package ships no module, and no map, whose source is not in src/.
const dist = join(root, 'dist');
for (const d of readdirSync(dist, { recursive: true, withFileTypes: true })) {
  if (!d.isFile()) continue;
  const file = join(d.parentPath ?? d.path, d.name);
  const rel = relative(dist, file);
  if (rel.startsWith('bundle') || rel.startsWith('cjs')) continue;
  const m = /^(.*?)(\.d)?\.js(\.map)?$|^(.*?)\.d\.ts(\.map)?$/.exec(rel);
  const base = m && (m[1] ?? m[4]);
  if (base !== undefined && !existsSync(join(root, 'src', `${base}.ts`))) rmSync(file);
}

// The library for CommonJS users (`require('synplug')`, package.json
// "exports" "require" conditions): every source file compiled on its own to
// CommonJS under dist/cjs/, same layout as tsc's ES modules in dist/, so
// `synplug` and `synplug/tc` required together share one copy of each
// module (one NetlinkError class). dist/cjs/package.json says "commonjs", so
// the files keep their .js names and their require('./x.js') calls. No
// source maps here (the ES modules' maps carry their sources).
const cjs = join(root, 'dist/cjs');
rmSync(cjs, { recursive: true, force: true });
const sources = readdirSync(join(root, 'src'), { recursive: true, withFileTypes: true })
  .filter((d) => d.isFile() && d.name.endsWith('.ts') && !d.name.endsWith('.d.ts'))
  .map((d) => relative(root, join(d.parentPath ?? d.path, d.name)));
await build({
  absWorkingDir: root,
  entryPoints: sources,
  outdir: cjs,
  outbase: 'src',
  bundle: false,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  // import() of a sibling module becomes a require, so a CommonJS program loads CommonJS
  supported: { 'dynamic-import': false },
  // files next to a module are found through import.meta.url: in CommonJS, the file itself
  define: { 'import.meta.url': '__synplug_module_url' },
  banner: { js: "'use strict';\nconst __synplug_module_url = require('node:url').pathToFileURL(__filename).href;" },
  sourcemap: false,
  // whitespace only, as the bundles: names stay (package size; the declarations keep the docs)
  minifyWhitespace: true,
  logLevel: 'warning',
});
// esbuild compiles each file as an ES module of a "type": "module" package, so
// `import * as kinds from './kinds/index.js'` becomes __toESM(require(...), 1),
// Node's semantics for a CommonJS module: an extra enumerable `default` (the
// whole module) beside the exports, which code iterating the namespace (the
// tc registries' kinds) then takes for one more kind. Our own modules are
// compiled ES modules (__esModule set): required without that flag, their
// namespace is their exports, as in the ES build.
for (const d of readdirSync(cjs, { recursive: true, withFileTypes: true })) {
  if (!d.isFile() || !d.name.endsWith('.js')) continue;
  const f = join(d.parentPath ?? d.path, d.name);
  const text = readFileSync(f, 'utf8');
  const fixed = text.replace(/__toESM\((require\("\.{1,2}\/[^"]+"\)),\s*1\)/g, '__toESM($1)');
  if (fixed !== text) writeFileSync(f, fixed);
}
writeFileSync(join(cjs, 'package.json'), `${JSON.stringify({ type: 'commonjs' }, null, 2)}\n`);
// tsc's declarations, next to the CommonJS files too: under dist/cjs they
// describe CommonJS modules, so a TypeScript program that is CommonJS
// (module node16/nodenext) types require('synplug') without TS1479. Only
// those a program can reach: the declarations of package.json's "exports"
// and what they import, transitively (a module no public type names, e.g.
// guard/state-fs, is not importable through "exports" and ships no types).
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const reach = Object.values(pkg.exports)
  .filter((e) => typeof e === 'object' && e.types)
  .map((e) => relative('dist/cjs', e.types.replace(/^\.\//, '')));
const declared = new Set();
while (reach.length > 0) {
  const rel = reach.pop();
  if (declared.has(rel)) continue;
  declared.add(rel);
  const text = readFileSync(join(dist, rel), 'utf8');
  // from './x.js', import('./x.js'), import './x.js', and a line's declare module './x.js' (an augmentation)
  for (const m of text.matchAll(/(?:\bfrom|\bimport\(?|^declare module)\s*['"](\.{1,2}\/[^'"]+)\.js['"]/gm)) {
    const dep = join(dirname(rel), `${m[1]}.d.ts`);
    if (!existsSync(join(dist, dep))) throw new Error(`bundle: ${rel} imports ${m[1]}.js, which has no declaration file`);
    reach.push(dep);
  }
}
for (const rel of declared) {
  mkdirSync(dirname(join(cjs, rel)), { recursive: true });
  copyFileSync(join(dist, rel), join(cjs, rel));
}

// The V8 code cache of show.cjs: made by a listing of this machine's qdiscs
// (the socket, a dump, the qdisc decoders, the JSON output). Where the build
// cannot open a netlink socket, there is no cache and listings compile it.
rmSync(join(out, 'show.cjs.v8cache'), { force: true });
spawnSync(process.execPath, [join(out, 'synplug.cjs'), 'show', 'qdisc', '--stats', '--json'], {
  env: { ...process.env, SYNPLUG_WRITE_CODE_CACHE: '1' },
  stdio: ['ignore', 'ignore', 'ignore'],
});

// The V8 code cache of cli.cjs (see src/cli/launch.ts): made by a run that
// compiles what most commands use: argument parsing, help, and the netlink
// and tc decoders (decoding a captured class dump, when the fixtures are
// here), so that a cold start needs no parsing or compiling of them.
rmSync(join(out, 'cli.cjs.v8cache'), { force: true });
const capture = join(root, 'fixtures/captures/13_class_dump/capture.pcap');
const args = existsSync(capture) ? ['decode', capture] : ['--help'];
const r = spawnSync(process.execPath, [join(out, 'synplug.cjs'), ...args], {
  env: { ...process.env, SYNPLUG_WRITE_CODE_CACHE: '1' },
  stdio: ['ignore', 'ignore', 'inherit'],
});
if (r.status !== 0 || !existsSync(join(out, 'cli.cjs.v8cache'))) {
  console.error(`bundle: making the code cache failed (status ${r.status}); synplug works without it, only starts slower`);
}
