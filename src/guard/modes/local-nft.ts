/**
 * The local hold's nftables side: the SYN-marking rule of the technique, in
 * a table owned by synplug, and the set element that turns it on (moved here
 * from src/iptables, which stays the general netfilter layer). Its defaults
 * are the guard's configuration (`config.ts` DEFAULTS and NFT_NAMES): one
 * source.
 *
 * ## The rule
 *
 * For an IPv4 address, with the defaults (table `synplug`, chain `output`,
 * mark 1), {@link ensureMarkRule} makes exactly this ruleset, as
 * `nft list ruleset` prints it:
 *
 * ```
 * table ip synplug {
 *   chain output {
 *     type route hook output priority mangle; policy accept;
 *     ip saddr 169.254.255.254 tcp flags syn / syn,ack meta mark set 0x00000001
 *   }
 * }
 * ```
 * (`tcp flags syn / syn,ack` is nft 1.0.6's spelling of
 * `tcp flags & (syn|ack) == syn`: SYN set, ACK clear, so SYN-ACKs and every
 * later segment are left alone.) With `port: 8080`, `tcp dport 8080` comes
 * before `tcp flags`. The kernel expressions, in order:
 *
 * ```
 * [ payload load 4b @ network header + 12 => reg 1 ]      ip saddr (ip6: 16b @ network header + 8)
 * [ cmp eq reg 1 0xa9fefffe ]
 * [ meta load l4proto => reg 1 ]                          tcp (dependency)
 * [ cmp eq reg 1 0x06 ]
 * [ payload load 2b @ transport header + 2 => reg 1 ]     tcp dport (only with port)
 * [ cmp eq reg 1 0x1f90 ]
 * [ payload load 1b @ transport header + 13 => reg 1 ]    tcp flags
 * [ bitwise reg 1 = ( reg 1 & 0x12 ) ^ 0x00 ]
 * [ cmp eq reg 1 0x02 ]
 * [ immediate reg 1 0x01000000 ]                          the mark, host byte order
 * [ meta set mark with reg 1 ]                            NFTA_META_SREG, not DREG
 * ```
 * This is byte for byte what nft 1.0.6 sends for the same rule
 * (fixtures/captures/09_nft_setup).
 *
 * ## The conditional rule (kernel-side dead man's switch)
 *
 * With `conditional: true`, the address test becomes a lookup in a named
 * set with the `timeout` flag, created in the same table:
 *
 * ```
 * table ip synplug {
 *   set synplug_active {
 *     type ipv4_addr
 *     flags timeout
 *   }
 *   chain output {
 *     type route hook output priority mangle; policy accept;
 *     ip saddr @synplug_active tcp flags syn / syn,ack meta mark set 0x00000001
 *   }
 * }
 * ```
 * (`[ payload load 4b @ network header + 12 => reg 1 ] [ lookup reg 1 set synplug_active ]`
 * replaces the first cmp.) The rule marks only while the set holds the
 * address: the guard adds it with a timeout of max-hold when plugging
 * ({@link addSetElement}) and deletes it at release ({@link deleteSetElement});
 * if the guard dies, the element times out and marking stops by itself.
 *
 * ## Families
 *
 * The family follows the address: `ip` for IPv4, `ip6` for IPv6 (set type
 * `ipv6_addr`, `ip6 saddr` at network header + 8, 16 bytes). One table per
 * family, rather than one `inet` table, because: the rule is then exactly
 * what nft writes for `table ip`/`table ip6` (checked against the capture),
 * it needs no `meta nfproto` test on every packet, and the set's key type
 * is fixed by the family. `family: 'inet'` is accepted too (one table for
 * both families; the rule then starts with `meta nfproto ipv4`/`ipv6`).
 *
 * ## Ownership
 *
 * Everything lives in synplug's own table (default `synplug`): `ensure`
 * and `remove` never read-modify anything else, so rules of other software
 * (iptables-nft's `ip mangle` table, legacy iptables, other nft tables) are
 * never touched. The table carries synplug's comment (teardown-marks.ts
 * TABLE_COMMENT; the guard's, holdTableComment: with the mark of the state
 * directory whose setup made it, `stateMark`), which the guard's teardown
 * requires before removing it; a table of that name without the comment
 * (or, a state mark given, without that one) is recreated with it.
 *
 * @module
 */
