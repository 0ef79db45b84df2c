/**
 * Live, this machine's kernel, each scenario in a network namespace of its
 * own: a local queue hold whose nftables table someone deleted (the
 * reference `nft delete table`) is partly set up, `synplug check` exit 12,
 * as long as the address setup added is still there; when the address was
 * the user's own (setup did not add it), nothing of synplug's is left and
 * check says so, exit 1. Oracles: nft and ip by absolute path.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';
import { IP, onLo, stateEnv, synplug, tables } from '../helpers/queue-live.js';

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_CHECK_TABLE_DELETED_SCENARIO';
const ADDR = '169.254.97.1';

/** Set up the local queue hold, delete its table with nft, and ask check (text and --json), then tear down. */
function deleteTableAndCheck(): Record<string, unknown> {
  const { env } = stateEnv();
  const set = synplug(['setup', '--via', 'queue', '--addr', ADDR, '--json'], env);
  const before = synplug(['check'], env).code;
  const result = JSON.parse(set.stdout) as { addedAddress: boolean; queue: { table: string } };
  const table = result.queue.table;
  execFileSync('/usr/sbin/nft', ['delete', 'table', 'inet', table]);
  const text = synplug(['check'], env);
  const json = synplug(['check', '--json'], env);
  const down = synplug(['teardown'], env);
  return {
    setup: set.code,
    addedAddress: result.addedAddress,
    before,
    tablesAfterDelete: tables(),
    text: { code: text.code, stdout: text.stdout },
    json: { code: json.code, value: JSON.parse(json.stdout) as unknown },
    teardown: down.code,
    onLoAfter: onLo(ADDR),
  };
}

const scenarios = {
  // setup adds the address (it is not on lo): it stays, marked as synplug's, when the table goes
  async added() {
    return deleteTableAndCheck();
  },
  // the address is the user's own, on lo before setup: with the table gone, nothing of synplug's is left
  async own() {
    execFileSync(IP, ['addr', 'add', `${ADDR}/32`, 'dev', 'lo']);
    return deleteTableAndCheck();
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');
  test('a recorded local queue hold whose table was deleted, its address still there: check exits 12 naming the missing pieces', (t) => {
    // biome-ignore lint/suspicious/noExplicitAny: the scenario's JSON, asserted field by field
    const r = inOwnNetns<any>(SELF, ENV, 'added');
    t.is(r.setup, 0);
    t.true(r.addedAddress, 'setup added the address');
    t.is(r.before, 0);
    t.false(
      r.tablesAfterDelete.some((x: string) => x.startsWith('inet synplug')),
      r.tablesAfterDelete.join(', '),
    );
    t.is(r.text.code, 12, r.text.stdout);
    t.regex(r.text.stdout, /MISSING\s+nftables table inet synplug/);
    t.regex(r.text.stdout, new RegExp(`ok\\s+address ${ADDR.replaceAll('.', '\\.')} on lo`));
    t.is(r.json.code, 12);
    t.is(r.json.value.state, 'partial');
    t.deepEqual(
      r.json.value.holds.map((h: { state: string }) => h.state),
      ['partial'],
    );
    t.is(r.teardown, 0);
    t.false(r.onLoAfter, 'teardown removed the address setup added');
  });

  test("the same with the user's own address: nothing of synplug's is left, check exits 1", (t) => {
    // biome-ignore lint/suspicious/noExplicitAny: the scenario's JSON, asserted field by field
    const r = inOwnNetns<any>(SELF, ENV, 'own');
    t.is(r.setup, 0);
    t.false(r.addedAddress, 'setup found the address there');
    t.is(r.before, 0);
    t.is(r.text.code, 1, r.text.stdout);
    t.is(r.json.code, 1);
    t.is(r.json.value.state, 'absent');
    t.is(r.teardown, 0);
    t.true(r.onLoAfter, "teardown leaves the user's address");
  });
}
