/**
 * An in-memory model of the kernel state the guard's plug holds change, for
 * the fault campaign (test/unit/guard-faults.test.ts). It answers rtnetlink
 * (links, addresses, qdiscs, filters, the probes of actions and link kinds)
 * and nf_tables (tables, chains, sets and their elements, rules; batches
 * applied whole or not at all) as the kernel does for what the guard sends,
 * with the kernel's errnos for what it refuses (EEXIST, ENOENT, ENODEV,
 * EINVAL...), so that a guard bug that sends something the kernel would
 * refuse shows. Each request (one datagram, any connection) is counted;
 * {@link FakeKernel.failAt} makes the k-th one fail as a whole with ENOMEM,
 * changing nothing, as a kernel out of memory refuses it.
 *
 * What it models of each object is what a dump shows back: the request's
 * own attributes, with what the kernel adds (link indexes, qdisc defaults,
 * filter handles and the head entry of each filter priority, nft handles and
 * element expiry). A plug qdisc's state (buffering or released) is kept
 * apart, as the kernel keeps it: no dump shows it (sch_plug has no dump op).
 *
 * It also answers nfnetlink_queue (NFNL_SUBSYS_QUEUE: NFQNL_MSG_CONFIG,
 * NFQNL_MSG_VERDICT, NFQNL_MSG_VERDICT_BATCH) as net/netfilter/nfnetlink_queue.c
 * does, with the errnos measured on this machine's kernel (6.18) by
 * test/live/fake-kernel-nfqueue.test.ts, which compares the two: a queue is
 * bound by one socket (its port id, each transport its own); closing that
 * transport unbinds it, dropping what it held; /proc's nfnetlink_queue list
 * is answered from the model ({@link FakeKernel.procNet}). It has no
 * traffic of its own: {@link FakeKernel.synsPerBind} SYNs arrive at each
 * queue as it is bound (what a hold under load sees), so that a hold has
 * something to release by a verdict.
 *
 * Installed with {@link FakeKernel.install} (setKernelDouble, internal to
 * src/netlink): every NetlinkConnection.open of the process then reaches it,
 * and every queue holder's socket (src/netlink/nfqueue.ts).
 */
import { setKernelDouble, type ConnectionOptions } from '../../src/netlink/connection.js';
import {
  NFNL_SUBSYS_QUEUE,
  NFQNL_MSG_PACKET,
  NFQNL_MSG_CONFIG,
  NFQNL_MSG_VERDICT_BATCH,
  NFQA_PACKET_HDR,
  NFQA_VERDICT_HDR,
  NFQA_CFG_CMD,
  NFQA_CFG_PARAMS,
  NFQA_CFG_QUEUE_MAXLEN,
  NFQA_CFG_MASK,
  NFQA_CFG_FLAGS,
  NFQA_CFG_F_FAIL_OPEN,
  NFQNL_CFG_CMD_BIND,
  NFQNL_CFG_CMD_UNBIND,
  NFQNL_CFG_CMD_PF_BIND,
  NFQNL_CFG_CMD_PF_UNBIND,
  NFQNL_COPY_NONE,
  NFQNL_COPY_META,
  NFQNL_COPY_PACKET,
  nfqIdAfter,
} from '../../src/netlink/nfqueue.js';
import type { Transport } from '../../src/netlink/transport.js';
import {
  encodeMessage,
  parseMessages,
  NLMSG_DONE,
  NLM_F_ACK,
  NLM_F_CREATE,
  NLM_F_DUMP,
  NLM_F_EXCL,
  NLM_F_MULTI,
  NLM_F_REPLACE,
  NLM_F_APPEND,
  NETLINK_ROUTE,
  NETLINK_NETFILTER,
  NETLINK_SOCK_DIAG,
  type NetlinkMessage,
} from '../../src/netlink/message.js';
import { nfnetlinkAck } from '../../src/netlink/testing.js';
import { NLA_F_NESTED, NLA_TYPE_MASK, align4 } from '../../src/netlink/attributes.js';

// errnos (asm-generic/errno-base.h, errno.h; ENOTSUPP is the kernel's own, include/linux/errno.h)
const EPERM = 1;
const ENOENT = 2;
const ENOMEM = 12;
const EBUSY = 16;
const EEXIST = 17;
const ENODEV = 19;
const EINVAL = 22;
const ERANGE = 34;
const EOPNOTSUPP = 95;
const ENOTSUPP = 524;
const EADDRNOTAVAIL = 99;

// rtnetlink message types (linux/rtnetlink.h)
const RTM_NEWLINK = 16;
const RTM_DELLINK = 17;
const RTM_GETLINK = 18;
const RTM_SETLINK = 19;
const RTM_NEWADDR = 20;
const RTM_DELADDR = 21;
const RTM_GETADDR = 22;
const RTM_NEWQDISC = 36;
const RTM_DELQDISC = 37;
const RTM_GETQDISC = 38;
const RTM_GETTCLASS = 42;
const RTM_NEWTFILTER = 44;
const RTM_DELTFILTER = 45;
const RTM_GETTFILTER = 46;
const RTM_NEWACTION = 48;

// attributes (if_link.h, if_addr.h, rtnetlink.h, pkt_cls.h, tc_act/tc_mirred.h)
const IFLA_IFNAME = 3;
const IFLA_MTU = 4;
const IFLA_TXQLEN = 13;
const IFLA_LINKINFO = 18;
const IFLA_INFO_KIND = 1;
const IFA_ADDRESS = 1;
const IFA_LOCAL = 2;
const TCA_KIND = 1;
const TCA_OPTIONS = 2;
const TCA_STATS2 = 7;
const TCA_CHAIN = 11;
const TCA_STATS_BASIC = 1;
const TCA_STATS_QUEUE = 3;
const TCA_ACT_KIND = 1;
const TCA_ACT_OPTIONS = 2;
const TCA_MIRRED_PARMS = 2;

const IFF_UP = 0x1;
const TC_H_ROOT = 0xffffffff;
const TC_H_INGRESS = 0xfffffff1;
const TC_H_CLSACT_INGRESS = 0xfffffff2;
const TC_H_CLSACT_EGRESS = 0xfffffff3;
const TCM_IFINDEX_MAGIC_BLOCK = 0xffffffff;

// nfnetlink (nfnetlink.h, nf_tables.h)
const NFNL_SUBSYS_NFTABLES = 10;
const NFNL_MSG_BATCH_BEGIN = 0x10;
const NFNL_MSG_BATCH_END = 0x11;
const NFT = {
  NEWTABLE: 0,
  GETTABLE: 1,
  DELTABLE: 2,
  NEWCHAIN: 3,
  GETCHAIN: 4,
  DELCHAIN: 5,
  NEWRULE: 6,
  GETRULE: 7,
  DELRULE: 8,
  NEWSET: 9,
  GETSET: 10,
  DELSET: 11,
  NEWSETELEM: 12,
  GETSETELEM: 13,
  DELSETELEM: 14,
  NEWGEN: 15,
  GETGEN: 16,
  GETOBJ: 19,
  GETFLOWTABLE: 23,
  DESTROYTABLE: 26,
  DESTROYCHAIN: 27,
  DESTROYRULE: 28,
  DESTROYSET: 29,
  DESTROYSETELEM: 30,
} as const;
const NFTA_TABLE_NAME = 1;
const NFTA_TABLE_FLAGS = 2;
const NFTA_TABLE_USE = 3;
const NFTA_TABLE_HANDLE = 4;
const NFTA_TABLE_USERDATA = 6;
const NFTA_CHAIN_TABLE = 1;
const NFTA_CHAIN_HANDLE = 2;
const NFTA_CHAIN_NAME = 3;
const NFTA_CHAIN_USE = 6;
const NFTA_CHAIN_ID = 11;
const NFTA_RULE_TABLE = 1;
const NFTA_RULE_CHAIN = 2;
const NFTA_RULE_HANDLE = 3;
const NFTA_RULE_POSITION = 6;
const NFTA_RULE_ID = 9;
const NFTA_SET_TABLE = 1;
const NFTA_SET_NAME = 2;
const NFTA_SET_ID = 10;
const NFTA_SET_HANDLE = 16;
const NFTA_SET_ELEM_LIST_TABLE = 1;
const NFTA_SET_ELEM_LIST_SET = 2;
const NFTA_SET_ELEM_LIST_ELEMENTS = 3;
const NFTA_SET_ELEM_LIST_SET_ID = 4;
const NFTA_LIST_ELEM = 1;
const NFTA_SET_ELEM_KEY = 1;
const NFTA_SET_ELEM_TIMEOUT = 4;
const NFTA_SET_ELEM_EXPIRATION = 5;
const NFTA_GEN_ID = 1;

