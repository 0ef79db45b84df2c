/**
 * Phase-one checks that change nothing: privileges and kernel support.
 *
 * - CAP_NET_ADMIN: bit 12 of CapEff in /proc/self/status.
 * - A qdisc kind (prio, plug): an RTM_NEWQDISC that the kernel must refuse
 *   whatever happens — NLM_F_CREATE|NLM_F_REPLACE|NLM_F_EXCL on the root with
 *   handle 0 and a 1-byte TCA_OPTIONS. The kernel looks the kind up first
 *   (loading its module if it can): an unknown kind answers ENOENT, a known one
 *   fails in its init on the short options (EINVAL), and the half-made qdisc
 *   is destroyed before it is grafted, so nothing changes either way.
 * - A classifier kind (fw): an RTM_NEWTFILTER on a shared block that does not
 *   exist (tcm_ifindex TCM_IFINDEX_MAGIC_BLOCK). The kernel looks the kind up
 *   (loading cls_fw if it can) before it fails to find the block; then
 *   /sys/module/cls_fw tells whether it is there. A kernel built with cls_fw
 *   inside (no /sys/module entry) is recognised from /proc/kallsyms (its
 *   classify function listed without a module), else from modules.builtin
 *   when /lib/modules is present; a readable kallsyms without the function
 *   (and no modules.builtin) means it is missing; only when neither can be
 *   read is the answer "unknown", and setup
 *   finds out for sure in its transaction (rolling back if it is missing).
 * - nf_tables: NFT_MSG_GETGEN answers.
 *
 * @module
 */
import { readFileSync, existsSync } from 'node:fs';
import { release as kernelRelease, constants as osConstants } from 'node:os';
import { NetlinkConnection, kernelDouble } from '../netlink/connection.js';
import { NLM_F_CREATE, NLM_F_EXCL, NLM_F_REPLACE, NETLINK_NETFILTER, NETLINK_SOCK_DIAG } from '../netlink/message.js';
import { listTcpListeners } from '../netlink/sockdiag.js';
import { attr, str, u32 } from '../netlink/attributes.js';
import { NetlinkError, SynplugError } from '../netlink/errors.js';
import { NotPermittedError } from './errors.js';
import { RTM_NEWQDISC, RTM_NEWTFILTER } from '../netlink/route/constants.js';
import { encodeTcmsg, filterInfo } from '../tc/tcmsg.js';
import { TCA_KIND, TCA_OPTIONS, TC_H_ROOT, TCM_IFINDEX_MAGIC_BLOCK, ETH_P_IP } from '../tc/constants.js';
import { NFT_MSG_GETGEN } from '../iptables/constants.js';
import { nftType } from '../iptables/nfnetlink.js';

export { NotPermittedError };

/** A shared-block index nobody uses (tcm_parent when tcm_ifindex is TCM_IFINDEX_MAGIC_BLOCK): the probe's filter finds no block. */
const UNUSED_BLOCK_INDEX = 0xfffffff0;

/**
 * The kernel lacks modules the technique needs. Category `missing-module`.
 *
 * The message names every missing module, and every module whose presence
 * could not be checked (with the reason), and suggests one `modprobe` for
 * all of them: loading only the missing ones would just lead to the next
 * failure.
 */
