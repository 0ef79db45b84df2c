/**
 * Live: the fault campaign's kernel double (test/helpers/fake-kernel.ts)
 * answers nfnetlink_queue as this kernel does. The same sequence of
 * NFQNL_MSG_CONFIG, NFQNL_MSG_VERDICT and NFQNL_MSG_VERDICT_BATCH requests
 * from two sockets (A binds; B is another socket) goes to the kernel and to
 * the double; each answer (the errno, 0 for an ack) and the queue list of
 * /proc/net/netfilter/nfnetlink_queue after each step (its port id column
 * left out: the two number their sockets differently) must be the same.
 * The kernel is the oracle; nothing here is the double's own output.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { NetlinkConnection } from '../../src/netlink/connection.js';
import { NETLINK_NETFILTER, NLM_F_ACK } from '../../src/netlink/message.js';
import * as Q from '../../src/netlink/nfqueue.js';
import { FakeKernel } from '../helpers/fake-kernel.js';

/** A queue number no other live test binds. */
const QUEUE = 4717;

/** An NFNL_SUBSYS_QUEUE payload with one attribute of any length (for what the encoders will not make). */
function rawAttr(type: number, data: Buffer): Buffer {
  const h = Buffer.alloc(4);
  h.writeUInt16BE(QUEUE, 2);
  const a = Buffer.alloc(4 + ((data.length + 3) & ~3));
  a.writeUInt16LE(4 + data.length, 0);
  a.writeUInt16LE(type, 2);
  data.copy(a, 4);
  return Buffer.concat([h, a]);
}

const cmd = (c: number, pf = 0) => Q.encodeNfqConfigCommand(QUEUE, c, pf);
const noAttrs = () => rawAttr(0, Buffer.alloc(0)).subarray(0, 4);

