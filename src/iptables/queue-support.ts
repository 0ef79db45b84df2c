/**
 * Which queue verdict this kernel can run, asked without changing anything:
 * nft's native `queue` expression (nft_queue), else the xt `NFQUEUE` target
 * revision 3 or later through nft_compat, else none. And the verdict
 * expressions of a queue rule for either, bypass always on.
 *
 * - **compat**: the way iptables-nft asks. NFNL_MSG_COMPAT_GET of the
 *   NFNL_SUBSYS_NFT_COMPAT subsystem, with the target's name, the revision
 *   wanted and NFTA_COMPAT_TYPE 1 (target); the kernel (nft_compat.c,
 *   `nfnl_compat_get_rcu`, loading `xt_NFQUEUE` if it can) answers with the
 *   highest revision it has, EPROTONOSUPPORT when it has the target but not
 *   that revision, ENOENT when it has no such target.
 *
 *   ```c
 *   // nf_tables_compat.h
 *   NFTA_COMPAT_NAME  // NLA_NUL_STRING
 *   NFTA_COMPAT_REV   // NLA_U32 (big-endian)
 *   NFTA_COMPAT_TYPE  // NLA_U32 (big-endian): 1 target, 0 match
 *   ```
 * - **native**: nf_tables has no "is this expression known" request. We send
 *   a batch that the kernel rolls back by construction: NFNL_MSG_BATCH_BEGIN,
 *   a table of our own (a name with our pid), a regular chain in it, and a
 *   rule holding only the queue expression, each with NLM_F_ACK, and **no
 *   NFNL_MSG_BATCH_END**. nfnetlink runs every message (looking the `queue`
 *   expression type up, and loading `nft_queue` where it can: it answers
 *   that with EAGAIN internally and replays the whole batch itself), then,
 *   as the batch was not ended, aborts it (nfnetlink_rcv_batch: without
 *   NFNL_BATCH_DONE it calls the subsystem's abort, never commit) and
 *   delivers each message's ack or error. The rule's ack means the kernel
 *   has the expression; ENOENT that it has not. Nothing is ever committed:
 *   no table appears, the ruleset generation does not move, and no one
 *   listening to nftables events sees anything. (A batch that is ended and
 *   fails on purpose would also roll back, but a mistake there could
 *   commit; a batch without its end cannot.)
 *
 * @module
 */
import type { NetlinkConnection, RequestInit } from '../netlink/connection.js';
import { NetlinkError, UsageError } from '../netlink/errors.js';
import { NETLINK_NETFILTER, NLM_F_ACK, NLM_F_CREATE, type NetlinkMessage } from '../netlink/message.js';
import { parseAttributes, str, u32be } from '../netlink/attributes.js';
import { registerBodyDecoder, registerTypeName } from '../netlink/protocols.js';
import * as C from './constants.js';
import { encodeBatchMarker } from './batch.js';
import { encodeChain } from './chain.js';
import { encodeRule } from './rule.js';
import { encodeTable } from './table.js';
import { familyName } from './names.js';
import { attrsOffset, decodeNfGenMsg, encodeNfGenMsg, nftType, requireNetfilter } from './nfnetlink.js';
import type { Expr } from './expr/index.js';
import { nfqueueTarget } from './expr/target.js';

/** Which queue verdict the kernel can run: nft's `queue` expression, the xt NFQUEUE target (rev 3+) through nft_compat, or neither. */
export type QueueExpressionKind = 'native' | 'compat' | 'none';

/** nlmsg_type of NFNL_MSG_COMPAT_GET: `NFNL_SUBSYS_NFT_COMPAT << 8 | NFNL_MSG_COMPAT_GET` */
export const NFNL_COMPAT_GET_TYPE = (C.NFNL_SUBSYS_NFT_COMPAT << 8) | C.NFNL_MSG_COMPAT_GET;

/** The lowest NFQUEUE revision the queue hold uses: rev 3 (`xt_NFQ_info_v3`, with flags). */
export const NFQUEUE_MIN_REVISION = 3;

