/**
 * nftables batches: every change is sent as NFNL_MSG_BATCH_BEGIN, the
 * messages, NFNL_MSG_BATCH_END in ONE datagram, and the kernel applies the
 * whole batch or nothing.
 *
 * ```c
 * // BEGIN and END: struct nfgenmsg { AF_UNSPEC, NFNETLINK_V0, res_id = htons(NFNL_SUBSYS_NFTABLES) }
 * // BEGIN may carry NFNL_BATCH_GENID (NLA_U32, big-endian): refused with ERESTART
 * // if the ruleset generation moved.
 * ```
 *
 * How the kernel answers (net/netfilter/nfnetlink.c, nfnetlink_rcv_batch):
 * it runs every message, queues an error for each that fails (and an ack
 * for each that asked NLM_F_ACK), then commits only if none failed, then
 * delivers the queued answers in message order. A failed commit is reported
 * as an error on BATCH_BEGIN, even when the messages were acked.
 *
 * So we ask NLM_F_ACK on the **last** message only: success is exactly one
 * ack (a large batch cannot overflow the receive buffer with acks, the
 * ENOBUFS trap of acking every message); a refused message answers with
 * its own error, which names it; a refused commit answers on BATCH_BEGIN.
 * Success is reported only when the last message's ack came and no error
 * did before it.
 *
 * @module
 */
import type { NetlinkConnection, RequestInit, ExchangeResult } from '../netlink/connection.js';
import { NLM_F_ACK } from '../netlink/message.js';
import { NetlinkError, SynplugError, UsageError } from '../netlink/errors.js';
import * as C from './constants.js';
import { be32 } from './data.js';
import { encodeNfGenMsg, nftType } from './nfnetlink.js';
import { NFT_MSG_NAMES } from './names.js';
import { encodeTable, encodeTableRef, type TableRef } from './table.js';
import { encodeChain, encodeChainRef, type ChainSpec } from './chain.js';
import { encodeRule, encodeRuleRef, ruleFlags, type RuleSpec } from './rule.js';
import { ELEMENT_ADD_FLAGS, encodeElements, encodeSet, encodeSetRef, type ElementsSpec, type SetSpec } from './set.js';
import { NLM_F_CREATE } from '../netlink/message.js';

/** ERESTART (85, Linux's asm-generic/errno.h; errnoName knows it): the batch's NFNL_BATCH_GENID no longer matches. */
export const ERESTART = 85;

/** One message of a batch. */
export interface BatchOp {
  /** NFT_MSG_* (the subsystem is added) */
  msg: number;
  /** NLM_F_* flags besides NLM_F_REQUEST (and NLM_F_ACK, which the batch sets) */
  flags: number;
  /** struct nfgenmsg, then attributes */
  payload: Buffer[];
  /** what it does, for error messages: `add table ip synplug` */
  what: string;
}

/** Options of {@link NftBatch.commit} and {@link commitBatch}. */
export interface CommitOptions {
  /** NFNL_BATCH_GENID: refuse (ERESTART, {@link NftGenerationError}) if the ruleset changed since this generation */
  genId?: number;
  /** answer timeout, ms (connection default otherwise) */
  timeoutMs?: number;
  /**
   * For a batch of ONE delete (e.g. one set element): treat the kernel's
   * ENOENT ("not there") as success, giving "delete if present". The kernel
   * refuses a whole DELSETELEM when any element is missing, so this is only
   * allowed on single-message batches.
   */
  ignoreMissing?: boolean;
}

/** Outcome of a committed batch. */
export interface CommitResult {
  /** true when the kernel applied the batch */
  applied: boolean;
  /** messages sent, BEGIN and END excluded */
  messages: number;
  /** `ignoreMissing` only: the object to delete was not there (nothing applied, and that is fine) */
  missing?: boolean;
}

/**
 * The kernel refused a batch: nothing of it was applied. `index` is the
 * failed message in the batch (-1 when the batch as a whole was refused:
 * at BATCH_BEGIN, or at commit); the message reads
 * `NFT_MSG_NEWRULE: add rule to ip synplug output failed: ... (ENOENT); the whole batch was not applied`.
 */