/** The steps: a name, the socket that sends, the message type and payload; `close` closes that socket instead. */
type Step = [name: string, who: 'A' | 'B', type: number | 'close', payload?: Buffer];
const STEPS: Step[] = [
  ['unbind, nothing bound', 'A', Q.NFQNL_MSG_CONFIG, cmd(Q.NFQNL_CFG_CMD_UNBIND)],
  ['params, nothing bound', 'A', Q.NFQNL_MSG_CONFIG, Q.encodeNfqConfigParams(QUEUE, Q.NFQNL_COPY_META)],
  ['maxlen, nothing bound', 'A', Q.NFQNL_MSG_CONFIG, Q.encodeNfqConfigMaxlen(QUEUE, 100)],
  ['flags with mask, nothing bound', 'A', Q.NFQNL_MSG_CONFIG, Q.encodeNfqConfigFlags(QUEUE, 1, 0)],
  ['flags without mask, nothing bound', 'A', Q.NFQNL_MSG_CONFIG, rawAttr(Q.NFQA_CFG_FLAGS, Buffer.alloc(4))],
  ['batch verdict, nothing bound', 'A', Q.NFQNL_MSG_VERDICT_BATCH, Q.encodeNfqVerdict(QUEUE, Q.NF_ACCEPT, 5)],
  ['verdict, nothing bound', 'A', Q.NFQNL_MSG_VERDICT, Q.encodeNfqVerdict(QUEUE, Q.NF_ACCEPT, 5)],
  ['config without attributes, nothing bound', 'A', Q.NFQNL_MSG_CONFIG, noAttrs()],
  ['pf_bind', 'A', Q.NFQNL_MSG_CONFIG, cmd(Q.NFQNL_CFG_CMD_PF_BIND, 2)],
  ['pf_unbind', 'A', Q.NFQNL_MSG_CONFIG, cmd(Q.NFQNL_CFG_CMD_PF_UNBIND, 2)],
  ['unknown command, nothing bound', 'A', Q.NFQNL_MSG_CONFIG, cmd(9)],
  ['A binds', 'A', Q.NFQNL_MSG_CONFIG, cmd(Q.NFQNL_CFG_CMD_BIND)],
  ['unknown command, bound', 'A', Q.NFQNL_MSG_CONFIG, cmd(9)],
  ['A binds again', 'A', Q.NFQNL_MSG_CONFIG, cmd(Q.NFQNL_CFG_CMD_BIND)],
  ['B binds', 'B', Q.NFQNL_MSG_CONFIG, cmd(Q.NFQNL_CFG_CMD_BIND)],
  ['B unbinds', 'B', Q.NFQNL_MSG_CONFIG, cmd(Q.NFQNL_CFG_CMD_UNBIND)],
  ['B sets params', 'B', Q.NFQNL_MSG_CONFIG, Q.encodeNfqConfigParams(QUEUE, Q.NFQNL_COPY_META)],
  ['B batch verdict', 'B', Q.NFQNL_MSG_VERDICT_BATCH, Q.encodeNfqVerdict(QUEUE, Q.NF_ACCEPT, 5)],
  ['B verdict', 'B', Q.NFQNL_MSG_VERDICT, Q.encodeNfqVerdict(QUEUE, Q.NF_ACCEPT, 5)],
  ['copy packet, range 0', 'A', Q.NFQNL_MSG_CONFIG, Q.encodeNfqConfigParams(QUEUE, Q.NFQNL_COPY_PACKET, 0)],
  ['copy packet, range 100', 'A', Q.NFQNL_MSG_CONFIG, Q.encodeNfqConfigParams(QUEUE, Q.NFQNL_COPY_PACKET, 100)],
  ['copy mode 7', 'A', Q.NFQNL_MSG_CONFIG, Q.encodeNfqConfigParams(QUEUE, 7, 100)],
  ['copy meta, range 100', 'A', Q.NFQNL_MSG_CONFIG, Q.encodeNfqConfigParams(QUEUE, Q.NFQNL_COPY_META, 100)],
  ['params of 4 bytes', 'A', Q.NFQNL_MSG_CONFIG, rawAttr(Q.NFQA_CFG_PARAMS, Buffer.alloc(4))],
  ['maxlen 100', 'A', Q.NFQNL_MSG_CONFIG, Q.encodeNfqConfigMaxlen(QUEUE, 100)],
  ['maxlen of 2 bytes', 'A', Q.NFQNL_MSG_CONFIG, rawAttr(Q.NFQA_CFG_QUEUE_MAXLEN, Buffer.alloc(2))],
  ['fail-open', 'A', Q.NFQNL_MSG_CONFIG, Q.encodeNfqConfigFlags(QUEUE, Q.NFQA_CFG_F_FAIL_OPEN, Q.NFQA_CFG_F_FAIL_OPEN)],
  ['flags without mask, bound', 'A', Q.NFQNL_MSG_CONFIG, rawAttr(Q.NFQA_CFG_FLAGS, Buffer.alloc(4))],
  ['flag 0x20', 'A', Q.NFQNL_MSG_CONFIG, Q.encodeNfqConfigFlags(QUEUE, 0x20, 0x20)],
  ['flag 0x40 outside the mask', 'A', Q.NFQNL_MSG_CONFIG, Q.encodeNfqConfigFlags(QUEUE, 0, 0x40)],
  ['mask alone', 'A', Q.NFQNL_MSG_CONFIG, rawAttr(Q.NFQA_CFG_MASK, Buffer.alloc(4))],
  ['batch verdict, nothing queued', 'A', Q.NFQNL_MSG_VERDICT_BATCH, Q.encodeNfqVerdict(QUEUE, Q.NF_ACCEPT, 5)],
  ['verdict, nothing queued', 'A', Q.NFQNL_MSG_VERDICT, Q.encodeNfqVerdict(QUEUE, Q.NF_ACCEPT, 5)],
  ['batch verdict NF_STOLEN', 'A', Q.NFQNL_MSG_VERDICT_BATCH, Q.encodeNfqVerdict(QUEUE, 2, 5)],
  ['batch verdict 7', 'A', Q.NFQNL_MSG_VERDICT_BATCH, Q.encodeNfqVerdict(QUEUE, 7, 5)],
  ['batch verdict without a header', 'A', Q.NFQNL_MSG_VERDICT_BATCH, noAttrs()],
  ['batch verdict, header of 4 bytes', 'A', Q.NFQNL_MSG_VERDICT_BATCH, rawAttr(Q.NFQA_VERDICT_HDR, Buffer.alloc(4))],
  ['NFQNL_MSG_PACKET from user space', 'A', Q.NFQNL_MSG_PACKET, noAttrs()],
  ['message type 4', 'A', (Q.NFNL_SUBSYS_QUEUE << 8) | 4, noAttrs()],
  ['A unbinds', 'A', Q.NFQNL_MSG_CONFIG, cmd(Q.NFQNL_CFG_CMD_UNBIND)],
  ['A unbinds again', 'A', Q.NFQNL_MSG_CONFIG, cmd(Q.NFQNL_CFG_CMD_UNBIND)],
  ['B binds, A unbound', 'B', Q.NFQNL_MSG_CONFIG, cmd(Q.NFQNL_CFG_CMD_BIND)],
  ['B closes its socket', 'B', 'close'],
  [
    'A binds and sets maxlen in one message',
    'A',
    Q.NFQNL_MSG_CONFIG,
    Buffer.concat([cmd(Q.NFQNL_CFG_CMD_BIND), Q.encodeNfqConfigMaxlen(QUEUE, 33).subarray(4)]),
  ],
  [
    'A unbinds and sets maxlen in one message',
    'A',
    Q.NFQNL_MSG_CONFIG,
    Buffer.concat([cmd(Q.NFQNL_CFG_CMD_UNBIND), Q.encodeNfqConfigMaxlen(QUEUE, 44).subarray(4)]),
  ],
];

