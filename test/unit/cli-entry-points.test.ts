/**
 * The process entry points the library spawns by path (the protect watchdog,
 * the demo's client process) are the CLI layer's (src/cli/bin/), and the
 * path the library computes names a file that exists in every form the code
 * runs in: the sources (tsx), tsc's dist/, the CommonJS dist/cjs/ and the
 * CLI bundle dist/bundle/ (run `npm run build` first; scripts/test-all.sh
 * does). Also the layering rule of DESIGN.md section 2, made mechanical:
 * below src/cli nothing prints, exits or imports src/cli.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { watchdogEntryPath } from '../../src/guard/watchdog.js';
import { demoClientEntryPath } from '../../src/demo/client-process.js';
import { PongServer } from '../../src/demo/server.js';
import type { DemoClientReply } from '../../src/demo/client-child.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SRC = join(ROOT, 'src');

test('under tsx, the spawned entry points are the sources in src/cli/bin/', (t) => {
  t.is(watchdogEntryPath(), join(SRC, 'cli/bin/watchdog-main.ts'));
  t.is(demoClientEntryPath(), join(SRC, 'cli/bin/demo-client-main.ts'));
  t.true(existsSync(watchdogEntryPath()));
  t.true(existsSync(demoClientEntryPath()));
});

test('built, each form of the spawning module names an entry point that exists (tsc, CommonJS, the CLI bundle)', (t) => {
  t.true(existsSync(join(ROOT, 'dist/bundle/cli.cjs')), 'dist is built (npm run build)');
  const cases: Array<[string, string, string]> = [
    [watchdogEntryPath(join(ROOT, 'dist/guard/watchdog.js')), 'dist/cli/bin/watchdog-main.js', 'dist/guard/watchdog.js'],
    [watchdogEntryPath(join(ROOT, 'dist/cjs/guard/watchdog.js')), 'dist/cjs/cli/bin/watchdog-main.js', 'dist/cjs/guard/watchdog.js'],
    [watchdogEntryPath(join(ROOT, 'dist/bundle/cli.cjs')), 'dist/bundle/watchdog-main.cjs', 'dist/bundle/cli.cjs'],
    [demoClientEntryPath(join(ROOT, 'dist/demo/client-process.js')), 'dist/cli/bin/demo-client-main.js', 'dist/demo/client-process.js'],
    [demoClientEntryPath(join(ROOT, 'dist/cjs/demo/client-process.js')), 'dist/cjs/cli/bin/demo-client-main.js', 'dist/cjs/demo/client-process.js'],
    [demoClientEntryPath(join(ROOT, 'dist/bundle/cli.cjs')), 'dist/cjs/cli/bin/demo-client-main.js', 'dist/bundle/cli.cjs'],
  ];
  for (const [got, want, from] of cases) {
    t.true(existsSync(join(ROOT, from)), `${from} is built`);
    t.is(relative(ROOT, got), want, `from ${from}`);
    t.true(existsSync(got), `${want} exists`);
  }
});

/** Start a built watchdog entry point; resolves with its first stdout line and the child. */
function startBuilt(file: string) {
  const child = spawn(process.execPath, [file], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const first = new Promise<string>((done) => createInterface({ input: child.stdout }).once('line', done));
  return { child, first, exited, stderr: () => stderr };
}

for (const file of ['dist/bundle/watchdog-main.cjs', 'dist/cli/bin/watchdog-main.js']) {
  test(`${file} starts (ready), and exits 0 without a word on 'done' and on the end of its input unarmed`, async (t) => {
    for (const how of ['done', 'eof'] as const) {
      const w = startBuilt(join(ROOT, file));
      t.is(await w.first, 'ready');
      if (how === 'done') w.child.stdin.end('{"op":"done"}\n');
      else w.child.stdin.end();
      t.is(await w.exited, 0, how);
      t.is(w.stderr(), '', how);
    }
  });
}

test('dist/cjs/cli/bin/demo-client-main.js without an IPC channel says so and exits 2', async (t) => {
  const c = startBuilt(join(ROOT, 'dist/cjs/cli/bin/demo-client-main.js'));
  c.child.stdin.end();
  t.is(await c.exited, 2);
  t.is(c.stderr(), 'synplug demo client: start me with an IPC channel (synplug demo --inbound does)\n');
});

test('dist/cjs/cli/bin/demo-client-main.js over its IPC channel: ready, a phase of loops against a pong server on 127.0.0.1, its records, exit 0', async (t) => {
  const server = await PongServer.start('127.0.0.1');
  t.teardown(() => server.close());
  const child = spawn(process.execPath, [join(ROOT, 'dist/cjs/cli/bin/demo-client-main.js')], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const next = (type: DemoClientReply['type']) =>
    new Promise<DemoClientReply>((done) => {
      const on = (m: DemoClientReply) => {
        if (m.type !== type) return;
        child.off('message', on);
        done(m);
      };
      child.on('message', on);
    });
  await next('ready');
  const started = next('started');
  child.send({ type: 'start', host: '127.0.0.1', port: server.port, clients: 2, timeoutMs: 5000 });
  await started;
  for (const until = Date.now() + 20_000; server.accepted < 4 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
  const records = next('records');
  child.send({ type: 'stop' });
  const r = (await records) as Extract<DemoClientReply, { type: 'records' }>;
  t.true(r.records.length >= 4, `${r.records.length} records`);
  t.true(
    r.records.every((x) => x.failure === null),
    JSON.stringify(r.records.filter((x) => x.failure !== null)),
  );
  child.send({ type: 'exit' });
  t.is(await exited, 0);
});

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') && !p.endsWith('.d.ts') ? [p] : [];
  });
}

test('below src/cli, no module prints, exits, or imports src/cli (DESIGN.md section 2)', (t) => {
  const found: string[] = [];
  const files = tsFiles(SRC).filter((f) => !relative(SRC, f).startsWith('cli/'));
  t.true(files.length > 50, `found ${files.length} files`);
  for (const f of files) {
    const code = readFileSync(f, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/^\s*\/\/.*$/gm, '');
    const rel = relative(SRC, f);
    for (const m of code.matchAll(/\bprocess\.(exit|exitCode|stdout\.write|stderr\.write)\b|\bconsole\.\w+/g)) found.push(`${rel}: ${m[0]}`);
    for (const m of code.matchAll(/(?:from\s+|import\(\s*)['"](\.[^'"]+)['"]/g)) {
      if (relative(SRC, resolve(dirname(f), m[1])).startsWith('cli/')) found.push(`${rel}: imports ${m[1]}`);
    }
  }
  t.deepEqual(found, []);
});
