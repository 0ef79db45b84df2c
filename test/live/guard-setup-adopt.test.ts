/**
 * Live (this kernel, the queue hold, through the built CLI): setup takes
 * pieces carrying synplug's mark for its own only in a state directory a
 * setup ran in.
 *
 * - regression: setup in a new state directory, while another state
 *   directory's hold was set up, said "already set up; nothing to change"
 *   and recorded that hold too, so a teardown through either removed it
 *   under the other's feet. Now: exit 7 naming the pieces (and the record of
 *   them, when it is the namespace's default state directory), nothing
 *   recorded or changed; a teardown through the new directory removes
 *   nothing of the other's.
 * - the same directory, its setup.json removed (the documented recovery of a
 *   damaged record: plug.json stays): setup takes them, as before.
 * - the same directory with every file removed takes them too: the queue
 *   hold's table names the state directory whose setup made it (issue #19).
 * - a new directory given a setup's lock file by hand never takes a table
 *   that names another directory (MA1): exit 7, saying how to remove it by
 *   hand. (A lock file made by hand still takes pieces whose mark names no
 *   directory: an address alone, an earlier synplug's table.)
 *
 * Oracles: `nft list tables` and `ip -j addr` in the namespace
 * (/usr/sbin/nft, /usr/sbin/ip). In a namespace of this file's own.
 */
import test from 'ava';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inboundNetns, CLI, queueHoldOf } from '../helpers/inbound-netns.js';
import { cookieOf } from '../helpers/netns-cookie.js';

const N = inboundNetns('sp-adopt', 'sp-adp0', 'sp-adp1');
const ADDR = '169.254.87.1';
const SETUP = ['setup', '--via', 'queue', '--addr', ADDR];
let base = '';

/** The queue hold's table and address in the namespace, as nft and ip list them. */
const hold = () => queueHoldOf(N, ADDR);

const dir = (name: string) => join(base, name);
const recorded = (sd: string) => (existsSync(join(sd, 'setup.json')) ? Object.keys(JSON.parse(readFileSync(join(sd, 'setup.json'), 'utf8')).holds) : []);

