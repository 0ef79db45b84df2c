/**
 * The named network namespace of a demo live test file (`ip netns add`, `lo`
 * up), made before its tests and deleted after them, with the built CLI
 * checked first.
 */
import type { TestFn } from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';

const IP = '/usr/sbin/ip';

/**
 * Register the file's `before` (the CLI `bin` exists; namespace `ns` made, its `lo` up)
 * and `after.always` (the namespace deleted, then each of `dirs` removed).
 */
export function demoNetnsAround(test: TestFn, ns: string, bin: string, dirs: readonly string[]): void {
  test.before(() => {
    if (!existsSync(bin)) throw new Error(`${bin} missing: run npm run build first`);
    execFileSync(IP, ['netns', 'add', ns]);
    execFileSync(IP, ['-n', ns, 'link', 'set', 'lo', 'up']);
  });
  test.after.always(() => {
    spawnSync(IP, ['netns', 'del', ns]);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
}