// nfnetlink_queue (nfnetlink_queue.c, linux/netfilter.h)
/** a bound queue's copy range until NFQA_CFG_PARAMS sets one: NFQNL_MAX_COPY_RANGE (0xffff - NLA_HDRLEN) */
const NFQNL_MAX_COPY_RANGE = 0xffff - 4;
/** NFQNL_QMAX_DEFAULT: a bound queue's maxlen until NFQA_CFG_QUEUE_MAXLEN sets one */
const NFQNL_QMAX_DEFAULT = 1024;
/** NFQA_CFG_F_MAX: flags at or above it are refused (EOPNOTSUPP) */
const NFQA_CFG_F_MAX = 1 << 5;
const NF_STOLEN = 2;
const NF_MAX_VERDICT = 5;
/** NFQNL_MSG_* types nfnetlink_queue has callbacks for (NFQNL_MSG_MAX) */
const NFQNL_MSG_MAX = 4;
/** nla_policy lengths of the attributes it reads (nfqa_cfg_policy, nfqa_vrd_policy): shorter ones are ERANGE */
const NFQA_CFG_LEN: Record<number, number> = { [NFQA_CFG_CMD]: 4, [NFQA_CFG_PARAMS]: 5, [NFQA_CFG_QUEUE_MAXLEN]: 4, [NFQA_CFG_MASK]: 4, [NFQA_CFG_FLAGS]: 4 };
const NFQA_VRD_LEN: Record<number, number> = { [NFQA_VERDICT_HDR]: 8 };

/** An attribute: its type as sent (flags kept) and its payload. */
type Attr = [type: number, payload: Buffer];

function readAttrs(buf: Buffer, off = 0): Attr[] {
  const out: Attr[] = [];
  while (off + 4 <= buf.length) {
    const len = buf.readUInt16LE(off);
    if (len < 4 || off + len > buf.length) break;
    out.push([buf.readUInt16LE(off + 2), Buffer.from(buf.subarray(off + 4, off + len))]);
    off += align4(len);
  }
  return out;
}

function writeAttrs(attrs: readonly Attr[]): Buffer {
  return Buffer.concat(
    attrs.map(([t, p]) => {
      const b = Buffer.alloc(align4(4 + p.length));
      b.writeUInt16LE(4 + p.length, 0);
      b.writeUInt16LE(t, 2);
      p.copy(b, 4);
      return b;
    }),
  );
}

const get = (attrs: readonly Attr[], type: number): Buffer | undefined => attrs.find(([t]) => (t & NLA_TYPE_MASK) === type)?.[1];
const without = (attrs: readonly Attr[], ...types: number[]): Attr[] => attrs.filter(([t]) => !types.includes(t & NLA_TYPE_MASK));
const cstr = (b: Buffer | undefined): string | undefined => (b === undefined ? undefined : b.toString('latin1').replace(/\0.*$/s, ''));
const strAttr = (type: number, s: string): Attr => [type, Buffer.from(`${s}\0`, 'latin1')];
const u32Attr = (type: number, v: number): Attr => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v >>> 0);
  return [type, b];
};
const be32Attr = (type: number, v: number): Attr => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(v >>> 0);
  return [type, b];
};
const be64Attr = (type: number, v: bigint): Attr => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(v);
  return [type, b];
};
const nestedAttr = (type: number, children: readonly Attr[]): Attr => [type | NLA_F_NESTED, writeAttrs(children)];

/** A refusal, answered with `errno`. */
class Refused extends Error {
  constructor(readonly errno: number) {
    super(`errno ${errno}`);
  }
}
const refuse = (errno: number): never => {
  throw new Refused(errno);
};

interface Link {
  index: number;
  name: string;
  type: number;
  flags: number;
  /** attributes other than IFLA_IFNAME */
  attrs: Attr[];
}

interface Addr {
  family: number;
  prefixlen: number;
  flags: number;
  scope: number;
  index: number;
  attrs: Attr[];
}

interface Qdisc {
  ifindex: number;
  handle: number;
  parent: number;
  kind: string;
  options?: Buffer;
  /** sch_plug's own state, which no dump shows */
  buffering?: boolean;
}

interface Filter {
  ifindex: number;
  parent: number;
  prio: number;
  protocol: number;
  handle: number;
  kind: string;
  options?: Buffer;
}

interface NftSet {
  name: string;
  handle: bigint;
  id?: number;
  attrs: Attr[];
  /** key (hex) -> the element's attributes and when it expires (ms since the epoch) */
  elems: Map<string, { attrs: Attr[]; expiresAt?: number }>;
}

interface NftTable {
  family: number;
  name: string;
  flags: number;
  handle: bigint;
  userdata?: Buffer;
  chains: Map<string, { name: string; handle: bigint; attrs: Attr[] }>;
  sets: Map<string, NftSet>;
  rules: Array<{ chain: string; handle: bigint; attrs: Attr[] }>;
}

/** A bound netfilter queue (struct nfqnl_instance). */
export interface NfQueue {
  num: number;
  /** the port id of the socket that bound it */
  portId: number;
  copyMode: number;
  copyRange: number;
  maxlen: number;
  flags: number;
  /** the ids of the packets waiting for a verdict, oldest first */
  queued: number[];
  /** the last id given */
  idSequence: number;
  /** packets dropped because the queue was full */
  queueDropped: number;
}

/** The kernel's state: what every request reads and changes. */
export interface KernelState {
  links: Link[];
  addrs: Addr[];
  qdiscs: Qdisc[];
  filters: Filter[];
  tables: NftTable[];
  /** the bound netfilter queues */
  queues: NfQueue[];
}

function cloneNft(t: NftTable): NftTable {
  return {
    ...t,
    chains: new Map([...t.chains].map(([k, c]) => [k, { ...c, attrs: [...c.attrs] }])),
    sets: new Map([...t.sets].map(([k, s]) => [k, { ...s, attrs: [...s.attrs], elems: new Map(s.elems) }])),
    rules: t.rules.map((r) => ({ ...r })),
  };
}

const major = (h: number): number => h >>> 16;

/** Qdisc kinds this kernel has, and the least TCA_OPTIONS each accepts (undefined: none needed). */
const QDISC_KINDS: Record<string, number | undefined> = { prio: 20, plug: 8, clsact: undefined, ingress: undefined, pfifo: 4, noqueue: undefined };
/** Filter kinds this kernel has. */
const FILTER_KINDS = new Set(['fw', 'u32', 'flower', 'bpf', 'matchall']);
/** Link kinds it can create. */
const LINK_KINDS = new Set(['ifb', 'veth', 'dummy']);

/**
 * The kernel double: its state, its transports, its request counter and the
 * fault it injects.
 */
