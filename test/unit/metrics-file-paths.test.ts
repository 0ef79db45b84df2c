/**
 * `--metrics-file` paths that are refused before anything is held (issue
 * #19): a control character in the path (shown escaped, never written to
 * the terminal as it is), a directory under /run/netns (where `ip netns`
 * keeps named namespaces), and a directory inside the state directory (or
 * /run/synplug, the default state directories' tree). Exit 2.
 */
import test from 'ava';
import { mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../../src/netlink/errors.js';
import { checkMetricsFile } from '../../src/guard/metrics.js';
import { controlCharAt, escapeControl } from '../../src/guard/state-fs.js';
import { exitCodeOf } from '../../src/cli/exit-codes.js';

const base = (): string => mkdtempSync(join(tmpdir(), 'synplug-metrics-path-'));

test('a control character in --metrics-file is refused, shown escaped, and the message carries no control character', (t) => {
  const b = base();
  for (const [c, shown] of [
    ['\n', '\\n'],
    ['\t', '\\t'],
    ['\r', '\\r'],
    ['\x1b', '\\x1b'],
    ['\x7f', '\\x7f'],
    ['\x00', '\\x00'],
    ['\u009b', '\\u009b'],
  ] as const) {
    const path = join(b, `syn${c}plug.prom`);
    const e = t.throws(() => checkMetricsFile(path), { instanceOf: UsageError })!;
    t.is(
      e.message,
      `--metrics-file "${b}/syn${shown}plug.prom" has a control character (${shown}, at character ${b.length + 5}), which no file name synplug writes needs: give the path without it`,
    );
    t.is(controlCharAt(e.message), -1, 'no control character in the message');
    t.is(exitCodeOf(e), 2);
  }
});

test('escapeControl leaves other characters as they are', (t) => {
  t.is(escapeControl('/var/lib/é/x.prom'), '/var/lib/é/x.prom');
  t.is(escapeControl('a\nb\x01'), 'a\\nb\\x01');
});

test('a metrics file under /run/netns is refused, saying why', (t) => {
  for (const file of ['/run/netns/x.prom', '/run/netns/sub/x.prom']) {
    const e = t.throws(() => checkMetricsFile(file), { instanceOf: UsageError })!;
    t.is(
      e.message,
      `--metrics-file ${file}: /run/netns is where 'ip netns' keeps the named network namespaces (each file there is taken for one); no metrics file goes there: give a directory of its own (node_exporter's textfile directory, e.g. /var/lib/prometheus/node-exporter)`,
    );
    t.is(exitCodeOf(e), 2);
  }
});

test('a metrics file inside the state directory (itself, a directory in it, or through a link to it) is refused; beside it passes', (t) => {
  const b = base();
  const sd = join(b, 'state');
  mkdirSync(join(sd, 'sub'), { recursive: true, mode: 0o700 });
  symlinkSync(sd, join(b, 'link'));
  for (const file of [join(sd, 'synplug.prom'), join(sd, 'sub', 'synplug.prom'), join(b, 'link', 'synplug.prom')]) {
    const e = t.throws(() => checkMetricsFile(file, sd), { instanceOf: UsageError })!;
    t.is(
      e.message,
      `--metrics-file ${file}: ${sd} is the state directory, synplug's own records (owner-only: node_exporter cannot read it); no metrics file goes there: give a directory of its own (node_exporter's textfile directory, e.g. /var/lib/prometheus/node-exporter)`,
    );
  }
  // a name that only begins like the state directory's is not in it
  mkdirSync(`${sd}-textfile`);
  t.deepEqual(checkMetricsFile(join(`${sd}-textfile`, 'synplug.prom'), sd), { dir: `${sd}-textfile`, name: 'synplug.prom' });
  t.deepEqual(checkMetricsFile(join(b, 'synplug.prom'), sd), { dir: b, name: 'synplug.prom' });
});

test('a metrics file in /run/synplug (the default state directories) is refused, whatever state directory is given', (t) => {
  const e = t.throws(() => checkMetricsFile('/run/synplug/netns/x.prom', join(base(), 'state')), { instanceOf: UsageError })!;
  t.regex(e.message, /^--metrics-file \/run\/synplug\/netns\/x\.prom: \/run\/synplug holds synplug's state directories/);
});
