/**
 * Live: the SYN-marking rule and nftables batches on this machine's kernel,
 * with the `nft` binary (Debian package nftables) as the oracle, and
 * iptables-nft / iptables-legacy (package iptables) as other software whose
 * rules must survive. Runs in the shared test netns; every table here is
 * named synplug_t1* (never `synplug`, which the guard tests use), and the
 * rules mark SYNs from 169.254.77.1 / fd00:77::1, addresses nothing sends
 * from, so that they never mark other test files' traffic on `lo`.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { UsageError } from '../../src/netlink/errors.js';
import * as N from '../../src/iptables/index.js';
import * as M from '../../src/guard/modes/local-nft.js';

const NFT = '/usr/sbin/nft'; // not `nft` from PATH: npx puts node_modules/.bin (@vercel/nft) first
const IPT_NFT = '/usr/sbin/iptables-nft';
const IPT_LEGACY = '/usr/sbin/iptables-legacy';

function nft(...args: string[]): string {
  return execFileSync(NFT, args, { encoding: 'utf8' });
}
function nftFile(text: string): void {
  execFileSync(NFT, ['-f', '-'], { input: text, encoding: 'utf8' });
}
function nftj(...args: string[]): Array<Record<string, Record<string, unknown>>> {
  return JSON.parse(nft('-j', ...args)).nftables;
}
function quietly(file: string, ...args: string[]): void {
  try {
    execFileSync(file, args, { stdio: 'ignore' });
  } catch {
    /* already gone */
  }
}
const rulesOf = (j: ReturnType<typeof nftj>) => j.filter((o) => o.rule).map((o) => o.rule);
const tableExists = (family: string, name: string): boolean => {
  try {
    execFileSync(NFT, ['list', 'table', family, name], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
};

const conn = N.openNftables({ timeoutMs: 5000 });
test.after.always(() => {
  for (const [f, t] of [
    ['ip', 'synplug_t1'],
    ['ip', 'synplug_t1ref'],
    ['ip', 'synplug_t1v'],
    ['ip', 'synplug_t1vref'],
    ['ip6', 'synplug_t1v'],
    ['ip6', 'synplug_t1vref'],
    ['inet', 'synplug_t1v'],
    ['inet', 'synplug_t1vref'],
    ['ip', 'synplug_t1rm'],
    ['ip', 'synplug_t1_foreign'],
    ['ip', 'synplug_t1big'],
    ['ip', 'synplug_t1err'],
    ['ip', 'synplug_t1set'],
    ['ip', 'synplug_t1gen'],
    ['ip', 'synplug_t1bad'],
    ['ip', 'synplug_t1bad2'],
  ])
    quietly(NFT, 'delete', 'table', f, t);
  conn.close();
});

test.before('the oracles are installed (CI: apt-get install nftables iptables)', (t) => {
  t.true(existsSync(NFT), `${NFT} missing: apt-get install nftables`);
  t.true(existsSync(IPT_NFT), `${IPT_NFT} missing: apt-get install iptables`);
});

test.serial('ensure twice leaves exactly one rule, in a route chain at output, priority mangle', async (t) => {
  const first = await M.ensureMarkRule(conn, { address: '169.254.77.1', table: 'synplug_t1' });
  t.true(first.changed);
  const second = await M.ensureMarkRule(conn, { address: '169.254.77.1', table: 'synplug_t1' });
  t.false(second.changed);
  t.deepEqual(second.actions, []);
  const j = nftj('list', 'table', 'ip', 'synplug_t1');
  const chains = j.filter((o) => o.chain).map((o) => o.chain);
  t.is(chains.length, 1);
  t.like(chains[0], { name: 'output', type: 'route', hook: 'output', prio: -150, policy: 'accept' });
  t.is(rulesOf(j).length, 1);
});

// Each variant: our options, and the same rule in nft's own syntax (the reference).
const variants: Array<{ what: string; family: string; opts: M.MarkRuleOptions; set?: string; rule: string }> = [
  { what: 'IPv4', family: 'ip', opts: { address: '169.254.77.1' }, rule: 'ip saddr 169.254.77.1 tcp flags & (syn|ack) == syn meta mark set 0x1' },
  {
    what: 'IPv4, port 8080, mark 0x10, comment',
    family: 'ip',
    opts: { address: '169.254.77.1', port: 8080, mark: 0x10, comment: 'synplug' },
    rule: 'ip saddr 169.254.77.1 tcp dport 8080 tcp flags & (syn|ack) == syn meta mark set 0x10 comment "synplug"',
  },
  {
    what: 'IPv4 conditional on a timeout set',
    family: 'ip',
    opts: { address: '169.254.77.1', conditional: true, set: 'active' },
    set: 'set active { type ipv4_addr; flags timeout; }',
    rule: 'ip saddr @active tcp flags & (syn|ack) == syn meta mark set 0x1',
  },
  { what: 'IPv6', family: 'ip6', opts: { address: 'fd00:77::1' }, rule: 'ip6 saddr fd00:77::1 tcp flags & (syn|ack) == syn meta mark set 0x1' },
  {
    what: 'IPv6 conditional, port 443, mark 0xffffffff',
    family: 'ip6',
    opts: { address: 'fd00:77::1', conditional: true, set: 'active', port: 443, mark: 0xffffffff },
    set: 'set active { type ipv6_addr; flags timeout; }',
    rule: 'ip6 saddr @active tcp dport 443 tcp flags & (syn|ack) == syn meta mark set 0xffffffff',
  },
  {
    what: 'inet table, IPv4 conditional',
    family: 'inet',
    opts: { address: '169.254.77.1', family: 'inet', conditional: true, set: 'active' },
    set: 'set active { type ipv4_addr; flags timeout; }',
    rule: 'ip saddr @active tcp flags & (syn|ack) == syn meta mark set 0x1',
  },
];

for (const v of variants) {
  test.serial(`nft reads our rule back as the same rule nft makes from its own syntax: ${v.what}`, async (t) => {
    quietly(NFT, 'delete', 'table', v.family, 'synplug_t1v');
    quietly(NFT, 'delete', 'table', v.family, 'synplug_t1vref');
    await M.ensureMarkRule(conn, { ...v.opts, table: 'synplug_t1v' });
    nftFile(`table ${v.family} synplug_t1vref {\n${v.set ?? ''}\nchain output {\ntype route hook output priority mangle; policy accept;\n${v.rule}\n}\n}\n`);
    const ours = nftj('list', 'table', v.family, 'synplug_t1v');
    const ref = nftj('list', 'table', v.family, 'synplug_t1vref');
    const strip = (o: Record<string, unknown>) => {
      const { table: _t, handle: _h, ...rest } = o;
      return rest;
    };
    t.deepEqual(rulesOf(ours).map(strip), rulesOf(ref).map(strip));
    t.deepEqual(
      ours.filter((o) => o.chain).map((o) => strip(o.chain)),
      ref.filter((o) => o.chain).map((o) => strip(o.chain)),
    );
    t.deepEqual(
      ours.filter((o) => o.set).map((o) => strip(o.set)),
      ref.filter((o) => o.set).map((o) => strip(o.set)),
    );
    // And at the kernel level: the expressions the kernel holds for both rules are the same.
    const [a] = await N.listRules(conn, { family: v.family, table: 'synplug_t1v' });
    const [b] = await N.listRules(conn, { family: v.family, table: 'synplug_t1vref' });
    t.deepEqual(a.expr, b.expr);
    t.is(a.comment, b.comment);
    // Our own text and JSON of our table are nft's, word for word.
    const rs = await N.listRuleset(conn, { family: v.family });
    const only = {
      tables: rs.tables.filter((x) => x.name === 'synplug_t1v'),
      chains: rs.chains.filter((x) => x.table === 'synplug_t1v'),
      sets: rs.sets.filter((x) => x.table === 'synplug_t1v'),
      rules: rs.rules.filter((x) => x.table === 'synplug_t1v'),
    };
    t.is(N.formatRulesetText(only), nft('list', 'table', v.family, 'synplug_t1v'));
    t.deepEqual(N.formatRulesetJson(only).nftables.slice(1), JSON.parse(JSON.stringify(ours.filter((o) => !o.metainfo))));
    // ensure again: nothing to do
    t.false((await M.ensureMarkRule(conn, { ...v.opts, table: 'synplug_t1v' })).changed);
    quietly(NFT, 'delete', 'table', v.family, 'synplug_t1v');
    quietly(NFT, 'delete', 'table', v.family, 'synplug_t1vref');
  });
}

test.serial('ensure replaces what differs in one batch: another mark, a duplicate, a foreign rule in our chain', async (t) => {
  await M.ensureMarkRule(conn, { address: '169.254.77.1', table: 'synplug_t1', mark: 2 });
  nft('add', 'rule', 'ip', 'synplug_t1', 'output', 'counter');
  const res = await M.ensureMarkRule(conn, { address: '169.254.77.1', table: 'synplug_t1', mark: 3 });
  t.true(res.changed);
  const rules = rulesOf(nftj('list', 'table', 'ip', 'synplug_t1'));
  t.is(rules.length, 1);
  t.deepEqual((rules[0].expr as unknown[]).at(-1), { mangle: { key: { meta: { key: 'mark' } }, value: 3 } });
});

test.serial('remove deletes only our table: an iptables-nft rule, an iptables-legacy rule and a foreign nft table stay as they were', async (t) => {
  const iptNftRule = ['-t', 'mangle', 'OUTPUT', '-p', 'tcp', '-s', '169.254.99.1', '--syn', '-j', 'MARK', '--set-mark', '7'];
  const iptLegacyRule = ['-t', 'mangle', 'OUTPUT', '-p', 'tcp', '-s', '169.254.99.2', '--syn', '-j', 'MARK', '--set-mark', '8'];
  execFileSync(IPT_NFT, [...iptNftRule.slice(0, 2), '-A', ...iptNftRule.slice(2)]);
  let legacy = true;
  try {
    execFileSync(IPT_LEGACY, [...iptLegacyRule.slice(0, 2), '-A', ...iptLegacyRule.slice(2)], { stdio: 'pipe' });
  } catch {
    legacy = false;
  }
  t.teardown(() => {
    quietly(IPT_NFT, ...iptNftRule.slice(0, 2), '-D', ...iptNftRule.slice(2));
    if (legacy) quietly(IPT_LEGACY, ...iptLegacyRule.slice(0, 2), '-D', ...iptLegacyRule.slice(2));
  });
  nftFile(
    'table ip synplug_t1_foreign {\nset s { type ipv4_addr; flags timeout; }\nchain c { type filter hook output priority 0; ip daddr 169.254.99.3 counter; }\n}\n',
  );
  const mine = (s: string) =>
    s
      .split('\n')
      .filter((l) => /169\.254\.99\./.test(l))
      .join('\n');
  const before = {
    iptNft: mine(execFileSync(`${IPT_NFT}-save`, ['-t', 'mangle'], { encoding: 'utf8', stdio: 'pipe' })),
    legacy: legacy ? mine(execFileSync(`${IPT_LEGACY}-save`, ['-t', 'mangle'], { encoding: 'utf8', stdio: 'pipe' })) : '',
    mangle: JSON.stringify(rulesOf(nftj('list', 'table', 'ip', 'mangle')).filter((r) => JSON.stringify(r).includes('169.254.99.1'))),
    foreign: nft('list', 'table', 'ip', 'synplug_t1_foreign'),
  };
  t.regex(before.iptNft, /-A OUTPUT -s 169\.254\.99\.1\/32 -p tcp/);
  await M.ensureMarkRule(conn, { address: '169.254.77.1', table: 'synplug_t1rm', conditional: true });
  await M.addSetElement(conn, { address: '169.254.77.1', table: 'synplug_t1rm', timeoutMs: 60_000 });
  t.true(tableExists('ip', 'synplug_t1rm'));
  t.deepEqual(await M.removeMarkTable(conn, { table: 'synplug_t1rm' }), { removed: ['ip synplug_t1rm'] });
  t.false(tableExists('ip', 'synplug_t1rm'));
  t.deepEqual(await M.removeMarkTable(conn, { table: 'synplug_t1rm' }), { removed: [] });
  const after = {
    iptNft: mine(execFileSync(`${IPT_NFT}-save`, ['-t', 'mangle'], { encoding: 'utf8', stdio: 'pipe' })),
    legacy: legacy ? mine(execFileSync(`${IPT_LEGACY}-save`, ['-t', 'mangle'], { encoding: 'utf8', stdio: 'pipe' })) : '',
    mangle: JSON.stringify(rulesOf(nftj('list', 'table', 'ip', 'mangle')).filter((r) => JSON.stringify(r).includes('169.254.99.1'))),
    foreign: nft('list', 'table', 'ip', 'synplug_t1_foreign'),
  };
  t.deepEqual(after, before);
  if (legacy) t.regex(after.legacy, /-A OUTPUT -s 169\.254\.99\.2\/32 -p tcp/);
  t.log(legacy ? 'iptables-legacy rule checked' : 'iptables-legacy unavailable in this kernel: only iptables-nft checked');
  // The iptables-nft rule decodes (its xt "target" expression through the target codec), without error.
  const mangleRules = await N.listRules(conn, { family: 'ip', table: 'mangle' });
  const ours = mangleRules.find((r) => r.expr.some((e) => e.name === 'cmp' && (e as N.CmpExpr).data === 'a9fe6301'));
  t.truthy(ours);
  const target = ours!.expr.find((e) => e.name === 'target') as N.TargetExpr | undefined;
  t.truthy(target, JSON.stringify(ours!.expr));
  t.regex(target!.target, /^[A-Z]+$/);
});

test.serial('bad input is refused with a clear UsageError and the ruleset is unchanged', async (t) => {
  const cases: Array<[M.MarkRuleOptions, RegExp]> = [
    [{ address: '169.254.255.300', table: 'synplug_t1bad' }, /bad address '169\.254\.255\.300'/],
    [{ address: '169.254.77.1', mark: 0, table: 'synplug_t1bad' }, /bad mark '0'/],
    [{ address: '169.254.77.1', port: 70000, table: 'synplug_t1bad' }, /bad port '70000'/],
    [{ address: '169.254.77.1', table: 'synplug_t1bad'.padEnd(256, 'x') }, /bad table name .* at most 255/],
  ];
  const gen = await N.getGenId(conn);
  const before = nft('list', 'tables');
  for (const [o, re] of cases) {
    const err = await t.throwsAsync(M.ensureMarkRule(conn, o), { instanceOf: UsageError });
    t.regex(err!.message, re);
  }
  t.false(tableExists('ip', 'synplug_t1bad'));
  // Other test files may change the ruleset meanwhile; ours did not if no table of ours appeared.
  t.false(nft('list', 'tables').includes('synplug_t1bad'));
  t.log(`generation ${gen} -> ${await N.getGenId(conn)}; tables before: ${before.split('\n').length - 1}`);
});

test.serial('a large batch (2000 rules) is applied with one ack, never ENOBUFS; a large refused batch is never reported as applied', async (t) => {
  nftFile('table ip synplug_t1big {\nchain c {\n}\n}\n');
  const b = new N.NftBatch();
  for (let i = 0; i < 2000; i++) b.addRule({ family: 'ip', table: 'synplug_t1big', chain: 'c', expr: [{ name: 'counter', packets: 0, bytes: 0 }] });
  const size = b.messages().reduce((n, m) => n + 16 + (m.payload as Buffer[]).reduce((k, p) => k + p.length, 0), 0);
  t.true(size < 200_000, `batch is ${size} bytes`);
  t.deepEqual(await b.commit(conn), { applied: true, messages: 2000 });
  t.is(rulesOf(nftj('list', 'table', 'ip', 'synplug_t1big')).length, 2000);
  // The same into a chain that does not exist: 2000 errors. Whatever the socket makes of
  // them, the outcome must be an error saying nothing was applied.
  const bad = new N.NftBatch();
  for (let i = 0; i < 2000; i++) bad.addRule({ family: 'ip', table: 'synplug_t1big', chain: 'nochain', expr: [{ name: 'counter', packets: 0, bytes: 0 }] });
  bad.addRule({ family: 'ip', table: 'synplug_t1big', chain: 'c', expr: [{ name: 'counter', packets: 0, bytes: 0 }] });
  const err = await t.throwsAsync(bad.commit(conn));
  t.regex(err!.message, /not applied/);
  t.log(err!.message);
  t.is(rulesOf(nftj('list', 'table', 'ip', 'synplug_t1big')).length, 2000);
  // the connection still works afterwards (a fresh one if the socket overflowed)
  const c2 = N.openNftables();
  t.true(Number.isInteger(await N.getGenId(c2)));
  c2.close();
});

test.serial('a kernel error names the failed message; the batch is atomic', async (t) => {
  const b = new N.NftBatch()
    .addTable({ family: 'ip', name: 'synplug_t1err' })
    .addChain({ family: 'ip', table: 'synplug_t1err', name: 'c' })
    .addRule({ family: 'ip', table: 'synplug_t1err', chain: 'nochain', expr: [{ name: 'counter', packets: 0, bytes: 0 }] })
    .addRule({ family: 'ip', table: 'synplug_t1err', chain: 'c', expr: [{ name: 'counter', packets: 0, bytes: 0 }] });
  const err = await t.throwsAsync(b.commit(conn), { instanceOf: N.NftBatchError });
  t.regex(err!.message, /^NFT_MSG_NEWRULE: add rule to ip synplug_t1err nochain failed: .*\(ENOENT\); the whole batch was not applied$/);
  t.is(err!.index, 2);
  t.false(tableExists('ip', 'synplug_t1err'), 'the table of the same batch was not created');
  // A set element without the timeout flag: EINVAL, named.
  nftFile('table ip synplug_t1err {\nset plain { type ipv4_addr; }\n}\n');
  const e2 = await t.throwsAsync(M.addSetElement(conn, { address: '169.254.99.4', table: 'synplug_t1err', set: 'plain', timeoutMs: 1000 }), {
    instanceOf: N.NftBatchError,
  });
  t.regex(e2!.message, /^NFT_MSG_NEWSETELEM: add element 169\.254\.99\.4 timeout 1000ms to set ip synplug_t1err plain failed: .*timeout flag.*\(EINVAL\)/);
  const e3 = await t.throwsAsync(M.addSetElement(conn, { address: '169.254.99.4', table: 'synplug_t1err', set: 'nosuchset', timeoutMs: 1000 }), {
    instanceOf: N.NftBatchError,
  });
  t.regex(e3!.message, /^NFT_MSG_NEWSETELEM: .*the set \(or its table\) does not exist \(ENOENT\)/);
});

test.serial('a batch planned on a stale generation is refused with ERESTART (NftGenerationError)', async (t) => {
  const gen = await N.getGenId(conn);
  nft('add', 'table', 'ip', 'synplug_t1gen'); // moves the generation
  t.not(await N.getGenId(conn), gen);
  const err = await t.throwsAsync(new N.NftBatch().addChain({ family: 'ip', table: 'synplug_t1gen', name: 'c' }).commit(conn, { genId: gen }), {
    instanceOf: N.NftGenerationError,
  });
  t.regex(err!.message, /changed since generation/);
  t.is(rulesOf(nftj('list', 'table', 'ip', 'synplug_t1gen')).length, 0);
  t.deepEqual(
    nftj('list', 'table', 'ip', 'synplug_t1gen').filter((o) => o.chain),
    [],
  );
});

test.serial('set elements: added with a timeout, listed with the time left (as nft -j lists them), deleted, delete-if-present, refreshed', async (t) => {
  await M.ensureMarkRule(conn, { address: '169.254.77.1', table: 'synplug_t1set', conditional: true });
  const ref = { family: 'ip' as const, table: 'synplug_t1set' };
  t.deepEqual(await M.addSetElement(conn, { ...ref, address: '169.254.77.1', timeoutMs: 10_000 }), { applied: true, messages: 1 });
  const [el] = await M.listMarkSetElements(conn, ref);
  t.like(el, { address: '169.254.77.1', timeoutMs: 10_000 });
  t.true(el.expiresMs! <= 10_000 && el.expiresMs! > 5_000, `expires in ${el.expiresMs} ms`);
  const nj = nftj('list', 'set', 'ip', 'synplug_t1set', 'synplug_active').find((o) => o.set)!.set;
  const theirs = (nj.elem as Array<{ elem: { val: string; timeout: number; expires: number } }>)[0].elem;
  t.is<string | undefined, string | undefined>(theirs.val, el.address);
  t.is(theirs.timeout, el.timeoutMs! / 1000);
  t.true(Math.abs(theirs.expires - Math.floor(el.expiresMs! / 1000)) <= 1);
  t.deepEqual(await M.deleteSetElement(conn, { ...ref, address: '169.254.77.1' }), { applied: true, messages: 1 });
  t.deepEqual(await M.listMarkSetElements(conn, ref), []);
  t.deepEqual(await M.deleteSetElement(conn, { ...ref, address: '169.254.77.1', ignoreMissing: true }), { applied: false, messages: 1, missing: true });
  await t.throwsAsync(M.deleteSetElement(conn, { ...ref, address: '169.254.77.1' }), { instanceOf: N.NftBatchError, message: /ENOENT/ });
  // refresh: the element exists afterwards with the new timeout, present before or not
  t.deepEqual(await M.addSetElement(conn, { ...ref, address: '169.254.77.1', timeoutMs: 10_000, refresh: true }), { applied: true, messages: 3 });
  t.deepEqual(await M.addSetElement(conn, { ...ref, address: '169.254.77.1', timeoutMs: 600_000, refresh: true }), { applied: true, messages: 3 });
  const els = await M.listMarkSetElements(conn, ref);
  t.is(els.length, 1);
  t.is(els[0].timeoutMs, 600_000);
  t.true(els[0].expiresMs! > 590_000);
  // prepared ops, as the guard will use them
  const p = M.prepareElementOps({ ...ref, address: '169.254.77.1', timeoutMs: 5000 });
  t.deepEqual(await M.runPrepared(conn, p.delete), { applied: true, messages: 1 });
  t.deepEqual(await M.runPrepared(conn, p.add!), { applied: true, messages: 1 });
  t.is((await M.listMarkSetElements(conn, ref))[0].timeoutMs, 5000);
});
