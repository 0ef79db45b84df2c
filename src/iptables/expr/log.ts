/**
 * The `log` expression (net/netfilter/nft_log.c): log the packet to the
 * kernel log (with a level and flags) or to an nflog group. nft's
 * `log prefix "x " level debug flags all`, `log group 2 snaplen 100`.
 *
 * ```c
 * // nf_tables.h: enum nft_log_attributes
 * NFTA_LOG_GROUP        // NLA_U16 (big-endian): nflog group
 * NFTA_LOG_PREFIX       // NLA_STRING: at most NF_LOG_PREFIXLEN (128) bytes with the NUL
 * NFTA_LOG_SNAPLEN      // NLA_U32: bytes copied to the group
 * NFTA_LOG_QTHRESHOLD   // NLA_U16: packets queued before sending to the group
 * NFTA_LOG_LEVEL        // NLA_U32: enum nft_log_level (syslog levels, NFT_LOGLEVEL_AUDIT)
 * NFTA_LOG_FLAGS        // NLA_U32: NF_LOG_* of linux/netfilter/nf_log.h
 * ```
 *
 * @module
 */
import { bin, str } from '../../netlink/attributes.js';
import { UsageError } from '../../netlink/errors.js';
import * as C from '../constants.js';
import { be32, checkU32 } from '../data.js';
import { quoted, quoteProblem } from '../print.js';
import type { ExprCodec } from './registry.js';

/** `log`. */
export interface LogExpr {
  name: 'log';
  /** NFTA_LOG_PREFIX */
  prefix?: string;
  /** NFTA_LOG_GROUP */
  group?: number;
  /** NFTA_LOG_SNAPLEN: bytes */
  snaplen?: number;
  /** NFTA_LOG_QTHRESHOLD: packets */
  qthreshold?: number;
  /** NFTA_LOG_LEVEL (enum nft_log_level, 0 emerg ... 7 debug, 8 audit) */
  level?: number;
  /** NFTA_LOG_FLAGS (NF_LOG_TCPSEQ, NF_LOG_TCPOPT, NF_LOG_IPOPT, NF_LOG_UID, NF_LOG_MACDECODE) */
  flags?: number;
}

/** Level names as nft prints them, index = NFT_LOGLEVEL_*. */
export const LOG_LEVEL_NAMES: readonly string[] = ['emerg', 'alert', 'crit', 'err', 'warn', 'notice', 'info', 'debug', 'audit'];

function u16be(type: number, v: number, what: string): Buffer {
  if (!Number.isInteger(v) || v < 0 || v > 0xffff) throw new UsageError(`${what}: ${v} is not a u16 (0 to 65535)`);
  const b = Buffer.alloc(2);
  b.writeUInt16BE(v);
  return bin(type, b);
}

/** nft's text and JSON of NF_LOG_* flags, or undefined when a bit has no nft name. */
function flagsPrinted(f: number): { text: string; json: string[] } | undefined {
  if (f & ~C.NF_LOG_MASK) return undefined;
  if ((f & C.NF_LOG_MASK) === C.NF_LOG_MASK) return { text: ' flags all', json: ['all'] };
  let text = '';
  const json: string[] = [];
  if (f & (C.NF_LOG_TCPSEQ | C.NF_LOG_TCPOPT)) {
    const parts = [...(f & C.NF_LOG_TCPSEQ ? ['sequence'] : []), ...(f & C.NF_LOG_TCPOPT ? ['options'] : [])];
    text += ` flags tcp ${parts.join(',')}`;
    json.push(...parts.map((p) => `tcp ${p}`));
  }
  if (f & C.NF_LOG_IPOPT) {
    text += ' flags ip options';
    json.push('ip options');
  }
  if (f & C.NF_LOG_UID) {
    text += ' flags skuid';
    json.push('skuid');
  }
  if (f & C.NF_LOG_MACDECODE) {
    text += ' flags ether';
    json.push('ether');
  }
  return { text, json };
}

