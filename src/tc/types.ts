/**
 * Shapes of decoded tc objects and of the kind descriptors.
 *
 * Decoded entries mirror the items of `tc -j -s qdisc|class|filter show`
 * (iproute2): same field names, same text for handles, numbers in the
 * kernel's units (bytes, bytes per second, packets, microseconds).
 *
 * @module
 */
import type { NetlinkConnection } from '../netlink/connection.js';

/**
 * Counters from TCA_STATS2 (`struct gnet_stats_basic`, `struct
 * gnet_stats_queue`, `struct gnet_stats_rate_est[64]` in linux/gen_stats.h)
 * or, when the kernel sent only that, the legacy TCA_STATS (`struct
 * tc_stats` in linux/pkt_sched.h, which has no `requeues`).
 */
export interface TcStats {
  /** bytes sent (gnet_stats_basic.bytes) */
  bytes?: number;
  /** packets sent (gnet_stats_basic.packets, or TCA_STATS_PKT64 when present) */
  packets?: number;
  /** packets dropped (gnet_stats_queue.drops) */
  drops?: number;
  /** over-limit events (gnet_stats_queue.overlimits) */
  overlimits?: number;
  /** requeues (gnet_stats_queue.requeues); absent with legacy TCA_STATS only */
  requeues?: number;
  /** bytes queued (gnet_stats_queue.backlog) */
  backlog?: number;
  /** packets queued (gnet_stats_queue.qlen) */
  qlen?: number;
  /** rate estimator, bytes per second (TCA_STATS_RATE_EST64/RATE_EST bps); only when an estimator runs */
  rate?: number;
  /** rate estimator, packets per second */
  pps?: number;
}

/**
 * What the decoded qdisc, class and filter entries share: the device (tcmsg
 * `tcm_ifindex`), whether tcm_parent is the root, the counters, and flat
 * fields beyond the declared ones. Not exported: the entry types are.
 */
interface TcEntryBase extends TcStats {
  /** device name, when the lister knows it */
  dev?: string;
  /** tcm_ifindex */
  ifindex: number;
  /** tcm_parent is TC_H_ROOT */
  root?: true;
  /** kind-specific extended stats (TCA_STATS_APP / TCA_XSTATS) and other fields tc -j prints appear flat */
  [field: string]: unknown;
}

/** One qdisc, as `tc -j -s qdisc show` prints it, plus `ifindex` and `dev`. */
export interface QdiscEntry extends TcEntryBase {
  /** TCA_KIND, e.g. `"prio"`; absent only in requests that carry none (delete, dump) */
  kind?: string;
  /** tcm_handle as tc prints a qdisc handle: the major only, `"1:"` (`"0:"` for noqueue) */
  handle: string;
  /** tcm_parent as tc prints it (`"1:4"`, `"ffff:fff1"`), when not root and not 0 */
  parent?: string;
  /** tcm_info (reference count), printed by tc when it is not 1 */
  refcnt?: number;
  /** TCA_HW_OFFLOAD was 1 */
  offloaded?: true;
  /** TCA_INGRESS_BLOCK when non-zero */
  ingress_block?: number;
  /** TCA_EGRESS_BLOCK when non-zero */
  egress_block?: number;
  /**
   * Kind-specific options decoded from TCA_OPTIONS (field names of tc -j);
   * `{}` when the kernel sent none; `{ raw: "<hex>" }` for a kind this
   * library does not know.
   */
  options: Record<string, unknown>;
}

/** One class, as `tc -s class show` prints it (field names of newer iproute2's `-j`). */
export interface ClassEntry extends TcEntryBase {
  /** TCA_KIND of the owning qdisc, e.g. `"htb"` (tc -j calls it "class") */
  kind?: string;
  /** class id, `"1:20"` */
  handle: string;
  /** parent class id (`"1:1"`) or qdisc (`"1:"`) */
  parent?: string;
  /** handle of the qdisc attached to this class (tcm_info), `"20:"`, when there is one */
  leaf?: string;
  /** class options from TCA_OPTIONS (e.g. htb rate, ceil, burst) */
  options: Record<string, unknown>;
}

