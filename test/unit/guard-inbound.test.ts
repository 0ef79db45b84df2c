/**
 * The inbound hold without a kernel (issue #13 item 2): its options checked
 * (bad input is a usage error, exit 2), its pieces and setup steps planned
 * from a synthetic observation, what it refuses (an IFB name clash: 2; a
 * foreign filter at synplug's pref: 7), its record entry as setup.json
 * stores and reads it, and a session of a local and an inbound hold
 * buffering both plugs in ONE datagram (the watchdog's release too).
 */
import test from 'ava';
import { NetlinkConnection } from '../../src/netlink/connection.js';
import { FakeTransport, nfnetlinkAck } from '../../src/netlink/testing.js';
import { parseMessages, NETLINK_ROUTE, type NetlinkMessage } from '../../src/netlink/message.js';
import { UsageError } from '../../src/netlink/errors.js';
import '../../src/netlink/route/index.js';
import { resolveConfig } from '../../src/guard/config.js';
import { LocalHold } from '../../src/guard/modes/local.js';
import {
  ForeignFilterError,
  IfbNameClashError,
  INBOUND_PIECES,
  INBOUND_PREF,
  InboundHold,
  familiesOf,
  ifbNameFor,
  inboundId,
  inboundRecordId,
  validateInbound,
  type InboundObservation,
} from '../../src/guard/modes/inbound.js';
import { holdMode } from '../../src/guard/modes/index.js';
import { armSteps, judgeHold, planHold } from '../../src/guard/pieces.js';
import { GuardSession } from '../../src/guard/session.js';
import { parseSetupRecord } from '../../src/guard/state.js';
import { exitCodeOf } from '../../src/cli/exit-codes.js';
import { setupOptions } from '../../src/cli/guard-commands.js';
import { formatCheck, formatSetup, formatStatus, formatTeardown } from '../../src/cli/format-guard.js';
import { inboundHoldStatus, statusResult } from '../helpers/guard-status.js';
import { qdiscEntry } from '../helpers/tc-entries.js';
import { ifbAlias } from '../../src/guard/teardown-marks.js';
import type { FilterEntry } from '../../src/tc/types.js';
import { untyped } from '../helpers/untyped.js';
import { inboundHoldRecord, LOCAL_HOLD } from '../helpers/record-mutations.js';
import { TCQ_PLUG_BUFFER, TCQ_PLUG_RELEASE_INDEFINITE, decodeTcMessage } from '../../src/tc/index.js';
import { constants as osConstants } from 'node:os';
import { silentSockets } from '../helpers/fake-session.js';
import { FakeKernel } from '../helpers/fake-kernel.js';

// The unit tier touches no kernel (test/helpers/unit-no-kernel.ts): every connection opened meanwhile reaches the double.
let undoKernel: () => void = () => {};
test.before(() => {
  undoKernel = new FakeKernel().install();
});
test.after.always(() => undoKernel());

const config = resolveConfig({ stateDir: '/nonexistent/synplug-unit' });

test('bad inbound input is a usage error (exit 2), refused before anything is sent', (t) => {
  const bad: unknown[] = [
    { dev: 'lo', ports: [80] },
    { dev: 'eth0', ports: [] },
    { dev: 'eth0' },
    { dev: 'eth0', ports: [0] },
    { dev: 'eth0', ports: [65536] },
    { dev: 'eth0', ports: [1.5] },
    { dev: 'eth0', ports: ['80'] },
    { dev: '', ports: [80] },
    { dev: 'a-name-longer-than-15', ports: [80] },
    { dev: 'eth0', ports: [80], addrs: ['169.254.1'] },
    { dev: 'eth0', ports: [80], addrs: ['169.254.0.0/16'] },
    { dev: 'eth0', ports: [80], addrs: ['::ffff:169.254.0.1'] },
    // multicast is what is refused here: no address of 127/8, 169.254/16 or fd00::/8 is one
    { dev: 'eth0', ports: [80], addrs: ['224.0.0.1'] },
    { dev: 'eth0', ports: [80], classifier: 'bpf' },
    { dev: 'eth0', ports: [80], extra: 1 },
  ];
  for (const o of bad) {
    const e = t.throws(() => untyped(validateInbound)(o), { instanceOf: UsageError }, JSON.stringify(o));
    t.is(exitCodeOf(e), 2);
  }
  t.regex(t.throws(() => validateInbound({ dev: 'lo', ports: [80] }))!.message, /local hold/);
  t.regex(t.throws(() => validateInbound({ dev: 'eth0', ports: [] }))!.message, /--port/);
});

