/**
 * `npm run bench:faults`: the SIGKILL campaign of issue #19 (deliverable
 * 12), bench/faults-lib.ts says what a run does and how it is judged.
 * Prints one line per run and the counts: runs by target, and how many left
 * the hold in place, lost the held SYN, or left the next command an unclean
 * state.
 *
 * - `npm run bench:faults -- [--runs 100] [--seed 19] [--json FILE]`: the
 *   queue hold, on this kernel (as root; scripts/in-netns.sh gives it a
 *   network namespace, and the campaign makes one of its own inside).
 * - `npm run bench:faults -- --vm [--runs 30] [--seed 19] [--json FILE]`:
 *   the local plug hold, in the qemu VM of scripts/vm/run.sh (its Debian
 *   kernel has sch_prio, sch_plug and cls_fw; SYNPLUG_KERNEL picks it),
 *   under the VM lock (/tmp/synplug-vm.lock), which it takes itself. Inside
 *   the VM it runs again with `--hold plug`.
 *
 * Run `npm run build` first. Exit 0 when nothing was left, 1 otherwise
 * (with --vm: the VM's status; 124/125 when it timed out or did not boot).
 *
 * @module
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { killCampaign, type FaultHold } from './faults-lib.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string' },
    seed: { type: 'string', default: '19' },
    json: { type: 'string' },
    hold: { type: 'string', default: 'queue' },
    vm: { type: 'boolean', default: false },
  },
});
const hold = (values.vm ? 'plug' : values.hold) as FaultHold;
const runs = Number(values.runs ?? (hold === 'plug' ? '30' : '100'));
const seed = Number(values.seed);
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(seed) || (hold !== 'queue' && hold !== 'plug')) {
  process.stderr.write('usage: bench/faults.ts [--vm | --hold queue|plug] [--runs N] [--seed N] [--json FILE]\n');
  process.exit(2);
}
if (values.vm && process.env.SYNPLUG_IN_VM !== '1') {
  // The same script inside the VM, on the plug hold; one VM run, under the lock every VM user takes.
  const repo = fileURLToPath(new URL('..', import.meta.url));
  const inner = [process.execPath, '--import=tsx', 'bench/faults.ts', '--hold', 'plug', '--runs', String(runs), '--seed', String(seed)];
  if (values.json) inner.push('--json', values.json);
  const r = spawnSync('flock', ['/tmp/synplug-vm.lock', 'bash', 'scripts/vm/run.sh', '--', ...inner], {
    cwd: repo,
    stdio: 'inherit',
    env: { ...process.env, SYNPLUG_VM_TIMEOUT: process.env.SYNPLUG_VM_TIMEOUT ?? String(600 + runs * 60) },
  });
  process.exit(r.status ?? 1);
}
const result = await killCampaign(
  runs,
  seed,
  (o, i) => {
    const bad = [o.leftBound && 'LEFT IN PLACE', o.synLost && 'SYN LOST', o.notClean && 'NOT CLEAN'].filter(Boolean).join(' ');
    const stale = o.recoveredByNext
      ? ' (the held SYN was released by the next command)'
      : o.staleRecord
        ? ' (plug.json stale: the next command recovered it)'
        : '';
    process.stdout.write(
      `run ${String(i + 1).padStart(3)}: kill ${o.target.padEnd(8)} at ${o.moment.padEnd(10)} +${String(o.delayMs).padStart(3)} ms: protect ${o.protectCode ?? 'killed'}${o.watchdogFound ? '' : ', no watchdog yet'}${hold === 'queue' && !o.holderFound ? ', no holder yet' : ''}; ${bad || 'clean'}${stale}${o.detail ? ` (${o.detail})` : ''}\n`,
    );
  },
  hold,
);
const targets = hold === 'queue' ? `holder ${result.byTarget.holder}, ` : '';
process.stdout.write(
  `\n${result.runs} runs on the ${hold} hold (protect killed ${result.byTarget.protect}, watchdog ${result.byTarget.watchdog}, ${targets}protect and watchdog ${result.byTarget.both}` +
    `${hold === 'queue' ? `, all three ${result.byTarget.all}` : ''}; a running watchdog killed ${result.watchdogsKilled}${hold === 'queue' ? `, a running holder ${result.holdersKilled}` : ''}): ` +
    `hold left in place ${result.leftBound}, held SYN lost ${result.synLost}, next command not clean ${result.notClean}; ` +
    `plug.json left saying buffering for the next command's recovery ${result.staleRecords}, held SYN released by the next command ${result.recoveredByNext}\n`,
);
if (values.json) writeFileSync(values.json, JSON.stringify({ seed, ...result }, null, 2));
process.exit(result.leftBound + result.synLost + result.notClean === 0 ? 0 : 1);
