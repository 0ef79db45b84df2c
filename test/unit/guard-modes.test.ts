/**
 * The guard's holds behind one interface (issue #11): the local hold's named
 * pieces, the mode registry, a session of several holds buffering and
 * releasing in ONE datagram; and two defects: --wait-listen without the
 * kernel's TCP socket diagnostics (5), the mark rule on a connection of the
 * wrong protocol (6).
 */
import test from 'ava';
import { NetlinkConnection } from '../../src/netlink/connection.js';
import { FakeTransport, nfnetlinkAck } from '../../src/netlink/testing.js';
import { parseMessages, NETLINK_ROUTE, NETLINK_SOCK_DIAG, NLM_F_ACK, type NetlinkMessage } from '../../src/netlink/message.js';
import { NetlinkError, UsageError } from '../../src/netlink/errors.js';
import { listTcpListeners } from '../../src/netlink/sockdiag.js';
import '../../src/netlink/route/index.js';
import { resolveConfig, TREE } from '../../src/guard/config.js';
import { judgeLocal, LOCAL_PIECES, LocalHold, type LocalObservation } from '../../src/guard/modes/local.js';
import { armSteps, judgeHold, piecesOfLifetime, planHold, summarizePieces } from '../../src/guard/pieces.js';
import { ForeignQdiscError } from '../../src/guard/errors.js';
import type { LocalHoldRecord } from '../../src/guard/state.js';
import { holdMode, holdModeNames, registerHoldMode } from '../../src/guard/modes/index.js';
import { GuardSession } from '../../src/guard/session.js';
import { explainSockDiag, SockDiagUnavailableError } from '../../src/guard/support.js';
import { runProtected } from '../../src/guard/protect.js';
import { ensureMarkRule, removeMarkTable, listMarkSetElements } from '../../src/guard/modes/local-nft.js';
import { exitCodeOf } from '../../src/cli/exit-codes.js';
import { TCQ_PLUG_BUFFER, TCQ_PLUG_RELEASE_INDEFINITE, formatHandle, formatQdiscHandle } from '../../src/tc/index.js';
import { FakeSession, silentSockets } from '../helpers/fake-session.js';
import { qdiscEntry } from '../helpers/tc-entries.js';
import { holdTableComment } from '../../src/guard/teardown-marks.js';

/** This state directory's mark, which the local hold's table comment carries. */
const MARK = '0123456789abcdef';
import { FakeKernel } from '../helpers/fake-kernel.js';

// The unit tier touches no kernel (test/helpers/unit-no-kernel.ts): every connection opened meanwhile reaches the double.
let undoKernel: () => void = () => {};
test.before(() => {
  undoKernel = new FakeKernel().install();
});
test.after.always(() => undoKernel());

const config = resolveConfig({ stateDir: '/nonexistent/synplug-unit' });

const emptyLo: LocalObservation = {
  qdiscs: [qdiscEntry({ kind: 'noqueue', handle: '0:', root: true, dev: 'lo', ifindex: 1 })],
  filters: [],
  hasAddress: false,
  nftPlan: [],
  nftBasePlan: [],
  nftTable: false,
  nftChain: false,
};

/** lo's qdisc tree as setup adds it: prio 1: root, pfifo bands, the plug (released) in band 4. */
const loTree = [
  qdiscEntry({ kind: 'prio', handle: '1:', root: true, dev: 'lo', ifindex: 1, options: { bands: TREE.bands, priomap: [...TREE.priomap] } }),
  ...TREE.pfifo.map((f) =>
    qdiscEntry({
      kind: 'pfifo',
      handle: formatQdiscHandle(f.handle),
      parent: formatHandle(f.parent),
      dev: 'lo',
      ifindex: 1,
      options: { limit: TREE.pfifoLimit },
    }),
  ),
  qdiscEntry({ kind: 'plug', handle: formatQdiscHandle(TREE.plugHandle), parent: formatHandle(TREE.plugParent), dev: 'lo', ifindex: 1 }),
];

