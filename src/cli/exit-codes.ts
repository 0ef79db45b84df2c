/**
 * The CLI's exit codes: the one place where an exit code exists. Errors below
 * `src/cli` carry an {@link ErrorCategory}; {@link CATEGORY_EXIT_CODES} maps
 * each category to its code, and `--help` and the README list the same codes.
 *
 * @module
 */
import { constants as osConstants } from 'node:os';
import { SynplugError, type ErrorCategory } from '../netlink/errors.js';
import { InterruptedError } from '../guard/errors.js';

/**
 * The exit code of each error category (README "Exit codes"). `check` also
 * gives 1 a meaning of its own (nothing set up), and has a code of its own
 * for "partly or differently set up" ({@link CHECK_PARTIAL}).
 */
export const CATEGORY_EXIT_CODES = {
  /** a failure not covered below */
  failure: 1,
  /** bad arguments or input (a device that does not exist too), refused before anything was sent */
  usage: 2,
  /** the input (or a reply) does not decode */
  decode: 3,
  /** the kernel refused a request, or did not answer, or the socket failed */
  kernel: 3,
  /** not permitted: needs CAP_NET_ADMIN (root) */
  permission: 4,
  /** the kernel lacks a module synplug needs (sch_prio, sch_plug, cls_fw, nf_tables) */
  'missing-module': 5,
  /** the state directory or a state file is unsafe or damaged (named, with what to do) */
  'bad-state': 6,
  /** a root qdisc that is not synplug's (use --force), a filter on synplug's pref that is not; the queue hold: its netfilter queue bound by someone else, or used by a rule that is not synplug's */
  'foreign-state': 7,
  /** protect/plug: synplug is not set up (run `synplug setup`, or protect --setup) */
  'not-set-up': 8,
  /** protect: phase one failed: the --check command exited non-zero, was killed by a signal, or ran past --check-timeout; nothing was held and the reload command was not run */
  'check-failed': 10,
  /** show ruleset: something in the ruleset cannot be printed in nft's language (each named on stderr; the listing marks it `[ raw: ... ]`) */
  unprintable: 11,
  /** protect: the shell that starts the command behind its gate (/bin/sh) could not be started; nothing was run */
  'command-not-started': 125,
  /** protect: the command exists but cannot be executed */
  'command-not-executable': 126,
  /** protect: the command was not found */
  'command-not-found': 127,
  /** protect: interrupted (SIGINT/SIGTERM) before the command started; nothing was run */
  interrupted: 130,
} as const satisfies Record<ErrorCategory, number>;

/**
 * `check`: set up, but partly or differently (a piece missing or not as
 * setup makes it). Not an error's category: check's result; apart from 2
 * (bad arguments) so that a script can tell the two apart.
 */
export const CHECK_PARTIAL = 12;

/**
 * `demo`: the protected phase lost at least one request. Not an error's
 * category: the demo's verdict, which the library returns as a result.
 */
export const DEMO_FAILED = 9;

/**
 * `protect --fail-on-loss`: the command exited 0, but the reload's report
 * counts a loss (`lossless` false: refused, reset or dropped connections,
 * listener drops, or a hold that failed). Not an error's category: the
 * CLI's reading of protect's result ({@link protectExitCode}).
 */
export const RELOAD_LOST = 13;

