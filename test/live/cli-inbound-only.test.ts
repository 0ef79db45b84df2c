/**
 * Live (this kernel: clsact, u32, mirred, ifb, veth; no sch_plug, so the
 * hold's state is built by hand with tc and ip, as a setup leaves it apart
 * from the plug): the defects a fresh-user review found in the inbound hold,
 * through the built CLI (dist/bundle/synplug.cjs; `npm run build` first).
 *
 * - status/check of an inbound-only setup report that hold as itself: no
 *   top-level `dev`/`addr` of a local hold that is not set up, no "on lo";
 *   status names the mirred target (as tc does), not `if<N>`.
 * - check/status --inbound DEV (any of its names) and --local.
 * - exit 8's hint and setup.json's damage hint name the inbound command.
 * - exit 5 does not call a built-in classifier "could not be checked".
 * - release/teardown with no or a damaged record still find synplug's IFB by
 *   its alias and remove it with synplug's filters only.
 * - release with nothing recorded refuses a symlinked lock file.
 *
 * Everything runs in a namespace of this file's own (`ip netns add`, the CLI
 * with --netns): the live files share one namespace, and a teardown without
 * a record (another file's) removes every IFB carrying synplug's alias there.
 * Devices: sp-grv0/sp-grv1 (a veth pair), spifb<index of sp-grv0>; own state directories.
 */
import test from 'ava';
import { existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inboundNetns, IP, TC } from '../helpers/inbound-netns.js';
import { cookieOf } from '../helpers/netns-cookie.js';

const DEV = 'sp-grv0';
const PEER = 'sp-grv1';
const ALT = 'sp-grvalt';
const N = inboundNetns('sp-grvns', DEV, PEER);
const { sh, quiet, synplug, redirect } = N;
let IFB = '';

/** The inbound hold of DEV as setup leaves it (but the plug: this kernel has no sch_plug): IFB with synplug's alias, clsact, SYN redirects at 65000/65001. */
function buildHold(): void {
  N.ifb(IFB, `synplug inbound hold of ${DEV}`);
  sh(TC, 'qdisc', 'add', 'dev', DEV, 'clsact');
  redirect('65000', 'ip', '16000', IFB);
  redirect('65001', 'ipv6', '16000', IFB);
}

function removeHold(): void {
  quiet(IP, 'link', 'del', IFB);
  quiet(TC, 'qdisc', 'del', 'dev', DEV, 'clsact');
}

const record = () => ({
  version: 2,
  netns: cookieOf(N.ns),
  holds: {
    [`inbound:${DEV}`]: {
      mode: 'inbound',
      dev: DEV,
      createdAt: 1,
      ifb: IFB,
      ports: [16000],
      addrs: [],
      classifier: 'u32',
      limit: 1048576,
      families: ['ip', 'ipv6'],
      addedClsact: true,
    },
  },
});

function stateDir(rec?: unknown): string {
  const sd = mkdtempSync(join(tmpdir(), 'synplug-inbound-review-'));
  if (rec !== undefined) writeFileSync(join(sd, 'setup.json'), typeof rec === 'string' ? rec : JSON.stringify(rec), { mode: 0o600 });
  return sd;
}

test.before(() => {
  N.create();
  sh(IP, 'link', 'property', 'add', 'dev', DEV, 'altname', ALT);
  IFB = `spifb${N.ifindex}`;
});

test.after.always(() => N.destroy());

test.serial(
  'status and check of an inbound-only setup report that hold, not a local one on lo; SYN filters left outside a hold with no lease (armed pieces) are removed',
  async (t) => {
    buildHold();
    const sd = stateDir(record());
    try {
      // the SYN filters are armed pieces: left outside a hold with no live lease (a holder that died between its
      // release and their removal), the next command removes them; tc (the oracle) names the target device before
      t.regex(sh(TC, 'filter', 'show', 'dev', DEV, 'ingress'), new RegExp(`Egress Redirect to device ${IFB}\\)`));
      const st = await synplug(sd, 'status', '--json');
      t.is(st.code, 0, st.stderr);
      const j = JSON.parse(st.stdout) as Record<string, unknown> & { holds: Array<{ id: string; dev: string; filters: unknown[] }> };
      t.false('dev' in j, `no top-level dev of a local hold that is not set up: ${JSON.stringify(j.dev)}`);
      t.false('addr' in j, 'no top-level addr either');
      t.deepEqual(
        j.holds.map((h) => [h.id, h.dev]),
        [[`inbound:${DEV}`, DEV]],
      );
      t.is(j.state, 'partial', 'no plug (no sch_plug here)');
      const text = await synplug(sd, 'status');
      t.is(text.code, 0, text.stderr);
      t.notRegex(text.stdout, /\bon lo\b/);
      t.regex(text.stdout, new RegExp(`^setup: PARTIAL \\(inbound:${DEV}: PARTIAL\\)$`, 'm'));
      t.is(sh(TC, 'filter', 'show', 'dev', DEV, 'ingress'), '', 'the stale armed filters are gone');
      t.notRegex(text.stdout, /to device if[0-9]+\)/);
      const ck = await synplug(sd, 'check', '--json');
      t.is(ck.code, 12, ck.stderr);
      const c = JSON.parse(ck.stdout) as Record<string, unknown>;
      t.false('dev' in c);
      t.false('addr' in c);
      const ct = await synplug(sd, 'check');
      t.is(ct.code, 12);
      t.notRegex(ct.stdout, /\bon lo\b/);
      // the --state-dir and --netns given repeated in the advice
      t.true(ct.stdout.includes(`run 'synplug setup --inbound ${DEV} --port 16000 --state-dir ${sd} --netns ${N.ns}'`), ct.stdout);
    } finally {
      removeHold();
      rmSync(sd, { recursive: true, force: true });
    }
  },
);

