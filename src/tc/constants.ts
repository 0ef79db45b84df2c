/**
 * Wire constants of tc messages, with their kernel names verbatim.
 *
 * Sources: linux/rtnetlink.h (`struct tcmsg`, `TCA_*`), linux/gen_stats.h
 * (`TCA_STATS_*`), linux/pkt_sched.h (`TC_H_*`, qdisc options),
 * linux/pkt_cls.h (filter options), linux/if_ether.h (`ETH_P_*`).
 *
 * @module
 */

/* ---- struct tcmsg (linux/rtnetlink.h) ----
 * struct tcmsg {
 *   unsigned char  tcm_family;
 *   unsigned char  tcm__pad1;
 *   unsigned short tcm__pad2;
 *   int            tcm_ifindex;
 *   __u32          tcm_handle;
 *   __u32          tcm_parent;   // tcm_block_index when tcm_ifindex == TCM_IFINDEX_MAGIC_BLOCK
 *   __u32          tcm_info;
 * };
 */
/** sizeof(struct tcmsg): 20 bytes. */
export const TCMSG_LEN = 20;
/** tcm_ifindex value meaning "a shared filter block", tcm_parent then holds the block index. */
export const TCM_IFINDEX_MAGIC_BLOCK = 0xffffffff;
/** AF_UNSPEC: the tcm_family tc sends. */
export const AF_UNSPEC = 0;

/* ---- enum { TCA_UNSPEC, ... } (linux/rtnetlink.h) ---- */
/** TCA_UNSPEC, from linux/rtnetlink.h */
export const TCA_UNSPEC = 0;
/** TCA_KIND, from linux/rtnetlink.h */
export const TCA_KIND = 1;
/** TCA_OPTIONS, from linux/rtnetlink.h */
export const TCA_OPTIONS = 2;
/** TCA_STATS, from linux/rtnetlink.h */
export const TCA_STATS = 3;
/** TCA_XSTATS, from linux/rtnetlink.h */
export const TCA_XSTATS = 4;
/** TCA_RATE, from linux/rtnetlink.h */
export const TCA_RATE = 5;
/** TCA_FCNT, from linux/rtnetlink.h */
export const TCA_FCNT = 6;
/** TCA_STATS2, from linux/rtnetlink.h */
export const TCA_STATS2 = 7;
/** TCA_STAB, from linux/rtnetlink.h */
export const TCA_STAB = 8;
/** TCA_PAD, from linux/rtnetlink.h */
export const TCA_PAD = 9;
/** TCA_DUMP_INVISIBLE, from linux/rtnetlink.h */
export const TCA_DUMP_INVISIBLE = 10;
/** TCA_CHAIN, from linux/rtnetlink.h */
export const TCA_CHAIN = 11;
/** TCA_HW_OFFLOAD, from linux/rtnetlink.h */
export const TCA_HW_OFFLOAD = 12;
/** TCA_INGRESS_BLOCK, from linux/rtnetlink.h */
export const TCA_INGRESS_BLOCK = 13;
/** TCA_EGRESS_BLOCK, from linux/rtnetlink.h */
export const TCA_EGRESS_BLOCK = 14;
/** TCA_DUMP_FLAGS, from linux/rtnetlink.h */
export const TCA_DUMP_FLAGS = 15;
/** TCA_EXT_WARN_MSG, from linux/rtnetlink.h */
export const TCA_EXT_WARN_MSG = 16;
/** TCA_MAX, from linux/rtnetlink.h */
export const TCA_MAX = 16;