export class FakeKernel {
  state: KernelState;
  /** requests (datagrams) received so far, from every connection */
  requests = 0;
  /** the request (counted from 1) to refuse as a whole with ENOMEM; 0: none */
  failAt = 0;
  /** what the refused request was, once refused */
  failed?: string;
  /** refuse (as {@link FakeKernel.failAt} does) every request this says yes to, given its `protocol:type` name */
  refuseWhen?: (what: string) => boolean;
  /** every request, as `protocol:type` names, for messages */
  readonly log: string[] = [];
  /** SYNs that arrive at a queue as it is bound (0: none; the model has no traffic of its own) */
  synsPerBind = 0;
  /** the packets let go by verdicts (accepted or dropped by the verdict), and those dropped unanswered: unbind, socket closed */
  readonly verdicts = { given: 0, droppedUnanswered: 0 };
  /** each open transport's port id and its receiver (the packets of a queue it binds go there) */
  private readonly sockets = new Map<number, (d: Buffer) => void>();
  private nextPortId = 4242;
  private nextIndex = 3;
  private gen = 1;
  private nftHandle = 1n;
  /** links of the kernel's, each with its ifindex: `lo` (1) and `dev` (2) */
  constructor(readonly modules: readonly string[] = ['cls_fw', 'cls_flower', 'cls_u32']) {
    this.state = {
      links: [
        { index: 1, name: 'lo', type: 772, flags: 0x49, attrs: [u32Attr(IFLA_MTU, 65536), u32Attr(IFLA_TXQLEN, 1000)] },
        {
          index: 2,
          name: 'sp-flt0',
          type: 1,
          flags: 0x1043,
          attrs: [u32Attr(IFLA_MTU, 1500), u32Attr(IFLA_TXQLEN, 1000), nestedAttr(IFLA_LINKINFO, [strAttr(IFLA_INFO_KIND, 'veth')])],
        },
      ],
      addrs: [
        {
          family: 2,
          prefixlen: 8,
          flags: 0x80,
          scope: 254,
          index: 1,
          attrs: [
            [IFA_ADDRESS, Buffer.from([127, 0, 0, 1])],
            [IFA_LOCAL, Buffer.from([127, 0, 0, 1])],
          ],
        },
      ],
      qdiscs: [],
      filters: [],
      tables: [],
      queues: [],
    };
  }

  /** Reach every later NetlinkConnection.open of this process; the returned function undoes it. */
  install(): () => void {
    setKernelDouble({
      transport: (p, o) => this.transport(p, o),
      moduleLoaded: (name) => this.modules.includes(name),
      procNet: (file) => this.procNet(file),
    });
    return () => setKernelDouble(undefined);
  }

  /** A transport to this kernel for `protocol`, with a port id of its own; closing it unbinds the queues it bound (NETLINK_URELEASE). */
  transport(protocol: number, _options: ConnectionOptions = {}): Transport {
    let deliver: (d: Buffer) => void = () => {};
    const portId = this.nextPortId++;
    let open = true;
    this.sockets.set(portId, (d) => {
      if (open) queueMicrotask(() => deliver(d));
    });
    return {
      portId,
      send: (datagram: Buffer) => {
        if (!open) return;
        const replies = this.receive(protocol, datagram, portId);
        queueMicrotask(() => {
          for (const r of replies) deliver(r);
        });
      },
      onDatagram: (cb) => {
        deliver = cb;
      },
      onError: () => {},
      close: () => {
        if (!open) return;
        open = false;
        this.sockets.delete(portId);
        for (const q of this.state.queues.filter((x) => x.portId === portId)) this.destroyQueue(q);
      },
    };
  }

  /**
   * What /proc/thread-self/net/FILE reads: `netfilter/nfnetlink_queue` (one line per bound queue, as
   * nfnetlink_queue.c's seq_show prints it) and `netlink` (its header only: no process is seen to own a socket).
   */
  procNet(file: string): string | undefined {
    if (file === 'netfilter/nfnetlink_queue')
      return this.state.queues
        .map((q) =>
          [
            String(q.num).padStart(5),
            String(q.portId).padStart(6),
            String(q.queued.length).padStart(5),
            String(q.copyMode),
            String(q.copyRange).padStart(5),
            String(q.queueDropped).padStart(5),
            String(0).padStart(5),
            String(q.idSequence).padStart(8),
            ' 1',
          ].join(' '),
        )
        .map((l) => `${l}\n`)
        .join('');
    if (file === 'netlink') return 'sk               Eth Pid        Groups   Rmem     Wmem     Dump  Locks    Drops    Inode\n';
    return undefined;
  }

  /**
   * `n` SYNs arrive at queue `num` (IPv4, at output): queued and sent to the bound socket, or dropped over maxlen
   * (passed with NFQA_CFG_F_FAIL_OPEN); nothing when no socket binds it (the rule's bypass lets them through).
   */
  arrive(num: number, n = 1): void {
    const q = this.state.queues.find((x) => x.num === num);
    if (!q) return;
    for (let i = 0; i < n; i++) {
      q.idSequence = (q.idSequence + 1) >>> 0;
      if (q.queued.length >= q.maxlen) {
        if (!(q.flags & NFQA_CFG_F_FAIL_OPEN)) q.queueDropped++;
        continue;
      }
      q.queued.push(q.idSequence);
      // struct nfqnl_msg_packet_hdr { __be32 packet_id; __be16 hw_protocol; __u8 hook; }: ETH_P_IP, NF_INET_LOCAL_OUT
      const hdr = Buffer.alloc(7);
      hdr.writeUInt32BE(q.idSequence, 0);
      hdr.writeUInt16BE(0x0800, 4);
      hdr[6] = 3;
      const nfgen = Buffer.from([2, 0, 0, 0]);
      nfgen.writeUInt16BE(q.num, 2);
      const payload = Buffer.concat([nfgen, writeAttrs([[NFQA_PACKET_HDR, hdr]])]);
      this.sockets.get(q.portId)?.(encodeMessage({ type: NFQNL_MSG_PACKET, flags: 0, seq: 0, pid: 0, payload }));
    }
  }

  /** Packets waiting for a verdict, over every queue. */
  queuedPackets(): number {
    return this.state.queues.reduce((n, q) => n + q.queued.length, 0);
  }

  /** instance_destroy: the queue goes, the packets it held are dropped (nfqnl_flush with NF_DROP). */
  private destroyQueue(q: NfQueue): void {
    this.verdicts.droppedUnanswered += q.queued.length;
    this.state.queues = this.state.queues.filter((x) => x !== q);
  }

  /** The plug qdiscs, as `ifname handle: buffering|released`: the kernel's own state of each. */
  plugs(): Array<{ dev: string; handle: number; buffering: boolean }> {
    return this.state.qdiscs
      .filter((q) => q.kind === 'plug')
      .map((q) => ({ dev: this.linkByIndex(q.ifindex)?.name ?? '?', handle: q.handle, buffering: q.buffering === true }));
  }

  /** Live (unexpired) elements of every nft set, as `table set key(hex)`. */
  setElements(): string[] {
    const now = Date.now();
    return this.state.tables.flatMap((t) =>
      [...t.sets.values()].flatMap((s) =>
        [...s.elems].filter(([, e]) => e.expiresAt === undefined || e.expiresAt > now).map(([k]) => `${t.name} ${s.name} ${k}`),
      ),
    );
  }

  /**
   * The kernel's objects as text (JSON, bytes in hex), without what moves by
   * itself or by a plug's buffer/release: the plugs' state and the elements'
   * expiry. Two equal structures: nothing was added, removed or changed.
   */
  structure(): string {
    const hex = (_k: string, v: unknown) =>
      v && typeof v === 'object' && (v as { type?: string }).type === 'Buffer'
        ? Buffer.from((v as { data: number[] }).data).toString('hex')
        : typeof v === 'bigint'
          ? String(v)
          : v;
    const tables = this.state.tables.map((t) => ({
      ...t,
      handle: String(t.handle),
      chains: [...t.chains.values()].map((c) => ({ ...c, handle: String(c.handle) })),
      sets: [...t.sets.values()].map((x) => ({ ...x, handle: String(x.handle), elems: [...x.elems.keys()] })),
      rules: t.rules.map((r) => ({ ...r, handle: String(r.handle) })),
    }));
    return JSON.stringify({ ...this.state, qdiscs: this.state.qdiscs.map(({ buffering: _, ...q }) => q), tables }, hex);
  }

  private linkByIndex(i: number): Link | undefined {
    return this.state.links.find((l) => l.index === i);
  }

