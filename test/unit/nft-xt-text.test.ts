/**
 * xt compat extensions whose libxtables translation (as nft 1.0.6 lists it) means
 * something else than the kernel's match: synplug prints those raw (xtText gives
 * undefined, or `{ raw: why }` where nft's words exist but `nft -f` would read them
 * as another rule), never the translation. The listings themselves are checked live
 * against nft (test/live/nft-ruleset-roundtrip.test.ts); these are the variants
 * the live rows cannot load or do not reach. Structs in host byte order.
 */
import test from 'ava';
import { formatRulesetJson, formatRulesetText, type NftRuleset } from '../../src/iptables/format.js';
import type { Expr } from '../../src/iptables/expr/index.js';
import { xtText } from '../../src/iptables/xt.js';

const LE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const u16 = (n: number): string => {
  const b = Buffer.alloc(2);
  LE ? b.writeUInt16LE(n) : b.writeUInt16BE(n);
  return b.toString('hex');
};
const u32 = (n: number): string => {
  const b = Buffer.alloc(4);
  LE ? b.writeUInt32LE(n) : b.writeUInt32BE(n);
  return b.toString('hex');
};
const match = (ext: string, info: string, family = 'ip'): ReturnType<typeof xtText> => xtText('match', { ext, rev: 0, info }, { family });

/** The reason of a raw translation (`{ raw: why }`), undefined for text or none. */
const why = (x: ReturnType<typeof xtText>): string | undefined => (typeof x === 'object' && 'raw' in x ? x.raw : undefined);

test('ecn: the IP field in ip6tables (libxt_ecn writes `ip ecn`), and an inverted TCP flag (`tcp flags != cwr` compares the whole byte): raw, saying why (no reason before)', (t) => {
  // struct xt_ecn_info { operation, invert, ip_ect, tcp.ect }
  t.is(match('ecn', '01000100', 'ip'), 'ip ecn ect1');
  t.regex(why(match('ecn', '01000100', 'ip6')) ?? '', /^nft 1\.0\.6 lists "ip ecn \.\.\.", an IPv4 field, which nft -f refuses in an ip6 table$/);
  t.regex(why(match('ecn', '01010200', 'ip6')) ?? '', /"ip ecn \.\.\."/);
  t.is(match('ecn', '20000000', 'ip6'), 'tcp flags cwr');
  t.regex(why(match('ecn', '20200000')) ?? '', /^nft 1\.0\.6 lists "tcp flags != \.\.\.", every part inverted, comparing the whole byte: -m ecn tests a bit$/);
  // an invert of the IP part only: libxt_ecn inverts every part, the flag's too
  t.regex(why(match('ecn', '21010100')) ?? '', /"tcp flags != \.\.\.", every part inverted/);
  t.is(match('ecn', '01010100'), 'ip ecn != ect1');
});

test("regression: --ctstate with SNAT or DNAT beside other states, both, or inverted (nft lists `ct status snat` alone, with --ctstatus's !): raw saying why (no reason before); SNAT, DNAT, UNTRACKED alone as nft lists them", (t) => {
  // struct xt_conntrack_mtinfo3: match_flags at 146, invert_flags at 148, state_mask at 150 (XT_CONNTRACK_STATE 1, XT_CONNTRACK_STATUS 64)
  const ct = (state: number, invert = 0, status?: number): ReturnType<typeof xtText> => {
    const b = Buffer.alloc(168);
    const w = (at: number, n: number): void => void Buffer.from(u16(n), 'hex').copy(b, at);
    w(146, status === undefined ? 1 : 1 | 64);
    w(148, invert);
    w(150, state);
    if (status !== undefined) w(152, status);
    return xtText('match', { ext: 'conntrack', rev: 3, info: b.toString('hex') }, { family: 'ip' });
  };
  const mixed = /^nft 1\.0\.6 lists "ct status snat" \(or dnat\) alone, leaving the other states out$/;
  t.regex(why(ct(64 | 8)) ?? '', mixed, 'SNAT,NEW');
  t.regex(why(ct(128 | 256)) ?? '', mixed, 'DNAT,UNTRACKED');
  t.regex(why(ct(64 | 128)) ?? '', mixed, 'SNAT,DNAT');
  const inverted = /^nft 1\.0\.6 lists "ct status snat" \(or dnat\) with the ! of --ctstatus, not of --ctstate$/;
  t.regex(why(ct(128, 1)) ?? '', inverted, '! --ctstate DNAT');
  t.regex(why(ct(64, 64, 4)) ?? '', inverted, '--ctstate SNAT ! --ctstatus ASSURED');
  t.is(ct(64), 'ct status snat');
  t.is(ct(128), 'ct status dnat');
  t.is(ct(256), 'ct state untracked');
  t.is(ct(256, 1), 'ct state ! untracked');
});

