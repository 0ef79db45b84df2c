/**
 * Actions (mirred, gact, unknown kinds), flower and the u32 additions for
 * the inbound hold: round trips (encode -> decode -> the same values), tc's
 * command-line words, bad input as UsageError, the SYN-match builder, and
 * property tests (mutated action lists and flower/u32 options never make a
 * decoder throw anything but NetlinkDecodeError, and never hang).
 */
import test from 'ava';
import fc from 'fast-check';
import { loadCapture, requests, replies } from '../helpers/captures.js';
import { untyped } from '../helpers/untyped.js';
import type { ActionEntry } from '../../src/tc/index.js';
import { NetlinkDecodeError, UsageError } from '../../src/netlink/errors.js';
import { attr, nested, str, NLA_F_NESTED } from '../../src/netlink/attributes.js';
import { parseMessages, type NetlinkMessage } from '../../src/netlink/message.js';
import { decodeFilter, encodeTcmsg, filterRequest, formatFilterText, TCA_KIND, TCA_OPTIONS } from '../../src/tc/index.js';
import { decodeActionList, encodeActionList, formatActionList } from '../../src/tc/actions/list.js';
import { parseActionWords } from '../../src/tc/words.js';
import { actionKind, actionKindNames, actionModule } from '../../src/tc/actions/registry.js';
import { parseControlAction, controlActionJson } from '../../src/tc/actions/common.js';
import {
  TC_ACT_STOLEN,
  TC_ACT_PIPE,
  TC_ACT_OK,
  TC_ACT_SHOT,
  TC_ACT_UNSPEC,
  TC_ACT_GOTO_CHAIN,
  TCA_EGRESS_REDIR,
  TCA_INGRESS_MIRROR,
  TCA_ACT_KIND,
  TCA_ACT_OPTIONS,
} from '../../src/tc/actions/constants.js';
import { u32SynMatch, u32Filter, type U32Options } from '../../src/tc/filters/u32.js';
import { flowerSynMatch } from '../../src/tc/filters/flower.js';

const RTM_NEWTFILTER = 44;
const TCA_U32_ACT = 7;

function msg(payload: Buffer[]): NetlinkMessage {
  return { type: RTM_NEWTFILTER, flags: 0, seq: 0, pid: 0, offset: 0, payload: Buffer.concat(payload) };
}

/** A filter message (as the kernel would echo it) built from our request for a spec. */
function asMessage(kind: string, options: Record<string, unknown>, parent = 'ingress', protocol = 'ip'): NetlinkMessage {
  return msg(filterRequest('add', 5, { parent, protocol, pref: 1, kind, options }).payload);
}

test('registry: mirred and gact are registered; modules act_<kind>', (t) => {
  t.deepEqual(actionKindNames(), ['gact', 'mirred']);
  t.is(actionKind('mirred')!.kind, 'mirred');
  t.is(actionModule('gact'), 'act_gact');
  t.is(actionModule('skbedit'), 'act_skbedit');
});

test('verdicts: tc words <-> TC_ACT_* (pass/ok, drop/shot, continue, pipe, goto chain)', (t) => {
  t.is(parseControlAction('pass', 'x'), TC_ACT_OK);
  t.is(parseControlAction('ok', 'x'), TC_ACT_OK);
  t.is(parseControlAction('drop', 'x'), TC_ACT_SHOT);
  t.is(parseControlAction('shot', 'x'), TC_ACT_SHOT);
  t.is(parseControlAction('continue', 'x'), TC_ACT_UNSPEC);
  t.is(parseControlAction('goto chain 3', 'x'), TC_ACT_GOTO_CHAIN | 3);
  t.deepEqual(controlActionJson(TC_ACT_GOTO_CHAIN | 3), { type: 'goto', chain: 3 });
  t.deepEqual(controlActionJson(TC_ACT_UNSPEC), { type: 'continue' });
  t.throws(() => parseControlAction('accept', 'x'), { instanceOf: UsageError });
});

