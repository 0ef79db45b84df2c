/**
 * `clsact` (sch_ingress): ingress and egress filter hooks (filter parents
 * `ingress` = ffff:fff2 and `egress` = ffff:fff3). Sits at TC_H_CLSACT
 * (the same value as TC_H_INGRESS) with handle `ffff:`, no options.
 *
 * @module
 */
import { TC_H_CLSACT } from '../constants.js';
import type { QdiscKind } from '../types.js';

/** clsact. */
export const clsact: QdiscKind<Record<string, never>> = {
  kind: 'clsact',
  optionTypes: {},
  module: 'sch_ingress',
  defaultParent: TC_H_CLSACT,
  defaultHandle: 0xffff0000,
  encodeOptions: () => [],
  decodeOptions: () => ({}),
};

declare module '../types.js' {
  interface QdiscOptionsByKind {
    /** clsact: no options */
    clsact: Record<string, never>;
  }
}
