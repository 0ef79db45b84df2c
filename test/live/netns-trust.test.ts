/**
 * Namespaces as a boundary (issue #19, defects 2 and 8; deliverables 2 and 7):
 *
 * - a namespace's default state directory is keyed by its cookie
 *   (SO_NETNS_COOKIE, read here independently with python3's getsockopt in
 *   `ip netns exec`), so a namespace that gets the inode number of a deleted
 *   one never finds the deleted one's records: teardown leaves what its
 *   owner added;
 * - `--netns` and `SYNPLUG_NETNS` naming a FIFO, a directory, a missing file
 *   or another namespace type are exit 2 with a sentence, at once (the FIFO
 *   no longer blocks the open), never a stack trace.
 */
import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cookieOf } from '../helpers/netns-cookie.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'dist/bundle/synplug.cjs');
const IP = '/usr/sbin/ip';
const A = `sp-trA-${process.pid}`;
const B = `sp-trB-${process.pid}`;
const ADDR = '169.254.77.1';

function synplug(args: string[], env: NodeJS.ProcessEnv = {}) {
  const merged: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete merged[k];
  // the timeout only keeps a regression from hanging the suite; the assertions are on the status and the text
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: merged, timeout: 60_000 });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}
const sh = (cmd: string, args: string[]): string => execFileSync(cmd, args, { encoding: 'utf8' });

const localRecord = (table: string) =>
  JSON.stringify({
    version: 2,
    holds: { local: { mode: 'local', dev: 'lo', addr: ADDR, mark: 1, limit: 65536, table, addedAddress: true, prefixlen: 32, createdAt: Date.now() } },
  });

const made: string[] = [];
test.after.always(() => {
  for (const ns of [A, B]) spawnSync(IP, ['netns', 'del', ns]);
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

test.serial(
  "a namespace that gets a deleted namespace's inode number does not find its records: teardown --netns leaves the new owner's address",
  async (t) => {
    sh(IP, ['netns', 'add', A]);
    const inoA = statSync(`/run/netns/${A}`).ino;
    const cookieA = cookieOf(A);
    // A's records, where this synplug keeps them (by cookie) and where an older one kept them (by inode)
    for (const key of [cookieA, String(inoA)]) {
      const dir = `/run/synplug/netns/${key}`;
      if (!existsSync(dir)) made.push(dir);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      writeFileSync(join(dir, 'setup.json'), localRecord(`sp-trust-${process.pid}`), { mode: 0o600 });
    }
    sh(IP, ['netns', 'del', A]);
    // A new namespace with A's inode number (the kernel frees it when A is gone, asynchronously: try a bounded number of times)
    let reused = false;
    for (let i = 0; i < 200 && !reused; i++) {
      sh(IP, ['netns', 'add', B]);
      reused = statSync(`/run/netns/${B}`).ino === inoA;
      if (!reused) {
        sh(IP, ['netns', 'del', B]);
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    if (!reused) {
      t.fail(`no new namespace got the inode number ${inoA} back in 200 tries: the reuse cannot be reproduced here`);
      return;
    }
    t.not(cookieOf(B), cookieA, 'the cookie differs where the inode is the same');
    // B's owner adds the same address
    sh(IP, ['-n', B, 'link', 'set', 'lo', 'up']);
    sh(IP, ['-n', B, 'addr', 'add', `${ADDR}/32`, 'dev', 'lo']);
    const r = synplug(['teardown', '--netns', B, '--json'], { SYNPLUG_STATE_DIR: undefined, SYNPLUG_NETNS: undefined });
    t.is(r.code, 0, r.stderr);
    t.deepEqual(JSON.parse(r.stdout).removed, []);
    t.regex(sh(IP, ['-n', B, 'addr', 'show', 'dev', 'lo']), new RegExp(`inet ${ADDR.replaceAll('.', '\\.')}/32`), "B's address is still there");
    // and B's own records are under B's cookie
    const s = synplug(['status', '--netns', B, '--json'], { SYNPLUG_STATE_DIR: undefined });
    t.is(s.code, 0, s.stderr);
    t.false(existsSync(`/run/synplug/netns/${cookieOf(B)}/setup.json`));
  },
);

test.serial('--netns and SYNPLUG_NETNS: a FIFO, a directory, a missing file, another namespace type: exit 2 at once with a sentence, no stack trace', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'synplug-nsfifo-'));
  made.push(dir);
  const fifo = join(dir, 'fifo');
  t.is(spawnSync('mkfifo', [fifo]).status, 0);
  const cases: Array<[string, RegExp]> = [
    [fifo, /is not a network namespace \(.*fifo is a FIFO, not a namespace file\)/],
    [dir, /is not a network namespace \(.* is a directory, not a namespace file\)/],
    ['/nonexistent', /network namespace '\/nonexistent' does not exist \(no such file\)/],
    ['/proc/self/ns/uts', /is not a network namespace \(.*\/ns\/uts is a UTS namespace\)/],
    ['/etc/passwd', /is not a network namespace \(\/etc\/passwd is not a namespace file: NS_GET_NSTYPE failed with ENOTTY\)/],
  ];
  for (const [spec, re] of cases) {
    for (const cmd of [['status'], ['check'], ['teardown'], ['show', 'qdisc']]) {
      const flag = synplug([...cmd, '--netns', spec, '--json']);
      t.is(flag.signal, null, `${spec} ${cmd}: not killed by the guard timeout`);
      t.is(flag.code, 2, `${spec} ${cmd}: ${flag.stderr}`);
      t.regex(flag.stderr, re);
      t.is(JSON.parse(flag.stdout).category, 'usage');
      const env = synplug([...cmd, '--json'], { SYNPLUG_NETNS: spec, SYNPLUG_STATE_DIR: undefined });
      t.is(env.signal, null);
      t.is(env.code, 2, `SYNPLUG_NETNS=${spec} ${cmd}: ${env.stderr}`);
      t.regex(env.stderr, new RegExp(`the environment variable SYNPLUG_NETNS: .*${re.source}`));
      t.notRegex(env.stderr, /\n\s+at /, 'no stack trace');
    }
  }
  const empty = synplug(['status'], { SYNPLUG_NETNS: '' });
  t.is(empty.code, 2);
  t.regex(empty.stderr, /the environment variable SYNPLUG_NETNS is set but empty/);
});

test.serial('--netns and SYNPLUG_NETNS are in the help, with the default state directory by cookie', (t) => {
  const r = synplug(['status', '--help']);
  t.regex(r.stdout.replace(/\s+/g, ' '), /--netns <name\|path> .*SYNPLUG_NETNS/);
  t.regex(r.stdout.replace(/\s+/g, ' '), /--state-dir <dir> .*SYNPLUG_STATE_DIR/);
  t.regex(r.stdout, /docs\/cli\.md/, 'the help points to the rest');
  // the default state directory by cookie: in docs/cli.md, where the help points (one line per option in --help)
  const docs = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
  t.regex(docs, /\/run\/synplug\/netns\/<cookie>/);
  t.regex(docs, /SO_NETNS_COOKIE/);
});
