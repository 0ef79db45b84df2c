/**
 * The guard's CLI on this machine's kernel (6.18: nf_tables, but no sch_prio,
 * sch_plug or cls_fw): setup fails naming the missing modules and leaves
 * nothing behind; bad input is refused with exit 2 and nothing changed; a
 * non-root user gets exit 4. The success paths run in the VM (test/kernel).
 *
 * Runs as root in the live suite's network namespace, on its own ifb device
 * and address, so that other live test files (which use lo) cannot interfere.
 */
import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, existsSync, writeFileSync, rmSync, readFileSync, mkdirSync, chmodSync, chownSync, symlinkSync, lstatSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cookieHere } from '../helpers/netns-cookie.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'dist/bundle/synplug.cjs'); // package.json bin
const DEV = 'spguard0';
const ADDR = '169.254.77.7';
const TABLE = 'synplug'; // the local hold's table (no --table flag: a table of another name is never synplug's)
const STATE = mkdtempSync(join(tmpdir(), 'synplug-guardcli-'));

function synplug(args: string[], opts: { uid?: number; gid?: number } = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, SYNPLUG_STATE_DIR: STATE }, ...opts, timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const helpCodes = new Map<string, string[]>();
/** The exit codes `synplug CMD --help` lists (cached). */
function exitCodesOf(cmd: string): string[] {
  if (!helpCodes.has(cmd)) {
    const r = synplug([cmd, '--help']);
    const section = r.stdout.slice(r.stdout.indexOf('\nExit codes:\n') + 1).split('\n\n')[0];
    helpCodes.set(cmd, r.code === 0 && r.stdout.includes('\nExit codes:\n') ? [...section.matchAll(/^ {2}(\d+|other) /gm)].map((m) => m[1]) : []);
  }
  return helpCodes.get(cmd)!;
}

function sh(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8' });
}

/** Everything observable that setup could have touched, as the reference tools see it. */
function snapshot() {
  return {
    qdiscs: JSON.parse(sh('tc', ['-j', 'qdisc', 'show', 'dev', DEV])).map((q: { kind: string; handle: string }) => `${q.kind} ${q.handle}`),
    addrs: JSON.parse(sh('ip', ['-j', 'addr', 'show', 'dev', DEV]))[0].addr_info.map((a: { local: string }) => a.local),
    table: spawnSync('/usr/sbin/nft', ['list', 'table', 'ip', TABLE]).status === 0,
  };
}

test.before(() => {
  if (!existsSync(BIN)) throw new Error(`${BIN} missing: run npm run build first`);
  sh('ip', ['link', 'add', DEV, 'type', 'ifb']);
  sh('ip', ['link', 'set', DEV, 'up']);
});
test.after.always(() => {
  spawnSync('ip', ['link', 'del', DEV]);
  spawnSync('/usr/sbin/nft', ['delete', 'table', 'ip', TABLE]);
});

test.serial('setup on a kernel without sch_prio/sch_plug: exit 5, names both modules, leaves nothing behind', (t) => {
  const before = snapshot();
  t.false(before.table);
  t.false(before.addrs.includes(ADDR));
  const r = synplug(['setup', '--dev', DEV, '--addr', ADDR]);
  t.is(r.code, 5, r.stderr);
  t.regex(r.stderr, /sch_prio \(qdisc prio\)/);
  t.regex(r.stderr, /sch_plug \(qdisc plug\)/);
  t.regex(r.stderr, /nothing was changed/);
  // cls_fw is missing too, or (no /lib/modules here) could not be checked: either way the one
  // modprobe suggested loads it as well, and an unchecked module says why it was not checked
  t.regex(r.stderr, /\(modprobe sch_prio sch_plug cls_fw\)/);
  if (/could not be checked/.test(r.stderr))
    t.regex(r.stderr, /cls_fw \(filter fw\) could not be checked: it is not loaded .*modules\.builtin.* cannot be read/);
  t.deepEqual(snapshot(), before);
});

