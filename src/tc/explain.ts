/**
 * Kernel errors of tc requests, explained: each refusal becomes a
 * {@link NetlinkError} (same errno and fields) whose sentence names the
 * device, kind, module and handles, looking at the device's qdiscs and
 * classes when the errno alone is ambiguous. When the kernel sent its own
 * text (extended ack), the sentence follows it, and an ENOENT whose text is
 * not about the kind is never blamed on a missing module.
 *
 * This module reads what it needs from the {@link TcRequest} (handle,
 * parent, info, kind, module), never from the encoded bytes, and does not
 * use the kind registry (the kinds' own verbs, such as the plug's, use it).
 *
 * @module
 */
import { parseAttributes } from '../netlink/attributes.js';
import { NetlinkError } from '../netlink/errors.js';
import { RTM_NEWQDISC, RTM_GETQDISC, RTM_NEWTCLASS, RTM_GETTCLASS } from '../netlink/route/constants.js';
import { TCA_KIND, TC_H_ROOT, TC_H_INGRESS, TC_H_CLSACT, TC_H_MAJ, TCMSG_LEN } from './constants.js';
import { deviceError, devText } from './device.js';
import { formatHandle, formatQdiscHandle, parentText } from './handle.js';
import { encodeTcmsg } from './tcmsg.js';
import type { DeviceRef, TcConnection, TcOp, TcRequest } from './types.js';

/**
 * A kernel refusal whose cause is a module the kernel lacks: the same errno,
 * request and extended ack as the kernel's error, synplug's sentence, and
 * the category `missing-module` (the kernel answered, but what it lacks is
 * a module), fixed by the class.
 */
class ModuleMissingError extends NetlinkError {
  /** @param explained the kernel's error with synplug's sentence (from `withMessage`) */
  constructor(explained: NetlinkError) {
    super({
      errno: explained.errno,
      requestType: explained.requestType,
      extAckMessage: explained.extAckMessage,
      extAckOffset: explained.extAckOffset,
      missingAttribute: explained.missingAttribute,
      capped: explained.capped,
      message: explained.message,
      category: 'missing-module',
    });
    this.explanation = explained.explanation;
  }
}

/**
 * The kernel lacks a qdisc, filter or action kind that synplug knows, and
 * so the module that provides it: ENOENT (or EOPNOTSUPP) on a request that
 * names the kind. The module is a field; nothing needs to read it back
 * out of the sentence "qdisc kind 'plug' is not available in this kernel
 * (module sch_plug)". Category `missing-module`.
 */
export class KindUnavailableError extends ModuleMissingError {
  /** the kernel module that provides the kind, e.g. `'sch_plug'`, `'cls_fw'` */
  readonly module: string;
  /** TCA_KIND, e.g. `'plug'` */
  readonly kind: string;
  /** what the kind is: a qdisc kind, a classifier (filter) or an action */
  readonly object: 'qdisc' | 'filter' | 'action';
  /**
   * @param cause the kernel's error for the request (errno and request type are kept)
   * @param what the object, kind and module
   */
  constructor(cause: NetlinkError, what: { object: 'qdisc' | 'filter' | 'action'; kind: string; module: string }) {
    // withMessage puts the kernel's extended-ack text, when it sent one, before the sentence
    super(cause.withMessage(`${what.object} kind '${what.kind}' is not available in this kernel (module ${what.module})`));
    this.name = 'KindUnavailableError';
    this.module = what.module;
    this.kind = what.kind;
    this.object = what.object;
  }
}

/**
 * A kind the kernel answered ENOENT for: a {@link KindUnavailableError}
 * naming the module when synplug knows the kind, else a NetlinkError
 * saying the kernel does not know the kind (a misspelling, or a kind whose
 * module synplug cannot name).
 */
function kindMissing(e: NetlinkError, object: 'qdisc' | 'filter', kind: string | undefined, module: string | undefined): NetlinkError {
  if (kind !== undefined && module !== undefined) return new KindUnavailableError(e, { object, kind, module });
  return e.withMessage(
    `${object} kind '${kind ?? ''}' is unknown to this kernel (${e.code}): check the name; if it is right, the module that provides it is not loaded and cannot be loaded`,
  );
}

