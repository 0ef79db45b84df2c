/**
 * The technique's commands: setup, check, plug, release, protect, status, teardown.
 *
 * @module
 */
import { type Command, Option } from 'commander';
import { isAbsolute, resolve } from 'node:path';
import { UsageError } from '../netlink/errors.js';
import { DEFAULTS, parseDuration, parseUint, type GuardConfig } from '../guard/config.js';
import { netnsStateDir } from '../guard/state-dir.js';
import { refuseDotDot } from '../guard/state-fs.js';
import type * as GuardModule from '../guard/index.js';
import { EXIT, exitCodesHelp } from './exit-codes.js';
import { jsonOption, run } from './run.js';
import { formatSetupPlan } from './format-plan.js';
import { formatCheck, formatMigrateReq, formatPlug, formatProtect, formatRelease, formatSetup, formatStatus, formatTeardown } from './format-guard.js';
import { formatHolderFailure, formatLastReload } from './format-guard.js';
import { isIP } from 'node:net';

/** The guard is loaded when a command runs, not at start-up: `--help` and `show` stay fast. */
const loadGuard = (): Promise<typeof GuardModule> => import('../guard/index.js');

interface ConfigFlags {
  dev?: string;
  addr?: string | string[];
  mark?: string;
  limit?: string;
  stateDir?: string;
  json?: boolean;
}

const collect = (v: string, prev: string[] | undefined): string[] => [...(prev ?? []), v];

function configOptions(cmd: Command, which: { setup?: boolean; inbound?: boolean } = {}): Command {
  cmd.addOption(new Option('--dev <name>', 'device the qdisc tree sits on (default: as set up, else lo)'));
  if (which.inbound) {
    cmd.addOption(
      new Option(
        '--addr <address>',
        "the local hold: the proxy's address, IPv4 or IPv6 (default 169.254.255.254); with --inbound: a destination address to hold SYNs to (repeat for more; default any)",
      ).argParser(collect),
    );
  } else cmd.addOption(new Option('--addr <address>', "the proxy's address, IPv4 or IPv6 (default: as set up, else 169.254.255.254)"));
  cmd.addOption(new Option('--mark <n>', 'firewall mark for held SYNs, 1-4294967295 (default: as set up, else 1)'));
  if (which.setup) {
    cmd.addOption(new Option('--limit <bytes>', 'plug limit in bytes; more is dropped (default 1048576)'));
  }
  cmd.addOption(
    new Option(
      '--state-dir <dir>',
      `state directory: a directory of this user that nobody else can write, created mode 0700 when missing (${STATE_DIR_DEFAULT_HELP})`,
    ),
  );
  cmd.addOption(jsonOption());
  return cmd;
}

/** What `--state-dir`'s help says of the default (docs/cli.md says the rest: which namespace is home, how it is told). */
export const STATE_DIR_DEFAULT_HELP =
  'default /run/synplug; in another network namespace (--netns, ip netns exec) /run/synplug/netns/<its cookie>; env SYNPLUG_STATE_DIR';

/**
 * The state directory the user gave: --state-dir, else SYNPLUG_STATE_DIR, else undefined.
 * @throws {UsageError} an empty --state-dir, or SYNPLUG_STATE_DIR set but empty (named); a relative path or a `..` component
 */
export function givenStateDir(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (flag !== undefined) {
    if (flag === '') throw new UsageError('--state-dir is empty: give a directory');
    return absoluteStateDir(flag, '--state-dir');
  }
  const v = env.SYNPLUG_STATE_DIR;
  if (v === undefined) return undefined;
  if (v === '')
    throw new UsageError('the environment variable SYNPLUG_STATE_DIR is set but empty: unset it (for the default state directory) or give a directory');
  return absoluteStateDir(v, 'the environment variable SYNPLUG_STATE_DIR');
}

