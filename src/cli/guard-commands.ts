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
import { signalLatch } from '../guard/errors.js';
import { EXIT, exitCodesHelp, protectExitCode } from './exit-codes.js';
import { jsonOption, run } from './run.js';
import { formatSetupPlan } from './format-plan.js';
import { formatCheck, formatMigrateReq, formatPlug, formatProtect, formatRelease, formatSetup, formatStatus, formatTeardown } from './format-guard.js';
import { formatHolderFailure, formatLastReload, withGivenPlace } from './format-guard.js';
import { isIP } from 'node:net';

/** The guard is loaded when a command runs, not at start-up: `--help` and `show` stay fast. */
const loadGuard = (): Promise<typeof GuardModule> => import('../guard/index.js');

interface ConfigFlags {
  dev?: string;
  /** the global --netns, as given (repeated in the commands a text suggests) */
  netns?: string;
  addr?: string | string[];
  mark?: string;
  limit?: string;
  stateDir?: string;
  json?: boolean;
}

const collect = (v: string, prev: string[] | undefined): string[] => [...(prev ?? []), v];

function configOptions(cmd: Command, which: { setup?: boolean; inbound?: boolean } = {}): Command {
  cmd.addOption(new Option('--dev <name>', "the local plug hold's device (default lo)"));
  if (which.inbound) {
    cmd.addOption(new Option('--addr <address>', 'proxy address; --inbound: held address (repeat)').argParser(collect));
  } else cmd.addOption(new Option('--addr <address>', "the local hold's proxy address"));
  cmd.addOption(new Option('--mark <n>', "the local plug hold's firewall mark (default 1)"));
  if (which.setup) {
    cmd.addOption(new Option('--limit <bytes>', 'plug limit, bytes (default 1048576)'));
  }
  cmd.addOption(new Option('--state-dir <dir>', `state directory (${STATE_DIR_DEFAULT_HELP})`));
  cmd.addOption(jsonOption());
  return cmd;
}

/** What `--state-dir`'s help says of the default (docs/cli.md says the rest: which namespace is home, how it is told). */
export const STATE_DIR_DEFAULT_HELP = 'env SYNPLUG_STATE_DIR';

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
  // `--check -- CMD`: the option took the `--` as its value
  if (text.trim() === '--')
    throw new UsageError("--check took '--' as its command: give the check command right after --check, e.g. --check 'nginx -t' -- COMMAND");
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
  return cmd.option('--inbound <dev>', `${verb} only the inbound hold of this device`, collect).option('--local', `${verb} only the local hold`);
}

/** `--metrics-file` of protect, plug and release: what it does (docs/cli.md: the format, the checks, setup's default). */
const METRICS_FILE_HELP = 'write the reload totals to PATH (.prom)';

/** Print a command's warnings (what went wrong after it did its job) on stderr. */
function warn(r: { warnings?: string[] }): void {
  for (const w of r.warnings ?? []) process.stderr.write(`synplug: warning: ${w}\n`);
}

