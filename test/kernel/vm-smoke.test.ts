// Smoke test for the kernel-test VM (scripts/vm/run.sh): proves that the
// tests run as root on a stock Debian kernel that has the modules the host
// kernel lacks. Run it with `npm run test:kernel`, not on the host.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';

const sh = (file: string, args: string[]): string => execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

test('runs as root on a Debian 6.1 or 6.12 kernel, not the host one', (t) => {
  t.is(process.getuid?.(), 0);
  t.regex(os.release(), /^6\.(1|12)\./);
  t.not(process.env['SYNPLUG_IN_VM'], undefined, 'SYNPLUG_IN_VM is set by scripts/vm/run.sh');
});

test('sch_plug, sch_prio and cls_fw are loaded', (t) => {
  for (const module of ['sch_plug', 'sch_prio', 'cls_fw']) {
    t.true(existsSync(`/sys/module/${module}`), `/sys/module/${module}`);
  }
});

test('lo is up', (t) => {
  const IFF_UP = 0x1;
  const flags = Number.parseInt(readFileSync('/sys/class/net/lo/flags', 'utf8'), 16);
  t.is(flags & IFF_UP, IFF_UP);
});

test('tc can build prio + plug + fw in a fresh netns', (t) => {
  const ns = `synplug-smoke-${process.pid}`;
  sh('ip', ['netns', 'add', ns]);
  t.teardown(() => {
    sh('ip', ['netns', 'del', ns]);
  });
  sh('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
  sh('tc', ['-n', ns, 'qdisc', 'add', 'dev', 'lo', 'root', 'handle', '1:', 'prio', 'bands', '4']);
  sh('tc', ['-n', ns, 'qdisc', 'add', 'dev', 'lo', 'parent', '1:4', 'handle', '40:', 'plug', 'limit', '1000']);
  sh('tc', ['-n', ns, 'filter', 'add', 'dev', 'lo', 'parent', '1:', 'protocol', 'ip', 'prio', '1', 'handle', '1', 'fw', 'classid', '1:4']);
  const qdiscs = sh('tc', ['-n', ns, 'qdisc', 'show', 'dev', 'lo']);
  t.regex(qdiscs, /qdisc prio 1: root/);
  t.regex(qdiscs, /qdisc plug 40: parent 1:4/);
  t.regex(sh('tc', ['-n', ns, 'filter', 'show', 'dev', 'lo']), /fw .*classid 1:4/);
  sh('tc', ['-n', ns, 'qdisc', 'del', 'dev', 'lo', 'root']);
});

test('crash evidence is collected: core files go to the run folder on the shared filesystem, without a size limit, and Node writes fatal-error reports there', (t) => {
  const pattern = readFileSync('/proc/sys/kernel/core_pattern', 'utf8').trim();
  t.regex(pattern, /^\/\S+\/crash\/core\.%e\.%p\.%s$/, pattern);
  t.true(existsSync(pattern.slice(0, pattern.lastIndexOf('/'))), 'the folder exists');
  t.is(sh('bash', ['-c', 'ulimit -c']).trim(), 'unlimited');
  t.regex(process.env['NODE_OPTIONS'] ?? '', /--report-on-fatalerror --report-directory=\/\S+\/crash/);
  t.regex(readFileSync('/proc/cmdline', 'utf8'), /\bprint-fatal-signals=1\b/);
});
