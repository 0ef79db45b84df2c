/**
 * The time synplug itself spends inside the plug window, on this machine:
 * plug ack -> gate opened (the command's exec follows), and the command's exit
 * (as Node sees it) -> release ack. The kernel side is replaced by a session
 * that answers at once, because this machine's kernel has no sch_plug (the
 * VM's kernel tests exercise the real plug); a real plug/release round trip
 * adds one "NetlinkConnection.request, pre-built" each (npm run bench: about
 * 5-7 µs over the koffi socket).
 *
 * Target (issue 10): synplug's own time inside the window, median <= 30 µs.
 *
 * Run: node --import=tsx bench/protect-overhead.ts [runs]
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { runProtected, type ProtectSession } from '../src/guard/protect.js';
import { resolveConfig } from '../src/guard/config.js';

const runs = Number(process.argv[2] ?? 30);
const stateDir = mkdtempSync(join(tmpdir(), 'synplug-bench-'));
const session: ProtectSession = {
  config: resolveConfig({ stateDir }),
  plugStats: async () => ({ packets: 0, bytes: 0, drops: 0, qlen: 0, backlog: 0 }),
  listeners: async () => [],
  arm: async () => {},
  disarm: async () => {},
  buffer: async () => {},
  release: async () => {},
  releaseSteps: () => [],
};

const before: number[] = [];
const after: number[] = [];
for (let i = 0; i < runs; i++) {
  const r = await runProtected(session, { command: ['/bin/true'] });
  before.push(r.overhead.plugAckToCommandStartUs);
  if (r.overhead.commandExitToReleaseAckUs !== null) after.push(r.overhead.commandExitToReleaseAckUs);
}
const q = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(p * xs.length) - 1)];
console.log(`protect: synplug's own time inside the plug window, ${runs} runs of /bin/true (load average ${loadavg()[0].toFixed(2)})`);
console.log('part                                   median µs   p90 µs   max µs');
for (const [name, xs] of [
  ['plug ack -> gate opened', before],
  ['command exit -> release ack', after],
  ['total', before.map((b, i) => b + (after[i] ?? 0))],
] as const) {
  console.log(`${name.padEnd(38)} ${String(q(xs, 0.5)).padStart(9)} ${String(q(xs, 0.9)).padStart(8)} ${String(Math.max(...xs)).padStart(8)}`);
}
const med = q(
  before.map((b, i) => b + (after[i] ?? 0)),
  0.5,
);
console.log(
  `${med <= 30 ? 'PASS' : 'FAIL'} median total ${med} µs ${med <= 30 ? '<=' : '>'} 30 µs (target; plus two kernel round trips of a pre-built request)`,
);
