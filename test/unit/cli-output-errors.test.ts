/**
 * The CLI's output that cannot be written: a reader that closes the pipe
 * ends the output quietly with the command's code, and a stdout that refuses
 * writes (/dev/full: ENOSPC) is named on stderr with exit 1; never a stack
 * trace. Both ways the CLI writes: process.stdout (src/cli/output.ts, for
 * bin.ts and the installed entry launch.ts alike; `--version`) and decode's
 * own writes to fd 1 (a capture that prints about a megabyte). From the
 * sources and from the built entry (run `npm run build` first;
 * scripts/test-all.sh does).
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** A capture whose decoding prints about a megabyte: more than a pipe holds. */
const CAPTURE = join(ROOT, 'fixtures/captures/13_class_dump/capture.pcap');

const entries: Array<[string, string[]]> = [
  ['the sources', ['--import=tsx', join(ROOT, 'src/cli/bin.ts')]],
  ['the installed entry (dist/bundle/synplug.cjs)', [join(ROOT, 'dist/bundle/synplug.cjs')]],
];
const env = { ...process.env, SYNPLUG_STATE_DIR: '/nonexistent/synplug-state', SYNPLUG_WRITE_CODE_CACHE: '0' };

for (const [name, node] of entries) {
  test(`${name}: --version to a stdout that refuses writes (/dev/full) is named on stderr, exit 1; to a closed pipe, exit 0 and nothing on stderr`, async (t) => {
    const full = openSync('/dev/full', 'w');
    try {
      const p = spawn(process.execPath, [...node, '--version'], { cwd: ROOT, env, stdio: ['ignore', full, 'pipe'] });
      let stderr = '';
      p.stderr!.on('data', (d) => {
        stderr += d;
      });
      const code = await new Promise<number | null>((done) => p.on('close', done));
      t.is(stderr, 'synplug: cannot write to stdout: ENOSPC\n');
      t.is(code, 1);
    } finally {
      closeSync(full);
    }
    const p = spawn(process.execPath, [...node, '--version'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    p.stdout.destroy();
    let stderr = '';
    p.stderr.on('data', (d) => {
      stderr += d;
    });
    const code = await new Promise<number | null>((done) => p.on('close', done));
    t.is(stderr, '');
    t.is(code, 0);
  });

  test(`${name}: decode: a reader that closes the pipe ends the output, exit 0 and nothing on stderr`, async (t) => {
    t.true(existsSync(node[node.length - 1]), 'built (npm run build)');
    const p = spawn(process.execPath, [...node, 'decode', CAPTURE], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    p.stderr.on('data', (d) => {
      stderr += d;
    });
    let got = 0;
    p.stdout.on('data', (d: Buffer) => {
      got += d.length;
      p.stdout.destroy();
    });
    const code = await new Promise<number | null>((done) => p.on('close', done));
    t.true(got > 0, 'it printed before the pipe closed');
    t.is(stderr, '');
    t.is(code, 0);
  });

  test(`${name}: decode: a stdout that refuses writes (/dev/full) is named on stderr, exit 1`, async (t) => {
    const full = openSync('/dev/full', 'w');
    try {
      const p = spawn(process.execPath, [...node, 'decode', CAPTURE], { cwd: ROOT, env, stdio: ['ignore', full, 'pipe'] });
      let stderr = '';
      p.stderr!.on('data', (d) => {
        stderr += d;
      });
      const code = await new Promise<number | null>((done) => p.on('close', done));
      t.is(stderr, 'synplug: cannot write to stdout: ENOSPC\n');
      t.is(code, 1);
    } finally {
      closeSync(full);
    }
  });
}
