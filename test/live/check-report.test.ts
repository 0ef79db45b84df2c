/**
 * The library's check() and status() carry `sysctl` (net.ipv4.tcp_migrate_req
 * as /proc shows it, and what it means for the hold's listeners), as the CLI
 * prints it; and `synplug check` exits 12 for a hold set up partly (the queue
 * hold's address deleted with the reference ip), 1 for nothing set up, 2
 * only for bad arguments. Runs in the live suite's namespace with a
 * state directory of its own.
 */
import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { check, setup, status, teardown } from '../../src/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'dist/bundle/synplug.cjs');
const STATE = mkdtempSync(join(tmpdir(), 'synplug-check-report-'));
const ADDR = '169.254.93.7';

test.after.always(async () => {
  await teardown({ stateDir: STATE }).catch(() => {});
  rmSync(STATE, { recursive: true, force: true });
});

function cli(args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args, '--state-dir', STATE], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test.serial('check and status: sysctl from the library, as /proc has it; check exits 1, 12, 0 and 2 as documented', async (t) => {
  const value = Number(readFileSync('/proc/sys/net/ipv4/tcp_migrate_req', 'utf8').trim());
  const none = await check({ stateDir: STATE });
  t.is(none.state, 'absent');
  t.is(none.sysctl?.name, 'net.ipv4.tcp_migrate_req');
  t.is(none.sysctl?.value, value);
  t.is(cli(['check']).code, 1);

  await setup({ via: 'queue', addr: ADDR, stateDir: STATE });
  const ok = await check({ stateDir: STATE });
  t.is(ok.state, 'ok');
  t.is(ok.sysctl?.value, value);
  const st = await status({ stateDir: STATE });
  t.is(st.sysctl?.name, 'net.ipv4.tcp_migrate_req');
  t.is(st.sysctl?.value, value);
  const j = cli(['status', '--json']);
  t.is(j.code, 0, j.stderr);
  t.deepEqual((JSON.parse(j.stdout) as { sysctl: unknown }).sysctl, JSON.parse(JSON.stringify(st.sysctl)), "the CLI prints the library's");
  t.is(cli(['check']).code, 0);

  execFileSync('/usr/sbin/ip', ['addr', 'del', `${ADDR}/32`, 'dev', 'lo']);
  const partial = await check({ stateDir: STATE });
  t.is(partial.state, 'partial');
  const c = cli(['check']);
  t.is(c.code, 12, c.stdout + c.stderr);
  t.is(cli(['check', '--no-such-flag']).code, 2);
  const cj = cli(['check', '--json']);
  t.is(cj.code, 12);
  t.is((JSON.parse(cj.stdout) as { state: string }).state, 'partial');
});