/**
 * Payload of NFNL_MSG_COMPAT_GET (nfgenmsg, NAME, REV, TYPE), as iptables-nft sends it.
 * @param name the xt extension, e.g. `NFQUEUE`
 * @param rev the revision asked for
 * @param target true: a target (NFTA_COMPAT_TYPE 1); false: a match (0)
 * @param family NFPROTO_* of nfgenmsg (iptables-nft: NFPROTO_IPV4 2, ip6tables-nft: NFPROTO_IPV6 10)
 */
export function encodeCompatGet(name: string, rev: number, target: boolean, family: number = C.NFPROTO_IPV4): Buffer[] {
  return [encodeNfGenMsg(family), str(C.NFTA_COMPAT_NAME, name), u32be(C.NFTA_COMPAT_REV, rev), u32be(C.NFTA_COMPAT_TYPE, target ? C.NFT_COMPAT_TARGET : 0)];
}

/**
 * Decode an NFNL_MSG_COMPAT_GET body (request or reply) for `synplug decode`.
 * @throws {NetlinkDecodeError} a short nfgenmsg or a bad attribute
 */
export function decodeCompatBody(msg: NetlinkMessage): Record<string, unknown> {
  const g = decodeNfGenMsg(msg);
  const l = parseAttributes(msg.payload.subarray(4), attrsOffset(msg));
  const out: Record<string, unknown> = { family: familyName(g.family) };
  const name = l.str(C.NFTA_COMPAT_NAME);
  const rev = l.u32be(C.NFTA_COMPAT_REV);
  const type = l.u32be(C.NFTA_COMPAT_TYPE);
  if (name !== undefined) out.name = name;
  if (rev !== undefined) out.rev = rev;
  if (type !== undefined) out.type = type === C.NFT_COMPAT_TARGET ? 'target' : type === 0 ? 'match' : type;
  return out;
}

registerTypeName(NETLINK_NETFILTER, NFNL_COMPAT_GET_TYPE, 'NFNL_MSG_COMPAT_GET');
registerBodyDecoder(NETLINK_NETFILTER, NFNL_COMPAT_GET_TYPE, decodeCompatBody);

/**
 * The highest revision of an xt target (or match) the kernel has, asking for
 * `rev` at least (NFNL_MSG_COMPAT_GET).
 * @returns the revision; undefined when the kernel has no such extension, not
 *   that revision, or no nft_compat (ENOENT, EPROTONOSUPPORT, EINVAL, EOPNOTSUPP)
 * @throws {UsageError} not a NETLINK_NETFILTER connection
 * @throws {NetlinkError} another refusal (EPERM: no CAP_NET_ADMIN)
 */
export async function compatRevision(nft: NetlinkConnection, name: string, rev: number, target = true): Promise<number | undefined> {
  requireNetfilter(nft, 'compatRevision');
  try {
    const replies = await nft.request({ type: NFNL_COMPAT_GET_TYPE, payload: encodeCompatGet(name, rev, target) });
    for (const m of replies) {
      if (m.type !== NFNL_COMPAT_GET_TYPE) continue;
      const got = decodeCompatBody(m).rev;
      if (typeof got === 'number') return got;
    }
    return undefined;
  } catch (e) {
    if (e instanceof NetlinkError && ['ENOENT', 'EPROTONOSUPPORT', 'EINVAL', 'EOPNOTSUPP'].includes(e.code)) return undefined;
    throw e;
  }
}

/**
 * The messages of the native probe: BEGIN, a table, a chain, a rule with the
 * queue expression (each with NLM_F_ACK), and no END (see the module doc).
 * @param tableName the probe's table (default: `synplug-probe-<pid>`)
 */
export function nativeQueueProbeMessages(tableName = `synplug-probe-${process.pid}`): RequestInit[] {
  const family = 'inet';
  return [
    { type: C.NFNL_MSG_BATCH_BEGIN, flags: 0, payload: encodeBatchMarker() },
    { type: nftType(C.NFT_MSG_NEWTABLE), flags: NLM_F_ACK, payload: encodeTable({ family, name: tableName }) },
    { type: nftType(C.NFT_MSG_NEWCHAIN), flags: NLM_F_ACK | NLM_F_CREATE, payload: encodeChain({ family, table: tableName, name: 'probe' }) },
    {
      type: nftType(C.NFT_MSG_NEWRULE),
      flags: NLM_F_ACK | NLM_F_CREATE,
      payload: encodeRule({ family, table: tableName, chain: 'probe', expr: queueRuleExpressions('native', 0) }),
    },
  ];
}

