/**
 * Live (this machine's kernel): why the inbound hold has no kernel-side
 * deadline (README "The inbound hold: set-up and limits"). The local hold's
 * deadline is an nftables set element; on the inbound path the SYN is
 * redirected at tc's ingress hook, before netfilter's. The one netfilter
 * hook after the redirect and before the IFB's qdisc would be the netdev
 * egress hook on the IFB: this test shows it does not see what mirred
 * redirects there (its counter stays 0 while the IFB's qdisc counts every
 * SYN), although it sees a packet sent on the IFB from a packet socket.
 *
 * Devices sp-gid0/sp-gid1 (veth), sp-gidb (ifb); 169.254.93.0/24; table
 * netdev sp_gid.
 */
import test from 'ava';
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { IP, NFT, TC, inNs, otherNamespace, quietly, runClient, sh, tcSynRedirect } from '../helpers/tc-inbound.js';

const SRV = 'sp-gid0';
const PEER = 'sp-gid1';
const IFB = 'sp-gidb';
const PORT = 16093;
const V4 = { srv: '169.254.93.1', cli: '169.254.93.2' };

let other: ChildProcess;
let server: Server;

test.before(async () => {
  for (const d of [SRV, IFB]) quietly(IP, 'link', 'del', d);
  quietly(NFT, 'delete', 'table', 'netdev', 'sp_gid');
  other = await otherNamespace();
  sh(IP, 'link', 'add', SRV, 'type', 'veth', 'peer', 'name', PEER, 'netns', String(other.pid));
  sh(IP, 'addr', 'add', `${V4.srv}/24`, 'dev', SRV);
  sh(IP, 'link', 'set', SRV, 'up');
  inNs(other, IP, 'addr', 'add', `${V4.cli}/24`, 'dev', PEER);
  inNs(other, IP, 'link', 'set', PEER, 'up');
  sh(IP, 'link', 'add', IFB, 'type', 'ifb');
  writeFileSync(`/proc/sys/net/ipv6/conf/${IFB}/disable_ipv6`, '1');
  sh(TC, 'qdisc', 'add', 'dev', IFB, 'root', 'handle', '1:', 'pfifo');
  sh(IP, 'link', 'set', IFB, 'up');
  sh(TC, 'qdisc', 'add', 'dev', SRV, 'clsact');
  // tc's own SYN match, as the inbound hold's u32 filter matches (no IP options here)
  tcSynRedirect(SRV, 5, PORT, IFB);
  sh(NFT, 'add', 'table', 'netdev', 'sp_gid');
  sh(NFT, 'add', 'chain', 'netdev', 'sp_gid', 'eg', `{ type filter hook egress device ${IFB} priority 0 ; }`);
  sh(NFT, 'add', 'rule', 'netdev', 'sp_gid', 'eg', 'counter');
  server = createServer((s) => s.pipe(s));
  await new Promise<void>((r) => server.listen({ port: PORT, host: V4.srv }, () => r()));
});

test.after.always(() => {
  server?.close();
  for (const d of [SRV, IFB]) quietly(IP, 'link', 'del', d);
  quietly(NFT, 'delete', 'table', 'netdev', 'sp_gid');
  other?.kill('SIGKILL');
});

function egressCount(): number {
  const j = JSON.parse(sh(NFT, '-j', 'list', 'chain', 'netdev', 'sp_gid', 'eg')) as {
    nftables: Array<{ rule?: { expr: Array<{ counter?: { packets: number } }> } }>;
  };
  return j.nftables.find((x) => x.rule)!.rule!.expr.find((e) => e.counter)!.counter!.packets;
}

function ifbPackets(): number {
  return (JSON.parse(sh(TC, '-s', '-j', 'qdisc', 'show', 'dev', IFB, 'root')) as Array<{ packets: number }>)[0].packets;
}

test.serial("the IFB's netdev egress hook does not see the SYNs mirred redirects to it (so no nftables element can end an inbound hold)", async (t) => {
  const q0 = ifbPackets();
  const e0 = egressCount();
  t.is(await runClient(other, '4', V4.srv, PORT, 5), 'ok');
  t.is(ifbPackets() - q0, 5, "the IFB's qdisc saw the 5 SYNs");
  t.is(egressCount() - e0, 0, 'its egress chain saw none of them');
  // the chain does work: a frame sent on the IFB from a packet socket traverses it
  execFileSync('python3', [
    '-c',
    `import socket; s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW); s.bind(('${IFB}', 0)); s.send(bytes(12) + b'\\x08\\x00' + bytes(46))`,
  ]);
  t.is(egressCount() - e0, 1, 'a packet-socket frame on the IFB is counted');
});
