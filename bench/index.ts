/**
 * `npm run bench`: synplug against the reference tools, measured in the same
 * run, in a fresh network namespace (scripts/in-netns.sh), on devices of its
 * own. Prints tables and PASS/FAIL lines for the targets, and writes every
 * figure to bench/results/issue10-latest.json (the printed text beside it, .txt).
 *
 * 1. qdisc-latency.ts: one qdisc change: the syscall floor (Python's socket), the bare koffi
 *    transport, the connection, changeQdisc, the old `netlink` npm socket, a process per change.
 * 2. class-list.ts: `synplug show class --stats --json` vs `tc -s -j class show` on many htb classes.
 * 3. strict-dump.ts: one device's addresses and qdiscs among 200 devices, with and without
 *    NETLINK_GET_STRICT_CHK.
 *
 * Options (after `npm run bench --`): see {@link USAGE}.
 *
 * @module
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runClassList, type ClassListResult } from './class-list.js';
import { assertIsolated, build, machine, missingTools, ROOT } from './lib/env.js';
import { runQdiscLatency, type QdiscLatencyResult } from './qdisc-latency.js';
import { runStrictDump, type StrictDumpResult } from './strict-dump.js';

const USAGE = `usage: npm run bench -- [options]
  --only latency|classes|strict   run one part
  --iterations N           in-process iterations per variant (default 2000)
  --process-iterations N   processes per variant (default 200)
  --classes A,B            class counts (default 10000,30000; the last is lowered to fit the budget)
  --runs N                 runs per tool and class count (default 5)
  --budget S               seconds the whole bench may take (default 570)
  --profile auto|always|never   CPU-profile the CLI when a class-list target fails (default auto)
  --no-build               use dist/ as it is (default: npx tsc -p tsconfig.json first)
  --out FILE               JSON results (default bench/results/issue10-latest.json; the printed text goes to the same name with .txt)
  --strict                 exit 1 when a target fails`;

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    iterations: { type: 'string' },
    'process-iterations': { type: 'string' },
    classes: { type: 'string' },
    runs: { type: 'string' },
    budget: { type: 'string' },
    profile: { type: 'string' },
    'no-build': { type: 'boolean' },
    out: { type: 'string' },
    strict: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  process.stdout.write(USAGE + '\n');
  process.exit(0);
}

function num(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) {
    process.stderr.write(`bench: --${name} must be a positive number\n${USAGE}\n`);
    process.exit(2);
  }
  return n;
}

assertIsolated();
const missing = missingTools();
if (missing.length) {
  process.stderr.write(`bench: missing reference tools: ${missing.join(', ')}; run scripts/install-test-deps.sh (as root) or apt-get install them\n`);
  process.exit(2);
}
const started = Date.now();
const budgetS = num('budget', values.budget) ?? 570;
const deadline = started + budgetS * 1000;
const only = values.only;
if (only !== undefined && only !== 'latency' && only !== 'classes' && only !== 'strict') {
  process.stderr.write(`bench: --only takes latency, classes or strict\n${USAGE}\n`);
  process.exit(2);
}
const profile = values.profile ?? 'auto';
if (profile !== 'auto' && profile !== 'always' && profile !== 'never') {
  process.stderr.write(`bench: --profile takes auto, always or never\n`);
  process.exit(2);
}

const m = machine();
const printed: string[] = [];
const say = (s: string) => {
  printed.push(s);
  process.stdout.write(s);
};
say(`synplug bench (issues 2, 10): kernel ${m.kernel}, ${m.cpus} x ${m.cpuModel}, load average ${m.loadavg1} at start, node ${m.node}, ${m.tc}, ${m.libnl}\n`);
say(`checkout ${m.git.head}${m.git.dirtySrc.length ? `, uncommitted changes in ${m.git.dirtySrc.join(', ')}` : ''}\n`);
if (m.loadavg1 > m.cpus)
  say(
    `warning: the load average (${m.loadavg1}) exceeds the CPU count (${m.cpus}): other work is running, wall times and tails are inflated; ratios are measured in the same run, interleaved\n`,
  );
say('\n');

let latency: QdiscLatencyResult | undefined;
let classes: ClassListResult | undefined;
let strict: StrictDumpResult | undefined;
if (only === undefined || only === 'latency') {
  say('== 1. qdisc change round trip ==\n');
  latency = await runQdiscLatency({ inProcess: num('iterations', values.iterations), processes: num('process-iterations', values['process-iterations']) });
  say(latency.text + '\n');
}
if (only === undefined || only === 'strict') {
  say('== 3. strict dumps (NETLINK_GET_STRICT_CHK) on 200 devices ==\n');
  strict = await runStrictDump();
  say(strict.text + '\n');
}
if (only === undefined || only === 'classes') {
  if (!values['no-build']) {
    say('building dist/ (npx tsc -p tsconfig.json) ...\n');
    build();
  }
  say('== 2. listing htb classes ==\n');
  classes = await runClassList({
    sizes: values.classes?.split(',').map((x) => num('classes', x)!),
    runs: num('runs', values.runs),
    deadline: deadline - 10_000,
    profile,
  });
  say(classes.text + '\n');
}

const targets = [...(latency?.targets ?? []), ...(classes?.targets ?? [])];
say('== targets ==\n');
for (const t of targets) say(`${t.pass ? 'PASS' : 'FAIL'}  ${t.name}\n`);
const elapsedS = (Date.now() - started) / 1000;
say(`bench took ${elapsedS.toFixed(0)} s\n`);

const strip = <T extends { text: string }>(r: T | undefined) => (r ? { ...r, text: undefined } : undefined);
const out = values.out ?? join(ROOT, 'bench', 'results', 'issue10-latest.json');
mkdirSync(join(out, '..'), { recursive: true });
writeFileSync(
  out,
  JSON.stringify(
    {
      date: new Date(started).toISOString(),
      elapsedS,
      machine: m,
      units: { latency: 'microseconds', classList: 'milliseconds (wallMs, lib.*), KiB (maxRssKiB), seconds (userS, sysS, createS)', strict: 'microseconds' },
      latency: strip(latency),
      classList: strip(classes),
      strict: strip(strict),
      targets,
    },
    null,
    2,
  ) + '\n',
);
say(`results: ${out}\n`);
writeFileSync(out.replace(/\.json$/, '') + '.txt', printed.join(''));
if (values.strict && targets.some((t) => !t.pass)) process.exitCode = 1;
