/**
 * Wire constants of nfnetlink and nf_tables, kernel names verbatim, from
 * linux/netfilter/nfnetlink.h, linux/netfilter/nf_tables.h and
 * linux/netfilter.h (the NFPROTO_* families and NF_INET_* hooks).
 *
 * Only numbers live here; names for printing are in {@link ./names.js}.
 *
 * @module
 */

// ---------------------------------------------------------------- nfnetlink.h

/** nfnetlink version in `struct nfgenmsg.version`. */
export const NFNETLINK_V0 = 0;

/* Subsystem ids: the high byte of nlmsg_type (NFNL_SUBSYS_ID). */
/** NFNL_SUBSYS_NONE: Subsystem ids: the high byte of nlmsg_type (NFNL_SUBSYS_ID), nfnetlink.h */
export const NFNL_SUBSYS_NONE = 0;
/** NFNL_SUBSYS_CTNETLINK: Subsystem ids: the high byte of nlmsg_type (NFNL_SUBSYS_ID), nfnetlink.h */
export const NFNL_SUBSYS_CTNETLINK = 1;
/** NFNL_SUBSYS_CTNETLINK_EXP: Subsystem ids: the high byte of nlmsg_type (NFNL_SUBSYS_ID), nfnetlink.h */
export const NFNL_SUBSYS_CTNETLINK_EXP = 2;
/** NFNL_SUBSYS_QUEUE: Subsystem ids: the high byte of nlmsg_type (NFNL_SUBSYS_ID), nfnetlink.h */
export const NFNL_SUBSYS_QUEUE = 3;
/** NFNL_SUBSYS_ULOG: Subsystem ids: the high byte of nlmsg_type (NFNL_SUBSYS_ID), nfnetlink.h */
export const NFNL_SUBSYS_ULOG = 4;
/** NFNL_SUBSYS_OSF: Subsystem ids: the high byte of nlmsg_type (NFNL_SUBSYS_ID), nfnetlink.h */
export const NFNL_SUBSYS_OSF = 5;
/** NFNL_SUBSYS_IPSET: Subsystem ids: the high byte of nlmsg_type (NFNL_SUBSYS_ID), nfnetlink.h */
export const NFNL_SUBSYS_IPSET = 6;
/** NFNL_SUBSYS_ACCT: Subsystem ids: the high byte of nlmsg_type (NFNL_SUBSYS_ID), nfnetlink.h */
export const NFNL_SUBSYS_ACCT = 7;
/** NFNL_SUBSYS_CTNETLINK_TIMEOUT: Subsystem ids: the high byte of nlmsg_type (NFNL_SUBSYS_ID), nfnetlink.h */
export const NFNL_SUBSYS_CTNETLINK_TIMEOUT = 8;
/** NFNL_SUBSYS_CTHELPER: Subsystem ids: the high byte of nlmsg_type (NFNL_SUBSYS_ID), nfnetlink.h */
export const NFNL_SUBSYS_CTHELPER = 9;
/** NFNL_SUBSYS_NFTABLES: Subsystem ids: the high byte of nlmsg_type (NFNL_SUBSYS_ID), nfnetlink.h */
export const NFNL_SUBSYS_NFTABLES = 10;
/** NFNL_SUBSYS_NFT_COMPAT: Subsystem ids: the high byte of nlmsg_type (NFNL_SUBSYS_ID), nfnetlink.h */
export const NFNL_SUBSYS_NFT_COMPAT = 11;
/** NFNL_SUBSYS_HOOK: Subsystem ids: the high byte of nlmsg_type (NFNL_SUBSYS_ID), nfnetlink.h */
export const NFNL_SUBSYS_HOOK = 12;

/** Reserved control messages (NLMSG_MIN_TYPE and NLMSG_MIN_TYPE+1): not subsystem-prefixed. */
export const NFNL_MSG_BATCH_BEGIN = 0x10;
/** NFNL_MSG_BATCH_END: nfnetlink.h */
export const NFNL_MSG_BATCH_END = 0x11;

/* enum nfnl_batch_attributes */
/** NFNL_BATCH_GENID: u32 (big-endian) generation id the batch expects; the kernel refuses with ERESTART if it moved. */
export const NFNL_BATCH_GENID = 1;

// ---------------------------------------------------------------- nf_tables.h

/** NFT_NAME_MAXLEN: table, chain, set and object names, **including** the terminating NUL. */
export const NFT_NAME_MAXLEN = 256;
/** NFT_USERDATA_MAXLEN: bytes of NFTA_RULE_USERDATA (and table/chain/set userdata). */
export const NFT_USERDATA_MAXLEN = 256;
/** NFT_DATA_VALUE_MAXLEN: longest value in struct nft_data (64 bytes). */
export const NFT_DATA_VALUE_MAXLEN = 64;

/* enum nft_registers */
/** NFT_REG_VERDICT: enum nft_registers, nf_tables.h */
export const NFT_REG_VERDICT = 0;
/** NFT_REG_1: enum nft_registers, nf_tables.h */
export const NFT_REG_1 = 1;
/** NFT_REG_2: enum nft_registers, nf_tables.h */
export const NFT_REG_2 = 2;
/** NFT_REG_3: enum nft_registers, nf_tables.h */
export const NFT_REG_3 = 3;
/** NFT_REG_4: enum nft_registers, nf_tables.h */
export const NFT_REG_4 = 4;
/** NFT_REG32_00: enum nft_registers, nf_tables.h */
export const NFT_REG32_00 = 8;

/* enum nft_verdicts (share the number space of the NF_* verdicts of netfilter.h) */
/** NFT_CONTINUE: enum nft_verdicts (share the number space of the NF_* verdicts of netfilter.h), nf_tables.h */
export const NFT_CONTINUE = -1;
/** NFT_BREAK: enum nft_verdicts (share the number space of the NF_* verdicts of netfilter.h), nf_tables.h */
export const NFT_BREAK = -2;
/** NFT_JUMP: enum nft_verdicts (share the number space of the NF_* verdicts of netfilter.h), nf_tables.h */
export const NFT_JUMP = -3;
/** NFT_GOTO: enum nft_verdicts (share the number space of the NF_* verdicts of netfilter.h), nf_tables.h */
export const NFT_GOTO = -4;
/** NFT_RETURN: enum nft_verdicts (share the number space of the NF_* verdicts of netfilter.h), nf_tables.h */
export const NFT_RETURN = -5;
/* linux/netfilter.h */
/** NF_DROP: linux/netfilter.h, nf_tables.h */
export const NF_DROP = 0;
/** NF_ACCEPT: linux/netfilter.h, nf_tables.h */
export const NF_ACCEPT = 1;
/** NF_STOLEN: linux/netfilter.h, nf_tables.h */
export const NF_STOLEN = 2;
/** NF_QUEUE: linux/netfilter.h, nf_tables.h */
export const NF_QUEUE = 3;
/** NF_REPEAT: linux/netfilter.h, nf_tables.h */
export const NF_REPEAT = 4;
/** NF_STOP: linux/netfilter.h, nf_tables.h */
export const NF_STOP = 5;

/* enum nf_tables_msg_types: the low byte of nlmsg_type, subsystem NFNL_SUBSYS_NFTABLES */
/** NFT_MSG_NEWTABLE: enum nf_tables_msg_types: the low byte of nlmsg_type, subsystem NFNL_SUBSYS_NFTABLES, nf_tables.h */
export const NFT_MSG_NEWTABLE = 0;
/** NFT_MSG_GETTABLE: enum nf_tables_msg_types: the low byte of nlmsg_type, subsystem NFNL_SUBSYS_NFTABLES, nf_tables.h */
export const NFT_MSG_GETTABLE = 1;
/** NFT_MSG_DELTABLE: enum nf_tables_msg_types: the low byte of nlmsg_type, subsystem NFNL_SUBSYS_NFTABLES, nf_tables.h */
export const NFT_MSG_DELTABLE = 2;
/** NFT_MSG_NEWCHAIN: enum nf_tables_msg_types: the low byte of nlmsg_type, subsystem NFNL_SUBSYS_NFTABLES, nf_tables.h */
export const NFT_MSG_NEWCHAIN = 3;
/** NFT_MSG_GETCHAIN: enum nf_tables_msg_types: the low byte of nlmsg_type, subsystem NFNL_SUBSYS_NFTABLES, nf_tables.h */
export const NFT_MSG_GETCHAIN = 4;
/** NFT_MSG_DELCHAIN: enum nf_tables_msg_types: the low byte of nlmsg_type, subsystem NFNL_SUBSYS_NFTABLES, nf_tables.h */
export const NFT_MSG_DELCHAIN = 5;
/** NFT_MSG_NEWRULE: enum nf_tables_msg_types: the low byte of nlmsg_type, subsystem NFNL_SUBSYS_NFTABLES, nf_tables.h */
export const NFT_MSG_NEWRULE = 6;
/** NFT_MSG_GETRULE: enum nf_tables_msg_types: the low byte of nlmsg_type, subsystem NFNL_SUBSYS_NFTABLES, nf_tables.h */
export const NFT_MSG_GETRULE = 7;
/** NFT_MSG_DELRULE: enum nf_tables_msg_types: the low byte of nlmsg_type, subsystem NFNL_SUBSYS_NFTABLES, nf_tables.h */
export const NFT_MSG_DELRULE = 8;
/** NFT_MSG_NEWSET: enum nf_tables_msg_types: the low byte of nlmsg_type, subsystem NFNL_SUBSYS_NFTABLES, nf_tables.h */
export const NFT_MSG_NEWSET = 9;
/** NFT_MSG_GETSET: enum nf_tables_msg_types: the low byte of nlmsg_type, subsystem NFNL_SUBSYS_NFTABLES, nf_tables.h */
export const NFT_MSG_GETSET = 10;
/** NFT_MSG_DELSET: enum nf_tables_msg_types: the low byte of nlmsg_type, subsystem NFNL_SUBSYS_NFTABLES, nf_tables.h */
export const NFT_MSG_DELSET = 11;
/** NFT_MSG_NEWSETELEM: enum nf_tables_msg_types: the low byte of nlmsg_type, subsystem NFNL_SUBSYS_NFTABLES, nf_tables.h */
export const NFT_MSG_NEWSETELEM = 12;
/** NFT_MSG_GETSETELEM: enum nf_tables_msg_types: the low byte of nlmsg_type, subsystem NFNL_SUBSYS_NFTABLES, nf_tables.h */
export const NFT_MSG_GETSETELEM = 13;
/** NFT_MSG_DELSETELEM: enum nf_tables_msg_types: the low byte of nlmsg_type, subsystem NFNL_SUBSYS_NFTABLES, nf_tables.h */
export const NFT_MSG_DELSETELEM = 14;
/** NFT_MSG_NEWGEN: enum nf_tables_msg_types: the low byte of nlmsg_type, subsystem NFNL_SUBSYS_NFTABLES, nf_tables.h */
export const NFT_MSG_NEWGEN = 15;
/** NFT_MSG_GETGEN: enum nf_tables_msg_types: the low byte of nlmsg_type, subsystem NFNL_SUBSYS_NFTABLES, nf_tables.h */
export const NFT_MSG_GETGEN = 16;
/** NFT_MSG_TRACE: enum nf_tables_msg_types: the low byte of nlmsg_type, subsystem NFNL_SUBSYS_NFTABLES, nf_tables.h */
export const NFT_MSG_TRACE = 17;
/** NFT_MSG_NEWOBJ: enum nf_tables_msg_types: the low byte of nlmsg_type, subsystem NFNL_SUBSYS_NFTABLES, nf_tables.h */
export const NFT_MSG_NEWOBJ = 18;
/** NFT_MSG_GETOBJ: enum nf_tables_msg_types: the low byte of nlmsg_type, subsystem NFNL_SUBSYS_NFTABLES, nf_tables.h */
export const NFT_MSG_GETOBJ = 19;
/** NFT_MSG_DELOBJ: enum nf_tables_msg_types: the low byte of nlmsg_type, subsystem NFNL_SUBSYS_NFTABLES, nf_tables.h */
export const NFT_MSG_DELOBJ = 20;
/** NFT_MSG_GETOBJ_RESET: enum nf_tables_msg_types: the low byte of nlmsg_type, subsystem NFNL_SUBSYS_NFTABLES, nf_tables.h */
export const NFT_MSG_GETOBJ_RESET = 21;
/** NFT_MSG_NEWFLOWTABLE: enum nf_tables_msg_types: the low byte of nlmsg_type, subsystem NFNL_SUBSYS_NFTABLES, nf_tables.h */
export const NFT_MSG_NEWFLOWTABLE = 22;
/** NFT_MSG_GETFLOWTABLE: enum nf_tables_msg_types: the low byte of nlmsg_type, subsystem NFNL_SUBSYS_NFTABLES, nf_tables.h */
export const NFT_MSG_GETFLOWTABLE = 23;
/** NFT_MSG_DELFLOWTABLE: enum nf_tables_msg_types: the low byte of nlmsg_type, subsystem NFNL_SUBSYS_NFTABLES, nf_tables.h */
export const NFT_MSG_DELFLOWTABLE = 24;
/* Linux 6.3+ */
/** NFT_MSG_GETRULE_RESET: enum nf_tables_msg_types (Linux 6.3+), nf_tables.h */
export const NFT_MSG_GETRULE_RESET = 25;
/** NFT_MSG_DESTROYTABLE: enum nf_tables_msg_types (Linux 6.3+), nf_tables.h */
export const NFT_MSG_DESTROYTABLE = 26;
/** NFT_MSG_DESTROYCHAIN: enum nf_tables_msg_types (Linux 6.3+), nf_tables.h */
export const NFT_MSG_DESTROYCHAIN = 27;
/** NFT_MSG_DESTROYRULE: enum nf_tables_msg_types (Linux 6.3+), nf_tables.h */
export const NFT_MSG_DESTROYRULE = 28;
/** NFT_MSG_DESTROYSET: enum nf_tables_msg_types (Linux 6.3+), nf_tables.h */
export const NFT_MSG_DESTROYSET = 29;
/** NFT_MSG_DESTROYSETELEM: enum nf_tables_msg_types (Linux 6.3+), nf_tables.h */
export const NFT_MSG_DESTROYSETELEM = 30;
/** NFT_MSG_DESTROYOBJ: enum nf_tables_msg_types (Linux 6.3+), nf_tables.h */
export const NFT_MSG_DESTROYOBJ = 31;
/** NFT_MSG_DESTROYFLOWTABLE: enum nf_tables_msg_types (Linux 6.3+), nf_tables.h */
export const NFT_MSG_DESTROYFLOWTABLE = 32;
/** NFT_MSG_GETSETELEM_RESET: enum nf_tables_msg_types (Linux 6.3+), nf_tables.h */
export const NFT_MSG_GETSETELEM_RESET = 33;