/** Exit codes by name, for the CLI's own use (all but OK, CHECK_PARTIAL, DEMO_FAILED and RELOAD_LOST come from {@link CATEGORY_EXIT_CODES}). */
export const EXIT = {
  OK: 0,
  FAILURE: CATEGORY_EXIT_CODES.failure,
  USAGE: CATEGORY_EXIT_CODES.usage,
  KERNEL: CATEGORY_EXIT_CODES.kernel,
  NOT_PERMITTED: CATEGORY_EXIT_CODES.permission,
  MISSING_SUPPORT: CATEGORY_EXIT_CODES['missing-module'],
  BAD_STATE: CATEGORY_EXIT_CODES['bad-state'],
  FOREIGN_QDISC: CATEGORY_EXIT_CODES['foreign-state'],
  NOT_SET_UP: CATEGORY_EXIT_CODES['not-set-up'],
  DEMO_FAILED,
  CHECK_FAILED: CATEGORY_EXIT_CODES['check-failed'],
  UNPRINTABLE: CATEGORY_EXIT_CODES.unprintable,
  COMMAND_NOT_STARTED: CATEGORY_EXIT_CODES['command-not-started'],
  COMMAND_NOT_EXECUTABLE: CATEGORY_EXIT_CODES['command-not-executable'],
  COMMAND_NOT_FOUND: CATEGORY_EXIT_CODES['command-not-found'],
  INTERRUPTED: CATEGORY_EXIT_CODES.interrupted,
  CHECK_PARTIAL,
  RELOAD_LOST,
} as const;

/**
 * protect's exit code: the command's own status; with `failOnLoss`, a
 * command that exited 0 under a reload whose report counts a loss
 * (`lossless` false) gives {@link RELOAD_LOST}. An uncounted report
 * (`lossless` null) is no counted loss: the command's 0.
 * @param r protect's result: the command's `exitCode`, the report's `lossless`
 * @param failOnLoss `--fail-on-loss` was given
 */
export function protectExitCode(r: { exitCode: number; report: { lossless: boolean | null } }, failOnLoss: boolean): number {
  return failOnLoss && r.exitCode === 0 && r.report.lossless === false ? RELOAD_LOST : r.exitCode;
}

/**
 * The exit code for an error: 128 + the signal's number for an
 * {@link InterruptedError} (protect stopped before its command); its category's code for a {@link SynplugError},
 * {@link EXIT.FAILURE} for anything else (an internal error).
 * @param e whatever was thrown
 */
export function exitCodeOf(e: unknown): number {
  // protect stopped by a signal before its command: as the shell counts a death by it (130 SIGINT, 143 SIGTERM)
  if (e instanceof InterruptedError) return 128 + (osConstants.signals[e.signal] ?? 2);
  if (e instanceof SynplugError) return CATEGORY_EXIT_CODES[e.category] ?? EXIT.FAILURE;
  return EXIT.FAILURE;
}

/**
 * Every exit code and its whole meaning: the one list. `synplug help
 * exit-codes` prints it ({@link EXIT_HELP}); the README's "Exit codes" table
 * has the same rows, word for word: its `code` marks are bare here, or
 * quoted ('...') around more than one word (test/unit/cli-exit-codes.test.ts
 * checks that they agree).
 */
