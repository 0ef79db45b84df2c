/**
 * `struct tcmsg` (linux/rtnetlink.h), the family header of every qdisc,
 * class and filter message.
 *
 * ```c
 * struct tcmsg {
 *   unsigned char  tcm_family;
 *   unsigned char  tcm__pad1;
 *   unsigned short tcm__pad2;
 *   int            tcm_ifindex;
 *   __u32          tcm_handle;
 *   __u32          tcm_parent;
 *   __u32          tcm_info;
 * };
 * ```
 *
 * @module
 */
import { NetlinkDecodeError } from '../netlink/errors.js';
import { TCMSG_LEN } from './constants.js';

/** The fields of `struct tcmsg`. */
export interface Tcmsg {
  /** tcm_family (AF_UNSPEC = 0 for tc) */
  family: number;
  /** tcm_ifindex (0xFFFFFFFF = TCM_IFINDEX_MAGIC_BLOCK, kept unsigned) */
  ifindex: number;
  /** tcm_handle, u32 */
  handle: number;
  /** tcm_parent, u32 (the block index for shared blocks) */
  parent: number;
  /**
   * tcm_info, u32: qdiscs: reference count in replies; classes: the leaf
   * qdisc's handle; filters: `(prio << 16) | htons(protocol)`.
   */
  info: number;
}

/**
 * Encode a tcmsg.
 * @param t fields; missing ones are 0
 * @returns 20 bytes
 */
export function encodeTcmsg(t: Partial<Tcmsg>): Buffer {
  // allocUnsafe slices Node's pool (no backing store per message); every byte is written
  const b = Buffer.allocUnsafe(TCMSG_LEN);
  b[0] = (t.family ?? 0) & 0xff;
  b[1] = 0; // tcm__pad1
  b[2] = 0; // tcm__pad2
  b[3] = 0;
  b.writeUInt32LE((t.ifindex ?? 0) >>> 0, 4);
  b.writeUInt32LE((t.handle ?? 0) >>> 0, 8);
  b.writeUInt32LE((t.parent ?? 0) >>> 0, 12);
  b.writeUInt32LE((t.info ?? 0) >>> 0, 16);
  return b;
}

/**
 * Decode the tcmsg at the start of a message payload.
 * @param payload message payload (after the 16-byte nlmsghdr)
 * @param base absolute offset of `payload[0]`, for errors
 * @throws {NetlinkDecodeError} fewer than 20 bytes
 */
export function decodeTcmsg(payload: Buffer, base = 0): Tcmsg {
  if (payload.length < TCMSG_LEN) throw new NetlinkDecodeError(`tcmsg needs ${TCMSG_LEN} bytes, message has ${payload.length}`, base);
  return {
    family: payload[0],
    ifindex: payload.readUInt32LE(4),
    handle: payload.readUInt32LE(8),
    parent: payload.readUInt32LE(12),
    info: payload.readUInt32LE(16),
  };
}

/**
 * tcm_info of a filter: `(prio << 16) | htons(protocol)` (what tc and the
 * kernel's TC_H_MAKE(prio << 16, protocol) put there).
 * @param prio filter priority (`pref`), 0..0xffff
 * @param protocol ethertype in host order, e.g. ETH_P_IP = 0x0800
 */
export function filterInfo(prio: number, protocol: number): number {
  const be = ((protocol & 0xff) << 8) | ((protocol >>> 8) & 0xff);
  return (((prio & 0xffff) << 16) | be) >>> 0;
}
