/**
 * The demo's client process (entry point) for `synplug demo --inbound`:
 * started inside the demo's client namespace (topology.ts), it runs the
 * client loops of clients.ts there, so that their SYNs arrive on the veth
 * pair the inbound hold sits on. It talks to the demo over the IPC channel:
 *
 * - it sends `{ type: 'ready' }` once loaded;
 * - `{ type: 'start', host, port, clients, timeoutMs }`: start the loops, answer `{ type: 'started' }`;
 * - `{ type: 'stop' }`: stop them, answer `{ type: 'records', records }` (every request of the phase);
 * - `{ type: 'exit' }`, or the channel closing (the demo exited, even by SIGKILL): exit.
 *
 * It ignores SIGINT and SIGHUP (a Ctrl-C in a terminal reaches the whole
 * process group; the demo decides) and exits on SIGTERM.
 *
 * @module
 */
import { ClientLoad } from './clients.js';

/** A message from the demo. */
type Command = { type: 'start'; host: string; port: number; clients: number; timeoutMs: number } | { type: 'stop' } | { type: 'exit' };

for (const sig of ['SIGINT', 'SIGHUP'] as const) process.on(sig, () => {});
process.on('SIGTERM', () => process.exit(0));

const send = (m: object): void => {
  if (process.connected) process.send?.(m);
};

if (!process.send) {
  process.stderr.write('synplug demo client: start me with an IPC channel (synplug demo --inbound does)\n');
  process.exit(2);
}
process.on('disconnect', () => process.exit(0));

let load: ClientLoad | undefined;
process.on('message', (m: Command) => {
  if (m.type === 'start') {
    load = new ClientLoad({ host: m.host, port: m.port, clients: m.clients, timeoutMs: m.timeoutMs });
    send({ type: 'started' });
  } else if (m.type === 'stop') {
    const l = load;
    load = undefined;
    if (!l) {
      send({ type: 'records', records: [] });
      return;
    }
    void l.stop().then((records) => send({ type: 'records', records }));
  } else if (m.type === 'exit') {
    process.exit(0);
  }
});
send({ type: 'ready' });