test('inbound options in canonical form: ports sorted without duplicates, addresses canonical with IPv4 first; families from the addresses', (t) => {
  const s = validateInbound({ dev: 'eth0', ports: [443, 80, 443], addrs: ['FD00::0:1', '169.254.0.1', 'fd00::1'] });
  t.deepEqual(s, { dev: 'eth0', ports: [80, 443], addrs: ['169.254.0.1', 'fd00::1'], classifier: 'auto' });
  t.deepEqual(familiesOf([]), ['ip', 'ipv6']);
  t.deepEqual(familiesOf(['169.254.0.1']), ['ip']);
  t.deepEqual(familiesOf(['fd00::1']), ['ipv6']);
  t.is(inboundId('eth0'), 'inbound:eth0');
  t.is(ifbNameFor(0x7fffffff), 'spifb2147483647');
  t.true(Buffer.byteLength(ifbNameFor(0x7fffffff)) <= 15, 'the IFB name fits IFNAMSIZ for any ifindex');
  t.not(INBOUND_PREF.ip, INBOUND_PREF.ipv6, 'ip and ipv6 need different prefs');
  t.is(holdMode('inbound')?.name, 'inbound', 'registered');
});

test("the CLI's setup flags: --port, --classifier or a second --addr need --inbound; --dev, --mark, --force make no sense with it (there is no --table)", (t) => {
  const refused: Array<Record<string, unknown>> = [
    { port: ['80'] },
    { classifier: 'u32' },
    { addr: ['169.254.0.1', '169.254.0.2'] },
    { inbound: 'eth0', port: ['80'], dev: 'eth1' },
    { inbound: 'eth0', port: ['80'], mark: '2' },
    { inbound: 'eth0', port: ['80'], force: true },
    { inbound: 'eth0' },
    { inbound: 'eth0', port: ['http'] },
    { inbound: 'eth0', port: ['0'] },
    { inbound: 'eth0', port: ['70000'] },
    { inbound: '', port: ['80'] },
  ];
  for (const f of refused) t.throws(() => untyped(setupOptions)({ stateDir: '/tmp/x', ...f }), { instanceOf: UsageError }, JSON.stringify(f));
  t.like(setupOptions({ stateDir: '/tmp/x', inbound: 'eth0', port: ['80', '443'], addr: ['169.254.0.1', 'fd00::1'] }), {
    inbound: { dev: 'eth0', ports: [80, 443], addrs: ['169.254.0.1', 'fd00::1'] },
  });
  t.like(setupOptions({ stateDir: '/tmp/x', addr: ['169.254.0.9'] }), { addr: '169.254.0.9' });
});

/** A NETLINK_ROUTE connection whose every message is acked (errno from `answer`). */
function routeConn(answer: (m: NetlinkMessage, i: number) => number = () => 0) {
  const reply = (sent: Buffer) => parseMessages(sent).map((m, i) => nfnetlinkAck(m, answer(m, i), { capped: true }));
  const ft = new FakeTransport([reply, reply, reply], { keepSeq: true });
  return { ft, conn: new NetlinkConnection(ft, NETLINK_ROUTE, { timeoutMs: 1000 }) };
}

/** This state directory's mark, which the IFB's alias of its hold carries (teardown-marks.ts ifbAlias). */
const MARK = '0123456789abcdef';

const nothing: InboundObservation = {
  qdiscs: [qdiscEntry({ kind: 'noqueue', handle: '0:', root: true, ifindex: 3 })],
  ingressFilters: [],
  egressFilters: [],
  ifb: { exists: false },
  ifbQdiscs: [],
};

