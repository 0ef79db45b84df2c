/**
 * The inbound hold: new connections that arrive from the network on a
 * device DEV, held on an IFB device that synplug creates.
 *
 * ```
 * link spifb<ifindex of DEV> type ifb        (alias "synplug inbound hold of DEV; state <mark>"; IPv6 off; up)
 * qdisc plug 1: root on the IFB               (limit --limit bytes, released right after creation)
 * qdisc clsact on DEV                         (added only when DEV has neither clsact nor ingress; shared)
 * filter DEV ingress protocol ip   pref 65000 flower|u32  TCP, SYN set, ACK clear, dst port P [, dst A]
 *        action mirred egress redirect dev IFB
 * filter DEV ingress protocol ipv6 pref 65001 (the same for IPv6)
 * ```
 *
 * A SYN to one of the ports (and, with addresses, to one of them) is stolen
 * at DEV's ingress and queued on the IFB's plug; the IFB hands what it
 * transmits back to DEV's receive path (not classified by DEV's ingress
 * again), so the SYN reaches the socket once the plug is released. Every
 * other packet, the rest of each connection included, never passes the IFB.
 *
 * Prefs: synplug's filters sit at pref {@link INBOUND_PREF} (65000 for
 * `ip`, 65001 for `ipv6`: the kernel keeps one protocol per pref), after
 * every filter tc numbers by itself (from 49152 down) and after most hand-
 * numbered ones, so that foreign filters see the SYN first (a foreign filter
 * that ends classification lets the SYN pass unheld rather than skip it).
 * With u32 (kernels without cls_flower), the IPv4 filter uses the hash table
 * {@link INBOUND_U32_HTID} (`7f0:`) to reach the TCP header after IP options.
 *
 * What is not covered: with u32, an IPv6 SYN whose TCP header follows
 * extension headers passes unheld (flower follows them); without addresses,
 * SYNs that DEV forwards to other hosts on those ports are held as well.
 * There is no kernel-side deadline (see {@link InboundHold}).
 *
 * @module
 */
import { writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RequestInit } from '../../netlink/connection.js';
import { NetlinkError, SynplugError, UsageError } from '../../netlink/errors.js';
import { NETLINK_ROUTE, NLM_F_ACK, NLM_F_CREATE, NLM_F_EXCL } from '../../netlink/message.js';
import { nested, str } from '../../netlink/attributes.js';
import { defaultNetns, withNetns } from '../../netlink/netns.js';
import { RTM_NEWACTION, RTM_NEWLINK } from '../../netlink/route/constants.js';
import {
  decodeLink,
  getLinkRequest,
  IFF_LOOPBACK,
  IFF_UP,
  IFINFOMSG_LEN,
  IFLA_IFALIAS,
  IFLA_IFNAME,
  listRawLinks,
  resolveIfindex,
} from '../../netlink/route/link.js';
import { createLink, deleteLink, newLinkRequest, probeLinkKind, setLinkUp } from '../../netlink/route/linkinfo.js';
import {
  addFilter,
  addQdisc,
  deleteFilter,
  deleteQdisc,
  listFilters,
  listQdiscs,
  plugReleaseIndefinite,
  plugRequest,
  filterRequest,
  plugSetLimit,
  TC_H_ROOT,
  TCQ_PLUG_BUFFER,
  TCQ_PLUG_RELEASE_INDEFINITE,
  flowerSynMatch,
  u32SynMatch,
  type FilterEntry,
  type QdiscEntry,
} from '../../tc/index.js';
import { nameActionDevices, resolveActionDevices } from '../../tc/actions/list.js';
import { TCA_ACT_KIND, TCA_ACT_OPTIONS } from '../../tc/actions/constants.js';
import { canonicalAddress, DEFAULTS, type GuardConfig } from '../config.js';
import { NoDeviceError } from '../errors.js';
import type { HoldRecord, SetupRecord } from '../state.js';
import type { HoldStatus, InboundClassifier, InboundFamily, InboundOptions, PieceState, PlugStats, SetupOptions, SetupResult } from '../types.js';
import { formatFilterText, formatQdiscText } from '../../tc/format.js';

export type { InboundClassifier, InboundFamily, InboundOptions };
import { probeFilterKind, probeQdiscKind, type ModulePiece, type Support } from '../support.js';
import { addReleasedPlug, plugReleaseStep } from './local.js';
import { hexMessage } from '../watchdog.js';
import { constants as osConstants } from 'node:os';
import type {
  HeldTraffic,
  Hold,
  HoldAction,
  HoldHandoff,
  HoldInspection,
  HoldMode,
  HoldPieces,
  HoldSockets,
  Piece,
  PieceLifetime,
  SetupStep,
  UnrecordedPiece,
} from './types.js';
import { inboundRecordRefusal, isInboundRecord } from './inbound-record.js';
import { inspectHold, sparingOthers, teardownHold } from '../pieces.js';
import { EARLIER_MARK_DETAIL, IFB_ALIAS_PREFIX, ifbAlias, ifbAliasMark, otherDirectoryDetail, ownerOfMark } from '../teardown-marks.js';
import { stateDirMark } from '../state-fs.js';

/** synplug's filter prefs at DEV's ingress: one per protocol (the kernel keeps one protocol per pref). */
export const INBOUND_PREF = { ip: 65000, ipv6: 65001 } as const;
/** The u32 hash table (`7f0:`) that holds the IPv4 TCP-level nodes (u32 only); ids are per hook, so a foreign u32 filter must not use it. */
export const INBOUND_U32_HTID = 0x7f0;
/** The plug's handle on the IFB (root): `1:` */
export const IFB_PLUG_HANDLE = 0x00010000;
/**
 * The start of the alias synplug gives its IFB (IFLA_IFALIAS): how a later
 * setup recognises one a crash left behind. The whole alias
 * (teardown-marks.ts ifbAlias) names the device and the state directory
 * whose setup made it (`synplug inbound hold of DEV; state <mark>`).
 */
export { IFB_ALIAS_PREFIX };
/** How long teardown waits for the kernel to free a u32 hash table after its links went (RCU), ms. */
const HTABLE_FREE_WAIT_MS = 5000;

/** {@link InboundOptions} checked and in canonical form. */
export interface InboundSpec {
  dev: string;
  /** sorted, no duplicates */
  ports: number[];
  /** canonical text, no duplicates, IPv4 first */
  addrs: string[];
  classifier: InboundClassifier | 'auto';
}

/** The inbound hold's part of `setup.json`. */
export interface InboundHoldRecord extends HoldRecord {
  mode: 'inbound';
  /** the IFB synplug created */
  ifb: string;
  ports: number[];
  addrs: string[];
  /** the classifier the filters use */
  classifier: InboundClassifier;
  /** plug limit, bytes */
  limit: number;
  /** the protocols filtered (`ip`, `ipv6`) */
  families: InboundFamily[];
  /** setup added DEV's clsact (teardown removes it when no foreign filter is left on it) */
  addedClsact: boolean;
}

/** The hold id of the inbound hold of a device: `inbound:DEV`. */
export function inboundId(dev: string): string {
  return `inbound:${dev}`;
}

/** The IFB name synplug uses for a device index: `spifb<ifindex>` (at most 15 bytes). */
export function ifbNameFor(ifindex: number): string {
  return `spifb${ifindex}`;
}

/**
 * Check the inbound options (nothing sent).
 * @throws {UsageError} no device or a bad name, `lo`, no port or one outside 1-65535, an address that is not
 *   a unicast IPv4/IPv6 address (an IPv4-mapped IPv6 address is refused: give the IPv4 one), a bad classifier
 */
export function validateInbound(o: InboundOptions): InboundSpec {
  if (typeof o !== 'object' || o === null) throw new UsageError('inbound: give { dev, ports, addrs? }');
  for (const k of Object.keys(o))
    if (!['dev', 'ports', 'addrs', 'classifier'].includes(k))
      throw new UsageError(`inbound: no option ${JSON.stringify(k)} (it takes dev, ports, addrs, classifier)`);
  const dev = o.dev;
  if (typeof dev !== 'string' || !dev || Buffer.byteLength(dev) > 15 || /[\s/:]/.test(dev)) {
    throw new UsageError(`--inbound: bad device name '${String(dev)}': 1-15 characters, no spaces, '/' or ':'`);
  }
  if (dev === 'lo') {
    throw new UsageError(
      "--inbound lo: connections on lo come from this machine; hold them with the local hold ('synplug setup' without --inbound), not an inbound one",
    );
  }
  if (!Array.isArray(o.ports) || o.ports.length === 0) throw new UsageError('--inbound needs at least one --port (the TCP port(s) the server listens on)');
  const ports = [...new Set(o.ports.map((p) => checkPort(p)))].sort((a, b) => a - b);
  if (o.addrs !== undefined && !Array.isArray(o.addrs)) throw new UsageError('inbound addrs: give an array of addresses');
  const addrs = [...new Set((o.addrs ?? []).map((a) => canonicalDestination(a)))].sort((a, b) => isIP(a) - isIP(b));
  const classifier = o.classifier ?? 'auto';
  if (!['auto', 'flower', 'u32'].includes(classifier)) throw new UsageError(`--classifier: '${String(classifier)}' is not flower, u32 or auto`);
  return { dev, ports, addrs, classifier };
}

function canonicalDestination(a: unknown): string {
  let c: string;
  try {
    c = canonicalAddress(a);
  } catch (e) {
    if (e instanceof UsageError)
      throw new UsageError(`--addr (with --inbound): ${e.message.replace("cannot be the proxy's address", 'cannot be a destination to hold SYNs to')}`);
    throw e;
  }
  if (/^127\./.test(c) || c === '::1' || /^::ffff:127\./i.test(c))
    throw new UsageError(
      `--addr ${c} (with --inbound): a loopback address, which no SYN arriving on a device from outside is sent to; give an address of the device's, or hold local connections with the local hold ('synplug setup' without --inbound)`,
    );
  return c;
}