/** One filter, as `tc -j filter show` prints it, plus `ifindex`, `dev` and `handle`. */
export interface FilterEntry extends TcEntryBase {
  /** filter block index when tcm_ifindex is TCM_IFINDEX_MAGIC_BLOCK */
  block?: number;
  /** clsact ingress hook (parent ffff:fff2) */
  ingress?: true;
  /** clsact egress hook (parent ffff:fff3) */
  egress?: true;
  /** parent qdisc or class, `"1:"` */
  parent?: string;
  /** protocol name as tc prints it (`"ip"`, `"all"`, `"[1234]"`), from TC_H_MIN(tcm_info) in network order */
  protocol?: string;
  /** priority (`pref`), TC_H_MAJ(tcm_info) >> 16, when non-zero */
  pref?: number;
  /** TCA_KIND, e.g. `"fw"`, `"u32"` */
  kind?: string;
  /** TCA_CHAIN */
  chain?: number;
  /** tcm_handle in the kind's notation (`"0x1"` for fw, `"800::800"` for u32), when non-zero */
  handle?: string;
  /** filter options from TCA_OPTIONS (tc -j field names), absent when the kernel sent none */
  options?: Record<string, unknown>;
}

/**
 * The tcmsg fields a kind's decoder may need (one object per decoded message).
 */
export interface TcHeaderInfo {
  /** tcm_handle */
  handle: number;
  /** tcm_parent */
  parent: number;
  /** tcm_info */
  info: number;
  /** true for a class message (RTM_*TCLASS) */
  isClass?: boolean;
  /** false when the caller asked for no counters (tc without -s): kinds leave out their own stats (e.g. actions' times and counters) */
  stats?: boolean;
}

/**
 * The JavaScript type an option value must have, as the registry checks it
 * before a kind encodes the options (`checkOptionKeys`): `'number'`,
 * `'string'`, `'boolean'`, `'number|string'` (a number or tc text such as
 * "10mbit"), `'array'` (a list; its items are the kind's to check),
 * `'object'` (a plain object).
 */
export type OptionType = 'number' | 'string' | 'boolean' | 'number|string' | 'array' | 'object';

/** One {@link OptionType} for every key of an options type (all of them, optional ones included). */
export type OptionTypes<O> = { readonly [K in keyof O]-?: OptionType };

/**
 * A qdisc kind: one module under `src/tc/kinds/`, one line in
 * `src/tc/kinds/index.ts`. Everything is optional but `kind`.
 *
 * Decoders get the payload of one attribute and the absolute offset of its
 * first byte (for NetlinkDecodeError offsets); they throw only
 * NetlinkDecodeError.
 */