/**
 * The state directory: the one given ({@link givenStateDir}), else that of
 * a network namespace other than synplug's home one (--netns, or the one
 * synplug runs in: state-dir.ts's netnsStateDir), else undefined (the
 * default, /run/synplug).
 * @throws {UsageError} as {@link givenStateDir}; or no SO_NETNS_COOKIE in another namespace
 */
export function stateDirOf(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return givenStateDir(flag, env) ?? netnsStateDir();
}

/**
 * A state directory given as an absolute path: a relative one would name
 * another directory for every command run from elsewhere (and for the
 * watchdog and the queue's holder, which outlive the command).
 * @throws {UsageError} a `..` component; a relative path, with the absolute one it would have been
 */
function absoluteStateDir(dir: string, what: string): string {
  refuseDotDot(dir, what);
  if (isAbsolute(dir)) return dir;
  throw new UsageError(`${what}: '${dir}' is a relative path: give an absolute one (from here: ${resolve(dir)}), the same for every command`);
}

function config(f: ConfigFlags): Partial<GuardConfig> {
  if (Array.isArray(f.addr) && f.addr.length > 1) {
    throw new UsageError(`--addr given ${f.addr.length} times: without --inbound, --addr is the local hold's one proxy address`);
  }
  return {
    dev: f.dev,
    addr: Array.isArray(f.addr) ? f.addr[0] : f.addr,
    mark: f.mark !== undefined ? parseUint(f.mark, '--mark') : undefined,
    limit: f.limit !== undefined ? parseUint(f.limit, '--limit') : undefined,
    stateDir: stateDirOf(f.stateDir),
  };
}

function out(json: boolean | undefined, value: unknown, text: string): void {
  if (json) process.stdout.write(JSON.stringify(value) + '\n');
  else if (text) process.stdout.write(text.endsWith('\n') ? text : text + '\n');
}

/**
 * `[ADDR:]PORT` or `[IPV6]:PORT`.
 * @throws {UsageError} not of that form, or a port outside 1-65535
 */
export function parseListen(text: string): GuardModule.ListenTarget {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]:|([0-9.]+):)?([0-9]+)$/.exec(text.trim());
  if (!m) throw new UsageError(`--wait-listen: '${text}' is not [ADDR:]PORT (e.g. 16000, 169.254.255.254:16000, [::1]:16000)`);
  const address = m[1] ?? m[2];
  if (address !== undefined && isIP(address) === 0) throw new UsageError(`--wait-listen: '${address}' is not an IP address`);
  const port = Number(m[3]);
  if (port < 1 || port > 65535) throw new UsageError(`--wait-listen: port ${port} is outside 1-65535`);
  return { address, port };
}

/**
 * protect's `--check` value: one command line, split into words as a shell
 * quotes them (no shell runs it; precheck.ts).
 * @throws {UsageError} empty, or not splittable (an open quote, shell syntax)
 */
export async function parseCheck(text: string): Promise<string[]> {
  const { splitCommandWords } = await import('../guard/precheck.js');
  const words = splitCommandWords(text, '--check');
  if (words.length === 0 || words[0] === '') throw new UsageError("--check is empty: give the check command, e.g. --check 'nginx -t'");
  return words;
}

/**
 * The one --inbound given (commander collects repeats).
 * @throws {UsageError} --inbound given more than once
 */
export function oneInbound(v: string | string[] | undefined): string | undefined {
  if (!Array.isArray(v)) return v;
  if (v.length > 1) throw new UsageError(`--inbound given ${v.length} times (${v.join(', ')}): give one device per command`);
  return v[0];
}

/**
 * Refuse the local hold's flags where an inbound hold is named.
 * @throws {UsageError} --dev, --mark (or, for teardown, --addr) given
 */
