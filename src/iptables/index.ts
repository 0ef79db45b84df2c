/**
 * The netfilter layer: nftables over NETLINK_NETFILTER (nfnetlink), with no
 * `nft` or `iptables` binary. Importing it registers NETLINK_NETFILTER's
 * message names and body decoders with the core (for `synplug decode`).
 *
 * - {@link openNftables}: a connection with a receive buffer sized for batches
 * - objects: tables, chains, rules, sets and elements, named counters/quotas/limits (list / batch builders), generation id
 * - expressions: one module each under `expr/`, found through a registry
 * - printing: {@link listRuleset}, {@link formatRulesetText}, {@link formatRulesetJson}
 *
 * @module
 */
import { NetlinkConnection, type ConnectionOptions } from '../netlink/connection.js';
import { NETLINK_NETFILTER } from '../netlink/message.js';
import './nfnetlink.js';
import './decode.js';
// nfnetlink_queue's NFQNL_MSG_* names and body decoder (NETLINK_NETFILTER, subsystem 3), for `synplug decode`
import '../netlink/nfqueue.js';
// generic netlink's controller and tcp_metrics decoders (NETLINK_GENERIC), for `synplug decode` of the queue hold's captures
import '../netlink/tcp-metrics.js';

/**
 * Open a NETLINK_NETFILTER connection. The receive buffer defaults to 1 MiB
 * (the kernel caps it at net.core.rmem_max): batches ask one ack, but a
 * refused batch answers with one error per failed message.
 * @throws {SynplugError} the socket cannot be created (EPERM, EPROTONOSUPPORT...)
 */
export function openNftables(options: ConnectionOptions = {}): NetlinkConnection {
  return NetlinkConnection.open(NETLINK_NETFILTER, { recvBufferSize: 1 << 20, ...options });
}

export * as nftConstants from './constants.js';
export {
  NFNL_MSG_BATCH_BEGIN,
  NFNL_MSG_BATCH_END,
  NFNL_SUBSYS_NFTABLES,
  NFT_NAME_MAXLEN,
} from './constants.js';
export {
  type NfGenMsg,
  NFGENMSG_LEN,
  encodeNfGenMsg,
  decodeNfGenMsg,
  nftType,
  subsysId,
  msgType,
  nfnlTypeName,
  nfnlRequestKind,
} from './nfnetlink.js';
export {
  type NftFamily,
  familyName,
  familyNumber,
  hookName,
  hookNumber,
  priorityText,
  priorityNumber,
  NFT_MSG_NAMES,
  metaKeyName,
  metaKeyNumber,
} from './names.js';
export { type NftData, type NftVerdict, decodeData } from './data.js';
export {
  type Expr,
  type ExprBase,
  type ExprCodec,
  type GenericExpr,
  type RawAttribute,
  type MetaExpr,
  type PayloadExpr,
  type CmpExpr,
  type BitwiseExpr,
  type ImmediateExpr,
  type CounterExpr,
  type LookupExpr,
  type CtExpr,
  type LimitExpr,
  type LogExpr,
  type QuotaExpr,
  type RejectExpr,
  type NatExpr,
  type MasqExpr,
  type RedirExpr,
  type FibExpr,
  type ObjrefExpr,
  type RangeExpr,
  type ByteorderExpr,
  type ConnlimitExpr,
  type QueueExpr,
  type TargetExpr,
  type NfqueueTargetInfo,
  queueExpr,
  targetExpr,
  nfqueueTarget,
  decodeNfqueueInfo,
  type LimitSpec,
  type QuotaSpec,
  registerExpr,
  exprCodec,
  registeredExprs,
  encodeExpr,
  encodeExprs,
  decodeExpr,
  decodeExprs,
  describeExpr,
} from './expr/index.js';
export { type NftTable, type TableRef, encodeTable, encodeTableRef, decodeTable, listTables, getTable } from './table.js';
export { type NftChain, type ChainSpec, encodeChain, encodeChainRef, decodeChain, listChains } from './chain.js';
export { type NftRule, type RuleSpec, encodeRule, encodeRuleRef, decodeRule, listRules, encodeComment, decodeComment, ruleFlags } from './rule.js';
export {
  type NftSet,
  type NftSetElement,
  type NftSetElements,
  type SetSpec,
  type ElementsSpec,
  encodeSet,
  encodeSetRef,
  decodeSet,
  listSets,
  encodeElements,
  decodeElements,
  listSetElements,
  setFlagNames,
  setFlagsValue,
  type NftSetItem,
  setItems,
  setKeyByteOrder,
  setDataByteOrder,
  setDataTypeName,
} from './set.js';
export { type NftGen, decodeGen, getGenId } from './gen.js';
export {
  type BatchOp,
  type CommitOptions,
  type CommitResult,
  NftBatch,
  NftBatchError,
  NftGenerationError,
  batchMessages,
  encodeBatchMarker,
  commitBatch,
  checkResults,
  ERESTART,
} from './batch.js';
export {
  type NftRuleset,
  type Statement,
  type StatementOptions,
  ruleStatements,
  ruleText,
  ruleJson,
  durationText,
  formatRulesetText,
  formatRulesetJson,
  RAW_MARKER,
} from './format.js';
export { listRuleset, deviceNames } from './ruleset.js';
export { type NftObject, OBJECT_TYPE_NAMES, decodeObject, listObjects } from './object.js';
export { type Field, type ValueType, type PrintContext, type PrintedStatement, type RegisterValue, valueText } from './print.js';
export { NFT_BODY_DECODERS, decodeBatchMarker, decodeRuleBody, decodeGenericBody } from './decode.js';
export { checkName, parseAddress, addressText, checkMark, checkPort, checkTimeoutMs, MIN_TIMEOUT_MS, MAX_TIMEOUT_MS, type ParsedAddress } from './validate.js';
export {
  type QueueExpressionKind,
  NFNL_COMPAT_GET_TYPE,
  NFQUEUE_MIN_REVISION,
  encodeCompatGet,
  decodeCompatBody,
  compatRevision,
  nativeQueueProbeMessages,
  hasNativeQueue,
  probeQueueExpression,
  queueRuleExpressions,
} from './queue-support.js';