export interface QdiscKind<Options = Record<string, unknown>, ClassOptions = Record<string, unknown>> {
  /** TCA_KIND string */
  readonly kind: string;
  /** kernel module that provides it, for error messages (default `sch_<kind>`) */
  readonly module?: string;
  /** a qdisc that has classes (htb, prio...) */
  readonly classful?: boolean;
  /** parent used when the caller gives none (ingress/clsact: TC_H_INGRESS); otherwise the caller must give one */
  readonly defaultParent?: number;
  /** handle used when the caller gives none (ingress/clsact: ffff:) */
  readonly defaultHandle?: number;
  /** every key an options object may have; a key outside it is a UsageError (see `checkOptionKeys` in registry.ts); default the keys of `optionTypes` */
  readonly optionKeys?: readonly string[];
  /** every key a class options object may have (classful kinds); default the keys of `classOptionTypes` */
  readonly classOptionKeys?: readonly string[];
  /** the JavaScript type of each option, checked before encoding (a wrong one is a UsageError); one entry per key of `Options` */
  readonly optionTypes?: OptionTypes<Options>;
  /** the same for class options */
  readonly classOptionTypes?: OptionTypes<ClassOptions>;
  /**
   * Options -> attributes to append after TCA_KIND (usually one TCA_OPTIONS).
   * @throws {UsageError} invalid options
   */
  encodeOptions?(options: Options): Buffer[];
  /**
   * TCA_OPTIONS payload `buf[start, end)` -> tc -j `options` object. `base` is
   * the absolute offset of `buf[0]` (byte i sits at `base + i` in the datagram),
   * for NetlinkDecodeError offsets. (Positions instead of a sub-buffer: a dump
   * of 30,000 classes would otherwise create 60,000 views.)
   */
  decodeOptions?(buf: Buffer, start: number, end: number, base: number, info: TcHeaderInfo): Record<string, unknown>;
  /** Class options -> attributes (for `tc class add ... <kind> ...`). @throws {UsageError} */
  encodeClassOptions?(options: ClassOptions): Buffer[];
  /** Class TCA_OPTIONS payload `buf[start, end)` -> object (same conventions as decodeOptions). */
  decodeClassOptions?(buf: Buffer, start: number, end: number, base: number, info: TcHeaderInfo): Record<string, unknown>;
  /**
   * TCA_STATS_APP / TCA_XSTATS payload -> extra stats, written flat into
   * `out` (the entry), as tc -j prints them.
   */
  decodeXstats?(buf: Buffer, start: number, end: number, base: number, info: TcHeaderInfo, out: Record<string, unknown>): void;
  /** Decoded options -> tc's text (`"bands 4 priomap 1 2 ..."`), without a trailing newline. */
  formatOptions?(options: Record<string, unknown>, details?: boolean): string;
  /** Decoded class options -> tc's text. */
  formatClassOptions?(options: Record<string, unknown>, details?: boolean): string;
  /** Extra stats -> tc's text, exactly as its print_xstats writes it (tc adds one newline after), or '' */
  formatXstats?(entry: Record<string, unknown>, isClass: boolean): string;
}

/**
 * A filter (classifier) kind: one module under `src/tc/filters/`, one line
 * in `src/tc/filters/index.ts`.
 */
export interface FilterKind<Options = Record<string, unknown>> {
  /** TCA_KIND string */
  readonly kind: string;
  /** kernel module (default `cls_<kind>`) */
  readonly module?: string;
  /** every key an options object may have; a key outside it is a UsageError (see `checkOptionKeys` in registry.ts); default the keys of `optionTypes` */
  readonly optionKeys?: readonly string[];
  /** the JavaScript type of each option, checked before encoding (a wrong one is a UsageError); one entry per key of `Options` */
  readonly optionTypes?: OptionTypes<Options>;
  /** Options -> attributes after TCA_KIND (usually one TCA_OPTIONS). @throws {UsageError} */
  encodeOptions?(options: Options): Buffer[];
  /**
   * TCA_OPTIONS payload `buf[start, end)` -> tc -j `options` object (may
   * include the handle, as tc prints it); `base` is the absolute offset of `buf[0]`.
   */
  decodeOptions?(buf: Buffer, start: number, end: number, base: number, info: TcHeaderInfo): Record<string, unknown>;
  /** tcm_handle -> text (default `0x<hex>`). */
  formatHandle?(handle: number): string;
  /** handle text -> tcm_handle (default: a u32, decimal or 0x hex). @throws {UsageError} */
  parseHandle?(text: string): number;
  /** Decoded options -> tc's text (may span lines). */
  formatOptions?(options: Record<string, unknown>): string;
}

/* ------------------------------------------------------------------ */
/* Operation shapes: what the qdisc, class and filter operations take. */

/** What the tc operations need from a connection (a {@link NetlinkConnection} on NETLINK_ROUTE). */
export type TcConnection = Pick<NetlinkConnection, 'request' | 'dumpAll' | 'dumpEach'>;

