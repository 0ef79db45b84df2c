/**
 * The state directory as a boundary (issue #19, defect 1 and deliverable 1):
 * every component of its path checked from `/`, records opened relative to
 * the directory's descriptor. The attacks are run as they were found, by
 * another user (uid 65534 through setpriv): a symbolic link planted in a
 * parent component, and a renameat2(RENAME_EXCHANGE) race between the state
 * directory and a link to the attacker's own. Runs as root (it chowns and
 * changes uid).
 */
import test from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, symlinkSync, writeFileSync, chownSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StateStore, StateFileError, RECORD_SIZE_CAP } from '../../src/guard/state.js';
import { openCheckedDir } from '../../src/guard/state-fs.js';
import { exitCodeOf } from '../../src/cli/exit-codes.js';

const NOBODY = 65534;
const rootOnly = (t: { fail(m: string): void }): boolean => {
  if (process.geteuid?.() === 0) return true;
  t.fail('this test needs root (it runs the attacker as another uid)');
  return false;
};

/** Run a command as uid/gid 65534, no supplementary groups. */
function asNobody(args: string[]) {
  return spawnSync('/usr/bin/setpriv', ['--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups', ...args], { encoding: 'utf8' });
}

const record = (table: string) => ({
  version: 2,
  holds: { local: { mode: 'local', dev: 'lo', addr: '169.254.255.254', mark: 1, limit: 65536, table, addedAddress: true, prefixlen: 32, createdAt: 1 } },
});

/** A root-only base (0755, so that uid 65534 can reach the public directory in it). */
function base(): string {
  const b = mkdtempSync(join(tmpdir(), 'synplug-boundary-'));
  chmodSync(b, 0o755);
  return b;
}

for (const mode of [0o777, 0o1777]) {
  test(`a symbolic link another user planted in a parent component (a ${mode & 0o1000 ? 'sticky ' : ''}world-writable directory) is refused: teardown's clear removes nothing`, (t) => {
    if (!rootOnly(t)) return;
    const b = base();
    // The victim: a directory of root's, never given to synplug, with a file named like a state file.
    const victim = join(b, 'victim');
    mkdirSync(join(victim, 'state'), { recursive: true, mode: 0o700 });
    chmodSync(victim, 0o755);
    writeFileSync(join(victim, 'state', 'lock'), '');
    writeFileSync(join(victim, 'state', 'setup.json'), JSON.stringify(record('precious')));
    const pub = join(b, 'pub');
    mkdirSync(pub);
    chmodSync(pub, mode);
    const planted = asNobody(['ln', '-s', victim, join(pub, 'sub')]);
    t.is(planted.status, 0, planted.stderr);
    // The path resolves to the victim's directory: the attack is in place.
    t.true(existsSync(join(pub, 'sub', 'state', 'lock')));
    const store = new StateStore(join(pub, 'sub', 'state'));
    for (const f of [
      () => store.clear(),
      () => store.readSetup(),
      () => store.writePlug({ version: 1, state: 'released', owner: 'manual', pid: 1, dev: 'lo', since: 1, deadline: 2 }),
    ]) {
      const e = t.throws(f, { instanceOf: StateFileError })!;
      t.is(exitCodeOf(e), 6);
      t.regex(
        e.message,
        mode & 0o1000
          ? new RegExp(`${join(pub, 'sub')}, a symbolic link on the path to the state directory .* is owned by uid ${NOBODY} \\(neither root nor this user`)
          : new RegExp(`${pub}, a directory on the path to the state directory .* is writable by everyone \\(mode 0777\\) and not sticky`),
      );
    }
    t.true(existsSync(join(victim, 'state', 'lock')), 'the lock file outside the state directory is still there');
    t.deepEqual(JSON.parse(readFileSync(join(victim, 'state', 'setup.json'), 'utf8')), record('precious'));
    t.false(existsSync(join(victim, 'state', 'plug.json')), 'nothing written there');
  });
}

