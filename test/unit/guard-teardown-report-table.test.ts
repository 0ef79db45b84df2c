/**
 * Teardown of one state directory's holds while another directory's hold is
 * in the namespace, and the reload report's table (`inet synplug_report`,
 * which the first protect makes and teardown of the last hold removes).
 * The kernel is the double (test/helpers/fake-kernel.ts).
 *
 * - rv19's MINOR: teardown said it kept the report's table for the other
 *   hold though no protect had made it: a table that is not there. Now it
 *   says so only when the table is there.
 * - An inbound queue hold's table is `synplug_queue_DEV`, and a device name
 *   may hold a `-` (`sp-flt0`), which the name check of synplug's tables
 *   did not take: teardown of the other directory took such a hold for none
 *   and removed the report's table it counts with. Its mark decides now.
 */
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as guard from '../../src/guard/index.js';
import { FakeKernel } from '../helpers/fake-kernel.js';
import { armReport } from '../../src/guard/report.js';

/** The double with one more device, `spflt1` (a copy of its `sp-flt0`). */
function kernelWithDevice(): FakeKernel {
  const kernel = new FakeKernel();
  const veth = kernel.state.links.find((l) => l.name === 'sp-flt0')!;
  kernel.state.links.push({ ...veth, index: 9, name: 'spflt1' });
  return kernel;
}

const hasReportTable = (k: FakeKernel) => k.state.tables.some((t) => t.name === 'synplug_report');

for (const dev of ['spflt1', 'sp-flt0']) {
  test.serial(
    `teardown with another directory's inbound hold on ${dev} in the namespace: the report table is named kept only when it is there, and kept`,
    async (t) => {
      const kernel = kernelWithDevice();
      const undo = kernel.install();
      const base = mkdtempSync(join(tmpdir(), 'synplug-tdreport-'));
      try {
        const [a, b, c] = [join(base, 'a'), join(base, 'b'), join(base, 'c')];
        await guard.setup({ stateDir: a, via: 'queue', addr: '169.254.46.11' });
        await guard.setup({ stateDir: b, via: 'queue', inbound: { dev, ports: [8080] }, queue: { num: 4300 } });
        t.false(hasReportTable(kernel), 'no protect ran: no report table');
        const r = await guard.teardown({ stateDir: a });
        t.true(r.removed.length > 0, JSON.stringify(r));
        t.deepEqual(
          r.kept.filter((k) => k.includes('synplug_report')),
          [],
          `kept: ${r.kept.join(' | ')}`,
        );
        // with the table there (a protect of b's made it): kept, and said
        const counting = await armReport([{ addrs: [], ports: [8080] }], b);
        counting.abandon();
        t.true(hasReportTable(kernel));
        await guard.setup({ stateDir: c, via: 'queue', addr: '169.254.46.12', queue: { num: 4400 } });
        const r2 = await guard.teardown({ stateDir: c });
        t.true(hasReportTable(kernel), `b's hold still counts with it: kept (${JSON.stringify(r2)})`);
        t.true(
          r2.kept.some((k) =>
            k.startsWith(`nftables table inet synplug_report: the reload report's counters of synplug's other hold(s) here (table inet synplug_queue_${dev})`),
          ),
          `kept: ${r2.kept.join(' | ')}`,
        );
        await guard.teardown({ stateDir: b });
        t.false(hasReportTable(kernel), 'the last hold gone: removed');
      } finally {
        undo();
        rmSync(base, { recursive: true, force: true });
      }
    },
  );
}

test.serial(
  "teardown with another directory's local plug hold in the namespace (its table `ip synplug`, not inet): the report table it counts with is kept",
  async (t) => {
    const kernel = kernelWithDevice();
    const undo = kernel.install();
    const base = mkdtempSync(join(tmpdir(), 'synplug-tdreport-'));
    try {
      const [a, c] = [join(base, 'a'), join(base, 'c')];
      const sa = await guard.setup({ stateDir: a, via: 'plug', addr: '169.254.46.21' });
      const tableA = kernel.state.tables.find((x) => x.name === 'synplug');
      t.truthy(tableA, JSON.stringify(sa));
      const counting = await armReport([{ addrs: ['169.254.46.21'], ports: [] }], a);
      counting.abandon();
      t.true(hasReportTable(kernel));
      await guard.setup({ stateDir: c, via: 'queue', addr: '169.254.46.22' });
      const r = await guard.teardown({ stateDir: c });
      t.true(hasReportTable(kernel), `a's plug hold still counts with it: kept (${JSON.stringify(r)})`);
      t.true(
        r.kept.some((k) => k.startsWith(`nftables table inet synplug_report: the reload report's counters of synplug's other hold(s) here (table ip synplug)`)),
        `kept: ${r.kept.join(' | ')}`,
      );
    } finally {
      undo();
      rmSync(base, { recursive: true, force: true });
    }
  },
);