test('mirred: egress/ingress × redirect/mirror round-trip; redirect is stolen, mirror pipe by default', (t) => {
  for (const direction of ['egress', 'ingress'] as const) {
    for (const mirred_action of ['redirect', 'mirror'] as const) {
      const f = decodeFilter(
        asMessage('u32', { match: [{ type: 'u32', value: 0, mask: 0, at: 0 }], actions: [{ kind: 'mirred', direction, mirred_action, ifindex: 9, index: 4 }] }),
      );
      const a = (f.options!.actions as ActionEntry[])[0];
      t.like(a, { order: 1, kind: 'mirred', mirred_action, direction, ifindex: 9, to_dev: 'if9', index: 4, ref: 0, bind: 0 });
      t.deepEqual(a.control_action, { type: mirred_action === 'redirect' ? 'stolen' : 'pipe' });
      const text = formatActionList([a]);
      t.true(
        text.startsWith(
          `\n\taction order 1: mirred (${direction === 'egress' ? 'Egress' : 'Ingress'} ${mirred_action === 'redirect' ? 'Redirect' : 'Mirror'} to device if9) ${mirred_action === 'redirect' ? 'stolen' : 'pipe'}\n\tindex 4 ref 0 bind 0\n`,
        ),
        text,
      );
    }
  }
  // the struct: tc_gen.action then eaction, ifindex
  const b = encodeActionList(TCA_U32_ACT, [{ kind: 'mirred', direction: 'ingress', mirred_action: 'mirror', ifindex: 2 }]);
  const parms = b.subarray(b.length - 28);
  t.is(parms.readInt32LE(8), TC_ACT_PIPE);
  t.is(parms.readInt32LE(20), TCA_INGRESS_MIRROR);
  t.is(parms.readUInt32LE(24), 2);
  const r = encodeActionList(TCA_U32_ACT, [{ kind: 'mirred', direction: 'egress', mirred_action: 'redirect', ifindex: 2 }]).subarray(-28);
  t.is(r.readInt32LE(8), TC_ACT_STOLEN);
  t.is(r.readInt32LE(20), TCA_EGRESS_REDIR);
});

test('gact: verdicts and the random part round-trip in tc -j fields', (t) => {
  for (const v of ['pass', 'drop', 'continue', 'reclassify', 'pipe', 'trap', 'goto chain 7']) {
    const [a] = decodeActionList(...whole(encodeActionList(TCA_U32_ACT, [{ kind: 'gact', control_action: v }])));
    t.deepEqual(a.control_action, controlActionJson(parseControlAction(v, 'x')), v);
    t.deepEqual(a.prob, { random_type: 'none', control_action: { type: 'pass' }, val: 0 });
  }
  const [a] = decodeActionList(
    ...whole(encodeActionList(TCA_U32_ACT, [{ kind: 'gact', control_action: 'pass', prob: { random_type: 'netrand', control_action: 'drop', val: 25 } }])),
  );
  t.deepEqual(a.prob, { random_type: 'netrand', control_action: { type: 'drop' }, val: 25 });
  t.is(formatActionList([a]), '\n\taction order 1: gact action pass\n\t random type netrand drop val 25\n\t index 0 ref 0 bind 0\n');
});

/** The payload of an encoded list attribute, as decodeActionList's arguments. */
function whole(attrBuf: Buffer): [Buffer, number, number, number] {
  return [attrBuf, 4, attrBuf.length, 0];
}

test('an unknown action kind decodes as its kind plus the raw option bytes; the list is sorted by order', (t) => {
  const unknown = nested(2, [str(TCA_ACT_KIND, 'skbedit'), attr(TCA_ACT_OPTIONS | NLA_F_NESTED, Buffer.from('0800010001000000', 'hex'))]);
  const known = encodeActionList(TCA_U32_ACT, [{ kind: 'gact', control_action: 'drop' }]).subarray(4);
  const list = nested(TCA_U32_ACT, [unknown, known]);
  const acts = decodeActionList(...whole(list));
  t.deepEqual(
    acts.map((a) => a.order),
    [1, 2],
  );
  t.deepEqual(acts[1], { order: 2, kind: 'skbedit', raw: '0800010001000000' });
  t.regex(formatActionList(acts), /action order 2: skbedit options 0800010001000000/);
});

