/**
 * Statements of the expressions and keys added for issue #21 (no kernel):
 * each kernel dump (`nft --debug=netlink list ruleset`, quoted) prints as
 * nft 1.0.6 lists it, text and JSON (`nft list ruleset`, `nft -j list
 * ruleset` of the same rule). The live corpus (test/live/nft-ruleset-corpus.ts)
 * checks the same against nft itself.
 */
import test from 'ava';
import * as N from '../../src/iptables/index.js';

const imm = (dreg: number, data: string): N.Expr => ({ name: 'immediate', dreg, data });
const cmp = (data: string, op = 'eq'): N.Expr => ({ name: 'cmp', sreg: 1, op, data });
const accept: N.Expr = { name: 'immediate', dreg: 0, verdict: { code: 'accept' } };

const CASES: Array<{ family: string; expr: N.Expr[]; text: string; json: unknown[]; cgroups?: Record<string, string> }> = [
  // [ meta load iifkind => reg 1 ] [ cmp eq reg 1 0x68746576 0x00000000 0x00000000 0x00000000 ]
  {
    family: 'inet',
    expr: [{ name: 'meta', key: 'iifkind', dreg: 1 }, cmp('76657468000000000000000000000000'), accept],
    text: 'meta iifkind "veth" accept',
    json: [{ match: { op: '==', left: { meta: { key: 'iifkind' } }, right: 'veth' } }, { accept: null }],
  },
  // [ ct load unknown => reg 1 ] [ cmp eq reg 1 0x05000000 ]   (libnftnl 1.2.4 has no name for NFT_CT_ID)
  {
    family: 'ip',
    expr: [{ name: 'ct', key: 'id', dreg: 1 }, cmp('00000005'), accept],
    text: 'ct id 5 accept',
    json: [{ match: { op: '==', left: { ct: { key: 'id' } }, right: 5 } }, { accept: null }],
  },
  // [ immediate reg 1 0x00000003 ] [ ct set event with reg 1 ]
  {
    family: 'ip',
    expr: [imm(1, '03000000'), { name: 'ct', key: 'event', sreg: 1 }],
    text: 'ct event set new,related',
    json: [{ mangle: { key: { ct: { key: 'event' } }, value: ['new', 'related'] } }],
  },
  // [ meta load l4proto => reg 1 ] [ cmp eq reg 1 0x00000021 ] [ payload load 1b @ transport header + 8 => reg 1 ]
  // [ bitwise reg 1 = ( reg 1 & 0x0000001e ) ^ 0x00000000 ] [ cmp eq reg 1 0x00000000 ]
  {
    family: 'ip',
    expr: [
      { name: 'meta', key: 'l4proto', dreg: 1 },
      cmp('21'),
      { name: 'payload', base: 'transport', offset: 8, len: 1, dreg: 1 },
      { name: 'bitwise', sreg: 1, dreg: 1, len: 1, mask: '1e', xor: '00' },
      cmp('00'),
      accept,
    ],
    text: 'dccp type request accept',
    json: [{ match: { op: '==', left: { payload: { protocol: 'dccp', field: 'type' } }, right: 'request' } }, { accept: null }],
  },
  // [ exthdr load 1b @ 0 + 0 present => reg 1 ] [ cmp eq reg 1 0x00000001 ]
  {
    family: 'ip',
    expr: [{ name: 'exthdr', dreg: 1, type: 0, offset: 0, len: 1, flags: 1, op: 3 }, cmp('01'), accept],
    text: 'sctp chunk data exists accept',
    json: [{ match: { op: '==', left: { 'sctp chunk': { name: 'data' } }, right: true } }, { accept: null }],
  },
  // [ exthdr load 2b @ 1 + 14 => reg 1 ] [ cmp eq reg 1 0x00000500 ]
  {
    family: 'ip',
    expr: [{ name: 'exthdr', dreg: 1, type: 1, offset: 14, len: 2, op: 3 }, cmp('0005')],
    text: 'sctp chunk init num-inbound-streams 5',
    json: [{ match: { op: '==', left: { 'sctp chunk': { name: 'init', field: 'num-inbound-streams' } }, right: 5 } }],
  },
  // [ osf dreg 1 ] (ttl 2, flags NFT_OSF_F_VERSION) [ cmp eq reg 1 0x756e694c 0x2e333a78 0x00000030 0x00000000 ]
  {
    family: 'ip',
    expr: [{ name: 'osf', dreg: 1, ttl: 2, flags: 1 }, cmp('4c696e75783a332e3000000000000000')],
    text: 'osf ttl skip version "Linux:3.0"',
    json: [{ match: { op: '==', left: { osf: { key: 'version', ttl: 'skip' } }, right: 'Linux:3.0' } }],
  },
  // [ immediate reg 1 0x0200007f ] [ immediate reg 2 0x00000001 ] [ dup sreg_addr 1 sreg_dev 2 ]
  {
    family: 'ip',
    expr: [imm(1, '7f000002'), imm(2, '01000000'), { name: 'dup', sregAddr: 1, sregDev: 2 }],
    text: 'dup to 127.0.0.2 device "lo"',
    json: [{ dup: { addr: '127.0.0.2', dev: 'lo' } }],
  },
  // netdev: [ immediate reg 1 0x00000001 ] [ dup sreg_dev 1 ]
  { family: 'netdev', expr: [imm(1, '01000000'), { name: 'dup', sregDev: 1 }], text: 'dup to "lo"', json: [{ dup: { addr: 'lo' } }] },
  // [ immediate reg 1 0x00000001 ] [ immediate reg 2 0x0200007f ] [ fwd sreg_dev 1 sreg_addr 2 nfproto 2 ]
  {
    family: 'netdev',
    expr: [imm(1, '01000000'), imm(2, '7f000002'), { name: 'fwd', sregDev: 1, sregAddr: 2, nfproto: 2 }],
    text: 'fwd ip to 127.0.0.2 device "lo"',
    json: [{ fwd: { dev: 'lo', family: 'ip', addr: '127.0.0.2' } }],
  },
  // [ socket load cgroupv2 => reg 1 ] (level 1) [ cmp eq reg 1 0x00001234 0x00000000 ], the id's path known
  {
    family: 'inet',
    expr: [{ name: 'socket', key: 3, dreg: 1, level: 1 }, cmp('3412000000000000'), accept],
    cgroups: { '4660': 'system.slice' },
    text: 'socket cgroupv2 level 1 "system.slice" accept',
    json: [{ match: { op: '==', left: { socket: { key: 'cgroupv2' } }, right: 'system.slice' } }, { accept: null }],
  },
];

