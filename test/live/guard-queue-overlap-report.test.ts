/**
 * Live, this machine's kernel (the queue hold): two protects of one state directory whose holds overlap, each
 * protecting a short command, nobody running a release or a teardown. Each report counts (refused and reset not
 * null: the RST counters' chain lives until the last protect using it is done), and neither says that chain was
 * removed or that a manual release (or a teardown) ended its hold. Its own network namespace.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';
import { BIN, chainsOf, listening, parseJson, server, stateEnv, synplug } from '../helpers/queue-live.js';

// biome-ignore lint/suspicious/noExplicitAny: the scenarios' JSON results, asserted field by field
type Json = Record<string, any>;

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_GUARD_QUEUE_OVERLAP_REPORT_SCENARIO';
const ADDR = '169.254.89.1';
const PORT = 39600;

/** `protect --json -- sleep S`: its status and output once it ends. */
function protect(env: NodeJS.ProcessEnv, sleep: string) {
  const p = spawn(process.execPath, [BIN, 'protect', '--json', '--max-hold', '20s', '--', 'sleep', sleep], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  p.stdout!.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  p.stderr!.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  return new Promise<{ code: number | null; json: Json | undefined; stderr: string }>((done) =>
    p.once('exit', (code) => done({ code, json: parseJson<Json>(stdout), stderr })),
  );
}

const scenarios = {
  async overlap() {
    const { dir, env } = stateEnv();
    try {
      const set = synplug(['setup', '--via', 'queue', '--addr', ADDR], env);
      if (set.code !== 0) throw new Error(`setup: ${set.stderr}`);
      const srv = server(ADDR, PORT);
      await listening(srv);
      const runs = [];
      const chainsAfter: Array<string[] | undefined> = [];
      // four rounds of two overlapping reloads, the later 0.3 s after the first
      for (let i = 0; i < 4; i++) {
        const a = protect(env, '1');
        await new Promise((r) => setTimeout(r, 300));
        const b = protect(env, '1');
        runs.push(await Promise.all([a, b]));
        // the last one out removed the report's chain (the table stays)
        chainsAfter.push(chainsOf('synplug_report')?.filter((c) => c.startsWith('rst')));
      }
      srv.kill();
      synplug(['teardown'], env);
      return { runs, chainsAfter };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');

  // issue 22 (a new user's check): the later of two overlapping protects said "not fully counted … the chain rst-… was
  // removed during the reload (a manual 'synplug release' or a teardown meanwhile?)", and once the other said a manual
  // release ended its hold, though nobody ran either.
  test('two overlapping protects on the queue hold: both reloads counted; neither says its chain was removed or a release ended its hold', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'overlap', 240_000);
    for (const [i, pair] of (r.runs as Json[][]).entries())
      for (const [j, x] of pair.entries()) {
        const who = `round ${i + 1}, protect ${j === 0 ? 'A' : 'B'}: ${x.stderr} ${JSON.stringify(x.json?.report)} leaseBroken ${x.json?.leaseBroken}`;
        t.is(x.code, 0, who);
        t.notRegex(x.stderr, /was removed during the reload|ended the hold|not fully counted/, who);
        t.falsy(x.json?.leaseBroken, who);
        t.not(x.json?.report?.refused, null, who);
        t.not(x.json?.report?.reset, null, who);
        t.deepEqual(x.json?.report?.uncounted ?? [], [], who);
      }
    for (const c of r.chainsAfter as Array<string[] | null>) t.deepEqual(c ?? [], [], 'the last protect out removed the chain');
  });
}