export class NftBatchError extends NetlinkError {
  /** index of the failed message among the batch's messages, -1 for the batch itself */
  readonly index: number;
  /** name of the failed message type, e.g. 'NFT_MSG_NEWRULE' or 'NFNL_MSG_BATCH_BEGIN' */
  readonly failedType: string;
  /** what the failed message did, e.g. 'add table ip synplug' */
  readonly what: string;
  /** always false: the kernel applied nothing of the batch */
  readonly applied = false;
  /** the kernel module whose absence made the kernel refuse the batch (`nf_tables`), when that is the cause */
  readonly module?: string;
  constructor(err: NetlinkError, index: number, failedType: string, what: string, sentence: string, module?: string) {
    super({
      errno: err.errno,
      requestType: failedType,
      extAckMessage: err.extAckMessage,
      extAckOffset: err.extAckOffset,
      missingAttribute: err.missingAttribute,
      capped: err.capped,
      message: sentence,
    });
    this.name = 'NftBatchError';
    if (module !== undefined) this.module = module;
    this.index = index;
    this.failedType = failedType;
    this.what = what;
  }
}

/** The batch carried a generation id that is no longer current (ERESTART): read the ruleset again and retry. */
export class NftGenerationError extends NftBatchError {
  constructor(err: NetlinkError, genId: number) {
    super(
      err,
      -1,
      'NFNL_MSG_BATCH_BEGIN',
      `batch for generation ${genId}`,
      `NFNL_MSG_BATCH_BEGIN: the nftables ruleset changed since generation ${genId} was read (ERESTART); the whole batch was not applied`,
    );
    this.name = 'NftGenerationError';
  }
}

/**
 * Payload of NFNL_MSG_BATCH_BEGIN (also END without genId): nfgenmsg
 * {AF_UNSPEC, v0, res_id = NFNL_SUBSYS_NFTABLES}, [NFNL_BATCH_GENID].
 * @throws {UsageError} genId not a u32
 */
export function encodeBatchMarker(genId?: number): Buffer[] {
  const out = [encodeNfGenMsg(C.NFPROTO_UNSPEC, C.NFNL_SUBSYS_NFTABLES)];
  if (genId !== undefined) {
    if (!Number.isInteger(genId) || genId < 0 || genId > 0xffffffff) throw new UsageError(`bad generation id ${genId}: a u32`);
    out.push(be32(C.NFNL_BATCH_GENID, genId));
  }
  return out;
}

/** The message name of an NFT_MSG_* number. */
function opName(msg: number): string {
  return NFT_MSG_NAMES[msg] ?? `NFT_MSG_${msg}`;
}

/**
 * The datagram's messages for a list of ops: BEGIN, the ops (NLM_F_ACK on
 * the last one only), END. Pass them to `conn.exchange()` as they are.
 * @throws {UsageError} no ops, or a bad genId
 */
export function batchMessages(ops: readonly BatchOp[], genId?: number): RequestInit[] {
  if (ops.length === 0) throw new UsageError('an nftables batch needs at least one message');
  const msgs: RequestInit[] = [{ type: C.NFNL_MSG_BATCH_BEGIN, flags: 0, payload: encodeBatchMarker(genId) }];
  ops.forEach((op, i) => {
    msgs.push({ type: nftType(op.msg), flags: op.flags | (i === ops.length - 1 ? NLM_F_ACK : 0), payload: op.payload });
  });
  msgs.push({ type: C.NFNL_MSG_BATCH_END, flags: 0, payload: encodeBatchMarker() });
  return msgs;
}

