/**
 * The queue holder's unix socket as a trust boundary (src/guard/leases-holder.ts,
 * src/guard/config.ts):
 * - a state directory whose `queue-N.sock` would not fit in sun_path (107
 *   bytes and the NUL) is refused before anything is set up or held: the kernel
 *   would cut the path short, and the socket would land outside the directory,
 *   where another user may listen;
 * - a client (plug, protect, release) talks only to a listener whose
 *   SO_PEERCRED uid is root or its own: another user's listener is refused and
 *   asked nothing;
 * - a holder that never answers a release is killed after the bound
 *   (releaseThroughHolder's `answerMs`), and only a process running the
 *   holder's entry point is.
 * The kernel is the double (test/helpers/fake-kernel.ts); the other user's
 * listener is a real process run as nobody.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import * as guard from '../../src/guard/index.js';
import { resolveConfig } from '../../src/guard/config.js';
import { holderSocketPath, prepareHolder, QUEUE_HOLDER_ARG, releaseThroughHolder, setQueueHolderStarter } from '../../src/guard/leases-holder.js';
import { openCheckedDir, StateDirSwappedError } from '../../src/guard/state-fs.js';
import { SynplugError, UsageError } from '../../src/netlink/errors.js';
import { FakeKernel } from '../helpers/fake-kernel.js';
import { InProcessHolders } from '../helpers/holder-in-process.js';

/** A directory whose path is exactly `len` bytes (created under a fresh one in the temporary directory). */
function dirOfLength(len: number): { dir: string; base: string } {
  const base = mkdtempSync(join(tmpdir(), 'synplug-sock-'));
  const dir = `${base}/${'y'.repeat(len - base.length - 1)}`;
  return { dir, base };
}

test.serial('regression: a state directory whose holder socket path is cut short by sun_path is refused before anything is set up', async (t) => {
  const kernel = new FakeKernel();
  const undo = kernel.install();
  const { dir, base } = dirOfLength(94); // queue-4200.sock makes 110 bytes: the socket landed as `…/que`
  try {
    const e = await t.throwsAsync(guard.setup({ stateDir: dir, via: 'queue', addr: '169.254.46.1' }), { instanceOf: UsageError });
    t.regex(e!.message, /is 94 bytes long: at most 90 .*queue-65535\.sock.*107 bytes/);
    t.false(existsSync(dir), 'the state directory was not created');
    t.deepEqual(kernel.state.tables, [], 'no table was added');
    t.throws(() => holderSocketPath(dir, 4200), { instanceOf: UsageError, message: /longer than a unix socket path can be \(107 bytes\)/ });
  } finally {
    undo();
    rmSync(base, { recursive: true, force: true });
  }
});

