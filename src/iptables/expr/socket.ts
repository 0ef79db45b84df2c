/**
 * The `socket` expression (net/netfilter/nft_socket.c): a property of the
 * local socket the packet belongs to, loaded into a register: nft's
 * `socket transparent 1`, `socket mark 0x00000005`, `socket wildcard 1`.
 *
 * ```c
 * // nf_tables.h: enum nft_socket_attributes
 * NFTA_SOCKET_KEY     // NLA_U32, enum nft_socket_keys: transparent, mark, wildcard, cgroupv2
 * NFTA_SOCKET_DREG    // NLA_U32, destination register
 * NFTA_SOCKET_LEVEL   // NLA_U32, cgroupv2 ancestor level
 * ```
 * Printed: transparent, mark, wildcard, and cgroupv2 with its level
 * (`socket cgroupv2 level 1 "user.slice"`: the id's path under /sys/fs/cgroup,
 * read with the listing; nft 1.0.6's JSON leaves the level out).
 *
 * @module
 */
import * as C from '../constants.js';
import type { ValueType } from '../print.js';
import { attrCodec } from './registry.js';

/** `socket`: NFTA_SOCKET_* as numbers. */
export interface SocketExpr {
  name: 'socket';
  key: number;
  dreg: number;
  level?: number;
}

/** NFT_SOCKET_* keys nft prints, with how their values print (host order). */
const KEYS: Array<[string, ValueType] | undefined> = [
  ['transparent', 'uint_he'],
  ['mark', 'mark'],
  ['wildcard', 'uint_he'],
];

/** Codec of `socket`. */
export const socketExpr = attrCodec<SocketExpr>(
  'socket',
  { key: [C.NFTA_SOCKET_KEY, 'u32', true], dreg: [C.NFTA_SOCKET_DREG, 'u32', true], level: [C.NFTA_SOCKET_LEVEL, 'u32'] },
  {
    describe: (e) =>
      `socket load ${e.key === C.NFT_SOCKET_CGROUPV2 ? 'cgroupv2' : (KEYS[e.key]?.[0] ?? `key ${e.key}`)} => reg ${e.dreg}${e.level !== undefined ? ` level ${e.level}` : ''}`,
    field(e) {
      if (e.key === C.NFT_SOCKET_CGROUPV2 && e.level !== undefined)
        return { dreg: e.dreg, field: { text: `socket cgroupv2 level ${e.level}`, json: { socket: { key: 'cgroupv2' } }, type: 'cgroupv2' }, len: 8 };
      const k = KEYS[e.key];
      return k ? { dreg: e.dreg, field: { text: `socket ${k[0]}`, json: { socket: { key: k[0] } }, type: k[1] } } : undefined;
    },
    writes: (e) => [e.dreg],
  },
);