test.serial('setup --json on failure: a JSON error object with the exit code on stdout', (t) => {
  const r = synplug(['setup', '--dev', DEV, '--addr', ADDR, '--json']);
  t.is(r.code, 5);
  const j = JSON.parse(r.stdout);
  t.is(j.exitCode, 5);
  t.regex(j.error, /sch_prio/);
});

test.serial('a setup record naming a device that is gone: exit 2, the message says the name came from that record', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'synplug-guardcli-stale-'));
  writeFileSync(
    join(dir, 'setup.json'),
    JSON.stringify({
      version: 2,
      netns: cookieHere(),
      holds: { local: { mode: 'local', dev: 'spgone0', addr: ADDR, mark: 1, limit: 65536, table: TABLE, createdAt: 1 } },
    }),
  );
  for (const cmd of ['status', 'check', 'release']) {
    const r = spawnSync(process.execPath, [BIN, cmd], { encoding: 'utf8', env: { ...process.env, SYNPLUG_STATE_DIR: dir }, timeout: 60_000 });
    t.is(r.status, 2, `${cmd}: ${r.stderr}`);
    t.true(r.stderr.includes(`device 'spgone0' not found: it is the device setup recorded in ${join(dir, 'setup.json')}`), `${cmd}: ${r.stderr}`);
  }
  // an explicit --dev is not blamed on the record
  const r = spawnSync(process.execPath, [BIN, 'status', '--dev', 'spgone1'], {
    encoding: 'utf8',
    env: { ...process.env, SYNPLUG_STATE_DIR: dir },
    timeout: 60_000,
  });
  t.is(r.status, 2);
  t.regex(r.stderr, /device 'spgone1' not found \(give an existing device with --dev\)/);
  rmSync(dir, { recursive: true, force: true });
});

test.serial('check on a machine never set up: exit 1, every piece missing', (t) => {
  const r = synplug(['check', '--dev', DEV, '--addr', ADDR, '--json']);
  t.is(r.code, 1, r.stderr);
  const j = JSON.parse(r.stdout);
  t.is(j.state, 'absent');
  t.true(j.pieces.length >= 4, 'the pieces of the local hold this kernel supports (the queue hold here)');
  t.true(j.pieces.every((p: { status: string }) => p.status === 'missing'));
});

test.serial('protect when not set up: exit 8, the command is NOT run', (t) => {
  const marker = join(STATE, 'ran');
  const r = synplug(['protect', '--dev', DEV, '--addr', ADDR, '--', 'touch', marker]);
  t.is(r.code, 8, r.stderr);
  t.regex(r.stderr, /not set up.*NOT run/s);
  t.false(existsSync(marker));
});

