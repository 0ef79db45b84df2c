/**
 * The `synplug` command line: argv -> command; output as text or `--json`;
 * exit codes from the errors' categories (run.ts, exit-codes.ts).
 *
 * @module
 */
import { Command, CommanderError, Option } from 'commander';
import { readFileSync } from 'node:fs';
import { setDefaultWarningHandler } from '../netlink/connection.js';
import { checkNetns, NETNS_ENV, netnsSpecOf, setDefaultNetns } from '../netlink/netns.js';
import { checkNetnsPath } from '../guard/call-netns.js';
import { UsageError } from '../netlink/errors.js';
import { EXIT, allExitCodesHelp, exitCodesHelp, exitCodesTopic } from './exit-codes.js';
import { guardCommands } from './guard-commands.js';
import { showCommands } from './show-commands.js';
import { reportError } from './run.js';

export { run, reportError, jsonOption, oneOf, type OutputOptions } from './run.js';
import { demoCommand } from './demo-command.js';
import { doctorCommand } from './doctor-command.js';
import { historyCommand } from './history-command.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** Build the program (exported for tests). */
export function buildProgram(): Command {
  const program = new Command('synplug')
    .description(
      "Zero-downtime proxy reloads: hold the SYNs of new connections in the kernel (a tc plug qdisc, or a netfilter queue where the kernel has no sch_plug) while the proxy reloads.\nSpeaks rtnetlink and nftables itself: no tc, ip, nft or iptables binary needed. 'synplug doctor' says which holds this kernel supports.",
    )
    .version(pkg.version, '-V, --version')
    .enablePositionalOptions()
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText(
      'after',
      `${allExitCodesHelp()}\n\nThe reload technique: 'synplug setup' once (at boot), then each reload through protect:\n  synplug protect --check 'haproxy -c -f /etc/haproxy/haproxy.cfg' \\\n      --wait-listen 169.254.255.254:80 -- systemctl reload haproxy\nWhich reloads need it: the README's "When do you need synplug?". See 'synplug <command> --help'.`,
    )
    .exitOverride()
    .configureOutput({
      outputError: (str, write) => write(`synplug: ${str.replace(/^error: /, '')}`),
    });
  guardCommands(program);
  showCommands(program);
  demoCommand(program);
  doctorCommand(program);
  historyCommand(program);
  refuseRepeatedOptions(program);
  netnsOption(program);
  // Our own `help [command]`: commander's built-in one shows the main help, exit 0, for a command that does not exist.
  program.helpCommand(false);
  program
    .command('help')
    .description("display help for a command; 'help exit-codes': every exit code in full")
    .argument('[command]', "the command to describe, or 'exit-codes'")
    .addOption(new Option('--json', 'an unknown command as JSON on stdout too'))
    .addHelpText('after', exitCodesHelp('help'))
    .action((name: string | undefined) => {
      if (name === undefined) program.help();
      if (name === 'exit-codes') {
        process.stdout.write(exitCodesTopic());
        return;
      }
      const sub = program.commands.find((c) => c.name() === name || c.aliases().includes(name!));
      if (!sub) program.error(`error: unknown command '${name}'`, { exitCode: EXIT.USAGE, code: 'commander.unknownCommand' });
      sub!.help();
    });
  return program;
}

/**
 * A single-value option given twice (`--netns a --netns b`, `--max-hold 1s
 * --max-hold 2s`) is a usage error (exit 2) before the command does
 * anything, rather than the last one silently winning: acting on another
 * namespace, device or deadline than the user meant is the risk. Options
 * meant to repeat (`--port`, `--addr`, `--inbound`) have an argument parser
 * that collects them and check their own counts; flags without a value may
 * repeat. Only the command's own arguments count: what follows `--` is
 * protect's command, and so is everything from protect's first operand on.
 */
