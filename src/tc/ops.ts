/**
 * The tc operations, by their former module: the qdisc, class and filter
 * operations now live in qdisc.ts, class.ts and filter.ts, the request
 * builders in request.ts, the error explanations in explain.ts and the plug
 * verbs in kinds/plug.ts. This module re-exports them for the importers
 * that still name it.
 *
 * @deprecated import from `src/tc/index.ts` (or the module that holds the function)
 * @module
 */
export {
  addQdisc, replaceQdisc, changeQdisc, deleteQdisc, listQdiscs, eachQdisc,
} from './qdisc.js';
export {
  addClass, replaceClass, changeClass, deleteClass, listClasses, eachClass,
} from './class.js';
export {
  addFilter, replaceFilter, changeFilter, deleteFilter, listFilters, eachFilter,
} from './filter.js';
export { qdiscRequest, classRequest, filterRequest } from './request.js';
export {
  plugBuffer, plugReleaseOne, plugReleaseIndefinite, plugSetLimit, plugRequest,
} from './kinds/plug.js';
export type {
  TcConnection, DeviceRef, KindOptions, QdiscSpec, ClassSpec, FilterSpec, PlugRef, ListOptions, TcRequest, EachEntry,
} from './types.js';
