/**
 * The kernel's per-destination TCP metrics cache (the `tcp_metrics` generic
 * netlink family, net/ipv4/tcp_metrics.c): what `ip tcp_metrics` shows and
 * deletes. A held SYN's connection measures the hold as its RTT, and the
 * kernel caches it per destination: later connections to that address then
 * start with that RTT (a long initial RTO) until the entry is deleted.
 *
 * ```c
 * // linux/tcp_metrics.h (TCP_METRICS_GENL_NAME "tcp_metrics", TCP_METRICS_GENL_VERSION 1)
 * TCP_METRICS_CMD_GET 1 (dump: every entry), TCP_METRICS_CMD_DEL 2 (the entries of one address; none given: all)
 * TCP_METRICS_ATTR_ADDR_IPV4 1   // __be32, the destination
 * TCP_METRICS_ATTR_ADDR_IPV6 2   // 16 bytes
 * TCP_METRICS_ATTR_AGE 3         // u64, ms since the entry was updated
 * TCP_METRICS_ATTR_VALS 6        // nested: TCP_METRIC_* + 1 -> u32
 * TCP_METRICS_ATTR_SADDR_IPV4 11, TCP_METRICS_ATTR_SADDR_IPV6 12   // the source
 * enum tcp_metric_index { TCP_METRIC_RTT (ms << 3), TCP_METRIC_RTTVAR (ms << 2), TCP_METRIC_SSTHRESH,
 *   TCP_METRIC_CWND, TCP_METRIC_REORDERING, TCP_METRIC_RTT_US (us << 3), TCP_METRIC_RTTVAR_US (us << 2) };
 * ```
 *
 * @module
 */
import { bin } from './attributes.js';
import { NetlinkDecodeError, NetlinkError, UsageError } from './errors.js';
import { NLM_F_DUMP, type NetlinkMessage } from './message.js';
import { decodeGenl, encodeGenl, openGenl, registerGenlFamily, resolveGenlFamily, type GenlMessage } from './genl.js';
import { formatIp, parseIp } from './ipaddr.js';
import type { NetlinkConnection } from './connection.js';

/** TCP_METRICS_GENL_NAME */
export const TCP_METRICS_GENL_NAME = 'tcp_metrics';
/** TCP_METRICS_GENL_VERSION */
export const TCP_METRICS_GENL_VERSION = 1;
export const TCP_METRICS_CMD_GET = 1;
export const TCP_METRICS_CMD_DEL = 2;
export const TCP_METRICS_ATTR_ADDR_IPV4 = 1;
export const TCP_METRICS_ATTR_ADDR_IPV6 = 2;
export const TCP_METRICS_ATTR_AGE = 3;
export const TCP_METRICS_ATTR_TW_TSVAL = 4;
export const TCP_METRICS_ATTR_TW_TS_STAMP = 5;
export const TCP_METRICS_ATTR_VALS = 6;
export const TCP_METRICS_ATTR_FOPEN_MSS = 7;
export const TCP_METRICS_ATTR_FOPEN_SYN_DROPS = 8;
export const TCP_METRICS_ATTR_FOPEN_SYN_DROP_TS = 9;
export const TCP_METRICS_ATTR_FOPEN_COOKIE = 10;
export const TCP_METRICS_ATTR_SADDR_IPV4 = 11;
export const TCP_METRICS_ATTR_SADDR_IPV6 = 12;
/** enum tcp_metric_index (the attribute inside TCP_METRICS_ATTR_VALS is the index + 1) */
export const TCP_METRIC_RTT = 0;
export const TCP_METRIC_RTTVAR = 1;
export const TCP_METRIC_SSTHRESH = 2;
export const TCP_METRIC_CWND = 3;
export const TCP_METRIC_REORDERING = 4;
export const TCP_METRIC_RTT_US = 5;
export const TCP_METRIC_RTTVAR_US = 6;

