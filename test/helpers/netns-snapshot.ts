/**
 * A named network namespace as the reference tools print it, for tests that
 * assert a command left it byte-identical: `ip -d -j link`, `ip -j addr`,
 * `tc -j qdisc`, `tc -j filter` (egress and ingress) of every link,
 * `nft -j list ruleset` and every `net.*` sysctl.
 */
import { execFileSync } from 'node:child_process';

const IP = '/usr/sbin/ip';
const TC = '/usr/sbin/tc';

/** What {@link netnsSnapshot} returns: each tool's output as text. */
export interface NetnsSnapshot {
  links: string;
  addrs: string;
  qdiscs: string;
  /** per link: its name, its filters, its ingress filters */
  filters: string[][];
  ruleset: string;
  sysctls: string;
}

/**
 * Everything of the namespace a hold could change.
 * @param ns a name under /run/netns
 */
export function netnsSnapshot(ns: string): NetnsSnapshot {
  const inNs = (cmd: string, args: string[]): string => execFileSync(IP, ['netns', 'exec', ns, cmd, ...args], { encoding: 'utf8' });
  const links = inNs(IP, ['-d', '-j', 'link', 'show']);
  const names = (JSON.parse(links) as Array<{ ifname: string }>).map((l) => l.ifname);
  return {
    links,
    addrs: inNs(IP, ['-j', 'addr', 'show']),
    qdiscs: inNs(TC, ['-j', 'qdisc', 'show']),
    filters: names.map((dev) => [dev, inNs(TC, ['-j', 'filter', 'show', 'dev', dev]), inNs(TC, ['-j', 'filter', 'show', 'dev', dev, 'ingress'])]),
    ruleset: inNs('/usr/sbin/nft', ['-j', 'list', 'ruleset']),
    sysctls: inNs('/usr/sbin/sysctl', ['-a', '-r', '^net\\.']),
  };
}
