/*
 * The connection's shared deadline timer (one timer for every exchange in
 * flight) and its receive fast path for plain acks.
 */
import test from 'ava';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import {
  parseMessages,
  encodeMessage,
  NLMSG_ERROR,
  NLM_F_REQUEST,
  NLM_F_ACK,
  NLM_F_CAPPED,
  NLM_F_ACK_TLVS,
  NLM_F_DUMP_INTR,
  NLMSGERR_ATTR_MSG,
  NETLINK_ROUTE,
  NETLINK_NETFILTER,
} from '../../src/netlink/message.js';
import { str } from '../../src/netlink/attributes.js';
import { NetlinkConnection, NetlinkTimeoutError, type Transport } from '../../src/netlink/connection.js';
import { NetlinkError } from '../../src/netlink/errors.js';
import '../../src/netlink/route/index.js';

/** An NLMSG_ERROR answering `seq` (errno 0 = ack), as the kernel sends it (capped), optionally with a TLV text. */
function errFor(seq: number, errno = 0, opts: { text?: string; flags?: number } = {}): Buffer {
  const p = Buffer.alloc(4);
  p.writeInt32LE(-errno);
  const flags = NLM_F_CAPPED | (opts.text ? NLM_F_ACK_TLVS : 0) | (opts.flags ?? 0);
  return encodeMessage({ type: NLMSG_ERROR, flags, seq, payload: [p, Buffer.alloc(16), ...(opts.text ? [str(NLMSGERR_ATTR_MSG, opts.text)] : [])] });
}
const seqOf = (d: Buffer, i = 0): number => parseMessages(d)[i].seq;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A transport whose replies the test delivers by hand. */
class ManualTransport implements Transport {
  readonly portId = 1;
  readonly sent: Buffer[] = [];
  private cb: (d: Buffer) => void = () => {};
  send(d: Buffer): void {
    this.sent.push(Buffer.from(d));
  }
  onDatagram(cb: (d: Buffer) => void): void {
    this.cb = cb;
  }
  onError(): void {}
  close(): void {}
  deliver(d: Buffer): void {
    this.cb(d);
  }
}

test.serial('each exchange times out at its own deadline; the others in flight are still answered', async (t) => {
  const tr = new ManualTransport();
  const conn = new NetlinkConnection(tr, NETLINK_ROUTE, { timeoutMs: 2000 });
  const t0 = performance.now();
  const settled: Array<[string, number]> = [];
  const track = (name: string, p: Promise<unknown>) =>
    p.then(
      () => settled.push([name, performance.now() - t0]),
      (e) => {
        settled.push([`${name}: ${e instanceof NetlinkTimeoutError ? e.message : String(e)}`, performance.now() - t0]);
      },
    );
  const long = track('long', conn.request({ type: 36 }, { timeoutMs: 120 })); // RTM_NEWQDISC
  const short = track('short', conn.request({ type: 44 }, { timeoutMs: 30 })); // RTM_NEWTFILTER, armed after the longer one
  const answered = track('answered', conn.request({ type: 40 })); // RTM_NEWTCLASS, default 2000 ms
  await short;
  await long;
  // the shorter timeout first, each no earlier than its own deadline
  t.is(settled[0][0], 'short: RTM_NEWTFILTER: no answer from the kernel within 30 ms');
  t.true(settled[0][1] >= 29, `timed out after ${settled[0][1]} ms`);
  t.is(settled[1][0], 'long: RTM_NEWQDISC: no answer from the kernel within 120 ms');
  t.true(settled[1][1] >= 119, `timed out after ${settled[1][1]} ms`);
  t.is(settled.length, 2);
  // the third is still waiting, and its ack still counts
  tr.deliver(errFor(seqOf(tr.sent[2])));
  await answered;
  t.is(settled[2][0], 'answered');
  // late answers to the timed-out ones are dropped, and the connection goes on
  tr.deliver(Buffer.concat([errFor(seqOf(tr.sent[0]), 1), errFor(seqOf(tr.sent[1]))]));
  const next = conn.request({ type: 36 });
  tr.deliver(errFor(seqOf(tr.sent[3])));
  t.deepEqual(await next, []);
  conn.close();
});

test.serial('a timeout still fires after earlier exchanges ended (the timer re-arms for the next deadline)', async (t) => {
  const tr = new ManualTransport();
  const conn = new NetlinkConnection(tr, NETLINK_ROUTE);
  // answered at once: the shared timer stays armed for its 15 ms deadline
  const a = conn.request({ type: 36 }, { timeoutMs: 15 });
  tr.deliver(errFor(seqOf(tr.sent[0])));
  await a;
  await sleep(25); // the timer fires with nothing due
  const t0 = performance.now();
  const err = await t.throwsAsync(conn.request({ type: 36 }, { timeoutMs: 40 }), { instanceOf: NetlinkTimeoutError });
  const took = performance.now() - t0;
  t.regex(err!.message, /within 40 ms$/);
  t.true(took >= 39 && took < 1000, `timed out after ${took} ms`);
  conn.close();
});

test('a timeout longer than setTimeout can hold does not fire at once', async (t) => {
  const tr = new ManualTransport();
  const conn = new NetlinkConnection(tr, NETLINK_ROUTE);
  const p = conn.request({ type: 36 }, { timeoutMs: 2 ** 32 });
  let done = false;
  p.finally(() => {
    done = true;
  }).catch(() => undefined);
  await sleep(20);
  t.false(done, 'still waiting');
  tr.deliver(errFor(seqOf(tr.sent[0])));
  t.deepEqual(await p, []);
  conn.close();
});