test("regression: -m rpfilter, -m cluster, ip6tables' --hbh-len and -m hbh (raw with no reason before): raw, saying what nft 1.0.6 lists and why that is another rule", (t) => {
  // struct xt_rpfilter_info { __u8 flags; }: XT_RPFILTER_LOOSE 1, _VALID_MARK 2, _ACCEPT_LOCAL 4, _INVERT 8
  t.regex(why(match('rpfilter', '00')) ?? '', /^nft 1\.0\.6 lists "fib saddr \.\.\.": it passes a source routed as broadcast, -m rpfilter unicast only$/);
  t.regex(why(match('rpfilter', '0f')) ?? '', /routed as broadcast/);
  t.regex(
    why(match('rpfilter', '00', 'ip6')) ?? '',
    /^nft 1\.0\.6 lists "fib saddr \.\.\.": it fails a source :: \(but ICMPv6 to link-local\), -m rpfilter passes it$/,
  );
  // --accept-local alone nft lists as `xt match rpfilter`
  t.is(why(match('rpfilter', '04')), 'nft 1.0.6 lists it as "xt match rpfilter", which nft -f cannot read');
  // struct xt_cluster_match_info { __u32 total_nodes, node_mask, hash_seed, flags; }
  t.regex(
    why(match('cluster', u32(2) + u32(1) + u32(7) + u32(0))) ?? '',
    /^nft 1\.0\.6 lists "jhash \.\.\. eq N": node N as hash N, where -m cluster hashes it to N-1$/,
  );
  t.regex(
    why(match('cluster', u32(4) + u32(5) + u32(7) + u32(0))) ?? '',
    /^nft 1\.0\.6 lists "jhash \.\.\. meta pkttype set host": every matched packet, -m cluster multicast ones$/,
  );
  // struct ip6t_opts { __u32 hdrlen; __u8 flags, invflags; __u16 opts[16]; __u8 optsnr; }: IP6T_OPTS_LEN 1, _OPTS 2
  const hbh = (flags: number, inv = 0): ReturnType<typeof xtText> => match('hbh', `${u32(8)}0${flags}0${inv}${'00'.repeat(34)}`, 'ip6');
  t.regex(why(hbh(1)) ?? '', /^nft 1\.0\.6 lists "hbh hdrlength N", the field \(bytes \/ 8 - 1\), where --hbh-len counts bytes$/);
  t.regex(why(hbh(1, 1)) ?? '', /--hbh-len counts bytes/);
  t.is(why(hbh(0)), 'nft 1.0.6 lists it as "xt match hbh", which nft -f cannot read');
  t.is(why(hbh(3)), 'nft 1.0.6 lists it as "xt match hbh", which nft -f cannot read');
});

test("regression: ip6tables' -m ah (raw with no reason before) as libip6t_ah writes it (`ah spi 5`, a bare one `meta l4proto ah`); --ahlen and --ahres raw, saying why", (t) => {
  // struct ip6t_ah { __u32 spis[2]; __u32 hdrlen; __u8 hdrres; __u8 invflags; }: IP6T_AH_INV_SPI 1, _LEN 2
  const ah = (lo: number, hi: number, hdrlen = 0, res = 0, inv = 0): ReturnType<typeof xtText> =>
    match('ah', `${u32(lo)}${u32(hi)}${u32(hdrlen)}0${res}0${inv}0000`, 'ip6');
  t.is(ah(5, 5), 'ah spi 5');
  t.is(ah(5, 9), 'ah spi 5-9');
  t.is(ah(5, 5, 0, 0, 1), 'ah spi != 5');
  t.is(ah(0, 0xffffffff), 'meta l4proto ah');
  t.is(why(ah(0, 0xffffffff, 0, 0, 1)), 'nft 1.0.6 lists "meta l4proto ah", every AH packet, where ! --ahspi 0:4294967295 matches none');
  t.deepEqual(ah(9, 5), {
    text: 'ah spi 9-5',
    problem: 'a range whose first end is past its last: nft -f cannot read this back ("Range has zero or negative size")',
  });
  t.regex(why(ah(5, 9, 4)) ?? '', /^nft 1\.0\.6 lists "ah hdrlength N", the field \(bytes \/ 4 - 2\), where --ahlen counts bytes$/);
  t.regex(why(ah(0, 0xffffffff, 16, 0, 2)) ?? '', /--ahlen counts bytes/);
  t.is(why(ah(0, 0xffffffff, 0, 1)), 'nft 1.0.6 lists "ah reserved 1", where --ahres matches reserved bits zero');
  // ip's struct ipt_ah is esp's
  t.is(match('ah', `${u32(5)}${u32(5)}00`), 'ah spi 5');
});

/** `fn` with the process's time zone `tz` (Node reads TZ again when it is set). */
function inZone<T>(tz: string, fn: () => T): T {
  const before = process.env.TZ;
  process.env.TZ = tz;
  try {
    return fn();
  } finally {
    if (before === undefined) delete process.env.TZ;
    else process.env.TZ = before;
  }
}

test.serial(
  'time: printed only where this process keeps UTC (nft -f reads meta time, hour and day in its own time zone; xt_time counts UTC); elsewhere raw, naming the zone',
  (t) => {
    const time = (dates: [number, number], hours: [number, number], weekdays = 0xfe): string =>
      u32(dates[0]) + u32(dates[1]) + u32(hours[0]) + u32(hours[1]) + u32(0xfffffffe) + weekdays.toString(16).padStart(2, '0') + '00';
    const ALL: [number, number] = [0, 0x7fffffff];
    const DAY: [number, number] = [0, 86399];
    inZone('UTC', () => {
      t.is(match('time', time(ALL, [28800, 61200])), ' meta hour "08:00:00"-"17:00:00"');
      t.is(match('time', time(ALL, DAY, 0x02)), ' meta day 1');
      t.is(match('time', time([1704067200, 1735689600], DAY)), 'meta time "2024-01-01 00:00:00"-"2025-01-01 00:00:00"');
    });
    inZone('Europe/Berlin', () => {
      for (const info of [time(ALL, [28800, 61200]), time(ALL, DAY, 0x02), time([1704067200, 1735689600], DAY)])
        t.regex(
          String((match('time', info) as { raw: string }).raw),
          /^match time counts UTC; nft -f would read its times in this process's time zone, UTC\+0[12]:00$/,
        );
    });
    // Europe/London is UTC in winter only: a date in its summer is read an hour off
    inZone('Europe/London', () => {
      t.is(match('time', time([1704067200, 1704153600], DAY)), 'meta time "2024-01-01 00:00:00"-"2024-01-02 00:00:00"');
      t.deepEqual(match('time', time([1704067200, 1719792000], DAY)), {
        raw: "match time counts UTC; nft -f would read its times in this process's time zone, UTC+01:00",
      });
    });
    inZone('America/St_Johns', () => {
      t.regex(String((match('time', time(ALL, [28800, 61200])) as { raw: string }).raw), /UTC-0[23]:30$/);
    });
  },
);

