/**
 * `npm run bench:faults`: the SIGKILL campaign of issue #19 (deliverable
 * 12) on the queue hold, this kernel (bench/faults-lib.ts says what a run
 * does and how it is judged). Prints one line per run and the counts: runs
 * by target, and how many left the queue bound, lost the held SYN, or left
 * the next command an unclean state.
 *
 * Run: `npm run build && npm run bench:faults -- [--runs 100] [--seed 19] [--json FILE]`
 * (as root; scripts/in-netns.sh gives it a network namespace, and the
 * campaign makes one of its own inside). Exit 0 when nothing was left, 1 otherwise.
 *
 * @module
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { killCampaign } from './faults-lib.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '100' }, seed: { type: 'string', default: '19' }, json: { type: 'string' } } });
const runs = Number(values.runs);
const seed = Number(values.seed);
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(seed)) {
  process.stderr.write('usage: bench/faults.ts [--runs N] [--seed N] [--json FILE]\n');
  process.exit(2);
}
const result = await killCampaign(runs, seed, (o, i) => {
  const bad = [o.leftBound && 'LEFT BOUND', o.synLost && 'SYN LOST', o.notClean && 'NOT CLEAN'].filter(Boolean).join(' ');
  const stale = o.staleRecord ? ' (plug.json stale: the next command recovers it)' : '';
  process.stdout.write(
    `run ${String(i + 1).padStart(3)}: kill ${o.target.padEnd(8)} at ${o.moment.padEnd(10)} +${String(o.delayMs).padStart(3)} ms: protect ${o.protectCode ?? 'killed'}${o.watchdogFound ? '' : ', no watchdog yet'}${o.holderFound ? '' : ', no holder yet'}; ${bad || 'clean'}${stale}${o.detail ? ` (${o.detail})` : ''}\n`,
  );
});
process.stdout.write(
  `\n${result.runs} runs (protect killed ${result.byTarget.protect}, watchdog ${result.byTarget.watchdog}, holder ${result.byTarget.holder}, protect and watchdog ${result.byTarget.both}, all three ${result.byTarget.all}; ` +
    `a running watchdog killed ${result.watchdogsKilled}, a running holder ${result.holdersKilled}): ` +
    `queue left bound ${result.leftBound}, held SYN lost ${result.synLost}, next command not clean ${result.notClean}; ` +
    `plug.json left saying buffering for the next command's recovery ${result.staleRecords}\n`,
);
if (values.json) writeFileSync(values.json, JSON.stringify({ seed, ...result }, null, 2));
process.exit(result.leftBound + result.synLost + result.notClean === 0 ? 0 : 1);
