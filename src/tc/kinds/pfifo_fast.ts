/**
 * `pfifo_fast` (built into the kernel, sch_generic.c): the default qdisc of
 * a device with a queue. It cannot be configured; its dump is a plain
 * `struct tc_prio_qopt` (3 bands and the fixed priomap), which tc prints
 * with prio's printer (`bands 3 priomap ... multiqueue false` in JSON).
 *
 * @module
 */
import type { QdiscKind } from '../types.js';
import { decodePrioQopt, formatPrioQopt } from './prio.js';

/** pfifo_fast: decode only. */
export const pfifoFast: QdiscKind<Record<string, never>> = {
  kind: 'pfifo_fast',
  optionTypes: {},
  module: 'sch_generic (built in)',
  decodeOptions: decodePrioQopt,
  formatOptions: formatPrioQopt,
};

declare module '../types.js' {
  interface QdiscOptionsByKind {
    /** pfifo_fast: no options */
    pfifo_fast: Record<string, never>;
  }
}