test.serial('time: --kerneltz, --contiguous where it changes the day checked (weekdays, over midnight) and --monthdays (nft lists xt match time) raw', (t) => {
  // struct xt_time_info { date_start, date_stop, daytime_start, daytime_stop, monthdays_match; weekdays_match, flags }
  const time = (flags: number, monthdays = 0xfffffffe, weekdays = 0xfe, [start, stop] = [36000, 43200]): string =>
    u32(0) + u32(0x7fffffff) + u32(start) + u32(stop) + u32(monthdays) + weekdays.toString(16).padStart(2, '0') + flags.toString(16).padStart(2, '0');
  const before = process.env.TZ;
  process.env.TZ = 'UTC';
  t.teardown(() => {
    if (before === undefined) delete process.env.TZ;
    else process.env.TZ = before;
  });
  t.is(match('time', time(0)), ' meta hour "10:00:00"-"12:00:00"');
  t.is(match('time', time(1)), undefined);
  t.is(match('time', time(0, 0x20)), undefined);
  // XT_TIME_CONTIGUOUS: xt_time.c looks at it only for the weekday of a period over midnight
  t.is(match('time', time(2)), ' meta hour "10:00:00"-"12:00:00"');
  t.is(match('time', time(2, undefined, 0x02)), ' meta hour "10:00:00"-"12:00:00" meta day 1');
  t.is(match('time', time(2, undefined, 0xfe, [79200, 7200])), ' meta hour "22:00:00"-"02:00:00"');
  t.is(match('time', time(2, undefined, 0x02, [79200, 7200])), undefined);
  t.is(match('time', time(0, undefined, 0x02, [79200, 7200])), ' meta hour "22:00:00"-"02:00:00" meta day 1');
});

test('hashlimit: a meter as libxt_hashlimit writes it; no key, ports after no tcp match, --hashlimit-rate-match, an unknown mode bit or a name nft could not print: raw', (t) => {
  // struct xt_hashlimit_mtinfo3 { name[255]; (pad) cfg3 { u64 avg, burst; u32 mode, size, max, gc_interval, expire, interval; u8 srcmask, dstmask } }
  const u64 = (n: bigint): string => {
    const b = Buffer.alloc(8);
    LE ? b.writeBigUInt64LE(n) : b.writeBigUInt64BE(n);
    return b.toString('hex');
  };
  const hl = (mode: number, { name = 'h', avg = 200000n, burst = 5n, expire = 10000, masks = '2020' } = {}): string =>
    Buffer.from(name).toString('hex').padEnd(512, '0') + u64(avg) + u64(burst) + u32(mode) + u32(0).repeat(3) + u32(expire) + u32(0) + masks + '0'.repeat(12);
  const m = (info: string, family = 'ip', l4?: string): ReturnType<typeof xtText> => xtText('match', { ext: 'hashlimit', rev: 3, info }, { family, l4 });
  t.is(m(hl(0x04)), 'meter h { ip saddr timeout 10s limit rate 5/second }');
  t.is(m(hl(0x04 | 0x10, { burst: 9n, expire: 1000, masks: '1820' })), 'meter h { ip saddr and 255.255.255.0 limit rate over 5/second burst 9 packets }');
  t.is(
    m(hl(0x05, { masks: '4143' }), 'ip6'),
    'meter h { ip6 daddr and ffff:ffff:ffff:ffff:e000:0000:0000:0000 . ip6 saddr and ffff:ffff:ffff:ffff:8000:0000:0000:0000 timeout 10s limit rate 5/second }',
  );
  t.is(m(hl(0x0a), 'ip', 'tcp'), 'meter h { tcp dport . tcp sport timeout 10s limit rate 5/second }');
  t.is(m(hl(0x0a), 'ip', 'udp'), undefined);
  t.is(m(hl(0x0a)), undefined);
  t.is(m(hl(0)), undefined);
  t.is(m(hl(0x10 | 0x20)), undefined);
  t.is(m(hl(0x04 | 0x40)), undefined);
  t.is(m(hl(0x04, { name: 'a b' })), undefined);
  t.is(m(hl(0x04, { avg: 0n })), undefined);
});

test('connlabel: by number, with --set; inverted (which matches a packet without conntrack, where `ct label` breaks) or a bit past 127 raw', (t) => {
  // struct xt_connlabel_mtinfo { __u16 bit; __u16 options; }: XT_CONNLABEL_OP_INVERT 1, XT_CONNLABEL_OP_SET 2
  t.is(match('connlabel', u16(5) + u16(0)), 'ct label 5');
  t.is(match('connlabel', u16(127) + u16(2)), 'ct label set 127 ct label 127');
  t.deepEqual(match('connlabel', u16(5) + u16(1)), {
    raw: 'nft 1.0.6 lists "ct label and N != N": no match without conntrack, where ! --label matches',
  });
  t.is(match('connlabel', u16(5) + u16(3)), undefined);
  t.is(match('connlabel', u16(128) + u16(0)), undefined);
});

test('TEE: the gateway as a number, a device name nft could not print raw', (t) => {
  const tee = (gw: string, oif: string, family = 'ip'): ReturnType<typeof xtText> =>
    xtText('target', { ext: 'TEE', rev: 1, info: gw.padEnd(32, '0') + Buffer.from(oif).toString('hex').padEnd(32, '0') + '0'.repeat(16) }, { family });
  t.is(tee('7f000001', ''), 'dup to 127.0.0.1');
  t.is(tee('7f000005', 'lo'), 'dup to 127.0.0.5 device lo');
  t.is(tee(`fd00${'0'.repeat(26)}05`, 'eth0', 'ip6'), 'dup to fd00::5 device eth0');
  t.is(tee('7f000005', 'a b'), undefined);
});

