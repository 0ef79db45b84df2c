/**
 * The advice of a refused --metrics-file directory: node_exporter reads the
 * file as another user, so the state directory's "a directory of your own
 * (mode 0700)" would hide it from node_exporter; a missing directory named
 * "node_exporter's textfile directory" as if it were one. Now: mode 0755
 * and why, and where such a file goes.
 */
import test from 'ava';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkMetricsFile } from '../../src/guard/metrics.js';

test('a shared (sticky) directory: a directory of your own inside it, mode 0755 (node_exporter reads the file), not 0700', (t) => {
  const base = mkdtempSync(join(tmpdir(), 'synplug-metricsdir-'));
  try {
    const shared = join(base, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    const e = t.throws(() => checkMetricsFile(join(shared, 'synplug.prom')));
    t.regex(
      e!.message,
      /it is a shared directory \(sticky\): use a directory of your own inside it \(mode 0755: node_exporter, another user, reads the file there\)/,
    );
    t.notRegex(e!.message, /0700/);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test("a missing directory: said to be missing, then where a metrics file goes (node_exporter's textfile directory)", (t) => {
  const base = mkdtempSync(join(tmpdir(), 'synplug-metricsdir-'));
  try {
    const dir = join(base, 'none');
    const e = t.throws(() => checkMetricsFile(join(dir, 'synplug.prom')));
    t.is(
      e!.message,
      `--metrics-file ${join(dir, 'synplug.prom')}: the directory ${dir} does not exist (synplug creates no directory for it): give a file in node_exporter's textfile directory (its --collector.textfile.directory; Debian's: /var/lib/prometheus/node-exporter), or create ${dir} (mode 0755) and point node_exporter at it`,
    );
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