/**
 * Whether the kernel runs nft's native `queue` expression, asked with a batch
 * it rolls back (see the module doc). False too when the kernel has no
 * nf_tables at all (EOPNOTSUPP on the batch).
 * @throws {NetlinkError} the batch, table or chain was refused (EPERM: no CAP_NET_ADMIN), naming why
 */
export async function hasNativeQueue(nft: NetlinkConnection): Promise<boolean> {
  requireNetfilter(nft, 'hasNativeQueue');
  const results = await nft.exchange(nativeQueueProbeMessages());
  const [begin, table, chain, rule] = results;
  // no nf_tables at all (nfnetlink has no NFNL_SUBSYS_NFTABLES): no queue expression either
  if (begin.error && (begin.error.code === 'EOPNOTSUPP' || begin.error.code === 'EPROTONOSUPPORT')) return false;
  // without CAP_NET_ADMIN, nfnetlink answers the datagram's first message (BEGIN) with EPERM and nothing else
  for (const r of [begin, table, chain]) {
    if (r.error) throw r.error.withMessage(`cannot probe nft's queue expression: a rolled-back batch was refused before its rule (${r.error.code})`);
  }
  if (rule.unanswered || table.unanswered || chain.unanswered) {
    throw new NetlinkError({
      errno: 5,
      requestType: 'NFT_MSG_NEWRULE',
      message: "cannot probe nft's queue expression: the kernel did not answer the rolled-back batch",
    });
  }
  if (!rule.error) return true;
  if (rule.error.code === 'ENOENT' || rule.error.code === 'EOPNOTSUPP') return false;
  throw rule.error.withMessage(`cannot probe nft's queue expression: ${rule.error.code}`);
}

/**
 * Which queue verdict this kernel runs, changing nothing: `native` (nft's
 * `queue` expression), else `compat` (the xt NFQUEUE target revision 3 or
 * later through nft_compat), else `none`.
 * @param nft a NETLINK_NETFILTER connection (openNftables()), in the namespace that matters
 * @throws {UsageError} not a NETLINK_NETFILTER connection
 * @throws {NetlinkError} the kernel refused the probe itself (EPERM: no CAP_NET_ADMIN)
 */
export async function probeQueueExpression(nft: NetlinkConnection): Promise<QueueExpressionKind> {
  requireNetfilter(nft, 'probeQueueExpression');
  if (await hasNativeQueue(nft)) return 'native';
  const rev = await compatRevision(nft, 'NFQUEUE', NFQUEUE_MIN_REVISION, true);
  return rev !== undefined && rev >= NFQUEUE_MIN_REVISION ? 'compat' : 'none';
}

/**
 * The verdict of a queue rule: send the packet to queue `queueNum`, with the
 * bypass flag (nobody bound: the packet passes). `native`: one `queue`
 * expression (num, total 1, NFT_QUEUE_FLAG_BYPASS); `compat`: one `target`
 * expression, NFQUEUE revision 3 with NFQ_FLAG_BYPASS, as iptables-nft's
 * `-j NFQUEUE --queue-num N --queue-bypass`.
 * @param kind from {@link probeQueueExpression} (`none` has no rule)
 * @param queueNum 0-65535
 * @throws {UsageError} a bad queue number, or `none`
 */
export function queueRuleExpressions(kind: QueueExpressionKind, queueNum: number): Expr[] {
  if (!Number.isInteger(queueNum) || queueNum < 0 || queueNum > 0xffff) {
    throw new UsageError(`queue number ${String(queueNum)} is not a netfilter queue number (an integer 0-65535)`);
  }
  if (kind === 'native') return [{ name: 'queue', num: queueNum, total: 1, flags: C.NFT_QUEUE_FLAG_BYPASS }];
  if (kind === 'compat') return [nfqueueTarget(queueNum, { flags: C.NFQ_FLAG_BYPASS })];
  throw new UsageError(`no queue rule for kind '${String(kind)}': this kernel runs neither nft's queue expression nor the xt NFQUEUE target`);
}
