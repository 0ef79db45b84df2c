/**
 * The state directory as a security boundary, and damaged state files
 * (issue #11, defects 4 and 8): StateStore in-process, as root.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import {
  mkdtempSync,
  mkdirSync,
  writeFileSync,
  readFileSync,
  symlinkSync,
  chmodSync,
  chownSync,
  statSync,
  lstatSync,
  existsSync,
  readdirSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StateStore, StateFileError, parseSetupRecord, type PlugRecord } from '../../src/guard/state.js';
import { exitCodeOf } from '../../src/cli/exit-codes.js';
import { stateDirMark } from '../../src/guard/state-fs.js';

const plugRec = (state: PlugRecord['state']): PlugRecord => ({ version: 1, state, owner: 'manual', pid: process.pid, dev: 'lo', since: 1, deadline: 2 });

function base(): string {
  return mkdtempSync(join(tmpdir(), 'synplug-state-'));
}

/** A 0700 state directory of this user, and a victim file outside it. */
function fresh() {
  const root = base();
  const dir = join(root, 'state');
  mkdirSync(dir, { mode: 0o700 });
  const victim = join(root, 'victim');
  writeFileSync(victim, 'precious\n', { mode: 0o644 });
  return { root, dir, victim, store: new StateStore(dir) };
}

test('a missing state directory is created mode 0700 (parents too), and only when something is written', (t) => {
  const dir = join(base(), 'a', 'b');
  const s = new StateStore(dir);
  t.is(s.readSetup(), undefined);
  t.is(s.readPlug(), undefined);
  t.false(existsSync(dir), 'reading creates nothing');
  s.writePlug(plugRec('released'));
  t.is(statSync(dir).mode & 0o7777, 0o700);
  t.true(s.createdDir);
  t.like(s.readPlug(), { state: 'released' });
  t.deepEqual(readdirSync(dir), ['plug.json'], 'no temporary file left');
  t.is(statSync(join(dir, 'plug.json')).mode & 0o777, 0o600, 'records are owner-only');
});

test('records are owner-only (0600) whatever the umask', (t) => {
  const { dir, store } = fresh();
  const old = process.umask(0);
  try {
    store.writePlug(plugRec('released'));
    store.writeLeases({ version: 1, leases: [] });
  } finally {
    process.umask(old);
  }
  for (const f of ['plug.json', 'leases.json']) t.is(statSync(join(dir, f)).mode & 0o777, 0o600, f);
});

test('a symbolic link planted at the temporary name is never written through', (t) => {
  const { dir, victim, store } = fresh();
  symlinkSync(victim, join(dir, `.plug.json.${process.pid}.tmp`));
  store.writePlug(plugRec('buffering'));
  t.is(readFileSync(victim, 'utf8'), 'precious\n', 'the link target is untouched');
  t.true(lstatSync(join(dir, 'plug.json')).isFile());
  t.like(store.readPlug(), { state: 'buffering' });
  t.false(existsSync(join(dir, `.plug.json.${process.pid}.tmp`)));
});

for (const name of ['setup.json', 'plug.json'] as const) {
  test(`a symbolic link as ${name} is an error naming it (never followed); a write replaces the link, not its target`, (t) => {
    const { dir, victim, store } = fresh();
    writeFileSync(victim, name === 'plug.json' ? JSON.stringify(plugRec('released')) : JSON.stringify({ version: 2, holds: {} }));
    const before = readFileSync(victim, 'utf8');
    symlinkSync(victim, join(dir, name));
    const e = t.throws(() => (name === 'plug.json' ? store.readPlug() : store.readSetup()), { instanceOf: StateFileError });
    t.regex(e!.message, new RegExp(`${join(dir, name).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is a symbolic link; .*remove it`));
    t.is(exitCodeOf(e), 6);
    if (name === 'plug.json') store.writePlug(plugRec('released'));
    else store.writeSetup({ version: 2, holds: {} });
    t.is(readFileSync(victim, 'utf8'), before, 'the target is untouched');
    t.true(lstatSync(join(dir, name)).isFile(), 'the link itself was replaced');
  });
}

