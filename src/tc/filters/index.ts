/**
 * The filter (classifier) kinds this library knows: one export per kind.
 * A new kind is one new file in this folder and one line here.
 *
 * @module
 */
export { fw } from './fw.js';
export { u32Filter } from './u32.js';
export { matchall } from './matchall.js';
export { flower } from './flower.js';
