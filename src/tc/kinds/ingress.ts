/**
 * `ingress` (sch_ingress): the hook for filters on received packets. It
 * always sits at parent `ffff:fff1` (TC_H_INGRESS) with handle `ffff:`, has
 * no options, and tc prints `----------------` in their place.
 *
 * @module
 */
import { TC_H_INGRESS } from '../constants.js';
import type { QdiscKind } from '../types.js';

/** ingress. */
export const ingress: QdiscKind<Record<string, never>> = {
  kind: 'ingress',
  optionTypes: {},
  defaultParent: TC_H_INGRESS,
  defaultHandle: 0xffff0000,
  encodeOptions: () => [],
  decodeOptions: () => ({}),
  formatOptions: () => '---------------- ',
};

declare module '../types.js' {
  interface QdiscOptionsByKind {
    /** ingress: no options */
    ingress: Record<string, never>;
  }
}