/** What the kernel holds after setup: the address (synplug's), the table with its set, lo's qdisc tree; no filter, no chain. */
const setUpLo: LocalObservation = {
  ...emptyLo,
  qdiscs: loTree,
  hasAddress: true,
  addressMarked: true,
  nftTable: true,
  nftTableMarked: true,
  // the comment names this state directory (teardown-marks.ts holdTableComment)
  tableComment: holdTableComment(MARK),
  stateMark: MARK,
  nftPlan: ['add chain ip synplug output', 'add rule to ip synplug output'],
};

const ARMED_KEYS = ['filter', 'chain'];

test("local pieces are named, in check's order; the address alone does not make a setup", (t) => {
  const pieces = judgeLocal(emptyLo, config, undefined);
  t.deepEqual(Object.keys(pieces), [...LOCAL_PIECES]);
  t.is(pieces.plug.piece, `qdisc plug ${formatQdiscHandle(TREE.plugHandle)} parent 1:4`);
  t.is(pieces.address.piece, 'address 169.254.255.254/32 on lo');
  t.true(Object.values(pieces).every((p) => p.status === 'missing'));
  const h = new LocalHold(silentSockets(), config, 1);
  const inspected = judgeHold(h.pieces, emptyLo);
  t.deepEqual(
    inspected.pieces,
    Object.fromEntries(Object.entries(pieces).map(([k, v]) => [k, ARMED_KEYS.includes(k) ? { ...v, lifetime: 'armed' } : v])),
    "the planner lists the pieces in check's order",
  );
  t.is(inspected.state, 'absent');
  const withAddress = judgeLocal({ ...emptyLo, hasAddress: true }, config, undefined);
  t.is(withAddress.address.status, 'ok');
  t.is(judgeHold(h.pieces, { ...emptyLo, hasAddress: true }).state, 'absent', "the user's own address is not a setup");
  t.is(judgeHold(h.pieces, { ...emptyLo, hasAddress: true, addressMarked: true }).state, 'partial', "synplug's own address is a piece left of a setup");
  t.is(summarizePieces({ ...withAddress, nftables: { piece: 'x', status: 'ok' } }, ['address']), 'partial');
  t.deepEqual(h.pieces.list.map((p) => p.key).sort(), [...LOCAL_PIECES].sort(), 'one list of pieces');
  t.deepEqual(
    h.pieces.list.filter((p) => p.lifetime === 'armed').map((p) => p.key),
    ARMED_KEYS,
    'the fw filter and the base chain are armed per hold (their adding and removal drop nothing); the qdisc tree, the address and the table with its set are permanent',
  );
  t.deepEqual(
    planHold(h.pieces, inspected).steps.map((s) => s.what),
    [
      'add address 169.254.255.254/32 dev lo',
      'add nftables table synplug with set synplug_active (the marking chain comes with each hold)',
      'add qdisc prio 1: root bands 4',
      'add qdisc pfifo 10: parent 1:1 limit 1000',
      'add qdisc pfifo 20: parent 1:2 limit 1000',
      'add qdisc pfifo 30: parent 1:3 limit 1000',
      `add qdisc plug 40: parent 1:4 limit ${config.limit} and release it`,
    ],
    "setup adds the address, the table with its set, and lo's qdisc tree (a root qdisc's change drops what lo sends meanwhile: never around a hold)",
  );
});

test('the local hold after setup: complete, its armed pieces absent as wanted; phase one adds the fw filter and the chain, never a qdisc', (t) => {
  const h = new LocalHold(silentSockets(), config, 1);
  const inspected = judgeHold(h.pieces, setUpLo);
  t.is(inspected.state, 'ok');
  for (const k of ARMED_KEYS) {
    const p = (inspected.pieces as Record<string, { status: string; lifetime?: string; detail?: string }>)[k];
    t.is(p.status, 'ok', k);
    t.is(p.lifetime, 'armed', k);
    t.regex(p.detail ?? '', /absent outside a hold/, k);
  }
  t.deepEqual(planHold(h.pieces, inspected).steps, [], 'setup again: nothing to do');
  t.deepEqual(
    piecesOfLifetime(h.pieces, setUpLo, 'armed'),
    [
      'filter parent 1: protocol ip pref 1 fw handle 0x1 classid 1:4',
      'nftables chain ip synplug output (hook output priority mangle): marking rule for 169.254.255.254, mark 1',
    ],
    'setup --dry-run lists them apart: armed, not set up',
  );
  t.deepEqual(
    armSteps(h.pieces, setUpLo).map((s) => s.what),
    ['add filter parent 1: protocol ip pref 1 fw handle 1 classid 1:4', 'nftables: add chain ip synplug output; add rule to ip synplug output'],
    "phase one: the fw filter, then the marking chain; lo's root qdisc is left as it is",
  );
  // during a hold: every piece there
  const armedLo: LocalObservation = {
    ...setUpLo,
    nftPlan: [],
    nftChain: true,
    filters: [
      { kind: 'fw', pref: TREE.filterPrio, handle: String(config.mark), protocol: 'ip', options: { classid: formatHandle(TREE.filterClassid) } } as never,
    ],
  };
  const during = judgeHold(h.pieces, armedLo);
  t.is(during.state, 'ok');
  t.deepEqual(armSteps(h.pieces, armedLo), [], 'armed already: nothing to add');
  t.true(
    Object.values(during.pieces).every((p) => p.status === 'ok' && !p.detail?.includes('absent')),
    'present during the hold',
  );
});

