/**
 * `--netns NAME|PATH` on the CLI (issue #10 item 4): from a process outside
 * a namespace made by `ip netns add`, synplug's show commands list what
 * `tc -n` and `ip -n` list there; setup in that namespace refuses on this
 * kernel (no sch_prio, sch_plug, cls_fw) and leaves nothing there; every
 * record goes to that namespace's own state directory; a namespace that
 * does not exist, or a file that is not one, is refused (exit 2) before
 * anything is done.
 */
import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'dist/bundle/synplug.cjs');
const NS = `sp-clins-${process.pid}`;
const DEV = 'spnsdum0';
const STATE_ROOT = mkdtempSync(join(tmpdir(), 'synplug-clins-'));

function synplug(args: string[], env: NodeJS.ProcessEnv = {}) {
  const merged: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete merged[k];
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: merged, timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
const sh = (cmd: string, args: string[]): string => execFileSync(cmd, args, { encoding: 'utf8' });

test.before(() => {
  sh('/usr/sbin/ip', ['netns', 'add', NS]);
  sh('/usr/sbin/ip', ['-n', NS, 'link', 'set', 'lo', 'up']);
  sh('/usr/sbin/ip', ['-n', NS, 'link', 'add', DEV, 'type', 'ifb']);
  sh('/usr/sbin/ip', ['-n', NS, 'link', 'set', DEV, 'up']);
  sh('/usr/sbin/ip', ['-n', NS, 'addr', 'add', '169.254.81.1/32', 'dev', DEV]);
  sh('/usr/sbin/tc', ['-n', NS, 'qdisc', 'add', 'dev', DEV, 'root', 'handle', '7:', 'pfifo', 'limit', '77']);
});
test.after.always(() => {
  spawnSync('/usr/sbin/ip', ['netns', 'del', NS]);
  rmSync(STATE_ROOT, { recursive: true, force: true });
});

test('show qdisc --netns NAME lists what tc -n lists there, and the device is not here', (t) => {
  const ours = synplug(['show', 'qdisc', '--dev', DEV, '--netns', NS, '--json']);
  t.is(ours.code, 0, ours.stderr);
  // tc leaves dev out when asked for one device: ask for all, keep that device's
  const theirs = (JSON.parse(sh('/usr/sbin/tc', ['-n', NS, '-j', 'qdisc', 'show'])) as Array<{ dev: string }>).filter((q) => q.dev === DEV);
  // synplug adds ifindex to tc's fields (test/live/tc-differential.test.ts): the namespace's index, as ip -n reports it
  const index = (JSON.parse(sh('/usr/sbin/ip', ['-n', NS, '-j', 'link', 'show', 'dev', DEV])) as Array<{ ifindex: number }>)[0].ifindex;
  t.deepEqual(
    JSON.parse(ours.stdout),
    theirs.map((q) => ({ ...q, ifindex: index })),
  );
  const here = synplug(['show', 'qdisc', '--dev', DEV, '--json']);
  t.is(here.code, 2, 'the device exists only in the namespace');
});

test('show link and addr --netns PATH (a /run/netns file) list what ip -n lists', (t) => {
  const link = synplug(['show', 'link', '--dev', DEV, '--netns', `/run/netns/${NS}`, '--json']);
  t.is(link.code, 0, link.stderr);
  const ipLink = JSON.parse(sh('/usr/sbin/ip', ['-n', NS, '-j', 'link', 'show', 'dev', DEV]));
  t.deepEqual(
    (JSON.parse(link.stdout) as Array<{ ifname: string; ifindex: number }>).map((l) => [l.ifname, l.ifindex]),
    (ipLink as Array<{ ifname: string; ifindex: number }>).map((l) => [l.ifname, l.ifindex]),
  );
  const addr = synplug(['show', 'addr', '--dev', DEV, '--netns', `/run/netns/${NS}`, '--json']);
  t.is(addr.code, 0, addr.stderr);
  t.regex(addr.stdout, /169\.254\.81\.1/);
});

test('setup --netns refuses on this kernel naming the missing modules and leaves the namespace as it was', (t) => {
  const before = sh('/usr/sbin/tc', ['-n', NS, 'qdisc', 'show']);
  const r = synplug(['setup', '--netns', NS, '--dev', DEV, '--addr', '169.254.81.2', '--state-dir', join(STATE_ROOT, 'a')]);
  t.is(r.code, 5, r.stderr);
  t.regex(r.stderr, /sch_prio/);
  t.regex(r.stderr, /sch_plug/);
  t.is(sh('/usr/sbin/tc', ['-n', NS, 'qdisc', 'show']), before);
  t.notRegex(sh('/usr/sbin/ip', ['-n', NS, 'addr', 'show', 'dev', DEV]), /169\.254\.81\.2/);
});

test("without --state-dir, a namespace's records are read from /run/synplug/netns/<the namespace's cookie>, by name or by path", (t) => {
  // SO_NETNS_COOKIE (71) of a socket made in the namespace, read by python3
  const cookie = sh('/usr/sbin/ip', [
    'netns',
    'exec',
    NS,
    '/usr/bin/python3',
    '-c',
    "import socket, struct; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); print(struct.unpack('Q', s.getsockopt(socket.SOL_SOCKET, 71, 8))[0])",
  ]).trim();
  const dir = `/run/synplug/netns/${cookie}`;
  const hadRoot = existsSync('/run/synplug');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  writeFileSync(join(dir, 'setup.json'), 'not json', { mode: 0o600 });
  try {
    for (const ns of [NS, `/run/netns/${NS}`]) {
      const r = synplug(['check', '--netns', ns], { SYNPLUG_STATE_DIR: undefined });
      t.not(r.code, 0, ns);
      t.true(r.stderr.includes(join(dir, 'setup.json')), `${ns}: ${r.stderr}`);
    }
  } finally {
    rmSync(hadRoot ? dir : '/run/synplug', { recursive: true, force: true });
  }
});

test('a namespace that does not exist, a file that is not one, and an empty one are refused with exit 2', (t) => {
  for (const [ns, re] of [
    ['sp-nosuch-ns', /does not exist/],
    ['/etc/passwd', /not a network namespace/],
    ['/proc/self/ns/uts', /not a network namespace/],
    ['', /empty/],
  ] as const) {
    const r = synplug(['show', 'qdisc', '--netns', ns]);
    t.is(r.code, 2, `${ns}: ${r.stderr}`);
    t.regex(r.stderr, re, ns);
    const j = synplug(['check', '--netns', ns, '--json']);
    t.is(j.code, 2, `${ns} check: ${j.stderr}`);
    t.is(JSON.parse(j.stdout).category, 'usage');
  }
});

test('--netns is in the help of every command that talks to the kernel', (t) => {
  for (const cmd of ['setup', 'check', 'protect', 'plug', 'release', 'status', 'teardown', 'show']) {
    const r = synplug([cmd, '--help']);
    t.is(r.code, 0);
    t.regex(r.stdout, /--netns <name\|path>/, cmd);
  }
});
