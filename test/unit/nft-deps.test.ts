/**
 * Protocol dependencies as nft 1.0.6 lists them, against what it printed
 * (fixtures/nft/deps-nft-1.0.6.tsv, captured from /usr/sbin/nft in a fresh
 * network namespace: family | rule as added | `nft --debug=netlink`'s
 * expressions | `nft list ruleset`'s rule line | `nft -j`'s `expr`).
 * Raw link-layer loads outside bridge, `meta protocol` and `ether type`
 * in the ip, ip6 and arp families (which fix the network header), vlan
 * matches in arp; `ct protocol` as a transport dependency, the network one
 * before `meta l4proto icmp|ipv6-icmp` or `ct protocol`, `ip protocol` after
 * `ether type ip` in arp, `meta iiftype` and a stacked `ether type 8021q`
 * before `meta protocol` or `meta nfproto`; QinQ's stacked vlan headers
 * (`ether type 8021ad vlan id 5 vlan type 8021q vlan id 6`), an outer
 * header's field after the inner one, and the stacked matches nft leaves
 * out where nft -f would not add them back.
 * Each rule prints as nft printed it, or marks a statement
 * raw (the listing then exits 11): never a different listing unmarked.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as N from '../../src/iptables/index.js';

/** Bytes of a meta key's value (nft's meta templates). */
const META_LEN: Record<string, number> = { protocol: 2, l4proto: 1, nfproto: 1, iiftype: 2, mark: 4 };
/** Bytes of a ct key's value (nft's ct templates). */
const CT_LEN: Record<string, number> = { protocol: 1, l3protocol: 1, state: 4 };

/** The expressions of libnftnl's debug lines (`[ payload load 2b @ link header + 12 => reg 1 ]`...); the data words are host-order u32s. */
function parseDebug(lines: string[]): N.Expr[] {
  const len = new Map<number, number>();
  const bytes = (words: string, n: number): string =>
    Buffer.concat(
      words
        .trim()
        .split(/\s+/)
        .map((w) => {
          const b = Buffer.alloc(4);
          b.writeUInt32LE(Number.parseInt(w, 16));
          return b;
        }),
    )
      .subarray(0, n)
      .toString('hex');
  return lines.map((l): N.Expr => {
    let m = /^\[ meta load (\w+) => reg (\d+) \]$/.exec(l);
    if (m) {
      len.set(Number(m[2]), META_LEN[m[1]]);
      return { name: 'meta', key: m[1], dreg: Number(m[2]) } as N.Expr;
    }
    m = /^\[ ct load (\w+) => reg (\d+) \]$/.exec(l);
    if (m) {
      len.set(Number(m[2]), CT_LEN[m[1]]);
      return { name: 'ct', key: m[1], dreg: Number(m[2]) } as N.Expr;
    }
    m = /^\[ payload load (\d+)b @ (link|network|transport) header \+ (\d+) => reg (\d+) \]$/.exec(l);
    if (m) {
      len.set(Number(m[4]), Number(m[1]));
      return { name: 'payload', base: m[2], offset: Number(m[3]), len: Number(m[1]), dreg: Number(m[4]) } as N.Expr;
    }
    m = /^\[ cmp (\w+) reg (\d+) ((?:0x[0-9a-f]+ ?)+) \]$/.exec(l);
    if (m) return { name: 'cmp', sreg: Number(m[2]), op: m[1], data: bytes(m[3].replace(/0x/g, ''), len.get(Number(m[2]))!) } as N.Expr;
    m = /^\[ bitwise reg (\d+) = \( reg (\d+) & ((?:0x[0-9a-f]+ ?)+) \) \^ ((?:0x[0-9a-f]+ ?)+) \]$/.exec(l);
    if (m) {
      const n = len.get(Number(m[2]))!;
      len.set(Number(m[1]), n);
      return {
        name: 'bitwise',
        sreg: Number(m[2]),
        dreg: Number(m[1]),
        len: n,
        mask: bytes(m[3].replace(/0x/g, ''), n),
        xor: bytes(m[4].replace(/0x/g, ''), n),
      } as N.Expr;
    }
    throw new Error(`no parser for ${l}`);
  });
}

const rows = readFileSync(fileURLToPath(new URL('../../fixtures/nft/deps-nft-1.0.6.tsv', import.meta.url)), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => l.split('|'));

for (const [family, rule, debug, text, json] of rows) {
  test(`${family} '${rule}': as nft 1.0.6 lists it (${text}), or marked raw`, (t) => {
    const st = N.ruleStatements(parseDebug(debug.split(';')), { family });
    const ours = st.map((s) => s.text).join(' ');
    if (st.some((s) => typeof s.json === 'object' && 'raw' in s.json)) {
      t.not(ours, text);
      t.pass(`raw: ${ours}`);
      return;
    }
    t.is(ours, text);
    t.deepEqual(
      st.map((s) => s.json),
      JSON.parse(json),
    );
  });
}

