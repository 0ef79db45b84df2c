/**
 * Live: NfqueueHolder on this kernel's nfnetlink_queue. Each scenario runs in
 * a network namespace of its own (test/helpers/own-netns.ts): an NFQUEUE
 * bypass rule on local SYNs to one port, made by iptables-nft/ip6tables-nft
 * (the reference tools: the xt NFQUEUE target through nft_compat), real TCP
 * connects from this process, and the kernel's own count of queued packets
 * (/proc/net/netfilter/nfnetlink_queue) as the oracle.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { createInterface } from 'node:readline';
import { NfqueueHolder, NfqueueBusyError } from '../../src/netlink/nfqueue.js';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';
import { iptablesQueueRule, procQueue } from '../helpers/nfqueue-live.js';

/** A scenario's result, as parsed JSON. */
// biome-ignore lint/suspicious/noExplicitAny: the scenarios' JSON results, asserted field by field
type Json = Record<string, any>;

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_NFQUEUE_SCENARIO';
const QUEUE = 25;
const PORT = 39251;
const ADDR6 = 'fd00:25::1';

/** Wait (bounded) until `cond` holds; throws naming `what`. */
async function until(cond: () => boolean, what: string | (() => string), ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await sleep(20);
  }
}

/** A non-blocking connect whose outcome is recorded as it happens. */
interface Attempt {
  state: 'pending' | 'connected' | 'refused' | 'error';
  sock: net.Socket;
}
function attempt(host: string, port: number): Attempt {
  const sock = net.connect({ host, port });
  const a: Attempt = { state: 'pending', sock };
  sock.on('connect', () => {
    a.state = 'connected';
    sock.destroy();
  });
  sock.on('error', (e: NodeJS.ErrnoException) => {
    if (a.state === 'pending') a.state = e.code === 'ECONNREFUSED' ? 'refused' : 'error';
  });
  return a;
}

async function listen(host: string, port: number): Promise<net.Server> {
  const s = net.createServer((c) => c.destroy());
  await new Promise<void>((res, rej) => {
    s.once('error', rej);
    s.listen(port, host, () => res());
  });
  return s;
}

function addAddr6(): void {
  execFileSync('/usr/sbin/ip', ['-6', 'addr', 'add', `${ADDR6}/128`, 'dev', 'lo', 'nodad']);
}

/** Spawn this file as `role` in the same namespace. */
function role(
  name: string,
  extraEnv: Record<string, string> = {},
  stdio: Array<'pipe' | 'inherit' | 'ignore' | number> = ['pipe', 'pipe', 'inherit'],
): ChildProcess {
  return spawn(process.execPath, ['--import=tsx', SELF], { env: { ...process.env, [ENV]: name, ...extraEnv }, stdio });
}

/** The next line of a child's stdout. */
function lines(cp: ChildProcess): () => Promise<string> {
  const rl = createInterface({ input: cp.stdout! });
  const queue: string[] = [];
  const waiters: Array<(l: string) => void> = [];
  rl.on('line', (l) => {
    const w = waiters.shift();
    if (w) w(l);
    else queue.push(l);
  });
  return () => {
    const l = queue.shift();
    return l !== undefined ? Promise.resolve(l) : new Promise((res) => waiters.push(res));
  };
}

