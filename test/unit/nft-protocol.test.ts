/**
 * Every public src/iptables function that takes a connection refuses one of
 * another protocol (NETLINK_ROUTE) before sending anything, with a UsageError
 * (category 'usage') that names the function and NETLINK_NETFILTER, instead
 * of the kernel's bare EOPNOTSUPP.
 */
import test from 'ava';
import { NetlinkConnection, FakeTransport } from '../../src/netlink/connection.js';
import { nfnetlinkAck } from '../../src/netlink/testing.js';
import { NETLINK_NETFILTER, NETLINK_ROUTE, parseMessages } from '../../src/netlink/message.js';
import { NetlinkError, UsageError } from '../../src/netlink/errors.js';
import { exitCodeOf } from '../../src/cli/exit-codes.js';
import '../../src/netlink/route/index.js';
import * as N from '../../src/iptables/index.js';

const ref = { family: 'inet', table: 't', set: 's' };
const CALLS: Array<[string, (c: NetlinkConnection) => Promise<unknown>]> = [
  ['listRuleset', (c) => N.listRuleset(c)],
  ['listTables', (c) => N.listTables(c)],
  ['getTable', (c) => N.getTable(c, { family: 'inet', name: 't' })],
  ['listChains', (c) => N.listChains(c)],
  ['listRules', (c) => N.listRules(c)],
  ['listSets', (c) => N.listSets(c)],
  ['listSetElements', (c) => N.listSetElements(c, ref)],
  ['listObjects', (c) => N.listObjects(c)],
  ['getGenId', (c) => N.getGenId(c)],
];

for (const [fn, call] of CALLS) {
  test(`${fn} on a NETLINK_ROUTE connection: a UsageError naming NETLINK_NETFILTER, nothing sent`, async (t) => {
    const ft = new FakeTransport([], { keepSeq: true });
    const conn = new NetlinkConnection(ft, NETLINK_ROUTE, { timeoutMs: 200 });
    const e = await t.throwsAsync(call(conn), { instanceOf: UsageError });
    t.regex(e!.message, new RegExp(`^${fn} needs a NETLINK_NETFILTER connection \\(protocol ${NETLINK_NETFILTER}\\b`));
    t.regex(e!.message, /NETLINK_ROUTE connection \(protocol 0\)/);
    t.is(e!.category, 'usage');
    t.is(exitCodeOf(e), exitCodeOf(new UsageError('x')));
    t.is(ft.sent.length, 0, 'nothing sent');
  });
}

test('a NETLINK_NETFILTER connection passes the check (the request is sent)', async (t) => {
  // the kernel's answer is scripted: EPERM (1) to the dump
  const ft = new FakeTransport([(sent) => parseMessages(sent).map((m) => nfnetlinkAck(m, 1))], { keepSeq: true });
  const conn = new NetlinkConnection(ft, NETLINK_NETFILTER, { timeoutMs: 500 });
  await t.throwsAsync(N.listTables(conn), { instanceOf: NetlinkError });
  t.is(ft.sent.length, 1);
});
