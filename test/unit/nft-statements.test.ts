/**
 * Statements printed from expressions (no kernel): register binding (a
 * comparison belongs to the load that last wrote its register), raw entries
 * for what is not understood, and properties: mutated or random expression
 * attributes only ever throw NetlinkDecodeError, and printing never throws.
 *
 * Expected texts are nft 1.0.6's own output for the same kernel expressions
 * (`nft --debug=netlink list ruleset` shows the expressions, `nft list` / `nft -j list` the statements).
 */
import test from 'ava';
import fc from 'fast-check';
import { parseAttributes, str, nested, bin, NLA_F_NESTED } from '../../src/netlink/attributes.js';
import { NetlinkDecodeError } from '../../src/netlink/errors.js';
import * as N from '../../src/iptables/index.js';

const C = N.nftConstants;

// `tcp dport 22 ct state new accept` as the kernel dumps it (inet family):
//   [ meta load l4proto => reg 1 ] [ cmp eq reg 1 0x00000006 ]
//   [ payload load 2b @ transport header + 2 => reg 1 ] [ cmp eq reg 1 0x00001600 ]
//   [ ct load state => reg 1 ] [ bitwise reg 1 = ( reg 1 & 0x00000008 ) ^ 0x00000000 ] [ cmp neq reg 1 0x00000000 ]
//   [ immediate reg 0 accept ]
const repro: N.Expr[] = [
  { name: 'meta', key: 'l4proto', dreg: 1 },
  { name: 'cmp', sreg: 1, op: 'eq', data: '06' },
  { name: 'payload', base: 'transport', offset: 2, len: 2, dreg: 1 },
  { name: 'cmp', sreg: 1, op: 'eq', data: '0016' },
  { name: 'ct', key: 'state', dreg: 1 },
  { name: 'bitwise', sreg: 1, dreg: 1, len: 4, mask: '08000000', xor: '00000000' },
  { name: 'cmp', sreg: 1, op: 'neq', data: '00000000' },
  { name: 'immediate', dreg: 0, verdict: { code: 'accept' } },
];

test("the issue's repro: the ct load binds register 1, so the mask and comparison after it read ct state, as nft prints", (t) => {
  const st = N.ruleStatements(repro, { family: 'inet' });
  // nft list: `tcp dport 22 ct state new accept`
  t.is(st.map((s) => s.text).join(' '), 'tcp dport 22 ct state new accept');
  // nft -j list
  t.deepEqual(
    st.map((s) => s.json),
    [
      { match: { op: '==', left: { payload: { protocol: 'tcp', field: 'dport' } }, right: 22 } },
      { match: { op: 'in', left: { ct: { key: 'state' } }, right: 'new' } },
      { accept: null },
    ],
  );
});

test('a register written by an expression with no codec is unbound: the comparison after it prints raw, never under the earlier load', (t) => {
  // `numgen` has no codec here (nft: `meta mark set numgen inc mod 2`): it writes reg 1 after the payload load
  const exprs: N.Expr[] = [
    { name: 'payload', base: 'transport', offset: 2, len: 2, dreg: 1 },
    {
      name: 'numgen',
      generic: true,
      attributes: [
        { type: 1, data: '00000001' },
        { type: 2, data: '00000002' },
      ],
    } as N.GenericExpr,
    { name: 'cmp', sreg: 1, op: 'gte', data: '0001' },
  ];
  const text = N.ruleText({ family: 'ip', table: 't', chain: 'c', expr: exprs });
  t.false(/dport|@th/.test(text), text);
  t.is(text.split(`[ ${N.RAW_MARKER} `).length - 1, 3, text);
  const json = N.ruleStatements(exprs, { family: 'ip' }).map((s) => s.json);
  t.deepEqual(
    json.map((j) => Object.keys(j)[0]),
    ['raw', 'raw', 'raw'],
  );
});

