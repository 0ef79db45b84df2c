/**
 * The queue holder's failures (src/guard/leases-holder.ts, src/guard/holder-log.ts):
 * the holder runs in this process (test/helpers/holder-in-process.ts) on the
 * kernel double (test/helpers/fake-kernel.ts), where one SYN arrives at the
 * queue as it is bound. A refused release verdict is sent again; refused
 * twice, the SYNs the unbind drops are counted in the release's report and
 * the failure is kept in the state directory's holder log, which `status`
 * names (the CLI's line: formatHolderFailure). The log itself: capped,
 * never written through a link, lines that are not failures skipped.
 */
import test from 'ava';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as guard from '../../src/guard/index.js';
import { HOLDER_LOG, HOLDER_LOG_CAP, lastHolderFailure, logHolderFailure } from '../../src/guard/holder-log.js';
import { formatHolderFailure } from '../../src/cli/format-guard.js';
import { NFQNL_MSG_VERDICT_BATCH } from '../../src/netlink/nfqueue.js';
import { FakeKernel } from '../helpers/fake-kernel.js';
import { InProcessHolders } from '../helpers/holder-in-process.js';
import { InProcessWatchdogs } from '../helpers/watchdog-in-process.js';

/** The double's name of a batch verdict request (`nf:` and its message type). */
const VERDICT = `nf:${NFQNL_MSG_VERDICT_BATCH}`;

function stateDir(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'synplug-holderlog-')), 'state');
  mkdirSync(dir, { mode: 0o700 });
  return dir;
}

/** A queue hold set up on a kernel double, its holder and watchdog in this process, plugged; run `f`, then undo it all. */
async function plugged(f: (w: { kernel: FakeKernel; holders: InProcessHolders; stateDir: string }) => Promise<void>): Promise<void> {
  const kernel = new FakeKernel();
  kernel.synsPerBind = 1;
  const holders = new InProcessHolders();
  const watchdogs = new InProcessWatchdogs();
  const undo = [kernel.install(), holders.install(), watchdogs.install()];
  const dir = join(mkdtempSync(join(tmpdir(), 'synplug-holderfail-')), 'state');
  try {
    await guard.setup({ stateDir: dir, via: 'queue', addr: '169.254.46.1' });
    await guard.plug({ stateDir: dir, maxHoldMs: 600_000 });
    // the SYN arrives at the bound queue (the double: as it is bound)
    for (let i = 0; i < 500 && kernel.queuedPackets() === 0; i++) await new Promise((r) => setTimeout(r, 5));
    await f({ kernel, holders, stateDir: dir });
  } finally {
    watchdogs.terminate();
    holders.terminate();
    await watchdogs.settle();
    await holders.settle();
    for (const u of undo) u();
    rmSync(join(dir, '..'), { recursive: true, force: true });
  }
}

test.serial(
  'regression: a release verdict refused once dropped the SYN held (the unbind), said only on a stderr nobody reads; now it is sent again',
  async (t) => {
    await plugged(async ({ kernel, holders, stateDir: dir }) => {
      t.is(kernel.queuedPackets(), 1, 'a SYN is held');
      let refused = 0;
      kernel.refuseWhen = (what) => what === VERDICT && refused++ === 0;
      const r = await guard.release({ stateDir: dir });
      t.true(await holders.settle());
      t.is(refused, 2, 'the verdict was refused, then sent again');
      t.deepEqual(kernel.verdicts, { given: 1, droppedUnanswered: 0 }, 'the SYN was let go by the second verdict');
      t.is(r.report?.dropped, 0);
      t.deepEqual(kernel.state.queues, [], 'the queue is unbound');
      t.deepEqual(holders.said, [], 'nothing went wrong in the end');
      t.deepEqual(lastHolderFailure(dir), { lastHolderFailure: null });
    });
  },
);

