/**
 * Kernel tests (in the VM, Debian's kernel): `show ruleset`'s text and JSON
 * for what the development host's kernel cannot load, against
 * `nft list table` / `nft -j list table` (nft 1.0.6): the bridge family's
 * `reject` (module nft_reject_bridge) and conntrack matches in a bridge table
 * (nf_conntrack_bridge). Tables synplug_kfmt*; nothing jumps to their chains.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import * as N from '../../src/iptables/index.js';
import { lockLo } from '../helpers/guard-vm.js';

const NFT = '/usr/sbin/nft';
const nft = (...args: string[]): string => execFileSync(NFT, args, { encoding: 'utf8' });
const quietly = (...args: string[]): void => {
  try {
    execFileSync(NFT, args, { stdio: 'ignore' });
  } catch {
    /* gone */
  }
};

const conn = N.openNftables({ timeoutMs: 20_000 });
// The guard tests check that some commands change nothing in the VM's ruleset:
// hold their lock while these tables exist (as nft-kernel.test.ts does).
let unlock: (() => void) | undefined;
test.before(async () => {
  unlock = await lockLo();
});
test.after.always(() => {
  try {
    quietly('delete', 'table', 'bridge', 'synplug_kfmtbr');
    conn.close();
  } finally {
    unlock?.();
  }
});

const BRIDGE = `table bridge synplug_kfmtbr {
  chain c {
    reject
    reject with icmpx admin-prohibited
    reject with icmpx host-unreachable
    reject with tcp reset
    ether type ip reject with icmp host-prohibited
    ether type ip6 reject with icmpv6 admin-prohibited
    ct state new accept
    ct state established,related accept
    ct mark set 0x5
    ether saddr 00:11:22:33:44:55 limit rate 10/second log prefix "br " counter drop
  }
}
`;

test.serial('bridge reject and conntrack: text and JSON as nft prints them', async (t) => {
  t.log(`kernel ${os.release()}`);
  execFileSync(NFT, ['-f', '-'], { input: BRIDGE });
  const rs = await N.listRuleset(conn, { family: 'bridge' });
  const mine: N.NftRuleset = {
    tables: rs.tables.filter((x) => x.name === 'synplug_kfmtbr'),
    chains: rs.chains.filter((x) => x.table === 'synplug_kfmtbr'),
    sets: rs.sets.filter((x) => x.table === 'synplug_kfmtbr'),
    rules: rs.rules.filter((x) => x.table === 'synplug_kfmtbr'),
    objects: (rs.objects ?? []).filter((x) => x.table === 'synplug_kfmtbr'),
  };
  const text = N.formatRulesetText(mine);
  const theirs = nft('list', 'table', 'bridge', 'synplug_kfmtbr');
  t.deepEqual(text.split('\n'), theirs.split('\n'));
  t.false(text.includes(`[ ${N.RAW_MARKER}`), text);
  const ours = N.formatRulesetJson(mine).nftables.slice(1);
  const theirsJson = (JSON.parse(nft('-j', 'list', 'table', 'bridge', 'synplug_kfmtbr')).nftables as Array<Record<string, unknown>>).filter((o) => !o.metainfo);
  t.deepEqual(ours, theirsJson);
  t.is(JSON.stringify(ours), JSON.stringify(theirsJson), 'same key order too');
});
