/**
 * `synplug doctor`: what this kernel and this process can do, changing
 * nothing. For every hold mode registered (modes/index.ts), its own support
 * probe (the plug holds: qdisc and classifier kinds probed with requests the
 * kernel must refuse; the queue hold: nf_tables, nfnetlink_queue and a queue
 * verdict, native or xt NFQUEUE through nft_compat); for each module a hold
 * lacks, whether it could be loaded here; the capabilities; the TCP socket
 * diagnostics that `--wait-listen` uses; `net.ipv4.tcp_migrate_req`.
 *
 * @module
 */
import { existsSync, readFileSync } from 'node:fs';
import { release as kernelRelease } from 'node:os';
import { NetlinkConnection } from '../netlink/connection.js';
import { NETLINK_ROUTE } from '../netlink/message.js';
import { DEFAULTS, resolveConfig } from './config.js';
import { holdModes, type HoldScope, type HoldVia } from './modes/index.js';
import { GuardSession } from './session.js';
import { CAP_NET_ADMIN, CAP_SYS_ADMIN, hasEffectiveCapability, probeSockDiag, type ModulePiece } from './support.js';
import { readTcpMigrateReq } from './sysctl.js';

/**
 * Whether a module this kernel lacks could be loaded:
 * - `loadable`: its file is in /lib/modules/RELEASE (modules.dep lists it), but the
 *   kernel did not load it on demand (a container without CAP_SYS_MODULE, or
 *   module autoloading off): `modprobe NAME` as root on the host loads it;
 * - `missing`: /lib/modules/RELEASE exists but has no such module;
 * - `cannot-load`: this kernel has no /lib/modules/RELEASE at all (many
 *   container, microVM and cloud hosts): nothing can be loaded here.
 */
export type ModuleState = 'loadable' | 'missing' | 'cannot-load';

/** A module a hold needs and this kernel lacks. */
export interface DoctorModule {
  /** the module's name, as modprobe takes it, e.g. `sch_plug` */
  module: string;
  /** what synplug uses it for, e.g. `qdisc plug` */
  what: string;
  /** other modules any one of which would do */
  alternatives?: string[];
  /** whether it could be loaded here */
  state: ModuleState;
}

/** One hold mode on this kernel. */
export interface DoctorHold {
  /** the mode's registry name: `local`, `inbound`, `queue` */
  name: string;
  /** how it holds: `plug` (a plug qdisc) or `queue` (a netfilter queue) */
  via: HoldVia;
  /** whose clients it can hold: `local`, `inbound` */
  scopes: HoldScope[];
  /** true when nothing it needs is missing; null when it could not be probed (no CAP_NET_ADMIN) */
  supported: boolean | null;
  /** what it lacks */
  missing: DoctorModule[];
  /** modules whose presence could not be checked, as `module (what)` */
  unverified: string[];
  /** one sentence: why it works or not */
  why: string;
}

/** What `doctor` found. */
export interface DoctorReport {
  /** uname -r */
  kernel: string;
  /** every registered hold mode, in registration order */
  holds: DoctorHold[];
  /** the capabilities synplug uses (null when /proc/self/status cannot be read) */
  privileges: {
    /** CAP_NET_ADMIN: every command that changes the kernel, and the probes */
    netAdmin: boolean | null;
    /** CAP_SYS_ADMIN: `--netns` into another namespace, `demo --inbound` */
    sysAdmin: boolean | null;
  };
  /** the TCP socket diagnostics `--wait-listen` uses (modules inet_diag, tcp_diag) */
  diag: { tcpDiag: boolean; missing: DoctorModule[] };
  /** `net.ipv4.tcp_migrate_req` (null: no such sysctl, before Linux 5.14, or unreadable) */
  sysctl: { tcpMigrateReq: number | null };
  /** checks that could not be made, each a sentence (without CAP_NET_ADMIN: the hold probes) */
  notChecked: string[];
}

