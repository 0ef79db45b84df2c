/**
 * `setup --dry-run`: what {@link setup} would add, replace or remove, and
 * record, with the same options, changing nothing.
 *
 * {@link planSetup} runs setup's phase one itself ({@link setupOrPlan}: the
 * options, CAP_NET_ADMIN, the record, the hold chosen (`--via auto`), the
 * device, clashes, every module, foreign state in the way) and stops where
 * setup would take its first step: no stale plug is released, no step runs,
 * no record is written, no directory is made. The steps it reports are the
 * ones setup would take from the kernel's state at that moment, in the same
 * words (`actions` equals the `actions` of a setup run right after it); each
 * is classified (add, replace, change, remove, release) and the ones that
 * change what other traffic goes through are explained in `affects`.
 *
 * @module
 */
import { join } from 'node:path';
import { setupOrPlan } from './setup.js';
import type { SetupWould } from './setup-would.js';
import type { SetupOptions } from './types.js';

/** What kind of change one step is. */
export type PlanAction = 'add' | 'replace' | 'change' | 'remove' | 'release';

/** One step setup would take. */
export interface PlanChange {
  /** what kind of change it is */
  action: PlanAction;
  /** the step in setup's own words (as setup's `actions` list it) */
  what: string;
}

/** What {@link planSetup} returns: setup's plan, nothing changed. */
export interface SetupPlan {
  /** always true: nothing was changed */
  dryRun: true;
  /** the hold setup would build: `local`, `inbound:DEV`, `queue`... */
  hold: string;
  /** its kind: `plug` (a plug qdisc) or `queue` (a netfilter queue) */
  via: 'plug' | 'queue';
  /** with `via: 'auto'`: which hold it would choose, and why */
  chose?: string;
  /** the device the hold sits on */
  dev: string;
  /** whether setup would change anything in the kernel (false: everything is in place already); a dry run itself changes nothing */
  wouldChange: boolean;
  /** the steps, in order, classified */
  changes: PlanChange[];
  /** exactly the `actions` setup would report */
  actions: string[];
  /** what the changes mean for traffic that synplug does not hold (`lo's root qdisc becomes prio 1: ...`) */
  affects: string[];
  /** the hold's armed pieces, which setup does not add: they exist only around each hold (added in phase one, removed after the release) */
  armed: string[];
  /** what setup would write in its state directory */
  record: {
    /** the state directory */
    stateDir: string;
    /** it does not exist yet: setup would create it (mode 0700) */
    createsStateDir: boolean;
    /** the files setup would write (setup.json always; plug.json when there is none yet) */
    files: string[];
    /** the lock file setup would create (empty) when there is none yet: it marks the directory as one a setup ran in */
    lockFile?: string;
    /** the hold's key in setup.json */
    hold: string;
    /** a key of the same hold (a renamed device) setup would drop */
    drops?: string;
  };
  /** kernel support that could not be verified before changing anything (setup finds out by trying) */
  unverified: string[];
}

/** The first word(s) of a step, and the kind of change it is; the first match wins, `change` when none does. */
const ACTIONS: ReadonlyArray<readonly [RegExp, PlanAction]> = [
  [/^(nftables: )?add\b/, 'add'],
  [/^replace\b/, 'replace'],
  [/^(remove|delete)\b/, 'remove'],
  [/^release\b/, 'release'],
];

/** Steps that change the path of traffic synplug does not hold, and what to say of them (`dev`: the hold's device). */
const EFFECTS: ReadonlyArray<readonly [RegExp, (m: RegExpExecArray, dev: string) => string]> = [
  [
    // (not a root qdisc `on` an IFB: the IFB's own line says what that device is for)
    /^(?:add qdisc (\S+ \S+) root(?! on )|replace root qdisc (\S+ \S+) .*with (\S+ \S+))/,
    (m, dev) =>
      `${dev}'s root qdisc becomes ${m[1] ?? m[3]}${m[2] ? ` (${m[2]} is deleted, with everything under it and its filters)` : ''}, so every packet ${dev} sends passes through it (only what synplug holds waits); ${dev} drops what it sends while the kernel grafts a root (a few ms), once, here`,
  ],
  [/^add qdisc clsact on (\S+)/, (m) => `${m[1]} gets a clsact qdisc: during a hold, every packet arriving on ${m[1]} passes synplug's SYN filters`],
  [/^add link (\S+) type ifb/, (m) => `a new device ${m[1]} (an IFB, IPv6 off: net.ipv6.conf.${m[1]}.disable_ipv6 = 1) where held SYNs wait`],
  [
    /(?:^|: |; )add (?:nftables )?table ((?:inet |ip |ip6 )?[\w-]+)/,
    (m) =>
      /\brule\b/.test(m.input)
        ? `a new nftables table ${m[1]}: its rule sees every packet of its hook (only what synplug holds is marked or queued)`
        : `a new nftables table ${m[1]}: by itself it sees no packet (its chain and rule come with each hold)`,
  ],
  [/^add address (\S+) dev (\S+)/, (m) => `${m[2]} gets the address ${m[1]}: connections to it are the ones synplug holds`],
];

/**
 * Classify one of setup's steps by its first words.
 * @param what the step's text
 */
export function planAction(what: string): PlanAction {
  return ACTIONS.find(([re]) => re.test(what))?.[1] ?? 'change';
}

/**
 * What each step changes for traffic that synplug does not hold (the steps that add a root qdisc,
 * clsact, an IFB, an nftables table or an address), in order.
 * @param actions setup's steps' texts
 * @param dev the hold's device (the local hold's steps do not name it)
 */
export function planEffects(actions: readonly string[], dev: string): string[] {
  return actions.flatMap((what) =>
    EFFECTS.flatMap(([re, say]) => {
      const m = re.exec(what);
      return m ? [say(m, dev)] : [];
    }),
  );
}

/**
 * What `setup` with these options would do, changing nothing (no kernel
 * request that changes anything, no record, no directory).
 * @param opts as {@link setup}'s
 * @returns the plan (see {@link SetupPlan})
 * @throws as {@link setup} does before its first step: {@link UsageError}, {@link NotPermittedError},
 *   {@link StateFileError}, {@link MissingSupportError}, {@link NoDeviceError}, {@link IfbNameClashError},
 *   {@link ForeignQdiscError} (a foreign root qdisc without `force`), {@link ForeignFilterError}
 */
export async function planSetup(opts: SetupOptions = {}): Promise<SetupPlan> {
  return (await setupOrPlan(opts ?? {}, toPlan)) as SetupPlan;
}

function toPlan(w: SetupWould): SetupPlan {
  const actions = w.steps.map((x) => x.what);
  return {
    dryRun: true,
    hold: w.hold.id,
    via: w.hold.via,
    ...(w.chose !== undefined && { chose: w.chose }),
    dev: w.hold.dev,
    wouldChange: actions.length > 0,
    changes: actions.map((what) => ({ action: planAction(what), what })),
    actions,
    affects: planEffects(actions, w.hold.dev),
    armed: [...w.armed],
    record: {
      stateDir: w.config.stateDir,
      createsStateDir: !w.dirExisted,
      files: [join(w.config.stateDir, 'setup.json'), ...(w.store.readPlug() ? [] : [join(w.config.stateDir, 'plug.json')])],
      ...(!w.store.hasLockFile() && { lockFile: w.store.lockPath() }),
      hold: w.hold.id,
      ...(w.replaces !== undefined && w.replaces !== w.hold.id && { drops: w.replaces }),
    },
    unverified: w.unverified.map((p) => `${p.module} (${p.what})`),
  };
}
