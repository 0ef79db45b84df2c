/**
 * The demo's clients and server (src/demo/clients.ts, server.ts) with real
 * sockets on 127.0.0.1 (no plug needed): each failure kind from a server that
 * really behaves that way, the restart's gap refusing connections on the same
 * port, and the client loops' bounds (in flight, pause after a failure, stop).
 */
import test from 'ava';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { requestOnce, classifyError, ClientLoad, FAILURE_PAUSE_MS } from '../../src/demo/clients.js';
import { PongServer } from '../../src/demo/server.js';
import { summariseRequests } from '../../src/demo/stats.js';

const HOST = '127.0.0.1';

/** A server that handles each connection with `onConn`; closed by the test's teardown. */
async function server(t: { teardown(f: () => void): void }, onConn: (s: net.Socket) => void): Promise<number> {
  const sockets = new Set<net.Socket>();
  const srv = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
    onConn(s);
  });
  await new Promise<void>((resolve) => srv.listen({ host: HOST, port: 0 }, () => resolve()));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    srv.close();
  });
  return (srv.address() as net.AddressInfo).port;
}

/** A port where nothing listens (bound, then closed). */
async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen({ host: HOST, port: 0 }, () => resolve()));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

test('classifyError maps socket error codes to kinds', (t) => {
  t.is(classifyError('ECONNREFUSED'), 'refused');
  t.is(classifyError('ECONNRESET'), 'reset');
  t.is(classifyError('EPIPE'), 'reset');
  t.is(classifyError('ETIMEDOUT'), 'timeout');
  t.is(classifyError('EADDRNOTAVAIL'), 'other');
  t.is(classifyError(undefined), 'other');
});

test('a pong server: the request succeeds, connect time within the total', async (t) => {
  const s = await PongServer.start(HOST);
  t.teardown(() => s.close());
  const r = await requestOnce(HOST, s.port, { timeoutMs: 5000 });
  t.is(r.failure, null);
  t.not(r.connectMs, null);
  t.true(r.connectMs! >= 0 && r.connectMs! <= r.totalMs);
  t.is(s.accepted, 1);
});

test('nothing listening: refused (ECONNREFUSED), never connected', async (t) => {
  const r = await requestOnce(HOST, await closedPort(), { timeoutMs: 5000 });
  t.is(r.failure, 'refused');
  t.is(r.errorCode, 'ECONNREFUSED');
  t.is(r.connectMs, null);
});

test('a server that resets the connection: reset', async (t) => {
  const port = await server(t, (s) => s.resetAndDestroy());
  const r = await requestOnce(HOST, port, { timeoutMs: 5000 });
  t.is(r.failure, 'reset');
  t.is(r.errorCode, 'ECONNRESET');
});

test('a server that never answers: timeout after the request timeout', async (t) => {
  const port = await server(t, () => {
    /* accept and stay silent */
  });
  const r = await requestOnce(HOST, port, { timeoutMs: 300 });
  t.is(r.failure, 'timeout');
  t.not(r.connectMs, null, 'it connected; the reply never came');
  t.true(r.totalMs >= 290, `total ${r.totalMs} ms`);
});

test('a server that answers something else, or nothing: bad response', async (t) => {
  const other = await server(t, (s) => s.end('nope\n'));
  t.is((await requestOnce(HOST, other, { timeoutMs: 5000 })).failure, 'bad-response');
  const empty = await server(t, (s) => s.end());
  t.is((await requestOnce(HOST, empty, { timeoutMs: 5000 })).failure, 'bad-response');
  const prefix = await server(t, (s) => s.end('pong\nmore'));
  t.is((await requestOnce(HOST, prefix, { timeoutMs: 5000 })).failure, 'bad-response');
});

