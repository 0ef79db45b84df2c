/**
 * Live (the queue hold, this machine's kernel, a namespace of its own, the
 * CLI bundle): what a teardown does to the reload accounting.
 * - The metrics file setup recorded: teardown removes it (synplug's only),
 *   saying so, so that node_exporter's textfile collector stops exporting
 *   totals nothing updates any more; a setup without --metrics-file then
 *   writes none. rvu15 found it left in place and silently stale.
 * - A teardown during a protect: the queue hold's `holdMs` ends when its
 *   holder let the hold go at the teardown, not at the command's end.
 * And `protect --fail-on-loss` on a real loss: a client connects during the
 * hold to a port where nothing listens, and the hold ends at `--max-hold`
 * before the command (which exits 0): its SYN, released, is refused.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';

// biome-ignore lint/suspicious/noExplicitAny: the scenario's JSON result, asserted field by field
type Json = Record<string, any>;

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_TEARDOWN_ACCOUNTING_SCENARIO';
const BIN = fileURLToPath(new URL('../../dist/bundle/synplug.cjs', import.meta.url));
const ADDR = '169.254.78.2';

const synplug = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 60_000 });
const run = (args: string[]) => {
  const r = synplug(args);
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};

/** A state directory and a textfile directory (0755, as node_exporter's) in a fresh temporary directory. */
function dirs() {
  const base = mkdtempSync(join(tmpdir(), 'sp-td-acct-'));
  chmodSync(base, 0o755);
  const textfile = join(base, 'textfile');
  mkdirSync(textfile, { mode: 0o755 });
  return { base, sd: ['--state-dir', join(base, 'state')], prom: join(textfile, 'synplug.prom') };
}

/** A client that connects to ADDR:PORT at once (nothing listens: refused once released), then exits `code` after 1.2 s. */
const lateClient = (code: number) => [
  process.execPath,
  '-e',
  `const s = require('net').connect(39410, '${ADDR}'); s.on('error', () => {}); setTimeout(() => process.exit(${code}), 1200)`,
];