/* enum nft_list_attributes */
/** NFTA_LIST_ELEM: enum nft_list_attributes, nf_tables.h */
export const NFTA_LIST_ELEM = 1;

/* enum nft_hook_attributes */
/** NFTA_HOOK_HOOKNUM: enum nft_hook_attributes, nf_tables.h */
export const NFTA_HOOK_HOOKNUM = 1;
/** NFTA_HOOK_PRIORITY: enum nft_hook_attributes, nf_tables.h */
export const NFTA_HOOK_PRIORITY = 2;
/** NFTA_HOOK_DEV: enum nft_hook_attributes, nf_tables.h */
export const NFTA_HOOK_DEV = 3;
/** NFTA_HOOK_DEVS: enum nft_hook_attributes, nf_tables.h */
export const NFTA_HOOK_DEVS = 4;
/** NFTA_DEVICE_NAME: enum nft_devices_attributes, nf_tables.h (each device of NFTA_HOOK_DEVS) */
export const NFTA_DEVICE_NAME = 1;

/* enum nft_table_flags */
/** NFT_TABLE_F_DORMANT: enum nft_table_flags, nf_tables.h */
export const NFT_TABLE_F_DORMANT = 0x1;
/** NFT_TABLE_F_OWNER: enum nft_table_flags, nf_tables.h */
export const NFT_TABLE_F_OWNER = 0x2;

/* enum nft_table_attributes */
/** NFTA_TABLE_NAME: enum nft_table_attributes, nf_tables.h */
export const NFTA_TABLE_NAME = 1;
/** NFTA_TABLE_FLAGS: enum nft_table_attributes, nf_tables.h */
export const NFTA_TABLE_FLAGS = 2;
/** NFTA_TABLE_USE: enum nft_table_attributes, nf_tables.h */
export const NFTA_TABLE_USE = 3;
/** NFTA_TABLE_HANDLE: enum nft_table_attributes, nf_tables.h */
export const NFTA_TABLE_HANDLE = 4;
/** NFTA_TABLE_PAD: enum nft_table_attributes, nf_tables.h */
export const NFTA_TABLE_PAD = 5;
/** NFTA_TABLE_USERDATA: enum nft_table_attributes, nf_tables.h */
export const NFTA_TABLE_USERDATA = 6;
/** NFTA_TABLE_OWNER: enum nft_table_attributes, nf_tables.h */
export const NFTA_TABLE_OWNER = 7;

/* enum nft_chain_flags */
/** NFT_CHAIN_BASE: enum nft_chain_flags, nf_tables.h */
export const NFT_CHAIN_BASE = 1 << 0;
/** NFT_CHAIN_HW_OFFLOAD: enum nft_chain_flags, nf_tables.h */
export const NFT_CHAIN_HW_OFFLOAD = 1 << 1;
/** NFT_CHAIN_BINDING: enum nft_chain_flags, nf_tables.h */
export const NFT_CHAIN_BINDING = 1 << 2;

/* enum nft_chain_attributes */
/** NFTA_CHAIN_TABLE: enum nft_chain_attributes, nf_tables.h */
export const NFTA_CHAIN_TABLE = 1;
/** NFTA_CHAIN_HANDLE: enum nft_chain_attributes, nf_tables.h */
export const NFTA_CHAIN_HANDLE = 2;
/** NFTA_CHAIN_NAME: enum nft_chain_attributes, nf_tables.h */
export const NFTA_CHAIN_NAME = 3;
/** NFTA_CHAIN_HOOK: enum nft_chain_attributes, nf_tables.h */
export const NFTA_CHAIN_HOOK = 4;
/** NFTA_CHAIN_POLICY: enum nft_chain_attributes, nf_tables.h */
export const NFTA_CHAIN_POLICY = 5;
/** NFTA_CHAIN_USE: enum nft_chain_attributes, nf_tables.h */
export const NFTA_CHAIN_USE = 6;
/** NFTA_CHAIN_TYPE: enum nft_chain_attributes, nf_tables.h */
export const NFTA_CHAIN_TYPE = 7;
/** NFTA_CHAIN_COUNTERS: enum nft_chain_attributes, nf_tables.h */
export const NFTA_CHAIN_COUNTERS = 8;
/** NFTA_CHAIN_PAD: enum nft_chain_attributes, nf_tables.h */
export const NFTA_CHAIN_PAD = 9;
/** NFTA_CHAIN_FLAGS: enum nft_chain_attributes, nf_tables.h */
export const NFTA_CHAIN_FLAGS = 10;
/** NFTA_CHAIN_ID: enum nft_chain_attributes, nf_tables.h */
export const NFTA_CHAIN_ID = 11;
/** NFTA_CHAIN_USERDATA: enum nft_chain_attributes, nf_tables.h */
export const NFTA_CHAIN_USERDATA = 12;

/* enum nft_rule_attributes */
/** NFTA_RULE_TABLE: enum nft_rule_attributes, nf_tables.h */
export const NFTA_RULE_TABLE = 1;
/** NFTA_RULE_CHAIN: enum nft_rule_attributes, nf_tables.h */
export const NFTA_RULE_CHAIN = 2;
/** NFTA_RULE_HANDLE: enum nft_rule_attributes, nf_tables.h */
export const NFTA_RULE_HANDLE = 3;
/** NFTA_RULE_EXPRESSIONS: enum nft_rule_attributes, nf_tables.h */
export const NFTA_RULE_EXPRESSIONS = 4;
/** NFTA_RULE_COMPAT: enum nft_rule_attributes, nf_tables.h */
export const NFTA_RULE_COMPAT = 5;
/** NFTA_RULE_POSITION: enum nft_rule_attributes, nf_tables.h */
export const NFTA_RULE_POSITION = 6;
/** NFTA_RULE_USERDATA: enum nft_rule_attributes, nf_tables.h */
export const NFTA_RULE_USERDATA = 7;
/** NFTA_RULE_PAD: enum nft_rule_attributes, nf_tables.h */
export const NFTA_RULE_PAD = 8;
/** NFTA_RULE_ID: enum nft_rule_attributes, nf_tables.h */
export const NFTA_RULE_ID = 9;
/** NFTA_RULE_POSITION_ID: enum nft_rule_attributes, nf_tables.h */
export const NFTA_RULE_POSITION_ID = 10;
/** NFTA_RULE_CHAIN_ID: enum nft_rule_attributes, nf_tables.h */
export const NFTA_RULE_CHAIN_ID = 11;

/* enum nft_set_flags */
/** NFT_SET_ANONYMOUS: enum nft_set_flags, nf_tables.h */
export const NFT_SET_ANONYMOUS = 0x1;
/** NFT_SET_CONSTANT: enum nft_set_flags, nf_tables.h */
export const NFT_SET_CONSTANT = 0x2;
/** NFT_SET_INTERVAL: enum nft_set_flags, nf_tables.h */
export const NFT_SET_INTERVAL = 0x4;
/** NFT_SET_MAP: enum nft_set_flags, nf_tables.h */
export const NFT_SET_MAP = 0x8;
/** NFT_SET_TIMEOUT: enum nft_set_flags, nf_tables.h */
export const NFT_SET_TIMEOUT = 0x10;
/** NFT_SET_EVAL: enum nft_set_flags, nf_tables.h */
export const NFT_SET_EVAL = 0x20;
/** NFT_SET_OBJECT: enum nft_set_flags, nf_tables.h */
export const NFT_SET_OBJECT = 0x40;
/** NFT_SET_CONCAT: enum nft_set_flags, nf_tables.h */
export const NFT_SET_CONCAT = 0x80;
/** NFT_SET_EXPR: enum nft_set_flags, nf_tables.h */
export const NFT_SET_EXPR = 0x100;

