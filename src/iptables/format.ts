/**
 * Printing what we decode the way nft 1.0.6 prints it: rule expressions
 * turned back into nft statements (`ip saddr 169.254.255.254`,
 * `tcp flags syn / syn,ack`, `meta mark set 0x00000001`...), the ruleset as
 * `nft list ruleset` text ({@link formatRulesetText}) and as
 * `nft -j list ruleset` JSON ({@link formatRulesetJson}).
 *
 * Covered: payload matches on ip/ip6/tcp/udp fields (others as nft's raw
 * `@nh,<bits>,<bits>`), meta matches and `meta ... set`, masked matches
 * (`tcp flags`), set lookups, counters and verdicts, with the dependencies
 * nft hides (`meta l4proto tcp` before a tcp field, `meta nfproto` before an
 * ip field in inet tables), verdict maps (`ip saddr vmap @m`) and map
 * lookups into `meta ... set` (`meta mark set ip saddr map { ... }`).
 * Named sets and maps print with their elements, interval sets merged back
 * into prefixes and ranges (`10.0.0.0/8`, `1000-2000`), map values and
 * verdicts (`80 : 10.0.0.1`, `1.1.1.1 : jump c`), the catch-all `*`, in
 * nft's order and with its line breaks; sets of concatenated keys print
 * their keys as raw hex. Anything else prints as the libnftnl debug line
 * of its expression in brackets, e.g. `[ xt 1=636f6d6d656e74 ]`, so that
 * nothing is hidden.
 *
 * @module
 */
import type { NftChain } from './chain.js';
import type { NftRule } from './rule.js';
import { setDataByteOrder, setItems, setKeyByteOrder, type NftSet, type NftSetItem } from './set.js';
import type { NftData } from './data.js';
import * as C from './constants.js';
import type { NftTable } from './table.js';
import type { Expr, GenericExpr } from './expr/index.js';
import { describeExpr } from './expr/index.js';
import { priorityText } from './names.js';
import { addressText } from './validate.js';

/** A ruleset as listed: flat lists, in kernel dump order. */
export interface NftRuleset {
  tables: NftTable[];
  chains: NftChain[];
  /** named and anonymous sets, with `elements` when listed */
  sets: NftSet[];
  rules: NftRule[];
}

/** One nft statement: its text and its `nft -j` JSON. */
export interface Statement {
  /** e.g. `ip saddr 169.254.255.254` */
  text: string;
  /** e.g. `{ match: { op: '==', left: { payload: { protocol: 'ip', field: 'saddr' } }, right: '169.254.255.254' } }` */
  json: Record<string, unknown>;
}

type ValueType = 'ipv4' | 'ipv6' | 'port' | 'tcpflags' | 'l4proto' | 'nfproto' | 'mark' | 'mark_be' | 'ether' | 'uint_be' | 'uint_he' | 'string' | 'hex';

interface Field {
  /** text of the left side: `ip saddr`, `meta mark`, `@nh,96,32` */
  text: string;
  json: Record<string, unknown>;
  type: ValueType;
  /** the field needs this l3 (`ip`/`ip6`) or l4 (`tcp`/`udp`) dependency */
  l3?: string;
  l4?: string;
  /** an address field loaded only in part (nft's prefix match): the field's full length, bytes */
  fullLen?: number;
}

type Src =
  | { k: 'payload'; base: string; offset: number; len: number }
  | { k: 'meta'; key: string }
  | { k: 'masked'; src: Src; mask: string; xor: string }
  | { k: 'imm'; data: string }
  /** a map lookup's result (`ip saddr map { 1.1.1.1 : 0x5 }`), already printed */
  | { k: 'map'; stmt: Statement; l3?: string; l4?: string };

const L4_NAMES = new Map<number, string>([[1, 'icmp'], [2, 'igmp'], [6, 'tcp'], [17, 'udp'], [33, 'dccp'], [47, 'gre'], [50, 'esp'], [51, 'ah'], [58, 'ipv6-icmp'], [132, 'sctp'], [136, 'udplite']]);
const TCP_FLAGS = ['fin', 'syn', 'rst', 'psh', 'ack', 'urg', 'ecn', 'cwr'];