/** A sentence for a kernel refusal (errno by name, see `errnoName`) of a message type. */
function explain(msg: number, code: string): string {
  const name = opName(msg);
  const del = name.includes('_DEL') || name.includes('_DESTROY');
  switch (code) {
    case 'EPERM':
    case 'EACCES':
      return 'permission denied: changing nftables needs CAP_NET_ADMIN (run as root)';
    case 'ENOENT':
      if (msg === C.NFT_MSG_NEWRULE)
        return 'its table or chain does not exist, a set it looks up is missing, or one of its expressions is not available in this kernel';
      if (msg === C.NFT_MSG_NEWCHAIN) return 'its table does not exist, or the chain type is not available in this kernel';
      if (msg === C.NFT_MSG_NEWSET) return 'its table does not exist';
      if (msg === C.NFT_MSG_NEWSETELEM) return 'the set (or its table) does not exist';
      if (msg === C.NFT_MSG_DELSETELEM) return 'the element is not in the set (or the set does not exist)';
      if (del) return 'it does not exist';
      return 'something it refers to does not exist';
    case 'EBUSY':
      return del ? 'it is in use (a rule refers to it, or a chain jumps to it)' : 'the object is busy';
    case 'EEXIST':
      return 'it already exists';
    case 'EINVAL':
      if (msg === C.NFT_MSG_NEWSETELEM) return "invalid element: a timeout needs a set with the timeout flag, and the key must have the set's key length";
      return 'the kernel found the message invalid';
    case 'ERANGE':
      return 'a value is out of range (e.g. a timeout too large)';
    case 'ENOSPC':
      return 'no space left: the set is full';
    case 'EOPNOTSUPP':
      return 'not supported by this kernel';
    case 'EMSGSIZE':
      return 'the message is too large';
    default:
      return 'the kernel refused it';
  }
}

/**
 * Send a batch and check the answers.
 * @param ops the messages (see {@link NftBatch} for builders)
 * @returns `{applied: true}`; with `ignoreMissing`, `{applied: false, missing: true}` when the object was not there
 * @throws {NftBatchError} the kernel refused a message or the commit: nothing was applied
 * @throws {NftGenerationError} `genId` given and the ruleset moved (ERESTART)
 * @throws {UsageError} no ops, or `ignoreMissing` on a batch of more than one message
 * @throws {NetlinkTimeoutError} no answer in time
 * @throws {SynplugError} the socket failed (ENOBUFS only happens when the kernel sent many error
 *   replies, i.e. refused the batch; EMSGSIZE when the batch is larger than the socket send buffer)
 */
export async function commitBatch(conn: NetlinkConnection, ops: readonly BatchOp[], options: CommitOptions = {}): Promise<CommitResult> {
  if (options.ignoreMissing && ops.length !== 1)
    throw new UsageError('ignoreMissing needs a batch of exactly one delete message (the kernel refuses the whole batch on ENOENT)');
  const msgs = batchMessages(ops, options.genId);
  let results: ExchangeResult[];
  try {
    results = await conn.exchange(msgs, { timeoutMs: options.timeoutMs });
  } catch (e) {
    throw wrapSocketError(e, ops.length);
  }
  return checkResults(results, ops, options);
}

/** Interpret an exchange's results for a batch (exported for tests). @throws as {@link commitBatch} */
export function checkResults(results: readonly ExchangeResult[], ops: readonly BatchOp[], options: CommitOptions = {}): CommitResult {
  const begin = results[0];
  if (begin?.error) {
    if (begin.error.code === 'ERESTART' && options.genId !== undefined) throw new NftGenerationError(begin.error, options.genId);
    const code = begin.error.code;
    const noNfTables = code === 'EOPNOTSUPP' || code === 'EPROTONOSUPPORT';
    const why = noNfTables
      ? 'nf_tables is not available in this kernel (module nf_tables)'
      : code === 'EPERM' || code === 'EACCES'
        ? 'permission denied: changing nftables needs CAP_NET_ADMIN (run as root)'
        : 'the kernel refused the batch as a whole (at its start, or when committing it)';
    throw new NftBatchError(
      begin.error,
      -1,
      'NFNL_MSG_BATCH_BEGIN',
      'batch',
      `NFNL_MSG_BATCH_BEGIN: ${why} (${begin.error.code}); the whole batch was not applied`,
      noNfTables ? 'nf_tables' : undefined,
    );
  }
  for (let i = 0; i < ops.length; i++) {
    const r = results[i + 1];
    if (!r?.error) continue;
    const op = ops[i];
    if (options.ignoreMissing && r.error.code === 'ENOENT' && ops.length === 1) return { applied: false, messages: ops.length, missing: true };
    const name = opName(op.msg);
    const sentence = `${name}: ${op.what} failed: ${explain(op.msg, r.error.code)} (${r.error.code}); the whole batch was not applied`;
    throw new NftBatchError(r.error, i, name, op.what, sentence);
  }
  const last = results[ops.length];
  if (!last || last.unanswered) {
    throw new SynplugError(`nftables batch of ${ops.length} message(s) got no answer for its last message; treating it as not applied`, 'kernel');
  }
  return { applied: true, messages: ops.length };
}

