#!/usr/bin/env node
/**
 * The `synplug` executable as installed (package.json `bin`, bundled by
 * scripts/bundle.mjs into dist/bundle/synplug.cjs): it loads the CLI bundle
 * (dist/bundle/cli.cjs) with the V8 code cache made at build time
 * (cli.cjs.v8cache), so that a cold start does not parse and compile half a
 * megabyte of JavaScript again. Every command pays its start-up, and
 * `protect` pays it while a reload waits.
 *
 * The cache is only an accelerator: V8 checks it against the source, its own
 * version and its flags, and a missing, unreadable or rejected cache means a
 * normal compile. Nothing is written at run time (installations are often
 * read-only).
 *
 * `SYNPLUG_WRITE_CODE_CACHE=1` (the build) writes the cache when the process
 * exits, after the command run has compiled the functions it used.
 *
 * It runs from dist/bundle/ only (tsc's copy in dist/cli/ has no cli.cjs
 * beside it); it is not part of the library.
 * @module
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire, wrap } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

const here = dirname(fileURLToPath(import.meta.url));
const file = join(here, 'cli.cjs');
const source = readFileSync(file, 'utf8').replace(/^#!.*/, '');
const cacheFile = `${file}.v8cache`;
let cachedData: Buffer | undefined;
try {
  cachedData = readFileSync(cacheFile);
} catch {
  /* no cache: compile */
}
const script = new Script(wrap(source), { filename: file, cachedData });
if (process.env.SYNPLUG_WRITE_CODE_CACHE === '1') {
  process.once('exit', () => writeFileSync(cacheFile, script.createCachedData()));
}
const mod = { exports: {} as unknown, filename: file };
(script.runInThisContext() as (...a: unknown[]) => void).call(mod.exports, mod.exports, createRequire(file), mod, file, here);
