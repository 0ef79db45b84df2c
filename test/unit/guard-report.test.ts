/**
 * The reload report's verdict (src/guard/report.ts `lossCauses`, the CLI's
 * `formatVerdict`) and its lossless rule: true only when every loss count is
 * 0, false when one is above 0, null when one could not be counted.
 */
import test from 'ava';
import { listenerCounted, lossCauses, unwatchedReport, type ReloadReport } from '../../src/guard/report.js';
import type { TcpListener } from '../../src/netlink/sockdiag.js';
import { formatVerdict } from '../../src/cli/format-guard.js';

const base: ReloadReport = { heldSyns: 5, holdMs: 800, dropped: 0, refused: 0, reset: 0, listenerDrops: 0, lossless: true };
const how = { maxHoldReached: false, newListener: undefined };

test('lossless: one verdict line with the three counts', (t) => {
  t.is(formatVerdict({ report: base, ...how }), 'lossless: 0 refused, 0 reset, 0 dropped');
  t.deepEqual(lossCauses(base, { maxHoldReached: false, waitedForListener: false }), []);
});

test('refused at the max-hold: lost, and the cause names the max-hold; without --wait-listen it suggests it', (t) => {
  const r = { ...base, refused: 7, lossless: false };
  const v = formatVerdict({ report: r, maxHoldReached: true, newListener: undefined });
  t.true(v.startsWith('LOST: at least 7 refused SYN(s), retransmissions included, 0 reset, 0 dropped; likely cause: '), v);
  t.regex(v, /max-hold/);
  t.regex(lossCauses(r, { maxHoldReached: false, waitedForListener: false })[0], /--wait-listen/);
});

test("reset: a closing listener's queue; dropped: the hold's limit; listener drops: the backlog", (t) => {
  const r = { ...base, reset: 2, dropped: 1, listenerDrops: 3, lossless: false };
  const causes = lossCauses(r, { maxHoldReached: false, waitedForListener: true });
  t.is(causes.length, 3);
  t.regex(causes[0], /closing listener/);
  t.regex(causes[1], /limit/);
  t.regex(causes[2], /backlog/);
  t.regex(formatVerdict({ report: r, ...how }), /^LOST: 0 refused, 2 reset, 1 dropped, 3 dropped by the listener \(packets, retransmissions included\); /);
});

