/**
 * Property tests: whatever the bytes, the tc decoders throw nothing but
 * NetlinkDecodeError, and return quickly. Inputs: random payloads, captured
 * tc datagrams with bytes flipped, cut or added, and well-formed messages of
 * every registered kind whose option/stat attributes carry random bytes.
 * The text formatters are run on every decoded entry too.
 */
import test from 'ava';
import fc from 'fast-check';
import { captureNames, loadCapture } from '../helpers/captures.js';
import { NetlinkDecodeError } from '../../src/netlink/errors.js';
import { parseMessages, type NetlinkMessage } from '../../src/netlink/message.js';
import { attr, str } from '../../src/netlink/attributes.js';
import {
  decodeQdisc,
  decodeClass,
  decodeFilter,
  formatQdiscText,
  formatClassText,
  formatFilterText,
  encodeTcmsg,
  qdiscKindNames,
  filterKindNames,
  TCA_KIND,
  TCA_OPTIONS,
  TCA_STATS2,
  TCA_STATS,
  TCA_XSTATS,
  TCA_CHAIN,
} from '../../src/tc/index.js';

const TC_TYPES = [36, 37, 38, 40, 41, 42, 44, 45, 46];
/** A decode taking longer than this is a hang (generous: the parallel test workers and GC pauses add noise). */
const MAX_MS = 2000;

/** Decode and print one message; true when it decoded, false on NetlinkDecodeError; anything else, or a decode over MAX_MS, fails the property. */
function decodeOk(m: NetlinkMessage): boolean {
  const t0 = performance.now();
  let decoded: boolean;
  try {
    if (m.type <= 38) formatQdiscText(decodeQdisc(m), { stats: true, details: true, showDev: true });
    else if (m.type <= 42) formatClassText(decodeClass(m), { stats: true, details: true });
    else formatFilterText(decodeFilter(m), { stats: true });
    decoded = true;
  } catch (e) {
    if (!(e instanceof NetlinkDecodeError)) throw e;
    decoded = false;
  }
  const ms = performance.now() - t0;
  if (ms > MAX_MS) throw new Error(`decoding took ${ms} ms`);
  return decoded;
}

function asMessage(type: number, payload: Buffer): NetlinkMessage {
  return { type, flags: 0, seq: 0, pid: 0, offset: 0, payload };
}

const captured: Buffer[] = captureNames()
  .flatMap((n) => loadCapture(n).datagrams)
  .filter((d) => d.protocol === 0 && parseMessages(d.bytes).some((m) => TC_TYPES.includes(m.type)))
  .map((d) => d.bytes);

test('there are captured tc datagrams to mutate', (t) => {
  t.true(captured.length >= 15, String(captured.length));
});

test('random payloads of every tc message type: only NetlinkDecodeError', (t) => {
  fc.assert(
    fc.property(fc.constantFrom(...TC_TYPES), fc.uint8Array({ maxLength: 400 }), (type, bytes) => {
      decodeOk(asMessage(type, Buffer.from(bytes)));
    }),
    { numRuns: 3000 },
  );
  t.pass();
});

/**
 * Make the nlmsg_len fields of `b` frame it again: each message that no
 * longer fits (or claims less than a header) is given the rest of the
 * datagram. Cuts and added bytes almost always break the framing, and then
 * the netlink layer refuses the datagram before any tc decoder sees it; a
 * re-framed one carries the mutated bytes into the kind decoders.
 */
function reframe(b: Buffer): Buffer {
  let off = 0;
  while (off + 16 <= b.length) {
    let len = b.readUInt32LE(off);
    if (len < 16 || len > b.length - off) {
      len = b.length - off;
      b.writeUInt32LE(len, off);
    }
    off += (len + 3) & ~3;
  }
  return b;
}

/** A captured datagram with some bytes flipped, a cut, and some bytes added; half of them re-framed. */
const mutated = fc
  .record({
    base: fc.constantFrom(...captured),
    flips: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { maxLength: 8 }),
    cut: fc.option(fc.nat(), { nil: undefined }),
    extra: fc.uint8Array({ maxLength: 32 }),
    frame: fc.boolean(),
  })
  .map(({ base, flips, cut, extra, frame }) => {
    const b = Buffer.from(base);
    for (const [i, x] of flips) b[i % b.length] ^= x;
    const cutAt = cut === undefined ? b.length : cut % (b.length + 1);
    const out = Buffer.concat([b.subarray(0, cutAt), Buffer.from(extra)]);
    return frame ? reframe(out) : out;
  });

