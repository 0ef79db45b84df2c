import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { captureNames, loadCapture } from '../helpers/captures.js';
import {
  readCaptureFile,
  parseCapture,
  parsePcap,
  parsePcapng,
  encodePcap,
  datagramDirection,
  LINKTYPE_NETLINK,
  captureDatagrams,
  pcapDatagrams,
  pcapngDatagrams,
  captureJsonDatagrams,
  parseCaptureJson,
} from '../../src/netlink/pcap.js';
import { parseHexDump, hexDumpDatagrams } from '../../src/netlink/hexdump.js';
import { NetlinkDecodeError, UsageError } from '../../src/netlink/errors.js';
import { pcapng } from '../helpers/pcapng.js';

const names = captureNames();

const simplify = (ds: Array<{ protocol: number; direction: string; bytes: Buffer }>): Array<{ protocol: number; direction: string; hex: string }> =>
  ds.map((d) => ({ protocol: d.protocol, direction: d.direction, hex: d.bytes.toString('hex') }));

for (const name of names) {
  test(`${name}: capture.pcap reads to exactly the datagrams of capture.json`, (t) => {
    const c = loadCapture(name);
    const got = readCaptureFile(join(c.dir, 'capture.pcap'));
    t.deepEqual(simplify(got), simplify(c.datagrams));
    for (const d of got) {
      t.is(typeof d.timestamp, 'number');
      t.true(d.timestamp! > 1.6e9 && d.timestamp! < 2.2e9); // 2020..2039
    }
    // non-decreasing capture times
    for (let i = 1; i < got.length; i++) t.true(got[i].timestamp! >= got[i - 1].timestamp!);
  });

  test(`${name}: capture.json read through readCaptureFile gives the same datagrams`, (t) => {
    const c = loadCapture(name);
    t.deepEqual(simplify(readCaptureFile(join(c.dir, 'capture.json'))), simplify(c.datagrams));
  });
}

test('directions follow NLM_F_REQUEST of the first message, as capture.json says', (t) => {
  let n = 0;
  for (const name of names) {
    for (const d of loadCapture(name).datagrams) {
      t.is(datagramDirection(d.bytes), d.direction);
      n++;
    }
  }
  t.true(n > 100);
});

test('pcap: both byte orders and the nanosecond variant read back the same datagrams and times', (t) => {
  const c = loadCapture('01_link_show');
  const orig = parsePcap(readFileSync(join(c.dir, 'capture.pcap')));
  for (const bigEndian of [false, true]) {
    for (const nanoseconds of [false, true]) {
      const file = encodePcap(orig, { bigEndian, nanoseconds });
      const magic = file.subarray(0, 4).toString('hex');
      const expectMagic = { 'false,false': 'd4c3b2a1', 'true,false': 'a1b2c3d4', 'false,true': '4d3cb2a1', 'true,true': 'a1b23c4d' }[
        `${bigEndian},${nanoseconds}`
      ];
      t.is(magic, expectMagic);
      const back = parseCapture(file);
      t.deepEqual(simplify(back), simplify(c.datagrams));
      for (let i = 0; i < back.length; i++) t.true(Math.abs(back[i].timestamp! - orig[i].timestamp!) < 2e-6);
    }
  }
});

test('pcap: nanosecond timestamps keep their fraction', (t) => {
  const file = encodePcap([{ protocol: 12, bytes: Buffer.alloc(16), timestamp: 100.123456789 }], { nanoseconds: true });
  t.is(file.readUInt32LE(24 + 4), 123456789);
  const [d] = parsePcap(file);
  t.is(d.protocol, 12);
  t.true(Math.abs(d.timestamp! - 100.123456789) < 1e-9);
});