/** The CLI in the namespace with its default state directory (no --state-dir). */
function inDefault(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args, '--netns', N.ns], { encoding: 'utf8', timeout: 120_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

test.before(() => {
  N.create();
  base = mkdtempSync(join(tmpdir(), 'synplug-adopt-'));
});
test.after.always(() => {
  N.destroy();
  if (base) rmSync(base, { recursive: true, force: true });
});

test.serial(
  "regression: setup in a new state directory took another directory's hold for its own; now exit 7 naming the pieces, nothing recorded",
  async (t) => {
    const a = dir('a');
    const b = dir('b');
    try {
      t.is((await N.synplug(a, ...SETUP)).code, 0);
      const r = await N.synplug(b, ...SETUP);
      t.is(r.code, 7, r.stdout + r.stderr);
      // the table's comment names the state directory whose setup made it (issue #19): another's, never taken
      t.regex(
        r.stderr,
        new RegExp(
          `^synplug: nftables table inet synplug_queue and address ${ADDR.replaceAll('.', '\\.')} on lo carry synplug's mark, and the mark names another state directory's setup \\(the table's comment names queue 4200 and state directory mark [0-9a-f]{16}; this directory's is none: it does not exist yet\\): a setup with another state directory made them, and a hold is set up through one state directory only \\(a teardown through either would remove it under the other's feet\\)\\. Use that state directory \\(--state-dir DIR\\) for this hold\\. If no state directory records them any more \\(it was removed\\), remove them by hand \\('nft delete table inet synplug_queue' and 'ip addr del ${ADDR.replaceAll('.', '\\.')} dev lo'\\) and run setup again\\. Nothing was changed\\n$`,
        ),
      );
      t.deepEqual(recorded(b), [], 'nothing recorded in the new directory');
      t.deepEqual(hold(), { table: true, addr: true });
      // a teardown through the new directory: nothing set up there, a's hold stays
      const down = await N.synplug(b, 'teardown');
      t.is(down.code, 0, down.stderr);
      t.deepEqual(hold(), { table: true, addr: true }, "a's hold stays");
      t.deepEqual(recorded(a), ['queue']);
      // a's own setup again: complete, nothing to change
      t.is((await N.synplug(a, ...SETUP)).code, 0);
    } finally {
      await N.synplug(a, 'teardown');
    }
    t.deepEqual(hold(), { table: false, addr: false });
  },
);

test.serial("the namespace's default state directory holds the hold: the refusal names its record", async (t) => {
  const x = dir('x');
  const def = `/run/synplug/netns/${cookieOf(N.ns)}`;
  try {
    const up = await inDefault(...SETUP);
    t.is(up.code, 0, up.stderr);
    const r = await N.synplug(x, ...SETUP);
    t.is(r.code, 7, r.stderr);
    t.true(
      r.stderr.includes(
        `: ${def}/setup.json records them, and a hold is set up through one state directory only (a teardown through either would remove it under the other's feet). Use that state directory (--state-dir ${def}) for this hold`,
      ),
      r.stderr,
    );
    t.deepEqual(recorded(x), []);
  } finally {
    await inDefault('teardown');
  }
  t.deepEqual(hold(), { table: false, addr: false });
});

test.serial(
  'the same state directory with its setup.json removed, or every file, takes its pieces (their mark names it); another given a lock file by hand never does',
  async (t) => {
    const a = dir('c');
    const f = dir('f');
    try {
      t.is((await N.synplug(a, ...SETUP)).code, 0);
      rmSync(join(a, 'setup.json'));
      const again = await N.synplug(a, ...SETUP);
      t.is(again.code, 0, again.stderr);
      t.deepEqual(recorded(a), ['queue']);
      // a lock file made by hand in another directory claims nothing: the table's comment names c (issue #19, MA1)
      execFileSync('/bin/sh', ['-c', `install -d -m 0700 ${f} && touch ${f}/lock`]);
      const claimed = await N.synplug(f, ...SETUP);
      t.is(claimed.code, 7, claimed.stderr);
      t.regex(claimed.stderr, /the mark names another state directory's setup .*remove them by hand \('nft delete table inet synplug_queue'/);
      t.deepEqual(recorded(f), []);
      rmSync(join(a, 'setup.json'));
      rmSync(join(a, 'plug.json'));
      rmSync(join(a, 'lock'), { force: true });
      // no trace of a setup left in c, but the table's comment names c: its own, taken
      const own = await N.synplug(a, ...SETUP);
      t.is(own.code, 0, own.stderr);
      t.deepEqual(recorded(a), ['queue']);
      t.deepEqual(hold(), { table: true, addr: true });
    } finally {
      await N.synplug(f, 'teardown');
      await N.synplug(a, 'teardown');
    }
    t.deepEqual(hold(), { table: false, addr: false }, 'the teardown through the directory whose mark they carry removed them');
  },
);

test.serial(
  'regression: setup --metrics-file on a complete setup said "nothing to change" while it recorded the file; now it says it recorded it',
  async (t) => {
    const a = dir('m');
    const prom = join(base, 'synplug.prom');
    try {
      t.is((await N.synplug(a, ...SETUP)).code, 0);
      const r = await N.synplug(a, ...SETUP, '--metrics-file', prom);
      t.is(r.code, 0, r.stderr);
      t.notRegex(r.stdout, /nothing to change/);
      t.true(r.stdout.endsWith(`\n  recorded the metrics file ${prom}\n`), r.stdout);
      t.is(JSON.parse(readFileSync(join(a, 'setup.json'), 'utf8')).metricsFile, prom);
      const j = JSON.parse((await N.synplug(a, ...SETUP, '--metrics-file', prom, '--json')).stdout) as { changed: boolean; actions: string[] };
      t.deepEqual({ changed: j.changed, actions: j.actions }, { changed: false, actions: [] }, 'the same file again: nothing to change');
    } finally {
      await N.synplug(a, 'teardown');
    }
  },
);
