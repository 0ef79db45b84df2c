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
export const NFNL_SUBSYS_NONE = 0;
export const NFNL_SUBSYS_CTNETLINK = 1;
export const NFNL_SUBSYS_CTNETLINK_EXP = 2;
export const NFNL_SUBSYS_QUEUE = 3;
export const NFNL_SUBSYS_ULOG = 4;
export const NFNL_SUBSYS_OSF = 5;
export const NFNL_SUBSYS_IPSET = 6;
export const NFNL_SUBSYS_ACCT = 7;
export const NFNL_SUBSYS_CTNETLINK_TIMEOUT = 8;
export const NFNL_SUBSYS_CTHELPER = 9;
export const NFNL_SUBSYS_NFTABLES = 10;
export const NFNL_SUBSYS_NFT_COMPAT = 11;
export const NFNL_SUBSYS_HOOK = 12;

/** Reserved control messages (NLMSG_MIN_TYPE and NLMSG_MIN_TYPE+1): not subsystem-prefixed. */
export const NFNL_MSG_BATCH_BEGIN = 0x10;
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
export const NFT_REG_VERDICT = 0;
export const NFT_REG_1 = 1;
export const NFT_REG_2 = 2;
export const NFT_REG_3 = 3;
export const NFT_REG_4 = 4;
export const NFT_REG32_00 = 8;

/* enum nft_verdicts (share the number space of the NF_* verdicts of netfilter.h) */
export const NFT_CONTINUE = -1;
export const NFT_BREAK = -2;
export const NFT_JUMP = -3;
export const NFT_GOTO = -4;
export const NFT_RETURN = -5;
/* linux/netfilter.h */
export const NF_DROP = 0;
export const NF_ACCEPT = 1;
export const NF_STOLEN = 2;
export const NF_QUEUE = 3;
export const NF_REPEAT = 4;
export const NF_STOP = 5;

/* enum nf_tables_msg_types: the low byte of nlmsg_type, subsystem NFNL_SUBSYS_NFTABLES */
export const NFT_MSG_NEWTABLE = 0;
export const NFT_MSG_GETTABLE = 1;
export const NFT_MSG_DELTABLE = 2;
export const NFT_MSG_NEWCHAIN = 3;
export const NFT_MSG_GETCHAIN = 4;
export const NFT_MSG_DELCHAIN = 5;
export const NFT_MSG_NEWRULE = 6;
export const NFT_MSG_GETRULE = 7;
export const NFT_MSG_DELRULE = 8;
export const NFT_MSG_NEWSET = 9;
export const NFT_MSG_GETSET = 10;
export const NFT_MSG_DELSET = 11;
export const NFT_MSG_NEWSETELEM = 12;
export const NFT_MSG_GETSETELEM = 13;
export const NFT_MSG_DELSETELEM = 14;
export const NFT_MSG_NEWGEN = 15;
export const NFT_MSG_GETGEN = 16;
export const NFT_MSG_TRACE = 17;
export const NFT_MSG_NEWOBJ = 18;
export const NFT_MSG_GETOBJ = 19;
export const NFT_MSG_DELOBJ = 20;
export const NFT_MSG_GETOBJ_RESET = 21;
export const NFT_MSG_NEWFLOWTABLE = 22;
export const NFT_MSG_GETFLOWTABLE = 23;
export const NFT_MSG_DELFLOWTABLE = 24;
/* Linux 6.3+ */
export const NFT_MSG_GETRULE_RESET = 25;
export const NFT_MSG_DESTROYTABLE = 26;
export const NFT_MSG_DESTROYCHAIN = 27;
export const NFT_MSG_DESTROYRULE = 28;
export const NFT_MSG_DESTROYSET = 29;
export const NFT_MSG_DESTROYSETELEM = 30;
export const NFT_MSG_DESTROYOBJ = 31;
export const NFT_MSG_DESTROYFLOWTABLE = 32;
export const NFT_MSG_GETSETELEM_RESET = 33;

/* enum nft_list_attributes */
export const NFTA_LIST_ELEM = 1;

/* enum nft_hook_attributes */
export const NFTA_HOOK_HOOKNUM = 1;
export const NFTA_HOOK_PRIORITY = 2;
export const NFTA_HOOK_DEV = 3;
export const NFTA_HOOK_DEVS = 4;

/* enum nft_table_flags */
export const NFT_TABLE_F_DORMANT = 0x1;
export const NFT_TABLE_F_OWNER = 0x2;

/* enum nft_table_attributes */
export const NFTA_TABLE_NAME = 1;
export const NFTA_TABLE_FLAGS = 2;
export const NFTA_TABLE_USE = 3;
export const NFTA_TABLE_HANDLE = 4;
export const NFTA_TABLE_PAD = 5;
export const NFTA_TABLE_USERDATA = 6;
export const NFTA_TABLE_OWNER = 7;

/* enum nft_chain_flags */
export const NFT_CHAIN_BASE = 1 << 0;
export const NFT_CHAIN_HW_OFFLOAD = 1 << 1;
export const NFT_CHAIN_BINDING = 1 << 2;