/** One cached destination, in `ip -j tcp_metrics show`'s words. */
export interface TcpMetricsEntry {
  /** the destination address */
  dst: string;
  /** seconds since the entry was last updated (ms precision) */
  age?: number;
  /** the cached smoothed RTT, seconds (µs precision) */
  rtt?: number;
  /** the cached RTT variance, seconds (µs precision) */
  rttvar?: number;
  /** the slow-start threshold, segments */
  ssthresh?: number;
  /** the congestion window, segments */
  cwnd?: number;
  /** the reordering metric */
  reordering?: number;
  /** TCP Fast Open: the MSS */
  fo_mss?: number;
  /** TCP Fast Open: SYNs with data dropped */
  fo_syn_drops?: number;
  /** the source address the entry is for */
  source?: string;
}

/** The address attribute of a destination or source: IPv4 4 bytes, IPv6 16. */
function addrOf(g: GenlMessage, v4: number, v6: number): string | undefined {
  const a = g.attrs.get(v4) ?? g.attrs.get(v6);
  if (!a) return undefined;
  const want = a.type === v4 ? 4 : 16;
  if (a.data.length < want) throw new NetlinkDecodeError(`tcp_metrics address attribute type ${a.type} has ${a.data.length} bytes, needs ${want}`, a.offset);
  return formatIp(a.data.subarray(0, want));
}

/**
 * Decode one tcp_metrics message (a GET reply, or a DEL/GET request) to
 * `ip -j tcp_metrics show`'s words: RTT and RTT variance in seconds, from
 * the microsecond metrics where the kernel sends them (else the millisecond
 * ones), shifted as the kernel stores them (RTT << 3, variance << 2).
 * @throws {NetlinkDecodeError} a short header, address or value
 */
export function decodeTcpMetrics(g: GenlMessage): TcpMetricsEntry {
  const dst = addrOf(g, TCP_METRICS_ATTR_ADDR_IPV4, TCP_METRICS_ATTR_ADDR_IPV6);
  const e: TcpMetricsEntry = { dst: dst ?? '' };
  const age = g.attrs.u64(TCP_METRICS_ATTR_AGE);
  if (age !== undefined) e.age = Number(age) / 1000;
  const vals = g.attrs.nested(TCP_METRICS_ATTR_VALS);
  if (vals) {
    const v = (i: number): number | undefined => vals.u32(i + 1);
    const rttUs = v(TCP_METRIC_RTT_US) ?? scale(v(TCP_METRIC_RTT), 1000);
    const rttvarUs = v(TCP_METRIC_RTTVAR_US) ?? scale(v(TCP_METRIC_RTTVAR), 1000);
    if (rttUs !== undefined) e.rtt = Math.floor(rttUs / 8) / 1e6;
    if (rttvarUs !== undefined) e.rttvar = Math.floor(rttvarUs / 4) / 1e6;
    const ssthresh = v(TCP_METRIC_SSTHRESH);
    if (ssthresh !== undefined) e.ssthresh = ssthresh;
    const cwnd = v(TCP_METRIC_CWND);
    if (cwnd !== undefined) e.cwnd = cwnd;
    const reordering = v(TCP_METRIC_REORDERING);
    if (reordering !== undefined) e.reordering = reordering;
  }
  const foMss = g.attrs.u16(TCP_METRICS_ATTR_FOPEN_MSS);
  if (foMss !== undefined) e.fo_mss = foMss;
  const foDrops = g.attrs.u16(TCP_METRICS_ATTR_FOPEN_SYN_DROPS);
  if (foDrops !== undefined) e.fo_syn_drops = foDrops;
  const source = addrOf(g, TCP_METRICS_ATTR_SADDR_IPV4, TCP_METRICS_ATTR_SADDR_IPV6);
  if (source !== undefined) e.source = source;
  return e;
}

function scale(v: number | undefined, k: number): number | undefined {
  return v === undefined ? undefined : v * k;
}

registerGenlFamily(TCP_METRICS_GENL_NAME, (g) => {
  const cmd = g.cmd === TCP_METRICS_CMD_GET ? 'get' : g.cmd === TCP_METRICS_CMD_DEL ? 'del' : g.cmd;
  const e = decodeTcpMetrics(g);
  return { cmd, ...e, ...(e.dst === '' && { dst: undefined }) };
});