/**
 * Receives each entry of a listing as its datagram is read (see
 * `eachClass`). `attempt` starts at 1; when it grows, the kernel flagged
 * the dump inconsistent (NLM_F_DUMP_INTR) and it runs again from the start:
 * drop what was kept from the earlier attempt.
 */
export type EachEntry<E> = (entry: E, attempt: number) => void;

/**
 * A device, by name (one RTM_GETLINK to resolve) or by index (no lookup
 * for changes; listings check that it exists). Both may be given only when
 * they name the same device.
 */
export interface DeviceRef {
  /** device name, e.g. "eth0" */
  dev?: string;
  /** device index (`ifi_index`, a positive C int); used as is when given without `dev` */
  ifindex?: number;
}

/** Options given as an object (the kind's options type), or as tc command-line words (`["limit", "1000"]`) read by `optionsFromWords` (words.ts). */
export type KindOptions = object | readonly string[];

/** The operations on qdiscs, classes and filters (tc's `add`, `replace`, `change`, `del`). */
export type TcOp = 'add' | 'replace' | 'change' | 'delete';

/**
 * One request ready for `conn.request`, with the `struct tcmsg` fields it
 * carries (so error paths need not read them back from the bytes).
 */
export interface TcRequest {
  /** RTM_NEWQDISC, RTM_DELTFILTER... */
  type: number;
  /** NLM_F_CREATE / NLM_F_EXCL / NLM_F_REPLACE as the operation needs (the connection adds NLM_F_REQUEST | NLM_F_ACK) */
  flags: number;
  /** `struct tcmsg`, TCA_KIND, then the kind's attributes */
  payload: Buffer[];
  /** tcm_ifindex */
  ifindex: number;
  /** tcm_handle (u32) */
  handle: number;
  /** tcm_parent (u32) */
  parent: number;
  /** tcm_info (filters: `(pref << 16) | htons(protocol)`; 0 otherwise) */
  info: number;
  /** TCA_KIND, when the request carries one */
  kind?: string;
  /**
   * The kernel module that provides `kind` (`sch_plug`, `cls_fw`), when
   * synplug knows the kind; absent for a kind synplug does not know.
   */
  module?: string;
  /** the action kinds a filter request carries, each with its module (for the error when one is missing) */
  actions?: ReadonlyArray<{ kind: string; module: string }>;
}

/**
 * The options type of each qdisc kind, by TCA_KIND. Each kind module adds
 * its own entry (`declare module '../types.js' { interface
 * QdiscOptionsByKind { htb: HtbOptions } }`), so that {@link QdiscSpec} is a
 * union discriminated by `kind`: `{ kind: 'htb', options: o }` takes an
 * `HtbOptions`. A new kind is its file and its line in kinds/index.ts.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by the kind modules (declaration merging)
export interface QdiscOptionsByKind {}
/** The class options type of each classful qdisc kind, by TCA_KIND (see {@link QdiscOptionsByKind}). */
// biome-ignore lint/suspicious/noEmptyInterface: filled by the kind modules (declaration merging)
export interface ClassOptionsByKind {}
/** The options type of each filter (classifier) kind, by TCA_KIND (see {@link QdiscOptionsByKind}). */
// biome-ignore lint/suspicious/noEmptyInterface: filled by the filter modules (declaration merging)
export interface FilterOptionsByKind {}

/**
 * The options type of kind `K` in a by-kind map: the kind's own type when
 * `K` is a kind the map lists, any object otherwise (a kind synplug does not
 * type, or a kind only known as a `string`; checked at run time).
 */
export type OptionsOf<M, K extends string> = string extends K ? object : K extends keyof M ? M[K] : object;

/** Where a qdisc goes: the fields of {@link QdiscSpec} besides kind and options. */
export interface QdiscPlace extends DeviceRef {
  /** parent: "root", "ingress", "clsact", a class id ("1:4") or a u32; defaults to the kind's (ingress/clsact) */
  parent?: string | number;
  /** the qdisc's handle, "1:"; default the kind's (ingress/clsact: ffff:) or 0 (the kernel picks one) */
  handle?: string | number;
}

