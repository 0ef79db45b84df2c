/**
 * The queue holder's own logic ({@link runQueueHolder}, src/guard/leases-holder.ts)
 * run in the test's process instead of a process of its own
 * (setQueueHolderStarter, internal to leases-holder.ts), so that its netlink
 * requests reach the fault campaign's kernel double too. What its entry
 * point (src/cli/bin/watchdog-main.ts with --queue-holder) does is done here:
 * its first line answers its starter, its lines for the user are kept, its
 * exit ends it, SIGTERM is {@link InProcessHolders.terminate}. Its unix
 * socket in the state directory is real: commands reach it as they reach a
 * holder process.
 */
import { runQueueHolder, setQueueHolderStarter } from '../../src/guard/leases-holder.js';

/** One holder started in this process. */
interface Running {
  /** what its SIGTERM handler runs, once it installed one */
  stop?: () => void;
}

/** The holders started while installed: those still running, their exit statuses, what they said. */
export class InProcessHolders {
  readonly running = new Set<Running>();
  readonly exits: number[] = [];
  readonly said: string[] = [];
  /** holders started */
  started = 0;

  /** Start every queue holder in this process from now on; the returned function undoes it. */
  install(): () => void {
    setQueueHolderStarter(
      (cfg) =>
        new Promise((resolve) => {
          const me: Running = {};
          this.running.add(me);
          this.started++;
          let answered = false;
          const end = (code: number) => {
            if (!this.running.delete(me)) return;
            this.exits.push(code);
            if (!answered) resolve({ error: `the queue holder exited at start (status ${code})` });
          };
          runQueueHolder(
            {
              first: (line) => {
                answered = true;
                resolve(line === 'ready' ? {} : { error: line });
              },
              say: (line) => this.said.push(line),
              exit: end,
              onTerm: (stop) => {
                me.stop = stop;
              },
            },
            cfg,
          ).catch((e: unknown) => {
            // a process would die of it: say so, as its stderr would
            this.said.push(`uncaught: ${String(e)}`);
            end(1);
          });
        }),
    );
    return () => setQueueHolderStarter(undefined);
  }

  /** SIGTERM to every running holder (what its entry point does on it: release, then exit). */
  terminate(): void {
    for (const h of this.running) h.stop?.();
  }

  /**
   * Wait until every holder ended.
   * @returns whether they all did within `limitMs`
   */
  async settle(limitMs = 20_000): Promise<boolean> {
    const end = Date.now() + limitMs;
    while (this.running.size > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    return this.running.size === 0;
  }
}
