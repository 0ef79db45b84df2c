/**
 * Request builders for qdiscs, classes and filters: pure functions (no I/O)
 * from a spec to one {@link TcRequest}, used by the operations
 * (qdisc.ts, class.ts, filter.ts) and by tests and benchmarks.
 *
 * | operation | message | flags (NLM_F_REQUEST and NLM_F_ACK are added by the connection) |
 * |---|---|---|
 * | add | RTM_NEWQDISC / RTM_NEWTCLASS / RTM_NEWTFILTER | NLM_F_CREATE \| NLM_F_EXCL |
 * | replace | same | NLM_F_CREATE \| NLM_F_REPLACE |
 * | change | same | none |
 * | delete | RTM_DELQDISC / RTM_DELTCLASS / RTM_DELTFILTER | none |
 *
 * Each request is `struct tcmsg` (linux/rtnetlink.h), TCA_KIND, then the
 * kind's attributes (usually one TCA_OPTIONS), and carries the tcmsg
 * fields and the kind's module beside the bytes for the error paths.
 *
 * @module
 */
import { str, u32 } from '../netlink/attributes.js';
import { UsageError } from '../netlink/errors.js';
import { NLM_F_CREATE, NLM_F_EXCL, NLM_F_REPLACE } from '../netlink/message.js';
import { RTM_NEWQDISC, RTM_DELQDISC, RTM_NEWTCLASS, RTM_DELTCLASS, RTM_NEWTFILTER, RTM_DELTFILTER } from '../netlink/route/constants.js';
import { TCA_KIND, TCA_CHAIN, ETH_P_ALL } from './constants.js';
import { filterParentOf, handleOf, qdiscHandleOf, toHandle } from './handle.js';
import { parseProtocol } from './proto.js';
import { checkOptionKeys, filterKind, filterModule, qdiscKind, qdiscModule } from './registry.js';
import { encodeTcmsg, filterInfo } from './tcmsg.js';
import { optionsFromWords } from './words.js';
import { actionKindsOf, type ActionModules } from './actions/list.js';
import type { ClassSpec, FilterSpec, QdiscSpec, TcOp, TcRequest } from './types.js';

/** Flags of the RTM_NEW* message of each operation but delete. */
const NEW_FLAGS: Record<Exclude<TcOp, 'delete'>, number> = {
  add: NLM_F_CREATE | NLM_F_EXCL,
  replace: NLM_F_CREATE | NLM_F_REPLACE,
  change: 0,
};

/** Append the parts of `more` to `into` (no spread of a temporary array). */
function pushAll(into: Buffer[], more: readonly Buffer[]): void {
  for (let i = 0; i < more.length; i++) into.push(more[i]);
}

/*
 * Like tc, which always runs the kind's parser (with no words when none are
 * given), a known kind encodes its defaults when no options are given: htb
 * sends TCA_HTB_INIT, prio its default struct, fifo nothing.
 */
function kindOptions(kind: string, options: object | readonly string[] | undefined, forClass: boolean): Buffer[] {
  const desc = qdiscKind(kind);
  if (options === undefined) {
    const enc = forClass ? desc?.encodeClassOptions : desc?.encodeOptions;
    return enc ? enc({}) : [];
  }
  const what = `${forClass ? 'class' : 'qdisc'} kind '${kind}'`;
  if (!desc) throw new UsageError(`${what} is not known to synplug, so it cannot encode its options; omit the options or use a known kind`);
  let o: Record<string, unknown>;
  if (Array.isArray(options)) {
    const read = optionsFromWords(forClass ? 'class' : 'qdisc', kind, options as readonly string[]);
    if (!read) throw new UsageError(`${what} takes no ${forClass ? 'class ' : ''}arguments here`);
    o = read;
  } else {
    o = checkOptionKeys(desc, forClass ? 'class' : 'qdisc', options);
  }
  const enc = forClass ? desc.encodeClassOptions : desc.encodeOptions;
  if (!enc) throw new UsageError(`${what} has no ${forClass ? 'class ' : ''}options to set`);
  return enc(o);
}

/**
 * Build an RTM_NEWQDISC / RTM_DELQDISC request.
 * @param op add (CREATE|EXCL), replace (CREATE|REPLACE), change (no flags), delete
 * @param ifindex device index (tcm_ifindex)
 * @param spec kind, parent, handle and options (`dev`/`ifindex`, when present, are ignored)
 * @throws {UsageError} bad handles, a missing kind or parent, bad or unknown options (nothing is sent)
 */
export function qdiscRequest<K extends string = string>(op: TcOp, ifindex: number, spec: QdiscSpec<K>): TcRequest {
  const kind = spec.kind;
  const desc = kind === undefined ? undefined : qdiscKind(kind);
  if (op !== 'delete' && !kind) throw new UsageError(`qdisc ${op}: a kind is required`);
  const parent = spec.parent !== undefined ? handleOf(spec.parent, 'qdisc parent') : desc?.defaultParent;
  if (parent === undefined) throw new UsageError(`qdisc ${op}: give a parent ("root" or a class id such as "1:4")`);
  const handle = spec.handle !== undefined ? qdiscHandleOf(spec.handle) : (desc?.defaultHandle ?? 0);
  const payload = [encodeTcmsg({ ifindex, handle, parent })];
  if (kind) payload.push(str(TCA_KIND, kind));
  if (op !== 'delete') pushAll(payload, kindOptions(kind!, spec.options, false));
  else if (spec.options !== undefined) throw new UsageError('qdisc delete takes no options');
  const req: TcRequest =
    op === 'delete'
      ? { type: RTM_DELQDISC, flags: 0, payload, ifindex, handle, parent, info: 0 }
      : { type: RTM_NEWQDISC, flags: NEW_FLAGS[op], payload, ifindex, handle, parent, info: 0 };
  if (kind) {
    req.kind = kind;
    if (desc) req.module = qdiscModule(kind);
  }
  return req;
}