test('tc words: "action mirred egress redirect dev ifb0 action drop" (a bare verdict is a gact, as tc reads it)', (t) => {
  t.deepEqual(parseActionWords(['mirred', 'egress', 'redirect', 'dev', 'ifb0', 'action', 'drop']), [
    { kind: 'mirred', direction: 'egress', mirred_action: 'redirect', to_dev: 'ifb0' },
    { kind: 'gact', control_action: 'drop' },
  ]);
  t.deepEqual(parseActionWords(['gact', 'pass', 'random', 'determ', 'drop', '10', 'index', '3']), [
    { kind: 'gact', control_action: 'pass', prob: { random_type: 'determ', control_action: 'drop', val: 10 }, index: 3 },
  ]);
  for (const bad of [[], ['nat'], ['mirred', 'sideways'], ['mirred', 'egress', 'redirect'], ['gact', 'accept']]) {
    t.throws(() => parseActionWords(bad), { instanceOf: UsageError }, bad.join(' '));
  }
});

test('bad action specs are UsageErrors: unknown kind or field, missing device, a name not resolved, 33 actions', (t) => {
  const bad: unknown[] = [
    [{ kind: 'nat' }],
    [{ kind: 'mirred', direction: 'egress', mirred_action: 'redirect' }],
    [{ kind: 'mirred', direction: 'egress', mirred_action: 'redirect', to_dev: 'ifb0' }],
    [{ kind: 'mirred', direction: 'up', mirred_action: 'redirect', ifindex: 1 }],
    [{ kind: 'mirred', direction: 'egress', mirred_action: 'redirect', ifindex: 1, dev: 'x' }],
    [{ kind: 'gact' }],
    [{ kind: 'gact', control_action: 'pass', prob: { random_type: 'x', control_action: 'drop', val: 1 } }],
    [{ kind: 'gact', control_action: 'pass', prob: { random_type: 'netrand', control_action: 'drop', val: 10001 } }],
    [],
    Array.from({ length: 33 }, () => ({ kind: 'gact', control_action: 'pass' })),
    'gact pass',
    [null],
  ];
  for (const b of bad) t.throws(() => untyped(encodeActionList)(TCA_U32_ACT, b), { instanceOf: UsageError }, JSON.stringify(b));
});

test('u32: an option that does not exist, or a match given as a string or { ip: { dst } }, is a UsageError', (t) => {
  const bad: unknown[] = [
    { mtach: [] },
    { match: 'ip dst 169.254.0.1' },
    { match: [{ ip: { dst: '169.254.0.1' } }] },
    { match: { type: 'u8', value: 1, mask: 1, at: 0 } },
    { match: ['ip dst 169.254.3.4'] },
    { match: [{ type: 'ip', field: 'dest', prefix: '169.254.3.4' }] },
    { match: [{ type: 'u16', value: 1, mask: 1 }] },
    { match: [{ type: 'ip', field: 'dst' }] },
    { offset: { at: 0, mask: 0x0f00, shift: 16 } },
    { offset: { off: 1 } },
    { actions: 'drop' },
    { link: 1 },
    { ht: 0x100000 },
    { indev: 3 },
    { skip_hw: 'yes' },
  ];
  for (const b of bad)
    t.throws(() => untyped(filterRequest)('add', 1, { parent: 'ingress', kind: 'u32', options: b }), { instanceOf: UsageError }, JSON.stringify(b));
  // the kind's own encoder checks too (a caller that skips the registry)
  for (const b of bad) t.throws(() => untyped(u32Filter.encodeOptions!)(b), { instanceOf: UsageError }, `encodeOptions ${JSON.stringify(b)}`);
});