export function refuseLocalFlags(f: { dev?: string; mark?: string; addr?: string | string[] }, what: string): void {
  if (f.dev !== undefined)
    throw new UsageError(
      `--dev is the local hold's device; ${what}, the device the clients' packets arrive on (the local hold is set up and removed on its own)`,
    );
  if (f.mark !== undefined) throw new UsageError(`--mark is the local hold's firewall mark; the inbound hold marks nothing (${what})`);
  if (f.addr !== undefined) throw new UsageError(`--addr is the local hold's proxy address here; ${what}, whatever addresses it was set up with`);
}

/**
 * setup's options from its flags: the local hold's, or with --inbound the
 * inbound hold's (--port, --addr repeated, --limit).
 * @throws {UsageError} --port or a second --addr without --inbound; --dev, --mark or --force with it; a bad port
 */
export function setupOptions(
  f: ConfigFlags & {
    force?: boolean;
    inbound?: string;
    port?: string[];
    classifier?: 'flower' | 'u32' | 'auto';
    via?: string;
    queueNum?: string;
    queueMaxlen?: string;
    metricsFile?: string;
  },
): GuardModule.SetupOptions {
  const queue = {
    ...(f.queueNum !== undefined && { num: parseUint(f.queueNum, '--queue-num', 0xffff) }),
    ...(f.queueMaxlen !== undefined && { maxlen: parseUint(f.queueMaxlen, '--queue-maxlen') }),
  };
  // The word is checked by setup (exit 2); the queue hold's own options ride along.
  const via = {
    ...(f.via !== undefined && { via: f.via as GuardModule.SetupOptions['via'] }),
    ...(Object.keys(queue).length && { queue }),
    ...(f.metricsFile !== undefined && { metricsFile: f.metricsFile }),
  };
  if (f.via === 'queue' && f.classifier !== undefined)
    throw new UsageError("--classifier is the inbound plug hold's option; the queue hold uses an nftables rule");
  if (f.inbound === undefined) {
    if (f.port !== undefined)
      throw new UsageError('--port is for the inbound hold: use it with --inbound DEV (the local hold holds every port of its address)');
    if (f.classifier !== undefined) throw new UsageError('--classifier is for the inbound hold: use it with --inbound DEV');
    return { ...config(f), ...(f.force && { force: true }), ...via };
  }
  if (f.inbound === '') throw new UsageError('--inbound is empty: give the device connections arrive on');
  refuseLocalFlags({ dev: f.dev, mark: f.mark }, 'with --inbound DEV, setup sets up the inbound hold of DEV');
  if (f.force) throw new UsageError("--force has no meaning with --inbound: the inbound hold never replaces a qdisc that is not synplug's");
  if (!f.port?.length) throw new UsageError('--inbound needs at least one --port PORT (the TCP port the server listens on; repeat for more)');
  const ports = f.port.map((p) => {
    const n = /^[0-9]+$/.test(p) ? Number(p) : Number.NaN;
    if (!(n >= 1 && n <= 65535)) throw new UsageError(`--port: '${p}' is not a TCP port (1-65535)`);
    return n;
  });
  const addrs = f.addr === undefined ? [] : Array.isArray(f.addr) ? f.addr : [f.addr];
  return {
    ...config({ ...f, addr: undefined }),
    inbound: { dev: f.inbound, ports, addrs, ...(f.classifier !== undefined && { classifier: f.classifier }) },
    ...via,
  };
}

/**
 * The hold `check` and `status` report: `--inbound DEV` or `--local` (as teardown takes them), every hold without.
 * @throws {UsageError} --inbound repeated or empty, --inbound with --local, or --inbound with the local hold's flags
 */
export function holdSelector(f: ConfigFlags & { inbound?: string | string[]; local?: boolean }, command: string): GuardModule.HoldSelector {
  const inbound = oneInbound(f.inbound);
  if (inbound === '') throw new UsageError('--inbound is empty: give a device name');
  if (inbound !== undefined && f.local) throw new UsageError(`${command}: --local and --inbound each name one hold; give one of them (neither: every hold)`);
  if (inbound !== undefined) refuseLocalFlags(f, `${command} --inbound DEV reports the inbound hold of DEV`);
  return { ...(inbound !== undefined && { inbound }), ...(f.local && { local: true }) };
}