test("a renameat2(RENAME_EXCHANGE) race between the state directory and a link to another user's directory never makes synplug read that user's record", async (t) => {
  if (!rootOnly(t)) return;
  const b = base();
  const pub = join(b, 'pub');
  mkdirSync(pub);
  chmodSync(pub, 0o777);
  // root's own state directory, in the world-writable directory, with its real record
  const state = join(pub, 'state');
  mkdirSync(state, { mode: 0o700 });
  writeFileSync(join(state, 'setup.json'), JSON.stringify(record('synplug')));
  // the attacker's directory with a record naming someone else's table, and a link to it
  const made = asNobody([
    '/usr/bin/python3',
    '-c',
    `import os
os.mkdir(${JSON.stringify(join(pub, 'evil'))}, 0o755)
open(${JSON.stringify(join(pub, 'evil', 'setup.json'))}, 'w').write(${JSON.stringify(JSON.stringify(record('filter')))})
os.symlink('evil', ${JSON.stringify(join(pub, 'link'))})`,
  ]);
  t.is(made.status, 0, made.stderr);
  const swap = (count: number) => `import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = ${JSON.stringify(state)}.encode(), ${JSON.stringify(join(pub, 'link'))}.encode()
for i in range(${count}):
    if libc.renameat2(-100, a, -100, b, 2) != 0:
        sys.exit('renameat2: errno %d' % ctypes.get_errno())
print(${count})`;
  // One exchange first: the attacker can do it, and the path then leads to the attacker's record.
  const once = asNobody(['/usr/bin/python3', '-c', swap(1)]);
  t.is(once.status, 0, once.stderr);
  t.is(
    JSON.parse(readFileSync(join(state, 'setup.json'), 'utf8')).holds.local.table,
    'filter',
    "the exchange is possible: the path now reads the attacker's file",
  );
  t.is(asNobody(['/usr/bin/python3', '-c', swap(1)]).status, 0);
  // Now the race: exchanges while synplug reads; not once does it read the attacker's record (nor its own: the directory is refused).
  const racer = spawn('/usr/bin/setpriv', ['--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups', '/usr/bin/python3', '-c', swap(20_000)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const done = new Promise<number | null>((r) => racer.on('exit', r));
  let exited = false;
  void done.then(() => {
    exited = true;
  });
  const store = new StateStore(state);
  let reads = 0;
  while (!exited && reads < 20_000) {
    reads++;
    const e = t.throws(() => store.readSetup(), { instanceOf: StateFileError });
    if (
      !/a directory on the path to the state directory .* is writable by everyone \(mode 0777\) and not sticky|is owned by uid 65534/.test(e?.message ?? '')
    ) {
      t.fail(`unexpected: ${e?.message}`);
      break;
    }
    if (reads % 50 === 0) await new Promise((r) => setImmediate(r));
  }
  t.is(await done, 0);
  t.true(reads > 0);
});

test('records are opened relative to the checked directory: a directory renamed away and a link put in its place after the check redirect nothing', (t) => {
  const b = mkdtempSync(join(tmpdir(), 'synplug-boundary-'));
  const state = join(b, 'state');
  mkdirSync(state, { mode: 0o700 });
  writeFileSync(join(state, 'lock'), '');
  const victim = join(b, 'victim');
  mkdirSync(victim, { mode: 0o700 });
  writeFileSync(join(victim, 'lock'), 'precious');
  writeFileSync(join(victim, 'setup.json'), JSON.stringify(record('filter')));
  const d = openCheckedDir(state, false)!;
  try {
    // After the check: the directory moves, and its name becomes a link to the victim.
    renameSync(state, join(b, 'moved'));
    symlinkSync(victim, state);
    t.is(d.read('setup.json', RECORD_SIZE_CAP, 'x'), undefined, "the victim's record is not read");
    d.writeAtomic('plug.json', Buffer.from('{}\n'));
    t.true(d.unlink('lock'));
  } finally {
    d.close();
  }
  t.is(readFileSync(join(victim, 'lock'), 'utf8'), 'precious');
  t.false(existsSync(join(victim, 'plug.json')));
  t.false(existsSync(join(b, 'moved', 'lock')), "the lock removed was the checked directory's");
  t.is(readFileSync(join(b, 'moved', 'plug.json'), 'utf8'), '{}\n');
});

test("a symbolic link on the path owned by root (or the user) is followed, walked again from /; another user's is refused", (t) => {
  if (!rootOnly(t)) return;
  const b = mkdtempSync(join(tmpdir(), 'synplug-boundary-'));
  mkdirSync(join(b, 'real'));
  symlinkSync('real', join(b, 'alias'));
  const s = new StateStore(join(b, 'alias', 'state'));
  s.writePlug({ version: 1, state: 'released', owner: 'manual', pid: 1, dev: 'lo', since: 1, deadline: 2 });
  t.true(existsSync(join(b, 'real', 'state', 'plug.json')));
  t.like(s.readPlug(), { state: 'released' });
  // the same link, owned by another user (in a directory only root can write: only the owner differs)
  const other = join(b, 'other');
  symlinkSync('real', other);
  spawnSync('chown', ['-h', `${NOBODY}:${NOBODY}`, other]);
  t.regex(
    t.throws(() => new StateStore(join(other, 'state')).readPlug(), { instanceOf: StateFileError })!.message,
    /a symbolic link on the path to the state directory .* is owned by uid 65534/,
  );
});

test('a parent directory owned by another user is refused, even when not writable by others', (t) => {
  if (!rootOnly(t)) return;
  const b = mkdtempSync(join(tmpdir(), 'synplug-boundary-'));
  mkdirSync(join(b, 'theirs', 'state'), { recursive: true, mode: 0o700 });
  chmodSync(join(b, 'theirs'), 0o755);
  chownSync(join(b, 'theirs'), NOBODY, NOBODY);
  const e = t.throws(() => new StateStore(join(b, 'theirs', 'state')).readSetup(), { instanceOf: StateFileError })!;
  t.regex(e.message, /theirs, a directory on the path to the state directory .* is owned by uid 65534 \(neither root nor this user, uid 0\)/);
});

test('a non-root user: its own directory under sticky /tmp is accepted, and a state directory another user made there is refused', (t) => {
  if (!rootOnly(t)) return;
  // As uid 65534: write and read a record in its own directory under /tmp (sticky, root's).
  const dir = join(tmpdir(), `synplug-boundary-nobody-${process.pid}`);
  const script = `import { StateStore } from ${JSON.stringify(new URL('../../src/guard/state.ts', import.meta.url).pathname)};
const s = new StateStore(${JSON.stringify(join(dir, 'state'))});
s.writePlug({ version: 1, state: 'released', owner: 'manual', pid: 1, dev: 'lo', since: 1, deadline: 2 });
process.stdout.write(JSON.stringify(s.readPlug()));`;
  const tsx = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).pathname;
  const r = asNobody([process.execPath, '--import', tsx, '--input-type=module', '-e', script]);
  t.is(r.status, 0, r.stderr);
  t.like(JSON.parse(r.stdout), { state: 'released' });
  // root refuses it: the state directory is not root's
  t.regex(
    t.throws(() => new StateStore(join(dir, 'state')).readPlug(), { instanceOf: StateFileError })!.message,
    /is owned by uid 65534|a directory on the path to the state directory .* is owned by uid 65534/,
  );
});

test('a record larger than the cap is refused before it is read (a sparse 3 GB plug.json: exit 6 at once)', (t) => {
  const b = mkdtempSync(join(tmpdir(), 'synplug-boundary-'));
  const state = join(b, 'state');
  mkdirSync(state, { mode: 0o700 });
  writeFileSync(join(state, 'plug.json'), '');
  truncateSync(join(state, 'plug.json'), 3 * 1024 ** 3);
  const before = process.memoryUsage().rss;
  const e = t.throws(() => new StateStore(state).readPlug(), { instanceOf: StateFileError })!;
  t.regex(e.message, /plug\.json is 3221225472 bytes, more than synplug ever writes there \(at most 1048576\).*remove it/);
  t.is(exitCodeOf(e), 6);
  t.true(process.memoryUsage().rss - before < 64 * 1024 * 1024, 'nothing near the file size was allocated');
});

test('a FIFO as a record is refused without blocking (opened non-blocking)', (t) => {
  const b = mkdtempSync(join(tmpdir(), 'synplug-boundary-'));
  const state = join(b, 'state');
  mkdirSync(state, { mode: 0o700 });
  t.is(spawnSync('mkfifo', [join(state, 'leases.json')]).status, 0);
  t.regex(t.throws(() => new StateStore(state).readLeases(), { instanceOf: StateFileError })!.message, /leases\.json is not a regular file: remove it/);
});
