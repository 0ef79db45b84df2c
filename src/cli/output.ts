/**
 * Watch stdout and stderr for write errors, for both of the CLI's roads
 * (bin.ts, and launch.ts's short road for listings). A closed pipe on stdout
 * (`synplug show qdisc | head`) ends the output, not the program with a
 * stack trace: exit with the code set so far (0 when none). Any other
 * failure to write stdout (ENOSPC on /dev/full...) is reported on stderr and
 * exits 1. Neither is rethrown: a throw while a netlink reply is being
 * handled would abort the process from inside the native socket's callback.
 * A failing stderr is ignored: there is nowhere to report it.
 */
export function watchOutput(): void {
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
    try {
      process.stderr.write(`synplug: cannot write to stdout: ${e.code ?? e.message}\n`);
    } catch {
      /* nothing left to tell */
    }
    process.exit(1);
  });
  process.stderr.on('error', () => {});
}
