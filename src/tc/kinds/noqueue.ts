/**
 * `noqueue` (built in): the root of virtual devices (lo, veth) that send
 * at once. No options.
 *
 * @module
 */
import type { QdiscKind } from '../types.js';

/** noqueue. */
export const noqueue: QdiscKind<Record<string, never>> = {
  kind: 'noqueue',
  optionTypes: {},
  module: 'sch_generic (built in)',
  encodeOptions: () => [],
  decodeOptions: () => ({}),
};

declare module '../types.js' {
  interface QdiscOptionsByKind {
    /** noqueue: no options */
    noqueue: Record<string, never>;
  }
}