import type { NetlinkConnection } from '../../netlink/connection.js';
import { NETLINK_NETFILTER } from '../../netlink/message.js';
import { protocolInfo } from '../../netlink/protocols.js';
import { UsageError } from '../../netlink/errors.js';
import * as C from '../../iptables/constants.js';
import { batchMessages, NftBatch, NftGenerationError, runPrepared, type BatchOp, type CommitResult, type PreparedBatch } from '../../iptables/batch.js';
import { getGenId } from '../../iptables/gen.js';
import { getTable, listTables, type NftTable } from '../../iptables/table.js';
import { listChains, type ChainSpec, type NftChain } from '../../iptables/chain.js';
import { listRules, type NftRule } from '../../iptables/rule.js';
import {
  ELEMENT_ADD_FLAGS,
  encodeElements,
  listSets,
  listSetElements as listElems,
  type NftSet,
  type NftSetElement,
  type SetSpec,
} from '../../iptables/set.js';
import { checkMark, checkName, checkPort, checkTimeoutMs, parseAddress, type ParsedAddress } from '../../iptables/validate.js';
import type { Expr } from '../../iptables/expr/index.js';
import { COMMENT_MAXLEN } from '../../iptables/rule.js';
import { DEFAULTS, NFT_NAMES } from '../config.js';
import { holdTableComment, TABLE_COMMENT, tableIsMarked } from '../teardown-marks.js';

export { runPrepared, type PreparedBatch };

/** Default table name (the guard's DEFAULTS.table). */
export const DEFAULT_TABLE = DEFAULTS.table;
/** Default chain name (the guard's NFT_NAMES.chain). */
export const DEFAULT_CHAIN = NFT_NAMES.chain;
/** Default set name of the conditional rule (the guard's NFT_NAMES.set). */
export const DEFAULT_SET = NFT_NAMES.set;
/** Default mark (the guard's DEFAULTS.mark). */
export const DEFAULT_MARK = DEFAULTS.mark;

/**
 * Refuse a connection of another protocol than NETLINK_NETFILTER, naming both.
 * @param conn the connection handed in
 * @param fn the function's name, for the message
 * @throws {UsageError} not a NETLINK_NETFILTER connection
 */
export function requireNetfilter(conn: NetlinkConnection, fn: string): void {
  if (conn?.protocol === NETLINK_NETFILTER) return;
  const name = (p: number) => protocolInfo(p)?.name ?? `protocol ${p}`;
  const got = conn && typeof conn.protocol === 'number' ? `a ${name(conn.protocol)} connection (protocol ${conn.protocol})` : 'no connection';
  throw new UsageError(`${fn} needs a NETLINK_NETFILTER connection (protocol ${NETLINK_NETFILTER}; openNftables() makes one), not ${got}`);
}
/** NFTA_SET_ID / NFTA_LOOKUP_SET_ID used when the set is created in the same batch as the rule. */
const SET_ID = 1;

/** What to mark. */
export interface MarkRuleOptions {
  /** source address of the SYNs (the proxy's address), IPv4 or IPv6, no prefix */
  address: string;
  /** also require this TCP destination port (1-65535) */
  port?: number;
  /** the mark to set: u32, not 0; default 1 */
  mark?: number;
  /** table name; default `synplug` */
  table?: string;
  /** chain name; default `output` */
  chain?: string;
  /** `ip`, `ip6` or `inet`; default `ip` for an IPv4 address, `ip6` for IPv6 */
  family?: 'ip' | 'ip6' | 'inet';
  /** mark only while the set below holds the address; default false */
  conditional?: boolean;
  /** set name for `conditional`; default `synplug_active` */
  set?: string;
  /** a comment stored with the rule (at most 127 bytes) */
  comment?: string;
  /**
   * the mark of the state directory whose setup makes the table (16 hex
   * digits, state-fs.ts's `stateDirMark`): the table's comment is then
   * teardown-marks.ts's holdTableComment, and a table with another comment
   * (on a kernel that keeps table comments, 5.10+) is made anew with it.
   * Without it the comment is TABLE_COMMENT, and only a table without
   * synplug's mark is made anew.
   */
  stateMark?: string;
}

