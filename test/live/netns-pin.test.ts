/**
 * A namespace path is resolved ONCE per call (src/netlink/netns.ts pinNetns,
 * src/guard/call-netns.ts, the CLI's --netns): the cookie check and every
 * socket go through one descriptor, and the watchdog and the queue holder
 * inherit that descriptor, never the path. The review's race: a symbolic
 * link that nobody owns, swapped between /run/netns/A and /run/netns/B while
 * root's `teardown --netns LINK --state-dir A's-records` runs, made teardown
 * check A's cookie and then remove B's table and address. Another user's
 * link is now refused at once (exit 2, nothing done); the race is run with a
 * link of root's (whose owner may still change it, as a /proc/PID whose
 * process exits may come to name another process's namespace).
 */
import test from 'ava';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readlinkSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as guard from '../../src/guard/index.js';
import { defaultNetns, netnsCookie, netnsForChild, setDefaultNetns } from '../../src/netlink/netns.js';
import { cookieOf } from '../helpers/netns-cookie.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'dist/bundle/synplug.cjs');
const IP = '/usr/sbin/ip';
const NFT = '/usr/sbin/nft';
const A = `sp-pinA-${process.pid}`;
const B = `sp-pinB-${process.pid}`;
const NOBODY = 65534;

const sh = (cmd: string, args: string[]): string => execFileSync(cmd, args, { encoding: 'utf8' });

let base = '';
/** nobody's directory, with nobody's link in it */
let nobodyDir = '';
let nobodyLink = '';
/** root's link, in root's directory */
let link = '';

test.before(() => {
  for (const ns of [A, B]) {
    sh(IP, ['netns', 'add', ns]);
    sh(IP, ['-n', ns, 'link', 'set', 'lo', 'up']);
  }
  base = mkdtempSync(join(tmpdir(), 'synplug-pin-'));
  chmodSync(base, 0o755); // nobody reaches its directory in it
  nobodyDir = join(base, 'nob');
  mkdirSync(nobodyDir);
  chownSync(nobodyDir, NOBODY, NOBODY);
  nobodyLink = join(nobodyDir, 'l');
  symlinkSync(`/run/netns/${A}`, nobodyLink);
  spawnSync('chown', ['-h', `${NOBODY}:${NOBODY}`, nobodyLink]);
  link = join(base, 'l');
  symlinkSync(`/run/netns/${A}`, link);
});
test.after.always(() => {
  setDefaultNetns(undefined);
  for (const ns of [A, B]) spawnSync(IP, ['netns', 'del', ns]);
  if (base) rmSync(base, { recursive: true, force: true });
});

/** Point the link at a namespace (a new link renamed over it, as its owner can). */
function pointAt(ns: string): void {
  const tmp = `${link}.tmp`;
  rmSync(tmp, { force: true });
  symlinkSync(`/run/netns/${ns}`, tmp);
  renameSync(tmp, link);
}

test.serial('a namespace given as a path is opened once: a link changed afterwards moves neither the sockets nor a child', async (t) => {
  const [cookieA, cookieB] = [cookieOf(A), cookieOf(B)];
  t.not(cookieA, cookieB);
  pointAt(A);
  setDefaultNetns(link);
  try {
    t.is(defaultNetns(), link);
    pointAt(B);
    t.is(netnsCookie(defaultNetns()), cookieA, "the process's sockets stay in A, where the link pointed when it was given");
    // a child (as the watchdog and the holder are started) inherits the descriptor
    const ns = netnsForChild(3)!;
    t.deepEqual(ns.env, { SYNPLUG_NETNS: '/proc/self/fd/3', SYNPLUG_NETNS_NAME: link }, 'the descriptor, and the name given (for messages)');
    const child = spawnSync(
      process.execPath,
      ['--import=tsx', '-e', "import('./src/netlink/netns.ts').then((m) => process.stdout.write(String(m.netnsCookie(m.defaultNetns()))))"],
      { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...ns.env }, stdio: ['ignore', 'pipe', 'inherit', ns.fd] },
    );
    t.is(child.stdout, cookieA, "the child's sockets are in A too");
  } finally {
    setDefaultNetns(undefined);
    pointAt(A);
  }
  // a guard call's netns option: the same, for the call
  const s = await guard.status({ netns: link, stateDir: join(base, 'none') });
  t.is(s.state, 'absent', 'nothing is set up there');
  pointAt(B);
  t.is(netnsCookie(link), cookieB, 'unpinned after the call: the path is read again by the next call');
});

