/**
 * Which network namespace synplug runs in, for its default state directory
 * (src/guard/state-dir.ts): home (that of process 1) or another one, told by
 * the device and inode of the namespace files. Here the "namespace files"
 * are ordinary files and hard links (a hard link has its file's device and
 * inode, as a bind mount under /run/netns has its namespace's), so every
 * case runs without a kernel: process 1's file readable and equal, readable
 * and different, unreadable (then only a trusted name under the named
 * folder counts: not a symbolic link, not a path another user could change).
 * The kernel's own case, `ip netns exec`, is test/live/cli-netns-exec-state-dir.test.ts.
 */
import test from 'ava';
import { chmodSync, linkSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { awayFromHome, cookieStateDir, HOME_STATE_DIR, namedNetnsOf } from '../../src/guard/state-dir.js';
import { DEFAULTS } from '../../src/guard/config.js';
import { givenStateDir } from '../../src/cli/guard-commands.js';

/** A folder with `own` (this thread's namespace file), `other` (another namespace's) and `named/` (the /run/netns stand-in). */
function places(t: { teardown: (f: () => void) => void }) {
  const dir = mkdtempSync(join(tmpdir(), 'synplug-state-dir-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const own = join(dir, 'own');
  const other = join(dir, 'other');
  const named = join(dir, 'named');
  writeFileSync(own, '');
  writeFileSync(other, '');
  mkdirSync(named, { mode: 0o755 });
  chmodSync(named, 0o755);
  return { dir, own, other, named, missing: join(dir, 'no-such-file') };
}

test("process 1's namespace readable and the same as this one: home, whatever is named", (t) => {
  const p = places(t);
  linkSync(p.own, join(p.named, 'ns1'));
  t.is(awayFromHome({ own: p.own, home: p.own, named: p.named }), undefined);
});

test("process 1's namespace readable and another: away, with the name when one names this namespace, unnamed (unshare -n) too", (t) => {
  const p = places(t);
  t.deepEqual(awayFromHome({ own: p.own, home: p.other, named: p.named }), {});
  linkSync(p.own, join(p.named, 'ns1'));
  linkSync(p.other, join(p.named, 'host'));
  t.deepEqual(awayFromHome({ own: p.own, home: p.other, named: p.named }), { name: 'ns1' });
});

test("process 1's namespace unreadable (EACCES here, or missing): away only in a namespace named under /run/netns", (t) => {
  const p = places(t);
  t.is(awayFromHome({ own: p.own, home: p.missing, named: p.named }), undefined, 'no name: cannot be told from home');
  t.is(awayFromHome({ own: p.own, home: p.missing, named: join(p.dir, 'no-such-dir') }), undefined, 'no /run/netns');
  linkSync(p.other, join(p.named, 'a-other'));
  t.is(awayFromHome({ own: p.own, home: p.missing, named: p.named }), undefined, 'a name of another namespace is not this one');
  linkSync(p.own, join(p.named, 'ns2'));
  linkSync(p.own, join(p.named, 'ns1'));
  t.deepEqual(awayFromHome({ own: p.own, home: p.missing, named: p.named }), { name: 'ns1' }, 'the first name in order');
});

test('without a readable own namespace file (no /proc) nothing is told: home', (t) => {
  const p = places(t);
  t.is(awayFromHome({ own: p.missing, home: p.other, named: p.named }), undefined);
});

test('a symbolic link under /run/netns is never taken for this namespace (a link to /proc/self/ns/net would name every namespace)', (t) => {
  const p = places(t);
  symlinkSync(p.own, join(p.named, 'link'));
  t.is(statSync(join(p.named, 'link')).ino, statSync(p.own).ino, 'followed, it would match');
  t.is(namedNetnsOf(statSync(p.own), p.named), undefined);
  t.is(awayFromHome({ own: p.own, home: p.missing, named: p.named }), undefined);
});

test("a name whose path another user could change (a folder writable by others, not sticky) is not taken: the state directory's rules, as for --netns", (t) => {
  const p = places(t);
  linkSync(p.own, join(p.named, 'ns1'));
  t.is(namedNetnsOf(statSync(p.own), p.named), 'ns1');
  chmodSync(p.named, 0o777);
  t.is(namedNetnsOf(statSync(p.own), p.named), undefined);
  t.is(awayFromHome({ own: p.own, home: p.missing, named: p.named }), undefined);
  chmodSync(p.named, 0o1777);
  t.is(namedNetnsOf(statSync(p.own), p.named), 'ns1', 'sticky: as /tmp');
});

test('the directories: /run/synplug at home (the library default), /run/synplug/netns/<cookie> in another namespace', (t) => {
  t.is(HOME_STATE_DIR, '/run/synplug');
  t.is(DEFAULTS.stateDir, HOME_STATE_DIR);
  t.is(cookieStateDir('4099'), '/run/synplug/netns/4099');
});

test('--state-dir and SYNPLUG_STATE_DIR win over any namespace default; neither: none given (the default is the namespace one)', (t) => {
  t.is(givenStateDir('/srv/a', { SYNPLUG_STATE_DIR: '/srv/b' }), '/srv/a');
  t.is(givenStateDir(undefined, { SYNPLUG_STATE_DIR: '/srv/b' }), '/srv/b');
  t.is(givenStateDir(undefined, {}), undefined);
});
