/**
 * The plug holds' state directory mark (issue #19, a security review's
 * SEVERE finding: the plug holds' kernel objects named no state directory,
 * so `release --state-dir B` ended directory A's live hold and `teardown
 * --state-dir B` with A's copied setup.json removed it whole):
 *
 * - one builder and parser of table comments for every hold
 *   (holdTableComment: the local plug hold's and the queue hold's), and of
 *   the inbound hold's IFB alias (ifbAlias);
 * - whose a hold is (ownerOfMark), as the local hold judges its table and
 *   the inbound hold its IFB: this directory's, another's, an earlier
 *   synplug's;
 * - the refusal (othersHolds, othersHoldsError: exit 7, naming the mark and
 *   the --state-dir to use) and teardown's keeping of another's hold whole
 *   (sparingOthers: nothing sent, nothing removed).
 *
 * The end-to-end cases (two directories, a held client) are in
 * test/kernel/guard-two-dirs.test.ts (the VM: sch_plug, sch_prio).
 */
import test from 'ava';
import {
  EARLIER_MARK_DETAIL,
  holdTableComment,
  holdTableMark,
  ifbAlias,
  ifbAliasMark,
  ownerOfMark,
  queueTableComment,
  queueTableMark,
  TABLE_COMMENT,
  tableIsMarked,
} from '../../src/guard/teardown-marks.js';
import { encodeTable } from '../../src/iptables/table.js';
import { resolveConfig } from '../../src/guard/config.js';
import { judgeLocal, LocalHold, localTableOwner, type LocalObservation } from '../../src/guard/modes/local.js';
import { InboundHold, validateInbound, type InboundObservation } from '../../src/guard/modes/inbound.js';
import { judgeHold, othersHolds, othersHoldsError, planHold, teardownHold } from '../../src/guard/pieces.js';
import { exitCodeOf } from '../../src/cli/exit-codes.js';
import { SynplugError } from '../../src/netlink/errors.js';
import { StateFileError } from '../../src/guard/errors.js';
import type { Hold } from '../../src/guard/modes/types.js';
import { FakeTransport } from '../../src/netlink/testing.js';
import { NetlinkConnection } from '../../src/netlink/connection.js';
import { NETLINK_NETFILTER, NETLINK_ROUTE } from '../../src/netlink/message.js';
import { qdiscEntry } from '../helpers/tc-entries.js';
import { planMarkRule, resolveMarkRule } from '../../src/guard/modes/local-nft.js';

const MINE = '0123456789abcdef';
const THEIRS = 'fedcba9876543210';

test('a hold table comment reads back as written: the local plug hold (state only) and the queue hold (queue and state), in one format', (t) => {
  const local = holdTableComment(MINE);
  t.is(local, `${TABLE_COMMENT}; state ${MINE}`);
  t.deepEqual(holdTableMark(local), { stateMark: MINE });
  t.true(Buffer.byteLength(local) <= 127);
  t.notThrows(() => encodeTable({ family: 'ip', name: 'synplug', comment: local }));
  t.true(tableIsMarked({ comment: local }, '6.1.0'));
  t.is(queueTableMark(local), undefined, "a plug hold's comment is no queue mark");
  const queue = holdTableComment(MINE, 4200);
  t.is(queue, queueTableComment(4200, MINE), "the queue hold's builder is the same one");
  t.deepEqual(holdTableMark(queue), { stateMark: MINE, queueNum: 4200 });
  t.deepEqual(queueTableMark(queue), { queueNum: 4200, stateMark: MINE });
  for (const c of [undefined, TABLE_COMMENT, 'mine', `${TABLE_COMMENT}; state ${MINE.toUpperCase()}`, `${TABLE_COMMENT}; state ${MINE};`, ` ${local}`])
    t.is(holdTableMark(c), undefined, String(c));
  t.is(tableIsMarked({ comment: local }, '5.4.0'), undefined, 'a kernel before 5.10 keeps no comment: the record decides');
});