const bad: Array<[string, string[], RegExp]> = [
  ['an unknown option', ['setup', '--dev', DEV, '--bogus'], /unknown option '--bogus'/],
  ['a bad address', ['setup', '--dev', DEV, '--addr', '169.254.1'], /bad address '169\.254\.1'/],
  ['a mark of 0', ['setup', '--dev', DEV, '--addr', ADDR, '--mark', '0'], /bad mark/],
  ['a missing device', ['setup', '--dev', 'nosuchdev0', '--addr', ADDR], /device 'nosuchdev0' not found/],
  ['--max-hold 0', ['protect', '--dev', DEV, '--max-hold', '0', '--', 'true'], /--max-hold: must be more than 0/],
  ['a --max-hold that is not a duration', ['protect', '--dev', DEV, '--max-hold', 'soon', '--', 'true'], /not a duration/],
  ['an empty command', ['protect', '--dev', DEV, '--'], /no command given/],
  ['an empty command name', ['protect', '--dev', DEV, '--', '', 'arg'], /protect: the command after -- is empty/],
  ['a bad --wait-listen', ['protect', '--dev', DEV, '--wait-listen', 'localhost:x', '--', 'true'], /--wait-listen/],
  ['an unknown command', ['frobnicate'], /unknown command 'frobnicate'/],
  ['an empty --max-hold', ['plug', '--dev', DEV, '--max-hold', ''], /--max-hold: '' is not a duration/],
  ['a --max-hold under 10 ms', ['protect', '--dev', DEV, '--max-hold', '5ms', '--', 'true'], /at least 10 ms/],
  ['an IPv4-mapped IPv6 address', ['setup', '--dev', DEV, '--addr', '::ffff:1.2.3.4'], /IPv4-mapped/],
  ['a multicast address', ['setup', '--dev', DEV, '--addr', '224.0.0.1'], /multicast/],
  ['a loopback address', ['setup', '--dev', DEV, '--addr', '127.0.0.1'], /bad address '127\.0\.0\.1': a loopback address/],
  ['another 127/8 address', ['setup', '--dev', DEV, '--addr', '127.0.0.2'], /a loopback address/],
  ['the IPv6 loopback', ['setup', '--dev', DEV, '--addr', '::1'], /bad address '::1': a loopback address/],
  ['a plug limit under a few SYNs', ['setup', '--dev', DEV, '--addr', ADDR, '--limit', '10'], /bad limit '10'/],
  ['no command at all', [], /Usage: synplug/],
  ['show of an unknown object', ['show', 'widgets'], /unknown object 'widgets'/],
  ['--stats for links', ['show', 'link', '--stats'], /show link: --stats is not supported/],
  ['--stats for addresses', ['show', 'addr', '--dev', DEV, '-s'], /show addr: --stats is not supported/],
  ['--dev for the ruleset', ['show', 'ruleset', '--dev', DEV], /show ruleset: --dev does not apply/],
  ['a missing option value', ['plug', '--dev'], /option '--dev <name>' argument missing/],
  ['a missing argument', ['show'], /missing required argument 'object'/],
  ['an extra argument', ['teardown', 'now', '--dev', DEV], /too many arguments for 'teardown'/],
  ['help of an unknown command', ['help', 'nosuch'], /unknown command 'nosuch'/],
];
for (const [what, args, msg] of bad) {
  test.serial(`bad input, ${what}: exit 2, a clear message, nothing changed`, (t) => {
    const before = snapshot();
    const r = synplug(args);
    t.is(r.code, 2, r.stderr);
    t.regex(r.stderr, msg);
    t.regex(r.stderr, /^synplug: /m);
    t.deepEqual(snapshot(), before);
    const cmd = args[0];
    if (cmd !== undefined && cmd !== 'frobnicate') t.true(exitCodesOf(cmd).includes('2'), `${cmd} --help lists 2`);
  });
}

for (const [what, args, msg] of bad.filter(([, a]) => a.length > 0)) {
  test.serial(`bad input with --json, ${what}: exit 2, the error object on stdout, the text on stderr`, (t) => {
    const r = synplug([args[0], '--json', ...args.slice(1)]); // right after the command: not an option's value, not after --
    t.is(r.code, 2, r.stderr);
    t.regex(r.stderr, msg);
    const lines = r.stdout.trim().split('\n');
    t.is(lines.length, 1, r.stdout);
    const j = JSON.parse(lines[0]);
    t.is(j.exitCode, 2);
    t.regex(j.error, msg);
  });
}

