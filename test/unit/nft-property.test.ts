/**
 * Property tests: random and mutated nfnetlink datagrams never make a
 * decoder throw anything but NetlinkDecodeError (and never hang).
 */
import test from 'ava';
import fc from 'fast-check';
import { encodeMessage, parseMessages, NETLINK_NETFILTER, type NetlinkMessage } from '../../src/netlink/message.js';
import { parseAttributes } from '../../src/netlink/attributes.js';
import { bodyDecoder } from '../../src/netlink/protocols.js';
import { NetlinkDecodeError } from '../../src/netlink/errors.js';
import { captureNames, loadCapture } from '../helpers/captures.js';
import * as N from '../../src/iptables/index.js';
import * as M from '../../src/guard/modes/local-nft.js';

const C = N.nftConstants;

const corpus: Buffer[] = captureNames().flatMap((n) =>
  loadCapture(n)
    .datagrams.filter((d) => d.protocol === NETLINK_NETFILTER)
    .map((d) => d.bytes),
);
// Our own requests too: sets, elements, lookups, verdicts the captures lack.
for (const b of [
  M.planMarkRule({ chains: [], rules: [], sets: [] }, M.resolveMarkRule({ address: 'fd00::1', conditional: true, port: 443, comment: 'c' })),
  new N.NftBatch().addRule({
    family: 'inet',
    table: 't',
    chain: 'c',
    expr: [
      { name: 'counter', packets: 1, bytes: 2 },
      { name: 'immediate', dreg: 0, verdict: { code: 'jump', chain: 'x' } },
    ],
  }),
]) {
  corpus.push(Buffer.concat(b.messages().map((m, i) => encodeMessage({ type: m.type, flags: m.flags ?? 0, seq: i, payload: m.payload }))));
}
corpus.push(
  Buffer.concat(
    M.prepareElementOps({ address: '169.254.255.254', timeoutMs: 1000 }).refresh!.messages.map((m, i) =>
      encodeMessage({ type: m.type, flags: m.flags ?? 0, seq: i, payload: m.payload }),
    ),
  ),
);

const decoders: Array<[string, (m: NetlinkMessage) => unknown]> = [
  ['table', N.decodeTable],
  ['chain', N.decodeChain],
  ['rule', N.decodeRule],
  ['set', N.decodeSet],
  ['elements', N.decodeElements],
  ['gen', N.decodeGen],
  ['batch', N.decodeBatchMarker],
  ['generic', N.decodeGenericBody],
  [
    'statements',
    (m) => {
      const r = N.decodeRule(m);
      return N.ruleStatements(r.expr, { family: r.family });
    },
  ],
];

/** Run every decoder on every message of a datagram; only NetlinkDecodeError may escape. */
function decodeAll(d: Buffer): void {
  let msgs: NetlinkMessage[];
  try {
    msgs = parseMessages(d);
  } catch (e) {
    if (e instanceof NetlinkDecodeError) return;
    throw e;
  }
  for (const m of msgs) {
    const fns = [...decoders.map(([, f]) => f)];
    const reg = bodyDecoder(NETLINK_NETFILTER, m.type);
    if (reg) fns.push(reg);
    for (const f of fns) {
      try {
        JSON.stringify(f(m));
      } catch (e) {
        if (!(e instanceof NetlinkDecodeError)) throw e;
      }
    }
    // expressions on their own
    try {
      for (const a of parseAttributes(m.payload.subarray(4))) {
        try {
          N.decodeExpr(a);
        } catch (e) {
          if (!(e instanceof NetlinkDecodeError)) throw e;
        }
      }
    } catch (e) {
      if (!(e instanceof NetlinkDecodeError)) throw e;
    }
  }
}

test('the corpus itself decodes', (t) => {
  t.true(corpus.length > 30);
  for (const d of corpus) t.notThrows(() => decodeAll(d));
});

test('random bytes behind a valid header: only NetlinkDecodeError', (t) => {
  const types = [0x10, 0x11, ...Array.from({ length: 34 }, (_, i) => N.nftType(i))];
  fc.assert(
    fc.property(fc.constantFrom(...types), fc.uint8Array({ maxLength: 300 }), (type, body) => {
      const p = Buffer.from(body);
      const d = Buffer.alloc(16 + ((p.length + 3) & ~3));
      d.writeUInt32LE(16 + p.length, 0);
      d.writeUInt16LE(type, 4);
      p.copy(d, 16);
      decodeAll(d);
    }),
    { numRuns: 3000 },
  );
  t.pass();
});

test('fully random datagrams: only NetlinkDecodeError', (t) => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 400 }), (b) => {
      decodeAll(Buffer.from(b));
    }),
    { numRuns: 3000 },
  );
  t.pass();
});

test('mutated captured and encoded datagrams (byte flips, truncation, insertion): only NetlinkDecodeError', (t) => {
  const mutation = fc.record({
    which: fc.nat(corpus.length - 1),
    flips: fc.array(fc.record({ at: fc.nat(), xor: fc.integer({ min: 1, max: 255 }) }), { maxLength: 6 }),
    cut: fc.option(fc.nat()),
    insert: fc.option(fc.record({ at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }) })),
  });
  fc.assert(
    fc.property(mutation, ({ which, flips, cut, insert }) => {
      let d = Buffer.from(corpus[which]);
      for (const f of flips) d[f.at % d.length] ^= f.xor;
      if (insert) {
        const at = insert.at % (d.length + 1);
        d = Buffer.concat([d.subarray(0, at), Buffer.from(insert.bytes), d.subarray(at)]);
      }
      if (cut !== null) d = d.subarray(0, cut % (d.length + 1));
      decodeAll(d);
    }),
    { numRuns: 6000 },
  );
  t.pass();
});

test('mutations confined to one message payload keep its length valid and reach deep decoders', (t) => {
  // Flip bytes after the nlmsghdr of a rule/set/element message, keeping nlmsg_len as is.
  const deep = corpus
    .flatMap((d) => parseMessages(d))
    .filter((m) => [C.NFT_MSG_NEWRULE, C.NFT_MSG_NEWSET, C.NFT_MSG_NEWSETELEM, C.NFT_MSG_NEWCHAIN].includes(N.msgType(m.type)) && N.subsysId(m.type) === 10);
  t.true(deep.length >= 4);
  fc.assert(
    fc.property(
      fc.nat(deep.length - 1),
      fc.array(fc.record({ at: fc.nat(), v: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 4 }),
      (i, sets) => {
        const m = deep[i];
        const payload = Buffer.from(m.payload);
        for (const s of sets) payload[4 + (s.at % Math.max(1, payload.length - 4))] = s.v;
        const d = Buffer.alloc(16 + ((payload.length + 3) & ~3));
        d.writeUInt32LE(16 + payload.length, 0);
        d.writeUInt16LE(m.type, 4);
        d.writeUInt16LE(m.flags, 6);
        payload.copy(d, 16);
        decodeAll(d);
      },
    ),
    { numRuns: 6000 },
  );
  t.pass();
});