test('pcap: a file cut anywhere throws NetlinkDecodeError (never anything else), with the offset of the cut record', (t) => {
  const c = loadCapture('02_addr_add');
  const file = readFileSync(join(c.dir, 'capture.pcap'));
  // record boundaries
  const starts: number[] = [];
  for (let off = 24; off < file.length; off += 16 + file.readUInt32LE(off + 8)) starts.push(off);
  t.is(starts.length, c.datagrams.length);
  const boundaries = new Set([...starts, file.length]);
  for (let cut = 0; cut < file.length; cut++) {
    const part = file.subarray(0, cut);
    if (boundaries.has(cut)) {
      // a cut between records is a valid, shorter capture
      t.is(parsePcap(part).length, starts.filter((s) => s < cut).length);
      continue;
    }
    const err = t.throws(() => parsePcap(part), { instanceOf: NetlinkDecodeError });
    if (cut < 24) {
      t.is(err!.offset, 0);
      continue;
    }
    const rec = Math.max(...starts.filter((s) => s <= cut));
    // header cut: offset of the header; data cut: offset of caplen
    t.is(err!.offset, cut < rec + 16 ? rec : rec + 8, `cut at ${cut}`);
  }
});

test('pcap: another link type is refused with the offset of the link type field', (t) => {
  const file = Buffer.from(encodePcap([{ protocol: 0, bytes: Buffer.alloc(16) }]));
  file.writeUInt32LE(1, 20); // LINKTYPE_ETHERNET
  const err = t.throws(() => parsePcap(file), { instanceOf: NetlinkDecodeError });
  t.is(err!.offset, 20);
  t.regex(err!.message, /link type 1 is not LINKTYPE_NETLINK/);
  t.is(LINKTYPE_NETLINK, 253);
});

test('pcap: a packet shorter than the nlmon pseudo header is refused at its data offset', (t) => {
  const file = Buffer.from(encodePcap([{ protocol: 0, bytes: Buffer.alloc(0) }]));
  // shrink the record to 8 bytes
  const short = Buffer.concat([file.subarray(0, 40), file.subarray(40, 48)]);
  short.writeUInt32LE(8, 24 + 8);
  short.writeUInt32LE(8, 24 + 12);
  const err = t.throws(() => parsePcap(short), { instanceOf: NetlinkDecodeError });
  t.is(err!.offset, 40);
});

test('pcap: random bytes after a valid header never throw anything but NetlinkDecodeError', (t) => {
  const head = encodePcap([]);
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 200 }), fc.boolean(), (tail, be) => {
      const h = be ? encodePcap([], { bigEndian: true }) : head;
      try {
        parseCapture(Buffer.concat([h, Buffer.from(tail)]));
      } catch (e) {
        if (!(e instanceof NetlinkDecodeError)) throw e;
      }
    }),
    { numRuns: 2000 },
  );
  t.pass();
});

test('pcapng: little- and big-endian sections, microsecond and nanosecond resolution', (t) => {
  const c = loadCapture('16_bad_kind');
  const orig = parsePcap(readFileSync(join(c.dir, 'capture.pcap')));
  for (const le of [true, false]) {
    for (const res of [undefined, 9]) {
      const back = parseCapture(pcapng(orig, le, res));
      t.deepEqual(simplify(back), simplify(c.datagrams));
      for (let i = 0; i < back.length; i++) t.true(Math.abs(back[i].timestamp! - orig[i].timestamp!) < 2e-6);
    }
  }
});

test('pcapng: truncated at every length -> NetlinkDecodeError only', (t) => {
  const c = loadCapture('02_addr_add');
  const file = pcapng(c.datagrams, true);
  let errors = 0;
  for (let cut = 1; cut < file.length; cut++) {
    try {
      parsePcapng(file.subarray(0, cut));
    } catch (e) {
      t.true(e instanceof NetlinkDecodeError, `cut ${cut}: ${String(e)}`);
      t.true((e as NetlinkDecodeError).offset <= cut);
      errors++;
    }
  }
  t.true(errors > file.length / 2);
});

// ---- hex dumps ----

const tmp = mkdtempSync(join(tmpdir(), 'synplug-pcap-'));
test.after.always(() => rmSync(tmp, { recursive: true, force: true }));

