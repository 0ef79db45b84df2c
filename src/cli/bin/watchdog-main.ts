/**
 * The watchdog process (entry point): the process side of
 * {@link WatchdogChild} (src/guard/watchdog-child.ts, which holds the logic
 * and describes the protocol). {@link startWatchdog} spawns this file by
 * path. Here: the signals (SIGINT, SIGHUP and SIGPIPE ignored, SIGTERM acts),
 * `ready` on stdout once the sockets are open, stdin's lines, its reports on
 * stderr prefixed `synplug watchdog: ` (a closed stdout or stderr is no error: the parent is gone, and the end of
 * stdin says so), and the exit status (0; 1 when the
 * sockets could not be opened or a release failed).
 *
 * @module
 */
import { createInterface } from 'node:readline';
import { WatchdogChild } from '../../guard/watchdog-child.js';
import { QUEUE_HOLDER_ARG, runQueueHolder } from '../../guard/leases-holder.js';
import { EXIT } from '../exit-codes.js';

const say = (line: string): void => {
  process.stderr.write(`synplug watchdog: ${line}\n`);
};

// A parent gone before it read `ready` (protect stopped while starting) closed the pipe: the write's EPIPE is no
// crash. Its end of stdin follows, and the watchdog acts on that (unarmed: it exits; armed: it releases). A
// closed stderr (the terminal gone) loses only the reports.
process.stdout.on('error', () => {});
process.stderr.on('error', () => {});

if (process.argv.includes(QUEUE_HOLDER_ARG)) {
  // The queue holder (src/guard/leases-holder.ts): the same process setup, another job.
  for (const sig of ['SIGINT', 'SIGHUP', 'SIGPIPE'] as const) process.on(sig, () => {});
  void runQueueHolder({
    first: (line) => process.stdout.write(`${line}\n`),
    say: (line) => process.stderr.write(`synplug queue holder: ${line}\n`),
    exit: (code) => process.exit(code === 0 ? EXIT.OK : EXIT.FAILURE),
    onTerm: (stop) => process.on('SIGTERM', stop),
  });
} else watchdogMain();

function watchdogMain(): void {
  let child: WatchdogChild | undefined;
  for (const sig of ['SIGINT', 'SIGHUP', 'SIGPIPE'] as const) process.on(sig, () => {});
  process.on('SIGTERM', () => {
    if (child) void child.fire('SIGTERM received');
    else process.exit(EXIT.OK);
  });

  try {
    child = new WatchdogChild({
      report: say,
      onEnd: (end) => process.exit(end.kind === 'fired' && end.failed ? EXIT.FAILURE : EXIT.OK),
    });
  } catch (e) {
    say((e as Error).message);
    process.exit(EXIT.FAILURE);
  }
  const watchdog = child;
  process.stdout.write('ready\n');

  const rl = createInterface({ input: process.stdin });
  rl.on('line', (line) => watchdog.line(line));
  rl.on('close', () => watchdog.inputEnded());
}
