/**
 * Live, this machine's kernel (queue holds), in a network namespace of this
 * file's own: the local queue hold and an inbound queue hold on DEV, then one
 * of them broken (issue 22: an operator's first hour).
 *
 * - The inbound hold's table deleted (`nft delete table`), DEV still there:
 *   SYNs arrive on DEV that nothing would hold, so protect refuses (exit 8,
 *   the command not run), naming that hold alone, what it lacks and its fix
 *   (its setup, or its teardown); the local hold is said to be set up,
 *   never "partly set up".
 * - DEV deleted (`ip link del`): nothing arrives on it, so that hold holds
 *   nothing; protect holds the local hold and runs the command (exit 0),
 *   saying on stderr which hold it left out and why. It used to refuse
 *   every protect, calling the local hold partly set up.
 *
 * Oracles: `nft list table` (/usr/sbin/nft), the command's own file.
 * Devices: sp-pdg0/sp-pdg1 (a veth pair); a state directory of its own.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inboundNetns, IP } from '../helpers/inbound-netns.js';

const DEV = 'sp-pdg0';
const PORT = '8083';
const N = inboundNetns('sp-pdg', DEV, 'sp-pdg1');
const NFT = '/usr/sbin/nft';
let base = '';

test.before(() => {
  N.create();
  base = mkdtempSync(join(tmpdir(), 'synplug-pdg-'));
});
test.after.always(() => {
  N.destroy();
  if (base) rmSync(base, { recursive: true, force: true });
});

test.serial('one of two queue holds broken: protect refuses naming that hold alone; with its device gone it holds the other', async (t) => {
  const sd = join(base, 's');
  for (const args of [
    ['setup', '--via', 'queue'],
    ['setup', '--via', 'queue', '--inbound', DEV, '--port', PORT],
  ]) {
    const up = await N.synplug(sd, ...args);
    t.is(up.code, 0, up.stderr);
  }
  t.is((await N.synplug(sd, 'check')).code, 0);

  // the inbound hold's table deleted, its device still there
  execFileSync(IP, ['netns', 'exec', N.ns, NFT, 'delete', 'table', 'inet', `synplug_queue_${DEV}`]);
  const ran = join(base, 'ran');
  const r = await N.synplug(sd, 'protect', '--', 'touch', ran);
  t.is(r.code, 8, r.stderr);
  t.false(existsSync(ran), 'the command was not run');
  t.true(
    r.stderr.includes(
      `synplug's inbound queue hold on ${DEV} (queue:${DEV}) is only partly set up: nftables table inet synplug_queue_${DEV} (missing); the local queue hold is set up. Run 'synplug setup --via queue --inbound ${DEV} --port ${PORT}`,
    ),
    r.stderr,
  );
  t.regex(r.stderr, new RegExp(`or pass --setup \\(or remove it: 'synplug teardown --inbound ${DEV}'\\)\\. The command was NOT run`));
  t.notRegex(r.stderr, /local queue hold \(queue\) is|partly set up on/);

  // set up again, then the device deleted: protect holds the local hold alone
  t.is((await N.synplug(sd, 'setup', '--via', 'queue', '--inbound', DEV, '--port', PORT)).code, 0);
  t.is((await N.synplug(sd, 'check')).code, 0);
  N.sh(IP, 'link', 'del', DEV);
  const p = await N.synplug(sd, 'protect', '--json', '--max-hold', '30s', '--', 'touch', ran);
  t.is(p.code, 0, p.stderr);
  t.true(existsSync(ran), 'the command ran');
  t.true(
    p.stderr.includes(
      `synplug: leaving out the inbound queue hold on ${DEV} (queue:${DEV}): its device ${DEV} is missing: gone since setup (deleted or renamed): nothing arriving on it can be held; create it again, or remove the rest of the hold with 'synplug teardown --inbound ${DEV}`,
    ),
    p.stderr,
  );
  t.regex(p.stderr, /\. Holding the local queue hold only\n/);
  t.deepEqual((JSON.parse(p.stdout) as { holds: Array<{ id: string }> }).holds, [{ id: 'queue', via: 'queue' }]);

  const down = await N.synplug(sd, 'teardown');
  t.is(down.code, 0, down.stderr);
});
