/**
 * Child process for test/live/guard-plug-watchdog.test.ts (not a test
 * file): does what a manual `synplug plug` does around its watchdog, then
 * exits at once, as plug does. This kernel has no sch_plug, so the plug is
 * stood in for by a tbf root qdisc on DEV: its "release" is its deletion,
 * which the reference tool `tc` sees.
 *
 * usage: node --import=tsx test/live/watchdog-manual-child.ts NETNS DEV IFINDEX STATE_DIR MAX_HOLD_MS
 * prints one JSON line: { watchdogPid, deadline, leaseId }
 */
import { setDefaultNetns } from '../../src/netlink/netns.js';
import { NETLINK_ROUTE, NLM_F_ACK } from '../../src/netlink/message.js';
import { qdiscRequest } from '../../src/tc/request.js';
import { hexMessage } from '../../src/guard/watchdog.js';
import { startWatchdog, WATCHDOG_GRACE_MS } from '../../src/guard/watchdog.js';
import { StateStore, processStartTime } from '../../src/guard/state.js';

const [ns, dev, ifindex, stateDir, maxHold] = process.argv.slice(2);
setDefaultNetns(ns);
const release = qdiscRequest('delete', Number(ifindex), { parent: 'root' });
const watchdog = await startWatchdog(undefined, 'ignore'); // as plug starts it
const since = Date.now();
const deadline = since + Number(maxHold);
const leaseId = '0123456789abcdef';
const pidStart = processStartTime(process.pid);
const store = new StateStore(stateDir);
// What plug records (takeLease): its manual lease, and plug.json buffering.
store.writeLeases({
  version: 1,
  leases: [{ id: leaseId, owner: 'manual', pid: process.pid, pidStart, watchdogPid: watchdog.pid, holds: ['local'], since, deadline }],
});
store.writePlug({ version: 1, state: 'buffering', owner: 'manual', pid: process.pid, pidStart, watchdogPid: watchdog.pid, dev, since, deadline });
watchdog.arm({
  ownerPid: process.pid,
  stateDir,
  deadline: deadline + WATCHDOG_GRACE_MS,
  release: [{ what: 'plug release', phase: 'release', protocol: NETLINK_ROUTE, messages: [hexMessage({ ...release, flags: NLM_F_ACK })] }],
  leaseId,
  dev,
  untilDeadline: true,
});
watchdog.handOver();
process.stdout.write(`${JSON.stringify({ watchdogPid: watchdog.pid, deadline: deadline + WATCHDOG_GRACE_MS, leaseId })}\n`);
process.exit(0);