/**
 * ENOENT on a filter that carries actions: the classifier's module or an
 * action's is missing. The kernel looks the classifier up first, then each
 * action; its extended ack says which failed ("TC classifier not found",
 * "Failed to load TC action module"). With that text: a
 * {@link KindUnavailableError} for the filter kind, or for the action kind
 * when the request has one; otherwise (no extended ack, or several action
 * kinds) one error naming every candidate module, category `missing-module`.
 */
function kindOrActionMissing(
  e: NetlinkError,
  kind: string | undefined,
  module: string | undefined,
  actions: ReadonlyArray<{ kind: string; module: string }>,
): NetlinkError {
  const ack = e.extAckMessage ?? '';
  if (/classifier not found/i.test(ack)) return kindMissing(e, 'filter', kind, module);
  const actionSaid = /action/i.test(ack);
  if (actionSaid && actions.length === 1) return new KindUnavailableError(e, { object: 'action', kind: actions[0].kind, module: actions[0].module });
  const mods = [...(module && !actionSaid ? [module] : []), ...actions.map((a) => a.module)];
  const acts = actions.map((a) => `'${a.kind}'`).join(', ');
  return new ModuleMissingError(
    e.withMessage(
      actionSaid
        ? `action kinds ${acts}: one of them is not available in this kernel (modules ${mods.join(', ')})`
        : `filter kind '${kind ?? ''}' or action kind${actions.length > 1 ? 's' : ''} ${acts} not available in this kernel (module${mods.length > 1 ? 's' : ''} ${mods.join(', ')}: one of them is missing)`,
    ),
  );
}

/** errnoName gives 95 as ENOTSUP or EOPNOTSUPP depending on Node's table order; both mean EOPNOTSUPP here. */
function codeOf(e: NetlinkError): string {
  return e.code === 'ENOTSUP' ? 'EOPNOTSUPP' : e.code;
}

/** EPERM / EACCES as "<what>: not permitted; this needs CAP_NET_ADMIN". */
function permission(e: NetlinkError, what: string): NetlinkError | undefined {
  if (e.code === 'EPERM' || e.code === 'EACCES') return e.withMessage(`${what}: not permitted; this needs CAP_NET_ADMIN (run as root)`);
  return undefined;
}

/** The little of a qdisc that the explanations need. */
interface QdiscBrief {
  handle: number;
  parent: number;
  kind?: string;
}

/**
 * The device's qdiscs (handle, parent, kind), or undefined when they
 * cannot be listed or read. Reads only the tcmsg and TCA_KIND.
 */
async function qdiscsOn(conn: TcConnection, ifindex: number): Promise<QdiscBrief[] | undefined> {
  try {
    const msgs = await conn.dumpAll({ type: RTM_GETQDISC, payload: [encodeTcmsg({ ifindex })] });
    const out: QdiscBrief[] = [];
    for (const m of msgs) {
      const p = m.payload;
      if (m.type !== RTM_NEWQDISC || p.length < TCMSG_LEN || p.readUInt32LE(4) !== ifindex) continue;
      const kind = parseAttributes(p.subarray(TCMSG_LEN)).str(TCA_KIND);
      out.push({ handle: p.readUInt32LE(8), parent: p.readUInt32LE(12), kind });
    }
    return out;
  } catch {
    return undefined;
  }
}

/** Whether the device has class `classid` (undefined when the classes cannot be listed). */
async function classExists(conn: TcConnection, ifindex: number, classid: number): Promise<boolean | undefined> {
  try {
    const msgs = await conn.dumpAll({ type: RTM_GETTCLASS, payload: [encodeTcmsg({ ifindex })] });
    return msgs.some((m) => m.type === RTM_NEWTCLASS && m.payload.length >= 12 && m.payload.readUInt32LE(8) === classid);
  } catch {
    return undefined;
  }
}