/* enum nft_set_attributes */
/** NFTA_SET_TABLE: enum nft_set_attributes, nf_tables.h */
export const NFTA_SET_TABLE = 1;
/** NFTA_SET_NAME: enum nft_set_attributes, nf_tables.h */
export const NFTA_SET_NAME = 2;
/** NFTA_SET_FLAGS: enum nft_set_attributes, nf_tables.h */
export const NFTA_SET_FLAGS = 3;
/** NFTA_SET_KEY_TYPE: enum nft_set_attributes, nf_tables.h */
export const NFTA_SET_KEY_TYPE = 4;
/** NFTA_SET_KEY_LEN: enum nft_set_attributes, nf_tables.h */
export const NFTA_SET_KEY_LEN = 5;
/** NFTA_SET_DATA_TYPE: enum nft_set_attributes, nf_tables.h */
export const NFTA_SET_DATA_TYPE = 6;
/** NFTA_SET_DATA_LEN: enum nft_set_attributes, nf_tables.h */
export const NFTA_SET_DATA_LEN = 7;
/** NFTA_SET_POLICY: enum nft_set_attributes, nf_tables.h */
export const NFTA_SET_POLICY = 8;
/** NFTA_SET_DESC: enum nft_set_attributes, nf_tables.h */
export const NFTA_SET_DESC = 9;
/** NFTA_SET_ID: enum nft_set_attributes, nf_tables.h */
export const NFTA_SET_ID = 10;
/** NFTA_SET_TIMEOUT: enum nft_set_attributes, nf_tables.h */
export const NFTA_SET_TIMEOUT = 11;
/** NFTA_SET_GC_INTERVAL: enum nft_set_attributes, nf_tables.h */
export const NFTA_SET_GC_INTERVAL = 12;
/** NFTA_SET_USERDATA: enum nft_set_attributes, nf_tables.h */
export const NFTA_SET_USERDATA = 13;
/** NFTA_SET_PAD: enum nft_set_attributes, nf_tables.h */
export const NFTA_SET_PAD = 14;
/** NFTA_SET_OBJ_TYPE: enum nft_set_attributes, nf_tables.h */
export const NFTA_SET_OBJ_TYPE = 15;
/** NFTA_SET_HANDLE: enum nft_set_attributes, nf_tables.h */
export const NFTA_SET_HANDLE = 16;
/** NFTA_SET_EXPR: enum nft_set_attributes, nf_tables.h */
export const NFTA_SET_EXPR = 17;
/** NFTA_SET_EXPRESSIONS: enum nft_set_attributes, nf_tables.h */
export const NFTA_SET_EXPRESSIONS = 18;

/* enum nft_set_elem_flags */
/** NFT_SET_ELEM_INTERVAL_END: enum nft_set_elem_flags, nf_tables.h */
export const NFT_SET_ELEM_INTERVAL_END = 0x1;
/** NFT_SET_ELEM_CATCHALL: enum nft_set_elem_flags, nf_tables.h */
export const NFT_SET_ELEM_CATCHALL = 0x2;

/* enum nft_set_elem_attributes */
/** NFTA_SET_ELEM_KEY: enum nft_set_elem_attributes, nf_tables.h */
export const NFTA_SET_ELEM_KEY = 1;
/** NFTA_SET_ELEM_DATA: enum nft_set_elem_attributes, nf_tables.h */
export const NFTA_SET_ELEM_DATA = 2;
/** NFTA_SET_ELEM_FLAGS: enum nft_set_elem_attributes, nf_tables.h */
export const NFTA_SET_ELEM_FLAGS = 3;
/** NFTA_SET_ELEM_TIMEOUT: enum nft_set_elem_attributes, nf_tables.h */
export const NFTA_SET_ELEM_TIMEOUT = 4;
/** NFTA_SET_ELEM_EXPIRATION: enum nft_set_elem_attributes, nf_tables.h */
export const NFTA_SET_ELEM_EXPIRATION = 5;
/** NFTA_SET_ELEM_USERDATA: enum nft_set_elem_attributes, nf_tables.h */
export const NFTA_SET_ELEM_USERDATA = 6;
/** NFTA_SET_ELEM_EXPR: enum nft_set_elem_attributes, nf_tables.h */
export const NFTA_SET_ELEM_EXPR = 7;
/** NFTA_SET_ELEM_PAD: enum nft_set_elem_attributes, nf_tables.h */
export const NFTA_SET_ELEM_PAD = 8;
/** NFTA_SET_ELEM_OBJREF: enum nft_set_elem_attributes, nf_tables.h */
export const NFTA_SET_ELEM_OBJREF = 9;
/** NFTA_SET_ELEM_KEY_END: enum nft_set_elem_attributes, nf_tables.h */
export const NFTA_SET_ELEM_KEY_END = 10;
/** NFTA_SET_ELEM_EXPRESSIONS: enum nft_set_elem_attributes, nf_tables.h */
export const NFTA_SET_ELEM_EXPRESSIONS = 11;

/* enum nft_set_elem_list_attributes */
/** NFTA_SET_ELEM_LIST_TABLE: enum nft_set_elem_list_attributes, nf_tables.h */
export const NFTA_SET_ELEM_LIST_TABLE = 1;
/** NFTA_SET_ELEM_LIST_SET: enum nft_set_elem_list_attributes, nf_tables.h */
export const NFTA_SET_ELEM_LIST_SET = 2;
/** NFTA_SET_ELEM_LIST_ELEMENTS: enum nft_set_elem_list_attributes, nf_tables.h */
export const NFTA_SET_ELEM_LIST_ELEMENTS = 3;
/** NFTA_SET_ELEM_LIST_SET_ID: enum nft_set_elem_list_attributes, nf_tables.h */
export const NFTA_SET_ELEM_LIST_SET_ID = 4;

/* enum nft_data_attributes */
/** NFTA_DATA_VALUE: enum nft_data_attributes, nf_tables.h */
export const NFTA_DATA_VALUE = 1;
/** NFTA_DATA_VERDICT: enum nft_data_attributes, nf_tables.h */
export const NFTA_DATA_VERDICT = 2;

/* enum nft_verdict_attributes */
/** NFTA_VERDICT_CODE: enum nft_verdict_attributes, nf_tables.h */
export const NFTA_VERDICT_CODE = 1;
/** NFTA_VERDICT_CHAIN: enum nft_verdict_attributes, nf_tables.h */
export const NFTA_VERDICT_CHAIN = 2;
/** NFTA_VERDICT_CHAIN_ID: enum nft_verdict_attributes, nf_tables.h */
export const NFTA_VERDICT_CHAIN_ID = 3;

/* enum nft_expr_attributes */
/** NFTA_EXPR_NAME: enum nft_expr_attributes, nf_tables.h */
export const NFTA_EXPR_NAME = 1;
/** NFTA_EXPR_DATA: enum nft_expr_attributes, nf_tables.h */
export const NFTA_EXPR_DATA = 2;

/* enum nft_immediate_attributes */
/** NFTA_IMMEDIATE_DREG: enum nft_immediate_attributes, nf_tables.h */
export const NFTA_IMMEDIATE_DREG = 1;
/** NFTA_IMMEDIATE_DATA: enum nft_immediate_attributes, nf_tables.h */
export const NFTA_IMMEDIATE_DATA = 2;

/* enum nft_bitwise_ops */
/** NFT_BITWISE_MASK_XOR: enum nft_bitwise_ops, nf_tables.h */
export const NFT_BITWISE_MASK_XOR = 0;
/** NFT_BITWISE_LSHIFT: enum nft_bitwise_ops, nf_tables.h */
export const NFT_BITWISE_LSHIFT = 1;
/** NFT_BITWISE_RSHIFT: enum nft_bitwise_ops, nf_tables.h */
export const NFT_BITWISE_RSHIFT = 2;

/* enum nft_bitwise_attributes */
/** NFTA_BITWISE_SREG: enum nft_bitwise_attributes, nf_tables.h */
export const NFTA_BITWISE_SREG = 1;
/** NFTA_BITWISE_DREG: enum nft_bitwise_attributes, nf_tables.h */
export const NFTA_BITWISE_DREG = 2;
/** NFTA_BITWISE_LEN: enum nft_bitwise_attributes, nf_tables.h */
export const NFTA_BITWISE_LEN = 3;
/** NFTA_BITWISE_MASK: enum nft_bitwise_attributes, nf_tables.h */
export const NFTA_BITWISE_MASK = 4;
/** NFTA_BITWISE_XOR: enum nft_bitwise_attributes, nf_tables.h */
export const NFTA_BITWISE_XOR = 5;
/** NFTA_BITWISE_OP: enum nft_bitwise_attributes, nf_tables.h */
export const NFTA_BITWISE_OP = 6;
/** NFTA_BITWISE_DATA: enum nft_bitwise_attributes, nf_tables.h */
export const NFTA_BITWISE_DATA = 7;

/* enum nft_cmp_ops */
/** NFT_CMP_EQ: enum nft_cmp_ops, nf_tables.h */
export const NFT_CMP_EQ = 0;
/** NFT_CMP_NEQ: enum nft_cmp_ops, nf_tables.h */
export const NFT_CMP_NEQ = 1;
/** NFT_CMP_LT: enum nft_cmp_ops, nf_tables.h */
export const NFT_CMP_LT = 2;
/** NFT_CMP_LTE: enum nft_cmp_ops, nf_tables.h */
export const NFT_CMP_LTE = 3;
/** NFT_CMP_GT: enum nft_cmp_ops, nf_tables.h */
export const NFT_CMP_GT = 4;
/** NFT_CMP_GTE: enum nft_cmp_ops, nf_tables.h */
export const NFT_CMP_GTE = 5;

/* enum nft_cmp_attributes */
/** NFTA_CMP_SREG: enum nft_cmp_attributes, nf_tables.h */
export const NFTA_CMP_SREG = 1;
/** NFTA_CMP_OP: enum nft_cmp_attributes, nf_tables.h */
export const NFTA_CMP_OP = 2;
/** NFTA_CMP_DATA: enum nft_cmp_attributes, nf_tables.h */
export const NFTA_CMP_DATA = 3;

/* enum nft_lookup_flags */
/** NFT_LOOKUP_F_INV: enum nft_lookup_flags, nf_tables.h */
export const NFT_LOOKUP_F_INV = 1 << 0;

/* enum nft_lookup_attributes */
/** NFTA_LOOKUP_SET: enum nft_lookup_attributes, nf_tables.h */
export const NFTA_LOOKUP_SET = 1;
/** NFTA_LOOKUP_SREG: enum nft_lookup_attributes, nf_tables.h */
export const NFTA_LOOKUP_SREG = 2;
/** NFTA_LOOKUP_DREG: enum nft_lookup_attributes, nf_tables.h */
export const NFTA_LOOKUP_DREG = 3;
/** NFTA_LOOKUP_SET_ID: enum nft_lookup_attributes, nf_tables.h */
export const NFTA_LOOKUP_SET_ID = 4;
/** NFTA_LOOKUP_FLAGS: enum nft_lookup_attributes, nf_tables.h */
export const NFTA_LOOKUP_FLAGS = 5;