/* ---- enum { TCA_STATS_UNSPEC, ... } (linux/gen_stats.h) ---- */
/** TCA_STATS_UNSPEC, from linux/gen_stats.h */
export const TCA_STATS_UNSPEC = 0;
/** TCA_STATS_BASIC, from linux/gen_stats.h */
export const TCA_STATS_BASIC = 1;
/** TCA_STATS_RATE_EST, from linux/gen_stats.h */
export const TCA_STATS_RATE_EST = 2;
/** TCA_STATS_QUEUE, from linux/gen_stats.h */
export const TCA_STATS_QUEUE = 3;
/** TCA_STATS_APP, from linux/gen_stats.h */
export const TCA_STATS_APP = 4;
/** TCA_STATS_RATE_EST64, from linux/gen_stats.h */
export const TCA_STATS_RATE_EST64 = 5;
/** TCA_STATS_PAD, from linux/gen_stats.h */
export const TCA_STATS_PAD = 6;
/** TCA_STATS_BASIC_HW, from linux/gen_stats.h */
export const TCA_STATS_BASIC_HW = 7;
/** TCA_STATS_PKT64, from linux/gen_stats.h */
export const TCA_STATS_PKT64 = 8;
/** TCA_STATS_MAX, from linux/gen_stats.h */
export const TCA_STATS_MAX = 8;

/* ---- handles (linux/pkt_sched.h) ---- */
/** TC_H_MAJ_MASK */
export const TC_H_MAJ_MASK = 0xffff0000;
/** TC_H_MIN_MASK */
export const TC_H_MIN_MASK = 0x0000ffff;
/** TC_H_UNSPEC: no handle; tc prints it "none" */
export const TC_H_UNSPEC = 0;
/** TC_H_ROOT: the root of the egress tree; tc prints it "root" */
export const TC_H_ROOT = 0xffffffff;
/** TC_H_INGRESS: parent of the ingress qdisc */
export const TC_H_INGRESS = 0xfffffff1;
/** TC_H_CLSACT: same value as TC_H_INGRESS (pkt_sched.h `#define TC_H_CLSACT TC_H_INGRESS`) */
export const TC_H_CLSACT = TC_H_INGRESS;
/** TC_H_MIN_PRIORITY */
export const TC_H_MIN_PRIORITY = 0xffe0;
/** TC_H_MIN_INGRESS: minor of the clsact ingress hook (parent ffff:fff2) */
export const TC_H_MIN_INGRESS = 0xfff2;
/** TC_H_MIN_EGRESS: minor of the clsact egress hook (parent ffff:fff3) */
export const TC_H_MIN_EGRESS = 0xfff3;

/** TC_H_MAJ(h) */
export const TC_H_MAJ = (h: number): number => (h & TC_H_MAJ_MASK) >>> 0;
/** TC_H_MIN(h) */
export const TC_H_MIN = (h: number): number => h & TC_H_MIN_MASK;
/** TC_H_MAKE(maj, min) */
export const TC_H_MAKE = (maj: number, min: number): number => ((maj & TC_H_MAJ_MASK) | (min & TC_H_MIN_MASK)) >>> 0;

/* ---- struct tc_ratespec (linux/pkt_sched.h) ----
 * struct tc_ratespec {
 *   unsigned char  cell_log;
 *   __u8           linklayer;  // lower 4 bits
 *   unsigned short overhead;
 *   short          cell_align;
 *   unsigned short mpu;
 *   __u32          rate;       // bytes per second
 * };
 */
/** sizeof(struct tc_ratespec): 12 bytes */
export const TC_RATESPEC_LEN = 12;
/** TC_LINKLAYER_UNAWARE, from linux/pkt_sched.h */
export const TC_LINKLAYER_UNAWARE = 0;
/** TC_LINKLAYER_ETHERNET, from linux/pkt_sched.h */
export const TC_LINKLAYER_ETHERNET = 1;
/** TC_LINKLAYER_ATM, from linux/pkt_sched.h */
export const TC_LINKLAYER_ATM = 2;
/** TC_LINKLAYER_MASK, from linux/pkt_sched.h */
export const TC_LINKLAYER_MASK = 0x0f;
/** TC_RTAB_SIZE: rate tables are 256 u32 */
export const TC_RTAB_SIZE = 1024;

/** TC_PRIO_MAX: priomap has TC_PRIO_MAX + 1 = 16 entries */
export const TC_PRIO_MAX = 15;

/* ---- prio: enum { TCA_PRIO_UNSPEC, TCA_PRIO_MQ } (pkt_sched.h of iproute2 / older kernels) ---- */
/** TCA_PRIO_UNSPEC, from pkt_sched.h of iproute2 (removed from the kernel's UAPI) */
export const TCA_PRIO_UNSPEC = 0;
/** TCA_PRIO_MQ, from pkt_sched.h of iproute2 (removed from the kernel's UAPI) */
export const TCA_PRIO_MQ = 1;