  private receive(protocol: number, datagram: Buffer, portId: number): Buffer[] {
    const msgs = parseMessages(datagram);
    this.requests++;
    const what = `${protocol === NETLINK_ROUTE ? 'route' : protocol === NETLINK_NETFILTER ? 'nf' : protocol}:${msgs.map((m) => m.type).join(',')}`;
    this.log.push(what);
    if (this.requests === this.failAt || this.refuseWhen?.(what)) {
      this.failed = what;
      // Refused whole: an error for each message (a batch's BEGIN and END get none), nothing changed.
      const inner = protocol === NETLINK_NETFILTER && msgs[0]?.type === NFNL_MSG_BATCH_BEGIN ? msgs.slice(1, -1) : msgs;
      return inner.map((m) => nfnetlinkAck(m, ENOMEM, { capped: true }));
    }
    if (protocol === NETLINK_NETFILTER) return this.nfnetlink(msgs, portId);
    if (protocol === NETLINK_ROUTE) return msgs.flatMap((m) => this.answer(m, () => this.route(m)));
    // sock_diag: no TCP socket listens in this model (an empty dump)
    if (protocol === NETLINK_SOCK_DIAG) return msgs.flatMap((m) => this.answer(m, () => []));
    return msgs.map((m) => nfnetlinkAck(m, EOPNOTSUPP, { capped: true }));
  }

  /** Run `f` for request `m`: its replies (a dump's, with NLMSG_DONE; a change's ack when asked), or its refusal. */
  private answer(m: NetlinkMessage, f: () => Array<{ type: number; payload: Buffer }> | undefined): Buffer[] {
    try {
      const replies = f();
      if (m.flags & NLM_F_DUMP && replies) {
        const parts = replies.map((r) => encodeMessage({ type: r.type, flags: NLM_F_MULTI, seq: m.seq, pid: 0, payload: r.payload }));
        parts.push(encodeMessage({ type: NLMSG_DONE, flags: NLM_F_MULTI, seq: m.seq, pid: 0, payload: Buffer.alloc(4) }));
        return [Buffer.concat(parts)];
      }
      const out = (replies ?? []).map((r) => encodeMessage({ type: r.type, flags: 0, seq: m.seq, pid: 0, payload: r.payload }));
      if (m.flags & NLM_F_ACK) out.push(nfnetlinkAck(m, 0));
      return out;
    } catch (e) {
      if (e instanceof Refused) return [nfnetlinkAck(m, e.errno, { capped: true })];
      throw e;
    }
  }

  // ------------------------------------------------------------ rtnetlink

  /** What answers each rtnetlink request type (a refusal EOPNOTSUPP for any other). */
  private readonly routeTable: Record<number, (m: NetlinkMessage) => Array<{ type: number; payload: Buffer }> | undefined> = {
    [RTM_GETLINK]: (m) => this.getLink(m),
    [RTM_NEWLINK]: (m) => this.newLink(m),
    [RTM_SETLINK]: (m) => this.newLink(m),
    [RTM_DELLINK]: (m) => this.delLink(m),
    [RTM_GETADDR]: (m) => this.getAddr(m),
    [RTM_NEWADDR]: (m) => this.newAddr(m),
    [RTM_DELADDR]: (m) => this.delAddr(m),
    [RTM_GETQDISC]: (m) => this.getQdisc(m),
    [RTM_NEWQDISC]: (m) => this.newQdisc(m),
    [RTM_DELQDISC]: (m) => this.delQdisc(m),
    // no classes of their own in this model (prio's bands are implied by its options)
    [RTM_GETTCLASS]: () => [],
    [RTM_GETTFILTER]: (m) => this.getFilter(m),
    [RTM_NEWTFILTER]: (m) => this.newFilter(m),
    [RTM_DELTFILTER]: (m) => this.delFilter(m),
    // the probe of an action kind: mirred is known; its empty options are refused
    [RTM_NEWACTION]: () => refuse(EINVAL),
  };

  private route(m: NetlinkMessage): Array<{ type: number; payload: Buffer }> | undefined {
    const f = this.routeTable[m.type] ?? (() => refuse(EOPNOTSUPP));
    return f(m);
  }

  private linkMsg(l: Link): { type: number; payload: Buffer } {
    const h = Buffer.alloc(16);
    h.writeUInt16LE(l.type, 2);
    h.writeInt32LE(l.index, 4);
    h.writeUInt32LE(l.flags, 8);
    return { type: RTM_NEWLINK, payload: Buffer.concat([h, writeAttrs([strAttr(IFLA_IFNAME, l.name), ...l.attrs])]) };
  }

  /** The link a request names: ifi_index, else IFLA_IFNAME. */
  private namedLink(m: NetlinkMessage): Link | undefined {
    const index = m.payload.readInt32LE(4);
    const name = cstr(get(readAttrs(m.payload, 16), IFLA_IFNAME));
    return index ? this.linkByIndex(index) : this.state.links.find((l) => l.name === name);
  }

  private getLink(m: NetlinkMessage) {
    if (m.flags & NLM_F_DUMP) return this.state.links.map((l) => this.linkMsg(l));
    const l = this.namedLink(m) ?? refuse(ENODEV);
    return [this.linkMsg(l)];
  }

  private newLink(m: NetlinkMessage) {
    const attrs = readAttrs(m.payload, 16);
    const flags = m.payload.readUInt32LE(8);
    const change = m.payload.readUInt32LE(12);
    const found = this.namedLink(m);
    const combine = (l: Link) => {
      if (flags || change) l.flags = change ? (flags & change) | (l.flags & ~change) : (l.flags & ~IFF_UP) | (flags & IFF_UP);
    };
    if (found) {
      if (m.type === RTM_NEWLINK && m.flags & NLM_F_CREATE && m.flags & NLM_F_EXCL) refuse(EEXIST);
      combine(found);
      const set = without(attrs, IFLA_IFNAME, IFLA_LINKINFO);
      found.attrs = [...without(found.attrs, ...set.map(([t]) => t & NLA_TYPE_MASK)), ...set];
      return undefined;
    }
    if (m.type !== RTM_NEWLINK || !(m.flags & NLM_F_CREATE)) return refuse(ENODEV);
    const info = get(attrs, IFLA_LINKINFO);
    const kind = info && cstr(get(readAttrs(info), IFLA_INFO_KIND));
    if (!kind || !LINK_KINDS.has(kind)) return refuse(EOPNOTSUPP);
    const name = cstr(get(attrs, IFLA_IFNAME));
    if (!name || !/^[^/\s:]{1,15}$/.test(name) || name === '.' || name === '..') return refuse(EINVAL);
    const l: Link = {
      index: this.nextIndex++,
      name,
      type: 1,
      flags: 0x1002,
      attrs: [u32Attr(IFLA_MTU, 1500), u32Attr(IFLA_TXQLEN, 32), ...without(attrs, IFLA_IFNAME, IFLA_MTU, IFLA_TXQLEN)],
    };
    combine(l);
    this.state.links.push(l);
    return undefined;
  }

  private delLink(m: NetlinkMessage) {
    const l = this.namedLink(m) ?? refuse(ENODEV);
    if (l.index === 1) refuse(EOPNOTSUPP);
    this.state.links = this.state.links.filter((x) => x !== l);
    this.state.addrs = this.state.addrs.filter((a) => a.index !== l.index);
    this.state.qdiscs = this.state.qdiscs.filter((q) => q.ifindex !== l.index);
    this.state.filters = this.state.filters.filter((f) => f.ifindex !== l.index);
    return undefined;
  }

  private addrMsg(a: Addr): { type: number; payload: Buffer } {
    const h = Buffer.from([a.family, a.prefixlen, a.flags, a.scope, 0, 0, 0, 0]);
    h.writeUInt32LE(a.index, 4);
    return { type: RTM_NEWADDR, payload: Buffer.concat([h, writeAttrs(a.attrs)]) };
  }

  private addrOf(m: NetlinkMessage): Addr {
    const p = m.payload;
    const attrs = readAttrs(p, 8);
    const local = get(attrs, IFA_LOCAL) ?? get(attrs, IFA_ADDRESS);
    const withAddress = p[0] === 2 && local && !get(attrs, IFA_ADDRESS) ? [[IFA_ADDRESS, local] as Attr, ...attrs] : attrs;
    return { family: p[0], prefixlen: p[1], flags: p[2] | 0x80, scope: p[3], index: p.readUInt32LE(4), attrs: withAddress };
  }

  private sameAddr(a: Addr, b: Addr): boolean {
    const key = (x: Addr) => (get(x.attrs, IFA_LOCAL) ?? get(x.attrs, IFA_ADDRESS))?.toString('hex');
    return a.index === b.index && a.family === b.family && key(a) === key(b);
  }

