/**
 * The oracle for a network namespace's cookie: SO_NETNS_COOKIE (71) of a
 * socket that python3 makes inside the namespace (`ip netns exec`).
 */
import { execFileSync } from 'node:child_process';

/** The cookie of namespace `ns` (a name under /run/netns), in decimal. */
export function cookieOf(ns: string): string {
  return execFileSync(
    '/usr/sbin/ip',
    [
      'netns',
      'exec',
      ns,
      '/usr/bin/python3',
      '-c',
      "import socket, struct; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); print(struct.unpack('Q', s.getsockopt(socket.SOL_SOCKET, 71, 8))[0])",
    ],
    { encoding: 'utf8' },
  ).trim();
}
