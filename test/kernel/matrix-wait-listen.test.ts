/**
 * Kernel (VM): `protect --wait-listen` when the server keeps its listening
 * socket across the reload (issue 14 item 4). HAProxy in master-worker mode
 * reloaded with USR2 (what `systemctl reload haproxy` sends), and nginx
 * reloaded with `-s reload` (reuseport, 2 workers), both return before the
 * new workers run and open no new listening socket: protect must release once
 * the reloaded server has taken its sockets over (a process that did not hold
 * them before holds them), not at --max-hold. A stop-then-start still waits
 * for the new socket. Assertions are about what protect reports (the max-hold
 * was not reached, which listener ended the wait), never about speed.
 */
import test from 'ava';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setup } from '../../src/guard/index.js';
import { ADDR, TEST_TIMEOUT, cli, probe, run, scratch, tool, useGuardVm, waitFor, within } from '../helpers/guard-vm.js';

useGuardVm(test);

const HAPROXY = '/usr/sbin/haproxy';
const NGINX = '/usr/sbin/nginx';

function pidOf(file: string): number | undefined {
  try {
    const n = Number(readFileSync(file, 'utf8').trim());
    return n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

function killPid(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* gone */
  }
}

interface ProtectJson {
  exitCode: number;
  maxHoldReached: boolean;
  report: { holdMs: number };
  newListener: { address: string; port: number; inode: number; handedOver?: boolean; oldClosed?: number } | null;
}

async function protectJson(args: string[]): Promise<ProtectJson> {
  const r = await cli(['protect', '--json', ...args]);
  if (r.code !== 0) throw new Error(`protect exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as ProtectJson;
}

async function pong(port: number, what: string): Promise<string> {
  const p = probe(ADDR, port);
  p.socket.write('GET / HTTP/1.0\r\n\r\n');
  return within(p.data, what);
}

test.serial('HAProxy -W, reloaded with USR2 (the socket is kept): --wait-listen releases once the new worker holds it, not at --max-hold', async (t) => {
  t.timeout(TEST_TIMEOUT);
  await setup();
  const dir = scratch(t);
  const port = 16100 + (process.pid % 500);
  const cfg = join(dir, 'haproxy.cfg');
  const pidfile = join(dir, 'haproxy.pid');
  writeFileSync(
    cfg,
    [
      'global',
      '  nbthread 1',
      'defaults',
      '  mode http',
      '  timeout connect 5s',
      '  timeout client 30s',
      '  timeout server 30s',
      'frontend fe',
      `  bind ${ADDR}:${port}`,
      '  http-request return status 200 content-type text/plain string "pong"',
      '',
    ].join('\n'),
  );
  const started = await run(HAPROXY, ['-W', '-D', '-f', cfg, '-p', pidfile]);
  t.is(started.code, 0, started.stderr);
  t.teardown(() => killPid(pidOf(pidfile)));
  await waitFor(() => pidOf(pidfile) !== undefined, 'the HAProxy master pid file');
  const master = pidOf(pidfile)!;
  t.regex(await pong(port, 'HAProxy before the reload'), /pong/);
  const j = await protectJson(['--max-hold', '60s', '--wait-listen', `${ADDR}:${port}`, '--', 'kill', '-USR2', String(master)]);
  t.is(j.exitCode, 0);
  t.false(j.maxHoldReached, `released by the reload, not by the max-hold (held ${j.report.holdMs} ms)`);
  t.truthy(j.newListener, 'the wait ended on a listener');
  t.true(j.newListener!.handedOver, 'the kept socket, taken over by a new process');
  t.is(j.newListener!.port, port);
  t.is(pidOf(pidfile), master, 'USR2 keeps the master');
  t.regex(await pong(port, 'HAProxy after the reload'), /pong/);
});

test.serial('nginx -s reload with reuseport and 2 workers (sockets kept): --wait-listen releases once new workers hold them', async (t) => {
  t.timeout(TEST_TIMEOUT);
  await setup();
  const dir = scratch(t);
  const port = 16700 + (process.pid % 500);
  const conf = join(dir, 'nginx.conf');
  const pidfile = join(dir, 'nginx.pid');
  writeFileSync(
    conf,
    [
      'worker_processes 2;',
      `pid ${pidfile};`,
      `error_log ${dir}/error.log;`,
      'events { worker_connections 256; }',
      'http {',
      `  access_log off;`,
      `  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;`,
      `  server { listen ${ADDR}:${port} reuseport; location / { return 200 "pong\\n"; } }`,
      '}',
      '',
    ].join('\n'),
  );
  const started = await run(NGINX, ['-p', dir, '-c', conf]);
  t.is(started.code, 0, started.stderr);
  t.teardown(() => killPid(pidOf(pidfile)));
  await waitFor(() => pidOf(pidfile) !== undefined, 'the nginx master pid file');
  t.regex(await pong(port, 'nginx before the reload'), /pong/);
  const j = await protectJson(['--max-hold', '60s', '--wait-listen', `${ADDR}:${port}`, '--', NGINX, '-p', dir, '-c', conf, '-s', 'reload']);
  t.is(j.exitCode, 0);
  t.false(j.maxHoldReached, `released by the reload, not by the max-hold (held ${j.report.holdMs} ms)`);
  t.true(j.newListener?.handedOver, 'a kept socket, taken over by a new worker');
  t.regex(await pong(port, 'nginx after the reload'), /pong/);
});

/** The inodes of the TCP sockets listening on ADDR:port, as `ss` lists them (the oracle). */
async function listenInodes(port: number): Promise<string[]> {
  const out = await tool('/usr/bin/ss', ['-Hltne', 'src', `${ADDR}:${port}`]);
  return out
    .split('\n')
    .map((l) => /\bino:(\d+)/.exec(l)?.[1])
    .filter((x): x is string => x !== undefined);
}

test.serial(
  'nginx -s reload going from 3 reuseport workers to 2 (one socket of the group closes): --wait-listen releases once that socket is gone',
  async (t) => {
    t.timeout(TEST_TIMEOUT);
    await setup();
    const dir = scratch(t);
    const port = 18300 + (process.pid % 500);
    const conf = join(dir, 'nginx.conf');
    const pidfile = join(dir, 'nginx.pid');
    const config = (workers: number) =>
      [
        `worker_processes ${workers};`,
        `pid ${pidfile};`,
        `error_log ${dir}/error.log;`,
        'events { worker_connections 256; }',
        'http {',
        `  access_log off;`,
        `  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;`,
        `  server { listen ${ADDR}:${port} reuseport; location / { return 200 "pong\\n"; } }`,
        '}',
        '',
      ].join('\n');
    writeFileSync(conf, config(3));
    const started = await run(NGINX, ['-p', dir, '-c', conf]);
    t.is(started.code, 0, started.stderr);
    t.teardown(() => killPid(pidOf(pidfile)));
    await waitFor(() => pidOf(pidfile) !== undefined, 'the nginx master pid file');
    t.regex(await pong(port, 'nginx before the reload'), /pong/);
    const before = await listenInodes(port);
    t.is(before.length, 3, `oracle (ss): one socket per worker (${before.join(', ')})`);
    writeFileSync(conf, config(2));
    const j = await protectJson(['--max-hold', '60s', '--wait-listen', `${ADDR}:${port}`, '--', NGINX, '-p', dir, '-c', conf, '-s', 'reload']);
    const after = await listenInodes(port);
    t.is(j.exitCode, 0);
    t.false(j.maxHoldReached, `released by the reload, not by the max-hold (held ${j.report.holdMs} ms)`);
    t.true(j.newListener?.handedOver, 'kept sockets, taken over by the new workers');
    t.is(after.length, 2, `oracle (ss): the third socket is gone once protect has released (${after.join(', ')})`);
    t.true(
      after.every((i) => before.includes(i)),
      'the two sockets kept are sockets of before',
    );
    // When the old workers still held the third socket as the new ones took the others up, the wait saw it close.
    t.true(j.newListener!.oldClosed === undefined || j.newListener!.oldClosed === 1, `oldClosed ${j.newListener!.oldClosed}`);
    t.regex(await pong(port, 'nginx after the reload'), /pong/);
  },
);

test.serial('a stop-then-start still waits for the NEW socket (not a kept one)', async (t) => {
  t.timeout(TEST_TIMEOUT);
  await setup();
  const dir = scratch(t);
  const port = 17300 + (process.pid % 500);
  const conf = join(dir, 'nginx.conf');
  const pidfile = join(dir, 'nginx.pid');
  writeFileSync(
    conf,
    [
      'worker_processes 1;',
      `pid ${pidfile};`,
      `error_log ${dir}/error.log;`,
      'events { worker_connections 256; }',
      'http {',
      `  access_log off;`,
      `  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;`,
      `  server { listen ${ADDR}:${port}; location / { return 200 "pong\\n"; } }`,
      '}',
      '',
    ].join('\n'),
  );
  t.is((await run(NGINX, ['-p', dir, '-c', conf])).code, 0);
  t.teardown(() => killPid(pidOf(pidfile)));
  await waitFor(() => pidOf(pidfile) !== undefined, 'the nginx master pid file');
  // stop (and wait for the old master to be gone), then start in the background after a gap:
  // the command returns while nothing listens.
  const restart = `${NGINX} -p ${dir} -c ${conf} -s stop; while [ -e ${pidfile} ]; do sleep 0.05; done; (sleep 1; ${NGINX} -p ${dir} -c ${conf}) >/dev/null 2>&1 &`;
  const j = await protectJson(['--max-hold', '60s', '--wait-listen', `${ADDR}:${port}`, '--', 'sh', '-c', restart]);
  t.is(j.exitCode, 0);
  t.false(j.maxHoldReached);
  t.truthy(j.newListener);
  t.falsy(j.newListener!.handedOver, 'a new socket, not a kept one');
  t.regex(await pong(port, 'nginx after the restart'), /pong/);
});
