/**
 * Live, this machine's kernel, in a network namespace of its own: `protect
 * --wait-listen PORT` (no address) watches only the sockets that can accept
 * a held client. A socket on 127.0.0.1:PORT that is not the reload's (any
 * user can bind one) neither ends the hold early nor stretches it to
 * `--max-hold`: the local queue hold's server on its own address, started
 * 1 s after the reload command returns, is the listener protect waits for.
 */
import { fileURLToPath } from 'node:url';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';
import { listening, server, stateEnv, synplug } from '../helpers/queue-live.js';

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_WAIT_LISTEN_LOOPBACK_SCENARIO';
const ADDR = '169.254.96.1';
const PORT = 39610;

const scenarios = {
  async decoy() {
    const { env } = stateEnv();
    const set = synplug(['setup', '--via', 'queue', '--addr', ADDR], env);
    const decoy = server('127.0.0.1', PORT);
    await listening(decoy);
    // The reload: the server comes up on the hold's address 1 s after the command returned.
    // (bounded by its own sleep: it outlives the command's shell, so it cannot die with its parent)
    const start = `import socket,time
time.sleep(1)
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('${ADDR}', ${PORT})); s.listen(8)
time.sleep(5)`;
    const p = synplug(['protect', '--json', '--max-hold', '20s', '--wait-listen', String(PORT), '--', 'sh', '-c', `python3 -c "$0" & exit 0`, start], env);
    decoy.kill();
    synplug(['teardown'], env);
    return { setup: set.code, code: p.code, stderr: p.stderr, json: p.stdout ? (JSON.parse(p.stdout) as Record<string, unknown>) : null };
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');
  test('--wait-listen PORT without an address: a socket on 127.0.0.1:PORT is not the reload`s; protect waits for the server on the hold`s address, not for --max-hold', (t) => {
    // biome-ignore lint/suspicious/noExplicitAny: the scenario's JSON result
    const r = inOwnNetns<Record<string, any>>(SELF, ENV, 'decoy', 90_000);
    t.is(r.setup, 0);
    t.is(r.code, 0, r.stderr);
    t.is(r.json.maxHoldReached, false, 'released once the new listener was there, not at --max-hold');
    t.like(r.json.newListener, { address: ADDR, port: PORT });
  });
}