function hold(o: { addrs?: string[]; ifbIndex?: number } = {}) {
  const { conn, ft } = routeConn();
  const sockets = { route: conn, nft: conn };
  const spec = validateInbound({ dev: 'sp-eth0', ports: [16000], ...(o.addrs && { addrs: o.addrs }), classifier: 'u32' });
  return { h: new InboundHold(sockets, spec, 1048576, 3, o.ifbIndex), ft };
}

test('nothing set up: every piece missing, state absent; the plan is the named steps in order (the SYN filters are armed: each hold adds them), and its record', async (t) => {
  const { h, ft } = hold();
  const pieces = h.judge(nothing);
  t.deepEqual(Object.keys(pieces), [...INBOUND_PIECES]);
  t.true(Object.values(pieces).every((p) => p.status === 'missing'));
  t.regex(pieces.ifb.piece, /^link ifb spifb3 /);
  t.regex(pieces.filter_ip.piece, /protocol ip pref 65000 u32: TCP SYN \(ACK clear\) to port 16000 -> mirred egress redirect dev spifb3/);
  const plan = planHold(h.pieces, { pieces, state: 'absent', observed: nothing }, {});
  t.deepEqual(
    plan.steps.map((s) => s.what.split(' ').slice(0, 3).join(' ')),
    ['add link spifb3', 'add qdisc plug', 'set link spifb3', 'add qdisc clsact'],
  );
  t.deepEqual(
    h.pieces.list.filter((p) => p.lifetime === 'armed').map((p) => p.key),
    ['filter_ip', 'filter_ipv6'],
    'the SYN filters, which every packet arriving on the device passes, exist only around a hold',
  );
  t.deepEqual(
    armSteps(h.pieces, nothing).map((s) => s.what.split(' ').slice(0, 6).join(' ')),
    ['add filter sp-eth0 ingress protocol ip', 'add filter sp-eth0 ingress protocol ipv6'],
  );
  const checked = judgeHold(h.pieces, nothing);
  t.like(checked.pieces.filter_ip, { status: 'missing', lifetime: 'armed' }, 'a hold not set up: its armed pieces are missing too');
  t.is(checked.state, 'absent');
  t.is(ft.sent.length, 0, 'planning sends nothing');
  const rec = plan.record();
  t.like(rec, {
    mode: 'inbound',
    dev: 'sp-eth0',
    ifb: 'spifb3',
    ports: [16000],
    addrs: [],
    classifier: 'u32',
    limit: 1048576,
    families: ['ip', 'ipv6'],
    addedClsact: false,
  });
  // setup.json v2 with a local and an inbound hold reads back as it was written
  const back = parseSetupRecord(JSON.parse(JSON.stringify({ version: 2, holds: { local: LOCAL_HOLD, 'inbound:sp-eth0': rec } })));
  t.deepEqual(back?.holds['inbound:sp-eth0'], rec);
  t.is(parseSetupRecord({ version: 2, holds: { 'inbound:x': { ...rec, ports: [0] } } }), undefined, 'a damaged inbound entry is not a setup record');
  t.is(parseSetupRecord({ version: 2, holds: { 'inbound:x': { ...rec, classifier: 'bpf' } } }), undefined);
});

test('IPv4 addresses only: no IPv6 filter is wanted (its piece is ok when absent, and no step adds one)', (t) => {
  const { h } = hold({ addrs: ['169.254.0.1'] });
  const pieces = h.judge(nothing);
  t.is(pieces.filter_ipv6.status, 'ok');
  t.regex(pieces.filter_ip.piece, /dst 169\.254\.0\.1/);
  const arm = armSteps(h.pieces, nothing);
  t.is(arm.length, 1);
  t.regex(arm[0].what, /^add filter sp-eth0 ingress protocol ip pref 65000 u32: .* dst 169\.254\.0\.1,/);
});

