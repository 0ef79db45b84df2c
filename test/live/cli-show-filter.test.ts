/**
 * `synplug show filter --dev DEV --parent ingress|egress|HANDLE` (issue #13
 * item 1): the CLI prints what `tc filter show dev DEV ingress` prints, with
 * mirred targets named, and its --json matches `tc -j` (in tc's shape: the
 * fields synplug adds are taken out by test/helpers/tc-inbound.ts's
 * tcShape, as in the library's own tests). Filters are added by tc, on
 * devices of this file's own in the live suite's namespace.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FilterEntry } from '../../src/tc/types.js';
import { IP, TC, parseTcJson, quietly, sh, tcFilterAdd, tcShape, theirsShape } from '../helpers/tc-inbound.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'dist/bundle/synplug.cjs');
const DEV = 'sp-clif0';
const IFB = 'sp-clif1';

function synplug(args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test.before(() => {
  for (const d of [DEV, IFB]) {
    quietly(IP, 'link', 'del', d);
    sh(IP, 'link', 'add', d, 'type', 'ifb');
    sh(IP, 'link', 'set', d, 'up');
  }
  sh(TC, 'qdisc', 'add', 'dev', DEV, 'clsact');
  tcFilterAdd(DEV, 'ingress', `protocol ip pref 10 u32 match ip protocol 6 0xff match ip dport 80 0xffff action mirred egress redirect dev ${IFB}`);
  tcFilterAdd(DEV, 'egress', `protocol ip pref 20 u32 match ip dport 81 0xffff action mirred egress mirror dev ${IFB}`);
});
test.after.always(() => {
  for (const d of [DEV, IFB]) quietly(IP, 'link', 'del', d);
});

for (const parent of ['ingress', 'egress'] as const) {
  test(`show filter --parent ${parent}: text as tc filter show dev DEV ${parent}, JSON as tc -j`, (t) => {
    const text = synplug(['show', 'filter', '--dev', DEV, '--parent', parent]);
    t.is(text.code, 0, text.stderr);
    t.is(text.stdout, sh(TC, 'filter', 'show', 'dev', DEV, parent));
    t.regex(text.stdout, new RegExp(`to device ${IFB}\\)`), 'the mirred target is named');
    const json = synplug(['show', 'filter', '--dev', DEV, '--parent', parent, '--json']);
    t.is(json.code, 0, json.stderr);
    const ours = (JSON.parse(json.stdout) as FilterEntry[]).map(tcShape);
    const theirs = (parseTcJson(sh(TC, '-j', 'filter', 'show', 'dev', DEV, parent)) as Array<Record<string, unknown>>).map(theirsShape);
    t.deepEqual(ours, theirs);
  });
}

test("show filter without --parent lists what tc filter show dev DEV lists (the root qdisc's filters: none here)", (t) => {
  const r = synplug(['show', 'filter', '--dev', DEV]);
  t.is(r.code, 0, r.stderr);
  t.is(r.stdout, sh(TC, 'filter', 'show', 'dev', DEV));
});

test('--parent: a parent that is not a parent, and --parent on another object, are usage errors (exit 2)', (t) => {
  const bad = synplug(['show', 'filter', '--dev', DEV, '--parent', 'sideways']);
  t.is(bad.code, 2, bad.stderr);
  t.regex(bad.stderr, /sideways/);
  const other = synplug(['show', 'qdisc', '--dev', DEV, '--parent', 'ingress']);
  t.is(other.code, 2, other.stderr);
  t.regex(other.stderr, /--parent applies to filters only/);
});
