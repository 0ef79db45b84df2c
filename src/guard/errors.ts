/**
 * The guard's errors and its error categories (added to the core's
 * registry, `ErrorCategories` in netlink/errors.ts). Each error carries a
 * category, never an exit code: the CLI maps categories to codes.
 *
 * @module
 */
import { SynplugError, type ErrorCategory } from '../netlink/errors.js';

declare module '../netlink/errors.js' {
  /** The guard's own error categories (the core's are in netlink/errors.ts). */
  interface ErrorCategories {
    /** the state directory or a state file is unsafe or damaged */
    'bad-state': true;
    /** the guard is not (completely) set up */
    'not-set-up': true;
    /** protect's `--check` command failed; nothing was held and the reload command was not run */
    'check-failed': true;
    /** protect could not start the shell that runs the command; nothing was run */
    'command-not-started': true;
    /** protect's command exists but cannot be executed */
    'command-not-executable': true;
    /** protect's command was not found */
    'command-not-found': true;
    /** a signal arrived before the command started; nothing was run */
    interrupted: true;
  }
}

/** The guard's own categories. */
export const GUARD_CATEGORIES = [
  'bad-state',
  'not-set-up',
  'check-failed',
  'command-not-started',
  'command-not-executable',
  'command-not-found',
  'interrupted',
] as const satisfies readonly ErrorCategory[];

/** The process lacks CAP_NET_ADMIN. Category `permission`. */
export class NotPermittedError extends SynplugError {
  /** @param what the command or operation that needs it, e.g. `setup` (the CLI prefixes `synplug: `) */
  constructor(what: string) {
    super(`${what} needs CAP_NET_ADMIN: run it as root (or grant the capability)`, 'permission');
    this.name = 'NotPermittedError';
  }
}

/** The device does not exist. Category `usage` (bad input: nothing is changed). */
export class NoDeviceError extends SynplugError {
  /**
   * @param dev the device name
   * @param recordedIn the setup record the name came from (no --dev was given), for the message
   * @param option the option that names the device (default `--dev`; the inbound hold: `--inbound`)
   */
  constructor(
    readonly dev: string,
    recordedIn?: string,
    option = '--dev',
  ) {
    super(
      recordedIn
        ? `device '${dev}' not found: it is the device setup recorded in ${recordedIn}; give an existing device with --dev (teardown --dev DEVICE forgets that record)`
        : `device '${dev}' not found (give an existing device with ${option})`,
      'usage',
    );
    this.name = 'NoDeviceError';
  }
}

/** setup would replace something that is not synplug's (a root qdisc). Category `foreign-state`. */
export class ForeignQdiscError extends SynplugError {
  /**
   * @param dev the device
   * @param what the foreign object as tc prints its first line, e.g. `qdisc tbf 5: root refcnt 2 ...`
   */
  constructor(dev: string, what: string) {
    super(
      `dev ${dev} has a root qdisc that is not synplug's: ${what}. The local hold's own root qdisc (prio 1:) goes where it is; rerun setup with --force to replace it (and everything under it). Nothing was changed`,
      'foreign-state',
    );
    this.name = 'ForeignQdiscError';
  }
}

/** The guard is not (completely) set up. Category `not-set-up`. */
export class NotSetUpError extends SynplugError {
  /** @param message which pieces are missing and what to run */
  constructor(message: string) {
    super(message, 'not-set-up');
    this.name = 'NotSetUpError';
  }
}

/**
 * A protect or manual plug that found its holds removed by a teardown while it
 * started (after it read the record, before its lease): nothing is held, and
 * a protect's command was not run.
 * @param gone the holds' ids @param who what started @param cause what failed on the removed pieces, if anything
 */
export function holdRemovedError(gone: readonly string[], who: 'protect' | 'plug', cause?: string): NotSetUpError {
  return new NotSetUpError(
    `a teardown removed the ${gone.join(', ')} hold while this ${who} started: nothing is held${who === 'protect' ? '; the command was NOT run' : ''}${
      cause ? ` (${cause})` : ''
    }. Run 'synplug setup' again, then the ${who}`,
  );
}