/**
 * Reword a socket failure during a batch of `n` messages: ENOBUFS means the
 * kernel sent more error replies than fit (a refused batch), EMSGSIZE that
 * the batch was larger than the send buffer (nothing sent).
 */
export function wrapSocketError(e: unknown, n: number): unknown {
  // The socket layer's error carries the errno name itself (SocketError.code) or in its cause.
  const code = (e as { code?: unknown }).code ?? (e as { cause?: { code?: string } }).cause?.code;
  if (e instanceof SynplugError && code === 'ENOBUFS') {
    return new SynplugError(
      `nftables batch of ${n} message(s) was refused: the kernel sent more error replies than the socket receive buffer holds (ENOBUFS); the whole batch was not applied`,
      'kernel',
      { cause: e },
    );
  }
  if (e instanceof SynplugError && code === 'EMSGSIZE') {
    return new SynplugError(
      `nftables batch of ${n} message(s) is larger than the socket send buffer (EMSGSIZE): nothing was sent; split it into smaller batches`,
      'kernel',
      { cause: e },
    );
  }
  return e;
}

/**
 * A batch under construction: builders for each object, then
 * {@link NftBatch.commit}. Mirrors google/nftables' `Conn` buffering until
 * `Flush`. Every builder validates its input (UsageError) at once, so a
 * batch that was built can be sent.
 */
export class NftBatch {
  /** the messages, in order */
  readonly ops: BatchOp[] = [];

  /** Number of messages (BEGIN and END excluded). */
  get size(): number {
    return this.ops.length;
  }

  /** Append a raw op. */
  add(op: BatchOp): this {
    this.ops.push(op);
    return this;
  }

