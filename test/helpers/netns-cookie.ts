/**
 * The oracle for a network namespace's cookie: SO_NETNS_COOKIE (71) of a
 * socket that python3 makes inside the namespace (`ip netns exec`).
 */
import { execFileSync } from 'node:child_process';

const PY = '/usr/bin/python3';
const SCRIPT =
  "import socket, struct; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); print(struct.unpack('Q', s.getsockopt(socket.SOL_SOCKET, 71, 8))[0])";

/** The cookie of namespace `ns` (a name under /run/netns), in decimal. */
export function cookieOf(ns: string): string {
  return execFileSync('/usr/sbin/ip', ['netns', 'exec', ns, PY, '-c', SCRIPT], { encoding: 'utf8' }).trim();
}

/** The cookie of the namespace this test process is in, in decimal. */
export function cookieHere(): string {
  return execFileSync(PY, ['-c', SCRIPT], { encoding: 'utf8' }).trim();
}
