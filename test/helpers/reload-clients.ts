/**
 * A server that restarts with a gap, and clients that count what they saw:
 * the proof of the reload report against real clients (test/live and
 * test/kernel guard-report tests).
 *
 * - {@link restartingServer}: a python3 server that accepts and closes; on
 *   SIGUSR1 it accepts what is queued (for at most 0.5 s: clients that keep
 *   connecting must not keep it from restarting), closes its listening
 *   socket, listens again on a new one `gapS` seconds later and touches a
 *   file. `closeQueued`: until the restart it accepts nothing, and closes its
 *   listener with what is queued.
 * - {@link countingClients}: python3 threads connecting in a loop (bounded in
 *   count) until a file exists, counting per connection `ok` (connected, then
 *   the server's EOF), `refused` (ECONNREFUSED: a RST to the SYN), `reset`
 *   (ECONNRESET after the handshake) or `other`, with the wall-clock time
 *   (ms since the epoch) of each failure.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { DIE_WITH_PARENT } from './py.js';

/** What the clients saw. */
export interface ClientCounts {
  ok: number;
  refused: number;
  reset: number;
  other: number;
  /** when each refused or reset connection failed, ms since the epoch */
  failedAt: number[];
  /** each `other`: what it was (the exception's class and errno, or `data` when the server sent bytes), the step (`connect` or `recv`), when it began and ended (ms since the epoch) */
  others: { what: string; step: string; startedAt: number; at: number }[];
}

/** Start the server on addr:port; `back` is touched once it listens again after a restart. */
export function restartingServer(addr: string, port: number, back: string, opts: { closeQueued?: boolean; gapS?: number } = {}): ChildProcess {
  const py = `import socket,select,signal,sys,time,os
addr,port,back,queued,gap=sys.argv[1],int(sys.argv[2]),sys.argv[3],sys.argv[4]=='1',float(sys.argv[5])
def listen():
    s=socket.socket(socket.AF_INET6 if ':' in addr else socket.AF_INET); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((addr,port)); s.listen(128); s.setblocking(False); return s
restart=[False]
signal.signal(signal.SIGUSR1, lambda *a: restart.__setitem__(0, True))
s=listen(); print('listening', flush=True)
while True:
    if restart[0]:
        restart[0]=False
        t0=time.time()
        while not queued and time.time()-t0<0.5:
            try: c,_=s.accept(); c.close()
            except BlockingIOError: break
        s.close(); time.sleep(gap); s=listen(); queued=False; open(back,'w').close()
    try: r,_,_=select.select([s],[],[],0.01)
    except InterruptedError: continue
    if r and not queued:
        try: c,_=s.accept(); c.close()
        except BlockingIOError: pass`;
  return spawn('python3', ['-c', DIE_WITH_PARENT + py, addr, String(port), back, opts.closeQueued ? '1' : '0', String(opts.gapS ?? 1)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

/** Resolves once the server printed `listening`; rejects if it exits first. */
export function serverListening(p: ChildProcess): Promise<void> {
  return new Promise((done, fail) => {
    p.stdout!.setEncoding('utf8').on('data', (d: string) => {
      if (d.includes('listening')) done();
    });
    p.once('exit', () => fail(new Error('the server exited')));
  });
}

/** Start `threads` clients (default 4) connecting to addr:port every 10 ms, at most 2000 times each, until `stop` exists. */
export function countingClients(addr: string, port: number, stop: string, threads = 4): { proc: ChildProcess; result: Promise<ClientCounts> } {
  const py = `import socket,sys,threading,time,os,json
addr,port,stop,threads=sys.argv[1],int(sys.argv[2]),sys.argv[3],int(sys.argv[4])
n={'ok':0,'refused':0,'reset':0,'other':0,'failedAt':[],'others':[]}
lock=threading.Lock()
def run():
    for _ in range(2000):
        if os.path.exists(stop): return
        s=socket.socket(socket.AF_INET6 if ':' in addr else socket.AF_INET); s.settimeout(20); k='ok'; why=None; step='connect'; t0=time.time()*1000
        try:
            s.connect((addr,port)); step='recv'
            if s.recv(1)!=b'': k='other'; why='data'
        except ConnectionRefusedError: k='refused'
        except ConnectionResetError: k='reset'
        except OSError as e: k='other'; why='%s errno %s'%(type(e).__name__,e.errno)
        t=time.time()*1000
        s.close()
        with lock:
            n[k]+=1
            if k in ('refused','reset'): n['failedAt'].append(t)
            if why: n['others'].append({'what':why,'step':step,'startedAt':t0,'at':t})
        time.sleep(0.01)
ts=[threading.Thread(target=run) for _ in range(threads)]
[t.start() for t in ts]; [t.join() for t in ts]
print(json.dumps(n), flush=True)`;
  const proc = spawn('python3', ['-c', DIE_WITH_PARENT + py, addr, String(port), stop, String(threads)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  return { proc, result: new Promise((done) => proc.once('exit', () => done(JSON.parse(out.trim() || '{}') as ClientCounts))) };
}

/** A shell command that restarts the server (SIGUSR1; none without `pid`: someone else signals it) and waits (bounded, 20 s) for it to be back. */
export function restartCommand(pid: number | undefined, back: string): string[] {
  const kill = pid === undefined ? '' : `kill -USR1 ${pid}; `;
  return ['sh', '-c', `${kill}i=0; while [ ! -e ${back} ] && [ $i -lt 1000 ]; do sleep 0.02; i=$((i+1)); done`];
}
