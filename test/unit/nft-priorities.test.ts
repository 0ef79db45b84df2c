/**
 * Chain priorities and hooks as nft 1.0.6 prints them, against what it
 * printed (fixtures/nft/priorities-nft-1.0.6.tsv: 828 chains, every hook of
 * every family, 36 priorities each): names per family and hook (ip, ip6 and
 * inet: dstnat only at prerouting, srcnat only at postrouting; bridge's own
 * dstnat, filter, out, srcnat; arp and netdev: filter only), offsets of up to
 * 10 either side.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as N from '../../src/iptables/index.js';

const rows = readFileSync(fileURLToPath(new URL('../../fixtures/nft/priorities-nft-1.0.6.tsv', import.meta.url)), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => l.split('|'));

test('every priority of the capture prints as nft printed it', (t) => {
  t.is(rows.length, 828);
  const wrong = rows.filter(([family, hook, prio, text]) => N.priorityText(family, hook, Number(prio)) !== text);
  t.deepEqual(wrong, []);
});

test("a named priority encodes to its family's value (bridge filter is -200), numbers as they are", (t) => {
  for (const [family, hook, prio, text] of rows.filter((r) => !/[+-] \d+$/.test(r[3]) && !/^-?\d+$/.test(r[3]))) {
    t.is(N.priorityNumber(text, family), Number(prio), `${family} ${hook} ${text}`);
  }
  t.is(N.priorityNumber(-5, 'netdev'), -5);
});

test('hooks by family: arp has input, output and forward at 0, 1, 2; netdev ingress and egress', (t) => {
  const arp = rows.filter((r) => r[0] === 'arp').map((r) => r[1]);
  t.deepEqual([...new Set(arp)], ['input', 'output']);
  t.is(N.hookName('arp', 0), 'input');
  t.is(N.hookName('arp', 1), 'output');
  t.is(N.hookName('arp', 2), 'forward');
  t.is(N.hookNumber('arp', 'output'), 1);
  t.is(N.hookName('netdev', 0), 'ingress');
  t.is(N.hookName('inet', 4), 'postrouting');
  t.throws(() => N.hookNumber('arp', 'prerouting'), { instanceOf: Error });
});
