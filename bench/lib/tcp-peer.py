#!/usr/bin/env python3
"""TCP peers for bench/queue-hold.ts (run in a network namespace each).

usage:
  tcp-peer.py server BULK_PORT RR_PORT BURST_PORT
      On every address: BULK_PORT a sink, RR_PORT a 1-byte echo, BURST_PORT
      accepts and closes (listen backlog 65535), BURST_PORT + 1 answers the
      server's CPU time so far (getrusage, user + system, every thread, dead
      ones too; µs precision) as JSON and closes. Prints `ready`.
  tcp-peer.py driver
      Reads one JSON command a line on stdin, answers one JSON line each
      (a burst answers twice: `issued`, then its result):
      {"op":"bulk","host":H,"port":P,"ctrl":C,"secs":S}  -> {"bytes","seconds","cpuClient","cpuServer"}: one stream for S seconds
      {"op":"rr","host":H,"port":P,"ctrl":C,"secs":S}    -> {"connections","seconds","cpuClient","cpuServer"}: connect, 1 byte each way, close
          (cpuClient: this process's CPU seconds during it, cpuServer: the server's, asked on port C)
      {"op":"burst","host":H,"port":P,"n":N,"timeout":T}
          -> {"issued": monotonic ns after the N-th non-blocking connect, "issueSeconds", "processes"}
             (over ceil(N / 10,000) forked processes: the hard RLIMIT_NOFILE here is 20,000)
          -> {"ok","failed","errors","first","half","p99","last"}: monotonic ns (CLOCK_MONOTONIC,
             the clock of Node's process.hrtime) at which the first, the N/2-th, the 99 %-th and the
             last connection was established, as epoll reports it; null when none. Bounded by T seconds.
"""
import json
import os
import resource
import select
import socket
import sys
import threading
import time

_soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (_hard, _hard))
# sockets per burst process: a burst larger than this is split over forked processes
PER_PROCESS = min(10000, _hard - 64)


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def server_cpu(host, ctrl):
    s = socket.create_connection((host, ctrl))
    d = b''
    while True:
        b = s.recv(4096)
        if not b:
            break
        d += b
    s.close()
    return json.loads(d)['cpu']


def with_cpu(fn, host, ctrl, *args):
    s0 = server_cpu(host, ctrl)
    c0 = cpu_seconds()
    r = fn(host, *args)
    r['cpuClient'] = cpu_seconds() - c0
    r['cpuServer'] = server_cpu(host, ctrl) - s0
    return r


def server(bulk, rr, burst):
    def sink(c):
        while c.recv(1 << 20):
            pass
        c.close()

    def echo(c):
        d = c.recv(1)
        if d:
            c.sendall(d)
        c.recv(1)  # the client closes first: TIME_WAIT stays on its side (tcp_tw_reuse)
        c.close()

    def serve(port, fn, backlog):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(('', port))
        s.listen(backlog)
        while True:
            c, _ = s.accept()
            if fn is None:
                c.close()
            else:
                threading.Thread(target=fn, args=(c,), daemon=True).start()

    threading.Thread(target=serve, args=(bulk, sink, 4096), daemon=True).start()
    def cpu(c):
        c.sendall(json.dumps({'cpu': cpu_seconds()}).encode())
        c.close()

    threading.Thread(target=serve, args=(burst, None, 65535), daemon=True).start()
    threading.Thread(target=serve, args=(burst + 1, cpu, 64), daemon=True).start()
    time.sleep(0.1)
    print('ready', flush=True)
    serve(rr, echo, 4096)


def bulk(host, port, secs):
    s = socket.create_connection((host, port))
    buf = b'x' * (1 << 16)
    n = 0
    t0 = time.perf_counter()
    end = t0 + secs
    while time.perf_counter() < end:
        s.sendall(buf)
        n += len(buf)
    el = time.perf_counter() - t0
    s.close()
    return {'bytes': n, 'seconds': el}


def rr(host, port, secs):
    n = 0
    t0 = time.perf_counter()
    end = t0 + secs
    while time.perf_counter() < end:
        s = socket.create_connection((host, port))
        s.sendall(b'x')
        s.recv(1)
        s.close()
        n += 1
    return {'connections': n, 'seconds': time.perf_counter() - t0}


def burst_share(host, port, n, timeout, w):
    """One process's share of a burst: its connects, then its completion times, as JSON lines on fd w."""
    ep = select.epoll()
    socks = {}
    for _ in range(n):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex((host, port))
        socks[s.fileno()] = s
        ep.register(s.fileno(), select.EPOLLOUT | select.EPOLLERR | select.EPOLLHUP)
    os.write(w, (json.dumps({'issued': time.monotonic_ns()}) + '\n').encode())
    done = []
    errors = {}
    pending = n
    deadline = time.monotonic() + timeout
    while pending and time.monotonic() < deadline:
        for fd, _ev in ep.poll(0.2, 4096):
            t = time.monotonic_ns()
            s = socks[fd]
            ep.unregister(fd)
            pending -= 1
            err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err == 0:
                done.append(t)
            else:
                errors[str(err)] = errors.get(str(err), 0) + 1
    for s in socks.values():
        s.close()
    data = (json.dumps({'done': done, 'errors': errors, 'timedOut': pending}) + '\n').encode()
    while data:
        data = data[os.write(w, data):]


def burst(host, port, n, timeout):
    shares = [min(PER_PROCESS, n - i) for i in range(0, n, PER_PROCESS)]
    t0 = time.monotonic_ns()
    kids = []
    for k in shares:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            try:
                burst_share(host, port, k, timeout, w)
            finally:
                os._exit(0)
        os.close(w)
        kids.append((pid, os.fdopen(r)))
    issued = max(json.loads(f.readline())['issued'] for _, f in kids)
    print(json.dumps({'issued': issued, 'issueSeconds': (issued - t0) / 1e9, 'processes': len(kids)}), flush=True)
    done = []
    errors = {}
    timed_out = 0
    for pid, f in kids:
        r = json.loads(f.readline())
        f.close()
        os.waitpid(pid, 0)
        done += r['done']
        timed_out += r['timedOut']
        for e, c in r['errors'].items():
            errors[e] = errors.get(e, 0) + c
    done.sort()
    at = lambda q: done[min(len(done) - 1, max(0, -(-len(done) * q // 100) - 1))] if done else None
    return {
        'ok': len(done),
        'failed': n - len(done),
        'errors': errors,
        'timedOut': timed_out,
        'first': done[0] if done else None,
        'half': at(50),
        'p99': at(99),
        'last': done[-1] if done else None,
    }


def driver():
    for line in sys.stdin:
        c = json.loads(line)
        op = c['op']
        if op == 'bulk':
            r = with_cpu(bulk, c['host'], c['ctrl'], c['port'], c['secs'])
        elif op == 'rr':
            r = with_cpu(rr, c['host'], c['ctrl'], c['port'], c['secs'])
        elif op == 'burst':
            r = burst(c['host'], c['port'], c['n'], c['timeout'])
        else:
            r = {'error': 'unknown op ' + op}
        print(json.dumps(r), flush=True)


if sys.argv[1] == 'server':
    server(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
else:
    driver()