test('registers alias (NFT_REG_1 is NFT_REG32_00..03): a load into an overlapping 32-bit register unbinds the 128-bit one, and the other way round', (t) => {
  const C32 = C.NFT_REG32_00;
  // a 16-byte load (`ct original ip6 saddr`) fills words 8..11
  const overlapped: N.Expr[] = [
    { name: 'ct', key: 'src_ip6', dreg: 1, direction: 0 },
    { name: 'payload', base: 'transport', offset: 2, len: 2, dreg: C32 + 1 }, // words 9: inside reg 1
    { name: 'cmp', sreg: 1, op: 'eq', data: 'fd000000000000000000000000000001' },
  ];
  const a = N.ruleStatements(overlapped, { family: 'ip6' }).map((x) => x.text);
  t.false(
    a.some((x) => x.startsWith('ct ')),
    a.join(' '),
  );
  // `ct state` writes its 4 bytes only (word 8): a load into word 9 leaves it, as the kernel
  // does and as nft lists `ct state . meta mark @s` (the concatenation's second part in word 9)
  const beside: N.Expr[] = [
    { name: 'ct', key: 'state', dreg: 1 },
    { name: 'payload', base: 'transport', offset: 2, len: 2, dreg: C32 + 1 },
    { name: 'bitwise', sreg: 1, dreg: 1, len: 4, mask: '08000000', xor: '00000000' },
    { name: 'cmp', sreg: 1, op: 'neq', data: '00000000' },
  ];
  t.true(N.ruleStatements(beside, { family: 'ip' }).some((x) => x.text === 'ct state new'));
  const other: N.Expr[] = [
    { name: 'payload', base: 'network', offset: 12, len: 4, dreg: C32 + 4 }, // word 12: reg 2's first word
    { name: 'meta', key: 'mark', dreg: 2 },
    { name: 'cmp', sreg: C32 + 4, op: 'eq', data: 'a9fe0001' },
  ];
  const b = N.ruleStatements(other, { family: 'ip' }).map((x) => x.text);
  t.false(
    b.some((x) => x.startsWith('ip saddr')),
    b.join(' '),
  );
  // registers that do not overlap stay bound: reg 2 is words 12..15, NFT_REG32_00 is word 8
  const apart: N.Expr[] = [
    { name: 'payload', base: 'network', offset: 12, len: 4, dreg: C32 },
    { name: 'meta', key: 'mark', dreg: 2 },
    { name: 'cmp', sreg: C32, op: 'eq', data: 'a9fe0001' },
  ];
  // nft: `ip saddr 169.254.0.1`
  t.true(N.ruleStatements(apart, { family: 'ip' }).some((x) => x.text === 'ip saddr 169.254.0.1'));
});

test('a ct load with a direction (`ct original saddr`): as nft 1.0.6 lists it in an ip table, raw in inet (the address family is unknown)', (t) => {
  const exprs: N.Expr[] = [
    { name: 'ct', key: 'src', dreg: 1, direction: 0 },
    { name: 'cmp', sreg: 1, op: 'eq', data: 'a9fe0001' },
  ];
  // nft list ruleset: `ct original ip saddr 169.254.0.1`; nft -j: {"ct": {"key": "saddr", "dir": "original"}}
  t.deepEqual(N.ruleStatements(exprs, { family: 'ip' }), [
    { text: 'ct original ip saddr 169.254.0.1', json: { match: { op: '==', left: { ct: { key: 'saddr', dir: 'original' } }, right: '169.254.0.1' } } },
  ]);
  const st = N.ruleStatements(exprs, { family: 'inet' });
  t.is(st.length, 2);
  t.true(
    st.every((s) => s.text.startsWith(`[ ${N.RAW_MARKER} `)),
    st.map((s) => s.text).join(' '),
  );
});

test('a nat whose registers do not hold constants (a map) prints raw, not as a wrong address', (t) => {
  const exprs: N.Expr[] = [
    { name: 'payload', base: 'network', offset: 12, len: 4, dreg: 1 },
    { name: 'nat', type: 'snat', family: 'ip', regAddrMin: 1, regAddrMax: 1, flags: 1 },
  ];
  const st = N.ruleStatements(exprs, { family: 'ip' });
  t.true(
    st.every((s) => s.text.startsWith(`[ ${N.RAW_MARKER} `)),
    st.map((s) => s.text).join(' '),
  );
});

// ---- properties ----

