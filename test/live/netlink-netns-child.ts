/**
 * Child process for the live netlink-netns and netlink-socket-errors tests
 * (not a test file): runs one scenario and prints one JSON line, so that a
 * scenario can run as another user (setpriv) or with another environment.
 *
 * usage: node --import=tsx test/live/netlink-netns-child.ts SCENARIO [ARG]
 * - open-netns NS: NetlinkConnection.open(NETLINK_ROUTE, { netns: NS }), list its links
 * - open-default: NetlinkConnection.open(NETLINK_ROUTE) (SYNPLUG_NETNS applies), list links
 * - open-route: open NETLINK_ROUTE, then add a pfifo root qdisc on ARG
 */
import { NetlinkConnection } from '../../src/netlink/connection.js';
import { NETLINK_ROUTE } from '../../src/netlink/message.js';
import { listLinks } from '../../src/netlink/route/link.js';
import { addQdisc } from '../../src/tc/index.js';

const [scenario, arg] = process.argv.slice(2);
const out = (o: unknown) => process.stdout.write(JSON.stringify(o) + '\n');
try {
  if (scenario === 'open-netns' || scenario === 'open-default') {
    const conn = NetlinkConnection.open(NETLINK_ROUTE, scenario === 'open-netns' ? { netns: arg } : {});
    const links = await listLinks(conn);
    conn.close();
    out({ ok: true, links: links.map((l) => l.ifname) });
  } else if (scenario === 'open-route') {
    const conn = NetlinkConnection.open(NETLINK_ROUTE);
    try {
      await addQdisc(conn, { dev: arg, kind: 'pfifo', parent: 'root', handle: '7:' });
      out({ ok: true });
    } finally {
      conn.close();
    }
  } else {
    out({ ok: false, error: `unknown scenario ${scenario}` });
  }
} catch (e) {
  const err = e as { name?: string; message?: string; category?: string; code?: string; errno?: number; syscall?: string };
  out({ ok: false, name: err.name, message: err.message, category: err.category, code: err.code, errno: err.errno, syscall: err.syscall });
}
