/**
 * `synplug release --orphaned` through the CLI bundle on this kernel (no
 * sch_plug: nothing is set up, so the kernel side is "no plug qdisc"): live
 * leases on record are left alone, and nothing is written; with only dead
 * leases the release goes ahead and the leases are dropped. The fake-kernel
 * side (a running protect keeps its plug) is test/unit/guard-leases.test.ts.
 */
import test, { type ExecutionContext } from 'ava';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StateStore, type Lease } from '../../src/guard/state.js';
import { idleWatchdog } from '../helpers/watchdog-process.js';

const BIN = fileURLToPath(new URL('../../dist/bundle/synplug.cjs', import.meta.url));

function synplug(stateDir: string, args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args, '--state-dir', stateDir], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A manual lease's watchdog that lives (a real, idle one: a manual lease lives only while its watchdog is synplug's), ended at the test's end. */
async function aliveWatchdog(t: ExecutionContext): Promise<{ watchdogPid: number; watchdogStart: number }> {
  const w = await idleWatchdog();
  t.teardown(w.kill);
  return { watchdogPid: w.watchdogPid, watchdogStart: w.watchdogStart };
}

/** leases.json as synplug writes it (with this directory's mark: a file without it holds nothing here). */
function leasesFile(dir: string, leases: Lease[]): void {
  new StateStore(dir).writeLeases({ version: 1, leases });
}

test('release --orphaned: a live lease (here a manual plug before its deadline) is left alone and nothing is written; --json says so', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'synplug-orphaned-'));
  const now = Date.now();
  leasesFile(dir, [{ id: 'a1', owner: 'manual', pid: process.pid, ...(await aliveWatchdog(t)), holds: ['local'], since: now, deadline: now + 120_000 }]);
  const before = readFileSync(join(dir, 'leases.json'), 'utf8');
  const r = synplug(dir, ['release', '--orphaned', '--json']);
  t.is(r.code, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  t.is(j.released, false);
  t.is(j.orphaned, true);
  t.is(j.liveLeases, 1);
  t.is(j.brokeLeases, 0);
  t.is(j.plugExists, false, 'this kernel has no plug qdisc here (as a plain release would say)');
  t.is(readFileSync(join(dir, 'leases.json'), 'utf8'), before, 'the lease is still on record, untouched');
  const text = synplug(dir, ['release', '--orphaned']);
  t.is(text.code, 0);
  t.is(
    text.stdout.trim(),
    'not released: 1 live lease(s) hold it (a running protect, or a manual plug before its deadline); --orphaned releases only a hold nobody holds',
  );
});

test('release --orphaned: with only dead leases (an exited protect, an expired manual plug) it releases and drops them', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'synplug-orphaned-'));
  const dead = spawnSync('true').pid!;
  const now = Date.now();
  leasesFile(dir, [
    { id: 'f1', owner: 'protect', pid: dead, holds: ['local'], since: now - 1000, deadline: now + 120_000 },
    { id: 'e1', owner: 'manual', pid: process.pid, holds: ['local'], since: now - 2000, deadline: now - 1000 },
  ]);
  const r = synplug(dir, ['release', '--orphaned', '--json']);
  t.is(r.code, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  t.is(j.released, true);
  t.is(j.orphaned, true);
  t.is(j.liveLeases, 0);
  t.deepEqual(JSON.parse(readFileSync(join(dir, 'leases.json'), 'utf8')).leases, []);
});

test('a plain release still breaks a live lease (and says so); --help explains --orphaned', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'synplug-orphaned-'));
  const now = Date.now();
  leasesFile(dir, [{ id: 'a1', owner: 'manual', pid: process.pid, ...(await aliveWatchdog(t)), holds: ['local'], since: now, deadline: now + 120_000 }]);
  const r = synplug(dir, ['release', '--json']);
  t.is(r.code, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  t.is(j.brokeLeases, 1);
  t.is(j.released, true);
  t.is(j.orphaned, undefined);
  const help = spawnSync(process.execPath, [BIN, 'release', '--help'], { encoding: 'utf8' });
  t.regex(help.stdout.replace(/\s+/g, ' '), /--orphaned .*ExecStopPost=/);
});