test('u32 offset: "offset at 0 mask 0x0f00 shift 6 eat" + link round-trips and prints as tc does', (t) => {
  const o: U32Options = { match: [{ type: 'ip', field: 'protocol', value: 6, mask: 0xff }], link: '1:', offset: { at: 0, mask: 0x0f00, shift: 6, eat: true } };
  const f = decodeFilter(asMessage('u32', o as Record<string, unknown>));
  t.like(f.options, { link: '1:', offset_mask: 'f00', offset_shift: 6, offset_off: 0, eat: true });
  t.regex(formatFilterText(f), /link 1: \n {2}match 00060000\/00ff0000 at 8\n {4}offset 0f00>>6 at 0 {2}eat /);
  const words = ['match', 'ip', 'protocol', '6', '0xff', 'link', '1:', 'offset', 'at', '0', 'mask', '0x0f00', 'shift', '6', 'eat'];
  t.deepEqual(
    Buffer.concat(filterRequest('add', 5, { parent: 'ingress', protocol: 'ip', pref: 1, kind: 'u32', options: words }).payload),
    Buffer.concat(filterRequest('add', 5, { parent: 'ingress', protocol: 'ip', pref: 1, kind: 'u32', options: o as Record<string, unknown> }).payload),
  );
});

test('u32SynMatch: IPv4 = hash table + header-length link + TCP node (SYN set, ACK clear, dport) with the actions; IPv6 = one node', (t) => {
  const act = [{ kind: 'mirred', direction: 'egress', mirred_action: 'redirect', ifindex: 3 }];
  const v4 = u32SynMatch({ family: 'inet', dport: 16000, dst: '169.254.88.1', actions: act });
  t.is(v4.protocol, 'ip');
  t.is(v4.filters.length, 3);
  t.deepEqual(v4.filters[0], { handle: '1:', options: { divisor: 1 } });
  const link = decodeFilter(asMessage('u32', v4.filters[1].options as Record<string, unknown>)).options!;
  t.like(link, { link: '1:', offset_mask: 'f00', offset_shift: 6, offset_off: 0, eat: true });
  t.deepEqual(
    (link.match as Array<Record<string, unknown>>).map((m) => `${m.value}/${m.mask}@${m.off}`),
    ['60000/ff0000@8', '0/1fff@4', 'a9fe5801/ffffffff@16'],
  );
  const tcp = decodeFilter(asMessage('u32', v4.filters[2].options as Record<string, unknown>)).options!;
  t.deepEqual(
    (tcp.match as Array<Record<string, unknown>>).map((m) => `${m.value}/${m.mask}@${m.off}`),
    ['3e80/ffff@0', '20000/120000@12'],
  );
  t.true(tcp.terminal);
  t.like((tcp.actions as Array<Record<string, unknown>>)[0], { kind: 'mirred', ifindex: 3, mirred_action: 'redirect' });
  const v6 = u32SynMatch({ family: 'inet6', dport: 443, dst: 'fd00:88::1', actions: act });
  t.is(v6.protocol, 'ipv6');
  t.is(v6.filters.length, 1);
  const n6 = decodeFilter(asMessage('u32', v6.filters[0].options as Record<string, unknown>, 'ingress', 'ipv6')).options!;
  t.deepEqual(
    (n6.match as Array<Record<string, unknown>>).map((m) => `${m.value}/${m.mask}@${m.off}`),
    ['600/ff00@4', 'fd000088/ffffffff@24', '0/ffffffff@28', '0/ffffffff@32', '1/ffffffff@36', '1bb/ffff@40', '20000/120000@52'],
  );
  for (const bad of [
    { family: 'inet', dport: 0 },
    { family: 'inet', dport: 65536 },
    { family: 'inet', dport: 80, dst: 'fd00::1' },
    { family: 'inet6', dport: 80, dst: '169.254.0.1' },
    { family: 'ipx', dport: 80 },
    { family: 'inet', dport: 80, port: 1 },
    { family: 'inet', dport: 80, htid: 0x800 },
  ]) {
    t.throws(() => untyped(u32SynMatch)(bad), { instanceOf: UsageError }, JSON.stringify(bad));
  }
});

