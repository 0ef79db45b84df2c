/**
 * xt compat extensions whose libxtables translation (as nft 1.0.6 lists it) means
 * something else than the kernel's match: synplug prints those raw (xtText gives
 * undefined), never the translation. The listings themselves are checked live
 * against nft (test/live/nft-ruleset-roundtrip.test.ts); these are the variants
 * the live rows cannot load or do not reach. Structs in host byte order.
 */
import test from 'ava';
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
const match = (ext: string, info: string, family = 'ip'): string | undefined => xtText('match', { ext, rev: 0, info }, { family });

test('ecn: the IP field in ip6tables (libxt_ecn writes `ip ecn`), and an inverted TCP flag (`tcp flags != cwr` compares the whole byte): raw', (t) => {
  // struct xt_ecn_info { operation, invert, ip_ect, tcp.ect }
  t.is(match('ecn', '01000100', 'ip'), 'ip ecn ect1');
  t.is(match('ecn', '01000100', 'ip6'), undefined);
  t.is(match('ecn', '20000000', 'ip6'), 'tcp flags cwr');
  t.is(match('ecn', '20200000'), undefined);
  // an invert of one part only: libxt_ecn would invert every part
  t.is(match('ecn', '21010100'), undefined);
  t.is(match('ecn', '01010100'), 'ip ecn != ect1');
});

test('time: --kerneltz, --contiguous (the times mean something else) and --monthdays (nft lists xt match time) raw', (t) => {
  // struct xt_time_info { date_start, date_stop, daytime_start, daytime_stop, monthdays_match; weekdays_match, flags }
  const time = (flags: number, monthdays = 0xfffffffe): string =>
    u32(0) + u32(0x7fffffff) + u32(36000) + u32(43200) + u32(monthdays) + 'fe' + flags.toString(16).padStart(2, '0');
  t.is(match('time', time(0)), ' meta hour "10:00:00"-"12:00:00"');
  t.is(match('time', time(1)), undefined);
  t.is(match('time', time(2)), undefined);
  t.is(match('time', time(0, 0x20)), undefined);
});

test('dccp: some of the types 11-15 without INVALID (which libxt_dccp writes as one `10-15`): raw', (t) => {
  // struct xt_dccp_info { dpts[2], spts[2], flags, invflags, typemask; option }
  const dccp = (types: number): string => u16(0).repeat(4) + u16(4) + u16(0) + u16(types) + '00';
  t.is(match('dccp', dccp(0x0001)), 'dccp type request');
  t.is(match('dccp', dccp(0xfc03)), 'dccp type { request, response, 10-15 }');
  t.is(match('dccp', dccp(0x0801)), undefined);
});

test("ebtables' ip match: --ip-tos (libebt_ip writes it as `ip dscp`) raw; addresses under a prefix, ports named by their protocol", (t) => {
  // struct ebt_ip_info { saddr, daddr, smsk, dmsk; tos, protocol, bitmask, invflags; sport[2], dport[2] }
  const ip = (tos: number, proto: number, bitmask: number, inv = 0, dport = 0): string =>
    'a9fe0001' +
    '00000000' +
    'ffff0000' +
    '00000000' +
    [tos, proto, bitmask, inv].map((x) => x.toString(16).padStart(2, '0')).join('') +
    u16(0).repeat(2) +
    u16(dport).repeat(2);
  t.is(match('ip', ip(0x10, 0, 0x04), 'bridge'), undefined);
  t.is(match('ip', ip(0, 6, 0x01 | 0x08 | 0x20, 0, 22), 'bridge'), 'ip saddr 169.254.0.1/16 tcp dport 22');
  // a port of an inverted protocol: libebt_ip writes `@th,16,16`
  t.is(match('ip', ip(0, 6, 0x08 | 0x20, 0x08, 22), 'bridge'), undefined);
  // an icmp type and code inverted: the kernel inverts the pair, libebt_ip each (`icmp type != 3 icmp code != 0`)
  // tos 0, protocol 1, bitmask EBT_IP_PROTO | EBT_IP_ICMP, then icmp_type[2] (in sport's place) and icmp_code[2] (dport's)
  const icmp = (inv: number, codes: string): string => `${'0'.repeat(32)}000148${inv.toString(16).padStart(2, '0')}03030000${codes}0000`;
  t.is(match('ip', icmp(0x40, '0000'), 'bridge'), undefined);
  t.is(match('ip', icmp(0x40, '00ff'), 'bridge'), 'icmp type != 3');
  t.is(match('ip', icmp(0, '0102'), 'bridge'), 'icmp type 3 icmp code 1-2');
});

test('conntrack: SNAT with another state, SNAT and DNAT, an inverted expiry, and a mask that is no prefix: raw', (t) => {
  const ct = (flags: number, invert: number, state: number, at?: [number, string]): string => {
    const b = Buffer.alloc(164);
    if (at) Buffer.from(at[1], 'hex').copy(b, at[0]);
    Buffer.from(u16(flags) + u16(invert) + u16(state), 'hex').copy(b, 146);
    return b.toString('hex');
  };
  const rev3 = (info: string): string | undefined => xtText('match', { ext: 'conntrack', rev: 3, info }, { family: 'ip' });
  t.is(rev3(ct(1, 0, 8)), 'ct state new');
  t.is(rev3(ct(1, 0, 64 | 8)), undefined);
  t.is(rev3(ct(1, 0, 64 | 128)), undefined);
  t.is(rev3(ct(1, 1, 64)), undefined);
  t.is(rev3(ct(0x80, 0x80, 0, [128, u32(5) + u32(9)])), undefined);
  t.is(rev3(ct(4, 0, 0, [0, '7f000001' + '0'.repeat(24) + 'ff00ff00'])), undefined);
  t.is(rev3(ct(4, 0, 0, [0, '7f000000' + '0'.repeat(24) + 'ff000000'])), 'ct original saddr 127.0.0.0/8');
});

test("ebtables' nat targets: dnat and snat with their verdict; snat's --snat-arp and redirect (written without its accept and its address) raw", (t) => {
  const target = (ext: string, info: string): string | undefined => xtText('target', { ext, rev: 0, info }, { family: 'bridge' });
  // struct ebt_nat_info { mac[6]; (pad) int target }: EBT_ACCEPT -1, EBT_CONTINUE -3
  t.is(target('dnat', `0a1b2c3d4e5f0000${u32(0xfffffffd)}`), 'ether daddr set a:1b:2c:3d:4e:5f continue');
  t.is(target('snat', `0011223344550000${u32(0xffffffff)}`), 'ether saddr set 0:11:22:33:44:55 accept');
  t.is(target('snat', `0011223344550000${u32(0xffffffef)}`), undefined);
  t.is(target('redirect', u32(0xffffffff)), undefined);
});

test("ip6tables' frag, rt and mh: a bare match (nft 1.0.6 lists nothing, a rule matching every packet), --fragres, --fraglen and --rt-len raw", (t) => {
  const m = (ext: string, info: string): string | undefined => match(ext, info, 'ip6');
  // struct ip6t_frag { ids[2], hdrlen; flags, invflags }
  const frag = (lo: number, hi: number, flags: number, inv = 0): string =>
    u32(lo) + u32(hi) + u32(0) + [flags, inv].map((x) => x.toString(16).padStart(2, '0')).join('');
  t.is(m('frag', frag(5, 5, 0x01)), 'frag id 5');
  t.is(m('frag', frag(0, 0xffffffff, 0)), undefined);
  t.is(m('frag', frag(0, 0xffffffff, 0x04)), undefined);
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