test('close(): exchanges in flight reject, and their timer is gone', async (t) => {
  const tr = new ManualTransport();
  const conn = new NetlinkConnection(tr, NETLINK_ROUTE, { timeoutMs: 20 });
  const p = conn.request({ type: 36 });
  conn.close();
  const err = await t.throwsAsync(p);
  t.regex(err!.message, /closed/);
  t.false(err instanceof NetlinkTimeoutError);
});

test('exchange: a timeout names the first message still unanswered', async (t) => {
  const tr = new ManualTransport();
  const conn = new NetlinkConnection(tr, NETLINK_NETFILTER, { timeoutMs: 20 });
  const p = conn.exchange([
    { type: 0x0a00, flags: NLM_F_ACK },
    { type: 0x0a03, flags: NLM_F_ACK },
  ]);
  const err = await t.throwsAsync(p, { instanceOf: NetlinkTimeoutError });
  t.regex(err!.message, /within 20 ms$/);
  t.is(parseMessages(tr.sent[0]).length, 2);
});

test("an answered connection does not keep the process alive (the shared timer is unref'd when idle)", async (t) => {
  const conn = fileURLToPath(new URL('../../src/netlink/connection.ts', import.meta.url));
  const msg = fileURLToPath(new URL('../../src/netlink/message.ts', import.meta.url));
  // A child opens a connection over a fake transport with a 60 s timeout,
  // gets its request answered, and neither closes it nor exits: it must end
  // on its own, long before the 60 s.
  const script = `
    import { NetlinkConnection, FakeTransport } from ${JSON.stringify(conn)};
    import { encodeMessage, parseMessages } from ${JSON.stringify(msg)};
    const ack = (seq) => { const p = Buffer.alloc(20); return encodeMessage({ type: 2, flags: 0x100, seq, payload: p }); };
    const c = new NetlinkConnection(new FakeTransport([(s) => [ack(parseMessages(s)[0].seq)]], { keepSeq: true }), 0, { timeoutMs: 60000 });
    await c.request({ type: 36 });
    console.log('answered');
  `;
  // execFile rejects when the child is killed at the 30 s timeout, or exits non-zero
  const r = await promisify(execFile)(process.execPath, ['--import=tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  t.is(r.stderr, '');
  t.is(r.stdout.trim(), 'answered');
});

test('fast path: a plain ack for an unknown seq is ignored; an ack with NLM_F_DUMP_INTR or a warning still counts', async (t) => {
  const tr = new ManualTransport();
  const conn = new NetlinkConnection(tr, NETLINK_ROUTE, { timeoutMs: 1000 });
  const p = conn.request({ type: 36 });
  const seq = seqOf(tr.sent[0]);
  tr.deliver(errFor(seq + 7)); // someone else's ack
  tr.deliver(errFor(seq, 0, { flags: NLM_F_DUMP_INTR }));
  t.deepEqual(await p, []);
  const q = conn.request({ type: 36 });
  tr.deliver(errFor(seqOf(tr.sent[1]), 0, { text: 'careful' }));
  t.deepEqual(await q, []);
  t.deepEqual(conn.warnings, ['careful']);
  // an ack followed by trailing bytes that are not a message is malformed, as before
  const r = conn.request({ type: 36 });
  tr.deliver(Buffer.concat([errFor(seqOf(tr.sent[2])), Buffer.from([1, 2, 3, 4])]));
  await t.throwsAsync(r, { message: /truncated netlink header/ });
  // an error (not an ack) still becomes a NetlinkError
  const e = conn.request({ type: 36 });
  tr.deliver(errFor(seqOf(tr.sent[3]), 17));
  await t.throwsAsync(e, { instanceOf: NetlinkError, message: /EEXIST/ });
  conn.close();
});

test('the datagram of several messages is the messages encoded one by one, concatenated', async (t) => {
  const tr = new ManualTransport();
  const conn = new NetlinkConnection(tr, NETLINK_NETFILTER, { timeoutMs: 1000 });
  const msgs = [
    { type: 0x10, payload: Buffer.from([0, 0, 0x0a, 0]) },
    { type: 0x0a00, flags: NLM_F_ACK | 0x400, payload: [Buffer.from([2, 0, 0, 0]), str(1, 'filter')] },
    { type: 0x0a01 }, // no payload
    { type: 0x11, payload: Buffer.from([0, 0, 0x0a, 0, 9]) }, // 5 bytes: padded to 8
  ];
  const p = conn.exchange(msgs);
  const sent = parseMessages(tr.sent[0]);
  const expected = Buffer.concat(
    msgs.map((m, i) => encodeMessage({ type: m.type, flags: (m.flags ?? 0) | NLM_F_REQUEST, seq: sent[0].seq + i, payload: m.payload })),
  );
  t.deepEqual(tr.sent[0], expected);
  t.is(tr.sent[0].length, 20 + 32 + 16 + 24);
  t.deepEqual([...tr.sent[0].subarray(tr.sent[0].length - 3)], [0, 0, 0]);
  tr.deliver(errFor(sent[1].seq));
  const r = await p;
  t.deepEqual(
    r.map((x) => x.seq - sent[0].seq),
    [0, 1, 2, 3],
  );
  conn.close();
});
