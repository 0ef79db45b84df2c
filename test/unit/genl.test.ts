/**
 * Generic netlink's controller against iproute2's family lookup on Linux 6.1
 * (fixtures/captures 61 and 62 start with CTRL_CMD_GETFAMILY "tcp_metrics").
 */
import test from 'ava';
import fc from 'fast-check';
import { loadCapture, requests, replies } from '../helpers/captures.js';
import { parseMessages } from '../../src/netlink/message.js';
import { NetlinkConnection, FakeTransport } from '../../src/netlink/connection.js';
import { NetlinkDecodeError } from '../../src/netlink/errors.js';
import { nfnetlinkAck } from '../../src/netlink/testing.js';
import * as G from '../../src/netlink/genl.js';

for (const name of ['61_tcp_metrics_show', '62_tcp_metrics_delete']) {
  test(`${name.slice(0, 2)}: CTRL_CMD_GETFAMILY "tcp_metrics" is iproute2's request; the reply resolves to family id 27, version 1`, async (t) => {
    const c = loadCapture(name);
    const q = parseMessages(requests(c)[0].bytes)[0];
    t.is(q.type, G.GENL_ID_CTRL);
    t.is(Buffer.concat(G.encodeGetFamily('tcp_metrics')).toString('hex'), q.payload.toString('hex'));
    const reply = replies(c)[0].bytes;
    t.like(G.decodeCtrlBody(parseMessages(reply)[0]), { cmd: 'newfamily', id: 27, name: 'tcp_metrics', family_version: 1, maxattr: 13 });
    // iproute2 asked without NLM_F_ACK; we ask with it: the kernel's reply, then its ack
    const ft = new FakeTransport([(sent) => [reply, nfnetlinkAck(parseMessages(sent)[0], 0)]]);
    const fam = await G.resolveGenlFamily(new NetlinkConnection(ft, G.NETLINK_GENERIC), 'tcp_metrics');
    t.deepEqual(fam, { id: 27, name: 'tcp_metrics', version: 1, maxAttr: 13 });
    t.is(G.genlFamilyName(27), 'tcp_metrics');
  });
}

test('resolveGenlFamily: ENOENT (no such family) is undefined; a connection of another protocol is a UsageError', async (t) => {
  const ft = new FakeTransport([(sent) => [nfnetlinkAck(parseMessages(sent)[0], 2, { capped: true })]]);
  t.is(await G.resolveGenlFamily(new NetlinkConnection(ft, G.NETLINK_GENERIC), 'nosuch'), undefined);
  await t.throwsAsync(G.resolveGenlFamily(new NetlinkConnection(new FakeTransport(), 12), 'tcp_metrics'), { name: 'UsageError' });
});

test('generic netlink decoders throw only NetlinkDecodeError (fast-check)', (t) => {
  fc.assert(
    fc.property(fc.integer({ min: 0x10, max: 0x40 }), fc.uint8Array({ maxLength: 80 }), (type, bytes) => {
      try {
        G.decodeGenlBody({ type, flags: 0, seq: 0, pid: 0, payload: Buffer.from(bytes), offset: 0 });
      } catch (e) {
        if (!(e instanceof NetlinkDecodeError)) throw e;
      }
    }),
  );
  t.pass();
});