const scenarios = {
  async failOnLoss() {
    const { base, sd } = dirs();
    try {
      const setup = run(['setup', '--via', 'queue', '--addr', ADDR, ...sd]);
      const protect = (flags: string[], code: number) => {
        const r = run(['protect', '--json', '--max-hold', '400ms', ...flags, ...sd, '--', ...lateClient(code)]);
        return { code: r.code, stderr: r.stderr, json: r.stdout ? JSON.parse(r.stdout) : undefined };
      };
      return {
        setup,
        lost: protect(['--fail-on-loss'], 0),
        without: protect([], 0),
        own: protect(['--fail-on-loss'], 3),
      };
    } finally {
      run(['teardown', ...sd]);
      rmSync(base, { recursive: true, force: true });
    }
  },

  async metrics() {
    const { base, sd, prom } = dirs();
    try {
      const setup1 = run(['setup', '--via', 'queue', '--addr', ADDR, '--metrics-file', prom, ...sd]);
      const protect1 = run(['protect', ...sd, '--', 'true']);
      const written = existsSync(prom);
      const teardown1 = run(['teardown', '--json', ...sd]);
      const afterTeardown = existsSync(prom);
      // set up again without --metrics-file: nothing writes the file, and none is left to go stale
      const setup2 = run(['setup', '--via', 'queue', '--addr', ADDR, ...sd]);
      const protect2 = run(['protect', ...sd, '--', 'true']);
      const afterSetup2 = existsSync(prom);
      const teardown2 = run(['teardown', ...sd]);
      // a file at the recorded name that is not synplug's (replaced after setup): left alone, said so
      const setup3 = run(['setup', '--via', 'queue', '--addr', ADDR, '--metrics-file', prom, ...sd]);
      writeFileSync(prom, 'someone_else 1\n');
      const teardown3 = run(['teardown', '--json', ...sd]);
      const foreign = readFileSync(prom, 'utf8');
      return { setup1, protect1, written, teardown1, afterTeardown, setup2, protect2, afterSetup2, teardown2, setup3, teardown3, foreign };
    } finally {
      run(['teardown', ...sd]);
      rmSync(base, { recursive: true, force: true });
    }
  },

  async holdMs() {
    const { base, sd } = dirs();
    try {
      const setup = run(['setup', '--via', 'queue', '--addr', ADDR, ...sd]);
      // the command tears down at once, then runs on for 1.5 s
      const p = run([
        'protect',
        '--json',
        ...sd,
        '--',
        'sh',
        '-c',
        `"$0" "$1" teardown --state-dir "$2" >/dev/null && sleep 1.5`,
        process.execPath,
        BIN,
        sd[1],
      ]);
      return { setup, p };
    } finally {
      run(['teardown', ...sd]);
      rmSync(base, { recursive: true, force: true });
    }
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');

  test('teardown removes the metrics file setup recorded (saying so); a setup without --metrics-file then writes none; a file there that is not synplug’s is kept, said', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'metrics', 120_000);
    t.is(r.setup1.code, 0, r.setup1.stderr);
    t.is(r.protect1.code, 0, r.protect1.stderr);
    t.true(r.written, 'protect wrote the recorded metrics file');
    t.is(r.teardown1.code, 0, r.teardown1.stderr);
    const removed: string[] = JSON.parse(r.teardown1.stdout).removed;
    t.true(
      removed.some((x) => x.startsWith('the metrics file ') && /no longer written: node_exporter stops exporting synplug's series/.test(x)),
      JSON.stringify(removed),
    );
    t.false(r.afterTeardown, 'teardown removed it');
    t.is(r.setup2.code, 0, r.setup2.stderr);
    t.is(r.protect2.code, 0, r.protect2.stderr);
    t.false(r.afterSetup2, 'nothing wrote it again: no stale file');
    t.is(r.teardown2.code, 0, r.teardown2.stderr);
    t.is(r.setup3.code, 0, r.setup3.stderr);
    t.is(r.teardown3.code, 0, r.teardown3.stderr);
    const kept: string[] = JSON.parse(r.teardown3.stdout).kept;
    t.true(
      kept.some((x) => /^the metrics file .*: not a metrics file synplug wrote, left alone; nothing writes it any more/.test(x)),
      JSON.stringify(kept),
    );
    t.is(r.foreign, 'someone_else 1\n', 'not synplug’s: left as it was');
  });

  test('protect --fail-on-loss: exit 13 when the command exited 0 but a held client was refused; without it, 0; a command that failed keeps its own status', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'failOnLoss', 120_000);
    t.is(r.setup.code, 0, r.setup.stderr);
    for (const k of ['lost', 'without', 'own']) {
      t.true(r[k].json.report.refused >= 1, `${k}: the held client was refused once released (${JSON.stringify(r[k].json.report)})`);
      t.false(r[k].json.report.lossless, k);
    }
    t.is(r.lost.code, 13, r.lost.stderr);
    t.is(r.lost.json.exitCode, 0, "--json's exitCode stays the command's");
    t.regex(r.lost.stderr, /exit 13 \(--fail-on-loss\): the command exited 0, but the reload lost connections/);
    t.is(r.without.code, 0, r.without.stderr);
    t.is(r.own.code, 3, r.own.stderr);
  });

  test('a teardown during a protect: the queue hold’s holdMs ends when the teardown let the hold go, not at the command’s end', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'holdMs', 120_000);
    t.is(r.setup.code, 0, r.setup.stderr);
    t.is(r.p.code, 0, r.p.stderr);
    const j = JSON.parse(r.p.stdout);
    t.true(j.tornDown, r.p.stderr);
    t.true(j.report.holdMs < 1000, `holdMs ${j.report.holdMs}: the command ran 1.5 s after the teardown`);
    t.regex(r.p.stderr, /a teardown broke it, released the hold/);
  });
}