/**
 * Whether the qdisc a parent belongs to exists: root and the ingress
 * hooks always do (the kernel says otherwise by itself); "1:4" needs qdisc "1:".
 */
function parentQdiscExists(list: readonly QdiscBrief[], parent: number): boolean {
  if (parent === TC_H_ROOT || parent === TC_H_INGRESS) return true;
  const maj = TC_H_MAJ(parent);
  return list.some((q) => TC_H_MAJ(q.handle) === maj);
}

/** `at the root` / `under parent 1:4`. */
function placeText(parent: number): string {
  return parent === TC_H_ROOT ? 'at the root' : `under parent ${parentText(parent)}`;
}

/**
 * Explain a refused qdisc request (add, replace, change, delete, or a plug
 * verb, which is a change of kind plug).
 * @param op the operation, or `'plug'` for a plug verb
 * @param d the device as the caller named it (for the sentences)
 * @param req the request that failed
 * @returns the error to throw: `e` itself when it is not a NetlinkError,
 *   a {@link KindUnavailableError} for a kind the kernel lacks, else a
 *   NetlinkError with a specific sentence
 */
export async function explainQdisc(conn: TcConnection, e: unknown, op: TcOp | 'plug', d: DeviceRef, req: TcRequest): Promise<unknown> {
  if (!(e instanceof NetlinkError)) return e;
  const { ifindex, handle, parent, kind } = req;
  const dev = devText(d, ifindex);
  const hText = handle ? formatQdiscHandle(handle) : undefined;
  const where = `${hText ? `with handle ${hText} ` : ''}${placeText(parent)} on ${dev}`;
  const what = `${op === 'plug' ? 'plug' : `qdisc ${op}`}${kind ? ` (kind '${kind}')` : ''}`;
  const perm = permission(e, `${what} on ${dev}`);
  if (perm) return perm;
  const code = codeOf(e);
  if (code === 'ENODEV') return deviceError(e, d, ifindex);
  const list = code === 'ENOENT' || code === 'EEXIST' || code === 'EINVAL' ? await qdiscsOn(conn, ifindex) : undefined;
  const existing = hText === undefined ? undefined : list?.find((q) => q.handle === handle);
  const atParent = list?.find((q) => q.parent === parent);
  if (op === 'add' || op === 'replace') {
    if (code === 'ENOENT') {
      if (list && !parentQdiscExists(list, parent))
        return e.withMessage(`cannot ${op} qdisc ${where}: parent ${parentText(parent)} does not exist (no qdisc ${formatQdiscHandle(parent)})`);
      // a parent with minor 0 ("1:") names no class either: the kernel looks up class 1:0 and finds none
      if (parent !== TC_H_ROOT && parent !== TC_H_INGRESS && parent !== TC_H_CLSACT && (await classExists(conn, ifindex, parent)) === false) {
        if (!(parent & 0xffff)) {
          const holder = list?.find((q) => q.handle === parent);
          return e.withMessage(
            `cannot ${op} qdisc ${where}: parent ${parentText(parent)} is qdisc ${formatQdiscHandle(parent)}${holder?.kind ? ` (kind '${holder.kind}')` : ''} itself, not one of its classes; give one of its classes as the parent (e.g. ${formatHandle(parent | 1)})`,
          );
        }
        return e.withMessage(`cannot ${op} qdisc ${where}: class ${formatHandle(parent)} does not exist`);
      }
      // when the kernel said what is wrong and it is not an unknown kind, a module is not to blame
      if (e.extAckMessage && !/kind/i.test(e.extAckMessage)) return e.withMessage(`cannot ${op} qdisc ${where}`);
      return kindMissing(e, 'qdisc', kind, req.module);
    }
    if (code === 'EEXIST') {
      if (existing) return e.withMessage(`a qdisc with handle ${hText} already exists on ${dev} (kind '${existing.kind}'); use replace or change`);
      if (atParent)
        return e.withMessage(
          `${parent === TC_H_ROOT ? 'the root' : `parent ${parentText(parent)}`} on ${dev} already has a qdisc (handle ${formatQdiscHandle(atParent.handle)}, kind '${atParent.kind}'); use replace`,
        );
      return e.withMessage(`cannot ${op} qdisc ${where}: it already exists; use replace`);
    }
    if (code === 'EINVAL') {
      if (existing && existing.kind !== kind)
        return e.withMessage(`cannot ${op} qdisc ${where}: a qdisc of kind '${existing.kind}' has that handle; delete it first`);
      if (list && !parentQdiscExists(list, parent)) return e.withMessage(`cannot ${op} qdisc ${where}: parent ${parentText(parent)} does not exist`);
      return e.withMessage(
        `the kernel refused qdisc '${kind}' ${where} (EINVAL): invalid options, a parent class that does not exist, or a parent that cannot hold this qdisc`,
      );
    }
    if (code === 'EOPNOTSUPP')
      return e.withMessage(
        `cannot ${op} qdisc '${kind}' ${where}: qdisc ${formatQdiscHandle(parent)} is not classful, so it has no class ${parentText(parent)} to hold a qdisc (EOPNOTSUPP)`,
      );
  }
  if (op === 'change' || op === 'plug') {
    const k = op === 'plug' ? 'plug' : kind;
    if (code === 'ENOENT') return e.withMessage(`no qdisc ${where} to change${op === 'plug' ? ' (create the plug qdisc first)' : '; use add or replace'}`);
    if (code === 'EINVAL' && existing && existing.kind !== k) return e.withMessage(`the qdisc ${where} is a '${existing.kind}', not a '${k}'`);
    if (code === 'EEXIST') {
      const holder = atParent ? `qdisc ${formatQdiscHandle(atParent.handle)} (kind '${atParent.kind}')` : 'another qdisc';
      if (op === 'plug') return e.withMessage(`no plug qdisc with handle ${hText} ${placeText(parent)} on ${dev}: that place holds ${holder}`);
      return e.withMessage(`cannot change qdisc ${where}: that place holds ${holder}; use replace`);
    }
    if (code === 'EINVAL') return e.withMessage(`the kernel refused to change qdisc '${k}' ${where} (EINVAL): invalid options, or no such qdisc there`);
    if (code === 'EOPNOTSUPP') return e.withMessage(`qdisc '${k}' ${where} cannot be changed (EOPNOTSUPP)`);
  }
  if (op === 'delete') {
    if (code === 'EINVAL' || code === 'ENOENT') {
      if (hText && !existing) return e.withMessage(`no qdisc with handle ${hText} ${placeText(parent)} on ${dev}`);
      if (!hText && !atParent) return e.withMessage(`no qdisc ${placeText(parent)} on ${dev} to delete`);
      if (existing && kind && existing.kind !== kind) return e.withMessage(`the qdisc ${where} is a '${existing.kind}', not a '${kind}'`);
      return e.withMessage(
        `cannot delete qdisc ${where} (${code}): ${code === 'ENOENT' ? 'it is the default qdisc, which cannot be deleted' : 'handle and parent do not match'}`,
      );
    }
  }
  return e.withMessage(`${what} ${where} failed: ${code}${e.extAckMessage ? ` (kernel: ${e.extAckMessage})` : ''}`);
}

