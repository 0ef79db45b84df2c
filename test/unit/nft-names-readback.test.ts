/**
 * Names and quoted strings nft 1.0.6 lists as they are but `nft -f` cannot read back
 * (a keyword as a chain's name, `a;b`, a `"` in a log prefix or comment): printed as nft
 * lists them, each named in the listing's problems (the CLI then exits 11). The keyword
 * list itself is checked against /usr/sbin/nft in test/live/nft-ruleset-roundtrip.test.ts.
 */
import test from 'ava';
import { formatRulesetJson, formatRulesetText, type NftRuleset } from '../../src/iptables/format.js';
import { nftReadsName } from '../../src/iptables/names.js';

const ruleset = (chains: string[], rule?: { chain: string; comment?: string; prefix?: string }): NftRuleset => ({
  tables: [{ family: 'ip', name: 't' }],
  chains: chains.map((name) => ({ family: 'ip', table: 't', name })),
  sets: [],
  rules: rule
    ? [{ family: 'ip', table: 't', chain: rule.chain, comment: rule.comment, expr: rule.prefix === undefined ? [] : [{ name: 'log', prefix: rule.prefix }] }]
    : [],
});

test('nftReadsName: unquoted strings of nft 1.0.6 that are no keyword of its', (t) => {
  for (const ok of ['INPUT', 'fwd2', 'Fwd', 'a-b', 'a/b', '.x', '_x', 'a.b', '8021q']) t.true(nftReadsName(ok), ok);
  for (const bad of ['fwd', 'log', 'type', 'chain', 'a;b', 'x"y', '1abc', 'a b', 'é', '-a', '.', '']) t.false(nftReadsName(bad), bad);
});

test('a chain named as nft cannot read back (fwd, log, a;b, x"y): printed as nft lists it, each named as a problem; JSON has none', (t) => {
  const problems: string[] = [];
  const rs = ruleset(['fwd', 'log', 'a;b', 'x"y', 'ok']);
  t.is(
    formatRulesetText(rs, { problems }),
    'table ip t {\n\tchain fwd {\n\t}\n\n\tchain log {\n\t}\n\n\tchain a;b {\n\t}\n\n\tchain x"y {\n\t}\n\n\tchain ok {\n\t}\n}\n',
  );
  t.deepEqual(problems, [
    `table ip t chain fwd: nft -f cannot read this name back ("fwd" is a keyword of nft's; nor quoted)`,
    `table ip t chain log: nft -f cannot read this name back ("log" is a keyword of nft's; nor quoted)`,
    'table ip t chain a;b: nft -f cannot read this name back (nft reads a name that starts with a letter, _ or . and holds letters, digits and / - _ . only; nor quoted)',
    'table ip t chain x"y: nft -f cannot read this name back (nft reads a name that starts with a letter, _ or . and holds letters, digits and / - _ . only; nor quoted)',
  ]);
  const jproblems: string[] = [];
  formatRulesetJson(rs, { problems: jproblems });
  t.deepEqual(jproblems, []);
});

test('a log prefix or a comment holding `"`: printed as nft lists it (`log prefix "a"b"`), named as a problem in text, not in JSON (a JSON string escapes it)', (t) => {
  const problems: string[] = [];
  const rs = ruleset(['c'], { chain: 'c', prefix: 'a"b', comment: 'x"y' });
  t.is(formatRulesetText(rs, { problems }), 'table ip t {\n\tchain c {\n\t\tlog prefix "a"b" comment "x"y"\n\t}\n}\n');
  t.is(problems.length, 2);
  t.regex(problems[0], /^table ip t chain c: log prefix "a"b": log prefix "a\\"b" holds a '"': nft -f cannot read this back$/);
  t.regex(problems[1], /^table ip t chain c: comment "x"y": comment "x\\"y" holds a '"': nft -f cannot read this back$/);
  const jproblems: string[] = [];
  formatRulesetJson(rs, { problems: jproblems });
  t.deepEqual(jproblems, []);
  const ok: string[] = [];
  formatRulesetText(ruleset(['c'], { chain: 'c', prefix: 'ab', comment: 'xy' }), { problems: ok });
  t.deepEqual(ok, []);
});