test('an existing clsact (or ingress) qdisc is shared: no step adds one, and the record says setup did not add it', (t) => {
  const { h } = hold();
  const o: InboundObservation = { ...nothing, ingressQdisc: qdiscEntry({ kind: 'ingress', handle: 'ffff:', parent: 'ffff:fff1', ifindex: 3 }) };
  const pieces = h.judge(o);
  t.is(pieces.clsact.status, 'ok');
  const plan = planHold(h.pieces, { pieces, state: 'absent', observed: o }, {});
  t.is(plan.byKey.clsact as unknown, undefined);
  t.false(plan.record().addedClsact);
});

test('a device of the IFB name that synplug did not create: IfbNameClashError (usage, exit 2); with its alias it is adopted', (t) => {
  const { h } = hold();
  const o: InboundObservation = { ...nothing, ifb: { exists: true, index: 9, kind: 'dummy', up: true } };
  const e = t.throws(() => planHold(h.pieces, { pieces: h.judge(o), state: 'partial', observed: o }, {}), { instanceOf: IfbNameClashError });
  t.is(exitCodeOf(e), 2);
  t.regex(e!.message, /spifb3.*synplug did not create.*Nothing was changed/);
  const ifbNotOurs: InboundObservation = { ...nothing, ifb: { exists: true, index: 9, kind: 'ifb', up: true } };
  t.throws(() => planHold(h.pieces, { pieces: h.judge(ifbNotOurs), state: 'partial', observed: ifbNotOurs }, {}), { instanceOf: IfbNameClashError });
  const ours: InboundObservation = { ...nothing, ifb: { exists: true, index: 9, kind: 'ifb', up: true, alias: ifbAlias('sp-eth0', MARK) }, stateMark: MARK };
  const pieces = h.judge(ours);
  t.is(pieces.ifb.status, 'ok');
  const plan = planHold(h.pieces, { pieces, state: 'partial', observed: ours }, {});
  t.is(plan.byKey.ifb as unknown, undefined, 'an IFB synplug made (a crash before its record) is reused');
});

test("filters at synplug's pref that are not synplug's: ForeignFilterError (foreign-state, exit 7), nothing planned", (t) => {
  const { h } = hold();
  const o: InboundObservation = {
    ...nothing,
    ingressQdisc: qdiscEntry({ kind: 'clsact', handle: 'ffff:', parent: 'ffff:fff1', ifindex: 3 }),
    ingressFilters: [
      {
        ifindex: 3,
        protocol: 'ip',
        pref: INBOUND_PREF.ip,
        kind: 'u32',
        options: { actions: [{ kind: 'gact', control_action: { type: 'drop' } }] },
      },
    ],
  };
  const pieces = h.judge(o);
  t.is(pieces.filter_ip.status, 'different');
  const e = t.throws(() => planHold(h.pieces, { pieces, state: 'partial', observed: o }, {}), { instanceOf: ForeignFilterError });
  t.is(exitCodeOf(e), 7);
});

test('a session of the local and an inbound hold buffers both plugs in ONE datagram; the watchdog gets both releases in one step', async (t) => {
  const { ft, conn } = routeConn();
  const spec = validateInbound({ dev: 'sp-eth0', ports: [16000] });
  const s = GuardSession.fromParts(config, conn, (sockets) => [new LocalHold(sockets, config, 1), new InboundHold(sockets, spec, 1048576, 3, 12)]);
  t.deepEqual(s.holdIds, ['local', 'inbound:sp-eth0']);
  await s.buffer();
  t.is(ft.sent.length, 1, 'one datagram');
  const msgs = parseMessages(ft.sent[0]);
  t.is(msgs.length, 2);
  const decoded = msgs.map((m) => decodeTcMessage(m) as unknown as { ifindex: number; kind: string; options: { action?: string } });
  t.deepEqual(
    decoded.map((d) => [d.ifindex, d.kind]),
    [
      [1, 'plug'],
      [12, 'plug'],
    ],
  );
  t.is(msgs[1].payload.readInt32LE(msgs[1].payload.length - 8), TCQ_PLUG_BUFFER, 'the IFB plug is told to buffer');
  await s.release();
  t.is(ft.sent.length, 2);
  const rel = parseMessages(ft.sent[1]);
  t.is(rel[1].payload.readInt32LE(rel[1].payload.length - 8), TCQ_PLUG_RELEASE_INDEFINITE);
  const steps = s.releaseSteps();
  t.is(steps[0].what, 'plug release');
  t.is(steps[0].messages.length, 2, 'both plugs released by the watchdog in one datagram');
});