const scenarios: Record<string, () => Promise<unknown>> = {
  /** nobody bound: connects pass; bound: held (IPv4 and IPv6 on one socket), released by one batch verdict */
  async hold() {
    addAddr6();
    iptablesQueueRule(PORT, QUEUE);
    const s4 = await listen('127.0.0.1', PORT);
    const s6 = await listen(ADDR6, PORT);
    const unbound = [attempt('127.0.0.1', PORT), attempt(ADDR6, PORT)];
    await until(() => unbound.every((a) => a.state !== 'pending'), 'the unbound connects');
    const h = await NfqueueHolder.bind(QUEUE);
    const boundProc = procQueue(QUEUE);
    const held4 = attempt('127.0.0.1', PORT);
    await until(() => h.held === 1, 'the IPv4 SYN to be held');
    const held6 = attempt(ADDR6, PORT);
    await until(() => h.held === 2, 'the IPv6 SYN to be held');
    const whileHeld = { held: h.held, v4: held4.state, v6: held6.state, proc: procQueue(QUEUE) };
    const released = await h.release();
    await until(() => held4.state !== 'pending' && held6.state !== 'pending', 'the released connects');
    const after = { held: h.held, released: h.released, v4: held4.state, v6: held6.state, overruns: h.overruns };
    const emptyRelease = await h.release();
    await h.close();
    const procAfterClose = procQueue(QUEUE) ?? null;
    s4.close();
    s6.close();
    return { unbound: unbound.map((a) => a.state), portId: h.portId, boundProc, whileHeld, released, after, emptyRelease, procAfterClose };
  },

  /** a second bind, from another process, fails with NfqueueBusyError naming the holder */
  async busy() {
    const h = await NfqueueHolder.bind(QUEUE);
    const other = role('bind-try');
    const out = await lines(other)();
    await h.close();
    const afterClose = role('bind-try');
    const out2 = await lines(afterClose)();
    // without CAP_NET_ADMIN (dropped from the bounding set before exec): the queue is free, the kernel says EPERM
    const unprivileged = spawn('/usr/bin/setpriv', ['--bounding-set=-net_admin', '--inh-caps=-net_admin', process.execPath, '--import=tsx', SELF], {
      env: { ...process.env, [ENV]: 'bind-try' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const out3 = await lines(unprivileged)();
    return { holderPid: process.pid, second: JSON.parse(out), afterClose: JSON.parse(out2), unprivileged: JSON.parse(out3) };
  },

  /** the holder (process B) hands its socket to a child C and is SIGKILLed; C adopts it and releases the held SYN */
  async adopt() {
    iptablesQueueRule(PORT, QUEUE);
    const server = await listen('127.0.0.1', PORT);
    const b = role('holder', {}, ['pipe', 'pipe', 'inherit']);
    const next = lines(b);
    const bound = await next();
    const a = attempt('127.0.0.1', PORT);
    await until(() => (procQueue(QUEUE)?.queued ?? 0) === 1, 'the SYN to be queued');
    b.stdin!.write('spawn-adopter\n');
    const adopted = (await next()).split(' '); // "adopted PID HELD"
    b.stdin!.write('abandon\n'); // the holder closes its copy without unbinding
    const abandoned = await next();
    const afterAbandon = procQueue(QUEUE);
    b.kill('SIGKILL');
    await new Promise((res) => b.once('exit', res));
    const afterKill = { state: a.state, proc: procQueue(QUEUE) };
    process.kill(Number(adopted[1]), 'SIGUSR1');
    const released = await next();
    await until(() => a.state !== 'pending', 'the released connect');
    server.close();
    return { bound, adoptedHeld: Number(adopted[2]), abandoned, afterAbandon, afterKill, released, final: a.state };
  },

  /** maxlen 2, fail-open off: SYNs over it are dropped (not passed to the closed port); fail-open on: refused at once */
  async overflow() {
    iptablesQueueRule(PORT, QUEUE);
    const result: Record<string, unknown> = {};
    for (const failOpen of [false, true]) {
      const h = await NfqueueHolder.bind(QUEUE, { maxlen: 2, failOpen });
      const as = [0, 1, 2, 3].map(() => attempt('127.0.0.1', PORT)); // nothing listens on PORT
      // over maxlen: fail-open off drops them (the kernel counts queue_dropped); on, they pass to the closed port and are refused at once
      if (failOpen) await until(() => h.held === 2 && as.filter((x) => x.state === 'refused').length === 2, 'two held and two refused');
      else await until(() => h.held === 2 && (procQueue(QUEUE)?.queueDropped ?? 0) >= 2, 'two held and two dropped');
      const overMaxlen = as.map((x) => x.state);
      const released = await h.release();
      await until(() => as.filter((x) => x.state === 'refused').length >= (failOpen ? 4 : 2), 'the released SYNs refused');
      // the dropped ones (fail-open off) retransmit only after 1 s: still pending when the released ones were refused
      result[failOpen ? 'failOpen' : 'failClosed'] = { overMaxlen, released, afterRelease: as.map((x) => x.state), proc: procQueue(QUEUE) };
      for (const x of as) x.sock.destroy();
      await h.close();
    }
    return result;
  },

  /** passThrough: a SYN queued before is still held; one sent after passes at once; the unbind after the last verdict drops nothing */
  async passThrough() {
    iptablesQueueRule(PORT, QUEUE);
    const server = await listen('127.0.0.1', PORT);
    const h = await NfqueueHolder.bind(QUEUE, { maxlen: 64 });
    const before = attempt('127.0.0.1', PORT);
    await until(() => h.held === 1, 'the first SYN held');
    await h.passThrough();
    const after = attempt('127.0.0.1', PORT);
    await until(() => after.state !== 'pending', 'the SYN sent after passThrough to connect');
    const states = { before: before.state, after: after.state, held: h.held, proc: procQueue(QUEUE) };
    const released = await h.release();
    await until(() => before.state !== 'pending', 'the held SYN released');
    await h.close();
    const result = { ...states, released, beforeAfterRelease: before.state, afterClose: procQueue(QUEUE) ?? null };
    server.close();
    return result;
  },

  /** a socket buffer smaller than the burst: ENOBUFS is counted, reading goes on, and what was read is released */
  async overrun() {
    iptablesQueueRule(PORT, QUEUE);
    const server = await listen('127.0.0.1', PORT);
    const h = await NfqueueHolder.bind(QUEUE, { recvBufferSize: 4096 });
    // 64 SYNs from another process, sent while this one waits for it synchronously: nobody reads the
    // socket meanwhile (each SYN is queued, and its message sent, inside the client's connect())
    execFileSync('python3', [
      '-c',
      `import socket\nss=[]\nfor i in range(64):\n s=socket.socket(); s.setblocking(False); s.connect_ex(("127.0.0.1", ${PORT})); ss.append(s)`,
    ]);
    await until(
      () => h.overruns > 0 && h.held > 0,
      () => `an overrun and held SYNs (overruns ${h.overruns}, held ${h.held}, ${JSON.stringify(procQueue(QUEUE))})`,
    );
    const heldNow = h.held;
    const proc = procQueue(QUEUE)!;
    const counters = h.kernelCounters();
    const released = await h.release();
    const result = {
      overruns: h.overruns,
      heldNow,
      queued: proc.queued,
      counters,
      released,
      userDropped: readFileSync('/proc/net/netfilter/nfnetlink_queue', 'utf8').trim().split(/\s+/).map(Number)[6],
    };
    await h.close();
    server.close();
    return result;
  },

  /** setInheritable toggles FD_CLOEXEC, as /proc/self/fdinfo shows it (O_CLOEXEC 02000000 in flags) */
  async inheritable() {
    const h = await NfqueueHolder.bind(QUEUE);
    const flags = (): number => Number.parseInt(/flags:\s*([0-7]+)/.exec(readFileSync(`/proc/self/fdinfo/${h.fd}`, 'utf8'))![1], 8);
    const atBind = (flags() & 0o2000000) !== 0;
    h.setInheritable(true);
    const inheritable = (flags() & 0o2000000) !== 0;
    h.setInheritable(false);
    const again = (flags() & 0o2000000) !== 0;
    await h.close();
    return { atBind, inheritable, again };
  },

  // roles, spawned by the scenarios above
  async 'bind-try'() {
    try {
      const h = await NfqueueHolder.bind(QUEUE);
      await h.close();
      process.stdout.write(`${JSON.stringify({ ok: true })}\n`);
    } catch (e) {
      const err = e as NfqueueBusyError;
      process.stdout.write(
        `${JSON.stringify({ name: err.name, code: err.code, category: err.category, message: err.message, busy: e instanceof NfqueueBusyError, holders: err.holders })}\n`,
      );
    }
    process.exit(0);
  },
  async holder() {
    const h = await NfqueueHolder.bind(QUEUE);
    process.stdout.write('bound\n');
    for await (const line of createInterface({ input: process.stdin })) {
      if (line === 'spawn-adopter') {
        // the adopter gets the socket as its fd 3, and our stdout (the scenario's pipe)
        role('adopter', {}, ['ignore', 'inherit', 'inherit', h.fd]);
      }
      if (line === 'abandon') {
        h.abandon();
        process.stdout.write('abandoned\n');
      }
    }
    return {};
  },
  async adopter() {
    const h = NfqueueHolder.adopt(3, QUEUE);
    h.ref();
    process.on('SIGUSR1', () => {
      void h.release().then(async (n) => {
        process.stdout.write(`released ${n} ${h.held}\n`);
        await h.close();
        process.exit(0);
      });
    });
    process.stdout.write(`adopted ${process.pid} ${h.held}\n`);
    await new Promise(() => {});
    return {};
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');
  const run = <T>(name: string): T => inOwnNetns<T>(SELF, ENV, name);

  test('unbound: SYNs bypass; bound: IPv4 and IPv6 SYNs held on one socket, released by one batch verdict', (t) => {
    const r = run<Json>('hold');
    t.deepEqual(r.unbound, ['connected', 'connected'], 'nobody bound: the bypass flag lets SYNs through');
    t.like(r.boundProc, { portId: r.portId, queued: 0 }, 'the kernel lists the queue as bound by our socket');
    t.like(r.whileHeld, { held: 2, v4: 'pending', v6: 'pending' }, 'both connects wait while held');
    t.is(r.whileHeld.proc.queued, 2, 'the kernel has two packets queued');
    t.is(r.released, 2);
    t.like(r.after, { held: 0, released: 2, v4: 'connected', v6: 'connected', overruns: 0 });
    t.is(r.emptyRelease, 0, 'nothing held: nothing sent, 0');
    t.is(r.procAfterClose, null, 'close unbinds: the kernel no longer lists the queue');
  });

  test('a second bind of the same queue from another process fails with NfqueueBusyError naming the holder; after close it binds; without CAP_NET_ADMIN it says so', (t) => {
    const r = run<Json>('busy');
    t.like(r.second, { name: 'NfqueueBusyError', code: 'EPERM', category: 'foreign-state', busy: true });
    t.regex(r.second.message, new RegExp(`netfilter queue ${QUEUE} is bound by process ${r.holderPid} \\(node\\)`));
    t.deepEqual(r.afterClose, { ok: true });
    t.like(r.unprivileged, { name: 'NetlinkError', code: 'EPERM', category: 'permission', busy: false });
    t.regex(r.unprivileged.message, /not permitted \(binding a queue needs CAP_NET_ADMIN/);
  });

  test('adopt: a child that inherited the socket releases the held SYN after the holder abandoned its copy and was SIGKILLed', (t) => {
    const r = run<Json>('adopt');
    t.is(r.bound, 'bound');
    t.is(r.adoptedHeld, 1, 'the adopter counts the packet queued before it took over (from /proc)');
    t.is(r.abandoned, 'abandoned');
    t.like(r.afterAbandon, { queued: 1 }, "abandon() closed the holder's copy, not the queue");
    t.like(r.afterKill, { state: 'pending', proc: { queued: 1 } }, 'the holder died: the child keeps the queue bound, the SYN held');
    t.is(r.released, 'released 1 0');
    t.is(r.final, 'connected');
  });

  test('overflow: over maxlen, fail-open off drops (nothing reaches the closed port); fail-open on passes (refused at once)', (t) => {
    const r = run<Json>('overflow');
    t.deepEqual(r.failClosed.overMaxlen, ['pending', 'pending', 'pending', 'pending'], 'dropped, not refused');
    t.is(r.failClosed.released, 2);
    t.is(r.failClosed.afterRelease.filter((s: string) => s === 'refused').length, 2, 'the two released reach the closed port');
    t.is(r.failClosed.afterRelease.filter((s: string) => s === 'pending').length, 2, 'the two dropped wait for their retransmit');
    t.is(r.failOpen.overMaxlen.filter((s: string) => s === 'refused').length, 2, 'fail-open: the two over maxlen pass and are refused');
    t.is(r.failOpen.released, 2);
  });

  test('passThrough: a SYN held before stays held until the verdict; one sent after passes at once, while the queue is still bound', (t) => {
    const r = run<Json>('passThrough');
    t.is(r.before, 'pending', 'the SYN queued before passThrough is still held');
    t.is(r.after, 'connected', 'the SYN sent after it passed without being queued');
    t.is(r.held, 1);
    t.like(r.proc, { queued: 1, queueDropped: 0 }, 'bound, one queued, nothing dropped: the new SYN was accepted (fail-open at maxlen 0), not dropped');
    t.is(r.released, 1);
    t.is(r.beforeAfterRelease, 'connected');
    t.is(r.afterClose, null, 'unbound after close');
  });

  test('overrun: a burst larger than the socket buffer counts ENOBUFS, reading goes on, and the SYNs read are released', (t) => {
    const r = run<Json>('overrun');
    t.true(r.overruns >= 1);
    t.true(r.userDropped > 0, 'the kernel counts the packets the socket could not take');
    t.true(r.heldNow > 0);
    t.is(r.heldNow, r.queued, 'what we counted is exactly what the kernel has queued');
    t.is(r.queued + r.userDropped, 64, 'every SYN of the burst was either queued or dropped for the full socket (the client closed: no retransmit)');
    t.is(r.released, r.heldNow);
    t.like(r.counters, { queue: 25, queued: r.queued, queueDropped: 0, userDropped: r.userDropped }, "kernelCounters() is the kernel's line");
  });

  test('setInheritable clears and sets FD_CLOEXEC (the socket is opened with it)', (t) => {
    t.deepEqual(run('inheritable'), { atBind: true, inheritable: false, again: true });
  });
}