test('a state directory of 90 bytes is the longest taken: its holder socket for queue 65535 fits in 107 bytes', (t) => {
  const { dir, base } = dirOfLength(90);
  try {
    t.is(resolveConfig({ stateDir: dir }).stateDir, dir);
    t.is(Buffer.byteLength(holderSocketPath(dir, 65535)), 107);
    t.throws(() => resolveConfig({ stateDir: `${dir}z` }), { instanceOf: UsageError, message: /is 91 bytes long: at most 90/ });
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

/** A listener run as nobody that answers every line as a holder would ("ok"), and says what it got. */
async function nobodyListener(path: string): Promise<{ got: string[]; stop: () => void }> {
  const script = `const s=require('net').createServer(c=>{c.on('data',d=>{process.stdout.write('got '+d);c.write(JSON.stringify({ok:true,pid:1,released:0,dropped:0})+'\\n')})});s.listen(${JSON.stringify(path)},()=>process.stdout.write('ready\\n'))`;
  const child = spawn('/usr/bin/setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const got: string[] = [];
  const lines = createInterface({ input: child.stdout! });
  await new Promise<void>((resolve, reject) => {
    lines.on('line', (l) => (l === 'ready' ? resolve() : got.push(l)));
    child.once('exit', (code) => reject(new Error(`the listener exited (${code})`)));
  });
  return { got, stop: () => child.kill() };
}

test.serial("regression: a client trusted whatever listened at the holder's path; another user's listener is now refused and asked nothing", async (t) => {
  const base = mkdtempSync(join(tmpdir(), 'synplug-sockpeer-'));
  const theirs = join(base, 'theirs');
  mkdirSync(theirs);
  chmodSync(base, 0o755);
  chmodSync(theirs, 0o777);
  const stateDir = join(base, 'state');
  mkdirSync(stateDir, { mode: 0o700 });
  // nobody listens in its own place; the socket is then moved to the holder's path (as the cut-short path put it there)
  const fake = await nobodyListener(join(theirs, 'q.sock'));
  renameSync(join(theirs, 'q.sock'), holderSocketPath(stateDir, 4200));
  const holders = new InProcessHolders();
  const undo = holders.install();
  try {
    const r = await t.throwsAsync(releaseThroughHolder(stateDir, 4200), { instanceOf: SynplugError });
    t.is(r!.category, 'bad-state');
    t.regex(r!.message, /queue-4200\.sock is listened on by uid 65534 \(pid \d+\), neither root nor this user: it is not synplug's queue holder/);
    const p = await t.throwsAsync(prepareHolder({ stateDir, queueNum: 4200, maxlen: 64, dev: 'lo' }), { instanceOf: SynplugError });
    t.is(p!.category, 'bad-state');
    t.is(holders.started, 0, 'no holder was started beside it');
    await new Promise((res) => setTimeout(res, 100));
    t.deepEqual(fake.got, [], 'nothing was asked of it');
  } finally {
    undo();
    fake.stop();
    rmSync(base, { recursive: true, force: true });
  }
});

/** A listener at `path` that reads and never answers (a hung holder), its argv naming the holder's entry argument or not. */
async function silentListener(path: string, asHolder: boolean): Promise<{ pid: number; gone: Promise<string | null> }> {
  const script = `require('net').createServer(c=>{c.on('data',()=>{})}).listen(${JSON.stringify(path)},()=>process.stdout.write('ready\\n'))`;
  const child = spawn(process.execPath, ['-e', script, '--', ...(asHolder ? [QUEUE_HOLDER_ARG] : [])], { stdio: ['ignore', 'pipe', 'inherit'] });
  const gone = new Promise<string | null>((res) => child.once('exit', (_c, sig) => res(sig)));
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', () => resolve());
    child.once('exit', (code) => reject(new Error(`the listener exited (${code})`)));
  });
  return { pid: child.pid!, gone };
}

test.serial(
  'regression: a holder that never answers a release held on (protect waited 10 s, then called the hold lossless); now it is killed after answerMs, and the release says so',
  async (t) => {
    const stateDir = mkdtempSync(join(tmpdir(), 'synplug-hung-'));
    try {
      const hung = await silentListener(holderSocketPath(stateDir, 4201), true);
      const r = await releaseThroughHolder(stateDir, 4201, 300);
      t.is(await hung.gone, 'SIGKILL');
      t.is(r?.released, 0);
      t.regex(
        r?.killed ?? '',
        new RegExp(
          `^its holder process ${hung.pid} could not answer the release: it did not answer the release within 300 ms \\(hung\\)\\. It was killed so that nothing stays held: it held no SYN at that moment, and new SYNs pass$`,
        ),
      );
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  },
);

test.serial('a silent listener that is not a queue holder (its command is not the holder entry) is never killed: nothing is released through it', async (t) => {
  const stateDir = mkdtempSync(join(tmpdir(), 'synplug-hung-'));
  const other = await silentListener(holderSocketPath(stateDir, 4202), false);
  try {
    t.is(await releaseThroughHolder(stateDir, 4202, 200), undefined);
    t.true(existsSync(`/proc/${other.pid}`), 'it still runs');
  } finally {
    process.kill(other.pid, 'SIGKILL');
    rmSync(stateDir, { recursive: true, force: true });
  }
});

test.serial(
  'regression: a holder that could not listen because the state directory was swapped just before (issue 19): the refusal is the swap (bad-state, exit 6), not a failure to hold',
  async (t) => {
    const base = mkdtempSync(join(tmpdir(), 'synplug-sock-'));
    const stateDir = join(base, 'state');
    mkdirSync(stateDir, { mode: 0o700 });
    openCheckedDir(stateDir, false)?.close(); // pinned, as a protect's first open does
    let started = 0;
    // the holder process, pinned to the directory its starter pinned, refuses the path (what it says on its first line)
    setQueueHolderStarter(async () => {
      started++;
      return {
        error: `cannot listen on ${holderSocketPath(stateDir, 4200)}: state directory ${stateDir} is no longer the directory this process started with`,
      };
    });
    renameSync(stateDir, `${stateDir}.moved`);
    mkdirSync(stateDir, { mode: 0o700 });
    try {
      const e = await t.throwsAsync(prepareHolder({ stateDir, queueNum: 4200, maxlen: 64, dev: 'lo' }), { instanceOf: StateDirSwappedError });
      t.is(e!.category, 'bad-state');
      t.is(started, 1, 'not retried 20 times');
    } finally {
      setQueueHolderStarter(undefined);
      rmSync(base, { recursive: true, force: true });
    }
  },
);
