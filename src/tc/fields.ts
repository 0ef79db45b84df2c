/**
 * Plain TLV options driven by one table per kind, the idea of pyroute2's
 * `nla_map`: each row names an option (the options object's key and tc -j's),
 * its attribute type and its unit, and the table gives the encoder, the
 * decoder, tc's text and the option's type for it. A kind's file then holds its
 * table and only what does not fit one (structs, composite fields).
 *
 * Units (the wire type follows from the unit):
 *
 * | unit | attribute | options value | decoded | tc text |
 * |---|---|---|---|---|
 * | count | NLA_U32 | integer | number | `key N` |
 * | packets | NLA_U32 | integer | number | `key Np` |
 * | time | NLA_U32 µs | µs or tc time text ("5ms") | µs | `key 5ms` |
 * | size | NLA_U32 bytes | bytes or tc size text ("32Mb") | bytes | `key 32Mb` |
 * | classid | NLA_U32 | tc text ("1:4") or u32 | tc text | `key 1:4` |
 * | mask | NLA_U32 | u32 | number | `key N` |
 * | onoff | NLA_U32 0/1 | boolean | `true` when non-zero | `key` |
 * | flag | NLA_FLAG | boolean | `true` when present | `key` |
 * | name | NLA_NUL_STRING | device name, 1..15 characters | string | `key NAME` |
 *
 * @module
 */
import { type AttributeView, flag, str, u32 } from '../netlink/attributes.js';
import { UsageError } from '../netlink/errors.js';
import { parseIntArg } from './args.js';
import { classidOf, classidText } from './filters/common.js';
import type { OptionType } from './types.js';
import { formatSize, formatTime, parseSize, parseTime } from './units.js';

/** How a field's value is read, written and printed (see the module's table). */
export type FieldUnit = 'count' | 'packets' | 'time' | 'size' | 'classid' | 'mask' | 'onoff' | 'flag' | 'name';

/** One row of a kind's table. */
export interface Field {
  /** the options key, also tc -j's key */
  readonly key: string;
  /** the attribute type (TCA_*) inside TCA_OPTIONS */
  readonly type: number;
  /** how the value is sent, read and printed */
  readonly unit: FieldUnit;
  /** tc's text before the value when it differs from `key` ("input dev") */
  readonly label?: string;
  /** tc -j's key when it differs from `key` (matchall's classid is printed as "flowid") */
  readonly json?: string;
  /** decoded and printed only, never an option (e.g. a legacy attribute tc prints) */
  readonly decodeOnly?: boolean;
  /** 0 means "not given": `'send'`: not sent; `true`: not sent, decoded or printed either (as tc does for some fields) */
  readonly omitZero?: boolean | 'send';
}

/** The JavaScript type of each unit's options value. */
const OPTION_TYPES: Record<FieldUnit, OptionType> = {
  count: 'number',
  packets: 'number',
  time: 'number|string',
  size: 'number|string',
  classid: 'number|string',
  mask: 'number',
  onoff: 'boolean',
  flag: 'boolean',
  name: 'string',
};

/** The codec a table gives: see {@link fieldCodec}. */
export interface FieldCodec {
  /** every key's options type, for the kind's `optionTypes` */
  readonly optionTypes: Readonly<Record<string, OptionType>>;
  /**
   * The attributes of the given options, in table order (or in `order`, the
   * keys in the order tc sends them).
   * @throws {UsageError} a value that is not of its unit
   */
  encode(o: Record<string, unknown>, order?: readonly string[]): Buffer[];
  /**
   * The fields present in `v` into `out` (tc -j keys), in table order or in `keys`' order.
   * @throws {NetlinkDecodeError} an attribute shorter than its type (unless the table is lenient)
   */
  decode(v: AttributeView, out: Record<string, unknown>, keys?: readonly string[]): void;
  /** tc's text of the decoded fields (`limit 1024p flows 1024 `), each followed by a space. */
  format(o: Record<string, unknown>, keys?: readonly string[]): string;
}

/**
 * The codec of one kind's table.
 * @param what the kind, for messages ("fq_codel", "fw")
 * @param fields the rows, in the order tc prints them
 * @param lenient skip an attribute too short for its type instead of throwing (as tc's printer does for some kinds)
 */
export function fieldCodec(what: string, fields: readonly Field[], lenient = false): FieldCodec {
  const byKey = new Map(fields.map((f) => [f.key, f]));
  const options = fields.filter((f) => !f.decodeOnly);
  const rows = (keys: readonly string[] | undefined) => (keys ? keys.map((k) => byKey.get(k)!) : fields);

  function encodeOne(f: Field, v: unknown): Buffer | undefined {
    const label = `${what} ${f.key}`;
    switch (f.unit) {
      case 'count':
      case 'packets': {
        const n = parseIntArg(v as number, label);
        return f.omitZero && n === 0 ? undefined : u32(f.type, n);
      }
      case 'time':
      case 'size': {
        const n = f.unit === 'time' ? parseTime(v as number | string, label) : parseSize(v as number | string, label);
        return f.omitZero && n === 0 ? undefined : u32(f.type, n);
      }
      case 'classid':
        return u32(f.type, classidOf(v as number | string, label));
      case 'mask':
        if (!Number.isInteger(v) || (v as number) < 0 || (v as number) > 0xffffffff) throw new UsageError(`${what}: ${f.key} ${v} is not a u32`);
        return u32(f.type, v as number);
      case 'onoff':
        return u32(f.type, v ? 1 : 0);
      case 'flag':
        return v ? flag(f.type) : undefined;
      case 'name': {
        const s = v as string;
        if (s.length === 0 || s.length > 15) throw new UsageError(`${what}: ${f.key} ${JSON.stringify(s)} is not a device name (1..15 characters)`);
        return str(f.type, s);
      }
    }
  }

  return {
    optionTypes: Object.fromEntries(options.map((f) => [f.key, OPTION_TYPES[f.unit]])),
    encode(o, order) {
      const out: Buffer[] = [];
      for (const f of rows(order)) {
        if (o[f.key] === undefined || f.decodeOnly) continue;
        const b = encodeOne(f, o[f.key]);
        if (b) out.push(b);
      }
      return out;
    },
    decode(v, out, keys) {
      for (const f of rows(keys)) {
        const at = v.at(f.type);
        if (at < 0) continue;
        const key = f.json ?? f.key;
        if (f.unit === 'flag') out[key] = true;
        else if (f.unit === 'name') out[key] = v.str(f.type);
        else {
          if (lenient && v.size(f.type) < 4) continue;
          const n = v.u32(f.type)!;
          if (f.omitZero === true && n === 0) continue;
          if (f.unit === 'onoff') {
            if (n) out[key] = true;
          } else out[key] = f.unit === 'classid' ? classidText(n) : n;
        }
      }
    },
    format(o, keys) {
      let s = '';
      for (const f of rows(keys)) {
        const v = o[f.json ?? f.key];
        if (v === undefined || v === false || (f.omitZero === true && v === 0)) continue;
        const label = f.label ?? f.key;
        if (f.unit === 'onoff' || f.unit === 'flag') s += `${label} `;
        else if (f.unit === 'packets') s += `${label} ${v}p `;
        else if (f.unit === 'time') s += `${label} ${formatTime(v as number)} `;
        else if (f.unit === 'size') s += `${label} ${formatSize(v as number)} `;
        else s += `${label} ${v} `;
      }
      return s;
    },
  };
}