function checkPort(p: unknown): number {
  if (typeof p !== 'number' || !Number.isInteger(p) || p < 1 || p > 65535) throw new UsageError(`--port: '${String(p)}' is not a TCP port (1-65535)`);
  return p;
}

/** The protocols a spec filters: those of its addresses, both without addresses. */
export function familiesOf(addrs: readonly string[]): InboundFamily[] {
  if (addrs.length === 0) return ['ip', 'ipv6'];
  const out: InboundFamily[] = [];
  if (addrs.some((a) => isIP(a) === 4)) out.push('ip');
  if (addrs.some((a) => isIP(a) === 6)) out.push('ipv6');
  return out;
}

/** The IFB's state, as read. */
interface IfbState {
  exists: boolean;
  index?: number;
  kind?: string;
  alias?: string;
  up?: boolean;
}

/** What the kernel holds now, as the inbound hold reads it. */
export interface InboundObservation {
  /** DEV's qdiscs */
  qdiscs: QdiscEntry[];
  /** the qdisc in DEV's ingress slot (clsact or ingress), if any */
  ingressQdisc?: QdiscEntry;
  /** DEV's filters at ingress (empty without an ingress qdisc) */
  ingressFilters: FilterEntry[];
  /** DEV's filters at egress (clsact only) */
  egressFilters: FilterEntry[];
  /** the IFB */
  ifb: IfbState;
  /** the IFB's qdiscs (empty when it does not exist) */
  ifbQdiscs: QdiscEntry[];
  /** the mark of this hold's state directory (undefined: none given, or the directory does not exist yet), which the IFB's alias carries */
  stateMark?: string;
}

/** The pieces of the inbound hold. */
export const INBOUND_PIECES = ['ifb', 'plug', 'clsact', 'filter_ip', 'filter_ipv6'] as const;
/** A piece of the inbound hold. */
export type InboundPiece = (typeof INBOUND_PIECES)[number];
/**
 * How long the SYN filters live (see {@link PieceLifetime}): armed. Every
 * packet arriving on DEV passes them (measured: 4.9 % of the CPU per new
 * connection, bench/results/inbound-cost-*), so they exist only around a
 * hold: added in phase one, removed after the last release.
 */
export const INBOUND_FILTER_LIFETIME: PieceLifetime = 'armed';

/** What `status` shows of an inbound hold. */
export interface InboundStatusDetails {
  /** the IFB synplug created */
  ifb: string;
  ports: number[];
  addrs: string[];
  classifier: InboundClassifier;
  /** the IFB's qdiscs with counters (the plug) */
  qdiscs: QdiscEntry[];
  /** synplug's filters at DEV's ingress, with their action counters */
  filters: FilterEntry[];
  /** packets held now, passed and dropped by the plug */
  held?: number;
  passed?: number;
  dropped?: number;
}

/** The actions of a filter, as the redirects they are: the target's index and name, or undefined for anything else. */
const redirectsOf = (f: FilterEntry): Array<{ ifindex?: number; name?: string } | undefined> => {
  const acts = (f.options as { actions?: Array<Record<string, unknown>> } | undefined)?.actions ?? [];
  return acts.map((a) =>
    a.kind === 'mirred' && a.mirred_action === 'redirect' && a.direction === 'egress'
      ? { ifindex: typeof a.ifindex === 'number' ? a.ifindex : undefined, name: typeof a.to_dev === 'string' ? a.to_dev : undefined }
      : undefined,
  );
};

const hasActions = (f: FilterEntry) => ((f.options as { actions?: unknown[] } | undefined)?.actions?.length ?? 0) > 0;

/**
 * The inbound hold of one device.
 *
 * No kernel-side deadline: tc's ingress hook runs before netfilter's
 * (netdev ingress, prerouting), so no nftables set element can stop the
 * redirect at a deadline, and no tc classifier or action of these kernels
 * expires by itself (without BPF). A plug left buffering is released by
 * protect's watchdog, and by the next synplug command (stale-plug recovery).
 */
export class InboundHold implements Hold {
  readonly mode = 'inbound';
  readonly via = 'plug';
  readonly scope = 'inbound';
  readonly id: string;
  readonly dev: string;
  readonly ifb: string;
  readonly families: InboundFamily[];
  readonly bufferMessages: readonly RequestInit[];
  readonly releaseMessages: readonly RequestInit[];
  /** the classifier chosen (by the record, the spec, or the probe in {@link probeSupport}) */
  classifier: InboundClassifier;

  /**
   * @param sockets the session's sockets
   * @param spec the checked options
   * @param limit the plug limit, bytes
   * @param ifindex DEV's index
   * @param ifbIndex the IFB's index, when it exists (the plug messages need it)
   * @param record the hold's record entry, when setup recorded it
   * @param orphan the hold was found by its IFB's alias, without a record (see {@link findSynplugIfbs}): its record is a stand-in
   * @param stateDir the state directory the hold is set up through (its mark goes in the IFB's alias); without it, the
   *   hold is nobody's (only its device is checked)
   */
  constructor(
    /** @internal */ readonly sockets: HoldSockets,
    readonly spec: InboundSpec,
    readonly limit: number,
    readonly ifindex: number,
    readonly ifbIndex: number | undefined,
    readonly record?: InboundHoldRecord,
    readonly orphan = false,
    readonly stateDir?: string,
  ) {
    this.dev = spec.dev;
    this.id = inboundId(spec.dev);
    this.ifb = record?.ifb ?? ifbNameFor(ifindex);
    this.families = familiesOf(spec.addrs);
    this.classifier = spec.classifier !== 'auto' ? spec.classifier : (record?.classifier ?? 'flower');
    const msg = (action: number): RequestInit[] => {
      if (ifbIndex === undefined) return [];
      const r = plugRequest(ifbIndex, TC_H_ROOT, IFB_PLUG_HANDLE, action);
      return [{ type: r.type, flags: r.flags | NLM_F_ACK, payload: r.payload }];
    };
    this.bufferMessages = msg(TCQ_PLUG_BUFFER);
    this.releaseMessages = msg(TCQ_PLUG_RELEASE_INDEFINITE);
  }

  /**
   * The kernel support this hold needs: sch_plug, sch_ingress (clsact),
   * act_mirred, ifb, and cls_flower or cls_u32 (flower preferred; `auto`
   * picks u32 when flower is missing or cannot be checked). Also picks the
   * classifier. Changes nothing.
   */
  async probeSupport(): Promise<{ missing: ModulePiece[]; unverified: ModulePiece[] }> {
    const route = this.sockets.route;
    const missing: ModulePiece[] = [];
    const unverified: ModulePiece[] = [];
    if ((await probeQdiscKind(route, this.ifindex, 'plug')) === 'no') missing.push({ module: 'sch_plug', what: 'qdisc plug' });
    if ((await probeQdiscKind(route, this.ifindex, 'clsact')) === 'no') missing.push({ module: 'sch_ingress', what: 'qdisc clsact' });
    if ((await probeMirred(route)) === 'no') missing.push({ module: 'act_mirred', what: 'action mirred' });
    if ((await probeIfb(route)) === 'no') missing.push({ module: 'ifb', what: 'link ifb' });
    const want = this.record && this.spec.classifier === 'auto' ? this.record.classifier : this.spec.classifier;
    if (want === 'u32' || want === 'flower') {
      const s = await probeFilterKind(route, want);
      if (s === 'no') missing.push({ module: `cls_${want}`, what: `filter ${want}` });
      if (s === 'unknown') unverified.push({ module: `cls_${want}`, what: `filter ${want}` });
      this.classifier = want;
    } else {
      const flower = await probeFilterKind(route, 'flower');
      if (flower === 'yes') this.classifier = 'flower';
      else {
        const u32 = await probeFilterKind(route, 'u32');
        this.classifier = 'u32';
        // Either classifier does: the message names both.
        const either = { module: 'cls_flower', alternatives: ['cls_u32'], what: 'a TCP SYN classifier: filter flower or u32' };
        if (u32 === 'no' && flower === 'no') missing.push(either);
        else if (u32 === 'no' || (u32 === 'unknown' && flower === 'unknown')) unverified.push(either);
        else if (u32 === 'unknown')
          unverified.push({ module: 'cls_u32', what: 'filter u32 (cls_flower, the other classifier that does, is not in this kernel)' });
      }
    }
    return { missing, unverified };
  }

  /** Read what the kernel holds now. @throws {NetlinkError} a listing refused */
  async observe(): Promise<InboundObservation> {
    const route = this.sockets.route;
    const ifbState = await readLink(route, this.ifb);
    const stateMark = this.stateDir === undefined ? undefined : stateDirMark(this.stateDir);
    const mark = stateMark !== undefined ? { stateMark } : {};
    if (this.ifindex === 0) {
      // DEV is gone (opened from the record): only the IFB is left to see.
      const ifbQdiscs = ifbState.exists && ifbState.index !== undefined ? await listQdiscs(route, { ifindex: ifbState.index }) : [];
      return { qdiscs: [], ingressFilters: [], egressFilters: [], ifb: ifbState, ifbQdiscs, ...mark };
    }
    const qdiscs = await listQdiscs(route, { ifindex: this.ifindex });
    const ingressQdisc = qdiscs.find((q) => q.parent === 'ffff:fff1' || q.kind === 'clsact' || q.kind === 'ingress');
    const ingressFilters = ingressQdisc ? await listFilters(route, { ifindex: this.ifindex, parent: 'ingress' }) : [];
    const egressFilters = ingressQdisc?.kind === 'clsact' ? await listFilters(route, { ifindex: this.ifindex, parent: 'egress' }) : [];
    const ifbQdiscs = ifbState.exists && ifbState.index !== undefined ? await listQdiscs(route, { ifindex: ifbState.index }) : [];
    return { qdiscs, ...(ingressQdisc && { ingressQdisc }), ingressFilters, egressFilters, ifb: ifbState, ifbQdiscs, ...mark };
  }

