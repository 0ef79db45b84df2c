/**
 * Issue #11 defects 1 and 6, what the library refuses before it sends anything:
 * - an unknown top-level key of a qdisc, class or filter spec, of a plug
 *   reference or of a listing's options (one shared check, naming the key
 *   and the allowed ones);
 * - a connection of another netlink protocol (one shared check: tc needs
 *   NETLINK_ROUTE);
 * - a tbf burst the kernel's buffer field reads back as 0 (shared with htb);
 * - htb `default` text that is not hex is quoted as the caller gave it.
 */
import test from 'ava';
import { NetlinkConnection, FakeTransport } from '../../src/netlink/connection.js';
import { UsageError } from '../../src/netlink/errors.js';
import { untyped } from '../helpers/untyped.js';
import {
  addQdisc,
  replaceQdisc,
  changeQdisc,
  deleteQdisc,
  addClass,
  deleteClass,
  addFilter,
  deleteFilter,
  listQdiscs,
  listClasses,
  listFilters,
  eachQdisc,
  plugBuffer,
  plugSetLimit,
  qdiscRequest,
  decodeQdisc,
  type TcConnection,
} from '../../src/tc/index.js';

/** A connection that must not be used: the errors below happen before anything is sent. */
const noConn: TcConnection = {
  request: () => Promise.reject(new Error('nothing may be sent')),
  dumpAll: () => Promise.reject(new Error('nothing may be sent')),
  dumpEach: () => Promise.reject(new Error('nothing may be sent')),
};

