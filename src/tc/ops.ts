/**
 * qdisc, class and filter operations over a NETLINK_ROUTE connection.
 *
 * | operation | message | flags (NLM_F_REQUEST and NLM_F_ACK are added by the connection) |
 * |---|---|---|
 * | add | RTM_NEWQDISC / RTM_NEWTCLASS / RTM_NEWTFILTER | NLM_F_CREATE \| NLM_F_EXCL |
 * | replace | same | NLM_F_CREATE \| NLM_F_REPLACE |
 * | change | same | none |
 * | delete | RTM_DELQDISC / RTM_DELTCLASS / RTM_DELTFILTER | none |
 * | list | RTM_GETQDISC / RTM_GETTCLASS / RTM_GETTFILTER | NLM_F_DUMP |
 * | plug verbs | RTM_NEWQDISC, kind plug, `struct tc_plug_qopt` | none (a change) |
 *
 * Kernel errors come back as {@link NetlinkError} with a sentence that names
 * the device, kind, module and handles (the `netlink` socket cannot ask for
 * extended acks, so the kernel's own text is not available).
 *
 * @module
 */
import { str, u32 } from '../netlink/attributes.js';
import { NetlinkError, UsageError } from '../netlink/errors.js';
import type { NetlinkConnection } from '../netlink/connection.js';
import { NLM_F_CREATE, NLM_F_EXCL, NLM_F_REPLACE, type NetlinkMessage } from '../netlink/message.js';
import {
  RTM_NEWQDISC, RTM_DELQDISC, RTM_GETQDISC, RTM_NEWTCLASS, RTM_DELTCLASS, RTM_GETTCLASS,
  RTM_NEWTFILTER, RTM_DELTFILTER, RTM_GETTFILTER,
} from '../netlink/route/constants.js';
import { listRawLinks, resolveIfindex, validateIndex } from '../netlink/route/link.js';
import {
  TCA_KIND, TCA_CHAIN, TC_H_ROOT, TC_H_INGRESS, TCQ_PLUG_BUFFER, TCQ_PLUG_RELEASE_ONE, TCQ_PLUG_RELEASE_INDEFINITE,
  TCQ_PLUG_LIMIT, ETH_P_ALL,
} from './constants.js';
import { decodeClass, decodeFilter, decodeQdisc } from './decode.js';
import { formatHandle, formatQdiscHandle, parseFilterParent, toHandle, toQdiscHandle } from './handle.js';
import { encodePlugQopt } from './kinds/plug.js';
import { parseProtocol } from './proto.js';
import { filterKind, filterModule, qdiscKind, qdiscModule } from './registry.js';
import { encodeTcmsg, filterInfo } from './tcmsg.js';
import type { ClassEntry, FilterEntry, QdiscEntry } from './types.js';
import { parseSize } from './units.js';
import './register.js';

/** What the tc operations need from a connection (a {@link NetlinkConnection} on NETLINK_ROUTE). */
export type TcConnection = Pick<NetlinkConnection, 'request' | 'dumpAll' | 'dumpEach'>;

/**
 * Receives each entry of a listing as its datagram is read (see
 * {@link eachClass}). `attempt` starts at 1; when it grows, the kernel
 * flagged the dump inconsistent (NLM_F_DUMP_INTR) and it runs again from the
 * start: drop what was kept from the earlier attempt.
 */
export type EachEntry<E> = (entry: E, attempt: number) => void;

/** Collect an each* listing into an array, keeping only the last (consistent) attempt. */
async function collect<E>(run: (each: EachEntry<E>) => Promise<void>): Promise<E[]> {
  let out: E[] = [];
  let at = 1;
  await run((e, attempt) => {
    if (attempt !== at) { out = []; at = attempt; }
    out.push(e);
  });
  return out;
}

/** A device, by name (one RTM_GETLINK to resolve) or by index (no lookup). */
export interface DeviceRef {
  /** device name, e.g. "eth0" */
  dev?: string;
  /** device index; used as is when given (skips the name lookup) */
  ifindex?: number;
}

/** Options given as an object, or as tc command-line words (`["limit", "1000"]`) that the kind parses. */
export type KindOptions = Record<string, unknown> | readonly string[];

/** A qdisc to add, replace, change or delete. */
export interface QdiscSpec extends DeviceRef {
  /** TCA_KIND, e.g. "prio"; optional only for delete */
  kind?: string;
  /** parent: "root", "ingress", "clsact", a class id ("1:4") or a u32; defaults to the kind's (ingress/clsact) */
  parent?: string | number;
  /** the qdisc's handle, "1:"; default the kind's (ingress/clsact: ffff:) or 0 (the kernel picks one) */
  handle?: string | number;
  /** kind options (see the kind's module), or tc words */
  options?: KindOptions;
}

/** A class to add, replace, change or delete. */
export interface ClassSpec extends DeviceRef {
  /** kind of the owning qdisc, e.g. "htb"; optional only for delete */
  kind?: string;
  /** parent class or qdisc, "1:" or "1:1" */
  parent?: string | number;
  /** class id, "1:20" */
  classid: string | number;
  options?: KindOptions;
}