  /**
   * Refuse a device of the IFB's name that synplug did not create (checked
   * before anything else of setup's phase one: it is bad input).
   * @throws {IfbNameClashError}
   */
  async refuseClash(): Promise<void> {
    const st = await readLink(this.sockets.route, this.ifb);
    if (st.exists && !this.ifbIsOurs({ ifb: st } as InboundObservation)) throw new IfbNameClashError(this.ifb, this.dev, st.kind);
  }

  /** Whether the IFB is synplug's: recorded by setup, or carrying synplug's alias for this device (whichever state directory's). */
  ifbIsOurs(o: InboundObservation): boolean {
    if (!o.ifb.exists || o.ifb.kind !== 'ifb') return false;
    return this.record?.ifb === this.ifb || ifbAliasMark(o.ifb.alias)?.dev === this.dev;
  }

  /**
   * Whose the IFB is, by the state directory's mark in its alias
   * (teardown-marks.ts ifbAlias): `ours`, this state directory's; `other`,
   * another's (`theirs` its mark, `detail` the words); `earlier`, an earlier
   * synplug's (its alias without a state directory: `synplug setup` marks
   * it anew); `none`, no IFB or no alias of synplug's for this device.
   */
  ifbOwner(o: InboundObservation): { is: 'ours' | 'other' | 'earlier' | 'none'; theirs?: string; detail?: string } {
    const m = o.ifb.exists && o.ifb.kind === 'ifb' ? ifbAliasMark(o.ifb.alias) : undefined;
    if (!m || m.dev !== this.dev) return { is: 'none' };
    const is = ownerOfMark(m, o.stateMark);
    if (is === 'earlier') return { is, detail: EARLIER_MARK_DETAIL };
    return is === 'other'
      ? { is, theirs: m.stateMark, detail: otherDirectoryDetail(`inbound hold of ${this.dev}`, "its IFB's alias", m.stateMark!, o.stateMark) }
      : { is };
  }

  /** synplug's filters of one protocol (those at its pref). */
  filtersAt(o: InboundObservation, fam: InboundFamily): FilterEntry[] {
    return o.ingressFilters.filter((f) => f.pref === INBOUND_PREF[fam]);
  }

  /**
   * Whether what sits at synplug's pref for `fam` is synplug's: the right
   * protocol, and every action a mirred egress redirect, to its IFB (by
   * index, or by name when the lister named it); when setup recorded this
   * hold, a redirect whose target is gone (the IFB removed by hand) counts too.
   */
  filtersAreOurs(o: InboundObservation, fam: InboundFamily): boolean {
    const fs = this.filtersAt(o, fam);
    const toOurIfb = (r: { ifindex?: number; name?: string } | undefined) =>
      r !== undefined &&
      ((o.ifb.index !== undefined && r.ifindex === o.ifb.index) || r.name === this.ifb || (this.record !== undefined && (!o.ifb.exists || !r.ifindex)));
    return fs.length > 0 && fs.every((f) => f.protocol === fam) && fs.filter(hasActions).every((f) => redirectsOf(f).every(toOurIfb));
  }

  /** Judge each piece. */
  judge(o: InboundObservation): Record<InboundPiece, PieceState> {
    const ifbName = `link ifb ${this.ifb} (synplug's, up)`;
    let ifb: PieceState;
    if (!o.ifb.exists) ifb = { piece: ifbName, status: 'missing' };
    else if (o.ifb.kind !== 'ifb') ifb = { piece: ifbName, status: 'different', detail: `${this.ifb} is a ${o.ifb.kind ?? 'device'} that is not synplug's` };
    else if (!this.ifbIsOurs(o)) ifb = { piece: ifbName, status: 'different', detail: `${this.ifb} is an ifb that synplug did not create` };
    else if (this.ifbOwner(o).detail !== undefined)
      // another state directory's (never used through this one), or an earlier synplug's (setup marks it anew)
      ifb = { piece: ifbName, status: 'different', detail: this.ifbOwner(o).detail };
    else if (!o.ifb.up) ifb = { piece: ifbName, status: 'different', detail: 'down' };
    else ifb = { piece: ifbName, status: 'ok' };

    const plugName = `qdisc plug 1: root on ${this.ifb} limit ${this.limit}`;
    const root = o.ifbQdiscs.find((q) => q.root);
    let plug: PieceState;
    if (!o.ifb.exists || !root || root.handle === '0:') plug = { piece: plugName, status: 'missing' };
    else if (root.kind !== 'plug' || root.handle !== '1:') plug = { piece: plugName, status: 'different', detail: `root is ${root.kind} ${root.handle}` };
    else if (this.record && this.record.limit !== this.limit)
      plug = { piece: plugName, status: 'different', detail: `limit was set to ${this.record.limit} bytes` };
    else plug = { piece: plugName, status: 'ok' };

    const clsName = `qdisc clsact on ${this.dev} (shared; an ingress qdisc does too)`;
    const clsact: PieceState =
      this.ifindex === 0
        ? {
            piece: clsName,
            status: 'missing',
            detail: `device ${this.dev} is gone since setup (deleted or renamed): nothing arriving on it can be held; once it exists again, run '${this.setupCommand()}' (its filters went with it), or remove the rest of the hold with 'synplug teardown --inbound ${this.dev}'`,
          }
        : o.ingressQdisc
          ? { piece: clsName, status: 'ok' }
          : { piece: clsName, status: 'missing' };

    const filter = (fam: InboundFamily): PieceState => {
      const name = `filter ${this.dev} ingress protocol ${fam} pref ${INBOUND_PREF[fam]} ${this.classifier}: TCP SYN (ACK clear) to port ${this.spec.ports.join(',')}${this.addrsOf(fam).length ? ` dst ${this.addrsOf(fam).join(',')}` : ''} -> mirred egress redirect dev ${this.ifb}`;
      const fs = this.filtersAt(o, fam);
      if (!this.families.includes(fam)) {
        // Not wanted: absent is right; ours left over (e.g. fewer addresses now) differs.
        return fs.length
          ? { piece: `no filter ${this.dev} ingress protocol ${fam} pref ${INBOUND_PREF[fam]}`, status: 'different', detail: 'present' }
          : { piece: `no ${fam} filter (no ${fam} address)`, status: 'ok' };
      }
      if (fs.length === 0) return { piece: name, status: 'missing' };
      if (!this.filtersAreOurs(o, fam)) return { piece: name, status: 'different', detail: `pref ${INBOUND_PREF[fam]} holds filters that are not synplug's` };
      const diff = this.filterDifference(fs, fam);
      return diff ? { piece: name, status: 'different', detail: diff } : { piece: name, status: 'ok' };
    };
    return { ifb, plug, clsact, filter_ip: filter('ip'), filter_ipv6: filter('ipv6') };
  }

  addrsOf(fam: InboundFamily, addrs: readonly string[] = this.spec.addrs): string[] {
    return addrs.filter((a) => isIP(a) === (fam === 'ip' ? 4 : 6));
  }

  /** What differs between the filters found and those setup makes (undefined: the same). */
  private filterDifference(fs: FilterEntry[], fam: InboundFamily): string | undefined {
    const kinds = new Set(fs.map((f) => f.kind));
    if (kinds.size !== 1 || !kinds.has(this.classifier)) return `classifier ${[...kinds].join(',')}, want ${this.classifier}`;
    const addrs = this.addrsOf(fam);
    const nodes = fs.filter(hasActions);
    if (this.classifier === 'flower') {
      const want = this.spec.ports.flatMap((p) => (addrs.length ? addrs : ['*']).map((a) => `${a} ${p}`)).sort();
      const got = nodes
        .map((f) => {
          const k = ((f.options as { keys?: Record<string, unknown> }).keys ?? {}) as { dst_ip?: string; dst_port?: number };
          return `${k.dst_ip ?? '*'} ${k.dst_port}`;
        })
        .sort();
      return want.join(';') === got.join(';') ? undefined : `matches ${got.join(', ')}; want ${want.join(', ')}`;
    }
    const wantNodes = fam === 'ip' ? this.spec.ports.length : this.spec.ports.length * Math.max(1, addrs.length);
    if (nodes.length !== wantNodes) return `${nodes.length} matching node(s), want ${wantNodes}`;
    if (fam === 'ip') {
      const links = fs.filter((f) => (f.options as { link?: string } | undefined)?.link === `${INBOUND_U32_HTID.toString(16)}:`).length;
      if (links !== Math.max(1, addrs.length)) return `${links} address node(s), want ${Math.max(1, addrs.length)}`;
    }
    if (this.record && (this.record.ports.join(',') !== this.spec.ports.join(',') || this.record.addrs.join(',') !== this.spec.addrs.join(','))) {
      return `set up for port ${this.record.ports.join(',')}${this.record.addrs.length ? ` dst ${this.record.addrs.join(',')}` : ''}`;
    }
    return undefined;
  }

  /**
   * The pieces, in the order setup adds them: the IFB, its plug (released)
   * and the IFB up, DEV's clsact, the SYN filters of each protocol. Teardown
   * releases the plug, then removes (in reverse) synplug's filters, DEV's
   * clsact when setup added it and nothing foreign is on it, and the IFB.
   */
  get pieces(): HoldPieces<InboundObservation, InboundPlan> {
    if (!this.piecesMemo) this.piecesMemo = inboundPieces(this);
    return this.piecesMemo;
  }
  private piecesMemo?: HoldPieces<InboundObservation, InboundPlan>;

  filterText(fam: InboundFamily): string {
    const a = this.addrsOf(fam);
    return `filter ${this.dev} ingress protocol ${fam} pref ${INBOUND_PREF[fam]} ${this.classifier}: tcp SYN (ACK clear) dst port ${this.spec.ports.join(',')}${a.length ? ` dst ${a.join(',')}` : ''}, action mirred egress redirect dev ${this.ifb}`;
  }

