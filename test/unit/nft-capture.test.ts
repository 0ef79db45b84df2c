/**
 * nftables against the reference captures (nft 1.0.6 on Linux 6.1):
 * our batch for fixtures/captures/09_nft_setup/rules.nft against the bytes
 * nft sent, and the dump of step 14 against what `nft list ruleset` printed.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadCapture, requests, replies, captureNames } from '../helpers/captures.js';
import { parseMessages, NLM_F_REQUEST, NLM_F_ACK, NETLINK_NETFILTER, type NetlinkMessage } from '../../src/netlink/message.js';
import { parseAttributes } from '../../src/netlink/attributes.js';
import { NetlinkConnection, FakeTransport } from '../../src/netlink/connection.js';
import { bodyDecoder, messageTypeName } from '../../src/netlink/protocols.js';
import * as N from '../../src/iptables/index.js';
import * as M from '../../src/guard/modes/local-nft.js';
import { errorReply } from '../helpers/nft-fake.js';
import { TABLE_COMMENT } from '../../src/guard/teardown-marks.js';

const C = N.nftConstants;

/** The captured batch datagram of a capture (the last request, starting with NFNL_MSG_BATCH_BEGIN). */
function capturedBatch(name: string): NetlinkMessage[] {
  const d = requests(loadCapture(name)).at(-1)!;
  const msgs = parseMessages(d.bytes);
  if (msgs[0].type !== C.NFNL_MSG_BATCH_BEGIN) throw new Error(`${name}: last request is not a batch`);
  return msgs;
}

/**
 * The one documented difference from nft 1.0.6's batch: our NEWTABLE carries
 * synplug's table comment (NFTA_TABLE_USERDATA = 6, one libnftnl TLV: type
 * NFTNL_UDATA_TABLE_COMMENT = 0, length, the text with its NUL), as nft sends
 * `table ip t { comment "..." }`. The captured payload with that attribute appended.
 */
function withTableComment(captured: Buffer): Buffer {
  const tlv = Buffer.concat([Buffer.from([0, TABLE_COMMENT.length + 1]), Buffer.from(TABLE_COMMENT, 'latin1'), Buffer.from([0])]);
  const header = Buffer.alloc(4);
  header.writeUInt16LE(4 + tlv.length, 0);
  header.writeUInt16LE(6, 2);
  const pad = Buffer.alloc((4 - (tlv.length % 4)) % 4);
  return Buffer.concat([captured, header, tlv, pad]);
}

/** The payload nft 1.0.6 sent for message `i` of a batch, with our documented difference. */
const expectedPayload = (cap: NetlinkMessage): Buffer => (cap.type === N.nftType(C.NFT_MSG_NEWTABLE) ? withTableComment(cap.payload) : cap.payload);

const payloadOf = (m: { payload?: Buffer | readonly Buffer[] }): Buffer =>
  m.payload === undefined ? Buffer.alloc(0) : Buffer.isBuffer(m.payload) ? m.payload : Buffer.concat(m.payload as Buffer[]);

test('09: rules.nft is the rule our builder makes (table synplug_fixture, family ip)', (t) => {
  // The capture's source, read as text: the same address, mark, chain spec.
  const src = readFileSync(join(loadCapture('09_nft_setup').dir, 'rules.nft'), 'utf8');
  t.regex(src, /table ip synplug_fixture/);
  t.regex(src, /type route hook output priority mangle; policy accept;/);
  t.regex(src, /ip saddr 169\.254\.255\.254 tcp flags & \(syn\|ack\) == syn meta mark set 0x1/);
});

test('09: our ensure batch from an empty ruleset has the payloads nft 1.0.6 sent, message for message', (t) => {
  const cap = capturedBatch('09_nft_setup');
  const r = M.resolveMarkRule({ address: '169.254.255.254', mark: 0x1, table: 'synplug_fixture' });
  const ours = M.planMarkRule({ chains: [], rules: [], sets: [] }, r).messages();
  t.is(ours.length, cap.length);
  t.deepEqual(
    ours.map((m) => messageTypeName(NETLINK_NETFILTER, m.type)),
    ['NFNL_MSG_BATCH_BEGIN', 'NFT_MSG_NEWTABLE', 'NFT_MSG_NEWCHAIN', 'NFT_MSG_NEWRULE', 'NFNL_MSG_BATCH_END'],
  );
  for (let i = 0; i < cap.length; i++) {
    t.is(ours[i].type, cap[i].type, `message ${i} type`);
    t.is(payloadOf(ours[i]).toString('hex'), expectedPayload(cap[i]).toString('hex'), `message ${i} payload`);
    // Flags: the connection adds NLM_F_REQUEST to every message. Legitimately different:
    // we ask NLM_F_ACK on the last message (nft 1.0.6 asks none and polls for errors
    // without blocking; we want a positive answer that the batch was committed).
    const expected = cap[i].flags | (i === cap.length - 2 ? NLM_F_ACK : 0);
    t.is((ours[i].flags ?? 0) | NLM_F_REQUEST, expected, `message ${i} flags`);
  }
});