test('a complete u32 setup (as the kernel lists it: redirects by index, named if<N>) is judged ok; found without its record, only its plug is released', (t) => {
  const { h } = hold();
  const redirect = { kind: 'mirred', direction: 'egress', mirred_action: 'redirect', to_dev: 'if9', ifindex: 9 };
  const u32 = (protocol: string, pref: number, options: Record<string, unknown>) => ({ ifindex: 3, protocol, pref, kind: 'u32', options });
  const o: InboundObservation = {
    ...nothing,
    ingressQdisc: qdiscEntry({ kind: 'clsact', handle: 'ffff:', parent: 'ffff:fff1', ifindex: 3 }),
    ingressFilters: [
      u32('ip', INBOUND_PREF.ip, { fh: '7f0:', ht_divisor: 1 }),
      u32('ip', INBOUND_PREF.ip, { fh: '7f0::800', actions: [redirect] }),
      u32('ip', INBOUND_PREF.ip, { fh: '801::800', link: '7f0:' }),
      u32('ipv6', INBOUND_PREF.ipv6, { fh: '800::800', actions: [redirect] }),
    ],
    ifb: { exists: true, index: 9, kind: 'ifb', up: true, alias: ifbAlias('sp-eth0', MARK) },
    stateMark: MARK,
    ifbQdiscs: [qdiscEntry({ kind: 'plug', handle: '1:', root: true, ifindex: 9 })],
  };
  const pieces = h.judge(o);
  t.true(
    Object.values(pieces).every((p) => p.status === 'ok'),
    JSON.stringify(pieces),
  );
  const plan = planHold(h.pieces, { pieces, state: 'ok', observed: o }, {});
  // found without its record (a crash before setup recorded it): only a release of its plug, which may buffer
  t.deepEqual(Object.keys(plan.byKey), ['plug']);
  t.regex(plan.byKey.plug![0].what, /^release plug 1: on spifb3 \(an IFB synplug made, found without its record\)$/);
  // a redirect elsewhere is not synplug's
  const moved = (f: FilterEntry): FilterEntry =>
    f.options?.actions ? { ...f, options: { ...f.options, actions: [{ ...redirect, ifindex: 4, to_dev: 'if4' }] } } : f;
  const elsewhere: InboundObservation = { ...o, ingressFilters: o.ingressFilters.map(moved) };
  t.throws(() => planHold(h.pieces, { pieces: h.judge(elsewhere), state: 'partial', observed: elsewhere }, {}), { instanceOf: ForeignFilterError });
});