/** {@link MarkRuleOptions} checked, defaults filled. */
export interface ResolvedMarkRule {
  address: ParsedAddress;
  port?: number;
  mark: number;
  table: string;
  chain: string;
  family: 'ip' | 'ip6' | 'inet';
  conditional: boolean;
  set: string;
  comment?: string;
  stateMark?: string;
}

/**
 * Check the options and fill the defaults. Nothing is sent.
 * @throws {UsageError} a bad address; a mark of 0 or not a u32; a port outside 1-65535;
 *   a table, chain or set name empty or over 255 bytes (NFT_NAME_MAXLEN 256 with the NUL);
 *   an IPv6 address with family `ip` (or IPv4 with `ip6`); a comment over 127 bytes; a state mark that is not 16 hex digits
 */
export function resolveMarkRule(o: MarkRuleOptions): ResolvedMarkRule {
  if (!o || typeof o !== 'object') throw new UsageError('mark rule options are required (at least an address)');
  const address = parseAddress(o.address);
  const mark = checkMark(o.mark ?? DEFAULT_MARK);
  const port = o.port === undefined ? undefined : checkPort(o.port);
  const table = checkName(o.table ?? DEFAULT_TABLE, 'table');
  const chain = checkName(o.chain ?? DEFAULT_CHAIN, 'chain');
  const set = checkName(o.set ?? DEFAULT_SET, 'set');
  const family = o.family ?? (address.version === 4 ? 'ip' : 'ip6');
  if (family !== 'ip' && family !== 'ip6' && family !== 'inet') throw new UsageError(`bad family '${String(family)}' for the mark rule: use ip, ip6 or inet`);
  if ((family === 'ip' && address.version !== 4) || (family === 'ip6' && address.version !== 6)) {
    throw new UsageError(
      `address '${address.text}' is IPv${address.version}; family ${family} cannot match it (use ${address.version === 4 ? 'ip' : 'ip6'} or inet)`,
    );
  }
  if (o.comment !== undefined) {
    if (typeof o.comment !== 'string' || o.comment.includes('\0') || Buffer.byteLength(o.comment) > COMMENT_MAXLEN - 1) {
      throw new UsageError(`bad rule comment: text of at most ${COMMENT_MAXLEN - 1} bytes, no NUL`);
    }
  }
  if (o.stateMark !== undefined && (typeof o.stateMark !== 'string' || !/^[0-9a-f]{16}$/.test(o.stateMark)))
    throw new UsageError(`bad state directory mark '${String(o.stateMark)}': 16 lowercase hex digits (a state directory's mark)`);
  return {
    address,
    port,
    mark,
    table,
    chain,
    family,
    conditional: o.conditional ?? false,
    set,
    ...(o.comment !== undefined && { comment: o.comment }),
    ...(o.stateMark !== undefined && { stateMark: o.stateMark }),
  };
}

const REG = C.NFT_REG_1;

/**
 * The rule's expressions (see the module comment for the list).
 * @param setId add NFTA_LOOKUP_SET_ID (when the set is created in the same batch)
 */
export function markRuleExprs(r: ResolvedMarkRule, setId?: number): Expr[] {
  const v4 = r.address.version === 4;
  const out: Expr[] = [];
  if (r.family === 'inet') {
    out.push({ name: 'meta', key: 'nfproto', dreg: REG }, { name: 'cmp', sreg: REG, op: 'eq', data: v4 ? '02' : '0a' });
  }
  out.push({ name: 'payload', dreg: REG, base: 'network', offset: v4 ? 12 : 8, len: v4 ? 4 : 16 });
  if (r.conditional) out.push({ name: 'lookup', sreg: REG, set: r.set, ...(setId !== undefined && { setId }) });
  else out.push({ name: 'cmp', sreg: REG, op: 'eq', data: r.address.bytes.toString('hex') });
  out.push({ name: 'meta', key: 'l4proto', dreg: REG }, { name: 'cmp', sreg: REG, op: 'eq', data: '06' });
  if (r.port !== undefined) {
    const p = Buffer.alloc(2);
    p.writeUInt16BE(r.port);
    out.push({ name: 'payload', dreg: REG, base: 'transport', offset: 2, len: 2 }, { name: 'cmp', sreg: REG, op: 'eq', data: p.toString('hex') });
  }
  const mark = Buffer.alloc(4);
  mark.writeUInt32LE(r.mark); // meta mark is host byte order; synplug runs on little-endian hosts
  out.push(
    { name: 'payload', dreg: REG, base: 'transport', offset: 13, len: 1 },
    // TCP flags: FIN 0x01, SYN 0x02, RST 0x04, PSH 0x08, ACK 0x10 -> & (SYN|ACK) == SYN
    { name: 'bitwise', sreg: REG, dreg: REG, op: 'mask_xor', len: 1, mask: '12', xor: '00' },
    { name: 'cmp', sreg: REG, op: 'eq', data: '02' },
    { name: 'immediate', dreg: REG, data: mark.toString('hex') },
    { name: 'meta', key: 'mark', sreg: REG },
  );
  return out;
}

