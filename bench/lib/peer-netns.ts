/**
 * Helpers of the data-path benchmarks that run in a namespace of their own
 * (scripts/in-netns.sh) and put their clients in a second one:
 * bench/inbound-cost.ts, bench/queue-hold.ts.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readlinkSync } from 'node:fs';

/** The value after `--NAME` on the command line, else `def`. */
export function benchArg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : def;
}

/**
 * A second network namespace: an `unshare --net sleep 3600` process (kill it
 * to end the namespace); resolves once the process is in it (bounded: 5 s).
 */
export async function otherNamespace(): Promise<ChildProcess> {
  const mine = readlinkSync('/proc/self/ns/net');
  const p = spawn('unshare', ['--net', 'sleep', '3600'], { stdio: 'ignore' });
  for (let i = 0; i < 500; i++) {
    try {
      if (readlinkSync(`/proc/${p.pid}/ns/net`) !== mine) return p;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('unshare did not enter a new network namespace');
}
