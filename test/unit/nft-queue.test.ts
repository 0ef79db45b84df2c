/**
 * The queue rule's expressions against the captures of nft 1.0.6 and
 * iptables-nft 1.8.9 on Linux 6.1 (fixtures/captures 53-57): the native
 * `queue` expression (53), the xt `target` NFQUEUE rev 3 (54 ip, 55 ip6) and
 * iptables-nft's compat revision probe, and how nft listed them (56 text, 57
 * JSON). The probe over a fake transport answering as the kernel does.
 */
import test from 'ava';
import fc from 'fast-check';
import { loadCapture, requests, replies } from '../helpers/captures.js';
import { parseMessages, NETLINK_NETFILTER, NLM_F_ACK, type NetlinkMessage } from '../../src/netlink/message.js';
import { parseAttributes, nested } from '../../src/netlink/attributes.js';
import { NetlinkConnection, FakeTransport } from '../../src/netlink/connection.js';
import { nfnetlinkAck } from '../../src/netlink/testing.js';
import { NetlinkDecodeError, UsageError } from '../../src/netlink/errors.js';
import { bodyDecoder, messageTypeName } from '../../src/netlink/protocols.js';
import * as N from '../../src/iptables/index.js';
import { queueExpr, targetExpr, encodeExpr, type Expr } from '../../src/iptables/expr/index.js';

const C = N.nftConstants;

/** The NEWRULE of a capture's batch. */
function capturedRule(name: string): NetlinkMessage {
  for (const d of requests(loadCapture(name))) {
    const m = parseMessages(d.bytes).find((x) => x.type === N.nftType(C.NFT_MSG_NEWRULE));
    if (m) return m;
  }
  throw new Error(`${name}: no NEWRULE`);
}

/** NFTA_RULE_EXPRESSIONS of a NEWRULE payload, as bytes. */
function expressionsNest(payload: Buffer): Buffer {
  const a = parseAttributes(payload.subarray(4)).get(C.NFTA_RULE_EXPRESSIONS)!;
  return nested(C.NFTA_RULE_EXPRESSIONS, [a.data]);
}

/** A capture's printed `nft list ruleset` rule lines. */
const printedRules = (name: string): string[] =>
  loadCapture(name)
    .printed.split('\n')
    .filter((l) => l.startsWith('\t\t') && !l.startsWith('\t\ttype '))
    .map((l) => l.trim());

test('53: the native queue expression decodes as queue num 7 total 1 flags bypass; our rule with queueRuleExpressions("native", 7) is the captured NEWRULE, byte for byte', (t) => {
  const m = capturedRule('53_nft_queue_rule_add');
  const rule = N.decodeRule(m);
  t.deepEqual(rule.expr.at(-1), { name: 'queue', num: 7, total: 1, flags: C.NFT_QUEUE_FLAG_BYPASS });
  const ours = N.encodeRule({
    family: 'inet',
    table: 'synq',
    chain: 'out',
    expr: [...(rule.expr.slice(0, -1) as Expr[]), ...N.queueRuleExpressions('native', 7)],
  });
  t.is(Buffer.concat(ours).toString('hex'), m.payload.toString('hex'));
  t.is(N.describeExpr(rule.expr.at(-1)!), 'queue num 7 total 1 flags 1');
});