export class MissingSupportError extends SynplugError {
  /** the missing pieces as text, each `module (what)`, e.g. `['sch_prio (qdisc prio)', 'sch_plug (qdisc plug)']` */
  missing: string[];
  /** pieces whose presence could not be checked, same form, e.g. `['cls_fw (filter fw)']` (see {@link probeFilterKind}) */
  unverified: string[];
  /** every module named, once each, e.g. `['sch_prio', 'sch_plug', 'cls_fw']` */
  modules: string[];
  /** the missing pieces, as given */
  missingPieces: readonly ModulePiece[];
  /** the pieces that could not be checked, as given */
  unverifiedPieces: readonly ModulePiece[];
  /**
   * @param missing the missing pieces, e.g. `{ module: 'sch_prio', what: 'qdisc prio' }`
   * @param unverified pieces that could not be checked; the message says why
   * @param options `modulesDir`: the running kernel's module folder (default /lib/modules/RELEASE): without it the message says modprobe cannot work here
   */
  constructor(missing: readonly ModulePiece[], unverified: readonly ModulePiece[] = [], options: { modulesDir?: string } = {}) {
    const modules = [...new Set([...missing, ...unverified].map((p) => p.module))];
    const unchecked = unverified.map((u) => `; ${pieceText(u)} could not be checked: ${whyUnchecked(u.module)}`).join('');
    const text = missing.map(pieceText);
    const instead = [...missing, ...unverified]
      .filter((p) => p.alternatives?.length)
      .map((p) => `; ${p.alternatives!.join(' or ')} will do instead of ${p.module}`)
      .join('');
    // Without the running kernel's module folder, modprobe cannot help (containers, microVMs, many cloud hosts).
    const dir = options.modulesDir ?? `/lib/modules/${kernelRelease()}`;
    const load = existsSync(dir)
      ? `Load the modules (modprobe ${modules.join(' ')}${instead}) or use a kernel that has them`
      : `Use a kernel that has them: this one has no ${dir}, so loading them (modprobe ${modules.join(' ')}${instead}) cannot work here`;
    super(
      `this kernel lacks what synplug needs: ${text.join(', ')}${unchecked}. ${load}; 'synplug doctor' shows which holds this kernel supports; nothing was changed`,
      'missing-module',
    );
    this.name = 'MissingSupportError';
    this.modules = modules;
    this.missing = text;
    this.unverified = unverified.map(pieceText);
    this.missingPieces = [...missing];
    this.unverifiedPieces = [...unverified];
  }
}

/** A kernel module synplug needs, and what it provides there (`{ module: 'sch_plug', what: 'qdisc plug' }`). */
export interface ModulePiece {
  /** the module's name, as modprobe takes it */
  module: string;
  /** what synplug uses it for, e.g. `qdisc plug`, `filter fw`, `nftables` */
  what: string;
  /** other modules any one of which does the same (`cls_u32` for `cls_flower`): the text names them all, `cls_flower or cls_u32` */
  alternatives?: string[];
}

const pieceText = (p: ModulePiece): string => `${[p.module, ...(p.alternatives ?? [])].join(' or ')} (${p.what})`;

/** Where the kernel's list of built-in modules is. */
function modulesBuiltinPath(): string {
  return `/lib/modules/${kernelRelease()}/modules.builtin`;
}

/**
 * Why {@link probeFilterKind} answered "unknown" for a module: it is not
 * loaded, and whether it is built in cannot be read.
 */
function whyUnchecked(mod: string): string {
  let code = '';
  try {
    readFileSync(modulesBuiltinPath());
  } catch (e) {
    code = ` (${(e as { code?: string }).code ?? String(e)})`;
  }
  return `it is not loaded (no /sys/module/${mod}), and neither ${modulesBuiltinPath()} nor /proc/kallsyms, which would tell whether it is built into the kernel, can be read${code}`;
}

/** The function each classifier's module defines (`<prefix>_classify`), which /proc/kallsyms lists when it is built in. */
const CLASSIFY_SYMBOL: Readonly<Record<string, string>> = { u32: 'u32_classify', flower: 'fl_classify', fw: 'fw_classify', bpf: 'cls_bpf_classify' };

/**
 * Whether /proc/kallsyms lists a classifier's function as part of the
 * kernel itself (a built-in classifier has no /sys/module entry; a loaded
 * module's symbols carry `[module]`).
 * @returns true when listed as built in; false when kallsyms can be read and
 * does not list it as built in (absent, or a module's); undefined when it
 * cannot be told (no readable kallsyms, an empty one, no symbol known for the kind)
 */
export function builtinBySymbol(kind: string, kallsyms = '/proc/kallsyms'): boolean | undefined {
  const sym = CLASSIFY_SYMBOL[kind];
  if (!sym) return undefined;
  let text: string;
  try {
    text = readFileSync(kallsyms, 'latin1');
  } catch {
    return undefined;
  }
  const re = new RegExp(`^[0-9a-f]+ [tT] ${sym}(?:\\.[a-z0-9._]+)?$`, 'm');
  if (re.test(text)) return true;
  // A readable list of the kernel's functions without it: not built in.
  return /^[0-9a-f]+ [tT] \S/m.test(text) ? false : undefined;
}

