#!/usr/bin/env python3
"""The floor of protect's gate, for bench/protect-overhead.ts: the time of one
os.write of a newline to a pipe on which a gate shell waits (the same
`read -r _ <&3 && exec "$@"` script src/guard/command.ts starts), timed in
Python with perf_counter_ns, after one other syscall (as in protect, where the
plug's netlink round trip comes just before). That write is what the kernel
charges to wake the shell; no program can open such a gate for less.

usage: gate-floor.py RUNS   -> prints the microseconds of each write, JSON
"""
import json
import os
import subprocess
import sys
import time

runs = int(sys.argv[1]) if len(sys.argv) > 1 else 30
script = 'read -r _ <&3 && exec "$@" 3<&-; exit 125'
us = []
for _ in range(runs):
    r, w = os.pipe()
    p = subprocess.Popen(['/bin/sh', '-c', script, 'synplug-gate', '/bin/true'], pass_fds=(r,), preexec_fn=lambda r=r: os.dup2(r, 3))
    os.close(r)
    time.sleep(0.02)  # the shell is waiting in read(2)
    os.stat('/')
    t0 = time.perf_counter_ns()
    os.write(w, b'\n')
    t1 = time.perf_counter_ns()
    os.close(w)
    if p.wait() != 0:
        sys.exit('gate-floor: the gated /bin/true did not run')
    us.append((t1 - t0) / 1000)
print(json.dumps(us))