/* enum nft_payload_bases */
/** NFT_PAYLOAD_LL_HEADER: enum nft_payload_bases, nf_tables.h */
export const NFT_PAYLOAD_LL_HEADER = 0;
/** NFT_PAYLOAD_NETWORK_HEADER: enum nft_payload_bases, nf_tables.h */
export const NFT_PAYLOAD_NETWORK_HEADER = 1;
/** NFT_PAYLOAD_TRANSPORT_HEADER: enum nft_payload_bases, nf_tables.h */
export const NFT_PAYLOAD_TRANSPORT_HEADER = 2;
/** NFT_PAYLOAD_INNER_HEADER: enum nft_payload_bases, nf_tables.h */
export const NFT_PAYLOAD_INNER_HEADER = 3;

/* enum nft_payload_attributes */
/** NFTA_PAYLOAD_DREG: enum nft_payload_attributes, nf_tables.h */
export const NFTA_PAYLOAD_DREG = 1;
/** NFTA_PAYLOAD_BASE: enum nft_payload_attributes, nf_tables.h */
export const NFTA_PAYLOAD_BASE = 2;
/** NFTA_PAYLOAD_OFFSET: enum nft_payload_attributes, nf_tables.h */
export const NFTA_PAYLOAD_OFFSET = 3;
/** NFTA_PAYLOAD_LEN: enum nft_payload_attributes, nf_tables.h */
export const NFTA_PAYLOAD_LEN = 4;
/** NFTA_PAYLOAD_SREG: enum nft_payload_attributes, nf_tables.h */
export const NFTA_PAYLOAD_SREG = 5;
/** NFTA_PAYLOAD_CSUM_TYPE: enum nft_payload_attributes, nf_tables.h */
export const NFTA_PAYLOAD_CSUM_TYPE = 6;
/** NFTA_PAYLOAD_CSUM_OFFSET: enum nft_payload_attributes, nf_tables.h */
export const NFTA_PAYLOAD_CSUM_OFFSET = 7;
/** NFTA_PAYLOAD_CSUM_FLAGS: enum nft_payload_attributes, nf_tables.h */
export const NFTA_PAYLOAD_CSUM_FLAGS = 8;

/* enum nft_meta_keys */
/** NFT_META_LEN: enum nft_meta_keys, nf_tables.h */
export const NFT_META_LEN = 0;
/** NFT_META_PROTOCOL: enum nft_meta_keys, nf_tables.h */
export const NFT_META_PROTOCOL = 1;
/** NFT_META_PRIORITY: enum nft_meta_keys, nf_tables.h */
export const NFT_META_PRIORITY = 2;
/** NFT_META_MARK: enum nft_meta_keys, nf_tables.h */
export const NFT_META_MARK = 3;
/** NFT_META_IIF: enum nft_meta_keys, nf_tables.h */
export const NFT_META_IIF = 4;
/** NFT_META_OIF: enum nft_meta_keys, nf_tables.h */
export const NFT_META_OIF = 5;
/** NFT_META_IIFNAME: enum nft_meta_keys, nf_tables.h */
export const NFT_META_IIFNAME = 6;
/** NFT_META_OIFNAME: enum nft_meta_keys, nf_tables.h */
export const NFT_META_OIFNAME = 7;
/** NFT_META_IIFTYPE: enum nft_meta_keys, nf_tables.h */
export const NFT_META_IIFTYPE = 8;
/** NFT_META_OIFTYPE: enum nft_meta_keys, nf_tables.h */
export const NFT_META_OIFTYPE = 9;
/** NFT_META_SKUID: enum nft_meta_keys, nf_tables.h */
export const NFT_META_SKUID = 10;
/** NFT_META_SKGID: enum nft_meta_keys, nf_tables.h */
export const NFT_META_SKGID = 11;
/** NFT_META_NFTRACE: enum nft_meta_keys, nf_tables.h */
export const NFT_META_NFTRACE = 12;
/** NFT_META_RTCLASSID: enum nft_meta_keys, nf_tables.h */
export const NFT_META_RTCLASSID = 13;
/** NFT_META_SECMARK: enum nft_meta_keys, nf_tables.h */
export const NFT_META_SECMARK = 14;
/** NFT_META_NFPROTO: enum nft_meta_keys, nf_tables.h */
export const NFT_META_NFPROTO = 15;
/** NFT_META_L4PROTO: enum nft_meta_keys, nf_tables.h */
export const NFT_META_L4PROTO = 16;

/* enum nft_meta_attributes */
/** NFTA_META_DREG: enum nft_meta_attributes, nf_tables.h */
export const NFTA_META_DREG = 1;
/** NFTA_META_KEY: enum nft_meta_attributes, nf_tables.h */
export const NFTA_META_KEY = 2;
/** NFTA_META_SREG: enum nft_meta_attributes, nf_tables.h */
export const NFTA_META_SREG = 3;

/* enum nft_counter_attributes */
/** NFTA_COUNTER_BYTES: enum nft_counter_attributes, nf_tables.h */
export const NFTA_COUNTER_BYTES = 1;
/** NFTA_COUNTER_PACKETS: enum nft_counter_attributes, nf_tables.h */
export const NFTA_COUNTER_PACKETS = 2;
/** NFTA_COUNTER_PAD: enum nft_counter_attributes, nf_tables.h */
export const NFTA_COUNTER_PAD = 3;

/* enum nft_gen_attributes */
/** NFTA_GEN_ID: enum nft_gen_attributes, nf_tables.h */
export const NFTA_GEN_ID = 1;
/** NFTA_GEN_PROC_PID: enum nft_gen_attributes, nf_tables.h */
export const NFTA_GEN_PROC_PID = 2;
/** NFTA_GEN_PROC_NAME: enum nft_gen_attributes, nf_tables.h */
export const NFTA_GEN_PROC_NAME = 3;

// ---------------------------------------------------------------- netfilter.h

/* enum (NFPROTO_*): nfgen_family */
/** NFPROTO_UNSPEC: enum (NFPROTO_*): nfgen_family, netfilter.h */
export const NFPROTO_UNSPEC = 0;
/** NFPROTO_INET: enum (NFPROTO_*): nfgen_family, netfilter.h */
export const NFPROTO_INET = 1;
/** NFPROTO_IPV4: enum (NFPROTO_*): nfgen_family, netfilter.h */
export const NFPROTO_IPV4 = 2;
/** NFPROTO_ARP: enum (NFPROTO_*): nfgen_family, netfilter.h */
export const NFPROTO_ARP = 3;
/** NFPROTO_NETDEV: enum (NFPROTO_*): nfgen_family, netfilter.h */
export const NFPROTO_NETDEV = 5;
/** NFPROTO_BRIDGE: enum (NFPROTO_*): nfgen_family, netfilter.h */
export const NFPROTO_BRIDGE = 7;
/** NFPROTO_IPV6: enum (NFPROTO_*): nfgen_family, netfilter.h */
export const NFPROTO_IPV6 = 10;

/* enum nf_inet_hooks */
/** NF_INET_PRE_ROUTING: enum nf_inet_hooks, netfilter.h */
export const NF_INET_PRE_ROUTING = 0;
/** NF_INET_LOCAL_IN: enum nf_inet_hooks, netfilter.h */
export const NF_INET_LOCAL_IN = 1;
/** NF_INET_FORWARD: enum nf_inet_hooks, netfilter.h */
export const NF_INET_FORWARD = 2;
/** NF_INET_LOCAL_OUT: enum nf_inet_hooks, netfilter.h */
export const NF_INET_LOCAL_OUT = 3;
/** NF_INET_POST_ROUTING: enum nf_inet_hooks, netfilter.h */
export const NF_INET_POST_ROUTING = 4;
/** NF_INET_INGRESS: enum nf_inet_hooks, netfilter.h */
export const NF_INET_INGRESS = 5;

/* enum nf_dev_hooks (netdev family) */
/** NF_NETDEV_INGRESS: enum nf_dev_hooks (netdev family), netfilter.h */
export const NF_NETDEV_INGRESS = 0;
/** NF_NETDEV_EGRESS: enum nf_dev_hooks (netdev family), netfilter.h */
export const NF_NETDEV_EGRESS = 1;

/** Standard chain priorities of nft (`enum nf_ip_priority` in netfilter_ipv4.h, the ones nft names). */
export const NF_IP_PRI_RAW = -300;
/** NF_IP_PRI_MANGLE: enum nf_ip_priority, linux/netfilter_ipv4.h */
export const NF_IP_PRI_MANGLE = -150;
/** NF_IP_PRI_NAT_DST: enum nf_ip_priority, linux/netfilter_ipv4.h */
export const NF_IP_PRI_NAT_DST = -100;
/** NF_IP_PRI_FILTER: enum nf_ip_priority, linux/netfilter_ipv4.h */
export const NF_IP_PRI_FILTER = 0;
/** NF_IP_PRI_SECURITY: enum nf_ip_priority, linux/netfilter_ipv4.h */
export const NF_IP_PRI_SECURITY = 50;
/** NF_IP_PRI_NAT_SRC: enum nf_ip_priority, linux/netfilter_ipv4.h */
export const NF_IP_PRI_NAT_SRC = 100;
/** NF_BR_PRI_NAT_DST_BRIDGED: enum nf_br_hook_priorities, linux/netfilter_bridge.h */
export const NF_BR_PRI_NAT_DST_BRIDGED = -300;
/** NF_BR_PRI_FILTER_BRIDGED: enum nf_br_hook_priorities, linux/netfilter_bridge.h */
export const NF_BR_PRI_FILTER_BRIDGED = -200;
/** NF_BR_PRI_NAT_DST_OTHER: enum nf_br_hook_priorities, linux/netfilter_bridge.h */
export const NF_BR_PRI_NAT_DST_OTHER = 100;
/** NF_BR_PRI_NAT_SRC: enum nf_br_hook_priorities, linux/netfilter_bridge.h */
export const NF_BR_PRI_NAT_SRC = 300;

/* Data type ids nft stores in NFTA_SET_KEY_TYPE (nftables' include/datatype.h, informational for the kernel). */
/** nft datatype TYPE_INTEGER */
export const NFT_TYPE_INTEGER = 4;
/** nft datatype TYPE_IPADDR (`ipv4_addr`) */
export const NFT_TYPE_IPADDR = 7;
/** nft datatype TYPE_IP6ADDR (`ipv6_addr`) */
export const NFT_TYPE_IP6ADDR = 8;
/** nft datatype TYPE_MARK (`mark`) */
export const NFT_TYPE_MARK = 19;
/** nft datatype TYPE_INET_SERVICE (`inet_service`) */
export const NFT_TYPE_INET_SERVICE = 13;

/* libnftnl user data TLVs (libnftnl/udata.h): one byte type, one byte length, value. */
/** NFTNL_UDATA_RULE_COMMENT: the rule's `comment "..."`, NUL-terminated. */
export const NFTNL_UDATA_RULE_COMMENT = 0;
/** NFTNL_UDATA_SET_KEYBYTEORDER: u32 host order; 2 = BYTEORDER_BIG_ENDIAN in nft. */
export const NFTNL_UDATA_SET_KEYBYTEORDER = 0;

