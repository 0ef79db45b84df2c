/**
 * Qdisc entries as the tc decoder lists them (src/tc/types.ts), for unit
 * tests that hand a hold an observation of the kernel: the fields a test
 * names, and `options: {}` (what the decoder gives a qdisc whose kernel
 * reply carries no options) unless it names them.
 */
import type { QdiscEntry } from '../../src/tc/types.js';

/** A qdisc entry: `o`, with `options: {}` unless given. */
export function qdiscEntry(o: Partial<QdiscEntry> & Pick<QdiscEntry, 'handle' | 'ifindex'>): QdiscEntry {
  return { options: {}, ...o };
}