/** The base chain: type route, hook output, priority mangle (-150), policy accept. */
export function markChainSpec(r: ResolvedMarkRule): ChainSpec {
  return { family: r.family, table: r.table, name: r.chain, type: 'route', hook: 'output', prio: C.NF_IP_PRI_MANGLE, policy: 'accept' };
}

/** The set of the conditional rule: key type of the address, flag `timeout`. */
export function markSetSpec(r: ResolvedMarkRule, id?: number): SetSpec {
  return {
    family: r.family,
    table: r.table,
    name: r.set,
    type: r.address.version === 4 ? 'ipv4_addr' : 'ipv6_addr',
    flags: ['timeout'],
    ...(id !== undefined && { id }),
  };
}

/** What is in our table now (read by {@link readTableState}). */
export interface TableState {
  table?: NftTable;
  chains: NftChain[];
  rules: NftRule[];
  sets: NftSet[];
}

/**
 * Read one table: the table, its chains, rules and sets.
 * @throws {NetlinkError} a dump refused
 */
export async function readTableState(conn: NetlinkConnection, family: string, table: string): Promise<TableState> {
  requireNetfilter(conn, 'readTableState');
  const t = await getTable(conn, { family, name: table });
  if (!t) return { chains: [], rules: [], sets: [] };
  // One dump at a time (the kernel runs one dump per socket).
  const chains = await listChains(conn, { family, table });
  const rules = await listRules(conn, { family, table });
  const sets = await listSets(conn, { family, table });
  return { table: t, chains, rules, sets };
}

function canon(e: Expr): string {
  const { setId: _ignored, ...rest } = e as Expr & { setId?: number };
  const sorted = Object.fromEntries(
    Object.entries(rest)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => a.localeCompare(b)),
  );
  return JSON.stringify(sorted);
}

/** True when a listed rule is the desired one (same expressions, NFTA_LOOKUP_SET_ID aside, and same comment). */
export function ruleMatches(rule: NftRule, r: ResolvedMarkRule): boolean {
  const want = markRuleExprs(r);
  if (rule.expr.length !== want.length || rule.comment !== r.comment) return false;
  return want.every((e, i) => canon(e) === canon(rule.expr[i]));
}

function chainMatches(c: NftChain): boolean {
  return c.type === 'route' && c.hook === 'output' && c.prio === C.NF_IP_PRI_MANGLE && c.policy === 'accept';
}

function setMatches(s: NftSet, r: ResolvedMarkRule): boolean {
  const want = r.address.version === 4 ? { type: 'ipv4_addr', len: 4 } : { type: 'ipv6_addr', len: 16 };
  return (
    s.keyLen === want.len &&
    s.type === want.type &&
    s.flags.includes('timeout') &&
    !s.flags.includes('interval') &&
    !s.flags.includes('map') &&
    !s.flags.includes('constant') &&
    s.timeoutMs === undefined
  );
}

/**
 * The batch that takes `state` to the desired ruleset: creates what is
 * missing, replaces what differs (a chain with another type/hook/priority/policy
 * is deleted and re-created; a set with another key or flags likewise, after
 * deleting the rules that look it up; every rule in the chain but one
 * matching rule is deleted), never duplicates. Empty when nothing differs.
 * Other chains and sets of the table are left alone.
 * @param options `chain: false`: only the table and (conditional) its set,
 *   which hook nothing (the local hold's permanent part); the base chain and
 *   its rule are left as they are (the hold arms them around each hold)
 */
