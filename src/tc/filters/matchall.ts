/**
 * `matchall` filter (cls_matchall): matches every packet; usually carries
 * actions (encoded and decoded by src/tc/actions).
 *
 * TCA_OPTIONS nests TCA_MATCHALL_CLASSID (u32), TCA_MATCHALL_ACT,
 * TCA_MATCHALL_FLAGS (u32 TCA_CLS_FLAGS_*), TCA_MATCHALL_PCNT
 * (`struct tc_matchall_pcnt { __u64 rhit; }`). (linux/pkt_cls.h)
 *
 * @module
 */
import { AttributeView, le64, nested, u32 } from '../../netlink/attributes.js';
import { NetlinkDecodeError, UsageError } from '../../netlink/errors.js';
import {
  TCA_OPTIONS,
  TCA_MATCHALL_CLASSID,
  TCA_MATCHALL_ACT,
  TCA_MATCHALL_FLAGS,
  TCA_MATCHALL_PCNT,
  TCA_CLS_FLAGS_SKIP_HW,
  TCA_CLS_FLAGS_SKIP_SW,
} from '../constants.js';
import { fieldCodec } from '../fields.js';
import type { FilterKind } from '../types.js';
import { decodeActions, decodeClsFlags, parseU32Text } from './common.js';
import { encodeActionList, formatActionList } from '../actions/list.js';
import type { ActionEntry, ActionSpec } from '../actions/types.js';

/** Options of a matchall filter. */
export interface MatchallOptions {
  classid?: string | number;
  /** actions (TCA_MATCHALL_ACT), e.g. [{ kind: 'gact', control_action: 'pass' }] */
  actions?: readonly ActionSpec[];
  skip_hw?: boolean;
  skip_sw?: boolean;
}

/** The plain options (tc -j prints the class as "flowid"); flags, counters and actions are the kind's own. */
const F = fieldCodec('matchall', [{ key: 'classid', type: TCA_MATCHALL_CLASSID, unit: 'classid', json: 'flowid', label: 'flowid' }]);

function encodeOptions(o: MatchallOptions): Buffer[] {
  const kids = F.encode(o as Record<string, unknown>);
  if (o.actions !== undefined) kids.push(encodeActionList(TCA_MATCHALL_ACT, o.actions));
  let flags = 0;
  if (o.skip_hw) flags |= TCA_CLS_FLAGS_SKIP_HW;
  if (o.skip_sw) flags |= TCA_CLS_FLAGS_SKIP_SW;
  if (flags === (TCA_CLS_FLAGS_SKIP_HW | TCA_CLS_FLAGS_SKIP_SW)) throw new UsageError('matchall: skip_hw and skip_sw are mutually exclusive');
  if (flags) kids.push(u32(TCA_MATCHALL_FLAGS, flags));
  return [nested(TCA_OPTIONS, kids)];
}

/**
 * TCA_OPTIONS -> `{ handle (number, as tc -j), flowid?, skip_hw?, skip_sw?, in_hw? | not_in_hw?, rule_hit?, actions? }`.
 * @throws {NetlinkDecodeError} a counter shorter than 8 bytes, short attributes
 */
function decodeOptions(buf: Buffer, start: number, end: number, base: number, info: { handle: number; stats?: boolean }): Record<string, unknown> {
  const T = new AttributeView(buf, start, end, base);
  const out: Record<string, unknown> = {};
  if (info.handle) out.handle = info.handle;
  F.decode(T, out);
  const f = T.u32(TCA_MATCHALL_FLAGS);
  if (f !== undefined) decodeClsFlags(f, out);
  const pc = T.at(TCA_MATCHALL_PCNT);
  if (pc >= 0) {
    if (T.size(TCA_MATCHALL_PCNT) < 8) throw new NetlinkDecodeError('tc_matchall_pcnt needs 8 bytes', T.headerOffset(TCA_MATCHALL_PCNT));
    out.rule_hit = le64(buf, pc);
  }
  const act = T.bin(TCA_MATCHALL_ACT);
  if (act) out.actions = decodeActions(act, T.headerOffset(TCA_MATCHALL_ACT) + 4, info.stats !== false);
  return out;
}

function formatOptions(o: Record<string, unknown>): string {
  let s = '';
  if (o.handle !== undefined) s += `handle 0x${(o.handle as number).toString(16)} `;
  s += F.format(o);
  for (const k of ['skip_hw', 'skip_sw', 'in_hw', 'not_in_hw']) if (o[k]) s += `\n  ${k}`;
  if (o.rule_hit !== undefined) s += ` (rule hit ${o.rule_hit})`;
  if (Array.isArray(o.actions)) s += formatActionList(o.actions as ActionEntry[]);
  return s;
}

/** cls_matchall. */
export const matchall: FilterKind<MatchallOptions> = {
  kind: 'matchall',
  optionTypes: { classid: 'number|string', skip_hw: 'boolean', skip_sw: 'boolean', actions: 'array' },
  encodeOptions,
  decodeOptions,
  parseHandle: (t) => parseU32Text(t, 'matchall handle'),
  formatOptions,
};

declare module '../types.js' {
  interface FilterOptionsByKind {
    /** matchall: {@link MatchallOptions} */
    matchall: MatchallOptions;
  }
}
