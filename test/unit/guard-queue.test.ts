/**
 * The queue hold without a kernel: its rule against what nft 1.0.6 sent for
 * the same rule (fixtures/captures/53_nft_queue_rule_add, Debian 6.1), its
 * record check, and setup's refusals of bad input before anything is sent.
 */
import test from 'ava';
import { loadCapture, requests } from '../helpers/captures.js';
import { parseMessages, NETLINK_NETFILTER } from '../../src/netlink/message.js';
import { UsageError } from '../../src/netlink/errors.js';
import { messageTypeName } from '../../src/netlink/protocols.js';
import { NftBatch } from '../../src/iptables/batch.js';
import { decodeRule } from '../../src/iptables/rule.js';
import { DEFAULT_QUEUE_NUM, isQueueRecord, queueRecordRefusal, queueHoldId, queueRules } from '../../src/guard/modes/queue.js';
import { devicesOfHolds, holdModeFor } from '../../src/guard/modes/index.js';
import { setup } from '../../src/guard/setup.js';
import { untyped } from '../helpers/untyped.js';

const payloadOf = (m: { payload?: Buffer | readonly Buffer[] }): Buffer =>
  m.payload === undefined ? Buffer.alloc(0) : Buffer.isBuffer(m.payload) ? m.payload : Buffer.concat(m.payload as Buffer[]);

test("53: the queue hold's rule is, byte for byte, the NEWRULE nft 1.0.6 sent for the same match and `queue num 7 bypass`", (t) => {
  const c = loadCapture('53_nft_queue_rule_add');
  t.regex(c.command, /ip daddr 169\.254\.255\.254 tcp dport 8080 tcp flags & \(syn \| ack\) == syn queue num 7 bypass$/);
  const batch = parseMessages(requests(c).at(-1)!.bytes);
  const captured = batch.find((m) => messageTypeName(NETLINK_NETFILTER, m.type) === 'NFT_MSG_NEWRULE')!;
  t.truthy(captured);
  const [expr] = queueRules({ scope: 'local', dev: 'lo', addrs: ['169.254.255.254'], ports: [8080], queueNum: 7 }, 'native');
  const ours = new NftBatch().addRule({ family: 'inet', table: 'synq', chain: 'out', expr }).messages();
  const rule = ours.find((m) => messageTypeName(NETLINK_NETFILTER, m.type) === 'NFT_MSG_NEWRULE')!;
  t.is(payloadOf(rule).toString('hex'), captured.payload.toString('hex'));
  // and read back, the same expressions
  t.deepEqual(
    decodeRule(captured).expr.map((e) => e.name),
    expr.map((e) => e.name),
  );
});

test('the rules of an inbound hold: one per address and port, each starting with iifname; without addresses, no family test', (t) => {
  const spec = { scope: 'inbound' as const, dev: 'veth0', addrs: ['169.254.1.1', 'fd00::1'], ports: [80, 443], queueNum: 3 };
  const rules = queueRules(spec, 'compat');
  t.is(rules.length, 4);
  for (const r of rules) {
    t.like(r[0], { name: 'meta', key: 'iifname' });
    t.like(r[1], { name: 'cmp', data: Buffer.concat([Buffer.from('veth0'), Buffer.alloc(11)]).toString('hex') });
    t.like(r.at(-1), { name: 'target', target: 'NFQUEUE', rev: 3 });
  }
  t.deepEqual(
    rules.map((r) => r.find((e) => e.name === 'cmp' && (e as { data: string }).data.length <= 4 && e !== r[1])),
    [
      { name: 'cmp', sreg: 1, op: 'eq', data: '02' },
      { name: 'cmp', sreg: 1, op: 'eq', data: '02' },
      { name: 'cmp', sreg: 1, op: 'eq', data: '0a' },
      { name: 'cmp', sreg: 1, op: 'eq', data: '0a' },
    ],
    'meta nfproto ipv4 / ipv6 before each address',
  );
  const any = queueRules({ ...spec, addrs: [] }, 'native');
  t.is(any.length, 2);
  t.false(any.some((r) => r.some((e) => e.name === 'meta' && (e as { key: string }).key === 'nfproto')));
});