const samples: N.Expr[] = [
  { name: 'osf', dreg: 1, ttl: 1, flags: 1 },
  { name: 'dup', sregAddr: 1, sregDev: 2 },
  { name: 'fwd', sregDev: 1, sregAddr: 2, nfproto: 2 },
  { name: 'socket', key: 3, dreg: 1, level: 2 },
  { name: 'exthdr', dreg: 1, type: 1, offset: 14, len: 2, op: 3 },
  { name: 'ct', key: 'event', sreg: 1 },
  { name: 'ct', key: 'state', dreg: 1 },
  { name: 'ct', key: 'mark', sreg: 1 },
  { name: 'ct', key: 'src', dreg: 1, direction: 1 },
  { name: 'limit', rate: 10240, unit: 1, burst: 20480, type: 'bytes', inv: true },
  { name: 'log', prefix: 'p', group: 2, snaplen: 100, qthreshold: 1, level: 7, flags: 0x2f },
  { name: 'quota', bytes: 10, used: 1, inv: true },
  { name: 'reject', type: 'icmpx', code: 3 },
  { name: 'nat', type: 'snat', family: 'ip', regAddrMin: 1, regAddrMax: 2, regProtoMin: 3, regProtoMax: 4, flags: 0x13 },
  { name: 'masq', flags: 0xc, regProtoMin: 1, regProtoMax: 2 },
  { name: 'redir', regProtoMin: 1, flags: 2 },
  { name: 'fib', dreg: 1, result: 'oifname', flags: 1 | 8 },
  { name: 'objref', type: 2, object: 'q1' },
  { name: 'objref', sreg: 1, set: 'm' },
  { name: 'range', sreg: 1, op: 'neq', from: '03e8', to: '07d0' },
  { name: 'byteorder', sreg: 1, dreg: 1, op: 'hton', len: 4, size: 4 },
  { name: 'connlimit', count: 2, inv: true },
];

/** Decode, then print in every family: only NetlinkDecodeError may escape. */
function decodeAndPrint(bytes: Buffer): void {
  let e: N.Expr;
  try {
    const items = parseAttributes(bytes).items;
    if (!items.length) return;
    e = N.decodeExpr(items[0]) as N.Expr;
  } catch (err) {
    if (err instanceof NetlinkDecodeError) return;
    throw err;
  }
  const imm: N.Expr[] = [1, 2, 3, 4].map((r) => ({ name: 'immediate', dreg: r, data: 'a9fe0001' }));
  for (const family of ['ip', 'ip6', 'inet', 'bridge']) {
    N.ruleStatements([...imm, e, { name: 'cmp', sreg: 1, op: 'eq', data: '01' }], { family, ifnames: { 1: 'lo' } });
    N.describeExpr(e);
  }
}

test('mutated expressions (fast-check): bytes flipped, cut or inserted in each encoded expression only throw NetlinkDecodeError', (t) => {
  for (const e of samples) {
    const enc = N.encodeExpr(e);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(enc.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 6 }),
        fc.nat(enc.length),
        fc.uint8Array({ maxLength: 12 }),
        (flips, cut, extra) => {
          const b = Buffer.from(enc);
          for (const [at, v] of flips) b[at] = v;
          decodeAndPrint(b);
          decodeAndPrint(Buffer.concat([b.subarray(0, cut), Buffer.from(extra), b.subarray(cut)]));
          decodeAndPrint(b.subarray(0, cut));
        },
      ),
      { numRuns: 300 },
    );
  }
  t.pass();
});

test('random attributes (fast-check) under every registered expression name only throw NetlinkDecodeError', (t) => {
  const attr = fc
    .tuple(fc.integer({ min: 0, max: 12 }), fc.uint8Array({ maxLength: 20 }), fc.boolean())
    .map(([type, data, isNested]) => bin(type | (isNested ? NLA_F_NESTED : 0), Buffer.from(data)));
  for (const name of N.registeredExprs()) {
    fc.assert(
      fc.property(fc.array(attr, { maxLength: 6 }), (attrs) => {
        decodeAndPrint(nested(C.NFTA_LIST_ELEM, [str(C.NFTA_EXPR_NAME, name), nested(C.NFTA_EXPR_DATA, attrs)]));
      }),
      { numRuns: 200 },
    );
  }
  t.pass();
});