test("setup refuses a root qdisc that is not synplug's (exit 7, no step) and with --force replaces it; a hold then is refused as not set up, naming it", (t) => {
  const h = new LocalHold(silentSockets(), config, 1);
  const foreign: LocalObservation = { ...setUpLo, qdiscs: [qdiscEntry({ kind: 'tbf', handle: '5:', root: true, dev: 'lo', ifindex: 1 })] };
  const inspected = judgeHold(h.pieces, foreign);
  t.is(inspected.state, 'partial', 'the tree is missing: a hold is refused as not (completely) set up, before anything is armed');
  t.regex(
    (inspected.pieces as Record<string, { detail?: string }>).prio.detail ?? '',
    /root is tbf 5:, not synplug's: setup refuses it \(exit 7\) \('synplug setup --force' replaces it\)/,
  );
  const e = t.throws(() => planHold(h.pieces, inspected), {
    instanceOf: ForeignQdiscError,
    message: /rerun setup with --force to replace it.*Nothing was changed/,
  });
  t.is(exitCodeOf(e), 7);
  t.deepEqual(
    planHold(h.pieces, inspected, { force: true }).steps.map((s) => s.what),
    [
      'replace root qdisc tbf 5: on lo with prio 1: (--force)',
      'add qdisc pfifo 10: parent 1:1 limit 1000',
      'add qdisc pfifo 20: parent 1:2 limit 1000',
      'add qdisc pfifo 30: parent 1:3 limit 1000',
      `add qdisc plug 40: parent 1:4 limit ${config.limit} and release it`,
    ],
  );
});

test("the watchdog removes the local hold's armed pieces: the fw filter (by its handle, the mark), the chain once nothing is queued; never a qdisc", (t) => {
  const h = new LocalHold(silentSockets(), config, 1);
  const steps = h.pieces.list.flatMap((p) => (p.lifetime === 'armed' && p.removeSteps?.()) || []);
  t.deepEqual(
    steps.map((s) => ({ what: s.what, phase: s.phase, queued: s.whenNothingQueuedMs })),
    [
      { what: 'delete filter parent 1: protocol ip pref 1 fw handle 0x1 on lo', phase: 'disarm', queued: undefined },
      { what: 'delete chain ip synplug output', phase: 'disarm', queued: 3000 },
    ],
  );
  // the filter's deletion: RTM_DELTFILTER on lo, parent 1:, pref 1 protocol ip (tcm_info), handle = the mark, TCA_KIND fw
  const del = Buffer.from(steps[0].messages[0].payload, 'hex');
  t.is(steps[0].messages[0].type, 45, 'RTM_DELTFILTER');
  t.is(del.readInt32LE(4), 1, 'tcm_ifindex lo');
  t.is(del.readUInt32LE(8), config.mark, 'tcm_handle: the mark');
  t.is(del.readUInt32LE(12), 0x10000, 'tcm_parent 1:');
  t.is(del.readUInt32LE(16), (TREE.filterPrio << 16) | 0x0008, 'tcm_info: pref 1, protocol ip (ETH_P_IP, network order)');
  t.true(del.includes(Buffer.from('fw\0')), 'TCA_KIND fw');
});

