/**
 * The CLI's words about a hold come from the hold's mode (the registry's
 * `describe` and `setupHead`), not from the CLI testing mode names: the
 * queue hold is named as the queue hold wherever the CLI speaks of a hold
 * (demo summary, status, plug, check's set-up hint), and the plug holds keep
 * their words.
 */
import test from 'ava';
import { formatDemo } from '../../src/cli/demo-command.js';
import { formatCheck, formatPlug, formatRelease, formatSetup, formatStatus, formatTeardown } from '../../src/cli/format-guard.js';
import { holdWords, modeOfHold } from '../../src/guard/modes/index.js';
import { demoResult } from '../helpers/demo-result.js';
import type { DemoResult } from '../../src/demo/types.js';
import type { CheckResult, HoldStatus, StatusResult } from '../../src/guard/types.js';
import { inboundHoldStatus, statusResult } from '../helpers/guard-status.js';
import { qdiscEntry } from '../helpers/tc-entries.js';

/** A demo result: the local plug hold, one request per phase, nothing lost. */
const demo = (over: Partial<DemoResult>): DemoResult =>
  demoResult({ via: 'plug', clients: 1, maxHoldMs: 5200, ...over }, [{ startMs: 0, connectMs: 0.1, totalMs: 1, failure: null }]);

test('demo summary: the hold that was used names itself (the queue hold is not called the local hold on lo)', (t) => {
  const first = (r: DemoResult) => formatDemo(r).split('\n')[0];
  t.regex(first(demo({})), /; the local hold on lo was set up for the demo and removed again;/);
  const q = first(demo({ via: 'queue' }));
  t.regex(q, /; the local queue hold was set up for the demo and removed again;/);
  t.notRegex(q, /local hold on lo/);
  t.regex(
    first(demo({ via: 'queue', setup: { by: 'already', actions: [], removed: [] } })),
    /; the local queue hold \(already set up\) was used and left as it was;/,
  );
  const inbound = { mode: 'inbound' as const, dev: 'sqd0', inbound: { clientDev: 'sqd1', clientAddr: '169.254.212.2' } };
  t.regex(first(demo({ ...inbound, via: 'queue' })), /veth pair; the inbound queue hold on sqd0 was set up for the demo and removed again/);
  t.regex(first(demo({ ...inbound })), /veth pair; the inbound hold on sqd0 was set up for the demo and removed again/);
});

test('a hold is found by its mode name or, from an id alone, by the mode that owns the id', (t) => {
  t.is(modeOfHold({ id: 'queue:eth0' })?.name, 'queue');
  t.is(modeOfHold({ id: 'queue' })?.name, 'queue');
  t.is(modeOfHold({ id: 'inbound:eth0' })?.name, 'inbound');
  t.is(modeOfHold({ id: 'local' }, 'lo')?.name, 'local');
  t.is(modeOfHold({ id: 'nosuch:eth0' }), undefined);
  t.is(holdWords({ id: 'queue:eth0', dev: 'lo' }).label, 'inbound queue hold on eth0', "the device is the id's, not the result's");
  t.true(holdWords({ id: 'local', dev: 'lo' }).top);
  t.false(holdWords({ id: 'queue', dev: 'lo' }).top);
});

test('plug: the clients of each hold it held, by the hold', (t) => {
  const text = formatPlug({ dev: 'lo', addr: '169.254.255.254', deadline: 0, maxHoldMs: 1000, holds: ['queue:eth0', 'inbound:eth1'] }, '1s');
  t.regex(text, /^plugged: new connections arriving on eth0 and arriving on eth1 are held/);
});

/** A queue hold's status entry. */
function queueStatus(over: Partial<HoldStatus> = {}): HoldStatus {
  return {
    id: 'queue:eth0',
    mode: 'queue',
    via: 'queue',
    dev: 'eth0',
    state: 'partial',
    pieces: [{ piece: 'nftables table inet synplug_queue_eth0', status: 'missing' }],
    qdiscs: [],
    filters: [],
    ports: [443],
    addrs: [],
    queueNum: 4201,
    table: 'synplug_queue_eth0',
    verdict: 'compat',
    bound: null,
    ...over,
  };
}

test('status and check: a queue hold in its own words, its pieces not ok under it, and its own set-up command', (t) => {
  const s: StatusResult = {
    state: 'partial',
    plug: null,
    leases: [],
    holds: [queueStatus()],
  };
  const lines = formatStatus(s).split('\n');
  const i = lines.findIndex((l) => l.startsWith('queue hold queue:eth0 on eth0: PARTIAL; SYNs to port 443 go to queue 4201 (NFQUEUE target'));
  t.true(i >= 0, lines.join('\n'));
  t.is(lines[i + 1], '  MISSING nftables table inet synplug_queue_eth0');
  t.false(
    lines.some((l) => l.startsWith('marking:')),
    "the local plug hold's lines only when it is reported",
  );
  const c: CheckResult = {
    state: 'absent',
    pieces: [],
    holds: [{ id: 'queue:eth0', mode: 'queue', via: 'queue', dev: 'eth0', state: 'absent', ports: [443], queueNum: 4201 }],
  };
  t.regex(formatCheck(c), /run 'synplug setup --via queue --inbound eth0 --port 443 --queue-num 4201' to set it up/);
});

