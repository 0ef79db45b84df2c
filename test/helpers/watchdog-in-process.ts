/**
 * The watchdog's own logic (src/guard/watchdog-child.ts) run in the test's
 * process instead of a process of its own (setWatchdogStarter, internal to
 * src/guard/watchdog.ts), so that its requests reach the fault campaign's
 * kernel double too. What its entry point (src/cli/bin/watchdog-main.ts)
 * does is done here: `arm` and `done` lines, the end of its input, and
 * SIGTERM ({@link InProcessWatchdogs.terminate}).
 */
import { setWatchdogStarter } from '../../src/guard/watchdog.js';
import { WatchdogChild, type WatchdogEnd } from '../../src/guard/watchdog-child.js';

/** The watchdogs started while installed: those still running, how each ended, what they reported. */
export class InProcessWatchdogs {
  readonly running = new Set<WatchdogChild>();
  readonly ends: WatchdogEnd[] = [];
  readonly reports: string[] = [];

  /** Start every watchdog in this process from now on; the returned function undoes it. */
  install(): () => void {
    setWatchdogStarter(async () => {
      const child: WatchdogChild = new WatchdogChild({
        report: (line) => this.reports.push(line),
        onEnd: (end) => {
          this.ends.push(end);
          this.running.delete(child);
        },
      });
      this.running.add(child);
      return {
        pid: process.pid,
        arm: (a) => child.line(JSON.stringify({ op: 'arm', ...a })),
        done: () => child.line(JSON.stringify({ op: 'done' })),
        handOver: () => child.inputEnded(),
      };
    });
    return () => setWatchdogStarter(undefined);
  }

  /** SIGTERM to every running watchdog (what watchdog-main does on it: act now). */
  terminate(): void {
    for (const c of this.running) void c.fire('SIGTERM received');
  }

  /**
   * Wait until every watchdog ended (a manual plug's acts at its deadline), but those in `except`.
   * @returns whether they all did within `limitMs`
   */
  async settle(limitMs = 20_000, except: ReadonlySet<WatchdogChild> = new Set()): Promise<boolean> {
    const end = Date.now() + limitMs;
    const left = () => [...this.running].filter((c) => !except.has(c)).length;
    while (left() > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    return left() === 0;
  }
}
