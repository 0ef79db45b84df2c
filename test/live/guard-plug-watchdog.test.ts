/**
 * Live (this kernel): a manual plug's watchdog (issue #19, deliverable 11;
 * defect 13: a manual plug started no watchdog, and an inbound hold has no
 * kernel deadline, so it held every SYN until someone ran release).
 *
 * `synplug plug` starts a watchdog, arms it with `untilDeadline` and exits
 * at once. The child test/live/watchdog-manual-child.ts does exactly that
 * (this kernel has no sch_plug: the plug is stood in for by a tbf root
 * qdisc, whose release is its deletion). Judged by the order of events:
 * the owner exits first; the watchdog, left alone, acts only at the
 * deadline (plug.json's releasedAt is not before it), removes the stand-in
 * (as tc sees it), drops the lease, records released, and exits.
 *
 * In a namespace of this file's own (sp-pwd-PID), with a veth pair.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inboundNetns, TC } from '../helpers/inbound-netns.js';
import { StateStore } from '../../src/guard/state.js';
import { setDefaultNetns } from '../../src/netlink/netns.js';

const DEV = 'sp-pwd0';
const N = inboundNetns('sp-pwd', DEV, 'sp-pwd1');
const CHILD = fileURLToPath(new URL('./watchdog-manual-child.ts', import.meta.url));

test.before(() => N.create());
test.after.always(() => N.destroy());

async function until(cond: () => boolean, limitMs: number): Promise<boolean> {
  const end = Date.now() + limitMs;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return cond();
}

test.serial('a manual plug is released at its max-hold by its watchdog, with nothing else running', async (t) => {
  t.timeout(120_000);
  N.sh(TC, 'qdisc', 'add', 'dev', DEV, 'root', 'handle', '1:', 'tbf', 'rate', '1mbit', 'burst', '10kb', 'latency', '50ms');
  const sd = join(mkdtempSync(join(tmpdir(), 'synplug-pwd-')), 'state');
  mkdirSync(sd, { mode: 0o700 });
  try {
    const out = execFileSync(process.execPath, ['--import=tsx', CHILD, N.ns, DEV, String(N.ifindex), sd, '8000'], { encoding: 'utf8', timeout: 60_000 });
    const exitedAt = Date.now();
    const { watchdogPid, deadline } = JSON.parse(out) as { watchdogPid: number; deadline: number };
    t.true(exitedAt < deadline, 'precondition: the owner exited before the deadline');
    const store = new StateStore(sd);
    t.true(await until(() => !existsSync(`/proc/${watchdogPid}`), 90_000), 'the watchdog exits once it acted');
    // the records name the namespace they were written for (the child's): read them as a command there would
    setDefaultNetns(N.ns);
    const p = store.readPlug()!;
    t.is(p.state, 'released');
    t.true(p.releasedAt! >= deadline, 'it acted at the deadline, not when its input ended (when the owner exited)');
    t.notRegex(N.sh(TC, 'qdisc', 'show', 'dev', DEV), /tbf 1: root/, 'the held piece was released (tc no longer lists it)');
    t.deepEqual(store.readLeases()?.leases, [], 'the manual lease is dropped');
  } finally {
    setDefaultNetns(undefined);
    N.quiet(TC, 'qdisc', 'del', 'dev', DEV, 'root');
    rmSync(join(sd, '..'), { recursive: true, force: true });
  }
});