const NET_FIELDS: Record<string, Record<string, [string, ValueType]>> = {
  ip: { '12/4': ['saddr', 'ipv4'], '16/4': ['daddr', 'ipv4'], '9/1': ['protocol', 'l4proto'], '8/1': ['ttl', 'uint_be'], '2/2': ['length', 'uint_be'], '4/2': ['id', 'uint_be'] },
  ip6: { '8/16': ['saddr', 'ipv6'], '24/16': ['daddr', 'ipv6'], '6/1': ['nexthdr', 'l4proto'], '7/1': ['hoplimit', 'uint_be'], '4/2': ['length', 'uint_be'] },
};
const TH_FIELDS: Record<string, Record<string, [string, ValueType]>> = {
  tcp: { '0/2': ['sport', 'port'], '2/2': ['dport', 'port'], '13/1': ['flags', 'tcpflags'], '4/4': ['sequence', 'uint_be'], '8/4': ['ackseq', 'uint_be'], '14/2': ['window', 'uint_be'] },
  udp: { '0/2': ['sport', 'port'], '2/2': ['dport', 'port'], '4/2': ['length', 'uint_be'] },
};
const META_TYPES: Record<string, ValueType> = { mark: 'mark', l4proto: 'l4proto', nfproto: 'nfproto', iifname: 'string', oifname: 'string' };
const RAW_BASE: Record<string, string> = { link: 'll', network: 'nh', transport: 'th', inner: 'ih' };

function fieldOf(src: Src, ctx: { l3?: string; l4?: string }): Field | undefined {
  if (src.k === 'meta') {
    return { text: `meta ${src.key}`, json: { meta: { key: src.key } }, type: META_TYPES[src.key] ?? 'uint_he' };
  }
  if (src.k === 'payload') {
    const key = `${src.offset}/${src.len}`;
    if (src.base === 'network' && ctx.l3 && NET_FIELDS[ctx.l3]?.[key]) {
      const [f, t] = NET_FIELDS[ctx.l3][key];
      return { text: `${ctx.l3} ${f}`, json: { payload: { protocol: ctx.l3, field: f } }, type: t, l3: ctx.l3 };
    }
    if (src.base === 'network' && ctx.l3) {
      // The first bytes of an address: nft loads only what a prefix needs (`ip daddr 192.168.0.0/16`).
      for (const [k, [f, t]] of Object.entries(NET_FIELDS[ctx.l3] ?? {})) {
        const [off, len] = k.split('/').map(Number);
        if ((t === 'ipv4' || t === 'ipv6') && off === src.offset && src.len < len) {
          return { text: `${ctx.l3} ${f}`, json: { payload: { protocol: ctx.l3, field: f } }, type: t, l3: ctx.l3, fullLen: len };
        }
      }
    }
    if (src.base === 'transport' && ctx.l4 && TH_FIELDS[ctx.l4]?.[key]) {
      const [f, t] = TH_FIELDS[ctx.l4][key];
      return { text: `${ctx.l4} ${f}`, json: { payload: { protocol: ctx.l4, field: f } }, type: t, l4: ctx.l4 };
    }
    const b = RAW_BASE[src.base] ?? src.base;
    return { text: `@${b},${src.offset * 8},${src.len * 8}`, json: { payload: { base: b, offset: src.offset * 8, len: src.len * 8 } }, type: 'hex' };
  }
  return undefined;
}

function flagNames(v: number): string[] {
  return TCP_FLAGS.filter((_, i) => v & (1 << i));
}

