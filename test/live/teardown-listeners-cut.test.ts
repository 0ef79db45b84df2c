/**
 * teardown of the local hold removes its address while a server listens on
 * it (a new user's check, issue 22: HAProxy on 169.254.255.254, removed
 * without a word; its clients then failed until setup ran again). Now it
 * names each listener that accepted connections to the removed address
 * (bound to it, or to the wildcard) and its process, and says its clients
 * are refused until setup runs again: text and --json (`listenersCut`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';
import { stateEnv, synplug } from '../helpers/queue-live.js';

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_TEARDOWN_LISTENERS_CUT_SCENARIO';
const ADDR = '169.254.255.254';

/** A python3 listener on addr:port (started after the address exists). */
async function listen(addr: string, port: number): Promise<ChildProcess> {
  const p = spawn('python3', ['-c', `import socket,time\ns=socket.socket()\ns.bind(('${addr}',${port}))\ns.listen()\nprint('up',flush=True)\ntime.sleep(60)`], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((r) => p.stdout!.once('data', () => r()));
  return p;
}

const scenarios = {
  async cut() {
    const { env } = stateEnv();
    synplug(['setup'], env);
    const bound = await listen(ADDR, 80);
    const wild = await listen('0.0.0.0', 8081);
    const local = await listen('127.0.0.1', 8082); // not on the removed address: not named
    try {
      const text = synplug(['teardown'], env);
      synplug(['setup'], env);
      const json = synplug(['teardown', '--json'], env);
      // nothing listening: no warning
      bound.kill();
      wild.kill();
      await new Promise((r) => setTimeout(r, 200));
      synplug(['setup'], env);
      const quiet = synplug(['teardown', '--json'], env);
      return {
        pids: [bound.pid, wild.pid],
        text,
        json: { code: json.code, out: JSON.parse(json.stdout) as unknown },
        quiet: JSON.parse(quiet.stdout) as unknown,
      };
    } finally {
      for (const p of [bound, wild, local]) p.kill();
    }
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');

  test('teardown names the listeners on an address it removes, and says their clients are refused until setup runs again (text, --json)', (t) => {
    // biome-ignore lint/suspicious/noExplicitAny: the scenario's JSON, asserted field by field
    const r = inOwnNetns<any>(SELF, ENV, 'cut', 90_000);
    const [bound, wild] = r.pids as number[];
    t.is(r.text.code, 0, r.text.stderr);
    t.true(r.text.stdout.includes(`address ${ADDR}/32 on lo`), r.text.stdout);
    const warnings = r.text.stdout.split('\n').filter((l: string) => l.startsWith('warning: '));
    t.deepEqual(warnings, [
      `warning: python3 (pid ${bound}) listens on ${ADDR}:80, and this teardown removed the address ${ADDR}: its clients connecting to ${ADDR}:80 are refused until setup runs again (it adds the address back)`,
      `warning: python3 (pid ${wild}) listens on 0.0.0.0:8081, and this teardown removed the address ${ADDR}: its clients connecting to ${ADDR}:8081 are refused until setup runs again (it adds the address back)`,
    ]);
    t.is(r.json.code, 0);
    t.deepEqual(
      r.json.out.listenersCut.map((l: { address: string; listener: string; port: number; commands: string[]; pids: number[] }) => [
        l.address,
        l.listener,
        l.port,
        l.commands,
        l.pids.length,
      ]),
      [
        [ADDR, ADDR, 80, ['python3'], 1],
        [ADDR, '0.0.0.0', 8081, ['python3'], 1],
      ],
    );
    t.is(r.quiet.listenersCut, undefined, 'nothing listening there: nothing said');
  });
}
