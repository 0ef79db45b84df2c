/**
 * The streaming listings (eachQdisc / eachClass / eachFilter) and the list
 * functions built on them, over the captured class dump of step 13 (tc class
 * show dev lo: four prio classes), answered by a FakeTransport: entries are
 * handed over as their datagram is read, an inconsistent dump
 * (NLM_F_DUMP_INTR) is run again with attempt 2 and only that one is listed,
 * and a throw from the consumer surfaces once the dump has ended.
 */
import test from 'ava';
import { loadCapture, type Capture } from '../helpers/captures.js';
import { NetlinkConnection, FakeTransport } from '../../src/netlink/connection.js';
import { parseMessages, encodeMessage, NLMSG_DONE, NLMSG_ERROR, NLM_F_MULTI, NLM_F_DUMP_INTR } from '../../src/netlink/message.js';
import { SynplugError } from '../../src/netlink/errors.js';
import { eachClass, listClasses, type ClassEntry } from '../../src/tc/index.js';

const RTM_GETLINK = 18;
const RTM_GETTCLASS = 42;

/** The reply datagrams that follow the capture's first request of `type`. */
function answerOf(c: Capture, type: number): Buffer[] {
  const ds = c.datagrams;
  const i = ds.findIndex((d) => d.direction === 'to-kernel' && parseMessages(d.bytes)[0].type === type);
  const out: Buffer[] = [];
  for (let j = i + 1; j < ds.length && ds[j].direction === 'from-kernel'; j++) out.push(ds[j].bytes);
  return out;
}

/** The lookup of 'lo': one RTM_NEWLINK from the capture's link dump, then an ack. */
function linkLookup(c: Capture): Buffer[] {
  const d = answerOf(c, RTM_GETLINK)[0];
  const m = parseMessages(d)[0];
  const one = Buffer.from(d.subarray(m.offset, m.offset + 16 + m.payload.length));
  one.writeUInt16LE(0, 6);
  return [one, encodeMessage({ type: NLMSG_ERROR, flags: 0, payload: Buffer.alloc(20) })];
}

/** The class dump's datagrams with NLM_F_DUMP_INTR set on every message. */
function interrupted(ds: Buffer[]): Buffer[] {
  return ds.map((d) => {
    const out = Buffer.from(d);
    for (const m of parseMessages(out)) out.writeUInt16LE(m.flags | NLM_F_DUMP_INTR, m.offset + 6);
    return out;
  });
}

const c13 = loadCapture('13_class_dump');
const classDump = answerOf(c13, RTM_GETTCLASS);
const printed = c13.printed
  .trim()
  .split('\n')
  .map((l) => l.split(' ')[2]); // the class ids tc printed

test("eachClass hands over every class tc printed, in the kernel's order, with attempt 1", async (t) => {
  const conn = new NetlinkConnection(new FakeTransport([linkLookup(c13), classDump]), 0, { timeoutMs: 1000 });
  const seen: Array<[string, number]> = [];
  await eachClass(conn, { dev: 'lo' }, (e, attempt) => seen.push([e.handle, attempt]));
  conn.close();
  t.deepEqual(
    seen,
    printed.map((h) => [h, 1]),
  );
});

test('an inconsistent dump (NLM_F_DUMP_INTR) runs again: eachClass sees attempt 1 then 2, listClasses keeps only attempt 2', async (t) => {
  const script = () => [linkLookup(c13), interrupted(classDump), classDump];
  const conn = new NetlinkConnection(new FakeTransport(script()), 0, { timeoutMs: 1000 });
  const attempts: number[] = [];
  await eachClass(conn, { dev: 'lo' }, (_e, attempt) => attempts.push(attempt));
  conn.close();
  t.deepEqual(attempts, [...printed.map(() => 1), ...printed.map(() => 2)]);

  const conn2 = new NetlinkConnection(new FakeTransport(script()), 0, { timeoutMs: 1000 });
  const list: ClassEntry[] = await listClasses(conn2, { dev: 'lo' });
  conn2.close();
  t.deepEqual(
    list.map((e) => e.handle),
    printed,
  );
});

test('a throw from the consumer rejects eachClass once the dump is done; the connection stays usable', async (t) => {
  const conn = new NetlinkConnection(new FakeTransport([linkLookup(c13), classDump, linkLookup(c13), classDump]), 0, { timeoutMs: 1000 });
  let calls = 0;
  await t.throwsAsync(
    eachClass(conn, { dev: 'lo' }, () => {
      calls++;
      throw new SynplugError('stdout closed');
    }),
    { message: 'stdout closed' },
  );
  t.is(calls, 1);
  const again = await listClasses(conn, { dev: 'lo' });
  conn.close();
  t.deepEqual(
    again.map((e) => e.handle),
    printed,
  );
});

test('the done message of the capture ends the dump (NLMSG_DONE, NLM_F_MULTI)', (t) => {
  const last = parseMessages(classDump[classDump.length - 1]).at(-1)!;
  t.is(last.type, NLMSG_DONE);
  t.true((last.flags & NLM_F_MULTI) !== 0);
});
