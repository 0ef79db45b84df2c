/**
 * `synplug decode` on the reference captures: one JSON object per netlink
 * message, bodies in tc/ip/nft field names, errors with the kernel's
 * extended-ack text — compared with what the reference tools printed.
 */
import test from 'ava';
import fc from 'fast-check';
import { NetlinkDecodeError } from '../../src/netlink/errors.js';
import { spawn } from 'node:child_process';
import { readCaptureFile } from '../../src/netlink/pcap.js';
import { describeCapturedDatagram, describeDatagram } from '../../src/netlink/describe.js';
import '../../src/tc/index.js';
import '../../src/iptables/index.js';
import '../../src/netlink/route/index.js';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { CAPTURES_DIR, captureNames, loadCapture } from '../helpers/captures.js';
import { pcapng } from '../helpers/pcapng.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** One JSON line the CLI prints, with the fields these tests read. */
interface Line {
  [field: string]: unknown;
  type?: string;
  protocol?: string;
  body?: Record<string, unknown>;
  /** an NLMSG_ERROR's fields, or (the last line under --json) the error's sentence */
  error?: string | Record<string, unknown>;
  exitCode?: number;
}

/** CLI processes allowed at once: each is a node + tsx start; dozens at once on 2 cores stall every test past ava's timeout. */
const MAX_CLI = 2;
let running = 0;
const waiting: Array<() => void> = [];

/** Run the CLI (from source) and parse its JSON lines; at most MAX_CLI run at a time. */
async function decode(args: string[], input?: Buffer): Promise<{ code: number | null; lines: Line[]; stderr: string }> {
  // a slot is handed straight to the next waiter, so no newcomer slips in between
  if (running >= MAX_CLI) await new Promise<void>((go) => waiting.push(go));
  else running++;
  try {
    return await runCli(args, input);
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

function runCli(args: string[], input?: Buffer): Promise<{ code: number | null; lines: Line[]; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['--import=tsx', join(ROOT, 'src/cli/bin.ts'), 'decode', ...args], { cwd: ROOT });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => {
      out += d;
    });
    p.stderr.on('data', (d) => {
      err += d;
    });
    p.on('close', (code) =>
      resolve({
        code,
        lines: out.trim()
          ? out
              .trim()
              .split('\n')
              .map((l) => JSON.parse(l))
          : [],
        stderr: err,
      }),
    );
    p.stdin.end(input ?? '');
  });
}

/** What the CLI prints for a capture, computed in-process with the same functions. */
function described(name: string) {
  return readCaptureFile(join(CAPTURES_DIR, name, 'capture.pcap')).flatMap((d, i) => {
    const r = describeCapturedDatagram(d.protocol, d.bytes, d.direction);
    if (r.trailing) throw new Error(`${name}: datagram ${i} has trailing bytes`);
    return r.messages.map((m) => ({ datagram: i, direction: d.direction, ...m }));
  });
}

test('every capture decodes, one object per message, nothing undecoded', (t) => {
  for (const name of captureNames()) {
    const lines = described(name);
    const c = loadCapture(name);
    t.is(new Set(lines.map((l) => l.datagram)).size, c.datagrams.length, name);
    t.false(
      lines.some((l) => l.decode_error || l.raw),
      `${name}: ${JSON.stringify(lines.find((l) => l.decode_error || l.raw))}`,
    );
  }
});

test('the CLI prints exactly those objects', async (t) => {
  const r = await decode([join(CAPTURES_DIR, '13_class_dump', 'capture.pcap')]);
  t.is(r.code, 0, r.stderr);
  t.deepEqual(r.lines, JSON.parse(JSON.stringify(described('13_class_dump'))));
});

test('extended-ack texts of the failed tc commands appear as the tool printed them', (t) => {
  for (const name of ['04_prio_add_again', '16_bad_kind', '17_del_missing']) {
    const c = loadCapture(name);
    const printed = /Error: (.*?)\.?\n/.exec(c.printed)![1];
    const errs = described(name).filter((l) => l.type === 'NLMSG_ERROR' && l.error!.errno !== 0);
    t.is(errs.length, 1, name);
    t.is(errs[0].error!.extack!.replace(/\.$/, ''), printed, name);
    t.is(errs[0].error!.request, c.command.includes(' del ') ? 'RTM_DELQDISC' : 'RTM_NEWQDISC');
  }
});

