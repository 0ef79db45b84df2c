/**
 * The `synplug` command line: argv -> command; output as text or `--json`;
 * exit codes from the errors' categories ({@link exitCodeOf}).
 *
 * @module
 */
import { Command, CommanderError, Option } from 'commander';
import { readFileSync } from 'node:fs';
import { SynplugError, UsageError, NetlinkError } from '../netlink/errors.js';
import { EXIT, EXIT_HELP, exitCodeOf, exitCodesHelp } from './exit-codes.js';
import { guardCommands } from './guard-commands.js';
import { showCommands } from './show-commands.js';
import { demoCommand } from './demo-command.js';

/** Output options every command shares. */
export interface OutputOptions {
  json?: boolean;
}

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/**
 * Run an action and turn its outcome into output and an exit code.
 * Errors: `synplug: <sentence>` on stderr; with --json also `{"error": ...}` on stdout.
 */
export function run<A extends unknown[]>(fn: (...args: A) => Promise<number | void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    const cmd = args[args.length - 1] as Command;
    const json = Boolean(cmd?.optsWithGlobals?.().json);
    try {
      const code = await fn(...args);
      process.exitCode = code ?? EXIT.OK;
    } catch (e) {
      process.exitCode = reportError(e, json);
    }
  };
}

/** Print an error as the CLI does and return its exit code (from its category, {@link exitCodeOf}). */
export function reportError(e: unknown, json: boolean): number {
  const code = exitCodeOf(e);
  let message: string;
  if (e instanceof NetlinkError && e.category === 'permission') {
    message = /CAP_NET_ADMIN|root/.test(e.message) ? e.message : `${e.message}: not permitted; this needs CAP_NET_ADMIN (run as root)`;
  } else if (e instanceof SynplugError) {
    message = e.message;
  } else {
    message = `internal error: ${(e as Error)?.stack ?? String(e)}`;
  }
  process.stderr.write(`synplug: ${message}\n`);
  if (json) {
    const body = e instanceof NetlinkError ? e.toJSON() : { error: message };
    process.stdout.write(JSON.stringify({ ...body, ...(e instanceof SynplugError && { category: e.category }), exit_code: code }) + '\n');
  }
  return code;
}

/** Build the program (exported for tests). */
export function buildProgram(): Command {
  const program = new Command('synplug')
    .description('Zero-downtime proxy reloads: hold new SYNs in a tc plug qdisc while the proxy reloads.\nSpeaks rtnetlink and nftables itself: no tc, ip, nft or iptables binary needed.')
    .version(pkg.version, '-V, --version')
    .enablePositionalOptions()
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', `\n${EXIT_HELP}\n\nThe reload technique: 'synplug setup' once (at boot), then\n  synplug protect -- systemctl reload haproxy\nSee 'synplug <command> --help'.`)
    .exitOverride()
    .configureOutput({
      outputError: (str, write) => write(`synplug: ${str.replace(/^error: /, '')}`),
    });
  guardCommands(program);
  showCommands(program);
  demoCommand(program);
  // Our own `help [command]`: commander's built-in one shows the main help, exit 0, for a command that does not exist.
  program.helpCommand(false);
  program.command('help')
    .description('display help for a command')
    .argument('[command]', 'the command to describe')
    .addOption(new Option('--json', 'report an unknown command as a JSON object on stdout (the help itself is text)'))
    .addHelpText('after', exitCodesHelp('help'))
    .action((name: string | undefined) => {
      if (name === undefined) program.help();
      const sub = program.commands.find((c) => c.name() === name || c.aliases().includes(name!));
      if (!sub) program.error(`error: unknown command '${name}'`, { exitCode: EXIT.USAGE, code: 'commander.unknownCommand' });
      sub!.help();
    });
  return program;
}

/**
 * Whether the arguments ask for JSON output: `--json` before any `--` (what
 * follows `--` belongs to protect's command).
 */
export function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).includes('--json');
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
    await program.parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      // help or version asked for: exit 0; help shown because of an error (e.g. no subcommand): a usage error
      if (e.exitCode === 0 && (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help')) return EXIT.OK;
      // commander already wrote its text on stderr (configureOutput); --json gets the error object too
      if (wantsJson(argv.slice(2))) {
        const message = e.code === 'commander.help' ? 'no command given' : e.message.replace(/^error: /, '');
        process.stdout.write(JSON.stringify({ error: message, category: 'usage', exit_code: EXIT.USAGE }) + '\n');
      }
      return EXIT.USAGE;
    }
    return reportError(e, wantsJson(argv.slice(2)));
  }
  return typeof process.exitCode === 'number' ? process.exitCode : EXIT.OK;
}

/** Common --json option. */
export function jsonOption(): Option {
  return new Option('--json', 'print JSON on stdout instead of text');
}

/** Throw a UsageError for a value that is not one of `allowed`. */
export function oneOf(value: string, allowed: readonly string[], what: string): string {
  if (!allowed.includes(value)) throw new UsageError(`unknown ${what} '${value}': expected one of ${allowed.join(', ')}`);
  return value;
}
