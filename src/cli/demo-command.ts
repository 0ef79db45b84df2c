/**
 * `synplug demo [--seconds N] [--restarts N] [--gap DURATION] [--inbound] [--json]`:
 * the technique shown on this machine (the engine is src/demo); `--inbound`
 * through the inbound hold, with the clients in a namespace of the demo's own. Prints a
 * table of both phases (text) or the engine's result as one object
 * (`--json`), and exits with the verdict's code.
 *
 * @module
 */
import { type Command, Option } from 'commander';
import { UsageError } from '../netlink/errors.js';
import { parseDuration } from '../guard/config.js';
import { holdModeFor } from '../guard/modes/index.js';
import type * as DemoModule from '../demo/index.js';
import { DEMO_LIMITS } from '../demo/options.js';
import { EXIT, exitCodesHelp } from './exit-codes.js';
import { givenStateDir, STATE_DIR_DEFAULT_HELP } from './guard-commands.js';
import { jsonOption, run } from './run.js';

/** The engine is loaded when the command runs: `--help` and other commands stay fast. */
const loadDemo = (): Promise<typeof DemoModule> => import('../demo/index.js');

/** The command's flags as commander hands them over (text). */
export interface DemoFlags {
  seconds?: string;
  restarts?: string;
  gap?: string;
  stateDir?: string;
  inbound?: boolean;
  here?: boolean;
  via?: string;
  json?: boolean;
}

/**
 * Turn the flags into the engine's options (the engine checks the bounds).
 * @returns seconds, restarts and gapMs, each only when given
 * @throws {UsageError} `--seconds` that is not a number, `--restarts` that is not a whole number, `--gap` that is not a duration from 1 ms to 60 s
 */
export function demoOptionsFromFlags(f: DemoFlags): { seconds?: number; restarts?: number; gapMs?: number; via?: 'auto' | 'plug' | 'queue' } {
  const out: { seconds?: number; restarts?: number; gapMs?: number; via?: 'auto' | 'plug' | 'queue' } = {};
  if (f.via !== undefined) {
    if (f.via !== 'auto' && f.via !== 'plug' && f.via !== 'queue') throw new UsageError(`--via: '${f.via}' is not one of auto, plug, queue`);
    out.via = f.via;
  }
  if (f.seconds !== undefined) {
    const t = f.seconds.trim();
    if (!/^[0-9]*\.?[0-9]+$/.test(t)) throw new UsageError(`--seconds: '${f.seconds}' is not a number from 0.1 to 600 s (e.g. 5 or 2.5)`);
    out.seconds = Number(t);
  }
  if (f.restarts !== undefined) {
    const t = f.restarts.trim();
    if (!/^[0-9]+$/.test(t)) throw new UsageError(`--restarts: '${f.restarts}' is not a whole number`);
    out.restarts = Number(t);
  }
  if (f.gap !== undefined) {
    const { min, max } = DEMO_LIMITS.gapMs;
    out.gapMs = parseDuration(f.gap, '--gap', min, 'the gap is whole milliseconds', { ms: max, text: `${max / 1000}s` });
  }
  return out;
}

/** Milliseconds for the table: 0.42 ms, 12.3 ms, 215 ms, 1.23 s; `-` for none. */
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '-';
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 100) return `${ms.toFixed(0)} ms`;
  if (ms >= 10) return `${ms.toFixed(1)} ms`;
  return `${ms.toFixed(2)} ms`;
}

/**
 * The demo's text output: what ran, a table with one column per phase
 * (requests, failures by kind, latency with connect, restarts, held time and
 * SYNs held per restart), and the verdict.
 * @param r the engine's result
 */
