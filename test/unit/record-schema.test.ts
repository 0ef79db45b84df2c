/**
 * The record schema (issue #19, deliverable 4): a record synplug could not
 * have written is refused with a StateFileError naming the file and what is
 * wrong; nothing else is ever thrown, whatever the content (a property test
 * over mutated records). Ranges: no empty `holds`, deadlines at most 24 h
 * ahead, process ids and times as written.
 */
import test from 'ava';
import fc from 'fast-check';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import '../../src/guard/modes/index.js'; // registers each mode's record checks
import { StateStore, StateFileError, leasesRecordProblem, plugRecordProblem, setupRecordProblem } from '../../src/guard/state.js';
import { netnsCookie } from '../../src/netlink/netns.js';
import { baseRecords, inboundHoldRecord, LOCAL_HOLD, mutatedRecord } from '../helpers/record-mutations.js';

/** The cookie of the namespace the records are read in (undefined on a kernel without one). */
const HERE = netnsCookie(undefined);

function storeWith(file: string, text: string): StateStore {
  const dir = join(mkdtempSync(join(tmpdir(), 'synplug-schema-')), 'state');
  mkdirSync(dir, { mode: 0o700 });
  writeFileSync(join(dir, file), text);
  return new StateStore(dir);
}

const read = (s: StateStore, file: string) => (file === 'setup.json' ? s.readSetup() : file === 'plug.json' ? s.readPlug() : s.readLeases());

test('what synplug writes is read back as it was written', (t) => {
  const now = Date.now();
  for (const [file, values] of Object.entries(baseRecords(now, undefined, HERE))) {
    for (const v of values) t.notThrows(() => read(storeWith(file, JSON.stringify(v)), file), `${file}: ${JSON.stringify(v)}`);
  }
});

test("regression: a setup.json without 'netns' was read as no namespace to check; on a kernel with cookies it is refused, naming the file", (t) => {
  t.truthy(HERE, 'this kernel has SO_NETNS_COOKIE');
  const e = t.throws(() => storeWith('setup.json', JSON.stringify({ version: 2, holds: { local: LOCAL_HOLD } })).readSetup(), { instanceOf: StateFileError });
  t.is(e!.category, 'bad-state');
  t.regex(e!.message, /\/setup\.json has no 'netns' field .*it is not read and nothing was changed\. Remove it \(then run 'synplug setup' again/);
  t.notThrows(() => storeWith('setup.json', JSON.stringify({ version: 2, holds: { local: LOCAL_HOLD }, netns: HERE })).readSetup());
});

test("'holds': {} is refused, saying what to do (defect 4)", (t) => {
  const e = t.throws(() => storeWith('setup.json', '{"version":2,"holds":{}}').readSetup(), { instanceOf: StateFileError });
  t.regex(e!.message, /setup\.json is not a setup record synplug wrote: remove it \(then run 'synplug setup' again/);
  t.regex(e!.message, /'holds' is empty/);
  t.is(e!.category, 'bad-state');
});

test('ranges: deadlines more than 24 h ahead, before since, absurd times and pids, bad lease fields', (t) => {
  const now = Date.now();
  const [plug] = baseRecords(now)['plug.json'] as Array<Record<string, unknown>>;
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ ...plug, deadline: now + 25 * 3600_000 }, /more than 24 h ahead/],
    [{ ...plug, deadline: 1e308 }, /'deadline' is 1e\+308, not a time/],
    [{ ...plug, since: 1e300 }, /'since' is 1e\+300/],
    [{ ...plug, since: now + 10_000, deadline: now + 5000 }, /'deadline' is before 'since'/],
    [{ ...plug, pid: 0 }, /'pid' is 0, not a process id/],
    [{ ...plug, pid: 2 ** 31 }, /not a process id/],
    [{ ...plug, owner: 'root' }, /'owner' is "root"/],
    [{ ...plug, state: 'released', neverHeld: 'yes' }, /'neverHeld' is not true on a released record/],
    [{ ...plug, state: 'buffering', neverHeld: true }, /'neverHeld' is not true on a released record/],
  ];
  // setup's record (nothing held since): released, never held, no releasedAt
  t.is(plugRecordProblem({ ...plug, state: 'released', releasedAt: undefined, neverHeld: true }, now), undefined);
  for (const [r, re] of cases) t.regex(plugRecordProblem(r, now) ?? '', re, JSON.stringify(r));
  const lease = (baseRecords(now)['leases.json'][0] as { leases: Array<Record<string, unknown>> }).leases[0];
  t.regex(leasesRecordProblem({ version: 1, leases: [{ ...lease, command: 'rm -rf /' }] }, now) ?? '', /lease 1: 'command' is not a list of words/);
  t.regex(leasesRecordProblem({ version: 1, leases: [{ ...lease, holds: [] }] }, now) ?? '', /'holds' is not a list of hold ids/);
  t.regex(leasesRecordProblem({ version: 1, leases: [{ ...lease, deadline: 1e308 }] }, now) ?? '', /'deadline' is 1e\+308/);
  t.regex(setupRecordProblem({ version: 2, holds: { local: { ...LOCAL_HOLD, createdAt: -5 } } }) ?? '', /'createdAt' is not a time/);
  t.regex(
    setupRecordProblem({ version: 2, holds: { local: { ...LOCAL_HOLD, addr: '::1', prefixlen: 128 } } }) ?? '',
    /names what setup refuses: bad address '::1': a loopback/,
  );
  t.regex(setupRecordProblem({ version: 2, holds: { local: { ...LOCAL_HOLD, table: 'filter' } } }) ?? '', /bad table name 'filter'/);
  t.regex(
    setupRecordProblem({ version: 2, holds: { local: { ...LOCAL_HOLD, prefixlen: 8 } } }) ?? '',
    /prefix length 8: setup adds 169\.254\.255\.254\/32 only/,
  );
  t.regex(
    leasesRecordProblem({ version: 1, leases: [{ ...lease, counters: { packets: -1, drops: 0 } }] }, now) ?? '',
    /'counters' is not \{ packets, drops \}/,
  );
  t.regex(leasesRecordProblem({ version: 1, leases: [{ ...lease, counters: { packets: 3 } }] }, now) ?? '', /'counters' is not/);
  t.is(leasesRecordProblem({ version: 1, leases: [{ ...lease, counters: { packets: 3, drops: 0 } }] }, now), undefined);
});

