/**
 * protect --wait-listen's phase-one notices (src/guard/protect.ts), with a
 * recording fake session: nothing listening on the target before the reload
 * (a wrong port would hold until --max-hold on every reload); an address
 * that is not the namespace's own is refused (usage) before anything.
 */
import test from 'ava';
import { readdirSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { runProtected } from '../../src/guard/protect.js';
import type { Listener, ListenTarget } from '../../src/guard/types.js';
import { FakeSession } from '../helpers/fake-session.js';
import { UsageError } from '../../src/netlink/errors.js';

/** A session where `before` listens until the window opens; from then on, a new socket on the target. */
class ReloadingSession extends FakeSession {
  constructor(before: Listener[]) {
    let reloaded = false;
    super({
      listeners: (t) => (reloaded ? [{ address: t.address ?? '0.0.0.0', port: t.port, inode: 999_999 }] : before),
      onCall: (call) => {
        if (call === 'buffer') reloaded = true; // the next listing (after the command) shows a new socket
      },
    });
  }
}

/** A session with isLocalAddress, as GuardSession has. */
class LocalAwareSession extends ReloadingSession {
  constructor(
    before: Listener[],
    private readonly isLocal: (a: string) => boolean | undefined,
  ) {
    super(before);
  }
  async isLocalAddress(a: string) {
    return this.isLocal(a);
  }
}

test('--wait-listen on a port where nothing listens before the reload: a notice says it waits for a new socket up to --max-hold', async (t) => {
  const s = new ReloadingSession([]);
  const notices: string[] = [];
  const r = await runProtected(s, {
    command: ['true'],
    waitListen: { address: '169.254.255.254', port: 18080 },
    maxHoldMs: 5000,
    onNotice: (l) => notices.push(l),
  });
  t.is(r.exitCode, 0);
  t.true(
    notices.includes(
      '--wait-listen 169.254.255.254:18080: nothing listens there before the reload; protect will hold new connections until a new listening socket appears there, at most --max-hold (5000 ms)',
    ),
    notices.join('\n'),
  );
  t.true(s.log.indexOf('listeners 169.254.255.254:18080') < s.log.indexOf('buffer'), 'said in phase one, before the window');
  // The wait for the new listener is the server's time: apart from synplug's own (found by a new user: 677 ms of "own time")
  t.true(typeof r.overhead.listenWaitUs === 'number' && r.overhead.listenWaitUs >= 0, JSON.stringify(r.overhead));
  t.is(r.overhead.totalUs, r.overhead.plugAckToCommandStartUs + r.overhead.commandExitToReleaseAckUs!);
});

/** The socket inodes in this process's fd table (the oracle). */
function ownSocketInodes(): Set<number> {
  const out = new Set<number>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
      if (m) out.add(Number(m[1]));
    } catch {
      /* closed meanwhile */
    }
  }
  return out;
}

/** A listening socket of this process, and its inode: the socket that appeared in the fd table with listen() (made before any test runs, so no other socket comes and goes meanwhile). */
let ownInode = 0;
const server = createServer();
test.before(async () => {
  const before = ownSocketInodes();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const fresh = [...ownSocketInodes()].filter((i) => !before.has(i));
  if (fresh.length !== 1) throw new Error(`expected one new socket in /proc/self/fd, saw ${fresh.length}`);
  ownInode = fresh[0];
});
test.after.always(() => server.close());

test('--wait-listen with a server already listening (its holder visible): no notice', async (t) => {
  const s = new LocalAwareSession([{ address: '169.254.255.254', port: 18080, inode: ownInode }], () => true);
  const notices: string[] = [];
  await runProtected(s, { command: ['true'], waitListen: { address: '169.254.255.254', port: 18080 }, maxHoldMs: 5000, onNotice: (l) => notices.push(l) });
  t.deepEqual(
    notices.filter((n) => n.startsWith('--wait-listen')),
    [],
  );
});

test('--wait-listen with listening sockets whose holders cannot be seen: a notice says a kept socket cannot be seen and holds until --max-hold', async (t) => {
  // inode 1: no process's fd table links to socket:[1]
  const s = new LocalAwareSession([{ address: '169.254.255.254', port: 18080, inode: 1 }], () => true);
  const notices: string[] = [];
  await runProtected(s, { command: ['true'], waitListen: { address: '169.254.255.254', port: 18080 }, maxHoldMs: 5000, onNotice: (l) => notices.push(l) });
  t.true(
    notices.some(
      (n) =>
        n.startsWith('--wait-listen 169.254.255.254:18080: 1 socket(s) listen there, but no process holding them can be seen in /proc') &&
        n.includes('holds until --max-hold (5000 ms)'),
    ),
    notices.join('\n'),
  );
  t.true(s.log.indexOf('listeners 169.254.255.254:18080') < s.log.indexOf('buffer'), 'said in phase one, before the window');
});

