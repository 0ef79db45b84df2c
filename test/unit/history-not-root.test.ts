/**
 * `history` as another user than root on root's state directory (a new
 * user's check, issue 22): it exited 6 ("owned by uid 0 ... use a directory
 * of your own"), where every other command says to run it as root (exit 4).
 * Now the same: exit 4, run it as root. A directory of another non-root user
 * is still the checks' (exit 6). The other user is uid 65534 through setpriv.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../dist/bundle/synplug.cjs', import.meta.url));
const NOBODY = 65534;

const asNobody = (args: string[]) =>
  spawnSync('/usr/bin/setpriv', ['--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups', process.execPath, BIN, ...args], {
    encoding: 'utf8',
    timeout: 30_000,
  });

test('history as non-root on root’s state directory: exit 4, run it as root (as every other command says)', (t) => {
  const base = mkdtempSync(join(tmpdir(), 'synplug-hist-nonroot-'));
  try {
    chmodSync(base, 0o755);
    const root = join(base, 'root');
    mkdirSync(root, { mode: 0o700 });
    const r = asNobody(['history', '--state-dir', root]);
    t.is(r.status, 4, r.stderr);
    t.is(
      r.stderr,
      `synplug: history reads the state directory ${root}, which is root's (uid 0: the reloads protect recorded as root): run it as root, or give --state-dir a directory of your own\n`,
    );
    const j = asNobody(['history', '--json', '--state-dir', root]);
    t.is(j.status, 4);
    t.is(JSON.parse(j.stdout).category, 'permission');
    // another non-root user's directory is no "run it as root": still unsafe (exit 6)
    const other = join(base, 'other');
    mkdirSync(other, { mode: 0o700 });
    chownSync(other, 1234, 1234);
    t.is(asNobody(['history', '--state-dir', other]).status, 6);
    // its own directory: shown
    const own = join(base, 'own');
    mkdirSync(own, { mode: 0o700 });
    chownSync(own, NOBODY, NOBODY);
    const o = asNobody(['history', '--state-dir', own]);
    t.is(o.status, 0, o.stderr);
    t.is(o.stdout, 'no reload recorded\n');
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