export function planMarkRule(state: TableState, r: ResolvedMarkRule, options: { chain?: boolean } = {}): NftBatch {
  const b = new NftBatch();
  const tref = { family: r.family, name: r.table };
  const comment = r.stateMark === undefined ? TABLE_COMMENT : holdTableComment(r.stateMark);
  const marked = state.table && tableIsMarked(state.table);
  if (state.table && (marked === false || (marked === true && r.stateMark !== undefined && state.table.comment !== comment))) {
    // Without synplug's comment (made by hand), or (a state mark given) without this one (an earlier synplug's):
    // recreated with it, in the same batch. Another state directory's never reaches here (the guard refuses it first).
    b.deleteTable(tref);
    state = { chains: [], rules: [], sets: [] };
  }
  if (!state.table) b.addTable({ ...tref, comment });
  const deleted = new Set<number>();
  let setCreated = false;
  if (r.conditional) {
    const s = state.sets.find((x) => x.name === r.set);
    if (!s || !setMatches(s, r)) {
      if (s) {
        for (const rule of state.rules) {
          if (rule.handle !== undefined && rule.expr.some((e) => e.name === 'lookup' && (e as { set?: string }).set === r.set)) {
            b.deleteRule({ family: r.family, table: r.table, chain: rule.chain, handle: rule.handle });
            deleted.add(rule.handle);
          }
        }
        b.deleteSet({ family: r.family, table: r.table, name: r.set });
      }
      b.addSet(markSetSpec(r, SET_ID));
      setCreated = true;
    }
  }
  if (options.chain === false) return b;
  const chain = state.chains.find((c) => c.name === r.chain);
  let rules = state.rules.filter((x) => x.chain === r.chain && x.handle !== undefined && !deleted.has(x.handle));
  if (!chain) {
    b.addChain(markChainSpec(r));
  } else if (!chainMatches(chain)) {
    b.deleteChain({ family: r.family, table: r.table, name: r.chain });
    b.addChain(markChainSpec(r));
    rules = [];
  }
  const keep = setCreated ? undefined : rules.find((x) => ruleMatches(x, r));
  for (const x of rules) if (x !== keep) b.deleteRule({ family: r.family, table: r.table, chain: r.chain, handle: x.handle! });
  if (!keep) {
    b.addRule({
      family: r.family,
      table: r.table,
      chain: r.chain,
      expr: markRuleExprs(r, setCreated ? SET_ID : undefined),
      ...(r.comment !== undefined && { comment: r.comment }),
    });
  }
  return b;
}

/** What {@link ensureMarkRule} did. */
export interface EnsureResult {
  /** false when the ruleset already was as wanted (nothing was sent) */
  changed: boolean;
  /** the batch's messages, e.g. `add table ip synplug`, `delete rule handle 4 in ip synplug output` */
  actions: string[];
  /** the resolved rule (family, table, chain, set...) */
  rule: ResolvedMarkRule;
}

/**
 * Make the marking rule exist exactly once, in one atomic batch.
 *
 * Reads the generation id and synplug's table, plans the difference
 * ({@link planMarkRule}; `parts.chain: false`: the table and set only), and sends it with NFNL_BATCH_GENID: if someone
 * changed the ruleset in between, the kernel refuses (ERESTART) and this
 * reads and plans again (up to 5 times).
 *
 * @throws {UsageError} bad options, or a connection that is not NETLINK_NETFILTER, before anything is sent (see {@link resolveMarkRule})
 * @throws {NftBatchError} the kernel refused the batch (nothing applied); the message names the failed message
 * @throws {NftGenerationError} the ruleset kept changing under us
 * @throws {NetlinkError} a dump refused (EPERM without CAP_NET_ADMIN...)
 */
export async function ensureMarkRule(conn: NetlinkConnection, options: MarkRuleOptions, parts: { chain?: boolean } = {}): Promise<EnsureResult> {
  requireNetfilter(conn, 'ensureMarkRule');
  const r = resolveMarkRule(options);
  for (let attempt = 1; ; attempt++) {
    const genId = await getGenId(conn);
    const state = await readTableState(conn, r.family, r.table);
    const batch = planMarkRule(state, r, parts);
    const actions = batch.ops.map((o) => o.what);
    if (batch.size === 0) return { changed: false, actions, rule: r };
    try {
      await batch.commit(conn, { genId });
      return { changed: true, actions, rule: r };
    } catch (e) {
      if (e instanceof NftGenerationError && attempt < 5) continue;
      throw e;
    }
  }
}

