/**
 * One of two holds broken (issue 22: an operator's first hour): the inbound
 * hold's plug, then its IFB, deleted after setup, the local hold intact.
 * protect's and plug's refusal (exit 8) names that hold alone, what it
 * lacks, and its fix (setup for it, or its teardown); the local hold is
 * said to be set up, never "partly set up". It used to say "only partly
 * set up on lo, inbound:DEV".
 * The kernel is the double (test/helpers/fake-kernel.ts).
 */
import test from 'ava';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as guard from '../../src/guard/index.js';
import { FakeKernel } from '../helpers/fake-kernel.js';

test.serial("one inbound hold's IFB gone: protect and plug name that hold alone and its fix; the local hold is set up", async (t) => {
  const kernel = new FakeKernel();
  const undo = kernel.install();
  const base = mkdtempSync(join(tmpdir(), 'synplug-onebroken-'));
  const stateDir = join(base, 'state');
  try {
    await guard.setup({ stateDir });
    await guard.setup({ stateDir, inbound: { dev: 'sp-flt0', ports: [8081] } });
    t.is((await guard.check({ stateDir })).state, 'ok');
    // the IFB's plug deleted by hand (tc qdisc del dev spifb2 root)
    const ifb = kernel.state.links.find((l) => l.name === 'spifb2');
    t.truthy(ifb, kernel.state.links.map((l) => l.name).join(', '));
    kernel.state.qdiscs = kernel.state.qdiscs.filter((q) => q.ifindex !== ifb?.index);

    const ran = join(base, 'ran');
    const p = await t.throwsAsync(guard.protect({ stateDir, command: ['touch', ran], maxHoldMs: 1000 }));
    t.is((p as guard.NotSetUpError | undefined)?.category, 'not-set-up');
    t.false(existsSync(ran), 'the command was not run');
    t.is(
      p?.message,
      "synplug's inbound hold on sp-flt0 (inbound:sp-flt0) is only partly set up: qdisc plug 1: root on spifb2 limit 1048576 (missing); the local hold on lo is set up. " +
        "Run 'synplug setup --inbound sp-flt0 --port 8081', or pass --setup (or remove it: 'synplug teardown --inbound sp-flt0'). The command was NOT run",
    );
    const g = await t.throwsAsync(guard.plug({ stateDir, maxHoldMs: 1000 }));
    t.is(
      g?.message,
      "synplug's inbound hold on sp-flt0 (inbound:sp-flt0) is only partly set up: qdisc plug 1: root on spifb2 limit 1048576 (missing); the local hold on lo is set up. Run 'synplug setup --inbound sp-flt0 --port 8081' (or remove it: 'synplug teardown --inbound sp-flt0')",
    );

    // the IFB itself deleted (ip link del spifb2): that hold named, with its fix; lo still said to be set up
    kernel.state.links = kernel.state.links.filter((l) => l !== ifb);
    const q = await t.throwsAsync(guard.protect({ stateDir, command: ['touch', ran], maxHoldMs: 1000 }));
    t.regex(
      q?.message ?? '',
      /^synplug's inbound hold on sp-flt0 \(inbound:sp-flt0\) is (only partly|not) set up: link ifb spifb2 \(synplug's, up\) \(missing\); .*; the local hold on lo is set up\. Run 'synplug setup --inbound sp-flt0 --port 8081', or pass --setup \(or remove it: 'synplug teardown --inbound sp-flt0'\)\. The command was NOT run$/,
    );
    t.notRegex(q?.message ?? '', /local hold on lo \(local\) is|partly set up on lo/);
    t.false(existsSync(ran), 'the command was not run');
  } finally {
    await guard.teardown({ stateDir }).catch(() => {});
    undo();
    rmSync(base, { recursive: true, force: true });
  }
});

test.serial("one inbound hold's device gone: protect holds the local hold, runs the command, and says which hold it left out and why", async (t) => {
  const kernel = new FakeKernel();
  const undo = kernel.install();
  const base = mkdtempSync(join(tmpdir(), 'synplug-devgone-'));
  const stateDir = join(base, 'state');
  try {
    await guard.setup({ stateDir });
    await guard.setup({ stateDir, inbound: { dev: 'sp-flt0', ports: [8081] } });
    // the inbound device deleted (ip link del sp-flt0): its clsact and filters went with it; the IFB stays
    const dev = kernel.state.links.find((l) => l.name === 'sp-flt0');
    kernel.state.links = kernel.state.links.filter((l) => l !== dev);
    kernel.state.qdiscs = kernel.state.qdiscs.filter((q) => q.ifindex !== dev?.index);
    kernel.state.filters = kernel.state.filters.filter((f) => f.ifindex !== dev?.index);
    // check: that hold partial, its device named gone, no setup offered (it cannot complete it now)
    const c = await guard.check({ stateDir });
    t.deepEqual(
      c.holds.map((h) => [h.id, h.state, h.deviceGone]),
      [
        ['local', 'ok', undefined],
        ['inbound:sp-flt0', 'partial', true],
      ],
    );

    const ran = join(base, 'ran');
    const notices: string[] = [];
    const r = await guard.protect({ stateDir, command: ['touch', ran], maxHoldMs: 1000, onNotice: (l) => notices.push(l) });
    t.is(r.exitCode, 0);
    t.true(existsSync(ran), 'the command ran');
    t.deepEqual(r.holds, [{ id: 'local', via: 'plug' }]);
    t.true(
      notices.includes(
        "leaving out the inbound hold on sp-flt0 (inbound:sp-flt0): its qdisc clsact on sp-flt0 (shared; an ingress qdisc does too) is missing: device sp-flt0 is gone since setup (deleted or renamed): nothing arriving on it can be held; once it exists again, run 'synplug setup --inbound sp-flt0 --port 8081' (its filters went with it), or remove the rest of the hold with 'synplug teardown --inbound sp-flt0'. Holding the local hold on lo only",
      ),
      notices.join('\n'),
    );
    t.is((await guard.status({ stateDir })).leases?.length ?? 0, 0, 'no lease left');
  } finally {
    await guard.teardown({ stateDir }).catch(() => {});
    undo();
    rmSync(base, { recursive: true, force: true });
  }
});