/**
 * TCP_METRICS_CMD_DEL's payload for one destination address.
 * @throws {UsageError} not an IP address
 */
export function encodeTcpMetricsDelete(addr: string): Buffer[] {
  const ip = parseIp(addr);
  return encodeGenl(TCP_METRICS_CMD_DEL, TCP_METRICS_GENL_VERSION, [bin(ip.version === 4 ? TCP_METRICS_ATTR_ADDR_IPV4 : TCP_METRICS_ATTR_ADDR_IPV6, ip.bytes)]);
}

/** TCP_METRICS_CMD_GET's payload (a dump of every entry). */
export function encodeTcpMetricsGet(): Buffer[] {
  return encodeGenl(TCP_METRICS_CMD_GET, TCP_METRICS_GENL_VERSION);
}

/** Options of {@link listTcpMetrics} and {@link deleteTcpMetrics}. */
export interface TcpMetricsOptions {
  /** the network namespace (as NetlinkConnection.open's option); default: the current one */
  netns?: string;
}

async function withTcpMetrics<T>(options: TcpMetricsOptions, f: (conn: NetlinkConnection, id: number) => Promise<T>): Promise<T> {
  const conn = openGenl(options);
  try {
    const fam = await resolveGenlFamily(conn, TCP_METRICS_GENL_NAME);
    if (!fam) {
      throw new NetlinkError({
        errno: 2,
        requestType: 'CTRL_CMD_GETFAMILY',
        message: "this kernel has no 'tcp_metrics' generic netlink family (a kernel without TCP metrics caching)",
      });
    }
    return await f(conn, fam.id);
  } finally {
    conn.close();
  }
}

/**
 * Every cached destination (`ip tcp_metrics show`).
 * @throws {NetlinkError} the kernel has no tcp_metrics family, or refused the dump
 * @throws {SocketError} the NETLINK_GENERIC socket cannot be opened
 * @throws {UsageError} `netns` does not exist
 */
export async function listTcpMetrics(options: TcpMetricsOptions = {}): Promise<TcpMetricsEntry[]> {
  return withTcpMetrics(options, async (conn, id) => {
    const msgs: NetlinkMessage[] = await conn.dumpAll({ type: id, flags: NLM_F_DUMP, payload: encodeTcpMetricsGet() });
    return msgs.filter((m) => m.type === id).map((m) => decodeTcpMetrics(decodeGenl(m)));
  });
}

/**
 * Delete the cached metrics of each destination address (`ip tcp_metrics
 * delete ADDR`: every entry for that destination, whatever its source). An
 * address with no entry is fine. Never sends a DEL without an address (which
 * the kernel reads as "flush everything").
 * @param addrs IPv4 or IPv6 addresses
 * @returns how many of the addresses had entries that were deleted
 * @throws {UsageError} an address is not an IP address (checked before anything is sent)
 * @throws {NetlinkError} the kernel has no tcp_metrics family, or refused (EPERM: needs CAP_NET_ADMIN)
 */
export async function deleteTcpMetrics(addrs: readonly string[], options: TcpMetricsOptions = {}): Promise<number> {
  if (!Array.isArray(addrs)) throw new UsageError('deleteTcpMetrics needs an array of addresses');
  const payloads = addrs.map(encodeTcpMetricsDelete);
  if (payloads.length === 0) return 0;
  return withTcpMetrics(options, async (conn, id) => {
    let deleted = 0;
    for (let i = 0; i < payloads.length; i++) {
      try {
        await conn.request({ type: id, payload: payloads[i] });
        deleted++;
      } catch (e) {
        if (e instanceof NetlinkError && e.code === 'ESRCH') continue; // no entry for it
        if (e instanceof NetlinkError) throw e.withMessage(`cannot delete the tcp_metrics entries of ${addrs[i]}: ${e.code}`);
        throw e;
      }
    }
    return deleted;
  });
}
