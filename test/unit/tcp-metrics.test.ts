/**
 * tcp_metrics against `ip tcp_metrics` on Linux 6.1 (fixtures/captures 61:
 * the dump after a connection whose SYN was held 2 s, and what ip printed;
 * 62: deleting 169.254.255.254).
 */
import test from 'ava';
import fc from 'fast-check';
import { loadCapture, requests, replies } from '../helpers/captures.js';
import { parseMessages, NLM_F_DUMP } from '../../src/netlink/message.js';
import { NetlinkDecodeError, UsageError } from '../../src/netlink/errors.js';
import { decodeGenl, decodeGenlBody } from '../../src/netlink/genl.js';
import * as T from '../../src/netlink/tcp-metrics.js';

/** ip's text line `DST age Xsec cwnd N rtt Nus rttvar Nus source SRC` in ip -j's words and units (seconds). */
function printedEntry(line: string): Record<string, unknown> {
  const w = line.trim().split(/\s+/);
  const out: Record<string, unknown> = { dst: w[0] };
  for (let i = 1; i < w.length; i += 2) {
    const [k, v] = [w[i], w[i + 1]];
    if (k === 'source') out.source = v;
    else if (v.endsWith('sec')) out[k] = Number(v.slice(0, -3));
    else if (v.endsWith('us')) out[k] = Number(v.slice(0, -2)) / 1e6;
    else out[k] = Number(v);
  }
  return out;
}

test('61: the dump request is iproute2 GET; the entry decodes to what ip tcp_metrics show printed (rtt 2364528us: the 2 s hold)', (t) => {
  const c = loadCapture('61_tcp_metrics_show');
  const dump = parseMessages(requests(c)[1].bytes)[0];
  t.is(dump.flags & NLM_F_DUMP, NLM_F_DUMP);
  t.is(Buffer.concat(T.encodeTcpMetricsGet()).toString('hex'), dump.payload.toString('hex'));
  const entries = replies(c)
    .flatMap((d) => parseMessages(d.bytes))
    .filter((m) => m.type === dump.type)
    .map((m) => T.decodeTcpMetrics(decodeGenl(m)));
  t.deepEqual(entries, c.printed.trim().split('\n').map(printedEntry));
  t.deepEqual(entries, [{ dst: '169.254.255.254', age: 2.492, cwnd: 10, rtt: 2.364528, rttvar: 2.060063, source: '169.254.255.254' }]);
});

test('62: TCP_METRICS_CMD_DEL for 169.254.255.254 is iproute2 request; an IPv6 address goes in TCP_METRICS_ATTR_ADDR_IPV6', (t) => {
  const c = loadCapture('62_tcp_metrics_delete');
  const del = parseMessages(requests(c)[1].bytes)[0];
  t.is(Buffer.concat(T.encodeTcpMetricsDelete('169.254.255.254')).toString('hex'), del.payload.toString('hex'));
  // genlmsghdr {TCP_METRICS_CMD_DEL, version 1}, then nla {len 20, TCP_METRICS_ATTR_ADDR_IPV6} and the 16 bytes
  t.is(Buffer.concat(T.encodeTcpMetricsDelete('fd00::1')).toString('hex'), `02010000${'14000200'}fd000000000000000000000000000001`);
  t.throws(() => T.encodeTcpMetricsDelete('169.254.1'), { instanceOf: UsageError });
});

test('deleteTcpMetrics refuses bad input before opening a socket; nothing to delete is 0', async (t) => {
  await t.throwsAsync(T.deleteTcpMetrics(['nope']), { instanceOf: UsageError });
  await t.throwsAsync(T.deleteTcpMetrics('169.254.0.1' as unknown as string[]), { instanceOf: UsageError });
  t.is(await T.deleteTcpMetrics([]), 0);
});

test('the tcp_metrics decoder throws only NetlinkDecodeError (fast-check)', (t) => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 96 }), (bytes) => {
      try {
        T.decodeTcpMetrics(decodeGenl({ type: 27, flags: 0, seq: 0, pid: 0, payload: Buffer.from(bytes), offset: 0 }));
        decodeGenlBody({ type: 27, flags: 0, seq: 0, pid: 0, payload: Buffer.from(bytes), offset: 0 });
      } catch (e) {
        if (!(e instanceof NetlinkDecodeError)) throw e;
      }
    }),
  );
  t.pass();
});