test('mutated captured datagrams (flipped, truncated, extended bytes): only NetlinkDecodeError', (t) => {
  let reached = 0;
  let decoded = 0;
  fc.assert(
    fc.property(mutated, (d) => {
      let msgs: NetlinkMessage[];
      try {
        msgs = parseMessages(d);
      } catch (e) {
        if (e instanceof NetlinkDecodeError) return;
        throw e;
      }
      for (const m of msgs) {
        if (!TC_TYPES.includes(m.type)) continue;
        reached++;
        if (decodeOk(m)) decoded++;
      }
    }),
    { numRuns: 5000 },
  );
  // Not vacuous: the re-framed half carries mutations into the tc decoders
  // (about 1,750-1,950 messages per run here, 500-620 of them decoding whole).
  t.true(reached > 1000, `${reached} mutated messages reached the tc decoders`);
  t.true(decoded > 250, `${decoded} decoded whole`);
});

test('mutated single messages: flipping any byte of each captured tc message, one at a time', (t) => {
  let n = 0;
  for (const d of captured) {
    for (const m of parseMessages(d)) {
      if (!TC_TYPES.includes(m.type)) continue;
      for (let i = 0; i < m.payload.length; i++) {
        for (const x of [0x01, 0x80, 0xff]) {
          const p = Buffer.from(m.payload);
          p[i] ^= x;
          decodeOk(asMessage(m.type, p));
          n++;
        }
      }
    }
  }
  t.true(n > 1000);
});

/** Random nested attributes: mostly well-formed TLVs with random types and payloads. */
const randomAttrs = fc
  .array(fc.tuple(fc.integer({ min: 0, max: 20 }), fc.uint8Array({ maxLength: 60 }), fc.boolean()), { maxLength: 8 })
  .map((xs) => Buffer.concat(xs.map(([type, data, nestFlag]) => attr(type | (nestFlag ? 0x8000 : 0), data))));

const wellFormed = fc
  .record({
    family: fc.constantFrom('qdisc', 'class', 'filter'),
    qkind: fc.constantFrom(...qdiscKindNames(), 'unknown_kind'),
    fkind: fc.constantFrom(...filterKindNames(), 'unknown_cls'),
    head: fc.record({ ifindex: fc.nat(), handle: fc.nat(), parent: fc.nat(), info: fc.nat() }),
    options: fc.oneof(
      randomAttrs,
      fc.uint8Array({ maxLength: 80 }).map((b) => Buffer.from(b)),
    ),
    stats2: randomAttrs,
    stats: fc.uint8Array({ maxLength: 40 }),
    xstats: fc.uint8Array({ maxLength: 48 }),
    chain: fc.boolean(),
  })
  .map((r) => {
    const type = r.family === 'qdisc' ? 36 : r.family === 'class' ? 40 : 44;
    const kind = r.family === 'filter' ? r.fkind : r.qkind;
    const parts = [
      encodeTcmsg({ ...r.head, handle: r.head.handle >>> 0, parent: r.head.parent >>> 0, info: r.head.info >>> 0 }),
      str(TCA_KIND, kind),
      attr(TCA_OPTIONS, r.options),
      attr(TCA_STATS2, r.stats2),
      attr(TCA_STATS, r.stats),
      attr(TCA_XSTATS, r.xstats),
    ];
    if (r.chain) parts.push(attr(TCA_CHAIN, Buffer.from([1, 0, 0, 0])));
    return asMessage(type, Buffer.concat(parts));
  });

test('well-formed messages of every kind with random option, stats and xstats bytes: only NetlinkDecodeError', (t) => {
  let decoded = 0;
  fc.assert(
    fc.property(wellFormed, (m) => {
      if (decodeOk(m)) decoded++;
    }),
    { numRuns: 8000 },
  );
  t.true(decoded > 1000, `decoded ${decoded}`);
});

test('a huge message (20,000 attributes, 60 KB of options) decodes in bounded time', (t) => {
  const many = Buffer.concat(Array.from({ length: 20000 }, (_, i) => attr(i % 30, Buffer.alloc(i % 9))));
  const opts = Buffer.concat(Array.from({ length: 6000 }, (_, i) => attr(i % 12, Buffer.alloc(i % 8))));
  for (const [type, kind] of [
    [36, 'htb'],
    [40, 'htb'],
    [44, 'u32'],
    [36, 'prio'],
  ] as const) {
    const m = asMessage(type, Buffer.concat([encodeTcmsg({}), str(TCA_KIND, kind), attr(TCA_OPTIONS, opts.subarray(0, 60000)), many]));
    const t0 = performance.now();
    decodeOk(m);
    t.true(performance.now() - t0 < MAX_MS);
  }
});