test('dccp: some of the types 11-15 without INVALID (which libxt_dccp writes as one `10-15`): raw', (t) => {
  // struct xt_dccp_info { dpts[2], spts[2], flags, invflags, typemask; option }
  const dccp = (types: number): string => u16(0).repeat(4) + u16(4) + u16(0) + u16(types) + '00';
  t.is(match('dccp', dccp(0x0001)), 'dccp type request');
  t.is(match('dccp', dccp(0xfc03)), 'dccp type { request, response, 10-15 }');
  t.is(match('dccp', dccp(0x0801)), undefined);
});

test("ebtables' ip match: --ip-tos (libebt_ip writes it as `ip dscp`) raw; addresses under a mask (a prefix's length, another mask dotted), ports named by their protocol", (t) => {
  // struct ebt_ip_info { saddr, daddr, smsk, dmsk; tos, protocol, bitmask, invflags; sport[2], dport[2] }
  const ip = (tos: number, proto: number, bitmask: number, inv = 0, dport = 0): string =>
    'a9fe0001' +
    '00000000' +
    'ffff0000' +
    '00000000' +
    [tos, proto, bitmask, inv].map((x) => x.toString(16).padStart(2, '0')).join('') +
    u16(0).repeat(2) +
    u16(dport).repeat(2);
  t.deepEqual(match('ip', ip(0x10, 0, 0x04), 'bridge'), {
    raw: `nft 1.0.6 lists "ip dscp N", the TOS byte's upper 6 bits, where --ip-tos compares the whole byte`,
  });
  t.is(match('ip', ip(0, 6, 0x01 | 0x08 | 0x20, 0, 22), 'bridge'), undefined, 'an address with bits outside its mask never matches');
  t.is(match('ip', ip(0, 6, 0x01 | 0x08 | 0x20, 0, 22).replace(/^a9fe0001/, 'a9fe0000'), 'bridge'), 'ip saddr 169.254.0.0/16 tcp dport 22');
  // a mask that is no prefix: nft's text, which nft -f refuses (a syntax error), named as a problem
  t.deepEqual(match('ip', ip(0, 6, 0x01).replace(/^a9fe0001(.{8})ffff0000/, 'a9fe0001$1ffff00ff'), 'bridge'), {
    text: 'ip saddr 169.254.0.1/255.255.0.255',
    problem: 'a mask that is no prefix (255.255.0.255): nft -f cannot read this back (a syntax error; it reads ip saddr & 255.255.0.255 == 169.254.0.1)',
  });
  // a port of an inverted protocol: libebt_ip writes `@th,16,16`
  t.is(match('ip', ip(0, 6, 0x08 | 0x20, 0x08, 22), 'bridge'), undefined);
  // an icmp type and code inverted: the kernel inverts the pair, libebt_ip each (`icmp type != 3 icmp code != 0`)
  // tos 0, protocol 1, bitmask EBT_IP_PROTO | EBT_IP_ICMP, then icmp_type[2] (in sport's place) and icmp_code[2] (dport's)
  const icmp = (inv: number, codes: string): string => `${'0'.repeat(32)}000148${inv.toString(16).padStart(2, '0')}03030000${codes}0000`;
  t.is(match('ip', icmp(0x40, '0000'), 'bridge'), undefined);
  t.is(match('ip', icmp(0x40, '00ff'), 'bridge'), 'icmp type != 3');
  t.is(match('ip', icmp(0, '0102'), 'bridge'), 'icmp type 3 icmp code 1-2');
});

test("ebtables' ip6 match: --ip6-tclass (libebt_ip6 writes `ip6 dscp` of its low bits), an inverted icmpv6 type with codes, an address outside its mask raw", (t) => {
  // struct ebt_ip6_info { saddr, daddr, smsk, dmsk (16 bytes each); tclass, protocol, bitmask, invflags; sport[2] / icmpv6_type[2], dport[2] / icmpv6_code[2] }
  const ip6 = (addr: string, mask: string, tail: string): string => addr.padEnd(32, '0') + '0'.repeat(32) + mask.padEnd(32, '0') + '0'.repeat(32) + tail;
  const m = (info: string): ReturnType<typeof xtText> => match('ip6', info, 'bridge');
  t.deepEqual(m(ip6('fd00', 'ffff0000ffff', `00000100${'0'.repeat(16)}`)), {
    text: 'ip6 saddr fd00::/ffff:0:ffff::',
    problem: 'a mask that is no prefix (ffff:0:ffff::): nft -f cannot read this back (a syntax error; it reads ip6 saddr & ffff:0:ffff:: == fd00::)',
  });
  t.is(m(ip6('fd000001', 'ffff', `00000100${'0'.repeat(16)}`)), undefined);
  t.is(m(ip6('', '', `10000400${'0'.repeat(16)}`)), undefined);
  t.is(m(ip6('', '', `003a48400101000000ff0000`)), 'icmpv6 type != 1');
  t.is(m(ip6('', '', `003a4840010100000303${'0'.repeat(4)}`)), undefined);
  t.is(m(ip6('', '', `003a4800010100000303${'0'.repeat(4)}`)), 'icmpv6 type 1 icmpv6 code 3');
  t.is(m(ip6('', '', `0006280000000000${u16(22)}${u16(22)}`)), 'ether type ip6 tcp dport 22');
  // a port of an inverted protocol: libebt_ip6 writes `@th,16,16`
  t.is(m(ip6('', '', `0006280800000000${u16(22)}${u16(22)}`)), undefined);
});

