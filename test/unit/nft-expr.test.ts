/**
 * nf_tables expressions: one codec per expression through the registry,
 * encode/decode round trips, the kernel's dumped expressions re-encoded to
 * nft's request bytes, and unknown expressions decoded generically.
 */
import test from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseMessages } from '../../src/netlink/message.js';
import { parseAttributes, str, nested, NLA_F_NESTED, bin } from '../../src/netlink/attributes.js';
import { NetlinkDecodeError, UsageError } from '../../src/netlink/errors.js';
import { loadCapture, requests, replies } from '../helpers/captures.js';
import * as N from '../../src/iptables/index.js';

const C = N.nftConstants;
const EXPR_DIR = fileURLToPath(new URL('../../src/iptables/expr/', import.meta.url));

function roundTrip(e: N.Expr): N.Expr {
  const enc = N.encodeExpr(e);
  const attrs = parseAttributes(enc);
  return N.decodeExpr(attrs.items[0]) as N.Expr;
}

test('synproxy: NFTA_SYNPROXY_MSS (u16 BE), _WSCALE (u8), _FLAGS round trip; a u16 out of range is a UsageError', (t) => {
  const e = { name: 'synproxy', mss: 1460, wscale: 7, flags: 0xf } as N.Expr;
  const attrs = parseAttributes(N.encodeExpr(e));
  const data = parseAttributes(attrs.items[0].data).items.find((x) => x.type === C.NFTA_EXPR_DATA);
  const inner = parseAttributes(data!.data);
  t.deepEqual(inner.bin(C.NFTA_SYNPROXY_MSS), Buffer.from([0x05, 0xb4]));
  t.deepEqual(inner.bin(C.NFTA_SYNPROXY_WSCALE), Buffer.from([7]));
  t.deepEqual(roundTrip(e), e);
  t.throws(() => N.encodeExpr({ name: 'synproxy', mss: 70000 } as N.Expr), { instanceOf: UsageError });
});

