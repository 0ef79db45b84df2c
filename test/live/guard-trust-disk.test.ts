/**
 * Disk errors writing or removing a record (issue #19, defect 11;
 * deliverable 9): exit 1 with the disk's reason, as `--help` documents
 * ("failure, e.g. the state files cannot be removed"), not exit 6 "unsafe or
 * damaged"; and teardown reports only what it did (nothing here: none of the
 * recorded pieces is in the kernel), never "removed the setup".
 *
 * The state directory is on a tmpfs of its own, in a private mount
 * namespace (`unshare --mount`): full (ENOSPC) or read-only (EROFS).
 */
import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cookieHere } from '../helpers/netns-cookie.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'dist/bundle/synplug.cjs');
const IP = '/usr/sbin/ip';
const VETH = 'sptdisk0';

const local = {
  mode: 'local',
  dev: 'lo',
  addr: '169.254.78.1',
  mark: 1,
  limit: 65536,
  table: `synplug_sptdisk${process.pid}`,
  addedAddress: false,
  prefixlen: 32,
  createdAt: 1,
};
const inbound = {
  mode: 'inbound',
  dev: VETH,
  createdAt: 1,
  ifb: 'spifb9999',
  ports: [80],
  addrs: [],
  classifier: 'u32',
  limit: 1048576,
  families: ['ip'],
  addedClsact: false,
};
const record = JSON.stringify({ version: 2, netns: cookieHere(), holds: { local, [`inbound:${VETH}`]: inbound } });

test.before(() => {
  execFileSync(IP, ['link', 'add', VETH, 'type', 'veth', 'peer', 'name', `${VETH}p`]);
});
test.after.always(() => {
  spawnSync(IP, ['link', 'del', VETH]);
});

/**
 * Run `synplug ARGS` with its state directory on a fresh 64 KiB tmpfs
 * holding `record`, after `prepare` (shell) ran on the mount.
 */
function onTmpfs(prepare: (mount: string) => string, args: string[]) {
  const m = mkdtempSync(join(tmpdir(), 'synplug-disk-'));
  try {
    const script = `set -e
mount -t tmpfs -o size=64k,mode=0700 tmpfs '${m}'
mkdir -m 0700 '${m}/state'
printf '%s' '${record}' > '${m}/state/setup.json'
${prepare(m)}
set +e
'${process.execPath}' '${BIN}' "$@"
echo "exit=$?"`;
    const r = spawnSync('unshare', ['--mount', '--propagation', 'private', '/bin/sh', '-c', script, 'sh', ...args, '--state-dir', `${m}/state`], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    const exit = Number(/exit=(\d+)\s*$/.exec(r.stdout)?.[1]);
    return { exit, stdout: r.stdout.replace(/exit=\d+\s*$/, ''), stderr: r.stderr, dir: `${m}/state` };
  } finally {
    rmSync(m, { recursive: true, force: true });
  }
}

test.serial('ENOSPC writing setup.json (teardown --local of two holds): exit 1 naming ENOSPC, never "unsafe or damaged"; it says it removed nothing', (t) => {
  const r = onTmpfs((m) => `dd if=/dev/zero of='${m}/fill' bs=1k 2>/dev/null || true`, ['teardown', '--local', '--json']);
  t.is(r.exit, 1, r.stderr);
  const j = JSON.parse(r.stdout);
  t.is(j.category, 'failure');
  t.is(j.exitCode, 1);
  t.regex(
    j.error,
    /^removed nothing from the kernel \(nothing of the setup was there\); but cannot write .*setup\.json: ENOSPC \(no space left on the device\)/,
  );
  t.notRegex(j.error, /unsafe|damaged|removed the setup/);
});

test.serial('EROFS removing the state files (teardown): exit 1 naming EROFS; it says it removed nothing', (t) => {
  const r = onTmpfs((m) => `mount -o remount,ro '${m}'`, ['teardown', '--json']);
  t.is(r.exit, 1, r.stderr);
  const j = JSON.parse(r.stdout);
  t.is(j.category, 'failure');
  t.regex(
    j.error,
    /^removed nothing from the kernel \(nothing of the setup was there\); but cannot remove the state files in .*: cannot remove .*setup\.json: EROFS/,
  );
  t.notRegex(j.error, /removed the setup/);
});
