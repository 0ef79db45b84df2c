/**
 * The `ct` expression (net/netfilter/nft_ct.c): load a conntrack value into
 * a register (`ct load state => reg 1`, NFTA_CT_DREG), or set one from a
 * register (`ct set mark with reg 1`, NFTA_CT_SREG): nft's `ct state new`,
 * `ct mark 0x5`, `ct mark set 0x5`.
 *
 * ```c
 * // nf_tables.h: enum nft_ct_attributes
 * NFTA_CT_DREG        // NLA_U32 (big-endian), destination register (load)
 * NFTA_CT_KEY         // NLA_U32, enum nft_ct_keys
 * NFTA_CT_DIRECTION   // NLA_U8, enum ip_conntrack_dir (keys of one direction: `ct original saddr`)
 * NFTA_CT_SREG        // NLA_U32, source register (set)
 * ```
 * libnftnl sends KEY, DREG, DIRECTION, SREG (those present).
 *
 * Printed as nft does: `ct state`, `ct direction`, `ct status`, `ct mark`,
 * `ct expiration`, `ct helper`, `ct l3proto`, `ct protocol`, `ct zone`,
 * `ct packets` (without a direction), addresses, ports and counters of one
 * direction (`ct original ip saddr`, `ct reply proto-dst`), and
 * `ct mark set ...`, `ct zone set ...`. Other keys print raw.
 *
 * @module
 */
import { bin } from '../../netlink/attributes.js';
import { UsageError } from '../../netlink/errors.js';
import * as C from '../constants.js';
import { be32, checkU32, needU32 } from '../data.js';
import { valueText, type Field, type ValueType } from '../print.js';
import type { ExprCodec } from './registry.js';

/** Key names by NFT_CT_* number (enum nft_ct_keys), as libnftnl names them. */
export const CT_KEY_NAMES: readonly string[] = [
  'state',
  'direction',
  'status',
  'mark',
  'secmark',
  'expiration',
  'helper',
  'l3protocol',
  'src',
  'dst',
  'protocol',
  'proto_src',
  'proto_dst',
  'label',
  'packets',
  'bytes',
  'avgpkt',
  'zone',
  'event',
  'src_ip',
  'dst_ip',
  'src_ip6',
  'dst_ip6',
  'id',
];

/** `ct`: exactly one of `dreg` (load) and `sreg` (set). */
export interface CtExpr {
  name: 'ct';
  /** NFTA_CT_KEY, libnftnl's name (`state`, `mark`, `l3protocol`...); `key(<n>)` when unnamed */
  key: string;
  /** NFTA_CT_DREG (load) */
  dreg?: number;
  /** NFTA_CT_SREG (set) */
  sreg?: number;
  /** NFTA_CT_DIRECTION: 0 original, 1 reply (IP_CT_DIR_*) */
  direction?: number;
}

function keyNumber(key: string): number {
  const i = CT_KEY_NAMES.indexOf(key);
  if (i >= 0) return i;
  const m = /^key\((\d+)\)$/.exec(key);
  if (m) return Number(m[1]);
  throw new UsageError(`unknown ct key '${key}' (known: ${CT_KEY_NAMES.join(', ')})`);
}

/** Keys printed as `ct <name>` (no direction): nft's name, `nft -j`'s key and the value type. */
const FIELDS: Record<string, [string, ValueType]> = {
  state: ['state', 'ct_state'],
  direction: ['direction', 'ct_dir'],
  status: ['status', 'ct_status'],
  mark: ['mark', 'mark'],
  expiration: ['expiration', 'time_ms'],
  helper: ['helper', 'string'],
  l3protocol: ['l3proto', 'nfproto'],
  protocol: ['protocol', 'l4proto'],
  zone: ['zone', 'uint_he'],
  packets: ['packets', 'uint_he'],
  bytes: ['bytes', 'uint_he'],
  avgpkt: ['avgpkt', 'uint_he'],
  label: ['label', 'ct_label'],
  // nft 1.0.6: CT_TEMPLATE("id", &integer_type, BYTEORDER_BIG_ENDIAN, 32)
  id: ['id', 'uint_be'],
  // set only (NFT_CT_EVENTMASK): `ct event set new,related`
  event: ['event', 'ct_event'],
};
/**
 * Keys printed with a direction (`ct original ip saddr`, `ct reply proto-dst`):
 * the text after the direction, `nft -j`'s key and the value type. `src` and
 * `dst` take the table's family (`ip` or `ip6`; nft's JSON key has none).
 */
const DIR_FIELDS: Record<string, [string, string, ValueType]> = {
  src_ip: ['ip saddr', 'ip saddr', 'ipv4'],
  dst_ip: ['ip daddr', 'ip daddr', 'ipv4'],
  src_ip6: ['ip6 saddr', 'ip6 saddr', 'ipv6'],
  dst_ip6: ['ip6 daddr', 'ip6 daddr', 'ipv6'],
  proto_src: ['proto-src', 'proto-src', 'port'],
  proto_dst: ['proto-dst', 'proto-dst', 'port'],
  packets: ['packets', 'packets', 'uint_he'],
  bytes: ['bytes', 'bytes', 'uint_he'],
  avgpkt: ['avgpkt', 'avgpkt', 'uint_he'],
  zone: ['zone', 'zone', 'uint_he'],
};
const DIRECTIONS = ['original', 'reply'];

