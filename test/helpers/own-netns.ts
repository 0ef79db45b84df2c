/**
 * Live tests whose scenarios each need a network namespace of their own (their
 * own `lo`, rules and queues): the test file starts itself again under
 * `unshare --net` with an environment variable naming the scenario; the child
 * runs it and prints its observations as JSON, which the test asserts on.
 */
import { execFileSync } from 'node:child_process';

/** The scenario a child runs, from `envVar`; undefined in the test process. */
export function scenarioName(envVar: string): string | undefined {
  return process.env[envVar];
}

/**
 * In the child: run the scenario named by `envVar`, print its result as JSON, exit.
 * @returns false in the test process (no scenario named)
 */
export async function runScenarioIfChild(envVar: string, scenarios: Record<string, () => Promise<unknown>>): Promise<boolean> {
  const name = process.env[envVar];
  if (!name) return false;
  const f = scenarios[name];
  if (!f) throw new Error(`no scenario '${name}'`);
  const result = await f();
  process.stdout.write(JSON.stringify(result));
  process.exit(0);
}

/**
 * Run scenario `name` of test file `self` in a fresh network namespace
 * (`lo` up), as a child process; its JSON result. With `privateRun`, also in
 * a mount namespace of its own (private propagation) with an empty tmpfs on
 * /run: its /run/synplug and /run/netns are its own, apart from those of the
 * live test files running meanwhile.
 */
export function inOwnNetns<T = Record<string, unknown>>(
  self: string,
  envVar: string,
  name: string,
  timeoutMs = 45_000,
  opts: { privateRun?: boolean } = {},
): T {
  const unshare = opts.privateRun ? ['--net', '--mount', '--propagation', 'private'] : ['--net'];
  const prelude = opts.privateRun ? 'mount -t tmpfs -o mode=0755 synplug-test-run /run && ip link set lo up' : 'ip link set lo up';
  const out = execFileSync('unshare', [...unshare, '--', 'bash', '-c', `${prelude} && exec "$@"`, 'own-netns', process.execPath, '--import=tsx', self], {
    env: { ...process.env, [envVar]: name },
    encoding: 'utf8',
    timeout: timeoutMs,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return JSON.parse(out) as T;
}