test("an IFB alias names its device and state directory; an earlier synplug's names the device only; anything else is not synplug's", (t) => {
  const a = ifbAlias('eth0', MINE);
  t.is(a, `synplug inbound hold of eth0; state ${MINE}`);
  t.true(Buffer.byteLength(a) < 256, 'IFALIASZ');
  t.deepEqual(ifbAliasMark(a), { dev: 'eth0', stateMark: MINE });
  t.deepEqual(ifbAliasMark('synplug inbound hold of eth0'), { dev: 'eth0' });
  t.deepEqual(ifbAliasMark(ifbAlias('a;b', MINE)), { dev: 'a;b', stateMark: MINE }, 'a device name with a semicolon (no blank: the tail is never DEV)');
  t.deepEqual(ifbAliasMark(ifbAlias('x'.repeat(15), THEIRS)), { dev: 'x'.repeat(15), stateMark: THEIRS });
  for (const x of [
    undefined,
    '',
    'synplug inbound hold of ',
    'my ifb',
    'synplug inbound hold of eth0 and more',
    `synplug inbound hold of eth0; state ${MINE}; more`,
    `synplug inbound hold of eth0; queue 1; state ${MINE}`,
    `synplug inbound hold of eth0; state 0123`,
  ])
    t.is(ifbAliasMark(x), undefined, String(x));
});

test("whose by the mark: this directory's, another's (also through a directory that does not exist), an earlier synplug's", (t) => {
  t.is(ownerOfMark({ stateMark: MINE }, MINE), 'ours');
  t.is(ownerOfMark({ stateMark: THEIRS }, MINE), 'other');
  t.is(ownerOfMark({ stateMark: THEIRS }, undefined), 'other');
  t.is(ownerOfMark({}, MINE), 'earlier');
  t.is(ownerOfMark({}, undefined), 'earlier');
});

const config = resolveConfig({ stateDir: '/nonexistent/synplug-unit' });

/** After setup, in a directory whose mark is MINE, with the table's comment naming `mark` (undefined: the plain comment). */
const lo = (mark: string | undefined, armed = false): LocalObservation => ({
  qdiscs: [
    ...(armed
      ? [
          qdiscEntry({
            kind: 'prio',
            handle: '1:',
            root: true,
            dev: 'lo',
            ifindex: 1,
            options: { bands: 4, priomap: [1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1] },
          }),
          qdiscEntry({ kind: 'plug', handle: '40:', parent: '1:4', dev: 'lo', ifindex: 1 }),
        ]
      : [qdiscEntry({ kind: 'noqueue', handle: '0:', root: true, dev: 'lo', ifindex: 1 })]),
  ],
  filters: [],
  hasAddress: true,
  addressMarked: true,
  nftTable: true,
  nftTableMarked: true,
  tableComment: mark === undefined ? TABLE_COMMENT : holdTableComment(mark),
  stateMark: MINE,
  nftPlan: ['add chain ip synplug output', 'add rule to ip synplug output'],
  nftBasePlan: [],
  nftChain: false,
});

/** Sockets whose transports record what is sent (and answer nothing). */
function recordingSockets() {
  const route = new FakeTransport();
  const nft = new FakeTransport();
  return {
    sockets: { route: new NetlinkConnection(route, NETLINK_ROUTE, { timeoutMs: 100 }), nft: new NetlinkConnection(nft, NETLINK_NETFILTER, { timeoutMs: 100 }) },
    sent: () => route.sent.length + nft.sent.length,
  };
}

test("the local plug hold judges its table by the mark: this directory's ok; another's or an earlier synplug's different, saying which", (t) => {
  t.is(judgeLocal(lo(MINE), config, undefined).nftables.status, 'ok');
  const other = judgeLocal(lo(THEIRS), config, undefined).nftables;
  t.is(other.status, 'different');
  t.regex(
    other.detail ?? '',
    new RegExp(
      `another state directory's local hold \\(its table's comment names state directory mark ${THEIRS}, not this directory's ${MINE}\\): use that directory's --state-dir`,
    ),
  );
  t.like(judgeLocal(lo(undefined), config, undefined).nftables, { status: 'different', detail: EARLIER_MARK_DETAIL });
  // a kernel before 5.10 keeps no comment: the record decides (the documented fallback)
  t.deepEqual(localTableOwner({ ...lo(THEIRS), nftTableMarked: undefined, tableComment: undefined }), { is: 'unknown' });
  t.is(judgeLocal({ ...lo(THEIRS), nftTableMarked: undefined, tableComment: undefined }, config, undefined).nftables.status, 'ok');
  const h = new LocalHold(recordingSockets().sockets, config, 1);
  t.deepEqual(h.pieces.markOwner?.(lo(MINE)), { here: true });
  t.is(h.pieces.markOwner?.(lo(undefined)), undefined, "an earlier synplug's: the mark does not say (setup's lock-file rule decides)");
  const owner = h.pieces.markOwner?.(lo(THEIRS, true));
  t.like(owner, { here: false });
  t.regex(owner && !owner.here ? owner.removeBy : '', /nft delete table ip synplug.*tc qdisc del dev lo root.*ip addr del 169\.254\.255\.254\/32 dev lo/);
});

