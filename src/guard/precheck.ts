/**
 * `protect --check CMD`: phase one of a reload, before anything is held.
 *
 * A proxy's reload is a swap: a phase that checks everything and can still
 * be called off (the new configuration: `haproxy -c -f cfg`, `nginx -t`),
 * then a phase that commits. {@link runPrecheck} is the first phase: it runs
 * the check command to completion *before* the plug is buffered and before
 * the reload command is forked. When it fails, protect plugs nothing and
 * never runs the reload command ({@link PrecheckFailedError}, category
 * `check-failed`).
 *
 * The command runs without a shell, like the reload command: an argv. The
 * CLI takes it as ONE option value split into words by
 * {@link splitCommandWords} (quotes as a POSIX shell reads them, no
 * expansion), so that a systemd `ExecReload=` line or a terminal reads as
 * what runs: `--check 'haproxy -c -f /etc/haproxy/haproxy.cfg'`.
 *
 * Its stdout and stderr are both handed, as they arrive, to the caller's
 * `output` writer (the CLI passes one that writes to its stderr, so that
 * synplug's stdout stays for `--json`; this library prints nothing itself),
 * and the last few KiB are kept for the error.
 *
 * It is bounded: after `timeoutMs` (protect's `--check-timeout`, default
 * {@link PRECHECK_TIMEOUT_MS}) its process group (it runs in a session of
 * its own) is killed and the check fails. It is over when it exits: output
 * still arriving afterwards (a background child that keeps the pipes open)
 * is read for at most {@link PRECHECK_DRAIN_MS}, then no longer waited for.
 *
 * @module
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { SynplugError, UsageError } from '../netlink/errors.js';
import { resolveCommand, type RunAsUser } from './command.js';
import { CommandError, InterruptedError } from './errors.js';

/** How much of the check's output (stdout and stderr together) a failure keeps, bytes. */
export const PRECHECK_OUTPUT_TAIL = 4096;

/** How long the check may run by default (protect's `--check-timeout`), ms. */
export const PRECHECK_TIMEOUT_MS = 60_000;

/** After the check exits, how long output still arriving is read (a background child may hold the pipes open), ms. */
export const PRECHECK_DRAIN_MS = 250;

/** What the check did (protect's `check` field; times in ms). */
export interface PrecheckResult {
  /** the check command and its arguments */
  command: string[];
  /** its exit status (0: passed; 128 + N when killed by signal N) */
  exitCode: number;
  /** the signal that killed it, if one did */
  signal: string | null;
  /** from its spawn to its exit as seen by synplug, ms (before the plug window: not part of `heldMs`) */
  durationMs: number;
  /** it ran longer than its timeout and its process group was killed (only then present) */
  timedOut?: true;
  /** the timeout it ran under, ms */
  timeoutMs?: number;
}

/**
 * One word as a POSIX shell would need it written: unchanged when it holds
 * only characters no shell treats specially, else in single quotes (a `'`
 * inside as `'\''`); the empty word is `''`.
 * @param word any argument
 * @returns the word, quoted if it needs it
 */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replaceAll("'", "'\\''")}'`;
}

/**
 * An argv as one command line a POSIX shell reads back as the same words ({@link shellQuote} each).
 * @param argv the command and its arguments
 * @returns the words, quoted where needed, separated by spaces
 */
export function shellQuoteWords(argv: readonly string[]): string {
  return argv.map(shellQuote).join(' ');
}

/**
 * The check command failed (a non-zero status or a signal): nothing was
 * held and the reload command was not run. Category `check-failed`.
 */
export class PrecheckFailedError extends SynplugError {
  /** what the check did */
  readonly check: PrecheckResult;
  /** the last {@link PRECHECK_OUTPUT_TAIL} bytes of its output (stdout and stderr as they arrived) */
  readonly output: string;
  /** how many bytes of output it wrote in all (stdout and stderr, as read) */
  readonly outputBytes: number;
  /**
   * @param check what the check did
   * @param output the tail of its output
   * @param outputBytes the size of its whole output (default: the tail's)
   */
  constructor(check: PrecheckResult, output: string, outputBytes = Buffer.byteLength(output)) {
    const how = check.timedOut
      ? `did not finish within ${check.timeoutMs} ms (--check-timeout): its process group was killed`
      : check.signal
        ? `was killed by ${check.signal}`
        : `exited ${check.exitCode}`;
    super(`the --check command ${how} (${shellQuoteWords(check.command)}): nothing was held and the reload command was not run`, 'check-failed');
    this.name = 'PrecheckFailedError';
    this.check = check;
    this.output = output;
    this.outputBytes = outputBytes;
  }

  /**
   * The fields a JSON error report adds (`synplug protect --json`): the
   * check as a passing check reports it, with its output's size and tail.
   * @returns `{ check: { command, exitCode, signal, durationMs, timedOut?, timeoutMs?, outputBytes, outputTail } }`
   */
  jsonDetails(): { check: PrecheckResult & { outputBytes: number; outputTail: string } } {
    return { check: { ...this.check, outputBytes: this.outputBytes, outputTail: this.output } };
  }
}

