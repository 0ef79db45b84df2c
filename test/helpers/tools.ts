/**
 * The system tools the tc tests use for set-up and as oracles (`ip`, `tc`,
 * `sysctl`), run synchronously: test/live/tc-*.test.ts on this machine's
 * kernel, test/kernel/tc-kernel.test.ts in the VM.
 */
import { execFileSync } from 'node:child_process';

/** Run a tool and return its stdout; throws (execFileSync's error, with its stderr) on a non-zero status. */
export function run(cmd: string, ...args: string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8' });
}

/** Run a tool, ignoring its output and its failure (e.g. deleting a device that is already gone). */
export function quietly(cmd: string, ...args: string[]): void {
  try {
    execFileSync(cmd, args, { stdio: 'ignore' });
  } catch {
    /* gone already */
  }
}

/** `tc -j ARGS`, parsed; tc prints nothing at all for an empty list, which is `[]` here. */
export function tcj(...args: string[]): Array<Record<string, unknown>> {
  const out = run('tc', '-j', ...args).trim();
  return out === '' ? [] : JSON.parse(out);
}

/** Delete network devices (`ip link del`), ignoring those that do not exist (a veth's peer goes with it). */
export function deleteLinks(...names: string[]): void {
  for (const d of names) quietly('ip', 'link', 'del', d);
}