/**
 * The batch that removes the marking base chain with its rule (its rules
 * first: a kernel before recursive chain deletion refuses a chain with rules,
 * EBUSY); the table and its set stay.
 * @throws {UsageError} bad names
 */
export function markChainRemoval(r: Pick<ResolvedMarkRule, 'family' | 'table' | 'chain'>): NftBatch {
  return new NftBatch().flushChain({ family: r.family, table: r.table, chain: r.chain }).deleteChain({ family: r.family, table: r.table, name: r.chain });
}

/** Which table {@link removeMarkTable} deletes. */
export interface RemoveOptions {
  /** default `synplug` */
  table?: string;
  /** only this family; default: the table of that name in each of ip, ip6 and inet */
  family?: 'ip' | 'ip6' | 'inet';
}

/**
 * Delete synplug's table (its chains, rules, sets and elements go with it),
 * in one batch; nothing else is touched. Missing tables are fine.
 * @returns the tables deleted, e.g. `['ip synplug']`
 * @throws {UsageError} a bad table name or family, before anything is sent
 * @throws {NftBatchError} the kernel refused the delete
 * @throws {NetlinkError} the table listing was refused
 */
export async function removeMarkTable(conn: NetlinkConnection, options: RemoveOptions = {}): Promise<{ removed: string[] }> {
  requireNetfilter(conn, 'removeMarkTable');
  const table = checkName(options.table ?? DEFAULT_TABLE, 'table');
  const families = options.family ? [options.family] : ['ip', 'ip6', 'inet'];
  for (const f of families) if (f !== 'ip' && f !== 'ip6' && f !== 'inet') throw new UsageError(`bad family '${String(f)}': use ip, ip6 or inet`);
  for (let attempt = 1; ; attempt++) {
    const genId = await getGenId(conn);
    const existing = (await listTables(conn)).filter((t) => t.name === table && families.includes(t.family));
    if (existing.length === 0) return { removed: [] };
    const b = new NftBatch();
    for (const t of existing) b.deleteTable({ family: t.family, name: t.name });
    try {
      await b.commit(conn, { genId });
      return { removed: existing.map((t) => `${t.family} ${t.name}`) };
    } catch (e) {
      if (e instanceof NftGenerationError && attempt < 5) continue;
      throw e;
    }
  }
}

// ----------------------------------------------------------------- set elements

/** One element of the conditional rule's set. */
export interface ElementOptions {
  /** the address (the set's key) */
  address: string;
  /** default `synplug` */
  table?: string;
  /** default `synplug_active` */
  set?: string;
  /** default: `ip` for IPv4, `ip6` for IPv6 (pass `inet` if the rule was made with it) */
  family?: 'ip' | 'ip6' | 'inet';
  /** element timeout, ms (10 ms to ~584 years); required to add: the dead man's switch */
  timeoutMs?: number;
}

/** Element operations encoded once, for a guard's plug window. */
export interface PreparedElementOps {
  /** NEWSETELEM with the timeout: one message (an element already there keeps its old timeout on some kernels: Linux 6.1 does, 6.12 renews it; see test/kernel/nft-kernel.test.ts) */
  readonly add?: PreparedBatch;
  /**
   * NEWSETELEM, DELSETELEM, NEWSETELEM in one batch: the element exists
   * afterwards with a FRESH timeout whether or not it was there before (the
   * first add makes the delete safe; no ENOENT possible).
   */
  readonly refresh?: PreparedBatch;
  /** DELSETELEM: one message; send with `{ ignoreMissing: true }` for "delete if present" */
  readonly delete: PreparedBatch;
}

/**
 * Check and encode the element operations once; `add` and `refresh` exist
 * when `timeoutMs` is given.
 * @throws {UsageError} bad address, names, family or timeout (nothing is sent)
 */