/** A value as nft prints it (text) and as nft -j writes it (json). */
function valueOf(hex: string, type: ValueType): { text: string; json: unknown } {
  const b = Buffer.from(hex, 'hex');
  switch (type) {
    case 'ipv4': if (b.length === 4) { const t = addressText(b); return { text: t, json: t }; } break;
    case 'ipv6': if (b.length === 16) { const t = addressText(b); return { text: t, json: t }; } break;
    case 'port': if (b.length === 2) { const n = b.readUInt16BE(0); return { text: String(n), json: n }; } break;
    case 'l4proto': if (b.length === 1) { const n = L4_NAMES.get(b[0]); return n ? { text: n, json: n } : { text: String(b[0]), json: b[0] }; } break;
    case 'nfproto': if (b.length === 1) { const n = b[0] === 2 ? 'ipv4' : b[0] === 10 ? 'ipv6' : undefined; return n ? { text: n, json: n } : { text: String(b[0]), json: b[0] }; } break;
    case 'tcpflags': if (b.length === 1) { const f = flagNames(b[0]); return { text: f.join(','), json: f.length === 1 ? f[0] : f }; } break;
    case 'mark': if (b.length === 4) { const n = b.readUInt32LE(0); return { text: `0x${n.toString(16).padStart(8, '0')}`, json: n }; } break;
    // a mark key of an interval set: nft stores those big-endian
    case 'mark_be': if (b.length === 4) { const n = b.readUInt32BE(0); return { text: `0x${n.toString(16).padStart(8, '0')}`, json: n }; } break;
    case 'ether': if (b.length === 6) { const t = [...b].map((x) => x.toString(16).padStart(2, '0')).join(':'); return { text: t, json: t }; } break;
    case 'uint_be': if (b.length <= 4 && b.length > 0) { const n = b.readUIntBE(0, b.length); return { text: String(n), json: n }; } break;
    case 'uint_he': if (b.length <= 4 && b.length > 0) { const n = b.readUIntLE(0, b.length); return { text: String(n), json: n }; } break;
    case 'string': { const nul = b.indexOf(0); const s = b.subarray(0, nul < 0 ? b.length : nul).toString('utf8'); return { text: `"${s}"`, json: s }; }
    default: break;
  }
  return { text: `0x${hex}`, json: `0x${hex}` };
}

/** Number of leading one bits when the mask is ones then zeros, else undefined. */
function prefixBits(maskHex: string): number | undefined {
  const m = Buffer.from(maskHex, 'hex');
  let bits = 0;
  let zero = false;
  for (const byte of m) {
    for (let i = 7; i >= 0; i--) {
      const one = (byte >> i) & 1;
      if (one && zero) return undefined;
      if (one) bits++; else zero = true;
    }
  }
  return bits;
}

/** `ip daddr 192.168.0.0/16` and its JSON `{ prefix: { addr, len } }`. */
function prefixMatch(f: Field, data: string, bits: number, op: string): Slot {
  const full = f.fullLen ?? (f.type === 'ipv4' ? 4 : 16);
  const bytes = Buffer.alloc(full);
  Buffer.from(data, 'hex').copy(bytes, 0, 0, full);
  const addr = addressText(bytes);
  const json = { payload: (f.json as { payload: unknown }).payload };
  return {
    stmt: { text: `${f.text} ${op === 'neq' ? '!= ' : ''}${addr}/${bits}`, json: { match: { op: op === 'neq' ? '!=' : '==', left: json, right: { prefix: { addr, len: bits } } } } },
    needsL3: f.l3, needsL4: f.l4,
  };
}

const OP_TEXT: Record<string, string> = { eq: '', neq: '!= ', lt: '< ', lte: '<= ', gt: '> ', gte: '>= ' };
const OP_JSON: Record<string, string> = { eq: '==', neq: '!=', lt: '<', lte: '<=', gt: '>', gte: '>=' };

interface Slot {
  stmt?: Statement;
  /** a dependency match: `meta l4proto tcp` sets l4, `meta nfproto ipv4` sets l3 */
  setsL3?: string;
  setsL4?: string;
  needsL3?: string;
  needsL4?: string;
  /** raw load slot, dropped when its register is consumed */
  loadOf?: number;
  dropped?: boolean;
}

/** Options of {@link ruleStatements}. */
export interface StatementOptions {
  /** the rule's family (`ip`, `ip6`, `inet`...): tells which network header `payload` reads */
  family: string;
  /** sets of the rule's table, to print anonymous sets inline */
  sets?: readonly NftSet[];
}

function raw(e: Expr): Statement {
  return { text: `[ ${describeExpr(e)} ]`, json: { raw: e as unknown as Record<string, unknown> } };
}

/**
 * Turn a rule's expressions into nft statements.
 * Unrecognized expressions (and loads nothing consumes) become `[ ... ]` raw statements.
 */
