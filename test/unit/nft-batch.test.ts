/**
 * nfnetlink framing and batches: nfgenmsg, type names, BEGIN/END, acks, and
 * how kernel answers turn into results and errors (over a FakeTransport).
 */
import test from 'ava';
import { NetlinkConnection, FakeTransport } from '../../src/netlink/connection.js';
import { parseMessages, NETLINK_NETFILTER, NLM_F_ACK, NLM_F_CREATE, NLM_F_APPEND, NLM_F_REQUEST, flagNames } from '../../src/netlink/message.js';
import { messageTypeName, requestKind } from '../../src/netlink/protocols.js';
import { parseAttributes } from '../../src/netlink/attributes.js';
import { NetlinkError, SynplugError, UsageError } from '../../src/netlink/errors.js';
import * as N from '../../src/iptables/index.js';
import * as M from '../../src/guard/modes/local-nft.js';
import { errorReply, answerBatch } from '../helpers/nft-fake.js';

const C = N.nftConstants;
const conn = (script: ConstructorParameters<typeof FakeTransport>[0]) => {
  const ft = new FakeTransport(script, { keepSeq: true });
  return { ft, conn: new NetlinkConnection(ft, NETLINK_NETFILTER, { timeoutMs: 500 }) };
};

test('nfgenmsg: family, version 0, res_id big-endian', (t) => {
  const b = N.encodeNfGenMsg(C.NFPROTO_IPV4, C.NFNL_SUBSYS_NFTABLES);
  t.is(b.toString('hex'), '0200000a');
  t.deepEqual(N.decodeNfGenMsg({ type: 0, flags: 0, seq: 0, pid: 0, payload: b, offset: 0 }), { family: 2, version: 0, resId: 10 });
});

test('message types are subsys << 8 | msg and carry the kernel names', (t) => {
  t.is(N.nftType(C.NFT_MSG_NEWRULE), 0x0a06);
  t.is(N.subsysId(0x0a06), C.NFNL_SUBSYS_NFTABLES);
  t.is(N.msgType(0x0a06), C.NFT_MSG_NEWRULE);
  const names: Array<[number, string]> = [
    [0x10, 'NFNL_MSG_BATCH_BEGIN'],
    [0x11, 'NFNL_MSG_BATCH_END'],
    [0x0a00, 'NFT_MSG_NEWTABLE'],
    [0x0a06, 'NFT_MSG_NEWRULE'],
    [0x0a0c, 'NFT_MSG_NEWSETELEM'],
    [0x0a0e, 'NFT_MSG_DELSETELEM'],
    [0x0a10, 'NFT_MSG_GETGEN'],
    [0x0a1e, 'NFT_MSG_DESTROYSETELEM'],
    [0x0101, 'NFNL_SUBSYS_CTNETLINK/1'],
  ];
  for (const [type, name] of names) t.is(messageTypeName(NETLINK_NETFILTER, type), name);
  t.is(messageTypeName(NETLINK_NETFILTER, 0x0aff), '0xaff');
  t.is(requestKind(NETLINK_NETFILTER, 0x0a06), 'new');
  t.is(requestKind(NETLINK_NETFILTER, 0x0a07), 'get');
  t.is(requestKind(NETLINK_NETFILTER, 0x0a08), 'del');
  t.deepEqual(flagNames(NLM_F_REQUEST | NLM_F_CREATE | NLM_F_APPEND, requestKind(NETLINK_NETFILTER, 0x0a06)), [
    'NLM_F_REQUEST',
    'NLM_F_CREATE',
    'NLM_F_APPEND',
  ]);
});

