/**
 * Live, differential: for each table of the corpus (test/live/nft-ruleset-corpus.ts),
 * in a network namespace of its own,
 * - `synplug show ruleset` prints exactly what `nft list ruleset` prints, and exits 0;
 * - `synplug show ruleset --json` equals `nft -j list ruleset` (nft 1.0.6), nft's
 *   metainfo object aside (its version strings), key order included;
 * - synplug's listing fed back to `nft -f` in a second fresh namespace rebuilds a
 *   ruleset that `nft list ruleset` prints exactly as it printed the first.
 * And the corpus holds at least 150 rules using every expression synplug prints
 * (read from `nft --debug=netlink list ruleset`, libnftnl's own dump).
 *
 * The oracle is `/usr/sbin/nft` by absolute path (node_modules/.bin has an
 * unrelated `nft`).
 */
import test, { type ExecutionContext } from 'ava';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { registeredExprs } from '../../src/iptables/index.js';
import { NFT_KEYWORDS, NFT_OPERATOR_WORDS, nftReadsName } from '../../src/iptables/names.js';
import { CORPUS, ruleCount } from './nft-ruleset-corpus.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const NFT = '/usr/sbin/nft';
const tmp = mkdtempSync(join(tmpdir(), 'synplug-rs-roundtrip-'));
test.after.always(() => rmSync(tmp, { recursive: true, force: true }));

const cli = `${JSON.stringify(process.execPath)} --import=tsx ${JSON.stringify(join(ROOT, 'src/cli/bin.ts'))}`;
const q = (p: string): string => JSON.stringify(p);

/** Run a script as root in a new network namespace with lo up. */
function inNetns(script: string): void {
  const r = spawnSync('unshare', ['--net', 'bash', '-c', `set -e\nip link set lo up\n${script}`], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`namespace script failed (${r.status}): ${r.stderr}`);
}

/** Expression names libnftnl shows in `nft --debug=netlink list ruleset` (`  [ payload load ... ]`). */
const seenExprs = new Set<string>();