/** Rewrite a captured reply so that it answers `req`. */
function answering(reply: Buffer, req: NetlinkMessage): Buffer {
  const out = Buffer.from(reply);
  for (const m of parseMessages(out)) out.writeUInt32LE(req.seq, m.offset + 8);
  return out;
}

test('09: ensureMarkRule over a fake transport sends that same batch, with only the documented differences', async (t) => {
  const c = loadCapture('09_nft_setup');
  const newgen = replies(c)[0].bytes; // the kernel's NEWGEN answer in the capture
  t.is(parseMessages(newgen)[0].type, N.nftType(C.NFT_MSG_NEWGEN));
  const genId = N.decodeGen(parseMessages(newgen)[0]).id;
  const ft = new FakeTransport(
    [
      (sent) => {
        const q = parseMessages(sent)[0];
        return [Buffer.concat([answering(newgen, q), errorReply(q, 0)])];
      }, // GETGEN
      (sent) => [errorReply(parseMessages(sent)[0], 2, { capped: true })], // GETTABLE ip synplug_fixture: ENOENT (absent)
      (sent) => {
        const m = parseMessages(sent);
        return [errorReply(m[m.length - 2], 0)];
      }, // the batch: ack of the last message
    ],
    { keepSeq: true },
  );
  const conn = new NetlinkConnection(ft, NETLINK_NETFILTER, { timeoutMs: 1000 });
  const res = await M.ensureMarkRule(conn, { address: '169.254.255.254', table: 'synplug_fixture' });
  conn.close();
  t.true(res.changed);
  t.is(ft.sent.length, 3);
  const ours = parseMessages(ft.sent[2]);
  const cap = capturedBatch('09_nft_setup');
  t.is(ours.length, cap.length);
  for (let i = 0; i < cap.length; i++) {
    t.is(ours[i].type, cap[i].type);
    if (i === 0) {
      // Legitimately different: our BATCH_BEGIN carries NFNL_BATCH_GENID (the generation we
      // planned from, so that a concurrent change makes the kernel refuse with ERESTART).
      t.is(ours[0].payload.subarray(0, 4).toString('hex'), cap[0].payload.toString('hex'));
      const attrs = parseAttributes(ours[0].payload.subarray(4));
      t.is(attrs.u32be(C.NFNL_BATCH_GENID), genId);
      continue;
    }
    t.is(ours[i].payload.toString('hex'), expectedPayload(cap[i]).toString('hex'), `message ${i}`);
    t.is(ours[i].flags, cap[i].flags | (i === cap.length - 2 ? NLM_F_ACK : 0));
  }
  // seqs are consecutive, like nft's (their values differ: ignored)
  for (let i = 1; i < ours.length; i++) t.is(ours[i].seq, ours[0].seq + i);
});

test('19: deleting the table is the batch nft 1.0.6 sent for `nft delete table ip synplug_fixture`', (t) => {
  const cap = capturedBatch('19_nft_delete');
  const ours = new N.NftBatch().deleteTable({ family: 'ip', name: 'synplug_fixture' }).messages();
  t.is(ours.length, cap.length);
  for (let i = 0; i < cap.length; i++) {
    t.is(ours[i].type, cap[i].type);
    t.is(payloadOf(ours[i]).toString('hex'), cap[i].payload.toString('hex'));
  }
  t.is(messageTypeName(NETLINK_NETFILTER, cap[1].type), 'NFT_MSG_DELTABLE');
});

function dumped(name: string): N.NftRuleset {
  const rs: N.NftRuleset = { tables: [], chains: [], sets: [], rules: [] };
  for (const d of replies(loadCapture(name))) {
    for (const m of parseMessages(d.bytes)) {
      if (m.type === N.nftType(C.NFT_MSG_NEWTABLE)) rs.tables.push(N.decodeTable(m));
      if (m.type === N.nftType(C.NFT_MSG_NEWCHAIN)) rs.chains.push(N.decodeChain(m));
      if (m.type === N.nftType(C.NFT_MSG_NEWRULE)) rs.rules.push(N.decodeRule(m));
      if (m.type === N.nftType(C.NFT_MSG_NEWSET)) rs.sets.push(N.decodeSet(m));
    }
  }
  return rs;
}