export const EXIT_TABLE: ReadonlyArray<readonly [code: number | 'other', meaning: string]> = [
  [0, "success (protect: the command's own status is passed through)"],
  [1, 'failure; check: nothing is set up'],
  [2, 'bad arguments or input, e.g. a device that does not exist (nothing was changed)'],
  [
    3,
    'the kernel refused a request, did not answer, or sent undecodable bytes; decode: the input does not decode (what decoded before the bad bytes is printed first)',
  ],
  [4, "not permitted: needs CAP_NET_ADMIN (run as root); demo also CAP_SYS_ADMIN (it creates a network namespace; 'demo --here' does not, unless --inbound)"],
  [
    5,
    "the kernel lacks a needed module (sch_prio, sch_plug, cls_fw, nf_tables; inbound: sch_plug, sch_ingress, act_mirred, cls_flower or cls_u32, ifb; demo: also inet_diag and tcp_diag, and with --inbound veth), all missing ones named in one message ('synplug doctor' says which holds this kernel supports)",
  ],
  [
    6,
    'the state directory or a state file is unsafe or damaged: a symbolic link, not the user\'s, writable by others, not JSON (named, with what to do; check too, so that 1 keeps meaning "nothing is set up")',
  ],
  [
    7,
    "something in the way is not this state directory's; nothing was changed: setup: the device's root qdisc is not synplug's (rerun with --force, which replaces it); protect, plug: the same, found in phase one (nothing held, the command not run); inbound: synplug's filter pref on the device holds filters that are not synplug's; the queue hold (setup, protect, plug): its netfilter queue is bound by someone else, or used by a rule that is not synplug's (choose another --queue-num); setup, release: the hold is another state directory's hold (the mark on its table or IFB names it; use that directory's --state-dir); setup: this directory's hold is holding now (run setup again after the release); teardown: one hold named (--local, --inbound, --hold) is holding now (run it after the release)",
  ],
  [
    8,
    "not set up (run 'synplug setup' for the local hold, 'synplug setup --inbound DEV --port PORT' for an inbound one — the message names the command for each hold that is not complete — or 'protect --setup'); protect, plug: a teardown removed the hold while it started (nothing held, the command not run); plug, protect, release, teardown: --addr names an address no hold set up here holds",
  ],
  [9, 'demo: the protected phase lost at least one request'],
  [
    10,
    'protect: the --check command failed: exited non-zero, was killed by a signal, or ran past --check-timeout (its output is shown); nothing was held and the command was not run. A protected command that itself exits 10 also gives 10 (protect passes its status through): with --json, a failed check is an error object with \'"category": "check-failed"\' and check, the command\'s own 10 a result with \'"exitCode": 10\'',
  ],
  [
    11,
    "'show ruleset': part of the ruleset cannot be printed in nft's language as decoded (an expression, a typeof set, an object type synplug does not print); the listing marks it '[ raw: ... ]' ('{\"raw\": ...}' in --json) and each such part is named on stderr (with --json, stdout still holds the one listing document, no error object), so a listing that exits 0 is one 'nft -f' reads back to the same ruleset",
  ],
  [12, 'check: set up, but partly or differently (a piece missing or not as setup makes it, each named)'],
  [
    13,
    'protect --fail-on-loss: the command exited 0, but the reload\'s report counts a loss (refused, reset or dropped connections, listener drops) or a failed hold (--json: \'"lossless": false\', "exitCode" the command\'s 0); an uncounted report is no loss',
  ],
  [
    125,
    'protect: /bin/sh, which starts the command behind its gate, could not be started (the command was not run); or the --check command could not be started (nothing was held, the command was not run)',
  ],
  [126, 'protect: the command cannot be executed; or the --check command cannot be (nothing was held, the command was not run)'],
  [127, 'protect: the command was not found; or the --check command was not found (nothing was held, the command was not run)'],
  [
    130,
    'protect: interrupted by SIGINT before the command started, --check included (it was not run; what was held is released; SIGTERM gives 143, SIGHUP 129, SIGQUIT 131); setup: interrupted before its last step (nothing was set up: steps taken are rolled back); teardown: interrupted before it removed anything (nothing was removed; a signal after its first change lets it finish, exit 0); demo: interrupted (what it set up is removed)',
  ],
  ['other', "protect: the command's exit status (128+N when killed by signal N)"],
];

/** A meaning wrapped at 92 columns after its code, as `help exit-codes` prints it. */
function wrapped(code: string, meaning: string): string {
  const lines: string[] = [];
  let line = `  ${code.padEnd(4)}`;
  for (const word of meaning.split(' ')) {
    if (line.length + 1 + word.length > 92 && line.trim().length > code.length) {
      lines.push(line);
      line = `      `;
    }
    line += ` ${word}`;
  }
  return [...lines, line].join('\n');
}

/** The exit-code table of `synplug help exit-codes`: {@link EXIT_TABLE}, each meaning wrapped. */
export const EXIT_HELP = `Exit codes:\n${EXIT_TABLE.map(([c, m]) => wrapped(String(c), m)).join('\n')}`;

/** One line of a command's exit-code list: the code (or `other`, protect's pass-through) and its meaning there. */
export type ExitCodeLine = readonly [code: number | 'other', meaning: string];

