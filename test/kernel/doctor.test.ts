/**
 * `synplug doctor` on Debian's stock kernel, which has every module: the plug
 * holds (local and inbound) and the queue hold all work (nft's native queue
 * expression there), exit 0, and nothing changes. The oracle: /sys/module.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = join(fileURLToPath(new URL('../../', import.meta.url)), 'dist/bundle/synplug.cjs');

test('every hold works on a stock kernel: exit 0, nothing missing, nothing changed', (t) => {
  t.not(process.env['SYNPLUG_IN_VM'], undefined, 'runs in the VM (npm run test:kernel)');
  for (const m of ['sch_plug', 'sch_prio', 'cls_fw', 'nfnetlink_queue']) t.true(existsSync(`/sys/module/${m}`), `oracle: ${m} loaded`);
  // In a network namespace of its own: the kernel tests running beside this one change the VM's own ruleset.
  const script = [
    'ip link set lo up',
    '/usr/sbin/nft list ruleset; /usr/sbin/tc qdisc show dev lo; echo ===',
    `"${process.execPath}" "${BIN}" doctor --json; echo "exit $?"; echo ===`,
    '/usr/sbin/nft list ruleset; /usr/sbin/tc qdisc show dev lo',
  ].join('\n');
  const r = spawnSync('unshare', ['--net', 'bash', '-c', script], { encoding: 'utf8', timeout: 300_000 });
  const [before, doctorOut, after] = r.stdout.split('===\n');
  t.is(after, before, 'doctor changed nothing in its namespace');
  const m = /^(\{.*\})\nexit (\d+)\n$/s.exec(doctorOut ?? '');
  t.truthy(m, `${r.stdout}\n${r.stderr}`);
  t.is(m![2], '0', r.stderr);
  const rep = JSON.parse(m![1]) as { holds: Array<{ name: string; supported: boolean; missing: unknown[]; why: string }>; diag: { tcpDiag: boolean } };
  t.deepEqual(
    rep.holds.map((h) => [h.name, h.supported, h.missing.length]),
    [
      ['local', true, 0],
      ['inbound', true, 0],
      ['queue', true, 0],
    ],
    JSON.stringify(rep.holds),
  );
  t.true(rep.diag.tcpDiag);
});
