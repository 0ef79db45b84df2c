/**
 * Live, this machine's kernel (no sch_plug: the queue hold is the one it
 * supports), in a network namespace of its own: with nothing recorded,
 * `protect --setup` sets up what `synplug setup` would (--via auto: the
 * queue hold here) and runs the command, instead of failing on the plug
 * hold's missing modules; `protect` and `plug` without a setup exit 8
 * saying that nothing is recorded, naming no piece of a hold this kernel
 * cannot have. A plug hold's option (`--mark`) still asks for the plug hold.
 * Oracles: `nft list ruleset` and `ip addr` by absolute path, the marker
 * file the command writes.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';
import { onLo, stateEnv, synplug, tables } from '../helpers/queue-live.js';

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_PROTECT_SETUP_AUTO_SCENARIO';

const scenarios = {
  async notRecorded() {
    const { dir, env } = stateEnv();
    const tmp = mkdtempSync(join(tmpdir(), 'sp-psa-'));
    const ran = join(tmp, 'ran');
    try {
      const refused = synplug(['protect', '--', 'touch', ran], env);
      const refusedRan = existsSync(ran);
      const plug = synplug(['plug'], env);
      const mark = synplug(['protect', '--setup', '--mark', '5', '--', 'touch', ran], env);
      const markRan = existsSync(ran);
      const tablesAfterMark = tables();
      const set = synplug(['protect', '--setup', '--json', '--', 'touch', ran], env);
      const after = {
        ran: existsSync(ran),
        tables: tables(),
        onLo: onLo('169.254.255.254'),
        ruleset: execFileSync('/usr/sbin/nft', ['list', 'ruleset'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }),
      };
      const check = synplug(['check', '--json'], env);
      const down = synplug(['teardown'], env);
      return {
        dir,
        refused: { code: refused.code, stderr: refused.stderr, ran: refusedRan },
        plug: { code: plug.code, stderr: plug.stderr },
        mark: { code: mark.code, stderr: mark.stderr, ran: markRan, tables: tablesAfterMark },
        set: { code: set.code, stderr: set.stderr, json: JSON.parse(set.stdout) as unknown },
        after,
        check: { code: check.code, json: JSON.parse(check.stdout) as unknown },
        teardown: down.code,
        tablesAtEnd: tables(),
      };
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');

  test('nothing recorded: protect and plug exit 8 naming setup.json; protect --setup takes the hold this kernel supports', (t) => {
    // biome-ignore lint/suspicious/noExplicitAny: the scenario's JSON, asserted field by field
    const r = inOwnNetns<any>(SELF, ENV, 'notRecorded', 90_000);
    const file = join(r.dir, 'state', 'setup.json');
    t.is(r.refused.code, 8, r.refused.stderr);
    t.false(r.refused.ran, 'the command was not run');
    t.true(r.refused.stderr.includes(`no hold is recorded in ${file}`), r.refused.stderr);
    t.regex(
      r.refused.stderr,
      /Run 'synplug setup' for local clients .*'synplug doctor' lists them; --setup sets up the same first\); for clients from the network .*'synplug setup --inbound DEV --port PORT'\. The command was NOT run/,
    );
    t.notRegex(r.refused.stderr, /qdisc|sch_|MISSING|missing/, 'no piece of the plug hold, which this kernel cannot have');
    t.is(r.plug.code, 8, r.plug.stderr);
    t.true(r.plug.stderr.includes(`no hold is recorded in ${file}`), r.plug.stderr);
    t.notRegex(r.plug.stderr, /--setup/);

    // --mark is the plug hold's option: as 'synplug setup --mark 5', the plug hold, which this kernel lacks
    t.is(r.mark.code, 5, r.mark.stderr);
    t.regex(r.mark.stderr, /sch_plug/);
    t.false(r.mark.ran);
    t.false(
      r.mark.tables.some((x: string) => x.startsWith('inet synplug')),
      'nothing was set up',
    );

    t.is(r.set.code, 0, r.set.stderr);
    t.regex(
      r.set.stderr,
      /set up first: synplug queue hold set up: SYNs to 169\.254\.255\.254 from this host.*add table inet synplug_queue\. It holds local clients only; /,
    );
    t.is(r.set.json.exitCode, 0);
    t.deepEqual(r.set.json.holds, [{ id: 'queue', via: 'queue' }]);
    t.true(r.after.ran, 'the command ran');
    t.true(r.after.tables.includes('inet synplug_queue'), r.after.tables.join(', '));
    t.true(r.after.onLo);
    // its table; the chain and rules naming the address exist only around a hold
    t.regex(r.after.ruleset, /table inet synplug_queue \{/);
    t.notRegex(r.after.ruleset, /\bhook\b/, 'no base chain of synplug outside a hold');
    t.is(r.check.code, 0);
    t.is(r.check.json.state, 'ok');
    t.is(r.teardown, 0);
    t.false(
      r.tablesAtEnd.some((x: string) => x.startsWith('inet synplug_queue')),
      r.tablesAtEnd.join(', '),
    );
  });
}