const failure = (example: string): ExitCodeLine => [EXIT.FAILURE, `failure (${example})`];
const usage = (extra = ''): ExitCodeLine => [EXIT.USAGE, `bad arguments${extra}, or a device that does not exist; nothing was changed`];
const kernel: ExitCodeLine = [EXIT.KERNEL, 'the kernel refused a request or did not answer'];
const notRoot: ExitCodeLine = [EXIT.NOT_PERMITTED, 'not permitted: needs CAP_NET_ADMIN (run as root)'];
/** Exit 7 of the queue hold (its netfilter queue is another's), in each command's list that gives it. */
const QUEUE_FOREIGN =
  "the queue hold: its netfilter queue is bound by someone else, or used by a rule that is not synplug's (choose another --queue-num); nothing was changed";
/** Exit 8 of a command that acts on the holds: an --addr none holds (guard/context.ts refuseAddrNotHeld). */
const ADDR_NOT_HELD = (done: string): string =>
  `--addr names an address no hold set up here holds (the queue and inbound holds hold what they were set up with); nothing was ${done}`;
const badState: ExitCodeLine = [EXIT.BAD_STATE, 'the state directory or a state file is unsafe or damaged (named, with what to do)'];

/**
 * The exit codes each command can return, as its `--help` lists them. Every
 * code is one of {@link EXIT} (the README's table); the meanings are that
 * command's.
 */
