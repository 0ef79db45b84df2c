/**
 * Live (this machine's kernel: clsact, u32, mirred, ifb, veth; no sch_plug,
 * no cls_flower): `synplug setup --inbound` through the built CLI
 * (dist/bundle/synplug.cjs; `npm run build` first).
 *
 * - Bad input: exit 2, nothing changed (a missing device, `--inbound lo`, a
 *   port outside 1-65535 or none, an address that is not one or of the
 *   IPv4-mapped kind, --port without --inbound, an IFB name clash).
 * - No sch_plug here: exit 5 naming sch_plug, and nothing changed: no IFB,
 *   no clsact, no filter on the device (tc and ip as oracles).
 *
 * Devices: sp-gin0/sp-gin1 (a veth pair). Own state directory.
 */
import test from 'ava';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inboundNetns } from '../helpers/inbound-netns.js';
import { cookieOf } from '../helpers/netns-cookie.js';

const IP = '/usr/sbin/ip';
const TC = '/usr/sbin/tc';
const CLI = fileURLToPath(new URL('../../dist/bundle/synplug.cjs', import.meta.url));
const DEV = 'sp-gin0';
const PEER = 'sp-gin1';
let SD = '';
let ifb = '';

const sh = (cmd: string, ...args: string[]) => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

function synplug(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args, '--state-dir', SD], { encoding: 'utf8', timeout: 120_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** What must stay as it was: the devices, DEV's qdiscs and ingress filters, the state directory. */
function snapshot() {
  // This file's devices and IFBs only: the other live files run in parallel in the same namespace and add their own.
  const links = (JSON.parse(sh(IP, '-j', 'link', 'show')) as Array<{ ifname: string }>)
    .map((l) => l.ifname)
    .filter((n) => n.startsWith('sp-gin') || n.startsWith('spifb'))
    .sort();
  return {
    links,
    qdiscs: sh(TC, 'qdisc', 'show', 'dev', DEV),
    ingress: sh(TC, 'filter', 'show', 'dev', DEV, 'ingress'),
    stateDir: existsSync(join(SD, 'setup.json')),
  };
}

test.before(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run 'npm run build' first`);
  SD = mkdtempSync(join(tmpdir(), 'synplug-inbound-live-'));
  try {
    sh(IP, 'link', 'del', DEV);
  } catch {
    /* not there */
  }
  sh(IP, 'link', 'add', DEV, 'type', 'veth', 'peer', 'name', PEER);
  const idx = (JSON.parse(sh(IP, '-j', 'link', 'show', 'dev', DEV)) as Array<{ ifindex: number }>)[0].ifindex;
  ifb = `spifb${idx}`;
});

test.after.always(() => {
  for (const d of [DEV, ifb])
    try {
      sh(IP, 'link', 'del', d);
    } catch {
      /* gone */
    }
  rmSync(SD, { recursive: true, force: true });
});

test.serial('bad input: exit 2 with a sentence naming the problem, nothing changed', async (t) => {
  const before = snapshot();
  const cases: Array<[string[], RegExp]> = [
    [['setup', '--inbound', 'sp-gin9', '--port', '80'], /device 'sp-gin9' not found \(give an existing device with --inbound\)/],
    [['setup', '--inbound', 'lo', '--port', '80'], /--inbound lo: .*local hold/],
    [['setup', '--inbound', DEV, '--port', '0'], /--port: '0' is not a TCP port \(1-65535\)/],
    [['setup', '--inbound', DEV, '--port', '65536'], /--port: '65536' is not a TCP port/],
    [['setup', '--inbound', DEV], /at least one --port/],
    [['setup', '--inbound', DEV, '--port', '80', '--addr', 'not-an-address'], /--addr \(with --inbound\): bad address 'not-an-address'/],
    [['setup', '--inbound', DEV, '--port', '80', '--addr', '::ffff:169.254.0.1'], /IPv4-mapped/],
    [['setup', '--port', '80'], /--port is for the inbound hold/],
    [['setup', '--addr', '169.254.0.1', '--addr', '169.254.0.2'], /without --inbound, --addr is the local hold's one proxy address/],
    [['setup', '--inbound', DEV, '--port', '80', '--dev', 'lo'], /--dev is the local hold's device/],
    [['setup', '--inbound', DEV, '--inbound', PEER, '--port', '80'], /--inbound given 2 times/],
    [['teardown', '--inbound', DEV, '--inbound', PEER], /--inbound given 2 times/],
    [['setup', '--inbound', DEV, '--port', '80', '--mark', '5'], /--mark is the local hold's firewall mark; the inbound hold marks nothing/],
    [['setup', '--inbound', DEV, '--port', '80', '--table', 't'], /unknown option '--table'/],
    [['setup', '--inbound', DEV, '--port', ' 443'], /--port: ' 443' is not a TCP port/],
    [['setup', '--inbound', DEV, '--port', '443 '], /--port: '443 ' is not a TCP port/],
    [['teardown', '--inbound', DEV, '--dev', 'lo'], /--dev is the local hold's device/],
    [['teardown', '--inbound', DEV, '--mark', '5'], /--mark is the local hold's firewall mark/],
    [['teardown', '--inbound', DEV, '--addr', '169.254.0.1'], /--addr is the local hold's proxy address here/],
    [['teardown', '--local', '--inbound', DEV], /--local and --inbound each name one hold/],
  ];
  for (const [args, why] of cases) {
    const r = await synplug(...args);
    t.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    t.regex(r.stderr, why, args.join(' '));
  }
  // Nothing of the hold named is set up: nothing to remove, exit 0 (teardown --help: 0 is removed, or nothing to remove).
  for (const [args, why] of [
    [['teardown', '--inbound', DEV], /no inbound hold of sp-gin0 is set up; nothing to remove/],
    [['teardown', '--local'], /teardown --local: no local hold is set up; nothing to remove/],
  ] as Array<[string[], RegExp]>) {
    const r = await synplug(...args);
    t.is(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    t.regex(r.stdout, why, args.join(' '));
    const rj = await synplug(...args, '--json');
    t.is(rj.code, 0, rj.stderr);
    t.deepEqual((JSON.parse(rj.stdout) as { holds: string[] }).holds, []);
  }
  const j = await synplug('setup', '--inbound', DEV, '--port', '0', '--json');
  t.like(JSON.parse(j.stdout), { category: 'usage', exitCode: 2 });
  t.deepEqual(snapshot(), before);
});

test.serial('an IFB name clash (a device synplug did not create): exit 2, nothing changed', async (t) => {
  sh(IP, 'link', 'add', ifb, 'type', 'ifb');
  try {
    const before = snapshot();
    const r = await synplug('setup', '--via', 'plug', '--inbound', DEV, '--port', '80');
    t.is(r.code, 2, r.stderr);
    t.regex(r.stderr, new RegExp(`needs an IFB named ${ifb}, but an ifb of that name exists that synplug did not create`));
    t.deepEqual(snapshot(), before);
  } finally {
    sh(IP, 'link', 'del', ifb);
  }
});

test.serial("--inbound naming an IFB (synplug's, or any ifb): exit 2 before the module probe, nothing changed", async (t) => {
  const own = 'sp-ginb0';
  const other = 'sp-ginb1';
  sh(IP, 'link', 'add', own, 'type', 'ifb');
  sh(IP, 'link', 'set', own, 'alias', `synplug inbound hold of ${DEV}`);
  sh(IP, 'link', 'add', other, 'type', 'ifb');
  try {
    const before = snapshot();
    const a = await synplug('setup', '--via', 'plug', '--inbound', own, '--port', '80');
    t.is(a.code, 2, a.stderr);
    t.regex(a.stderr, new RegExp(`${own} is an IFB \\(synplug's IFB of the inbound hold of ${DEV}\\); give the device the clients' packets arrive on`));
    t.notRegex(a.stderr, /sch_plug/, 'refused before the module probe');
    const b = await synplug('setup', '--via', 'plug', '--inbound', other, '--port', '80');
    t.is(b.code, 2, b.stderr);
    t.regex(b.stderr, new RegExp(`${other} is an IFB \\(an ifb device\\); give the device the clients' packets arrive on`));
    t.notRegex(b.stderr, /sch_plug/, 'refused before the module probe');
    t.deepEqual(snapshot(), before);
  } finally {
    for (const d of [own, other]) sh(IP, 'link', 'del', d);
  }
});

