/**
 * The demo's phase one, without a kernel: the veth probe (topology.ts) reads
 * the kernel's answer to a veth create that veth's validate op must refuse
 * (a 1-byte IFLA_ADDRESS): EOPNOTSUPP is "no veth", EINVAL (or any other
 * refusal after the kind was found) is "veth"; EPERM goes up. The live tests
 * (demo-topology, demo-cli) check it against this machine's kernel.
 */
import test from 'ava';
import { constants } from 'node:os';
import type { NetlinkConnection } from '../../src/netlink/connection.js';
import { NetlinkError, SynplugError } from '../../src/netlink/errors.js';
import { RTM_NEWLINK } from '../../src/netlink/route/constants.js';
import { probeVeth } from '../../src/demo/topology.js';

/** A route connection whose every request is answered with `errno` (0: accepted), recording what was sent. */
function answering(errno: number) {
  const sent: Array<{ type: number; flags?: number; payload: Buffer }> = [];
  const conn = {
    async request(m: { type: number; flags?: number; payload: Buffer | readonly Buffer[] }) {
      sent.push({ type: m.type, flags: m.flags, payload: Buffer.isBuffer(m.payload) ? m.payload : Buffer.concat(m.payload as Buffer[]) });
      if (errno !== 0) throw new NetlinkError({ errno, requestType: 'RTM_NEWLINK' });
      return [];
    },
  };
  return { conn: conn as unknown as NetlinkConnection, sent };
}

/** The top-level attributes after the 16-byte ifinfomsg: [type, value]. */
function attrs(payload: Buffer): Array<[number, Buffer]> {
  const out: Array<[number, Buffer]> = [];
  for (let off = 16; off + 4 <= payload.length; ) {
    const len = payload.readUInt16LE(off);
    out.push([payload.readUInt16LE(off + 2) & 0x3fff, payload.subarray(off + 4, off + len)]);
    off += (len + 3) & ~3;
  }
  return out;
}

test('probeVeth: EOPNOTSUPP (no such link kind) is no; EINVAL (veth refused the address) is yes', async (t) => {
  t.is(await probeVeth(answering(constants.errno.EOPNOTSUPP).conn), 'no');
  t.is(await probeVeth(answering(constants.errno.EINVAL).conn), 'yes');
});

test('probeVeth: the request is an RTM_NEWLINK of kind veth with a 1-byte IFLA_ADDRESS (which veth_validate refuses before creating anything)', async (t) => {
  const { conn, sent } = answering(constants.errno.EINVAL);
  await probeVeth(conn);
  t.is(sent.length, 1);
  t.is(sent[0].type, RTM_NEWLINK);
  const a = attrs(sent[0].payload);
  const IFLA_ADDRESS = 1;
  const IFLA_LINKINFO = 18;
  t.deepEqual(
    a.filter(([ty]) => ty === IFLA_ADDRESS).map(([, v]) => v.length),
    [1],
  );
  const info = a.find(([ty]) => ty === IFLA_LINKINFO)?.[1];
  t.truthy(info);
  t.true(info?.includes(Buffer.from('veth')));
});

test('probeVeth: EPERM goes up; an accepted request (cannot happen) is an error after deleting what it made', async (t) => {
  await t.throwsAsync(probeVeth(answering(constants.errno.EPERM).conn), { instanceOf: NetlinkError, message: /EPERM/ });
  const { conn, sent } = answering(0);
  await t.throwsAsync(probeVeth(conn), { instanceOf: SynplugError, message: /unexpectedly created spvethprobe; it was deleted again/ });
  t.is(sent.length, 2, 'the create, then the delete');
});
