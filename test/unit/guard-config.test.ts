/**
 * The proxy's address: canonical text, and the loopback refusal that only a
 * new setup applies (records made before it can still be read).
 */
import test from 'ava';
import { canonicalAddress, refuseLoopback, resolveConfig } from '../../src/guard/config.js';
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