/**
 * Whether a module could be loaded on this kernel (see {@link ModuleState}).
 * @param name the module's name (`-` and `_` are the same to modprobe)
 * @param modulesDir the kernel's module folder, default /lib/modules/RELEASE
 */
export function moduleState(name: string, modulesDir = `/lib/modules/${kernelRelease()}`): ModuleState {
  if (!existsSync(modulesDir)) return 'cannot-load';
  let dep: string;
  try {
    dep = readFileSync(`${modulesDir}/modules.dep`, 'utf8');
  } catch {
    return 'cannot-load';
  }
  const want = name.replace(/-/g, '_');
  for (const line of dep.split('\n')) {
    const file = line.slice(0, line.indexOf(':')).split('/').pop() ?? '';
    if (file.replace(/\.ko(\.(xz|gz|zst))?$/, '').replace(/-/g, '_') === want) return 'loadable';
  }
  return 'missing';
}

const withState = (p: ModulePiece, modulesDir?: string): DoctorModule => ({ ...p, state: moduleState(p.module, modulesDir) });

const stateText: Record<ModuleState, string> = {
  loadable: 'in /lib/modules but not loaded: modprobe it on the host',
  missing: 'not in this kernel',
  'cannot-load': 'this kernel has no /lib/modules: it cannot be loaded here',
};

/**
 * Probe this kernel and process (changes nothing).
 * Sockets open in the library's default network namespace (the CLI's `--netns`).
 * @param options `modulesDir`: the kernel's module folder (tests)
 * @returns the report; without CAP_NET_ADMIN the holds are not probed
 *   (`supported: null`) and `notChecked` says so
 * @throws {NetlinkError} a probe was refused for a reason other than a missing module
 * @throws {SynplugError} a socket could not be opened
 */
export async function doctor(options: { modulesDir?: string } = {}): Promise<DoctorReport> {
  const netAdmin = hasEffectiveCapability(CAP_NET_ADMIN);
  const sysAdmin = hasEffectiveCapability(CAP_SYS_ADMIN);
  const notChecked: string[] = [];
  const holds: DoctorHold[] = [];
  // The probes' configuration; doctor reads and writes no state (the home directory: no namespace's cookie asked).
  const config = resolveConfig({ stateDir: DEFAULTS.stateDir });
  if (netAdmin === false) {
    notChecked.push('which holds this kernel supports: the probes need CAP_NET_ADMIN (run doctor as root)');
    for (const m of holdModes()) {
      holds.push({ name: m.name, via: m.via, scopes: [...m.scopes], supported: null, missing: [], unverified: [], why: 'the probes need CAP_NET_ADMIN' });
    }
  } else {
    const route = NetlinkConnection.open(NETLINK_ROUTE);
    const s = GuardSession.fromParts(config, route, () => []);
    try {
      for (const m of holdModes()) {
        const sup = await m.probeSupport(s, config);
        const missing = sup.missing.map((p) => withState(p, options.modulesDir));
        holds.push({
          name: m.name,
          via: m.via,
          scopes: [...m.scopes],
          supported: missing.length === 0,
          missing,
          unverified: sup.unverified.map((p) => `${p.module} (${p.what})`),
          why: missing.length
            ? `missing ${missing.map((p) => `${[p.module, ...(p.alternatives ?? [])].join(' or ')} (${p.what}; ${stateText[p.state]})`).join(', ')}`
            : sup.unverified.length
              ? `works, as far as can be checked (${sup.unverified.map((p) => p.module).join(', ')} unverified)`
              : 'works on this kernel',
        });
      }
    } finally {
      s.close();
    }
  }
  const diagMissing = ((await probeSockDiag()) ?? []).map((p) => withState(p, options.modulesDir));
  return {
    kernel: kernelRelease(),
    holds,
    privileges: { netAdmin: netAdmin ?? null, sysAdmin: sysAdmin ?? null },
    diag: { tcpDiag: diagMissing.length === 0, missing: diagMissing },
    sysctl: { tcpMigrateReq: readTcpMigrateReq() },
    notChecked,
  };
}
