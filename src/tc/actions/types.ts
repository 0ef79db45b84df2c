/**
 * Shapes shared by the action kinds (one module per kind in this folder,
 * one line in `index.ts`), the action list codec (`list.ts`) and the
 * filter kinds that carry actions (u32, flower, matchall, fw).
 *
 * @module
 */

/**
 * A verdict as tc writes it: `"pass"` (`"ok"`), `"drop"` (`"shot"`),
 * `"continue"`, `"reclassify"`, `"pipe"`, `"stolen"`, `"trap"`,
 * `"goto chain N"`, `"jump N"`, or the raw TC_ACT_* number.
 */
export type ControlAction = string | number;

/**
 * One action to attach to a filter: `kind` plus the kind's fields (see
 * {@link MirredSpec}, {@link GactSpec}). Field names follow `tc -j`.
 */
export interface ActionSpec {
  /** TCA_ACT_KIND: "mirred", "gact" */
  kind: string;
  /** bind an existing action instance by its index (tc_gen.index), or give the new one this index */
  index?: number;
  [field: string]: unknown;
}

/**
 * `mirred` (act_mirred): send the packet to another device's egress or
 * ingress, redirected (the filter's packet is consumed: TC_ACT_STOLEN) or
 * mirrored (a copy; the original goes on: TC_ACT_PIPE).
 */
export interface MirredSpec extends ActionSpec {
  kind: 'mirred';
  /** the target device's hook: "egress" (TCA_EGRESS_*) or "ingress" (TCA_INGRESS_*) */
  direction: 'egress' | 'ingress';
  /** "redirect" (TCA_*_REDIR) or "mirror" (TCA_*_MIRROR); tc -j calls it mirred_action */
  mirred_action: 'redirect' | 'mirror';
  /** target device index (`struct tc_mirred` ifindex); wins over `to_dev` */
  ifindex?: number;
  /** target device name: needs {@link resolveActionDevices} (one RTM_GETLINK) before encoding, unless `ifindex` is given */
  to_dev?: string;
  /** verdict after the action: default "stolen" for redirect, "pipe" for mirror (tc's defaults) */
  control_action?: ControlAction;
}

/** `gact` (act_gact): a fixed verdict, optionally a random one. */
export interface GactSpec extends ActionSpec {
  kind: 'gact';
  /** the verdict: "pass", "drop", "continue", "reclassify", "pipe", "trap", "goto chain N", ... */
  control_action: ControlAction;
  /** TCA_GACT_PROB: `random netrand|determ VERDICT VAL` */
  prob?: {
    /** "netrand" (PGACT_NETRAND: probability val/10000) or "determ" (PGACT_DETERM: every val-th packet) */
    random_type: 'netrand' | 'determ';
    /** the verdict taken when the random draw hits */
    control_action: ControlAction;
    /** 0..10000 */
    val: number;
  };
}

/**
 * One decoded action, as an item of tc -j's `actions` array: `order`,
 * `kind`, the kind's fields (mirred: `mirred_action`, `direction`,
 * `to_dev`, `control_action`; gact: `control_action`, `prob`), `index`,
 * `ref`, `bind`, the times in seconds (`installed`, `last_used`,
 * `first_used`, `expires`, from `struct tcf_t`, only with stats), and
 * `stats` (the action's own counters). An action of a kind this library
 * does not know keeps its TCA_ACT_OPTIONS bytes as `raw` (hex).
 * synplug adds `ifindex` to mirred (the target device's index; `to_dev` is
 * `if<N>` until {@link nameActionDevices} puts the name in).
 */
export interface ActionEntry {
  /** position in the list (the nested attribute's type), 1.. */
  order: number;
  /** TCA_ACT_KIND (absent if the kernel sent none) */
  kind?: string;
  [field: string]: unknown;
}

/**
 * An action kind: one module in this folder and one export line in
 * `index.ts`. Decoders throw only NetlinkDecodeError; encoders only UsageError.
 */
export interface ActionKind<Spec extends ActionSpec = ActionSpec> {
  /** TCA_ACT_KIND string */
  readonly kind: string;
  /** kernel module (default `act_<kind>`) */
  readonly module?: string;
  /** every key a spec may have besides `kind` (others are a UsageError) */
  readonly optionKeys: readonly string[];
  /**
   * Spec -> the attributes inside TCA_ACT_OPTIONS.
   * @throws {UsageError} bad or missing fields
   */
  encode(spec: Spec): Buffer[];
  /**
   * TCA_ACT_OPTIONS payload `buf[start, end)` -> fields written into `out`
   * in tc -j's order (kind fields, index, ref, bind, and, when `stats`, the times).
   * `base` is the absolute offset of `buf[0]`.
   * @throws {NetlinkDecodeError}
   */
  decode(buf: Buffer, start: number, end: number, base: number, out: Record<string, unknown>, stats: boolean): void;
  /**
   * A decoded action -> what tc prints after `action order N: `, through the
   * newline that ends its `index ... ref ... bind ...` line.
   */
  format(a: Record<string, unknown>): string;
}