test('a batch is BEGIN, the messages, END in one datagram, res_id NFNL_SUBSYS_NFTABLES, NLM_F_ACK on the last message only', async (t) => {
  const { ft, conn: c } = conn([(sent) => answerBatch(sent)]);
  const b = new N.NftBatch().addTable({ family: 'ip', name: 't' }).addChain({ family: 'ip', table: 't', name: 'c' }).deleteTable({ family: 'ip6', name: 'u' });
  const res = await b.commit(c);
  t.deepEqual(res, { applied: true, messages: 3 });
  t.is(ft.sent.length, 1);
  const m = parseMessages(ft.sent[0]);
  t.deepEqual(
    m.map((x) => messageTypeName(NETLINK_NETFILTER, x.type)),
    ['NFNL_MSG_BATCH_BEGIN', 'NFT_MSG_NEWTABLE', 'NFT_MSG_NEWCHAIN', 'NFT_MSG_DELTABLE', 'NFNL_MSG_BATCH_END'],
  );
  for (const x of [m[0], m[4]]) t.deepEqual(N.decodeNfGenMsg(x), { family: 0, version: 0, resId: C.NFNL_SUBSYS_NFTABLES });
  t.deepEqual(
    m.map((x) => (x.flags & NLM_F_ACK) !== 0),
    [false, false, false, true, false],
  );
  t.true(m.every((x) => (x.flags & NLM_F_REQUEST) !== 0));
  c.close();
});

test('an error names the message that failed, and the whole batch is reported as not applied', async (t) => {
  // the 3rd message (NEWRULE) fails with ENOENT; the kernel still acks the last one
  const { conn: c } = conn([(sent) => answerBatch(sent, [0, 0, 2, 0])]);
  const b = new N.NftBatch()
    .addTable({ family: 'ip', name: 't' })
    .addChain({ family: 'ip', table: 't', name: 'c' })
    .addRule({ family: 'ip', table: 't', chain: 'nochain', expr: [{ name: 'counter', packets: 0, bytes: 0 }] })
    .addTable({ family: 'ip', name: 't2' });
  const err = await t.throwsAsync(b.commit(c), { instanceOf: N.NftBatchError });
  t.regex(err!.message, /^NFT_MSG_NEWRULE: add rule to ip t nochain failed: .*\(ENOENT\); the whole batch was not applied$/);
  t.is(err!.index, 2);
  t.is(err!.failedType, 'NFT_MSG_NEWRULE');
  t.is(err!.requestType, 'NFT_MSG_NEWRULE');
  t.is(err!.code, 'ENOENT');
  t.false(err!.applied);
  t.true(err instanceof NetlinkError);
  c.close();
});

test('an error on the last message (the one with the ack) is reported too', async (t) => {
  const { conn: c } = conn([(sent) => answerBatch(sent, [0, 17])]);
  const b = new N.NftBatch().addTable({ family: 'ip', name: 't' }).addSet({ family: 'ip', table: 't', name: 's', type: 'ipv4_addr' });
  const err = await t.throwsAsync(b.commit(c), { instanceOf: N.NftBatchError });
  t.regex(err!.message, /^NFT_MSG_NEWSET: add set ip t s failed: it already exists \(EEXIST\); the whole batch was not applied$/);
});

test('a refused commit (error on BATCH_BEGIN, even with the messages acked) is not reported as success', async (t) => {
  // nfnetlink_rcv_batch: commit fails -> netlink_ack(BEGIN, err), then the queued acks.
  const { conn: c } = conn([
    (sent) => {
      const begin = parseMessages(sent)[0];
      return [errorReply(begin, 12 /* ENOMEM */), ...answerBatch(sent)];
    },
  ]);
  const err = await t.throwsAsync(new N.NftBatch().addTable({ family: 'ip', name: 't' }).commit(c), { instanceOf: N.NftBatchError });
  t.is(err!.index, -1);
  t.regex(err!.message, /^NFNL_MSG_BATCH_BEGIN: .*\(ENOMEM\); the whole batch was not applied$/);
});

test('no nf_tables: EOPNOTSUPP on BATCH_BEGIN says so', async (t) => {
  const { conn: c } = conn([(sent) => [errorReply(parseMessages(sent)[0], 95)]]);
  const err = await t.throwsAsync(new N.NftBatch().addTable({ family: 'ip', name: 't' }).commit(c), { instanceOf: N.NftBatchError });
  t.regex(err!.message, /nf_tables is not available in this kernel \(module nf_tables\)/);
});