function viaTool(tool: string, args: string[], data: Buffer): string {
  const f = join(tmp, `d-${Math.random().toString(16).slice(2)}`);
  writeFileSync(f, data);
  return execFileSync(tool, [...args, f], { encoding: 'utf8' });
}

test('hex: one datagram per line, whitespace and case tolerant', (t) => {
  const c = loadCapture('02_addr_add');
  const text =
    c.datagrams
      .map((d, i) => {
        const h = d.bytes.toString('hex');
        return i % 2 ? h.toUpperCase().replace(/(.{8})/g, '$1 ') : `  ${h.replace(/(..)/g, '$1 ')}\t`;
      })
      .join('\r\n') + '\n';
  t.deepEqual(simplify(parseCapture(Buffer.from(text))), simplify(c.datagrams));
});

test('hex: blank-line separated blocks, wrapped lines, comments, 0x prefixes and commas', (t) => {
  const c = loadCapture('01_link_show');
  const blocks = c.datagrams.map((d) => {
    const h = d.bytes.toString('hex');
    const lines = h.match(/.{1,32}/g)!.map((l, i) => (i % 3 === 1 ? l.replace(/(..)/g, '0x$1, ') : l));
    return lines.join('\n') + '\n// next\n';
  });
  const text = ['# ip link show lo', ...blocks].join('\n');
  t.true(text.split('\n').length > 100);
  const got = parseCapture(Buffer.from(text));
  t.deepEqual(simplify(got), simplify(c.datagrams));
});

test('hex: xxd output of each datagram, concatenated (offsets restart at 0)', (t) => {
  const c = loadCapture('01_link_show');
  const text = c.datagrams.map((d) => viaTool('xxd', [], d.bytes)).join('');
  t.deepEqual(
    parseHexDump(text).map((b) => b.toString('hex')),
    c.datagrams.map((d) => d.bytes.toString('hex')),
  );
});

test('hex: xxd -a (autoskip, "*" lines) and xxd -g1 / -c 32 variants', (t) => {
  const c = loadCapture('01_link_show');
  for (const args of [['-a'], ['-g', '1'], ['-c', '32'], ['-a', '-g', '4', '-c', '24']]) {
    const text = c.datagrams.map((d) => viaTool('xxd', args, d.bytes)).join('\n');
    t.deepEqual(
      parseHexDump(text).map((b) => b.toString('hex')),
      c.datagrams.map((d) => d.bytes.toString('hex')),
      args.join(' '),
    );
  }
});

test('hex: hexdump -C output (with "*" runs and the closing length line)', (t) => {
  const c = loadCapture('01_link_show');
  const text = c.datagrams.map((d) => viaTool('hexdump', ['-C'], d.bytes)).join('');
  t.true(text.includes('\n*\n'));
  t.deepEqual(
    parseHexDump(text).map((b) => b.toString('hex')),
    c.datagrams.map((d) => d.bytes.toString('hex')),
  );
});

test('hex: "0000: 01 02 ..." offset lines', (t) => {
  const d = loadCapture('02_addr_add').datagrams[2].bytes;
  const lines: string[] = [];
  for (let o = 0; o < d.length; o += 16)
    lines.push(`${o.toString(16).padStart(4, '0')}: ${[...d.subarray(o, o + 16)].map((x) => x.toString(16).padStart(2, '0')).join(' ')}`);
  t.deepEqual(parseHexDump(lines.join('\n')), [d]);
});

test('hex: a protocol can be given for hex dumps', (t) => {
  const d = loadCapture('09_nft_setup').datagrams[0];
  const [got] = parseCapture(Buffer.from(d.bytes.toString('hex')), { protocol: 12 });
  t.is(got.protocol, 12);
  t.is(got.direction, 'to-kernel');
});