test("setup marks an earlier synplug's table anew (the plan makes it again with this directory's comment); a table with this directory's comment is left", (t) => {
  const r = resolveMarkRule({ address: '169.254.255.254', conditional: true, set: 'synplug_active', stateMark: MINE });
  const table = (comment: string) => ({
    table: { family: 'ip', name: 'synplug', flags: 0, handle: 1, use: 0, comment },
    chains: [],
    rules: [],
    sets: [],
  });
  t.deepEqual(
    planMarkRule(table(TABLE_COMMENT), r, { chain: false }).ops.map((o) => o.what),
    ['delete table ip synplug', 'add table ip synplug', 'add set ip synplug synplug_active'],
  );
  t.true(
    planMarkRule(table(holdTableComment(MINE)), r, { chain: false }).ops.some((o) => o.what.startsWith('add set')),
    'the set is missing: added',
  );
  t.false(
    planMarkRule(table(holdTableComment(MINE)), r, { chain: false }).ops.some((o) => o.what.startsWith('delete table')),
    "this directory's table is never made again",
  );
  t.throws(() => resolveMarkRule({ address: '169.254.255.254', stateMark: 'nope' }), { message: /16 lowercase hex digits/ });
});

test('teardown of the local plug hold whose table names another directory (a copied setup.json): nothing sent, nothing removed, kept whole saying whose', async (t) => {
  const { sockets, sent } = recordingSockets();
  const h = new LocalHold(sockets, config, 1, {
    mode: 'local',
    dev: 'lo',
    addr: '169.254.255.254',
    mark: 1,
    limit: 1048576,
    table: 'synplug',
    addedAddress: true,
    prefixlen: 32,
    createdAt: 0,
  });
  const o = lo(THEIRS, true);
  const words = await teardownHold(h, judgeHold(h.pieces, o));
  t.deepEqual(words.removed, []);
  t.is(words.kept.length, 1);
  t.regex(words.kept[0], new RegExp(`^local hold on lo \\(its qdiscs, filter, table and address\\): kept, another state directory's local hold .*${THEIRS}`));
  t.is(sent(), 0, 'nothing sent: no release of its plug, no removal');
  // setup never replaces it either
  const e = t.throws(() => planHold(h.pieces, judgeHold(h.pieces, lo(THEIRS)), {}).steps, { instanceOf: SynplugError });
  t.is(exitCodeOf(e), 7);
});

const nothingIn: InboundObservation = {
  qdiscs: [qdiscEntry({ kind: 'noqueue', handle: '0:', root: true, ifindex: 3 })],
  ingressFilters: [],
  egressFilters: [],
  ifb: { exists: false },
  ifbQdiscs: [],
};
const withIfb = (alias: string): InboundObservation => ({
  ...nothingIn,
  ifb: { exists: true, index: 9, kind: 'ifb', up: true, alias },
  ifbQdiscs: [qdiscEntry({ kind: 'plug', handle: '1:', root: true, ifindex: 9 })],
  stateMark: MINE,
});

