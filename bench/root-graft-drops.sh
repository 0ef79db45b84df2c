#!/bin/bash
# What a change of lo's root qdisc costs the traffic on lo: 4 client threads connect in a loop to a local
# accept-and-close server (127.0.0.1) for the whole run, while lo's root qdisc is added and deleted ROUNDS times
# (tc qdisc add/del dev lo root pfifo, 50 ms apart), beside a control run with no root change; each run in a fresh
# network namespace. Prints per run the connections made, those that took over 0.5 s (a lost SYN waits 1 s for its
# retransmission), the failures, and the namespace's TcpExt TCPSynRetrans and Tcp RetransSegs.
# The kernel points the device at its noop qdisc while it grafts a root (dev_deactivate), dropping what is sent
# meanwhile: the reason the local plug hold's tree is set up once (docs/design.md). Any root qdisc this kernel has
# shows it (pfifo here; sch_prio is absent on some hosts). Usage: bash bench/root-graft-drops.sh [ROUNDS] (default 40).
set -euo pipefail
ROUNDS=${1:-40}
run() {
  unshare -n bash -c '
    ip link set lo up
    python3 - "$1" <<"PY"
import socket, threading, time, subprocess, sys
rounds = int(sys.argv[1])
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); srv.bind(("127.0.0.1", 0)); srv.listen(512)
port = srv.getsockname()[1]
def accept():
    while True:
        c, _ = srv.accept(); c.close()
threading.Thread(target=accept, daemon=True).start()
stop = [False]; res = {"connections": 0, "over_0.5s": 0, "failed": 0}; lock = threading.Lock()
def client():
    while not stop[0] and res["connections"] < 200000:
        s = socket.socket(); s.settimeout(5); t = time.time()
        try:
            s.connect(("127.0.0.1", port)); s.recv(1); d = time.time() - t
            with lock:
                res["connections"] += 1
                if d > 0.5: res["over_0.5s"] += 1
        except OSError:
            with lock: res["failed"] += 1
        s.close()
ts = [threading.Thread(target=client) for _ in range(4)]; [t.start() for t in ts]
time.sleep(0.5)
for _ in range(rounds):
    subprocess.run(["tc", "qdisc", "add", "dev", "lo", "root", "handle", "1:", "pfifo"], check=True); time.sleep(0.05)
    subprocess.run(["tc", "qdisc", "del", "dev", "lo", "root"], check=True); time.sleep(0.05)
if rounds == 0: time.sleep(4)
time.sleep(2); stop[0] = True; [t.join() for t in ts]
ext = dict(zip(*[l.split()[1:] for l in open("/proc/net/netstat") if l.startswith("TcpExt:")]))
tcp = dict(zip(*[l.split()[1:] for l in open("/proc/net/snmp") if l.startswith("Tcp:")]))
print(res, "TCPSynRetrans", ext["TCPSynRetrans"], "RetransSegs", tcp["RetransSegs"])
PY
  ' _ "$1"
}
echo "no root change:        $(run 0)"
echo "$((ROUNDS * 2)) root changes on lo: $(run "$ROUNDS")"
