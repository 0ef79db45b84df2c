/**
 * `synplug doctor` on this machine's kernel (6.18: nf_tables, nfnetlink_queue
 * and the xt NFQUEUE target through nft_compat; no sch_prio, sch_plug or
 * cls_fw; no /lib/modules): the plug holds are named with what they lack and
 * that it cannot be loaded here, the queue hold works, exit 0; it changes
 * nothing; a user without CAP_NET_ADMIN gets exit 4 with what was not checked.
 * The oracles: /sys/module and /lib/modules as the kernel shows them, and
 * `nft list ruleset` / `tc qdisc show` before and after.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { release } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'dist/bundle/synplug.cjs');

function synplug(args: string[], prefix: string[] = []) {
  const cmd = prefix.length ? prefix[0] : process.execPath;
  const argv = prefix.length ? [...prefix.slice(1), process.execPath, BIN, ...args] : [BIN, ...args];
  const r = spawnSync(cmd, argv, { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
const state = () => ({
  ruleset: spawnSync('/usr/sbin/nft', ['list', 'ruleset'], { encoding: 'utf8' }).stdout,
  qdiscs: spawnSync('/usr/sbin/tc', ['qdisc', 'show'], { encoding: 'utf8' }).stdout,
  links: spawnSync('/usr/sbin/ip', ['-o', 'link', 'show'], { encoding: 'utf8' }).stdout,
});

interface Report {
  kernel: string;
  holds: Array<{ name: string; via: string; supported: boolean | null; missing: Array<{ module: string; state: string }>; why: string }>;
  privileges: { netAdmin: boolean | null; sysAdmin: boolean | null };
  diag: { tcpDiag: boolean };
  sysctl: { tcpMigrateReq: number | null };
  notChecked: string[];
}

test('as root: the plug holds lack sch_prio/sch_plug/cls_fw (absent from /sys/module; no /lib/modules: cannot be loaded), the queue hold works, exit 0, nothing changed', (t) => {
  for (const m of ['sch_plug', 'sch_prio']) t.false(existsSync(`/sys/module/${m}`), `oracle: ${m} is not in this kernel`);
  const before = state();
  const r = synplug(['doctor', '--json']);
  t.is(r.code, 0, r.stderr);
  const rep = JSON.parse(r.stdout) as Report;
  t.is(rep.kernel, release());
  const hold = (name: string) => rep.holds.find((h) => h.name === name)!;
  const expectState = existsSync(`/lib/modules/${release()}`) ? 'missing' : 'cannot-load';
  t.is(hold('local').via, 'plug');
  t.false(hold('local').supported);
  t.deepEqual(
    hold('local').missing.map((m) => [m.module, m.state]),
    [
      ['sch_prio', expectState],
      ['sch_plug', expectState],
      ['cls_fw', expectState],
    ],
  );
  t.false(hold('inbound').supported);
  t.true(hold('inbound').missing.some((m) => m.module === 'sch_plug'));
  t.is(hold('queue').via, 'queue');
  t.true(hold('queue').supported, hold('queue').why);
  t.deepEqual(rep.privileges, { netAdmin: true, sysAdmin: true });
  t.true(rep.diag.tcpDiag);
  t.is(rep.sysctl.tcpMigrateReq, Number(spawnSync('/usr/sbin/sysctl', ['-n', 'net.ipv4.tcp_migrate_req'], { encoding: 'utf8' }).stdout.trim()));
  t.deepEqual(rep.notChecked, []);
  t.deepEqual(state(), before, 'doctor changed nothing');
  const text = synplug(['doctor']);
  t.is(text.code, 0);
  t.regex(text.stdout, /^ {2}queue +via queue .*supported: works on this kernel$/m);
  t.regex(text.stdout, /^usable here: queue \(via queue\)/m);
});

test('without CAP_NET_ADMIN (uid 65534, no capabilities): exit 4, the holds not probed and said so', (t) => {
  const r = synplug(['doctor', '--json'], ['/usr/bin/setpriv', '--reuid', '65534', '--regid', '65534', '--clear-groups', '--inh-caps=-all']);
  t.is(r.code, 4, r.stderr);
  const rep = JSON.parse(r.stdout) as Report;
  t.true(rep.holds.length >= 3);
  t.true(rep.holds.every((h) => h.supported === null));
  t.deepEqual(rep.privileges, { netAdmin: false, sysAdmin: false });
  t.regex(rep.notChecked.join('\n'), /the probes need CAP_NET_ADMIN/);
});