for (const [i, { table, text, setup }] of CORPUS.entries()) {
  test.serial(`${table}: show ruleset prints nft's listing, --json nft -j's, and nft -f of it rebuilds the same ruleset`, (t) => {
    const dir = join(tmp, String(i));
    const f = (name: string): string => join(dir, name);
    rmSync(dir, { recursive: true, force: true });
    spawnSync('mkdir', ['-p', dir]);
    writeFileSync(f('in.nft'), text);
    inNetns(
      [
        setup ?? 'true',
        `${NFT} -f ${q(f('in.nft'))}`,
        `${NFT} list ruleset > ${q(f('nft.txt'))}`,
        `${NFT} -j list ruleset > ${q(f('nft.json'))}`,
        `${NFT} --debug=netlink list ruleset > ${q(f('debug.txt'))} 2>&1`,
        `set +e`,
        `${cli} show ruleset > ${q(f('ours.txt'))} 2> ${q(f('ours.err'))}; echo $? > ${q(f('ours.rc'))}`,
        `${cli} show ruleset --json > ${q(f('ours.json'))} 2>> ${q(f('ours.err'))}; echo $? >> ${q(f('ours.rc'))}`,
      ].join('\n'),
    );
    const theirs = readFileSync(f('nft.txt'), 'utf8');
    const ours = readFileSync(f('ours.txt'), 'utf8');
    t.true(theirs.startsWith(`table ${table} {`), theirs);
    t.deepEqual(readFileSync(f('ours.rc'), 'utf8').split('\n').filter(Boolean), ['0', '0'], readFileSync(f('ours.err'), 'utf8'));
    t.deepEqual(ours.split('\n'), theirs.split('\n'));

    const ourJson = JSON.parse(readFileSync(f('ours.json'), 'utf8')).nftables as Array<Record<string, unknown>>;
    const theirJson = JSON.parse(readFileSync(f('nft.json'), 'utf8')).nftables as Array<Record<string, unknown>>;
    // nft 1.0.6 writes a dormant table's name where its flags belong ("flags": "rt_dormant"); synplug
    // writes the flag's name, as later nft versions do: compare that, from nft's text listing
    for (const x of theirJson) {
      const tb = x.table as { name: string; flags?: string } | undefined;
      if (tb?.flags === tb?.name && new RegExp(`^table \\S+ ${tb?.name} \\{\n\tflags dormant$`, 'm').test(theirs)) tb!.flags = 'dormant';
    }
    t.truthy(ourJson[0].metainfo);
    t.is(
      (ourJson[0].metainfo as { json_schema_version?: number }).json_schema_version,
      (theirJson[0].metainfo as { json_schema_version?: number }).json_schema_version,
    );
    t.deepEqual(ourJson.slice(1), theirJson.slice(1));
    t.is(JSON.stringify(ourJson.slice(1)), JSON.stringify(theirJson.slice(1)), 'same key order too');

    // the round trip: our listing is nft's input, in a namespace where nothing else exists
    writeFileSync(f('ours.nft'), ours);
    inNetns([setup ?? 'true', `${NFT} -f ${q(f('ours.nft'))}`, `${NFT} list ruleset > ${q(f('back.txt'))}`].join('\n'));
    t.deepEqual(readFileSync(f('back.txt'), 'utf8').split('\n'), theirs.split('\n'));

    for (const m of readFileSync(f('debug.txt'), 'utf8').matchAll(/^ {2}\[ ([a-z_]+) /gm)) seenExprs.add(m[1]);
  });
}

test.serial('the corpus: at least 150 rules, in every family, using every expression synplug prints', (t) => {
  t.true(CORPUS.reduce((n, c) => n + ruleCount(c.text), 0) >= 150);
  t.deepEqual(new Set(CORPUS.map((c) => c.table.split(' ')[0])), new Set(['inet', 'ip', 'ip6', 'arp', 'bridge', 'netdev']));
  // runs after the tables' tests (serial): every registered expression was in some kernel dump,
  // except those this kernel cannot load (the VM's corpus has them)
  const elsewhere = new Set(['queue', 'target', 'match']);
  const missing = registeredExprs().filter((n) => !elsewhere.has(n) && !seenExprs.has(n));
  t.deepEqual(missing, []);
});

/**
 * Load `text` with nft in a fresh namespace (files in a directory `name` of the test's own): nft's
 * listing (nft.txt), synplug's text and JSON (ours.txt, ours.json), their stderr (ours.err, ours.jerr)
 * and exit codes (ours.rc, one a line).
 */
function loadAndShow(name: string, text: string): (n: string) => string {
  const dir = join(tmp, name);
  spawnSync('mkdir', ['-p', dir]);
  const f = (n: string): string => join(dir, n);
  writeFileSync(f('in.nft'), text);
  inNetns(
    [
      `${NFT} -f ${q(f('in.nft'))}`,
      `${NFT} list ruleset > ${q(f('nft.txt'))}`,
      'set +e',
      `${cli} show ruleset > ${q(f('ours.txt'))} 2> ${q(f('ours.err'))}; echo $? > ${q(f('ours.rc'))}`,
      `${cli} show ruleset --json > ${q(f('ours.json'))} 2> ${q(f('ours.jerr'))}; echo $? >> ${q(f('ours.rc'))}`,
    ].join('\n'),
  );
  return f;
}

/**
 * The claim behind a raw: each rule's expressions (libnftnl's `  [ ... ]` lines) as {@link loadAndShow}'s
 * in.nft loads them, and as nft -f of nft's own listing of them (nft.txt) rebuilds them, in a fresh namespace.
 * `f`: loadAndShow's files; `rule`: the dump's line before each rule (`ip synplug_lo c 4`).
 */
function rebuiltByNft(f: (n: string) => string, rule: RegExp): [loaded: string[], rebuilt: string[]] {
  inNetns(
    [
      `${NFT} -f ${q(f('in.nft'))}`,
      `${NFT} --debug=netlink list ruleset > ${q(f('a.dbg'))}`,
      `${NFT} flush ruleset`,
      `${NFT} -f ${q(f('nft.txt'))}`,
      `${NFT} --debug=netlink list ruleset > ${q(f('b.dbg'))}`,
    ].join('\n'),
  );
  const exprs = (p: string): string[] =>
    readFileSync(f(p), 'utf8')
      .split(rule)
      .slice(1)
      .map((r) =>
        r
          .split('\n')
          .filter((l) => l.startsWith('  ['))
          .join('\n'),
      );
  return [exprs('a.dbg'), exprs('b.dbg')];
}

test.serial(
  'what synplug cannot print in nft language (a typeof it cannot read, ct event bits nft lists as it cannot read them back): listed marked, named on stderr, exit 11',
  (t) => {
    const f = loadAndShow(
      'unprintable',
      `table inet synplug_unp {
	set u {
		typeof icmp type
		elements = { echo-request }
	}
	chain c {
		ct event set 0x1800
		ip saddr 169.254.0.1 accept
	}
}
`,
    );
    t.deepEqual(readFileSync(f('ours.rc'), 'utf8').split('\n').filter(Boolean), ['11', '11']);
    const text = readFileSync(f('ours.txt'), 'utf8');
    // nft 1.0.6 lists it `ct event set 0x800,0x1000`, which nft -f refuses
    t.regex(text, /^\t\t\[ raw: immediate reg 1 0x00180000 \] \[ raw: ct set event with reg 1 \]$/m);
    t.regex(text, /^\t\tip saddr 169\.254\.0\.1 accept$/m);
    for (const err of [readFileSync(f('ours.err'), 'utf8'), readFileSync(f('ours.jerr'), 'utf8')]) {
      t.regex(err, /3 part\(s\) of the ruleset cannot be printed in nft's language/);
      t.regex(err, /table inet synplug_unp set u: declared with a typeof synplug cannot read/);
      t.regex(err, /table inet synplug_unp chain c handle \d+: ct set event with reg 1/);
    }
    // --json: stdout holds one JSON document, the listing, as nft -j writes (the message is on stderr only)
    const json = JSON.parse(readFileSync(f('ours.json'), 'utf8')).nftables as Array<{ rule?: { expr: unknown[] } }>;
    t.deepEqual(json.find((x) => x.rule)?.rule?.expr[0], { raw: { name: 'immediate', dreg: 1, data: '00180000' } });
  },
);

/**
 * Paths under /sys/fs/cgroup nft can take in `socket cgroupv2` (it stats them): its entries (mount points
 * on a host with cgroup v1 hierarchies) and the first entries of each, at most 8.
 */
function cgroupCandidates(): string[] {
  const list = (d: string, n: number): string[] => {
    try {
      return readdirSync(join('/sys/fs/cgroup', d)).slice(0, n);
    } catch {
      return [];
    }
  };
  const out = list('', 100).flatMap((top) => [top, ...(statSync(join('/sys/fs/cgroup', top)).isDirectory() ? list(top, 2).map((x) => `${top}/${x}`) : [])]);
  return out.filter((p) => !/["\\]/.test(p)).slice(0, 8);
}

test.serial(
  'socket cgroupv2: the path nft finds for the id, alone or in an anonymous set, in text and JSON, read back by nft -f; an id without a path (nft lists its number, which it cannot read back) raw, exit 11',
  (t) => {
    const paths = cgroupCandidates();
    t.true(paths.length > 0, 'this host has a /sys/fs/cgroup');
    const rules = paths.map((p, i) => `\t\tsocket cgroupv2 level ${(i % 3) + 1} "${p}" accept`);
    // and all of them in one anonymous set (nft lists each id once, as it lists it alone)
    rules.push(`\t\tsocket cgroupv2 level 2 { ${paths.map((p) => `"${p}"`).join(', ')} } accept`);
    const f = loadAndShow('cgroupv2', `table inet synplug_cg {\n\tchain c {\n${rules.join('\n')}\n\t}\n}\n`);
    const rows = (p: string): string[] =>
      readFileSync(f(p), 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('\t\t') && !l.includes('type filter'));
    const theirs = rows('nft.txt');
    const ours = rows('ours.txt');
    t.is(theirs.length, paths.length + 1, 'every rule loaded');
    t.is(ours.length, theirs.length);
    const withPath = theirs.filter((l) => /cgroupv2 level \d+ ("[^"]*"|\{ "[^"]*"(, "[^"]*")* \}) accept$/.test(l));
    t.true(withPath.length > 0, 'nft found a path for some id');
    theirs.forEach((line, i) => {
      if (withPath.includes(line)) t.is(ours[i], line);
      else
        t.regex(
          ours[i],
          /^\t\t\[ raw: socket load cgroupv2 => reg 1 level \d+ \] \[ raw: (cmp eq reg 1 0x[0-9a-f]{16}|lookup reg 1 set __set\d+) \] accept$/,
          line,
        );
    });
    const rc = withPath.length === theirs.length ? '0' : '11';
    t.deepEqual(readFileSync(f('ours.rc'), 'utf8').split('\n').filter(Boolean), [rc, rc]);
    // the rules printed: nft's JSON (the level left out, as nft 1.0.6 does), and nft -f of them lists the same
    const json = JSON.parse(readFileSync(f('ours.json'), 'utf8')).nftables as Array<{ rule?: { expr: Array<Record<string, unknown>> } }>;
    const printed = json.filter((x) => x.rule && !x.rule.expr.some((e) => 'raw' in e));
    t.is(printed.length, withPath.length);
    for (const r of printed) t.deepEqual(Object.keys(r.rule!.expr[0].match as object), ['op', 'left', 'right']);
    for (const r of printed) t.deepEqual((r.rule!.expr[0].match as { left: unknown }).left, { socket: { key: 'cgroupv2' } });
    const back = join(tmp, 'cgroupv2', 'back');
    writeFileSync(`${back}.nft`, `table inet synplug_cg {\n\tchain c {\n${withPath.join('\n')}\n\t}\n}\n`);
    inNetns([`${NFT} -f ${q(`${back}.nft`)}`, `${NFT} list ruleset > ${q(`${back}.txt`)}`].join('\n'));
    t.deepEqual(
      readFileSync(`${back}.txt`, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('\t\t')),
      withPath,
    );
    // a set of paths nft found: printed as nft lists it, text and JSON, exit 0
    const found = [...new Set(withPath.flatMap((l) => [...l.matchAll(/"([^"]*)"/g)].map((m) => m[1])))];
    t.true(found.length >= 2, 'nft found two paths');
    const g = loadAndShow(
      'cgroupv2-set',
      `table inet synplug_cgs {\n\tchain c {\n\t\tsocket cgroupv2 level 2 { ${found.map((p) => `"${p}"`).join(', ')} } accept\n\t}\n}\n`,
    );
    t.regex(readFileSync(g('nft.txt'), 'utf8'), /socket cgroupv2 level 2 \{ "/);
    t.is(readFileSync(g('ours.txt'), 'utf8'), readFileSync(g('nft.txt'), 'utf8'));
    t.deepEqual(readFileSync(g('ours.rc'), 'utf8').split('\n').filter(Boolean), ['0', '0']);
  },
);

test.serial('a set of conntrack labels, which nft 1.0.6 lists as a rule without its match: raw, named on stderr, exit 11', (t) => {
  const f = loadAndShow(
    'labelset',
    `table inet synplug_lbl {
	chain c {
		ct label { 1, 2 } accept
		ct label 1 accept
	}
}
`,
  );
  // nft's own listing drops the match, which would read back as a rule accepting everything
  t.regex(readFileSync(f('nft.txt'), 'utf8'), /^\t\taccept$/m);
  t.deepEqual(readFileSync(f('ours.rc'), 'utf8').split('\n').filter(Boolean), ['11', '11']);
  const ours = readFileSync(f('ours.txt'), 'utf8');
  t.regex(ours, /^\t\t\[ raw: ct load label => reg 1 \] \[ raw: lookup reg 1 set __set0 \] accept$/m);
  t.regex(ours, /^\t\tct label 1 accept$/m);
  t.regex(readFileSync(f('ours.err'), 'utf8'), /table inet synplug_lbl chain c handle \d+: lookup reg 1 set __set0/);
});

test.serial(
  "a bit field shifted to its value: named in a set lookup as nft does (ip6 dscp @s); as a map's key nft prints it raw-ish, synplug raw, exit 11",
  (t) => {
    const f = loadAndShow(
      'dscpmap',
      `table ip6 synplug_dscp {
	set s {
		typeof ip6 dscp
		elements = { cs1 }
	}
	map m {
		typeof ip6 dscp : meta mark
		elements = { cs1 : 0x1 }
	}
	chain c {
		ip6 dscp @s accept
		meta mark set ip6 dscp map @m
	}
}
`,
    );
    const theirs = readFileSync(f('nft.txt'), 'utf8');
    const ours = readFileSync(f('ours.txt'), 'utf8');
    t.regex(theirs, /^\t\tip6 dscp @s accept$/m);
    t.regex(ours, /^\t\tip6 dscp @s accept$/m);
    // nft 1.0.6: `meta mark set (@nh,0,16 & 0xfc0) >> 6 map @m`
    t.regex(theirs, /^\t\tmeta mark set \(@nh,0,16 & 0xfc0\) >> 6 map @m$/m);
    t.regex(ours, /^\t\t\[ raw: payload load 2b @ network header \+ 0 => reg 1 \].*\[ raw: lookup reg 1 set m dreg 1 \] \[ raw: meta set mark with reg 1 \]$/m);
    t.deepEqual(readFileSync(f('ours.rc'), 'utf8').split('\n').filter(Boolean), ['11', '11']);
  },
);

test.serial(
  "after a vlan match, Ethernet's daddr (nft 1.0.6 reads those bytes as a vlan header) and a shifted vlan pcp in a concatenation (`vlan id . vlan pcp >> 5 { 0 . 0 }`): raw, exit 11",
  (t) => {
    const f = loadAndShow(
      'vlanraw',
      `table bridge synplug_vlr {
	chain c {
		vlan id 5 ether daddr 00:11:22:33:44:55 accept
		ether daddr . vlan id { 00:11:22:33:44:55 . 5, 00:11:22:33:44:66 . 7 } accept
		vlan id . vlan pcp { 5 . 3 } accept
		ether saddr . vlan id { 00:11:22:33:44:55 . 5, 00:11:22:33:44:66 . 7 } accept
	}
}
`,
    );
    const theirs = readFileSync(f('nft.txt'), 'utf8');
    t.regex(theirs, /^\t\tvlan id 5 vlan pcp 0 vlan dei 0 vlan id 17 /m);
    t.regex(theirs, /^\t\t@ll,0,48 \. vlan id \{/m);
    t.regex(theirs, /^\t\tvlan id \. vlan pcp >> 5 \{ 0 \. 0 \} accept$/m);
    const ours = readFileSync(f('ours.txt'), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('\t\t') && !l.includes('type filter'));
    t.is(ours.length, 4);
    for (const l of ours.slice(0, 3)) t.regex(l, /\[ raw: payload load /);
    t.is(ours[3], '\t\tether saddr . vlan id { 00:11:22:33:44:55 . 5, 00:11:22:33:44:66 . 7 } accept');
    t.deepEqual(readFileSync(f('ours.rc'), 'utf8').split('\n').filter(Boolean), ['11', '11']);
  },
);

/** The why of a `meta nfproto` or `meta protocol` nft leaves out after a link-layer field, where nft -f of its listing puts `ether type` or `vlan type`. */
const ETHER_WHY = /puts ether type or vlan type in its place after a link-layer field/;

/**
 * Dependencies nft 1.0.6 leaves out of its listing, by family: [rule as written, what synplug marks raw (the
 * match nft leaves out, where nft -f of nft's listing rebuilds another match or none) or how nft -f rebuilds it
 * ('same'; 'l4proto': `ip protocol` in ip as `meta l4proto`, which the ip family reads from that very field),
 * and the raw's why where the family's usual one is not it].
 */
const LEFT_OUT: ReadonlyArray<[family: string, rows: ReadonlyArray<[rule: string, raw: string, why?: RegExp]>]> = [
  [
    'ip6',
    [
      ['ip6 nexthdr udp udp dport 5353 counter', 'ip6 nexthdr udp'],
      ['ip6 nexthdr tcp tcp dport 22', 'ip6 nexthdr tcp'],
      ['ip6 nexthdr icmpv6 icmpv6 type echo-request', 'ip6 nexthdr ipv6-icmp'],
      ['meta l4proto udp udp dport 5353', 'same'],
      ['ip6 nexthdr udp counter', 'same'],
    ],
  ],
  [
    'inet',
    [
      ['ip6 nexthdr udp udp dport 5353', 'same'],
      ['ip protocol tcp tcp dport 22', 'same'],
      ['ether type ip ip saddr 169.254.5.1', 'ether type ip'],
      ['meta nfproto ipv4 meta l4proto icmp', 'meta nfproto ipv4'],
      ['meta nfproto ipv4 meta l4proto icmp icmp type echo-request', 'same'],
      ['meta iiftype ether meta nfproto ipv4 ip saddr 169.254.0.1', 'meta iiftype ether'],
      // nft keeps an ether type before a transport field, `meta l4proto tcp` and any other match but a field of the
      // network header, `meta l4proto icmp`, `ct protocol`; a stacked one it leaves out before `meta nfproto`
      ['ether type ip tcp dport 80', 'same'],
      ['ether type ip6 udp dport 53 counter', 'same'],
      ['ether type ip meta l4proto tcp', 'same'],
      ['ether type arp meta mark 0x00000001', 'same'],
      ['ether type 8021q ip saddr 169.254.5.1', 'same'],
      ['ether type ip meta l4proto icmp', 'ether type ip'],
      ['ether type 8021q meta nfproto ipv4', 'ether type 8021q'],
      ['ct l3proto ipv4 tcp dport 22', 'ct l3proto ipv4'],
      // after an Ethernet field nft -f names the network protocol by `ether type`
      ['ether saddr 00:11:22:33:44:55 ether type ip ip saddr 169.254.5.1', 'same'],
      ['ether saddr 00:11:22:33:44:55 meta nfproto ipv4 ip saddr 169.254.5.1', 'meta nfproto ipv4', ETHER_WHY],
      // after a vlan field, `vlan type`
      ['vlan id 5 meta nfproto ipv4 icmp type echo-request', 'meta nfproto ipv4', ETHER_WHY],
      // an Ethernet field first in a concatenation too (ether type left out as nft lists it, meta nfproto raw)
      ['ether saddr . ip saddr { 00:11:22:33:44:55 . 169.254.5.1 } counter', 'same'],
      ['meta nfproto ipv4 ether saddr . ip saddr { 00:11:22:33:44:55 . 169.254.5.1 }', 'meta nfproto ipv4', ETHER_WHY],
    ],
  ],
  [
    'ip',
    [
      ['ip protocol udp udp dport 53', 'l4proto'],
      ['ether type ip tcp dport 22', 'ether type ip'],
      ['vlan type ip tcp dport 22', 'vlan type ip'],
      ['ct protocol tcp tcp dport 22', 'ct protocol tcp'],
      ['ct l3proto ipv4 meta l4proto udp', 'ct l3proto ipv4'],
    ],
  ],
  [
    'bridge',
    [
      ['ether type ip ip saddr 169.254.5.1 counter', 'ether type ip'],
      ['ether type ip6 ip6 saddr fd00::1', 'ether type ip6'],
      ['ether type ip meta l4proto icmp', 'ether type ip'],
      ['meta protocol ip ip saddr 169.254.5.1', 'same'],
      ['icmp type echo-request', 'same'],
      ['ether type arp arp operation request', 'same'],
      ['ether type ip tcp dport 22', 'same'],
      ['meta protocol ip meta l4proto icmp icmp type echo-request', 'meta protocol ip'],
    ],
  ],
  [
    'netdev',
    [
      ['ether type ip ip saddr 169.254.5.1 counter', 'ether type ip'],
      ['ether type arp arp operation request', 'ether type arp'],
      ['meta protocol ip ip saddr 169.254.5.1', 'same'],
      ['ether saddr 00:11:22:33:44:55', 'same'],
      ['meta protocol ip meta l4proto icmp icmp type echo-request', 'same'],
      ['meta protocol ip meta l4proto icmp', 'meta protocol ip'],
      ['ether saddr 00:11:22:33:44:55 ether type ip ip saddr 169.254.5.1', 'same'],
      ['ether saddr 00:11:22:33:44:55 meta protocol ip icmp type echo-request', 'meta protocol ip', ETHER_WHY],
      ['ether saddr . ip saddr { 00:11:22:33:44:55 . 169.254.5.1 }', 'same'],
      ['meta protocol ip ether saddr . ip saddr { 00:11:22:33:44:55 . 169.254.5.1 }', 'meta protocol ip', ETHER_WHY],
    ],
  ],
  ['arp', [['ether type arp arp operation request', 'ether type arp']]],
];

test.serial(
  "a dependency nft leaves out where nft -f of its listing rebuilds another match (ip6 nexthdr in ip6, ether type in bridge, netdev and elsewhere, ct protocol and ct l3proto, a network match before meta l4proto icmp; in inet the ether type nft keeps): raw saying why, exit 11; the rest as nft lists it; nft -f of nft's own text shows which",
  (t) => {
    const text = LEFT_OUT.map(([family, rows]) => `table ${family} synplug_lo {\n\tchain c {\n${rows.map(([r]) => `\t\t${r}`).join('\n')}\n\t}\n}\n`).join('');
    const f = loadAndShow('leftout', text);
    const lines = (p: string): string[] =>
      readFileSync(f(p), 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('\t\t') && !l.includes('type filter'));
    const [theirs, ours] = [lines('nft.txt'), lines('ours.txt')];
    const rows = LEFT_OUT.flatMap(([family, r]) => r.map(([rule, raw, why]) => ({ family, rule, raw, why })));
    t.is(theirs.length, rows.length, 'every rule loaded');
    t.is(ours.length, rows.length);
    rows.forEach(({ rule, raw, why }, i) => {
      if (raw === 'same' || raw === 'l4proto') t.is(ours[i], theirs[i], rule);
      else {
        // the raw match where nft leaves it out: the rest is nft's listing
        const m = /^\t\t(.*?)\[ raw: (.+?) \((nft leaves this match out, [^)]+)\) \] (.*)$/.exec(ours[i]);
        t.is(m?.[2], raw, rule);
        t.is(`\t\t${m?.[1]}${m?.[4]}`, theirs[i], rule);
        t.regex(
          m?.[3] ?? '',
          why ??
            (/^(ip6 nexthdr|ct protocol) /.test(raw)
              ? /puts meta l4proto in its place/
              : /^ct l3proto /.test(raw)
                ? /puts none in its place: the connection's family, not the packet's/
                : /^meta (nfproto|protocol) /.test(raw)
                  ? /a packet of the other IP version with that protocol number/
                  : /reads no link-layer header/),
        );
      }
    });
    t.deepEqual(readFileSync(f('ours.rc'), 'utf8').split('\n').filter(Boolean), ['11', '11']);
    const err = readFileSync(f('ours.err'), 'utf8');
    t.true(err.includes(`${rows.filter((r) => r.raw !== 'same' && r.raw !== 'l4proto').length} part(s)`), err);
    // the claim: nft -f of nft's own listing rebuilds other expressions exactly where synplug prints raw
    const [a, b] = rebuiltByNft(f, /^\w+ synplug_lo c \d+.*$/m);
    t.is(a.length, rows.length);
    rows.forEach(({ rule, raw }, i) => {
      if (raw === 'same') t.is(b[i], a[i], rule);
      else if (raw === 'l4proto') t.is(b[i], a[i].replace('[ payload load 1b @ network header + 9 => reg 1 ]', '[ meta load l4proto => reg 1 ]'), rule);
      else t.not(b[i], a[i], rule);
    });
  },
);

test.serial(
  "QinQ where nft's listing reads back as other bytes (an outer vlan header's field after the inner one, which nft names as the inner's; `ether type 8021ad` and `vlan type 8021q` before `meta protocol`, which nft leaves out): raw, exit 11",
  (t) => {
    const text = `table bridge synplug_qq {
	chain c {
		ether type 8021ad vlan type 8021q @ll,112,16 & 0xfff == 5 accept
		ether type 8021ad vlan id 5 meta protocol ip accept
		vlan id 5 vlan type 8021q vlan id 6 meta protocol ip accept
	}
}
`;
    const f = loadAndShow('qinqraw', text);
    const rules = (p: string): string[] =>
      readFileSync(f(p), 'utf8')
        .split('\n')
        .filter((l) => l.endsWith(' accept'));
    t.deepEqual(rules('nft.txt'), [
      '\t\tether type 8021ad vlan type 8021q vlan id 5 accept',
      '\t\tvlan id 5 meta protocol ip accept',
      '\t\tvlan id 5 vlan id 6 meta protocol ip accept',
    ]);
    const ours = rules('ours.txt');
    t.regex(ours[0], /^\t\tether type 8021ad vlan type 8021q \[ raw: payload load 2b @ link header \+ 14 => reg 1 \] .* accept$/);
    t.is(ours[1], '\t\t[ raw: ether type 8021ad (nft may leave this match out) ] vlan id 5 meta protocol ip accept');
    t.is(ours[2], '\t\tvlan id 5 [ raw: vlan type 8021q (nft may leave this match out) ] vlan id 6 meta protocol ip accept');
    t.deepEqual(readFileSync(f('ours.rc'), 'utf8').split('\n').filter(Boolean), ['11', '11']);
    // the claim: nft -f of nft's own listing builds every rule of other bytes
    const [a, b] = rebuiltByNft(f, /^bridge synplug_qq c \d+.*$/m);
    t.is(a.length, 3);
    t.is(b.length, 3);
    for (let i = 0; i < 3; i++) t.not(b[i], a[i]);
  },
);

/**
 * iptables-nft's rules with xt targets, each as nft 1.0.6 lists it: through
 * libxtables' translation (`meta mark set 0x5`, `log prefix "ipt "`), or
 * `xt target NAME` for one nft does not translate; `raw`: synplug prints it
 * raw (nft's `xt target NAME`, or a translation that means something else:
 * a masked CONNMARK save is `ct mark = (ct mark & ~mask) ^ (mark & mask)`,
 * which libxtables writes `ct mark set mark and MASK`).
 */
const IPTABLES_TARGETS: ReadonlyArray<[rule: string, raw?: 'raw']> = [
  ['-A INPUT -p tcp --dport 81 -j MARK --set-mark 0x5'],
  ['-A INPUT -p tcp --dport 82 -j MARK --set-xmark 0x5/0xff'],
  ['-A INPUT -p tcp --dport 83 -j MARK --or-mark 0x10'],
  ['-A INPUT -p tcp --dport 84 -j MARK --and-mark 0x10'],
  ['-A INPUT -p tcp --dport 85 -j MARK --xor-mark 0x7'],
  ['-A INPUT -j LOG --log-prefix "ipt "'],
  ['-A INPUT -j LOG --log-level 4 --log-tcp-sequence'],
  ['-A INPUT -j LOG'],
  ['-A INPUT -j LOG --log-level 7 --log-prefix "a b" --log-ip-options --log-uid'],
  ['-A INPUT -j LOG --log-tcp-options --log-tcp-sequence --log-ip-options --log-uid --log-macdecode'],
  ['-A INPUT -j LOG --log-tcp-options --log-level 0'],
  ['-A INPUT -p tcp -j REJECT --reject-with tcp-reset'],
  ['-A INPUT -j REJECT'],
  ['-A INPUT -j REJECT --reject-with icmp-host-prohibited'],
  ['-A INPUT -j REJECT --reject-with icmp-net-unreachable'],
  ['-A INPUT -j REJECT --reject-with icmp-admin-prohibited'],
  ['-A INPUT -j REJECT --reject-with icmp-proto-unreachable'],
  ['-A INPUT -p tcp --dport 80 -j NFQUEUE --queue-num 7 --queue-bypass'],
  ['-A INPUT -p tcp -j SYNPROXY --mss 1460 --wscale 7 --timestamp --sack-perm --ecn'],
  ['-A INPUT -p tcp -j SYNPROXY --mss 1400'],
  ['-A INPUT -p tcp -j SYNPROXY'],
  ['-A INPUT -j AUDIT --type drop'],
  ['-A INPUT -j CONNMARK --restore-mark'],
  ['-A INPUT -j CONNMARK --save-mark'],
  ['-A INPUT -j CONNMARK --set-mark 0x3'],
  ['-A INPUT -j CONNMARK --set-xmark 0x3/0xf', 'raw'],
  ['-A INPUT -j CONNMARK --restore-mark --mask 0xff', 'raw'],
  ['-A INPUT -j CONNMARK --and-mark 0x3'],
  ['-A INPUT -j CONNMARK --or-mark 0x4'],
  ['-A INPUT -j CONNMARK --xor-mark 0x5'],
  ['-A INPUT -j CONNMARK --save-mark --mask 0xff', 'raw'],
  ['-A INPUT -j CONNMARK --save-mark --nfmask 0xff --ctmask 0xf', 'raw'],
  ['-A INPUT -j CONNMARK --restore-mark --nfmask 0xff --ctmask 0xf', 'raw'],
  ['-t raw -A OUTPUT -j CT --notrack'],
  ['-t raw -A PREROUTING -j CT --zone 5', 'raw'],
  ['-t raw -A PREROUTING -j CT --zone-orig 5', 'raw'],
  ['-t nat -A POSTROUTING -j MASQUERADE'],
  ['-t nat -A POSTROUTING -p tcp -j MASQUERADE --to-ports 1000-2000'],
  ['-t nat -A POSTROUTING -j MASQUERADE --random'],
  ['-t nat -A POSTROUTING -j SNAT --to-source 127.0.0.9'],
  ['-t nat -A POSTROUTING -p tcp -j SNAT --to-source 127.0.0.9-127.0.0.12:100-200 --random --persistent'],
  ['-t nat -A POSTROUTING -p tcp -j SNAT --to-source 127.0.0.9 --random-fully'],
  ['-t nat -A PREROUTING -p tcp -j DNAT --to-destination 127.0.0.9:8080'],
  ['-t nat -A PREROUTING -p tcp -j DNAT --to-destination 127.0.0.9-127.0.0.10'],
  ['-t nat -A PREROUTING -p tcp -j REDIRECT --to-ports 8080'],
  ['-t nat -A PREROUTING -p tcp -j REDIRECT --to-ports 8080-8090 --random'],
  ['-t nat -A PREROUTING -p tcp -j REDIRECT'],
  ['-t mangle -A FORWARD -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --clamp-mss-to-pmtu'],
  ['-t mangle -A FORWARD -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --set-mss 1400'],
  ['-t mangle -A PREROUTING -j TTL --ttl-set 64', 'raw'],
  // libxt_TOS writes `ip6 dscp set 0x04` in every family, whatever the mask
  ['-t mangle -A PREROUTING -j TOS --set-tos 0x10', 'raw'],
  ['-t mangle -A PREROUTING -j TOS --set-tos 0x10/0x3f', 'raw'],
  ['-t mangle -A PREROUTING -j TOS --and-tos 0x10', 'raw'],
  ['-t mangle -A PREROUTING -j DSCP --set-dscp 10'],
  ['-t mangle -A PREROUTING -j DSCP --set-dscp 0'],
  ['-t mangle -A POSTROUTING -j CLASSIFY --set-class 1:10'],
  ['-t mangle -A POSTROUTING -j CLASSIFY --set-class abcd:12'],
  ['-t mangle -A POSTROUTING -j CLASSIFY --set-class ffff:ffff'],
  // libxt_TEE writes the gateway numerically when nft asks (it does): 127.0.0.1, which /etc/hosts names localhost, as a number
  ['-t mangle -A PREROUTING -j TEE --gateway 127.0.0.5'],
  ['-t mangle -A PREROUTING -j TEE --gateway 127.0.0.1 --oif lo'],
];

/**
 * iptables-nft's rules with xt matches, and whether synplug prints the match
 * raw: nft lists it as `xt match NAME`, or libxtables' translation means
 * something else (`--ctstate SNAT,NEW` as `ct status snat`, `! --ctstate
 * DNAT` as `ct status dnat`, `--src-type X --dst-type Y` as `fib saddr type
 * x`, THROW, NAT, XRESOLVE left out), or synplug does not reproduce it.
 * Rules in the listing's order (INPUT's, then OUTPUT's). A comment match
 * nft prints as nothing (libxtables puts the comment aside).
 */
const IPTABLES_MATCHES: ReadonlyArray<[rule: string, raw?: 'raw']> = [
  ['-A INPUT -p icmp --icmp-type echo-request -j ACCEPT'],
  ['-A INPUT -p icmp ! --icmp-type echo-reply -j DROP'],
  ['-A INPUT -p icmp --icmp-type 13 -j ACCEPT'],
  ['-A INPUT -p icmp --icmp-type 8/0 -j ACCEPT', 'raw'],
  ['-A INPUT -p icmp --icmp-type 200 -j ACCEPT', 'raw'],
  ['-A INPUT -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT'],
  ['-A INPUT -m conntrack --ctstate NEW,INVALID -j ACCEPT'],
  ['-A INPUT -m conntrack --ctstate UNTRACKED -j ACCEPT'],
  ['-A INPUT -m conntrack --ctstate DNAT -j ACCEPT'],
  ['-A INPUT -m conntrack --ctstate SNAT -j ACCEPT'],
  ['-A INPUT -m conntrack ! --ctstate NEW -j ACCEPT'],
  ['-A INPUT -m conntrack --ctstate NEW,ESTABLISHED,RELATED,INVALID,UNTRACKED -j ACCEPT'],
  ['-A INPUT -m state --state NEW -j ACCEPT'],
  ['-A INPUT -m state --state ESTABLISHED,RELATED,INVALID,UNTRACKED -j ACCEPT'],
  ['-A INPUT -m state ! --state NEW -j ACCEPT'],
  ['-A INPUT -m conntrack --ctstate SNAT,NEW -j ACCEPT', 'raw'],
  ['-A INPUT -m conntrack ! --ctstate DNAT -j ACCEPT', 'raw'],
  ['-A INPUT -m conntrack --ctstate NEW --ctproto tcp -j ACCEPT'],
  ['-A INPUT -m conntrack ! --ctstate NEW,INVALID --ctproto 17 -j ACCEPT'],
  ['-A INPUT -m conntrack --ctproto tcp -j ACCEPT'],
  ['-A INPUT -p udp -m multiport --dports 1,2,3 -j ACCEPT'],
  ['-A INPUT -p tcp -m multiport --sports 1:10,20 -j ACCEPT'],
  ['-A INPUT -p tcp -m multiport ! --dports 5,6 -j ACCEPT'],
  ['-A INPUT -p tcp -m multiport --dports 7 -j ACCEPT'],
  ['-A INPUT -p tcp -m multiport --dports 1:10 -j ACCEPT'],
  ['-A INPUT -p tcp -m multiport ! --dports 7 -j ACCEPT'],
  ['-A INPUT -p sctp -m multiport --dports 7,8 -j ACCEPT'],
  ['-A INPUT -p tcp -m multiport --ports 5,6 -j ACCEPT'],
  ['-A INPUT -p udp -m multiport --ports 5 -j ACCEPT'],
  ['-A INPUT -p tcp -m multiport --ports 1:10,20 -j ACCEPT', 'raw'],
  ['-A INPUT -p tcp -m multiport ! --ports 5,6 -j ACCEPT', 'raw'],
  ['-A INPUT -m comment --comment "hello world" -j ACCEPT'],
  ['-A INPUT -p tcp -m comment --comment x --dport 5 -j ACCEPT'],
  ['-A INPUT -m recent --set', 'raw'],
  ['-A INPUT -m recent --name x --rcheck --seconds 60 -j DROP', 'raw'],
  ['-A INPUT -m tos --tos 0x10 -j ACCEPT', 'raw'],
  ['-A INPUT -m tos ! --tos 0x10/0x3f -j ACCEPT', 'raw'],
  // libxt_connlimit translates by a family nft leaves unset: `xt match connlimit`, or `add @connlimit0 ...` at random
  ['-A INPUT -p tcp -m connlimit --connlimit-above 10 -j DROP', 'raw'],
  ['-A INPUT -p tcp -m connlimit --connlimit-upto 5 --connlimit-mask 24 -j ACCEPT', 'raw'],
  ['-A INPUT -m addrtype --dst-type LOCAL -j ACCEPT'],
  ['-A INPUT -m addrtype --src-type LOCAL --limit-iface-in -j ACCEPT'],
  ['-A INPUT -m addrtype ! --dst-type UNICAST,LOCAL -j ACCEPT'],
  ['-A INPUT -m addrtype --dst-type UNSPEC,PROHIBIT -j ACCEPT'],
  ['-A INPUT -m addrtype --dst-type UNSPEC,NAT -j ACCEPT', 'raw'],
  ['-A INPUT -m addrtype --dst-type UNSPEC,XRESOLVE -j ACCEPT', 'raw'],
  ['-A INPUT -m addrtype --src-type BROADCAST --dst-type LOCAL -j ACCEPT', 'raw'],
  ['-A INPUT -m pkttype --pkt-type broadcast -j DROP'],
  ['-A INPUT -m pkttype ! --pkt-type multicast -j DROP'],
  ['-A INPUT -m pkttype --pkt-type unicast -j DROP'],
  ['-A INPUT -m pkttype --pkt-type otherhost -j DROP'],
  ['-A INPUT -m length --length 100:200 -j DROP'],
  ['-A INPUT -m iprange --src-range 127.0.0.1-127.0.0.5 -j DROP'],
  ['-A INPUT -m iprange ! --dst-range 127.0.0.1-127.0.0.5 -j DROP'],
  ['-A INPUT -m iprange --src-range 127.0.0.1-127.0.0.5 ! --dst-range 127.0.0.7-127.0.0.9 -j DROP'],
  ['-A INPUT -m iprange --src-range 127.0.0.1-127.0.0.1 -j DROP'],
  ['-A INPUT -m length ! --length 100 -j DROP'],
  ['-A INPUT -m ttl --ttl-lt 64 -j DROP'],
  ['-A INPUT -m ttl ! --ttl-eq 64 -j DROP'],
  ['-A INPUT -m dscp --dscp 10 -j DROP'],
  ['-A INPUT -m dscp ! --dscp-class EF -j DROP'],
  ['-A INPUT -m mac --mac-source 00:11:22:33:44:55 -j DROP'],
  ['-A INPUT -m mac ! --mac-source 00:11:22:33:44:55 -j DROP'],
  ['-A INPUT -m connmark --mark 0x5 -j ACCEPT'],
  ['-A INPUT -m connmark ! --mark 0x5 -j ACCEPT'],
  ['-A INPUT -m connmark --mark 0x5/0xff -j ACCEPT'],
  ['-A INPUT -m connmark ! --mark 0x5/0xff -j ACCEPT'],
  ['-A INPUT -m helper --helper ftp -j ACCEPT'],
  ['-A INPUT -m helper ! --helper ftp -j ACCEPT'],
  ['-A INPUT -m cpu --cpu 1 -j ACCEPT'],
  ['-A INPUT -m cpu ! --cpu 1 -j ACCEPT'],
  ['-A INPUT -m realm --realm 5 -j ACCEPT'],
  ['-A INPUT -m realm --realm 5/0xff -j ACCEPT'],
  ['-A INPUT -m realm ! --realm 5 -j ACCEPT'],
  ['-A INPUT -m devgroup --src-group 5 -j ACCEPT'],
  ['-A INPUT -m devgroup --src-group 5/0xff -j ACCEPT'],
  ['-A INPUT -m cgroup --cgroup 5 -j ACCEPT'],
  ['-A INPUT -m cgroup ! --cgroup 5 -j ACCEPT'],
  ['-A INPUT -m ecn --ecn-ip-ect 1 -j ACCEPT'],
  ['-A INPUT -m ecn ! --ecn-ip-ect 2 -j ACCEPT'],
  ['-A INPUT -p tcp -m ecn --ecn-tcp-cwr -j ACCEPT'],
  ['-A INPUT -p tcp -m ecn --ecn-tcp-ece --ecn-tcp-cwr -j ACCEPT'],
  ['-A INPUT -p tcp -m ecn --ecn-tcp-cwr --ecn-ip-ect 1 -j ACCEPT'],
  ['-A INPUT -p tcp -m ecn ! --ecn-tcp-ece -j ACCEPT', 'raw'],
  ['-A INPUT -p esp -m esp --espspi 5 -j ACCEPT'],
  ['-A INPUT -p esp -m esp --espspi 5:9 -j ACCEPT'],
  ['-A INPUT -p esp -m esp ! --espspi 5 -j ACCEPT'],
  ['-A INPUT -p sctp -m sctp --dport 5 -j ACCEPT'],
  ['-A INPUT -p sctp -m sctp --sport 5 -j ACCEPT'],
  ['-A INPUT -p sctp -m sctp ! --dport 5:6 -j ACCEPT'],
  ['-A INPUT -p sctp -m sctp --chunk-types any INIT -j ACCEPT', 'raw'],
  ['-A INPUT -p dccp -m dccp --dport 5 -j ACCEPT'],
  ['-A INPUT -p dccp -m dccp ! --sport 5:7 --dport 6 -j ACCEPT'],
  ['-A INPUT -p dccp -m dccp --dccp-types REQUEST -j ACCEPT'],
  ['-A INPUT -p dccp -m dccp ! --dccp-types REQUEST,RESPONSE,INVALID -j ACCEPT'],
  ['-A INPUT -p dccp -m dccp --dport 5 --dccp-types DATA,ACK -j ACCEPT'],
  ['-A INPUT -p dccp -m dccp --sport 5:6 ! --dccp-types SYNC -j ACCEPT'],
  ['-A INPUT -p dccp -m dccp --dccp-option 4 -j ACCEPT', 'raw'],
  ['-A INPUT -m conntrack --ctstatus ASSURED -j ACCEPT'],
  ['-A INPUT -m conntrack --ctstatus EXPECTED,ASSURED -j ACCEPT'],
  ['-A INPUT -m conntrack ! --ctstatus ASSURED -j ACCEPT'],
  ['-A INPUT -m conntrack --ctdir ORIGINAL -j ACCEPT'],
  ['-A INPUT -m conntrack --ctdir REPLY -j ACCEPT'],
  // nft lists `ct expiration 10-20`, which nft -f reads in milliseconds (10000-20000), where xt_conntrack counts whole seconds
  ['-A INPUT -m conntrack --ctexpire 10:20 -j ACCEPT', 'raw'],
  ['-A INPUT -m conntrack --ctexpire 10 -j ACCEPT', 'raw'],
  ['-A INPUT -m conntrack --ctorigsrc 127.0.0.1 -j ACCEPT'],
  ['-A INPUT -m conntrack --ctorigsrc 127.0.0.0/8 -j ACCEPT', 'raw'],
  ['-A INPUT -m conntrack ! --ctorigsrc 127.0.0.1 -j ACCEPT'],
  ['-A INPUT -m conntrack --ctstate NEW --ctstatus ASSURED -j ACCEPT'],
  ['-A INPUT -m conntrack --ctstate NEW --ctdir ORIGINAL -j ACCEPT'],
  ['-A INPUT -m conntrack --ctstate ESTABLISHED --ctorigsrc 127.0.0.1 -j ACCEPT'],
  ['-A INPUT -m conntrack --ctproto tcp --ctorigdstport 80 -j ACCEPT'],
  ['-A INPUT -m conntrack --ctstatus ASSURED --ctexpire 10:20 -j ACCEPT', 'raw'],
  ['-A INPUT -m conntrack --ctorigsrc 127.0.0.1 --ctorigdst 169.254.0.0/16 --ctreplsrc 127.0.0.3 ! --ctrepldst 127.0.0.4 -j ACCEPT', 'raw'],
  ['-A INPUT -m conntrack --ctorigsrc 127.0.0.1 --ctorigdst 169.254.0.1 --ctreplsrc 127.0.0.3 ! --ctrepldst 127.0.0.4 -j ACCEPT'],
  ['-A INPUT -m conntrack --ctproto udp --ctorigsrcport 5 ! --ctrepldstport 6:7 --ctreplsrcport 8 -j ACCEPT'],
  ['-A INPUT -m conntrack ! --ctproto tcp -j ACCEPT'],
  ['-A INPUT -m conntrack --ctstate NEW --ctproto tcp --ctdir REPLY -j ACCEPT'],
  ['-A INPUT -m conntrack --ctstate SNAT --ctproto tcp -j ACCEPT'],
  ['-A INPUT -m conntrack --ctstatus ASSURED --ctstate DNAT -j ACCEPT'],
  // a port without --ctproto or -p: nft lists ct original proto-src 7, which nft -f refuses; after -p it reads it back
  ['-A INPUT -m conntrack --ctexpire 5:9 --ctorigsrcport 7 -j ACCEPT', 'raw'],
  ['-A INPUT -p tcp -m conntrack --ctorigdstport 80 -j ACCEPT'],
  ['-A INPUT ! -p tcp -m conntrack --ctorigdstport 80 -j ACCEPT', 'raw'],
  ['-A INPUT -m conntrack --ctorigdstport 80 --ctstate NEW -j DROP', 'raw'],
  ['-A INPUT -m conntrack ! --ctexpire 5:9 --ctstate NEW -j ACCEPT', 'raw'],
  // after `! --ctproto` no protocol names the port: nft lists `ct original protocol != 6 ct original proto-dst 89`, which
  // nft -f refuses; after -p it reads it back
  ['-A INPUT -m conntrack ! --ctproto tcp --ctorigdstport 89 -j ACCEPT', 'raw'],
  ['-A INPUT -p udp -m conntrack ! --ctproto tcp --ctorigdstport 89 -j ACCEPT'],
  // after --ctproto gre (no -p), nft lists `ct original protocol 47 ct original proto-dst 5`, which nft -f refuses (nft
  // 1.0.6 names no gre header); after -p gre it reads the port back
  ['-A INPUT -m conntrack --ctproto gre --ctorigdstport 5 -j ACCEPT', 'raw'],
  ['-A INPUT -p gre -m conntrack --ctorigdstport 5 -j ACCEPT'],
  // nft lists `ct expiration 4294968`, which nft -f refuses (value too large)
  ['-A INPUT -m conntrack --ctexpire 4294968 -j ACCEPT', 'raw'],
  // a bare -m tcp or -m udp, which nft lists as nothing (`meta l4proto tcp  counter`), reading back as no match
  ['-A INPUT -p tcp -m tcp -j ACCEPT', 'raw'],
  ['-A INPUT -p udp -m udp -j ACCEPT', 'raw'],
  // so are a bare -m esp, -m ah, -m dccp (esp printed `esp spi 0-4294967295` before, ah and dccp raw with no reason)
  ['-A INPUT -p esp -m esp -j ACCEPT', 'raw'],
  ['-A INPUT -p ah -m ah -j ACCEPT', 'raw'],
  ['-A INPUT -p dccp -m dccp -j ACCEPT', 'raw'],
  // ah as esp (raw with no reason before)
  ['-A INPUT -p ah -m ah --ahspi 5 -j ACCEPT'],
  ['-A INPUT -p ah -m ah --ahspi 5:9 -j ACCEPT'],
  ['-A INPUT -p ah -m ah ! --ahspi 5 -j ACCEPT'],
  ['-A INPUT -m statistic --mode random --probability 0.5 -j ACCEPT'],
  ['-A INPUT -m statistic --mode random ! --probability 0.25 -j ACCEPT'],
  ['-A INPUT -m statistic --mode nth --every 3 --packet 1 -j ACCEPT'],
  ['-A INPUT -m statistic --mode nth ! --every 5 --packet 0 -j ACCEPT'],
  ['-A INPUT -m time --timestart 10:00 --timestop 12:00 -j ACCEPT'],
  ['-A INPUT -m time --weekdays Mon,Tue -j ACCEPT'],
  ['-A INPUT -m time --datestart 2024-01-01T00:00:00 --datestop 2025-01-01 -j ACCEPT'],
  ['-A INPUT -m time --datestart 2024-03-05T01:02:03 --timestart 10:00:05 --timestop 12:00 --weekdays Sat -j ACCEPT'],
  ['-A INPUT -m time --timestart 10:00 -j ACCEPT'],
  ['-A INPUT -m time ! --weekdays Sun -j ACCEPT'],
  ['-A INPUT -m time --weekdays Sun -j ACCEPT'],
  ['-A INPUT -m time --monthdays 5 -j ACCEPT', 'raw'],
  ['-A INPUT -m time --timestart 22:00 --timestop 02:00 --contiguous -j ACCEPT'],
  ['-A INPUT -m time --timestart 22:00 --timestop 02:00 --contiguous --weekdays Mon -j ACCEPT', 'raw'],
  ['-A INPUT -m time --timestart 10:00 --kerneltz -j ACCEPT', 'raw'],
  ['-A INPUT -m policy --dir in --pol ipsec -j ACCEPT'],
  ['-A INPUT -m policy --dir in --pol none -j ACCEPT'],
  ['-A INPUT -m policy --dir in --pol ipsec --strict --proto esp -j ACCEPT', 'raw'],
  ['-A INPUT -m quota --quota 1000 -j ACCEPT'],
  ['-A INPUT -m quota ! --quota 1048576 -j ACCEPT'],
  ['-A INPUT -p tcp -m tcpmss --mss 100:200 -j ACCEPT'],
  ['-A INPUT -p tcp -m tcpmss --mss 100 -j ACCEPT'],
  ['-A INPUT -p tcp -m tcpmss ! --mss 100:200 -j ACCEPT'],
  ['-A INPUT -p tcp -m tcp --tcp-option 2 -j ACCEPT'],
  ['-A INPUT -p tcp -m tcp ! --tcp-option 3 --dport 22 -j ACCEPT'],
  ['-A INPUT -p tcp -m tcp --sport 5:6 ! --dport 7 --tcp-option 4 -j ACCEPT'],
  ['-A INPUT -p tcp -m tcp --tcp-flags SYN,ACK SYN --tcp-option 2 -j ACCEPT'],
  ['-A INPUT -p tcp -m tcp ! --tcp-flags ALL NONE --tcp-option 2 -j ACCEPT'],
  ['-A INPUT -m connbytes --connbytes 10: --connbytes-dir both --connbytes-mode bytes -j ACCEPT'],
  ['-A INPUT -m connbytes --connbytes 10:20 --connbytes-dir original --connbytes-mode packets -j ACCEPT'],
  ['-A INPUT -m connbytes ! --connbytes 10:20 --connbytes-dir reply --connbytes-mode avgpkt -j ACCEPT'],
  ['-A INPUT -m connbytes ! --connbytes 10: --connbytes-dir both --connbytes-mode bytes -j ACCEPT'],
  ['-A INPUT -m connbytes --connbytes 5:5 --connbytes-dir both --connbytes-mode bytes -j ACCEPT'],
  // hashlimit as a meter: packet and byte rates, bursts, masks, timeouts; raw: no key (`xt match hashlimit`), ports
  // after no tcp match (libxtables writes `tcp dport`), --hashlimit-rate-match (its translation says `(null)`)
  ['-A INPUT -m hashlimit --hashlimit-upto 10/sec --hashlimit-name h0 -j ACCEPT', 'raw'],
  ['-A INPUT -p tcp -m hashlimit --hashlimit-above 5/min --hashlimit-burst 7 --hashlimit-mode srcip,dstport --hashlimit-name h1 -j DROP'],
  ['-A INPUT -p udp -m hashlimit --hashlimit-above 5/min --hashlimit-mode srcip,dstport --hashlimit-name h2 -j DROP', 'raw'],
  ['-A INPUT -m hashlimit --hashlimit-upto 100kb/s --hashlimit-name h3 --hashlimit-mode dstip --hashlimit-htable-expire 30000 -j ACCEPT'],
  ['-A INPUT -m hashlimit --hashlimit-upto 3/hour --hashlimit-name h4 --hashlimit-srcmask 24 --hashlimit-mode srcip -j ACCEPT'],
  ['-A INPUT -p tcp -m hashlimit --hashlimit-upto 100kb/s --hashlimit-burst 200kb --hashlimit-name h5 --hashlimit-mode dstip,srcport -j ACCEPT'],
  ['-A INPUT -m hashlimit --hashlimit-upto 7/sec --hashlimit-name h6 --hashlimit-mode dstip --hashlimit-htable-expire 1000 -j ACCEPT'],
  ['-A INPUT -m hashlimit --hashlimit-upto 1000b/s --hashlimit-name h7 --hashlimit-mode srcip -j ACCEPT'],
  ['-A INPUT -m hashlimit --hashlimit-upto 2/day --hashlimit-name h8 --hashlimit-mode srcip --hashlimit-rate-match -j ACCEPT', 'raw'],
  ['-A INPUT -m hashlimit --hashlimit-upto 2/day --hashlimit-name h9 --hashlimit-mode srcip --hashlimit-rate-interval 5 -j ACCEPT'],
  ['-A INPUT -m hashlimit --hashlimit-upto 333/sec --hashlimit-name h10 --hashlimit-mode srcip --hashlimit-dstmask 7 -j ACCEPT'],
  ['-A INPUT -m hashlimit --hashlimit-upto 3/min --hashlimit-name h11 --hashlimit-mode srcip,dstip --hashlimit-dstmask 7 --hashlimit-srcmask 0 -j ACCEPT'],
  ['-A INPUT -m hashlimit --hashlimit-upto 5mb/s --hashlimit-burst 6mb --hashlimit-name h12 --hashlimit-mode srcip -j ACCEPT'],
  ['-A INPUT -p tcp -m hashlimit --hashlimit-upto 1/sec --hashlimit-burst 1 --hashlimit-name h13 --hashlimit-mode srcport,dstport,srcip,dstip -j ACCEPT'],
  // connlabel by number (libxt_connlabel names a label from /etc/xtables/connlabel.conf: this machine has none, and
  // none names bits this high; its warning goes to stderr); inverted raw: without conntrack xt_connlabel matches, `ct label` breaks
  ['-A INPUT -m connlabel --label 120 -j ACCEPT'],
  ['-A INPUT -m connlabel --label 121 --set -j ACCEPT'],
  ['-A INPUT -m connlabel ! --label 122 -j ACCEPT', 'raw'],
  ['-A INPUT -m connlabel ! --label 123 --set -j ACCEPT', 'raw'],
  ['-A OUTPUT -m owner --uid-owner 0 -j ACCEPT'],
  ['-A OUTPUT -m owner ! --gid-owner 3-7 -j ACCEPT'],
  ['-A OUTPUT -m owner --uid-owner 1 --gid-owner 2 -j ACCEPT', 'raw'],
  ['-A OUTPUT -m addrtype ! --src-type LOCAL --limit-iface-out -j ACCEPT'],
  ['-A OUTPUT -m policy --dir out --pol none -j ACCEPT', 'raw'],
];

/**
 * ip6tables-nft's rules with xt matches and targets nft 1.0.6 translates, listed
 * apart from iptables-nft's: nft 1.0.6 lists an extension of one name in one
 * family only (after the ip6 SNAT, the ip one lists as `XT target SNAT not found`).
 */
const IP6TABLES_XT: ReadonlyArray<[rule: string]> = [
  // libxt_DSCP's DSCP_xlate6 (raw with no reason before)
  ['-t mangle -A PREROUTING -j DSCP --set-dscp 10'],
  ['-t mangle -A PREROUTING -j DSCP --set-dscp 0'],
  ['-A INPUT -p icmpv6 --icmpv6-type neighbour-solicitation -j ACCEPT'],
  ['-A INPUT -p icmpv6 ! --icmpv6-type echo-reply -j DROP'],
  ['-A INPUT -p tcp -j REJECT --reject-with icmp6-adm-prohibited'],
  ['-A INPUT -j REJECT --reject-with icmp6-no-route'],
  ['-A INPUT -j REJECT --reject-with icmp6-policy-fail'],
  ['-A INPUT -j REJECT'],
  ['-A INPUT -p tcp -j REJECT --reject-with tcp-reset'],
  ['-t nat -A POSTROUTING -j SNAT --to-source fd00::1'],
  ['-t nat -A POSTROUTING -p tcp -j SNAT --to-source fd00::1 --random --persistent'],
  ['-t nat -A PREROUTING -p tcp -j DNAT --to-destination [fd00::2]:8080'],
  ['-t nat -A PREROUTING -p tcp -j DNAT --to-destination [fd00::2]:80-90'],
  ['-t nat -A PREROUTING -p tcp -j DNAT --to-destination fd00::2-fd00::5'],
  ['-t nat -A POSTROUTING -j MASQUERADE'],
  ['-t nat -A POSTROUTING -p tcp -j MASQUERADE --to-ports 1000-2000 --random'],
  ['-t nat -A PREROUTING -p tcp -j REDIRECT --to-ports 8080'],
  ['-A INPUT -m hl --hl-eq 255 -j DROP'],
  ['-A INPUT -m hl --hl-gt 5 -j DROP'],
  ['-A INPUT -m dscp --dscp 10 -j DROP'],
  ['-A INPUT -m length --length 100:200 -j DROP'],
  ['-A INPUT -m iprange --src-range fd00::1-fd00::5 -j DROP'],
  ['-A INPUT -m iprange --src-range fd00::1-fd00::5 ! --dst-range fd00::7-fd00::9 -j DROP'],
  ['-A INPUT -m addrtype --dst-type LOCAL -j DROP'],
  ['-A INPUT -m pkttype --pkt-type broadcast -j DROP'],
  ['-A INPUT -m conntrack --ctorigsrc fd00::1 --ctrepldst fd00::2 -j ACCEPT'],
  ['-A INPUT -m conntrack ! --ctorigdst fd00::5 --ctstate NEW -j ACCEPT'],
  ['-A INPUT -m statistic --mode random --probability 0.1 -j ACCEPT'],
  ['-A INPUT -m time --timestart 01:00 --timestop 02:30 -j ACCEPT'],
  ['-A INPUT -m policy --dir in --pol ipsec -j ACCEPT'],
  ['-A INPUT -p dccp -m dccp --dccp-types CLOSE,RESET -j ACCEPT'],
  ['-A INPUT -p tcp -m ecn --ecn-tcp-ece -j ACCEPT'],
  ['-A INPUT -m frag --fragid 5 -j ACCEPT'],
  ['-A INPUT -m frag --fragmore -j ACCEPT'],
  ['-A INPUT -m frag ! --fragid 5:9 --fraglast -j ACCEPT'],
  ['-A INPUT -m frag --fragfirst -j ACCEPT'],
  ['-A INPUT -m rt --rt-type 2 -j ACCEPT'],
  ['-A INPUT -m rt ! --rt-type 2 --rt-segsleft 3:5 -j ACCEPT'],
  ['-A INPUT -m rt ! --rt-segsleft 3 -j ACCEPT'],
  ['-A INPUT -p mh -m mh --mh-type 1 -j ACCEPT'],
  ['-A INPUT -p mh -m mh ! --mh-type 1:3 -j ACCEPT'],
  ['-A INPUT -p tcp -m tcp --dport 22 --tcp-option 2 -j ACCEPT'],
  ['-A INPUT -m connbytes --connbytes 10: --connbytes-dir both --connbytes-mode bytes -j ACCEPT'],
  ['-A INPUT -m hashlimit --hashlimit-above 3/sec --hashlimit-name h6a --hashlimit-mode srcip,dstip --hashlimit-srcmask 64 -j ACCEPT'],
  ['-A INPUT -p tcp -m hashlimit --hashlimit-upto 3/sec --hashlimit-name h6b --hashlimit-mode dstip,dstport --hashlimit-dstmask 67 -j ACCEPT'],
  ['-t mangle -A PREROUTING -j TEE --gateway fd00::5 --oif lo'],
  ['-t mangle -A PREROUTING -j TEE --gateway ::1'],
];

/** Load iptables-nft rules in a fresh namespace; list them with nft and synplug (text, JSON; stderr and exit codes). */
function listIptables(
  name: string,
  rules: ReadonlyArray<readonly [string, ...unknown[]]>,
  tool = 'iptables-nft',
  tz = 'UTC',
): { dir: string; f: (n: string) => string } {
  const dir = join(tmp, name);
  spawnSync('mkdir', ['-p', dir]);
  const f = (n: string): string => join(dir, n);
  inNetns(
    [
      ...rules.map(([r]) => `/usr/sbin/${tool} ${r}`),
      `${NFT} list ruleset > ${q(f('nft.txt'))} 2> ${q(f('nft.err'))}`,
      `${NFT} -j list ruleset > ${q(f('nft.json'))} 2> ${q(f('nft.jerr'))}`,
      'set +e',
      // xt time's words read back as the same rule only where the listing's process keeps UTC
      `TZ=${tz} ${cli} show ruleset > ${q(f('ours.txt'))} 2> ${q(f('ours.err'))}; echo $? > ${q(f('ours.rc'))}`,
      `TZ=${tz} ${cli} show ruleset --json > ${q(f('ours.json'))} 2> ${q(f('ours.jerr'))}; echo $? >> ${q(f('ours.rc'))}`,
    ].join('\n'),
  );
  return { dir, f };
}

test.serial(
  "iptables-nft's xt targets print as nft translates them; one nft lists as `xt target NAME`, or whose translation means something else, prints raw, named on stderr, exit 11",
  (t) => {
    const { f } = listIptables('xt-targets', IPTABLES_TARGETS);
    const rules = (p: string): string[] =>
      readFileSync(f(p), 'utf8')
        .split('\n')
        .filter((l) => /counter packets/.test(l));
    const theirs = rules('nft.txt');
    const ours = rules('ours.txt');
    t.is(theirs.length, IPTABLES_TARGETS.length, 'every rule loaded');
    t.is(ours.length, theirs.length);
    t.is(theirs.filter((l) => / xt target /.test(l)).length, 5, 'CT --zone and --zone-orig, TTL, CONNMARK with two different masks');
    t.is(theirs.filter((l) => / ip6 dscp set /.test(l)).length, 3, 'TOS in an ip table');
    // tables in the order iptables-nft made them, rules in order within each: the raw ones by their target
    const raws = IPTABLES_TARGETS.filter(([, raw]) => raw);
    const rawLines = ours.filter((l) => /\[ raw: /.test(l));
    t.deepEqual(
      rawLines.map((l) => /\[ raw: target name ([A-Z]+) rev \d+( \(.+\))? \]$/.exec(l)?.[1]),
      raws.map(([r]) => /-j ([A-Z]+)/.exec(r)?.[1]),
    );
    ours.forEach((line, i) => {
      if (!rawLines.includes(line)) t.is(line, theirs[i]);
    });
    t.deepEqual(readFileSync(f('ours.rc'), 'utf8').split('\n').filter(Boolean), ['11', '11']);
    // nft's warning before each table of xt expressions, on stderr, in the tables' order; none with --json
    t.deepEqual(
      warnings(f('nft.err')),
      ['filter', 'raw', 'nat', 'mangle'].map((x) => `# Warning: table ip ${x} is managed by iptables-nft, do not touch!`),
    );
    t.deepEqual(warnings(f('ours.err')), warnings(f('nft.err')));
    t.deepEqual([warnings(f('nft.jerr')), warnings(f('ours.jerr'))], [[], []]);
    const err = readFileSync(f('ours.err'), 'utf8');
    t.true(err.includes(`${raws.length} part(s) of the ruleset cannot be printed`), err);
    // each raw for a reason: nft lists the name alone (`xt target TTL`), or libxt_TOS's translation means another rule
    t.regex(err, /table ip mangle chain PREROUTING handle \d+: target name TTL rev 0 \(nft 1\.0\.6 lists it as "xt target TTL", which nft -f cannot read\)\n/);
    t.regex(err, /table ip raw chain PREROUTING handle \d+: target name CT rev 2 \(nft 1\.0\.6 lists it as "xt target CT", which nft -f cannot read\)\n/);
    t.regex(err, /: target name TOS rev 1 \(nft 1\.0\.6 lists it as "ip6 dscp set \.\.\." in every family, which sets other bits than TOS\)\n/);
    // JSON: nft -j writes every xt target as {"xt": {...}}; ours equals it where the text is translated
    const json = (p: string): Array<{ rule?: { expr: unknown[] } }> => JSON.parse(readFileSync(f(p), 'utf8')).nftables;
    const theirRules = json('nft.json').filter((x) => x.rule);
    const ourRules = json('ours.json').filter((x) => x.rule);
    t.is(ourRules.length, theirRules.length);
    let same = 0;
    ourRules.forEach((r, i) => {
      if (r.rule!.expr.some((x) => typeof x === 'object' && x !== null && 'raw' in x)) return;
      t.deepEqual(r, theirRules[i]);
      same++;
    });
    t.is(same, theirRules.length - raws.length);
  },
);

test.serial(
  "iptables-nft's xt matches print as nft translates them; those synplug does not reproduce print raw with the match's name, in a short stderr line; exit 11",
  (t) => {
    const { f } = listIptables('xt-matches', IPTABLES_MATCHES);
    const theirs = readFileSync(f('nft.txt'), 'utf8').split('\n');
    const ours = readFileSync(f('ours.txt'), 'utf8').split('\n');
    t.is(ours.length, theirs.length);
    const rules = (lines: string[]): string[] => lines.filter((l) => /counter packets/.test(l));
    t.is(rules(theirs).length, IPTABLES_MATCHES.length, 'every rule loaded, in order');
    IPTABLES_MATCHES.forEach(([rule, raw], i) => {
      if (raw)
        t.regex(
          rules(ours)[i],
          /\[ raw: match name [a-z]+ rev \d+( \((ct [a-z ]+ [0-9.]+\/\d+: nft -f reads this prefix back as another address|a port without --ctproto \(or after ! --ctproto\) or -p: nft -f cannot read it back|--ctproto \d+, which nft names no header of, and no -p: nft -f cannot read the port back|nft lists "ct expiration [0-9-]+", (read back as [0-9-]+ ms: --ctexpire matches \d+ to [0-9.]+ s|which nft -f refuses: value too large)|nft 1\.0\.6 lists it as nothing, which reads back as no match: -m (tcp|udp|esp|ah|dccp) drops non-first fragments|nft 1\.0\.6 lists "fib saddr type \.\.\.", the --src-type alone, leaving --dst-type out|nft 1\.0\.6 lists "ct label and N != N": no match without conntrack, where ! --label matches|nft 1\.0\.6 lists it as "xt match [a-z]+", which nft -f cannot read|nft 1\.0\.6 lists "xt match connlimit" or, at random, "add @connlimit0 \.\.\." \(no such set\)|nft 1\.0\.6 lists "ct status snat" \(or dnat\) (alone, leaving the other states out|with the ! of --ctstatus, not of --ctstate)|nft 1\.0\.6 lists "tcp flags != \.\.\.", every part inverted, comparing the whole byte: -m ecn tests a bit)\))? \]/,
          rule,
        );
      else t.is(rules(ours)[i], rules(theirs)[i], rule);
      // connlimit, recent and tos say why (nft lists the name alone; connlimit's translation at random names a set not there)
      if (/-m (connlimit|recent|tos) /.test(rule)) t.regex(rules(ours)[i], /\(nft 1\.0\.6 lists /, rule);
    });
    t.deepEqual(readFileSync(f('ours.rc'), 'utf8').split('\n').filter(Boolean), ['11', '11']);
    t.deepEqual(warnings(f('ours.err')), warnings(f('nft.err')));
    const lines = readFileSync(f('ours.err'), 'utf8')
      .trim()
      .split('\n')
      .filter((l) => !/^(# )?Warning: /.test(l))
      .slice(1);
    t.is(lines.length, IPTABLES_MATCHES.filter(([, raw]) => raw).length);
    for (const l of lines) {
      t.regex(
        l,
        /: match name (conntrack|tcp|udp|esp|ah|multiport|recent|tos|connlimit|addrtype|owner|icmp|ecn|sctp|dccp|time|policy|hashlimit|connlabel) rev \d+( \(.+\))?$/,
      );
      t.true(l.length < (l.endsWith(')') ? 170 : 100), l);
    }
    // JSON: nft -j writes every xt match as {"xt": {...}}; ours equals it where the text is translated
    const json = (p: string): Array<{ rule?: { expr: unknown[] } }> =>
      JSON.parse(readFileSync(f(p), 'utf8')).nftables.filter((x: { rule?: unknown }) => x.rule);
    const theirRules = json('nft.json');
    const ourRules = json('ours.json');
    t.is(ourRules.length, theirRules.length);
    const printed = ourRules.filter((r) => !r.rule!.expr.some((x) => typeof x === 'object' && x !== null && 'raw' in x));
    t.is(printed.length, IPTABLES_MATCHES.filter(([, raw]) => !raw).length);
    for (const r of printed) t.deepEqual(r, theirRules[ourRules.indexOf(r)]);
  },
);

/** ebtables-nft's rules with xt matches, targets and watchers nft 1.0.6 translates. */
const EBTABLES_XT: ReadonlyArray<[rule: string]> = [
  ['-A INPUT -j mark --mark-set 0x5'],
  ['-A INPUT -j mark --mark-or 0x5'],
  ['-A INPUT -j mark --mark-and 0x5 --mark-target DROP'],
  ['-A INPUT -j mark --mark-xor 0x5 --mark-target RETURN'],
  ['-A INPUT -j mark --mark-set 0x123456789 --mark-target CONTINUE'],
  ['-A INPUT --pkttype-type host -j ACCEPT'],
  ['-A INPUT --pkttype-type ! multicast -j ACCEPT'],
  ['-A INPUT --pkttype-type otherhost -j ACCEPT'],
  ['-A INPUT -p 802_1Q --vlan-id 5 -j ACCEPT'],
  ['-A INPUT -p 802_1Q --vlan-id ! 5 -j ACCEPT'],
  ['-A INPUT -p 802_1Q --vlan-prio 3 -j ACCEPT'],
  ['-A INPUT -p 802_1Q --vlan-encap IPv4 -j ACCEPT'],
  ['-A INPUT -j nflog --nflog-group 3 --nflog-prefix "ab c"'],
  ['-A INPUT -j nflog --nflog-threshold 5'],
  ['-A INPUT -p IPv4 --ip-src 169.254.0.1 -j ACCEPT'],
  ['-A INPUT -p IPv4 --ip-proto tcp --ip-dport 22 -j ACCEPT'],
  ['-A INPUT -p IPv4 --ip-dst ! 169.254.0.0/16 --ip-proto udp --ip-sport 5:7 --ip-dport 53 -j ACCEPT'],
  ['-A INPUT -p IPv4 --ip-proto ! udp -j ACCEPT'],
  ['-A INPUT -p IPv4 --ip-proto 47 -j ACCEPT'],
  ['-A INPUT -p IPv4 --ip-proto icmp --ip-icmp-type echo-request -j ACCEPT'],
  ['-A INPUT -p IPv4 --ip-proto icmp --ip-icmp-type 8/0 -j ACCEPT'],
  ['-A INPUT -p IPv4 --ip-proto icmp --ip-icmp-type ! 3:5 -j ACCEPT'],
  ['-A INPUT -p IPv4 --ip-src 169.254.0.1 --ip-proto icmp --ip-icmp-type 3/1:2 -j ACCEPT'],
  ['-A INPUT -p IPv6 --ip6-src fd00::1 -j ACCEPT'],
  ['-A INPUT -p IPv6 --ip6-dst ! fd00::/64 --ip6-src fd00::2/ffff:: -j ACCEPT'],
  ['-A INPUT -p IPv6 --ip6-proto tcp --ip6-dport 22 -j ACCEPT'],
  ['-A INPUT -p IPv6 --ip6-proto udp --ip6-sport 5:7 ! --ip6-dport 53 -j ACCEPT'],
  ['-A INPUT -p IPv6 --ip6-proto udp -j ACCEPT'],
  ['-A INPUT -p IPv6 --ip6-proto ! tcp -j ACCEPT'],
  ['-A INPUT -p IPv6 --ip6-proto 47 -j ACCEPT'],
  ['-A INPUT -p IPv6 --ip6-proto ipv6-icmp -j ACCEPT'],
  ['-A INPUT -p IPv6 --ip6-proto ipv6-icmp --ip6-icmp-type echo-request -j ACCEPT'],
  ['-A INPUT -p IPv6 --ip6-proto ipv6-icmp --ip6-icmp-type ! 1:4 -j ACCEPT'],
  ['-A INPUT -p IPv6 --ip6-proto ipv6-icmp --ip6-icmp-type 1/3 -j ACCEPT'],
  ['-A INPUT -p IPv6 --ip6-src fd00::1 --ip6-proto tcp --ip6-sport 80 -j ACCEPT'],
  ['-A INPUT --mark 0x5 -j ACCEPT'],
  ['-A INPUT --mark ! 0x5/0xff -j ACCEPT'],
  ['-A INPUT --mark /0x4 -j ACCEPT'],
  ['-A INPUT --mark ! /0x4 -j ACCEPT'],
  ['-A INPUT --log -j ACCEPT'],
  ['-A INPUT --log-prefix x --log-level debug -j ACCEPT'],
  ['-A INPUT --log-level notice --log-prefix abc --log-ip --log-arp -j ACCEPT'],
  ['-t nat -A PREROUTING -j dnat --to-dst 00:11:22:33:44:55'],
  ['-t nat -A PREROUTING -j dnat --to-dst 0a:1b:2c:3d:4e:5f --dnat-target CONTINUE'],
  ['-t nat -A PREROUTING -j dnat --to-dst 00:11:22:33:44:55 --dnat-target RETURN'],
  ['-t nat -A POSTROUTING -j snat --to-src 00:11:22:33:44:55'],
  ['-t nat -A POSTROUTING -j snat --to-src 00:11:22:33:44:55 --snat-target DROP'],
];

for (const [tool, rows] of [
  ['ip6tables-nft', IP6TABLES_XT],
  ['ebtables-nft', EBTABLES_XT],
] as const) {
  test.serial(`${tool}'s xt matches and targets print as nft translates them, text and JSON, exit 0`, (t) => {
    checkXtExact(t, tool, rows);
  });
}

/** Every rule of `rows`, loaded by `tool`, listed by synplug as by nft (text and JSON), exit 0. */
function checkXtExact(t: ExecutionContext, tool: string, rows: ReadonlyArray<[string]>): void {
  const { f } = listIptables(`xt-${tool}`, rows, tool);
  const rules = (p: string): string[] =>
    readFileSync(f(p), 'utf8')
      .split('\n')
      .filter((l) => /counter packets/.test(l));
  t.is(rules('nft.txt').length, rows.length, 'every rule loaded');
  t.deepEqual(rules('ours.txt'), rules('nft.txt'));
  t.deepEqual(readFileSync(f('ours.rc'), 'utf8').split('\n').filter(Boolean), ['0', '0']);
  const json = (p: string): unknown[] => JSON.parse(readFileSync(f(p), 'utf8')).nftables.filter((x: { rule?: unknown }) => x.rule);
  t.deepEqual(json('ours.json'), json('nft.json'));
  // stderr: nft's warning before each table of xt expressions (text only), and nothing else
  t.regex(readFileSync(f('nft.err'), 'utf8'), /^# Warning: table (ip6|bridge) \w+ is managed by iptables-nft, do not touch!$/m);
  t.is(readFileSync(f('ours.err'), 'utf8'), readFileSync(f('nft.err'), 'utf8'));
  t.is(readFileSync(f('ours.jerr'), 'utf8'), readFileSync(f('nft.jerr'), 'utf8'));
}

/**
 * The lines of nft's warnings in a file of stderr: `# Warning: table ip filter is managed by iptables-nft, do not
 * touch!`, and libxt_connlabel's `Warning: cannot open /etc/xtables/connlabel.conf: No such file or directory`.
 */
const warnings = (file: string): string[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => /^(# )?Warning: /.test(l));

/** The rule lines (`counter packets` in each) of a listing file. */
const counted = (file: string): string[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => /counter packets/.test(l));
const exits = (file: string): string[] => readFileSync(file, 'utf8').split('\n').filter(Boolean);

/**
 * iptables-nft's and ip6tables-nft's rules whose xt match printed raw with no reason (issue 21's MINORs), each with
 * what nft 1.0.6 lists for it (the rule line before ` counter`) and why synplug prints it raw (a fragment of the
 * reason), or `same`: printed as nft lists it. Filter rules first, then raw's (the tables' listing order).
 */
const XT_REASONS: ReadonlyArray<readonly [tool: string, ReadonlyArray<readonly [rule: string, nft: string, why: RegExp | 'same']>]> = [
  [
    'iptables-nft',
    [
      ['-A INPUT -m conntrack --ctstate SNAT,NEW -j ACCEPT', 'ct status snat', /"ct status snat" \(or dnat\) alone, leaving the other states out/],
      ['-A INPUT -m conntrack --ctstate DNAT,UNTRACKED -j ACCEPT', 'ct status dnat', /leaving the other states out/],
      ['-A INPUT -m conntrack --ctstate SNAT,DNAT -j ACCEPT', 'ct status snat', /leaving the other states out/],
      ['-A INPUT -m conntrack ! --ctstate SNAT -j ACCEPT', 'ct status snat', /"ct status snat" \(or dnat\) with the ! of --ctstatus, not of --ctstate/],
      ['-A INPUT -m conntrack --ctstate SNAT ! --ctstatus ASSURED -j ACCEPT', 'ct status !=snat ct status ! assured', /with the ! of --ctstatus/],
      ['-A INPUT -m conntrack --ctstate UNTRACKED -j ACCEPT', 'ct state untracked', 'same'],
      ['-A INPUT -m conntrack ! --ctstate UNTRACKED -j ACCEPT', 'ct state ! untracked', 'same'],
      ['-A INPUT -m conntrack --ctstate DNAT -j ACCEPT', 'ct status dnat', 'same'],
      [
        '-A INPUT -m cluster --cluster-total-nodes 2 --cluster-local-node 1 --cluster-hash-seed 0xdeadbeef -j ACCEPT',
        'jhash ct original saddr mod 2 seed 0xdeadbeef eq 1 meta pkttype set host',
        /"jhash \.\.\. eq N": node N as hash N, where -m cluster hashes it to N-1/,
      ],
      [
        '-A INPUT -m cluster --cluster-total-nodes 4 --cluster-local-nodemask 5 --cluster-hash-seed 7 -j ACCEPT',
        'jhash ct original saddr mod 4 seed 0x00000007 { 0, 2 } meta pkttype set host',
        /"jhash \.\.\. meta pkttype set host": every matched packet, -m cluster multicast ones/,
      ],
      [
        '-A INPUT -p tcp -m ecn ! --ecn-tcp-cwr --ecn-ip-ect 1 -j ACCEPT',
        'meta l4proto tcp tcp flags != cwr ip ecn != ect1',
        /every part inverted, comparing the whole byte/,
      ],
      [
        '-t raw -A PREROUTING -m rpfilter -j ACCEPT',
        'fib saddr . iif oif != 0',
        /"fib saddr \.\.\.": it passes a source routed as broadcast, -m rpfilter unicast only/,
      ],
      [
        '-t raw -A PREROUTING -m rpfilter --loose --validmark --accept-local --invert -j ACCEPT',
        'fib saddr type != local fib saddr . mark oif 0',
        /routed as broadcast/,
      ],
      ['-t raw -A PREROUTING -m rpfilter --accept-local -j ACCEPT', 'xt match rpfilter', /lists it as "xt match rpfilter", which nft -f cannot read/],
    ],
  ],
  [
    'ip6tables-nft',
    [
      ['-A INPUT -m hbh --hbh-len 8 -j ACCEPT', 'hbh hdrlength 8', /"hbh hdrlength N", the field \(bytes \/ 8 - 1\), where --hbh-len counts bytes/],
      ['-A INPUT -m hbh ! --hbh-len 16 -j ACCEPT', 'hbh hdrlength != 16', /--hbh-len counts bytes/],
      ['-A INPUT -m hbh --hbh-opts 1:2 -j ACCEPT', 'xt match hbh', /lists it as "xt match hbh", which nft -f cannot read/],
      ['-A INPUT -m ah --ahspi 5 -j ACCEPT', 'ah spi 5', 'same'],
      ['-A INPUT -m ah --ahspi 5:9 -j ACCEPT', 'ah spi 5-9', 'same'],
      ['-A INPUT -m ah ! --ahspi 5 -j ACCEPT', 'ah spi != 5', 'same'],
      ['-A INPUT -m ah -j ACCEPT', 'meta l4proto ah', 'same'],
      ['-A INPUT -p ah -m ah --ahspi 7 -j ACCEPT', 'meta l4proto ah ah spi 7', 'same'],
      [
        '-A INPUT -m ah --ahspi 5:9 --ahlen 4 -j ACCEPT',
        'ah spi 5-9 ah hdrlength 4',
        /"ah hdrlength N", the field \(bytes \/ 4 - 2\), where --ahlen counts bytes/,
      ],
      ['-A INPUT -m ah --ahres -j ACCEPT', 'ah reserved 1', /"ah reserved 1", where --ahres matches reserved bits zero/],
      ['-A INPUT -m ah ! --ahspi 0:4294967295 -j ACCEPT', 'meta l4proto ah', /"meta l4proto ah", every AH packet, where ! --ahspi 0:4294967295 matches none/],
      ['-A INPUT -m ecn --ecn-ip-ect 1 -j ACCEPT', 'ip ecn ect1', /"ip ecn \.\.\.", an IPv4 field, which nft -f refuses in an ip6 table/],
      ['-A INPUT -p tcp -m ecn ! --ecn-ip-ect 2 -j ACCEPT', 'meta l4proto tcp ip ecn != ect0', /an IPv4 field/],
      [
        '-A INPUT -p tcp -m ecn ! --ecn-tcp-ece -j ACCEPT',
        'meta l4proto tcp tcp flags != ecn',
        /"tcp flags != \.\.\.", every part inverted, comparing the whole byte: -m ecn tests a bit/,
      ],
      ['-A INPUT -p tcp -m ecn --ecn-tcp-cwr -j ACCEPT', 'meta l4proto tcp tcp flags cwr', 'same'],
      [
        '-A INPUT -m cluster --cluster-total-nodes 2 --cluster-local-node 2 --cluster-hash-seed 1 -j ACCEPT',
        'jhash ct original saddr mod 2 seed 0x00000001 eq 2 meta pkttype set host',
        /node N as hash N/,
      ],
      [
        '-t raw -A PREROUTING -m rpfilter -j ACCEPT',
        'fib saddr . iif oif != 0',
        /"fib saddr \.\.\.": it fails a source :: \(but ICMPv6 to link-local\), -m rpfilter passes it/,
      ],
      ['-t raw -A PREROUTING -m rpfilter --accept-local -j ACCEPT', 'xt match rpfilter', /lists it as "xt match rpfilter"/],
    ],
  ],
];

for (const [tool, rows] of XT_REASONS) {
  test.serial(
    `regression: ${tool}'s --ctstate with SNAT, DNAT or UNTRACKED, -m rpfilter, -m cluster, --hbh-len, -m ecn and ip6 -m ah, raw with no reason before: each raw saying why (nft's listing, checked here, means another rule), or as nft lists it; exit 11`,
    (t) => {
      const { f } = listIptables(`xt-reasons-${tool}`, rows, tool);
      const [theirs, ours] = [counted(f('nft.txt')), counted(f('ours.txt'))];
      t.is(theirs.length, rows.length, 'every rule loaded');
      t.is(ours.length, rows.length);
      const raws: string[] = [];
      rows.forEach(([rule, nft, why], i) => {
        // the claim about nft 1.0.6's listing
        t.is(theirs[i], `\t\t${nft} counter packets 0 bytes 0 accept`, rule);
        if (why === 'same') {
          t.is(ours[i], theirs[i], rule);
          return;
        }
        const m = /\[ raw: (match name \w+ rev \d+) \((.+)\) \] counter packets 0 bytes 0 accept$/.exec(ours[i]);
        t.truthy(m, `${rule}: ${ours[i]}`);
        t.regex(m?.[2] ?? '', why, rule);
        raws.push(`${m?.[1]} (${m?.[2]})`);
      });
      t.deepEqual(exits(f('ours.rc')), ['11', '11']);
      // stderr names each raw one with its reason, in the listing's order
      const err = readFileSync(f('ours.err'), 'utf8');
      t.true(err.includes(`${raws.length} part(s) of the ruleset cannot be printed`), err);
      t.deepEqual(
        err
          .split('\n')
          .filter((l) => / handle \d+: /.test(l))
          .map((l) => l.replace(/^ +table \S+ \w+ chain \w+ handle \d+: /, '')),
        raws,
      );
      // JSON: the rules printed as nft lists them equal nft -j's
      const json = (p: string): Array<{ rule?: { expr: unknown[] } }> =>
        JSON.parse(readFileSync(f(p), 'utf8')).nftables.filter((x: { rule?: unknown }) => x.rule);
      const [theirJson, ourJson] = [json('nft.json'), json('ours.json')];
      rows.forEach(([rule, , why], i) => {
        if (why === 'same') t.deepEqual(ourJson[i], theirJson[i], rule);
      });
    },
  );
}

test.serial(
  'regression: a named object\'s or a set element\'s comment holding `"` (nft 1.0.6 lists `comment "k"l"`, which nft -f cannot read back; unchecked before, exit 0): listed as nft lists it, named on stderr, exit 11',
  (t) => {
    const dir = join(tmp, 'comment-quote');
    spawnSync('mkdir', ['-p', dir]);
    const f = (n: string): string => join(dir, n);
    // nft -f cannot write such a comment; nft -j -f can (nft 1.0.6's JSON reads no table, chain or set comment)
    writeFileSync(
      f('in.json'),
      JSON.stringify({
        nftables: [
          { table: { family: 'ip', name: 't' } },
          { counter: { family: 'ip', table: 't', name: 'k', comment: 'k"l' } },
          { set: { family: 'ip', table: 't', name: 's', type: 'ipv4_addr', elem: [{ elem: { val: '127.0.0.1', comment: 'e"f' } }] } },
        ],
      }),
    );
    inNetns(
      [
        `${NFT} -j -f ${q(f('in.json'))}`,
        `${NFT} list ruleset > ${q(f('nft.txt'))}`,
        'set +e',
        `${cli} show ruleset > ${q(f('ours.txt'))} 2> ${q(f('ours.err'))}; echo $? > ${q(f('ours.rc'))}`,
        `${cli} show ruleset --json > ${q(f('ours.json'))} 2> ${q(f('ours.jerr'))}; echo $? >> ${q(f('ours.rc'))}`,
        // the claim: nft -f cannot read nft's own listing back
        `${NFT} flush ruleset; ${NFT} -f ${q(f('nft.txt'))} 2> ${q(f('reread.err'))}; echo $? > ${q(f('reread.rc'))}`,
      ].join('\n'),
    );
    const theirs = readFileSync(f('nft.txt'), 'utf8');
    t.regex(theirs, /\t\tcomment "k"l"\n/);
    t.regex(theirs, /elements = \{ 127\.0\.0\.1 comment "e"f" \}/);
    t.is(readFileSync(f('ours.txt'), 'utf8'), theirs);
    t.deepEqual(exits(f('ours.rc')), ['11', '0']);
    t.is(
      readFileSync(f('ours.err'), 'utf8'),
      [
        "synplug: show ruleset: 2 part(s) of the ruleset cannot be printed in nft's language (raw ones marked [ raw: ... ] above):",
        `  table ip t counter k: comment "k\\"l" holds a '"': nft -f cannot read this back`,
        `  table ip t set s element: comment "e\\"f" holds a '"': nft -f cannot read this back`,
        '',
      ].join('\n'),
    );
    t.not(exits(f('reread.rc'))[0], '0', readFileSync(f('reread.err'), 'utf8'));
  },
);

test.serial(
  "regression: xt connlabel matches where /etc/xtables/connlabel.conf is missing: nft 1.0.6's `Warning: cannot open ...` once per match on stderr (synplug said nothing), at the same place on a terminal; none with --json",
  (t) => {
    // the state this machine is in (libxt_connlabel warns only where it cannot open the file)
    t.false(existsSync('/etc/xtables/connlabel.conf'), 'this test needs /etc/xtables/connlabel.conf absent, as nft 1.0.6 then warns');
    const rows = [
      '-A INPUT -m connlabel --label 120 -j ACCEPT',
      '-A INPUT -m connlabel --label 121 --set -j ACCEPT',
      '-A OUTPUT -m connlabel --label 7 -j ACCEPT',
    ];
    const { f } = listIptables(
      'connlabel-warning',
      rows.map((r) => [r]),
    );
    t.deepEqual(warnings(f('nft.err')), [
      '# Warning: table ip filter is managed by iptables-nft, do not touch!',
      ...rows.map(() => 'Warning: cannot open /etc/xtables/connlabel.conf: No such file or directory'),
    ]);
    t.deepEqual(warnings(f('ours.err')), warnings(f('nft.err')));
    t.deepEqual([warnings(f('nft.jerr')), warnings(f('ours.jerr'))], [[], []]);
    t.deepEqual(exits(f('ours.rc')), ['0', '0']);
    t.is(readFileSync(f('ours.txt'), 'utf8'), readFileSync(f('nft.txt'), 'utf8'));
    // on a terminal (stdout and stderr one stream): each warning after its rule's indent, as nft's
    inNetns(
      [
        ...rows.map((r) => `/usr/sbin/iptables-nft ${r}`),
        `script -qc ${q(`${NFT} list ruleset`)} /dev/null > ${q(f('nft.tty'))}`,
        `script -qc ${q(`${cli} show ruleset`)} /dev/null > ${q(f('ours.tty'))}`,
      ].join('\n'),
    );
    const tty = readFileSync(f('nft.tty'), 'utf8');
    t.regex(tty, /\t\tWarning: cannot open \/etc\/xtables\/connlabel\.conf: No such file or directory\r\nct label 120 /);
    t.is(readFileSync(f('ours.tty'), 'utf8'), tty);
  },
);

test.serial(
  'a conntrack address under a shorter prefix (nft -f reads `ct original daddr 169.254.0.0/16` back as `ct original ip daddr 0.0.169.254`): raw with why, exit 11; nft itself reads it back as another rule',
  (t) => {
    for (const [tool, rows, addr] of [
      ['iptables-nft', ['-A INPUT -m conntrack --ctorigdst 169.254.0.0/16 -j DROP', '-A INPUT -m conntrack --ctreplsrc 127.0.0.0/8 -j DROP'], /[0-9.]+\/\d+/],
      ['ip6tables-nft', ['-A INPUT -m conntrack --ctrepldst fd00::/64 -j DROP', '-A INPUT -m conntrack --ctorigsrc fd00::/8 -j DROP'], /fd00::\/\d+/],
    ] as const) {
      const { f } = listIptables(
        `ct-prefix-${tool}`,
        rows.map((r) => [r]),
        tool,
      );
      const theirs = counted(f('nft.txt'));
      t.is(theirs.length, 2);
      // nft's own listing, read back by nft -f, dumps another rule: the address bytes swapped, as an integer
      t.regex(theirs[0], /ct (original|reply) [sd]addr \S+\/\d+ counter/);
      const ours = counted(f('ours.txt'));
      for (const l of ours) {
        t.regex(l, /\[ raw: match name conntrack rev 3 \(ct (original|reply) [sd]addr \S+: nft -f reads this prefix back as another address\) \]/);
        t.regex(l, addr);
      }
      t.deepEqual(exits(f('ours.rc')), ['11', '11']);
      const err = readFileSync(f('ours.err'), 'utf8');
      t.true(err.includes('2 part(s)'), err);
      t.is(err.split('nft -f reads this prefix back as another address)').length, 3, err);
    }
    // the claim itself: nft 1.0.6 reads its listing's words back as a match of other bytes
    const dir = join(tmp, 'ct-prefix-nft');
    spawnSync('mkdir', ['-p', dir]);
    writeFileSync(join(dir, 'in.nft'), 'table ip t {\n\tchain c {\n\t\tct original daddr 169.254.0.0/16 drop\n\t}\n}\n');
    inNetns(`${NFT} -f ${q(join(dir, 'in.nft'))}\n${NFT} list ruleset > ${q(join(dir, 'back.txt'))}`);
    t.regex(readFileSync(join(dir, 'back.txt'), 'utf8'), /ct original ip daddr 0\.0\.169\.254 drop/);
  },
);

test.serial(
  "xt rules nft lists in words nft -f refuses or reads as another rule (a conntrack port after `! --ctproto`, `--ctexpire`, a bare `-m tcp`, `-m esp`, `-m ah`, `-m dccp`): raw with why, exit 11; nft's own words, read back, show it",
  (t) => {
    const rows: ReadonlyArray<[string]> = [
      ['-A INPUT -m conntrack ! --ctproto tcp --ctorigdstport 89 -j ACCEPT'],
      ['-A INPUT -m conntrack --ctexpire 4294968 -j ACCEPT'],
      ['-A INPUT -m conntrack --ctexpire 10 -j ACCEPT'],
      ['-A INPUT -p tcp -m tcp -j ACCEPT'],
      ['-A INPUT -p udp -m udp -j ACCEPT'],
      ['-A INPUT -p esp -m esp -j ACCEPT'],
      ['-A INPUT -p ah -m ah -j ACCEPT'],
      ['-A INPUT -p dccp -m dccp -j ACCEPT'],
    ];
    const { dir, f } = listIptables('xt-reread', rows);
    const theirs = counted(f('nft.txt'));
    t.deepEqual(
      theirs.map((l) => l.replace(/ counter packets.*/, '')),
      [
        '\t\tct original protocol != 6 ct original proto-dst 89',
        '\t\tct expiration 4294968',
        '\t\tct expiration 10',
        '\t\tmeta l4proto tcp ',
        '\t\tmeta l4proto udp ',
        '\t\tmeta l4proto esp ',
        '\t\tmeta l4proto ah ',
        '\t\tmeta l4proto dccp ',
      ],
    );
    t.deepEqual(
      counted(f('ours.txt')).map((l) =>
        /^\t\t(?:meta l4proto (?:tcp|udp|esp|ah|dccp) )?\[ raw: match name (\w+) rev \d+ \((.+)\) \] counter/.exec(l)?.slice(1),
      ),
      [
        ['conntrack', 'a port without --ctproto (or after ! --ctproto) or -p: nft -f cannot read it back'],
        ['conntrack', 'nft lists "ct expiration 4294968", which nft -f refuses: value too large'],
        ['conntrack', 'nft lists "ct expiration 10", read back as 10000 ms: --ctexpire matches 10 to 10.999 s'],
        ['tcp', 'nft 1.0.6 lists it as nothing, which reads back as no match: -m tcp drops non-first fragments'],
        ['udp', 'nft 1.0.6 lists it as nothing, which reads back as no match: -m udp drops non-first fragments'],
        ['esp', 'nft 1.0.6 lists it as nothing, which reads back as no match: -m esp drops non-first fragments'],
        ['ah', 'nft 1.0.6 lists it as nothing, which reads back as no match: -m ah drops non-first fragments'],
        ['dccp', 'nft 1.0.6 lists it as nothing, which reads back as no match: -m dccp drops non-first fragments'],
      ],
    );
    t.deepEqual(exits(f('ours.rc')), ['11', '11']);
    t.regex(readFileSync(f('ours.err'), 'utf8'), /8 part\(s\) of the ruleset cannot be printed/);
    // the claims: nft -f refuses the first two rules' words, reads the third as 10000 ms, the last two as no match
    for (const [i, l] of theirs.entries()) writeFileSync(join(dir, `r${i}.nft`), `table ip t {\n\tchain c {\n${l}\n\t}\n}\n`);
    inNetns(
      [
        'set +e',
        ...theirs.map((_, i) => `${NFT} -f ${q(join(dir, `r${i}.nft`))} 2> /dev/null; echo $? >> ${q(join(dir, 'rc'))}`),
        `${NFT} --debug=netlink list table ip t > ${q(join(dir, 'back.dbg'))} 2>&1`,
      ].join('\n'),
    );
    t.deepEqual(exits(join(dir, 'rc')), ['1', '1', '0', '0', '0', '0', '0', '0']);
    const dbg = readFileSync(join(dir, 'back.dbg'), 'utf8');
    t.regex(dbg, /\[ ct load expiration => reg 1 \]\n {2}\[ cmp eq reg 1 0x00002710 \]/);
    t.regex(dbg, /\[ meta load l4proto => reg 1 \]\n {2}\[ cmp eq reg 1 0x00000006 \]\n {2}\[ counter /);
    t.regex(dbg, /\[ meta load l4proto => reg 1 \]\n {2}\[ cmp eq reg 1 0x00000011 \]\n {2}\[ counter /);
    for (const p of ['32', '33', '21'])
      t.regex(dbg, new RegExp(`\\[ meta load l4proto => reg 1 \\]\\n {2}\\[ cmp eq reg 1 0x000000${p} \\]\\n {2}\\[ counter `));
    t.notRegex(dbg, / match name /);
  },
);

test.serial(
  "a conntrack port after the rule's -p (`meta l4proto tcp ct original proto-dst 80`): printed as nft lists it, exit 0, and nft -f of the listing rebuilds the same rules",
  (t) => {
    const rows: ReadonlyArray<[string]> = [
      ['-A INPUT -p tcp -m conntrack --ctorigdstport 80 -j ACCEPT'],
      ['-A INPUT -p udp -m conntrack --ctorigsrcport 5:7 ! --ctrepldstport 9 -j ACCEPT'],
      ['-A INPUT -p sctp -m conntrack --ctstate NEW --ctreplsrcport 7 -j DROP'],
      // a protocol nft 1.0.6 names no header of: the port is still the tuple's 16 bits xt_conntrack compares (gre's key)
      ['-A INPUT -p gre -m conntrack --ctorigdstport 5 -j ACCEPT'],
      ['-A INPUT -p gre -m conntrack --ctorigsrcport 5 --ctrepldstport 6:7 ! --ctreplsrcport 8 --ctstate NEW -j ACCEPT'],
      ['-A INPUT -p 200 -m conntrack --ctorigdstport 5 -j ACCEPT'],
    ];
    const { dir, f } = listIptables('ct-port-proto', rows);
    const theirs = counted(f('nft.txt'));
    t.is(theirs.length, rows.length);
    t.regex(theirs[0], /^\t\tmeta l4proto tcp ct original proto-dst 80 counter/);
    t.deepEqual(counted(f('ours.txt')), theirs);
    t.deepEqual(exits(f('ours.rc')), ['0', '0']);
    t.regex(theirs[3], /^\t\tmeta l4proto gre ct original proto-dst 5 counter/);
    inNetns(
      `${NFT} -f ${q(f('ours.txt'))}\n${NFT} list ruleset > ${q(join(dir, 'back.txt'))}\n${NFT} --debug=netlink list ruleset > ${q(join(dir, 'back.dbg'))}`,
    );
    t.deepEqual(counted(join(dir, 'back.txt')), theirs);
    // natively: the port as the tuple's 16 bits in network order, after gre's protocol number
    t.regex(
      readFileSync(join(dir, 'back.dbg'), 'utf8'),
      /\[ cmp eq reg 1 0x0000002f \]\n {2}\[ ct load proto_dst => reg 1 , dir original \]\n {2}\[ cmp eq reg 1 0x00000500 \]/,
    );
  },
);

test.serial(
  "ip6tables' TOS: where it leaves the ECN bits alone, printed as nft lists libxt_TOS's words (`ip6 dscp set ip6 dscp or 0x04`), which nft -f cannot read, named on stderr; elsewhere raw, saying why; exit 11",
  (t) => {
    const rows: ReadonlyArray<[string, 'raw'?]> = [
      ['-t mangle -A PREROUTING -j TOS --or-tos 0x10'],
      ['-t mangle -A PREROUTING -j TOS --xor-tos 0x10'],
      ['-t mangle -A PREROUTING -j TOS --set-tos 0x10/0xfc'],
      ['-t mangle -A PREROUTING -j TOS --set-tos 0x00/0xf0'],
      ['-t mangle -A PREROUTING -j TOS --set-tos 0x10', 'raw'],
      ['-t mangle -A PREROUTING -j TOS --and-tos 0x10', 'raw'],
    ];
    const { dir, f } = listIptables('tos6', rows, 'ip6tables-nft');
    const theirs = counted(f('nft.txt'));
    const ours = counted(f('ours.txt'));
    t.is(theirs.length, rows.length);
    rows.forEach(([rule, raw], i) => {
      if (raw)
        t.regex(
          ours[i],
          /\[ raw: target name TOS rev 1 \(nft 1\.0\.6 lists it as "ip6 dscp set \.\.\." in every family, which sets other bits than TOS\) \]$/,
          rule,
        );
      else t.is(ours[i], theirs[i], rule);
    });
    t.regex(theirs[0], / ip6 dscp set ip6 dscp or 0x04$/);
    t.deepEqual(exits(f('ours.rc')), ['11', '11']);
    const err = readFileSync(f('ours.err'), 'utf8');
    t.true(err.includes('6 part(s)'), err);
    // JSON: nft -j's `{"xt": ...}` where the text is nft's, raw where it is; only the raw ones named
    const json = (p: string): Array<{ rule?: { expr: unknown[] } }> =>
      JSON.parse(readFileSync(f(p), 'utf8')).nftables.filter((x: { rule?: unknown }) => x.rule);
    t.deepEqual(json('ours.json').slice(0, 4), json('nft.json').slice(0, 4));
    t.true(readFileSync(f('ours.jerr'), 'utf8').includes('2 part(s)'));
    t.is(err.split(': nft -f cannot read this back').length, 5, err);
    // the claim: nft -f refuses each of nft's words
    for (const [i, line] of theirs.slice(0, 4).entries()) {
      writeFileSync(join(dir, `tos${i}.nft`), `table ip6 t {\n\tchain c {\n${line.replace(/counter packets 0 bytes 0 /, '')}\n\t}\n}\n`);
      inNetns(`! ${NFT} -f ${q(join(dir, `tos${i}.nft`))} 2> /dev/null`);
    }
  },
);

const TIME_ROWS: ReadonlyArray<[string]> = [
  ['-A INPUT -m time --timestart 08:00 --timestop 17:00 -j ACCEPT'],
  ['-A INPUT -m time --weekdays Mon,Tue -j ACCEPT'],
  ['-A INPUT -m time --datestart 2024-01-01T00:00:00 --datestop 2025-01-01 -j ACCEPT'],
];

test.serial(
  "xt time (counted in UTC) prints as nft lists it where the listing's process keeps UTC; under TZ=Europe/Berlin (nft -f would read the times there) raw, the time zone named on stderr, exit 11",
  (t) => {
    const utc = listIptables('time-utc', TIME_ROWS, 'iptables-nft', 'UTC');
    t.deepEqual(counted(utc.f('ours.txt')), counted(utc.f('nft.txt')));
    t.deepEqual(exits(utc.f('ours.rc')), ['0', '0']);
    const berlin = listIptables('time-berlin', TIME_ROWS, 'iptables-nft', 'Europe/Berlin');
    t.is(counted(berlin.f('nft.txt')).length, TIME_ROWS.length);
    const ours = counted(berlin.f('ours.txt'));
    t.is(ours.length, TIME_ROWS.length);
    for (const l of ours)
      t.regex(l, /\[ raw: match name time rev 0 \(match time counts UTC; nft -f would read its times in this process's time zone, UTC\+0[12]:00\) \]/);
    t.deepEqual(exits(berlin.f('ours.rc')), ['11', '11']);
    const err = readFileSync(berlin.f('ours.err'), 'utf8');
    t.true(err.includes(`${TIME_ROWS.length} part(s)`), err);
    t.regex(err, /time zone, UTC\+0[12]:00\)$/m);
  },
);

test.serial(
  "ebtables' log at every level: info (nft lists no level; nft -f reads warn) raw; error and warning as nft lists them (nft -f refuses those names), named on stderr; exit 11",
  (t) => {
    const LEVELS = ['emerg', 'alert', 'crit', 'error', 'warning', 'notice', 'info', 'debug'];
    const { f } = listIptables(
      'ebt-log-levels',
      LEVELS.map((l) => [`-A INPUT --log-prefix x --log-level ${l} -j ACCEPT`]),
      'ebtables-nft',
    );
    const theirs = counted(f('nft.txt'));
    const ours = counted(f('ours.txt'));
    t.is(theirs.length, LEVELS.length);
    LEVELS.forEach((level, i) => {
      if (level === 'info') t.regex(ours[i], /\[ raw: target name log rev 0 \(log level info: nft lists no level, which nft -f reads as level warn\) \]/);
      else t.is(ours[i], theirs[i], level);
    });
    t.deepEqual(exits(f('ours.rc')), ['11', '11']);
    const err = readFileSync(f('ours.err'), 'utf8');
    t.regex(err, /: log prefix "x" level error flags ether: log level error: nft -f cannot read this back \(its level is err\)$/m);
    t.regex(err, /: log prefix "x" level warning flags ether: log level warning: nft -f cannot read this back \(its level is warn\)$/m);
    t.true(err.includes('3 part(s)'), err);
    // the claims: nft -f refuses `level error`, and reads no level as warn
    const dir = join(tmp, 'ebt-log-nft');
    spawnSync('mkdir', ['-p', dir]);
    writeFileSync(join(dir, 'a.nft'), 'table bridge t {\n\tchain c {\n\t\tlog prefix "x" level error flags ether\n\t}\n}\n');
    writeFileSync(join(dir, 'b.nft'), 'table bridge t {\n\tchain c {\n\t\tlog prefix "x" flags ether\n\t}\n}\n');
    inNetns(
      [
        `! ${NFT} -f ${q(join(dir, 'a.nft'))} 2> /dev/null`,
        `${NFT} -f ${q(join(dir, 'b.nft'))}`,
        `${NFT} --debug=netlink list ruleset > ${q(join(dir, 'b.txt'))} 2>&1`,
      ].join('\n'),
    );
    t.regex(readFileSync(join(dir, 'b.txt'), 'utf8'), /\[ log prefix x level 4 macdecode \]/);
  },
);

test.serial(
  'chain names (fwd, log, a;b, x"y) and a log prefix (a"b) nft -f cannot read back: printed as nft lists them, each named on stderr, exit 11 (JSON, whose strings read back, 0); native chains too',
  (t) => {
    const rows: ReadonlyArray<[string]> = [['-N fwd'], ['-N log'], ["-N 'a;b'"], [`-N 'x"y'`], ['-N ok'], [`-A INPUT -j LOG --log-prefix 'a"b'`]];
    const { f } = listIptables('names', rows);
    const lines = (p: string): string[] =>
      readFileSync(f(p), 'utf8')
        .split('\n')
        .filter((l) => /^\tchain |log prefix/.test(l));
    t.deepEqual(lines('ours.txt'), lines('nft.txt'));
    t.true(lines('ours.txt').includes('\tchain a;b {'));
    t.deepEqual(exits(f('ours.rc')), ['11', '0']);
    const err = readFileSync(f('ours.err'), 'utf8');
    t.true(err.includes('5 part(s)'), err);
    for (const c of ['fwd', 'log', 'a;b', 'x"y']) t.true(err.includes(`table ip filter chain ${c}: nft -f cannot read this name back (`), c);
    t.false(err.includes('chain ok:'));
    t.regex(err, /: log prefix "a"b": log prefix "a\\"b" holds a '"': nft -f cannot read this back$/m);
    // native: a chain named `fwd` (nft's JSON input can name it; its text cannot, quoted or not)
    const dir = join(tmp, 'names-native');
    spawnSync('mkdir', ['-p', dir]);
    const g = (n: string): string => join(dir, n);
    writeFileSync(g('in.json'), JSON.stringify({ nftables: [{ table: { family: 'ip', name: 't' } }, { chain: { family: 'ip', table: 't', name: 'fwd' } }] }));
    writeFileSync(g('quoted.nft'), 'table ip t2 {\n\tchain "fwd" {\n\t}\n}\n');
    inNetns(
      [
        `${NFT} -j -f ${q(g('in.json'))}`,
        `! ${NFT} -f ${q(g('quoted.nft'))} 2> /dev/null`,
        'set +e',
        `${cli} show ruleset > ${q(g('ours.txt'))} 2> ${q(g('ours.err'))}; echo $? > ${q(g('ours.rc'))}`,
        `${NFT} -f ${q(g('ours.txt'))} 2> /dev/null; echo $? >> ${q(g('ours.rc'))}`,
      ].join('\n'),
    );
    t.is(readFileSync(g('ours.txt'), 'utf8'), 'table ip t {\n\tchain fwd {\n\t}\n}\n');
    t.deepEqual(exits(g('ours.rc')), ['11', '1'], 'exit 11; and nft -f indeed refuses the listing');
    t.regex(readFileSync(g('ours.err'), 'utf8'), /table ip t chain fwd: nft -f cannot read this name back \("fwd" is a keyword of nft's; nor quoted\)/);
  },
);

test.serial(
  "ebtables' --among-dst of entries with and without an address (`02:00:00:00:00:02 . 0.0.0.0/0`): the listing rebuilds the same bytes (ebtables-nft itself writes the rule's `meta protocol ip`), so it prints, exit 0",
  (t) => {
    const dir = join(tmp, 'among-mix');
    spawnSync('mkdir', ['-p', dir]);
    const g = (n: string): string => join(dir, n);
    inNetns(
      [
        '/usr/sbin/ebtables-nft -A INPUT --among-dst 02:00:00:00:00:01=169.254.0.1,02:00:00:00:00:02 -j ACCEPT',
        `${NFT} list ruleset > ${q(g('nft.txt'))}`,
        `${NFT} --debug=netlink list ruleset > ${q(g('before.txt'))} 2>&1`,
        `${cli} show ruleset > ${q(g('ours.txt'))}`,
        `${NFT} flush ruleset`,
        `${NFT} -f ${q(g('ours.txt'))}`,
        `${NFT} --debug=netlink list ruleset > ${q(g('after.txt'))} 2>&1`,
      ].join('\n'),
    );
    const ours = counted(g('ours.txt'));
    t.deepEqual(ours, counted(g('nft.txt')));
    t.regex(ours[0], /ether daddr \. ip daddr \{ 02:00:00:00:00:01 \. 169\.254\.0\.1, 02:00:00:00:00:02 \. 0\.0\.0\.0\/0 \}/);
    const dump = (p: string): string => readFileSync(p, 'utf8').replace(/# Warning:.*\n/g, '');
    t.regex(dump(g('before.txt')), /\[ meta load protocol => reg 1 \]\n {2}\[ cmp eq reg 1 0x00000008 \]/);
    t.is(dump(g('after.txt')), dump(g('before.txt')));
  },
);

test.serial(
  "NFT_KEYWORDS is nft 1.0.6's: of its parser's token names (libnftables' yytname), exactly those nft -f refuses as a chain's name and a jump's target",
  (t) => {
    const lib = spawnSync('sh', ['-c', `ldd ${NFT} | grep -o '/[^ ]*libnftables[^ ]*'`], { encoding: 'utf8' }).stdout.trim();
    const words = [
      ...new Set(
        spawnSync('strings', ['-n', '2', lib], { encoding: 'utf8' })
          .stdout.split('\n')
          .filter((l) => /^"[a-z0-9_.][a-z0-9/_.-]*"$/.test(l))
          .map((l) => l.slice(1, -1)),
      ),
    ];
    t.true(words.length > 300, String(words.length));
    const dir = join(tmp, 'keywords');
    spawnSync('mkdir', ['-p', dir]);
    /** Of `names`, those nft -f refuses as a chain's name and a jump's target, sorted. */
    const refused = (names: readonly string[]): string[] => {
      writeFileSync(join(dir, 'words.txt'), `${names.join('\n')}\n`);
      inNetns(
        [
          'set +e',
          `while read -r w; do printf 'table ip t {\\n\\tchain %s {\\n\\t}\\n\\n\\tchain c {\\n\\t\\tjump %s\\n\\t}\\n}\\n' "$w" "$w" > ${q(join(dir, 'in.nft'))}`,
          `  ${NFT} -c -f ${q(join(dir, 'in.nft'))} > /dev/null 2>&1 || echo "$w"`,
          `done < ${q(join(dir, 'words.txt'))} > ${q(join(dir, 'bad.txt'))}`,
        ].join('\n'),
      );
      return readFileSync(join(dir, 'bad.txt'), 'utf8').split('\n').filter(Boolean).sort();
    };
    const bad = refused(words);
    t.deepEqual(bad, [...NFT_KEYWORDS].sort());
    for (const w of words) t.is(nftReadsName(w), !bad.includes(w), w);
    // the scanner's operator words (no token names): refused too, and never read as names
    t.deepEqual(refused([...NFT_OPERATOR_WORDS]), [...NFT_OPERATOR_WORDS].sort());
    for (const w of NFT_OPERATOR_WORDS) t.false(nftReadsName(w), w);
  },
);

/**
 * Where nft 1.0.6's own listing does not read back to the same ruleset, synplug's must:
 * each input here, listed by synplug and fed to `nft -f` in a fresh namespace, gives the
 * same kernel dump (`nft --debug=netlink list ruleset`, libnftnl's bytes) as the input did.
 * `"ab\*"` in a set: a whole name ending in `*`; nft lists it `"ab*"`, a wildcard.
 */
const LOSSY_IN_NFT: ReadonlyArray<{ name: string; text: string; differs: RegExp; whyRe: RegExp }> = [
  {
    name: 'star',
    text: `table inet synplug_star {
	set s {
		type ifname
		flags interval
		elements = { "ab\\*", "c*", "x*y" }
	}
	chain c {
		iifname { "ab\\*", "d*", "q" } accept
		meta iifname . ip saddr { "ab\\*" . 127.0.0.1 } accept
	}
}
`,
    differs: /"ab\\\*"/,
    // the named set, and both rules' anonymous sets
    whyRe:
      /set s: a set element: a device name ending in \* printed escaped[\s\S]*chain c handle \d+: iifname \{[^\n]*lists unescaped[\s\S]*chain c handle \d+: (meta )?iifname \. ip saddr/,
  },
];

for (const { name, text, differs, whyRe } of LOSSY_IN_NFT) {
  test.serial(`${name}: where nft's listing is lossy, synplug's reads back to the same kernel dump; it differs from nft's, so exit 11 naming why`, (t) => {
    const dir = join(tmp, `lossy-${name}`);
    spawnSync('mkdir', ['-p', dir]);
    const f = (n: string): string => join(dir, n);
    writeFileSync(f('in.nft'), text);
    inNetns(
      [
        `${NFT} -f ${q(f('in.nft'))}`,
        `${NFT} --debug=netlink list ruleset > ${q(f('in.dbg'))} 2>&1`,
        `${NFT} list ruleset > ${q(f('nft.txt'))}`,
        `echo 0 > ${q(f('ours.rc'))}`,
        `${cli} show ruleset > ${q(f('ours.txt'))} 2> ${q(f('ours.err'))} || echo $? > ${q(f('ours.rc'))}`,
      ].join('\n'),
    );
    const ours = readFileSync(f('ours.txt'), 'utf8');
    t.regex(ours, differs);
    t.is(readFileSync(f('ours.rc'), 'utf8').trim(), '11', 'never exit 0 with a listing that differs from nft');
    t.regex(readFileSync(f('ours.err'), 'utf8'), whyRe);
    t.notRegex(readFileSync(f('nft.txt'), 'utf8'), differs, "nft 1.0.6's listing differs here");
    inNetns([`${NFT} -f ${q(f('ours.txt'))}`, `${NFT} --debug=netlink list ruleset > ${q(f('back.dbg'))} 2>&1`].join('\n'));
    t.is(readFileSync(f('back.dbg'), 'utf8'), readFileSync(f('in.dbg'), 'utf8'));
  });
}

test.serial(
  '64-bit counts past 2^53 (named counters and quotas, counter and quota statements): raw, named on stderr, exit 11; exact ones print as nft does',
  (t) => {
    const f = loadAndShow(
      'u64',
      `table inet synplug_u64 {
	counter c1 { packets 9007199254740993 bytes 18446744073709551615; }
	counter c2 { packets 5 bytes 9007199254740991; }
	quota q1 { 9007199254740993 bytes; }
	chain c {
		counter packets 9007199254740993 bytes 5 accept
		quota 9007199254740993 bytes accept
		counter packets 1 bytes 2 accept
	}
}
`,
    );
    t.deepEqual(readFileSync(f('ours.rc'), 'utf8').split('\n').filter(Boolean), ['11', '11']);
    const theirs = readFileSync(f('nft.txt'), 'utf8');
    const ours = readFileSync(f('ours.txt'), 'utf8');
    // the values past 2^53 are in no line outside a raw marker, rounded or otherwise
    t.regex(theirs, /packets 9007199254740993 bytes 18446744073709551615/);
    const printed = ours.split('\n').filter((l) => !l.includes('[ raw: '));
    t.deepEqual(
      printed.filter((l) => /900719925474099[23]|1844674407370955\d{4}/.test(l)),
      [],
    );
    t.regex(ours, /^\t\[ raw: object counter c1 \]$/m);
    t.regex(ours, /^\t\[ raw: object quota q1 \]$/m);
    for (const line of ['\t\tpackets 5 bytes 9007199254740991', '\t\tcounter packets 1 bytes 2 accept']) {
      t.true(theirs.split('\n').includes(line));
      t.true(ours.split('\n').includes(line), line);
    }
    for (const err of [readFileSync(f('ours.err'), 'utf8'), readFileSync(f('ours.jerr'), 'utf8')]) {
      t.regex(err, /table inet synplug_u64 counter c1: a 64-bit value past 2\^53/);
      t.regex(err, /table inet synplug_u64 quota q1: a 64-bit value past 2\^53/);
      t.regex(err, /chain c handle \d+: counter pkts \d+ bytes 5 \(past 2\^53: rounded\)/);
      t.regex(err, /chain c handle \d+: quota bytes \d+ consumed 0 flags 0 \(past 2\^53: rounded\)/);
    }
    const json = JSON.parse(readFileSync(f('ours.json'), 'utf8')).nftables as Array<Record<string, { name?: string; packets?: number }>>;
    t.deepEqual(
      json.filter((x) => x.counter).map((x) => [x.counter.name, x.counter.packets]),
      [['c2', 5]],
    );
    t.is(json.filter((x) => x.raw).length, 2, 'c1 and q1 raw');
  },
);

test.serial('an element counter past 2^53: raw in its set, the set named on stderr, exit 11; an exact one prints as nft does', (t) => {
  const f = loadAndShow(
    'u64elem',
    `table inet synplug_u64e {
	set s {
		type ipv4_addr
		counter
		elements = { 127.0.0.1 counter packets 9007199254740993 bytes 5, 127.0.0.2 counter packets 7 bytes 9007199254740991 }
	}
}
`,
  );
  t.deepEqual(readFileSync(f('ours.rc'), 'utf8').split('\n').filter(Boolean), ['11', '11']);
  const theirs = readFileSync(f('nft.txt'), 'utf8');
  const ours = readFileSync(f('ours.txt'), 'utf8');
  t.regex(theirs, /127\.0\.0\.1 counter packets 9007199254740993 bytes 5/);
  t.regex(ours, /127\.0\.0\.1 \[ raw: counter past 2\^53 \]/);
  t.regex(theirs, /127\.0\.0\.2 counter packets 7 bytes 9007199254740991/);
  t.regex(ours, /127\.0\.0\.2 counter packets 7 bytes 9007199254740991/);
  t.regex(readFileSync(f('ours.err'), 'utf8'), /table inet synplug_u64e set s: an element nft cannot read back/);
  const json = readFileSync(f('ours.json'), 'utf8');
  t.false(json.includes('9007199254740992'), 'no rounded count in the JSON');
  t.true(json.includes('{"packets":7,"bytes":9007199254740991}'));
});

/**
 * Text nft 1.0.6 lists as it is that nft -f refuses: [command (iptables-nft, ebtables-nft...), nft's text of it,
 * the why on stderr]. Each prints as nft lists it, named on stderr, exit 11; nft -f of nft's own line fails.
 */
const UNREADABLE: ReadonlyArray<[cmd: string, text: string, why: RegExp]> = [
  [
    'ebtables-nft -A INPUT -p IPv4 --ip-src 169.254.0.0/255.255.0.255 -j ACCEPT',
    'ip saddr 169.254.0.0/255.255.0.255',
    /a mask that is no prefix \(255\.255\.0\.255\).*ip saddr & 255\.255\.0\.255 == 169\.254\.0\.0/,
  ],
  ['ebtables-nft -A INPUT -p IPv6 --ip6-dst fd00::/ffff:0:ffff:: -j ACCEPT', 'ip6 daddr fd00::/ffff:0:ffff::', /a mask that is no prefix/],
  ['iptables-nft -A INPUT -m iprange --src-range 169.254.0.5-169.254.0.1', 'ip saddr 169.254.0.5-169.254.0.1', /Range has zero or negative size/],
  [
    'iptables-nft -A INPUT -m iprange --dst-range 169.254.0.1-169.254.0.5 --src-range 169.254.0.9-169.254.0.8',
    'ip saddr 169.254.0.9-169.254.0.8',
    /Range has zero or negative size/,
  ],
  ['ip6tables-nft -A INPUT -m iprange --src-range fd00::5-fd00::1', 'ip6 saddr fd00::5-fd00::1', /Range has zero or negative size/],
  ['iptables-nft -A INPUT -m length --length 50:20', 'meta length 50-20', /Range has zero or negative size/],
  ['iptables-nft -A INPUT -p udp -m udp --dport 50:20', 'udp dport 50-20', /Range has zero or negative size/],
  ['ip6tables-nft -A INPUT -m frag --fragid 50:20', 'frag id 50-20', /Range has zero or negative size/],
];

test.serial(
  'regression: a mask that is no prefix (ebtables --ip-src A/255.255.0.255) and a reversed range (-m iprange 169.254.0.5-169.254.0.1, ports, lengths, fragment ids), which nft lists as nft -f cannot read: as nft lists them, named on stderr, exit 11 (exit 0 before)',
  (t) => {
    const dir = join(tmp, 'unreadable');
    spawnSync('mkdir', ['-p', dir]);
    const f = (n: string): string => join(dir, n);
    inNetns(
      [
        ...UNREADABLE.map(([cmd]) => cmd),
        `${NFT} list ruleset > ${q(f('nft.txt'))}`,
        'set +e',
        `${cli} show ruleset > ${q(f('ours.txt'))} 2> ${q(f('ours.err'))}; echo $? > ${q(f('ours.rc'))}`,
      ].join('\n'),
    );
    const theirs = readFileSync(f('nft.txt'), 'utf8');
    t.is(readFileSync(f('ours.txt'), 'utf8'), theirs);
    t.is(readFileSync(f('ours.rc'), 'utf8').trim(), '11');
    const err = readFileSync(f('ours.err'), 'utf8');
    t.true(err.includes(`${UNREADABLE.length} part(s)`), err);
    for (const [cmd, text, why] of UNREADABLE) {
      const line = theirs.split('\n').find((l) => l.includes(text));
      t.truthy(line, cmd);
      const errLine = err.split('\n').find((l) => l.includes(`: ${text}`) || l.includes(` ${text} `));
      t.regex(errLine ?? '', why, cmd);
      // nft -f of nft's own line: refused
      const family = cmd.startsWith('ebtables') ? 'bridge' : cmd.startsWith('ip6') ? 'ip6' : 'ip';
      writeFileSync(f('one.nft'), `table ${family} t {\n\tchain c {\n${line}\n\t}\n}\n`);
      const r = spawnSync('unshare', ['--net', NFT, '-f', f('one.nft')], { encoding: 'utf8' });
      t.not(r.status, 0, `${cmd}: ${line}`);
    }
  },
);

test.serial(
  'regression: a ct timeout whose policy is every default, which nft lists as `policy = {  }` and nft -f refuses: as nft lists it, named on stderr, exit 11 (exit 0 before)',
  (t) => {
    const f = loadAndShow(
      'ctdefault',
      'table ip synplug_ctt {\n\tct timeout x {\n\t\tprotocol tcp\n\t\tl3proto ip\n\t\tpolicy = { established : 432000 }\n\t}\n}\n',
    );
    const theirs = readFileSync(f('nft.txt'), 'utf8');
    t.regex(theirs, /^\t\tpolicy = \{ {2}\}$/m);
    t.is(readFileSync(f('ours.txt'), 'utf8'), theirs);
    t.is(readFileSync(f('ours.rc'), 'utf8').split('\n')[0], '11');
    t.regex(
      readFileSync(f('ours.err'), 'utf8'),
      /table ip synplug_ctt ct timeout x: policy = \{ {2}\} \(every timeout the default\): nft -f cannot read this back/,
    );
    // nft -f of nft's own listing: refused
    const r = spawnSync('unshare', ['--net', NFT, '-f', f('nft.txt')], { encoding: 'utf8' });
    t.not(r.status, 0);
  },
);

/** xt variants raw with why (raw with no reason before): [tool, rule, what nft 1.0.6 lists of it, the why]. */
const VARIANTS_RAW: ReadonlyArray<[tool: string, rule: string, theirs: RegExp, why: RegExp]> = [
  [
    'iptables-nft',
    '-A INPUT -p icmp -m icmp --icmp-type any -j ACCEPT',
    /ip protocol icmp counter/,
    /lists it as "ip protocol icmp".*-m icmp drops non-first fragments/,
  ],
  [
    'iptables-nft',
    '-A INPUT -m addrtype --src-type LOCAL --dst-type UNICAST -j ACCEPT',
    /fib saddr type local counter/,
    /the --src-type alone, leaving --dst-type out/,
  ],
  ['iptables-nft', '-A INPUT -m connlabel ! --label 127 -j ACCEPT', /ct label and 127 != 127 counter/, /no match without conntrack, where ! --label matches/],
  ['ip6tables-nft', '-A INPUT -m frag --fragres -j ACCEPT', /frag reserved 1 counter/, /--fragres matches reserved bits zero/],
  ['ebtables-nft', '-A INPUT -p IPv4 --ip-tos 0x10 -j ACCEPT', /ip dscp 0x10 counter/, /--ip-tos compares the whole byte/],
  [
    'iptables-nft',
    '-A INPUT -j CONNMARK --set-mark 0x5/0xff',
    /ct mark set ct mark xor 0x5 and 0xffffff00/,
    /applies the xor first: \(ct mark \^ V\) & KEEP, where the target computes \(ct mark & KEEP\) \^ V/,
  ],
];

test.serial(
  'regression: xt variants nft lists as another rule (--icmp-type any, addrtype with both types, ! --label, --fragres, ebtables --ip-tos, CONNMARK --set-mark V/MASK): raw saying why, exit 11',
  (t) => {
    const dir = join(tmp, 'variants');
    spawnSync('mkdir', ['-p', dir]);
    const f = (n: string): string => join(dir, n);
    inNetns(
      [
        ...VARIANTS_RAW.map(([tool, rule]) => `${tool} ${rule}`),
        `${NFT} list ruleset > ${q(f('nft.txt'))} 2> /dev/null`,
        'set +e',
        `${cli} show ruleset > ${q(f('ours.txt'))} 2> ${q(f('ours.err'))}; echo $? > ${q(f('ours.rc'))}`,
      ].join('\n'),
    );
    const theirs = readFileSync(f('nft.txt'), 'utf8');
    const ours = readFileSync(f('ours.txt'), 'utf8');
    t.is(readFileSync(f('ours.rc'), 'utf8').trim(), '11');
    for (const [, rule, nft, why] of VARIANTS_RAW) {
      t.regex(theirs, nft, rule);
      const raw = [...ours.matchAll(/\[ raw: (?:match|target) name \w+ rev \d+ \((.*)\) \]/g)].map((m) => m[1]);
      t.true(
        raw.some((r) => why.test(r)),
        `${rule}: ${raw.join(' | ')}`,
      );
    }
    t.true(readFileSync(f('ours.err'), 'utf8').includes(`${VARIANTS_RAW.length} part(s)`));
  },
);
