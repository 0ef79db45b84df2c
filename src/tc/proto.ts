/**
 * Link-layer protocol names as tc prints and parses them (iproute2's
 * `ll_proto_n2a` table), for a filter's `protocol`. Values are ethertypes
 * from linux/if_ether.h, host order.
 *
 * @module
 */
import { UsageError } from '../netlink/errors.js';

const NAMES: ReadonlyArray<[number, string]> = [
  [0x0060, 'loop'],
  [0x0200, 'pup'],
  [0x0800, 'ip'],
  [0x0805, 'x25'],
  [0x0806, 'arp'],
  [0x8035, 'rarp'],
  [0x809b, 'atalk'],
  [0x80f3, 'aarp'],
  [0x8137, 'ipx'],
  [0x86dd, 'ipv6'],
  [0x8863, 'ppp_disc'],
  [0x8864, 'ppp_ses'],
  [0x0001, '802_3'],
  [0x0002, 'ax25'],
  [0x0003, 'all'],
  [0x0004, '802_2'],
  [0x0005, 'snap'],
  [0x000c, 'can'],
  [0x0016, 'control'],
  [0x88ca, 'tipc'],
  [0x8892, 'profinet'],
  [0x88a2, 'aoe'],
  [0x88a4, 'ethercat'],
  [0x8100, '802.1Q'],
  [0x88a8, '802.1ad'],
  [0x8847, 'mpls_uc'],
  [0x8848, 'mpls_mc'],
  [0x6558, 'teb'],
  [0x88cc, 'LLDP'],
];
const BY_ID = new Map<number, string>();
for (const [id, name] of NAMES) if (!BY_ID.has(id)) BY_ID.set(id, name);
const BY_NAME = new Map<string, number>(NAMES.map(([id, name]) => [name.toLowerCase(), id]));
BY_NAME.set('ipv4', 0x0800);

/**
 * Name of an ethertype as tc prints it: `"ip"`, `"ipv6"`, `"all"`, or
 * `"[<decimal>]"` for one tc has no name for.
 * @param proto ethertype, host order
 */
export function protocolName(proto: number): string {
  return BY_ID.get(proto) ?? `[${proto}]`;
}

/**
 * Parse a protocol as tc does: a name (`ip`, `ipv6`, `all`, `arp`,
 * `802.1Q`...) or a number (decimal or 0x hex).
 * @returns ethertype, host order
 * @throws {UsageError} unknown name or a number over 0xffff
 */
export function parseProtocol(text: string | number): number {
  if (typeof text === 'number') {
    if (!Number.isInteger(text) || text < 0 || text > 0xffff) throw new UsageError(`invalid protocol ${text}: expected an ethertype 0..0xffff`);
    return text;
  }
  const t = text.trim();
  const named = BY_NAME.get(t.toLowerCase());
  if (named !== undefined) return named;
  if (/^(0x[0-9a-f]+|[0-9]+)$/i.test(t)) {
    const v = Number(t);
    if (v <= 0xffff) return v;
  }
  throw new UsageError(`invalid protocol ${JSON.stringify(text)}: expected a name such as ip, ipv6, all, arp, 802.1Q, or an ethertype number`);
}