/** A filter to add, replace, change or delete. */
export interface FilterSpec extends DeviceRef {
  /** classifier kind, e.g. "fw", "u32"; optional only for delete */
  kind?: string;
  /** parent qdisc or class ("1:"), "root", or the clsact hooks "ingress" / "egress" */
  parent: string | number;
  /** link-layer protocol: "ip", "ipv6", "all", an ethertype number; default "all" */
  protocol?: string | number;
  /** priority (tc's pref / prio), 1..65535; 0 lets the kernel choose on add */
  pref?: number;
  /** filter handle in the kind's notation (fw: the mark, "1" or "0x1"; u32: "800::800") or a u32 */
  handle?: string | number;
  /** filter chain (TCA_CHAIN) */
  chain?: number;
  options?: KindOptions;
}

/** A plug qdisc to act on: its device, parent and handle. */
export interface PlugRef extends DeviceRef {
  /** the plug's parent, e.g. "1:4" */
  parent: string | number;
  /** the plug's handle, e.g. "40:" */
  handle: string | number;
}

/** List options. */
export interface ListOptions extends DeviceRef {
  /** keep the counters (default true); false drops every stats field, as tc without -s */
  stats?: boolean;
}

type Op = 'add' | 'replace' | 'change' | 'delete';
const NEW_FLAGS: Record<Exclude<Op, 'delete'>, number> = {
  add: NLM_F_CREATE | NLM_F_EXCL,
  replace: NLM_F_CREATE | NLM_F_REPLACE,
  change: 0,
};

/* ------------------------------------------------------------------ */
/* Pure request builders (no I/O): used by the operations and by tests. */

/** One request ready for `conn.request`. */
export interface TcRequest {
  type: number;
  flags: number;
  payload: Buffer[];
}

/*
 * Like tc, which always runs the kind's parser (with no words when none are
 * given), a known kind encodes its defaults when no options are given: htb
 * sends TCA_HTB_INIT, prio its default struct, fifo nothing.
 */
function kindOptions(kind: string, options: KindOptions | undefined, forClass: boolean): Buffer[] {
  const desc = qdiscKind(kind);
  if (options === undefined) {
    const enc = forClass ? desc?.encodeClassOptions : desc?.encodeOptions;
    return enc ? enc({}) : [];
  }
  const what = `${forClass ? 'class' : 'qdisc'} kind '${kind}'`;
  if (!desc) throw new UsageError(`${what} is not known to synplug, so it cannot encode its options; omit the options or use a known kind`);
  if (Array.isArray(options)) {
    const parse = forClass ? desc.parseClassArgs : desc.parseArgs;
    if (!parse) throw new UsageError(`${what} takes no ${forClass ? 'class ' : ''}arguments here`);
    options = parse(options as readonly string[]) as Record<string, unknown>;
  }
  const enc = forClass ? desc.encodeClassOptions : desc.encodeOptions;
  if (!enc) throw new UsageError(`${what} has no ${forClass ? 'class ' : ''}options to set`);
  return enc(options as Record<string, unknown>);
}

/*
 * Handle texts parsed once: a warm process sends the same few handles ("root",
 * "1:", "1:4") again and again, and parsing one costs more than the rest of a
 * request's encoding. Only successful parses are kept (the result does not
 * depend on `what`, which names the field in errors); bounded.
 */
const HANDLE_MEMO = new Map<string, number>();
const QDISC_HANDLE_MEMO = new Map<string, number>();
const MEMO_MAX = 256;

function memoized(memo: Map<string, number>, parse: (h: string | number, what: string) => number, h: string | number, what: string): number {
  if (typeof h !== 'string') return parse(h, what);
  let v = memo.get(h);
  if (v === undefined) {
    v = parse(h, what);
    if (memo.size >= MEMO_MAX) memo.clear();
    memo.set(h, v);
  }
  return v;
}
/** {@link toHandle}, memoized for text. */
const handleOf = (h: string | number, what: string): number => memoized(HANDLE_MEMO, toHandle, h, what);
/** {@link toQdiscHandle}, memoized for text. */
const qdiscHandleOf = (h: string | number, what = 'qdisc handle'): number => memoized(QDISC_HANDLE_MEMO, toQdiscHandle, h, what);

/** Append the parts of `more` to `into` (no spread of a temporary array). */
function pushAll(into: Buffer[], more: readonly Buffer[]): void {
  for (let i = 0; i < more.length; i++) into.push(more[i]);
}

/**
 * Build an RTM_NEWQDISC / RTM_DELQDISC request.
 * @param op add (CREATE|EXCL), replace (CREATE|REPLACE), change (no flags), delete
 * @param ifindex device index
 * @throws {UsageError} bad handles, a missing kind or parent, bad options
 */
export function qdiscRequest(op: Op, ifindex: number, spec: Omit<QdiscSpec, 'dev' | 'ifindex'>): TcRequest {
  const desc = spec.kind === undefined ? undefined : qdiscKind(spec.kind);
  if (op !== 'delete' && !spec.kind) throw new UsageError(`qdisc ${op}: a kind is required`);
  const parent = spec.parent !== undefined ? handleOf(spec.parent, 'qdisc parent') : desc?.defaultParent;
  if (parent === undefined) throw new UsageError(`qdisc ${op}: give a parent ("root" or a class id such as "1:4")`);
  const handle = spec.handle !== undefined ? qdiscHandleOf(spec.handle) : desc?.defaultHandle ?? 0;
  const payload = [encodeTcmsg({ ifindex, handle, parent })];
  if (spec.kind) payload.push(str(TCA_KIND, spec.kind));
  if (op !== 'delete') pushAll(payload, kindOptions(spec.kind!, spec.options, false));
  else if (spec.options !== undefined) throw new UsageError('qdisc delete takes no options');
  return op === 'delete' ? { type: RTM_DELQDISC, flags: 0, payload } : { type: RTM_NEWQDISC, flags: NEW_FLAGS[op], payload };
}