test.serial('no sch_plug in this kernel: exit 5 naming it; no IFB, no clsact, no filter left', async (t) => {
  const before = snapshot();
  const r = await synplug('setup', '--via', 'plug', '--inbound', DEV, '--port', '80', '--addr', '169.254.0.1', '--json');
  t.is(r.code, 5, r.stderr);
  const e = JSON.parse(r.stdout) as { error: string; category: string };
  t.is(e.category, 'missing-module');
  t.regex(e.error, /sch_plug \(qdisc plug\)/);
  t.regex(e.error, /nothing was changed/);
  t.notRegex(e.error, /sch_ingress|act_mirred|ifb \(/, 'what this kernel has is not named');
  // as demo --via plug does, the refusal names the hold that works here
  t.true(e.error.endsWith("; the queue hold works on this kernel: 'synplug setup --via queue' with the same options (or leave --via out)"), e.error);
  t.deepEqual(snapshot(), before);
  t.throws(() => sh(IP, 'link', 'show', 'dev', ifb), undefined, 'no IFB');
  t.false(sh(TC, 'qdisc', 'show', 'dev', DEV).includes('clsact'));
  t.is(sh(TC, 'filter', 'show', 'dev', DEV, 'ingress'), '');
});

test.serial('a renamed device: teardown --inbound OLDNAME removes the SYN filter on the renamed device too, and the IFB', async (t) => {
  // The hold's state built by hand (no sch_plug here): an IFB with synplug's alias, clsact, a u32 redirect at pref 65000, setup.json.
  // In a namespace of its own: a teardown without a record in another live file removes every IFB carrying synplug's alias.
  const N = inboundNetns('sp-girns', 'sp-gir0', 'sp-gir1');
  const dev = N.dev;
  const renamed = 'sp-giz0';
  const sd = mkdtempSync(join(tmpdir(), 'synplug-inbound-rename-'));
  try {
    N.create();
    const rifb = `spifb${N.ifindex}`;
    N.ifb(rifb, `synplug inbound hold of ${dev}`);
    N.sh(TC, 'qdisc', 'add', 'dev', dev, 'clsact');
    N.redirect('65000', 'ip', '80', rifb);
    const hold = {
      mode: 'inbound',
      dev,
      createdAt: 0,
      ifb: rifb,
      ports: [80],
      addrs: [],
      classifier: 'u32',
      limit: 1048576,
      families: ['ip'],
      addedClsact: true,
    };
    writeFileSync(join(sd, 'setup.json'), JSON.stringify({ version: 2, netns: cookieOf(N.ns), holds: { [`inbound:${dev}`]: hold } }), { mode: 0o600 });
    N.sh(IP, 'link', 'set', dev, 'name', renamed);
    t.regex(N.sh(TC, 'filter', 'show', 'dev', renamed, 'ingress'), /pref 65000/, 'the filter stayed with the renamed device');
    const r = await N.synplug(sd, 'teardown', '--inbound', dev);
    t.is(r.code, 0, r.stderr);
    t.is(N.sh(TC, 'filter', 'show', 'dev', renamed, 'ingress'), '', 'no filter redirecting to a missing IFB is left');
    t.throws(() => N.sh(IP, 'link', 'show', 'dev', rifb), undefined, 'the IFB is gone');
    t.false(N.sh(TC, 'qdisc', 'show', 'dev', renamed).includes('clsact'), 'the clsact setup added is gone');
  } finally {
    N.destroy();
    rmSync(sd, { recursive: true, force: true });
  }
});
