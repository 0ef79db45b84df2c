/**
 * Records synplug did not write are not read (issue #19): a record owned by
 * another user (neither root nor the caller), or with more than one name (a
 * hard link, st_nlink > 1, whose other name may be another directory's
 * file), is refused before a byte is read, naming the file, its owner or
 * its link count, and what to do. Runs as root (it chowns).
 */
import test from 'ava';
import { chownSync, linkSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StateFileError, StateStore } from '../../src/guard/state.js';
import { readHistory } from '../../src/guard/history.js';
import { foreignFile } from '../../src/guard/state-fs.js';
import { exitCodeOf } from '../../src/cli/exit-codes.js';

const NOBODY = 65534;
const plug = { version: 1, state: 'released', owner: 'manual', pid: 1, since: 1, deadline: 2, dev: 'lo', releasedAt: 2 };

/** A state directory with plug.json written by synplug. */
function dirWithPlug(): { base: string; sd: string; store: StateStore } {
  const base = mkdtempSync(join(tmpdir(), 'synplug-foreign-'));
  const sd = join(base, 'state');
  const store = new StateStore(sd);
  store.writePlug(plug as never);
  return { base, sd, store };
}

test('a record owned by another user is refused, naming the file, its owner and what to do', (t) => {
  if (process.geteuid?.() !== 0) return t.fail('this test needs root (it chowns a record)');
  const { sd, store } = dirWithPlug();
  t.notThrows(() => store.readPlug(), "this user's record is read");
  chownSync(join(sd, 'plug.json'), NOBODY, NOBODY);
  const e = t.throws(() => store.readPlug(), { instanceOf: StateFileError });
  t.is(e!.path, join(sd, 'plug.json'));
  t.regex(
    e!.message,
    new RegExp(
      `^${join(sd, 'plug.json')} belongs to uid ${NOBODY}, neither root nor this user \\(uid 0\\): synplug writes its files as the user it runs as, so another user wrote it, so it is not read: remove it \\(`,
    ),
  );
  t.regex(e!.message, /find out who made it$/);
  t.is(exitCodeOf(e), 6);
});

test('a record with a second name (a hard link) is refused, naming the file and its link count', (t) => {
  const { base, sd, store } = dirWithPlug();
  const elsewhere = join(base, 'elsewhere');
  mkdirSync(elsewhere);
  linkSync(join(sd, 'plug.json'), join(elsewhere, 'plug.json'));
  const e = t.throws(() => store.readPlug(), { instanceOf: StateFileError });
  t.regex(
    e!.message,
    new RegExp(`^${join(sd, 'plug.json')} has 2 names \\(a hard link\\): synplug gives each of its files one name, so another name reaches it`),
  );
  t.is(exitCodeOf(e), 6);
});

test("the history is a record too: another user's history file is refused", (t) => {
  if (process.geteuid?.() !== 0) return t.fail('this test needs root (it chowns a record)');
  const { sd } = dirWithPlug();
  writeFileSync(join(sd, 'history.jsonl'), '', { mode: 0o600 });
  chownSync(join(sd, 'history.jsonl'), NOBODY, NOBODY);
  const e = t.throws(() => readHistory(sd), { instanceOf: StateFileError });
  t.regex(e!.message, /history\.jsonl belongs to uid 65534/);
});

test("foreignFile: root's and the user's files with one name pass; others' and hard-linked ones are named", (t) => {
  const me = process.geteuid?.() ?? 0;
  t.is(foreignFile({ uid: 0, nlink: 1 }), undefined);
  t.is(foreignFile({ uid: me, nlink: 1 }), undefined);
  t.regex(foreignFile({ uid: 4242, nlink: 1 })!, /^belongs to uid 4242, neither root nor this user/);
  t.regex(foreignFile({ uid: me, nlink: 3 })!, /^has 3 names \(a hard link\)/);
});
