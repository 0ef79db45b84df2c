/**
 * The demo in a namespace of its own, the parts that need no kernel: errors
 * crossing the IPC channel keep their category (so the CLI's exit code),
 * the entry point's path beside the others, and the summary line's words on
 * where the demo ran and which hold it used. The runs themselves are live
 * tests (test/live/demo-isolated.test.ts).
 */
import test from 'ava';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DemoProcessError, toWireError } from '../../src/demo/isolated.js';
import { demoEntryPath } from '../../src/demo/client-process.js';
import { formatDemo } from '../../src/cli/demo-command.js';
import { exitCodeOf } from '../../src/cli/exit-codes.js';
import { MissingSupportError } from '../../src/guard/support.js';
import { SynplugError, UsageError } from '../../src/netlink/errors.js';
import { demoResult } from '../helpers/demo-result.js';
import type { DemoResult } from '../../src/demo/types.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

test('an error crosses the IPC channel with its name, message and category: the same exit code', (t) => {
  const errors = [
    new MissingSupportError([{ module: 'sch_plug', what: 'qdisc plug' }]),
    new UsageError('--gap: must be more than 0'),
    new SynplugError('demo interrupted by SIGINT: it stopped its clients and server', 'interrupted'),
  ];
  for (const e of errors) {
    const wire = JSON.parse(JSON.stringify(toWireError(e))) as ReturnType<typeof toWireError>;
    const back = new DemoProcessError(wire);
    t.is(back.message, e.message);
    t.is(back.name, e.name);
    t.is(back.category, e.category);
    t.is(exitCodeOf(back), exitCodeOf(e));
  }
  const internal = toWireError(new TypeError('boom'));
  t.is(internal.category, 'failure');
  t.regex(internal.message, /^internal error: TypeError: boom/);
});

test("demo-main: the entry point is where the demo looks for it, from the sources, tsc's output and the bundle", (t) => {
  t.is(demoEntryPath('demo-main'), join(ROOT, 'src/cli/bin/demo-main.ts'));
  t.true(existsSync(demoEntryPath('demo-main')));
  t.is(demoEntryPath('demo-main', join(ROOT, 'dist/demo/client-process.js')), join(ROOT, 'dist/cli/bin/demo-main.js'));
  t.is(demoEntryPath('demo-main', join(ROOT, 'dist/bundle/cli.cjs')), join(ROOT, 'dist/cjs/cli/bin/demo-main.js'));
});

const result = (over: Partial<DemoResult>): DemoResult => demoResult(over);

test('the summary line says where the demo ran and which hold it used', (t) => {
  const first = (r: DemoResult) => formatDemo(r).split('\n')[0];
  t.regex(
    first(result({})),
    /; the local queue hold was set up for the demo and removed again; it ran in a network namespace of its own: this one was not changed$/,
  );
  t.regex(
    first(result({ netns: 'caller', via: 'plug' })),
    /; the local hold on lo was set up for the demo and removed again; it ran in this network namespace \(--here\)$/,
  );
  t.regex(
    first(result({ netns: 'caller', setup: { by: 'already', actions: [], removed: [] } })),
    /; the local queue hold \(already set up\) was used and left as it was;/,
  );
});

test("the CommonJS library the demo's own process runs on: the tc registries hold the same kinds as the ES modules (no namespace 'default')", async (t) => {
  const { createRequire } = await import('node:module');
  const require = createRequire(import.meta.url);
  const cjs = require(join(ROOT, 'dist/cjs/tc/registry.js')) as typeof import('../../src/tc/registry.js');
  const esm = (await import(join(ROOT, 'dist/tc/registry.js'))) as typeof import('../../src/tc/registry.js');
  t.deepEqual(cjs.qdiscKindNames(), esm.qdiscKindNames());
  t.deepEqual(cjs.filterKindNames(), esm.filterKindNames());
  t.true(cjs.qdiscKindNames().every((k) => typeof k === 'string'));
  t.is(cjs.knownName(Buffer.from('pfifo'), 0, 5), 'pfifo');
});
