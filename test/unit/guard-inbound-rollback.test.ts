/**
 * The inbound hold's filter steps when they fail, without a kernel: a setup
 * that changes the ports of a recorded hold and fails half-way puts the old
 * filters back (the failing step's own protocol, and the steps already
 * done), and a new filter step that fails half-way deletes the filters it
 * added, so nothing is half-applied.
 */
import test from 'ava';
import { NetlinkConnection } from '../../src/netlink/connection.js';
import { FakeTransport, nfnetlinkAck } from '../../src/netlink/testing.js';
import { encodeMessage, NETLINK_ROUTE, NLM_F_DUMP, NLM_F_MULTI, NLMSG_DONE, parseMessages, type NetlinkMessage } from '../../src/netlink/message.js';
import { RTM_DELTFILTER, RTM_GETTFILTER, RTM_NEWTFILTER } from '../../src/netlink/route/constants.js';
import '../../src/netlink/route/index.js';
import { INBOUND_PREF, InboundHold, validateInbound, type InboundObservation } from '../../src/guard/modes/inbound.js';
import { armSteps, runSteps } from '../../src/guard/pieces.js';
import { SetupError } from '../../src/guard/errors.js';
import { decodeTcMessage } from '../../src/tc/index.js';
import { exitCodeOf } from '../../src/cli/exit-codes.js';
import { qdiscEntry } from '../helpers/tc-entries.js';
import { inboundHoldRecord } from '../helpers/record-mutations.js';
import type { FilterEntry } from '../../src/tc/types.js';

const EINVAL = 22;

/** A route socket whose dumps are empty and whose requests are acked, the n-th RTM_NEWTFILTER refused when `refuse(n)`. */
function routeConn(refuse: (n: number) => boolean) {
  let filters = 0;
  const answer = (sent: Buffer): Buffer[] =>
    parseMessages(sent).map((m) => {
      // a dump: a GET with NLM_F_DUMP (NLM_F_MATCH is also NLM_F_EXCL's bit on NEW requests)
      if (m.type % 4 === 2 && (m.flags & NLM_F_DUMP) === NLM_F_DUMP)
        return encodeMessage({ type: NLMSG_DONE, flags: NLM_F_MULTI, seq: m.seq, pid: 0, payload: Buffer.alloc(4) });
      const errno = m.type === RTM_NEWTFILTER && refuse(filters++) ? EINVAL : 0;
      return nfnetlinkAck(m, errno, { capped: true });
    });
  const ft = new FakeTransport(
    Array.from({ length: 200 }, () => answer),
    { keepSeq: true },
  );
  return { ft, conn: new NetlinkConnection(ft, NETLINK_ROUTE, { timeoutMs: 1000 }) };
}

/** The filters the fake was asked to add, as [protocol, dst_port]. */
function added(ft: FakeTransport): Array<[string, number]> {
  return ft.sent
    .flatMap((d) => parseMessages(d))
    .filter((m) => m.type === RTM_NEWTFILTER)
    .map((m) => {
      const f = decodeTcMessage(m) as unknown as { protocol: string; options: { keys: { dst_port: number } } };
      return [f.protocol, f.options.keys.dst_port];
    });
}

const record = inboundHoldRecord();

const flower = (protocol: string, pref: number): FilterEntry => ({
  ifindex: 3,
  protocol,
  pref,
  kind: 'flower',
  options: { keys: { dst_port: 80 }, actions: [{ kind: 'mirred', direction: 'egress', mirred_action: 'redirect', to_dev: 'if9', ifindex: 9 }] },
});

/** DEV as setup left it for port 80 (flower, both protocols). */
const setUpFor80: InboundObservation = {
  qdiscs: [],
  ingressQdisc: qdiscEntry({ kind: 'clsact', handle: 'ffff:', parent: 'ffff:fff1', ifindex: 3 }),
  ingressFilters: [flower('ip', INBOUND_PREF.ip), flower('ipv6', INBOUND_PREF.ipv6)],
  egressFilters: [],
  ifb: { exists: true, index: 9, kind: 'ifb', up: true, alias: 'synplug inbound hold of sp-eth0' },
  ifbQdiscs: [qdiscEntry({ kind: 'plug', handle: '1:', root: true, ifindex: 9 })],
};