test('the registry has one codec per expression: one file and one registry line each', (t) => {
  const names = N.registeredExprs().sort();
  t.deepEqual(names, [
    'bitwise',
    'byteorder',
    'cmp',
    'connlimit',
    'counter',
    'ct',
    'dup',
    'dynset',
    'exthdr',
    'fib',
    'fwd',
    'hash',
    'immediate',
    'limit',
    'log',
    'lookup',
    'masq',
    'match',
    'meta',
    'nat',
    'notrack',
    'numgen',
    'objref',
    'osf',
    'payload',
    'queue',
    'quota',
    'range',
    'redir',
    'reject',
    'rt',
    'socket',
    'synproxy',
    'target',
    'tproxy',
  ]);
  const files = readdirSync(EXPR_DIR)
    .filter((f) => f.endsWith('.ts') && f !== 'index.ts' && f !== 'registry.ts')
    .map((f) => f.replace(/\.ts$/, ''))
    .sort();
  t.deepEqual(files, names);
  const index = readFileSync(EXPR_DIR + 'index.ts', 'utf8');
  t.is(index.match(/^registerExpr\(/gm)!.length, names.length);
  // no central switch on expression names in the registry
  t.notRegex(readFileSync(EXPR_DIR + 'registry.ts', 'utf8'), new RegExp(`case '(${names.join('|')})'`));
});

const samples: N.Expr[] = [
  { name: 'meta', key: 'l4proto', dreg: 1 },
  { name: 'meta', key: 'mark', sreg: 1 },
  { name: 'meta', key: 'oifname', dreg: 9 },
  { name: 'payload', base: 'network', offset: 12, len: 4, dreg: 1 },
  { name: 'payload', base: 'transport', offset: 13, len: 1, dreg: 1 },
  { name: 'payload', base: 'link', offset: 0, len: 6, dreg: 2 },
  { name: 'payload', base: 'transport', offset: 2, len: 2, sreg: 1, csumType: 1, csumOffset: 16, csumFlags: 1 },
  { name: 'cmp', sreg: 1, op: 'eq', data: 'a9fefffe' },
  { name: 'cmp', sreg: 1, op: 'gte', data: '1f90' },
  { name: 'bitwise', sreg: 1, dreg: 1, op: 'mask_xor', len: 1, mask: '12', xor: '00' },
  { name: 'bitwise', sreg: 1, dreg: 2, op: 'lshift', len: 4, data: '00000008' },
  { name: 'immediate', dreg: 1, data: '01000000' },
  { name: 'immediate', dreg: 0, verdict: { code: 'accept' } },
  { name: 'immediate', dreg: 0, verdict: { code: 'jump', chain: 'other' } },
  { name: 'immediate', dreg: 0, verdict: { code: 'return' } },
  { name: 'counter', packets: 0, bytes: 0 },
  { name: 'counter', packets: 7, bytes: 4096 },
  { name: 'lookup', set: 'synplug_active', sreg: 1 },
  { name: 'lookup', set: 's', sreg: 1, setId: 1, invert: true },
  { name: 'ct', key: 'state', dreg: 1 },
  { name: 'ct', key: 'mark', sreg: 1 },
  { name: 'ct', key: 'src', dreg: 2, direction: 1 },
  { name: 'limit', rate: 10, unit: 1, burst: 5, type: 'packets' },
  { name: 'limit', rate: 10240, unit: 60, burst: 0, type: 'bytes', inv: true },
  { name: 'log' },
  { name: 'log', prefix: 'x ', level: 7, flags: 0x2f },
  { name: 'log', group: 2, snaplen: 100, qthreshold: 5, prefix: 'g' },
  { name: 'quota', bytes: 10485760, used: 1048576, inv: true },
  { name: 'quota', bytes: 500, used: 0 },
  { name: 'reject', type: 'icmp', code: 3 },
  { name: 'reject', type: 'tcp reset' },
  { name: 'reject', type: 'icmpx', code: 1 },
  { name: 'nat', type: 'dnat', family: 'ip', regAddrMin: 1, regAddrMax: 2, regProtoMin: 3, regProtoMax: 4, flags: 3 },
  { name: 'nat', type: 'snat', family: 'ip6', regAddrMin: 1, flags: 1 },
  { name: 'masq' },
  { name: 'masq', flags: 0xc, regProtoMin: 1, regProtoMax: 2 },
  { name: 'redir', regProtoMin: 1, regProtoMax: 1, flags: 2 },
  { name: 'fib', dreg: 1, result: 'type', flags: 2 },
  { name: 'fib', dreg: 1, result: 'oif', flags: 1 | 8 },
  { name: 'objref', type: 1, object: 'cnt1' },
  { name: 'objref', sreg: 1, set: 'cm', setId: 3 },
  { name: 'range', sreg: 1, op: 'eq', from: '03e8', to: '07d0' },
  { name: 'byteorder', sreg: 1, dreg: 1, op: 'hton', len: 4, size: 4 },
  { name: 'connlimit', count: 5 },
  { name: 'connlimit', count: 7, inv: true },
  { name: 'numgen', dreg: 1, modulus: 2, type: 0, offset: 0 },
  { name: 'numgen', dreg: 1, modulus: 4, type: 1 },
  { name: 'hash', sreg: 2, dreg: 1, len: 4, modulus: 4, seed: 1, offset: 10, type: 0 },
  { name: 'hash', dreg: 1, modulus: 2, type: 1 },
  { name: 'exthdr', dreg: 1, type: 2, offset: 2, len: 2, flags: 0, op: 1 },
  { name: 'exthdr', dreg: 1, type: 44, offset: 0, len: 1, flags: 1, op: 0 },
  { name: 'tproxy', family: 2, regAddr: 1, regPort: 2 },
  { name: 'tproxy', family: 0, regPort: 1 },
  { name: 'dynset', set: 'dyn', op: 1, sregKey: 1, timeoutMs: 30000, flags: 0 },
  { name: 'dynset', set: 'm', setId: 2, op: 0, sregKey: 1, sregData: 2, expr: '0c000100636f756e74657200' },
  { name: 'notrack' },
  { name: 'socket', key: 0, dreg: 1 },
  { name: 'socket', key: 3, dreg: 1, level: 2 },
  { name: 'rt', dreg: 1, key: 3 },
];

for (const e of samples) {
  test(`round trip: ${N.describeExpr(e)}`, (t) => {
    t.deepEqual(roundTrip(e), e);
  });
}

test('table-driven codecs: a required attribute missing is a NetlinkDecodeError, a field out of range a UsageError', (t) => {
  const bad = nested(C.NFTA_LIST_ELEM, [str(C.NFTA_EXPR_NAME, 'numgen'), nested(C.NFTA_EXPR_DATA, [bin(C.NFTA_NG_DREG, Buffer.from('00000001', 'hex'))])]);
  t.throws(() => N.decodeExpr(parseAttributes(bad).items[0]), { instanceOf: NetlinkDecodeError });
  t.throws(() => N.encodeExpr({ name: 'exthdr', type: 300 } as unknown as N.Expr), { instanceOf: UsageError });
  t.throws(() => N.encodeExpr({ name: 'numgen', dreg: -1, modulus: 2, type: 0 } as unknown as N.Expr), { instanceOf: UsageError });
});

test('nests carry NLA_F_NESTED in requests, as nft sends them', (t) => {
  const enc = N.encodeExpr({ name: 'cmp', sreg: 1, op: 'eq', data: '06' } as N.Expr);
  t.is(enc.readUInt16LE(2), C.NFTA_LIST_ELEM | NLA_F_NESTED);
  const inner = parseAttributes(enc.subarray(4));
  t.true(inner.get(C.NFTA_EXPR_DATA)!.isNested);
  t.true(parseAttributes(inner.get(C.NFTA_EXPR_DATA)!.data).get(C.NFTA_CMP_DATA)!.isNested);
});

test('the rule the kernel dumped in step 14, re-encoded, is the NEWRULE nft sent in step 09', (t) => {
  const dumpedRule = replies(loadCapture('14_nft_list'))
    .flatMap((d) => parseMessages(d.bytes))
    .find((m) => m.type === N.nftType(C.NFT_MSG_NEWRULE))!;
  const r = N.decodeRule(dumpedRule);
  const sentRule = parseMessages(requests(loadCapture('09_nft_setup')).at(-1)!.bytes).find((m) => m.type === N.nftType(C.NFT_MSG_NEWRULE))!;
  const ours = Buffer.concat(N.encodeRule({ family: r.family, table: r.table, chain: r.chain, expr: r.expr }));
  t.is(ours.toString('hex'), sentRule.payload.toString('hex'));
});

test('an unknown expression decodes as a generic entry with its raw attributes in hex, and re-encodes to the same bytes', (t) => {
  const raw = N.encodeExpr({
    name: 'xyzzy',
    generic: true,
    attributes: [
      { type: 1, data: '00000001' },
      { type: 2, data: '0800010000000002', nested: true },
    ],
  } as N.GenericExpr);
  const e = N.decodeExpr(parseAttributes(raw).items[0]) as N.GenericExpr;
  t.deepEqual(e, {
    name: 'xyzzy',
    generic: true,
    attributes: [
      { type: 1, data: '00000001' },
      { type: 2, data: '0800010000000002', nested: true },
    ],
  });
  t.deepEqual(N.encodeExpr(e), raw);
  // iptables-nft's xt target expression for a target other than NFQUEUE (MARK rev 2, no info), built by hand: decoded by the target codec, no error
  const xt = nested(C.NFTA_LIST_ELEM, [str(C.NFTA_EXPR_NAME, 'target'), nested(C.NFTA_EXPR_DATA, [str(1, 'MARK'), bin(2, Buffer.from('00000002', 'hex'))])]);
  const g = N.decodeExpr(parseAttributes(xt).items[0]) as N.TargetExpr;
  t.is(g.name, 'target');
  t.is(g.target, 'MARK');
  t.is(g.rev, 2);
  t.is(g.nfqueue, undefined);
});

test('bad bytes in a known expression are a NetlinkDecodeError with an offset', (t) => {
  const bad = nested(C.NFTA_LIST_ELEM, [str(C.NFTA_EXPR_NAME, 'payload'), nested(C.NFTA_EXPR_DATA, [bin(C.NFTA_PAYLOAD_BASE, Buffer.from([1]))])]);
  const err = t.throws(() => N.decodeExpr(parseAttributes(bad).items[0]), { instanceOf: NetlinkDecodeError });
  t.is(typeof err!.offset, 'number');
  const noName = nested(C.NFTA_LIST_ELEM, [nested(C.NFTA_EXPR_DATA, [])]);
  t.throws(() => N.decodeExpr(parseAttributes(noName).items[0]), { instanceOf: NetlinkDecodeError });
});

test('encoding refuses bad fields with UsageError', (t) => {
  t.throws(() => N.encodeExpr({ name: 'meta', key: 'mark' } as N.Expr), { instanceOf: UsageError });
  t.throws(() => N.encodeExpr({ name: 'meta', key: 'nosuchkey', dreg: 1 } as N.Expr), { instanceOf: UsageError });
  t.throws(() => N.encodeExpr({ name: 'cmp', sreg: 1, op: 'eq', data: 'abc' } as N.Expr), { instanceOf: UsageError });
  t.throws(() => N.encodeExpr({ name: 'cmp', sreg: 1, op: 'like', data: '00' } as N.Expr), { instanceOf: UsageError });
  t.throws(() => N.encodeExpr({ name: 'cmp', sreg: 1, op: 'eq', data: '00'.repeat(65) } as N.Expr), { instanceOf: UsageError });
  t.throws(() => N.encodeExpr({ name: 'immediate', dreg: 0, verdict: { code: 'jump' } } as N.Expr), { instanceOf: UsageError });
  t.throws(() => N.encodeExpr({ name: 'payload', base: 'nowhere', offset: 0, len: 1, dreg: 1 } as N.Expr), { instanceOf: UsageError });
  t.throws(() => N.encodeExpr({ name: 'counter', packets: -1, bytes: 0 } as N.Expr), { instanceOf: UsageError });
  t.throws(() => N.encodeExpr({ name: 'nosuch' } as N.Expr), { instanceOf: UsageError });
});