test('conntrack: SNAT with another state, SNAT and DNAT (raw, saying why), an inverted expiry, and a mask that is no prefix: raw', (t) => {
  const ct = (flags: number, invert: number, state: number, at?: [number, string]): string => {
    const b = Buffer.alloc(164);
    if (at) Buffer.from(at[1], 'hex').copy(b, at[0]);
    Buffer.from(u16(flags) + u16(invert) + u16(state), 'hex').copy(b, 146);
    return b.toString('hex');
  };
  const rev3 = (info: string): ReturnType<typeof xtText> => xtText('match', { ext: 'conntrack', rev: 3, info }, { family: 'ip' });
  t.is(rev3(ct(1, 0, 8)), 'ct state new');
  t.regex(why(rev3(ct(1, 0, 64 | 8))) ?? '', /leaving the other states out$/);
  t.regex(why(rev3(ct(1, 0, 64 | 128))) ?? '', /leaving the other states out$/);
  t.regex(why(rev3(ct(1, 1, 64))) ?? '', /with the ! of --ctstatus, not of --ctstate$/);
  t.is(rev3(ct(0x80, 0x80, 0, [128, u32(5) + u32(9)])), undefined);
  t.is(rev3(ct(4, 0, 0, [0, '7f000001' + '0'.repeat(24) + 'ff00ff00'])), undefined);
  t.is(rev3(ct(4, 0, 0, [0, '7f000001' + '0'.repeat(24) + 'ffffffff'])), 'ct original saddr 127.0.0.1');
});

test('conntrack: an address under a prefix shorter than its length (nft -f reads `ct original daddr 169.254.0.0/16` back as `ct original ip daddr 0.0.169.254`): raw, saying why', (t) => {
  const ct = (family: string, flag: number, at: number, addr: string, mask: string): ReturnType<typeof xtText> => {
    const b = Buffer.alloc(164);
    Buffer.from(addr + mask, 'hex').copy(b, at);
    Buffer.from(u16(flag) + u16(0), 'hex').copy(b, 146);
    return xtText('match', { ext: 'conntrack', rev: 3, info: b.toString('hex') }, { family });
  };
  const v4 = (hex: string): string => hex + '0'.repeat(24);
  // XT_CONNTRACK_ORIGSRC 4 at 0, ORIGDST 8 at 32, REPLSRC 16 at 64, REPLDST 32 at 96
  t.deepEqual(ct('ip', 8, 32, v4('a9fe0000'), v4('ffff0000')), {
    raw: 'ct original daddr 169.254.0.0/16: nft -f reads this prefix back as another address',
  });
  t.deepEqual(ct('ip', 16, 64, v4('7f000000'), v4('ff000000')), { raw: 'ct reply saddr 127.0.0.0/8: nft -f reads this prefix back as another address' });
  t.is(ct('ip', 16, 64, v4('7f000001'), v4('ffffffff')), 'ct reply saddr 127.0.0.1');
  const fd = (bytes: number): string => `${'ff'.repeat(bytes)}${'00'.repeat(16 - bytes)}`;
  t.deepEqual(ct('ip6', 32, 96, 'fd'.padEnd(32, '0'), fd(8)), { raw: 'ct reply daddr fd00::/64: nft -f reads this prefix back as another address' });
  t.deepEqual(ct('ip6', 4, 0, 'fd'.padEnd(32, '0'), `ff${'00'.repeat(15)}`), {
    raw: 'ct original saddr fd00::/8: nft -f reads this prefix back as another address',
  });
  t.is(ct('ip6', 4, 0, `fd${'0'.repeat(29)}1`, fd(16)), 'ct original saddr fd00::1');
});

test('conntrack: a port without --ctproto prints where the rule matched a transport protocol before it (-p tcp), as nft lists it; without one raw, saying why', (t) => {
  // XT_CONNTRACK_ORIGDST_PORT (0x200): origdst_port at 140, origdst_port_high at 156 (host order); XT_CONNTRACK_PROTO (2): l4proto at 136
  const ct = (flags: number, l4?: string): ReturnType<typeof xtText> => {
    const b = Buffer.alloc(164);
    Buffer.from(u16(80), 'hex').copy(b, 140);
    Buffer.from(u16(80), 'hex').copy(b, 156);
    if (flags & 2) Buffer.from(u16(6), 'hex').copy(b, 136);
    Buffer.from(u16(flags) + u16(0), 'hex').copy(b, 146);
    return xtText('match', { ext: 'conntrack', rev: 3, info: b.toString('hex') }, { family: 'ip', ...(l4 && { l4 }) });
  };
  t.is(ct(0x200, 'tcp'), 'ct original proto-dst 80');
  t.is(ct(0x200, 'udp'), 'ct original proto-dst 80');
  t.is(ct(0x202), 'ct original protocol 6 ct original proto-dst 80');
  const why = { raw: 'a port without --ctproto (or after ! --ctproto) or -p: nft -f cannot read it back' };
  t.deepEqual(ct(0x200), why);
  // `! --ctproto tcp --ctorigdstport 89`: nft lists `ct original protocol != 6 ct original proto-dst 89`, which nft -f refuses
  const b = Buffer.alloc(164);
  Buffer.from(u16(80), 'hex').copy(b, 140);
  Buffer.from(u16(80), 'hex').copy(b, 156);
  Buffer.from(u16(6), 'hex').copy(b, 136);
  Buffer.from(u16(0x202) + u16(2), 'hex').copy(b, 146);
  const rev3 = (l4?: string): ReturnType<typeof xtText> =>
    xtText('match', { ext: 'conntrack', rev: 3, info: b.toString('hex') }, { family: 'ip', ...(l4 && { l4 }) });
  t.deepEqual(rev3(), why);
  t.is(rev3('udp'), 'ct original protocol != 6 ct original proto-dst 80');
});