function refuseRepeatedOptions(program: Command): void {
  program.hook('preAction', (root, action) => {
    const raw = ((root as unknown as { rawArgs?: string[] }).rawArgs ?? []).slice(2);
    const start = raw.indexOf(action.name());
    if (start < 0) return;
    const seen = new Map<string, string[]>();
    // A command that passes its options through (protect) owns everything from its first operand on, as sudo,
    // timeout and nice do: `protect mycmd --max-hold 1 --max-hold 2` gives both to mycmd.
    const passThrough = (action as unknown as { _passThroughOptions?: boolean })._passThroughOptions === true;
    for (let i = start + 1; i < raw.length && raw[i] !== '--'; i++) {
      const t = raw[i];
      if (passThrough && !t.startsWith('-')) break;
      const eq = t.startsWith('--') ? t.indexOf('=') : -1;
      const name = eq > 0 ? t.slice(0, eq) : t;
      const opt = action.options.find((o) => o.long === name || o.short === name);
      if (!opt || !(opt.required || opt.optional)) continue;
      let value: string | undefined;
      if (eq > 0) value = t.slice(eq + 1);
      else if (i + 1 < raw.length && (opt.required || !raw[i + 1].startsWith('-'))) value = raw[++i];
      if (opt.parseArg) continue; // collected on purpose
      const key = opt.long ?? name;
      seen.set(key, [...(seen.get(key) ?? []), value ?? '']);
    }
    for (const [name, values] of seen) {
      if (values.length > 1) {
        throw new UsageError(`${name} given ${values.length} times (${values.map((v) => `'${v}'`).join(', ')}): give it once`);
      }
    }
  });
}

/** Commands that talk to no kernel (decode reads files) or run their own TCP peers in synplug's own namespace (demo). */
const NO_NETNS = new Set(['decode', 'demo', 'help']);

/**
 * `--netns NAME|PATH` on every command that talks to the kernel, like `ip -n`:
 * every netlink socket the command opens (rtnetlink, nftables, sock_diag,
 * the watchdog's) is made in that namespace; the process itself, and the
 * command `protect` runs, stay in their own. Checked before the command does
 * anything. The kernel's warnings (extended acks on success) go to stderr.
 */
function netnsOption(program: Command): void {
  for (const sub of program.commands) {
    if (NO_NETNS.has(sub.name())) continue;
    // (docs/cli.md: names and paths, and the state directory of each namespace, /run/synplug/netns/<cookie>)
    sub.addOption(new Option('--netns <name|path>', `act in this netns, like ip -n (env ${NETNS_ENV})`));
  }
  setDefaultWarningHandler((w) => process.stderr.write(`synplug: warning: ${w.message} (${w.requestType})\n`));
  program.hook('preAction', (_root, action) => {
    const flag = (action.opts() as { netns?: string }).netns;
    const fromEnv = flag === undefined && !NO_NETNS.has(action.name()) ? process.env[NETNS_ENV] : undefined;
    const ns = flag ?? fromEnv;
    if (ns === undefined) return;
    const what = flag !== undefined ? '--netns' : `the environment variable ${NETNS_ENV}`;
    if (ns === '')
      throw new UsageError(
        `${what} is ${flag === undefined ? 'set but ' : ''}empty: give a name from /run/netns or a path such as /proc/PID/ns/net${flag === undefined ? ' (or unset it for this namespace)' : ''}`,
      );
    // a message about the environment variable names it
    const named = <T>(f: () => T): T => {
      try {
        return f();
      } catch (e) {
        if (flag === undefined && e instanceof UsageError) throw new UsageError(`${what}: ${e.message}`);
        throw e;
      }
    };
    const spec = named(() => netnsSpecOf(ns, what));
    checkNetnsPath(ns, spec, what); // names `what` itself
    named(() => checkNetns(spec));
    setDefaultNetns(spec);
  });
}

/**
 * Whether the arguments ask for JSON output: `--json` among synplug's own
 * arguments ({@link ownArguments}), not protect's command's.
 * @param argv the arguments after node and the script
 * @param program the parsed program, to find where protect's command begins (without it: up to `--`)
 */
export function wantsJson(argv: readonly string[], program?: Command): boolean {
  return ownArguments(argv, program).includes('--json');
}

/**
 * synplug's own arguments: up to `--`, and for a command that passes its
 * options through (protect), up to its first operand (the command, which
 * owns what follows, as for sudo, timeout and nice).
 */
