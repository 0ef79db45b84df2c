/**
 * The `objref` expression (net/netfilter/nft_objref.c): apply a named
 * stateful object (counter, quota, limit...), named directly or chosen by a
 * key through an object map. nft's `counter name "c1"`, `quota name "q1"`,
 * `limit name "l1"`, `counter name ip saddr map @cm`.
 *
 * ```c
 * // nf_tables.h: enum nft_objref_attributes
 * NFTA_OBJREF_IMM_TYPE   // NLA_U32 (big-endian): NFT_OBJECT_* of the named object
 * NFTA_OBJREF_IMM_NAME   // NLA_STRING: the object's name
 * NFTA_OBJREF_SET_SREG   // NLA_U32: register holding the key (object maps)
 * NFTA_OBJREF_SET_NAME   // NLA_STRING: the object map
 * NFTA_OBJREF_SET_ID     // NLA_U32: the map's NFTA_SET_ID in the same batch
 * ```
 * Counters, quotas, limits, ct helpers, ct timeouts, ct expectations and
 * synproxies print as nft does; other object types print raw.
 *
 * @module
 */
import { NetlinkDecodeError, UsageError } from '../../netlink/errors.js';
import * as C from '../constants.js';
import { be32, checkU32, name as nameAttr } from '../data.js';
import { quoted } from '../print.js';
import type { ExprCodec } from './registry.js';

/** `objref`: `type` + `object` (a named object), or `sreg` + `set` (an object map). */
export interface ObjrefExpr {
  name: 'objref';
  /** NFTA_OBJREF_IMM_TYPE (NFT_OBJECT_*) */
  type?: number;
  /** NFTA_OBJREF_IMM_NAME */
  object?: string;
  /** NFTA_OBJREF_SET_SREG */
  sreg?: number;
  /** NFTA_OBJREF_SET_NAME */
  set?: string;
  /** NFTA_OBJREF_SET_ID */
  setId?: number;
}

/**
 * How nft names a reference to an object, by NFT_OBJECT_*: the words before
 * the name or map in text (`counter name "c1"`; an assigned conntrack object
 * is `set`: `ct timeout set "t1"`) and the JSON key (`{ "ct timeout": "t1" }`).
 */
const PRINTED: Readonly<Record<number, { text: string; key: string }>> = {
  [C.NFT_OBJECT_COUNTER]: { text: 'counter name', key: 'counter' },
  [C.NFT_OBJECT_QUOTA]: { text: 'quota name', key: 'quota' },
  [C.NFT_OBJECT_LIMIT]: { text: 'limit name', key: 'limit' },
  [C.NFT_OBJECT_CT_HELPER]: { text: 'ct helper set', key: 'ct helper' },
  [C.NFT_OBJECT_CT_TIMEOUT]: { text: 'ct timeout set', key: 'ct timeout' },
  [C.NFT_OBJECT_CT_EXPECT]: { text: 'ct expectation set', key: 'ct expectation' },
  [C.NFT_OBJECT_SYNPROXY]: { text: 'synproxy name', key: 'synproxy' },
};

/** Codec of `objref`. */
export const objrefExpr: ExprCodec<ObjrefExpr> = {
  name: 'objref',
  encode(e) {
    const imm = e.type !== undefined || e.object !== undefined;
    const map = e.sreg !== undefined || e.set !== undefined;
    if (imm === map) throw new UsageError('objref expression: give either type and object, or sreg and set');
    if (imm) {
      if (e.type === undefined || e.object === undefined) throw new UsageError('objref expression: type and object go together');
      return [be32(C.NFTA_OBJREF_IMM_TYPE, checkU32(e.type, 'objref type')), nameAttr(C.NFTA_OBJREF_IMM_NAME, e.object)];
    }
    if (e.sreg === undefined || e.set === undefined) throw new UsageError('objref expression: sreg and set go together');
    const out = [be32(C.NFTA_OBJREF_SET_SREG, checkU32(e.sreg, 'objref sreg')), nameAttr(C.NFTA_OBJREF_SET_NAME, e.set)];
    if (e.setId !== undefined) out.push(be32(C.NFTA_OBJREF_SET_ID, checkU32(e.setId, 'objref setId')));
    return out;
  },
  decode(l) {
    const e: ObjrefExpr = { name: 'objref' };
    const type = l.u32be(C.NFTA_OBJREF_IMM_TYPE);
    const object = l.str(C.NFTA_OBJREF_IMM_NAME);
    const sreg = l.u32be(C.NFTA_OBJREF_SET_SREG);
    const set = l.str(C.NFTA_OBJREF_SET_NAME);
    const setId = l.u32be(C.NFTA_OBJREF_SET_ID);
    if (type !== undefined) e.type = type;
    if (object !== undefined) e.object = object;
    if (sreg !== undefined) e.sreg = sreg;
    if (set !== undefined) e.set = set;
    if (setId !== undefined) e.setId = setId;
    if ((e.object === undefined) === (e.set === undefined))
      throw new NetlinkDecodeError('objref with neither or both of NFTA_OBJREF_IMM_NAME and NFTA_OBJREF_SET_NAME', l.offset);
    return e;
  },
  describe(e) {
    return e.object !== undefined ? `objref type ${e.type ?? '?'} name ${e.object}` : `objref sreg ${e.sreg ?? '?'} set ${e.set}`;
  },
  statement(e, ctx) {
    if (e.object !== undefined) {
      const t = e.type !== undefined ? PRINTED[e.type] : undefined;
      return t ? { stmt: { text: `${t.text} ${quoted(e.object)}`, json: { [t.key]: e.object } } } : undefined;
    }
    if (e.sreg === undefined || e.set === undefined) return undefined;
    const r = ctx.reg(e.sreg);
    if (r?.k !== 'field') return undefined;
    const s = ctx.set(e.set, r.field.type);
    const t = s?.objType !== undefined ? PRINTED[s.objType] : undefined;
    if (!s || !t) return undefined;
    return {
      stmt: { text: `${t.text} ${r.field.text} map ${s.text}`, json: { [t.key]: { map: { key: r.field.json, data: s.json } } } },
      consumes: [e.sreg],
      needsL3: r.field.l3,
      needsL4: r.field.l4,
    };
  },
};
