/**
 * Live, this machine's kernel: a queue holder that is slow to start (a cold
 * Node start on a loaded host takes seconds) neither holds while it starts
 * nor takes that time from `--max-hold`. Protect and plug start the holder
 * in their phase one, and it binds the queue at the first `hold`.
 *
 * The slow start is real: every synplug process of the scenario loads a
 * `--require` file (NODE_OPTIONS) that blocks the queue holder, and only it,
 * for 12 s before it runs, longer than the protect's `--max-hold` of 8 s.
 * Before phase one started the holder, such a protect failed with "the
 * holder did not answer" (the lease's deadline passed while the holder
 * started; it released and exited) and the command never ran. The command
 * starts a client and ends once the kernel has its SYN queued: judged by
 * order of events, not by time.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';
import { BIN, QUEUE, listening, procQueue, queueHolderPid, server, stateEnv, synplug, until } from '../helpers/queue-live.js';

// biome-ignore lint/suspicious/noExplicitAny: the scenarios' JSON results, asserted field by field
type Json = Record<string, any>;

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_GUARD_QUEUE_SLOW_HOLDER_SCENARIO';
const ADDR = '169.254.88.9';
const PORT = 39560;

/** A client connecting in the reload command, while the hold is on: its outcome is written to `out`. */
const CLIENT = `import socket,sys
s=socket.socket(); s.settimeout(30)
try:
    s.connect((sys.argv[1], int(sys.argv[2]))); r='ok'
except OSError as e: r=type(e).__name__
open(sys.argv[3],'w').write(r)`;

/** The command's wait (one process, bounded: 20 s) until the kernel has a SYN queued: /proc/net/netfilter/nfnetlink_queue's queue_total (field 3); it writes how many 20 ms polls that took (1000: never). */
const WAIT = `import sys,time
n=0
while n<1000:
    if any(l.split()[0]==sys.argv[1] and int(l.split()[2])>0 for l in open('/proc/net/netfilter/nfnetlink_queue') if l.strip()): break
    time.sleep(0.02); n+=1
open(sys.argv[2],'w').write(str(n))`;

const scenarios = {
  async slow() {
    const { dir, env } = stateEnv();
    const slow = join(dir, 'slow-holder.cjs');
    writeFileSync(slow, "if (process.argv.includes('--queue-holder')) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 12000);\n");
    const set = synplug(['setup', '--via', 'queue', '--addr', ADDR], env);
    const srv = server(ADDR, PORT);
    await listening(srv);
    const out = join(dir, 'client');
    const slowEnv = { ...env, NODE_OPTIONS: `--require ${slow}`, CLIENT, WAIT };
    // the client, then (bounded) until its SYN is queued
    const command = `python3 -c "$CLIENT" ${ADDR} ${PORT} ${out} & python3 -c "$WAIT" ${QUEUE} ${out}.waited`;
    const t0 = Date.now();
    const p = spawnSync(process.execPath, [BIN, 'protect', '--json', '--max-hold', '8s', '--', 'sh', '-c', command], {
      env: slowEnv,
      encoding: 'utf8',
      timeout: 150_000,
    });
    const protectMs = Date.now() - t0;
    // A protect that failed ran no client: its status and stderr are the result (asserted, so printed).
    const ended = await until(() => existsSync(out), 'the client to end').then(
      () => true,
      () => false,
    );
    if (!ended) srv.kill();
    if (!ended) return { setup: set.code, code: p.status, signal: p.signal, stderr: p.stderr, stdout: p.stdout, protectMs, client: 'never ran' };
    const client = readFileSync(out, 'utf8');
    // no count: protect ended (or was ended) before its command did
    const waited = existsSync(`${out}.waited`) ? Number(readFileSync(`${out}.waited`, 'utf8')) : -1;
    if (waited < 0) srv.kill();
    if (waited < 0) return { setup: set.code, code: p.status, signal: p.signal, stderr: p.stderr, stdout: p.stdout, protectMs, client, waited };
    // The holder lets the queue go and exits once no lease is left.
    await until(() => procQueue(QUEUE) === undefined && queueHolderPid(QUEUE) === undefined, 'the queue unbound');
    srv.kill();
    synplug(['teardown'], env);
    rmSync(dir, { recursive: true, force: true });
    return { setup: set.code, code: p.status, stderr: p.stderr, json: p.stdout ? JSON.parse(p.stdout) : undefined, client, waited };
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');

  test('a queue holder 12 s slow to start: protect --max-hold 8s still runs its command, holds its SYN, and lets it through; then the holder goes', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'slow', 200_000);
    t.is(r.setup, 0);
    t.is(r.code, 0, `protect: ${JSON.stringify({ signal: r.signal, ms: r.protectMs, stderr: r.stderr, stdout: r.stdout })}`);
    t.not(r.client, 'never ran', 'the command ran its client');
    t.true(r.waited >= 0 && r.waited < 1000, `the command saw its client's SYN queued (${r.waited} polls)`);
    t.is(r.client, 'ok', 'the connection was let through by the release');
    t.false(r.json.maxHoldReached, 'released when the command ended, within its max-hold');
    t.true(r.json.report.heldSyns >= 1, `the SYN sent in the hold was held: ${JSON.stringify(r.json.report)}`);
    t.is(r.json.report.dropped, 0);
  });
}
