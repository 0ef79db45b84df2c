/**
 * Kernel (VM, sch_plug), in a network namespace of this file's own: the
 * local plug hold and the inbound plug hold of DEV, then the inbound one
 * broken (issue 22: an operator's first hour).
 *
 * - Its IFB's plug deleted (`tc qdisc del dev IFB root`), DEV still there:
 *   protect refuses (exit 8, the command not run), naming that hold alone,
 *   what it lacks and its fix (its setup, or its teardown); the local hold
 *   is said to be set up, never "partly set up".
 * - DEV deleted (`ip link del`; its clsact and filters go with it, the IFB
 *   stays): `check` marks that hold `deviceGone` and offers no setup; protect
 *   leaves it out, holds the local hold and runs the command (exit 0),
 *   saying on stderr which hold it left out and why.
 *
 * Oracles: tc and ip (/usr/sbin), the command's own file.
 * Devices: sp-kpb0/sp-kpb1 (a veth pair); a state directory of its own.
 */
import test from 'ava';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inboundNetns, IP, TC } from '../helpers/inbound-netns.js';
import { useGuardVm } from '../helpers/guard-vm.js';

const DEV = 'sp-kpb0';
const PORT = '8084';
const N = inboundNetns('sp-kpb', DEV, 'sp-kpb1');
let base = '';

// lo's lock for the whole file (its local hold, and its protect's command running in a namespace of this file's: a
// file that checks no process is left in a namespace it did not know, demo-inbound, must not run meanwhile)
useGuardVm(test);
test.before(() => {
  N.create();
  base = mkdtempSync(join(tmpdir(), 'synplug-kpb-'));
});
test.after.always(() => {
  N.destroy();
  if (base) rmSync(base, { recursive: true, force: true });
});

test.serial('the inbound plug hold broken: protect names it alone; with its device gone it holds the local hold', async (t) => {
  const sd = join(base, 's');
  for (const args of [
    ['setup', '--via', 'plug'],
    ['setup', '--inbound', DEV, '--port', PORT],
  ]) {
    const up = await N.synplug(sd, ...args);
    t.is(up.code, 0, up.stderr);
  }
  t.is((await N.synplug(sd, 'check')).code, 0);
  const ifb = `spifb${N.ifindex}`;

  // the IFB's plug deleted, DEV still there: SYNs arriving on it would not be held
  N.sh(TC, 'qdisc', 'del', 'dev', ifb, 'root');
  const ran = join(base, 'ran');
  const r = await N.synplug(sd, 'protect', '--', 'touch', ran);
  t.is(r.code, 8, r.stderr);
  t.false(existsSync(ran), 'the command was not run');
  t.true(
    r.stderr.includes(
      `synplug's inbound hold on ${DEV} (inbound:${DEV}) is only partly set up: qdisc plug 1: root on ${ifb} limit 1048576 (missing); the local hold on lo is set up. Run 'synplug setup --inbound ${DEV} --port ${PORT}', or pass --setup (or remove it: 'synplug teardown --inbound ${DEV}'). The command was NOT run`,
    ),
    r.stderr,
  );

  t.is((await N.synplug(sd, 'setup', '--inbound', DEV, '--port', PORT)).code, 0);
  t.is((await N.synplug(sd, 'check')).code, 0);
  // DEV deleted: its clsact and filters go with it; the IFB stays
  N.sh(IP, 'link', 'del', DEV);
  const c = await N.synplug(sd, 'check', '--json');
  t.is(c.code, 12, c.stderr);
  t.deepEqual(
    (JSON.parse(c.stdout) as { holds: Array<{ id: string; deviceGone?: true }> }).holds.map((h) => [h.id, h.deviceGone]),
    [
      ['local', undefined],
      [`inbound:${DEV}`, true],
    ],
  );
  const ct = await N.synplug(sd, 'check');
  // no setup offered to complete it (it cannot, DEV gone): its clsact piece says what to do once DEV is back
  t.notRegex(ct.stdout, /to complete it|protect --setup/, ct.stdout);
  t.regex(
    ct.stdout,
    new RegExp(
      `MISSING +qdisc clsact on ${DEV} .*\\(device ${DEV} is gone since setup \\(deleted or renamed\\): nothing arriving on it can be held; once it exists again, run 'synplug setup --inbound ${DEV} --port ${PORT} `,
    ),
  );

  const p = await N.synplug(sd, 'protect', '--json', '--max-hold', '30s', '--', 'touch', ran);
  t.is(p.code, 0, p.stderr);
  t.true(existsSync(ran), 'the command ran');
  t.true(
    p.stderr.includes(
      `synplug: leaving out the inbound hold on ${DEV} (inbound:${DEV}): its qdisc clsact on ${DEV} (shared; an ingress qdisc does too) is missing: device ${DEV} is gone since setup (deleted or renamed): nothing arriving on it can be held; once it exists again, run 'synplug setup --inbound ${DEV} --port ${PORT}' (its filters went with it), or remove the rest of the hold with 'synplug teardown --inbound ${DEV}'. Holding the local hold on lo only\n`,
    ),
    p.stderr,
  );
  t.deepEqual((JSON.parse(p.stdout) as { holds: Array<{ id: string }> }).holds, [{ id: 'local', via: 'plug' }]);

  const down = await N.synplug(sd, 'teardown');
  t.is(down.code, 0, down.stderr);
  t.false(N.exists(ifb), 'teardown removed the IFB');
});
