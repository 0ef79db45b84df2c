/**
 * The library's contract (issue #19, defects 6 and 12; deliverable 6):
 * durations above 24 h, wrong types and unknown options are UsageError
 * before anything else is checked or changed (no state directory made, no
 * socket opened, no device looked up); netlink's and tc's entry points
 * refuse what they cannot use with a categorised error, never a TypeError
 * or a silent wrong result.
 */
import test from 'ava';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { check, plug, protect, release, setup, status, teardown, runProtected } from '../../src/guard/index.js';
import { UsageError, SynplugError } from '../../src/netlink/errors.js';
import { NetlinkConnection } from '../../src/netlink/connection.js';
import { NETLINK_ROUTE } from '../../src/netlink/message.js';
import { FakeTransport } from '../../src/netlink/testing.js';
import { listQdiscs } from '../../src/tc/qdisc.js';
import { exitCodeOf } from '../../src/cli/exit-codes.js';
import type { ProtectSession } from '../../src/guard/types.js';
import { FakeKernel } from '../helpers/fake-kernel.js';

// The unit tier touches no kernel (test/helpers/unit-no-kernel.ts): every connection opened meanwhile reaches the double.
let undoKernel: () => void = () => {};
test.before(() => {
  undoKernel = new FakeKernel().install();
});
test.after.always(() => undoKernel());

/** A state directory that does not exist yet: any entry point that got past its checks would read or make it. */
const untouched = () => join(mkdtempSync(join(tmpdir(), 'synplug-trust-')), 'state');

// biome-ignore lint/suspicious/noExplicitAny: the point is to pass what the types forbid, as a JavaScript caller can
type Any = any;

const ENTRIES: Array<[string, (o: Any) => Promise<unknown>]> = [
  ['setup', setup],
  ['check', check],
  ['status', status],
  ['teardown', teardown],
  ['plug', plug],
  ['release', release],
  ['protect', (o) => protect(typeof o === 'object' ? { command: ['true'], ...o } : o)],
];

for (const [name, f] of ENTRIES) {
  test(`${name}: an unknown option, a value of another type, or options that are not an object: UsageError before anything is touched`, async (t) => {
    for (const [opts, re] of [
      [{ stateDir: untouched(), nosuch: 1 }, new RegExp(`${name}: unknown option 'nosuch' \\(its options: dev, addr, mark, limit, table, stateDir`)],
      [{ stateDir: untouched(), dev: 5 }, new RegExp(`${name}: option 'dev' must be a string \\(got 5\\)`)],
      [{ stateDir: 7 }, new RegExp(`${name}: option 'stateDir' must be a string \\(got 7\\)`)],
      ['lo', new RegExp(`${name}: the options must be an object \\(got string\\)`)],
    ] as const) {
      const e = await t.throwsAsync(f(opts as Any), { instanceOf: UsageError });
      t.regex(e!.message, re);
      t.is(exitCodeOf(e), 2);
      if (typeof opts === 'object' && typeof opts.stateDir === 'string') t.false(existsSync(opts.stateDir), 'no state directory made');
    }
  });
}

test('durations above 24 h are refused (they overflowed Node timers: maxHoldMs 3e9 released after 1.3 ms, checkTimeoutMs 3e9 failed at once)', async (t) => {
  const stateDir = untouched();
  for (const [p, re] of [
    [plug({ stateDir, maxHoldMs: 3e9 }), /plug: option 'maxHoldMs' must be a duration in ms, from 10 to 86400000 \(24 h\) \(got 3000000000\)/],
    [plug({ stateDir, maxHoldMs: 86_400_001 }), /option 'maxHoldMs' must be a duration in ms, from 10 to 86400000/],
    [plug({ stateDir, maxHoldMs: Number.NaN }), /option 'maxHoldMs' must be a duration/],
    [plug({ stateDir, maxHoldMs: '10' as Any }), /option 'maxHoldMs' must be a duration in ms.*\(got '10'\)/],
    [protect({ stateDir, command: ['true'], maxHoldMs: 3e9 }), /protect: option 'maxHoldMs' must be a duration/],
    [
      protect({ stateDir, command: ['true'], check: ['true'], checkTimeoutMs: 3e9 }),
      /protect: option 'checkTimeoutMs' must be a duration in ms, from 100 to 86400000/,
    ],
    [protect({ stateDir, command: 'true' as Any }), /protect: option 'command' must be an array of strings/],
  ] as const) {
    t.regex((await t.throwsAsync(p, { instanceOf: UsageError }))!.message, re);
  }
  t.false(existsSync(stateDir));
  // 24 h itself is a valid duration: refused later for another reason (here: no device of that name), not as a duration
  const late = await t.throwsAsync(plug({ stateDir, dev: 'sp-nosuch-dev0', maxHoldMs: 86_400_000 }));
  t.notRegex(late!.message, /maxHoldMs/);
});