/* ---- plug (linux/pkt_sched.h) ---- */
/** TCQ_PLUG_BUFFER, from linux/pkt_sched.h */
export const TCQ_PLUG_BUFFER = 0;
/** TCQ_PLUG_RELEASE_ONE, from linux/pkt_sched.h */
export const TCQ_PLUG_RELEASE_ONE = 1;
/** TCQ_PLUG_RELEASE_INDEFINITE, from linux/pkt_sched.h */
export const TCQ_PLUG_RELEASE_INDEFINITE = 2;
/** TCQ_PLUG_LIMIT, from linux/pkt_sched.h */
export const TCQ_PLUG_LIMIT = 3;

/* ---- tbf: enum { TCA_TBF_UNSPEC, ... } ---- */
/** TCA_TBF_UNSPEC, from linux/pkt_sched.h (tbf) */
export const TCA_TBF_UNSPEC = 0;
/** TCA_TBF_PARMS, from linux/pkt_sched.h (tbf) */
export const TCA_TBF_PARMS = 1;
/** TCA_TBF_RTAB, from linux/pkt_sched.h (tbf) */
export const TCA_TBF_RTAB = 2;
/** TCA_TBF_PTAB, from linux/pkt_sched.h (tbf) */
export const TCA_TBF_PTAB = 3;
/** TCA_TBF_RATE64, from linux/pkt_sched.h (tbf) */
export const TCA_TBF_RATE64 = 4;
/** TCA_TBF_PRATE64, from linux/pkt_sched.h (tbf) */
export const TCA_TBF_PRATE64 = 5;
/** TCA_TBF_BURST, from linux/pkt_sched.h (tbf) */
export const TCA_TBF_BURST = 6;
/** TCA_TBF_PBURST, from linux/pkt_sched.h (tbf) */
export const TCA_TBF_PBURST = 7;
/** TCA_TBF_PAD, from linux/pkt_sched.h (tbf) */
export const TCA_TBF_PAD = 8;

/* ---- htb: enum { TCA_HTB_UNSPEC, ... } ---- */
/** TCA_HTB_UNSPEC, from linux/pkt_sched.h (htb) */
export const TCA_HTB_UNSPEC = 0;
/** TCA_HTB_PARMS, from linux/pkt_sched.h (htb) */
export const TCA_HTB_PARMS = 1;
/** TCA_HTB_INIT, from linux/pkt_sched.h (htb) */
export const TCA_HTB_INIT = 2;
/** TCA_HTB_CTAB, from linux/pkt_sched.h (htb) */
export const TCA_HTB_CTAB = 3;
/** TCA_HTB_RTAB, from linux/pkt_sched.h (htb) */
export const TCA_HTB_RTAB = 4;
/** TCA_HTB_DIRECT_QLEN, from linux/pkt_sched.h (htb) */
export const TCA_HTB_DIRECT_QLEN = 5;
/** TCA_HTB_RATE64, from linux/pkt_sched.h (htb) */
export const TCA_HTB_RATE64 = 6;
/** TCA_HTB_CEIL64, from linux/pkt_sched.h (htb) */
export const TCA_HTB_CEIL64 = 7;
/** TCA_HTB_PAD, from linux/pkt_sched.h (htb) */
export const TCA_HTB_PAD = 8;
/** TCA_HTB_OFFLOAD, from linux/pkt_sched.h (htb) */
export const TCA_HTB_OFFLOAD = 9;
/** TC_HTB_PROTOVER: the version tc puts in tc_htb_glob */
export const TC_HTB_PROTOVER = 3;

