/**
 * The technique's commands: setup, check, plug, release, protect, status, teardown.
 *
 * @module
 */
import { type Command, Option } from 'commander';
import { UsageError } from '../netlink/errors.js';
import { DEFAULTS, parseDuration, parseUint, type GuardConfig } from '../guard/config.js';
import { defaultNetns, netnsPath } from '../netlink/netns.js';
import { statSync } from 'node:fs';
import type * as GuardModule from '../guard/index.js';
import type * as GuardSysctl from '../guard/sysctl.js';
import { EXIT, exitCodesHelp } from './exit-codes.js';
import { jsonOption, run } from './run.js';
import { formatCheck, formatMigrateReq, formatPlug, formatProtect, formatRelease, formatSetup, formatStatus, formatTeardown } from './format-guard.js';
import { isIP } from 'node:net';

/** The guard is loaded when a command runs, not at start-up: `--help` and `show` stay fast. */
const loadGuard = (): Promise<typeof GuardModule> => import('../guard/index.js');

interface ConfigFlags {
  dev?: string;
  addr?: string;
  mark?: string;
  limit?: string;
  table?: string;
  stateDir?: string;
  json?: boolean;
}

function configOptions(cmd: Command, which: { setup?: boolean } = {}): Command {
  cmd.addOption(new Option('--dev <name>', 'device the qdisc tree sits on (default: as set up, else lo)'));
  cmd.addOption(new Option('--addr <address>', "the proxy's address, IPv4 or IPv6 (default: as set up, else 169.254.255.254)"));
  cmd.addOption(new Option('--mark <n>', 'firewall mark for held SYNs, 1-4294967295 (default: as set up, else 1)'));
  if (which.setup) {
    cmd.addOption(new Option('--limit <bytes>', 'plug limit in bytes; more is dropped (default 1048576)'));
  }
  cmd.addOption(new Option('--table <name>', 'nftables table owned by synplug (default synplug)').hideHelp());
  cmd.addOption(
    new Option(
      '--state-dir <dir>',
      'state directory: a directory of this user that nobody else can write, created mode 0700 when missing (default /run/synplug, env SYNPLUG_STATE_DIR)',
    ),
  );
  cmd.addOption(jsonOption());
  return cmd;
}

/**
 * The default state directory of the namespace `--netns` names: one per
 * namespace, keyed by the namespace file's inode (the same for its name
 * under /run/netns and any /proc/PID/ns/net of it), so that acting on a
 * container's namespace never touches the host's records.
 * @returns `/run/synplug/netns/<inode>`, or undefined without `--netns`
 */
export function netnsStateDir(): string | undefined {
  const ns = defaultNetns();
  if (ns === undefined) return undefined;
  return `${DEFAULTS.stateDir}/netns/${statSync(netnsPath(ns)).ino}`;
}

/**
 * The state directory: --state-dir, else SYNPLUG_STATE_DIR, else (with
 * --netns) that namespace's own, else the default.
 * @throws {UsageError} an empty --state-dir, or SYNPLUG_STATE_DIR set but empty (named)
 */
export function stateDirOf(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (flag !== undefined) {
    if (flag === '') throw new UsageError('--state-dir is empty: give a directory');
    return flag;
  }
  const v = env.SYNPLUG_STATE_DIR;
  if (v === undefined) return netnsStateDir();
  if (v === '')
    throw new UsageError('the environment variable SYNPLUG_STATE_DIR is set but empty: unset it (for the default /run/synplug) or give a directory');
  return v;
}