/** The field nft prints for a ct load without direction, e.g. `ct state`. */
export function ctField(key: string): Field | undefined {
  const f = FIELDS[key];
  return f ? { text: `ct ${f[0]}`, json: { ct: { key: f[0] } }, type: f[1] } : undefined;
}

/** The field nft prints for a ct load with a direction (`ct original ip saddr`), in a table of `family`. */
function ctDirField(key: string, direction: number, family: string): Field | undefined {
  const dir = DIRECTIONS[direction];
  if (dir === undefined) return undefined;
  const fam = family === 'ip' ? 'ip' : family === 'ip6' ? 'ip6' : undefined;
  const addr = (key === 'src' || key === 'dst') && fam ? ([`${fam} ${key[0]}addr`, `${key[0]}addr`, fam === 'ip' ? 'ipv4' : 'ipv6'] as const) : undefined;
  const f = addr ?? DIR_FIELDS[key];
  return f ? { text: `ct ${dir} ${f[0]}`, json: { ct: { key: f[1], dir } }, type: f[2] } : undefined;
}

/** Keys nft prints a `ct ... set` of; `zone` also with a direction (`ct original zone set 3`). */
const SETTABLE: ReadonlySet<string> = new Set(['mark', 'zone', 'label', 'event']);

/** Codec of `ct`. */
export const ctExpr: ExprCodec<CtExpr> = {
  name: 'ct',
  encode(e) {
    if ((e.dreg === undefined) === (e.sreg === undefined)) throw new UsageError('ct expression: give exactly one of dreg (load) and sreg (set)');
    const out = [be32(C.NFTA_CT_KEY, keyNumber(e.key))];
    if (e.dreg !== undefined) out.push(be32(C.NFTA_CT_DREG, checkU32(e.dreg, 'ct dreg')));
    if (e.direction !== undefined) {
      if (e.direction !== 0 && e.direction !== 1) throw new UsageError(`ct direction: ${e.direction} is neither 0 (original) nor 1 (reply)`);
      out.push(bin(C.NFTA_CT_DIRECTION, Buffer.from([e.direction])));
    }
    if (e.sreg !== undefined) out.push(be32(C.NFTA_CT_SREG, checkU32(e.sreg, 'ct sreg')));
    return out;
  },
  decode(l) {
    const k = needU32(l, C.NFTA_CT_KEY, 'NFTA_CT_KEY');
    const e: CtExpr = { name: 'ct', key: CT_KEY_NAMES[k] ?? `key(${k})` };
    const dreg = l.u32be(C.NFTA_CT_DREG);
    const sreg = l.u32be(C.NFTA_CT_SREG);
    const dir = l.u8(C.NFTA_CT_DIRECTION);
    if (dreg !== undefined) e.dreg = dreg;
    if (sreg !== undefined) e.sreg = sreg;
    if (dir !== undefined) e.direction = dir;
    return e;
  },
  describe(e) {
    const dir = e.direction !== undefined ? `, dir ${e.direction === 0 ? 'original' : e.direction === 1 ? 'reply' : e.direction}` : '';
    return e.sreg !== undefined ? `ct set ${e.key} with reg ${e.sreg}${dir}` : `ct load ${e.key} => reg ${e.dreg}${dir}`;
  },
  field(e, ctx) {
    if (e.dreg === undefined) return undefined;
    const field = e.direction !== undefined ? ctDirField(e.key, e.direction, ctx.family) : ctField(e.key);
    return field ? { dreg: e.dreg, field } : undefined;
  },
  writes(e) {
    return e.dreg !== undefined ? [e.dreg] : [];
  },
  statement(e, ctx) {
    if (e.sreg === undefined || !SETTABLE.has(e.key) || (e.direction !== undefined && e.key !== 'zone')) return undefined;
    const r = ctx.reg(e.sreg);
    const f = e.direction !== undefined ? ctDirField(e.key, e.direction, ctx.family) : { text: `ct ${e.key}`, json: { ct: { key: e.key } } };
    if (!r || !f || ((e.key === 'label' || e.key === 'event') && r.k !== 'imm')) return undefined;
    const key = f.json;
    if (r.k === 'imm') {
      const v = valueText(r.data, FIELDS[e.key][1]);
      // a mark prints in hex, and an event bit nft does not name (`0x800`); bytes valueText could not read do not
      if (!v || (v.text.startsWith('0x') && e.key !== 'mark' && (e.key !== 'event' || v.json === `0x${r.data}`))) return undefined;
      return { stmt: { text: `${f.text} set ${v.text}`, json: { mangle: { key, value: v.json } } }, consumes: [e.sreg] };
    }
    if (r.k === 'map') {
      return {
        stmt: { text: `${f.text} set ${r.stmt.text}`, json: { mangle: { key, value: r.stmt.json } } },
        consumes: [e.sreg],
        needsL2: r.l2,
        needsL3: r.l3,
        needsL4: r.l4,
      };
    }
    return {
      stmt: { text: `${f.text} set ${r.field.text}`, json: { mangle: { key, value: r.field.json } } },
      consumes: [e.sreg],
      needsL2: r.field.l2,
      needsL3: r.field.l3,
      needsL4: r.field.l4,
    };
  },
};