function ownArguments(argv: readonly string[], program?: Command): readonly string[] {
  const end = argv.indexOf('--');
  const own = end < 0 ? argv : argv.slice(0, end);
  const names = new Set(program?.commands.map((c) => c.name()) ?? []);
  let at = 0;
  while (at < own.length && !names.has(own[at])) at++;
  const sub = program?.commands.find((c) => c.name() === own[at]);
  if (!sub || (sub as unknown as { _passThroughOptions?: boolean })._passThroughOptions !== true) return own;
  for (let i = at + 1; i < own.length; i++) {
    const t = own[i];
    if (!t.startsWith('-')) return own.slice(0, i);
    const opt = sub.options.find((o) => o.long === t || o.short === t);
    if (opt?.required || (opt?.optional && i + 1 < own.length && !own[i + 1].startsWith('-'))) i++;
  }
  return own;
}

/**
 * Options given before the command's name (`synplug --state-dir X status`, as
 * `ip -n NS` is written): each command takes its options itself, so they are
 * moved after its name when that command has them (`synplug status
 * --state-dir X`). The program's own (`--help`, `--version`), an option no
 * command has (commander's "unknown option" then) and no command at all
 * leave the arguments as they are.
 * @param argv the arguments after node and the script
 * @throws {UsageError} an option before the command that this command does not take: says where it goes
 */
export function commandOptionsFirst(argv: readonly string[], program: Command): string[] {
  const named = (t: string) => program.commands.find((c) => c.name() === t || c.aliases().includes(t));
  const optionOf = (c: Command, t: string) => c.options.find((o) => o.long === t || o.short === t);
  const before: string[] = [];
  let at = 0;
  for (; at < argv.length && argv[at].startsWith('-') && argv[at] !== '--'; at++) {
    const name = argv[at].startsWith('--') && argv[at].includes('=') ? argv[at].slice(0, argv[at].indexOf('=')) : argv[at];
    if (program.options.some((o) => o.long === name || o.short === name)) return [...argv];
    const takers = program.commands.map((c) => optionOf(c, name)).filter((o) => o !== undefined);
    if (takers.length === 0) return [...argv];
    before.push(argv[at]);
    if (name === argv[at] && takers.some((o) => o.required || o.optional) && at + 1 < argv.length && !argv[at + 1].startsWith('-')) before.push(argv[++at]);
  }
  const sub = at < argv.length ? named(argv[at]) : undefined;
  if (before.length === 0 || !sub) return [...argv];
  for (const t of before) {
    const name = t.includes('=') ? t.slice(0, t.indexOf('=')) : t;
    if (t.startsWith('-') && !optionOf(sub, name))
      throw new UsageError(
        `${name} was given before the command name, and '${sub.name()}' has no ${name} option: options go after the command ('synplug ${sub.name()} [options]'; see 'synplug ${sub.name()} --help')`,
      );
  }
  return [argv[at], ...before, ...argv.slice(at + 1)];
}

/** Parse argv and run; resolves with the exit code. */
export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  if (argv.length <= 2) {
    process.stderr.write('synplug: no command given; the commands are:\n\n');
    program.outputHelp({ error: true });
    return EXIT.USAGE;
  }
  try {
    argv = [...argv.slice(0, 2), ...commandOptionsFirst(argv.slice(2), program)];
    await program.parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      // help or version asked for: exit 0; help shown because of an error (e.g. no subcommand): a usage error
      if (e.exitCode === 0 && (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help')) return EXIT.OK;
      // commander already wrote its text on stderr (configureOutput); --json gets the error object too
      if (wantsJson(argv.slice(2), program)) {
        const message = e.code === 'commander.help' ? 'no command given' : e.message.replace(/^error: /, '');
        process.stdout.write(JSON.stringify({ error: message, category: 'usage', exitCode: EXIT.USAGE }) + '\n');
      }
      return EXIT.USAGE;
    }
    return reportError(e, wantsJson(argv.slice(2), program));
  }
  return typeof process.exitCode === 'number' ? process.exitCode : EXIT.OK;
}