test('a world-writable (even sticky) state directory is refused for reading and writing; nothing is written; a shared (sticky) one is never advised to be chmod-ed', (t) => {
  const { dir, store } = fresh();
  chmodSync(dir, 0o1777);
  for (const f of [() => store.readSetup(), () => store.readPlug(), () => store.writePlug(plugRec('released'))]) {
    const e = t.throws(f, { instanceOf: StateFileError });
    t.regex(e!.message, /is writable by everyone \(mode 1777\).*refuses it; it is a shared directory \(sticky\): use a directory of your own inside it/);
    t.notRegex(e!.message, /chmod/, 'taking the right to write a shared directory (/tmp) from others would break them');
  }
  chmodSync(dir, 0o770);
  t.regex(t.throws(() => store.readPlug(), { instanceOf: StateFileError })!.message, /writable by its group \(mode 0770\).*if it is yours alone, 'chmod go-w /);
  t.deepEqual(readdirSync(dir), []);
});

test('a state directory owned by another user is refused', (t) => {
  if (process.geteuid?.() !== 0) {
    t.fail('this test needs root (it chowns)');
    return;
  }
  const { dir, store } = fresh();
  writeFileSync(join(dir, 'plug.json'), JSON.stringify(plugRec('buffering')));
  chownSync(dir, 65534, 65534);
  for (const f of [() => store.readSetup(), () => store.readPlug(), () => store.writePlug(plugRec('released')), () => store.clear()]) {
    t.regex(t.throws(f, { instanceOf: StateFileError })!.message, /is owned by uid 65534, not by this user \(uid 0\)/);
  }
  t.like(JSON.parse(readFileSync(join(dir, 'plug.json'), 'utf8')), { state: 'buffering' }, 'nothing rewritten');
});

test('a state directory that is a symbolic link is refused', (t) => {
  const { root, dir } = fresh();
  const link = join(root, 'link');
  symlinkSync(dir, link);
  const s = new StateStore(link);
  t.regex(t.throws(() => s.readPlug(), { instanceOf: StateFileError })!.message, /is a symbolic link/);
  t.regex(t.throws(() => s.writePlug(plugRec('released')), { instanceOf: StateFileError })!.message, /is a symbolic link/);
});

test('a file as the state directory, or a path through a file, is an error, not "nothing set up"', (t) => {
  t.regex(
    t.throws(() => new StateStore('/etc/passwd').readSetup(), { instanceOf: StateFileError })!.message,
    /state directory \/etc\/passwd is not a directory/,
  );
  t.regex(t.throws(() => new StateStore('/etc/passwd/x').readSetup(), { instanceOf: StateFileError })!.message, /a part of its path is not a directory/);
});

test('damaged files are errors naming the file and what to do', (t) => {
  const { dir, store } = fresh();
  writeFileSync(join(dir, 'setup.json'), '{"version": 2, "holds": ');
  t.regex(
    t.throws(() => store.readSetup(), { instanceOf: StateFileError })!.message,
    /setup\.json is not valid JSON .*: remove it \(then run 'synplug setup' again/,
  );
  writeFileSync(join(dir, 'setup.json'), JSON.stringify({ version: 2, holds: { local: { mode: 'local', dev: 'lo' } } }));
  t.regex(t.throws(() => store.readSetup(), { instanceOf: StateFileError })!.message, /setup\.json is not a setup record synplug wrote: remove it/);
  writeFileSync(join(dir, 'plug.json'), 'garbage');
  t.regex(
    t.throws(() => store.readPlug(), { instanceOf: StateFileError })!.message,
    /plug\.json is not valid JSON .*'synplug release' releases it whatever the file says/,
  );
  writeFileSync(join(dir, 'plug.json'), JSON.stringify({ state: 'maybe' }));
  t.regex(t.throws(() => store.readPlug(), { instanceOf: StateFileError })!.message, /plug\.json is not a plug record/);
  // unreadable: a directory (or a FIFO) where the file belongs
  rmSync(join(dir, 'plug.json'));
  mkdirSync(join(dir, 'plug.json'));
  t.regex(t.throws(() => store.readPlug(), { instanceOf: StateFileError })!.message, /plug\.json is not a regular file: remove it/);
});

test('a version 1 setup record (the local hold at the top level) is refused (exit 6), saying how to clear it', (t) => {
  const { dir, store } = fresh();
  const v1 = { dev: 'lo', addr: '169.254.255.254', mark: 1, limit: 65536, table: 'synplug', addedAddress: true, prefixlen: 32, createdAt: 5 };
  for (const rec of [{ version: 1, ...v1 }, v1]) {
    writeFileSync(join(dir, 'setup.json'), JSON.stringify(rec));
    const e = t.throws(() => store.readSetup(), { instanceOf: StateFileError })!;
    t.regex(e.message, /setup\.json is a setup record of an older synplug \(version 1\).*'synplug teardown'.*or remove the file/);
    t.is(exitCodeOf(e), 6);
  }
  t.is(parseSetupRecord({ version: 1, ...v1 }), undefined);
  t.is(parseSetupRecord({ version: 3 }), undefined);
  t.is(parseSetupRecord([]), undefined);
  t.is(parseSetupRecord({ version: 2, holds: { x: { mode: 'inbound', dev: '', createdAt: 1 } } }), undefined);
});

test('clear removes the files, and the directory only when asked and empty', (t) => {
  const { dir, store } = fresh();
  store.writeSetup({ version: 2, holds: {} });
  store.writePlug(plugRec('released'));
  t.false(store.clear());
  t.deepEqual(readdirSync(dir), []);
  store.writePlug(plugRec('released'));
  writeFileSync(join(dir, 'someone-elses'), 'x');
  t.false(store.clear(stateDirMark(dir)), 'not empty: kept');
  t.true(existsSync(join(dir, 'someone-elses')));
  const s2 = new StateStore(join(base(), 'new'));
  s2.writePlug(plugRec('released'));
  t.true(s2.clear(stateDirMark(s2.dir)));
  t.false(existsSync(s2.dir));
  // Issue #19 (the attack's MINOR): a copied setup.json with createdStateDir made teardown remove an empty directory
  // root made by hand. Only the directory whose mark setup recorded goes: another's mark (a copy) leaves it.
  const s3 = new StateStore(join(base(), 'by-hand'));
  s3.writePlug(plugRec('released'));
  t.false(s3.clear(stateDirMark(dir)), "another directory's mark: kept");
  t.true(existsSync(s3.dir));
  t.deepEqual(readdirSync(s3.dir), [], 'its files removed, the directory left');
});

test('leases.json: written and read back under the same rules; a damaged one is an error naming it; clear removes it and the lock file', (t) => {
  const { dir, store } = fresh();
  const lease = { id: 'a1', owner: 'protect' as const, pid: process.pid, holds: ['local'], since: 1, deadline: 2 };
  store.writeLeases({ version: 1, leases: [lease] });
  // with the cookie of the namespace it was written in (SO_NETNS_COOKIE = 71, as the kernel gives it to python3)
  // with the cookie of the namespace it was written in, and the mark of the directory it was written in
  t.deepEqual(store.readLeases(), { version: 1, leases: [lease], netns: cookieHere(), dir: stateDirMark(dir) });
  // Issue #19: a copy in another directory (or a record without the mark) holds nothing there: its leases are read
  // as written elsewhere, which leaseLive never takes for live
  const other = fresh();
  writeFileSync(join(other.dir, 'leases.json'), readFileSync(join(dir, 'leases.json')), { mode: 0o600 });
  t.deepEqual(other.store.readLeases()?.leases, [{ ...lease, elsewhere: true }]);
  const { dir: _mark, ...unmarked } = JSON.parse(readFileSync(join(dir, 'leases.json'), 'utf8'));
  writeFileSync(join(other.dir, 'leases.json'), JSON.stringify(unmarked), { mode: 0o600 });
  t.true(other.store.readLeases()?.leases[0].elsewhere);
  t.is(store.lockPath(), join(dir, 'lock'), 'the lock file sits in the state directory');
  writeFileSync(join(dir, 'leases.json'), JSON.stringify({ version: 1, leases: [{ id: 5 }] }));
  t.regex(
    t.throws(() => store.readLeases(), { instanceOf: StateFileError })!.message,
    /leases\.json is not a lease record synplug wrote: remove it \(synplug reads a missing leases\.json as no live lease/,
  );
  writeFileSync(join(dir, 'lock'), '');
  store.clear();
  t.deepEqual(readdirSync(dir), []);
});

/** This process's network namespace cookie, as the kernel gives it to python3 (SO_NETNS_COOKIE = 71). */
function cookieHere(): string {
  const py = "import socket; s = socket.socket(); print(int.from_bytes(s.getsockopt(socket.SOL_SOCKET, 71, 8), 'little'))";
  return execFileSync('python3', ['-c', py], { encoding: 'utf8' }).trim();
}

test("regression (issue #19, MA1): plug.json and leases.json said nothing of their namespace; now they record its cookie, and another namespace's is refused (exit 6) when it says something is held, else ignored", (t) => {
  const { dir, store } = fresh();
  const here = cookieHere();
  store.writePlug(plugRec('buffering'));
  t.is(store.readPlug()?.netns, here);
  t.is(JSON.parse(readFileSync(join(dir, 'plug.json'), 'utf8')).netns, here);
  const other = String(BigInt(here) + 1000000n);
  for (const [file, read] of [
    ['plug.json', () => store.readPlug()],
    ['leases.json', () => store.readLeases()],
  ] as const) {
    const held =
      file === 'plug.json'
        ? plugRec('buffering')
        : { version: 1, leases: [{ id: 'b2', owner: 'manual', pid: process.pid, holds: ['queue'], since: 1, deadline: 2 }] };
    const idle = file === 'plug.json' ? plugRec('released') : { version: 1, leases: [] };
    const rec = { ...held, netns: other };
    writeFileSync(join(dir, file), JSON.stringify(rec));
    const e = t.throws(read, { instanceOf: StateFileError })!;
    t.true(e.message.startsWith(`${join(dir, file)} records the holds of network namespace cookie ${other}`), e.message);
    t.is(exitCodeOf(e), 6);
    writeFileSync(join(dir, file), JSON.stringify({ ...rec, netns: 'x1' }));
    t.regex(t.throws(read, { instanceOf: StateFileError })!.message, /'netns' is "x1", not a network namespace cookie/);
    // an earlier synplug's record, without the field: read as this namespace's
    writeFileSync(join(dir, file), JSON.stringify(held));
    t.truthy(read());
    // another namespace's that holds nothing (plug released, no lease): ignored, as no record
    writeFileSync(join(dir, file), JSON.stringify({ ...idle, netns: other }));
    t.is(read(), undefined);
  }
});

test("a setup record names its network namespace's cookie: one of another namespace is refused (exit 6), a bad cookie is no record synplug wrote", (t) => {
  const { dir, store } = fresh();
  const hold = { mode: 'inbound', dev: 'eth0', createdAt: 5 };
  // this process's namespace, as the kernel gives it to python3 (SO_NETNS_COOKIE = 71)
  const py = "import socket; s = socket.socket(); print(int.from_bytes(s.getsockopt(socket.SOL_SOCKET, 71, 8), 'little'))";
  const here = execFileSync('python3', ['-c', py], { encoding: 'utf8' }).trim();
  writeFileSync(join(dir, 'setup.json'), JSON.stringify({ version: 2, holds: { 'inbound:eth0': hold }, netns: here }));
  t.is(store.readSetup()?.netns, here, 'the namespace of the record: read');
  const other = String(BigInt(here) + 1000000n);
  writeFileSync(join(dir, 'setup.json'), JSON.stringify({ version: 2, holds: { 'inbound:eth0': hold }, netns: other }));
  const e = t.throws(() => store.readSetup(), { instanceOf: StateFileError })!;
  t.regex(
    e.message,
    new RegExp(
      `setup\\.json records the holds of network namespace cookie ${other} .*not of the network namespace this command acts in \\(cookie ${here}\\): nothing was changed`,
    ),
  );
  t.is(exitCodeOf(e), 6);
  for (const bad of ['', 'abc', '0', 12, '1'.repeat(21)])
    t.is(parseSetupRecord({ version: 2, holds: { 'inbound:eth0': hold }, netns: bad }), undefined, JSON.stringify(bad));
  t.is(parseSetupRecord({ version: 2, holds: { 'inbound:eth0': hold } })?.netns, undefined, "an earlier synplug's record, without one: read");
});