function synplug(args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The queue hold's table and address in a namespace, as nft and ip list them. */
function holdOf(ns: string): { table: boolean; addr: boolean } {
  const tables = sh(IP, ['netns', 'exec', ns, NFT, 'list', 'tables']);
  const addrs = sh(IP, ['-n', ns, '-o', 'addr', 'show', 'dev', 'lo']);
  return { table: /table inet synplug_queue\b/.test(tables), addr: /169\.254\.255\.254\/32/.test(addrs) };
}

test.serial(
  "regression: teardown --netns through a link swapped between two namespaces removed the other namespace's hold; now it acts only where it checked",
  async (t) => {
    t.timeout(5 * 60_000);
    const sA = join(base, 'sA');
    const sB = join(base, 'sB');
    t.is(synplug(['setup', '--via', 'queue', '--netns', A, '--state-dir', sA]).code, 0);
    t.is(synplug(['setup', '--via', 'queue', '--netns', B, '--state-dir', sB]).code, 0);
    t.deepEqual(holdOf(B), { table: true, addr: true });
    // the link's owner swaps it between A and B, bounded (20 s at most)
    const swapper: ChildProcess = spawn(
      '/usr/bin/python3',
      [
        '-c',
        `import os, time\nend = time.time() + 20\ni = 0\nwhile time.time() < end:\n    t = ${JSON.stringify(link)} + '.s'\n    os.symlink('/run/netns/' + (${JSON.stringify(A)} if i % 2 else ${JSON.stringify(B)}), t)\n    os.rename(t, ${JSON.stringify(link)})\n    i += 1\n`,
      ],
      { stdio: 'ignore' },
    );
    try {
      // the swapper runs: the link has pointed at both
      const targets = new Set<string>();
      for (let i = 0; i < 2000 && targets.size < 2; i++) {
        targets.add(readlinkSync(link));
        await new Promise((r) => setTimeout(r, 2));
      }
      t.is(targets.size, 2, 'the link is being swapped');
      let removed = false;
      const codes: number[] = [];
      for (let i = 0; i < 8 && !removed; i++) {
        const r = synplug(['teardown', '--netns', link, '--state-dir', sA]);
        codes.push(r.code ?? -1);
        // checked in A and acting in A (exit 0), or checked in B and refused (exit 6); never A's record acting in B
        t.true(r.code === 0 || r.code === 6, `${r.code}: ${r.stdout}${r.stderr}`);
        t.deepEqual(holdOf(B), { table: true, addr: true }, `B's hold is untouched after try ${i + 1}: ${r.stdout}${r.stderr}`);
        removed = r.code === 0;
      }
      t.log(`teardown statuses: ${codes.join(' ')}`);
      if (removed) t.deepEqual(holdOf(A), { table: false, addr: false }, "the teardown that passed removed A's hold");
    } finally {
      swapper.kill();
      synplug(['teardown', '--netns', A, '--state-dir', sA]);
      synplug(['teardown', '--netns', B, '--state-dir', sB]);
    }
  },
);

test.serial("--netns through another user's link (or in another user's directory) is refused at once (exit 2): B's hold and A's record stay", (t) => {
  const sA = join(base, 'sA2');
  t.is(synplug(['setup', '--via', 'queue', '--netns', A, '--state-dir', sA]).code, 0);
  try {
    const r = synplug(['teardown', '--netns', nobodyLink, '--state-dir', sA]);
    t.is(r.code, 2, r.stderr);
    t.true(
      r.stderr.startsWith(
        `synplug: --netns ${nobodyLink}: ${nobodyDir} is owned by uid ${NOBODY} (neither root nor this user, uid 0): its owner could point it at another namespace, so synplug refuses it`,
      ),
      r.stderr,
    );
    t.deepEqual(holdOf(A), { table: true, addr: true }, "A's hold is untouched");
    t.true(existsSync(join(sA, 'setup.json')), "A's record stays");
  } finally {
    synplug(['teardown', '--netns', A, '--state-dir', sA]);
  }
});