  /**
   * Add the SYN filters of one protocol at synplug's pref.
   * @param want what they match (default: this hold's spec; a rollback passes the recorded one)
   * @throws {KindUnavailableError} @throws {NetlinkError}
   */
  async addFilters(
    fam: InboundFamily,
    ifbIndex: number,
    want: { ports: readonly number[]; addrs: readonly string[]; classifier: InboundClassifier } = { ...this.spec, classifier: this.classifier },
  ): Promise<void> {
    const route = this.sockets.route;
    const family = fam === 'ip' ? 'inet' : 'inet6';
    const ports = [...want.ports];
    const actions = [{ kind: 'mirred' as const, direction: 'egress' as const, mirred_action: 'redirect' as const, to_dev: this.ifb, ifindex: ifbIndex }];
    const famAddrs = this.addrsOf(fam, want.addrs);
    const addrs: Array<string | undefined> = famAddrs.length ? famAddrs : [undefined];
    const base = { ifindex: this.ifindex, parent: 'ingress', protocol: fam, pref: INBOUND_PREF[fam] };
    if (want.classifier === 'flower') {
      for (const dst of addrs) {
        const m = flowerSynMatch({ family, dport: ports, ...(dst && { dst }), actions });
        for (const f of m.filters) await addFilter(route, { ...base, kind: 'flower', options: await resolveActionDevices(route, f.options) });
      }
      return;
    }
    if (fam === 'ipv6') {
      for (const dst of addrs) {
        const m = u32SynMatch({ family, dport: ports, ...(dst && { dst }), actions });
        for (const f of m.filters) await addFilter(route, { ...base, kind: 'u32', options: f.options as Record<string, unknown> });
      }
      return;
    }
    // IPv4: the table once, one address node per address (all linking to it), the TCP nodes once.
    const parts = addrs.map((dst) => u32SynMatch({ family, dport: ports, ...(dst && { dst }), actions, htid: INBOUND_U32_HTID }).filters);
    const ordered = [parts[0][0], ...parts.map((p) => p[1]), ...parts[0].slice(2)];
    for (const f of ordered)
      await addFilter(route, { ...base, kind: 'u32', ...(f.handle && { handle: f.handle }), options: f.options as Record<string, unknown> });
  }

  /**
   * Remove synplug's filters of one protocol. u32's IPv4 hash table lives in
   * a structure every u32 filter of the hook shares: deleting the pref alone
   * would leave it behind while a foreign u32 filter remains, so the nodes
   * that link to it go first, then the table (once the kernel has freed the
   * links: it retries on EBUSY), then the pref.
   * @throws {NetlinkError} the kernel refused
   */
  async deleteFilters(fam: InboundFamily): Promise<void> {
    const route = this.sockets.route;
    const pref = INBOUND_PREF[fam];
    const fs = (await listFilters(route, { ifindex: this.ifindex, parent: 'ingress' })).filter((f) => f.pref === pref);
    if (fs.length === 0) return;
    const ht = `${INBOUND_U32_HTID.toString(16)}:`;
    const base = { ifindex: this.ifindex, parent: 'ingress', protocol: fs[0].protocol ?? fam, pref };
    if (fs.some((f) => f.kind === 'u32' && (f.options as { fh?: string } | undefined)?.fh === ht)) {
      for (const f of fs.filter((x) => (x.options as { link?: string } | undefined)?.link === ht)) {
        await ignoreGone(deleteFilter(route, { ...base, kind: 'u32', handle: (f.options as { fh?: string }).fh ?? f.handle }));
      }
      const t0 = Date.now();
      for (;;) {
        try {
          await deleteFilter(route, { ...base, kind: 'u32', handle: ht });
          break;
        } catch (e) {
          if (e instanceof NetlinkError && (e.code === 'ENOENT' || e.code === 'EINVAL')) break;
          if (!(e instanceof NetlinkError && e.code === 'EBUSY') || Date.now() - t0 > HTABLE_FREE_WAIT_MS) throw e;
          await sleep(20);
        }
      }
    }
    await ignoreGone(deleteFilter(route, { ...base, kind: fs[0].kind }));
  }

  /** @inheritdoc */
  holdAction(): HoldAction {
    return { kind: 'route', messages: this.bufferMessages };
  }

  /** @inheritdoc */
  releaseAction(): HoldAction {
    return { kind: 'route', messages: this.releaseMessages };
  }

  /** @inheritdoc */
  handoff(): HoldHandoff {
    return { steps: this.releaseMessages.length ? [plugReleaseStep(this.releaseMessages)] : [] };
  }

  /** @inheritdoc */
  checkDetails(): Record<string, unknown> {
    return { ports: this.spec.ports };
  }

  /** @inheritdoc */
  heldTraffic(): HeldTraffic {
    return { addrs: this.spec.addrs, ports: this.spec.ports };
  }

  /** @inheritdoc */
  setupCommand(): string {
    return `synplug setup --inbound ${this.dev} ${this.spec.ports.map((p) => `--port ${p}`).join(' ')}${this.spec.addrs.map((a) => ` --addr ${a}`).join('')}`;
  }

  /** @inheritdoc */
  setupOptions(): SetupOptions {
    return { inbound: { dev: this.dev, ports: [...this.spec.ports], addrs: [...this.spec.addrs], classifier: this.classifier } };
  }

  /** @inheritdoc */
  setupResult(entry: HoldRecord): Partial<SetupResult> {
    const r = entry as InboundHoldRecord;
    return {
      dev: this.dev,
      limit: this.limit,
      ownsAddress: false,
      inbound: { ifb: r.ifb, ports: r.ports, addrs: r.addrs, classifier: r.classifier, families: r.families },
    };
  }

  /** @inheritdoc */
  explainPlugError(e: NetlinkError, action: 'buffer' | 'release'): NetlinkError {
    if (e.code === 'ENOENT' || e.code === 'EINVAL' || e.code === 'ENODEV') {
      return e.withMessage(
        `cannot ${action} the plug of the inbound hold on ${this.dev}: no plug qdisc 1: at the root of ${this.ifb} (run 'synplug setup --inbound ${this.dev} ${this.spec.ports.map((p) => `--port ${p}`).join(' ')}')`,
      );
    }
    return e;
  }

  /** @inheritdoc */
  async plugStats(): Promise<PlugStats | undefined> {
    if (this.ifbIndex === undefined) return undefined;
    let qs: QdiscEntry[];
    try {
      qs = await listQdiscs(this.sockets.route, { ifindex: this.ifbIndex });
    } catch (e) {
      if (e instanceof NetlinkError && e.code === 'ENODEV') return undefined;
      throw e;
    }
    const q = qs.find((x) => x.root && x.kind === 'plug');
    if (!q) return undefined;
    return { packets: q.packets ?? 0, bytes: q.bytes ?? 0, drops: q.drops ?? 0, qlen: q.qlen ?? 0, backlog: q.backlog ?? 0 };
  }

  /**
   * What `status` shows of this hold. The redirects' targets are named as
   * tc names them (the device's name; `if<N>` only when no device has that index).
   * @throws {NetlinkError} the link listing was refused
   */
  async statusDetails(inspection: HoldInspection): Promise<{ hold: Record<string, unknown> }> {
    return { hold: { ...(await this.inboundStatusDetails(inspection)) } };
  }

  /** The inbound hold's status fields (see HoldStatus). @throws {NetlinkError} the link listing was refused */
  async inboundStatusDetails(inspection: HoldInspection): Promise<InboundStatusDetails> {
    const o = inspection.observed as InboundObservation;
    const plugQ = o.ifbQdiscs.find((q) => q.root && q.kind === 'plug');
    const filters = o.ingressFilters.filter((f) => f.pref === INBOUND_PREF.ip || f.pref === INBOUND_PREF.ipv6);
    if (filters.length) {
      const names = new Map((await listRawLinks(this.sockets.route)).map((l) => [l.index, l.ifname]));
      nameActionDevices(filters, (i) => names.get(i));
    }
    return {
      ifb: this.ifb,
      ports: this.spec.ports,
      addrs: this.spec.addrs,
      classifier: this.classifier,
      qdiscs: o.ifbQdiscs,
      filters,
      ...(plugQ && { held: plugQ.qlen ?? 0, passed: plugQ.packets ?? 0, dropped: plugQ.drops ?? 0 }),
    };
  }
}

/** What one plan of the inbound hold's pieces shares. */
interface InboundPlan {
  /** the IFB's index (learnt when a step creates it) */
  ifbIndex?: number;
  /** a step creates the IFB (everything on it is then new) */
  createdIfb: boolean;
  /** setup added DEV's clsact (recorded: teardown removes it) */
  addedClsact: boolean;
}