test('the capture holds the reproducers of every dependency class', (t) => {
  t.true(rows.length >= 94);
  // the listings that exit 0 must be nft's: at least these are printed in full
  const exact = rows.filter(
    ([family, , debug, text]) =>
      N.ruleStatements(parseDebug(debug.split(';')), { family })
        .map((s) => s.text)
        .join(' ') === text,
  );
  // (the others: a match nft leaves out where nft -f of its listing puts back another or none, raw below)
  t.true(exact.length >= 49, `${exact.length}`);
});

test('bridge and netdev: a network load after `meta protocol 8021q` prints raw (nft 1.0.6 takes the vlan header for the network one and aborts listing it)', (t) => {
  // nft --debug=netlink add rule bridge t c meta protocol 8021q @nh,0,8 1; `nft list ruleset` then fails:
  // payload.c:1065: payload_expr_expand: Assertion `desc->base == expr->payload.base' failed.
  const exprs = parseDebug([
    '[ meta load protocol => reg 1 ]',
    '[ cmp eq reg 1 0x00000081 ]',
    '[ payload load 1b @ network header + 0 => reg 1 ]',
    '[ cmp eq reg 1 0x00000001 ]',
  ]);
  for (const family of ['bridge', 'netdev']) {
    const st = N.ruleStatements(exprs, { family });
    t.is(st[0].text, 'meta protocol 8021q');
    t.true(st.slice(1).every((s) => typeof s.json === 'object' && 'raw' in s.json));
  }
});

/**
 * libnftnl's debug lines (load, cmp) of each match the rows below are made of, by nft's words for it in
 * the rows' family (`ip6 nexthdr udp` is `ip saddr`'s byte 6 elsewhere).
 */
const MATCHES: Record<string, readonly [load: string, cmp: string]> = {
  'meta iiftype ether': ['[ meta load iiftype => reg 1 ]', '[ cmp eq reg 1 0x00000001 ]'],
  'ether saddr 00:11:22:33:44:55': ['[ payload load 6b @ link header + 6 => reg 1 ]', '[ cmp eq reg 1 0x33221100 0x00005544 ]'],
  'ether type ip': ['[ payload load 2b @ link header + 12 => reg 1 ]', '[ cmp eq reg 1 0x00000008 ]'],
  'ether type arp': ['[ payload load 2b @ link header + 12 => reg 1 ]', '[ cmp eq reg 1 0x00000608 ]'],
  'ether type 8021q': ['[ payload load 2b @ link header + 12 => reg 1 ]', '[ cmp eq reg 1 0x00000081 ]'],
  'meta protocol ip': ['[ meta load protocol => reg 1 ]', '[ cmp eq reg 1 0x00000008 ]'],
  'meta nfproto ipv4': ['[ meta load nfproto => reg 1 ]', '[ cmp eq reg 1 0x00000002 ]'],
  'meta nfproto ipv6': ['[ meta load nfproto => reg 1 ]', '[ cmp eq reg 1 0x0000000a ]'],
  'ct l3proto ipv4': ['[ ct load l3protocol => reg 1 ]', '[ cmp eq reg 1 0x00000002 ]'],
  'ip saddr 1.2.3.4': ['[ payload load 4b @ network header + 12 => reg 1 ]', '[ cmp eq reg 1 0x04030201 ]'],
  'ip saddr 169.254.5.1': ['[ payload load 4b @ network header + 12 => reg 1 ]', '[ cmp eq reg 1 0x0105fea9 ]'],
  'ip protocol udp': ['[ payload load 1b @ network header + 9 => reg 1 ]', '[ cmp eq reg 1 0x00000011 ]'],
  'ip6 nexthdr udp': ['[ payload load 1b @ network header + 6 => reg 1 ]', '[ cmp eq reg 1 0x00000011 ]'],
  'ip6 nexthdr ipv6-icmp': ['[ payload load 1b @ network header + 6 => reg 1 ]', '[ cmp eq reg 1 0x0000003a ]'],
  'arp operation request': ['[ payload load 2b @ network header + 6 => reg 1 ]', '[ cmp eq reg 1 0x00000100 ]'],
  'meta l4proto icmp': ['[ meta load l4proto => reg 1 ]', '[ cmp eq reg 1 0x00000001 ]'],
  'meta l4proto tcp': ['[ meta load l4proto => reg 1 ]', '[ cmp eq reg 1 0x00000006 ]'],
  'ct protocol tcp': ['[ ct load protocol => reg 1 ]', '[ cmp eq reg 1 0x00000006 ]'],
  'icmp type echo-request': ['[ payload load 1b @ transport header + 0 => reg 1 ]', '[ cmp eq reg 1 0x00000008 ]'],
  'icmpv6 type echo-request': ['[ payload load 1b @ transport header + 0 => reg 1 ]', '[ cmp eq reg 1 0x00000080 ]'],
  'tcp dport 22': ['[ payload load 2b @ transport header + 2 => reg 1 ]', '[ cmp eq reg 1 0x00001600 ]'],
  'udp dport 53': ['[ payload load 2b @ transport header + 2 => reg 1 ]', '[ cmp eq reg 1 0x00003500 ]'],
  'udp dport 5353': ['[ payload load 2b @ transport header + 2 => reg 1 ]', '[ cmp eq reg 1 0x0000e914 ]'],
};

