/**
 * What every command's action shares: running it and turning its outcome
 * into output and an exit code, and the common options. The commands
 * (guard-commands.ts, show-commands.ts) and the program (main.ts) import it;
 * it imports neither, so there is no cycle.
 *
 * @module
 */
import { Option, type Command } from 'commander';
import { SynplugError, UsageError, NetlinkError } from '../netlink/errors.js';
import { EXIT, exitCodeOf } from './exit-codes.js';

/** Output options every command shares. */
export interface OutputOptions {
  json?: boolean;
}

/**
 * Run an action and turn its outcome into output and an exit code.
 * Errors: `synplug: <sentence>` on stderr; with --json also `{"error": ...}` on stdout.
 */
export function run<A extends unknown[]>(fn: (...args: A) => Promise<number> | Promise<void>): (...args: A) => Promise<void> {
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
    process.stdout.write(JSON.stringify({ ...body, ...(e instanceof SynplugError && { category: e.category }), ...jsonDetailsOf(e), exitCode: code }) + '\n');
  }
  return code;
}

/**
 * The fields an error adds to its JSON report, from its own `jsonDetails()`
 * (protect's failed --check: `check`, with its status, time and output).
 * Duck-typed, so that the guard is not loaded for every command.
 */
function jsonDetailsOf(e: unknown): Record<string, unknown> {
  const f = e instanceof SynplugError ? (e as { jsonDetails?: unknown }).jsonDetails : undefined;
  return typeof f === 'function' ? (f.call(e) as Record<string, unknown>) : {};
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