/** A step of setup failed; everything the call added was removed again. Category: the cause's. */
export class SetupError extends SynplugError {
  /** the step that failed, e.g. `add qdisc plug 40: parent 1:4 limit 1048576 and release it` */
  step: string;
  /** what was undone */
  rolledBack: string[];
  /** undo steps that failed themselves */
  rollbackFailures: string[];
  /**
   * @param step the failed step's description
   * @param cause why it failed (its category becomes this error's)
   * @param rolledBack the undo steps that ran
   * @param rollbackFailures undo steps that failed, with why
   */
  constructor(step: string, cause: unknown, rolledBack: string[], rollbackFailures: string[]) {
    const why = cause instanceof Error ? cause.message : String(cause);
    const rb = rolledBack.length ? ` Rolled back: ${rolledBack.join('; ')}.` : ' Nothing had been changed.';
    const rf = rollbackFailures.length ? ` ROLLBACK FAILED for: ${rollbackFailures.join('; ')} — check with 'synplug status'.` : '';
    super(`setup failed at step '${step}': ${why}.${rb}${rf}`, cause instanceof SynplugError ? cause.category : 'failure', { cause });
    this.name = 'SetupError';
    this.step = step;
    this.rolledBack = rolledBack;
    this.rollbackFailures = rollbackFailures;
  }
}

/** protect's command could not be found (category `command-not-found`) or executed (`command-not-executable`). */
export class CommandError extends SynplugError {
  /**
   * @param message what could not be found or run, and that it was not run
   * @param category `command-not-found` or `command-not-executable`
   */
  constructor(message: string, category: 'command-not-found' | 'command-not-executable') {
    super(message, category);
    this.name = 'CommandError';
  }
}

/**
 * A state file (setup.json, plug.json) or the state directory cannot be
 * used: unreadable, not what synplug wrote, or not safe (a symlink, a
 * directory others can write): category `bad-state`. A disk that refuses a
 * write (ENOSPC, EROFS, EDQUOT, EIO): category `failure`.
 */
export class StateFileError extends SynplugError {
  /** the file or directory */
  path: string;
  /**
   * The setup record is (or may be) another network namespace's: its cookie
   * differs from this namespace's, or it has none on a kernel that has
   * cookies. Nothing may act on it, not even `release` (which acts on a
   * merely damaged state).
   */
  otherNetns?: true;
  /**
   * @param path the file or directory
   * @param message what is wrong and what to do
   * @param cause the underlying error
   * @param category `bad-state` (default: unsafe or damaged) or `failure` (the disk refused a write)
   */
  constructor(path: string, message: string, cause?: unknown, category: 'bad-state' | 'failure' = 'bad-state') {
    super(message, category, cause === undefined ? undefined : { cause });
    this.name = 'StateFileError';
    this.path = path;
  }
}

/**
 * protect was stopped by a signal before its command started: the command
 * was not run, and whatever was held was released. Category `interrupted`;
 * the CLI exits 128 + the signal's number (130 for SIGINT, 143 for SIGTERM).
 */
export class InterruptedError extends SynplugError {
  /**
   * @param signal the signal that stopped it (`SIGINT`, `SIGTERM`, `SIGHUP`, `SIGQUIT`)
   * @param message what was done, e.g. `interrupted by SIGTERM before the command started: nothing was held; the command was NOT run`
   */
  constructor(
    readonly signal: NodeJS.Signals,
    message: string,
  ) {
    super(message, 'interrupted');
    this.name = 'InterruptedError';
  }
}

/**
 * Record the first of SIGINT, SIGTERM, SIGHUP and SIGQUIT from now on, so
 * that a signal that arrives while protect starts (before its command) is
 * not the process's death but a refusal at the next step. `end()` removes
 * the handlers.
 */
export function signalLatch(): { readonly signal: NodeJS.Signals | undefined; end(): void } {
  let got: NodeJS.Signals | undefined;
  const on = (sig: NodeJS.Signals) => {
    got ??= sig;
  };
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];
  for (const s of signals) process.on(s, on);
  return {
    get signal() {
      return got;
    },
    end() {
      for (const s of signals) process.off(s, on);
    },
  };
}