export function ruleStatements(exprs: readonly Expr[], options: StatementOptions): Statement[] {
  const regs = new Map<number, { src: Src; slots: number[] }>();
  const slots: Slot[] = [];
  const ctx: { l3?: string; l4?: string } = { l3: options.family === 'ip' ? 'ip' : options.family === 'ip6' ? 'ip6' : undefined };
  const consume = (reg: number): Src | undefined => {
    const r = regs.get(reg);
    if (!r) return undefined;
    for (const i of r.slots) slots[i].dropped = true;
    return r.src;
  };
  const unconsume = (reg: number): void => {
    const r = regs.get(reg);
    if (r) for (const i of r.slots) slots[i].dropped = false;
  };
  for (const e0 of exprs) {
    if ((e0 as GenericExpr).generic === true) { slots.push({ stmt: raw(e0) }); continue; }
    const e = e0 as Exclude<Expr, GenericExpr>;
    switch (e.name) {
      case 'payload':
      case 'meta': {
        const dreg = (e as { dreg?: number }).dreg;
        if (dreg !== undefined) {
          const src: Src = e.name === 'payload' ? { k: 'payload', base: e.base, offset: e.offset, len: e.len } : { k: 'meta', key: e.key };
          slots.push({ stmt: raw(e), loadOf: dreg });
          regs.set(dreg, { src, slots: [slots.length - 1] });
          continue;
        }
        if (e.name === 'meta' && e.sreg !== undefined) {
          const src = consume(e.sreg);
          if (src?.k === 'imm') {
            const v = valueOf(src.data, META_TYPES[e.key] ?? 'uint_he');
            slots.push({ stmt: { text: `meta ${e.key} set ${v.text}`, json: { mangle: { key: { meta: { key: e.key } }, value: v.json } } } });
            continue;
          }
          if (src?.k === 'map') {
            slots.push({ stmt: { text: `meta ${e.key} set ${src.stmt.text}`, json: { mangle: { key: { meta: { key: e.key } }, value: src.stmt.json } } }, needsL3: src.l3, needsL4: src.l4 });
            continue;
          }
          if (src) unconsume(e.sreg);
        }
        slots.push({ stmt: raw(e) });
        continue;
      }
      case 'immediate': {
        if (e.verdict) {
          const v = e.verdict;
          const chainTarget = v.chain !== undefined ? ` ${v.chain}` : '';
          slots.push({ stmt: { text: `${v.code}${chainTarget}`, json: v.chain !== undefined ? { [v.code]: { target: v.chain } } : { [v.code]: null } } });
        } else if (e.data !== undefined) {
          slots.push({ stmt: raw(e), loadOf: e.dreg });
          regs.set(e.dreg, { src: { k: 'imm', data: e.data }, slots: [slots.length - 1] });
        } else slots.push({ stmt: raw(e) });
        continue;
      }
      case 'bitwise': {
        const r = regs.get(e.sreg);
        if (r && (e.op === undefined || e.op === 'mask_xor') && e.mask !== undefined && e.xor !== undefined && r.src.k !== 'masked') {
          slots.push({ stmt: raw(e), loadOf: e.dreg });
          regs.set(e.dreg, { src: { k: 'masked', src: r.src, mask: e.mask, xor: e.xor }, slots: [...r.slots, slots.length - 1] });
        } else slots.push({ stmt: raw(e) });
        continue;
      }
      case 'cmp': {
        const r = regs.get(e.sreg);
        const st = r ? matchStatement(r.src, e.op, e.data, ctx) : undefined;
        if (!r || !st) { slots.push({ stmt: raw(e) }); continue; }
        consume(e.sreg);
        slots.push(st);
        continue;
      }
      case 'lookup': {
        const r = regs.get(e.sreg);
        const f = r && r.src.k !== 'imm' && r.src.k !== 'masked' && r.src.k !== 'map' ? fieldOf(r.src, ctx) : undefined;
        const set = options.sets?.find((s) => s.name === e.set);
        // a map lookup needs the map (to print its values); a verdict map writes the verdict register
        const isMap = e.dreg !== undefined;
        if (!r || !f || (isMap && (!set || set.map === undefined || e.invert))) { slots.push({ stmt: raw(e) }); continue; }
        consume(e.sreg);
        let rightText = `@${e.set}`;
        let rightJson: unknown = `@${e.set}`;
        if (set && set.flags.includes('anonymous') && set.elements) {
          const els = setElementsPrinted(set, set.elements, keyTypeFor(set, f.type));
          rightText = `{ ${els.map((v) => v.text).join(', ')} }`;
          rightJson = { set: els.map((v) => v.json) };
        }
        if (!isMap) {
          slots.push({ stmt: { text: `${f.text} ${e.invert ? '!= ' : ''}${rightText}`, json: { match: { op: e.invert ? '!=' : '==', left: f.json, right: rightJson } } }, needsL3: f.l3, needsL4: f.l4 });
        } else if (e.dreg === C.NFT_REG_VERDICT) {
          slots.push({ stmt: { text: `${f.text} vmap ${rightText}`, json: { vmap: { key: f.json, data: rightJson } } }, needsL3: f.l3, needsL4: f.l4 });
        } else {
          const stmt = { text: `${f.text} map ${rightText}`, json: { map: { key: f.json, data: rightJson } } };
          slots.push({ stmt: raw(e), loadOf: e.dreg });
          regs.set(e.dreg!, { src: { k: 'map', stmt, l3: f.l3, l4: f.l4 }, slots: [...r.slots, slots.length - 1] });
        }
        continue;
      }
      case 'counter':
        slots.push({ stmt: { text: `counter packets ${e.packets} bytes ${e.bytes}`, json: { counter: { packets: e.packets, bytes: e.bytes } } } });
        continue;
      default:
        slots.push({ stmt: raw(e) });
    }
  }
  // Hide dependencies nft hides: a protocol match followed by a match that implies it.
  slots.forEach((s, i) => {
    if (s.dropped) return;
    const later = slots.slice(i + 1).filter((x) => !x.dropped);
    if (s.setsL4 && later.some((x) => x.needsL4 === s.setsL4)) s.dropped = true;
    if (s.setsL3 && later.some((x) => x.needsL3 === s.setsL3)) s.dropped = true;
  });
  return slots.filter((s) => !s.dropped && s.stmt).map((s) => s.stmt!);

  function matchStatement(src: Src, op: string, data: string, c: { l3?: string; l4?: string }): Slot | undefined {
    const opText = OP_TEXT[op];
    const opJson = OP_JSON[op];
    if (opText === undefined) return undefined;
    if (src.k === 'masked') {
      const f = src.src.k === 'imm' || src.src.k === 'masked' || src.src.k === 'map' ? undefined : fieldOf(src.src, c);
      if (!f || /[^0]/.test(src.xor)) return undefined;
      const bits = prefixBits(src.mask);
      if ((f.type === 'ipv4' || f.type === 'ipv6') && bits !== undefined && (op === 'eq' || op === 'neq')) {
        return prefixMatch(f, data, bits, op);
      }
      const mask = valueOf(src.mask, f.type);
      const val = valueOf(data, f.type);
      const isZero = !/[^0]/.test(data);
      if (f.type === 'tcpflags' && op === 'neq' && isZero) {
        return { stmt: { text: `${f.text} ${mask.text}`, json: { match: { op: 'in', left: f.json, right: mask.json } } }, needsL3: f.l3, needsL4: f.l4 };
      }
      if (f.type === 'tcpflags' && op === 'eq' && !isZero) {
        return { stmt: { text: `${f.text} ${val.text} / ${mask.text}`, json: { match: { op: '==', left: { '&': [f.json, Buffer.from(src.mask, 'hex').length === 1 ? flagNames(Buffer.from(src.mask, 'hex')[0]) : mask.json] }, right: val.json } } }, needsL3: f.l3, needsL4: f.l4 };
      }
      return { stmt: { text: `${f.text} & ${mask.text} ${op === 'eq' ? '==' : opText.trim()} ${val.text}`, json: { match: { op: opJson, left: { '&': [f.json, mask.json] }, right: val.json } } }, needsL3: f.l3, needsL4: f.l4 };
    }
    if (src.k === 'imm' || src.k === 'map') return undefined;
    const f = fieldOf(src, c);
    if (!f) return undefined;
    if (f.fullLen !== undefined) {
      if (op !== 'eq' && op !== 'neq') return undefined;
      return prefixMatch(f, data, Buffer.from(data, 'hex').length * 8, op);
    }
    const v = valueOf(data, f.type);
    const slot: Slot = { stmt: { text: `${f.text} ${opText}${v.text}`, json: { match: { op: opJson, left: f.json, right: v.json } } }, needsL3: f.l3, needsL4: f.l4 };
    // Protocol matches set the context and are dependencies of later field matches.
    if (op === 'eq' && f.type === 'l4proto') {
      const name = L4_NAMES.get(Buffer.from(data, 'hex')[0]);
      if (name === 'tcp' || name === 'udp') { c.l4 = name; slot.setsL4 = name; }
    }
    if (op === 'eq' && f.type === 'nfproto') {
      const n = Buffer.from(data, 'hex')[0];
      const l3 = n === 2 ? 'ip' : n === 10 ? 'ip6' : undefined;
      if (l3) { c.l3 = l3; slot.setsL3 = l3; }
    }
    return slot;
  }
}