test('conntrack: a port after -p gre or another protocol nft names no header of (`meta l4proto gre`) prints as nft lists it; after --ctproto gre alone raw, saying why', (t) => {
  const ct = (proto: number, flags: number, l4Other?: boolean): ReturnType<typeof xtText> => {
    const b = Buffer.alloc(164);
    Buffer.from(u16(5), 'hex').copy(b, 140);
    Buffer.from(u16(7), 'hex').copy(b, 156);
    if (flags & 2) Buffer.from(u16(proto), 'hex').copy(b, 136);
    Buffer.from(u16(flags) + u16(0), 'hex').copy(b, 146);
    return xtText('match', { ext: 'conntrack', rev: 3, info: b.toString('hex') }, { family: 'ip', ...(l4Other && { l4Other }) });
  };
  t.is(ct(47, 0x200, true), 'ct original proto-dst 5-7');
  t.is(ct(200, 0x202, true), 'ct original protocol 200 ct original proto-dst 5-7');
  // nft -f reads the port after `ct original protocol N` only for a protocol whose header it names (tcp, esp, udplite...)
  t.is(ct(50, 0x202), 'ct original protocol 50 ct original proto-dst 5-7');
  t.deepEqual(ct(47, 0x202), { raw: '--ctproto 47, which nft names no header of, and no -p: nft -f cannot read the port back' });
  t.deepEqual(ct(47, 0x200), { raw: 'a port without --ctproto (or after ! --ctproto) or -p: nft -f cannot read it back' });
});

test('conntrack: --ctexpire (whole seconds left, 5 to 5.999), which nft lists as `ct expiration 5` and nft -f reads as 5000 ms exactly, or refuses past 2^32 ms: raw, saying why', (t) => {
  const ct = (min: number, max: number): ReturnType<typeof xtText> => {
    const b = Buffer.alloc(164);
    Buffer.from(u32(min) + u32(max), 'hex').copy(b, 128);
    Buffer.from(u16(0x80) + u16(0), 'hex').copy(b, 146);
    return xtText('match', { ext: 'conntrack', rev: 3, info: b.toString('hex') }, { family: 'ip' });
  };
  t.deepEqual(ct(5, 5), { raw: 'nft lists "ct expiration 5", read back as 5000 ms: --ctexpire matches 5 to 5.999 s' });
  t.deepEqual(ct(5, 10), { raw: 'nft lists "ct expiration 5-10", read back as 5000-10000 ms: --ctexpire matches 5 to 10.999 s' });
  t.deepEqual(ct(4294968, 4294968), { raw: 'nft lists "ct expiration 4294968", which nft -f refuses: value too large' });
  t.is(ct(6, 5), undefined);
});

test('tcp and udp: ports as libxt_tcp and libxt_udp write them; a bare match (nft 1.0.6 lists nothing, which reads back without it) raw, saying why', (t) => {
  const ports = (s: [number, number], d: [number, number]): string => u16(s[0]) + u16(s[1]) + u16(d[0]) + u16(d[1]);
  const ALL: [number, number] = [0, 0xffff];
  for (const [proto, tail] of [
    ['tcp', '00000000'],
    ['udp', '00'],
  ] as const) {
    const inv = (n: number): string => (proto === 'tcp' ? `000000${n.toString(16).padStart(2, '0')}` : n.toString(16).padStart(2, '0'));
    t.deepEqual(match(proto, ports(ALL, ALL) + tail), {
      raw: `nft 1.0.6 lists it as nothing, which reads back as no match: -m ${proto} drops non-first fragments`,
    });
    t.is(match(proto, ports(ALL, [22, 22]) + tail), `${proto} dport 22`);
    t.is(match(proto, ports([1, 2], [22, 22]) + inv(2)), `${proto} sport 1-2 ${proto} dport != 22`);
    t.is(match(proto, ports([2, 1], ALL) + tail), undefined);
  }
});

test("ebtables' nat targets: dnat and snat with their verdict; snat's --snat-arp and redirect (written without its accept and its address) raw", (t) => {
  const target = (ext: string, info: string): ReturnType<typeof xtText> => xtText('target', { ext, rev: 0, info }, { family: 'bridge' });
  // struct ebt_nat_info { mac[6]; (pad) int target }: EBT_ACCEPT -1, EBT_CONTINUE -3
  t.is(target('dnat', `0a1b2c3d4e5f0000${u32(0xfffffffd)}`), 'ether daddr set a:1b:2c:3d:4e:5f continue');
  t.is(target('snat', `0011223344550000${u32(0xffffffff)}`), 'ether saddr set 0:11:22:33:44:55 accept');
  t.is(target('snat', `0011223344550000${u32(0xffffffef)}`), undefined);
  t.is(target('redirect', u32(0xffffffff)), undefined);
});

test("ip6tables' frag, rt and mh: a bare match (nft 1.0.6 lists nothing, a rule matching every packet), --fragres, --fraglen and --rt-len raw", (t) => {
  const m = (ext: string, info: string): ReturnType<typeof xtText> => match(ext, info, 'ip6');
  // struct ip6t_frag { ids[2], hdrlen; flags, invflags }
  const frag = (lo: number, hi: number, flags: number, inv = 0): string =>
    u32(lo) + u32(hi) + u32(0) + [flags, inv].map((x) => x.toString(16).padStart(2, '0')).join('');
  t.is(m('frag', frag(5, 5, 0x01)), 'frag id 5');
  t.is(m('frag', frag(0, 0xffffffff, 0)), undefined);
  t.deepEqual(m('frag', frag(0, 0xffffffff, 0x04)), { raw: 'nft 1.0.6 lists "frag reserved 1", where --fragres matches reserved bits zero' });
  t.is(m('frag', frag(0, 0xffffffff, 0x02)), undefined);
  t.is(m('frag', frag(0, 0xffffffff, 0x10)), 'frag more-fragments 1');
  // struct ip6t_rt { rt_type, segsleft[2], hdrlen; flags, invflags; ... }
  const rt = (flags: number, inv = 0): string => u32(2) + u32(0) + u32(0xffffffff) + u32(8) + [flags, inv].map((x) => x.toString(16).padStart(2, '0')).join('');
  t.is(m('rt', rt(0x01, 0x01)), 'rt type != 2');
  t.is(m('rt', rt(0)), undefined);
  t.is(m('rt', rt(0x04)), undefined);
  // struct ip6t_mh { types[2]; invflags }
  t.is(m('mh', '00ff0000'), undefined);
  t.is(m('mh', '01030100'), 'mh type != 1-3');
});