/**
 * A qdisc to add, replace, change or delete: {@link QdiscPlace} plus `kind`
 * (TCA_KIND, e.g. "htb"; optional only for delete) and `options`: the
 * kind's options type ({@link QdiscOptionsByKind}, e.g. `HtbOptions`), or tc
 * words such as `["default", "10"]`. Discriminated by `kind`: the operations
 * are generic in it, so `{ kind: 'htb', options }` must have htb's options.
 */
export type QdiscSpec<K extends string = string> = QdiscPlace & {
  /** TCA_KIND, e.g. "htb"; optional only for delete */
  kind?: K;
  /** the kind's options, or tc words */
  options?: OptionsOf<QdiscOptionsByKind, K> | readonly string[];
};

/** Which class: the fields of {@link ClassSpec} besides kind and options. */
export interface ClassPlace extends DeviceRef {
  /** parent class or qdisc, "1:" or "1:1" */
  parent?: string | number;
  /** class id, "1:20" */
  classid: string | number;
}

/**
 * A class to add, replace, change or delete: {@link ClassPlace} plus
 * `kind` (the owning qdisc's, e.g. "htb"; optional only for delete) and
 * `options` ({@link ClassOptionsByKind}, e.g. `HtbClassOptions`, or tc
 * words). Discriminated by `kind` (see {@link QdiscSpec}).
 */
export type ClassSpec<K extends string = string> = ClassPlace & {
  /** TCA_KIND of the owning qdisc, e.g. "htb"; optional only for delete */
  kind?: K;
  /** the kind's class options, or tc words */
  options?: OptionsOf<ClassOptionsByKind, K> | readonly string[];
};

/** Which filter: the fields of {@link FilterSpec} besides kind and options. */
export interface FilterPlace extends DeviceRef {
  /**
   * parent: a qdisc or class ("1:", "1:4"), "root", the clsact hooks
   * "ingress" (ffff:fff2; the ingress qdisc takes it too) and "egress"
   * (ffff:fff3), "ffff:" / "ffff:fff1" for the ingress qdisc, or a u32
   */
  parent: string | number;
  /** link-layer protocol: "ip", "ipv6", "all", an ethertype number; default "all" */
  protocol?: string | number;
  /** priority (tc's pref / prio), 1..65535; 0 lets the kernel choose on add */
  pref?: number;
  /** the same as `pref` (tc accepts both words); give one, or both equal */
  prio?: number;
  /** filter handle in the kind's notation (fw: the mark, "1" or "0x1"; u32: "800::800") or a u32 */
  handle?: string | number;
  /** filter chain (TCA_CHAIN), u32 */
  chain?: number;
}

/**
 * A filter to add, replace, change or delete: {@link FilterPlace} plus
 * `kind` (the classifier, e.g. "fw", "u32"; optional only for delete) and
 * `options` ({@link FilterOptionsByKind}, e.g. `FwOptions`, `U32Options`,
 * or tc words). Discriminated by `kind` (see {@link QdiscSpec}).
 */
export type FilterSpec<K extends string = string> = FilterPlace & {
  /** TCA_KIND, the classifier, e.g. "u32"; optional only for delete */
  kind?: K;
  /** the classifier's options, or tc words */
  options?: OptionsOf<FilterOptionsByKind, K> | readonly string[];
};

/** A plug qdisc to act on: its device, parent and handle. */
export interface PlugRef extends DeviceRef {
  /** the plug's parent, e.g. "1:4" */
  parent: string | number;
  /** the plug's handle, e.g. "40:" */
  handle: string | number;
}

/** List options. */
export interface ListOptions extends DeviceRef {
  /** keep the counters (default true); false drops every stats field, as tc without -s */
  stats?: boolean;
}
