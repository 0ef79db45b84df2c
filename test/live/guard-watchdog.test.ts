/**
 * Live: the watchdog process, started the way {@link startWatchdog} starts
 * it (`node` + this process's execArgv + {@link watchdogEntryPath}, here
 * src/cli/bin/watchdog-main.ts under tsx), sends its release steps when its
 * parent's end of stdin closes without `done` (the parent died) and when the
 * max-hold deadline passes, and exits 1 when a step fails. The steps are
 * pfifo qdiscs on an IFB of this file's own (sp-wd0), so that `tc` shows
 * whether they were sent; the plug itself (sch_plug) is not on this kernel:
 * test/kernel/guard-crash.test.ts covers the real release in the VM.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { NETLINK_ROUTE, NLM_F_ACK } from '../../src/netlink/message.js';
import { qdiscRequest } from '../../src/tc/request.js';
import { hexMessage } from '../../src/guard/watchdog.js';
import { watchdogEntryPath, type WatchdogArm } from '../../src/guard/watchdog.js';
import { deleteLinks, run, tcj } from '../helpers/tools.js';

const DEV = 'sp-wd0';
let ifindex = 0;
const dirs: string[] = [];

test.before(() => {
  deleteLinks(DEV);
  run('/usr/sbin/ip', 'link', 'add', DEV, 'type', 'ifb');
  ifindex = (JSON.parse(run('/usr/sbin/ip', '-j', 'link', 'show', DEV)) as Array<{ ifindex: number }>)[0].ifindex;
});
test.after.always(() => {
  deleteLinks(DEV);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The arm of a watchdog whose release is one pfifo qdisc (handle `handle`) added under sp-wd0's root on `onIndex`. */
function armFor(handle: string, parent: string, onIndex: number, deadline: number): Omit<WatchdogArm, 'op'> {
  const stateDir = mkdtempSync(join(tmpdir(), 'sp-wd-'));
  dirs.push(stateDir);
  const req = qdiscRequest('add', onIndex, { kind: 'pfifo', handle, parent });
  // acked, as the holds' own release messages are (guard/modes)
  req.flags |= NLM_F_ACK;
  return {
    ownerPid: process.pid,
    stateDir,
    deadline,
    dev: DEV,
    release: [{ what: 'plug release', protocol: NETLINK_ROUTE, messages: [hexMessage(req)] }],
  };
}

/** Start the watchdog entry point; resolves once it said `ready`. */
async function startEntry() {
  const child = spawn(process.execPath, [...process.execArgv, watchdogEntryPath()], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const first = await new Promise<string>((done) => createInterface({ input: child.stdout }).once('line', done));
  return { child, first, exited, stderr: () => stderr };
}

const qdiscs = () => tcj('qdisc', 'show', 'dev', DEV).map((q) => `${q.kind} ${q.handle} ${q.root ? 'root' : q.parent}`);

test.serial('stdin closed without done (the parent died): the watchdog sends its release steps and exits 0', async (t) => {
  const w = await startEntry();
  t.is(w.first, 'ready');
  w.child.stdin.write(`${JSON.stringify({ op: 'arm', ...armFor('10:', 'root', ifindex, Date.now() + 600_000) })}\n`);
  w.child.stdin.end();
  t.is(await w.exited, 0, w.stderr());
  t.is(w.stderr(), 'synplug watchdog: synplug protect ended without releasing (killed?); released the plug\n');
  t.true(qdiscs().includes('pfifo 10: root'), qdiscs().join(', '));
  run('/usr/sbin/tc', 'qdisc', 'del', 'dev', DEV, 'root');
});

test.serial('a session of queue holds only (no plug message to send): the watchdog says it released the hold, not a plug', async (t) => {
  const w = await startEntry();
  t.is(w.first, 'ready');
  const arm = armFor('30:', 'root', ifindex, Date.now() + 600_000);
  const before = qdiscs();
  w.child.stdin.write(`${JSON.stringify({ op: 'arm', ...arm, release: [{ ...arm.release[0], messages: [] }] })}\n`);
  w.child.stdin.end();
  t.is(await w.exited, 0, w.stderr());
  t.is(w.stderr(), 'synplug watchdog: synplug protect ended without releasing (killed?); released the hold\n');
  t.deepEqual(qdiscs(), before, 'nothing was sent');
});

test.serial('the max-hold deadline passes while the parent lives: the watchdog releases and exits 0', async (t) => {
  const w = await startEntry();
  t.is(w.first, 'ready');
  w.child.stdin.write(`${JSON.stringify({ op: 'arm', ...armFor('20:', 'root', ifindex, Date.now() + 200) })}\n`);
  t.is(await w.exited, 0, w.stderr());
  t.is(w.stderr(), 'synplug watchdog: max-hold deadline passed; released the plug\n');
  t.true(qdiscs().includes('pfifo 20: root'), qdiscs().join(', '));
  run('/usr/sbin/tc', 'qdisc', 'del', 'dev', DEV, 'root');
  w.child.stdin.end();
});

test.serial('done after arm: nothing is sent, exit 0 without a word', async (t) => {
  const w = await startEntry();
  w.child.stdin.write(`${JSON.stringify({ op: 'arm', ...armFor('30:', 'root', ifindex, Date.now() + 600_000) })}\n`);
  w.child.stdin.end('{"op":"done"}\n');
  t.is(await w.exited, 0);
  t.is(w.stderr(), '');
  t.false(qdiscs().includes('pfifo 30: root'), qdiscs().join(', '));
});

test.serial('a release step the kernel refuses: the watchdog says release FAILED and exits 1', async (t) => {
  const w = await startEntry();
  // ifindex 0x7fffffff: no such device (ENODEV), three attempts, then FAILED
  w.child.stdin.write(`${JSON.stringify({ op: 'arm', ...armFor('40:', 'root', 0x7fffffff, Date.now() + 600_000) })}\n`);
  w.child.stdin.end();
  t.is(await w.exited, 1, w.stderr());
  t.regex(w.stderr(), /^synplug watchdog: plug release failed: .+\n/);
  t.regex(w.stderr(), /synplug watchdog: synplug protect ended without releasing \(killed\?\); release FAILED \(run synplug release\)\n$/);
});
