/**
 * `synplug decode`'s memory and input formats (issue #19 defect 9 and
 * deliverable 10; issue #21 item 5):
 *
 * - a 64 MB datagram of NLMSG_NOOP messages (it took 4.19 GB), and 64 MB
 *   of `xxd -p` text, are decoded with a peak RSS under 200 MB, every
 *   message printed (the child's peak
 *   RSS is measured by /usr/bin/time, its lines counted by wc; a bound on
 *   behaviour, not on time);
 * - a datagram `xxd -p` wrapped over 60-character lines decodes as that one
 *   datagram (it decoded as three bogus objects, exit 0), and the same as
 *   `xxd`'s offset form and as one line of hex;
 * - a datagram as one line of megabytes of hex decodes (a pattern that
 *   backtracked through the line overflowed the stack: an internal error);
 * - --help states each input format.
 *
 * Runs the CLI bundle (dist/bundle, `npm run build` first), the program as it ships.
 */
import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CAPTURES_DIR } from '../helpers/captures.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'dist/bundle/synplug.cjs');
const tmp = mkdtempSync(join(tmpdir(), 'synplug-decode-stream-'));
test.after.always(() => rmSync(tmp, { recursive: true, force: true }));

const decode = (args: string[]) => spawnSync(process.execPath, [BIN, 'decode', ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });

/** A pcap (LINKTYPE_NETLINK) of one datagram of `n` NLMSG_NOOP requests of 16 bytes. */
function noopPcap(n: number): Buffer {
  const file = Buffer.alloc(24);
  file.writeUInt32LE(0xa1b2c3d4, 0);
  file.writeUInt16LE(2, 4);
  file.writeUInt16LE(4, 6);
  file.writeUInt32LE(0x7fffffff, 16);
  file.writeUInt32LE(253, 20);
  const packet = Buffer.alloc(16);
  packet.writeUInt32LE(16 + n * 16, 8);
  packet.writeUInt32LE(16 + n * 16, 12);
  const sll = Buffer.alloc(16); // struct sll_header: PACKET_OUTGOING, ARPHRD_NETLINK, protocol 0 (NETLINK_ROUTE)
  sll.writeUInt16BE(4, 0);
  sll.writeUInt16BE(824, 2);
  const body = Buffer.alloc(n * 16);
  for (let i = 0; i < n; i++) {
    body.writeUInt32LE(16, i * 16); // nlmsg_len
    body.writeUInt16LE(1, i * 16 + 4); // NLMSG_NOOP
    body.writeUInt16LE(1, i * 16 + 6); // NLM_F_REQUEST
    body.writeUInt32LE(i, i * 16 + 8); // seq
  }
  return Buffer.concat([file, packet, sll, body]);
}

test('a 64 MB datagram of NOOP messages: every message printed, peak RSS under 200 MB', (t) => {
  t.timeout(15 * 60_000); // a slow machine takes longer; the bound is on memory
  t.true(existsSync(BIN), 'npm run build first');
  const n = (64 << 20) / 16;
  const pcap = join(tmp, 'noop.pcap');
  writeFileSync(pcap, noopPcap(n));
  const rss = join(tmp, 'rss');
  // through a pipe (a reader as slow as it likes), counted by wc
  const lines = execFileSync('/bin/sh', ['-c', `/usr/bin/time -f %M -o '${rss}' '${process.execPath}' '${BIN}' decode '${pcap}' | wc -l`], {
    encoding: 'utf8',
  });
  t.is(Number(lines.trim()), n);
  const peakKb = Number(readFileSync(rss, 'utf8').trim().split('\n').pop());
  t.true(peakKb > 0);
  t.true(peakKb < 200 * 1024, `peak RSS ${peakKb} kB`);
  // the first and last lines are the messages as written
  const head = execFileSync('/bin/sh', ['-c', `'${process.execPath}' '${BIN}' decode '${pcap}' | head -1`], { encoding: 'utf8' });
  t.deepEqual(JSON.parse(head), {
    datagram: 0,
    direction: 'to-kernel',
    protocol: 'NETLINK_ROUTE',
    type: 'NLMSG_NOOP',
    flags: ['NLM_F_REQUEST'],
    seq: 0,
    pid: 0,
    len: 16,
  });
  rmSync(pcap);
});

test('64 MB of xxd -p text (one datagram of 31 MiB of NOOP messages): every message printed, peak RSS under 200 MB', (t) => {
  t.timeout(15 * 60_000);
  const n = (31 << 20) / 16;
  const bin = join(tmp, 'noop.bin');
  writeFileSync(bin, noopPcap(n).subarray(24 + 16 + 16));
  const hex = join(tmp, 'noop.hex');
  execFileSync('/bin/sh', ['-c', `/usr/bin/xxd -p '${bin}' > '${hex}'`]);
  rmSync(bin);
  const rss = join(tmp, 'rss-hex');
  const lines = execFileSync('/bin/sh', ['-c', `/usr/bin/time -f %M -o '${rss}' '${process.execPath}' '${BIN}' decode '${hex}' | wc -l`], {
    encoding: 'utf8',
  });
  t.is(Number(lines.trim()), n);
  const peakKb = Number(readFileSync(rss, 'utf8').trim().split('\n').pop());
  t.true(peakKb > 0 && peakKb < 200 * 1024, `peak RSS ${peakKb} kB`);
  rmSync(hex);
});

