/**
 * tc's command-line grammar: the words after a kind (`bands 4`, `rate 1mbit
 * ceil 2mbit`, `match ip dport 80 0xffff classid 1:1 action drop`) read into
 * the options object that the kind's codec encodes. One table of keywords
 * per kind; the kinds themselves are codecs and know nothing of words.
 *
 * The library takes words wherever it takes options (`options: ["limit",
 * "1000"]`, read by {@link optionsFromWords}); the CLI does not use them.
 *
 * @module
 */
import { UsageError } from '../netlink/errors.js';
import { parseIntArg } from './args.js';
import { MAX_ACTIONS, parseControlAction } from './actions/common.js';
import { actionKindNames } from './actions/registry.js';
import type { ActionSpec, GactSpec, MirredSpec } from './actions/types.js';
import { parseU32Text } from './filters/common.js';
import type { PortMatch } from './filters/flower.js';
import { IP_FIELDS, type U32Match, type U32Offset } from './filters/u32.js';
import { TCQ_PRIO_BANDS } from './kinds/prio.js';

/** Reads words one at a time; every error names the kind and the word. */
class ArgReader {
  private i = 0;
  /**
   * @param args the words after the kind
   * @param what the kind, for error messages (e.g. `"qdisc htb"`)
   */
  constructor(
    private readonly args: readonly string[],
    private readonly what: string,
  ) {}
  /** More words left. */
  more(): boolean {
    return this.i < this.args.length;
  }
  /** The next word (a keyword). */
  next(): string {
    return this.args[this.i++];
  }
  /** Every word left (taken): what follows `action` belongs to the action list. */
  rest(): string[] {
    const out = this.args.slice(this.i);
    this.i = this.args.length;
    return out;
  }
  /** Look at the next word without taking it. */
  peek(): string | undefined {
    return this.args[this.i];
  }
  /**
   * The value after `keyword`.
   * @throws {UsageError} when there is none
   */
  value(keyword: string): string {
    if (this.i >= this.args.length) throw new UsageError(`${this.what}: "${keyword}" needs a value`);
    return this.args[this.i++];
  }
  /** An integer value after `keyword`, decimal or 0x hex, in [min, max]. @throws {UsageError} */
  int(keyword: string, min = 0, max = 0xffffffff): number {
    const v = this.value(keyword);
    return parseIntArg(v, `${this.what} ${keyword}`, min, max);
  }
  /** @throws {UsageError} naming the unknown word */
  unknown(word: string, expected: string): never {
    throw new UsageError(`${this.what}: unknown argument "${word}" (expected ${expected})`);
  }
}

type Options = Record<string, unknown>;
/** What one keyword does: read its value(s) (the reader stands after the keyword) into the options. */
type Rule = (r: ArgReader, o: Options, w: string) => void;
/** A kind's keywords. */
type Grammar = Readonly<Record<string, Rule>>;

/** The keyword's value, as text, into `key` (the codec parses it: rates, sizes, times, class ids). */
const value =
  (key: string): Rule =>
  (r, o, w) => {
    o[key] = r.value(w);
  };
/** An integer value (decimal or 0x hex) in [min, max] into `key`. */
const int =
  (key: string, min?: number, max?: number): Rule =>
  (r, o, w) => {
    o[key] = r.int(w, min, max);
  };
/** A keyword alone: `key` = `v`. */
const set =
  (key: string, v: unknown): Rule =>
  (_r, o) => {
    o[key] = v;
  };
/** Every word left is the action list. */
const actions: Rule = (r, o) => {
  o.actions = parseActionWords(r.rest());
};
const classid = value('classid');
const skip = { skip_hw: set('skip_hw', true), skip_sw: set('skip_sw', true) };

/** Read `words` with `g`. @throws {UsageError} an unknown word, a missing or bad value */
function read(what: string, g: Grammar, words: readonly string[], o: Options = {}): Options {
  const r = new ArgReader(words, what);
  const keys = Object.keys(g);
  if (!keys.length && words.length) throw new UsageError(`${what} takes no arguments (got "${words.join(' ')}")`);
  while (r.more()) {
    const w = r.next();
    if (!Object.hasOwn(g, w)) r.unknown(w, keys.join(', '));
    g[w](r, o, w);
  }
  return o;
}