  private getAddr(m: NetlinkMessage) {
    const family = m.payload[0];
    const index = m.payload.length >= 8 ? m.payload.readUInt32LE(4) : 0;
    return this.state.addrs.filter((a) => (!family || a.family === family) && (!index || a.index === index)).map((a) => this.addrMsg(a));
  }

  private newAddr(m: NetlinkMessage) {
    const a = this.addrOf(m);
    if (!this.linkByIndex(a.index)) refuse(ENODEV);
    const old = this.state.addrs.find((x) => this.sameAddr(x, a));
    if (old && (m.flags & NLM_F_EXCL || !(m.flags & NLM_F_REPLACE))) refuse(EEXIST);
    this.state.addrs = [...this.state.addrs.filter((x) => x !== old), a];
    return undefined;
  }

  private delAddr(m: NetlinkMessage) {
    const a = this.addrOf(m);
    const old = this.state.addrs.find((x) => this.sameAddr(x, a) && (!a.prefixlen || x.prefixlen === a.prefixlen)) ?? refuse(EADDRNOTAVAIL);
    this.state.addrs = this.state.addrs.filter((x) => x !== old);
    return undefined;
  }

  private tcmsg(m: NetlinkMessage): { ifindex: number; handle: number; parent: number; info: number; attrs: Attr[] } {
    const p = m.payload;
    return { ifindex: p.readUInt32LE(4), handle: p.readUInt32LE(8), parent: p.readUInt32LE(12), info: p.readUInt32LE(16), attrs: readAttrs(p, 20) };
  }

  private tcMsg(type: number, ifindex: number, handle: number, parent: number, info: number, attrs: Attr[]): { type: number; payload: Buffer } {
    const h = Buffer.alloc(20);
    h.writeUInt32LE(ifindex, 4);
    h.writeUInt32LE(handle >>> 0, 8);
    h.writeUInt32LE(parent >>> 0, 12);
    h.writeUInt32LE(info >>> 0, 16);
    return { type, payload: Buffer.concat([h, writeAttrs(attrs)]) };
  }

  /** Every qdisc of a link as the kernel lists it: the root (noqueue when none was added), then the others. */
  private qdiscsOf(ifindex: number): Qdisc[] {
    const own = this.state.qdiscs.filter((q) => q.ifindex === ifindex);
    const root = own.find((q) => q.parent === TC_H_ROOT) ?? { ifindex, handle: 0, parent: TC_H_ROOT, kind: 'noqueue' };
    return [root, ...own.filter((q) => q !== root)];
  }

  private getQdisc(m: NetlinkMessage) {
    const { ifindex } = this.tcmsg(m);
    const links = this.state.links.filter((l) => !ifindex || l.index === ifindex);
    const stats = nestedAttr(TCA_STATS2, [
      [TCA_STATS_BASIC, Buffer.alloc(16)],
      [TCA_STATS_QUEUE, Buffer.alloc(20)],
    ]);
    return links.flatMap((l) =>
      this.qdiscsOf(l.index).map((q) =>
        this.tcMsg(RTM_NEWQDISC, q.ifindex, q.handle, q.parent, 1 << 16, [
          strAttr(TCA_KIND, q.kind),
          ...(q.options && q.kind !== 'plug' ? [[TCA_OPTIONS, q.options] as Attr] : []),
          stats,
        ]),
      ),
    );
  }

  /** The qdisc at a parent of a link (stored ones only). */
  private qdiscAt(ifindex: number, parent: number): Qdisc | undefined {
    const slot = parent === TC_H_INGRESS || parent === TC_H_CLSACT_INGRESS ? TC_H_INGRESS : parent;
    return this.state.qdiscs.find((q) => q.ifindex === ifindex && q.parent === slot);
  }

  /** Remove a qdisc with what hangs under it (child qdiscs, filters). */
  private removeQdisc(q: Qdisc): void {
    const children = this.state.qdiscs.filter(
      (c) => c.ifindex === q.ifindex && c !== q && c.parent !== TC_H_ROOT && c.parent !== TC_H_INGRESS && major(c.parent) === major(q.handle),
    );
    this.state.qdiscs = this.state.qdiscs.filter((x) => x !== q);
    for (const c of children) this.removeQdisc(c);
    this.state.filters = this.state.filters.filter((f) => {
      if (f.ifindex !== q.ifindex) return true;
      if (q.parent === TC_H_INGRESS) return f.parent !== TC_H_CLSACT_INGRESS && f.parent !== TC_H_CLSACT_EGRESS && major(f.parent) !== 0xffff;
      return major(f.parent) !== major(q.handle);
    });
  }

  /** sch_plug's change: TCQ_PLUG_BUFFER 0, RELEASE_ONE 1, RELEASE_INDEFINITE 2, LIMIT 3 (struct tc_plug_qopt { int action; __u32 limit; }). */
  private plugChange(q: Qdisc, options: Buffer | undefined): void {
    if (!options) return;
    const action = options.readInt32LE(0);
    if (action === 0) q.buffering = true;
    else if (action === 1 || action === 2) q.buffering = false;
    else if (action !== 3) refuse(EINVAL);
  }

  private newQdisc(m: NetlinkMessage) {
    const t = this.tcmsg(m);
    const kind = cstr(get(t.attrs, TCA_KIND));
    const options = get(t.attrs, TCA_OPTIONS);
    if (kind !== undefined) {
      if (!(kind in QDISC_KINDS)) refuse(ENOENT);
      const least = QDISC_KINDS[kind];
      if (options && least !== undefined && options.length < least) refuse(EINVAL);
      if (options && least === undefined && options.length > 0) refuse(EINVAL);
    }
    if (!this.linkByIndex(t.ifindex)) refuse(ENODEV);
    const ingressKind = kind === 'clsact' || kind === 'ingress';
    if (ingressKind !== (t.parent === TC_H_INGRESS) && kind !== undefined) refuse(EINVAL);
    if (t.parent !== TC_H_ROOT && t.parent !== TC_H_INGRESS) {
      // a class of a classful qdisc: prio's bands 1..bands
      const owner = this.state.qdiscs.find((q) => q.ifindex === t.ifindex && q.handle === (major(t.parent) << 16) >>> 0) ?? refuse(ENOENT);
      if (owner.kind !== 'prio' || (t.parent & 0xffff) === 0 || (t.parent & 0xffff) > (owner.options?.readInt32LE(0) ?? 3)) refuse(ENOENT);
    }
    const at = this.qdiscAt(t.ifindex, t.parent) ?? (t.handle ? this.state.qdiscs.find((q) => q.ifindex === t.ifindex && q.handle === t.handle) : undefined);
    if (!(m.flags & NLM_F_CREATE)) {
      const q = at ?? refuse(ENOENT);
      if (kind !== undefined && kind !== q.kind) refuse(EINVAL);
      if (q.kind === 'plug') this.plugChange(q, options);
      else if (options) q.options = options;
      return undefined;
    }
    if (kind === undefined) return refuse(EINVAL);
    if (at) {
      const same = (!t.handle || t.handle === at.handle) && kind === at.kind;
      if (m.flags & NLM_F_EXCL && same) refuse(EEXIST);
      if (same && !(m.flags & NLM_F_REPLACE)) {
        if (at.kind === 'plug') this.plugChange(at, options);
        else if (options) at.options = options;
        return undefined;
      }
      if (!(m.flags & NLM_F_REPLACE)) refuse(EEXIST);
      this.removeQdisc(at);
    }
    const handle = t.parent === TC_H_INGRESS ? 0xffff0000 : t.handle || 0x80010000 + this.state.qdiscs.length * 0x10000;
    if (this.state.qdiscs.some((q) => q.ifindex === t.ifindex && q.handle === handle)) refuse(EEXIST);
    const q: Qdisc = { ifindex: t.ifindex, handle: handle >>> 0, parent: t.parent, kind, ...(options && { options }) };
    // A new plug buffers (sch_plug's init); setup releases it right after.
    if (kind === 'plug') q.buffering = true;
    this.state.qdiscs.push(q);
    return undefined;
  }