test('the qdisc dump of step 11 shows the plug holding one 74-byte SYN, as tc printed', (t) => {
  const lines = described('11_qdisc_dump_stats') as Line[];
  const plug = lines.find((l) => l.type === 'RTM_NEWQDISC' && l.body?.kind === 'plug');
  t.truthy(plug);
  if (!plug?.body) return;
  t.is(plug.body.handle, '40:');
  t.is(plug.body.parent, '1:4');
  // tc printed: "qdisc plug 40: parent 1:4 ... backlog 74b 1p requeues 0"
  t.regex(loadCapture('11_qdisc_dump_stats').printed, /qdisc plug 40: parent 1:4 \n.*\n backlog 74b 1p/);
  t.is(plug.body.backlog, 74);
  t.is(plug.body.qlen, 1);
});

test('the nft list of step 14 shows the rule of rules.nft', (t) => {
  const lines = described('14_nft_list') as Line[];
  t.true(lines.every((l) => l.protocol === 'NETLINK_NETFILTER'));
  t.true(lines.some((l) => l.type === 'NFT_MSG_NEWCHAIN' && l.body?.hook === 'output' && l.body?.type === 'route'));
  t.true(lines.some((l) => l.type === 'NFT_MSG_NEWRULE'));
});

test('a hex dump on stdin, and capture.json, decode the same as the pcap', async (t) => {
  const c = loadCapture('03_prio_add');
  const hex = c.datagrams.map((d) => d.bytes.toString('hex')).join('\n');
  const [hexRun, jsonRun] = await Promise.all([decode(['-'], Buffer.from(hex)), decode([join(CAPTURES_DIR, '03_prio_add', 'capture.json')])]);
  const fromPcap = JSON.parse(JSON.stringify(described('03_prio_add')));
  t.deepEqual(hexRun.lines, fromPcap);
  t.deepEqual(jsonRun.lines, fromPcap);
});

test('a missing file: exit 2; garbage: exit 3 with the byte offset', async (t) => {
  const missing = await decode(['/nonexistent/capture.pcap']);
  t.is(missing.code, 2);
  t.regex(missing.stderr, /cannot read/);
  const garbage = await decode(['-'], Buffer.from('0a000000ffff'));
  t.is(garbage.code, 3, garbage.stderr);
  t.regex(garbage.stderr, /at byte \d+/);
});

const tmp = mkdtempSync(join(tmpdir(), 'synplug-decode-'));
test.after.always(() => rmSync(tmp, { recursive: true, force: true }));

/** What the CLI prints for the first `n` datagrams of a capture (from the intact file). */
const firstDatagrams = (name: string, n: number) => JSON.parse(JSON.stringify(described(name).filter((l) => l.datagram < n)));

