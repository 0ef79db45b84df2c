# The syscall floor of one qdisc change: Python's own AF_NETLINK socket, a
# pre-encoded RTM_NEWQDISC (pfifo limit, no create flags, NLM_F_ACK), send()
# then recv() of the ack, nothing else. Each round trip is timed with
# time.perf_counter_ns; the ack's error must be 0.
#
# usage: python3 bench/lib/floor.py IFINDEX N LIMIT_A LIMIT_B
# prints one JSON object: {"ns": [N round-trip times], "last": last limit sent}
import json
import socket
import struct
import sys
import time

ifindex, n, la, lb = (int(x) for x in sys.argv[1:5])
RTM_NEWQDISC = 36
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLMSG_ERROR = 2
TC_H_ROOT = 0xFFFFFFFF


def change(limit, seq):
    # struct nlmsghdr (16) + struct tcmsg (20) + TCA_KIND "pfifo\0" (12) + TCA_OPTIONS tc_fifo_qopt (8): 56 bytes
    tcm = struct.pack('<BBHiIII', 0, 0, 0, ifindex, 0x00010000, TC_H_ROOT, 0)
    kind = struct.pack('<HH', 10, 1) + b'pfifo\0' + b'\0\0'
    opts = struct.pack('<HHI', 8, 2, limit)
    body = tcm + kind + opts
    return struct.pack('<IHHII', 16 + len(body), RTM_NEWQDISC, NLM_F_REQUEST | NLM_F_ACK, seq, 0) + body


s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
s.bind((0, 0))
msgs = [bytearray(change(la, 0)), bytearray(change(lb, 0))]
out = []
pc = time.perf_counter_ns
for i in range(n + 300):
    m = msgs[i % 2]
    struct.pack_into('<I', m, 8, i + 1)
    t0 = pc()
    s.send(m)
    r = s.recv(65536)
    t1 = pc()
    typ, seq = struct.unpack_from('<H', r, 4)[0], struct.unpack_from('<I', r, 8)[0]
    err = struct.unpack_from('<i', r, 16)[0]
    if typ != NLMSG_ERROR or seq != i + 1 or err != 0:
        sys.stderr.write('floor: unexpected reply type %d seq %d error %d\n' % (typ, seq, err))
        sys.exit(1)
    if i >= 300:
        out.append(t1 - t0)
print(json.dumps({'ns': out, 'last': la if (n + 299) % 2 == 0 else lb}))