export const COMMAND_EXIT_CODES = {
  setup: [
    [EXIT.OK, 'set up (or already set up)'],
    failure('e.g. the state directory cannot be written'),
    usage(),
    kernel,
    notRoot,
    [EXIT.MISSING_SUPPORT, 'the kernel lacks a needed module (all missing ones are named)'],
    badState,
    [
      EXIT.FOREIGN_QDISC,
      `the device's root qdisc is not synplug's (rerun with --force to replace it; protect, plug: the same, found in phase one, nothing held); --inbound: synplug's filter pref holds filters that are not synplug's; ${QUEUE_FOREIGN}; the hold is another state directory's (the mark on its table or IFB names it): use that directory's --state-dir; this directory's hold is holding now: run setup again after the release`,
    ],
    [EXIT.INTERRUPTED, 'interrupted by SIGINT before its last step: nothing was set up (steps taken are rolled back; SIGTERM: 143)'],
  ],
  check: [
    [EXIT.OK, 'complete and consistent'],
    [EXIT.FAILURE, 'nothing is set up (or another failure)'],
    [EXIT.USAGE, 'bad arguments, or a device that does not exist'],
    kernel,
    [EXIT.NOT_PERMITTED, 'not permitted: reading the nftables table needs CAP_NET_ADMIN (run as root)'],
    badState,
    [EXIT.CHECK_PARTIAL, 'set up, but partly or differently (a piece missing or not as setup makes it; each named)'],
  ],
  plug: [
    [EXIT.OK, 'plugged'],
    failure('e.g. the plug record cannot be written'),
    usage(),
    kernel,
    notRoot,
    badState,
    [EXIT.FOREIGN_QDISC, `found in phase one, nothing held: the device's root qdisc is not synplug's; ${QUEUE_FOREIGN}`],
    [
      EXIT.NOT_SET_UP,
      `not set up (run 'synplug setup --inbound DEV --port PORT' for clients from the network, 'synplug setup' for local ones); or ${ADDR_NOT_HELD('held')}`,
    ],
  ],
  release: [
    [EXIT.OK, 'released, or nothing to release'],
    failure('e.g. the plug record cannot be written'),
    usage(),
    kernel,
    notRoot,
    badState,
    [
      EXIT.FOREIGN_QDISC,
      "the plug hold is another state directory's (the mark on its table or IFB names it), or nothing is set up here and another directory's queue hold holds in this namespace: nothing was released; use its --state-dir",
    ],
    [EXIT.NOT_SET_UP, ADDR_NOT_HELD('released')],
  ],
  protect: [
    [EXIT.OK, 'the command exited 0'],
    [EXIT.FAILURE, 'failure before the command ran (e.g. the watchdog did not start)'],
    usage(' (an empty command too; or a --check line with shell syntax or an expansion)'),
    [EXIT.KERNEL, 'the kernel refused a request or did not answer (the command was not run, or the plug could not be released)'],
    notRoot,
    [EXIT.MISSING_SUPPORT, 'with --setup: the kernel lacks a needed module'],
    [EXIT.BAD_STATE, 'the state directory or a state file is unsafe or damaged; the command was NOT run'],
    [
      EXIT.FOREIGN_QDISC,
      `found in phase one (with --setup too), nothing held and the command NOT run: the device's root qdisc is not synplug's; ${QUEUE_FOREIGN}`,
    ],
    [
      EXIT.NOT_SET_UP,
      "not set up (run 'synplug setup --inbound DEV --port PORT' for clients from the network, 'synplug setup' for local ones, or pass --setup for the local one), or a teardown removed the hold while protect started; the command was NOT run",
    ],
    [
      EXIT.CHECK_FAILED,
      'the --check command failed: exited non-zero, was killed by a signal, or ran past --check-timeout (its output is shown); nothing was held and the command was NOT run. (The command exiting 10 itself also gives 10: with --json, a failed check is an error object with "category": "check-failed" and "check"; the command\'s own 10 is a result with "exitCode": 10.)',
    ],
    [
      EXIT.RELOAD_LOST,
      'with --fail-on-loss: the command exited 0, but the report counts a loss (refused, reset or dropped connections, listener drops) or a failed hold ("lossless": false; --json: "exitCode" 0, the command\'s); an uncounted report is no loss',
    ],
    [
      EXIT.COMMAND_NOT_STARTED,
      '/bin/sh, which starts the command, could not be started; or the --check command could not be started (nothing held); the command was not run',
    ],
    [EXIT.COMMAND_NOT_EXECUTABLE, 'the command cannot be executed; or the --check command cannot be (nothing held, the command was NOT run)'],
    [EXIT.COMMAND_NOT_FOUND, 'the command was not found; or the --check command was not found (nothing held, the command was NOT run)'],
    [EXIT.INTERRUPTED, 'interrupted by SIGINT before the command started, --check included (it was not run; what was held is released; SIGTERM: 143)'],
    ['other', "the command's own exit status, passed through (128+N when killed by signal N)"],
  ],
  status: [
    [EXIT.OK, "shown, whatever the state (not set up, partly set up): 'synplug check' says it in its exit code (1, 12)"],
    failure('an unexpected error'),
    usage(),
    kernel,
    [EXIT.NOT_PERMITTED, 'not permitted: reading the nftables table needs CAP_NET_ADMIN (run as root)'],
    badState,
  ],
  teardown: [
    [EXIT.OK, 'removed, or nothing to remove'],
    failure('e.g. the state files cannot be removed'),
    usage(),
    kernel,
    notRoot,
    badState,
    [EXIT.FOREIGN_QDISC, 'one hold named (--local, --inbound, --hold) is holding now, for a protect or a manual plug: nothing was removed'],
    [EXIT.NOT_SET_UP, ADDR_NOT_HELD('removed')],
    [EXIT.INTERRUPTED, 'interrupted by SIGINT before it removed anything: nothing was removed (SIGTERM: 143); a signal after its first change lets it finish'],
  ],
  show: [
    [EXIT.OK, 'shown'],
    failure('an unexpected error'),
    [EXIT.USAGE, 'bad arguments, or a device that does not exist'],
    kernel,
    [EXIT.NOT_PERMITTED, 'not permitted: listing the nftables ruleset needs CAP_NET_ADMIN (run as root)'],
    [EXIT.UNPRINTABLE, "ruleset: part of it cannot be printed in nft's language (marked [ raw: ... ], each part named on stderr)"],
  ],
  decode: [
    [EXIT.OK, 'decoded'],
    failure('an unexpected error'),
    [EXIT.USAGE, 'bad arguments (e.g. --protocol), or a file that cannot be read'],
    [EXIT.KERNEL, 'the input does not decode, or a capture.json field is invalid (what decoded before it is printed first)'],
  ],
  demo: [
    [EXIT.OK, 'the protected phase lost no request (also when the unprotected phase lost none: the demo then says it was not sensitive here)'],
    failure("e.g. the demo server cannot listen on the hold's address"),
    [EXIT.USAGE, 'bad arguments (--seconds, --restarts, --gap); nothing was set up'],
    kernel,
    [EXIT.NOT_PERMITTED, 'not permitted: needs CAP_NET_ADMIN, and CAP_SYS_ADMIN for its own network namespace (run as root; or --here)'],
    [EXIT.MISSING_SUPPORT, 'the kernel lacks a needed module (all missing ones are named); nothing was changed'],
    badState,
    [EXIT.FOREIGN_QDISC, "--here: lo's root qdisc is not synplug's: it is never replaced; nothing was changed"],
    [
      EXIT.NOT_SET_UP,
      '--here: synplug is partly set up, set up on another device than lo, or set up here but not recorded in the state directory (another --state-dir, or setup --netns from outside): the demo changes no setup it did not make; or its hold is held already (a manual plug, a running protect: named, with how to end it); nothing was changed',
    ],
    [EXIT.DEMO_FAILED, 'the protected phase lost at least one request (the table says how)'],
    [EXIT.INTERRUPTED, 'interrupted (SIGINT/SIGTERM): the demo stopped and removed what it had set up (its namespace too)'],
  ],
  doctor: [
    [EXIT.OK, 'at least one hold works on this kernel'],
    failure('a socket cannot be opened'),
    kernel,
    [EXIT.NOT_PERMITTED, 'the holds could not be probed: that needs CAP_NET_ADMIN (run as root); what could be checked is shown'],
    [EXIT.MISSING_SUPPORT, 'no hold works on this kernel (what each one lacks is shown)'],
  ],
  history: [
    [EXIT.OK, 'shown (also when nothing is recorded)'],
    failure('an unexpected error'),
    usage(),
    [EXIT.NOT_PERMITTED, "not permitted: the state directory is root's (run it as root, or give --state-dir a directory of your own)"],
    [EXIT.BAD_STATE, 'the state directory is unsafe, or a history file is damaged (named, with what to do)'],
  ],
  help: [
    [EXIT.OK, 'help shown'],
    [EXIT.USAGE, 'no such command'],
  ],
} as const satisfies Record<string, readonly ExitCodeLine[]>;

