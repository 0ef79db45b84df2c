/**
 * The CLI's exit codes, one place for the code, `--help` and the README.
 *
 * @module
 */

/** Exit codes of every synplug command (`check` gives 1 and 2 its own meanings). */
export const EXIT = {
  OK: 0,
  /** a failure not covered below; `check`: nothing is set up */
  FAILURE: 1,
  /** bad arguments or input (a device that does not exist too), refused before anything was sent; `check`: partly or differently set up */
  USAGE: 2,
  /** the kernel refused a request, or did not answer, or sent bytes that do not decode */
  KERNEL: 3,
  /** not permitted: needs CAP_NET_ADMIN (root) */
  NOT_PERMITTED: 4,
  /** the kernel lacks a module synplug needs (sch_prio, sch_plug, cls_fw, nf_tables) */
  MISSING_SUPPORT: 5,
  /** setup would replace a root qdisc that is not synplug's (use --force) */
  FOREIGN_QDISC: 7,
  /** protect/plug: synplug is not set up (run `synplug setup`, or protect --setup) */
  NOT_SET_UP: 8,
  /** protect: the command exists but cannot be executed */
  COMMAND_NOT_EXECUTABLE: 126,
  /** protect: the command was not found */
  COMMAND_NOT_FOUND: 127,
  /** protect: interrupted (SIGINT/SIGTERM) before the command started; nothing was run */
  INTERRUPTED: 130,
} as const;

/** The exit-code table as printed at the end of `synplug --help`. */
export const EXIT_HELP = `Exit codes:
  0    success (protect: the command's own status is passed through)
  1    failure; check: nothing is set up
  2    bad arguments or input, e.g. a device that does not exist (nothing was changed);
       check: partly or differently set up
  3    the kernel refused a request, did not answer, or sent undecodable bytes
  4    not permitted: needs CAP_NET_ADMIN (run as root)
  5    the kernel lacks a needed module (sch_prio, sch_plug, cls_fw, nf_tables)
  7    setup: the device's root qdisc is not synplug's (rerun with --force to replace it)
  8    not set up (run 'synplug setup', or 'synplug protect --setup')
  126  protect: the command cannot be executed
  127  protect: the command was not found
  130  protect: interrupted before the command started (it was not run)
  other protect: the command's exit status (128+N when killed by signal N)`;