/** Characters a shell would treat as syntax: refused unquoted, because no shell runs. */
const SHELL_SYNTAX = new Set(['|', '&', ';', '<', '>', '(', ')', '$', '`']);

/** Characters a shell would expand as a pattern (pathname expansion): refused unquoted. */
const GLOB = new Set(['*', '?', '[']);

/** A shell variable assignment at the start of a word (`NAME=`). */
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Split one command line into words as a POSIX shell reads quotes, without
 * running a shell and without any expansion: words are separated by
 * unquoted blanks; `'...'` is literal; inside `"..."` a backslash escapes
 * only `"`, `\`, `$` and `` ` ``; an unquoted backslash escapes the next
 * character. Whatever a shell would expand or treat specially is refused
 * rather than passed literally (quote or escape it to pass it literally).
 * @param text e.g. `haproxy -c -f '/etc/haproxy/my cfg.cfg'`
 * @param what the option's name for messages (`--check`)
 * @returns the words; `[]` for an empty or blank text
 * @throws {UsageError} an unterminated quote, a trailing backslash, unquoted
 * shell syntax (`| & ; < > ( )`), `$` or backtick outside single quotes
 * (inside double quotes too), an unquoted glob character (`* ? [`), an
 * unquoted `~` or `#` at the start of a word, or a first word that is a
 * variable assignment (`NAME=value`), or an unquoted line break between
 * words (a shell's command separator): no shell runs to interpret them
 */
export function splitCommandWords(text: string, what = '--check'): string[] {
  const refuse = (c: string, why: string, fix = 'quote it to pass it literally'): never => {
    throw new UsageError(`${what}: '${c}' in '${text}' ${why}, but no shell runs the command (${fix}, or give --check "sh -c '...'")`);
  };
  const words: string[] = [];
  let word = '';
  let inWord = false;
  /** every character of the current word so far was unquoted and unescaped */
  let plain = true;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\n' && (inWord || words.length > 0) && text.slice(i + 1).trim() !== '') {
      throw new UsageError(
        `${what}: an unquoted line break in ${JSON.stringify(text)} separates two commands in a shell, but no shell runs the command (give one command, or --check "sh -c '...'")`,
      );
    }
    if (c === ' ' || c === '\t' || c === '\n') {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      plain = true;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw new UsageError(`${what}: unterminated ' quote in '${text}'`);
      word += text.slice(i + 1, end);
      inWord = true;
      plain = false;
      i = end;
    } else if (c === '"') {
      inWord = true;
      plain = false;
      let j = i + 1;
      for (; j < text.length && text[j] !== '"'; j++) {
        if (text[j] === '\\' && j + 1 < text.length && '"\\$`'.includes(text[j + 1])) j++;
        else if (text[j] === '$' || text[j] === '`')
          refuse(text[j], 'inside double quotes is expanded by a shell', 'single-quote it or escape it with a backslash to pass it literally');
        word += text[j];
      }
      if (j >= text.length) throw new UsageError(`${what}: unterminated " quote in '${text}'`);
      i = j;
    } else if (c === '\\') {
      if (i + 1 >= text.length) throw new UsageError(`${what}: a backslash at the end of '${text}' escapes nothing`);
      word += text[++i];
      inWord = true;
      plain = false;
    } else if (SHELL_SYNTAX.has(c)) {
      refuse(c, 'is shell syntax');
    } else if (GLOB.has(c)) {
      refuse(c, 'is a pattern a shell would expand to file names');
    } else if (!inWord && c === '~') {
      refuse(c, 'at the start of a word is expanded by a shell to a home directory');
    } else if (!inWord && c === '#') {
      refuse(c, 'at the start of a word starts a comment in a shell');
    } else {
      if (c === '=' && words.length === 0 && plain && ASSIGNMENT.test(word))
        refuse(`${word}=`, 'is a variable assignment in a shell (the command would be the next word)', "use 'env NAME=value COMMAND ...' to set a variable");
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/** Options of {@link runPrecheck}. */
export interface PrecheckOptions {
  /** run it as this user (protect's `--user`) */
  user?: RunAsUser;
  /** where its output (stdout and stderr, as chunks) goes as it arrives (default: nowhere; the last {@link PRECHECK_OUTPUT_TAIL} bytes are kept for {@link PrecheckFailedError} either way) */
  output?: (chunk: Buffer) => void;
  /** environment (default: synplug's) */
  env?: NodeJS.ProcessEnv;
  /** kill its process group and fail after this long, ms (default {@link PRECHECK_TIMEOUT_MS}) */
  timeoutMs?: number;
}

/**
 * Run the check command to completion, before anything is held, in a
 * session (process group) of its own. SIGINT, SIGTERM, SIGHUP and SIGQUIT
 * that synplug receives meanwhile are passed on to its process group and end
 * protect (nothing was held or run). After `timeoutMs` its process group is
 * killed (SIGKILL) and it fails. It is over when it exits; output still
 * arriving is read for {@link PRECHECK_DRAIN_MS} more at most.
 * @param argv the command and its arguments (no shell)
 * @returns what it did, when it exited 0
 * @throws {UsageError} an empty command (`usage`)
 * @throws {CommandError} not found (`command-not-found`) or not executable (`command-not-executable`): nothing held
 * @throws {PrecheckFailedError} it exited non-zero, was killed, or timed out (`check-failed`): nothing held, the reload not run
 * @throws {SynplugError} it could not be started (`command-not-started`), or synplug was interrupted meanwhile (`interrupted`)
 */
export async function runPrecheck(argv: readonly string[], options: PrecheckOptions = {}): Promise<PrecheckResult> {
  if (!Array.isArray(argv) || argv.length === 0 || argv[0] === '' || !argv.every((a) => typeof a === 'string')) {
    throw new UsageError('--check: the check command is empty (give e.g. --check "haproxy -c -f /etc/haproxy/haproxy.cfg")');
  }
  let file: string;
  try {
    file = resolveCommand(argv, options.env);
  } catch (e) {
    if (e instanceof CommandError)
      throw new CommandError(
        `--check: ${e.message.replace('the command was not run', 'nothing was held and the reload command was not run')}`,
        e.category as 'command-not-found' | 'command-not-executable',
      );
    throw e;
  }
  const timeoutMs = options.timeoutMs ?? PRECHECK_TIMEOUT_MS;
  if (!(Number.isFinite(timeoutMs) && timeoutMs >= 10)) throw new UsageError('--check-timeout must be at least 10 ms');
  const write = options.output ?? (() => {});
  const env = { ...(options.env ?? process.env) };
  if (options.user) Object.assign(env, { HOME: options.user.home, USER: options.user.name, LOGNAME: options.user.name });
  const notStarted = (e: Error) =>
    new SynplugError(`--check: cannot start '${argv[0]}': ${e.message}; nothing was held and the reload command was not run`, 'command-not-started', {
      cause: e,
    });
  const t0 = performance.now();
  let child: ChildProcessByStdio<null, Readable, Readable>;
  try {
    // spawn throws (rather than emitting 'error') for some failures: an argument with a NUL byte, EPERM from setuid/setgid.
    child = spawn(file, argv.slice(1), {
      argv0: argv[0],
      stdio: ['ignore', 'pipe', 'pipe'],
      // its own session and process group: a timeout or a signal reaches its children too
      detached: true,
      env,
      uid: options.user?.uid,
      gid: options.user?.gid,
    });
  } catch (e) {
    throw notStarted(e instanceof Error ? e : new Error(String(e)));
  }
  let tail = Buffer.alloc(0);
  let outputBytes = 0;
  const keep = (b: Buffer) => {
    outputBytes += b.length;
    write(b);
    tail = Buffer.concat([tail, b]);
    if (tail.length > PRECHECK_OUTPUT_TAIL) tail = tail.subarray(tail.length - PRECHECK_OUTPUT_TAIL);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const killGroup = (sig: NodeJS.Signals) => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, sig);
    } catch {
      try {
        child.kill(sig);
      } catch {
        /* already gone */
      }
    }
  };
  let interrupted: NodeJS.Signals | undefined;
  const onSignal = (sig: NodeJS.Signals) => {
    interrupted = sig;
    killGroup(sig);
  };
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup('SIGKILL');
  }, timeoutMs);
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];
  for (const s of signals) process.on(s, onSignal);
  try {
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const { code, signal, durationMs } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; durationMs: number }>((resolve, reject) => {
      child.once('error', (e) => reject(notStarted(e)));
      // 'exit': the check is over, whatever still holds its output pipes (a background child it left).
      child.once('exit', (c, s) => resolve({ code: c, signal: s, durationMs: Math.round((performance.now() - t0) * 1000) / 1000 }));
    });
    clearTimeout(timer);
    // The output written before the exit is in the pipes: read it, but only briefly (a child may keep them open).
    let drainTimer: NodeJS.Timeout | undefined;
    await Promise.race([closed, new Promise<void>((resolve) => (drainTimer = setTimeout(resolve, PRECHECK_DRAIN_MS)))]);
    clearTimeout(drainTimer);
    child.stdout.destroy();
    child.stderr.destroy();
    const result: PrecheckResult = {
      command: [...argv],
      exitCode: code ?? 128 + ((signal && (osConstants.signals as Record<string, number>)[signal]) || 0),
      signal,
      durationMs,
      ...(timedOut ? { timedOut: true as const, timeoutMs } : {}),
    };
    if (interrupted)
      throw new InterruptedError(interrupted, `interrupted by ${interrupted} during the --check command: nothing was held; the command was NOT run`);
    if (timedOut || result.exitCode !== 0) throw new PrecheckFailedError(result, tail.toString('utf8'), outputBytes);
    return result;
  } finally {
    clearTimeout(timer);
    for (const s of signals) process.off(s, onSignal);
  }
}