/**
 * Build an RTM_NEWTCLASS / RTM_DELTCLASS request.
 * @throws {UsageError}
 */
export function classRequest(op: Op, ifindex: number, spec: Omit<ClassSpec, 'dev' | 'ifindex'>): TcRequest {
  if (op !== 'delete' && !spec.kind) throw new UsageError(`class ${op}: a kind is required (the owning qdisc's, e.g. "htb")`);
  const handle = handleOf(spec.classid, 'class id');
  const parent = spec.parent === undefined ? (op === 'delete' ? 0 : undefined) : handleOf(spec.parent, 'class parent');
  if (parent === undefined) throw new UsageError(`class ${op}: give a parent (the qdisc "1:" or a class "1:1")`);
  const payload = [encodeTcmsg({ ifindex, handle, parent })];
  if (spec.kind) payload.push(str(TCA_KIND, spec.kind));
  if (op !== 'delete') pushAll(payload, kindOptions(spec.kind!, spec.options, true));
  else if (spec.options !== undefined) throw new UsageError('class delete takes no options');
  return op === 'delete' ? { type: RTM_DELTCLASS, flags: 0, payload } : { type: RTM_NEWTCLASS, flags: NEW_FLAGS[op], payload };
}

function filterHandle(kind: string | undefined, h: string | number | undefined): number {
  if (h === undefined) return 0;
  if (typeof h === 'number') return toHandle(h, 'filter handle');
  const desc = kind === undefined ? undefined : filterKind(kind);
  if (desc?.parseHandle) return desc.parseHandle(h);
  const t = h.trim();
  if (/^(0x[0-9a-f]{1,8}|[0-9]+)$/i.test(t) && Number(t) <= 0xffffffff) return Number(t) >>> 0;
  throw new UsageError(`invalid filter handle ${JSON.stringify(h)}: expected a number`);
}

/**
 * Build an RTM_NEWTFILTER / RTM_DELTFILTER request.
 * `tcm_info = (pref << 16) | htons(protocol)`.
 * @throws {UsageError}
 */
export function filterRequest(op: Op, ifindex: number, spec: Omit<FilterSpec, 'dev' | 'ifindex'>): TcRequest {
  if (op !== 'delete' && !spec.kind) throw new UsageError(`filter ${op}: a kind is required (e.g. "fw", "u32")`);
  const parent = typeof spec.parent === 'number' ? handleOf(spec.parent, 'filter parent') : parseFilterParent(spec.parent);
  const protocol = spec.protocol === undefined ? (op === 'delete' ? 0 : ETH_P_ALL) : parseProtocol(spec.protocol);
  const pref = spec.pref ?? 0;
  if (!Number.isInteger(pref) || pref < 0 || pref > 0xffff) throw new UsageError(`filter pref ${pref} is out of range (0..65535)`);
  const payload = [encodeTcmsg({ ifindex, handle: filterHandle(spec.kind, spec.handle), parent, info: filterInfo(pref, protocol) })];
  if (spec.kind) payload.push(str(TCA_KIND, spec.kind));
  if (spec.chain !== undefined) {
    if (!Number.isInteger(spec.chain) || spec.chain < 0 || spec.chain > 0xffffffff) throw new UsageError(`filter chain ${spec.chain} is not a u32`);
    payload.push(u32(TCA_CHAIN, spec.chain));
  }
  if (op !== 'delete' && spec.options !== undefined) {
    const desc = filterKind(spec.kind!);
    if (!desc?.encodeOptions) throw new UsageError(`filter kind '${spec.kind}' is not known to synplug, so it cannot encode its options`);
    let o = spec.options;
    if (Array.isArray(o)) {
      if (!desc.parseArgs) throw new UsageError(`filter kind '${spec.kind}' takes no arguments here`);
      o = desc.parseArgs(o as readonly string[]) as Record<string, unknown>;
    }
    pushAll(payload, desc.encodeOptions(o as Record<string, unknown>));
  }
  return op === 'delete' ? { type: RTM_DELTFILTER, flags: 0, payload } : { type: RTM_NEWTFILTER, flags: NEW_FLAGS[op], payload };
}

/**
 * Build a plug verb: RTM_NEWQDISC with no create flags, kind "plug" and a
 * `struct tc_plug_qopt` (see DESIGN §4; the qdisc must exist).
 * @param action TCQ_PLUG_* number
 * @param limit bytes, for TCQ_PLUG_LIMIT
 */
export function plugRequest(ifindex: number, parent: number, handle: number, action: number, limit = 0): TcRequest {
  return {
    type: RTM_NEWQDISC,
    flags: 0,
    payload: [encodeTcmsg({ ifindex, handle, parent }), str(TCA_KIND, 'plug'), encodePlugQopt(action, limit)],
  };
}