for (const [name, family] of [
  ['54_iptables_nfqueue_add', 'ip'],
  ['55_ip6tables_nfqueue_add', 'ip6'],
] as const) {
  test(`${name.slice(0, 2)}: iptables-nft's NFQUEUE target (rev 3, xt_NFQ_info_v3 {8, 1, bypass}) decodes, and queueRuleExpressions("compat", 8) encodes it byte for byte`, (t) => {
    const m = capturedRule(name);
    const rule = N.decodeRule(m);
    t.is(rule.family, family);
    t.deepEqual(rule.expr.at(-1), { name: 'target', target: 'NFQUEUE', rev: 3, info: '0800010001000000', nfqueue: { num: 8, total: 1, flags: 1 } });
    // the last NFTA_LIST_ELEM of NFTA_RULE_EXPRESSIONS, header included
    const list = expressionsNest(m.payload).subarray(4);
    const last = parseAttributes(list).items.at(-1)!;
    const capturedLast = list.subarray(last.offset, last.offset + 4 + last.data.length);
    const ours = N.queueRuleExpressions('compat', 8);
    t.is(ours.length, 1);
    t.is(encodeExpr(ours[0]).toString('hex'), capturedLast.toString('hex'));
    t.is(N.describeExpr(rule.expr.at(-1)!), 'target name NFQUEUE rev 3');
  });

  test(`${name.slice(0, 2)}: the compat revision probe is the request iptables-nft sent, and the kernel's answer reads as revision 3`, async (t) => {
    const c = loadCapture(name);
    const gets = requests(c)
      .map((d) => parseMessages(d.bytes)[0])
      .filter((x) => x.type === N.NFNL_COMPAT_GET_TYPE);
    t.is(gets.length, 2, 'the tcp match, then the NFQUEUE target');
    const fam = family === 'ip' ? C.NFPROTO_IPV4 : C.NFPROTO_IPV6;
    t.is(Buffer.concat(N.encodeCompatGet('tcp', 0, false, fam)).toString('hex'), gets[0].payload.toString('hex'));
    t.is(Buffer.concat(N.encodeCompatGet('NFQUEUE', 3, true, fam)).toString('hex'), gets[1].payload.toString('hex'));
    t.is(gets[1].flags & NLM_F_ACK, NLM_F_ACK);
    // the kernel's reply and ack to the NFQUEUE question, answered to our request
    const rs = replies(c);
    const answer = rs.filter((d) => parseMessages(d.bytes).some((x) => x.type === N.NFNL_COMPAT_GET_TYPE && N.decodeCompatBody(x).name === 'NFQUEUE'));
    const ack = rs[rs.indexOf(answer[0]) + 1];
    t.deepEqual(N.decodeCompatBody(parseMessages(answer[0].bytes)[0]), { family, name: 'NFQUEUE', rev: 3, type: 'target' });
    const conn = new NetlinkConnection(new FakeTransport([[answer[0].bytes, ack.bytes]]), NETLINK_NETFILTER);
    t.is(await N.compatRevision(conn, 'NFQUEUE', 3), 3);
  });
}

test('56: every queue rule prints as nft 1.0.6 listed it (native: queue flags bypass to 7; compat: queue num 8 bypass)', (t) => {
  const printed = printedRules('56_nft_list_queue');
  const ours: string[] = [];
  for (const d of replies(loadCapture('56_nft_list_queue'))) {
    for (const m of parseMessages(d.bytes)) {
      if (m.type !== N.nftType(C.NFT_MSG_NEWRULE)) continue;
      const text = (N.decodeRuleBody(m) as { statements: string }).statements;
      ours.push(text);
    }
  }
  t.deepEqual(ours, printed);
  t.deepEqual(printed, [
    'ip daddr 169.254.255.254 tcp dport 8080 tcp flags syn / syn,ack queue flags bypass to 7',
    'ip daddr 169.254.255.254 tcp flags syn / fin,syn,rst,ack tcp dport 8081 counter packets 0 bytes 0 queue num 8 bypass',
    'ip6 daddr fd00::1 tcp flags syn / fin,syn,rst,ack tcp dport 8081 counter packets 0 bytes 0 queue num 8 bypass',
  ]);
});

test("57: the verdicts' JSON is nft -j's ({queue: {num: 7, flags: bypass}}, {xt: {type: target, name: NFQUEUE}})", (t) => {
  const c = loadCapture('57_nft_json_queue');
  const theirs = (JSON.parse(c.printed).nftables as Array<{ rule?: { expr: unknown[] } }>).filter((o) => o.rule).map((o) => o.rule!.expr.at(-1));
  const ctx = { family: 'inet', reg: () => undefined, ifname: () => undefined, set: () => undefined };
  const ours: unknown[] = [];
  for (const d of replies(c)) {
    for (const m of parseMessages(d.bytes)) {
      if (m.type !== N.nftType(C.NFT_MSG_NEWRULE)) continue;
      const e = N.decodeRule(m).expr.at(-1)!;
      ours.push(N.exprCodec(e.name)!.statement!(e, ctx)!.stmt.json);
    }
  }
  t.deepEqual(ours, theirs);
});

test('queue statement: ranges, fanout, no flags; a register queue number or an unknown flag prints raw', (t) => {
  const ctx = { family: 'inet', reg: () => undefined, ifname: () => undefined, set: () => undefined };
  const st = (e: Record<string, unknown>) => queueExpr.statement!({ name: 'queue', ...e }, ctx)?.stmt;
  t.deepEqual(st({ num: 3, total: 2, flags: 3 }), {
    text: 'queue flags bypass,fanout to 3-4',
    json: { queue: { num: { range: [3, 4] }, flags: ['bypass', 'fanout'] } },
  });
  t.deepEqual(st({ num: 0, total: 1, flags: 0 }), { text: 'queue to 0', json: { queue: { num: 0 } } });
  t.is(st({ sreg: 1, flags: 1 }), undefined);
  t.is(st({ num: 1, flags: 4 }), undefined);
});

