/**
 * Wire constants of tc actions, named as in the kernel's UAPI headers:
 * linux/pkt_cls.h (the TCA_ACT_* attributes of one action, the TC_ACT_*
 * verdicts, `struct tcf_t`), linux/tc_act/tc_mirred.h and
 * linux/tc_act/tc_gact.h.
 *
 * @module
 */

/* enum { TCA_ACT_UNSPEC, TCA_ACT_KIND, ... } (linux/pkt_cls.h): the attributes of one action in a filter's TCA_<KIND>_ACT list */
/** TCA_ACT_KIND: the action's kind, a string ("mirred", "gact") */
export const TCA_ACT_KIND = 1;
/** TCA_ACT_OPTIONS: the kind's own nested attributes */
export const TCA_ACT_OPTIONS = 2;
/** TCA_ACT_INDEX: u32 index (sent by the kernel in brief dumps) */
export const TCA_ACT_INDEX = 3;
/** TCA_ACT_STATS: nested gnet_stats (TCA_STATS_BASIC, TCA_STATS_QUEUE, ...) */
export const TCA_ACT_STATS = 4;
/** TCA_ACT_PAD */
export const TCA_ACT_PAD = 5;
/** TCA_ACT_COOKIE: opaque bytes set by the user */
export const TCA_ACT_COOKIE = 6;
/** TCA_ACT_FLAGS: `struct nla_bitfield32` of TCA_ACT_FLAGS_* */
export const TCA_ACT_FLAGS = 7;
/** TCA_ACT_HW_STATS: `struct nla_bitfield32` of TCA_ACT_HW_STATS_* */
export const TCA_ACT_HW_STATS = 8;
/** TCA_ACT_USED_HW_STATS */
export const TCA_ACT_USED_HW_STATS = 9;
/** TCA_ACT_IN_HW_COUNT: u32 */
export const TCA_ACT_IN_HW_COUNT = 10;
/** highest TCA_ACT_* this library reads */
export const TCA_ACT_MAX = 10;
/** TCA_ACT_MAX_PRIO: an action list holds at most 32 actions, numbered 1..32 */
export const TCA_ACT_MAX_PRIO = 32;
/** TCA_ACT_FLAGS_NO_PERCPU_STATS (linux/pkt_cls.h) */
export const TCA_ACT_FLAGS_NO_PERCPU_STATS = 1 << 0;

/* Verdicts (linux/pkt_cls.h): tc_gen's `action` field */
/** TC_ACT_UNSPEC (-1): tc's "continue" */
export const TC_ACT_UNSPEC = -1;
/** TC_ACT_OK: tc's "pass" / "ok" */
export const TC_ACT_OK = 0;
/** TC_ACT_RECLASSIFY */
export const TC_ACT_RECLASSIFY = 1;
/** TC_ACT_SHOT: tc's "drop" / "shot" */
export const TC_ACT_SHOT = 2;
/** TC_ACT_PIPE: go on with the next action (mirror's default) */
export const TC_ACT_PIPE = 3;
/** TC_ACT_STOLEN: the packet was consumed (redirect's verdict) */
export const TC_ACT_STOLEN = 4;
/** TC_ACT_QUEUED */
export const TC_ACT_QUEUED = 5;
/** TC_ACT_REPEAT */
export const TC_ACT_REPEAT = 6;
/** TC_ACT_REDIRECT */
export const TC_ACT_REDIRECT = 7;
/** TC_ACT_TRAP */
export const TC_ACT_TRAP = 8;
/** __TC_ACT_EXT_SHIFT: extended verdicts keep their opcode in the top bits */
export const __TC_ACT_EXT_SHIFT = 28;
/** TC_ACT_EXT_VAL_MASK: the value part of an extended verdict */
export const TC_ACT_EXT_VAL_MASK = (1 << __TC_ACT_EXT_SHIFT) - 1;
/** TC_ACT_JUMP: `__TC_ACT_EXT(1)` */
export const TC_ACT_JUMP = 1 << __TC_ACT_EXT_SHIFT;
/** TC_ACT_GOTO_CHAIN: `__TC_ACT_EXT(2)` */
export const TC_ACT_GOTO_CHAIN = 2 << __TC_ACT_EXT_SHIFT;

/* linux/tc_act/tc_mirred.h */
/** TCA_MIRRED_TM: `struct tcf_t` */
export const TCA_MIRRED_TM = 1;
/** TCA_MIRRED_PARMS: `struct tc_mirred` */
export const TCA_MIRRED_PARMS = 2;
/** TCA_MIRRED_PAD */
export const TCA_MIRRED_PAD = 3;
/** TCA_EGRESS_REDIR: redirect to the device's egress */
export const TCA_EGRESS_REDIR = 1;
/** TCA_EGRESS_MIRROR: copy to the device's egress */
export const TCA_EGRESS_MIRROR = 2;
/** TCA_INGRESS_REDIR: redirect to the device's ingress */
export const TCA_INGRESS_REDIR = 3;
/** TCA_INGRESS_MIRROR: copy to the device's ingress */
export const TCA_INGRESS_MIRROR = 4;

/* linux/tc_act/tc_gact.h */
/** TCA_GACT_TM: `struct tcf_t` */
export const TCA_GACT_TM = 1;
/** TCA_GACT_PARMS: `struct tc_gact` */
export const TCA_GACT_PARMS = 2;
/** TCA_GACT_PROB: `struct tc_gact_p` */
export const TCA_GACT_PROB = 3;
/** TCA_GACT_PAD */
export const TCA_GACT_PAD = 4;
/** PGACT_NONE: no random verdict */
export const PGACT_NONE = 0;
/** PGACT_NETRAND: random with probability val/10000 */
export const PGACT_NETRAND = 1;
/** PGACT_DETERM: every val-th packet */
export const PGACT_DETERM = 2;

/**
 * sizeof(tc_gen) (linux/pkt_cls.h):
 * ```c
 * #define tc_gen \
 *   __u32 index;   // action instance index
 *   __u32 capab;
 *   int   action;  // TC_ACT_* verdict
 *   int   refcnt;
 *   int   bindcnt
 * ```
 */
export const TC_GEN_LEN = 20;

/** USER_HZ: `struct tcf_t` times are clock_t ticks (jiffies_to_clock_t); tc divides by sysconf(_SC_CLK_TCK), 100 on Linux. */
export const USER_HZ = 100;