test("--wait-listen on an address that is not the namespace's own: refused (usage) before the --check command and before anything is held", async (t) => {
  const asked: string[] = [];
  const s = new LocalAwareSession([], (a) => {
    asked.push(a);
    return false;
  });
  const notices: string[] = [];
  const e = await t.throwsAsync(
    runProtected(s, {
      command: ['true'],
      check: ['false'],
      waitListen: { address: '169.254.77.77', port: 80 },
      maxHoldMs: 3000,
      onNotice: (l) => notices.push(l),
    }),
    { instanceOf: UsageError },
  );
  t.is(
    e?.message,
    '--wait-listen 169.254.77.77:80: 169.254.77.77 is not an address of this network namespace, so no server can listen there and every held client would wait until --max-hold; give the address the server listens on (or only the port: --wait-listen PORT). Nothing was held and the command was NOT run',
  );
  t.is(e?.category, 'usage');
  t.deepEqual(asked, ['169.254.77.77']);
  t.deepEqual(s.log, [], 'nothing was asked of the hold (no plug, no release, no listing)');
  t.deepEqual(notices, []);
  // the namespace's own address, and an address the session cannot judge: no refusal
  for (const local of [true, undefined]) {
    const ok = new LocalAwareSession([], () => local);
    t.is((await runProtected(ok, { command: ['true'], waitListen: { address: '169.254.77.77', port: 80 }, maxHoldMs: 2000 })).exitCode, 0);
  }
});

/** A session that holds some traffic (its holds' heldTraffic), as GuardSession reports it. */
class HoldingSession extends ReloadingSession {
  constructor(private readonly held: Array<{ addrs: string[]; ports: number[] }>) {
    super([]);
  }
  heldTraffic() {
    return this.held;
  }
}

test('--wait-listen on a held port at an address no hold holds: a notice says it is not held, and what is', async (t) => {
  const run = async (held: Array<{ addrs: string[]; ports: number[] }>, waitListen: ListenTarget) => {
    const notices: string[] = [];
    await runProtected(new HoldingSession(held), { command: ['true'], waitListen, maxHoldMs: 2000, onNotice: (l) => notices.push(l) });
    return notices.filter((n) => n.includes('no hold set up holds'));
  };
  // the local hold's address, every port, --wait-listen 127.0.0.1:80
  t.deepEqual(await run([{ addrs: ['169.254.255.254'], ports: [] }], { address: '127.0.0.1', port: 80 }), [
    "--wait-listen 127.0.0.1:80: no hold set up holds new connections there (what is held: every port to 169.254.255.254): the reload's clients there are not held, and protect waits for a listener on a port it does not hold; give --wait-listen the held port (and address) the server listens on",
  ]);
  // held targets: no such notice
  t.deepEqual(await run([{ addrs: [], ports: [80] }], { port: 80 }), []);
  t.deepEqual(await run([{ addrs: ['169.254.255.254'], ports: [] }], { address: '169.254.255.254', port: 8080 }), []);
  t.deepEqual(await run([{ addrs: ['169.254.255.254'], ports: [] }], { port: 80 }), []);
  t.deepEqual(
    await run(
      [
        { addrs: ['169.254.90.2'], ports: [80] },
        { addrs: ['169.254.255.254'], ports: [] },
      ],
      { address: '169.254.90.2', port: 80 },
    ),
    [],
  );
});

// issue 22 (a new user's check): --wait-listen 8008 with holds of ports 80 and 8081 gave two notices, then held every held
// port until --max-hold and reported lossless. A port no hold holds is refused in phase one: usage, nothing asked of the
// hold, the check and the command not run; the held ports and the fix named. A hold of every port holds any port.
test('--wait-listen on a port no hold holds: refused in phase one (usage), naming the held ports; nothing held, check and command not run', async (t) => {
  const s = new HoldingSession([
    { addrs: [], ports: [80] },
    { addrs: [], ports: [8081] },
  ]);
  const notices: string[] = [];
  const e = await t.throwsAsync(
    runProtected(s, { command: ['true'], check: ['false'], waitListen: { port: 8008 }, maxHoldMs: 10_000, onNotice: (l) => notices.push(l) }),
    { instanceOf: UsageError },
  );
  t.is(
    e?.message,
    '--wait-listen port 8008: no hold set up here holds port 8008 (what is held: port 80; port 8081), so its clients are not held and protect would wait for a listener there while holding the held ports until --max-hold; give --wait-listen the held port the server listens on (e.g. --wait-listen 80), or set up a hold of port 8008. Nothing was held and the command was NOT run',
  );
  t.is(e?.category, 'usage');
  t.deepEqual(s.log, [], 'nothing asked of the hold: no plug, no release, no listing');
  t.deepEqual(notices, [], 'no check ran (its failure would have been exit 10), no notice');
  // a hold of every port (the local hold) holds port 8008 too: no refusal
  const all = new HoldingSession([
    { addrs: [], ports: [80] },
    { addrs: ['169.254.255.254'], ports: [] },
  ]);
  t.is((await runProtected(all, { command: ['true'], waitListen: { port: 8008 }, maxHoldMs: 2000 })).exitCode, 0);
  // a held port: no refusal
  t.is(
    (await runProtected(new HoldingSession([{ addrs: [], ports: [80, 8081] }]), { command: ['true'], waitListen: { port: 8081 }, maxHoldMs: 2000 })).exitCode,
    0,
  );
});