test('the registry finds the local mode by name; a new mode is one registration', (t) => {
  t.is(holdMode('local')?.name, 'local');
  t.is(holdMode('nosuch'), undefined);
  const unused = async (): Promise<never> => {
    throw new Error('not used');
  };
  registerHoldMode({
    name: 'unit-test-mode',
    via: 'queue',
    scopes: ['local'],
    isRecord: () => true,
    open: unused,
    openForSetup: unused,
    probeSupport: unused,
    validate: () => {},
    deviceOfId: () => undefined,
    idForms: [],
    describe: (h) => ({ label: `unit test hold on ${h.dev}`, clients: 'none', setup: 'none', top: false, fromRecord: true, status: () => [] }),
    setupHead: () => 'unit test hold',
  });
  t.true(holdModeNames().includes('unit-test-mode'));
  t.true(holdModeNames().includes('local'));
});

/** A NETLINK_ROUTE connection over a fake transport; `answer` gives each sent message's errno. */
function routeConn(answer: (m: NetlinkMessage, i: number) => number) {
  const ft = new FakeTransport(
    [
      (sent) => parseMessages(sent).map((m, i) => nfnetlinkAck(m, answer(m, i), { capped: true })),
      (sent) => parseMessages(sent).map((m, i) => nfnetlinkAck(m, answer(m, i), { capped: true })),
    ],
    { keepSeq: true },
  );
  return { ft, conn: new NetlinkConnection(ft, NETLINK_ROUTE, { timeoutMs: 1000 }) };
}

test('a session of several holds buffers and releases all of them in ONE datagram; a refusal is explained by its own hold, and a local plug gone at a release is none', async (t) => {
  const { ft, conn } = routeConn((_m, i) => (i === 1 ? 2 : 0)); // the second hold has no plug: ENOENT
  const s = GuardSession.fromParts(config, conn, (sockets) => [new LocalHold(sockets, config, 1), new LocalHold(sockets, { ...config, dev: 'sp-other0' }, 7)]);
  const e = await t.throwsAsync(s.buffer(), { instanceOf: NetlinkError });
  t.is(ft.sent.length, 1, 'one datagram');
  const msgs = parseMessages(ft.sent[0]);
  t.is(msgs.length, 2);
  t.true(msgs.every((m) => (m.flags & NLM_F_ACK) !== 0));
  t.deepEqual(
    msgs.map((m) => m.payload.readInt32LE(4)),
    [1, 7],
    'tcm_ifindex of each hold',
  );
  // struct tc_plug_qopt { int action; __u32 limit; } is the last 8 bytes (TCA_OPTIONS)
  t.deepEqual(
    msgs.map((m) => m.payload.readInt32LE(m.payload.length - 8)),
    [TCQ_PLUG_BUFFER, TCQ_PLUG_BUFFER],
  );
  t.regex(e!.message, /cannot buffer the plug: no plug qdisc 40: under 1:4 on sp-other0/);
  // the local plug exists only around a hold: gone at a release, nothing is held there (the watchdog released it at
  // max-hold and removed it, while protect's command still ran): no failure
  await t.notThrowsAsync(s.release());
  t.is(ft.sent.length, 2);
  t.deepEqual(
    parseMessages(ft.sent[1]).map((m) => m.payload.readInt32LE(m.payload.length - 8)),
    [TCQ_PLUG_RELEASE_INDEFINITE, TCQ_PLUG_RELEASE_INDEFINITE],
  );
  const steps = s.releaseSteps();
  t.is(steps[0].what, 'plug release');
  t.is(steps[0].messages.length, 2, 'the watchdog releases every plug in one datagram too');
  s.close();
});