/* Set data and map values (nf_tables.h enum nft_data_types; nft's include/datatype.h). */
/** NFT_DATA_VALUE: enum nft_data_types, nf_tables.h: NFTA_SET_DATA_TYPE values below 0xffffff00 are nft datatypes (values) */
export const NFT_DATA_VALUE = 0;
/** NFT_DATA_VERDICT: enum nft_data_types, nf_tables.h: NFTA_SET_DATA_TYPE of a verdict map */
export const NFT_DATA_VERDICT = 0xffffff00;
/** nft datatype TYPE_ETHERADDR (`ether_addr`) */
export const NFT_TYPE_ETHERADDR = 9;
/** nft datatype TYPE_INET_PROTOCOL (`inet_proto`) */
export const NFT_TYPE_INET_PROTOCOL = 12;
/** NFTNL_UDATA_SET_DATABYTEORDER: u32 host order, the map values' byte order (1 host, 2 big-endian). */
export const NFTNL_UDATA_SET_DATABYTEORDER = 1;
/** nft's BYTEORDER_HOST_ENDIAN in NFTNL_UDATA_SET_KEYBYTEORDER / _DATABYTEORDER */
export const NFT_BYTEORDER_HOST_ENDIAN = 1;
/** nft's BYTEORDER_BIG_ENDIAN in NFTNL_UDATA_SET_KEYBYTEORDER / _DATABYTEORDER */
export const NFT_BYTEORDER_BIG_ENDIAN = 2;

/* Stateful object types (NFTA_SET_OBJ_TYPE of object maps), nf_tables.h NFT_OBJECT_*. */
/** NFT_OBJECT_COUNTER: nf_tables.h */
export const NFT_OBJECT_COUNTER = 1;
/** NFT_OBJECT_QUOTA: nf_tables.h */
export const NFT_OBJECT_QUOTA = 2;
/** NFT_OBJECT_CT_HELPER: nf_tables.h */
export const NFT_OBJECT_CT_HELPER = 3;
/** NFT_OBJECT_LIMIT: nf_tables.h */
export const NFT_OBJECT_LIMIT = 4;
/** NFT_OBJECT_CONNLIMIT: nf_tables.h */
export const NFT_OBJECT_CONNLIMIT = 5;
/** NFT_OBJECT_TUNNEL: nf_tables.h */
export const NFT_OBJECT_TUNNEL = 6;
/** NFT_OBJECT_CT_TIMEOUT: nf_tables.h */
export const NFT_OBJECT_CT_TIMEOUT = 7;
/** NFT_OBJECT_SECMARK: nf_tables.h */
export const NFT_OBJECT_SECMARK = 8;
/** NFT_OBJECT_CT_EXPECT: nf_tables.h */
export const NFT_OBJECT_CT_EXPECT = 9;
/** NFT_OBJECT_SYNPROXY: nf_tables.h */
export const NFT_OBJECT_SYNPROXY = 10;

// ---------------------------------------------------------------- statements (nf_tables.h)

/* enum nft_ct_keys */
/** NFT_CT_STATE: enum nft_ct_keys, nf_tables.h */
export const NFT_CT_STATE = 0;
/** NFT_CT_DIRECTION: enum nft_ct_keys, nf_tables.h */
export const NFT_CT_DIRECTION = 1;
/** NFT_CT_STATUS: enum nft_ct_keys, nf_tables.h */
export const NFT_CT_STATUS = 2;
/** NFT_CT_MARK: enum nft_ct_keys, nf_tables.h */
export const NFT_CT_MARK = 3;
/** NFT_CT_SECMARK: enum nft_ct_keys, nf_tables.h */
export const NFT_CT_SECMARK = 4;
/** NFT_CT_EXPIRATION: enum nft_ct_keys, nf_tables.h */
export const NFT_CT_EXPIRATION = 5;
/** NFT_CT_HELPER: enum nft_ct_keys, nf_tables.h */
export const NFT_CT_HELPER = 6;
/** NFT_CT_L3PROTOCOL: enum nft_ct_keys, nf_tables.h */
export const NFT_CT_L3PROTOCOL = 7;
/** NFT_CT_SRC: enum nft_ct_keys, nf_tables.h */
export const NFT_CT_SRC = 8;
/** NFT_CT_DST: enum nft_ct_keys, nf_tables.h */
export const NFT_CT_DST = 9;
/** NFT_CT_PROTOCOL: enum nft_ct_keys, nf_tables.h */
export const NFT_CT_PROTOCOL = 10;
/** NFT_CT_PROTO_SRC: enum nft_ct_keys, nf_tables.h */
export const NFT_CT_PROTO_SRC = 11;
/** NFT_CT_PROTO_DST: enum nft_ct_keys, nf_tables.h */
export const NFT_CT_PROTO_DST = 12;
/** NFT_CT_LABELS: enum nft_ct_keys, nf_tables.h */
export const NFT_CT_LABELS = 13;
/** NFT_CT_PKTS: enum nft_ct_keys, nf_tables.h */
export const NFT_CT_PKTS = 14;
/** NFT_CT_BYTES: enum nft_ct_keys, nf_tables.h */
export const NFT_CT_BYTES = 15;
/** NFT_CT_AVGPKT: enum nft_ct_keys, nf_tables.h */
export const NFT_CT_AVGPKT = 16;
/** NFT_CT_ZONE: enum nft_ct_keys, nf_tables.h */
export const NFT_CT_ZONE = 17;
/** NFT_CT_EVENTMASK: enum nft_ct_keys, nf_tables.h */
export const NFT_CT_EVENTMASK = 18;
/** NFT_CT_SRC_IP: enum nft_ct_keys, nf_tables.h */
export const NFT_CT_SRC_IP = 19;
/** NFT_CT_DST_IP: enum nft_ct_keys, nf_tables.h */
export const NFT_CT_DST_IP = 20;
/** NFT_CT_SRC_IP6: enum nft_ct_keys, nf_tables.h */
export const NFT_CT_SRC_IP6 = 21;
/** NFT_CT_DST_IP6: enum nft_ct_keys, nf_tables.h */
export const NFT_CT_DST_IP6 = 22;
/** NFT_CT_ID: enum nft_ct_keys, nf_tables.h */
export const NFT_CT_ID = 23;

/* enum nft_ct_attributes */
/** NFTA_CT_DREG: enum nft_ct_attributes, nf_tables.h */
export const NFTA_CT_DREG = 1;
/** NFTA_CT_KEY: enum nft_ct_attributes, nf_tables.h */
export const NFTA_CT_KEY = 2;
/** NFTA_CT_DIRECTION: enum nft_ct_attributes, nf_tables.h */
export const NFTA_CT_DIRECTION = 3;
/** NFTA_CT_SREG: enum nft_ct_attributes, nf_tables.h */
export const NFTA_CT_SREG = 4;

/* enum nft_limit_type */
/** NFT_LIMIT_PKTS: enum nft_limit_type, nf_tables.h */
export const NFT_LIMIT_PKTS = 0;
/** NFT_LIMIT_PKT_BYTES: enum nft_limit_type, nf_tables.h */
export const NFT_LIMIT_PKT_BYTES = 1;

/* enum nft_limit_attributes */
/** NFTA_LIMIT_RATE: enum nft_limit_attributes, nf_tables.h */
export const NFTA_LIMIT_RATE = 1;
/** NFTA_LIMIT_UNIT: enum nft_limit_attributes, nf_tables.h */
export const NFTA_LIMIT_UNIT = 2;
/** NFTA_LIMIT_BURST: enum nft_limit_attributes, nf_tables.h */
export const NFTA_LIMIT_BURST = 3;
/** NFTA_LIMIT_TYPE: enum nft_limit_attributes, nf_tables.h */
export const NFTA_LIMIT_TYPE = 4;
/** NFTA_LIMIT_FLAGS: enum nft_limit_attributes, nf_tables.h */
export const NFTA_LIMIT_FLAGS = 5;
/** NFTA_LIMIT_PAD: enum nft_limit_attributes, nf_tables.h */
export const NFTA_LIMIT_PAD = 6;

/* enum nft_log_attributes */
/** NFTA_LOG_GROUP: enum nft_log_attributes, nf_tables.h */
export const NFTA_LOG_GROUP = 1;
/** NFTA_LOG_PREFIX: enum nft_log_attributes, nf_tables.h */
export const NFTA_LOG_PREFIX = 2;
/** NFTA_LOG_SNAPLEN: enum nft_log_attributes, nf_tables.h */
export const NFTA_LOG_SNAPLEN = 3;
/** NFTA_LOG_QTHRESHOLD: enum nft_log_attributes, nf_tables.h */
export const NFTA_LOG_QTHRESHOLD = 4;
/** NFTA_LOG_LEVEL: enum nft_log_attributes, nf_tables.h */
export const NFTA_LOG_LEVEL = 5;
/** NFTA_LOG_FLAGS: enum nft_log_attributes, nf_tables.h */
export const NFTA_LOG_FLAGS = 6;

/* enum nft_log_level */
/** NFT_LOGLEVEL_EMERG: enum nft_log_level, nf_tables.h */
export const NFT_LOGLEVEL_EMERG = 0;
/** NFT_LOGLEVEL_ALERT: enum nft_log_level, nf_tables.h */
export const NFT_LOGLEVEL_ALERT = 1;
/** NFT_LOGLEVEL_CRIT: enum nft_log_level, nf_tables.h */
export const NFT_LOGLEVEL_CRIT = 2;
/** NFT_LOGLEVEL_ERR: enum nft_log_level, nf_tables.h */
export const NFT_LOGLEVEL_ERR = 3;
/** NFT_LOGLEVEL_WARNING: enum nft_log_level, nf_tables.h */
export const NFT_LOGLEVEL_WARNING = 4;
/** NFT_LOGLEVEL_NOTICE: enum nft_log_level, nf_tables.h */
export const NFT_LOGLEVEL_NOTICE = 5;
/** NFT_LOGLEVEL_INFO: enum nft_log_level, nf_tables.h */
export const NFT_LOGLEVEL_INFO = 6;
/** NFT_LOGLEVEL_DEBUG: enum nft_log_level, nf_tables.h */
export const NFT_LOGLEVEL_DEBUG = 7;
/** NFT_LOGLEVEL_AUDIT: enum nft_log_level, nf_tables.h */
export const NFT_LOGLEVEL_AUDIT = 8;

/* enum nft_quota_attributes */
/** NFTA_QUOTA_BYTES: enum nft_quota_attributes, nf_tables.h */
export const NFTA_QUOTA_BYTES = 1;
/** NFTA_QUOTA_FLAGS: enum nft_quota_attributes, nf_tables.h */
export const NFTA_QUOTA_FLAGS = 2;
/** NFTA_QUOTA_PAD: enum nft_quota_attributes, nf_tables.h */
export const NFTA_QUOTA_PAD = 3;
/** NFTA_QUOTA_CONSUMED: enum nft_quota_attributes, nf_tables.h */
export const NFTA_QUOTA_CONSUMED = 4;

