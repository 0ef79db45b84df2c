/**
 * `synplug demo --here` while a manual `synplug plug` holds the hold it would
 * use (its watchdog alive, before its --max-hold): refused at once (exit 8),
 * naming the plug (pid, hold, deadline) and how to end it ('synplug release'
 * with the same --state-dir); nothing is changed and the plug still holds.
 * Before, the demo ran both phases behind that hold, every request timed
 * out, and it said that synplug did not protect the restarts.
 *
 * Runs in a network namespace of this file's own (`ip netns add`).
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { netnsSnapshot } from '../helpers/netns-snapshot.js';
import { demoNetnsAround } from '../helpers/demo-netns.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'dist/bundle/synplug.cjs'); // package.json bin
const NS = `spdheld${process.pid}`;
const IP = '/usr/sbin/ip';
const STATE = mkdtempSync(join(tmpdir(), 'synplug-demo-held-'));

/** `synplug ARGS` in the namespace. */
function synplug(args: string[]) {
  const { SYNPLUG_STATE_DIR: _s, ...env } = process.env;
  const r = spawnSync(IP, ['netns', 'exec', NS, process.execPath, BIN, ...args], { encoding: 'utf8', env, timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

demoNetnsAround(test, NS, BIN, [STATE]);

test.serial("a manual plug holding: demo --here refuses (exit 8) naming it and 'synplug release --state-dir DIR'; the plug still holds", (t) => {
  const s = synplug(['setup', '--state-dir', STATE]);
  t.is(s.code, 0, s.stderr);
  try {
    const p = synplug(['plug', '--state-dir', STATE, '--max-hold', '60s', '--json']);
    t.is(p.code, 0, p.stderr);
    const before = netnsSnapshot(NS);
    const r = synplug(['demo', '--here', '--state-dir', STATE, '--restarts', '1', '--seconds', '1']);
    t.is(r.code, 8, r.stderr);
    t.regex(r.stderr, /demo --here: the hold is already held: a manual 'synplug plug' \(pid [0-9]+\) holds \S+ until its --max-hold at /);
    t.true(r.stderr.includes(`End it with 'synplug release --state-dir ${STATE}'`), r.stderr);
    t.notRegex(r.stderr, /did not protect/);
    t.is(r.stdout, '', 'the demo did not run');
    t.deepEqual(netnsSnapshot(NS), before, 'nothing was changed');
    const st = synplug(['status', '--state-dir', STATE, '--json']);
    t.is((JSON.parse(st.stdout) as { plug: { state: string } }).plug.state, 'buffering', 'the plug still holds');
    const rel = synplug(['release', '--state-dir', STATE]);
    t.is(rel.code, 0, rel.stderr);
  } finally {
    synplug(['teardown', '--state-dir', STATE]);
  }
});