/**
 * Explain a refused class request.
 * @returns the error to throw (see {@link explainQdisc})
 */
export function explainClass(e: unknown, op: TcOp, d: DeviceRef, req: TcRequest): unknown {
  if (!(e instanceof NetlinkError)) return e;
  const { ifindex, handle, parent, kind } = req;
  const dev = devText(d, ifindex);
  const cid = formatHandle(handle);
  const perm = permission(e, `class ${op} ${cid} on ${dev}`);
  if (perm) return perm;
  const code = codeOf(e);
  if (code === 'ENODEV') return deviceError(e, d, ifindex);
  const qd = formatQdiscHandle(handle);
  const msg: Record<string, string> =
    op === 'delete'
      ? {
          ENOENT: `no class ${cid} on ${dev}`,
          EBUSY: `class ${cid} on ${dev} is in use (it has child classes or filters point at it); delete those first`,
          EINVAL: `cannot delete class ${cid} on ${dev} (EINVAL): no such class, or the parent ${parent ? parentText(parent) : ''} does not match`,
        }
      : {
          ENOENT:
            op === 'change'
              ? `no class ${cid} on ${dev} to change; use add`
              : `cannot ${op} class ${cid} on ${dev}: qdisc ${qd} or parent ${parentText(parent)} does not exist`,
          EEXIST: `class ${cid} already exists on ${dev}; use change or replace`,
          EINVAL: `the kernel refused class ${cid} (kind '${kind}') under ${parentText(parent)} on ${dev} (EINVAL): invalid options, a parent class that does not exist, or a kind that does not match the qdisc`,
          EOPNOTSUPP: `qdisc ${qd} on ${dev} does not support adding classes (EOPNOTSUPP): it is not classful or its classes are fixed`,
        };
  return e.withMessage(msg[code] ?? `class ${op} ${cid} on ${dev} failed: ${code}`);
}