/** plug: one action per message. */
const plugAction =
  (action: string): Rule =>
  (r, o, w) => {
    if (o.action && o.action !== action) throw new UsageError(`qdisc plug: only one action per message (got "${o.action}" and "${action}")`);
    o.action = action;
    if (action === 'limit') o.limit = r.value(w);
  };

const fifo: Grammar = { limit: value('limit') };
const none: Grammar = {};

const QDISC: Readonly<Record<string, Grammar>> = {
  prio: {
    bands: int('bands', 2, TCQ_PRIO_BANDS),
    priomap: (r, o) => {
      const map: number[] = [];
      while (r.more() && /^[0-9]+$/.test(r.peek()!)) map.push(parseIntArg(r.next(), 'qdisc prio priomap', 0, TCQ_PRIO_BANDS - 1));
      o.priomap = map;
    },
    multiqueue: set('multiqueue', true),
  },
  pfifo: fifo,
  bfifo: fifo,
  pfifo_head_drop: fifo,
  plug: {
    block: plugAction('buffer'),
    buffer: plugAction('buffer'),
    release: plugAction('release_one'),
    release_one: plugAction('release_one'),
    release_indefinite: plugAction('release_indefinite'),
    limit: plugAction('limit'),
  },
  htb: { default: value('default'), r2q: int('r2q'), direct_qlen: int('direct_qlen'), offload: set('offload', true) },
  tbf: {
    rate: value('rate'),
    burst: value('burst'),
    buffer: value('burst'),
    maxburst: value('burst'),
    limit: value('limit'),
    latency: value('latency'),
    peakrate: value('peakrate'),
    mtu: value('mtu'),
    minburst: value('mtu'),
    mpu: value('mpu'),
    overhead: int('overhead', 0, 0xffff),
    linklayer: value('linklayer'),
  },
  fq_codel: {
    limit: int('limit'),
    flows: int('flows'),
    quantum: int('quantum'),
    target: value('target'),
    interval: value('interval'),
    ce_threshold: value('ce_threshold'),
    memory_limit: value('memory_limit'),
    drop_batch: int('drop_batch'),
    ecn: set('ecn', true),
    noecn: set('ecn', false),
  },
  ingress: none,
  clsact: none,
  noqueue: none,
};

const CLASS: Readonly<Record<string, Grammar>> = {
  htb: {
    rate: value('rate'),
    ceil: value('ceil'),
    burst: value('burst'),
    buffer: value('burst'),
    maxburst: value('burst'),
    cburst: value('cburst'),
    cbuffer: value('cburst'),
    cmaxburst: value('cburst'),
    prio: int('prio', 0, 7),
    quantum: int('quantum'),
    mtu: int('mtu'),
    mpu: int('mpu', 0, 0xffff),
    overhead: int('overhead', 0, 0xffff),
    linklayer: value('linklayer'),
  },
};

/** u32: `match u32|u16|u8 VALUE MASK at [nexthdr+]OFF` or `match ip FIELD ...` (tc's u32 always sends a selector: the list starts empty). */
const u32Match: Rule = (r, o) => {
  const list = o.match as U32Match[];
  const num = (v: string, w: string, max: number) => parseIntArg(v, `filter u32 ${w}`, 0, max);
  const t = r.value('match');
  if (t === 'u32' || t === 'u16' || t === 'u8') {
    const max = t === 'u32' ? 0xffffffff : t === 'u16' ? 0xffff : 0xff;
    const value = num(r.value(t), `${t} value`, max);
    const mask = num(r.value(t), `${t} mask`, max);
    if (r.value(t) !== 'at') throw new UsageError(`filter u32: "match ${t} VALUE MASK" must be followed by "at OFFSET"`);
    let off = r.value('at');
    const nexthdr = off.startsWith('nexthdr+');
    if (nexthdr) off = off.slice(8);
    list.push({ type: t, value, mask, at: parseIntArg(off, 'filter u32 at', -0x80000000, 0x7fffffff), nexthdr });
  } else if (t === 'ip') {
    const f = r.value('ip');
    if (f === 'src' || f === 'dst') list.push({ type: 'ip', field: f, prefix: r.value(f) });
    else if (f in IP_FIELDS) {
      const size = IP_FIELDS[f].size === 8 ? 0xff : 0xffff;
      list.push({ type: 'ip', field: f as 'protocol', value: num(r.value(f), `ip ${f}`, size), mask: num(r.value(f), `ip ${f} mask`, size) });
    } else r.unknown(f, `an ip field: src, dst, ${Object.keys(IP_FIELDS).join(', ')}`);
  } else r.unknown(t, 'u32, u16, u8 or ip after "match"');
};

