/**
 * The tc action kinds this library knows: one export per kind. A new kind
 * is one new file in this folder and one line here.
 *
 * @module
 */
export { mirred } from './mirred.js';
export { gact } from './gact.js';