/** A rule as one line of nft text (statements joined, then `comment "..."`). */
export function ruleText(rule: NftRule, sets?: readonly NftSet[]): string {
  const parts = ruleStatements(rule.expr, { family: rule.family, sets }).map((s) => s.text);
  if (rule.comment !== undefined) parts.push(`comment "${rule.comment}"`);
  return parts.join(' ');
}

/** A duration as nft prints it: `10s`, `9s996ms`, `1h30m`, `2d`. */
export function durationText(ms: number): string {
  if (ms <= 0) return '0s';
  const units: Array<[number, string]> = [[86_400_000, 'd'], [3_600_000, 'h'], [60_000, 'm'], [1000, 's'], [1, 'ms']];
  let rest = Math.floor(ms);
  let out = '';
  for (const [n, u] of units) {
    const q = Math.floor(rest / n);
    if (q) { out += `${q}${u}`; rest -= q * n; }
  }
  return out;
}

const TYPE_VALUES: Record<string, ValueType> = { ipv4_addr: 'ipv4', ipv6_addr: 'ipv6', inet_service: 'port', mark: 'mark', inet_proto: 'l4proto', ether_addr: 'ether' };
/** Key types nft prints a CIDR block of as a prefix (`10.0.0.0/8`); others as a range (`0-1023`). */
const PREFIX_TYPES: ReadonlySet<ValueType> = new Set(['ipv4', 'ipv6', 'mark', 'mark_be']);