async function changePorts(refuse: (n: number) => boolean) {
  const { conn, ft } = routeConn(refuse);
  const spec = validateInbound({ dev: 'sp-eth0', ports: [80, 443], classifier: 'flower' });
  const h = new InboundHold({ route: conn, nft: conn }, spec, 1048576, 3, 9, record);
  const pieces = h.judge(setUpFor80);
  const steps = armSteps(h.pieces, setUpFor80);
  return { ft, steps, pieces };
}

test('changing the ports: a failure in the IPv6 step puts back the IPv6 filters and, rolling back, the IPv4 ones (port 80 as recorded)', async (t) => {
  // adds: ip 80, ip 443, ipv6 80, ipv6 443 (refused) ...
  const { ft, steps, pieces } = await changePorts((n) => n === 3);
  t.is(pieces.filter_ip.status, 'different');
  t.deepEqual(
    steps.map((s) => s.what.split(' ')[0]),
    ['replace', 'replace'],
  );
  const e = await t.throwsAsync(runSteps(steps), { instanceOf: SetupError });
  t.deepEqual(added(ft), [
    ['ip', 80],
    ['ip', 443],
    ['ipv6', 80],
    ['ipv6', 443],
    ['ipv6', 80], // the failing step put its old filter back
    ['ip', 80], // the rollback put the IPv4 one back
  ]);
  t.regex(e!.message, /Rolled back: put back filters pref 65000 on sp-eth0 as set up before \(port 80\)\./);
  t.notRegex(e!.message, /ROLLBACK FAILED/);
  t.is(exitCodeOf(e), 3, 'a kernel refusal');
});

/** tcmsg's tcm_info (the filter's pref and protocol), at offset 16 of its payload. */
const tcmInfo = (m: NetlinkMessage): number => m.payload.readUInt32LE(16);

/**
 * A route socket that keeps a filter table: RTM_NEWTFILTER adds the filter
 * (the n-th refused with EINVAL when `refuse(n)`), a filter dump lists the
 * table, RTM_DELTFILTER removes every filter of its pref and protocol; other
 * dumps are empty and other requests acked.
 */
function filterTable(refuse: (n: number) => boolean) {
  const table: NetlinkMessage[] = [];
  let n = 0;
  const done = (seq: number) => encodeMessage({ type: NLMSG_DONE, flags: NLM_F_MULTI, seq, pid: 0, payload: Buffer.alloc(4) });
  const answer = (sent: Buffer): Buffer[] =>
    parseMessages(sent).flatMap((m) => {
      if (m.type % 4 === 2 && (m.flags & NLM_F_DUMP) === NLM_F_DUMP) {
        const listed = m.type === RTM_GETTFILTER ? table : [];
        return [...listed.map((f) => encodeMessage({ type: RTM_NEWTFILTER, flags: NLM_F_MULTI, seq: m.seq, pid: 0, payload: f.payload })), done(m.seq)];
      }
      if (m.type === RTM_NEWTFILTER) {
        if (refuse(n++)) return [nfnetlinkAck(m, EINVAL, { capped: true })];
        table.push(m);
      }
      if (m.type === RTM_DELTFILTER) for (let i = table.length - 1; i >= 0; i--) if (tcmInfo(table[i]) === tcmInfo(m)) table.splice(i, 1);
      return [nfnetlinkAck(m, 0, { capped: true })];
    });
  const ft = new FakeTransport(
    Array.from({ length: 200 }, () => answer),
    { keepSeq: true },
  );
  return { table, ft, conn: new NetlinkConnection(ft, NETLINK_ROUTE, { timeoutMs: 1000 }) };
}

test('a new filter step that fails half-way removes what it added (no step is left half-done)', async (t) => {
  const { conn, ft, table } = filterTable((n) => n === 1);
  const spec = validateInbound({ dev: 'sp-eth0', ports: [80, 443], classifier: 'flower', addrs: ['169.254.0.1'] });
  const h = new InboundHold({ route: conn, nft: conn }, spec, 1048576, 3, 9);
  const o: InboundObservation = { ...setUpFor80, ingressFilters: [] };
  await t.throwsAsync(runSteps([armSteps(h.pieces, o)[0]]), { instanceOf: SetupError });
  const sent = ft.sent.flatMap((d) => parseMessages(d));
  const adds = sent.filter((m) => m.type === RTM_NEWTFILTER);
  t.is(adds.length, 2, 'the first filter was added, the second refused');
  t.deepEqual(sent.filter((m) => m.type === RTM_DELTFILTER).map(tcmInfo), [tcmInfo(adds[0])], "the step deleted its filters' pref and protocol");
  t.deepEqual(table, [], 'nothing it added is left');
});
