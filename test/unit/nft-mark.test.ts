/**
 * The SYN-marking rule: input checks (refused before anything is sent),
 * reconciliation plans, and the prepared set-element batches.
 */
import test from 'ava';
import { NetlinkConnection, FakeTransport } from '../../src/netlink/connection.js';
import { parseMessages, NETLINK_NETFILTER, NLM_F_ACK } from '../../src/netlink/message.js';
import { messageTypeName } from '../../src/netlink/protocols.js';
import { UsageError } from '../../src/netlink/errors.js';
import * as N from '../../src/iptables/index.js';
import * as M from '../../src/guard/modes/local-nft.js';
import { answerBatch } from '../helpers/nft-fake.js';
import { TABLE_COMMENT } from '../../src/guard/teardown-marks.js';

const C = N.nftConstants;

function fake(): { ft: FakeTransport; conn: NetlinkConnection } {
  const ft = new FakeTransport([], { keepSeq: true });
  return { ft, conn: new NetlinkConnection(ft, NETLINK_NETFILTER, { timeoutMs: 200 }) };
}

const bad: Array<[string, M.MarkRuleOptions, RegExp]> = [
  ['a bad address', { address: '169.254.255.256' }, /bad address '169\.254\.255\.256'/],
  ['an address with a prefix', { address: '169.254.255.254/32' }, /bad address/],
  ['a hostname', { address: 'localhost' }, /bad address/],
  ['a mark of 0', { address: '169.254.255.254', mark: 0 }, /bad mark '0'.*0 would mark nothing/],
  ['a mark over u32', { address: '169.254.255.254', mark: 2 ** 32 }, /bad mark/],
  ['a fractional mark', { address: '169.254.255.254', mark: 1.5 }, /bad mark/],
  ['a negative mark', { address: '169.254.255.254', mark: -1 }, /bad mark/],
  ['port 0', { address: '169.254.255.254', port: 0 }, /bad port '0'.*1 to 65535/],
  ['port 65536', { address: '169.254.255.254', port: 65536 }, /bad port/],
  ['a 256-byte table name (NFT_NAME_MAXLEN counts the NUL)', { address: '169.254.255.254', table: 't'.repeat(256) }, /bad table name .*256 bytes, at most 255/],
  ['a 256-byte chain name', { address: '169.254.255.254', chain: 'c'.repeat(256) }, /bad chain name/],
  ['a 256-byte set name', { address: '169.254.255.254', conditional: true, set: 's'.repeat(256) }, /bad set name/],
  ['an empty table name', { address: '169.254.255.254', table: '' }, /bad table name: it must not be empty/],
  ['an IPv6 address in family ip', { address: 'fd00::1', family: 'ip' }, /is IPv6; family ip cannot match it/],
  ['a family other than ip/ip6/inet', { address: '169.254.255.254', family: 'bridge' as 'ip' }, /bad family 'bridge'/],
  ['a comment over 127 bytes', { address: '169.254.255.254', comment: 'x'.repeat(128) }, /bad rule comment/],
];

for (const [what, opts, re] of bad) {
  test(`ensureMarkRule refuses ${what} with a UsageError before sending anything`, async (t) => {
    const { ft, conn } = fake();
    const err = await t.throwsAsync(M.ensureMarkRule(conn, opts), { instanceOf: UsageError });
    t.regex(err!.message, re);
    t.is(err!.category, 'usage');
    t.is(ft.sent.length, 0);
    conn.close();
  });
}

test('a 255-byte name is the longest accepted (NFT_NAME_MAXLEN 256 includes the NUL)', (t) => {
  t.is(C.NFT_NAME_MAXLEN, 256);
  t.notThrows(() => M.resolveMarkRule({ address: '169.254.255.254', table: 't'.repeat(255) }));
  t.throws(() => M.resolveMarkRule({ address: '169.254.255.254', table: 't'.repeat(256) }), { instanceOf: UsageError });
  // bytes, not characters
  t.throws(() => M.resolveMarkRule({ address: '169.254.255.254', table: 'é'.repeat(128) }), { instanceOf: UsageError });
});

test('element primitives refuse bad input before sending anything', async (t) => {
  const { ft, conn } = fake();
  await t.throwsAsync(M.addSetElement(conn, { address: '169.254.3.4' }), { instanceOf: UsageError, message: /needs timeoutMs/ });
  await t.throwsAsync(M.addSetElement(conn, { address: '169.254.3.4', timeoutMs: 5 }), { instanceOf: UsageError, message: /bad timeout '5' ms/ });
  await t.throwsAsync(M.addSetElement(conn, { address: '169.254.3.4', timeoutMs: 1.5 }), { instanceOf: UsageError });
  await t.throwsAsync(M.addSetElement(conn, { address: 'nope', timeoutMs: 1000 }), { instanceOf: UsageError, message: /bad address/ });
  await t.throwsAsync(M.deleteSetElement(conn, { address: '169.254.3.4', set: 'x'.repeat(300) }), { instanceOf: UsageError, message: /bad set name/ });
  await t.throwsAsync(M.deleteSetElement(conn, { address: '169.254.3.4', family: 'ip6' }), { instanceOf: UsageError, message: /is IPv4/ });
  await t.throwsAsync(M.removeMarkTable(conn, { table: 'x'.repeat(256) }), { instanceOf: UsageError });
  t.is(ft.sent.length, 0);
  conn.close();
});