test('flower: keys round-trip in tc -j fields (addresses with prefixes, ports, tcp_flags with a mask)', (t) => {
  const f = decodeFilter(
    asMessage(
      'flower',
      {
        eth_type: 'ipv4',
        ip_proto: 'tcp',
        dst_ip: '169.254.88.0/24',
        src_ip: '169.254.1.2',
        dst_port: 16000,
        src_port: { value: 0x100, mask: 0xff00 },
        tcp_flags: '0x2/0x12',
        classid: '1:4',
        skip_hw: true,
        actions: [{ kind: 'gact', control_action: 'drop' }],
      },
      'ingress',
      'ip',
    ),
  );
  t.like(f.options, {
    classid: '1:4',
    skip_hw: true,
    keys: {
      eth_type: 'ipv4',
      ip_proto: 'tcp',
      dst_ip: '169.254.88.0/24',
      src_ip: '169.254.1.2',
      dst_port: 16000,
      src_port: 256,
      src_port_mask: 'ff00',
      tcp_flags: '0x2/12',
    },
  });
  t.regex(
    formatFilterText(f),
    /classid 1:4 \n {2}eth_type ipv4\n {2}ip_proto tcp\n {2}dst_ip 169\.254\.88\.0\/24\n {2}src_ip 169\.254\.1\.2\n {2}dst_port 16000\n {2}src_port 256\/0xff00\n {2}tcp_flags 0x2\/12\n {2}skip_hw\n\taction order 1: gact action drop/,
  );
  const range = decodeFilter(asMessage('flower', { eth_type: 'ipv4', ip_proto: 'udp', src_port: { start: 1000, end: 2000 } }, 'ingress', 'ip'));
  t.deepEqual((range.options!.keys as Record<string, unknown>).src_port, { start: 1000, end: 2000 });
  t.regex(formatFilterText(range), /\n {2}src_port 1000-2000/);
  t.deepEqual(
    Buffer.concat(
      filterRequest('add', 1, { parent: 'ingress', protocol: 'ip', kind: 'flower', options: ['eth_type', 'ipv4', 'ip_proto', 'udp', 'src_port', '1000-2000'] })
        .payload,
    ),
    Buffer.concat(
      filterRequest('add', 1, {
        parent: 'ingress',
        protocol: 'ip',
        kind: 'flower',
        options: { eth_type: 'ipv4', ip_proto: 'udp', src_port: { start: 1000, end: 2000 } },
      }).payload,
    ),
  );
  const v6 = decodeFilter(asMessage('flower', { eth_type: 'ipv6', ip_proto: 6, dst_ip: 'fd00:88::/64', tcp_flags: 2 }, 'ingress', 'ipv6'));
  t.like(v6.options, { keys: { eth_type: 'ipv6', ip_proto: 'tcp', dst_ip: 'fd00:88::/64', tcp_flags: '0x2/fff' } });
  for (const bad of [
    { ip_proto: 'tcp' },
    { eth_type: 'ipv4', dst_port: 80 },
    { eth_type: 'ipv4', ip_proto: 'tcp', dst_ip: 'fd00::1' },
    { eth_type: 'ipv4', ip_proto: 'udp', tcp_flags: 2 },
    { eth_type: 'ipv4', ip_proto: 'tcp', tcp_flags: '0x2/0x1012' },
    { eth_type: 'ipv4', dport: 80 },
    { eth_type: 'ipv4', skip_hw: true, skip_sw: true },
    { eth_type: 'ipv4', ip_proto: 'tcp', dst_port: { start: 2000, end: 1000 } },
    { eth_type: { v: 4 } },
    { eth_type: 'ipv4', ip_proto: ['tcp'] },
    { eth_type: 'ipv4', classid: {} },
    { eth_type: 'ipv4', ip_proto: 'tcp', dst_port: null },
    { eth_type: 'ipv4', dst_ip: 1 },
  ]) {
    t.throws(() => untyped(filterRequest)('add', 1, { parent: 'ingress', kind: 'flower', options: bad }), { instanceOf: UsageError }, JSON.stringify(bad));
  }
});

/* ---- properties ---- */

const MAX_MS = 2000;

