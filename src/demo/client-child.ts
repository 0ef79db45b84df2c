/**
 * The child side of the demo's client process for `synplug demo --inbound`,
 * as a library: the process entry point (src/cli/bin/demo-client-main.ts)
 * only wires it to the IPC channel, signals and the exit. Started inside the
 * demo's client namespace (topology.ts) by {@link ClientProcess}, it runs the
 * client loops of clients.ts there, so that their SYNs arrive on the veth
 * pair the inbound hold sits on. The protocol over the IPC channel:
 *
 * - it sends `{ type: 'ready' }` once loaded;
 * - `{ type: 'start', host, port, clients, timeoutMs }`: start the loops, answer `{ type: 'started' }`;
 * - `{ type: 'stop' }`: stop them, answer `{ type: 'records', records }` (every request of the phase);
 * - `{ type: 'exit' }`, or the channel closing (the demo exited, even by SIGKILL): exit.
 *
 * @module
 */
import { ClientLoad } from './clients.js';
import type { RequestRecord } from './types.js';

/** A message from the demo to its client process. */
export type DemoClientCommand = { type: 'start'; host: string; port: number; clients: number; timeoutMs: number } | { type: 'stop' } | { type: 'exit' };

/** A message from the client process to the demo. */
export type DemoClientReply = { type: 'ready' } | { type: 'started' } | { type: 'records'; records: RequestRecord[] };

/**
 * The client process's state: the loops of the current phase. It answers
 * through `send` and asks its process to end through `onExit`; it never
 * prints or exits itself.
 */
export class DemoClientChild {
  private load: ClientLoad | undefined;

  /**
   * @param send hands a reply to the demo (over the IPC channel)
   * @param onExit the demo said `exit`: the process should end now (status 0)
   */
  constructor(
    private readonly send: (m: DemoClientReply) => void,
    private readonly onExit: () => void,
  ) {}

  /** Tell the demo this process is ready (send once, after loading). */
  ready(): void {
    this.send({ type: 'ready' });
  }

  /**
   * One message from the demo: `start` begins a phase's loops (answer
   * `started`), `stop` ends them (answer `records`, empty when none ran),
   * `exit` calls `onExit`.
   */
  message(m: DemoClientCommand): void {
    if (m.type === 'start') {
      this.load = new ClientLoad({ host: m.host, port: m.port, clients: m.clients, timeoutMs: m.timeoutMs });
      this.send({ type: 'started' });
    } else if (m.type === 'stop') {
      const l = this.load;
      this.load = undefined;
      if (!l) {
        this.send({ type: 'records', records: [] });
        return;
      }
      void l.stop().then((records) => this.send({ type: 'records', records }));
    } else if (m.type === 'exit') {
      this.onExit();
    }
  }
}
