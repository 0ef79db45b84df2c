/**
 * Kernel (VM): `synplug protect --check CMD` with the local hold set up.
 * A failing check (HAProxy's own `haproxy -c` on a broken configuration)
 * exits 10, shows the check's output, holds nothing (no marking element, no
 * "buffering" record, the plug's counters unchanged, a connection to the
 * proxy's address completes) and never runs the reload command. A passing
 * check is reported in --json next to, and apart from, the plug window.
 */
import test from 'ava';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ADDR,
  TEST_TIMEOUT,
  activeElements,
  cli,
  plugCounters,
  probe,
  readPlugJson,
  scratch,
  setupWithProxy,
  useGuardVm,
  within,
} from '../helpers/guard-vm.js';

useGuardVm(test);

const HAPROXY = '/usr/sbin/haproxy';

function haproxyConfig(dir: string, valid: boolean): string {
  const file = join(dir, valid ? 'ok.cfg' : 'broken.cfg');
  writeFileSync(
    file,
    [
      'global',
      '  maxconn 100',
      'defaults',
      '  mode tcp',
      '  timeout connect 1s',
      '  timeout client 5s',
      '  timeout server 5s',
      'frontend fe',
      `  bind ${ADDR}:16999`,
      valid ? '  default_backend be' : '  default_backend be\n  this_is_not_a_keyword 1',
      'backend be',
      '  server s1 127.0.0.1:16998',
      '',
    ].join('\n'),
  );
  return file;
}

test.serial('a failing --check (haproxy -c on a broken config): exit 10, its output shown, nothing held, the reload command not run', async (t) => {
  t.timeout(TEST_TIMEOUT);
  const proxy = await setupWithProxy(t);
  const dir = scratch(t);
  const marker = join(dir, 'reloaded');
  const before = await plugCounters();
  const r = await cli(['protect', '--json', '--check', `${HAPROXY} -c -f ${haproxyConfig(dir, false)}`, '--', 'touch', marker]);
  t.is(r.code, 10, r.stderr);
  t.regex(r.stderr, /this_is_not_a_keyword/, "haproxy's own diagnosis is shown");
  t.regex(r.stderr, /--check command exited \d+ .*nothing was held and the reload command was not run/);
  const body = JSON.parse(r.stdout.trim().split('\n').pop()!);
  t.is(body.category, 'check-failed');
  t.is(body.exitCode, 10);
  t.false(existsSync(marker), 'the reload command was not run');
  t.deepEqual(await activeElements(), [], 'marking was never armed');
  t.not(readPlugJson()?.state, 'buffering');
  const after = await plugCounters();
  t.is(after?.qlen, before?.qlen);
  t.is(after?.packets, before?.packets);
  const p = probe(ADDR, proxy.port, ADDR);
  t.is(await within(p.data, 'a connection to the proxy after the failed check'), 'proxy');
});

test.serial('a passing --check: the reload runs under the plug; --json reports the check apart from the window', async (t) => {
  t.timeout(TEST_TIMEOUT);
  await setupWithProxy(t);
  const dir = scratch(t);
  const marker = join(dir, 'reloaded');
  const cfg = haproxyConfig(dir, true);
  const r = await cli(['protect', '--json', '--check', `${HAPROXY} -c -f '${cfg}'`, '--', 'touch', marker]);
  t.is(r.code, 0, r.stderr);
  t.true(existsSync(marker));
  t.regex(r.stderr, /valid/i, "haproxy -c's verdict is shown (on stderr: stdout is the JSON)");
  const j = JSON.parse(r.stdout.trim().split('\n').pop()!);
  t.deepEqual(j.check.command, [HAPROXY, '-c', '-f', cfg]);
  t.is(j.check.exitCode, 0);
  t.is(typeof j.check.durationMs, 'number');
  t.is(typeof j.report.holdMs, 'number');
  t.is(j.exitCode, 0);
  t.not(readPlugJson()?.state, 'buffering');
});

test.serial('a --check command that does not exist: 127, nothing held, the reload command not run', async (t) => {
  t.timeout(TEST_TIMEOUT);
  await setupWithProxy(t);
  const dir = scratch(t);
  const marker = join(dir, 'reloaded');
  const r = await cli(['protect', '--check', 'synplug-no-such-check -t', '--', 'touch', marker]);
  t.is(r.code, 127, r.stderr);
  t.regex(r.stderr, /--check: command not found: 'synplug-no-such-check'/);
  t.false(existsSync(marker));
  t.deepEqual(await activeElements(), []);
  t.not(readPlugJson()?.state, 'buffering');
});