/* ------------------------------------------------------------------ */
/* Operations */

/**
 * The device's index: `ifindex` as it is (checked, no lookup), else the
 * lookup of the name (RTM_GETLINK).
 * @throws {UsageError} an invalid index, or no device given
 */
function ifindexOf(conn: TcConnection, d: DeviceRef): number | Promise<number> {
  if (d.ifindex !== undefined) { validateIndex(d.ifindex); return d.ifindex; }
  if (d.dev === undefined) throw new UsageError('give a device (dev or ifindex)');
  return resolveIfindex(conn, d.dev);
}

function devText(d: DeviceRef, ifindex: number): string {
  return d.dev !== undefined ? `dev ${d.dev}` : `device index ${ifindex}`;
}

function parentText(p: number): string {
  return p === TC_H_ROOT ? 'root' : p === TC_H_INGRESS ? 'ingress' : formatHandle(p);
}

async function qdiscsOn(conn: TcConnection, ifindex: number): Promise<QdiscEntry[] | undefined> {
  try {
    const msgs = await conn.dumpAll({ type: RTM_GETQDISC, payload: [encodeTcmsg({ ifindex })] });
    return msgs.filter((m) => m.type === RTM_NEWQDISC && m.payload.length >= 8 && m.payload.readUInt32LE(4) === ifindex).map((m) => decodeQdisc(m));
  } catch {
    return undefined;
  }
}

async function classExists(conn: TcConnection, ifindex: number, classid: number): Promise<boolean | undefined> {
  try {
    const msgs = await conn.dumpAll({ type: RTM_GETTCLASS, payload: [encodeTcmsg({ ifindex })] });
    return msgs.some((m) => m.type === RTM_NEWTCLASS && m.payload.length >= 12 && m.payload.readUInt32LE(8) === classid);
  } catch {
    return undefined;
  }
}

/** errnoName gives 95 as ENOTSUP or EOPNOTSUPP depending on Node's table order; both mean EOPNOTSUPP here. */
function codeOf(e: NetlinkError): string {
  return e.errno === 95 ? 'EOPNOTSUPP' : e.code;
}

/** A qdisc that is the parent's major: root -> the root qdisc, "1:4" -> qdisc "1:". */
function parentQdiscExists(list: QdiscEntry[], parent: number): boolean {
  if (parent === TC_H_ROOT || parent === TC_H_INGRESS) return true;
  return list.some((q) => q.handle === formatQdiscHandle(parent));
}

function permission(e: NetlinkError, what: string): NetlinkError | undefined {
  if (e.code === 'EPERM' || e.code === 'EACCES') return e.withMessage(`${what}: not permitted; this needs CAP_NET_ADMIN (run as root)`);
  return undefined;
}