function config(f: ConfigFlags): Partial<GuardConfig> {
  return {
    dev: f.dev,
    addr: f.addr,
    mark: f.mark !== undefined ? parseUint(f.mark, '--mark') : undefined,
    limit: f.limit !== undefined ? parseUint(f.limit, '--limit') : undefined,
    table: f.table,
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

/** net.ipv4.tcp_migrate_req in the --netns namespace and what it means for the listeners of `addr` (check and status show it; src/guard/sysctl.ts). */
async function migrateReq(addr: string): Promise<GuardSysctl.MigrateReqReport> {
  const { migrateReqReport } = await import('../guard/sysctl.js');
  return migrateReqReport({ addr });
}

/** Register the guard commands on the program. */
export function guardCommands(program: Command): void {
  configOptions(
    program
      .command('setup')
      .description('build the qdisc tree, fw filter, nftables marking rule and address (idempotent: completes or corrects a partial setup)')
      .option('--force', "replace a root qdisc on the device that is not synplug's", false),
    { setup: true },
  )
    .addHelpText('after', `${exitCodesHelp('setup')}\n\nOn any failure, everything this call added is removed again.`)
    .action(
      run(async (f: ConfigFlags & { force: boolean }) => {
        const guard = await loadGuard();
        const r = await guard.setup({ ...config(f), force: f.force });
        out(f.json, r, formatSetup(r));
      }),
    );

  configOptions(program.command('check').description('verify the setup; exit 0 complete, 1 nothing set up, 2 partly or differently set up'), { setup: true })
    .addHelpText('after', exitCodesHelp('check'))
    .action(
      run(async (f: ConfigFlags) => {
        const guard = await loadGuard();
        const r = await guard.check(config(f));
        const sysctl = await migrateReq(r.addr);
        out(f.json, { ...r, sysctl }, `${formatCheck(r)}\n${formatMigrateReq(sysctl)}`);
        return r.state === 'ok' ? EXIT.OK : r.state === 'absent' ? EXIT.FAILURE : EXIT.USAGE;
      }),
    );

  configOptions(
    program
      .command('plug')
      .description('hold new connections (buffer the plug) until "synplug release" or --max-hold')
      .option('--max-hold <duration>', 'stop holding new connections after this long (kernel-enforced), e.g. 10s', '10s'),
  )
    .addHelpText('after', exitCodesHelp('plug'))
    .action(
      run(async (f: ConfigFlags & { maxHold: string }) => {
        const guard = await loadGuard();
        const maxHoldMs = parseDuration(f.maxHold, '--max-hold');
        const r = await guard.plug({ ...config(f), maxHoldMs });
        out(f.json, r, formatPlug(r, f.maxHold));
      }),
    );

  configOptions(program.command('release').description('release the plug (always safe: the kernel cannot tell whether it is plugged)'))
    .addHelpText('after', exitCodesHelp('release'))
    .action(
      run(async (f: ConfigFlags) => {
        const guard = await loadGuard();
        const r = await guard.release(config(f));
        out(f.json, r, formatRelease(r));
      }),
    );

  configOptions(
    program
      .command('protect')
      .description('plug, run COMMAND (no shell), release as soon as it exits; exit with its status')
      .usage('[options] -- COMMAND [ARGS...]')
      .argument('[command...]', 'the reload command and its arguments')
      .option('--max-hold <duration>', 'release at this deadline even if the command still runs', '10s')
      .option('--wait-listen <[addr:]port>', 'release only once a NEW listening TCP socket exists on this port (bounded by --max-hold)')
      .option('--user <name>', 'run the command as this user')
      .option(
        '--check <command line>',
        "phase one: run this check first (e.g. 'haproxy -c -f /etc/haproxy/haproxy.cfg'; one string split into words as a shell quotes them, run without a shell); if it fails, nothing is held and COMMAND is not run (exit 10)",
      )
      .option('--setup', 'set up first when synplug is not set up', false)
      .passThroughOptions(),
  )
    .addHelpText(
      'after',
      `${exitCodesHelp('protect')}\n\nAfterwards, stderr (or --json on stdout) tells how long the plug held, the packets held and released, drops, and synplug's own time inside the window.`,
    )
    .action(
      run(async (command: string[], f: ConfigFlags & { maxHold: string; waitListen?: string; user?: string; check?: string; setup: boolean }) => {
        const guard = await loadGuard();
        if (command.length === 0) throw new UsageError('no command given: use synplug protect [options] -- COMMAND [ARGS...]');
        if (command[0] === '') throw new UsageError('protect: the command after -- is empty (an empty string is not a command to run)');
        const maxHoldMs = parseDuration(f.maxHold, '--max-hold');
        const waitListen = f.waitListen !== undefined ? parseListen(f.waitListen) : undefined;
        const check = f.check !== undefined ? await parseCheck(f.check) : undefined;
        const r = await guard.protect({
          check,
          ...config(f),
          command,
          maxHoldMs,
          waitListen,
          user: f.user,
          setup: f.setup,
          onNotice: (line) => process.stderr.write(`synplug: ${line}\n`),
        });
        if (f.json) process.stdout.write(JSON.stringify(r) + '\n');
        else process.stderr.write(formatProtect(r) + '\n');
        return r.exitCode;
      }),
    );

  configOptions(program.command('status').description('the qdisc tree, the marking rule, the recorded plug state, packets held now, passed and dropped'))
    .addHelpText('after', exitCodesHelp('status'))
    .action(
      run(async (f: ConfigFlags) => {
        const guard = await loadGuard();
        const r = await guard.status(config(f));
        const sysctl = await migrateReq(r.addr);
        out(f.json, { ...r, sysctl }, `${formatStatus(r)}\n${formatMigrateReq(sysctl)}`);
      }),
    );

  configOptions(program.command('teardown').description('release, then remove exactly what setup added (qdisc tree, filter, nftables table, address)'))
    .addHelpText('after', exitCodesHelp('teardown'))
    .action(
      run(async (f: ConfigFlags) => {
        const guard = await loadGuard();
        const r = await guard.teardown(config(f));
        out(f.json, r, formatTeardown(r));
      }),
    );
}