test.serial('release when nothing is set up: nothing is held, exit 0, and nothing is written (no state directory made)', (t) => {
  const dir = join(mkdtempSync(join(tmpdir(), 'synplug-guardcli-release-')), 'state');
  const r = spawnSync(process.execPath, [BIN, 'release', '--dev', DEV, '--addr', ADDR, '--state-dir', dir], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  t.is(r.status, 0, r.stderr);
  t.regex(r.stdout, /no hold on spguard0: nothing is held/);
  t.false(existsSync(dir), 'release wrote nothing');
  const again = synplug(['release', '--dev', DEV, '--addr', ADDR]);
  t.is(again.code, 0, again.stderr);
  t.false(existsSync(join(STATE, 'plug.json')), 'nor in an existing state directory without a record');
});

/** Run a command with `--state-dir dir` (before a `--`), without SYNPLUG_STATE_DIR. */
function withState(dir: string, args: string[]) {
  const env = { ...process.env };
  delete env.SYNPLUG_STATE_DIR;
  const end = args.indexOf('--');
  const argv = end < 0 ? [...args, '--state-dir', dir] : [...args.slice(0, end), '--state-dir', dir, ...args.slice(end)];
  const r = spawnSync(process.execPath, [BIN, ...argv], { encoding: 'utf8', env, timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const GUARD_COMMANDS = ['setup', 'check', 'plug', 'release', 'status', 'teardown'] as const;
const devArgs = ['--dev', DEV, '--addr', ADDR];

for (const file of ['setup.json', 'plug.json'] as const) {
  test.serial(`a damaged ${file} is an error for every command, naming the file and what to do; nothing deletes it`, (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'synplug-guardcli-damaged-'));
    const damaged = '{"version": 2, "holds": {"local": ';
    if (file === 'plug.json')
      writeFileSync(
        join(dir, 'setup.json'),
        JSON.stringify({
          version: 2,
          netns: cookieHere(),
          holds: { local: { mode: 'local', dev: DEV, addr: ADDR, mark: 1, limit: 65536, table: TABLE, addedAddress: false, prefixlen: 32, createdAt: 1 } },
        }),
      );
    writeFileSync(join(dir, file), damaged);
    const marker = join(dir, 'ran');
    for (const args of [...GUARD_COMMANDS.map((c) => [c, ...devArgs]), ['protect', ...devArgs, '--', 'touch', marker]]) {
      const res = withState(dir, args);
      t.is(res.code, 6, `${args[0]}: ${res.stderr}`);
      t.true(res.stderr.includes(`${join(dir, file)} is not valid JSON`), `${args[0]}: ${res.stderr}`);
      t.regex(res.stderr, /remove it/, args[0]);
      t.is(readFileSync(join(dir, file), 'utf8'), damaged, `${args[0]} left ${file} as it was`);
    }
    t.false(existsSync(marker), 'protect did not run the command');
    // release still releases (it never needs the record) and says so before the error
    t.regex(withState(dir, ['release', ...devArgs]).stderr, /no hold on spguard0: nothing was held; but /);
    rmSync(dir, { recursive: true, force: true });
  });
}

test.serial('check --state-dir /etc/passwd is an error (exit 6), not "not set up" (exit 1)', (t) => {
  const r = withState('/etc/passwd', ['check', ...devArgs]);
  t.is(r.code, 6, r.stderr);
  t.regex(r.stderr, /state directory \/etc\/passwd is not a directory/);
  t.notRegex(r.stdout + r.stderr, /not set up/);
});

test.serial('an empty SYNPLUG_STATE_DIR, or an empty --state-dir, is a usage error naming it', (t) => {
  const r = spawnSync(process.execPath, [BIN, 'check', ...devArgs], { encoding: 'utf8', env: { ...process.env, SYNPLUG_STATE_DIR: '' }, timeout: 60_000 });
  t.is(r.status, 2, r.stderr);
  t.regex(r.stderr, /the environment variable SYNPLUG_STATE_DIR is set but empty/);
  const e = withState('', ['status', ...devArgs]);
  t.is(e.code, 2, e.stderr);
  t.regex(e.stderr, /--state-dir is empty/);
});

test.serial('--state-dir is in the --help of every guard command', (t) => {
  for (const cmd of [...GUARD_COMMANDS, 'protect']) t.regex(synplug([cmd, '--help']).stdout, /--state-dir <dir>/, cmd);
});

test.serial("a world-writable sticky state directory holding planted links: refused, the links' targets untouched (the reported attack)", (t) => {
  const root = mkdtempSync(join(tmpdir(), 'synplug-guardcli-shared-'));
  const shared = join(root, 'shared');
  mkdirSync(shared);
  chmodSync(shared, 0o1777);
  const target = join(root, 'precious');
  writeFileSync(target, 'precious\n');
  for (let pid = 2; pid < 400; pid++) symlinkSync(target, join(shared, `.plug.json.${pid}.tmp`));
  symlinkSync(target, join(shared, 'plug.json'));
  for (const cmd of ['release', 'check', 'status', 'teardown', 'plug', 'setup']) {
    const r = withState(shared, [cmd, ...devArgs]);
    t.is(r.code, 6, `${cmd}: ${r.stderr}`);
    t.regex(r.stderr, /is writable by everyone \(mode 1777\).*refuses it/, cmd);
  }
  t.is(readFileSync(target, 'utf8'), 'precious\n');
  t.true(lstatSync(join(shared, 'plug.json')).isSymbolicLink(), 'nothing replaced either');
  // the same directory owned by another user and not writable by others: refused too
  chmodSync(shared, 0o755);
  chownSync(shared, 65534, 65534);
  const r = withState(shared, ['release', ...devArgs]);
  t.is(r.code, 6, r.stderr);
  t.regex(r.stderr, /is owned by uid 65534/);
  t.is(readFileSync(target, 'utf8'), 'precious\n');
  rmSync(root, { recursive: true, force: true });
});

test.serial('show of a device that does not exist: exit 2 like every other command', (t) => {
  const r = synplug(['show', 'qdisc', '--dev', 'nosuchdev0']);
  t.is(r.code, 2, r.stderr);
  t.regex(r.stderr, /device 'nosuchdev0' not found/);
  t.true(exitCodesOf('show').includes('2'));
});

test.serial('not root: exit 4, names CAP_NET_ADMIN', (t) => {
  const r = synplug(['setup', '--dev', DEV, '--addr', ADDR], { uid: 65534, gid: 65534 });
  t.is(r.code, 4, r.stderr);
  t.regex(r.stderr, /^synplug: setup needs CAP_NET_ADMIN: run it as root/m);
  t.true(exitCodesOf('setup').includes('4'));
});

test.serial('not root: check and show ruleset (nftables needs CAP_NET_ADMIN even to read) exit 4, which their help lists', (t) => {
  for (const args of [
    ['check', '--dev', DEV, '--addr', ADDR],
    ['show', 'ruleset'],
    ['status', '--dev', DEV, '--addr', ADDR],
  ]) {
    const r = synplug(args, { uid: 65534, gid: 65534 });
    t.is(r.code, 4, `${args[0]}: ${r.stderr}`);
    t.regex(r.stderr, new RegExp(`^synplug: ${args.slice(0, args[0] === 'show' ? 2 : 1).join(' ')} needs CAP_NET_ADMIN: run it as root`, 'm'));
    t.true(exitCodesOf(args[0]).includes('4'), args[0]);
  }
});

test.serial('--help of every command documents its exit codes', (t) => {
  const top = synplug(['--help']);
  t.is(top.code, 0);
  const topCodes = [...top.stdout.slice(top.stdout.indexOf('Exit codes:')).matchAll(/^ {2}(\d+|other) /gm)].map((m) => m[1]);
  for (const code of ['0', '1', '2', '3', '4', '5', '7', '8', '125', '126', '127', '130', 'other']) t.true(topCodes.includes(code), code);
  // every command listed by --help, not a chosen few
  const commands = [...top.stdout.slice(top.stdout.indexOf('Commands:')).matchAll(/^ {2}([a-z]+)\b/gm)].map((m) => m[1]);
  t.true(commands.length >= 10, commands.join(' '));
  for (const cmd of commands) {
    const codes = exitCodesOf(cmd);
    t.true(codes.length >= 2, cmd);
    t.is(codes[0], '0', cmd);
    for (const c of codes) t.true(topCodes.includes(c), `${cmd} lists ${c}`);
  }
  // the codes returned above are listed: a missing device is 2 (never 3) for show too
  t.regex(synplug(['show', '--help']).stdout, /^ {2}2 {4}.*a device that does not exist/m);
  t.notRegex(synplug(['show', '--help']).stdout, /^ {2}3 .*no such device/m);
});
