/**
 * Unit: the second fresh-user review's text and input fixes (no kernel):
 * teardown's text with nothing set up, check's and status's line for an
 * unrecorded IFB, status lines without trailing blanks, a loopback --addr
 * with --inbound refused, setup.json's damage hint.
 */
import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateInbound } from '../../src/guard/modes/inbound.js';
import { StateStore } from '../../src/guard/state.js';
import { exitCodeOf } from '../../src/cli/exit-codes.js';
import { formatCheck, formatStatus, formatTeardown } from '../../src/cli/format-guard.js';
import type { CheckResult } from '../../src/guard/types.js';
import type { QdiscEntry } from '../../src/tc/types.js';
import { inboundHoldStatus, statusResult } from '../helpers/guard-status.js';

test('setup --inbound refuses a loopback destination (--addr 127.0.0.1, ::1): exit 2, naming the local hold', (t) => {
  for (const a of ['127.0.0.1', '127.1.2.3', '::1']) {
    const e = t.throws(() => validateInbound({ dev: 'eth0', ports: [80], addrs: [a] })) as Error;
    t.is(exitCodeOf(e), 2, a);
    t.regex(e.message, /a loopback address, which no SYN arriving on a device from outside is sent to/, a);
    t.regex(e.message, /the local hold \('synplug setup' without --inbound\)/);
  }
  t.deepEqual(validateInbound({ dev: 'eth0', ports: [80], addrs: ['169.254.1.1'] }).addrs, ['169.254.1.1']);
});

test("setup.json's damage hint says plainly what re-running setup does to the local hold's address", (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'synplug-review-state-'));
  try {
    writeFileSync(join(dir, 'setup.json'), '{"version": 2, "holds": ', { mode: 0o600 });
    const e = t.throws(() => new StateStore(dir).readSetup()) as Error;
    t.is(exitCodeOf(e), 6);
    t.regex(e.message, /setup\.json/);
    t.regex(e.message, /a later teardown leaves it \('ip addr del ADDR dev lo' removes it\)/);
    t.notRegex(e.message, /teardown then leaves an address/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('teardown text: nothing set up says so (and what was left alone); a forgotten record is named', (t) => {
  t.is(
    formatTeardown({
      dev: 'lo',
      removed: [],
      kept: [],
      holds: [],
      nothingSetUp: "nothing of synplug's is set up (no record, no hold found); nothing to remove",
    }),
    "nothing of synplug's is set up (no record, no hold found); nothing to remove",
  );
  t.is(
    formatTeardown({
      dev: 'va',
      removed: [],
      kept: ["link x: not synplug's"],
      holds: [],
      nothingSetUp: 'teardown --inbound va: no inbound hold of va is set up; nothing to remove',
    }),
    "teardown --inbound va: no inbound hold of va is set up; nothing to remove\nleft alone:\n  link x: not synplug's",
  );
  t.is(
    formatTeardown({ dev: 'ghost', removed: [], kept: [], holds: ['inbound:ghost'] }),
    "nothing of synplug's on ghost to remove (forgot the record of inbound:ghost)",
  );
});

const unrecorded = [{ ifb: 'spifb3', dev: 'va', teardown: 'synplug teardown --inbound va' }];

test('check and status name an IFB of synplug that no record lists; check says no setup command when that is all', (t) => {
  const c: CheckResult = { state: 'partial', pieces: [], holds: [{ id: 'local', mode: 'local', via: 'plug', dev: 'lo', state: 'absent' }], unrecorded };
  const ct = formatCheck({ ...c, holds: [] });
  t.regex(ct, /^ {2}unrecorded: spifb3 \(synplug's alias, no record\) — 'synplug teardown --inbound va' removes it$/m);
  t.notRegex(ct, /^run {2}to complete it/m);
  const ok = formatCheck({ ...c, holds: [{ id: 'local', mode: 'local', via: 'plug', dev: 'lo', state: 'ok', addr: '169.254.255.254' }] });
  t.regex(ok, /^synplug is set up on lo, but IFB\(s\) of synplug's that no record lists are left:$/m);
  t.notRegex(ok, /^run /m, 'nothing to set up: teardown --inbound is the command, on the unrecorded line');
  const absent = formatCheck(c);
  t.regex(absent, /^synplug is not set up on lo, but IFB\(s\) of synplug's that no record lists are left:$/m);
  const s = statusResult(
    [
      inboundHoldStatus({
        dev: 'va',
        state: 'partial',
        ifb: 'spifb9',
        qdiscs: [{ kind: 'fq_codel', handle: '0:', root: true, options: {}, ifindex: 9, dev: 'spifb9' }] as unknown as QdiscEntry[],
      }),
    ],
    { state: 'partial', unrecorded },
  );
  const st = formatStatus(s);
  t.regex(st, /^unrecorded: spifb3 \(synplug's alias, no record\) — 'synplug teardown --inbound va' removes it$/m);
  t.notRegex(st, / $/m, 'no line ends in a blank');
});