/** The --inbound/--local options of check and status. */
function selectorOptions(cmd: Command, verb: string): Command {
  return cmd
    .option('--inbound <dev>', `${verb} only the inbound hold of this device (any of its names)`, collect)
    .option('--local', `${verb} only the local hold (its id: local, the plug hold; queue, the queue hold)`);
}

/** `--metrics-file` of protect, plug and release: what it does (and that setup can record a default). */
const METRICS_FILE_HELP =
  "write the reload totals (kept in the state directory) to PATH in Prometheus' text format, as node_exporter's textfile collector reads it (a temporary file, then a rename); PATH ends in .prom and, if it exists, is a metrics file synplug wrote (it never replaces another file); its directory must exist and be safe (exit 2 otherwise, before anything is held or changed). Default: the file 'synplug setup --metrics-file' recorded";

/** Print a command's warnings (what went wrong after it did its job) on stderr. */
function warn(r: { warnings?: string[] }): void {
  for (const w of r.warnings ?? []) process.stderr.write(`synplug: warning: ${w}\n`);
}

/** Register the guard commands on the program. */
export function guardCommands(program: Command): void {
  configOptions(
    program
      .command('setup')
      .description(
        'build the local hold (for clients on this machine: an address on lo and, --via plug, a qdisc tree on lo, fw filter and nftables marking rule, or, --via queue, an nftables rule to a netfilter queue; --via auto, the default, takes the plug hold where the kernel has it), or with --inbound DEV the inbound hold of DEV (idempotent: completes or corrects a partial setup; --dry-run shows the plan)',
      )
      .option('--force', "delete a root qdisc on the device that is not synplug's (every hold adds its own prio root for the hold only)", false)
      .option('--dry-run', 'print what setup would add, replace or remove, and record, and change nothing')
      .option(
        '--inbound <dev>',
        'set up the inbound hold of this device instead: TCP SYNs arriving on it to --port (and --addr) are held on an IFB synplug creates (clsact + flower/u32 + mirred)',
        collect,
      )
      .option(
        '--port <port>',
        'with --inbound: a TCP destination port to hold SYNs to, 1-65535 (repeat for more; at least one). Give every port (and --addr) at once: setup run again for a hold set up with another set is refused (exit 2, naming what is held); to change it, teardown --inbound DEV, then setup with the whole set',
        collect,
      )
      .option(
        '--via <hold>',
        'which hold: plug (a plug qdisc: sch_plug), queue (a netfilter queue: nfnetlink_queue and NFQUEUE, no qdisc), or auto (plug where the kernel has what it needs, else queue; says which) (default auto)',
      )
      .option('--queue-num <n>', 'with --via queue: the netfilter queue number, 0-65535 (default: as set up, else 4200)')
      .option(
        '--metrics-file <path>',
        "record PATH as the metrics file protect, plug and release write when given no --metrics-file (Prometheus' text format, for node_exporter's textfile collector); PATH ends in .prom and, if it exists, is a metrics file synplug wrote; its directory must exist and be safe (exit 2 otherwise, nothing set up). Kept by later setups that give none",
      )
      .option(
        '--queue-maxlen <n>',
        'with --via queue: how many SYNs the queue holds at most while held (default 65536); more are dropped and retried by their clients',
      )
      .addOption(
        new Option('--classifier <kind>', 'with --inbound: flower or u32 (default: flower where the kernel has it)')
          .choices(['flower', 'u32', 'auto'])
          .hideHelp(),
      ),
    { setup: true, inbound: true },
  )
    .addHelpText(
      'after',
      `${exitCodesHelp('setup')}\n\nOn any failure, everything this call added is removed again.\nThe local hold and any number of inbound holds can be set up together; protect, plug, release, status, check and teardown act on all of them.`,
    )
    .action(
      run(
        async (
          f: ConfigFlags & {
            force: boolean;
            inbound?: string | string[];
            port?: string[];
            classifier?: 'flower' | 'u32' | 'auto';
            via?: string;
            queueNum?: string;
            queueMaxlen?: string;
            dryRun?: boolean;
            metricsFile?: string;
          },
        ) => {
          const guard = await loadGuard();
          const opts = setupOptions({ ...f, inbound: oneInbound(f.inbound) });
          if (f.dryRun) {
            const p = await guard.planSetup(opts);
            return out(f.json, p, formatSetupPlan(p));
          }
          const r = await guard.setup(opts);
          out(f.json, r, formatSetup(r));
        },
      ),
    );

  configOptions(
    selectorOptions(
      program
        .command('check')
        .description(
          'verify every hold set up (the local hold on lo, each inbound hold), or the one --inbound DEV / --local names; exit 0 complete, 1 nothing set up, 12 partly or differently set up (2: bad arguments). Also prints net.ipv4.tcp_migrate_req of the namespace and what it means for the listeners of the hold (--json: "sysctl")',
        ),
      'verify',
    ),
    { setup: true },
  )
    .addHelpText('after', exitCodesHelp('check'))
    .action(
      run(async (f: ConfigFlags & { inbound?: string | string[]; local?: boolean; hold?: string }) => {
        const guard = await loadGuard();
        const sel = holdSelector(f, 'check');
        const r = await guard.check({ ...config({ ...f, inbound: undefined } as ConfigFlags), ...sel });
        out(f.json, r, `${formatCheck(r)}\n${formatMigrateReq(r.sysctl)}`);
        return r.state === 'ok' ? EXIT.OK : r.state === 'absent' ? EXIT.FAILURE : EXIT.CHECK_PARTIAL;
      }),
    );

  configOptions(
    program
      .command('plug')
      .description('hold new connections (buffer the plug) until "synplug release" or --max-hold')
      .option(
        '--max-hold <duration>',
        'release after this long, for every hold: a watchdog (a process of its own, left running when plug exits) drops this plug at the deadline and releases unless another live holder (a running protect) still holds; the local hold also stops marking new SYNs then in the kernel. E.g. 500ms, 10s, 1.5s, 2m, 1h (as the ms package reads it; bare: seconds), 10ms to 24h',
        '10s',
      )
      .option('--metrics-file <path>', `${METRICS_FILE_HELP} (a plug counts no reload: its release does; a failed plug counts as failed)`),
  )
    .addHelpText('after', exitCodesHelp('plug'))
    .action(
      run(async (f: ConfigFlags & { maxHold: string; metricsFile?: string }) => {
        const guard = await loadGuard();
        const maxHoldMs = parseDuration(f.maxHold, '--max-hold');
        const r = await guard.plug({ ...config(f), maxHoldMs, ...(f.metricsFile !== undefined && { metricsFile: f.metricsFile }) });
        warn(r);
        out(f.json, r, formatPlug(r, f.maxHold));
      }),
    );

  configOptions(
    program
      .command('release')
      .description('release the plug now, breaking every live lease (running protects, manual plugs); with --orphaned, only a plug that nobody holds any more')
      .option(
        '--orphaned',
        "leave live leases alone: release only a plug that no running protect (or manual plug before its deadline) holds, e.g. one a crash left behind. For systemd's ExecStopPost=, which runs between the stop and the start of 'synplug protect -- systemctl restart UNIT': a plain release there ends the hold as the gap begins",
        false,
      )
      .option('--metrics-file <path>', `${METRICS_FILE_HELP} (a release that ends a manual plug's hold counts it as a reload)`),
  )
    .addHelpText(
      'after',
      `${exitCodesHelp('release')}\n\nWith --json: "released" (false only with --orphaned while live leases hold the plug), "brokeLeases" (the live leases a plain release broke) and "brokeManualPlugs" (of those, the manual plugs': their hold ended, as meant), "orphaned" and "liveLeases" (with --orphaned: the live leases left holding).`,
    )
    .action(
      run(async (f: ConfigFlags & { orphaned: boolean; metricsFile?: string }) => {
        const guard = await loadGuard();
        const r = await guard.release({
          ...config(f),
          ...(f.orphaned && { orphaned: true }),
          ...(f.metricsFile !== undefined && { metricsFile: f.metricsFile }),
        });
        warn(r);
        out(f.json, r, formatRelease(r));
      }),
    );

  configOptions(
    program
      .command('protect')
      .description('plug, run COMMAND (no shell), release as soon as it exits; exit with its status')
      .usage('[options] -- COMMAND [ARGS...]')
      .argument(
        '[command...]',
        "the reload command and its arguments. Everything from the first argument that is not one of protect's options is the command's, as for sudo, timeout and nice: in 'synplug protect --max-hold 5s nginx -s reload --max-hold 1', the second --max-hold is nginx's. '--' before the command is optional",
      )
      .option(
        '--max-hold <duration>',
        'release at this deadline even if the command still runs: e.g. 500ms, 10s, 1.5s, 2m, 1h (as the ms package reads it; bare: seconds), 10ms to 24h',
        '10s',
      )
      .option(
        '--wait-listen <[addr:]port>',
        "release only once the server listens anew on this port: a NEW listening TCP socket, or (a server that keeps its socket, e.g. HAProxy -W USR2, nginx -s reload) the old one held by a new process; and once no socket of before the reload that only old processes hold is left (one the reload closes, e.g. HAProxy -sf, nginx changing its reuseport worker count: a SYN released into it would be reset); bounded by --max-hold. An address that is not one of this namespace's is refused (exit 2, nothing held). A notice on stderr says when no hold holds that port or address, nothing listens there before the reload, or the sockets' holders cannot be seen. Holds until --max-hold for a server that reloads inside one process keeping its socket (leave --wait-listen out there), and when another server that is not reloaded listens on the same port",
      )
      .option('--user <name>', 'run the command, and the --check command, as this user')
      .option(
        '--check <command line>',
        "phase one: run this check first (e.g. 'haproxy -c -f /etc/haproxy/haproxy.cfg'; one string split into words as a shell quotes them, run without a shell, as --user if given, after --setup's set-up); its output goes to stderr; if it fails, nothing is held and COMMAND is not run (exit 10)",
      )
      .option(
        '--check-timeout <duration>',
        "with --check: kill the check's process group and fail (exit 10, nothing held, COMMAND not run) if it runs longer than this; protect waits for the check to exit, not for a background child it leaves holding its output",
        '60s',
      )
      .option('--setup', 'set up first when synplug is not set up', false)
      .option('--metrics-file <path>', `${METRICS_FILE_HELP} (this reload is added to the totals)`)
      .passThroughOptions(),
  )
    .addHelpText(
      'after',
      `${exitCodesHelp('protect')}\n\nAfterwards, stderr (or --json on stdout, its "report") tells how long the hold lasted, the SYNs held, and what the reload still lost: SYNs dropped in the hold, refused (RST to a SYN) or reset connections of what is held, and drops by the listeners, counted until at most 1 s after the release; the text ends with one verdict line (lossless: 0 refused, 0 reset, 0 dropped).`,
    )
    .action(
      run(
        async (
          command: string[],
          f: ConfigFlags & { maxHold: string; waitListen?: string; user?: string; check?: string; checkTimeout: string; setup: boolean; metricsFile?: string },
          cmd: Command,
        ) => {
          const guard = await loadGuard();
          if (command.length === 0) throw new UsageError('no command given: use synplug protect [options] -- COMMAND [ARGS...]');
          if (command[0] === '') throw new UsageError('protect: the command after -- is empty (an empty string is not a command to run)');
          const maxHoldMs = parseDuration(f.maxHold, '--max-hold');
          const waitListen = f.waitListen !== undefined ? parseListen(f.waitListen) : undefined;
          const check = f.check !== undefined ? await parseCheck(f.check) : undefined;
          const checkTimeoutMs = parseDuration(f.checkTimeout, '--check-timeout', 100, 'a check command needs time to start and end');
          if (f.check === undefined && cmd.getOptionValueSource('checkTimeout') === 'cli')
            throw new UsageError('--check-timeout bounds the --check command: give --check too');
          const r = await guard.protect({
            check,
            checkTimeoutMs,
            onCheckOutput: (chunk) => process.stderr.write(chunk),
            ...config(f),
            command,
            maxHoldMs,
            waitListen,
            user: f.user,
            setup: f.setup,
            ...(f.metricsFile !== undefined && { metricsFile: f.metricsFile }),
            onNotice: (line) => process.stderr.write(`synplug: ${line}\n`),
          });
          warn(r);
          if (f.json) process.stdout.write(JSON.stringify(r) + '\n');
          else process.stderr.write(formatProtect(r) + '\n');
          return r.exitCode;
        },
      ),
    );

  configOptions(
    selectorOptions(
      program
        .command('status')
        .description(
          'every hold set up, or the one --inbound DEV / --local names: its state and pieces, its qdiscs and filters with counters (the local hold: also the marking rule), packets held now, passed and dropped; the recorded hold state (hold: HOLDING or released, from plug.json) and leases; net.ipv4.tcp_migrate_req of the namespace and what it means for the listeners of the hold (--json: "sysctl")',
        ),
      'show',
    ),
  )
    .addHelpText('after', exitCodesHelp('status'))
    .action(
      run(async (f: ConfigFlags & { inbound?: string | string[]; local?: boolean; hold?: string }) => {
        const guard = await loadGuard();
        const sel = holdSelector(f, 'status');
        const r = await guard.status({ ...config({ ...f, inbound: undefined } as ConfigFlags), ...sel });
        const last = guard.lastReload(stateDirOf(f.stateDir) ?? DEFAULTS.stateDir);
        const holder = guard.lastHolderFailure(stateDirOf(f.stateDir) ?? DEFAULTS.stateDir);
        const holderLine = formatHolderFailure(holder);
        out(
          f.json,
          { ...r, ...last, ...holder },
          `${formatStatus(r)}\n${formatMigrateReq(r.sysctl)}\n${formatLastReload(last)}${holderLine === undefined ? '' : `\n${holderLine}`}`,
        );
      }),
    );

  configOptions(
    program
      .command('teardown')
      .description('release, then remove exactly what setup added, for every hold (qdisc tree, filter, nftables table, address; IFB, SYN filters, clsact)')
      .option('--inbound <dev>', 'remove only the inbound hold of this device', collect)
      .option('--local', 'remove only the local hold (its id: local, the plug hold on --dev, lo by default; queue, the queue hold)')
      .option('--hold <id>', 'remove only the hold of this id (as check lists it: local, inbound:DEV, queue, queue:DEV)'),
  )
    .addHelpText('after', exitCodesHelp('teardown'))
    .action(
      run(async (f: ConfigFlags & { inbound?: string | string[]; local?: boolean; hold?: string }) => {
        const guard = await loadGuard();
        const inbound = oneInbound(f.inbound);
        if (inbound === '') throw new UsageError('--inbound is empty: give a device name');
        if (inbound !== undefined) refuseLocalFlags(f, 'teardown --inbound DEV removes the inbound hold of DEV');
        const r = await guard.teardown({
          ...config({ ...f, inbound: undefined } as ConfigFlags),
          ...(inbound !== undefined && { inbound }),
          ...(f.local && { local: true }),
          ...(f.hold !== undefined && { hold: f.hold }),
        });
        out(f.json, r, formatTeardown(r));
      }),
    );
}