function decodesOrDecodeError(m: NetlinkMessage): void {
  const t0 = performance.now();
  try {
    formatFilterText(decodeFilter(m), { stats: true });
  } catch (e) {
    if (!(e instanceof NetlinkDecodeError)) throw e;
  }
  if (performance.now() - t0 > MAX_MS) throw new Error('decoding hung');
}

/** Captured filter messages that carry actions (43, 44, 45 requests; 46, 47, 48 dumps). */
const withActions: Buffer[] = [
  '43_u32_mirred_add',
  '44_flower_mirred_add',
  '45_matchall_gact_add',
  '46_filter_dump_ingress',
  '47_filter_json_ingress',
  '48_filter_dump_egress',
]
  .flatMap((n) => [...requests(loadCapture(n)), ...replies(loadCapture(n))])
  .flatMap((d) =>
    parseMessages(d.bytes)
      .filter((m) => m.type === RTM_NEWTFILTER && m.payload.length > 60)
      .map((m) => Buffer.from(m.payload)),
  );

test('property: captured filters with actions, bytes flipped / cut / extended, decode or throw only NetlinkDecodeError', (t) => {
  t.true(withActions.length >= 6, String(withActions.length));
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: withActions.length - 1 }),
      fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 6 }),
      fc.integer({ min: -12, max: 12 }),
      (i, flips, cut) => {
        const src = withActions[i];
        let b = Buffer.from(src);
        for (const [at, v] of flips) b[20 + (at % (b.length - 20))] = v;
        b = cut < 0 ? b.subarray(0, Math.max(20, b.length + cut)) : Buffer.concat([b, Buffer.alloc(cut, 0xab)]);
        decodesOrDecodeError(msg([b]));
      },
    ),
    { numRuns: 4000 },
  );
  t.pass();
});

test('property: action lists of random kinds with random option bytes decode or throw only NetlinkDecodeError', (t) => {
  const kinds = ['mirred', 'gact', 'skbedit', ''];
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.integer({ min: 0, max: 40 }), fc.constantFrom(...kinds), fc.uint8Array({ maxLength: 80 }), fc.uint8Array({ maxLength: 60 })), {
        maxLength: 5,
      }),
      fc.constantFrom('u32', 'flower', 'matchall', 'fw'),
      (items, kind) => {
        const list = items.map(([order, k, opts, stats]) =>
          nested(order, [str(TCA_ACT_KIND, k), attr(TCA_ACT_OPTIONS | NLA_F_NESTED, Buffer.from(opts)), attr(4, Buffer.from(stats))]),
        );
        const actType = { u32: 7, flower: 3, matchall: 2, fw: 4 }[kind];
        decodesOrDecodeError(
          msg([encodeTcmsg({ ifindex: 1, handle: 1, parent: 0xfffffff2, info: 0x10008 }), str(TCA_KIND, kind), nested(TCA_OPTIONS, [nested(actType, list)])]),
        );
      },
    ),
    { numRuns: 3000 },
  );
  t.pass();
});

test('property: flower options of random key attributes decode or throw only NetlinkDecodeError', (t) => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 90 }), fc.uint8Array({ maxLength: 20 })), { maxLength: 12 }), (attrs) => {
      decodesOrDecodeError(
        msg([
          encodeTcmsg({ ifindex: 1, handle: 1, parent: 0xfffffff2, info: 0x1dd86 }),
          str(TCA_KIND, 'flower'),
          nested(
            TCA_OPTIONS,
            attrs.map(([ty, b]) => attr(ty, Buffer.from(b))),
          ),
        ]),
      );
    }),
    { numRuns: 3000 },
  );
  t.pass();
});

