/**
 * The demo's client process (entry point) for `synplug demo --inbound`: the
 * process side of {@link DemoClientChild} (src/demo/client-child.ts, which
 * holds the logic and describes the messages). {@link ClientProcess} spawns
 * this file by path inside the demo's client namespace. Here: the IPC
 * channel, the signals (it ignores SIGINT and SIGHUP: a Ctrl-C in a terminal
 * reaches the whole process group, the demo decides; it exits on SIGTERM),
 * and the exit (0 on `exit` or when the channel closes; 2, with a message,
 * when started without an IPC channel).
 *
 * @module
 */
import { DemoClientChild, type DemoClientCommand, type DemoClientReply } from '../../demo/client-child.js';
import { EXIT } from '../exit-codes.js';

for (const sig of ['SIGINT', 'SIGHUP'] as const) process.on(sig, () => {});
process.on('SIGTERM', () => process.exit(EXIT.OK));

const send = (m: DemoClientReply): void => {
  if (process.connected) process.send?.(m);
};

if (!process.send) {
  process.stderr.write('synplug demo client: start me with an IPC channel (synplug demo --inbound does)\n');
  process.exit(EXIT.USAGE);
}
process.on('disconnect', () => process.exit(EXIT.OK));

const child = new DemoClientChild(send, () => process.exit(EXIT.OK));
process.on('message', (m: DemoClientCommand) => child.message(m));
child.ready();
