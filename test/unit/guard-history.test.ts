/**
 * The reload history (src/guard/history.ts) in a temporary state directory,
 * and `synplug history` through the CLI bundle: appended in order, bounded
 * and rotated, never through a link, a damaged file named with exit 6, a
 * write failure a warning that keeps the command's result.
 */
import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { appendHistory, HISTORY_FILE, HISTORY_OLD_FILE, lastReload, readHistory, recordHistory, type HistoryEntry } from '../../src/guard/history.js';
import { StateFileError } from '../../src/guard/errors.js';

const BIN = fileURLToPath(new URL('../../dist/bundle/synplug.cjs', import.meta.url));

const report = (refused: number) => ({
  heldSyns: 3,
  holdMs: 12.5,
  dropped: 0,
  refused,
  reset: 0,
  listenerDrops: 0,
  lossless: refused === 0,
});
const entry = (exitCode: number, refused = 0): Omit<HistoryEntry, 'id'> => ({
  command: 'protect',
  start: new Date(Date.UTC(2026, 11, 5, 4, 0, exitCode)).toISOString(),
  end: new Date(Date.UTC(2026, 11, 5, 4, 0, exitCode, 500)).toISOString(),
  holds: ['queue'],
  exitCode,
  report: report(refused),
});

function stateDir(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'synplug-history-')), 'state');
  mkdirSync(dir, { mode: 0o700 });
  return dir;
}

function cli(args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 30_000, env: { ...process.env, SYNPLUG_STATE_DIR: '' } });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

test('entries are appended in order with ids 1, 2, 3; -n gives the last ones; the file is one JSON object per line', async (t) => {
  const dir = stateDir();
  for (const c of [0, 1, 2]) await appendHistory(dir, entry(c));
  const all = readHistory(dir);
  t.deepEqual(
    all.map((e) => [e.id, e.exitCode]),
    [
      [1, 0],
      [2, 1],
      [3, 2],
    ],
  );
  t.deepEqual(all[0], { id: 1, ...entry(0) });
  t.deepEqual(
    readHistory(dir, 2).map((e) => e.id),
    [2, 3],
  );
  const lines = readFileSync(join(dir, HISTORY_FILE), 'utf8').trim().split('\n');
  t.deepEqual(
    lines.map((l) => (JSON.parse(l) as HistoryEntry).id),
    [1, 2, 3],
  );
  t.deepEqual(lastReload(dir), { lastReload: { id: 3, ...entry(2) } });
});

test('a directory that does not exist: no history, nothing created', (t) => {
  const dir = join(mkdtempSync(join(tmpdir(), 'synplug-history-')), 'absent');
  t.deepEqual(readHistory(dir), []);
  t.false(existsSync(dir));
});

test('bounded: past the cap the file becomes the one older generation; ids go on; the history is both, oldest first', async (t) => {
  const dir = stateDir();
  // one line as synplug writes it (with its namespace's cookie)
  const probe = stateDir();
  await appendHistory(probe, entry(0));
  const one = statSync(join(probe, HISTORY_FILE)).size;
  const cap = one * 3; // three entries a file
  for (let i = 0; i < 8; i++) await appendHistory(dir, entry(i), cap);
  t.true(statSync(join(dir, HISTORY_FILE)).size <= cap);
  t.true(statSync(join(dir, HISTORY_OLD_FILE)).size <= cap);
  const ids = readHistory(dir).map((e) => e.id);
  // 1-3 rotated out twice over: 4-6 in the older file, 7-8 in the newest.
  t.deepEqual(ids, [4, 5, 6, 7, 8]);
});

test('a damaged history file: reading and appending refuse, naming the file (exit 6 in the CLI); status shows why', async (t) => {
  const dir = stateDir();
  await appendHistory(dir, entry(0));
  const file = join(dir, HISTORY_FILE);
  writeFileSync(file, `${readFileSync(file, 'utf8')}{"id": "x"\n`);
  const e = t.throws(() => readHistory(dir), { instanceOf: StateFileError });
  t.is(e?.category, 'bad-state');
  t.regex(e!.message, new RegExp(`${file} is damaged: line 2 is not a history entry`));
  await t.throwsAsync(appendHistory(dir, entry(1)), { instanceOf: StateFileError });
  t.is(readFileSync(file, 'utf8').split('\n').length, 3, 'the damaged file is left as it was');
  const l = lastReload(dir);
  t.is(l.lastReload, null);
  t.regex(l.historyError!, /is damaged/);
  const r = cli(['history', '--state-dir', dir]);
  t.is(r.code, 6);
  t.true(r.stderr.includes(file), r.stderr);
});

test('never through a link: a history file that is a symbolic link is refused, its target untouched', async (t) => {
  const dir = stateDir();
  const victim = join(dir, '..', 'victim');
  writeFileSync(victim, 'precious\n');
  symlinkSync(victim, join(dir, HISTORY_FILE));
  t.throws(() => readHistory(dir), { instanceOf: StateFileError, message: /symbolic link/ });
  await t.throwsAsync(appendHistory(dir, entry(0)), { instanceOf: StateFileError });
  t.is(readFileSync(victim, 'utf8'), 'precious\n');
});

test('a history write that fails after the command ran: a warning, never a throw', async (t) => {
  const dir = stateDir();
  chmodSync(dir, 0o777); // writable by others: unsafe, every write refused
  const w = await recordHistory(dir, entry(3));
  t.regex(w!, /^the reload history was not written: .*state/);
  t.false(existsSync(join(dir, HISTORY_FILE)));
  chmodSync(dir, 0o700);
  t.is(await recordHistory(dir, entry(3)), undefined);
  t.like(readHistory(dir), [{ id: 1, exitCode: 3 }]);
});