for (const { family, expr, text, json, cgroups } of CASES) {
  test(`${family}: ${text}`, (t) => {
    const st = N.ruleStatements(expr, { family, ifnames: { 1: 'lo' }, ...(cgroups && { cgroups }) });
    t.is(st.map((s) => s.text).join(' '), text);
    t.deepEqual(
      st.map((s) => s.json),
      json,
    );
  });
}

test('a cgroup id without a path prints raw: nft lists its number, which nft -f cannot read', (t) => {
  const st = N.ruleStatements([{ name: 'socket', key: 3, dreg: 1, level: 1 }, cmp('0100000000000000')], { family: 'inet' });
  t.is(st.map((s) => s.text).join(' '), '[ raw: socket load cgroupv2 => reg 1 level 1 ] [ raw: cmp eq reg 1 0x0100000000000000 ]');
});

test('dup outside ip, ip6 and netdev, and a dup or fwd of a register that is not a constant, print raw', (t) => {
  const raw = (family: string, expr: N.Expr[]): boolean =>
    N.ruleStatements(expr, { family }).some((s) => s.text.startsWith('[ raw: dup') || s.text.startsWith('[ raw: fwd'));
  t.true(raw('inet', [imm(1, '7f000002'), { name: 'dup', sregAddr: 1 }]));
  t.true(
    raw('ip', [
      { name: 'meta', key: 'mark', dreg: 1 },
      { name: 'dup', sregAddr: 1 },
    ]),
  );
  t.true(raw('ip', [imm(1, '01000000'), { name: 'fwd', sregDev: 1 }]));
  t.true(raw('netdev', [imm(1, '01000000'), imm(2, '7f000002'), { name: 'fwd', sregDev: 1, sregAddr: 2, nfproto: 7 }]));
});

test('cgroup ids in an anonymous set print as their paths; a set with an id without a path prints raw, never as numbers', (t) => {
  const id = (n: number): string => Buffer.from(BigInt(n).toString(16).padStart(16, '0'), 'hex').reverse().toString('hex');
  const set = {
    family: 'inet',
    table: 't',
    name: '__set0',
    flags: ['anonymous', 'constant'],
    keyType: 46,
    keyLen: 8,
    elements: [{ key: id(7) }, { key: id(9) }],
  } as unknown as N.NftSet;
  const text = (cgroups: Record<string, string>): string =>
    N.ruleStatements([{ name: 'socket', key: 3, dreg: 1, level: 2 }, { name: 'lookup', sreg: 1, set: '__set0' } as N.Expr, accept], {
      family: 'inet',
      sets: [set],
      cgroups,
    })
      .map((s) => s.text)
      .join(' ');
  t.is(text({ 7: 'a/b', 9: 'c' }), 'socket cgroupv2 level 2 { "a/b", "c" } accept');
  t.is(text({ 7: 'a/b' }), '[ raw: socket load cgroupv2 => reg 1 level 2 ] [ raw: lookup reg 1 set __set0 ] accept');
  t.is(text({}), '[ raw: socket load cgroupv2 => reg 1 level 2 ] [ raw: lookup reg 1 set __set0 ] accept');
});