test('one datagram of 16 MiB as a single line of hex decodes (no pattern backtracks through the line); a 10 MB line that is not hex is exit 3 naming line 1', (t) => {
  t.timeout(5 * 60_000);
  const n = (16 << 20) / 16;
  const line = join(tmp, 'one-line.hex');
  writeFileSync(
    line,
    `${noopPcap(n)
      .subarray(24 + 16 + 16)
      .toString('hex')}\n`,
  );
  const lines = execFileSync('/bin/sh', ['-c', `'${process.execPath}' '${BIN}' decode '${line}' | wc -l`], { encoding: 'utf8' });
  t.is(Number(lines.trim()), n);
  writeFileSync(line, `${'g'.repeat(10_000_000)}\n`);
  const r = decode([line]);
  t.is(r.status, 3, r.stderr);
  t.regex(r.stderr, /^synplug: hex dump line 1: "g{40}" is not a run of hex byte pairs/);
  t.false(r.stderr.includes('internal error'));
  rmSync(line);
});

test('xxd -p output (a datagram over several 60-character lines) decodes as that one datagram, as xxd and one line of hex do', (t) => {
  // the nft setup batch of the captures: one request datagram of several hundred bytes
  const capture = JSON.parse(readFileSync(join(CAPTURES_DIR, '09_nft_setup', 'capture.json'), 'utf8'));
  const hex = (capture.datagrams as Array<{ direction: string; hex: string }>).find((d) => d.direction === 'to-kernel' && d.hex.length > 200)!.hex;
  const bin = join(tmp, 'datagram.bin');
  writeFileSync(bin, Buffer.from(hex, 'hex'));
  const xxdP = execFileSync('/usr/bin/xxd', ['-p', bin], { encoding: 'utf8' });
  t.true(xxdP.trim().split('\n').length > 2, 'xxd -p wrapped it');
  t.true(
    xxdP.split('\n').every((l, i, all) => l.length === 60 || i >= all.length - 2),
    'lines of 60 characters, the last shorter',
  );
  const forms = {
    'xxd -p': xxdP,
    xxd: execFileSync('/usr/bin/xxd', [bin], { encoding: 'utf8' }),
    'one line': `${hex}\n`,
  };
  const outs = Object.entries(forms).map(([name, text]) => {
    const f = join(tmp, `${name.replace(/\W/g, '_')}.hex`);
    writeFileSync(f, text);
    const r = decode(['--protocol', '12', f]);
    t.is(r.status, 0, `${name}: ${r.stderr}`);
    return r.stdout;
  });
  const objs = outs[0]
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { datagram: number });
  t.true(objs.length > 1, 'a batch: several messages');
  t.deepEqual(new Set(objs.map((o) => o.datagram)), new Set([0]), 'all of them in one datagram');
  t.false(outs[0].includes('trailing'), 'no bytes left over');
  t.is(outs[1], outs[0]);
  t.is(outs[2], outs[0]);
  // two xxd -p dumps separated by a blank line: two datagrams
  const two = join(tmp, 'two.hex');
  writeFileSync(two, `${xxdP}\n${xxdP}`);
  const r2 = decode(['--protocol', '12', two]);
  t.is(r2.status, 0, r2.stderr);
  t.deepEqual(
    new Set(
      r2.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { datagram: number }).datagram),
    ),
    new Set([0, 1]),
  );
});

test('decode --help names each input format, and docs/cli.md (where the short help points) states each', (t) => {
  const r = spawnSync(process.execPath, [BIN, 'decode', '--help'], { encoding: 'utf8' });
  t.is(r.status, 0);
  t.regex(r.stdout.replace(/\s+/g, ' '), /an nlmon pcap\/pcapng, a capture\.json, or a hex dump; "-" reads stdin/);
  t.regex(r.stdout, /docs\/cli\.md/);
  const docs = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
  for (const re of [
    /an nlmon pcap or pcapng capture \(link type 253, each packet one datagram with its protocol\)/,
    /the fixtures' `capture\.json`/,
    /plain hex, one datagram per line/,
    /`xxd -p`, whose lines of exactly 60 hex digits continue a datagram on the next line/,
    /`xxd` and `hexdump -C`, whose offset 0 starts a datagram/,
  ]) {
    t.regex(docs, re);
  }
});
