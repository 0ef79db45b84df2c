/**
 * Live, this machine's kernel (no sch_plug: `--via queue` holds): the
 * `--inbound DEV` selector of `teardown`, `status` and `check` names the
 * queue hold of DEV (record key `queue:DEV`), and only it; other holds (the
 * queue hold of another device, the local queue hold) are left as they are.
 * The kernel's own view is the oracle: `nft -j list tables` (/usr/sbin/nft).
 * A name that matches two holds set up is a usage error naming both (a plug
 * hold cannot be set up on this kernel: the selector is asked directly, with
 * a record listing both kinds of hold of one device).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';
import { untyped } from '../helpers/untyped.js';

// biome-ignore lint/suspicious/noExplicitAny: the scenarios' JSON results, asserted field by field
type Json = Record<string, any>;

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_GUARD_QUEUE_SELECT_SCENARIO';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'dist/bundle/synplug.cjs');
const NFT = '/usr/sbin/nft';
const IP = '/usr/sbin/ip';

/** Run the CLI; its status and output (JSON parsed when it is). */
function synplug(args: string[], env: NodeJS.ProcessEnv): { code: number; stderr: string; json?: Json } {
  const r = spawnSync(process.execPath, [BIN, ...args], { env, encoding: 'utf8', timeout: 60_000 });
  let json: Json | undefined;
  try {
    json = JSON.parse(r.stdout) as Json;
  } catch {
    json = undefined;
  }
  return { code: r.status ?? -1, stderr: r.stderr, ...(json && { json }) };
}

/** The tables of the namespace, as `family name`, sorted. */
function tables(): string[] {
  const j = JSON.parse(execFileSync(NFT, ['-j', 'list', 'tables'], { encoding: 'utf8' })) as { nftables: Array<{ table?: { family: string; name: string } }> };
  return j.nftables.flatMap((o) => (o.table ? [`${o.table.family} ${o.table.name}`] : [])).sort();
}

/** A veth pair (both ends here, up). */
function veth(a: string, b: string): void {
  execFileSync(IP, ['link', 'add', a, 'type', 'veth', 'peer', 'name', b]);
  execFileSync(IP, ['link', 'set', a, 'up']);
  execFileSync(IP, ['link', 'set', b, 'up']);
}