test("listener drops after a long hold, no more than the SYNs held: the cause names a hold longer than the clients' connect timeout; a short hold, or more drops than SYNs held: the backlog alone", (t) => {
  const how = { maxHoldReached: false, waitedForListener: false };
  // one client with a 5 s connect timeout, held 8 s: its SYN and 4 retransmissions held, released after it gave up
  const abandoned = { ...base, heldSyns: 5, holdMs: 8016.4, listenerDrops: 5, lossless: false };
  const causes = lossCauses(abandoned, how);
  t.is(causes.length, 1);
  t.true(causes[0].startsWith("the hold (8.0 s) outlasted the clients' connect timeout: a client that gives up during the hold is lost"), causes[0]);
  t.regex(causes[0], /keep --max-hold below the clients' connect timeout/);
  t.is(
    formatVerdict({ report: abandoned, maxHoldReached: false, newListener: undefined }),
    `LOST: 0 refused, 0 reset, 0 dropped, 5 dropped by the listener (packets, retransmissions included); likely cause: ${causes[0]}`,
  );
  for (const r of [
    { ...abandoned, holdMs: 2000 },
    { ...abandoned, listenerDrops: 40 },
  ]) {
    const c = lossCauses(r, how);
    t.is(c.length, 1);
    t.regex(c[0], /^the release burst overflowed the listener's backlog/);
  }
});

test('not counted: the verdict says so and why, never "lossless"', (t) => {
  const r: ReloadReport = { ...base, refused: null, reset: null, listenerDrops: null, lossless: null, uncounted: ['no hold says what it holds'] };
  t.is(formatVerdict({ report: r, ...how }), 'not fully counted: ? refused, ? reset, 0 dropped (no hold says what it holds)');
});

test('a hold that failed (its holder died): lost although every count is 0, the failure named as the cause; a manual release says so too', (t) => {
  const why = 'queue 4200: its holder process ended 700 ms into the hold (killed?): the kernel dropped the SYNs it held';
  // the count of what it dropped died with the holder: null, never 0 (it said "0 dropped")
  const r: ReloadReport = { ...base, dropped: null, lossless: false, failed: [why] };
  t.is(formatVerdict({ report: r, ...how }), `LOST: 0 refused, 0 reset, ? dropped; likely cause: ${why}`);
  const manual = unwatchedReport({ heldSyns: 0, holdMs: 2952, dropped: null, failed: [why] }, 'a manual hold');
  t.is(manual.lossless, false);
  t.is(manual.dropped, null);
  t.deepEqual(manual.failed, [why]);
  t.is(unwatchedReport({ heldSyns: 0, holdMs: 10, dropped: 0 }, 'a manual hold').lossless, null);
});

/** A listener as sock_diag lists it (the fields listenerCounted reads; the rest as a listener has them). */
const listener = (family: 'inet' | 'inet6', address: string, port: number, v6only = false) =>
  ({ family, address, port, v6only, inode: 1 }) as unknown as TcpListener;

test("listener drops of a local hold: the held address's own listeners, any port, never a wildcard one; of an inbound hold: its ports' listeners, wildcard ones included", (t) => {
  const local = [{ addrs: ['169.254.255.254'], ports: [] }];
  t.true(listenerCounted(listener('inet', '169.254.255.254', 80), local));
  t.true(listenerCounted(listener('inet', '169.254.255.254', 8443), local), 'any port');
  t.true(listenerCounted(listener('inet6', '::ffff:169.254.255.254', 80), local), 'the address, IPv4-mapped');
  t.false(listenerCounted(listener('inet', '0.0.0.0', 80), local), 'a wildcard listener serves every other address too');
  t.false(listenerCounted(listener('inet6', '::', 80), local));
  t.false(listenerCounted(listener('inet', '127.0.0.1', 80), local));
  const v6 = [{ addrs: ['fd00:79::1'], ports: [] }];
  t.true(listenerCounted(listener('inet6', 'fd00:79::1', 443), v6));
  t.false(listenerCounted(listener('inet6', '::', 443, true), v6));
  const inbound = [{ addrs: [], ports: [443] }];
  t.true(listenerCounted(listener('inet', '0.0.0.0', 443), inbound), 'a wildcard listener on a held port serves what is held');
  t.true(listenerCounted(listener('inet6', '::', 443), inbound));
  t.true(listenerCounted(listener('inet', '192.0.2.1', 443), inbound));
  t.false(listenerCounted(listener('inet', '0.0.0.0', 80), inbound), 'another port');
  const inboundTo = [{ addrs: ['192.0.2.1'], ports: [443] }];
  t.true(listenerCounted(listener('inet', '0.0.0.0', 443), inboundTo));
  t.true(listenerCounted(listener('inet', '192.0.2.1', 443), inboundTo));
  t.false(listenerCounted(listener('inet', '192.0.2.2', 443), inboundTo), 'another address');
});

test('a loss after a protect that used --wait-listen: no cause suggests --wait-listen again; without it, the causes do', (t) => {
  const reset = { ...base, reset: 2, lossless: false };
  const refused = { ...base, refused: 3, lossless: false };
  for (const maxHoldReached of [false, true]) {
    for (const r of [reset, refused]) {
      const used = lossCauses(r, { maxHoldReached, waitedForListener: true });
      t.is(used.length, 1);
      t.notRegex(used[0], /add --wait-listen|--wait-listen waits/, used[0]);
    }
  }
  t.is(
    lossCauses(reset, { maxHoldReached: true, waitedForListener: true })[0],
    "connections queued in a closing listener were reset: protect's wait for the old listener's close (--wait-listen) ended at the max-hold: raise --max-hold",
  );
  t.regex(
    lossCauses(reset, { maxHoldReached: false, waitedForListener: true })[0],
    /^connections queued in a closing listener were reset although protect waited/,
  );
  // the CLI's verdict: newListener null (--wait-listen given, no new listener seen) counts as waited
  t.notRegex(formatVerdict({ report: reset, maxHoldReached: false, newListener: null }), /--wait-listen waits/);
  // without --wait-listen the reset and refused causes still suggest it
  t.is(
    lossCauses(reset, { maxHoldReached: false, waitedForListener: false })[0],
    "connections queued in a closing listener were reset: --wait-listen waits for the old listener's close",
  );
  t.is(lossCauses(refused, { maxHoldReached: false, waitedForListener: false })[0], 'released before the listener was back: add --wait-listen PORT');
});
