/**
 * GuardSession.isLocalAddress (protect --wait-listen's notice for an address
 * no server can listen on), against the namespace's addresses as `ip -j
 * addr` shows them: an address added to a device of this file's own is
 * local, one nowhere is not, 127/8 and the unspecified address always are.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GuardSession } from '../../src/guard/session.js';
import { resolveConfig } from '../../src/guard/config.js';

const IP = '/usr/sbin/ip';
const DEV = 'sp-locaddr0';

test('isLocalAddress: an address of a link (IPv4 and IPv6, any spelling) is local; one that no link has is not', async (t) => {
  execFileSync(IP, ['link', 'add', DEV, 'type', 'ifb']);
  execFileSync(IP, ['link', 'set', DEV, 'up']);
  t.teardown(() => {
    try {
      execFileSync(IP, ['link', 'del', DEV]);
    } catch {
      /* gone */
    }
  });
  execFileSync(IP, ['addr', 'add', '169.254.91.7/32', 'dev', DEV]);
  execFileSync(IP, ['addr', 'add', 'fd00:91::7/128', 'dev', DEV, 'nodad']);
  const shown = JSON.parse(execFileSync(IP, ['-j', 'addr', 'show', 'dev', DEV], { encoding: 'utf8' }))[0].addr_info.map((a: { local: string }) => a.local);
  t.true(shown.includes('169.254.91.7') && shown.includes('fd00:91::7'), 'the oracle shows both');
  const s = await GuardSession.open(resolveConfig({ stateDir: mkdtempSync(join(tmpdir(), 'synplug-locaddr-')) }), { local: false });
  try {
    t.true(await s.isLocalAddress('169.254.91.7'));
    t.true(await s.isLocalAddress('fd00:91:0:0:0:0:0:7'), 'another spelling of the same IPv6 address');
    t.false(await s.isLocalAddress('169.254.91.8'));
    t.false(await s.isLocalAddress('fd00:91::8'));
    t.true(await s.isLocalAddress('127.0.0.9'), "127/8 is lo's whole");
    t.true(await s.isLocalAddress('0.0.0.0'));
    t.true(await s.isLocalAddress('::'));
  } finally {
    s.close();
  }
});