test("ebtables' log, every level: info (nft lists no level, which nft -f reads as warn) raw; error and warning (libebt_log's names, no level of nft's) as nft lists them, named as a problem", (t) => {
  // struct ebt_log_info { __u8 loglevel; __u8 prefix[30]; (pad) __u32 bitmask; }
  const log = (level: number, prefix = 'x'): ReturnType<typeof xtText> =>
    xtText(
      'target',
      { ext: 'log', rev: 0, info: level.toString(16).padStart(2, '0') + Buffer.from(prefix).toString('hex').padEnd(62, '0') + u32(0) },
      { family: 'bridge' },
    );
  for (const [level, name] of [
    [0, 'emerg'],
    [1, 'alert'],
    [2, 'crit'],
    [5, 'notice'],
    [7, 'debug'],
  ] as const)
    t.is(log(level), `log prefix "x" level ${name} flags ether`);
  t.deepEqual(log(6), { raw: 'log level info: nft lists no level, which nft -f reads as level warn' });
  t.deepEqual(log(3), { text: 'log prefix "x" level error flags ether', problem: 'log level error: nft -f cannot read this back (its level is err)' });
  t.deepEqual(log(4), { text: 'log prefix "x" level warning flags ether', problem: 'log level warning: nft -f cannot read this back (its level is warn)' });
  t.deepEqual(log(0, 'a"b'), { text: 'log prefix "a"b" level emerg flags ether', problem: `log prefix "a\\"b" holds a '"': nft -f cannot read this back` });
});

test('LOG and nflog: a prefix holding `"` as nft lists it (`log prefix "a"b"`), named as a problem (nft -f cannot read it back)', (t) => {
  // struct xt_log_info { level; logflags; prefix[30] }
  const LOG = (prefix: string): ReturnType<typeof xtText> =>
    xtText('target', { ext: 'LOG', rev: 0, info: `0400${Buffer.from(prefix).toString('hex').padEnd(60, '0')}` }, { family: 'ip' });
  t.is(LOG('ab'), 'log prefix "ab"');
  t.deepEqual(LOG('a"b'), { text: 'log prefix "a"b"', problem: `log prefix "a\\"b" holds a '"': nft -f cannot read this back` });
});

test("a table one of whose rules holds an xt match or target: nft 1.0.6's warning before it (text only), none before the others", (t) => {
  const table = (family: string, name: string): Pick<NftRuleset, 'tables' | 'chains'> => ({
    tables: [{ family, name }],
    chains: [{ family, table: name, name: 'c' }],
  });
  const parts = [table('inet', 'native'), table('ip', 'filter'), table('ip', 'nat'), table('bridge', 'filter')];
  const rs: NftRuleset = {
    tables: parts.flatMap((p) => p.tables),
    chains: parts.flatMap((p) => p.chains),
    sets: [],
    rules: [
      { family: 'inet', table: 'native', chain: 'c', expr: [{ name: 'counter', packets: 0, bytes: 0 }] },
      { family: 'ip', table: 'filter', chain: 'c', expr: [{ name: 'match', match: 'length', rev: 0, info: '0000000000000000' }] },
      { family: 'bridge', table: 'filter', chain: 'c', expr: [{ name: 'target', target: 'TTL', rev: 0, info: '0000000000000000' }] },
    ],
  };
  const warnings: Array<{ at: number; text: string }> = [];
  const text = formatRulesetText(rs, { warnings });
  t.deepEqual(
    warnings.map((w) => w.text),
    ['# Warning: table ip filter is managed by iptables-nft, do not touch!', '# Warning: table bridge filter is managed by iptables-nft, do not touch!'],
  );
  t.true(text.startsWith('table ip filter {', warnings[0].at));
  t.true(text.startsWith('table bridge filter {', warnings[1].at));
  // nft -j writes no warning
  const jwarnings: Array<{ at: number; text: string }> = [];
  formatRulesetJson(rs, { warnings: jwarnings });
  t.deepEqual(jwarnings, []);
});