test('queue hold ids never collide with the plug holds of the same clients', (t) => {
  t.is(queueHoldId('local', 'lo'), 'queue');
  t.is(queueHoldId('inbound', 'eth0'), 'queue:eth0');
  t.not(queueHoldId('local', 'lo'), 'local');
  t.not(queueHoldId('inbound', 'eth0'), 'inbound:eth0');
  t.is(holdModeFor('queue', 'local')?.name, 'queue');
  t.is(holdModeFor('queue', 'inbound')?.name, 'queue');
  t.is(holdModeFor('plug', 'local')?.name, 'local');
});

test('a queue record is whole only with every field of the right type', (t) => {
  const ok = {
    mode: 'queue',
    dev: 'lo',
    createdAt: 1,
    scope: 'local',
    addrs: ['169.254.255.254'],
    ports: [],
    queueNum: DEFAULT_QUEUE_NUM,
    maxlen: 65536,
    table: 'synplug_queue',
    verdict: 'compat',
    addedAddress: true,
  };
  t.true(isQueueRecord(ok));
  t.false(isQueueRecord({ ...ok, queueNum: 70000 }));
  // a table that is not synplug's is whole, but refused as setup refuses it, naming the table
  t.is(queueRecordRefusal(ok), undefined);
  t.regex(
    queueRecordRefusal({ ...ok, table: 'someone_else' }) ?? '',
    /^'table' is 'someone_else': synplug's queue holds are in the nftables table synplug_queue/,
  );
  t.false(isQueueRecord({ ...ok, addrs: [] }), 'the local hold has its one address');
  t.false(isQueueRecord({ ...ok, scope: 'inbound', ports: [] }), 'an inbound hold has ports');
  t.false(isQueueRecord({ ...ok, verdict: 'none' }));
});

test('setup refuses a bad --via word and the plug holds options with --via queue, before anything', async (t) => {
  await t.throwsAsync(untyped(setup)({ via: 'quue' }), { instanceOf: UsageError, message: /--via: 'quue' is not one of auto, plug, queue/ });
  for (const [k, v] of [
    ['dev', 'lo'],
    ['mark', 3],
    ['limit', 4096],
    ['force', true],
  ] as const) {
    await t.throwsAsync(setup({ via: 'queue', [k]: v }), { instanceOf: UsageError, message: new RegExp(`--${k} is the plug holds' option`) });
  }
  await t.throwsAsync(setup({ via: 'plug', queue: { num: 3 } }), {
    instanceOf: UsageError,
    message: /--queue-num and --queue-maxlen are the queue hold's options/,
  });
  await t.throwsAsync(setup({ via: 'queue', queue: { num: 70000 } }), { instanceOf: UsageError, message: /--queue-num: 70000 is not a queue number/ });
  // without --via, a queue hold's option picks the queue hold (a fresh user's: it said to use it with --via queue),
  // and with a plug hold's option too it is refused, as with --via queue
  await t.throwsAsync(setup({ mark: 3, queue: { num: 3 } }), { instanceOf: UsageError, message: /--mark is the plug holds' option; the queue hold/ });
});

test("plug.json's dev: the held holds' devices (an inbound hold's DEV, never the local hold's lo for it)", (t) => {
  t.is(devicesOfHolds(['queue:f22s'], 'lo'), 'f22s');
  t.is(devicesOfHolds(['inbound:eth0'], 'lo'), 'eth0');
  t.is(devicesOfHolds(['queue'], 'lo'), 'lo');
  t.is(devicesOfHolds(['local'], 'lo'), 'lo');
  t.is(devicesOfHolds(['queue', 'queue:eth1', 'inbound:eth1'], 'lo'), 'lo,eth1');
  t.is(devicesOfHolds([], 'lo'), 'lo');
});
