/**
 * Live (the queue hold, this machine's kernel, a namespace of its own, the
 * CLI bundle): a teardown run while a protect holds (here by the protected
 * command itself). rv19 found the protect re-creating files in the state
 * directory teardown had cleared, the directory itself when teardown had
 * removed it (lock, leases.json, plug.json, a history line). Now the
 * protect, finding its lease broken and the records gone, writes nothing
 * there, and says so; the directory stays as teardown left it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';

// biome-ignore lint/suspicious/noExplicitAny: the scenario's JSON result, asserted field by field
type Json = Record<string, any>;

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_TEARDOWN_DURING_PROTECT_SCENARIO';
const BIN = fileURLToPath(new URL('../../dist/bundle/synplug.cjs', import.meta.url));

const synplug = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 60_000 });

const scenarios = {
  async during() {
    const base = mkdtempSync(join(tmpdir(), 'sp-td-protect-'));
    const dir = join(base, 'state');
    try {
      const sd = ['--state-dir', dir];
      const set = synplug(['setup', '--via', 'queue', '--addr', '169.254.78.1', ...sd]).status;
      // setup created the directory: teardown removes it
      const p1 = synplug(['protect', ...sd, '--', process.execPath, BIN, 'teardown', ...sd]);
      const after1 = existsSync(dir) ? readdirSync(dir) : null;
      // a history to keep: teardown keeps the directory with it
      synplug(['setup', '--via', 'queue', '--addr', '169.254.78.1', ...sd]);
      synplug(['protect', ...sd, '--', 'true']);
      const before = readFileSync(join(dir, 'history.jsonl'), 'utf8');
      const p2 = synplug(['protect', ...sd, '--', process.execPath, BIN, 'teardown', ...sd]);
      const after2 = readdirSync(dir).sort();
      const history2 = readFileSync(join(dir, 'history.jsonl'), 'utf8');
      return {
        set,
        p1: { code: p1.status, stderr: p1.stderr, stdout: p1.stdout },
        after1,
        p2: { code: p2.status, stderr: p2.stderr },
        after2,
        before,
        history2,
      };
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  },
  async partial() {
    const base = mkdtempSync(join(tmpdir(), 'sp-td-partial-'));
    const dir = join(base, 'state');
    try {
      const sd = ['--state-dir', dir];
      const set = synplug(['setup', '--via', 'queue', '--addr', '169.254.78.1', ...sd]).status;
      // the protected command tears down the one hold it holds, by --local and by its id
      const local = synplug(['protect', ...sd, '--', process.execPath, BIN, 'teardown', '--local', ...sd]);
      const byId = synplug(['protect', ...sd, '--', process.execPath, BIN, 'teardown', '--hold', 'queue', '--json', ...sd]);
      const check = synplug(['check', ...sd]).status;
      const after = synplug(['teardown', '--local', ...sd]);
      return {
        set,
        local: { code: local.status, stderr: local.stderr },
        byId: { code: byId.status, stdout: byId.stdout },
        check,
        after: { code: after.status, stdout: after.stdout },
      };
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');

  test('a teardown during a protect: the protect re-creates nothing in the state directory teardown cleared (nor the directory it removed)', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'during', 90_000);
    t.is(r.set, 0);
    t.is(r.p1.code, 0, r.p1.stderr);
    t.regex(r.p1.stdout, /removed the state directory \(setup had created it\)/, "the teardown (its output is the command's)");
    // the teardown says first that it ended a running protect's hold: which one, and what becomes of it
    t.regex(
      r.p1.stdout,
      /^ENDED the hold of a running protect: pid \d+ \(.* teardown .*\), held \S+ since \S+\. Its hold was released and removed: its command goes on, no longer held/,
    );
    t.is(r.after1, null, `the directory teardown removed stays removed (found: ${JSON.stringify(r.after1)})`);
    t.regex(
      r.p1.stderr,
      /a teardown broke it, released the hold and removed the records of .*, where nothing is recorded again \(no history line, no metrics\)/,
    );
    t.regex(r.p1.stderr, /held new connections for [\d.]+ ms, until a teardown ended the hold/, 'one cause, the teardown, in both sentences');
    t.is(r.p2.code, 0, r.p2.stderr);
    t.deepEqual(r.after2, ['history.jsonl'], 'only what teardown kept');
    t.is(r.history2, r.before, 'no line added after the teardown');
  });

  test('a teardown of the one hold a protect holds (--local, --hold ID) is refused (exit 7), naming the protect; nothing is removed', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'partial', 90_000);
    t.is(r.set, 0);
    t.is(r.local.code, 7, r.local.stderr);
    t.regex(r.local.stderr, /teardown of the queue hold: it is holding now \('synplug protect' \(.*\) pid \d+, until \S+\)/);
    t.regex(r.local.stderr, /Nothing was removed/);
    t.is(r.byId.code, 7);
    const o = JSON.parse(r.byId.stdout) as Json;
    t.is(o.error?.category ?? o.category, 'foreign-state', r.byId.stdout);
    t.is(r.check, 0, 'the hold is still set up, whole');
    t.is(r.after.code, 0, 'after the protect, the same teardown runs');
    t.regex(r.after.stdout, /removed/);
  });
}