/* enum nft_reject_types */
/** NFT_REJECT_ICMP_UNREACH: enum nft_reject_types, nf_tables.h */
export const NFT_REJECT_ICMP_UNREACH = 0;
/** NFT_REJECT_TCP_RST: enum nft_reject_types, nf_tables.h */
export const NFT_REJECT_TCP_RST = 1;
/** NFT_REJECT_ICMPX_UNREACH: enum nft_reject_types, nf_tables.h */
export const NFT_REJECT_ICMPX_UNREACH = 2;

/* enum nft_reject_inet_code */
/** NFT_REJECT_ICMPX_NO_ROUTE: enum nft_reject_inet_code, nf_tables.h */
export const NFT_REJECT_ICMPX_NO_ROUTE = 0;
/** NFT_REJECT_ICMPX_PORT_UNREACH: enum nft_reject_inet_code, nf_tables.h */
export const NFT_REJECT_ICMPX_PORT_UNREACH = 1;
/** NFT_REJECT_ICMPX_HOST_UNREACH: enum nft_reject_inet_code, nf_tables.h */
export const NFT_REJECT_ICMPX_HOST_UNREACH = 2;
/** NFT_REJECT_ICMPX_ADMIN_PROHIBITED: enum nft_reject_inet_code, nf_tables.h */
export const NFT_REJECT_ICMPX_ADMIN_PROHIBITED = 3;

/* enum nft_reject_attributes */
/** NFTA_REJECT_TYPE: enum nft_reject_attributes, nf_tables.h */
export const NFTA_REJECT_TYPE = 1;
/** NFTA_REJECT_ICMP_CODE: enum nft_reject_attributes, nf_tables.h */
export const NFTA_REJECT_ICMP_CODE = 2;

/* enum nft_nat_types */
/** NFT_NAT_SNAT: enum nft_nat_types, nf_tables.h */
export const NFT_NAT_SNAT = 0;
/** NFT_NAT_DNAT: enum nft_nat_types, nf_tables.h */
export const NFT_NAT_DNAT = 1;

/* enum nft_nat_attributes */
/** NFTA_NAT_TYPE: enum nft_nat_attributes, nf_tables.h */
export const NFTA_NAT_TYPE = 1;
/** NFTA_NAT_FAMILY: enum nft_nat_attributes, nf_tables.h */
export const NFTA_NAT_FAMILY = 2;
/** NFTA_NAT_REG_ADDR_MIN: enum nft_nat_attributes, nf_tables.h */
export const NFTA_NAT_REG_ADDR_MIN = 3;
/** NFTA_NAT_REG_ADDR_MAX: enum nft_nat_attributes, nf_tables.h */
export const NFTA_NAT_REG_ADDR_MAX = 4;
/** NFTA_NAT_REG_PROTO_MIN: enum nft_nat_attributes, nf_tables.h */
export const NFTA_NAT_REG_PROTO_MIN = 5;
/** NFTA_NAT_REG_PROTO_MAX: enum nft_nat_attributes, nf_tables.h */
export const NFTA_NAT_REG_PROTO_MAX = 6;
/** NFTA_NAT_FLAGS: enum nft_nat_attributes, nf_tables.h */
export const NFTA_NAT_FLAGS = 7;

/* enum nft_masq_attributes */
/** NFTA_MASQ_FLAGS: enum nft_masq_attributes, nf_tables.h */
export const NFTA_MASQ_FLAGS = 1;
/** NFTA_MASQ_REG_PROTO_MIN: enum nft_masq_attributes, nf_tables.h */
export const NFTA_MASQ_REG_PROTO_MIN = 2;
/** NFTA_MASQ_REG_PROTO_MAX: enum nft_masq_attributes, nf_tables.h */
export const NFTA_MASQ_REG_PROTO_MAX = 3;

/* enum nft_redir_attributes */
/** NFTA_REDIR_REG_PROTO_MIN: enum nft_redir_attributes, nf_tables.h */
export const NFTA_REDIR_REG_PROTO_MIN = 1;
/** NFTA_REDIR_REG_PROTO_MAX: enum nft_redir_attributes, nf_tables.h */
export const NFTA_REDIR_REG_PROTO_MAX = 2;
/** NFTA_REDIR_FLAGS: enum nft_redir_attributes, nf_tables.h */
export const NFTA_REDIR_FLAGS = 3;

/* enum nft_fib_attributes */
/** NFTA_FIB_DREG: enum nft_fib_attributes, nf_tables.h */
export const NFTA_FIB_DREG = 1;
/** NFTA_FIB_RESULT: enum nft_fib_attributes, nf_tables.h */
export const NFTA_FIB_RESULT = 2;
/** NFTA_FIB_FLAGS: enum nft_fib_attributes, nf_tables.h */
export const NFTA_FIB_FLAGS = 3;

/* enum nft_fib_result */
/** NFT_FIB_RESULT_UNSPEC: enum nft_fib_result, nf_tables.h */
export const NFT_FIB_RESULT_UNSPEC = 0;
/** NFT_FIB_RESULT_OIF: enum nft_fib_result, nf_tables.h */
export const NFT_FIB_RESULT_OIF = 1;
/** NFT_FIB_RESULT_OIFNAME: enum nft_fib_result, nf_tables.h */
export const NFT_FIB_RESULT_OIFNAME = 2;
/** NFT_FIB_RESULT_ADDRTYPE: enum nft_fib_result, nf_tables.h */
export const NFT_FIB_RESULT_ADDRTYPE = 3;

/* enum nft_object_attributes */
/** NFTA_OBJ_TABLE: enum nft_object_attributes, nf_tables.h */
export const NFTA_OBJ_TABLE = 1;
/** NFTA_OBJ_NAME: enum nft_object_attributes, nf_tables.h */
export const NFTA_OBJ_NAME = 2;
/** NFTA_OBJ_TYPE: enum nft_object_attributes, nf_tables.h */
export const NFTA_OBJ_TYPE = 3;
/** NFTA_OBJ_DATA: enum nft_object_attributes, nf_tables.h */
export const NFTA_OBJ_DATA = 4;
/** NFTA_OBJ_USE: enum nft_object_attributes, nf_tables.h */
export const NFTA_OBJ_USE = 5;
/** NFTA_OBJ_HANDLE: enum nft_object_attributes, nf_tables.h */
export const NFTA_OBJ_HANDLE = 6;
/** NFTA_OBJ_PAD: enum nft_object_attributes, nf_tables.h */
export const NFTA_OBJ_PAD = 7;
/** NFTA_OBJ_USERDATA: enum nft_object_attributes, nf_tables.h */
export const NFTA_OBJ_USERDATA = 8;

/* enum nft_objref_attributes */
/** NFTA_OBJREF_IMM_TYPE: enum nft_objref_attributes, nf_tables.h */
export const NFTA_OBJREF_IMM_TYPE = 1;
/** NFTA_OBJREF_IMM_NAME: enum nft_objref_attributes, nf_tables.h */
export const NFTA_OBJREF_IMM_NAME = 2;
/** NFTA_OBJREF_SET_SREG: enum nft_objref_attributes, nf_tables.h */
export const NFTA_OBJREF_SET_SREG = 3;
/** NFTA_OBJREF_SET_NAME: enum nft_objref_attributes, nf_tables.h */
export const NFTA_OBJREF_SET_NAME = 4;
/** NFTA_OBJREF_SET_ID: enum nft_objref_attributes, nf_tables.h */
export const NFTA_OBJREF_SET_ID = 5;

/* flags */
/** NFT_LIMIT_F_INV: enum nft_limit_flags, nf_tables.h: `over` */
export const NFT_LIMIT_F_INV = 1 << 0;
/** NFT_QUOTA_F_INV: enum nft_quota_flags, nf_tables.h: `over` */
export const NFT_QUOTA_F_INV = 1 << 0;
/** NFT_QUOTA_F_DEPLETED: enum nft_quota_flags, nf_tables.h */
export const NFT_QUOTA_F_DEPLETED = 1 << 1;
/** NFTA_FIB_F_SADDR: enum nft_fib_flags, nf_tables.h: look up the source address */
export const NFTA_FIB_F_SADDR = 1 << 0;
/** NFTA_FIB_F_DADDR: enum nft_fib_flags, nf_tables.h: look up the destination address */
export const NFTA_FIB_F_DADDR = 1 << 1;
/** NFTA_FIB_F_MARK: enum nft_fib_flags, nf_tables.h: use skb->mark */
export const NFTA_FIB_F_MARK = 1 << 2;
/** NFTA_FIB_F_IIF: enum nft_fib_flags, nf_tables.h: restrict to iif */
export const NFTA_FIB_F_IIF = 1 << 3;
/** NFTA_FIB_F_OIF: enum nft_fib_flags, nf_tables.h: restrict to oif */
export const NFTA_FIB_F_OIF = 1 << 4;
/** NFTA_FIB_F_PRESENT: enum nft_fib_flags, nf_tables.h: check existence only */
export const NFTA_FIB_F_PRESENT = 1 << 5;
/** NF_LOG_TCPSEQ: linux/netfilter/nf_log.h: log TCP sequence numbers */
export const NF_LOG_TCPSEQ = 0x01;
/** NF_LOG_TCPOPT: linux/netfilter/nf_log.h: log TCP options */
export const NF_LOG_TCPOPT = 0x02;
/** NF_LOG_IPOPT: linux/netfilter/nf_log.h: log IP options */
export const NF_LOG_IPOPT = 0x04;
/** NF_LOG_UID: linux/netfilter/nf_log.h: log the UID owning the local socket */
export const NF_LOG_UID = 0x08;
/** NF_LOG_MACDECODE: linux/netfilter/nf_log.h: decode the MAC header */
export const NF_LOG_MACDECODE = 0x20;
/** NF_LOG_MASK: linux/netfilter/nf_log.h: every flag above */
export const NF_LOG_MASK = 0x2f;
/** NF_NAT_RANGE_MAP_IPS: linux/netfilter/nf_nat.h: an address range is given */
export const NF_NAT_RANGE_MAP_IPS = 1 << 0;
/** NF_NAT_RANGE_PROTO_SPECIFIED: linux/netfilter/nf_nat.h: a port range is given */
export const NF_NAT_RANGE_PROTO_SPECIFIED = 1 << 1;
/** NF_NAT_RANGE_PROTO_RANDOM: linux/netfilter/nf_nat.h: `random` */
export const NF_NAT_RANGE_PROTO_RANDOM = 1 << 2;
/** NF_NAT_RANGE_PERSISTENT: linux/netfilter/nf_nat.h: `persistent` */
export const NF_NAT_RANGE_PERSISTENT = 1 << 3;
/** NF_NAT_RANGE_PROTO_RANDOM_FULLY: linux/netfilter/nf_nat.h: `fully-random` */
export const NF_NAT_RANGE_PROTO_RANDOM_FULLY = 1 << 4;
/** NF_NAT_RANGE_PROTO_OFFSET: linux/netfilter/nf_nat.h */
export const NF_NAT_RANGE_PROTO_OFFSET = 1 << 5;
/** NF_NAT_RANGE_NETMAP: linux/netfilter/nf_nat.h: `prefix` */
export const NF_NAT_RANGE_NETMAP = 1 << 6;