/** The debug lines of these matches, in order. */
const exprs = (...words: string[]): string[] =>
  words.flatMap((w) => {
    if (!MATCHES[w]) throw new Error(`no expressions for ${w}`);
    return [...MATCHES[w]];
  });

/**
 * Dependencies nft 1.0.6 leaves out of its listing, against what nft -f of that listing rebuilds (nft
 * --debug=netlink, in a fresh namespace): where it rebuilds other expressions matching other packets the
 * dependency prints raw, saying so; where the same packets (the ip family's `meta l4proto` is the ip
 * header's protocol field), as nft lists it. [family, expressions, ours, raw's why or undefined].
 */
const REBUILT: ReadonlyArray<[string, string[], string, RegExp?]> = [
  [
    'ip6',
    exprs('ip6 nexthdr udp', 'udp dport 5353'),
    '[ raw: ip6 nexthdr udp (nft leaves this match out, and nft -f of its listing puts meta l4proto in its place, the protocol past any extension headers) ] udp dport 5353',
    /meta l4proto/,
  ],
  [
    'ip6',
    exprs('ip6 nexthdr ipv6-icmp', 'icmpv6 type echo-request'),
    '[ raw: ip6 nexthdr ipv6-icmp (nft leaves this match out, and nft -f of its listing puts meta l4proto in its place, the protocol past any extension headers) ] icmpv6 type echo-request',
    /meta l4proto/,
  ],
  // nft -f rebuilds `meta l4proto udp`: in the ip family the kernel's l4proto is this very field
  ['ip', exprs('ip protocol udp', 'udp dport 53'), 'udp dport 53'],
  // in inet nft keeps it
  ['inet', exprs('meta nfproto ipv6', 'ip6 nexthdr udp', 'udp dport 5353'), 'ip6 nexthdr udp udp dport 5353'],
  ['bridge', exprs('ether type ip', 'ip saddr 169.254.5.1'), '[ raw: ether type ip (LINK) ] ip saddr 169.254.5.1', /meta protocol/],
  // nft -f of `meta protocol ip ip saddr ...`'s listing rebuilds it as it is
  ['bridge', exprs('meta protocol ip', 'ip saddr 169.254.5.1'), 'ip saddr 169.254.5.1'],
  // an icmp type: nft -f puts `ether type ip` back in bridge (its dependency of icmp there)
  ['bridge', exprs('ether type ip', 'meta l4proto icmp', 'icmp type echo-request'), 'icmp type echo-request'],
  // and before an arp field (its dependency of arp there)
  ['bridge', exprs('ether type arp', 'arp operation request'), 'arp operation request'],
  // ... but not before `meta l4proto icmp` alone
  ['bridge', exprs('ether type ip', 'meta l4proto icmp'), '[ raw: ether type ip (LINK) ] meta l4proto icmp', /meta protocol/],
  ['netdev', exprs('meta iiftype ether', 'ether type ip', 'ip saddr 169.254.5.1'), '[ raw: ether type ip (LINK) ] ip saddr 169.254.5.1', /meta protocol/],
  // nft lists it `ether saddr ...`, which nft -f rebuilds with its `meta iiftype ether`
  ['netdev', exprs('meta iiftype ether', 'ether saddr 00:11:22:33:44:55'), 'ether saddr 00:11:22:33:44:55'],
  ['inet', exprs('meta iiftype ether', 'ether type ip', 'ip saddr 1.2.3.4'), '[ raw: ether type ip (LINK) ] ip saddr 1.2.3.4', /meta nfproto/],
  ['ip', exprs('ct protocol tcp', 'tcp dport 22'), '[ raw: ct protocol tcp (CT) ] tcp dport 22', /meta l4proto/],
  ['inet', exprs('meta nfproto ipv4', 'meta l4proto icmp'), '[ raw: meta nfproto ipv4 (L4) ] meta l4proto icmp', /other IP version/],
  // nft lists `ip saddr 1.2.3.4`, which nft -f reads as `meta nfproto ipv4 ip saddr 1.2.3.4`
  [
    'inet',
    exprs('meta iiftype ether', 'meta nfproto ipv4', 'ip saddr 1.2.3.4'),
    '[ raw: meta iiftype ether (LINK) ] ip saddr 1.2.3.4',
    /reads no link-layer header/,
  ],
  // before an icmp type nft -f puts `meta nfproto ipv4` back in inet
  ['inet', exprs('meta nfproto ipv4', 'meta l4proto icmp', 'icmp type echo-request'), 'icmp type echo-request'],
  // ... but `ether type ip` in bridge, where `meta protocol ip` was
  [
    'bridge',
    exprs('meta protocol ip', 'meta l4proto icmp', 'icmp type echo-request'),
    '[ raw: meta protocol ip (L4) ] icmp type echo-request',
    /other IP version/,
  ],
  ['arp', exprs('meta iiftype ether', 'ether type arp', 'arp operation request'), '[ raw: ether type arp (LINK) ] arp operation request', /nothing/],
  // in inet nft keeps `ether type` before a transport field, which nft -f rebuilds as it was
  ['inet', exprs('meta iiftype ether', 'ether type ip', 'meta l4proto tcp', 'tcp dport 22'), 'ether type ip tcp dport 22'],
  // ... and leaves a stacked one out before `meta nfproto`, which nft -f rebuilds alone
  ['inet', exprs('meta iiftype ether', 'ether type 8021q', 'meta nfproto ipv4'), '[ raw: ether type 8021q (LINK) ] meta nfproto ipv4', /nothing/],
  // `ct l3proto` before `meta l4proto`: nft -f never puts it back
  ['inet', exprs('ct l3proto ipv4', 'meta l4proto tcp', 'tcp dport 22'), '[ raw: ct l3proto ipv4 (CTL3) ] tcp dport 22', /untracked/],
  ['ip', exprs('ct l3proto ipv4', 'meta l4proto tcp'), '[ raw: ct l3proto ipv4 (CTL3) ] meta l4proto tcp', /untracked/],
  // after an Ethernet field nft -f names the network protocol by `ether type` in inet and netdev: it rebuilds that as
  // it was, `meta nfproto` and `meta protocol` not
  ['inet', exprs('meta iiftype ether', 'ether saddr 00:11:22:33:44:55', 'ether type ip', 'ip saddr 1.2.3.4'), 'ether saddr 00:11:22:33:44:55 ip saddr 1.2.3.4'],
  [
    'inet',
    exprs('meta iiftype ether', 'ether saddr 00:11:22:33:44:55', 'meta nfproto ipv4', 'ip saddr 1.2.3.4'),
    'ether saddr 00:11:22:33:44:55 [ raw: meta nfproto ipv4 (ETHER) ] ip saddr 1.2.3.4',
    /ether type/,
  ],
  [
    'netdev',
    exprs('meta iiftype ether', 'ether saddr 00:11:22:33:44:55', 'meta protocol ip', 'meta l4proto icmp', 'icmp type echo-request'),
    'ether saddr 00:11:22:33:44:55 [ raw: meta protocol ip (ETHER) ] icmp type echo-request',
    /ether type/,
  ],
];

