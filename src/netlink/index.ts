/**
 * synplug's netlink core: messages, attributes, errors, the connection and
 * its socket transport (koffi), network namespaces, the protocol registry, capture reading, and `route/`
 * (links and addresses) and sock_diag.
 *
 * The test doubles (FakeTransport, nfnetlink batch answers) are in
 * `synplug/netlink/testing`.
 *
 * @module
 */
export * from './errors.js';
export * from './attributes.js';
export * from './message.js';
export * from './protocols.js';
export {
  NetlinkConnection,
  NetlinkTimeoutError,
  SocketTransport,
  DUMP_READ_BUFFER,
  protocolLabel,
  setDefaultWarningHandler,
  type Transport,
  type ConnectionOptions,
  type RequestInit,
  type ExchangeResult,
  type NetlinkWarning,
  type SocketOptions,
} from './connection.js';
export * from './libc.js';
export {
  withNetns,
  checkNetns,
  checkedNetns,
  netnsSpecOf,
  runInNetns,
  setDefaultNetns,
  defaultNetns,
  type NetnsSpec,
  netnsPath,
  NETNS_RUN_DIR,
  NETNS_ENV,
} from './netns.js';
export * from './describe.js';
export * from './pcap.js';
export { parseHexDump, hexDumpDatagrams } from './hexdump.js';
export * from './route/index.js';
export * from './sockdiag.js';
export {
  tryParseIp,
  parseIp,
  parseIpPrefix,
  formatIp,
  formatIpPrefix,
  canonicalIp,
  isIpv4Mapped,
  ipv4Mapped,
  unmapIpv4,
  prefixMask,
  type ParsedPrefix,
} from './ipaddr.js';
export * from './nfqueue.js';
export * from './genl.js';
export * from './tcp-metrics.js';
