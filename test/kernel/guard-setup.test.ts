/**
 * Kernel (VM): `setup`, `check` and `teardown` on the VM's `lo`, against the
 * oracles `tc`, `nft` and `ip`. The library is called in-process where the
 * behaviour is the library's; the CLI is spawned for its exit codes.
 */
import test from 'ava';
import { writeFileSync, statSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setup, check, teardown, SetupError } from '../../src/guard/index.js';
import { TABLE_COMMENT } from '../../src/guard/teardown-marks.js';
import {
  ADDR,
  TEST_TIMEOUT,
  cli,
  tool,
  scratch,
  qdiscsWithoutCounters,
  filtersJsonText,
  filtersText,
  nftTable,
  nftTables,
  loAddresses,
  assertLoClean,
  serve,
  probe,
  within,
  useGuardVm,
  STATE_DIR,
} from '../helpers/guard-vm.js';

useGuardVm(test);

/** Everything setup builds, as the oracles print it. */
async function snapshot() {
  return {
    qdiscs: await qdiscsWithoutCounters(),
    filters: await filtersJsonText(),
    table: await nftTable(),
    addresses: await loAddresses(),
  };
}

test.serial('setup twice gives the same qdiscs, filter and nftables table; the second changes nothing; check exits 0', async (t) => {
  t.timeout(TEST_TIMEOUT);
  const first = await setup();
  t.true(first.changed);
  t.true(first.addedAddress, `setup added ${ADDR} (lo did not have it)`);
  const a = await snapshot();

  // What the first setup built, as tc/nft/ip print it.
  t.deepEqual(
    a.qdiscs.map((q) => [q.kind, q.handle, q.parent ?? 'root', q.options]),
    [
      ['prio', '1:', 'root', { bands: 4, priomap: [1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1], multiqueue: false }],
      ['pfifo', '10:', '1:1', { limit: 1000 }],
      ['pfifo', '20:', '1:2', { limit: 1000 }],
      ['pfifo', '30:', '1:3', { limit: 1000 }],
      ['plug', '40:', '1:4', {}],
    ],
  );
  t.regex(a.filters, /"parent":"1:","protocol":"ip","pref":1,"kind":"fw".*handle 0x1 classid 1:4/);
  const items = a.table as Array<Record<string, Record<string, unknown>>>;
  t.like(items.find((i) => i.set)!.set, { family: 'ip', table: 'synplug', name: 'synplug_active', type: 'ipv4_addr', flags: ['timeout'] });
  t.like(items.find((i) => i.chain)!.chain, { table: 'synplug', name: 'output', type: 'route', hook: 'output', prio: -150, policy: 'accept' });
  const rules = items.filter((i) => i.rule);
  t.is(rules.length, 1, 'one rule');
  t.deepEqual(rules[0].rule.expr, [
    { match: { op: '==', left: { payload: { protocol: 'ip', field: 'saddr' } }, right: '@synplug_active' } },
    { match: { op: '==', left: { '&': [{ payload: { protocol: 'tcp', field: 'flags' } }, ['syn', 'ack']] }, right: 'syn' } },
    { mangle: { key: { meta: { key: 'mark' } }, value: 1 } },
  ]);
  t.true(a.addresses.includes(`${ADDR}/32`));

  const second = await setup();
  t.false(second.changed, `second setup changed nothing (actions: ${second.actions.join('; ')})`);
  t.deepEqual(second.actions, []);
  // Same handles in nft -j too: nothing was deleted and re-created.
  t.deepEqual(await snapshot(), a);

  const c = await cli(['check']);
  t.is(c.code, 0, c.stdout + c.stderr);
  t.regex(c.stdout, /synplug is set up on lo for 169\.254\.255\.254/);
});

test.serial('check exits 2 naming a pfifo deleted by hand with tc; setup adds it back', async (t) => {
  t.timeout(TEST_TIMEOUT);
  await setup();
  const complete = await snapshot();
  await tool('tc', ['qdisc', 'del', 'dev', 'lo', 'parent', '1:2', 'handle', '20:']);
  t.false(
    (await qdiscsWithoutCounters()).some((q) => q.handle === '20:'),
    'tc removed 20:',
  );

  const c = await cli(['check']);
  t.is(c.code, 12, c.stdout + c.stderr);
  t.regex(c.stdout, /MISSING\s+qdisc pfifo 20: parent 1:2/);
  t.notRegex(c.stdout, /MISSING\s+qdisc pfifo 10:|MISSING\s+qdisc plug/);

  const r = await setup();
  t.true(r.changed);
  t.deepEqual(r.actions, ['add qdisc pfifo 20: parent 1:2 limit 1000']);
  t.deepEqual(await snapshot(), complete);
  t.is((await check()).state, 'ok');
});