/** How a set's keys print, given the type they would have in host order. */
function keyTypeFor(set: NftSet, t: ValueType): ValueType {
  return t === 'mark' && setKeyByteOrder(set) === 'big' ? 'mark_be' : t;
}

function keyValueType(set: NftSet): ValueType {
  return keyTypeFor(set, TYPE_VALUES[set.type ?? ''] ?? 'hex');
}

/** How a map's values print: their datatype, in the byte order nft wrote (NFTNL_UDATA_SET_DATABYTEORDER). */
function dataValueType(set: NftSet): ValueType {
  const t = TYPE_VALUES[set.map ?? ''] ?? 'hex';
  return t === 'mark' && setDataByteOrder(set) === 'big' ? 'mark_be' : t;
}

function keyOf(it: NftSetItem, t: ValueType): { text: string; json: unknown } {
  if (it.catchall || it.key === undefined) return { text: '*', json: '*' };
  const lo = valueOf(it.key, t);
  if (it.keyEnd === undefined) return lo;
  if (it.prefixLen !== undefined && PREFIX_TYPES.has(t)) return { text: `${lo.text}/${it.prefixLen}`, json: { prefix: { addr: lo.json, len: it.prefixLen } } };
  const hi = valueOf(it.keyEnd, t);
  return { text: `${lo.text}-${hi.text}`, json: { range: [lo.json, hi.json] } };
}

function dataOf(set: NftSet, it: NftSetItem): { text: string; json: unknown } | undefined {
  if (it.objref !== undefined) return { text: `"${it.objref}"`, json: it.objref };
  const d: NftData | undefined = it.data;
  if (!d) return undefined;
  if (d.verdict) {
    const v = d.verdict;
    return v.chain !== undefined ? { text: `${v.code} ${v.chain}`, json: { [v.code]: { target: v.chain } } } : { text: v.code, json: { [v.code]: null } };
  }
  return valueOf(d.value ?? '', dataValueType(set));
}

