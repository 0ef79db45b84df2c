/**
 * Live, this machine's kernel (the queue hold), in a network namespace of
 * this file's own: an inbound queue hold whose device was deleted after
 * setup (`ip link del`) holds nothing. `check` says so (exit 12, the device
 * named MISSING); `plug` and `protect` refuse (exit 8, the device named,
 * the command not run), and nothing is held: no queue is bound in the
 * namespace (/proc/net/netfilter/nfnetlink_queue there) and the hold's chain
 * was not added (nft list table). Teardown then removes the rest. Before,
 * a plug of that hold records its device in plug.json (not lo).
 * Devices: sp-dgn0/sp-dgn1 (a veth pair); a state directory of its own.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inboundNetns, IP } from '../helpers/inbound-netns.js';

const DEV = 'sp-dgn0';
const N = inboundNetns('sp-dgn', DEV, 'sp-dgn1');
const NFT = '/usr/sbin/nft';
let base = '';

/** `nft list table inet NAME` in the namespace ('' when there is none). */
function table(name: string): string {
  try {
    return execFileSync(IP, ['netns', 'exec', N.ns, NFT, 'list', 'table', 'inet', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return '';
  }
}

/** The queues bound in the namespace, as the kernel lists them. */
const boundQueues = (): string => execFileSync(IP, ['netns', 'exec', N.ns, 'cat', '/proc/net/netfilter/nfnetlink_queue'], { encoding: 'utf8' }).trim();

test.before(() => {
  N.create();
  base = mkdtempSync(join(tmpdir(), 'synplug-devgone-'));
});
test.after.always(() => {
  N.destroy();
  if (base) rmSync(base, { recursive: true, force: true });
});

test.serial('an inbound queue hold whose device was deleted: check exits 12 naming it; plug and protect refuse and hold nothing', async (t) => {
  const sd = join(base, 's');
  const up = await N.synplug(sd, 'setup', '--via', 'queue', '--inbound', DEV, '--port', '8081');
  t.is(up.code, 0, up.stderr);
  t.is((await N.synplug(sd, 'check')).code, 0);
  // a plug while the device is there: plug.json names the inbound hold's device, not lo
  t.is((await N.synplug(sd, 'plug', '--max-hold', '30s')).code, 0);
  t.is((JSON.parse(readFileSync(join(sd, 'plug.json'), 'utf8')) as { dev: string }).dev, DEV);
  t.is((await N.synplug(sd, 'release')).code, 0);
  N.sh(IP, 'link', 'del', DEV);

  const c = await N.synplug(sd, 'check');
  t.is(c.code, 12, c.stdout + c.stderr);
  t.regex(c.stdout, new RegExp(`MISSING\\s+device ${DEV} \\(gone since setup \\(deleted or renamed\\): nothing arriving on it can be held`));
  // no setup is offered: it cannot complete a hold whose device is gone (it named one that failed: issue 22)
  t.notRegex(c.stdout, /synplug setup|protect --setup|to complete it/, c.stdout);
  const j = await N.synplug(sd, 'check', '--json');
  t.is(j.code, 12);
  const cj = JSON.parse(j.stdout) as { state: string; pieces: Array<{ piece: string; status: string }>; holds: Array<{ deviceGone?: true }> };
  t.is(cj.state, 'partial');
  t.deepEqual(
    cj.holds.map((h) => h.deviceGone),
    [true],
  );
  t.deepEqual(
    cj.pieces.filter((p) => p.status !== 'ok').map((p) => [p.piece, p.status]),
    [[`device ${DEV}`, 'missing']],
  );

  const queuesBefore = boundQueues();
  const tableBefore = table(`synplug_queue_${DEV}`);
  t.notRegex(tableBefore, /chain hold/, 'outside a hold the table has no chain');
  const p = await N.synplug(sd, 'plug', '--max-hold', '30s');
  t.is(p.code, 8, p.stdout + p.stderr);
  t.notRegex(p.stdout, /plugged/);
  t.true(p.stderr.includes(`device ${DEV} (missing: gone since setup (deleted or renamed)`), p.stderr);
  t.notRegex(p.stderr, /Run 'synplug setup/, p.stderr);
  const ran = join(base, 'ran');
  const pr = await N.synplug(sd, 'protect', '--', 'touch', ran);
  t.is(pr.code, 8, pr.stderr);
  t.regex(pr.stderr, /The command was NOT run/);
  t.notRegex(pr.stderr, /Run 'synplug setup|--setup/, pr.stderr);
  t.false(existsSync(ran), 'the command was not run');
  t.is(boundQueues(), queuesBefore, 'no queue was bound');
  t.is(table(`synplug_queue_${DEV}`), tableBefore, 'the chain was not armed');

  const down = await N.synplug(sd, 'teardown', '--inbound', DEV);
  t.is(down.code, 0, down.stderr);
  t.is(table(`synplug_queue_${DEV}`), '');
  t.is((await N.synplug(sd, 'check')).code, 1);
});