const r4 = M.resolveMarkRule({ address: '169.254.255.254' });
const empty: M.TableState = { chains: [], rules: [], sets: [] };
const actions = (b: N.NftBatch) => b.ops.map((o) => o.what);

test('defaults: table synplug, chain output, mark 1, family from the address', (t) => {
  t.like(r4, { table: 'synplug', chain: 'output', mark: 1, family: 'ip', conditional: false, set: 'synplug_active' });
  t.is(M.resolveMarkRule({ address: 'fd00::1' }).family, 'ip6');
  t.like(M.markChainSpec(r4), { type: 'route', hook: 'output', prio: -150, policy: 'accept' });
});

test('plan from nothing: table, chain, rule (conditional: and the set, created before the rule that looks it up)', (t) => {
  t.deepEqual(actions(M.planMarkRule(empty, r4)), ['add table ip synplug', 'add chain ip synplug output', 'add rule to ip synplug output']);
  const rc = M.resolveMarkRule({ address: 'fd00::1', conditional: true });
  const b = M.planMarkRule(empty, rc);
  t.deepEqual(actions(b), ['add table ip6 synplug', 'add set ip6 synplug synplug_active', 'add chain ip6 synplug output', 'add rule to ip6 synplug output']);
  // The lookup names the set created in the same batch by its NFTA_SET_ID too.
  const ruleOp = b.ops[3];
  const dec = N.decodeRule({ type: N.nftType(ruleOp.msg), flags: 0, seq: 0, pid: 0, payload: Buffer.concat(ruleOp.payload), offset: 0 });
  t.like(
    dec.expr.find((e) => e.name === 'lookup'),
    { set: 'synplug_active', setId: 1 },
  );
  const setOp = b.ops[1];
  const set = N.decodeSet({ type: N.nftType(setOp.msg), flags: 0, seq: 0, pid: 0, payload: Buffer.concat(setOp.payload), offset: 0 });
  t.like(set, { type: 'ipv6_addr', keyLen: 16, flags: ['timeout'] });
});

function dumpedState(r: M.ResolvedMarkRule, extra: Partial<M.TableState> = {}): M.TableState {
  // What the kernel would list after our own batch: same objects, with handles.
  const chain: N.NftChain = { family: r.family, table: r.table, name: r.chain, handle: 1, type: 'route', hook: 'output', prio: -150, policy: 'accept' };
  const rule: N.NftRule = {
    family: r.family,
    table: r.table,
    chain: r.chain,
    handle: 2,
    expr: M.markRuleExprs(r),
    ...(r.comment !== undefined && { comment: r.comment }),
  };
  return { table: { family: r.family, name: r.table, handle: 1, comment: TABLE_COMMENT }, chains: [chain], rules: [rule], sets: [], ...extra };
}

test('plan when everything is there: nothing to send', (t) => {
  t.is(M.planMarkRule(dumpedState(r4), r4).size, 0);
});

test("plan with our rule in a table without synplug's comment (an older synplug's, or made by hand): the table is recreated with it, in one batch", (t) => {
  const s = dumpedState(r4);
  delete s.table!.comment;
  const b = M.planMarkRule(s, r4);
  t.deepEqual(actions(b), ['delete table ip synplug', 'add table ip synplug', 'add chain ip synplug output', 'add rule to ip synplug output']);
  const add = b.ops[1];
  const table = N.decodeTable({ type: N.nftType(add.msg), flags: 0, seq: 0, pid: 0, payload: Buffer.concat(add.payload), offset: 0 });
  t.is(table.comment, TABLE_COMMENT);
});

test('plan with duplicates: delete all but one, never add', (t) => {
  const s = dumpedState(r4);
  s.rules.push({ ...s.rules[0], handle: 5 }, { ...s.rules[0], handle: 6 });
  t.deepEqual(actions(M.planMarkRule(s, r4)), ['delete rule handle 5 in ip synplug output', 'delete rule handle 6 in ip synplug output']);
});