async function explainQdisc(conn: TcConnection, e: unknown, op: Op | 'plug', d: DeviceRef, ifindex: number, req: TcRequest, kind: string | undefined): Promise<unknown> {
  if (!(e instanceof NetlinkError)) return e;
  const p = req.payload[0];
  const handle = p.readUInt32LE(8);
  const parent = p.readUInt32LE(12);
  const dev = devText(d, ifindex);
  const hText = handle ? formatQdiscHandle(handle) : undefined;
  const where = `${hText ? `with handle ${hText} ` : ''}${parent === TC_H_ROOT ? 'at the root' : `under parent ${parentText(parent)}`} on ${dev}`;
  const what = `${op === 'plug' ? 'plug' : `qdisc ${op}`}${kind ? ` (kind '${kind}')` : ''}`;
  const perm = permission(e, `${what} on ${dev}`);
  if (perm) return perm;
  const code = codeOf(e);
  if (code === 'ENODEV') return e.withMessage(`device ${d.dev !== undefined ? `'${d.dev}'` : `with index ${ifindex}`} not found`);
  const list = code === 'ENOENT' || code === 'EEXIST' || code === 'EINVAL' ? await qdiscsOn(conn, ifindex) : undefined;
  const existing = list?.find((q) => hText !== undefined && q.handle === hText);
  const atParent = list?.find((q) => (parent === TC_H_ROOT ? q.root : q.parent === formatHandle(parent)));
  if (op === 'add' || op === 'replace') {
    if (code === 'ENOENT') {
      if (list && !parentQdiscExists(list, parent)) return e.withMessage(`cannot ${op} qdisc ${where}: parent ${parentText(parent)} does not exist (no qdisc ${formatQdiscHandle(parent)})`);
      if (parent !== TC_H_ROOT && parent !== TC_H_INGRESS && (parent & 0xffff) && (await classExists(conn, ifindex, parent)) === false) {
        return e.withMessage(`cannot ${op} qdisc ${where}: class ${formatHandle(parent)} does not exist`);
      }
      return e.withMessage(`qdisc kind '${kind}' is not available in this kernel (module ${qdiscModule(kind ?? '')})`);
    }
    if (code === 'EEXIST') {
      if (existing) return e.withMessage(`a qdisc with handle ${hText} already exists on ${dev} (kind '${existing.kind}'); use replace or change`);
      if (atParent) return e.withMessage(`${parent === TC_H_ROOT ? 'the root' : `parent ${parentText(parent)}`} on ${dev} already has a qdisc (handle ${atParent.handle}, kind '${atParent.kind}'); use replace`);
      return e.withMessage(`cannot ${op} qdisc ${where}: it already exists; use replace`);
    }
    if (code === 'EINVAL') {
      if (existing && existing.kind !== kind) return e.withMessage(`cannot ${op} qdisc ${where}: a qdisc of kind '${existing.kind}' has that handle; delete it first`);
      if (list && !parentQdiscExists(list, parent)) return e.withMessage(`cannot ${op} qdisc ${where}: parent ${parentText(parent)} does not exist`);
      return e.withMessage(`the kernel refused qdisc '${kind}' ${where} (EINVAL): invalid options, a parent class that does not exist, or a parent that cannot hold this qdisc`);
    }
    if (code === 'EOPNOTSUPP') return e.withMessage(`cannot ${op} qdisc '${kind}' ${where}: qdisc ${formatQdiscHandle(parent)} is not classful, so it has no class ${parentText(parent)} to hold a qdisc (EOPNOTSUPP)`);
  }
  if (op === 'change' || op === 'plug') {
    const k = op === 'plug' ? 'plug' : kind;
    if (code === 'ENOENT') return e.withMessage(`no qdisc ${where} to change${op === 'plug' ? ' (create the plug qdisc first)' : '; use add or replace'}`);
    if (code === 'EINVAL' && existing && existing.kind !== k) return e.withMessage(`the qdisc ${where} is a '${existing.kind}', not a '${k}'`);
    if (code === 'EEXIST') {
      const holder = atParent ? `qdisc ${atParent.handle} (kind '${atParent.kind}')` : 'another qdisc';
      if (op === 'plug') return e.withMessage(`no plug qdisc with handle ${hText} ${parent === TC_H_ROOT ? 'at the root' : `under parent ${parentText(parent)}`} on ${dev}: that place holds ${holder}`);
      return e.withMessage(`cannot change qdisc ${where}: that place holds ${holder}; use replace`);
    }
    if (code === 'EINVAL') return e.withMessage(`the kernel refused to change qdisc '${k}' ${where} (EINVAL): invalid options, or no such qdisc there`);
    if (code === 'EOPNOTSUPP') return e.withMessage(`qdisc '${k}' ${where} cannot be changed (EOPNOTSUPP)`);
  }
  if (op === 'delete') {
    if (code === 'EINVAL' || code === 'ENOENT') {
      if (hText && !existing) return e.withMessage(`no qdisc with handle ${hText} ${parent === TC_H_ROOT ? 'at the root' : `under parent ${parentText(parent)}`} on ${dev}`);
      if (!hText && !atParent) return e.withMessage(`no qdisc ${parent === TC_H_ROOT ? 'at the root' : `under parent ${parentText(parent)}`} on ${dev} to delete`);
      if (existing && kind && existing.kind !== kind) return e.withMessage(`the qdisc ${where} is a '${existing.kind}', not a '${kind}'`);
      return e.withMessage(`cannot delete qdisc ${where} (${code}): ${code === 'ENOENT' ? 'it is the default qdisc, which cannot be deleted' : 'handle and parent do not match'}`);
    }
  }
  return e.withMessage(`${what} ${where} failed: ${code}${e.extAckMessage ? ` (kernel: ${e.extAckMessage})` : ''}`);
}

async function runQdisc(conn: TcConnection, op: Op, spec: QdiscSpec): Promise<void> {
  const ifindex = await ifindexOf(conn, spec);
  const req = qdiscRequest(op, ifindex, spec);
  try {
    await conn.request(req);
  } catch (e) {
    throw await explainQdisc(conn, e, op, spec, ifindex, req, spec.kind);
  }
}

/**
 * `tc qdisc add`: create a qdisc; fails if one with that handle exists or the
 * parent already has one (NLM_F_CREATE | NLM_F_EXCL).
 * @throws {UsageError} bad handles/options (nothing sent)
 * @throws {NetlinkError} e.g. "qdisc kind 'prio' is not available in this kernel (module sch_prio)",
 *   "device 'eth9' not found", "a qdisc with handle 1: already exists on dev lo (kind 'prio'); use replace or change"
 */
export function addQdisc(conn: TcConnection, spec: QdiscSpec): Promise<void> {
  return runQdisc(conn, 'add', spec);
}

/**
 * `tc qdisc replace`: create, or replace what sits at the parent (NLM_F_CREATE | NLM_F_REPLACE).
 * @throws {UsageError} @throws {NetlinkError}
 */
export function replaceQdisc(conn: TcConnection, spec: QdiscSpec): Promise<void> {
  return runQdisc(conn, 'replace', spec);
}

/**
 * `tc qdisc change`: change the options of an existing qdisc (no create flags).
 * @throws {UsageError} @throws {NetlinkError} "no qdisc with handle 1: at the root on dev X to change; use add or replace"
 */
export function changeQdisc(conn: TcConnection, spec: QdiscSpec): Promise<void> {
  return runQdisc(conn, 'change', spec);
}

/**
 * `tc qdisc del`: delete the qdisc at `parent` (and `handle`, when given).
 * @throws {UsageError} @throws {NetlinkError} "no qdisc with handle 99: under parent 1:3 on dev lo"
 */
