/**
 * `synplug demo --here` where the state directory records an inbound hold of
 * the operator's (a new user's check, issue 22): the demo's protected
 * restarts held that hold too (history: `protect (queue, queue:DEV)`),
 * delaying its real clients, and landed in that directory's history. Now it
 * refuses at once (exit 8), naming the holds it would hold and what to do;
 * nothing is changed, nothing is recorded. `demo --here --inbound` refuses
 * any recorded hold (it holds an inbound hold of its own only).
 *
 * Runs in a network namespace of this file's own (`ip netns add`).
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { netnsSnapshot } from '../helpers/netns-snapshot.js';
import { demoNetnsAround } from '../helpers/demo-netns.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'dist/bundle/synplug.cjs'); // package.json bin
const NS = `spdoth${process.pid}`;
const IP = '/usr/sbin/ip';
const STATE = mkdtempSync(join(tmpdir(), 'synplug-demo-other-holds-'));
const DEV = 'spdoth0';

/** `synplug ARGS` in the namespace. */
function synplug(args: string[]) {
  const { SYNPLUG_STATE_DIR: _s, ...env } = process.env;
  const r = spawnSync(IP, ['netns', 'exec', NS, process.execPath, BIN, ...args], { encoding: 'utf8', env, timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

demoNetnsAround(test, NS, BIN, [STATE]);

test.serial('an inbound hold recorded: demo --here refuses (exit 8) naming it; nothing changed, nothing recorded in its history', (t) => {
  spawnSync(IP, ['-n', NS, 'link', 'add', DEV, 'type', 'veth', 'peer', 'name', `${DEV}p`]);
  spawnSync(IP, ['-n', NS, 'link', 'set', DEV, 'up']);
  const s = synplug(['setup', '--state-dir', STATE, '--inbound', DEV, '--port', '80']);
  t.is(s.code, 0, s.stderr);
  const id = (JSON.parse(synplug(['check', '--state-dir', STATE, '--json']).stdout) as { holds: Array<{ id: string }> }).holds.map((h) => h.id);
  try {
    const before = netnsSnapshot(NS);
    for (const extra of [[], ['--inbound']]) {
      const r = synplug(['demo', '--here', ...extra, '--state-dir', STATE, '--restarts', '1', '--seconds', '1']);
      t.is(r.code, 8, r.stderr);
      t.is(
        r.stderr.trim(),
        `synplug: demo --here${extra.length ? ' --inbound' : ''}: the state directory ${STATE} records other holds (${id.join(', ')}): the demo's protected restarts would hold them too, delaying their clients, and record those restarts in their history. The demo holds only ${extra.length ? 'an inbound hold of its own' : 'the local hold on lo'}: run 'synplug demo' without --here (in a network namespace of its own), or --here where no other hold is set up. Nothing was changed`,
      );
      t.is(r.stdout, '', 'the demo did not run');
    }
    t.deepEqual(netnsSnapshot(NS), before, 'nothing was changed');
    t.false(existsSync(join(STATE, 'history.jsonl')), 'nothing recorded');
    t.is(synplug(['check', '--state-dir', STATE]).code, 0, 'the hold is as it was');
  } finally {
    synplug(['teardown', '--state-dir', STATE]);
  }
});