test('random rules (fast-check): any sequence of known expressions prints without throwing, and never a cmp under a load that a later load replaced', (t) => {
  const reg = fc.integer({ min: 1, max: 2 });
  const expr: fc.Arbitrary<N.Expr> = fc.oneof(
    reg.map((r) => ({ name: 'ct', key: 'state', dreg: r }) as N.Expr),
    reg.map((r) => ({ name: 'payload', base: 'transport', offset: 2, len: 2, dreg: r }) as N.Expr),
    reg.map((r) => ({ name: 'meta', key: 'l4proto', dreg: r }) as N.Expr),
    reg.map((r) => ({ name: 'fib', dreg: r, result: 'type', flags: 2 }) as N.Expr),
    reg.map((r) => ({ name: 'cmp', sreg: r, op: 'eq', data: '06' }) as N.Expr),
    reg.map((r) => ({ name: 'cmp', sreg: r, op: 'neq', data: '00000000' }) as N.Expr),
    reg.map((r) => ({ name: 'bitwise', sreg: r, dreg: r, len: 4, mask: '08000000', xor: '00000000' }) as N.Expr),
    reg.map((r) => ({ name: 'immediate', dreg: r, data: '0500000a' }) as N.Expr),
    reg.map((r) => ({ name: 'ct', key: 'mark', sreg: r }) as N.Expr),
    fc.constant({ name: 'limit', rate: 1, unit: 1, burst: 5, type: 'packets' } as N.Expr),
    fc.constant({ name: 'xyzzy', generic: true, attributes: [] } as N.GenericExpr),
  );
  fc.assert(
    fc.property(fc.array(expr, { maxLength: 10 }), fc.constantFrom('ip', 'inet'), (exprs, family) => {
      const st = N.ruleStatements(exprs, { family });
      // a statement naming `ct state` must come from a cmp whose register a ct load wrote last
      const named = st.filter((s) => s.text.startsWith('ct state')).length;
      let possible = 0;
      const last = new Map<number, string>();
      for (const e of exprs) {
        if ((e as N.GenericExpr).generic) {
          last.clear();
          continue;
        }
        if (e.name === 'ct' && (e as N.CtExpr).dreg !== undefined) last.set((e as N.CtExpr).dreg!, 'ct');
        else if ('dreg' in e && e.dreg !== undefined && e.name !== 'bitwise') last.set(e.dreg, e.name);
        if (e.name === 'cmp' && last.get((e as N.CmpExpr).sreg) === 'ct') possible++;
      }
      return named <= possible;
    }),
    { numRuns: 2000 },
  );
  t.pass();
});

test('`synplug decode` decodes stateful objects (NFT_MSG_NEWOBJ): a counter, a quota and a limit by their attributes; other types keep raw attributes', async (t) => {
  const { encodeMessage, parseMessages, NETLINK_NETFILTER } = await import('../../src/netlink/message.js');
  const { bodyDecoder } = await import('../../src/netlink/protocols.js');
  const { u64be, u32be } = await import('../../src/netlink/attributes.js');
  const msg = (type: number, data: Buffer[]) =>
    parseMessages(
      encodeMessage({
        type: N.nftType(C.NFT_MSG_NEWOBJ),
        flags: 0,
        payload: [
          N.encodeNfGenMsg(C.NFPROTO_INET),
          str(C.NFTA_OBJ_TABLE, 't'),
          str(C.NFTA_OBJ_NAME, 'o'),
          u32be(C.NFTA_OBJ_TYPE, type),
          nested(C.NFTA_OBJ_DATA | NLA_F_NESTED, data),
          u32be(C.NFTA_OBJ_USE, 2),
          u64be(C.NFTA_OBJ_HANDLE, 7n),
        ],
      }),
    )[0];
  const dec = bodyDecoder(NETLINK_NETFILTER, N.nftType(C.NFT_MSG_NEWOBJ))!;
  t.like(dec(msg(C.NFT_OBJECT_COUNTER, [u64be(C.NFTA_COUNTER_BYTES, 300n), u64be(C.NFTA_COUNTER_PACKETS, 5n)])), {
    family: 'inet',
    table: 't',
    name: 'o',
    type: 'counter',
    handle: 7,
    use: 2,
    counter: { packets: 5, bytes: 300 },
  });
  t.like(
    dec(msg(C.NFT_OBJECT_QUOTA, [u64be(C.NFTA_QUOTA_BYTES, 10485760n), u32be(C.NFTA_QUOTA_FLAGS, C.NFT_QUOTA_F_INV), u64be(C.NFTA_QUOTA_CONSUMED, 1048576n)])),
    { type: 'quota', quota: { bytes: 10485760, used: 1048576, inv: true } },
  );
  t.like(
    dec(
      msg(C.NFT_OBJECT_LIMIT, [
        u64be(C.NFTA_LIMIT_RATE, 10n),
        u64be(C.NFTA_LIMIT_UNIT, 1n),
        u32be(C.NFTA_LIMIT_BURST, 5),
        u32be(C.NFTA_LIMIT_TYPE, C.NFT_LIMIT_PKTS),
        u32be(C.NFTA_LIMIT_FLAGS, 0),
      ]),
    ),
    { type: 'limit', limit: { rate: 10, unit: 1, burst: 5, type: 'packets' } },
  );
  t.like(dec(msg(C.NFT_OBJECT_SYNPROXY, [u32be(1, 1460)])), { type: 'synproxy', attributes: [{ type: 1, data: '000005b4' }] });
  // a GETOBJ dump request names no object: the family only
  const get = parseMessages(encodeMessage({ type: N.nftType(C.NFT_MSG_GETOBJ), flags: 0, payload: [N.encodeNfGenMsg(C.NFPROTO_UNSPEC)] }))[0];
  t.deepEqual(bodyDecoder(NETLINK_NETFILTER, get.type)!(get), { family: 'unspec' });
});

