/**
 * The text of `synplug setup --dry-run`: the plan of {@link planSetup}, step
 * by step, what it means for other traffic, and what would be recorded.
 *
 * @module
 */
import type { SetupPlan } from '../guard/setup-plan.js';

/**
 * `setup --dry-run`'s text.
 * @param p the plan
 */
export function formatSetupPlan(p: SetupPlan): string {
  const width = Math.max(...p.changes.map((c) => c.action.length), 0);
  const r = p.record;
  return [
    ...(p.chose ? [p.chose] : []),
    `synplug setup --dry-run: the hold ${p.hold} (via ${p.via}) on ${p.dev}; nothing was changed`,
    ...(p.changed
      ? ['setup would, in this order:', ...p.changes.map((c) => `  ${c.action.padEnd(width)}  ${c.what}`)]
      : ['it is set up as asked: setup would change nothing in the kernel']),
    ...(p.affects.length ? ['what that affects:', ...p.affects.map((a) => `  ${a}`)] : []),
    ...(p.armed.length ? ['added only around each hold (phase one of protect and plug), removed after its release:', ...p.armed.map((a) => `  ${a}`)] : []),
    `it would record the hold '${r.hold}' in ${r.files.join(' and ')}${r.createsStateDir ? ` (creating ${r.stateDir}, mode 0700)` : ''}${r.drops ? `, dropping the entry '${r.drops}'` : ''}`,
    ...(p.unverified.length ? [`not verified before changing anything (setup finds out by trying): ${p.unverified.join(', ')}`] : []),
  ].join('\n');
}
