/**
 * Kernel tests (in the VM, on Debian's 6.1 / 6.12 kernels): the nftables
 * layer on the kernels synplug ships against, with `nft` as the oracle.
 * Tables synplug_k*, rules for 169.254.78.1 (an address nothing sends from).
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import * as N from '../../src/iptables/index.js';
import * as M from '../../src/guard/modes/local-nft.js';
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
const ADDR = '169.254.78.1';

const conn = N.openNftables({ timeoutMs: 20_000 });
// The VM's nftables ruleset is shared with the guard tests, which check that
// some commands change nothing in it: these tests hold the same lock while
// their tables exist.
let unlock: (() => void) | undefined;
test.before(async () => {
  unlock = await lockLo();
});
test.after.always(() => {
  try {
    for (const t of ['synplug_k1', 'synplug_k1ref', 'synplug_k2']) quietly('delete', 'table', 'ip', t);
    conn.close();
  } finally {
    unlock?.();
  }
});

test.serial('the captured nft 1.0.6 rule and ours are the same rule on this kernel', async (t) => {
  t.log(`kernel ${os.release()}`);
  const r = await M.ensureMarkRule(conn, { address: ADDR, table: 'synplug_k1', conditional: true, port: 8080 });
  t.true(r.changed);
  t.false((await M.ensureMarkRule(conn, { address: ADDR, table: 'synplug_k1', conditional: true, port: 8080 })).changed);
  execFileSync(NFT, ['-f', '-'], {
    input: `table ip synplug_k1ref {\nset synplug_active { type ipv4_addr; flags timeout; }\nchain output {\ntype route hook output priority mangle; policy accept;\nip saddr @synplug_active tcp dport 8080 tcp flags & (syn|ack) == syn meta mark set 0x1\n}\n}\n`,
  });
  const [a] = await N.listRules(conn, { family: 'ip', table: 'synplug_k1' });
  const [b] = await N.listRules(conn, { family: 'ip', table: 'synplug_k1ref' });
  t.deepEqual(a.expr, b.expr);
  const ours = N.formatRulesetText({
    tables: (await N.listTables(conn, { family: 'ip' })).filter((x) => x.name === 'synplug_k1'),
    chains: await N.listChains(conn, { family: 'ip', table: 'synplug_k1' }),
    sets: await N.listSets(conn, { family: 'ip', table: 'synplug_k1' }),
    rules: await N.listRules(conn, { family: 'ip', table: 'synplug_k1' }),
  });
  t.is(ours, nft('list', 'table', 'ip', 'synplug_k1'));
});

test.serial('set elements: timeout and time left; refresh always renews the timeout; delete if present', async (t) => {
  await M.ensureMarkRule(conn, { address: ADDR, table: 'synplug_k2', conditional: true });
  const ref = { family: 'ip' as const, table: 'synplug_k2', address: ADDR };
  await M.addSetElement(conn, { ...ref, timeoutMs: 20_000 });
  const [e1] = await M.listMarkSetElements(conn, ref);
  t.is(e1.timeoutMs, 20_000);
  t.true(e1.expiresMs! <= 20_000 && e1.expiresMs! > 10_000);
  // A plain re-add: some kernels keep the old timeout, newer ones take the new one. Recorded, not assumed.
  await M.addSetElement(conn, { ...ref, timeoutMs: 300_000 });
  const [e2] = await M.listMarkSetElements(conn, ref);
  t.log(`${os.release()}: a plain re-add ${e2.timeoutMs === 300_000 ? 'renews' : 'keeps'} the timeout (${e2.timeoutMs} ms)`);
  // refresh: NEWSETELEM + DELSETELEM + NEWSETELEM in one batch renews it on every kernel
  await M.addSetElement(conn, { ...ref, timeoutMs: 600_000, refresh: true });
  const [e3] = await M.listMarkSetElements(conn, ref);
  t.is(e3.timeoutMs, 600_000);
  t.true(e3.expiresMs! > 590_000);
  t.deepEqual(await M.deleteSetElement(conn, { ...ref, ignoreMissing: true }), { applied: true, messages: 1 });
  t.deepEqual(await M.deleteSetElement(conn, { ...ref, ignoreMissing: true }), { applied: false, messages: 1, missing: true });
  await t.throwsAsync(M.deleteSetElement(conn, ref), { instanceOf: N.NftBatchError, message: /^NFT_MSG_DELSETELEM: .*\(ENOENT\)/ });
  // a short timeout expires by itself
  await M.addSetElement(conn, { ...ref, timeoutMs: 1000 });
  t.is((await M.listMarkSetElements(conn, ref)).length, 1);
  await new Promise((r) => setTimeout(r, 2500));
  t.deepEqual(await M.listMarkSetElements(conn, ref), []);
});

test.serial('remove deletes only our tables', async (t) => {
  t.deepEqual((await M.removeMarkTable(conn, { table: 'synplug_k2' })).removed, ['ip synplug_k2']);
  t.notThrows(() => nft('list', 'table', 'ip', 'synplug_k1ref'));
});