/* ---- fq_codel: enum { TCA_FQ_CODEL_UNSPEC, ... } ---- */
/** TCA_FQ_CODEL_UNSPEC, from linux/pkt_sched.h (fq_codel) */
export const TCA_FQ_CODEL_UNSPEC = 0;
/** TCA_FQ_CODEL_TARGET, from linux/pkt_sched.h (fq_codel) */
export const TCA_FQ_CODEL_TARGET = 1;
/** TCA_FQ_CODEL_LIMIT, from linux/pkt_sched.h (fq_codel) */
export const TCA_FQ_CODEL_LIMIT = 2;
/** TCA_FQ_CODEL_INTERVAL, from linux/pkt_sched.h (fq_codel) */
export const TCA_FQ_CODEL_INTERVAL = 3;
/** TCA_FQ_CODEL_ECN, from linux/pkt_sched.h (fq_codel) */
export const TCA_FQ_CODEL_ECN = 4;
/** TCA_FQ_CODEL_FLOWS, from linux/pkt_sched.h (fq_codel) */
export const TCA_FQ_CODEL_FLOWS = 5;
/** TCA_FQ_CODEL_QUANTUM, from linux/pkt_sched.h (fq_codel) */
export const TCA_FQ_CODEL_QUANTUM = 6;
/** TCA_FQ_CODEL_CE_THRESHOLD, from linux/pkt_sched.h (fq_codel) */
export const TCA_FQ_CODEL_CE_THRESHOLD = 7;
/** TCA_FQ_CODEL_DROP_BATCH_SIZE, from linux/pkt_sched.h (fq_codel) */
export const TCA_FQ_CODEL_DROP_BATCH_SIZE = 8;
/** TCA_FQ_CODEL_MEMORY_LIMIT, from linux/pkt_sched.h (fq_codel) */
export const TCA_FQ_CODEL_MEMORY_LIMIT = 9;
/** TCA_FQ_CODEL_CE_THRESHOLD_SELECTOR, from linux/pkt_sched.h (fq_codel) */
export const TCA_FQ_CODEL_CE_THRESHOLD_SELECTOR = 10;
/** TCA_FQ_CODEL_CE_THRESHOLD_MASK, from linux/pkt_sched.h (fq_codel) */
export const TCA_FQ_CODEL_CE_THRESHOLD_MASK = 11;
/** TCA_FQ_CODEL_XSTATS_QDISC, from linux/pkt_sched.h (fq_codel) */
export const TCA_FQ_CODEL_XSTATS_QDISC = 0;
/** TCA_FQ_CODEL_XSTATS_CLASS, from linux/pkt_sched.h (fq_codel) */
export const TCA_FQ_CODEL_XSTATS_CLASS = 1;

/* ---- fw filter: enum { TCA_FW_UNSPEC, ... } (linux/pkt_cls.h) ---- */
/** TCA_FW_UNSPEC, from linux/pkt_cls.h */
export const TCA_FW_UNSPEC = 0;
/** TCA_FW_CLASSID, from linux/pkt_cls.h */
export const TCA_FW_CLASSID = 1;
/** TCA_FW_POLICE, from linux/pkt_cls.h */
export const TCA_FW_POLICE = 2;
/** TCA_FW_INDEV, from linux/pkt_cls.h */
export const TCA_FW_INDEV = 3;
/** TCA_FW_ACT, from linux/pkt_cls.h */
export const TCA_FW_ACT = 4;
/** TCA_FW_MASK, from linux/pkt_cls.h */
export const TCA_FW_MASK = 5;

