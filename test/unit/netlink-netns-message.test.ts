/**
 * The message for a refused open(2) of a namespace file
 * (src/netlink/netns.ts): /proc/PID/ns/net is a ptrace access check, so it
 * names CAP_SYS_PTRACE and says CAP_SYS_ADMIN is for entering, not opening;
 * a named namespace's file is refused by its permissions.
 */
import test from 'ava';
import { netnsOpenDeniedMessage } from '../../src/netlink/netns.js';

test('EACCES opening /proc/PID/ns/net: ptrace read access (CAP_SYS_PTRACE), not a missing CAP_SYS_ADMIN', (t) => {
  for (const path of ['/proc/4242/ns/net', '/proc/4242/task/4243/ns/net']) {
    const m = netnsOpenDeniedMessage(path, path, 'EACCES');
    t.true(m.startsWith(`cannot open network namespace '${path}' (${path}): EACCES: `), m);
    t.regex(m, /ptrace read-access check/);
    t.regex(m, /CAP_SYS_PTRACE unless that process runs as synplug's own user and group and is dumpable/);
    t.regex(m, /even with CAP_SYS_ADMIN/);
    t.regex(m, /entering the namespace afterwards needs CAP_SYS_ADMIN/);
    t.notRegex(m, /needs root \(CAP_SYS_ADMIN\)/);
  }
});

test('EPERM opening a named namespace file: its permissions, and CAP_SYS_ADMIN for entering', (t) => {
  const m = netnsOpenDeniedMessage('blue', '/run/netns/blue', 'EPERM');
  t.is(
    m,
    "cannot open network namespace 'blue' (/run/netns/blue): EPERM: the file's permissions refuse this user; entering a namespace also needs CAP_SYS_ADMIN (run as root)",
  );
  t.notRegex(m, /PTRACE/);
});
