/**
 * `gact` action (act_gact): a fixed verdict (`pass`, `drop`, `continue`,
 * `reclassify`, `pipe`, `trap`, `goto chain N`...), optionally replaced by
 * another one at random.
 *
 * TCA_ACT_OPTIONS nests TCA_GACT_PARMS, optionally TCA_GACT_PROB, and in
 * dumps TCA_GACT_TM (`struct tcf_t`). (linux/tc_act/tc_gact.h)
 * ```c
 * struct tc_gact { tc_gen; };          // 20 bytes: index, capab, action (the verdict), refcnt, bindcnt
 * struct tc_gact_p {                    // 8 bytes
 *   __u16 ptype;                        // PGACT_NONE 0, PGACT_NETRAND 1, PGACT_DETERM 2
 *   __u16 pval;                         // netrand: probability in 1/10000; determ: every pval-th packet
 *   int   paction;                      // the verdict when it hits
 * };
 * ```
 * tc prints it as `gact action pass`, `\t random type none pass val 0`,
 * `\t index 1 ref 1 bind 1 [installed N sec ...]` (iproute2 built with
 * CONFIG_GACT_PROB prints the random line even without TCA_GACT_PROB).
 *
 * @module
 */
import { AttributeView, bin } from '../../netlink/attributes.js';
import { UsageError } from '../../netlink/errors.js';
import { TCA_GACT_TM, TCA_GACT_PARMS, TCA_GACT_PROB, PGACT_NONE, PGACT_NETRAND, PGACT_DETERM } from './constants.js';
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
import type { ActionKind, GactSpec } from './types.js';

/** sizeof(struct tc_gact) */
export const TC_GACT_LEN = TC_GEN;
/** sizeof(struct tc_gact_p) */
export const TC_GACT_P_LEN = 8;

const KEYS = ['control_action', 'prob', 'index'] as const;
const PTYPES: Record<string, number> = { netrand: PGACT_NETRAND, determ: PGACT_DETERM };
const PTYPE_NAMES = ['none', 'netrand', 'determ'];

function encode(spec: GactSpec): Buffer[] {
  checkSpecKeys(spec, 'gact', KEYS);
  if (spec.control_action === undefined) throw new UsageError('action \'gact\': control_action (the verdict, e.g. "pass" or "drop") is required');
  const p = Buffer.alloc(TC_GACT_LEN);
  writeTcGen(p, specIndex(spec, 'gact'), parseControlAction(spec.control_action, "action 'gact' control_action"));
  const out = [bin(TCA_GACT_PARMS, p)];
  if (spec.prob !== undefined) {
    const pr = spec.prob;
    if (typeof pr !== 'object' || pr === null) throw new UsageError("action 'gact': prob must be { random_type, control_action, val }");
    const ptype = PTYPES[pr.random_type as string];
    if (ptype === undefined) throw new UsageError(`action 'gact': prob.random_type must be "netrand" or "determ", not ${JSON.stringify(pr.random_type)}`);
    if (!Number.isInteger(pr.val) || pr.val < 0 || pr.val > 10000) throw new UsageError(`action 'gact': prob.val ${String(pr.val)} is out of range (0..10000)`);
    const b = Buffer.alloc(TC_GACT_P_LEN);
    b.writeUInt16LE(ptype, 0);
    b.writeUInt16LE(pr.val, 2);
    b.writeInt32LE(parseControlAction(pr.control_action, "action 'gact' prob.control_action"), 4);
    out.push(bin(TCA_GACT_PROB, b));
  }
  return out;
}

/**
 * TCA_ACT_OPTIONS -> `control_action`, `prob: { random_type, control_action, val }`, `index`, `ref`, `bind`, times.
 * @throws {NetlinkDecodeError} TCA_GACT_PARMS or TCA_GACT_PROB shorter than their structs
 */
function decode(buf: Buffer, start: number, end: number, base: number, out: Record<string, unknown>, stats: boolean): void {
  const T = new AttributeView(buf, start, end, base);
  const at = T.at(TCA_GACT_PARMS);
  if (at < 0) return;
  const g = readTcGen(buf, at, T.size(TCA_GACT_PARMS), TC_GACT_LEN, T.headerOffset(TCA_GACT_PARMS), 'struct tc_gact');
  out.control_action = controlActionJson(g.action);
  let ptype = PGACT_NONE;
  let pval = 0;
  let paction = 0;
  const pp = T.struct(TCA_GACT_PROB, TC_GACT_P_LEN);
  if (pp >= 0) {
    ptype = buf.readUInt16LE(pp);
    pval = buf.readUInt16LE(pp + 2);
    paction = buf.readInt32LE(pp + 4);
  }
  out.prob = { random_type: PTYPE_NAMES[ptype] ?? 'none', control_action: controlActionJson(paction), val: pval };
  writeGenAndTimes(out, g, buf, { at: T.at(TCA_GACT_TM), len: T.size(TCA_GACT_TM) }, stats);
}

function format(a: Record<string, unknown>): string {
  if (a.index === undefined) return 'gact \n';
  const p = a.prob as { random_type: string; control_action: unknown; val: number };
  return (
    `gact action ${controlActionText(a.control_action)}\n\t random type ${p.random_type} ${controlActionText(p.control_action)} val ${p.val}\n` +
    `\t index ${a.index} ref ${a.ref} bind ${a.bind}${formatTimes(a)}\n`
  );
}

/** act_gact. */
export const gact: ActionKind<GactSpec> = {
  kind: 'gact',
  optionKeys: KEYS,
  encode,
  decode,
  format,
};
