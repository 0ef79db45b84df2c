/**
 * The demo's own process (entry point) for `synplug demo` without `--here`:
 * {@link runDemoIsolated} (src/demo/isolated.ts, which describes the
 * messages) starts this file inside the demo's new network namespace. Here:
 * the IPC channel and the exit. It runs {@link runDemo} with `here: true`
 * (in this process's namespace, which is the demo's own) and its own SIGINT
 * and SIGTERM handling (the caller passes its signals on; a Ctrl-C in a
 * terminal reaches both); the channel closing (the caller died, even by
 * SIGKILL) stops the demo as SIGTERM does. Exits 0 once it has answered;
 * 2, with a message, when started without an IPC channel.
 *
 * @module
 */
import { runDemo } from '../../demo/run.js';
import { toWireError, type DemoHostCommand, type DemoHostReply } from '../../demo/isolated.js';
import { EXIT } from '../exit-codes.js';

const send = (m: DemoHostReply): Promise<void> =>
  new Promise((resolve) => {
    if (!process.connected || !process.send) resolve();
    else process.send(m, undefined, {}, () => resolve());
  });

if (!process.send) {
  process.stderr.write('synplug demo process: start me with an IPC channel (synplug demo does)\n');
  process.exit(EXIT.USAGE);
}

const stop = new AbortController();
let started = false;
process.on('disconnect', () => {
  if (!started) process.exit(EXIT.OK);
  stop.abort();
});
process.on('message', (m: DemoHostCommand) => {
  if (m?.type === 'stop') stop.abort();
  else if (m?.type === 'run' && !started) {
    started = true;
    runDemo({ ...m.options, here: true, signal: stop.signal, onProgress: (line) => void send({ type: 'progress', line }) })
      .then(
        (result) => send({ type: 'result', result }),
        (e: unknown) => send({ type: 'error', error: toWireError(e) }),
      )
      .finally(() => process.exit(EXIT.OK));
  }
});
void send({ type: 'ready' });