export function formatDemo(r: DemoModule.DemoResult): string {
  const u = r.phases.unprotected;
  const p = r.phases.protected;
  const rows: Array<[string, string, string]> = [
    ['requests (a new connection each)', String(u.requests), String(p.requests)],
    ['failed', String(u.failed), String(p.failed)],
    ['  refused', String(u.failures.refused), String(p.failures.refused)],
    ['  reset', String(u.failures.reset), String(p.failures.reset)],
    ['  timeout', String(u.failures.timeout), String(p.failures.timeout)],
    ['  bad response', String(u.failures['bad-response']), String(p.failures['bad-response'])],
    ['  other', String(u.failures.other), String(p.failures.other)],
    ['latency p50 (connect included)', formatMs(u.latencyMs.p50), formatMs(p.latencyMs.p50)],
    ['latency p99', formatMs(u.latencyMs.p99), formatMs(p.latencyMs.p99)],
    ['latency max', formatMs(u.latencyMs.max), formatMs(p.latencyMs.max)],
    ['restarts', `${u.restarts.length}/${u.restartsWanted}`, `${p.restarts.length}/${p.restartsWanted}`],
    ['left in the accept queue at close', queuedText(u.restarts), queuedText(p.restarts)],
    ['held per restart (mean / max)', '-', p.heldMs ? `${formatMs(p.heldMs.mean)} / ${formatMs(p.heldMs.max)}` : '-'],
    ['SYNs held per restart (mean)', '-', p.synsHeld ? p.synsHeld.mean.toFixed(1) : '-'],
  ];
  const head: [string, string, string] = ['', 'unprotected', 'protected'];
  const w = [0, 1, 2].map((i) => Math.max(head[i].length, ...rows.map((row) => row[i].length)));
  const line = (row: readonly string[]) => `${row[0].padEnd(w[0])}  ${row[1].padStart(w[1])}  ${row[2].padStart(w[2])}`.trimEnd();
  // The hold's own words: the local plug hold on lo, or the queue hold on a kernel without sch_plug...
  const hold = holdModeFor(r.via, r.mode)?.describe({ scope: r.mode, dev: r.dev, addr: r.addr }).label ?? `${r.via} hold on ${r.dev}`;
  const setupLine = r.inbound
    ? `clients in a network namespace of the demo's own (${r.inbound.clientAddr} on ${r.inbound.clientDev}), joined by a veth pair; the ${hold} was set up for the demo and removed again, with the pair and the namespace`
    : r.setup.by === 'demo'
      ? `the ${hold} was set up for the demo and removed again`
      : `the ${hold} (already set up) was used and left as it was`;
  const where = r.netns === 'own' ? 'it ran in a network namespace of its own: this one was not changed' : 'it ran in this network namespace (--here)';
  const held = p.restarts.filter((x) => x.maxHoldReached).length;
  const others = [u, p].flatMap((ph) => Object.entries(ph.otherErrors).map(([code, n]) => `${ph.name}: ${n} ${code}`));
  // how many restarts ran: as asked, or fewer where a phase reached its length limit
  const times = (ph: DemoModule.PhaseResult) =>
    ph.restarts.length === ph.restartsWanted
      ? ph.restartsWanted === 1
        ? 'once'
        : `${ph.restartsWanted} times`
      : `${ph.restarts.length} of ${ph.restartsWanted} times`;
  const cut = u.restarts.length < u.restartsWanted || p.restarts.length < p.restartsWanted;
  const restarted = cut ? `${times(u)} unprotected and ${times(p)} protected` : `${times(p)} per phase`;
  return [
    `synplug demo: a pong server on ${r.addr}:${r.port} restarted without socket hand-over (gap ${formatMs(r.gapMs)}), ${restarted} over ${r.seconds} s, ${r.clients} clients; ${setupLine}; ${where}`,
    '',
    line(head),
    line(w.map((n) => '-'.repeat(n))),
    ...rows.map(line),
    '',
    ...(others.length ? [`other errors: ${others.join(', ')}`] : []),
    ...(held ? [`${held} protected restart(s) were released at the max-hold (${formatMs(r.maxHoldMs)}), not at the new listener`] : []),
    `${r.verdict === 'protected' ? 'PROTECTED' : r.verdict === 'failed' ? 'FAILED' : 'NOT SENSITIVE'}: ${r.message}`,
  ].join('\n');
}

/** The connections left in the accept queue at the restarts' closes, summed (`-` when none could be read). */
function queuedText(rs: DemoModule.RestartResult[]): string {
  const known = rs.flatMap((x) => (x.queuedAtClose === null ? [] : [x.queuedAtClose]));
  return known.length ? String(known.reduce((a, b) => a + b, 0)) : '-';
}

/**
 * The exit code of a finished demo: 0 unless the protected phase lost a
 * request. An insensitive run (neither phase lost one) exits 0: synplug held
 * every restart; the message says that the demo proved nothing here.
 * @param verdict the engine's verdict
 */
export function demoExitCode(verdict: DemoModule.DemoVerdict): number {
  return verdict === 'failed' ? EXIT.DEMO_FAILED : EXIT.OK;
}

/** Register `synplug demo` on the program. */
export function demoCommand(program: Command): void {
  program
    .command('demo')
    .description('restart a server unprotected, then under protect; compare (in a namespace of its own)')
    .addOption(new Option('--seconds <n>', 'length of each phase, seconds (default 5)'))
    .addOption(new Option('--restarts <n>', 'server restarts per phase (default 10)'))
    .addOption(new Option('--gap <duration>', 'time without a listener per restart (default 200ms)'))
    .addOption(new Option('--inbound', 'through the inbound hold, clients over a veth pair'))
    .addOption(new Option('--here', "in this namespace: uses (or sets up) its local hold"))
    .addOption(new Option('--via <hold>', 'plug, queue or auto (default auto: plug if supported)'))
    .addOption(new Option('--state-dir <dir>', `state directory (${STATE_DIR_DEFAULT_HELP})`))
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `${exitCodesHelp('demo')}\nNeeds CAP_NET_ADMIN and CAP_SYS_ADMIN (root; --here: CAP_NET_ADMIN alone,\nunless --inbound). 'synplug doctor' says which holds this kernel supports.`,
    )
    .action(
      run(async (f: DemoFlags) => {
        const opts = demoOptionsFromFlags(f);
        const demo = await loadDemo();
        demo.resolveDemoOptions(opts); // bad input: exit 2 before anything
        const r = await demo.runDemo({
          ...opts,
          ...(f.inbound && { inbound: true }),
          ...(f.here && { here: true }),
          // Only one given: without --here the demo's own directory goes in the system's temporary directory; with it, the guard's default
          ...(givenStateDir(f.stateDir) !== undefined && { stateDir: givenStateDir(f.stateDir) }),
          ...(!f.json && { onProgress: (line: string) => process.stderr.write(`synplug demo: ${line}\n`) }),
        });
        if (f.json) process.stdout.write(JSON.stringify(r) + '\n');
        else process.stdout.write(formatDemo(r) + '\n');
        return demoExitCode(r.verdict);
      }),
    );
}
