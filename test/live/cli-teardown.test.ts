/**
 * Live (this kernel: clsact, u32, mirred, ifb, veth, bfifo; no sch_plug, so
 * synplug's IFB is built by hand with ip and tc): the second fresh-user
 * review of teardown, check and status, through the built CLI
 * (dist/bundle/synplug.cjs; `npm run build` first).
 *
 * - teardown without a record recognises synplug's IFB by its name
 *   (`spifb<ifindex of DEV>`), alias and root qdisc (a plug or none), not by
 *   its alias alone; it never deletes an IFB that a filter other than
 *   synplug's redirects to; "with its plug" only when there is one; no entry
 *   twice.
 * - check/status/teardown --inbound of a device no record names: a missing
 *   device, lo, an IFB are errors (exit 2) with setup's own sentences.
 * - check/status report an IFB of synplug's that no record lists.
 * - teardown with nothing set up claims no hold (`holds: []`, `nothingSetUp`).
 * - teardown refuses a damaged or symlinked leases.json (exit 6, naming it), removing nothing.
 *
 * Everything runs in a namespace of this file's own (a teardown without a
 * record removes every IFB of synplug's in its namespace).
 * Devices: sp-gtr0/sp-gtr1 (a veth pair), spifb<index of sp-gtr0>, sp-gtrmy (an IFB); own state directories.
 */
import test from 'ava';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inboundNetns, IP, TC } from '../helpers/inbound-netns.js';
import { cookieOf } from '../helpers/netns-cookie.js';

const DEV = 'sp-gtr0';
const PEER = 'sp-gtr1';
const MY = 'sp-gtrmy';
const ALIAS = `synplug inbound hold of ${DEV}`;
const N = inboundNetns('sp-gtrns', DEV, PEER);
const { sh, quiet, exists, synplug, redirect } = N;
const ifb = (name: string) => N.ifb(name, ALIAS);
let IFB = '';

function clean(): void {
  quiet(IP, 'link', 'del', IFB);
  quiet(IP, 'link', 'del', MY);
  quiet(TC, 'qdisc', 'del', 'dev', DEV, 'clsact');
}

const stateDir = () => mkdtempSync(join(tmpdir(), 'synplug-teardown-review-'));

test.before(() => {
  N.create();
  IFB = `spifb${N.ifindex}`;
});

test.after.always(() => N.destroy());

test.serial("teardown --inbound without a record: an alias alone does not make an IFB synplug's; neither IFB nor any filter is touched", async (t) => {
  ifb(MY); // synplug's alias, a name synplug never gives
  ifb(IFB); // synplug's alias and name, but a root qdisc of someone else's
  sh(TC, 'qdisc', 'add', 'dev', IFB, 'root', 'handle', '1:', 'bfifo', 'limit', '10000');
  sh(TC, 'qdisc', 'add', 'dev', DEV, 'clsact');
  redirect('100', 'ip', '22', IFB);
  const sd = stateDir();
  try {
    const r = await synplug(sd, 'teardown', '--inbound', DEV);
    t.is(r.code, 0, r.stderr);
    t.true(exists(MY), `${MY} kept`);
    t.true(exists(IFB), `${IFB} kept`);
    t.regex(sh(TC, 'filter', 'show', 'dev', DEV, 'ingress'), /pref 100 /, 'the pref-100 filter still has its target');
    t.regex(sh(TC, 'qdisc', 'show', 'dev', IFB), /bfifo 1: root/);
    t.regex(r.stdout, new RegExp(`link ${MY}: carries synplug's alias '${ALIAS}', but no record lists it and its name is not ${IFB}`));
    t.regex(r.stdout, new RegExp(`link ${IFB}: carries synplug's alias .* its root qdisc is bfifo 1:, not synplug's plug`));
    t.notRegex(r.stdout, /with its plug/);
    t.notRegex(r.stdout, /^removed/m);
    const j = await synplug(sd, 'teardown', '--inbound', DEV, '--json');
    const o = JSON.parse(j.stdout) as { removed: string[]; kept: string[]; holds: string[]; nothingSetUp?: string };
    t.deepEqual(o.removed, []);
    t.deepEqual(o.holds, []);
    t.is(typeof o.nothingSetUp, 'string');
    t.is(new Set(o.kept).size, o.kept.length, 'no entry twice');
    // release leaves them alone too (neither is synplug's)
    const rel = await synplug(sd, 'release', '--json');
    t.is(rel.code, 0, rel.stderr);
    t.is((JSON.parse(rel.stdout) as { unrecorded?: unknown }).unrecorded, undefined);
    t.regex(sh(TC, 'qdisc', 'show', 'dev', IFB), /bfifo 1: root/);
    // check and status do not take them for synplug's either
    const st = JSON.parse((await synplug(sd, 'status', '--json')).stdout) as { unrecorded?: unknown };
    t.is(st.unrecorded, undefined);
  } finally {
    clean();
    rmSync(sd, { recursive: true, force: true });
  }
});