test('an unknown top-level key of a qdisc, class or filter spec is a UsageError naming it and the allowed keys', async (t) => {
  await t.throwsAsync(untyped(addQdisc)(noConn, { dev: 'x', parent: 'root', kind: 'pfifo', hadle: '5:' }), {
    instanceOf: UsageError,
    message: 'addQdisc: unknown key "hadle" (allowed: dev, ifindex, parent, handle, kind, options)',
  });
  await t.throwsAsync(untyped(replaceQdisc)(noConn, { ifindex: 1, parent: 'root', kind: 'pfifo', opts: {} }), {
    instanceOf: UsageError,
    message: /^replaceQdisc: unknown key "opts"/,
  });
  await t.throwsAsync(untyped(changeQdisc)(noConn, { ifindex: 1, kind: 'pfifo', a: 1, b: 2 }), {
    instanceOf: UsageError,
    message: /^changeQdisc: unknown keys "a", "b" \(allowed:/,
  });
  await t.throwsAsync(untyped(deleteQdisc)(noConn, { ifindex: 1, parent: 'root', classid: '1:1' }), {
    instanceOf: UsageError,
    message: /^deleteQdisc: unknown key "classid"/,
  });
  await t.throwsAsync(untyped(addClass)(noConn, { ifindex: 1, parent: '1:', classid: '1:1', kind: 'htb', handle: '1:1' }), {
    instanceOf: UsageError,
    message: 'addClass: unknown key "handle" (allowed: dev, ifindex, parent, classid, kind, options)',
  });
  await t.throwsAsync(untyped(deleteClass)(noConn, { ifindex: 1, classid: '1:1', clasid: '1:2' }), {
    instanceOf: UsageError,
    message: /^deleteClass: unknown key "clasid"/,
  });
  await t.throwsAsync(untyped(addFilter)(noConn, { ifindex: 1, parent: '1:', kind: 'u32', proto: 'ip' }), {
    instanceOf: UsageError,
    message: 'addFilter: unknown key "proto" (allowed: dev, ifindex, parent, protocol, pref, prio, handle, chain, kind, options)',
  });
  await t.throwsAsync(untyped(deleteFilter)(noConn, { ifindex: 1, parent: '1:', priority: 3 }), {
    instanceOf: UsageError,
    message: /^deleteFilter: unknown key "priority"/,
  });
  await t.throwsAsync(untyped(plugBuffer)(noConn, { ifindex: 1, parent: '1:4', handle: '40:', limit: 5 }), {
    instanceOf: UsageError,
    message: /^plugBuffer: unknown key "limit"/,
  });
  await t.throwsAsync(untyped(plugSetLimit)(noConn, { ifindex: 1, parent: '1:4', handle: '40:', limit: 5, lmit: 6 }), {
    instanceOf: UsageError,
    message: /^plugSetLimit: unknown key "lmit"/,
  });
});

test("an unknown key of a listing's options, or options that are not an object, is a UsageError", async (t) => {
  await t.throwsAsync(untyped(listQdiscs)(noConn, { devv: 'lo' }), {
    instanceOf: UsageError,
    message: 'listQdiscs: unknown key "devv" (allowed: dev, ifindex, stats)',
  });
  await t.throwsAsync(
    untyped(eachQdisc)(noConn, { statistics: true }, () => {}),
    { instanceOf: UsageError, message: /^listQdiscs: unknown key "statistics"/ },
  );
  await t.throwsAsync(untyped(listClasses)(noConn, { ifindex: 1, parnt: '1:' }), {
    instanceOf: UsageError,
    message: 'listClasses: unknown key "parnt" (allowed: dev, ifindex, stats, parent)',
  });
  await t.throwsAsync(untyped(listFilters)(noConn, { ifindex: 1, kind: 'u32' }), { instanceOf: UsageError, message: /^listFilters: unknown key "kind"/ });
  await t.throwsAsync(untyped(listQdiscs)(noConn, 'lo'), {
    instanceOf: UsageError,
    message: /^listQdiscs: expected an object with dev, ifindex, stats, not string$/,
  });
  await t.throwsAsync(untyped(addQdisc)(noConn, null), { instanceOf: UsageError, message: /^addQdisc: expected an object .*, not null$/ });
  await t.throwsAsync(untyped(addClass)(noConn, ['x']), { instanceOf: UsageError, message: /^addClass: expected an object .*, not an array$/ });
});

test('the known keys still pass the check (a request reaches the connection)', async (t) => {
  const sent: string[] = [];
  const recording: TcConnection = {
    request: () => {
      sent.push('request');
      return Promise.reject(new Error('recorded'));
    },
    dumpAll: () => {
      sent.push('dumpAll');
      return Promise.reject(new Error('recorded'));
    },
    dumpEach: () => {
      sent.push('dumpEach');
      return Promise.reject(new Error('recorded'));
    },
  };
  await t.throwsAsync(addQdisc(recording, { ifindex: 1, parent: 'root', handle: '5:', kind: 'pfifo', options: { limit: 10 } }), { message: 'recorded' });
  await t.throwsAsync(listQdiscs(recording, { ifindex: 1, stats: true }), { message: 'recorded' });
  // a listing of every device (no dev) dumps all, then names the devices
  t.deepEqual(sent, ['request', 'dumpAll']);
});

test('a connection of another netlink protocol is refused before anything is sent: tc needs NETLINK_ROUTE', async (t) => {
  const diag = new FakeTransport([]);
  const sockDiag = new NetlinkConnection(diag, 4, { timeoutMs: 200 });
  const nft = new NetlinkConnection(new FakeTransport([]), 12, { timeoutMs: 200 });
  try {
    await t.throwsAsync(listQdiscs(sockDiag, {}), {
      instanceOf: UsageError,
      message: /^listQdiscs needs a NETLINK_ROUTE connection \(protocol 0\), not a NETLINK_SOCK_DIAG connection \(protocol 4\)$/,
    });
    await t.throwsAsync(addQdisc(nft, { dev: 'x', parent: 'root', kind: 'pfifo' }), {
      instanceOf: UsageError,
      message: /^addQdisc needs a NETLINK_ROUTE connection \(protocol 0\), not a NETLINK_NETFILTER connection \(protocol 12\)$/,
    });
    await t.throwsAsync(listClasses(sockDiag, { ifindex: 1 }), { instanceOf: UsageError, message: /^listClasses needs a NETLINK_ROUTE/ });
    await t.throwsAsync(listFilters(sockDiag, { ifindex: 1, parent: 'root' }), { instanceOf: UsageError, message: /^listFilters needs a NETLINK_ROUTE/ });
    await t.throwsAsync(deleteClass(sockDiag, { ifindex: 1, classid: '1:1' }), { instanceOf: UsageError, message: /^deleteClass needs a NETLINK_ROUTE/ });
    await t.throwsAsync(addFilter(sockDiag, { ifindex: 1, parent: '1:', kind: 'u32' }), {
      instanceOf: UsageError,
      message: /^addFilter needs a NETLINK_ROUTE/,
    });
    await t.throwsAsync(plugBuffer(sockDiag, { ifindex: 1, parent: '1:4', handle: '40:' }), {
      instanceOf: UsageError,
      message: /^plugBuffer needs a NETLINK_ROUTE/,
    });
    t.is(diag.sent.length, 0);
  } finally {
    sockDiag.close();
    nft.close();
  }
});

test("tbf: a burst the kernel's buffer field would read back as 0 is refused, naming the smallest that fits", (t) => {
  const req = (options: object) => untyped(qdiscRequest)('add', 1, { parent: 'root', handle: '1:', kind: 'tbf', options });
  const e = t.throws(() => req({ rate: '100tbit', burst: '10kb', latency: '10ms' }), {
    instanceOf: UsageError,
    message:
      /^tbf: at rate 100Tbit, a burst of 10240 bytes is too short for the kernel's buffer field \(psched ticks, struct tc_tbf_qopt\): it would read back as "burst 0b"; give a burst of at least \d+ bytes$/,
  });
  const min = Number(/at least (\d+) bytes/.exec(e!.message)![1]);
  // the smallest named burst encodes and reads back above 0 bytes; one byte less is refused
  const ok = req({ rate: '100tbit', burst: min, latency: '10ms' });
  const back = decodeQdisc({ type: ok.type, flags: 0, seq: 0, pid: 0, offset: 0, payload: Buffer.concat(ok.payload) }).options;
  t.true((back.burst as number) > 0);
  t.throws(() => req({ rate: '100tbit', burst: min - 1, latency: '10ms' }), { instanceOf: UsageError, message: /"burst 0b"/ });
  t.throws(() => req({ rate: 8, burst: '3gb', limit: 1000 }), {
    instanceOf: UsageError,
    message: /^tbf: at rate 64bit, a burst of \d+ bytes lasts longer than the kernel's buffer field/,
  });
  t.throws(() => req({ rate: 2 ** 65, burst: '10kb', limit: 1000 }), {
    instanceOf: UsageError,
    message: /^tbf: rate .* is beyond what the kernel's TCA_TBF_RATE64 holds/,
  });
  t.notThrows(() => req({ rate: '1mbit', burst: '10kb', latency: '10ms' }));
});

test('htb default that is not hex text is quoted as given, not with the 0x tc reads it with', (t) => {
  const req = (d: unknown) => qdiscRequest('add', 1, { parent: 'root', handle: '1:', kind: 'htb', options: { default: d as string } });
  t.throws(() => req('x'), { instanceOf: UsageError, message: /^htb default: "x" is not a hex class minor/ });
  t.throws(() => req('0xzz'), { instanceOf: UsageError, message: /^htb default: "0xzz" is not/ });
  const read = (d: string) => decodeQdisc({ type: 0, flags: 0, seq: 0, pid: 0, offset: 0, payload: Buffer.concat(req(d).payload) }).options;
  // tc reads "default 20" as hex: class minor 0x20
  t.like(read('20'), { default: '0x20' });
  t.like(read('0x1f'), { default: '0x1f' });
});
