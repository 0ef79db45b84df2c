# Test oracle, independent of synplug: the addresses of this network namespace with
# their IFA_PROTO (rtnetlink RTM_GETADDR dump through a raw socket), as JSON.
import socket, struct, json
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
s.bind((0, 0))
# nlmsghdr + ifaddrmsg: RTM_GETADDR (22), NLM_F_REQUEST|NLM_F_DUMP
s.send(struct.pack('=IHHII', 16 + 8, 22, 0x301, 1, 0) + struct.pack('=BBBBI', 0, 0, 0, 0, 0))
out, done = [], False
while not done:
    data = s.recv(65536)
    off = 0
    while off < len(data):
        ln, typ, fl, seq, pid = struct.unpack_from('=IHHII', data, off)
        if typ == 3:
            done = True
            break
        if typ == 20:
            fam, plen, flags, scope, idx = struct.unpack_from('=BBBBI', data, off + 16)
            a, rec = off + 24, {'index': idx, 'prefixlen': plen}
            while a < off + ln:
                alen, atyp = struct.unpack_from('=HH', data, a)
                val = data[a + 4:a + alen]
                if atyp == 2:
                    rec['local'] = socket.inet_ntop(socket.AF_INET if fam == 2 else socket.AF_INET6, val)
                if atyp == 11:
                    rec['proto'] = val[0]
                a += (alen + 3) & ~3
            out.append(rec)
        off += (ln + 3) & ~3
print(json.dumps(out))
