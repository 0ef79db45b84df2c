/**
 * The queue hold's table comment (src/guard/teardown-marks.ts): synplug's
 * mark, the queue number its rules send to, and the mark of the state
 * directory whose setup made it (issue #19, the session-12 attack's
 * MA1-MA3: a table carried no word of which directory or queue it was, so
 * another directory took it for its own). The comment fits the kernel's
 * 127 bytes, reads back as written, and any other text is not a queue mark.
 */
import test from 'ava';
import { queueTableComment, queueTableMark, TABLE_COMMENT, tableIsMarked } from '../../src/guard/teardown-marks.js';
import { encodeTable } from '../../src/iptables/table.js';
import { StateDirSwappedError, stateDirMark } from '../../src/guard/state-fs.js';
import { StateStore } from '../../src/guard/state.js';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

test('a queue table comment reads back as written, fits 127 bytes at the largest queue number, and is synplug mark', (t) => {
  const c = queueTableComment(65535, '0123456789abcdef');
  t.is(c, `${TABLE_COMMENT}; queue 65535; state 0123456789abcdef`);
  t.true(Buffer.byteLength(c) <= 127);
  t.notThrows(() => encodeTable({ family: 'inet', name: 'synplug_queue', comment: c }));
  t.deepEqual(queueTableMark(c), { queueNum: 65535, stateMark: '0123456789abcdef' });
  t.true(tableIsMarked({ comment: c }, '6.18.0'));
  t.true(tableIsMarked({ comment: TABLE_COMMENT }, '6.18.0'), 'an earlier synplug table keeps its mark');
});

test('anything else is no queue mark: the plain comment, another text, a changed tail', (t) => {
  for (const c of [
    undefined,
    TABLE_COMMENT,
    'my table',
    `${TABLE_COMMENT}; queue 4200`,
    `${TABLE_COMMENT}; queue 4200; state 0123456789ABCDEF`,
    `${TABLE_COMMENT}; queue 4200; state 0123456789abcdef; more`,
    `x${TABLE_COMMENT}; queue 4200; state 0123456789abcdef`,
  ])
    t.is(queueTableMark(c), undefined, String(c));
  t.false(tableIsMarked({ comment: `${TABLE_COMMENT}; queue 4200` }, '6.18.0'));
  t.is(tableIsMarked({ comment: queueTableComment(1, '0123456789abcdef') }, '5.4.0'), undefined, 'a kernel before 5.10 keeps no comment');
});

test("a state directory's mark: the same for one directory (by any path to it), another for another directory, or one made anew at the same path", (t) => {
  const base = mkdtempSync(join(tmpdir(), 'sp-mark-'));
  try {
    const a = join(base, 'a');
    const b = join(base, 'b');
    mkdirSync(a, { mode: 0o700 });
    mkdirSync(b, { mode: 0o700 });
    const ma = stateDirMark(a);
    t.regex(ma ?? '', /^[0-9a-f]{16}$/);
    t.is(stateDirMark(a), ma, 'stable');
    t.not(stateDirMark(b), ma, 'another directory');
    t.is(stateDirMark(join(base, 'none')), undefined, 'no directory: no mark');
    // the same directory under another name (renamed) keeps its mark; a new one at the old path has another
    const moved = join(base, 'moved');
    renameSync(a, moved);
    t.is(stateDirMark(moved), ma);
    mkdirSync(a, { mode: 0o700 });
    // in this process the old path stays pinned to the directory it named first (now at moved): a new one there is
    // refused for every record, and the mark stays the pinned one's (what this process armed is still told for its own)
    t.throws(() => new StateStore(a).readSetup(), { instanceOf: StateDirSwappedError });
    t.is(stateDirMark(a), ma);
    // the new directory, under a name this process never pinned, has a mark of its own
    const fresh = join(base, 'fresh');
    renameSync(a, fresh);
    t.not(stateDirMark(fresh), ma);
    symlinkSync(moved, join(base, 'link'));
    t.throws(() => stateDirMark(join(base, 'link')), undefined, 'a link where the directory belongs is refused, as for every record');
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
