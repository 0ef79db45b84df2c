/**
 * Errors raised by the netlink layer and everything built on it.
 *
 * - {@link NetlinkError}: the kernel answered a request with NLMSG_ERROR
 *   (a negative errno), or NLMSG_DONE carried one.
 * - {@link NetlinkDecodeError}: bytes that do not parse as what they claim
 *   to be; always carries the byte offset.
 * - {@link DumpInterruptedError}: a dump kept coming back with
 *   NLM_F_DUMP_INTR after the bounded number of retries.
 * - {@link SynplugError}: the base of them all, and of every other error
 *   synplug throws; it carries a {@link ErrorCategory} (what kind of problem
 *   it is), never an exit code: the CLI maps categories to exit codes in one
 *   table (src/cli/exit-codes.ts).
 *
 * @module
 */
import { constants as osConstants } from 'node:os';

const ERRNO_NAMES: Map<number, string> = new Map();
for (const [name, value] of Object.entries(osConstants.errno)) {
  if (!ERRNO_NAMES.has(value)) ERRNO_NAMES.set(value, name);
}
// Linux errnos the kernel sends that Node does not list (asm-generic/errno.h).
const LINUX_ONLY_ERRNOS: Record<string, number> = { ERESTART: 85 };
for (const [name, value] of Object.entries(LINUX_ONLY_ERRNOS)) if (!ERRNO_NAMES.has(value)) ERRNO_NAMES.set(value, name);
// Where Linux has two names for one number, use the one the kernel's own
// sources and iproute2 use (Node lists ENOTSUP and EWOULDBLOCK first for some).
for (const name of ['EOPNOTSUPP', 'EAGAIN', 'EDEADLK']) {
  const v = (osConstants.errno as Record<string, number>)[name];
  if (v !== undefined) ERRNO_NAMES.set(v, name);
}

/**
 * The symbolic name of a positive errno number.
 * @param errno positive errno, as in `<errno.h>`
 * @returns e.g. `'ENOENT'`, or `'E<n>'` for a number Node does not know
 */
export function errnoName(errno: number): string {
  return ERRNO_NAMES.get(errno) ?? `E${errno}`;
}

/**
 * The error categories, as a registry: each key is one. This core lists its
 * own; a layer above adds its own to this interface where its errors live
 * (`declare module`: the guard's in guard/errors.ts), so that the core never
 * names a product outcome. Library users branch on a category; the CLI maps
 * each to its exit code (src/cli/exit-codes.ts, the only table of codes).
 */
export interface ErrorCategories {
  /** anything not covered by another category (a state file that cannot be written...) */
  failure: true;
  /** bad input (an argument, an address, a device that does not exist), refused before anything was sent */
  usage: true;
  /** bytes that do not decode as what they claim to be */
  decode: true;
  /** the kernel refused a request, did not answer, or the socket failed */
  kernel: true;
  /** not permitted (CAP_NET_ADMIN missing, EPERM/EACCES from the kernel) */
  permission: true;
  /** the kernel lacks a module (sch_plug, cls_fw, tcp_diag...) */
  'missing-module': true;
  /** something that is not synplug's is in the way (a foreign root qdisc, a queue bound by another process...) */
  'foreign-state': true;
  /** `show ruleset` listed something nft's language cannot express as decoded (printed marked `[ raw: ... ]`, each named on stderr) */
  unprintable: true;
}

/** What kind of problem an error is: a key of {@link ErrorCategories} (the core's and those the layers above add). */
export type ErrorCategory = keyof ErrorCategories;

/** The core's own categories (the guard's: guard/errors.ts `GUARD_CATEGORIES`). */
export const CORE_CATEGORIES = [
  'failure',
  'usage',
  'decode',
  'kernel',
  'permission',
  'missing-module',
  'foreign-state',
  'unprintable',
] as const satisfies readonly ErrorCategory[];

/** Base class of every error synplug throws; {@link SynplugError.category} says what kind of problem it is. */
export class SynplugError extends Error {
  /** What kind of problem this is (the CLI's exit code follows from it); read-only, also at run time. */
  declare readonly category: ErrorCategory;
  /**
   * @param message a sentence a person can act on
   * @param category what kind of problem; default `failure`
   * @param options `cause`: the error this one explains
   */
  constructor(message: string, category: ErrorCategory = 'failure', options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SynplugError';
    Object.defineProperty(this, 'category', { value: category, enumerable: true, writable: false, configurable: false });
  }
}

/** Bad user input (argument, address, handle text...): refused before anything is sent. Category `usage`. */
export class UsageError extends SynplugError {
  /** @param message what is wrong with the input and what is expected */
  constructor(message: string) {
    super(message, 'usage');
    this.name = 'UsageError';
  }
}

/**
 * Bytes that do not decode (category `decode`): a length past the end of the buffer, a truncated
 * header or struct, an attribute shorter than its header.
 *
 * `offset` is the byte offset, from the start of the buffer handed to the
 * decoder (the datagram for message-level decoders), where the problem sits.
 */
export class NetlinkDecodeError extends SynplugError {
  /** byte offset of the bad field, from the start of the decoded buffer */
  offset: number;
  /**
   * @param message what does not decode
   * @param offset byte offset of the bad field (appended to the message)
   */
  constructor(message: string, offset: number) {
    super(`${message} (at byte ${offset})`, 'decode');
    this.name = 'NetlinkDecodeError';
    this.offset = offset;
  }
}

