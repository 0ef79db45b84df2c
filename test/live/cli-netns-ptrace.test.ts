/**
 * `--netns /proc/PID/ns/net` for a process of another user, as a host agent
 * without CAP_SYS_PTRACE runs it: opening the namespace file is refused
 * (a ptrace read-access check) although CAP_SYS_ADMIN is there, and the
 * error says so (exit 4); with CAP_SYS_PTRACE added it works. The
 * capabilities are limited with setpriv's bounding set (root's capabilities
 * after exec are the bounding set).
 */
import test from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../dist/bundle/synplug.cjs', import.meta.url));
const SETPRIV = '/usr/bin/setpriv';

test('check --netns /proc/PID/ns/net of a nobody process: without CAP_SYS_PTRACE exit 4 naming ptrace access; with it, it runs', async (t) => {
  const target = spawn(SETPRIV, ['--reuid', '65534', '--regid', '65534', '--clear-groups', 'sleep', '60'], { stdio: 'ignore' });
  t.teardown(() => target.kill('SIGKILL'));
  // wait until the sleep runs as nobody (setpriv has exec'd)
  for (let i = 0; i < 200; i++) {
    const st = spawnSync('stat', ['-c', '%u', `/proc/${target.pid}`], { encoding: 'utf8' });
    if (st.stdout.trim() === '65534') break;
    await new Promise((r) => setTimeout(r, 10));
  }
  const ns = `/proc/${target.pid}/ns/net`;
  const dir = mkdtempSync(join(tmpdir(), 'synplug-ptrace-'));
  const run = (caps: string) =>
    spawnSync(SETPRIV, [`--bounding-set=-all,${caps}`, '--', process.execPath, BIN, 'check', '--netns', ns, '--state-dir', dir, '--json'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
  const denied = run('+net_admin,+sys_admin,+dac_override');
  t.is(denied.status, 4, denied.stderr);
  const j = JSON.parse(denied.stdout);
  t.is(j.category, 'permission');
  t.regex(j.error, /EACCES: opening another process's namespace file is a ptrace read-access check: it needs CAP_SYS_PTRACE/);
  t.notRegex(j.error, /needs root \(CAP_SYS_ADMIN\)/);
  const allowed = run('+net_admin,+sys_admin,+sys_ptrace,+dac_override');
  // nothing is set up in that namespace: check exits 1 (absent), having opened and entered it
  t.is(allowed.status, 1, allowed.stderr);
  t.is(JSON.parse(allowed.stdout).state, 'absent');
});