/** Register the guard commands on the program. */
export function guardCommands(program: Command): void {
  configOptions(
    program
      .command('setup')
      .description('set up the local hold, or with --inbound DEV the inbound hold of DEV (idempotent; all or nothing)')
      .option('--force', "replace a root qdisc not synplug's (plug)")
      .option('--dry-run', 'print the plan; change nothing')
      .option('--inbound <dev>', 'set up the inbound hold of this device', collect)
      .option('--port <port>', 'with --inbound: TCP port to hold (repeat)', collect)
      .option('--via <hold>', 'plug, queue or auto (default auto: plug if supported)')
      .option('--queue-num <n>', 'the queue hold: netfilter queue number (default 4200)')
      .option('--metrics-file <path>', "the default of protect's --metrics-file (.prom)")
      .option('--queue-maxlen <n>', 'the queue hold: most SYNs held (default 65536)')
      .addOption(
        new Option('--classifier <kind>', 'with --inbound: flower or u32 (default: flower where the kernel has it)')
          .choices(['flower', 'u32', 'auto'])
          .hideHelp(),
      ),
    { setup: true, inbound: true },
  )
    .addHelpText('after', exitCodesHelp('setup'))
    .action(
      run(
        async (
          f: ConfigFlags & {
            force?: boolean;
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

  configOptions(selectorOptions(program.command('check').description('verify every hold set up (or the one named), and tcp_migrate_req'), 'verify'), {
    setup: true,
  })
    .addHelpText('after', exitCodesHelp('check'))
    .action(
      run(async (f: ConfigFlags & { inbound?: string | string[]; local?: boolean }) => {
        const guard = await loadGuard();
        const sel = holdSelector(f, 'check');
        const r = await guard.check({ ...config({ ...f, inbound: undefined } as ConfigFlags), ...sel });
        out(f.json, r, withGivenPlace(`${formatCheck(r)}\n${formatMigrateReq(r.sysctl)}`, f));
        return r.state === 'ok' ? EXIT.OK : r.state === 'absent' ? EXIT.FAILURE : EXIT.CHECK_PARTIAL;
      }),
    );

  configOptions(
    program
      .command('plug')
      .description('hold new connections until "synplug release" or --max-hold')
      .addOption(new Option('--max-hold <duration>', 'a watchdog releases by then').default('10s', '10s'))
      .option('--metrics-file <path>', METRICS_FILE_HELP),
  )
    .addHelpText('after', exitCodesHelp('plug'))
    .action(
      run(async (f: ConfigFlags & { maxHold: string; metricsFile?: string }) => {
        const guard = await loadGuard();
        const maxHoldMs = parseDuration(f.maxHold, '--max-hold');
        const r = await guard.plug({ ...config(f), maxHoldMs, ...(f.metricsFile !== undefined && { metricsFile: f.metricsFile }) });
        warn(r);
        out(f.json, r, withGivenPlace(formatPlug(r, f.maxHold), f));
      }),
    );

  configOptions(
    program
      .command('release')
      .description('release now, ending every hold (running protects, manual plugs)')
      .option('--orphaned', 'only a hold nobody holds any more (ExecStopPost=)')
      .option('--metrics-file <path>', METRICS_FILE_HELP),
  )
    .addHelpText('after', exitCodesHelp('release'))
    .action(
      run(async (f: ConfigFlags & { orphaned?: boolean; metricsFile?: string }) => {
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
      .description('hold, run COMMAND (no shell), release when it ends; report what was lost')
      .usage('[options] -- COMMAND [ARGS...]')
      .argument('[command...]', 'the reload command; options after it are its own')
      .addOption(new Option('--max-hold <duration>', 'release by then in any case').default('10s', '10s'))
      .option('--wait-listen <[addr:]port>', 'release once the server listens anew there')
      .option('--user <name>', 'run the command and --check as this user')
      .option('--check <command line>', 'run this check first; on failure exit 10')
      .addOption(new Option('--check-timeout <duration>', 'with --check: its time limit').default('60s', '60s'))
      .option('--setup', 'set up first when not set up')
      .option('--metrics-file <path>', METRICS_FILE_HELP)
      .option('--fail-on-loss', `exit ${EXIT.RELOAD_LOST} on a loss when the command exited 0`)
      .passThroughOptions(),
  )
    .addHelpText('after', exitCodesHelp('protect'))
    .action(
      run(
        async (
          command: string[],
          f: ConfigFlags & {
            maxHold: string;
            waitListen?: string;
            user?: string;
            check?: string;
            checkTimeout: string;
            setup?: boolean;
            metricsFile?: string;
            failOnLoss?: boolean;
          },
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
            setup: f.setup === true,
            ...(f.metricsFile !== undefined && { metricsFile: f.metricsFile }),
            onNotice: (line) => process.stderr.write(`synplug: ${line}\n`),
          });
          warn(r);
          if (f.json) process.stdout.write(JSON.stringify(r) + '\n');
          else process.stderr.write(formatProtect(r) + '\n');
          const code = protectExitCode(r, f.failOnLoss === true);
          if (code !== r.exitCode)
            process.stderr.write(`synplug: exit ${code} (--fail-on-loss): the command exited 0, but the reload lost connections (its report says how)\n`);
          return code;
        },
      ),
    );

  configOptions(selectorOptions(program.command('status').description('each hold set up: its pieces, counters, hold state, leases; last reload'), 'show'))
    .addHelpText('after', exitCodesHelp('status'))
    .action(
      run(async (f: ConfigFlags & { inbound?: string | string[]; local?: boolean }) => {
        const guard = await loadGuard();
        const sel = holdSelector(f, 'status');
        const r = await guard.status({ ...config({ ...f, inbound: undefined } as ConfigFlags), ...sel });
        const last = guard.lastReload(stateDirOf(f.stateDir) ?? DEFAULTS.stateDir);
        const holder = guard.lastHolderFailure(stateDirOf(f.stateDir) ?? DEFAULTS.stateDir);
        const holderLine = formatHolderFailure(holder);
        out(
          f.json,
          { ...r, ...last, ...holder },
          withGivenPlace(`${formatStatus(r)}\n${formatMigrateReq(r.sysctl)}\n${formatLastReload(last)}${holderLine === undefined ? '' : `\n${holderLine}`}`, f),
        );
      }),
    );

  configOptions(
    program
      .command('teardown')
      .description('release, then remove exactly what setup added (every hold, or the one named)')
      .option('--inbound <dev>', 'only the inbound hold of this device', collect)
      .option('--local', 'only the local hold')
      .option('--hold <id>', 'only the hold of this id (local, queue, inbound:DEV...)'),
  )
    .addHelpText('after', exitCodesHelp('teardown'))
    .action(
      run(async (f: ConfigFlags & { inbound?: string | string[]; local?: boolean; hold?: string }) => {
        const guard = await loadGuard();
        const inbound = oneInbound(f.inbound);
        if (inbound === '') throw new UsageError('--inbound is empty: give a device name');
        if (inbound !== undefined) refuseLocalFlags(f, 'teardown --inbound DEV removes the inbound hold of DEV');
        // Signals caught until what was removed is said (teardown itself finishes what it started, or stops before
        // any change with an InterruptedError): one after its last change no longer ends the process unsaid (exit 130).
        const latch = signalLatch();
        try {
          const r = await guard.teardown({
            ...config({ ...f, inbound: undefined } as ConfigFlags),
            ...(inbound !== undefined && { inbound }),
            ...(f.local && { local: true }),
            ...(f.hold !== undefined && { hold: f.hold }),
          });
          out(f.json, r, withGivenPlace(formatTeardown(r), f));
        } finally {
          latch.end();
        }
      }),
    );
}
