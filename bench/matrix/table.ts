/**
 * Print the README's Markdown table from matrix result files, so that every
 * number in it comes from a JSON as measured (nothing typed by hand):
 *
 *   node --import=tsx bench/matrix/table.ts [--one-table] bench/matrix/results/matrix-*.json
 *
 * One line per window: row, client side, mode, requests, failed (by kind),
 * p99, max, reloads done (exited 0 and took effect / done), plug held mean /
 * max, windows released by the max-hold, SYNs held; the file's date and
 * kernel in a heading above each file's lines. `--one-table`: the files
 * listed first, then one table with a `run` column (the file's tag).
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { fmtMs, meanMax } from '../reload/stats.js';

interface Reload {
  exitCode: number;
  reloaded: boolean;
  error?: string;
  heldMs?: number;
  maxHoldReached?: boolean;
  packetsReleased?: number;
  drops?: number;
  handedOver?: boolean;
  newListener?: boolean;
  oldClosed?: number;
}
interface Win {
  row: string;
  mode: string;
  clientSide?: string;
  client: { requests: number; failed: number; errors: Record<string, number>; p99: number; max: number };
  reloads: Reload[];
}
interface Result {
  date: string;
  kernel: string;
  params: { connections: number; reloads: number; compareReloads?: number; budgetSeconds: number };
  haproxy: string;
  nginx: string;
  windows: Win[];
}

const n = (x: number) => x.toLocaleString('en-US');
const MODE: Record<string, string> = {
  unprotected: 'unprotected',
  migrate: '`tcp_migrate_req=1`',
  protected: '`protect --wait-listen`',
  'protected-migrate': '`protect --wait-listen` + `tcp_migrate_req=1`',
};

function failed(w: Win): string {
  const e = w.client.errors;
  const refused = e['connect-refused'] ?? 0;
  const reset = (e['connect-reset'] ?? 0) + (e['read-reset'] ?? 0);
  const timeout = (e['connect-timeout'] ?? 0) + (e['read-timeout'] ?? 0);
  const empty = e['read-empty'] ?? 0;
  const other = w.client.failed - refused - reset - timeout - empty;
  if (w.client.failed === 0) return '**0**';
  const parts = [
    refused && `${n(refused)} refused`,
    reset && `${n(reset)} reset`,
    timeout && `${n(timeout)} timeout`,
    empty && `${n(empty)} closed empty`,
    other && `${n(other)} other`,
  ].filter(Boolean);
  return `**${n(w.client.failed)}** (${parts.join(', ')})`;
}

const args = process.argv.slice(2);
const one = args.includes('--one-table');
const files = args.filter((a) => a !== '--one-table');
const tagOf = (file: string, r: Result) =>
  basename(file, '.json')
    .replace(`matrix-${r.kernel}-${r.date.slice(0, 10)}`, '')
    .replace(/^-/, '') || '-';
const HEAD = '| row | client | mode | requests | failed | p99 | max | reloads | plug held mean / max | max-hold | SYNs held |';
const heading = (file: string, r: Result) =>
  `${r.date.slice(0, 16).replace('T', ' ')} UTC, kernel ${r.kernel}, ${r.haproxy.split(' - ')[0]}, ${r.nginx.replace(/^nginx version: /, '')}, ${r.params.connections} client loops (\`${basename(file)}\`)`;
if (one) {
  process.stdout.write('\n');
  for (const file of files) {
    const r = JSON.parse(readFileSync(file, 'utf8')) as Result;
    process.stdout.write(`- \`${tagOf(file, r)}\`: ${heading(file, r)}\n`);
  }
  process.stdout.write(`\n| run ${HEAD}\n|---${'|---'.repeat(11)}|\n`);
}
for (const file of files) {
  const r = JSON.parse(readFileSync(file, 'utf8')) as Result;
  if (!one) {
    process.stdout.write(`\n${heading(file, r)}\n\n`);
    process.stdout.write(`${HEAD}\n|---${'|---'.repeat(10)}|\n`);
  }
  for (const w of r.windows) {
    const prot = w.mode.startsWith('protected');
    const ok = w.reloads.filter((x) => x.exitCode === 0 && x.reloaded && !x.error).length;
    const held = meanMax(w.reloads.filter((x) => x.heldMs !== undefined).map((x) => x.heldMs!));
    const syns = w.reloads.reduce((s, x) => s + (x.packetsReleased ?? 0), 0);
    const drops = w.reloads.reduce((s, x) => s + (x.drops ?? 0), 0);
    const mh = w.reloads.filter((x) => x.maxHoldReached).length;
    const ho = w.reloads.filter((x) => x.handedOver).length;
    const oc = w.reloads.filter((x) => (x.oldClosed ?? 0) > 0).length;
    const errs = new Map<string, number>();
    for (const x of w.reloads) if (x.error) errs.set(x.error.split(';')[0], (errs.get(x.error.split(';')[0]) ?? 0) + 1);
    const asked = prot ? r.params.reloads : r.params.compareReloads;
    const cut = asked !== undefined && w.reloads.length < asked ? ` (${asked} asked: the time budget ended the window)` : '';
    const reloads = `${ok === w.reloads.length ? ok : `${ok} of ${w.reloads.length}`}${[...errs].map(([e, k]) => ` (${k}: ${e})`).join('')}${cut}`;
    process.stdout.write(
      `${one ? `| ${tagOf(file, r)} ` : ''}| ${w.row} | ${w.clientSide ?? 'local'} | ${MODE[w.mode] ?? w.mode} | ${n(w.client.requests)} | ${failed(w)} | ${fmtMs(w.client.p99)} | ${fmtMs(w.client.max)} | ${reloads} | ${
        prot ? `${fmtMs(held.mean)} / ${fmtMs(held.max)}` : '-'
      } | ${prot ? `${mh}${ho || oc ? ` (${[ho && `${ho} ended by a hand-over`, oc && `${oc} waited for an old socket to close`].filter(Boolean).join(', ')})` : ''}` : '-'} | ${prot ? `${n(syns)}${drops ? ` (${drops} dropped)` : ''}` : '-'} |\n`,
    );
  }
}
