/**
 * A fault campaign over protect's plug window (issue #19, deliverable 12,
 * the unit half, for protect's orchestration): a fake kernel refuses the
 * k-th request, for every k of a clean run and one past it. A refused
 * request changes nothing, as a netlink request the kernel refuses changes
 * nothing. After each run:
 *
 * - what was thrown is a categorised error (never a TypeError);
 * - the plug is not left buffering (a refused release is retried);
 * - the records agree with the fake kernel: plug.json never says released
 *   while it buffers, and no lease of the run is left live;
 * - marking is left on only when the refused request was the disarm itself
 *   (the kernel-side element then times out by itself);
 * - the next protect, with no fault, runs its command and leaves everything
 *   released and disarmed.
 */
import test from 'ava';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runProtected } from '../../src/guard/protect.js';
import { StateStore } from '../../src/guard/state.js';
import { liveLeases } from '../../src/guard/leases.js';
import { SynplugError } from '../../src/netlink/errors.js';
import { FakeSession, type KernelCall } from '../helpers/fake-session.js';

/** The kernel's side of the local hold, as far as the plug window changes it. */
interface FakeKernel {
  armed: boolean;
  buffering: boolean;
}

/** A session whose k-th kernel request (counted from 1) is refused, once; the others change `kernel`. */
class FaultySession extends FakeSession {
  failed?: string;
  constructor(stateDir: string, kernel: FakeKernel, failAt = 0) {
    const effect: Record<KernelCall, () => void> = {
      arm: () => {
        kernel.armed = true;
      },
      disarm: () => {
        kernel.armed = false;
      },
      buffer: () => {
        kernel.buffering = true;
      },
      release: () => {
        kernel.buffering = false;
      },
    };
    super({
      stateDir,
      onCall: (call) => {
        if (this.calls.length === failAt) {
          this.failed = call;
          throw new SynplugError(`the kernel refused ${call} (injected fault at request ${failAt})`, 'kernel');
        }
        effect[call]();
      },
    });
  }
  /** the kernel requests made, by name */
  get requests(): string[] {
    return this.calls.map((c) => c.split(' ')[0]);
  }
}

const command = ['sh', '-c', 'exit 0'];

test('protect: the k-th kernel request refused, for every k: nothing left buffering, records agree, the next protect recovers', async (t) => {
  t.timeout(10 * 60_000);
  // a clean run: how many requests it makes
  const clean = new FaultySession(mkdtempSync(join(tmpdir(), 'synplug-faults-')), { armed: false, buffering: false });
  t.is((await runProtected(clean, { command })).exitCode, 0);
  const n = clean.requests.length;
  t.deepEqual(clean.requests, ['release', 'arm', 'buffer', 'release', 'disarm'], 'warm-up release, arm, buffer, release, disarm');
  for (let k = 1; k <= n + 1; k++) {
    const dir = mkdtempSync(join(tmpdir(), 'synplug-faults-'));
    const kernel: FakeKernel = { armed: false, buffering: false };
    const s = new FaultySession(dir, kernel, k);
    const outcome = await runProtected(s, { command }).then(
      (r) => ({ r }),
      (e: unknown) => ({ e }),
    );
    const what = `fault at request ${k} (${s.failed ?? 'none'})`;
    if ('e' in outcome) t.true(outcome.e instanceof SynplugError, `${what}: ${String(outcome.e)}`);
    t.false(kernel.buffering, `${what}: the plug is not left buffering`);
    const store = new StateStore(dir);
    t.not(store.readPlug()?.state, 'buffering', `${what}: plug.json agrees`);
    t.deepEqual(liveLeases(store), [], `${what}: no live lease left`);
    if (kernel.armed) t.is(s.failed, 'disarm', `${what}: marking is left on only when the disarm itself was refused`);
    // The next protect, no fault: runs, releases, disarms.
    const next = new FaultySession(dir, kernel);
    const r = await runProtected(next, { command });
    t.is(r.exitCode, 0, what);
    t.deepEqual(kernel, { armed: false, buffering: false }, `${what}: the next protect leaves everything off`);
    t.is(store.readPlug()?.state, 'released');
  }
});