test('runProtected checks its options the same way, before its session is asked anything', async (t) => {
  const asked: string[] = [];
  const session = new Proxy({} as ProtectSession, {
    get: (_t, k) => {
      asked.push(String(k));
      return undefined;
    },
  });
  const e = await t.throwsAsync(runProtected(session, { command: ['true'], maxHoldMs: 3e9 }), { instanceOf: UsageError });
  t.regex(e!.message, /option 'maxHoldMs' must be a duration/);
  t.deepEqual(asked, []);
});

test("release({ orphaned: 'yes' }) is a UsageError, not a plain lease-breaking release", async (t) => {
  const stateDir = untouched();
  const e = await t.throwsAsync(release({ stateDir, orphaned: 'yes' as Any }), { instanceOf: UsageError });
  t.regex(e!.message, /release: option 'orphaned' must be true or false \(got 'yes'\)/);
  t.false(existsSync(stateDir));
});

test('NetlinkConnection.open: options that are null, not an object, unknown or of another type are UsageError (no socket is made)', (t) => {
  for (const [opts, re] of [
    [{ netns: 123 }, /option 'netns' must be a string \(got 123\)/],
    [null, /the options must be an object \(got null\)/],
    ['x', /the options must be an object \(got string\)/],
    [{ timeoutMs: -1 }, /option 'timeoutMs' must be a finite number, not negative/],
    [{ timeoutMs: '5' }, /option 'timeoutMs' must be a finite number/],
    [{ extendedAck: 1 }, /option 'extendedAck' must be a boolean/],
    [{ nosuch: true }, /unknown option 'nosuch' \(its options: timeoutMs/],
  ] as const) {
    const e = t.throws(() => NetlinkConnection.open(0, opts as Any), { instanceOf: UsageError });
    t.regex(e!.message, re);
  }
});

test('request(null) and other malformed requests reject with a UsageError; nothing is sent', async (t) => {
  const ft = new FakeTransport();
  const conn = new NetlinkConnection(ft, NETLINK_ROUTE, { timeoutMs: 1000 });
  for (const [msg, re] of [
    [null, /a netlink request must be an object \{ type, flags\?, payload\? \} \(got null\)/],
    [{ type: 'x' }, /type must be an integer 0-65535/],
    [{ type: 70000 }, /type must be an integer 0-65535/],
    [{ type: 36, flags: -1 }, /flags must be an integer 0-65535/],
    [{ type: 36, payload: 'abc' }, /payload must be a Buffer or an array of Buffers/],
  ] as const) {
    const e = await t.throwsAsync(conn.request(msg as Any), { instanceOf: UsageError });
    t.regex(e!.message, re);
    await t.throwsAsync(conn.dumpAll(msg as Any), { instanceOf: UsageError });
  }
  t.deepEqual(ft.sent, []);
  conn.close();
});

test('listQdiscs(conn, { dev: 5 }) is a UsageError (it returned []); nothing is sent', async (t) => {
  const ft = new FakeTransport();
  const conn = new NetlinkConnection(ft, NETLINK_ROUTE, { timeoutMs: 1000 });
  const e = await t.throwsAsync(listQdiscs(conn, { dev: 5 as Any }), { instanceOf: UsageError });
  t.regex(e!.message, /dev must be a device name \(a string; give an index as ifindex\), not number 5/);
  t.true(e instanceof SynplugError && e.category === 'usage');
  t.deepEqual(ft.sent, []);
  conn.close();
});