/** CAP_NET_ADMIN (linux/capability.h): netlink changes to links, qdiscs, nftables. */
export const CAP_NET_ADMIN = 12;
/** CAP_SYS_ADMIN (linux/capability.h): unshare(CLONE_NEWNET), setns. */
export const CAP_SYS_ADMIN = 21;

/**
 * Whether this process has a capability in its effective set (CapEff in
 * /proc/self/status), or undefined when that cannot be read.
 * @param bit the capability's number (linux/capability.h), e.g. {@link CAP_SYS_ADMIN}
 */
export function hasEffectiveCapability(bit: number): boolean | undefined {
  try {
    const m = /^CapEff:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? (BigInt(`0x${m[1]}`) & (1n << BigInt(bit))) !== 0n : undefined;
  } catch {
    return undefined;
  }
}

/** Whether this process has CAP_NET_ADMIN in its effective set (root's uid when /proc cannot tell). */
export function hasNetAdmin(): boolean {
  return hasEffectiveCapability(CAP_NET_ADMIN) ?? process.getuid?.() === 0;
}

/**
 * @throws {NotPermittedError} without CAP_NET_ADMIN
 */
export function requireNetAdmin(what: string): void {
  if (!hasNetAdmin()) throw new NotPermittedError(what);
}

/** Result of one support probe. */
export type Support = 'yes' | 'no' | 'unknown';

/**
 * Whether the kernel has a qdisc kind, without changing anything (see the module doc).
 * @param ifindex any existing device
 * @throws {NetlinkError} an unexpected refusal (EPERM...)
 */
export async function probeQdiscKind(conn: NetlinkConnection, ifindex: number, kind: string): Promise<Support> {
  try {
    await conn.request({
      type: RTM_NEWQDISC,
      flags: NLM_F_CREATE | NLM_F_REPLACE | NLM_F_EXCL,
      payload: [encodeTcmsg({ ifindex, parent: TC_H_ROOT, handle: 0 }), str(TCA_KIND, kind), attr(TCA_OPTIONS, Uint8Array.of(0))],
    });
  } catch (e) {
    if (!(e instanceof NetlinkError)) throw e;
    if (e.code === 'ENOENT') return 'no';
    if (e.code === 'EPERM' || e.code === 'EACCES') throw e;
    return 'yes'; // found, then refused our deliberately bad options
  }
  // Accepted? Cannot happen with 1-byte options; say so loudly rather than guess.
  throw new SynplugError(`probing qdisc kind '${kind}' unexpectedly created a qdisc; check 'synplug show qdisc'`);
}

/**
 * Whether the kernel has a classifier kind (see the module doc).
 * @throws {NetlinkError} an unexpected refusal (EPERM...)
 */
export async function probeFilterKind(conn: NetlinkConnection, kind: string): Promise<Support> {
  const mod = `cls_${kind}`;
  const k = kernelDouble();
  if (!k && existsSync(`/sys/module/${mod}`)) return 'yes';
  try {
    await conn.request({
      type: RTM_NEWTFILTER,
      flags: NLM_F_CREATE | NLM_F_EXCL,
      // A block index nobody uses: the kernel loads the classifier, then fails to find the block.
      payload: [
        encodeTcmsg({ ifindex: TCM_IFINDEX_MAGIC_BLOCK, parent: UNUSED_BLOCK_INDEX, info: filterInfo(1, ETH_P_IP) }),
        str(TCA_KIND, kind),
        u32(TCA_OPTIONS, 0),
      ],
    });
  } catch (e) {
    if (!(e instanceof NetlinkError)) throw e;
    if (e.code === 'EPERM' || e.code === 'EACCES') throw e;
  }
  if (k) return k.moduleLoaded(mod) ? 'yes' : 'no';
  if (existsSync(`/sys/module/${mod}`)) return 'yes';
  // Built into the kernel: no /sys/module entry (none without parameters), but the kernel's own symbol list has it.
  const bySymbol = builtinBySymbol(kind);
  if (bySymbol) return 'yes';
  try {
    if (readFileSync(modulesBuiltinPath(), 'utf8').includes(`/${mod}.ko`)) return 'yes';
    // Present as a loadable module, yet it did not load: not loadable here (e.g. a container).
    return 'no';
  } catch {
    // No modules.builtin (a container without /lib/modules): kallsyms alone tells, when it can be read. The load the
    // request above asked for did not happen (no /sys/module entry), and the kernel does not have it built in.
    return bySymbol === false ? 'no' : 'unknown';
  }
}