test('synplug history: text and --json (an array of { id, command, start, holds, exitCode, report }), -n', async (t) => {
  const dir = stateDir();
  await appendHistory(dir, entry(0));
  await appendHistory(dir, entry(1, 2));
  const j = cli(['history', '--json', '--state-dir', dir]);
  t.is(j.code, 0, j.stderr);
  t.deepEqual(JSON.parse(j.stdout), [
    { id: 1, ...entry(0) },
    { id: 2, ...entry(1, 2) },
  ]);
  const one = cli(['history', '-n', '1', '--state-dir', dir]);
  t.is(one.code, 0);
  const lines = one.stdout.trim().split('\n');
  t.is(lines.length, 1);
  t.true(lines[0].startsWith(`#2 ended ${entry(1).end} protect (queue): held 12.5 ms`), lines[0]);
  t.regex(lines[0], /exit 1; LOST: at least 2 refused SYN\(s\), retransmissions included, 0 reset, 0 dropped$/);
  const none = cli(['history', '--state-dir', stateDir()]);
  t.is(none.stdout, 'no reload recorded\n');
  // -n 0 printed "no reload recorded" although two were
  const zero = cli(['history', '-n', '0', '--state-dir', dir]);
  t.is(zero.code, 2);
  t.is(zero.stdout, '');
  t.regex(zero.stderr, /-n 0 would list no reload: give 1 or more/);
});

test("the history is in the order the commands ended, and each line is labelled with its end (and its start when a second or more before); an earlier synplug's line without end with its start", async (t) => {
  // history listed reloads by end time (lines are written when a command ends) but labelled them with start times
  const dir = stateDir();
  const at = (s: number) => new Date(Date.UTC(2026, 11, 5, 4, 0, s)).toISOString();
  const long = { ...entry(0), start: at(10), end: undefined }; // a long protect: started first, ends last
  const short = { ...entry(0), start: at(12), end: at(13) };
  await appendHistory(dir, short);
  const before = Date.now();
  await appendHistory(dir, long);
  const [a, b] = readHistory(dir);
  t.is(a.end, at(13));
  t.true(Date.parse(b.end!) >= before && Date.parse(b.end!) <= Date.now(), 'appendHistory gives the end: now');
  const old = { id: 3, ...entry(0), end: undefined, start: at(30) };
  writeFileSync(join(dir, HISTORY_FILE), `${readFileSync(join(dir, HISTORY_FILE), 'utf8')}${JSON.stringify(old)}\n`);
  const text = cli(['history', '--state-dir', dir]).stdout.trim().split('\n');
  t.true(text[0].startsWith(`#1 ended ${at(13)} protect (queue) (started ${at(12)}): held`), text[0]);
  t.true(text[1].startsWith(`#2 ended ${b.end} protect (queue) (started ${at(10)}): held`), text[1]);
  t.true(text[2].startsWith(`#3 started ${at(30)} protect (queue): held`), text[2]);
  const ends = [a, b].map((e) => Date.parse(e.end!));
  t.true(ends[0] <= ends[1], 'listed in the order they ended');
  const json = JSON.parse(cli(['history', '--json', '--state-dir', dir]).stdout) as HistoryEntry[];
  t.deepEqual(
    json.map((e) => [e.start, e.end]),
    [
      [at(12), at(13)],
      [at(10), b.end],
      [at(30), undefined],
    ],
  );
});

test("another namespace's entries in the same directory are not this namespace's reloads: left out, left in the file", async (t) => {
  // `status` run inside a namespace showed the host's last reload from a shared state directory
  const dir = stateDir();
  await appendHistory(dir, entry(0));
  const written = JSON.parse(readFileSync(join(dir, HISTORY_FILE), 'utf8')) as { netns?: string };
  // this process's namespace, as the kernel gives it to python3 (SO_NETNS_COOKIE = 71)
  const py = "import socket; s = socket.socket(); print(int.from_bytes(s.getsockopt(socket.SOL_SOCKET, 71, 8), 'little'))";
  t.is(written.netns, execFileSync('python3', ['-c', py], { encoding: 'utf8' }).trim(), 'the entry names its namespace');
  const other = { id: 2, ...entry(1), netns: String(BigInt(written.netns!) + 1000000n) };
  const older = { id: 3, ...entry(2) }; // an earlier synplug's entry: no namespace, shown
  writeFileSync(join(dir, HISTORY_FILE), `${readFileSync(join(dir, HISTORY_FILE), 'utf8')}${JSON.stringify(other)}\n${JSON.stringify(older)}\n`);
  t.deepEqual(readHistory(dir), [
    { id: 1, ...entry(0) },
    { id: 3, ...entry(2) },
  ]);
  t.deepEqual(lastReload(dir).lastReload, { id: 3, ...entry(2) });
  t.is(readFileSync(join(dir, HISTORY_FILE), 'utf8').trim().split('\n').length, 3, 'the file keeps every entry');
  const next = await appendHistory(dir, entry(3));
  t.is(next.id, 4, 'ids go on over every entry');
});

test("a command's history entry lists its holds in one order (sorted, as the metrics' label), whatever order they were set up in", async (t) => {
  // history showed "(queue:f10v0, queue)" in one entry and "(queue, queue:f10v0)" in another
  const { accounted } = await import('../../src/guard/accounting.js');
  const dir = stateDir();
  for (const holds of [
    ['queue:eth0', 'queue'],
    ['queue', 'queue:eth0'],
  ])
    await accounted(
      'release',
      { stateDir: dir },
      async () => ({}),
      () => ({ holds, history: { exitCode: 0, report: entry(0).report }, change: null }),
    );
  t.deepEqual(
    readHistory(dir).map((e) => e.holds),
    [
      ['queue', 'queue:eth0'],
      ['queue', 'queue:eth0'],
    ],
  );
});