// One test per case (not one Promise.all of many CLI processes): each case finishes on
// its own, so a loaded machine sees steady progress instead of one long silent test.
{
  const c = loadCapture('03_prio_add');
  const n = c.datagrams.length;
  const pcap = readFileSync(join(CAPTURES_DIR, '03_prio_add', 'capture.pcap'));
  const ng = pcapng(c.datagrams, true);
  const truncated = join(tmp, 'truncated.pcap');
  writeFileSync(truncated, pcap.subarray(0, pcap.length - 7));
  const cases: Array<[string, string[], Buffer | undefined, number, RegExp]> = [
    ['a truncated pcap file', [truncated], undefined, n - 1, /truncated pcap: packet of \d+ bytes, \d+ left \(at byte \d+\)/],
    ['a truncated pcapng on stdin', ['-'], ng.subarray(0, ng.length - 7), n - 1, /pcapng block .* needs \d+ bytes/],
    ['two pcap files concatenated', ['-'], Buffer.concat([pcap, pcap]), n, /shorter than the 16-byte nlmon header \(at byte \d+\)/],
    ['trailing garbage after a pcap', ['-'], Buffer.concat([pcap, Buffer.from('garbage\n')]), n, new RegExp(`at byte ${pcap.length}\\)`)],
    [
      'a hex dump whose line 2 is bad',
      ['-'],
      Buffer.from(`${c.datagrams[0].bytes.toString('hex')}\nzz\n${c.datagrams[1].bytes.toString('hex')}\n`),
      1,
      /hex dump line 2: "zz"/,
    ],
  ];
  for (const [what, args, input, printed, msg] of cases) {
    test(`input that goes bad part-way (${what}): every datagram before the bad bytes is printed, then the error; exit 3`, async (t) => {
      const [plain, json] = await Promise.all([decode(args, input), decode([...args, '--json'], input)]);
      const expected = firstDatagrams('03_prio_add', printed);
      t.true(expected.length > 0, what);
      t.is(plain.code, 3, `${what}: ${plain.stderr}`);
      t.deepEqual(plain.lines, expected, what);
      t.regex(plain.stderr, /^synplug: /, what);
      t.regex(plain.stderr, msg, what);
      // --json: the same lines, then the error object
      t.is(json.code, 3, what);
      t.deepEqual(json.lines.slice(0, -1), expected, what);
      const err = json.lines[json.lines.length - 1];
      t.is(err.exitCode, 3, what);
      t.regex(String(err.error), msg, what);
    });
  }

  const good = { protocol: 0, direction: c.datagrams[0].direction, hex: c.datagrams[0].bytes.toString('hex') };
  const hex = c.datagrams[1].bytes.toString('hex');
  const bad: Array<[unknown, RegExp]> = [
    ...['abc', -1, 0.5, 99, 1e300].map((p): [unknown, RegExp] => [
      { protocol: p, hex },
      /datagram 1 has "protocol": .*, not a netlink protocol number \(an integer 0-31\)/,
    ]),
    [{ protocol: 0, direction: 'sideways', hex }, /datagram 1 has "direction": "sideways", neither "to-kernel" nor "from-kernel"/],
  ];
  bad.forEach(([d, msg], i) => {
    test(`capture.json: ${JSON.stringify(d).slice(0, 40)}: not an integer 0-31 or an unknown direction is undecodable input (exit 3), after the datagrams before it`, async (t) => {
      const f = join(tmp, `bad-${i}.json`);
      writeFileSync(f, JSON.stringify({ datagrams: [good, d] }));
      const r = await decode([f]);
      t.is(r.code, 3, r.stderr);
      t.deepEqual(r.lines, firstDatagrams('03_prio_add', 1));
      t.regex(r.stderr, msg);
    });
  });

  const hexText = Buffer.from(c.datagrams[0].bytes.toString('hex'));
  for (const p of ['abc', '-1', '0.5', '99', '1e300', '']) {
    test(`--protocol '${p}' (not 0-31) is a bad argument (exit 2), nothing printed`, async (t) => {
      const r = await decode(['-', '--protocol', p], hexText);
      t.is(r.code, 2, `${p}: ${r.stderr}`);
      t.deepEqual(r.lines, []);
      t.regex(r.stderr, /--protocol: .* is not a netlink protocol number \(0-31\)/);
    });
  }
}