test('text output: setup, check, status and teardown name the inbound hold', (t) => {
  const setupText = formatSetup({
    dev: 'eth0',
    limit: 1048576,
    changed: true,
    actions: ['add link spifb3 type ifb'],
    addedAddress: false,
    ownsAddress: false,
    unverified: [],
    hold: 'inbound:eth0',
    via: 'plug',
    inbound: { ifb: 'spifb3', ports: [80, 443], addrs: ['169.254.0.1'], classifier: 'u32', families: ['ip'] },
  });
  t.is(setupText, 'synplug inbound hold set up: SYNs on eth0 to port 80,443 (dst 169.254.0.1), held on spifb3 (u32, ip):\n  add link spifb3 type ifb');
  const checkText = formatCheck({
    state: 'partial',
    pieces: [{ piece: "link ifb spifb3 (synplug's, up)", status: 'missing' }],
    holds: [
      { id: 'local', mode: 'local', via: 'plug', dev: 'lo', state: 'ok', addr: '169.254.255.254' },
      { id: 'inbound:eth0', mode: 'inbound', via: 'plug', dev: 'eth0', state: 'partial' },
    ],
  });
  t.regex(
    checkText,
    /^synplug is partly or differently set up \(local: ok, inbound:eth0: partial\):\n {2}MISSING {3}link ifb spifb3 .*\nrun 'synplug setup --inbound eth0 --port PORT\.\.\.'/,
  );
  const statusText = formatStatus(statusResult([inboundHoldStatus({ classifier: 'flower', held: 2, passed: 7, dropped: 0 })]));
  t.regex(statusText, /inbound hold eth0: complete; SYNs to port 80 held on spifb3 \(flower\)\n {2}packets: 2 held now, 7 passed, 0 dropped over the limit/);
  t.is(
    formatTeardown({ dev: 'eth0', removed: ['link spifb3 (ifb, with its plug)'], kept: [], holds: ['inbound:eth0'] }),
    'removed (inbound:eth0):\n  link spifb3 (ifb, with its plug)',
  );
});

test('setup --inbound refuses a loopback destination (--addr 127.0.0.1, ::1): exit 2, naming the local hold', (t) => {
  for (const a of ['127.0.0.1', '127.1.2.3', '::1']) {
    const e = t.throws(() => validateInbound({ dev: 'eth0', ports: [80], addrs: [a] })) as Error;
    t.is(exitCodeOf(e), 2, a);
    t.regex(e.message, /a loopback address, which no SYN arriving on a device from outside is sent to/, a);
    t.regex(e.message, /the local hold \('synplug setup' without --inbound\)/);
  }
  t.deepEqual(validateInbound({ dev: 'eth0', ports: [80], addrs: ['169.254.1.1'] }).addrs, ['169.254.1.1']);
});

test("the recorded hold of a device: by its own name, else by the index in its IFB's name (renamed since)", (t) => {
  const rec = { version: 2 as const, holds: { 'inbound:eth0': inboundHoldRecord({ dev: 'eth0', ifb: 'spifb7' }) } };
  t.is(inboundRecordId(rec, { name: 'eth0', ifindex: 7 }), 'inbound:eth0');
  t.is(inboundRecordId(rec, { name: 'wan0', ifindex: 7 }), 'inbound:eth0', 'renamed: found by index');
  t.is(inboundRecordId(rec, { name: 'eth1', ifindex: 8 }), 'inbound:eth1');
  t.is(inboundRecordId(undefined, { name: 'eth1' }), 'inbound:eth1');
});

test("the watchdog deletes synplug's pref only with the hold's classifier named (TCA_KIND): the kernel refuses a pref of another kind, left alone", (t) => {
  for (const classifier of ['u32', 'flower'] as const) {
    const spec = validateInbound({ dev: 'sp-eth0', ports: [16000], classifier });
    const h = new InboundHold(silentSockets(), spec, 1048576, 3, 12);
    const steps = h.pieces.list.flatMap((p) => (p.lifetime === 'armed' && p.removeSteps?.()) || []);
    t.deepEqual(
      steps.map((s) => s.what),
      [`remove filters sp-eth0 ingress protocol ip pref 65000 ${classifier}`, `remove filters sp-eth0 ingress protocol ipv6 pref 65001 ${classifier}`],
    );
    for (const s of steps) {
      const [m] = parseMessages(
        Buffer.concat(
          s.messages.map((x) => {
            const p = Buffer.from(x.payload, 'hex');
            const hdr = Buffer.alloc(16);
            hdr.writeUInt32LE(16 + p.length, 0);
            hdr.writeUInt16LE(x.type, 4);
            hdr.writeUInt16LE(x.flags, 6);
            return Buffer.concat([hdr, p]);
          }),
        ),
      );
      t.like(decodeTcMessage(m), { kind: classifier }, `${s.what}: TCA_KIND ${classifier}`);
      t.true(s.ignoreErrno!.includes(osConstants.errno.EINVAL), 'a refusal for another kind is not a failure: the filters are left');
    }
  }
});