test('several ports: u32SynMatch shares the IPv4 table (one TCP node per port), IPv6 one node per port; flowerSynMatch one filter per port', (t) => {
  const v4 = u32SynMatch({ family: 'inet', dport: [80, 443], htid: 0x2a });
  t.is(v4.filters.length, 4);
  t.deepEqual(
    v4.filters.map((f) => f.options.ht ?? f.handle ?? f.options.link),
    ['2a:', '2a:', '2a:', '2a:'],
  );
  t.deepEqual(
    v4.filters.slice(2).map((f) => (f.options.match as unknown as Array<{ value: number }>)[0].value),
    [80, 443],
  );
  t.is(u32SynMatch({ family: 'inet6', dport: [80, 443, 8080] }).filters.length, 3);
  const fl = flowerSynMatch({
    family: 'inet6',
    dport: [80, 443],
    dst: 'fd00:78::1',
    actions: [{ kind: 'mirred', direction: 'egress', mirred_action: 'redirect', to_dev: 'ifb0' }],
  });
  t.is(fl.protocol, 'ipv6');
  t.deepEqual(
    fl.filters.map((f) => f.options.dst_port),
    [80, 443],
  );
  const f = decodeFilter(
    asMessage(
      'flower',
      { ...fl.filters[1].options, actions: [{ kind: 'mirred', direction: 'egress', mirred_action: 'redirect', ifindex: 4 }] },
      'ingress',
      'ipv6',
    ),
  );
  t.like(f.options, { keys: { eth_type: 'ipv6', ip_proto: 'tcp', dst_ip: 'fd00:78::1', dst_port: 443, tcp_flags: '0x2/12' } });
  for (const bad of [
    { family: 'inet', dport: [] },
    { family: 'inet', dport: 80, dst: 'fd00::1' },
    { family: 'inet6', dport: 0 },
  ]) {
    t.throws(() => untyped(flowerSynMatch)(bad), { instanceOf: UsageError }, JSON.stringify(bad));
    t.throws(() => untyped(u32SynMatch)(bad), { instanceOf: UsageError }, JSON.stringify(bad));
  }
});

test('listing without stats (tc without -s): actions keep index/ref/bind but not their times or counters', (t) => {
  const c = loadCapture('46_filter_dump_ingress');
  const m = replies(c)
    .flatMap((d) => parseMessages(d.bytes))
    .find((x) => x.type === RTM_NEWTFILTER && x.payload.length > 300)!;
  const withStats = (decodeFilter(m).options!.actions as Array<Record<string, unknown>>)[0];
  const without = (decodeFilter(m, { stats: false }).options!.actions as ActionEntry[])[0];
  t.like(withStats, { installed: 10, last_used: 1, first_used: 1, stats: { bytes: 60, packets: 1 } });
  t.like(without, { kind: 'mirred', index: 1, ref: 1, bind: 1 });
  for (const k of ['installed', 'last_used', 'first_used', 'stats']) t.false(k in without, k);
  t.is(formatActionList([without]), '\n\taction order 1: mirred (Egress Redirect to device if3) stolen\n\tindex 1 ref 1 bind 1\n');
});

test('property: any options object given to the u32, flower and matchall encoders (and any action list) is encoded or refused with a UsageError, never a TypeError', (t) => {
  const keys = [
    'match',
    'keys',
    'classid',
    'divisor',
    'ht',
    'link',
    'indev',
    'offset',
    'actions',
    'eth_type',
    'ip_proto',
    'dst_ip',
    'src_ip',
    'dst_port',
    'src_port',
    'tcp_flags',
    'skip_hw',
  ];
  const value = fc.oneof(
    fc.anything(),
    fc.array(
      fc.dictionary(
        fc.constantFrom('type', 'kind', 'field', 'value', 'mask', 'at', 'prefix', 'ifindex', 'direction', 'mirred_action', 'control_action', 'to_dev', 'prob'),
        fc.anything(),
      ),
      { maxLength: 3 },
    ),
  );
  fc.assert(
    fc.property(fc.constantFrom('u32', 'flower', 'matchall'), fc.dictionary(fc.constantFrom(...keys), value, { maxKeys: 4 }), (kind, options) => {
      try {
        filterRequest('add', 1, { parent: 'ingress', protocol: 'ip', kind, options });
      } catch (e) {
        if (!(e instanceof UsageError)) throw e;
      }
    }),
    { numRuns: 3000 },
  );
  t.pass();
});