test('setup.json metricsFile (setup --metrics-file): an absolute, normalised path of a file, or refused', (t) => {
  const rec = (metricsFile: unknown) => ({ version: 2, holds: { local: LOCAL_HOLD }, metricsFile });
  t.is(setupRecordProblem(rec('/var/lib/prometheus/node-exporter/synplug.prom')), undefined);
  for (const bad of [
    'synplug.prom',
    '../x.prom',
    '/var/lib/../x.prom',
    '/var//x.prom',
    '/var/lib/',
    '/a\0b',
    42,
    null,
    `/${'a'.repeat(5000)}`,
    '/etc/passwd',
    '/var/lib/.prom',
  ])
    t.regex(setupRecordProblem(rec(bad)) ?? '', /'metricsFile' is .*, not an absolute path of a \*\.prom file/, JSON.stringify(bad));
});

test('property: any mutation of any record is read back or refused with a StateFileError naming the file; nothing else is thrown', (t) => {
  const now = Date.now();
  fc.assert(
    fc.property(mutatedRecord(now, undefined, HERE), ({ file, value }) => {
      const text = JSON.stringify(value) ?? '';
      try {
        read(storeWith(file, text), file);
      } catch (e) {
        if (!(e instanceof StateFileError)) throw e;
        if (!e.message.includes(file)) throw new Error(`the message does not name ${file}: ${e.message}`);
        if (e.category !== 'bad-state') throw new Error(`category ${e.category}`);
      }
    }),
    { numRuns: 400 },
  );
  t.pass();
});

test("regression: an inbound hold's plug limit beyond a u32 (1e308, 4294967296) passed the check; now refused, naming 'limit'", (t) => {
  for (const limit of [1e308, 4294967296]) {
    const rec = { version: 2, holds: { 'inbound:sp-eth0': { ...inboundHoldRecord(), limit } }, ...(HERE && { netns: HERE }) };
    t.regex(setupRecordProblem(rec) ?? '', /hold 'inbound:sp-eth0' names what setup refuses: 'limit' is [0-9e+]+: not a plug limit \(1024-4294967295 bytes/);
  }
  const ok = { version: 2, holds: { 'inbound:sp-eth0': { ...inboundHoldRecord(), limit: 4294967295 } }, ...(HERE && { netns: HERE }) };
  t.is(setupRecordProblem(ok), undefined);
});
