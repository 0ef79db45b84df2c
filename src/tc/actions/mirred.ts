/**
 * `mirred` action (act_mirred): redirect or mirror a packet to a device's
 * egress or ingress. The inbound hold uses `mirred egress redirect` to an
 * IFB, whose root qdisc then holds the packet.
 *
 * TCA_ACT_OPTIONS nests TCA_MIRRED_PARMS and, in dumps, TCA_MIRRED_TM
 * (`struct tcf_t`). (linux/tc_act/tc_mirred.h)
 * ```c
 * struct tc_mirred {   // 28 bytes
 *   tc_gen;            // index, capab, action (TC_ACT_STOLEN for redirect, TC_ACT_PIPE for mirror), refcnt, bindcnt
 *   int   eaction;     // TCA_EGRESS_REDIR 1, TCA_EGRESS_MIRROR 2, TCA_INGRESS_REDIR 3, TCA_INGRESS_MIRROR 4
 *   __u32 ifindex;     // the target device
 * };
 * ```
 * tc prints it as `mirred (Egress Redirect to device ifb0) stolen` then
 * `\tindex 1 ref 1 bind 1 [installed N sec used N sec firstused N sec]`.
 *
 * @module
 */
import { AttributeView, bin } from '../../netlink/attributes.js';
import { UsageError } from '../../netlink/errors.js';
import {
  TCA_MIRRED_TM,
  TCA_MIRRED_PARMS,
  TCA_EGRESS_REDIR,
  TCA_EGRESS_MIRROR,
  TCA_INGRESS_REDIR,
  TCA_INGRESS_MIRROR,
  TC_ACT_STOLEN,
  TC_ACT_PIPE,
} from './constants.js';
import {
  TC_GEN,
  checkSpecKeys,
  controlActionJson,
  controlActionText,
  formatTimes,
  parseControlAction,
  readTcGen,
  specIndex,
  writeGenAndTimes,
  writeTcGen,
} from './common.js';
import type { ActionKind, MirredSpec } from './types.js';

/** sizeof(struct tc_mirred) */
export const TC_MIRRED_LEN = TC_GEN + 8;

const KEYS = ['direction', 'mirred_action', 'ifindex', 'to_dev', 'control_action', 'index'] as const;

/** eaction -> tc's words: [text, mirred_action, direction] */
const EACTIONS: Record<number, [string, string, string]> = {
  [TCA_EGRESS_REDIR]: ['Egress Redirect', 'redirect', 'egress'],
  [TCA_EGRESS_MIRROR]: ['Egress Mirror', 'mirror', 'egress'],
  [TCA_INGRESS_REDIR]: ['Ingress Redirect', 'redirect', 'ingress'],
  [TCA_INGRESS_MIRROR]: ['Ingress Mirror', 'mirror', 'ingress'],
};

/**
 * The `eaction` of a direction and action.
 * @throws {UsageError} anything but egress|ingress × redirect|mirror
 */
export function mirredEaction(direction: unknown, action: unknown): number {
  if (direction !== 'egress' && direction !== 'ingress')
    throw new UsageError(`action 'mirred': direction must be "egress" or "ingress", not ${JSON.stringify(direction)}`);
  if (action !== 'redirect' && action !== 'mirror')
    throw new UsageError(`action 'mirred': mirred_action must be "redirect" or "mirror", not ${JSON.stringify(action)}`);
  if (direction === 'egress') return action === 'redirect' ? TCA_EGRESS_REDIR : TCA_EGRESS_MIRROR;
  return action === 'redirect' ? TCA_INGRESS_REDIR : TCA_INGRESS_MIRROR;
}

function encode(spec: MirredSpec): Buffer[] {
  checkSpecKeys(spec, 'mirred', KEYS);
  const eaction = mirredEaction(spec.direction, spec.mirred_action);
  const ifindex = spec.ifindex;
  if (ifindex === undefined) {
    if (spec.to_dev !== undefined) {
      throw new UsageError(`action 'mirred': device '${spec.to_dev}' must be turned into an ifindex first (resolveActionDevices), or give ifindex`);
    }
    throw new UsageError("action 'mirred': give the target device (ifindex, or to_dev resolved with resolveActionDevices)");
  }
  if (!Number.isInteger(ifindex) || ifindex <= 0 || ifindex > 0x7fffffff)
    throw new UsageError(`action 'mirred': ifindex ${String(ifindex)} is not a device index`);
  const redirect = eaction === TCA_EGRESS_REDIR || eaction === TCA_INGRESS_REDIR;
  const verdict =
    spec.control_action === undefined ? (redirect ? TC_ACT_STOLEN : TC_ACT_PIPE) : parseControlAction(spec.control_action, "action 'mirred' control_action");
  const p = Buffer.alloc(TC_MIRRED_LEN);
  writeTcGen(p, specIndex(spec, 'mirred'), verdict);
  p.writeInt32LE(eaction, TC_GEN);
  p.writeUInt32LE(ifindex, TC_GEN + 4);
  return [bin(TCA_MIRRED_PARMS, p)];
}

/**
 * TCA_ACT_OPTIONS -> `mirred_action`, `direction`, `to_dev` (`if<N>` until
 * named), `ifindex`, `control_action`, `index`, `ref`, `bind`, times.
 * @throws {NetlinkDecodeError} TCA_MIRRED_PARMS missing or shorter than `struct tc_mirred`
 */
function decode(buf: Buffer, start: number, end: number, base: number, out: Record<string, unknown>, stats: boolean): void {
  const T = new AttributeView(buf, start, end, base);
  const at = T.at(TCA_MIRRED_PARMS);
  if (at < 0) {
    out.mirred_action = 'unknown';
    return;
  }
  const g = readTcGen(buf, at, T.size(TCA_MIRRED_PARMS), TC_MIRRED_LEN, T.headerOffset(TCA_MIRRED_PARMS), 'struct tc_mirred');
  const eaction = buf.readInt32LE(at + TC_GEN);
  const ifindex = buf.readUInt32LE(at + TC_GEN + 4);
  const words = EACTIONS[eaction] ?? ['unknown', 'unknown', 'unknown'];
  out.mirred_action = words[1];
  out.direction = words[2];
  out.to_dev = `if${ifindex}`;
  out.ifindex = ifindex;
  out.control_action = controlActionJson(g.action);
  writeGenAndTimes(out, g, buf, { at: T.at(TCA_MIRRED_TM), len: T.size(TCA_MIRRED_TM) }, stats);
}

function format(a: Record<string, unknown>): string {
  if (a.index === undefined) return 'mirred \n';
  const md = a.mirred_action as string;
  const dir = a.direction as string;
  const text = md === 'unknown' || dir === 'unknown' ? 'unknown' : `${dir === 'egress' ? 'Egress' : 'Ingress'} ${md === 'redirect' ? 'Redirect' : 'Mirror'}`;
  return `mirred (${text} to device ${a.to_dev}) ${controlActionText(a.control_action)}\n\tindex ${a.index} ref ${a.ref} bind ${a.bind}${formatTimes(a)}\n`;
}

/** act_mirred. */
export const mirred: ActionKind<MirredSpec> = {
  kind: 'mirred',
  optionKeys: KEYS,
  encode,
  decode,
  format,
};
