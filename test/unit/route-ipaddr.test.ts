/**
 * src/netlink/ipaddr.ts, the one address parser and printer, against
 * glibc's inet_ntop / inet_pton (through Python's socket module): the
 * functions iproute2 (`ip`, `ss`) and nft print and read addresses with.
 * Every layer that prints an address prints it through this module, so an
 * IPv4-mapped address reads `::ffff:169.254.3.4` everywhere, as iproute2 prints it.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { UsageError } from '../../src/netlink/errors.js';
import {
  AF_INET,
  AF_INET6,
  canonicalIp,
  formatIp,
  formatIpPrefix,
  ipv4Mapped,
  isIpv4Mapped,
  parseIp,
  parseIpPrefix,
  prefixMask,
  tryParseIp,
  unmapIpv4,
} from '../../src/netlink/ipaddr.js';
import { formatIpAddress, parseIpAddress } from '../../src/netlink/route/addr.js';
import { addressText, parseAddress } from '../../src/iptables/validate.js';
import { listenerAccepts, type TcpListener } from '../../src/netlink/sockdiag.js';

/** glibc's inet_ntop of each byte string (4 or 16 bytes). */
function ntop(list: Buffer[]): string[] {
  const out = execFileSync(
    'python3',
    [
      '-c',
      [
        'import socket,sys',
        'for l in sys.stdin.read().split():',
        '  b=bytes.fromhex(l)',
        '  print(socket.inet_ntop(socket.AF_INET6 if len(b)==16 else socket.AF_INET, b))',
      ].join('\n'),
    ],
    { input: list.map((b) => b.toString('hex')).join('\n') },
  );
  return out.toString().trim().split('\n');
}

/** glibc's inet_pton of each text, as hex ("-" when it refuses the text). */
function pton(texts: string[]): string[] {
  const out = execFileSync(
    'python3',
    [
      '-c',
      [
        'import socket,sys',
        'for l in sys.stdin.read().split("\\n"):',
        '  try: print(socket.inet_pton(socket.AF_INET6 if ":" in l else socket.AF_INET, l).hex())',
        '  except OSError: print("-")',
      ].join('\n'),
    ],
    { input: texts.join('\n') },
  );
  return out.toString().trim().split('\n');
}

const MAPPED = ['::ffff:169.254.3.4', '::ffff:169.254.255.254', '::ffff:0.0.0.0', '::ffff:127.0.0.1'];

test('formatIp equals glibc inet_ntop: random and zero-heavy addresses, IPv4-mapped and -compatible ones', (t) => {
  const group = fc.oneof(fc.constant(0), fc.constant(0), fc.constant(0xffff), fc.integer({ min: 0, max: 0xffff }));
  const v6 = fc.array(group, { minLength: 8, maxLength: 8 }).map((ws) => {
    const b = Buffer.alloc(16);
    ws.forEach((w, i) => {
      b.writeUInt16BE(w, 2 * i);
    });
    return b;
  });
  const samples = fc.sample(
    fc.oneof(
      v6,
      fc.uint8Array({ minLength: 4, maxLength: 4 }).map((u) => Buffer.from(u)),
    ),
    2000,
  );
  const fixed = [
    ...MAPPED,
    '::',
    '::1',
    '::2',
    '::169.254.3.4',
    '::ffff:0:169.254.3.4',
    '1::',
    '1:0:0:1::',
    'fe80::1',
    '0:0:1::',
    '1:0:1:0:1:0:1:0',
    '2001:db8:0:0:1:0:0:1',
  ].map((s) => Buffer.from(pton([s])[0], 'hex'));
  const all = [...fixed, ...samples];
  t.deepEqual(all.map(formatIp), ntop(all));
});

test('parseIp equals glibc inet_pton, and refuses what it refuses (and zones, prefixes)', (t) => {
  const good = [
    '169.254.3.4',
    '0.0.0.0',
    '255.255.255.255',
    '::',
    '::1',
    '2001:db8::1',
    ...MAPPED,
    '::169.254.3.4',
    'fe80::a:b:c:d',
    '1:2:3:4:5:6:7:8',
    '1::8',
    'ABCD::EF',
    '1:2:3:4:5:6:169.254.3.4',
    '1::169.254.3.4',
    '::ffff:0:169.254.3.4',
    'fd00::',
    '1:2:3:4:5:6:7::',
    '::2:3:4:5:6:7:8',
  ];
  t.deepEqual(
    good.map((s) => parseIp(s).bytes.toString('hex')),
    pton(good),
  );
  t.deepEqual(
    good.map((s) => parseIp(s).family),
    good.map((s) => (s.includes(':') ? AF_INET6 : AF_INET)),
  );
  const bad = [
    '',
    '169.254.3',
    '169.254.3.256',
    '169.254.03.4x',
    '1:2:3:4:5:6:7:8:9',
    '1::2::3',
    'fe80::1%lo',
    '169.254.0.1/8',
    'fd00::/8',
    ':::',
    'g::1',
    ' 169.254.3.4',
  ];
  for (const b of bad) {
    t.throws(() => parseIp(b), { instanceOf: UsageError, message: `'${b}' is not an IPv4 or IPv6 address` }, b);
    t.is(tryParseIp(b), undefined, b);
  }
  // the zone is refused although glibc's pton has no notion of it; the others glibc refuses too
  t.deepEqual(
    pton(bad.filter((b) => b !== '' && !b.includes('%'))).filter((x) => x !== '-'),
    [],
  );
});