test('14: the dump decodes to the table, chain and rule `nft list ruleset` printed', (t) => {
  const c = loadCapture('14_nft_list');
  const printed = c.printed;
  const rs = dumped('14_nft_list');
  // table ip synplug_fixture {
  const tm = /^table (\S+) (\S+) \{$/m.exec(printed)!;
  t.is(rs.tables.length, 1);
  t.is(rs.tables[0].family, tm[1]);
  t.is(rs.tables[0].name, tm[2]);
  // chain output { type route hook output priority mangle; policy accept;
  const cm = /chain (\S+) \{\n\t\ttype (\S+) hook (\S+) priority (\S+); policy (\S+);/.exec(printed)!;
  t.is(rs.chains.length, 1);
  const ch = rs.chains[0];
  t.is(ch.name, cm[1]);
  t.is(ch.type, cm[2]);
  t.is(ch.hook, cm[3]);
  t.is(N.priorityText(ch.family, ch.hook, ch.prio!), cm[4]);
  t.is(ch.prio, -150); // NF_IP_PRI_MANGLE in linux/netfilter_ipv4.h, which nft names "mangle"
  t.is(ch.policy, cm[5]);
  t.is(ch.flags! & C.NFT_CHAIN_BASE, C.NFT_CHAIN_BASE);
  // the rule line
  const ruleLine = printed.split('\n')[3].trim();
  t.is(rs.rules.length, 1);
  t.is(N.ruleText(rs.rules[0]), ruleLine);
  // its expressions: ip saddr 169.254.255.254 -> payload nh+12/4 == a9fefffe; tcp flags syn / syn,ack ->
  // th+13/1 & 0x12 == 0x02; meta mark set 0x00000001 -> immediate 1 (host order) + meta set mark
  const e = rs.rules[0].expr;
  t.deepEqual(
    e.map((x) => x.name),
    ['payload', 'cmp', 'meta', 'cmp', 'payload', 'bitwise', 'cmp', 'immediate', 'meta'],
  );
  t.like(e[0], { base: 'network', offset: 12, len: 4, dreg: 1 });
  t.like(e[1], { op: 'eq', data: Buffer.from([169, 254, 255, 254]).toString('hex') });
  t.like(e[2], { key: 'l4proto', dreg: 1 });
  t.like(e[4], { base: 'transport', offset: 13, len: 1 });
  t.like(e[5], { mask: '12', xor: '00', len: 1 });
  t.like(e[6], { op: 'eq', data: '02' });
  t.is(Buffer.from((e[7] as N.ImmediateExpr).data!, 'hex').readUInt32LE(0), 1);
  t.like(e[8], { key: 'mark', sreg: 1 });
  // The kernel dumped the same expressions our builder encodes for that rule.
  t.true(M.ruleMatches(rs.rules[0], M.resolveMarkRule({ address: '169.254.255.254', table: 'synplug_fixture' })));
});

test('14: the whole text is what nft 1.0.6 printed', (t) => {
  const c = loadCapture('14_nft_list');
  t.is(N.formatRulesetText(dumped('14_nft_list')), c.printed);
});

test('14: NEWGEN replies carry the generation id, whose low 16 bits the kernel also puts in res_id', (t) => {
  for (const name of ['09_nft_setup', '14_nft_list', '19_nft_delete']) {
    for (const d of replies(loadCapture(name))) {
      for (const m of parseMessages(d.bytes)) {
        if (m.type !== N.nftType(C.NFT_MSG_NEWGEN)) continue;
        const g = N.decodeGen(m);
        t.is(g.id & 0xffff, N.decodeNfGenMsg(m).resId);
        t.is(g.procName, 'nft');
      }
    }
  }
});

test('every captured NETLINK_NETFILTER message has a name and its body decodes', (t) => {
  let n = 0;
  for (const name of captureNames()) {
    for (const d of loadCapture(name).datagrams) {
      if (d.protocol !== NETLINK_NETFILTER) continue;
      for (const m of parseMessages(d.bytes)) {
        t.notRegex(messageTypeName(NETLINK_NETFILTER, m.type), /^0x/);
        const dec = bodyDecoder(NETLINK_NETFILTER, m.type);
        if (m.type < 0x10) continue; // NLMSG_ERROR / DONE: the core's
        t.truthy(dec, `decoder for ${messageTypeName(NETLINK_NETFILTER, m.type)}`);
        const body = dec!(m);
        t.is(typeof body.family, 'string');
        JSON.stringify(body);
        n++;
      }
    }
  }
  t.true(n > 20);
});

test('body decoders: batch markers, the captured NEWRULE request with its nft statements, a dump request', (t) => {
  const cap = capturedBatch('09_nft_setup');
  t.deepEqual(bodyDecoder(NETLINK_NETFILTER, cap[0].type)!(cap[0]), { family: 'unspec', res_id: C.NFNL_SUBSYS_NFTABLES });
  const rule = bodyDecoder(NETLINK_NETFILTER, cap[3].type)!(cap[3]);
  t.like(rule, { family: 'ip', table: 'synplug_fixture', chain: 'output' });
  // nft 1.0.6's own wording of that rule, as printed in step 14
  t.is(rule.statements, loadCapture('14_nft_list').printed.split('\n')[3].trim());
  const getRule = requests(loadCapture('14_nft_list'))
    .map((d) => parseMessages(d.bytes)[0])
    .find((m) => m.type === N.nftType(C.NFT_MSG_GETRULE))!;
  t.deepEqual(bodyDecoder(NETLINK_NETFILTER, getRule.type)!(getRule), { family: 'ip' });
});