/**
 * Build an RTM_NEWTCLASS / RTM_DELTCLASS request.
 * @param ifindex device index (tcm_ifindex)
 * @param spec kind (of the owning qdisc), classid, parent and options
 * @throws {UsageError} bad class id or parent, a missing kind or parent, bad or unknown options
 */
export function classRequest<K extends string = string>(op: TcOp, ifindex: number, spec: ClassSpec<K>): TcRequest {
  const kind = spec.kind;
  if (op !== 'delete' && !kind) throw new UsageError(`class ${op}: a kind is required (the owning qdisc's, e.g. "htb")`);
  const handle = handleOf(spec.classid, 'class id');
  const parent = spec.parent === undefined ? (op === 'delete' ? 0 : undefined) : handleOf(spec.parent, 'class parent');
  if (parent === undefined) throw new UsageError(`class ${op}: give a parent (the qdisc "1:" or a class "1:1")`);
  const payload = [encodeTcmsg({ ifindex, handle, parent })];
  if (kind) payload.push(str(TCA_KIND, kind));
  if (op !== 'delete') pushAll(payload, kindOptions(kind!, spec.options, true));
  else if (spec.options !== undefined) throw new UsageError('class delete takes no options');
  const req: TcRequest =
    op === 'delete'
      ? { type: RTM_DELTCLASS, flags: 0, payload, ifindex, handle, parent, info: 0 }
      : { type: RTM_NEWTCLASS, flags: NEW_FLAGS[op], payload, ifindex, handle, parent, info: 0 };
  if (kind) {
    req.kind = kind;
    if (qdiscKind(kind)) req.module = qdiscModule(kind);
  }
  return req;
}

/**
 * A filter handle in the kind's notation (u32 "800::800", fw "0x1"), or a u32.
 * @throws {UsageError}
 */
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
 * The filter priority from `pref` and/or `prio` (the same field).
 * @throws {UsageError} out of 0..65535, or both given and different
 */
function prefOf(spec: Pick<FilterSpec, 'pref' | 'prio'>): number {
  if (spec.pref !== undefined && spec.prio !== undefined && spec.pref !== spec.prio) {
    throw new UsageError(`filter: pref ${spec.pref} and prio ${spec.prio} differ; they are the same field, give one`);
  }
  const pref = spec.pref ?? spec.prio ?? 0;
  if (!Number.isInteger(pref) || pref < 0 || pref > 0xffff) throw new UsageError(`filter pref ${pref} is out of range (0..65535)`);
  return pref;
}

/**
 * Build an RTM_NEWTFILTER / RTM_DELTFILTER request.
 * `tcm_info = (pref << 16) | htons(protocol)`; tcm_parent from
 * {@link filterParentOf} (a qdisc or class, root, ingress, egress, ffff:...).
 * @param ifindex device index (tcm_ifindex)
 * @throws {UsageError} bad parent, pref, protocol, handle, chain or options
 */
export function filterRequest<K extends string = string>(op: TcOp, ifindex: number, spec: FilterSpec<K>): TcRequest {
  const kind = spec.kind;
  if (op !== 'delete' && !kind) throw new UsageError(`filter ${op}: a kind is required (e.g. "fw", "u32")`);
  const parent = filterParentOf(spec.parent);
  const protocol = spec.protocol === undefined ? (op === 'delete' ? 0 : ETH_P_ALL) : parseProtocol(spec.protocol);
  const info = filterInfo(prefOf(spec), protocol);
  const handle = filterHandle(kind, spec.handle);
  const payload = [encodeTcmsg({ ifindex, handle, parent, info })];
  if (kind) payload.push(str(TCA_KIND, kind));
  if (spec.chain !== undefined) {
    if (!Number.isInteger(spec.chain) || spec.chain < 0 || spec.chain > 0xffffffff) throw new UsageError(`filter chain ${spec.chain} is not a u32`);
    payload.push(u32(TCA_CHAIN, spec.chain));
  }
  const desc = kind === undefined ? undefined : filterKind(kind);
  let actions: ActionModules | undefined;
  if (op !== 'delete' && spec.options !== undefined) {
    if (!desc?.encodeOptions) throw new UsageError(`filter kind '${kind}' is not known to synplug, so it cannot encode its options`);
    let o: Record<string, unknown>;
    if (Array.isArray(spec.options)) {
      const read = optionsFromWords('filter', kind!, spec.options as readonly string[]);
      if (!read) throw new UsageError(`filter kind '${kind}' takes no arguments here`);
      o = read;
    } else {
      o = checkOptionKeys(desc, 'filter', spec.options);
    }
    pushAll(payload, desc.encodeOptions(o));
    actions = actionKindsOf(o);
  } else if (op === 'delete' && spec.options !== undefined) {
    throw new UsageError('filter delete takes no options');
  }
  const req: TcRequest =
    op === 'delete'
      ? { type: RTM_DELTFILTER, flags: 0, payload, ifindex, handle, parent, info }
      : { type: RTM_NEWTFILTER, flags: NEW_FLAGS[op], payload, ifindex, handle, parent, info };
  if (kind) {
    req.kind = kind;
    if (desc) req.module = filterModule(kind);
  }
  if (actions) req.actions = actions;
  return req;
}