/* enum nft_chain_attributes */
export const NFTA_CHAIN_TABLE = 1;
export const NFTA_CHAIN_HANDLE = 2;
export const NFTA_CHAIN_NAME = 3;
export const NFTA_CHAIN_HOOK = 4;
export const NFTA_CHAIN_POLICY = 5;
export const NFTA_CHAIN_USE = 6;
export const NFTA_CHAIN_TYPE = 7;
export const NFTA_CHAIN_COUNTERS = 8;
export const NFTA_CHAIN_PAD = 9;
export const NFTA_CHAIN_FLAGS = 10;
export const NFTA_CHAIN_ID = 11;
export const NFTA_CHAIN_USERDATA = 12;

/* enum nft_rule_attributes */
export const NFTA_RULE_TABLE = 1;
export const NFTA_RULE_CHAIN = 2;
export const NFTA_RULE_HANDLE = 3;
export const NFTA_RULE_EXPRESSIONS = 4;
export const NFTA_RULE_COMPAT = 5;
export const NFTA_RULE_POSITION = 6;
export const NFTA_RULE_USERDATA = 7;
export const NFTA_RULE_PAD = 8;
export const NFTA_RULE_ID = 9;
export const NFTA_RULE_POSITION_ID = 10;
export const NFTA_RULE_CHAIN_ID = 11;

/* enum nft_set_flags */
export const NFT_SET_ANONYMOUS = 0x1;
export const NFT_SET_CONSTANT = 0x2;
export const NFT_SET_INTERVAL = 0x4;
export const NFT_SET_MAP = 0x8;
export const NFT_SET_TIMEOUT = 0x10;
export const NFT_SET_EVAL = 0x20;
export const NFT_SET_OBJECT = 0x40;
export const NFT_SET_CONCAT = 0x80;
export const NFT_SET_EXPR = 0x100;

/* enum nft_set_attributes */
export const NFTA_SET_TABLE = 1;
export const NFTA_SET_NAME = 2;
export const NFTA_SET_FLAGS = 3;
export const NFTA_SET_KEY_TYPE = 4;
export const NFTA_SET_KEY_LEN = 5;
export const NFTA_SET_DATA_TYPE = 6;
export const NFTA_SET_DATA_LEN = 7;
export const NFTA_SET_POLICY = 8;
export const NFTA_SET_DESC = 9;
export const NFTA_SET_ID = 10;
export const NFTA_SET_TIMEOUT = 11;
export const NFTA_SET_GC_INTERVAL = 12;
export const NFTA_SET_USERDATA = 13;
export const NFTA_SET_PAD = 14;
export const NFTA_SET_OBJ_TYPE = 15;
export const NFTA_SET_HANDLE = 16;
export const NFTA_SET_EXPR = 17;
export const NFTA_SET_EXPRESSIONS = 18;

/* enum nft_set_elem_flags */
export const NFT_SET_ELEM_INTERVAL_END = 0x1;
export const NFT_SET_ELEM_CATCHALL = 0x2;

/* enum nft_set_elem_attributes */
export const NFTA_SET_ELEM_KEY = 1;
export const NFTA_SET_ELEM_DATA = 2;
export const NFTA_SET_ELEM_FLAGS = 3;
export const NFTA_SET_ELEM_TIMEOUT = 4;
export const NFTA_SET_ELEM_EXPIRATION = 5;
export const NFTA_SET_ELEM_USERDATA = 6;
export const NFTA_SET_ELEM_EXPR = 7;
export const NFTA_SET_ELEM_PAD = 8;
export const NFTA_SET_ELEM_OBJREF = 9;
export const NFTA_SET_ELEM_KEY_END = 10;
export const NFTA_SET_ELEM_EXPRESSIONS = 11;

/* enum nft_set_elem_list_attributes */
export const NFTA_SET_ELEM_LIST_TABLE = 1;
export const NFTA_SET_ELEM_LIST_SET = 2;
export const NFTA_SET_ELEM_LIST_ELEMENTS = 3;
export const NFTA_SET_ELEM_LIST_SET_ID = 4;

/* enum nft_data_attributes */
export const NFTA_DATA_VALUE = 1;
export const NFTA_DATA_VERDICT = 2;

/* enum nft_verdict_attributes */
export const NFTA_VERDICT_CODE = 1;
export const NFTA_VERDICT_CHAIN = 2;
export const NFTA_VERDICT_CHAIN_ID = 3;

/* enum nft_expr_attributes */
export const NFTA_EXPR_NAME = 1;
export const NFTA_EXPR_DATA = 2;

/* enum nft_immediate_attributes */
export const NFTA_IMMEDIATE_DREG = 1;
export const NFTA_IMMEDIATE_DATA = 2;

/* enum nft_bitwise_ops */
export const NFT_BITWISE_MASK_XOR = 0;
export const NFT_BITWISE_LSHIFT = 1;
export const NFT_BITWISE_RSHIFT = 2;