/** Fields of a kernel error reply (`struct nlmsgerr` plus its extended-ack TLVs, netlink.h). */
export interface NetlinkErrorInit {
  /** positive errno (the kernel sends it negated) */
  errno: number;
  /** name of the request's message type, e.g. `'RTM_NEWQDISC'` */
  requestType?: string;
  /** NLMSGERR_ATTR_MSG: the kernel's extended-ack text */
  extAckMessage?: string;
  /** NLMSGERR_ATTR_OFFS: byte offset of the offending attribute in the request */
  extAckOffset?: number;
  /** NLMSGERR_ATTR_MISS_TYPE: type of a missing required attribute */
  missingAttribute?: number;
  /** NLM_F_CAPPED was set: the echoed request was cut to its header */
  capped?: boolean;
  /** A sentence a person can act on; defaults to one built from the fields */
  message?: string;
  /** the category, when a subclass knows better than the errno (a missing module, someone else's queue) */
  category?: ErrorCategory;
}

/**
 * The kernel refused a request (NLMSG_ERROR with a negative error, or
 * NLMSG_DONE carrying one). Mirrors `struct nlmsgerr` in linux/netlink.h.
 *
 * Its category follows the errno ({@link categoryOfErrno}): EPERM and EACCES
 * are `permission`, ENODEV (no such device: bad input) is `usage`, every
 * other errno `kernel`.
 */
export class NetlinkError extends SynplugError {
  /** positive errno, e.g. 2 */
  errno: number;
  /** errno name, e.g. `'ENOENT'` */
  code: string;
  /** message type name of the request that failed, e.g. `'RTM_NEWQDISC'` */
  requestType?: string;
  /** kernel extended-ack text (NLMSGERR_ATTR_MSG), when the kernel sent one */
  extAckMessage?: string;
  /** kernel extended-ack offset (NLMSGERR_ATTR_OFFS), when sent */
  extAckOffset?: number;
  /** NLMSGERR_ATTR_MISS_TYPE, when sent */
  missingAttribute?: number;
  /** NLM_F_CAPPED: the kernel echoed only the request's header */
  capped: boolean;
  /** synplug's own sentence given to {@link NetlinkError.withMessage}, without the kernel's text */
  explanation?: string;

  constructor(init: NetlinkErrorInit) {
    const code = errnoName(init.errno);
    const base = init.message ?? defaultMessage(init, code);
    super(base, init.category ?? categoryOfErrno(code));
    this.name = 'NetlinkError';
    this.errno = init.errno;
    this.code = code;
    this.requestType = init.requestType;
    this.extAckMessage = init.extAckMessage;
    this.extAckOffset = init.extAckOffset;
    this.missingAttribute = init.missingAttribute;
    this.capped = init.capped ?? false;
  }

  /**
   * A copy with a more specific sentence, keeping every kernel field. When
   * the kernel sent its own text (extended ack), the message is the kernel's
   * sentence first, then `message`: "Specified parent ID is reserved for
   * ingress and clsact Qdiscs. cannot add qdisc ...". `explanation` keeps
   * `message` alone.
   * @param message synplug's sentence for this error
   */
  withMessage(message: string): NetlinkError {
    const kernel = this.extAckMessage?.trim();
    const err = new NetlinkError({
      errno: this.errno,
      requestType: this.requestType,
      extAckMessage: this.extAckMessage,
      extAckOffset: this.extAckOffset,
      missingAttribute: this.missingAttribute,
      capped: this.capped,
      category: this.category,
      message: kernel ? `${kernel}${/[.!?]$/.test(kernel) ? '' : '.'} ${message.charAt(0).toUpperCase()}${message.slice(1)}` : message,
    });
    err.explanation = message;
    return err;
  }

  /** JSON form used by `--json` output and `synplug decode`. */
  toJSON(): Record<string, unknown> {
    return {
      error: this.message,
      errno: this.errno,
      code: this.code,
      ...(this.requestType !== undefined && { request: this.requestType }),
      ...(this.extAckMessage !== undefined && { extack: this.extAckMessage }),
      ...(this.extAckOffset !== undefined && { extackOffset: this.extAckOffset }),
      ...(this.missingAttribute !== undefined && { missingAttribute: this.missingAttribute }),
      ...(this.explanation !== undefined && { explanation: this.explanation }),
    };
  }
}

/**
 * The category of a kernel refusal, from its errno name: `permission` for
 * EPERM/EACCES, `usage` for ENODEV (a device that does not exist is bad
 * input), `kernel` otherwise.
 * @param code errno name, e.g. `'EPERM'` (see {@link errnoName})
 */
export function categoryOfErrno(code: string): ErrorCategory {
  if (code === 'EPERM' || code === 'EACCES') return 'permission';
  if (code === 'ENODEV') return 'usage';
  return 'kernel';
}

function defaultMessage(init: NetlinkErrorInit, code: string): string {
  const parts = [`${init.requestType ?? 'netlink request'} failed: ${code}`];
  if (init.extAckMessage) parts.push(`(kernel: ${init.extAckMessage})`);
  return parts.join(' ');
}

/**
 * A dump kept returning NLM_F_DUMP_INTR (the kernel's object list changed
 * while it was being dumped) after every retry. Category `kernel`.
 */
export class DumpInterruptedError extends SynplugError {
  /** request type name of the dump */
  requestType: string;
  /** how many times the dump was tried */
  attempts: number;
  /**
   * @param requestType the dump's request type name, e.g. `'RTM_GETQDISC'`
   * @param attempts how many times it was tried
   */
  constructor(requestType: string, attempts: number) {
    super(`${requestType} dump was interrupted by concurrent changes ${attempts} times in a row; try again`, 'kernel');
    this.name = 'DumpInterruptedError';
    this.requestType = requestType;
    this.attempts = attempts;
  }
}