test('plan with a different rule (other mark) and a foreign rule in our chain: both go, ours is added', (t) => {
  const s = dumpedState(M.resolveMarkRule({ address: '169.254.255.254', mark: 2 }));
  s.rules.push({ family: 'ip', table: 'synplug', chain: 'output', handle: 9, expr: [{ name: 'counter', packets: 1, bytes: 60 }] });
  t.deepEqual(actions(M.planMarkRule(s, r4)), [
    'delete rule handle 2 in ip synplug output',
    'delete rule handle 9 in ip synplug output',
    'add rule to ip synplug output',
  ]);
});

test('plan with a chain of another priority: the chain is replaced (a base chain hook cannot be updated)', (t) => {
  const s = dumpedState(r4);
  s.chains[0] = { ...s.chains[0], prio: 0 };
  t.deepEqual(actions(M.planMarkRule(s, r4)), ['delete chain ip synplug output', 'add chain ip synplug output', 'add rule to ip synplug output']);
});

test('plan switching to the conditional rule: add the set, replace the rule; a set of the wrong type is replaced', (t) => {
  const rc = M.resolveMarkRule({ address: '169.254.255.254', conditional: true });
  t.deepEqual(actions(M.planMarkRule(dumpedState(r4), rc)), [
    'add set ip synplug synplug_active',
    'delete rule handle 2 in ip synplug output',
    'add rule to ip synplug output',
  ]);
  const wrongSet: N.NftSet = { family: 'ip', table: 'synplug', name: 'synplug_active', handle: 3, flags: [], type: 'ipv4_addr', keyLen: 4 };
  const s = dumpedState(rc, { sets: [wrongSet] });
  t.deepEqual(actions(M.planMarkRule(s, rc)), [
    'delete rule handle 2 in ip synplug output',
    'delete set ip synplug synplug_active',
    'add set ip synplug synplug_active',
    'add rule to ip synplug output',
  ]);
  const goodSet: N.NftSet = { ...wrongSet, flags: ['timeout'] };
  t.is(M.planMarkRule(dumpedState(rc, { sets: [goodSet] }), rc).size, 0);
});

test('prepareElementOps: add is one NEWSETELEM with the timeout, delete one DELSETELEM, refresh NEW+DEL+NEW', (t) => {
  const p = M.prepareElementOps({ address: '169.254.255.254', timeoutMs: 30_000 });
  const names = (pb: M.PreparedBatch) => pb.messages.map((m) => messageTypeName(NETLINK_NETFILTER, m.type));
  t.deepEqual(names(p.add!), ['NFNL_MSG_BATCH_BEGIN', 'NFT_MSG_NEWSETELEM', 'NFNL_MSG_BATCH_END']);
  t.deepEqual(names(p.delete), ['NFNL_MSG_BATCH_BEGIN', 'NFT_MSG_DELSETELEM', 'NFNL_MSG_BATCH_END']);
  t.deepEqual(names(p.refresh!), ['NFNL_MSG_BATCH_BEGIN', 'NFT_MSG_NEWSETELEM', 'NFT_MSG_DELSETELEM', 'NFT_MSG_NEWSETELEM', 'NFNL_MSG_BATCH_END']);
  t.true(((p.add!.messages[1].flags ?? 0) & NLM_F_ACK) !== 0);
  const msg = (m: M.PreparedBatch['messages'][number]) => ({
    type: m.type,
    flags: 0,
    seq: 0,
    pid: 0,
    payload: Buffer.concat(m.payload as Buffer[]),
    offset: 0,
  });
  t.deepEqual(N.decodeElements(msg(p.add!.messages[1])), {
    family: 'ip',
    table: 'synplug',
    set: 'synplug_active',
    elements: [{ key: 'a9fefffe', address: '169.254.255.254', timeoutMs: 30_000 }],
  });
  t.deepEqual(N.decodeElements(msg(p.delete.messages[1])).elements, [{ key: 'a9fefffe', address: '169.254.255.254' }]);
  t.is(M.prepareElementOps({ address: '169.254.255.254' }).add, undefined);
});

test('addSetElement / deleteSetElement send ONE datagram each, of the prepared bytes', async (t) => {
  const ft = new FakeTransport([(s) => answerBatch(s), (s) => answerBatch(s)], { keepSeq: true });
  const conn = new NetlinkConnection(ft, NETLINK_NETFILTER, { timeoutMs: 500 });
  const o = { address: 'fd00::1', table: 'synplug_g', set: 'active', timeoutMs: 5000 };
  t.deepEqual(await M.addSetElement(conn, o), { applied: true, messages: 1 });
  t.deepEqual(await M.deleteSetElement(conn, o), { applied: true, messages: 1 });
  t.is(ft.sent.length, 2);
  const p = M.prepareElementOps(o);
  const sentAdd = parseMessages(ft.sent[0]);
  t.deepEqual(sentAdd[1].payload, Buffer.concat(p.add!.messages[1].payload as Buffer[]));
  t.is(N.decodeElements(sentAdd[1]).family, 'ip6');
  conn.close();
});
