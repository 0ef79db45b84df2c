/**
 * `setup --inbound DEV --port 8080` while the server listens only on port 80
 * (a new user's check, issue 22): neither setup nor check noticed that
 * nothing listens on the held port. Now both say so in a notice (not an
 * error: the server may start later): text and --json (`portsNotListened`);
 * a held port with a listener gets no notice. Its own namespace, a veth pair.
 */
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';
import { IP, stateEnv, synplug } from '../helpers/queue-live.js';

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_SETUP_PORT_NOT_LISTENED_SCENARIO';
const NOTICE =
  "notice: nothing listens on held port 8080 now: a client held there is refused at the release until a server listens there (it may start later; check the server's port, or 'protect --wait-listen 8080' waits for it)";

const scenarios = {
  async notListened() {
    const { env } = stateEnv();
    execFileSync(IP, ['link', 'add', 'sp-nl0', 'type', 'veth', 'peer', 'name', 'sp-nl1']);
    execFileSync(IP, ['link', 'set', 'sp-nl0', 'up']);
    const server = spawn(
      'python3',
      ['-c', "import socket,sys,time\ns=socket.socket()\ns.bind(('0.0.0.0',80))\ns.listen()\nprint('up',flush=True)\ntime.sleep(60)"],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    await new Promise<void>((r) => server.stdout!.once('data', () => r()));
    try {
      const setup = synplug(['setup', '--inbound', 'sp-nl0', '--port', '80', '--port', '8080'], env);
      const check = synplug(['check'], env);
      const checkJson = synplug(['check', '--json'], env);
      const again = synplug(['setup', '--inbound', 'sp-nl0', '--port', '80', '--port', '8080', '--json'], env);
      synplug(['teardown'], env);
      // only the port the server listens on: no notice
      const heard = synplug(['setup', '--inbound', 'sp-nl0', '--port', '80'], env);
      const heardCheck = synplug(['check', '--json'], env);
      synplug(['teardown'], env);
      return {
        setup,
        check,
        checkSysctl: JSON.parse(checkJson.stdout).sysctl as unknown,
        again: { code: again.code, json: JSON.parse(again.stdout) as unknown },
        heard,
        heardSysctl: JSON.parse(heardCheck.stdout).sysctl as unknown,
      };
    } finally {
      server.kill();
    }
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');

  test('setup --inbound and check notice a held port nothing listens on (a notice, exit 0); none for a port with a listener', (t) => {
    // biome-ignore lint/suspicious/noExplicitAny: the scenario's JSON, asserted field by field
    const r = inOwnNetns<any>(SELF, ENV, 'notListened', 90_000);
    t.is(r.setup.code, 0, r.setup.stderr);
    t.true(r.setup.stdout.trimEnd().endsWith(NOTICE), r.setup.stdout);
    t.is(r.check.code, 0, r.check.stdout);
    t.true(r.check.stdout.trimEnd().endsWith(NOTICE), r.check.stdout);
    t.deepEqual(r.checkSysctl.portsNotListened, [8080]);
    t.is(r.again.code, 0);
    t.deepEqual(r.again.json.portsNotListened, [8080]);
    t.is(r.heard.code, 0, r.heard.stderr);
    t.notRegex(r.heard.stdout, /notice/);
    t.is(r.heardSysctl.portsNotListened, undefined);
  });
}