export function prepareElementOps(o: ElementOptions): PreparedElementOps {
  if (!o || typeof o !== 'object') throw new UsageError('element options are required (at least an address)');
  const address = parseAddress(o.address);
  const family = o.family ?? (address.version === 4 ? 'ip' : 'ip6');
  if (family !== 'ip' && family !== 'ip6' && family !== 'inet') throw new UsageError(`bad family '${String(family)}': use ip, ip6 or inet`);
  if ((family === 'ip' && address.version !== 4) || (family === 'ip6' && address.version !== 6)) {
    throw new UsageError(`address '${address.text}' is IPv${address.version}; a set of family ${family} cannot hold it`);
  }
  const table = checkName(o.table ?? DEFAULT_TABLE, 'table');
  const set = checkName(o.set ?? DEFAULT_SET, 'set');
  const where = `set ${family} ${table} ${set}`;
  const base = { family, table, set };
  const delOp: BatchOp = {
    msg: C.NFT_MSG_DELSETELEM,
    flags: 0,
    payload: encodeElements({ ...base, elements: [{ key: address.bytes }] }),
    what: `delete element ${address.text} from ${where}`,
  };
  const prep = (ops: BatchOp[]): PreparedBatch => ({ ops, messages: batchMessages(ops) });
  if (o.timeoutMs === undefined) return { delete: prep([delOp]) };
  const timeoutMs = checkTimeoutMs(o.timeoutMs);
  const addOp: BatchOp = {
    msg: C.NFT_MSG_NEWSETELEM,
    flags: ELEMENT_ADD_FLAGS,
    payload: encodeElements({ ...base, elements: [{ key: address.bytes, timeoutMs }] }),
    what: `add element ${address.text} timeout ${timeoutMs}ms to ${where}`,
  };
  return { add: prep([addOp]), refresh: prep([addOp, delOp, addOp]), delete: prep([delOp]) };
}

/**
 * Add the address to the set with a timeout: ONE batch of one NEWSETELEM.
 * With `refresh: true`, the batch is NEWSETELEM + DELSETELEM + NEWSETELEM so
 * that an element already present gets the new timeout too (on a plain
 * re-add, Linux 6.1 keeps the old timeout; 6.12 renews it).
 * @throws {UsageError} bad input or no `timeoutMs`, before anything is sent
 * @throws {NftBatchError} refused: e.g. `NFT_MSG_NEWSETELEM: ... the set (or its table) does not exist (ENOENT)`
 */
export async function addSetElement(conn: NetlinkConnection, o: ElementOptions & { refresh?: boolean }): Promise<CommitResult> {
  requireNetfilter(conn, 'addSetElement');
  if (o?.timeoutMs === undefined) throw new UsageError('addSetElement needs timeoutMs: the element must time out by itself if the guard dies');
  const p = prepareElementOps(o);
  return runPrepared(conn, o.refresh ? p.refresh! : p.add!);
}

/**
 * Delete the address from the set: ONE batch of one DELSETELEM.
 * @param o.ignoreMissing treat "not in the set" (ENOENT) as success (`{applied: false, missing: true}`):
 *   "delete if present". The kernel answers ENOENT also when the set or table is missing; both mean
 *   the address is not marked.
 * @throws {UsageError} bad input, before anything is sent
 * @throws {NftBatchError} refused (ENOENT without `ignoreMissing`)
 */
export async function deleteSetElement(conn: NetlinkConnection, o: ElementOptions & { ignoreMissing?: boolean }): Promise<CommitResult> {
  requireNetfilter(conn, 'deleteSetElement');
  const p = prepareElementOps({ ...o, timeoutMs: undefined });
  return runPrepared(conn, p.delete, { ignoreMissing: o.ignoreMissing });
}

/**
 * The elements of the conditional rule's set, with their timeout and the time left.
 * @throws {UsageError} bad names or family
 * @throws {NetlinkError} ENOENT when the table or set does not exist
 */
export async function listMarkSetElements(
  conn: NetlinkConnection,
  o: { table?: string; set?: string; family: 'ip' | 'ip6' | 'inet' },
): Promise<NftSetElement[]> {
  requireNetfilter(conn, 'listMarkSetElements');
  return listElems(conn, { family: o.family, table: o.table ?? DEFAULT_TABLE, set: o.set ?? DEFAULT_SET });
}