test('IPv4-mapped text is ::ffff:a.b.c.d in every layer, as iproute2 prints it', (t) => {
  for (const text of MAPPED) {
    const bytes = parseIp(text).bytes;
    const [glibc] = ntop([bytes]);
    t.is(glibc, text);
    t.is(formatIp(bytes), text);
    t.is(formatIpAddress(bytes), text); // route/ (ip addr, links)
    t.is(addressText(bytes), text); // the nftables layer (show ruleset)
    t.is(canonicalIp(text.toUpperCase()), text);
    t.true(isIpv4Mapped(bytes));
    t.deepEqual(unmapIpv4(bytes), Buffer.from(text.slice(7).split('.').map(Number)));
    t.deepEqual(ipv4Mapped(unmapIpv4(bytes)!), bytes);
  }
  t.false(isIpv4Mapped(parseIp('::169.254.3.4').bytes));
  t.is(unmapIpv4(parseIp('169.254.3.4').bytes), undefined);
  // the parsers of each layer read the same bytes
  t.deepEqual(parseAddress('::ffff:169.254.3.4').bytes, parseIp('::ffff:169.254.3.4').bytes);
  t.deepEqual(parseIpAddress('::ffff:169.254.3.4').bytes, parseIp('::ffff:169.254.3.4').bytes);
  // sock_diag: an IPv4 listener accepts the mapped form of its address and back
  const l = (family: 'inet' | 'inet6', address: string): TcpListener => ({
    family,
    address,
    port: 80,
    interface: 0,
    cookie: '1',
    inode: 1,
    uid: 0,
    recvQ: 0,
    sendQ: 0,
    v6only: false,
  });
  t.true(listenerAccepts(l('inet6', '::ffff:169.254.255.254'), '169.254.255.254'));
  t.true(listenerAccepts(l('inet', '169.254.255.254'), '::ffff:169.254.255.254'));
});

test('addressText: other lengths print as 0x hex (raw set data), not as an address', (t) => {
  t.is(addressText(Buffer.from([1, 2, 3])), '0x010203');
  t.is(addressText(Buffer.alloc(0)), '0x');
});

test('parseIpPrefix: address/len, a separate prefix length, defaults and refusals', (t) => {
  t.like(parseIpPrefix('169.254.0.1/24'), { version: 4, prefixlen: 24, prefixGiven: true });
  t.is(parseIpPrefix('169.254.0.1/24').bytes.toString('hex'), 'a9fe0001');
  t.like(parseIpPrefix('fd00::1'), { version: 6, prefixlen: 128, prefixGiven: false });
  t.like(parseIpPrefix('169.254.255.254', 16), { prefixlen: 16, prefixGiven: true });
  t.like(parseIpPrefix('fd00::/8', 8), { prefixlen: 8 });
  t.like(parseIpPrefix('::ffff:169.254.3.4/96'), { version: 6, prefixlen: 96 });
  t.throws(() => parseIpPrefix('169.254.0.1/33'), { instanceOf: UsageError, message: 'prefix length 33 is out of range for IPv4 (0-32)' });
  t.throws(() => parseIpPrefix('fd00::/129'), { instanceOf: UsageError, message: 'prefix length 129 is out of range for IPv6 (0-128)' });
  t.throws(() => parseIpPrefix('169.254.0.1/x'), { instanceOf: UsageError, message: "'169.254.0.1/x': the prefix length 'x' is not a number" });
  t.throws(() => parseIpPrefix('169.254.0.1/24', 16), { instanceOf: UsageError, message: "'169.254.0.1/24' disagrees with prefixlen 16" });
  t.throws(() => parseIpPrefix('nope/8'), { instanceOf: UsageError });
  t.is(formatIpPrefix(parseIp('fd00::').bytes, 8), 'fd00::/8');
});

test('prefixMask: network-order masks, as the kernel builds them (inet_make_mask / ipv6_addr_prefix)', (t) => {
  t.is(prefixMask(4, 0).toString('hex'), '00000000');
  t.is(prefixMask(4, 24).toString('hex'), 'ffffff00');
  t.is(prefixMask(4, 17).toString('hex'), 'ffff8000');
  t.is(prefixMask(4, 32).toString('hex'), 'ffffffff');
  t.is(prefixMask(6, 8).toString('hex'), 'ff' + '00'.repeat(15));
  t.is(prefixMask(6, 96).toString('hex'), 'ff'.repeat(12) + '00000000');
  t.is(prefixMask(6, 128).toString('hex'), 'ff'.repeat(16));
  t.throws(() => prefixMask(4, 33), { instanceOf: UsageError });
  t.throws(() => prefixMask(6, -1), { instanceOf: UsageError });
});

test("property: text -> bytes -> text is glibc's canonical text, and parsing it again gives the same bytes", (t) => {
  const bytes = fc.sample(
    fc.oneof(fc.uint8Array({ minLength: 16, maxLength: 16 }), fc.uint8Array({ minLength: 4, maxLength: 4 })).map((u) => Buffer.from(u)),
    500,
  );
  const texts = bytes.map(formatIp);
  t.deepEqual(texts, ntop(bytes));
  t.deepEqual(
    texts.map((s) => parseIp(s).bytes),
    bytes,
  );
});