/**
 * A set's elements as nft prints them: `10.0.0.0/8`, `11.1.0.1-11.1.0.9`,
 * `1.1.1.1 timeout 1h expires 59m`, `80 : 10.0.0.1`, `* : accept`; JSON
 * `{ prefix: {...} }`, `{ range: [a, b] }`, `{ elem: { val, timeout, expires } }`,
 * and `[key, value]` pairs in maps.
 */
function setElementsPrinted(set: NftSet, elements: NonNullable<NftSet['elements']>, keyType: ValueType): Array<{ text: string; json: unknown }> {
  return setItems(set, elements).map((it) => {
    const k = keyOf(it, keyType);
    let text = k.text;
    let json: unknown = k.json;
    if (it.timeoutMs !== undefined) text += ` timeout ${durationText(it.timeoutMs)}`;
    if (it.expiresMs !== undefined) text += ` expires ${durationText(it.expiresMs)}`;
    if (it.timeoutMs !== undefined || it.expiresMs !== undefined) {
      json = { elem: { val: k.json, ...(it.timeoutMs !== undefined && { timeout: Math.floor(it.timeoutMs / 1000) }), ...(it.expiresMs !== undefined && { expires: Math.floor(it.expiresMs / 1000) }) } };
    }
    if (set.map === undefined) return { text, json };
    const d = dataOf(set, it);
    if (!d) return { text, json };
    return { text: `${text} : ${d.text}`, json: [json, d.json] };
  });
}

/* nft breaks a named set's element list after every 5 elements of small integer types, 2 of IPv4 addresses (and ct state/status, pkttype), each one of any other type. */
const FIVE_PER_LINE: ReadonlySet<number> = new Set([2, 4, 11, 12, 13, 15, 16, 19, 20, 23, 24, 25, 27]);
const TWO_PER_LINE: ReadonlySet<number> = new Set([7, 26, 28, 31]);
const TYPE_IDS: Record<string, number> = { integer: 4, ipv4_addr: 7, ipv6_addr: 8, ether_addr: 9, inet_proto: 12, inet_service: 13, mark: 19 };

/** `elements = { a, b,\n\t\t\t     c }` as nft wraps it. */
function elementsBlock(set: NftSet, texts: readonly string[]): string {
  const id = set.keyType ?? TYPE_IDS[set.type ?? ''] ?? -1;
  const per = FIVE_PER_LINE.has(id) ? 5 : TWO_PER_LINE.has(id) ? 2 : 1;
  let out = '';
  texts.forEach((t, i) => {
    if (i > 0) out += i % per === 0 ? ',\n\t\t\t     ' : ', ';
    out += t;
  });
  return `{ ${out} }`;
}

const SHOWN_SET_FLAGS = ['constant', 'interval', 'timeout', 'dynamic'];

/**
 * Text close to `nft list ruleset` (nft 1.0.6): tables with their named
 * sets and chains, base chain headers (`type route hook output priority mangle; policy accept;`),
 * and each rule on one line.
 * @param options.handles append `# handle N` like `nft -a`
 */
