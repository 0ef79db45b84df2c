/**
 * Property tests: no byte string makes the core decoders or any registered
 * body decoder throw anything but NetlinkDecodeError, or run for long.
 * Mutations start from every captured datagram.
 */
import test from 'ava';
import fc from 'fast-check';
import { captureNames, loadCapture } from '../helpers/captures.js';
import {
  parseMessages,
  parseErrorReply,
  doneErrno,
  encodeMessage,
  NLMSG_ERROR,
  NETLINK_ROUTE,
  NETLINK_SOCK_DIAG,
  NETLINK_NETFILTER,
  type NetlinkMessage,
} from '../../src/netlink/message.js';
import { parseAttributes } from '../../src/netlink/attributes.js';
import { NetlinkDecodeError } from '../../src/netlink/errors.js';
import { bodyDecoder, type BodyDecoder } from '../../src/netlink/protocols.js';
import { describeDatagram } from '../../src/netlink/describe.js';
// every module that registers body decoders
import '../../src/netlink/route/index.js';
import '../../src/netlink/sockdiag.js';
import '../../src/tc/index.js';
import '../../src/iptables/index.js';

const captured = captureNames().flatMap((n) => loadCapture(n).datagrams.map((d) => ({ name: `${n}#${d.index}`, protocol: d.protocol, bytes: d.bytes })));

/** Every registered decoder, found by asking the registry for each type. */
const registered: Array<{ protocol: number; type: number; dec: BodyDecoder }> = [];
for (const protocol of [NETLINK_ROUTE, NETLINK_SOCK_DIAG, NETLINK_NETFILTER]) {
  for (let type = 0; type <= 0x1fff; type++) {
    const dec = bodyDecoder(protocol, type);
    if (dec) registered.push({ protocol, type, dec });
  }
}
const decodersOf = (protocol: number): typeof registered => registered.filter((r) => r.protocol === protocol);

function onlyDecodeErrors(f: () => unknown, what: string): void {
  try {
    f();
  } catch (e) {
    if (!(e instanceof NetlinkDecodeError)) {
      throw new Error(`${what} threw ${(e as Error)?.constructor?.name}: ${(e as Error)?.message}`, { cause: e });
    }
    if (!Number.isInteger(e.offset) || e.offset < 0) throw new Error(`${what}: NetlinkDecodeError with offset ${e.offset}`);
  }
}

// CPU time (not wall time: the machine is shared) one datagram may take; a loop would blow far past it.
const LIMIT_MS = 1000;

/** fc.assert, but a failure shows what threw (decoder, error class, message) and the counterexample. */
function holds(t: import('ava').ExecutionContext, prop: fc.IProperty<unknown[]>, numRuns: number): void {
  const out = fc.check(prop, { numRuns });
  if (out.failed) {
    const err = out.errorInstance as Error | undefined;
    t.fail(
      `${err?.message}\ncause: ${String((err?.cause as Error | undefined)?.stack ?? '')}\ncounterexample: ${fc.stringify(out.counterexample)}\nseed ${out.seed} path ${out.counterexamplePath}`,
    );
  } else {
    t.pass();
  }
}

/** Run every decoder on a datagram; each must end quickly and throw nothing but NetlinkDecodeError. */
function exercise(protocol: number, bytes: Buffer, allDecoders: boolean): void {
  const t0 = process.cpuUsage();
  let msgs: NetlinkMessage[] = [];
  onlyDecodeErrors(() => {
    msgs = parseMessages(bytes);
  }, 'parseMessages');
  onlyDecodeErrors(() => describeDatagram(protocol, bytes), 'describeDatagram');
  for (const m of msgs) {
    if (m.type === NLMSG_ERROR) onlyDecodeErrors(() => parseErrorReply(m), 'parseErrorReply');
    onlyDecodeErrors(() => parseErrorReply({ ...m, type: NLMSG_ERROR }), 'parseErrorReply (any message)');
    onlyDecodeErrors(() => doneErrno(m), 'doneErrno');
    for (const skip of [0, 4, 8, 16, 20, 72]) onlyDecodeErrors(() => parseAttributes(m.payload.subarray(skip), skip), `parseAttributes@${skip}`);
    const own = bodyDecoder(protocol, m.type);
    if (own) onlyDecodeErrors(() => JSON.stringify(own(m), (_k, v) => (typeof v === 'bigint' ? v.toString() : v)), `decoder ${protocol}:${m.type}`);
    if (allDecoders) {
      for (const r of decodersOf(protocol)) onlyDecodeErrors(() => r.dec({ ...m, type: r.type }), `decoder ${r.protocol}:${r.type}`);
    }
  }
  const used = process.cpuUsage(t0);
  const ms = (used.user + used.system) / 1000;
  if (ms > LIMIT_MS) throw new Error(`decoding took ${ms.toFixed(0)} ms of CPU`);
}