test("the inbound hold judges its IFB by the alias: this directory's ok; another's different (setup refuses it, teardown keeps it whole, nothing sent); an earlier synplug's marked anew in place", async (t) => {
  const { sockets, sent } = recordingSockets();
  const spec = validateInbound({ dev: 'sp-eth0', ports: [16000], classifier: 'u32' });
  const h = new InboundHold(sockets, spec, 1048576, 3, 9);
  t.is(h.judge(withIfb(ifbAlias('sp-eth0', MINE))).ifb.status, 'ok');
  t.deepEqual(h.pieces.markOwner?.(withIfb(ifbAlias('sp-eth0', MINE))), { here: true });
  const other = withIfb(ifbAlias('sp-eth0', THEIRS));
  t.like(h.judge(other).ifb, { status: 'different' });
  t.regex(
    h.judge(other).ifb.detail ?? '',
    new RegExp(`another state directory's inbound hold of sp-eth0 \\(its IFB's alias names state directory mark ${THEIRS}, not this directory's ${MINE}\\)`),
  );
  t.like(h.pieces.markOwner?.(other), { here: false });
  t.deepEqual(h.pieces.marked?.(other), [`IFB spifb3 (alias '${ifbAlias('sp-eth0', THEIRS)}')`]);
  const e = t.throws(() => planHold(h.pieces, judgeHold(h.pieces, other), {}).steps, { instanceOf: SynplugError });
  t.is(exitCodeOf(e), 7);
  const words = await teardownHold(h, judgeHold(h.pieces, other));
  t.deepEqual(words.removed, []);
  t.regex(words.kept.join('\n'), /^inbound hold of sp-eth0 \(link spifb3 with its plug, the filters on sp-eth0\): kept, another state directory's/);
  t.is(sent(), 0, 'nothing sent: its plug not released, its IFB not deleted');
  // an earlier synplug's alias: different until setup sets the alias anew (one step, the IFB kept)
  const earlier = withIfb('synplug inbound hold of sp-eth0');
  t.like(h.judge(earlier).ifb, { status: 'different', detail: EARLIER_MARK_DETAIL });
  t.is(h.pieces.markOwner?.(earlier), undefined);
  const steps = planHold(h.pieces, judgeHold(h.pieces, earlier), {}).steps.map((s) => s.what);
  t.true(
    steps.some((s) => s.startsWith("set the alias of link spifb3 to 'synplug inbound hold of sp-eth0; state")),
    JSON.stringify(steps),
  );
  t.false(
    steps.some((s) => /add link|delete|remove/.test(s)),
    'nothing else of the IFB changes',
  );
});

/** A hold as othersHolds sees it: its release's kind, its observation and whose its mark says it is. */
function fakeHold(
  kind: 'route' | 'run',
  owner: { here: true } | { here: false; detail: string; removeBy: string } | undefined,
  observe?: () => Promise<unknown>,
): Hold {
  return {
    mode: kind === 'route' ? 'local' : 'queue',
    id: kind === 'route' ? 'local' : 'queue',
    dev: 'lo',
    releaseAction: () => (kind === 'route' ? { kind: 'route', messages: [] } : { kind: 'run', run: async () => {} }),
    pieces: { list: [], observe: observe ?? (async () => ({})), begin: () => ({}), record: () => ({}), markOwner: () => owner },
  } as unknown as Hold;
}

test("release's refusal: the plug holds another directory's mark is on, exit 7 naming whose, the --state-dir to use and the removal by hand; a queue hold (its own holder releases it) and an unreadable directory are not judged", async (t) => {
  const other = {
    here: false as const,
    detail: `the table's comment names state directory mark ${THEIRS}; this directory's is ${MINE}`,
    removeBy: "'nft delete table ip synplug'",
  };
  const holds = [
    fakeHold('route', other),
    fakeHold('route', { here: true }),
    fakeHold('route', undefined),
    fakeHold('run', other),
    fakeHold('route', other, async () => {
      throw new StateFileError('/x', 'unsafe');
    }),
  ];
  const found = await othersHolds(holds);
  t.deepEqual(
    found.map((f) => f.hold),
    [holds[0]],
  );
  const e = othersHoldsError(found, '/run/b', 'release', 'Nothing was released');
  t.is(exitCodeOf(e), 7);
  t.regex(
    e.message,
    new RegExp(
      `^the local hold on lo \\(the table's comment names state directory mark ${THEIRS}; this directory's is ${MINE}\\): another state directory's hold, set up through that directory and not /run/b; a release through this one would act on it under that directory's feet\\. Use that directory's --state-dir for it\\. If no state directory records it any more \\(it was removed\\), remove it by hand \\('nft delete table ip synplug'\\)\\. Nothing was released$`,
    ),
  );
});
