/**
 * Live (this kernel, the queue hold: the one this kernel can build): setup,
 * plug, release and teardown killed with SIGKILL at every step leave nothing
 * held, and the next command recovers (issue #19, deliverable 12, beyond
 * protect's window; protect and its watchdog are killed by bench:faults and
 * its sample in guard-faults-kill.test.ts).
 *
 * A step is one netlink request: strace delivers SIGKILL to the CLI at its
 * k-th sendto/sendmsg (`-e inject=...:signal=KILL:when=k`), for every k
 * until a run completes without being killed. After each kill, judged from
 * the kernel (the reference tools: nft, ip, /proc/net/netfilter/nfnetlink_queue)
 * and the next commands' results:
 * - nothing holds: no process is bound to the queue, and a SYN to the
 *   hold's address reaches a server there (a plug killed after its hold
 *   began holds until its max-hold, by design: the wait for that is bounded);
 * - the next command recovers: setup completes (check exit 0), teardown
 *   leaves nothing of synplug's (no table, no address, no state file).
 *
 * In a namespace of this file's own (sp-kst-PID).
 */
import test from 'ava';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inboundNetns, IP, CLI } from '../helpers/inbound-netns.js';

const N = inboundNetns('sp-kst', 'sp-kst0', 'sp-kst1');
const ADDR = '169.254.45.1';
const PORT = 39410;
const QUEUE = 4200;
const STRACE = '/usr/bin/strace';

