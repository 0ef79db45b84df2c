/**
 * Live (this kernel: ifb, veth; no sch_plug, so the inbound hold's IFB is
 * built by hand with ip): the IFB alias names the state directory whose
 * setup made it (teardown-marks.ts ifbAlias; issue #19: `release
 * --state-dir B` released directory A's inbound plug, and `teardown
 * --state-dir B` removed A's IFB, as a leftover of B's found without a
 * record). Through the built CLI (dist/bundle/synplug.cjs).
 *
 * - The kernel keeps the alias as written (IFLA_IFALIAS, up to 255 bytes),
 *   and `ip -d link` prints it.
 * - An IFB whose alias names another state directory is not a leftover of
 *   this one: status and check do not list it, release neither releases nor
 *   names it, teardown keeps it saying whose it is (the mark), in this
 *   directory and in one that does not exist.
 * - One whose alias names this directory, or an earlier synplug's alias
 *   (no state), is: listed, and removed by teardown, as before.
 *
 * Everything runs in a namespace of this file's own. Devices: sp-gim0/sp-gim1
 * (a veth pair), spifb<index of sp-gim0>; own state directories.
 */
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inboundNetns, IP } from '../helpers/inbound-netns.js';
import { stateDirMark } from '../../src/guard/state-fs.js';
import { ifbAlias } from '../../src/guard/teardown-marks.js';

const DEV = 'sp-gim0';
const N = inboundNetns('sp-gimns', DEV, 'sp-gim1');
let IFB = '';
const THEIRS = 'fedcba9876543210';

test.before(() => {
  N.create();
  IFB = `spifb${N.ifindex}`;
});

test.after.always(() => N.destroy());

const stateDir = () => mkdtempSync(join(tmpdir(), 'synplug-ifb-mark-'));
const aliasOf = (name: string) => (JSON.parse(N.sh(IP, '-j', '-d', 'link', 'show', 'dev', name)) as Array<{ ifalias?: string }>)[0].ifalias;
const json = <T>(r: { stdout: string }): T => JSON.parse(r.stdout) as T;

test.serial(
  "an IFB whose alias names another state directory: not this directory's leftover (status, check, release), and teardown keeps it, saying whose",
  async (t) => {
    const sd = stateDir();
    try {
      N.ifb(IFB, ifbAlias(DEV, THEIRS));
      t.is(aliasOf(IFB), `synplug inbound hold of ${DEV}; state ${THEIRS}`, 'the kernel keeps the alias as written');
      const st = await N.synplug(sd, 'status', '--json');
      t.is(st.code, 0, st.stderr);
      t.is(json<{ unrecorded?: unknown }>(st).unrecorded, undefined);
      const ck = await N.synplug(sd, 'check', '--json');
      t.is(ck.code, 1, `nothing set up in this directory: ${ck.stdout}${ck.stderr}`);
      t.is(json<{ unrecorded?: unknown }>(ck).unrecorded, undefined);
      const rel = await N.synplug(sd, 'release', '--json');
      t.is(rel.code, 0, rel.stderr);
      t.is(json<{ unrecorded?: unknown }>(rel).unrecorded, undefined, 'its plug is not released as a leftover of this directory');
      for (const dir of [sd, join(sd, 'none')]) {
        const td = await N.synplug(dir, 'teardown', '--json');
        t.is(td.code, 0, td.stderr);
        const words = json<{ removed: string[]; kept: string[] }>(td);
        t.false(
          words.removed.some((w) => w.includes(IFB)),
          JSON.stringify(words),
        );
        t.true(
          words.kept.some((w) =>
            w.startsWith(
              `link ${IFB} (with its plug and the filters on ${DEV}): kept, another state directory's inbound hold of ${DEV} (its IFB's alias names state directory mark ${THEIRS}`,
            ),
          ),
          JSON.stringify(words.kept),
        );
        t.true(N.exists(IFB), `${dir}: the IFB is still there`);
        t.is(aliasOf(IFB), ifbAlias(DEV, THEIRS));
      }
    } finally {
      N.quiet(IP, 'link', 'del', IFB);
      rmSync(sd, { recursive: true, force: true });
    }
  },
);

test.serial(
  "an IFB whose alias names this state directory, or an earlier synplug's alias: a leftover of this one, listed and removed by teardown",
  async (t) => {
    for (const mine of [true, false]) {
      const sd = stateDir();
      try {
        const alias = mine ? ifbAlias(DEV, stateDirMark(sd)!) : `synplug inbound hold of ${DEV}`;
        N.ifb(IFB, alias);
        t.is(aliasOf(IFB), alias);
        const ck = await N.synplug(sd, 'check', '--json');
        t.is(ck.code, 12, `${alias}: ${ck.stdout}${ck.stderr}`);
        t.deepEqual(json<{ unrecorded?: unknown }>(ck).unrecorded, [{ ifb: IFB, dev: DEV, teardown: `synplug teardown --inbound ${DEV}` }]);
        const td = await N.synplug(sd, 'teardown', '--json');
        t.is(td.code, 0, td.stderr);
        t.true(
          json<{ removed: string[] }>(td).removed.some((w) => w.startsWith(`link ${IFB}`)),
          td.stdout,
        );
        t.false(N.exists(IFB), `${alias}: removed`);
      } finally {
        N.quiet(IP, 'link', 'del', IFB);
        rmSync(sd, { recursive: true, force: true });
      }
    }
  },
);
