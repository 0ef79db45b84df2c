/**
 * Live (this machine's nf_tables, a namespace of its own): a `table inet
 * synplug_report` that someone else made (no synplug comment,
 * teardown-marks.ts's REPORT_TABLE_COMMENT) is not synplug's. rv19 found
 * that protect's reload report added its counter chain to it, and nothing
 * ever removed it (teardown and the chain's retirement leave an unmarked
 * table alone). Now the report adds nothing to it and says why in
 * `uncounted` (refused and reset null); the hold is not the report's
 * business and goes on. Then, with the table gone, the report makes its own
 * marked table and counts (the contrast).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';

// biome-ignore lint/suspicious/noExplicitAny: the scenario's JSON result, asserted field by field
type Json = Record<string, any>;

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_REPORT_FOREIGN_SCENARIO';
const nft = (...args: string[]) => spawnSync('/usr/sbin/nft', args, { encoding: 'utf8' });

const scenarios = {
  async foreign() {
    const { armReport, REPORT_TABLE, reportChainName } = await import('../../src/guard/report.js');
    const dir = mkdtempSync(join(tmpdir(), 'sp-report-foreign-'));
    try {
      const held = [{ addrs: ['169.254.79.9'], ports: [9443] }];
      nft('add', 'table', 'inet', REPORT_TABLE);
      const c = await armReport(held, dir);
      const during = nft('list', 'table', 'inet', REPORT_TABLE).stdout;
      c.released();
      const report = await c.finish({ heldSyns: 0, holdMs: 0, dropped: 0 });
      const after = nft('list', 'table', 'inet', REPORT_TABLE).stdout;
      nft('delete', 'table', 'inet', REPORT_TABLE);
      // no such table: the report makes its own, marked, and counts
      const own = await armReport(held, dir);
      const ours = nft('list', 'table', 'inet', REPORT_TABLE).stdout;
      own.released();
      const ownReport = await own.finish({ heldSyns: 0, holdMs: 0, dropped: 0 });
      return { during, after, report, ours, ownReport, chain: reportChainName(dir) };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');

  test("an unmarked table inet synplug_report (someone else's) gets no counter chain: the report says why, refused and reset null", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'foreign', 60_000);
    t.notRegex(r.during, /chain/, `nothing added to the foreign table during the hold:\n${r.during}`);
    t.notRegex(r.after, /chain/, 'nor left after it');
    t.notRegex(r.during, /comment/, 'the table is still the one someone else made (no comment)');
    t.is(r.report.refused, null);
    t.is(r.report.reset, null);
    t.is(r.report.lossless, null);
    t.true(
      (r.report.uncounted as string[]).some((u) =>
        /the nftables table inet synplug_report exists and does not carry synplug's comment \(someone else made it\), so protect adds no counters to it; the hold itself goes on/.test(
          u,
        ),
      ),
      JSON.stringify(r.report.uncounted),
    );
    // the contrast: its own table, marked, with the chain; counted
    t.regex(r.ours, /comment "synplug: made by synplug protect/);
    t.regex(r.ours, new RegExp(`chain ${r.chain} `));
    t.is(r.ownReport.refused, 0);
  });
}