  private delQdisc(m: NetlinkMessage) {
    const t = this.tcmsg(m);
    if (!this.linkByIndex(t.ifindex)) refuse(ENODEV);
    const q =
      (t.parent ? this.qdiscAt(t.ifindex, t.parent) : undefined) ??
      (t.handle ? this.state.qdiscs.find((x) => x.ifindex === t.ifindex && x.handle === t.handle) : undefined);
    if (!q) return refuse(t.parent === TC_H_ROOT ? ENOENT : EINVAL);
    const kind = cstr(get(t.attrs, TCA_KIND));
    if (kind !== undefined && kind !== q.kind) refuse(EINVAL);
    this.removeQdisc(q);
    return undefined;
  }

  /** Whether a filter's parent exists (a classful qdisc's handle, or clsact's hooks), and the ifindexes its actions name. */
  private checkFilterParent(ifindex: number, parent: number): void {
    if (parent === TC_H_CLSACT_INGRESS || parent === TC_H_CLSACT_EGRESS) {
      const q = this.qdiscAt(ifindex, TC_H_INGRESS);
      if (!q || (q.kind !== 'clsact' && parent === TC_H_CLSACT_EGRESS)) refuse(EINVAL);
      return;
    }
    const q = this.state.qdiscs.find((x) => x.ifindex === ifindex && x.handle === (major(parent) << 16) >>> 0) ?? refuse(EINVAL);
    if (q.kind === 'plug' || q.kind === 'pfifo') refuse(EOPNOTSUPP);
  }

  /** mirred's target device must exist (struct tc_mirred { tc_gen (20 bytes); int eaction; __u32 ifindex; }). */
  private checkActions(options: Buffer | undefined): void {
    if (!options) return;
    const walk = (attrs: Attr[]) => {
      for (const [t, p] of attrs) {
        if (!(t & NLA_F_NESTED)) continue;
        const inner = readAttrs(p);
        if (cstr(get(inner, TCA_ACT_KIND)) === 'mirred') {
          const parms = get(readAttrs(get(inner, TCA_ACT_OPTIONS) ?? Buffer.alloc(0)), TCA_MIRRED_PARMS);
          if (!parms || parms.length < 28) refuse(EINVAL);
          if (!this.linkByIndex(parms!.readUInt32LE(24))) refuse(ENODEV);
        } else walk(inner);
      }
    };
    walk(readAttrs(options));
  }

  private filterMsg(f: Filter, head: boolean) {
    return this.tcMsg(RTM_NEWTFILTER, f.ifindex, head ? 0 : f.handle, f.parent, ((f.prio << 16) | f.protocol) >>> 0, [
      strAttr(TCA_KIND, f.kind),
      u32Attr(TCA_CHAIN, 0),
      ...(!head && f.options ? [[TCA_OPTIONS | NLA_F_NESTED, f.options] as Attr] : []),
    ]);
  }

  private getFilter(m: NetlinkMessage) {
    const t = this.tcmsg(m);
    const fs = this.state.filters.filter((f) => f.ifindex === t.ifindex && (!t.parent || f.parent === t.parent));
    // one head entry per priority (the tcf_proto, no handle), then its filters
    const prios = [...new Set(fs.map((f) => `${f.parent}:${f.prio}:${f.protocol}`))];
    return prios.flatMap((p) => {
      const group = fs.filter((f) => `${f.parent}:${f.prio}:${f.protocol}` === p);
      return [this.filterMsg(group[0], true), ...group.map((f) => this.filterMsg(f, false))];
    });
  }

  private newFilter(m: NetlinkMessage) {
    const t = this.tcmsg(m);
    if (t.ifindex === TCM_IFINDEX_MAGIC_BLOCK) return refuse(EINVAL); // no block of that index
    const kind = cstr(get(t.attrs, TCA_KIND));
    if (!this.linkByIndex(t.ifindex)) refuse(ENODEV);
    if (kind === undefined || !FILTER_KINDS.has(kind)) return refuse(kind === undefined ? EINVAL : ENOENT);
    this.checkFilterParent(t.ifindex, t.parent);
    const prio = t.info >>> 16 || 49152;
    const protocol = t.info & 0xffff;
    const options = get(t.attrs, TCA_OPTIONS);
    this.checkActions(options);
    const group = this.state.filters.filter((f) => f.ifindex === t.ifindex && f.parent === t.parent && f.prio === prio);
    if (group.length && (group[0].kind !== kind || group[0].protocol !== protocol)) refuse(EINVAL);
    const old = t.handle ? group.find((f) => f.handle === t.handle) : undefined;
    if (old) {
      if (m.flags & NLM_F_EXCL) refuse(EEXIST);
      old.options = options;
      return undefined;
    }
    if (!(m.flags & NLM_F_CREATE)) return refuse(ENOENT);
    const handle = t.handle || (kind === 'u32' ? 0x80000800 + group.length : group.reduce((h, f) => Math.max(h, f.handle), 0) + 1);
    this.state.filters.push({ ifindex: t.ifindex, parent: t.parent, prio, protocol, handle: handle >>> 0, kind, ...(options && { options }) });
    return undefined;
  }

  private delFilter(m: NetlinkMessage) {
    const t = this.tcmsg(m);
    if (!this.linkByIndex(t.ifindex)) refuse(ENODEV);
    const prio = t.info >>> 16;
    const match = this.state.filters.filter(
      (f) => f.ifindex === t.ifindex && f.parent === t.parent && (!prio || f.prio === prio) && (!t.handle || f.handle === t.handle),
    );
    if (!match.length) refuse(ENOENT);
    this.state.filters = this.state.filters.filter((f) => !match.includes(f));
    return undefined;
  }

  // ------------------------------------------------------------ nf_tables

  private nfnetlink(msgs: NetlinkMessage[], portId: number): Buffer[] {
    if (msgs[0]?.type === NFNL_MSG_BATCH_BEGIN) {
      // A batch: applied to a copy, kept only when every message was accepted (nfnetlink_rcv_batch's abort).
      const saved = this.state.tables.map(cloneNft);
      const out: Buffer[] = [];
      const ids = new Map<number, string>();
      let failed = false;
      let ended = false;
      // Every message is answered (an error, or an ack when asked), then the whole batch is undone if one failed,
      // or if no NFNL_MSG_BATCH_END closed it (a check: validated, never committed).
      for (const m of msgs.slice(1)) {
        if (m.type === NFNL_MSG_BATCH_END) {
          ended = true;
          break;
        }
        const r = this.answer(m, () => this.nftChange(m, ids));
        out.push(...r);
        if (r.some((d) => parseMessages(d).some((x) => x.type === 2 && x.payload.readInt32LE(0) !== 0))) failed = true;
      }
      if (failed || !ended) this.state.tables = saved;
      else this.gen++;
      return out;
    }
    return msgs.flatMap((m) => this.answer(m, () => (m.type >> 8 === NFNL_SUBSYS_QUEUE ? this.nfqueue(m, portId) : this.nftGet(m))));
  }

  // ------------------------------------------------------------ nfnetlink_queue

  /** One NFNL_SUBSYS_QUEUE message from the socket of port id `portId` (nfqnl_recv_config, nfqnl_recv_verdict[_batch]). */
  private nfqueue(m: NetlinkMessage, portId: number): undefined {
    const type = m.type & 0xff;
    if (type >= NFQNL_MSG_MAX || m.payload.length < 4) return refuse(EINVAL); // nfnetlink: no such callback, or no nfgenmsg
    if (m.type === NFQNL_MSG_PACKET) return refuse(ENOTSUPP); // nfqnl_recv_unsupp
    const num = m.payload.readUInt16BE(2);
    const attrs = readAttrs(m.payload, 4);
    // nla_parse with the message's policy: an attribute shorter than its layout is ERANGE
    const lens = m.type === NFQNL_MSG_CONFIG ? NFQA_CFG_LEN : NFQA_VRD_LEN;
    for (const [t, p] of attrs) if (p.length < (lens[t & NLA_TYPE_MASK] ?? 0)) refuse(ERANGE);
    const q = this.state.queues.find((x) => x.num === num);
    if (m.type === NFQNL_MSG_CONFIG) return this.nfqConfig(num, q, attrs, portId);
    // verdict_instance_lookup, then verdicthdr_get
    if (!q) return refuse(ENODEV);
    if (q.portId !== portId) return refuse(EPERM);
    const hdr = get(attrs, NFQA_VERDICT_HDR) ?? refuse(EINVAL);
    const verdict = hdr.readUInt32BE(0) & 0xffff;
    if (verdict > NF_MAX_VERDICT || verdict === NF_STOLEN) refuse(EINVAL);
    const id = hdr.readUInt32BE(4);
    const take = m.type === NFQNL_MSG_VERDICT_BATCH ? q.queued.filter((x) => !nfqIdAfter(x, id)) : q.queued.filter((x) => x === id);
    if (!take.length) refuse(ENOENT);
    q.queued = q.queued.filter((x) => !take.includes(x));
    this.verdicts.given += take.length;
    return undefined;
  }