/** The whys of the raw rows above, by their mark in them. */
const WHY: Record<string, string> = {
  LINK: 'nft leaves this match out, and nft -f of its listing puts meta protocol, meta nfproto or nothing in its place, which reads no link-layer header: vlan-tagged frames and other devices differ',
  L4: 'nft leaves this match out, and nft -f of its listing puts another or none in its place: a packet of the other IP version with that protocol number, or a vlan-tagged frame, differs',
  CT: "nft leaves this match out, and nft -f of its listing puts meta l4proto in its place, the packet's protocol, not its connection's: untracked packets and icmp errors differ",
  CTL3: "nft leaves this match out, and nft -f of its listing puts none in its place: the connection's family, not the packet's: untracked packets differ",
  ETHER:
    'nft leaves this match out, and nft -f of its listing puts ether type or vlan type in its place after a link-layer field, which reads that header: vlan-tagged frames differ',
};

for (const [family, debug, want, why] of REBUILT) {
  test(`${family}: ${want.replace(/\((LINK|L4|CT|CTL3|ETHER)\)/, '(...)')}: a dependency nft leaves out prints raw where nft -f of nft's listing rebuilds other packets`, (t) => {
    const st = N.ruleStatements(parseDebug(debug), { family });
    t.is(
      st.map((s) => s.text).join(' '),
      want.replace(/\((LINK|L4|CT|CTL3|ETHER)\)/, (_, k: string) => `(${WHY[k]})`),
    );
    const raw = st.filter((s) => typeof s.json === 'object' && 'raw' in s.json);
    t.is(raw.length, why ? 1 : 0);
    if (why) t.regex(raw[0].text, why);
  });
}
