/**
 * synplug's netlink core: messages, attributes, errors, the connection and
 * its transports, the protocol registry, capture reading, and `route/`
 * (links and addresses) and sock_diag.
 *
 * @module
 */
export * from './errors.js';
export * from './attributes.js';
export * from './message.js';
export * from './protocols.js';
export * from './connection.js';
export * from './describe.js';
export * from './pcap.js';
export { parseHexDump, hexDumpDatagrams } from './hexdump.js';
export * from './route/index.js';
export * from './sockdiag.js';
