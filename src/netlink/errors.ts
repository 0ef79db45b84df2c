/**
 * Errors raised by the netlink layer and everything built on it.
 *
 * - {@link NetlinkError}: the kernel answered a request with NLMSG_ERROR
 *   (a negative errno), or NLMSG_DONE carried one.
 * - {@link NetlinkDecodeError}: bytes that do not parse as what they claim
 *   to be; always carries the byte offset.
 * - {@link DumpInterruptedError}: a dump kept coming back with
 *   NLM_F_DUMP_INTR after the bounded number of retries.
 * - {@link SynplugError}: a problem found before anything was sent
 *   (bad argument, missing device...), with an exit code for the CLI.
 *
 * @module
 */
import { constants as osConstants } from 'node:os';

const ERRNO_NAMES: Map<number, string> = new Map();
for (const [name, value] of Object.entries(osConstants.errno)) {
  if (!ERRNO_NAMES.has(value)) ERRNO_NAMES.set(value, name);
}
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

/** Base class of every error synplug throws; `exitCode` is what the CLI exits with. */
export class SynplugError extends Error {
  /** Exit code the CLI uses for this error (see README "Exit codes"). */
  exitCode: number;
  constructor(message: string, exitCode = 1, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SynplugError';
    this.exitCode = exitCode;
  }
}

/** Bad user input (argument, address, handle text...): refused before anything is sent. Exit code 2. */
export class UsageError extends SynplugError {
  constructor(message: string) {
    super(message, 2);
    this.name = 'UsageError';
  }
}

/**
 * Bytes that do not decode (exit code 3): a length past the end of the buffer, a truncated
 * header or struct, an attribute shorter than its header.
 *
 * `offset` is the byte offset, from the start of the buffer handed to the
 * decoder (the datagram for message-level decoders), where the problem sits.
 */
export class NetlinkDecodeError extends SynplugError {
  /** byte offset of the bad field, from the start of the decoded buffer */
  offset: number;
  constructor(message: string, offset: number) {
    super(`${message} (at byte ${offset})`, 3);
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
}

/**
 * The kernel refused a request (NLMSG_ERROR with a negative error, or
 * NLMSG_DONE carrying one). Mirrors `struct nlmsgerr` in linux/netlink.h.
 *
 * Exit code 3 in the CLI.
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

  constructor(init: NetlinkErrorInit) {
    const code = errnoName(init.errno);
    const base = init.message ?? defaultMessage(init, code);
    super(base, 3);
    this.name = 'NetlinkError';
    this.errno = init.errno;
    this.code = code;
    this.requestType = init.requestType;
    this.extAckMessage = init.extAckMessage;
    this.extAckOffset = init.extAckOffset;
    this.missingAttribute = init.missingAttribute;
    this.capped = init.capped ?? false;
  }

  /** A copy with a more specific sentence, keeping every kernel field. */
  withMessage(message: string): NetlinkError {
    return new NetlinkError({
      errno: this.errno,
      requestType: this.requestType,
      extAckMessage: this.extAckMessage,
      extAckOffset: this.extAckOffset,
      missingAttribute: this.missingAttribute,
      capped: this.capped,
      message,
    });
  }

  /** JSON form used by `--json` output and `synplug decode`. */
  toJSON(): Record<string, unknown> {
    return {
      error: this.message,
      errno: this.errno,
      code: this.code,
      ...(this.requestType !== undefined && { request: this.requestType }),
      ...(this.extAckMessage !== undefined && { extack: this.extAckMessage }),
      ...(this.extAckOffset !== undefined && { extack_offset: this.extAckOffset }),
      ...(this.missingAttribute !== undefined && { missing_attribute: this.missingAttribute }),
    };
  }
}

function defaultMessage(init: NetlinkErrorInit, code: string): string {
  const parts = [`${init.requestType ?? 'netlink request'} failed: ${code}`];
  if (init.extAckMessage) parts.push(`(kernel: ${init.extAckMessage})`);
  return parts.join(' ');
}

/**
 * A dump kept returning NLM_F_DUMP_INTR (the kernel's object list changed
 * while it was being dumped) after every retry. Exit code 3.
 */
export class DumpInterruptedError extends SynplugError {
  /** request type name of the dump */
  requestType: string;
  /** how many times the dump was tried */
  attempts: number;
  constructor(requestType: string, attempts: number) {
    super(`${requestType} dump was interrupted by concurrent changes ${attempts} times in a row; try again`, 3);
    this.name = 'DumpInterruptedError';
    this.requestType = requestType;
    this.attempts = attempts;
  }
}
