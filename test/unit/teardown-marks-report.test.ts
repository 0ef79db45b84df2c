/**
 * The reload report's table comment (src/guard/teardown-marks.ts): protect
 * makes `inet synplug_report`, not setup, and its comment says so (it said
 * "made by synplug setup"); teardown knows it for synplug's, and a report
 * table an earlier synplug made with the setup comment too.
 */
import test from 'ava';
import { REPORT_TABLE_COMMENT, TABLE_COMMENT, tableIsMarked } from '../../src/guard/teardown-marks.js';
import { encodeTable } from '../../src/iptables/table.js';

test("the report table's comment names protect as its maker and teardown as its remover, fits the kernel's 127 bytes, and is synplug's mark", (t) => {
  t.regex(REPORT_TABLE_COMMENT, /made by synplug protect\b.*removed by synplug teardown/);
  t.notRegex(REPORT_TABLE_COMMENT, /setup/);
  t.true(Buffer.byteLength(REPORT_TABLE_COMMENT) <= 127);
  t.notThrows(() => encodeTable({ family: 'inet', name: 'synplug_report', comment: REPORT_TABLE_COMMENT }));
  t.true(tableIsMarked({ comment: REPORT_TABLE_COMMENT }, '6.18.0'));
  t.true(tableIsMarked({ comment: TABLE_COMMENT }, '6.18.0'), "an earlier synplug's report table keeps its mark");
  t.false(tableIsMarked({ comment: `${REPORT_TABLE_COMMENT}!` }, '6.18.0'));
});
