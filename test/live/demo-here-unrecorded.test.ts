/**
 * `synplug demo --here` where a hold is already set up but the demo's state
 * directory does not record it (a setup with another `--state-dir`, or
 * `setup --netns NS` from another namespace, whose record is in
 * /run/synplug/netns/<cookie>): the demo refuses (exit 8), naming what it
 * found and where the record probably is, and changes nothing; the hold and
 * its address stay, as the reference tools print them, and `check` with the
 * setup's state directory still finds it complete. With that state directory
 * the demo uses the hold and leaves it as it was.
 *
 * Each run happens in a network namespace of this file's own (`ip netns add`).
 */
import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { netnsSnapshot } from '../helpers/netns-snapshot.js';
import { cookieOf } from '../helpers/netns-cookie.js';
import { demoNetnsAround } from '../helpers/demo-netns.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'dist/bundle/synplug.cjs'); // package.json bin
const NS = `spdunrec${process.pid}`;
const IP = '/usr/sbin/ip';
const ADDR = '169.254.255.254';
/** the user's state directory (the setup's) and the demo's, which records nothing */
const USER_STATE = mkdtempSync(join(tmpdir(), 'synplug-demo-user-'));
const DEMO_STATE = mkdtempSync(join(tmpdir(), 'synplug-demo-other-'));

/** `synplug ARGS`, in the namespace (`ip netns exec`) or, with `host`, from here (the args then name the namespace). */
function synplug(args: string[], o: { host?: boolean } = {}) {
  const { SYNPLUG_STATE_DIR: _s, ...env } = process.env;
  const r = o.host
    ? spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env, timeout: 120_000 })
    : spawnSync(IP, ['netns', 'exec', NS, process.execPath, BIN, ...args], { encoding: 'utf8', env, timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The hold's address on lo, as ip prints it. */
function hasAddress(): boolean {
  const addrs = JSON.parse(execFileSync(IP, ['-n', NS, '-j', 'addr', 'show', 'dev', 'lo'], { encoding: 'utf8' })) as Array<{
    addr_info: Array<{ local: string }>;
  }>;
  return addrs.some((l) => l.addr_info.some((a) => a.local === ADDR));
}

demoNetnsAround(test, NS, BIN, [USER_STATE, DEMO_STATE]);

test.serial('a hold set up with another --state-dir: demo --here refuses (exit 8) naming it, and the hold and its address stay', (t) => {
  const s = synplug(['setup', '--state-dir', USER_STATE]);
  t.is(s.code, 0, s.stderr);
  t.true(hasAddress());
  try {
    const before = netnsSnapshot(NS);
    const r = synplug(['demo', '--here', '--state-dir', DEMO_STATE, '--restarts', '1', '--seconds', '1']);
    t.is(r.code, 8, r.stderr);
    t.true(r.stderr.includes(`address ${ADDR} on lo`), r.stderr);
    t.regex(r.stderr, /nftables table inet synplug_queue/);
    t.true(r.stderr.includes(`the state directory ${DEMO_STATE} does not record it`), r.stderr);
    t.regex(r.stderr, /nothing was changed/);
    t.is(r.stdout, '', 'no table: the demo did not run');
    t.deepEqual(netnsSnapshot(NS), before, 'nothing was changed');
    t.deepEqual(readdirSync(DEMO_STATE), [], "no record in the demo's state directory");
    const c = synplug(['check', '--state-dir', USER_STATE]);
    t.is(c.code, 0, c.stdout + c.stderr);
    // --json: the refusal's category
    const j = synplug(['demo', '--here', '--state-dir', DEMO_STATE, '--json']);
    t.is(j.code, 8, j.stderr);
    t.is((JSON.parse(j.stdout) as { category: string }).category, 'not-set-up');
  } finally {
    synplug(['teardown', '--state-dir', USER_STATE]);
  }
  t.false(hasAddress());
});

test.serial(
  "a hold set up from outside with --netns: demo --here in the namespace names the namespace's state directory; with it, the demo uses the hold and leaves it",
  (t) => {
    const dir = `/run/synplug/netns/${cookieOf(NS)}`;
    const hadRoot = existsSync('/run/synplug');
    try {
      const s = synplug(['setup', '--netns', NS], { host: true });
      t.is(s.code, 0, s.stderr);
      t.true(existsSync(join(dir, 'setup.json')));
      const before = netnsSnapshot(NS);
      const r = synplug(['demo', '--here', '--state-dir', DEMO_STATE, '--restarts', '1', '--seconds', '1']);
      t.is(r.code, 8, r.stderr);
      t.true(r.stderr.includes(`probably ${dir}`), r.stderr);
      t.true(r.stderr.includes(`'synplug demo --here --state-dir ${dir}'`), r.stderr);
      t.deepEqual(netnsSnapshot(NS), before, 'nothing was changed');
      // with the setup's state directory: the hold is used and left as it was
      const ok = synplug(['demo', '--here', '--state-dir', dir, '--restarts', '1', '--seconds', '1', '--json']);
      t.is(ok.code, 0, ok.stderr);
      const res = JSON.parse(ok.stdout) as { setup: { by: string; removed: string[] } };
      t.is(res.setup.by, 'already');
      t.deepEqual(res.setup.removed, []);
      t.true(hasAddress(), 'the address stays');
      const c = synplug(['check', '--netns', NS], { host: true });
      t.is(c.code, 0, c.stdout + c.stderr);
    } finally {
      synplug(['teardown', '--netns', NS], { host: true });
      rmSync(hadRoot ? dir : '/run/synplug', { recursive: true, force: true });
    }
    t.false(hasAddress());
  },
);
