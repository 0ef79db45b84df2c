/**
 * synplug doctor's pieces without a kernel: whether a missing module could be
 * loaded (a module folder made here), the exit-5 sentence with and without a
 * module folder, the text and the exit code of a report.
 */
import test from 'ava';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { moduleState, type DoctorReport } from '../../src/guard/doctor.js';
import { MissingSupportError } from '../../src/guard/support.js';
import { doctorExitCode, formatDoctor } from '../../src/cli/doctor-command.js';

function modulesDir(dep: string): string {
  const d = mkdtempSync(join(tmpdir(), 'sp-modules-'));
  writeFileSync(join(d, 'modules.dep'), dep);
  return d;
}

test('moduleState: a module modules.dep lists is loadable (compressed or not, - and _ alike); one it does not list is missing; no folder: cannot-load', (t) => {
  const d = modulesDir(
    [
      'kernel/net/sched/sch_plug.ko.xz:',
      'kernel/net/sched/sch_prio.ko:',
      'kernel/net/netfilter/nft_queue.ko.zst: kernel/net/netfilter/nf_tables.ko.zst',
      'kernel/drivers/net/ifb.ko.gz:',
      'kernel/net/netfilter/xt_NFQUEUE.ko:',
    ].join('\n'),
  );
  t.is(moduleState('sch_plug', d), 'loadable');
  t.is(moduleState('sch_prio', d), 'loadable');
  t.is(moduleState('nft_queue', d), 'loadable');
  t.is(moduleState('nft-queue', d), 'loadable');
  t.is(moduleState('ifb', d), 'loadable');
  t.is(moduleState('xt_NFQUEUE', d), 'loadable');
  t.is(moduleState('cls_fw', d), 'missing');
  t.is(moduleState('sch_plug', join(d, 'nope')), 'cannot-load');
  // a folder without modules.dep cannot say either
  t.is(moduleState('sch_plug', mkdtempSync(join(tmpdir(), 'sp-modules-'))), 'cannot-load');
});

test("the exit-5 sentence: modprobe where the kernel has a module folder; where it has none, that modprobe cannot work here; both point to 'synplug doctor'", (t) => {
  const missing = [
    { module: 'sch_plug', what: 'qdisc plug' },
    { module: 'cls_fw', what: 'filter fw' },
  ];
  const have = new MissingSupportError(missing, [], { modulesDir: modulesDir('') });
  t.regex(
    have.message,
    /\. Load the modules \(modprobe sch_plug cls_fw\) or use a kernel that has them; 'synplug doctor' shows which holds this kernel supports; nothing was changed$/,
  );
  const none = new MissingSupportError(missing, [], { modulesDir: '/nonexistent/lib/modules/x' });
  t.regex(
    none.message,
    /\. Use a kernel that has them: this one has no \/nonexistent\/lib\/modules\/x, so loading them \(modprobe sch_plug cls_fw\) cannot work here; 'synplug doctor' shows which holds this kernel supports; nothing was changed$/,
  );
  t.notRegex(none.message, /Load the modules/);
});

const report = (holds: DoctorReport['holds'], netAdmin: boolean | null = true): DoctorReport => ({
  kernel: '6.1.0-test',
  holds,
  privileges: { netAdmin, sysAdmin: netAdmin },
  diag: { tcpDiag: true, missing: [] },
  sysctl: { tcpMigrateReq: 0 },
  notChecked: netAdmin === false ? ['which holds this kernel supports: the probes need CAP_NET_ADMIN (run doctor as root)'] : [],
});
const plugMissing: DoctorReport['holds'][number] = {
  name: 'local',
  via: 'plug',
  scopes: ['local'],
  supported: false,
  missing: [{ module: 'sch_plug', what: 'qdisc plug', state: 'cannot-load' }],
  unverified: [],
  why: 'missing sch_plug (qdisc plug; this kernel has no /lib/modules: it cannot be loaded here)',
};
const queueOk: DoctorReport['holds'][number] = {
  name: 'queue',
  via: 'queue',
  scopes: ['local', 'inbound'],
  supported: true,
  missing: [],
  unverified: [],
  why: 'works on this kernel',
};

test('doctor exits 0 when a hold works, 5 when none does, 4 when the holds could not be probed', (t) => {
  t.is(doctorExitCode(report([plugMissing, queueOk])), 0);
  t.is(doctorExitCode(report([plugMissing, { ...queueOk, supported: false }])), 5);
  t.is(doctorExitCode(report([{ ...plugMissing, supported: null, missing: [] }], false)), 4);
});

test('doctor text: a line per hold with what it lacks and whether that can be loaded, the capabilities, what was not checked, what is usable', (t) => {
  const text = formatDoctor(report([plugMissing, queueOk]));
  t.regex(text, /^kernel 6\.1\.0-test$/m);
  t.regex(
    text,
    /^ {2}local +via plug +\(local clients\) +not supported: missing sch_plug \(qdisc plug; this kernel has no \/lib\/modules: it cannot be loaded here\)$/m,
  );
  t.regex(text, /^ {2}queue +via queue \(local, inbound clients\) +supported: works on this kernel$/m);
  t.regex(text, /^privileges: CAP_NET_ADMIN yes, CAP_SYS_ADMIN yes$/m);
  t.regex(text, /^usable here: queue \(via queue\)/m);
  const denied = formatDoctor(report([{ ...plugMissing, supported: null, missing: [], why: 'the probes need CAP_NET_ADMIN' }], false));
  t.regex(denied, /not checked: the probes need CAP_NET_ADMIN/);
  t.regex(denied, /^not checked: which holds this kernel supports/m);
  t.notRegex(denied, /usable here/);
});