const scenarios = {
  /** Queue holds on two devices and the local queue hold; each command with --inbound of the first device. */
  async select() {
    const dir = mkdtempSync(join(tmpdir(), 'sp-qsel-'));
    const env = { ...process.env, SYNPLUG_STATE_DIR: join(dir, 'state') };
    veth('sqa0', 'sqa1');
    veth('sqb0', 'sqb1');
    execFileSync(IP, ['link', 'property', 'add', 'dev', 'sqa0', 'altname', 'sqa-alt']);
    const setups = [
      synplug(['setup', '--via', 'queue', '--inbound', 'sqa0', '--port', '39401', '--json'], env),
      synplug(['setup', '--via', 'queue', '--inbound', 'sqb0', '--port', '39402', '--json'], env),
      synplug(['setup', '--via', 'queue', '--addr', '169.254.79.1', '--json'], env),
    ].map((r) => ({ code: r.code, hold: r.json?.hold, stderr: r.stderr }));
    // a protect makes the reload report's counters table (its chain goes after the report; the table stays)
    const protect = synplug(['protect', '--', 'true'], env);
    const tablesBefore = tables();
    const status = synplug(['status', '--inbound', 'sqa0', '--json'], env);
    const check = synplug(['check', '--inbound', 'sqa-alt', '--json'], env);
    const checkOther = synplug(['check', '--inbound', 'sqb0', '--json'], env);
    const down = synplug(['teardown', '--inbound', 'sqa0', '--json'], env);
    const tablesAfter = tables();
    const checkAfter = synplug(['check', '--json'], env);
    const checkGone = synplug(['check', '--inbound', 'sqa0', '--json'], env);
    const downAgain = synplug(['teardown', '--inbound', 'sqa0', '--json'], env);
    const tablesAfterAgain = tables();
    const byId = synplug(['teardown', '--hold', 'queue:sqb0', '--json'], env);
    const tablesAfterById = tables();
    synplug(['teardown'], env);
    const tablesEnd = tables();
    // only an inbound hold set up: a plain teardown names its device, not the local hold's lo
    synplug(['setup', '--via', 'queue', '--inbound', 'sqa0', '--port', '39401'], env);
    const downOnlyInbound = synplug(['teardown', '--json'], env);
    rmSync(dir, { recursive: true, force: true });
    const holds = (r: { json?: Json }) => (r.json?.holds ?? []).map((h: Json) => ({ id: h.id, via: h.via, dev: h.dev, state: h.state }));
    return {
      setups,
      protect: protect.code,
      tablesBefore,
      status: { code: status.code, state: status.json?.state, holds: holds(status), stderr: status.stderr },
      check: { code: check.code, state: check.json?.state, holds: holds(check), stderr: check.stderr },
      checkOther: { code: checkOther.code, holds: holds(checkOther) },
      down: { code: down.code, holds: down.json?.holds, removed: down.json?.removed, stderr: down.stderr },
      tablesAfter,
      checkAfter: { code: checkAfter.code, state: checkAfter.json?.state, holds: holds(checkAfter) },
      checkGone: { code: checkGone.code, state: checkGone.json?.state, holds: holds(checkGone) },
      downAgain: { code: downAgain.code, nothingSetUp: downAgain.json?.nothingSetUp, holds: downAgain.json?.holds },
      tablesAfterAgain,
      byId: { code: byId.code, holds: byId.json?.holds, dev: byId.json?.dev },
      downOnlyInbound: { code: downOnlyInbound.code, holds: downOnlyInbound.json?.holds, dev: downOnlyInbound.json?.dev },
      tablesAfterById,
      tablesEnd,
    };
  },

  /**
   * The queue hold's table carries synplug's mark; one of its name without the mark (made by someone else) is
   * reported different by check, left alone by teardown, and refused by setup (exit 7, nothing changed).
   */
  async marks() {
    const dir = mkdtempSync(join(tmpdir(), 'sp-qmark-'));
    const env = { ...process.env, SYNPLUG_STATE_DIR: join(dir, 'state') };
    const listTable = () => spawnSync(NFT, ['list', 'table', 'inet', 'synplug_queue'], { encoding: 'utf8' });
    const setup = synplug(['setup', '--via', 'queue', '--addr', '169.254.79.2', '--json'], env);
    const listed = listTable().stdout;
    // someone else's table of that name (no comment)
    execFileSync(NFT, ['delete', 'table', 'inet', 'synplug_queue']);
    execFileSync(NFT, ['add', 'table', 'inet', 'synplug_queue']);
    const check = synplug(['check', '--json'], env);
    const down = synplug(['teardown', '--json'], env);
    const keptTable = listTable().status === 0;
    // setup refuses it (it replaced it whole before: someone else's chains and sets went with it)
    const refused = synplug(['setup', '--via', 'queue', '--addr', '169.254.79.2'], env);
    const stillUnmarked = listTable().stdout;
    execFileSync(NFT, ['delete', 'table', 'inet', 'synplug_queue']);
    const resetup = synplug(['setup', '--via', 'queue', '--addr', '169.254.79.2', '--json'], env);
    const relisted = listTable().stdout;
    synplug(['teardown'], env);
    const goneAtEnd = listTable().status !== 0;
    if (!goneAtEnd) spawnSync(NFT, ['delete', 'table', 'inet', 'synplug_queue']);
    rmSync(dir, { recursive: true, force: true });
    return {
      setup: setup.code,
      listed,
      check: { code: check.code, state: check.json?.state },
      down: { code: down.code, kept: down.json?.kept, removed: down.json?.removed },
      keptTable,
      refused: { code: refused.code, stderr: refused.stderr },
      stillUnmarked,
      resetup: resetup.code,
      relisted,
      goneAtEnd,
    };
  },

  /** One device with a plug hold and a queue hold in the record: the selector refuses to pick one. */
  async ambiguous() {
    veth('sqc0', 'sqc1');
    const { selectInbound } = await import('../../src/guard/modes/index.js');
    const { NetlinkConnection } = await import('../../src/netlink/connection.js');
    const { NETLINK_ROUTE } = await import('../../src/netlink/message.js');
    const route = NetlinkConnection.open(NETLINK_ROUTE);
    const sockets = { route, nft: route };
    const entry = { dev: 'sqc0', createdAt: 1 };
    const both = { version: 2, holds: { 'inbound:sqc0': { ...entry, mode: 'inbound' }, 'queue:sqc0': { ...entry, mode: 'queue' } } };
    const onlyQueue = { version: 2, holds: { 'queue:sqc0': { ...entry, mode: 'queue' } } };
    const attempt = async (record: unknown, dev: string) => {
      try {
        return { ok: await untyped(selectInbound)(sockets, record, dev) };
      } catch (e) {
        return { error: (e as Error).name, category: (e as { category?: string }).category, message: (e as Error).message };
      }
    };
    const r = {
      both: await attempt(both, 'sqc0'),
      onlyQueue: await attempt(onlyQueue, 'sqc0'),
      none: await attempt(undefined, 'sqc0'),
      lo: await attempt(undefined, 'lo'),
    };
    route.close();
    return r;
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');

  test("the queue hold's table carries synplug's mark; an unmarked table of its name is different for check, kept by teardown, refused by setup (exit 7: it replaced it whole)", (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'marks', 120_000);
    // synplug's mark, the queue number and the state directory's mark (issue #19: a table says whose hold it is)
    const mark = /comment "synplug: made by synplug setup, removed by synplug teardown; queue 4200; state [0-9a-f]{16}"/;
    t.is(r.setup, 0);
    t.regex(r.listed, mark);
    t.is(r.check.code, 12, 'set up, but differently');
    t.is(r.check.state, 'partial');
    t.is(r.down.code, 0);
    t.true(r.keptTable, 'teardown left the unmarked table');
    t.true(
      (r.down.kept as string[]).some((k) => /synplug_queue: it does not carry synplug's mark/.test(k)),
      JSON.stringify(r.down),
    );
    t.false(
      (r.down.removed as string[]).some((k) => k.includes('synplug_queue')),
      JSON.stringify(r.down),
    );
    t.is(r.refused.code, 7, r.refused.stderr);
    t.regex(r.refused.stderr, /nftables table inet synplug_queue exists and does not carry synplug's mark .* Nothing was changed/);
    t.notRegex(r.stillUnmarked, /comment/, 'the unmarked table is as it was');
    t.is(r.resetup, 0);
    t.regex(r.relisted, mark);
    t.true(r.goneAtEnd);
  });

  test('--inbound DEV selects the queue hold of DEV: status, check (by an altname), teardown; the other holds are left alone', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'select', 120_000);
    t.deepEqual(
      r.setups.map((s: Json) => [s.code, s.hold]),
      [
        [0, 'queue:sqa0'],
        [0, 'queue:sqb0'],
        [0, 'queue'],
      ],
      JSON.stringify(r.setups),
    );
    // the reload report's counters (inet synplug_report) are made by the first protect and stay until the last hold goes
    t.is(r.protect, 0);
    t.deepEqual(r.tablesBefore, ['inet synplug_queue', 'inet synplug_queue_sqa0', 'inet synplug_queue_sqb0', 'inet synplug_report']);
    t.is(r.status.code, 0, r.status.stderr);
    t.is(r.status.state, 'ok');
    t.deepEqual(r.status.holds, [{ id: 'queue:sqa0', via: 'queue', dev: 'sqa0', state: 'ok' }]);
    t.is(r.check.code, 0, r.check.stderr);
    t.is(r.check.state, 'ok');
    t.deepEqual(r.check.holds, [{ id: 'queue:sqa0', via: 'queue', dev: 'sqa0', state: 'ok' }]);
    t.deepEqual(r.checkOther.holds, [{ id: 'queue:sqb0', via: 'queue', dev: 'sqb0', state: 'ok' }]);
    t.is(r.down.code, 0, r.down.stderr);
    t.deepEqual(r.down.holds, ['queue:sqa0']);
    t.true(r.down.removed.includes('nftables table inet synplug_queue_sqa0'), JSON.stringify(r.down.removed));
    t.deepEqual(r.tablesAfter, ['inet synplug_queue', 'inet synplug_queue_sqb0', 'inet synplug_report'], "the other holds' tables are still there");
    t.is(r.checkAfter.code, 0);
    t.is(r.checkAfter.state, 'ok');
    t.deepEqual(r.checkAfter.holds.map((h: Json) => h.id).sort(), ['queue', 'queue:sqb0']);
    t.is(r.checkGone.state, 'absent');
    t.not(r.checkGone.code, 0);
    t.is(r.downAgain.code, 0);
    t.regex(r.downAgain.nothingSetUp, /no inbound hold of sqa0 is set up/);
    t.deepEqual(r.tablesAfterAgain, r.tablesAfter);
    t.deepEqual(r.byId, { code: 0, holds: ['queue:sqb0'], dev: 'sqb0' }, 'teardown --hold ID picks one hold, and names its device');
    t.deepEqual(r.downOnlyInbound, { code: 0, holds: ['queue:sqa0'], dev: 'sqa0' }, 'only an inbound hold: teardown names its device, not lo');
    t.deepEqual(r.tablesAfterById, ['inet synplug_queue', 'inet synplug_report']);
    t.deepEqual(r.tablesEnd, []);
  });

  test('--inbound DEV naming a plug hold and a queue hold set up is a usage error naming both; one recorded is that one', (t) => {
    const r = inOwnNetns<Json>(SELF, ENV, 'ambiguous', 60_000);
    t.is(r.both.error, 'UsageError');
    t.is(r.both.category, 'usage');
    t.regex(r.both.message, /--inbound sqc0 names 2 holds set up on sqc0: inbound:sqc0 \(via plug\), queue:sqc0 \(via queue\)/);
    t.regex(r.both.message, /synplug teardown --hold ID/);
    t.deepEqual(r.onlyQueue.ok, { id: 'queue:sqc0', mode: 'queue', dev: 'sqc0', ifindex: r.onlyQueue.ok.ifindex });
    t.true(Number.isInteger(r.onlyQueue.ok.ifindex) && r.onlyQueue.ok.ifindex > 1);
    t.is(r.none.ok.id, 'inbound:sqc0', 'nothing recorded: the first inbound mode answers (a hold not set up)');
    t.is(r.lo.category, 'usage', 'lo is refused as setup refuses it');
  });

  test.after.always(() => {
    for (const d of readdirSync(tmpdir())) if (d.startsWith('sp-qsel-')) rmSync(join(tmpdir(), d), { recursive: true, force: true });
  });
}