test.serial("teardown keeps synplug's IFB while a filter that is not synplug's redirects to it; says so; no plug, no 'with its plug'", async (t) => {
  ifb(IFB);
  sh(TC, 'qdisc', 'add', 'dev', DEV, 'clsact');
  redirect('65000', 'ip', '16000', IFB);
  redirect('65001', 'ipv6', '16000', IFB);
  redirect('100', 'ip', '22', IFB);
  const sd = stateDir();
  try {
    // check and status report it (no record lists it)
    const st = await synplug(sd, 'status');
    t.is(st.code, 0, st.stderr);
    // the command it suggests repeats the --state-dir and --netns given
    t.true(
      st.stdout
        .split('\n')
        .includes(`unrecorded: ${IFB} (synplug's alias, no record) — 'synplug teardown --inbound ${DEV} --state-dir ${sd} --netns ${N.ns}' removes it`),
      st.stdout,
    );
    t.notRegex(st.stdout, / $/m, 'no line ends in a blank');
    const sj = JSON.parse((await synplug(sd, 'status', '--json')).stdout) as { state: string; unrecorded: unknown };
    t.deepEqual(sj.unrecorded, [{ ifb: IFB, dev: DEV, teardown: `synplug teardown --inbound ${DEV}` }]);
    t.is(sj.state, 'partial');
    const ck = await synplug(sd, 'check', '--json');
    t.is(ck.code, 12, "an unrecorded IFB of synplug's: partly set up");
    t.deepEqual((JSON.parse(ck.stdout) as { unrecorded: unknown }).unrecorded, sj.unrecorded);
    const ct = await synplug(sd, 'check', '--inbound', DEV);
    t.is(ct.code, 12);
    t.regex(ct.stdout, new RegExp(`unrecorded: ${IFB}`));

    const r = await synplug(sd, 'teardown');
    t.is(r.code, 0, r.stderr);
    t.true(exists(IFB), 'kept: the pref-100 filter would redirect to a deleted device');
    const left = sh(TC, 'filter', 'show', 'dev', DEV, 'ingress');
    t.notRegex(left, /pref 6500[01]/, "synplug's filters removed");
    t.regex(left, /pref 100 /);
    t.regex(
      r.stdout,
      new RegExp(
        `link ${IFB} \\(ifb\\): found by its alias '${ALIAS}', without a record: kept, because filters that are not synplug's redirect to it \\(${DEV} ingress pref 100\\)`,
      ),
    );
    t.notRegex(r.stdout, /with its plug/, 'no plug qdisc: not "with its plug"');
    t.regex(r.stdout, new RegExp(`^removed \\(inbound:${DEV}\\):$`, 'm'));
    const lines = r.stdout.trim().split('\n');
    t.is(new Set(lines).size, lines.length, 'no line twice');
    // the foreign filter gone: the next teardown removes the IFB
    sh(TC, 'filter', 'del', 'dev', DEV, 'ingress', 'pref', '100');
    const r2 = await synplug(sd, 'teardown');
    t.is(r2.code, 0, r2.stderr);
    t.false(exists(IFB));
    t.regex(r2.stdout, new RegExp(`^  link ${IFB} \\(ifb\\): found by its alias`, 'm'));
  } finally {
    clean();
    rmSync(sd, { recursive: true, force: true });
  }
});

test.serial("check/status/teardown --inbound of a device no record names: missing, lo, an IFB are exit 2 with setup's sentence", async (t) => {
  ifb(MY);
  const sd = stateDir();
  try {
    for (const cmd of ['check', 'status', 'teardown']) {
      const none = await synplug(sd, cmd, '--inbound', 'sp-gtrnone');
      t.is(none.code, 2, `${cmd}: ${none.stderr}`);
      t.regex(none.stderr, /device 'sp-gtrnone' not found \(give an existing device with --inbound\)/, cmd);
      t.notRegex(none.stdout + none.stderr, /synplug setup --inbound/, cmd);
      const lo = await synplug(sd, cmd, '--inbound', 'lo');
      t.is(lo.code, 2, `${cmd} lo`);
      t.regex(lo.stderr, /--inbound lo: connections on lo come from this machine; hold them with the local hold/, cmd);
      const i = await synplug(sd, cmd, '--inbound', MY);
      t.is(i.code, 2, `${cmd} ${MY}`);
      t.regex(i.stderr, new RegExp(`--inbound ${MY}: ${MY} is an IFB`), cmd);
    }
    // the same refusals as setup's own
    const s = await synplug(sd, 'setup', '--inbound', 'lo', '--port', '80');
    t.is(s.code, 2);
    t.regex(s.stderr, /--inbound lo: connections on lo come from this machine; hold them with the local hold/);
  } finally {
    clean();
    rmSync(sd, { recursive: true, force: true });
  }
});

