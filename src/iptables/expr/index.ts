/**
 * The expressions synplug knows, one line each. An expression not listed
 * here decodes as a {@link GenericExpr}.
 *
 * @module
 */
import { registerExpr, type GenericExpr } from './registry.js';
import { metaExpr, type MetaExpr } from './meta.js';
import { payloadExpr, type PayloadExpr } from './payload.js';
import { cmpExpr, type CmpExpr } from './cmp.js';
import { bitwiseExpr, type BitwiseExpr } from './bitwise.js';
import { immediateExpr, type ImmediateExpr } from './immediate.js';
import { counterExpr, type CounterExpr } from './counter.js';
import { lookupExpr, type LookupExpr } from './lookup.js';

registerExpr(metaExpr);
registerExpr(payloadExpr);
registerExpr(cmpExpr);
registerExpr(bitwiseExpr);
registerExpr(immediateExpr);
registerExpr(counterExpr);
registerExpr(lookupExpr);

/** Any decoded expression: one of the known kinds, or the generic form. */
export type Expr = MetaExpr | PayloadExpr | CmpExpr | BitwiseExpr | ImmediateExpr | CounterExpr | LookupExpr | GenericExpr;

export type { MetaExpr, PayloadExpr, CmpExpr, BitwiseExpr, ImmediateExpr, CounterExpr, LookupExpr, GenericExpr };
export { metaExpr, payloadExpr, cmpExpr, bitwiseExpr, immediateExpr, counterExpr, lookupExpr };
export { registerExpr, exprCodec, registeredExprs, encodeExpr, encodeExprs, decodeExpr, decodeExprs, describeExpr } from './registry.js';
export type { ExprBase, ExprCodec, RawAttribute } from './registry.js';
