/**
 * A SIGINT (or SIGTERM) that reaches `synplug demo` before the demo's own
 * process handles signals (src/demo/isolated.ts runDemoIsolated): while that
 * process is still loading (a cold Node start), the signal passed on killed
 * it and the demo said "the demo's process was killed by SIGINT without an
 * answer", exit 1 (a fresh user's Ctrl-C at about 0.25 s); one that came
 * before that process existed was swallowed and the demo ran on. Now both
 * are `interrupted` (exit 130). The demo's process is a stand-in that
 * never answers (it says it started by making a file, then waits);
 * runDemoIsolated itself runs in this process, as root, and makes its
 * network namespace as it does for the CLI.
 */
import test from 'ava';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDemoIsolated } from '../../src/demo/isolated.js';
import { exitCodeOf } from '../../src/cli/exit-codes.js';
import { SynplugError } from '../../src/netlink/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'synplug-demo-early-'));
const started = join(dir, 'started');
const entry = join(dir, 'demo-main-standin.cjs');
// loads, says it started (a file), and waits: no IPC answer, no signal handler (the default: a signal kills it)
writeFileSync(entry, `require('node:fs').writeFileSync(${JSON.stringify(started)}, ''); setInterval(() => {}, 1000);\n`);
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 3000 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!cond()) throw new Error(`timed out waiting for ${what}`);
}

const INTERRUPTED =
  /^demo interrupted by SIGINT: it stopped before starting its server and clients \(what it had begun went with its network namespace; this one was not changed\)$/;

test.serial(
  "regression: SIGINT while the demo's process is starting (it dies of it): interrupted, exit 130, not 'killed by SIGINT without an answer' (exit 1)",
  async (t) => {
    rmSync(started, { force: true });
    const run = runDemoIsolated({ seconds: 1, stateDir: dir }, entry);
    await until(() => existsSync(started), "the demo's process to start");
    process.emit('SIGINT', 'SIGINT');
    const e = await t.throwsAsync(run, { instanceOf: SynplugError });
    t.regex(e!.message, INTERRUPTED);
    t.is(e!.category, 'interrupted');
    t.is(exitCodeOf(e), 130);
  },
);

test.serial(
  "regression: SIGINT before the demo's process exists: interrupted (exit 130), and it is never started (the signal was swallowed and the demo ran on)",
  async (t) => {
    rmSync(started, { force: true });
    // runDemoIsolated runs up to its first wait (the new namespace's lo set up) before this line
    const run = runDemoIsolated({ seconds: 1, stateDir: dir }, entry);
    process.emit('SIGINT', 'SIGINT');
    const e = await t.throwsAsync(run, { instanceOf: SynplugError });
    t.regex(e!.message, INTERRUPTED);
    t.is(exitCodeOf(e), 130);
    t.false(existsSync(started), "the demo's process was not started");
  },
);
