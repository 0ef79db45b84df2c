/**
 * The text of `synplug setup --dry-run`: the plan of {@link planSetup}, step
 * by step, what it means for other traffic, and what would be recorded.
 *
 * @module
 */
import type { SetupPlan } from '../guard/setup-plan.js';
import { holdWords } from '../guard/modes/index.js';

/**
 * `setup --dry-run`'s text.
 * @param p the plan
 */
export function formatSetupPlan(p: SetupPlan): string {
  const r = p.record;
  // A step in setup's words names its kind ('add address ...', 'nftables: add table ...'); one that does not gets it after it.
  const step = (c: SetupPlan['changes'][number]): string => (new RegExp(`(^|[ :;])${c.action} `).test(c.what) ? c.what : `${c.what} (${c.action})`);
  return [
    ...(p.chose ? [p.chose] : []),
    `synplug setup --dry-run: the ${holdWords({ id: p.hold, dev: p.dev }).label} (${p.hold}); nothing was changed`,
    ...(p.wouldChange
      ? ['setup would, in this order:', ...p.changes.map((c) => `  ${step(c)}`)]
      : ['it is set up as asked: setup would change nothing in the kernel']),
    ...(p.affects.length ? ['what that affects:', ...p.affects.map((a) => `  ${a}`)] : []),
    ...(p.armed.length ? ['added only around each hold (phase one of protect and plug), removed after its release:', ...p.armed.map((a) => `  ${a}`)] : []),
    `it would record the hold '${r.hold}' in ${r.files.join(' and ')}${r.createsStateDir ? ` (creating ${r.stateDir}, mode 0700)` : ''}${r.drops ? `, dropping the entry '${r.drops}'` : ''}${r.lockFile ? `, and create its lock file ${r.lockFile}` : ''}`,
    ...(p.unverified.length ? [`not verified before changing anything (setup finds out by trying): ${p.unverified.join(', ')}`] : []),
  ].join('\n');
}