/** The inbound hold's pieces (see {@link InboundHold.pieces}). */
function inboundPieces(h: InboundHold): HoldPieces<InboundObservation, InboundPlan> {
  const route = h.sockets.route;
  const judge = (key: InboundPiece) => (o: InboundObservation) => h.judge(o)[key];
  const ifb: Piece<InboundObservation, InboundPlan> = {
    key: 'ifb',
    lifetime: 'permanent',
    judge: judge('ifb'),
    add(o, _st, p) {
      const owner = h.ifbOwner(o);
      // another state directory's IFB: refused before any step (setup.ts refuseOthersPieces), and never changed here
      if (!p.createdIfb && owner.is === 'other') throw new SynplugError(`link ${h.ifb}: ${owner.detail}. Nothing was changed`, 'foreign-state');
      // An earlier synplug's alias (no state directory): marked anew, in place (nothing else of the IFB changes).
      if (!p.createdIfb && owner.is === 'earlier')
        return {
          what: `set the alias of link ${h.ifb} to '${IFB_ALIAS_PREFIX}${h.dev}; state <this state directory's mark>' (an earlier synplug's, without it)`,
          run: () => setIfbAlias(route, o.ifb.index!, h),
          undo: {
            what: `put back the alias '${o.ifb.alias}' of ${h.ifb}`,
            run: async () => void (await route.request({ type: RTM_NEWLINK, payload: [ifinfomsg(o.ifb.index!), str(IFLA_IFALIAS, o.ifb.alias!)] })),
          },
        };
      if (!p.createdIfb) return undefined;
      return {
        what: `add link ${h.ifb} type ifb (IPv6 off, alias '${IFB_ALIAS_PREFIX}${h.dev}; state <this state directory's mark>')`,
        run: async () => {
          await createLink(route, { name: h.ifb, kind: 'ifb' });
          // Failing half-way, the step removes the link it made (setup undoes only the steps that completed).
          try {
            p.ifbIndex = await resolveIfindex(route, h.ifb);
            await setIfbAlias(route, p.ifbIndex, h);
            disableIpv6(h.ifb);
          } catch (e) {
            await deleteLink(route, h.ifb).catch(() => {});
            throw e;
          }
        },
        undo: { what: `removed link ${h.ifb} (and its plug)`, run: () => deleteLink(route, h.ifb) },
      };
    },
    async remove(o, _p, out) {
      if (!o.ifb.exists) return;
      if (!h.ifbIsOurs(o)) {
        out.kept.push(`link ${h.ifb}: not synplug's`);
        return;
      }
      // synplug's filters are gone now: any filter still redirecting to the IFB is someone else's, and would be left
      // pointing at a deleted device (its packets dropped). Keep the IFB then, and say which filters.
      const foreign = o.ifb.index !== undefined ? await redirectsTo(route, o.ifb.index) : [];
      const withPlug = o.ifbQdiscs.some((q) => q.root && q.kind === 'plug') ? ', with its plug' : '';
      const how = h.orphan ? `: found by its alias '${IFB_ALIAS_PREFIX}${h.dev}', without a record` : '';
      if (foreign.length) {
        out.kept.push(
          `link ${h.ifb} (ifb${withPlug})${how}: kept, because filters that are not synplug's redirect to it (${foreign.join('; ')}); remove or change them, then run 'synplug teardown --inbound ${h.dev}' again`,
        );
      } else {
        await ignoreGone(deleteLink(route, h.ifb));
        out.removed.push(`link ${h.ifb} (ifb${withPlug})${how}`);
      }
    },
  };
  const plugRef = (p: InboundPlan) => ({ ifindex: p.ifbIndex!, parent: 'root', handle: '1:' });
  const addPlug = (p: InboundPlan) => addReleasedPlug(route, { ...plugRef(p), kind: 'plug', options: { limit: h.limit } });
  const plug: Piece<InboundObservation, InboundPlan> = {
    key: 'plug',
    lifetime: 'permanent',
    judge: judge('plug'),
    add(o, st, p) {
      const steps: SetupStep[] = [];
      const root = o.ifbQdiscs.find((q) => q.root);
      const status = p.createdIfb ? 'missing' : st.status;
      if (status === 'missing') {
        steps.push({
          what: `add qdisc plug 1: root on ${h.ifb} limit ${h.limit} and release it`,
          run: () => addPlug(p),
          ...(!p.createdIfb && { undo: { what: `removed plug 1: on ${h.ifb}`, run: () => deleteQdisc(route, { ifindex: p.ifbIndex!, parent: 'root' }) } }),
        });
      } else if (status === 'different' && root && (root.kind !== 'plug' || root.handle !== '1:')) {
        steps.push({
          what: `replace root ${root.kind} ${root.handle} on ${h.ifb} with plug 1: limit ${h.limit}`,
          run: async () => {
            await deleteQdisc(route, { ifindex: p.ifbIndex!, parent: 'root' });
            await addPlug(p);
          },
        });
      } else if (status === 'different') {
        const old = h.record?.limit;
        steps.push({
          what: `set plug 1: on ${h.ifb} limit to ${h.limit} bytes`,
          run: () => plugSetLimit(route, { ...plugRef(p), limit: h.limit }),
          ...(old !== undefined && { undo: { what: `restored plug limit ${old}`, run: () => plugSetLimit(route, { ...plugRef(p), limit: old }) } }),
        });
      } else if (!h.record && o.ifb.exists && root?.kind === 'plug') {
        // An IFB of synplug's found without its record (a crash between creating it and recording it): its plug may buffer.
        steps.push({
          what: `release plug 1: on ${h.ifb} (an IFB synplug made, found without its record)`,
          run: () => plugReleaseIndefinite(route, plugRef(p)),
        });
      }
      if (p.createdIfb || !o.ifb.up) steps.push({ what: `set link ${h.ifb} up`, run: () => setLinkUp(route, p.ifbIndex!) });
      return steps;
    },
  };
  const clsact: Piece<InboundObservation, InboundPlan> = {
    key: 'clsact',
    lifetime: 'permanent',
    optional: () => true,
    judge: judge('clsact'),
    add: (o, _st, p) =>
      o.ingressQdisc || h.ifindex === 0
        ? undefined
        : {
            what: `add qdisc clsact on ${h.dev}`,
            run: async () => {
              await addQdisc(route, { ifindex: h.ifindex, kind: 'clsact' });
              p.addedClsact = true;
            },
            undo: { what: `removed qdisc clsact on ${h.dev}`, run: () => deleteQdisc(route, { ifindex: h.ifindex, kind: 'clsact' }) },
          },
    async remove(o, _p, out) {
      if (!o.ingressQdisc) return;
      const kind = o.ingressQdisc.kind;
      if (h.orphan) out.kept.push(`qdisc ${kind} on ${h.dev}: no record says whether setup added it`);
      else if (!h.record?.addedClsact) out.kept.push(`qdisc ${kind} on ${h.dev}: setup did not add it`);
      else if (
        [
          ...(await listFilters(route, { ifindex: h.ifindex, parent: 'ingress' })),
          ...(kind === 'clsact' ? await listFilters(route, { ifindex: h.ifindex, parent: 'egress' }) : []),
        ].length
      )
        out.kept.push(`qdisc clsact on ${h.dev}: setup added it, but filters that are not synplug's are on it`);
      else {
        await ignoreGone(deleteQdisc(route, { ifindex: h.ifindex, kind: 'clsact' }));
        out.removed.push(`qdisc clsact on ${h.dev}`);
      }
    },
  };
  const filter = (fam: InboundFamily): Piece<InboundObservation, InboundPlan> => ({
    key: fam === 'ip' ? 'filter_ip' : 'filter_ipv6',
    lifetime: INBOUND_FILTER_LIFETIME,
    optional: () => !h.families.includes(fam),
    judge: judge(fam === 'ip' ? 'filter_ip' : 'filter_ipv6'),
    add(o, st, p) {
      if (st.status === 'ok') return undefined;
      const pref = INBOUND_PREF[fam];
      const present = h.filtersAt(o, fam).length > 0;
      const wanted = h.families.includes(fam);
      const del = () => h.deleteFilters(fam);
      // A step that fails half-way removes what it added before the error goes up (setup undoes only the steps that completed).
      const add = async () => {
        try {
          await h.addFilters(fam, p.ifbIndex!);
        } catch (e) {
          await del().catch(() => {});
          throw e;
        }
      };
      // The filters as setup made them before (from the record), to put back when a change is rolled back.
      const old = h.record;
      const restorable = present && old !== undefined && !h.orphan && !p.createdIfb && old.families.includes(fam);
      const restore = async () => {
        await del();
        if (restorable) await h.addFilters(fam, p.ifbIndex!, old);
      };
      const oldText = old ? `port ${old.ports.join(',')}${h.addrsOf(fam, old.addrs).length ? ` dst ${h.addrsOf(fam, old.addrs).join(',')}` : ''}` : '';
      const removed = { what: `removed filters pref ${pref} on ${h.dev}`, run: del };
      if (!present) return [{ what: `add ${h.filterText(fam)}`, run: add, undo: removed }];
      if (!wanted)
        return {
          what: `remove filters ${h.dev} ingress protocol ${fam} pref ${pref} (no ${fam} address now)`,
          run: del,
          ...(restorable && { undo: { what: `put back filters pref ${pref} on ${h.dev} (${oldText})`, run: restore } }),
        };
      return {
        what: `replace filters pref ${pref} on ${h.dev} (${st.detail}) with ${h.filterText(fam)}`,
        run: async () => {
          await del();
          try {
            await h.addFilters(fam, p.ifbIndex!);
          } catch (e) {
            // Half-replaced: the old filters go back before the error goes up (nothing half-applied).
            try {
              await restore();
            } catch (e2) {
              throw new SynplugError(
                `${(e as Error).message}; putting back the filters at pref ${pref} on ${h.dev} failed too (${(e2 as Error).message}): run 'synplug setup --inbound ${h.dev} --port ...' again or 'synplug teardown --inbound ${h.dev}'`,
                e instanceof SynplugError ? e.category : 'failure',
                { cause: e },
              );
            }
            throw e;
          }
        },
        undo: restorable ? { what: `put back filters pref ${pref} on ${h.dev} as set up before (${oldText})`, run: restore } : removed,
      };
    },
    // The watchdog's removal: the pref deleted whole (one already gone is fine), only when its filters are of the
    // classifier this hold uses: with TCA_KIND the kernel refuses (EINVAL, then left alone) a pref whose filters are
    // of another kind, so someone else's filters put at synplug's pref meanwhile (a flower where synplug uses u32) stay.
    removeSteps: () => {
      if (h.ifindex === 0 || !h.families.includes(fam)) return [];
      const r = filterRequest('delete', h.ifindex, { parent: 'ingress', protocol: fam, pref: INBOUND_PREF[fam], kind: h.classifier });
      const { ENOENT, EINVAL, ENODEV } = osConstants.errno;
      const message = hexMessage({ type: r.type, flags: r.flags | NLM_F_ACK, payload: r.payload });
      return [
        {
          what: `remove filters ${h.dev} ingress protocol ${fam} pref ${INBOUND_PREF[fam]} ${h.classifier}`,
          phase: 'disarm',
          protocol: NETLINK_ROUTE,
          messages: [message],
          ignoreErrno: [ENOENT, EINVAL, ENODEV],
        },
      ];
    },
    async remove(o, _p, out) {
      if (!h.filtersAt(o, fam).length) return;
      if (h.filtersAreOurs(o, fam)) {
        await h.deleteFilters(fam);
        out.removed.push(`filters ${h.dev} ingress protocol ${fam} pref ${INBOUND_PREF[fam]}`);
      } else out.kept.push(`filters at pref ${INBOUND_PREF[fam]} on ${h.dev} ingress: not synplug's`);
    },
  });
  // another state directory's hold (its IFB's alias says so): nothing of it is removed or released through this one
  return sparingOthers<InboundObservation, InboundPlan>(
    {
      list: [ifb, plug, clsact, filter('ip'), filter('ipv6')],
      observe: () => h.observe(),
      begin: (o) => ({ ifbIndex: o.ifb.index, createdIfb: !o.ifb.exists, addedClsact: h.record?.addedClsact ?? false }),
      marked: (o) => (h.ifbOwner(o).is !== 'none' ? [`IFB ${h.ifb} (alias '${o.ifb.alias}')`] : []),
      // whose, by the state directory's mark in the IFB's alias (undefined: an earlier synplug's alias)
      markOwner(o) {
        const owner = h.ifbOwner(o);
        if (owner.is === 'ours') return { here: true };
        if (owner.is !== 'other') return undefined;
        return {
          here: false,
          detail: `the IFB's alias names state directory mark ${owner.theirs}; this directory's is ${o.stateMark ?? 'none: it does not exist yet'}`,
          removeBy: `'ip link del ${h.ifb}' (it drops what its plug holds; then the filters at pref ${INBOUND_PREF.ip} and ${INBOUND_PREF.ipv6} of ${h.dev} ingress redirect to nothing: 'tc filter del dev ${h.dev} ingress pref ${INBOUND_PREF.ip}' and 'pref ${INBOUND_PREF.ipv6}')`,
        };
      },
      refuse(o) {
        if (o.ifb.exists && !h.ifbIsOurs(o)) throw new IfbNameClashError(h.ifb, h.dev, o.ifb.kind);
        for (const fam of ['ip', 'ipv6'] as const)
          if (h.filtersAt(o, fam).length && !h.filtersAreOurs(o, fam)) throw new ForeignFilterError(h.dev, INBOUND_PREF[fam], fam);
      },
      record: (p): InboundHoldRecord => ({
        mode: 'inbound',
        dev: h.dev,
        createdAt: h.record?.createdAt ?? Date.now(),
        ifb: h.ifb,
        ports: h.spec.ports,
        addrs: h.spec.addrs,
        classifier: h.classifier,
        limit: h.limit,
        families: h.families,
        addedClsact: p.addedClsact,
      }),
      async letGo(o, out) {
        if (!h.releaseMessages.length || !o.ifbQdiscs.some((q) => q.root && q.kind === 'plug')) return;
        await route.exchange(h.releaseMessages).catch(() => {});
        out.removed.push(`released the plug on ${h.ifb}`);
      },
    },
    (o) => {
      const owner = h.ifbOwner(o);
      return owner.is === 'other' ? `inbound hold of ${h.dev} (link ${h.ifb} with its plug, the filters on ${h.dev}): kept, ${owner.detail}` : undefined;
    },
  );
}