  /** NFT_MSG_NEWTABLE (no NLM_F_CREATE, as nft: an existing table is kept). @throws {UsageError} */
  addTable(t: TableRef & { flags?: number; comment?: string }): this {
    return this.add({ msg: C.NFT_MSG_NEWTABLE, flags: 0, payload: encodeTable(t), what: `add table ${t.family} ${t.name}` });
  }
  /** NFT_MSG_DELTABLE: the table and everything in it. @throws {UsageError} */
  deleteTable(t: TableRef): this {
    return this.add({ msg: C.NFT_MSG_DELTABLE, flags: 0, payload: encodeTableRef(t), what: `delete table ${t.family} ${t.name}` });
  }
  /** NFT_MSG_NEWCHAIN with NLM_F_CREATE. @throws {UsageError} */
  addChain(c: ChainSpec): this {
    return this.add({ msg: C.NFT_MSG_NEWCHAIN, flags: NLM_F_CREATE, payload: encodeChain(c), what: `add chain ${c.family} ${c.table} ${c.name}` });
  }
  /** NFT_MSG_DELCHAIN (its rules go with it). @throws {UsageError} */
  deleteChain(c: { family: string; table: string; name: string }): this {
    return this.add({ msg: C.NFT_MSG_DELCHAIN, flags: 0, payload: encodeChainRef(c), what: `delete chain ${c.family} ${c.table} ${c.name}` });
  }
  /** NFT_MSG_NEWRULE, appended (NLM_F_CREATE | NLM_F_APPEND), or inserted with `insert`. @throws {UsageError} */
  addRule(r: RuleSpec, options: { insert?: boolean } = {}): this {
    return this.add({
      msg: C.NFT_MSG_NEWRULE,
      flags: ruleFlags(options.insert),
      payload: encodeRule(r),
      what: `add rule to ${r.family} ${r.table} ${r.chain}`,
    });
  }
  /** NFT_MSG_DELRULE by handle. @throws {UsageError} */
  deleteRule(r: { family: string; table: string; chain: string; handle: number }): this {
    return this.add({
      msg: C.NFT_MSG_DELRULE,
      flags: 0,
      payload: encodeRuleRef(r),
      what: `delete rule handle ${r.handle} in ${r.family} ${r.table} ${r.chain}`,
    });
  }
  /** NFT_MSG_DELRULE without a handle: every rule of a chain (`nft flush chain`). @throws {UsageError} */
  flushChain(c: { family: string; table: string; chain: string }): this {
    return this.add({ msg: C.NFT_MSG_DELRULE, flags: 0, payload: encodeRuleRef(c), what: `flush chain ${c.family} ${c.table} ${c.chain}` });
  }
  /** NFT_MSG_NEWSET with NLM_F_CREATE. @throws {UsageError} */
  addSet(s: SetSpec): this {
    return this.add({ msg: C.NFT_MSG_NEWSET, flags: NLM_F_CREATE, payload: encodeSet(s), what: `add set ${s.family} ${s.table} ${s.name}` });
  }
  /** NFT_MSG_DELSET. @throws {UsageError} */
  deleteSet(s: { family: string; table: string; name: string }): this {
    return this.add({ msg: C.NFT_MSG_DELSET, flags: 0, payload: encodeSetRef(s), what: `delete set ${s.family} ${s.table} ${s.name}` });
  }
  /** NFT_MSG_NEWSETELEM with NLM_F_CREATE. @throws {UsageError} */
  addElements(s: ElementsSpec): this {
    return this.add({
      msg: C.NFT_MSG_NEWSETELEM,
      flags: ELEMENT_ADD_FLAGS,
      payload: encodeElements(s),
      what: `add ${s.elements.length} element(s) to set ${s.family} ${s.table} ${s.set}`,
    });
  }
  /** NFT_MSG_DELSETELEM. @throws {UsageError} */
  deleteElements(s: ElementsSpec): this {
    return this.add({
      msg: C.NFT_MSG_DELSETELEM,
      flags: 0,
      payload: encodeElements({ ...s, elements: s.elements.map((e) => ({ key: e.key })) }),
      what: `delete ${s.elements.length} element(s) from set ${s.family} ${s.table} ${s.set}`,
    });
  }

  /** The messages to send (see {@link batchMessages}). @throws {UsageError} empty batch */
  messages(genId?: number): RequestInit[] {
    return batchMessages(this.ops, genId);
  }

  /** Send it; see {@link commitBatch} for results and errors. An empty batch sends nothing and reports `applied: false`. */
  async commit(conn: NetlinkConnection, options: CommitOptions = {}): Promise<CommitResult> {
    if (this.ops.length === 0) return { applied: false, messages: 0 };
    return commitBatch(conn, this.ops, options);
  }
}

/** A batch encoded in advance (BEGIN, ops, END): send it with {@link runPrepared}. */
export interface PreparedBatch {
  /** the ops (for error messages) */
  readonly ops: readonly BatchOp[];
  /** BEGIN, ops, END: ready for `conn.exchange()` */
  readonly messages: readonly RequestInit[];
}

/**
 * Send a prepared batch: one datagram, one answer.
 * @param conn a NETLINK_NETFILTER connection
 * @param p the batch, e.g. from {@link batchMessages}
 * @param options.ignoreMissing for a one-message delete: ENOENT (not there) counts as done, `{missing: true}`
 * @param options.timeoutMs how long to wait for the answer, ms
 * @throws {UsageError} `ignoreMissing` on a batch of more than one message
 * @throws {NftBatchError} the kernel refused (nothing applied)
 * @throws {SynplugError} the socket failed (category `kernel`)
 */
export async function runPrepared(
  conn: NetlinkConnection,
  p: PreparedBatch,
  options: { ignoreMissing?: boolean; timeoutMs?: number } = {},
): Promise<CommitResult> {
  if (options.ignoreMissing && p.ops.length !== 1) throw new UsageError('ignoreMissing needs a batch of exactly one delete message');
  let results: ExchangeResult[];
  try {
    results = await conn.exchange(p.messages, { timeoutMs: options.timeoutMs });
  } catch (e) {
    throw wrapSocketError(e, p.ops.length);
  }
  return checkResults(results, p.ops, options);
}
