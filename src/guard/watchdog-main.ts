/**
 * The watchdog process (entry point). Started by `protect` before it plugs,
 * in its own session so that terminal signals aimed at `protect` do not reach
 * it. It opens its netlink sockets, says `ready`, and waits:
 *
 * - `{"op":"arm", ...}` on stdin: the release messages (pre-encoded by the
 *   parent), the owner pid, the deadline and the state directory;
 * - `{"op":"done"}`: the parent released; exit quietly;
 * - end of stdin without `done` (the parent died, even by SIGKILL) or the
 *   deadline passing: drop the owner's lease (leases.ts) and, when no other
 *   live lease holds the plug, send the release messages at once and mark
 *   plug.json released; then exit. If the lease bookkeeping fails, it
 *   releases anyway.
 *
 * @module
 */
import { createInterface } from 'node:readline';
import { NetlinkConnection } from '../netlink/connection.js';
import { NETLINK_NETFILTER, NETLINK_ROUTE } from '../netlink/message.js';
import { StateStore } from './state.js';
import type { WatchdogArm, WatchdogStep } from './watchdog.js';
import { dropLease } from './leases.js';

const conns = new Map<number, NetlinkConnection>();
let armed: WatchdogArm | undefined;
let finished = false;
let timer: NodeJS.Timeout | undefined;

for (const sig of ['SIGINT', 'SIGHUP', 'SIGPIPE'] as const) process.on(sig, () => {});
process.on('SIGTERM', () => {
  void fire('SIGTERM received');
});

function conn(protocol: number): NetlinkConnection {
  let c = conns.get(protocol);
  if (!c) {
    c = NetlinkConnection.open(protocol, { timeoutMs: 2000 });
    conns.set(protocol, c);
  }
  return c;
}

async function send(step: WatchdogStep): Promise<void> {
  let last: unknown;
  for (let attempt = 1; attempt <= 3; attempt++) {
    try {
      const res = await conn(step.protocol).exchange(step.messages.map((m) => ({ type: m.type, flags: m.flags, payload: Buffer.from(m.payload, 'hex') })));
      const err = res.find((r) => r.error && !(step.ignoreErrno ?? []).includes(r.error.errno))?.error;
      if (err) throw err;
      return;
    } catch (e) {
      last = e;
    }
  }
  throw last;
}

async function fire(reason: string): Promise<void> {
  if (finished) return;
  finished = true;
  if (timer) clearTimeout(timer);
  if (!armed) {
    exit(0);
    return;
  }
  const a = armed;
  // The plug release goes out on NETLINK_ROUTE; the rest (the marking element) is the disarm.
  const releaseSteps = a.release.filter((st) => st.protocol === NETLINK_ROUTE);
  const disarmSteps = a.release.filter((st) => st.protocol !== NETLINK_ROUTE);
  let failed = false;
  const runSteps = async (steps: WatchdogStep[]) => {
    for (const step of steps) {
      try {
        await send(step);
      } catch (e) {
        failed = true;
        process.stderr.write(`synplug watchdog: ${step.what} failed: ${(e as Error).message}\n`);
      }
    }
  };
  const store = new StateStore(a.stateDir);
  let outcome = 'released the plug';
  try {
    // The owner's lease goes; the plug is released only when no other live lease holds it.
    const r = await dropLease(
      store,
      {
        arm: async () => {},
        disarm: () => runSteps(disarmSteps),
        release: () => runSteps(releaseSteps),
      },
      a.leaseId,
      a.dev ?? 'lo',
      async () => {
        await runSteps(releaseSteps);
        if (failed) throw new Error('release failed');
        return 1;
      },
    );
    if (!r.released) outcome = `left the plug to ${r.remaining.length} other live holder(s)`;
  } catch (e) {
    // The bookkeeping failed (a damaged file, the lock): release anyway, holding nothing is the safe side.
    process.stderr.write(`synplug watchdog: ${(e as Error).message}; releasing anyway\n`);
    failed = false;
    await runSteps(releaseSteps);
    await runSteps(disarmSteps);
    try {
      const r = store.readPlug();
      if (r && r.state === 'buffering' && r.pid === a.ownerPid) store.writePlug({ ...r, state: 'released', releasedAt: Date.now() });
    } catch (e2) {
      process.stderr.write(`synplug watchdog: ${(e2 as Error).message}\n`);
    }
  }
  process.stderr.write(`synplug watchdog: ${reason}; ${failed ? 'release FAILED (run synplug release)' : outcome}\n`);
  exit(failed ? 1 : 0);
}

function exit(code: number): void {
  for (const c of conns.values()) c.close();
  process.exit(code);
}

try {
  conn(NETLINK_ROUTE);
  conn(NETLINK_NETFILTER);
} catch (e) {
  process.stderr.write(`synplug watchdog: ${(e as Error).message}\n`);
  process.exit(1);
}
process.stdout.write('ready\n');

const rl = createInterface({ input: process.stdin });
rl.on('line', (line) => {
  let msg: { op: string } & Partial<WatchdogArm>;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  if (msg.op === 'arm') {
    armed = msg as WatchdogArm;
    if (timer) clearTimeout(timer);
    timer = setTimeout(
      () => {
        // Timers run before the event loop reads stdin: a `done` the parent
        // already wrote is read first (poll phase), then this (check phase).
        setImmediate(() => {
          void fire('max-hold deadline passed');
        });
      },
      Math.max(0, armed.deadline - Date.now()),
    );
  } else if (msg.op === 'done') {
    finished = true;
    if (timer) clearTimeout(timer);
    exit(0);
  }
});
rl.on('close', () => {
  void fire('synplug protect ended without releasing (killed?)');
});