/** u32: `offset [plus N] [at OFF] [mask M] [shift S] [eat]`. */
const u32Offset: Rule = (r, o) => {
  const off: U32Offset = {};
  for (let p = r.peek(); p === 'plus' || p === 'at' || p === 'mask' || p === 'shift' || p === 'eat'; p = r.peek()) {
    r.next();
    if (p === 'eat') off.eat = true;
    else if (p === 'at') off.at = parseIntArg(r.value('at'), 'filter u32 offset at', -0x8000, 0x7fff);
    else off[p] = parseIntArg(r.value(p), `filter u32 offset ${p}`, 0, p === 'shift' ? 15 : 0xffff);
  }
  o.offset = off;
};

/** flower: a port, `P`, `P/MASK` or `MIN-MAX`. */
const flowerPort: Rule = (r, o, w) => {
  const v = r.value(w);
  const range = /^(\d+)-(\d+)$/.exec(v);
  let port: PortMatch;
  if (range) port = { start: parseIntArg(range[1], `filter flower ${w}`, 1, 0xffff), end: parseIntArg(range[2], `filter flower ${w}`, 1, 0xffff) };
  else {
    const [p, m] = v.split('/');
    const value = parseIntArg(p, `filter flower ${w}`, 0, 0xffff);
    port = m === undefined ? value : { value, mask: parseIntArg(m, `filter flower ${w} mask`, 0, 0xffff) };
  }
  o[w] = port;
};

const FILTER: Readonly<Record<string, Grammar>> = {
  fw: {
    classid,
    flowid: classid,
    indev: value('indev'),
    mask: (r, o, w) => {
      o.mask = parseU32Text(r.value(w), 'fw mask');
    },
  },
  matchall: { classid, flowid: classid, ...skip, action: actions, actions },
  u32: {
    match: u32Match,
    classid,
    flowid: classid,
    divisor: int('divisor', 1, 256),
    ht: value('ht'),
    link: value('link'),
    indev: value('indev'),
    offset: u32Offset,
    action: actions,
    actions,
    ...skip,
  },
  flower: {
    classid,
    flowid: classid,
    indev: value('indev'),
    ...skip,
    eth_type: value('eth_type'),
    ip_proto: value('ip_proto'),
    dst_ip: value('dst_ip'),
    src_ip: value('src_ip'),
    dst_port: flowerPort,
    src_port: flowerPort,
    tcp_flags: value('tcp_flags'),
    action: actions,
    actions,
  },
};

/**
 * A verdict's words: `pass`, `drop`, `goto chain N`, `jump N`.
 * @throws {UsageError} not a verdict
 */
function verdict(r: ArgReader, first: string, what: string): string {
  if (first === 'goto') return `goto ${r.value('goto')} ${r.value('chain')}`;
  if (first === 'jump') return `jump ${r.value('jump')}`;
  parseControlAction(first, what);
  return first;
}

/** gact: `VERDICT [random netrand|determ VERDICT VAL] [index N]`. */
function gactWords(words: readonly string[]): GactSpec {
  const r = new ArgReader(words, 'action gact');
  const spec: GactSpec = { kind: 'gact', control_action: verdict(r, r.value('gact'), 'action gact') };
  while (r.more()) {
    const w = r.next();
    if (w === 'random') {
      const type = r.value('random');
      if (type !== 'netrand' && type !== 'determ') throw new UsageError(`action gact: random type must be "netrand" or "determ", not ${JSON.stringify(type)}`);
      const v = verdict(r, r.value(type), 'action gact');
      spec.prob = { random_type: type, control_action: v, val: r.int('random', 0, 10000) };
    } else if (w === 'index') spec.index = r.int('index');
    else r.unknown(w, 'random or index');
  }
  return spec;
}

