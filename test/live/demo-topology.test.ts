/**
 * Live (host kernel: veth exists): src/demo/topology.ts, the inbound
 * topology of `synplug demo --inbound` and bench/reload's inbound method.
 * `ip` (in this namespace, and through nsenter in the topology's) is the
 * oracle: the veth pair with its addresses on both sides, a process started
 * in the namespace sees the client end and reaches a server here over the
 * pair, and remove() leaves no link behind.
 */
import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { createInboundTopology, probeVeth } from '../../src/demo/topology.js';
import { NetlinkConnection } from '../../src/netlink/connection.js';
import { NETLINK_ROUTE } from '../../src/netlink/message.js';

const IP = '/usr/sbin/ip';
const NSENTER = '/usr/bin/nsenter';

interface IpLink {
  ifname: string;
  operstate?: string;
  flags?: string[];
  addr_info?: Array<{ family: string; local: string; prefixlen: number }>;
}

function ipAddr(netns?: string): IpLink[] {
  const out = netns
    ? execFileSync(NSENTER, [`--net=${netns}`, IP, '-j', 'addr', 'show'], { encoding: 'utf8' })
    : execFileSync(IP, ['-j', 'addr', 'show'], { encoding: 'utf8' });
  return JSON.parse(out) as IpLink[];
}

test.serial('a namespace joined by a veth pair, addresses on both ends, a process in it reaches a server here; remove() leaves nothing', async (t) => {
  const linksBefore = ipAddr().map((l) => l.ifname);
  const topo = await createInboundTopology({ prefix: 'sptl', ipv6: true });
  let removed = false;
  try {
    t.regex(topo.serverAddr, /^169\.254\.\d+\.1$/);
    t.is(topo.clientAddr, topo.serverAddr.replace(/\.1$/, '.2'));
    const here = ipAddr().find((l) => l.ifname === topo.serverDev);
    t.truthy(here, `${topo.serverDev} is in this namespace`);
    t.true(here?.flags?.includes('UP'));
    t.deepEqual(
      here?.addr_info?.filter((a) => a.family === 'inet').map((a) => `${a.local}/${a.prefixlen}`),
      [`${topo.serverAddr}/30`],
    );
    t.true(here?.addr_info?.some((a) => a.local === topo.serverAddr6 && a.prefixlen === 64));
    t.false(
      ipAddr().some((l) => l.ifname === topo.clientDev),
      'the client end is not here',
    );
    const there = ipAddr(topo.netnsPath);
    t.deepEqual(there.map((l) => l.ifname).sort(), ['lo', topo.clientDev].sort(), 'the namespace holds lo and the client end only');
    const c = there.find((l) => l.ifname === topo.clientDev);
    t.true(c?.flags?.includes('UP'));
    t.true(c?.addr_info?.some((a) => a.local === topo.clientAddr && a.prefixlen === 30));
    t.true(c?.addr_info?.some((a) => a.local === topo.clientAddr6 && a.prefixlen === 64));
    t.true(there.find((l) => l.ifname === 'lo')?.flags?.includes('UP'));

    // A process spawned in the namespace: ip sees the namespace's links, and a TCP connection reaches a server here.
    const child = topo.spawn(IP, ['-j', 'link', 'show'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    await new Promise((r) => child.once('close', r));
    t.deepEqual((JSON.parse(out) as IpLink[]).map((l) => l.ifname).sort(), ['lo', topo.clientDev].sort());

    const server = createServer((s) => s.end(`hello ${s.remoteAddress}\n`));
    await new Promise<void>((r) => server.listen(0, topo.serverAddr, r));
    const port = (server.address() as { port: number }).port;
    try {
      for (const [host, from] of [
        [topo.serverAddr, topo.clientAddr],
        [topo.serverAddr6!, topo.clientAddr6!],
      ]) {
        if (host.includes(':')) {
          server.close();
          await new Promise<void>((r) => server.listen(port, host, r));
        }
        const script = `const s=require('net').connect({host:${JSON.stringify(host)},port:${port}});let d='';s.on('data',x=>d+=x);s.on('end',()=>{process.stdout.write(d)});s.on('error',e=>{process.stdout.write('error '+e.code)})`;
        const cl = topo.spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
        let got = '';
        cl.stdout?.on('data', (d: Buffer) => (got += d.toString()));
        await new Promise((r) => cl.once('close', r));
        t.is(got.trim().replace('::ffff:', ''), `hello ${from}`, `over the veth pair from ${from}`);
      }
    } finally {
      server.close();
    }
    const r = await topo.remove();
    removed = true;
    t.true(r.some((x) => x.includes(topo.serverDev)));
    t.deepEqual(await topo.remove(), [], 'a second remove does nothing');
    t.deepEqual(
      ipAddr().map((l) => l.ifname),
      linksBefore,
      'no link left here',
    );
    t.not(spawnSync(IP, ['link', 'show', topo.serverDev]).status, 0);
  } finally {
    if (!removed) await topo.remove();
  }
});

test.serial('two topologies at once get different subnets and names', async (t) => {
  const a = await createInboundTopology({ prefix: 'sptl' });
  try {
    const b = await createInboundTopology({ prefix: 'sptl' });
    try {
      t.not(a.serverDev, b.serverDev);
      t.not(a.serverAddr, b.serverAddr);
    } finally {
      await b.remove();
    }
  } finally {
    await a.remove();
  }
});

test.serial('probeVeth on this kernel (veth exists): yes, and no link was created', async (t) => {
  const before = ipAddr().map((l) => l.ifname);
  const conn = NetlinkConnection.open(NETLINK_ROUTE);
  try {
    t.is(await probeVeth(conn), 'yes');
  } finally {
    conn.close();
  }
  t.deepEqual(
    ipAddr().map((l) => l.ifname),
    before,
  );
});