export function formatRulesetText(rs: NftRuleset, options: { handles?: boolean } = {}): string {
  let out = '';
  for (const t of rs.tables) {
    out += `table ${t.family} ${t.name} {${options.handles && t.handle !== undefined ? ` # handle ${t.handle}` : ''}\n`;
    const blocks: string[] = [];
    const sets = rs.sets.filter((s) => s.family === t.family && s.table === t.name);
    for (const s of sets.filter((x) => !x.flags.includes('anonymous'))) {
      let b = `\t${s.map !== undefined ? 'map' : 'set'} ${s.name} {${options.handles && s.handle !== undefined ? ` # handle ${s.handle}` : ''}\n`;
      b += `\t\ttype ${s.type ?? 'integer'}${s.map !== undefined ? ` : ${s.map}` : ''}\n`;
      // nft leaves `timeout` out of the flags when the set has a default timeout (it implies it).
      const flags = s.flags.filter((f) => SHOWN_SET_FLAGS.includes(f) && !(f === 'timeout' && s.timeoutMs !== undefined));
      if (flags.length) b += `\t\tflags ${flags.join(',')}\n`;
      if (s.timeoutMs !== undefined) b += `\t\ttimeout ${durationText(s.timeoutMs)}\n`;
      if (s.elements && s.elements.length) b += `\t\telements = ${elementsBlock(s, setElementsPrinted(s, s.elements, keyValueType(s)).map((x) => x.text))}\n`;
      b += '\t}\n';
      blocks.push(b);
    }
    for (const c of rs.chains.filter((x) => x.family === t.family && x.table === t.name)) {
      let b = `\tchain ${c.name} {${options.handles && c.handle !== undefined ? ` # handle ${c.handle}` : ''}\n`;
      if (c.type !== undefined && c.hook !== undefined) {
        const dev = c.dev !== undefined ? ` device "${c.dev}"` : '';
        b += `\t\ttype ${c.type} hook ${c.hook}${dev} priority ${priorityText(c.family, c.hook, c.prio ?? 0)}; policy ${c.policy ?? 'accept'};\n`;
      }
      for (const r of rs.rules.filter((x) => x.family === t.family && x.table === t.name && x.chain === c.name)) {
        b += `\t\t${ruleText(r, sets)}${options.handles && r.handle !== undefined ? ` # handle ${r.handle}` : ''}\n`;
      }
      b += '\t}\n';
      blocks.push(b);
    }
    out += blocks.join('\n');
    out += '}\n';
  }
  return out;
}

function setJson(s: NftSet): Record<string, unknown> {
  const j: Record<string, unknown> = { family: s.family, name: s.name, table: s.table, type: s.type ?? 'integer' };
  if (s.handle !== undefined) j.handle = s.handle;
  if (s.map !== undefined) j.map = s.map;
  const flags = s.flags.filter((f) => SHOWN_SET_FLAGS.includes(f));
  if (flags.length) j.flags = flags;
  if (s.timeoutMs !== undefined) j.timeout = Math.floor(s.timeoutMs / 1000);
  if (s.elements && s.elements.length) j.elem = setElementsPrinted(s, s.elements, keyValueType(s)).map((x) => x.json);
  return j;
}

/**
 * JSON close to `nft -j list ruleset`: `{ nftables: [ {metainfo}, {table}, {set}..., {chain}..., {rule}... ] }`,
 * per table: the table, its named sets, its chains, then its rules chain by chain.
 */
export function formatRulesetJson(rs: NftRuleset): { nftables: Array<Record<string, unknown>> } {
  const out: Array<Record<string, unknown>> = [{ metainfo: { json_schema_version: 1 } }];
  for (const t of rs.tables) {
    out.push({ table: { family: t.family, name: t.name, ...(t.handle !== undefined && { handle: t.handle }) } });
    const sets = rs.sets.filter((s) => s.family === t.family && s.table === t.name);
    for (const s of sets.filter((x) => !x.flags.includes('anonymous'))) out.push(s.map !== undefined ? { map: setJson(s) } : { set: setJson(s) });
    const chains = rs.chains.filter((x) => x.family === t.family && x.table === t.name);
    for (const c of chains) {
      const j: Record<string, unknown> = { family: c.family, table: c.table, name: c.name };
      if (c.handle !== undefined) j.handle = c.handle;
      if (c.type !== undefined) j.type = c.type;
      if (c.hook !== undefined) j.hook = c.hook;
      if (c.dev !== undefined) j.dev = c.dev;
      if (c.prio !== undefined) j.prio = c.prio;
      if (c.policy !== undefined) j.policy = c.policy;
      out.push({ chain: j });
    }
    for (const c of chains) {
      for (const r of rs.rules.filter((x) => x.family === t.family && x.table === t.name && x.chain === c.name)) {
        out.push({ rule: ruleJson(r, sets) });
      }
    }
  }
  return { nftables: out };
}

/** One rule as `nft -j` writes it: family, table, chain, handle, comment, expr (statements). */
export function ruleJson(r: NftRule, sets?: readonly NftSet[]): Record<string, unknown> {
  const j: Record<string, unknown> = { family: r.family, table: r.table, chain: r.chain };
  if (r.handle !== undefined) j.handle = r.handle;
  if (r.comment !== undefined) j.comment = r.comment;
  j.expr = ruleStatements(r.expr, { family: r.family, sets }).map((s) => s.json);
  return j;
}