/**
 * Explain a refused filter request.
 * @param handleText the filter handle as the caller wrote it, for the sentences
 * @returns the error to throw (see {@link explainQdisc})
 */
export async function explainFilter(conn: TcConnection, e: unknown, op: TcOp, d: DeviceRef, req: TcRequest, handleText?: string | number): Promise<unknown> {
  if (!(e instanceof NetlinkError)) return e;
  const { ifindex, handle, parent, info, kind } = req;
  const dev = devText(d, ifindex);
  const pref = info >>> 16;
  const fhText = handle ? ` handle ${handleText ?? handle}` : '';
  const what = `filter${kind ? ` '${kind}'` : ''}${pref ? ` pref ${pref}` : ''}${op === 'delete' ? fhText : ''} under ${parentText(parent)} on ${dev}`;
  const perm = permission(e, `${op} ${what}`);
  if (perm) return perm;
  const code = codeOf(e);
  if (code === 'ENODEV') return deviceError(e, d, ifindex);
  if (op === 'delete') {
    if (code === 'ENOENT') return e.withMessage(`no ${what}`);
    if (code === 'EINVAL') return e.withMessage(`cannot delete ${what} (EINVAL): no such qdisc, or the filter's kind or protocol does not match`);
  } else if (code === 'ENOENT' || code === 'EOPNOTSUPP') {
    const list = await qdiscsOn(conn, ifindex);
    if (list && !parentQdiscExists(list, parent)) return e.withMessage(`cannot ${op} ${what}: no qdisc ${formatQdiscHandle(parent)} on ${dev}`);
    if (op === 'change' && code === 'ENOENT') return e.withMessage(`no ${what} to change; use add`);
    // filterRequest notes the action kinds of the request (actions/list.ts actionKindsOf)
    const actions = req.actions;
    if (actions?.length && code === 'ENOENT') return kindOrActionMissing(e, kind, req.module, actions);
    return kindMissing(e, 'filter', kind, req.module);
  } else if (code === 'EEXIST') {
    return e.withMessage(`${what}${fhText ? ` with${fhText}` : ''} already exists; use replace`);
  } else if (code === 'EINVAL') {
    const list = await qdiscsOn(conn, ifindex);
    return e.withMessage(
      list && !parentQdiscExists(list, parent)
        ? `cannot ${op} ${what}: no qdisc ${formatQdiscHandle(parent)} on ${dev}`
        : `the kernel refused ${what} (EINVAL): invalid options, a protocol that differs from the existing filters at this pref, or a parent that takes no filters`,
    );
  }
  return e.withMessage(`${op} ${what} failed: ${code}`);
}

/**
 * Explain a refused listing (dump) of classes or filters.
 * @returns the error to throw
 */
export function explainList(e: unknown, what: string, d: DeviceRef, ifindex: number): unknown {
  if (!(e instanceof NetlinkError)) return e;
  if (e.code === 'ENODEV') return deviceError(e, d, ifindex);
  return e.withMessage(`listing ${what} on ${devText(d, ifindex)} failed: ${e.code}`);
}
