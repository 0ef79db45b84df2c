/**
 * The state directory pinned at a process's first open of it (issue #19: a
 * directory renamed while a command runs, and a symbolic link, a fresh
 * directory or a bind mount put in its place, redirected the command's
 * later reads, writes and unlinks). Later opens through the path must find
 * the pinned directory: another one is refused, naming both; a directory
 * this process (or anyone) removed leaves the path free for a new one; a
 * watchdog or holder pins the identity its starter passes. The live
 * regressions (a bind mount among them, in a mount namespace of their own)
 * are in test/live/guard-state-dir-swap.test.ts.
 */
import test from 'ava';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StateStore } from '../../src/guard/state.js';
import { openCheckedDir, pinnedFilePath, pinnedStateDir, pinStateDir, StateDirSwappedError } from '../../src/guard/state-fs.js';
import { exitCodeOf } from '../../src/cli/exit-codes.js';

/** A fresh state directory path (not made yet) in a private base. */
function statePath(): { base: string; sd: string } {
  const base = mkdtempSync(join(tmpdir(), 'synplug-pin-'));
  return { base, sd: join(base, 'state') };
}

const plug = { version: 1, state: 'released', owner: 'manual', pid: 1, since: 1, deadline: 2, dev: 'lo', releasedAt: 2 };

test('the first open pins the directory; a fresh directory put at its path after a rename is refused, naming both, and nothing is written into it', (t) => {
  const { base, sd } = statePath();
  const store = new StateStore(sd);
  store.writePlug(plug as never);
  const pinned = pinnedStateDir(sd);
  t.truthy(pinned, 'pinned at the first open');
  renameSync(sd, `${sd}.moved`);
  mkdirSync(sd, { mode: 0o700 });
  const e = t.throws(() => store.writePlug(plug as never), { instanceOf: StateDirSwappedError });
  t.regex(
    e!.message,
    new RegExp(
      `state directory ${sd} is no longer the directory this process started with \\(device:inode:birth ${pinned}, now at ${sd}\\.moved\\); the path now names another directory \\(device:inode:birth [0-9]+:[0-9]+:[0-9]+\\)`,
    ),
  );
  t.is(exitCodeOf(e), 6, 'unsafe state');
  t.throws(() => store.readPlug(), { instanceOf: StateDirSwappedError });
  t.deepEqual(readdirSync(sd), [], 'nothing written into the fresh directory');
  t.deepEqual(readdirSync(`${sd}.moved`), ['plug.json']);
  rmSync(base, { recursive: true });
});

test('a symbolic link to another directory put at the path is refused as a swap (naming its target); nothing there is removed', (t) => {
  const { base, sd } = statePath();
  const other = join(base, 'other');
  mkdirSync(other, { mode: 0o700 });
  writeFileSync(join(other, 'queue-7.sock'), '');
  const store = new StateStore(sd);
  store.writePlug(plug as never);
  renameSync(sd, `${sd}.moved`);
  symlinkSync(other, sd);
  const e = t.throws(() => store.removeSocket('queue-7.sock'), { instanceOf: StateDirSwappedError });
  t.regex(e!.message, new RegExp(`the path now names a symbolic link to ${other}`));
  t.true(existsSync(join(other, 'queue-7.sock')));
  rmSync(base, { recursive: true });
});

test('the path renamed away with nothing in its place: a write is refused, and no directory is created there', (t) => {
  const { base, sd } = statePath();
  const store = new StateStore(sd);
  store.writePlug(plug as never);
  renameSync(sd, `${sd}.moved`);
  const e = t.throws(() => store.writePlug(plug as never), { instanceOf: StateDirSwappedError });
  t.regex(e!.message, /the path now names nothing/);
  t.false(existsSync(sd), 'not created again');
  rmSync(base, { recursive: true });
});

test("a directory removed (its own teardown's removeSelf, or anyone's rm) leaves the path free: a directory made there again is used and pinned anew", (t) => {
  const { base, sd } = statePath();
  const store = new StateStore(sd);
  store.writePlug(plug as never);
  const first = pinnedStateDir(sd);
  // this process's own removal
  const d = openCheckedDir(sd, false)!;
  const mark = d.mark();
  d.close();
  t.true(store.clear(mark));
  store.writePlug(plug as never);
  const second = pinnedStateDir(sd);
  t.truthy(second);
  t.not(second, first);
  // removed by someone else (another process's teardown): the pinned directory is gone, nothing was swapped
  rmSync(sd, { recursive: true });
  store.writePlug(plug as never);
  t.not(pinnedStateDir(sd), second);
  t.deepEqual(readdirSync(sd), ['plug.json']);
  rmSync(base, { recursive: true });
});

test('a watchdog or holder pins the identity its starter passed: a path that names another directory at its first open is refused', (t) => {
  const { base, sd } = statePath();
  mkdirSync(sd, { mode: 0o700 });
  const started = `${sd}-started`;
  mkdirSync(started, { mode: 0o700 });
  // The identity of another directory (the one the starter pinned, since moved): taken from a directory of this base.
  const d = openCheckedDir(started, false)!;
  const identity = d.identity();
  d.close();
  pinStateDir(sd, identity);
  t.is(pinnedStateDir(sd), identity);
  t.throws(() => new StateStore(sd).readPlug(), { instanceOf: StateDirSwappedError });
  rmSync(base, { recursive: true });
});

test('pinnedFilePath reaches the pinned directory through its descriptor, wherever it was moved: never a directory put at the path', (t) => {
  const { base, sd } = statePath();
  new StateStore(sd).writePlug(plug as never);
  const at = pinnedFilePath(sd, 'plug.json')!;
  t.regex(at, /^\/proc\/self\/fd\/[0-9]+\/plug\.json$/);
  renameSync(sd, `${sd}.moved`);
  mkdirSync(sd, { mode: 0o700 });
  t.true(lstatSync(at).isFile(), "the moved directory's file");
  t.false(existsSync(join(sd, 'plug.json')));
  rmSync(base, { recursive: true });
});