/* enum nft_byteorder_ops */
/** NFT_BYTEORDER_NTOH: enum nft_byteorder_ops, nf_tables.h */
export const NFT_BYTEORDER_NTOH = 0;
/** NFT_BYTEORDER_HTON: enum nft_byteorder_ops, nf_tables.h */
export const NFT_BYTEORDER_HTON = 1;
/* enum nft_byteorder_attributes */
/** NFTA_BYTEORDER_SREG: enum nft_byteorder_attributes, nf_tables.h */
export const NFTA_BYTEORDER_SREG = 1;
/** NFTA_BYTEORDER_DREG: enum nft_byteorder_attributes, nf_tables.h */
export const NFTA_BYTEORDER_DREG = 2;
/** NFTA_BYTEORDER_OP: enum nft_byteorder_attributes, nf_tables.h */
export const NFTA_BYTEORDER_OP = 3;
/** NFTA_BYTEORDER_LEN: enum nft_byteorder_attributes, nf_tables.h */
export const NFTA_BYTEORDER_LEN = 4;
/** NFTA_BYTEORDER_SIZE: enum nft_byteorder_attributes, nf_tables.h */
export const NFTA_BYTEORDER_SIZE = 5;

/* enum nft_range_ops */
/** NFT_RANGE_EQ: enum nft_range_ops, nf_tables.h */
export const NFT_RANGE_EQ = 0;
/** NFT_RANGE_NEQ: enum nft_range_ops, nf_tables.h */
export const NFT_RANGE_NEQ = 1;
/* enum nft_range_attributes */
/** NFTA_RANGE_SREG: enum nft_range_attributes, nf_tables.h */
export const NFTA_RANGE_SREG = 1;
/** NFTA_RANGE_OP: enum nft_range_attributes, nf_tables.h */
export const NFTA_RANGE_OP = 2;
/** NFTA_RANGE_FROM_DATA: enum nft_range_attributes, nf_tables.h */
export const NFTA_RANGE_FROM_DATA = 3;
/** NFTA_RANGE_TO_DATA: enum nft_range_attributes, nf_tables.h */
export const NFTA_RANGE_TO_DATA = 4;

/* enum nft_connlimit_flags / enum nft_connlimit_attributes */
/** NFT_CONNLIMIT_F_INV: enum nft_connlimit_flags, nf_tables.h: `over` */
export const NFT_CONNLIMIT_F_INV = 1 << 0;
/** NFTA_CONNLIMIT_COUNT: enum nft_connlimit_attributes, nf_tables.h */
export const NFTA_CONNLIMIT_COUNT = 1;
/** NFTA_CONNLIMIT_FLAGS: enum nft_connlimit_attributes, nf_tables.h */
export const NFTA_CONNLIMIT_FLAGS = 2;

/* enum nft_queue_attributes (the native `queue` expression, nft_queue) */
/** NFTA_QUEUE_NUM: enum nft_queue_attributes, nf_tables.h: NLA_U16 (big-endian), the first queue */
export const NFTA_QUEUE_NUM = 1;
/** NFTA_QUEUE_TOTAL: enum nft_queue_attributes, nf_tables.h: NLA_U16, how many queues (load balancing) */
export const NFTA_QUEUE_TOTAL = 2;
/** NFTA_QUEUE_FLAGS: enum nft_queue_attributes, nf_tables.h: NLA_U16, NFT_QUEUE_FLAG_* */
export const NFTA_QUEUE_FLAGS = 3;
/** NFTA_QUEUE_SREG_QNUM: enum nft_queue_attributes, nf_tables.h: NLA_U32, the register holding the queue number */
export const NFTA_QUEUE_SREG_QNUM = 4;
/** NFT_QUEUE_FLAG_BYPASS: nf_tables.h: nobody bound to the queue, the packet passes */
export const NFT_QUEUE_FLAG_BYPASS = 0x01;
/** NFT_QUEUE_FLAG_CPU_FANOUT: nf_tables.h: the queue is chosen by the current CPU, not a hash */
export const NFT_QUEUE_FLAG_CPU_FANOUT = 0x02;