/* ---- u32 filter: enum { TCA_U32_UNSPEC, ... } (linux/pkt_cls.h) ---- */
/** TCA_U32_UNSPEC, from linux/pkt_cls.h */
export const TCA_U32_UNSPEC = 0;
/** TCA_U32_CLASSID, from linux/pkt_cls.h */
export const TCA_U32_CLASSID = 1;
/** TCA_U32_HASH, from linux/pkt_cls.h */
export const TCA_U32_HASH = 2;
/** TCA_U32_LINK, from linux/pkt_cls.h */
export const TCA_U32_LINK = 3;
/** TCA_U32_DIVISOR, from linux/pkt_cls.h */
export const TCA_U32_DIVISOR = 4;
/** TCA_U32_SEL, from linux/pkt_cls.h */
export const TCA_U32_SEL = 5;
/** TCA_U32_POLICE, from linux/pkt_cls.h */
export const TCA_U32_POLICE = 6;
/** TCA_U32_ACT, from linux/pkt_cls.h */
export const TCA_U32_ACT = 7;
/** TCA_U32_INDEV, from linux/pkt_cls.h */
export const TCA_U32_INDEV = 8;
/** TCA_U32_PCNT, from linux/pkt_cls.h */
export const TCA_U32_PCNT = 9;
/** TCA_U32_MARK, from linux/pkt_cls.h */
export const TCA_U32_MARK = 10;
/** TCA_U32_FLAGS, from linux/pkt_cls.h */
export const TCA_U32_FLAGS = 11;
/** TCA_U32_PAD, from linux/pkt_cls.h */
export const TCA_U32_PAD = 12;
/** TC_U32_TERMINAL, from linux/pkt_cls.h */
export const TC_U32_TERMINAL = 1;
/** TC_U32_OFFSET, from linux/pkt_cls.h */
export const TC_U32_OFFSET = 2;
/** TC_U32_VAROFFSET, from linux/pkt_cls.h */
export const TC_U32_VAROFFSET = 4;
/** TC_U32_EAT, from linux/pkt_cls.h */
export const TC_U32_EAT = 8;
/** TC_U32_HTID(h) */
export const TC_U32_HTID = (h: number): number => (h & 0xfff00000) >>> 0;
/** TC_U32_USERHTID(h) */
export const TC_U32_USERHTID = (h: number): number => TC_U32_HTID(h) >>> 20;
/** TC_U32_HASH(h) */
export const TC_U32_HASH = (h: number): number => (h >>> 12) & 0xff;
/** TC_U32_NODE(h) */
export const TC_U32_NODE = (h: number): number => h & 0xfff;

/* ---- matchall: enum { TCA_MATCHALL_UNSPEC, ... } (linux/pkt_cls.h) ---- */
/** TCA_MATCHALL_UNSPEC, from linux/pkt_cls.h */
export const TCA_MATCHALL_UNSPEC = 0;
/** TCA_MATCHALL_CLASSID, from linux/pkt_cls.h */
export const TCA_MATCHALL_CLASSID = 1;
/** TCA_MATCHALL_ACT, from linux/pkt_cls.h */
export const TCA_MATCHALL_ACT = 2;
/** TCA_MATCHALL_FLAGS, from linux/pkt_cls.h */
export const TCA_MATCHALL_FLAGS = 3;
/** TCA_MATCHALL_PCNT, from linux/pkt_cls.h */
export const TCA_MATCHALL_PCNT = 4;
/** TCA_MATCHALL_PAD, from linux/pkt_cls.h */
export const TCA_MATCHALL_PAD = 5;

/* ---- classifier flags (linux/pkt_cls.h) ---- */
/** TCA_CLS_FLAGS_SKIP_HW, from linux/pkt_cls.h */
export const TCA_CLS_FLAGS_SKIP_HW = 1 << 0;
/** TCA_CLS_FLAGS_SKIP_SW, from linux/pkt_cls.h */
export const TCA_CLS_FLAGS_SKIP_SW = 1 << 1;
/** TCA_CLS_FLAGS_IN_HW, from linux/pkt_cls.h */
export const TCA_CLS_FLAGS_IN_HW = 1 << 2;
/** TCA_CLS_FLAGS_NOT_IN_HW, from linux/pkt_cls.h */
export const TCA_CLS_FLAGS_NOT_IN_HW = 1 << 3;
/** TCA_CLS_FLAGS_VERBOSE, from linux/pkt_cls.h */
export const TCA_CLS_FLAGS_VERBOSE = 1 << 4;

/* ---- ethertypes (linux/if_ether.h), host order ---- */
/** ETH_P_ALL, from linux/if_ether.h (host order) */
export const ETH_P_ALL = 0x0003;
/** ETH_P_IP, from linux/if_ether.h (host order) */
export const ETH_P_IP = 0x0800;
/** ETH_P_ARP, from linux/if_ether.h (host order) */
export const ETH_P_ARP = 0x0806;
/** ETH_P_IPV6, from linux/if_ether.h (host order) */
export const ETH_P_IPV6 = 0x86dd;
/** ETH_P_8021Q, from linux/if_ether.h (host order) */
export const ETH_P_8021Q = 0x8100;
/** ETH_P_8021AD, from linux/if_ether.h (host order) */
export const ETH_P_8021AD = 0x88a8;