test.serial('teardown with nothing set up claims no hold: holds [], nothingSetUp (as teardown --local)', async (t) => {
  const sd = stateDir();
  try {
    const r = await synplug(sd, 'teardown', '--json');
    t.is(r.code, 0, r.stderr);
    const o = JSON.parse(r.stdout) as { holds: string[]; removed: string[]; nothingSetUp?: string };
    t.deepEqual(o.holds, []);
    t.deepEqual(o.removed, []);
    t.is(
      o.nothingSetUp,
      `nothing to remove: the state directory ${sd} records no setup (a hold set up through another --state-dir is torn down through that one)`,
    );
    const text = await synplug(sd, 'teardown');
    t.is(text.code, 0);
    t.notRegex(text.stdout, /\blocal\b|inbound:/);
  } finally {
    rmSync(sd, { recursive: true, force: true });
  }
});

test.serial('teardown refuses a damaged or symlinked leases.json (exit 6, naming it) and removes nothing', async (t) => {
  ifb(IFB);
  const sd = stateDir();
  try {
    const leases = join(sd, 'leases.json');
    writeFileSync(leases, '{"version": 1, "leases": ', { mode: 0o600 });
    const r = await synplug(sd, 'teardown');
    t.is(r.code, 6, r.stderr);
    t.regex(r.stderr, /leases\.json/);
    t.is(readFileSync(leases, 'utf8'), '{"version": 1, "leases": ', 'left as it was');
    t.true(exists(IFB), 'nothing removed');
    const st = await synplug(sd, 'status');
    t.is(st.code, 6, 'as status');
    rmSync(leases);
    symlinkSync(join(sd, 'elsewhere'), leases);
    const l = await synplug(sd, 'teardown');
    t.is(l.code, 6, l.stderr);
    t.regex(l.stderr, /leases\.json is a symbolic link/);
    t.true(exists(IFB));
  } finally {
    clean();
    rmSync(sd, { recursive: true, force: true });
  }
});

test.serial('teardown --inbound of a recorded hold whose device is gone still removes its IFB (no "not found")', async (t) => {
  sh(IP, 'link', 'add', 'sp-gtrx0', 'type', 'veth', 'peer', 'name', 'sp-gtrx1');
  const idx = (JSON.parse(sh(IP, '-j', 'link', 'show', 'dev', 'sp-gtrx0')) as Array<{ ifindex: number }>)[0].ifindex;
  const gone = `spifb${idx}`;
  sh(IP, 'link', 'add', gone, 'type', 'ifb');
  sh(IP, 'link', 'set', gone, 'alias', 'synplug inbound hold of sp-gtrx0');
  const sd = stateDir();
  const rec = {
    version: 2,
    netns: cookieOf(N.ns),
    holds: {
      'inbound:sp-gtrx0': {
        mode: 'inbound',
        dev: 'sp-gtrx0',
        createdAt: 1,
        ifb: gone,
        ports: [16000],
        addrs: [],
        classifier: 'u32',
        limit: 1048576,
        families: ['ip', 'ipv6'],
        addedClsact: true,
      },
    },
  };
  writeFileSync(join(sd, 'setup.json'), JSON.stringify(rec), { mode: 0o600 });
  try {
    sh(IP, 'link', 'del', 'sp-gtrx0');
    const r = await synplug(sd, 'teardown', '--inbound', 'sp-gtrx0', '--json');
    t.is(r.code, 0, r.stderr);
    const o = JSON.parse(r.stdout) as { holds: string[]; removed: string[]; nothingSetUp?: string };
    t.deepEqual(o.holds, ['inbound:sp-gtrx0']);
    t.is(o.nothingSetUp, undefined);
    t.false(exists(gone), 'its IFB removed');
  } finally {
    quiet(IP, 'link', 'del', gone);
    quiet(IP, 'link', 'del', 'sp-gtrx0');
    rmSync(sd, { recursive: true, force: true });
  }
});

test.serial('with --state-dir and --netns given: the advice repeats them; teardown --hold of no hold id is exit 2 naming the ids', async (t) => {
  const sd = stateDir();
  try {
    const c = await synplug(sd, 'check');
    t.is(c.code, 1, c.stderr);
    t.true(c.stdout.includes(`'synplug setup --state-dir ${sd} --netns `), c.stdout);
    t.regex(c.stdout, /'synplug setup --inbound DEV --port PORT --state-dir \S+ --netns \S+'/);
    const d = await synplug(sd, 'teardown', '--hold', 'nosuch');
    t.is(d.code, 2, d.stdout + d.stderr);
    t.regex(d.stderr, /teardown --hold 'nosuch': no hold has that id: give one of local, inbound:DEV, queue, queue:DEV \(none is set up here\)/);
  } finally {
    rmSync(sd, { recursive: true, force: true });
  }
});
