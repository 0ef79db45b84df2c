/**
 * The proxy's address: canonical text, and the loopback refusal that only a
 * new setup applies (records made before it can still be read).
 */
import test from 'ava';
import { canonicalAddress, parseDuration, refuseLoopback, resolveConfig } from '../../src/guard/config.js';
import { UsageError } from '../../src/netlink/errors.js';

test('loopback addresses are refused for a setup, with the reason', (t) => {
  for (const a of ['127.0.0.1', '127.0.0.2', '127.255.255.254', '::1']) {
    const e = t.throws(() => refuseLoopback(canonicalAddress(a)), { instanceOf: UsageError }, a);
    t.regex(e!.message, /a loopback address cannot be the proxy's address/, a);
    t.is(e!.category, 'usage');
  }
});

test('other addresses pass the loopback check', (t) => {
  // 126.255.255.255 and 128.0.0.1: the addresses either side of 127/8, the range the check is about
  for (const a of ['169.254.255.254', '169.254.0.1', '126.255.255.255', '128.0.0.1', 'fe80::1', '::2', '2001:db8::1']) {
    t.notThrows(() => refuseLoopback(canonicalAddress(a)), a);
  }
});

test('a configuration (as read from a record) may still name a loopback address', (t) => {
  t.is(resolveConfig({ addr: '127.0.0.1' }).addr, '127.0.0.1');
  t.is(resolveConfig({ addr: '0:0:0:0:0:0:0:1' }).addr, '::1');
});

test('parseDuration: a bare number of seconds, or a duration as the ms package reads it; at most 24h; other forms are refused (exit 2)', (t) => {
  const ok: Array<[string, number]> = [
    ['500ms', 500],
    ['10s', 10_000],
    ['1.5s', 1500],
    ['.5s', 500],
    ['2m', 120_000],
    ['1h', 3_600_000],
    ['24h', 86_400_000],
    ['10', 10_000],
    ['0.25', 250],
    [' 10s ', 10_000],
    ['1 s', 1000],
    ['10S', 10_000],
    ['10 seconds', 10_000],
    ['2 minutes', 120_000],
    ['1 hour', 3_600_000],
  ];
  for (const [text, want] of ok) t.is(parseDuration(text, '--max-hold'), want, text);
  for (const odd of ['1e3', '1m30s', '0x10', 's', '', '10 parsecs', 'x'.repeat(101)]) {
    const e = t.throws(() => parseDuration(odd, '--max-hold'), { instanceOf: UsageError }, odd);
    t.regex(e!.message, /is not a duration \(e\.g\. 500ms, 10s/, odd);
  }
  t.throws(() => parseDuration('2d', '--max-hold'), { instanceOf: UsageError, message: /at most 24h/ });
  t.throws(() => parseDuration('25h', '--max-hold'), { instanceOf: UsageError, message: /at most 24h/ });
  t.throws(() => parseDuration('-1s', '--max-hold'), { instanceOf: UsageError, message: /must be more than 0/ });
  t.throws(() => parseDuration('5ms', '--max-hold'), { instanceOf: UsageError, message: /at least 10 ms/ });
});