/** Codec of `log`. */
export const logExpr: ExprCodec<LogExpr> = {
  name: 'log',
  encode(e) {
    const out: Buffer[] = [];
    if (e.prefix !== undefined) {
      if (Buffer.byteLength(e.prefix) >= 128 || e.prefix.includes('\0')) throw new UsageError('log prefix: at most 127 bytes, no NUL (NF_LOG_PREFIXLEN)');
      out.push(str(C.NFTA_LOG_PREFIX, e.prefix));
    }
    if (e.group !== undefined) out.push(u16be(C.NFTA_LOG_GROUP, e.group, 'log group'));
    if (e.snaplen !== undefined) out.push(be32(C.NFTA_LOG_SNAPLEN, checkU32(e.snaplen, 'log snaplen')));
    if (e.qthreshold !== undefined) out.push(u16be(C.NFTA_LOG_QTHRESHOLD, e.qthreshold, 'log qthreshold'));
    if (e.level !== undefined) out.push(be32(C.NFTA_LOG_LEVEL, checkU32(e.level, 'log level')));
    if (e.flags !== undefined) out.push(be32(C.NFTA_LOG_FLAGS, checkU32(e.flags, 'log flags')));
    return out;
  },
  decode(l) {
    const e: LogExpr = { name: 'log' };
    const prefix = l.str(C.NFTA_LOG_PREFIX);
    const group = l.u16be(C.NFTA_LOG_GROUP);
    const snaplen = l.u32be(C.NFTA_LOG_SNAPLEN);
    const q = l.u16be(C.NFTA_LOG_QTHRESHOLD);
    const level = l.u32be(C.NFTA_LOG_LEVEL);
    const flags = l.u32be(C.NFTA_LOG_FLAGS);
    if (prefix !== undefined) e.prefix = prefix;
    if (group !== undefined) e.group = group;
    if (snaplen !== undefined) e.snaplen = snaplen;
    if (q !== undefined) e.qthreshold = q;
    if (level !== undefined) e.level = level;
    if (flags !== undefined) e.flags = flags;
    return e;
  },
  describe(e) {
    const parts = ['log'];
    if (e.prefix !== undefined) parts.push(`prefix ${e.prefix}`);
    if (e.group !== undefined) parts.push(`group ${e.group} snaplen ${e.snaplen ?? 0} qthreshold ${e.qthreshold ?? 0}`);
    else if (e.level !== undefined) parts.push(`level ${e.level}`);
    if (e.flags) parts.push(`flags 0x${e.flags.toString(16)}`);
    return parts.join(' ');
  },
  statement(e) {
    let text = 'log';
    const json: Record<string, unknown> = {};
    if (e.prefix !== undefined) {
      text += ` prefix ${quoted(e.prefix)}`;
      json.prefix = e.prefix;
    }
    if (e.group !== undefined) {
      text += ` group ${e.group}`;
      json.group = e.group;
      // present whenever the rule gave one, 0 included (the kernel's NF_LOG_F_COPYLEN), and printed then as nft does
      if (e.snaplen !== undefined) {
        text += ` snaplen ${e.snaplen}`;
        json.snaplen = e.snaplen;
      }
      if (e.qthreshold !== undefined) {
        text += ` queue-threshold ${e.qthreshold}`;
        json['queue-threshold'] = e.qthreshold;
      }
    } else if (e.level !== undefined && e.level !== C.NFT_LOGLEVEL_WARNING) {
      const name = LOG_LEVEL_NAMES[e.level];
      if (name === undefined) return undefined;
      text += ` level ${name}`;
      json.level = name;
    }
    if (e.flags) {
      const f = flagsPrinted(e.flags);
      if (!f) return undefined;
      text += f.text;
      json.flags = f.json.length === 1 ? f.json[0] : f.json;
    }
    const problem = e.prefix === undefined ? undefined : quoteProblem('log prefix', e.prefix);
    return { stmt: { text, json: { log: Object.keys(json).length ? json : null }, ...(problem && { problem }) } };
  },
};