export function deleteQdisc(conn: TcConnection, spec: QdiscSpec): Promise<void> {
  return runQdisc(conn, 'delete', spec);
}

async function namesFor(conn: TcConnection, d: DeviceRef): Promise<(i: number) => string | undefined> {
  if (d.dev !== undefined) return () => d.dev;
  try {
    const links = await listRawLinks(conn);
    const m = new Map(links.map((l) => [l.index, l.ifname]));
    return (i) => m.get(i);
  } catch {
    return () => undefined;
  }
}

/**
 * `tc -s qdisc show [dev X]`: every qdisc (of one device when given), with stats.
 * @returns entries in the kernel's order; `dev` filled in
 * @throws {NetlinkError} "device 'X' not found", or the dump failed
 * @throws {NetlinkDecodeError} a malformed reply
 */
export function listQdiscs(conn: TcConnection, options: ListOptions = {}): Promise<QdiscEntry[]> {
  return collect((each) => eachQdisc(conn, options, each));
}

/**
 * {@link listQdiscs}, each entry handed to `each` as its datagram is read
 * instead of collected: a large listing is decoded while the kernel is still
 * sending it, and neither its messages nor (when `each` prints and drops
 * them) its entries need be held at once. Entries of an inconsistent dump
 * come with `attempt` 1 and are followed by the whole dump again
 * ({@link EachEntry}). Without `dev`, the device names come from a link
 * dump after the qdisc dump (as tc sends them), so the entries are handed
 * over once both are read.
 * @throws {NetlinkError} "device 'X' not found", or the dump failed
 * @throws {NetlinkDecodeError} a malformed reply (after the dump was read to its end)
 * @throws whatever `each` throws (after the dump was read to its end)
 */
export async function eachQdisc(conn: TcConnection, options: ListOptions, each: EachEntry<QdiscEntry>): Promise<void> {
  const ifindex = options.dev !== undefined || options.ifindex !== undefined ? await ifindexOf(conn, options) : 0;
  const req = { type: RTM_GETQDISC, payload: [encodeTcmsg({ ifindex })] };
  const opts = { dev: options.dev, stats: options.stats };
  const mine = (m: NetlinkMessage) => m.type === RTM_NEWQDISC && (!ifindex || (m.payload.length >= 8 && m.payload.readUInt32LE(4) === ifindex));
  if (options.dev !== undefined) {
    await conn.dumpEach(req, (m, attempt) => { if (mine(m)) each(decodeQdisc(m, opts), attempt); });
    return;
  }
  // Device names come from a link dump, sent after the qdisc dump as tc does.
  const msgs = await conn.dumpAll(req);
  const names = await namesFor(conn, options);
  for (const m of msgs) {
    if (!mine(m)) continue;
    opts.dev = names(m.payload.length >= 8 ? m.payload.readUInt32LE(4) : 0);
    each(decodeQdisc(m, opts), 1);
  }
}

function listError(e: unknown, what: string, d: DeviceRef, ifindex: number): unknown {
  if (!(e instanceof NetlinkError)) return e;
  if (e.code === 'ENODEV') return e.withMessage(`device ${d.dev !== undefined ? `'${d.dev}'` : `with index ${ifindex}`} not found`);
  return e.withMessage(`listing ${what} on ${devText(d, ifindex)} failed: ${e.code}`);
}

/**
 * `tc -s class show dev X`: the classes of one device (the kernel needs a device).
 * @throws {UsageError} no device given
 * @throws {NetlinkError} "device 'X' not found", or the dump failed
 */
export function listClasses(conn: TcConnection, options: ListOptions & { parent?: string | number }): Promise<ClassEntry[]> {
  return collect((each) => eachClass(conn, options, each));
}

/**
 * {@link listClasses}, each entry handed to `each` as its datagram is read
 * (see {@link eachQdisc}).
 * @throws {UsageError} no device given, bad parent
 * @throws {NetlinkError} "device 'X' not found", or the dump failed
 * @throws {NetlinkDecodeError} a malformed reply; and whatever `each` throws
 */
export async function eachClass(conn: TcConnection, options: ListOptions & { parent?: string | number }, each: EachEntry<ClassEntry>): Promise<void> {
  const ifindex = await ifindexOf(conn, options);
  const parent = options.parent === undefined ? 0 : toHandle(options.parent, 'class parent');
  const opts = { dev: options.dev ?? (await namesFor(conn, options))(ifindex), stats: options.stats };
  try {
    await conn.dumpEach({ type: RTM_GETTCLASS, payload: [encodeTcmsg({ ifindex, parent })] }, (m, attempt) => {
      if (m.type === RTM_NEWTCLASS) each(decodeClass(m, opts), attempt);
    });
  } catch (e) {
    throw listError(e, 'classes', options, ifindex);
  }
}

/**
 * `tc filter show dev X [parent P]`: the filters of one device.
 * @throws {UsageError} no device given, bad parent
 * @throws {NetlinkError} "device 'X' not found", or the dump failed
 */
export function listFilters(conn: TcConnection, options: ListOptions & { parent?: string | number }): Promise<FilterEntry[]> {
  return collect((each) => eachFilter(conn, options, each));
}