test('target statement: NFQUEUE of every revision as libxtables translates it; a target libxtables does not translate (nft: xt target NAME) prints raw, never as a statement of another meaning', (t) => {
  const ctx = { family: 'ip', reg: () => undefined, ifname: () => undefined, set: () => undefined };
  const text = (target: string, rev: number, info: string) => {
    const e = targetExpr.decode(parseAttributes(Buffer.concat(targetExpr.encode({ name: 'target', target, rev, info }))));
    return targetExpr.statement!(e, ctx)?.stmt.text;
  };
  // host order (x86-64, little-endian): as iptables-nft sends xt_NFQ_info*
  t.is(text('NFQUEUE', 0, '0500000000000000'), 'queue num 5');
  t.is(text('NFQUEUE', 1, '0800020000000000'), 'queue num 8-9');
  t.is(text('NFQUEUE', 2, '0800010001000000'), 'queue num 8 bypass');
  t.is(text('NFQUEUE', 3, '0800020003000000'), 'queue num 8-9 bypass,fanout');
  t.is(text('NFQUEUE', 3, '0800020002000000'), 'queue num 8-9 fanout');
  t.is(text('NFQUEUE', 3, '0000010000000000'), 'queue num 0');
  t.is(text('NFQUEUE', 3, '08'), undefined, 'an info too short for its revision');
  t.is(text('HMARK', 0, '00'.repeat(48)), undefined);
  // nft 1.0.6 lists iptables-nft's `-j TTL --ttl-set 64` as `xt target TTL` (the live xt test): raw, saying so
  t.is(text('TTL', 0, '0040'), '[ raw: target name TTL rev 0 (nft 1.0.6 lists it as "xt target TTL", which nft -f cannot read) ]');
  // and `-j CLASSIFY --set-class 1:2` as `meta priority set 1:2`
  t.is(text('CLASSIFY', 0, '0200010000000000'), 'meta priority set 1:2');
});

test('queueRuleExpressions: bypass always on; a bad queue number or kind is a UsageError', (t) => {
  t.deepEqual(N.queueRuleExpressions('native', 65535), [{ name: 'queue', num: 65535, total: 1, flags: 1 }]);
  t.like(N.queueRuleExpressions('compat', 1)[0], { name: 'target', target: 'NFQUEUE', rev: 3, info: '0100010001000000' });
  for (const bad of [-1, 65536, 1.5, Number.NaN]) {
    t.throws(() => N.queueRuleExpressions('native', bad), { instanceOf: UsageError });
    t.throws(() => N.queueRuleExpressions('compat', bad), { instanceOf: UsageError });
  }
  t.throws(() => N.queueRuleExpressions('none', 1), { instanceOf: UsageError });
});

/** A captured reply datagram, its messages' seq set to `seq`. */
function answering(reply: Buffer, seq: number): Buffer {
  const out = Buffer.from(reply);
  for (const m of parseMessages(out)) out.writeUInt32LE(seq, m.offset + 8);
  return out;
}

/** A fake kernel for the probe: the rolled-back batch (its rule refused with `ruleErrno`), then the compat GET. */
function probeKernel(ruleErrno: number, compat: 'rev3' | 'rev2' | 'missing'): FakeTransport {
  const compatReply = replies(loadCapture('54_iptables_nfqueue_add')).filter((d) =>
    parseMessages(d.bytes).some((x) => x.type === N.NFNL_COMPAT_GET_TYPE && N.decodeCompatBody(x).name === 'NFQUEUE'),
  )[0].bytes;
  return new FakeTransport(
    [
      (sent) => {
        const msgs = parseMessages(sent);
        // BEGIN, table, chain, rule; no END: the kernel aborts, then answers each (ack or error)
        if (msgs.length !== 4 || msgs[0].type !== C.NFNL_MSG_BATCH_BEGIN || msgs.some((m) => m.type === C.NFNL_MSG_BATCH_END)) throw new Error('not the probe');
        return [nfnetlinkAck(msgs[1], 0), nfnetlinkAck(msgs[2], 0), nfnetlinkAck(msgs[3], ruleErrno, { capped: true })];
      },
      (sent) => {
        const q = parseMessages(sent)[0];
        if (compat === 'missing') return [nfnetlinkAck(q, 2, { capped: true })];
        if (compat === 'rev2') return [nfnetlinkAck(q, 93, { capped: true })]; // EPROTONOSUPPORT: NFQUEUE, but not rev 3
        return [answering(compatReply, q.seq), nfnetlinkAck(q, 0)];
      },
    ],
    { keepSeq: true },
  );
}

