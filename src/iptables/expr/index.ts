/**
 * The expressions synplug knows, one line each. An expression not listed
 * here decodes as a {@link GenericExpr}.
 *
 * @module
 */
import { registerExpr, type GenericExpr } from './registry.js';
import { metaExpr, type MetaExpr } from './meta.js';
import { payloadExpr, type PayloadExpr } from './payload.js';
import { cmpExpr, type CmpExpr } from './cmp.js';
import { bitwiseExpr, type BitwiseExpr } from './bitwise.js';
import { immediateExpr, type ImmediateExpr } from './immediate.js';
import { counterExpr, type CounterExpr } from './counter.js';
import { lookupExpr, type LookupExpr } from './lookup.js';
import { ctExpr, type CtExpr } from './ct.js';
import { limitExpr, type LimitExpr } from './limit.js';
import { logExpr, type LogExpr } from './log.js';
import { quotaExpr, type QuotaExpr } from './quota.js';
import { rejectExpr, type RejectExpr } from './reject.js';
import { natExpr, type NatExpr } from './nat.js';
import { masqExpr, type MasqExpr } from './masq.js';
import { redirExpr, type RedirExpr } from './redir.js';
import { fibExpr, type FibExpr } from './fib.js';
import { objrefExpr, type ObjrefExpr } from './objref.js';
import { rangeExpr, type RangeExpr } from './range.js';
import { byteorderExpr, type ByteorderExpr } from './byteorder.js';
import { connlimitExpr, type ConnlimitExpr } from './connlimit.js';
import { queueExpr, type QueueExpr } from './queue.js';
import { targetExpr, type TargetExpr } from './target.js';
import { matchExpr, type MatchExpr } from './match.js';
import { numgenExpr, type NumgenExpr } from './numgen.js';
import { hashExpr, type HashExpr } from './hash.js';
import { exthdrExpr, type ExthdrExpr } from './exthdr.js';
import { tproxyExpr, type TproxyExpr } from './tproxy.js';
import { dynsetExpr, type DynsetExpr } from './dynset.js';
import { notrackExpr, type NotrackExpr } from './notrack.js';
import { socketExpr, type SocketExpr } from './socket.js';
import { rtExpr, type RtExpr } from './rt.js';
import { synproxyExpr, type SynproxyExpr } from './synproxy.js';
import { osfExpr, type OsfExpr } from './osf.js';
import { dupExpr, type DupExpr } from './dup.js';
import { fwdExpr, type FwdExpr } from './fwd.js';

registerExpr(metaExpr);
registerExpr(payloadExpr);
registerExpr(cmpExpr);
registerExpr(bitwiseExpr);
registerExpr(immediateExpr);
registerExpr(counterExpr);
registerExpr(lookupExpr);
registerExpr(ctExpr);
registerExpr(limitExpr);
registerExpr(logExpr);
registerExpr(quotaExpr);
registerExpr(rejectExpr);
registerExpr(natExpr);
registerExpr(masqExpr);
registerExpr(redirExpr);
registerExpr(fibExpr);
registerExpr(objrefExpr);
registerExpr(rangeExpr);
registerExpr(byteorderExpr);
registerExpr(connlimitExpr);
registerExpr(queueExpr);
registerExpr(targetExpr);
registerExpr(matchExpr);
registerExpr(numgenExpr);
registerExpr(hashExpr);
registerExpr(exthdrExpr);
registerExpr(tproxyExpr);
registerExpr(dynsetExpr);
registerExpr(notrackExpr);
registerExpr(socketExpr);
registerExpr(rtExpr);
registerExpr(synproxyExpr);
registerExpr(osfExpr);
registerExpr(dupExpr);
registerExpr(fwdExpr);

/** Any decoded expression: one of the known kinds, or the generic form. */
export type Expr =
  | MetaExpr
  | PayloadExpr
  | CmpExpr
  | BitwiseExpr
  | ImmediateExpr
  | CounterExpr
  | LookupExpr
  | CtExpr
  | LimitExpr
  | LogExpr
  | QuotaExpr
  | RejectExpr
  | NatExpr
  | MasqExpr
  | RedirExpr
  | FibExpr
  | ObjrefExpr
  | RangeExpr
  | ByteorderExpr
  | ConnlimitExpr
  | QueueExpr
  | TargetExpr
  | MatchExpr
  | NumgenExpr
  | HashExpr
  | ExthdrExpr
  | TproxyExpr
  | DynsetExpr
  | NotrackExpr
  | SocketExpr
  | RtExpr
  | SynproxyExpr
  | OsfExpr
  | DupExpr
  | FwdExpr
  | GenericExpr;

export type {
  MetaExpr,
  PayloadExpr,
  CmpExpr,
  BitwiseExpr,
  ImmediateExpr,
  CounterExpr,
  LookupExpr,
  GenericExpr,
  CtExpr,
  LimitExpr,
  LogExpr,
  QuotaExpr,
  RejectExpr,
  NatExpr,
  MasqExpr,
  RedirExpr,
  FibExpr,
  ObjrefExpr,
  RangeExpr,
  ByteorderExpr,
  ConnlimitExpr,
  QueueExpr,
  TargetExpr,
  MatchExpr,
  NumgenExpr,
  HashExpr,
  ExthdrExpr,
  TproxyExpr,
  DynsetExpr,
  NotrackExpr,
  SocketExpr,
  RtExpr,
  SynproxyExpr,
  OsfExpr,
  DupExpr,
  FwdExpr,
};
export { metaExpr, payloadExpr, cmpExpr, bitwiseExpr, immediateExpr, counterExpr, lookupExpr };
export { ctExpr, limitExpr, logExpr, quotaExpr, rejectExpr, natExpr, masqExpr, redirExpr, fibExpr, objrefExpr, rangeExpr, byteorderExpr, connlimitExpr };
export { numgenExpr, hashExpr, exthdrExpr, tproxyExpr, dynsetExpr, notrackExpr, socketExpr, rtExpr, synproxyExpr, osfExpr, dupExpr, fwdExpr };
export { synproxyOptions, synproxyStatement } from './synproxy.js';
export { queueExpr, targetExpr, matchExpr };
export { nfqueueTarget, decodeNfqueueInfo, type NfqueueTargetInfo } from './target.js';
export { QUEUE_FLAG_NAMES, queueFlagWords, queueRangeText } from './queue.js';
export { ctField, CT_KEY_NAMES } from './ct.js';
export { type LimitSpec, encodeLimit, decodeLimit, limitPrinted } from './limit.js';
export { type QuotaSpec, encodeQuota, decodeQuota, quotaText } from './quota.js';
export { LOG_LEVEL_NAMES } from './log.js';
export { natFlagsPrinted, natPorts } from './nat.js';
export { portsStatement } from './masq.js';
export { registerExpr, exprCodec, registeredExprs, encodeExpr, encodeExprs, decodeExpr, decodeExprs, describeExpr } from './registry.js';
export type { ExprBase, ExprCodec, RawAttribute } from './registry.js';