/**
 * Whether nf_tables answers (NFT_MSG_GETGEN).
 */
export async function probeNfTables(): Promise<Support> {
  let conn: NetlinkConnection;
  try {
    conn = NetlinkConnection.open(NETLINK_NETFILTER, { timeoutMs: 2000 });
  } catch {
    return 'no';
  }
  try {
    // nfgenmsg AF_UNSPEC, v0, res_id 0.
    await conn.request({ type: nftType(NFT_MSG_GETGEN), payload: Buffer.alloc(4) });
    return 'yes';
  } catch (e) {
    if (e instanceof NetlinkError && (e.code === 'EPERM' || e.code === 'EACCES')) throw e;
    return 'no';
  } finally {
    conn.close();
  }
}

/**
 * The kernel's TCP socket diagnostics (sock_diag with inet_diag and tcp_diag,
 * which `--wait-listen` uses) cannot be used. Category `missing-module`.
 */
export class SockDiagUnavailableError extends SynplugError {
  /** the modules needed: `['inet_diag', 'tcp_diag']` */
  readonly modules = ['inet_diag', 'tcp_diag'];
  /** @param cause the kernel's refusal (usually ENOENT: no handler for the family/protocol) */
  constructor(cause: NetlinkError) {
    super(
      `--wait-listen cannot see listening TCP sockets: the kernel's TCP socket diagnostics (modules inet_diag and tcp_diag) cannot be used here (${cause.requestType ?? 'sock_diag request'} failed: ${cause.code}). Load them with 'modprobe inet_diag tcp_diag' (a host usually loads them by itself; a VM or container whose /lib/modules lacks them must load them from the kernel's module folder, e.g. 'modprobe -d DIR inet_diag tcp_diag'), or drop --wait-listen; 'synplug doctor' shows what this kernel supports; nothing was held`,
      'missing-module',
      { cause },
    );
    this.name = 'SockDiagUnavailableError';
  }
}

/**
 * A sock_diag refusal explained: ENOENT, EOPNOTSUPP or EPROTONOSUPPORT from
 * SOCK_DIAG_BY_FAMILY (no inet_diag/tcp_diag handler) or EPROTONOSUPPORT from
 * opening the socket becomes a {@link SockDiagUnavailableError}; anything else
 * is returned as it is.
 * @param e what the listing threw
 */
export function explainSockDiag(e: unknown): unknown {
  if (e instanceof NetlinkError && ['ENOENT', 'EOPNOTSUPP', 'EPROTONOSUPPORT'].includes(e.code)) return new SockDiagUnavailableError(e);
  const cause = (e as { cause?: { code?: string } })?.cause;
  if (e instanceof SynplugError && cause?.code === 'EPROTONOSUPPORT') {
    return new SockDiagUnavailableError(new NetlinkError({ errno: osConstants.errno.EPROTONOSUPPORT, requestType: 'socket(NETLINK_SOCK_DIAG)' }));
  }
  return e;
}

/**
 * Whether the TCP socket diagnostics answer (`--wait-listen` and the demo
 * need them): one listing of listening sockets on port 1.
 * @param what what needs them, for the pieces' text
 * @returns the missing pieces (inet_diag, tcp_diag), or undefined when they answer
 * @throws what the listing threw when it is not their absence
 */
export async function probeSockDiag(what = 'TCP socket diagnostics (--wait-listen)'): Promise<ModulePiece[] | undefined> {
  let conn: NetlinkConnection | undefined;
  try {
    conn = NetlinkConnection.open(NETLINK_SOCK_DIAG);
    await listTcpListeners(conn, { port: 1 });
    return undefined;
  } catch (e) {
    const x = explainSockDiag(e);
    if (!(x instanceof SockDiagUnavailableError)) throw x;
    return x.modules.map((module) => ({ module, what }));
  } finally {
    conn?.close();
  }
}