test('probeQueueExpression: native when the rolled-back rule is acked; else compat (rev 3), else none; the probe batch never ends', async (t) => {
  const nat = probeKernel(0, 'rev3');
  t.is(await N.probeQueueExpression(new NetlinkConnection(nat, NETLINK_NETFILTER)), 'native');
  t.is(nat.sent.length, 1, 'native: no compat question');
  const names = parseMessages(nat.sent[0]).map((m) => messageTypeName(NETLINK_NETFILTER, m.type));
  t.deepEqual(names, ['NFNL_MSG_BATCH_BEGIN', 'NFT_MSG_NEWTABLE', 'NFT_MSG_NEWCHAIN', 'NFT_MSG_NEWRULE']);
  t.is(await N.probeQueueExpression(new NetlinkConnection(probeKernel(2, 'rev3'), NETLINK_NETFILTER)), 'compat');
  t.is(await N.probeQueueExpression(new NetlinkConnection(probeKernel(2, 'rev2'), NETLINK_NETFILTER)), 'none');
  t.is(await N.probeQueueExpression(new NetlinkConnection(probeKernel(2, 'missing'), NETLINK_NETFILTER)), 'none');
});

test('probeQueueExpression: without CAP_NET_ADMIN (nfnetlink answers only the first message, BEGIN, with EPERM) it is an error, not native or none', async (t) => {
  const ft = new FakeTransport([(sent) => [nfnetlinkAck(parseMessages(sent)[0], 1, { capped: true })]], { keepSeq: true });
  const e = await t.throwsAsync(N.probeQueueExpression(new NetlinkConnection(ft, NETLINK_NETFILTER)));
  t.is((e as { code?: string }).code, 'EPERM');
});

test('probeQueueExpression: a kernel without nf_tables (EOPNOTSUPP on the batch, EINVAL for the compat subsystem) has none', async (t) => {
  const ft = new FakeTransport(
    [(sent) => [nfnetlinkAck(parseMessages(sent)[0], 95, { capped: true })], (sent) => [nfnetlinkAck(parseMessages(sent)[0], 22, { capped: true })]],
    { keepSeq: true },
  );
  t.is(await N.probeQueueExpression(new NetlinkConnection(ft, NETLINK_NETFILTER)), 'none');
});

test('NFNL_MSG_COMPAT_GET is named and decoded; the decoders of queue, target and compat never throw anything but NetlinkDecodeError', (t) => {
  t.is(messageTypeName(NETLINK_NETFILTER, N.NFNL_COMPAT_GET_TYPE), 'NFNL_MSG_COMPAT_GET');
  t.truthy(bodyDecoder(NETLINK_NETFILTER, N.NFNL_COMPAT_GET_TYPE));
  const only = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      if (!(e instanceof NetlinkDecodeError)) throw e;
    }
  };
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
      const b = Buffer.from(bytes);
      only(() => queueExpr.decode(parseAttributes(b)));
      only(() => targetExpr.decode(parseAttributes(b)));
      only(() => N.decodeCompatBody({ type: N.NFNL_COMPAT_GET_TYPE, flags: 0, seq: 0, pid: 0, payload: b, offset: 0 }));
    }),
  );
  // and well-formed attributes with random payloads
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.integer({ min: 1, max: 4 }), fc.uint8Array({ maxLength: 12 })), { maxLength: 5 }), (list) => {
      const b = Buffer.concat(
        list.map(([type, data]) => {
          const h = Buffer.alloc(4);
          h.writeUInt16LE(4 + data.length, 0);
          h.writeUInt16LE(type, 2);
          return Buffer.concat([h, Buffer.from(data), Buffer.alloc((4 - (data.length % 4)) % 4)]);
        }),
      );
      only(() => queueExpr.decode(parseAttributes(b)));
      only(() => targetExpr.decode(parseAttributes(b)));
    }),
  );
  t.pass();
});
