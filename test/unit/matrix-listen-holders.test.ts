/**
 * --wait-listen with a server that keeps its listening socket (issue 14
 * item 4): the socket's holders (src/guard/listen-holders.ts, oracle: the
 * process's own fd table) and protect's wait, which ends when a process that
 * did not hold the kept socket before holds it. The "server" is a Python
 * process that listens and, on SIGUSR2 (as HAProxy -W reloads), forks a
 * child that inherits the socket; protect's command is `kill -USR2 PID`,
 * which returns before that happens. The kernel side (HAProxy, nginx) is
 * test/kernel/matrix-wait-listen.test.ts.
 */
import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readlinkSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { closingInodes, handedOverInode, holderPids, socketHolders } from '../../src/guard/listen-holders.js';
import { runProtected } from '../../src/guard/protect.js';
import type { Listener } from '../../src/guard/types.js';
import { FakeSession } from '../helpers/fake-session.js';

/** The socket inodes in a process's fd table (the oracle). */
function socketInodes(pid: number): number[] {
  const out: number[] = [];
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) out.push(Number(m[1]));
    } catch {
      /* closed meanwhile */
    }
  }
  return out;
}

/** A Python "server": listens on 127.0.0.1, prints its port, and forks a child holding the socket on SIGUSR2 (the child prints its pid). */
async function pythonServer(t: import('ava').ExecutionContext): Promise<{ child: ChildProcess; lines: AsyncIterator<string>; inode: number }> {
  const code = [
    'import os, signal, socket, sys, time',
    's = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)',
    'kids = []',
    'def reload(sig, frame):',
    '    pid = os.fork()',
    '    if pid == 0:',
    '        time.sleep(600); os._exit(0)',
    '    kids.append(pid); print("worker", pid, flush=True)',
    'signal.signal(signal.SIGUSR2, reload)',
    'def stop(sig, frame):',
    '    for k in kids: os.kill(k, signal.SIGKILL)',
    '    os._exit(0)',
    'signal.signal(signal.SIGTERM, stop)',
    'print("port", s.getsockname()[1], "fd", s.fileno(), flush=True)',
    'while True: time.sleep(1)',
  ].join('\n');
  const child = spawn('python3', ['-c', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => {
    child.kill('SIGTERM');
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const first = await lines.next();
  const m = /^port \d+ fd (\d+)$/.exec(String(first.value));
  if (!m) throw new Error(`python said ${first.value}`);
  // The listening socket's inode, from the server's own fd table (the oracle).
  const inode = Number(/^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${child.pid}/fd/${m[1]}`))![1]);
  return { child, lines, inode };
}

test('socketHolders: the processes whose fd tables hold a socket, as their /proc/PID/fd say', async (t) => {
  const { child, inode } = await pythonServer(t);
  const inodes = [inode];
  t.true(socketInodes(child.pid!).includes(inode), 'oracle: python holds the socket');
  t.false(socketInodes(process.pid).includes(inode), 'oracle: this process does not');
  const holders = socketHolders(inodes);
  for (const i of inodes) t.true(holders.get(i)?.has(child.pid!), `inode ${i} held by python`);
  t.false(holderPids(inodes).has(process.pid), 'not by this process');
  t.deepEqual(socketHolders([]), new Map());
  t.deepEqual(socketHolders([1]), new Map(), 'an inode nobody holds');
  t.is(handedOverInode(inodes, new Set([child.pid!])), undefined, 'no new holder yet');
  t.deepEqual(socketHolders(inodes, mkdtempSync(join(tmpdir(), 'sp-noproc-'))), new Map(), 'an empty proc tree');
});

test('protect --wait-listen: a kept socket taken over by a new process ends the wait (no max-hold); the listener is reported handedOver', async (t) => {
  const { child, lines, inode } = await pythonServer(t);
  const listener: Listener = { address: '127.0.0.1', port: 1, inode };
  const session = new FakeSession({ listeners: () => [listener] }); // the same socket before and after: nothing new ever appears
  const calls = session.calls;
  const r = await runProtected(session, { command: ['kill', '-USR2', String(child.pid)], waitListen: { port: 1 }, maxHoldMs: 600_000 });
  t.is(r.exitCode, 0);
  t.false(r.maxHoldReached, 'released by the hand-over, not by the max-hold');
  t.deepEqual(r.newListener, { ...listener, handedOver: true });
  const worker = await lines.next();
  t.regex(String(worker.value), /^worker \d+$/);
  t.true(
    socketHolders([inode])
      .get(inode)
      ?.has(Number(String(worker.value).split(' ')[1])),
    'oracle: the new process holds it',
  );
  t.deepEqual(calls.slice(-2), ['release', 'disarm']);
});

test('closingInodes: sockets that only processes of before hold (a fake /proc); sockets nobody visible holds are not counted', (t) => {
  const proc = mkdtempSync(join(tmpdir(), 'sp-proc-'));
  const fd = (pid: number, n: number, inode: number) => {
    mkdirSync(join(proc, String(pid), 'fd'), { recursive: true });
    symlinkSync(`socket:[${inode}]`, join(proc, String(pid), 'fd', String(n)));
  };
  fd(100, 3, 11); // the master: keeps socket 11 only
  fd(101, 3, 11); // an old worker: 11 and 12
  fd(101, 4, 12);
  fd(200, 3, 11); // a new worker: 11
  mkdirSync(join(proc, 'self'), { recursive: true }); // not a pid
  const before = new Set([100, 101]);
  t.deepEqual(closingInodes([11, 12, 13], before, proc), [12], '12: old processes only; 11: a new one too; 13: nobody visible');
  t.deepEqual(closingInodes([11], before, proc), []);
  t.deepEqual(closingInodes([12], new Set([101, 200]), proc), [12]);
  t.deepEqual(closingInodes([], before, proc), []);
});

/**
 * A Python "server" with two sockets in one reuseport group: on SIGUSR2 it
 * forks a new worker that keeps the first only, and closes the second itself
 * (nginx going from 3 workers to 2): when the test writes a line to its stdin
 * (`closeAfter` 'on-request'), or after `closeAfter` seconds.
 */
async function reuseportServer(t: import('ava').ExecutionContext, closeAfter: number | 'on-request') {
  const code = [
    'import os, signal, socket, sys, time',
    'def sock(port):',
    '    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1); s.bind(("127.0.0.1", port)); s.listen(8); return s',
    'a = sock(0); b = sock(a.getsockname()[1])',
    'kids = []',
    'state = {"reload": False}',
    'def reload(sig, frame):',
    '    pid = os.fork()',
    '    if pid == 0:',
    '        b.close(); time.sleep(600); os._exit(0)',
    '    kids.append(pid); state["reload"] = True',
    'signal.signal(signal.SIGUSR2, reload)',
    'def stop(sig, frame):',
    '    for k in kids: os.kill(k, signal.SIGKILL)',
    '    os._exit(0)',
    'signal.signal(signal.SIGTERM, stop)',
    'print("fds", a.fileno(), b.fileno(), flush=True)',
    'while not state["reload"]: time.sleep(0.01)',
    closeAfter === 'on-request' ? 'sys.stdin.readline()' : `time.sleep(${closeAfter})`,
    'b.close(); print("closed", flush=True)',
    'while True: time.sleep(1)',
  ].join('\n');
  const child = spawn('python3', ['-c', code], { stdio: ['pipe', 'pipe', 'inherit'] });
  t.teardown(() => {
    child.kill('SIGTERM');
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const first = await lines.next();
  const m = /^fds (\d+) (\d+)$/.exec(String(first.value));
  if (!m) throw new Error(`python said ${first.value}`);
  const inodeOf = (fd: string) => Number(/^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${child.pid}/fd/${fd}`))![1]);
  return { child, lines, kept: inodeOf(m[1]), closing: inodeOf(m[2]) };
}

test('protect --wait-listen: a hand-over does not end the wait while a socket of before that only old processes hold still listens; it ends when that socket closes (oldClosed)', async (t) => {
  const { child, lines, kept, closing } = await reuseportServer(t, 'on-request');
  // The listeners as sock_diag would list them: a socket listens while some process holds it.
  const listening = (): Listener[] =>
    [kept, closing].filter((i) => (socketHolders([i]).get(i)?.size ?? 0) > 0).map((inode) => ({ address: '127.0.0.1', port: 1, inode }));
  t.is(listening().length, 2, 'oracle: both sockets are held before the reload');
  let closingHeldAtRelease: boolean | undefined;
  let plugged = false;
  // The old socket closes only after protect has seen the hand-over twice
  // with it still listening, however slow the machine.
  let handoverSeen = 0;
  const newWorkerHolds = () => [...(socketHolders([kept]).get(kept) ?? [])].some((pid) => pid !== child.pid);
  const session = new FakeSession({
    listeners: () => {
      const now = listening();
      if (plugged && newWorkerHolds() && ++handoverSeen === 2) child.stdin!.write('close\n');
      return now;
    },
    onCall: (call) => {
      if (call === 'buffer') plugged = true;
      // (the first release is protect's warm-up, before the window)
      if (call === 'release' && plugged) closingHeldAtRelease ??= (socketHolders([closing]).get(closing)?.size ?? 0) > 0;
    },
  });
  const r = await runProtected(session, { command: ['kill', '-USR2', String(child.pid)], waitListen: { port: 1 }, maxHoldMs: 600_000 });
  t.is(r.exitCode, 0);
  t.false(r.maxHoldReached);
  t.deepEqual(r.newListener, { address: '127.0.0.1', port: 1, inode: kept, handedOver: true, oldClosed: 1 });
  t.false(closingHeldAtRelease, 'released only after the old socket closed');
  t.is(String((await lines.next()).value), 'closed', 'oracle: python closed it');
});

test('protect --wait-listen: a socket of before that never closes holds until max-hold, and the notice names it', async (t) => {
  const { child, kept, closing } = await reuseportServer(t, 600);
  const notices: string[] = [];
  const session = new FakeSession({ listeners: () => [kept, closing].map((inode) => ({ address: '127.0.0.1', port: 1, inode })) });
  const r = await runProtected(session, {
    command: ['kill', '-USR2', String(child.pid)],
    waitListen: { port: 1 },
    maxHoldMs: 800,
    onNotice: (l) => notices.push(l),
  });
  t.true(r.maxHoldReached);
  t.true(
    notices.some((l) => l.includes('max-hold of 800 ms reached') && l.includes(`inode ${closing}`) && l.includes('to close')),
    notices.join('\n'),
  );
});