/* enum nft_target_attributes / nft_match_attributes (nft_compat, nf_tables_compat.h) */
/** NFTA_TARGET_NAME: enum nft_target_attributes, nf_tables_compat.h: NLA_NUL_STRING, the xt target's name */
export const NFTA_TARGET_NAME = 1;
/** NFTA_TARGET_REV: enum nft_target_attributes, nf_tables_compat.h: NLA_U32 (big-endian), its revision */
export const NFTA_TARGET_REV = 2;
/** NFTA_TARGET_INFO: enum nft_target_attributes, nf_tables_compat.h: NLA_BINARY, the target's struct, host order */
export const NFTA_TARGET_INFO = 3;
/** NFT_COMPAT_NAME_MAX: nf_tables_compat.h: an xt extension's name, NUL included */
export const NFT_COMPAT_NAME_MAX = 32;
/** NFNL_MSG_COMPAT_GET: nf_tables_compat.h: ask whether the kernel has an xt match/target revision */
export const NFNL_MSG_COMPAT_GET = 0;
/** NFTA_COMPAT_NAME: nf_tables_compat.h: NLA_NUL_STRING */
export const NFTA_COMPAT_NAME = 1;
/** NFTA_COMPAT_REV: nf_tables_compat.h: NLA_U32 (big-endian), the highest revision wanted / found */
export const NFTA_COMPAT_REV = 2;
/** NFTA_COMPAT_TYPE: nf_tables_compat.h: NLA_U32 (big-endian), 1 target, 0 match */
export const NFTA_COMPAT_TYPE = 3;
/** NFT_COMPAT_TARGET: the value of NFTA_COMPAT_TYPE for a target (nft_compat.c: `target = ntohl(...)`) */
export const NFT_COMPAT_TARGET = 1;
/** NFQ_FLAG_BYPASS: linux/netfilter/xt_NFQUEUE.h, xt_NFQ_info_v2/v3 */
export const NFQ_FLAG_BYPASS = 0x01;
/** NFQ_FLAG_CPU_FANOUT: linux/netfilter/xt_NFQUEUE.h, xt_NFQ_info_v3 */
export const NFQ_FLAG_CPU_FANOUT = 0x02;
/** NFTA_NG_DREG: enum nft_ng_attributes, nf_tables.h */
export const NFTA_NG_DREG = 1;
/** NFTA_NG_MODULUS: enum nft_ng_attributes, nf_tables.h */
export const NFTA_NG_MODULUS = 2;
/** NFTA_NG_TYPE: enum nft_ng_attributes, nf_tables.h */
export const NFTA_NG_TYPE = 3;
/** NFTA_NG_OFFSET: enum nft_ng_attributes, nf_tables.h */
export const NFTA_NG_OFFSET = 4;
/** NFT_NG_INCREMENTAL: enum nft_ng_types, nf_tables.h */
export const NFT_NG_INCREMENTAL = 0;
/** NFT_NG_RANDOM: enum nft_ng_types, nf_tables.h */
export const NFT_NG_RANDOM = 1;
/** NFTA_HASH_SREG: enum nft_hash_attributes, nf_tables.h */
export const NFTA_HASH_SREG = 1;
/** NFTA_HASH_DREG: enum nft_hash_attributes, nf_tables.h */
export const NFTA_HASH_DREG = 2;
/** NFTA_HASH_LEN: enum nft_hash_attributes, nf_tables.h */
export const NFTA_HASH_LEN = 3;
/** NFTA_HASH_MODULUS: enum nft_hash_attributes, nf_tables.h */
export const NFTA_HASH_MODULUS = 4;
/** NFTA_HASH_SEED: enum nft_hash_attributes, nf_tables.h */
export const NFTA_HASH_SEED = 5;
/** NFTA_HASH_OFFSET: enum nft_hash_attributes, nf_tables.h */
export const NFTA_HASH_OFFSET = 6;
/** NFTA_HASH_TYPE: enum nft_hash_attributes, nf_tables.h */
export const NFTA_HASH_TYPE = 7;
/** NFT_HASH_JENKINS: enum nft_hash_types, nf_tables.h */
export const NFT_HASH_JENKINS = 0;
/** NFT_HASH_SYM: enum nft_hash_types, nf_tables.h */
export const NFT_HASH_SYM = 1;
/** NFTA_EXTHDR_DREG: enum nft_exthdr_attributes, nf_tables.h */
export const NFTA_EXTHDR_DREG = 1;
/** NFTA_EXTHDR_TYPE: enum nft_exthdr_attributes, nf_tables.h */
export const NFTA_EXTHDR_TYPE = 2;
/** NFTA_EXTHDR_OFFSET: enum nft_exthdr_attributes, nf_tables.h */
export const NFTA_EXTHDR_OFFSET = 3;
/** NFTA_EXTHDR_LEN: enum nft_exthdr_attributes, nf_tables.h */
export const NFTA_EXTHDR_LEN = 4;
/** NFTA_EXTHDR_FLAGS: enum nft_exthdr_attributes, nf_tables.h */
export const NFTA_EXTHDR_FLAGS = 5;
/** NFTA_EXTHDR_OP: enum nft_exthdr_attributes, nf_tables.h */
export const NFTA_EXTHDR_OP = 6;
/** NFTA_EXTHDR_SREG: enum nft_exthdr_attributes, nf_tables.h */
export const NFTA_EXTHDR_SREG = 7;
/** NFT_EXTHDR_OP_IPV6: enum nft_exthdr_op, nf_tables.h */
export const NFT_EXTHDR_OP_IPV6 = 0;
/** NFT_EXTHDR_OP_TCPOPT: enum nft_exthdr_op, nf_tables.h */
export const NFT_EXTHDR_OP_TCPOPT = 1;
/** NFT_EXTHDR_OP_IPV4: enum nft_exthdr_op, nf_tables.h */
export const NFT_EXTHDR_OP_IPV4 = 2;
/** NFT_EXTHDR_OP_SCTP: enum nft_exthdr_op, nf_tables.h */
export const NFT_EXTHDR_OP_SCTP = 3;
/** NFTA_TPROXY_FAMILY: enum nft_tproxy_attributes, nf_tables.h */
export const NFTA_TPROXY_FAMILY = 1;
/** NFTA_TPROXY_REG_ADDR: enum nft_tproxy_attributes, nf_tables.h */
export const NFTA_TPROXY_REG_ADDR = 2;
/** NFTA_TPROXY_REG_PORT: enum nft_tproxy_attributes, nf_tables.h */
export const NFTA_TPROXY_REG_PORT = 3;
/** NFTA_DYNSET_SET_NAME: enum nft_dynset_attributes, nf_tables.h */
export const NFTA_DYNSET_SET_NAME = 1;
/** NFTA_DYNSET_SET_ID: enum nft_dynset_attributes, nf_tables.h */
export const NFTA_DYNSET_SET_ID = 2;
/** NFTA_DYNSET_OP: enum nft_dynset_attributes, nf_tables.h */
export const NFTA_DYNSET_OP = 3;
/** NFTA_DYNSET_SREG_KEY: enum nft_dynset_attributes, nf_tables.h */
export const NFTA_DYNSET_SREG_KEY = 4;
/** NFTA_DYNSET_SREG_DATA: enum nft_dynset_attributes, nf_tables.h */
export const NFTA_DYNSET_SREG_DATA = 5;
/** NFTA_DYNSET_TIMEOUT: enum nft_dynset_attributes, nf_tables.h */
export const NFTA_DYNSET_TIMEOUT = 6;
/** NFTA_DYNSET_EXPR: enum nft_dynset_attributes, nf_tables.h */
export const NFTA_DYNSET_EXPR = 7;
/** NFTA_DYNSET_PAD: enum nft_dynset_attributes, nf_tables.h */
export const NFTA_DYNSET_PAD = 8;
/** NFTA_DYNSET_FLAGS: enum nft_dynset_attributes, nf_tables.h */
export const NFTA_DYNSET_FLAGS = 9;
/** NFTA_DYNSET_EXPRESSIONS: enum nft_dynset_attributes, nf_tables.h */
export const NFTA_DYNSET_EXPRESSIONS = 10;
/** NFT_DYNSET_OP_ADD: enum nft_dynset_ops, nf_tables.h */
export const NFT_DYNSET_OP_ADD = 0;
/** NFT_DYNSET_OP_UPDATE: enum nft_dynset_ops, nf_tables.h */
export const NFT_DYNSET_OP_UPDATE = 1;
/** NFT_DYNSET_OP_DELETE: enum nft_dynset_ops, nf_tables.h */
export const NFT_DYNSET_OP_DELETE = 2;
/** NFT_EXTHDR_F_PRESENT: enum nft_exthdr_flags, nf_tables.h */
export const NFT_EXTHDR_F_PRESENT = 1;
/** NFTA_SET_DESC_SIZE: enum nft_set_desc_attributes, nf_tables.h */
export const NFTA_SET_DESC_SIZE = 1;
/** NFTA_SET_DESC_CONCAT: enum nft_set_desc_attributes, nf_tables.h */
export const NFTA_SET_DESC_CONCAT = 2;
/** NFTNL_UDATA_TABLE_COMMENT: libnftnl udata.h, a table's `comment "..."` (NUL-terminated; also NFTNL_UDATA_CHAIN_COMMENT, _SET_ELEM_COMMENT) */
export const NFTNL_UDATA_TABLE_COMMENT = 0;
/** NFTNL_UDATA_CHAIN_COMMENT: libnftnl udata.h, a chain's `comment "..."`, NUL-terminated */
export const NFTNL_UDATA_CHAIN_COMMENT = 0;
/** NFTNL_UDATA_SET_ELEM_COMMENT: libnftnl udata.h, a set element's `comment "..."`, NUL-terminated */
export const NFTNL_UDATA_SET_ELEM_COMMENT = 0;
/** NFTNL_UDATA_OBJ_COMMENT: libnftnl udata.h, a named object's `comment "..."` (NFTA_OBJ_USERDATA), NUL-terminated */
export const NFTNL_UDATA_OBJ_COMMENT = 0;
/** NFTNL_UDATA_SET_DATA_INTERVAL: libnftnl udata.h, whether a map's values are intervals (`: interval ipv4_addr`; u32 host order, 1 or 0) */
export const NFTNL_UDATA_SET_DATA_INTERVAL = 6;
/** NFTNL_UDATA_SET_COMMENT: libnftnl udata.h, a set's `comment "..."`, NUL-terminated */
export const NFTNL_UDATA_SET_COMMENT = 7;
/** NFTNL_UDATA_SET_MERGE_ELEMENTS: libnftnl udata.h, nft's `auto-merge` (u32 host order, 1) */
export const NFTNL_UDATA_SET_MERGE_ELEMENTS = 2;
/** NFTNL_UDATA_SET_KEY_TYPEOF: libnftnl udata.h, the expression of a set declared with `typeof` */
export const NFTNL_UDATA_SET_KEY_TYPEOF = 3;
/** NFTNL_UDATA_SET_DATA_TYPEOF: libnftnl udata.h, the value expression of a map declared with `typeof` */
export const NFTNL_UDATA_SET_DATA_TYPEOF = 4;
/** NFT_SET_POL_MEMORY: enum nft_set_policies, nf_tables.h (nft's `policy memory`) */
export const NFT_SET_POL_MEMORY = 1;
/** NFTA_CT_HELPER_NAME: enum nft_ct_helper_attributes, nf_tables.h (NLA_STRING) */
export const NFTA_CT_HELPER_NAME = 1;
/** NFTA_CT_HELPER_L3PROTO: enum nft_ct_helper_attributes, nf_tables.h (NLA_U16, big-endian NFPROTO_*) */
export const NFTA_CT_HELPER_L3PROTO = 2;
/** NFTA_CT_HELPER_L4PROTO: enum nft_ct_helper_attributes, nf_tables.h (NLA_U8) */
export const NFTA_CT_HELPER_L4PROTO = 3;
/** NFTA_CT_TIMEOUT_L3PROTO: enum nft_ct_timeout_timeout_attributes, nf_tables.h (NLA_U16, big-endian NFPROTO_*) */
export const NFTA_CT_TIMEOUT_L3PROTO = 1;
/** NFTA_CT_TIMEOUT_L4PROTO: enum nft_ct_timeout_timeout_attributes, nf_tables.h (NLA_U8, IPPROTO_*) */
export const NFTA_CT_TIMEOUT_L4PROTO = 2;
/** NFTA_CT_TIMEOUT_DATA: enum nft_ct_timeout_timeout_attributes, nf_tables.h (nest of CTA_TIMEOUT_<proto>_*: NLA_U32 big-endian seconds) */
export const NFTA_CT_TIMEOUT_DATA = 3;
/** NFTA_CT_EXPECT_L3PROTO: enum nft_ct_expectation_attributes, nf_tables.h (NLA_U16, big-endian NFPROTO_*) */
export const NFTA_CT_EXPECT_L3PROTO = 1;
/** NFTA_CT_EXPECT_L4PROTO: enum nft_ct_expectation_attributes, nf_tables.h (NLA_U8, IPPROTO_*) */
export const NFTA_CT_EXPECT_L4PROTO = 2;
/** NFTA_CT_EXPECT_DPORT: enum nft_ct_expectation_attributes, nf_tables.h (NLA_U16, big-endian) */
export const NFTA_CT_EXPECT_DPORT = 3;
/** NFTA_CT_EXPECT_TIMEOUT: enum nft_ct_expectation_attributes, nf_tables.h (NLA_U32, host order, milliseconds) */
export const NFTA_CT_EXPECT_TIMEOUT = 4;
/** NFTA_CT_EXPECT_SIZE: enum nft_ct_expectation_attributes, nf_tables.h (NLA_U8) */
export const NFTA_CT_EXPECT_SIZE = 5;
/** NFTA_SYNPROXY_MSS: enum nft_synproxy_attributes, nf_tables.h (NLA_U16, big-endian) */
export const NFTA_SYNPROXY_MSS = 1;
/** NFTA_SYNPROXY_WSCALE: enum nft_synproxy_attributes, nf_tables.h (NLA_U8) */
export const NFTA_SYNPROXY_WSCALE = 2;
/** NFTA_SYNPROXY_FLAGS: enum nft_synproxy_attributes, nf_tables.h (NLA_U32, big-endian NF_SYNPROXY_OPT_*) */
export const NFTA_SYNPROXY_FLAGS = 3;
/** NF_SYNPROXY_OPT_MSS: linux/netfilter/nf_synproxy.h */
export const NF_SYNPROXY_OPT_MSS = 0x01;
/** NF_SYNPROXY_OPT_WSCALE: linux/netfilter/nf_synproxy.h */
export const NF_SYNPROXY_OPT_WSCALE = 0x02;
/** NF_SYNPROXY_OPT_SACK_PERM: linux/netfilter/nf_synproxy.h */
export const NF_SYNPROXY_OPT_SACK_PERM = 0x04;
/** NF_SYNPROXY_OPT_TIMESTAMP: linux/netfilter/nf_synproxy.h */
export const NF_SYNPROXY_OPT_TIMESTAMP = 0x08;
/** NFTA_FLOWTABLE_TABLE: enum nft_flowtable_attributes, nf_tables.h */
export const NFTA_FLOWTABLE_TABLE = 1;
/** NFTA_FLOWTABLE_NAME: enum nft_flowtable_attributes, nf_tables.h */
export const NFTA_FLOWTABLE_NAME = 2;
/** NFTA_FLOWTABLE_HANDLE: enum nft_flowtable_attributes, nf_tables.h (NLA_U64) */
export const NFTA_FLOWTABLE_HANDLE = 5;
/** NFTA_SOCKET_KEY: enum nft_socket_attributes, nf_tables.h (NLA_U32, enum nft_socket_keys) */
export const NFTA_SOCKET_KEY = 1;
/** NFTA_SOCKET_DREG: enum nft_socket_attributes, nf_tables.h */
export const NFTA_SOCKET_DREG = 2;
/** NFTA_SOCKET_LEVEL: enum nft_socket_attributes, nf_tables.h (cgroupv2 ancestor level) */
export const NFTA_SOCKET_LEVEL = 3;

/* The routing expression (`rt`). */
/** NFTA_RT_DREG: enum nft_rt_attributes, nf_tables.h */
export const NFTA_RT_DREG = 1;
/** NFTA_RT_KEY: enum nft_rt_attributes, nf_tables.h */
export const NFTA_RT_KEY = 2;

/* Passive OS fingerprinting (`osf`). */
/** NFTA_OSF_DREG: enum nft_osf_attributes, nf_tables.h */
export const NFTA_OSF_DREG = 1;
/** NFTA_OSF_TTL: enum nft_osf_attributes, nf_tables.h (NLA_U8: 0 true, 1 loose, 2 skip) */
export const NFTA_OSF_TTL = 2;
/** NFTA_OSF_FLAGS: enum nft_osf_attributes, nf_tables.h (NLA_U32, NFT_OSF_F_*) */
export const NFTA_OSF_FLAGS = 3;
/** NFT_OSF_F_VERSION: enum nft_osf_flags, nf_tables.h (the register holds `genre:version`) */
export const NFT_OSF_F_VERSION = 1;
/** NFT_OSF_MAXGENRELEN: nf_tables.h, bytes of the genre a register holds */
export const NFT_OSF_MAXGENRELEN = 16;

/* Duplicating and forwarding packets (`dup`, `fwd`). */
/** NFTA_DUP_SREG_ADDR: enum nft_dup_attributes, nf_tables.h */
export const NFTA_DUP_SREG_ADDR = 1;
/** NFTA_DUP_SREG_DEV: enum nft_dup_attributes, nf_tables.h */
export const NFTA_DUP_SREG_DEV = 2;
/** NFTA_FWD_SREG_DEV: enum nft_fwd_attributes, nf_tables.h */
export const NFTA_FWD_SREG_DEV = 1;
/** NFTA_FWD_SREG_ADDR: enum nft_fwd_attributes, nf_tables.h */
export const NFTA_FWD_SREG_ADDR = 2;
/** NFTA_FWD_NFPROTO: enum nft_fwd_attributes, nf_tables.h (NLA_U32, NFPROTO_IPV4 / NFPROTO_IPV6) */
export const NFTA_FWD_NFPROTO = 3;
/** NFT_SOCKET_CGROUPV2: enum nft_socket_keys, nf_tables.h (a u64 cgroup id, the directory's inode) */
export const NFT_SOCKET_CGROUPV2 = 3;