test.serial('check and status take --inbound DEV (any name of DEV) and --local; their --help names both holds', async (t) => {
  buildHold();
  const sd = stateDir(record());
  try {
    for (const name of [DEV, ALT]) {
      const r = await synplug(sd, 'check', '--inbound', name, '--json');
      t.is(r.code, 12, r.stderr);
      const j = JSON.parse(r.stdout) as { holds: Array<{ id: string; state: string }>; pieces: Array<{ status: string }> };
      t.deepEqual(
        j.holds.map((h) => [h.id, h.state]),
        [[`inbound:${DEV}`, 'partial']],
        `--inbound ${name} is the hold of ${DEV}`,
      );
      t.true(j.pieces.length > 0);
      const s = await synplug(sd, 'status', '--inbound', name, '--json');
      t.is(s.code, 0, s.stderr);
      t.deepEqual(
        (JSON.parse(s.stdout) as { holds: Array<{ id: string }> }).holds.map((h) => h.id),
        [`inbound:${DEV}`],
      );
    }
    const local = await synplug(sd, 'check', '--local', '--json');
    t.is(local.code, 1, 'the local hold is not set up: exit 1');
    const lj = JSON.parse(local.stdout) as { dev: string; holds: Array<{ id: string; state: string }> };
    // the local hold this kernel's setup makes (no sch_plug here: the queue hold)
    t.deepEqual(
      lj.holds.map((h) => [h.id, h.state]),
      [['queue', 'absent']],
    );
    t.is((lj.holds[0] as { dev?: string }).dev, 'lo', 'the local hold reported: its device');
    const other = await synplug(sd, 'check', '--inbound', PEER);
    t.is(other.code, 1);
    t.regex(other.stdout, new RegExp(`not set up \\(inbound:${PEER} on ${PEER}\\)`));
    t.true(other.stdout.includes(`run 'synplug setup --inbound ${PEER} --port PORT... --state-dir ${sd} --netns ${N.ns}'`), other.stdout);
    for (const [args, why] of [
      [['check', '--inbound', DEV, '--local'], /--local and --inbound each name one hold/],
      [['status', '--inbound', DEV, '--dev', 'lo'], /--dev is the local hold's device/],
      [['check', '--inbound', ''], /--inbound is empty/],
    ] as Array<[string[], RegExp]>) {
      const r = await synplug(sd, ...args);
      t.is(r.code, 2, args.join(' '));
      t.regex(r.stderr, why);
    }
    for (const cmd of ['check', 'status']) {
      const h = await synplug(sd, cmd, '--help');
      t.regex(h.stdout, /--inbound <dev>/, cmd);
      t.regex(h.stdout, /--local/, cmd);
      t.regex(h.stdout, /inbound hold/, cmd);
    }
  } finally {
    removeHold();
    rmSync(sd, { recursive: true, force: true });
  }
});

test.serial("exit 8 and a damaged setup.json name the inbound hold's own command", async (t) => {
  buildHold();
  const sd = stateDir(record());
  try {
    const p = await synplug(sd, 'plug');
    t.is(p.code, 8, p.stderr);
    t.regex(p.stderr, new RegExp(`Run 'synplug setup --inbound ${DEV} --port 16000'`));
    t.notRegex(p.stderr, /Run 'synplug setup'[^ ]/);
    writeFileSync(join(sd, 'setup.json'), '{"version": 2, "holds": ');
    const s = await synplug(sd, 'setup', '--via', 'plug', '--inbound', DEV, '--port', '16000');
    t.is(s.code, 6, s.stderr);
    t.regex(s.stderr, new RegExp(`then run 'synplug setup --inbound ${DEV} --port PORT' again`));
    t.notRegex(s.stderr, /address/);
  } finally {
    removeHold();
    rmSync(sd, { recursive: true, force: true });
  }
});

test.serial(
  'exit 5 names sch_plug only, whatever DEV\'s root qdisc: a classifier built into this kernel (u32, no /sys/module entry) is not "could not be checked"',
  async (t) => {
    t.false(existsSync('/sys/module/cls_u32'), 'this kernel has u32 built in (no module entry)');
    const sd = stateDir();
    try {
      // DEV's root qdisc with a handle (htb 1:, tbf 5:) must not make the probe pass sch_plug either
      for (const root of [[], ['handle', '1:', 'htb'], ['handle', '5:', 'tbf', 'rate', '1mbit', 'burst', '10k', 'latency', '50ms']]) {
        if (root.length) sh(TC, 'qdisc', 'replace', 'dev', DEV, 'root', ...root);
        const r = await synplug(sd, 'setup', '--via', 'plug', '--inbound', DEV, '--port', '16000', '--json');
        t.is(r.code, 5, `root ${root.join(' ') || 'default'}: ${r.stderr}`);
        const e = JSON.parse(r.stdout) as { error: string };
        // modprobe where the kernel has a module folder; where it has none (this machine), that it cannot work here
        t.regex(
          e.error,
          /^this kernel lacks what synplug needs: sch_plug \(qdisc plug\)\. (Load the modules|Use a kernel that has them: this one has no \S+, so loading them) \(modprobe sch_plug\)/,
        );
        t.notRegex(e.error, /could not be checked/);
      }
    } finally {
      quiet(TC, 'qdisc', 'del', 'dev', DEV, 'root');
      rmSync(sd, { recursive: true, force: true });
    }
  },
);

test.serial("teardown with no record finds synplug's IFB by its alias and removes it with synplug's filters only", async (t) => {
  buildHold();
  // a foreign filter on DEV's ingress (another pref, redirecting elsewhere) must stay
  redirect('100', 'ip', '22', PEER);
  const sd = stateDir();
  try {
    const r = await synplug(sd, 'teardown');
    t.is(r.code, 0, r.stderr);
    t.regex(
      r.stdout,
      new RegExp(`link ${IFB} \\(ifb\\): found by its alias 'synplug inbound hold of ${DEV}', without a record`),
      'no plug qdisc (no sch_plug here): not "with its plug"',
    );
    t.throws(() => sh(IP, 'link', 'show', 'dev', IFB), undefined, 'the IFB is gone');
    const left = sh(TC, 'filter', 'show', 'dev', DEV, 'ingress');
    t.notRegex(left, /pref 6500[01]/, 'synplug filters gone');
    t.regex(left, /pref 100 /, 'the foreign filter stays');
    t.regex(sh(TC, 'qdisc', 'show', 'dev', DEV), /clsact/, 'clsact kept: no record says setup added it');
    t.regex(r.stdout, /no record says whether setup added it/);
  } finally {
    removeHold();
    rmSync(sd, { recursive: true, force: true });
  }
});

test.serial("teardown --inbound DEV (an altname) with a damaged setup.json still removes synplug's IFB of DEV, then reports the damage (exit 6)", async (t) => {
  buildHold();
  const sd = stateDir('not json');
  try {
    const r = await synplug(sd, 'teardown', '--inbound', ALT);
    t.is(r.code, 6, r.stderr);
    t.regex(r.stderr, new RegExp(`removed synplug's IFB\\(s\\) found by their alias.*link ${IFB}`));
    t.regex(r.stderr, /setup\.json is not valid JSON/);
    t.throws(() => sh(IP, 'link', 'show', 'dev', IFB), undefined, 'the IFB is gone');
    t.notRegex(sh(TC, 'filter', 'show', 'dev', DEV, 'ingress'), /pref 6500[01]/);
  } finally {
    removeHold();
    rmSync(sd, { recursive: true, force: true });
  }
});

test.serial('release with nothing recorded refuses a symlinked lock file (exit 6), as the commands that take the lock do', async (t) => {
  const sd = stateDir();
  const target = join(sd, 'elsewhere');
  try {
    symlinkSync(target, join(sd, 'lock'));
    const r = await synplug(sd, 'release');
    t.is(r.code, 6, r.stderr);
    t.regex(r.stderr, /lock file .*lock is a symbolic link; synplug never follows links in its state directory: remove it/);
    t.false(existsSync(target), 'nothing created through the link');
    const p = await synplug(sd, 'plug');
    t.not(p.code, 0, 'plug refuses it too');
  } finally {
    rmSync(sd, { recursive: true, force: true });
  }
});
