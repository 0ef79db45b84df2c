/**
 * The README's "When do you need synplug?" table carries the reload
 * matrix's measured numbers for a stop-then-start under protect, host and
 * VM, from bench/matrix/README.md's rows (a new user's check, issue 22: it
 * said "0 (110 restarts local, 30 inbound)" and claimed this machine's
 * kernel too, while the matrix lists 8 of 129,096 and 66 of 103,165 here),
 * and says why a stop-then-start can lose a few: the reset cause protect
 * names (report.ts).
 */
import test from 'ava';
import { readFileSync } from 'node:fs';

const read = (f: string) => readFileSync(new URL(`../../${f}`, import.meta.url), 'utf8');

test("the README's stop-then-start row carries every protected stop/start row of the matrix, and the reset cause", (t) => {
  const matrix = read('bench/matrix/README.md');
  // the matrix's protected tables: a row "| nginx stop, 0.3 s, start | unprotected | **N** / M ..." under a header naming protect
  const protectedCounts: Array<[string, string]> = [];
  for (const table of matrix.split(/\n\n/)) {
    const [header, , ...rows] = table.split('\n').filter((l) => l.startsWith('|'));
    if (!header || !/under `protect --wait-listen`/.test(header)) continue;
    const col = header.split('|').findIndex((c) => /under `protect --wait-listen`/.test(c));
    for (const row of rows) {
      if (!row.startsWith('| nginx stop, 0.3 s, start')) continue;
      const m = /\*\*([\d,]+)\*\* \/ ([\d,]+)/.exec(row.split('|')[col] ?? '');
      if (m) protectedCounts.push([m[1]!, m[2]!]);
    }
  }
  t.true(protectedCounts.length >= 3, JSON.stringify(protectedCounts));
  t.true(
    protectedCounts.some(([n]) => n !== '0'),
    'the matrix measured losses under protect here',
  );
  const readme = read('README.md');
  const row = readme.split('\n').find((l) => l.startsWith('| any server stopped and started'));
  t.truthy(row);
  for (const [n, of] of protectedCounts) t.true(row!.includes(n === '0' ? `of ${of}` : `**${n}** of ${of}`), `${n} of ${of}: ${row}`);
  t.notRegex(row!, /\| \*\*0\*\* \(110 restarts/, 'no bare 0 for every measurement');
  // why: the cause protect's report names for those resets
  t.true(row!.includes('"connections queued in a closing listener were reset"'), row);
  t.true(read('src/guard/report.ts').includes('connections queued in a closing listener were reset'), 'the words are protect’s');
});