/**
 * Give an IFB of the hold its alias, with the mark of the hold's state
 * directory (teardown-marks.ts ifbAlias), which exists when the step runs
 * (setup makes it before its first step).
 * @throws {SynplugError} the state directory is gone (`failure`)
 * @throws {NetlinkError} the kernel refused
 */
async function setIfbAlias(route: HoldSockets['route'], ifbIndex: number, h: InboundHold): Promise<void> {
  const mark = h.stateDir === undefined ? undefined : stateDirMark(h.stateDir);
  if (mark === undefined) throw new SynplugError(`the state directory ${h.stateDir ?? '(none given)'} is gone: its mark cannot be put on ${h.ifb}`, 'failure');
  await route.request({ type: RTM_NEWLINK, payload: [ifinfomsg(ifbIndex), str(IFLA_IFALIAS, ifbAlias(h.dev, mark))] });
}

/** A device of the IFB's name exists that synplug did not create. Category `usage` (nothing changed). */
export class IfbNameClashError extends SynplugError {
  /**
   * @param ifb the name
   * @param dev the inbound device
   * @param kind its link kind, if any
   */
  constructor(
    readonly ifb: string,
    dev: string,
    kind?: string,
  ) {
    super(
      `the inbound hold of ${dev} needs an IFB named ${ifb}, but ${kind === 'ifb' ? 'an ifb' : `a ${kind ?? 'device'}`} of that name exists that synplug did not create; rename or remove it ('ip link del ${ifb}'). Nothing was changed`,
      'usage',
    );
    this.name = 'IfbNameClashError';
  }
}

/** synplug's pref at DEV's ingress holds filters that are not synplug's. Category `foreign-state`. */
export class ForeignFilterError extends SynplugError {
  /**
   * @param dev the device
   * @param pref the pref
   * @param fam the protocol synplug would filter there
   */
  constructor(dev: string, pref: number, fam: string) {
    super(
      `dev ${dev} ingress has filters at pref ${pref}, which synplug uses for its ${fam} SYN filter, and they are not synplug's (they do not redirect to its IFB); move them to another pref. Nothing was changed`,
      'foreign-state',
    );
    this.name = 'ForeignFilterError';
  }
}

async function ignoreGone(p: Promise<void>): Promise<void> {
  try {
    await p;
  } catch (e) {
    if (e instanceof NetlinkError && (e.code === 'ENOENT' || e.code === 'ENODEV' || e.code === 'EINVAL')) return;
    throw e;
  }
}

function ifinfomsg(index: number, flags = 0, change = 0): Buffer {
  const b = Buffer.alloc(IFINFOMSG_LEN);
  b.writeInt32LE(index, 4);
  b.writeUInt32LE(flags >>> 0, 8);
  b.writeUInt32LE(change >>> 0, 12);
  return b;
}

/** Turn IPv6 off on the IFB before it goes up (no MLD or router solicitation of its own may pass its plug). In --netns's namespace. */
function disableIpv6(ifb: string): void {
  withNetns(defaultNetns(), () => {
    try {
      writeFileSync(`/proc/sys/net/ipv6/conf/${ifb}/disable_ipv6`, '1');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
        throw new SynplugError(`cannot turn IPv6 off on ${ifb}: ${(e as Error).message}`, 'failure', { cause: e });
      // no IPv6 in this kernel: nothing to turn off
    }
  });
}

/** Read a link by name: whether it exists, its kind, alias and whether it is up. @throws {NetlinkError} other than ENODEV */
async function readLink(route: HoldSockets['route'], name: string): Promise<IfbState> {
  try {
    const replies = await route.request(getLinkRequest(name));
    const m = replies.find((r) => r.type === RTM_NEWLINK);
    if (!m) return { exists: false };
    const raw = decodeLink(m);
    return { exists: true, index: raw.index, kind: raw.kind, alias: raw.attrs.str(IFLA_IFALIAS), up: (raw.flags & IFF_UP) !== 0 };
  } catch (e) {
    if (e instanceof NetlinkError && e.code === 'ENODEV') return { exists: false };
    throw e;
  }
}

/**
 * Whether the kernel has act_mirred: an RTM_NEWACTION for a mirred action
 * without parameters. The kernel looks the kind up first (loading the module
 * if it can; ENOENT when there is none), then mirred refuses the missing
 * parameters (EINVAL): nothing is created either way.
 * @throws {NetlinkError} EPERM/EACCES
 */
export async function probeMirred(route: HoldSockets['route']): Promise<Support> {
  // struct tcamsg { unsigned char tca_family; unsigned char tca__pad1; unsigned short tca__pad2; }; TCA_ACT_TAB = 1
  const TCA_ACT_TAB = 1;
  try {
    await route.request({
      type: RTM_NEWACTION,
      flags: NLM_F_CREATE | NLM_F_EXCL,
      payload: [Buffer.alloc(4), nested(TCA_ACT_TAB, [nested(1, [str(TCA_ACT_KIND, 'mirred'), nested(TCA_ACT_OPTIONS, [])])])],
    });
  } catch (e) {
    if (!(e instanceof NetlinkError)) throw e;
    if (e.code === 'EPERM' || e.code === 'EACCES') throw e;
    return e.code === 'ENOENT' ? 'no' : 'yes';
  }
  throw new SynplugError("probing action 'mirred' unexpectedly created an action; check 'tc actions ls action mirred'");
}

/**
 * Whether the kernel has link kind ifb: an RTM_NEWLINK creating an ifb
 * named "." (a name the kernel never accepts). It looks the kind up first
 * (loading the module if it can): an unknown kind answers EOPNOTSUPP, a
 * known one fails on the name (EINVAL). Nothing is created.
 * @throws {NetlinkError} EPERM/EACCES
 */
export async function probeIfb(route: HoldSockets['route']): Promise<Support> {
  const req = newLinkRequest({ name: 'spifbprobe', kind: 'ifb' });
  req.payload[1] = str(IFLA_IFNAME, '.');
  const answer = await probeLinkKind(route, req);
  if (answer === 'created') await deleteLink(route, '.').catch(() => {});
  return answer === 'unknown' ? 'no' : 'yes';
}

/** The options that set up a recorded inbound hold again (`protect --setup`). */
export function inboundOptionsOf(r: InboundHoldRecord): InboundOptions {
  return { dev: r.dev, ports: [...r.ports], addrs: [...r.addrs], classifier: r.classifier };
}