/** The name of a command that has an exit-code list. */
export type CommandName = keyof typeof COMMAND_EXIT_CODES;

/**
 * Each code's meaning in a few words, for a command's `--help` (the whole
 * meaning: {@link COMMAND_EXIT_CODES}, `synplug help exit-codes`). Code 0's
 * is the command's own (its meaning up to the first parenthesis).
 */
const BRIEF: Record<Exclude<ExitCodeLine[0], 0>, string> = {
  [EXIT.FAILURE]: 'failure',
  [EXIT.USAGE]: 'bad arguments, or a device that does not exist',
  [EXIT.KERNEL]: 'the kernel refused a request or did not answer',
  [EXIT.NOT_PERMITTED]: 'not permitted: needs CAP_NET_ADMIN (root)',
  [EXIT.MISSING_SUPPORT]: 'the kernel lacks a needed module (each named)',
  [EXIT.BAD_STATE]: 'a state file or directory is unsafe or damaged',
  [EXIT.FOREIGN_QDISC]: "a qdisc, filter, queue or hold there is not this directory's",
  [EXIT.NOT_SET_UP]: 'not set up',
  [EXIT.DEMO_FAILED]: 'the protected phase lost a request',
  [EXIT.CHECK_FAILED]: 'the --check command failed: nothing held, not run',
  [EXIT.UNPRINTABLE]: "part of the ruleset cannot be said in nft's words",
  [EXIT.CHECK_PARTIAL]: 'set up partly or differently (each piece named)',
  [EXIT.RELOAD_LOST]: '--fail-on-loss: the command exited 0, the reload lost',
  [EXIT.COMMAND_NOT_STARTED]: 'the command (or --check) could not be started',
  [EXIT.COMMAND_NOT_EXECUTABLE]: 'the command (or --check) cannot be executed',
  [EXIT.COMMAND_NOT_FOUND]: 'the command (or --check) was not found',
  [EXIT.INTERRUPTED]: 'interrupted before the command started',
  other: "the command's own exit status",
};

