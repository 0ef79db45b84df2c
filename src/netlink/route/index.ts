/**
 * rtnetlink outside tc: links and addresses. Importing this module also
 * registers the RTM_*LINK and RTM_*ADDR body decoders used by `synplug decode`.
 *
 * @module
 */
export * from './constants.js';
export * from './link.js';
export * from './addr.js';
export * from './linkinfo.js';