test("regression: an xt connlabel match where /etc/xtables/connlabel.conf cannot be opened: nft 1.0.6's `Warning: cannot open ...` once per match, after its rule's indent (text only; nothing said before); none for a native ct label, none when the file opens", (t) => {
  const label = (bit: number, options: number): Expr => ({ name: 'match', match: 'connlabel', rev: 0, info: u16(bit) + u16(options) });
  const rs: NftRuleset = {
    tables: [
      { family: 'ip', name: 'filter' },
      { family: 'ip6', name: 'filter' },
    ],
    chains: [
      { family: 'ip', table: 'filter', name: 'INPUT' },
      { family: 'ip', table: 'filter', name: 'OUTPUT' },
      { family: 'ip6', table: 'filter', name: 'INPUT' },
    ],
    sets: [],
    rules: [
      { family: 'ip', table: 'filter', chain: 'INPUT', expr: [label(120, 0), { name: 'counter', packets: 0, bytes: 0 }] },
      { family: 'ip', table: 'filter', chain: 'INPUT', expr: [{ name: 'counter', packets: 0, bytes: 0 }] },
      { family: 'ip', table: 'filter', chain: 'OUTPUT', expr: [label(121, 2), label(122, 1)] },
      { family: 'ip6', table: 'filter', chain: 'INPUT', expr: [label(5, 0)] },
    ],
  };
  const labels = 'Warning: cannot open /etc/xtables/connlabel.conf: No such file or directory';
  const warnings: Array<{ at: number; text: string }> = [];
  const text = formatRulesetText(rs, { warnings, connlabelConfError: 'No such file or directory' });
  const managed = (f: string): string => `# Warning: table ${f} filter is managed by iptables-nft, do not touch!`;
  t.deepEqual(
    warnings.map((w) => w.text),
    [managed('ip'), labels, labels, labels, managed('ip6'), labels],
  );
  t.true(
    warnings.every((w, i) => i === 0 || w.at >= warnings[i - 1].at),
    "in the listing's order",
  );
  // each after its rule's indent, the rule's words next
  t.deepEqual(
    warnings.filter((w) => w.text === labels).map((w) => [text.slice(w.at - 3, w.at), text.slice(w.at).split('\n')[0]]),
    [
      ['\n\t\t', 'ct label 120 counter packets 0 bytes 0'],
      ['\n\t\t', text.slice(warnings[2].at).split('\n')[0]],
      ['\n\t\t', text.slice(warnings[2].at).split('\n')[0]],
      ['\n\t\t', 'ct label 5'],
    ],
  );
  t.regex(text.slice(warnings[2].at).split('\n')[0], /^ct label set 121 ct label 121 \[ raw: match name connlabel rev 0 /);
  // the file opens (the option unset): none; a native ct label: none
  const none: Array<{ at: number; text: string }> = [];
  formatRulesetText(rs, { warnings: none });
  t.deepEqual(
    none.map((w) => w.text),
    [managed('ip'), managed('ip6')],
  );
  const native: Array<{ at: number; text: string }> = [];
  formatRulesetText(
    {
      tables: [{ family: 'ip', name: 't' }],
      chains: [{ family: 'ip', table: 't', name: 'c' }],
      sets: [],
      rules: [{ family: 'ip', table: 't', chain: 'c', expr: [{ name: 'ct', key: 'label', dreg: 1 }] }],
    },
    { warnings: native, connlabelConfError: 'No such file or directory' },
  );
  t.deepEqual(native, []);
  // nft -j writes none
  const jwarnings: Array<{ at: number; text: string }> = [];
  formatRulesetJson(rs, { warnings: jwarnings, connlabelConfError: 'No such file or directory' });
  t.deepEqual(jwarnings, []);
});

test('extensions nft 1.0.6 lists by name alone (recent, tos, TTL, CT other than --notrack), connlimit (translated by a family nft leaves unset) and TOS (`ip6 dscp set` in every family, the same rule only in ip6 without ECN bits): raw, saying why', (t) => {
  const name = (kind: 'match' | 'target', ext: string): { raw: string } => ({ raw: `nft 1.0.6 lists it as "xt ${kind} ${ext}", which nft -f cannot read` });
  t.deepEqual(xtText('match', { ext: 'recent', rev: 1, info: '00'.repeat(48) }, { family: 'ip' }), name('match', 'recent'));
  t.deepEqual(xtText('match', { ext: 'tos', rev: 1, info: '10ff0000' }, { family: 'ip' }), name('match', 'tos'));
  t.deepEqual(xtText('target', { ext: 'TTL', rev: 0, info: '00400000' }, { family: 'ip' }), name('target', 'TTL'));
  // struct xt_ct_target_info_v1 { __u16 flags; __u16 zone; ... }: --zone 5; --notrack is nft's `notrack`
  const ct = (flags: number, zone: number): string => (u16(flags) + u16(zone)).padEnd(56, '0');
  t.deepEqual(xtText('target', { ext: 'CT', rev: 2, info: ct(0, 5) }, { family: 'ip' }), name('target', 'CT'));
  t.is(xtText('target', { ext: 'CT', rev: 2, info: ct(1, 0) }, { family: 'ip' }), 'notrack');
  t.deepEqual(xtText('match', { ext: 'connlimit', rev: 1, info: '00'.repeat(48) }, { family: 'ip' }), {
    raw: 'nft 1.0.6 lists "xt match connlimit" or, at random, "add @connlimit0 ..." (no such set)',
  });
  const tos = (family: string, info: string): ReturnType<typeof xtText> => xtText('target', { ext: 'TOS', rev: 1, info }, { family });
  const tosWhy = { raw: 'nft 1.0.6 lists it as "ip6 dscp set ..." in every family, which sets other bits than TOS' };
  // struct xt_tos_target_info { tos_value, tos_mask }: --set-tos 0x10 (mask 0xff: the ECN bits too), --and-tos 0x10 (mask 0xef)
  for (const family of ['ip', 'ip6']) {
    t.deepEqual(tos(family, '10ff'), tosWhy);
    t.deepEqual(tos(family, '00ef'), tosWhy);
  }
  // in ip6, a value and mask without ECN bits: libxt_TOS's words mean the same, though nft -f cannot read them
  const words = (text: string): ReturnType<typeof xtText> => ({ text, problem: 'nft -f cannot read this back' });
  t.deepEqual(tos('ip6', '1010'), words('ip6 dscp set ip6 dscp or 0x04'));
  t.deepEqual(tos('ip6', '1000'), words('ip6 dscp set ip6 dscp xor 0x04'));
  t.deepEqual(tos('ip6', '10fc'), words('ip6 dscp set ip6 dscp and 0x00 xor 0x04'));
  t.deepEqual(tos('ip6', '00f0'), words('ip6 dscp set ip6 dscp and 0x03'));
  t.deepEqual(tos('ip', '1010'), tosWhy);
});