test("regression: the scanner's operator words (and, or, xor, not, eq, ...) are no names nft reads back, and a `$` in a log prefix starts a variable (both listed with exit 0 before)", (t) => {
  for (const w of ['and', 'or', 'xor', 'not', 'eq', 'ne', 'lt', 'gt', 'le', 'ge', 'lshift', 'rshift']) t.false(nftReadsName(w), w);
  const problems: string[] = [];
  formatRulesetText(ruleset(['and']), { problems });
  t.deepEqual(problems, [`table ip t chain and: nft -f cannot read this name back ("and" is a keyword of nft's; nor quoted)`]);
  const dollar: string[] = [];
  formatRulesetText(ruleset(['c'], { chain: 'c', prefix: 'a$b', comment: 'xy' }), { problems: dollar });
  t.is(dollar.length, 1);
  t.regex(dollar[0], /log prefix "a\$b" holds a '\$': nft -f cannot read this back$/);
});

test('regression: a `$` in a rule\'s comment is no problem (nft -f reads `comment "cost $5"` back; exit 11 before), in a log prefix it is', (t) => {
  for (const comment of ['cost $5', '$y', 'a$', '$$', '$(x) $y']) {
    const problems: string[] = [];
    t.is(
      formatRulesetText(ruleset(['c'], { chain: 'c', prefix: 'ab', comment }), { problems }),
      `table ip t {\n\tchain c {\n\t\tlog prefix "ab" comment "${comment}"\n\t}\n}\n`,
    );
    t.deepEqual(problems, [], comment);
  }
  const problems: string[] = [];
  formatRulesetText(ruleset(['c'], { chain: 'c', prefix: 'cost $5', comment: 'cost $5' }), { problems });
  t.is(problems.length, 1);
  t.regex(problems[0], /log prefix "cost \$5" holds a '\$'/);
});

/** A user data TLV of one NUL-terminated string (libnftnl's nftnl_udata: type, length, value), hex. */
const udata = (type: number, s: string): string => {
  const v = Buffer.from(`${s}\0`);
  return Buffer.concat([Buffer.from([type, v.length]), v]).toString('hex');
};

test('regression: a comment holding `"` on a table, chain, set, set element or named object (unchecked before: exit 0 with text nft -f misreads): printed as nft lists it, each named as a problem in text, not in JSON', (t) => {
  const rs = (c: (q: string) => string): NftRuleset => ({
    tables: [{ family: 'ip', name: 't', comment: c('t') }],
    chains: [{ family: 'ip', table: 't', name: 'c', userdata: udata(0, c('c')) }],
    sets: [
      {
        family: 'ip',
        table: 't',
        name: 's',
        flags: [],
        type: 'ipv4_addr',
        keyType: 7,
        keyLen: 4,
        userdata: udata(7, c('s')),
        elements: [{ key: '7f000001', comment: c('e') }],
      },
    ],
    objects: [{ family: 'ip', table: 't', name: 'k', type: 'counter', typeId: 1, counter: { packets: 0, bytes: 0 }, userdata: udata(0, c('k')) }],
    rules: [],
  });
  const problems: string[] = [];
  t.is(
    formatRulesetText(
      rs((x) => `${x}"${x}`),
      { problems },
    ),
    [
      'table ip t {',
      '\tcomment "t"t"',
      '\tcounter k {',
      '\t\tcomment "k"k"',
      '\t\tpackets 0 bytes 0',
      '\t}',
      '',
      '\tset s {',
      '\t\ttype ipv4_addr',
      '\t\tcomment "s"s"',
      '\t\telements = { 127.0.0.1 comment "e"e" }',
      '\t}',
      '',
      '\tchain c {',
      '\t\tcomment "c"c"',
      '\t}',
      '}',
      '',
    ].join('\n'),
  );
  const why = (x: string): string => `comment "${x}\\"${x}" holds a '"': nft -f cannot read this back`;
  t.deepEqual(problems, [
    `table ip t: ${why('t')}`,
    `table ip t counter k: ${why('k')}`,
    `table ip t set s: ${why('s')}`,
    `table ip t set s element: ${why('e')}`,
    `table ip t chain c: ${why('c')}`,
  ]);
  const jproblems: string[] = [];
  formatRulesetJson(
    rs((x) => `${x}"${x}`),
    { problems: jproblems },
  );
  t.deepEqual(jproblems, []);
  // a `$` is no problem in a comment (nft -f reads `comment "cost $5"` back)
  const ok: string[] = [];
  formatRulesetText(
    rs((x) => `${x}$${x}`),
    { problems: ok },
  );
  t.deepEqual(ok, []);
});
