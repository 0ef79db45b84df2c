/**
 * `--netns /proc/PID/ns/net` for a process the ptrace read-access check
 * guards (root's, not dumpable), as a host agent without CAP_SYS_PTRACE runs
 * it: opening the namespace file is refused although CAP_SYS_ADMIN is there,
 * and the error says so (exit 4); with CAP_SYS_PTRACE added it works. The
 * capabilities are limited with setpriv's bounding set (root's capabilities
 * after exec are the bounding set). A process of another (non-root) user is
 * refused whatever the capabilities (exit 2): its owner decides which
 * namespace that path names.
 */
import test from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../dist/bundle/synplug.cjs', import.meta.url));
const SETPRIV = '/usr/bin/setpriv';

/** Wait (bounded) until `cond`. */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
}

const run = (ns: string, dir: string, caps: string) =>
  spawnSync(SETPRIV, [`--bounding-set=-all,${caps}`, '--', process.execPath, BIN, 'check', '--netns', ns, '--state-dir', dir, '--json'], {
    encoding: 'utf8',
    timeout: 60_000,
  });

test("check --netns /proc/PID/ns/net of root's process that is not dumpable: without CAP_SYS_PTRACE exit 4 naming ptrace access; with it, it runs", async (t) => {
  // PR_SET_DUMPABLE (4) 0: the ptrace access check then needs CAP_SYS_PTRACE even for a process of the same user
  const target = spawn('python3', ['-c', 'import ctypes, time; ctypes.CDLL(None).prctl(4, 0); print("ready", flush=True); time.sleep(60)'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  t.teardown(() => target.kill('SIGKILL'));
  let ready = false;
  target.stdout!.on('data', () => (ready = true));
  await until(() => ready);
  const ns = `/proc/${target.pid}/ns/net`;
  const dir = mkdtempSync(join(tmpdir(), 'synplug-ptrace-'));
  const denied = run(ns, dir, '+net_admin,+sys_admin,+dac_override');
  t.is(denied.status, 4, denied.stderr);
  const j = JSON.parse(denied.stdout);
  t.is(j.category, 'permission');
  t.regex(j.error, /EACCES: opening another process's namespace file is a ptrace read-access check: it needs CAP_SYS_PTRACE/);
  t.notRegex(j.error, /needs root \(CAP_SYS_ADMIN\)/);
  const allowed = run(ns, dir, '+net_admin,+sys_admin,+sys_ptrace,+dac_override');
  // nothing is set up in that namespace: check exits 1 (absent), having opened and entered it
  t.is(allowed.status, 1, allowed.stderr);
  t.is(JSON.parse(allowed.stdout).state, 'absent');
});

test('check --netns /proc/PID/ns/net of a nobody process: refused (exit 2) naming its owner and ip netns attach, with CAP_SYS_PTRACE too', async (t) => {
  const target = spawn(SETPRIV, ['--reuid', '65534', '--regid', '65534', '--clear-groups', 'sleep', '60'], { stdio: 'ignore' });
  t.teardown(() => target.kill('SIGKILL'));
  // wait until the sleep runs as nobody (setpriv has exec'd)
  await until(() => spawnSync('stat', ['-c', '%u', `/proc/${target.pid}`], { encoding: 'utf8' }).stdout.trim() === '65534');
  const dir = mkdtempSync(join(tmpdir(), 'synplug-ptrace-'));
  const r = run(`/proc/${target.pid}/ns/net`, dir, '+net_admin,+sys_admin,+sys_ptrace,+dac_override');
  t.is(r.status, 2, r.stderr);
  t.regex(JSON.parse(r.stdout).error, /is owned by uid 65534 \(neither root nor this user, uid 0\).*'ip netns attach NAME PID'/);
});