  private nfqConfig(num: number, found: NfQueue | undefined, attrs: Attr[], portId: number): undefined {
    let q = found;
    const cmdAttr = get(attrs, NFQA_CFG_CMD);
    const cmd = cmdAttr?.[0];
    // obsolete commands without a queue: accepted, nothing done
    if (cmd === NFQNL_CFG_CMD_PF_BIND || cmd === NFQNL_CFG_CMD_PF_UNBIND) return undefined;
    const flagsAttr = get(attrs, NFQA_CFG_FLAGS);
    const maskAttr = get(attrs, NFQA_CFG_MASK);
    if (flagsAttr && !maskAttr) refuse(EINVAL);
    const flags = flagsAttr?.readUInt32BE(0) ?? 0;
    const mask = maskAttr?.readUInt32BE(0) ?? 0;
    if (flagsAttr && flags >= NFQA_CFG_F_MAX) refuse(EOPNOTSUPP);
    if (q && q.portId !== portId) refuse(EPERM);
    if (cmd !== undefined) {
      if (cmd === NFQNL_CFG_CMD_BIND) {
        if (q) refuse(EBUSY);
        q = {
          num,
          portId,
          copyMode: NFQNL_COPY_NONE,
          copyRange: NFQNL_MAX_COPY_RANGE,
          maxlen: NFQNL_QMAX_DEFAULT,
          flags: 0,
          queued: [],
          idSequence: 0,
          queueDropped: 0,
        };
        this.state.queues.push(q);
        if (this.synsPerBind > 0) {
          const n = this.synsPerBind;
          setImmediate(() => this.arrive(num, n));
        }
      } else if (cmd === NFQNL_CFG_CMD_UNBIND) {
        if (!q) refuse(ENODEV);
        this.destroyQueue(q!);
        return undefined; // the rest of the message is not read
      } else refuse(EOPNOTSUPP);
    }
    if (!q) return refuse(ENODEV);
    const params = get(attrs, NFQA_CFG_PARAMS);
    if (params) {
      // nfqnl_set_mode; an unknown mode changes nothing (its error is not returned)
      const mode = params[4];
      const range = params.readUInt32BE(0);
      if (mode === NFQNL_COPY_NONE || mode === NFQNL_COPY_META) {
        q.copyMode = mode;
        q.copyRange = 0;
      } else if (mode === NFQNL_COPY_PACKET) {
        q.copyMode = mode;
        q.copyRange = range === 0 || range > NFQNL_MAX_COPY_RANGE ? NFQNL_MAX_COPY_RANGE : range;
      }
    }
    const maxlen = get(attrs, NFQA_CFG_QUEUE_MAXLEN);
    if (maxlen) q.maxlen = maxlen.readUInt32BE(0);
    if (flagsAttr) q.flags = (q.flags & ~mask) | (flags & mask);
    return undefined;
  }

  private table(family: number, name: string | undefined): NftTable | undefined {
    return this.state.tables.find((t) => t.family === family && t.name === name);
  }

  private nftMsg(type: number, family: number, attrs: Attr[]): { type: number; payload: Buffer } {
    const h = Buffer.from([family, 0, 0, 0]);
    h.writeUInt16BE(this.gen & 0xffff, 2);
    return { type: (NFNL_SUBSYS_NFTABLES << 8) | type, payload: Buffer.concat([h, writeAttrs(attrs)]) };
  }

  private tableMsg(t: NftTable) {
    return this.nftMsg(NFT.NEWTABLE, t.family, [
      strAttr(NFTA_TABLE_NAME, t.name),
      be32Attr(NFTA_TABLE_FLAGS, t.flags),
      be32Attr(NFTA_TABLE_USE, t.chains.size + t.sets.size),
      be64Attr(NFTA_TABLE_HANDLE, t.handle),
      ...(t.userdata ? [[NFTA_TABLE_USERDATA, t.userdata] as Attr] : []),
    ]);
  }

  private liveElems(s: NftSet): Array<[string, { attrs: Attr[]; expiresAt?: number }]> {
    const now = Date.now();
    for (const [k, e] of s.elems) if (e.expiresAt !== undefined && e.expiresAt <= now) s.elems.delete(k);
    return [...s.elems];
  }

  private nftGet(m: NetlinkMessage) {
    const type = m.type & 0xff;
    const family = m.payload[0];
    const attrs = readAttrs(m.payload, 4);
    const dump = (m.flags & NLM_F_DUMP) !== 0;
    const tables = this.state.tables.filter((t) => !family || t.family === family);
    switch (type) {
      case NFT.GETGEN:
        return [this.nftMsg(NFT.NEWGEN, 0, [be32Attr(NFTA_GEN_ID, this.gen)])];
      case NFT.GETTABLE: {
        if (dump) return tables.map((t) => this.tableMsg(t));
        return [this.tableMsg(this.table(family, cstr(get(attrs, NFTA_TABLE_NAME))) ?? refuse(ENOENT))];
      }
      case NFT.GETCHAIN: {
        const tn = cstr(get(attrs, NFTA_CHAIN_TABLE));
        const ts = tables.filter((t) => tn === undefined || t.name === tn);
        if (!dump && !ts.length) refuse(ENOENT);
        const cs = ts.flatMap((t) => [...t.chains.values()].map((c) => ({ t, c })));
        const name = cstr(get(attrs, NFTA_CHAIN_NAME));
        const pick = dump ? cs : cs.filter(({ c }) => c.name === name);
        if (!dump && !pick.length) refuse(ENOENT);
        return pick.map(({ t, c }) =>
          this.nftMsg(NFT.NEWCHAIN, t.family, [
            strAttr(NFTA_CHAIN_TABLE, t.name),
            strAttr(NFTA_CHAIN_NAME, c.name),
            be64Attr(NFTA_CHAIN_HANDLE, c.handle),
            ...c.attrs,
            be32Attr(NFTA_CHAIN_USE, t.rules.filter((r) => r.chain === c.name).length),
          ]),
        );
      }
      case NFT.GETSET: {
        const tn = cstr(get(attrs, NFTA_SET_TABLE));
        const ts = tables.filter((t) => tn === undefined || t.name === tn);
        if (!dump && !ts.length) refuse(ENOENT);
        const name = cstr(get(attrs, NFTA_SET_NAME));
        const ss = ts.flatMap((t) => [...t.sets.values()].filter((s) => dump || s.name === name).map((s) => ({ t, s })));
        if (!dump && !ss.length) refuse(ENOENT);
        return ss.map(({ t, s }) =>
          this.nftMsg(NFT.NEWSET, t.family, [strAttr(NFTA_SET_TABLE, t.name), strAttr(NFTA_SET_NAME, s.name), be64Attr(NFTA_SET_HANDLE, s.handle), ...s.attrs]),
        );
      }
      case NFT.GETSETELEM: {
        const t = this.table(family, cstr(get(attrs, NFTA_SET_ELEM_LIST_TABLE))) ?? refuse(ENOENT);
        const s = t.sets.get(cstr(get(attrs, NFTA_SET_ELEM_LIST_SET)) ?? '') ?? refuse(ENOENT);
        const now = Date.now();
        const elems = this.liveElems(s).map(([, e]) =>
          nestedAttr(NFTA_LIST_ELEM, [
            ...e.attrs,
            ...(e.expiresAt !== undefined ? [be64Attr(NFTA_SET_ELEM_EXPIRATION, BigInt(Math.max(0, e.expiresAt - now)))] : []),
          ]),
        );
        return [
          this.nftMsg(NFT.NEWSETELEM, t.family, [
            strAttr(NFTA_SET_ELEM_LIST_TABLE, t.name),
            strAttr(NFTA_SET_ELEM_LIST_SET, s.name),
            ...(elems.length ? [nestedAttr(NFTA_SET_ELEM_LIST_ELEMENTS, elems)] : []),
          ]),
        ];
      }
      case NFT.GETOBJ:
      case NFT.GETFLOWTABLE:
        // no stateful objects (counters, quotas) nor flowtables in this model
        return dump ? [] : refuse(ENOENT);
      case NFT.GETRULE: {
        const tn = cstr(get(attrs, NFTA_RULE_TABLE));
        const cn = cstr(get(attrs, NFTA_RULE_CHAIN));
        const ts = tables.filter((t) => tn === undefined || t.name === tn);
        if (tn !== undefined && !ts.length) refuse(ENOENT);
        return ts.flatMap((t) =>
          t.rules
            .filter((r) => cn === undefined || r.chain === cn)
            .map((r) =>
              this.nftMsg(NFT.NEWRULE, t.family, [
                strAttr(NFTA_RULE_TABLE, t.name),
                strAttr(NFTA_RULE_CHAIN, r.chain),
                be64Attr(NFTA_RULE_HANDLE, r.handle),
                ...r.attrs,
              ]),
            ),
        );
      }
      default:
        return refuse(EOPNOTSUPP);
    }
  }