test('hex: bad text -> NetlinkDecodeError naming the line, offset = character offset', (t) => {
  const text = '30000000\n3000zz00\n';
  const err = t.throws(() => parseHexDump(text), { instanceOf: NetlinkDecodeError });
  t.regex(err!.message, /line 2/);
  t.is(err!.offset, 9);
  const odd = t.throws(() => parseHexDump('abc'), { instanceOf: NetlinkDecodeError });
  t.regex(odd!.message, /line 1/);
  const gap = t.throws(() => parseHexDump('00000000: 3000 0000\n00000010: 1200 0100\n'), { instanceOf: NetlinkDecodeError });
  t.regex(gap!.message, /line 2: offset 0x10 does not follow the 4 bytes/);
  t.is(gap!.offset, 20);
});

test('hex: random text never throws anything but NetlinkDecodeError', (t) => {
  fc.assert(
    fc.property(fc.string({ unit: fc.constantFrom(...'0123456789abcdefx:| *\n\t,#/.'.split('')), maxLength: 300 }), (s) => {
      try {
        parseHexDump(s);
      } catch (e) {
        if (!(e instanceof NetlinkDecodeError)) throw e;
      }
    }),
    { numRuns: 3000 },
  );
  t.pass();
});

test('readCaptureFile: a missing file is a UsageError; binary junk is a NetlinkDecodeError at 0', (t) => {
  t.throws(() => readCaptureFile(join(tmp, 'nope.pcap')), { instanceOf: UsageError, message: /cannot read capture file .*nope\.pcap.*ENOENT/ });
  const err = t.throws(() => readCaptureFile(Buffer.from([1, 2, 3, 0, 5])), { instanceOf: NetlinkDecodeError });
  t.is(err!.offset, 0);
  t.throws(() => readCaptureFile(Buffer.from('{"datagrams": [{"hex": "xyz"}]}')), { instanceOf: NetlinkDecodeError });
  t.throws(() => readCaptureFile(Buffer.from('{"datagrams": ')), { instanceOf: NetlinkDecodeError });
});

test('readCaptureFile: capture.json as a bare array, direction computed when absent', (t) => {
  const c = loadCapture('03_prio_add');
  const arr = c.datagrams.map((d) => ({ protocol: d.protocol, hex: d.bytes.toString('hex') }));
  t.deepEqual(simplify(readCaptureFile(Buffer.from(JSON.stringify(arr)))), simplify(c.datagrams));
});

// ---- reading up to the bad bytes ----

/** Iterate a generator to its end or its error: what it yielded, and what it threw. */
function untilError<T>(g: Iterable<T>): { got: T[]; err?: unknown } {
  const got: T[] = [];
  try {
    for (const x of g) got.push(x);
  } catch (err) {
    return { got, err };
  }
  return { got };
}

test('pcapDatagrams: a file cut anywhere yields every packet that ends before the cut, then throws NetlinkDecodeError', (t) => {
  const c = loadCapture('02_addr_add');
  const file = readFileSync(join(c.dir, 'capture.pcap'));
  const ends: number[] = [];
  for (let off = 24; off < file.length; off += 16 + file.readUInt32LE(off + 8)) ends.push(off + 16 + file.readUInt32LE(off + 8));
  for (let cut = 24; cut < file.length; cut++) {
    const { got, err } = untilError(pcapDatagrams(file.subarray(0, cut)));
    const whole = ends.filter((e) => e <= cut).length;
    t.deepEqual(simplify(got), simplify(c.datagrams.slice(0, whole)), `cut at ${cut}`);
    if (cut === 24 || ends.includes(cut))
      t.is(err, undefined); // a cut between records is a valid, shorter capture
    else t.true(err instanceof NetlinkDecodeError, `cut at ${cut}`);
  }
});

