/**
 * Live queue-hold tests: the reference tools' NFQUEUE rule, and the kernel's
 * own list of bound queues.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * iptables-nft's and ip6tables-nft's `-t raw -A OUTPUT -p tcp --dport PORT
 * --syn -j NFQUEUE --queue-num QUEUE --queue-bypass`: the xt NFQUEUE target
 * (rev 3) through nft_compat, on local SYNs to `port`, both families.
 */
export function iptablesQueueRule(port: number, queue: number): void {
  for (const tool of ['/usr/sbin/iptables-nft', '/usr/sbin/ip6tables-nft']) {
    execFileSync(tool, [
      '-t',
      'raw',
      '-A',
      'OUTPUT',
      '-p',
      'tcp',
      '--dport',
      String(port),
      '--syn',
      '-j',
      'NFQUEUE',
      '--queue-num',
      String(queue),
      '--queue-bypass',
    ]);
  }
}

/** The kernel's line for a queue in /proc/net/netfilter/nfnetlink_queue: port id, queued now, dropped (queue full). */
export function procQueue(queue: number): { portId: number; queued: number; queueDropped: number } | undefined {
  for (const line of readFileSync('/proc/net/netfilter/nfnetlink_queue', 'utf8').split('\n')) {
    const f = line.trim().split(/\s+/).map(Number);
    if (f[0] === queue && f.length >= 8) return { portId: f[1], queued: f[2], queueDropped: f[5] };
  }
  return undefined;
}