/** An inbound hold's configuration from its record entry. */
function specOfRecord(r: InboundHoldRecord): InboundSpec {
  return { dev: r.dev, ports: [...r.ports], addrs: [...r.addrs], classifier: r.classifier };
}

/**
 * Open the inbound hold of a spec (setup) or of a record entry.
 * @param limit the plug limit (default: the record's, else the configuration's)
 * @throws {NoDeviceError} DEV does not exist (usage)
 * @throws {UsageError} DEV is a loopback device
 */
export async function openInboundHold(
  sockets: HoldSockets,
  spec: InboundSpec,
  limit: number,
  record?: InboundHoldRecord,
  options: { deviceMayBeGone?: boolean; stateDir?: string } = {},
): Promise<InboundHold> {
  const sd = options.stateDir;
  const route = sockets.route;
  let flags = 0;
  let ifindex: number;
  try {
    const replies = await route.request(getLinkRequest(spec.dev));
    const m = replies.find((r) => r.type === RTM_NEWLINK);
    if (!m) throw new NoDeviceError(spec.dev, undefined, '--inbound');
    const raw = decodeLink(m);
    ifindex = raw.index;
    flags = raw.flags;
    // An altname (or any name the kernel resolves) keys a new hold by the device's own name: one hold per device.
    // (A recorded hold keeps the name its record is keyed by.)
    if (!record && raw.ifname && raw.ifname !== spec.dev) spec = { ...spec, dev: raw.ifname };
    if (raw.kind === 'ifb' && !options.deviceMayBeGone) {
      const marked = ifbAliasMark(raw.attrs.str(IFLA_IFALIAS));
      const whose = marked ? `synplug's IFB of the inbound hold of ${marked.dev}` : 'an ifb device';
      throw new UsageError(`--inbound ${spec.dev}: ${spec.dev} is an IFB (${whose}); give the device the clients' packets arrive on`);
    }
  } catch (e) {
    if (!(e instanceof NetlinkError && e.code === 'ENODEV')) throw e;
    if (!options.deviceMayBeGone || !record) throw new NoDeviceError(spec.dev, undefined, '--inbound');
    const st = await readLink(route, record.ifb);
    // Renamed ('ip link set DEV name NEW')? The IFB's name carries DEV's index (spifb<ifindex>): a device of that
    // index that still exists keeps synplug's filters, so operate on it by index (release and teardown reach them).
    const m = /^spifb([0-9]+)$/.exec(record.ifb);
    const recordedIndex = m ? Number(m[1]) : 0;
    if (recordedIndex > 0) {
      let renamed = false;
      try {
        const replies = await route.request(getLinkRequest(recordedIndex));
        renamed = replies.some((r) => r.type === RTM_NEWLINK && (decodeLink(r).flags & IFF_LOOPBACK) === 0);
      } catch (e2) {
        if (!(e2 instanceof NetlinkError && e2.code === 'ENODEV')) throw e2;
      }
      if (renamed) return new InboundHold(sockets, spec, limit, recordedIndex, st.exists ? st.index : undefined, record, false, sd);
    }
    // A recorded hold whose device is gone (its filters went with it): still open, so that release and teardown reach the IFB.
    return new InboundHold(sockets, spec, limit, 0, st.exists ? st.index : undefined, record, false, sd);
  }
  if (flags & IFF_LOOPBACK)
    throw new UsageError(`--inbound ${spec.dev}: a loopback device; hold local connections with the local hold ('synplug setup' without --inbound)`);
  const ifb = record?.ifb ?? ifbNameFor(ifindex);
  if (ifb === spec.dev) throw new UsageError(`--inbound ${spec.dev}: that is synplug's own IFB`);
  const st = await readLink(route, ifb);
  return new InboundHold(sockets, spec, limit, ifindex, st.exists ? st.index : undefined, record, false, sd);
}

/**
 * Refuse a device no record names as `setup --inbound` would: one that does
 * not exist, a loopback device, an IFB. For `check`, `status` and `teardown
 * --inbound DEV` when nothing is recorded for DEV (a recorded hold whose
 * device vanished is not checked here: its teardown still cleans up).
 * @throws {NoDeviceError} no such device (`usage`)
 * @throws {UsageError} a loopback device or an IFB, with setup's own sentence
 * @throws {NetlinkError} a refusal other than ENODEV
 */
export async function requireInboundDevice(sockets: HoldSockets, dev: string): Promise<void> {
  await openInboundHold(sockets, validateInbound({ dev, ports: [1] }), DEFAULTS.limit);
}

/** The inbound mode: opens the inbound hold a setup record lists, or the one `setup --inbound` builds. */
export const inboundMode: HoldMode = {
  name: 'inbound',
  via: 'plug',
  scopes: ['inbound'],
  isRecord: isInboundRecord,
  recordRefusal: inboundRecordRefusal,
  addrsOf: (r: HoldRecord) => (r as InboundHoldRecord).addrs,
  deviceOfId: (id) => (id.startsWith(inboundId('')) ? id.slice(inboundId('').length) : undefined),
  idForms: [inboundId('DEV')],
  describe: (h) => {
    const setup = `synplug setup --inbound ${h.dev} ${h.ports?.length ? h.ports.map((p) => `--port ${p}`).join(' ') : '--port PORT...'}${(h.addrs ?? []).map((a) => ` --addr ${a}`).join('')}`;
    return {
      label: `inbound hold on ${h.dev}`,
      clients: `arriving on ${h.dev}`,
      setup,
      top: false,
      fromRecord: true,
      status: (x, word) => inboundStatusLines(x, word, setup),
    };
  },
  setupHead(r: SetupResult): string {
    const i = r.inbound;
    if (!i) return `synplug inbound hold ${r.hold}${r.changed ? ' set up:' : ' already set up; nothing to change'}`;
    const what = `SYNs on ${r.dev} to port ${i.ports.join(',')}${i.addrs.length ? ` (dst ${i.addrs.join(', ')})` : ''}, held on ${i.ifb} (${i.classifier}, ${i.families.join(' and ')})`;
    return r.changed ? `synplug inbound hold set up: ${what}:` : `synplug inbound hold already set up: ${what}; nothing to change`;
  },
  async open(sockets: HoldSockets, config: GuardConfig, record?: HoldRecord): Promise<Hold> {
    if (record?.mode !== 'inbound') throw new SynplugError('the inbound mode opens a hold from its setup record only (setup --inbound makes one)');
    const r = record as InboundHoldRecord;
    return openInboundHold(sockets, specOfRecord(r), r.limit ?? config.limit ?? DEFAULTS.limit, r, { deviceMayBeGone: true, stateDir: config.stateDir });
  },
  async probeSupport(sockets: HoldSockets, config: GuardConfig) {
    // The probe needs a device for its qdisc probes only: the configuration's (lo; the kinds are the kernel's, not a device's).
    const ifindex = await resolveIfindexOf(sockets, config.dev);
    return new InboundHold(sockets, { dev: config.dev, ports: [1], addrs: [], classifier: 'auto' }, DEFAULTS.limit, ifindex, undefined).probeSupport();
  },
  validate(opts: SetupOptions): void {
    validateInbound(opts.inbound as InboundOptions);
  },
  async openForSetup(sockets: HoldSockets, config: GuardConfig, opts: SetupOptions, record: SetupRecord | undefined) {
    const spec = validateInbound(opts.inbound as InboundOptions);
    // The device's own name keys the hold (an altname given is the same hold); a device renamed since its
    // setup is found by index, and its hold is keyed by the new name from now on.
    const found = await resolveInboundDevice(sockets.route, spec.dev);
    if (!found) throw new NoDeviceError(spec.dev, undefined, '--inbound');
    const replaces = inboundRecordId(record, found);
    const rec = record?.holds[replaces] as InboundHoldRecord | undefined;
    return { hold: await openInboundHold(sockets, { ...spec, dev: found.name }, config.limit, rec, { stateDir: config.stateDir }), replaces };
  },
  async select(sockets: HoldSockets, record: SetupRecord | undefined, dev: string, refuse = true) {
    const found = await resolveInboundDevice(sockets.route, dev);
    const id = inboundRecordId(record, found ?? { name: dev });
    if (refuse && !record?.holds[id]) await requireInboundDevice(sockets, dev); // no record names it: a device setup --inbound would refuse is an error
    return { id, dev: found?.name ?? dev, ...(found && { ifindex: found.ifindex }) };
  },
  async findUnrecorded(sockets: HoldSockets, record: SetupRecord | undefined, config: GuardConfig): Promise<UnrecordedPiece[]> {
    const recorded = new Set(Object.values(record?.holds ?? {}).flatMap((h) => (h.mode === 'inbound' ? [(h as InboundHoldRecord).ifb] : [])));
    const out: UnrecordedPiece[] = [];
    const mine = stateDirMark(config.stateDir);
    for (const f of await findSynplugIfbs(sockets.route)) {
      if (recorded.has(f.ifb)) continue;
      const mismatch = await unrecordedIfbMismatch(sockets.route, f);
      // another state directory's (its alias names that directory's mark): its hold, not a leftover of this one's
      const other =
        mismatch === undefined && ownerOfMark(f, mine) === 'other'
          ? otherDirectoryDetail(`inbound hold of ${f.dev}`, "its IFB's alias", f.stateMark!, mine)
          : undefined;
      out.push({
        id: inboundId(f.dev),
        report: { ifb: f.ifb, dev: f.dev, teardown: `synplug teardown --inbound ${f.dev}` },
        ...(mismatch !== undefined && { mismatch }),
        ...(other !== undefined && { otherDirectory: other }),
        keptReason:
          other !== undefined
            ? `link ${f.ifb} (with its plug and the filters on ${f.dev}): kept, ${other}`
            : `link ${f.ifb}: carries synplug's alias '${IFB_ALIAS_PREFIX}${f.dev}', but no record lists it and ${mismatch}: not synplug's; left alone, with the filters on ${f.dev}`,
        matches: (t) => f.dev === t.name || (t.ifindex !== undefined && f.ifb === ifbNameFor(t.ifindex)),
        release: async () => {
          const [r] = await sockets.route.exchange([ifbReleaseMessage(f.ifbIndex)]);
          return r.error || r.unanswered ? undefined : `${f.ifb} (inbound hold of ${f.dev})`;
        },
        teardown: async () => {
          const h = await openOrphanInboundHold(sockets, f, config.limit, config.stateDir);
          return teardownHold(h, await inspectHold(h));
        },
      });
    }
    return out;
  },
};