/** mirred: `egress|ingress redirect|mirror dev DEV [index N] [VERDICT]`. */
function mirredWords(words: readonly string[]): MirredSpec {
  const r = new ArgReader(words, 'action mirred');
  const w0 = r.value('mirred');
  if (w0 !== 'egress' && w0 !== 'ingress') throw new UsageError(`action mirred: expected "egress" or "ingress", got ${JSON.stringify(w0)}`);
  const w1 = r.value(w0);
  if (w1 !== 'redirect' && w1 !== 'mirror') throw new UsageError(`action mirred: expected "redirect" or "mirror" after "${w0}", got ${JSON.stringify(w1)}`);
  const spec: MirredSpec = { kind: 'mirred', direction: w0, mirred_action: w1 };
  while (r.more()) {
    const w = r.next();
    if (w === 'dev') {
      const d = r.value('dev');
      if (/^\d+$/.test(d)) spec.ifindex = Number(d);
      else spec.to_dev = d;
    } else if (w === 'index') spec.index = r.int('index');
    else spec.control_action = verdict(r, w, 'action mirred');
  }
  if (spec.ifindex === undefined && spec.to_dev === undefined) throw new UsageError('action mirred: "dev DEVICE" is required');
  return spec;
}

const ACTION: Readonly<Record<string, (words: readonly string[]) => ActionSpec>> = { gact: gactWords, mirred: mirredWords };

/** Words that start a verdict: an action group starting with one is a gact (tc's fallback). */
const VERDICT_WORDS = ['continue', 'drop', 'shot', 'pass', 'ok', 'reclassify', 'pipe', 'stolen', 'trap', 'goto', 'jump'];

/**
 * tc's action words, after a filter's first `action` keyword:
 * `mirred egress redirect dev ifb0 [action gact pass ...]`. A group that
 * does not start with a known kind but with a verdict (`action drop`) is a
 * gact, as tc reads it.
 * @throws {UsageError}
 */
export function parseActionWords(words: readonly string[]): ActionSpec[] {
  const groups: string[][] = [[]];
  for (const w of words) {
    if (w === 'action' || w === 'actions') groups.push([]);
    else groups[groups.length - 1].push(w);
  }
  const out: ActionSpec[] = [];
  for (const g of groups) {
    if (g.length === 0) throw new UsageError('"action" must be followed by an action kind (e.g. "mirred egress redirect dev ifb0", "gact pass")');
    const known = actionKindNames().includes(g[0]);
    if (!known && !VERDICT_WORDS.includes(g[0])) throw new UsageError(`unknown action kind "${g[0]}" (known: ${actionKindNames().join(', ')})`);
    const kind = known ? g[0] : 'gact';
    const parse = Object.hasOwn(ACTION, kind) ? ACTION[kind] : undefined;
    if (!parse) throw new UsageError(`action kind '${kind}' takes no arguments here`);
    out.push(parse(known ? g.slice(1) : g));
  }
  if (out.length > MAX_ACTIONS) throw new UsageError(`a filter takes at most ${MAX_ACTIONS} actions`);
  return out;
}

const GRAMMARS = { qdisc: QDISC, class: CLASS, filter: FILTER };

/**
 * tc's words after a kind -> that kind's options object.
 * @param what a qdisc's, a class's or a filter's options
 * @param kind TCA_KIND
 * @param words e.g. `["bands", "4"]`
 * @returns the options, or undefined when synplug has no words for that kind
 * @throws {UsageError} an unknown word, a missing or bad value
 */
export function optionsFromWords(what: 'qdisc' | 'class' | 'filter', kind: string, words: readonly string[]): Options | undefined {
  const g = Object.hasOwn(GRAMMARS[what], kind) ? GRAMMARS[what][kind] : undefined;
  if (!g) return undefined;
  return read(`${what} ${kind}`, g, words, what === 'filter' && kind === 'u32' ? { match: [] } : {});
}
