/**
 * Paths synplug is given, held to the state directory's rules (issue #19):
 *
 * - a `..` component is refused (exit 2) in a state directory, a metrics
 *   file and a namespace path: read as text it dropped the component before
 *   it, while the kernel follows a link there first (a review's
 *   `--state-dir LINK/../dd` used the directory beside the link, not the one
 *   `ls` shows);
 * - a metrics file in /proc or /sys is refused naming that file system (the
 *   message of `/proc/self/x.prom` had told to give --state-dir);
 * - a `--netns` path through a link, a directory or a file of another user,
 *   or a directory others can write, is refused (exit 2) as such a state
 *   directory is; root's own paths and /proc/self/ns/net pass.
 *
 * Runs as root (it chowns, and starts a process as uid 65534).
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, lchownSync, mkdirSync, mkdtempSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../../src/netlink/errors.js';
import { StateStore } from '../../src/guard/state.js';
import { checkMetricsFile } from '../../src/guard/metrics.js';
import { checkNetnsPath } from '../../src/guard/call-netns.js';
import { stateDirOf } from '../../src/cli/guard-commands.js';
import { exitCodeOf } from '../../src/cli/exit-codes.js';

const NOBODY = 65534;

function base(): string {
  const b = mkdtempSync(join(tmpdir(), 'synplug-paths-'));
  chmodSync(b, 0o755);
  return b;
}

test("regression: --state-dir LINK/../dd named the directory beside the link; now a '..' component is refused (exit 2) and nothing is made", (t) => {
  const b = base();
  mkdirSync(join(b, 'deep', 'x'), { recursive: true });
  symlinkSync(join(b, 'deep', 'x'), join(b, 'lnk'));
  const dir = `${b}/lnk/../dd`; // not join(), which would drop the '..' as text
  const lib = t.throws(() => new StateStore(dir).writePlug({ version: 1, state: 'released', owner: 'manual', pid: 1, dev: 'lo', since: 1, deadline: 2 }), {
    instanceOf: UsageError,
  })!;
  t.is(exitCodeOf(lib), 2);
  t.is(
    lib.message,
    `the state directory ${dir} has a '..' component, which synplug would read as text while the kernel follows a symbolic link before it first (naming another directory than 'ls' shows): give the path without '..'`,
  );
  for (const [flag, env, what] of [
    [dir, {}, '--state-dir'],
    [undefined, { SYNPLUG_STATE_DIR: dir }, 'the environment variable SYNPLUG_STATE_DIR'],
  ] as const) {
    const e = t.throws(() => stateDirOf(flag, env), { instanceOf: UsageError })!;
    t.true(e.message.startsWith(`${what} ${dir} has a '..' component`), e.message);
  }
  t.false(existsSync(join(b, 'dd')), 'nothing made where the text pointed');
  t.false(existsSync(join(b, 'deep', 'dd')), 'nothing made where the kernel pointed');
});

test("a metrics file with a '..' component is refused (exit 2)", (t) => {
  const b = base();
  const e = t.throws(() => checkMetricsFile(`${b}/a/../synplug.prom`), { instanceOf: UsageError })!;
  t.regex(e.message, /^--metrics-file \/.*\/a\/\.\.\/synplug\.prom has a '\.\.' component/);
});

test('regression: a metrics file in /proc was refused telling to give --state-dir; now the message names /proc (or /sys)', (t) => {
  for (const [file, fs] of [
    ['/proc/self/x.prom', '/proc (procfs)'],
    [`/proc/${process.pid}/x.prom`, '/proc (procfs)'],
    ['/sys/kernel/x.prom', '/sys (sysfs)'],
  ] as const) {
    const e = t.throws(() => checkMetricsFile(file), { instanceOf: UsageError })!;
    const dir = file.slice(0, file.lastIndexOf('/'));
    t.is(
      e.message,
      `--metrics-file ${file}: ${dir} is in ${fs}, a file system of the kernel's where no file can be made: give a file in node_exporter's textfile directory (its --collector.textfile.directory; Debian's: /var/lib/prometheus/node-exporter)`,
    );
    t.notRegex(e.message, /state-dir|SYNPLUG_STATE_DIR/);
  }
});

test("a metrics file's directory reached through a link: the message names the link and --metrics-file, never --state-dir", (t) => {
  const b = base();
  mkdirSync(join(b, 'real'));
  symlinkSync(join(b, 'real'), join(b, 'textfile'));
  const e = t.throws(() => checkMetricsFile(join(b, 'textfile', 'synplug.prom')), { instanceOf: UsageError })!;
  t.is(
    e.message,
    `--metrics-file ${join(b, 'textfile', 'synplug.prom')}: its directory is not safe to write in: ${join(b, 'textfile')} is a symbolic link; synplug does not follow links to the metrics file: give the real directory with --metrics-file`,
  );
});

test("a --netns path through another user's link, directory or file, or a directory others can write, is refused (exit 2); root's and /proc/self pass", async (t) => {
  const b = base();
  // root's link to this process's namespace, in a directory of root's: passes
  symlinkSync('/proc/self/ns/net', join(b, 'mine'));
  t.notThrows(() => checkNetnsPath(join(b, 'mine'), join(b, 'mine'), '--netns'));
  t.notThrows(() => checkNetnsPath('/proc/self/ns/net', `/proc/${process.pid}/ns/net`, '--netns'));
  t.notThrows(() => checkNetnsPath(0, `/proc/${process.pid}/fd/0`, "status: option 'netns'"));
  // the same link, owned by uid 65534
  symlinkSync('/proc/self/ns/net', join(b, 'theirs'));
  lchownSync(join(b, 'theirs'), NOBODY, NOBODY);
  const link = t.throws(() => checkNetnsPath(join(b, 'theirs'), join(b, 'theirs'), '--netns'), { instanceOf: UsageError })!;
  t.is(exitCodeOf(link), 2);
  t.true(
    link.message.startsWith(
      `--netns ${join(b, 'theirs')}: ${join(b, 'theirs')}, a symbolic link on its path, is owned by uid ${NOBODY} (neither root nor this user, uid 0): its owner could point it at another namespace, so synplug refuses it`,
    ),
    link.message,
  );
  // root's link in uid 65534's directory
  mkdirSync(join(b, 'nob'));
  chmodSync(join(b, 'nob'), 0o755);
  lchownSync(join(b, 'nob'), NOBODY, NOBODY);
  symlinkSync('/proc/self/ns/net', join(b, 'nob', 'l'));
  t.regex(
    t.throws(() => checkNetnsPath(join(b, 'nob', 'l'), join(b, 'nob', 'l'), '--netns'), { instanceOf: UsageError })!.message,
    new RegExp(`: ${join(b, 'nob')} is owned by uid ${NOBODY} \\(neither root nor this user, uid 0\\)`),
  );
  // root's link in a directory everyone can write (not sticky)
  mkdirSync(join(b, 'pub'));
  chmodSync(join(b, 'pub'), 0o777);
  symlinkSync('/proc/self/ns/net', join(b, 'pub', 'l'));
  t.regex(
    t.throws(() => checkNetnsPath(join(b, 'pub', 'l'), join(b, 'pub', 'l'), '--netns'), { instanceOf: UsageError })!.message,
    new RegExp(`: ${join(b, 'pub')}, a directory on its path, is writable by everyone \\(mode 0777\\) and not sticky`),
  );
  // a link whose target leads through another user's link is walked: refused there
  symlinkSync(join(b, 'theirs'), join(b, 'via'));
  t.regex(
    t.throws(() => checkNetnsPath(join(b, 'via'), join(b, 'via'), '--netns'), { instanceOf: UsageError })!.message,
    new RegExp(`: ${join(b, 'theirs')}, a symbolic link on its path, is owned by uid ${NOBODY}`),
  );
  // another user's process: its /proc directory is that user's
  const p = spawn('/usr/bin/setpriv', ['--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups', '/bin/sleep', '30'], { stdio: 'ignore' });
  try {
    // setpriv has changed its uid once its /proc directory is uid 65534's (bounded: 10 s)
    for (let i = 0; i < 200 && statSync(`/proc/${p.pid}`).uid !== NOBODY; i++) await new Promise((r) => setTimeout(r, 50));
    const path = `/proc/${p.pid}/ns/net`;
    const e = t.throws(() => checkNetnsPath(path, path, '--netns'), { instanceOf: UsageError })!;
    t.regex(e.message, new RegExp(`^--netns ${path}: /proc/${p.pid} is owned by uid ${NOBODY} .*'ip netns attach NAME PID' as root, then --netns NAME\\)$`));
  } finally {
    p.kill();
  }
  // '..' in a namespace path
  t.regex(
    t.throws(() => checkNetnsPath(`${b}/x/../mine`, join(b, 'mine'), '--netns'), { instanceOf: UsageError })!.message,
    /^--netns .*\/x\/\.\.\/mine has a '\.\.' component/,
  );
});