/** `status`' lines for an inbound hold: its state and what it holds; then its counters, qdiscs and filters (tc's text). */
function inboundStatusLines(h: HoldStatus, stateWord: (state: string) => string, setup: string): string[] {
  if (h.ifb === undefined) return [`inbound hold ${h.dev}: not set up (run '${setup}')`];
  const indent = (text: string) => text.split('\n').map((l) => `  ${l}`);
  return [
    `inbound hold ${h.dev}: ${stateWord(h.state)}; SYNs to port ${h.ports?.join(',')}${h.addrs?.length ? ` dst ${h.addrs.join(', ')}` : ''} held on ${h.ifb} (${h.classifier})`,
    ...(h.held !== undefined ? [`  packets: ${h.held} held now, ${h.passed} passed, ${h.dropped} dropped over the limit`] : []),
    ...h.qdiscs.flatMap((q) => indent(formatQdiscText(q, { stats: true }))),
    ...h.filters.flatMap((f) => indent(formatFilterText(f))),
  ];
}

/** A device's index. @throws {NoDeviceError} no such device */
async function resolveIfindexOf(sockets: HoldSockets, dev: string): Promise<number> {
  const found = await resolveInboundDevice(sockets.route, dev);
  if (!found) throw new NoDeviceError(dev);
  return found.ifindex;
}

/**
 * A device's own name and index, for a name the user gave (an altname
 * resolves to the device's name: `inbound:<name>` is one hold whatever name
 * is given).
 * @returns undefined when no device has that name
 * @throws {UsageError} not a valid device name
 * @throws {NetlinkError} another refusal than ENODEV
 */
export async function resolveInboundDevice(route: HoldSockets['route'], dev: string): Promise<{ name: string; ifindex: number } | undefined> {
  try {
    const replies = await route.request(getLinkRequest(dev));
    const m = replies.find((r) => r.type === RTM_NEWLINK);
    if (!m) return undefined;
    const raw = decodeLink(m);
    return { name: raw.ifname ?? dev, ifindex: raw.index };
  } catch (e) {
    if (e instanceof NetlinkError && e.code === 'ENODEV') return undefined;
    throw e;
  }
}

/**
 * The id of the recorded inbound hold of a device: by its name, else by its
 * index (the IFB `spifb<ifindex>` a renamed device's hold was recorded with).
 * @param dev the device's own name (see {@link resolveInboundDevice}) and index, when it exists
 * @returns `inbound:<name>` when nothing is recorded for it
 */
export function inboundRecordId(record: SetupRecord | undefined, dev: { name: string; ifindex?: number }): string {
  const id = inboundId(dev.name);
  if (record?.holds[id] || dev.ifindex === undefined) return id;
  const ifb = ifbNameFor(dev.ifindex);
  const found = Object.entries(record?.holds ?? {}).find(([, h]) => h.mode === 'inbound' && (h as InboundHoldRecord).ifb === ifb);
  return found ? found[0] : id;
}

/** An IFB carrying synplug's alias, as {@link findSynplugIfbs} finds it. */
export interface SynplugIfb {
  /** its name (`spifb<ifindex of DEV>`) */
  ifb: string;
  /** its index */
  ifbIndex: number;
  /** the device its alias names (`synplug inbound hold of DEV; state <mark>`) */
  dev: string;
  /** the state directory's mark its alias names (absent: an earlier synplug's alias) */
  stateMark?: string;
}

/**
 * Every IFB that carries synplug's alias ({@link IFB_ALIAS_PREFIX}): what
 * `release` and `teardown` fall back to when the record is missing, damaged
 * or does not list them (a crash between creating an IFB and recording it).
 * @throws {NetlinkError} the link dump was refused
 */
export async function findSynplugIfbs(route: HoldSockets['route']): Promise<SynplugIfb[]> {
  const out: SynplugIfb[] = [];
  for (const l of await listRawLinks(route)) {
    if (l.kind !== 'ifb' || !l.ifname) continue;
    const m = ifbAliasMark(l.attrs.str(IFLA_IFALIAS));
    if (!m) continue;
    out.push({ ifb: l.ifname, ifbIndex: l.index, ...m });
  }
  return out;
}

/**
 * The filters that send packets to a device (any mirred action whose target
 * is `ifindex`), on every device's ingress and egress hooks (clsact,
 * ingress) and root qdisc: each as `DEV ingress pref N`.
 * @throws {NetlinkError} a listing was refused (other than the device or qdisc vanishing meanwhile)
 */
export async function redirectsTo(route: HoldSockets['route'], ifindex: number): Promise<string[]> {
  const names = new Map((await listRawLinks(route)).map((l) => [l.index, l.ifname]));
  const out: string[] = [];
  for (const q of await listQdiscs(route)) {
    const dev = q.ifindex as number | undefined;
    if (dev === undefined) continue;
    const parents = q.kind === 'clsact' ? ['ingress', 'egress'] : q.kind === 'ingress' ? ['ingress'] : q.root && q.handle !== '0:' ? [q.handle] : [];
    for (const parent of parents) {
      let fs: FilterEntry[];
      try {
        fs = await listFilters(route, { ifindex: dev, parent });
      } catch (e) {
        if (e instanceof NetlinkError && (e.code === 'ENODEV' || e.code === 'EINVAL' || e.code === 'ENOENT')) continue;
        throw e;
      }
      for (const f of fs) {
        const acts = (f.options as { actions?: Array<Record<string, unknown>> } | undefined)?.actions ?? [];
        if (acts.some((a) => a.kind === 'mirred' && a.ifindex === ifindex))
          out.push(`${names.get(dev) ?? `if${dev}`} ${parent === 'ingress' || parent === 'egress' ? parent : `root ${parent}`} pref ${f.pref}`);
      }
    }
  }
  return [...new Set(out)];
}

/**
 * Why an IFB found by its alias ({@link findSynplugIfbs}) without a record
 * is not synplug's, or undefined when it is: synplug's has the name
 * `spifb<ifindex of DEV>` (DEV: the device its alias names; when no device
 * has that name now, DEV was renamed or removed and any `spifb<N>` does) and
 * at its root a plug or no qdisc of its own. An alias alone proves nothing.
 * @throws {NetlinkError} a listing was refused
 */
export async function unrecordedIfbMismatch(route: HoldSockets['route'], found: SynplugIfb): Promise<string | undefined> {
  let dev: { name: string; ifindex: number } | undefined;
  try {
    dev = await resolveInboundDevice(route, found.dev);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e; // the alias names no valid device name
  }
  const m = /^spifb([0-9]+)$/.exec(found.ifb);
  const want = dev ? ifbNameFor(dev.ifindex) : 'spifb<ifindex>';
  if (!m || (dev && Number(m[1]) !== dev.ifindex)) return `its name is not ${want}, the name synplug gives the IFB of ${found.dev}`;
  let root: QdiscEntry | undefined;
  try {
    root = (await listQdiscs(route, { ifindex: found.ifbIndex })).find((q) => q.root);
  } catch (e) {
    if (e instanceof NetlinkError && e.code === 'ENODEV') return 'it is gone';
    throw e;
  }
  if (root && root.handle !== '0:' && root.kind !== 'plug') return `its root qdisc is ${root.kind} ${root.handle}, not synplug's plug`;
  return undefined;
}

/**
 * The release of the plug (`1:` at the root) of an IFB found by its alias, encoded (NLM_F_ACK set).
 */
export function ifbReleaseMessage(ifbIndex: number): RequestInit {
  const r = plugRequest(ifbIndex, TC_H_ROOT, IFB_PLUG_HANDLE, TCQ_PLUG_RELEASE_INDEFINITE);
  return { type: r.type, flags: r.flags | NLM_F_ACK, payload: r.payload };
}

/**
 * Open the inbound hold of an IFB found by its alias, without a record:
 * its teardown removes the IFB, and on DEV only synplug's filters (at its
 * prefs, every action a redirect to that IFB); DEV's clsact is kept (no
 * record says whether setup added it). DEV is found by the alias's name, or
 * by the index in the IFB's name when it was renamed.
 * @throws {NetlinkError} a kernel refusal
 */
export async function openOrphanInboundHold(sockets: HoldSockets, found: SynplugIfb, limit: number, stateDir?: string): Promise<InboundHold> {
  const stand: InboundHoldRecord = {
    mode: 'inbound',
    dev: found.dev,
    createdAt: 0,
    ifb: found.ifb,
    ports: [1],
    addrs: [],
    classifier: 'u32',
    limit,
    families: ['ip', 'ipv6'],
    addedClsact: false,
  };
  const spec: InboundSpec = { dev: found.dev, ports: [1], addrs: [], classifier: 'u32' };
  let h: InboundHold;
  try {
    h = await openInboundHold(sockets, spec, limit, stand, { deviceMayBeGone: true, stateDir });
  } catch (e) {
    if (!(e instanceof UsageError)) throw e; // the alias names no usable device: the IFB alone
    h = new InboundHold(sockets, spec, limit, 0, found.ifbIndex, stand, false, stateDir);
  }
  return new InboundHold(sockets, h.spec, limit, h.ifindex, found.ifbIndex, stand, true, stateDir);
}