  private nftChange(m: NetlinkMessage, ids: Map<number, string>) {
    const type = m.type & 0xff;
    const family = m.payload[0];
    const attrs = readAttrs(m.payload, 4);
    const excl = (m.flags & NLM_F_EXCL) !== 0;
    const ownTable = (type_: number) => {
      const name = cstr(get(attrs, type_));
      return this.table(family, name);
    };
    switch (type) {
      case NFT.NEWTABLE: {
        const name = cstr(get(attrs, NFTA_TABLE_NAME)) ?? refuse(EINVAL);
        const old = this.table(family, name);
        const flagsAttr = get(attrs, NFTA_TABLE_FLAGS);
        if (old) {
          if (excl) refuse(EEXIST);
          // an existing table: only its flags change (nf_tables_updtable); its userdata stays
          if (flagsAttr) old.flags = flagsAttr.readUInt32BE(0);
          return undefined;
        }
        const userdata = get(attrs, NFTA_TABLE_USERDATA);
        this.state.tables.push({
          family,
          name,
          flags: flagsAttr?.readUInt32BE(0) ?? 0,
          handle: this.nftHandle++,
          ...(userdata && { userdata }),
          chains: new Map(),
          sets: new Map(),
          rules: [],
        });
        return undefined;
      }
      case NFT.DELTABLE:
      case NFT.DESTROYTABLE: {
        const t = ownTable(NFTA_TABLE_NAME);
        if (!t) return type === NFT.DESTROYTABLE ? undefined : refuse(ENOENT);
        this.state.tables = this.state.tables.filter((x) => x !== t);
        return undefined;
      }
      case NFT.NEWCHAIN: {
        const t = ownTable(NFTA_CHAIN_TABLE) ?? refuse(ENOENT);
        const name = cstr(get(attrs, NFTA_CHAIN_NAME)) ?? refuse(EINVAL);
        const old = t.chains.get(name);
        if (old && excl) refuse(EEXIST);
        if (!old)
          t.chains.set(name, { name, handle: this.nftHandle++, attrs: without(attrs, NFTA_CHAIN_TABLE, NFTA_CHAIN_NAME, NFTA_CHAIN_ID, NFTA_CHAIN_HANDLE) });
        return undefined;
      }
      case NFT.DELCHAIN:
      case NFT.DESTROYCHAIN: {
        const t = ownTable(NFTA_CHAIN_TABLE);
        const name = cstr(get(attrs, NFTA_CHAIN_NAME)) ?? '';
        if (!t || !t.chains.has(name)) return type === NFT.DESTROYCHAIN ? undefined : refuse(ENOENT);
        if (t.rules.some((r) => r.chain === name)) refuse(EBUSY);
        t.chains.delete(name);
        return undefined;
      }
      case NFT.NEWSET: {
        const t = ownTable(NFTA_SET_TABLE) ?? refuse(ENOENT);
        const name = cstr(get(attrs, NFTA_SET_NAME)) ?? refuse(EINVAL);
        const id = get(attrs, NFTA_SET_ID);
        if (id) ids.set(id.readUInt32BE(0), name);
        if (t.sets.has(name)) {
          if (excl) refuse(EEXIST);
          return undefined;
        }
        t.sets.set(name, {
          name,
          handle: this.nftHandle++,
          attrs: without(attrs, NFTA_SET_TABLE, NFTA_SET_NAME, NFTA_SET_ID, NFTA_SET_HANDLE),
          elems: new Map(),
        });
        return undefined;
      }
      case NFT.DELSET:
      case NFT.DESTROYSET: {
        const t = ownTable(NFTA_SET_TABLE);
        const name = cstr(get(attrs, NFTA_SET_NAME)) ?? '';
        if (!t || !t.sets.has(name)) return type === NFT.DESTROYSET ? undefined : refuse(ENOENT);
        t.sets.delete(name);
        return undefined;
      }
      case NFT.NEWSETELEM:
      case NFT.DELSETELEM:
      case NFT.DESTROYSETELEM: {
        const t = ownTable(NFTA_SET_ELEM_LIST_TABLE) ?? refuse(ENOENT);
        const idAttr = get(attrs, NFTA_SET_ELEM_LIST_SET_ID);
        const name = cstr(get(attrs, NFTA_SET_ELEM_LIST_SET)) ?? (idAttr ? ids.get(idAttr.readUInt32BE(0)) : undefined);
        const s = t.sets.get(name ?? '') ?? refuse(ENOENT);
        const list = get(attrs, NFTA_SET_ELEM_LIST_ELEMENTS);
        this.liveElems(s);
        if (!list) {
          if (type === NFT.NEWSETELEM) refuse(EINVAL);
          s.elems.clear();
          return undefined;
        }
        for (const [, e] of readAttrs(list)) {
          const ea = readAttrs(e);
          const keyNest = get(ea, NFTA_SET_ELEM_KEY) ?? refuse(EINVAL);
          const key = keyNest.toString('hex');
          if (type !== NFT.NEWSETELEM) {
            if (!s.elems.has(key)) {
              if (type === NFT.DELSETELEM) refuse(ENOENT);
              continue;
            }
            s.elems.delete(key);
            continue;
          }
          if (s.elems.has(key) && excl) refuse(EEXIST);
          const timeout = get(ea, NFTA_SET_ELEM_TIMEOUT);
          s.elems.set(key, { attrs: ea, ...(timeout && { expiresAt: Date.now() + Number(timeout.readBigUInt64BE(0)) }) });
        }
        return undefined;
      }
      case NFT.NEWRULE: {
        const t = ownTable(NFTA_RULE_TABLE) ?? refuse(ENOENT);
        const chain = cstr(get(attrs, NFTA_RULE_CHAIN)) ?? refuse(EINVAL);
        if (!t.chains.has(chain)) refuse(ENOENT);
        const rule = {
          chain,
          handle: this.nftHandle++,
          attrs: without(attrs, NFTA_RULE_TABLE, NFTA_RULE_CHAIN, NFTA_RULE_HANDLE, NFTA_RULE_POSITION, NFTA_RULE_ID),
        };
        if (m.flags & NLM_F_APPEND) t.rules.push(rule);
        else t.rules.unshift(rule);
        return undefined;
      }
      case NFT.DELRULE:
      case NFT.DESTROYRULE: {
        const t = ownTable(NFTA_RULE_TABLE) ?? refuse(ENOENT);
        const h = get(attrs, NFTA_RULE_HANDLE);
        const chain = cstr(get(attrs, NFTA_RULE_CHAIN));
        const match = t.rules.filter((r) => (chain === undefined || r.chain === chain) && (!h || r.handle === h.readBigUInt64BE(0)));
        if (!match.length && h && type === NFT.DELRULE) refuse(ENOENT);
        t.rules = t.rules.filter((r) => !match.includes(r));
        return undefined;
      }
      default:
        return refuse(EOPNOTSUPP);
    }
  }
}