test('pcapDatagrams: two pcap files concatenated yield the first file, then fail at the second header', (t) => {
  const c = loadCapture('03_prio_add');
  const file = readFileSync(join(c.dir, 'capture.pcap'));
  const { got, err } = untilError(captureDatagrams(Buffer.concat([file, file])));
  t.deepEqual(simplify(got), simplify(c.datagrams));
  t.true(err instanceof NetlinkDecodeError);
  // the second file's header read as a packet header: caplen (thiszone) 0, shorter than the nlmon header, at its data
  t.is((err as NetlinkDecodeError).offset, file.length + 16);
  // trailing garbage: the same datagrams, then the error at the garbage
  const tail = untilError(captureDatagrams(Buffer.concat([file, Buffer.from('garbage\n')])));
  t.deepEqual(simplify(tail.got), simplify(c.datagrams));
  t.is((tail.err as NetlinkDecodeError).offset, file.length);
  // the all-or-nothing reader still throws
  t.throws(() => parsePcap(Buffer.concat([file, file])), { instanceOf: NetlinkDecodeError });
});

test('pcapngDatagrams: a file cut anywhere yields every packet whose block ends before the cut', (t) => {
  const c = loadCapture('02_addr_add');
  const file = pcapng(c.datagrams, true);
  const ends = c.datagrams.map((_, i) => pcapng(c.datagrams.slice(0, i + 1), true).length);
  const blockEnds = new Set<number>();
  for (let off = 0; off < file.length; off += file.readUInt32LE(off + 4)) blockEnds.add(off + file.readUInt32LE(off + 4));
  for (let cut = 1; cut < file.length; cut++) {
    const { got, err } = untilError(pcapngDatagrams(file.subarray(0, cut)));
    t.deepEqual(simplify(got), simplify(c.datagrams.slice(0, ends.filter((e) => e <= cut).length)), `cut at ${cut}`);
    if (blockEnds.has(cut)) t.is(err, undefined, `cut at ${cut}`);
    else t.true(err instanceof NetlinkDecodeError, `cut at ${cut}`);
  }
});

test('hexDumpDatagrams: the datagrams before a bad line are yielded; one being read there is not', (t) => {
  const a = untilError(hexDumpDatagrams('30000000\n3000zz00\n'));
  t.deepEqual(
    a.got.map((b) => b.toString('hex')),
    ['30000000'],
  );
  t.regex(String((a.err as Error).message), /line 2/);
  // offset lines: the first datagram ends where the second starts at offset 0, even if that line is bad
  const b = untilError(hexDumpDatagrams('00000000: 3000 0000 1200 0100\n00000008: 0000 0000\n00000000: 30zz\n'));
  t.deepEqual(
    b.got.map((x) => x.toString('hex')),
    ['300000001200010000000000'],
  );
  t.true(b.err instanceof NetlinkDecodeError);
  // a block still being read when the bad line comes is dropped
  const c = untilError(hexDumpDatagrams('3000\n0000\n\n1200\nzz\n'));
  t.deepEqual(
    c.got.map((x) => x.toString('hex')),
    ['30000000'],
  );
  t.true(c.err instanceof NetlinkDecodeError);
  t.throws(() => parseHexDump('30000000\n3000zz00\n'), { instanceOf: NetlinkDecodeError });
});

test('capture JSON: a protocol that is not an integer 0-31, or an unknown direction, is refused at its datagram', (t) => {
  const c = loadCapture('03_prio_add');
  const good = { protocol: 0, direction: c.datagrams[0].direction, hex: c.datagrams[0].bytes.toString('hex') };
  const hex = c.datagrams[1].bytes.toString('hex');
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ...['"abc"', '-1', '0.5', '99', '32', '1e300', 'null', 'true', '[0]'].map((p): [string, Record<string, unknown>, RegExp] => [
      `protocol ${p}`,
      { protocol: JSON.parse(p), hex },
      /"protocol".*not a netlink protocol number \(an integer 0-31\)/,
    ]),
    ...['"sideways"', '1', 'null', '"TO-KERNEL"'].map((d): [string, Record<string, unknown>, RegExp] => [
      `direction ${d}`,
      { direction: JSON.parse(d), hex },
      /"direction".*neither "to-kernel" nor "from-kernel"/,
    ]),
  ];
  for (const [what, bad, msg] of cases) {
    for (const text of [JSON.stringify({ command: 'x', datagrams: [good, bad] }, null, 2), JSON.stringify([good, bad])]) {
      const { got, err } = untilError(captureJsonDatagrams(text));
      t.deepEqual(simplify(got), simplify(c.datagrams.slice(0, 1)), what);
      t.true(err instanceof NetlinkDecodeError, what);
      t.regex((err as Error).message, /datagram 1 /, what);
      t.regex((err as Error).message, msg, what);
      // the offset is where that datagram's object starts in the text
      const at = (err as NetlinkDecodeError).offset;
      t.deepEqual(JSON.parse(text.slice(at, text.indexOf('}', at) + 1)), bad, what);
      t.throws(() => parseCaptureJson(text), { instanceOf: NetlinkDecodeError }, what);
    }
  }
  // 31 and 0 are fine; an absent protocol is 0
  t.deepEqual(
    parseCaptureJson(JSON.stringify([{ protocol: 31, hex }, { hex }])).map((d) => d.protocol),
    [31, 0],
  );
});