test.serial(
  "a release verdict refused twice: the report counts the SYN the unbind dropped, the release warns why, the holder log says why, status's line names it",
  async (t) => {
    await plugged(async ({ kernel, holders, stateDir: dir }) => {
      kernel.refuseWhen = (what) => what === VERDICT;
      const r = await guard.release({ stateDir: dir });
      t.true(await holders.settle());
      t.deepEqual(kernel.verdicts, { given: 0, droppedUnanswered: 1 }, 'the unbind dropped the SYN');
      t.deepEqual(kernel.state.queues, [], 'nothing is left bound');
      t.is(r.report?.dropped, 1, 'the release reports it dropped');
      t.deepEqual(
        r.warnings,
        [
          'queue 4200: the kernel refused the release verdict twice (cannot release netfilter queue 4200: NFQNL_MSG_VERDICT_BATCH failed: ENOMEM): the SYNs held were dropped; their clients connect when they retransmit (1 s or more)',
        ],
        'and warns why (the CLI prints it on stderr)',
      );
      const last = lastHolderFailure(dir);
      const f = last.lastHolderFailure;
      t.truthy(f);
      t.is(f?.queueNum, 4200);
      t.is(f?.pid, process.pid);
      t.regex(
        f?.message ?? '',
        /^queue 4200: the release verdict failed twice \(cannot release netfilter queue 4200: NFQNL_MSG_VERDICT_BATCH failed: ENOMEM\): the unbind dropped the 1 SYN\(s\) held/,
      );
      t.is(last.holderLog, join(dir, HOLDER_LOG));
      t.is(statSync(join(dir, HOLDER_LOG)).mode & 0o777, 0o600);
      t.is(
        formatHolderFailure(last),
        `queue holder: last failure ${f?.at} (queue 4200, pid ${process.pid}): ${f?.message} (all of them: ${join(dir, HOLDER_LOG)})`,
      );
      // and the library's status reads it too, through the same function the CLI calls
      t.deepEqual(guard.lastHolderFailure(dir), last);
    });
  },
);

test('the holder log: one JSON line per failure, the newest kept under the cap; no line: no status line', (t) => {
  const dir = stateDir();
  t.deepEqual(lastHolderFailure(dir), { lastHolderFailure: null });
  t.is(formatHolderFailure(lastHolderFailure(dir)), undefined);
  const long = 'x'.repeat(900);
  for (let i = 0; i < 200; i++)
    t.is(
      logHolderFailure(dir, { queueNum: 7, pid: 1, message: `failure ${i} ${long}`, at: new Date(Date.UTC(2026, 11, 5, 0, 0, i)).toISOString() }),
      undefined,
    );
  const text = readFileSync(join(dir, HOLDER_LOG), 'utf8');
  t.true(text.length <= HOLDER_LOG_CAP, `${text.length} bytes`);
  const lines = text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
  t.true(lines.length > 10, 'older lines are kept too');
  t.regex(lines.at(-1).message, /^failure 199 /);
  t.deepEqual(
    lines.map((l) => Number(/^failure (\d+)/.exec(l.message)?.[1])),
    lines.map((_, i) => 200 - lines.length + i),
    'the newest, in order',
  );
  t.regex(lastHolderFailure(dir).lastHolderFailure?.message ?? '', /^failure 199 /);
});

test('the holder log is never written through a link, and a line that is not a failure is skipped', (t) => {
  const dir = stateDir();
  const elsewhere = join(dir, '..', 'elsewhere');
  writeFileSync(elsewhere, 'untouched\n');
  symlinkSync(elsewhere, join(dir, HOLDER_LOG));
  const why = logHolderFailure(dir, { queueNum: 7, pid: 1, message: 'm' });
  t.regex(why ?? '', /ELOOP/);
  t.is(readFileSync(elsewhere, 'utf8'), 'untouched\n');
  t.regex(lastHolderFailure(dir).holderLogError ?? '', /symbolic link/);
  t.regex(formatHolderFailure(lastHolderFailure(dir)) ?? '', /^queue holder log: unreadable: .*symbolic link/);

  const dir2 = stateDir();
  writeFileSync(join(dir2, HOLDER_LOG), `${JSON.stringify({ at: '2026-12-05T00:00:00.000Z', queueNum: 3, pid: 9, message: 'real' })}\nnot json\n{"at":"x"}\n`);
  t.is(lastHolderFailure(dir2).lastHolderFailure?.message, 'real');
});
