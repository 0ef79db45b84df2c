/**
 * setup --dry-run's classification of setup's steps and what it says they
 * affect, for the steps of the holds this kernel cannot build (the local
 * plug hold's prio tree, the inbound plug hold's IFB and clsact): their
 * texts as src/guard/modes/ words them. The queue hold's plans are checked
 * against real setups in test/live/setup-dry-run.test.ts.
 */
import test from 'ava';
import { planAction, planEffects, type PlanAction } from '../../src/guard/setup-plan.js';

test('each step is classified by its first words: add, replace, remove, release, else change', (t) => {
  const cases: Array<[string, PlanAction]> = [
    ['add qdisc prio 1: root bands 4', 'add'],
    ['nftables: add table inet synplug_queue; add chain inet synplug_queue hold; add rule to inet synplug_queue hold', 'add'],
    ['replace root qdisc pfifo 5: with prio 1: (--force)', 'replace'],
    ['replace the fw filter (handle 0x2 classid 1:3)', 'replace'],
    ['remove filters eth0 ingress protocol ipv6 pref 49152 (no ipv6 address now)', 'remove'],
    ['release plug 1: on spifb3 (an IFB synplug made, found without its record)', 'release'],
    ['change qdisc prio 1: to bands 4 and the default priomap (was bands 3)', 'change'],
    ['set plug 40: limit to 10000 bytes', 'change'],
    ['update nftables table synplug (add the marking rule)', 'change'],
    ['delete root qdisc tbf 5: on lo (--force)', 'remove'],
  ];
  for (const [what, action] of cases) t.is(planAction(what), action, what);
});

test('what the steps affect: a root qdisc, clsact, an IFB, an nftables table, an address; other steps nothing', (t) => {
  t.deepEqual(
    planEffects(
      [
        'add qdisc prio 1: root bands 4',
        'add qdisc pfifo 10: parent 1:1 limit 1000',
        'add qdisc plug 40: parent 1:4 limit 10000 and release it',
        'add filter parent 1: protocol ip pref 1 fw handle 2 classid 1:4',
        'add nftables table synplug with the marking rule',
        'add address 169.254.255.254/32 dev lo',
        'nftables: add table inet synplug_queue',
        // the local plug hold's setup now: the table with its set (its chain comes with each hold), and --force's replacement
        'add nftables table synplug with set synplug_active (the marking chain comes with each hold)',
        'replace root qdisc tbf 5: on lo with prio 1: (--force)',
      ],
      'lo',
    ),
    [
      "lo's root qdisc becomes prio 1:, so every packet lo sends passes through it (only what synplug holds waits); lo drops what it sends while the kernel grafts a root (a few ms), once, here",
      'a new nftables table synplug: its rule sees every packet of its hook (only what synplug holds is marked or queued)',
      'lo gets the address 169.254.255.254/32: connections to it are the ones synplug holds',
      // the queue hold's table alone: its chain and rule are armed around each hold
      'a new nftables table inet synplug_queue: by itself it sees no packet (its chain and rule come with each hold)',
      'a new nftables table synplug: by itself it sees no packet (its chain and rule come with each hold)',
      "lo's root qdisc becomes prio 1: (tbf 5: is deleted, with everything under it and its filters), so every packet lo sends passes through it (only what synplug holds waits); lo drops what it sends while the kernel grafts a root (a few ms), once, here",
    ],
  );
  t.deepEqual(
    planEffects(
      [
        "add link spifb3 type ifb (IPv6 off, alias 'synplug-inbound:eth0')",
        'add qdisc plug 1: root on spifb3 limit 10000 and release it',
        'add qdisc clsact on eth0',
        'replace root qdisc pfifo 5: with prio 1: (--force)',
      ],
      'eth0',
    ),
    [
      'a new device spifb3 (an IFB, IPv6 off: net.ipv6.conf.spifb3.disable_ipv6 = 1) where held SYNs wait',
      "eth0 gets a clsact qdisc: during a hold, every packet arriving on eth0 passes synplug's SYN filters",
      "eth0's root qdisc becomes prio 1: (pfifo 5: is deleted, with everything under it and its filters), so every packet eth0 sends passes through it (only what synplug holds waits); eth0 drops what it sends while the kernel grafts a root (a few ms), once, here",
    ],
  );
});