test('capture JSON: the offset of a bad datagram follows the last "datagrams" member, past nested values and escapes', (t) => {
  const text = '{"a": {"datagrams": [1, 2]}, "s": "x\\"]}", "datagrams": [0], "datagrams": [ {"hex": "00"},\n  {"hex": "0"} ]}';
  const { got, err } = untilError(captureJsonDatagrams(text));
  t.is(got.length, 1);
  t.is(text.slice((err as NetlinkDecodeError).offset, (err as NetlinkDecodeError).offset + 12), '{"hex": "0"}');
  // deep nesting does not overflow the stack while the offset is found
  const deep = `[{"hex": "00"}, {"hex": ${'['.repeat(100000)}${']'.repeat(100000)}}]`;
  const r = untilError(captureJsonDatagrams(deep));
  t.is(r.got.length, 1);
  t.is((r.err as NetlinkDecodeError).offset, deep.indexOf('{', 1 + deep.indexOf('}')));
});

test('hex: a dump read in pieces of any size (lines cut anywhere) gives the same datagrams, or the same error at the same offset, as the whole', (t) => {
  const c = loadCapture('01_link_show');
  const dumps = [
    c.datagrams.map((d) => viaTool('xxd', ['-a'], d.bytes)).join(''),
    c.datagrams.map((d) => viaTool('xxd', ['-p'], d.bytes)).join('\n'),
    c.datagrams.map((d) => viaTool('hexdump', ['-C'], d.bytes)).join(''),
    c.datagrams.map((d) => `${d.bytes.toString('hex')}\r\n`).join(''),
  ];
  const outcome = (f: () => Buffer[]) => {
    try {
      return f().map((b) => b.toString('hex'));
    } catch (e) {
      if (!(e instanceof NetlinkDecodeError)) throw e;
      return `${e.message} @${e.offset}`;
    }
  };
  fc.assert(
    fc.property(
      fc.constantFrom(...dumps),
      fc.array(fc.integer({ min: 1, max: 97 }), { minLength: 1, maxLength: 8 }),
      fc.option(fc.nat(), { nil: undefined }),
      (text, sizes, garbleAt) => {
        // sometimes one character turned into a non-hex one: the error must be the same too
        const at = garbleAt === undefined ? -1 : garbleAt % text.length;
        const s = at < 0 ? text : `${text.slice(0, at)}z${text.slice(at + 1)}`;
        const whole = Buffer.from(s);
        const chunks = function* () {
          for (let off = 0, i = 0; off < whole.length; i++) {
            const n = sizes[i % sizes.length];
            yield Buffer.from(whole.subarray(off, off + n)); // a fresh copy each time, as a reader that reuses its buffer hands out
            off += n;
          }
        };
        t.deepEqual(
          outcome(() => parseHexDump({ size: whole.length, chunks })),
          outcome(() => parseHexDump(whole)),
        );
      },
    ),
    { numRuns: 300 },
  );
});