test('ranges of types nft names print as numbers in its text, as names in its JSON (protocols as numbers); `!=` too, without the dependency nft leaves out', (t) => {
  // nft --debug=netlink of `meta l4proto 6-17`, `ip protocol != 6-17`, `icmp type 0-8`, `meta pkttype 0-2` (ip)
  // and `ether type != 0x0800-0x86dd` (netdev)
  const cases: Array<[string, N.Expr[], string, unknown]> = [
    [
      'ip',
      [
        { name: 'meta', key: 'l4proto', dreg: 1 },
        { name: 'cmp', sreg: 1, op: 'gte', data: '06' },
        { name: 'cmp', sreg: 1, op: 'lte', data: '11' },
      ],
      'meta l4proto 6-17',
      { match: { op: '==', left: { meta: { key: 'l4proto' } }, right: { range: [6, 17] } } },
    ],
    [
      'ip',
      [
        { name: 'payload', base: 'network', offset: 9, len: 1, dreg: 1 },
        { name: 'range', sreg: 1, op: 'neq', from: '06', to: '11' },
      ],
      'ip protocol != 6-17',
      { match: { op: '!=', left: { payload: { protocol: 'ip', field: 'protocol' } }, right: { range: [6, 17] } } },
    ],
    [
      'ip',
      [
        { name: 'meta', key: 'l4proto', dreg: 1 },
        { name: 'cmp', sreg: 1, op: 'eq', data: '01' },
        { name: 'payload', base: 'transport', offset: 0, len: 1, dreg: 1 },
        { name: 'cmp', sreg: 1, op: 'gte', data: '00' },
        { name: 'cmp', sreg: 1, op: 'lte', data: '08' },
      ],
      'icmp type 0-8',
      { match: { op: '==', left: { payload: { protocol: 'icmp', field: 'type' } }, right: { range: ['echo-reply', 'echo-request'] } } },
    ],
    [
      'ip',
      [
        { name: 'meta', key: 'pkttype', dreg: 1 },
        { name: 'cmp', sreg: 1, op: 'gte', data: '00' },
        { name: 'cmp', sreg: 1, op: 'lte', data: '02' },
      ],
      'meta pkttype 0-2',
      { match: { op: '==', left: { meta: { key: 'pkttype' } }, right: { range: ['host', 'multicast'] } } },
    ],
    [
      'netdev',
      [
        { name: 'meta', key: 'iiftype', dreg: 1 },
        { name: 'cmp', sreg: 1, op: 'eq', data: '0100' },
        { name: 'payload', base: 'link', offset: 12, len: 2, dreg: 1 },
        { name: 'range', sreg: 1, op: 'neq', from: '0800', to: '86dd' },
      ],
      'ether type != 0x0800-0x86dd',
      { match: { op: '!=', left: { payload: { protocol: 'ether', field: 'type' } }, right: { range: ['ip', 'ip6'] } } },
    ],
  ];
  for (const [family, exprs, text, json] of cases) {
    const st = N.ruleStatements(exprs, { family });
    t.is(st.map((s) => s.text).join(' '), text);
    t.deepEqual(
      st.map((s) => s.json),
      [json],
    );
  }
});
