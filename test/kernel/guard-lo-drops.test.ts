/**
 * Kernel (VM): the local plug hold's arming and disarming drop nothing on
 * the device. Changing a device's ROOT qdisc (add or delete: qdisc_graft with
 * no parent, dev_deactivate) points the device at noop_qdisc while it grafts,
 * and every packet sent on the device meanwhile is dropped: a hold that adds
 * lo's prio root in phase one and deletes it after the release drops
 * loopback packets in flight at every reload (a lost SYN costs its client
 * the 1 s of its first retransmission; a handshake's lost last ACK leaves a
 * client waiting for a server that may be closing for its restart).
 *
 * In a namespace of its own (its TCP counters are this test's alone), after
 * `synplug setup`, python3 client threads connect in a loop to a python3
 * accept-and-close server on 127.0.0.1 (traffic the holds never hold) while
 * `synplug protect -- true` runs {@link PROTECTS} times, then `plug` and
 * `release` {@link CYCLES} times. Asserted: the namespace's TcpExt
 * TCPSynRetrans (SYNs and SYN-ACKs sent again: /proc/net/netstat) did not
 * grow, no client socket retransmitted (TCP_INFO tcpi_total_retrans, read
 * before the client closes), no connection failed, and none took a SYN's
 * first retransmission time, 1 s, or more (those of 0.5 s or more are
 * logged). Tcp RetransSegs (/proc/net/snmp) is logged, not asserted: it also
 * counts tail loss probes (a segment sent again when no ACK came within
 * about 10 ms on lo) and retransmission timeouts (200 ms), which a stalled
 * emulated vCPU may cause without any drop.
 *
 * On the code that armed the prio root per hold (14 root changes here), in
 * the 6.1 VM, it failed: TCPSynRetrans +8, 8 client sockets retransmitted,
 * 8 connects of 1.01-1.10 s (and one of 531 ms with none retransmitted: a
 * stall, hence the 1 s bound); this file's commits give each run's counts.
 *
 * Bounded: 4 client threads pausing 10 ms between connections, at most
 * 20000 connections each, each with a 5 s timeout, stopping once the
 * holds are done (and at 480 s regardless).
 */
import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_TIMEOUT, cli, run, scratch, sleep, tool, useGuardVm, within } from '../helpers/guard-vm.js';
import { DIE_WITH_PARENT } from '../helpers/py.js';

useGuardVm(test);

/** The namespace the holds and the traffic run in (`ip netns add`). */
const NS = 'synplug-lo-drops';
/** The loopback server's port (on 127.0.0.1, never the held address). */
const PORT = 39431;
/** `synplug protect -- true` runs: each arms and disarms the hold once. */
const PROTECTS = 5;
/** Then `synplug plug` / `synplug release` cycles. */
const CYCLES = 2;
/**
 * Connections this slow (ms) are logged: a handshake packet dropped costs at
 * least a SYN's first retransmission time (TCP_TIMEOUT_INIT, 1 s: a lost SYN
 * or SYN-ACK is sent again after it, a lost last ACK is answered by the
 * SYN-ACK sent again after it).
 */
const SLOW_MS = 500;
/**
 * Connections this slow (ms) fail the test: that first retransmission time.
 * Not {@link SLOW_MS}: the emulated VM stalls a client for 0.5-0.8 s now and
 * then with no packet sent twice (on the per-hold prio root code, beside its
 * 1.0-1.1 s connects: 583, 662, 754 ms).
 */
const RETRANSMIT_MS = 1000;

/** What the clients saw. */
interface Traffic {
  /** connections that completed (connected, then the server's EOF) */
  ok: number;
  /** connections that failed (timeout, refusal, reset...): what, and in which step */
  failed: { what: string; step: string; ms: number }[];
  /** connects that took SLOW_MS or more, ms each */
  slowConnects: number[];
  /** whole connections (connect to EOF) that took SLOW_MS or more, ms each */
  slowConnections: number[];
  /** client sockets whose tcpi_total_retrans was not 0 (SYNs sent again, counted per socket) */
  retransmitted: number;
  /** connections per second over the run */
  rate: number;
  /** a client stopped at the time cap, before the stop file (the traffic did not cover every hold) */
  capped: boolean;
}