test("setup: the head line is the mode's, the actions under it", (t) => {
  const text = formatSetup({
    dev: 'eth0',
    addr: '',
    mark: 0,
    limit: 0,
    addedAddress: false,
    ownsAddress: false,
    hold: 'queue:eth0',
    via: 'queue',
    changed: true,
    actions: ['nftables: add table inet synplug_queue_eth0'],
    unverified: [],
    queue: { scope: 'inbound', num: 4200, maxlen: 65536, verdict: 'compat', table: 'synplug_queue_eth0', ports: [443], addrs: [] },
  });
  t.deepEqual(text.split('\n'), [
    'synplug queue hold set up: SYNs arriving on eth0 to port 443, held in netfilter queue 4200 (maxlen 65536; rule in table inet synplug_queue_eth0, the NFQUEUE target through nft_compat; bypass while nobody holds):',
    '  nftables: add table inet synplug_queue_eth0',
  ]);
});

test('text of plug, check and status when only an inbound hold is set up: no local address, no "on lo"', (t) => {
  t.is(
    formatPlug({ dev: 'lo', addr: '169.254.255.254', deadline: 0, maxHoldMs: 10000, holds: ['inbound:eth0'] }, '10s'),
    "plugged: new connections arriving on eth0 are held until 'synplug release' (at most 10s)",
  );
  t.is(
    formatPlug({ dev: 'lo', addr: '169.254.255.254', deadline: 0, maxHoldMs: 10000, holds: ['local', 'inbound:eth0'] }, '10s'),
    "plugged: new connections to 169.254.255.254 and arriving on eth0 are held until 'synplug release' (at most 10s)",
  );
  const check = formatCheck({
    state: 'absent',
    pieces: [],
    holds: [{ id: 'inbound:eth1', mode: 'inbound', via: 'plug', dev: 'eth1', state: 'absent' }],
  });
  t.is(check, "synplug is not set up (inbound:eth1 on eth1)\nrun 'synplug setup --inbound eth1 --port PORT...' to set it up");
  const status = formatStatus(statusResult([inboundHoldStatus()]));
  t.regex(
    status,
    /^setup: complete \(inbound:eth0: complete\)\nhold: no record \(plug\.json\)\ninbound hold eth0: complete; SYNs to port 80 held on spifb3 \(u32\)$/,
  );
  t.notRegex(status, /marking|\blo\b/);
});

test('teardown text: nothing set up says so (and what was left alone); a forgotten record is named', (t) => {
  t.is(
    formatTeardown({
      dev: 'lo',
      removed: [],
      kept: [],
      holds: [],
      nothingSetUp:
        'nothing to remove: the state directory /run/synplug records no setup (a hold set up through another --state-dir is torn down through that one)',
    }),
    'nothing to remove: the state directory /run/synplug records no setup (a hold set up through another --state-dir is torn down through that one)',
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
  // rv19's MINOR (contradictory wording): synplug's pieces left alone as another state directory's, after "nothing of synplug's"
  t.is(
    formatTeardown({
      dev: 'lo',
      removed: [],
      kept: ["nftables table inet synplug_queue: another state directory's queue hold (...): use that directory's --state-dir for it"],
      holds: ['queue'],
    }),
    "nothing of this state directory on lo to remove (forgot the record of queue)\nleft alone:\n  nftables table inet synplug_queue: another state directory's queue hold (...): use that directory's --state-dir for it",
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
        qdiscs: [qdiscEntry({ kind: 'fq_codel', handle: '0:', root: true, ifindex: 9, dev: 'spifb9' })],
      }),
    ],
    { state: 'partial', unrecorded },
  );
  const st = formatStatus(s);
  t.regex(st, /^unrecorded: spifb3 \(synplug's alias, no record\) — 'synplug teardown --inbound va' removes it$/m);
  t.notRegex(st, / $/m, 'no line ends in a blank');
});

test("status: the local plug hold's lines come from its own entry in holds (address, counters, marking, qdiscs, ruleset)", (t) => {
  const local: HoldStatus = {
    id: 'local',
    mode: 'local',
    via: 'plug',
    dev: 'lo',
    addr: '169.254.255.254',
    state: 'ok',
    pieces: [],
    qdiscs: [qdiscEntry({ kind: 'plug', handle: '40:', parent: '1:4', ifindex: 1, dev: 'lo' })],
    filters: [],
    marking: [{ address: '169.254.255.254', expiresMs: 4000, timeoutMs: 10000 }],
    ruleset: 'table ip synplug {\n}\n',
    held: 1,
    passed: 2,
    dropped: 0,
  };
  const lines = formatStatus(statusResult([local])).split('\n');
  t.is(lines[0], 'setup: complete on lo for 169.254.255.254');
  t.true(lines.includes('packets: 1 held now, 2 passed, 0 dropped over the limit'), lines.join('\n'));
  t.true(
    lines.some((l) => l.startsWith('marking: 169.254.255.254 (')),
    lines.join('\n'),
  );
  t.regex(lines[lines.indexOf('qdiscs:') + 1], /^ {2}qdisc plug 40: .*parent 1:4/);
  t.deepEqual(lines.slice(lines.indexOf('nftables:')), ['nftables:', '  table ip synplug {', '  }']);
  const both = formatStatus(statusResult([local, inboundHoldStatus()])).split('\n');
  t.is(both[0], 'setup: complete (local: complete, inbound:eth0: complete)');
  t.is(both[1], 'local hold on lo for 169.254.255.254: complete');
});

test('release with no hold there: "no hold on DEV", not a plug qdisc (the queue hold has none)', (t) => {
  const text = formatRelease({ dev: 'lo', released: true, wasBuffering: false, backlog: 0, plugExists: false, brokeLeases: 0, holds: ['local'] });
  t.is(text, 'no hold on lo: nothing is held (synplug is not set up there)');
  t.notRegex(text, /\bplug\b/);
});