/** Where a command's code means something of its own, its few words. */
const BRIEF_OF: { readonly [C in CommandName]?: Readonly<Record<number, string>> } = {
  check: { [EXIT.FAILURE]: 'nothing is set up' },
  decode: { [EXIT.USAGE]: 'bad arguments, or a file that cannot be read', [EXIT.KERNEL]: 'the input does not decode' },
  doctor: { [EXIT.NOT_PERMITTED]: 'cannot probe: needs CAP_NET_ADMIN (root)', [EXIT.MISSING_SUPPORT]: 'no hold works on this kernel' },
  demo: {
    [EXIT.USAGE]: 'bad arguments; nothing was set up',
    [EXIT.NOT_PERMITTED]: 'not permitted: needs CAP_NET_ADMIN, CAP_SYS_ADMIN',
    [EXIT.NOT_SET_UP]: '--here: a setup here the demo may not use',
    [EXIT.INTERRUPTED]: 'interrupted: what it set up is removed',
  },
  help: { [EXIT.USAGE]: 'no such command' },
};

/** A code's few words in a command's `--help`. */
function briefOf(command: CommandName, [code, meaning]: ExitCodeLine): string {
  if (code === 0) return meaning.replace(/ \(.*$/, '');
  return (code !== 'other' && BRIEF_OF[command]?.[code]) || BRIEF[code];
}

/**
 * The "Exit codes:" section of a command's `--help`: each code of
 * {@link COMMAND_EXIT_CODES} on a line, in a few words, and where the whole
 * meanings are (`synplug help exit-codes`, docs/cli.md).
 * @param command the command's name
 * @returns the section, starting with a newline
 */
export function exitCodesHelp(command: CommandName): string {
  const lines: readonly ExitCodeLine[] = COMMAND_EXIT_CODES[command];
  return `\nExit codes:\n${lines.map((l) => `  ${String(l[0]).padEnd(4)} ${briefOf(command, l)}`).join('\n')}\nEach in full: synplug help exit-codes. Everything else: docs/cli.md.`;
}

/**
 * The "Exit codes:" section of `synplug --help`: every code in a few words
 * ({@link BRIEF}), and where the whole meanings are.
 * @returns the section, starting with a newline
 */
export function allExitCodesHelp(): string {
  const codes = Object.keys(BRIEF).map((c) => (c === 'other' ? c : Number(c))) as (keyof typeof BRIEF)[];
  // A code that only one or two commands give is named with them.
  const owners = (code: keyof typeof BRIEF) =>
    (Object.keys(COMMAND_EXIT_CODES) as CommandName[]).filter((c) => COMMAND_EXIT_CODES[c].some((l) => l[0] === code));
  const lines = [
    '  0    success',
    ...codes.map((c) => {
      const by = owners(c);
      return `  ${String(c).padEnd(4)} ${by.length <= 2 ? `${by.join(', ')}: ` : ''}${BRIEF[c]}`;
    }),
  ];
  return `\nExit codes:\n${lines.join('\n')}\nEach in full, by command: synplug help exit-codes. Everything else: docs/cli.md.`;
}

/**
 * `synplug help exit-codes`: the table of every code ({@link EXIT_HELP}),
 * then each command's codes with their whole meaning there.
 */
export function exitCodesTopic(): string {
  const commands = (Object.keys(COMMAND_EXIT_CODES) as CommandName[]).map(
    (c) => `${c}:\n${COMMAND_EXIT_CODES[c].map(([code, meaning]) => `  ${String(code).padEnd(4)} ${meaning}`).join('\n')}`,
  );
  return `${EXIT_HELP}\n\nBy command:\n\n${commands.join('\n\n')}\n`;
}
