/**
 * The inbound plug hold's always-present part on this machine's kernel, for
 * the data-path benchmarks (bench/inbound-cost.ts, bench/queue-hold.ts):
 * clsact on the server's device, u32SynMatch's IPv4 SYN filters for each
 * port, a mirred egress redirect to an IFB. The IFB's root is the caller's
 * (a pfifo here: this kernel has no sch_plug).
 *
 * @module
 */
import type { NetlinkConnection } from '../../src/netlink/connection.js';
import { addFilter, addQdisc, deleteQdisc } from '../../src/tc/index.js';
import { u32SynMatch } from '../../src/tc/filters/u32.js';
import { resolveActionDevices } from '../../src/tc/actions/list.js';

/**
 * Add clsact on `dev` and, for each port (prefs 10, 11...), the filters that
 * redirect IPv4 SYNs to `addr`:`port` to `ifb`.
 */
export async function addInboundFilter(conn: NetlinkConnection, dev: string, ifb: string, addr: string, ports: readonly number[]): Promise<void> {
  await addQdisc(conn, { dev, kind: 'clsact' });
  let pref = 10;
  for (const port of ports) {
    const m = u32SynMatch({
      family: 'inet',
      dport: port,
      dst: addr,
      htid: pref,
      actions: [{ kind: 'mirred', direction: 'egress', mirred_action: 'redirect', to_dev: ifb }],
    });
    for (const f of m.filters) {
      const options = await resolveActionDevices(conn, f.options);
      await addFilter(conn, {
        dev,
        parent: 'ingress',
        protocol: m.protocol,
        pref,
        kind: 'u32',
        ...(f.handle ? { handle: f.handle } : {}),
        options: options as Record<string, unknown>,
      });
    }
    pref++;
  }
}

/** Remove what {@link addInboundFilter} added (the clsact qdisc and its filters). */
export function removeInboundFilter(conn: NetlinkConnection, dev: string): Promise<void> {
  return deleteQdisc(conn, { dev, kind: 'clsact' });
}