test('the registry holds decoders for each protocol', (t) => {
  t.true(decodersOf(NETLINK_ROUTE).length >= 7); // links, addresses, and tc's
  t.true(decodersOf(NETLINK_SOCK_DIAG).length >= 1);
  t.true(registered.length > 10);
});

test('every captured datagram decodes without error in every decoder that owns it', (t) => {
  for (const c of captured) {
    for (const m of parseMessages(c.bytes)) {
      const dec = bodyDecoder(c.protocol, m.type);
      if (dec) t.notThrows(() => dec(m), c.name);
      if (m.type === NLMSG_ERROR) t.notThrows(() => parseErrorReply(m), c.name);
    }
  }
});

type Op = { kind: 'flip' | 'set' | 'trunc' | 'insert' | 'delete' | 'len16' | 'len32'; pos: number; val: number };
const op = fc.record({
  kind: fc.constantFrom<Op['kind']>('flip', 'set', 'trunc', 'insert', 'delete', 'len16', 'len32'),
  pos: fc.nat(),
  val: fc.integer({ min: 0, max: 0xffff }),
});

function mutate(src: Buffer, ops: Op[]): Buffer {
  let b = Buffer.from(src);
  for (const o of ops) {
    if (b.length === 0) break;
    const p = o.pos % b.length;
    switch (o.kind) {
      case 'flip':
        b[p] ^= 1 << (o.val % 8);
        break;
      case 'set':
        b[p] = o.val & 0xff;
        break;
      case 'trunc':
        b = b.subarray(0, p);
        break;
      case 'insert':
        b = Buffer.concat([b.subarray(0, p), Buffer.alloc((o.val % 8) + 1, o.val & 0xff), b.subarray(p)]);
        break;
      case 'delete':
        b = Buffer.concat([b.subarray(0, p), b.subarray(p + (o.val % 8) + 1)]);
        break;
      // lengths are where decoders go wrong: write small/odd/huge values at 4-aligned spots
      case 'len16': {
        const q = p & ~3;
        if (q + 2 <= b.length) b.writeUInt16LE([0, 1, 3, 4, 5, 7, 8, 0xffff, o.val][o.val % 9], q);
        break;
      }
      case 'len32': {
        const q = p & ~3;
        if (q + 4 <= b.length) b.writeUInt32LE([0, 15, 16, 17, 20, 0xffffffff, o.val][o.val % 7], q);
        break;
      }
    }
  }
  return b;
}

test('mutated captured datagrams: only NetlinkDecodeError, never a hang (every registered decoder tried)', (t) => {
  holds(
    t,
    fc.property(fc.constantFrom(...captured), fc.array(op, { minLength: 1, maxLength: 6 }), (c, ops) => {
      exercise(c.protocol, mutate(c.bytes, ops), true);
    }) as fc.IProperty<unknown[]>,
    4000,
  );
});

test('mutations inside one message body (header kept valid): only NetlinkDecodeError', (t) => {
  const msgs = captured.flatMap((c) => parseMessages(c.bytes).map((m) => ({ protocol: c.protocol, m })));
  holds(
    t,
    fc.property(fc.constantFrom(...msgs), fc.array(op, { minLength: 1, maxLength: 8 }), ({ protocol, m }, ops) => {
      const body = mutate(m.payload, ops);
      exercise(protocol, encodeMessage({ type: m.type, flags: m.flags, seq: m.seq, pid: m.pid, payload: body }), true);
    }) as fc.IProperty<unknown[]>,
    4000,
  );
});

test('random datagrams and random bodies behind valid headers: only NetlinkDecodeError', (t) => {
  const types = registered.map((r) => r);
  holds(
    t,
    fc.property(
      fc.constantFrom(...types),
      fc.integer({ min: 0, max: 0xffff }),
      fc.uint8Array({ maxLength: 300 }),
      fc.uint8Array({ maxLength: 200 }),
      (r, flags, body, junk) => {
        exercise(r.protocol, encodeMessage({ type: r.type, flags, payload: Buffer.from(body) }), false);
        exercise(r.protocol, Buffer.from(junk), false);
      },
    ) as fc.IProperty<unknown[]>,
    4000,
  );
});