test('PongServer.restart: refused during the gap, answered on the same port after it', async (t) => {
  const s = await PongServer.start(HOST);
  t.teardown(() => s.close());
  const port = s.port;
  const gap = 400;
  const restarting = s.restart(gap);
  await sleep(100);
  t.false(s.listening);
  const during = await requestOnce(HOST, port, { timeoutMs: 5000 });
  t.is(during.failure, 'refused');
  const { closedMs } = await restarting;
  t.true(closedMs >= gap - 1, `closed for ${closedMs} ms`);
  t.is(s.port, port);
  t.true(s.listening);
  t.is((await requestOnce(HOST, port, { timeoutMs: 5000 })).failure, null);
});

test('PongServer.restart drains: it probes the accept queue until empty, then closes; bounded by the drain time', async (t) => {
  const s = await PongServer.start(HOST);
  t.teardown(() => s.close());
  const answers = [3, 1, 0, 7];
  let calls = 0;
  const r = await s.restart(20, { probe: async () => answers[calls++], maxMs: 10_000 });
  t.is(calls, 3, 'probed until the queue was empty');
  t.is(r.queuedAtClose, 0);
  t.true(s.listening);

  let full = 0;
  const t0 = performance.now();
  const r2 = await s.restart(20, {
    probe: async () => {
      full++;
      return 5;
    },
    maxMs: 100,
  });
  t.true(performance.now() - t0 >= 100 + 20 - 1, 'waited the drain time, then the gap');
  t.true(full >= 2);
  t.is(r2.queuedAtClose, 5, 'what was left is reported');

  const r3 = await s.restart(20, { probe: async () => null, maxMs: 10_000 });
  t.is(r3.queuedAtClose, null, 'an unknown length does not hold the restart');
  t.is((await s.restart(20)).queuedAtClose, null, 'no probe: one turn of the event loop');
  t.is((await requestOnce(HOST, s.port, { timeoutMs: 5000 })).failure, null);
});

test('PongServer.close: closed for good; restart refuses', async (t) => {
  const s = await PongServer.start(HOST);
  const port = s.port;
  await s.close();
  t.is((await requestOnce(HOST, port, { timeoutMs: 5000 })).failure, 'refused');
  await t.throwsAsync(s.restart(10), { message: /not listening/ });
});

test('PongServer.start on an address that is not on this machine: a SynplugError naming it', async (t) => {
  const e = await t.throwsAsync(PongServer.start('169.254.0.192'));
  t.regex(e!.message, /cannot listen on 169\.254\.0\.192:0: EADDRNOTAVAIL/);
});

test('ClientLoad: at most `clients` in flight, every request recorded, restarts show as refusals', async (t) => {
  const s = await PongServer.start(HOST);
  t.teardown(() => s.close());
  const load = new ClientLoad({ host: HOST, port: s.port, clients: 4, timeoutMs: 5000 });
  await sleep(150);
  await s.restart(200);
  await sleep(150);
  const t0 = performance.now();
  const records = await load.stop();
  t.true(performance.now() - t0 < 5000, 'stop waits only for the requests in flight');
  t.true(load.peakInFlight <= 4 && load.peakInFlight >= 1, `peak ${load.peakInFlight}`);
  const sum = summariseRequests(records);
  t.true(sum.ok > 0, 'requests succeeded before and after the restart');
  t.true(sum.failures.refused > 0, 'requests during the gap were refused');
  t.is(sum.ok, s.accepted, 'every accepted connection got its pong, and every success was accepted');
  const n = records.length;
  await sleep(100);
  t.is(load.records.length, n, 'no request after stop');
});

test('ClientLoad: a loop pauses after a failure (no busy spin on a closed port)', async (t) => {
  const port = await closedPort();
  const clients = 2;
  const load = new ClientLoad({ host: HOST, port, clients, timeoutMs: 5000 });
  const ms = 300;
  await sleep(ms);
  const records = await load.stop();
  t.true(records.every((r) => r.failure === 'refused'));
  // Each loop makes at most one request per pause (timers never fire more than 1 ms early).
  const bound = clients * (Math.floor(ms / (FAILURE_PAUSE_MS - 1)) + 2);
  t.true(records.length <= bound, `${records.length} requests in ${ms} ms, bound ${bound}`);
  t.true(records.length >= clients);
});
