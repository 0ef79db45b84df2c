/**
 * The tcp_metrics cache as `ip -j tcp_metrics show` (/usr/sbin/ip, the
 * oracle) lists it, and a way to put an entry there: one connection to a
 * server on the address, closed (the kernel saves a destination's metrics
 * when a connection to it closes).
 */
import { execFileSync } from 'node:child_process';

const IP = '/usr/sbin/ip';

/** The cached destinations (`dst`) of the current network namespace. */
export function cachedDestinations(): string[] {
  const out = execFileSync(IP, ['-j', 'tcp_metrics', 'show'], { encoding: 'utf8' }).trim();
  return (JSON.parse(out || '[]') as Array<{ dst: string }>).map((e) => e.dst);
}

/** Connect to addr:port and close: the kernel caches metrics for addr. */
export function connectOnce(addr: string, port: number): void {
  execFileSync('python3', ['-c', 'import socket,sys\ns=socket.create_connection((sys.argv[1], int(sys.argv[2])), 10)\ns.close()', addr, String(port)]);
}

/** Make an entry for addr and wait (bounded) until the cache lists it. */
export async function cacheEntryFor(addr: string, port: number): Promise<void> {
  connectOnce(addr, port);
  for (let i = 0; i < 250 && !cachedDestinations().includes(addr); i++) await new Promise((r) => setTimeout(r, 20));
  if (!cachedDestinations().includes(addr)) throw new Error(`no tcp_metrics entry for ${addr} after a connection closed`);
}
