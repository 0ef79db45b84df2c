/**
 * tc's words after a kind read into that kind's options, as tc's own
 * parsers read them (q_*.c, f_*.c, m_*.c in iproute2): keyword aliases,
 * values left as tc text for the codec, flags, nested grammars (u32
 * match/offset, flower ports, action lists), and the errors.
 */
import test from 'ava';
import { UsageError } from '../../src/netlink/errors.js';
import { optionsFromWords, parseActionWords } from '../../src/tc/index.js';

test('qdisc words: aliases and flags as tc reads them', (t) => {
  t.deepEqual(optionsFromWords('qdisc', 'tbf', ['rate', '1mbit', 'maxburst', '10k', 'latency', '50ms', 'peakrate', '2mbit', 'minburst', '1540']), {
    rate: '1mbit',
    burst: '10k',
    latency: '50ms',
    peakrate: '2mbit',
    mtu: '1540',
  });
  t.deepEqual(optionsFromWords('qdisc', 'prio', ['bands', '5', 'priomap', '1', '2', '4', 'multiqueue']), { bands: 5, priomap: [1, 2, 4], multiqueue: true });
  t.deepEqual(optionsFromWords('qdisc', 'plug', ['limit', '10kb']), { action: 'limit', limit: '10kb' });
  t.deepEqual(optionsFromWords('qdisc', 'plug', ['release']), { action: 'release_one' });
  t.deepEqual(optionsFromWords('qdisc', 'fq_codel', ['limit', '100', 'noecn', 'target', '5ms']), { limit: 100, ecn: false, target: '5ms' });
  t.deepEqual(optionsFromWords('qdisc', 'htb', ['default', '20', 'offload']), { default: '20', offload: true });
  t.deepEqual(optionsFromWords('class', 'htb', ['rate', '1mbit', 'cbuffer', '3k', 'prio', '2']), { rate: '1mbit', cburst: '3k', prio: 2 });
  t.deepEqual(optionsFromWords('qdisc', 'ingress', []), {});
  t.is(optionsFromWords('qdisc', 'sfq', ['perturb', '10']), undefined, 'no words for a kind synplug does not know');
});

test('filter words: u32 matches and offset, flower ports, fw mask, actions', (t) => {
  t.deepEqual(optionsFromWords('filter', 'u32', ['match', 'ip', 'dport', '80', '0xffff', 'match', 'u8', '6', '0xff', 'at', 'nexthdr+9', 'flowid', '1:2']), {
    match: [
      { type: 'ip', field: 'dport', value: 80, mask: 0xffff },
      { type: 'u8', value: 6, mask: 0xff, at: 9, nexthdr: true },
    ],
    classid: '1:2',
  });
  t.deepEqual(optionsFromWords('filter', 'u32', ['offset', 'at', '0', 'mask', '0x0f00', 'shift', '6', 'eat', 'link', '1:']), {
    match: [],
    offset: { at: 0, mask: 0x0f00, shift: 6, eat: true },
    link: '1:',
  });
  t.deepEqual(optionsFromWords('filter', 'flower', ['ip_proto', 'tcp', 'dst_port', '80/0xfff0', 'src_port', '1000-2000']), {
    ip_proto: 'tcp',
    dst_port: { value: 80, mask: 0xfff0 },
    src_port: { start: 1000, end: 2000 },
  });
  t.deepEqual(optionsFromWords('filter', 'fw', ['classid', '1:4', 'mask', '0xff']), { classid: '1:4', mask: 0xff });
  t.deepEqual(optionsFromWords('filter', 'matchall', ['skip_sw', 'action', 'drop']), { skip_sw: true, actions: [{ kind: 'gact', control_action: 'drop' }] });
  t.deepEqual(parseActionWords(['mirred', 'ingress', 'mirror', 'dev', '4', 'index', '2', 'pipe', 'action', 'goto', 'chain', '3']), [
    { kind: 'mirred', direction: 'ingress', mirred_action: 'mirror', ifindex: 4, index: 2, control_action: 'pipe' },
    { kind: 'gact', control_action: 'goto chain 3' },
  ]);
});

test('bad words are UsageErrors naming the kind and the word', (t) => {
  t.throws(() => optionsFromWords('qdisc', 'prio', ['lanes', '3']), {
    instanceOf: UsageError,
    message: /^qdisc prio: unknown argument "lanes" \(expected bands, priomap, multiqueue\)$/,
  });
  t.throws(() => optionsFromWords('qdisc', 'ingress', ['x']), { instanceOf: UsageError, message: 'qdisc ingress takes no arguments (got "x")' });
  t.throws(() => optionsFromWords('qdisc', 'tbf', ['rate']), { instanceOf: UsageError, message: 'qdisc tbf: "rate" needs a value' });
  t.throws(() => optionsFromWords('class', 'htb', ['prio', '8']), { instanceOf: UsageError, message: /^class htb prio: 8 is out of range \(0\.\.7\)$/ });
  t.throws(() => optionsFromWords('qdisc', 'plug', ['block', 'release']), { instanceOf: UsageError, message: /only one action/ });
  t.throws(() => optionsFromWords('filter', 'u32', ['match', 'u16', '1', '1', 'off', '2']), { instanceOf: UsageError, message: /followed by "at OFFSET"/ });
  t.throws(() => optionsFromWords('qdisc', 'prio', ['toString']), { instanceOf: UsageError, message: /unknown argument "toString"/ });
  t.throws(() => parseActionWords(['police', 'rate', '1mbit']), { instanceOf: UsageError, message: /unknown action kind "police"/ });
});
