/**
 * Kernel tests (in the VM, Debian 6.1 and 6.12: sch_plug, cls_flower,
 * cls_u32, act_mirred, ifb): the guard's inbound hold, driven through the
 * built CLI (dist/bundle/synplug.cjs), with real clients in another network
 * namespace joined to this one by a veth pair.
 *
 * Topology: this process's namespace is the server side (sp-gi0,
 * 169.254.79.1/24 and fd00:79::1/64, an echo server on PORT); the client
 * side is a namespace of its own (sp-gi1, 169.254.79.2 and fd00:79::2), where
 * python clients open a new connection each, send 3000 bytes and read them
 * back. Oracles: `tc -s -j`, `ip -j -d link`. Every wait is bounded and
 * polls; nothing asserts a duration.
 *
 * The file takes the guard tests' lock on `lo` (test/helpers/guard-vm.ts)
 * for its whole run: one test sets up the local hold on lo as well.
 */
import test, { type ExecutionContext } from 'ava';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import net, { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { StateStore } from '../../src/guard/state.js';
import { otherNamespace, inNs, runClient, sh, quietly, parseTcJson, IP, TC } from '../helpers/tc-inbound.js';
import {
  ADDR,
  TEST_TIMEOUT,
  WAIT_MS,
  alive,
  cli,
  gate,
  gatedCommand,
  kill,
  lockLo,
  openGate,
  requireVm,
  resetLo,
  run,
  sleep,
  startCli,
  startedPid,
  waitFor,
  within,
  type Started,
} from '../helpers/guard-vm.js';

const SRV = 'sp-gi0';
const PEER = 'sp-gi1';
const PORT = 16079;
/** the local hold's proxy port (the echo server on PORT listens on every IPv4 address, 169.254.255.254 included) */
const LOCAL_PORT = 16080;
const V4 = { srv: '169.254.79.1', cli: '169.254.79.2' };
const V6 = { srv: 'fd00:79::1', cli: 'fd00:79::2' };
const SD = '/run/synplug-inbound-test';

let other: ChildProcess;
let server: Server;
let localServer: Server | undefined;
let unlock: (() => void) | undefined;
let ifb = '';

test.before(async () => {
  requireVm();
  unlock = await lockLo();
  await resetLo();
  quietly(IP, 'link', 'del', SRV);
  other = await otherNamespace();
  sh(IP, 'link', 'add', SRV, 'type', 'veth', 'peer', 'name', PEER, 'netns', String(other.pid));
  sh(IP, 'addr', 'add', `${V4.srv}/24`, 'dev', SRV);
  sh(IP, '-6', 'addr', 'add', `${V6.srv}/64`, 'dev', SRV, 'nodad');
  sh(IP, 'link', 'set', SRV, 'up');
  inNs(other, IP, 'link', 'set', 'lo', 'up');
  inNs(other, IP, 'addr', 'add', `${V4.cli}/24`, 'dev', PEER);
  inNs(other, IP, '-6', 'addr', 'add', `${V6.cli}/64`, 'dev', PEER, 'nodad');
  inNs(other, IP, 'link', 'set', PEER, 'up');
  const idx = (JSON.parse(sh(IP, '-j', 'link', 'show', 'dev', SRV)) as Array<{ ifindex: number }>)[0].ifindex;
  ifb = `spifb${idx}`;
  server = createServer((s) => s.pipe(s));
  await new Promise<void>((r) => server.listen({ port: PORT, host: '::', ipv6Only: false }, () => r()));
  // the client side reaches both addresses before any test plugs anything
  await within(runClient(other, '4', V4.srv, PORT, 1), 'a first IPv4 connection');
  await within(runClient(other, '6', V6.srv, PORT, 1), 'a first IPv6 connection');
});

test.after.always(async () => {
  await cli(['teardown', '--state-dir', SD]).catch(() => undefined);
  server?.close();
  localServer?.close();
  quietly(IP, 'link', 'del', SRV);
  if (ifb) quietly(IP, 'link', 'del', ifb);
  other?.kill('SIGKILL');
  rmSync(SD, { recursive: true, force: true });
  await resetLo();
  unlock?.();
});

const json = <T>(r: { stdout: string }): T => JSON.parse(r.stdout.trim().split('\n').pop()!) as T;

async function synplug(t: ExecutionContext, args: string[], code = 0): Promise<string> {
  const r = await cli(args);
  t.is(r.code, code, `synplug ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** The IFB's root qdisc as tc -s -j shows it (undefined without the IFB). */
async function ifbRoot(): Promise<{ kind: string; handle: string; packets: number; qlen: number; drops: number } | undefined> {
  const r = await run('tc', ['-s', '-j', 'qdisc', 'show', 'dev', ifb, 'root']);
  if (r.code !== 0) return undefined;
  return (JSON.parse(r.stdout) as Array<{ kind: string; handle: string; packets: number; qlen: number; drops: number }>)[0];
}

/** tc -j filter show dev SRV PARENT, as pref/protocol/kind triples of the entries with options. */
async function filterSummary(parent: 'ingress' | 'egress'): Promise<string[]> {
  const r = await run('tc', ['-j', 'filter', 'show', 'dev', SRV, parent]);
  if (r.code !== 0 || r.stdout.trim() === '') return [];
  // tc -j prints u32's offset fields as invalid JSON: read it the way the tc tests do
  const fs = parseTcJson(r.stdout) as Array<{ pref: number; protocol: string; kind: string; options?: unknown }>;
  return [...new Set(fs.map((f) => `${f.pref} ${f.protocol} ${f.kind}`))].sort();
}

/** The SYN filters synplug arms on SRV for a hold (both protocols, of a classifier). */
const armed = (classifier: string): string[] => [`65000 ip ${classifier}`, `65001 ipv6 ${classifier}`];

/** Wait (bounded, polling) until SRV's ingress filters are `want`. */
async function waitFilters(want: string[], what: string): Promise<void> {
  const until = Date.now() + WAIT_MS;
  for (;;) {
    const got = await filterSummary('ingress');
    if (JSON.stringify(got) === JSON.stringify(want)) return;
    if (Date.now() > until) throw new Error(`gave up waiting for ${what}: ingress filters ${JSON.stringify(got)}`);
    await sleep(100);
  }
}

async function srvQdiscKinds(): Promise<string[]> {
  return (JSON.parse(await (await run('tc', ['-j', 'qdisc', 'show', 'dev', SRV])).stdout) as Array<{ kind: string }>).map((q) => q.kind).sort();
}

async function ifbExists(): Promise<boolean> {
  return (await run('ip', ['link', 'show', 'dev', ifb])).code === 0;
}

/** Assert nothing of synplug's is on the server side (foreign state given as what must remain). */
async function assertClean(t: ExecutionContext, when: string, foreign: { qdiscs?: string[]; ingress?: string[]; egress?: string[] } = {}): Promise<void> {
  t.false(await ifbExists(), `${when}: no ${ifb}`);
  t.deepEqual(
    (await srvQdiscKinds()).filter((k) => k === 'clsact' || k === 'ingress'),
    foreign.qdiscs ?? [],
    `${when}: the ingress qdiscs on ${SRV}`,
  );
  t.deepEqual(await filterSummary('ingress'), foreign.ingress ?? [], `${when}: ingress filters`);
}

/** Start `synplug protect` over a gated command; resolves once the command runs (every plug then buffers). */
async function protect(t: ExecutionContext, flags: string[]): Promise<{ p: Started; go: string; started: string }> {
  const g = gate(t);
  const p = startCli(['protect', '--json', '--state-dir', SD, ...flags, '--', ...gatedCommand(g.started, g.go)]);
  t.teardown(() => {
    kill(p.child.pid);
    openGate(g.go);
    kill(startedPid(g.started));
  });
  await waitFor(() => startedPid(g.started) !== undefined, 'the protected command to start', {
    abort: () => p.ended && `protect exited ${p.ended.code}: ${p.ended.stderr}`,
  });
  return { p, go: g.go, started: g.started };
}

/** A client connection from the other side that is not awaited yet: its promise, and whether it settled. */
function client(family: '4' | '6', n = 1, opts = false): { done: Promise<string>; settled: () => boolean } {
  let settled = false;
  const done = runClient(other, family, family === '4' ? V4.srv : V6.srv, PORT, n, opts).finally(() => {
    settled = true;
  });
  done.catch(() => {});
  return { done, settled: () => settled };
}

async function waitQlen(n: number, what: string): Promise<void> {
  const until = Date.now() + WAIT_MS;
  for (;;) {
    const q = await ifbRoot();
    if ((q?.qlen ?? 0) >= n) return;
    if (Date.now() > until) throw new Error(`gave up waiting for ${what}: the plug on ${ifb} holds ${q?.qlen ?? 'no'} packet(s)`);
    await sleep(100);
  }
}

async function setupInbound(t: ExecutionContext, extra: string[] = []): Promise<{ changed: boolean; inbound: { classifier: string; ifb: string } }> {
  const out = await synplug(t, ['setup', '--inbound', SRV, '--port', String(PORT), '--json', '--state-dir', SD, ...extra]);
  return JSON.parse(out) as { changed: boolean; inbound: { classifier: string; ifb: string } };
}

test.serial(
  'setup --inbound builds the IFB with a plug root and clsact, no SYN filter (armed per hold); check 0; setup again changes nothing; teardown removes exactly that; check 1',
  async (t) => {
    t.timeout(TEST_TIMEOUT);
    await assertClean(t, 'before');
    await synplug(t, ['check', '--state-dir', SD], 1);
    const r = await setupInbound(t);
    t.true(r.changed);
    t.is(r.inbound.ifb, ifb);
    t.is(r.inbound.classifier, 'flower', 'this kernel has cls_flower: flower is chosen');
    const link = (
      JSON.parse(sh(IP, '-j', '-d', 'link', 'show', 'dev', ifb)) as Array<{ linkinfo?: { info_kind: string }; flags: string[]; ifalias?: string }>
    )[0];
    t.is(link.linkinfo?.info_kind, 'ifb');
    t.true(link.flags.includes('UP'));
    t.is(readFileSync(`/proc/sys/net/ipv6/conf/${ifb}/disable_ipv6`, 'utf8').trim(), '1', 'IPv6 is off on the IFB');
    t.like(await ifbRoot(), { kind: 'plug', handle: '1:' });
    t.true((await srvQdiscKinds()).includes('clsact'));
    t.deepEqual(await filterSummary('ingress'), [], 'the SYN filters are armed per hold: none outside a hold');
    await synplug(t, ['check', '--state-dir', SD], 0);
    const again = await setupInbound(t);
    t.false(again.changed, 'a second setup finds everything in place');
    const st = JSON.parse(await synplug(t, ['status', '--json', '--state-dir', SD])) as { holds: Array<{ id: string; state: string; ifb?: string }> };
    t.deepEqual(
      st.holds.map((h) => [h.id, h.state, h.ifb]),
      [[`inbound:${SRV}`, 'ok', ifb]],
    );
    const td = JSON.parse(await synplug(t, ['teardown', '--json', '--state-dir', SD])) as { holds: string[]; removed: string[] };
    t.deepEqual(td.holds, [`inbound:${SRV}`]);
    await assertClean(t, 'after teardown');
    await synplug(t, ['check', '--state-dir', SD], 1);
  },
);

test.serial('bad input: exit 2 with nothing changed (missing device, lo, port, address, IFB name clash)', async (t) => {
  t.timeout(TEST_TIMEOUT);
  const bad: string[][] = [
    ['setup', '--inbound', 'sp-gi9', '--port', String(PORT)],
    ['setup', '--inbound', 'lo', '--port', String(PORT)],
    ['setup', '--inbound', SRV, '--port', '65536'],
    ['setup', '--inbound', SRV],
    ['setup', '--inbound', SRV, '--port', String(PORT), '--addr', '169.254.79'],
    ['setup', '--port', String(PORT)],
  ];
  for (const args of bad) {
    const r = await cli([...args, '--state-dir', SD]);
    t.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
  }
  sh(IP, 'link', 'add', ifb, 'type', 'dummy');
  try {
    const r = await cli(['setup', '--inbound', SRV, '--port', String(PORT), '--state-dir', SD]);
    t.is(r.code, 2, r.stderr);
    t.regex(r.stderr, new RegExp(`${ifb}.*synplug did not create`));
    t.deepEqual(await srvQdiscKinds().then((k) => k.filter((x) => x === 'clsact')), []);
    t.deepEqual(await filterSummary('ingress'), []);
  } finally {
    sh(IP, 'link', 'del', ifb);
  }
  await assertClean(t, 'after the refusals');
  t.false(existsSync(join(SD, 'setup.json')));
});

for (const classifier of ['flower', 'u32'] as const) {
  test.serial(
    `${classifier}: outside a hold no filter and nothing passes the IFB; during protect the SYN filters hold SYNs (IPv4, IPv6, IP options), delivered after; the filters go after the release`,
    async (t) => {
      t.timeout(TEST_TIMEOUT);
      const r = await setupInbound(t, ['--classifier', classifier]);
      t.is(r.inbound.classifier, classifier);
      t.teardown(() => cli(['teardown', '--state-dir', SD]).then(() => undefined));
      t.deepEqual(await filterSummary('ingress'), [], 'no SYN filter outside a hold');

      // Outside a hold nothing passes the IFB: 5 connections each way (and IPv4 SYNs with IP options), each with data and ACKs.
      const before = (await ifbRoot())!.packets;
      t.is(await within(runClient(other, '4', V4.srv, PORT, 5), 'IPv4 connections'), 'ok');
      t.is(await within(runClient(other, '6', V6.srv, PORT, 5), 'IPv6 connections'), 'ok');
      t.is(await within(runClient(other, '4', V4.srv, PORT, 5, true), 'IPv4 connections with IP options'), 'ok');
      t.is((await ifbRoot())!.packets - before, 0, 'outside a hold no packet went through the IFB');

      const { p, go } = await protect(t, ['--max-hold', '120s']);
      t.deepEqual(await filterSummary('ingress'), armed(classifier), 'the SYN filters are there during the hold');
      const actions = sh(TC, 'filter', 'show', 'dev', SRV, 'ingress');
      t.regex(actions, new RegExp(`mirred \\(Egress Redirect to device ${ifb}\\) stolen`));
      if (classifier === 'flower') t.regex(actions, /tcp_flags 0x2\/(0x)?12/); // iproute2 6.1 prints the mask without 0x
      const c4 = client('4');
      const c6 = client('6');
      // with IP options: the u32 filter reaches the TCP header past them
      const c4o = runClient(other, '4', V4.srv, PORT, 1, true);
      c4o.catch(() => {});
      await waitQlen(3, 'the three SYNs to be held');
      t.false(c4.settled(), 'the IPv4 connection waits while the plug buffers');
      t.false(c6.settled(), 'the IPv6 connection waits while the plug buffers');
      openGate(go);
      t.is(await within(c4.done, 'the IPv4 connection after the release'), 'ok');
      t.is(await within(c6.done, 'the IPv6 connection after the release'), 'ok');
      const end = await within(p.done, 'protect to exit');
      t.is(end.code, 0, end.stderr);
      const res = json<{ report: { heldSyns: number }; maxHoldReached: boolean; releasedHold: boolean }>(end);
      t.true(res.releasedHold);
      t.false(res.maxHoldReached);
      t.true(res.report.heldSyns >= 3, `SYNs held and released: ${res.report.heldSyns}`);
      t.is(await within(c4o, 'the IPv4 connection with IP options after the release'), 'ok');
      t.is((await ifbRoot())!.qlen, 0);
      t.deepEqual(await filterSummary('ingress'), [], 'the SYN filters are removed after the release');
    },
  );
}

test.serial('a non-SYN packet of an established connection is not held while the plug buffers', async (t) => {
  t.timeout(TEST_TIMEOUT);
  await setupInbound(t);
  t.teardown(() => cli(['teardown', '--state-dir', SD]).then(() => undefined));
  const dir = gate(t).dir;
  const flag = join(dir, 'more');
  // one connection: an echo round, then (once `flag` exists) another, then 'ok'
  const py = `
import socket, os, sys, time
s = socket.create_connection(('${V4.srv}', ${PORT}), timeout=60)
def echo():
    s.sendall(b'y' * 2000)
    got = b''
    while len(got) < 2000:
        d = s.recv(65536)
        if not d: break
        got += d
    assert len(got) == 2000
echo()
print('connected', flush=True)
while not os.path.exists('${flag}'): time.sleep(0.05)
echo()
print('ok', flush=True)
`;
  const proc = spawn('nsenter', ['-t', String(other.pid), '-n', 'python3', '-c', py], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  t.teardown(() => {
    proc.kill('SIGKILL');
  });
  await waitFor(() => out.includes('connected'), 'the connection to be established');
  const heldBefore = (await ifbRoot())!;
  const { p, go } = await protect(t, ['--max-hold', '120s']);
  sh('touch', flag);
  await waitFor(() => out.includes('ok'), 'the second echo round while the plug buffers', { abort: () => p.ended && `protect exited: ${p.ended.stderr}` });
  t.is(p.ended, undefined, 'protect still holds (its command waits at the gate)');
  const q = (await ifbRoot())!;
  t.is(q.qlen, 0, 'nothing of the established connection waits on the IFB');
  t.is(q.packets, heldBefore.packets, 'nothing of it went through the IFB');
  openGate(go);
  t.is((await within(p.done, 'protect to exit')).code, 0);
});

test.serial('max-hold: protect releases the held SYN at its deadline while the command still runs', async (t) => {
  t.timeout(TEST_TIMEOUT);
  await setupInbound(t);
  t.teardown(() => cli(['teardown', '--state-dir', SD]).then(() => undefined));
  const { p, go, started } = await protect(t, ['--max-hold', '20s']);
  const c = client('4');
  await waitQlen(1, 'the SYN to be held');
  t.is(await within(c.done, 'the connection after the max-hold release'), 'ok');
  t.true(alive(startedPid(started)), 'the command still runs (its gate is closed)');
  openGate(go);
  const end = await within(p.done, 'protect to exit');
  t.is(end.code, 0, end.stderr);
  t.true(json<{ maxHoldReached: boolean }>(end).maxHoldReached);
});

test.serial(
  'manual plug of the inbound hold (no kernel-side deadline): plug exits at once, its watchdog holds the SYN until --max-hold, then releases, drops the lease and exits',
  async (t) => {
    t.timeout(TEST_TIMEOUT);
    await setupInbound(t);
    t.teardown(() => cli(['teardown', '--state-dir', SD]).then(() => undefined));
    const store = new StateStore(SD);
    const r = await cli(['plug', '--json', '--max-hold', '20s', '--state-dir', SD]);
    t.is(r.code, 0, r.stderr);
    const pl = json<{ deadline: number; holds: string[] }>(r);
    t.deepEqual(pl.holds, [`inbound:${SRV}`]);
    t.true(r.exitedAt < pl.deadline, 'precondition: plug exited before its deadline (nothing of it runs but the watchdog)');
    const leases = store.readLeases()?.leases ?? [];
    t.is(leases.length, 1, 'one manual lease');
    t.like(leases[0], { owner: 'manual', deadline: pl.deadline });
    const watchdogPid = leases[0].watchdogPid;
    t.true(alive(watchdogPid), 'the watchdog runs after plug exited');
    t.like(store.readPlug(), { state: 'buffering' });
    let connectedAt: number | undefined;
    const c = client('4');
    void c.done.then(() => (connectedAt = Date.now()));
    await waitQlen(1, 'the SYN to be held by the manual plug');
    t.is(await within(c.done, 'the connection once the watchdog released at the deadline'), 'ok');
    t.true(connectedAt! >= pl.deadline, 'the held SYN went through only from the deadline on');
    await waitFor(() => !alive(watchdogPid), 'the watchdog to exit once it released');
    const after = store.readPlug()!;
    t.is(after.state, 'released');
    t.true(after.releasedAt! >= pl.deadline, 'released at the deadline, not when plug exited');
    t.deepEqual(store.readLeases()?.leases ?? [], [], 'the manual lease is dropped');
    t.like(await ifbRoot(), { kind: 'plug', qlen: 0 });
    // the next command finds nothing to recover
    const st = JSON.parse(await synplug(t, ['status', '--json', '--state-dir', SD])) as { recovered?: string; leases?: unknown[] };
    t.is(st.recovered, undefined);
    t.deepEqual(st.leases ?? [], []);
  },
);

test.serial('SIGKILL of protect: its watchdog releases the IFB plug, then removes the SYN filters', async (t) => {
  t.timeout(TEST_TIMEOUT);
  await setupInbound(t);
  t.teardown(() => cli(['teardown', '--state-dir', SD]).then(() => undefined));
  const { p, go } = await protect(t, ['--max-hold', '120s']);
  const c = client('6');
  await waitQlen(1, 'the SYN to be held');
  t.deepEqual(await filterSummary('ingress'), armed('flower'), 'the SYN filters are there during the hold');
  kill(p.child.pid, 'SIGKILL');
  t.is(await within(c.done, 'the connection after the watchdog released'), 'ok');
  t.is((await ifbRoot())!.qlen, 0);
  await waitFilters([], 'the watchdog to remove the SYN filters after its release');
  t.like(await ifbRoot(), { kind: 'plug' }, 'the IFB and its plug stay: they are set up once');
  openGate(go);
  // the next command finds the plug released (or releases it: stale-plug recovery)
  await synplug(t, ['release', '--state-dir', SD]);
  const plug = JSON.parse(readFileSync(join(SD, 'plug.json'), 'utf8')) as { state: string };
  t.is(plug.state, 'released');
});

test.serial(
  "foreign clsact filters are left alone by setup and teardown (flower and u32; u32's table is freed with a foreign u32 filter on the hook)",
  async (t) => {
    t.timeout(TEST_TIMEOUT);
    sh(TC, 'qdisc', 'add', 'dev', SRV, 'clsact');
    t.teardown(() => quietly(TC, 'qdisc', 'del', 'dev', SRV, 'clsact'));
    sh(TC, 'filter', 'add', 'dev', SRV, 'ingress', 'pref', '10', 'protocol', 'ip', 'flower', 'ip_proto', 'udp', 'dst_port', '9', 'action', 'pass');
    sh(TC, 'filter', 'add', 'dev', SRV, 'ingress', 'pref', '11', 'protocol', 'ip', 'u32', 'match', 'ip', 'dport', '9', '0xffff', 'action', 'pass');
    sh(TC, 'filter', 'add', 'dev', SRV, 'egress', 'pref', '12', 'protocol', 'ip', 'matchall', 'action', 'pass');
    const foreignIngress = sh(TC, 'filter', 'show', 'dev', SRV, 'ingress');
    const foreignEgress = sh(TC, 'filter', 'show', 'dev', SRV, 'egress');
    for (const classifier of ['u32', 'flower', 'u32']) {
      const r = await setupInbound(t, ['--classifier', classifier]);
      t.true(r.changed);
      t.deepEqual(await filterSummary('ingress'), ['10 ip flower', '11 ip u32'], 'setup adds no SYN filter: they come with each hold');
      const { p, go } = await protect(t, ['--max-hold', '120s']);
      t.deepEqual(await filterSummary('ingress'), ['10 ip flower', '11 ip u32', ...armed(classifier)]);
      const c = client('4', 2);
      openGate(go);
      t.is((await within(p.done, 'protect to exit')).code, 0);
      t.is(await within(c.done, 'connections'), 'ok');
      t.deepEqual(
        await filterSummary('ingress'),
        ['10 ip flower', '11 ip u32'],
        "after the release only the foreign filters are left (u32's table freed beside a foreign u32 filter)",
      );
      await synplug(t, ['teardown', '--state-dir', SD]);
      t.is(sh(TC, 'filter', 'show', 'dev', SRV, 'ingress'), foreignIngress, `${classifier}: the foreign ingress filters are as they were`);
      t.is(sh(TC, 'filter', 'show', 'dev', SRV, 'egress'), foreignEgress, `${classifier}: the foreign egress filter is as it was`);
      t.false(await ifbExists());
      t.true((await srvQdiscKinds()).includes('clsact'), 'the clsact synplug did not add stays');
    }
  },
);

test.serial('overlapping protects: the SYN filters stay while either holds, and go after the last release', async (t) => {
  t.timeout(TEST_TIMEOUT);
  await setupInbound(t);
  t.teardown(() => cli(['teardown', '--state-dir', SD]).then(() => undefined));
  t.deepEqual(await filterSummary('ingress'), [], 'before: none');
  const a = await protect(t, ['--max-hold', '120s']);
  const b = await protect(t, ['--max-hold', '120s']);
  t.deepEqual(await filterSummary('ingress'), armed('flower'));
  const c = client('4');
  await waitQlen(1, 'the SYN to be held');
  openGate(a.go);
  t.is((await within(a.p.done, 'the first protect to exit')).code, 0);
  t.false(c.settled(), 'the other protect still holds');
  t.deepEqual(await filterSummary('ingress'), armed('flower'), 'its filters stay while the other lease lives');
  openGate(b.go);
  t.is((await within(b.p.done, 'the second protect to exit')).code, 0);
  t.is(await within(c.done, 'the connection after the last release'), 'ok');
  t.deepEqual(await filterSummary('ingress'), [], 'after the last release: none');
});

test.serial('local + inbound set up together: protect holds both, teardown removes both', async (t) => {
  t.timeout(TEST_TIMEOUT);
  // the local hold on lo: a proxy on 169.254.255.254
  await synplug(t, ['setup', '--state-dir', SD]);
  localServer = createServer((s) => s.pipe(s));
  await new Promise<void>((r) => localServer!.listen({ port: LOCAL_PORT, host: ADDR }, () => r()));
  await setupInbound(t);
  t.teardown(() => cli(['teardown', '--state-dir', SD]).then(() => undefined));
  const ck = JSON.parse(await synplug(t, ['check', '--json', '--state-dir', SD])) as { state: string; holds: Array<{ id: string; state: string }> };
  t.is(ck.state, 'ok');
  t.deepEqual(ck.holds.map((h) => `${h.id} ${h.state}`).sort(), ['local ok', `inbound:${SRV} ok`].sort());
  const { p, go } = await protect(t, ['--max-hold', '120s']);
  const lease = JSON.parse(readFileSync(join(SD, 'leases.json'), 'utf8')) as { leases: Array<{ holds: string[] }> };
  t.deepEqual([...lease.leases[0].holds].sort(), ['local', `inbound:${SRV}`].sort());
  const remote = client('4');
  let localDone = false;
  const local = new Promise<void>((resolve, reject) => {
    const s = net.connect({ host: ADDR, port: LOCAL_PORT }, () => {
      localDone = true;
      s.end();
      resolve();
    });
    s.on('error', reject);
  });
  await waitQlen(1, 'the remote SYN to be held');
  await waitFor(() => {
    const r = sh(TC, '-s', '-j', 'qdisc', 'show', 'dev', 'lo');
    return (JSON.parse(r) as Array<{ kind: string; qlen?: number }>).some((q) => q.kind === 'plug' && (q.qlen ?? 0) >= 1);
  }, 'the local SYN to be held');
  t.false(localDone);
  t.false(remote.settled());
  openGate(go);
  await within(local, 'the local connection after the release');
  t.is(await within(remote.done, 'the remote connection after the release'), 'ok');
  t.is((await within(p.done, 'protect to exit')).code, 0);
  const td = JSON.parse(await synplug(t, ['teardown', '--json', '--state-dir', SD])) as { holds: string[] };
  t.deepEqual([...td.holds].sort(), ['local', `inbound:${SRV}`].sort());
  await assertClean(t, 'after teardown');
  localServer.close();
  localServer = undefined;
});

test.serial('teardown --inbound DEV removes that hold only; the record keeps the other', async (t) => {
  t.timeout(TEST_TIMEOUT);
  await synplug(t, ['setup', '--state-dir', SD]);
  await setupInbound(t);
  t.teardown(() => cli(['teardown', '--state-dir', SD]).then(() => undefined));
  const td = JSON.parse(await synplug(t, ['teardown', '--inbound', SRV, '--json', '--state-dir', SD])) as { holds: string[] };
  t.deepEqual(td.holds, [`inbound:${SRV}`]);
  await assertClean(t, 'after teardown --inbound');
  const rec = JSON.parse(readFileSync(join(SD, 'setup.json'), 'utf8')) as { holds: Record<string, unknown> };
  t.deepEqual(Object.keys(rec.holds), ['local']);
  await synplug(t, ['check', '--state-dir', SD], 0);
  const again = JSON.parse(await synplug(t, ['teardown', '--inbound', SRV, '--json', '--state-dir', SD], 0)) as { holds: string[] };
  t.deepEqual(again.holds, [], 'nothing of that hold to remove: exit 0');
  t.deepEqual(Object.keys((JSON.parse(readFileSync(join(SD, 'setup.json'), 'utf8')) as { holds: Record<string, unknown> }).holds), ['local']);
});

test.serial('teardown --local removes the local hold only; the inbound hold stays set up', async (t) => {
  t.timeout(TEST_TIMEOUT);
  await synplug(t, ['setup', '--state-dir', SD]);
  await setupInbound(t);
  t.teardown(() => cli(['teardown', '--state-dir', SD]).then(() => undefined));
  const td = JSON.parse(await synplug(t, ['teardown', '--local', '--json', '--state-dir', SD])) as { holds: string[] };
  t.deepEqual(td.holds, ['local']);
  const lo = JSON.parse(sh(TC, '-j', 'qdisc', 'show', 'dev', 'lo')) as Array<{ kind: string }>;
  t.false(
    lo.some((q) => q.kind === 'prio' || q.kind === 'plug'),
    `no qdisc of the local hold left on lo: ${lo.map((q) => q.kind).join(' ')}`,
  );
  const rec = JSON.parse(readFileSync(join(SD, 'setup.json'), 'utf8')) as { holds: Record<string, unknown> };
  t.deepEqual(Object.keys(rec.holds), [`inbound:${SRV}`]);
  t.true(await ifbExists(), 'the IFB stays');
  t.deepEqual(
    (await srvQdiscKinds()).filter((k) => k === 'clsact'),
    ['clsact'],
    'the clsact stays',
  );
  await synplug(t, ['check', '--state-dir', SD], 0);
  const againLocal = JSON.parse(await synplug(t, ['teardown', '--local', '--json', '--state-dir', SD], 0)) as { holds: string[] };
  t.deepEqual(againLocal.holds, [], 'nothing of the local hold to remove: exit 0');
  await synplug(t, ['teardown', '--state-dir', SD]);
  await assertClean(t, 'after teardown');
});

test.serial(
  'an altname given to --inbound is the same hold; set up again for two ports, a manual plug arms the filters (flower and u32); status names the redirect target; the release removes them',
  async (t) => {
    t.timeout(TEST_TIMEOUT);
    const alt = 'sp-gialt';
    sh(IP, 'link', 'property', 'add', 'dev', SRV, 'altname', alt);
    t.teardown(() => quietly(IP, 'link', 'property', 'del', 'dev', SRV, 'altname', alt));
    t.teardown(() => cli(['teardown', '--state-dir', SD]).then(() => undefined));
    for (const classifier of ['flower', 'u32'] as const) {
      const r = JSON.parse(await synplug(t, ['setup', '--inbound', alt, '--port', String(PORT), '--classifier', classifier, '--json', '--state-dir', SD])) as {
        hold: string;
        changed: boolean;
      };
      t.is(r.hold, `inbound:${SRV}`, 'the hold is keyed by the device, not the name given');
      t.false((await setupInbound(t)).changed, `${classifier}: setup --inbound ${SRV} finds the hold set up through its altname`);
      const rec = JSON.parse(readFileSync(join(SD, 'setup.json'), 'utf8')) as { holds: Record<string, unknown> };
      t.deepEqual(Object.keys(rec.holds), [`inbound:${SRV}`], 'one hold');
      await synplug(t, ['check', '--inbound', alt, '--state-dir', SD], 0);
      // a port change (setup does not change what a hold holds: teardown, then setup with both ports)
      await synplug(t, ['teardown', '--inbound', SRV, '--state-dir', SD]);
      const more = JSON.parse(
        await synplug(t, [
          'setup',
          '--inbound',
          SRV,
          '--port',
          String(PORT),
          '--port',
          String(PORT + 1),
          '--classifier',
          classifier,
          '--json',
          '--state-dir',
          SD,
        ]),
      ) as { changed: boolean; inbound: { ports: number[]; classifier: string } };
      t.true(more.changed);
      t.deepEqual(more.inbound.ports, [PORT, PORT + 1]);
      t.is(more.inbound.classifier, classifier);
      await synplug(t, ['check', '--state-dir', SD], 0);
      t.deepEqual(await filterSummary('ingress'), []);
      t.is(await within(runClient(other, '4', V4.srv, PORT, 2), 'connections after the port change'), 'ok');
      // a manual plug arms the filters (both ports); status shows them while it holds
      await synplug(t, ['plug', '--max-hold', '60s', '--state-dir', SD]);
      t.deepEqual(await filterSummary('ingress'), armed(classifier));
      const st = await synplug(t, ['status', '--inbound', SRV, '--state-dir', SD]);
      t.regex(st, new RegExp(`Egress Redirect to device ${ifb}\\)`), 'the redirect target by name, as tc prints it');
      t.notRegex(st, /\bon lo\b/);
      await synplug(t, ['release', '--state-dir', SD]);
      t.deepEqual(await filterSummary('ingress'), [], 'the release removes them');
      await synplug(t, ['teardown', '--state-dir', SD]);
      await assertClean(t, `${classifier}: after teardown`);
    }
  },
);

test.serial(
  "a lost record: release releases the plug of synplug's IFB found by its alias, and teardown --inbound DEV removes it with its filters",
  async (t) => {
    t.timeout(TEST_TIMEOUT);
    await setupInbound(t);
    t.teardown(() => quietly(IP, 'link', 'del', ifb));
    t.teardown(() => quietly(TC, 'qdisc', 'del', 'dev', SRV, 'clsact'));
    // a crash during a hold: the SYN filters armed and the plug buffering (a manual plug), its watchdog killed, the record lost
    await synplug(t, ['plug', '--max-hold', '120s', '--state-dir', SD]);
    kill(new StateStore(SD).readLeases()?.leases[0]?.watchdogPid, 'SIGKILL');
    rmSync(join(SD, 'setup.json'));
    t.deepEqual(await filterSummary('ingress'), armed('flower'), 'the SYN filters of the hold are there');
    const c = client('4');
    await waitQlen(1, 'the SYN to be held');
    t.false(c.settled());
    const rel = JSON.parse(await synplug(t, ['release', '--json', '--state-dir', SD])) as { unrecorded?: string[] };
    t.deepEqual(rel.unrecorded, [`${ifb} (inbound hold of ${SRV})`]);
    t.is(await within(c.done, 'the connection after the release'), 'ok');
    const td = JSON.parse(await synplug(t, ['teardown', '--inbound', SRV, '--json', '--state-dir', SD])) as {
      holds: string[];
      removed: string[];
      kept: string[];
    };
    t.deepEqual(td.holds, [`inbound:${SRV}`]);
    t.true(
      td.removed.some((x) => x.includes('found by its alias')),
      td.removed.join('; '),
    );
    t.false(await ifbExists(), 'the IFB is gone');
    t.deepEqual(await filterSummary('ingress'), [], "synplug's filters are gone");
    t.true(
      td.kept.some((x) => x.includes('no record says whether setup added it')),
      'the clsact is kept: no record says setup added it',
    );
    sh(TC, 'qdisc', 'del', 'dev', SRV, 'clsact');
    await assertClean(t, 'after teardown');
  },
);