/* enum nft_bitwise_attributes */
export const NFTA_BITWISE_SREG = 1;
export const NFTA_BITWISE_DREG = 2;
export const NFTA_BITWISE_LEN = 3;
export const NFTA_BITWISE_MASK = 4;
export const NFTA_BITWISE_XOR = 5;
export const NFTA_BITWISE_OP = 6;
export const NFTA_BITWISE_DATA = 7;

/* enum nft_cmp_ops */
export const NFT_CMP_EQ = 0;
export const NFT_CMP_NEQ = 1;
export const NFT_CMP_LT = 2;
export const NFT_CMP_LTE = 3;
export const NFT_CMP_GT = 4;
export const NFT_CMP_GTE = 5;

/* enum nft_cmp_attributes */
export const NFTA_CMP_SREG = 1;
export const NFTA_CMP_OP = 2;
export const NFTA_CMP_DATA = 3;

/* enum nft_lookup_flags */
export const NFT_LOOKUP_F_INV = 1 << 0;

/* enum nft_lookup_attributes */
export const NFTA_LOOKUP_SET = 1;
export const NFTA_LOOKUP_SREG = 2;
export const NFTA_LOOKUP_DREG = 3;
export const NFTA_LOOKUP_SET_ID = 4;
export const NFTA_LOOKUP_FLAGS = 5;

/* enum nft_payload_bases */
export const NFT_PAYLOAD_LL_HEADER = 0;
export const NFT_PAYLOAD_NETWORK_HEADER = 1;
export const NFT_PAYLOAD_TRANSPORT_HEADER = 2;
export const NFT_PAYLOAD_INNER_HEADER = 3;

/* enum nft_payload_attributes */
export const NFTA_PAYLOAD_DREG = 1;
export const NFTA_PAYLOAD_BASE = 2;
export const NFTA_PAYLOAD_OFFSET = 3;
export const NFTA_PAYLOAD_LEN = 4;
export const NFTA_PAYLOAD_SREG = 5;
export const NFTA_PAYLOAD_CSUM_TYPE = 6;
export const NFTA_PAYLOAD_CSUM_OFFSET = 7;
export const NFTA_PAYLOAD_CSUM_FLAGS = 8;

/* enum nft_meta_keys */
export const NFT_META_LEN = 0;
export const NFT_META_PROTOCOL = 1;
export const NFT_META_PRIORITY = 2;
export const NFT_META_MARK = 3;
export const NFT_META_IIF = 4;
export const NFT_META_OIF = 5;
export const NFT_META_IIFNAME = 6;
export const NFT_META_OIFNAME = 7;
export const NFT_META_IIFTYPE = 8;
export const NFT_META_OIFTYPE = 9;
export const NFT_META_SKUID = 10;
export const NFT_META_SKGID = 11;
export const NFT_META_NFTRACE = 12;
export const NFT_META_RTCLASSID = 13;
export const NFT_META_SECMARK = 14;
export const NFT_META_NFPROTO = 15;
export const NFT_META_L4PROTO = 16;

/* enum nft_meta_attributes */
export const NFTA_META_DREG = 1;
export const NFTA_META_KEY = 2;
export const NFTA_META_SREG = 3;

/* enum nft_counter_attributes */
export const NFTA_COUNTER_BYTES = 1;
export const NFTA_COUNTER_PACKETS = 2;
export const NFTA_COUNTER_PAD = 3;

/* enum nft_gen_attributes */
export const NFTA_GEN_ID = 1;
export const NFTA_GEN_PROC_PID = 2;
export const NFTA_GEN_PROC_NAME = 3;

// ---------------------------------------------------------------- netfilter.h

/* enum (NFPROTO_*): nfgen_family */
export const NFPROTO_UNSPEC = 0;
export const NFPROTO_INET = 1;
export const NFPROTO_IPV4 = 2;
export const NFPROTO_ARP = 3;
export const NFPROTO_NETDEV = 5;
export const NFPROTO_BRIDGE = 7;
export const NFPROTO_IPV6 = 10;

/* enum nf_inet_hooks */
export const NF_INET_PRE_ROUTING = 0;
export const NF_INET_LOCAL_IN = 1;
export const NF_INET_FORWARD = 2;
export const NF_INET_LOCAL_OUT = 3;
export const NF_INET_POST_ROUTING = 4;
export const NF_INET_INGRESS = 5;

/* enum nf_dev_hooks (netdev family) */
export const NF_NETDEV_INGRESS = 0;
export const NF_NETDEV_EGRESS = 1;

/** Standard chain priorities of nft (`enum nf_ip_priority` in netfilter_ipv4.h, the ones nft names). */
export const NF_IP_PRI_RAW = -300;
export const NF_IP_PRI_MANGLE = -150;
export const NF_IP_PRI_NAT_DST = -100;
export const NF_IP_PRI_FILTER = 0;
export const NF_IP_PRI_SECURITY = 50;
export const NF_IP_PRI_NAT_SRC = 100;

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