test("--wait-listen without the kernel's TCP socket diagnostics: the error says so, names inet_diag and tcp_diag and how to load them", async (t) => {
  // The kernel answers SOCK_DIAG_BY_FAMILY with ENOENT when no inet_diag/tcp_diag handler is there.
  const ft = new FakeTransport([(sent) => parseMessages(sent).map((m) => nfnetlinkAck(m, 2, { capped: true }))], { keepSeq: true });
  const diag = new NetlinkConnection(ft, NETLINK_SOCK_DIAG, { timeoutMs: 1000 });
  const raw = await t.throwsAsync(listTcpListeners(diag, { port: 16000 }), { instanceOf: NetlinkError });
  const e = explainSockDiag(raw) as SockDiagUnavailableError;
  t.true(e instanceof SockDiagUnavailableError);
  t.is(e.category, 'missing-module');
  t.is(exitCodeOf(e), 5);
  t.deepEqual(e.modules, ['inet_diag', 'tcp_diag']);
  t.regex(e.message, /kernel's TCP socket diagnostics \(modules inet_diag and tcp_diag\) cannot be used/);
  t.regex(e.message, /SOCK_DIAG_BY_FAMILY failed: ENOENT/);
  t.regex(e.message, /modprobe inet_diag tcp_diag/);
  t.regex(e.message, /nothing was held/);
  t.is(
    (explainSockDiag(new NetlinkError({ errno: 1, requestType: 'SOCK_DIAG_BY_FAMILY' })) as object).constructor,
    NetlinkError,
    'EPERM is not a missing module',
  );
  diag.close();

  // The refusal comes before anything is held: protect's phase one asks for the listeners.
  const session = new FakeSession({
    listeners: () => {
      throw e;
    },
  });
  await t.throwsAsync(runProtected(session, { command: ['true'], waitListen: { port: 16000 } }), { instanceOf: SockDiagUnavailableError });
  t.true(session.reads.includes('listeners *:16000'), 'it asked for the listeners');
  t.false(session.calls.some((c) => c.startsWith('arm')));
  t.false(session.calls.includes('buffer'));
});

test('the mark rule on a connection of the wrong protocol says which protocol it needs', async (t) => {
  const route = new NetlinkConnection(new FakeTransport(), NETLINK_ROUTE, { timeoutMs: 100 });
  for (const f of [
    () => ensureMarkRule(route, { address: '169.254.255.254' }),
    () => removeMarkTable(route),
    () => listMarkSetElements(route, { family: 'ip' }),
  ]) {
    const e = await t.throwsAsync(f(), { instanceOf: UsageError });
    t.regex(e!.message, /needs a NETLINK_NETFILTER connection \(protocol 12; openNftables\(\) makes one\), not a NETLINK_ROUTE connection \(protocol 0\)/);
  }
  route.close();
});

test("a prio 1: root without synplug's plug is synplug's only as setup adds it (bands 4, its priomap) where setup recorded the hold: a user's prio 1: is refused, never changed or removed", (t) => {
  const record = {
    mode: 'local',
    dev: 'lo',
    addr: config.addr,
    mark: config.mark,
    limit: config.limit,
    table: config.table,
    addedAddress: false,
  } as LocalHoldRecord;
  const h = new LocalHold(silentSockets(), config, 1, record);
  const rootWith = (options: { bands: number; priomap: number[] }): LocalObservation => ({
    ...setUpLo,
    qdiscs: [qdiscEntry({ kind: 'prio', handle: '1:', root: true, dev: 'lo', ifindex: 1, options })],
  });
  const plan = (o: LocalObservation, force = false) => planHold(h.pieces, judgeHold(h.pieces, o), { force }).steps.map((s) => s.what);
  // a setup killed after adding the root: ours, completed by the next setup
  const leftover = rootWith({ bands: TREE.bands, priomap: [...TREE.priomap] });
  t.true(h.rootIsOurs(leftover));
  t.deepEqual(plan(leftover), [
    'add qdisc pfifo 10: parent 1:1 limit 1000',
    'add qdisc pfifo 20: parent 1:2 limit 1000',
    'add qdisc pfifo 30: parent 1:3 limit 1000',
    `add qdisc plug 40: parent 1:4 limit ${config.limit} and release it`,
  ]);
  // `tc qdisc add dev lo root handle 1: prio` (bands 3): a user's
  const users = rootWith({ bands: 3, priomap: [1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1] });
  t.false(h.rootIsOurs(users));
  const e = t.throws(() => plan(users), { instanceOf: ForeignQdiscError });
  t.is(exitCodeOf(e), 7);
  t.is(judgeHold(h.pieces, users).state, 'partial', 'a hold is refused as not set up: nothing is armed on it');
});
