/**
 * `demo --here` with a hold of its state directory held already (a live
 * lease: a running protect here; a manual plug in
 * test/live/demo-here-held.test.ts): refused before anything is changed,
 * naming who holds it and how to end it. Before, the demo ran, every
 * request of both phases waited for that hold, and it said "synplug did not
 * protect these restarts on this machine".
 */
import test from 'ava';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { refuseHeldAlready } from '../../src/demo/preflight.js';
import { StateStore } from '../../src/guard/state.js';
import { SynplugError } from '../../src/netlink/errors.js';

test('refuseHeldAlready: a live protect lease is named (pid, command, holds), with what to do; none: nothing thrown', (t) => {
  const base = mkdtempSync(join(tmpdir(), 'synplug-demoheld-'));
  try {
    const dir = join(base, 'state');
    mkdirSync(dir, { mode: 0o700 });
    t.notThrows(() => refuseHeldAlready(dir), 'no leases.json');
    const store = new StateStore(dir);
    const now = Date.now();
    const deadline = now + 600_000;
    store.writeLeases({
      version: 1,
      leases: [{ id: 'feedfacefeedface', owner: 'protect', pid: process.pid, command: ['haproxy', '-sf', '4242'], holds: ['queue'], since: now, deadline }],
    });
    const e = t.throws(() => refuseHeldAlready(dir), { instanceOf: SynplugError });
    t.is((e as SynplugError).category, 'not-set-up');
    t.is(
      e?.message,
      `demo --here: the hold is already held: a running 'synplug protect' (pid ${process.pid}: haproxy -sf 4242) holds queue, at most until ${new Date(deadline).toISOString()}. Every new connection to it waits for that hold to end, so the demo would measure that hold, not a restart. Wait for the protect to end (or until its deadline), then run the demo again; or run 'synplug demo' without --here (in a network namespace of its own). Nothing was changed`,
    );
    // a dead holder's lease holds nothing: no refusal
    store.writeLeases({
      version: 1,
      leases: [{ id: 'feedfacefeedface', owner: 'protect', pid: process.pid, pidStart: 1, holds: ['queue'], since: now, deadline }],
    });
    t.notThrows(() => refuseHeldAlready(dir));
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
