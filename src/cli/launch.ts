#!/usr/bin/env node
/**
 * The `synplug` executable as installed (package.json `bin`, bundled by
 * scripts/bundle.mjs into dist/bundle/synplug.cjs): it loads the CLI bundle
 * (dist/bundle/cli.cjs) with the V8 code cache made at build time
 * (cli.cjs.v8cache), so that a cold start does not parse and compile half a
 * megabyte of JavaScript again. Every command pays its start-up, and
 * `protect` pays it while a reload waits.
 *
 * Listings of qdiscs and classes in their plain forms (`show qdisc [--dev X]`,
 * `show class --dev X`, each with `-s`/`--stats` and `--json`, nothing else)
 * take a shorter road: the small listing bundle (dist/bundle/show.cjs: the
 * socket, the tc decoders and {@link ListingOutput}, a quarter of the CLI's
 * size), without the argument parser and the other commands. It prints
 * exactly what the CLI prints (the same ListingOutput), and only once the
 * listing succeeded: on any error, nothing has been printed and the full
 * CLI runs the command again, to report it as it always does (its message,
 * `--json` error object and exit code).
 *
 * The caches are only an accelerator: V8 checks each against the source,
 * its own version and its flags, and a missing, unreadable or rejected cache
 * means a normal compile. A cache only serves the Node version that made
 * it, so the npm package ships none: the first run under a given Node writes
 * one beside the bundle when it had none or V8 rejected it, and only where
 * that is safe (the directory belongs to the user running synplug and no
 * other user can write to it; written to a new file, then renamed over).
 * A read-only installation simply compiles each time.
 *
 * `SYNPLUG_WRITE_CODE_CACHE=1` (the build) always writes the cache of the
 * bundle a run loaded; `SYNPLUG_WRITE_CODE_CACHE=0` never does. Either way
 * it is written when the process exits, after the run has compiled the
 * functions it used.
 *
 * It runs from dist/bundle/ only (tsc's copy in dist/cli/ has no cli.cjs
 * beside it); it is not part of the library.
 * @module
 */
import { readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { createRequire, wrap } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
import type { NetlinkConnection, NetlinkWarning } from '../netlink/connection.js';
import type { eachClass } from '../tc/class.js';
import type { formatClassText, formatQdiscText, ListingOutput } from '../tc/format.js';
import type { eachQdisc } from '../tc/qdisc.js';
import { watchOutput } from './output.js';

const here = dirname(fileURLToPath(import.meta.url));

/** Load a CommonJS bundle beside this file through its V8 code cache; returns its exports. */
function load(name: string): unknown {
  const file = join(here, name);
  // esbuild writes ASCII (non-ASCII characters are escaped), so latin1 reads the same text with no UTF-8 decoding
  const source = readFileSync(file, 'latin1').replace(/^#!.*/, '');
  const cacheFile = `${file}.v8cache`;
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    /* no cache: compile */
  }
  const script = new Script(wrap(source), { filename: file, cachedData });
  const write = process.env.SYNPLUG_WRITE_CODE_CACHE;
  if (write === '1') {
    process.once('exit', () => writeFileSync(cacheFile, script.createCachedData()));
  } else if (write !== '0' && (cachedData === undefined || script.cachedDataRejected === true)) {
    process.once('exit', () => writeCacheIfSafe(cacheFile, () => script.createCachedData()));
  }
  const mod = { exports: {} as unknown, filename: file };
  (script.runInThisContext() as (...a: unknown[]) => void).call(mod.exports, mod.exports, createRequire(file), mod, file, here);
  return mod.exports;
}

/**
 * Write a code cache beside the bundle, when the bundle's directory belongs
 * to this user and no other user can write to it: into a new file, then
 * renamed over the cache (a concurrent run reads the old cache or the new
 * one, never half of one). Any failure leaves things as they were.
 */
function writeCacheIfSafe(cacheFile: string, data: () => Buffer): void {
  const tmp = `${cacheFile}.${process.pid}.tmp`;
  try {
    const dir = statSync(dirname(cacheFile));
    if (dir.uid !== process.getuid?.() || (dir.mode & 0o022) !== 0) return;
    writeFileSync(tmp, data(), { flag: 'wx', mode: 0o644 });
    renameSync(tmp, cacheFile);
  } catch {
    try {
      unlinkSync(tmp);
    } catch {
      /* never made */
    }
  }
}

/** What dist/bundle/show.cjs exports (scripts/bundle.mjs builds it). */
interface ShowBundle {
  NetlinkConnection: typeof NetlinkConnection;
  setDefaultWarningHandler(handler: ((w: NetlinkWarning) => void) | undefined): void;
  eachClass: typeof eachClass;
  eachQdisc: typeof eachQdisc;
  ListingOutput: typeof ListingOutput;
  formatClassText: typeof formatClassText;
  formatQdiscText: typeof formatQdiscText;
}

/** A listing the short road takes. */
interface Listing {
  object: 'class' | 'qdisc';
  dev?: string;
  stats: boolean;
  json: boolean;
}

/**
 * The listing `args` (argv after node and the script) asks for, when it is
 * one the short road takes: `show`, then `class` or `qdisc` and the options
 * `--dev NAME` (`--dev=NAME`), `-s`/`--stats`, `--json`, each at most once, in
 * any order; `class` needs `--dev`. Anything else (another option, a value
 * that looks like an option, help...) is the full CLI's.
 */
function shortListing(args: readonly string[]): Listing | undefined {
  if (args[0] !== 'show') return undefined;
  let object: string | undefined;
  let dev: string | undefined;
  let stats = false;
  let json = false;
  for (let i = 1; i < args.length; i++) {
    const a = args[i];
    if (a === '--json' && !json) json = true;
    else if ((a === '-s' || a === '--stats') && !stats) stats = true;
    else if (a === '--dev' && dev === undefined && i + 1 < args.length) dev = args[++i];
    else if (a.startsWith('--dev=') && dev === undefined) dev = a.slice(6);
    else if (!a.startsWith('-') && object === undefined) object = a;
    else return undefined;
  }
  if (dev !== undefined && (dev === '' || dev.startsWith('-'))) return undefined;
  if (object === 'class' && dev !== undefined) return { object, dev, stats, json };
  if (object === 'qdisc') return { object, dev, stats, json };
  return undefined;
}

/**
 * Run a listing on the short road. Resolves true when it printed the
 * listing, false when it failed before printing anything (the full CLI then
 * runs the command again and reports the failure).
 */
async function listShort(l: Listing): Promise<boolean> {
  let printOut: (() => void) | undefined;
  const warnings: string[] = [];
  try {
    const show = load('show.cjs') as ShowBundle;
    // the CLI prints the kernel's warnings on stderr as they come, i.e. before the listing
    show.setDefaultWarningHandler((w) => warnings.push(`synplug: warning: ${w.message} (${w.requestType})\n`));
    const conn = show.NetlinkConnection.open(0 /* NETLINK_ROUTE */);
    try {
      const { dev, stats, json } = l;
      if (l.object === 'class') {
        const out = new show.ListingOutput(json, (x: Parameters<typeof formatClassText>[0]) => show.formatClassText(x, { stats }));
        await show.eachClass(conn, { dev, stats }, out.add);
        printOut = () => out.write(toStdout);
      } else {
        const out = new show.ListingOutput(json, (q: Parameters<typeof formatQdiscText>[0]) => show.formatQdiscText(q, { stats, showDev: dev === undefined }));
        await show.eachQdisc(conn, { dev, stats }, out.add);
        printOut = () => out.write(toStdout);
      }
    } finally {
      conn.close();
    }
  } catch {
    return false;
  }
  watchOutput();
  for (const w of warnings) process.stderr.write(w);
  printOut();
  process.exitCode = 0;
  return true;
}

const toStdout = (chunk: string): void => {
  process.stdout.write(chunk);
};

const listing = process.env.SYNPLUG_FULL_CLI === '1' ? undefined : shortListing(process.argv.slice(2));
if (listing) {
  listShort(listing).then((done) => {
    if (!done) load('cli.cjs');
  });
} else {
  load('cli.cjs');
}