/**
 * The server (a thread accepting and closing) and `threads` clients, in
 * one python3 process: prints `ready` once the server listens, then the
 * clients connect until `stop` exists (at most 20000 times each, 480 s),
 * then prints what they saw as JSON.
 */
function loopbackTraffic(port: number, stop: string, threads = 4): { proc: ChildProcess; ready: Promise<void>; result: Promise<Traffic> } {
  const py = `import socket,struct,sys,threading,time,os,json
port,stop,threads,slow=int(sys.argv[1]),sys.argv[2],int(sys.argv[3]),float(sys.argv[4])/1000
srv=socket.socket(); srv.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1); srv.bind(('127.0.0.1',port)); srv.listen(1024)
def serve():
    while True:
        c,_=srv.accept(); c.close()
threading.Thread(target=serve,daemon=True).start()
print('ready',flush=True)
n={'ok':0,'failed':[],'slowConnects':[],'slowConnections':[],'retransmitted':0,'capped':False}
lock=threading.Lock()
t_start=time.time()
def run():
    for _ in range(20000):
        if os.path.exists(stop): return
        if time.time()-t_start>480: n['capped']=True; return
        s=socket.socket(); s.settimeout(5); step='connect'; t0=time.time(); tc=None; err=None; rx=0
        try:
            s.connect(('127.0.0.1',port)); tc=time.time(); step='recv'
            if s.recv(1)!=b'': err='data'
            # struct tcp_info (linux/tcp.h): 8 bytes of u8 fields, then u32s; tcpi_total_retrans is the 24th u32
            rx=struct.unpack_from('I',s.getsockopt(socket.IPPROTO_TCP,socket.TCP_INFO,104),100)[0]
        except OSError as e: err='%s errno %s'%(type(e).__name__,e.errno)
        t=time.time()
        s.close()
        with lock:
            if err: n['failed'].append({'what':err,'step':step,'ms':round((t-t0)*1000)})
            else: n['ok']+=1
            if tc is not None and tc-t0>=slow: n['slowConnects'].append(round((tc-t0)*1000))
            if err is None and t-t0>=slow: n['slowConnections'].append(round((t-t0)*1000))
            if rx: n['retransmitted']+=1
        time.sleep(0.01)
ts=[threading.Thread(target=run) for _ in range(threads)]
[t.start() for t in ts]; [t.join() for t in ts]
n['rate']=round((n['ok']+len(n['failed']))/(time.time()-t_start))
print(json.dumps(n),flush=True)`;
  const proc = spawn('/usr/sbin/ip', ['netns', 'exec', NS, 'python3', '-c', DIE_WITH_PARENT + py, String(port), stop, String(threads), String(SLOW_MS)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  const ready = new Promise<void>((done, fail) => {
    proc.stdout!.on('data', () => {
      if (out.includes('ready\n')) done();
    });
    proc.once('exit', () => fail(new Error(`the traffic exited before it was ready: ${out}`)));
  });
  const result = new Promise<Traffic>((done, fail) => {
    proc.once('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) done(JSON.parse(line) as Traffic);
      else fail(new Error(`the traffic exited ${code} without its counts: ${out}`));
    });
  });
  ready.catch(() => {});
  result.catch(() => {});
  return { proc, ready, result };
}

/** The namespace's TCP counters: TcpExt (/proc/net/netstat) and Tcp (/proc/net/snmp), by name. */
async function tcpCounters(): Promise<Record<string, number>> {
  const text = await tool('ip', ['netns', 'exec', NS, 'cat', '/proc/net/netstat', '/proc/net/snmp']);
  const lines = text.split('\n');
  const counters: Record<string, number> = {};
  for (let i = 0; i + 1 < lines.length; i++) {
    const [prefix, ...names] = lines[i].split(/\s+/);
    const [valuePrefix, ...values] = lines[i + 1].split(/\s+/);
    if (prefix !== valuePrefix || !['TcpExt:', 'Tcp:'].includes(prefix) || !/^-?\d/.test(values[0] ?? '')) continue;
    names.forEach((name, k) => {
      counters[`${prefix.slice(0, -1)}.${name}`] = Number(values[k]);
    });
  }
  return counters;
}

/** The counters logged; the first is asserted. */
const COUNTERS = ['TcpExt.TCPSynRetrans', 'Tcp.RetransSegs', 'TcpExt.TCPTimeouts', 'TcpExt.TCPLossProbes', 'TcpExt.ListenDrops'];

test.serial(
  `the local plug hold's arming and disarming (${PROTECTS} protects, ${CYCLES} plug/release cycles) drop nothing on lo: loopback traffic to 127.0.0.1 meanwhile sends no SYN twice and loses no connection`,
  async (t) => {
    // Each CLI call takes 8-31 s in the emulated VM beside the clients (a protect alone: ~4 s): 189 s of holds once.
    t.timeout(2 * TEST_TIMEOUT);
    await run('ip', ['netns', 'del', NS]);
    await tool('ip', ['netns', 'add', NS]);
    t.teardown(async () => {
      await cli(['teardown', '--netns', NS]);
      await run('ip', ['netns', 'del', NS]);
    });
    await tool('ip', ['-n', NS, 'link', 'set', 'lo', 'up']);
    const set = await cli(['setup', '--netns', NS]);
    t.is(set.code, 0, set.stderr);

    const stop = join(scratch(t), 'stop');
    const before = await tcpCounters();
    const traffic = loopbackTraffic(PORT, stop);
    t.teardown(() => {
      writeFileSync(stop, '');
      traffic.proc.kill();
    });
    await within(traffic.ready, 'the loopback traffic to start');
    await sleep(1000);

    const began = Date.now();
    const took: number[] = [];
    const timed = async (what: string, args: string[]) => {
      const at = Date.now();
      const r = await within(cli([args[0], '--netns', NS, ...args.slice(1)]), what);
      took.push(Date.now() - at);
      t.is(r.code, 0, `${what}: ${r.stderr}`);
    };
    for (let i = 0; i < PROTECTS; i++) await timed(`protect ${i + 1}`, ['protect', '--max-hold', '5s', '--', 'true']);
    for (let i = 0; i < CYCLES; i++) {
      await timed(`plug ${i + 1}`, ['plug', '--max-hold', '5s']);
      await timed(`release ${i + 1}`, ['release']);
    }
    t.log(`each call took (ms): ${took.join(' ')}`);
    const holdsMs = Date.now() - began;
    // Past a SYN's first retransmission time after the last release: a SYN dropped by it is sent again (and counted)
    // before the clients stop.
    await sleep(1500);
    writeFileSync(stop, '');
    const seen = await within(traffic.result, 'the loopback traffic to finish');
    const after = await tcpCounters();

    const delta = Object.fromEntries(COUNTERS.map((c) => [c, (after[c] ?? Number.NaN) - (before[c] ?? Number.NaN)]));
    t.log(`${PROTECTS} protects and ${CYCLES} plug/release cycles in ${holdsMs} ms; counter deltas: ${JSON.stringify(delta)}`);
    t.log(
      `traffic: ${seen.ok} ok at ${seen.rate}/s, ${seen.failed.length} failed, ${seen.retransmitted} client sockets retransmitted; connects >= ${SLOW_MS} ms: ${JSON.stringify(seen.slowConnects)}; connections >= ${SLOW_MS} ms: ${JSON.stringify(seen.slowConnections)}`,
    );
    t.is(delta['TcpExt.TCPSynRetrans'], 0, 'no SYN or SYN-ACK sent twice in the namespace (TcpExt TCPSynRetrans)');
    t.is(seen.retransmitted, 0, 'no client socket retransmitted (tcpi_total_retrans)');
    t.deepEqual(seen.failed, [], 'no connection failed');
    t.true(seen.ok > 0, 'the traffic ran');
    t.false(seen.capped, 'the traffic ran through every hold (no client stopped at its time cap)');
    t.deepEqual(
      seen.slowConnects.filter((ms) => ms >= RETRANSMIT_MS),
      [],
      `no connect took a SYN's first retransmission time (${RETRANSMIT_MS} ms) or more`,
    );
    t.deepEqual(
      seen.slowConnections.filter((ms) => ms >= RETRANSMIT_MS),
      [],
      `no connection took a SYN's first retransmission time (${RETRANSMIT_MS} ms) or more`,
    );
  },
);
