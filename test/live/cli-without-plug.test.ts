/**
 * The built CLI on a kernel without sch_plug (this machine's: `--via auto`
 * takes the queue hold), in a network namespace of this file's own:
 * - `setup --inbound DEV --port P` run again for another port set is refused
 *   (exit 2, nothing changed: the kernel's rules, as nft lists them, hold the
 *   first set still), naming what is held and the commands that hold both;
 * - with nothing set up, `check`, `status` and `release` say so and name the
 *   hold `synplug setup` makes on this kernel, not the plug hold's pieces;
 * - `release` after one's own `plug` says the manual plug's hold ended, and
 *   a second `release` that nothing was held.
 */
import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'dist/bundle/synplug.cjs');
const NS = `spfh${process.pid}`;
const TMP = mkdtempSync(join(tmpdir(), 'synplug-fh-'));
const IP = '/usr/sbin/ip';
const NFT = '/usr/sbin/nft';
const VETH = `spfh${process.pid % 100000}`;
let n = 0;

/** A fresh state directory for one test. */
const stateDir = (): string => join(TMP, `s${n++}`);

function synplug(state: string, args: string[]) {
  const r = spawnSync(IP, ['netns', 'exec', NS, process.execPath, BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, SYNPLUG_STATE_DIR: state },
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The ruleset of the namespace, as nft lists it. */
const ruleset = (): string => execFileSync(IP, ['netns', 'exec', NS, NFT, 'list', 'ruleset'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

test.before(() => {
  if (!existsSync(BIN)) throw new Error(`${BIN} missing: run npm run build first`);
  execFileSync(IP, ['netns', 'add', NS]);
  execFileSync(IP, ['-n', NS, 'link', 'set', 'lo', 'up']);
  execFileSync(IP, ['-n', NS, 'link', 'add', `${VETH}a`, 'type', 'veth', 'peer', 'name', `${VETH}b`]);
  execFileSync(IP, ['-n', NS, 'link', 'set', `${VETH}a`, 'up']);
});
test.after.always(() => {
  spawnSync(IP, ['netns', 'del', NS]);
  rmSync(TMP, { recursive: true, force: true });
});

test.serial(
  'setup run again for the local hold with another --addr or --queue-num is refused (exit 2, nothing changed): it left the old address on lo, and a queue number changed only in the record',
  (t) => {
    const s = stateDir();
    const addrs = () => execFileSync(IP, ['-n', NS, '-j', 'addr', 'show', 'dev', 'lo'], { encoding: 'utf8' });
    t.is(synplug(s, ['setup', '--addr', '169.254.91.1']).code, 0);
    const before = [addrs(), ruleset()];
    const moved = synplug(s, ['setup', '--addr', '169.254.91.2']);
    t.is(moved.code, 2);
    t.is(
      moved.stderr.trim(),
      "synplug: the local hold (queue) is set up for address 169.254.91.1; setup does not change it (this one would hold address 169.254.91.2). To change it: 'synplug teardown --local' then 'synplug setup --addr 169.254.91.2' (with your other options). Nothing was changed",
    );
    const renumbered = synplug(s, ['setup', '--addr', '169.254.91.1', '--via', 'queue', '--queue-num', '4201']);
    t.is(renumbered.code, 2);
    t.regex(renumbered.stderr, /is set up for queue number 4200; setup does not change it \(this one would hold queue number 4201\)/);
    t.deepEqual([addrs(), ruleset()], before, 'nothing changed');
    t.is(synplug(s, ['setup', '--addr', '169.254.91.1']).code, 0, 'the same setup again is fine');
    t.is(synplug(s, ['teardown']).code, 0);
    t.notRegex(addrs(), /169\.254\.91\./, 'teardown left no address of the hold');
  },
);

test.serial('setup --inbound run again with another --port is refused (exit 2, nothing changed), naming the held set and how to hold both', (t) => {
  const s = stateDir();
  const dev = `${VETH}a`;
  const first = synplug(s, ['setup', '--inbound', dev, '--port', '80', '--addr', '169.254.90.2']);
  t.is(first.code, 0, first.stderr);
  const before = ruleset();
  t.regex(before, new RegExp(`table inet synplug_queue_${dev} `), 'its table (the rules are armed around each hold only)');
  const again = synplug(s, ['setup', '--inbound', dev, '--port', '443']);
  t.is(again.code, 2);
  t.is(
    again.stderr.trim(),
    `synplug: setup refused, nothing was changed: the inbound queue hold on ${dev} (queue:${dev}) holds port 80 to 169.254.90.2, and setup does not change what a set-up hold holds (this setup asked for port 443 to any address). To change it, remove the hold and give the whole set again, e.g. to hold both: 'synplug teardown --inbound ${dev}' then 'synplug setup --via queue --inbound ${dev} --port 80 --port 443'`,
    'both: port 443 was asked for any address, so the whole set holds any address (--addr 169.254.90.2 would leave 443 to others unheld)',
  );
  t.is(ruleset(), before, 'the refused setup changed nothing');
  // run with --netns from outside: the commands it names carry it (they named none, and would have acted here)
  const outside = spawnSync(process.execPath, [BIN, 'setup', '--inbound', dev, '--port', '443', '--netns', NS], {
    encoding: 'utf8',
    env: { ...process.env, SYNPLUG_STATE_DIR: s },
    timeout: 60_000,
  });
  t.is(outside.status, 2, outside.stderr);
  t.regex(
    outside.stderr,
    new RegExp(
      `to hold both: 'synplug teardown --inbound ${dev} --netns ${NS}' then 'synplug setup --via queue --inbound ${dev} --port 80 --port 443 --netns ${NS}'\n`,
    ),
  );
  t.is(ruleset(), before, 'the refused setup changed nothing');
  const dry = synplug(s, ['setup', '--dry-run', '--inbound', dev, '--port', '443']);
  t.is(dry.code, 2, 'the dry run refuses it as setup does');
  const check = JSON.parse(synplug(s, ['check', '--json']).stdout) as { holds: Array<{ ports?: number[]; addrs?: string[] }> };
  t.deepEqual(
    check.holds.map((h) => [h.ports, h.addrs]),
    [[[80], ['169.254.90.2']]],
  );
  // the same set again (another order of --port too) is idempotent
  t.is(synplug(s, ['setup', '--inbound', dev, '--port', '80', '--addr', '169.254.90.2']).code, 0);
  // the commands the message names hold both ports
  t.is(synplug(s, ['teardown', '--inbound', dev]).code, 0);
  const both = synplug(s, ['setup', '--via', 'queue', '--inbound', dev, '--port', '80', '--port', '443']);
  t.is(both.code, 0, both.stderr);
  const held = JSON.parse(synplug(s, ['check', '--json']).stdout) as { holds: Array<{ ports?: number[] }> };
  t.deepEqual(held.holds[0].ports, [80, 443]);
  t.is(synplug(s, ['teardown']).code, 0);
});

test.serial('with nothing set up, check, status and release say so and name the hold setup makes on this kernel (not the plug pieces)', (t) => {
  const s = stateDir();
  const want = `synplug is not set up (no hold is recorded in ${join(s, 'setup.json')}). On this kernel 'synplug setup' sets up the local queue hold (queue) for new connections to 169.254.255.254`;
  const c = synplug(s, ['check']);
  t.is(c.code, 1);
  t.true(c.stdout.startsWith(want), c.stdout);
  t.notRegex(c.stdout, /plug 40|prio 1:|MISSING/);
  const cj = JSON.parse(synplug(s, ['check', '--json']).stdout) as { holds: unknown[]; pieces: unknown[]; nothingSetUp: string };
  t.deepEqual(cj.holds, [{ id: 'queue', mode: 'queue', via: 'queue', dev: 'lo', setup: 'synplug setup', state: 'absent' }]);
  t.deepEqual(cj.pieces, []);
  const st = synplug(s, ['status']);
  t.is(st.code, 0);
  t.true(st.stdout.startsWith(`setup: ${want}`), st.stdout);
  t.notRegex(st.stdout, /marking|plug 40|MISSING/);
  const r = synplug(s, ['release']);
  t.is(r.code, 0);
  t.true(r.stdout.startsWith(`nothing was held: ${want}`), r.stdout);
  t.false(existsSync(s), 'none of them made the state directory');
  // what they named is what setup makes
  const setup = JSON.parse(synplug(s, ['setup', '--json']).stdout) as { hold: string; via: string };
  t.deepEqual([setup.hold, setup.via], ['queue', 'queue']);
  t.is(synplug(s, ['teardown']).code, 0);
});

test.serial("release after one's own plug says the manual plug's hold ended; with nothing held, that nothing was held", (t) => {
  const s = stateDir();
  t.is(synplug(s, ['setup']).code, 0);
  const idle = synplug(s, ['release']);
  t.is(idle.code, 0);
  t.is(idle.stdout.trim(), "nothing was held: neither 'synplug plug' nor a protect was holding, so there was nothing to release");
  t.is(synplug(s, ['plug', '--max-hold', '30s']).code, 0);
  const r = synplug(s, ['release', '--json']);
  t.is(r.code, 0, r.stderr);
  const j = JSON.parse(r.stdout) as { brokeLeases: number; brokeManualPlugs: number; released: boolean };
  t.deepEqual([j.released, j.brokeLeases, j.brokeManualPlugs], [true, 1, 1]);
  t.is(synplug(s, ['plug', '--max-hold', '30s']).code, 0);
  const text = synplug(s, ['release']);
  t.regex(
    text.stdout.trim(),
    /^released after holding new connections for \d+\.\d ms \(0 SYN\(s\) held\); this ended the manual plug's hold \('synplug plug'\)$/,
  );
  t.notRegex(text.stdout, /broke/);
  t.is(synplug(s, ['release']).stdout.trim(), "nothing was held: neither 'synplug plug' nor a protect was holding, so there was nothing to release");
  // the releases of nothing (first and last) are no reloads: not in the history (they were, "held 0.0 ms")
  const history = JSON.parse(synplug(s, ['history', '--json']).stdout) as Array<{ command: string }>;
  t.deepEqual(
    history.map((e) => e.command),
    ['plug', 'release', 'plug', 'release'],
  );
  t.is(synplug(s, ['teardown']).code, 0);
});

test.serial('protect on the queue hold speaks of the hold, not of a plug (text and JSON)', (t) => {
  const s = stateDir();
  const before = Date.now();
  t.is(synplug(s, ['setup']).code, 0);
  // right after setup it said "released (last at <setup's time>)", though nothing had held
  const fresh = synplug(s, ['status']);
  const m = /^hold: never held since setup \(at (\S+)\)$/m.exec(fresh.stdout);
  t.truthy(m, fresh.stdout);
  t.true(Date.parse(m![1]) >= before && Date.parse(m![1]) <= Date.now());
  t.notRegex(fresh.stdout, /^hold: released/m);
  const fj = JSON.parse(synplug(s, ['status', '--json']).stdout) as { plug: Record<string, unknown> };
  t.like(fj.plug, { state: 'released', neverHeld: true });
  t.false('releasedAt' in fj.plug, 'nothing was released');
  const r = synplug(s, ['protect', '--json', '--max-hold', '200ms', '--', 'sleep', '1']);
  t.is(r.code, 0, r.stderr);
  // protect's own release, or its watchdog's at the same deadline (whichever came first): either way in hold words
  t.regex(r.stderr, /^synplug: max-hold of 200 ms reached: (released the hold|gave up this hold) while the command still runs$/m);
  const own = r.stderr.split('\n').filter((l) => l.startsWith('synplug: '));
  t.deepEqual(
    own.filter((l) => /\bplug\b/.test(l)),
    [],
  );
  const j = JSON.parse(r.stdout) as Record<string, unknown> & { releasedHold: boolean; maxHoldReached: boolean };
  t.true(j.maxHoldReached);
  t.false('releasedPlug' in j, 'one name for it (no earlier name kept)');
  t.is(j.releasedHold, /released the hold while/.test(r.stderr));
  const st = synplug(s, ['status']);
  t.regex(st.stdout, /^hold: released \(last at /m);
  const after = JSON.parse(synplug(s, ['status', '--json']).stdout) as { plug: Record<string, unknown> };
  t.false('neverHeld' in after.plug, 'held once: no longer never held');
  t.is(typeof after.plug.releasedAt, 'number');
  // the state directory (setup created it) stayed with only the history, unsaid: teardown names it and its files
  const td = synplug(s, ['teardown', '--json']);
  t.is(td.code, 0, td.stderr);
  const tj = JSON.parse(td.stdout) as { removedStateDir?: boolean; keptStateDir?: { path: string; files: string[] } };
  t.falsy(tj.removedStateDir);
  t.deepEqual(tj.keptStateDir, { path: s, files: ['history.jsonl'] });
  t.deepEqual(readdirSync(s), ['history.jsonl'], 'the state files went, the history stayed');
  const again = synplug(s, ['teardown']);
  t.is(again.code, 0);
  t.is(
    again.stdout.trim().split('\n').at(-1),
    `kept ${s} (history.jsonl): the reload history and metrics totals stay after teardown ('synplug history' reads them); remove the directory to drop them`,
  );
  t.is(synplug(s, ['history']).stdout.split('\n').filter(Boolean).length, 1, 'the history still reads');
  // without a history, the directory setup created goes, as before
  const bare = stateDir();
  t.is(synplug(bare, ['setup']).code, 0);
  const gone = JSON.parse(synplug(bare, ['teardown', '--json']).stdout) as { removedStateDir?: boolean; keptStateDir?: unknown };
  t.true(gone.removedStateDir);
  t.false('keptStateDir' in gone);
  t.false(existsSync(bare));
});

test.serial(
  "the plug holds' options (--dev, --mark, --limit) where only queue holds are set up: exit 2 for every command, naming the option and the hold, nothing changed; with nothing set up they name the plug hold, as setup --via auto with them sets up",
  (t) => {
    const s = stateDir();
    const dev = `${VETH}a`;
    // nothing set up: --dev names the plug hold (setup --via auto --dev takes it), so a missing device is one
    const none = synplug(s, ['check', '--dev', 'eth9']);
    t.is(none.code, 2);
    t.regex(none.stderr, /device 'eth9' not found/);
    const plugLo = synplug(s, ['check', '--dev', 'lo', '--json']);
    t.is(plugLo.code, 1);
    t.deepEqual(
      (JSON.parse(plugLo.stdout) as { holds: Array<{ via: string }> }).holds.map((h) => h.via),
      ['plug'],
    );
    t.is(synplug(s, ['setup']).code, 0);
    t.is(synplug(s, ['setup', '--inbound', dev, '--port', '80']).code, 0);
    const before = [ruleset(), readFileSync(join(s, 'setup.json'), 'utf8'), readFileSync(join(s, 'plug.json'), 'utf8')];
    const cases: Array<[string[], string]> = [
      [['check', '--dev', 'eth9'], 'dev'],
      [['check', '--mark', '5'], 'mark'],
      [['check', '--limit', '2048'], 'limit'],
      [['status', '--dev', 'lo'], 'dev'],
      [['plug', '--mark', '7', '--max-hold', '1s'], 'mark'],
      [['release', '--dev', 'lo'], 'dev'],
      [['protect', '--dev', 'eth9', '--', 'true'], 'dev'],
      [['teardown', '--mark', '3'], 'mark'],
    ];
    for (const [args, opt] of cases) {
      const r = synplug(s, args);
      t.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      t.regex(
        r.stderr,
        new RegExp(
          `^synplug: --${opt} is (the local plug hold's|a plug hold's) .*; the holds set up here \\(queue: via queue, queue:${dev}: via queue\\) take no --${opt}: leave it out .*Nothing was changed\n$`,
        ),
        args.join(' '),
      );
      const j = synplug(s, [...args.slice(0, 1), '--json', ...args.slice(1)]);
      t.like(JSON.parse(j.stdout), { category: 'usage', exitCode: 2 });
    }
    t.deepEqual([ruleset(), readFileSync(join(s, 'setup.json'), 'utf8'), readFileSync(join(s, 'plug.json'), 'utf8')], before, 'nothing changed');
    t.is(synplug(s, ['check']).code, 0, 'without them, all is well');
    t.is(synplug(s, ['teardown']).code, 0);
  },
);

test.serial('demo --via plug on a kernel without sch_plug: exit 5 names the queue hold as what works here', (t) => {
  const s = stateDir();
  const missing = synplug(s, ['demo']);
  t.is(missing.code, 2, 'a state directory that does not exist is a usage error, not an internal one');
  t.regex(missing.stderr, new RegExp(`^synplug: state directory ${s}: no such directory`));
  mkdirSync(s, { mode: 0o700 });
  for (const [args, cmd] of [
    [['demo', '--via', 'plug'], 'synplug demo --via queue'],
    [['demo', '--inbound', '--via', 'plug'], 'synplug demo --inbound --via queue'],
  ] as const) {
    const r = synplug(s, [...args]);
    t.is(r.code, 5, r.stderr);
    t.regex(r.stderr, /sch_plug \(qdisc plug\)/);
    t.true(r.stderr.trimEnd().endsWith(`the queue hold works on this kernel: '${cmd}' (or leave --via out)`), r.stderr);
  }
});

test.serial('--local selects the local hold of either kind: the queue hold (queue) here, not the plug pieces this kernel cannot have', (t) => {
  const s = stateDir();
  const dev = `${VETH}a`;
  t.is(synplug(s, ['setup']).code, 0);
  t.is(synplug(s, ['setup', '--inbound', dev, '--port', '80']).code, 0);
  const c = synplug(s, ['check', '--local', '--json']);
  t.is(c.code, 0, c.stdout);
  t.deepEqual(
    (JSON.parse(c.stdout) as { holds: Array<{ id: string; state: string }> }).holds.map((h) => [h.id, h.state]),
    [['queue', 'ok']],
  );
  const st = synplug(s, ['status', '--local']);
  t.regex(st.stdout, /^queue hold queue on lo: complete;/m);
  const td = synplug(s, ['teardown', '--local', '--json']);
  t.is(td.code, 0, td.stderr);
  t.deepEqual((JSON.parse(td.stdout) as { holds: string[] }).holds, ['queue']);
  t.notRegex(ruleset(), /table inet synplug_queue \{/, 'the local queue hold is gone');
  t.regex(ruleset(), new RegExp(`table inet synplug_queue_${dev}`), 'the inbound one stays');
  t.is(synplug(s, ['teardown']).code, 0);
});
