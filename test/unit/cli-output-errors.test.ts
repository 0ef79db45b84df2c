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

/** Run an entry with `args` and stdout as given (`onStdout` sees the pipe); its exit code and what it wrote on stderr. */
async function run(
  node: readonly string[],
  args: string[],
  stdout: 'pipe' | number,
  onStdout?: (out: NodeJS.ReadableStream & { destroy(): void }) => void,
): Promise<{ code: number | null; stderr: string }> {
  const p = spawn(process.execPath, [...node, ...args], { cwd: ROOT, env, stdio: ['ignore', stdout, 'pipe'] });
  if (p.stdout) onStdout?.(p.stdout);
  let stderr = '';
  p.stderr!.on('data', (d) => {
    stderr += d;
  });
  const code = await new Promise<number | null>((done) => p.on('close', done));
  return { code, stderr };
}

for (const [name, node] of entries) {
  test(`${name}: --version to a stdout that refuses writes (/dev/full) is named on stderr, exit 1; to a closed pipe, exit 0 and nothing on stderr`, async (t) => {
    const full = openSync('/dev/full', 'w');
    try {
      t.deepEqual(await run(node, ['--version'], full), { code: 1, stderr: 'synplug: cannot write to stdout: ENOSPC\n' });
    } finally {
      closeSync(full);
    }
    t.deepEqual(await run(node, ['--version'], 'pipe', (out) => out.destroy()), { code: 0, stderr: '' });
  });

  test(`${name}: decode: a reader that closes the pipe ends the output, exit 0 and nothing on stderr`, async (t) => {
    t.true(existsSync(node[node.length - 1]), 'built (npm run build)');
    let got = 0;
    const r = await run(node, ['decode', CAPTURE], 'pipe', (out) =>
      out.on('data', (d: Buffer) => {
        got += d.length;
        out.destroy();
      }),
    );
    t.true(got > 0, 'it printed before the pipe closed');
    t.deepEqual(r, { code: 0, stderr: '' });
  });

  test(`${name}: decode: a stdout that refuses writes (/dev/full) is named on stderr, exit 1`, async (t) => {
    const full = openSync('/dev/full', 'w');
    try {
      t.deepEqual(await run(node, ['decode', CAPTURE], full), { code: 1, stderr: 'synplug: cannot write to stdout: ENOSPC\n' });
    } finally {
      closeSync(full);
    }
  });
}