test('genId goes into BATCH_BEGIN as NFNL_BATCH_GENID; ERESTART becomes NftGenerationError', async (t) => {
  const { ft, conn: c } = conn([(sent) => [errorReply(parseMessages(sent)[0], N.ERESTART)]]);
  const err = await t.throwsAsync(new N.NftBatch().addTable({ family: 'ip', name: 't' }).commit(c, { genId: 77 }), { instanceOf: N.NftGenerationError });
  t.regex(err!.message, /changed since generation 77/);
  const begin = parseMessages(ft.sent[0])[0];
  t.is(parseAttributes(begin.payload.subarray(4)).u32be(C.NFNL_BATCH_GENID), 77);
});

test('ignoreMissing: ENOENT on a one-message delete is success with missing: true; other errors still throw', async (t) => {
  const ops = M.prepareElementOps({ address: '169.254.255.254', table: 't', set: 's' });
  const { conn: c } = conn([(sent) => answerBatch(sent, [2]), (sent) => answerBatch(sent, [2]), (sent) => answerBatch(sent, [1])]);
  t.deepEqual(await M.runPrepared(c, ops.delete, { ignoreMissing: true }), { applied: false, messages: 1, missing: true });
  const e1 = await t.throwsAsync(M.runPrepared(c, ops.delete), { instanceOf: N.NftBatchError });
  t.regex(e1!.message, /^NFT_MSG_DELSETELEM: delete element 169\.254\.255\.254 from set ip t s failed: .*\(ENOENT\)/);
  const e2 = await t.throwsAsync(M.runPrepared(c, ops.delete, { ignoreMissing: true }), { instanceOf: N.NftBatchError });
  t.regex(e2!.message, /CAP_NET_ADMIN \(run as root\) \(EPERM\)/);
  await t.throwsAsync(N.commitBatch(c, [...ops.delete.ops, ...ops.delete.ops], { ignoreMissing: true }), { instanceOf: UsageError });
});

test('ENOBUFS while waiting for a batch is reported as a refused batch, not success', async (t) => {
  const ft = new FakeTransport([], { keepSeq: true });
  const c = new NetlinkConnection(ft, NETLINK_NETFILTER, { timeoutMs: 500 });
  const p = new N.NftBatch().addTable({ family: 'ip', name: 't' }).commit(c);
  const e = Object.assign(new Error('recvmsg ENOBUFS'), { errno: 105, code: 'ENOBUFS', syscall: 'recvmsg' });
  ft.fail(e);
  const err = await t.throwsAsync(p, { instanceOf: SynplugError });
  t.regex(err!.message, /was refused: .*ENOBUFS.*not applied/);
});

test('an empty batch sends nothing', async (t) => {
  const { ft, conn: c } = conn([]);
  t.deepEqual(await new N.NftBatch().commit(c), { applied: false, messages: 0 });
  t.is(ft.sent.length, 0);
});

test('a large batch gets exactly one answer on success (one ack, whatever its size)', async (t) => {
  let answers = 0;
  const { conn: c } = conn([
    (sent) => {
      const a = answerBatch(sent);
      answers = a.length;
      return a;
    },
  ]);
  const b = new N.NftBatch().addTable({ family: 'ip', name: 't' }).addChain({ family: 'ip', table: 't', name: 'c' });
  for (let i = 0; i < 5000; i++) b.addRule({ family: 'ip', table: 't', chain: 'c', expr: [{ name: 'counter', packets: 0, bytes: 0 }] });
  t.deepEqual(await b.commit(c), { applied: true, messages: 5002 });
  t.is(answers, 1);
});

test('getGenId reads NFTA_GEN_ID from NEWGEN', async (t) => {
  const { ft, conn: c } = conn([
    (sent) => {
      const q = parseMessages(sent)[0];
      const gen = Buffer.concat([N.encodeNfGenMsg(0, 0x1234), Buffer.from('0800010000001234', 'hex')]);
      const reply = Buffer.alloc(16 + gen.length);
      reply.writeUInt32LE(reply.length, 0);
      reply.writeUInt16LE(N.nftType(C.NFT_MSG_NEWGEN), 4);
      reply.writeUInt32LE(q.seq, 8);
      gen.copy(reply, 16);
      return [Buffer.concat([reply, errorReply(q, 0)])];
    },
  ]);
  t.is(await N.getGenId(c), 0x1234);
  t.is(messageTypeName(NETLINK_NETFILTER, parseMessages(ft.sent[0])[0].type), 'NFT_MSG_GETGEN');
});