test.serial('check reports the fw filter deleted by hand; setup adds it back', async (t) => {
  t.timeout(TEST_TIMEOUT);
  await setup();
  const complete = await snapshot();
  await tool('tc', ['filter', 'del', 'dev', 'lo', 'parent', '1:', 'pref', '1']);
  t.is((await filtersText()).trim(), '', 'tc removed the filter');

  const c = await check();
  t.is(c.state, 'partial');
  t.deepEqual(
    c.pieces.filter((p) => p.status !== 'ok').map((p) => [p.piece, p.status]),
    [['filter parent 1: protocol ip pref 1 fw handle 0x1 classid 1:4', 'missing']],
  );
  const r = await setup();
  t.true(r.changed);
  t.is(r.actions.length, 1);
  t.regex(r.actions[0], /^add filter parent 1: protocol ip pref 1 fw handle 1 classid 1:4/);
  t.deepEqual(await snapshot(), complete);
  t.is((await check()).state, 'ok');
});

test.serial('check reports a pfifo altered by hand (limit 5) as different; setup corrects it', async (t) => {
  t.timeout(TEST_TIMEOUT);
  await setup();
  const complete = await snapshot();
  await tool('tc', ['qdisc', 'replace', 'dev', 'lo', 'parent', '1:1', 'handle', '10:', 'pfifo', 'limit', '5']);
  t.like(
    (await qdiscsWithoutCounters()).find((q) => q.handle === '10:'),
    { kind: 'pfifo', options: { limit: 5 } },
  );

  const c = await check();
  t.is(c.state, 'partial');
  const bad = c.pieces.filter((p) => p.status !== 'ok');
  t.is(bad.length, 1);
  t.like(bad[0], { piece: 'qdisc pfifo 10: parent 1:1 limit 1000p', status: 'different' });
  t.regex(bad[0].detail ?? '', /limit"?:5/);

  const r = await setup();
  t.true(r.changed);
  t.is(r.actions.length, 1);
  t.deepEqual(await snapshot(), complete);
  t.is((await check()).state, 'ok');
});

test.serial('a foreign root qdisc: setup exits 7 naming it and changes nothing; --force replaces it', async (t) => {
  t.timeout(TEST_TIMEOUT);
  await tool('tc', ['qdisc', 'add', 'dev', 'lo', 'root', 'handle', '5:', 'tbf', 'rate', '1gbit', 'burst', '64k', 'latency', '50ms']);
  const before = await snapshot();
  const tablesBefore = await nftTables();
  t.like(before.qdiscs[0], { kind: 'tbf', handle: '5:', root: true });

  const r = await cli(['setup']);
  t.is(r.code, 7, r.stdout + r.stderr);
  t.regex(r.stderr, /root qdisc that is not synplug's: qdisc tbf 5: root/);
  t.regex(r.stderr, /--force/);
  t.deepEqual(await snapshot(), before, 'nothing changed: qdiscs, filters, table, addresses');
  t.deepEqual(await nftTables(), tablesBefore);

  const f = await setup({ force: true });
  t.true(f.changed);
  t.regex(f.actions.join('\n'), /replace root qdisc tbf 5: with prio 1:/);
  t.is((await check()).state, 'ok');
  t.false((await qdiscsWithoutCounters()).some((q) => q.kind === 'tbf'));
});

test.serial('a failing step is rolled back: a u32 filter at pref 1 makes the fw filter fail; the pfifos and address added are removed', async (t) => {
  t.timeout(TEST_TIMEOUT);
  // A prio 1: with a plug under 1:4 counts as synplug's, so setup completes it;
  // but pref 1 / protocol ip under 1: holds a u32 filter, and the kernel
  // refuses a filter of another kind at the same pref and protocol (EINVAL).
  await tool('tc', [
    'qdisc',
    'add',
    'dev',
    'lo',
    'root',
    'handle',
    '1:',
    'prio',
    'bands',
    '4',
    'priomap',
    '1',
    '2',
    '2',
    '2',
    '1',
    '2',
    '0',
    '0',
    '1',
    '1',
    '1',
    '1',
    '1',
    '1',
    '1',
    '1',
  ]);
  await tool('tc', ['qdisc', 'add', 'dev', 'lo', 'parent', '1:4', 'handle', '40:', 'plug', 'limit', '1048576']);
  await tool('tc', ['qdisc', 'change', 'dev', 'lo', 'parent', '1:4', 'handle', '40:', 'plug', 'release_indefinite']);
  await tool('tc', [
    'filter',
    'add',
    'dev',
    'lo',
    'parent',
    '1:',
    'protocol',
    'ip',
    'pref',
    '1',
    'u32',
    'match',
    'ip',
    'dst',
    '169.254.9.9/32',
    'classid',
    '1:3',
  ]);
  const before = await snapshot();
  const filtersBefore = await filtersText();
  t.regex(filtersBefore, /u32/);

  const e = await t.throwsAsync(setup(), { instanceOf: SetupError });
  t.regex(e!.step, /^add filter parent 1: protocol ip pref 1 fw handle 1/);
  t.deepEqual(e!.rollbackFailures, []);
  t.deepEqual([...e!.rolledBack].sort(), [`removed address ${ADDR}/32`, 'removed pfifo 10:', 'removed pfifo 20:', 'removed pfifo 30:']);
  t.is(e!.category, 'kernel', 'a kernel refusal');

  t.deepEqual(await snapshot(), before, 'qdiscs, filters, table and addresses as before');
  t.is(await filtersText(), filtersBefore);
  t.false((await nftTables()).includes('ip synplug'));
  // The bands the pfifos were removed from still pass traffic (default children, not noop).
  const srv = await serve('127.0.0.1', 'ok');
  t.teardown(() => srv.close());
  const p = probe('127.0.0.1', srv.port);
  t.is(await within(p.data, 'a connection over lo after the rollback'), 'ok');
});

test.serial('a failing nftables step rolls back the whole tree: a set bound by another rule cannot be replaced', async (t) => {
  t.timeout(TEST_TIMEOUT);
  // A table ip synplug carrying synplug's mark (so setup updates it in place
  // rather than replacing an unmarked table whole): synplug_active without
  // the timeout flag (so setup must replace the set), bound by a dynset rule
  // in a regular chain (so the kernel refuses to delete it: EBUSY).
  const file = join(scratch(t), 'foreign.nft');
  writeFileSync(
    file,
    [
      'table ip synplug {',
      `  comment "${TABLE_COMMENT}"`,
      '  set synplug_active {',
      '    type ipv4_addr',
      '    flags dynamic',
      '  }',
      '  chain other {',
      '    update @synplug_active { ip saddr }',
      '  }',
      '}',
      '',
    ].join('\n'),
  );
  await tool('nft', ['-f', file]);
  // A setup ran in the state directory (its lock file, which setup creates before its first step): a marked table
  // there is taken for its own (in a directory no setup ran in, it would be another directory's and refused).
  mkdirSync(STATE_DIR, { mode: 0o700 });
  writeFileSync(join(STATE_DIR, 'lock'), '', { mode: 0o600 });
  const before = await snapshot();
  t.like(before.qdiscs, [{ kind: 'noqueue', handle: '0:' }]);
  t.truthy(before.table);

  const e = await t.throwsAsync(setup(), { instanceOf: SetupError });
  t.regex(e!.step, /nftables table synplug/);
  t.deepEqual(e!.rollbackFailures, []);
  t.deepEqual(e!.rolledBack, ['removed qdisc prio 1: (and everything under it)', `removed address ${ADDR}/32`]);

  t.deepEqual(await snapshot(), before, 'lo as before, and the other table untouched (the kernel applied nothing of the batch)');
});

test.serial('teardown leaves lo with no qdisc of ours, no filter, no synplug table, and removes the address setup added', async (t) => {
  t.timeout(TEST_TIMEOUT);
  await assertLoClean(t, 'before setup');
  const s = await setup();
  t.true(s.addedAddress);
  t.is((await check()).state, 'ok');

  t.is(statSync(STATE_DIR).mode & 0o7777, 0o700, 'setup created the state directory, mode 0700');

  const r = await teardown();
  t.true(r.removed.includes('nftables table ip synplug'));
  t.true(r.removed.includes(`address ${ADDR}/32 on lo`));
  t.deepEqual(r.kept, []);
  t.true(r.removedStateDir);
  t.false(existsSync(STATE_DIR), 'teardown removed the state directory setup had created');
  await assertLoClean(t, 'after teardown');
  t.is((await check()).state, 'absent');
  t.false(existsSync(STATE_DIR), 'check wrote nothing');
});

test.serial('teardown keeps a state directory that setup did not create', async (t) => {
  t.timeout(TEST_TIMEOUT);
  mkdirSync(STATE_DIR, { mode: 0o700 });
  await setup();
  const r = await teardown();
  t.falsy(r.removedStateDir);
  t.true(existsSync(STATE_DIR));
  t.deepEqual(readdirSync(STATE_DIR), [], 'its state files are gone');
});

test.serial('teardown keeps an address that setup did not add', async (t) => {
  t.timeout(TEST_TIMEOUT);
  await tool('ip', ['addr', 'add', `${ADDR}/32`, 'dev', 'lo']);
  const s = await setup();
  t.false(s.addedAddress);
  const r = await teardown();
  t.false(r.removed.some((x) => x.startsWith('address')));
  t.true(
    r.kept.some((x) => x.startsWith(`address ${ADDR}`)),
    r.kept.join('; '),
  );
  t.true((await loAddresses()).includes(`${ADDR}/32`));
  t.like(await qdiscsWithoutCounters(), [{ kind: 'noqueue', handle: '0:' }]);
});
