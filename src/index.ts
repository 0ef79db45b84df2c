/**
 * synplug: zero-downtime proxy reloads over netlink, with no tc, ip, nft or
 * iptables binary.
 *
 * ```ts
 * import { setup, protect } from 'synplug';
 * await setup();                                   // once, at boot (root)
 * const r = await protect({ command: ['systemctl', 'reload', 'haproxy'] });
 * console.log(r.exitCode, r.heldMs, r.packetsReleased);
 * ```
 *
 * The layers are also exported: `synplug/netlink` (the core, links,
 * addresses), `synplug/tc` (qdiscs, classes, filters), `synplug/iptables`
 * (nftables).
 *
 * @module
 */
export * from './guard/index.js';
export { NetlinkConnection, SocketTransport, type Transport } from './netlink/connection.js';
export { SynplugError, UsageError, NetlinkError, NetlinkDecodeError, DumpInterruptedError } from './netlink/errors.js';