/**
 * {@link listFilters}, each entry handed to `each` as its datagram is read
 * (see {@link eachQdisc}).
 * @throws {UsageError} no device given, bad parent
 * @throws {NetlinkError} "device 'X' not found", or the dump failed
 * @throws {NetlinkDecodeError} a malformed reply; and whatever `each` throws
 */
export async function eachFilter(conn: TcConnection, options: ListOptions & { parent?: string | number }, each: EachEntry<FilterEntry>): Promise<void> {
  const ifindex = await ifindexOf(conn, options);
  const parent = options.parent === undefined ? 0 : typeof options.parent === 'number' ? toHandle(options.parent) : parseFilterParent(options.parent);
  const opts = { dev: options.dev ?? (await namesFor(conn, options))(ifindex), stats: options.stats };
  try {
    await conn.dumpEach({ type: RTM_GETTFILTER, payload: [encodeTcmsg({ ifindex, parent })] }, (m, attempt) => {
      if (m.type === RTM_NEWTFILTER) each(decodeFilter(m, opts), attempt);
    });
  } catch (e) {
    throw listError(e, 'filters', options, ifindex);
  }
}

/* ---- classes ---- */

async function runClass(conn: TcConnection, op: Op, spec: ClassSpec): Promise<void> {
  const ifindex = await ifindexOf(conn, spec);
  const req = classRequest(op, ifindex, spec);
  try {
    await conn.request(req);
  } catch (e) {
    if (!(e instanceof NetlinkError)) throw e;
    const dev = devText(spec, ifindex);
    const cid = formatHandle(req.payload[0].readUInt32LE(8));
    const parent = req.payload[0].readUInt32LE(12);
    const perm = permission(e, `class ${op} ${cid} on ${dev}`);
    if (perm) throw perm;
    if (e.code === 'ENODEV') throw e.withMessage(`device ${spec.dev !== undefined ? `'${spec.dev}'` : `with index ${ifindex}`} not found`);
    const qd = formatQdiscHandle(req.payload[0].readUInt32LE(8));
    const msg: Record<string, string> = op === 'delete'
      ? {
        ENOENT: `no class ${cid} on ${dev}`,
        EBUSY: `class ${cid} on ${dev} is in use (it has child classes or filters point at it); delete those first`,
        EINVAL: `cannot delete class ${cid} on ${dev} (EINVAL): no such class, or the parent ${parent ? parentText(parent) : ''} does not match`,
      }
      : {
        ENOENT: op === 'change' ? `no class ${cid} on ${dev} to change; use add` : `cannot ${op} class ${cid} on ${dev}: qdisc ${qd} or parent ${parentText(parent)} does not exist`,
        EEXIST: `class ${cid} already exists on ${dev}; use change or replace`,
        EINVAL: `the kernel refused class ${cid} (kind '${spec.kind}') under ${parentText(parent)} on ${dev} (EINVAL): invalid options, a parent class that does not exist, or a kind that does not match the qdisc`,
        EOPNOTSUPP: `qdisc ${qd} on ${dev} does not support adding classes (EOPNOTSUPP): it is not classful or its classes are fixed`,
      };
    throw e.withMessage(msg[codeOf(e)] ?? `class ${op} ${cid} on ${dev} failed: ${codeOf(e)}`);
  }
}

/**
 * `tc class add`: create a class (e.g. htb: `{ kind: 'htb', parent: '1:', classid: '1:1', options: { rate: '10mbit' } }`).
 * @throws {UsageError} @throws {NetlinkError} "class 1:1 already exists on dev X; use change or replace"
 */
export function addClass(conn: TcConnection, spec: ClassSpec): Promise<void> {
  return runClass(conn, 'add', spec);
}
/** `tc class replace`. @throws {UsageError} @throws {NetlinkError} */
export function replaceClass(conn: TcConnection, spec: ClassSpec): Promise<void> {
  return runClass(conn, 'replace', spec);
}
/** `tc class change`. @throws {UsageError} @throws {NetlinkError} "no class 1:9 on dev X to change; use add" */
export function changeClass(conn: TcConnection, spec: ClassSpec): Promise<void> {
  return runClass(conn, 'change', spec);
}
/** `tc class del`. @throws {UsageError} @throws {NetlinkError} "no class 1:9 on dev X" */
export function deleteClass(conn: TcConnection, spec: ClassSpec): Promise<void> {
  return runClass(conn, 'delete', spec);
}

/* ---- filters ---- */