/** The CLI in the namespace; with `killAt`, SIGKILLed at its k-th netlink send. */
function synplug(sd: string, args: string[], killAt?: number): { code: number | null; signal: string | null; stdout: string; stderr: string } {
  const cli = [process.execPath, CLI, args[0], '--state-dir', sd, '--netns', N.ns, ...args.slice(1)];
  const argv =
    killAt === undefined
      ? cli
      : [STRACE, '-qq', '-o', '/dev/null', '-e', 'trace=sendto,sendmsg', '-e', `inject=sendto,sendmsg:signal=KILL:when=${killAt}`, ...cli];
  const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', timeout: 60_000 });
  // strace exits as the tracee did: a tracee killed by SIGKILL makes strace kill itself with it
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

const inNs = (...argv: string[]) => execFileSync(IP, ['netns', 'exec', N.ns, ...argv], { encoding: 'utf8' });
/** Whether a process is bound to the queue (the kernel's own list). */
const bound = () =>
  inNs('cat', '/proc/net/netfilter/nfnetlink_queue')
    .split('\n')
    .some((l) => Number(l.trim().split(/\s+/)[0]) === QUEUE);
const tables = () => inNs('/usr/sbin/nft', 'list', 'tables');
const hasAddr = () => N.sh(IP, '-j', 'addr', 'show', 'dev', 'lo').includes(`"${ADDR}"`);

/** A connect from this namespace to ADDR:PORT, a server listening there: whether it connected (python3, bounded). */
function connects(): Promise<boolean> {
  const py = `
import socket, sys
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(('${ADDR}', ${PORT})); srv.listen(8)
c = socket.socket(); c.settimeout(8)
try:
    c.connect(('${ADDR}', ${PORT})); print('connected')
except Exception as e:
    print('failed', e)
`;
  return new Promise((resolve) => {
    execFile(IP, ['netns', 'exec', N.ns, 'python3', '-c', py], { encoding: 'utf8', timeout: 30_000 }, (_e, stdout) => resolve(stdout.trim() === 'connected'));
  });
}

/** What of synplug's is left: the queue table, the address, state files (empty: nothing). */
function left(sd: string): string[] {
  return [
    ...(/synplug_queue/.test(tables()) ? ['table inet synplug_queue'] : []),
    ...(hasAddr() ? [`address ${ADDR}`] : []),
    ...(existsSync(sd) ? readdirSync(sd).map((f) => `state file ${f}`) : []),
  ];
}

test.before(() => N.create());
test.after.always(() => N.destroy());

/**
 * Run `args` killed at its k-th send for k = 1, 2... until a run is not
 * killed; `prepare` makes the state before each run, `judge` checks after it.
 */
async function everyStep(
  t: import('ava').ExecutionContext,
  args: string[],
  prepare: (sd: string) => void,
  judge: (sd: string, k: number) => Promise<void>,
): Promise<number> {
  for (let k = 1; k <= 80; k++) {
    const sd = join(mkdtempSync(join(tmpdir(), 'synplug-kst-')), 'state');
    try {
      prepare(sd);
      const r = synplug(sd, args, k);
      if (r.signal !== 'SIGKILL' && r.code !== 137) {
        t.is(r.code, 0, `${args[0]} run to its end at k=${k}: ${r.stderr}`);
        return k - 1;
      }
      if (args[0] !== 'plug') t.false(bound(), `${args[0]} killed at send ${k}: nothing bound to the queue`);
      await judge(sd, k);
    } finally {
      synplug(sd, ['teardown']);
      rmSync(join(sd, '..'), { recursive: true, force: true });
    }
  }
  t.fail(`${args[0]} was still killed at send 80`);
  return 80;
}

const SETUP = ['setup', '--via', 'queue', '--addr', ADDR];

test.serial('setup killed at every step: nothing holds (a SYN gets through); setup again completes, check says so; teardown leaves nothing', async (t) => {
  t.timeout(10 * 60_000);
  const steps = await everyStep(
    t,
    SETUP,
    () => {},
    async (sd, k) => {
      if (hasAddr()) t.true(await connects(), `setup killed at send ${k}: a SYN to ${ADDR} is not held`);
      const again = synplug(sd, SETUP);
      t.is(again.code, 0, `setup after a kill at send ${k}: ${again.stderr}`);
      t.is(synplug(sd, ['check']).code, 0, `check after setup again (kill at send ${k})`);
      t.true(await connects(), `set up, nobody holding (kill at send ${k}): a SYN gets through`);
      t.is(synplug(sd, ['teardown']).code, 0);
      t.deepEqual(left(sd), [], `teardown after a kill at send ${k} leaves nothing`);
    },
  );
  t.true(steps >= 3, `setup makes several requests (${steps})`);
  t.log(`setup: killed at each of ${steps} sends`);
});

test.serial('teardown killed at every step: nothing holds; teardown again leaves nothing of synplug', async (t) => {
  t.timeout(10 * 60_000);
  const steps = await everyStep(
    t,
    ['teardown'],
    (sd) => t.is(synplug(sd, SETUP).code, 0),
    async (sd, k) => {
      if (hasAddr()) t.true(await connects(), `teardown killed at send ${k}: a SYN to ${ADDR} is not held`);
      const again = synplug(sd, ['teardown']);
      t.is(again.code, 0, `teardown after a kill at send ${k}: ${again.stderr}`);
      t.deepEqual(left(sd), [], `teardown again after a kill at send ${k} leaves nothing`);
    },
  );
  t.true(steps >= 3);
  t.log(`teardown: killed at each of ${steps} sends`);
});

/** Wait until `cond` holds, at most `limitMs` (an event, bounded). */
async function until(cond: () => boolean, limitMs: number): Promise<boolean> {
  const end = Date.now() + limitMs;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return cond();
}

test.serial('release killed at every step: nothing holds; check is clean; release then succeeds', async (t) => {
  t.timeout(10 * 60_000);
  const steps = await everyStep(
    t,
    ['release'],
    (sd) => t.is(synplug(sd, SETUP).code, 0),
    async (sd, k) => {
      t.true(await connects(), `release killed at send ${k}: a SYN gets through`);
      t.is(synplug(sd, ['check']).code, 0, `check after release killed at send ${k}`);
      t.is(synplug(sd, ['release']).code, 0, `release after release killed at send ${k}`);
      t.false(bound());
    },
  );
  t.log(`release: killed at each of ${steps} sends`);
});

test.serial(
  'plug (--max-hold 2s) killed at every step: a hold it started ends by its max-hold; a SYN then gets through; check is clean; release succeeds',
  async (t) => {
    t.timeout(10 * 60_000);
    const steps = await everyStep(
      t,
      ['plug', '--max-hold', '2s'],
      (sd) => t.is(synplug(sd, SETUP).code, 0),
      async (sd, k) => {
        // a plug killed after its hold began holds until its max-hold, by design; never longer
        t.true(await until(() => !bound(), 30_000), `plug killed at send ${k}: the hold ends by its max-hold`);
        t.true(await connects(), `plug killed at send ${k}: a SYN gets through`);
        const c = synplug(sd, ['check']);
        t.is(c.code, 0, `check after plug killed at send ${k}: ${c.stdout}${c.stderr}`);
        t.is(synplug(sd, ['release']).code, 0, `release after plug killed at send ${k}`);
        t.false(bound());
      },
    );
    t.log(`plug: killed at each of ${steps} sends`);
  },
);