/** Run the steps on two connections; each step's answer and the queue's /proc line after it (port id left out). */
async function run(open: () => NetlinkConnection, proc: () => string): Promise<string[]> {
  const socks = { A: open(), B: open() };
  const out: string[] = [];
  try {
    for (const [name, who, type, payload] of STEPS) {
      let answer = 'closed';
      if (type === 'close') socks[who].close();
      else {
        const [r] = await socks[who].exchange([{ type, payload: payload!, flags: NLM_F_ACK }]);
        answer = r.error ? `errno ${r.error.errno}` : 'ack';
      }
      const line = proc()
        .split('\n')
        .map((l) => l.trim().split(/\s+/))
        .filter((f) => Number(f[0]) === QUEUE)
        .map((f) => [f[0], ...f.slice(2)].join(' '));
      out.push(`${name}: ${answer}; bound: ${line.join(', ') || 'none'}`);
    }
  } finally {
    socks.A.close();
    socks.B.close();
  }
  return out;
}

test.serial("the kernel double answers nfnetlink_queue's config and verdicts as this kernel does", async (t) => {
  const kernel = await run(
    () => NetlinkConnection.open(NETLINK_NETFILTER),
    () => readFileSync('/proc/net/netfilter/nfnetlink_queue', 'utf8'),
  );
  const fake = new FakeKernel();
  const double = await run(
    () => new NetlinkConnection(fake.transport(NETLINK_NETFILTER), NETLINK_NETFILTER),
    () => fake.procNet('netfilter/nfnetlink_queue') ?? '',
  );
  t.deepEqual(double, kernel);
  // the kernel's answers that the double must give: not all acks (the sequence reaches its refusals)
  t.true(kernel.some((l) => l.includes('errno 1;')) && kernel.some((l) => l.includes('errno 16;')) && kernel.some((l) => l.includes('errno 19;')));
});