async function runFilter(conn: TcConnection, op: Op, spec: FilterSpec): Promise<void> {
  const ifindex = await ifindexOf(conn, spec);
  const req = filterRequest(op, ifindex, spec);
  try {
    await conn.request(req);
  } catch (e) {
    if (!(e instanceof NetlinkError)) throw e;
    const dev = devText(spec, ifindex);
    const parent = req.payload[0].readUInt32LE(12);
    const pref = req.payload[0].readUInt32LE(16) >>> 16;
    const fh = req.payload[0].readUInt32LE(8);
    const fhText = fh ? ` handle ${spec.handle ?? fh}` : '';
    const what = `filter${spec.kind ? ` '${spec.kind}'` : ''}${pref ? ` pref ${pref}` : ''}${op === 'delete' ? fhText : ''} under ${parentText(parent)} on ${dev}`;
    const perm = permission(e, `${op} ${what}`);
    if (perm) throw perm;
    if (e.code === 'ENODEV') throw e.withMessage(`device ${spec.dev !== undefined ? `'${spec.dev}'` : `with index ${ifindex}`} not found`);
    let msg: string | undefined;
    if (op === 'delete') {
      if (e.code === 'ENOENT') msg = `no ${what}`;
      else if (e.code === 'EINVAL') msg = `cannot delete ${what} (EINVAL): no such qdisc, or the filter's kind or protocol does not match`;
    } else if (e.code === 'ENOENT' || codeOf(e) === 'EOPNOTSUPP') {
      const list = await qdiscsOn(conn, ifindex);
      if (list && !parentQdiscExists(list, parent)) msg = `cannot ${op} ${what}: no qdisc ${formatQdiscHandle(parent)} on ${dev}`;
      else if (op === 'change' && e.code === 'ENOENT') msg = `no ${what} to change; use add`;
      else msg = `filter kind '${spec.kind}' is not available in this kernel (module ${filterModule(spec.kind ?? '')})`;
    } else if (e.code === 'EEXIST') msg = `${what}${fhText ? ` with${fhText}` : ''} already exists; use replace`;
    else if (e.code === 'EINVAL') {
      const list = await qdiscsOn(conn, ifindex);
      msg = list && !parentQdiscExists(list, parent)
        ? `cannot ${op} ${what}: no qdisc ${formatQdiscHandle(parent)} on ${dev}`
        : `the kernel refused ${what} (EINVAL): invalid options, a protocol that differs from the existing filters at this pref, or a parent that takes no filters`;
    }
    throw e.withMessage(msg ?? `${op} ${what} failed: ${codeOf(e)}`);
  }
}

/**
 * `tc filter add`: e.g. fw `{ dev: 'lo', parent: '1:', protocol: 'ip', pref: 1, kind: 'fw', handle: 1, options: { classid: '1:4' } }`.
 * @throws {UsageError}
 * @throws {NetlinkError} "filter kind 'fw' is not available in this kernel (module cls_fw)", "... already exists; use replace"
 */
export function addFilter(conn: TcConnection, spec: FilterSpec): Promise<void> {
  return runFilter(conn, 'add', spec);
}
/** `tc filter replace`. @throws {UsageError} @throws {NetlinkError} */
export function replaceFilter(conn: TcConnection, spec: FilterSpec): Promise<void> {
  return runFilter(conn, 'replace', spec);
}
/** `tc filter change`. @throws {UsageError} @throws {NetlinkError} */
export function changeFilter(conn: TcConnection, spec: FilterSpec): Promise<void> {
  return runFilter(conn, 'change', spec);
}
/**
 * `tc filter del`: with pref (and protocol, handle, kind) deletes one filter;
 * with only the parent, every filter there.
 * @throws {UsageError} @throws {NetlinkError} "no filter 'fw' pref 1 under 1: on dev lo"
 */
export function deleteFilter(conn: TcConnection, spec: FilterSpec): Promise<void> {
  return runFilter(conn, 'delete', spec);
}

/* ---- plug verbs ---- */

async function plugVerb(conn: TcConnection, ref: PlugRef, action: number, limit = 0): Promise<void> {
  const ifindex = await ifindexOf(conn, ref);
  const req = plugRequest(ifindex, handleOf(ref.parent, 'plug parent'), qdiscHandleOf(ref.handle, 'plug handle'), action, limit);
  try {
    await conn.request(req);
  } catch (e) {
    throw await explainQdisc(conn, e, 'plug', ref, ifindex, req, 'plug');
  }
}

/**
 * Start buffering: packets wait in the plug (TCQ_PLUG_BUFFER).
 * @throws {NetlinkError} "no qdisc with handle 40: under parent 1:4 on dev lo to change (create the plug qdisc first)"
 */
export function plugBuffer(conn: TcConnection, ref: PlugRef): Promise<void> {
  return plugVerb(conn, ref, TCQ_PLUG_BUFFER);
}
/** Release the packets buffered before the last buffer command (TCQ_PLUG_RELEASE_ONE). @throws {NetlinkError} */
export function plugReleaseOne(conn: TcConnection, ref: PlugRef): Promise<void> {
  return plugVerb(conn, ref, TCQ_PLUG_RELEASE_ONE);
}
/** Release everything and stop buffering until the next buffer command (TCQ_PLUG_RELEASE_INDEFINITE); always safe to send. @throws {NetlinkError} */
export function plugReleaseIndefinite(conn: TcConnection, ref: PlugRef): Promise<void> {
  return plugVerb(conn, ref, TCQ_PLUG_RELEASE_INDEFINITE);
}
/**
 * Set the plug's queue limit (TCQ_PLUG_LIMIT).
 * @param ref.limit bytes (> 0; tc size text accepted)
 * @throws {UsageError} a limit of 0 (it would drop every packet) or not a size
 * @throws {NetlinkError}
 */
export function plugSetLimit(conn: TcConnection, ref: PlugRef & { limit: number | string }): Promise<void> {
  const limit = parseSize(ref.limit, 'plug limit');
  if (limit === 0) return Promise.reject(new UsageError('plug: a limit of 0 bytes would drop every packet; give a positive limit (bytes)'));
  return plugVerb(conn, ref, TCQ_PLUG_LIMIT, limit);
}

