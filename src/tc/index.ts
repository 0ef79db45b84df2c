/**
 * synplug's tc layer: qdiscs, classes and filters over rtnetlink, one module
 * per kind (`kinds/`, `filters/`), handles and units in tc's notation, text
 * and JSON shaped like `tc -s` / `tc -j -s`.
 *
 * Importing it registers the tc message decoders for `synplug decode`.
 *
 * @module
 */
import './register.js';

export * from './constants.js';
export {
  parseHandle,
  parseQdiscHandle,
  parseFilterParent,
  formatHandle,
  formatQdiscHandle,
  toHandle,
  toQdiscHandle,
  parentText,
} from './handle.js';
export { encodeTcmsg, decodeTcmsg, filterInfo, type Tcmsg } from './tcmsg.js';
export { decodeQdisc, decodeClass, decodeFilter, decodeTcMessage, type DecodeOptions } from './decode.js';
export { decodeStats2, decodeLegacyStats, formatStats } from './stats.js';
export { formatQdiscText, formatClassText, formatFilterText, type FormatOptions } from './format.js';
export {
  parseRate,
  parseSize,
  parseTime,
  formatRate,
  formatSize,
  formatTime,
  calcXmitsize,
  calcXmittime,
  time2tick,
  tick2time,
} from './units.js';
export { protocolName, parseProtocol } from './proto.js';
export {
  qdiscKind,
  filterKind,
  qdiscKindNames,
  filterKindNames,
  registerQdiscKind,
  registerFilterKind,
  qdiscModule,
  filterModule,
  checkOptionKeys,
} from './registry.js';
export {
  addQdisc,
  replaceQdisc,
  changeQdisc,
  deleteQdisc,
  listQdiscs,
  eachQdisc,
} from './qdisc.js';
export {
  addClass,
  replaceClass,
  changeClass,
  deleteClass,
  listClasses,
  eachClass,
} from './class.js';
export {
  addFilter,
  replaceFilter,
  changeFilter,
  deleteFilter,
  listFilters,
  eachFilter,
} from './filter.js';
export { qdiscRequest, classRequest, filterRequest } from './request.js';
export { optionsFromWords, parseActionWords } from './words.js';
export { KindUnavailableError } from './explain.js';
export {
  plugBuffer,
  plugReleaseOne,
  plugReleaseIndefinite,
  plugSetLimit,
  plugRequest,
} from './plug-control.js';
export type {
  TcConnection,
  DeviceRef,
  KindOptions,
  QdiscSpec,
  ClassSpec,
  FilterSpec,
  PlugRef,
  ListOptions,
  TcRequest,
  EachEntry,
  TcOp,
} from './types.js';
export type { QdiscEntry, ClassEntry, FilterEntry, TcStats, QdiscKind, FilterKind, TcHeaderInfo } from './types.js';
export type { PrioOptions } from './kinds/prio.js';
export { DEFAULT_PRIOMAP } from './kinds/prio.js';
export type { FifoOptions } from './kinds/fifo.js';
export type { PlugOptions, PlugAction } from './kinds/plug.js';
export type { HtbOptions, HtbClassOptions } from './kinds/htb.js';
export type { TbfOptions } from './kinds/tbf.js';
export type { FqCodelOptions } from './kinds/fq_codel.js';
export type { FwOptions } from './filters/fw.js';
export type { U32Options, U32Match, U32Key } from './filters/u32.js';
export { parseU32Handle, formatU32Handle } from './filters/u32.js';
export type { MatchallOptions } from './filters/matchall.js';
export {
  encodeActionList,
  decodeActionList,
  formatActionList,
  resolveActionDevices,
  nameActionDevices,
  resolveActionDeviceNames,
  actionKindsOf,
  type ActionModules,
} from './actions/list.js';
export { actionKind, actionKindNames, registerActionKind, actionModule } from './actions/registry.js';
export type { ActionSpec, MirredSpec, GactSpec, ActionEntry, ActionKind, ControlAction } from './actions/types.js';
export { u32SynMatch, type U32SynMatchOptions, type U32FilterPart, type U32SynFilters, type U32Offset } from './filters/u32.js';
export { flowerSynMatch, type FlowerOptions, type FlowerSynMatchOptions, type PortMatch } from './filters/flower.js';