test('a request padded past nlmsg_len (iproute2), a short tail, a header with nlmsg_len < 16: read as the kernel reads them, trailing bytes noted, exit 0', async (t) => {
  // Built from captured requests (no capture holds a padded one): step 01's RTM_GETLINK and step 03's RTM_NEWQDISC.
  const c01 = loadCapture('01_link_show');
  const c03 = loadCapture('03_prio_add');
  const getlink = c01.datagrams.find((d) => d.direction === 'to-kernel' && d.bytes.readUInt16LE(4) === 18)!.bytes; // RTM_GETLINK
  const newqdisc = c03.datagrams.filter((d) => d.direction === 'to-kernel').at(-1)!.bytes;
  const badHeader = Buffer.from(newqdisc);
  badHeader.writeUInt32LE(12, 0);
  const datagrams = [
    Buffer.concat([getlink, Buffer.alloc(1024)]), // the rest of a request struct, zeroed: nlmsg_len 0
    Buffer.concat([newqdisc, Buffer.from('0102030405060708', 'hex')]), // 8 bytes: a short tail
    Buffer.concat([getlink, badHeader]), // a second header with nlmsg_len 12
  ];
  const f = join(tmp, 'padded.json');
  writeFileSync(f, JSON.stringify({ datagrams: datagrams.map((d) => ({ protocol: 0, direction: 'to-kernel', hex: d.toString('hex') })) }));
  const r = await decode([f]);
  t.is(r.code, 0, r.stderr);
  // the messages print exactly as those of the unpadded captured requests
  const plain = (bytes: Buffer, i: number) =>
    JSON.parse(JSON.stringify(describeDatagram(0, bytes).map((m) => ({ datagram: i, direction: 'to-kernel', ...m }))));
  t.deepEqual(r.lines, [
    ...plain(getlink, 0),
    { datagram: 0, direction: 'to-kernel', trailing: { offset: getlink.length, length: 1024, reason: 'nlmsg_len-below-header', nlmsgLen: 0 } },
    ...plain(newqdisc, 1),
    { datagram: 1, direction: 'to-kernel', trailing: { offset: newqdisc.length, length: 8, reason: 'short-tail' } },
    ...plain(getlink, 2),
    { datagram: 2, direction: 'to-kernel', trailing: { offset: getlink.length, length: newqdisc.length, reason: 'nlmsg_len-below-header', nlmsgLen: 12 } },
  ]);
  t.is(r.lines[0].type, 'RTM_GETLINK');
  t.is(r.lines[2].type, 'RTM_NEWQDISC');
});

test('a reply with bytes past its last message is still an error (the kernel never sends one): exit 3 at the byte offset', async (t) => {
  const reply = loadCapture('01_link_show').datagrams.find((d) => d.direction === 'from-kernel')!.bytes;
  const f = join(tmp, 'padded-reply.json');
  writeFileSync(f, JSON.stringify({ datagrams: [{ protocol: 0, direction: 'from-kernel', hex: Buffer.concat([reply, Buffer.alloc(8)]).toString('hex') }] }));
  const r = await decode([f]);
  t.is(r.code, 3, r.stderr);
  t.regex(r.stderr, new RegExp(`truncated netlink header: 8 bytes left, need 16 .*at byte ${reply.length}`));
});

test('describing captured datagrams (fast-check): a request, however mangled, never throws and its trailing note covers what was not read; a reply throws only NetlinkDecodeError', (t) => {
  const captured = captureNames().flatMap((n) => loadCapture(n).datagrams);
  const mangled = fc
    .tuple(
      fc.constantFrom(...captured),
      fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }),
      fc.nat(),
      fc.uint8Array({ maxLength: 40 }),
    )
    .map(([d, flips, cut, tail]) => {
      const b = Buffer.from(d.bytes);
      for (const [at, v] of flips) b[at % b.length] = v;
      return { protocol: d.protocol, bytes: Buffer.concat([b.subarray(0, cut % (b.length + 1)), Buffer.from(tail)]) };
    });
  const random = fc.record({ protocol: fc.constantFrom(0, 4, 12), bytes: fc.uint8Array({ maxLength: 200 }).map((u) => Buffer.from(u)) });
  fc.assert(
    fc.property(fc.oneof(mangled, random), ({ protocol, bytes }) => {
      const r = describeCapturedDatagram(protocol, bytes, 'to-kernel');
      const read = r.messages.reduce((n, m) => n + ((m.len + 3) & ~3), 0);
      if (r.trailing && r.trailing.offset + r.trailing.length !== bytes.length) return false;
      if (!r.trailing && Math.min(read, bytes.length) !== bytes.length) return false;
      try {
        describeCapturedDatagram(protocol, bytes, 'from-kernel');
      } catch (e) {
        if (!(e instanceof NetlinkDecodeError)) throw e;
      }
      return true;
    }),
    { numRuns: 1500 },
  );
  t.pass();
});
